#!/usr/bin/env python3
"""Generate wavelift/isa/tables/<target>_w<32|64>.json by asking LLVM 19 about every opcode.

    python3 tools/gen_isa_tables.py            # all targets, both wave sizes

For every encoding and opcode value a probe word with *sentinel* field values (vdst=20, src0=40,
src1/vsrc1=60, src2=80, VOP3B sdst=10 ...) is disassembled; the printed line becomes a template
(fixed text + operand slots, register widths read from ``v[40:41]``-style ranges).  Each source
slot is then probed with inline constants and literals and given the constant type
(b32/f16/i16/f64/b64) whose printing matches LLVM on every probe.  VOP3 modifier support
(abs/neg/clamp/omod/op_sel) is probed the same way.  No opcode is typed in by hand.
"""
from __future__ import annotations

import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from wavelift.isa import decoder as D  # noqa: E402
from wavelift.isa.encodings import LAYOUTS, encode  # noqa: E402
from wavelift.isa.llvm_oracle import llvm_disasm  # noqa: E402

OUT = os.path.join(os.path.dirname(__file__), "..", "wavelift", "isa", "tables")
TARGETS = ("gfx1030", "gfx1010")
ENCS = ("SOP2", "SOP1", "SOPC", "SOPK", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P")
SENT = {"vdst": 20, "sdst": 20, "src0": 40, "ssrc0": 40, "src1": 60, "vsrc1": 60, "ssrc1": 60,
        "src2": 80, "sdata": 40, "sbase": 6, "soffset": 125}
NUM2FIELD = {20: ("vdst", "sdst"), 40: ("src0", "ssrc0", "sdata"), 60: ("src1", "vsrc1", "ssrc1"),
             80: ("src2",), 10: ("sdst", "sbase"), 12: ("sdst",)}
SIMM = 0x1234
SMEM_OFF = 0x1234
REG = re.compile(r"(?<![\w\[])(v|s|ttmp)(?:(\d+)|\[(\d+):(\d+)\])(?![\w\]])")
SIMM_FMTS = ("hex", "dec", "inl", "waitcnt", "depctr", "sendmsg", "hwreg", "version")
TYPES = ("b32", "f16", "i16", "f64", "b64")
CONST_CODES = [128, 129, 150, 192, 193, 200, 208, 240, 241, 242, 243, 244, 245, 246, 247, 248]
LITS = [0x3F800000, 0x3C00, 0x12343C00, 0x3FF00000, 0x3FC45F30, 0x12345678, 0xFFFFFFFF,
        0xFFFFFFF0, 0x41, 0xFFFF, 0x3118, 0x3E22F983, 0x40, 0xBC00, 0xC4000000]


def wbytes(words):
    return struct.pack(f"<{len(words)}I", *words)


def fields_of(enc):
    return {n for n, _, _ in LAYOUTS[enc]}


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


def field_width(enc, name):
    for n, _, w in LAYOUTS[enc]:
        if n == name:
            return w
    return 0


def make_template(enc, text, simm_fmt=None):
    """Split LLVM's line into (printed mnemonic, parts)."""
    mn, _, rest = text.partition(" ")
    parts = []
    if rest:
        parts.append(" ")
    pos = 0
    flds = fields_of(enc)
    used = set()
    srci = {"src0": 0, "src1": 1, "src2": 2}
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
        parts.append(rest[pos:m.start()])
        w = field_width(enc, fld)
        if fld == "sbase":
            k = "s"
        elif w == 9 or fld in ("ssrc0", "ssrc1"):
            k = "src"
        elif pre == "v":
            k = "v"
        else:
            k = "s"
        p = {"f": fld, "k": k, "n": n}
        if k == "src" and fld in srci:
            p["i"] = srci[fld]
        parts.append(p)
        pos = m.end()
    parts.append(rest[pos:])
    parts = [p for p in parts if p != ""]
    # merge adjacent strings
    out = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        else:
            out.append(p)
    return mn, out


def replace_text(parts, needle, spec):
    out = []
    done = False
    for p in parts:
        if isinstance(p, str) and not done and needle in p:
            a, b = p.split(needle, 1) if not needle.startswith(" ") else p.rsplit(needle, 1)
            if a:
                out.append(a)
            out.append(spec)
            if b:
                out.append(b)
            done = True
        else:
            out.append(p)
    return out, done


def base_name(mn):
    for suf in ("_e32", "_e64", "_dpp", "_sdwa"):
        if mn.endswith(suf):
            return mn[: -len(suf)], suf[1:]
    return mn, ""


def entry_text(e, enc, f, lit, target, wave64):
    t, _ = D.render(e, enc, f, lit, target, wave64)
    return t + D._suffix(e, f)


class Gen:
    def __init__(self, target, wave64):
        self.target = target
        self.wave64 = wave64
        self.extra = {"sendmsg": {}, "hwreg": {}, "version": {}}
        self.notes = []

    def ask(self, items):
        return llvm_disasm([wbytes(w) for w in items], self.target, self.wave64)

    # ---------------------------------------------------------------- simm16 side tables
    def side_tables(self):
        # hwreg names: s_getreg_b32 (SOPK op 0x12) with offset 0, size 32
        items = [encode("SOPK", op=0x12, sdst=20, simm16=i | (31 << 11)) for i in range(64)]
        for i, r in enumerate(self.ask(items)):
            m = r and re.search(r"hwreg\(([A-Z_0-9]+)\)", r[0])
            if m:
                self.extra["hwreg"][str(i)] = m.group(1)
        items = [encode("SOPP", op=0x10, simm16=i) for i in range(1024)]
        for i, r in enumerate(self.ask(items)):
            if r and "sendmsg(" in r[0]:
                self.extra["sendmsg"][str(i)] = r[0].split(" ", 1)[1]
        items = [encode("SOPK", op=1, simm16=i) for i in range(256)] + \
                [encode("SOPK", op=1, simm16=i | 0x8000) for i in range(256)]
        for i, r in enumerate(self.ask(items)):
            v = i if i < 256 else (i - 256) | 0x8000
            if r and "UC_VERSION" in r[0]:
                self.extra["version"][str(v)] = r[0].split(" ", 1)[1]
        D.load_table.cache_clear()
        D.load_table.__wrapped__  # noqa: B018
        self._install_side()

    def _install_side(self):
        side = self.extra
        orig = D.load_table

        def fake(target, wave64):
            return {"_simm16": side}
        D.load_table = fake  # only used by simm16_text during generation
        self._orig = orig

    # ---------------------------------------------------------------- encodings
    def gen(self, enc):
        opbits = field_width(enc, "op")
        ops = list(range(1 << opbits))
        base = sentinel_fields(enc)
        items = [encode(enc, **dict(base, op=o)) + [0xDEADBEEF] for o in ops]
        res = self.ask(items)
        self.base = {o: base for o in ops}
        zero = {o: [] for o in ops}
        b2 = sentinel_fields(enc, vreg_src=False)
        variants = [(dict(base, src2=0), ["src2"]), (dict(base, src1=0, src2=0), ["src1", "src2"]),
                    (dict(base, src0=0, src1=0, src2=0), ["src0", "src1", "src2"]),
                    (dict(b2), []), (dict(b2, src2=0), ["src2"]),
                    (dict(base, vdst=0), ["vdst"]), (dict(base, vdst=0, src0=0, src1=0, src2=0), ["vdst", "src0", "src1", "src2"])]
        if enc in ("SOP1", "SOP2", "SOPC"):
            variants = [(dict(base, ssrc0=0), ["ssrc0"]), (dict(base, sdst=0), ["sdst"]),
                        (dict(base, ssrc1=0), ["ssrc1"])]
        if enc == "SMEM":
            variants = [(dict(base, sdata=0), ["sdata"]), (dict(base, sbase=0), ["sbase"]),
                        (dict(base, sdata=0, sbase=0), ["sdata", "sbase"]),
                        (dict(base, sdata=0, sbase=0, offset=0), ["sdata", "sbase", "offset"])]
        if enc in ("SOPK",):
            variants = [(dict(base, sdst=0), ["sdst"])]
        for vb, zf in variants:
            vb = {k: v for k, v in vb.items() if k in fields_of(enc)}
            zf = [z for z in zf if z in fields_of(enc) and base.get(z)]
            if not zf and vb == base:
                continue
            miss = [o for o, r in zip(ops, res) if r is None]
            if not miss:
                break
            r2 = self.ask([encode(enc, **dict(vb, op=o)) + [0xDEADBEEF] for o in miss])
            for o, r in zip(miss, r2):
                if r is not None:
                    res[o] = r
                    self.base[o] = vb
                    zero[o] = zf
        table = {}
        from wavelift.isa.encodings import classify
        for o, r in zip(ops, res):
            if r is None or classify(encode(enc, op=o)[0]) != enc.replace("VOP3P", "VOP3P"):
                continue
            text, size = r
            mn, parts = make_template(enc, text)
            name, variant = base_name(mn)
            if enc in ("VOP3", "VOP3P") and not variant:
                variant = ""
            e = {"name": name, "name_p": mn, "parts": parts}
            if zero[o]:
                e["zero"] = zero[o]
            if variant:
                e["variant"] = variant
            if enc in ("SOPK", "SOPP"):
                self.simm_format(enc, o, e, self.base[o])
                if enc == "SOPK" and size == 8:
                    e["lit"] = 1
                    e["parts"], _ = replace_text(e["parts"], "0xdeadbeef", {"f": "literal", "k": "lit"})
            if enc in ("VOP2", "VOP3") and size == 8 + 4 * (enc == "VOP3"):
                e["lit"] = 1
                e["parts"], _ = replace_text(e["parts"], "0xdeadbeef",
                                             {"f": "literal", "k": "lit", "t": "hex"})
            if enc == "SMEM":
                self.smem_shape(o, e, text)
            table[o] = e
        if enc == "VOP3":
            self.vop3b(table, base)
        if enc in ("VOP3", "VOP3P"):
            self.vop3_mods(enc, table, base)
        self.types(enc, table, base)
        return table

    def simm_format(self, enc, o, e, base):
        vals = [0, 1, 7, 63, 64, 65, 0x8000, 0xFFFF, SIMM, 0x3F, 0xF801, 0x7FFF, 0x0C07, 0xFF9F, 0x1F80]
        sd = dict(base, op=o)
        res = self.ask([encode(enc, **dict(sd, simm16=v)) + [0xDEADBEEF] for v in vals])
        # where does the simm16 go? find the format whose text of SIMM is in the sentinel line
        for fmt in SIMM_FMTS:
            try:
                needle = D.simm16_text(fmt, SIMM, self.target, self.wave64)
            except Exception:
                continue
            parts, ok = replace_text(e["parts"], needle, {"f": "simm16", "k": "simm16", "fmt": fmt})
            if not ok:
                continue
            cand = dict(e, parts=parts)
            good = True
            for v, r in zip(vals, res):
                f = dict(sd, simm16=v)
                if r is None or entry_text(cand, enc, f, None, self.target, self.wave64) != r[0]:
                    good = False
                    break
            if good:
                e["parts"] = parts
                return
        # simm16 not printed at all (s_wakeup ...): LLVM rejects non-zero values
        if all(r is None for v, r in zip(vals, res) if v) and res[0] is not None:
            e["bad_simm_nonzero"] = 1
            return
        # s_endpgm style: value omitted when 0
        for fmt in ("dec",):
            parts = [" ", {"f": "simm16", "k": "simm16", "fmt": fmt}]
            ok = all(r is not None and r[0] == (e["name_p"] if v == 0 else f"{e['name_p']} {v}")
                     for v, r in zip(vals, res))
            if ok:
                e["parts"] = parts
                e["omit0"] = 1
                return
        self.notes.append(f"{enc} op {o} {e['name']}: no simm16 format matches: {e['parts']} {[r and r[0] for r in res]}")

    def smem_shape(self, o, e, text):
        # parts up to the offset; the offset/soffset are rendered by kind "smem_off"
        parts, ok = replace_text(e["parts"], f"{SMEM_OFF:#x}", {"f": "offset", "k": "smem_off"})
        if len(parts) > 1:
            e["glc"] = e["dlc"] = 1
        e["parts"] = parts

    def vop3b(self, table, base):
        ops = sorted(table)
        res = self.ask([encode("VOP3B", **dict(self.base[o], op=o, sdst=12)) + [0xDEADBEEF] for o in ops])
        for o, r in zip(ops, res):
            if r is None:
                continue
            if re.search(r"(?<![\w\[])s(12|\[12:13\])(?![\w\]])", r[0]):
                mn, parts = make_template("VOP3B", r[0])
                e = table[o]
                e["enc"] = "VOP3B"
                e["parts"] = parts

    def vop3_mods(self, enc, table, base):
        ops = sorted(table)
        lay = lambda o: table[o].get("enc", enc)  # noqa: E731
        probes = []
        for o in ops:
            b = dict(self.base[o], op=o)
            if lay(o) == "VOP3B":
                b = dict(b, sdst=12)
            probes.append([encode(lay(o), **dict(b, neg=7))])
            if lay(o) == "VOP3":
                probes.append([encode("VOP3", **dict(b, abs=7))])
                probes.append([encode("VOP3", **dict(b, opsel=15))])
            elif lay(o) == "VOP3P":
                probes.append([encode("VOP3P", **dict(b, opsel=7))])
                probes.append([encode(lay(o), **b)])
            else:
                probes.append([encode(lay(o), **b)])
                probes.append([encode(lay(o), **b)])
            probes.append([encode(lay(o), **dict(b, clamp=1))])
            probes.append([encode(lay(o), **dict(b, omod=1))] if lay(o) != "VOP3P" else [encode(lay(o), **b)])
        res = self.ask([p[0] + [0xDEADBEEF] for p in probes])
        for i, o in enumerate(ops):
            e = table[o]
            rn, ra, ro, rc, rm = res[5 * i: 5 * i + 5]
            mods = 0
            srcs = [p for p in e["parts"] if isinstance(p, dict) and p.get("i") is not None]
            if lay(o) != "VOP3P":
                for p in srcs:
                    tok = "-" + D.vreg_name(SENT[p["f"]], p["n"])
                    if rn and tok in rn[0]:
                        mods |= 1 << p["i"]
                if mods:
                    e["mods"] = mods
            if rc and " clamp" in rc[0]:
                e["clamp"] = 1
            if rm and " mul:2" in rm[0]:
                e["omod"] = 1
            if ro:
                m = re.search(r"op_sel:\[([01,]+)\]", ro[0])
                if m:
                    e["opsel"] = len(m.group(1).split(","))
            if lay(o) == "VOP3P":
                e["vop3p"] = 1

    def types(self, enc, table, base):
        jobs = []
        for o, e in table.items():
            lay = e.get("enc", enc)
            b = dict(self.base[o], op=o)
            if lay == "VOP3B":
                b["sdst"] = 12
            for p in e["parts"]:
                if isinstance(p, dict) and p["k"] == "src":
                    for c in CONST_CODES:
                        jobs.append((o, p, lay, dict(b, **{p["f"]: c}), 0xDEADBEEF if e.get("lit") else None))
                    for lit in LITS:
                        jobs.append((o, p, lay, dict(b, **{p["f"]: 255}), lit))
        res = self.ask([encode(lay, **f) + ([lit] if lit is not None else [0xDEADBEEF])
                        for (_, _, lay, f, lit) in jobs])
        by = {}
        for (o, p, lay, f, lit), r in zip(jobs, res):
            by.setdefault((o, id(p)), (o, p, lay, []))[3].append((f, lit, r))
        for (o, _), (_, p, lay, obs) in by.items():
            e = table[o]
            best = None
            for t in TYPES + tuple(x + "!" for x in TYPES):
                p["t"] = t
                bad = 0
                for f, lit, r in obs:
                    if r is None:
                        continue
                    got = entry_text(e, lay, f, lit, self.target, self.wave64)
                    if got != r[0]:
                        bad += 1
                        ex = (got, r[0])
                if best is None or bad < best[1]:
                    best = (t, bad, ex if bad else None)
                if bad == 0:
                    break
            p["t"] = best[0]
            if best[1]:
                self.notes.append(f"{enc} op {o} {e['name']} {p['f']}: best type {best[0]} "
                                  f"misses {best[1]} probes, e.g. {best[2]}")
            badcodes = sorted({f[p["f"]] for f, lit, r in obs if r is None})
            if badcodes:
                e.setdefault("bad", {})[p["f"]] = badcodes


def main(argv=None):
    os.makedirs(OUT, exist_ok=True)
    only = sys.argv[1:] or None
    for target in TARGETS:
        for wave64 in (False, True):
            if only and f"{target}_w{64 if wave64 else 32}" not in only:
                continue
            g = Gen(target, wave64)
            g.side_tables()
            encs = {}
            for enc in ENCS:
                encs[enc] = {str(k): v for k, v in sorted(g.gen(enc).items())}
                print(f"{target} w{64 if wave64 else 32} {enc}: {len(encs[enc])} opcodes", flush=True)
            D.load_table = g._orig
            path = os.path.join(OUT, f"{target}_w{64 if wave64 else 32}.json")
            with open(path, "w") as f:
                json.dump({"generator": "tools/gen_isa_tables.py", "llvm": "19",
                           "target": target, "wave64": wave64, "notes": g.notes,
                           "simm16": g.extra, "encodings": encs}, f, separators=(",", ":"))
            for n in g.notes:
                print("  note:", n)


if __name__ == "__main__":
    main()
