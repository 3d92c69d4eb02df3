"""Fuzz target: the decoder and disassembler on random and structured words.

One case = one byte string of 1-3 dwords built from the seed (uniformly random words; a first
dword with an encoding's fixed prefix, or a VOP1/VOP2/VOPC DPP/SDWA marker, and random fields;
all-zero and all-ones words), decoded and disassembled for gfx1030 and gfx1010, wave32 and wave64,
whole and cut short.  Anything but `DecodeError` escaping is a failure; so is an instruction
whose size runs past the bytes it was given, or one without text.

    python3 tools/fuzz.py decoder --count 1000000 --jobs 2        (docs/fuzzing.md)
"""

from __future__ import annotations

import random
import struct

from wavelift.isa import DecodeError, decode_one, disassemble
from wavelift.isa.encodings import _MAJOR6, FIXED

TIME_LIMIT = (
    30.0  # (a case takes ~1 ms; a full GC of the decode caches can stall one for seconds on a loaded host)
)
CONTEXTS = (("gfx1030", False), ("gfx1030", True), ("gfx1010", False), ("gfx1010", True))
# (value, low bit) of every encoding's fixed top bits: the ALU ones and the memory majors
PREFIXES = tuple(sorted(set(FIXED.values()) | {(v, 26) for v in _MAJOR6}))
DPP_SDWA_SRC0 = (0xF9, 0xFA, 0xE9, 0xEA)  # SDWA, DPP16, DPP8, DPP8 with fi
EXT_TOPS = (0x3F << 25, 0x3E << 25, 0)  # VOP1, VOPC, VOP2 (op in bits 25..30)


def words_for(seed: int) -> list:
    r = random.Random(seed)
    n = r.choice((1, 2, 2, 3))
    ws = [r.getrandbits(32) for _ in range(n)]
    kind = r.randrange(8)
    if kind in (0, 1):  # uniformly random dwords
        pass
    elif kind in (2, 3, 4):  # an encoding's prefix, random fields
        v, lo = r.choice(PREFIXES)
        ws[0] = (v << lo) | (ws[0] & ((1 << lo) - 1))
    elif kind == 5:  # a DPP/SDWA marker in src0
        top = r.choice(EXT_TOPS)
        w = ws[0] & ~0x1FF | r.choice(DPP_SDWA_SRC0)
        ws[0] = top | (w & ((1 << 25) - 1)) if top else w & 0x7FFFFFFF
    elif kind == 6:  # all zeros / all ones, alone or after a prefix
        fill = r.choice((0, 0xFFFFFFFF))
        ws = [fill] * n
        if r.random() < 0.5:
            v, lo = r.choice(PREFIXES)
            ws[0] = (v << lo) | (fill & ((1 << lo) - 1))
    else:  # a literal marker (255) in every 9/8-bit source field
        v, lo = r.choice(PREFIXES)
        ws[0] = (v << lo) | (ws[0] & ((1 << lo) - 1))
        for sh in (0, 9, 18):
            if r.random() < 0.5:
                ws[0] = ws[0] & ~(0x1FF << sh) | (255 << sh)
        if n > 1:
            ws[1] = ws[1] & ~0x1FF | 255
    return ws


def _check(seed, code, target, wave64, base):
    where = f"seed {seed}: {code.hex()} on {target} wave{64 if wave64 else 32}"
    try:
        ins = decode_one(code, 0, target, wave64, base)
    except DecodeError:
        return
    except Exception as e:
        raise AssertionError(f"{where}: decode_one raised {type(e).__name__}: {e}") from e
    assert 4 <= ins.size <= len(code) and ins.size % 4 == 0, f"{where}: size {ins.size}"
    assert ins.offset == base and isinstance(ins.text, str) and ins.text, f"{where}: {ins!r}"
    try:
        disassemble(code, target, wave64, base)
    except DecodeError:
        pass
    except Exception as e:
        raise AssertionError(f"{where}: disassemble raised {type(e).__name__}: {e}") from e


def case(seed: int) -> None:
    ws = words_for(seed)
    code = struct.pack(f"<{len(ws)}I", *ws)
    base = (seed * 4) & 0xFFFFFC
    for target, wave64 in CONTEXTS:
        for cut in range(len(code), 0, -4):  # whole, then cut short a dword at a time
            _check(seed, code[:cut], target, wave64, base)
        _check(seed, code[:3], target, wave64, base)  # not a whole dword


def test_seeds():
    for seed in range(3000):
        case(seed)
