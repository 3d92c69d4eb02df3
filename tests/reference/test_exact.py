"""fma_f32 against exact rational arithmetic (and the double rounding it avoids)."""

from fractions import Fraction

import numpy as np

from .exact import fma_f32


def _exact(a, b, c):
    """a*b+c in Fractions, rounded to float32 by comparing with the two float32 neighbours."""
    x = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if x == 0:  # IEEE: -0 only when the product and c are both -0, else +0 (nearest even)
        neg = np.signbit(a) != np.signbit(b) and a * b == 0 and c == 0 and np.signbit(c)
        return np.float32(-0.0 if neg else 0.0)
    f = np.float32(float(x))  # within one float32 step of x
    best = None
    for y in (np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))):
        if not np.isfinite(y):
            continue
        d = abs(Fraction(float(y)) - x)
        key = (d, int(np.array(y).view(np.uint32)) & 1)  # ties to the even significand
        if best is None or key < best[0]:
            best = (key, y)
    return best[1]


def test_fma_f32_is_correctly_rounded():
    rng = np.random.default_rng(7)
    n = 3000
    a = rng.uniform(-2, 2, n).astype(np.float32)
    b = rng.uniform(-2, 2, n).astype(np.float32)
    # c near -a*b (cancellation) and tiny c (the sticky bits decide): where double rounding bites
    c = (-(a.astype(np.float64) * b) * (1 + rng.uniform(-1e-7, 1e-7, n))).astype(np.float32)
    c[::3] = rng.uniform(-2, 2, n)[::3].astype(np.float32) * np.float32(2.0**-30)
    c[1::3] = rng.uniform(-1, 1, n)[1::3].astype(np.float32)
    # exact ties of the float32 rounding: a*b = 1 + 2^-24 (halfway) plus a c below 2^-53
    a[:4] = np.float32(1 + 2**-12)
    b[:4] = np.float32(1 + 2**-12)
    c[:4] = [2.0**-70, -(2.0**-70), 0.0, 1e-45]
    got = fma_f32(a, b, c)
    want = np.array([_exact(x, y, z) for x, y, z in zip(a, b, c)], np.float32)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()
    # the plain float64 route rounds twice and differs on some of them: the test can tell
    twice = (a.astype(np.float64) * b + c).astype(np.float32)
    assert (twice.view(np.uint32) != want.view(np.uint32)).any()


def test_fma_f32_subnormals_and_specials():
    a = np.array([1e-20, 1e-45, np.inf, np.nan, 3e38, 0.0, -0.0], np.float32)
    b = np.array([1e-20, 0.5, 1.0, 1.0, 10.0, -1.0, 0.0], np.float32)
    c = np.array([1e-45, 0.0, -np.inf, 1.0, 0.0, 0.0, -0.0], np.float32)
    got = fma_f32(a, b, c)
    for g, x, y, z in zip(got, a, b, c):
        if np.isnan(x) or (np.isinf(x) and np.isinf(z)):
            assert np.isnan(g)
        elif np.isinf(x * np.float64(y)) or abs(float(x) * float(y)) > 3.5e38:
            assert np.isinf(g)
        else:
            assert np.array(g).view(np.uint32) == np.array(_exact(x, y, z)).view(np.uint32)
