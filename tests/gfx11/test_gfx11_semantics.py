"""GFX11 (gfx1100) semantics on hand-assembled programs (llvm-mc-19 --mcpu=gfx1100) against NumPy
references written from the RDNA3 ISA guide (decision 0023): VOPD's read-before-write, the
swapped M0/NULL operand codes, SCRATCH's SVE/SADDR/13-bit signed offset, GLOBAL's negative
offset, ds_cmpstore's operand order, packed work-item ids in v0, the scheduling no-ops, and the
named refusal of 16-bit VOP1/VOP2 operands in VGPRs 128-255."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "execute"))

from asm import HAVE_MC, assemble  # noqa: E402
from harness import Rig, ptr  # noqa: E402

pytestmark = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
MODES = ("wave", "lane")


class Rig11(Rig):
    """The test harness's rig for gfx1100 code."""

    def __init__(self, src: str, wave64: bool = False):
        super().__init__("s_endpgm", wave64)
        self.target = "gfx1100"
        self.code = assemble(src, wave64, mcpu="gfx1100")
        self.prog = self.mem.alloc(len(self.code) + 256, name="code11", data=self.code + b"\0" * 256)


def _run(src, n_out, mode, wave64=False, block=(32, 1, 1), tidig=0, lds=0, **kw):
    """Run ``src`` with s[0:1] = an output buffer of ``n_out`` u32 (filled with 0xdeadbeef);
    -> (result, output)."""
    r = Rig11(src, wave64)
    out = r.buf(np.full(n_out, 0xDEADBEEF, np.uint32), "out")
    cfg = r.config(user_sgprs=ptr(out), block=block, tidig=tidig, lds=lds, **kw)
    res = r.run(cfg, mode=mode)
    return res, r.read(out, np.uint32, n_out)


LANE = np.arange(32, dtype=np.uint32)

VOPD = """
  v_lshlrev_b32 v10, 2, v0
  v_mov_b32 v1, v0
  v_mul_u32_u24 v2, 3, v0
  v_add_nc_u32 v4, 1000, v0
  v_dual_mov_b32 v2, v1 :: v_dual_mov_b32 v1, v2
  v_dual_mov_b32 v4, v1 :: v_dual_add_nc_u32 v5, v4, v2
  global_store_b32 v10, v1, s[0:1]
  global_store_b32 v10, v2, s[0:1] offset:128
  global_store_b32 v10, v4, s[0:1] offset:256
  global_store_b32 v10, v5, s[0:1] offset:384
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_vopd_reads_before_writes(mode):
    res, out = _run(VOPD, 128, mode)
    assert res.landed, res.refusal
    v1, v2, v4 = LANE.copy(), 3 * LANE, 1000 + LANE
    v2, v1 = v1, v2  # first pair: a swap (each half reads the other's old destination)
    v4, v5 = v1, v4 + v2  # the Y half reads X's destination v4 as it was
    np.testing.assert_array_equal(out, np.concatenate([v1, v2, v4, v5]))


M0_NULL = """
  s_mov_b32 m0, 0x1234
  s_mov_b32 s6, 77
  s_mov_b32 s6, null
  s_add_u32 s7, m0, s6
  s_mov_b32 null, 5
  v_mov_b32 v1, s7
  v_add_nc_u32 v1, m0, v1
  v_lshlrev_b32 v10, 2, v0
  v_readlane_b32 m0, v0, 3
  s_add_u32 s8, m0, 0
  v_mov_b32 v2, s8
  global_store_b32 v10, v1, s[0:1]
  global_store_b32 v10, v2, s[0:1] offset:128
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_m0_and_null_codes(mode):
    """GFX11 encodes NULL as 124 and M0 as 125 (GFX10: the other way round)."""
    res, out = _run(M0_NULL, 64, mode)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(out[:32], np.full(32, 2 * 0x1234, np.uint32))
    np.testing.assert_array_equal(out[32:], np.full(32, 3, np.uint32))


