#!/usr/bin/env python3
"""Generate wavelift/isa/tables/dpp_<target>.json: which VOP1/VOP2/VOPC opcodes LLVM 19 decodes
as DPP16 (src0 = 0xFA), DPP8 (0xE9, 0xEA = DPP8 with FI) and SDWA (0xF9), and how it prints them.

    python3 tools/gen_isa_dpp_tables.py            # gfx1030 and gfx1010, wave32 and wave64
    python3 tools/gen_isa_dpp_tables.py gfx1030    # one target (gfx1100, gfx1150, gfx1200 too)

Nothing opcode-specific is typed in (docs/decisions/0001): every opcode value of VOP1/VOP2/VOPC
is probed with sentinel fields (vdst=20, src0=40, vsrc1=60, VOPC SDWA sdst=12 with sd=1).  The
printed line up to the first control (``quad_perm:``, ``dpp8:``, ``dst_sel:``/``src0_sel:``)
becomes an operand template.  Then each control field of the second dword is probed on its own
(value(s) != the neutral one) and classed per opcode:

* ``bad``: values LLVM rejects (the instruction is invalid),
* ``p``: 1 when the field changes the printed text (printed), 0 when LLVM ignores it.

SDWA sources with S0/S1 (SGPRs and inline constants on GFX10) are probed with inline constants
and registers; the constant type (b32/f16/i16/...) whose printing matches LLVM is recorded with
the codes LLVM rejects.  Names of SDWA selects and dst_unused values are read from LLVM's output.
Opcodes LLVM reads as the plain 4-byte form at the sentinel probe (no src0: v_nop, v_pipeflush,
v_clrexcp) are probed again with src0 byte 0 (Gen.probe_fallback): where LLVM then takes the
8-byte form (v_nop), the bits of the second dword that send it back to the 4-byte form are
recorded as ``fb`` = [mask, value]; the others stay ``plain``.
Select value 7 is never probed: llvm-objdump-19 crashes on it (llvm_unreachable in
AMDGPUInstPrinter::printSDWASel); the decoder rejects it.
"""

from __future__ import annotations

import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import table_json  # tools/, the script's directory

from wavelift.isa import decoder as D  # noqa: E402
from wavelift.isa.encodings import ISAS, classify, encode, generation  # noqa: E402
from wavelift.isa.llvm_oracle import llvm_disasm  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "wavelift", "isa", "tables")
TARGETS = ("gfx1030", "gfx1010", "gfx1100", "gfx1150", "gfx1200")
T16 = re.compile(r"\bv\d+\.[lh]\b")  # a GFX11 true16 half (v5.l): a t16 slot
ENCS = ("VOP1", "VOP2", "VOPC")
MARK = {"dpp": 0xFA, "dpp8": 0xE9, "sdwa": 0xF9}
VDST, SRC0, VSRC1, SDST = 20, 40, 60, 12
DPP_BASE = SRC0 | (0xE4 << 8) | (0xF << 24) | (0xF << 28)  # quad_perm:[0,1,2,3], masks 0xf
DPP8_ID = sum(i << (3 * i) for i in range(8))  # dpp8:[0,1,2,3,4,5,6,7]
DPP8_BASE = SRC0 | (DPP8_ID << 8)
SEL_DWORD = 6
# second-dword fields: name -> (low bit, width)
DPP_FIELDS = {
    "dpp_ctrl": (8, 9),
    "r17": (17, 1),
    "fi": (18, 1),
    "bound_ctrl": (19, 1),
    "src0_neg": (20, 1),
    "src0_abs": (21, 1),
    "src1_neg": (22, 1),
    "src1_abs": (23, 1),
    "bank_mask": (24, 4),
    "row_mask": (28, 4),
}
SDWA_FIELDS = {
    "dst_sel": (8, 3),
    "dst_unused": (11, 2),
    "clamp": (13, 1),
    "omod": (14, 2),
    "src0_sel": (16, 3),
    "src0_sext": (19, 1),
    "src0_neg": (20, 1),
    "src0_abs": (21, 1),
    "r22": (22, 1),
    "s0": (23, 1),
    "src1_sel": (24, 3),
    "src1_sext": (27, 1),
    "src1_neg": (28, 1),
    "src1_abs": (29, 1),
    "r30": (30, 1),
    "s1": (31, 1),
}
SDWAC_FIELDS = dict(SDWA_FIELDS, sdst=(8, 7), sd=(15, 1))
for _k in ("dst_sel", "dst_unused", "clamp", "omod"):
    del SDWAC_FIELDS[_k]
