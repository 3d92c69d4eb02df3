"""Register and constant naming: the one place that knows how LLVM 19 prints an operand.

Source-operand codes are GFX10's 9-bit ``SRC`` field (0..511) and 8-bit ``SSRC`` field.
Constant printing follows AMDGPUInstPrinter (printImmediate16/32/64): a literal whose value
is also an inline constant prints as that constant (a f32 literal 0x3f800000 prints ``1.0``).
"""

from __future__ import annotations

import struct
from functools import cache
from operator import itemgetter as _itemgetter

__all__ = [
    "Operand",
    "sreg_name",
    "vreg_name",
    "src_name",
    "fmt_literal",
    "inline_text",
    "LITERAL_FORMATS",
    "INV2PI_TEXT",
]


class Operand(tuple):
    """One printed operand (immutable; a tuple underneath, like a named tuple, because decoding
    builds many)::

        role: str    "vdst", "sdst", "src0", "src1", "src2", "vsrc1", "simm16", "offset", ...
        kind: str    "sgpr","vgpr","ttmp","special","inline_int","inline_float","literal","imm",
                     "label","hwreg","sendmsg","waitcnt","modifier",...
        index: int   first register, or raw value
        count: int   dwords in a register range (1 for non-registers)
        text: str    as LLVM prints it
    """

    __slots__ = ()

    def __new__(cls, role, kind, index, count, text):
        return tuple.__new__(cls, (role, kind, index, count, text))

    role = property(_itemgetter(0))
    kind = property(_itemgetter(1))
    index = property(_itemgetter(2))
    count = property(_itemgetter(3))
    text = property(_itemgetter(4))

    def __getnewargs__(self):
        return tuple(self)

    def __repr__(self) -> str:
        return "Operand(role=%r, kind=%r, index=%r, count=%r, text=%r)" % tuple(self)

    def __eq__(self, other):
        return other.__class__ is Operand and tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __str__(self) -> str:
        return self[4]


INV2PI_TEXT = {16: "0.15915494", 32: "0.15915494", 64: "0.15915494309189532"}

# specials by 9-bit code (32-bit view); 64-bit views differ for vcc/exec
_SPECIAL32 = {
    106: "vcc_lo",
    107: "vcc_hi",
    124: "m0",
    125: "null",
    126: "exec_lo",
    127: "exec_hi",
    235: "src_shared_base",
    236: "src_shared_limit",
    237: "src_private_base",
    238: "src_private_limit",
    239: "src_pops_exiting_wave_id",
    251: "src_vccz",
    252: "src_execz",
    253: "src_scc",
    254: "src_lds_direct",
}
_SPECIAL64 = dict(_SPECIAL32)
_SPECIAL64.update({106: "vcc", 126: "exec"})

_INLINE_F = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0}
_F16_BITS = {
    0x3800: "0.5",
    0xB800: "-0.5",
    0x3C00: "1.0",
    0xBC00: "-1.0",
    0x4000: "2.0",
    0xC000: "-2.0",
    0x4400: "4.0",
    0xC400: "-4.0",
    0x3118: "0.15915494",
}
_BF16_BITS = {
    0x3F00: "0.5",
    0xBF00: "-0.5",
    0x3F80: "1.0",
    0xBF80: "-1.0",
    0x4000: "2.0",
    0xC000: "-2.0",
    0x4080: "4.0",
    0xC080: "-4.0",
    0x3E22: "0.15915494",
}
_F32_BITS = {
    0x3F000000: "0.5",
    0xBF000000: "-0.5",
    0x3F800000: "1.0",
    0xBF800000: "-1.0",
    0x40000000: "2.0",
    0xC0000000: "-2.0",
    0x40800000: "4.0",
    0xC0800000: "-4.0",
    0x3E22F983: "0.15915494",
}
_F64_BITS = {
    0x3FE0000000000000: "0.5",
    0xBFE0000000000000: "-0.5",
    0x3FF0000000000000: "1.0",
    0xBFF0000000000000: "-1.0",
    0x4000000000000000: "2.0",
    0xC000000000000000: "-2.0",
    0x4010000000000000: "4.0",
    0xC010000000000000: "-4.0",
    0x3FC45F306DC9C882: "0.15915494309189532",
}


