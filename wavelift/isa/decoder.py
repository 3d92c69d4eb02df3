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
    tab["_cm"] = raw.get("codemaps", [])
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


def _depctr(v, names=None):
    fields = _DEPCTR if names is None else [d for d in _DEPCTR if d[0] in names]
    mask = 0
    for _, s, w, _ in fields:
        mask |= ((1 << w) - 1) << s
    if v & ~mask & 0xFFFF:
        return f"{v:#x}"
    vals = [(n, (v >> s) & ((1 << w) - 1), d) for n, s, w, d in fields]
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
    extra = load_table(target, wave64)["_simm16"]
    if fmt == "depctr":
        return _depctr(v, extra.get("depctr"))     # the fields this target has (probed)
    if fmt == "sendmsg":
        # LLVM decodes only the low 10 bits; with more bits set only a named message (whose
        # fields all decode validly) still prints symbolically, anything else as a number
        t = extra["sendmsg"].get(str(v & 0x3FF))
        if v > 0x3FF and t and not (t.startswith("sendmsg(") and not t[8].isdigit()):
            t = None
        return t or str(v)
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


class BadEncoding(Exception):
    """Fields LLVM rejects (turned into DecodeError by decode_one)."""


def _mods_wrap(text, neg, abs_, is_imm):
    if neg and not abs_ and is_imm:
        return f"neg({text})"
    if abs_:
        text = f"|{text}|"
    if neg:
        text = "-" + text
    return text


_LAY_POS = {enc: {nm: (lo, (1 << w) - 1) for nm, lo, w in lay} for enc, lay in LAYOUTS.items()}
_IMM_KINDS = ("literal", "inline_int", "inline_float")


def _code_kind(x):
    if x >= 256:
        return "vgpr"
    if x <= 105:
        return "sgpr"
    if 108 <= x <= 123:
        return "ttmp"
    if 128 <= x <= 208:
        return "inline_int"
    if 240 <= x <= 248:
        return "inline_float"
    if x == 255:
        return "literal"
    return "special"


def _prep(e, lay, cms):
    """Attach bit positions and code maps to a table entry's slots (once)."""
    pos = _LAY_POS[lay]
    lits = []
    for p in e["parts"]:
        if isinstance(p, str):
            continue
        f = p["f"]
        if "lo" in p:
            p["_lo"], p["_m"] = p["lo"], p["m"]
        elif f in pos:
            p["_lo"], p["_m"] = pos[f]
        if "cm" in p:
            p["_cm"] = cms[p["cm"]]
        if "lc" in p:
            lits.append((p["_lo"], p["_m"], p["lc"]))
    e["_lits"] = tuple(lits)
    e["_rej"] = e.get("rej", 0) | e.get("unk", 0)
    e["_cache"] = {}        # (bits, literal) -> (text, operands): programs repeat instructions
    e["_prep"] = lay