SCRATCH = """
  v_lshlrev_b32 v10, 2, v0
  v_mul_u32_u24 v2, 7, v0
  v_add_nc_u32 v2, 5, v2
  s_movk_i32 s8, 0x100
  scratch_store_b32 off, v2, s8 offset:-64
  v_mov_b32 v4, 92
  scratch_load_b32 v3, v4, off offset:100
  v_mov_b32 v6, 100
  s_movk_i32 s9, 100
  scratch_load_b32 v5, v6, s9 offset:-8
  s_waitcnt vmcnt(0)
  global_store_b32 v10, v3, s[0:1]
  global_store_b32 v10, v5, s[0:1] offset:128
  v_add_nc_u32 v11, 4, v10
  global_load_b32 v7, v11, s[0:1] offset:-4
  s_waitcnt vmcnt(0)
  v_add_nc_u32 v7, 1, v7
  global_store_b32 v10, v7, s[0:1] offset:256
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_scratch_sve_saddr_and_signed_offsets(mode):
    """scratch address = (SVE ? VGPR : 0) + (SADDR unless NULL) + 13-bit signed offset: three
    forms of private offset 192 meet; a GLOBAL offset of -4 reads the element before."""
    cfg_kw = {"scratch_enabled": True, "scratch_wave_bytes": 256 * 32, "tmpring_waves": 1}
    cfg_kw["scratch_base"] = 0x10000000
    res, out = _run(SCRATCH, 96, mode, **cfg_kw)
    assert res.landed, res.refusal
    v = 7 * LANE + 5
    np.testing.assert_array_equal(out[:32], v)
    np.testing.assert_array_equal(out[32:64], v)
    np.testing.assert_array_equal(out[64:], v + 1)


DS_CMPSTORE = """
  v_lshlrev_b32 v1, 2, v0
  v_add_nc_u32 v2, 10, v0
  ds_store_b32 v1, v2
  v_and_b32 v6, 1, v0
  v_add_nc_u32 v5, v2, v6
  v_add_nc_u32 v4, 500, v0
  ds_cmpstore_rtn_b32 v3, v1, v4, v5
  s_waitcnt lgkmcnt(0)
  ds_load_b32 v7, v1
  s_waitcnt lgkmcnt(0)
  global_store_b32 v1, v3, s[0:1]
  global_store_b32 v1, v7, s[0:1] offset:128
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_ds_cmpstore_operand_order(mode):
    """ds_cmpstore_rtn_b32 vdst, addr, DATA0 (the value stored), DATA1 (the compare value)."""
    res, out = _run(DS_CMPSTORE, 64, mode, lds=128)
    assert res.landed, res.refusal
    old = 10 + LANE
    cmp = old + (LANE & 1)
    new = 500 + LANE
    np.testing.assert_array_equal(out[:32], old)
    np.testing.assert_array_equal(out[32:], np.where(cmp == old, new, old))


PACKED = """
  s_delay_alu instid0(VALU_DEP_1)
  s_set_inst_prefetch_distance 0x2
  s_clause 0x0
  v_mbcnt_lo_u32_b32 v1, -1, 0
  v_lshlrev_b32 v1, 2, v1
  s_lshl_b32 s2, s2, 7
  v_add_nc_u32 v1, s2, v1
  global_store_b32 v1, v0, s[0:1]
  s_sendmsg sendmsg(MSG_DEALLOC_VGPRS)
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_packed_workitem_ids(mode):
    """v0 = x | y << 10 | z << 20 on GFX11 (TIDIG_COMP_CNT 2), one wave of 32 per group."""
    block = (4, 4, 2)
    r = Rig11(PACKED)
    out = r.buf(np.full(32, 0xDEADBEEF, np.uint32), "out")
    cfg = r.config(user_sgprs=ptr(out), block=block, tidig=2)
    res = r.run(cfg, mode=mode)
    assert res.landed, res.refusal
    z, y, x = np.meshgrid(np.arange(2), np.arange(4), np.arange(4), indexing="ij")
    want = (x | y << 10 | z << 20).reshape(-1).astype(np.uint32)
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), want)


def test_vopd_in_wave64_is_refused():
    res, _ = _run("v_dual_mov_b32 v2, v1 :: v_dual_mov_b32 v1, v2\ns_endpgm", 1, "wave", wave64=False)
    assert res.landed
    r = Rig11("s_endpgm", wave64=True)
    # VOPD does not exist in wave64: the same bytes, decoded for wave64, refuse by name (the
    # decoder, as LLVM 19 does: not a wave64 instruction)
    r.code = assemble("v_dual_mov_b32 v2, v1 :: v_dual_mov_b32 v1, v2\ns_endpgm", False, mcpu="gfx1100")
    r.prog = r.mem.alloc(len(r.code) + 256, name="code64", data=r.code + b"\0" * 256)
    res = r.run(r.config(block=(64, 1, 1), tgid=(False, False, False)))
    assert not res.landed and res.refusal.code == "program.decode_error"


def test_16bit_operand_in_high_vgprs_is_refused():
    """VOP2 v_add_f16_e32 with VSRC1 = 129 (the high half of v1 on hardware, which LLVM 19 does
    not produce or accept): refused by name, not guessed."""
    word = int.from_bytes(assemble("v_add_f16_e32 v1, v1, v2", mcpu="gfx1100")[:4], "little")
    word = (word & ~(0xFF << 9)) | (129 << 9)
    r = Rig11("s_endpgm")
    r.code = word.to_bytes(4, "little") + assemble("s_endpgm", mcpu="gfx1100")
    r.prog = r.mem.alloc(len(r.code) + 256, name="codehi", data=r.code + b"\0" * 256)
    res = r.run(r.config(tgid=(False, False, False)))
    assert not res.landed and res.refusal.code == "program.unsupported_instruction"
    assert "v129" in res.refusal.message or "128" in res.refusal.message