def _reg_range(prefix: str, first: int, count: int) -> str:
    if count == 1:
        return f"{prefix}{first}"
    return f"{prefix}[{first}:{first + count - 1}]"


def vreg_name(index: int, count: int = 1) -> str:
    return _reg_range("v", index, count)


@cache
def sreg_name(code: int, count: int = 1) -> str:
    """Name of scalar register code (0..127, plus 9-bit specials), ``count`` dwords wide."""
    if code <= 105:
        if count > 1:
            # LLVM aligns a misaligned SGPR tuple down (and warns in a comment)
            align = 2 if count == 2 else 4
            code -= code % align
        return _reg_range("s", code, count)
    if 108 <= code <= 123:
        t = code - 108
        if count > 1:
            align = 2 if count == 2 else 4
            t -= t % align
        return _reg_range("ttmp", t, count)
    if count == 1:
        return _SPECIAL32.get(code, f"<bad {code}>")
    if count == 2:
        return _SPECIAL64.get(code, f"<bad {code}>")
    return _SPECIAL64.get(code, f"<bad {code}>")


def sreg_kind(code: int) -> str:
    if code <= 105:
        return "sgpr"
    if 108 <= code <= 123:
        return "ttmp"
    return "special"


def inline_text(code: int, bits: int) -> str:
    """An inline constant (codes 128..248) printed for an operand of ``bits`` width (16/32/64)."""
    if 128 <= code <= 192:
        return str(code - 128)
    if 193 <= code <= 208:
        return str(192 - code)
    if code == 248:
        return INV2PI_TEXT[bits]
    v = _INLINE_F[code]
    return repr(v)


def _int_inline(v: int):
    if -16 <= v <= 64:
        return str(v)
    return None


def _fmt_b32(lit: int) -> str:
    s = lit - (1 << 32) if lit & 0x80000000 else lit
    t = _int_inline(s)
    if t is not None:
        return t
    t = _F32_BITS.get(lit)
    return t if t is not None else f"{lit:#x}"


def _fmt_f16(lit: int) -> str:
    v = lit & 0xFFFF
    s = v - 0x10000 if v & 0x8000 else v
    t = _int_inline(s)
    if t is not None:
        return t
    t = _F16_BITS.get(v)
    return t if t is not None else f"{v:#x}"


def _fmt_i16(lit: int) -> str:
    # printImmediateInt16: the low 16 bits as a signed inline integer, else hex
    v = lit & 0xFFFF
    s = v - 0x10000 if v & 0x8000 else v
    t = _int_inline(s)
    return t if t is not None else f"{v:#x}"


def _fmt_i16b(lit: int) -> str:
    # 16-bit integer operand: the whole literal as an inline integer or f32 constant, else hex
    # of the low half
    s = lit - (1 << 32) if lit & 0x80000000 else lit
    t = _int_inline(s)
    if t is None:
        t = _F32_BITS.get(lit)
    return t if t is not None else f"{lit & 0xFFFF:#x}"


def _fmt_f16b(lit: int) -> str:
    # 16-bit float operand: the whole literal as an inline integer, else f16 constant / hex of
    # the low half
    s = lit - (1 << 32) if lit & 0x80000000 else lit
    t = _int_inline(s)
    if t is not None:
        return t
    t = _F16_BITS.get(lit & 0xFFFF)
    return t if t is not None else f"{lit & 0xFFFF:#x}"


def _fmt_v2i16(lit: int) -> str:
    # printImmediateV216 for packed int16: 32-bit inline int, else f32 constant, else hex
    return _fmt_b32(lit)


def _fmt_v2f16(lit: int) -> str:
    # printImmediateV216 for packed f16: 32-bit inline int, else (fits 16 bits) f16 constant
    s = lit - (1 << 32) if lit & 0x80000000 else lit
    t = _int_inline(s)
    if t is not None:
        return t
    if lit <= 0xFFFF:
        t = _F16_BITS.get(lit)
        if t is not None:
            return t
    return f"{lit:#x}"


def _fmt_v2bf16(lit: int) -> str:
    # packed bf16 (GFX11 v_dot2_*_bf16): 32-bit inline int, else (fits 16 bits) bf16 constant
    s = lit - (1 << 32) if lit & 0x80000000 else lit
    t = _int_inline(s)
    if t is not None:
        return t
    if lit <= 0xFFFF:
        t = _BF16_BITS.get(lit)
        if t is not None:
            return t
    return f"{lit:#x}"


