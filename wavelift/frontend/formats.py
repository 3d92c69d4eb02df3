"""Typed texel conversion (image_load / image_store, buffer_*_format_*, tbuffer_*): a texel's
bits <-> the 32-bit channel values in VGPRs, for every GFX10/10.3 IMG_FORMAT (the same values
name buffer formats: V# FORMAT and MTBUF's format field) whose conversion is exactly defined.
Written once here as IR; the format is usually a run-time value (a T#/V# loaded by the program),
so each format's facts (channel offsets and widths, numeric kind, texel size) are packed into a
u64 and looked up by a select tree over the format's bits (``lut``), built from the generated
table (memory/tables/gfx10_image.json), never typed.

Conversions (docs/float-semantics.md "Typed texels" cites the rules):

* reads: UNORM ``x / (2**n - 1)`` correctly rounded (f32 division of exact operands, n <= 24);
  SNORM ``max(x / (2**(n-1) - 1), -1.0)``; USCALED / SSCALED the integer's value as f32 (exact,
  n <= 24); UINT / SINT zero- / sign-extended; FLOAT 32 the bits, 16 / 11 / 10-bit floats
  widened exactly (denormals kept); 5_9_9_9 (shared exponent) ``m * 2**(e - 24)``.  A NaN in a
  16/11/10-bit float channel refuses (the widened NaN's bits are not established).
* writes: UNORM / SNORM clamp (NaN -> 0) and round ``x * (2**n - 1)`` (``2**(n-1) - 1``) to
  nearest even, the product exact (f64); UINT / SINT the value when it fits the channel, else
  the lane refuses (narrowing is not established); FLOAT 32 the bits, 16 / 11 / 10 rounded to
  nearest even (denormals kept, overflow to infinity; the unsigned 11/10-bit floats take
  negative values and -0 to 0), NaN refuses.
* d16 (to_d16 / from_d16): a load's result as f16 bits (float kinds) or its low half
  (integers), only where that is exact (d16_sources: 16-bit float and 8/16-bit integer
  channels, defaults); a store's halves widen exactly (f16 -> f32, zero / sign extension).
* missing channels read (0, 0, 0, 1) (1.0 for the float kinds, 1 for UINT/SINT); DST_SEL picks
  0, 1 or a channel for each result.

Refused by name: SRGB (the hardware's sRGB curve is a table whose entries are not published),
FLOAT_CLAMP, block-compressed, FMASK, YUV and other non-plain formats; writes to USCALED /
SSCALED / 5_9_9_9 (rounding of a float to a scaled integer is not established), reserved
DST_SEL values.
"""

from __future__ import annotations

from functools import cache

from ..ir.builder import Builder
from ..ir.program import Value
from ..memory import tsharp
from .common import C

UNORM, SNORM, USCALED, SSCALED, UINT, SINT, FLOAT, RGB9E5 = range(1, 9)
KINDS = {
    "UNORM": UNORM,
    "SNORM": SNORM,
    "USCALED": USCALED,
    "SSCALED": SSCALED,
    "UINT": UINT,
    "SINT": SINT,
    "FLOAT": FLOAT,
}
FLOAT_WIDTHS = (10, 11, 16, 32)
# packed facts of a format (u64): per channel c (13 bits at 13*c): bit offset in the texel
# [6:0], width [12:7]; kind at 52 (4 bits); texel bytes at 56 (5 bits)
CH_BITS, KIND_AT, BYTES_AT = 13, 52, 56
SEL_0, SEL_1, SEL_X = 0, 1, 4
FORMAT_BITS = 9  # T# FORMAT is 9 bits; V# / MTBUF formats 7


def _pack(bits, kind: int, nbytes: int) -> int:
    out, off = 0, 0
    for c, w in enumerate(bits):
        out |= (off | w << 7) << (CH_BITS * c)
        off += w
    return out | kind << KIND_AT | nbytes << BYTES_AT


