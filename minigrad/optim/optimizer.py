"""Optimizer: the base class of every minigrad optimizer, with PyTorch's param groups and state dicts.

PyTorch's split: ``step()`` gathers, per param group, the parameters that have a gradient, their
gradients and their state tensors; one function per algorithm (``_single_tensor_adam`` in adam.py, ...)
does the math on them with in-place Tensor ops (``p.add_``, ``exp_avg.lerp_``, ...) under no_grad,
so every write bumps a version counter and passes through ``Function.apply``. SGD and Adam/AdamW
write their math once as a per-element function (``sgd_update``, ``adam_update``) that the
per-tensor path and their fused step both run (optim/_elementwise.py).
"""
from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

import numpy as np

from .. import _threads
from .._dtype import get_default_dtype
from ..autograd import forward_ad as _forward_ad
from ..autograd import function as _function
from ..autograd import observers as _observers
from ..autograd.function import Function
from ..autograd.grad_mode import _state as _grad_state, enable_grad, no_grad
from ..tensor import Tensor

__all__ = ["Optimizer"]

_ARG_NAMES = {"lr": "learning rate", "eps": "epsilon value"}


def _check_args(betas: tuple[float, float] | None = None, **values: float) -> None:
    """PyTorch's hyper-parameter checks: every value >= 0, betas in [0, 1)."""
    for name, v in values.items():
        if not 0.0 <= v:
            raise ValueError(f"Invalid {_ARG_NAMES.get(name, name + ' value')}: {v}")
    if betas is not None:
        try:
            n = len(betas)
        except TypeError:
            n = -1
        if n != 2:  # PyTorch reads betas[1] and fails with a bare IndexError: name the argument instead
            raise ValueError(f"Invalid betas: expected a pair (beta1, beta2), got {betas!r}")
    for i, b in enumerate(betas or ()):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


def _wrap(arr: np.ndarray) -> Tensor:
    """A leaf Tensor holding ``arr`` (optimizer state is exposed as Tensors, as PyTorch's is)."""
    t = Tensor(arr, dtype=arr.dtype)
    if t._data is not arr:  # keep the very buffer we update in place
        t._data = arr
    return t


def _step_tensor(value: float = 0.0) -> Tensor:
    # PyTorch keeps `step` as a CPU float tensor: float64 when that is the default dtype, else float32
    dtype = np.float64 if get_default_dtype() == np.float64 else np.float32
    return _wrap(np.array(value, dtype=dtype))


def _zeros(p: Tensor, fill: float = 0.0) -> Tensor:
    return _wrap(np.full_like(p._data, fill))


def _collect(states: list[dict], *keys: str) -> list[list]:
    """One list per key of the gathered states' values: the per-tensor lists a _single_tensor_* takes."""
    return [[st[k] for st in states] for k in keys]


def _state_tensor(st: dict, key: str, p: Tensor) -> Tensor:
    """st[key], made as zeros when the option that needs it was switched on after the state was made."""
    t = st.get(key)
    if t is None:
        t = st[key] = _zeros(p)
    return t


# ---- hyper-parameters: Python floats eagerly, named graph inputs under mg.graph.trace ----------------

def _hyper(group: dict, key: str, index: int | None = None) -> Any:
    """group[key] (or group[key][index], e.g. one of Adam's betas) as the step computes with it.

    Eagerly a Python float. Under mg.graph.trace a 0-d float64 tensor that is a named input of the graph,
    read from the group at each run: a scheduler changing the learning rate, or a changed beta, does
    not change the traced program (and so does not make mg.jit retrace).
    """
    value = group[key] if index is None else group[key][index]
    tracer = _function._state.tracer
    if tracer is None or isinstance(value, bool):
        return value if isinstance(value, Tensor) else float(value)
    return tracer.hyper_input(group, key, index, float(value))


def _nz(h: Any) -> bool:
    """Whether hyper-parameter h is non-zero (the step branches on it; under mg.graph.trace a run checks
    the branch still holds: HyperRef in graph/ir.py)."""
    if type(h) is float:
        return h != 0
    tracer = _function._state.tracer
    if tracer is None:  # a tensor the user gave (lr=torch.tensor(...) style), eagerly: its value now
        return bool(h.item() != 0)
    return tracer.hyper_nonzero[id(h)]


def _like(h: Any, t: Tensor) -> Any:
    """Hyper-parameter h as an operand of an op on t: a float stays a float (NumPy casts it to t's
    dtype); a traced one is cast to t's dtype, the same rounding, so eager and traced steps agree
    bitwise."""
    return h if type(h) is float else h.to(t.dtype)


def _scaled(t: Tensor, a: Any) -> Tensor:
    """a * t, skipping the multiplication for the float 1.0 (x * 1.0 is x, bit for bit)."""
    if type(a) is float and a == 1:
        return t
    return t * _like(a, t)


