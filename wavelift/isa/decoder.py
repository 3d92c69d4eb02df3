"""Decode RDNA machine code (GFX10, GFX11, GFX12) into `Instruction`s and print them as LLVM 19 does.

Opcode tables (wavelift/isa/tables/<target>_w<32|64>.json) are generated from LLVM by
tools/gen_isa_tables.py.  Each entry is ``{"name", "parts", ...}`` where ``parts`` is the
printed line as a list of fixed strings and operand specs ``{"f": field, "k": kind, "n": dwords,
"t": constant type}``; this module only knows how to render a kind.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from functools import cache, lru_cache
from typing import Any

from .dpp_sdwa import decode_ext, dpp_ctrl_text, load_dpp_table  # DPP16/DPP8/SDWA: dpp_sdwa.py
from .encodings import ISAS, LAYOUTS, generation
from .instruction import (
    NOT_DECODED,
    TABLE_TARGET,
    DecodeContext,
    DecodeError,
    Instruction,
    moved,
    new_instruction,
)
from .operands import Operand, fmt_literal, sreg_kind, sreg_name, vreg_name

_TABLE_DIR = os.path.join(os.path.dirname(__file__), "tables")
MEMORY_ENCODINGS = (
    "DS",
    "FLAT",
    "MUBUF",
    "MTBUF",
    "MIMG",
    "EXP",
    "VINTRP",
    "VFLAT",
    "VBUFFER",
    "VIMAGE",
    "VSAMPLE",
)


@cache
def load_table(target: str, wave64: bool) -> dict:
    path = os.path.join(_TABLE_DIR, f"{TABLE_TARGET.get(target, target)}_w{64 if wave64 else 32}.json")
    with open(path) as f:
        raw = json.load(f)
    tab = {}
    for enc, ops in raw["encodings"].items():
        tab[enc] = {int(k): v for k, v in ops.items()}
    tab["_simm16"] = raw.get("simm16", {})
    tab["_cm"] = raw.get("codemaps", [])
    return tab


# ----------------------------------------------------------------------------- simm16 formats
def _waitcnt(v, gfx11=False):
    if gfx11:  # GFX11/12: expcnt [2:0], lgkmcnt [9:4], vmcnt [15:10]
        vm, exp, lgkm = (v >> 10) & 0x3F, v & 7, (v >> 4) & 0x3F
    else:
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
_DEPCTR = (
    ("depctr_hold_cnt", 7, 1, 1),
    ("depctr_sa_sdst", 0, 1, 1),
    ("depctr_va_vdst", 12, 4, 15),
    ("depctr_va_sdst", 9, 3, 7),
    ("depctr_va_ssrc", 8, 1, 1),
    ("depctr_va_vcc", 1, 1, 1),
    ("depctr_vm_vsrc", 2, 3, 7),
)
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
    if fmt == "waitcnt11":
        return _waitcnt(v, True)
    extra = load_table(target, wave64)["_simm16"]
    if fmt == "delay_alu":
        # instid0 [3:0], instskip [6:4], instid1 [10:7]; the names are LLVM's (probed)
        names, skips = extra["delay_alu"]["id"], extra["delay_alu"]["skip"]
        parts = []
        if v & 0xF:
            parts.append(f"instid0({names[v & 0xF]})")
        if (v >> 4) & 7:
            parts.append(f"instskip({skips[(v >> 4) & 7]})")
        if (v >> 7) & 0xF:
            parts.append(f"instid1({names[(v >> 7) & 0xF]})")
        return " | ".join(parts) or "0"
    if fmt == "depctr":
        return _depctr(v, extra.get("depctr"))  # the fields this target has (probed)
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


_SIMM_KIND = {
    "hex": "imm",
    "dec": "imm",
    "inl": "imm",
    "label": "label",
    "waitcnt": "waitcnt",
    "waitcnt11": "waitcnt",
    "delay_alu": "delay_alu",
    "depctr": "depctr",
    "sendmsg": "sendmsg",
    "hwreg": "hwreg",
    "version": "imm",
}


# ----------------------------------------------------------------------------- fields
def _fields(enc, value, layouts=LAYOUTS):
    return {name: (value >> lo) & ((1 << w) - 1) for name, lo, w in layouts[enc]}


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


_LAY_POS_GEN = {
    gen: {enc: {nm: (lo, (1 << w) - 1) for nm, lo, w in lay} for enc, lay in isa.layouts.items()}
    for gen, isa in ISAS.items()
}
_LAY_POS = _LAY_POS_GEN["gfx10"]
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


def _prep(e, lay, cms, gen="gfx10"):
    """Attach bit positions and code maps to a table entry's slots (once)."""
    pos = _LAY_POS_GEN[gen][lay]
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
    e["_cache"] = {}  # (bits, literal) -> (text, operands): programs repeat instructions
    e["_prep"] = lay