# probed values per field (7 is never used for a select: LLVM 19 crashes)
PROBE_VALS = {
    "dst_sel": (0, 1, 2, 3, 4, 5, 6),
    "src0_sel": (0, 1, 2, 3, 4, 5, 6),
    "src1_sel": (0, 1, 2, 3, 4, 5, 6),
    "dst_unused": (1, 2, 3),
    "omod": (1, 2, 3),
    "sdst": (0, 13, 106, 124, 127),
}
# fields probed in DPP16 (dpp_ctrl/masks/fi/bound_ctrl are opcode-independent; the sweep checks)
DPP_PROBE = ("r17", "src0_neg", "src0_abs", "src1_neg", "src1_abs")
CONST_CODES = [128, 129, 150, 192, 193, 200, 208, 240, 241, 242, 243, 244, 245, 246, 247, 248]
SRC_REG_CODES = [
    0,
    7,
    105,
    106,
    107,
    108,
    123,
    124,
    125,
    126,
    127,
    235,
    239,
    251,
    254,
    209,
    230,
    234,
    249,
    250,
    255,
]
TYPES = ("b32", "f16", "i16", "f64", "b64")
REG = re.compile(r"(?<![\w\[])(v|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])(?![\w\]])")
CTRL = re.compile(r" (quad_perm:|row_|dpp8:|dst_sel:|src0_sel:|src1_sel:|/\*)")


def wbytes(words):
    return struct.pack(f"<{len(words)}I", *words)


def first_word(enc, op, mark, vdst=VDST):
    f = {"op": op, "src0": mark}
    if enc != "VOPC":
        f["vdst"] = vdst
    if enc != "VOP1":
        f["vsrc1"] = VSRC1
    return encode(enc, **f)[0]


def put(word, fields, **vals):
    for k, v in vals.items():
        lo, w = fields[k]
        word = (word & ~(((1 << w) - 1) << lo)) | ((v & ((1 << w) - 1)) << lo)
    return word


def make_template(text, var, enc, wave64):
    """(printed mnemonic, parts) of the operand part of LLVM's line (controls cut off)."""
    m = CTRL.search(text)
    head = text[: m.start()] if m else text
    mn, _, rest = head.partition(" ")
    parts = [" "] if rest else []
    pos = 0
    used = set()
    for mt in REG.finditer(rest):
        pre, one, lo, hi = mt.groups()
        first = int(one if one is not None else lo)
        n = 1 if one is not None else int(hi) - int(lo) + 1
        if pre == "v" and first == VDST and "vdst" not in used and enc != "VOPC":
            p = {"f": "vdst", "k": "v", "n": n}
        elif first == SRC0 and "src0" not in used:
            p = {"f": "src0", "k": "src", "n": n, "i": 0}
        elif first == VSRC1 and "src1" not in used and enc != "VOP1":
            p = {"f": "src1", "k": "src", "n": n, "i": 1}
        elif pre in ("s", "ttmp") and first == SDST and var == "sdwa" and enc == "VOPC":
            p = {"f": "sdst", "k": "sdst", "n": n}
        else:
            continue
        used.add(p["f"])
        parts.append(rest[pos : mt.start()])
        parts.append(p)
        pos = mt.end()
    parts.append(rest[pos:])
    out = []
    for p in parts:
        if p == "":
            continue
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        else:
            out.append(p)
    return mn, out, text[m.start() :] if m else ""


def t16_parts(parts):
    """Template parts with each VGPR slot LLVM printed as a true16 half (``v20.l``) marked
    ``t16`` and its ``.l`` dropped from the text after it; None if a half is not a slot's."""
    out = []
    for p in parts:
        if isinstance(p, str) and p[:2] in (".l", ".h") and out and isinstance(out[-1], dict):
            if p[:2] != ".l" or out[-1].get("n", 1) != 1:
                return None
            out[-1] = dict(out[-1], t16=1)
            p = p[2:]
            if not p:
                continue
        out.append(p)
    return out


