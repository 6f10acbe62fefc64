"""N-d convolution, pooling and resizing: conv1d/3d, conv_transpose1d/2d/3d,
1-d/3-d pools, unpooling, adaptive max pooling, interpolate, negative pads, and their modules.

The registry (minigrad/testing/opinfo/nn.py) checks each op's values, gradients and second
derivatives; here: the modules against torch.nn with the same weights (outputs, gradients, reprs),
PyTorch's semantic corners (ceil_mode's last window, output_padding, interpolate's half-pixel and
recompute rules, max_unpool's output_size, negative pads in every mode) and the errors."""
import numpy as np
import pytest

import minigrad as mg
from helpers import kernels_enabled
import minigrad.nn.functional as F

nn = mg.nn

MODULES = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, dilation=2, groups=2), [(2, 4, 9)]),
    ("Conv1d", (3, 4, 4), dict(padding="same", padding_mode="circular"), [(2, 3, 7)]),
    ("Conv1d", (3, 4, 3), dict(padding=2, padding_mode="reflect", bias=False), [(3, 7)]),
    ("Conv3d", (2, 4, (2, 3, 2)), dict(stride=(1, 2, 1), padding=1), [(2, 2, 3, 5, 4)]),
    ("Conv3d", (4, 2, 2), dict(groups=2, dilation=(2, 1, 1), padding_mode="replicate", padding=1), [(1, 4, 4, 3, 3)]),
    ("ConvTranspose1d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2), [(2, 4, 5)]),
    ("ConvTranspose2d", (3, 2, (3, 2)), dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0)), [(2, 3, 3, 4)]),
    ("ConvTranspose2d", (4, 4, 2), dict(stride=2, groups=2, dilation=2, bias=False), [(4, 3, 3)]),
    ("ConvTranspose3d", (2, 3, 2), dict(stride=2), [(1, 2, 2, 3, 2)]),
    ("MaxPool1d", (3,), dict(stride=2, padding=1, ceil_mode=True), [(2, 3, 10)]),
    ("MaxPool3d", ((2, 3, 2),), dict(stride=(2, 2, 1), padding=(1, 1, 0), ceil_mode=True), [(1, 2, 5, 6, 4)]),
    ("AvgPool1d", (3, 2, 1), dict(ceil_mode=True, count_include_pad=False), [(2, 3, 10)]),
    ("AvgPool3d", (3,), dict(stride=2, padding=1, ceil_mode=True), [(1, 2, 5, 6, 4)]),
    ("AvgPool3d", (2,), dict(divisor_override=3), [(2, 4, 4, 4)]),
    ("AdaptiveAvgPool1d", (4,), {}, [(2, 3, 10)]),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, [(1, 2, 5, 4, 7)]),
    ("AdaptiveMaxPool1d", (4,), {}, [(2, 3, 10)]),
    ("AdaptiveMaxPool2d", ((3, None),), {}, [(2, 3, 7, 5)]),
    ("AdaptiveMaxPool3d", (2,), {}, [(1, 2, 5, 4, 3)]),
    ("Upsample", (), dict(scale_factor=2), [(1, 2, 3, 4)]),
    ("Upsample", (), dict(size=(5, 7), mode="bilinear"), [(2, 2, 3, 4)]),
    ("Upsample", (), dict(scale_factor=1.5, mode="bilinear", align_corners=True), [(1, 2, 3, 4)]),
    ("Upsample", (), dict(scale_factor=(1.5, 2.0, 0.5), mode="trilinear"), [(1, 1, 2, 3, 4)]),
    ("Upsample", (), dict(size=7, mode="linear"), [(1, 2, 4)]),
    ("Upsample", (), dict(scale_factor=2.5, mode="bicubic"), [(1, 2, 3, 4)]),
    ("UpsamplingNearest2d", (), dict(scale_factor=3), [(1, 2, 2, 3)]),
    ("UpsamplingBilinear2d", (), dict(size=(4, 6)), [(1, 2, 2, 3)]),
    ("Hardtanh", (-0.5, 1.5), {}, [(3, 4)]),
]


