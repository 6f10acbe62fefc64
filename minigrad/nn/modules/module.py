"""Module: the base class of every layer, as torch.nn.Module."""
from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator, Mapping

import numpy as np

from ...tensor import Tensor, _parse_to as _parse_to_args
from ...device import check_device
from ...autograd.grad_mode import no_grad
from ...autograd import observers as _observers
from ..parameter import Parameter


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict(strict=False) returns: the keys it did not match."""
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:  # single-line reprs stay as they are
        return s
    first = lines.pop(0)
    rest = [(num_spaces * " ") + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(rest)


class RemovableHandle:
    """Returned by register_forward_hook / register_forward_pre_hook; ``remove()`` unregisters."""

    _next_id = 0

    def __init__(self, hooks_dict: dict, *, extra_dict: "dict | tuple[dict, ...] | None" = None) -> None:
        self._hooks_dict = hooks_dict
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1
        # the dicts that flag this hook (with_kwargs, always_call): cleared with it
        self._extra_dicts = (() if extra_dict is None
                             else tuple(extra_dict) if isinstance(extra_dict, tuple) else (extra_dict,))

    def remove(self) -> None:
        self._hooks_dict.pop(self.id, None)
        for d in self._extra_dicts:
            d.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _parse_to(args: tuple, kwargs: dict):
    """The dtype (or None) named by Module.to's arguments (PyTorch's forms, parsed as Tensor.to's);
    devices other than the CPU are refused, and so are copy=True and non-floating dtypes, as in PyTorch."""
    device, dtype, _non_blocking, copy, _fmt = _parse_to_args(args, kwargs, "Module.to")
    meta = check_device(device, "Module.to", meta=True).type == "meta"
    if copy is not None:  # given at all, even False
        raise RuntimeError(".to() does not accept copy argument")
    if dtype is not None and dtype.kind != "f":
        raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got desired dtype={dtype}")
    return dtype, meta, device is not None


def _hook_flag_dicts() -> dict:
    """A module's per-hook flags, keyed by hook id: which hooks take kwargs / always run."""
    return {"_forward_pre_hooks_with_kwargs": OrderedDict(), "_forward_hooks_with_kwargs": OrderedDict(),
            "_forward_hooks_always_called": OrderedDict()}


_EPOCH = [0]  # bumped by every attribute write or registration on any Module: mg.jit's guards
# (compiler/guards.py) read this one counter instead of every module's attributes at each call


