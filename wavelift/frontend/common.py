"""Operands: the one place that turns encoded source/destination fields into IR reads and writes.

Source codes are GFX10's 9-bit SRC (8-bit SSRC for scalar encodings): 0..105 SGPR, 106/107 VCC,
108..123 TTMP, 124 M0, 125 NULL, 126/127 EXEC, 128..208 inline integers, 235..238 aperture
bases/limits, 240..248 inline floats, 251 VCCZ, 252 EXECZ, 253 SCC, 255 literal, 256+ VGPR.
"""

from __future__ import annotations

from typing import NoReturn

from ..errors import Refused
from ..ir.builder import Builder
from ..ir.ops import BITS
from ..ir.program import EXEC_HI, EXEC_LO, SCC, VCC_HI, VCC_LO, Value, is_float

# Apertures (bits 63:32 of a flat address) the module reports and recognises.
SHARED_APERTURE_HI = 0x00010000
PRIVATE_APERTURE_HI = 0x00020000

_F16 = {
    240: 0x3800,
    241: 0xB800,
    242: 0x3C00,
    243: 0xBC00,
    244: 0x4000,
    245: 0xC000,
    246: 0x4400,
    247: 0xC400,
    248: 0x3118,
}
_F32 = {
    240: 0x3F000000,
    241: 0xBF000000,
    242: 0x3F800000,
    243: 0xBF800000,
    244: 0x40000000,
    245: 0xC0000000,
    246: 0x40800000,
    247: 0xC0800000,
    248: 0x3E22F983,
}
_F64 = {
    240: 0x3FE0000000000000,
    241: 0xBFE0000000000000,
    242: 0x3FF0000000000000,
    243: 0xBFF0000000000000,
    244: 0x4000000000000000,
    245: 0xC000000000000000,
    246: 0x4010000000000000,
    247: 0xC010000000000000,
    248: 0x3FC45F306DC9C882,
}


class Unsupported(Exception):
    """Raised by a frontend for an instruction (or operand form) it does not translate."""


def unsupported(why: str = "") -> NoReturn:
    raise Unsupported(why)


def C(b: Builder, t: str, v) -> Value:
    """The constant ``v`` of IR type ``t`` (every frontend's shorthand)."""
    return b.const(t, v)


def storage(t: str) -> str:
    """The unsigned integer type holding the bits of ``t``."""
    return {16: "u16", 32: "u32", 64: "u64", 8: "u8", 1: "b1"}[BITS[t]]


def inline_bits(code: int, t: str) -> int | None:
    """Bit pattern of inline constant ``code`` for an operand of type ``t`` (None: not inline)."""
    bits = BITS[t]
    mask = (1 << bits) - 1
    if 128 <= code <= 192:
        return (code - 128) & mask
    if 193 <= code <= 208:
        return (192 - code) & mask
    if 240 <= code <= 248:
        table = {16: _F16, 32: _F32, 64: _F64}[bits]
        if bits == 16 and not is_float(t):
            return _F16[code]  # 16-bit integer operands see the f16 pattern
        return table[code]
    return None


def sext48(b: Builder, a: Value) -> Value:
    """u64 ``a`` from a 48-bit address field (a V# or T# base) sign-extended from bit 47: the
    canonical address the field means (docs/decisions/0014-addresses.md)."""
    s = b.const("i64", 16)
    return b.bitcast("u64", b.bin("sar", "i64", b.bin("shl", "i64", b.bitcast("i64", a), s), s))


def read_sreg(b: Builder, code: int, t: str, literal: int | None = None) -> Value:
    """Read scalar-encoded source ``code`` (also the 9-bit SRC when below 256) as type ``t``."""
    bits = BITS[t]
    st = storage(t)
    c = inline_bits(code, t)
    if c is not None:
        return b.bitcast(t, b.const(st, c))
    if code == 255:
        if literal is None:
            unsupported("literal operand without a literal")
        lit = literal & 0xFFFFFFFF
        if bits == 64:
            v = (lit << 32) if t == "f64" else (lit | (0xFFFFFFFF00000000 if lit >> 31 and t == "i64" else 0))
        elif bits == 16:
            v = lit & 0xFFFF
        else:
            v = lit
        return b.bitcast(t, b.const(st, v))
    if code in (251, 252):
        lo, hi = (VCC_LO, VCC_HI) if code == 251 else (EXEC_LO, EXEC_HI)
        m = b.sget(lo)
        if b.wave_size == 64:
            m = b.bin("or", "u32", m, b.sget(hi))
        z = b.cmp("eq", "u32", m, b.const("u32", 0))
        return b.bitcast(t, b.cvt(st, z)) if bits != 1 else z
    if code == 253:
        return b.bitcast(t, b.cvt(st, b.sget(SCC)))
    if code == 125:
        return b.bitcast(t, b.const(st, 0))
    if code in (235, 236, 237, 238):
        hi = {
            235: SHARED_APERTURE_HI,
            236: SHARED_APERTURE_HI,
            237: PRIVATE_APERTURE_HI,
            238: PRIVATE_APERTURE_HI,
        }[code]
        lim = 0xFFFFFFFF if code in (236, 238) else 0
        v = (hi << 32) | lim if bits == 64 else hi
        return b.bitcast(t, b.const(st, v))
    if code > 127:
        unsupported(f"source operand code {code}")
    if bits == 64:
        return b.bitcast(t, b.pack64(b.sget(code), b.sget(code + 1)))
    sv = b.sget(code)
    if bits == 16:
        return b.bitcast(t, b.cvt("u16", sv))
    if bits == 1:
        return b.cmp("ne", "u32", sv, b.const("u32", 0))
    return b.bitcast(t, sv)


