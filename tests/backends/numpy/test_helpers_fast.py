"""The NumPy helpers' fast paths (ir/numerics.py, backends/numpy/helpers.py) against independent
exact references: Python integers and fractions, IEEE round-half-even written out here, NaN rules
and zero signs from docs/float-semantics.md.  Operands: hypothesis draws (raw bit patterns
too) plus tables aimed at each fast path's escape conditions: f32/f16 rounding midpoints hit
exactly and missed by a hair (an f64 sum that double-rounds wrongly), subnormal results,
overflow, signed zeros, inf/NaN."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wavelift.backends.numpy import helpers as H
from wavelift.ir import numerics


@pytest.fixture(autouse=True)
def _quiet():
    with np.errstate(all="ignore"):  # as the runtime runs blocks
        yield


f16, f32, f64 = np.float16, np.float32, np.float64
u16, u32, u64 = np.uint16, np.uint32, np.uint64
# type -> (exponent bits, mantissa bits, unsigned bits type)
FMT = {f16: (5, 10, u16), f32: (8, 23, u32), f64: (11, 52, u64)}


# ------------------------------------------------------------------------------ references
def round_bits(q, neg, t):
    """Bits of the t value nearest the rational q (ties to even); q == 0 gives -0 when neg."""
    eb, mb, _ = FMT[t]
    bias = (1 << (eb - 1)) - 1
    sign = 1 << (eb + mb)
    if q == 0:
        return sign if neg else 0
    s = sign if q < 0 else 0
    m = abs(q)
    e = m.numerator.bit_length() - m.denominator.bit_length()
    if Fraction(2) ** e > m:
        e -= 1
    e = max(e, 1 - bias)
    n = m / Fraction(2) ** (e - mb)
    n_int = n.numerator // n.denominator
    rem = n - n_int
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n_int & 1):
        n_int += 1
    if n_int >> (mb + 1):  # rounded up to the next binade
        n_int >>= 1
        e += 1
    if e > bias:
        return s | (((1 << eb) - 1) << mb)  # inf
    if n_int < (1 << mb):  # subnormal (or zero after underflow)
        return s | n_int
    return s | ((e + bias) << mb) | (n_int - (1 << mb))


def bits_of(x):
    x = np.asarray(x)
    return int(x.view(FMT[x.dtype.type][2]))


def nan_bits(x, t):
    """Bits in t of NaN x quieted: sign and the fraction's top bits kept."""
    eb0, mb0, _ = FMT[np.asarray(x).dtype.type]
    eb, mb, _ = FMT[t]
    v = bits_of(x) | (1 << (mb0 - 1))
    frac = v & ((1 << mb0) - 1)
    frac = frac << (mb - mb0) if mb >= mb0 else frac >> (mb0 - mb)
    return ((v >> (eb0 + mb0)) << (eb + mb)) | (((1 << eb) - 1) << mb) | frac


def fma_ref(a, b, c, t):
    """Bits of a*b+c rounded once to t; NaN results by docs/float-semantics.md "NaN results":
    the first NaN of a, b quieted, an invalid product the default NaN (sign set) even with a NaN
    c, then a NaN c quieted; inf - inf the default NaN."""
    eb, mb, _ = FMT[t]
    dnan = (((1 << (eb + 1)) - 1) << mb) | (1 << (mb - 1))
    for x in (a, b):
        if np.isnan(x):
            return nan_bits(x, t)
    fa, fb = float(a), float(b)
    if (fa == 0 and math.isinf(fb)) or (math.isinf(fa) and fb == 0):
        return dnan
    if np.isnan(c):
        return nan_bits(c, t)
    a, b, c = fa, fb, float(c)
    if not all(math.isfinite(v) for v in (a, b, c)):
        # inf arithmetic is exact, and a finite a*b is finite however large (IEEE fma: as if
        # with unbounded range), so a finite product plus an infinite c is c
        r = c if math.isfinite(a) and math.isfinite(b) else a * b + c
        if math.isnan(r):
            return dnan
        return (((1 << eb) - 1) << mb) | ((1 << (eb + mb)) if r < 0 else 0)
    q = Fraction(a) * Fraction(b) + Fraction(c)
    if q == 0:
        prod_zero = a == 0 or b == 0
        neg = (
            prod_zero
            and c == 0
            and (math.copysign(1, a) * math.copysign(1, b) < 0)
            and math.copysign(1, c) < 0
        )
        return round_bits(q, neg, t)
    return round_bits(q, False, t)


