"""Executed docs: every Python code block in README.md and docs/**/*.md runs as a test.

The conventions (written for page authors in docs/contributing-docs.md):

- A ```python (or ```py) block is run. The blocks of one page share one namespace and run in page
  order, like one doctest session: a later block sees the names an earlier one defined. Each page
  starts with ``mg.manual_seed(0)``, ``__name__ == "__main__"`` and, as its working directory, a
  fresh temporary folder (so blocks may write files); matplotlib uses the Agg backend.
- Printed output is checked where the page shows it:
    * a ```text or ```output block that follows a Python block (only blank lines between) is the
      expected stdout of that block;
    * ``# -> expected`` at the end of a top-level statement is the expected output of that
      statement alone: what it printed, or for a bare expression (``a.grad  # -> tensor(4.)``)
      the repr of its value.
  Lines are compared after stripping trailing whitespace; ``...`` in the expected text matches
  anything (doctest's ELLIPSIS), for addresses and timings.
- ``<!-- docs: skip: reason -->`` on the line before a fence marks a deliberately partial snippet:
  it is not run and shows up as a pytest skip with that reason. Shell blocks (bash, sh, console,
  ...) are skipped the same way, visibly.
- ``<!-- docs: raises ExceptionName -->`` before a fence: the block must raise that exception
  (the point of the snippet is the error); output printed before it is still compared.

Every block is its own test item (``test_doc_block[docs/page.md:12]``); when one runs without the
blocks above it (e.g. under pytest-xdist, or ``-k``), the earlier blocks of its page are run first,
silently, in the same process.
"""
import ast
import contextlib
import dataclasses
import doctest
import io
import os
import re
import tempfile
import textwrap
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

PYTHON = {"python", "py", "python3"}
SHELL = {"bash", "sh", "shell", "console", "zsh", "shell-session", "powershell", "bat", "cmd"}
OUTPUT = {"text", "output"}
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*)$")
MARKER = re.compile(r"^\s*<!--\s*docs:\s*(?P<what>skip|raises)\b:?\s*(?P<arg>.*?)\s*-->\s*$")
ARROW = "# ->"


@dataclasses.dataclass
class Block:
    page: Path
    line: int              # 1-based line of the first code line
    lang: str
    code: str
    expected: str = None   # a following ```text / ```output block
    skip: str = None       # reason, if not run
    raises: str = None     # exception class name the block must raise

    @property
    def id(self):
        return f"{_rel(self.page)}:{self.line}"


def _rel(page):
    try:
        return str(page.relative_to(ROOT))
    except ValueError:  # a page outside the repository (the collector's own tests)
        return str(page)


def parse_blocks(page):
    """All fenced blocks of a Markdown file, as Blocks; output blocks attached to their code block."""
    lines = page.read_text(encoding="utf-8").splitlines()
    fenced = []  # (start line index of code, lang, code, marker)
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"].expandtabs())
        lang = (m["info"].split() or [""])[0].strip("{}.").lower()
        j = i + 1
        close = re.compile(rf"^[ \t]*{fence[0]}{{{len(fence)},}}[ \t]*$")
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = [ln[indent:] if ln[:indent].strip() == "" else ln.lstrip() for ln in lines[i + 1:j]]
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker = MARKER.match(lines[k]) if k >= 0 else None
        # blank lines only between the previous fence's end and this one: an output block
        prev_end = fenced[-1][4] if fenced else None
        adjacent = prev_end is not None and all(not ln.strip() for ln in lines[prev_end + 1:i])
        fenced.append((i + 2, lang, textwrap.dedent("\n".join(body)) + "\n", marker, j, adjacent))
        i = j + 1
    blocks = []
    for line, lang, code, marker, _, adjacent in fenced:
        if lang in OUTPUT and adjacent and blocks and blocks[-1].lang in PYTHON and blocks[-1].expected is None:
            blocks[-1].expected = code
            continue
        if lang in PYTHON:
            b = Block(page, line, lang, code)
            if marker and marker["what"] == "skip":
                b.skip = "marked partial in the page: " + (marker["arg"] or "no reason given")
            elif marker and marker["what"] == "raises":
                b.raises = marker["arg"]
            blocks.append(b)
        elif lang in SHELL:
            blocks.append(Block(page, line, lang, code, skip=f"{lang} block: shell commands are not run"))
        else:
            blocks.append(Block(page, line, lang, code, skip="not code"))  # not collected
    return [b for b in blocks if b.skip != "not code"]


def _normalise(text):
    return "\n".join(ln.rstrip() for ln in text.strip("\n").splitlines()).strip("\n")


def _matches(expected, got):
    want, got = _normalise(expected), _normalise(got)
    return want == got or doctest.OutputChecker().check_output(want + "\n", got + "\n", doctest.ELLIPSIS)


