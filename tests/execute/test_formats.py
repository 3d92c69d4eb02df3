"""Typed texel conversion (frontend/formats.py) through real dispatches: image_load / image_store
on a linear 2-D image and buffer_load_format / buffer_store_format / tbuffer_* on a buffer, for
every GFX10 format wavelift converts, against a reference written here from the rules
(docs/float-semantics.md "Typed texels"): exact rational arithmetic (fractions.Fraction) rounded
to nearest even, and the small floats found by searching every bit pattern of the format for the
nearest value (ties to the even pattern).  The reference shares no code with the IR.
"""

from __future__ import annotations

import bisect
from fractions import Fraction

import numpy as np
import pytest
from harness import Rig, ptr

from wavelift.memory import tsharp

FORMATS = tsharp.formats()
KINDS = ("UNORM", "SNORM", "USCALED", "SSCALED", "UINT", "SINT", "FLOAT")
SMALL_FLOATS = (10, 11, 16)


def _plain(f):
    if f.numeric not in KINDS or not f.bits or sum(f.bits) != 8 * f.bytes:
        return False
    return f.numeric != "FLOAT" or all(w in (10, 11, 16, 32) for w in f.bits)


CONVERTED = {v: f for v, f in FORMATS.items() if _plain(f)}
CONVERTED[132] = FORMATS[132]  # 5_9_9_9_FLOAT (reads only)
IMAGE_FORMATS = [v for v, f in CONVERTED.items() if not f.buffers_only and f.bytes in (1, 2, 4, 8, 16)]
BUFFER_FORMATS = [v for v in CONVERTED if v < 128]
WRITABLE = [v for v, f in CONVERTED.items() if f.numeric not in ("USCALED", "SSCALED") and v != 132]


# ----------------------------------------------------------------------------- the reference
def f32_bits(q: Fraction) -> int:
    """The f32 nearest to q (ties to even), for q of magnitude within f32's normal range or 0."""
    if q == 0:
        return 0
    sign = 0x80000000 if q < 0 else 0
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    m = round(a / Fraction(2) ** (e - 23))  # Fraction.__round__: half to even
    if m == 1 << 24:
        m, e = m >> 1, e + 1
    return sign | (e + 127) << 23 | (m - (1 << 23))


def fvalue(bits: int) -> Fraction | float:
    """The value of f32 bits (inf/nan as floats)."""
    x = np.uint32(bits).view(np.float32)
    return float(x) if not np.isfinite(x) else Fraction(float(x))


def small_float_values(w: int, signed: bool):
    """(pattern, value) of every finite pattern of a float with a 5-bit exponent (bias 15) and
    w - 5 (unsigned) or w - 6 (f16) mantissa bits, and the pattern of +infinity."""
    m = w - 5 if not signed else 10
    out = []
    for e in range(31):
        for k in range(1 << m):
            v = (
                Fraction(k, 1 << m) * Fraction(2) ** -14
                if e == 0
                else (1 + Fraction(k, 1 << m)) * Fraction(2) ** (e - 15)
            )
            out.append((e << m | k, v))
    return out, 31 << m


_SMALL = {w: small_float_values(w, w == 16) for w in SMALL_FLOATS}


def small_float_from(w: int, raw: int) -> int | None:
    """f32 bits of a 16/11/10-bit float pattern; None for a NaN."""
    m = 10 if w == 16 else w - 5
    sign = raw >> 15 & 1 if w == 16 else 0
    e, k = raw >> m & 31, raw & ((1 << m) - 1)
    if e == 31:
        return None if k else (sign << 31 | 0x7F800000)
    v = (
        Fraction(k, 1 << m) * Fraction(2) ** -14
        if e == 0
        else (1 + Fraction(k, 1 << m)) * Fraction(2) ** (e - 15)
    )
    return f32_bits(-v if sign else v) if v else sign << 31


def small_float_to(w: int, bits: int) -> int:
    """The 16/11/10-bit float nearest to f32 bits (ties to the even pattern; past the largest
    finite value by half an ulp or more: infinity); the unsigned ones take negatives to 0."""
    x = fvalue(bits)
    neg = bits >> 31
    m = 10 if w == 16 else w - 5
    if w != 16 and neg:
        return 0
    if isinstance(x, float):  # inf (NaN is not stored)
        return (neg << 15 if w == 16 else 0) | 31 << m
    pats, inf = _SMALL[w]
    a = abs(x)
    top = (1 + Fraction((1 << m) - 1, 1 << m)) * Fraction(2) ** 15
    cands = pats + [(inf, top + Fraction(2) ** (15 - m))]  # values ascend with the patterns
    i = bisect.bisect_left([v for _, v in cands], a)
    near = cands[max(i - 1, 0) : i + 1] if i < len(cands) else cands[-1:]
    best = min(near, key=lambda pv: (abs(pv[1] - a), pv[0] & 1))
    return (neg << 15 if w == 16 else 0) | best[0]


