"""The nn layers, containers and losses (re-exported by minigrad.nn)."""
from .module import Module
from .container import ModuleDict, ModuleList, Sequential
from .linear import Identity, Linear
from .conv import Conv2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .batchnorm import BatchNorm1d, BatchNorm2d
from .sync_batchnorm import SyncBatchNorm
from .normalization import LayerNorm
from .dropout import Dropout
from .sparse import Embedding
from .flatten import Flatten, Unflatten
from .activation import ELU, GELU, LeakyReLU, LogSoftmax, ReLU, SiLU, Sigmoid, Softmax, Softplus, Tanh
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss,
                   SmoothL1Loss)

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict",
    "Identity", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "BatchNorm1d", "BatchNorm2d", "SyncBatchNorm", "LayerNorm", "Dropout", "Embedding", "Flatten", "Unflatten",
    "ReLU", "LeakyReLU", "GELU", "SiLU", "ELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softplus",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss",
    "BCEWithLogitsLoss",
]
