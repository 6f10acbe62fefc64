"""Docstrings for public names whose definitions are one-liners (PyTorch keeps these apart too,
in torch/_torch_docs.py and torch/_tensor_docs.py).

A docstring written at the definition always wins: `add_docstr()` only fills an empty one, so
moving a docstring into the source is always safe. Rules, applied once at import:

- the functions in ``FUNCTIONS`` get their line (the math, in PyTorch's terms);
- a ``Tensor`` method that has a ``minigrad.<name>`` function is that function with ``self`` as
  its first argument; ``<name>_`` is its in-place form;
- a method that overrides a documented one of a base class (``Module.forward``,
  ``Optimizer.add_param_group``, ...) takes the base's docstring.

``tests/test_api_docstrings.py`` fails on any public name still without one.
"""
import inspect

import minigrad as mg

FUNCTIONS = {
    # creation
    "as_tensor": "A Tensor from ``data`` (a Tensor, array, number or nested list), converted to ``dtype`` if given.",
    "zeros": "A Tensor of the given size filled with 0.",
    "ones": "A Tensor of the given size filled with 1.",
    "empty": "A Tensor of the given size with unspecified values (allocated, not initialised).",
    "full": "A Tensor of size ``size`` filled with ``fill_value``.",
    "zeros_like": "zeros of ``x``'s shape (and dtype, unless ``dtype`` is given).",
    "ones_like": "ones of ``x``'s shape (and dtype, unless ``dtype`` is given).",
    "empty_like": "An uninitialised Tensor of ``x``'s shape (and dtype, unless ``dtype`` is given).",
    "full_like": "A Tensor of ``x``'s shape filled with ``fill_value``.",
    "arange": "The values start, start + step, ... below ``end`` (``arange(n)``: 0 .. n-1); int64 for integer arguments.",
    "eye": "The n x m identity matrix (``m`` defaults to ``n``).",
    "randperm": "A random permutation of 0 .. n-1 (int64).",
    "rand_like": "Uniform [0, 1) samples of ``x``'s shape.",
    "randn_like": "Standard normal samples of ``x``'s shape.",
    "randint_like": "Random integers in [low, high) of ``x``'s shape.",
    # elementwise arithmetic (broadcasting)
    "add": "out = x + y (broadcast);  dx = g, dy = g.",
    "sub": "out = x - y (broadcast);  dx = g, dy = -g.",
    "mul": "out = x * y (broadcast);  dx = g * y, dy = g * x.",
    "div": "out = x / y (broadcast); ``rounding_mode`` 'trunc' or 'floor' rounds the quotient (zero gradient).",
    "neg": "out = -x.",
    "pow": "out = x ** y (broadcast);  dx = g * y * x ** (y - 1), dy = g * out * log(x).",
    "abs": "out = |x|;  dx = g * sign(x) (0 at x = 0, as PyTorch).",
    "exp": "out = e ** x;  dx = g * out.",
    "log": "out = ln(x);  dx = g / x.",
    "log1p": "out = ln(1 + x), accurate for small x;  dx = g / (1 + x).",
    "expm1": "out = e ** x - 1, accurate for small x;  dx = g * (out + 1).",
    "sqrt": "out = sqrt(x);  dx = g / (2 * out).",
    "rsqrt": "out = 1 / sqrt(x);  dx = -g * out ** 3 / 2.",
    "reciprocal": "out = 1 / x;  dx = -g * out ** 2.",
    "sin": "out = sin(x);  dx = g * cos(x).",
    "cos": "out = cos(x);  dx = -g * sin(x).",
    "tan": "out = tan(x);  dx = g * (1 + out ** 2).",
    "tanh": "out = tanh(x);  dx = g * (1 - out ** 2).",
    "sigmoid": "out = 1 / (1 + e ** -x);  dx = g * out * (1 - out).",
    "relu": "out = max(x, 0);  dx = g where x > 0, else 0.",
    "sign": "out = -1, 0 or 1 by the sign of x (zero gradient).",
    "floor": "out = the largest integer <= x (zero gradient).",
    "ceil": "out = the smallest integer >= x (zero gradient).",
    "round": "out = x rounded to ``decimals`` places, halves to even as PyTorch (zero gradient).",
    "clamp": "out = x limited to [min, max] (either bound optional);  dx = g where min <= x <= max, else 0.",
    "clip": "Alias of [`minigrad.clamp()`][minigrad.clamp].",
    "maximum": "out = the larger of x and y, elementwise (broadcast); a tie shares the gradient equally.",
    "minimum": "out = the smaller of x and y, elementwise (broadcast); a tie shares the gradient equally.",
    "where": "out = x where ``condition`` is true, else y (broadcast);  dx = g masked by condition, dy by its negation.",
    "erf": "out = erf(x), the Gauss error function;  dx = g * 2 / sqrt(pi) * e ** -(x ** 2).",
    "floor_divide": "out = floor(x / y), elementwise (not differentiable).",
    "remainder": "out = x - floor(x / y) * y: the remainder with the sign of y, as Python's % (not differentiable).",
    "fmod": "out = the remainder of x / y with the sign of x, as C's fmod (not differentiable).",
    "eq": "x == y elementwise, as a bool Tensor.",
    "ne": "x != y elementwise, as a bool Tensor.",
    "lt": "x < y elementwise, as a bool Tensor.",
    "le": "x <= y elementwise, as a bool Tensor.",
    "gt": "x > y elementwise, as a bool Tensor.",
    "ge": "x >= y elementwise, as a bool Tensor.",
    "logical_and": "x and y elementwise (nonzero is true), as a bool Tensor.",
    "logical_or": "x or y elementwise (nonzero is true), as a bool Tensor.",
    "logical_not": "not x elementwise (nonzero is true), as a bool Tensor.",
    "logical_xor": "x xor y elementwise (nonzero is true), as a bool Tensor.",
    "isnan": "True where x is NaN.",
    "isinf": "True where x is +inf or -inf.",
    "isfinite": "True where x is neither NaN nor infinite.",
    "allclose": "True if |x - y| <= atol + rtol * |y| everywhere (a Python bool).",
    # indexing
    "gather": "``out[i][j] = x[index[i][j]][j]`` for ``dim=0`` (likewise along other dims);  dx scatters g back.",
    "scatter_add": "A copy of x with ``src`` added at ``index`` along ``dim`` (repeated indices add up).",
    "index_select": "The entries of x at the 1-D ``index`` along ``dim``;  dx adds g back at those indices.",
    "masked_fill": "A copy of x with ``value`` where ``mask`` is true;  dx = g where the mask is false.",
    "take_along_dim": "The values of x at ``indices`` along ``dim`` (of the flattened x if dim is None), as numpy.take_along_axis.",
    # reductions
    "sum": "The sum over ``dim`` (all elements if None);  dx = g broadcast back.",
    "mean": "The mean over ``dim`` (all elements if None);  dx = g / n broadcast back.",
    "std": "The standard deviation over ``dim``, Bessel-corrected unless ``correction=0`` / ``unbiased=False``.",
    "prod": "The product over ``dim`` (all elements if None); exact gradients also where x has zeros.",
    "amax": "The maximum over ``dim``; ties share the gradient equally, as PyTorch.",
    "amin": "The minimum over ``dim``; ties share the gradient equally, as PyTorch.",
    "argmax": "The index of the maximum over ``dim`` (of the flattened x if None), int64.",
    "argmin": "The index of the minimum over ``dim`` (of the flattened x if None), int64.",
    "any": "True where any element over ``dim`` is nonzero (bool).",
    "all": "True where every element over ``dim`` is nonzero (bool).",
    "logsumexp": "log(sum(exp(x))) over ``dim``, computed without overflow;  dx = g * softmax(x).",
    "softmax": "exp(x) / sum(exp(x)) along ``dim``, computed without overflow.",
    "log_softmax": "x - logsumexp(x) along ``dim``: the stable log of softmax.",
    "cumsum": "The running sum along ``dim``.",
    # shape
    "reshape": "x with a new shape of the same number of elements (one size may be -1); a view when possible.",
    "flatten": "x with dims ``start_dim`` .. ``end_dim`` merged into one.",
    "unflatten": "x with dim ``dim`` split into ``sizes``.",
    "squeeze": "x without its size-1 dims (only ``dim``, if given).",
    "unsqueeze": "x with a new size-1 dim inserted at ``dim``.",
    "permute": "x with its dims reordered to ``dims`` (a view).",
    "transpose": "x with dims ``dim0`` and ``dim1`` swapped (a view).",
    "swapaxes": "Alias of [`minigrad.transpose()`][minigrad.transpose].",
    "t": "The transpose of a matrix (0-d and 1-d tensors are returned as they are).",
    "expand": "x broadcast to ``sizes`` without copying (-1 keeps a size);  dx = g summed back.",
    "broadcast_to": "x broadcast to ``shape`` without copying.",
    "broadcast_tensors": "The tensors broadcast to their common shape.",
    "repeat": "x tiled ``sizes`` times along each dim (a copy).",
    "flip": "x with the order of its entries reversed along ``dims``.",
    "clone": "A copy of x with its own memory, in the graph (gradient passes through).",
    "cat": "The tensors joined along the existing dim ``dim``.",
    "concat": "Alias of [`minigrad.cat()`][minigrad.cat].",
    "concatenate": "Alias of [`minigrad.cat()`][minigrad.cat].",
    "stack": "The tensors (of one shape) joined along a new dim ``dim``.",
    "narrow": "The slice ``start : start + length`` of x along ``dim`` (a view).",
    "split": "x cut along ``dim`` into pieces of ``split_size_or_sections`` (an int: equal pieces, the last smaller; a list: those sizes).",
    "chunk": "x cut along ``dim`` into ``chunks`` pieces of equal size (the last may be smaller).",
    "unbind": "The slices of x along ``dim``, as a tuple, the dim removed.",
    "tril": "x with the entries above the ``diagonal``-th diagonal set to 0.",
    "triu": "x with the entries below the ``diagonal``-th diagonal set to 0.",
    # linear algebra
    "bmm": "Batched matrix product: (b, n, m) @ (b, m, p) -> (b, n, p).",
    "dot": "The inner product of two 1-D tensors.",
    "matmul": "x @ y with NumPy/PyTorch semantics (vectors, matrices, broadcast batches);  dx = g @ y^T, dy = x^T @ g.",
    "mm": "Matrix product of two 2-D tensors: (n, m) @ (m, p) -> (n, p).",
    "outer": "The outer product of two 1-D tensors: out[i, j] = x[i] * y[j].",
    # modes and devices
    "is_grad_enabled": "True if operations are being recorded for backward in this thread.",
    "get_default_device": "The device new tensors are made on: always 'cpu' in minigrad.",
}

