"""NaN results as RDNA gives them (docs/float-semantics.md "NaN results", decision 0017): one
dispatch per op and MODE.IEEE setting on hand-picked operands, each expected pattern written from
the sourced rule (default NaN 0xffc00000 / 0xfff8000000000000 / 0xfe00 for invalid operations;
the first NaN operand, quieted only under MODE.IEEE; the ops with rules of their own).
test_alu_ops.py checks the same rules on drawn operands against alu_ref."""

from __future__ import annotations

import pytest
from test_alu_ops import _run_known

INF, NINF, ONE = 0x7F800000, 0xFF800000, 0x3F800000
QA, SB = 0x7FC00123, 0x7F800456  # a quiet and a signaling f32 NaN with payloads
DN32, DN64, DN16 = 0xFFC00000, 0xFFF8000000000000, 0xFE00

# op: [(a, b, c, want under IEEE=1, want under IEEE=0)]
RULES = {
    "v_add_f32": [
        (INF, NINF, 0, DN32, DN32),  # the inf + -inf
        (SB, ONE, 0, SB | 1 << 22, SB),  # one NaN: quieted only under IEEE
        (ONE, SB | 1 << 31, 0, SB | 1 << 31 | 1 << 22, SB | 1 << 31),  # sign kept
        (QA, SB, 0, QA, QA),  # two NaNs: the first
        (SB, QA, 0, SB | 1 << 22, SB),
    ],
    "v_fma_f32": [
        (0, INF, QA, DN32, DN32),  # invalid product beats a NaN addend
        (ONE, ONE, SB, SB | 1 << 22, SB),
        (SB, 0, QA, SB | 1 << 22, SB),
    ],
    "v_subrev_f32": [(SB, 0xFF800789, 0, 0xFFC00789, 0xFF800789)],  # S1 - S0: S1's NaN first
    "v_fract_f32": [(INF, 0, 0, DN32, DN32), (SB, 0, 0, SB | 1 << 22, SB)],
    "v_sqrt_f32": [(0xBF800000, 0, 0, DN32, DN32)],
    "v_log_f32": [(0xBF800000, 0, 0, DN32, DN32)],
    "v_div_fixup_f32": [
        (ONE, 0, 0, DN32, DN32),  # 0/0
        (ONE, SB, QA, QA, QA),  # NaN S2 first, quieted always
        (ONE, SB, ONE, SB | 1 << 22, SB | 1 << 22),
    ],
    "v_min_f32": [
        (SB, ONE, 0, SB | 1 << 22, ONE),  # IEEE: the sNaN quieted
        (QA, ONE, 0, ONE, ONE),
    ],
    "v_cvt_f16_f32": [(0x7F802001, 0, 0, 0x7E01, 0x7E01)],  # quieted whatever MODE
    "v_cvt_f32_f16": [(0x7C01, 0, 0, 0x7FC02000, 0x7F802000)],
    "v_add_f16": [(0x7C00, 0xFC00, 0, DN16, DN16), (0x7C01, 0x7E02, 0, 0x7E01, 0x7C01)],
    "v_add_f64": [
        (0x7FF0000000000000, 0xFFF0000000000000, 0, DN64, DN64),
        (0x7FF0000000000009, 0, 0, 0x7FF8000000000009, 0x7FF0000000000009),
    ],
}
MASK = {"v_cvt_f16_f32": 0xFFFF, "v_add_f16": 0xFFFF, "v_add_f64": (1 << 64) - 1}


def _check(op, ieee):
    rows = RULES[op]
    got = _run_known(op, [r[:3] for r in rows], ieee=ieee)
    m = MASK.get(op, 0xFFFFFFFF)
    bad = [
        (hex(r[0]), hex(r[1]), hex(r[2]), hex(int(g) & m), hex(r[3 if ieee else 4]))
        for r, g in zip(rows, got)
        if int(g) & m != r[3 if ieee else 4]
    ]
    assert not bad, (op, "IEEE=%d" % ieee, bad)


@pytest.mark.parametrize("ieee", [True, False])
@pytest.mark.parametrize("op", sorted(RULES))
def test_nan_rule(op, ieee):
    _check(op, ieee)


@pytest.mark.tiers
@pytest.mark.parametrize("ieee", [True, False])
def test_nan_rule_tiers(ieee):
    """The native tier (the CUDA prelude's fix-ups compiled for the host) gives the same bits
    (every value op's lowering is checked against NumPy's, NaNs included, by
    tests/cuda/test_cuda_ops_host.py; this runs the fma and fnan ones in a dispatch, v_subrev
    taking its sources in the other order)."""
    for op in ("v_fma_f32", "v_subrev_f32"):
        _check(op, ieee)
