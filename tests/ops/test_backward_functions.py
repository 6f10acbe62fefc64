"""One backward per op: the ops whose backward is itself a Function (conv2d, cross_entropy, batch/layer
norm, max-pool, the fused linear, relu). The plain backward and create_graph run the same definition
through Function.apply; the first-order gradients equal PyTorch's (and finite differences); the
create_graph gradient is recorded under PyTorch's double-backward node name and differentiates again.
gradcheck/gradgradcheck of each backward Function itself come from the registry
(minigrad/testing/opinfo/nn.py, tests/ops/test_ops.py)."""
import inspect

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import Function, gradcheck, gradgradcheck
from minigrad.ops import conv, elementwise, linalg, loss, normalization, pooling
from helpers import kernels_enabled, ops_seen

RNG = np.random.default_rng(7)


def _t(shape, requires_grad=True, rng=None):
    rng = RNG if rng is None else rng  # looked up per call: conftest re-seeds RNG for each test
    return mg.tensor(rng.standard_normal(shape), requires_grad=requires_grad)


def _distinct(*shape):
    n = int(np.prod(shape))
    return mg.tensor(RNG.permutation(n).reshape(shape) / 7.0, requires_grad=True)


# op name -> (function of the leaves, leaves, the backward Function, PyTorch's double-backward node,
#             the same function in torch)
def _cases():
    idx = mg.tensor([2, 0, 1, 1, 0])
    probs = np.abs(RNG.standard_normal((5, 3))) + 0.1
    probs /= probs.sum(1, keepdims=True)
    w_cls = mg.tensor([0.5, 1.0, 2.0], dtype=mg.float64)
    return {
        "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), [_t((2, 3, 5, 5)), _t((4, 3, 3, 3)), _t((4,))],
                   conv.ConvolutionBackward, "ConvolutionBackwardBackward0",
                   lambda T, x, w, b: T.nn.functional.conv2d(x, w, b, padding=1)),
        "conv2d_stride2_groups": (lambda x, w: F.conv2d(x, w, stride=2, groups=2), [_t((2, 4, 6, 5)), _t((6, 2, 3, 2))],
                                  conv.ConvolutionBackward, "ConvolutionBackwardBackward0",
                                  lambda T, x, w: T.nn.functional.conv2d(x, w, stride=2, groups=2)),
        "cross_entropy": (lambda z: F.cross_entropy(z, idx), [_t((5, 3))], loss.CrossEntropyLossBackward, None,
                          lambda T, z: T.nn.functional.cross_entropy(z, T.tensor(idx.numpy()))),
        "cross_entropy_weight_smoothing_ignore": (
            lambda z: F.cross_entropy(z, mg.tensor([2, -100, 1, 1, 0]), weight=w_cls, label_smoothing=0.2),
            [_t((5, 3))], loss.CrossEntropyLossBackward, None,
            lambda T, z: T.nn.functional.cross_entropy(z, T.tensor([2, -100, 1, 1, 0]), weight=T.tensor(w_cls.numpy()),
                                                       label_smoothing=0.2)),
        "cross_entropy_probs": (lambda z, y: F.cross_entropy(z, y, reduction="sum"),
                                [_t((5, 3)), mg.tensor(probs, requires_grad=True)], loss.CrossEntropyLossBackward,
                                None, lambda T, z, y: T.nn.functional.cross_entropy(z, y, reduction="sum")),
        "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                       [_t((4, 3, 2, 2)), _t((3,)), _t((3,))], normalization.NativeBatchNormBackward,
                       "NativeBatchNormBackwardBackward0",
                       lambda T, x, w, b: T.nn.functional.batch_norm(x, None, None, w, b, training=True)),
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [_t((3, 2, 4)), _t((4,)), _t((4,))],
                       normalization.NativeLayerNormBackward, "NativeLayerNormBackwardBackward0",
                       lambda T, x, w, b: T.nn.functional.layer_norm(x, (4,), w, b)),
        "max_pool2d_2x2": (lambda x: F.max_pool2d(x, 2), [_distinct(2, 3, 4, 6)],
                           pooling.MaxPoolBackward, "MaxPool2DWithIndicesBackwardBackward0",
                           lambda T, x: T.nn.functional.max_pool2d(x, 2)),
        "max_pool2d_general": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1), [_distinct(2, 2, 5, 5)],
                               pooling.MaxPoolBackward, "MaxPool2DWithIndicesBackwardBackward0",
                               lambda T, x: T.nn.functional.max_pool2d(x, 3, stride=2, padding=1)),
        "max_pool3d_overlap": (lambda x: F.max_pool3d(x, 3, stride=2, padding=1), [_distinct(1, 2, 5, 4, 5)],
                               pooling.MaxPoolBackward, "MaxPool3DWithIndicesBackwardBackward0",
                               lambda T, x: T.nn.functional.max_pool3d(x, 3, stride=2, padding=1)),
        "linear": (lambda x, w, b: F.linear(x, w, b), [_t((5, 3)), _t((4, 3)), _t((4,))], linalg.AddmmBackward,
                   None, lambda T, x, w, b: T.nn.functional.linear(x, w, b)),
        "linear_3d": (lambda x, w, b: F.linear(x, w, b), [_t((2, 5, 3)), _t((4, 3)), _t((4,))],
                      linalg.AddmmBackward, None, lambda T, x, w, b: T.nn.functional.linear(x, w, b)),
        "relu": (lambda x: F.relu(x), [mg.tensor([[-1.0, 0.3, 2.0], [3.0, -0.5, 0.25]], dtype=mg.float64, requires_grad=True)],
                 elementwise.ThresholdBackward, "ThresholdBackwardBackward0", lambda T, x: T.nn.functional.relu(x)),
    }


