"""Models and training steps the compiler tests share (traced the way tests/graph does)."""
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad import nn
from helpers import train_step  # noqa: F401 (the step the compiler tests import from here)


def mlp_dropout():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 10))


def mnist_mlp():
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                         nn.Linear(128, 10))


def cnn_batchnorm():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    from mnist_cnn import build_model
    return build_model()


def lenet():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(16 * 49, 10))


def make(build, make_opt, batch=16, seed=1):
    """(model, optimizer, step, x, y): the step after one eager step (which makes optimizer state)."""
    mg.manual_seed(0)
    x, y = mg.randn(batch, 1, 28, 28), mg.randint(0, 10, (batch,))
    mg.manual_seed(seed)
    m = build()
    opt = make_opt(m.parameters())
    step = train_step(m, opt)
    mg.manual_seed(7)
    step(x, y)
    return m, opt, step, x, y


def snapshot(m, opt):
    out = [(k, v.numpy().copy()) for k, v in m.state_dict().items()]
    for p in (p for g in opt.param_groups for p in g["params"]):
        for k, v in sorted(opt.state[p].items()):
            out.append((k, v.numpy().copy() if isinstance(v, mg.Tensor) else np.asarray(v)))
        if p.grad is not None:
            out.append(("grad", p.grad.numpy().copy()))
    return out


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
