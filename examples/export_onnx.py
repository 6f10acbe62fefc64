"""Train the MNIST MLP briefly, export it to ONNX, and run it with onnxruntime on the test set.

    python examples/export_onnx.py --epochs 1 --limit 5000       # needs: pip install "minigrad[onnx]"

Prints the agreement between onnxruntime and minigrad (largest difference, same predictions) and
both accuracies.
"""
import _common
import numpy as np

import minigrad as mg
import minigrad.nn as nn
from mnist_mlp import build_model


def _arrays(ds, limit=None):
    n = len(ds) if limit is None else min(limit, len(ds))
    xs, ys = zip(*(ds[i] for i in range(n)))
    x = np.stack([np.asarray(a.numpy() if isinstance(a, mg.Tensor) else a, np.float32) for a in xs])
    x = (x.reshape(n, 1, 28, 28) - _common.MNIST_MEAN_STD[0]) / _common.MNIST_MEAN_STD[1]
    return x.astype(np.float32), np.asarray([int(y) for y in ys])


def main(argv=None):
    args = _common.make_parser("export_onnx", __doc__.splitlines()[0], epochs=1, batch_size=64, lr=0.05).parse_args(argv)
    import onnxruntime as ort
    mg.manual_seed(args.seed)
    train_set, test_set = _common.load_data(mg.data.datasets.MNIST, args)
    x, y = _arrays(train_set, args.limit)
    xt, yt = _arrays(test_set, args.test_limit)
    model = build_model()
    opt = mg.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for _ in range(args.epochs):
        for i in range(0, len(x), args.batch_size):
            opt.zero_grad()
            nn.functional.cross_entropy(model(mg.tensor(x[i:i + args.batch_size])),
                                        mg.tensor(y[i:i + args.batch_size])).backward()
            opt.step()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "mlp.onnx"
    mg.onnx.export(model, mg.tensor(xt[:1]), path, input_names=["image"], output_names=["logits"],
                   dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    with mg.no_grad():
        ref = model.eval()(mg.tensor(xt)).numpy()
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"image": xt})[0]
    print(f"exported {path}; onnxruntime vs minigrad on {len(xt)} test images: max |diff| "
          f"{np.abs(got - ref).max():.2e}, same prediction for {np.mean(got.argmax(1) == ref.argmax(1)):.2%}")
    print(f"accuracy: minigrad {np.mean(ref.argmax(1) == yt):.2%}, onnxruntime {np.mean(got.argmax(1) == yt):.2%}")


if __name__ == "__main__":
    main()