CASES = _cases()


def _cot(out, seed=1):
    return mg.tensor(np.random.default_rng(seed).standard_normal(out.shape))


@pytest.mark.parametrize("name", CASES)
def test_plain_and_create_graph_backward_run_the_backward_function(name):
    """Both backwards call the op's backward Function through Function.apply (where the levels and
    the op observers see it), and give the same numbers: one definition, no twin branch."""
    fn, leaves, bwd, _, _ = CASES[name]
    grads = {}
    for create_graph in (False, True):
        out = fn(*leaves)
        with ops_seen() as seen:
            grads[create_graph] = mg.autograd.grad(out, leaves, _cot(out), create_graph=create_graph)
        assert bwd in seen, f"{name}: {bwd.__name__} not applied (create_graph={create_graph})"
    for plain, recorded in zip(grads[False], grads[True]):
        assert not plain.requires_grad
        np.testing.assert_array_equal(plain.numpy(), recorded.detach().numpy())


@pytest.mark.parametrize("name", CASES)
def test_first_and_second_order_against_finite_differences(name):
    fn, leaves, _, _, _ = CASES[name]
    assert gradcheck(fn, tuple(leaves))
    assert gradgradcheck(fn, tuple(leaves))


@pytest.mark.parametrize("name", CASES)
def test_gradients_and_double_backward_node_match_torch(name):
    torch = pytest.importorskip("torch")
    fn, leaves, _, node, tfn = CASES[name]
    out = fn(*leaves)
    cot = _cot(out)
    gs = mg.autograd.grad(out, leaves, cot, create_graph=True)
    tleaves = [torch.tensor(x.detach().numpy(), requires_grad=True) for x in leaves]
    tout = tfn(torch, *tleaves)
    tgs = torch.autograd.grad(tout, tleaves, torch.tensor(cot.numpy()), create_graph=True)
    for a, b in zip(gs, tgs):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    # the Hessian-vector product too
    vs = [np.random.default_rng(3).standard_normal(g.shape) for g in gs]
    hs = mg.autograd.grad([g for g in gs if g.requires_grad], leaves,
                          [mg.tensor(v) for g, v in zip(gs, vs) if g.requires_grad], allow_unused=True)
    ths = torch.autograd.grad([g for g in tgs if g.requires_grad], tleaves,
                              [torch.tensor(v) for g, v in zip(tgs, vs) if g.requires_grad], allow_unused=True)
    for a, b in zip(hs, ths):
        if a is None or b is None:
            assert (a is None or not a.numpy().any()) and (b is None or not b.detach().numpy().any())
            continue
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-12)
    if node is not None:  # the recorded first gradient's node is PyTorch's double-backward node
        assert gs[0].grad_fn.name() == node == type(tgs[0].grad_fn).__name__


