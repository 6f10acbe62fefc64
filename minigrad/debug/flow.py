"""Gradient flow, seen: `mg.debug.gradient_flow(model)` records how large the gradients are per layer
and, through a recurrence, per time step, and warns when they vanish or explode.

Vanishing and exploding gradients are diagnosed by inspecting how gradients flow through the graph.
While the recorder is open it puts forward hooks on every submodule of the model:

  * per layer (each named module that runs): the norm of d loss / d output (a tensor hook on the
    module's output) and, after backward, the norm of its own parameters' ``.grad``;
  * per time step, for a module whose input has a time dimension (nn.RNN / nn.LSTM / nn.GRU, by
    their ``batch_first``; or any module named in ``time_dims``): the norm of d loss / d input_t for
    each step t. The module's input is passed on through an identity view (of a fresh leaf with the
    same values when it does not require grad), and a tensor hook on that view sees the
    gradient of the input of this call only, including every path through the recurrence: a tanh
    RNN shows it shrinking toward the early steps.

The numbers the model computes are unchanged (the views are identities, the hooks only read). After
the backward (the "backward" event of Tensor.backward; or at report() / the end of the block when
gradients came from mg.autograd.grad), the findings are checked against the thresholds, and one
GradientFlowWarning per kind (vanishing, exploding) names the layer, the step and the line of the
user's code that called the module.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..autograd import observers as _observers
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..tensor import Tensor
from ._sites import fmt, user_site
from .._optional import install_hint

__all__ = ["gradient_flow", "GradientFlow", "GradientFlowWarning", "LayerFlow"]

_RECURRENT = ("RNN", "LSTM", "GRU")


class GradientFlowWarning(UserWarning):
    """Gradients that vanish or explode, found by mg.debug.gradient_flow()."""


def _norm(a):
    a = np.asarray(a, dtype=np.float64)
    return float(np.sqrt(np.sum(a * a))) if a.size else 0.0


def _first_tensor(out):
    if isinstance(out, Tensor):
        return out
    if isinstance(out, (tuple, list)):
        for o in out:
            if isinstance(o, Tensor):
                return o
    return None


class LayerFlow:
    """What the recorder saw of one named module in the last recorded pass.

    Attributes:
        name (str): the module's name in the model ("" is the model itself).
        kind (str): the module's class name.
        site: where the user's code called it (``site_text`` is "file:line").
        calls (int): how many times it ran in the pass.
        output_grad_norm (float or None): the norm of d loss / d output over all calls (None: no
            gradient reached its output).
        param_grad_norm (float or None): the norm of its own parameters' ``.grad`` (None: it has no
            parameter with a gradient).
        time_dim (int or None): the time dimension of its input, for a module seen per step.
        step_norms (ndarray or None): the norm of d loss / d input_t for each step t (over the batch
            and features), for a module seen per step (of its last call).
    """

    def __init__(self, name, module):
        self.name, self.module, self.kind = name, module, type(module).__name__
        self.site = None
        self.calls = 0
        self._out_sq = None
        self.param_grad_norm = None
        self.time_dim = None
        self.step_norms = None

    @property
    def label(self):
        """The layer's name in the model, or its kind in parentheses for an unnamed one."""
        return self.name or f"({self.kind})"

    @property
    def site_text(self):
        """Where the layer was called, as ``file:line``."""
        return fmt(self.site)

    @property
    def output_grad_norm(self):
        """The L2 norm of the gradient that reached the layer's output (None if none did)."""
        return None if self._out_sq is None else math.sqrt(self._out_sq)

    def __repr__(self):
        steps = None if self.step_norms is None else len(self.step_norms)
        return (f"LayerFlow({self.label!r}, {self.kind}, output_grad_norm={self.output_grad_norm}, "
                f"param_grad_norm={self.param_grad_norm}, steps={steps})")


