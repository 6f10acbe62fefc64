"""Registry entries of the complex-number ops (ops/complex.py) and linalg.eig/eigvals.

The registry's tests hand real float leaves to the ops and compare real results; each entry here
reads its complex inputs from real ones of shape (..., 2) (`view_as_complex`) and returns a complex
result as its parts (`view_as_real`), in minigrad and in PyTorch alike. So every generated test
(forward, gradcheck, gradgradcheck, PyTorch's values and gradients, JVP, vmap, trace) runs through
the complex op in the middle, with PyTorch's convention checked end to end. tests/complex has the
direct tests (complex leaves, the FFT, promotion, printing).
"""
import numpy as np

import minigrad as mg

from .core import OpInfo, SampleInput, nonzero, positive, sample, samples

_SHAPES = [(2,), (3, 2), (2, 3, 2)]  # a 0-d, a (3,) and a (2, 3) complex tensor


def _np_c(x):
    return x[..., 0] + 1j * x[..., 1]


def _np_r(z):
    z = np.asarray(z)
    return np.stack([z.real, z.imag], -1) if np.iscomplexobj(z) else z


def _as_parts(m, z):
    """A complex result as its real parts (a real one as it is)."""
    if isinstance(z, tuple):
        return tuple(_as_parts(m, o) for o in z)
    if not z.is_complex():
        return z
    return m.view_as_real(z.resolve_conj())


def _parts_samples(n, sampler=sample, shapes=_SHAPES):
    return samples(lambda rng: [SampleInput(tuple(sampler(s, rng) for _ in range(n))) for s in shapes])


def _entry(name, f, ref, n=1, sampler=sample, **kw):
    """An entry for f(m, *complex inputs) with m the module (minigrad or torch)."""
    def op(*xs):
        return _as_parts(mg, f(mg, *[mg.view_as_complex(x) for x in xs]))

    def torch_op(torch, *xs):
        return _as_parts(torch, f(torch, *[torch.view_as_complex(x) for x in xs]))

    def np_ref(*xs):
        return _np_r(ref(*[_np_c(x) for x in xs]))
    kw.setdefault("grad_fn", None)  # (a composite: the last op's node)
    return OpInfo(name, op, np_ref, _parts_samples(n, sampler), torch_op=torch_op, **kw)


def _real_pair(name, f, ref, sampler_a=sample, sampler_b=sample, **kw):
    """An entry for f(m, a, b) of two real inputs giving a complex result (polar, complex)."""
    def gen(rng):
        return [SampleInput((sampler_a(s, rng), sampler_b(s, rng))) for s in [(), (3,), (2, 3)]]
    return OpInfo(name, lambda a, b: _as_parts(mg, f(mg, a, b)), lambda a, b: _np_r(ref(a, b)), gen,
                  torch_op=lambda torch, a, b: _as_parts(torch, f(torch, a, b)), grad_fn=None, **kw)


def _np_sgn(z):
    r = np.abs(z)
    return np.where(r == 0, 0, z / np.where(r == 0, 1, r))


def _square(shape, rng):
    return sample(shape, rng) + np.eye(shape[-1]) * 0.5


def _eig_samples(rng):
    return [SampleInput((_square(s, rng),)) for s in [(3, 3), (2, 2, 2)]]


ops = [
    _entry("real", lambda m, z: z.real * 1.0, lambda z: z.real),
    _entry("real", lambda m, z: m.real(z) * 1.0, lambda z: z.real, variant="function"),
    _entry("imag", lambda m, z: m.imag(z) * 1.0, lambda z: z.imag),
    _entry("conj", lambda m, z: m.conj(z) * 1.0, np.conj),
    _entry("conj_physical", lambda m, z: m.conj_physical(z), np.conj),
    _entry("resolve_conj", lambda m, z: m.resolve_conj(m.conj(z)), np.conj),
    _entry("angle", lambda m, z: m.angle(z), np.angle, sampler=nonzero),
    _entry("sgn", lambda m, z: m.sgn(z), _np_sgn, sampler=nonzero),
    _entry("view_as_real", lambda m, z: m.view_as_real(z * 1.0), lambda z: z),
    _entry("view_as_complex", lambda m, z: m.view_as_complex(m.view_as_real(z) * 2.0), lambda z: 2 * z),
    _real_pair("polar", lambda m, a, b: m.polar(a, b), lambda a, b: a * np.exp(1j * b), positive),
    _real_pair("complex", lambda m, a, b: m.complex(a, b), lambda a, b: a + 1j * b),
    OpInfo("isreal", lambda x: mg.isreal(mg.view_as_complex(x)), lambda x: _np_c(x).imag == 0,
           samples(SampleInput((np.array([[1.0, 0.0], [2.0, 0.5], [0.0, -0.0]]),))), supports_grad=False,
           torch_op=lambda torch, x: torch.isreal(torch.view_as_complex(x)), grad_fn=None),
    OpInfo("is_complex", lambda x: mg.is_complex(mg.view_as_complex(x)), lambda x: True,
           samples(SampleInput((np.ones((3, 2)),))), supports_grad=False,
           torch_op=lambda torch, x: torch.is_complex(torch.view_as_complex(x)), grad_fn=None),
    OpInfo("is_conj", lambda x: mg.is_conj(mg.conj(mg.view_as_complex(x))), lambda x: True,
           samples(SampleInput((np.ones((3, 2)),))), supports_grad=False,
           torch_op=lambda torch, x: torch.is_conj(torch.conj(torch.view_as_complex(x))), grad_fn=None),
    # eig: eigenvalues, and |V|^2 (the eigenvectors' phase is arbitrary: only losses blind to it
    # have a gradient, PyTorch's note); LAPACK's order, the same in NumPy and PyTorch
    OpInfo("linalg.eig", lambda A: (_as_parts(mg, mg.linalg.eig(A)[0]), mg.linalg.eig(A)[1].abs() ** 2),
           lambda A: (_np_r(np.linalg.eig(A)[0]), np.abs(np.linalg.eig(A)[1]) ** 2), _eig_samples,
           torch_op=lambda torch, A: (_as_parts(torch, torch.linalg.eig(A)[0]), torch.linalg.eig(A)[1].abs() ** 2),
           grad_fn=None, atol=1e-4, fwd_rtol=1e-6, fwd_atol=1e-6),
    OpInfo("linalg.eigvals", lambda A: _as_parts(mg, mg.linalg.eigvals(A)),
           lambda A: _np_r(np.linalg.eigvals(A)), _eig_samples,
           torch_op=lambda torch, A: _as_parts(torch, torch.linalg.eigvals(A)), grad_fn=None,
           fwd_rtol=1e-6, fwd_atol=1e-6),
]