@pytest.mark.parametrize("cls", [conv.Convolution, loss.CrossEntropyLoss, normalization._Normalize,
                                 normalization._NormalizeBackward, pooling.MaxPool,
                                 linalg.Addmm, elementwise.Relu, conv.ConvolutionBackward,
                                 loss.CrossEntropyLossBackward, linalg.AddmmBackward, elementwise.ThresholdBackward,
                                 pooling.MaxPoolBackward])
def test_no_grad_mode_branch_in_backward(cls):
    """No `if create_graph / grad enabled` twin: the backward never asks for the grad mode."""
    from minigrad.autograd.function import _declared_forward  # a declared op's forward (Addmm, Relu)
    src = inspect.getsource(cls.backward) + inspect.getsource(_declared_forward if cls._declared else cls.forward)
    for word in ("is_grad_enabled", "_state", "create_graph"):
        assert word not in src, f"{cls.__name__} looks at {word}"


@pytest.mark.parametrize("use_numba", [True, False])
def test_norm_backward_gives_parameter_gradients_in_their_shape(use_numba):
    """dw and db leave the norm's backward op already summed to the parameters' shape ((1, C, 1)
    for batch_norm, normalized_shape for layer_norm): sum(g * xhat) and sum(g), without a
    full-size product for the engine to reduce (with numba, batch_norm's come from its dx kernel)."""
    with kernels_enabled(use_numba):
        for layer in (False, True):
            x, w, b = _t((4, 3, 2)), _t((2,) if layer else (3,)), _t((2,) if layer else (3,))
            out = F.layer_norm(x, (2,), w, b) if layer else F.batch_norm(x, None, None, w, b, training=True)
            node = out.grad_fn
            xs, ws = node.saved_tensors
            g = _cot(out)
            op = normalization.NativeLayerNormBackward if layer else normalization.NativeBatchNormBackward
            dx, dw, db = op.apply(g, xs, ws, node.mean, node.rstd, node.axes, node.eps, (True, True, True))
            pshape = (2,) if layer else (1, 3, 1)
            assert dx.shape == (4, 3, 2) and dw.shape == db.shape == pshape
            axes = (0, 1) if layer else (0, 2)
            xhat = (xs.detach().numpy() - node.mean) * node.rstd
            np.testing.assert_allclose(dw.detach().numpy(), (g.numpy() * xhat).sum(axes).reshape(pshape),
                                       rtol=1e-12)
            np.testing.assert_allclose(db.detach().numpy(), g.numpy().sum(axes).reshape(pshape), rtol=1e-12)


# -- names ----------------------------------------------------------------------------------------
_NAMES = [
    (lambda: F.conv2d(_t((1, 2, 4, 4)), _t((3, 2, 3, 3))), "ConvolutionBackward0"),
    (lambda: F.max_pool2d(_distinct(1, 1, 4, 4), 2), "MaxPool2DWithIndicesBackward0"),
    (lambda: F.avg_pool2d(_t((1, 1, 4, 4)), 2), "AvgPool2DBackward0"),
    (lambda: F.layer_norm(_t((2, 3)), (3,)), "NativeLayerNormBackward0"),
    (lambda: F.batch_norm(_t((4, 3)), None, None, training=True), "NativeBatchNormBackward0"),
    (lambda: F.embedding(mg.tensor([1, 0]), _t((3, 2))), "EmbeddingBackward0"),
    (lambda: F.nll_loss(_t((3, 4)), mg.tensor([0, 3, 1])), "NllLossBackward0"),
    (lambda: F.mse_loss(_t((2, 3)), _t((2, 3))), "MseLossBackward0"),
    (lambda: F.linear(_t((2, 3)), _t((4, 3)), _t((4,))), "AddmmBackward0"),
    (lambda: F.leaky_relu(_t((2, 3))), "LeakyReluBackward0"),
    (lambda: F.pad(_t((2, 3)), (1, 1)), "ConstantPadNdBackward0"),
    (lambda: F.fold(_t((1, 4, 4)), (3, 3), 2), "Col2ImBackward0"),
    (lambda: F.binary_cross_entropy(mg.tensor([0.3, 0.6], requires_grad=True), mg.tensor([0.0, 1.0]),
                                    reduction="none"), "BinaryCrossEntropyBackward0"),
    (lambda: F.binary_cross_entropy_with_logits(_t((2,)), mg.tensor([0.0, 1.0]), reduction="none"),
     "BinaryCrossEntropyWithLogitsBackward0"),
    (lambda: F.relu(_t((2,))), "ReluBackward0"),
]


