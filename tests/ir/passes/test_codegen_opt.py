"""The IR's passes (ir/passes: folding, forwarding, narrowing, dce) and the constant-operand forms
of the frontend (v_med3 with two constants) against the general path.

Each program runs twice: once with its constants inline or literal (so the frontend and the
optimiser see them: clamp form of v_med3, constant folding, x + 0, lo32 of a 64-bit op in 32 bits,
64-bit shifts by a constant in 32 bits, ...) and once reading the same bits from memory with
s_load (values the translator cannot know: the general expansion).  Results must be the same bits
for every lane, under MODE.IEEE on and off and with denormals flushed or kept; the inputs are edge
values (NaN payloads, signaling NaNs, +-0, infinities, denormals).  Programs whose optimised form
has no general twin compare with NumPy.
"""

from __future__ import annotations

import re
import struct

import numpy as np
import pytest
from asm import assemble

from wavelift.dispatch.config import DispatchConfig
from wavelift.memory.guest import GuestMemory
from wavelift.run.execute import execute_dispatch

LANES = 64  # two wave32 waves


def f32(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


X32 = [
    0x00000000,
    0x80000000,
    f32(0.5),
    f32(-0.5),
    f32(1.0),
    f32(-1.0),
    f32(255.0),
    f32(-255.0),
    f32(256.0),
    f32(254.99998),
    f32(2.0),
    f32(-2.0),
    f32(-1.5),
    f32(3.0),
    f32(-4.0),
    f32(100.25),
    0x7F800000,
    0xFF800000,  # +-inf
    0x7FC00000,
    0x7FC00001,
    0xFFC00000,
    0x7FFFFFFF,
    0xFFFFFFFF,  # quiet NaNs
    0x7F800001,
    0x7FBFFFFF,
    0xFF800001,
    0xFFA00000,
    0x7F812345,  # signaling NaNs
    0x00000001,
    0x807FFFFF,
    0x00400000,
    0x80000010,  # denormals
    0x00800000,
    0x80800000,
    0x7F7FFFFF,
    0xFF7FFFFF,
    f32(1e-30),
    f32(-1e30),
]
X32 += [int(v) for v in np.random.default_rng(7).integers(0, 1 << 32, LANES - len(X32))]
X32 = np.array(X32, np.uint32)

MODES = [(ieee, fm) for ieee in (False, True) for fm in (0xF0, 0x00)]  # IEEE x denormals kept/flushed


def run(text, inp, ieee=False, float_mode=0xF0, table=(), nout=1):
    """Run ``text`` (s[0:1] input, s[2:3] output, s[4:5] constant table) on 64 lanes; lane i reads
    the dword inp[i] into v1 and the program stores its results with STORE (below)."""
    code = assemble(text)
    mem = GuestMemory()
    prog = mem.alloc(len(code) + 256, name="code", data=code + b"\0" * 256)
    pin = mem.alloc(LANES * 4, name="in", data=np.asarray(inp, np.uint32).tobytes())
    pout = mem.alloc(LANES * 4 * nout, name="out", data=bytes(LANES * 4 * nout))
    tab = np.asarray(list(table) + [0], np.uint32)
    ptab = mem.alloc(tab.nbytes, name="table", data=tab.tobytes())
    user = (pin & 0xFFFFFFFF, pin >> 32, pout & 0xFFFFFFFF, pout >> 32, ptab & 0xFFFFFFFF, ptab >> 32)
    rsrc1 = (float_mode << 12) | (1 << 21) | (int(ieee) << 23)
    cfg = DispatchConfig(
        target="gfx1030",
        program_address=prog,
        wave_size=32,
        rsrc1=rsrc1,
        rsrc2=0,
        rsrc3=0,
        user_sgprs=user,
        tgid_enabled=(False, False, False),
        tidig_comp_cnt=0,
        lds_bytes=0,
        block=(LANES, 1, 1),
        partial=(0, 0, 0),
        partial_tg=False,
        group_start=(0, 0, 0),
        group_end=(1, 1, 1),
        system_sgprs={},
    )
    res = execute_dispatch(mem, cfg)
    assert res.landed, res.refusal
    return np.frombuffer(mem.read(pout, LANES * 4 * nout), np.uint32).reshape(nout, LANES).copy()


HEAD = """
  v_lshlrev_b32 v9, 2, v0
  global_load_dword v1, v9, s[0:1]
  s_waitcnt vmcnt(0)
"""
STORE = """
  global_store_dword v9, {r}, s[2:3]
  v_add_nc_u32 v9, 0x100, v9
"""


def twins(lines, consts):
    """(optimised program, general program, constant table): ``lines`` are instruction templates
    whose {k} fields are constant operands; the optimised program writes the constants in place,
    the general one reads them from the table (s_load into s10, s11, ...)."""
    fields = sorted({int(k) for ln in lines for k in re.findall(r"\{(\d+)\}", ln)})
    assert len(fields) <= 20
    opt = HEAD + "\n".join("  " + ln.format(*[c[0] for c in consts]) for ln in lines)
    load = "".join(f"  s_load_dword s{10 + k}, s[4:5], {4 * k:#x}\n" for k in fields)
    gen = (
        HEAD
        + load
        + "  s_waitcnt lgkmcnt(0)\n"
        + "\n".join("  " + ln.format(*[f"s{10 + k}" for k in range(len(consts))]) for ln in lines)
    )
    return opt, gen, [c[1] for c in consts]


def check_twins(lines, consts, outs, inp=X32, modes=MODES):
    opt, gen, table = twins(lines, consts)
    store = "".join(STORE.format(r=r) for r in outs) + "  s_endpgm\n"
    for ieee, fm in modes:
        a = run(opt + store, inp, ieee, fm, nout=len(outs))
        b = run(gen + store, inp, ieee, fm, table, nout=len(outs))
        bad = np.argwhere(a != b)
        assert not len(bad), (
            f"ieee={ieee} mode={fm:#x}: {len(bad)} lanes differ, first "
            f"result {bad[0][0]} lane {bad[0][1]}: x={inp[bad[0][1]]:#010x} "
            f"optimised {a[tuple(bad[0])]:#010x} general {b[tuple(bad[0])]:#010x}"
        )


# (asm operand, bits): at most one literal per VOP3 instruction
ZERO, NZERO, ONE, MONE = ("0", 0), ("0x80000000", 0x80000000), ("1.0", f32(1.0)), ("-1.0", f32(-1.0))
PAIRS = [
    (ZERO, ("0x437f0000", f32(255.0))),
    (("0x437f0000", f32(255.0)), ZERO),  # the clamp compilers emit
    (NZERO, ONE),
    (ONE, NZERO),
    (MONE, ZERO),
    (ZERO, MONE),
    (MONE, NZERO),
    (NZERO, MONE),
    (("-2.0", f32(-2.0)), MONE),
    (ONE, ("0x7f800000", 0x7F800000)),
    (("0xff800000", 0xFF800000), ("0.5", f32(0.5))),
    (("-4.0", f32(-4.0)), ("4.0", f32(4.0))),
    (("0.5", f32(0.5)), ONE),
    # not a clamp (general path on both sides): equal values, a NaN, a denormal constant
    (("0.5", f32(0.5)), ("0.5", f32(0.5))),
    (ZERO, NZERO),
    (("0x7fc00000", 0x7FC00000), ONE),
    (("0x7f800001", 0x7F800001), ZERO),
    (("0x00000001", 1), ONE),
]


@pytest.mark.parametrize("pair", range(len(PAIRS)))
def test_med3_f32_two_constants(pair):
    (ca, cb) = PAIRS[pair]
    lines = [
        "v_med3_f32 v2, v1, {0}, {1}",
        "v_med3_f32 v3, {0}, v1, {1}",
        "v_med3_f32 v4, {0}, {1}, v1",
        "v_med3_f32 v5, -v1, {0}, {1}",
        "v_med3_f32 v6, |v1|, {1}, {0}",
    ]
    check_twins(lines, [ca, cb], ["v2", "v3", "v4", "v5", "v6"])


def test_med3_f32_modifiers_on_constants():
    # abs/neg of an inline constant is still a constant (-|2.0| = -2.0, -(0) = -0)
    lines = [
        "v_med3_f32 v2, v1, -|{0}|, {1}",
        "v_med3_f32 v3, neg({1}), v1, {0}",
        "v_med3_f32 v4, {0}, neg({1}), v1",
        "v_med3_f32 v5, neg({1}), |{1}|, v1",
    ]
    check_twins(lines, [("2.0", f32(2.0)), ZERO], ["v2", "v3", "v4", "v5"])


X16 = np.array(
    [
        0x0000,
        0x8000,
        0x3C00,
        0xBC00,
        0x3800,
        0xB800,
        0x7C00,
        0xFC00,
        0x7E00,
        0x7E01,
        0xFE00,
        0x7C01,
        0x7DFF,
        0xFC01,
        0x0001,
        0x83FF,
        0x0400,
        0x7BFF,
        0xFBFF,
        0x4000,
        0xC000,
        0x3BFF,
    ],
    np.uint32,
)
X16 = np.concatenate(
    [X16, np.random.default_rng(16).integers(0, 1 << 16, LANES - len(X16)).astype(np.uint32)]
)
X16 = X16 | (np.random.default_rng(17).integers(0, 1 << 16, LANES).astype(np.uint32) << 16)


@pytest.mark.parametrize(
    "pair",
    [
        (("0", 0), ("1.0", 0x3C00)),
        (("1.0", 0x3C00), ("0", 0)),
        (("-1.0", 0xBC00), ("0", 0)),
        (("0", 0), ("-1.0", 0xBC00)),
        (("-1.0", 0xBC00), ("0x8000", 0x8000)),
        (("0.5", 0x3800), ("0.5", 0x3800)),
    ],
)
def test_med3_f16_two_constants(pair):
    lines = ["v_med3_f16 v2, v1, {0}, {1}", "v_med3_f16 v3, {0}, v1, {1}", "v_med3_f16 v4, {0}, {1}, v1"]
    pre = ["v_mov_b32 v2, v1", "v_mov_b32 v3, v1", "v_mov_b32 v4, v1"]  # the high halves are kept
    check_twins(pre + lines, list(pair), ["v2", "v3", "v4"], inp=X16)


def test_fmin_fmax_with_zero():
    lines = [
        "v_max_f32 v2, {0}, v1",
        "v_max_f32_e64 v3, v1, {1}",
        "v_min_f32 v4, {0}, v1",
        "v_min_f32_e64 v5, v1, {1}",
        "v_max_f32_e64 v6, {1}, v1",
        "v_min_f32_e64 v7, v1, {0}",
    ]
    check_twins(lines, [ZERO, NZERO], ["v2", "v3", "v4", "v5", "v6", "v7"])


U32 = np.concatenate(
    [
        np.array([0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x12345678], np.uint32),
        np.random.default_rng(32).integers(0, 1 << 32, LANES - 8, dtype=np.uint64).astype(np.uint32),
    ]
)


def test_integer_identities():
    lines = [
        "v_add_nc_u32 v2, {0}, v1",
        "v_or_b32 v3, {0}, v1",
        "v_xor_b32 v4, v1, {0}",
        "v_and_b32 v5, {1}, v1",
        "v_mul_lo_u32 v6, v1, {2}",
        "v_lshlrev_b32 v7, {0}, v1",
        "v_sub_nc_u32 v8, v1, {0}",
        "v_sub_nc_u32 v10, {0}, v1",
        "v_lshrrev_b32 v11, {0}, v1",
        "v_ashrrev_i32 v12, {0}, v1",
        "v_add_co_u32 v13, vcc_lo, v1, {0}",
        "v_cndmask_b32 v14, 0, 1, vcc_lo",
    ]
    check_twins(
        lines,
        [("0", 0), ("-1", 0xFFFFFFFF), ("1", 1)],
        ["v2", "v3", "v4", "v5", "v6", "v7", "v8", "v10", "v11", "v12", "v13", "v14"],
        inp=U32,
        modes=[(False, 0xF0)],
    )


@pytest.mark.parametrize("shift", [0, 1, 5, 31, 32, 33, 63])
def test_shift64_by_constant(shift):
    # 64-bit shifts of (v1, v1 ^ lane pattern) and of (v1, 0): lo/hi words in 32 bits
    lines = [
        "v_xor_b32 v3, 0x9e3779b9, v1",
        "v_mov_b32 v2, v1",
        "v_lshlrev_b64 v[4:5], {0}, v[2:3]",
        "v_lshrrev_b64 v[6:7], {0}, v[2:3]",
        "v_mov_b32 v3, 0",
        "v_lshlrev_b64 v[10:11], {0}, v[2:3]",
        "v_ashrrev_i64 v[12:13], {0}, v[2:3]",
    ]
    check_twins(
        lines,
        [(str(shift), shift)],
        ["v4", "v5", "v6", "v7", "v10", "v11", "v12", "v13"],
        inp=U32,
        modes=[(False, 0xF0)],
    )


@pytest.mark.parametrize("k", [0x9E3779B9, 1, 0])
def test_mad_u64_low_word_with_partial_exec(k):
    # v_mad_u64_u32 whose high word is overwritten (the low word computed in 32 bits) and
    # 64-bit shift of the result; part of the lanes off.  Against NumPy.
    text = (
        HEAD
        + f"""
  v_mov_b32 v2, 0x1234567
  v_mov_b32 v3, -1
  v_mov_b32 v4, v1
  v_mov_b32 v5, v1
  s_mov_b32 exec_lo, 0x5a5ac3c3
  v_mad_u64_u32 v[4:5], null, v1, {k:#x}, v[2:3]
  v_mov_b32 v5, 0
  v_lshlrev_b64 v[6:7], 2, v[4:5]
  v_mad_u64_u32 v[10:11], null, {k:#x}, v1, v[6:7]
  s_mov_b32 exec_lo, -1
"""
        + "".join(STORE.format(r=r) for r in ("v4", "v5", "v6", "v7", "v10", "v11"))
        + "  s_endpgm\n"
    )
    got = run(text, U32, nout=6)
    on = ((0x5A5AC3C3 >> (np.arange(LANES) % 32)) & 1).astype(bool)
    x = U32.astype(np.uint64)
    with np.errstate(over="ignore"):
        m = x * np.uint64(k) + np.uint64(0xFFFFFFFF01234567)
        v4 = np.where(on, m & np.uint64(0xFFFFFFFF), x)
        v5 = np.where(on, 0, x)
        v67 = np.where(on, (v4 | (v5 << np.uint64(32))) << np.uint64(2), 0)
        v1011 = np.where(on, np.uint64(k) * x + v67, 0)
    M = np.uint64(0xFFFFFFFF)
    want = [v4, v5, v67 & M, v67 >> np.uint64(32), v1011 & M, v1011 >> np.uint64(32)]
    for r, wv in enumerate(want):
        np.testing.assert_array_equal(got[r], wv.astype(np.uint32), err_msg=f"result {r}")


def test_overwritten_vgpr_writes():
    # a write covered by a later one under the same EXEC is dropped; under another EXEC it is not
    text = (
        HEAD
        + """
  v_xor_b32 v3, 0x55, v1
  v_mov_b32 v2, 7
  s_mov_b32 exec_lo, 0x5555aaaa
  v_mov_b32 v2, v1
  v_mov_b32 v2, v3
  v_mov_b32 v4, 9
  s_mov_b32 exec_lo, 0x0000ffff
  v_mov_b32 v4, v1
  s_mov_b32 exec_lo, 0xffff0000
  v_mov_b32 v4, v3
  s_mov_b32 exec_lo, -1
"""
        + "".join(STORE.format(r=r) for r in ("v2", "v4"))
        + "  s_endpgm\n"
    )
    got = run(text, U32, nout=2)
    lane = np.arange(LANES) % 32
    x, x3 = U32, U32 ^ 0x55
    on = ((0x5555AAAA >> lane) & 1).astype(bool)
    np.testing.assert_array_equal(got[0], np.where(on, x3, 7))
    np.testing.assert_array_equal(got[1], np.where(lane < 16, x, np.where(lane >= 16, x3, 9)))


def test_carry_chain_with_uniform_operand():
    # 64-bit add of a uniform (s_load) pair and a per-lane pair: lo, hi and the carry out
    text = (
        HEAD
        + """
  s_load_dwordx2 s[10:11], s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  v_xor_b32 v3, 0x80000001, v1
  v_add_co_u32 v4, vcc_lo, s10, v1
  v_add_co_ci_u32_e32 v5, vcc_lo, s11, v3, vcc_lo
  v_cndmask_b32_e64 v6, 0, 1, vcc_lo
  v_add_co_u32 v7, s12, v1, s10
  v_cndmask_b32_e64 v8, 0, 1, s12
"""
        + "".join(STORE.format(r=r) for r in ("v4", "v5", "v6", "v7", "v8"))
        + "  s_endpgm\n"
    )
    for a, b in ((0x80000000, 0x7FFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (1, 0), (0, 0)):
        got = run(text, U32, table=(a, b), nout=5)
        x = U32.astype(np.uint64)
        hi = (U32 ^ np.uint32(0x80000001)).astype(np.uint64)
        lo = (x + np.uint64(a)) & np.uint64(0xFFFFFFFF)
        carry = (x + np.uint64(a)) >> np.uint64(32)
        hsum = hi + np.uint64(b) + carry
        np.testing.assert_array_equal(got[0], lo.astype(np.uint32))
        np.testing.assert_array_equal(got[1], (hsum & np.uint64(0xFFFFFFFF)).astype(np.uint32))
        np.testing.assert_array_equal(got[2], (hsum >> np.uint64(32)).astype(np.uint32))
        np.testing.assert_array_equal(got[3], lo.astype(np.uint32))
        np.testing.assert_array_equal(got[4], carry.astype(np.uint32))


LIVE = (
    HEAD
    + """
  s_load_dwordx2 s[10:11], s[4:5], 0x0
  s_waitcnt lgkmcnt(0)
  v_mov_b32 v2, 5
  s_mov_b32 s12, 7
  s_mov_b32 s13, 13
  v_mov_b32 v3, v1
  s_mov_b32 exec_lo, 0xffff
  v_mov_b32 v7, 1
  s_mov_b32 exec_lo, -1
  v_add_co_u32 v4, vcc_lo, v1, s11
  s_cmp_eq_u32 s10, 0
  s_cbranch_scc1 .L1
  v_add_nc_u32 v3, 1, v3
  s_mov_b32 s12, 11
  s_mov_b32 exec_lo, 0xffff0000
  v_mov_b32 v7, 2
  s_mov_b32 exec_lo, -1
.L1:
  v_add_co_ci_u32_e32 v5, vcc_lo, 0, v2, vcc_lo
  v_add_nc_u32 v6, s12, v3
  s_mov_b32 s14, 0
.Lloop:
  v_add_nc_u32 v6, v6, v2
  s_add_u32 s14, s14, 1
  s_cmp_lt_u32 s14, 3
  s_cbranch_scc1 .Lloop
  s_branch .LA
.LB:
  v_add_nc_u32 v8, s13, v1
"""
    + "".join(STORE.format(r=r) for r in ("v4", "v5", "v6", "v7", "v8"))
    + """
  s_endpgm
.LA:
  v_mov_b32 v10, 1
  s_branch .LB
"""
)


@pytest.mark.parametrize("sel, k", [(0, 0xFFFFFFF0), (1, 0xFFFFFFF0), (1, 3)])
def test_registers_live_across_blocks(sel, k):
    # register writes that later blocks read (directly, through a block that does not touch
    # them, around a loop, VCC as a carry, VGPRs written under different EXEC masks) survive
    # the dead-write removal that uses the blocks' liveness
    got = run(LIVE, U32, table=(sel, k), nout=5)
    x = U32.astype(np.uint64)
    lane = np.arange(LANES) % 32
    s = x + np.uint64(k)
    v3 = U32 + np.uint32(sel)
    np.testing.assert_array_equal(got[0], (s & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    np.testing.assert_array_equal(got[1], (5 + (s >> np.uint64(32))).astype(np.uint32))
    np.testing.assert_array_equal(got[2], v3 + np.uint32(11 if sel else 7) + np.uint32(15))
    np.testing.assert_array_equal(got[3], np.where(lane < 16, 1, 2 if sel else 0))
    np.testing.assert_array_equal(got[4], U32 + np.uint32(13))
