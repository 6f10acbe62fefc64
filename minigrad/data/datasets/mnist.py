"""MNIST and Fashion-MNIST from IDX files (gzipped or plain), as torchvision.datasets.MNIST."""
import gzip
import os
import zlib
from pathlib import Path

import numpy as np

import minigrad as mg
from ..dataset import Dataset
from .download import DownloadError, download_url
from .paths import default_roots, download_root

__all__ = ["IDXError", "DatasetNotFoundError", "read_idx", "MNIST", "FashionMNIST"]

IMAGES_MAGIC = 2051
LABELS_MAGIC = 2049
DEBIAN_FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


class IDXError(ValueError):
    """An IDX file is malformed: bad magic number, header, payload size, or gzip stream."""


class DatasetNotFoundError(RuntimeError):
    """No folder holds a dataset's files and ``download`` was False.

    The message names every missing file (both splits: one round trip), the folder to put them in,
    their MD5s and a command that fetches them on another machine. [`message()`][minigrad.data.datasets.DatasetNotFoundError.message] rebuilds it with
    another first hint, for a caller whose switch is not ``download=True`` (the examples'
    ``--no-download``).

    Attributes:
        dataset (str): the class name.  missing (list): ``(file name, MD5)`` pairs.
        folder (Path): where to put the files.  searched (list): the folders looked in.
    """

    def __init__(self, dataset, searched, wanted, missing, folder, urls):
        self.dataset, self.searched, self.wanted = dataset, searched, wanted
        self.missing, self.folder, self.urls = missing, folder, urls
        super().__init__(self.message())

    def message(self, hint="You can use download=True to download them"):
        """The error's text, with ``hint`` (how this caller turns downloading on) before the
        offline instructions."""
        return (f"{self.dataset}: dataset not found: no folder among {[str(p) for p in self.searched]} "
                f"holds {self.wanted} (plain or .gz). {hint}, or "
                + _offline_instructions(self.missing, self.folder, self.urls))


def _offline_instructions(missing, folder, urls):
    # every missing file with its MD5, the one folder to put them in, one command to fetch them
    files = "".join(f"\n    {name} (MD5 {md5})" for name, md5 in missing)
    return (f"put these {len(missing)} files into {folder}:{files}\n"
            f"To fetch them on a machine with network access (then copy them into that folder):\n"
            f"    curl -fL --remote-name-all {' '.join(urls)}")


