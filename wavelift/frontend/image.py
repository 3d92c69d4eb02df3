"""MIMG: storage-image loads and stores (image_load / image_store, image_load_mip /
image_store_mip) of 1-D, 2-D, 3-D and 1-D/2-D array images, every mip level, in every layout
wavelift/memory/layout.py lays out (checked against Mesa's addrlib) and every format
frontend/formats.py converts exactly (1, 2, 4, 8 and 16-byte texels), and null descriptors
(TYPE 0, RADV's all-zero descriptor: loads read 0, stores drop; TYPE 1..7 are reserved and
refuse).  Every other T# refuses the dispatch by name when an active lane uses it (refuse_if, so
every backend checks the descriptor where its value becomes known: it is usually loaded from
guest memory by s_load at run time):

* ``image.unsupported_layout``: a SW_MODE not laid out for the image's type and texel size, an
  _X/_T mode when the GB_ADDR_CONFIG the program is translated for is unknown (a capture that
  does not record it) or has a pipe interleave other than 256 bytes / a packer count addrlib
  rejects, base address bits inside the swizzle block other than an _X/_T mode's pipe/bank XOR,
  or DCC compression.
* ``image.unsupported_format``: an IMG_FORMAT not converted exactly (formats.py: SRGB,
  FLOAT_CLAMP, compressed, FMASK, YUV, buffer-only), a reserved DST_SEL; an image_store whose
  dmask leaves out a channel of the format or whose DST_SEL does not keep each channel in
  place, or that formats.encode cannot store exactly; a NaN loaded from a 16/11/10-bit float;
  a load out of range whose requested result would hold the format's default 1 (DST_SEL "1"
  or a missing W: hardware may give 1 or 0 there).
* ``image.unsupported_descriptor``: a TYPE the instruction's dim does not read (below), MIN_LOD
  set, BASE_LEVEL..LAST_LEVEL outside the MAX_MIP + 1 levels, BASE_ARRAY past DEPTH (arrays) or
  set (1-D/2-D; a 3-D T# ignores it, ARRAY_PITCH being 0), DEPTH/PITCH set on a 1-D/2-D T# (GFX10.3's custom pitch), ARRAY_PITCH
  (a 3-D storage view of one level's slices), RESOURCE_LEVEL clear, any reserved bit; and per
  lane: a _mip level past LAST_LEVEL, a coordinate between a level's rounded-down (the API's,
  which bounds it) and rounded-up size (addrlib's, which it is laid out with), a layer other
  than 0 through a non-array T#: what hardware does there is not established.

Dims and TYPEs (TYPES_OF_DIM): dim 1D reads TYPE 1D and 1D_ARRAY, 2D reads 2D and 2D_ARRAY (the
layer is BASE_ARRAY: RADV's view of one layer of an array image), 3D reads 3D, 1D_ARRAY /
2D_ARRAY read their array TYPE (layer = BASE_ARRAY + the coordinate, in bounds up to DEPTH, the
last layer; past it reads 0 / drops, as out-of-range x and y do) and the one-layer TYPE (layer
0).  The level is BASE_LEVEL (+ the _mip coordinate); the T# describes level 0 (WIDTH, HEIGHT,
DEPTH of a 3-D image) and MAX_MIP + 1 levels, which place every level (addrlib's chain and
tail: layout.level_plan).  CUBE and MSAA dims are not translated.

T# fields (GFX10/10.3, dwords d0..d7): BASE_ADDRESS = (d0 | d1[7:0] << 32) << 8, MIN_LOD
d1[19:8], FORMAT d1[28:20], WIDTH-1 = d1[31:30] | d2[11:0] << 2, HEIGHT-1 d2[27:14],
RESOURCE_LEVEL d2[31], DST_SEL_X..W d3[11:0] (0 = "0", 1 = "1", 4..7 = X..W), BASE_LEVEL
d3[15:12], LAST_LEVEL d3[19:16], SW_MODE d3[24:20], BC_SWIZZLE d3[27:25], TYPE d3[31:28]; d4
DEPTH [12:0] (GFX10.3 PITCH [13:0]), BASE_ARRAY [28:16]; d5 ARRAY_PITCH [3:0], MAX_MIP [7:4],
hints [22:8] and [31]; d6 counter bank / DCC block sizes, WRITE_COMPRESS_ENABLE [20],
COMPRESSION_EN [21], metadata address d6[31:24] / d7.  Fields that change nothing for an
uncompressed storage load/store are ignored: BC_SWIZZLE (border colours of sampling), d5's hints
(MID_LOD_WARN, PERF_MOD, CORNER_SAMPLES, LINKED_RESOURCE, LOD_HDW_CNT_EN, PRT_DEFAULT,
BIG_PAGE), d6's DCC and counter fields other than the two enables, and the metadata address.

Layouts (decision 0021): the T#'s (SW_MODE, texel size) picks, at run time, the facts
layout.mode_facts gives for the dim's resource type, the target (RB+ patterns on GFX10.3) and
the GB_ADDR_CONFIG the program is translated for (Builder.gb_addr_config: the capture's, part
of the program and module keys): block size and shape, mip-tail rule, the pipe/bank bits an
_X/_T mode XORs (the T#'s base address bits [15:8], RADV's tile_swizzle) and the pattern as
columns: per x, y and z bit, the address bits of the block it flips (the x/y/z masks whose
parity each address bit is, transposed).  They are looked up by select trees over the
generated tables (uniform: once per T#, four 16-bit columns -- three 21-bit ones where a GFX11
256KB mode is laid out -- or the two facts words to a u64 tree, the mode's bits split first), and so is the level chain.  The address is what
layout.address_by_facts computes (tests/memory/test_layout.py holds that to addrlib's
addresses), per lane only what depends on a coordinate: for each coordinate its block row or
column bytes and the XOR of its set bits' columns, terms that every address of the same
coordinate value shares (a sample's four texels lie on two columns and two rows), then one
add and one XOR a texel.  Linear is the same with 256-byte rows.  GFX11 targets use GFX11's
layouts (layout.Chip.gfx11, decision 0039).  Conversions: formats.py.

GFX11 (decision 0038; frontend/gfx11.py routes image_load/store(_mip) and the image atomics
here, and sampling to sample.py, which reads the T# through ``describe``: decision 0044): the T#
is read with
GFX11's own fields (Mesa's register database, memory/tables/gfx11_image.json): FORMAT d1[27:20]
in GFX11's numbering, mapped to the GFX10 format of the same name; MAX_MIP d1[19:16]; MIN_LOD
split into d5[31:27] and d6[6:0] (both must be 0); no RESOURCE_LEVEL; every bit no GFX11 field
names must be 0, ARRAY_PITCH too.  Layouts: GFX11's addrlib's (decision 0039; linear as
GFX10.3's, the tiled modes with GFX11's own patterns and mode set: tests/memory/
test_gfx11_layout.py), 256KB modes included; DCC refuses (``image.unsupported_layout``);
GFX11's null T# (TYPE 0..7) refuses
(``image.unsupported_descriptor``: not established).
Coordinates outside the image read 0 and drop stores, as hardware does; DST_SEL applies to
loads.  d16 (two 16-bit components a VGPR, an even count): loads of 16-bit float and 8/16-bit
integer channels (exact; others refuse by name), stores of any format (each half widened
exactly).  a16 (decision 0034, 2026-12-05; ACO emits it for 16-bit integer coordinates): the
coordinates (and the _mip level) are 16-bit, two a VGPR, low half first, zero-extended (a
value at or above 0x8000 is out of range whether widened with or without sign).  Sampling
instructions (frontend/sample.py), r128, lwe, tfe on a store and d16 of an odd component count
(ACO emits dmask 0x7 d16 for f16vec3 results; what the last VGPR's upper half gets is not
established) are not translated here (``program.unsupported_instruction``).  tfe on a load
(decision 0041, ``tfe_status``): the status VGPR after the results keeps its value (the hardware
writes it only on a fail, and every texel read here is resident); through the null T# it
refuses (``image.unsupported_descriptor``).

Image atomics (decision 0034, ``_atomic``): image_atomic_swap/cmpswap/add/sub/smin/umin/smax/
umax/and/or/xor/inc/dec on R32_UINT / R32_SINT storage images and 64-bit ones on RADV's R64
images (32_32_UINT / 32_32_SINT T#s, dmask 0x3 / cmpswap 0xF), the texel addressed as
image_load addresses it (every dim, layout and level above; no _mip form exists), through the
IR's ``atomic`` op; GLC returns the texel's value before the op.  Refused by name: float
image atomics, other dmasks, a16/d16/tfe/lwe/r128 (``program.unsupported_instruction``), any other
format (``image.unsupported_format``), an active lane out of range or through the null
descriptor (``image.unsupported_descriptor``: what hardware writes and returns there is not
established).

image_get_resinfo (decision 0034, ``_resinfo``): the view's size at a mip level and its level
count from the T#, as AMD's own replacement of the instruction computes them (Mesa's
ac_nir_lower_resinfo.c; ACO for GFX10.3 emits that arithmetic, never the instruction), for
T#s of the dim's own TYPE; cube, MSAA and anything not established refuse by name.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..ir.builder import Builder
from ..ir.program import Value
from ..memory import layout, tsharp
from . import formats
from .common import C, sext48, unsupported

BPE_LOG2S = (0, 1, 2, 3, 4)  # texel sizes of image formats: 1, 2, 4, 8, 16 bytes
# MIMG dim values (SQ_RSRC_IMG_* - 8) carried out; CUBE (3) and the MSAA dims (6, 7) are not
DIM_1D, DIM_2D, DIM_3D, DIM_1D_ARRAY, DIM_2D_ARRAY = 0, 1, 2, 4, 5
DIMS = (DIM_1D, DIM_2D, DIM_3D, DIM_1D_ARRAY, DIM_2D_ARRAY)
NCOORD = {DIM_1D: 1, DIM_2D: 2, DIM_3D: 3, DIM_1D_ARRAY: 2, DIM_2D_ARRAY: 3}
TYPE_1D, TYPE_2D = tsharp.TYPE_1D, tsharp.TYPE_2D
TYPE_3D, TYPE_1D_ARRAY, TYPE_2D_ARRAY = tsharp.TYPE_3D, tsharp.TYPE_1D_ARRAY, tsharp.TYPE_2D_ARRAY
# the T# TYPEs an instruction dim reads (RADV: a view of one layer of an array image is TYPE
# *_ARRAY with BASE_ARRAY that layer; an array view of a one-layer image is TYPE 1D/2D)
TYPES_OF_DIM = {
    DIM_1D: (TYPE_1D, TYPE_1D_ARRAY),
    DIM_2D: (TYPE_2D, TYPE_2D_ARRAY),
    DIM_3D: (TYPE_3D,),
    DIM_1D_ARRAY: (TYPE_1D_ARRAY, TYPE_1D),
    DIM_2D_ARRAY: (TYPE_2D_ARRAY, TYPE_2D),
}
RSRC_OF_DIM = {
    DIM_1D: layout.RSRC_1D,
    DIM_1D_ARRAY: layout.RSRC_1D,
    DIM_2D: layout.RSRC_2D,
    DIM_2D_ARRAY: layout.RSRC_2D,
    DIM_3D: layout.RSRC_3D,
}
SEL_0, SEL_1, SEL_X = 0, 1, 4
MAX_LEVELS = 16  # MAX_MIP is 4 bits
# tiled modes whose pattern depends only on the GFX level (RB+ or not), laid out for 2-D images
# with or without GB_ADDR_CONFIG
TILED_2D = tuple(
    m
    for m, name in sorted(layout.sw_mode_names().items())
    if name in ("256B_S", "256B_D", "4KB_S", "4KB_D", "64KB_S", "64KB_D")
)
# bits of each T# dword that must be clear (reserved, or a feature refused by name above)
MUST_BE_ZERO = {
    1: 0x2000_0000,  # d1[29] reserved
    2: 0x7000_3000,  # d2[13:12], [30:28] reserved
    4: 0xE000_E000,  # d4[13] (GFX10.3 PITCH's top bit; DEPTH is [12:0]), [15:14], [31:29] reserved
    5: 0x7800_000F,  # ARRAY_PITCH (3-D storage views of a level's slices), d5[30:27] reserved
    6: 0x0000_7B00,  # d6[9:8], [14:11] reserved
}
# the packed facts of a (swizzle mode, texel size) (layout.ModeFacts), word 1 ...
F1_BLK, F1_BW, F1_BH, F1_BD, F1_TAIL, F1_FITW, F1_FITH, F1_MAXTAIL, F1_VALID = 0, 5, 9, 13, 17, 18, 22, 26, 31
# ... and word 2
F2_XOR, F2_UX, F2_UY = 0, 24, 28  # (the pipe/bank mask: up to bit 17, GFX11's 256KB blocks)
XOR_FIELD = (1 << F2_UX) - 1


@dataclasses.dataclass
class ImageView:
    """One T#'s facts as IR values, for every instruction that addresses its texels (loads,
    stores, sampling): ``real`` (not the null descriptor), ``fm`` (formats.Format), ``base``
    (byte address, the pipe/bank XOR bits cleared), ``width``/``height`` (texels, level 0),
    ``sw_mode``, ``dim`` and the words ``d``; and what places its texels: the layout facts, the
    level chain and the array fields."""

    d: list
    dim: int
    real: Value
    fm: formats.Format
    base: Value
    width: Value
    height: Value
    sw_mode: Value
    typ: Any = None
    depth: Any = None  # 3-D: slices of level 0; arrays: the last layer (DEPTH)
    base_array: Any = None
    base_level: Any = None
    last_level: Any = None
    levels: Any = None  # MAX_MIP + 1
    bpe: Any = None  # log2 bytes per texel
    f1: Any = None
    f2: Any = None
    masks: Any = None  # (unused since the columns; kept for callers' compatibility)
    cols: Any = None  # packed coordinate bit -> the block's address bits it flips (u32)
    xor_bits: Any = None
    chain: Any = None  # u64 bytes from one slice (thick: block of slices) to the next
    level_off: Any = None  # u64 per level (not in the tail): its offset in its slice
    first_tail: Any = None


def chip_of(b: Builder) -> tuple[layout.Chip, bool]:
    """The layout chip of the target and GB_ADDR_CONFIG the program is translated for, and
    whether the _X/_T modes can be laid out (GB_ADDR_CONFIG known, with the 256-byte pipe
    interleave addrlib's patterns are made for and a packer count addrlib accepts)."""
    target = getattr(b, "target", "")
    if gfx11(b):  # Gfx11Lib: packers always count, the tail fix on every part (decision 0039)
        plain11 = layout.Chip.gfx11_plain()
        gb11 = getattr(b, "gb_addr_config", None)
        if gb11 is None:
            return plain11, False
        try:
            chip11 = layout.Chip.from_gb_addr_config(gb11, True, gfx11=True)
        except ValueError:
            return plain11, False
        p, k = chip11.pipes_log2, chip11.pkrs_log2
        if not (k <= p and p - k <= 2) or p > 5:  # (Gfx11Lib::HwlInitGlobalParams asserts this)
            return plain11, False
        return chip11, True
    rbplus = target.startswith("gfx103")
    z_fix = not target.startswith("gfx1010")  # addrlib's dsMipmapHtileFix: all GFX10 but Navi10
    gb = getattr(b, "gb_addr_config", None)
    plain = layout.Chip(rbplus, 0, 0, z_fix)
    if gb is None:
        return plain, False
    try:
        chip = layout.Chip.from_gb_addr_config(gb, rbplus, z_fix)
    except ValueError:
        return plain, False
    if rbplus and not (chip.pkrs_log2 <= chip.pipes_log2 and chip.pipes_log2 - chip.pkrs_log2 <= 2):
        return plain, False  # (Gfx10Lib::HwlInitGlobalParams asserts this)
    if chip.pipes_log2 > 4:
        return plain, False
    return chip, True


def _facts_tables(b: Builder, dim: int) -> dict[int, layout.ModeFacts]:
    """(sw_mode | bpe_log2 << 5) -> facts of every layout carried out for this dim and target."""
    chip, xor_ok = chip_of(b)
    rsrc = RSRC_OF_DIM[dim]
    out = {}
    for m in (layout.LINEAR, *tiled_modes(b, dim)):
        k = layout.mode_kind(m)
        if k is not None and k[2] and not xor_ok:
            continue
        for bpe in BPE_LOG2S:
            f = layout.mode_facts(chip, m, rsrc, bpe)
            if f is not None:
                out[bpe | m << 3] = f
    return out


def _pack_f1(f: layout.ModeFacts) -> int:
    return (
        f.blk << F1_BLK
        | f.bw << F1_BW
        | f.bh << F1_BH
        | f.bd << F1_BD
        | int(f.tail) << F1_TAIL
        | f.fit_w << F1_FITW
        | f.fit_h << F1_FITH
        | f.max_tail << F1_MAXTAIL
        | 1 << F1_VALID
    )


def _lookup(b: Builder, key, table: dict[int, int], nbits: int, typ: str = "u32"):
    """table[key] (0 for a key not in it) as a select tree over the bits of the uniform ``key``,
    equal subtrees folded to one value."""
    conds = [b.cmp("ne", "u32", _u(b, key, i, 1), C(b, "u32", 0)) for i in range(nbits)]
    memo: dict = {}

    def build(items: dict[int, int], bit: int):
        vals = set(items.values())
        if len(items) < 1 << bit:
            vals.add(0)
        if len(vals) == 1:
            return C(b, typ, vals.pop())
        sig = (bit, frozenset((k & ((1 << bit) - 1), v) for k, v in items.items()))
        if sig not in memo:
            lo = {k: v for k, v in items.items() if not k >> (bit - 1) & 1}
            hi = {k: v for k, v in items.items() if k >> (bit - 1) & 1}
            memo[sig] = b.select(conds[bit - 1], build(hi, bit - 1), build(lo, bit - 1))
        return memo[sig]

    return build({k: v for k, v in table.items() if k < 1 << nbits}, nbits)


def describe(b: Builder, d: list, dim: int, one_d_as_2d: bool = False) -> ImageView:
    """Check the T# ``d`` (check_tsharp: every field not carried out refuses by name) and read
    the fields that place its texels: the layout facts of its (swizzle mode, texel size) and its
    mip chain (every level's place, addrlib's rules: memory/layout.py level_plan).
    ``one_d_as_2d`` (image_load/store/atomics): a linear one-level TYPE 1D T# may be read by dim
    2D at y = 0 (texel_address refuses other y) — RADV's meta copies of a 1-D image do so with
    their 2-D pipelines (radv_meta_bufimage.c), and on a linear image (x, 0) is texel x."""
    real, fm, lv = _check(b, d, dim, one_d_as_2d)
    v = _view(b, d, dim, real, fm, lv)
    _chain(b, v)
    return v


def _columns(facts: dict[int, layout.ModeFacts]) -> list[int]:
    """The packed coordinate bits (x bit j at j, y at 11 + j, z at 22 + j: layout.pack_masks)
    some address bit of some layout in ``facts`` reads: the only columns texel_address XORs."""
    used = 0
    for f in facts.values():
        for m in f.packed:
            used |= m
    return [p for p in range(sum(layout.COORD_BITS)) if used >> p & 1]


def _column(f: layout.ModeFacts, p: int) -> int:
    """Column ``p`` of a layout's pattern: the address bits (within the block) that packed
    coordinate bit ``p`` flips (bit i set when address bit i's mask reads it)."""
    return sum(1 << i for i, m in enumerate(f.packed) if m >> p & 1)


def _layout_values(b: Builder, d: list, dim: int, fm):
    """(log2 texel size, facts word 1, word 2, pattern columns) of the T#'s (SW_MODE, texel
    size) for this dim: select trees over the generated facts (_facts_tables), four 16-bit
    columns (_column; three 21-bit ones with a 256KB mode) or the two facts words to a u64, so
    one tree serves several values."""
    sw_mode = _f(b, d, "SW_MODE")
    # log2 of the texel size (a power of two for images; a format not converted gives 0..7 here
    # and is refused)
    bpe = b.bin("and", "u32", b.un("ctz", "u32", fm.nbytes), C(b, "u32", 7))
    key = b.bin("or", "u32", bpe, b.bin("shl", "u32", sw_mode, C(b, "u32", 3)))
    facts = _facts_tables(b, dim)
    for f in facts.values():
        # a level in the mip tail fits in one block: its coordinates' block row and column are
        # 0 (texel_address relies on it: no select of them on the tail)
        assert f.fit_w <= f.bw and f.fit_h <= f.bh and max(len(f.packed), 1) <= 21, f
    # pattern columns (a column: the block's address bits one coordinate bit flips): 16 bits,
    # four to a u64, while every block has at most 16 address bits (GFX10/10.3, GFX11 up to
    # 64 KiB); 21 bits, three to a u64, where a GFX11 256KB mode (18 bits) is among the facts
    word = _lookup(
        b,
        key,
        {
            k: _pack_f1(f) | (f.xor_mask << F2_XOR | f.unit_x << F2_UX | f.unit_y << F2_UY) << 32
            for k, f in facts.items()
        },
        8,
        "u64",
    )
    f1 = b.cvt("u32", word)
    f2 = b.cvt("u32", b.bin("shr", "u64", word, C(b, "u64", 32)))
    cols: dict[int, Value] = {}
    used = _columns(facts)
    width = 16 if all(len(f.packed) <= 16 for f in facts.values()) else 21
    per = 64 // width
    for g in range(0, len(used), per):
        group = used[g : g + per]
        w = _lookup(
            b,
            key,
            {k: sum(_column(f, p) << width * n for n, p in enumerate(group)) for k, f in facts.items()},
            8,
            "u64",
        )
        for n, p in enumerate(group):
            cols[p] = b.bin(
                "and",
                "u32",
                b.cvt("u32", b.bin("shr", "u64", w, C(b, "u64", width * n))),
                C(b, "u32", (1 << width) - 1),
            )
    return bpe, f1, f2, cols


def _view(b: Builder, d: list, dim: int, real, fm, lv) -> ImageView:
    width = b.bin(
        "add",
        "u32",
        b.bin("or", "u32", _f(b, d, "WIDTH_LO"), b.bin("shl", "u32", _f(b, d, "WIDTH_HI"), C(b, "u32", 2))),
        C(b, "u32", 1),
    )
    height = b.bin("add", "u32", _f(b, d, "HEIGHT"), C(b, "u32", 1))
    sw_mode = _f(b, d, "SW_MODE")
    bpe, f1, f2, cols = lv
    blk = _u(b, f1, F1_BLK, 31)
    raw = b.bin("shl", "u64", b.pack64(d[0], _f(b, d, "BASE_ADDRESS_HI")), C(b, "u64", 8))
    block_mask = b.bin("sub", "u64", b.bin("shl", "u64", C(b, "u64", 1), b.cvt("u64", blk)), C(b, "u64", 1))
    base = sext48(b, b.bin("and", "u64", raw, b.un("not", "u64", block_mask)))
    xor_bits = b.bin("and", "u32", b.bin("shl", "u32", d[0], C(b, "u32", 8)), _u(b, f2, F2_XOR, XOR_FIELD))
    return ImageView(
        d,
        dim,
        real,
        fm,
        base,
        width,
        height,
        sw_mode,
        typ=_f(b, d, "TYPE"),
        depth=_f(b, d, "DEPTH"),
        base_array=_f(b, d, "BASE_ARRAY"),
        base_level=_f(b, d, "BASE_LEVEL"),
        last_level=_f(b, d, "LAST_LEVEL"),
        levels=b.bin("add", "u32", _f(b, d, "MAX_MIP"), C(b, "u32", 1)),
        bpe=bpe,
        f1=f1,
        f2=f2,
        cols=cols,
        xor_bits=xor_bits,
    )


def _ceil_shift(b, v, i):
    """max(ceil(v / 2**i), 1) (addrlib's level size; ``i`` an int or a u32 value < 32)."""
    sh = C(b, "u32", i) if isinstance(i, int) else i
    one = b.bin("sub", "u32", b.bin("shl", "u32", C(b, "u32", 1), sh), C(b, "u32", 1))
    return b.bin("max", "u32", b.bin("shr", "u32", b.bin("add", "u32", v, one), sh), C(b, "u32", 1))


def _align_log2(b, v, lg):
    """v rounded up to a multiple of 2**lg (lg a u32 value)."""
    one = b.bin("sub", "u32", b.bin("shl", "u32", C(b, "u32", 1), lg), C(b, "u32", 1))
    return b.bin("and", "u32", b.bin("add", "u32", v, one), b.un("not", "u32", one))


def _in_tail(b, v: ImageView, w, h, level):
    """Level ``level`` (sizes w, h rounded up) lies in the mip tail (layout.level_plan)."""
    f1 = v.f1
    left = b.bin("sub", "u32", v.levels, level)
    conds = [
        b.cmp("ne", "u32", _u(b, f1, F1_TAIL, 1), C(b, "u32", 0)),
        b.cmp("gt", "u32", v.levels, C(b, "u32", 1)),
        b.cmp("le", "u32", w, b.bin("shl", "u32", C(b, "u32", 1), _u(b, f1, F1_FITW, 15))),
        b.cmp("le", "u32", h, b.bin("shl", "u32", C(b, "u32", 1), _u(b, f1, F1_FITH, 15))),
        b.cmp("le", "u32", left, _u(b, f1, F1_MAXTAIL, 31)),
    ]
    out = conds[0]
    for c in conds[1:]:
        out = b.bin("and", "b1", out, c)
    return out


def _chain(b: Builder, v: ImageView) -> None:
    """The mip chain's facts (uniform, once per T#): each level's offset in its slice, the
    slice's size, the first level in the tail (layout.level_plan in IR)."""
    f1 = v.f1
    bw, bh, bd = _u(b, f1, F1_BW, 15), _u(b, f1, F1_BH, 15), _u(b, f1, F1_BD, 15)
    bpe64, bd64 = b.cvt("u64", v.bpe), b.cvt("u64", bd)
    contrib = []
    chain = C(b, "u64", 0)
    first_tail = C(b, "u32", 0)
    w, h = v.width, v.height
    for i in range(MAX_LEVELS):
        if i:  # ceil(n / 2**i) as ceil(ceil(n / 2**(i - 1)) / 2), at least 1 since n >= 1
            w, h = (
                b.bin("shr", "u32", b.bin("add", "u32", n, C(b, "u32", 1)), C(b, "u32", 1)) for n in (w, h)
            )
        p, hh = _align_log2(b, w, bw), _align_log2(b, h, bh)
        size = b.bin("shl", "u64", b.bin("mul", "u64", b.cvt("u64", p), b.cvt("u64", hh)), bpe64)
        valid = b.cmp("lt", "u32", C(b, "u32", i), v.levels)
        tail = _in_tail(b, v, w, h, C(b, "u32", i))
        body = b.bin("and", "b1", valid, b.un("not", "b1", tail))
        part = b.select(body, size, C(b, "u64", 0))
        chain = b.bin("add", "u64", chain, part)
        contrib.append(b.bin("shl", "u64", part, bd64))
        first_tail = b.bin("add", "u32", first_tail, b.select(body, C(b, "u32", 1), C(b, "u32", 0)))
    # a tail exists when the last level is in it (levels in the tail are the last ones)
    has_tail = b.cmp("lt", "u32", first_tail, v.levels)
    blk64 = b.cvt("u64", _u(b, f1, F1_BLK, 31))
    head = b.select(has_tail, b.bin("shl", "u64", C(b, "u64", 1), blk64), C(b, "u64", 0))
    v.chain = b.bin("add", "u64", chain, b.bin("shr", "u64", head, bd64))
    offs: list = [None] * MAX_LEVELS
    acc = head
    for i in reversed(range(MAX_LEVELS)):
        offs[i] = acc
        acc = b.bin("add", "u64", acc, contrib[i])
    v.level_off = offs
    v.first_tail = first_tail


def _by_level(b, level, vals):
    out = vals[0]
    for i in range(1, len(vals)):
        out = b.select(_eq(b, level, i), vals[i], out)
    return out


def texel_address(b: Builder, img: ImageView, xy: list, mip=None):
    """(byte address, in bounds) of texel ``xy`` (the instruction's coordinates for
    ``img.dim``: x; x y; x y z; x layer; x y layer; unsigned: negative coordinates are out of
    bounds) in the image's layout, of level BASE_LEVEL (+ ``mip``, a u32 value, when given).
    Lanes whose result is not established refuse by name here: a level past LAST_LEVEL, a
    coordinate between a level's rounded-down and rounded-up size, a layer of a non-array T#
    other than 0.  The address is the texel's only where the lane is in bounds (elsewhere it
    is not used: loads and stores are masked by in bounds)."""
    dim = img.dim
    f1 = img.f1
    level = img.base_level
    if mip is not None:
        _refuse(
            b,
            "image.unsupported_descriptor",
            b.bin(
                "and",
                "b1",
                img.real,
                b.cmp("gt", "u32", mip, b.bin("sub", "u32", img.last_level, img.base_level)),
            ),
            "image_load_mip/image_store_mip of a level past the T#'s LAST_LEVEL (what hardware "
            "does there is not established)",
        )
        level = b.bin("and", "u32", b.bin("add", "u32", img.base_level, mip), C(b, "u32", MAX_LEVELS - 1))
    zero = C(b, "u32", 0)
    x = xy[0]
    y = xy[1] if dim in (DIM_2D, DIM_3D, DIM_2D_ARRAY) else zero
    # level sizes: the API's (rounded down) bound the coordinates; addrlib lays out the rounded-
    # up ones; a coordinate between them refuses
    sizes = [(x, img.width)]
    if dim in (DIM_2D, DIM_3D, DIM_2D_ARRAY):
        sizes.append((y, img.height))
    if dim == DIM_3D:
        sizes.append((xy[2], b.bin("add", "u32", img.depth, C(b, "u32", 1))))
    inb = C(b, "b1", 1)
    band = C(b, "b1", 0)
    for c, full in sizes:
        lo = b.bin("max", "u32", b.bin("shr", "u32", full, level), C(b, "u32", 1))
        hi = _ceil_shift(b, full, level)
        inb = b.bin("and", "b1", inb, b.cmp("lt", "u32", c, lo))
        # lo <= c < hi as one unsigned compare (hi >= lo)
        band = b.bin(
            "or", "b1", band, b.cmp("lt", "u32", b.bin("sub", "u32", c, lo), b.bin("sub", "u32", hi, lo))
        )
    is_array = b.bin("or", "b1", _eq(b, img.typ, TYPE_1D_ARRAY), _eq(b, img.typ, TYPE_2D_ARRAY))
    if dim == DIM_2D:  # a 1-D T# (describe's one_d_as_2d): only y = 0
        band = b.bin("or", "b1", band, b.bin("and", "b1", _eq(b, img.typ, TYPE_1D), _ne(b, y, 0)))
    if dim == DIM_3D:
        z = xy[2]
    elif dim in (DIM_1D_ARRAY, DIM_2D_ARRAY):
        layer = xy[1] if dim == DIM_1D_ARRAY else xy[2]
        # an array T#: BASE_ARRAY + layer, at most DEPTH (the last layer); a one-layer T#: only 0
        last = b.bin("sub", "u32", img.depth, img.base_array)
        inb = b.bin(
            "and", "b1", inb, b.bin("or", "b1", b.un("not", "b1", is_array), b.cmp("le", "u32", layer, last))
        )
        band = b.bin("or", "b1", band, b.bin("and", "b1", b.un("not", "b1", is_array), _ne(b, layer, 0)))
        z = b.select(is_array, b.bin("add", "u32", img.base_array, layer), zero)
    else:
        z = b.select(is_array, img.base_array, zero)
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.bin("and", "b1", b.bin("and", "b1", b.exec(), img.real), band),
        "an image coordinate between a mip level's rounded-down and rounded-up size, a "
        "layer other than 0 of a T# that is not an array, or a y other than 0 of a 1-D T# read "
        "by a 2-D dim (what hardware reads there is not established)",
    )
    # the level: its pitch, whether it is in the tail, its offset or its place in the tail
    bw, bh, bd = _u(b, f1, F1_BW, 15), _u(b, f1, F1_BH, 15), _u(b, f1, F1_BD, 15)
    blk = _u(b, f1, F1_BLK, 31)
    w = _ceil_shift(b, img.width, level)
    h = _ceil_shift(b, img.height, level)
    pitch = _align_log2(b, w, bw)
    tail = _in_tail(b, img, w, h, level)
    off = _by_level(b, level, img.level_off)
    m = b.bin(
        "and",
        "u32",
        b.bin(
            "sub",
            "u32",
            b.bin("sub", "u32", _u(b, f1, F1_MAXTAIL, 31), C(b, "u32", 1)),
            b.bin("sub", "u32", level, img.first_tail),
        ),
        C(b, "u32", 15),
    )
    origin = _lookup(b, m, {k: o[0] | o[1] << 8 for k in range(16) for o in [layout.tail_origin(k)]}, 4)
    # a level in the tail: its origin in the tail's block (uniform unless the level is per lane)
    tx = b.select(tail, b.bin("shl", "u32", _u(b, origin, 0, 0xFF), _u(b, img.f2, F2_UX, 15)), zero)
    ty = b.select(tail, b.bin("shl", "u32", _u(b, origin, 8, 0xFF), _u(b, img.f2, F2_UY, 15)), zero)
    off = b.select(tail, C(b, "u64", 0), off)
    # Per coordinate, one term each (shared by every texel address that uses that coordinate,
    # e.g. a sample's footprint): the block's bytes, row * pitch or column (a tail level's
    # coordinates lie inside one block: row and column 0 there, _layout_values checks it), and
    # the offset in the block, the XOR of the pattern columns (layout.address_by_facts' parities
    # of masks, transposed) of the coordinate's set bits; then the pipe/bank bits.
    blk64 = b.cvt("u64", blk)
    row_bytes = b.bin("shl", "u64", b.cvt("u64", b.bin("shr", "u32", pitch, bw)), blk64)
    rows = b.bin("mul", "u64", b.cvt("u64", b.bin("shr", "u32", y, bh)), row_bytes)
    cols = b.bin("shl", "u64", b.cvt("u64", b.bin("shr", "u32", x, bw)), blk64)
    inner = img.xor_bits
    for axis, (v, add) in enumerate(((x, tx), (y, ty), (z, None))):
        if add is not None:
            v = b.bin("add", "u32", v, add)
        term = None
        for j in range(layout.COORD_BITS[axis]):
            p = j + sum(layout.COORD_BITS[:axis])
            if p not in img.cols:
                continue
            hit = b.cmp("ne", "u32", b.bin("and", "u32", v, C(b, "u32", 1 << j)), C(b, "u32", 0))
            t = b.select(hit, img.cols[p], zero)
            term = t if term is None else b.bin("xor", "u32", term, t)
        if term is not None:
            inner = b.bin("xor", "u32", inner, term)
    slice_id = b.cvt("u64", b.bin("shr", "u32", z, bd))
    stride = b.bin("shl", "u64", img.chain, b.cvt("u64", bd))
    offset = b.bin("add", "u64", b.bin("mul", "u64", slice_id, stride), off)
    offset = b.bin("add", "u64", b.bin("add", "u64", img.base, offset), b.bin("add", "u64", rows, cols))
    return b.bin("add", "u64", offset, b.cvt("u64", inner)), inb


