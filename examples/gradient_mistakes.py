"""The twelve common gradient mistakes, each committed in a small training snippet, with what
minigrad says about it and what PyTorch does in the same situation.

    python examples/gradient_mistakes.py

No torch import is needed: PyTorch's behaviour is described in text.
"""
import warnings

import minigrad as mg

nn = mg.nn
F = nn.functional


def setup():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    x, y = mg.randn(16, 4), mg.randn(16, 1)
    return model, x, y, mg.optim.SGD(model.parameters(), lr=0.1)


def show(number, title, torch_says, run):
    print(f"\n{number:>2}. {title}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            said = run()
        except Exception as e:  # the diagnosis is the error message
            said = f"{type(e).__name__}: {e}"
    said = [said] if said else []
    said += [str(w.message) for w in caught
             if issubclass(w.category, (mg.debug.GradientMistakeWarning, UserWarning))
             and "Anomaly Detection has been enabled" not in str(w.message)]
    for s in said:
        print("   minigrad:", s.replace("\n", "\n             "))
    print("   PyTorch: ", torch_says)


def m1():
    model, x, y, opt = setup()
    with mg.debug.watch():
        h = model[1](model[0](x)).detach()          # the mistake: a detach in the forward
        loss = F.mse_loss(model[2](h), y)
        loss.backward()
    return str(mg.debug.explain(loss, model))


def m2():
    model, x, y, opt = setup()
    with mg.no_grad():                             # the mistake: forward left inside no_grad
        out = model(x)
    loss = F.mse_loss(out, y)
    loss.backward()


def m3():
    model, x, y, opt = setup()
    h = model[0](x).sigmoid()
    h.mul_(2.0)                                    # overwrites what sigmoid's backward needs
    h.sum().backward()


def m4():
    model, x, y, opt = setup()
    h = model[0](x)
    F.mse_loss(model[2](h.relu()), y).backward()
    return "h.grad is " + repr(h.grad)             # a non-leaf: .grad is not kept


def m5():
    model, x, y, opt = setup()
    with mg.debug.watch():
        for _ in range(3):                         # no opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()


def m6():
    model, x, y, opt = setup()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    loss.backward()                                # the graph was freed by the first


def m7():
    model, x, y, opt = setup()
    with mg.debug.watch():
        total = 0.0
        for _ in range(3):
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            total = total + loss                   # keeps every step's graph alive


def m8():
    for n in range(9, 10):
        mg.debug.warn_retrace("train_step", n, "argument 'x' shape (64, 4) -> (17, 4)")


def m9():
    model, x, y, opt = setup()
    with mg.debug.watch():
        scale = model(x).mean().item()             # a Python number, no graph
        loss = mg.tensor(scale) * 2
        loss.backward()


def m10():
    model, x, y, opt = setup()
    with mg.debug.watch():
        pred = model(x)                            # (16, 1)
        loss = ((pred - y.squeeze(1)) ** 2).mean() # (16, 1) - (16,) -> (16, 16)
        loss.backward()


def m11():
    model, x, y, opt = setup()
    with mg.debug.watch():
        logits = model(x)
        choice = logits.argmax(0).to(mg.float32)   # argmax has no gradient
        loss = (choice * 1.0).sum() + 0 * model[2].bias.sum()
        loss.backward()
    return str(mg.debug.explain(loss, model))


def m12():
    model, x, y, opt = setup()
    with mg.debug.watch():
        with mg.no_grad():
            model[0].bias.fill_(-50.0)             # every hidden unit dead
        loss = F.mse_loss(model(x), y)
        loss.backward()
    return str(mg.debug.explain(loss, model))


MISTAKES = [
    (1, "accidentally detaching a tensor", m1, "the first layer's .grad stays None, silently"),
    (2, "gradient tracking disabled unintentionally (no_grad)", m2,
     "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn (no cause)"),
    (3, "in-place update corrupting a value backward needs", m3,
     "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation"),
    (4, "expecting .grad on a non-leaf tensor", m4, "UserWarning on reading .grad; it is None"),
    (5, "forgetting to clear accumulated gradients", m5, "nothing: the gradients of the steps add up silently"),
    (6, "calling backward again after the graph was released", m6,
     "RuntimeError: Trying to backward through the graph a second time (no line of the first)"),
    (7, "keeping a graph alive across iterations (total_loss += loss)", m7, "nothing: memory grows"),
    (8, "triggering repeated tracing", m8, "torch.compile logs recompilations only with TORCH_LOGS=recompiles"),
    (9, "breaking the graph through a Python number (.item())", m9,
     "RuntimeError: element 0 of tensors does not require grad ... (no cause)"),
    (10, "shapes that broadcast silently ((N,1) with (N,))", m10,
     "nothing in user code (mse_loss alone warns about its own arguments)"),
    (11, "assuming every op is differentiable (argmax)", m11, "the parameters' .grad stays None, silently"),
    (12, "confusing a zero gradient with a missing one", m12,
     "zeros in .grad, nothing says why (dead ReLU) or that zero differs from None"),
]


def main():
    print("Each mistake below is committed on purpose; minigrad's diagnosis follows it.")
    for number, title, fn, torch_says in MISTAKES:
        show(number, title, torch_says, fn)


if __name__ == "__main__":
    main()
