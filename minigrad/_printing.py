"""Tensor printing in PyTorch's format (a port of the rules of torch/_tensor_str.py to NumPy).

The rules, as PyTorch's: one formatter per tensor picks, from the finite nonzero values (of the
summarised data when the tensor has more than `threshold` elements), integer mode (every value a
whole number: printed `1.`), scientific mode (max/min > 1000, max > 1e8 or min < 1e-4, unless
`sci_mode` forces it) and the column width; rows wrap at `linewidth`; summarised dimensions keep
`edgeitems` at each end around `...`; suffixes (`dtype=`, `size=`, `grad_fn=`/`requires_grad=True`)
go on the last line or a new one when they would pass `linewidth`.
"""
import math

import numpy as np

_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}
_OPTS = dict(_DEFAULTS)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Set the options for printing tensors (PyTorch's ``torch.set_printoptions``).

    Args:
        precision: digits after the decimal point for floating point values (default 4).
        threshold: a tensor with more elements than this is summarised with ``...`` (default 1000).
        edgeitems: items kept at each end of a summarised dimension (default 3).
        linewidth: characters per line before wrapping (default 80).
        profile: ``"default"``, ``"short"`` (precision 2, edgeitems 2) or ``"full"`` (never
            summarise); the other arguments override it.
        sci_mode: True/False force or forbid scientific notation; None (the default, and what every
            call without it sets, as in PyTorch) chooses from the values.

    Example:
        >>> mg.set_printoptions(precision=2)
        >>> mg.tensor([1.12345])
        tensor([1.12])
        >>> mg.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        _OPTS.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            _OPTS[name] = value
    _OPTS["sci_mode"] = sci_mode


def get_printoptions():
    """The current print options as a dict that ``set_printoptions(**options)`` accepts.

    Example:
        >>> mg.get_printoptions()["precision"]
        4
    """
    return dict(_OPTS)


class _Formatter:
    """Width and mode for every value of one tensor (PyTorch's _Formatter)."""

    def __init__(self, arr):
        self.floating = arr.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.max_width = True, False, 1
        prec = _OPTS["precision"]
        flat = arr.reshape(-1)
        if not self.floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        vals = flat[np.isfinite(flat) & (flat != 0)].astype(np.float64)
        if vals.size == 0:
            return
        absv = np.abs(vals)
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if _OPTS["sci_mode"] is None:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = bool(_OPTS["sci_mode"])
        values = vals.tolist()
        if self.sci_mode:
            width = max(len(f"{v:.{prec}e}") for v in values)
        elif self.int_mode:
            width = max(len(f"{v:.0f}") for v in values) + 1  # the '.' marking a float
        else:
            width = max(len(f"{v:.{prec}f}") for v in values)
        self.max_width = max(self.max_width, width)

    def format(self, v):
        prec = _OPTS["precision"]
        if self.floating:
            if self.sci_mode:
                s = f"{v:{self.max_width}.{prec}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{prec}f}"
        else:
            s = str(v)
        return (self.max_width - len(s)) * " " + s


class _ComplexFormatter:
    """A complex tensor's formatter: one _Formatter for the real parts and one for the imaginary
    parts, joined as PyTorch's `1.5000+2.0000j` (the imaginary part carries its sign)."""

    def __init__(self, arr):
        self.real, self.imag = _Formatter(arr.real), _Formatter(arr.imag)
        self.max_width = self.real.max_width + self.imag.max_width + 1  # (the 'j')

    def format(self, v):
        real = self.real.format(v.real)
        imag = (self.imag.format(v.imag) + "j").lstrip()
        return real + imag if imag[0] in "+-" else real + "+" + imag


def _summarized(arr):
    """The values PyTorch's formatter sees for a summarised tensor: the edge items of each dim."""
    e = _OPTS["edgeitems"]
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        return np.concatenate((arr[:e], arr[-e:])) if arr.shape[0] > 2 * e else arr
    if not e:
        return arr[tuple(slice(0, 0) for _ in arr.shape)]
    rows = list(range(e)) + list(range(arr.shape[0] - e, arr.shape[0])) if arr.shape[0] > 2 * e \
        else range(arr.shape[0])
    return np.stack([_summarized(arr[i]) for i in rows])


def _vector_str(arr, indent, summarize, fmt):
    element_length = fmt.max_width + 2
    per_line = max(1, math.floor((_OPTS["linewidth"] - indent) / element_length))
    e = _OPTS["edgeitems"]
    if summarize and not e:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * e:
        data = ([fmt.format(v) for v in arr[:e].tolist()] + [" ..."]
                + [fmt.format(v) for v in arr[-e:].tolist()])
    else:
        data = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(arr, indent, summarize, fmt):
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector_str(arr, indent, summarize, fmt)
    e = _OPTS["edgeitems"]
    n = arr.shape[0]
    if summarize and n > 2 * e:
        slices = ([_tensor_str_with_formatter(arr[i], indent + 1, summarize, fmt) for i in range(e)]
                  + ["..."]
                  + [_tensor_str_with_formatter(arr[i], indent + 1, summarize, fmt) for i in range(n - e, n)])
    else:
        slices = [_tensor_str_with_formatter(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(arr, indent):
    if arr.size == 0:
        return "[]"
    summarize = arr.size > _OPTS["threshold"]
    data = _summarized(arr) if summarize else arr
    fmt = _ComplexFormatter(data) if arr.dtype.kind == "c" else _Formatter(data)
    return _tensor_str_with_formatter(arr, indent, summarize, fmt)


def _add_suffixes(tensor_str, suffixes, indent):
    out = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > _OPTS["linewidth"]:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_line_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t):
    """repr(t) in PyTorch's format: `tensor([...], dtype=..., grad_fn=<...>)`."""
    from . import _dtype
    from .tensor import Tensor
    from .nn.parameter import Parameter
    arr = t._data
    prefix = "tensor(" if type(t) in (Tensor, Parameter) else f"{type(t).__name__}("
    indent = len(prefix)
    suffixes = []
    default = _dtype.get_default_dtype()
    if arr.size == 0:
        if arr.ndim != 1:  # the shape is shown unless it is (0,), as NumPy and PyTorch
            suffixes.append(f"size={tuple(arr.shape)}")
        if arr.dtype != default:  # no element tells an empty tensor's dtype
            suffixes.append(f"dtype=minigrad.{arr.dtype}")
        body = "[]"
    else:
        if not _OPTS["edgeitems"]:
            suffixes.append(f"size={tuple(arr.shape)}")
        if arr.dtype not in (default, _dtype._default_complex(), np.dtype(np.int64), np.dtype(np.bool_)):
            suffixes.append(f"dtype=minigrad.{arr.dtype}")
        body = _tensor_str(arr, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