def _addcmul_(x: Tensor, t1: Tensor, t2: Tensor, value: Any) -> Tensor:
    """x += value * t1 * t2 (one fused op eagerly; the same arithmetic, in order, when traced)."""
    if type(value) is float:
        return x.addcmul_(t1, t2, value=value)
    return x.add_(_scaled(t1 * t2, value))


def _addcdiv_(x: Tensor, t1: Tensor, t2: Tensor, value: Any) -> Tensor:
    """x += value * t1 / t2 (one fused op eagerly; the same arithmetic, in order, when traced)."""
    if type(value) is float:
        return x.addcdiv_(t1, t2, value=value)
    return x.add_(_scaled(t1 / t2, value))


# ---- the fused step (PyTorch's foreach path): eager, and one equation under mg.graph.trace ------------

# False: always take the per-tensor path (tests compare the two)
_FOREACH = True


def _fusable(group: dict, params: list, *lists: list, traced: bool = False) -> bool:
    """Whether a group's update can run as one fused op writing NumPy arrays in place: not under
    forward AD (which needs the per-tensor ops out of place), every parameter a writeable float array
    (not 0-d) whose gradient and state tensors have its shape and dtype, and every hyper-parameter a
    Python number (not a Tensor). traced=False asks for the eager call (no mg.graph.trace recording);
    traced=True for the recorded one (under mg.graph.trace: the op is one equation of the graph, its
    writes `assign` effects, see _record_writes)."""
    if not _FOREACH or (_function._state.tracer is not None) != traced or _forward_ad._open():
        return False
    for v in group.values():  # (group["params"] is a list)
        if isinstance(v, Tensor):
            return False
    for i, p in enumerate(params):
        d = p._data
        dt, shape = d.dtype, d.shape
        if dt.kind != "f" or not shape or not d.flags.writeable:  # NumPy gives 0-d results as scalars
            return False
        for lst in lists:
            t = lst[i]
            if t is not None:
                a = t._data
                if (a.dtype is not dt and a.dtype != dt) or a.shape != shape:
                    return False
    return True


def _scratch(opt: "Optimizer") -> dict:
    """The optimizer's scratch rows, per dtype (optim/_elementwise.py's NumPy programs take the rows
    they need, grown to the largest parameter and reused every step: a fresh parameter-sized
    temporary per step costs an allocation, and page faults when large)."""
    return opt.__dict__.setdefault("_scratch_bufs", {})


def _record_writes(tensors: list, outs: tuple) -> None:
    """Under mg.graph.trace, after a fused step op (SGDStep, AdamStep) recorded as one equation: each
    tensor it wrote in place is assigned the op's result for it (an `assign` effect, so the graph's
    passes keep the op and later reads see the new value), and its version bumped as eager's is. The
    op returns the very arrays it wrote, so the assign copies nothing (NumPy skips a copy onto itself)."""
    tracer = _function._state.tracer
    for t, o in zip(tensors, outs):
        tracer.assign(t, o, "optimizer step")
        t._bump_version()


def _bump(tensors: list) -> None:
    for t in tensors:
        if t is not None:
            t._bump_version()


def _scalar(t: Tensor) -> Any:
    """A 0-d state tensor (a step count) as a Python float eagerly, as itself under mg.graph.trace (where
    .item() would end the graph)."""
    return t.item() if _function._state.tracer is None else t


# Scalar arithmetic of a step (bias corrections) in Python floats: the eager step calls the function
# directly; a traced step records one `host_math` op that calls the same function at each run, so
# the graph computes bit for bit what eager computes (NumPy's vectorised pow differs from Python's
# in the last bit for about 4 % of inputs).
_HOST_MATH = {
    # Adam: (step_size, sqrt(bias_correction2)) = (lr / (1 - beta1**t), sqrt(1 - beta2**t))
    "adam_bias": lambda t, lr, b1, b2: (lr / (1 - b1**t), (1 - b2**t) ** 0.5),
    # Adamax: lr / (1 - beta1**t);  Adagrad: lr / (1 + (t - 1) * lr_decay)
    "adamax_lr": lambda t, lr, b1: (lr / (1 - b1**t),),
    "adagrad_lr": lambda t, lr, lr_decay: (lr / (1 + (t - 1) * lr_decay),),
}


class HostMath(Function):
    """out = _HOST_MATH[name](*scalars), in Python floats, as 0-d float64 arrays (no gradient)."""
    batching = _function.NoRule("an optimizer update: it is not run under vmap")
    jvp = _function.NoRule("an optimizer update: not differentiated")
    onnx = _function.NoRule("an optimizer step: export an inference graph (model.eval(), no training step)")

    @staticmethod
    def forward(ctx, name, *scalars):
        return tuple(np.array(v, dtype=np.float64) for v in _HOST_MATH[name](*(float(x) for x in scalars)))


