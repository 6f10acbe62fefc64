"""Draw the documentation's figures from the graphs minigrad actually builds.

    python docs/figures/make_figures.py          # writes docs/figures/*.png

Every picture is made here from minigrad objects (grad_fn, next_functions, .grad, byte counts),
never by hand, so after a change to the engine the figures are regenerated with the command
above. Needs matplotlib (the ``docs`` or ``examples`` extra).
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # run from a checkout without installing

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

import minigrad as mg  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402

NODE = "#dbe9f6"
LEAF = "#e3f1df"
DATA = "#eeeeee"


def graph_of(root):
    """The nodes reachable from ``root`` (a grad_fn) with their depth (longest path from root)
    and the edges (consumer, producer)."""
    depth, stack = {root: 0}, [root]
    order = [root]
    while stack:  # longest-path depths by relaxation: fine for the small graphs drawn here
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is None:
                continue
            if child not in depth:
                order.append(child)
            if depth.get(child, -1) < depth[node] + 1:
                depth[child] = depth[node] + 1
                stack.append(child)
    # one edge per (node, input): an input used twice by one op gives two equal edges
    edges = [(n, child) for n in order for child, _ in n.next_functions if child is not None]
    return order, depth, edges


def draw_graph(ax, root, label, title=None, note=None, shrink=14):
    """Draw the backward graph under ``root`` with leaves at the bottom, arrows in the forward
    direction (producer -> consumer). ``label(node)`` gives each box's text, ``note(node)``
    (optional) a second line in smaller type."""
    order, depth, edges = graph_of(root)
    levels = {}
    for n in order:
        levels.setdefault(depth[n], []).append(n)
    top = max(levels)
    pos = {}
    for d, nodes in levels.items():
        for i, n in enumerate(nodes):
            pos[n] = ((i + 1) / (len(nodes) + 1), 1 - d / (top + 1) - 0.5 / (top + 1))
    for consumer, producer in dict.fromkeys(edges):  # each distinct edge once, however often listed
        for k in range(edges.count((consumer, producer))):  # x * x: two arrows, bent apart
            rad = 0.0 if k == 0 else 0.3 * (-1) ** k
            ax.annotate("", xy=pos[consumer], xytext=pos[producer],
                        arrowprops=dict(arrowstyle="-|>", color="#555555", lw=1.2, shrinkA=shrink,
                                        shrinkB=shrink, connectionstyle=f"arc3,rad={rad}"))
    for n, (x, y) in pos.items():
        text = label(n) + (f"\n{note(n)}" if note and note(n) else "")
        colour = LEAF if n.name() == "AccumulateGrad" else NODE
        ax.text(x, y, text, ha="center", va="center", fontsize=8.5, family="monospace",
                bbox=dict(boxstyle="round,pad=0.4", fc=colour, ec="#4a6a8a"))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=11)


def worked_example(path):
    a = mg.tensor(2.0, requires_grad=True)
    b = mg.tensor(3.0, requires_grad=True)
    c = mg.tensor(4.0, requires_grad=True)
    s = a + b
    y = s * c
    s.retain_grad()
    names = {id(a): "a", id(b): "b", id(c): "c"}
    outputs = {y.grad_fn: y, s.grad_fn: s}
    y.backward()

    def label(n):
        if n.name() == "AccumulateGrad":
            v = n.variable
            return f"AccumulateGrad\n{names[id(v)]} = {v.item():g}"
        t = outputs[n]
        return f"{n.name()}\n{'y' if t is y else 's'} = {t.item():g}"

    def note(n):
        t = n.variable if n.name() == "AccumulateGrad" else outputs[n]
        g = 1.0 if t is y else t.grad.item()
        return f"dy/d{names.get(id(t), 'y' if t is y else 's')} = {g:g}"

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    draw_graph(ax, y.grad_fn, label, note=note, shrink=24,
               title="y = (a + b) * c: forward values, and the gradient each node receives")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def classifier():
    """The one-hidden-layer softmax classifier of docs/layer-diagram.md, written out in ops."""
    mg.manual_seed(0)
    x = mg.randn(8, 784)
    target = mg.randint(0, 10, (8,))
    W1 = (mg.randn(784, 32) * 0.05).requires_grad_()
    b1 = mg.zeros(32, requires_grad=True)
    W2 = (mg.randn(32, 10) * 0.05).requires_grad_()
    b2 = mg.zeros(10, requires_grad=True)
    h = (x @ W1 + b1).relu()
    p = (h @ W2 + b2).softmax(dim=1)
    loss = -p[mg.arange(8), target].log().mean()
    # the nodes hold their leaves weakly: return the leaves too, or they die with this frame
    return loss, {id(W1): "W1", id(b1): "b1", id(W2): "W2", id(b2): "b2"}, (W1, b1, W2, b2)


def layer_diagram(path):
    loss, names, _leaves = classifier()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 6.2), gridspec_kw={"width_ratios": [1, 2.2]})
    # the diagram people draw: two boxes
    for y, text in ((0.38, "hidden layer\n784 → 32, ReLU"), (0.68, "output layer\n32 → 10, softmax")):
        left.add_patch(FancyBboxPatch((0.15, y - 0.08), 0.7, 0.16, boxstyle="round,pad=0.02",
                                      fc=NODE, ec="#4a6a8a"))
        left.text(0.5, y, text, ha="center", va="center", fontsize=10)
    left.annotate("", xy=(0.5, 0.6), xytext=(0.5, 0.46), arrowprops=dict(arrowstyle="-|>", lw=1.2))
    left.text(0.5, 0.9, "the layer diagram", ha="center", fontsize=11)
    left.text(0.5, 0.15, "x (8 images)", ha="center", fontsize=9)
    left.annotate("", xy=(0.5, 0.3), xytext=(0.5, 0.18), arrowprops=dict(arrowstyle="-|>", lw=1.2))
    left.set_xlim(0, 1)
    left.set_ylim(0, 1)
    left.axis("off")

    def label(n):
        if n.name() == "AccumulateGrad":
            return f"AccumulateGrad\n{names[id(n.variable)]}"
        return n.name()
    draw_graph(right, loss.grad_fn, label, title="the graph minigrad records (walked from loss.grad_fn)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def accumulation(path):
    x = mg.tensor(3.0, requires_grad=True)
    y = x * x + x.sin()
    y.backward()

    def label(n):
        return "AccumulateGrad\nx = 3" if n.name() == "AccumulateGrad" else n.name()

    fig, ax = plt.subplots(figsize=(5.4, 3.8))
    draw_graph(ax, y.grad_fn, label,
               title=f"y = x*x + sin(x): three edges into x's node; x.grad = {x.grad.item():.4f}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def recurrent_flow(forget_bias=None, cell="LSTM", steps=100, hidden=32):
    """|d loss / d x_t| per time step (mg.debug.gradient_flow) for a recurrent layer read out at the
    last step: docs/sequence-models.md's comparison (the same sequence for every layer)."""
    import warnings
    nn = mg.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = getattr(nn, cell)(8, hidden)
            self.head = nn.Linear(hidden, 1)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(out[-1])

    mg.manual_seed(0)
    x = mg.randn(steps, 4, 8)
    mg.manual_seed(0)                        # the same initial weights as the page's runs
    net = Net()
    if forget_bias is not None:  # LSTM gates are (input, forget, cell, output) along bias_hh
        with mg.no_grad():
            net.rnn.bias_hh_l0[hidden:2 * hidden] = forget_bias
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the vanishing ones warn: the figure shows it
        with mg.debug.gradient_flow(net) as flow:
            net(x).sum().backward()
    return flow.layers[id(net.rnn)].step_norms