@cache
def table(gfx10: bool = True, image: bool = False) -> dict[int, int]:
    """format value -> packed facts, for every format whose reads are exactly defined (GFX10 /
    GFX10.3; other GFX levels number their formats differently: only the four formats that
    wavelift carried out before are kept there).  ``image``: the formats an image can have
    (not buffer-only; a power-of-two texel size, which layouts need)."""
    out = {}
    for v, f in tsharp.formats().items():
        if not gfx10 and f.name not in ("8_8_8_8_UNORM", "32_FLOAT", "32_UINT", "32_SINT"):
            continue
        if image and (f.buffers_only or f.bytes & (f.bytes - 1)):
            continue
        if f.name == "5_9_9_9_FLOAT":
            out[v] = _pack((9, 9, 9), RGB9E5, 4)
            continue
        kind = KINDS.get(f.numeric)
        if kind is None or not f.bits or not f.bytes or sum(f.bits) != 8 * f.bytes:
            continue
        if kind == FLOAT and any(w not in FLOAT_WIDTHS for w in f.bits):
            continue
        if kind in (UNORM, SNORM, USCALED, SSCALED) and max(f.bits) > 24:
            continue  # not exact in f32 (none exist on GFX10)
        out[v] = _pack(f.bits, kind, f.bytes)
    return out


def lut(b: Builder, idx: Value, tab: dict[int, int], nbits: int, t: str = "u64") -> Value:
    """tab[idx] (0 where tab has no entry) for a u32 ``idx < 2**nbits``: a select tree on
    idx's bits; equal subtrees are one constant."""
    bit = [
        b.cmp("ne", "u32", b.bin("and", "u32", idx, C(b, "u32", 1 << k)), C(b, "u32", 0))
        for k in range(nbits)
    ]

    def node(lo: int, level: int):
        if level == 0:
            return tab.get(lo, 0)
        a = node(lo, level - 1)
        c = node(lo + (1 << (level - 1)), level - 1)
        if isinstance(a, int) and isinstance(c, int) and a == c:
            return a
        av = C(b, t, a) if isinstance(a, int) else a
        cv = C(b, t, c) if isinstance(c, int) else c
        return b.select(bit[level - 1], cv, av)

    r = node(0, nbits)
    return C(b, t, r) if isinstance(r, int) else r


class Format:
    """The run-time facts of a format value (IR values): ``known`` (b1: converted exactly),
    ``kind``, ``nbytes`` and each channel's offset and width (u32)."""

    def __init__(
        self,
        b: Builder,
        fmt: Value,
        nbits: int = FORMAT_BITS,
        image: bool = False,
        gfx10_only: bool = False,
        gfx10_numbering: bool = False,
    ):
        """``gfx10_numbering``: ``fmt`` is already a GFX10 IMG_FORMAT value whatever the target
        (frontend/image.py maps a GFX11 T#'s FORMAT to the GFX10 format of the same name)."""
        self.b = b
        self._kinds: dict[tuple[int, ...], Value] = {}
        gfx10 = gfx10_numbering or getattr(b, "target", "gfx1030").startswith(("gfx101", "gfx103"))
        tab = table(gfx10, image) if gfx10 or not gfx10_only else {}
        fmt = b.bin("and", "u32", fmt, C(b, "u32", (1 << nbits) - 1))
        self.packed = p = lut(b, fmt, {k: v for k, v in tab.items() if k < 1 << nbits}, nbits)

        def field(at, width):
            return b.lo32(
                b.bin("and", "u64", b.bin("shr", "u64", p, C(b, "u64", at)), C(b, "u64", (1 << width) - 1))
            )

        self.kind = field(KIND_AT, 4)
        self.nbytes = field(BYTES_AT, 5)
        self.known = b.cmp("ne", "u32", self.kind, C(b, "u32", 0))
        self.off = [field(CH_BITS * c, 7) for c in range(4)]
        self.width = [field(CH_BITS * c + 7, 6) for c in range(4)]

    def is_kind(self, *kinds: int) -> Value:
        if kinds in self._kinds:
            return self._kinds[kinds]
        b = self.b
        out = None
        for k in kinds:
            e = b.cmp("eq", "u32", self.kind, C(b, "u32", k))
            out = e if out is None else b.bin("or", "b1", out, e)
        assert out is not None
        self._kinds[kinds] = out
        return out

    def channels(self) -> Value:
        """How many channels the format has (1..4)."""
        b = self.b
        n = C(b, "u32", 0)
        for w in self.width:
            n = b.bin("add", "u32", n, b.cvt("u32", b.cmp("ne", "u32", w, C(b, "u32", 0))))
        return n

    def integer(self) -> Value:
        return self.is_kind(UINT, SINT)

    def one(self) -> Value:
        """1 in the format's result kind: integer 1, else 1.0."""
        if not hasattr(self, "_one"):
            b = self.b
            self._one = b.select(self.integer(), C(b, "u32", 1), C(b, "u32", 0x3F800000))
        return self._one