TENSOR = {
    "is_leaf": "True for a tensor no recorded op produced: created by the user, or not requiring grad.",
    "grad": "The gradient accumulated by backward (None until one reaches this leaf); settable.",
    "requires_grad_": "Set ``requires_grad`` (default True) in place, on a leaf; returns self.",
    "detach_": "Detach this tensor from the graph in place (it becomes a leaf); returns self.",
    "shape": "The size of each dimension, as a tuple.",
    "dtype": "The element type (a NumPy dtype: mg.float32, mg.int64, ...).",
    "ndim": "The number of dimensions.",
    "is_floating_point": "True if the dtype is a floating-point type.",
    "size": "The shape as a tuple, or the size of dimension ``dim`` if given.",
    "dim": "The number of dimensions.",
    "numel": "The number of elements.",
    "element_size": "The size of one element in bytes.",
    "is_contiguous": "Whether the tensor's memory is C-contiguous (False for a transpose or a strided slice).",
    "stride": "The step in elements between neighbours along each dim (a tuple), or along ``dim``.",
    "item": "The value of a one-element tensor as a Python number.",
    "tolist": "The values as (nested) Python lists of numbers.",
    "numpy": "The NumPy array holding this tensor's values (shared memory, no copy); refused when it requires grad.",
    "type_as": "This tensor converted to ``other``'s dtype.",
    "float": "This tensor as float32 (self if it already is).",
    "double": "This tensor as float64 (self if it already is).",
    "half": "This tensor as float16 (self if it already is).",
    "long": "This tensor as int64 (self if it already is).",
    "int": "This tensor as int32 (self if it already is).",
    "bool": "This tensor as bool (self if it already is).",
    "cpu": "This tensor (minigrad tensors always live on the CPU).",
    "view": "A view of this tensor with a new shape (same elements, shared memory), as "
            "[`minigrad.reshape()`][minigrad.reshape].",
    "view_as": "A view of this tensor with ``other``'s shape.",
    "reshape_as": "This tensor reshaped to ``other``'s shape.",
    "T": "This tensor with the order of its dims reversed.",
    "mT": "This tensor with its last two dims swapped (a batch of transposed matrices).",
    "mH": "The conjugate transpose of a batch of matrices: ``mT`` (minigrad's dtypes are real).",
    "H": "The conjugate transpose of a matrix: ``T`` of a 2-D tensor (minigrad's dtypes are real).",
    "expand_as": "This tensor broadcast to ``other``'s shape without copying.",
    "contiguous": "This tensor with C-contiguous memory (self if it already is).",
    "where": "``x.where(condition, y)`` is ``minigrad.where(condition, x, y)``: x where condition holds, else y.",
    "zero_": "Fill with 0 in place; returns self.",
    "fill_": "Fill with ``value`` in place; returns self.",
    "copy_": "Copy ``src``'s values (broadcast, converted) into this tensor in place; returns self.",
    "uniform_": "Fill with samples of U(from_, to) in place (``generator=`` optional); returns self.",
    "normal_": "Fill with samples of N(mean, std²) in place (``generator=`` optional); returns self.",
    "bernoulli_": "Fill with 1 (probability ``p``) or 0 in place (``generator=`` optional); returns self.",
}