@pytest.mark.parametrize("name,args,kw,shapes", MODULES, ids=[f"{m[0]}-{i}" for i, m in enumerate(MODULES)])
def test_module_matches_torch(name, args, kw, shapes):
    """Same weights -> the same outputs, input and parameter gradients, and the same repr."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    rng = np.random.default_rng(0)
    ours, theirs = getattr(nn, name)(*args, **kw).double(), getattr(torch.nn, name)(*args, **kw).double()
    with torch.no_grad():
        for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert n == tn and tuple(p.shape) == tuple(tp.shape)
            tp.copy_(torch.tensor(rng.standard_normal(tuple(tp.shape))))
            p.data.copy_(mg.tensor(tp.numpy()))
    # distinct values: no ties for the max pools
    arrays = [rng.permutation(int(np.prod(s))).reshape(s) * 0.1 + rng.uniform(-0.01, 0.01, s) for s in shapes]
    xs = [mg.tensor(a, requires_grad=True) for a in arrays]
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, tout = ours(*xs), theirs(*ts)
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(tuple(tout.shape))
    (out * mg.tensor(w)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    for x, t in zip(xs, ts):
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-12)
    for p, tp in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-12)
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("name,args", [("MaxUnpool1d", (3, 2, 1)), ("MaxUnpool2d", (2,)), ("MaxUnpool3d", ((2, 2, 1),)),
                                       ("MaxPool1d", (2,)), ("MaxPool3d", (2, 1, 1)), ("AvgPool1d", (3,)),
                                       ("AdaptiveMaxPool2d", ((2, None), True)), ("Hardtanh", (-2, 2, True)),
                                       ("ConvTranspose1d", (2, 3, 1)), ("Upsample", (None, 2.0, "nearest"))])
def test_reprs_match_torch(name, args):
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    assert repr(getattr(nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_pool_unpool_modules_round_trip_as_torch(n):
    """MaxPool(return_indices) -> MaxUnpoolNd(output_size) equals PyTorch's, gradients included."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    shape = (2, 3) + (5, 4, 3)[:n]
    x = np.random.default_rng(n).permutation(int(np.prod(shape))).reshape(shape) * 1.0
    res = []
    for lib in (nn, torch.nn):
        pool = getattr(lib, f"MaxPool{n}d")(2, return_indices=True)
        unpool = getattr(lib, f"MaxUnpool{n}d")(2)
        t = (mg if lib is nn else torch).tensor(x, requires_grad=True)
        out, idx = pool(t)
        y = unpool(out, idx, output_size=shape)
        (y * y).sum().backward()
        res.append((idx.numpy(), y.detach().numpy(), t.grad.numpy()))
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)


def test_conv_transpose_output_size_picks_output_padding():
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    m = nn.ConvTranspose2d(3, 2, 3, stride=3, padding=1).double()
    tm = torch.nn.ConvTranspose2d(3, 2, 3, stride=3, padding=1).double()
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(m.weight.detach().numpy()))
        tm.bias.copy_(torch.tensor(m.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((1, 3, 4, 4))
    for size in [(10, 10), (11, 12), (1, 2, 12, 10)]:
        out = m(mg.tensor(x), output_size=size)
        tout = tm(torch.tensor(x), output_size=size)
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="valid sizes range from"):
        m(mg.tensor(x), output_size=(13, 10))  # the largest is 10 + stride - 1 = 12


def test_conv_transpose_is_the_input_gradient_of_conv():
    """conv_transpose(g, w) = d<conv(x, w), g>/dx for every stride/padding/dilation/groups."""
    rng = np.random.default_rng(3)
    for conv, convt, n in ((F.conv1d, F.conv_transpose1d, 1), (F.conv2d, F.conv_transpose2d, 2),
                           (F.conv3d, F.conv_transpose3d, 3)):
        x = mg.tensor(rng.standard_normal((2, 4) + (7, 6, 5)[:n]), requires_grad=True)
        w = mg.tensor(rng.standard_normal((6, 2) + (3, 2, 2)[:n]))
        y = conv(x, w, stride=2, padding=1, dilation=1, groups=2)
        g = mg.tensor(rng.standard_normal(tuple(y.shape)))
        (y * g).sum().backward()
        # output_padding recovers x's size where the stride drops a remainder
        opad = tuple((s + 2 - (k - 1) - 1) % 2 for s, k in zip(x.shape[2:], w.shape[2:]))
        dx = convt(g, w, stride=2, padding=1, output_padding=opad, groups=2)
        np.testing.assert_allclose(dx.numpy(), x.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_conv_nd_third_derivative_matches_torch():
    """The three bilinear conv Functions close under differentiation: a third derivative exists and
    equals PyTorch's."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    rng = np.random.default_rng(4)
    xa, wa = rng.standard_normal((1, 2, 5, 4, 3)), rng.standard_normal((2, 2, 2, 2, 2))
    res = []
    for lib, Fn in ((mg, F), (torch, torch.nn.functional)):
        x, w = lib.tensor(xa, requires_grad=True), lib.tensor(wa, requires_grad=True)
        y = Fn.conv_transpose3d(x, w, stride=(2, 1, 1), padding=(1, 0, 0))
        gx, = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        gw, = lib.autograd.grad((gx * gx).sum(), w, create_graph=True)
        h, = lib.autograd.grad((gw * gw).sum(), x)
        res.append(h.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-9, atol=1e-9)


def test_ceil_mode_last_window_must_start_inside_the_input():
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    tf = torch.nn.functional
    # L=5, k=2, s=2, p=1: ceil gives 4 windows, but the 4th would start in the right padding -> 3
    for L, k, s, p in [(5, 2, 2, 1), (6, 3, 2, 1), (7, 2, 3, 0), (4, 3, 3, 1)]:
        x = np.arange(float(2 * L)).reshape(1, 2, L)
        for ours, theirs in ((F.max_pool1d, tf.max_pool1d), (F.avg_pool1d, tf.avg_pool1d)):
            a = ours(mg.tensor(x), k, s, p, ceil_mode=True)
            b = theirs(torch.tensor(x), k, s, p, ceil_mode=True)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, err_msg=f"{ours.__name__} {(L, k, s, p)}")
    assert F.max_pool1d(mg.zeros(1, 1, 5), 2, 2, 1, ceil_mode=True).shape[-1] == 3


def test_interpolate_half_pixel_and_align_corners_rules():
    x = mg.tensor([[[0.0, 10.0]]])
    # align_corners=False: src = (dst + 0.5) * in/out - 0.5, clamped at 0
    np.testing.assert_allclose(F.interpolate(x, size=4, mode="linear").numpy()[0, 0], [0.0, 2.5, 7.5, 10.0])
    # align_corners=True: the end pixels' centres coincide, src = dst * (in - 1) / (out - 1)
    np.testing.assert_allclose(F.interpolate(x, size=5, mode="linear", align_corners=True).numpy()[0, 0],
                               [0.0, 2.5, 5.0, 7.5, 10.0])
    # nearest: src = floor(dst * in / out)
    np.testing.assert_array_equal(F.interpolate(mg.tensor([[[1.0, 2.0, 3.0]]]), size=5).numpy()[0, 0],
                                  [1.0, 1.0, 2.0, 2.0, 3.0])


def test_interpolate_an_inf_stays_in_the_outputs_that_read_it():
    """Small sizes take the dense (out, in) matrix path; its zeros times an inf gave nan in every
    output of the row. PyTorch's taps read only their own inputs (a zero-weight tap on the inf is
    nan there too, as bilinear's third column). Values are PyTorch 2.13's."""
    inf, nan = np.inf, np.nan
    x = mg.tensor([[[0.0, 2.0, inf, 4.0, 5.0]]], dtype=mg.float64)
    np.testing.assert_array_equal(F.interpolate(x, size=8).numpy()[0, 0], [0, 0, 2, 2, inf, 4, 4, 5])
    np.testing.assert_array_equal(F.interpolate(x, size=8, mode="linear").numpy()[0, 0],
                                  [0, 0.875, inf, inf, inf, inf, 4.5625, 5])
    x = mg.tensor([[[[0.0, 2.0, inf], [1.0, 3.0, 4.0]]]], dtype=mg.float64, requires_grad=True)
    out = F.interpolate(x, size=(4, 5), mode="bilinear")
    np.testing.assert_allclose(out.detach().numpy()[0, 0], [[0, 0.8, nan, inf, inf], [0.25, 1.05, nan, inf, inf],
                                                             [0.75, 1.55, nan, inf, inf], [1, 1.8, 3, 3.6, 4]])
    g = mg.ones(1, 1, 4, 5, dtype=mg.float64)
    g[0, 0, 0, 1] = inf  # an inf upstream gradient reaches only the inputs its output read
    out.backward(g)
    np.testing.assert_allclose(x.grad.numpy()[0, 0], [[inf, inf, 3.2], [nan, nan, 3.2]])


def test_interpolate_scale_factor_and_recompute_as_torch():
    """Without recompute_scale_factor the kernel uses 1 / scale_factor itself; with it, in / out."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    x = np.random.default_rng(5).standard_normal((1, 2, 5, 7))
    for mode, ac in (("nearest", None), ("bilinear", False), ("bilinear", True), ("nearest-exact", None),
                     ("bicubic", False), ("bicubic", True)):
        for sf in (1.3, 0.7, 2.0, 2.0001, 1.0001, (1.6, 0.55)):
            for rec in (None, True):
                a = F.interpolate(mg.tensor(x), scale_factor=sf, mode=mode, align_corners=ac, recompute_scale_factor=rec)
                b = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=sf, mode=mode, align_corners=ac,
                                                    recompute_scale_factor=rec)
                assert tuple(a.shape) == tuple(b.shape), (mode, sf, rec)
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12, err_msg=f"{mode} {sf} {rec}")


