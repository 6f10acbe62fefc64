"""Every public name has a docstring, so the generated API reference (docs/api/) is never blank.

"Public" is what the reference documents (``public_names`` in docs/_hooks/api_pages.py, the
mkdocs hook that writes the API pages): a module's ``__all__``, else its names without a leading
underscore, leaving out submodules and objects defined outside minigrad. For each public class,
its own public methods and properties count too (inherited ones are checked on their base).
Values that are not functions or classes (dtypes, the default generator) need a documented type.
"""
import importlib
import importlib.util
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("api_pages", ROOT / "docs" / "_hooks" / "api_pages.py")
api_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_pages)

# every module with an API page (the module markers in docs/api/*.md)
MODULES = [target for _, targets in api_pages.pages() for target in targets
           if inspect.ismodule(api_pages.resolve(target))]


def _doc(obj):
    return (getattr(obj, "__doc__", None) or "").strip()


def _members(cls):
    """(name, function or property) for the public methods and properties ``cls`` defines itself."""
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property) or inspect.isfunction(value):
            yield name, value


def undocumented(module_name):
    module = importlib.import_module(module_name)
    missing = [] if _doc(module) else [f"{module_name} (the module)"]
    for name, obj in api_pages.public_names(module):
        qual = f"{module_name}.{name}"
        if inspect.isclass(obj):
            if not _doc(obj):
                missing.append(qual)
            if obj.__module__.startswith("minigrad"):
                missing += [f"{qual}.{m}" for m, v in _members(obj) if not _doc(v)]
        elif inspect.isroutine(obj) or callable(obj):
            if not _doc(obj):
                missing.append(qual)
        elif not _doc(type(obj)):
            missing.append(f"{qual} (its type {type(obj).__name__})")
    return missing


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_name_has_a_docstring(module_name):
    missing = undocumented(module_name)
    assert not missing, (f"{len(missing)} public names in {module_name} have no docstring "
                         f"(the API reference would be blank there):\n  " + "\n  ".join(missing))


def test_the_walk_sees_the_api():
    # a walk that silently found nothing would pass the test above
    assert {"minigrad", "minigrad.nn", "minigrad.func", "minigrad.debug", "minigrad.onnx"} <= set(MODULES)
    names = dict(api_pages.public_names(importlib.import_module("minigrad")))
    assert {"tensor", "Tensor", "exp", "no_grad", "save"} <= set(names)
    assert "nn" not in names  # submodules have their own pages
    nn_names = dict(api_pages.public_names(importlib.import_module("minigrad.nn")))
    assert "Linear" in nn_names and "forward" in dict(_members(nn_names["Linear"]))
    assert "Undocumented" in undocumented_example()


def undocumented_example():
    import types
    mod = types.ModuleType("minigrad_fake", "a module")

    class Undocumented:
        pass
    Undocumented.__module__ = "minigrad_fake"
    mod.Undocumented = Undocumented
    import sys
    sys.modules["minigrad_fake"] = mod
    try:
        return " ".join(undocumented("minigrad_fake"))
    finally:
        del sys.modules["minigrad_fake"]
