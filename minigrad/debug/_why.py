"""Explanations for a missing gradient, always available (they run only on the error path).

why_no_grad(t): the reason `t.backward()` cannot run — t was computed under a no_grad block
(entered at file:line), cut by .detach() (at file:line), computed from such a tensor, or from
nothing that requires grad.
"""
from ._sites import fmt, user_frame


def _cause(why):
    """The cause as a clause (no final period)."""
    return _clause(why).rstrip(".")


def _clause(why):
    kind, site = why[0], why[1]
    if kind == "no_grad":
        return (f"computed under no_grad (entered at {fmt(site)}): nothing inside that block is "
                f"recorded. Compute it outside the block, or wrap this part in mg.enable_grad()")
    if kind == "detach":
        return (f"cut from the graph by .detach() at {fmt(site)}. Use the tensor itself (not its "
                f".detach()) where the gradient must flow.")
    if kind == "python":
        return (f"built from a Python number: .{why[2]}() at {fmt(site)} turned a tensor that requires "
                f"grad into a plain value, which carries no graph. Keep it a tensor.")
    if kind == "nondiff":
        return (f"the output of {why[2]} at {fmt(site)}, which is not differentiable (its result "
                f"never requires grad).")
    return kind


def why_no_grad(t):
    """One paragraph saying why tensor t has no graph, for the error backward() raises."""
    why = getattr(t, "_why", None)
    if why is not None:
        return "It was " + _cause(why) + "."
    # t itself carries no mark: look at the tensors in the caller's frame for one that does (e.g. the
    # output of a model run under no_grad, from which t was computed after the block)
    frame = user_frame(2)
    suspects, seen, depth = [], set(), 0
    while frame is not None and depth < 6:  # the calling frames (a helper may have called backward)
        for name, v in list(frame.f_locals.items()):
            w = getattr(v, "_why", None) if hasattr(v, "_data") else None
            if w is not None and id(v) not in seen:
                seen.add(id(v))
                suspects.append(f"`{name}` was {_cause(w)}")
        frame, depth = frame.f_back, depth + 1
    if suspects:
        return ("It was not computed from any tensor that requires grad. In the calling frames, these "
                "tensors were cut from the graph: " + "; ".join(suspects[:3]) + ". Run the code under "
                "`with mg.debug.watch():` to see the exact path.")
    return ("Nothing it was computed from requires grad: no leaf had requires_grad=True (make "
            "parameters with requires_grad=True or nn.Parameter), or the graph was cut before it. "
            "Run the code under `with mg.debug.watch():` to see where.")

