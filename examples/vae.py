"""A variational autoencoder (VAE) on MNIST with mg.distributions (Kingma & Welling, 2014).

    python examples/vae.py                              # ../shared/data/mnist-10k, default settings
    python examples/vae.py --epochs 1 --limit 500 --test-limit 500 --out /tmp/vae   # a smoke run

The encoder q(z|x) maps a binarised 28x28 image to a diagonal Normal over a --latent-dimensional
code z; the decoder p(x|z) maps z to 784 Bernoulli logits, one per pixel. Training maximises the
evidence lower bound (ELBO) on log p(x):

    ELBO(x) = E_q[log p(x|z)] - KL(q(z|x) || p(z)),      p(z) = Normal(0, 1)

with one reparameterised sample z = mu + sigma * eps (``q.rsample()``), so the gradient flows
through the sample into the encoder, and the KL term in closed form (``kl_divergence``).
Each epoch reports the training and test negative ELBO in nats per image (one sample of z per
image; lower is better: it bounds -log p(x) from above). At the end the importance-weighted bound with --iw-samples K samples
(Burda et al., 2016) gives a tighter estimate of the test -log p(x):

    log p(x) >= log (1/K) sum_k p(x, z_k) / q(z_k|x),     z_k ~ q(z|x)

Training images are binarised afresh each time they are seen (each pixel is 1 with probability its
intensity: "dynamic binarisation"); the test images are binarised once, with a fixed seed, so
every epoch and every run evaluates the same binary test set.

- ``--data``: the data folder, as the other MNIST examples (README, "Where the data comes from").
- ``--limit N`` / ``--test-limit N``: train / evaluate on the first N images only.
- ``--out DIR``: ``samples.png`` (test images, their reconstructions and samples from the prior;
  matplotlib is optional, without it the PNG is skipped with a message) and ``checkpoint.mg``
  (the model's state dict and the per-epoch figures, written with mg.save).
"""
import argparse
import math
import time
from pathlib import Path

import _common

import numpy as np

import minigrad as mg
import minigrad.nn as nn
from minigrad.distributions import Bernoulli, Normal, kl_divergence

PNG = "samples.png"


class VAE(nn.Module):
    """Encoder and decoder MLPs: 784 -> hidden -> hidden -> (mu, log sigma) and back."""

    def __init__(self, latent=32, hidden=512):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(784, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, 784))
        self.latent = latent

    def posterior(self, x):
        """q(z|x): a Normal over the code with batch shape (B, latent)."""
        mu, log_sigma = self.encoder(x).chunk(2, dim=-1)
        return Normal(mu, log_sigma.exp())

    def likelihood(self, z):
        """p(x|z): one Bernoulli per pixel, parameterised by its logit (numerically stable)."""
        return Bernoulli(logits=self.decoder(z))

    def prior(self):
        return Normal(mg.zeros(self.latent), mg.ones(self.latent))

    def elbo(self, x):
        """The ELBO of each image of the batch x (B, 784), a (B,) tensor, with one sample of z."""
        q = self.posterior(x)
        z = q.rsample()                                    # z = mu + sigma * eps: differentiable
        log_px_z = self.likelihood(z).log_prob(x).sum(-1)  # sum over the 784 pixels
        kl = kl_divergence(q, self.prior()).sum(-1)        # closed form, summed over the latents
        return log_px_z - kl

    def iw_bound(self, x, k):
        """The importance-weighted bound on log p(x) with k samples per image, a (B,) tensor."""
        q = self.posterior(x)
        z = q.sample((k,))                                 # (k, B, latent); no gradient needed
        log_w = (self.likelihood(z).log_prob(x).sum(-1)    # x (B, 784) broadcasts over the k samples
                 + self.prior().log_prob(z).sum(-1)
                 - q.log_prob(z).sum(-1))                  # (k, B)
        return mg.logsumexp(log_w, dim=0) - math.log(k)