def decode_ref(f, raw: int) -> tuple[list[int], bool]:
    """The four 32-bit results (before DST_SEL) of texel bits ``raw``; and whether it holds a NaN
    in a 16/11/10-bit float channel."""
    out, off, nan = [], 0, False
    integer = f.numeric in ("UINT", "SINT")
    if f.name == "5_9_9_9_FLOAT":
        e = raw >> 27
        out = [f32_bits(Fraction(raw >> (9 * c) & 511) * Fraction(2) ** (e - 24)) for c in range(3)]
        return out + [0x3F800000], False
    for w in f.bits:
        x = raw >> off & ((1 << w) - 1)
        off += w
        s = x - (1 << w) if x >> (w - 1) else x
        if f.numeric == "UINT":
            v = x
        elif f.numeric == "SINT":
            v = s & 0xFFFFFFFF
        elif f.numeric == "UNORM":
            v = f32_bits(Fraction(x, (1 << w) - 1))
        elif f.numeric == "SNORM":
            v = f32_bits(max(Fraction(s, (1 << (w - 1)) - 1), Fraction(-1)))
        elif f.numeric == "USCALED":
            v = f32_bits(Fraction(x))
        elif f.numeric == "SSCALED":
            v = f32_bits(Fraction(s))
        elif w == 32:
            v = x
        else:
            r = small_float_from(w, x)
            nan |= r is None
            v = r or 0
        out.append(v)
    defaults = [0, 0, 0, 1 if integer else 0x3F800000]
    return out + defaults[len(out) :], nan


def encode_ref(f, vals: list[int]) -> int | None:
    """The texel bits that storing register values ``vals`` gives, or None where the store
    refuses (an integer outside its channel, a NaN to a small float)."""
    raw, off = 0, 0
    for c, w in enumerate(f.bits):
        v = vals[c]
        x = fvalue(v)
        nan = isinstance(x, float) and x != x
        if f.numeric == "UINT":
            if v >= 1 << w:
                return None
            q = v
        elif f.numeric == "SINT":
            s = v - (1 << 32) if v >> 31 else v
            if not -(1 << (w - 1)) <= s < 1 << (w - 1):
                return None
            q = s
        elif f.numeric in ("UNORM", "SNORM"):
            lo = 0 if f.numeric == "UNORM" else -1
            scale = (1 << w) - 1 if f.numeric == "UNORM" else (1 << (w - 1)) - 1
            if nan:
                q = 0
            else:
                xx = Fraction(lo) if x == float("-inf") else Fraction(1) if x == float("inf") else x
                q = round(min(max(xx, Fraction(lo)), Fraction(1)) * scale)
        elif w == 32:
            q = v
        else:
            if nan:
                return None
            q = small_float_to(w, v)
        raw |= (q & ((1 << w) - 1)) << off
        off += w
    return raw


# ------------------------------------------------------------------------------- the data
def texels(f, n: int, rng) -> list[int]:
    """n texels of format f: random bits plus each channel's corner values, no NaN in a small
    float channel (those refuse: test_small_float_nan_refuses)."""
    nbits = 8 * f.bytes
    out = [int(x) for x in rng.integers(0, 2**63, n, dtype=np.uint64)]
    out = [(x | int(rng.integers(0, 2**63)) << 63) & ((1 << nbits) - 1) for x in out]
    corners = []
    for pat in (0, -1, 1, "min", "max"):
        t, off = 0, 0
        for w in f.bits:
            v = {0: 0, -1: (1 << w) - 1, 1: 1, "min": 1 << (w - 1), "max": (1 << (w - 1)) - 1}[pat]
            t |= v << off
            off += w
        corners.append(t & ((1 << nbits) - 1))
    res = []
    for t in corners + out:
        if f.numeric == "FLOAT":  # clear NaNs of small float channels to infinity
            off = 0
            for w in f.bits:
                if w in SMALL_FLOATS:
                    m = 10 if w == 16 else w - 5
                    x = t >> off & ((1 << w) - 1)
                    if x >> m & 31 == 31 and x & ((1 << m) - 1):
                        t &= ~(((1 << m) - 1) << off)
                off += w
        res.append(t)
    return res[:n]


def values(f, n: int, rng) -> list[list[int]]:
    """n texels of register values to store into format f (4 per texel), in range for integers;
    floats around the rounding points, the clamps, zero signs, infinities and NaN (not for the
    small floats)."""
    out = []
    for _ in range(n):
        t = []
        for c in range(4):
            w = f.bits[c] if c < len(f.bits) else 8
            if f.numeric == "UINT":
                t.append(int(rng.integers(0, 1 << w)))
            elif f.numeric == "SINT":
                t.append(int(rng.integers(-(1 << (w - 1)), 1 << (w - 1))) & 0xFFFFFFFF)
            elif f.numeric == "FLOAT" and w == 32:
                t.append(int(rng.integers(0, 2**32)))
            else:
                scale = (1 << w) - 1 if f.numeric == "UNORM" else (1 << (w - 1)) - 1
                k = int(rng.integers(0, 8))
                if f.numeric == "FLOAT":  # near the small float's rounding points and range
                    x = (
                        float(rng.choice([-1.0, 1.0]))
                        * float(2.0 ** rng.integers(-26, 17))
                        * float(rng.uniform(1, 2))
                    )
                    cand = [x, 0.0, -0.0, np.inf, -np.inf, 65504.0, 65520.0, 2.0**-24, 2.0**-25 * 3]
                    x = cand[0] if k < 3 else cand[k - 2] if k - 2 < len(cand) else x
                    if w != 16 and k == 7:  # a tie between two patterns
                        m = w - 5
                        x = (1 + (2 * int(rng.integers(0, 1 << m)) + 1) / (1 << (m + 1))) * 2.0 ** int(
                            rng.integers(-14, 15)
                        )
                elif k == 0:  # a tie: (j + 0.5) / scale, rounded to f32
                    x = (int(rng.integers(0, scale)) + 0.5) / scale
                elif k == 1:
                    x = [np.nan, np.inf, -np.inf, -0.0, 2.0, -2.0, 1.0, -1.0][int(rng.integers(0, 8))]
                else:
                    x = float(rng.uniform(-1.2, 1.2))
                t.append(int(np.float32(x).view(np.uint32)))
        out.append(t)
    return out