def _u(b, x, sh, mask):
    return b.bin("and", "u32", b.bin("shr", "u32", x, C(b, "u32", sh)), C(b, "u32", mask))


def gfx11(b: Builder) -> bool:
    """The program is for a GFX11 target: its T# is GFX11's (tsharp.field_bits11, decision 0038)."""
    return getattr(b, "target", "").startswith("gfx11")


def _f(b, d, name):
    """T# field ``name`` (register-database name and bits, the same on GFX10 and GFX10.3 for every
    field read here; GFX11's own on a GFX11 target) of the descriptor words ``d``.  On GFX11,
    FORMAT is given in GFX10's numbering (the GFX10 format of the same name; 0, INVALID, where
    none), MIN_LOD is MIN_LOD_LO | MIN_LOD_HI (only compared with 0 here) and RESOURCE_LEVEL
    (gone on GFX11) reads 1."""
    if gfx11(b):
        if name == "RESOURCE_LEVEL":
            return C(b, "u32", 1)
        if name == "MIN_LOD":
            return b.bin("or", "u32", _f(b, d, "MIN_LOD_LO"), _f(b, d, "MIN_LOD_HI"))
        word, lo, hi = tsharp.field_bits11(name)
        raw = _u(b, d[word], lo, (1 << (hi - lo + 1)) - 1)
        if name == "FORMAT":
            return _lookup(b, raw, tsharp.format10_of11(), hi - lo + 1)
        return raw
    word, lo, hi = tsharp.field_bits(name)
    return _u(b, d[word], lo, (1 << (hi - lo + 1)) - 1)


