"""Devices, as PyTorch names them — minigrad computes on the CPU only, so the API is present for
scripts that ask (`mg.device("cpu")`, `mg.cuda.is_available()`, `tensor.device`, `.to("cpu")`),
and any other device is refused with a clear error.

    device = mg.device("cuda" if mg.cuda.is_available() else "cpu")   # -> device(type='cpu')
"""
import sys
import types

from .kernels import select as _select

__all__ = ["device", "set_default_device", "get_default_device", "cuda", "xpu", "accelerator", "backends", "check_device",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled"]


class device:
    """A device: only 'cpu' (index None or 0) exists in minigrad."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments: got {type!r}")
        name = type
        if ":" in name:
            name, _, idx = name.partition(":")
            if index is not None:
                raise RuntimeError(f"device: type ({type}) must not include an index because index was passed explicitly")
            try:
                index = int(idx)
            except ValueError:
                raise RuntimeError(f"Invalid device string: '{type}'") from None
        if name not in _KNOWN:
            raise RuntimeError(f"Expected one of cpu, cuda, mps, xpu, meta device type at start of device "
                               f"string: {type}")
        object.__setattr__(self, "type", name)
        object.__setattr__(self, "index", index)

    def __setattr__(self, *a):
        raise AttributeError("device objects are immutable")

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            try:
                other = device(other)
            except RuntimeError:
                return False
        return isinstance(other, device) and (self.type, self.index or 0) == (other.type, other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))


_KNOWN = ("cpu", "cuda", "mps", "xpu", "meta", "hpu", "xla", "privateuseone")
CPU = device("cpu")


META = device("meta")


def check_device(dev, op, meta=False):
    """dev (None, a string, an int or a device) must be the CPU, or 'meta' where the caller makes
    shape-only tensors (meta=True: the factories, Tensor.to, Module.to); anything else raises naming op."""
    if dev is None:
        return CPU
    if isinstance(dev, int):
        dev = device("cuda", dev)
    d = dev if isinstance(dev, device) else device(dev)
    if d.type == "meta":
        if meta:
            return META
        raise RuntimeError(f"{op}: device='meta' is not supported here: minigrad makes meta (shape-only) tensors "
                           f"with the factories (empty, zeros, ones, full, rand, randn and their _like forms), "
                           f"Tensor.to('meta') and Module.to('meta'), and computes on the CPU only")
    if d.type != "cpu" or (d.index not in (None, 0)):
        raise RuntimeError(f"{op}: minigrad runs on the CPU only, but device '{d}' was requested "
                           f"(mg.cuda.is_available() is False); use device='cpu' or leave it out")
    return CPU


def set_default_device(dev):
    """Only the CPU can be the default device."""
    check_device(dev, "set_default_device")


def get_default_device():
    return CPU


def _no(*_a, **_k):
    return False


cuda = types.ModuleType("minigrad.cuda", "CUDA: not available in minigrad (CPU only).")
cuda.is_available = _no
cuda.device_count = lambda: 0
cuda.is_initialized = _no
cuda.manual_seed = lambda seed: None      # as PyTorch: silently ignored without CUDA
cuda.manual_seed_all = lambda seed: None
cuda.synchronize = lambda device=None: None

xpu = types.ModuleType("minigrad.xpu", "Intel XPU: not available in minigrad (CPU only).")
xpu.is_available = _no
xpu.device_count = lambda: 0

accelerator = types.ModuleType("minigrad.accelerator", "Accelerators: none in minigrad (CPU only).")
accelerator.is_available = _no
accelerator.current_accelerator = lambda check_available=False: None
accelerator.device_count = lambda: 0

# torch.backends' switches, which training scripts set as boilerplate (cudnn.benchmark = True,
# cudnn.deterministic = True): plain attributes that change nothing (no cuDNN, MPS or TF32 here)
backends = types.ModuleType("minigrad.backends", "Backend switches: accepted and inert in minigrad (CPU only).")
backends.cudnn = types.ModuleType("minigrad.backends.cudnn")
backends.cudnn.enabled = True
backends.cudnn.benchmark = False
backends.cudnn.deterministic = False
backends.cudnn.allow_tf32 = True
backends.cudnn.is_available = _no
backends.mps = types.ModuleType("minigrad.backends.mps")
backends.mps.is_available = _no
backends.mps.is_built = _no
backends.cuda = types.ModuleType("minigrad.backends.cuda")
backends.cuda.is_built = _no
backends.cuda.matmul = types.SimpleNamespace(allow_tf32=False)
# minigrad's own switch, as cudnn.benchmark: time an op's candidate kernels once per shape and cache
# the choice (minigrad/kernels/select.py)
backends.cpu = types.ModuleType("minigrad.backends.cpu", """The CPU backend's kernel selection (as ``torch.backends.cudnn``).

``benchmark`` (False by default, as ``torch.backends.cudnn.benchmark``): where an op has several
implementations of one result (conv2d as Winograd or im2col + GEMM, its input and weight gradients,
the Winograd weight gradient's GEMM in one call or in chunks), time each candidate valid for the
arguments once per key (op, shapes, dtypes, memory order, geometry), run the fastest and cache the
choice in memory and in ``choices.json`` beside the compiled kernels; a cached key is never timed
again, so with the cache present the choice is deterministic. Off, every op takes its fixed rule.
`mg.jit`'s programs call the same ops, so they select the same way; `mg.jit.explain` lists the
choices. See docs/compiler.md, "Kernel selection".""")
backends.cpu.benchmark = False
backends.cpu.choices = _select.choices
backends.cpu.clear_choices = _select.clear
backends.cpu.cache_file = _select.cache_file
# importable by their module paths too (`import minigrad.backends.cudnn as cudnn`, as scripts do with torch)
for _m in (cuda, xpu, accelerator, backends, backends.cudnn, backends.mps, backends.cuda,
           backends.cpu):
    sys.modules.setdefault(_m.__name__, _m)

_deterministic = [False]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record the flag, as torch.use_deterministic_algorithms; minigrad's ops are deterministic anyway."""
    _deterministic[0] = bool(mode)


def are_deterministic_algorithms_enabled():
    """The flag last given to use_deterministic_algorithms (False by default)."""
    return _deterministic[0]
