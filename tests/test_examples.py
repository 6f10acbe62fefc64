"""Smoke runs of every example (short runs on the shared data), so they cannot rot.

Each training example runs for a couple of epochs on a few hundred images as a subprocess;
the tests check the exit status, the checkpoint and the PNG, and that ``--resume`` after an
interrupted run (``--stop-after``) follows exactly the trajectory of an uninterrupted one.
Skipped when the shared data folder (``$MINIGRAD_DATA`` or ``<repo>/../shared/data``) is absent.
"""
import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest

import minigrad as mg

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
DATA = Path(os.environ["MINIGRAD_DATA"]) if os.environ.get("MINIGRAD_DATA") else REPO.parent / "shared" / "data"

needs_mnist = pytest.mark.skipif(not (DATA / "mnist-10k").is_dir(),
                                 reason=f"shared MNIST data not found at {DATA / 'mnist-10k'}")
needs_fashion = pytest.mark.skipif(not (DATA / "fashion-mnist").is_dir(),
                                   reason=f"shared Fashion-MNIST data not found at {DATA / 'fashion-mnist'}")


def run(script, *args, env=None, timeout=120):
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, f"{script} {args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def history(out):
    return mg.load(out / "checkpoint.mg")["history"]


def check_resume(tmp_path, script, *args):
    """An uninterrupted 2-epoch run == 1 epoch, stop, --resume to 2."""
    full, split = tmp_path / "full", tmp_path / "split"
    common = ("--data", DATA, "--epochs", 2, "--no-progress", *args)
    out = run(script, *common, "--out", full)
    assert "final test accuracy:" in out
    assert (full / "checkpoint.mg").is_file() and (full / "curves.png").stat().st_size > 1000
    ckpt = mg.load(full / "checkpoint.mg")
    assert ckpt["epoch"] == 2 and set(ckpt) >= {"model", "optimizer", "epoch", "history"}
    assert len(ckpt["history"]["train_loss"]) == 2

    out = run(script, *common, "--out", split, "--stop-after", 1)
    assert "stopping after epoch 1" in out and history(split)["train_loss"] == history(full)["train_loss"][:1]
    out = run(script, *common, "--out", split, "--resume")
    assert "resumed from" in out and "epoch   1/2" not in out and "epoch   2/2" in out
    assert history(split)["train_loss"] == history(full)["train_loss"]
    assert history(split)["test_acc"] == history(full)["test_acc"]
    return out


@needs_mnist
def test_mnist_mlp_runs_and_resumes_identically(tmp_path):
    out = check_resume(tmp_path, "mnist_mlp.py", "--limit", 2000, "--test-limit", 2000)
    acc = float(out.split("final test accuracy: ")[1].split("%")[0])
    assert acc > 70  # 2 epochs on 2000 images: ~85%; a broken pipeline stays near 10%


@needs_mnist
def test_mnist_cnn_runs_and_resumes_identically(tmp_path):
    # BatchNorm running stats and the Dropout RNG must both come back from the checkpoint
    check_resume(tmp_path, "mnist_cnn.py", "--limit", 256, "--test-limit", 500)


def _common():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import _common
    finally:
        sys.path.remove(str(EXAMPLES))
    return _common


def _epoch_lrs(sched, opt, epochs):
    lrs = []
    for _ in range(epochs):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


def test_resume_to_a_longer_run_rebuilds_the_schedule():
    # issue 32 item 7: --epochs 2 then --epochs 4 --resume ran epoch 3 at lr 0 (the 2-epoch cosine's end)
    common = _common()

    def make(epochs):
        opt = mg.optim.Adam([mg.nn.Parameter(mg.ones(2))], lr=2e-3)
        return opt, mg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)

    opt, sched = make(4)
    uninterrupted = _epoch_lrs(sched, opt, 4)
    opt, sched = make(2)
    first = _epoch_lrs(sched, opt, 2)
    saved_opt, saved_sched = opt.state_dict(), sched.state_dict()
    assert opt.param_groups[0]["lr"] == 0.0  # where the short schedule ends
    opt, sched = make(4)  # the resumed process: built for 4 epochs, then the checkpoint loaded
    fresh = copy.deepcopy(sched.state_dict())
    opt.load_state_dict(saved_opt)
    sched.load_state_dict(saved_sched)
    common.rebuild_schedule(sched, fresh, 2)
    assert sched.T_max == 4 and sched.last_epoch == 2
    rest = _epoch_lrs(sched, opt, 2)
    assert rest == uninterrupted[2:] and min(rest) > 0  # the same numbers, bit for bit
    assert first != uninterrupted[:2]  # why the result is not a fresh 4-epoch run's (the note says so)
    assert "epochs 3-4 use the learning rates of an uninterrupted 4-epoch run" in common.resume_note(2, 4, 2)


