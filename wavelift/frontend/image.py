"""MIMG: storage-image loads and stores (image_load / image_store, and image_load_mip /
image_store_mip of level 0: the T# has one level) of linear 1-D/2-D and tiled 2-D images in
every format frontend/formats.py converts exactly (1, 2, 4, 8 and 16-byte texels: the texel
size, read from the format at run time, picks the pitch and the swizzle pattern), and null
descriptors (TYPE 0,
RADV's all-zero descriptor: loads read 0, stores drop; TYPE 1..7 are reserved and refuse).
Every other T# refuses the dispatch by name when an active lane uses it (refuse_if, so every
backend checks the descriptor where its value becomes known: it is usually loaded from guest
memory by s_load at run time):

* ``image.unsupported_layout``: a SW_MODE not laid out here (below), a tiled image whose base
  address is not aligned to its block, or DCC compression.
* ``image.unsupported_format``: an IMG_FORMAT not converted exactly (formats.py: SRGB,
  FLOAT_CLAMP, compressed, FMASK, YUV, buffer-only), a reserved DST_SEL; an image_store whose
  dmask leaves out a channel of the format or whose DST_SEL does not keep each channel in
  place, or that formats.encode cannot store exactly; a NaN loaded from a 16/11/10-bit float;
  a load out of range whose requested result would hold the format's default 1 (DST_SEL "1"
  or a missing W: hardware may give 1 or 0 there).
* ``image.unsupported_descriptor``: TYPE other than 1D/2D or not the instruction's dim, mip
  levels (BASE_LEVEL, LAST_LEVEL, MAX_MIP, MIN_LOD), arrays/depth/custom pitch (dword 4),
  RESOURCE_LEVEL clear, or any reserved bit set.

T# fields (GFX10/10.3, dwords d0..d7): BASE_ADDRESS = (d0 | d1[7:0] << 32) << 8, MIN_LOD
d1[19:8], FORMAT d1[28:20], WIDTH-1 = d1[31:30] | d2[11:0] << 2, HEIGHT-1 d2[27:14],
RESOURCE_LEVEL d2[31], DST_SEL_X..W d3[11:0] (0 = "0", 1 = "1", 4..7 = X..W), BASE_LEVEL
d3[15:12], LAST_LEVEL d3[19:16], SW_MODE d3[24:20], BC_SWIZZLE d3[27:25], TYPE d3[31:28] (8 = 1D,
9 = 2D); d4 DEPTH/PITCH/BASE_ARRAY; d5 ARRAY_PITCH [3:0], MAX_MIP [7:4], hints [22:8] and [31];
d6 counter bank / DCC block sizes, WRITE_COMPRESS_ENABLE [20], COMPRESSION_EN [21], metadata
address d6[31:24] / d7.  Fields that change nothing for an uncompressed storage load/store are
ignored: BC_SWIZZLE (border colours of sampling), d5's hints (MID_LOD_WARN, PERF_MOD,
CORNER_SAMPLES, LINKED_RESOURCE, LOD_HDW_CNT_EN, PRT_DEFAULT, BIG_PAGE), d6's DCC and counter
fields other than the two enables, and the metadata address.

Layouts (wavelift/memory/layout.py, checked against Mesa's addrlib): linear (rows
``pitch = align(width, 256 bytes / bytes per texel)`` texels apart, so 64 texels for the 4-byte
formats) and, for 2-D images on GFX10/10.3, the swizzle modes whose pattern does not depend on
the GPU's pipe configuration: 256B_S, 256B_D, 4KB_S, 4KB_D, 64KB_S, 64KB_D (a texel's place in
its block is a fixed permutation of its x and y bits; blocks are row-major, the pitch rounded
up to the block).  The _X and _T modes XOR in pipe and bank bits that depend on GB_ADDR_CONFIG,
which a capture does not record: they are refused by name (``image.unsupported_layout``), as
are the modes GFX10 does not define.  T# field positions and IMG_FORMAT values come from the
tables generated from Mesa's register database (memory/tsharp.py).  Conversions: formats.py.
Coordinates outside the image read 0 and drop stores, as hardware does; DST_SEL applies to
loads.  d16 (two 16-bit components a VGPR, an even count): loads of 16-bit float and 8/16-bit
integer channels (exact; others refuse by name), stores of any format (each half widened
exactly).  Sampling instructions, a16, r128, tfe/lwe, 3-D/array/MSAA dims, mip levels other
than 0, d16 of an odd component count and image atomics are not translated (``program.unsupported_instruction``, or
``image.unsupported_descriptor`` for a level).
"""