def render_entry(e, lay, val, lit, target, wave64):
    """Text and operands of table entry ``e`` for instruction bits ``val`` (without literal).

    Raises BadEncoding for codes LLVM rejects."""
    if e.get("_prep") != lay or "_cache" not in e:
        _prep(e, lay, load_table(target, wave64)["_cm"], generation(target))
    ops = []
    out = [e["name_p"]]
    m = e.get("m")
    sm = m.get("sm") if m else None
    parts = e["parts"]
    cut = len(parts) - e.get("tail", 0)  # ``tail`` parts follow the modifiers (wait_exp:0)
    for ip, p in enumerate(parts):
        if ip == cut and m:
            _render_mods(m, val, out)
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
                op = _vgpr_operand(p, fld, x - 256, n)
                if op is None:
                    raise BadEncoding(fld)
            if sm is not None:
                i = p.get("i", -1)
                if 0 <= i < len(sm):
                    nb, ab, sb = sm[i]
                    ng = (val >> nb) & 1 if nb >= 0 else 0
                    av = (val >> ab) & 1 if ab >= 0 else 0
                    if ng or av:
                        op = Operand(
                            op.role,
                            op.kind,
                            op.index,
                            op.count,
                            _mods_wrap(op.text, ng, av, op.kind in _IMM_KINDS),
                        )
                    if sb >= 0 and (val >> sb) & 1:
                        op = Operand(op.role, op.kind, op.index, op.count, f"sext({op.text})")
        elif k == "simm16":
            x = val & 0xFFFF
            if x == 0 and e.get("omit0"):
                out.pop()
                continue
            fm = p["fmt"]
            op = Operand(fld, _SIMM_KIND[fm], x, 1, simm16_text(fm, x, target, wave64))
        elif k == "vdsty":
            # VOPD's Y destination: vdsty holds bits [7:1]; bit 0 is the opposite of vdstx's
            r = ((val >> 49) & 0x7F) << 1 | (((val >> 56) & 1) ^ 1)
            op = Operand(fld, "vgpr", r, 1, f"v{r}")
        elif k == "lit":
            t = p.get("t", "hex")
            op = Operand(
                "literal",
                "literal",
                lit,
                1,
                fmt_literal(lit, t.rstrip("!")) + ("/*Invalid immediate*/" if t[-1] == "!" else ""),
            )
        elif k == "smem_off":
            so = (val >> 57) & 0x7F
            t = p["_cm"][so] if "_cm" in p else sreg_name(so, 1)
            if t is None and not p.get("sep"):
                raise BadEncoding("soffset")
            sop, op = _smem_off(val, p.get("_cm"), p.get("ow", 21), p.get("z0", 0), p.get("sep", 0))
            if sop is not None:
                ops.append(sop)
        else:
            raise ValueError(k)
        ops.append(op)
        out.append(op.text)
    if m and cut == len(parts):
        _render_mods(m, val, out)
    return "".join(out), tuple(ops)


def _render_mods(m, val, out):
    """Append the printed modifiers (groups, flags, omod, byte_sel) of entry modifiers ``m``;
    ``ff``: the flags before the groups (VINTERP's ``clamp op_sel:[...]``)."""
    if m:
        ff = m.get("ff")
        if ff:
            for b, t in m.get("fl", ()):
                if (val >> b) & 1:
                    out.append(t)
        for name, bits, dflt, const in m.get("g", ()):
            vs = [((val >> b) & 1) if b >= 0 else c for b, c in zip(bits, const)]
            for v in vs:
                if v != dflt:
                    out.append(f" {name}:[{','.join(map(str, vs))}]")
                    break
        if not ff:
            for b, t in m.get("fl", ()):
                if (val >> b) & 1:
                    out.append(t)
        om = m.get("om", -1)
        if om >= 0:
            v = (val >> om) & 3
            if v:
                out.append((" mul:2", " mul:4", " div:2")[v - 1])
        bs = m.get("bs")
        if bs:
            v = sum(((val >> b) & 1) << k for k, b in enumerate(bs) if b >= 0)
            if v:
                out.append(f" byte_sel:{v}")


# ----------------------------------------------------------------------------- VOP3 with DPP
# GFX11/12 VOP3/VOP3P (VOP3B too) with src0 = 0xFA (DPP16) or 0xE9/0xEA (DPP8, with FI): a third
# dword holds the real src0 (a VGPR, bits 7:0) and the controls.  LLVM 19 prints the e64 form's
# line with that VGPR as src0, the mnemonic of its _dpp form (``name_p`` of the DPP table entry)
# and the controls after every modifier; tools/gen_isa_dpp_tables.py checks that per opcode
# (sentinel words, every bit of the first two dwords and of the control dword flipped, sampled
# src1/src2 codes) and records what LLVM rejects (``rej``/``rej2``) or prints otherwise (``unk``/
# ``unk2``: refused by name).  A literal follows the 12 bytes where the e64 form reads one.
def vop3_dpp_controls(mark: int, w2: int) -> str:
    """The controls' text of a VOP3 DPP16/DPP8 control dword ``w2`` (as VOP1/VOP2/VOPC DPP)."""
    if mark != 0xFA:
        sel = w2 >> 8
        return (
            " dpp8:["
            + ",".join(str((sel >> (3 * i)) & 7) for i in range(8))
            + "]"
            + (" fi:1" if mark == 0xEA else "")
        )
    return (
        f" {dpp_ctrl_text((w2 >> 8) & 0x1FF)} row_mask:{(w2 >> 28) & 15:#x} bank_mask:{(w2 >> 24) & 15:#x}"
        + (" bound_ctrl:1" if (w2 >> 19) & 1 else "")
        + (" fi:1" if (w2 >> 18) & 1 else "")
    )


def vop3_dpp_val(val: int, w2: int) -> int:
    """The 64 bits of the e64 form: src0 (bits 40:32) = the control dword's VGPR."""
    return (val & ~(0x1FF << 32)) | ((256 + (w2 & 0xFF)) << 32)


def _dpp3_view(e64, d, lay, cms, gen):
    """The e64 entry as the DPP form ``d`` prints it: ``sx`` = [[source, bit]] are neg bits that
    LLVM prints as ``sext(..)`` in the DPP form only (16-bit integer ops)."""
    if "sx" not in d:
        return e64
    key = (id(e64), tuple(map(tuple, d["sx"])))
    e = d.get("_e")
    if e is None or e.get("_key") != key:
        m = dict(e64.get("m") or {})
        sm = [list(x) for x in m.get("sm", ())]
        for i, b in d["sx"]:
            while len(sm) <= i:
                sm.append([-1, -1, -1])
            sm[i][2] = b
        m["sm"] = sm
        e = dict(e64, m=m, _key=key)
        _prep(e, lay, cms, gen)
        d["_e"] = e
    return e


def render_vop3_dpp(e64, lay, d, val, w2, lit, target, wave64):
    """(text, operands) of a VOP3 DPP instruction: ``val`` its first two dwords, ``w2`` the
    control dword; ``e64`` the e64 entry (layout ``lay``), ``d`` the DPP table entry.  Raises
    BadEncoding where the e64 form rejects the bits."""
    cms = load_table(target, wave64)["_cm"]
    if e64.get("_prep") != lay or "_cache" not in e64:
        _prep(e64, lay, cms, generation(target))
    e = _dpp3_view(e64, d, lay, cms, generation(target))
    v2 = vop3_dpp_val(val, w2)
    if v2 & e64["_rej"]:
        raise BadEncoding("e64")
    text, ops = render_entry(e, lay, v2, lit, target, wave64)
    return d["name_p"] + text[len(e64["name_p"]) :] + vop3_dpp_controls((val >> 32) & 0x1FF, w2), ops


