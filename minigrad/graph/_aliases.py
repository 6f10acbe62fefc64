"""Ops and parameter types renamed, moved or merged since graph files were first saved: mg.load_graph
maps their old names to today's, so a file saved before still loads (and runs the same computation).

OPS: (old registry key, old op name) -> (today's registry key, a rewrite of the equation's arguments
and recorded needs_input_grad, or None when they are unchanged). NAMEDTUPLES: old parameter type ->
(its number of fields, a function of those fields giving today's value). Nothing here imports code
named in a file: the keys are compared as strings and the targets are looked up in the registry.
"""


def _conv_weight(args, need):
    """ConvWeightNd(x, g, geo, groups) (the weight gradient alone) is ConvolutionBackward(g, x, None,
    None, geo, groups, (False, True, False))."""
    x, g, geo, groups = args
    new_need = None if need is None else (need[1], need[0], False, False, False, False, False)
    return [g, x, None, None, geo, groups, (False, True, False)], new_need


def _max_pool(return_indices):
    """max_pool2d's MaxPool2DWithIndices(x, geo) (no indices) and the N-d MaxPoolNd(x, geo) (with them)
    are MaxPool(x, geo, return_indices)."""
    def rewrite(args, need):
        x, geo = args
        return [x, geo, return_indices], None if need is None else tuple(need) + (False,)
    return rewrite


_CONV, _POOL = "minigrad.ops.conv.", "minigrad.ops.pooling."

OPS = {
    # conv2d's and the N-d family's classes merged into one family (ops/conv.py)
    (_CONV + "Convolution", "conv2d"): (_CONV + "Convolution", None),
    (_CONV + "ConvolutionBackward", "conv2d_backward"): (_CONV + "ConvolutionBackward", None),
    ("minigrad.ops.conv_nd.ConvolutionNd", "convolution"): (_CONV + "Convolution", None),
    ("minigrad.ops.conv_nd.ConvTransposeNd", "conv_transpose"): (_CONV + "ConvTranspose", None),
    ("minigrad.ops.conv_nd.ConvWeightNd", "convolution_weight"): (_CONV + "ConvolutionBackward", _conv_weight),
    # avg_pool2d's and the N-d average pooling merged; the N-d max ops moved (ops/pooling.py)
    (_POOL + "AvgPool2D", "avg_pool2d"): (_POOL + "AvgPool", None),
    (_POOL + "AvgPool2DBackward", "avg_pool2d_backward"): (_POOL + "AvgPoolBackward", None),
    ("minigrad.ops.pooling_nd.AvgPoolNd", "avg_pool"): (_POOL + "AvgPool", None),
    ("minigrad.ops.pooling_nd.AvgPoolNdBackward", "avg_pool_backward"): (_POOL + "AvgPoolBackward", None),
    ("minigrad.ops.pooling_nd.MaxPoolNd", "max_pool"): (_POOL + "MaxPool", _max_pool(True)),
    ("minigrad.ops.pooling_nd.AdaptiveMaxPoolNd", "adaptive_max_pool"): (_POOL + "AdaptiveMaxPoolNd", None),
    ("minigrad.ops.pooling_nd.MaxUnpoolNd", "max_unpool"): (_POOL + "MaxUnpoolNd", None),
    # max_pool2d's 2-D classes and the N-d MaxPoolNd merged into one max-pool family (ops/pooling.py)
    (_POOL + "MaxPool2DWithIndices", "max_pool2d"): (_POOL + "MaxPool", _max_pool(False)),
    (_POOL + "MaxPool2DWithIndicesBackward", "max_pool2d_backward"): (_POOL + "MaxPoolBackward", None),
    (_POOL + "MaxPoolNd", "max_pool"): (_POOL + "MaxPool", _max_pool(True)),
}


def _flat_geom(N, C, H, W, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, OH, OW):
    """conv2d's old flat 2-D window geometry as the family's N-d one (the ops check its values)."""
    from ..ops.conv import _GeomNd
    return _GeomNd(N, C, (H, W), (kh, kw), (sh, sw), (dh, dw), ((pt, pb), (pl, pr)), (OH, OW))


def _nd_geom(*fields):
    from ..ops.conv import _GeomNd
    return _GeomNd(*fields)


NAMEDTUPLES = {
    "minigrad.ops.conv._Geom": (16, _flat_geom),
    "minigrad.ops.conv_nd._GeomNd": (8, _nd_geom),
}