def _any(b, *conds):
    out = conds[0]
    for c in conds[1:]:
        out = b.bin("or", "b1", out, c)
    return out


def _ne(b, x, v):
    return b.cmp("ne", "u32", x, C(b, "u32", v))


def _eq(b, x, v):
    return b.cmp("eq", "u32", x, C(b, "u32", v))


def _coords(ins, b, n, a16=False):
    """The ``n`` integer address operands (u32).  a16: 16-bit, two a VGPR (low half first, as
    ACO packs them), zero-extended: every 16-bit value at or above 0x8000 is past the largest
    GFX10 image dimension (16384) and past any level, so zero- and sign-extension address
    the same texels."""
    f = ins.fields
    nd = (n + 1) // 2 if a16 else n
    regs = f.get("vaddr_nsa")
    if regs is None:
        regs = tuple(f["vaddr"] + i for i in range(nd))
    words = [b.vget(r) for r in regs[:nd]]
    if not a16:
        return words
    m = C(b, "u32", 0xFFFF)
    return [
        b.bin(
            "and", "u32", b.bin("shr", "u32", words[i // 2], C(b, "u32", 16)) if i % 2 else words[i // 2], m
        )
        for i in range(n)
    ]


def _refuse(b, code, cond, why):
    b.effect("refuse_if", "b1", b.bin("and", "b1", b.exec(), cond), why=why, code=code)


def _refuse_reserved_type(b: Builder, typ):
    """TYPE 0 is the null descriptor (RADV writes all zeros): loads read 0, stores drop.  TYPE
    1..7 are reserved (SQ_RSRC_IMG_RSVD_*): what the hardware does with them is not established."""
    reserved = b.bin("and", "b1", _ne(b, typ, 0), b.cmp("lt", "u32", typ, C(b, "u32", TYPE_1D)))
    _refuse(b, "image.unsupported_descriptor", reserved, "T# TYPE is a reserved value (1..7)")


def check_tsharp(b: Builder, d: list, dim: int):
    """Refuse (by name, for active lanes) every non-null T# that image_load/image_store would
    not carry out exactly; returns (real image, format)."""
    real, fm, _ = _check(b, d, dim)
    return real, fm


def _check(b: Builder, d: list, dim: int, one_d_as_2d: bool = False):
    typ = _f(b, d, "TYPE")
    real = b.cmp("ge", "u32", typ, C(b, "u32", TYPE_1D))
    _refuse_reserved_type(b, typ)
    types = TYPES_OF_DIM[dim] + ((TYPE_1D,) if one_d_as_2d and dim == DIM_2D else ())
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.bin("and", "b1", real, b.un("not", "b1", _any(b, *[_eq(b, typ, t) for t in types]))),
        "T# TYPE is not one the instruction's dim reads (cube and MSAA images, and a TYPE of "
        "another dimension, are not carried out)",
    )
    if one_d_as_2d and dim == DIM_2D:
        _refuse(
            b,
            "image.unsupported_descriptor",
            b.bin(
                "and",
                "b1",
                _eq(b, typ, TYPE_1D),
                b.bin("or", "b1", _ne(b, _f(b, d, "SW_MODE"), 0), _ne(b, _f(b, d, "MAX_MIP"), 0)),
            ),
            "a 1-D T# read by a 2-D dim other than linear and of one level (its place of (x, 0) "
            "is not established)",
        )
    sw_mode = _f(b, d, "SW_MODE")
    fm = formats.Format(b, _f(b, d, "FORMAT"), image=True, gfx10_numbering=gfx11(b))
    lv = _layout_values(b, d, dim, fm)
    _, f1, f2, _ = lv
    dcc = b.bin("or", "u32", _f(b, d, "WRITE_COMPRESS_ENABLE"), _f(b, d, "COMPRESSION_EN"))
    # base address bits inside the block: the pipe/bank XOR of an _X/_T mode; any other must be 0
    low = b.bin(
        "sub",
        "u32",
        b.bin(
            "shl",
            "u32",
            C(b, "u32", 1),
            b.bin("and", "u32", b.bin("sub", "u32", _u(b, f1, F1_BLK, 31), C(b, "u32", 8)), C(b, "u32", 31)),
        ),
        C(b, "u32", 1),
    )
    xor_mask = _u(b, f2, F2_XOR, XOR_FIELD)
    low = b.bin("and", "u32", low, b.un("not", "u32", b.bin("shr", "u32", xor_mask, C(b, "u32", 8))))
    misaligned = _ne(b, b.bin("and", "u32", d[0], low), 0)
    xor_modes = [m for m, n in layout.sw_mode_names(gfx11(b)).items() if n.endswith(("_X", "_T"))]
    _, xor_ok = chip_of(b)
    if not xor_ok and tiled_modes(b, dim):
        _refuse(
            b,
            "image.unsupported_layout",
            b.bin("and", "b1", real, _any(b, *[_eq(b, sw_mode, m) for m in xor_modes])),
            "T# SW_MODE is an _X/_T mode, whose pipe/bank XOR depends on the GPU's "
            "GB_ADDR_CONFIG, which this capture does not record (or records a configuration "
            "addrlib has no patterns for)",
        )
    _refuse(
        b,
        "image.unsupported_layout",
        b.bin(
            "and",
            "b1",
            b.bin("and", "b1", real, fm.known),  # (a format not converted: its own refusal)
            _any(b, _eq(b, _u(b, f1, F1_VALID, 1), 0), misaligned, _ne(b, dcc, 0)),
        ),
        "T# SW_MODE is not one wavelift lays out for this image type and texel size (linear; "
        "GFX10/10.3/11 256B/4KB/64KB S, D, R, Z and their _X/_T forms, GFX11's 256KB ones, where "
        "addrlib has a pattern), the base address is not aligned to its block, or the image is "
        "DCC-compressed",
    )
    _refuse(
        b,
        "image.unsupported_format",
        b.bin("and", "b1", real, b.un("not", "b1", fm.known)),
        "T# IMG_FORMAT is not one whose conversion is exactly defined (SRGB, FLOAT_CLAMP, "
        "block-compressed, FMASK, YUV and buffer-only formats are not carried out)",
    )
    base_level, last_level = _f(b, d, "BASE_LEVEL"), _f(b, d, "LAST_LEVEL")
    depth, base_array = _f(b, d, "DEPTH"), _f(b, d, "BASE_ARRAY")
    is_array = b.bin("or", "b1", _eq(b, typ, TYPE_1D_ARRAY), _eq(b, typ, TYPE_2D_ARRAY))
    bad = [
        _ne(b, _f(b, d, "MIN_LOD"), 0),
        b.cmp("gt", "u32", base_level, last_level),
        b.cmp("gt", "u32", last_level, _f(b, d, "MAX_MIP")),
        _eq(b, _f(b, d, "RESOURCE_LEVEL"), 0),  # RESOURCE_LEVEL must be 1
        # arrays: BASE_ARRAY..DEPTH are the layers; 3-D: DEPTH + 1 slices, BASE_ARRAY ignored
        # (ARRAY_PITCH 0, which MUST_BE_ZERO holds: "In SRV mode, BASE_ARRAY is ignored and
        # DEPTH is the last slice of mipmap level 0", radv_image.c; RADV's meta copies of a 3-D
        # image write one slice's view so, the slice in their own z); 1-D/2-D: both 0 (GFX10.3
        # names DEPTH's bits PITCH there: a custom pitch)
        b.bin(
            "or",
            "b1",
            b.bin("and", "b1", is_array, b.cmp("gt", "u32", base_array, depth)),
            b.bin(
                "and",
                "b1",
                b.un("not", "b1", b.bin("or", "b1", is_array, _eq(b, typ, TYPE_3D))),
                _ne(b, base_array, 0),
            ),
        ),
        b.bin(
            "and",
            "b1",
            b.bin("or", "b1", _eq(b, typ, TYPE_1D), _eq(b, typ, TYPE_2D)),
            _ne(b, depth, 0),
        ),
    ]
    must_be_zero = MUST_BE_ZERO
    if gfx11(b):  # GFX11: every bit no field names, and ARRAY_PITCH (as on GFX10)
        must_be_zero = dict(tsharp.reserved11())
        word, lo, hi = tsharp.field_bits11("ARRAY_PITCH")
        must_be_zero[word] |= ((1 << (hi - lo + 1)) - 1) << lo
        # GFX11's null T# (TYPE 0..7) is not established: refused, not read as GFX10's
        _refuse(
            b,
            "image.unsupported_descriptor",
            b.un("not", "b1", real),
            "a GFX11 T# of TYPE 0..7 (null descriptor): what GFX11 reads there is not established",
        )
    bad += [_ne(b, b.bin("and", "u32", d[k], C(b, "u32", m)), 0) for k, m in must_be_zero.items()]
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.bin("and", "b1", real, _any(b, *bad)),
        "T# with MIN_LOD set, BASE_LEVEL..LAST_LEVEL outside the MAX_MIP + 1 levels, "
        "RESOURCE_LEVEL clear, BASE_ARRAY past DEPTH, a custom pitch (DEPTH/PITCH of a 1-D/2-D "
        "image), a 3-D storage view of one level's slices (ARRAY_PITCH) or reserved bits set",
    )
    return real, fm, lv