from __future__ import annotations

import dataclasses

from ..ir.builder import Builder
from ..ir.program import Value
from ..memory import layout, tsharp
from . import formats
from .common import sext48, unsupported

BPE_LOG2S = (0, 1, 2, 3, 4)  # texel sizes of image formats: 1, 2, 4, 8, 16 bytes
DIM_1D, DIM_2D = 0, 1
TYPE_1D, TYPE_2D = tsharp.TYPE_1D, tsharp.TYPE_2D
SEL_0, SEL_1, SEL_X = 0, 1, 4
# tiled modes laid out for 2-D images: their pattern depends only on the GFX level (RB+ or not)
TILED_2D = tuple(
    m
    for m, name in sorted(layout.sw_mode_names().items())
    if name in ("256B_S", "256B_D", "4KB_S", "4KB_D", "64KB_S", "64KB_D")
)
# bits of each T# dword that must be clear (reserved, or a feature refused by name above)
MUST_BE_ZERO = {
    1: 0x2000_0000,  # d1[29] reserved
    2: 0x7000_3000,  # d2[13:12], [30:28] reserved
    4: 0xFFFF_FFFF,  # DEPTH (last layer / GFX10.3 custom pitch), BASE_ARRAY
    5: 0x7800_00FF,  # ARRAY_PITCH, MAX_MIP; d5[30:27] reserved
    6: 0x0000_7B00,  # d6[9:8], [14:11] reserved
}


@dataclasses.dataclass
class ImageView:
    """One T#'s facts as IR values, for every instruction that addresses its texels (loads,
    stores, sampling): ``real`` (not the null descriptor), ``fm`` (formats.Format), ``base``
    (byte address), ``width``/``height`` (texels), ``sw_mode``, ``dim`` and the words ``d``."""

    d: list
    dim: int
    real: Value
    fm: formats.Format
    base: Value
    width: Value
    height: Value
    sw_mode: Value


def describe(b: Builder, d: list, dim: int) -> ImageView:
    """Check the T# ``d`` (check_tsharp: every field not carried out refuses by name) and read
    the fields that place its texels."""
    real, fm = check_tsharp(b, d, dim)
    base = sext48(b, b.bin("shl", "u64", b.pack64(d[0], _f(b, d, "BASE_ADDRESS_HI")), C(b, "u64", 8)))
    width = b.bin(
        "add",
        "u32",
        b.bin("or", "u32", _f(b, d, "WIDTH_LO"), b.bin("shl", "u32", _f(b, d, "WIDTH_HI"), C(b, "u32", 2))),
        C(b, "u32", 1),
    )
    height = b.bin("add", "u32", _f(b, d, "HEIGHT"), C(b, "u32", 1))
    return ImageView(d, dim, real, fm, base, width, height, _f(b, d, "SW_MODE"))


def texel_address(b: Builder, img: ImageView, xy: list):
    """(byte address, in bounds) of texel ``xy`` (one coordinate per dimension of ``img.dim``,
    unsigned: negative coordinates are out of bounds) in the image's layout."""
    x = xy[0]
    bpe = b.un("ctz", "u32", img.fm.nbytes)  # log2 of the texel size (a power of two for images)
    inb = b.cmp("lt", "u32", x, img.width)
    texel = b.cvt("u64", x)
    if img.dim == DIM_2D:
        inb = b.bin("and", "b1", inb, b.cmp("lt", "u32", xy[1], img.height))
        pitch = _by_bpe(
            b, bpe, lambda k: _align(b, img.width, layout.block_dims(layout.LINEAR, layout.RSRC_2D, k)[0])
        )
        texel = b.bin("add", "u64", b.bin("mul", "u64", b.cvt("u64", xy[1]), b.cvt("u64", pitch)), texel)
    offset = b.bin("shl", "u64", texel, b.cvt("u64", bpe))
    if img.dim == DIM_2D:
        for m in tiled_modes(b, img.dim):
            tiled = _by_bpe(b, bpe, lambda k, m=m: _tiled_offset(b, m, k, img.width, x, xy[1]))
            offset = b.select(_eq(b, img.sw_mode, m), tiled, offset)
    return b.bin("add", "u64", img.base, offset), inb


