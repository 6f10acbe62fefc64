"""The op library: one file per family, one Function per op with its wrapper below it.

Each family file lists its public ops in `__all__`: they are exported here and by `minigrad`
(derived below, so adding an op needs no edit here), and the names in a family's `__methods__`
become Tensor methods where tensor.py defines none. See docs/adding-an-op.md.
"""
import importlib as _importlib
import pkgutil as _pkgutil

from ..tensor import Tensor as _Tensor

__all__ = []
for _info in _pkgutil.iter_modules(__path__):
    _family = _importlib.import_module(f".{_info.name}", __name__)
    for _name in getattr(_family, "__all__", ()):
        globals()[_name] = getattr(_family, _name)
        __all__.append(_name)
    for _name in getattr(_family, "__methods__", ()):
        if not hasattr(_Tensor, _name):
            setattr(_Tensor, _name, getattr(_family, _name))

# families that do not declare __all__ yet: their names, imported explicitly, are public too
_before = set(globals())
from .linalg import (  # noqa: F401,E402
    matmul, mm, bmm, dot, outer, einsum, diagonal, diag_embed, diag, trace, tensordot, kron, cross, cdist)
from .sorting import sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique  # noqa: F401,E402
__all__ += sorted(set(globals()) - _before - {"_before"})

# kernels of Tensor methods and internals (no torch.<name> function): minigrad.ops only
from .elementwise import cast  # noqa: F401,E402
from .shape import view, expand_as, contiguous  # noqa: F401,E402
from .indexing import getitem, setitem  # noqa: F401,E402
from .linalg import linear  # noqa: F401,E402
from .inplace import inplace, fill_, copy_, sqrt_, lerp_, addcmul_, addcdiv_  # noqa: F401,E402
