"""Array helpers the generated NumPy code calls (bit ops, float semantics, lane ops).

Float rules (docs/float-semantics.md): f32/f16/f64 add/sub/mul and conversions use NumPy's IEEE
arithmetic (correctly rounded, round to nearest even).  fma_f32 is exact (f64 product + TwoSum
+ round-to-odd, then one rounding to f32).  Denormal flushing follows MODE.FP_DENORM.
"""
from __future__ import annotations

import numpy as np

DT = {"b1": np.bool_, "u8": np.uint8, "i8": np.int8, "u16": np.uint16, "i16": np.int16,
      "u32": np.uint32, "i32": np.int32, "u64": np.uint64, "i64": np.int64, "f16": np.float16,
      "f32": np.float32, "f64": np.float64}
UINT = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}
_MIN_NORMAL = {np.float16: np.float16(2.0 ** -14), np.float32: np.float32(2.0 ** -126),
               np.float64: np.float64(2.0 ** -1022)}


def _dt(x):
    return np.asarray(x).dtype.type


# ----------------------------------------------------------------------------------- integers
def popcount(x):
    return np.bitwise_count(x).astype(np.int32)


def clz(x, bits):
    """Leading zeros; -1 for 0 (s_flbit / v_ffbh convention)."""
    x = np.asarray(x)
    y = x.copy() if x.ndim else x
    for s in (1, 2, 4, 8, 16, 32):
        if s < bits:
            y = y | (y >> x.dtype.type(s))
    n = bits - np.bitwise_count(y).astype(np.int32)
    return np.where(x == 0, np.int32(-1), n).astype(np.int32)


def ctz(x, bits):
    x = np.asarray(x)
    low = x & (~x + x.dtype.type(1))
    n = np.bitwise_count(low - x.dtype.type(1)).astype(np.int32)
    return np.where(x == 0, np.int32(-1), n).astype(np.int32)


_REV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


def bitrev(x):
    x = np.ascontiguousarray(x)
    b = _REV8[x.view(np.uint8)].reshape(x.shape + (x.dtype.itemsize,))[..., ::-1]
    return np.ascontiguousarray(b).view(x.dtype).reshape(x.shape)


def mulhi(a, b, signed):
    if signed:
        return ((a.astype(np.int64) * b.astype(np.int64)) >> np.int64(32)).astype(np.int32)
    return ((a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32)


# ------------------------------------------------------------------------------------- floats
def flush(x):
    """Denormals -> signed zero."""
    x = np.asarray(x)
    t = x.dtype.type
    tiny = np.abs(x) < _MIN_NORMAL[t]
    return np.where(tiny & (x != 0), np.copysign(t(0), x), x).astype(t)


def fin(x, mode):
    """Inputs: flush denormals when MODE.FP_DENORM says 'flush src' (0 or 2)."""
    d = (mode >> (4 if _dt(x) is np.float32 else 6)) & 3
    return flush(x) if d in (0, 2) else x


def fout(x, mode):
    d = (mode >> (4 if _dt(x) is np.float32 else 6)) & 3
    return flush(x) if d in (0, 1) else x


def fmin(a, b):
    if _dt(a) is np.float32 and _dt(b) is np.float32:
        # np.fmin ignores one NaN like v_min (but returns a when both are NaN, v_min b) and
        # orders -0/+0 arbitrarily (v_min: -0): fix equal operands with OR of the bits and
        # two NaNs with b
        r = np.fmin(a, b)
        eq = a == b
        r = np.where(eq, np.bitwise_or(np.asarray(a).view(np.uint32), np.asarray(b).view(np.uint32)).view(np.float32), r)
        nb = np.isnan(b)
        if nb.any():
            r = np.where(nb & np.isnan(a), b, r)
        return np.asarray(r, np.float32)
    return _fmin(a, b)


def fmax(a, b):
    if _dt(a) is np.float32 and _dt(b) is np.float32:
        r = np.fmax(a, b)
        eq = a == b
        r = np.where(eq, np.bitwise_and(np.asarray(a).view(np.uint32), np.asarray(b).view(np.uint32)).view(np.float32), r)
        nb = np.isnan(b)
        if nb.any():
            r = np.where(nb & np.isnan(a), b, r)
        return np.asarray(r, np.float32)
    return _fmax(a, b)


def _fmin(a, b):
    a, b = np.broadcast_arrays(a, b)
    lt = (a < b) | ((a == b) & np.signbit(a))
    r = np.where(lt, a, b)
    r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, r))
    return r.astype(a.dtype)


