"""PyTorch's NumPy-compatible argument aliases: every op of PyTorch's with a ``dim`` argument also
takes ``axis=``, and ``keepdim`` also ``keepdims=`` (``torch.sum(x, axis=1, keepdims=True)``)."""


def dim_alias(op, dim, axis, keepdim=None, keepdims=None, default=None, required=False):
    """(dim, keepdim) from the PyTorch names or their NumPy aliases; both names at once is an error,
    and so is neither where the op needs a dim (``required``)."""
    if axis is not None:
        if dim is not default:
            raise TypeError(f"{op}(): got both dim={dim!r} and its alias axis={axis!r}")
        dim = axis
    if keepdims is not None:
        if keepdim:
            raise TypeError(f"{op}(): got both keepdim=True and its alias keepdims={keepdims!r}")
        keepdim = keepdims
    if required and dim is None:
        raise TypeError(f"{op}() missing required argument 'dim' (or its alias 'axis')")
    return dim, keepdim


def accepts_axis(fn):
    """For a wrapper whose ``dim`` is followed by required arguments (gather(input, dim, index)):
    take ``axis=`` as ``dim=`` by keyword, as PyTorch does (``torch.gather(x, axis=1, index=i)``)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if "axis" in kwargs:
            if "dim" in kwargs:
                raise TypeError(f"{fn.__name__}(): got both dim= and its alias axis=")
            kwargs["dim"] = kwargs.pop("axis")
        return fn(*args, **kwargs)
    return wrapper