class GradientFlow:
    """The recorder `mg.debug.gradient_flow(model)` returns: a context manager.

    Inside the ``with`` block, run forward and backward as usual; afterwards (or during it, after a
    backward) ``layers`` holds a [`LayerFlow`][minigrad.debug.LayerFlow] per module that ran, ``findings`` the
    vanishing / exploding gradients found, ``report()`` (or ``str()``) the text and ``plot()`` a matplotlib
    figure. A forward run after a backward starts a new pass: the recorder keeps the last one.

    Args:
        model (nn.Module): the model whose submodules are watched.
        time_dims (dict, optional): ``{module or name: dim}``: modules to see per time step, with
            the time dimension of their input (nn.RNN / nn.LSTM / nn.GRU are found by themselves:
            dim 0, or 1 with ``batch_first=True``).
        vanish_ratio (float): through time, vanishing when the first step's norm is below this
            times the last step's; across layers, when a layer's parameter gradient norm is below
            this times the largest layer's. Default: 1e-3.
        vanish_below (float): vanishing when a layer's parameter gradient norm is below this.
            Default: 1e-10.
        explode_ratio (float): exploding through time when the first step's norm is above this
            times the last step's. Default: 1e3.
        explode_above (float): exploding when any recorded norm is above this (or not finite).
            Default: 1e4.
        warn (bool): issue a [`GradientFlowWarning`][minigrad.debug.GradientFlowWarning] once per kind.
            Default: ``True``.
    """

    def __init__(self, model, *, time_dims=None, vanish_ratio=1e-3, vanish_below=1e-10, explode_ratio=1e3,
                 explode_above=1e4, warn=True):
        from ..nn.modules.module import Module
        if not isinstance(model, Module):
            raise TypeError(f"gradient_flow: expected an nn.Module, got {type(model).__name__}")
        self.model = model
        self.vanish_ratio, self.vanish_below = float(vanish_ratio), float(vanish_below)
        self.explode_ratio, self.explode_above = float(explode_ratio), float(explode_above)
        self.warn = warn
        self._names = {}
        for name, m in model.named_modules():
            self._names.setdefault(id(m), name)
        by_name = {n: m for n, m in model.named_modules()}
        self._time_dims = {}
        for k, d in (time_dims or {}).items():
            m = by_name.get(k) if isinstance(k, str) else k
            if m is None or id(m) not in self._names:
                raise ValueError(f"gradient_flow: time_dims names {k!r}, which is not a module of the model "
                                 f"(its modules: {sorted(by_name)[:8]}...)")
            self._time_dims[id(m)] = int(d)
        self.layers = {}
        self.findings = []
        self._handles = []
        self._pending = False      # gradients arrived since the last check
        self._dirty = False        # something recorded since the last check
        self._passes = 0
        self._warned = set()

    # -- recording ------------------------------------------------------------------------------
    def __enter__(self):
        for name, m in self.model.named_modules():
            self._handles.append(m.register_forward_pre_hook(self._pre_hook))
            self._handles.append(m.register_forward_hook(self._post_hook))
        self._handles.append(_observers.register("backward", self._on_backward))
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles = []
        if exc[0] is None:
            self._check()
        return False

    def _time_dim(self, module, x):
        d = self._time_dims.get(id(module))
        if d is not None:
            return d % x.ndim if x.ndim else None
        if type(module).__name__ in _RECURRENT and hasattr(module, "batch_first"):
            if x.ndim == 3:
                return 1 if module.batch_first else 0
            return 0 if x.ndim == 2 else None    # unbatched (T, F)
        return None

    def _layer(self, module):
        lf = self.layers.get(id(module))
        if lf is None:
            lf = self.layers[id(module)] = LayerFlow(self._names.get(id(module), "?"), module)
        return lf

    def _pre_hook(self, module, args):
        if self._pending:      # a forward after a backward: check that pass, start a new one
            self._check()
            self.layers = {}
        lf = self._layer(module)
        lf.calls += 1
        self._dirty = True
        if lf.site is None:
            lf.site = user_site(1)
        if not args or not isinstance(args[0], Tensor) or not is_grad_enabled():
            return None
        x = args[0]
        td = self._time_dim(module, x)
        if td is None or x.dtype.kind != "f":
            return None
        with enable_grad():
            # an identity node the hook can watch (the graph keeps it alive until backward): of x (the
            # gradient to x is unchanged), or, when x needs no gradient, of a fresh leaf with x's values
            # (nothing upstream to reach)
            from ..autograd.forward_ad import Alias
            xv = Alias.apply(x if x.requires_grad else x.detach().requires_grad_(True))
        lf.time_dim = td

        def hook(g, lf=lf, td=td):
            a = np.moveaxis(g._data.astype(np.float64, copy=False), td, 0)
            lf.step_norms = np.sqrt(np.square(a).reshape(a.shape[0], -1).sum(axis=1))
            self._pending = self._dirty = True
        xv.register_hook(hook)
        return (xv,) + tuple(args[1:])

    def _post_hook(self, module, args, output):
        out = _first_tensor(output)
        if out is None or not out.requires_grad:
            return None
        lf = self._layer(module)

        def hook(g, lf=lf):
            n = _norm(g._data)
            lf._out_sq = (lf._out_sq or 0.0) + n * n
            self._pending = self._dirty = True
        out.register_hook(hook)
        return None

    def _on_backward(self, tensor, phase):
        if phase == "end" and self._pending:
            self._check()

    # -- findings -------------------------------------------------------------------------------
    def _param_norms(self):
        for lf in self.layers.values():
            gs = [p.grad._data for p in lf.module.parameters(recurse=False) if p.grad is not None]
            lf.param_grad_norm = math.sqrt(sum(_norm(g) ** 2 for g in gs)) if gs else None

    def _check(self):
        """Compute the parameter norms of the pass and its findings; warn once per kind."""
        if not self._dirty:
            return
        self._pending = self._dirty = False
        self._passes += 1
        self._param_norms()
        found = []
        layers = list(self.layers.values())
        for lf in layers:
            for what, v in (("d loss / d output", lf.output_grad_norm), ("parameter gradient", lf.param_grad_norm)):
                if v is not None and (not math.isfinite(v) or v > self.explode_above):
                    found.append(("exploding", lf, None, v, f"its {what} norm is {v:.3g}"
                                  + ("" if not math.isfinite(v) else f" (above {self.explode_above:g})")))
            s = lf.step_norms
            if s is not None and len(s) > 1:
                first, last = float(s[0]), float(s[-1])
                bad = np.flatnonzero(~np.isfinite(s))
                if bad.size:
                    found.append(("exploding", lf, int(bad[0]), float(s[bad[0]]),
                                  f"d loss / d input at step {int(bad[0])} is {s[bad[0]]}"))
                elif last > 0 and first < self.vanish_ratio * last:
                    t = int(np.flatnonzero(s >= self.vanish_ratio * last)[0]) - 1   # the latest step below
                    found.append(("vanishing", lf, t, first,
                                  f"d loss / d input_t falls below {self.vanish_ratio:g} x the last step's "
                                  f"({last:.3g}) at step {t} and earlier (step 0: {first:.3g}, "
                                  f"{len(s)} steps, time dim {lf.time_dim})"))
                elif last > 0 and first > self.explode_ratio * last or (last == 0 and first > 0):
                    t = int(np.flatnonzero(s > self.explode_ratio * last)[-1])
                    found.append(("exploding", lf, t, first,
                                  f"d loss / d input_t grows above {self.explode_ratio:g} x the last step's "
                                  f"({last:.3g}) at step {t} and earlier (step 0: {first:.3g}, "
                                  f"{len(s)} steps, time dim {lf.time_dim})"))
                elif float(s.max()) > self.explode_above:
                    t = int(np.argmax(s))
                    found.append(("exploding", lf, t, float(s[t]),
                                  f"d loss / d input at step {t} is {s[t]:.3g} (above {self.explode_above:g})"))
        with_params = [lf for lf in layers if lf.param_grad_norm is not None]
        if with_params:
            top = max(lf.param_grad_norm for lf in with_params)
            for lf in with_params:
                v = lf.param_grad_norm
                if v < self.vanish_below:
                    found.append(("vanishing", lf, None, v, f"its parameter gradient norm is {v:.3g} "
                                  f"(below {self.vanish_below:g})"))
                elif v < self.vanish_ratio * top and not any(f[0] == "exploding" for f in found):
                    # (relative to the largest layer only while nothing explodes: next to an exploding
                    # layer every other one looks small)
                    big = max(with_params, key=lambda m: m.param_grad_norm)
                    found.append(("vanishing", lf, None, v, f"its parameter gradient norm is {v:.3g}, below "
                                  f"{self.vanish_ratio:g} x that of {big.label!r} ({top:.3g})"))
        self.findings = [_Finding(*f) for f in found]
        if self.warn:
            for kind in ("vanishing", "exploding"):
                mine = [f for f in self.findings if f.kind == kind]
                if mine and kind not in self._warned:
                    self._warned.add(kind)
                    f = mine[0]
                    more = f" ({len(mine) - 1} more: see .report())" if len(mine) > 1 else ""
                    msg = (f"gradients {kind}: layer {f.layer!r} ({f.module_kind}, called at {fmt(f.site)}"
                           f"{'' if f.step is None else f', step {f.step}'}): {f.detail}{more}")
                    site = f.site
                    warnings.warn_explicit(msg, GradientFlowWarning, site[0].co_filename if site else "<unknown>",
                                           site[1] if site else 0)

    # -- output ---------------------------------------------------------------------------------
    def report(self):
        """The per-layer table, the per-step norms of the modules seen through time, and the findings."""
        self._check()
        if not self.layers:
            return "gradient flow: nothing recorded (run forward and backward inside the block)"
        lines = ["gradient flow (L2 norms of the last pass)",
                 f"{'layer':<24} {'type':<12} {'calls':>5} {'|dL/d out|':>11} {'|grad params|':>13}  called at"]
        for lf in self.layers.values():
            o = "-" if lf.output_grad_norm is None else f"{lf.output_grad_norm:.3e}"
            p = "-" if lf.param_grad_norm is None else f"{lf.param_grad_norm:.3e}"
            lines.append(f"{lf.label:<24} {lf.kind:<12} {lf.calls:>5} {o:>11} {p:>13}  {lf.site_text}")
        for lf in self.layers.values():
            if lf.step_norms is not None:
                s = lf.step_norms
                idx = sorted(set(np.linspace(0, len(s) - 1, min(len(s), 8)).round().astype(int).tolist()))
                shown = ", ".join(f"t={i}: {s[i]:.2e}" for i in idx)
                lines.append(f"{lf.label}: |dL/d input_t| over {len(s)} steps (time dim {lf.time_dim}): {shown}")
        if self.findings:
            lines.append("findings:")
            lines += [f"  {f}" for f in self.findings]
        else:
            lines.append("findings: none (thresholds: vanish_ratio={:g}, explode_above={:g})".format(
                self.vanish_ratio, self.explode_above))
        return "\n".join(lines)

    def __str__(self):
        return self.report()

    def plot(self, ax=None):
        """Draw the per-layer norms (bars, log scale) and, for each module seen through time, the
        per-step norms (a line, log scale) with matplotlib; returns the Figure. Needs matplotlib
        (``pip install -e ".[examples]"`` in a checkout, or ``pip install matplotlib``)."""
        try:
            import matplotlib
            matplotlib.use("Agg", force=False)
            import matplotlib.pyplot as plt
        except ImportError:
            raise ModuleNotFoundError(f"GradientFlow.plot() needs matplotlib: {install_hint('matplotlib')} "
                                      "(or use .report() for the same numbers as text)", name="matplotlib") from None
        self._check()
        timed = [lf for lf in self.layers.values() if lf.step_norms is not None]
        if ax is None:
            fig, axes = plt.subplots(1, 1 + bool(timed), figsize=(6 + 5 * bool(timed), 4), squeeze=False)
            axes = list(axes[0])
        else:
            axes = list(ax) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
            fig = axes[0].figure
        layers = list(self.layers.values())
        xs = np.arange(len(layers))
        a = axes[0]
        for off, attr, label in ((-0.2, "output_grad_norm", "|dL/d output|"),
                                 (0.2, "param_grad_norm", "|grad params|")):
            vals = [getattr(lf, attr) or np.nan for lf in layers]
            a.bar(xs + off, vals, width=0.4, label=label)
        a.set_yscale("log")
        a.set_xticks(xs)
        a.set_xticklabels([lf.label for lf in layers], rotation=45, ha="right", fontsize=8)
        a.set_title("gradient norm per layer")
        a.legend()
        if timed and len(axes) > 1:
            b = axes[1]
            for lf in timed:
                b.plot(np.arange(len(lf.step_norms)), lf.step_norms, label=lf.label)
            b.set_yscale("log")
            b.set_xlabel("time step t")
            b.set_title("|d loss / d input_t|")
            b.legend()
        fig.tight_layout()
        return fig