class Gen:
    def __init__(self, target, wave64):
        self.target, self.wave64 = target, wave64
        self.notes = []
        self.names = {"sel": {}, "dst_unused": {}}
        self.src_bad = []
        self.sdst_cm = []

    def ask(self, items):
        return llvm_disasm([wbytes(w) for w in items], self.target, self.wave64)

    def base_ext(self, var, enc):
        if var == "dpp":
            return DPP_BASE
        if var == "dpp8":
            return DPP8_BASE
        w = SRC0 | (SEL_DWORD << 16)
        if enc == "VOPC":
            w |= (SDST << 8) | (1 << 15)
        else:
            w |= SEL_DWORD << 8
        if enc != "VOP1":
            w |= SEL_DWORD << 24
        return w

    def fields(self, var, enc):
        if var == "dpp":
            return DPP_FIELDS
        if var == "dpp8":
            return {}
        return SDWAC_FIELDS if enc == "VOPC" else SDWA_FIELDS

    # ------------------------------------------------------------------ opcodes and templates
    def gen(self):
        jobs = []
        for enc in ENCS:
            for op in range(64 if enc == "VOP2" else 256):
                if classify(encode(enc, op=op)[0]) != enc:
                    continue
                for var in MARK:
                    jobs.append((enc, op, var))
        res = self.ask([[first_word(e, o, MARK[v]), self.base_ext(v, e)] for e, o, v in jobs])
        # opcodes LLVM rejects with vdst=20 may need vdst=0 (v_nop); VOPC SDWA may need sd=0
        retry = [(i, j) for i, (j, r) in enumerate(zip(jobs, res)) if r is None]
        alt = []
        for i, (e, o, v) in retry:
            ext = self.base_ext(v, e)
            if v == "sdwa" and e == "VOPC":
                ext = put(ext, SDWAC_FIELDS, sdst=0, sd=0)
            alt.append([first_word(e, o, MARK[v], vdst=0), ext])
        zero = {}
        for (i, j), r in zip(retry, self.ask(alt)):
            if r is not None:
                res[i] = r
                e, o, v = j
                z = []
                if e != "VOPC":
                    z.append("vdst")
                if e == "VOPC" and v == "sdwa":
                    z += ["sd"]
                zero[j] = z
        fb = self.probe_fallback(jobs, res, zero)
        table = {e: {} for e in ENCS}
        for (enc, op, var), r in zip(jobs, res):
            if r is None:
                continue
            text, size = r
            if size == 4 and (enc, op, var) in fb:
                # an opcode without src0 (v_nop): the 8-byte form exists only while the bits
                # LLVM's decoder fixes (src0 byte, the modifier bits it lacks) hold their value
                text, size = fb[(enc, op, var)][1]
            elif size == 4:
                # LLVM ignores src0 of this opcode (v_pipeflush ...): always the plain e32 form
                table[enc].setdefault(str(op), {})[var] = {"plain": 1, "name_p": text}
                continue
            if size != 8:
                self.notes.append(f"{enc} op {op} {var}: size {size}: {text}")
                continue
            mn, parts, ctrl = make_template(text, var, enc, self.wave64)
            if T16.search(text):
                # true16 operands (v5.l/v5.h): a VGPR slot's 8-bit code names the low (bit 7
                # clear) or high half of v(code & 127); anything else is refused by name
                parts = t16_parts(parts)
                if parts is None or T16.search("".join(p for p in parts if isinstance(p, str))):
                    table[enc].setdefault(str(op), {})[var] = {
                        "nd": "GFX11 true16 DPP",
                        "name_p": text.split(" ")[0],
                    }
                    continue
            name = mn
            for suf in ("_dpp", "_sdwa"):
                if name.endswith(suf):
                    name = name[: -len(suf)]
            e = {"name": name, "name_p": mn, "parts": parts}
            z = zero.get((enc, op, var))
            if z:
                e["zero"] = z
            if (enc, op, var) in fb:
                e["fb"] = fb[(enc, op, var)][0]
            if var == "sdwa":
                m1 = re.search(r" src0_sel:(\w+)", ctrl)
                m2 = re.search(r" dst_unused:(\w+)", ctrl)
                if m1:
                    self.names["sel"][str(SEL_DWORD)] = m1.group(1)
                if m2:
                    self.names["dst_unused"]["0"] = m2.group(1)
                e["sels"] = [s for s in ("dst_sel", "dst_unused", "src0_sel", "src1_sel") if f" {s}:" in ctrl]
            table[enc].setdefault(str(op), {})[var] = e
        self.probe_fields(table)
        self.probe_generic(table)
        self.probe_sources(table)
        if not self.target.startswith("gfx10"):
            self.probe_hi(table)
        return table

    def probe_hi(self, table):
        """GFX11+: each VGPR slot with v200: LLVM rejects it (``hi`` = "!": a 16-bit operand
        of a Lo128 class) or prints a comment after it (``hi`` = that text), from v128 on."""
        jobs = []
        for enc, op, var, e in self.entries(table, ("dpp", "dpp8")):
            w0, ext = self.base_words(enc, op, var, e)
            for p in e["parts"]:
                if not isinstance(p, dict) or p.get("n", 1) != 1 or p.get("t16"):
                    continue
                if p["f"] == "vdst":
                    words = [(w0 & ~(0xFF << 17)) | (200 << 17), ext]
                elif p["f"] == "src0":
                    words = [w0, (ext & ~0xFF) | 200]
                elif p["f"] == "src1":
                    words = [(w0 & ~(0xFF << 9)) | (200 << 9), ext]
                else:
                    continue
                jobs.append((p, words))
        for (p, _), r in zip(jobs, self.ask([w for _, w in jobs])):
            if r is None:
                p["hi"] = "!"
                continue
            m = re.search(r"(?<![\w\[])v200(/\*.*?\*/)?", r[0])
            if m and m.group(1):
                p["hi"] = m.group(1)
            elif not m:
                self.notes.append(f"v200 probe: {r[0]!r}")

    def probe_fallback(self, jobs, res, zero):
        """Opcodes LLVM decodes as the plain 4-byte form at the sentinel probe (v_nop, v_pipeflush,
        v_clrexcp: no src0) are asked again with the second dword's src0 byte 0 (then with the
        whole dword 0).  Where LLVM now takes the 8-byte DPP16/DPP8/SDWA form, each bit of the
        second dword is flipped on its own: the bits whose flip sends LLVM back to the 4-byte form
        are fixed bits of that encoding (its decoder table matches them, else falls through to
        the e32 table).  Returns {(enc, op, var): ([mask, value], (text, 8))}."""
        cand = []
        for (enc, op, var), r in zip(jobs, res):
            if r is None or r[1] != 4:
                continue
            w0 = first_word(enc, op, MARK[var], vdst=0 if "vdst" in zero.get((enc, op, var), ()) else VDST)
            for ext in (self.base_ext(var, enc) & ~0xFF, 0):
                cand.append(((enc, op, var), w0, ext))
        got = self.ask([[w0, ext] for _, w0, ext in cand])
        base = {}
        for (key, w0, ext), r in zip(cand, got):
            if key not in base and r is not None and r[1] == 8:
                base[key] = (w0, ext, r)
        flips = [(key, b) for key in base for b in range(32)]
        got = self.ask([[base[k][0], base[k][1] ^ (1 << b)] for k, b in flips])
        mask = {k: 0 for k in base}
        for (key, b), r in zip(flips, got):
            if r is None:
                self.notes.append(f"fallback probe {key} bit {b}: LLVM rejects")
            elif r[1] == 4:
                mask[key] |= 1 << b
            elif r[1] != 8:
                self.notes.append(f"fallback probe {key} bit {b}: size {r[1]}")
        # the fixed bits are one conjunction: all free bits flipped at once keep the 8-byte form
        keys = list(base)
        got = self.ask([[base[k][0], base[k][1] ^ (~mask[k] & 0xFFFFFFFF)] for k in keys])
        for k, r in zip(keys, got):
            if r is None or r[1] != 8:
                self.notes.append(f"fallback probe {k}: free bits together give {r}")
        return {k: ([mask[k], base[k][1] & mask[k]], base[k][2]) for k in base}

    def entries(self, table, variants=("dpp", "dpp8", "sdwa")):
        for enc in ENCS:
            for op, byvar in table[enc].items():
                for var, e in byvar.items():
                    if var in variants and not e.get("plain") and not e.get("nd"):
                        yield enc, int(op), var, e

    def base_words(self, enc, op, var, e):
        w0 = first_word(enc, op, MARK[var], vdst=0 if "vdst" in e.get("zero", ()) else VDST)
        ext = self.base_ext(var, enc)
        if var == "sdwa" and enc == "VOPC" and "sd" in e.get("zero", ()):
            ext = put(ext, SDWAC_FIELDS, sdst=0, sd=0)
        if "fb" in e:
            ext = (ext & ~e["fb"][0]) | e["fb"][1]
        return w0, ext

    # ------------------------------------------------------------------ control fields
    def probe_fields(self, table):
        jobs = []
        for enc, op, var, e in self.entries(table, ("dpp", "sdwa")):
            w0, ext = self.base_words(enc, op, var, e)
            flds = self.fields(var, enc)
            names = DPP_PROBE if var == "dpp" else tuple(f for f in flds if f != "sdst")
            e["f"] = {}
            for fn in names:
                lo, w = flds[fn]
                if "fb" in e and (e["fb"][0] >> lo) & ((1 << w) - 1):
                    continue  # a fixed bit of this opcode: LLVM falls back to e32 form
                base_v = (ext >> lo) & ((1 << w) - 1)
                vals = [v for v in PROBE_VALS.get(fn, (1,)) if v != base_v]
                if w == 1:
                    vals = [1 - base_v]
                for v in vals:
                    jobs.append((enc, op, var, e, fn, v, [w0, ext], [w0, put(ext, flds, **{fn: v})]))
        res = self.ask([j[6] for j in jobs] + [j[7] for j in jobs])
        base, res = res[: len(jobs)], res[len(jobs) :]
        for (enc, op, var, e, fn, v, _, _words), r0, r in zip(jobs, base, res):
            spec = e["f"].setdefault(fn, {"bad": [], "p": 0})
            if r is None:
                spec["bad"].append(v)
                continue
            self.learn_names(fn, v, r[0])
            if r0 is not None and r[0] != r0[0]:
                spec["p"] = 1
                m = re.match(r"(src[01])_(neg|abs|sext)$", fn)
                if m:
                    # how LLVM spells this bit on the operand (an int operand's neg bit is sext)
                    reg = f"v{SRC0 if m.group(1) == 'src0' else VSRC1}"
                    for mode, tok in (("sext", "sext({})"), ("abs", "|{}|"), ("neg", "-{}")):
                        # (a true16 slot prints its low half: v40.l)
                        if any(
                            tok.format(g) in r[0] and tok.format(g) not in r0[0] for g in (reg, reg + ".l")
                        ):
                            spec["m"] = mode
                            break
                    else:
                        self.notes.append(f"{e['name_p']} {fn}: printed as {r[0]!r}")
                        # LLVM 19 misprints it (gfx12 v_cndmask_b32_dpp: |v60, vcc_lo|): refused
                        e["nd"] = f"{e['name_p']} (LLVM 19 misprints {fn})"
        for enc, op, var, e in self.entries(table, ("dpp", "sdwa")):
            for fn in list(e["f"]):
                if not e["f"][fn]["bad"]:
                    del e["f"][fn]["bad"]

    def learn_names(self, fn, v, text):
        if fn in ("dst_sel", "src0_sel", "src1_sel"):
            m = re.search(rf" {fn}:(\w+)", text)
            if m:
                self.names["sel"][str(v)] = m.group(1)
        elif fn == "dst_unused":
            m = re.search(r" dst_unused:(\w+)", text)
            if m:
                self.names["dst_unused"][str(v)] = m.group(1)

    # ------------------------------------------------------------------ generic register rules
    def probe_generic(self, table):
        """Codes LLVM rejects for an SDWA S0 source, and the *code map* of a VOPC SDWA sdst
        (SD=1): for each of its 128 codes the register text LLVM prints (it aligns an odd 64-bit
        SGPR pair down, e.g. code 51 in wave64 prints ``s[50:51]``) or None where it rejects the
        instruction.  Probed on the first opcode that has them, all values; per-opcode probes in
        probe_sources refine the source rejects."""
        src_job = sdst_job = None
        for enc, op, var, e in self.entries(table, ("sdwa",)):
            if (
                src_job is None
                and any(isinstance(p, dict) and p["f"] == "src0" for p in e["parts"])
                and not e["f"].get("s0", {}).get("bad")
            ):
                w0, ext = self.base_words(enc, op, var, e)
                src_job = [[w0, (put(ext, SDWA_FIELDS, s0=1) & ~0xFF) | c] for c in range(256)]
            if (
                sdst_job is None
                and any(isinstance(p, dict) and p["k"] == "sdst" for p in e["parts"])
                and "sd" not in e.get("zero", ())
            ):
                w0, ext = self.base_words(enc, op, var, e)
                sdst_job = [[w0, put(ext, SDWAC_FIELDS, sdst=c, sd=1)] for c in range(128)]
        res = self.ask((src_job or []) + (sdst_job or []))
        n = len(src_job or [])
        self.src_bad = [c for c, r in enumerate(res[:n]) if r is None]
        self.sdst_cm = [None if r is None else r[0].split(" ", 1)[1].split(",", 1)[0] for r in res[n:]]

    # ------------------------------------------------------------------ SDWA S0/S1 sources
    def probe_sources(self, table):
        jobs = []
        for enc, op, var, e in self.entries(table, ("sdwa",)):
            w0, ext = self.base_words(enc, op, var, e)
            for p in e["parts"]:
                if not isinstance(p, dict) or p["k"] != "src":
                    continue
                sbit = "s0" if p["f"] == "src0" else "s1"
                if 1 in e["f"].get(sbit, {}).get("bad", []):
                    continue
                for c in CONST_CODES + SRC_REG_CODES:
                    if p["f"] == "src0":
                        words = [w0, (put(ext, SDWA_FIELDS, s0=1) & ~0xFF) | c]
                    else:
                        words = [(w0 & ~(0xFF << 9)) | (c << 9), put(ext, SDWA_FIELDS, s1=1)]
                    jobs.append((enc, e, p, c, words))
        res = self.ask([j[4] for j in jobs])
        by = {}
        for (enc, e, p, c, words), r in zip(jobs, res):
            by.setdefault((id(e), p["f"]), (enc, e, p, []))[3].append((words, r))
        for enc, e, p, obs in by.values():
            best = None
            for t in TYPES + tuple(x + "!" for x in TYPES):
                p["t"] = t
                bad = 0
                ex = None
                for words, r in obs:
                    if r is None:
                        continue
                    got = self.render(enc, e, words)
                    if got != r[0]:
                        bad += 1
                        ex = (got, r[0])
                if best is None or bad < best[1]:
                    best = (t, bad, ex)
                if bad == 0:
                    break
            p["t"] = best[0]
            if best[1]:
                self.notes.append(
                    f"{e['name_p']} {p['f']}: best type {best[0]} misses {best[1]} probes, e.g. {best[2]}"
                )
            sh = 0 if p["f"] == "src0" else 9
            w = 1 if p["f"] == "src0" else 0
            badc = sorted({(words[w] >> sh) & 0xFF for words, r in obs if r is None} - set(self.src_bad))
            if badc:
                p["bad"] = badc

    def render(self, enc, e, words, size=False):
        """Our text for ``words`` using the (partial) entry ``e``: the generator's self-check.
        With ``size``: (text, size), the 4-byte e32 form where ``e`` falls back to it."""
        from wavelift.isa import dpp_sdwa as X

        code = wbytes(words)
        f0 = D._fields(enc, words[0])
        X.load_dpp_table.cache_clear()
        cm = tuple(self.sdst_cm) or ()  # GFX11+: no SDWA
        tab = {
            "names": {},
            "sel": {int(k): v for k, v in self.names["sel"].items()},
            "dst_unused": {int(k): v for k, v in self.names["dst_unused"].items()},
            "w32": {enc: {f0["op"]: {X.MARKERS[f0["src0"]]: e}}},
            "w64": {enc: {f0["op"]: {X.MARKERS[f0["src0"]]: e}}},
            "w32_sdst_cm": cm,
            "w64_sdst_cm": cm,
            "w32_src_bad": frozenset(self.src_bad),
            "w64_src_bad": frozenset(self.src_bad),
        }
        orig = X.load_dpp_table
        X.load_dpp_table = lambda target: tab
        try:
            ins = X.decode_ext(code, 0, enc, f0, self.target, self.wave64)
            if ins is None:  # LLVM's fall-back to the e32 form (entries with "fb")
                ext = X.decode_ext
                X.decode_ext = lambda *a, **k: None
                try:
                    ins = D.decode_one(code, 0, self.target, self.wave64)
                finally:
                    X.decode_ext = ext
            return (ins.text, ins.size) if size else ins.text
        except Exception as ex:  # noqa: BLE001 - recorded as a mismatch
            t = f"<{type(ex).__name__}: {ex}>"
            return (t, 0) if size else t
        finally:
            X.load_dpp_table = orig

    def self_check(self, table, n=3):
        """Random control words per entry, ours vs LLVM; mismatches become notes."""
        import random

        rnd = random.Random(1)
        jobs = []
        for enc, op, var, e in self.entries(table):
            w0, ext = self.base_words(enc, op, var, e)
            for _ in range(n):
                w1 = (ext & 0xFF) | (rnd.getrandbits(32) & ~0xFF)
                if var == "sdwa":
                    for fn in ("dst_sel", "src0_sel", "src1_sel"):
                        if fn in SDWA_FIELDS and not (enc == "VOPC" and fn == "dst_sel"):
                            lo, _ = SDWA_FIELDS[fn]
                            if (w1 >> lo) & 7 == 7:
                                w1 &= ~(1 << lo)
                if "fb" in e and rnd.random() < 0.5:
                    w1 = (w1 & ~e["fb"][0]) | e["fb"][1]  # the 8-byte form, not the fall-back
                jobs.append((enc, e, [w0, w1 & 0xFFFFFFFF]))
        res = self.ask([j[2] for j in jobs])
        bad = 0
        for (enc, e, words), r in zip(jobs, res):
            got = self.render(enc, e, words, size=True)
            want = r
            if got[0].startswith("<DecodeError"):
                got = None
            if got != want:
                bad += 1
                if bad <= 20:
                    self.notes.append(f"self-check {wbytes(words).hex()}: ours {got!r} llvm {want!r}")
        return len(jobs), bad


