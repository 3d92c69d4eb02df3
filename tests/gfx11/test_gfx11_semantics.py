"""GFX11 (gfx1100) semantics on hand-assembled programs (llvm-mc-19 --mcpu=gfx1100) against NumPy
references written from the RDNA3 ISA guide (decision 0023): VOPD's read-before-write, the
swapped M0/NULL operand codes, SCRATCH's SVE/SADDR/13-bit signed offset, GLOBAL's negative
offset, ds_cmpstore's operand order, packed work-item ids in v0, the scheduling no-ops (16-bit
VOP1/VOP2/VOPC operands in VGPR fields 128-255: test_gfx11_halves.py)."""

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


NEW_OPS = """
  v_lshlrev_b32 v10, 2, v0
  global_load_b32 v1, v10, s[2:3]
  global_load_b32 v2, v10, s[2:3] offset:128
  global_load_b32 v3, v10, s[2:3] offset:256
  s_waitcnt vmcnt(0)
  v_maxmin_f32 v4, v1, v2, v3
  v_minmax_f32 v5, v1, v2, v3
  v_maxmin_i32 v6, v1, v2, v3
  v_minmax_u32 v7, v1, v2, v3
  v_dot4_i32_iu8 v8, v1, v2, v3 neg_lo:[1,0,0]
  v_dot4_i32_iu8 v9, v1, v2, v3 neg_lo:[0,1,0]
  v_dot8_i32_iu4 v11, v1, v2, v3 neg_lo:[1,1,0]
  v_dot4_u32_u8 v12, v1, v2, v3
  global_store_b32 v10, v4, s[0:1]
  global_store_b32 v10, v5, s[0:1] offset:128
  global_store_b32 v10, v6, s[0:1] offset:256
  global_store_b32 v10, v7, s[0:1] offset:384
  global_store_b32 v10, v8, s[0:1] offset:512
  global_store_b32 v10, v9, s[0:1] offset:640
  global_store_b32 v10, v11, s[0:1] offset:768
  global_store_b32 v10, v12, s[0:1] offset:896
  s_endpgm
"""


def _elems(x, width, signed):
    """The 32 // width elements of each u32 in x, as int64 (sign- or zero-extended)."""
    n = 32 // width
    e = (x.astype(np.int64)[:, None] >> (width * np.arange(n))) & ((1 << width) - 1)
    if signed:
        e = np.where(e >> (width - 1), e - (1 << width), e)
    return e


@pytest.mark.parametrize("mode", MODES)
def test_maxmin_and_mixed_sign_dots(mode):
    """v_maxmin/v_minmax (D = outer(inner(S0, S1), S2), NaN operands give the other), and
    v_dot4_i32_iu8 / v_dot8_i32_iu4 with NEG_LO choosing each source's signedness."""
    rng = np.random.default_rng(11)
    f = rng.standard_normal((3, 32)).astype(np.float32)
    f[0, 3] = f[1, 7] = f[2, 9] = np.float32("nan")  # quiet NaNs
    u = f.view(np.uint32).copy()
    u[:, 16:] = rng.integers(0, 2**32, (3, 16), dtype=np.uint64).astype(np.uint32)
    r = Rig11(NEW_OPS)
    out = r.buf(np.full(256, 0xDEADBEEF, np.uint32), "out")
    inp = r.buf(u.reshape(-1), "in")
    res = r.run(r.config(user_sgprs=ptr(out) + ptr(inp)), mode=mode)
    assert res.landed, res.refusal
    got = r.read(out, np.uint32, 256).reshape(8, 32)
    a, b, c = u
    fa, fb, fc = u.view(np.float32)
    with np.errstate(invalid="ignore"):
        maxmin = np.fmin(np.fmax(fa, fb), fc)
        minmax = np.fmax(np.fmin(fa, fb), fc)
    ia, ib, ic = u.view(np.int32)
    want = [
        maxmin.view(np.uint32),
        minmax.view(np.uint32),
        np.minimum(np.maximum(ia, ib), ic).view(np.uint32),
        np.maximum(np.minimum(a, b), c),
    ]
    for sa, sb, width in ((True, False, 8), (False, True, 8), (True, True, 4), (False, False, 8)):
        dot = (_elems(a, width, sa) * _elems(b, width, sb)).sum(axis=1) + (
            ic.astype(np.int64) if (sa or sb) else c.astype(np.int64)
        )
        want.append((dot & 0xFFFFFFFF).astype(np.uint32))
    lanes = np.arange(16)  # float lanes: the finite and NaN inputs
    for k in (0, 1):
        np.testing.assert_array_equal(got[k][lanes], want[k][lanes], err_msg=f"row {k}")
    for k in range(2, 8):
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"row {k}")


