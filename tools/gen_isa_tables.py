#!/usr/bin/env python3
"""Generate wavelift/isa/tables/<target>_w<32|64>.json by asking LLVM 19 about every opcode.

    python3 tools/gen_isa_tables.py                  # all targets, both wave sizes
    python3 tools/gen_isa_tables.py gfx1030_w32      # one
    python3 tools/gen_isa_tables.py gfx1100_w32 gfx1200_w64

Nothing opcode-specific is typed in (docs/decisions/0001).  Per encoding and opcode value:

1. A probe word with *sentinel* field values (vdst=20, src0=40, src1/vsrc1=60, src2=80, VOP3B
   sdst=12 ...) is disassembled; the printed line becomes a template: fixed text plus operand
   slots (register widths read from ``v[40:41]``-style ranges).
2. Every slot that holds a register field is probed with *every* code of its field (0..255;
   for 9-bit sources also a few VGPRs).  What LLVM prints for each code (or that it rejects
   it) becomes the slot's *code map* (shared between slots: ``codemaps`` in the JSON), so
   register-class rules (64-bit alignment, which specials a class holds, ``/*Invalid ...*/``
   comments, inline-constant spelling per operand type) are LLVM's own.  A code LLVM reads as
   a literal (the instruction grows by 4 bytes) gets the literal type (b32/f16/i16/v2i16/
   v2f16/f64/b64/i64/hex, "!" = with ``/*Invalid immediate*/``) whose printing matches LLVM
   on a set of literal probes.
3. Every other bit of the instruction (modifier fields, unused fields, bits no field names) is
   flipped on its own: LLVM rejects it (``rej`` mask), ignores it, or prints it — as a source
   modifier (``-x``/``|x|``), a flag (`` clamp``, `` glc``), an output modifier (``mul:2``) or
   one position of a group (``op_sel:[..]``, ``op_sel_hi``, ``neg_lo``, ``neg_hi``).  A field
   whose bits change the text in other ways (v_interp attributes) becomes a slot of its own,
   probed with every value.
SOPK/SOPP ``simm16`` print formats and the hwreg/sendmsg/version names are probed likewise.
``notes`` in each file lists probes the generator could not match.  The output is a function of
what LLVM prints alone (code maps numbered by first use), written one fact per line by
tools/table_json.py so that a regeneration reviews as a diff.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import table_json  # tools/, the script's directory

from wavelift.isa import decoder as D  # noqa: E402
from wavelift.isa import llvm_oracle as L  # noqa: E402
from wavelift.isa.encodings import ISAS, generation  # noqa: E402
from wavelift.isa.operands import LITERAL_FORMATS, vreg_name  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "wavelift", "isa", "tables")
TARGETS = ("gfx1030", "gfx1010", "gfx1100", "gfx1150", "gfx1200")
# the generation's layouts (wavelift/isa/encodings.py), bound by use_isa(target) before a table
LAYOUTS = FIXED = NWORDS = classify = encode = None
ISA_NAME = "gfx10"


def use_isa(target):
    """Bind LAYOUTS/FIXED/NWORDS/classify/encode to ``target``'s generation."""
    global LAYOUTS, FIXED, NWORDS, classify, encode, ISA_NAME
    isa = ISAS[generation(target)]
    ISA_NAME = isa.name
    LAYOUTS, FIXED, NWORDS, classify, encode = isa.layouts, isa.fixed, isa.nwords, isa.classify, isa.encode
    SENT["soffset"] = 125 if isa.name == "gfx10" else 124  # null (GFX11 swapped null and m0)