def check_fma(a, b, c, t=None, fast=False):
    """H.fma(a, b, c[, t]) lane by lane against fma_ref; fast=True calls the fast path
    directly and requires that it answers (no NaN results)."""
    to = t
    t = a.dtype.type if t is None else t
    if fast:
        r = numerics._fma_narrow(a, b, c, t)
        assert r is not None, "fast path declined"
    else:
        r = H.fma(a, b, c, to)
    a2, b2, c2 = np.broadcast_arrays(a, b, c)
    assert r.shape == a2.shape and r.dtype == t
    for idx in np.ndindex(r.shape):
        want = fma_ref(a2[idx], b2[idx], c2[idx], t)
        got = bits_of(r[idx])
        assert got == want, (a2[idx], b2[idx], c2[idx], hex(got), hex(want))


# ------------------------------------------------------------------------------- strategies
def fbits(t):
    nb = 8 * np.dtype(t).itemsize
    return st.integers(0, (1 << nb) - 1).map(lambda v: np.array(v, FMT[t][2]).view(t)[()])


def fvals(t):
    w = {f16: 16, f32: 32, f64: 64}[t]
    return st.one_of(st.floats(width=w).map(t), fbits(t))


def finite(t):
    w = {f16: 16, f32: 32, f64: 64}[t]
    return st.floats(width=w, allow_nan=False, allow_infinity=False).map(t)


def short(t):
    """Few-bit values: sums land on rounding midpoints and exact zeros often."""
    return st.builds(
        lambda m, e: t(m * 2.0**e),
        st.integers(-(1 << 13), 1 << 13),
        st.integers(-30, 30) if t is f32 else st.integers(-8, 4),
    )


def lanes(elem, n=32):
    return st.lists(elem, min_size=n, max_size=n)


def arr(vals, t, shape):
    return np.array(vals, t).reshape(shape)


# --------------------------------------------------------------------------------- fma: f32
# u*v == 2^47 + k with u, v < 2^24: a product that is an f32 midpoint plus k * 2^-47 of it
PRODUCTS = [
    (-35, 15002047, 9381219),
    (-7, 11230937, 12531233),
    (-1, 13264529, 10610063),
    (7, 9010893, 15618595),
    (15, 14314471, 9831833),
    (19, 8986713, 15660619),
]


