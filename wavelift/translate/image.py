"""MIMG: storage-image loads and stores (image_load / image_store, no sampler) on the images the
driver lays out (wavelift/driver/aco.py: linear, row pitch = width x bytes per texel, 2-D or
1-D), and null descriptors (a T# whose TYPE is neither 1D nor 2D: loads read 0, stores drop).

T# fields read (GFX10/10.3): BASE_ADDRESS = (dword0 | dword1[7:0] << 32) << 8, FORMAT
dword1[28:20], WIDTH-1 = dword1[31:30] | dword2[13:0] << 2, HEIGHT-1 = dword2[29:14], TYPE
dword3[31:28] (8 = 1D, 9 = 2D).  Formats: 56 8_8_8_8_UNORM, 22 32_FLOAT, 20 32_UINT, 21
32_SINT; any other format of a non-null image is treated as out of range (reads 0, stores drop).
Coordinates outside the image read 0 and drop stores, as hardware does.  unorm8 -> float is
byte / 255 (correctly rounded); float -> unorm8 clamps to [0, 1] (NaN -> 0) and rounds
x * 255 to nearest even.  Sampling instructions, d16, a16, tfe/lwe, 3-D/array/MSAA dims and
image atomics are not translated (``program.unsupported_instruction``).
"""
from __future__ import annotations

from .common import unsupported
from .ir import Builder

FMT_RGBA8, FMT_R32F, FMT_R32UI, FMT_R32I = 56, 22, 20, 21
DIM_1D, DIM_2D = 0, 1
TYPE_1D, TYPE_2D = 8, 9


def C(b, t, v):
    return b.const(t, v)


def _u(b, x, sh, mask):
    return b.bin("and", "u32", b.bin("shr", "u32", x, C(b, "u32", sh)), C(b, "u32", mask))


def _coords(ins, b, n):
    f = ins.fields
    regs = f.get("vaddr_nsa")
    if regs is None:
        regs = tuple(f["vaddr"] + i for i in range(n))
    return [b.vget(r) for r in regs[:n]]


def translate(ins, b: Builder):
    n = ins.name
    f = ins.fields
    if n.startswith(("image_sample", "image_gather4")) and not f.get("d16"):
        return _sample_null(ins, b)
    if n not in ("image_load", "image_store"):
        unsupported("only storage image load/store")
    if f.get("d16") or f.get("a16") or f.get("tfe") or f.get("lwe"):
        unsupported("d16/a16/tfe/lwe image access")
    dim = f.get("dim", 0)
    if dim not in (DIM_1D, DIM_2D):
        unsupported("image dimension other than 1D/2D")
    r = f["srsrc"] * 4
    d0, d1, d2, d3 = (b.sget(r + j) for j in range(4))
    base = b.bin("shl", "u64", b.pack64(d0, _u(b, d1, 0, 0xFF)), C(b, "u64", 8))
    fmt = _u(b, d1, 20, 0x1FF)
    width = b.bin("add", "u32", b.bin("or", "u32", _u(b, d1, 30, 3),
                                      b.bin("shl", "u32", _u(b, d2, 0, 0x3FFF), C(b, "u32", 2))),
                  C(b, "u32", 1))
    height = b.bin("add", "u32", _u(b, d2, 14, 0x3FFF), C(b, "u32", 1))
    typ = _u(b, d3, 28, 0xF)
    known = b.bin("or", "b1", b.bin("or", "b1", b.cmp("eq", "u32", fmt, C(b, "u32", FMT_RGBA8)),
                                    b.cmp("eq", "u32", fmt, C(b, "u32", FMT_R32F))),
                  b.bin("or", "b1", b.cmp("eq", "u32", fmt, C(b, "u32", FMT_R32UI)),
                        b.cmp("eq", "u32", fmt, C(b, "u32", FMT_R32I))))
    xy = _coords(ins, b, 2 if dim == DIM_2D else 1)
    x = xy[0]
    inb = b.cmp("lt", "u32", x, width)               # unsigned: negative coordinates are out
    row = C(b, "u32", 0)
    if dim == DIM_2D:
        inb = b.bin("and", "b1", inb, b.cmp("lt", "u32", xy[1], height))
        row = xy[1]
        valid = b.cmp("eq", "u32", typ, C(b, "u32", TYPE_2D))
    else:
        valid = b.bin("or", "b1", b.cmp("eq", "u32", typ, C(b, "u32", TYPE_1D)),
                      b.cmp("eq", "u32", typ, C(b, "u32", TYPE_2D)))
    texel = b.bin("add", "u64", b.bin("mul", "u64", b.cvt("u64", row), b.cvt("u64", width)),
                  b.cvt("u64", x))
    addr = b.bin("add", "u64", base, b.bin("shl", "u64", texel, C(b, "u64", 2)))
    ok = b.bin("and", "b1", b.bin("and", "b1", b.exec(), inb), b.bin("and", "b1", valid, known))
    dmask = f.get("dmask", 0xF)
    chans = [c for c in range(4) if dmask >> c & 1]
    is8 = b.cmp("eq", "u32", fmt, C(b, "u32", FMT_RGBA8))
    isf = b.cmp("eq", "u32", fmt, C(b, "u32", FMT_R32F))
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
    # image_store: channels come from consecutive vdata registers in dmask order
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
    r = f["srsrc"] * 4
    typ = _u(b, b.sget(r + 3), 28, 0xF)
    real = b.cmp("ge", "u32", typ, C(b, "u32", TYPE_1D))
    b.effect("refuse_if", "b1", b.bin("and", "b1", b.exec(), real), why="sampling a non-null image")
    for k in range(bin(f.get("dmask", 0xF) & 0xF).count("1")):
        b.vset(f["vdata"] + k, C(b, "u32", 0))
