"""MIMG: storage-image loads and stores (image_load / image_store, no sampler) of linear 1-D/2-D
and tiled 2-D images in the four formats converted exactly, and null descriptors (TYPE 0,
RADV's all-zero descriptor: loads read 0, stores drop; TYPE 1..7 are reserved and refuse).
Every other T# refuses the dispatch by name when an active lane uses it (refuse_if, so every
backend checks the descriptor where its value becomes known: it is usually loaded from guest
memory by s_load at run time):

* ``image.unsupported_layout``: a SW_MODE not laid out here (below), a tiled image whose base
  address is not aligned to its block, or DCC compression.
* ``image.unsupported_format``: an IMG_FORMAT other than the four below, DST_SEL swizzles
  that are not the identity (a channel the format lacks may also select its default 0 / 1), or
  an image_store whose dmask leaves out a channel of the format.
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
tables generated from Mesa's register database (memory/tsharp.py).  Formats: 56 8_8_8_8_UNORM,
22 32_FLOAT, 20 32_UINT, 21 32_SINT.  Coordinates outside the image read 0 and drop stores, as
hardware does.  unorm8 -> float is byte / 255
(correctly rounded); float -> unorm8 clamps to [0, 1] (NaN -> 0) and rounds x * 255 to nearest
even.  Sampling instructions, d16, a16, r128, tfe/lwe, 3-D/array/MSAA dims and image atomics
are not translated (``program.unsupported_instruction``).
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..memory import layout, tsharp
from .common import sext48, unsupported


def _format(name: str) -> int:
    return next(v for v, f in tsharp.formats().items() if f.name == name)


# IMG_FORMAT values from the generated table (56, 22, 20, 21)
FMT_RGBA8, FMT_R32F, FMT_R32UI, FMT_R32I = map(_format, ("8_8_8_8_UNORM", "32_FLOAT", "32_UINT", "32_SINT"))
FORMATS = (FMT_RGBA8, FMT_R32F, FMT_R32UI, FMT_R32I)  # all 4 bytes per texel
BPE_LOG2 = 2  # every format carried out has 4 bytes per texel
PITCH_TEXELS = layout.block_dims(layout.LINEAR, layout.RSRC_2D, BPE_LOG2)[0]  # 256 bytes: 64 texels
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
    fmt = _f(b, d, "FORMAT")
    sel = [_f(b, d, f"DST_SEL_{c}") for c in "XYZW"]
    four = _eq(b, fmt, FMT_RGBA8)
    one = _any(b, *(_eq(b, fmt, f) for f in FORMATS if f != FMT_RGBA8))
    # identity selects; a channel a 1-channel format lacks may select its default (0, 0, 1)
    sel_ok = [_eq(b, sel[0], SEL_X)]
    for c, default in ((1, SEL_0), (2, SEL_0), (3, SEL_1)):
        ident = _eq(b, sel[c], SEL_X + c)
        sel_ok.append(b.bin("or", "b1", ident, b.bin("and", "b1", one, _eq(b, sel[c], default))))
    good = b.bin(
        "and", "b1", b.bin("and", "b1", sel_ok[0], sel_ok[1]), b.bin("and", "b1", sel_ok[2], sel_ok[3])
    )
    good = b.bin("and", "b1", good, b.bin("or", "b1", four, one))
    _refuse(
        b,
        "image.unsupported_format",
        b.bin("and", "b1", real, b.un("not", "b1", good)),
        "T# IMG_FORMAT is not 8_8_8_8_UNORM, 32_FLOAT, 32_UINT or 32_SINT, or its DST_SEL "
        "swizzle is not the identity",
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
    return real, fmt


def tiled_modes(b: Builder, dim: int) -> tuple[int, ...]:
    """The tiled SW_MODEs laid out for this dim on this target (GFX10/10.3 2-D images)."""
    target = getattr(b, "target", "")
    return TILED_2D if dim == DIM_2D and target.startswith(("gfx101", "gfx103")) else ()


def _align(b, v, a):
    return b.bin("and", "u32", b.bin("add", "u32", v, C(b, "u32", a - 1)), C(b, "u32", -a & 0xFFFFFFFF))


def _tiled_offset(b: Builder, mode: int, width, x, y):
    """Byte offset of texel (x, y) of a 2-D image (one level, one slice) in swizzle mode ``mode``
    (a mode whose pattern is a permutation of x and y bits): layout.address in IR."""
    rbplus = getattr(b, "target", "").startswith("gfx103")
    pattern = layout.pattern_for(layout.Chip(rbplus, 0), mode, layout.RSRC_2D, BPE_LOG2)
    assert pattern is not None
    bw, bh, _ = layout.block_dims(mode, layout.RSRC_2D, BPE_LOG2)
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


def translate(ins, b: Builder):
    n = ins.name
    f = ins.fields
    if n.startswith(("image_sample", "image_gather4")) and not f.get("d16"):
        return _sample_null(ins, b)
    if n not in ("image_load", "image_store"):
        unsupported("only storage image load/store")
    if f.get("d16") or f.get("a16") or f.get("tfe") or f.get("lwe") or f.get("r128"):
        unsupported("d16/a16/r128/tfe/lwe image access")
    dim = f.get("dim", 0)
    if dim not in (DIM_1D, DIM_2D):
        unsupported("image dimension other than 1D/2D")
    r = f["srsrc"] * 4
    d = [b.sget(r + j) for j in range(8)]
    real, fmt = check_tsharp(b, d, dim)
    base = sext48(b, b.bin("shl", "u64", b.pack64(d[0], _f(b, d, "BASE_ADDRESS_HI")), C(b, "u64", 8)))
    width = b.bin(
        "add",
        "u32",
        b.bin("or", "u32", _f(b, d, "WIDTH_LO"), b.bin("shl", "u32", _f(b, d, "WIDTH_HI"), C(b, "u32", 2))),
        C(b, "u32", 1),
    )
    height = b.bin("add", "u32", _f(b, d, "HEIGHT"), C(b, "u32", 1))
    xy = _coords(ins, b, 2 if dim == DIM_2D else 1)
    x = xy[0]
    inb = b.cmp("lt", "u32", x, width)  # unsigned: negative coordinates are out
    texel = b.cvt("u64", x)
    if dim == DIM_2D:
        inb = b.bin("and", "b1", inb, b.cmp("lt", "u32", xy[1], height))
        texel = b.bin(
            "add",
            "u64",
            b.bin("mul", "u64", b.cvt("u64", xy[1]), b.cvt("u64", _align(b, width, PITCH_TEXELS))),
            texel,
        )
    offset = b.bin("shl", "u64", texel, C(b, "u64", BPE_LOG2))
    if dim == DIM_2D:
        sw_mode = _f(b, d, "SW_MODE")
        for m in tiled_modes(b, dim):
            offset = b.select(_eq(b, sw_mode, m), _tiled_offset(b, m, width, x, xy[1]), offset)
    addr = b.bin("add", "u64", base, offset)
    ok = b.bin("and", "b1", b.bin("and", "b1", b.exec(), inb), real)
    dmask = f.get("dmask", 0xF)
    chans = [c for c in range(4) if dmask >> c & 1]
    is8 = _eq(b, fmt, FMT_RGBA8)
    isf = _eq(b, fmt, FMT_R32F)
    if n == "image_load":
        ld = b.emit("load", "u32", addr, ok, uniform=False, space="global", nbytes=4, words=1)
        raw = b.emit("word", "u32", ld, k=0)
        one_f = C(b, "u32", 0x3F800000)
        for k, c in enumerate(chans):
            byte = _u(b, raw, 8 * c, 0xFF)
            unorm = b.bitcast("u32", b.bin("fdiv", "f32", b.cvt("f32", byte), C(b, "f32", 255.0)))
            if c == 0:
                wide = raw
            elif c == 3:
                wide = b.select(isf, one_f, C(b, "u32", 1))
            else:
                wide = C(b, "u32", 0)
            v = b.select(is8, unorm, wide)
            b.vset(f["vdata"] + k, b.select(ok, v, C(b, "u32", 0)))
        return
    # image_store: channels come from consecutive vdata registers in dmask order; a dmask that
    # leaves out a channel of the format (what the hardware stores there is not established)
    # refuses
    if not dmask & 1 or dmask & 0xF != 0xF:  # every format has R; only rgba8 has G, B, A
        partial = real if not dmask & 1 else b.bin("and", "b1", real, is8)
        _refuse(
            b,
            "image.unsupported_format",
            partial,
            "image_store's dmask leaves out a channel of the image's format",
        )
    vals = {c: b.vget(f["vdata"] + k) for k, c in enumerate(chans)}
    packed = C(b, "u32", 0)
    for c in range(4):
        if c not in vals:
            continue
        v = b.bitcast("f32", vals[c])
        nan = b.cmp("u", "f32", v, v)
        cl = b.bin("fmin", "f32", b.bin("fmax", "f32", v, C(b, "f32", 0.0)), C(b, "f32", 1.0))
        q = b.cvt("u32", b.un("rndne", "f32", b.bin("fmul", "f32", cl, C(b, "f32", 255.0))))
        q = b.select(nan, C(b, "u32", 0), q)
        packed = b.bin("or", "u32", packed, b.bin("shl", "u32", q, C(b, "u32", 8 * c)))
    word = b.select(is8, packed, vals.get(0, C(b, "u32", 0)))
    b.effect("store", "u32", addr, ok, word, space="global", nbytes=4)


def _sample_null(ins, b: Builder):
    """Sampling is translated for null descriptors only (they read 0); an active lane sampling a
    real image refuses the dispatch."""
    f = ins.fields
    dmask = f.get("dmask", 0) & 0xF
    # tfe/lwe add a status register whose value we do not know; dmask 0 has no documented
    # meaning here (a field audit found them ignored)
    if f.get("tfe") or f.get("lwe") or not dmask:
        unsupported("tfe/lwe or dmask 0 on sampling")
    r = f["srsrc"] * 4
    typ = _f(b, {3: b.sget(r + 3)}, "TYPE")
    real = b.cmp("ge", "u32", typ, C(b, "u32", TYPE_1D))
    _refuse_reserved_type(b, typ)
    b.effect("refuse_if", "b1", b.bin("and", "b1", b.exec(), real), why="sampling a non-null image")
    # a gather returns four texels of the one channel dmask picks; a sample one value per channel
    for k in range(4 if ins.name.startswith("image_gather4") else bin(dmask).count("1")):
        b.vset(f["vdata"] + k, C(b, "u32", 0))