def render_entry(e, lay, val, lit, target, wave64):
    """Text and operands of table entry ``e`` for instruction bits ``val`` (without literal).

    Raises BadEncoding for codes LLVM rejects."""
    if e.get("_prep") != lay or "_cache" not in e:
        _prep(e, lay, load_table(target, wave64)["_cm"])
    ops = []
    out = [e["name_p"]]
    m = e.get("m")
    sm = m.get("sm") if m else None
    for p in e["parts"]:
        if p.__class__ is str:
            out.append(p)
            continue
        k = p["k"]
        fld = p["f"]
        if k == "cm":
            x = (val >> p["_lo"]) & p["_m"]
            cm = p["_cm"]
            n = p["n"]
            if x < len(cm):
                t = cm[x]
                if t is None:
                    raise BadEncoding(fld)
                if x == p.get("lc"):
                    ty = p["t"]
                    t = fmt_literal(lit, ty.rstrip("!"))
                    if ty[-1] == "!":
                        t += "/*Invalid immediate*/"
                    op = Operand(fld, "literal", lit, 1, t)
                elif p.get("r") == "v":
                    op = Operand(fld, "vgpr", x, n, t)
                elif p.get("h"):
                    # a field LLVM prints in its own way; a whole 9-bit source keeps its kind
                    op = Operand(fld, _code_kind(x) if p["_m"] == 0x1FF else "imm", x, 1, t)
                else:
                    kd = _code_kind(x)
                    op = Operand(fld, kd, x, n if kd in ("sgpr", "ttmp", "special") else 1, t)
            else:
                vg = p.get("vg")
                x -= 256
                if vg is None or x + n > 256:
                    raise BadEncoding(fld)
                op = Operand(fld, "vgpr", x, n, vreg_name(x, n) + vg)
            if sm is not None:
                i = p.get("i", -1)
                if 0 <= i < len(sm):
                    nb, ab, sb = sm[i]
                    ng = (val >> nb) & 1 if nb >= 0 else 0
                    av = (val >> ab) & 1 if ab >= 0 else 0
                    if ng or av:
                        op = Operand(op.role, op.kind, op.index, op.count,
                                     _mods_wrap(op.text, ng, av, op.kind in _IMM_KINDS))
                    if sb >= 0 and (val >> sb) & 1:
                        op = Operand(op.role, op.kind, op.index, op.count, f"sext({op.text})")
        elif k == "simm16":
            x = val & 0xFFFF
            if x == 0 and e.get("omit0"):
                out.pop()
                continue
            fm = p["fmt"]
            op = Operand(fld, _SIMM_KIND[fm], x, 1, simm16_text(fm, x, target, wave64))
        elif k == "lit":
            t = p.get("t", "hex")
            op = Operand("literal", "literal", lit, 1, fmt_literal(lit, t.rstrip("!"))
                         + ("/*Invalid immediate*/" if t[-1] == "!" else ""))
        elif k == "smem_off":
            x = (val >> 32) & 0x1FFFFF
            so = (val >> 57) & 0x7F
            t = p["_cm"][so] if "_cm" in p else sreg_name(so, 1)
            if t is None:
                raise BadEncoding("soffset")
            sx = x - (1 << 21) if x & 0x100000 else x
            if t == "":
                op = Operand("offset", "imm", sx, 1,
                             f"{'-' if sx < 0 else ''}{abs(sx):#x}" if x else "null")
            else:
                ops.append(Operand("soffset", sreg_kind(so), so, 1, t))
                if x:
                    t += f" offset:{'-' if sx < 0 else ''}{abs(sx):#x}"
                op = Operand("offset", "imm", sx, 1, t)
        else:
            raise ValueError(k)
        ops.append(op)
        out.append(op.text)
    if m:
        for name, bits, dflt, const in m.get("g", ()):
            vs = [((val >> b) & 1) if b >= 0 else c for b, c in zip(bits, const)]
            for v in vs:
                if v != dflt:
                    out.append(f" {name}:[{','.join(map(str, vs))}]")
                    break
        for b, t in m.get("fl", ()):
            if (val >> b) & 1:
                out.append(t)
        om = m.get("om", -1)
        if om >= 0:
            v = (val >> om) & 3
            if v:
                out.append((" mul:2", " mul:4", " div:2")[v - 1])
    return "".join(out), tuple(ops)


def render(e, enc, f, lit, target, wave64):
    """Text and operands of table entry ``e`` with fields ``f`` (layout ``enc``)."""
    val = 0
    for nm, lo, w in LAYOUTS[enc]:
        val |= (f.get(nm, 0) & ((1 << w) - 1)) << lo
    return render_entry(e, enc, val, lit, target, wave64)


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
    olo, omask = _LAY_POS[enc]["op"]
    op = (val >> olo) & omask
    e = tab[enc].get(op)
    if e is None:
        raise DecodeError(base + pos, bytes(code[pos:pos + size]))
    if e.get("enc"):
        lay = e["enc"]
    f = _fields(lay, val)
    # SDWA / DPP source markers in 32-bit VOP encodings
    if enc in ("VOP1", "VOP2", "VOPC") and f["src0"] in (249, 250, 233, 234):
        ins = _decode_ext(code, pos, enc, f, e, target, wave64, base)
        if ins is not None:
            return ins
    if e.get("_prep") != lay or "_cache" not in e:
        _prep(e, lay, tab["_cm"])
    if val & e["_rej"]:
        raise DecodeError(base + pos, bytes(code[pos:pos + size]))
    lit = None
    need = e.get("lit", 0)
    for lo, mk, lc in e["_lits"]:
        if (val >> lo) & mk == lc:
            need = 1
    if need:
        if pos + size + 4 > n:
            raise DecodeError(base + pos, bytes(code[pos:n]), "truncated instruction (missing literal)")
        lit = _u32(code, pos + size)
        size += 4
    key = (val, lit)
    cache = e["_cache"]
    r = cache.get(key)
    if r is None:
        try:
            r = render_entry(e, lay, val, lit, target, wave64)
        except BadEncoding:
            raise DecodeError(base + pos, bytes(code[pos:pos + size])) from None
        if len(cache) < 4096:
            cache[key] = r
    text, ops = r
    words = tuple(_u32(code, p) for p in range(pos, pos + size, 4))
    return Instruction(base + pos, size, words, lay, e.get("variant", ""), op, e["name"], f, lit,
                       ops, text)


def _decode_ext(code, pos, enc, f, e, target, wave64, base):
    from .dpp_sdwa import decode_ext     # DPP16/DPP8/SDWA: wavelift/isa/dpp_sdwa.py
    return decode_ext(code, pos, enc, f, target, wave64, base)


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