def _mask(b, w):
    """(1 << w) - 1 as u32, for 0 <= w <= 32."""
    return b.lo32(b.bin("sub", "u64", b.bin("shl", "u64", C(b, "u64", 1), b.cvt("u64", w)), C(b, "u64", 1)))


def _sext(b, raw, w):
    sh = b.bin("and", "u32", b.bin("sub", "u32", C(b, "u32", 32), w), C(b, "u32", 31))
    return b.bin(
        "sar", "i32", b.bin("shl", "i32", b.bitcast("i32", raw), b.bitcast("i32", sh)), b.bitcast("i32", sh)
    )


def _f16_to_f32(b, h):
    """u32 holding f16 bits -> f32 (exact)."""
    return b.cvt("f32", b.bitcast("f16", b.cvt("u16", h)))


def decode(b: Builder, f: Format, words: list[Value]) -> tuple[list[Value], Value]:
    """The texel's four channels as 32-bit register values (missing ones 0, 0, 0, 1), before
    DST_SEL, from its little-endian ``words`` (4 u32), and a b1 that is true where a 16/11/10-bit
    float channel holds a NaN (the caller refuses it)."""
    one = f.one()
    out = []
    nan = None
    e9 = b.bin("shr", "u32", words[0], C(b, "u32", 27))  # 5_9_9_9: the shared exponent
    for c in range(4):
        off, w = f.off[c], f.width[c]
        dw = b.bin("shr", "u32", off, C(b, "u32", 5))
        x = words[0]
        for k in (1, 2, 3):
            x = b.select(b.cmp("eq", "u32", dw, C(b, "u32", k)), words[k], x)
        raw = b.bin(
            "and", "u32", b.bin("shr", "u32", x, b.bin("and", "u32", off, C(b, "u32", 31))), _mask(b, w)
        )
        s = _sext(b, raw, w)
        fu = b.cvt("f32", raw)
        fs = b.cvt("f32", s)
        unorm = b.bin("fdiv", "f32", fu, b.cvt("f32", _mask(b, w)))
        smax = b.cvt("f32", b.bin("shr", "u32", _mask(b, w), C(b, "u32", 1)))
        snorm = b.bin("fmax", "f32", b.bin("fdiv", "f32", fs, smax), C(b, "f32", -1.0))
        # small floats as f16 bits: 11-bit (e5m6) << 4, 10-bit (e5m5) << 5; no sign
        is16 = b.cmp("eq", "u32", w, C(b, "u32", 16))
        sh = b.select(b.cmp("eq", "u32", w, C(b, "u32", 11)), C(b, "u32", 4), C(b, "u32", 5))
        h = b.select(is16, raw, b.bin("shl", "u32", raw, sh))
        small = _f16_to_f32(b, h)
        flt = b.select(b.cmp("eq", "u32", w, C(b, "u32", 32)), raw, b.bitcast("u32", small))
        small_nan = b.bin(
            "and",
            "b1",
            b.bin("and", "b1", f.is_kind(FLOAT), b.cmp("lt", "u32", w, C(b, "u32", 32))),
            b.cmp("u", "f32", small, small),
        )
        if c < 3:
            small_nan = b.bin("and", "b1", small_nan, b.cmp("ne", "u32", w, C(b, "u32", 0)))
        nan = small_nan if nan is None else b.bin("or", "b1", nan, small_nan)
        e = b.bitcast("i32", b.bin("sub", "u32", e9, C(b, "u32", 24)))
        rgb9e5 = b.bitcast("u32", b.emit("ldexp", "f32", fu, e))
        v = raw  # UINT
        for kind, val in (
            (SINT, b.bitcast("u32", s)),
            (UNORM, b.bitcast("u32", unorm)),
            (SNORM, b.bitcast("u32", snorm)),
            (USCALED, b.bitcast("u32", fu)),
            (SSCALED, b.bitcast("u32", fs)),
            (FLOAT, flt),
            (RGB9E5, rgb9e5),
        ):
            v = b.select(f.is_kind(kind), val, v)
        default = one if c == 3 else C(b, "u32", 0)
        out.append(b.select(b.cmp("eq", "u32", w, C(b, "u32", 0)), default, v))
    assert nan is not None
    return out, nan


