"""GFX12 (gfx1200) semantics on hand-assembled programs (llvm-mc-19 --mcpu=gfx1200) against NumPy
references written from the RDNA4 ISA guide (decision 0027): the 64-bit scalar adds, the 24-bit
signed VGLOBAL/VSCRATCH and SMEM offsets, atomics' return through th, the split barrier, the split
wait counters and cache write-back/invalidate as no-ops, workgroup ids in TTMP7/TTMP9, and the
named refusals."""

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
LANE = np.arange(32, dtype=np.uint32)


class Rig12(Rig):
    """The test harness's rig for gfx1200 code."""

    def __init__(self, src: str, wave64: bool = False):
        super().__init__("s_endpgm", wave64)
        self.target = "gfx1200"
        self.code = assemble(src, wave64, mcpu="gfx1200")
        self.prog = self.mem.alloc(len(self.code) + 256, name="code12", data=self.code + b"\0" * 256)


def _run(src, n_out, mode, wave64=False, block=(32, 1, 1), extra=(), **kw):
    """Run ``src`` with s[0:1] = an output buffer of ``n_out`` u32 (filled with 0xdeadbeef) and
    ``extra`` user SGPRs after it; -> (result, output)."""
    r = Rig12(src, wave64)
    out = r.buf(np.full(n_out, 0xDEADBEEF, np.uint32), "out")
    cfg = r.config(user_sgprs=ptr(out) + tuple(extra), block=block, tgid=(False, False, False), **kw)
    res = r.run(cfg, mode=mode)
    return res, r.read(out, np.uint32, n_out)


SCALAR64 = """
  s_mov_b32 s4, 0xfffffff0
  s_mov_b32 s5, 0x00000001
  s_mov_b32 s6, 0x00000020
  s_mov_b32 s7, 0x00000002
  s_cmp_eq_u32 s4, s4
  s_add_nc_u64 s[8:9], s[4:5], s[6:7]
  s_sub_nc_u64 s[10:11], s[6:7], s[4:5]
  s_mul_u64 s[12:13], s[4:5], s[6:7]
  s_cselect_b32 s14, 7, 9
  v_lshlrev_b32 v10, 2, v0
  v_mov_b32 v1, s8
  v_mov_b32 v2, s9
  v_mov_b32 v3, s10
  v_mov_b32 v4, s11
  v_mov_b32 v5, s12
  v_mov_b32 v6, s13
  v_mov_b32 v7, s14
  global_store_b32 v10, v1, s[0:1]
  global_store_b32 v10, v2, s[0:1] offset:128
  global_store_b32 v10, v3, s[0:1] offset:256
  global_store_b32 v10, v4, s[0:1] offset:384
  global_store_b32 v10, v5, s[0:1] offset:512
  global_store_b32 v10, v6, s[0:1] offset:640
  global_store_b32 v10, v7, s[0:1] offset:768
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_scalar_64bit_add_sub_mul(mode):
    """s_add_nc_u64/s_sub_nc_u64/s_mul_u64: 64-bit results modulo 2^64; SCC is left as it was."""
    res, out = _run(SCALAR64, 7 * 32, mode)
    assert res.landed, res.refusal
    x, y = 0x1FFFFFFF0, 0x200000020
    m = (1 << 64) - 1
    want = []
    for v in (x + y & m, y - x & m, x * y & m):
        want += [v & 0xFFFFFFFF, v >> 32]
    want.append(7)  # SCC from s_cmp_eq_u32 (1), untouched by the three
    got = out.reshape(7, 32)
    for k, w in enumerate(want):
        np.testing.assert_array_equal(got[k], np.full(32, w, np.uint32), err_msg=f"word {k}")


MEMORY = """
  v_lshlrev_b32 v10, 2, v0
  v_add_nc_u32 v1, 5, v0
  v_add_nc_u32 v11, 0x20000, v10
  global_store_b32 v11, v1, s[0:1] offset:-0x1ff80
  s_wait_storecnt 0x0
  global_wb scope:SCOPE_DEV
  global_inv scope:SCOPE_DEV
  s_prefetch_data s[0:1], 0x0, null, 0
  s_wait_loadcnt_dscnt 0x0
  global_load_b32 v2, v10, s[0:1] offset:128
  s_wait_loadcnt 0x0
  v_add_nc_u32 v2, 1, v2
  scratch_store_b32 v10, v2, off offset:0x12340
  s_wait_storecnt 0x0
  scratch_load_b32 v3, v10, off offset:0x12340
  s_wait_loadcnt 0x0
  global_store_b32 v10, v3, s[0:1]
  s_load_b32 s6, s[0:1], 0x84
  s_wait_kmcnt 0x0
  v_mov_b32 v4, s6
  global_store_b32 v10, v4, s[0:1] offset:256
  v_mov_b32 v5, 100
  global_atomic_add_u32 v6, v10, v5, s[0:1] offset:256 th:TH_ATOMIC_RETURN
  global_atomic_add_u32 v10, v5, s[0:1] offset:384
  s_wait_loadcnt 0x0
  global_store_b32 v10, v6, s[0:1] offset:512
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_24bit_offsets_atomic_return_and_wait_noops(mode):
    """VGLOBAL/VSCRATCH offsets are 24-bit signed (-0x1ff80 and 0x12340 do not fit GFX11's 13
    bits), SMEM's too; th:TH_ATOMIC_RETURN returns the pre-op value; the wait counters and
    global_wb/global_inv only schedule."""
    cfg_kw = {"scratch_enabled": True, "scratch_wave_bytes": 0x20000 * 32, "tmpring_waves": 1}
    cfg_kw["scratch_base"] = 0x10000000
    res, out = _run(MEMORY, 5 * 32, mode, **cfg_kw)
    assert res.landed, res.refusal
    got = out.reshape(5, 32)
    v = LANE + 5
    np.testing.assert_array_equal(got[1], v)  # the store at 0x20000 - 0x1ff80 = 128
    np.testing.assert_array_equal(got[0], v + 1)  # through scratch at 0x12340
    np.testing.assert_array_equal(got[2], np.full(32, 6, np.uint32) + 100)  # s_load of word 33, then +100
    np.testing.assert_array_equal(got[3], np.full(32, 0xDEADBEEF + 100, np.uint32))
    np.testing.assert_array_equal(got[4], np.full(32, 6, np.uint32))  # returned before the add