def read_vreg(b: Builder, reg: int, t: str, hi16: bool = False) -> Value:
    bits = BITS[t]
    if bits == 64:
        return b.bitcast(t, b.pack64(b.vget(reg), b.vget(reg + 1)))
    v = b.vget(reg)
    if bits == 16:
        if hi16:
            v = b.bin("shr", "u32", v, b.const("u32", 16))
        return b.bitcast(t, b.cvt("u16", v))
    return b.bitcast(t, v)


def read_src(b: Builder, ins, code: int, t: str, hi16: bool = False) -> Value:
    """A 9-bit SRC operand (VALU) as type ``t``; ``hi16`` selects bits 31:16 of a 16-bit operand."""
    if code >= 256:
        return read_vreg(b, code - 256, t, hi16)
    v = read_sreg(b, code, t, ins.literal)
    if hi16 and BITS[t] == 16 and code < 128:
        raw = b.sget(code)
        v = b.bitcast(t, b.cvt("u16", b.bin("shr", "u32", raw, b.const("u32", 16))))
    return v


def to_words(b: Builder, v: Value) -> list[Value]:
    """The u32 words of a value (16-bit values zero-extended)."""
    bits = BITS[v.type]
    raw = b.bitcast(storage(v.type), v)
    if bits == 64:
        return [b.lo32(raw), b.hi32(raw)]
    if bits == 32:
        return [raw]
    return [b.cvt("u32", raw)]


def write_sdst(b: Builder, reg: int, v: Value) -> None:
    if reg == 125 or reg >= 128 and reg != SCC:
        return  # null (or a constant): discarded
    for k, w in enumerate(to_words(b, v)):
        b.sset(reg + k, w)


def write_vdst(b: Builder, reg: int, v: Value, mask: Value | None = None, hi16: bool = False):
    """Write a VALU result; 16-bit results keep the other half (GFX10 preserves high bits)."""
    if BITS[v.type] == 16:
        old = b.vget(reg)
        x = b.cvt("u32", b.bitcast("u16", v))
        if hi16:
            x = b.bin(
                "or",
                "u32",
                b.bin("and", "u32", old, b.const("u32", 0xFFFF)),
                b.bin("shl", "u32", x, b.const("u32", 16)),
            )
        else:
            x = b.bin("or", "u32", b.bin("and", "u32", old, b.const("u32", 0xFFFF0000)), x)
        b.vset(reg, x, mask)
        return
    for k, w in enumerate(to_words(b, v)):
        b.vset(reg + k, w, mask)


def read_lanemask(b: Builder, code: int, literal=None) -> Value:
    """A lane mask (SGPR, SGPR pair, VCC, EXEC or constant) as u64."""
    if b.wave_size == 64:
        return read_sreg(b, code, "u64", literal)
    return b.cvt("u64", read_sreg(b, code, "u32", literal))


def write_lanemask(b: Builder, reg: int, m: Value) -> None:
    if reg == 125:
        return
    b.sset(reg, b.lo32(m))
    if b.wave_size == 64:
        b.sset(reg + 1, b.hi32(m))


def exec_mask64(b: Builder) -> Value:
    return read_lanemask(b, EXEC_LO)


def ballot(b: Builder, cond: Value) -> Value:
    """Lane mask of ``cond`` restricted to active lanes (inactive lanes give 0)."""
    return b.ballot(b.bin("and", "b1", cond, b.exec()))


def set_scc(b: Builder, cond: Value) -> None:
    b.sset(SCC, b.cvt("u32", cond))


def refuse(code: str, msg: str):
    raise Refused(code, msg)
