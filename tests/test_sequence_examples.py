"""The sequence examples (issue 36): examples/char_gpt.py and examples/lstm_lm.py train, resume on the
same trajectory (char_gpt also samples); their model files (gpt_model.py, lstm_model.py) run under
PyTorch by renaming `minigrad` to `torch` and give the same loss from the same weights (the port tests)."""
import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
DATA = Path(os.environ["MINIGRAD_DATA"]) if os.environ.get("MINIGRAD_DATA") else REPO.parent / "shared" / "data"
needs_corpus = pytest.mark.skipif(not (DATA / "shakespeare" / "shakespeare.txt.gz").is_file(),
                                  reason=f"shared Shakespeare corpus not found under {DATA}")
TINY_LSTM = ("--vocab", 50, "--emsize", 8, "--nhid", 8, "--batch-size", 4, "--bptt", 5, "--val-tokens", 200,
             "--no-progress")
TINY_GPT = ("--layers", 1, "--d-model", 32, "--heads", 2, "--context", 16, "--batch-size", 4, "--eval-iters", 1)


def run(script, *args, timeout=180):
    proc = subprocess.run([sys.executable, str(EXAMPLES / script), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert proc.returncode == 0, f"{script} {args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def load_model_file(name, framework):
    """examples/<name> as a module, with `minigrad` renamed to `framework` (the port: imports swapped)."""
    path = EXAMPLES / name
    src = path.read_text()
    if framework != "minigrad":
        src = src.replace("minigrad", framework)
    mod = types.ModuleType(f"{path.stem}_{framework}")
    exec(compile(src, str(path), "exec"), mod.__dict__)
    return mod


@needs_corpus
def test_char_gpt_trains_resumes_on_the_same_trajectory_and_samples(tmp_path):
    common = ("--data", DATA, "--eval-interval", 2, "--sample", 0, *TINY_GPT)
    out = run("char_gpt.py", *common, "--steps", 4, "--out", tmp_path / "full")
    assert "vocabulary 84" in out and "final validation loss" in out
    full = mg.load(tmp_path / "full" / "checkpoint.mg")["history"]
    assert full["step"] == [2, 4] and full["val"][1] < full["val"][0] < np.log(84) + 0.5
    run("char_gpt.py", *common, "--steps", 2, "--out", tmp_path / "split")
    out = run("char_gpt.py", *common, "--steps", 4, "--out", tmp_path / "split", "--resume")
    assert "resumed from" in out and "planned for 2 steps; steps 3-4 use the 4-step schedule's" in out
    assert out.startswith("config: minigrad ")
    # the same trajectory here: all 4 steps are inside the warm-up, where --steps does not matter
    assert mg.load(tmp_path / "split" / "checkpoint.mg")["history"] == full


def test_char_gpt_fails_cleanly_without_the_corpus(tmp_path):
    proc = subprocess.run([sys.executable, str(EXAMPLES / "char_gpt.py"), "--data", tmp_path / "none"],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode != 0 and "shakespeare.txt.gz not found" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_gpt_model_ports_to_pytorch_by_renaming():
    """The same file under torch, loaded with minigrad's initial weights: the same loss at step 0
    (float32: within 1e-5 relative, the products' summation orders differ), and after one AdamW step."""
    torch = pytest.importorskip("torch")
    mg_mod, t_mod = load_model_file("gpt_model.py", "minigrad"), load_model_file("gpt_model.py", "torch")
    mg.manual_seed(0)
    m = mg_mod.GPT(20, context=8, n_layer=2, n_head=2, d_model=16)
    t = t_mod.GPT(20, context=8, n_layer=2, n_head=2, d_model=16)
    t.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.state_dict().items()})
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 20, (3, 8)), rng.integers(0, 20, (3, 8))
    losses = []
    for model, L in ((m, mg), (t, torch)):
        opt = L.optim.AdamW(model.parameters(), lr=1e-2)
        _, loss0 = model(L.from_numpy(x), L.from_numpy(y))
        loss0.backward()
        opt.step()
        _, loss1 = model(L.from_numpy(x), L.from_numpy(y))
        losses.append((loss0.item(), loss1.item()))
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)
    assert losses[0][1] < losses[0][0]