SALU_F32 = """
  s_load_b128 s[4:7], s[2:3], 0x0
  s_wait_kmcnt 0x0
  s_add_f32 s8, s4, s5
  s_sub_f32 s9, s4, s5
  s_mul_f32 s10, s4, s5
  s_mov_b32 s11, s6
  s_fmac_f32 s11, s4, s5
  s_fmaak_f32 s12, s4, s5, 0x40490fdb
  s_fmamk_f32 s13, s4, 0x40490fdb, s5
  s_floor_f32 s14, s6
  s_ceil_f32 s15, s6
  s_trunc_f32 s16, s6
  s_rndne_f32 s17, s6
  s_cvt_i32_f32 s18, s6
  s_cvt_u32_f32 s19, s6
  s_cvt_f32_i32 s20, s7
  s_cvt_f32_u32 s21, s7
  s_cmp_lt_f32 s4, s5
  s_cselect_b32 s22, 1, 0
  s_cmp_u_f32 s4, s6
  s_cselect_b32 s23, 1, 0
  s_cmp_neq_f32 s4, s4
  s_cselect_b32 s24, 1, 0
  v_mov_b32 v1, 0
"""


def _salu_case(vals):
    x, y, z = (np.float32(v) for v in vals[:3])
    w = np.uint32(vals[3])
    K = np.float32(3.14159274101257324)
    with np.errstate(all="ignore"):

        def fma(a, b_, c):
            return np.float32(np.float64(a) * np.float64(b_) + np.float64(c))  # exact product in f64

        f = [x + y, x - y, x * y, fma(x, y, z), fma(x, y, K), fma(x, K, y)]
        f += [np.floor(z), np.ceil(z), np.trunc(z), np.rint(z)]
        words = [np.float32(v).view(np.uint32) for v in f]
        zi = 0 if np.isnan(z) else int(np.clip(np.trunc(np.float64(z)), -(2**31), 2**31 - 1))
        zu = 0 if np.isnan(z) else int(np.clip(np.trunc(np.float64(z)), 0, 2**32 - 1))
        words += [np.uint32(zi & 0xFFFFFFFF), np.uint32(zu)]
        words += [np.float32(np.int32(w.view(np.int32))).view(np.uint32), np.float32(w).view(np.uint32)]
        words += [np.uint32(x < y), np.uint32(np.isnan(x) or np.isnan(z)), np.uint32(not (x == x))]
    return np.array(words, np.uint32)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "vals",
    [
        (1.5, -2.25, 7.5, 0x80000005),
        (3.0e38, 3.0e38, -2.5, 1234567),
        (float("nan"), 2.0, -0.5, 7),
        (0.1, 0.2, 4.0e9, 5),
    ],
)
def test_scalar_f32_ops(mode, vals):
    """The f32 scalar float instructions (GFX12, also gfx1150's) against NumPy float32: the VALU
    op's arithmetic on scalar operands, FMAs with one rounding (the f64 product of two f32 is
    exact and these sums round once), conversions saturating with NaN -> 0, compares to SCC."""
    n = 17
    stores = "\n".join(
        f"  v_mov_b32 v2, s{8 + k}\n  global_store_b32 v1, v2, s[0:1] offset:{4 * k}" for k in range(n)
    )
    r = Rig12(SALU_F32 + stores + "\n  s_endpgm")
    out = r.buf(np.full(n, 0xDEADBEEF, np.uint32), "out")
    raw = np.array([np.float32(v).view(np.uint32) for v in vals[:3]] + [vals[3]], np.uint32)
    inp = r.buf(raw, "in")
    cfg = r.config(user_sgprs=ptr(out) + ptr(inp), tgid=(False, False, False), float_mode=0xF0)
    res = r.run(cfg, mode=mode)
    assert res.landed, res.refusal
    got = r.read(out, np.uint32, n)
    want = _salu_case(vals)
    nan = [np.isnan(np.uint32(v).view(np.float32)) for v in want[:10]]
    for k in range(n):
        if k < 10 and nan[k]:
            assert np.isnan(np.uint32(got[k]).view(np.float32)), k
        else:
            assert got[k] == want[k], (k, hex(got[k]), hex(want[k]))