def make_parser():
    """The MNIST examples' CLI (examples/_common.py), with this example's own settings."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", type=Path, default=None,
                   help="data folder (default: $MINIGRAD_DATA, else <repo>/../shared/data if it "
                        "exists, else the cache $XDG_CACHE_HOME/minigrad)")
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--latent", type=int, default=32, help="dimension of the code z")
    p.add_argument("--hidden", type=int, default=512, help="width of the hidden layers")
    p.add_argument("--iw-samples", type=int, default=100, metavar="K",
                   help="samples of the importance-weighted bound at the end (0: skip it)")
    p.add_argument("--limit", type=int, default=None,
                   help="train on the first N training images only (smoke runs)")
    p.add_argument("--test-limit", type=int, default=None,
                   help="evaluate on the first N test images only (smoke runs)")
    p.add_argument("--out", type=Path, default=Path("runs") / "vae",
                   help="folder for samples.png and checkpoint.mg")
    p.add_argument("--download", action=argparse.BooleanOptionalAction, default=True,
                   help="download the official files when no data folder holds them")
    return p


def as_array(dataset):
    """All images of a dataset as one (N, 784) float32 array of intensities in [0, 1]."""
    loader = mg.data.DataLoader(dataset, batch_size=1000)
    return np.concatenate([x.numpy().reshape(len(x), -1) for x, _ in loader])


def evaluate(model, x_test, k=None):
    """Mean test -ELBO (or, with k, the mean -IW bound) in nats per image."""
    model.eval()
    total = 0.0
    with mg.no_grad():
        for i in range(0, len(x_test), 500):
            x = x_test[i:i + 500]
            bound = model.elbo(x) if k is None else model.iw_bound(x, k)
            total += -bound.sum().item()
    return total / len(x_test)


def draw(model, x_test, path, n=10):
    """Save a PNG: n test images, their reconstructions (the decoder's pixel probabilities at the
    posterior mean) and n samples from the model (z ~ p(z), pixel probabilities)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: skipping {path.name} ({_common.install_hint('matplotlib')})")
        return False
    with mg.no_grad():
        x = x_test[:n]
        recon = model.likelihood(model.posterior(x).mean).probs
        samples = model.likelihood(model.prior().sample((n,))).probs
    rows = [("test image", x), ("reconstruction", recon), ("sample", samples)]
    fig, axes = plt.subplots(len(rows), n, figsize=(n, len(rows) + 0.4))
    for r, (label, images) in enumerate(rows):
        images = images.numpy().reshape(-1, 28, 28)
        for c in range(n):
            axes[r, c].imshow(images[c], cmap="gray", vmin=0, vmax=1)
            axes[r, c].axis("off")
        axes[r, 0].set_title(label, fontsize=9, loc="left")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True


def main(argv=None):
    args = make_parser().parse_args(argv)
    train_set, test_set = _common.load_data(mg.data.datasets.MNIST, args)
    x_train = mg.from_numpy(as_array(train_set))
    # the test set, binarised once under a fixed seed: the same binary images in every run
    mg.manual_seed(1234)
    x_test = Bernoulli(probs=mg.from_numpy(as_array(test_set))).sample()
    mg.manual_seed(args.seed)

    model = VAE(args.latent, args.hidden)
    opt = mg.optim.Adam(model.parameters(), lr=args.lr)
    loader = mg.data.DataLoader(mg.data.TensorDataset(x_train), batch_size=args.batch_size,
                                shuffle=True, generator=mg.Generator().manual_seed(args.seed))
    n_params = sum(p.numel() for p in model.parameters())
    print(f"VAE: {len(x_train)} training / {len(x_test)} test images, {n_params:,} parameters, "
          f"latent {args.latent}, {args.epochs} epochs, batch {args.batch_size}, lr {args.lr:g}")
    args.out.mkdir(parents=True, exist_ok=True)

    history = {"train_nelbo": [], "test_nelbo": [], "epoch_time": []}
    for epoch in range(1, args.epochs + 1):
        t0 = time.perf_counter()
        model.train()
        total = 0.0
        for (x,) in loader:
            x = Bernoulli(probs=x).sample()      # dynamic binarisation: a fresh binary image
            loss = -model.elbo(x).mean()         # the negative ELBO, nats per image
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(x)
        train_nelbo = total / len(x_train)
        test_nelbo = evaluate(model, x_test)
        dt = time.perf_counter() - t0
        for key, v in zip(history, (train_nelbo, test_nelbo, dt)):
            history[key].append(v)
        print(f"epoch {epoch:3d}/{args.epochs}: train -ELBO {train_nelbo:.2f}  "
              f"test -ELBO {test_nelbo:.2f} nats  ({dt:.1f} s)", flush=True)

    mg.save({"model": model.state_dict(), "history": history,
             "config": {"latent": args.latent, "hidden": args.hidden}}, args.out / "checkpoint.mg")
    total_time = sum(history["epoch_time"])
    if history["test_nelbo"]:
        print(f"final test -ELBO: {history['test_nelbo'][-1]:.2f} nats "
              f"({args.epochs} epochs, {total_time:.1f} s)")
    if args.iw_samples > 0:
        t0 = time.perf_counter()
        mg.manual_seed(args.seed)
        print(f"test -log p(x) <= {evaluate(model, x_test, k=args.iw_samples):.2f} nats "
              f"(importance-weighted bound, K={args.iw_samples}; {time.perf_counter() - t0:.1f} s)")
    if draw(model, x_test, args.out / PNG):
        print(f"reconstructions and samples: {args.out / PNG}")


if __name__ == "__main__":
    main()