@needs_corpus
def test_lstm_lm_trains_and_resumes_on_the_same_trajectory(tmp_path):
    common = ("--data", DATA, "--eval-interval", 2, *TINY_LSTM)
    out = run("lstm_lm.py", *common, "--steps", 4, "--out", tmp_path / "full")
    assert "vocabulary 50 (<unk>" in out and "final validation perplexity" in out
    assert (tmp_path / "full" / "curves.png").is_file() or "matplotlib not installed" in out
    full = mg.load(tmp_path / "full" / "checkpoint.mg")["history"]
    assert full["step"] == [2, 4] and np.isfinite(full["val"]).all() and full["val"][1] < np.log(50) + 1
    run("lstm_lm.py", *common, "--steps", 2, "--out", tmp_path / "split", "--no-plot")
    out = run("lstm_lm.py", *common, "--steps", 4, "--out", tmp_path / "split", "--resume", "--no-plot")
    assert "resumed from" in out
    assert mg.load(tmp_path / "split" / "checkpoint.mg")["history"] == full   # dropout 0.2: the generator too


def test_lstm_lm_word_tokens_and_batches():
    spec = importlib.util.spec_from_file_location("lstm_lm_example", EXAMPLES / "lstm_lm.py")
    lm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lm)
    assert lm.tokenize("O'er the hill, my lord!\n\n  -- 'Tis 3 o'clock.") == [
        "o'er", "the", "hill", ",", "my", "lord", "!", "<eos>", "tis", "o'clock", ".", "<eos>"]
    corpus = lm.WordCorpus("a b a c.\n" * 9 + "a d\n", vocab=4)
    assert corpus.itos == ["<unk>", "<eos>", "a", "b"]   # <unk>, <eos>, then by count (ties: first seen)
    assert corpus.val.tolist() == [2, 0, 1]                 # "a d <eos>": d is out of the vocabulary
    src = lm.batchify(np.arange(11), 2)                     # two streams of 5; the odd token dropped
    assert src.tolist() == [[0, 5], [1, 6], [2, 7], [3, 8], [4, 9]]
    x, y = lm.get_batch(src, 3, 3)                          # the last segment is shorter (seq_len 1)
    assert x.tolist() == [[3, 8]] and y.tolist() == [4, 9]


def test_lstm_model_ports_to_pytorch_by_renaming():
    """The same file under torch, loaded with minigrad's initial weights: the same loss at step 0 and
    after one SGD step with clip_grad_norm_ and the hidden state carried over (detached), for the untied
    and the tied model (float32: within 1e-5 relative; the products' summation orders differ)."""
    torch = pytest.importorskip("torch")
    mg_mod, t_mod = load_model_file("lstm_model.py", "minigrad"), load_model_file("lstm_model.py", "torch")
    rng = np.random.default_rng(0)
    x0, x1 = rng.integers(0, 30, (6, 3)), rng.integers(0, 30, (6, 3))
    y0, y1 = rng.integers(0, 30, 18), rng.integers(0, 30, 18)
    for tied in (False, True):
        mg.manual_seed(0)
        m = mg_mod.RNNModel(30, 12, 12, 2, dropout=0.0, tie_weights=tied)
        t = t_mod.RNNModel(30, 12, 12, 2, dropout=0.0, tie_weights=tied)
        t.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in m.state_dict().items()})
        losses = []
        for model, L, mod in ((m, mg, mg_mod), (t, torch, t_mod)):
            opt = L.optim.SGD(model.parameters(), lr=5.0)
            hidden = model.init_hidden(3)
            out = []
            for x, y in ((x0, y0), (x1, y1)):
                hidden = mod.repackage_hidden(hidden)
                opt.zero_grad()
                logp, hidden = model(L.from_numpy(x), hidden)
                loss = L.nn.functional.nll_loss(logp, L.from_numpy(y))
                loss.backward()
                L.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
                opt.step()
                out.append(loss.item())
            losses.append(out)
        np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)
        assert (m.decoder.weight is m.encoder.weight) == tied
