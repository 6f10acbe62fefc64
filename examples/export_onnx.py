"""Train the MNIST MLP (or CNN) briefly, export it to ONNX, and run it with onnxruntime on the test set.

    python examples/export_onnx.py --epochs 1 --limit 5000       # needs: pip install -e ".[onnx]"
    python examples/export_onnx.py --model cnn --epochs 1 --limit 2000

Exported at batch 1 with a dynamic batch axis, run on the whole test set at once. Prints the
agreement between onnxruntime and minigrad (largest difference, whether every element is within
1e-5 * max(1, |minigrad's|), same predictions) and both accuracies.
"""
import _common
import numpy as np

import minigrad as mg
import minigrad.nn as nn
import mnist_cnn
import mnist_mlp


def _arrays(ds, limit=None):
    n = len(ds) if limit is None else min(limit, len(ds))
    xs, ys = zip(*(ds[i] for i in range(n)))
    x = np.stack([np.asarray(a.numpy() if isinstance(a, mg.Tensor) else a, np.float32) for a in xs])
    x = (x.reshape(n, 1, 28, 28) - _common.MNIST_MEAN_STD[0]) / _common.MNIST_MEAN_STD[1]
    return x.astype(np.float32), np.asarray([int(y) for y in ys])


def main(argv=None):
    parser = _common.make_parser("export_onnx", __doc__.splitlines()[0], epochs=1, batch_size=64, lr=0.05)
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp", help="which example's model")
    args = parser.parse_args(argv)
    # both checked before training: mg.onnx.export needs onnx, running the export onnxruntime
    _common.require("onnx", "examples/export_onnx.py (mg.onnx.export)")
    ort = _common.require("onnxruntime", "examples/export_onnx.py (running the exported model)")
    mg.manual_seed(args.seed)
    train_set, test_set = _common.load_data(mg.data.datasets.MNIST, args)
    x, y = _arrays(train_set, args.limit)
    xt, yt = _arrays(test_set, args.test_limit)
    model = (mnist_cnn if args.model == "cnn" else mnist_mlp).build_model()
    opt = mg.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for _ in range(args.epochs):
        for i in range(0, len(x), args.batch_size):
            opt.zero_grad()
            nn.functional.cross_entropy(model(mg.tensor(x[i:i + args.batch_size])),
                                        mg.tensor(y[i:i + args.batch_size])).backward()
            opt.step()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.model}.onnx"
    mg.onnx.export(model, mg.tensor(xt[:1]), path, input_names=["image"], output_names=["logits"],
                   dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    model.eval()
    ref, got = [], []
    with mg.no_grad():
        for i in range(0, len(xt), 1000):  # batches of 1000 (the CNN's im2col needs memory)
            ref.append(model(mg.tensor(xt[i:i + 1000])).numpy())
            got.append(sess.run(None, {"image": xt[i:i + 1000]})[0])
    ref, got = np.concatenate(ref), np.concatenate(got)
    diff = np.abs(got - ref)
    within = bool(np.all(diff <= 1e-5 * np.maximum(1.0, np.abs(ref))))
    print(f"exported {path}; onnxruntime vs minigrad on {len(xt)} test images: max |diff| "
          f"{diff.max():.2e}, every element within 1e-5*max(1,|ref|): {within}, same prediction for "
          f"{np.mean(got.argmax(1) == ref.argmax(1)):.2%}")
    print(f"accuracy: minigrad {np.mean(ref.argmax(1) == yt):.2%}, onnxruntime {np.mean(got.argmax(1) == yt):.2%}")


if __name__ == "__main__":
    main()