MEMBERS = {  # (class path, member): docstring
    ("Generator", "manual_seed"): "Reseed this generator with ``seed``; returns the generator.",
    ("Generator", "initial_seed"): "The seed this generator was last seeded with (None if it was seeded from entropy).",
    ("Generator", "get_state"): "The state of the underlying NumPy PCG64 bit generator (a dict), for set_state.",
    ("Generator", "set_state"): "Restore a state returned by get_state; returns the generator.",
    ("autograd.Function", "forward"): "The op's forward: receives ``ctx`` and NumPy arrays (non-Tensor arguments as they are), returns NumPy array(s). Override it.",
    ("autograd.Function", "backward"): "The op's vector-Jacobian product: receives ``ctx`` and one gradient Tensor per output, returns one Tensor (or None) per forward input. Override it.",
    ("autograd.Function", "save_for_backward"): "Keep arrays (inputs or outputs of forward) for backward, where ``ctx.saved_tensors`` gives them back as Tensors.",
    ("autograd.Function", "mark_non_differentiable"): "Mark outputs of forward that get no gradient (e.g. indices), as PyTorch's ctx.mark_non_differentiable.",
    ("autograd.Function", "saved_tensors"): "The tensors save_for_backward kept, as Tensors; an error naming retain_graph=True once backward has freed them.",
    ("autograd.Node", "name"): "The node's name, PyTorch's where PyTorch has the op (e.g. ``MulBackward0``).",
    ("autograd.Node", "next_functions"): "The graph's edges from this node: one (node or None, output index) pair per input, in argument order.",
    ("autograd.Node", "register_prehook"): "Call ``fn(grad)`` with the gradient arriving for output ``output_nr`` before the node runs; a returned Tensor replaces it. Returns a handle whose ``remove()`` unregisters.",
    ("autograd.AccumulateGrad", "variable"): "The leaf tensor whose ``.grad`` this node accumulates into (None once the leaf is gone).",
    ("autograd.AccumulateGrad", "name"): "``AccumulateGrad``, as PyTorch.",
    ("data.ConcatDataset", "cumsum"): "The running totals of the datasets' lengths: where each dataset ends in the concatenation.",
    ("data.RandomSampler", "num_samples"): "How many indices one pass yields: ``num_samples`` if given, else ``len(data_source)``.",
}
AUTOGRAD_FUNCTIONS = {
    "is_anomaly_enabled": "True while anomaly mode is on (inside detect_anomaly / set_detect_anomaly(True)).",
    "is_anomaly_check_nan_enabled": "True while anomaly mode is on and checks each backward output for NaN.",
}