def C(b, t, v):
    return b.const(t, v)


def _u(b, x, sh, mask):
    return b.bin("and", "u32", b.bin("shr", "u32", x, C(b, "u32", sh)), C(b, "u32", mask))


def _f(b, d, name):
    """T# field ``name`` (register-database name and bits, the same on GFX10 and GFX10.3 for every
    field read here) of the descriptor words ``d``."""
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


def _coords(ins, b, n):
    f = ins.fields
    regs = f.get("vaddr_nsa")
    if regs is None:
        regs = tuple(f["vaddr"] + i for i in range(n))
    return [b.vget(r) for r in regs[:n]]


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
    typ = _f(b, d, "TYPE")
    real = b.cmp("ge", "u32", typ, C(b, "u32", TYPE_1D))
    _refuse_reserved_type(b, typ)
    want = TYPE_2D if dim == DIM_2D else TYPE_1D
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.bin("and", "b1", real, _ne(b, typ, want)),
        "T# TYPE is not the instruction's 1D/2D dim (3D, cube, array and MSAA images are not carried out)",
    )
    sw_mode = _f(b, d, "SW_MODE")
    dcc = b.bin("or", "u32", _f(b, d, "WRITE_COMPRESS_ENABLE"), _f(b, d, "COMPRESSION_EN"))
    laid_out = [_eq(b, sw_mode, layout.LINEAR)]
    for m in tiled_modes(b, dim):
        # the base must be aligned to the block (T# BASE_ADDRESS is in 256-byte units)
        blk = layout.mode_kind(m)[0]  # type: ignore[index]
        aligned = _eq(b, b.bin("and", "u32", d[0], C(b, "u32", (1 << (blk - 8)) - 1)), 0)
        laid_out.append(b.bin("and", "b1", _eq(b, sw_mode, m), aligned))
    _refuse(
        b,
        "image.unsupported_layout",
        b.bin("and", "b1", real, b.bin("or", "b1", b.un("not", "b1", _any(b, *laid_out)), _ne(b, dcc, 0))),
        "T# SW_MODE is not one wavelift lays out (linear; 2-D 256B/4KB/64KB _S and _D), the "
        "base address is not aligned to its block, or the image is DCC-compressed",
    )
    fm = formats.Format(b, _f(b, d, "FORMAT"), image=True)
    _refuse(
        b,
        "image.unsupported_format",
        b.bin("and", "b1", real, b.un("not", "b1", fm.known)),
        "T# IMG_FORMAT is not one whose conversion is exactly defined (SRGB, FLOAT_CLAMP, "
        "block-compressed, FMASK, YUV and buffer-only formats are not carried out)",
    )
    bad = [
        _ne(b, _f(b, d, "MIN_LOD"), 0),
        _ne(b, _f(b, d, "BASE_LEVEL"), 0),
        _ne(b, _f(b, d, "LAST_LEVEL"), 0),
        _eq(b, _f(b, d, "RESOURCE_LEVEL"), 0),
    ]  # RESOURCE_LEVEL must be 1
    bad += [_ne(b, b.bin("and", "u32", d[k], C(b, "u32", m)), 0) for k, m in MUST_BE_ZERO.items()]
    _refuse(
        b,
        "image.unsupported_descriptor",
        b.bin("and", "b1", real, _any(b, *bad)),
        "T# with mip levels, array layers, depth or a custom pitch, RESOURCE_LEVEL clear, "
        "or reserved bits set",
    )
    return real, fm


