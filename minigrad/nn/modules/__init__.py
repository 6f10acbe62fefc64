"""The nn layers, containers and losses (re-exported by minigrad.nn)."""
from .module import Module
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Identity, Linear
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                      AdaptiveMaxPool3d, AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d,
                      MaxUnpool2d, MaxUnpool3d)
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .batchnorm import BatchNorm1d, BatchNorm2d
from .sync_batchnorm import SyncBatchNorm
from .normalization import GroupNorm, InstanceNorm1d, InstanceNorm2d, LayerNorm, RMSNorm
from .dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .sparse import Embedding, EmbeddingBag
from .rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from .flatten import Flatten, Unflatten
from .activation import (CELU, ELU, GELU, GLU, Hardsigmoid, Hardtanh, Hardswish, LeakyReLU, LogSoftmax, Mish, ReLU, SELU,
                         SiLU, Sigmoid, Softmax, Softplus, Softsign, Tanh, Tanhshrink)
from .distance import CosineSimilarity, PairwiseDistance
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .attention import MultiheadAttention
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                          TransformerEncoderLayer)
from .loss import (BCELoss, BCEWithLogitsLoss, CTCLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MarginRankingLoss,
                   MSELoss, NLLLoss, SmoothL1Loss, TripletMarginLoss)

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict",
    "Identity", "Linear", "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d",
    "BatchNorm1d", "BatchNorm2d", "SyncBatchNorm", "LayerNorm", "RMSNorm", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "Embedding", "Flatten", "Unflatten",
    "ReLU", "LeakyReLU", "GELU", "SiLU", "ELU", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "Softplus",
    "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss",
    "BCEWithLogitsLoss",
    "Bilinear", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "CELU", "SELU", "GLU", "Hardsigmoid", "Hardswish",
    "Mish", "Softsign", "Tanhshrink", "CosineSimilarity", "PairwiseDistance", "PixelShuffle", "PixelUnshuffle",
    "KLDivLoss", "MarginRankingLoss", "TripletMarginLoss",
    "Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d", "MaxPool3d",
    "AvgPool1d", "AvgPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "Upsample", "UpsamplingNearest2d",
    "UpsamplingBilinear2d", "Hardtanh",
    "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer",
    "TransformerDecoderLayer",
    "EmbeddingBag",
    "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
    "AlphaDropout", "FeatureAlphaDropout", "CTCLoss",
]
