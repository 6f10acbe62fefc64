"""Every public module has an API page, and every public name is rendered on one.

The API pages are made by the mkdocs hook docs/_hooks/api_pages.py from marker lines in
docs/api/*.md (``<!-- api: minigrad.func -->``). These tests run the hook's own rendering, without
mkdocs (so they take a second, not a site build): a public module with no page, or a public name
that no page writes out (a mkdocstrings entry, a value row or an anchor linking to the entry), fails
here. ``mkdocs build --strict`` (CI) then checks that every entry and cross-reference resolves.

A new module under minigrad/ must either get a page (docs/api/index.md says how) or be listed in
INTERNAL below with the reason it has none (usually: an implementation file whose public names a
documented package exports).
"""
import importlib
import importlib.util
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("api_pages", ROOT / "docs" / "_hooks" / "api_pages.py")
api_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_pages)


def _group(parent, names, why):
    return {f"{parent}.{name}": why for name in names.split()}


# Modules without a page of their own (a prefix covers its submodules), each with the reason.
INTERNAL = {
    "minigrad.ops": "the op classes; their functions are exported by minigrad (and minigrad.nn.functional)",
    "minigrad.tensor": "Tensor, exported by minigrad",
    "minigrad.creation": "the creation functions, exported by minigrad",
    "minigrad.device": "device and friends, exported by minigrad",
    "minigrad.serialization": "save/load, exported by minigrad",
    "minigrad.utils": "a namespace: minigrad.utils.data is minigrad.data, minigrad.utils.checkpoint has its page",
    **_group("minigrad.autograd", "anomaly_mode engine function grad_mode gradcheck levels observers",
             "the engine's parts; the public names are exported by minigrad.autograd"),
    **_group("minigrad.nn", "modules parameter", "the layers, exported by minigrad.nn"),
    "minigrad.nn.parallel.distributed": "DistributedDataParallel, exported by minigrad.nn.parallel",
    **_group("minigrad.nn.utils", "clip_grad convert_parameters", "exported by minigrad.nn.utils"),
    **_group("minigrad.optim", "adadelta adagrad adam adamax adamw asgd lbfgs nadam optimizer radam rmsprop sgd",
             "one optimizer each, exported by minigrad.optim"),
    **_group("minigrad.data", "dataloader dataset sampler distributed", "exported by minigrad.data"),
    **_group("minigrad.data.datasets", "download mnist paths", "exported by minigrad.data.datasets"),
    **_group("minigrad.debug", "doctor flow", "exported by minigrad.debug"),
    "minigrad.distributed.distributed_c10d": "the collectives, exported by minigrad.distributed",
    "minigrad.distributed.nn": "a namespace for minigrad.distributed.nn.functional, which has its page",
    "minigrad.distributed.run": "the launcher command (python -m minigrad.distributed.run), in docs/distributed.md",
    **_group("minigrad.func", "batching_rules vmap", "vmap's machinery; the transforms are exported by minigrad.func"),
    **_group("minigrad.graph", "interpret ir serialize trace", "the tracer and the IR, exported by minigrad.graph"),
    **_group("minigrad.compiler", "codegen guards memory pipeline passes jit pystate",
             "the compiler's stages, walked through in docs/compiler.md; the entry points are exported "
             "by minigrad.compiler, mg.jit and mg.compile"),
    "minigrad.onnx.context": "the lowering context, exported by minigrad.onnx (Ctx, Unmapped)",
    "minigrad.testing.opinfo": "the registry, exported by minigrad.testing",
    "minigrad.kernels.": "the numba kernels themselves; the switches are on the minigrad.kernels page",
    **_group("minigrad.distributions", "continuous discrete distribution extra gamma kl mixture multivariate transformed",
             "the families and the KL registry, exported by minigrad.distributions"),
    "minigrad.distributions.utils": "helpers shared by the families (broadcast_all, logits_to_probs, ...), as "
                                    "torch.distributions.utils; not part of the documented API",
}


