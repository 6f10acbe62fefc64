"""Registry entries for the nn.functional ops and for the backward Functions (op-as-backward
Functions such as ReluBackward, whose forward is the NumPy VJP): `nn_op_db`, appended to `op_db`.

Same OpInfo/SampleInput as minigrad/testing/opinfo.py. nn.functional entries are named
"nn.functional.<name>" (the default torch_op is then torch.nn.functional.<name>); backward-Function
entries take kind="backward", op=lambda g, *saved: SomeBackward.apply(g, *saved), ref = the NumPy VJP.
"""
from .opinfo import OpInfo, SampleInput, Const, unary_samples, binary_samples, samples  # noqa: F401

nn_op_db = []
