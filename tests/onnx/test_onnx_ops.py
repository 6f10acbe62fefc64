"""Every public op in the registry, exported to ONNX on its own: onnx.checker passes and onnxruntime
reproduces minigrad's float32 output within 1e-5 * max(1, |reference|) per element (ints and bools
exactly). A sample that does not export must say why: the NotImplementedError carries the reason its
op class declares (`onnx = NoRule("why")`, or the lowering's `c.unmapped("why")` for a case it cannot
express); an op that declares nothing fails here (tests/ops/test_op_rules.py checks the declarations)."""
import pytest

import minigrad as mg
from minigrad.autograd.function import NoRule
from minigrad.testing.opinfo import op_db

onnx = pytest.importorskip("onnx", reason="the onnx extra is not installed")
ort = pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

from _opcheck import check  # noqa: E402  (after the importorskips: it needs the extra)

OPS = [i for i in op_db if i.kind == "op"]


@pytest.mark.parametrize("info", OPS, ids=str)
def test_op_exports_and_onnxruntime_agrees_or_says_why(info):
    exported, unmapped = check(info, onnx, ort)  # every sample that exports must agree
    if not exported and not unmapped:
        pytest.skip(f"{info}: no sample returns a tensor, so there is nothing to export")
    for err in unmapped:
        msg = str(err)
        assert err.reason, (f"{info}: {msg!r} gives no reason: declare `onnx` on {err.op} (an ONNX "
                            f"operator's name, a lowering onnx(e, c), or NoRule('why'))")
        # the error names the op, the declared reason and the user's line
        assert f"has no ONNX mapping ({err.reason})" in msg and "called at" in msg and "_opcheck.py" in msg, msg
        rule = getattr(err.op, "onnx", None)
        if type(rule) is NoRule:
            assert err.reason == rule.why, msg


def test_mapped_lists_the_primitives_whose_ops_declare_a_rule():
    names = mg.onnx.mapped()
    assert names == sorted(set(names))
    assert {"add", "exp", "matmul", "reshape", "getitem", "convolution", "assign"} <= set(names)
    assert not {"cumprod", "unique", "nonzero", "cross_entropy", "randn"} & set(names)
