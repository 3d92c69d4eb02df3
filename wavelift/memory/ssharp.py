"""GFX10/10.3 sampler descriptors (S#, 4 dwords): where each field lies and what its values
are named, from the tables tools/gen_image_tables.py generates out of Mesa's register database
(``ssharp`` field layouts of SQ_IMG_SAMP_WORD0..3, the SQ_TEX_* enums), never typed.

frontend/sample.py reads the same fields in IR (an S# is usually loaded by the program at run
time); this module gives their places and the host-side decode (tests, reports).

One field is listed twice by the register database: gfx10-rsrc.json's SQ_IMG_SAMP_WORD2 type
carries BORDER_COLOR_PTR [11:0] and BORDER_COLOR_TYPE [13:12] overlapping LOD_BIAS (a layout of
older chips kept in the shared register type), while SQ_IMG_SAMP_WORD3 carries them at [11:0]
and [31:30].  RADV 22.3 writes them in word 3 (radv_init_sampler: ``S_008F3C_BORDER_COLOR_TYPE``
and ``S_008F3C_BORDER_COLOR_PTR_GFX6``, register 0x008F3C = SQ_IMG_SAMP_WORD3) and LOD_BIAS in
word 2 (``S_008F38_LOD_BIAS``), so those two names resolve to word 3 here (``WORD_OF``).

GFX11 (decision 0044) has its own S# layout in gfx11-rsrc.json (tables/gfx11_image.json
``ssharp``, same generator): every field where GFX10.3 has it but BORDER_COLOR_PTR, moved to word
3 [29:18] (RADV 22.3.6: ``S_008F3C_BORDER_COLOR_PTR_GFX11``), word 3 [17:0] reserved, and word 2
bits 28 and 31 reserved (GFX10's MIP_POINT_PRECLAMP and DERIV_ADJUST_EN are gone); BLEND_ZERO_PRT
is named BLEND_PRT.  The value enums (SQ_TEX_*) and BC_SWIZZLE are GFX10's (RADV's radv_init_sampler
writes the same V_008F30_* values on GFX11).  ``field_bits(name, gfx11=True)`` and
``reserved(gfx11)`` give the places per generation.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from . import layout, tsharp

# a name the register database places in more than one word -> the word drivers write it in
WORD_OF = {"BORDER_COLOR_PTR": 3, "BORDER_COLOR_TYPE": 3}


@cache
def _fields11() -> dict[str, tuple[int, int, int]]:
    return {n: (int(w), lo, hi) for w, fl in tsharp.tables11()["ssharp"].items() for n, lo, hi in fl}


@cache
def field_bits(name: str, gfx11: bool = False) -> tuple[int, int, int]:
    """(word, low bit, high bit) of S# field ``name``, the same on GFX10 and GFX10.3; GFX11's own
    with ``gfx11`` (KeyError: no such field there)."""
    if gfx11:
        return _fields11()[name]
    found = {
        (w, lo, hi)
        for g in (False, True)
        for n, w, lo, hi in tsharp._fields("ssharp", g)
        if n == name and WORD_OF.get(name, w) == w
    }
    if len(found) != 1:
        raise KeyError(f"{name}: not one place in the S# on GFX10 and GFX10.3")
    return found.pop()


@cache
def reserved(gfx11: bool = False) -> dict[int, int]:
    """Per S# word 0..3, the bits no field of the generation names (GFX10/10.3: word 3 [29:12];
    GFX11: word 2 bits 28 and 31, word 3 [17:0])."""
    if gfx11:
        places = list(_fields11().values())
    else:
        names = {n for g in (False, True) for n, _w, _lo, _hi in tsharp._fields("ssharp", g)}
        places = [field_bits(n) for n in names]
    return tsharp.unnamed_bits(places, range(4))


@cache
def enum(name: str) -> dict[str, int]:
    """The values of a generated SQ_* enum by their names without the common prefix:
    ``enum("SQ_TEX_CLAMP")["WRAP"] == 0``."""
    out = {}
    for v, full in layout.tables()["enums"][name].items():
        short = full
        for p in (
            "SQ_TEX_XY_FILTER_",
            "SQ_TEX_Z_FILTER_",
            "SQ_TEX_MIP_FILTER_",
            "SQ_TEX_BORDER_COLOR_",
            "SQ_TEX_DEPTH_COMPARE_",
            "SQ_IMG_FILTER_MODE_",
            "SQ_TEX_",
        ):
            if full.startswith(p):
                short = full[len(p) :]
                break
        out[short] = int(v)
    return out


@cache
def bc_swizzle() -> dict[str, int]:
    """BC_SWIZZLE (T# word 3) values by name: ``{"XYZW": 0, ...}``."""
    return {n[len("BC_SWIZZLE_") :]: int(v) for v, n in layout.tables()["bc_swizzle"].items()}


def decode(words: Sequence[int], gfx11: bool = False) -> dict[str, int]:
    """Every named field of an S# (4 words), BORDER_COLOR_* from word 3; GFX11's with ``gfx11``."""
    w = [int(x) & 0xFFFFFFFF for x in words]
    if len(w) != 4:
        raise ValueError("an S# is 4 dwords")
    if gfx11:
        names = set(_fields11())
    else:
        names = {n for g in (False, True) for n, _w, _lo, _hi in tsharp._fields("ssharp", g)}
    out = {}
    for n in sorted(names):
        word, lo, hi = field_bits(n, gfx11)
        out[n] = (w[word] >> lo) & ((1 << (hi - lo + 1)) - 1)
    return out


def encode(gfx11: bool = False, **fields: int) -> list[int]:
    """An S# with the named fields set (the others 0): for tests and the RADV-like launcher;
    GFX11's places with ``gfx11``."""
    w = [0, 0, 0, 0]
    for n, v in fields.items():
        word, lo, hi = field_bits(n, gfx11)
        mask = (1 << (hi - lo + 1)) - 1
        if not 0 <= int(v) <= mask:
            raise ValueError(f"{n}={v} does not fit {hi - lo + 1} bits")
        w[word] |= int(v) << lo
    return w
