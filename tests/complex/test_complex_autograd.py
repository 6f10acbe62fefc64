"""Complex autograd with PyTorch's convention (the gradient is the conjugate Wirtinger derivative):
values, gradients, second derivatives and forward-mode tangents against PyTorch 2.13 (complex128,
tight), gradcheck on complex inputs, and the errors where PyTorch raises."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)


def _c(shape, rng=RNG):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _np(t):
    t = t.detach()
    return t.resolve_conj().numpy() if hasattr(t, "resolve_conj") and not isinstance(t, mg.Tensor) else t.numpy()


def _loss(lib, out, w):
    """A real loss weighting every output: sum(Re(conj(w) * out)) (sum(w * out) for a real out)."""
    wt = lib.tensor(w if np.iscomplexobj(np.asarray(out.detach())) else w.real)
    return (out * wt.conj()).real.sum() if out.is_complex() else (out * wt).sum()


def _compare(f, inputs, second=True):
    """f(lib, *tensors) in minigrad and torch: the values, the gradients and (second) the gradients
    of the gradients' norm, for leaves made from the NumPy inputs."""
    mi = [mg.tensor(a, requires_grad=True) for a in inputs]
    ti = [torch.tensor(a, requires_grad=True) for a in inputs]
    mo, to = f(mg, *mi), f(torch, *ti)
    assert mo.dtype.name == str(to.dtype).replace("torch.", "")
    np.testing.assert_allclose(_np(mo), _np(to), rtol=1e-12, atol=1e-12)
    w = _c(tuple(mo.shape))
    mg_g = mg.autograd.grad(_loss(mg, mo, w), mi, create_graph=second)
    t_g = torch.autograd.grad(_loss(torch, to, w), ti, create_graph=second)
    for a, b in zip(mg_g, t_g):
        assert a.dtype.name == str(b.dtype).replace("torch.", "")
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
    if second and any(g.requires_grad for g in t_g):
        ms = sum((g.abs() ** 2).sum() for g in mg_g)
        ts = sum((g.abs() ** 2).sum() for g in t_g)
        for a, b in zip(mg.autograd.grad(ms, mi, allow_unused=True), torch.autograd.grad(ts, ti, allow_unused=True)):
            if b is None:
                assert a is None or not np.any(_np(a))
            else:
                np.testing.assert_allclose(_np(a), _np(b), rtol=1e-9, atol=1e-10)