def test_interpolate_float32_stays_float32_close_to_torch():
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    x = np.random.default_rng(6).standard_normal((1, 2, 4, 5)).astype(np.float32)
    a = F.interpolate(mg.tensor(x), scale_factor=1.7, mode="bilinear")
    b = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=1.7, mode="bilinear")
    assert a.dtype == mg.float32
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_negative_pads_in_every_mode_match_torch():
    """PyTorch crops for negative widths; reflect/replicate read the virtual coordinate j - left,
    circular crops first and wraps the cropped part."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    checked = 0
    for mode in ("reflect", "replicate", "circular", "constant"):
        for n in (4, 5):
            for lo in range(-3, 4):
                for hi in range(-3, 4):
                    x = np.arange(float(n)).reshape(1, 1, n) * 1.5
                    try:
                        want = torch.nn.functional.pad(torch.tensor(x), (lo, hi), mode=mode).numpy()
                    except RuntimeError:
                        continue
                    got = F.pad(mg.tensor(x), (lo, hi), mode=mode).numpy()
                    np.testing.assert_array_equal(got, want, err_msg=f"{mode} n={n} pad={(lo, hi)}")
                    checked += 1
    assert checked > 150
    # 2-D crops and pads at once, with gradients
    x = np.random.default_rng(7).standard_normal((1, 2, 5, 6))
    for mode in ("reflect", "replicate", "circular"):
        a = mg.tensor(x, requires_grad=True)
        t = torch.tensor(x, requires_grad=True)
        ya = F.pad(a, (2, -1, -2, 3), mode=mode)
        yt = torch.nn.functional.pad(t, (2, -1, -2, 3), mode=mode)
        np.testing.assert_array_equal(ya.detach().numpy(), yt.detach().numpy())
        (ya * ya).sum().backward()
        (yt * yt).sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_negative_pad_errors_name_the_op_and_shapes():
    x = mg.zeros(1, 1, 4)
    with pytest.raises(RuntimeError, match=r"pad: .*\(-3, -2\).*\(1, 1, 4\)"):
        F.pad(x, (-3, -2), mode="reflect")
    with pytest.raises(RuntimeError, match=r"pad: padding value causes wrapping around more than once"):
        F.pad(x, (-2, 3), mode="circular")
    with pytest.raises(RuntimeError, match="padding size should be less than"):
        F.pad(x, (4, -1), mode="reflect")


def test_pool_indices_are_torch_flat_indices_and_come_from_the_function():
    """The indices are an output of the pooling Function (a tracer records them), int64, and
    index the flat input plane as PyTorch's."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    x = np.random.default_rng(8).permutation(2 * 3 * 5 * 6 * 4).reshape(2, 3, 5, 6, 4) * 1.0
    out, idx = F.max_pool3d(mg.tensor(x), (3, 2, 3), stride=(2, 2, 1), padding=1, dilation=(1, 2, 1),
                            ceil_mode=True, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool3d(torch.tensor(x), (3, 2, 3), stride=(2, 2, 1), padding=1,
                                                dilation=(1, 2, 1), ceil_mode=True, return_indices=True)
    assert idx.dtype == mg.int64
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    np.testing.assert_array_equal(out.numpy(), tout.numpy())
    g = mg.graph.trace(lambda t: F.max_pool3d(t, 2, return_indices=True)[1], mg.tensor(x))
    x2 = x[:, :, ::-1].copy()
    np.testing.assert_array_equal(g(mg.tensor(x2)).numpy(),
                                  torch.nn.functional.max_pool3d(torch.tensor(x2), 2, return_indices=True)[1].numpy())


def test_max_pool_ties_and_nan_as_torch():
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    x = np.array([[[1.0, 1.0, 0.0, np.nan, 2.0, 2.0, 3.0, 3.0]]])
    a = mg.tensor(x, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    ya, ia = F.max_pool1d(a, 2, return_indices=True)
    yt, it = torch.nn.functional.max_pool1d(t, 2, return_indices=True)
    np.testing.assert_array_equal(ia.numpy(), it.numpy())
    np.testing.assert_array_equal(ya.detach().numpy(), yt.detach().numpy())
    ya.sum().backward()
    yt.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())


def test_max_unpool_output_size_rules():
    x4, idx4 = F.max_pool2d(mg.randn(1, 1, 4, 4), 2, return_indices=True)
    assert F.max_unpool2d(x4, idx4, 2).shape == (1, 1, 4, 4)
    x, idx = F.max_pool2d(mg.arange(25.0).reshape(1, 1, 5, 5), 2, return_indices=True)  # maxima at 6, 8, 16, 18
    assert F.max_unpool2d(x, idx, 2, output_size=(5, 5)).shape == (1, 1, 5, 5)
    assert F.max_unpool2d(x, idx, 2, output_size=(1, 1, 5, 4)).shape == (1, 1, 5, 4)
    with pytest.raises(ValueError, match=r'max_unpool2d: invalid output_size "\(6, 5\)" \(dim 0 must be between 2 and 6\)'):
        F.max_unpool2d(x, idx, 2, output_size=(6, 5))
    with pytest.raises(ValueError, match="2 or 4 elements"):
        F.max_unpool2d(x, idx, 2, output_size=(5, 5, 5))
    with pytest.raises(RuntimeError, match=r"max_unpool2d: found an invalid max index 16 \(output volumes are of size 4x4"):
        F.max_unpool2d(x, idx, 2)  # indices of a 5 x 5 plane do not fit the default 4 x 4
    with pytest.raises(RuntimeError, match=r"indices of shape \(1, 1, 2, 3\) must have the input's shape \(1, 1, 2, 2\)"):
        F.max_unpool2d(x, mg.zeros(1, 1, 2, 3, dtype=mg.int64), 2)


def test_conv_and_pool_errors_name_the_op_and_shapes():
    with pytest.raises(RuntimeError, match=r"conv1d: expected a 2-D \(C, L\) or 3-D \(N, C, L\) input, got shape \(2, 3, 4, 5\)"):
        F.conv1d(mg.zeros(2, 3, 4, 5), mg.zeros(1, 3, 2))
    with pytest.raises(RuntimeError, match=r"conv3d: input of spatial size \(2, 2, 2\) .* smaller than the \(dilated\) kernel \(3, 3, 3\)"):
        F.conv3d(mg.zeros(1, 1, 2, 2, 2), mg.zeros(1, 1, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"conv3d: input of shape \(1, 4, 3, 3, 3\) has 4 channels, but weight of shape \(2, 3, 1, 1, 1\)"):
        F.conv3d(mg.zeros(1, 4, 3, 3, 3), mg.zeros(2, 3, 1, 1, 1))
    with pytest.raises(RuntimeError, match=r"conv1d: weight must be 3-D"):
        F.conv1d(mg.zeros(1, 2, 5), mg.zeros(1, 2, 2, 2))
    with pytest.raises(RuntimeError, match="conv_transpose2d: output padding must be smaller than either stride or dilation"):
        F.conv_transpose2d(mg.zeros(1, 2, 3, 3), mg.zeros(2, 1, 3, 3), stride=2, output_padding=2)
    with pytest.raises(RuntimeError, match=r"conv_transpose1d: input of shape \(1, 3, 4\) has 3 channels, but weight of shape \(4, 1, 2\)"):
        F.conv_transpose1d(mg.zeros(1, 3, 4), mg.zeros(4, 1, 2))
    with pytest.raises(RuntimeError, match=r"conv_transpose1d: .*bias of shape \(3,\) must be \(4,\)"):
        F.conv_transpose1d(mg.zeros(1, 4, 4), mg.zeros(4, 2, 2), mg.zeros(3), groups=2)
    with pytest.raises(RuntimeError, match="max_pool3d: input of spatial size"):
        F.max_pool3d(mg.zeros(1, 1, 1, 4, 4), 2)
    with pytest.raises(RuntimeError, match="avg_pool1d: pad should be at most half of kernel size"):
        F.avg_pool1d(mg.zeros(1, 1, 8), 2, padding=2)
    with pytest.raises(NotImplementedError, match=r"interpolate: Got 3D input, but bilinear mode needs 4D input"):
        F.interpolate(mg.zeros(1, 1, 4), scale_factor=2, mode="bilinear")
    with pytest.raises(ValueError, match="align_corners option can only be set with the interpolating modes"):
        F.interpolate(mg.zeros(1, 1, 4), scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(mg.zeros(1, 1, 4), size=3, scale_factor=2)
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful with an explicit size"):
        F.interpolate(mg.zeros(1, 1, 4), size=3, recompute_scale_factor=True)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")


def test_unbatched_inputs_and_float32():
    w1, w2 = mg.randn(4, 3, 2), mg.randn(3, 2, 2, 2)
    for fn, shape in ((lambda x: F.conv1d(x, w1), (3, 6)),
                      (lambda x: F.conv_transpose2d(x, w2, stride=2), (3, 4, 4)),
                      (lambda x: F.max_pool3d(x, 2), (3, 4, 4, 4)), (lambda x: F.avg_pool1d(x, 2), (3, 6)),
                      (lambda x: F.adaptive_max_pool2d(x, 2), (3, 5, 5))):
        x = mg.randn(*shape)
        y, yb = fn(x), fn(x.unsqueeze(0))
        assert y.dtype == mg.float32
        np.testing.assert_allclose(y.numpy(), yb.squeeze(0).numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda x: F.conv1d(x, mg.ones(2, 3, 2)), lambda x: F.conv_transpose1d(x, mg.ones(3, 2, 2), stride=2),
    lambda x: F.max_pool1d(x, 2), lambda x: F.avg_pool1d(x, 2), lambda x: F.adaptive_max_pool1d(x, 2),
    lambda x: F.max_unpool1d(*F.max_pool1d(x, 2, return_indices=True), 2),
    lambda x: F.interpolate(x, scale_factor=2, mode="linear")], ids=[
    "conv1d", "conv_transpose1d", "max_pool1d", "avg_pool1d", "adaptive_max_pool1d", "max_unpool1d", "interpolate"])
def test_empty_batch_forward_and_backward(fn):
    x = mg.zeros(0, 3, 6, requires_grad=True)
    y = fn(x)
    assert y.shape[0] == 0
    y.sum().backward()
    assert x.grad.shape == (0, 3, 6)


def test_hardtanh_gradient_is_zero_at_both_ends_as_torch():
    """PyTorch's hardtanh_backward passes the gradient only strictly inside (min_val, max_val);
    relu6 is hardtanh(0, 6). NaN stays NaN with gradient 1, as PyTorch."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    x = [-3.0, -2.0, -0.5, 0.0, 1.5, 2.0, 6.0, float("nan")]
    for ours, theirs in ((lambda t: F.hardtanh(t, -2.0, 2.0), lambda t: torch.nn.functional.hardtanh(t, -2.0, 2.0)),
                         (lambda t: nn.Hardtanh(-2.0, 2.0)(t), lambda t: torch.nn.Hardtanh(-2.0, 2.0)(t)),
                         (F.relu6, torch.nn.functional.relu6)):
        a, t = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ya, yt = ours(a), theirs(t)
        np.testing.assert_array_equal(ya.detach().numpy(), yt.detach().numpy())
        ya.sum().backward()
        yt.sum().backward()
        np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())


def test_max_pool_nan_minus_inf_and_padding_only_windows_as_torch():
    """PyTorch's max pooling: the last NaN of a window wins (each NaN replaces the running max); a
    window whose values are all -inf keeps its first element's index; a window of padding only
    (dilation over a tiny input) gives -inf and PyTorch's index, and passes no gradient."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    nan, inf = float("nan"), float("inf")
    x = [[[nan, 1.0, nan, 2.0, -inf, -inf, 3.0, nan, nan, 0.0, -inf, -inf]]]
    for ours, theirs in ((lambda t: F.max_pool1d(t, 4, return_indices=True),
                          lambda t: torch.nn.functional.max_pool1d(t, 4, return_indices=True)),
                         (lambda t: F.max_pool1d(t, 3, 2, 1, return_indices=True),
                          lambda t: torch.nn.functional.max_pool1d(t, 3, 2, 1, return_indices=True)),
                         (lambda t: F.adaptive_max_pool1d(t, 5, return_indices=True),
                          lambda t: torch.nn.functional.adaptive_max_pool1d(t, 5, return_indices=True))):
        (a, ia), (b, ib) = ours(mg.tensor(x)), theirs(torch.tensor(x))
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_array_equal(ia.numpy(), ib.numpy())
    # the window at -1, 1 (dilation 2, padding 1) of a length-1 input holds padding only
    t = mg.tensor([[[1.0]]], requires_grad=True)
    out, idx = F.max_pool1d(t, 2, 1, 1, 2, return_indices=True)
    tout, tidx = torch.nn.functional.max_pool1d(torch.tensor([[[1.0]]]), 2, 1, 1, 2, return_indices=True)
    np.testing.assert_array_equal(out.detach().numpy(), tout.numpy())
    np.testing.assert_array_equal(idx.numpy(), tidx.numpy())
    out.sum().backward()
    assert t.grad.tolist() == [[[0.0]]]


def test_max_pool2d_all_minus_inf_window_with_padding_keeps_its_first_input_element():
    """max_pool2d's 2-D kernel (not the N-d one above): a window whose values are all -inf (or the
    integer minimum) kept offset 0, in the top/left padding: index -4 instead of PyTorch's 0, and
    its gradient was lost. Values are PyTorch 2.13's."""
    inf = np.inf
    x = np.full((1, 1, 3, 3), -inf)
    x[0, 0, 2, 2] = 1.0
    t = mg.tensor(x, requires_grad=True)
    out, idx = F.max_pool2d(t, 2, 2, 1, return_indices=True)
    np.testing.assert_array_equal(out.detach().numpy()[0, 0], [[-inf, -inf], [-inf, 1.0]])
    np.testing.assert_array_equal(idx.numpy()[0, 0], [[0, 1], [3, 8]])
    out.backward(mg.ones_like(out))
    np.testing.assert_array_equal(t.grad.numpy()[0, 0], [[1, 1, 0], [1, 0, 0], [0, 0, 1]])
    low = np.iinfo(np.int64).min
    _, idx = F.max_pool2d(mg.tensor(np.full((1, 1, 3, 3), low)), 2, 2, 1, return_indices=True)
    np.testing.assert_array_equal(idx.numpy()[0, 0], [[0, 1], [3, 4]])


def test_ceil_mode_kernel_may_overhang_a_short_input_as_torch():
    """PyTorch's pooling_output_shape: with ceil_mode a (dilated) kernel longer than the padded
    input still gives one window when its start is inside the input."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    x = np.arange(1.0, 9.0).reshape(1, 2, 4)
    cases = [(F.max_pool1d, torch.nn.functional.max_pool1d, (3, 3, 0, 2, True), 4),  # dilated kernel 5 > 4
             (F.avg_pool1d, torch.nn.functional.avg_pool1d, (3, 2, 0, True), 2),
             (F.avg_pool1d, torch.nn.functional.avg_pool1d, (3, 2, 1, True, False), 2)]
    for ours, theirs, args, L in cases:
        a = mg.tensor(x[..., :L], requires_grad=True)
        t = torch.tensor(x[..., :L], requires_grad=True)
        ya, yt = ours(a, *args), theirs(t, *args)
        np.testing.assert_allclose(ya.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
        ya.sum().backward()
        yt.sum().backward()
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="max_pool1d: .*the output would be empty"):
        F.max_pool1d(mg.zeros(1, 1, 4), 3, 3, 0, 2)  # without ceil_mode: no window fits


def test_random_configurations_match_torch():
    """A seeded sweep of conv/conv_transpose (1-3 d, groups, stride, padding, dilation,
    output_padding) and 1-d/3-d max/avg/adaptive-max pools (ceil_mode, padding, dilation): values,
    indices and gradients equal PyTorch's wherever PyTorch accepts the configuration."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    TF = torch.nn.functional
    rng = np.random.default_rng(123)
    checked = 0

    def padding_only(out, size, k, s, p, d):
        """Some window of the pooling lies entirely in the padding (dilation) along some dimension."""
        return any(not any(0 <= o * st - pd + j * dd < n for j in range(kk))
                   for m, n, kk, st, pd, dd in zip(out, size, k, s, p, d) for o in range(m))

    def compare(ours, theirs, arrays, pool=None):
        ts = [torch.tensor(a, requires_grad=True) for a in arrays]
        try:
            tout = theirs(*ts)
        except RuntimeError:
            return 0
        ms = [mg.tensor(a, requires_grad=True) for a in arrays]
        out = ours(*ms)
        (o, i), (to, ti) = (out, tout) if isinstance(out, tuple) else ((out, None), (tout, None))
        np.testing.assert_allclose(o.detach().numpy(), to.detach().numpy(), rtol=1e-10, atol=1e-12)
        if i is not None:
            np.testing.assert_array_equal(i.numpy(), ti.numpy())
        if pool is not None and padding_only(tuple(to.shape[2:]), *pool):
            return 1  # a window of padding only: PyTorch's backward writes out of bounds there
        g = rng.standard_normal(tuple(to.shape))
        gm = mg.autograd.grad(o, ms, mg.tensor(g))
        gt = torch.autograd.grad(to, ts, torch.tensor(g))
        for a, b in zip(gm, gt):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-12)
        return 1

    for _ in range(60):
        n, N, G = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
        Cin, Cout = G * int(rng.integers(1, 3)), G * int(rng.integers(1, 3))
        k, s, d = (tuple(int(v) for v in rng.integers(lo, hi, n)) for lo, hi in ((1, 4), (1, 4), (1, 3)))
        p, size = tuple(int(v) for v in rng.integers(0, 3, n)), tuple(int(v) for v in rng.integers(1, 7, n))
        op = tuple(int(rng.integers(0, max(a, b))) for a, b in zip(s, d))
        x = rng.standard_normal((N, Cin) + size)
        conv, convt = ("conv1d", "conv2d", "conv3d")[n - 1], ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d")[n - 1]
        wc, wt, b = rng.standard_normal((Cout, Cin // G) + k), rng.standard_normal((Cin, Cout // G) + k), rng.standard_normal(Cout)
        checked += compare(lambda x, w, b: getattr(F, conv)(x, w, b, s, p, d, G),
                           lambda x, w, b: getattr(TF, conv)(x, w, b, s, p, d, G), [x, wc, b])
        checked += compare(lambda x, w, b: getattr(F, convt)(x, w, b, s, p, op, G, d),
                           lambda x, w, b: getattr(TF, convt)(x, w, b, s, p, op, G, d), [x, wt, b])
        if n == 2:
            continue
        pk = tuple(int(v) for v in rng.integers(1, 4, n))
        pp, cm = tuple(int(rng.integers(0, kk // 2 + 1)) for kk in pk), bool(rng.integers(0, 2))
        xd = rng.permutation(x.size).reshape(x.shape) * 0.1  # no ties
        mp, ap, amp = (f"max_pool{n}d", f"avg_pool{n}d", f"adaptive_max_pool{n}d")
        checked += compare(lambda x: getattr(F, mp)(x, pk, s, pp, d, cm, True),
                           lambda x: getattr(TF, mp)(x, pk, s, pp, d, cm, True), [xd], (size, pk, s, pp, d))
        checked += compare(lambda x: getattr(F, ap)(x, pk, s, pp, cm, bool(d[0] - 1)),
                           lambda x: getattr(TF, ap)(x, pk, s, pp, cm, bool(d[0] - 1)), [x])
        osz = tuple(int(v) for v in rng.integers(1, 6, n))
        checked += compare(lambda x: getattr(F, amp)(x, osz, True), lambda x: getattr(TF, amp)(x, osz, True), [xd])
    assert checked > 150


def test_nearest_1d_3d_scale_near_one_values_as_torch_gradient_is_the_adjoint():
    """With scale_factor 1.0001 (out == in) PyTorch's 1-D/3-D nearest forward applies the scale
    (output j reads floor(j / 1.0001)) but its backward copies: not the forward's adjoint. Values
    equal PyTorch's; the gradient is the adjoint (gradcheck)."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    x = np.arange(5.0).reshape(1, 1, 5)
    np.testing.assert_array_equal(F.interpolate(mg.tensor(x), scale_factor=1.0001).numpy(),
                                  torch.nn.functional.interpolate(torch.tensor(x), scale_factor=1.0001).numpy())
    assert F.interpolate(mg.tensor(x), scale_factor=1.0001).numpy().ravel().tolist() == [0, 0, 1, 2, 3]
    t = mg.tensor(x, requires_grad=True)
    F.interpolate(t, scale_factor=1.0001).sum().backward()
    assert t.grad.numpy().ravel().tolist() == [2, 1, 1, 1, 0]
    assert mg.autograd.gradcheck(lambda a: F.interpolate(a, scale_factor=1.0001), (mg.tensor(x, requires_grad=True),))


@pytest.mark.parametrize("call", [
    lambda F_, x2, x1, x3: F_.max_pool1d(x1, 3, padding=2, dilation=2),   # pad > kernel/2 whatever the dilation
    lambda F_, x2, x1, x3: F_.max_pool3d(x3, 3, padding=2, dilation=2),
    lambda F_, x2, x1, x3: F_.max_pool2d(x2, 3, padding=2, dilation=2),
    lambda F_, x2, x1, x3: F_.max_pool2d(x2, 5, stride=2, padding=2, ceil_mode=True),  # kernel overhangs: allowed
    lambda F_, x2, x1, x3: F_.avg_pool2d(x2, 4, stride=3, padding=2, ceil_mode=True),
    lambda F_, x2, x1, x3: F_.avg_pool2d(x2, 2, divisor_override=0),
    lambda F_, x2, x1, x3: F_.conv2d(x2, x2[:1, :1, :2, :2], stride=0),
    lambda F_, x2, x1, x3: F_.conv2d(x2, x2[:1, :1, :2, :2], padding=-1),
])
def test_one_family_one_set_of_argument_rules_as_torch(call):
    """1-, 2- and 3-d pools and convolutions share one argument check and one geometry: each corner
    raises (RuntimeError) or gives the same values as PyTorch, whatever the number of dimensions."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in ((1, 1, 4, 4), (1, 1, 8), (1, 1, 8, 8, 8))]
    try:
        want = call(torch.nn.functional, *map(torch.tensor, arrays)).numpy()
    except RuntimeError:
        with pytest.raises(RuntimeError):
            call(F, *map(mg.tensor, arrays))
        return
    np.testing.assert_allclose(call(F, *map(mg.tensor, arrays)).numpy(), want, rtol=1e-12)


_NAN_CASES = [  # (n, shape, kwargs): the general path, and the 2x2 backend (2-D, 2x2 / stride 2 tiling)
    (1, (2, 3, 10), dict(kernel_size=4, stride=2, padding=1)),
    (1, (2, 3, 8), dict(kernel_size=2)),
    (2, (2, 3, 6, 8), dict(kernel_size=2)),
    (2, (2, 3, 7, 7), dict(kernel_size=3, stride=2, padding=1)),
    (2, (2, 3, 6, 8), dict(kernel_size=(2, 3), stride=1, dilation=(1, 2))),
    (3, (1, 2, 4, 4, 6), dict(kernel_size=2)),
    (3, (1, 2, 5, 5, 5), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)),
]


@pytest.mark.parametrize("use_numba", [True, False])
def test_max_pool_nan_windows_follow_torch(use_numba):
    """PyTorch's scan of a window: a value replaces the running maximum when it is greater or NaN, so a
    window with NaN gives NaN, the index of its last NaN and the gradient there, else the first
    maximum wins. The same on every path: 1-, 2- and 3-d, the 2x2 backend (numba or NumPy, a C-order
    or channel-major input, with or without indices) and the general one; forward, indices, the
    input gradient and the double backward (the gradient's gradient gathers at the same elements)."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    with kernels_enabled(use_numba):
        rng = np.random.default_rng(7)
        for j, (n, shape, kw) in enumerate(_NAN_CASES):
            dt = (np.float32, np.float64)[j % 2]
            x = rng.standard_normal(shape).astype(dt)
            k = kw["kernel_size"]
            x[rng.random(shape) < 0.6 / np.prod((k,) * n if np.ndim(k) == 0 else k)] = np.nan  # some windows
            x.flat[0] = x.flat[1] = np.nan  # two NaN in the first window
            layouts = [x] + ([x.transpose(1, 0, 2, 3).copy().transpose(1, 0, 2, 3)] if n == 2 else [])
            fn, tfn = getattr(F, f"max_pool{n}d"), getattr(torch.nn.functional, f"max_pool{n}d")
            tx = torch.tensor(x, requires_grad=True)
            tout, tidx = tfn(tx, return_indices=True, **kw)
            g = rng.standard_normal(tuple(tout.shape)).astype(dt)
            tg = torch.tensor(g, requires_grad=True)
            tdx, = torch.autograd.grad(tout, tx, tg, create_graph=True)
            v = rng.standard_normal(shape).astype(dt)
            tgg, = torch.autograd.grad(tdx, tg, torch.tensor(v))
            assert np.isnan(tout.detach().numpy()).any() and not np.isnan(tout.detach().numpy()).all()
            for a in layouts:
                for ri in (False, True):
                    mx = mg.from_numpy(a).requires_grad_()
                    r = fn(mx, return_indices=ri, **kw)
                    out = r[0] if ri else r
                    np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())  # NaN where NaN
                    if ri:
                        np.testing.assert_array_equal(r[1].numpy(), tidx.numpy())
                    mg_g = mg.tensor(g, requires_grad=True)
                    dx, = mg.autograd.grad(out, [mx], mg_g, create_graph=True)
                    np.testing.assert_array_equal(dx.detach().numpy(), tdx.detach().numpy())
                    gg, = mg.autograd.grad(dx, [mg_g], mg.tensor(v))
                    np.testing.assert_array_equal(gg.numpy(), tgg.numpy())


def test_max_pool_backward_is_torchs_bitwise():
    """The backward is PyTorch's: zeros (+0.0 where no maximum is), each window's gradient added in
    output order (overlapping windows sharing a maximum sum in the same order), an inf in g reaching
    its window's maximum only, for 1-, 2- and 3-d, with and without indices (the 2x2 backend
    multiplies g by its 0/1 choices: its zeros keep g's sign, tests/perf_kernels)."""
    torch = pytest.importorskip("torch", reason="PyTorch is the oracle")
    rng = np.random.default_rng(11)
    for n, shape, kw in [(1, (2, 2, 11), dict(kernel_size=3, stride=1, padding=1)),
                         (2, (2, 2, 9, 9), dict(kernel_size=3, stride=2, padding=1)),
                         (2, (2, 2, 9, 9), dict(kernel_size=3)),
                         (2, (2, 3, 5, 7), dict(kernel_size=2, ceil_mode=True)),
                         (3, (1, 2, 5, 5, 5), dict(kernel_size=3, stride=1, padding=1))]:
        x = rng.standard_normal(shape).astype(np.float32)
        x[..., 1::2] = np.round(x[..., 1::2])  # ties: the first maximum wins
        tx = torch.tensor(x, requires_grad=True)
        tout = getattr(torch.nn.functional, f"max_pool{n}d")(tx, **kw)
        g = rng.standard_normal(tuple(tout.shape)).astype(np.float32)
        g.flat[1] = np.inf  # reaches its window's maximum only
        tdx, = torch.autograd.grad(tout, tx, torch.tensor(g))
        for ri in (False, True):
            mx = mg.tensor(x, requires_grad=True)
            r = getattr(F, f"max_pool{n}d")(mx, return_indices=ri, **kw)
            dx, = mg.autograd.grad(r[0] if ri else r, [mx], mg.tensor(g))
            assert dx.numpy().tobytes() == tdx.numpy().tobytes()
