"""Containers: Sequential, ModuleList, ModuleDict, as torch.nn's."""
from __future__ import annotations

import operator
from collections import OrderedDict
from itertools import islice
from typing import Any, Iterable, Iterator, Mapping

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
