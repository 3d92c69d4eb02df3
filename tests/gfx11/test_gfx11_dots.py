"""GFX11 (gfx1100) V_DOT2_F32_BF16, V_DOT2_F16_F16, V_CVT_PK_I16_F32/V_CVT_PK_U16_F32 and
V_MULLIT_F32 against NumPy references written from the RDNA3 ISA guide's pseudo-code.  The dot
products are checked within one unit in the last place of their result (the guide's pseudo-code
does not give the internal rounding; wavelift rounds once); the others bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from gfx11_rig import HAVE_MC, run11

pytestmark = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
MODES = ("wave", "lane")

PROGRAM = """
  v_lshlrev_b32 v10, 2, v0
  global_load_b32 v1, v10, s[2:3]
  global_load_b32 v2, v10, s[2:3] offset:128
  global_load_b32 v3, v10, s[2:3] offset:256
  global_load_b32 v4, v10, s[2:3] offset:384
  global_load_b32 v5, v10, s[2:3] offset:512
  s_waitcnt vmcnt(0)
  v_dot2_f32_bf16 v11, v1, v2, v3
  v_dot2_f32_bf16 v12, v1, v2, v3 neg_lo:[1,0,1] neg_hi:[0,1,0]
  v_mov_b32 v13, 0x5a5a0000
  v_dot2_f16_f16 v13, v1, v2, v4
  v_cvt_pk_i16_f32 v14, v3, v5
  v_cvt_pk_u16_f32 v15, v3, v5
  v_mullit_f32 v16, v3, v5, v4
  global_store_b32 v10, v11, s[0:1]
  global_store_b32 v10, v12, s[0:1] offset:128
  global_store_b32 v10, v13, s[0:1] offset:256
  global_store_b32 v10, v14, s[0:1] offset:384
  global_store_b32 v10, v15, s[0:1] offset:512
  global_store_b32 v10, v16, s[0:1] offset:640
  s_endpgm
"""


def _bf16(words, half):
    return ((words >> (16 * half)) << 16 & 0xFFFF0000).astype(np.uint32).view(np.float32).astype(np.float64)


def _f16(words, half):
    return ((words >> (16 * half)) & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)


def _within_ulp(got, want, t):
    want_t = want.astype(t)
    ulp = np.spacing(np.abs(want_t)).astype(np.float64)
    assert (np.abs(got.astype(np.float64) - want) <= ulp).all(), (got, want)


def _cvt_sat(x, lo, hi):
    """v_cvt_i16_f32 / v_cvt_u16_f32: truncation, saturation, NaN -> 0."""
    with np.errstate(invalid="ignore"):
        r = np.trunc(np.nan_to_num(x, nan=0.0, posinf=hi, neginf=lo))
    return np.clip(r, lo, hi).astype(np.int64) & 0xFFFF


@pytest.mark.parametrize("mode", MODES)
def test_dots_cvt_pk_and_mullit(mode):
    rng = np.random.default_rng(1100)
    halves = rng.standard_normal((2, 2, 32)).astype(np.float32)
    v1 = (halves[0, 0].view(np.uint32) >> 16) | (halves[0, 1].view(np.uint32) & 0xFFFF0000)  # bf16 pairs
    v2 = (halves[1, 0].view(np.uint32) >> 16) | (halves[1, 1].view(np.uint32) & 0xFFFF0000)
    v3 = (rng.standard_normal(32) * 30000).astype(np.float32)
    v3[:6] = [np.nan, np.inf, -np.inf, 70000.0, -70000.0, -0.75]
    v4 = rng.standard_normal(32).astype(np.float32)  # mullit's S2 (and dot2_f16's S2 low half)
    v4[6:9] = [0.0, -0.0, np.nan]
    v5 = (rng.standard_normal(32) * 40000).astype(np.float32)
    v5[9:12] = [-np.finfo(np.float32).max, -np.inf, np.nan]
    inp = np.stack([v1, v2, v3.view(np.uint32), v4.view(np.uint32), v5.view(np.uint32)])
    res, out = run11(PROGRAM, inp, 192, mode)
    assert res.landed, res.refusal
    got = out.reshape(6, 32)

    c = v3.astype(np.float64)
    keep = np.isfinite(c)
    dot = _bf16(v1, 0) * _bf16(v2, 0) + _bf16(v1, 1) * _bf16(v2, 1) + c
    _within_ulp(got[0].view(np.float32)[keep], dot[keep], np.float32)
    dot_neg = -_bf16(v1, 0) * _bf16(v2, 0) + _bf16(v1, 1) * -_bf16(v2, 1) - c
    _within_ulp(got[1].view(np.float32)[keep], dot_neg[keep], np.float32)

    # the same words read as f16 pairs; S2 is v4's low half; v13's high half is kept
    z16 = _f16(v4.view(np.uint32), 0)
    dot16 = _f16(v1, 0) * _f16(v2, 0) + _f16(v1, 1) * _f16(v2, 1) + z16
    fin = np.isfinite(dot16) & (np.abs(dot16) < 60000)
    np.testing.assert_array_equal(got[2] >> 16, np.full(32, 0x5A5A))
    r16 = (got[2] & 0xFFFF).astype(np.uint16).view(np.float16)
    _within_ulp(r16[fin], dot16[fin], np.float16)

    np.testing.assert_array_equal(got[3], _cvt_sat(v3, -32768, 32767) | _cvt_sat(v5, -32768, 32767) << 16)
    np.testing.assert_array_equal(got[4], _cvt_sat(v3, 0, 65535) | _cvt_sat(v5, 0, 65535) << 16)

    big = np.float32(-np.finfo(np.float32).max)
    with np.errstate(invalid="ignore", over="ignore"):
        bad = (v5 == big) | (v5 == -np.inf) | np.isnan(v5) | ~(v4 > 0)
        want = np.where(bad, big, v3 * v5).astype(np.float32)
    ok = ~np.isnan(want)  # a NaN product: any NaN (v3's NaN lane)
    np.testing.assert_array_equal(got[5].view(np.float32)[ok].view(np.uint32), want[ok].view(np.uint32))
    assert np.isnan(got[5].view(np.float32)[~ok]).all()
