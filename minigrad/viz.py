"""mg.viz: draw the autograd graph backward() walks (`mg.viz.draw(loss)`, as torchviz.make_dot does for
PyTorch): Graphviz DOT text, and PNG/SVG through matplotlib.

The picture is laid out here (no Graphviz binary needed), Sugiyama-style: longest-path layering
(leaves on top, every edge points down from an input to its consumer), dummy nodes on edges that
span several layers, barycentre ordering sweeps to reduce crossings, then x positions from the
label boxes' measured widths so that no two labels overlap.
"""
import functools

import numpy as np

from .autograd.function import AccumulateGrad
from ._optional import require

__all__ = ["draw", "Drawing"]

_LEAF, _OP, _SAVED, _ROOT = "leaf", "op", "saved", "root"
_COLORS = {_LEAF: "#cfe8ff", _OP: "#eeeeee", _SAVED: "#ffe2b8", _ROOT: "#c8f0c8"}
_FONT = 9.0        # points
_PAD = (6.0, 4.0)  # label box padding (points): x, y
_GAP = 14.0        # horizontal gap between boxes (points)
_LAYER = 48.0      # vertical distance between layers (points)


def _dtype_name(dt):
    return {"float32": "f32", "float64": "f64", "float16": "f16", "int64": "i64", "int32": "i32",
            "bool": "bool"}.get(str(dt), str(dt))


def _shape_str(shape, dtype):
    return f"{_dtype_name(dtype)}[{','.join(str(s) for s in shape)}]"