def _fmax(a, b):
    a, b = np.broadcast_arrays(a, b)
    gt = (a > b) | ((a == b) & ~np.signbit(a))
    r = np.where(gt, a, b)
    r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, r))
    return r.astype(a.dtype)


_LOW28 = np.uint64((1 << 28) - 1)
_F32_MIN_NORMAL = np.float64(2.0 ** -126)
_F32_OVERFLOW = np.float64(2.0 ** 128)


def fma(a, b, c, to=None):
    """a*b+c rounded once (to ``to`` when given: the fma_to op, e.g. f16 inputs -> f32 result)."""
    if to is None and _dt(a) is np.float32:
        # a*b is exact in f64; RN64(a*b + c) then RN32 is the single rounding unless the f64 sum
        # lands exactly on an f32 rounding midpoint (low 28 bits of its mantissa zero covers every
        # such case, also for f32 subnormals, overflow and non-finite values): redo only those
        s = np.multiply(a, b, dtype=np.float64)
        s += c
        r = s.astype(np.float32)
        odd = (s.view(np.uint64) & _LOW28) == 0
        if odd.any():
            a2, b2, c2 = np.broadcast_arrays(a, b, c)
            if r.ndim == 0:
                return _fma_slow(a2, b2, c2, np.float32)
            # of those, an s with bit 28 clear too (low 29 bits zero) in the f32 normal range
            # is an f32 value: then RN32(a*b+c) == s == r (a*b+c is within half an f64 ulp of
            # it); only midpoints (bit 28 set), zeros, subnormals, overflow, inf/NaN are redone
            idx = np.flatnonzero(odd)
            ss = s.reshape(-1)[idx]
            mag = np.abs(ss)
            redo = (((ss.view(np.uint64) >> np.uint64(28)) & np.uint64(1)) != 0) | \
                ~((mag >= _F32_MIN_NORMAL) & (mag < _F32_OVERFLOW))
            if redo.any():
                ix = np.unravel_index(idx[redo], r.shape)
                r[ix] = _fma_slow(a2[ix], b2[ix], c2[ix], np.float32)
        return r
    return _fma_slow(a, b, c, to)


def _fma_slow(a, b, c, to=None):
    t = _dt(a) if to is None else to
    if _dt(a) is np.float64:
        assert t is np.float64, "fma_to from f64 operands"
        return _fma64(np.asarray(a), np.asarray(b), np.asarray(c))
    # the product of two f32 (or f16) is exact in f64; add with TwoSum and round to odd so the
    # final rounding to the narrow type is the single correct rounding of a*b+c
    p = np.asarray(a, np.float64) * np.asarray(b, np.float64)
    c64 = np.asarray(c, np.float64)
    s = _add_round_odd(p, c64)
    return s.astype(t)


def _two_sum(a, b):
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


def _add_round_odd(p, c):
    """p + c rounded to odd in f64 (exact when the sum is; NaN/inf pass through)."""
    s, err = _two_sum(p, c)
    return _to_odd(s, err)


def _to_odd(s, err):
    """Move s one ulp toward err when s is inexact (err != 0) and its last bit is even."""
    s = np.asarray(s, np.float64)
    bits = np.array(s, copy=True).view(np.uint64)
    inexact = (err != 0) & np.isfinite(s)
    toward_up = (err > 0) == (s > 0)
    adj = np.where(toward_up, np.uint64(1), np.uint64(0xFFFFFFFFFFFFFFFF))
    odd = (bits & np.uint64(1)) == 1
    fix = inexact & ~odd & (s != 0)
    bits = np.where(fix, bits + adj, bits)
    return bits.view(np.float64)


_SPLIT = np.float64(134217729.0)      # 2^27 + 1 (Veltkamp)


