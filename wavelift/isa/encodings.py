"""Bit layouts of GFX10 encodings (field name, low bit, width) and the major-opcode classifier.

Field names are the lowercase names of AMD's RDNA ISA guide.  Used by the decoder and by
tools/gen_isa_tables.py (which builds probe words with `encode`).
"""

from __future__ import annotations

LAYOUTS = {
    "SOP2": (("ssrc0", 0, 8), ("ssrc1", 8, 8), ("sdst", 16, 7), ("op", 23, 7)),
    "SOPK": (("simm16", 0, 16), ("sdst", 16, 7), ("op", 23, 5)),
    "SOP1": (("ssrc0", 0, 8), ("op", 8, 8), ("sdst", 16, 7)),
    "SOPC": (("ssrc0", 0, 8), ("ssrc1", 8, 8), ("op", 16, 7)),
    "SOPP": (("simm16", 0, 16), ("op", 16, 7)),
    "SMEM": (
        ("sbase", 0, 6),
        ("sdata", 6, 7),
        ("dlc", 14, 1),
        ("glc", 16, 1),
        ("op", 18, 8),
        ("offset", 32, 21),
        ("soffset", 57, 7),
    ),
    "VOP2": (("src0", 0, 9), ("vsrc1", 9, 8), ("vdst", 17, 8), ("op", 25, 6)),
    "VOP1": (("src0", 0, 9), ("op", 9, 8), ("vdst", 17, 8)),
    "VOPC": (("src0", 0, 9), ("vsrc1", 9, 8), ("op", 17, 8)),
    "VOP3": (
        ("vdst", 0, 8),
        ("abs", 8, 3),
        ("opsel", 11, 4),
        ("clamp", 15, 1),
        ("op", 16, 10),
        ("src0", 32, 9),
        ("src1", 41, 9),
        ("src2", 50, 9),
        ("omod", 59, 2),
        ("neg", 61, 3),
    ),
    "VOP3B": (
        ("vdst", 0, 8),
        ("sdst", 8, 7),
        ("clamp", 15, 1),
        ("op", 16, 10),
        ("src0", 32, 9),
        ("src1", 41, 9),
        ("src2", 50, 9),
        ("omod", 59, 2),
        ("neg", 61, 3),
    ),
    "VOP3P": (
        ("vdst", 0, 8),
        ("neg_hi", 8, 3),
        ("opsel", 11, 3),
        ("opsel_hi2", 14, 1),
        ("clamp", 15, 1),
        ("op", 16, 7),
        ("src0", 32, 9),
        ("src1", 41, 9),
        ("src2", 50, 9),
        ("opsel_hi", 59, 2),
        ("neg", 61, 3),
    ),
}
# fixed high bits: (value, low bit)
FIXED = {
    "SOP2": (0b10, 30),
    "SOPK": (0b1011, 28),
    "SOP1": (0b101111101, 23),
    "SOPC": (0b101111110, 23),
    "SOPP": (0b101111111, 23),
    "SMEM": (0b111101, 26),
    "VOP2": (0b0, 31),
    "VOP1": (0b0111111, 25),
    "VOPC": (0b0111110, 25),
    "VOP3": (0b110101, 26),
    "VOP3B": (0b110101, 26),
    "VOP3P": (0b110011, 26),
}
NWORDS = {"SMEM": 2, "VOP3": 2, "VOP3B": 2, "VOP3P": 2}


def encode(enc: str, **f) -> list:
    """Words (without literal) of ``enc`` with the given fields (unset fields are 0)."""
    v = FIXED[enc][0] << FIXED[enc][1]
    for name, lo, w in LAYOUTS[enc]:
        x = f.get(name, 0)
        assert 0 <= x < (1 << w), (name, x)
        v |= x << lo
    n = NWORDS.get(enc, 1)
    return [(v >> (32 * i)) & 0xFFFFFFFF for i in range(n)]


def classify(w0: int) -> str:
    """Encoding family of a first dword (VOP3 covers VOP3B; FLAT covers GLOBAL/SCRATCH)."""
    if w0 & 0x80000000 == 0:
        t = w0 >> 25
        if t == 0x3F:
            return "VOP1"
        if t == 0x3E:
            return "VOPC"
        return "VOP2"
    if w0 >> 30 == 0b10:
        t9 = w0 >> 23
        if t9 == 0b101111101:
            return "SOP1"
        if t9 == 0b101111110:
            return "SOPC"
        if t9 == 0b101111111:
            return "SOPP"
        if w0 >> 28 == 0b1011:
            return "SOPK"
        return "SOP2"
    return _MAJOR6.get(w0 >> 26, "")


_MAJOR6 = {
    0b110101: "VOP3",
    0b110011: "VOP3P",
    0b111101: "SMEM",
    0b110110: "DS",
    0b110111: "FLAT",
    0b111000: "MUBUF",
    0b111010: "MTBUF",
    0b111100: "MIMG",
    0b111110: "EXP",
    0b110010: "VINTRP",
}