def vop3_dpp_needs_literal(e64, val, w2) -> bool:
    v2 = vop3_dpp_val(val, w2)
    return bool(e64.get("lit")) or any((v2 >> lo) & mk == lc for lo, mk, lc in e64["_lits"])


def render(e, enc, f, lit, target, wave64):
    """Text and operands of table entry ``e`` with fields ``f`` (layout ``enc``)."""
    val = 0
    for nm, lo, w in ISAS[generation(target)].layouts[enc]:
        val |= (f.get(nm, 0) & ((1 << w) - 1)) << lo
    return render_entry(e, enc, val, lit, target, wave64)


# ----------------------------------------------------------------------------- decode
# ----------------------------------------------------------------------------- compiled decoders
# `render_entry` above is the reference renderer (the generators check tables with it).  For
# speed, decode_one runs a Python function compiled once per table entry (lazily, on the
# entry's first use): fields unpacked by constant shifts, operands taken from per-slot tuples
# prebuilt for every code of the field (the slot's code map applied once), text concatenated
# from constants.  tests/isa/test_compiled.py checks it against render_entry.
_U = struct.Struct("<I").unpack_from
_U2 = struct.Struct("<II").unpack_from
_U5 = struct.Struct("<5I").unpack_from
_LIT_SENTINEL = object()
_TWO_WORD = ("VOP3", "SMEM", "VOP3P", "VINTERP")
_EXT_MARKS = frozenset((249, 250, 233, 234))
_EXT_ENCS = frozenset(("VOP1", "VOP2", "VOPC"))
_OMOD_TEXT = ("", " mul:2", " mul:4", " div:2")


def _u32(code, pos):
    return _U(code, pos)[0]


class _Reject(Exception):
    """Raised by a compiled decoder: LLVM rejects the instruction (its bytes: ``size``)."""


def _slot_table(p, cm):
    """Operand for every value of a ``cm`` slot's field, as render_entry builds it (None where
    LLVM rejects the code; the literal code gets a placeholder)."""
    fld, n, m = p["f"], p["n"], p["_m"]
    lc = p.get("lc")
    out = []
    for x in range(m + 1):
        if x < len(cm):
            t = cm[x]
            if t is None:
                out.append(None)
            elif x == lc:
                out.append(_LIT_SENTINEL)
            elif p.get("r") == "v":
                out.append(Operand(fld, "vgpr", x, n, t))
            elif p.get("h"):
                out.append(Operand(fld, _code_kind(x) if m == 0x1FF else "imm", x, 1, t))
            else:
                kd = _code_kind(x)
                out.append(Operand(fld, kd, x, n if kd in ("sgpr", "ttmp", "special") else 1, t))
        else:
            out.append(_vgpr_operand(p, fld, x - 256, n))
    return tuple(out)


def _vgpr_operand(p, fld, v, n):
    """The VGPR operand of a 9-bit source slot for VGPR field value ``v`` (None: rejected).
    ``vg``: the text LLVM appends; ``vg2``: appended from v128 on instead (a Lo128 register
    class); ``t16``: GFX11 true16, v0..v127 are low halves (``v5.l``) and v128..v255 the high
    halves of v0..v127 (``v5.h``; index 5)."""
    vg = p.get("vg")
    if vg is None or v + n > 256:
        return None
    if p.get("t16"):
        return Operand(fld, "vgpr", v & 127, 1, f"v{v & 127}.{'h' if v & 128 else 'l'}")
    if v >= 128 and "vg2" in p:
        vg = p["vg2"]
    return Operand(fld, "vgpr", v, n, vreg_name(v, n) + vg)


def _with_mods(op, ng, av):
    return Operand(op.role, op.kind, op.index, op.count, _mods_wrap(op.text, ng, av, op.kind in _IMM_KINDS))


def _with_sext(op):
    return Operand(op.role, op.kind, op.index, op.count, f"sext({op.text})")


def _lit_operand(role, lit, ty):
    t = fmt_literal(lit, ty.rstrip("!"))
    if ty[-1] == "!":
        t += "/*Invalid immediate*/"
    return Operand(role, "literal", lit, 1, t)


def _group_text(val, name, bits, const):
    vs = [((val >> b) & 1) if b >= 0 else c for b, c in zip(bits, const)]
    return f" {name}:[{','.join(map(str, vs))}]"


def _smem_off(val, cmt, ow=21, z0=0, sep=0):
    """(soffset Operand or None, offset Operand) of an SMEM offset slot: a signed ``ow``-bit
    offset (GFX10/11: 21, GFX12: 24); ``z0``: a zero offset prints as ``0x0`` (GFX12) rather than
    ``null`` alone or nothing after the soffset register; ``sep``: the offset alone (GFX12
    s_prefetch_*, whose soffset is a slot of its own)."""
    x = (val >> 32) & ((1 << ow) - 1)
    if sep:
        sx = x - (1 << ow) if x >> (ow - 1) else x
        return None, Operand("offset", "imm", sx, 1, f"{'-' if sx < 0 else ''}{abs(sx):#x}")
    so = (val >> 57) & 0x7F
    t = cmt[so] if cmt is not None else sreg_name(so, 1)
    if t is None:
        raise _Reject
    sx = x - (1 << ow) if x >> (ow - 1) else x
    if t == "":
        return None, Operand(
            "offset", "imm", sx, 1, f"{'-' if sx < 0 else ''}{abs(sx):#x}" if x or z0 else "null"
        )
    sop = Operand("soffset", sreg_kind(so), so, 1, t)
    if x or z0:
        t += f" offset:{'-' if sx < 0 else ''}{abs(sx):#x}"
    return sop, Operand("offset", "imm", sx, 1, t)


@lru_cache(maxsize=1 << 16)
def _simm_text(fmt, x, target, wave64):
    return simm16_text(fmt, x, target, wave64)


_CFACTORIES: dict[tuple[tuple[str, ...], str], Callable[..., Any]] = {}