def swizzle(b: Builder, f: Format, chans: list[Value], sel: list[Value]) -> tuple[list[Value], Value]:
    """DST_SEL applied: result c is 0, 1 or channel sel - 4; and a b1 true where a select is a
    reserved value (2, 3)."""
    one = f.one()
    out = []
    bad = None
    for c in range(4):
        v = C(b, "u32", 0)
        v = b.select(b.cmp("eq", "u32", sel[c], C(b, "u32", SEL_1)), one, v)
        for k in range(4):
            v = b.select(b.cmp("eq", "u32", sel[c], C(b, "u32", SEL_X + k)), chans[k], v)
        out.append(v)
        r = b.bin(
            "or",
            "b1",
            b.cmp("eq", "u32", sel[c], C(b, "u32", 2)),
            b.cmp("eq", "u32", sel[c], C(b, "u32", 3)),
        )
        bad = r if bad is None else b.bin("or", "b1", bad, r)
    assert bad is not None
    return out, bad


def gives_one(b: Builder, f: Format, sel: list[Value], n: int) -> Value:
    """b1: one of the first ``n`` results of a texel read as all-zero bits is not 0 (DST_SEL "1",
    or W where the format has no W): where an out-of-range access reads "0", hardware might give
    that 1 or 0 there."""
    out = None
    w_missing = b.cmp("eq", "u32", f.width[3], C(b, "u32", 0))
    for c in range(n):
        e = b.bin(
            "or",
            "b1",
            b.cmp("eq", "u32", sel[c], C(b, "u32", SEL_1)),
            b.bin("and", "b1", w_missing, b.cmp("eq", "u32", sel[c], C(b, "u32", SEL_X + 3))),
        )
        out = e if out is None else b.bin("or", "b1", out, e)
    assert out is not None
    return out


def _small_float(b, x: Value, m: int) -> Value:
    """f32 -> unsigned float with a 5-bit exponent (bias 15) and ``m`` mantissa bits, rounded to
    nearest even (denormals kept, overflow to infinity, negative and -0 to 0; NaN is the
    caller's)."""
    u = b.bitcast("u32", x)
    e = b.bin("and", "u32", b.bin("shr", "u32", u, C(b, "u32", 23)), C(b, "u32", 0xFF))
    mant = b.bin("or", "u32", b.bin("and", "u32", u, C(b, "u32", 0x7FFFFF)), C(b, "u32", 0x800000))
    # target exponent E' = max(e - 112, 1); bits dropped s = 23 - m + (E' - (e - 112)), <= 31
    denorm = b.cmp("lt", "u32", e, C(b, "u32", 113))
    extra = b.select(denorm, b.bin("sub", "u32", C(b, "u32", 113), e), C(b, "u32", 0))
    s = b.bin("min", "u32", b.bin("add", "u32", extra, C(b, "u32", 23 - m)), C(b, "u32", 31))
    r = b.bin("shr", "u32", mant, s)
    rem = b.bin(
        "and", "u32", mant, b.bin("sub", "u32", b.bin("shl", "u32", C(b, "u32", 1), s), C(b, "u32", 1))
    )
    half = b.bin("shl", "u32", C(b, "u32", 1), b.bin("sub", "u32", s, C(b, "u32", 1)))
    up = b.bin(
        "or",
        "b1",
        b.cmp("gt", "u32", rem, half),
        b.bin(
            "and",
            "b1",
            b.cmp("eq", "u32", rem, half),
            b.cmp("ne", "u32", b.bin("and", "u32", r, C(b, "u32", 1)), C(b, "u32", 0)),
        ),
    )
    r = b.bin("add", "u32", r, b.cvt("u32", up))
    ex = b.select(denorm, C(b, "u32", 0), b.bin("sub", "u32", e, C(b, "u32", 113)))
    res = b.bin("add", "u32", b.bin("shl", "u32", ex, C(b, "u32", m)), r)
    res = b.bin("min", "u32", res, C(b, "u32", 31 << m))
    zero = b.bin(
        "or",
        "b1",
        b.cmp("ne", "u32", b.bin("shr", "u32", u, C(b, "u32", 31)), C(b, "u32", 0)),
        b.cmp("eq", "u32", e, C(b, "u32", 0)),
    )
    return b.select(zero, C(b, "u32", 0), res)


