"""Constant folding never turns a float constant into an int: `v_cmp_class_f16_e32 vcc_lo, -11, v124`
takes the integer inline constant -11 as the f16 bits 0xfff5, a NaN, and the optimiser's identity
rules (x & ~0 -> x, x * 1 -> x) called int() on it (ValueError: cannot convert float NaN to
integer) on both tiers -- found by random programs (issue 19)."""

import numpy as np
import pytest
from harness import Rig, ptr

pytestmark = pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py)

SRC = """
    v_mov_b32 v124, s2
    v_cmp_class_f16_e32 vcc_lo, -11, v124
    v_cndmask_b32 v1, 0, 1, vcc_lo
    v_lshlrev_b32 v0, 2, v0
    global_store_dword v0, v1, s[0:1]
    s_endpgm
"""


@pytest.mark.parametrize("mask, want", [(2, 1), (0x3FD, 0)])
def test_class_of_a_nan_constant(mask, want):
    """0xfff5 is a quiet NaN (class bit 1), not a signalling one (bit 0) nor any number."""
    r = Rig(SRC)
    out = r.buf(np.full(32, 7, np.uint32), name="out")
    res = r.run(r.config(user_sgprs=ptr(out) + (mask,)), mode="wave")
    assert res.refusal is None, res.refusal
    assert (r.read(out, np.uint32, 32) == want).all()