def _compile_entry(ctx, enc, op, e):
    """A function ``(code, pos, w0, base) -> Instruction`` for table entry ``e`` (opcode ``op``
    of encoding ``enc``) that gives exactly what render_entry gives."""
    lay = e.get("enc") or enc
    if e.get("tail") or (e.get("m") or {}).get("ff"):
        return None  # modifiers before the last parts: render_entry's shape (_generic_entry)
    pos_ = ctx.lay_pos[lay]
    cms = ctx.tab["_cm"]
    two = enc in _TWO_WORD
    nb = 8 if two else 4
    V = "val" if two else "w0"
    env = {"NAME": e["name"], "LAY": lay, "VARIANT": e.get("variant", ""), "OP": op}
    L = ["def dec(code, pos, w0, base):"]
    if two:
        L += ["    val = w0 | _U(code, pos + 4)[0] << 32"]  # length checked by the caller
    rej = e.get("rej", 0) | e.get("unk", 0)
    if rej:
        L += [f"    if {V} & {rej}: raise _Reject({nb})"]
    # literal
    lits = []
    for p in e["parts"]:
        if p.__class__ is dict and "lc" in p:
            lo, mk = (p["lo"], p["m"]) if "lo" in p else pos_[p["f"]]
            lits.append(f"({V} >> {lo}) & {mk} == {p['lc']}" if lo else f"{V} & {mk} == {p['lc']}")
    w_nolit, w_lit = ("(w0, val >> 32)", "(w0, val >> 32, lit)") if two else ("(w0,)", "(w0, lit)")
    if e.get("lit") or lits:
        cond = "True" if e.get("lit") else " or ".join(lits)
        L += [
            f"    if {cond}:",
            f"        if pos + {nb + 4} > len(code): raise _Trunc",
            f"        lit = _U(code, pos + {nb})[0]",
            f"        size = {nb + 4}",
            f"        words = {w_lit}",
            "    else:",
            "        lit = None",
            f"        size = {nb}",
            f"        words = {w_nolit}",
        ]
    else:
        L += ["    lit = None", f"    size = {nb}", f"    words = {w_nolit}"]
    m = e.get("m") or {}
    sm = m.get("sm")
    texts = ["NAME_P"]
    env["NAME_P"] = e["name_p"]
    ops = []
    pending = []  # string parts not yet emitted
    extra_ops = None
    k = 0
    for p in e["parts"]:
        if p.__class__ is str:
            pending.append(p)
            continue
        if extra_ops:
            return None  # not a shape this compiler knows: use render_entry
        kind = p["k"]
        fld = p["f"]
        o = f"o{k}"
        k += 1
        if kind == "cm":
            lo, mk = (p["lo"], p["m"]) if "lo" in p else pos_[fld]
            q = dict(p, _m=mk)
            tkey = (
                "cm",
                fld,
                p["n"],
                p.get("lc"),
                p.get("r"),
                p.get("h"),
                mk,
                p.get("vg"),
                p["cm"],
                p.get("vg2"),
                p.get("t16"),
            )
            tab = ctx.slot_tabs.get(tkey)
            if tab is None:
                tab = ctx.slot_tabs[tkey] = _slot_table(q, cms[p["cm"]])
            env[f"T{o}"] = tab
            L += [
                f"    x = ({V} >> {lo}) & {mk}" if lo else f"    x = {V} & {mk}",
                f"    {o} = T{o}[x]",
                f"    if {o} is None: raise _Reject(size)",
            ]
            if "lc" in p:
                env[f"TY{o}"] = p["t"]
                L += [f"    if x == {p['lc']}: {o} = _lit_operand({fld!r}, lit, TY{o})"]
            if sm is not None:
                i = p.get("i", -1)
                if 0 <= i < len(sm):
                    ngb, abb, sb = sm[i]
                    mask = (1 << ngb if ngb >= 0 else 0) | (1 << abb if abb >= 0 else 0)
                    if mask:
                        ng = f"({V} >> {ngb}) & 1" if ngb >= 0 else "0"
                        av = f"({V} >> {abb}) & 1" if abb >= 0 else "0"
                        L += [f"    if {V} & {mask}: {o} = _with_mods({o}, {ng}, {av})"]
                    if sb >= 0:
                        L += [f"    if ({V} >> {sb}) & 1: {o} = _with_sext({o})"]
            texts += [repr("".join(pending))] if pending else []
            pending = []
            texts.append(f"{o}.text")
            ops.append(o)
        elif kind == "simm16":
            fm = p["fmt"]
            env[f"K{o}"] = _SIMM_KIND[fm]
            L += [f"    x = {V} & 0xFFFF"]
            if fm == "hex":
                tx = "'%#x' % x"
            elif fm in ("dec", "label"):
                tx = "str(x)"
            elif fm == "inl":
                tx = "(str(x) if x <= 64 else '%#x' % x)"
            else:
                tx = f"_simm_text({fm!r}, x, TARGET, WAVE64)"
                env["TARGET"], env["WAVE64"] = ctx.target, ctx.wave64
            if e.get("omit0"):
                if not pending or ops:
                    return None  # not a shape this compiler knows: use render_entry
                if pending[:-1]:
                    texts.append(repr("".join(pending[:-1])))
                sep = pending[-1]
                pending = []
                # LLVM omits a zero immediate together with the text before it
                L += [
                    "    if x:",
                    f"        {o} = Operand({fld!r}, K{o}, x, 1, {tx})",
                    f"        t{o} = {sep!r} + {o}.text",
                    f"        ops = ({o},)",
                    "    else:",
                    f"        t{o} = ''",
                    "        ops = ()",
                ]
                extra_ops = "ops"
                texts.append(f"t{o}")
                continue
            sep = "".join(pending)
            pending = []
            L += [f"    {o} = Operand({fld!r}, K{o}, x, 1, {tx})"]
            if sep:
                texts.append(repr(sep))
            texts.append(f"{o}.text")
            ops.append(o)
        elif kind == "lit":
            env[f"TY{o}"] = p.get("t", "hex")
            L += [f"    {o} = _lit_operand('literal', lit, TY{o})"]
            if pending:
                texts.append(repr("".join(pending)))
                pending = []
            texts.append(f"{o}.text")
            ops.append(o)
        elif kind == "smem_off":
            env[f"T{o}"] = cms[p["cm"]] if "cm" in p else None
            if p.get("ow", 21) != 21 or p.get("z0") or p.get("sep"):
                L += [
                    f"    s{o}, {o} = _smem_off({V}, T{o}, {p.get('ow', 21)}, {p.get('z0', 0)}, {p.get('sep', 0)})"
                ]
            else:
                L += [f"    s{o}, {o} = _smem_off({V}, T{o})"]
            if pending:
                texts.append(repr("".join(pending)))
                pending = []
            texts.append(f"{o}.text")
            ops.append(f"s{o}")
            ops.append(o)
        else:
            return None
    if pending:
        texts.append(repr("".join(pending)))
    L += [f"    text = {' + '.join(texts)}"]
    for name, bits, dflt, const in m.get("g", ()):
        conds = []
        for b, c in zip(bits, const):
            if b >= 0:
                conds.append(f"({V} >> {b}) & 1 != {dflt}")
            elif c != dflt:
                conds = ["True"]
                break
        if conds:
            env[f"G{len(env)}"] = (name, tuple(bits), tuple(const))
            g = f"G{len(env) - 1}"
            L += [f"    if {' or '.join(conds)}: text += _group_text({V}, *{g})"]
    for b, t in m.get("fl", ()):
        L += [f"    if ({V} >> {b}) & 1: text += {t!r}"]
    om = m.get("om", -1)
    if om >= 0:
        L += [f"    if ({V} >> {om}) & 3: text += _OMOD_TEXT[({V} >> {om}) & 3]"]
    if m.get("bs"):
        bsv = " + ".join(f"(({V} >> {b}) & 1) * {1 << k}" for k, b in enumerate(m["bs"]) if b >= 0)
        L += [f"    bsv = {bsv}", "    if bsv: text += ' byte_sel:%d' % bsv"]
    # operands tuple (an SMEM soffset slot may be absent)
    if extra_ops:
        opx = extra_ops
    elif any(o.startswith("s") for o in ops):
        L += [f"    ops = tuple(o for o in ({', '.join(ops)},) if o is not None)"]
        opx = "ops"
    else:
        opx = f"({', '.join(ops)}{',' if len(ops) == 1 else ''})"
    flds = ", ".join(
        f"{nm!r}: ({V} >> {lo}) & {(1 << w) - 1}" if lo else f"{nm!r}: {V} & {(1 << w) - 1}"
        for nm, lo, w in ctx.isa.layouts[lay]
    )
    L += [
        f"    return _tnew(_I, (base + pos, size, words, LAY, VARIANT, OP, NAME, {{{flds}}}, lit, "
        f"{opx}, text))"
    ]
    body = "\n    ".join(L)
    args = sorted(env)
    key = (tuple(args), body)
    make = _CFACTORIES.get(key)
    if make is None:  # entries of the same shape share one compiled factory
        g = {
            "_U": _U,
            "_Reject": _Reject,
            "_Trunc": _Trunc,
            "Operand": Operand,
            "_lit_operand": _lit_operand,
            "_with_mods": _with_mods,
            "_with_sext": _with_sext,
            "_group_text": _group_text,
            "_smem_off": _smem_off,
            "_simm_text": _simm_text,
            "_OMOD_TEXT": _OMOD_TEXT,
            "_tnew": tuple.__new__,
            "_I": Instruction,
        }
        exec(f"def make({', '.join(args)}):\n    {body}\n    return dec", g)  # noqa: S102 (our table)
        make = _CFACTORIES[key] = g["make"]
    return make(*(env[a] for a in args))