# ----------------------------------------------------------------------------- VOP3 with DPP
# GFX11+: VOP3/VOP3P (VOP3B) opcodes with DPP16 (src0 0xFA) or DPP8 (0xE9; 0xEA = FI) and a third
# dword (src0 VGPR + controls).  LLVM prints the e64 line with that VGPR as src0 under the
# mnemonic of the _dpp form, then the controls (decoder.render_vop3_dpp).  Per opcode and form
# this records the printed mnemonic and checks that view against LLVM on the sentinel word, on
# every bit of the first two dwords flipped alone (op and major bits aside), on sampled src1/src2
# codes and on every bit of the control dword (DPP16) or random lane selects (DPP8): bits LLVM
# rejects go to ``rej`` (dwords 0-1) / ``rej2`` (control dword), bits it prints in another way to
# ``unk``/``unk2`` (the decoder refuses those words by name), and a form whose sentinel line does
# not fit the view gets ``nd`` (refused by name).
DPP3_ENCS = ("VOP3", "VOP3P")
LITMARK = 0xDEADBEEF
DPP3_MARKS = {0xFA: "dpp", 0xE9: "dpp8"}
# sentinel fields tried in order until LLVM takes the word (vdst 20, src1 v60, src2 v80, sdst 12)
DPP3_VARIANTS = ({}, {"src2": 0}, {"src1": 0, "src2": 0}, {"src1": 256, "src2": 256}, {"vdst": 0})
DPP3_CODES = (0, 1, 7, 105, 106, 107, 108, 124, 125, 126, 127, 128, 129, 193, 240, 242, 248)
DPP3_CODES += (235, 236, 239, 250, 233, 251, 253, 254, 255, 256, 257, 300, 383, 384, 385, 511)