def discovered_modules():
    """Every module and package under minigrad/ with no leading underscore in its dotted name."""
    out = []
    for path in sorted((ROOT / "minigrad").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not any(p.startswith("_") for p in parts):
            out.append(".".join(parts))
    return out


def internal(module_name):
    return any(module_name == p or module_name.startswith(p if p.endswith(".") else p + ".") for p in INTERNAL)


def rendered():
    """{page: markdown} for the API pages, as the hook writes them (markers replaced)."""
    out = {}
    for page, _ in api_pages.pages():
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        out[page] = api_pages.MARKER.sub(lambda m: api_pages.render(m["target"], page), text)
    return out


_IDENT = re.compile(r"^::: (?P<id>[\w.]+)$|<a id=\"(?P<anchor>[\w.]+)\"></a>", re.M)


def reachable(pages):
    """{public path: page} for everything the rendered pages document or anchor."""
    out = {}
    for page, text in pages.items():
        for m in _IDENT.finditer(text):
            out.setdefault(m["id"] or m["anchor"], page)
    return out


def unrendered(module_name, paths):
    """The public names of ``module_name`` that no page renders."""
    module = importlib.import_module(module_name)
    return [f"{module_name}.{name}" for name, _ in api_pages.public_names(module)
            if f"{module_name}.{name}" not in paths]


@pytest.fixture(scope="module")
def pages():
    return rendered()


def documented_modules():
    return [t for _, targets in api_pages.pages() for t in targets
            if isinstance(api_pages.resolve(t), types.ModuleType)]


def test_every_public_module_has_a_page():
    documented = set(documented_modules())
    missing = [m for m in discovered_modules() if m not in documented and not internal(m)]
    assert not missing, ("public modules with no API page (add docs/api/<name>.md with "
                         "'<!-- api: <module> -->', or list the module in INTERNAL with why): " + ", ".join(missing))
    stale = [p for p in INTERNAL if not any(m == p.rstrip(".") or m.startswith(p.rstrip(".") + ".")
                                            for m in discovered_modules())]
    assert not stale, f"INTERNAL names modules that no longer exist: {stale}"
    # the modules the API reference was missing once (issue 32), and the ones it always had
    assert {"minigrad", "minigrad.func", "minigrad.debug", "minigrad.onnx", "minigrad.distributed",
            "minigrad.profiler", "minigrad.graph", "minigrad.nn", "minigrad.nn.functional",
            "minigrad.autograd.forward_ad", "minigrad.utils.checkpoint"} <= documented


def test_every_public_name_is_rendered(pages):
    paths = reachable(pages)
    missing = [name for module in documented_modules() for name in unrendered(module, paths)]
    assert not missing, (f"{len(missing)} public names are on no API page:\n  " + "\n  ".join(missing))


def test_each_function_and_class_is_written_out_once(pages):
    """The full entry is at the object's home; its other names link there (no duplicate anchors)."""
    entries = [m["id"] for text in pages.values() for m in _IDENT.finditer(text) if m["id"]]
    duplicated = sorted({e for e in entries if entries.count(e) > 1})
    assert not duplicated, f"documented twice (mkdocs --strict fails on the duplicate anchor): {duplicated}"
    anchors = [m["anchor"] for text in pages.values() for m in _IDENT.finditer(text) if m["anchor"]]
    duplicated = sorted({a for a in anchors if anchors.count(a) > 1})
    assert not duplicated, f"anchored twice: {duplicated}"


def test_public_names_land_where_users_type_them(pages):
    paths = reachable(pages)
    # mg.jit under its public name, on its own page, with its attributes; mg.compile beside it
    assert paths["minigrad.jit"] == "api/jit.md"
    assert {"minigrad.jit.explain", "minigrad.jit.mark_dynamic", "minigrad.jit.trace", "minigrad.compile"} <= set(paths)
    assert "::: minigrad.compiler.jit.jit" not in pages["api/minigrad.md"]
    assert "[`minigrad.jit`][minigrad.jit]" in pages["api/minigrad.md"]  # the top level links to it
    # entries are written under the public path, so the anchors are the names users type
    assert "::: minigrad.nn.Linear" in pages["api/nn.md"] and "::: minigrad.Tensor" in pages["api/minigrad.md"]
    assert "::: minigrad.func.vmap\n" not in pages["api/func.md"]  # griffe reads mg.func.vmap as the module
    assert '<a id="minigrad.func.vmap"></a>' in pages["api/func.md"]


def test_the_check_catches_a_missing_page():
    # a walk or a rendering that silently found nothing would pass the tests above
    mod = types.ModuleType("minigrad_fake_public", "a module")

    def orphan():
        """Documented, but on no page."""
    orphan.__module__ = "minigrad_fake_public"
    mod.orphan = orphan
    sys.modules["minigrad_fake_public"] = mod
    try:
        assert unrendered("minigrad_fake_public", reachable(rendered())) == ["minigrad_fake_public.orphan"]
    finally:
        del sys.modules["minigrad_fake_public"]
    assert not internal("minigrad.newthing") and internal("minigrad.ops.linalg") and internal("minigrad.kernels.conv")
    assert not internal("minigrad.kernels")


def test_every_api_page_is_in_the_api_section_of_the_nav():
    yaml = pytest.importorskip("yaml")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(ROOT / "docs")
    api_pages.on_config(config)
    section = next(item[api_pages.API_SECTION] for item in config["nav"]
                   if isinstance(item, dict) and api_pages.API_SECTION in item)
    listed = set(api_pages._listed(section))
    assert {page for page, _ in api_pages.pages()} <= listed
    others = set(api_pages._listed([i for i in config["nav"] if not (isinstance(i, dict) and api_pages.API_SECTION in i)]))
    assert not {p for p in others if p.startswith("api/")}, "an API page outside the API reference section"


SPHINX_ROLE = re.compile(r":(?:py:)?(?:class|meth|func|attr|mod|data|exc|obj|ref):`")


def test_docstrings_cross_reference_in_the_sites_syntax():
    """mkdocstrings shows a Sphinx role (:class:`Linear`) as text: write [`Linear`][minigrad.nn.Linear]."""
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for path in sorted((ROOT / "minigrad").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if SPHINX_ROLE.search(line)]
    assert not found, "Sphinx roles (rendered as raw text on the API pages):\n  " + "\n  ".join(found)