def gradient_flow_rnn_lstm(path):
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for label, kw in (("nn.RNN (tanh)", dict(cell="RNN")), ("nn.LSTM, default init", dict()),
                      ("nn.LSTM, forget-gate bias 3", dict(forget_bias=3.0))):
        s = recurrent_flow(**kw)
        ax.plot(range(len(s)), s, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("time step t (the loss reads the last step, t = 99)")
    ax.set_ylabel("|d loss / d x_t|")
    ax.set_title("gradient reaching each input step (mg.debug.gradient_flow)", fontsize=11)
    ax.legend(fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def lstm_unrolled(path):
    """docs/sequence-models.md: nn.LSTMCell applied 3 times, drawn by mg.viz.draw (each weight one node)."""
    nn = mg.nn
    mg.manual_seed(0)
    cell = nn.LSTMCell(4, 5)
    x = mg.randn(3, 2, 4)
    h, c = mg.zeros(2, 5), mg.zeros(2, 5)
    for t in range(3):
        h, c = cell(x[t], (h, c))
    mg.viz.draw(h.sum(), params=dict(cell.named_parameters())).save(str(path))


FIGURES = {"worked-example.png": worked_example, "layer-diagram.png": layer_diagram,
           "accumulation.png": accumulation, "gradient-flow-rnn-lstm.png": gradient_flow_rnn_lstm,
           "graph_lstm_unrolled.png": lstm_unrolled}

if __name__ == "__main__":
    for name, make in FIGURES.items():
        make(HERE / name)
        print(f"wrote {HERE / name}")