class _Trunc(Exception):
    """Raised by a compiled decoder: the literal dword is missing."""


def _generic_entry(ctx, enc, op, e):
    """render_entry wrapped like a compiled decoder (shapes _compile_entry does not know)."""
    lay = e.get("enc") or enc
    two = enc in _TWO_WORD
    if e.get("_prep") != lay or "_cache" not in e:
        _prep(e, lay, ctx.tab["_cm"], ctx.isa.name)

    def dec(code, pos, w0, base):
        size = 8 if two else 4
        val = w0 | (_U(code, pos + 4)[0] << 32) if two else w0
        if val & e["_rej"]:
            raise _Reject(size)
        lit = None
        need = e.get("lit", 0)
        for lo, mk, lc in e["_lits"]:
            if (val >> lo) & mk == lc:
                need = 1
        if need:
            if pos + size + 4 > len(code):
                raise _Trunc
            lit = _U(code, pos + size)[0]
            size += 4
        try:
            text, ops = render_entry(e, lay, val, lit, ctx.target, ctx.wave64)
        except BadEncoding:
            raise _Reject(size) from None
        words = tuple(_U(code, p)[0] for p in range(pos, pos + size, 4))
        return new_instruction(
            base + pos,
            size,
            words,
            lay,
            e.get("variant", ""),
            op,
            e["name"],
            _fields(lay, val, ctx.isa.layouts),
            lit,
            ops,
            text,
        )

    return dec