ENCS = ("SOP2", "SOP1", "SOPC", "SOPK", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P")
ENCS_LATE = ("VINTERP", "LDSDIR")  # GFX11+, written after VOPD
SENT = {
    "vdst": 20,
    "sdst": 20,
    "src0": 40,
    "ssrc0": 40,
    "src1": 60,
    "vsrc1": 60,
    "ssrc1": 60,
    "src2": 80,
    "sdata": 40,
    "sbase": 6,
    "soffset": 125,
}
NUM2FIELD = {
    20: ("vdst", "sdst"),
    40: ("src0", "ssrc0", "sdata"),
    60: ("src1", "vsrc1", "ssrc1"),
    80: ("src2",),
    10: ("sdst", "sbase"),
    12: ("sdst",),
}
use_isa("gfx1030")
MODF = ("abs", "neg", "opsel", "clamp", "omod", "neg_hi", "opsel_hi", "opsel_hi2", "glc", "dlc")
SIMM = 0x1234
SMEM_OFF = 0x1234
LITMARK = 0xDEADBEEF
# a register, with GFX11's true16 half (.l/.h) when LLVM prints one
REG = re.compile(r"(?<![\w\[])(v|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])(?:\.[lh])?(?![\w\]])")
GROUP = re.compile(r" (op_sel|op_sel_hi|neg_lo|neg_hi):\[([01,]+)\]")
# wait counts LLVM prints after the modifiers (VINTERP wait_exp, LDSDIR wait_vdst): the "tail"
TAIL = re.compile(r"( wait_[a-z_]+:\d+)+$")
SIMM_FMTS = (
    "hex",
    "dec",
    "inl",
    "waitcnt",
    "waitcnt11",
    "delay_alu",
    "depctr",
    "sendmsg",
    "hwreg",
    "version",
)
TYPES = ("b32", "f16", "i16", "v2i16", "v2f16", "f64", "b64", "i64", "hex", "f16b", "i16b", "v2bf16", "bf16")
LITS = [
    0x3F800000,
    0x3C00,
    0x12343C00,
    0x3FF00000,
    0x3FC45F30,
    0x12345678,
    0xFFFFFFFF,
    0xFFFFFFF0,
    0x41,
    0xFFFF,
    0x3118,
    0x3E22F983,
    0x40,
    0xBC00,
    0xC4000000,
    0x12340007,
    0x7,
    0x0,
    0xFFFF0000,
    0x4000,
    0x40000000,
]
VPROBE = (0, 1, 100, 254, 255)
VPROBE11 = (0, 1, 100, 127, 128, 129, 254, 255)  # GFX11+: true16 halves and Lo128 classes


def wbytes(words):
    return struct.pack(f"<{len(words)}I", *words)


def fields_of(enc):
    return {n for n, _, _ in LAYOUTS[enc]}


def field_lw(enc, name):
    for n, lo, w in LAYOUTS[enc]:
        if n == name:
            return lo, w
    return None


def sentinel_fields(enc, vreg_src=True):
    f = {}
    for n, _, w in LAYOUTS[enc]:
        if n in SENT:
            v = SENT[n]
            if w == 9:
                v = v + 256 if vreg_src else v
            f[n] = v
    if enc in ("SOPK", "SOPP"):
        f["simm16"] = SIMM
    if enc == "SMEM":
        f["offset"] = SMEM_OFF
    return f


def value_of(enc, f):
    return sum(w << (32 * i) for i, w in enumerate(encode(enc, **f)))


def words_of(enc, val):
    return [(val >> (32 * i)) & 0xFFFFFFFF for i in range(NWORDS.get(enc, 1))]


def base_name(mn):
    for suf in ("_e32", "_e64", "_dpp", "_sdwa"):
        if mn.endswith(suf):
            return mn[: -len(suf)], suf[1:]
    return mn, ""


def reg_spans(enc, text):
    """Register slots of LLVM's sentinel line: [(start, end, spec)]."""
    mn, _, rest = text.partition(" ")
    off = len(mn) + 1
    flds = fields_of(enc)
    used = set()
    srci = {"src0": 0, "src1": 1, "src2": 2}
    spans = []
    for m in REG.finditer(rest):
        pre, one, lo, hi = m.groups()
        first = int(one if one is not None else lo)
        n = 1 if one is not None else int(hi) - int(lo) + 1
        cand = [c for c in NUM2FIELD.get(first, ()) if c in flds and c not in used]
        if enc == "SMEM" and first == 12:
            cand = ["sbase"]
        if not cand:
            continue
        fld = cand[0]
        used.add(fld)
        p = {"f": fld, "k": "cm", "n": n}
        if fld in srci:
            p["i"] = srci[fld]
        if fld in ("vdst", "vsrc1") and pre == "v":
            p["r"] = "v"
        end = m.end()
        if rest.startswith("/*", end):
            end = rest.index("*/", end) + 2
        spans.append((off + m.start(), off + end, p))
    return spans


def build_parts(text, spans):
    mn, _, _ = text.partition(" ")
    parts = []
    pos = len(mn)
    for s, e, p in sorted(spans, key=lambda x: x[0]):
        if s > pos:
            parts.append(text[pos:s])
        parts.append(p)
        pos = e
    if pos < len(text):
        parts.append(text[pos:])
    return mn, parts


def mid_text(base, s, e, line):
    """The text LLVM printed in place of base[s:e], or None when the rest differs."""
    pre, suf = base[:s], base[e:]
    if line.startswith(pre) and line.endswith(suf) and len(line) >= len(pre) + len(suf):
        return line[len(pre) : len(line) - len(suf)]
    return None


def srcmod_match(base, spans, t):
    """(source index, 0 neg / 1 abs / 2 sext) when ``t`` is ``base`` with one source wrapped."""
    for s, e, p in spans:
        if "i" not in p:
            continue
        tok = base[s:e]
        for kind, w in enumerate(("-" + tok, "|" + tok + "|", "sext(" + tok + ")")):
            if t == base[:s] + w + base[e:]:
                return p["i"], kind
    return None


def groups_of(text):
    return {m.group(1): [int(x) for x in m.group(2).split(",")] for m in GROUP.finditer(text)}


class Gen:
    def __init__(self, target, wave64):
        self.target = target
        self.wave64 = wave64
        self.extra = {"sendmsg": {}, "hwreg": {}, "version": {}}
        self.notes = []
        self.cms = []
        self.cm_ids = {}

    # ---------------------------------------------------------------- LLVM
    def _run(self, items, pad):
        starts = []
        blob = bytearray()
        for b in items:
            starts.append(len(blob))
            blob += b + L.NOP * pad
        with tempfile.TemporaryDirectory() as d:
            s = os.path.join(d, "t.s")
            o = os.path.join(d, "t.o")
            with open(s, "w") as f:
                f.write(".text\n")
                for i in range(0, len(blob), 256):
                    f.write(".byte " + ",".join(map(str, blob[i : i + 256])) + "\n")
            subprocess.run(
                [L.LLVM_MC, "-triple=amdgcn-amd-amdhsa", f"-mcpu={self.target}", "-filetype=obj", s, "-o", o],
                check=True,
                capture_output=True,
            )
            lines = L.objdump_lines(o, self.target, self.wave64)
        at = {}
        for ln in lines:
            m = L._LINE.match(ln)
            if not m:
                continue
            text, addr, enc = m.groups()
            addr = int(addr, 16)
            if text.startswith((".long", ".byte", ".short")):
                at[addr] = None
            else:
                at[addr] = (text, 4 * len(enc.split()))
        return [at.get(s, "?") for s in starts]

    def ask(self, items):
        """LLVM's (text, size) or None for each list of words."""
        items = [wbytes(w) if not isinstance(w, bytes) else w for w in items]
        chunk = 40000
        parts = [items[i : i + chunk] for i in range(0, len(items), chunk)]
        with ThreadPoolExecutor(2) as ex:
            res = [r for rs in ex.map(lambda p: self._run(p, 3), parts) for r in rs]
        for pad in (8, 16):
            retry = [i for i, r in enumerate(res) if r == "?"]
            if not retry:
                break
            r2 = self._run([items[i] for i in retry], pad)
            for i, r in zip(retry, r2):
                res[i] = r
        nq = sum(1 for r in res if r == "?")
        if os.environ.get("GEN_DEBUG"):
            print(f"    ask {len(items)} items, {nq} unresolved", file=sys.stderr, flush=True)
        for i, r in enumerate(res):
            if r == "?":
                res[i] = self._run([items[i]], 16)[0]
                if res[i] == "?":
                    res[i] = None
        return res

    def cm_id(self, lst):
        key = json.dumps(lst)
        if key not in self.cm_ids:
            self.cm_ids[key] = len(self.cms)
            self.cms.append(lst)
        return self.cm_ids[key]

    # ---------------------------------------------------------------- simm16 side tables
    def op_named(self, enc, names):
        """The opcode LLVM prints as one of ``names`` (the first found) in ``enc``, or None."""
        ops = list(range(1 << field_lw(enc, "op")[1]))
        got = {}
        for o, r in zip(
            ops, self.ask([encode(enc, op=o, sdst=20) if enc == "SOPK" else encode(enc, op=o) for o in ops])
        ):
            if r:
                got.setdefault(r[0].split(" ")[0], o)
        return next((got[n] for n in names if n in got), None)

    def side_tables(self):
        getreg = self.op_named("SOPK", ("s_getreg_b32",))
        items = [encode("SOPK", op=getreg, sdst=20, simm16=i | (31 << 11)) for i in range(64)]
        for i, r in enumerate(self.ask(items)):
            m = r and re.search(r"hwreg\(([A-Z_0-9]+)\)", r[0])
            if m:
                self.extra["hwreg"][str(i)] = m.group(1)
        sendmsg = self.op_named("SOPP", ("s_sendmsg",))
        items = [encode("SOPP", op=sendmsg, simm16=i) for i in range(1024)]
        for i, r in enumerate(self.ask(items)):
            if r and r[0].split(" ", 1)[1] != str(i):
                self.extra["sendmsg"][str(i)] = r[0].split(" ", 1)[1]
        depctr = self.op_named("SOPP", ("s_waitcnt_depctr", "s_wait_alu"))
        r = self.ask([encode("SOPP", op=depctr, simm16=0)])[0]  # its fields
        if r:
            self.extra["depctr"] = re.findall(r"(depctr_\w+)\(", r[0])
        version = self.op_named("SOPK", ("s_version",))
        vals = [i | (fl << 13) for fl in range(8) for i in range(256)]  # version | flag bits
        for v, r in zip(vals, self.ask([encode("SOPK", op=version, simm16=v) for v in vals])):
            if r and r[0].split(" ", 1)[1] != f"{v:#x}":
                self.extra["version"][str(v)] = r[0].split(" ", 1)[1]
        delay = self.op_named("SOPP", ("s_delay_alu",))
        if delay is not None:  # GFX11+: instid0 [3:0] and instskip [6:4] names
            ids = self.ask([encode("SOPP", op=delay, simm16=i) for i in range(16)])
            skips = self.ask([encode("SOPP", op=delay, simm16=i << 4) for i in range(8)])
            self.extra["delay_alu"] = {
                "id": [
                    re.sub(r"^.*instid0\((.*)\)$", r"\1", r[0]) if r and i else "" for i, r in enumerate(ids)
                ],
                "skip": [
                    re.sub(r"^.*instskip\((.*)\)$", r"\1", r[0]) if r and i else ""
                    for i, r in enumerate(skips)
                ],
            }
        self._install()

    def _install(self):
        side = {"_simm16": self.extra, "_cm": self.cms}
        self._orig = D.load_table
        D.load_table = lambda target, wave64: side  # used by the renderer during generation

    def render(self, e, lay, val, lit):
        try:
            return D.render_entry(e, lay, val, lit, self.target, self.wave64)[0]
        except D.BadEncoding:
            return None

    # ---------------------------------------------------------------- encodings
    def gen(self, enc):
        lo_op, w_op = field_lw(enc, "op")
        ops = list(range(1 << w_op))
        base = sentinel_fields(enc)
        items = [encode(enc, **dict(base, op=o)) + [LITMARK] for o in ops]
        res = self.ask(items)
        bases = {o: base for o in ops}
        b2 = sentinel_fields(enc, vreg_src=False)
        variants = [
            dict(base, src2=0),
            dict(base, src1=0, src2=0),
            dict(base, src0=0, src1=0, src2=0),
            dict(b2),
            dict(b2, src2=0),
            dict(base, vdst=0),
            dict(base, vdst=0, src0=0, src1=0, src2=0),
        ]
        if enc in ("SOP1", "SOP2", "SOPC"):
            variants = [dict(base, ssrc0=0), dict(base, sdst=0), dict(base, ssrc1=0)]
        if enc == "SMEM":
            variants = [
                dict(base, sdata=0),
                dict(base, sbase=0),
                dict(base, sdata=0, sbase=0),
                dict(base, sdata=0, sbase=0, offset=0),
            ]
        if enc == "SOPK":
            variants = [dict(base, sdst=0), dict(base, simm16=0), dict(base, sdst=0, simm16=0)]
        if enc == "SOPP":
            variants = [dict(base, simm16=0)]
        for vb in variants:
            vb = {k: v for k, v in vb.items() if k in fields_of(enc)}
            miss = [o for o, r in zip(ops, res) if r is None]
            if not miss or vb == base:
                continue
            r2 = self.ask([encode(enc, **dict(vb, op=o)) + [LITMARK] for o in miss])
            for o, r in zip(miss, r2):
                if r is not None:
                    res[o] = r
                    bases[o] = vb
        ents = {}
        for o, r in zip(ops, res):
            if r is None or classify(encode(enc, op=o)[0]) != enc:
                continue
            ents[o] = {"lay": enc, "f": dict(bases[o], op=o), "text": r[0], "size": r[1]}
        if enc == "VOP3":
            self.vop3b(ents)
        for o, x in ents.items():
            self.shape(enc, o, x)
        self.codemaps(enc, ents)
        self.bits(enc, ents)
        table = {}
        for o, x in ents.items():
            text = x["text"]
            g = GROUP.search(text)
            if g and all(sp[1] <= g.start() for sp in x["spans"]):
                rest = GROUP.sub("", text[g.start() :])
                text = text[: g.start()] + rest
                if rest:
                    self.notes.append(f"{enc} op {o}: text after groups {rest!r}")
            mn, parts = build_parts(text, x["spans"])
            name, variant = base_name(mn)
            e = {"name": name, "name_p": mn, "parts": parts}
            if variant:
                e["variant"] = variant
            if x["lay"] != enc:
                e["enc"] = x["lay"]
            tm = TAIL.search(text)
            if tm and (x["e"].get("m") or {}).keys() - {"sm"}:  # modifiers print before the tail
                _, core = build_parts(text[: tm.start()], [sp for sp in x["spans"] if sp[1] <= tm.start()])
                if parts[: len(core)] == core:
                    e["tail"] = len(parts) - len(core)
                else:
                    self.notes.append(f"{enc} op {o}: tail {text[tm.start() :]!r} is not whole parts")
            e.update(x["e"])
            table[o] = e
        self.check(enc, ents, table)
        return table

    def vop3b(self, ents):
        ops = sorted(ents)
        res = self.ask([encode("VOP3B", **dict(ents[o]["f"], sdst=12)) + [LITMARK] for o in ops])
        for o, r in zip(ops, res):
            if r and re.search(r"(?<![\w\[])s(12|\[12:13\])(?![\w\]])", r[0]):
                x = ents[o]
                x["lay"] = "VOP3B"
                x["f"] = {k: v for k, v in dict(x["f"], sdst=12).items() if k in fields_of("VOP3B")}
                x["text"], x["size"] = r

    def shape(self, enc, o, x):
        """Slots of the sentinel line (registers, simm16, literal, SMEM offset)."""
        text = x["text"]
        x["e"] = {}
        x["spans"] = reg_spans(x["lay"], text)
        if enc in ("SOPK", "SOPP"):
            self.simm_format(enc, o, x)
        nw = NWORDS.get(x["lay"], 1)
        if x["size"] == 4 * nw + 4 and not any(x["f"].get(p["f"]) == 255 for _, _, p in x["spans"]):
            i = text.find(f"{LITMARK:#x}")
            if i < 0:
                self.notes.append(f"{enc} op {o}: literal not found in {text!r}")
            else:
                x["e"]["lit"] = 1
                x["spans"].append((i, i + len(f"{LITMARK:#x}"), {"f": "literal", "k": "lit", "t": "hex"}))
        if enc == "SMEM":
            t = f"{SMEM_OFF:#x}"
            i = text.rfind(t)
            if i >= 0:
                p = {"f": "offset", "k": "smem_off"}
                if field_lw(x["lay"], "offset")[1] != 21:
                    p["ow"] = field_lw(x["lay"], "offset")[1]
                m = re.match(r", ([a-z0-9_]+)", text[i + len(t) :])
                if m:  # GFX12 s_prefetch_*: the offset, then soffset as an operand of its own
                    p["sep"] = 1
                    j = i + len(t) + 2
                    x["spans"].append((j, j + len(m.group(1)), {"f": "soffset", "k": "cm", "n": 1}))
                x["spans"].append((i, i + len(t), p))

    def simm_format(self, enc, o, x):
        vals = [
            0,
            1,
            7,
            63,
            64,
            65,
            0x8000,
            0xFFFF,
            SIMM,
            0x3F,
            0xF801,
            0x7FFF,
            0x0C07,
            0xFF9F,
            0x1F80,
            0x114,
            0x400,
            0x3FF,
            0x8001,
            0x41,
        ]
        res = self.ask([encode(enc, **dict(x["f"], simm16=v)) + [LITMARK] for v in vals])
        text = x["text"]
        if x["f"].get("simm16") != SIMM:
            return
        for fmt in SIMM_FMTS:
            if ISA_NAME == "gfx10" and fmt in ("waitcnt11", "delay_alu"):
                continue  # GFX11+ formats
            needle = D.simm16_text(fmt, SIMM, self.target, self.wave64)
            i = text.rfind(needle)
            if i < 0 or (i > 0 and text[i - 1] not in " ,"):
                continue
            ok = all(
                r is not None
                and mid_text(text, i, i + len(needle), r[0])
                == D.simm16_text(fmt, v, self.target, self.wave64)
                for v, r in zip(vals, res)
            )
            if ok:
                x["spans"].append((i, i + len(needle), {"f": "simm16", "k": "simm16", "fmt": fmt}))
                return
        mn = text.split(" ")[0]
        if all(r is not None and r[0] == (mn if v == 0 else f"{mn} {v}") for v, r in zip(vals, res)):
            x["spans"].append((len(mn) + 1, len(text), {"f": "simm16", "k": "simm16", "fmt": "dec"}))
            x["e"]["omit0"] = 1
            return
        self.notes.append(f"{enc} op {o}: no simm16 format matches {text!r}: {[r and r[0] for r in res]}")

    # ---------------------------------------------------------------- code maps
    def codemaps(self, enc, ents):
        jobs = []
        for o, x in ents.items():
            lay = x["lay"]
            for s, e, p in x["spans"]:
                if p["k"] != "cm":
                    continue
                lo, w = field_lw(lay, p["f"])
                codes = list(range(min(256, 1 << w)))
                if w == 9:
                    codes += [256 + k for k in (VPROBE if ISA_NAME == "gfx10" else VPROBE11)]
                for c in codes:
                    jobs.append((o, s, e, p, c, encode(lay, **dict(x["f"], **{p["f"]: c})) + [LITMARK]))
            for s, e, p in x["spans"]:
                if p["k"] == "smem_off" and not p.get("sep"):
                    for c in range(128):
                        jobs.append((o, s, e, p, c, encode(lay, **dict(x["f"], soffset=c)) + [LITMARK]))
                    # a zero offset: printed or left out
                    jobs.append((o, s, e, p, "z", encode(lay, **dict(x["f"], offset=0)) + [LITMARK]))
                if p["k"] == "lit":
                    nw = NWORDS.get(lay, 1)
                    for lit in LITS:
                        jobs.append((o, s, e, p, ("lit", lit), encode(lay, **x["f"]) + [lit]))
        res = self.ask([j[5] for j in jobs])
        by = {}
        litjobs = []
        for (o, s, e, p, c, _), r in zip(jobs, res):
            by.setdefault((o, id(p)), (o, s, e, p, []))[4].append((c, r))
        for o, s, e, p, obs in by.values():
            x = ents[o]
            base = x["text"]
            nw = NWORDS.get(x["lay"], 1)
            if p["k"] == "lit":
                self.lit_type(o, p, [(c[1], r and mid_text(base, s, e, r[0])) for c, r in obs])
                continue
            if p["k"] == "smem_off" and p.get("sep"):
                continue
            if p["k"] == "smem_off":
                cm = [None] * 128
                for c, r in obs:
                    t = None if r is None else mid_text(base, s, e, r[0])
                    if c == "z":
                        if t is not None and t.endswith("0x0"):
                            p["z0"] = 1
                        continue
                    if t == f"{SMEM_OFF:#x}":
                        cm[c] = ""
                    elif t is not None and t.endswith(f" offset:{SMEM_OFF:#x}"):
                        cm[c] = t[: -len(f" offset:{SMEM_OFF:#x}")]
                    elif r is not None:
                        self.notes.append(f"{enc} op {o} soffset={c}: {r[0]!r}")
                p["cm"] = self.cm_id(cm)
                continue
            lo, w = field_lw(x["lay"], p["f"])
            cm = [None] * min(256, 1 << w)
            lits = []
            vg = {}
            for c, r in obs:
                t = None if r is None else mid_text(base, s, e, r[0])
                if (
                    r is not None
                    and t is None
                    and not (enc in ("VOP1", "VOP2", "VOPC") and c in (233, 234, 249, 250))
                    and not (ISA_NAME != "gfx10" and p["f"] == "src0" and c in (233, 234, 250))
                ):
                    self.notes.append(f"{enc} op {o} {p['f']}={c}: {r[0]!r} does not fit {base!r}")
                if c >= 256:
                    vg[c - 256] = t
                    continue
                if t is not None and (
                    r[1] == 4 * nw + 4
                    and not x["e"].get("lit")
                    or c == 255
                    and p["f"] in ("src0", "src1", "src2", "ssrc0", "ssrc1")
                    and x["e"].get("lit")
                ):
                    cm[c] = ""  # a literal follows (shared with a mandatory one)
                    lits.append(c)
                else:
                    cm[c] = t
            if vg:
                name = vreg_name(0, p["n"])
                t0 = vg.get(0)
                t16 = p["n"] == 1 and vg.get(254) == "v126.h" and t0 == "v0.l"
                if t16:  # GFX11 true16: VGPR k is the low half of v[k], k+128 its high half
                    p["vg"] = ".l"
                    p["t16"] = 1
                elif t0 is not None and t0.startswith(name):
                    p["vg"] = t0[len(name) :]
                    t128 = vg.get(128)
                    name128 = vreg_name(128, p["n"])
                    if t128 is not None and t128.startswith(name128) and t128[len(name128) :] != p["vg"]:
                        p["vg2"] = t128[len(name128) :]  # v128 and up (a Lo128 class: a comment)
                if t0 is not None and (t16 or t0.startswith(name)):
                    for k, t in vg.items():
                        if t16:
                            exp = f"v{k & 127}.{'h' if k & 128 else 'l'}"
                        else:
                            sfx = p.get("vg2", p["vg"]) if k >= 128 else p["vg"]
                            exp = (vreg_name(k, p["n"]) + sfx) if k + p["n"] <= 256 else None
                        if t != exp:
                            self.notes.append(f"{enc} op {o} {p['f']}: v{k} prints {t!r}, expected {exp!r}")
                elif any(t is not None for t in vg.values()):
                    self.notes.append(f"{enc} op {o} {p['f']}: VGPRs print {vg}")
            if lits:
                p["lc"] = lits[0]
                if lits != [255]:
                    self.notes.append(f"{enc} op {o} {p['f']}: literal codes {lits}")
                for lit in LITS:
                    litjobs.append(
                        (o, s, e, p, lit, encode(x["lay"], **dict(x["f"], **{p["f"]: lits[0]})) + [lit])
                    )
            p["cm"] = self.cm_id(cm)
        res = self.ask([j[5] for j in litjobs])
        by = {}
        for (o, s, e, p, lit, _), r in zip(litjobs, res):
            base = ents[o]["text"]
            if ents[o]["e"].get("lit"):
                # the mandatory literal is printed further on too: the slot ends at its comma
                t = r and r[0].startswith(base[:s]) and r[0][s:].split(",")[0] or None
            else:
                t = r and mid_text(base, s, e, r[0])
            by.setdefault((o, id(p)), (o, s, e, p, []))[4].append((lit, t))
        for o, s, e, p, obs in by.values():
            self.lit_type(o, p, obs)

    def lit_type(self, o, p, obs):
        obs = [(lit, t) for lit, t in obs if t is not None]
        if not obs:
            p["t"] = "hex"
            return
        pre = ""
        m = re.match(r"^(neg\(|-|\|)", obs[0][1])
        best = None
        for t in TYPES + tuple(x + "!" for x in TYPES):
            fm = LITERAL_FORMATS[t.rstrip("!")]
            bad = [
                (lit, tx)
                for lit, tx in obs
                if fm(lit) + ("/*Invalid immediate*/" if t[-1] == "!" else "") != tx
            ]
            if best is None or len(bad) < len(best[1]):
                best = (t, bad)
            if not bad:
                break
        p["t"] = best[0]
        if best[1]:
            self.notes.append(f"op {o} {p['f']}: literal type {best[0]} misses {best[1][:3]}")
        del pre, m

    # ---------------------------------------------------------------- single bits
    def bits(self, enc, ents):
        jobs = []
        for o, x in ents.items():
            lay = x["lay"]
            nbits = 32 * NWORDS.get(lay, 1)
            taken = 0
            fv, fl = FIXED[lay]
            taken |= ((1 << (32 - fl)) - 1) << fl
            lo, w = field_lw(lay, "op")
            taken |= ((1 << w) - 1) << lo
            slotf = {p["f"] for _, _, p in x["spans"]}
            if "offset" in slotf:
                slotf.add("soffset")
            for n, lo, w in LAYOUTS[lay]:
                if n in slotf:
                    taken |= ((1 << w) - 1) << lo
            v0 = value_of(lay, x["f"])
            x["v0"] = v0
            for b in range(nbits):
                if not (taken >> b) & 1:
                    jobs.append((o, b, words_of(lay, v0 ^ (1 << b)) + [LITMARK]))
        res = self.ask([j[2] for j in jobs])
        per = {}
        for (o, b, _), r in zip(jobs, res):
            per.setdefault(o, []).append((b, r))
        hidden_jobs = []
        for o, obs in per.items():
            x = ents[o]
            hid = self.classify_bits(enc, o, x, obs)
            for fld in sorted(hid):  # a set of names: its order varies with the hash seed
                lo, w = field_lw(x["lay"], fld)
                for v in range(1 << w):
                    hidden_jobs.append((o, fld, v, encode(x["lay"], **dict(x["f"], **{fld: v})) + [LITMARK]))
        if hidden_jobs:
            res = self.ask([j[3] for j in hidden_jobs])
            by = {}
            for (o, fld, v, _), r in zip(hidden_jobs, res):
                by.setdefault((o, fld), []).append((v, r))
            for (o, fld), obs in by.items():
                self.hidden_slot(enc, o, ents[o], fld, obs)
        for o in per:
            self.finish_bits(enc, o, ents[o])

    def classify_bits(self, enc, o, x, obs):
        base = x["text"]
        rej = 0
        sm = {}
        flags = []
        grp = {}
        om = -1
        bsel = [-1, -1]
        unk = []
        hidden = set()
        {p["i"]: (s, e) for s, e, p in x["spans"] if "i" in p}
        g0 = groups_of(base)
        fname = {}
        for n, lo, w in LAYOUTS[x["lay"]]:
            for b in range(lo, lo + w):
                fname[b] = n
        tm = TAIL.search(base)
        core, tl = (base[: tm.start()], base[tm.start() :]) if tm else (base, "")
        for b, r in obs:
            if r is None:
                rej |= 1 << b
                continue
            t = r[0]
            if t == base and r[1] == x["size"]:
                continue
            mt = srcmod_match(base, x["spans"], t)
            if mt:
                sm.setdefault(mt[0], [-1, -1, -1])[mt[1]] = b
                continue
            extra = t[len(base) :] if t.startswith(base) else None
            if extra is None and tl and t.endswith(tl) and t.startswith(core):
                extra = t[len(core) : len(t) - len(tl)]  # a modifier printed before the tail
            if extra and re.fullmatch(r" [a-z_]+", extra):
                flags.append([b, extra])
                continue
            if extra in (" mul:2", " mul:4") and fname.get(b) == "omod":
                om = b if extra == " mul:2" else b - 1
                continue
            if extra in (" byte_sel:1", " byte_sel:2"):  # GFX12 fp8 conversions: two op_sel bits
                bsel[int(extra[-1]) - 1] = b
                continue
            g1 = groups_of(t)
            if GROUP.sub("", t) == GROUP.sub("", base) and g1 != g0:
                diffs = []
                for name in set(g0) | set(g1):
                    a = g0.get(name)
                    c = g1.get(name)
                    if a is None:
                        a = [0] * len(c)
                    if c is None:
                        c = [1 - v for v in a]  # printed only when not the default
                    diffs += [(name, k, c[k]) for k in range(len(c)) if k >= len(a) or a[k] != c[k]]
                if len(diffs) == 1:
                    name, k, v = diffs[0]
                    vals = g1.get(name) or g0.get(name)
                    g = grp.setdefault(
                        name,
                        {
                            "n": len(vals),
                            "bits": {},
                            "def": (0 if all(g0[name]) else 1) if name in g0 else 0,
                            "seen": vals,
                        },
                    )
                    g["bits"][k] = b
                    continue
            fld = fname.get(b)
            if fld and fld not in MODF:
                hidden.add(fld)
                continue
            unk.append((b, t))
        x["unk"] = unk
        x["sm"] = sm
        if rej:
            x["e"]["rej"] = rej
        m = {}
        for name, vals in g0.items():
            if name not in grp:
                grp[name] = {"n": len(vals), "bits": {}, "def": 0 if all(vals) else 1, "seen": vals}
        if grp:
            order = ("op_sel", "op_sel_hi", "neg_lo", "neg_hi")
            gl = []
            for name in order:
                if name in grp:
                    g = grp[name]
                    bits = [g["bits"].get(k, -1) for k in range(g["n"])]
                    const = [0 if bits[k] >= 0 else g["seen"][k] for k in range(g["n"])]
                    gl.append([name, bits, g["def"], const])
            m["g"] = gl
        if flags:
            order = (" glc", " slc", " dlc", " clamp")
            flags.sort(key=lambda f: order.index(f[1]) if f[1] in order else 99)
            m["fl"] = flags
        if om >= 0:
            m["om"] = om
        if bsel != [-1, -1]:
            m["bs"] = bsel  # byte_sel = bit bs[0] + 2 * bit bs[1]
        x["e"]["m"] = m
        return hidden

    def finish_bits(self, enc, o, x):
        """Source modifiers on hidden slots; what is left is unknown (treated as invalid)."""
        sm, unk = x["sm"], []
        for b, t in x["unk"]:
            mt = srcmod_match(x["text"], x["spans"], t)
            if mt:
                sm.setdefault(mt[0], [-1, -1, -1])[mt[1]] = b
            else:
                unk.append((b, t))
        if unk:
            self.notes.append(f"{enc} op {o}: bits with unknown effect {unk[:3]}")
            x["e"]["unk"] = sum(1 << b for b, _ in unk)
        m = x["e"].pop("m")
        if sm:
            m = dict(m, sm=[sm.get(i, [-1, -1, -1]) for i in range(max(sm) + 1)])
        if m:
            x["e"]["m"] = m

    @staticmethod
    def diff_span(base, texts):
        texts = texts + [base]
        a = min(texts, key=len)
        pre = 0
        while pre < len(a) and all(t[pre] == a[pre] for t in texts):
            pre += 1
        suf = 0
        while suf < len(a) - pre and all(t[len(t) - 1 - suf] == a[len(a) - 1 - suf] for t in texts):
            suf += 1
        end = len(base) - suf
        # keep whole tokens
        if pre < len(base) and base[pre] not in " ,":
            while pre > 0 and base[pre - 1] not in " ,":
                pre -= 1
        if end > 0 and base[end - 1] not in " ,":
            while end < len(base) and base[end] not in " ,":
                end += 1
        return pre, max(end, pre)

    def hidden_slot(self, enc, o, x, fld, obs):
        """A field that changes the text but is no register slot (v_interp attributes): split
        into groups of bits that change separate parts of the line, each a slot of its own."""
        base = x["text"]
        lo, w = field_lw(x["lay"], fld)
        v0 = x["f"].get(fld, 0)
        by = dict(obs)
        spans = []
        for b in range(w):
            r = by.get(v0 ^ (1 << b))
            if r is None or r[0] == base:
                continue
            s, e = self.diff_span(base, [r[0]])
            for g in spans:
                if s <= g[1] and g[0] <= e:
                    g[0], g[1] = min(g[0], s), max(g[1], e)
                    g[2] |= 1 << b
                    break
            else:
                spans.append([s, e, 1 << b])
        for g in spans:
            mask = g[2]
            vals = [v for v in range(1 << w) if (v & ~mask) == (v0 & ~mask)]
            texts = [by[v][0] for v in vals if by.get(v) is not None]
            g[0], g[1] = self.diff_span(base, texts)
        for g in spans:
            s, e, mask = g
            if any(sp[0] < e and s < sp[1] for sp in x["spans"]) or any(
                h is not g and h[0] < e and s < h[1] for h in spans
            ):
                self.notes.append(f"{enc} op {o} hidden {fld} bits {mask:#x} overlaps a slot")
                continue
            sh = (mask & -mask).bit_length() - 1
            m = mask >> sh
            if m & (m + 1):
                self.notes.append(f"{enc} op {o} hidden {fld} bits {mask:#x} not contiguous")
                continue
            cm = []
            lits = []
            for k in range(m + 1):
                v = (v0 & ~mask) | (k << sh)
                r = by.get(v)
                cm.append(None if r is None else mid_text(base, s, e, r[0]))
                if r is not None and cm[-1] is None:
                    self.notes.append(f"{enc} op {o} hidden {fld}={v}: {r[0]!r} vs {base!r}")
                if r is not None and cm[-1] is not None and r[1] == x["size"] + 4:
                    lits.append((k, cm[-1]))
                    cm[-1] = ""
            p = {"f": fld, "k": "cm", "n": 1, "cm": self.cm_id(cm), "h": 1, "lo": lo + sh, "m": m}
            if lits:
                p["lc"] = lits[0][0]
                self.lit_type(o, p, [(LITMARK, lits[0][1])])
            if fld in ("src0", "src1", "src2") and s < len(base) and not base[s:e].startswith(" "):
                p["i"] = int(fld[-1])
            x["spans"].append((s, e, p))

    # ---------------------------------------------------------------- VOPD (GFX11+)
    VOPD_SENT = {"vdstx": 20, "src0x": 256 + 40, "vsrc1x": 60, "vdsty": 33, "src0y": 256 + 41, "vsrc1y": 61}

    def gen_vopd(self):
        """VOPD's two halves as tables of their own (``VOPDX`` by opx, ``VOPDY`` by opy): LLVM
        prints ``X :: Y`` and each half's text depends on its own fields only (Y's vdst also on
        vdstx's low bit).  Each opcode is probed against a reference opcode of the other half;
        a half whose vsrc1 LLVM accepts only as 0 (one source) rejects the field's bits."""
        sent = self.VOPD_SENT

        def word(f):
            return encode("VOPD", **f) + [LITMARK]

        pairs = [(x, y) for x in range(16) for y in range(32)]
        res = self.ask([word(dict(sent, opx=x, opy=y, vsrc1x=0, vsrc1y=0)) for x, y in pairs])
        ok = [(x, y) for (x, y), r in zip(pairs, res) if r]
        xref = max(range(16), key=lambda x: sum(1 for a, _ in ok if a == x))
        yref = max(range(32), key=lambda y: sum(1 for _, b in ok if b == y))
        out = {}
        for half, other, ref, n in (("x", "y", yref, 16), ("y", "x", xref, 32)):
            base = dict(sent, **{f"vsrc1{other}": 0, f"op{other}": ref})
            ents = {}
            for o in range(n):
                f = dict(base, **{f"op{half}": o})
                r = self.ask([word(f)])[0]
                zero = 0
                if r is None:
                    f[f"vsrc1{half}"] = 0
                    r = self.ask([word(f)])[0]
                    zero = 1
                if r is None or " :: " not in r[0]:
                    continue
                text = r[0].split(" :: ")[1 if half == "y" else 0]
                ents[o] = self.vopd_half(half, o, f, text, r[1], zero)
            out["VOPD" + half.upper()] = ents
        return out

    def vopd_half(self, half, o, f, text, size, zero):
        mn, _, rest = text.partition(" ")
        toks = rest.split(", ")
        want = {
            f"v{f[f'vdst{half}'] if half == 'x' else (f['vdsty'] << 1) | ((f['vdstx'] & 1) ^ 1)}": f"vdst{half}",
            f"v{f[f'src0{half}'] - 256}": f"src0{half}",
            f"v{f[f'vsrc1{half}']}": f"vsrc1{half}",
            f"{LITMARK:#x}": "literal",
        }
        parts = []
        e = {"name": mn, "name_p": mn}
        for k, tok in enumerate(toks):
            parts.append(" " if k == 0 else ", ")
            fld = want.get(tok)
            if fld is None:
                self.notes.append(f"VOPD{half.upper()} op {o}: token {tok!r} of {text!r}")
                return None
            if fld == "literal":
                parts.append({"f": "literal", "k": "lit", "t": "hex"})
                e["lit"] = 1
            elif fld == "vdsty":
                parts.append({"f": "vdsty", "k": "vdsty"})
            else:
                p = {"f": fld, "k": "cm", "n": 1}
                if fld.startswith("src0"):
                    p["i"] = 0
                elif fld.startswith("vdst") or fld.startswith("vsrc1"):
                    p["r"] = "v"
                parts.append(p)
        e["parts"] = parts
        if zero:
            lo, w = field_lw("VOPD", f"vsrc1{half}")
            e["rej"] = ((1 << w) - 1) << lo
        # code maps: every code of every register slot, read back from this half's text
        jobs = []
        for p in parts:
            if isinstance(p, dict) and p["k"] == "cm":
                lo, w = field_lw("VOPD", p["f"])
                codes = list(range(min(256, 1 << w))) + ([256 + k for k in VPROBE11] if w == 9 else [])
                for c in codes:
                    jobs.append((p, c, encode("VOPD", **dict(f, **{p["f"]: c})) + [LITMARK]))
            if isinstance(p, dict) and p["k"] == "lit":
                for lit in LITS:
                    jobs.append((p, ("lit", lit), encode("VOPD", **f) + [lit]))
        res = self.ask([j[2] for j in jobs])
        idx = 1 if half == "y" else 0
        by = {}
        for (p, c, _), r in zip(jobs, res):
            t = r and " :: " in r[0] and r[0].split(" :: ")[idx] or None
            by.setdefault(id(p), (p, []))[1].append((c, t, r and r[1]))
        for p, obs in by.values():
            k = parts.index(p)
            if p["k"] == "lit":
                lits = []
                for c, t, _ in obs:
                    tt = t and t.partition(" ")[2].split(", ")[(k - 1) // 2]
                    lits.append((c[1], tt))
                self.lit_type(o, p, lits)
                continue
            cm = [None] * min(256, 1 << field_lw("VOPD", p["f"])[1])
            vg = {}
            lits = []
            for c, t, sz in obs:
                tt = t and t.partition(" ")[2].split(", ")[(k - 1) // 2]
                if c >= 256:
                    vg[c - 256] = tt
                    continue
                is_src = p["f"].startswith("src0")
                if is_src and tt is not None and sz == size + 4 and not e.get("lit"):
                    cm[c] = ""
                    lits.append((c, tt))
                elif is_src and tt is not None and c == 255 and e.get("lit"):
                    cm[c] = ""
                    lits.append((c, tt))
                else:
                    cm[c] = tt
            if vg:
                if all(t == f"v{v}" for v, t in vg.items()):
                    p["vg"] = ""
                else:
                    self.notes.append(f"VOPD{half.upper()} op {o} {p['f']}: VGPRs print {vg}")
            if lits:
                p["lc"] = lits[0][0]
                lj = [encode("VOPD", **dict(f, **{p["f"]: lits[0][0]})) + [lit] for lit in LITS]
                obs2 = []
                for lit, r in zip(LITS, self.ask(lj)):
                    t = r and " :: " in r[0] and r[0].split(" :: ")[idx] or None
                    obs2.append((lit, t and t.partition(" ")[2].split(", ")[(k - 1) // 2]))
                self.lit_type(o, p, obs2)
            p["cm"] = self.cm_id(cm)
        return e

    # ---------------------------------------------------------------- self-check
    def check(self, enc, ents, table):
        """Our renderer on the sentinel line and with every printed bit set."""
        jobs = []
        for o, x in ents.items():
            e = table[o]
            lay = e.get("enc", enc)
            m = e.get("m", {})
            bits = [b for trio in m.get("sm", []) for b in trio[:2] if b >= 0]
            bits += [b for g in m.get("g", []) for b in g[1] if b >= 0]
            bits += [f[0] for f in m.get("fl", [])]
            v = x["v0"]
            for b in bits:
                v |= 1 << b
            lit = LITMARK
            jobs.append((o, lay, x["v0"], lit))
            if bits:
                jobs.append((o, lay, v, lit))
        res = self.ask([words_of(lay, v) + [lit] for (_, lay, v, lit) in jobs])
        for (o, lay, v, lit), r in zip(jobs, res):
            got = self.render(table[o], lay, v, lit)
            m = table[o].get("m", {})
            if r is not None and got != r[0] and m.get("g") and m.get("fl") and not m.get("ff"):
                m["ff"] = 1  # LLVM prints the flags before the groups (VINTERP: clamp op_sel:[..])
                got = self.render(table[o], lay, v, lit)
                if got != r[0]:
                    del m["ff"]
            if r is None or got != r[0]:
                self.notes.append(f"{enc} op {o}: check {v:#x}: ours {got!r}, LLVM {r and r[0]!r}")


def strip_private(x):
    """Drop the decoder's run-time keys (``_cm``, ``_lo`` ...) that the self-check attached."""
    if isinstance(x, dict):
        return {k: strip_private(v) for k, v in x.items() if not k.startswith("_")}
    if isinstance(x, list):
        return [strip_private(v) for v in x]
    return x


def renumber_codemaps(encs, cms):
    """``encs`` with code maps numbered by first use in written order, and the maps in that order
    (unused ones dropped): the file then does not depend on the order the generator met slots."""
    new_ids = {}

    def walk(x):
        if isinstance(x, dict):
            x = {k: walk(v) for k, v in x.items()}
            if isinstance(x.get("cm"), int):
                x["cm"] = new_ids.setdefault(x["cm"], len(new_ids))
            return x
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    encs = walk(encs)
    return encs, [cms[old] for old in new_ids]


def add_encodings(g, tag, names):
    """The table file ``tag`` as it is, with the encodings ``names`` (of ENCS_LATE) generated
    anew: its code maps seed the generator's, so the file equals a whole regeneration's (maps are
    numbered by first use in written order, and ENCS_LATE are written last) at a fraction of the
    time.  Only for encodings after every other in the file."""
    with open(os.path.join(OUT, f"{tag}.json")) as f:
        old = json.load(f)
    for cm in old["codemaps"]:
        g.cm_id(cm)
    g.notes = [n for n in old["notes"] if n.split(" ", 1)[0] not in names]
    encs = {k: v for k, v in old["encodings"].items() if k not in names}
    for enc in ENCS_LATE:
        if enc in names and enc in LAYOUTS:
            encs[enc] = {str(k): v for k, v in sorted(g.gen(enc).items())}
            print(f"{tag} {enc}: {len(encs[enc])} opcodes", flush=True)
    return encs


def main(argv=None):
    os.makedirs(OUT, exist_ok=True)
    args = list(argv if argv is not None else sys.argv[1:])
    add = None
    if args[:1] == ["--add"]:  # --add VINTERP,LDSDIR gfx1100_w32: see add_encodings
        add, args = args[1].split(","), args[2:]
    only = args or None
    for target in TARGETS:
        for wave64 in (False, True):
            tag = f"{target}_w{64 if wave64 else 32}"
            if only and tag not in only:
                continue
            use_isa(target)
            g = Gen(target, wave64)
            g.side_tables()
            encs = {}
            try:
                if add:
                    encs = add_encodings(g, tag, add)
                else:
                    for enc in ENCS:
                        encs[enc] = {str(k): v for k, v in sorted(g.gen(enc).items())}
                        print(f"{tag} {enc}: {len(encs[enc])} opcodes", flush=True)
                    if "VOPD" in LAYOUTS:
                        for half, tab in g.gen_vopd().items():
                            encs[half] = {str(k): v for k, v in sorted(tab.items())}
                            print(f"{tag} {half}: {len(encs[half])} opcodes", flush=True)
                    for enc in ENCS_LATE:
                        if enc in LAYOUTS:
                            encs[enc] = {str(k): v for k, v in sorted(g.gen(enc).items())}
                            print(f"{tag} {enc}: {len(encs[enc])} opcodes", flush=True)
            finally:
                D.load_table = g._orig
            encs, cms = renumber_codemaps(strip_private(encs), g.cms)
            table_json.write(
                os.path.join(OUT, f"{tag}.json"),
                {
                    "generator": "tools/gen_isa_tables.py",
                    "llvm": "19",
                    "format": 2,
                    "target": target,
                    "wave64": wave64,
                    "notes": g.notes,
                    "simm16": g.extra,
                    "codemaps": cms,
                    "encodings": encs,
                },
                "tools/gen_isa_tables.py",
                f"python3 tools/gen_isa_tables.py {tag}",
            )
            for n in g.notes:
                print("  note:", n[:300])
            D.load_table.cache_clear()


if __name__ == "__main__":
    main()
