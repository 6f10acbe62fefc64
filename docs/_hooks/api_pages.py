"""mkdocs hook: the API pages are generated from the package itself, so they never fall behind.

- An API page (``docs/api/*.md``) holds marker lines ``<!-- api: TARGET -->``; `on_page_markdown`
  replaces each with the reference for TARGET:
    * a module (``<!-- api: minigrad.nn -->``): one mkdocstrings entry per public name of it
      (`public_names`), and a table for public values that are not functions or classes (dtypes,
      generators);
    * any other object (``<!-- api: minigrad.jit -->``): that object, and for a function its public
      attributes too (``mg.jit.explain``, ``mg.jit.mark_dynamic``).
- Every function and class is documented once, at its *home*: the path an object marker names, else
  the shortest public path among the module markers (``minigrad.load_graph`` rather than
  ``minigrad.graph.load_graph``; ties go to the first page, by file name, then to the first name).
  Its other public names get a line linking there. Entries are written under their public path
  (``::: minigrad.nn.Linear``), so the anchors, and the cross-references in docstrings
  (`` [`Linear`][minigrad.nn.Linear] ``, mkdocs-autorefs' syntax), are the names users type.
- `on_config` appends every page of ``docs/`` that the ``nav`` in mkdocs.yml does not list: an API
  page to the "API reference" section, any other page to a "More topics" section, so a page
  another contributor adds shows up without editing mkdocs.yml.

`public_names` is also what ``tests/test_api_docstrings.py`` walks, and `pages`/`homes` what
``tests/test_api_pages.py`` checks (every public name has a page) without building the site.
"""
import importlib
import importlib.util
import inspect
import os
import re
import sys
import types
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!--\s*api:\s*(?P<target>[\w.]+)\s*-->\s*$", re.M)
API_SECTION = "API reference"