def _host_math(name: str, *scalars: Any) -> tuple:
    if all(type(x) is float for x in scalars):
        return _HOST_MATH[name](*scalars)
    return HostMath.apply(name, *scalars)


def _observed_step(step: Callable) -> Callable:
    """step, emitting the "step" event (autograd/observers.py) first when anyone listens; once per
    call, however many classes' steps the call passes through (super().step())."""
    import functools

    @functools.wraps(step)
    def wrapper(self, *args: Any, **kwargs: Any) -> Any:
        _threads.adapt()  # fewer BLAS threads while other processes hold the cores (one clock read)
        if "step" in _observers._events and not self.__dict__.get("_stepping"):
            _observers.emit("step", self, [p for g in self.param_groups for p in g["params"]])
            self._stepping = True
            try:
                return step(self, *args, **kwargs)
            finally:
                self._stepping = False
        return step(self, *args, **kwargs)
    return wrapper




class Optimizer:
    """Base class for all optimizers.

    Args:
        params (iterable): an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts
            (parameter groups). A group dict holds ``'params'`` and any hyper-parameters that override
            ``defaults`` for that group.
        defaults (dict): the default hyper-parameters of every group.

    Attributes:
        param_groups (list[dict]): each group's ``'params'`` list and its hyper-parameters; they may
            be changed between steps (learning-rate schedulers do so).
        state (dict): per-parameter state, keyed by the parameter Tensor.

    Example:
        >>> opt = mg.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        >>> opt.zero_grad()
        >>> loss_fn(model(x), y).backward()
        >>> opt.step()
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # every optimizer's step (a user's subclass too) announces itself to the observers (the
        # gradient doctor's "gradients not cleared" check), as PyTorch wraps step for its hooks
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _observed_step(cls.__dict__["step"])

    def __init__(self, params: Iterable, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {type(params).__name__}"
            )
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    # ---- parameter groups ------------------------------------------------------------------

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a parameter group (e.g. layers unfrozen during fine-tuning).

        Args:
            param_group (dict): ``'params'`` (a Tensor or an ordered iterable of Tensors) and any
                hyper-parameters specific to this group; missing ones take the optimizer's defaults.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering "
                "of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            params = list(params)

        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are missing"
                )
            param_group["param_names"] = names
        param_group["params"] = params

        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}"
                )
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            param_group.setdefault(name, default)

        ids = [id(p) for p in params]
        if len(ids) != len(set(ids)):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; "
                "in future, this will cause an error",
                stacklevel=3,
            )
        seen = {id(p) for group in self.param_groups for p in group["params"]}
        for group in self.param_groups:
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} to the optimizer"
                )
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients and steps ---------------------------------------------------------------

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all optimized Tensors.

        Args:
            set_to_none (bool): set ``.grad`` to None (default) instead of filling it with zeros.
                The optimizers skip a parameter whose grad is None, but do step one whose grad is 0.
        """
        if "zero_grad" in _observers._events:
            _observers.emit("zero_grad", self, [p for g in self.param_groups for p in g["params"]])
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad  # parameters are leaves (add_param_group checks): no property, no warning
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                    continue
                if g.grad_fn is not None or g.requires_grad:
                    g = g.detach()
                    p.grad = g
                if g._data.flags.writeable:
                    with no_grad():
                        g.zero_()
                else:  # e.g. a broadcast view handed over by the engine
                    g._data = np.zeros(g._data.shape, dtype=g._data.dtype)

    def _run_closure(self, closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with enable_grad():
            return closure()

    @_observed_step
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): re-evaluates the model and returns the loss (run with
                gradient recording enabled).
        """
        if type(self)._update is Optimizer._update:
            raise NotImplementedError(f"{type(self).__name__} defines neither step() nor _update()")
        loss = None if closure is None else self._run_closure(closure)
        prev = _grad_state.enabled  # no_grad without its provenance bookkeeping (for user blocks)
        _grad_state.enabled = False
        try:
            for group in self.param_groups:
                params, grads, states = self._gather(group)
                if params:
                    self._update(group, params, grads, states)
        finally:
            _grad_state.enabled = prev
        return loss

    def _gather(self, group: dict[str, Any]) -> tuple[list, list, list]:
        """The group's parameters that have a gradient, their gradients and their state dicts
        (made by ``_init_state`` on a parameter's first step)."""
        params, grads, states = [], [], []
        state = self.state
        init = type(self)._init_state is not Optimizer._init_state  # SGD has no state to make
        for p in group["params"]:
            grad = p._grad  # parameters are leaves: .grad's non-leaf warning does not apply
            if grad is None:
                continue
            st = state[p]
            if not st:
                if init:
                    self._init_state(p, st, group)
            elif "step" in st and not isinstance(st["step"], Tensor):  # a hand-made state dict
                st["step"] = _step_tensor(float(st["step"]))
            params.append(p)
            grads.append(grad)
            states.append(st)
        return params, grads, states

    def _init_state(self, p: Tensor, state: dict, group: dict[str, Any]) -> None:
        """Fill the empty state of parameter p (each optimizer's own keys)."""

    def _update(self, group: dict[str, Any], params: list, grads: list, states: list) -> None:
        """Run the algorithm on one group's gathered tensors (each optimizer's ``_single_tensor_*``)."""
        raise NotImplementedError

    # ---- state dicts -----------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state, in PyTorch's layout.

        Returns ``{'state': {index: {key: Tensor or number}}, 'param_groups': [{..., 'params':
        [index, ...]}]}``, parameters numbered in the order of the groups. Tensors in ``'state'`` are
        copies, so the dict is a snapshot that later steps do not change.
        """
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {}
        for p, st in self.state.items():
            key = index[id(p)] if isinstance(p, Tensor) else p
            state[key] = {k: (_wrap(v._data.copy()) if isinstance(v, Tensor) else deepcopy(v)) for k, v in st.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state from [`state_dict()`][minigrad.optim.Optimizer.state_dict] (possibly saved and loaded
        by ``mg.save``/``mg.load``).

        Groups must match in number and size. Floating state is copied and cast to each parameter's
        dtype (``'step'`` keeps its own); hyper-parameters are taken from the saved groups.
        """
        if not isinstance(state_dict, dict) or "state" not in state_dict or "param_groups" not in state_dict:
            raise ValueError("load_state_dict: expected a dict with keys 'state' and 'param_groups'")
        groups = self.param_groups
        saved_groups = deepcopy(list(state_dict["param_groups"]))
        if len(groups) != len(saved_groups):
            raise ValueError(
                "loaded state dict has a different number of parameter groups: "
                f"{len(saved_groups)} saved, optimizer has {len(groups)}"
            )
        for i, (g, sg) in enumerate(zip(groups, saved_groups)):
            if len(g["params"]) != len(sg["params"]):
                raise ValueError(
                    f"loaded state dict contains a parameter group that doesn't match the size of "
                    f"optimizer's group: group {i} has {len(sg['params'])} saved parameters, "
                    f"optimizer's has {len(g['params'])}"
                )
        id_map = {}
        for g, sg in zip(groups, saved_groups):
            for saved_id, p in zip(sg["params"], g["params"]):
                id_map[_as_key(saved_id)] = p

        state: defaultdict = defaultdict(dict)
        for k, v in state_dict["state"].items():
            key = _as_key(k)
            if key in id_map:
                p = id_map[key]
                if isinstance(v, dict):
                    state[p] = {name: _cast(p, val, name) for name, val in v.items()}
                else:
                    state[p] = _cast(p, v, None)
            else:
                state[k] = deepcopy(v)

        new_groups = []
        for g, sg in zip(groups, saved_groups):
            for key, val in sg.items():
                # a serializer may turn tuples (betas) into lists; keep the optimizer's type
                if isinstance(val, list) and isinstance(g.get(key), tuple):
                    sg[key] = tuple(val)
            sg["params"] = g["params"]
            if "param_names" in g and "param_names" not in sg:
                sg["param_names"] = g["param_names"]
            new_groups.append(sg)
        self.__setstate__({"state": state, "param_groups": new_groups})


def _as_key(k: Any) -> Any:
    # int parameter ids may come back as strings from a serializer
    if isinstance(k, str) and k.lstrip("-").isdigit():
        return int(k)
    if isinstance(k, np.integer):
        return int(k)
    return k


# 0-d state kept in the step's dtype (PyTorch's _get_scalar_dtype). PyTorch casts all but 'step' to
# the parameter's dtype on load, so its resumed NAdam/ASGD drift from an uninterrupted run; we keep them.
_SCALAR_STATE = frozenset({"step", "mu_product", "eta", "mu"})


def _cast(p: Tensor, value: Any, key: Any) -> Any:
    """A copy of a saved state value; floating arrays take p's dtype except for the scalar state."""
    if isinstance(value, (Tensor, np.ndarray)):
        arr = value._data if isinstance(value, Tensor) else value
        if key not in _SCALAR_STATE and arr.dtype.kind == "f" and p.dtype.kind == "f":
            arr = arr.astype(p.dtype, copy=True)
        else:
            arr = arr.copy()
        return _wrap(arr)
    if isinstance(value, dict):
        return {k: _cast(p, v, k) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(p, v, None) for v in value)
    return deepcopy(value)