def gen_vop3_dpp(target, wave64):
    """{enc: {op: {"dpp": entry, "dpp8": entry}}} and notes (see the comment above)."""
    isa = ISAS[generation(target)]
    tab = D.load_table(target, wave64)
    cms = tab["_cm"]
    notes = []

    def ask(items):
        return llvm_disasm([wbytes(w) for w in items], target, wave64)

    def view(e, lay, d, words):
        val = words[0] | words[1] << 32
        with_lit = D.vop3_dpp_needs_literal(e, val, words[2])
        try:
            lit = words[3] if with_lit else None
            t, _ = D.render_vop3_dpp(e, lay, d, val, words[2], lit, target, wave64)
        except D.BadEncoding:
            return None
        return t, 16 if with_lit else 12

    out = {}
    for enc in DPP3_ENCS:
        jobs = []
        bases = {}
        for op, e in sorted(tab[enc].items()):
            lay = e.get("enc") or enc
            D._prep(e, lay, cms, isa.name)
            f = {"op": op, "vdst": VDST, "src1": 256 + VSRC1, "src2": 256 + 80}
            if lay == "VOP3B":
                f["sdst"] = SDST
            if enc == "VOP3P":
                f.update(opsel_hi=3, opsel_hi2=1)
            f = {k: v for k, v in f.items() if k in {n for n, _, _ in isa.layouts[lay]}}
            for mark in DPP3_MARKS:
                for vk, var in enumerate(DPP3_VARIANTS):
                    ws = isa.encode(lay, **dict(f, src0=mark, **{k: v for k, v in var.items() if k in f}))
                    val = (ws[0] | ws[1] << 32) & ~e["_rej"] | (mark << 32)
                    w2 = SRC0 | ((0xE4 << 8) | (0xF << 24) | (0xF << 28) if mark == 0xFA else DPP8_ID << 8)
                    jobs.append((op, mark, vk, (lay, [val & 0xFFFFFFFF, val >> 32, w2, LITMARK])))
        res = ask([j[3][1] for j in jobs])
        found = {}
        for (op, mark, vk, lw), r in zip(jobs, res):
            if r is not None and (op, mark) not in found:
                found[(op, mark)] = (lw, r)
        ents = {}
        for (op, mark), ((lay, words), r) in sorted(found.items()):
            bases[(op, mark)] = (lay, words)
            e = tab[enc][op]
            name_p = r[0].split(" ")[0]
            d = {"name_p": name_p}
            if view(e, tab[enc][op].get("enc") or enc, d, words) != r:
                d["nd"] = f"{isa.name.upper()} {enc} {DPP3_MARKS[mark]} of {e['name']}: LLVM prints {r[0]!r}"
                notes.append(f"{enc} op {op} {DPP3_MARKS[mark]}: not the e64 view: {r[0]!r}")
            ents[(op, mark)] = d
        # every bit of dwords 0-1 (not op/major/src0), sampled src1/src2 codes, the control dword
        jobs = []
        for (op, mark), d in ents.items():
            if "nd" in d:
                continue
            lay, words = bases[(op, mark)]
            val = words[0] | words[1] << 32
            fixed = isa.fixed[lay]
            keep = (((1 << (32 - fixed[1])) - 1) << fixed[1]) | (0x1FF << 32)
            olo, ow = next((lo, w) for n, lo, w in isa.layouts[lay] if n == "op")
            keep |= ((1 << ow) - 1) << olo
            for b in range(64):
                if not (keep >> b) & 1:
                    v = val ^ (1 << b)
                    jobs.append((op, mark, "b", b, [v & 0xFFFFFFFF, v >> 32, words[2], LITMARK]))
            for fld in ("src1", "src2"):
                lo = {"src1": 41, "src2": 50}[fld]
                if fld not in {n for n, _, _ in isa.layouts[lay]}:
                    continue
                for c in DPP3_CODES:
                    v = (val & ~(0x1FF << lo)) | (c << lo)
                    jobs.append((op, mark, fld, c, [v & 0xFFFFFFFF, v >> 32, words[2], LITMARK]))
            if mark == 0xFA:
                for b in range(8, 32):
                    jobs.append((op, mark, "c", b, words[:2] + [words[2] ^ (1 << b), LITMARK]))
                for c in (
                    0x1B,
                    0x101,
                    0x10F,
                    0x111,
                    0x121,
                    0x130,
                    0x140,
                    0x141,
                    0x142,
                    0x150,
                    0x15F,
                    0x160,
                    0x16F,
                    0x170,
                    0x1FF,
                ):
                    jobs.append(
                        (op, mark, "ctrl", c, words[:2] + [(words[2] & ~(0x1FF << 8)) | c << 8, LITMARK])
                    )
            else:
                for k in range(4):
                    w2 = SRC0 + 7 * k | (((k * 0x9E3779B9) >> 3) & 0xFFFFFF) << 8
                    jobs.append((op, mark, "sel", k, words[:2] + [w2, LITMARK]))
                    jobs.append((op, 0xEA, "fi", k, [words[0], (words[1] & ~0x1FF) | 0xEA, w2, LITMARK]))
        res = ask([j[4] for j in jobs])
        for (op, mark, kind, x, words), r in zip(jobs, res):
            m0 = 0xE9 if mark == 0xEA else mark
            d = ents.get((op, m0))
            lay = bases[(op, m0)][0]
            e = tab[enc][op]
            got = view(e, lay, d, words)
            if got == r:
                continue
            if kind in ("b", "c") and r is None:
                d["rej" if kind == "b" else "rej2"] = d.get("rej" if kind == "b" else "rej2", 0) | 1 << x
                continue
            if kind == "b" and 61 <= x <= 63 and r is not None:  # neg printed as sext(..)?
                d2 = dict(d, sx=sorted(d.get("sx", []) + [[x - 61, x]]))
                if view(e, lay, d2, words) == r:
                    d["sx"] = d2["sx"]
                    d.pop("_e", None)
                    continue
            val = words[0] | words[1] << 32
            base = bases[(op, m0)][1]
            bval = base[0] | base[1] << 32
            vo = [
                f
                for f, lo in (("src1", 41), ("src2", 50))
                if (val >> lo) & 0x1FF != (bval >> lo) & 0x1FF and (val >> lo) & 0x1FF < 256
            ]
            if vo and kind != "c":  # a non-VGPR source LLVM prints with its own class: refused
                d["vonly"] = sorted(set(d.get("vonly", [])) | set(vo))
                continue
            if kind in ("b", "c") and r is None:
                d["rej" if kind == "b" else "rej2"] = d.get("rej" if kind == "b" else "rej2", 0) | 1 << x
                continue
            if kind == "b" and got is None:  # LLVM takes a bit the e64 form rejects
                d["unk"] = d.get("unk", 0) | 1 << x
            elif kind in ("b", "c"):
                d["unk" if kind == "b" else "unk2"] = d.get("unk" if kind == "b" else "unk2", 0) | 1 << x
            else:
                d["nd"] = (
                    f"{isa.name.upper()} {enc} {DPP3_MARKS[m0]} of {e['name']}: {kind} {x} printed otherwise"
                )
            notes.append(f"{enc} op {op} {DPP3_MARKS[m0]} {kind} {x}: ours {got!r}, LLVM {r!r}")
        out[enc] = {}
        for (op, mark), d in sorted(ents.items()):
            d.pop("_e", None)
            out[enc].setdefault(op, {})[DPP3_MARKS[mark]] = d
    return out, notes


