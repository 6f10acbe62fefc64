"""mg.debug: the gradient doctor and the gradient-flow recorder.

Always on (and free on the hot path): backward() on a tensor without a graph says where the
graph was cut (no_grad entered at file:line, .detach() at file:line); a second backward names the
line of the first; anomaly mode (mg.autograd.detect_anomaly) names the forward op of a NaN.

Opt-in, `with mg.debug.watch():` (or mg.debug.enable()): records provenance for every op and warns,
once per site, about the common gradient mistakes — a graph kept alive across iterations, gradients
accumulated over several backward passes before optimizer.step(), a binary op that broadcasts
(N,) with (N, 1), a Python number taken from a tensor that requires grad feeding a new tensor, a
function that keeps being retraced. After a backward, `mg.debug.explain(loss, model)` says for
every parameter whose gradient is None or exactly zero why it is.

`with mg.debug.gradient_flow(model) as flow:` (flow.py) records the gradient norm per layer and,
through recurrences, per time step, and warns when gradients vanish or explode.
"""
_LAZY = {"watch": "doctor", "enable": "doctor", "disable": "doctor", "is_watching": "doctor",
         "explain": "doctor", "Report": "doctor", "Finding": "doctor", "GradientMistakeWarning": "doctor",
         "warn_retrace": "doctor", "gradient_flow": "flow", "GradientFlow": "flow",
         "GradientFlowWarning": "flow", "LayerFlow": "flow"}

__all__ = sorted(_LAZY)


def __getattr__(name):  # loaded on first use: importing minigrad does not pay for the doctor
    if name in _LAZY:
        import importlib
        mod = importlib.import_module(f".{_LAZY[name]}", __name__)
        return getattr(mod, name)
    raise AttributeError(f"module 'minigrad.debug' has no attribute {name!r}")
