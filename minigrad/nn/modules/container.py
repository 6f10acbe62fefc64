"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict, as torch.nn's."""
from __future__ import annotations

import operator
from collections import OrderedDict
from itertools import islice
from typing import Any, Iterable, Iterator, Mapping

from ...tensor import Tensor
from ..parameter import Parameter
from .module import Module, _addindent


def _abs_index(idx: int, n: int, kind: str) -> int:
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range for a {kind} of length {n}")
    return idx + n if idx < 0 else idx


class Sequential(Module):
    r"""A chain of modules, each fed the previous one's output, as ``torch.nn.Sequential``.

    Modules are given positionally (named ``"0"``, ``"1"``, ...) or as one ``OrderedDict`` of
    names to modules. Indexing (negative too) gives a module; slicing gives a new Sequential
    sharing the modules.

    Shape:
        - Input: whatever the first module takes.
        - Output: whatever the last module returns.

    Example:
        >>> model = nn.Sequential(nn.Linear(784, 256), nn.ReLU())
        >>> model
        Sequential(
          (0): Linear(in_features=784, out_features=256, bias=True)
          (1): ReLU()
        )
        >>> model[-1]
        ReLU()
    """

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx: int | slice) -> Module:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        i = _abs_index(idx, len(self), "Sequential")
        return next(islice(self._modules.values(), i, None))

    def __setitem__(self, idx: int, module: Module) -> None:
        i = _abs_index(idx, len(self), "Sequential")
        key = next(islice(self._modules.keys(), i, None))
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            i = _abs_index(idx, len(self), "Sequential")
            delattr(self, next(islice(self._modules.keys(), i, None)))
        # keep the numbering contiguous, as PyTorch does
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __add__(self, other: "Sequential") -> "Sequential":
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def append(self, module: Module) -> "Sequential":
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        """Insert ``module`` before position ``index``; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        mods = list(self._modules.values())
        mods.insert(index, module)
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(mods))
        return self

    def extend(self, sequential: Iterable[Module]) -> "Sequential":
        """Append every module of an iterable; returns self."""
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            input = module(input)
        return input


class ModuleList(Module):
    r"""Holds submodules in a list, as ``torch.nn.ModuleList``; they are registered (named ``"0"``, ...).

    Args:
        modules (iterable, optional): modules to add.

    Example:
        >>> layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        >>> layers.append(nn.ReLU())
        >>> len(layers), layers[-1]
        (4, ReLU())
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def __getitem__(self, idx: int | slice) -> "Module | ModuleList":
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[str(_abs_index(idx, len(self), "ModuleList"))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_abs_index(idx, len(self), "ModuleList")), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, str(_abs_index(idx, len(self), "ModuleList")))
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(self._modules.values()))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> "ModuleList":
        return ModuleList([*self, *other])

    def __contains__(self, module: object) -> bool:
        return any(m is module for m in self)

    def index(self, module: Module) -> int:
        """The position of ``module`` (compared by identity); ValueError if absent."""
        for i, m in enumerate(self):
            if m is module:
                return i
        raise ValueError(f"{module!r} is not in ModuleList")

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList.insert: {type(module).__name__} is not a Module subclass")
        mods = list(self._modules.values())
        mods.insert(index, module)
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(mods))

    def append(self, module: Module) -> "ModuleList":
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        """Append every module of an iterable; returns self."""
        if isinstance(modules, (Module, str)) or not hasattr(modules, "__iter__"):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def __repr__(self) -> str:
        # repeated identical blocks are shown once, as "(0-2): 3 x Linear(...)", like PyTorch
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        spans, blocks = [[0, 0]], [reprs[0]]
        for i, r in enumerate(reprs[1:], 1):
            if r == blocks[-1]:
                spans[-1][1] += 1
            else:
                spans.append([i, i])
                blocks.append(r)
        lines = []
        for (start, end), b in zip(spans, blocks):
            local = f"({start}): {b}" if start == end else f"({start}-{end}): {end - start + 1} x {b}"
            lines.append(_addindent(local, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    r"""Holds submodules in an ordered dict, as ``torch.nn.ModuleDict``; they are registered by key.

    Args:
        modules (mapping or iterable of (str, Module) pairs, optional): modules to add.

    Example:
        >>> heads = nn.ModuleDict({"cls": nn.Linear(8, 10), "box": nn.Linear(8, 4)})
        >>> list(heads.keys())
        ['cls', 'box']
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove the module at ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The keys, in insertion order."""
        return self._modules.keys()

    def items(self):
        """The ``(key, module)`` pairs, in insertion order."""
        return self._modules.items()

    def values(self):
        """The modules, in insertion order."""
        return self._modules.values()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add modules from a mapping or from ``(key, module)`` pairs, overwriting existing keys."""
        if isinstance(modules, (OrderedDict, ModuleDict, Mapping)):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, m in enumerate(modules):
                if len(m) != 2:
                    raise ValueError(f"ModuleDict update sequence element #{j} has length {len(m)}; 2 is required")
                self[m[0]] = m[1]


def _param_line(key: str, p: Any, dict_style: bool = False) -> str:
    # PyTorch's extra_repr line for one entry: kind, dtype and size of a tensor; else its type
    # (ParameterList names the dtype, minigrad.float32; ParameterDict the type, minigrad.FloatTensor)
    if isinstance(p, Tensor):
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        size = "x".join(str(s) for s in p.shape)
        return f"  ({key}): {kind} containing: [{p.type() if dict_style else f'minigrad.{p.dtype}'} of size {size}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


def _as_param(value: Any) -> Any:
    # a plain tensor given to a ParameterList/Dict becomes a Parameter (sharing memory), as PyTorch
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    r"""Holds parameters in a list, as ``torch.nn.ParameterList``; they are registered (named ``"0"``, ...).

    A plain tensor is wrapped in a [`Parameter`][minigrad.nn.Parameter]; other objects are kept as they are (not
    parameters).

    Args:
        values (iterable, optional): the parameters to add.

    Example:
        >>> ws = nn.ParameterList([nn.Parameter(mg.zeros(2, 2)) for _ in range(3)])
        >>> [n for n, _ in ws.named_parameters()]
        ['0', '1', '2']
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx: int) -> str:
        return str(_abs_index(idx, len(self), "ParameterList"))

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return self.__class__([self[i] for i in range(len(self))[idx]])
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, self._get_abs_string_index(idx), _as_param(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> "ParameterList":
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> "ParameterList":
        """Add ``value`` at the end; returns self."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> "ParameterList":
        """Append every value of an iterable; returns self."""
        if isinstance(values, (Tensor, str)) or not hasattr(values, "__iter__"):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(str(k), p) for k, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    r"""Holds parameters in an ordered dict, as ``torch.nn.ParameterDict``; they are registered by key.

    A plain tensor is wrapped in a [`Parameter`][minigrad.nn.Parameter]; other objects are kept as they are.

    Args:
        parameters (mapping or iterable of (str, value) pairs, optional): the parameters to add.

    Example:
        >>> pd = nn.ParameterDict({"scale": nn.Parameter(mg.ones(1)), "shift": nn.Parameter(mg.zeros(1))})
        >>> list(pd.keys())
        ['scale', 'shift']
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key_to_attr(key: Any) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string "
                            f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                            "non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        setattr(self, self._key_to_attr(key), _as_param(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> "ParameterDict":
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        """The value at ``key``, first setting it to ``default`` if absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove every entry."""
        for k in list(self._keys):
            del self[k]

    def pop(self, key: str) -> Any:
        """Remove the entry at ``key`` and return its value."""
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last ``(key, value)`` pair."""
        k, _ = self._keys.popitem()
        self._keys[k] = None  # __delitem__ removes it again
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any = None) -> Any:
        """The value at ``key``, or ``default``."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> "ParameterDict":
        """A new ParameterDict with ``keys`` all set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys, in insertion order."""
        return self._keys.keys()

    def items(self):
        """The ``(key, value)`` pairs, in insertion order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The values, in insertion order."""
        return (self[k] for k in self._keys)

    def update(self, parameters: Any) -> None:
        """Add entries from a mapping or from ``(key, value)`` pairs, overwriting existing keys."""
        if not hasattr(parameters, "__iter__"):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, "
                            "but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, value in parameters.items():
                self[key] = value
        elif isinstance(parameters, Mapping):
            for key, value in sorted(parameters.items()):  # a plain mapping is sorted, as PyTorch
                self[key] = value
        else:
            for j, p in enumerate(parameters):
                if not hasattr(p, "__iter__"):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; "
                                    f"is {type(p).__name__}")
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(p)}; "
                                     "2 is required")
                self[p[0]] = p[1]

    def __or__(self, other: "ParameterDict") -> "ParameterDict":
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: "ParameterDict") -> "ParameterDict":
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: "ParameterDict") -> "ParameterDict":
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, dict_style=True) for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")