@pytest.mark.parametrize("make,name", _NAMES, ids=[n for _, n in _NAMES])
def test_grad_fn_names_are_pytorchs(make, name):
    out = make()
    assert out.grad_fn.name() == name
    assert not out.grad_fn.name().startswith("_")


def test_grad_fn_names_against_torch():
    torch = pytest.importorskip("torch")
    TF = torch.nn.functional
    x = torch.randn(1, 2, 4, 4, requires_grad=True)
    theirs = [TF.conv2d(x, torch.randn(3, 2, 3, 3)), TF.max_pool2d(x, 2), TF.avg_pool2d(x, 2),
              TF.layer_norm(torch.randn(2, 3, requires_grad=True), (3,)),
              TF.batch_norm(torch.randn(4, 3, requires_grad=True), None, None, training=True),
              TF.embedding(torch.tensor([1, 0]), torch.randn(3, 2, requires_grad=True)),
              TF.nll_loss(torch.randn(3, 4, requires_grad=True), torch.tensor([0, 3, 1])),
              TF.mse_loss(torch.randn(2, 3, requires_grad=True), torch.randn(2, 3)),
              TF.linear(torch.randn(2, 3, requires_grad=True), torch.randn(4, 3), torch.randn(4)),
              TF.leaky_relu(torch.randn(2, 3, requires_grad=True)),
              TF.pad(torch.randn(2, 3, requires_grad=True), (1, 1)),
              TF.fold(torch.randn(1, 4, 4, requires_grad=True), (3, 3), 2),
              TF.binary_cross_entropy(torch.tensor([0.3, 0.6], requires_grad=True), torch.tensor([0.0, 1.0]),
                                      reduction="none"),
              TF.binary_cross_entropy_with_logits(torch.randn(2, requires_grad=True), torch.tensor([0.0, 1.0]),
                                                  reduction="none"),
              TF.relu(torch.randn(2, requires_grad=True))]
    assert [type(t.grad_fn).__name__ for t in theirs] == [n for _, n in _NAMES]


def test_layer_norm_errors_say_layer_norm():
    x = mg.randn(2, 3)
    with pytest.raises(ValueError, match=r"^layer_norm:"):
        normalization.NativeLayerNorm.apply(x, mg.randn(4), None, (1,), 1e-5, None)
    with pytest.raises(ValueError, match=r"^batch_norm:"):
        normalization.NativeBatchNorm.apply(x, mg.randn(4), None, (0,), 1e-5, None)
    with pytest.raises(ValueError, match=r"^layer_norm:"):
        F.layer_norm(x, (3,), weight=mg.randn(4))


# -- embedding(max_norm=...) writes into the weight ------------------------------------------------
def test_embedding_max_norm_bumps_the_weight_version():
    w = mg.tensor([[3.0, 4.0]], requires_grad=True)
    y = (w * w).sum()  # saves w
    out = F.embedding(mg.tensor([0]), w, max_norm=1.0)
    np.testing.assert_allclose(w.detach().numpy(), [[0.6, 0.8]], rtol=1e-6)  # renormalised in place
    np.testing.assert_allclose(out.detach().numpy(), [[0.6, 0.8]], rtol=1e-6)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()  # the old values are gone: 2 * w would be [1.2, 1.6], not [6, 8]


def test_embedding_max_norm_raises_like_torch():
    torch = pytest.importorskip("torch")
    w = torch.tensor([[3.0, 4.0]], requires_grad=True)
    y = (w * w).sum()
    torch.nn.functional.embedding(torch.tensor([0]), w, max_norm=1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_embedding_max_norm_without_a_saved_graph_still_trains():
    w = mg.tensor([[3.0, 4.0], [0.1, 0.0]], requires_grad=True)
    F.embedding(mg.tensor([0, 1, 0]), w, max_norm=1.0).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[2.0, 2.0], [1.0, 1.0]])
    np.testing.assert_allclose(w.detach().numpy(), [[0.6, 0.8], [0.1, 0.0]], rtol=1e-6)
