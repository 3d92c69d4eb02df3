"""Instruction-level differential test of the scalar ALU opcodes that NIR/ACO's 64-bit integer
lowerings use when the operands are uniform (division/remainder loops, shifts, compares, carry
chains, find-MSB), plus their neighbours, against references written from the RDNA2 ISA guide's
opcode descriptions with Python integers (never by calling wavelift).

Each workgroup (one wave32) runs one case: A, B, the initial SCC and the initial destination are
loaded with s_load, the opcode runs, and the destination (both dwords: a 32-bit op must leave
the high dword alone) and SCC are stored.  Ops that do not write SCC must keep the initial one.
"""

from __future__ import annotations

import numpy as np
import pytest
from harness import Rig, ptr

M32, M64 = 0xFFFFFFFF, (1 << 64) - 1


def s32(v):
    v &= M32
    return v - (1 << 32) if v >> 31 else v


def s64(v):
    v &= M64
    return v - (1 << 64) if v >> 63 else v


def clz(v, bits):
    return bits - v.bit_length() if v else -1


def ctz(v):
    return (v & -v).bit_length() - 1 if v else -1


def sat_flbit(v, bits):
    """S_FLBIT_I32(_I64): leading bits equal to the sign bit, the sign bit included; -1 for 0/-1."""
    v &= (1 << bits) - 1
    if v in (0, (1 << bits) - 1):
        return -1
    if v >> (bits - 1):
        v = ~v & ((1 << bits) - 1)
    return bits - v.bit_length()


def brev(v, bits):
    return int(format(v & ((1 << bits) - 1), "0%db" % bits)[::-1], 2)


# name: (form, A bits, B bits, D bits, reference(a, b, scc) -> (d, scc or None))
# form "sop2" D, A, B | "sop1" D, A | "sopc" A, B.  scc None: SCC unchanged.
def _ovf(r, bits=32):
    return int(not -(1 << (bits - 1)) <= r < (1 << (bits - 1)))


