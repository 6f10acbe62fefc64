"""The worked example of every computational-graph article: y = (a + b) * c.

Forward: s = a + b = 5, y = s * c = 20.
Backward: dy/dc = s = 5, dy/ds = c = 4, and since ds/da = ds/db = 1, dy/da = dy/db = 4.
"""
import minigrad as mg


def show(node, depth=0):
    """Print the backward graph under node, one line per node."""
    print("  " * depth + node.name())
    for child, _ in node.next_functions:
        if child is not None:
            show(child, depth + 1)


def main():
    a = mg.tensor(2.0, requires_grad=True)
    b = mg.tensor(3.0, requires_grad=True)
    c = mg.tensor(4.0, requires_grad=True)
    s = a + b
    y = s * c
    print("forward: s = a + b =", s.item(), " y = s * c =", y.item())
    print("the graph backward() walks:")
    show(y.grad_fn, 1)
    y.backward()
    print("gradients: dy/da =", a.grad.item(), " dy/db =", b.grad.item(), " dy/dc =", c.grad.item())
    print(y.item(), a.grad.item(), b.grad.item(), c.grad.item())


if __name__ == "__main__":
    main()
