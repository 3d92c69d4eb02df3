"""The forward walk offers an op whose name is not in forward._NAMED straight to rule 7: each of
rules 1-6 must pass every such op on (checked for every op of the op table and the passes' own)."""

from wavelift.ir import ops
from wavelift.ir.passes import forward as fw
from wavelift.ir.passes.pipeline import PASS_OPS
from wavelift.ir.program import Op, Value


def test_rules_1_to_6_take_only_named_ops():
    assert fw._UNNAMED_RULES == fw.RULES[6:]
    others = sorted((set(ops.OPS) | PASS_OPS) - fw._NAMED)
    assert len(others) > 50
    for name in others:
        op = Op(name, "u32", (Value(1, "u32", True),), {"reg": 0}, Value(2, "u32", True), 0)
        w = fw.Walk(0, 32)
        assert [r.__name__ for r in fw.RULES[:6] if r(w, op, op.args)] == [], name
        assert w.tab.ops == [] and w.tab.sub == {}, name


def test_named_ops_are_ops():
    assert fw._NAMED <= set(ops.OPS)