# --------------------------------------------------------------------------------- programs
# 32 lanes: texel x = lane % 8, y = lane / 8 of an 8x4 image; all four channels to out[lane]
IMG_LOAD = """
  v_and_b32 v1, 7, v0
  v_lshrrev_b32 v2, 3, v0
  image_load v[4:7], v[1:2], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v3, 4, v0
  global_store_dwordx4 v3, v[4:7], s[8:9]
  s_endpgm
"""
IMG_STORE = """
  v_and_b32 v1, 7, v0
  v_lshrrev_b32 v2, 3, v0
  v_lshlrev_b32 v3, 4, v0
  global_load_dwordx4 v[4:7], v3, s[8:9]
  s_waitcnt vmcnt(0)
  image_store v[4:7], v[1:2], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm
  s_endpgm
"""
W, H = 8, 4


def tsharp_words(addr, fmt, sel=(4, 5, 6, 7), w=W, h=H):
    d3 = sel[0] | sel[1] << 3 | sel[2] << 6 | sel[3] << 9 | 9 << 28
    return [
        (addr >> 8) & 0xFFFFFFFF,
        ((addr >> 40) & 0xFF) | (fmt << 20) | (((w - 1) & 3) << 30),
        ((w - 1) >> 2) | ((h - 1) << 14) | (1 << 31),
        d3,
        0,
        0,
        0,
        0,
    ]