@needs_mnist
def test_example_resume_to_more_epochs_uses_the_new_schedule(tmp_path):
    common = ("--data", DATA, "--limit", 128, "--test-limit", 100, "--no-progress")
    run("mnist_mlp.py", *common, "--epochs", 1, "--out", tmp_path / "split")
    out = run("mnist_mlp.py", *common, "--epochs", 3, "--resume", "--out", tmp_path / "split")
    assert out.startswith("config: minigrad ")  # the one-line config first (issue 32 item 6)
    assert "learning-rate schedule is rebuilt for 3: epochs 2-3 use" in out
    # an uninterrupted --epochs 3 run's learning rates (mnist_mlp: Adam, lr 1e-3, cosine over the epochs)
    opt = mg.optim.Adam([mg.nn.Parameter(mg.ones(2))], lr=1e-3)
    full = _epoch_lrs(mg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3), opt, 3)
    split = history(tmp_path / "split")["lr"]
    assert split[0] == 1e-3 and split[1:] == full[1:] and min(split) > 0


def _final_acc(out):
    return float(out.split("final test accuracy: ")[1].split("%")[0])


@needs_mnist
@pytest.mark.parametrize("script, limit", [("mnist_mlp.py", 1000), ("mnist_cnn.py", 200)])
def test_jit_trains_like_eager(tmp_path, script, limit):
    # --limit leaves a last partial batch (1000 % 64, 200 % 64): its own program, no retrace warning
    common = ("--data", DATA, "--epochs", 1, "--limit", limit, "--test-limit", 300, "--no-progress")
    eager = run(script, *common, "--out", tmp_path / "eager")
    jit = run(script, *common, "--out", tmp_path / "jit", "--jit")
    assert "mode: mg.jit" in jit and "the training step traced 3 times" in jit  # not once per batch
    assert abs(_final_acc(jit) - _final_acc(eager)) <= 0.1  # same accuracy to 0.1 % (bitwise here)
    h_eager, h_jit = history(tmp_path / "eager"), history(tmp_path / "jit")
    assert abs(h_jit["train_loss"][0] - h_eager["train_loss"][0]) <= 1e-6 * abs(h_eager["train_loss"][0])


@needs_fashion
def test_fashion_mnist_without_optional_deps(tmp_path):
    # hide tqdm and matplotlib: the example must fall back to plain progress and skip the plot
    blocker = tmp_path / "blocker"
    (blocker / "matplotlib").mkdir(parents=True)
    (blocker / "tqdm.py").write_text("raise ImportError('tqdm hidden by the test')\n")
    (blocker / "matplotlib" / "__init__.py").write_text("raise ImportError('matplotlib hidden')\n")
    out_dir = tmp_path / "out"
    out = run("fashion_mnist.py", "--data", DATA, "--epochs", 1, "--limit", 1000,
              "--test-limit", 1000, "--out", out_dir, env={"PYTHONPATH": str(blocker)})
    assert "epoch 1/1: 16/16" in out  # the plain progress line (1000 images / batch 64)
    assert "matplotlib is not installed: skipping the plot" in out
    assert "final test accuracy:" in out
    assert (out_dir / "checkpoint.mg").is_file() and not (out_dir / "curves.png").exists()