class _Finding:
    """One vanishing / exploding gradient: kind, layer name, step (or None), value, site, detail."""

    def __init__(self, kind, lf, step, value, detail):
        self.kind, self.layer, self.module_kind, self.step = kind, lf.label, lf.kind, step
        self.value, self.site, self.detail = value, lf.site, detail

    def __str__(self):
        step = "" if self.step is None else f", step {self.step}"
        return f"{self.kind}: {self.layer} ({self.module_kind}{step}, called at {fmt(self.site)}): {self.detail}"

    __repr__ = __str__


def gradient_flow(model, *, time_dims=None, vanish_ratio=1e-3, vanish_below=1e-10, explode_ratio=1e3,
                  explode_above=1e4, warn=True):
    """Record how gradients flow through ``model``: per layer, and per time step through recurrences.

    A context manager (see [`GradientFlow`][minigrad.debug.GradientFlow] for the arguments and thresholds)::

        with mg.debug.gradient_flow(model) as flow:
            loss = loss_fn(model(x), y)
            loss.backward()
        print(flow)          # the per-layer / per-step norms and the findings
        flow.plot()          # the same, drawn (matplotlib)

    Vanishing or exploding gradients give one [`GradientFlowWarning`][minigrad.debug.GradientFlowWarning] per
    kind, naming the layer, the time step and the line of your code that called the module.
    """
    return GradientFlow(model, time_dims=time_dims, vanish_ratio=vanish_ratio, vanish_below=vanish_below,
                        explode_ratio=explode_ratio, explode_above=explode_above, warn=warn)