OPS = {
    "s_add_u32": ("sop2", 32, 32, 32, lambda a, b, c: (a + b, int(a + b > M32))),
    "s_sub_u32": ("sop2", 32, 32, 32, lambda a, b, c: (a - b, int(b > a))),
    "s_addc_u32": ("sop2", 32, 32, 32, lambda a, b, c: (a + b + c, int(a + b + c > M32))),
    "s_subb_u32": ("sop2", 32, 32, 32, lambda a, b, c: (a - b - c, int(b + c > a))),
    "s_add_i32": ("sop2", 32, 32, 32, lambda a, b, c: (a + b, _ovf(s32(a) + s32(b)))),
    "s_sub_i32": ("sop2", 32, 32, 32, lambda a, b, c: (a - b, _ovf(s32(a) - s32(b)))),
    # the difference wraps to 32 bits before its absolute value (the guide: 0x80000000, 1 -> 0x7fffffff)
    "s_absdiff_i32": ("sop2", 32, 32, 32, lambda a, b, c: (abs(s32(a - b)), int(abs(s32(a - b)) & M32 != 0))),
    "s_min_i32": ("sop2", 32, 32, 32, lambda a, b, c: (min(s32(a), s32(b)), int(s32(a) < s32(b)))),
    "s_max_i32": ("sop2", 32, 32, 32, lambda a, b, c: (max(s32(a), s32(b)), int(s32(a) > s32(b)))),
    "s_min_u32": ("sop2", 32, 32, 32, lambda a, b, c: (min(a, b), int(a < b))),
    "s_max_u32": ("sop2", 32, 32, 32, lambda a, b, c: (max(a, b), int(a > b))),
    "s_cselect_b32": ("sop2", 32, 32, 32, lambda a, b, c: (a if c else b, None)),
    "s_cselect_b64": ("sop2", 64, 64, 64, lambda a, b, c: (a if c else b, None)),
    "s_lshl_b32": ("sop2", 32, 32, 32, lambda a, b, c: (a << (b & 31), int((a << (b & 31)) & M32 != 0))),
    "s_lshr_b32": ("sop2", 32, 32, 32, lambda a, b, c: (a >> (b & 31), int(a >> (b & 31) != 0))),
    "s_ashr_i32": ("sop2", 32, 32, 32, lambda a, b, c: (s32(a) >> (b & 31), int(s32(a) >> (b & 31) != 0))),
    "s_lshl_b64": ("sop2", 64, 32, 64, lambda a, b, c: (a << (b & 63), int((a << (b & 63)) & M64 != 0))),
    "s_lshr_b64": ("sop2", 64, 32, 64, lambda a, b, c: (a >> (b & 63), int(a >> (b & 63) != 0))),
    "s_ashr_i64": ("sop2", 64, 32, 64, lambda a, b, c: (s64(a) >> (b & 63), int(s64(a) >> (b & 63) != 0))),
    "s_lshl1_add_u32": ("sop2", 32, 32, 32, lambda a, b, c: ((a << 1) + b, int((a << 1) + b > M32))),
    "s_lshl2_add_u32": ("sop2", 32, 32, 32, lambda a, b, c: ((a << 2) + b, int((a << 2) + b > M32))),
    "s_lshl4_add_u32": ("sop2", 32, 32, 32, lambda a, b, c: ((a << 4) + b, int((a << 4) + b > M32))),
    "s_bfm_b32": ("sop2", 32, 32, 32, lambda a, b, c: (((1 << (a & 31)) - 1) << (b & 31), None)),
    "s_bfm_b64": ("sop2", 32, 32, 64, lambda a, b, c: (((1 << (a & 63)) - 1) << (b & 63), None)),
    "s_mul_i32": ("sop2", 32, 32, 32, lambda a, b, c: (a * b, None)),
    "s_mul_hi_u32": ("sop2", 32, 32, 32, lambda a, b, c: ((a * b) >> 32, None)),
    "s_mul_hi_i32": ("sop2", 32, 32, 32, lambda a, b, c: ((s32(a) * s32(b)) >> 32, None)),
    "s_and_b32": ("sop2", 32, 32, 32, lambda a, b, c: (a & b, int(a & b != 0))),
    "s_or_b32": ("sop2", 32, 32, 32, lambda a, b, c: (a | b, int(a | b != 0))),
    "s_xnor_b32": ("sop2", 32, 32, 32, lambda a, b, c: (~(a ^ b), int(~(a ^ b) & M32 != 0))),
    "s_andn2_b32": ("sop2", 32, 32, 32, lambda a, b, c: (a & ~b, int(a & ~b & M32 != 0))),
    "s_and_b64": ("sop2", 64, 64, 64, lambda a, b, c: (a & b, int(a & b != 0))),
    "s_or_b64": ("sop2", 64, 64, 64, lambda a, b, c: (a | b, int(a | b != 0))),
    "s_xor_b64": ("sop2", 64, 64, 64, lambda a, b, c: (a ^ b, int(a ^ b != 0))),
    "s_andn2_b64": ("sop2", 64, 64, 64, lambda a, b, c: (a & ~b, int(a & ~b & M64 != 0))),
    "s_bfe_u32": ("sop2", 32, 32, 32, lambda a, b, c: _bfe(a, b, 32, False)),
    "s_bfe_i32": ("sop2", 32, 32, 32, lambda a, b, c: _bfe(a, b, 32, True)),
    "s_bfe_u64": ("sop2", 64, 32, 64, lambda a, b, c: _bfe(a, b, 64, False)),
    "s_bfe_i64": ("sop2", 64, 32, 64, lambda a, b, c: _bfe(a, b, 64, True)),
    "s_brev_b32": ("sop1", 32, 0, 32, lambda a, b, c: (brev(a, 32), None)),
    "s_brev_b64": ("sop1", 64, 0, 64, lambda a, b, c: (brev(a, 64), None)),
    "s_flbit_i32_b32": ("sop1", 32, 0, 32, lambda a, b, c: (clz(a, 32), None)),
    "s_flbit_i32_b64": ("sop1", 64, 0, 32, lambda a, b, c: (clz(a, 64), None)),
    "s_ff1_i32_b32": ("sop1", 32, 0, 32, lambda a, b, c: (ctz(a), None)),
    "s_ff1_i32_b64": ("sop1", 64, 0, 32, lambda a, b, c: (ctz(a), None)),
    "s_flbit_i32": ("sop1", 32, 0, 32, lambda a, b, c: (sat_flbit(a, 32), None)),
    "s_flbit_i32_i64": ("sop1", 64, 0, 32, lambda a, b, c: (sat_flbit(a, 64), None)),
    "s_bcnt1_i32_b32": ("sop1", 32, 0, 32, lambda a, b, c: (bin(a).count("1"), int(a != 0))),
    "s_bcnt1_i32_b64": ("sop1", 64, 0, 32, lambda a, b, c: (bin(a).count("1"), int(a != 0))),
    "s_not_b32": ("sop1", 32, 0, 32, lambda a, b, c: (~a, int(~a & M32 != 0))),
    "s_not_b64": ("sop1", 64, 0, 64, lambda a, b, c: (~a, int(~a & M64 != 0))),
    "s_abs_i32": ("sop1", 32, 0, 32, lambda a, b, c: (abs(s32(a)), int(abs(s32(a)) & M32 != 0))),
    "s_sext_i32_i16": ("sop1", 32, 0, 32, lambda a, b, c: (((a & 0xFFFF) ^ 0x8000) - 0x8000, None)),
    "s_mov_b64": ("sop1", 64, 0, 64, lambda a, b, c: (a, None)),
}