PERMLANE64 = """
  v_lshlrev_b32 v10, 2, v0
  v_mul_u32_u24 v1, 5, v0
  v_mov_b32 v2, 0x77
  s_mov_b32 exec_lo, 0xffff00ff
  s_mov_b32 exec_hi, 0xffff0000
  v_permlane64_b32 v2, v1
  s_mov_b64 exec, -1
  global_store_b32 v10, v2, s[0:1]
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("wave64", [False, True])
def test_permlane64(mode, wave64):
    """wave64: active lanes read lane ^ 32 (inactive source lanes too); wave32: no operation."""
    n = 64 if wave64 else 32
    src = PERMLANE64
    if not wave64:
        src = "\n".join(ln for ln in src.splitlines() if "exec" not in ln)
    r = Rig11(src, wave64)
    out = r.buf(np.full(n, 0xDEADBEEF, np.uint32), "out")
    res = r.run(r.config(user_sgprs=ptr(out), block=(n, 1, 1)), mode=mode)
    assert res.landed, res.refusal
    lane = np.arange(n, dtype=np.uint32)
    if wave64:
        exec_ = (0xFFFF0000FFFF00FF >> lane.astype(np.uint64)) & 1
        want = np.where(exec_ == 1, 5 * (lane ^ 32), 0x77).astype(np.uint32)
    else:
        want = np.full(n, 0x77, np.uint32)
    np.testing.assert_array_equal(r.read(out, np.uint32, n), want)


def test_flat_scratch_hwreg_is_refused():
    r = Rig11("s_getreg_b32 s4, hwreg(HW_REG_FLAT_SCR_LO)\ns_endpgm")
    res = r.run(r.config(tgid=(False, False, False)))
    assert not res.landed and res.refusal.code == "program.unsupported_instruction"
    assert "FLAT_SCRATCH" in res.refusal.message


@pytest.mark.parametrize(
    "text",
    [
        "s_sendmsg_rtn_b32 s4, sendmsg(MSG_RTN_GET_DOORBELL)",
        "v_wmma_bf16_16x16x16_bf16 v[0:7], v[8:15], v[16:23], v[0:7]",
        "v_dot2_bf16_bf16 v1, v2, v3, v4",
        "v_dot4_i32_iu8 v1, v2, v3, v4 clamp",
    ],
)
def test_instructions_without_semantics_are_refused_by_name(text):
    r = Rig11(text + "\ns_endpgm")
    res = r.run(r.config(tgid=(False, False, False)))
    assert not res.landed and res.refusal.code == "program.unsupported_instruction"
    assert text.split()[0] in res.refusal.message


VOP3_DPP = """
  v_lshlrev_b32 v10, 2, v0
  global_load_b32 v2, v10, s[2:3]
  global_load_b32 v3, v10, s[2:3] offset:128
  s_waitcnt vmcnt(0)
  v_mov_b32 v1, 0x40e00000
  v_mov_b32 v4, 0x40e00000
  v_mov_b32 v5, 0x40e00000
  v_add_f32_e64_dpp v1, -v2, |v3| row_shl:1 row_mask:0xf bank_mask:0xf
  v_add_f32_e64_dpp v4, v2, v3 row_shl:1 row_mask:0xf bank_mask:0xf bound_ctrl:1
  v_mul_f32_e64_dpp v5, v2, v3 dpp8:[1,0,3,2,5,4,7,6]
  global_store_b32 v10, v1, s[0:1]
  global_store_b32 v10, v4, s[0:1] offset:128
  global_store_b32 v10, v5, s[0:1] offset:256
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_vop3_dpp(mode):
    """VOP3 with DPP: src0 from another lane (row_shl:1 shifts the row of 16 left: lane l reads
    l+1; the row's last lane has no source and keeps its old value, or reads 0 with bound_ctrl),
    VOP3's abs/neg applied after the move; DPP8 selects within groups of 8."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal(32).astype(np.float32)
    c = rng.standard_normal(32).astype(np.float32)
    r = Rig11(VOP3_DPP)
    out = r.buf(np.full(96, 0xDEADBEEF, np.uint32), "out")
    inp = r.buf(np.concatenate([a, c]).view(np.uint32), "in")
    res = r.run(r.config(user_sgprs=ptr(out) + ptr(inp)), mode=mode)
    assert res.landed, res.refusal
    got = r.read(out, np.float32, 96).reshape(3, 32)
    lane = np.arange(32)
    first = lane % 16 == 15  # no source lane
    moved = np.where(first, 0.0, a[np.minimum(lane + 1, 31)]).astype(np.float32)
    want0 = np.where(first, np.float32(7.0), -moved + np.abs(c)).astype(np.float32)
    want1 = (moved + c).astype(np.float32)
    sel = np.array([1, 0, 3, 2, 5, 4, 7, 6])
    want2 = (a[(lane // 8) * 8 + sel[lane % 8]] * c).astype(np.float32)
    np.testing.assert_array_equal(got[0], want0)
    np.testing.assert_array_equal(got[1], want1)
    np.testing.assert_array_equal(got[2], want2)


@pytest.mark.parametrize(
    "text",
    [
        "v_fma_f32_e64_dpp v1, v2, v3, v4 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf",
        "v_cmp_lt_f32_e64_dpp s2, v2, v3 row_shl:1 row_mask:0xf bank_mask:0xf",
        "v_add_co_u32_e64_dpp v1, s2, v2, v3 row_shl:1 row_mask:0xf bank_mask:0xf",
    ],
)
def test_vop3_dpp_forms_without_semantics_are_refused(text):
    r = Rig11(text + "\ns_endpgm")
    res = r.run(r.config(tgid=(False, False, False)))
    assert not res.landed and res.refusal.code == "program.unsupported_instruction", res.refusal
    assert "DPP" in res.refusal.message


BUFFER = """
  s_load_b128 s[4:7], s[2:3], 0x0
  s_waitcnt lgkmcnt(0)
  v_lshlrev_b32 v10, 2, v0
  buffer_load_b32 v1, v10, s[4:7], 0 offen offset:4
  s_waitcnt vmcnt(0)
  global_store_b32 v10, v1, s[0:1]
  s_endpgm