def public_names(module):
    """[(name, object)] for the public API of ``module``: ``__all__`` if it has one, else every
    name without a leading underscore; submodules (documented on their own pages) and objects
    defined outside minigrad are left out."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    out = []
    for name in names:
        obj = getattr(module, name)
        if isinstance(obj, types.ModuleType) or name == "annotations":
            continue
        if inspect.isclass(obj) or inspect.isroutine(obj):
            if not (getattr(obj, "__module__", None) or "").startswith("minigrad"):
                continue
        out.append((name, obj))
    return out


def resolve(target):
    """The module or object a dotted path names (``minigrad.nn``, ``minigrad.jit.explain``)."""
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as error:
        if "." not in target or not (target == error.name or target.startswith(f"{error.name}.")):
            raise  # a missing dependency inside the module, not a path into an object
    parent, _, attr = target.rpartition(".")
    return getattr(resolve(parent), attr)


def _documentable(obj):
    return inspect.isclass(obj) or inspect.isroutine(obj)


def covered(target):
    """[(public path, object)] that the marker for ``target`` documents."""
    obj = resolve(target)
    if isinstance(obj, types.ModuleType):
        return [(f"{target}.{name}", value) for name, value in public_names(obj)]
    out = [(target, obj)]
    if inspect.isroutine(obj):  # a function used as a namespace: mg.jit.explain, mg.jit.trace
        out += [(f"{target}.{name}", value) for name, value in vars(obj).items()
                if not name.startswith("_") and _documentable(value)]
    return out


def pages(docs_dir=DOCS):
    """[(page, [target, ...])] for the API pages, in file-name order (``page`` relative to docs/)."""
    out = []
    for path in sorted((Path(docs_dir) / "api").glob("*.md")):
        targets = MARKER.findall(path.read_text(encoding="utf-8"))
        if targets:
            out.append((f"api/{path.name}", targets))
    return out


def homes(docs_dir=DOCS):
    """{id(object): (public path, page)}: where each documented function and class is written out in
    full (see the module docstring for the rule)."""
    claimed, candidates = {}, {}
    for order, (page, targets) in enumerate(pages(docs_dir)):
        for target in targets:
            is_module = isinstance(resolve(target), types.ModuleType)
            for rank, (path, obj) in enumerate(covered(target)):
                if not _documentable(obj):
                    continue
                if not is_module:
                    claimed.setdefault(id(obj), (path, page))
                else:
                    key = (path.count("."), order, rank)
                    if id(obj) not in candidates or key < candidates[id(obj)][0]:
                        candidates[id(obj)] = (key, (path, page))
    return {**{k: v for k, (_, v) in candidates.items()}, **claimed}


_HOMES = None


def _homes():
    global _HOMES
    if _HOMES is None:
        _HOMES = homes()
    return _HOMES


_ANCHORS = {}  # page -> the anchors render() wrote there, registered with autorefs in on_page_content


def _anchor(path, page=None):
    """An HTML anchor for ``path``, so a cross-reference ``[text][path]`` links here. (autorefs'
    own ``[](){#path}`` anchors are not registered on a page that also holds mkdocstrings blocks,
    so `on_page_content` registers these itself.)"""
    _ANCHORS.setdefault(page, []).append(path)
    return f'<a id="{path}"></a>'


def _griffe_finds(path):
    """Whether griffe reaches ``path`` as written: its parent must be a module that binds the name
    (not lazily, through a module ``__getattr__``), and the name must not also be a submodule
    (``minigrad.tensor`` is the function in Python, the file to griffe)."""
    parent, _, name = path.rpartition(".")
    module = sys.modules.get(parent)
    if not isinstance(module, types.ModuleType) or name not in vars(module):
        return False
    try:
        return importlib.util.find_spec(path) is None
    except (ImportError, ValueError):
        return True


def _entry(path, obj, page=None):
    canonical = f"{obj.__module__}.{obj.__qualname__}"
    if "<locals>" in canonical:  # made by a factory at import time: griffe cannot find it, so write it here
        try:
            sig = str(inspect.signature(obj))
        except (TypeError, ValueError):
            sig = "(...)"
        return (f"{_anchor(path, page)}\n\n### `{path.rpartition('.')[2]}`\n\n```python\n{path}{sig}\n```\n\n"
                f"{inspect.getdoc(obj) or ''}\n")
    if _griffe_finds(path):
        return f"::: {path}\n    options:\n      heading_level: 3\n"
    # written under its defining path, with the public one as an anchor and the heading
    parent = path.rpartition(".")[0]
    heading = path.rpartition(".")[2] if isinstance(sys.modules.get(parent), types.ModuleType) \
        else path.split(".", 1)[1]
    return (f"{_anchor(path, page)}\n\n::: {canonical}\n    options:\n      heading_level: 3\n"
            f"      heading: \"{heading}\"\n      toc_label: \"{heading}\"\n")


def _relative(to_page, from_page):
    """A Markdown link from one docs page to another (both relative to docs/)."""
    return os.path.relpath(to_page, os.path.dirname(from_page or "")).replace(os.sep, "/")


def render(target, page=None):
    """The Markdown for one marker on ``page`` (e.g. ``api/nn.md``): the entries of what ``target``
    covers, values in a table, and a link for each name documented in full elsewhere."""
    here = _homes()
    entries, values, elsewhere = [], [], []
    for path, obj in covered(target):
        if not _documentable(obj):
            doc = (inspect.getdoc(type(obj)) or "").split("\n")[0]
            values.append(f"| {_anchor(path, page)}`{path}` | `{obj!r}` | {doc} |")
        elif here.get(id(obj), (path, page)) == (path, page):
            entries.append(_entry(path, obj, page))
        else:
            home = here[id(obj)][0]
            if home == path:  # claimed by an object marker: the page of its own
                elsewhere.append(f"- [`{path}`][{path}]: on [its own page]({_relative(here[id(obj)][1], page)})")
            else:
                elsewhere.append(f"- {_anchor(path, page)}`{path}`: the same object as [`{home}`][{home}]")
    parts = []
    if values:
        parts.append("## Values\n\n| name | value | what |\n|---|---|---|\n" + "\n".join(values) + "\n")
    if elsewhere:
        parts.append("## Aliases and names documented elsewhere\n\n" + "\n".join(elsewhere) + "\n")
    if entries:
        heading = "## Functions and classes\n\n" if isinstance(resolve(target), types.ModuleType) else ""
        parts.append(heading + "\n".join(entries))
    return "\n".join(parts)


def on_page_markdown(markdown, page, config, files, **kwargs):
    _ANCHORS.pop(page.file.src_uri, None)
    return MARKER.sub(lambda m: render(m["target"], page.file.src_uri), markdown)


def on_page_content(html, page, config, files, **kwargs):
    autorefs = config["plugins"].get("autorefs")
    for path in _ANCHORS.pop(page.file.src_uri, []):
        if autorefs is not None:
            autorefs.register_anchor(page, path, path, primary=True)
    return html


def _listed(nav):
    for item in nav or []:
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for value in item.values():
                yield from ([value] if isinstance(value, str) else _listed(value))


def on_config(config, **kwargs):
    global _HOMES
    _HOMES = None  # mkdocs serve rebuilds in one process: recompute after an edit
    docs = config["docs_dir"]
    listed = set(_listed(config["nav"]))
    api, extra = [], []
    for dirpath, dirnames, filenames in os.walk(docs):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(("_", ".")))
        for f in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, f), docs).replace(os.sep, "/")
            if f.endswith(".md") and rel not in listed:
                (api if rel.startswith("api/") else extra).append(rel)
    if config["nav"] is None:
        return config
    section = next((item for item in config["nav"] if isinstance(item, dict) and API_SECTION in item), None)
    if api and section is not None:
        section[API_SECTION].extend(api)
    elif api:
        extra += api
    if extra:
        config["nav"].append({"More topics": extra})
    return config
