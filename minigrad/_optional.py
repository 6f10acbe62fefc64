"""Optional dependencies: an import that names the pip extra to install when the package is missing.

    onnx = require("onnx", extra="onnx", feature="mg.onnx.export")
"""
import importlib

__all__ = ["require", "install_hint"]

# the pyproject extra that installs each optional package
EXTRAS = {"onnx": "onnx", "onnxruntime": "onnx", "mpi4py": "distributed", "numba": "jit",
          "matplotlib": "examples", "tqdm": "examples", "threadpoolctl": "examples", "hypothesis": "test"}


def install_hint(package, extra=None):
    """The command that installs ``package``: its extra from a checkout (README's install) or from PyPI."""
    extra = extra or EXTRAS.get(package)
    if extra is None:
        return f"pip install {package}"
    return f'pip install -e ".[{extra}]" in a checkout (or pip install {package})'


def require(module, *, feature, extra=None):
    """Import ``module`` (e.g. ``"onnx"``, ``"matplotlib.pyplot"``), or raise ModuleNotFoundError
    saying that ``feature`` needs it and which pip extra installs it."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        top = module.partition(".")[0]
        if e.name is not None and e.name.partition(".")[0] != top:
            raise  # the package is there but something it imports is not: its own error says what
        raise ModuleNotFoundError(f"{feature} needs {top}, which is not installed: "
                                  f"{install_hint(top, extra)}", name=top) from None
