"""Divergence (exec masks, per-wave branches), barriers + LDS, escapes, budget."""

import numpy as np
import pytest
from harness import Rig, ptr

# tests that run a program are marked `tiers` (NumPy blocks and the native tier, tests/conftest.py)

# out[gid] = (gid odd) ? gid*3 : gid+100, via divergent if/else with exec masks; loop that
# runs gid%5 times adding 7 (scalar loop over a per-lane count using s_cbranch_execnz)
DIVERGE = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s6, s2, 5
  v_add_nc_u32 v0, s6, v0
  v_and_b32 v1, 1, v0
  v_cmp_eq_u32_e32 vcc_lo, 1, v1
  s_and_saveexec_b32 s7, vcc_lo
  s_cbranch_execz .Lelse
  v_mul_lo_u32 v2, v0, 3
.Lelse:
  s_andn2_saveexec_b32 s7, s7
  v_add_nc_u32 v2, 0x64, v0
  s_or_b32 exec_lo, exec_lo, s7
  v_mov_b32 v3, 5
  v_cvt_f32_u32 v4, v0
  v_mul_hi_u32 v5, v0, 0xcccccccd
  v_lshrrev_b32 v5, 2, v5
  v_mul_lo_u32 v5, v5, 5
  v_sub_nc_u32 v5, v0, v5
.Lloop:
  v_cmp_ne_u32_e32 vcc_lo, 0, v5
  s_and_b32 exec_lo, exec_lo, vcc_lo
  s_cbranch_execz .Ldone
  v_add_nc_u32 v2, 7, v2
  v_subrev_nc_u32 v5, 1, v5
  s_branch .Lloop
.Ldone:
  s_mov_b32 exec_lo, -1
  v_lshlrev_b32 v1, 2, v0
  global_store_dword v1, v2, s[4:5]
  s_endpgm
"""


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_divergence_and_loop():
    r = Rig(DIVERGE)
    out = r.buf(np.zeros(128, np.uint32), "out")
    res = r.run(
        r.config(
            user_sgprs=ptr(r.buf(np.array([out], np.uint64), "args")), groups=(4, 1, 1), block=(32, 1, 1)
        )
    )
    assert res.landed, res.refusal
    g = np.arange(128, dtype=np.uint32)
    want = np.where(g & 1, g * 3, g + 100) + 7 * (g % 5)
    np.testing.assert_array_equal(r.read(out, np.uint32, 128), want)


# workgroup of 64 lanes = 2 waves (wave32): each lane writes lid to LDS, barrier, reads the
# value of lane 63-lid (from the other wave) -> requires the barrier to synchronise waves
LDS = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  v_add_nc_u32 v2, 0x1000, v0
  ds_write_b32 v1, v2
  s_waitcnt lgkmcnt(0)
  s_barrier
  v_sub_nc_u32 v3, 63, v0
  v_lshlrev_b32 v3, 2, v3
  ds_read_b32 v4, v3
  ds_read2_b32 v[5:6], v3 offset1:1
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s6, s2, 6
  v_add_nc_u32 v7, s6, v0
  v_lshlrev_b32 v7, 2, v7
  v_add_nc_u32 v4, s2, v4
  global_store_dword v7, v4, s[4:5]
  s_endpgm
"""


def _decoder_knows(src):
    from asm import assemble

    from wavelift.isa import DecodeError, decode

    try:
        decode(assemble(src))
        return True
    except DecodeError:
        return False


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.skipif(not _decoder_knows("s_barrier"), reason="isa decoder lacks s_barrier (yet)")
def test_barrier_lds():
    r = Rig(LDS)
    out = r.buf(np.zeros(64 * 3, np.uint32), "out")
    res = r.run(
        r.config(
            user_sgprs=ptr(r.buf(np.array([out], np.uint64), "args")),
            groups=(3, 1, 1),
            block=(64, 1, 1),
            lds=256,
        )
    )
    assert res.landed, res.refusal
    got = r.read(out, np.uint32, 192).reshape(3, 64)
    lid = np.arange(64)
    for g in range(3):
        np.testing.assert_array_equal(got[g], 0x1000 + 63 - lid + g)


ESCAPE = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v1, 2, v0
  v_mov_b32 v2, 0x55
  global_store_dword v1, v2, s[4:5]
  v_mov_b32 v3, 0
  v_mov_b32 v4, 0x12345
  global_store_dword v[3:4], v2, off
  s_endpgm
"""


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_escape_refuses_and_changes_nothing():
    r = Rig(ESCAPE)
    out = r.buf(np.zeros(32, np.uint32), "out")
    res = r.run(r.config(user_sgprs=ptr(r.buf(np.array([out], np.uint64), "args"))))
    assert res.refusal is not None and res.refusal.code == "escape"
    assert (r.read(out, np.uint32, 32) == 0).all()  # the in-window store did not land
    assert res.stats["escapes"] == 32
    e = res.escapes[0]
    assert e.address == 0x12345 << 32 and e.kind == "store" and e.lane == 0
    assert "global_store_dword" in e.instruction
    assert res.write_spans == []


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_budget_stops_infinite_loop():
    r = Rig(".Ltop:\n s_add_u32 s5, s5, 1\n s_branch .Ltop\n s_endpgm")
    res = r.run(r.config(), budget=10000)
    assert res.refusal.code == "dispatch.budget_exceeded"


def test_unsupported_instruction_refused_up_front():
    # (storage image load/store, integer image atomics and sampling are translated; float image
    # atomics not)
    r = Rig("  image_atomic_fmin v1, v0, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_1D unorm glc\n  s_endpgm")
    res = r.run(r.config())
    assert res.refusal.code == "program.unsupported_instruction"
    assert "0x0" in res.refusal.message and "image_atomic_fmin" in res.refusal.message


WAVE64 = """
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  v_cmp_gt_u32_e64 s[6:7], 40, v0
  v_mbcnt_lo_u32_b32 v1, s6, 0
  v_mbcnt_hi_u32_b32 v1, s7, v1
  v_readlane_b32 s8, v0, 45
  v_add_nc_u32 v1, s8, v1
  v_lshlrev_b32 v2, 2, v0
  global_store_dword v2, v1, s[4:5]
  s_endpgm
"""


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_wave64_mbcnt_readlane():
    r = Rig(WAVE64, wave64=True)
    out = r.buf(np.zeros(64, np.uint32), "out")
    res = r.run(r.config(user_sgprs=ptr(r.buf(np.array([out], np.uint64), "args")), block=(64, 1, 1)))
    assert res.landed, res.refusal
    lane = np.arange(64)
    np.testing.assert_array_equal(r.read(out, np.uint32, 64), np.minimum(lane, 40) + 45)