VOPD_MINMAX = """
  v_lshlrev_b32 v10, 2, v0
  v_cvt_f32_u32 v1, v0
  v_sub_f32 v2, 15.0, v1
  v_mov_b32 v6, v1
  v_mov_b32 v7, v2
  v_dual_max_num_f32 v3, v1, v2 :: v_dual_min_num_f32 v4, v6, v7
  global_store_b32 v10, v3, s[0:1]
  global_store_b32 v10, v4, s[0:1] offset:128
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_vopd_max_min_num(mode):
    """GFX12's VOPD v_dual_max_num_f32/v_dual_min_num_f32 run as GFX11's v_dual_max_f32/min_f32."""
    res, out = _run(VOPD_MINMAX, 64, mode)
    assert res.landed, res.refusal
    x = LANE.astype(np.float32)
    y = np.float32(15.0) - x
    np.testing.assert_array_equal(out[:32].view(np.float32), np.maximum(x, y))
    np.testing.assert_array_equal(out[32:].view(np.float32), np.minimum(x, y))


VS_OPS = """
  s_load_b32 s4, s[2:3], 0x0
  s_wait_kmcnt 0x0
  v_s_rcp_f32 s5, s4
  v_s_rsq_f32 s6, |s4|
  v_s_sqrt_f32 s7, s4
  v_s_exp_f32 s8, -s4
  v_s_log_f32 s9, s4
  v_s_sqrt_f32 null, s4
  v_rcp_f32 v1, s4
  v_rsq_f32 v2, |s4|
  v_sqrt_f32 v3, s4
  v_exp_f32 v4, -s4
  v_log_f32 v5, s4
  v_mov_b32 v0, 0
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("value", [2.5, 0.0, -3.0, 1.0e-30, float("inf")])
def test_vs_transcendentals(mode, value):
    """GFX12's v_s_<op>_f32 write the SGPR the value v_<op>_f32 gives in a lane (abs/neg as VOP3
    applies them); a NULL destination writes nothing."""
    stores = "\n".join(
        f"  v_mov_b32 v6, s{5 + k}\n  global_store_b32 v0, v6, s[0:1] offset:{4 * k}\n"
        f"  global_store_b32 v0, v{1 + k}, s[0:1] offset:{32 + 4 * k}"
        for k in range(5)
    )
    r = Rig12(VS_OPS + stores + "\n  s_endpgm")
    out = r.buf(np.full(16, 0xDEADBEEF, np.uint32), "out")
    inp = r.buf(np.array([value], np.float32), "in")
    res = r.run(r.config(user_sgprs=ptr(out) + ptr(inp), tgid=(False, False, False)), mode=mode)
    assert res.landed, res.refusal
    got = r.read(out, np.uint32, 16)
    np.testing.assert_array_equal(got[:5], got[8:13])


