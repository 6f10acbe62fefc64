"""Draw the autograd graphs shown in docs/graphs.md (no Graphviz needed: matplotlib only).

    python examples/draw_graph.py            # writes docs/figures/graph_worked_example.png, graph_mlp.png
"""
from pathlib import Path

import minigrad as mg
import minigrad.nn as nn


def main(out=Path(__file__).resolve().parents[1] / "docs" / "figures"):
    out.mkdir(parents=True, exist_ok=True)
    a, b, c = (mg.tensor(v, requires_grad=True) for v in (2.0, 3.0, 4.0))
    y = (a + b) * c
    mg.viz.draw(y, params={"a": a, "b": b, "c": c}).save(out / "graph_worked_example.png")
    mg.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                          nn.Linear(128, 10))
    loss = nn.functional.cross_entropy(model(mg.randn(32, 1, 28, 28)), mg.randint(0, 10, (32,)))
    mg.viz.draw(loss, params=dict(model.named_parameters())).save(out / "graph_mlp.png")
    print("wrote", out / "graph_worked_example.png", "and", out / "graph_mlp.png")


if __name__ == "__main__":
    main()
