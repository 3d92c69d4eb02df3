"""The numeric semantics of the IR's value ops over NumPy arrays (bit ops, float rules): one
definition that the NumPy backend's generated code calls (backends/numpy/helpers.py names them
for it) and the interpreter (ir/interp.py) evaluates constants with.

Float rules (docs/float-semantics.md): f32/f16/f64 add/sub/mul and conversions use NumPy's IEEE
arithmetic (correctly rounded, round to nearest even).  fma_f32 is exact (f64 product + TwoSum
+ round-to-odd, then one rounding to f32; only lanes whose f64 sum is an f32 midpoint or
subnormal need that, see _fma_narrow).  Denormal flushing follows MODE.FP_DENORM.
Hot helpers keep large temporaries in per-thread scratch arrays (_scratch)."""

from __future__ import annotations

import threading

import numpy as np

DT = {
    "b1": np.bool_,
    "u8": np.uint8,
    "i8": np.int8,
    "u16": np.uint16,
    "i16": np.int16,
    "u32": np.uint32,
    "i32": np.int32,
    "u64": np.uint64,
    "i64": np.int64,
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
}
IR_TYPE = {v: k for k, v in DT.items()}  # the IR type of a NumPy scalar type
UINT = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}
_MIN_NORMAL = {
    np.float16: np.float16(2.0**-14),
    np.float32: np.float32(2.0**-126),
    np.float64: np.float64(2.0**-1022),
}


def _dt(x):
    return np.asarray(x).dtype.type


# ----------------------------------------------------------------------------------- integers
def _unsigned(x):
    """x's bits as the unsigned type of its width (np.bitwise_count and >> of a signed integer
    work on its value: the count of -2**27's bits was 1, not 5)."""
    x = np.asarray(x)
    return x.view(f"u{x.dtype.itemsize}") if x.dtype.kind == "i" else x


def popcount(x):
    return np.bitwise_count(_unsigned(x)).astype(np.int32)


def clz(x, bits):
    """Leading zeros; -1 for 0 (s_flbit / v_ffbh convention)."""
    x = _unsigned(x)
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
# float type -> (its bits' unsigned type, sign bit, bits of its smallest normal, bits of inf)
_FBITS = {
    np.float16: (np.uint16, 0x8000, 0x0400, 0x7C00),
    np.float32: (np.uint32, 0x80000000, 0x00800000, 0x7F800000),
    np.float64: (np.uint64, 1 << 63, 1 << 52, 0x7FF << 52),
}
# NaN results (docs/float-semantics.md): the default NaN (sign set, quiet) and the quiet bit
DNAN = {
    np.float16: np.uint16(0xFE00).view(np.float16),
    np.float32: np.uint32(0xFFC00000).view(np.float32),
    np.float64: np.uint64(0xFFF8000000000000).view(np.float64),
}
_QUIET = {np.float16: 1 << 9, np.float32: 1 << 22, np.float64: 1 << 51}


def flush(x):
    """Denormals -> signed zero (a new array)."""
    x = np.asarray(x)
    t = x.dtype.type
    if t in _FBITS and x.ndim:
        ut, sign, mn, _ = _FBITS[t]
        u = x.view(ut)
        # (bits << 1) - 1 drops the sign and sends 0 to the top: below 2*mn - 1 only denormals
        k = np.left_shift(u, ut(1), out=_scratch("flush", x.shape, ut))
        k -= ut(1)
        if k.min() >= 2 * mn - 1:
            return x.copy()
        return np.where(k < ut(2 * mn - 1), u & ut(sign), u).view(t)
    tiny = np.abs(x) < _MIN_NORMAL[t]
    return np.where(tiny & (x != 0), np.copysign(t(0), x), x).astype(t)


def fin(x, mode):
    """Inputs: flush denormals when MODE.FP_DENORM says 'flush src' (0 or 2)."""
    d = (mode >> (4 if _dt(x) is np.float32 else 6)) & 3
    return flush(x) if d in (0, 2) else x


def fout(x, mode):
    d = (mode >> (4 if _dt(x) is np.float32 else 6)) & 3
    return flush(x) if d in (0, 1) else x


