"""ir/blends.py's lane-wise op set is exactly what the C-family targets lower as per-lane
expressions (VALUE_EXPR), plus the two ops whose lowering is not an expression but still lane by
lane (``lane_id``: no operands; ``word``: a word of a load's result): an op added to the table
lands in both or the analysis would taint (or refuse to defer) the wrong ops."""

from wavelift.backends.cfamily.lowering import VALUE_EXPR
from wavelift.ir.blends import LANEWISE


def test_lanewise_ops_are_the_c_family_value_expressions():
    assert LANEWISE == VALUE_EXPR | {"lane_id", "word"}