def add_docstr(obj, doc):
    """Give ``obj`` (a function or property) ``doc`` unless it already has a docstring."""
    if not (getattr(obj, "__doc__", None) or "").strip():
        obj.__doc__ = doc


def _own(cls, name):
    value = vars(cls).get(name)
    if isinstance(value, (staticmethod, classmethod)):
        return value.__func__
    return value


def _fill_tensor():
    for name, value in list(vars(mg.Tensor).items()):
        if name.startswith("_") or not (inspect.isfunction(value) or isinstance(value, property)):
            continue
        if name in TENSOR:
            add_docstr(value, TENSOR[name])
        elif callable(getattr(mg, name, None)):
            add_docstr(value, f"``x.{name}(...)`` is ``minigrad.{name}(x, ...)``: "
                              f"see [`minigrad.{name}()`][minigrad.{name}].")
        elif name.endswith("_") and callable(getattr(mg.Tensor, name[:-1], None)):
            add_docstr(value, f"In-place [`Tensor.{name[:-1]}()`][minigrad.Tensor.{name[:-1]}]: writes the result "
                              "into this tensor (bumping its version counter) and returns it.")


def _fill_overrides(modules):
    """A method overriding a documented base-class method takes the base's docstring."""
    seen = set()
    for module in modules:
        for obj in vars(module).values():
            if not inspect.isclass(obj) or obj in seen or not obj.__module__.startswith("minigrad"):
                continue
            seen.add(obj)
            for name in list(vars(obj)):
                value = _own(obj, name)
                if name.startswith("_") or not (inspect.isfunction(value) or isinstance(value, property)):
                    continue
                for base in obj.__mro__[1:]:
                    inherited = _own(base, name)
                    doc = getattr(inherited, "__doc__", None) if inherited is not None else None
                    if doc and doc.strip():
                        add_docstr(value, doc)
                        break


def _resolve(path):
    obj = mg
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


for _module, _docs in ((mg, FUNCTIONS), (mg.autograd, AUTOGRAD_FUNCTIONS)):
    for _name, _doc in _docs.items():
        _fn = getattr(_module, _name, None)
        if _fn is not None and inspect.isroutine(_fn):
            add_docstr(_fn, _doc)
for (_cls, _member), _doc in MEMBERS.items():
    _cls = _resolve(_cls)
    _value = _own(_cls, _member) if _cls is not None else None
    if _value is not None:
        add_docstr(_value, _doc)
_fill_tensor()
_fill_overrides([mg, mg.nn, mg.optim, mg.optim.lr_scheduler, mg.data, mg.autograd, mg.nn.parallel])
