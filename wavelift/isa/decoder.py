"""Decode GFX10 machine code into `Instruction`s and print them as LLVM 19 does.

Opcode tables (wavelift/isa/tables/<target>_w<32|64>.json) are generated from LLVM by
tools/gen_isa_tables.py.  Each entry is ``{"name", "parts", ...}`` where ``parts`` is the
printed line as a list of fixed strings and operand specs ``{"f": field, "k": kind, "n": dwords,
"t": constant type}``; this module only knows how to render a kind.
"""
from __future__ import annotations

import json
import os
import struct
from functools import lru_cache

from .encodings import LAYOUTS, classify
from .instruction import DecodeContext, DecodeError, Instruction
from .operands import (Operand, fmt_literal, inline_text, sreg_kind, sreg_name, vreg_name)

_TABLE_DIR = os.path.join(os.path.dirname(__file__), "tables")
MEMORY_ENCODINGS = ("DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "EXP", "VINTRP")


@lru_cache(maxsize=None)
def load_table(target: str, wave64: bool) -> dict:
    path = os.path.join(_TABLE_DIR, f"{target}_w{64 if wave64 else 32}.json")
    with open(path) as f:
        raw = json.load(f)
    tab = {}
    for enc, ops in raw["encodings"].items():
        tab[enc] = {int(k): v for k, v in ops.items()}
    tab["_simm16"] = raw.get("simm16", {})
    return tab


# ----------------------------------------------------------------------------- constants
_INT16_INLINE = {}


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


_I16_FLOAT = {240: "0x3800", 241: "0xb800", 242: "0x3c00", 243: "0xbc00", 244: "0x4000",
              245: "0xc000", 246: "0x4400", 247: "0xc400", 248: "0x3118"}


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


# ----------------------------------------------------------------------------- simm16 formats
def _waitcnt(v):
    vm = (v & 0xF) | ((v >> 14) & 3) << 4
    exp = (v >> 4) & 7
    lgkm = (v >> 8) & 0x3F
    allmax = vm == 63 and exp == 7 and lgkm == 63
    out = []
    if vm != 63 or allmax:
        out.append(f"vmcnt({vm})")
    if exp != 7 or allmax:
        out.append(f"expcnt({exp})")
    if lgkm != 63 or allmax:
        out.append(f"lgkmcnt({lgkm})")
    return " ".join(out)


# (name, shift, width, default) in LLVM's print order (gfx10.3 s_waitcnt_depctr)
_DEPCTR = (("depctr_hold_cnt", 7, 1, 1), ("depctr_sa_sdst", 0, 1, 1), ("depctr_va_vdst", 12, 4, 15),
           ("depctr_va_sdst", 9, 3, 7), ("depctr_va_ssrc", 8, 1, 1), ("depctr_va_vcc", 1, 1, 1),
           ("depctr_vm_vsrc", 2, 3, 7))
_DEPCTR_MASK = 0xFF9F


def _depctr(v):
    if v & ~_DEPCTR_MASK & 0xFFFF:
        return f"{v:#x}"
    vals = [(n, (v >> s) & ((1 << w) - 1), d) for n, s, w, d in _DEPCTR]
    nondef = any(x != d for _, x, d in vals)
    return " ".join(f"{n}({x})" for n, x, d in vals if x != d or not nondef)


def simm16_text(fmt: str, v: int, target: str, wave64: bool) -> str:
    if fmt == "hex":
        return f"{v:#x}"
    if fmt == "dec" or fmt == "label":
        return str(v)
    if fmt == "inl":
        return str(v) if v <= 64 else f"{v:#x}"
    if fmt == "waitcnt":
        return _waitcnt(v)
    if fmt == "depctr":
        return _depctr(v)
    extra = load_table(target, wave64)["_simm16"]
    if fmt == "sendmsg":
        return extra["sendmsg"].get(str(v), str(v))
    if fmt == "hwreg":
        hid, off, size = v & 0x3F, (v >> 6) & 0x1F, ((v >> 11) & 0x1F) + 1
        name = extra["hwreg"].get(str(hid))
        if name is None:
            return f"hwreg({hid}, {off}, {size})"
        if off == 0 and size == 32:
            return f"hwreg({name})"
        return f"hwreg({name}, {off}, {size})"
    if fmt == "version":
        return extra["version"].get(str(v), f"{v:#x}")
    raise ValueError(fmt)


_SIMM_KIND = {"hex": "imm", "dec": "imm", "inl": "imm", "label": "label", "waitcnt": "waitcnt",
              "depctr": "depctr", "sendmsg": "sendmsg", "hwreg": "hwreg", "version": "imm"}


# ----------------------------------------------------------------------------- fields
def _fields(enc, value):
    return {name: (value >> lo) & ((1 << w) - 1) for name, lo, w in LAYOUTS[enc]}


def _mods_wrap(text, neg, abs_, is_imm):
    if neg and not abs_ and is_imm:
        return f"neg({text})"
    if abs_:
        text = f"|{text}|"
    if neg:
        text = "-" + text
    return text


def render(e, enc, f, lit, target, wave64):
    """Text and operands of table entry ``e`` with fields ``f``."""
    ops = []
    out = [e["name_p"]]
    abs_ = f.get("abs", 0)
    neg = f.get("neg", 0)
    mods = e.get("mods", 0)
    sep = " "
    for p in e["parts"]:
        if isinstance(p, str):
            out.append(p)
            continue
        fld = p["f"]
        k = p["k"]
        n = p.get("n", 1)
        x = f.get(fld, 0)
        if k == "v":
            op = Operand(fld, "vgpr", x, n, vreg_name(x, n))
        elif k == "s":
            if fld == "sbase":
                x *= 2
            if x <= 105 or 108 <= x <= 123 or n == 1 or x in (106, 126):
                op = Operand(fld, sreg_kind(x), x, n, sreg_name(x, n))
            else:
                op = Operand(fld, "special", x, n, sreg_name(x, n))
        elif k == "src":
            op = src_operand(fld, x, n, p.get("t", "b32"), lit)
            i = p.get("i", -1)
            if i >= 0 and (mods >> i) & 1:
                na = (neg >> i) & 1
                ab = (abs_ >> i) & 1
                if na or ab:
                    op = Operand(op.role, op.kind, op.index, op.count,
                                 _mods_wrap(op.text, na, ab, op.kind in ("literal", "inline_int", "inline_float")))
        elif k == "simm16":
            fm = p["fmt"]
            if x == 0 and e.get("omit0"):
                out.pop()
                continue
            op = Operand(fld, _SIMM_KIND[fm], x, 1, simm16_text(fm, x, target, wave64))
        elif k == "lit":
            op = Operand("literal", "literal", lit, 1, fmt_literal(lit, p.get("t", "hex")))
        elif k == "smem_off":
            so = f["soffset"]
            if so == 125:
                sx = x - (1 << 21) if x & 0x100000 else x
                op = Operand("offset", "imm", sx, 1, f"{'-' if sx < 0 else ''}{abs(sx):#x}" if x else "null")
            else:
                t = sreg_name(so, 1)
                ops.append(Operand("soffset", sreg_kind(so), so, 1, t))
                if x:
                    sx = x - (1 << 21) if x & 0x100000 else x
                    t += f" offset:{'-' if sx < 0 else ''}{abs(sx):#x}"
                op = Operand("offset", "imm", x, 1, t)
        elif k == "offset":
            op = Operand(fld, "imm", x, 1, f"{x:#x}")
        else:
            raise ValueError(k)
        ops.append(op)
        out.append(op.text)
    return "".join(out), tuple(ops)


def _has_literal(e, f):
    if e.get("lit"):
        return True
    for p in e["parts"]:
        if not isinstance(p, str) and p["k"] == "src" and f[p["f"]] == 255:
            return True
    return False


# ----------------------------------------------------------------------------- decode
def _u32(code, pos):
    return struct.unpack_from("<I", code, pos)[0]


def decode_one(code, pos=0, target="gfx1030", wave64=False, base=0) -> Instruction:
    code = bytes(code) if not isinstance(code, (bytes, bytearray, memoryview)) else code
    n = len(code)
    if pos + 4 > n:
        raise DecodeError(base + pos, bytes(code[pos:n]), "truncated instruction")
    w0 = _u32(code, pos)
    enc = classify(w0)
    if enc in MEMORY_ENCODINGS or not enc:
        if not enc:
            raise DecodeError(base + pos, bytes(code[pos:pos + 4]))
        try:
            from .memory import decode_memory
        except ImportError:
            raise DecodeError(base + pos, bytes(code[pos:pos + 8]),
                              f"{enc} decoding not available") from None
        words = tuple(_u32(code, p) for p in range(pos, min(n - 3, pos + 20), 4))
        ins = decode_memory(enc, words, pos, DecodeContext(target, wave64))
        if base:
            ins = _rebase(ins, base + pos)
        return ins
    tab = load_table(target, wave64)
    if enc in ("VOP3", "SMEM", "VOP3P"):
        if pos + 8 > n:
            raise DecodeError(base + pos, bytes(code[pos:n]), "truncated instruction")
        val = w0 | (_u32(code, pos + 4) << 32)
        size = 8
    else:
        val = w0
        size = 4
    lay = enc
    op = (val >> dict((nm, lo) for nm, lo, _ in LAYOUTS[enc])["op"]) & \
        ((1 << dict((nm, w) for nm, _, w in LAYOUTS[enc])["op"]) - 1)
    e = tab[enc].get(op)
    if e is None:
        raise DecodeError(base + pos, bytes(code[pos:pos + size]))
    if e.get("enc"):
        lay = e["enc"]
    f = _fields(lay, val)
    # SDWA / DPP source markers in 32-bit VOP encodings
    if enc in ("VOP1", "VOP2", "VOPC") and f["src0"] in (249, 250, 233, 234):
        return _decode_ext(code, pos, enc, f, e, target, wave64, base)
    lit = None
    if _has_literal(e, f):
        if pos + size + 4 > n:
            raise DecodeError(base + pos, bytes(code[pos:n]), "truncated instruction (missing literal)")
        lit = _u32(code, pos + size)
        size += 4
    if e.get("bad_simm_nonzero") and f.get("simm16"):
        raise DecodeError(base + pos, bytes(code[pos:pos + size]))
    for z in e.get("zero", ()):
        if f[z]:
            raise DecodeError(base + pos, bytes(code[pos:pos + size]))
    for p in e["parts"]:
        if isinstance(p, str):
            continue
        k = p["k"]
        x = f.get(p["f"], 0)
        n = p.get("n", 1)
        if k == "src" and (209 <= x <= 234 or (n > 1 and x < 256 and x <= 123 and x & 1 and x not in (107, 127))
                           or (x >= 256 and x - 256 + n > 256)):
            raise DecodeError(base + pos, bytes(code[pos:pos + size]))
        if k == "v" and x + n > 256:
            raise DecodeError(base + pos, bytes(code[pos:pos + size]))
    bad = e.get("bad")
    if bad and _is_bad(bad, f):
        raise DecodeError(base + pos, bytes(code[pos:pos + size]))
    text, ops = render(e, lay, f, lit, target, wave64)
    words = tuple(_u32(code, p) for p in range(pos, pos + size, 4))
    text = text + _suffix(e, f)
    return Instruction(base + pos, size, words, lay, e.get("variant", ""), op, e["name"], f, lit,
                       ops, text)


def _suffix(e, f):
    s = []
    if e.get("glc") and f.get("glc"):
        s.append(" glc")
    if e.get("dlc") and f.get("dlc"):
        s.append(" dlc")
    opsel = e.get("opsel")
    if opsel:
        bits = f.get("opsel", 0)
        if bits:
            s.append(" op_sel:[" + ",".join(str((bits >> i) & 1) for i in range(opsel)) + "]")
    if e.get("clamp") and f.get("clamp"):
        s.append(" clamp")
    if e.get("omod"):
        om = f.get("omod", 0)
        if om:
            s.append((" mul:2", " mul:4", " div:2")[om - 1])
    return "".join(s)


def _is_bad(bad, f):
    for fld, vals in bad.items():
        if f.get(fld) in vals:
            return True
    return False


def _decode_ext(code, pos, enc, f, e, target, wave64, base):
    raise DecodeError(base + pos, bytes(code[pos:pos + 8]), "DPP/SDWA decoding not available")


def _rebase(ins, off):
    return Instruction(off, ins.size, ins.words, ins.encoding, ins.variant, ins.opcode, ins.name,
                       ins.fields, ins.literal, ins.operands, ins.text)


def decode(code, target="gfx1030", wave64=False, base=0) -> list:
    code = bytes(code)
    out = []
    pos = 0
    n = len(code)
    while pos < n:
        ins = decode_one(code, pos, target, wave64, base)
        out.append(ins)
        pos += ins.size
    return out


def disassemble(code, target="gfx1030", wave64=False, base=0) -> list:
    return [i.text for i in decode(code, target, wave64, base)]
