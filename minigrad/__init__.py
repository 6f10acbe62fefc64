"""minigrad: a NumPy-backed define-by-run autodiff framework with PyTorch's API.

    import minigrad as mg
    a = mg.tensor(2.0, requires_grad=True)
"""
from ._dtype import (  # noqa: F401
    float16, float32, float64, int8, uint8, int16, int32, int64, bool_, half, float, double, short, int,
    long, complex64, complex128, cfloat, cdouble, get_default_dtype, set_default_dtype)
from ._dtype import bool_ as bool  # noqa: F401,A001
from .tensor import Tensor  # noqa: F401
from ._typeinfo import (finfo, iinfo, promote_types, result_type, can_cast, is_tensor,  # noqa: F401
                        is_floating_point, numel)
from ._size import Size  # noqa: F401
from ._memory_format import (memory_format, contiguous_format, preserve_format, channels_last,  # noqa: F401
                             channels_last_3d)
from ._printing import set_printoptions, get_printoptions  # noqa: F401
from .random import (Generator, manual_seed, default_generator, initial_seed, seed, get_rng_state,  # noqa: F401
                     set_rng_state)
from .creation import (  # noqa: F401
    tensor, as_tensor, from_numpy, zeros, ones, empty, full, zeros_like, ones_like, empty_like, full_like,
    arange, linspace, eye, rand, randn, randint, randperm, rand_like, randn_like, randint_like)
from . import ops as _ops  # noqa: E402
globals().update({_name: getattr(_ops, _name) for _name in _ops.__all__})  # the ops families' __all__
from .ops import (  # noqa: F401
    bitwise_and, bitwise_or, bitwise_xor, bitwise_not, bitwise_left_shift, bitwise_right_shift)
from . import autograd  # noqa: F401
from .autograd import no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode  # noqa: F401

__version__ = "0.1.0"
from .serialization import save, load  # noqa: F401,E402
from . import nn, optim, data, linalg, special, debug, utils, func, profiler, fft  # noqa: F401,E402
from ._legacy import *  # noqa: F401,F403,E402  (FloatTensor, LongTensor, ...: PyTorch's legacy constructors)
from .func import vmap  # noqa: F401,E402  (torch.vmap: the same as mg.func.vmap)
from .device import (device, cuda, xpu, accelerator, backends, set_default_device, get_default_device,  # noqa: F401,E402
                     use_deterministic_algorithms, are_deterministic_algorithms_enabled)
from . import graph  # noqa: F401,E402  (the tracer: mg.graph.trace(fn, *args))
from .graph.trace import GraphBreak  # noqa: F401,E402
# mg.trace is torch.trace (a matrix's diagonal sum); a callable first argument still reaches the
# tracer, with a DeprecationWarning naming mg.graph.trace
from ._deprecated import trace  # noqa: F401,E402
from .graph.serialize import load_graph  # noqa: F401,E402
from .compiler.jit import jit, compile  # noqa: F401,E402,A001
from .control_flow import cond, while_loop, scan  # noqa: F401,E402
from . import compiler  # noqa: F401,E402  (mg.compiler.reset(), as torch.compiler.reset())
import types as _types  # noqa: E402
_dynamo = _types.ModuleType("minigrad._dynamo", "torch._dynamo's reset(), for scripts that call it: mg.compiler.reset.")
_dynamo.reset = compiler.reset
from . import onnx  # noqa: F401,E402  (imports the onnx package only when exporting)
from . import viz  # noqa: F401,E402
from . import distributions  # noqa: F401,E402  (mg.distributions, as torch.distributions)
from . import _config as __config__  # noqa: F401,E402  (mg.__config__.show(), as torch.__config__)
from ._config import show_config  # noqa: F401,E402
from ._threads import (  # noqa: F401,E402
    get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads)
from . import _threads  # noqa: E402
_threads._at_import()  # $MINIGRAD_NUM_THREADS, if set; otherwise BLAS's threads stay as they are
from . import _docs  # noqa: F401,E402  (docstrings for the one-line definitions; last, after every export)

import os as _os  # noqa: E402
if _os.environ.get("MINIGRAD_DEBUG") == "1":  # the gradient doctor for a whole run: MINIGRAD_DEBUG=1 python train.py
    debug.enable()
