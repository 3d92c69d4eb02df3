#!/usr/bin/env python3
"""Decode a radv_capture submit directory into a short PM4 listing.

usage: pm4_listing.py SUBMITDIR [--mesa-src DIR] [--gfx gfx103|gfx10|gfx11] [--check]

Walks every top-level IB of capture.json in order, follows INDIRECT_BUFFER packets (CHAIN: the
stream continues there; otherwise: a called IB, listed indented), and prints one line per packet.
SET_*_REG packets list register names and values. Names come from Mesa's own machine-readable
tables in the 22.3.6 source tree: PKT3_* opcodes from src/amd/common/sid.h and register offsets
from src/amd/registers/<gfx>.json. --check verifies the compute dispatch facts (see README.md).
"""

import json
import os
import re
import struct
import sys

SH_BASE, CTX_BASE, CFG_BASE, UCFG_BASE = 0xB000, 0x28000, 0x8000, 0x30000
SET_REG = {
    0x68: ("CONFIG", CFG_BASE),
    0x69: ("CONTEXT", CTX_BASE),
    0x76: ("SH", SH_BASE),
    0x79: ("UCONFIG", UCFG_BASE),
}


def load_names(mesa, gfx):
    ops, regs = {}, {}
    sid = os.path.join(mesa, "src/amd/common/sid.h")
    if os.path.exists(sid):
        for m in re.finditer(r"#define\s+PKT3_(\w+)\s+(0x[0-9A-Fa-f]+)\b", open(sid).read()):
            ops.setdefault(int(m.group(2), 16), m.group(1))
    db = os.path.join(mesa, "src/amd/registers/%s.json" % gfx)
    if os.path.exists(db):
        for r in json.load(open(db))["register_mappings"]:
            if r.get("map", {}).get("to") == "mm":
                regs.setdefault(r["map"]["at"], r["name"])
    return ops, regs


class Memory:
    def __init__(self, d, cap):
        self.bos = []
        for b in cap["bos"]:
            data = open(os.path.join(d, b["file"]), "rb").read()
            self.bos.append((int(b["va"], 16), data))

    def dwords(self, va, n):
        for base, data in self.bos:
            if base <= va and va + 4 * n <= base + len(data):
                o = va - base
                return list(struct.unpack_from("<%dI" % n, data, o))
        raise KeyError("VA 0x%x (+%d dw) is in no captured BO" % (va, n))

    def bytes_at(self, va, n):
        for base, data in self.bos:
            if base <= va < base + len(data):
                return data[va - base : va - base + n]
        return None


def canon(va48):
    """48-bit GPU VA -> the sign-extended 64-bit form RADV's BOs carry"""
    va48 &= (1 << 48) - 1
    return va48 | (0xFFFF << 48) if va48 >> 47 else va48


def walk(mem, va, ndw, ops, regs, out, regstate, depth=0, events=None):
    dws = mem.dwords(va, ndw)
    i = 0
    ind = "  " * depth
    while i < len(dws):
        h = dws[i]
        typ = h >> 30
        if typ == 2:
            i += 1
            continue
        if typ != 3:
            out.append("%s0x%x+%d: type-%d header 0x%08x (stop)" % (ind, va, i * 4, typ, h))
            return
        op, cnt = (h >> 8) & 0xFF, (h >> 16) & 0x3FFF
        if op == 0x10 and cnt == 0x3FFF:  # header-only NOP padding
            i += 1
            continue
        body = dws[i + 1 : i + 2 + cnt]
        name = ops.get(op, "OP_0x%02X" % op)
        loc = "%s@0x%x+%04x" % (ind, va, i * 4)
        if op in SET_REG:
            kind, base = SET_REG[op]
            reg = base + body[0] * 4 if op != 0x79 else base + (body[0] & 0xFFFF) * 4
            parts = []
            for k, v in enumerate(body[1:]):
                r = reg + 4 * k
                regstate[r] = v
                parts.append("%s=0x%08x" % (regs.get(r, "0x%05x" % r), v))
            out.append("%s SET_%s_REG %s" % (loc, kind, " ".join(parts)))
        elif op == 0x3F:  # INDIRECT_BUFFER
            tva = canon(body[0] | (body[1] << 32))
            size, chain = body[2] & 0xFFFFF, (body[2] >> 20) & 1
            out.append(
                "%s INDIRECT_BUFFER va=0x%016x size_dw=%d %s" % (loc, tva, size, "CHAIN" if chain else "call")
            )
            if chain:
                return walk(mem, tva, size, ops, regs, out, regstate, depth, events)
            walk(mem, tva, size, ops, regs, out, regstate, depth + 1, events)
        else:
            out.append("%s %s %s" % (loc, name, " ".join("0x%08x" % x for x in body)))
            if name.startswith("DISPATCH") and events is not None:
                events.append((name, list(body), dict(regstate)))
        i += 2 + cnt


def main():
    a = sys.argv[1:]
    if not a or a[0] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if a else 2)
    d = a[0]
    mesa = (
        a[a.index("--mesa-src") + 1]
        if "--mesa-src" in a
        else os.environ.get("MESA_SRC", "/tmp/mesasrc/mesa-22.3.6")
    )
    gfx = a[a.index("--gfx") + 1] if "--gfx" in a else "gfx103"
    cap = json.load(open(os.path.join(d, "capture.json")))
    ops, regs = load_names(mesa, gfx)
    mem = Memory(d, cap)
    rev = {v: k for k, v in regs.items()}
    out, events, regstate = [], [], {}
    for s in cap["submits"]:
        for ib in s["ibs"]:
            out.append("== %s IB %s va=%s size_dw=%d" % (s["ip"], ib["role"], ib["va"], ib["size_dw"]))
            walk(mem, int(ib["va"], 16), ib["size_dw"], ops, regs, out, regstate, 0, events)
    print("\n".join(out))
    if "--check" not in a:
        return
    bad = 0
    for name, _body, st in events:
        lo, hi = st.get(rev["COMPUTE_PGM_LO"]), st.get(rev["COMPUTE_PGM_HI"])
        pgm = canon((lo << 8) | (hi << 40))
        need = [
            "COMPUTE_PGM_LO",
            "COMPUTE_PGM_HI",
            "COMPUTE_PGM_RSRC1",
            "COMPUTE_PGM_RSRC2",
            "COMPUTE_NUM_THREAD_X",
        ]
        if st.get(rev["COMPUTE_PGM_RSRC2"], 0) & 1:  # SCRATCH_EN: ring + its user SGPRs
            need += ["COMPUTE_TMPRING_SIZE", "COMPUTE_USER_DATA_0", "COMPUTE_USER_DATA_1"]
        missing = [n for n in need if rev.get(n) not in st]
        code = mem.bytes_at(pgm, 16)
        print(
            "check %s: program va=0x%016x first dwords %s; missing regs %s"
            % (
                name,
                pgm,
                code and " ".join("%08x" % x for x in struct.unpack("<4I", code)),
                missing or "none",
            )
        )
        bad += bool(missing) or code is None
    sys.exit(1 if bad or not events else 0)


if __name__ == "__main__":
    main()
