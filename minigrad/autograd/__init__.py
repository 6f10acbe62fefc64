"""Autograd: Function, the backward engine, grad-mode switches and gradient checking."""
from .function import Function, Node, AccumulateGrad  # noqa: F401
from .grad_mode import no_grad, enable_grad, set_grad_enabled, is_grad_enabled, inference_mode  # noqa: F401
from .engine import run_backward as _run_backward
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: F401


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate gradients of tensors (a Tensor or a sequence) into the leaves' .grad."""
    from ..tensor import Tensor
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = [grad_tensors]
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    _run_backward(tensors, list(grad_tensors), retain_graph, create_graph, inputs=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False,
         materialize_grads=False):
    """Gradients of outputs with respect to inputs, returned as a tuple (nothing is accumulated).

    Example:
        >>> x = mg.tensor(3.0, requires_grad=True)
        >>> (dx,) = mg.autograd.grad(x ** 3, x, create_graph=True)    # 27
        >>> (ddx,) = mg.autograd.grad(dx, x)                          # 18
    """
    from ..tensor import Tensor
    single = isinstance(inputs, Tensor)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if single else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    if retain_graph is None:
        retain_graph = create_graph
    results = _run_backward(outputs, list(grad_outputs), retain_graph, create_graph, inputs=inputs,
                            accumulate=False)
    out = []
    for t, g in zip(inputs, results):
        if g is None:
            if materialize_grads:
                g = Tensor._make(__import__("numpy").zeros(t.shape, t.dtype))
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in "
                                   "the graph. Set allow_unused=True if this is the desired behavior.")
        elif not create_graph:
            g = g.detach()
        out.append(g)
    return tuple(out)
from .anomaly_mode import (  # noqa: F401,E402
    detect_anomaly, set_detect_anomaly, is_anomaly_enabled, is_anomaly_check_nan_enabled)
from . import graph  # noqa: F401,E402
from . import functional  # noqa: F401,E402
from . import forward_ad  # noqa: F401,E402
from .. import profiler  # noqa: F401,E402  (mg.autograd.profiler, as torch.autograd.profiler)
