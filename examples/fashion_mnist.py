"""Train an MLP (default) or a small CNN on the full Fashion-MNIST (60k train / 10k test).

    python examples/fashion_mnist.py                    # ../shared/data/fashion-mnist, the MLP
    python examples/fashion_mnist.py --model cnn        # the CNN of mnist_cnn.py (slower, higher)
    python examples/fashion_mnist.py --epochs 1 --limit 2000 --out /tmp/fashion  # a smoke run

The MLP is the 784-256-128-10 ReLU net of mnist_mlp.py (dropout 0.1) trained with Adam and a
cosine learning-rate schedule on inputs normalised by Fashion-MNIST's mean and std. Also finds
the Debian ``dataset-fashion-mnist`` package's files when pointed at
/usr/share/datasets/fashion-mnist.
"""
import _common
from mnist_cnn import build_model as build_cnn
from mnist_mlp import build_model as build_mlp

import minigrad as mg


def main(argv=None):
    parser = _common.make_parser("fashion_mnist", __doc__.splitlines()[0],
                                 epochs=10, batch_size=64, lr=1e-3, shift=0)
    parser.add_argument("--model", choices=("mlp", "cnn"), default="mlp")
    parser.add_argument("--dropout", type=float, default=None,
                        help="dropout (default: 0.1 for the MLP, 0.25 for the CNN)")
    args = parser.parse_args(argv)
    if args.out == _common.Path("runs") / "fashion_mnist":
        args.out = args.out.with_name(f"fashion_mnist_{args.model}")
    mg.manual_seed(args.seed)
    train_set, test_set = _common.load_data(mg.data.datasets.FashionMNIST, args)
    if args.model == "mlp":
        model = build_mlp(0.1 if args.dropout is None else args.dropout)
    else:
        model = build_cnn(0.25 if args.dropout is None else args.dropout)
    opt = mg.optim.Adam(model.parameters(), lr=args.lr)
    sched = mg.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    _common.fit(args, model, opt, train_set, test_set, scheduler=sched,
                batch_transform=_common.image_batches(_common.FASHION_MNIST_MEAN_STD, args.shift),
                title=f"Fashion-MNIST {args.model.upper()}")


if __name__ == "__main__":
    main()