def _arrow_comments(code):
    """{line in block (1-based): expected text} for every ``# -> ...`` comment."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT and tok.string.startswith(ARROW):
            out[tok.start[0]] = tok.string[len(ARROW):].strip()
    return out


def _run_block(block, ns, check=True):
    """Run one block in ``ns``; return its stdout. With ``check``, compare the shown output."""
    tree = ast.parse(block.code, filename=str(block.page))
    arrows = _arrow_comments(block.code)
    ends = {stmt.end_lineno: stmt for stmt in tree.body}
    stray = sorted(set(arrows) - set(ends))
    if stray and check:
        pytest.fail(f"{_rel(block.page)}:{block.line + stray[0] - 1}: a `# ->` comment "
                    "must end a top-level statement")
    ast.increment_lineno(tree, block.line - 1)  # tracebacks point at the Markdown line
    filename = _rel(block.page)
    total = io.StringIO()
    for stmt in tree.body:
        want = arrows.get(stmt.end_lineno - block.line + 1)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            if want is not None and isinstance(stmt, ast.Expr):
                value = eval(compile(ast.Expression(stmt.value), filename, "eval"), ns)
                if value is not None:
                    print(repr(value))
            else:
                exec(compile(ast.Module([stmt], type_ignores=[]), filename, "exec"), ns)
        total.write(buf.getvalue())
        if check and want is not None and not _matches(want, buf.getvalue()):
            pytest.fail(f"{filename}:{stmt.end_lineno}: `# ->` says {want!r}, the statement "
                        f"printed {_normalise(buf.getvalue())!r}", pytrace=False)
    return total.getvalue()


class _Session:
    """One page's namespace and how far through its blocks it has run."""

    def __init__(self, page):
        self.ns = {"__name__": "__main__"}
        self.cwd = tempfile.mkdtemp(prefix=f"docs-{page.stem}-")
        self.next = 0          # index of the next block to run
        self.failed = None     # the Block that failed, if any
        import minigrad as mg
        mg.manual_seed(0)


_SESSIONS = {}
BLOCKS = [b for page in PAGES for b in parse_blocks(page)]


@contextlib.contextmanager
def _in_dir(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _execute(block, ns, check):
    if block.raises:
        try:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                _run_block(block, ns, check=False)
        except Exception as e:  # the point of the block is this error
            if type(e).__name__ != block.raises and not any(
                    c.__name__ == block.raises for c in type(e).__mro__):
                raise
            return out.getvalue()
        if check:
            pytest.fail(f"{block.id}: marked `raises {block.raises}`, but it ran without an error",
                        pytrace=False)
        return out.getvalue()
    return _run_block(block, ns, check)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_doc_block(block, monkeypatch):
    if block.skip:
        pytest.skip(f"{block.id}: {block.skip}")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    page_blocks = [b for b in BLOCKS if b.page == block.page and not b.skip]
    index = page_blocks.index(block)
    session = _SESSIONS.get(block.page)
    if session is None or session.next > index:  # a fresh page, or a block run again
        session = _SESSIONS[block.page] = _Session(block.page)
    with _in_dir(session.cwd):
        for earlier in page_blocks[session.next:index]:  # not run yet in this process
            if session.failed is None:
                try:
                    _execute(earlier, session.ns, check=False)
                except BaseException:
                    session.failed = earlier
            session.next += 1
        if session.failed is not None:
            pytest.fail(f"the block at {session.failed.id} failed, so this block's namespace is "
                        "incomplete (see that block's failure)", pytrace=False)
        session.next = index + 1
        try:
            out = _execute(block, session.ns, check=True)
        except BaseException:
            session.failed = block
            raise
    if block.expected is not None and not _matches(block.expected, out):
        pytest.fail(f"{block.id}: the output block shown below the code differs from what it "
                    f"printed.\n--- shown in the page:\n{_normalise(block.expected)}\n"
                    f"--- printed:\n{_normalise(out)}", pytrace=False)


def test_collector_finds_pages():
    # the collector must see README and the docs pages (a regex slip would silently collect nothing)
    ids = {b.id for b in BLOCKS}
    assert any(i.startswith("README.md:") for i in ids)
    assert any(i.startswith("docs/") for i in ids)


def test_collector_conventions(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(textwrap.dedent("""\
        ```python
        x = 2
        print(x + 1)   # -> 3
        x * 10   # -> 20
        ```

        ```text
        3
        20
        ```

        <!-- docs: skip: needs MPI -->
        ```python
        import mpi4py
        ```

        ```bash
        ls
        ```

        ````markdown
        ```python
        not collected: inside a markdown block
        ```
        ````

        <!-- docs: raises ZeroDivisionError -->
        ```python
        1 / 0
        ```
        """))
    blocks = parse_blocks(page)
    assert [(b.lang, b.skip is not None, b.raises) for b in blocks] == [
        ("python", False, None), ("python", True, None), ("bash", True, None),
        ("python", False, "ZeroDivisionError")]
    assert blocks[0].expected == "3\n20\n" and blocks[0].line == 2
    assert "needs MPI" in blocks[1].skip
    ns = {}
    assert _run_block(blocks[0], ns) == "3\n20\n" and ns["x"] == 2
    assert _execute(blocks[3], ns, check=True) == ""
    bad = Block(page, 1, "python", "print(1)  # -> 2\n")
    with pytest.raises(pytest.fail.Exception, match="says '2'"):
        _run_block(bad, {})
    assert _matches("object at 0x...", "object at 0x7f00") and not _matches("1", "2")


def test_figures_script_draws_every_figure(tmp_path):
    # the pictures are regenerated by a script, never pasted: it must keep running
    pytest.importorskip("matplotlib", reason="the figures need matplotlib (docs/examples extra)")
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_figures", ROOT / "docs" / "figures" / "make_figures.py")
    make_figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_figures)
    for name, make in make_figures.FIGURES.items():
        make(tmp_path / name)
        assert (tmp_path / name).stat().st_size > 5000, name
        assert (ROOT / "docs" / "figures" / name).is_file(), f"{name} is drawn but not committed"