def midpoint_cases():
    """(a, b, c) whose f64 sum is an f32 midpoint: exact (ties) and inexact (the naive
    RN32(RN64(a*b + c)) is wrong), in the normal and the subnormal range."""
    out = []
    # 2^24 + 1 = 97 * 257 * 673: a tie, and a tie pushed by a tiny c either way
    for a, b in ((24929.0, 673.0), (97.0, 172961.0), (65281.0, 257.0)):
        for c in (0.0, 2.0**-40, -(2.0**-40), 2.0**-100, 1.0, -1.0, 3.0):
            for sa, sb in ((1, 1), (-1, 1), (-1, -1)):
                out.append((sa * a, sb * b, c))
                out.append((sa * a * 2.0**-100, sb * b * 2.0**-20, c * 2.0**-120))
    for _k, u, v in PRODUCTS:
        # p = 2^(47+E) (1 + k 2^-47) is half an ulp of c = K 2^(48+E) plus k 2^E, which is
        # below half an f64 ulp of the sum when |K| is large: s is the midpoint, inexactly
        # (E = -197: c and the sum are f32 subnormals)
        for E, K in (
            (-60, (1 << 22) + 3),
            (-60, -(1 << 23) + 5),
            (-197, (1 << 22) + 33),
            (-197, -(1 << 23) + 1),
            (-197, (1 << 23) - 1),
            (-197, 0),
            (-197, 1 << 14),
            (-100, 12345),
            (50, (3 << 21) + 1),
            (50, -(1 << 22) - 777),
        ):
            for sign in (1, -1):
                a = f32(u * 2.0 ** (E // 2))
                b = f32(sign * v * 2.0 ** (E - E // 2))
                c = f32(K * 2.0 ** (48 + E))
                out.append((a, b, c))
                out.append((b, a, -c))
    return out


def special_cases():
    M = float(np.finfo(f32).max)
    tiny = 2.0**-149
    out = [
        # overflow: FLT_MAX + half an ulp is a tie that goes to inf; a hair less stays finite
        (M, 1.0, 2.0**103),
        (M, 1.0, 2.0**102),
        (M, -1.0, -(2.0**103)),
        (2.0**64, 2.0**64, 1.0),
        (1.5 * 2.0**64, 1.5 * 2.0**63, -(2.0**100)),
        (M, 2.0, -M),
        (M, 1.0 + 2.0**-23, 0.0),
        # subnormal results, underflow to signed zero, the smallest tie (2^-150)
        (2.0**-75, 2.0**-75, 0.0),
        (-(2.0**-75), 2.0**-75, 0.0),
        (2.0**-75, 2.0**-75, -0.0),
        (2.0**-75, 2.0**-75, tiny),
        (2.0**-75, 3 * 2.0**-75, 0.0),
        (2.0**-75, 3 * 2.0**-75, -tiny),
        (2.0**-80, 2.0**-80, 0.0),
        (-(2.0**-80), 2.0**-80, -0.0),
        (tiny, 0.5, 0.0),
        (2.0**-126, 0.5, 0.0),
        (2.0**-126, 1 - 2.0**-24, 0.0),
        (1.5, 2.0**-127, 2.0**-126),
        (2.0**-63, 2.0**-63, -(2.0**-126)),
        (2.0**-63, -(2.0**-63), 2.0**-126),
        # signed zeros: exact cancellation is +0; zero products keep IEEE signs
        (0.0, 5.0, -0.0),
        (-0.0, 5.0, -0.0),
        (-0.0, -5.0, -0.0),
        (0.0, -5.0, 0.0),
        (-0.0, 5.0, 0.0),
        (3.0, 5.0, -15.0),
        (-3.0, 5.0, 15.0),
        (1.5, 1.5, -2.25),
        (0.0, 0.0, -0.0),
        (-0.0, 0.0, -0.0),
        (1e-30, 1e-30, -0.0),
        (-1e-30, 1e-30, -0.0),
        (1e-30, 1e-30, 0.0),
        # infinities
        (np.inf, 2.0, 1.0),
        (-np.inf, 2.0, 1.0),
        (2.0, 3.0, -np.inf),
        (M, M, -np.inf),
        (M, M, 0.0),
    ]
    return [tuple(f32(v) for v in x) for x in out]


def nan_cases():
    q = np.array([0x7FC00001, 0xFFC12345, 0x7F800001, 0xFF812345], u32).view(f32)
    out = [
        (q[0], 2.0, 3.0),
        (2.0, q[1], 3.0),
        (2.0, 3.0, q[2]),
        (q[3], 0.0, 1.0),
        (np.inf, 0.0, 1.0),
        (np.inf, 1.0, -np.inf),
        (q[0], q[1], 1.0),
        (q[0], 1.0, q[1]),
        (1.0, q[2], q[3]),
        (0.0, np.inf, q[0]),
    ]
    return [tuple(f32(v) for v in x) for x in out]


def batch(cases, t=f32):
    a, b, c = (np.array([x[i] for x in cases], t).reshape(-1, 1) for i in range(3))
    return a, b, c


def test_fma_f32_midpoints_fast_path():
    a, b, c = batch(midpoint_cases())
    check_fma(a, b, c, fast=True)
    check_fma(a, b, c)
    # the same lanes spread over an (n, 32) batch with a per-row c
    A = np.repeat(a, 32, axis=1)
    B = np.repeat(b, 32, axis=1) * np.array([1.0, -1.0] * 16, f32)
    check_fma(A, B, c, fast=True)


def test_fma_f32_midpoints_catch_naive_double_rounding():
    """The table does contain lanes where RN32(RN64(a*b + c)) is wrong (so the checks above
    would notice a fast path that skipped its midpoint correction)."""
    a, b, c = batch(midpoint_cases())
    naive = (a.astype(f64) * b.astype(f64) + c.astype(f64)).astype(f32)
    wrong = sum(bits_of(naive[i, 0]) != fma_ref(a[i, 0], b[i, 0], c[i, 0], f32) for i in range(len(a)))
    assert wrong >= 20


def test_fma_f32_specials():
    a, b, c = batch(special_cases())
    check_fma(a, b, c, fast=True)
    check_fma(a, b, c)


def test_fma_f32_nan_operands():
    a, b, c = batch(nan_cases() + special_cases())
    check_fma(a, b, c)
    assert numerics._fma_narrow(a, b, c, f32) is None  # NaN results leave the fast path


def test_fma_f32_realistic_batch():
    """integer * float + per-wave bias, the shape generated kernels have."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 256, (64, 32)).astype(f32)
    b = rng.standard_normal((64, 32)).astype(f32)
    c = rng.standard_normal((64, 1)).astype(f32)
    check_fma(a, b, c, fast=True)
    a[5] = 0
    c[7] = 0
    c[9] = -0.0
    b[11, :4] = -0.0
    check_fma(a, b, c, fast=True)
    check_fma(a, b, np.zeros((64, 1), f32), fast=True)
    check_fma(a, b, f32(0.5) * np.ones((), f32), fast=True)


@settings(max_examples=60, deadline=None)
@given(lanes(fvals(f32), 16), lanes(fvals(f32), 16), lanes(fvals(f32), 16), st.booleans())
def test_fma_f32_hypothesis(a, b, c, row_c):
    a, b = arr(a, f32, (2, 8)), arr(b, f32, (2, 8))
    c = arr(c[:2], f32, (2, 1)) if row_c else arr(c, f32, (2, 8))
    check_fma(a, b, c)


@settings(max_examples=60, deadline=None)
@given(*[lanes(st.one_of(short(f32), finite(f32)), 16)] * 3)
def test_fma_f32_hypothesis_fast(a, b, c):
    a, b, c = (arr(v, f32, (2, 8)) for v in (a, b, c))
    check_fma(a, b, c, fast=True)
    check_fma(b, a, -c, fast=True)


# --------------------------------------------------------------------------- fma: f16 results
def test_fma_to_f16_midpoints():
    """fma_to: f32 operands, one rounding to f16.  2049 = 3 * 683 is an f16 midpoint."""
    cases = []
    for a, b in ((3.0, 683.0), (683.0 * 2.0**-20, 3.0 * 2.0**-4), (-3.0, 683.0)):
        for c in (0.0, 2.0**-60, -(2.0**-60), 2.0**-30, 1.0, -(2.0**-100)):
            cases.append((a, b, c))
    for _k, u, v in PRODUCTS:
        # as in midpoint_cases, c = K 2^(48+E) with an f16 ulp 2^(48+E): E = -50 normal,
        # E = -72 subnormal f16 results
        for E, K in ((-50, 2047), (-50, -1500), (-50, 1025), (-72, 1001), (-72, -1023), (-72, 3)):
            for sign in (1, -1):
                cases.append((u * 2.0 ** (E // 2), sign * v * 2.0 ** (E - E // 2), K * 2.0 ** (48 + E)))
    cases += [
        (65504.0, 1.0, 16.0),
        (65504.0, 1.0, 15.999),
        (2.0**-12, 2.0**-13, 0.0),
        (2.0**-12, 2.0**-12, -(2.0**-60)),
        (2.0**-13, 3 * 2.0**-12, 2.0**-50),
        (0.0, -1.0, -0.0),
        (3.0, 5.0, -15.0),
        (1e-20, 1e-20, -0.0),
    ]
    a, b, c = batch(cases)
    check_fma(a, b, c, f16, fast=True)
    check_fma(a, b, c, f16)
    naive = (a.astype(f64) * b.astype(f64) + c.astype(f64)).astype(f16)
    assert sum(bits_of(naive[i, 0]) != fma_ref(a[i, 0], b[i, 0], c[i, 0], f16) for i in range(len(a))) >= 5


@settings(max_examples=40, deadline=None)
@given(lanes(fvals(f16), 16), lanes(fvals(f16), 16), lanes(fvals(f16), 16), st.booleans())
def test_fma_f16_hypothesis(a, b, c, row_c):
    a, b = arr(a, f16, (2, 8)), arr(b, f16, (2, 8))
    c = arr(c[:2], f16, (2, 1)) if row_c else arr(c, f16, (2, 8))
    check_fma(a, b, c)
    check_fma(a, b, c, f32)


@settings(max_examples=40, deadline=None)
@given(lanes(finite(f32), 16), lanes(short(f32), 16), lanes(finite(f32), 16))
def test_fma_to_f16_hypothesis(a, b, c):
    a, b, c = (arr(v, f32, (2, 8)) for v in (a, b, c))
    check_fma(a * f32(2.0**-100), b, c * f32(2.0**-100), f16)
    check_fma(a, b, c, f16)


# ---------------------------------------------------------------------------------- fma: f64
@settings(max_examples=60, deadline=None)
@given(lanes(fvals(f64), 8), lanes(fvals(f64), 8), lanes(fvals(f64), 8))
def test_fma_f64_hypothesis(a, b, c):
    a, b, c = (arr(v, f64, (1, 8)) for v in (a, b, c))
    check_fma(a, b, c)


def test_fma_f64_cases():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((16, 8))
    b = rng.standard_normal((16, 8))
    c = rng.standard_normal((16, 1))
    check_fma(a, b, c)
    x = 1.0 + 2.0**-52
    cases = [
        (x, x, -1.0),
        (x, x, -(1 + 2.0**-51)),
        (1e300, 1e300, -np.inf),
        (1e-300, 1e-300, 0.0),
        (1e-160, 1e-160, -1e-320),
        (0.0, 1.0, -0.0),
        (-0.0, 1.0, -0.0),
        (3.0, 5.0, -15.0),
        (2.0**1000, 2.0**23, -(2.0**1023)),
        (1.5, 2.0**-1074, 0.0),
        (np.inf, 0.0, 1.0),
        # a product past f64's range plus an infinity of the other sign: that infinity
        (-1e300, 1e300, np.inf),
        (1e300, -1e300, np.inf),
        (1e300, 1e300, np.inf),
        (np.inf, 2.0, -np.inf),
        (-np.inf, 0.5, np.inf),
    ]
    a, b, c = batch(cases, f64)
    check_fma(a, b, c)


# --------------------------------------------------------------------------------------- cvt
INT = {
    "u32": (0, 2**32 - 1, u32),
    "i32": (-(2**31), 2**31 - 1, np.int32),
    "u16": (0, 2**16 - 1, u16),
    "i16": (-(2**15), 2**15 - 1, np.int16),
    "u8": (0, 255, np.uint8),
    "i8": (-128, 127, np.int8),
}
CVT_EDGES = [
    0.0,
    -0.0,
    0.5,
    -0.5,
    -0.99,
    1.0,
    -1.0,
    1e-45,
    -1e-45,
    255.5,
    256.0,
    -128.5,
    -129.0,
    32767.5,
    32768.0,
    -32768.9,
    -32769.0,
    65535.9,
    65536.0,
    2147483520.0,
    2147483648.0,
    -2147483648.0,
    -2147483904.0,
    4294967040.0,
    4294967295.9,
    4294967296.0,
    1e20,
    -1e20,
    np.inf,
    -np.inf,
    np.nan,
    1e-310,
]


def cvt_ref(x, to):
    lo, hi, _ = INT[to]
    x = float(x)
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    return min(max(int(x), lo), hi)  # int() truncates toward zero


def check_cvt(x, frm):
    for to, (_lo, _hi, it) in INT.items():
        r = H.cvt(x, frm, to)
        assert r.dtype == it and r.shape == x.shape
        for idx in np.ndindex(x.shape):
            assert int(r[idx]) == cvt_ref(x[idx], to), (frm, to, x[idx], r[idx])


@pytest.mark.parametrize("t", [f16, f32, f64])
def test_cvt_edges(t):
    with np.errstate(over="ignore"):
        x = np.array(CVT_EDGES, t).reshape(1, -1)
    check_cvt(x, {f16: "f16", f32: "f32", f64: "f64"}[t])


@pytest.mark.parametrize("t", [f16, f32, f64])
def test_cvt_in_range_fast(t):
    rng = np.random.default_rng(5)
    x = (rng.random((8, 32)) * 250).astype(t)
    x[0, 0] = -0.0
    x[0, 1] = 1e-40 if t is not f16 else 1e-7
    check_cvt(x, {f16: "f16", f32: "f32", f64: "f64"}[t])
    check_cvt(-x, {f16: "f16", f32: "f32", f64: "f64"}[t])


@pytest.mark.parametrize("to", list(INT))
@pytest.mark.parametrize("t", [f16, f32, f64])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_cvt_near_bounds(t, to, data):
    """Whole arrays within a couple of units of the target range (what the fast path's
    min/max test looks at), both inside and just outside it."""
    lo, hi, _ = INT[to]
    big = float(np.finfo(t).max)

    def fl(x, y):  # doubles, rounded to t below
        x, y = max(x, -big), min(y, big)
        return st.floats(x, y) if x <= y else st.just(math.copysign(big, y))

    near = st.one_of(
        fl(lo - 2, lo + 2),
        fl(hi - 2, hi + 2),
        fl(lo - 2, hi + 2),
        st.sampled_from([lo - 1, hi + 1, -0.0, 0.5]),
    )
    vals = data.draw(st.lists(near, min_size=8, max_size=8))
    with np.errstate(over="ignore"):
        x = np.array(vals, f64).astype(t).reshape(1, 8)
    r = H.cvt(x, {f16: "f16", f32: "f32", f64: "f64"}[t], to)
    for idx in np.ndindex(x.shape):
        assert int(r[idx]) == cvt_ref(x[idx], to), (to, x[idx], r[idx])


@settings(max_examples=40, deadline=None)
@given(lanes(fvals(f32), 16), lanes(fvals(f16), 16), lanes(fvals(f64), 8))
def test_cvt_hypothesis(x32, x16, x64):
    check_cvt(arr(x32, f32, (2, 8)), "f32")
    check_cvt(arr(x16, f16, (2, 8)), "f16")
    check_cvt(arr(x64, f64, (1, 8)), "f64")
    y = np.abs(arr(x32, f32, (2, 8)))  # in range for u32 when finite
    check_cvt(np.where(y < 4e9, y, f32(7)), "f32")


# ------------------------------------------------------------------------------------- flush
def flush_ref(x):
    t = np.asarray(x).dtype.type
    eb, mb, _ = FMT[t]
    v = bits_of(x)
    if (v >> mb) & ((1 << eb) - 1) == 0:
        return v & (1 << (eb + mb))
    return v


@pytest.mark.parametrize("t", [f16, f32, f64])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_flush(t, data):
    eb, mb, ut = FMT[t]
    edge = np.array([1, (1 << mb) - 1, 1 << mb, (1 << mb) + 1, 1 << (eb + mb)], ut)  # denormal/normal edges
    edge = np.concatenate([edge, edge | ut(1 << (eb + mb))]).view(t)
    vals = data.draw(lanes(st.one_of(fvals(t), st.sampled_from(list(edge)))))
    x = arr(vals, t, (2, 16))
    r = H.flush(x)
    assert r.dtype == t and r.shape == x.shape and not np.shares_memory(r, x)
    for idx in np.ndindex(x.shape):
        assert bits_of(r[idx]) == flush_ref(x[idx])


# --------------------------------------------------------------------------------- fmin/fmax
def minmax_ref(a, b, is_min):
    """v_min/v_max: one NaN -> the other operand, two -> b; -0 < +0; bits of the pick."""
    na, nb = np.isnan(a), np.isnan(b)
    if na:
        return bits_of(b)
    if nb:
        return bits_of(a)
    ka = (float(a), 0 if np.signbit(a) else 1)
    kb = (float(b), 0 if np.signbit(b) else 1)
    if ka == kb:
        return bits_of(b)
    pick_a = ka < kb if is_min else ka > kb
    return bits_of(a if pick_a else b)


@pytest.mark.parametrize("t", [f16, f32, f64])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_fmin_fmax(t, data):
    el = st.one_of(fvals(t), st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, np.nan]).map(t))
    a = arr(data.draw(lanes(el)), t, (2, 16))
    b = arr(data.draw(lanes(el)), t, (2, 16))
    if data.draw(st.booleans()):
        b = b[:, :1]
    if data.draw(st.booleans()):  # no zero or NaN: the fast path
        a = np.where((a == 0) | np.isnan(a), t(1.5), a)
        b = np.where((b == 0) | np.isnan(b), t(-2.5), b)
    for f, is_min in ((H.fmin, True), (H.fmax, False)):
        r = f(a, b)
        a2, b2 = np.broadcast_arrays(a, b)
        assert r.dtype == t and r.shape == a2.shape
        for idx in np.ndindex(r.shape):
            assert bits_of(r[idx]) == minmax_ref(a2[idx], b2[idx], is_min), (a2[idx], b2[idx])


# ------------------------------------------------------------------------------- lane masks
@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=9))
def test_exec_mask(words):
    lo = np.array([w & 0xFFFFFFFF for w in words], u32).reshape(-1, 1)
    hi = np.array([w >> 32 for w in words], u32).reshape(-1, 1)
    for lanes, bits in ((32, np.arange(32, dtype=u32)[None, :]), (64, np.arange(64, dtype=u64)[None, :])):
        r = H.exec_mask(lo, hi, lanes, bits)
        assert r.dtype == np.bool_ and r.shape == (len(words), lanes)
        for i, w in enumerate(words):
            assert [bool(v) for v in r[i]] == [bool((w >> k) & 1) for k in range(lanes)]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.data())
def test_ballot(n, data):
    for lanes in (32, 64):
        b = np.array(data.draw(st.lists(st.booleans(), min_size=n * lanes, max_size=n * lanes))).reshape(
            n, lanes
        )
        col = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))).reshape(n, 1)
        for x in (b, col, b[:, ::-1]):
            r = H.ballot(x, n, lanes)
            full = np.broadcast_to(x, (n, lanes))
            assert r.dtype == u64 and r.shape == (n, 1)
            for i in range(n):
                assert int(r[i, 0]) == sum(1 << k for k in range(lanes) if full[i, k])


@pytest.mark.parametrize("n", [1, 3, 8, 33])
def test_signaling_nan_min_max_cvt_whatever_the_length(n):
    """f32 fmin/fmax with one signaling-NaN operand give the other operand, and f64 -> u32 of a
    NaN gives 0, in every lane: NumPy's SIMD loops did so but its scalar loops (short arrays,
    the tail past the SIMD width) returned the NaN / 0xffffffff."""
    snan32 = np.full((1, n), 0x7F800001, u32).view(f32)
    x = np.full((1, n), 21.0, f32)
    for fn in (H.fmin, H.fmax):
        assert (fn(x, snan32) == 21.0).all() and (fn(snan32, x) == 21.0).all()
        assert (fn(snan32, snan32).view(u32) == 0x7F800001).all()  # two NaNs: b
    snan64 = np.full((1, n), 0x7FF0000000000001, u64).view(f64)
    assert (H.cvt(snan64, "f64", "u32") == 0).all()
    assert (H.cvt(np.full((1, n), 5e9), "f64", "u32") == 0xFFFFFFFF).all()


@pytest.mark.parametrize("t", [f16, f32, f64])
@pytest.mark.parametrize("name", ["log2", "sqrt", "rsq", "sin", "cos"])
def test_invalid_operations_give_the_default_nan_whatever_numpy_gives(t, name):
    """docs/float-semantics.md: sqrt/rsq/log of a negative and sin/cos of an infinity are invalid
    operations, whose result is the default NaN (sign set) -- not whatever sign the NumPy in use
    gives its NaN (2.4's float64 log2 of a negative: +NaN); a NaN operand stays itself, quieted;
    one result each way, in a long array (NumPy's SIMD loops) and alone (a 0-d value)."""
    eb, mb, u = FMT[t]
    dnan = (((1 << (eb + 1)) - 1) << mb) | (1 << (mb - 1))
    qnan = (((1 << eb) - 1) << mb) | (1 << (mb - 1)) | 5
    bad = [t(-np.inf)] if name in ("sin", "cos") else [t(-1.5), t(-np.inf), t(-3.0)]
    fn = getattr(numerics, name)
    x = np.array((bad + [np.array(qnan, u).view(t)]) * 40, t)
    got = np.asarray(fn(x), t).view(u)
    for k, v in enumerate(bad):
        assert int(got[k]) == dnan, (name, v, hex(int(got[k])))
        assert int(np.asarray(fn(v), t).view(u)) == dnan
    assert int(got[len(bad)]) == qnan, hex(int(got[len(bad)]))
    assert np.array_equal(got, np.tile(got[: len(bad) + 1], 40))