UNARY = {
    "neg": lambda m, z: -z, "exp": lambda m, z: m.exp(z), "log": lambda m, z: m.log(z),
    "sqrt": lambda m, z: m.sqrt(z), "sin": lambda m, z: m.sin(z), "cos": lambda m, z: m.cos(z),
    "tan": lambda m, z: m.tan(z), "tanh": lambda m, z: m.tanh(z), "sinh": lambda m, z: m.sinh(z),
    "cosh": lambda m, z: m.cosh(z), "expm1": lambda m, z: m.expm1(z), "log1p": lambda m, z: m.log1p(z),
    "rsqrt": lambda m, z: m.rsqrt(z), "reciprocal": lambda m, z: m.reciprocal(z), "square": lambda m, z: m.square(z),
    "abs": lambda m, z: m.abs(z), "angle": lambda m, z: m.angle(z), "sgn": lambda m, z: m.sgn(z),
    "real": lambda m, z: m.real(z) * 1.0, "imag": lambda m, z: m.imag(z) * 1.0, "conj": lambda m, z: m.conj(z) * 1.0,
    "conj_physical": lambda m, z: m.conj_physical(z), "pow_scalar": lambda m, z: z ** 2.5,
    "pow_complex_scalar": lambda m, z: z ** (1.5 - 0.5j), "rpow": lambda m, z: 2.0 ** z,
    "sum": lambda m, z: z.sum(0), "mean": lambda m, z: z.mean(), "prod": lambda m, z: z.prod(1),
    "view_as_real": lambda m, z: m.view_as_real(z * 1.0), "reshape": lambda m, z: z.reshape(3, 2).T * 1.0,
    "transpose_permute": lambda m, z: z.transpose(0, 1).permute(1, 0) * 1.0,
    "index": lambda m, z: z[1, ::2] * z[0, m.tensor([2, 0])], "flip_roll": lambda m, z: m.roll(z.flip(0), 1, 1) * 1.0,
    "mH": lambda m, z: z.mH @ z, "cast_down": lambda m, z: z.to(m.complex64).to(m.complex128) * 1.0,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_gradients_and_second_derivatives(name):
    _compare(UNARY[name], [_c((2, 3))])


BINARY = {
    "add": lambda m, a, b: a + b, "sub": lambda m, a, b: a - b, "mul": lambda m, a, b: a * b,
    "div": lambda m, a, b: a / b, "pow": lambda m, a, b: a ** b, "matmul": lambda m, a, b: a @ b.T,
    "cat": lambda m, a, b: m.cat([a, b * a], 1), "stack": lambda m, a, b: m.stack([a, b]).sum(1) * a[0],
    "einsum": lambda m, a, b: m.einsum("ij,kj->ik", a, b), "where": lambda m, a, b: m.where(a.real > 0, a, b),
    "rsub": lambda m, a, b: 2.0 - a * b,
}


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_values_gradients_and_second_derivatives(name):
    _compare(BINARY[name], [_c((2, 3)), _c((2, 3))])


MIXED = {  # real and complex operands: a real leaf's gradient is the real part
    "mul": lambda m, x, z: x * z, "div": lambda m, x, z: z / x, "add_broadcast": lambda m, x, z: x[0] + z,
    "polar": lambda m, x, z: m.polar(x.abs() + 0.1, x) * z, "complex": lambda m, x, z: m.complex(x, x * x) * z,
    "view_as_complex": lambda m, x, z: m.view_as_complex(m.stack([x, x.exp()], -1)) * z,
    "python_complex": lambda m, x, z: (x * (2 - 1j)) * z,
    "cast": lambda m, x, z: x.to(m.complex128) * z,
}


@pytest.mark.parametrize("name", sorted(MIXED))
def test_real_and_complex_operands(name):
    # (polar's second derivative takes PyTorch 3 s to build; gradgradcheck checks minigrad's below)
    _compare(MIXED[name], [RNG.standard_normal((2, 3)), _c((2, 3))], second=name != "polar")


def test_holomorphic_gradient_is_the_conjugate_derivative():
    z = mg.tensor([0.5 + 1j, -1 + 0.25j], dtype=mg.complex128, requires_grad=True)
    (z * z).real.sum().backward()  # d Re(z^2) = Re(2z dz): gradient conj(2z)
    np.testing.assert_allclose(z.grad.numpy(), np.conj(2 * z.detach().numpy()))


def test_complex64_stays_complex64():
    z = mg.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    x = mg.tensor([0.5, 2.0], requires_grad=True)
    (mg.exp(z) * x).abs().sum().backward()
    assert z.grad.dtype == mg.complex64 and x.grad.dtype == mg.float32


def test_backward_of_a_complex_loss_raises_as_pytorch():
    z = mg.tensor([1 + 2j], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar outputs"):
        (z * z).sum().backward()
    g = mg.tensor([1 - 1j])
    (z * z).backward(g)  # an explicit gradient is fine: the vector-Jacobian product with conj convention
    zt = torch.tensor([1 + 2j], requires_grad=True)
    (zt * zt).backward(torch.tensor([1 - 1j]))
    np.testing.assert_allclose(z.grad.numpy(), zt.grad.numpy(), rtol=1e-6)


def test_linear_on_complex_as_pytorch():
    """F.linear / nn.Linear with complex weights (the fused Addmm is real calculus in NumPy: complex
    goes through matmul), values, gradients and second derivatives against torch."""
    _compare(lambda L, x, w, b: L.nn.functional.linear(x, w, b), [_c((3, 4)), _c((2, 4)), _c((2,))])
    _compare(lambda L, x, w: L.nn.functional.linear(x, w), [_c((5, 3, 4)), _c((2, 4))])
    lin = mg.nn.Linear(4, 2, dtype=mg.complex128)
    assert lin(mg.tensor(_c((3, 4)))).dtype == mg.complex128


@pytest.mark.parametrize("dim", [0, 1, (0, 1)])
def test_logsumexp_on_complex_as_pytorch(dim):
    """Shifted by the max of the real parts, as PyTorch's (the principal log)."""
    _compare(lambda L, z: L.logsumexp(z, dim), [_c((3, 4)) * 3])


@pytest.mark.parametrize("w", ["tensor", 0.3, 0.7])
def test_lerp_and_addcdiv_on_complex_as_pytorch(w):
    if w == "tensor":
        _compare(lambda L, a, b, t: L.lerp(a, b, t), [_c((2, 3)), _c((2, 3)), _c((2, 3))])
    else:
        _compare(lambda L, a, b: L.lerp(a, b, w), [_c((2, 3)), _c((2, 3))])
    _compare(lambda L, x, a, b: L.addcdiv(x, a, b + 3, value=w if w != "tensor" else 1), [_c((3,)), _c((3,)), _c((3,))])


@pytest.mark.parametrize("op", [lambda z: mg.amax(z, 0), lambda z: mg.relu(z * 1),
                                lambda z: mg.nn.functional.softmax(z, 0)])
def test_an_op_not_marked_complex_raises_naming_it(op):
    z = mg.tensor([1 + 2j, 2 - 1j], requires_grad=True)
    with pytest.raises(RuntimeError, match="is not implemented in minigrad.*complex|complex"):
        op(z)
    with mg.no_grad():  # nothing recorded: no refusal (the forward is NumPy's)
        try:
            op(z)
        except RuntimeError as e:
            assert "gradient" not in str(e)


def test_unmarked_error_names_the_op():
    with pytest.raises(RuntimeError, match="^softmax: the gradient of this op for complex tensors"):
        mg.nn.functional.softmax(mg.tensor([1 + 2j], requires_grad=True), 0)


def test_custom_function_records_complex_as_pytorch():
    class Square(mg.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            z, = ctx.saved_tensors
            return g * (2 * z).conj()
    z = mg.tensor([1 + 1j], dtype=mg.complex128, requires_grad=True)
    Square.apply(z).real.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [2 - 2j])


# -- gradcheck on complex inputs -------------------------------------------------------------------
def test_gradcheck_and_gradgradcheck_on_complex_inputs_and_outputs():
    z = mg.tensor(_c((2, 2)), requires_grad=True)
    w = mg.tensor(_c((2, 2)), requires_grad=True)
    x = mg.tensor(RNG.standard_normal((2, 2)), requires_grad=True)
    for f in (lambda z, w, x: z * w / (x + 3.0), lambda z, w, x: (mg.exp(z) @ w).abs(),
              lambda z, w, x: mg.polar(x.abs() + 0.5, x) * z.conj(), lambda z, w, x: (z ** w).angle(),
              lambda z, w, x: mg.view_as_real(mg.sqrt(z) * x)):
        assert mg.autograd.gradcheck(f, (z, w, x))
        assert mg.autograd.gradgradcheck(f, (z, w, x))


def test_gradcheck_catches_a_backward_without_the_conjugate():
    class NoConj(mg.autograd.Function):
        @staticmethod
        def forward(ctx, z):
            ctx.save_for_backward(z)
            return z * z

        @staticmethod
        def backward(ctx, g):
            z, = ctx.saved_tensors
            return g * 2 * z  # real calculus: right for real z, wrong for complex
    z = mg.tensor(_c(3), requires_grad=True)
    assert mg.autograd.gradcheck(lambda z: NoConj.apply(z), (mg.tensor(RNG.standard_normal(3), requires_grad=True),))
    assert not mg.autograd.gradcheck(lambda z: NoConj.apply(z), (z,), raise_exception=False)
    with pytest.raises(mg.autograd.gradcheck_module.GradcheckError if hasattr(mg.autograd, "gradcheck_module")
                       else RuntimeError, match="Jacobian mismatch"):
        mg.autograd.gradcheck(lambda z: NoConj.apply(z), (z,))


# -- forward mode --------------------------------------------------------------------------------------
# (real, imag, conj, view_as_real: checked by hand below; PyTorch takes 1.5-3 s to build its first JVP of each)
JVP = ["exp", "abs", "angle", "sgn", "prod", "pow_complex_scalar", "mH"]


@pytest.mark.parametrize("name", JVP)
def test_jvp_matches_torch(name):
    f = UNARY[name]
    z, t = _c((2, 3)), _c((2, 3))
    mo, mt = mg.func.jvp(lambda a: f(mg, a), (mg.tensor(z),), (mg.tensor(t),))
    to, tt = torch.func.jvp(lambda a: f(torch, a), (torch.tensor(z),), (torch.tensor(t),))
    np.testing.assert_allclose(_np(mo), _np(to), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(mt), _np(tt), rtol=1e-10, atol=1e-12)


def test_jvp_of_the_parts():
    z, t = _c(3), _c(3)
    _, tr = mg.func.jvp(lambda a: a.real, (mg.tensor(z),), (mg.tensor(t),))
    _, ti = mg.func.jvp(lambda a: a.imag, (mg.tensor(z),), (mg.tensor(t),))
    np.testing.assert_array_equal(tr.numpy(), t.real)
    np.testing.assert_array_equal(ti.numpy(), t.imag)
    _, tc = mg.func.jvp(lambda a: a.conj() * 1.0, (mg.tensor(z),), (mg.tensor(t),))
    np.testing.assert_array_equal(tc.numpy(), np.conj(t))
    _, tv = mg.func.jvp(lambda a: mg.view_as_real(a), (mg.tensor(z),), (mg.tensor(t),))
    np.testing.assert_array_equal(tv.numpy(), np.stack([t.real, t.imag], -1))


def test_jvp_of_the_complex_constructors():
    """By hand (PyTorch's first JVP of each costs seconds): the tangents of polar, complex and
    view_as_complex of real inputs."""
    x, tx = RNG.standard_normal(3), RNG.standard_normal(3)
    r = np.abs(x) + 1
    want = {
        "polar": np.exp(1j * x) * np.sign(x) * tx + 1j * r * np.exp(1j * x) * tx,
        "complex": tx + 1j * 2 * x * tx,
        "view_as_complex": (tx - 1j * tx) * (1 + 2j),
    }
    fs = {"polar": lambda a: mg.polar(a.abs() + 1, a), "complex": lambda a: mg.complex(a, a * a),
          "view_as_complex": lambda a: mg.view_as_complex(mg.stack([a, -a], -1)) * (1 + 2j)}
    for name, f in fs.items():
        _, t = mg.func.jvp(f, (mg.tensor(x),), (mg.tensor(tx),))
        np.testing.assert_allclose(t.numpy(), want[name], rtol=1e-12, err_msg=name)


def test_dual_tensors_take_complex_primals():
    with mg.autograd.forward_ad.dual_level():
        d = mg.autograd.forward_ad.make_dual(mg.tensor(_c(2)), mg.tensor(_c(2)))
        assert mg.autograd.forward_ad.unpack_dual(mg.exp(d)).tangent.dtype == mg.complex128
