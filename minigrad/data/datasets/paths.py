"""Where datasets live when no folder is given: one resolution order for the dataset classes and
the examples.

1. an explicit folder (``root=`` / the examples' ``--data``): only that folder;
2. else ``$MINIGRAD_DATA``: only that folder;
3. else ``../shared/data`` beside the repository root, when minigrad runs from a checkout and
   that folder exists;
4. then the per-user cache, ``$XDG_CACHE_HOME/minigrad`` (default ``~/.cache/minigrad``).

Downloads go to the explicit folder or ``$MINIGRAD_DATA`` when one is set, else to the cache:
the shared folder is only ever read.
"""
import os
from pathlib import Path

__all__ = ["cache_dir", "checkout_data_dir", "default_roots", "download_root"]

_REPO = Path(__file__).resolve().parents[3]  # minigrad/data/datasets/paths.py -> the checkout


def cache_dir():
    """The per-user cache folder: ``$XDG_CACHE_HOME/minigrad``, else ``~/.cache/minigrad``."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(os.path.expanduser(xdg)) if xdg else Path.home() / ".cache"
    return base / "minigrad"


def checkout_data_dir():
    """``../shared/data`` beside the repository root if minigrad is imported from a checkout
    (a ``pyproject.toml`` next to the package) and that folder exists; else ``None``."""
    if not (_REPO / "pyproject.toml").is_file():
        return None
    d = _REPO.parent / "shared" / "data"
    return d if d.is_dir() else None


def download_root():
    """Where a download goes when no folder is given: ``$MINIGRAD_DATA`` if set, else `cache_dir()`."""
    env = os.environ.get("MINIGRAD_DATA")
    return Path(os.path.expanduser(env)) if env else cache_dir()


def default_roots():
    """The folders searched, in order, when no folder is given (see the module docstring)."""
    if os.environ.get("MINIGRAD_DATA"):
        return [download_root()]
    shared = checkout_data_dir()
    return ([shared] if shared is not None else []) + [cache_dir()]