BARRIER = """
  v_lshlrev_b32 v10, 2, v0
  v_mul_u32_u24 v1, 3, v0
  ds_store_b32 v10, v1
  s_wait_dscnt 0x0
  s_barrier_signal -1
  s_barrier_wait -1
  v_sub_nc_u32 v11, 252, v10
  ds_load_b32 v2, v11
  s_wait_dscnt 0x0
  global_store_b32 v10, v2, s[0:1]
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
def test_split_barrier(mode):
    """Two waves of a 64-lane workgroup exchange through LDS across s_barrier_signal -1 /
    s_barrier_wait -1: lane i reads what lane 63 - i stored."""
    res, out = _run(BARRIER, 64, mode, block=(64, 1, 1), lds=256)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(out, 3 * (63 - np.arange(64, dtype=np.uint32)))


@pytest.mark.parametrize(
    "text",
    [
        "s_barrier_signal 1",  # a named barrier
        "s_barrier_wait 1",
        "buffer_load_d16_hi_format_x v1, off, s[8:11], null",  # VBUFFER (test_gfx12_buffers.py)
        "v_pk_add_u16 v1, v2, 1",  # an inline constant through op_sel_hi
        "s_getreg_b32 s4, hwreg(HW_REG_SCRATCH_BASE_LO)",
        "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 8, 2), 1",
        "s_add_f16 s1, s2, s3",  # the f16 scalar float ops: not carried out
        "s_max_num_f32 s1, s2, s3",
        "s_barrier_signal_isfirst -1",
    ],
)
def test_forms_without_semantics_are_refused_by_name(text):
    r = Rig12(text + "\ns_endpgm")
    res = r.run(r.config(tgid=(False, False, False)))
    assert not res.landed and res.refusal.code == "program.unsupported_instruction", res.refusal
    assert text.split()[0] in res.refusal.message


def test_16bit_operand_in_high_vgprs_is_refused():
    """v_add_f16_e32 v1, v130, v2 (VOP2 words: LLVM 19 assembles the text only as e64): a
    16-bit operand in VGPR 128-255 is a high half on hardware: refused by name."""
    r = Rig12(".long 0x64020582\ns_endpgm")
    res = r.run(r.config(tgid=(False, False, False)))
    assert not res.landed and res.refusal.code == "program.unsupported_instruction"
    assert "v_add_f16" in res.refusal.message and "VGPR 128-255" in res.refusal.message


WGID = """
  s_load_b64 s[0:1], s[0:1], 0x0
  s_wait_kmcnt 0x0
  s_and_b32 s5, ttmp7, 0xffff
  s_lshr_b32 s6, ttmp7, 16
  s_mul_i32 s7, s5, 2
  s_mul_i32 s8, s6, 6
  s_add_co_u32 s4, ttmp9, s7
  s_add_co_u32 s4, s4, s8
  s_lshl_b32 s4, s4, 3
  v_mov_b32 v1, ttmp9
  v_mov_b32 v2, ttmp7
  v_mov_b32 v4, s4
  global_store_b64 v4, v[1:2], s[0:1]
  s_endpgm