def _min_mag(r):
    """min |r| over the float array r: 0 if it holds a zero, NaN if a NaN (one pass + a
    reduction)."""
    return np.abs(r, out=_scratch("mag", r.shape, r.dtype)).min()


def fmin(a, b):
    if _dt(a) is np.float32 and _dt(b) is np.float32:
        return _minmax32(a, b, np.fmin, np.bitwise_or)
    return _fmin(a, b)


def fmax(a, b):
    if _dt(a) is np.float32 and _dt(b) is np.float32:
        return _minmax32(a, b, np.fmax, np.bitwise_and)
    return _fmax(a, b)


def _minmax32(a, b, f, join):
    # np.fmin ignores one NaN like v_min (but returns a when both are NaN, v_min b) and
    # orders -0/+0 arbitrarily (v_min: -0): fix equal operands with OR (max: AND) of the bits
    # and two NaNs with b.  Neither fix changes a lane unless its result is a zero or a NaN.
    r = f(a, b)
    lo = _min_mag(r) if r.ndim else np.nan
    if lo > 0:
        return r
    eq = a == b
    r = np.where(eq, join(np.asarray(a).view(np.uint32), np.asarray(b).view(np.uint32)).view(np.float32), r)
    if lo != lo:  # a NaN result: two NaN operands give b, one the other operand
        na, nb = np.isnan(a), np.isnan(b)  # (np.fmin's scalar loop returns a signaling NaN,
        r = np.where(na, b, np.where(nb, a, r))  # its SIMD loop the other operand)
    return np.asarray(r, np.float32)


def _minmax_fast(a, b, is_min):
    """_fmin/_fmax for NaN-free f16/f64 operands, or None.  f64: np.fmin/fmax equal them
    unless the result is a zero (the -0/+0 order) or NaN.  f16 (NumPy's f16 arithmetic is
    slow): integer keys, magnitude bits flipped for negatives, order floats like the values,
    with -0 < +0 as _fmin/_fmax want; equal keys are equal bits."""
    a, b = np.asarray(a), np.asarray(b)
    t = a.dtype.type
    if b.dtype.type is not t or not (a.ndim or b.ndim):
        return None
    if t is np.float64:
        r = (np.fmin if is_min else np.fmax)(a, b)
        return r if _min_mag(r) > 0 else None
    if t is not np.float16:
        return None
    ua, ub = a.view(np.int16), b.view(np.int16)
    if max((ua & np.int16(0x7FFF)).max(), (ub & np.int16(0x7FFF)).max()) > 0x7C00:
        return None  # a NaN operand
    ka = ua ^ ((ua >> np.int16(15)) & np.int16(0x7FFF))
    kb = ub ^ ((ub >> np.int16(15)) & np.int16(0x7FFF))
    pick_a = ka < kb if is_min else ka > kb
    return np.where(pick_a, a, b)


def _fmin(a, b):
    r = _minmax_fast(a, b, True)
    if r is not None:
        return r
    a, b = np.broadcast_arrays(a, b)
    lt = (a < b) | ((a == b) & np.signbit(a))
    r = np.where(lt, a, b)
    r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, r))
    return r.astype(a.dtype)


def _fmax(a, b):
    r = _minmax_fast(a, b, False)
    if r is not None:
        return r
    a, b = np.broadcast_arrays(a, b)
    gt = (a > b) | ((a == b) & ~np.signbit(a))
    r = np.where(gt, a, b)
    r = np.where(np.isnan(a), b, np.where(np.isnan(b), a, r))
    return r.astype(a.dtype)


_LOW28 = np.uint64((1 << 28) - 1)
_F32_MIN_NORMAL = np.float64(2.0**-126)
_F32_OVERFLOW = np.float64(2.0**128)
_TLS = threading.local()