def encode(b: Builder, f: Format, vals: list[Value]) -> tuple[list[Value], Value, Value]:
    """The texel's little-endian words (4 u32) holding register values ``vals`` (one per
    channel, in memory order X..W), a b1 true where a value cannot be stored exactly (an integer
    outside its channel, a NaN to a 16/11/10-bit float), and a b1 true where the format is not
    written at all (USCALED, SSCALED, 5_9_9_9)."""
    words = [C(b, "u32", 0) for _ in range(4)]
    bad = None
    for c in range(4):
        v = vals[c]
        off, w = f.off[c], f.width[c]
        mask = _mask(b, w)
        x = b.bitcast("f32", v)
        nan = b.cmp("u", "f32", x, x)
        xd = b.cvt("f64", x)
        um = b.cvt("f64", mask)
        sm = b.cvt("f64", b.bin("shr", "u32", mask, C(b, "u32", 1)))
        ucl = b.bin("fmin", "f64", b.bin("fmax", "f64", xd, C(b, "f64", 0.0)), C(b, "f64", 1.0))
        unorm = b.cvt("u32", b.un("rndne", "f64", b.bin("fmul", "f64", ucl, um)))
        scl = b.bin("fmin", "f64", b.bin("fmax", "f64", xd, C(b, "f64", -1.0)), C(b, "f64", 1.0))
        snorm = b.bitcast("u32", b.cvt("i32", b.un("rndne", "f64", b.bin("fmul", "f64", scl, sm))))
        unorm = b.select(nan, C(b, "u32", 0), unorm)
        snorm = b.select(nan, C(b, "u32", 0), snorm)
        h16 = b.cvt("u32", b.bitcast("u16", b.cvt("f16", x)))
        f11 = _small_float(b, x, 6)
        f10 = _small_float(b, x, 5)
        flt = b.select(
            b.cmp("eq", "u32", w, C(b, "u32", 32)),
            v,
            b.select(
                b.cmp("eq", "u32", w, C(b, "u32", 16)),
                h16,
                b.select(b.cmp("eq", "u32", w, C(b, "u32", 11)), f11, f10),
            ),
        )
        enc = v
        for kind, val in ((UNORM, unorm), (SNORM, snorm), (FLOAT, flt)):
            enc = b.select(f.is_kind(kind), val, enc)
        enc = b.bin("and", "u32", enc, mask)
        # integers must fit: UINT v <= mask; SINT sext(v & mask) == v
        sv = b.bitcast("u32", _sext(b, b.bin("and", "u32", v, mask), w))
        lost = b.select(
            f.is_kind(UINT),
            b.cmp("gt", "u32", v, mask),
            b.bin("and", "b1", f.is_kind(SINT), b.cmp("ne", "u32", sv, v)),
        )
        small_nan = b.bin(
            "and", "b1", b.bin("and", "b1", f.is_kind(FLOAT), b.cmp("lt", "u32", w, C(b, "u32", 32))), nan
        )
        has = b.cmp("ne", "u32", w, C(b, "u32", 0))
        bad_c = b.bin("and", "b1", has, b.bin("or", "b1", lost, small_nan))
        bad = bad_c if bad is None else b.bin("or", "b1", bad, bad_c)
        dw = b.bin("shr", "u32", off, C(b, "u32", 5))
        placed = b.select(
            has, b.bin("shl", "u32", enc, b.bin("and", "u32", off, C(b, "u32", 31))), C(b, "u32", 0)
        )
        for k in range(4):
            words[k] = b.bin(
                "or",
                "u32",
                words[k],
                b.select(b.cmp("eq", "u32", dw, C(b, "u32", k)), placed, C(b, "u32", 0)),
            )
    assert bad is not None
    return words, bad, f.is_kind(USCALED, SSCALED, RGB9E5)