"""


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("z_enabled", [True, False])
def test_workgroup_ids_in_ttmp_registers(mode, z_enabled):
    """build_config puts workgroup id x in TTMP9, y in TTMP7 and (TGID_Z_EN) z in TTMP8, and the
    program's prologue packs TTMP7 = y | z << 16 (LLVM 19 reads them so); without TGID_Z_EN
    TTMP7 is y alone (LLVM then reads y from the whole register); ids beyond 16 bits refuse."""
    from wavelift.dispatch.setup import TTMP7, TTMP8, TTMP9, build_config
    from wavelift.errors import Refused
    from wavelift.stream.registers import RegisterFile

    regs = RegisterFile("gfx1200")
    r = Rig12(WGID)
    gz = 2 if z_enabled else 1
    out = r.buf(np.full(2 * 6 * gz, 0xDEADBEEF, np.uint32), "out")
    arg = r.buf(np.array(ptr(out), np.uint32), "arg")
    rsrc2 = (2 << 1) | (int(z_enabled) << 9)  # USER_SGPR = 2, TGID_Z_EN
    for name, v in (
        ("COMPUTE_PGM_LO", r.prog >> 8),
        ("COMPUTE_PGM_HI", r.prog >> 40),
        ("COMPUTE_PGM_RSRC2", rsrc2),
        ("COMPUTE_USER_DATA_0", arg & 0xFFFFFFFF),
        ("COMPUTE_USER_DATA_1", arg >> 32),
        ("COMPUTE_NUM_THREAD_X", 1),
        ("COMPUTE_NUM_THREAD_Y", 1),
        ("COMPUTE_NUM_THREAD_Z", 1),
    ):
        regs[name] = v
    ini = 1 | (1 << 2) | (1 << 15)  # COMPUTE_SHADER_EN, FORCE_START_AT_000, CS_W32_EN
    cfg = build_config(regs, "gfx1200", dims=(2, 3, gz), initiator=ini)
    want_sys = {"workgroup_id_x": TTMP9, "workgroup_id_y": TTMP7}
    if z_enabled:
        want_sys["workgroup_id_z"] = TTMP8
    assert cfg.system_sgprs == want_sys
    res = r.run(cfg, mode=mode)
    assert res.landed, res.refusal
    got = r.read(out, np.uint32, 2 * 6 * gz).reshape(-1, 2)
    ids = [(x, y, z) for z in range(gz) for y in range(3) for x in range(2)]
    np.testing.assert_array_equal(got[:, 0], [x for x, _, _ in ids])
    np.testing.assert_array_equal(got[:, 1], [y | z << 16 for _, y, z in ids])
    with pytest.raises(Refused) as e:
        build_config(regs, "gfx1200", dims=(2, 0x10001, 1), initiator=ini)
    assert e.value.refusal.code == "dispatch.bad_register" and "TTMP7" in str(e.value)


@pytest.mark.parametrize(
    "text",
    ["s_mov_b32 s1, ttmp8", "s_mov_b32 ttmp7, 0", "v_mov_b32 v1, ttmp0", "v_readfirstlane_b32 ttmp9, v1"],
)
def test_other_trap_registers_are_refused_by_name(text):
    """Only reading TTMP7/TTMP9 (the workgroup ids) is modelled on GFX12."""
    r = Rig12(text + "\ns_endpgm")
    res = r.run(r.config(tgid=(False, False, False)))
    assert not res.landed and res.refusal.code == "program.unsupported_instruction", res.refusal
    assert "TTMP7/TTMP9" in res.refusal.message


def test_every_scalar_float_instruction_has_a_handler():
    """Each scalar float mnemonic of gfx1150's and gfx1200's tables is in gfx12.HANDLERS (run or
    refused by name): none reaches a family frontend's integer prefix rule (s_max_f32 read as
    s_max_u32)."""
    import re

    from wavelift.frontend import gfx12

    tables = pathlib.Path(__file__).resolve().parents[2] / "wavelift" / "isa" / "tables"
    names: set[str] = set()
    for t in ("gfx1150", "gfx1200"):
        names |= set(
            re.findall(r'"(s_[a-z0-9_]*_f(?:16|32)[a-z0-9_]*)"', (tables / f"{t}_w32.json").read_text())
        )
    assert len(names) >= 62
    assert names <= set(gfx12.HANDLERS), sorted(names - set(gfx12.HANDLERS))


@pytest.mark.parametrize("mode", MODES)
def test_scalar_float_on_gfx1150(mode):
    """gfx1150 has the same f32 scalar float instructions (LLVM's FeatureSALUFloatInsts): they run
    there too; s_max_f32 is refused by name."""

    class Rig1150(Rig):
        def __init__(self, src):
            super().__init__("s_endpgm")
            self.target = "gfx1150"
            self.code = assemble(src, False, mcpu="gfx1150")
            self.prog = self.mem.alloc(len(self.code) + 256, name="code1150", data=self.code + b"\0" * 256)

    r = Rig1150(
        "s_mov_b32 s4, 0x3fc00000\n s_add_f32 s5, s4, 0x40100000\n v_mov_b32 v1, 0\n v_mov_b32 v2, s5\n"
        " global_store_b32 v1, v2, s[0:1]\n s_endpgm"
    )
    out = r.buf(np.zeros(1, np.uint32), "out")
    res = r.run(r.config(user_sgprs=ptr(out), tgid=(False, False, False)), mode=mode)
    assert res.landed, res.refusal
    assert r.read(out, np.float32, 1)[0] == np.float32(1.5) + np.float32(2.25)
    r = Rig1150("s_max_f32 s1, s2, s3\ns_endpgm")
    res = r.run(r.config(tgid=(False, False, False)), mode=mode)
    assert not res.landed and res.refusal.code == "program.unsupported_instruction"
    assert "s_max_f32" in res.refusal.message