def _bfe(a, b, bits, signed):
    """S_BFE_*: D = (S0 >> S1[4:0] (S1[5:0] for 64-bit)) & ((1 << S1[22:16]) - 1), sign-extended
    from the field's top bit for _I32/_I64, where S0 >> is arithmetic (S0.i); SCC = D != 0."""
    off = b & (bits - 1)
    w = (b >> 16) & 0x7F
    x = (s64(a) if bits == 64 else s32(a)) if signed else a
    r = (x >> off) & ((1 << w) - 1) if w < bits else x >> off
    if signed and 0 < w < bits and r >> (w - 1) & 1:
        r -= 1 << w
    return r, int(r & ((1 << bits) - 1) != 0)


for _t in ("i32", "u32"):
    for _c, _f in (
        ("eq", lambda x, y: x == y),
        ("lg", lambda x, y: x != y),
        ("gt", lambda x, y: x > y),
        ("ge", lambda x, y: x >= y),
        ("lt", lambda x, y: x < y),
        ("le", lambda x, y: x <= y),
    ):
        OPS["s_cmp_%s_%s" % (_c, _t)] = (
            "sopc",
            32,
            32,
            0,
            lambda a, b, c, f=_f, t=_t: (None, int(f(s32(a), s32(b)) if t == "i32" else f(a, b))),
        )
OPS["s_cmp_eq_u64"] = ("sopc", 64, 64, 0, lambda a, b, c: (None, int(a == b)))
OPS["s_cmp_lg_u64"] = ("sopc", 64, 64, 0, lambda a, b, c: (None, int(a != b)))
OPS["s_bitcmp1_b32"] = ("sopc", 32, 32, 0, lambda a, b, c: (None, (a >> (b & 31)) & 1))
OPS["s_bitcmp0_b64"] = ("sopc", 64, 32, 0, lambda a, b, c: (None, 1 - ((a >> (b & 63)) & 1)))


def _reg(bits, r):
    return "s[%d:%d]" % (r, r + 1) if bits == 64 else "s%d" % r


