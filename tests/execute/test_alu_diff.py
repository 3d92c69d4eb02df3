"""Differential tests: one VALU opcode at a time vs a NumPy reference of its documented
semantics, with NaN/inf/denormal/overflow edges.  Adding an opcode = one line in CASES."""

import numpy as np
import pytest
from harness import Rig, ptr
from hypothesis import given, settings
from hypothesis import strategies as st

u32, i32, f32 = np.uint32, np.int32, np.float32


def F(x):
    return x.view(f32)


def flush(x):
    return np.where((np.abs(x) < f32(2.0**-126)) & (x != 0), np.copysign(f32(0), x), x).astype(f32)


def _ieee_off(r, *ops):
    """NaN results under MODE.IEEE clear (the Rig's MODE): a NaN from NaN operands is the first
    of them as it is, not quieted; an invalid operation gives the default NaN 0xffc00000, as on
    x86 (docs/float-semantics.md "NaN results")."""
    r = np.asarray(r, f32).view(u32)
    nan = np.isnan(r.view(f32))
    for x in reversed(ops):
        r = np.where(nan & np.isnan(F(x)), x, r)
    return r.astype(u32)


def _fmin(a, b):
    a, b = F(a), F(b)
    r = np.where((a < b) | ((a == b) & np.signbit(a)), a, b)
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, r)).astype(f32).view(u32)


def _cvt_u32(a):
    x = np.trunc(F(a).astype(np.float64))
    return np.clip(np.where(np.isnan(x), 0, x), 0, 2**32 - 1).astype(u32)


# name: (float_mode, reference on uint32 bit arrays a, b -> uint32 bits)
CASES = {
    "v_add_f32": (0xF0, lambda a, b: _ieee_off(F(a) + F(b), a, b)),
    "v_mul_f32": (0xF0, lambda a, b: _ieee_off(F(a) * F(b), a, b)),
    "v_sub_f32": (0x00, lambda a, b: _ieee_off(flush(flush(F(a)) - flush(F(b))), a, b)),
    "v_min_f32": (0xF0, _fmin),
    "v_add_nc_u32": (0xF0, lambda a, b: a + b),
    "v_mul_lo_u32": (0xF0, lambda a, b: a * b),
    "v_mul_hi_u32": (0xF0, lambda a, b: ((a.astype(np.uint64) * b) >> 32).astype(u32)),
    "v_mul_hi_i32": (0xF0, lambda a, b: ((a.view(i32).astype(np.int64) * b.view(i32)) >> 32).astype(u32)),
    "v_lshlrev_b32": (0xF0, lambda a, b: b << (a & 31)),
    "v_ashrrev_i32": (0xF0, lambda a, b: (b.view(i32) >> (a & 31).astype(i32)).view(u32)),
    "v_max_i32": (0xF0, lambda a, b: np.maximum(a.view(i32), b.view(i32)).view(u32)),
    "v_cvt_u32_f32": (0xF0, lambda a, b: _cvt_u32(a)),
    "v_bfrev_b32": (0xF0, lambda a, b: np.array([int(f"{int(x):032b}"[::-1], 2) for x in a], u32)),
    "v_ffbh_u32": (
        0xF0,
        lambda a, b: np.array([31 - int(x).bit_length() + 1 if x else 0xFFFFFFFF for x in a], u32),
    ),
}
UNARY = {"v_cvt_u32_f32", "v_bfrev_b32", "v_ffbh_u32"}
EDGES = [
    0,
    1,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFF,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0x7F800001,
    0x00000001,
    0x807FFFFF,
    0x00800000,
    0x3F800000,
    0xBF800000,
    0x4F800000,
    0x80000001,
    31,
    32,
    33,
]
word = st.one_of(st.sampled_from(EDGES), st.integers(0, 2**32 - 1))
lanes = st.lists(word, min_size=32, max_size=32)

_RIGS = {}


def rig(op):
    if op not in _RIGS:
        body = f"{op} v3, v1" if op in UNARY else f"{op} v3, v1, v2"
        _RIGS[op] = Rig(f"""
  s_load_dwordx4 s[4:7], s[0:1], 0x0
  s_load_dwordx2 s[8:9], s[0:1], 0x10
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v9, 2, v0
  global_load_dword v1, v9, s[4:5]
  global_load_dword v2, v9, s[6:7]
  s_waitcnt vmcnt(0)
  {body}
  global_store_dword v9, v3, s[8:9]
  s_endpgm""")
    return _RIGS[op]


def run_op(op, a, b):
    r = rig(op)
    mode, _ = CASES[op]
    pa, pb, po = r.buf(a, "a"), r.buf(b, "b"), r.buf(np.zeros(32, u32), "o")
    args = r.buf(np.array([pa, pb, po], np.uint64), "args")
    res = r.run(r.config(user_sgprs=ptr(args), float_mode=mode), cache=_CACHE)
    assert res.landed, res.refusal
    return r.read(po, u32, 32)


_CACHE = {}


@pytest.mark.parametrize("op", sorted(CASES))
@settings(max_examples=15, deadline=None)
@given(a=lanes, b=lanes)
def test_opcode(op, a, b):
    a, b = np.array(a, u32), np.array(b, u32)
    with np.errstate(all="ignore"):
        want = CASES[op][1](a, b).astype(u32)
    got = run_op(op, a, b)
    ok = got == want  # NaN results too: sign and payload
    bad = np.flatnonzero(~ok)
    assert not bad.size, [(hex(a[i]), hex(b[i]), hex(got[i]), hex(want[i])) for i in bad[:4]]