def _read_bytes(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":  # gzip magic, whatever the file is called
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise IDXError(f"{path}: corrupt or truncated gzip data ({e})") from None
    return raw


def read_idx(path, expected_magic=None):
    """Read an IDX file (gzipped or plain) into a NumPy array of native byte order.

    Checks the magic number (against ``expected_magic`` if given: 2051 for images, 2049 for
    labels), that the header is complete, and that the payload is exactly as long as the header
    says. Errors are [`IDXError`][minigrad.data.datasets.IDXError] naming the file.
    """
    path = Path(path)
    raw = _read_bytes(path)
    if len(raw) < 4:
        raise IDXError(f"{path}: file too short ({len(raw)} bytes) to hold an IDX header")
    magic = int.from_bytes(raw[:4], "big")
    if expected_magic is not None and magic != expected_magic:
        raise IDXError(f"{path}: bad magic number {magic} (expected {expected_magic}: "
                       f"{'images' if expected_magic == IMAGES_MAGIC else 'labels'} IDX file)")
    code, ndim = raw[2], raw[3]
    if raw[:2] != b"\0\0" or code not in _IDX_DTYPES or ndim == 0:
        raise IDXError(f"{path}: not an IDX file (magic number {magic})")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise IDXError(f"{path}: truncated header: {ndim} dimensions need {header} bytes, "
                       f"file has {len(raw)}")
    dims = tuple(int(d) for d in np.frombuffer(raw, ">u4", ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[code])
    expected = int(np.prod(dims)) * dtype.itemsize
    if len(raw) - header != expected:
        raise IDXError(f"{path}: header says shape {dims} ({expected} payload bytes) but the file "
                       f"holds {len(raw) - header} payload bytes"
                       + (" (truncated)" if len(raw) - header < expected else " (trailing data)"))
    arr = np.frombuffer(raw, dtype, offset=header).reshape(dims)
    return arr.astype(dtype.newbyteorder("="), copy=True)


def _scale(images_u8):
    # one pass, no uint8->float32 temporary; per-item and whole-split results are bit-identical
    return np.divide(images_u8, np.float32(255), dtype=np.float32)


class MNIST(Dataset):
    """The MNIST handwritten digits, read from the four IDX files.

    Files ``{train,t10k}-{images-idx3,labels-idx1}-ubyte`` (each optionally ``.gz``) are looked up
    in ``root``, ``root/<ClassName>/raw`` (torchvision's layout), ``root/<ClassName>`` and the
    aliases in ``folder_aliases`` under ``root``. A folder found this way is validated by its IDX
    headers (magic numbers, sizes, image count == label count), not by checksum, so subsets work.

    Args:
        root (str or Path, optional): data folder; only it is searched. Default: ``$MINIGRAD_DATA``
            if set, else ``../shared/data`` beside the repository root (from a checkout, if it
            exists) and then the per-user cache ``$XDG_CACHE_HOME/minigrad`` (``~/.cache/minigrad``);
            downloads go to ``root``, ``$MINIGRAD_DATA`` or the cache (see
            `minigrad.data.datasets.paths`).
        train (bool): the training split (``train-*``) or the test split (``t10k-*``).
        download (bool): fetch missing files into ``root/<ClassName>/raw`` from ``base_url``,
            verifying the published MD5 of each file. Without it (or offline) the error names every
            missing file of both splits, the folder, the MD5s and a ``curl`` command that fetches
            them elsewhere ([`DatasetNotFoundError`][minigrad.data.datasets.DatasetNotFoundError], [`DownloadError`][minigrad.data.datasets.DownloadError]).
        transform (callable, optional): applied to the image, which it receives as a float32
            Tensor of shape (1, 28, 28) with values in [0, 1].
        target_transform (callable, optional): applied to the label (a Python int).
        base_url (str, optional): mirror to download from. Default: ``$MINIGRAD_MNIST_URL``
            (``$MINIGRAD_FASHION_MNIST_URL`` for FashionMNIST), else the canonical mirror.

    Attributes:
        data: uint8 Tensor (N, 28, 28).  targets: int64 Tensor (N,) (Tensors, as torchvision's; a
            script may replace them, e.g. ``ds.data = ds.data[:1000]``).  classes: the class names.

    The whole split as arrays, for fast batching: [`arrays()`][minigrad.data.datasets.MNIST.arrays]. Without
        transforms,
    ``DataLoader`` batches this dataset by fancy-indexing those arrays.

    Example:
        >>> test = mg.data.datasets.MNIST("../shared/data/mnist-10k", train=False)
        >>> image, label = test[0]          # Tensor (1, 28, 28) float32, int 7
    """

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/"]
    url_env = "MINIGRAD_MNIST_URL"
    resources = {
        True: (("train-images-idx3-ubyte", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
               ("train-labels-idx1-ubyte", "d53e105ee54ea40749a09fcbcd1e9432")),
        False: (("t10k-images-idx3-ubyte", "9fb629c4189551a2d022fa330f9573f3"),
                ("t10k-labels-idx1-ubyte", "ec29112dd5afa0611ce80d1b7f02629c")),
    }
    folder_aliases = ("mnist", "mnist-10k")
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four",
               "5 - five", "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root=None, train=True, download=False, transform=None,
                 target_transform=None, base_url=None):
        self.root = Path(os.path.expanduser(str(root))) if root is not None else self.default_root()
        self._root_given = root is not None
        self.train = bool(train)
        self.transform = transform
        self.target_transform = target_transform
        self.base_url = base_url
        folder = self._find_folder()
        if folder is None:
            if not download:
                missing = self._missing()
                raise DatasetNotFoundError(type(self).__name__, self._search_dirs(), self._split_names(),
                                           missing, self.raw_folder, self._urls(missing, self._mirrors()))
            folder = self._download()
        self.folder = folder
        images_path, labels_path = (self._file_in(folder, name) for name, _ in self.resources[self.train])
        images = read_idx(images_path, IMAGES_MAGIC)
        labels = read_idx(labels_path, LABELS_MAGIC)
        if images.ndim != 3:
            raise IDXError(f"{images_path}: images must be 3-D (N, rows, cols), got shape {images.shape}")
        if labels.ndim != 1:
            raise IDXError(f"{labels_path}: labels must be 1-D, got shape {labels.shape}")
        if len(images) != len(labels):
            raise IDXError(f"{type(self).__name__}: {images_path} holds {len(images)} images but "
                           f"{labels_path} holds {len(labels)} labels")
        if len(labels) and int(labels.max()) >= len(self.classes):
            raise IDXError(f"{labels_path}: label {int(labels.max())} out of range for "
                           f"{len(self.classes)} classes")
        # Tensors, as torchvision's (scripts call .unsqueeze, .clone, .float on them); they share
        # memory with the arrays read, and a script may replace them (ds.data = ds.data[:1000])
        self.data = mg.from_numpy(images)
        self.targets = mg.from_numpy(labels.astype(np.int64))
        self._arrays = None

    # ---- locating files
    @classmethod
    def default_root(cls):
        """The folder downloads go to without ``root``: ``$MINIGRAD_DATA``, else the per-user cache."""
        return download_root()

    @property
    def raw_folder(self):
        """The folder the IDX files are read from: ``root/<class name>/raw``, as torchvision."""
        return self.root / type(self).__name__ / "raw"

    def _split_names(self, train=None):
        return [name for name, _ in self.resources[self.train if train is None else train]]

    def _search_dirs(self):
        roots = [self.root] if self._root_given else default_roots()
        if not self._root_given and type(self).__name__ == "FashionMNIST":
            roots.append(DEBIAN_FASHION_MNIST_DIR)
        dirs = []
        for r in roots:
            dirs += [r, r / type(self).__name__ / "raw", r / type(self).__name__]
            dirs += [r / alias for alias in self.folder_aliases]
        return dirs

    @staticmethod
    def _file_in(folder, name):
        for candidate in (folder / name, folder / (name + ".gz")):
            if candidate.is_file():
                return candidate
        return None

    def _find_folder(self, train=None):
        for d in self._search_dirs():
            if all(self._file_in(d, name) is not None for name in self._split_names(train)):
                return d
        return None

    def _missing(self):
        """``(name.gz, MD5)`` of each file missing from [`raw_folder`][minigrad.data.datasets.MNIST.raw_folder]: this split's and the
        other split's when no folder holds it either, so that an offline user is told every file
        at once (the download itself fetches this split's only)."""
        out = []
        for split in (self.train, not self.train):
            if split == self.train or self._find_folder(split) is None:
                out += [(name + ".gz", md5) for name, md5 in self.resources[split]
                        if self._file_in(self.raw_folder, name) is None]
        return out

    def _mirrors(self):
        base = self.base_url or os.environ.get(self.url_env)
        return [base] if base else list(self.mirrors)

    @staticmethod
    def _urls(missing, mirrors):
        return [mirrors[0].rstrip("/") + "/" + name for name, _ in missing]

    def _download(self):
        mirrors = self._mirrors()
        folder = self.raw_folder
        missing = self._missing()
        mine = {name + ".gz" for name, _ in self.resources[self.train]}
        for name, md5 in missing:
            if name not in mine or self._file_in(folder, name[:-len(".gz")]) is not None:
                continue  # the other split's (named in an error only), or fetched meanwhile
            errors = []
            for mirror in mirrors:
                url = mirror.rstrip("/") + "/" + name
                try:
                    download_url(url, folder / name, md5=md5)
                    break
                except DownloadError as e:
                    if type(e) is not DownloadError:  # a checksum mismatch: do not hide it
                        raise
                    errors.append(str(e))
            else:
                left = [(n, m) for n, m in missing if self._file_in(folder, n[:-len(".gz")]) is None]
                raise DownloadError(f"{type(self).__name__}: could not download {name}: "
                                    + "; ".join(errors) + ". Offline? "
                                    + _offline_instructions(left, folder, self._urls(left, mirrors)))
        return folder

    # ---- items
    def __len__(self):
        return len(self.data)

    def _np(self):
        """(images uint8 (N, 28, 28), labels int64 (N,)) as NumPy arrays, from data and targets."""
        return tuple(v._data if isinstance(v, mg.Tensor) else np.asarray(v) for v in (self.data, self.targets))

    def __getitem__(self, index):
        index = int(index)
        images, labels = self._np()
        image = mg.from_numpy(_scale(images[index])[None])
        label = int(labels[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def arrays(self):
        """The whole split: (images float32 (N, 1, 28, 28) in [0, 1], labels int64 (N,)).

        Computed once and cached; transforms are not applied.
        """
        key = (id(self.data), id(self.targets))
        if self._arrays is None or self._arrays[0] != key:  # recomputed if data or targets was replaced
            images, labels = self._np()
            self._arrays = (key, (_scale(images)[:, None], labels))
        return self._arrays[1]

    def _batch_arrays(self):
        if self.transform is not None or self.target_transform is not None:
            return None
        return self.arrays()

    @property
    def class_to_idx(self):
        """{class name: label}, as torchvision."""
        return {c: i for i, c in enumerate(self.classes)}

    def __repr__(self):
        return (f"Dataset {type(self).__name__}\n    Number of datapoints: {len(self)}\n"
                f"    Root location: {self.folder}\n    Split: {'Train' if self.train else 'Test'}")


class FashionMNIST(MNIST):
    """Fashion-MNIST (Zalando's clothing images), same format and arguments as
    [`MNIST`][minigrad.data.datasets.MNIST].

    With no ``root`` and nothing in the default cache, the Debian package
    ``dataset-fashion-mnist`` (``/usr/share/datasets/fashion-mnist``) is used when installed.
    The download mirror can be overridden with ``base_url=`` or ``$MINIGRAD_FASHION_MNIST_URL``.
    """

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    url_env = "MINIGRAD_FASHION_MNIST_URL"
    resources = {
        True: (("train-images-idx3-ubyte", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
               ("train-labels-idx1-ubyte", "25c81989df183df01b3e8a0aad5dffbe")),
        False: (("t10k-images-idx3-ubyte", "bef4ecab320f06d8554ea6380940ec79"),
                ("t10k-labels-idx1-ubyte", "bb300cfdad3c16e7a12a480ee83cd310")),
    }
    folder_aliases = ("fashion-mnist", "fashion_mnist")
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
