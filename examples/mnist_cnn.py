"""Train a small CNN (Conv2d, BatchNorm2d, MaxPool2d, Dropout) on MNIST with Adam.

    python examples/mnist_cnn.py                       # ../shared/data/mnist-10k, default settings
    python examples/mnist_cnn.py --epochs 1 --limit 2000 --out /tmp/cnn   # a quick smoke run
    python examples/mnist_cnn.py --jit                 # the training step compiled with mg.jit

Two conv blocks (3x3 conv -> BatchNorm -> ReLU -> 2x2 max-pool; 16 then 32 channels), then
dropout and a 128-unit hidden layer. Trained on the 10,000-image training subset with inputs
normalised by MNIST's mean and std, training images shifted by up to 2 pixels (--shift), and a
cosine learning-rate schedule; evaluated on the official 10,000-image test set.
"""
import _common

import minigrad as mg
import minigrad.nn as nn


def build_model(dropout=0.25):
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),   # 16x14x14
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # 32x7x7
        nn.Flatten(),
        nn.Dropout(dropout),
        nn.Linear(32 * 7 * 7, 128), nn.ReLU(),
        nn.Dropout(dropout),
        nn.Linear(128, 10),
    )


def main(argv=None):
    parser = _common.make_parser("mnist_cnn", __doc__.splitlines()[0],
                                 epochs=8, batch_size=64, lr=2e-3, shift=2)
    parser.add_argument("--dropout", type=float, default=0.25)
    args = parser.parse_args(argv)
    mg.manual_seed(args.seed)
    train_set, test_set = _common.load_data(mg.data.datasets.MNIST, args)
    model = build_model(args.dropout)
    opt = mg.optim.Adam(model.parameters(), lr=args.lr)
    sched = mg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    _common.fit(args, model, opt, train_set, test_set, scheduler=sched,
                batch_transform=_common.image_batches(_common.MNIST_MEAN_STD, args.shift),
                title="MNIST CNN")


if __name__ == "__main__":
    main()
