"""Bit layouts of the encodings (field name, low bit, width) and the major-opcode classifiers.

``LAYOUTS``/``FIXED``/``NWORDS``/``classify``/``encode`` are GFX10's (gfx1010, gfx1030);
``ISAS[generation]`` holds the same five for every generation the decoder reads ("gfx10",
"gfx11", "gfx12"; ``generation(target)`` names a target's).  Field names are the lowercase names
of AMD's RDNA ISA guides.  Used by the decoder and by tools/gen_isa_tables.py (which builds
probe words with `encode`).
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


# ----------------------------------------------------------------------------- GFX11 / GFX12
# The scalar formats, VOP1/VOP2/VOPC and VOP3 keep GFX10's layouts (VOP3's 10-bit opcode now
# also holds the promoted VOPC (0-255), VOP2 (256-383) and VOP1 (384-511) forms); SMEM moves its
# cache bits (GFX11) or its opcode and offset (GFX12); VOP3P's major is 9 bits; VOPD is new.
_SMEM11 = (
    ("sbase", 0, 6),
    ("sdata", 6, 7),
    ("dlc", 13, 1),
    ("glc", 14, 1),
    ("op", 18, 8),
    ("offset", 32, 21),
    ("soffset", 57, 7),
)
_SMEM12 = (
    ("sbase", 0, 6),
    ("sdata", 6, 7),
    ("op", 13, 6),
    ("cpol", 21, 5),  # LLVM's cache policy: scope [1:0] (bits 22:21), th [4:2] (bits 25:23)
    ("offset", 32, 24),
    ("soffset", 57, 7),
)
_VOPD = (
    ("src0x", 0, 9),
    ("vsrc1x", 9, 8),
    ("opy", 17, 5),
    ("opx", 22, 4),
    ("src0y", 32, 9),
    ("vsrc1y", 41, 8),
    ("vdsty", 49, 7),
    ("vdstx", 56, 8),
)
# VINTERP (v_interp_p10_f32 & co.): VOP3's shape with wait_exp in place of abs; LDSDIR
# (lds_param_load/lds_direct_load; GFX12's ds_param_load/ds_direct_load, VDSDIR): one dword
_VINTERP = (
    ("vdst", 0, 8),
    ("waitexp", 8, 3),
    ("opsel", 11, 4),
    ("clamp", 15, 1),
    ("op", 16, 7),
    ("src0", 32, 9),
    ("src1", 41, 9),
    ("src2", 50, 9),
    ("neg", 61, 3),
)
# ``attr`` is the guide's attrchan [9:8] and attr [15:10] as one field (LLVM prints them as one
# operand, ``attr5.y``: attr = value >> 2, channel = value & 3); GFX12 adds wait_vm_vsrc (bit 23)
_LDSDIR = (
    ("vdst", 0, 8),
    ("attr", 8, 8),
    ("waitvdst", 16, 4),
    ("op", 20, 2),
)
_LDSDIR12 = _LDSDIR + (("waitvsrc", 23, 1),)
LAYOUTS_GFX11 = dict(LAYOUTS, SMEM=_SMEM11, VOPD=_VOPD, VINTERP=_VINTERP, LDSDIR=_LDSDIR)
LAYOUTS_GFX12 = dict(LAYOUTS, SMEM=_SMEM12, VOPD=_VOPD, VINTERP=_VINTERP, LDSDIR=_LDSDIR12)
FIXED_GFX11 = dict(FIXED, VOP3P=(0b110011000, 23), VOPD=(0b110010, 26), VINTERP=(0xCD, 24), LDSDIR=(0xCE, 24))
NWORDS_GFX11 = dict(NWORDS, VOPD=2, VINTERP=2)

_MAJOR6_GFX11 = {
    0b110101: "VOP3",
    0b111101: "SMEM",
    0b110010: "VOPD",
    0b110110: "DS",
    0b110111: "FLAT",
    0b111000: "MUBUF",
    0b111010: "MTBUF",
    0b111100: "MIMG",
    0b111110: "EXP",
}
_MAJOR6_GFX12 = {
    0b110101: "VOP3",
    0b111101: "SMEM",
    0b110010: "VOPD",
    0b110110: "DS",
    0b111011: "VFLAT",
    0b110001: "VBUFFER",
    0b110100: "VIMAGE",
    0b111001: "VSAMPLE",
    0b111110: "EXP",
}
# 8-bit majors under 0b110011: VOP3P (bit 23 clear), VINTERP, LDSDIR (GFX12: VDSDIR)
_MAJOR8_GFX11 = {0xCD: "VINTERP", 0xCE: "LDSDIR"}


def _classifier(major6, major8):
    def classify_gen(w0: int) -> str:
        """Encoding family of a first dword of this generation."""
        if w0 & 0x80000000 == 0 or w0 >> 30 == 0b10:
            return classify(w0)
        if w0 >> 23 == 0b110011000:
            return "VOP3P"
        if w0 >> 26 == 0b110011:
            return major8.get(w0 >> 24, "")
        return major6.get(w0 >> 26, "")

    return classify_gen


classify_gfx11 = _classifier(_MAJOR6_GFX11, _MAJOR8_GFX11)
classify_gfx12 = _classifier(_MAJOR6_GFX12, _MAJOR8_GFX11)


_ALU11 = frozenset(
    ("SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3", "VOP3P", "VOPD")
    + ("VINTERP", "LDSDIR")
)

# the memory encodings decoded so far (wavelift/isa/memory.py, tables/memory_<target>.json)
_MEM11 = frozenset(("DS", "FLAT", "MUBUF", "MTBUF", "MIMG", "EXP"))
_MEM12 = frozenset(("DS", "VFLAT", "VBUFFER", "VIMAGE", "VSAMPLE", "EXP"))


class Isa:
    """One generation's layouts, fixed bits, dword counts and classifier."""

    def __init__(self, name, layouts, fixed, nwords, classify_fn, decoded):
        self.name = name
        self.decoded = decoded  # the encodings the decoder reads (others are refused by name)
        self.layouts = layouts
        self.fixed = fixed
        self.nwords = nwords
        self.classify = classify_fn

    def encode(self, enc: str, **f) -> list:
        """Words (without literal) of ``enc`` with the given fields (unset fields are 0)."""
        v = self.fixed[enc][0] << self.fixed[enc][1]
        for name, lo, w in self.layouts[enc]:
            x = f.get(name, 0)
            assert 0 <= x < (1 << w), (name, x)
            v |= x << lo
        n = self.nwords.get(enc, 1)
        return [(v >> (32 * i)) & 0xFFFFFFFF for i in range(n)]


ISAS = {
    "gfx10": Isa("gfx10", LAYOUTS, FIXED, NWORDS, classify, frozenset(LAYOUTS) | frozenset(_MAJOR6.values())),
    "gfx11": Isa("gfx11", LAYOUTS_GFX11, FIXED_GFX11, NWORDS_GFX11, classify_gfx11, _ALU11 | _MEM11),
    "gfx12": Isa("gfx12", LAYOUTS_GFX12, FIXED_GFX11, NWORDS_GFX11, classify_gfx12, _ALU11 | _MEM12),
}


def generation(target: str) -> str:
    """``gfx10``/``gfx11``/``gfx12`` for a target name (``gfx1100`` -> ``gfx11``)."""
    return target[:5] if target.startswith(("gfx11", "gfx12")) else "gfx10"
