"""mg.data: datasets, samplers and DataLoader with torch.utils.data's names and semantics."""
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)
from .dataloader import DataLoader, default_collate, default_convert
from .distributed import DistributedSampler
from . import datasets

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "random_split",
           "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "DataLoader", "default_collate",
           "default_convert", "datasets"]