def program(op):
    form, ab, bb, db, _ = OPS[op]
    a, b, d = _reg(ab, 8), _reg(bb, 10), _reg(db or 32, 16)
    body = {"sop2": f"{op} {d}, {a}, {b}", "sop1": f"{op} {d}, {a}", "sopc": f"{op} {a}, {b}"}[form]
    # s[0:1] cases, s[2:3] out, s4 workgroup id; a case is 32 bytes: A, B (8 each), SCC in, pad,
    # the destination's initial 64 bits
    return f"""
  s_lshl_b32 s5, s4, 5
  s_load_dwordx8 s[8:15], s[0:1], s5
  s_waitcnt lgkmcnt(0)
  s_mov_b64 s[16:17], s[14:15]
  s_cmp_lg_u32 s12, 0
  {body}
  s_cselect_b32 s18, 1, 0
  v_mov_b32 v1, s16
  v_mov_b32 v2, s17
  v_mov_b32 v3, s18
  s_lshl_b32 s19, s4, 4
  v_mov_b32 v4, s19
  global_store_dwordx3 v4, v[1:3], s[2:3]
  s_endpgm"""


E32 = [
    0,
    1,
    2,
    3,
    31,
    32,
    33,
    63,
    64,
    0x10001F,
    0x200008,
    0x7FFFFFFF,
    0x80000000,
    0x80000001,
    0xFFFFFFFE,
    0xFFFFFFFF,
    0xFFFF,
    0x8000,
    0x003F0000,
]
E64 = E32 + [
    1 << 32,
    (1 << 32) + 1,
    0x1FFFFFFFF,
    0xFFFFFFFF00000000,
    1 << 63,
    (1 << 63) - 1,
    (1 << 63) + 1,
    M64,
    M64 - 1,
]


def operands(op, seed=0):
    """(a, b, scc) cases: edge pairs, then seeded random words of mixed magnitudes."""
    _, ab, bb, _, _ = OPS[op]
    ea, eb = (E64 if ab == 64 else E32), (E64 if bb == 64 else E32)
    cases = [(x, y, k & 1) for k, (x, y) in enumerate((x, y) for x in ea for y in eb)]
    rng = np.random.default_rng(seed + sum(map(ord, op)))

    def word(bits):
        v = int(rng.integers(0, 1 << 62)) << 2 | int(rng.integers(0, 4))
        v &= (1 << bits) - 1
        return v >> int(rng.integers(0, bits)) if rng.random() < 0.5 else v

    cases += [(word(ab), word(bb or 32), int(rng.integers(0, 2))) for _ in range(128)]
    return cases


def run(op, cases):
    r = Rig(program(op))
    buf = np.zeros((len(cases), 8), np.uint32)
    init = 0xA5A5A5A55A5A5A5A
    for i, (a, b, c) in enumerate(cases):
        buf[i] = [a & M32, a >> 32, b & M32, b >> 32, c, 0, init & M32, init >> 32]
    pc, po = r.buf(buf, "cases"), r.buf(np.zeros((len(cases), 4), np.uint32), "out")
    res = r.run(r.config(user_sgprs=ptr(pc) + ptr(po), groups=(len(cases), 1, 1)))
    assert res.landed, res.refusal
    return r.read(po, np.uint32, 4 * len(cases)).reshape(-1, 4), init


@pytest.mark.parametrize("op", sorted(OPS))
def test_salu_opcode(op):
    form, ab, bb, db, ref = OPS[op]
    cases = operands(op)
    got, init = run(op, cases)
    bad = []
    for (a, b, c), g in zip(cases, got):
        d, scc = ref(a, b, c)
        want_d = init if d is None else (d & M64 if db == 64 else (init & ~M32 & M64) | (d & M32))
        want_scc = c if scc is None else scc
        have_d = int(g[0]) | int(g[1]) << 32
        if have_d != want_d or int(g[2]) != want_scc:
            bad.append((hex(a), hex(b), c, hex(have_d), hex(want_d), int(g[2]), want_scc))
    assert not bad, (len(bad), bad[:4])