class Module:
    r"""Base class for all neural network modules, as ``torch.nn.Module``.

    Subclasses set their layers and parameters as attributes in ``__init__`` (after calling
    ``super().__init__()``) and define [`forward()`][minigrad.nn.Module.forward]. Attributes that are
    [`Parameter`][minigrad.nn.Parameter]s, Modules, or tensors given to
    [`register_buffer()`][minigrad.nn.Module.register_buffer] are registered, so that
    [`parameters()`][minigrad.nn.Module.parameters], [`state_dict()`][minigrad.nn.Module.state_dict],
    [`train()`][minigrad.nn.Module.train], [`to()`][minigrad.nn.Module.to] and the repr see them.

    Example:
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.fc1 = nn.Linear(4, 8)
        ...         self.fc2 = nn.Linear(8, 2)
        ...     def forward(self, x):
        ...         return self.fc2(self.fc1(x).relu())
        >>> [name for name, _ in Net().named_parameters()]
        ['fc1.weight', 'fc1.bias', 'fc2.weight', 'fc2.bias']
    """

    training: bool
    _version: int = 1

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments; "
                            "Module.__init__ takes none")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d.update(_hook_flag_dicts())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Define the computation performed at every call. Every subclass overrides it."""
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_pre_hooks or self._forward_hooks):
            if kwargs or len(args) != 1:
                return self.forward(*args, **kwargs)
            return self.forward(args[0])  # the common call, model(x): without re-packing *args, **kwargs
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        # PyTorch's order and contracts: pre-hooks may replace args (with_kwargs: an (args, kwargs)
        # pair), forward hooks may replace the output; an always_call hook still runs when forward or
        # an earlier hook raises, with output None, and the original error is re-raised
        result = None
        called_always = set()
        try:
            for hook_id, hook in list(self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    res = hook(self, args, kwargs)
                    if res is not None:
                        if not (isinstance(res, tuple) and len(res) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of "
                                               f"(new_args, new_kwargs), but got {res}.")
                        args, kwargs = res
                else:
                    res = hook(self, args)
                    if res is not None:
                        args = res if isinstance(res, tuple) else (res,)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called:
                    called_always.add(hook_id)
                result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
            return result
        except Exception:
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id not in self._forward_hooks_always_called or hook_id in called_always:
                    continue
                try:
                    result = self._run_forward_hook(hook_id, hook, args, kwargs, result)
                except Exception as e:  # the forward error is the one to report
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {e}")
            raise

    def _run_forward_hook(self, hook_id: int, hook: Callable, args: tuple, kwargs: dict, result: Any) -> Any:
        """One forward hook (given kwargs when it was registered with_kwargs): its new output, or result."""
        if hook_id in self._forward_hooks_with_kwargs:
            res = hook(self, args, kwargs, result)
        else:
            res = hook(self, args, result)
        return result if res is None else res

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Register a hook called before [`forward()`][minigrad.nn.Module.forward].

        ``hook(module, args) -> None or new args`` (a non-tuple result is wrapped in a tuple); with
        ``with_kwargs=True``, ``hook(module, args, kwargs) -> None or (new_args, new_kwargs)``.
        ``prepend=True`` runs it before the hooks already registered.
        """
        handle = RemovableHandle(self._forward_pre_hooks, extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Register a hook called after [`forward()`][minigrad.nn.Module.forward].

        ``hook(module, args, output) -> None or new output``; with ``with_kwargs=True``,
        ``hook(module, args, kwargs, output)``. ``prepend=True`` runs it before the hooks already
        registered; ``always_call=True`` runs it even when forward raises (output ``None``).
        """
        handle = RemovableHandle(self._forward_hooks, extra_dict=(self._forward_hooks_with_kwargs,
                                                                  self._forward_hooks_always_called))
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    # ---------------------------------------------------------------- registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: module state that is not a parameter (e.g. BatchNorm's ``running_mean``).

        Args:
            name (str): the buffer's attribute name.
            tensor (Tensor or None): the buffer; ``None`` registers an empty slot (left out of
                state_dict).
            persistent (bool): whether the buffer is part of [`state_dict()`][minigrad.nn.Module.state_dict].
                Default: ``True``.
        """
        _EPOCH[0] += 1
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            "(Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter to the module, reachable as an attribute by ``name``.

        Args:
            name (str): the parameter's attribute name.
            param (Parameter or None): the parameter; ``None`` registers an empty slot (e.g. a
                Linear without bias), skipped by [`parameters()`][minigrad.nn.Module.parameters] and
                [`state_dict()`][minigrad.nn.Module.state_dict].
        """
        _EPOCH[0] += 1
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             "created explicitly. To express a parameter as a function of another Tensor, "
                             "compute the value in the forward() method.")
        self._parameters[name] = param

    def add_module(self, name: str, module: "Module | None") -> None:
        """Add a child module, reachable as an attribute by ``name``."""
        _EPOCH[0] += 1
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    @staticmethod
    def _check_name(name: Any, kind: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')

    def __setattr__(self, name: str, value: Any) -> None:
        _EPOCH[0] += 1
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, self._buffers, self._modules)
            self._non_persistent_buffers_set.discard(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                "(nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = d.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                self._remove_from(name, d, self._parameters, self._buffers)
                self._non_persistent_buffers_set.discard(name)
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                    "(nn.Module or None expected)")
                modules[name] = value
            else:
                buffers = d.get("_buffers")
                if buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                                        "(Tensor or None expected)")
                    buffers[name] = value
                else:
                    object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name: str, *dicts: dict) -> None:
        for d in dicts:
            d.pop(name, None)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d:  # absent while unpickling / deep-copying, before __init__ state exists
            if name in d["_parameters"]:
                return d["_parameters"][name]
            if name in d["_buffers"]:
                return d["_buffers"][name]
            if name in d["_modules"]:
                return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        _EPOCH[0] += 1
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in set(keys) if not k[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for k, v in _hook_flag_dicts().items():  # modules pickled before these existed
            self.__dict__.setdefault(k, v)

    # ---------------------------------------------------------------- traversal
    def _named_members(self, get_members: Callable, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Iterate over ``(name, parameter)`` pairs; a parameter shared by several modules appears once.

        Args:
            prefix (str): prepended to every name.
            recurse (bool): include the parameters of all submodules. Default: ``True``.
            remove_duplicate (bool): skip parameters already yielded. Default: ``True``.

        Example:
            >>> [n for n, _ in nn.Sequential(nn.Linear(2, 2)).named_parameters()]
            ['0.weight', '0.bias']
        """
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Iterate over the module's parameters (each shared parameter once), as given to an optimizer."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """Iterate over ``(name, buffer)`` pairs, persistent or not."""
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """Iterate over the module's buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        """Iterate over ``(name, module)`` for the immediate children (each module once)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def children(self) -> Iterator["Module"]:
        """Iterate over the immediate child modules."""
        for _, m in self.named_children():
            yield m

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """Iterate over ``(name, module)`` for this module (name ``prefix``) and all descendants."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        """Iterate over this module and all its descendants (each once)."""
        for _, m in self.named_modules():
            yield m

    def get_submodule(self, target: str) -> "Module":
        """The submodule named by a dotted path, e.g. ``"encoder.layers.0"``; ``""`` gives self."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Replace (or, unless ``strict``, add) the submodule at a dotted path, e.g. ``"encoder.layers.0"``.

        Raises:
            ValueError: for an empty ``target`` or a ``module`` that is not a Module.
            AttributeError: when the parent path does not lead to a module, the target is an
                attribute that is not a module, or (``strict``) the target does not exist yet.
        """
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter named by a dotted path, e.g. ``"0.weight"``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._parameters:
            raise AttributeError(mod._get_name() + " has no parameter `" + name + "`")
        return mod._parameters[name]

    def get_buffer(self, target: str) -> Tensor:
        """The buffer named by a dotted path, e.g. ``"bn.running_mean"``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if name not in mod._buffers:
            raise AttributeError(mod._get_name() + " has no buffer `" + name + "`")
        return mod._buffers[name]

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call ``fn`` on every submodule (children first) and then on self; returns self.

        Example:
            >>> def init_weights(m):
            ...     if isinstance(m, nn.Linear):
            ...         nn.init.zeros_(m.weight)
            >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU()).apply(init_weights)
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---------------------------------------------------------------- modes and gradients
    def train(self, mode: bool = True) -> "Module":
        """Set this module and its descendants to training mode (``mode=False``: evaluation); returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        """Set evaluation mode (Dropout off, BatchNorm uses running statistics); same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set ``requires_grad`` on every parameter (e.g. ``False`` to freeze); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to ``None`` (default) or to zeros in place."""
        if "zero_grad" in _observers._events:
            _observers.emit("zero_grad", self, list(self.parameters()))
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad = p.grad.detach()
                with no_grad():
                    p.grad.zero_()

    # ---------------------------------------------------------------- dtype conversion
    def _cast_(self, dtype: np.dtype) -> None:
        # in place on the same objects, so optimizers holding the parameters keep working
        for t in itertools.chain(self.parameters(), self.buffers()):
            if t.dtype.kind == "f" and t.dtype != dtype:
                t._data = t._data.astype(dtype)
                if t.grad is not None:
                    t.grad = Tensor(t.grad._data.astype(dtype), dtype=dtype)

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """Cast floating-point parameters and buffers to ``dtype`` in place; returns self.

        Takes PyTorch's forms: ``to(device=None, dtype=None, non_blocking=False)``,
        ``to(dtype, non_blocking=False)``, ``to(tensor, non_blocking=False)`` (its dtype) and
        ``to(memory_format=...)``, positional or by keyword. A CPU device (``"cpu"``,
        ``mg.device("cpu")``) changes nothing; ``"meta"`` drops the data and keeps shapes and dtypes
        (shape-only tensors, for a stateless base model as in torch.func's model ensembling);
        any other device is refused, as are ``copy=True`` and
        non-floating dtypes (PyTorch's errors). ``non_blocking`` and ``memory_format`` have no effect
        (NumPy arrays on the CPU). Integer buffers (e.g. BatchNorm's ``num_batches_tracked``) are left
        alone. Parameters stay the same objects.

        Example:
            >>> net = nn.Linear(2, 2).to(mg.device("cpu"), mg.float64)
            >>> net.weight.dtype
            dtype('float64')
        """
        dtype, meta, device_given = _parse_to(args, dict(kwargs))
        if dtype is not None:
            self._cast_(dtype)
        if meta:
            self._to_meta_()
        elif device_given and any(t.is_meta for t in itertools.chain(self.parameters(), self.buffers())):
            raise NotImplementedError("Module.to: Cannot copy out of meta tensor; no data! A module on 'meta' "
                                      "holds shapes only: build it again on the CPU and load a state_dict")
        return self

    def _to_meta_(self) -> None:
        # in place on the same objects (as _cast_): each parameter and buffer keeps its shape and
        # dtype and drops its data (PyTorch's module.to('meta'), e.g. the stateless base model of
        # torch.func's model ensembling)
        from ...tensor import _meta_array
        for t in itertools.chain(self.parameters(), self.buffers()):
            t._data = _meta_array(t.shape, t.dtype)
            if t.grad is not None:
                t.grad = Tensor._make(_meta_array(t.grad.shape, t.grad.dtype))

    def float(self) -> "Module":
        """Cast floating-point parameters and buffers to float32."""
        return self.to(np.float32)

    def double(self) -> "Module":
        """Cast floating-point parameters and buffers to float64."""
        return self.to(np.float64)

    def half(self) -> "Module":
        """Cast floating-point parameters and buffers to float16."""
        return self.to(np.float16)

    def cpu(self) -> "Module":
        """Does nothing (minigrad runs on the CPU); returns self, for ported code."""
        return self

    # ---------------------------------------------------------------- state dict
    def state_dict(self, *, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """An ordered dict of every parameter and persistent buffer, keyed by dotted name.

        Values are detached tensors sharing memory with the module's (``keep_vars=True`` gives the
        parameters themselves). Non-persistent buffers and ``None`` slots are left out.

        Example:
            >>> list(nn.Sequential(nn.Linear(2, 3)).state_dict())
            ['0.weight', '0.bias']
        """
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict: Mapping, prefix: str, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list,
                              assign: bool = False) -> None:
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items())
                       if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            src = state_dict[key]
            if not isinstance(src, Tensor):  # as PyTorch: a NumPy array or a number is refused, not guessed at
                hint = " (wrap it: mg.from_numpy(value) or mg.tensor(value))" if isinstance(
                    src, (np.ndarray, np.generic, int, float, bool)) else ""
                error_msgs.append(f'While copying the parameter named "{key}", expected minigrad.Tensor '
                                  f"from checkpoint but received {type(src)}{hint}")
                continue
            src_arr = src._data
            if tuple(src_arr.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {tuple(src_arr.shape)} "
                                  f"from checkpoint, the shape in current model is {tuple(param.shape)}.")
                continue
            if assign:  # take the checkpoint's tensor itself (and its dtype) instead of copying into ours
                src_t = src
                if name in self._parameters:
                    self._parameters[name] = Parameter(src_t, requires_grad=param.requires_grad)
                else:
                    self._buffers[name] = src_t.detach()
                continue
            if param.is_meta:  # as PyTorch: a no-op with a warning (assign=True takes the tensor instead)
                if not src.is_meta:
                    warnings.warn(f"for {key}: copying from a non-meta parameter in the checkpoint to a meta "
                                  f"parameter in the current model, which is a no-op. (Did you mean to pass "
                                  f"`assign=True` to assign items in the state dictionary to their corresponding "
                                  f"key in the module instead of copying them in place?)", UserWarning, stacklevel=2)
                continue
            if src.is_meta:
                error_msgs.append(f'While copying the parameter named "{key}": Cannot copy out of meta tensor; '
                                  f"no data! (a meta tensor holds a shape and a dtype only)")
                continue
            try:
                with no_grad():
                    param.copy_(Tensor(np.array(src_arr, dtype=param.dtype), dtype=param.dtype))
            except Exception as ex:  # report with the key rather than failing half-way
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{tuple(param.shape)} and whose dimensions in the checkpoint are "
                                  f"{tuple(src_arr.shape)}, an exception occurred : {ex.args}.")
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module, in place.

        Args:
            state_dict (dict): as returned by [`state_dict()`][minigrad.nn.Module.state_dict] (values: tensors
                or numpy arrays).
            strict (bool): require the keys to match exactly. Default: ``True``.
            assign (bool): replace the parameters and buffers by the checkpoint's tensors (keeping
                each parameter's ``requires_grad``) instead of copying in place. Default: ``False``.

        Returns:
            a named tuple ``(missing_keys, unexpected_keys)``.

        Raises:
            RuntimeError: listing ``Missing key(s)`` and ``Unexpected key(s)`` (when strict) and any
                ``size mismatch`` (always); nothing is half-reported.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        state_dict = OrderedDict(state_dict)

        def load(module: Module, local_sd: dict, prefix: str = "") -> None:
            module._load_from_state_dict(local_sd, prefix, True, missing_keys, unexpected_keys, error_msgs,
                                         assign=assign)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_sd.items() if k.startswith(child_prefix)}, child_prefix)

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---------------------------------------------------------------- repr
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The module-specific part of the repr (e.g. ``in_features=2, out_features=3, bias=True``)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
