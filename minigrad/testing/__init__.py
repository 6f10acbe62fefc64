"""Testing utilities: the op registry (`op_db`, PyTorch's OpInfo idea) that every op test reads.

    from minigrad.testing import op_db
    for info in op_db:
        for s in info.sample_inputs(np.random.default_rng(0)): ...
"""
from .opinfo import OpInfo, SampleInput, Const, op_db, ops_named, public_ops  # noqa: F401