def tfe_status(b: Builder, real: Value) -> None:
    """tfe (texture fail enable, decision 0041): the VGPR after the results holds the access's
    fail status, written only when the access fails (a non-resident page of a partially
    resident image).  Every texel wavelift reads is resident (guest memory that no allocation
    holds is refused, ``escape``), so the status VGPR keeps its value, as on the hardware when
    no error occurs.  Through the null T# whether the access counts as failed is not
    established: those lanes refuse."""
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.bin("and", "b1", b.exec(), b.un("not", "b1", real)),
        "a tfe access through the null T# (whether the hardware reports a fail is not established)",
    )


def tiled_modes(b: Builder, dim: int) -> tuple[int, ...]:
    """The tiled SW_MODEs that may be laid out on this target (GFX10/10.3/11; whether one is for
    a given dim, texel size and GB_ADDR_CONFIG is layout.mode_facts')."""
    target = getattr(b, "target", "")
    if not target.startswith(("gfx101", "gfx103", "gfx11")):
        return ()
    return tuple(m for m in sorted(layout.sw_mode_names(gfx11(b))) if m != layout.LINEAR)


def translate(ins, b: Builder):
    n = ins.name
    f = ins.fields
    if n.startswith("image_atomic_"):
        return _atomic(ins, b)
    if n == "image_get_resinfo":
        return _resinfo(ins, b)
    if n not in ("image_load", "image_store", "image_load_mip", "image_store_mip"):
        unsupported("only storage image load/store")
    if f.get("lwe") or f.get("r128") or (f.get("tfe") and n not in ("image_load", "image_load_mip")):
        # lwe: the LOD warning's condition is not established; tfe has a status only on loads
        unsupported("r128/lwe image access, tfe on an image_store")
    d16 = bool(f.get("d16"))
    if d16 and bin(f.get("dmask", 0xF) & 0xF).count("1") % 2:
        # two 16-bit components a VGPR: what the last VGPR's other half gets is not established
        unsupported("d16 image access of an odd number of components")
    dim = f.get("dim", 0)
    if dim not in DIMS:
        unsupported("image dimension cube or MSAA")
    r = f["srsrc"] * 4
    d = [b.sget(r + j) for j in range(8)]
    img = describe(b, d, dim, one_d_as_2d=True)
    real, fm = img.real, img.fm
    ncoord = NCOORD[dim]
    xy = _coords(ins, b, ncoord + (1 if n.endswith("_mip") else 0), bool(f.get("a16")))
    # _mip: the level is BASE_LEVEL + the last coordinate (texel_address)
    addr, inb = texel_address(b, img, xy[:ncoord], xy[ncoord] if n.endswith("_mip") else None)
    ok = b.bin("and", "b1", b.bin("and", "b1", b.exec(), inb), b.bin("and", "b1", real, fm.known))
    dmask = f.get("dmask", 0xF) & 0xF
    chans = [c for c in range(4) if dmask >> c & 1]
    sel = [_f(b, d, f"DST_SEL_{c}") for c in "XYZW"]
    if n.startswith("image_load"):
        words = formats.load_texel(b, fm, addr, ok)
        vals, nan = formats.decode(b, fm, words)
        _refuse(
            b,
            "image.unsupported_format",
            b.bin("and", "b1", ok, nan),
            "a NaN read from a 16/11/10-bit float channel (the bits it widens to are not established)",
        )
        out, bad_sel = formats.swizzle(b, fm, vals, sel)
        _refuse(
            b, "image.unsupported_format", b.bin("and", "b1", real, bad_sel), "T# DST_SEL is a reserved value"
        )
        # a coordinate out of range reads 0; where the format's default W or a DST_SEL "1"
        # would make that 1 (not established which), the lane refuses
        sel_req = [sel[c] for c in chans]
        outside = b.bin("and", "b1", b.bin("and", "b1", b.exec(), real), b.un("not", "b1", inb))
        if sel_req:
            _refuse(
                b,
                "image.unsupported_format",
                b.bin("and", "b1", outside, formats.gives_one(b, fm, sel_req, len(sel_req))),
                "a load out of range whose result would hold the format's default 1",
            )
        res = [b.select(ok, out[c], C(b, "u32", 0)) for c in chans]
        if d16:
            _refuse(
                b,
                "image.unsupported_format",
                b.bin("and", "b1", ok, formats.d16_sources(b, fm, sel_req, len(sel_req))),
                "a d16 load of a channel whose 16-bit form needs rounding or narrowing (only "
                "16-bit float and 8/16-bit integer channels are exact)",
            )
            h = [formats.to_d16(b, fm, v) for v in res]
            res = [
                b.bin("or", "u32", h[k], b.bin("shl", "u32", h[k + 1], C(b, "u32", 16)))
                for k in range(0, len(h), 2)
            ]
        for k, v in enumerate(res):
            b.vset(f["vdata"] + k, v)
        if f.get("tfe"):
            tfe_status(b, real)
        return
    # image_store: channels come from consecutive vdata registers in dmask order.  A dmask that
    # leaves out a channel of the format, or a DST_SEL that does not select each channel the
    # format has in place (what the hardware stores then is not established), refuses.
    has = [b.cmp("ne", "u32", w, C(b, "u32", 0)) for w in fm.width]
    odd = []
    for c in range(4):
        if not dmask >> c & 1:
            odd.append(has[c])
        else:
            odd.append(b.bin("and", "b1", has[c], _ne(b, sel[c], SEL_X + c)))
    _refuse(
        b,
        "image.unsupported_format",
        b.bin("and", "b1", real, _any(b, *odd)),
        "image_store's dmask leaves out a channel of the image's format, or its DST_SEL is not the identity",
    )
    if d16:  # component k in half k % 2 of VGPR k // 2
        halves = [b.vget(f["vdata"] + k // 2) for k in range(len(chans))]
        comp = [
            formats.from_d16(b, fm, b.bin("shr", "u32", hv, C(b, "u32", 16)) if k % 2 else hv)
            for k, hv in enumerate(halves)
        ]
    else:
        comp = [b.vget(f["vdata"] + k) for k in range(len(chans))]
    vals = [comp[chans.index(c)] if c in chans else C(b, "u32", 0) for c in range(4)]
    words, lossy, unwritable = formats.encode(b, fm, vals)
    _refuse(
        b,
        "image.unsupported_format",
        b.bin("and", "b1", real, unwritable),
        "image_store to a USCALED, SSCALED or 5_9_9_9 format (the rounding is not established)",
    )
    _refuse(
        b,
        "image.unsupported_format",
        b.bin("and", "b1", ok, lossy),
        "image_store of an integer outside its channel's range or of a NaN to a 16/11/10-bit "
        "float channel (what the hardware stores is not established)",
    )
    formats.store_texel(b, fm, addr, ok, words)


# image atomics carried out (the integer ones of vector_memory.ATOMICS; the float ones refuse)
ATOMIC_OPS = (
    "swap",
    "cmpswap",
    "add",
    "sub",
    "smin",
    "umin",
    "smax",
    "umax",
    "and",
    "or",
    "xor",
    "inc",
    "dec",
)


def _atomic(ins, b: Builder):
    """image_atomic_<op> (decision 0034) on a storage image of a one-channel integer format:
    32-bit (R32_UINT, R32_SINT; dmask 0x1, cmpswap 0x3) or 64-bit (RADV's R64_UINT / R64_SINT,
    a T# of format 32_32_UINT / 32_32_SINT, which ACO accesses with dmask 0x3, cmpswap 0xF: "only
    R64_UINT and R64_SINT supported", aco_instruction_selection.cpp); the op, not the format,
    says signed or unsigned.  Addressed as image_load addresses the texel (describe /
    texel_address: every dim, layout and level image_load carries out), through the IR's
    ``atomic`` op (each backend's atomics, as buffer and LDS atomics).  vdata holds the data
    (cmpswap: the new value, then the compared one); with GLC the texel's value before the op
    is returned to vdata.  Refused by name: ``program.unsupported_instruction`` for float
    atomics (fmin/fmax/fcmpswap), another dmask, a16/d16/tfe/lwe/r128;
    ``image.unsupported_format`` for a format other than the dmask's width's; ``image.
    unsupported_descriptor`` for an active lane whose coordinate is out of range or whose T# is
    the null descriptor (TYPE 0): what the hardware writes and returns there is not established
    from a primary source (the Vulkan robustness rules leave the returned value undefined)."""
    n = ins.name
    f = ins.fields
    op = n[len("image_atomic_") :]
    if op not in ATOMIC_OPS:
        unsupported(f"{n}: float image atomics are not translated")
    if f.get("a16") or f.get("tfe") or f.get("lwe") or f.get("r128") or f.get("d16"):
        unsupported("a16/r128/tfe/lwe/d16 image atomic")
    dmask = f.get("dmask", 0xF) & 0xF
    cmp = op == "cmpswap"
    if dmask not in ((0x3, 0xF) if cmp else (0x1, 0x3)):
        unsupported("image atomic whose dmask is not one 32-bit or 64-bit value")
    wide = dmask == (0xF if cmp else 0x3)
    dim = f.get("dim", 0)
    if dim not in DIMS:
        unsupported("image dimension cube or MSAA")
    r = f["srsrc"] * 4
    d = [b.sget(r + j) for j in range(8)]
    img = describe(b, d, dim, one_d_as_2d=True)
    real, fm = img.real, img.fm
    ex = b.exec()
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.un("not", "b1", real),
        "an image atomic through the null descriptor (TYPE 0): what it returns is not established",
    )
    # one 32-bit integer channel, or (64-bit) the two 32-bit channels RADV's R64 T# has
    chans = [_eq(b, fm.width[0], 32), _eq(b, fm.width[1], 32 if wide else 0), _eq(b, fm.width[2], 0)]
    fits = b.bin(
        "and",
        "b1",
        fm.is_kind(formats.UINT, formats.SINT),
        b.bin(
            "and",
            "b1",
            _eq(b, fm.nbytes, 8 if wide else 4),
            b.bin("and", "b1", chans[0], b.bin("and", "b1", chans[1], chans[2])),
        ),
    )
    _refuse(
        b,
        "image.unsupported_format",
        b.bin("and", "b1", b.bin("and", "b1", real, fm.known), b.un("not", "b1", fits)),
        "an image atomic on a format other than R32_UINT / R32_SINT (32-bit) or 32_32_UINT / "
        "32_32_SINT (64-bit, RADV's R64) (not carried out)",
    )
    ncoord = NCOORD[dim]
    addr, inb = texel_address(b, img, _coords(ins, b, ncoord))
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.bin("and", "b1", real, b.un("not", "b1", inb)),
        "an image atomic whose coordinate is out of range: what the hardware writes and returns "
        "there is not established",
    )
    ok = b.bin("and", "b1", b.bin("and", "b1", ex, inb), b.bin("and", "b1", real, fits))
    t, nw = ("u64", 2) if wide else ("u32", 1)

    def rd(k):
        v = f["vdata"] + k * nw
        return b.pack64(b.vget(v), b.vget(v + 1)) if wide else b.vget(v)

    args = (addr, ok, rd(0)) + ((rd(1),) if cmp else ())
    old = b.emit("atomic", t, *args, uniform=False, space="global", op=op, bits=32 * nw)
    if f.get("glc"):
        old = b.select(ok, old, C(b, t, 0))
        if wide:
            b.vset(f["vdata"], b.lo32(old))
            b.vset(f["vdata"] + 1, b.hi32(old))
        else:
            b.vset(f["vdata"], old)