def _fmt_bf16(lit: int) -> str:
    # bf16 operand: the low half as an inline integer or bf16 constant, else hex of the whole
    # literal (as LLVM 19 prints it)
    v = lit & 0xFFFF
    s = v - 0x10000 if v & 0x8000 else v
    t = _int_inline(s)
    if t is None:
        t = _BF16_BITS.get(v)
    return t if t is not None else f"{lit:#x}"


def _fmt_i64(lit: int) -> str:
    # 64-bit integer operand, literal sign-extended
    s = lit - (1 << 32) if lit & 0x80000000 else lit
    t = _int_inline(s)
    return t if t is not None else f"{s & 0xFFFFFFFFFFFFFFFF:#x}"


def _fmt_f64(lit: int) -> str:
    if lit == 0:
        return "0"
    v = lit << 32
    t = _F64_BITS.get(v)
    if t is not None:
        return t
    return f"{lit:#x}"


def _fmt_b64(lit: int) -> str:
    t = _int_inline(lit)
    if t is not None:
        return t
    return f"{lit:#x}"


def _fmt_hex(lit: int) -> str:
    return f"{lit:#x}"


LITERAL_FORMATS = {
    "b32": _fmt_b32,
    "f16": _fmt_f16,
    "i16": _fmt_i16,
    "f64": _fmt_f64,
    "b64": _fmt_b64,
    "hex": _fmt_hex,
    "v2i16": _fmt_v2i16,
    "v2f16": _fmt_v2f16,
    "i64": _fmt_i64,
    "i16b": _fmt_i16b,
    "f16b": _fmt_f16b,
    "v2bf16": _fmt_v2bf16,
    "bf16": _fmt_bf16,
}


def fmt_literal(lit: int, fmt: str) -> str:
    return LITERAL_FORMATS[fmt](lit)


def src_name(code: int, count: int = 1, inline_bits: int = 32) -> str:
    """9-bit SRC code → text (not for literal 255; DPP/SDWA 249/250 are handled by callers)."""
    if code >= 256:
        return vreg_name(code - 256, count)
    if code < 128:
        return sreg_name(code, count)
    if code <= 248 and not (209 <= code <= 239):
        return inline_text(code, inline_bits)
    return sreg_name(code, 1 if count == 1 else 2)


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


# ------------------------------------------------------- source operands (decoder, dpp_sdwa)
def const_text(code: int, t: str, lit):
    """Text of a 9-bit/8-bit source code that is not a register, for constant type ``t``.

    A type ending in ``!`` marks an operand LLVM prints with ``/*Invalid immediate*/``."""
    if t[-1] == "!":
        text, kind = const_text(code, t[:-1], lit)
        return (text + "/*Invalid immediate*/" if kind != "special" else text), kind
    if code == 255:
        return fmt_literal(lit, {"f32": "b32", "i32": "b32"}.get(t, t)), "literal"
    if 128 <= code <= 208:
        return inline_text(code, 32), "inline_int"
    if 240 <= code <= 248:
        if t in ("f64", "b64"):
            return inline_text(code, 64), "inline_float"
        if t == "i16":
            return _I16_FLOAT[code], "inline_float"
        return inline_text(code, 32), "inline_float"
    return sreg_name(code, 1), "special"


_I16_FLOAT = {
    240: "0x3800",
    241: "0xb800",
    242: "0x3c00",
    243: "0xbc00",
    244: "0x4000",
    245: "0xc000",
    246: "0x4400",
    247: "0xc400",
    248: "0x3118",
}


def src_operand(role, code, n, t, lit):
    if code >= 256:
        return Operand(role, "vgpr", code - 256, n, vreg_name(code - 256, n))
    if code < 128 and (code <= 105 or 108 <= code <= 123 or code in (106, 126)):
        return Operand(role, sreg_kind(code), code, n, sreg_name(code, n))
    if code < 128:
        return Operand(role, "special", code, n, sreg_name(code, n))
    text, kind = const_text(code, t, lit)
    if kind == "special":
        return Operand(role, "special", code, n, sreg_name(code, 2 if n > 1 else 1))
    return Operand(role, kind, lit if code == 255 else code, 1, text)