def _scratch(slot, shape, dtype):
    """A per-thread array reused across calls, for temporaries that never leave a helper: a
    fresh large array costs a page fault per 4 KiB on every call, often more than the math."""
    d = getattr(_TLS, "bufs", None)
    if d is None:
        d = _TLS.bufs = {}
    key = (slot, shape, dtype)
    buf = d.get(key)
    if buf is None:
        if len(d) >= 64:
            d.clear()
        buf = d[key] = np.empty(shape, dtype)
    return buf


def _gather(x, shape, idx):
    """x broadcast to shape, at flat indices idx."""
    if x.shape == shape:
        return x.reshape(-1)[idx]
    if len(shape) == 2 and x.shape == (shape[0], 1):
        return x.reshape(-1)[idx // shape[1]]
    return np.broadcast_to(x, shape)[np.unravel_index(idx, shape)]


# narrow result type -> (f64 mantissa bit worth half an ulp of it, its smallest normal)
_NARROW = {np.float32: (28, np.float32(2.0**-126)), np.float16: (41, np.float64(2.0**-14))}


def fma(a, b, c, to=None):
    """a*b+c rounded once (to ``to`` when given: the fma_to op, e.g. f32 inputs -> f16 result)."""
    ta = _dt(a)
    t = ta if to is None else to
    if ta in (np.float32, np.float16) and t in _NARROW and _dt(b) is ta and _dt(c) is ta:
        r = _fma_narrow(a, b, c, t)
        if r is not None:
            return r
    if to is None and ta is np.float32:
        return _fma_nan(_fma32_compat(a, b, c), a, b, c)
    return _fma_nan(_fma_slow(a, b, c, to), a, b, c)


def _fma_nan(r, a, b, c):
    """NaN results of fma by RDNA's rule (docs/float-semantics.md "NaN results"; NumPy's own
    pick between two NaN operands depends on its SIMD loops): the first NaN of a, b quieted; an
    invalid product (0 x inf) the default NaN, even with a NaN c; then a NaN c quieted."""
    nan = r != r
    if not nan.any():
        return r
    t = _dt(r)

    def q(x):
        x = np.asarray(x)
        xt = x.dtype.type
        return (x.view(UINT[xt]) | UINT[xt](_QUIET[xt])).view(xt).astype(t)

    a, b, c = np.broadcast_arrays(np.asarray(a), np.asarray(b), np.asarray(c))
    bad = ((a == 0) & np.isinf(b)) | (np.isinf(a) & (b == 0))
    rule = np.where(a != a, q(a), np.where(b != b, q(b), np.where(~bad & (c != c), q(c), DNAN[t])))
    out = np.where(nan, rule, r).astype(t)
    return out[()] if out.ndim == 0 else out


def _fma_narrow(a, b, c, t):
    """a*b+c for f32/f16 operands rounded once to t (f32/f16); None for 0-d operands or when a
    result is NaN (then the older paths run and _fma_nan gives the NaN by RDNA's rule: with two
    NaN operands NumPy's own choice depends on where a lane falls in its SIMD loops).

    Why this is exact: a*b is exact in f64, so s = RN64(a*b + c) rounds the exact x once and
    RNt(s) rounds again.  Every rounding boundary of t (a midpoint between neighbouring t values,
    the overflow threshold included) is an f64 number and RN64 is monotone, so s is on the same
    side of every boundary as x, and RNt(s) == RNt(x), unless s is itself a midpoint and s != x.
    In t's normal range a midpoint has the f64 mantissa bit worth half a t ulp set and every
    bit below it clear; below t's smallest normal (coarser midpoints) every nonzero s is checked.
    s == 0 only when x == 0 (a nonzero sum of two doubles is at least an f64 ulp), with the
    IEEE sign of x.  inf: only from inf operands, exact.  The lanes checked get the exact
    error of the f64 sum (TwoSum); the inexact ones are rounded to odd in f64, then to t
    (Boldo-Melquiond), as _fma_slow does."""
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    shape = a.shape
    if b.shape != shape or (c.shape != shape and c.shape != shape[:-1] + (1,)):
        shape = np.broadcast(a, b, c).shape
    if not shape:
        return None
    bit, tmin = _NARROW[t]
    s = _scratch(0, shape, np.float64)
    np.multiply(a, b, out=s, dtype=np.float64)
    # (a broadcast c converted first: casting inside a broadcast add is slower)
    np.add(s, c if c.shape == shape else c.astype(np.float64), out=s, dtype=np.float64)
    r = s.astype(t)
    # any zero, subnormal or NaN result?  (|r| for f32; NumPy's f16 min is slow: |s| then)
    m = r if t is np.float32 else s
    mag = np.abs(m, out=_scratch(1, shape, m.dtype))
    lo = mag.min()
    if lo != lo:
        return None
    tiny = None
    if lo <= tmin:
        tiny = np.less_equal(mag, tmin)
        tiny &= np.not_equal(s, 0)
    key = s.view(np.uint64)  # in place (fewer buffers, fewer cache misses): s is
    np.left_shift(key, np.uint64(63 - bit), out=key)  # recomputed below where needed
    cand = np.equal(key, np.uint64(1 << 63))
    if tiny is not None:
        cand |= tiny
    if cand.any():
        idx = np.flatnonzero(cand)
        pp = np.multiply(_gather(a, shape, idx), _gather(b, shape, idx), dtype=np.float64)
        cc = _gather(c, shape, idx).astype(np.float64)
        ss = pp + cc  # the same s; TwoSum: err = pp + cc - ss
        bb = ss - pp
        err = (pp - (ss - bb)) + (cc - bb)
        if err.any():
            bad = err != 0
            r.reshape(-1)[idx[bad]] = _to_odd(ss[bad], err[bad]).astype(t)
    return r


def _fma32_compat(a, b, c):
    """The former f32 fma, kept for results with a NaN (see _fma_narrow) and 0-d operands."""
    s = np.multiply(a, b, dtype=np.float64)
    s += c
    r = s.astype(np.float32)
    odd = (s.view(np.uint64) & _LOW28) == 0
    if odd.any():
        a2, b2, c2 = np.broadcast_arrays(a, b, c)
        if r.ndim == 0:
            return _fma_slow(a2, b2, c2, np.float32)
        idx = np.flatnonzero(odd)
        ss = s.reshape(-1)[idx]
        mag = np.abs(ss)
        redo = (((ss.view(np.uint64) >> np.uint64(28)) & np.uint64(1)) != 0) | ~(
            (mag >= _F32_MIN_NORMAL) & (mag < _F32_OVERFLOW)
        )
        if redo.any():
            ix = np.unravel_index(idx[redo], r.shape)
            r[ix] = _fma_slow(a2[ix], b2[ix], c2[ix], np.float32)
    return r


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


_SPLIT = np.float64(134217729.0)  # 2^27 + 1 (Veltkamp)


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
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    shape = np.broadcast_shapes(a.shape, b.shape, c.shape)
    with np.errstate(all="ignore"):
        r = _bm64(a, b, c, shape)
        if shape and _bm64_all_in_range(a, b, c, r):
            return r
        a, b, c = np.broadcast_arrays(a, b, c)
        uh = a * b
        simple = (a == 0) | (b == 0) | (c == 0) | ~(np.isfinite(a) & np.isfinite(b) & np.isfinite(c))
        # product exactly zero, c zero or a non-finite operand: IEEE arithmetic of a*b + c
        # is already exact up to the one rounding of the product (or of the sum)
        exact0 = (a == 0) | (b == 0)
        r = np.where(simple, np.where((c == 0) & ~exact0, uh, uh + c), r)
        # ... except an infinite c after a finite product that overflowed f64: the exact product
        # is finite, so the result is c (uh + c would make inf - inf = NaN)
        r = np.where(np.isinf(c) & np.isfinite(a) & np.isfinite(b), c, r)
        fa, fb, fc = np.abs(a), np.abs(b), np.abs(uh)
        risky = ~simple & (
            (fa > 2.0**995)
            | (fb > 2.0**995)
            | (fc > 2.0**1000)
            | (fc < 2.0**-960)
            | (np.abs(c) > 2.0**1000)
            | (np.abs(r) < 2.0**-960)
            | ~np.isfinite(r)
        )
    if risky.any():
        r = np.array(r, copy=True)
        for idx in zip(*np.nonzero(risky)):
            r[idx] = _fma_exact(float(a[idx]), float(b[idx]), float(c[idx]))
    return r


def _bm64_all_in_range(a, b, c, r):
    """No lane of _fma64 is 'simple' or 'risky': all operands nonzero and in range, products
    (bounded by those of the extreme magnitudes: rounding is monotone) and results too."""

    def mag(x):
        m = np.abs(x, out=_scratch("mag64", x.shape, np.float64))
        return float(m.min()), float(m.max())  # NaN propagates and compares False

    la, ha = mag(a)
    lb, hb = mag(b)
    lc, hc = mag(c)
    if not (
        la > 0
        and lb > 0
        and lc > 0
        and ha <= 2.0**995
        and hb <= 2.0**995
        and hc <= 2.0**1000
        and la * lb >= 2.0**-960
        and ha * hb <= 2.0**1000
    ):
        return False
    lr, hr = mag(r)
    return lr >= 2.0**-960 and hr < np.inf


def _bm64(a, b, c, shape):
    """The Boldo-Melquiond steps of _fma64 (same IEEE operations lane by lane as _two_prod,
    _two_sum, _add_round_odd) in reused buffers; splits on the operands' own shapes."""
    B = [_scratch(("bm", k), shape, np.float64) for k in range(8)]
    p, e, t = B[0], B[1], B[2]

    def split(x, k):  # Veltkamp: hi = c - (c - x), lo = x - hi, c = 2^27+1 x
        hi = _scratch(("bmh", k), x.shape, np.float64)
        lo = _scratch(("bml", k), x.shape, np.float64)
        np.multiply(_SPLIT, x, out=hi)
        np.subtract(hi, x, out=lo)
        np.subtract(hi, lo, out=hi)
        np.subtract(x, hi, out=lo)
        return hi, lo

    np.multiply(a, b, out=p)
    ah, al = split(a, 0)
    bh, bl = split(b, 1)
    np.multiply(ah, bh, out=e)  # ul = ((ah*bh - p) + ah*bl + al*bh) + al*bl
    e -= p
    e += np.multiply(ah, bl, out=t)
    e += np.multiply(al, bh, out=t)
    e += np.multiply(al, bl, out=t)

    def two_sum(x, y, s, err, tmp):  # s + err == x + y: s = x + y, bb = s - x,
        np.add(x, y, out=s)  # err = (x - (s - bb)) + (y - bb)
        np.subtract(s, x, out=tmp)
        np.subtract(y, tmp, out=err)
        np.subtract(s, tmp, out=tmp)
        np.subtract(x, tmp, out=tmp)
        err += tmp

    th, tl = B[3], B[4]
    two_sum(c, e, th, tl, t)
    vh, vl = B[5], B[6]
    two_sum(p, th, vh, vl, t)
    s, err = B[7], B[1]
    two_sum(tl, vl, s, err, t)
    # _to_odd: one ulp toward err when err != 0, s finite, nonzero and even
    fix = err != 0
    fix &= np.isfinite(s)
    fix &= s != 0
    u = s.view(np.uint64)
    fix &= (u & np.uint64(1)) == 0
    up = (err > 0) == (s > 0)  # bits + 1 moves away from zero
    inc = fix & up
    fix &= ~up
    u += inc  # (ufunc where= is far slower than bool arithmetic)
    u -= fix
    return vh + s


def _fma_exact(a, b, c):
    from fractions import Fraction

    q = Fraction(a) * Fraction(b) + Fraction(c)
    if q == 0:
        return 0.0  # exact cancellation of nonzero terms: +0 (round to nearest)
    try:
        return float(q)  # int/int true division: correctly rounded
    except OverflowError:
        return float("inf") if q > 0 else float("-inf")


def two_over_pi_bits(nbits=1201):
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

    pi = 4 * (4 * atan_inv(5) - atan_inv(239))  # pi * 2^guard
    return ((2 << guard) << nbits) // pi  # (2/pi) * 2^nbits


_TWO_OVER_PI = None


def trig_preop(x, seg):
    """V_TRIG_PREOP_F64: bits of 2/pi (b_1200 = first fraction bit) from position shift, 53 wide,
    as a double scaled by 2^(-53-shift) (+128 when exponent(x) >= 1968); shift = 53*seg[4:0]
    plus max(exponent(x) - 1077, 0)."""
    global _TWO_OVER_PI
    if _TWO_OVER_PI is None:
        _TWO_OVER_PI = two_over_pi_bits()
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


def fnan(r, *srcs):
    """IR fnan: r, except a NaN r equal to a NaN source with its quiet bit set: that source (the
    first such) as it is -- MODE.IEEE clear, where no op quiets a signaling NaN."""
    nan = r != r
    if not nan.any():
        return r
    t = _dt(r)
    ut, q = UINT[t], UINT[t](_QUIET[t])
    rb = np.asarray(r).view(ut)
    out = rb.copy()
    done = ~nan
    for s in srcs:
        sv = np.broadcast_to(np.asarray(s, t), rb.shape)
        sb = sv.view(ut)
        hit = ~done & (sv != sv) & ((sb | q) == rb)  # (an infinity s: not a NaN)
        out = np.where(hit, sb, out)
        done |= hit
    return out.view(t)[()] if out.ndim == 0 else out.view(t)


def nan_first(r, a):
    """r, except where r and a are NaNs: a quieted (the first NaN operand; NumPy's float16
    arithmetic may return the second)."""
    nan = r != r
    if not nan.any():
        return r
    t = _dt(r)
    ut = UINT[t]
    aq = (np.asarray(a, t).view(ut) | ut(_QUIET[t])).view(t)
    return np.where(nan & (a != a), aq, r).astype(t)


def fract(x):
    t = _dt(x)
    r = x - np.floor(x)
    one_minus = np.nextafter(t(1), t(0))
    # inf: S0 + -floor(S0) = inf - inf, the default NaN (a NaN x stays x, quieted)
    return np.where(np.isinf(x), DNAN[t], np.minimum(r, one_minus)).astype(t)


def rcp(x):
    t = _dt(x)
    return (np.float64(1.0) / np.asarray(x, np.float64)).astype(t) if t is not np.float64 else 1.0 / x


def invalid_dnan(r, x):
    """r, except a NaN r from a non-NaN x (an invalid operation: log2 of a negative, sqrt of one,
    sin of an infinity) as the default NaN.  NumPy gives such a NaN whatever sign its
    implementation makes -- 2.4's float64 log2 +NaN, x86 libm's and its own sqrt -NaN -- and the
    hardware's (the prelude's wl_nf1: wl_dnan) is one value."""
    nan = r != r
    if not nan.any():
        return r
    t = _dt(r)
    out = np.where(nan & (np.asarray(x) == np.asarray(x)), DNAN[t], r).astype(t)
    return out[()] if out.ndim == 0 else out


def rsq(x):
    t = _dt(x)
    if t is np.float64:
        return invalid_dnan(1.0 / np.sqrt(x), x)
    return invalid_dnan((1.0 / np.sqrt(np.asarray(x, np.float64))).astype(t), x)


def exp2(x):
    t = _dt(x)
    return np.exp2(np.asarray(x, np.float64)).astype(t)


def log2(x):
    t = _dt(x)
    return invalid_dnan(np.log2(np.asarray(x, np.float64)).astype(t), x)


def sin(x):
    t = _dt(x)
    return invalid_dnan(np.sin(np.asarray(x, np.float64) * (2 * np.pi)).astype(t), x)


def cos(x):
    t = _dt(x)
    return invalid_dnan(np.cos(np.asarray(x, np.float64) * (2 * np.pi)).astype(t), x)


def sqrt(x):
    return invalid_dnan(np.sqrt(x), x)


def ldexp(x, e):
    t = _dt(x)
    e = np.clip(np.asarray(e, np.int64), -100000, 100000).astype(np.int32)
    return np.ldexp(x, e).astype(t)


def frexp_mant(x):
    t = _dt(x)
    m, _ = np.frexp(x)
    # inf: x; NaN: x quieted (an arithmetic op: LLVM PR 208733's hardware classes)
    nq = x + x
    return np.where(np.isfinite(x), m, np.where(x != x, nq, x)).astype(t)


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
    classes = [
        snan,
        qnan,
        inf & neg,
        norm & neg,
        den & neg,
        zero & neg,
        zero & ~neg,
        den & ~neg,
        norm & ~neg,
        inf & ~neg,
    ]
    m = np.asarray(mask, np.uint32)
    r = np.zeros(np.broadcast(x, m).shape, np.uint32)
    for k, c in enumerate(classes):
        r |= np.where(c & (((m >> np.uint32(k)) & np.uint32(1)) != 0), np.uint32(1), np.uint32(0))
    return r


def cvt(x, frm, to):
    """Numeric conversion (IR 'cvt')."""
    tt = DT[to]
    if frm in ("f16", "f32", "f64") and to not in ("f16", "f32", "f64"):
        x = np.asarray(x)
        if x.ndim and x.dtype.kind == "f":
            if x.dtype.type is np.float16:  # 65536 inputs: a table of _cvt_f2i's results
                lut = _F16_CVT.get(tt)
                if lut is None:
                    with np.errstate(invalid="ignore"):
                        lut = _cvt_f2i(np.arange(1 << 16, dtype=np.uint16).view(np.float16), frm, to)
                    _F16_CVT[tt] = lut
                return np.take(lut, x.view(np.uint16), mode="clip")
            if x.dtype.type is np.float64 and to == "u32":  # _cvt_f2i's steps, clamp if needed
                # (NaN -> 0 by the compare: np.fmax keeps a signaling NaN in its scalar loop)
                y = np.where(x > 0.0, x, 0.0)
                if not y.max() <= 4294967295.0:
                    np.minimum(y, 4294967295.0, out=y)
                return y.astype(np.uint32)
            # no NaN and all in (min - 1, max + 1) after clamping to bounds the float type holds
            # exactly: the C cast then truncates like _cvt_f2i, in range
            info = np.iinfo(tt)
            lo, hi = float(x.min()), float(x.max())  # NaN: both NaN, tests fail
            t = x.dtype.type
            y = x
            if (
                not (lo >= 0 if info.min == 0 else lo > info.min - 1)
                and lo == lo
                and float(t(info.min)) == info.min
            ):
                y = np.maximum(y, t(info.min), out=_scratch("cvt", x.shape, t))
                lo = float(info.min)
            if not hi < info.max + 1 and hi == hi and float(t(info.max)) == info.max:
                y = np.minimum(y, t(info.max), out=_scratch("cvt", x.shape, t))
                hi = float(info.max)
            if (lo >= 0 if info.min == 0 else lo > info.min - 1) and hi < info.max + 1:
                return y.astype(tt)
        return _cvt_f2i(x, frm, to)
    if frm == "b1":
        return np.asarray(x).astype(tt)
    return np.asarray(x).astype(tt)


_F16_CVT: dict = {}


def _cvt_f2i(x, frm, to):
    """Float -> integer: truncate, saturate, NaN -> 0 (v_cvt_u32_f32 & co)."""
    tt = DT[to]
    if frm in ("f32", "f64") and to == "u32":
        # fmax maps NaN and negatives to 0, fmin saturates; the cast truncates toward zero
        y = np.fmax(np.asarray(x, np.float64), 0.0)
        return np.fmin(y, 4294967295.0, out=y if y.ndim else None).astype(np.uint32)
    info = np.iinfo(tt)
    y = np.trunc(np.asarray(x, np.float64))
    y = np.where(np.isnan(y), 0.0, y)
    # a 64-bit maximum is no f64: clip gives 2**63 / 2**64, which the cast does not saturate
    # (it gave 0 or the minimum for +inf): those are the maximum
    top = y >= float(info.max)
    y = np.where(top, 0.0, np.clip(y, info.min, info.max)).astype(tt)
    return np.where(top, tt(info.max), y)
