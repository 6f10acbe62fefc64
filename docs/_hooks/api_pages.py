"""mkdocs hook: the API pages are generated from the package itself, so they never fall behind.

- An API page holds a marker line ``<!-- api: minigrad.nn -->``; :func:`on_page_markdown` replaces it
  with one mkdocstrings entry (``::: minigrad.nn.modules.linear.Linear``) per public name of that
  module, and a table for public values that are not functions or classes (dtypes, generators).
- :func:`on_config` appends every page of ``docs/`` that the ``nav`` in mkdocs.yml does not list to
  a "More topics" section, so a page another contributor adds shows up without editing mkdocs.yml.

:func:`public_names` is also what ``tests/test_api_docstrings.py`` walks.
"""
import importlib
import inspect
import os
import re
import types

MARKER = re.compile(r"^<!--\s*api:\s*(?P<module>[\w.]+)\s*-->\s*$", re.M)


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


def _entry(module_name, name, obj):
    path = f"{obj.__module__}.{obj.__qualname__}"
    if "<locals>" in path:  # made by a factory at import time: griffe cannot find it, so write it here
        try:
            sig = str(inspect.signature(obj))
        except (TypeError, ValueError):
            sig = "(...)"
        return (f"### `{name}`\n\n```python\n{module_name}.{name}{sig}\n```\n\n"
                f"{inspect.getdoc(obj) or ''}\n")
    return f"::: {path}\n    options:\n      heading_level: 3\n"


def render(module_name):
    """The Markdown for one module's public names."""
    module = importlib.import_module(module_name)
    entries, values = [], []
    for name, obj in public_names(module):
        if inspect.isclass(obj) or inspect.isroutine(obj):
            entries.append(_entry(module_name, name, obj))
        else:
            doc = (inspect.getdoc(type(obj)) or "").split("\n")[0]
            values.append(f"| `{module_name}.{name}` | `{obj!r}` | {doc} |")
    parts = []
    if values:
        parts.append("## Values\n\n| name | value | what |\n|---|---|---|\n" + "\n".join(values) + "\n")
    if entries:
        parts.append("## Functions and classes\n\n" + "\n".join(entries))
    return "\n".join(parts)


def on_page_markdown(markdown, page, config, files, **kwargs):
    return MARKER.sub(lambda m: render(m["module"]), markdown)


def _listed(nav):
    for item in nav or []:
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            for value in item.values():
                yield from ([value] if isinstance(value, str) else _listed(value))


def on_config(config, **kwargs):
    docs = config["docs_dir"]
    listed = set(_listed(config["nav"]))
    extra = []
    for dirpath, dirnames, filenames in os.walk(docs):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(("_", ".")))
        for f in sorted(filenames):
            rel = os.path.relpath(os.path.join(dirpath, f), docs).replace(os.sep, "/")
            if f.endswith(".md") and rel not in listed:
                extra.append(rel)
    if extra and config["nav"] is not None:
        config["nav"].append({"More topics": extra})
    return config
