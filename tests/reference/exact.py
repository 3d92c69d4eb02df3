"""Exact float32 fused multiply-add for NumPy references (V_FMA_F32: a*b+c rounded once).

Why it is exact: a float32 has a 24-bit significand, so a*b has at most 48 significant bits and
is exact in float64 (53 bits; its exponent, >= 2^-298, stays in float64's normal range).  The
sum s = fl64(p + c) is rounded once; TwoSum gives the exact error e (s + e == p + c exactly).
Rounding to odd — keep s if e == 0 or s's last bit is 1, else step one float64 ulp towards e —
gives the float64 nearest p + c "to odd", and a round-to-odd value with p >= q + 2 bits (53 >=
24 + 2) rounds to q bits exactly as the exact value would (Boldo & Melquiond, "Emulation of FMA
and correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008).  Casting
float64 -> float32 rounds to nearest even, also for float32 subnormals and overflow (the float64
value is normal there, so its 53 bits still hold).  Plain fl32(fl64(p + c)) is a double rounding
and is wrong in rare ties; tests/reference/test_exact.py checks both against Fractions.
"""

from __future__ import annotations

import numpy as np


def fma_f32(a, b, c) -> np.ndarray:
    a, b, c = (np.asarray(x, np.float32).astype(np.float64) for x in (a, b, c))
    with np.errstate(invalid="ignore", over="ignore"):
        p = a * b  # exact
        s = p + c
        bb = s - p  # TwoSum (Knuth): s + e == p + c exactly
        e = (p - (s - bb)) + (c - bb)
        even = (s.view(np.uint64) & np.uint64(1)) == 0
        step = np.nextafter(s, np.where(e > 0, np.inf, -np.inf))
        odd = np.where((e != 0) & even & np.isfinite(s), step, s)
        return odd.astype(np.float32)
