"""griffe extension: read minigrad's ``Example:`` docstring sections as Google-style ``Examples:``.

The package writes ``Example:`` (STYLE.md, as PyTorch); griffe only gives ``Examples:`` its
doctest rendering (``>>>`` lines as code), so the singular is renamed before parsing.
"""
import re

import griffe

_EXAMPLE = re.compile(r"^(\s*)Example:\s*$", re.M)


class ExampleSections(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        if obj.docstring is not None:
            obj.docstring.value = _EXAMPLE.sub(r"\1Examples:", obj.docstring.value)
