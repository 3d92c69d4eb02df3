"""Scalar ALU edge semantics from the RDNA ISA guide's own examples."""

import numpy as np
from harness import Rig, ptr

FLBIT = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dwordx4 s[8:11], s[0:1], 0x8
  s_waitcnt lgkmcnt(0)
  s_flbit_i32 s8, s8
  s_flbit_i32 s9, s9
  s_flbit_i32 s10, s10
  s_flbit_i32 s11, s11
  v_mov_b32 v0, 0
  v_mov_b32 v1, s8
  v_mov_b32 v2, s9
  v_mov_b32 v3, s10
  v_mov_b32 v4, s11
  global_store_dwordx4 v0, v[1:4], s[4:5]
  s_endpgm
"""


def test_s_flbit_i32_counts_the_sign_bit():
    # ISA guide: S_FLBIT_I32(0x40000000) = 1, (0xfffffffe) = 31 (leading bits equal to the sign
    # bit, the sign bit included); 0 and 0xffffffff give -1.
    r = Rig(FLBIT)
    out = r.buf(np.zeros(4, np.uint32), "out")
    vals = np.array([0x40000000, 0xFFFFFFFE, 0, 0xFFFFFFFF], np.uint32)
    args = r.buf(np.concatenate([np.array(ptr(out), np.uint32), vals]), "kernarg")
    res = r.run(r.config(user_sgprs=ptr(args)))
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.read(out, np.int32, 4), [1, 31, -1, -1])