# ----------------------------------------------------------------------------- per-target context
class _Ctx:
    """Everything decode_one needs for one (target, wave64), built on first use."""

    def __init__(self, target, wave64):
        self.dc = DecodeContext(target, wave64)  # validates the target
        self.target, self.wave64 = target, wave64
        self.isa = ISAS[generation(target)]
        self.lay_pos = _LAY_POS_GEN[self.isa.name]
        self._tab = None
        self.slot_tabs = {}
        self.fns = {}  # encoding -> {opcode: decoder}
        self.cache = {} if _RESULT_CACHE[0] else None
        self.disp = tuple(self._handler(self.isa.classify(i << 23)) for i in range(512))

    @property
    def tab(self):
        if self._tab is None:
            self._tab = load_table(self.target, self.wave64)
        return self._tab

    def entry_fn(self, enc, op):
        fns = self.fns.setdefault(enc, {})
        fn = fns.get(op)
        if fn is None:
            e = self.tab[enc].get(op)
            if e is None:
                fn = None
            else:
                fn = _compile_entry(self, enc, op, e) or _generic_entry(self, enc, op, e)
            fns[op] = fn = fn or _no_entry
        return fn

    def _handler(self, enc):
        if not enc:
            return _h_invalid
        if self.isa.name != "gfx10":
            if enc not in self.isa.decoded:
                return _h_not_decoded(f"{self.isa.name.upper()} {enc}")
            if enc == "VOPD":
                return self._h_vopd()
            if enc in MEMORY_ENCODINGS:
                return self._h_memory(enc)
            return self._h_alu(enc)
        if enc in MEMORY_ENCODINGS:
            return self._h_memory(enc)
        return self._h_alu(enc)

    def _h_memory(self, enc):
        from .memory import decoder_for

        dec = (
            decoder_for(self.target, enc, self.wave64)
            if self.isa.name != "gfx10"
            else decoder_for(self.target, enc)
        )

        def h(code, pos, w0, base):
            if pos + 20 <= len(code):
                words = _U5(code, pos)
            else:
                words = tuple(_U(code, p)[0] for p in range(pos, len(code) - 3, 4))
            return dec(words, base + pos)

        return h

    def _h_alu(self, enc):
        lo, mk = self.lay_pos[enc]["op"]
        two = enc in _TWO_WORD
        ext = enc in ("VOP1", "VOP2", "VOPC")
        fns = self.fns.setdefault(enc, {})
        entry_fn = self.entry_fn
        target, wave64 = self.target, self.wave64
        if self.isa.name != "gfx10":
            return self._h_alu11(enc, lo, mk, two, ext)

        def h(code, pos, w0, base):
            if two:
                if pos + 8 > len(code):
                    raise DecodeError(base + pos, bytes(code[pos:]), "truncated instruction")
            op = (w0 >> lo) & mk  # the opcode is in the first dword in every encoding
            fn = fns.get(op) or entry_fn(enc, op)
            if ext and (w0 & 0x1FF) in _EXT_MARKS and fn is not _no_entry:
                ins = decode_ext(code, pos, enc, _fields(enc, w0), target, wave64, base)
                if ins is not None:
                    return ins
            try:
                return fn(code, pos, w0, base)
            except _Reject as r:
                size = r.args[0] if r.args else (8 if two else 4)
                raise DecodeError(base + pos, bytes(code[pos : pos + size])) from None
            except _Trunc:
                raise DecodeError(
                    base + pos, bytes(code[pos:]), "truncated instruction (missing literal)"
                ) from None

        return h

    def _h_vopd(self):
        """VOPD: the X half (by opx) and the Y half (by opy) rendered from tables of their own,
        printed ``X :: Y``; one literal dword serves both halves."""
        target, wave64, lays = self.target, self.wave64, self.isa.layouts

        def h(code, pos, w0, base):
            if pos + 8 > len(code):
                raise DecodeError(base + pos, bytes(code[pos:]), "truncated instruction")
            val = w0 | _U(code, pos + 4)[0] << 32
            tab = self.tab
            ex = tab["VOPDX"].get((w0 >> 22) & 15)
            ey = tab["VOPDY"].get((w0 >> 17) & 31)
            if ex is None or ey is None:
                raise DecodeError(base + pos, bytes(code[pos : pos + 8]))
            for e in (ex, ey):
                if e.get("_prep") != "VOPD" or "_cache" not in e:
                    _prep(e, "VOPD", tab["_cm"], self.isa.name)
            raw = val
            if val & (ex["_rej"] | ey["_rej"]):
                # a one-source half's VSRC1 field (LLVM 19 rejects any non-zero value of it): the
                # hardware ignores it (decision 0023, "Words LLVM 19 rejects that hardware runs")
                for e, flo in ((ex, 9), (ey, 41)):
                    m = 0xFF << flo
                    if e["_rej"] & m == m:
                        val &= ~m
                if val & (ex["_rej"] | ey["_rej"]):
                    raise DecodeError(base + pos, bytes(code[pos : pos + 8]))
            size = 8
            lit = None
            need = ex.get("lit") or ey.get("lit")
            for e in (ex, ey):
                for lo, mk, lc in e["_lits"]:
                    if (val >> lo) & mk == lc:
                        need = 1
            if need:
                if pos + 12 > len(code):
                    raise DecodeError(
                        base + pos, bytes(code[pos:]), "truncated instruction (missing literal)"
                    )
                lit = _U(code, pos + 8)[0]
                size = 12
            try:
                tx, ox = render_entry(ex, "VOPD", val, lit, target, wave64)
                ty, oy = render_entry(ey, "VOPD", val, lit, target, wave64)
            except BadEncoding:
                raise DecodeError(base + pos, bytes(code[pos : pos + size])) from None
            words = tuple(_U(code, p)[0] for p in range(pos, pos + size, 4))
            return new_instruction(
                base + pos,
                size,
                words,
                "VOPD",
                "",
                ((w0 >> 22) & 15) << 5 | ((w0 >> 17) & 31),
                f"{ex['name']}::{ey['name']}",
                _fields("VOPD", raw, lays) if raw == val else dict(_fields("VOPD", raw, lays), hw_only=1),
                lit,
                ox + oy,
                f"{tx} :: {ty}",
            )

        return h

    def _h_alu11(self, enc, lo, mk, two, ext):
        """GFX11/GFX12 ALU encodings: as GFX10's; VOP1/VOP2/VOPC with a DPP16/DPP8 mark in src0
        go to dpp_sdwa.decode_ext (its table: tables/dpp_<target>.json); VOP3/VOP3P with one in
        src0 (VOP3 with DPP) are refused by name until their tables exist (never guessed)."""
        fns = self.fns.setdefault(enc, {})
        entry_fn = self.entry_fn
        dpp_name = f"{self.isa.name.upper()} {enc} with DPP"
        target, wave64 = self.target, self.wave64
        dpp_table = os.path.exists(os.path.join(_TABLE_DIR, f"dpp_{TABLE_TARGET.get(target, target)}.json"))
        dpp3 = dpp_table and enc in _DPP11_ENCS and enc in load_dpp_table(target)["w64" if wave64 else "w32"]
        high = enc == "VOP2" and self.isa.name == "gfx11"  # a 16-bit .h destination (VDST bit 7)

        def h(code, pos, w0, base):
            if two:
                if pos + 8 > len(code):
                    raise DecodeError(base + pos, bytes(code[pos:]), "truncated instruction")
                if enc in _DPP11_ENCS and (_U(code, pos + 4)[0] & 0x1FF) in _DPP11_MARKS:
                    if dpp3:
                        return self._vop3_dpp(enc, code, pos, w0, base)
                    fn = fns.get((w0 >> lo) & mk) or entry_fn(enc, (w0 >> lo) & mk)
                    if fn is not _no_entry:
                        raise DecodeError(base + pos, bytes(code[pos : pos + 8]), _not_decoded(dpp_name))
            op = (w0 >> lo) & mk
            fn = fns.get(op) or entry_fn(enc, op)
            if ext and (w0 & 0x1FF) in _DPP11_MARKS and fn is not _no_entry:
                if not dpp_table:
                    raise DecodeError(base + pos, bytes(code[pos : pos + 4]), _not_decoded(dpp_name))
                ins = decode_ext(code, pos, enc, _fields(enc, w0), target, wave64, base)
                if ins is not None:
                    return ins
            try:
                return fn(code, pos, w0, base)
            except _Reject as r:
                if high and w0 & 1 << 24:
                    ins = _vop2_high_dst(fn, code, pos, w0, base)
                    if ins is not None:
                        return ins
                size = r.args[0] if r.args else (8 if two else 4)
                raise DecodeError(base + pos, bytes(code[pos : pos + size])) from None
            except _Trunc:
                raise DecodeError(
                    base + pos, bytes(code[pos:]), "truncated instruction (missing literal)"
                ) from None

        return h

    def _vop3_dpp(self, enc, code, pos, w0, base):
        """VOP3/VOP3P with DPP16/DPP8 (see render_vop3_dpp): 12 bytes, a literal after where
        the e64 form reads one."""
        if pos + 12 > len(code):
            raise DecodeError(base + pos, bytes(code[pos:]), "truncated instruction")
        w1, w2 = _U2(code, pos + 4)
        lo, mk = self.lay_pos[enc]["op"]
        op = (w0 >> lo) & mk
        mark = w1 & 0x1FF
        var = "dpp" if mark == 0xFA else "dpp8"
        d = load_dpp_table(self.target)["w64" if self.wave64 else "w32"][enc].get(op, {}).get(var)
        e64 = self.tab[enc].get(op)
        val = w0 | w1 << 32
        if d is None or e64 is None or val & d.get("rej", 0) or w2 & d.get("rej2", 0):
            raise DecodeError(base + pos, bytes(code[pos : pos + 12]))
        vonly = d.get("vonly")
        if vonly and any(((val >> _DPP3_SRC[f]) & 0x1FF) < 256 for f in vonly):
            what = (
                f"{self.isa.name.upper()} {enc} with DPP: a non-VGPR {'/'.join(vonly)} (LLVM 19's own class)"
            )
            raise DecodeError(base + pos, bytes(code[pos : pos + 12]), _not_decoded(what))
        if d.get("nd") or val & d.get("unk", 0) or w2 & d.get("unk2", 0):
            what = d.get("nd") or f"{self.isa.name.upper()} {enc} with DPP: bits LLVM 19 prints otherwise"
            raise DecodeError(base + pos, bytes(code[pos : pos + 12]), _not_decoded(what))
        lay = e64.get("enc") or enc
        if e64.get("_prep") != lay or "_cache" not in e64:
            _prep(e64, lay, self.tab["_cm"], self.isa.name)
        size, lit = 12, None
        if vop3_dpp_needs_literal(e64, val, w2):
            if pos + 16 > len(code):
                raise DecodeError(base + pos, bytes(code[pos:]), "truncated instruction (missing literal)")
            lit = _U(code, pos + 12)[0]
            size = 16
        try:
            text, ops = render_vop3_dpp(e64, lay, d, val, w2, lit, self.target, self.wave64)
        except BadEncoding:
            raise DecodeError(base + pos, bytes(code[pos : pos + size])) from None
        f = _fields(lay, vop3_dpp_val(val, w2), self.isa.layouts)
        f["ext"] = mark
        if var == "dpp8":
            f["dpp8"] = tuple((w2 >> (8 + 3 * i)) & 7 for i in range(8))
            f["fi"] = 1 if mark == 0xEA else 0
        else:
            for name, flo, fw in _DPP3_CTRL:
                f[name] = (w2 >> flo) & ((1 << fw) - 1)
        words = tuple(_U(code, p)[0] for p in range(pos, pos + size, 4))
        return new_instruction(base + pos, size, words, lay, var, op, e64["name"], f, lit, ops, text)


