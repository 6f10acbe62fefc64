"""Ready-made datasets: mg.data.datasets.MNIST, FashionMNIST (as torchvision.datasets)."""
from .download import ChecksumError, DownloadError, download_url, md5sum
from .mnist import MNIST, FashionMNIST, IDXError, DatasetNotFoundError, read_idx
from . import paths

__all__ = ["MNIST", "FashionMNIST", "IDXError", "DatasetNotFoundError", "read_idx", "ChecksumError", "DownloadError",
           "download_url", "md5sum", "paths"]