# image_get_resinfo: the T# TYPE each dim reads (exactly its own), and which of the four results
# (x width, y height or 1-D layers, z depth or 2-D layers, w levels) that TYPE defines
RESINFO_TYPE = {
    DIM_1D: TYPE_1D,
    DIM_2D: TYPE_2D,
    DIM_3D: TYPE_3D,
    DIM_1D_ARRAY: TYPE_1D_ARRAY,
    DIM_2D_ARRAY: TYPE_2D_ARRAY,
}
RESINFO_DEFINED = {DIM_1D: 0b1001, DIM_2D: 0b1011, DIM_3D: 0b1111, DIM_1D_ARRAY: 0b1011, DIM_2D_ARRAY: 0b1111}


def _resinfo(ins, b: Builder):
    """image_get_resinfo (decision 0034): the view's size at mip level ``lod`` (vaddr) and its
    level count, read from the T# as AMD's own replacement of the instruction computes them
    (Mesa's ac_nir_lower_resinfo.c, "extracting the information from descriptors", GFX10):
    level = BASE_LEVEL + lod; x = (WIDTH + 1) >> level, y = (HEIGHT + 1) >> level (2-D, 3-D)
    or the layers DEPTH - BASE_ARRAY + 1 (1-D arrays), z = (DEPTH + 1) >> level (3-D) or the
    layers (2-D arrays), sizes of 2-D/3-D images at least 1; w = LAST_LEVEL - BASE_LEVEL + 1;
    all 0 through the null descriptor (RADV's all-zero T#; the lowering's handle_null_desc tests
    dword 1, the type test is ours: a T# with one of them zero but not the other refuses).  The
    results dmask selects go to consecutive VGPRs.  Refused by name: a16/d16/tfe/lwe/r128, cube
    and MSAA dims (``program.unsupported_instruction``); a T# whose TYPE is not the dim's own
    (a cube, MSAA or other T#), a dmask asking for a result the TYPE does not define, a lod past
    LAST_LEVEL, a 1-D width that minifies to 0 (``image.unsupported_descriptor``): what the
    hardware returns there is not established."""
    f = ins.fields
    if f.get("a16") or f.get("tfe") or f.get("lwe") or f.get("r128") or f.get("d16"):
        unsupported("a16/r128/tfe/lwe/d16 image_get_resinfo")
    dim = f.get("dim", 0)
    if dim not in DIMS:
        unsupported("image_get_resinfo of a cube or MSAA image")
    dmask = f.get("dmask", 0xF) & 0xF
    r = f["srsrc"] * 4
    d = [b.sget(r + j) for j in range(8)]
    lod = _coords(ins, b, 1)[0]
    typ = _f(b, d, "TYPE")
    # the null descriptor (RADV's is all zeros): TYPE 0 and dword 1 (format, width) zero
    null = _eq(b, typ, 0)
    real = b.un("not", "b1", null)
    _refuse(
        b,
        "image.unsupported_descriptor",
        _any(b, b.bin("and", "b1", null, _ne(b, d[1], 0)), b.bin("and", "b1", real, _eq(b, d[1], 0))),
        "image_get_resinfo through a T# with TYPE 0 and dword 1 set, or dword 1 zero (the "
        "INVALID format) and a TYPE: which of them the hardware treats as null is not established",
    )
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.bin("and", "b1", real, _ne(b, typ, RESINFO_TYPE[dim])),
        "image_get_resinfo through a T# whose TYPE is not the instruction's dim (what the "
        "hardware returns for another type, cube and MSAA images included, is not established)",
    )
    if dmask & ~RESINFO_DEFINED[dim]:
        _refuse(
            b,
            "image.unsupported_descriptor",
            real,
            "image_get_resinfo asking for a result the image's type does not define (what the "
            "hardware returns there is not established)",
        )
    base_level, last_level = _f(b, d, "BASE_LEVEL"), _f(b, d, "LAST_LEVEL")
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.bin(
            "and",
            "b1",
            real,
            _any(
                b,
                b.cmp("gt", "u32", base_level, last_level),
                b.cmp("gt", "u32", lod, b.bin("sub", "u32", last_level, base_level)),
            ),
        ),
        "image_get_resinfo of a mip level past the T#'s LAST_LEVEL, or BASE_LEVEL past LAST_LEVEL "
        "(what the hardware returns there is not established)",
    )
    level = b.bin("and", "u32", b.bin("add", "u32", base_level, lod), C(b, "u32", 31))
    one = C(b, "u32", 1)
    width = b.bin(
        "add",
        "u32",
        b.bin("or", "u32", _f(b, d, "WIDTH_LO"), b.bin("shl", "u32", _f(b, d, "WIDTH_HI"), C(b, "u32", 2))),
        one,
    )
    height = b.bin("add", "u32", _f(b, d, "HEIGHT"), one)
    depth = b.bin("add", "u32", _f(b, d, "DEPTH"), one)
    layers = b.bin("sub", "u32", depth, _f(b, d, "BASE_ARRAY"))

    def mini(v, at_least_one):
        m = b.bin("shr", "u32", v, level)
        return b.bin("max", "u32", m, one) if at_least_one else m

    big = dim in (DIM_2D, DIM_3D, DIM_2D_ARRAY)
    x = mini(width, big)
    if dim in (DIM_1D, DIM_1D_ARRAY):
        _refuse(
            b,
            "image.unsupported_descriptor",
            b.bin("and", "b1", real, _eq(b, x, 0)),
            "image_get_resinfo of a 1-D level whose width minifies to 0 (what the hardware "
            "returns there is not established)",
        )
    zero = C(b, "u32", 0)
    y = layers if dim == DIM_1D_ARRAY else mini(height, True) if big else zero
    z = mini(depth, True) if dim == DIM_3D else layers if dim == DIM_2D_ARRAY else zero
    w = b.bin("add", "u32", b.bin("sub", "u32", last_level, base_level), one)
    vals = [x, y, z, w]
    for k, c in enumerate(c for c in range(4) if dmask >> c & 1):
        b.vset(f["vdata"] + k, b.select(real, vals[c], zero))