class Drawing:
    """The graph reachable from some tensors: `.nodes` (id -> (kind, label)), `.edges` (src, dst),
    `.dot` (Graphviz text) and `.save(path)` for .dot, .png or .svg."""

    def __init__(self, nodes, edges):
        self.nodes = nodes      # dict: id -> (kind, label), in a deterministic order
        self.edges = edges      # list of (src id, dst id): src is an input of dst
        self._layout = None

    @property
    def dot(self):
        """The drawing as Graphviz DOT source."""
        lines = ["digraph minigrad {", '  node [fontname="Helvetica", fontsize=10, shape=box, style=filled];']
        for nid, (kind, label) in self.nodes.items():
            shape = "box" if kind != _SAVED else "note"
            esc = label.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            lines.append(f'  {nid} [label="{esc}", fillcolor="{_COLORS[kind]}", shape={shape}];')
        for s, d in self.edges:
            style = " [style=dashed]" if self.nodes[s][0] == _SAVED else ""
            lines.append(f"  {s} -> {d}{style};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _repr_svg_(self):  # notebooks show the picture
        import io
        buf = io.StringIO()
        self._figure().savefig(buf, format="svg")
        return buf.getvalue()

    # -- layout ---------------------------------------------------------------------------------
    def layout(self):
        """Box of each node's label in points: id -> (x_centre, y_centre, width, height)."""
        if self._layout is None:
            self._layout = _layout(self.nodes, self.edges)
        return self._layout

    def _figure(self):
        matplotlib = require("matplotlib", feature="drawing a graph (mg.viz: .svg(), .png(), .save())")
        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure
        from matplotlib.patches import FancyArrowPatch, Rectangle
        boxes = self.layout()
        routes = boxes.routes
        # the frame holds every box and every edge (a long edge may bend outside the boxes)
        pts = [p for route in routes.values() for p in route]
        x0 = min([x - w / 2 for x, y, w, h in boxes.values()] + [p[0] for p in pts]) - 10
        x1 = max([x + w / 2 for x, y, w, h in boxes.values()] + [p[0] for p in pts]) + 10
        y0 = min([y - h / 2 for x, y, w, h in boxes.values()] + [p[1] for p in pts]) - 10
        y1 = max([y + h / 2 for x, y, w, h in boxes.values()] + [p[1] for p in pts]) + 10
        fig = Figure(figsize=((x1 - x0) / 72, (y1 - y0) / 72), dpi=110)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.axis("off")
        for (s, d), pts in routes.items():
            xs, ys = zip(*pts)
            dashed = self.nodes[s][0] == _SAVED
            if len(pts) > 2:
                ax.plot(xs[:-1], ys[:-1], color="#555555", lw=0.8, ls="--" if dashed else "-")
            ax.add_patch(FancyArrowPatch(pts[-2], pts[-1], arrowstyle="-|>", mutation_scale=8,
                                         color="#555555", lw=0.8, ls="--" if dashed else "-",
                                         shrinkA=0, shrinkB=0))
        for nid, (kind, label) in self.nodes.items():
            x, y, w, h = boxes[nid]
            ax.add_patch(Rectangle((x - w / 2, y - h / 2), w, h, facecolor=_COLORS[kind],
                                   edgecolor="#333333", lw=0.7))
            ax.text(x, y, label, ha="center", va="center", fontsize=_FONT, family="DejaVu Sans")
        return fig

    def text_extents(self):
        """The drawn label boxes as matplotlib renders them (display units): id -> (x0, y0, x1, y1).
        Tests use it to check that no two labels overlap in the actual picture."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        fig = self._figure()
        FigureCanvasAgg(fig).draw()
        out = {}
        patches = [p for p in fig.axes[0].patches if type(p).__name__ == "Rectangle"]
        for nid, p in zip(self.nodes, patches):
            b = p.get_window_extent()
            out[nid] = (b.x0, b.y0, b.x1, b.y1)
        return out

    def save(self, path):
        """Write `.dot` text, or a `.png` / `.svg` picture drawn with matplotlib."""
        path = str(path)
        if path.endswith(".dot") or path.endswith(".gv"):
            with open(path, "w") as f:
                f.write(self.dot)
            return path
        if not (path.endswith(".png") or path.endswith(".svg")):
            raise ValueError(f"viz.save: unsupported file type {path!r} (use .dot, .png or .svg)")
        require("matplotlib", feature="viz.save: drawing PNG/SVG (.dot files need nothing)")
        self._figure().savefig(path)
        return path

    def __repr__(self):
        return f"<minigrad.viz.Drawing: {len(self.nodes)} nodes, {len(self.edges)} edges>"


def draw(roots, params=None, show_saved=False):
    """The autograd graph reachable from `roots` (a tensor or several), as `torchviz.make_dot`.

    Args:
        roots: a Tensor or a sequence of Tensors (e.g. the loss); a tensor outside any graph
            (no grad_fn) is drawn as its one node, as torchviz does.
        params: optional dict name -> Tensor (``dict(model.named_parameters())``): leaves are
            labelled with these names.
        show_saved: also draw the tensors each node saved for backward (dashed edges).

    Returns:
        a Drawing with ``.dot`` (Graphviz text, the same for the same graph) and ``.save(path)``.

    Example:
        >>> y = (a + b) * c
        >>> mg.viz.draw(y, params={"a": a, "b": b, "c": c}).save("graph.png")
    """
    from .tensor import Tensor
    if isinstance(roots, Tensor):
        roots = [roots]
    elif not isinstance(roots, (list, tuple)) or not roots:
        raise TypeError(f"viz.draw: roots must be a Tensor or a non-empty list/tuple of Tensors, got "
                        f"{type(roots).__name__}" + (" (wrap the array: mg.tensor(a))" if hasattr(roots, "__array__") else ""))
    for i, r in enumerate(roots):
        if not isinstance(r, Tensor):
            raise TypeError(f"viz.draw: roots[{i}] must be a Tensor, got {type(r).__name__}")
    if params is not None and not hasattr(params, "items"):
        raise TypeError(f"viz.draw: params must be a dict name -> Tensor (dict(model.named_parameters())), "
                        f"got {type(params).__name__}")
    names = {id(t): n for n, t in (params or {}).items()}
    nodes, edges, ids = {}, [], {}

    def nid(key, kind, label):
        if key not in ids:
            ids[key] = f"n{len(ids)}"
            nodes[ids[key]] = (kind, label)
        return ids[key]

    def leaf_label(var, shape, dtype):
        name = names.get(id(var)) if var is not None else None
        return (name + "\n" if name else "") + _shape_str(shape, dtype)

    stack = []
    for i, r in enumerate(roots):
        if r.grad_fn is None:  # a leaf, or a tensor outside any graph: drawn as its one node, as torchviz does
            nid(("leaf", id(r)), _LEAF, leaf_label(r, r.shape, r.dtype))
            continue
        label = f"{r.grad_fn.name()}\n{_shape_str(r.shape, r.dtype)}"
        if r.grad_fn not in ids:
            stack.append(r.grad_fn)
        nid(r.grad_fn, _OP, label)
    seen = set(stack)
    # depth-first in edge order: the numbering, and so the DOT text, depends only on the graph
    while stack:
        node = stack.pop()
        me = ids[node]
        for e in node._edges:
            child, _, shape, dtype = e
            if child is None:
                continue
            if isinstance(child, AccumulateGrad):
                c = nid(child, _LEAF, leaf_label(child.variable, shape, dtype))
            else:
                c = nid(child, _OP, f"{child.name()}\n{_shape_str(shape, dtype)}")
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
            if (c, me) not in edges:
                edges.append((c, me))
        if show_saved:
            saved = getattr(node, "_saved", ())
            if isinstance(saved, (list, tuple)):
                for j, (kind, value, _, _) in enumerate(saved):
                    arr = value[0] if kind == 1 else getattr(value, "_data", value)
                    if isinstance(arr, np.ndarray):
                        s = nid(("saved", id(node), j), _SAVED, "saved\n" + _shape_str(arr.shape, arr.dtype))
                        edges.append((s, me))
    return Drawing(nodes, edges)


# -- Sugiyama-style layout ----------------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def _line_width(line):
    """Width in points of one line of label text (matplotlib's own metrics; op names and shapes
    repeat, so each distinct line is measured once)."""
    from matplotlib.textpath import TextPath
    return TextPath((0, 0), line or " ", prop=_font()).get_extents().width


@functools.lru_cache(maxsize=1)
def _font():
    from matplotlib.font_manager import FontProperties
    return FontProperties(family="DejaVu Sans", size=_FONT)


def _text_size(label):
    """Width and height in points of `label` at the drawing's font size (matplotlib's own metrics)."""
    try:
        lines = label.split("\n")
        w = max(_line_width(ln) for ln in lines)
        h = _FONT * 1.25 * len(lines)
    except ImportError:  # DOT only: a character-count estimate is enough
        lines = label.split("\n")
        w, h = 0.6 * _FONT * max(len(ln) for ln in lines), _FONT * 1.25 * len(lines)
    return w + 2 * _PAD[0], h + 2 * _PAD[1]


def _layout(nodes, edges):
    ins = {n: [] for n in nodes}
    outs = {n: [] for n in nodes}
    for s, d in edges:
        ins[d].append(s)
        outs[s].append(d)
    # longest-path layering, counted from the output: a node sits one layer above its highest
    # consumer, so every edge points down and each parameter sits right above the op that reads it
    order = _topo(nodes, ins, outs)
    depth = {}
    for n in reversed(order):
        depth[n] = 1 + max((depth[d] for d in outs[n]), default=-1)
    top = max(depth.values())
    layer = {n: top - depth[n] for n in nodes}
    # dummy nodes on long edges, so ordering and routing see them
    chains = {}
    vins = {n: list(v) for n, v in ins.items()}
    vouts = {n: list(v) for n, v in outs.items()}
    vlayer = dict(layer)
    k = 0
    for s, d in edges:
        if layer[d] - layer[s] > 1:
            prev, chain = s, [s]
            vouts[s].remove(d)
            vins[d].remove(s)
            for lv in range(layer[s] + 1, layer[d]):
                dm = ("dummy", k)
                k += 1
                vlayer[dm] = lv
                vins[dm], vouts[dm] = [prev], []
                vouts[prev].append(dm)
                prev = dm
                chain.append(dm)
            vouts[prev].append(d)
            vins[d].append(prev)
            chain.append(d)
            chains[(s, d)] = chain
    nl = max(vlayer.values()) + 1
    rows = [[] for _ in range(nl)]
    for n in list(nodes) + [n for n in vlayer if n not in nodes]:
        rows[vlayer[n]].append(n)
    # barycentre sweeps, down and up, then adjacent swaps; the ordering with the fewest edge
    # crossings seen is kept (a later sweep can undo a good one: shared parameters feeding many
    # layers, as in an unrolled recurrence, pull their consumers back and forth)
    best, best_x = [list(r) for r in rows], _crossings(rows, vouts)
    for it in range(12):
        rng = range(1, nl) if it % 2 == 0 else range(nl - 2, -1, -1)
        for r in rng:
            nbrs = vins if it % 2 == 0 else vouts
            pos = {n: i for i, n in enumerate(rows[r - 1 if it % 2 == 0 else r + 1])}
            cur = {n: i for i, n in enumerate(rows[r])}

            def bary(n):
                ps = [pos[m] for m in nbrs[n] if m in pos]
                return sum(ps) / len(ps) if ps else cur[n]
            rows[r].sort(key=lambda n: (bary(n), cur[n]))
        _transpose(rows, vins, vouts)
        c = _crossings(rows, vouts)
        if c < best_x:
            best, best_x = [list(r) for r in rows], c
    rows = best
    size = {n: _text_size(nodes[n][1]) if n in nodes else (2.0, 2.0) for n in vlayer}
    # x: pack each row left to right, then relax toward neighbours' centres keeping the order
    x = {}
    for row in rows:
        cx = 0.0
        for n in row:
            w = size[n][0]
            x[n] = cx + w / 2
            cx += w + _GAP
    for it in range(30):
        for row in rows:
            want = {}
            for n in row:
                nb = vins[n] + vouts[n]
                want[n] = sum(x[m] for m in nb) / len(nb) if nb else x[n]
            # place in order at the wanted centre, pushing right to keep the gaps, then left
            xs = [want[n] for n in row]
            for i in range(1, len(row)):
                lo = xs[i - 1] + (size[row[i - 1]][0] + size[row[i]][0]) / 2 + _GAP
                xs[i] = max(xs[i], lo)
            for i in range(len(row) - 2, -1, -1):
                hi = xs[i + 1] - (size[row[i + 1]][0] + size[row[i]][0]) / 2 - _GAP
                xs[i] = min(xs[i], hi)
            # the backward pass may have broken the left side: one more forward pass restores gaps
            for i in range(1, len(row)):
                lo = xs[i - 1] + (size[row[i - 1]][0] + size[row[i]][0]) / 2 + _GAP
                xs[i] = max(xs[i], lo)
            for n, v in zip(row, xs):
                x[n] = v
    # y: layer 0 on top; the row height is its tallest box
    heights = [max(size[n][1] for n in row) for row in rows]
    y, cy = {}, 0.0
    for r, row in enumerate(rows):
        for n in row:
            y[n] = -cy
        cy += heights[r] + _LAYER
    boxes = {n: (x[n], y[n], size[n][0], size[n][1]) for n in nodes}
    routes = {}
    for s, d in edges:
        chain = chains.get((s, d), [s, d])
        pts = [(x[s], y[s] - size[s][1] / 2)]
        pts += [(x[m], y[m]) for m in chain[1:-1]]
        pts.append((x[d], y[d] + size[d][1] / 2))
        routes[(s, d)] = pts
    return _Boxes(boxes, routes, best_x)


def _inversions(seq):
    """Pairs i < j with seq[i] > seq[j] (a Fenwick tree over the values 0..max)."""
    if not seq:
        return 0
    tree = [0] * (max(seq) + 2)
    inv = 0
    for k, v in enumerate(seq):
        i, below = v + 1, 0          # how many earlier values are <= v
        while i > 0:
            below += tree[i]
            i -= i & -i
        inv += k - below
        i = v + 1
        while i < len(tree):
            tree[i] += 1
            i += i & -i
    return inv


def _layer_crossings(upper, lower, vouts):
    pos = {n: i for i, n in enumerate(lower)}
    ends = sorted((i, pos[d]) for i, n in enumerate(upper) for d in vouts[n] if d in pos)
    return _inversions([d for _, d in ends])


def _crossings(rows, vouts):
    """Edge crossings of the layered drawing: between each pair of adjacent rows, edge pairs whose
    ends are in opposite orders."""
    return sum(_layer_crossings(rows[r], rows[r + 1], vouts) for r in range(len(rows) - 1))


def _transpose(rows, vins, vouts, rounds=4):
    """Swap neighbours within a row while that lowers the crossings with the rows above and below."""
    def local(r):
        c = _layer_crossings(rows[r - 1], rows[r], vouts) if r > 0 else 0
        return c + (_layer_crossings(rows[r], rows[r + 1], vouts) if r + 1 < len(rows) else 0)
    for _ in range(rounds):
        improved = False
        for r, row in enumerate(rows):
            if len(row) < 2 or len(row) > 200:  # wide rows: the barycentre order is enough
                continue
            c = local(r)
            for i in range(len(row) - 1):
                row[i], row[i + 1] = row[i + 1], row[i]
                c2 = local(r)
                if c2 < c:
                    c, improved = c2, True
                else:
                    row[i], row[i + 1] = row[i + 1], row[i]
        if not improved:
            break


class _Boxes(dict):
    def __init__(self, boxes, routes, crossings):
        super().__init__(boxes)
        self.routes = routes
        self.crossings = crossings  # edge crossings between adjacent rows (dummies included)


def _topo(nodes, ins, outs):
    indeg = {n: len(ins[n]) for n in nodes}
    ready = [n for n in nodes if indeg[n] == 0]
    order = []
    while ready:
        n = ready.pop(0)
        order.append(n)
        for d in outs[n]:
            indeg[d] -= 1
            if indeg[d] == 0:
                ready.append(d)
    return order