def _pitch(nbytes):
    return max(W, 256 // nbytes)  # linear rows: 256 bytes or the width


def _image_bytes(f, tex):
    pitch = _pitch(f.bytes)
    img = bytearray(pitch * H * f.bytes)
    for i, t in enumerate(tex):
        x, y = i % W, i // W
        o = (y * pitch + x) * f.bytes
        img[o : o + f.bytes] = t.to_bytes(f.bytes, "little")
    return bytes(img)


@pytest.mark.parametrize("fmt", IMAGE_FORMATS, ids=[FORMATS[v].name for v in IMAGE_FORMATS])
def test_image_load_every_format(fmt):
    f = FORMATS[fmt]
    tex = texels(f, W * H, np.random.default_rng(fmt))
    r = Rig(IMG_LOAD)
    a = r.mem.alloc(len(_image_bytes(f, tex)), name="img", align=256, data=_image_bytes(f, tex))
    out = r.buf(np.full(4 * 32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=tsharp_words(a, fmt) + list(ptr(out)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    want = np.array([decode_ref(f, t)[0] for t in tex], np.uint32)
    np.testing.assert_array_equal(r.read(out, np.uint32, 4 * 32).reshape(32, 4), want)


@pytest.mark.parametrize(
    "fmt",
    [v for v in IMAGE_FORMATS if v in WRITABLE],
    ids=[FORMATS[v].name for v in IMAGE_FORMATS if v in WRITABLE],
)
def test_image_store_every_format(fmt):
    f = FORMATS[fmt]
    vals = values(f, W * H, np.random.default_rng(fmt + 1000))
    want = [encode_ref(f, v) for v in vals]
    assert all(t is not None for t in want)
    r = Rig(IMG_STORE)
    noise = np.random.default_rng(3).integers(0, 256, _pitch(f.bytes) * H * f.bytes, dtype=np.uint8)
    a = r.mem.alloc(noise.size, name="img", align=256, data=noise.tobytes())
    src = r.buf(np.array(vals, np.uint32), "src")
    res = r.run(r.config(user_sgprs=tsharp_words(a, fmt) + list(ptr(src)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    exp = bytearray(noise.tobytes())
    pitch = _pitch(f.bytes)
    for i, t in enumerate(want):
        o = ((i // W) * pitch + i % W) * f.bytes
        exp[o : o + f.bytes] = t.to_bytes(f.bytes, "little")  # type: ignore[union-attr]
    got = r.mem.read(a, noise.size)
    assert got == bytes(exp), [
        (i, hex(int.from_bytes(got[o : o + f.bytes], "little")), hex(want[i]), [hex(v) for v in vals[i]])  # type: ignore[arg-type]
        for i in range(32)
        for o in [((i // W) * pitch + i % W) * f.bytes]
        if got[o : o + f.bytes] != exp[o : o + f.bytes]
    ][:4]


# ------------------------------------------------------------------------------ typed buffers
BUF_LOAD = """
  buffer_load_format_xyzw v[4:7], v0, s[0:3], 0 idxen
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v3, 4, v0
  global_store_dwordx4 v3, v[4:7], s[4:5]
  s_endpgm
"""
BUF_STORE = """
  v_lshlrev_b32 v3, 4, v0
  global_load_dwordx4 v[4:7], v3, s[4:5]
  s_waitcnt vmcnt(0)
  buffer_store_format_xyzw v[4:7], v0, s[0:3], 0 idxen
  s_endpgm
"""


def vsharp(addr, stride, nrec, fmt, sel=(4, 5, 6, 7), oob_select=0):
    """GFX10 V#: base, stride [29:16] of word 1, NUM_RECORDS, word 3: DST_SEL, FORMAT [18:12],
    RESOURCE_LEVEL [24], OOB_SELECT [29:28]."""
    w3 = sel[0] | sel[1] << 3 | sel[2] << 6 | sel[3] << 9 | fmt << 12 | 1 << 24 | oob_select << 28
    return [addr & 0xFFFFFFFF, (addr >> 32) | stride << 16, nrec, w3]


def _buffer(r, f, tex):
    data = b"".join(t.to_bytes(f.bytes, "little") for t in tex)
    return r.mem.alloc(len(data), name="buf", data=data)


@pytest.mark.parametrize("fmt", BUFFER_FORMATS, ids=[FORMATS[v].name for v in BUFFER_FORMATS])
def test_buffer_load_format_every_format(fmt):
    f = FORMATS[fmt]
    tex = texels(f, 32, np.random.default_rng(fmt + 7))
    r = Rig(BUF_LOAD)
    a = _buffer(r, f, tex)
    out = r.buf(np.full(4 * 32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=vsharp(a, f.bytes, 32, fmt) + list(ptr(out)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    want = np.array([decode_ref(f, t)[0] for t in tex], np.uint32)
    np.testing.assert_array_equal(r.read(out, np.uint32, 4 * 32).reshape(32, 4), want)


@pytest.mark.parametrize(
    "fmt",
    [v for v in BUFFER_FORMATS if v in WRITABLE],
    ids=[FORMATS[v].name for v in BUFFER_FORMATS if v in WRITABLE],
)
def test_buffer_store_format_every_format(fmt):
    f = FORMATS[fmt]
    vals = values(f, 32, np.random.default_rng(fmt + 2000))
    want = b"".join(encode_ref(f, v).to_bytes(f.bytes, "little") for v in vals)  # type: ignore[union-attr]
    r = Rig(BUF_STORE)
    a = r.mem.alloc(len(want), name="buf", data=b"\xa5" * len(want))
    src = r.buf(np.array(vals, np.uint32), "src")
    res = r.run(r.config(user_sgprs=vsharp(a, f.bytes, 32, fmt) + list(ptr(src)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    assert r.mem.read(a, len(want)) == want


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize(
    "name", ["10_11_11_FLOAT", "2_10_10_10_SNORM", "16_16_16_16_FLOAT", "10_10_10_2_UINT", "8_8_SINT"]
)
def test_tbuffer_load_store_every_tier(name, mode):
    """tbuffer_load_format / tbuffer_store_format (the format in the instruction; the V#'s is
    ignored) in both modes on every tier: a load then a store of what was read with a
    DST_SEL that swaps X and Y (loads apply it) into a second buffer."""
    fmt = next(v for v, f in FORMATS.items() if f.name == name)
    f = FORMATS[fmt]
    prog = f"""
      tbuffer_load_format_xyzw v[4:7], v0, s[0:3], 0 format:{fmt} idxen
      s_waitcnt vmcnt(0)
      v_lshlrev_b32 v3, 4, v0
      global_store_dwordx4 v3, v[4:7], s[4:5]
      global_load_dwordx4 v[8:11], v3, s[8:9]
      s_waitcnt vmcnt(0)
      tbuffer_store_format_xyzw v[8:11], v0, s[12:15], 0 format:{fmt} idxen
      s_endpgm
    """
    tex = texels(f, 32, np.random.default_rng(fmt))
    vals = values(f, 32, np.random.default_rng(fmt + 5))
    r = Rig(prog)
    a = _buffer(r, f, tex)
    out = r.buf(np.full(4 * 32, 7, np.uint32), "out")
    src = r.buf(np.array(vals, np.uint32), "src")
    n = f.bytes * 32
    dst = r.mem.alloc(n, name="dst", data=b"\x5a" * n)
    sel = (5, 4, 6, 7)
    sg = (
        vsharp(a, f.bytes, 32, 22, sel)
        + list(ptr(out))
        + [0, 0]
        + list(ptr(src))
        + [0, 0]
        + vsharp(dst, f.bytes, 32, 1)
    )
    res = r.run(r.config(user_sgprs=sg, tgid=(False,) * 3), mode=mode)
    assert res.landed, res.refusal
    dec = [decode_ref(f, t)[0] for t in tex]
    want = np.array([[d[s - 4] for s in sel] for d in dec], np.uint32)
    np.testing.assert_array_equal(r.read(out, np.uint32, 4 * 32).reshape(32, 4), want)
    assert r.mem.read(dst, n) == b"".join(encode_ref(f, v).to_bytes(f.bytes, "little") for v in vals)  # type: ignore[union-attr]


# --------------------------------------------------------------------- tiled, other texel sizes
TILED_LOAD = """
  s_lshl_b32 s13, s11, 3
  s_lshl_b32 s14, s12, 3
  v_and_b32 v1, 7, v0
  v_add_nc_u32 v1, s13, v1
  v_lshrrev_b32 v2, 3, v0
  v_add_nc_u32 v2, s14, v2
  image_load v[20:23], v[1:2], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm
  s_waitcnt vmcnt(0)
  v_mul_u32_u24 v4, s10, v2
  v_add_nc_u32 v4, v4, v1
  v_lshlrev_b32 v4, 4, v4
  global_store_dwordx4 v4, v[20:23], s[8:9]
  s_endpgm
"""


@pytest.mark.parametrize("target", ["gfx1030", "gfx1010"])
@pytest.mark.parametrize("mode", ["256B_D", "4KB_S", "64KB_D"])
@pytest.mark.parametrize("name", ["8_UNORM", "16_FLOAT", "16_16_16_16_SNORM", "32_32_32_32_UINT"])
def test_tiled_load_other_texel_sizes(name, mode, target):
    """A tiled image of 1, 2, 8 and 16-byte texels: the texel size, known from the format only
    at run time, picks the swizzle pattern (memory/layout.py, checked against addrlib)."""
    from wavelift.memory import layout as L

    fmt = next(v for v, f in FORMATS.items() if f.name == name)
    f = FORMATS[fmt]
    m = next(k for k, n in L.sw_mode_names().items() if n == mode)
    w, h = 72, 40  # every lane in range (out of range, a 1-channel format's W would refuse)
    groups = (w // 8, h // 8)
    outw = groups[0] * 8
    chip = L.Chip(target.startswith("gfx103"), 0)
    s = L.Surface(m, L.RSRC_2D, f.bytes.bit_length() - 1, w, h)
    size = L.surface_info(s, chip).slice_size
    y, x = np.mgrid[0:h, 0:w]
    offs = L.address(chip, s, x.ravel(), y.ravel(), 0).astype(np.int64)
    tex = texels(f, w * h, np.random.default_rng(fmt))
    mem = bytearray(np.random.default_rng(1).integers(0, 256, size, dtype=np.uint8).tobytes())
    for o, t in zip(offs, tex):
        mem[o : o + f.bytes] = t.to_bytes(f.bytes, "little")
    r = Rig(TILED_LOAD, wave64=True, target=target)
    a = r.mem.alloc(size, name="img", align=65536, data=bytes(mem))
    out = r.buf(np.full(outw * groups[1] * 8 * 4, 7, np.uint32), "out")
    t = tsharp_words(a, fmt, w=w, h=h)
    t[3] |= m << 20
    res = r.run(
        r.config(
            user_sgprs=t + list(ptr(out)) + [outw],
            groups=(*groups, 1),
            block=(64, 1, 1),
            tgid=(True, True, False),
        )
    )
    assert res.landed, res.refusal
    want = np.zeros((groups[1] * 8, outw, 4), np.uint32)
    want[y.ravel(), x.ravel()] = [decode_ref(f, t)[0] for t in tex]
    np.testing.assert_array_equal(r.read(out, np.uint32, want.size).reshape(want.shape), want)


# ------------------------------------------------------------------------------ refusals
def _refusal(prog, sg, code, **kw):
    r = Rig(prog)
    res = r.run(r.config(user_sgprs=sg(r), tgid=(False,) * 3, **kw))
    assert res.refusal is not None and res.refusal.code == code, res.refusal
    return res.refusal


def _img(r, f, tex):
    data = _image_bytes(f, tex)
    return r.mem.alloc(len(data), name="img", align=256, data=data)


def _fmt(name):
    return next(v for v, f in FORMATS.items() if f.name == name)


@pytest.mark.parametrize(
    "name,bits", [("16_FLOAT", 0x7C01), ("10_11_11_FLOAT", 0x7C1), ("11_11_10_FLOAT", 0x3E1 << 22)]
)
def test_small_float_nan_load_refuses(name, bits):
    f = FORMATS[_fmt(name)]
    tex = [0] * 31 + [bits]

    def sg(r):
        return tsharp_words(_img(r, f, tex), _fmt(name)) + list(ptr(r.buf(np.zeros(128, np.uint32))))

    assert "NaN" in _refusal(IMG_LOAD, sg, "image.unsupported_format").message


@pytest.mark.parametrize(
    "name,value",
    [
        ("8_UINT", 256),
        ("16_SINT", 0x8000),  # 32768 does not fit
        ("2_10_10_10_SINT", 0xFFFFFDFF),  # -513
        ("16_FLOAT", 0x7FC00000),  # NaN
        ("10_11_11_FLOAT", 0xFFC00000),  # NaN
        ("8_USCALED", 0x3F800000),  # scaled formats are not written
        ("16_16_SSCALED", 0),
    ],
)
def test_store_not_established_refuses(name, value):
    fmt = _fmt(name)
    f = FORMATS[fmt]
    vals = np.zeros((32, 4), np.uint32)
    vals[5, 0] = value
    for prog, sg, code in (
        (
            IMG_STORE,
            lambda r: tsharp_words(_img(r, f, [0] * 32), fmt) + list(ptr(r.buf(vals))),
            "image.unsupported_format",
        ),
        (
            BUF_STORE,
            lambda r: vsharp(_buffer(r, f, [0] * 32), f.bytes, 32, fmt) + list(ptr(r.buf(vals))),
            "buffer.unsupported_format",
        ),
    ):
        _refusal(prog, sg, code)


def test_out_of_range_default_one_refuses_else_zero():
    """Out of range a load reads 0; where a requested result would be the format's default W
    (1) or DST_SEL "1", hardware might give 1 or 0: that refuses.  In range, the default is
    1.0 (float kinds) or 1 (integers)."""
    f = FORMATS[_fmt("16_16_FLOAT")]
    tex = texels(f, 32, np.random.default_rng(0))

    def run(nrec, fmt, sel=(4, 5, 6, 7)):
        r = Rig(BUF_LOAD)
        a = _buffer(r, f, tex)
        out = r.buf(np.full(128, 7, np.uint32), "out")
        return (
            r,
            out,
            r.run(r.config(user_sgprs=vsharp(a, 4, nrec, fmt, sel) + list(ptr(out)), tgid=(False,) * 3)),
        )

    r, out, res = run(32, _fmt("16_16_FLOAT"))  # all in range: W is 1.0
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.read(out, np.uint32, 128).reshape(32, 4)[:, 3], 0x3F800000)
    r, out, res = run(32, _fmt("16_16_UINT"))  # integers: 1
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.read(out, np.uint32, 128).reshape(32, 4)[:, 3], 1)
    r, out, res = run(20, _fmt("16_16_FLOAT"))  # lanes 20.. out of range ask for W
    assert res.refusal is not None and res.refusal.code == "buffer.unsupported_format", res.refusal
    r, out, res = run(20, _fmt("16_16_FLOAT"), (4, 5, 0, 0))  # W selects 0: out of range reads 0
    assert res.landed, res.refusal
    got = r.read(out, np.uint32, 128).reshape(32, 4)
    assert (got[20:] == 0).all() and (got[:20, 2:] == 0).all()
    np.testing.assert_array_equal(got[:20, :2], [decode_ref(f, t)[0][:2] for t in tex[:20]])


def test_buffer_element_partly_out_of_range_refuses():
    """Raw range checking (OOB_SELECT 3, stride 0): an 8-byte element whose last bytes are past
    NUM_RECORDS refuses; wholly in or out it is read or 0."""
    fmt = _fmt("32_32_UINT")
    prog = """
      v_lshlrev_b32 v1, 3, v0
      buffer_load_format_xy v[4:5], v1, s[0:3], 0 offen
      s_waitcnt vmcnt(0)
      v_lshlrev_b32 v3, 3, v0
      global_store_dwordx2 v3, v[4:5], s[4:5]
      s_endpgm
    """
    for nrec, landed in ((64, True), (68, False)):
        r = Rig(prog)
        a = r.buf(np.arange(64, dtype=np.uint32))
        out = r.buf(np.full(64, 7, np.uint32))
        res = r.run(
            r.config(user_sgprs=vsharp(a, 0, nrec, fmt, oob_select=3) + list(ptr(out)), tgid=(False,) * 3)
        )
        assert res.landed == landed, res.refusal
        if landed:
            np.testing.assert_array_equal(
                r.read(out, np.uint32, 64), np.where(np.arange(64) < 16, np.arange(64), 0)
            )
        else:
            assert res.refusal.code == "buffer.unsupported_format"


def test_image_store_swizzled_sel_refuses():
    """A store through a T# whose DST_SEL does not keep each channel in place (BGRA) refuses;
    a load applies it."""
    fmt = _fmt("8_8_8_8_UNORM")
    f = FORMATS[fmt]
    tex = texels(f, 32, np.random.default_rng(2))
    bgra = (6, 5, 4, 7)
    r = Rig(IMG_LOAD)
    out = r.buf(np.full(128, 7, np.uint32), "out")
    res = r.run(
        r.config(user_sgprs=tsharp_words(_img(r, f, tex), fmt, bgra) + list(ptr(out)), tgid=(False,) * 3)
    )
    assert res.landed, res.refusal
    want = [[decode_ref(f, t)[0][s - 4] for s in bgra] for t in tex]
    np.testing.assert_array_equal(r.read(out, np.uint32, 128).reshape(32, 4), want)
    _refusal(
        IMG_STORE,
        lambda r: tsharp_words(_img(r, f, tex), fmt, bgra) + list(ptr(r.buf(np.zeros(128, np.uint32)))),
        "image.unsupported_format",
    )


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_image_formats_every_tier(mode):
    """Loads and stores of a few formats (packed, small floats, snorm, 64-bit) in both modes on
    every tier; the sweep above runs the NumPy blocks in wave mode."""
    for name in ("10_11_11_FLOAT", "2_10_10_10_SNORM", "16_16_16_16_FLOAT", "5_6_5_UNORM", "4_4_4_4_UNORM"):
        fmt = _fmt(name)
        f = FORMATS[fmt]
        tex = texels(f, 32, np.random.default_rng(fmt))
        r = Rig(IMG_LOAD)
        out = r.buf(np.full(128, 7, np.uint32), "out")
        res = r.run(
            r.config(user_sgprs=tsharp_words(_img(r, f, tex), fmt) + list(ptr(out)), tgid=(False,) * 3),
            mode=mode,
        )
        assert res.landed, res.refusal
        np.testing.assert_array_equal(
            r.read(out, np.uint32, 128).reshape(32, 4), [decode_ref(f, t)[0] for t in tex]
        )
        vals = values(f, 32, np.random.default_rng(fmt + 3))
        r = Rig(IMG_STORE)
        a = _img(r, f, [0] * 32)
        res = r.run(
            r.config(
                user_sgprs=tsharp_words(a, fmt) + list(ptr(r.buf(np.array(vals, np.uint32)))),
                tgid=(False,) * 3,
            ),
            mode=mode,
        )
        assert res.landed, res.refusal
        assert r.mem.read(a, len(_image_bytes(f, [0] * 32))) == _image_bytes(
            f, [encode_ref(f, v) for v in vals]
        )


# ---------------------------------------------------------------------------------------- d16
def _d16(f, v32):
    """The d16 form of a 32-bit result: f16 bits for the float kinds, the low half for ints."""
    if f.numeric in ("UINT", "SINT"):
        return v32 & 0xFFFF
    return int(np.float32(np.uint32(v32).view(np.float32)).astype(np.float16).view(np.uint16))


def _undo_d16(f, h):
    if f.numeric == "UINT":
        return h
    if f.numeric == "SINT":
        return (h - (1 << 16) if h >> 15 else h) & 0xFFFFFFFF
    return int(np.float16(np.uint16(h).view(np.float16)).astype(np.float32).view(np.uint32))


D16_PROGS = {
    "image": (
        """
  v_and_b32 v1, 7, v0
  v_lshrrev_b32 v2, 3, v0
  image_load v[4:5], v[1:2], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm d16
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v3, 3, v0
  global_store_dwordx2 v3, v[4:5], s[8:9]
  global_load_dwordx2 v[6:7], v3, s[10:11]
  s_waitcnt vmcnt(0)
  image_store v[6:7], v[1:2], s[12:19] dmask:0xf dim:SQ_RSRC_IMG_2D unorm d16
  s_endpgm
""",
        "image.unsupported_format",
    ),
    "buffer": (
        """
  buffer_load_format_d16_xyzw v[4:5], v0, s[0:3], 0 idxen
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v3, 3, v0
  global_store_dwordx2 v3, v[4:5], s[8:9]
  global_load_dwordx2 v[6:7], v3, s[10:11]
  s_waitcnt vmcnt(0)
  buffer_store_format_d16_xyzw v[6:7], v0, s[12:15], 0 idxen
  s_endpgm
""",
        "buffer.unsupported_format",
    ),
}


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("kind", ["image", "buffer"])
@pytest.mark.parametrize("name", ["16_16_16_16_FLOAT", "8_8_8_8_UINT", "16_16_SINT", "16_FLOAT"])
def test_d16_load_store(name, kind):
    """d16: two 16-bit components a VGPR.  Loads of 16-bit float and 8/16-bit integer channels
    (exact in 16 bits); stores widen each half exactly (f16 -> f32, zero/sign extension) and
    convert as the 32-bit forms do."""
    fmt = _fmt(name)
    f = FORMATS[fmt]
    prog, _ = D16_PROGS[kind]
    tex = texels(f, 32, np.random.default_rng(fmt))
    vals = values(f, 32, np.random.default_rng(fmt + 9))
    halves = [[_d16(f, v) for v in t] for t in vals]  # what the store reads, as f16 / 16-bit ints
    packed = np.array([[h[0] | h[1] << 16, h[2] | h[3] << 16] for h in halves], np.uint32)
    r = Rig(prog)
    out = r.buf(np.full(64, 7, np.uint32), "out")
    src = r.buf(packed, "src")
    if kind == "image":
        a, dst = _img(r, f, tex), _img(r, f, [0] * 32)
        sg = tsharp_words(a, fmt) + list(ptr(out)) + list(ptr(src)) + tsharp_words(dst, fmt)
        dst_bytes = lambda: r.mem.read(dst, len(_image_bytes(f, [0] * 32)))  # noqa: E731
        want_dst = _image_bytes(f, [encode_ref(f, [_undo_d16(f, h) for h in t]) for t in halves])
    else:
        a = _buffer(r, f, tex)
        dst = r.mem.alloc(32 * f.bytes, name="dst", data=bytes(32 * f.bytes))
        sg = (
            vsharp(a, f.bytes, 32, fmt)
            + [0] * 4
            + list(ptr(out))
            + list(ptr(src))
            + vsharp(dst, f.bytes, 32, fmt)
        )
        dst_bytes = lambda: r.mem.read(dst, 32 * f.bytes)  # noqa: E731
        want_dst = b"".join(
            encode_ref(f, [_undo_d16(f, h) for h in t]).to_bytes(f.bytes, "little") for t in halves
        )  # type: ignore[union-attr]
    res = r.run(r.config(user_sgprs=sg, tgid=(False,) * 3))
    assert res.landed, res.refusal
    dec = [[_d16(f, v) for v in decode_ref(f, t)[0]] for t in tex]
    want = np.array([[d[0] | d[1] << 16, d[2] | d[3] << 16] for d in dec], np.uint32)
    np.testing.assert_array_equal(r.read(out, np.uint32, 64).reshape(32, 2), want)
    assert dst_bytes() == want_dst


@pytest.mark.parametrize("kind", ["image", "buffer"])
@pytest.mark.parametrize("name", ["8_8_8_8_UNORM", "32_32_UINT", "16_16_16_16_SNORM"])
def test_d16_load_that_would_round_refuses(name, kind):
    fmt = _fmt(name)
    f = FORMATS[fmt]
    prog, code = D16_PROGS[kind]
    tex = texels(f, 32, np.random.default_rng(fmt))

    def sg(r):
        src = r.buf(np.zeros(64, np.uint32))
        out = r.buf(np.zeros(64, np.uint32))
        if kind == "image":
            return (
                tsharp_words(_img(r, f, tex), fmt)
                + list(ptr(out))
                + list(ptr(src))
                + tsharp_words(_img(r, f, tex), fmt)
            )
        return (
            vsharp(_buffer(r, f, tex), f.bytes, 32, fmt)
            + [0] * 4
            + list(ptr(out))
            + list(ptr(src))
            + vsharp(_buffer(r, f, tex), f.bytes, 32, fmt)
        )

    assert "d16" in _refusal(prog, sg, code).message


def test_image_load_store_mip_level_zero_else_refuses():
    """image_load_mip / image_store_mip on a one-level T#: level 0 is the image; another level
    (mip chains are not carried out) refuses by name."""
    fmt = _fmt("16_16_16_16_FLOAT")
    f = FORMATS[fmt]
    tex = texels(f, 32, np.random.default_rng(4))
    prog = """
      v_and_b32 v1, 7, v0
      v_lshrrev_b32 v2, 3, v0
      v_mov_b32 v3, s12
      image_load_mip v[4:7], v[1:3], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm
      s_waitcnt vmcnt(0)
      v_lshlrev_b32 v8, 4, v0
      global_store_dwordx4 v8, v[4:7], s[8:9]
      image_store_mip v[4:7], v[1:3], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm
      s_endpgm
    """
    for level in (0, 1):
        r = Rig(prog)
        a = _img(r, f, tex)
        out = r.buf(np.full(128, 7, np.uint32), "out")
        res = r.run(
            r.config(user_sgprs=tsharp_words(a, fmt) + list(ptr(out)) + [0, 0, level], tgid=(False,) * 3)
        )
        if level:
            assert res.refusal is not None and res.refusal.code == "image.unsupported_descriptor", res.refusal
            continue
        assert res.landed, res.refusal
        np.testing.assert_array_equal(
            r.read(out, np.uint32, 128).reshape(32, 4), [decode_ref(f, t)[0] for t in tex]
        )
        assert r.mem.read(a, len(_image_bytes(f, tex))) == _image_bytes(f, tex)  # stored back as read


def test_tbuffer_d16():
    """tbuffer_load_format_d16_xyzw / tbuffer_store_format_d16_xy: the format in the instruction."""
    fmt = _fmt("16_16_16_16_FLOAT")
    f = FORMATS[fmt]
    tex = texels(f, 32, np.random.default_rng(6))
    prog = f"""
      tbuffer_load_format_d16_xyzw v[4:5], v0, s[0:3], 0 format:{fmt} idxen
      s_waitcnt vmcnt(0)
      v_lshlrev_b32 v3, 3, v0
      global_store_dwordx2 v3, v[4:5], s[8:9]
      tbuffer_store_format_d16_xy v4, v0, s[12:15], 0 format:{_fmt("16_16_FLOAT")} idxen
      s_endpgm
    """
    r = Rig(prog)
    a = _buffer(r, f, tex)
    out = r.buf(np.full(64, 7, np.uint32), "out")
    dst = r.mem.alloc(4 * 32, name="dst", data=bytes(4 * 32))
    sg = vsharp(a, 8, 32, 1) + [0] * 4 + list(ptr(out)) + [0, 0] + vsharp(dst, 4, 32, 1)
    res = r.run(r.config(user_sgprs=sg, tgid=(False,) * 3))
    assert res.landed, res.refusal
    dec = [[_d16(f, v) for v in decode_ref(f, t)[0]] for t in tex]
    want = np.array([[d[0] | d[1] << 16, d[2] | d[3] << 16] for d in dec], np.uint32)
    np.testing.assert_array_equal(r.read(out, np.uint32, 64).reshape(32, 2), want)
    assert r.mem.read(dst, 4 * 32) == b"".join((t & 0xFFFFFFFF).to_bytes(4, "little") for t in tex)
