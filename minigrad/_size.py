"""mg.Size: the type of `Tensor.shape` and `Tensor.size()`, a tuple of ints as torch.Size is."""
import operator


class Size(tuple):
    """The shape of a tensor: a tuple of ints that prints like PyTorch's ``torch.Size``.

    It is a plain tuple in every other way: ``x.shape == (2, 3)`` holds, it hashes like the tuple,
    unpacks, indexes, and pickles. In an f-string it formats as the plain tuple, ``(2, 3)`` (how
    minigrad's error messages show shapes); ``str``/``repr`` give ``minigrad.Size([2, 3])``. Slicing and concatenation (``s[1:]``, ``s + (4,)``, ``(1,) + s``,
    ``s * 2``) give a Size again, as PyTorch's do.

    Args:
        sizes: an iterable of ints (or objects with ``__index__``, such as one-element integer tensors).

    Example:
        >>> s = mg.zeros(2, 3).shape
        >>> s, s.numel(), s[1:], s == (2, 3)
        (minigrad.Size([2, 3]), 6, minigrad.Size([3]), True)
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        if type(sizes) is tuple and all(type(s) is int for s in sizes):
            return tuple.__new__(cls, sizes)  # the common case (a numpy shape): no conversion
        items = []
        for i, s in enumerate(sizes):
            if isinstance(s, bool) or not hasattr(type(s), "__index__"):
                raise TypeError(f"minigrad.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')")
            items.append(operator.index(s))
        return tuple.__new__(cls, items)

    def numel(self):
        """The number of elements of a tensor of this shape (1 for the 0-d shape ``Size([])``)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return f"minigrad.Size({list(self)})"

    __str__ = __repr__

    def __format__(self, spec):
        # f"{x.shape}" gives the plain tuple "(2, 3)" (str() and repr() give "minigrad.Size([2, 3])"):
        # every error message in minigrad formats shapes this way, as STYLE.md asks (PyTorch's
        # f-string shows torch.Size here; a deliberate difference)
        return format(tuple(self), spec)

    def __getitem__(self, index):
        out = tuple.__getitem__(self, index)
        return tuple.__new__(Size, out) if type(index) is slice else out  # a slice of ints: no checks

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(tuple(self), tuple(other)))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(tuple(other), tuple(self)))

    def __mul__(self, n):
        return Size(tuple.__mul__(tuple(self), n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))