def tiled_modes(b: Builder, dim: int) -> tuple[int, ...]:
    """The tiled SW_MODEs laid out for this dim on this target (GFX10/10.3 2-D images)."""
    target = getattr(b, "target", "")
    return TILED_2D if dim == DIM_2D and target.startswith(("gfx101", "gfx103")) else ()


def _align(b, v, a):
    return b.bin("and", "u32", b.bin("add", "u32", v, C(b, "u32", a - 1)), C(b, "u32", -a & 0xFFFFFFFF))


def _tiled_offset(b: Builder, mode: int, bpe_log2: int, width, x, y):
    """Byte offset of texel (x, y) of a 2-D image (one level, one slice) in swizzle mode ``mode``
    (a mode whose pattern is a permutation of x and y bits) with 2**bpe_log2-byte texels:
    layout.address in IR."""
    rbplus = getattr(b, "target", "").startswith("gfx103")
    pattern = layout.pattern_for(layout.Chip(rbplus, 0), mode, layout.RSRC_2D, bpe_log2)
    assert pattern is not None
    bw, bh, _ = layout.block_dims(mode, layout.RSRC_2D, bpe_log2)
    blk = len(pattern)
    inner = C(b, "u32", 0)
    for i, (mx, my, mz) in enumerate(pattern):
        assert not mz and bin(mx).count("1") + bin(my).count("1") <= 1, "not a permutation pattern"
        for mask, v in ((mx, x), (my, y)):
            if mask:
                bit = _u(b, v, mask.bit_length() - 1, 1)
                inner = b.bin("or", "u32", inner, b.bin("shl", "u32", bit, C(b, "u32", i)))
    blocks_per_row = b.bin("shr", "u32", _align(b, width, bw), C(b, "u32", bw.bit_length() - 1))
    row = b.bin("shr", "u32", y, C(b, "u32", bh.bit_length() - 1))
    col = b.bin("shr", "u32", x, C(b, "u32", bw.bit_length() - 1))
    index = b.bin(
        "add", "u64", b.bin("mul", "u64", b.cvt("u64", row), b.cvt("u64", blocks_per_row)), b.cvt("u64", col)
    )
    return b.bin("add", "u64", b.bin("shl", "u64", index, C(b, "u64", blk)), b.cvt("u64", inner))


def _by_bpe(b: Builder, bpe, make):
    """make(bpe_log2) selected by the run-time texel size (bpe_log2 0..4)."""
    out = make(BPE_LOG2S[0])
    for k in BPE_LOG2S[1:]:
        out = b.select(_eq(b, bpe, k), make(k), out)
    return out


def translate(ins, b: Builder):
    n = ins.name
    f = ins.fields
    if n not in ("image_load", "image_store", "image_load_mip", "image_store_mip"):
        unsupported("only storage image load/store")
    if f.get("a16") or f.get("tfe") or f.get("lwe") or f.get("r128"):
        unsupported("a16/r128/tfe/lwe image access")
    d16 = bool(f.get("d16"))
    if d16 and bin(f.get("dmask", 0xF) & 0xF).count("1") % 2:
        # two 16-bit components a VGPR: what the last VGPR's other half gets is not established
        unsupported("d16 image access of an odd number of components")
    dim = f.get("dim", 0)
    if dim not in (DIM_1D, DIM_2D):
        unsupported("image dimension other than 1D/2D")
    r = f["srsrc"] * 4
    d = [b.sget(r + j) for j in range(8)]
    img = describe(b, d, dim)
    real, fm = img.real, img.fm
    ncoord = 2 if dim == DIM_2D else 1
    xy = _coords(ins, b, ncoord + (1 if n.endswith("_mip") else 0))
    if n.endswith("_mip"):
        # the T# has one level (check_tsharp): level 0 is image_load/store; any other level
        # (what hardware gives past LAST_LEVEL is not established) refuses
        _refuse(
            b,
            "image.unsupported_descriptor",
            b.bin("and", "b1", real, _ne(b, xy[ncoord], 0)),
            "image_load_mip/image_store_mip of a level other than 0 (mip chains are not carried out)",
        )
    addr, inb = texel_address(b, img, xy[:ncoord])
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
