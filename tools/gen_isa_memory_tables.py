#!/usr/bin/env python3
"""Generate wavelift/isa/tables/memory_<target>.json by asking llvm-mc-19 about every opcode.

Regenerate (needs llvm-mc-19 on PATH; ~1-2 minutes per target, one llvm-mc process per batch):

    python3 tools/gen_isa_memory_tables.py            # writes every target's table
    python3 tools/gen_isa_memory_tables.py gfx1030    # one target

GFX11 (gfx1100, gfx1150) and GFX12 (gfx1200) tables hold the encodings generated so far for that
generation (GEN_ENCODINGS, with their layouts in LAYOUT_GEN); the decoder refuses the others by
name.

Nothing here is a hand-typed opcode list: every opcode value of every memory encoding (DS,
MUBUF, MTBUF, MIMG, FLAT/GLOBAL/SCRATCH, EXP, VINTRP) is assembled as bytes, disassembled by
LLVM in batches, and what LLVM prints is recorded:

* per opcode and per *mode* (the bits that change the operand list: gds; offen/idxen/lds/glc/tfe;
  seg/glc/saddr-off) the mnemonic, the printed operand *template* (which raw field prints where,
  and how many dwords wide), and the fields LLVM requires to be zero ("zero");
* name tables for small fields (soffset, srsrc, ssamp, saddr, tbuffer format, exp target);
* for MIMG (and GFX12's VIMAGE/VSAMPLE: one grid column, their addresses always separate
  registers; per opcode the 32 th/scope texts; the 9-bit srsrc/ssamp names), per opcode: the printed (data dwords, address dwords / NSA address count) for every
  (popcount(dmask), d16, tfe) x nsa x (dim, a16) with in-range registers ("grid", identical data
  columns shared through "dk"), and per (nsa, a16) the widths of the variant LLVM decodes before
  it resizes ("dec", found as the least room below v256 that LLVM accepts).  With those, the
  decoder reproduces AMDGPUDisassembler::convertMIMGInst, including its fallback to the decoded
  widths when a resized register would pass v255 (~150k probes per target).

The same probing helper (`llvm_disassemble`) is the oracle of tests/isa/test_memory*.py.
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "wavelift" / "isa" / "tables"
LLVM_MC = "llvm-mc-19"
TARGETS = ("gfx1030", "gfx1010", "gfx1100", "gfx1150", "gfx1200")

# --------------------------------------------------------------------------------------------
# the oracle: disassemble many instructions in one llvm-mc process
# --------------------------------------------------------------------------------------------
NPAD = 6
PAD = tuple(0xBF800000 | k for k in range(1, NPAD + 1))  # s_nop 1 .. s_nop 6
_NOP = re.compile(r"s_nop (\d+)$")
_BAD = re.compile(r"<stdin>:(\d+):(\d+): warning: invalid instruction encoding")


def llvm_disassemble(insts, target, wave64=False):
    """For each tuple of dwords return (text, size_in_bytes) or (None, None) when LLVM calls the
    first dword invalid.  Each probe is followed by s_nop 1..6 so that a probe that eats more
    (a literal) or less (trailing bytes decoded as something else: size -1) is still measured."""
    lines = []
    for ws in insts:
        b = b"".join((w & 0xFFFFFFFF).to_bytes(4, "little") for w in tuple(ws) + PAD)
        lines.append(" ".join("0x%02x" % x for x in b))
    args = [LLVM_MC, "--disassemble", "-triple=amdgcn-amd-amdhsa", "-mcpu=" + target]
    if wave64:
        args.append("-mattr=+wavefrontsize64")
    r = subprocess.run(args, input="\n".join(lines) + "\n", capture_output=True, text=True, check=False)
    outs = [ln.strip() for ln in r.stdout.splitlines() if ln.strip() and ln.strip() != ".text"]
    bad, inner = set(), {}
    for m in _BAD.finditer(r.stderr):
        line, col = int(m.group(1)), int(m.group(2))
        if col == 1:
            bad.add(line)
        else:
            inner.setdefault(line, []).append((col - 1) // 5)
    res = []
    k = 0
    for i, ws in enumerate(insts):
        group = []
        while True:
            t = outs[k]
            k += 1
            if t == f"s_nop {NPAD}":
                break
            group.append(t)
        nops = 0
        while group and _NOP.match(group[-1]) and int(_NOP.match(group[-1]).group(1)) == NPAD - 1 - nops:
            group.pop()
            nops += 1
        if (i + 1) in bad:
            res.append((None, None))
        elif any(b < 4 * len(ws) for b in inner.get(i + 1, ())):
            res.append((group[0] if group else None, -1))
        elif len(group) == 1:
            first_nop = NPAD - nops
            res.append((group[0], 4 * len(ws) + 4 * (first_nop - 1)))
        else:
            res.append((group[0] if group else None, -1))
    return res


def llvm_version():
    r = subprocess.run([LLVM_MC, "--version"], capture_output=True, text=True, check=False)
    m = re.search(r"LLVM version ([\d.]+)", r.stdout)
    return m.group(1) if m else "?"


# --------------------------------------------------------------------------------------------
# encodings: raw field layout (word, lo bit, width); shared with wavelift/isa/memory.py
# --------------------------------------------------------------------------------------------
LAYOUT = {
    "DS": {
        "offset0": (0, 0, 8),
        "offset1": (0, 8, 8),
        "gds": (0, 17, 1),
        "op": (0, 18, 8),
        "addr": (1, 0, 8),
        "data0": (1, 8, 8),
        "data1": (1, 16, 8),
        "vdst": (1, 24, 8),
    },
    "MUBUF": {
        "offset": (0, 0, 12),
        "offen": (0, 12, 1),
        "idxen": (0, 13, 1),
        "glc": (0, 14, 1),
        "dlc": (0, 15, 1),
        "lds": (0, 16, 1),
        "op": (0, 18, 7),
        "op7": (0, 25, 1),
        "vaddr": (1, 0, 8),
        "vdata": (1, 8, 8),
        "srsrc": (1, 16, 5),
        "opm": (1, 21, 1),
        "slc": (1, 22, 1),
        "tfe": (1, 23, 1),
        "soffset": (1, 24, 8),
    },
    "MTBUF": {
        "offset": (0, 0, 12),
        "offen": (0, 12, 1),
        "idxen": (0, 13, 1),
        "glc": (0, 14, 1),
        "dlc": (0, 15, 1),
        "op": (0, 16, 3),
        "format": (0, 19, 7),
        "vaddr": (1, 0, 8),
        "vdata": (1, 8, 8),
        "srsrc": (1, 16, 5),
        "op3": (1, 21, 1),
        "slc": (1, 22, 1),
        "tfe": (1, 23, 1),
        "soffset": (1, 24, 8),
    },
    "FLAT": {
        "offset": (0, 0, 12),
        "dlc": (0, 12, 1),
        "lds": (0, 13, 1),
        "seg": (0, 14, 2),
        "glc": (0, 16, 1),
        "slc": (0, 17, 1),
        "op": (0, 18, 7),
        "addr": (1, 0, 8),
        "data": (1, 8, 8),
        "saddr": (1, 16, 7),
        "nv": (1, 23, 1),
        "vdst": (1, 24, 8),
    },
    "MIMG": {
        "op7": (0, 0, 1),
        "nsa": (0, 1, 2),
        "dim": (0, 3, 3),
        "dlc": (0, 7, 1),
        "dmask": (0, 8, 4),
        "unrm": (0, 12, 1),
        "glc": (0, 13, 1),
        "r128": (0, 15, 1),
        "tfe": (0, 16, 1),
        "lwe": (0, 17, 1),
        "op": (0, 18, 7),
        "slc": (0, 25, 1),
        "vaddr": (1, 0, 8),
        "vdata": (1, 8, 8),
        "srsrc": (1, 16, 5),
        "ssamp": (1, 21, 5),
        "a16": (1, 30, 1),
        "d16": (1, 31, 1),
    },
    "EXP": {
        "en": (0, 0, 4),
        "target": (0, 4, 6),
        "compr": (0, 10, 1),
        "done": (0, 11, 1),
        "vm": (0, 12, 1),
        "vsrc0": (1, 0, 8),
        "vsrc1": (1, 8, 8),
        "vsrc2": (1, 16, 8),
        "vsrc3": (1, 24, 8),
    },
    "VINTRP": {
        "vsrc": (0, 0, 8),
        "attrchan": (0, 8, 2),
        "attr": (0, 10, 6),
        "op": (0, 16, 2),
        "vdst": (0, 18, 8),
    },
}
ENC_BITS = {
    "DS": 0xD8000000,
    "MUBUF": 0xE0000000,
    "MTBUF": 0xE8000000,
    "FLAT": 0xDC000000,
    "MIMG": 0xF0000000,
    "EXP": 0xF8000000,
    "VINTRP": 0xC8000000,
}
NWORDS = {
    "DS": 2,
    "MUBUF": 2,
    "MTBUF": 2,
    "FLAT": 2,
    "MIMG": 2,
    "EXP": 2,
    "VINTRP": 1,
    "VFLAT": 3,
    "VBUFFER": 3,
    "VIMAGE": 3,
    "VSAMPLE": 3,
}

# GFX11 (gfx1100, gfx1150) and GFX12 (gfx1200): the encodings generated so far, each with its
# layout and fixed bits (GFX12's DS keeps GFX11's bits; LLVM rejects its gds bit)
FLAT11 = {
    "offset": (0, 0, 13),
    "dlc": (0, 13, 1),
    "glc": (0, 14, 1),
    "slc": (0, 15, 1),
    "seg": (0, 16, 2),
    "op": (0, 18, 7),
    "addr": (1, 0, 8),
    "data": (1, 8, 8),
    "saddr": (1, 16, 7),
    "sve": (1, 23, 1),
    "vdst": (1, 24, 8),
}
_BUF11 = {  # the second dword of GFX11 MUBUF and MTBUF
    "vaddr": (1, 0, 8),
    "vdata": (1, 8, 8),
    "srsrc": (1, 16, 5),
    "tfe": (1, 21, 1),
    "offen": (1, 22, 1),
    "idxen": (1, 23, 1),
    "soffset": (1, 24, 8),
}
MUBUF11 = dict(
    {"offset": (0, 0, 12), "slc": (0, 12, 1), "dlc": (0, 13, 1), "glc": (0, 14, 1)},
    lds=(0, 16, 1),
    op=(0, 18, 8),
    **_BUF11,
)
MTBUF11 = dict(
    {"offset": (0, 0, 12), "slc": (0, 12, 1), "dlc": (0, 13, 1), "glc": (0, 14, 1)},
    op=(0, 15, 4),
    format=(0, 19, 7),
    **_BUF11,
)
VFLAT12 = {  # GFX12 VFLAT/VGLOBAL/VSCRATCH (3 dwords)
    "saddr": (0, 0, 7),
    "rsv0": (0, 7, 7),
    "op": (0, 14, 8),
    "rsv1": (0, 22, 2),
    "seg": (0, 24, 2),
    "vdst": (1, 0, 8),
    "rsv2": (1, 8, 9),
    "sve": (1, 17, 1),
    "scope": (1, 18, 2),
    "th": (1, 20, 3),
    "data": (1, 23, 8),
    "rsv3": (1, 31, 1),
    "addr": (2, 0, 8),
    "offset": (2, 8, 24),
}
VBUFFER12 = {  # GFX12 VBUFFER: MUBUF and MTBUF (3 dwords)
    "soffset": (0, 0, 7),
    "rsv0": (0, 7, 7),
    "op": (0, 14, 8),
    "tfe": (0, 22, 1),
    "rsv1": (0, 23, 3),
    "vdata": (1, 0, 8),
    "rsv2": (1, 8, 1),
    "srsrc": (1, 9, 7),
    "rsv3": (1, 16, 2),
    "scope": (1, 18, 2),
    "th": (1, 20, 3),
    "format": (1, 23, 7),
    "offen": (1, 30, 1),
    "idxen": (1, 31, 1),
    "vaddr": (2, 0, 8),
    "offset": (2, 8, 24),
}
MIMG11 = {  # GFX11 MIMG: one NSA bit (one more dword: vaddr1..4), an 8-bit opcode, cpol moved
    "nsa": (0, 0, 1),
    "r1": (0, 1, 1),
    "dim": (0, 2, 3),
    "r5": (0, 5, 2),
    "unrm": (0, 7, 1),
    "dmask": (0, 8, 4),
    "slc": (0, 12, 1),
    "dlc": (0, 13, 1),
    "glc": (0, 14, 1),
    "r128": (0, 15, 1),
    "a16": (0, 16, 1),
    "d16": (0, 17, 1),
    "op": (0, 18, 8),
    "vaddr": (1, 0, 8),
    "vdata": (1, 8, 8),
    "srsrc": (1, 16, 5),
    "tfe": (1, 21, 1),
    "lwe": (1, 22, 1),
    "r55": (1, 23, 3),
    "ssamp": (1, 26, 5),
    "r63": (1, 31, 1),
}
_VIMG12 = {  # GFX12 VIMAGE/VSAMPLE: the fields both hold (3 dwords; addresses in the third)
    "dim": (0, 0, 3),
    "r128": (0, 4, 1),
    "d16": (0, 5, 1),
    "a16": (0, 6, 1),
    "op": (0, 14, 8),
    "dmask": (0, 22, 4),
    "vdata": (1, 0, 8),
    "srsrc": (1, 9, 9),
    "scope": (1, 18, 2),
    "th": (1, 20, 3),
    "vaddr0": (2, 0, 8),
    "vaddr1": (2, 8, 8),
    "vaddr2": (2, 16, 8),
    "vaddr3": (2, 24, 8),
}
VIMAGE12 = dict(_VIMG12, rsv0=(0, 3, 1), rsv1=(0, 7, 7), rsv2=(1, 8, 1), tfe=(1, 23, 1), vaddr4=(1, 24, 8))
VSAMPLE12 = dict(_VIMG12, tfe=(0, 3, 1), rsv1=(0, 7, 6), unrm=(0, 13, 1), lwe=(1, 8, 1), ssamp=(1, 23, 9))
EXP11 = {  # GFX11/GFX12 EXP (GFX12: export): compr and vm gone, row_en new
    "en": (0, 0, 4),
    "target": (0, 4, 6),
    "done": (0, 11, 1),
    "row_en": (0, 13, 1),
    "vsrc0": (1, 0, 8),
    "vsrc1": (1, 8, 8),
    "vsrc2": (1, 16, 8),
    "vsrc3": (1, 24, 8),
}
LAYOUT_GEN = {
    "gfx10": (LAYOUT, ENC_BITS),
    "gfx11": (
        {
            "DS": LAYOUT["DS"],
            "FLAT": FLAT11,
            "MUBUF": MUBUF11,
            "MTBUF": MTBUF11,
            "MIMG": MIMG11,
            "EXP": EXP11,
        },
        {k: ENC_BITS[k] for k in ("DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "EXP")},
    ),
    "gfx12": (
        {
            "DS": LAYOUT["DS"],
            "VFLAT": VFLAT12,
            "VBUFFER": VBUFFER12,
            "VIMAGE": VIMAGE12,
            "VSAMPLE": VSAMPLE12,
            "EXP": EXP11,
        },
        {
            "DS": ENC_BITS["DS"],
            "VFLAT": 0b111011 << 26,
            "VBUFFER": 0b110001 << 26,
            "VIMAGE": 0b110100 << 26,
            "VSAMPLE": 0b111001 << 26,
            "EXP": ENC_BITS["EXP"],
        },
    ),
}
_ACTIVE = [LAYOUT_GEN["gfx10"]]  # the generation build() encodes for (set by generate())


def generation(target):
    return target[:5] if target.startswith(("gfx11", "gfx12")) else "gfx10"


def build(enc, **f):
    lay_gen, bits = _ACTIVE[0]
    ws = [0] * NWORDS[enc]
    ws[0] = bits[enc]
    lay = lay_gen[enc]
    for name, val in f.items():
        w, lo, width = lay[name]
        ws[w] |= (val & ((1 << width) - 1)) << lo
    return tuple(ws)


# tags: distinct register numbers so a printed register tells which field it came from
VTAG = {"vdst": 8, "vdata": 8, "addr": 40, "vaddr": 40, "data0": 72, "data": 72, "data1": 104}
_REG = re.compile(r"^(v|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])$")


def split_operands(text):
    """'name a, b, c mods' -> (name, [operands], mods)"""
    if " " not in text:
        return text, [], ""
    name, rest = text.split(" ", 1)
    rest = rest.strip()
    swz = ""
    m = re.search(r" ?offset:swizzle\(.*\)", rest)
    if m:  # ds_swizzle_b32 prints commas inside its offset
        swz = m.group(0).strip()
        rest = rest[: m.start()] + rest[m.end() :]
    parts = []
    depth = 0
    cur = ""
    comment = False
    for i_, ch in enumerate(rest):
        if rest.startswith("/*", i_):
            comment = True
        if comment:
            cur += ch
            if rest[i_ - 1 : i_ + 1] == "*/":
                comment = False
            continue
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    cur = cur.strip()
    if depth == 0 and " " in cur and not cur.startswith("[") and "*/" in cur:
        j = cur.index("*/") + 2
        last, mods = cur[:j], cur[j:].strip()
    elif depth == 0 and " " in cur and not cur.startswith("["):
        last, mods = cur.split(" ", 1)
    elif cur.startswith("[") and "]" in cur:
        j = cur.index("]") + 1
        last, mods = cur[:j], cur[j:].strip()
    else:
        last, mods = cur, ""
    parts.append(last)
    mods = (swz + " " + mods).strip() if swz else mods
    if len(parts) == 1 and parts[0] and (":" in parts[0] or parts[0] in MOD_WORDS):
        mods = (parts[0] + " " + mods).strip()
        parts = []
    return name, [p for p in parts if p], mods


MOD_WORDS = {"gds", "glc", "slc", "dlc", "offen", "idxen", "lds", "tfe", "done", "vm", "compr"}


def template_of(enc, ops_text, sgpr_tags):
    """Map printed operands back to fields: [[field, width] | literal]."""
    tpl = []
    for tok in ops_text:
        m = _REG.match(tok)
        if m:
            kind = m.group(1)
            lo = int(m.group(2) or m.group(3))
            hi = int(m.group(2) or m.group(4))
            if kind == "v":
                hits = [f for f, t in VTAG.items() if t == lo and f in _ACTIVE[0][0][enc]]
                if len(hits) == 1:
                    tpl.append([hits[0], hi - lo + 1])
                    continue
            elif kind == "s":
                for f, (reg, _) in sgpr_tags.items():
                    if reg == lo:
                        tpl.append([f, hi - lo + 1])
                        break
                else:
                    tpl.append(tok)
                continue
        tpl.append(tok)
    return tpl


def probe_modes(enc, target, ops, modes, fields, extra_base=None, sgpr_tags=None, wave64_too=False):
    """For each (op_fields, mode): base probe, one probe per field set alone (zero-required?),
    then a full probe with every allowed field set to its tag -> template.  Two llvm-mc runs."""
    extra_base = extra_base or {}
    sgpr_tags = sgpr_tags or {}
    keys, probes = [], []
    for opf in ops:
        for mode in modes:
            base = dict(extra_base, **opf, **mode)
            keys.append((opf, mode))
            probes.append(build(enc, **base))
            for f, tag in fields.items():
                probes.append(build(enc, **dict(base, **{f: tag})))
    res = llvm_disassemble(probes, target)
    n = 1 + len(fields)
    stage = []
    full_probes = []
    for i, (opf, mode) in enumerate(keys):
        chunk = res[i * n : (i + 1) * n]
        if chunk[0][0] is None:
            continue
        zero = [f for (f, _), r in zip(fields.items(), chunk[1:]) if r[0] is None]
        base = dict(extra_base, **opf, **mode)
        full = dict(base, **{f: t for f, t in fields.items() if f not in zero})
        stage.append((opf, mode, zero, chunk[0][0]))
        full_probes.append(build(enc, **full))
    res2 = llvm_disassemble(full_probes, target)
    # wave64_too: where wave64 prints other register widths (GFX12 *_load_tr_*), "tpl_w64"
    res64 = llvm_disassemble(full_probes, target, wave64=True) if wave64_too else [(None, None)] * len(res2)
    out = []
    for (opf, mode, zero, base_text), (text, _size), (t64, _s64) in zip(stage, res2, res64):
        if text is None:  # a combination of allowed fields is invalid: keep the base view
            text = base_text
            bad = True
        else:
            bad = False
        name, opnds, mods = split_operands(text)
        out.append(
            (
                opf,
                mode,
                {
                    "name": name,
                    "tpl": template_of(enc, opnds, sgpr_tags),
                    "zero": zero,
                    "mods": mods,
                    "combo_invalid": bad,
                },
            )
        )
        if t64 is not None and t64 != text:
            n64, o64, m64 = split_operands(t64)
            assert (n64, m64) == (name, mods), (target, t64, text)
            out[-1][2]["tpl_w64"] = template_of(enc, o64, sgpr_tags)
    return out


def key(*vals):
    return ",".join(str(v) for v in vals)


# --------------------------------------------------------------------------------------------
def gen_ds(target):
    fields = {"offset0": 1, "offset1": 2, "addr": 40, "data0": 72, "data1": 104, "vdst": 8}
    ops = [{"op": op} for op in range(256)]
    modes = [{"gds": g} for g in (0, 1)]
    table = {}
    for opf, mode, e in probe_modes("DS", target, ops, modes, fields):
        table[key(opf["op"], mode["gds"])] = e
    return table


BUF_SGPR = {"srsrc": (8, 2), "soffset": (5, 5)}


def gen_mubuf(target):
    fields = {"offset": 4, "vaddr": 40, "vdata": 8, "srsrc": 2, "soffset": 5, "slc": 1, "dlc": 1, "opm": 1}
    ops = [{"op": op & 0x7F, "op7": op >> 7} for op in range(256)]
    modes = [
        {"offen": a, "idxen": b, "lds": c, "glc": d, "tfe": e}
        for a in (0, 1)
        for b in (0, 1)
        for c in (0, 1)
        for d in (0, 1)
        for e in (0, 1)
    ]
    table = {}
    for opf, mode, e in probe_modes("MUBUF", target, ops, modes, fields, sgpr_tags=BUF_SGPR):
        op = opf["op"] | opf["op7"] << 7
        table[key(op, mode["offen"], mode["idxen"], mode["lds"], mode["glc"], mode["tfe"])] = e
    return table


def gen_mtbuf(target):
    fields = {
        "offset": 4,
        "vaddr": 40,
        "vdata": 8,
        "srsrc": 2,
        "soffset": 5,
        "slc": 1,
        "dlc": 1,
        "glc": 1,
        "format": 22,
    }
    ops = [{"op": op & 7, "op3": op >> 3} for op in range(16)]
    modes = [{"offen": a, "idxen": b, "tfe": e} for a in (0, 1) for b in (0, 1) for e in (0, 1)]
    table = {}
    for opf, mode, e in probe_modes("MTBUF", target, ops, modes, fields, sgpr_tags=BUF_SGPR):
        op = opf["op"] | opf["op3"] << 3
        table[key(op, mode["offen"], mode["idxen"], mode["tfe"])] = e
    return table


def gen_flat(target):
    fields = {"offset": 4, "addr": 40, "data": 72, "vdst": 8, "slc": 1, "dlc": 1, "nv": 1}
    ops = [{"op": op, "seg": seg} for seg in range(4) for op in range(128)]
    modes = [{"glc": g, "saddr": s, "lds": d} for g in (0, 1) for s in (0x7D, 10) for d in (0, 1)]
    table = {}
    sg = {"saddr": (10, 10)}
    for opf, mode, e in probe_modes("FLAT", target, ops, modes, fields, sgpr_tags=sg):
        table[key(opf["seg"], opf["op"], mode["glc"], int(mode["saddr"] == 0x7D), mode["lds"])] = e
    return table


def gen_names(target):
    """Name tables of small fields, probed with one representative instruction each."""
    names = {}
    # soffset (MUBUF buffer_load_dword = op 12); 0xff (literal) consumes a dword
    pr = [build("MUBUF", op=12, vdata=8, srsrc=2, soffset=v) for v in range(256)]
    names["soffset"] = [
        None if t is None else split_operands(t)[1][3] for t, _ in llvm_disassemble(pr, target)
    ]
    pr = [build("MUBUF", op=12, vdata=8, srsrc=v, soffset=0x80) for v in range(32)]
    names["srsrc"] = [None if t is None else split_operands(t)[1][2] for t, _ in llvm_disassemble(pr, target)]
    pr = [build("MIMG", op=0x20, dmask=1, dim=0, vdata=8, vaddr=40, srsrc=2, ssamp=v) for v in range(32)]
    names["ssamp"] = [None if t is None else split_operands(t)[1][3] for t, _ in llvm_disassemble(pr, target)]
    pr = [build("MIMG", op=0x20, dmask=1, dim=0, vdata=8, vaddr=40, srsrc=v, ssamp=0) for v in range(32)]
    names["srsrc_mimg"] = [
        None if t is None else split_operands(t)[1][2] for t, _ in llvm_disassemble(pr, target)
    ]
    for seg, op, nm in (
        (1, 12, "saddr_scratch"),
        (2, 12, "saddr_global"),
        (1, 28, "saddr_scratch_store"),
        (2, 28, "saddr_global_store"),
    ):
        pr = [
            build("FLAT", op=op, seg=seg, addr=40, data=8, vdst=8 if op == 12 else 0, saddr=v)
            for v in range(128)
        ]
        names[nm] = [None if t is None else split_operands(t)[1][2] for t, _ in llvm_disassemble(pr, target)]
        assert op != 28 or names[nm][0x7D] == "off"
    pr = [build("FLAT", op=8, seg=1, lds=1, addr=40, saddr=v) for v in range(128)]
    names["saddr_scratch_lds"] = [
        None if t is None else split_operands(t)[1][1] for t, _ in llvm_disassemble(pr, target)
    ]
    pr = [build("MTBUF", op=0, format=v, vdata=8, srsrc=2, soffset=0x80) for v in range(128)]
    fm = []
    for t, _ in llvm_disassemble(pr, target):
        m = re.search(r" (format:\S+)", t or "")
        fm.append(None if t is None else (m.group(1) if m else ""))
    names["format"] = fm
    pr = [build("EXP", target=v, en=1, vsrc0=1) for v in range(64)]
    names["exp_target"] = [None if t is None else t.split(" ")[1] for t, _ in llvm_disassemble(pr, target)]
    pr = [build("VINTRP", op=v) for v in range(4)]
    names["vintrp"] = [None if t is None else t.split(" ")[0] for t, _ in llvm_disassemble(pr, target)]
    return names


MIMG_DIMS = range(8)
_MENC = ["MIMG"]  # the image encoding gen_mimg probes: MIMG (GFX10/11), VIMAGE or VSAMPLE (GFX12)


def _is12():
    """GFX12 VIMAGE/VSAMPLE: no NSA bit, the addresses always separate registers in the third
    dword (VIMAGE's fifth in the second), the last one holding the rest."""
    return _MENC[0] != "MIMG"


def _mlay():
    return _ACTIVE[0][0][_MENC[0]]


def _opf(op):
    """The opcode fields of MIMG opcode ``op``: GFX10 splits it (op7 = bit 7), GFX11 does not."""
    return {"op": op & 0x7F, "op7": op >> 7} if "op7" in _mlay() else {"op": op}


def _nsa_range():
    """NSA field values: GFX10's counts extra address dwords (0..3); GFX11's is one bit; GFX12 has
    one form (grid column 0, read as NSA)."""
    return range(1 << _mlay()["nsa"][2]) if "nsa" in _mlay() else range(1)


def _vaddr_fields(vaddr):
    """The address fields of a probe: MIMG's vaddr, or GFX12's vaddr0..2 as vaddr, vaddr+1, .."""
    if not _is12():
        return {"vaddr": vaddr}
    # vaddr3 and VIMAGE's vaddr4 0: LLVM rejects them set where the opcode's widest form lacks them
    return {"vaddr0": vaddr, "vaddr1": vaddr + 1, "vaddr2": vaddr + 2}


def _mbuild(**f):
    """build() of the active image encoding, dropping fields its layout lacks (GFX12: glc, nsa)."""
    lay = _mlay()
    if "vaddr" in f and _is12():
        f.update(_vaddr_fields(f.pop("vaddr")))
    return build(_MENC[0], **{k: v for k, v in f.items() if k in lay})


def gen_mimg(target, enc="MIMG"):
    """MIMG (or GFX12's VIMAGE/VSAMPLE, ``enc``): per opcode a valid base (tried in order), the fields LLVM requires to be zero or
    fixed, and the printed register widths.

    LLVM decodes one variant per (opcode, nsa) and then resizes data/address registers to what
    dmask/d16/tfe and dim/a16 ask for -- when that variant exists and the registers stay below
    v256 (AMDGPUDisassembler::convertMIMGInst); otherwise it prints the decoded widths.  So we
    record, with in-range registers, the printed (data dwords, address dwords/count) for every
    (popcount(dmask), d16, tfe) x nsa x (dim, a16) -- "grid", classes of identical data columns
    shared via "dk" -- and, per (nsa, a16), the decoded widths ("dec": the smallest vdata/vaddr
    distance from v255 that LLVM still accepts)."""
    _MENC[0] = enc
    lay = _mlay()
    bases = [dict(dmask=1), dict(dmask=0xF, unrm=1, r128=1), dict(dmask=1, ssamp=0)]
    if _is12():  # no unorm on VIMAGE; a 4-dword result (gather4, BVH)
        bases = [dict(dmask=1), dict(dmask=0xF), dict(dmask=0xF, r128=1), dict(dmask=0xF, unrm=1, r128=1)]
        bases = [b for b in bases if all(k in lay for k in b)]
    srsrc = 8 if _is12() else 2  # GFX12's field holds the SGPR number
    ops = list(range(256))
    pr = []
    for op in ops:
        for b in bases:
            pr.append(_mbuild(**_opf(op), vaddr=40, vdata=8, srsrc=srsrc, **b))
    res = llvm_disassemble(pr, target)
    found = {}
    for i, op in enumerate(ops):
        for j, b in enumerate(bases):
            t, _ = res[i * len(bases) + j]
            if t is not None:
                found[op] = (b, t)
                break
    flag_fields = {
        "unrm": 1,
        "glc": 1,
        "slc": 1,
        "dlc": 1,
        "r128": 1,
        "tfe": 1,
        "lwe": 1,
        "a16": 1,
        "d16": 1,
        "ssamp": 3,
    }
    if _is12():
        flag_fields["ssamp"] = 16  # s[16:19]; s[0:3] is the 0 a sampler-less opcode needs
    flag_fields = {f: v for f, v in flag_fields.items() if f in lay}
    rsv = ("r1", "r5", "r55", "r63", "rsv0", "rsv1", "rsv2", "vaddr4")
    flag_fields.update({f: (1 << lay[f][2]) - 1 for f in rsv if f in lay})
    if _is12():  # an address field the opcode never reads: must it be 0? (v100: in range)
        flag_fields.update({f: 100 for f in ("vaddr2", "vaddr3", "vaddr4") if f in lay})
    order = sorted(found)
    pr = []
    for op in order:
        b, _ = found[op]
        for f, v in flag_fields.items():
            pr.append(
                _mbuild(
                    **_opf(op),
                    vaddr=40,
                    vdata=8,
                    srsrc=srsrc,
                    **dict(b, **{f: v if not b.get(f) else 0}),
                )
            )
    res = llvm_disassemble(pr, target)
    per = len(flag_fields)
    table = {}
    for i, op in enumerate(order):
        b, t = found[op]
        chunk = res[i * per : (i + 1) * per]
        name, opnds, mods = split_operands(t)
        e = {"name": name, "base": b, "text": t}
        zero = []
        for (f, v), (tt, _) in zip(flag_fields.items(), chunk):
            if b.get(f):
                if tt is None:
                    e.setdefault("fixed", []).append(f)
            elif tt is None:
                zero.append(f)
        e["zero"] = zero
        e["sampler"] = len(opnds) >= 4
        e["dim_printed"] = "dim:" in mods
        table[str(op)] = e
    _mimg_widths(target, found, table)
    if _is12():
        return table, _mimg_cpol12(target, found, table)
    return table


MIMG_DMASK = (0, 1, 3, 7, 15)  # one dmask per popcount
NSA_EXTRA = (0x04030201, 0x08070605, 0x0C0B0A09)


def _mimg_probe(op, b, pc, d16, tfe, nsa, dim, a16, vdata=8, vaddr=40):
    w = _mbuild(
        **_opf(op),
        srsrc=8 if _is12() else 2,
        vdata=vdata,
        vaddr=vaddr,
        **dict(b, dmask=MIMG_DMASK[pc], d16=d16, tfe=tfe, nsa=nsa, dim=dim, a16=a16),
    )
    return w + NSA_EXTRA[:nsa]


def _mimg_cpol12(target, found, table):
    """GFX12 VIMAGE/VSAMPLE cache policy: per opcode the text LLVM prints for each (th, scope)
    (index th * 4 + scope; None where it rejects the word), shared lists as cpol12's."""
    order = sorted(found)
    pr = [
        _mbuild(**_opf(op), vaddr=40, vdata=8, srsrc=8, **dict(found[op][0], th=th, scope=sc))
        for op in order
        for th in range(8)
        for sc in range(4)
    ]
    res = llvm_disassemble(pr, target)
    lists = []
    for i, op in enumerate(order):
        col = []
        for t, _ in res[i * 32 : (i + 1) * 32]:
            m = [] if t is None else [x.group(0).strip() for x in _CPOL.finditer(t)]
            col.append(None if t is None else (" " + " ".join(m) if m else ""))
        if col not in lists:
            lists.append(col)
        table[str(op)]["cpol"] = lists.index(col)
    return lists


def gen_vimage12_names(target, vimage, vsample):
    """GFX12 srsrc names (VIMAGE and VSAMPLE, 9-bit fields) and VSAMPLE's ssamp names, per field
    value: the text LLVM prints in that operand's place (None: it rejects the word, or reads a
    literal dword after it: the values listed in ``<field>_<enc>_literal``)."""
    names = {}
    for enc, tab in (("VIMAGE", vimage), ("VSAMPLE", vsample)):
        _MENC[0] = enc
        op = min(int(k) for k, e in tab.items() if e["sampler"] == (enc == "VSAMPLE"))
        b = dict(tab[str(op)]["base"], vdata=8, vaddr=40, srsrc=8, ssamp=16)
        for fld, ref in (("srsrc", "s[8:15]"), ("ssamp", "s[16:19]")):
            if fld not in _mlay():
                continue
            pr = [_mbuild(**_opf(op), **dict(b, **{fld: v})) for v in range(512)]
            res = llvm_disassemble(pr, target)
            t0 = res[b[fld]][0]
            assert t0.count(ref) == 1, (target, enc, t0)
            head, tail = t0.split(ref)
            got, lits = [], []
            for v, (t, size) in enumerate(res):
                assert t is None or (t.startswith(head) and t.endswith(tail)), (target, enc, fld, t)
                if t is not None and size != 12:  # a literal dword follows (LLVM prints it)
                    assert size == 16, (target, enc, fld, v, t, size)
                    lits.append(v)
                    t = None
                got.append(None if t is None else t[len(head) : len(t) - len(tail)])
            names[f"{fld}_{enc}"] = got
            names[f"{fld}_{enc}_literal"] = lits
    return names


def _widths(text):
    o = split_operands(text)[1]
    m = _REG.match(o[0])
    dw = int(m.group(4)) - int(m.group(3)) + 1 if m.group(3) else 1
    if o[1].startswith("["):  # NSA: the address dwords of every register (GFX11's last holds the rest)
        aw = 0
        for r in o[1][1:-1].split(", "):
            m = _REG.match(r)
            aw += int(m.group(4)) - int(m.group(3)) + 1 if m.group(3) else 1
    else:
        m = _REG.match(o[1])
        aw = int(m.group(4)) - int(m.group(3)) + 1 if m.group(3) else 1
    return dw, aw


def _nsa_plain(text):
    """An NSA address list of single registers, but for the last (GFX11 packs the rest there)."""
    o = split_operands(text)[1][1]
    if not o.startswith("["):  # GFX12: one address register (or range)
        return True
    regs = o[1:-1].split(", ")
    return all(_REG.match(r).group(3) is None for r in regs[:-1])


def _mimg_widths(target, found, table):
    order = sorted(found)
    dcombos = [(pc, d16, tfe) for pc in range(5) for d16 in (0, 1) for tfe in (0, 1)]
    pr = []
    for op in order:
        b = found[op][0]
        for pc, d16, tfe in dcombos:
            for nsa in _nsa_range():
                for dim in MIMG_DIMS:
                    for a16 in (0, 1):
                        pr.append(_mimg_probe(op, b, pc, d16, tfe, nsa, dim, a16))
    res = iter(llvm_disassemble(pr, target))
    valid_at = {}
    for op in order:
        e = table[str(op)]
        cols = []
        for dc in dcombos:
            col = []
            for nsa in _nsa_range():
                row = []
                for dim in MIMG_DIMS:
                    for a16 in (0, 1):
                        t, size = next(res)
                        if t is None:
                            row.append(-1)
                            continue
                        assert size == 4 * (3 if _is12() else 2 + nsa), (op, dc, nsa, t, size)
                        dw, aw = _widths(t)
                        if (nsa or _is12()) and not _nsa_plain(t):
                            e["nsa_nd"] = 1  # BVH: several multi-register addresses
                        row.append(dw * 32 + aw)
                        valid_at.setdefault((op, nsa, a16), (dc, dim))
                col.append(row)
            cols.append(col)
        classes = []
        e["dk"] = []
        for col in cols:
            if col not in classes:
                classes.append(col)
            e["dk"].append(classes.index(col))
        e["grid"] = classes
    # decoded widths: the smallest room below v256 for vdata (and, non-NSA, vaddr) LLVM accepts
    pr, keys = [], []
    for op in order:
        b = found[op][0]
        for nsa in _nsa_range():
            for a16 in (0, 1):
                at = valid_at.get((op, nsa, a16))
                if at is None:
                    continue
                (pc, d16, tfe), dim = at
                for a in range(1, 6):
                    keys.append((op, nsa, a16, "d", a))
                    pr.append(
                        _mimg_probe(
                            op,
                            b,
                            pc,
                            d16,
                            tfe,
                            nsa,
                            dim,
                            a16,
                            vdata=256 - a,
                            vaddr=240 if nsa == 0 and not _is12() else 40,
                        )
                    )
                for c in range(1, 17) if nsa == 0 and not _is12() else ():
                    keys.append((op, nsa, a16, "a", c))
                    pr.append(_mimg_probe(op, b, pc, d16, tfe, nsa, dim, a16, vdata=251, vaddr=256 - c))
    dec = {}
    for k, (t, _) in zip(keys, llvm_disassemble(pr, target)):
        op, nsa, a16, kind, n = k
        d = dec.setdefault(op, {}).setdefault(f"{nsa},{a16}", [None, None])
        i = 0 if kind == "d" else 1
        if t is not None and d[i] is None:
            d[i] = n
    # NSA: the decoded address count shows when the data resize is refused (vdata too high)
    pr, keys = [], []
    for op in order:
        b = found[op][0]
        e = table[str(op)]
        for k, d in dec.get(op, {}).items():
            nsa, a16 = map(int, k.split(","))
            for dc in ((4, 0, 1), (4, 0, 0)):
                col = e["grid"][e["dk"][dcombos.index(dc)]][nsa]
                dims = [dim for dim in MIMG_DIMS if col[dim * 2 + a16] >= 0]
                if dims:
                    keys.append((op, k))
                    pr.append(
                        _mimg_probe(
                            op,
                            b,
                            *dc,
                            nsa,
                            dims[0],
                            a16,
                            vdata=256 - d[0],
                            vaddr=256 - d[1] if nsa == 0 and not _is12() else 40,
                        )
                    )
                    break
    for (op, k), (t, _) in zip(keys, llvm_disassemble(pr, target)):
        d = dec[op][k]
        assert t is not None, (target, op, k, d)
        dw, aw = _widths(t)
        assert dw == d[0], (target, op, k, t, d)
        if k.startswith("0,") and not _is12():
            assert aw == d[1], (target, op, k, t, d)
        d[1] = aw
    for op in order:
        e = table[str(op)]
        e["dec"] = dec.get(op, {})
        for k, (dw, aw) in e["dec"].items():
            assert dw is not None and aw is not None, (target, op, k, dw, aw)
        nsa_texts = [
            t
            for t, _ in llvm_disassemble(
                [
                    _mimg_probe(op, found[op][0], *valid_at[(op, n, a)][0], n, valid_at[(op, n, a)][1], a)
                    for n in (1, 2, 3)
                    for a in (0, 1)
                    if (op, n, a) in valid_at
                ],
                target,
            )
        ]
        for tt in nsa_texts[:1]:
            e["nsa_sep"] = " " + " " * (len(tt) - len(tt.replace("  ", " ", 1)))


def gen_flat11(target):
    """GFX11 FLAT/GLOBAL/SCRATCH: per (seg, op) and mode (glc: atomics return; saddr off (null,
    0x7C) or s10; sve: scratch with a VGPR address) the template; then the saddr names and the
    offset's width and sign per segment, checked over every offset value."""
    fields = {"offset": 4, "addr": 40, "data": 72, "vdst": 8, "slc": 1, "dlc": 1}
    ops = [{"op": op, "seg": seg} for seg in range(4) for op in range(128)]
    modes = [{"glc": g, "saddr": s, "sve": v} for g in (0, 1) for s in (0x7C, 10) for v in (0, 1)]
    table = {}
    sg = {"saddr": (10, 10)}
    for opf, mode, e in probe_modes("FLAT", target, ops, modes, fields, sgpr_tags=sg):
        table[key(opf["seg"], opf["op"], mode["glc"], int(mode["saddr"] == 0x7C), mode["sve"])] = e
    return table


def gen_flat11_names(target, table, enc="FLAT"):
    """saddr names per (segment, load/store), and per segment the offset field's printing: [bits,
    signed] found from the top bit and checked against every value of the field (GFX12's 24-bit
    field: every 997th value and the edges).  ``enc``: FLAT (GFX11) or VFLAT (GFX12, the same
    key order with th bit 0 for glc)."""
    names = {}
    mode = {0: ",0,1,0", 1: ",0,0,1", 2: ",0,0,0"}  # glc 0; saddr off for FLAT; sve for SCRATCH

    def entries(seg):
        return sorted(
            (int(k.split(",")[1]), e)
            for k, e in table.items()
            if k.startswith(f"{seg},") and k.endswith(mode[seg])
        )

    for seg, sname in ((1, "scratch"), (2, "global")):
        for kind in ("", "_store"):
            ent = [
                (op, e)
                for op, e in entries(seg)
                if ["saddr", 1 if seg == 1 else 2] in e["tpl"]
                and any(t[0] == "vdst" for t in e["tpl"] if isinstance(t, list)) == (kind == "")
            ]
            op, e = ent[0]
            pos = e["tpl"].index(["saddr", 1 if seg == 1 else 2])
            pr = [
                build(enc, op=op, seg=seg, sve=int(seg == 1), addr=40, data=72, vdst=8, saddr=v)
                for v in range(128)
            ]
            names[f"saddr_{sname}{kind}"] = [
                None if t is None else split_operands(t)[1][pos] for t, _ in llvm_disassemble(pr, target)
            ]
    offs = []
    bits = _ACTIVE[0][0][enc]["offset"][2]
    vals = range(1 << bits) if bits <= 13 else sorted(set(range(0, 1 << bits, 997)) | {(1 << bits) - 1})
    vals = sorted(set(vals) | {(1 << (bits - 1)) - 1, 1 << (bits - 1)})
    for seg in range(3):
        op = entries(seg)[0][0]
        sa = 0x7C if seg == 0 else 10
        pr = [
            build(enc, op=op, seg=seg, sve=int(seg == 1), addr=40, data=72, vdst=8, saddr=sa, offset=v)
            for v in vals
        ]
        got = []
        for t, _ in llvm_disassemble(pr, target):
            m = re.search(r" offset:(-?\d+)", t or "")
            got.append(None if t is None else int(m.group(1)) if m else 0)
        top = got[vals.index(1 << (bits - 1))]
        signed = top is not None and top < 0
        want = [v - (1 << bits) if signed and v >> (bits - 1) else v for v in vals]
        assert got == want, (target, seg, [(v, g, w) for v, g, w in zip(vals, got, want) if g != w][:5])
        offs.append([bits, int(signed)])
    names["flat_offset"] = offs
    return names


def gen_mubuf11(target):
    fields = {"offset": 4, "vaddr": 40, "vdata": 8, "srsrc": 2, "soffset": 5, "slc": 1, "dlc": 1}
    ops = [{"op": op} for op in range(256)]
    modes = [
        {"offen": a, "idxen": b, "lds": c, "glc": d, "tfe": e}
        for a in (0, 1)
        for b in (0, 1)
        for c in (0, 1)
        for d in (0, 1)
        for e in (0, 1)
    ]
    table = {}
    for opf, mode, e in probe_modes("MUBUF", target, ops, modes, fields, sgpr_tags=BUF_SGPR):
        table[key(opf["op"], mode["offen"], mode["idxen"], mode["lds"], mode["glc"], mode["tfe"])] = e
    return table


def gen_mtbuf11(target):
    fields = {"offset": 4, "vaddr": 40, "vdata": 8, "srsrc": 2, "soffset": 5, "slc": 1, "dlc": 1, "glc": 1}
    ops = [{"op": op} for op in range(16)]
    modes = [{"offen": a, "idxen": b, "tfe": e} for a in (0, 1) for b in (0, 1) for e in (0, 1)]
    table = {}
    for opf, mode, e in probe_modes("MTBUF", target, ops, modes, dict(fields, format=22), sgpr_tags=BUF_SGPR):
        table[key(opf["op"], mode["offen"], mode["idxen"], mode["tfe"])] = e
    return table


def gen_buf11_names(target, mubuf, mtbuf):
    """soffset and srsrc names (from the first MUBUF load that prints both) and the MTBUF format
    names, per field value (None: LLVM rejects the word)."""
    names = {}
    op = min(
        int(k.split(",")[0])
        for k, e in mubuf.items()
        if k.endswith(",0,0,0,0,0") and e["tpl"][:1] == [["vdata", 1]] and ["soffset", 1] in e["tpl"]
    )
    e = mubuf[f"{op},0,0,0,0,0"]
    i_rs, i_so = e["tpl"].index(["srsrc", 4]), e["tpl"].index(["soffset", 1])
    pr = [build("MUBUF", op=op, vdata=8, srsrc=2, soffset=v) for v in range(256)]
    names["soffset"] = [
        None if t is None else split_operands(t)[1][i_so] for t, _ in llvm_disassemble(pr, target)
    ]
    pr = [build("MUBUF", op=op, vdata=8, srsrc=v, soffset=0x80) for v in range(32)]
    names["srsrc"] = [
        None if t is None else split_operands(t)[1][i_rs] for t, _ in llvm_disassemble(pr, target)
    ]
    op = min(int(k.split(",")[0]) for k in mtbuf if k.endswith(",0,0,0"))
    pr = [build("MTBUF", op=op, format=v, vdata=8, srsrc=2, soffset=0x80) for v in range(128)]
    fm = []
    for t, _ in llvm_disassemble(pr, target):
        m = re.search(r" (format:\S+)", t or "")
        fm.append(None if t is None else (m.group(1) if m else ""))
    names["format"] = fm
    return names


_CPOL = re.compile(r" ?\b(th|scope):\S+")


def cpol12(enc, target, table, build_key):
    """GFX12 cache policy: per entry the printed ``th:``/``scope:`` text for each (th, scope) whose
    th bit 0 is the entry's (bit 0 is a mode bit: an atomic's return), None where LLVM rejects
    it; the lists are shared through names["cpol"] and each entry's "cpol" index.  The entry's
    mods lose their th/scope words (the decoder appends the cpol text last)."""
    keys = sorted(table)
    pr = []
    for k in keys:
        base = build_key(k)
        for th in range(8):
            for sc in range(4):
                pr.append(build(enc, **dict(base, th=th, scope=sc)))
    res = llvm_disassemble(pr, target)
    lists = []
    for i, k in enumerate(keys):
        e = table[k]
        th0 = build_key(k)["th"] & 1
        col = []
        for j, (t, _) in enumerate(res[i * 32 : (i + 1) * 32]):
            if (j >> 2) & 1 != th0 or t is None:
                col.append(None)
                continue
            m = [x.group(0).strip() for x in _CPOL.finditer(t)]
            col.append(" " + " ".join(m) if m else "")
        if col not in lists:
            lists.append(col)
        e["cpol"] = lists.index(col)
        # the modifier words LLVM prints after th/scope (tfe), from the probe with scope 3
        t3 = res[i * 32 + th0 * 4 + 3][0]
        if t3 is not None:
            words = split_operands(t3)[2].split()
            last = max(j for j, w in enumerate(words) if _CPOL.match(" " + w))
            if words[last + 1 :]:
                e["after_cpol"] = words[last + 1 :]
        e["mods"] = _CPOL.sub("", e["mods"]).strip()
    return lists


def gen_vflat12(target):
    """GFX12 VFLAT/VGLOBAL/VSCRATCH: per (seg, op) and mode (th bit 0: an atomic returns; saddr
    off (null) or s10; sve) the template and zero fields; cache policy texts by cpol12."""
    fields = {"offset": 4, "addr": 40, "data": 72, "vdst": 8, "rsv0": 1, "rsv1": 1, "rsv2": 1, "rsv3": 1}
    ops = [{"op": op, "seg": seg} for seg in range(4) for op in range(256)]
    modes = [{"th": t, "saddr": s, "sve": v} for t in (0, 1) for s in (0x7C, 10) for v in (0, 1)]
    table = {}
    for opf, mode, e in probe_modes(
        "VFLAT", target, ops, modes, fields, sgpr_tags={"saddr": (10, 10)}, wave64_too=True
    ):
        table[key(opf["seg"], opf["op"], mode["th"], int(mode["saddr"] == 0x7C), mode["sve"])] = e

    def build_key(k):
        seg, op, th, off, sve = map(int, k.split(","))
        return {
            "seg": seg,
            "op": op,
            "th": th,
            "saddr": 0x7C if off else 10,
            "sve": sve,
            "addr": 40,
            "data": 72,
        }

    return table, cpol12("VFLAT", target, table, build_key)


def gen_vbuffer12(target):
    """GFX12 VBUFFER (buffer_* and tbuffer_*): per op and mode (offen, idxen, tfe, th bit 0) the
    template and zero fields; cache policy texts by cpol12."""
    fields = {"offset": 4, "vaddr": 40, "vdata": 8, "srsrc": 8, "soffset": 5, "format": 22}
    fields.update({f"rsv{i}": 1 for i in range(4)})
    ops = [{"op": op} for op in range(256)]
    modes = [
        {"offen": a, "idxen": b, "tfe": c, "th": d}
        for a in (0, 1)
        for b in (0, 1)
        for c in (0, 1)
        for d in (0, 1)
    ]
    table = {}
    tags = {"srsrc": (8, 8), "soffset": (5, 5)}
    for opf, mode, e in probe_modes("VBUFFER", target, ops, modes, fields, sgpr_tags=tags, wave64_too=True):
        table[key(opf["op"], mode["offen"], mode["idxen"], mode["tfe"], mode["th"])] = e

    def build_key(k):
        op, offen, idxen, tfe, th = map(int, k.split(","))
        return {
            "op": op,
            "offen": offen,
            "idxen": idxen,
            "tfe": tfe,
            "th": th,
            "vaddr": 40,
            "vdata": 8,
            "srsrc": 8,
        }

    return table, cpol12("VBUFFER", target, table, build_key)


def gen_vbuffer12_names(target, table):
    """soffset and srsrc names of a buffer load, the format names of a tbuffer load."""
    names = {}
    ent = sorted(
        (int(k.split(",")[0]), e)
        for k, e in table.items()
        if k.endswith(",0,0,0,0") and e["tpl"][:1] == [["vdata", 1]] and ["soffset", 1] in e["tpl"]
    )
    op, e = next((op, e) for op, e in ent if "format:" not in e["mods"])
    i_rs, i_so = e["tpl"].index(["srsrc", 4]), e["tpl"].index(["soffset", 1])
    pr = [build("VBUFFER", op=op, vdata=8, srsrc=8, soffset=v) for v in range(128)]
    names["soffset"] = [
        None if t is None else split_operands(t)[1][i_so] for t, _ in llvm_disassemble(pr, target)
    ]
    pr = [build("VBUFFER", op=op, vdata=8, srsrc=v, soffset=0x7C) for v in range(128)]
    names["srsrc"] = [
        None if t is None else split_operands(t)[1][i_rs] for t, _ in llvm_disassemble(pr, target)
    ]
    op = next(op for op, e in ent if "format:" in e["mods"])
    pr = [build("VBUFFER", op=op, format=v, vdata=8, srsrc=8, soffset=0x7C) for v in range(128)]
    fm = []
    for t, _ in llvm_disassemble(pr, target):
        m = re.search(r" (format:\S+)", t or "")
        fm.append(None if t is None else (m.group(1) if m else ""))
    names["format"] = fm
    # the offset's width and sign: every 997th value and the edges
    bits = VBUFFER12["offset"][2]
    vals = sorted(set(range(0, 1 << bits, 997)) | {(1 << bits) - 1, (1 << (bits - 1)) - 1, 1 << (bits - 1)})
    op = ent[0][0]
    pr = [build("VBUFFER", op=op, vdata=8, srsrc=8, soffset=0x7C, offset=v) for v in vals]
    got = []
    for t, _ in llvm_disassemble(pr, target):
        m = re.search(r" offset:(-?\d+)", t or "")
        got.append(None if t is None else int(m.group(1)) if m else 0)
    top = got[vals.index(1 << (bits - 1))]
    signed = top is not None and top < 0
    want = [v - (1 << bits) if signed and v >> (bits - 1) else v for v in vals]
    assert got == want, (target, [(v, g, w) for v, g, w in zip(vals, got, want) if g != w][:5])
    names["buf_offset"] = [bits, int(signed)]
    return names


def gen_mimg11_names(target, table):
    """GFX11 MIMG srsrc (8 SGPRs) and ssamp names per field value, from the first sampler."""
    op = min(int(k) for k, e in table.items() if e["sampler"] and e["dim_printed"])
    b = table[str(op)]["base"]
    names = {}
    for fld, i in (("srsrc", 2), ("ssamp", 3)):
        pr = [
            build("MIMG", **_opf(op), **dict(b, vdata=8, vaddr=40, srsrc=2, ssamp=3) | {fld: v})
            for v in range(32)
        ]
        names[fld + "_mimg" if fld == "srsrc" else fld] = [
            None if t is None else split_operands(t)[1][i] for t, _ in llvm_disassemble(pr, target)
        ]
    return names


def gen_exp11(target):
    """GFX11/GFX12 EXP: the mnemonic, per bit of the first dword outside en/target what LLVM does
    with it alone (prints a flag word after the sources: ``flags``; rejects it: ``zero``; ignores
    it), the target names (64 values), and a check that source i prints as ``off`` exactly when
    en bit i is clear (every en value)."""
    base = dict(en=15, target=0, vsrc0=1, vsrc1=2, vsrc2=3, vsrc3=4)
    t0 = llvm_disassemble([build("EXP", **base)], target)[0][0]
    name = t0.split(" ")[0]
    lay = _ACTIVE[0][0]["EXP"]
    named = {b for f in ("en", "target") for b in range(lay[f][1], lay[f][1] + lay[f][2])}
    bits = [b for b in range(26) if b not in named]
    w0 = build("EXP", **base)
    res = llvm_disassemble([(w0[0] | 1 << b, w0[1]) for b in bits], target)
    flags, zero = [], 0
    for b, (t, size) in zip(bits, res):
        if t is None:
            zero |= 1 << b
        elif t != t0:
            assert t.startswith(t0) and re.fullmatch(r" [a-z_]+", t[len(t0) :]), (target, b, t)
            assert size == 8
            flags.append([b, t[len(t0) :]])
    pr = [build("EXP", **dict(base, en=en)) for en in range(16)]
    for en, (t, _) in zip(range(16), llvm_disassemble(pr, target)):
        want = ", ".join(f"v{i + 1}" if en >> i & 1 else "off" for i in range(4))
        assert t == f"{name} {t0.split(' ')[1]} {want}", (target, en, t)
    pr = [build("EXP", **dict(base, target=v)) for v in range(64)]
    names = [None if t is None else t.split(" ")[1] for t, _ in llvm_disassemble(pr, target)]
    return {"name": name, "flags": flags, "zero": zero, "target_names": names}


GEN_ENCODINGS = {
    "gfx11": {
        "DS": gen_ds,
        "FLAT": gen_flat11,
        "MUBUF": gen_mubuf11,
        "MTBUF": gen_mtbuf11,
        "MIMG": gen_mimg,
        "EXP": gen_exp11,
    },
    "gfx12": {
        "DS": gen_ds,
        "VFLAT": gen_vflat12,
        "VBUFFER": gen_vbuffer12,
        "VIMAGE": lambda t: gen_mimg(t, "VIMAGE"),
        "VSAMPLE": lambda t: gen_mimg(t, "VSAMPLE"),
        "EXP": gen_exp11,
    },
}


def generate(target):
    gen = generation(target)
    _ACTIVE[0] = LAYOUT_GEN[gen]
    if gen != "gfx10":
        lay = _ACTIVE[0][0]
        out = {
            "target": target,
            "llvm_mc": llvm_version(),
            "generated_by": "tools/gen_isa_memory_tables.py",
            "layout": {k: {f: list(v) for f, v in lay[k].items()} for k in GEN_ENCODINGS[gen]},
            "names": {},
        }
        for enc, fn in GEN_ENCODINGS[gen].items():
            out[enc] = fn(target)
            if isinstance(out[enc], tuple):  # (table, cache policy lists)
                out[enc], out["names"][f"cpol_{enc}"] = out[enc]
        if gen == "gfx11":
            out["names"].update(gen_flat11_names(target, out["FLAT"]))
            out["names"].update(gen_buf11_names(target, out["MUBUF"], out["MTBUF"]))
            out["names"].update(gen_mimg11_names(target, out["MIMG"]))
        if gen == "gfx12":
            out["names"].update(gen_flat11_names(target, out["VFLAT"], "VFLAT"))
            out["names"].update(gen_vbuffer12_names(target, out["VBUFFER"]))
            out["names"].update(gen_vimage12_names(target, out["VIMAGE"], out["VSAMPLE"]))
        _MENC[0] = "MIMG"
        return out
    return {
        "target": target,
        "llvm_mc": llvm_version(),
        "generated_by": "tools/gen_isa_memory_tables.py",
        "layout": {k: {f: list(v) for f, v in lay.items()} for k, lay in LAYOUT.items()},
        "names": gen_names(target),
        "DS": gen_ds(target),
        "MUBUF": gen_mubuf(target),
        "MTBUF": gen_mtbuf(target),
        "FLAT": gen_flat(target),
        "MIMG": gen_mimg(target),
    }


def main(argv):
    import table_json  # tools/, the script's directory (tests import this module for its oracle)

    targets = argv[1:] or list(TARGETS)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    for t in targets:
        data = generate(t)
        path = OUT_DIR / f"memory_{t}.json"
        table_json.write(
            path,
            data,
            "tools/gen_isa_memory_tables.py",
            f"python3 tools/gen_isa_memory_tables.py {t}",
            sort_keys=True,
        )
        counts = {
            e: len(
                {",".join(k.split(",")[:2]) if e in ("FLAT", "VFLAT") else k.split(",")[0] for k in data[e]}
            )
            for e in ("DS", "MUBUF", "MTBUF", "FLAT", "MIMG", "VFLAT", "VBUFFER")
            if e in data
        }
        print(f"{path.relative_to(ROOT)}: {counts}")


if __name__ == "__main__":
    main(sys.argv)
