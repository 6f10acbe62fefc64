"""The nn layers, containers and losses (re-exported by minigrad.nn)."""
from .module import Module
from .container import ModuleDict, ModuleList, Sequential
from .linear import Bilinear, Identity, Linear
from .conv import Conv2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .batchnorm import BatchNorm1d, BatchNorm2d
from .sync_batchnorm import SyncBatchNorm
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, LayerNorm
from .dropout import Dropout
from .sparse import Embedding
from .flatten import Flatten, Unflatten
from .activation import (CELU, ELU, GELU, GLU, Hardsigmoid, Hardswish, LeakyReLU, LogSoftmax, Mish, ReLU, SELU, SiLU,
                         Sigmoid, Softmax, Softplus, Softsign, Tanh, Tanhshrink)
from .distance import CosineSimilarity, PairwiseDistance
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss,
                   MSELoss, NLLLoss, SmoothL1Loss, TripletMarginLoss)

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict",
    "Identity", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "BatchNorm1d", "BatchNorm2d", "SyncBatchNorm", "LayerNorm", "Dropout", "Embedding", "Flatten", "Unflatten",
    "ReLU", "LeakyReLU", "GELU", "SiLU", "ELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softplus",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss",
    "BCEWithLogitsLoss",
    "Bilinear", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "CELU", "SELU", "GLU", "Hardsigmoid", "Hardswish",
    "Mish", "Softsign", "Tanhshrink", "CosineSimilarity", "PairwiseDistance", "PixelShuffle", "PixelUnshuffle",
    "KLDivLoss", "MarginRankingLoss", "TripletMarginLoss",
]