"""


@pytest.mark.parametrize("swizzle", [0, 1, 2])
def test_buffer_v_sharp_swizzle_bits(swizzle):
    """GFX11 untyped MUBUF through a linear V# (word 1 bits [31:30] clear) reads linearly (with
    NUM_RECORDS bounds); with SWIZZLE_ENABLE set (either bit) it refuses by name at run time."""
    r = Rig11(BUFFER)
    data = np.arange(100, 164, dtype=np.uint32)
    buf = r.buf(data, "data")
    w3 = (4 | 5 << 3 | 6 << 6 | 7 << 9) | (20 << 12) | (3 << 28)  # DST_SEL, 32_UINT, OOB_SELECT 3 (raw)
    vsharp = np.array([buf & 0xFFFFFFFF, (buf >> 32) & 0xFFFF | swizzle << 30, 4 * 20, w3], np.uint32)
    desc = r.buf(vsharp, "vsharp")
    out = r.buf(np.full(32, 0xDEADBEEF, np.uint32), "out")
    res = r.run(r.config(user_sgprs=ptr(out) + ptr(desc)))
    if swizzle:
        assert not res.landed and res.refusal.code == "program.unsupported_instruction"
        assert "SWIZZLE" in res.refusal.message
        return
    assert res.landed, res.refusal
    lane = np.arange(32)
    want = np.where(4 * lane + 4 < 80, data[np.minimum(lane + 1, 63)], 0).astype(np.uint32)
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), want)


@pytest.mark.parametrize("fmt", [20, 0])
def test_typed_buffer_format_gfx11_numbering(fmt):
    """GFX11 numbers buffer formats differently from GFX10 (LLVM's tables): 20 is 32_UINT on
    GFX11 (GFX10's 20 is 32_UINT too, so the case also needs the table: 0 is INVALID on both and
    refuses by name); tests/gfx11/test_gfx11_typed_buffers.py checks the renumbered ones."""
    from wavelift.frontend import gfx11

    r = Rig11(BUFFER.replace("buffer_load_b32 v1", "buffer_load_format_x v1"))
    data = np.arange(100, 164, dtype=np.uint32)
    buf = r.buf(data, "data")
    w3 = (4 | 5 << 3 | 6 << 6 | 7 << 9) | (fmt << 12) | (3 << 28)
    desc = r.buf(np.array([buf & 0xFFFFFFFF, (buf >> 32) & 0xFFFF, 256, w3], np.uint32), "vsharp")
    out = r.buf(np.full(32, 0xDEADBEEF, np.uint32), "out")
    res = r.run(r.config(user_sgprs=ptr(out) + ptr(desc)))
    if fmt not in gfx11.format_map():
        assert not res.landed and res.refusal.code == "buffer.unsupported_format", res.refusal
        return
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), data[1:33])


PACK = """
  s_mov_b32 s4, 0x11112222
  s_mov_b32 s5, 0x33334444
  s_pack_ll_b32_b16 s6, s4, s5
  s_pack_lh_b32_b16 s7, s4, s5
  s_pack_hh_b32_b16 s8, s4, s5
  s_pack_hl_b32_b16 s9, s4, s5
  v_lshlrev_b32 v10, 2, v0
  v_mov_b32 v1, s6
  v_mov_b32 v2, s7
  v_mov_b32 v3, s8
  v_mov_b32 v4, s9
  global_store_b32 v10, v1, s[0:1]
  global_store_b32 v10, v2, s[0:1] offset:128
  global_store_b32 v10, v3, s[0:1] offset:256
  global_store_b32 v10, v4, s[0:1] offset:384
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_s_pack_forms(mode):
    """S_PACK_{LL,LH,HH,HL}_B32_B16 (HL new in GFX11): D[15:0] is S0's low/high half as the first
    letter says, D[31:16] S1's as the second does (RDNA3 ISA guide)."""
    res, out = _run(PACK, 128, mode)
    assert res.landed, res.refusal
    want = [0x4444_2222, 0x3333_2222, 0x3333_1111, 0x4444_1111]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(out[32 * k : 32 * (k + 1)], np.full(32, w, np.uint32))


PK_CONST = """
  v_lshlrev_b32 v10, 2, v0
  v_mov_b32 v1, 0x3c003c00
  v_pk_add_f16 v2, v1, 1.0
  v_mov_b32 v1, 0x44004200
  v_pk_mul_f16 v3, v1, 2.0
  v_mov_b32 v1, 0x00030005
  v_pk_add_u16 v4, v1, 2.0
  v_pk_add_u16 v5, v1, -1
  global_store_b32 v10, v2, s[0:1]
  global_store_b32 v10, v3, s[0:1] offset:128
  global_store_b32 v10, v4, s[0:1] offset:256
  global_store_b32 v10, v5, s[0:1] offset:384
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_vop3p_inline_constant_halves(mode):
    """An inline constant read by op_sel_hi (llvm-mc's default op_sel_hi:[1,1]) gives its 32-bit
    value's high half: 0 for an f16 op's float constant, the f32 pattern's high half for an
    integer op (tinygrad's hardware-validated TestVOP3P cases), all ones for -1."""
    res, out = _run(PK_CONST, 128, mode)
    assert res.landed, res.refusal
    want = [0x3C00_4000, 0x0000_4600, 0x4003_0005, 0x0002_0004]
    for k, w in enumerate(want):
        np.testing.assert_array_equal(out[32 * k : 32 * (k + 1)], np.full(32, w, np.uint32), err_msg=str(k))