def test_examples_fail_cleanly_without_data(tmp_path):
    proc = subprocess.run([sys.executable, str(EXAMPLES / "mnist_mlp.py"), "--data", tmp_path / "none",
                           "--no-download", "--out", tmp_path / "out"], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "dataset not found" in proc.stderr and "Traceback" not in proc.stderr


def test_custom_op_gradcheck():
    out = run("custom_op_gradcheck.py")
    assert "gradcheck(Swish):     passed" in out
    assert "gradgradcheck(Swish): passed" in out
    assert "raise_exception=False) returned False" in out
    assert "raised GradcheckError" in out and "Jacobian mismatch" in out
    assert "all checks behaved as expected" in out


@needs_mnist
def test_vae_trains_and_draws(tmp_path):
    # a small VAE for 2 epochs on 500 images: the test -ELBO falls, the IW bound is tighter
    out = run("vae.py", "--data", DATA, "--epochs", 2, "--limit", 500, "--test-limit", 300,
              "--hidden", 128, "--latent", 8, "--iw-samples", 20, "--out", tmp_path)
    h = mg.load(tmp_path / "checkpoint.mg")["history"]
    assert len(h["test_nelbo"]) == 2 and h["test_nelbo"][1] < h["test_nelbo"][0] < 560  # 784 ln 2 = 543
    final = float(out.split("final test -ELBO: ")[1].split()[0])
    iw = float(out.split("test -log p(x) <= ")[1].split()[0])
    assert final == pytest.approx(h["test_nelbo"][-1], abs=0.01) and iw < final
    assert (tmp_path / "samples.png").stat().st_size > 1000


def _reinforce():
    sys.path.insert(0, str(EXAMPLES))
    try:
        import reinforce
    finally:
        sys.path.remove(str(EXAMPLES))
    return reinforce


def test_reinforce_cartpole_dynamics():
    import numpy as np
    env = _reinforce().CartPole(np.random.default_rng(0))
    obs = env.reset()
    assert obs.shape == (4,) and np.all(np.abs(obs) <= 0.05)
    env.state = np.zeros(4)
    obs, reward, done = env.step(1)  # push right from rest, by hand from gym's equations:
    temp = 10 / 1.1                  # theta'' = -temp / (0.5 (4/3 - 0.1/1.1)), x'' = temp - 0.05 theta'' / 1.1
    theta_acc = -temp / (0.5 * (4 / 3 - 0.1 / 1.1))
    x_acc = temp - 0.05 * theta_acc / 1.1
    np.testing.assert_allclose(obs, [0.0, 0.02 * x_acc, 0.0, 0.02 * theta_acc], rtol=1e-6)
    assert reward == 1.0 and not done
    steps = 1
    while not done:  # always pushing right: the pole falls back past 12 degrees long before 500 steps
        obs, _, done = env.step(1)
        steps += 1
    assert steps < 100 and abs(obs[2]) > 12 * np.pi / 180
    env.reset()
    env.state = np.array([2.39, 1.0, 0.0, 0.0])
    assert env.step(1)[2]  # off the track
    env.reset()
    env.steps = 499
    assert env.step(0)[2]  # the 500-step cap
    np.testing.assert_allclose(_reinforce().discounted_returns([1.0, 1.0, 1.0], 0.5), [1.75, 1.5, 1.0])


def test_reinforce_learns_without_matplotlib(tmp_path):
    blocker = tmp_path / "blocker"
    (blocker / "matplotlib").mkdir(parents=True)
    (blocker / "matplotlib" / "__init__.py").write_text("raise ImportError('matplotlib hidden')\n")
    out = run("reinforce.py", "--episodes", 50, "--out", tmp_path / "out",
              env={"PYTHONPATH": str(blocker)})
    assert "matplotlib is not installed: skipping returns.png" in out
    returns = mg.load(tmp_path / "out" / "checkpoint.mg")["returns"]
    # seed 0: ~30 over the first 20 episodes (a random policy balances ~22 steps), ~120 over the last 20
    assert len(returns) == 50 and sum(returns[-20:]) > 2 * sum(returns[:20])
    assert not (tmp_path / "out" / "returns.png").exists()


def test_reinforce_writes_the_return_curve(tmp_path):
    out = run("reinforce.py", "--episodes", 25, "--target", 20, "--out", tmp_path)
    assert "reached a mean return of" in out and "at episode 20 " in out  # stops at the target
    assert (tmp_path / "returns.png").stat().st_size > 1000
