"""GFX12 VBUFFER decoding against llvm-objdump-19 (--mcpu=gfx1200/gfx1201, wave32 and wave64):
every opcode and mode of LLVM 19's VBUFFER table (isa/tables/memory_gfx1200.json, generated from
LLVM) at the edge values of each field — the 24-bit offset (0, 1, 0x7FFFFF, 0x800000, 0xFFFFFF),
SOFFSET (s0, s105, VCC_LO, TTMP15, NULL, M0, exec_lo, 0x7F), VADDR/VDATA at v0 and v255 (register
ranges that run past v255), SRSRC at s0/s96/TTMP12/an unaligned code, FORMAT 0/1/63/64/127, the
cache policy's th/scope and the reserved fields — each word our text and size equal to LLVM's, or
both invalid.  tests/isa/test_gfx11_sweep.py sweeps random words over the same table."""

from __future__ import annotations

import itertools
import struct

import pytest

from wavelift.isa import DecodeError, decode_one
from wavelift.isa.decoder import hardware_only
from wavelift.isa.llvm_oracle import NOP, have_llvm, llvm_disasm
from wavelift.isa.memory import load_memory_table

pytestmark = pytest.mark.skipif(not have_llvm(), reason="llvm-mc-19 not installed")
TAB = load_memory_table("gfx1200")
LAY = TAB["layout"]["VBUFFER"]
KEYS = ("op", "offen", "idxen", "tfe", "th0")
MAJOR = 0b110001 << 26
EDGES = {
    "offset": (0, 1, 0x7FFFFF, 0x800000, 0xFFFFFF),
    "soffset": (0, 105, 106, 123, 124, 125, 126, 127),
    "vaddr": (0, 255),
    "vdata": (0, 252, 255),
    "srsrc": (0, 96, 120, 13),
    "format": (0, 1, 63, 64, 127),
    "scope": (0, 3),
}


def _word(fields: dict) -> bytes:
    ws = [0, 0, 0]
    ws[0] = MAJOR
    for name, (w, lo, width) in LAY.items():
        ws[w] |= (fields.get(name, 0) & ((1 << width) - 1)) << lo
    return struct.pack("<3I", *ws)


def words() -> list[bytes]:
    """Per table entry: the base word, then each edge value of each field on its own, and a few
    combinations (offset x soffset, vaddr x vdata); the reserved fields set once each."""
    out = []
    for k, e in sorted(TAB["VBUFFER"].items()):
        if not e:
            continue
        fixed = dict(zip(KEYS, map(int, k.split(","))))
        fixed["th"] = fixed.pop("th0")
        base = dict(fixed, srsrc=8, soffset=124, vaddr=1, vdata=4)
        out.append(_word(base))
        for name, vals in EDGES.items():
            for v in vals:
                out.append(_word(dict(base, **{name: v})))
        for o, s in itertools.product((0x7FFFFF, 0x800000), (124, 125)):
            out.append(_word(dict(base, offset=o, soffset=s)))
        out.append(_word(dict(base, vaddr=255, vdata=255)))
        out.append(_word(dict(base, th=fixed["th"] | 6, scope=2)))
        for r in ("rsv0", "rsv1", "rsv2", "rsv3"):
            out.append(_word(dict(base, **{r: 1})))
    return out


def _ours(b: bytes, target: str, wave64: bool):
    try:
        ins = decode_one(b + NOP * 3, 0, target, wave64)
    except DecodeError:
        return None
    if hardware_only(ins):
        return "hardware only"
    return ins.text, ins.size


@pytest.mark.parametrize("target,wave64", [("gfx1200", False), ("gfx1200", True), ("gfx1201", False)])
def test_every_vbuffer_opcode_at_its_edges(target, wave64):
    items = words()
    ref = llvm_disasm(items, target, wave64)
    names = {e["name"] for e in TAB["VBUFFER"].values() if e}
    seen, bad, valid = set(), [], 0
    for b, r in zip(items, ref):
        o = _ours(b, target, wave64)
        if o != r:
            bad.append((b.hex(), o, r))
        elif r is not None:
            valid += 1
            seen.add(r[0].split()[0])
    assert not bad, bad[:5]
    assert seen == names, sorted(names - seen)  # every VBUFFER opcode LLVM 19 knows, decoded equal
    assert valid > len(items) // 2