def d16_sources(b: Builder, f: Format, sel: list[Value], n: int) -> Value:
    """b1: one of the first ``n`` results (after DST_SEL) is not exactly a 16-bit value: it comes
    from a channel other than a 16-bit FLOAT or a UINT/SINT channel of at most 16 bits (a d16
    load would round or narrow it, which is not established)."""
    out = None
    for c in range(n):
        bad_c = None
        for k in range(4):
            w = f.width[k]
            ok_k = b.bin(
                "or",
                "b1",
                b.bin("and", "b1", f.is_kind(FLOAT), b.cmp("eq", "u32", w, C(b, "u32", 16))),
                b.bin("and", "b1", f.integer(), b.cmp("le", "u32", w, C(b, "u32", 16))),
            )
            ok_k = b.bin("or", "b1", ok_k, b.cmp("eq", "u32", w, C(b, "u32", 0)))  # a default
            e = b.bin(
                "and", "b1", b.cmp("eq", "u32", sel[c], C(b, "u32", SEL_X + k)), b.un("not", "b1", ok_k)
            )
            bad_c = e if bad_c is None else b.bin("or", "b1", bad_c, e)
        assert bad_c is not None
        out = bad_c if out is None else b.bin("or", "b1", out, bad_c)
    assert out is not None
    return out


def to_d16(b: Builder, f: Format, v: Value) -> Value:
    """A 32-bit result as its 16-bit d16 form: f16 bits for the float kinds (exact where
    d16_sources holds: a 16-bit float channel, 0 or 1.0), the low half for integers."""
    h = b.cvt("u32", b.bitcast("u16", b.cvt("f16", b.bitcast("f32", v))))
    return b.select(f.integer(), b.bin("and", "u32", v, C(b, "u32", 0xFFFF)), h)


def from_d16(b: Builder, f: Format, h: Value) -> Value:
    """A d16 store's 16-bit value (in the low half of ``h``) as the 32-bit register value the
    conversion takes: the f16's f32 bits (exact), zero- (UINT) or sign-extended (SINT)."""
    lo = b.bin("and", "u32", h, C(b, "u32", 0xFFFF))
    sx = b.bitcast("u32", b.cvt("i32", b.bitcast("i16", b.cvt("u16", lo))))
    fl = b.bitcast("u32", _f16_to_f32(b, lo))
    return b.select(f.is_kind(UINT), lo, b.select(f.is_kind(SINT), sx, fl))


def refuse(b: Builder, code: str, cond: Value, why: str) -> None:
    b.effect("refuse_if", "b1", b.bin("and", "b1", b.exec(), cond), why=why, code=code)


def load_texel(b: Builder, f: Format, addr: Value, ok: Value, space: str = "global") -> list[Value]:
    """The texel's words (4 u32, those past its size 0): one load per texel size, each masked
    by the lanes whose format has that size."""
    words = [C(b, "u32", 0) for _ in range(4)]
    for nb, nw in ((1, 1), (2, 1), (4, 1), (8, 2), (12, 3), (16, 4)):
        m = b.bin("and", "b1", ok, b.cmp("eq", "u32", f.nbytes, C(b, "u32", nb)))
        ld = b.emit("load", "u32", addr, m, uniform=False, space=space, nbytes=nb, words=nw)
        for k in range(nw):
            words[k] = b.bin("or", "u32", words[k], b.emit("word", "u32", ld, k=k))
    return words


def store_texel(
    b: Builder, f: Format, addr: Value, ok: Value, words: list[Value], space: str = "global"
) -> None:
    for nb, nw in ((1, 1), (2, 1), (4, 1), (8, 2), (12, 3), (16, 4)):
        m = b.bin("and", "b1", ok, b.cmp("eq", "u32", f.nbytes, C(b, "u32", nb)))
        b.effect("store", "u32", addr, m, *words[:nw], space=space, nbytes=nb)