def main():
    os.makedirs(OUT, exist_ok=True)
    only = sys.argv[1:] or None
    for target in TARGETS:
        if only and target not in only:
            continue
        out = {"generator": "tools/gen_isa_dpp_tables.py", "llvm": "19", "target": target}
        notes = []
        names = {}
        for wave64 in (False, True):
            g = Gen(target, wave64)
            tab = g.gen()
            key = "w64" if wave64 else "w32"
            if generation(target) != "gfx10":
                t3, n3 = gen_vop3_dpp(target, wave64)
                tab.update(t3)
                g.notes += n3
                print(
                    f"{target} {key}: VOP3 with DPP: "
                    + ", ".join(f"{k} {len(v)} opcodes" for k, v in t3.items())
                )
            out[key] = tab
            out[key + "_src_bad"] = g.src_bad
            out[key + "_sdst_cm"] = g.sdst_cm
            nchk, nbad = g.self_check(tab)
            print(f"{target} {key}: self-check {nchk} random words, {nbad} differ", flush=True)
            notes += [f"{key}: {n}" for n in g.notes]
            for k, v in g.names.items():
                names.setdefault(k, {}).update(v)
            counts = {v: sum(1 for _ in g.entries(tab, (v,))) for v in MARK}
            print(f"{target} {key}: " + ", ".join(f"{v} {n} opcodes" for v, n in counts.items()), flush=True)
        out["names"] = names
        out["notes"] = notes
        path = os.path.join(OUT, f"dpp_{target}.json")
        table_json.write(
            path,
            out,
            "tools/gen_isa_dpp_tables.py",
            f"python3 tools/gen_isa_dpp_tables.py {target}",
            sort_keys=True,
        )
        for n in notes:
            print("  note:", n)


if __name__ == "__main__":
    main()