def _two_prod(a, b):
    """Dekker: p + e == a*b exactly when no intermediate overflows or underflows."""
    p = a * b
    ca, cb = _SPLIT * a, _SPLIT * b
    ah = ca - (ca - a)
    al = a - ah
    bh = cb - (cb - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def _fma64(a, b, c):
    """Correctly rounded f64 fma (Boldo-Melquiond: Dekker product, TwoSum, round-to-odd).

    Lanes outside the algorithm's range (huge or tiny operands/products/results, where a
    Dekker split could overflow or a partial product underflow) are redone exactly with
    Python integers; zeros and non-finite operands follow IEEE directly."""
    a, b, c = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                  np.asarray(c, np.float64))
    with np.errstate(all="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, ul)
        vh, vl = _two_sum(uh, th)
        v = _add_round_odd(tl, vl)
        r = vh + v
        simple = (a == 0) | (b == 0) | (c == 0) | ~(np.isfinite(a) & np.isfinite(b) & np.isfinite(c))
        # product exactly zero, c zero or a non-finite operand: IEEE arithmetic of a*b + c
        # is already exact up to the one rounding of the product (or of the sum)
        exact0 = (a == 0) | (b == 0)
        r = np.where(simple, np.where((c == 0) & ~exact0, uh, uh + c), r)
        fa, fb, fc = np.abs(a), np.abs(b), np.abs(uh)
        risky = ~simple & ((fa > 2.0 ** 995) | (fb > 2.0 ** 995) | (fc > 2.0 ** 1000) |
                           (fc < 2.0 ** -960) | (np.abs(c) > 2.0 ** 1000) |
                           (np.abs(r) < 2.0 ** -960) | ~np.isfinite(r))
    if risky.any():
        r = np.array(r, copy=True)
        for idx in zip(*np.nonzero(risky)):
            r[idx] = _fma_exact(float(a[idx]), float(b[idx]), float(c[idx]))
    return r


def _fma_exact(a, b, c):
    from fractions import Fraction
    q = Fraction(a) * Fraction(b) + Fraction(c)
    if q == 0:
        return 0.0                  # exact cancellation of nonzero terms: +0 (round to nearest)
    try:
        return float(q)             # int/int true division: correctly rounded
    except OverflowError:
        return float("inf") if q > 0 else float("-inf")


def _two_over_pi_bits(nbits=1201):
    """floor(2/pi * 2^nbits) with Python integers (Machin: pi/4 = 4 atan(1/5) - atan(1/239))."""
    guard = nbits + 64
    one = 1 << guard

    def atan_inv(k):
        total, term, n, sign = 0, one // k, 1, 1
        while term:
            total += sign * (term // n)
            term //= k * k
            n += 2
            sign = -sign
        return total
    pi = 4 * (4 * atan_inv(5) - atan_inv(239))         # pi * 2^guard
    return ((2 << guard) << nbits) // pi                # (2/pi) * 2^nbits


_TWO_OVER_PI = None


def trig_preop(x, seg):
    """V_TRIG_PREOP_F64: bits of 2/pi (b_1200 = first fraction bit) from position shift, 53 wide,
    as a double scaled by 2^(-53-shift) (+128 when exponent(x) >= 1968); shift = 53*seg[4:0]
    plus max(exponent(x) - 1077, 0)."""
    global _TWO_OVER_PI
    if _TWO_OVER_PI is None:
        _TWO_OVER_PI = _two_over_pi_bits()
    x = np.asarray(x, np.float64)
    seg = np.asarray(seg, np.uint32)
    x, seg = np.broadcast_arrays(x, seg)
    out = np.empty(x.shape, np.float64)
    ex = ((x.view(np.uint64) >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    for idx in np.ndindex(x.shape):
        e = int(ex[idx])
        shift = int(seg[idx] & 31) * 53 + max(e - 1077, 0)
        v = ((_TWO_OVER_PI << shift) >> (1201 - 53)) & ((1 << 53) - 1)
        scale = -53 - shift + (128 if e >= 1968 else 0)
        out[idx] = np.ldexp(np.float64(v), max(scale, -2000))
    return out


def fract(x):
    t = _dt(x)
    r = x - np.floor(x)
    one_minus = np.nextafter(t(1), t(0))
    return np.where(np.isinf(x), t(np.nan), np.minimum(r, one_minus)).astype(t)


def rcp(x):
    t = _dt(x)
    return (np.float64(1.0) / np.asarray(x, np.float64)).astype(t) if t is not np.float64 else 1.0 / x


def rsq(x):
    t = _dt(x)
    if t is np.float64:
        return 1.0 / np.sqrt(x)
    return (1.0 / np.sqrt(np.asarray(x, np.float64))).astype(t)


def exp2(x):
    t = _dt(x)
    return np.exp2(np.asarray(x, np.float64)).astype(t)


def log2(x):
    t = _dt(x)
    return np.log2(np.asarray(x, np.float64)).astype(t)


def sin(x):
    t = _dt(x)
    return np.sin(np.asarray(x, np.float64) * (2 * np.pi)).astype(t)


def cos(x):
    t = _dt(x)
    return np.cos(np.asarray(x, np.float64) * (2 * np.pi)).astype(t)


def sqrt(x):
    return np.sqrt(x)


def ldexp(x, e):
    t = _dt(x)
    e = np.clip(np.asarray(e, np.int64), -100000, 100000).astype(np.int32)
    return np.ldexp(x, e).astype(t)


def frexp_mant(x):
    t = _dt(x)
    m, _ = np.frexp(x)
    return np.where(np.isfinite(x), m, x).astype(t)


def frexp_exp(x):
    _, e = np.frexp(x)
    return np.where(np.isfinite(x), e, 0).astype(np.int32)


def isclass(x, mask):
    """v_cmp_class: bit 0 sNaN, 1 qNaN, 2 -inf, 3 -normal, 4 -denorm, 5 -0, 6 +0, 7 +denorm,
    8 +normal, 9 +inf."""
    t = _dt(x)
    u = UINT[t]
    bits = np.asarray(x).view(u)
    quiet_bit = {np.float16: 1 << 9, np.float32: 1 << 22, np.float64: 1 << 51}[t]
    nan = np.isnan(x)
    qnan = nan & ((bits & u(quiet_bit)) != 0)
    snan = nan & ~qnan
    neg = np.signbit(x)
    inf = np.isinf(x)
    zero = x == 0
    den = (np.abs(x) < _MIN_NORMAL[t]) & ~zero
    norm = ~(nan | inf | zero | den)
    classes = [snan, qnan, inf & neg, norm & neg, den & neg, zero & neg, zero & ~neg,
               den & ~neg, norm & ~neg, inf & ~neg]
    m = np.asarray(mask, np.uint32)
    r = np.zeros(np.broadcast(x, m).shape, np.uint32)
    for k, c in enumerate(classes):
        r |= np.where(c & (((m >> np.uint32(k)) & np.uint32(1)) != 0), np.uint32(1), np.uint32(0))
    return r


def cvt(x, frm, to):
    """Numeric conversion (IR 'cvt')."""
    tt = DT[to]
    if frm in ("f32", "f64") and to == "u32":
        # fmax maps NaN and negatives to 0, fmin saturates; the cast truncates toward zero
        y = np.fmax(np.asarray(x, np.float64), 0.0)
        return np.fmin(y, 4294967295.0, out=y if y.ndim else None).astype(np.uint32)
    if frm in ("f16", "f32", "f64") and to not in ("f16", "f32", "f64"):
        info = np.iinfo(tt)
        y = np.trunc(np.asarray(x, np.float64))
        y = np.where(np.isnan(y), 0.0, y)
        return np.clip(y, info.min, info.max).astype(tt)
    if frm == "b1":
        return np.asarray(x).astype(tt)
    return np.asarray(x).astype(tt)


# ---------------------------------------------------------------------------------- lane ops
def ballot(b, n, lanes):
    b = np.broadcast_to(b, (n, lanes))
    packed = np.packbits(b, axis=1, bitorder="little")
    if lanes == 32:
        return packed.view("<u4").astype(np.uint64).reshape(n, 1)
    return packed.view("<u8").astype(np.uint64).reshape(n, 1)


def readlane(v, lane, n, lanes):
    v = np.broadcast_to(v, (n, lanes))
    idx = np.broadcast_to(np.asarray(lane, np.intp), (n, 1)) % lanes
    return np.take_along_axis(v, idx, axis=1)


def shuffle(v, src, n, lanes):
    v = np.broadcast_to(v, (n, lanes))
    idx = np.broadcast_to(np.asarray(src, np.intp) % lanes, (n, lanes))
    return np.take_along_axis(v, idx, axis=1)


def permute(v, dst, active, n, lanes):
    v = np.broadcast_to(v, (n, lanes))
    dst = np.broadcast_to(np.asarray(dst, np.intp) % lanes, (n, lanes))
    active = np.broadcast_to(active, (n, lanes))
    out = np.zeros((n, lanes), np.uint32)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, lanes))
    # ascending lane order: the highest writing lane lands last
    out[rows[active], dst[active]] = v[active]
    return out


def exec_mask(lo, hi, lanes, lane_bits):
    if lanes == 32:
        return (lo & (np.uint32(1) << lane_bits)) != 0
    m = lo.astype(np.uint64) | (hi.astype(np.uint64) << np.uint64(32))
    return ((m >> lane_bits) & np.uint64(1)).astype(bool)