_DPP3_SRC = {"src1": 41, "src2": 50}
_DPP3_CTRL = (
    ("dpp_ctrl", 8, 9),
    ("fi", 18, 1),
    ("bound_ctrl", 19, 1),
    ("bank_mask", 24, 4),
    ("row_mask", 28, 4),
)
_DPP11_MARKS = frozenset((250, 233, 234))
_DPP11_ENCS = frozenset(("VOP3", "VOP3P"))  # the two-dword encodings with DPP forms


VOP2_HIGH_DST = "VOP2 16-bit destination in the high half (VDST field >= 128)"
VOPD_VSRC1 = "VOPD one-source half with a non-zero VSRC1 field"


def _t16_operand(o):
    """A VGPR operand of a 16-bit VOP2 slot in LLVM's +real-true16 spelling: field values
    0..127 the low halves (``v5.l``), 128..255 the high halves of v(n - 128) (``v5.h``)."""
    if o.kind != "vgpr":
        return o
    return Operand(o.role, "vgpr", o.index & 127, 1, f"v{o.index & 127}.{'h' if o.index & 128 else 'l'}")


def _vop2_high_dst(fn, code, pos, w0, base):
    """A GFX11 VOP2 word LLVM 19 rejects only because its VDST field is >= 128 in a 16-bit
    (Lo128) destination class: the hardware writes the high half of v(VDST - 128) (the RDNA3
    guide's 16-bit VGPR operands; tinygrad's hardware-validated cases).  Decoded from the same
    word with VDST bit 7 clear (which LLVM accepts: so the destination is 16-bit), with the raw
    VDST field kept and the text LLVM prints under +real-true16 (``v_add_f16_e32 v0.h, s2,
    v2.l``), built from its operands; None if that word is rejected too.  Decision 0023 ("Words
    LLVM 19 rejects that hardware runs"); named by ``hardware_only``."""
    low = w0 & ~(1 << 24)
    rest = bytes(code[pos + 4 : pos + 8])  # a literal, if the op reads one
    try:
        ins = fn(struct.pack("<I", low) + rest + bytes(4), 0, low, base + pos)
    except (_Reject, _Trunc):
        return None
    if ins.size > len(code) - pos:
        return None
    ops = tuple(_t16_operand(o) for o in ins.operands)
    ops = (Operand("vdst", "vgpr", ops[0].index, 1, ops[0].text.replace(".l", ".h")),) + ops[1:]
    name_p = ins.text.split(" ", 1)[0]
    text = f"{name_p} {', '.join(o.text for o in ops)}"
    f = dict(ins.fields, vdst=(w0 >> 17) & 0xFF, hw_only=1)
    return new_instruction(
        ins.offset,
        ins.size,
        (w0,) + ins.words[1:],
        ins.encoding,
        ins.variant,
        ins.opcode,
        ins.name,
        f,
        ins.literal,
        ops,
        text,
    )


