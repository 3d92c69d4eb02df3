"""Random-field sweep of our decoder vs LLVM 19 (used by tests/isa/test_sweep.py and
tests/isa/test_compiled.py)."""

from __future__ import annotations

import random
import struct

from wavelift.isa import DecodeError, decode_one
from wavelift.isa.decoder import hardware_only, load_table
from wavelift.isa.encodings import _MAJOR6, FIXED, ISAS, NWORDS, generation
from wavelift.isa.llvm_oracle import NOP, llvm_disasm

ENCS = ("SOP2", "SOP1", "SOPC", "SOPK", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P")
SRC_POOL = [
    0,
    1,
    5,
    7,
    40,
    101,
    104,
    105,
    106,
    107,
    108,
    110,
    123,
    124,
    125,
    126,
    127,
    128,
    129,
    160,
    192,
    193,
    208,
    235,
    236,
    237,
    238,
    239,
    240,
    241,
    242,
    243,
    244,
    245,
    246,
    247,
    248,
    251,
    252,
    253,
    254,
    255,
    256,
    257,
    300,
    511,
]
LITS = [0x3F800000, 0x3C00, 0x12345678, 0xFFFFFFFF, 0x40, 0x3E22F983, 0xBF000000, 0x3FF00000, 7]


def gen_words(enc, target, wave64, n_per_op, seed):
    rnd = random.Random(seed)
    tab = load_table(target, wave64)[enc]
    isa = ISAS[generation(target)]
    LAYOUTS, encode = isa.layouts, isa.encode
    items = []
    for op, e in sorted(tab.items()):
        lay = e.get("enc", enc)
        for k in range(n_per_op):
            f = {"op": op}
            for name, _lo, w in LAYOUTS[lay]:
                if name == "op":
                    continue
                if name in ("src0", "src1", "src2"):
                    v = rnd.choice(SRC_POOL) if rnd.random() < 0.5 else 256 + rnd.randrange(256)
                    if k == 0:
                        v = 256 + 2 * rnd.randrange(100)
                elif name in ("ssrc0", "ssrc1"):
                    v = (
                        rnd.choice([x for x in SRC_POOL if x < 256])
                        if rnd.random() < 0.7
                        else rnd.randrange(256)
                    )
                elif name in (
                    "abs",
                    "neg",
                    "opsel",
                    "clamp",
                    "omod",
                    "neg_hi",
                    "opsel_hi",
                    "opsel_hi2",
                    "glc",
                    "dlc",
                    "cpol",
                ):
                    v = rnd.randrange(1 << w) if rnd.random() < 0.4 else 0
                    if name in ("opsel_hi", "opsel_hi2") and rnd.random() < 0.6:
                        v = (1 << w) - 1
                elif name == "simm16":
                    v = (
                        rnd.choice([0, 1, 63, 64, 65, 0xFFFF, 0x8000])
                        if rnd.random() < 0.3
                        else rnd.randrange(1 << 16)
                    )
                elif name == "offset":
                    v = (
                        rnd.choice(
                            [0, 4, 0x10, 0xFFFFF, 0x100000]
                            + ([] if w == 21 else [(1 << w) - 1, 1 << (w - 1)])
                        )
                        if rnd.random() < 0.5
                        else rnd.randrange(1 << w)
                    )
                else:
                    v = rnd.randrange(1 << w) if rnd.random() < 0.5 else 2 * rnd.randrange(1 << (w - 1))
                f[name] = v
            words = encode(lay, **f)
            rej = e.get("rej", 0)
            if rej and rnd.random() < 0.85:
                # mostly keep the bits LLVM rejects clear, so that the rest gets exercised
                val = sum(w << (32 * i) for i, w in enumerate(words)) & ~rej
                words = [(val >> (32 * i)) & 0xFFFFFFFF for i in range(len(words))]
            words = words + [rnd.choice(LITS)]
            items.append((op, struct.pack(f"<{len(words)}I", *words)))
    return items


def compare(enc, target, wave64, n_per_op=4, seed=1):
    """Returns (opcodes seen, list of mismatches (bytes, ours, llvm))."""
    items = gen_words(enc, target, wave64, n_per_op, seed)
    ref = llvm_disasm([b for _, b in items], target, wave64)
    bad = []
    ops = set()
    for (op, b), r in zip(items, ref):
        try:
            ins = decode_one(b, 0, target, wave64)
            ours = (ins.text, ins.size)
        except DecodeError:
            ours = None
        if ours != r:
            bad.append((b.hex(), ours, r))
        elif r is not None:
            ops.add(op)
    return ops, bad


def compare_many(encs, target, wave64, n_per_op=4, seed=1, hardware=None):
    """compare() for several encodings with a single LLVM run:
    {enc: (opcodes matched, mismatches, words tried)}.  ``hardware``: a dict that counts, per
    (enc, named category), the words LLVM rejects that we decode as the hardware runs them
    (``isa.decoder.hardware_only``, decision 0023); without it they are mismatches."""
    items = []
    for k, enc in enumerate(encs):
        items += [(enc, op, b) for op, b in gen_words(enc, target, wave64, n_per_op, seed * 1000 + k)]
    ref = llvm_disasm([b for _, _, b in items], target, wave64)
    out = {enc: (set(), [], 0) for enc in encs}
    for (enc, op, b), r in zip(items, ref):
        ops, bad, n = out[enc]
        out[enc] = (ops, bad, n + 1)
        try:
            ins = decode_one(b, 0, target, wave64)
            ours = (ins.text, ins.size)
        except DecodeError:
            ins = ours = None
        cat = hardware_only(ins) if ins is not None and hardware is not None else None
        if cat and r is None:
            hardware[enc, cat] = hardware.get((enc, cat), 0) + 1
        elif ours != r:
            bad.append((b.hex(), ours, r))
        elif r is not None:
            ops.add(op)
    return out


# Every encoding's major bits (value, low bit) and dwords; the memory encodings' majors are the
# top 6 bits (wavelift/isa/encodings.py classify).
EDGE_MAJORS = dict(FIXED)
EDGE_MAJORS.update({enc: (top6, 26) for top6, enc in _MAJOR6.items()})
EDGE_NWORDS = dict(NWORDS, DS=2, FLAT=2, MUBUF=2, MTBUF=2, MIMG=2, EXP=2)


def edge_words():
    """[(label, bytes)]: each encoding's all-zero and all-ones words (major bits kept, every
    other bit of its dwords 0 or 1; VOP1/VOP2/VOPC also with the DPP16, DPP8 and SDWA marks in
    src0), each followed by a dword of the same fill (a literal or the DPP/SDWA dword, if the
    instruction takes one), and the plain 0x00000000 and 0xFFFFFFFF dwords."""
    items = {b"\0" * 4: "zero dword", b"\xff" * 4: "ones dword"}
    for enc, (major, lo) in sorted(EDGE_MAJORS.items()):
        n = EDGE_NWORDS.get(enc, 1)
        for fill, name in ((0, "zero"), (1, "ones")):
            rest = (1 << (32 * n + 32)) - 1 if fill else 0
            val = (rest & ~(((1 << (32 - lo)) - 1) << lo)) | (major << lo)
            items.setdefault(val.to_bytes(4 * n + 4, "little"), f"{enc} {name}")
            if enc in ("VOP1", "VOP2", "VOPC"):  # their DPP16/DPP8/SDWA forms: src0 marks them
                for mark, form in ((0xFA, "DPP16"), (0xE9, "DPP8"), (0xEA, "DPP8 fi"), (0xF9, "SDWA")):
                    v = (val & ~0x1FF) | mark
                    items.setdefault(v.to_bytes(8, "little"), f"{enc} {form} {name}")
    return [(label, b) for b, label in items.items()]


def compare_edges(target, wave64):
    """edge_words() decoded by us and by LLVM 19 (the same bytes, followed by s_nops on both
    sides): [(label, bytes hex, ours, llvm)] where they differ, and the number compared."""
    items = edge_words()
    ref = llvm_disasm([b for _, b in items], target, wave64)
    bad = []
    for (label, b), r in zip(items, ref):
        try:
            ins = decode_one(b + NOP * 3, 0, target, wave64)
            ours = (ins.text, ins.size)
        except DecodeError:
            ours = None
        if ours != r:
            bad.append((label, b.hex(), ours, r))
    return bad, len(items)