def hardware_only(ins) -> str | None:
    """The named category of a decoded word LLVM 19 rejects but the hardware runs (decision
    0023, "Words LLVM 19 rejects that hardware runs"), or None."""
    if ins.encoding == "VOP2" and ins.fields.get("hw_only"):
        return VOP2_HIGH_DST
    if ins.encoding == "VOPD" and ins.fields.get("hw_only"):
        return VOPD_VSRC1
    from .memory import hardware_only as memory_hardware_only

    return memory_hardware_only(ins)


def _not_decoded(what):
    """DecodeError reason for an encoding wavelift does not decode yet (refused, not guessed)."""
    return f"{NOT_DECODED}: {what}"


def _h_not_decoded(what):
    reason = _not_decoded(what)

    def h(code, pos, w0, base):
        raise DecodeError(base + pos, bytes(code[pos : pos + 4]), reason)

    return h


def _no_entry(code, pos, w0, base):
    if w0 == 0:  # LLVM's V_ILLEGAL: exactly the zero dword (VOP2 opcode 0 is otherwise invalid)
        return new_instruction(
            base + pos, 4, (0,), "VOP2", "e32", 0, "v_illegal", _fields("VOP2", 0), None, (), "v_illegal"
        )
    raise _Reject


def _h_invalid(code, pos, w0, base):
    raise DecodeError(base + pos, bytes(code[pos : pos + 4]))


_CTXS: dict[tuple[str, bool], _Ctx] = {}
_RESULT_CACHE = [True]
_CACHE_MAX = 1 << 16


def _context(target, wave64):
    key = (target, bool(wave64))
    ctx = _CTXS.get(key)
    if ctx is None:
        ctx = _CTXS[key] = _Ctx(target, bool(wave64))
        _CTXS[(target, wave64)] = ctx
    return ctx


def set_result_cache(enabled: bool) -> bool:
    """Turn decode_one's result cache on/off (off = every instruction decoded from scratch, as
    bench/bench_decode.py's *cold* pass measures); clears it either way.  Returns the old
    setting."""
    old = _RESULT_CACHE[0]
    _RESULT_CACHE[0] = bool(enabled)
    for ctx in _CTXS.values():
        ctx.cache = {} if enabled else None
    return old


def _store(cache, w0, ins):
    words = ins.words
    if ins.size != 4 * len(words) or words[0] != w0:
        return
    if len(words) == 1 and (w0 & 0x1FF) in _EXT_MARKS and ins.encoding in _EXT_ENCS:
        # v_nop & co. with a DPP/SDWA marker: LLVM reads 8 bytes or falls back to these 4
        # depending on the next dword (table entry "fb"), so w0 alone is not the key
        return
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    if len(words) == 1:
        cache[w0] = ins
        return
    node = cache.get(w0)
    if node.__class__ is not dict:
        node = cache[w0] = {}
    for w in words[1:-1]:
        nxt = node.get(w)
        if nxt.__class__ is not dict:
            nxt = node[w] = {}
        node = nxt
    node[words[-1]] = ins


# ----------------------------------------------------------------------------- decode
def decode_one(code, pos=0, target="gfx1030", wave64=False, base=0) -> Instruction:
    """The instruction at byte ``pos`` of ``code`` (its ``offset`` is ``base + pos``).

    Results are cached per (target, wave size) keyed by the instruction's own dwords (its text
    depends on nothing else: branch targets print as LLVM's immediate; the one exception, a
    4-byte VOP1/VOP2/VOPC word with a DPP/SDWA marker, e.g. v_nop falling back from its 8-byte
    form depending on the next dword, is not cached); a hit at another offset
    is a copy with ``offset`` swapped, sharing ``fields``/``operands`` (treat them read-only).
    Invalid bytes are not cached."""
    ctx = _CTXS.get((target, wave64))
    if ctx is None:
        ctx = _context(target, wave64)
    if not isinstance(code, (bytes, bytearray, memoryview)):
        code = bytes(code)
    n = len(code)
    if pos + 4 > n or pos < 0:
        raise DecodeError(base + pos, bytes(code[pos:n]), "truncated instruction")
    w0 = _U(code, pos)[0]
    cache = ctx.cache
    if cache is None:
        return ctx.disp[w0 >> 23](code, pos, w0, base)
    node = cache.get(w0)
    if node is not None:
        p = pos
        while node.__class__ is dict:
            p += 4
            if p + 4 > n:
                break
            node = node.get(_U(code, p)[0])
            if node is None:
                break
        else:
            off = base + pos
            return node if node.offset == off else moved(node, off)
    ins = ctx.disp[w0 >> 23](code, pos, w0, base)
    _store(cache, w0, ins)
    return ins


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
