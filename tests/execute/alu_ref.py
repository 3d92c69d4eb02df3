"""Reference semantics of VALU opcodes for the differential tests, written from the ISA guide's
descriptions with Python integers, fractions and struct (never by calling wavelift).

Values: a float is a Python float (f16/f32/f64 all fit a double exactly); rounding of exact
results goes through ``rnd`` (Fraction -> nearest-even in the target format, with subnormals,
overflow to infinity and signed zeros).  Denormal flushing follows MODE: FP_DENORM for f32 in
MODE[5:4], for f16/f64 in MODE[7:6] (0 flush in+out, 1 flush out, 2 flush in, 3 keep).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction

FMT = {"f16": (11, -14, 15), "f32": (24, -126, 127), "f64": (53, -1022, 1023)}
BITS = {
    "f16": 16,
    "f32": 32,
    "f64": 64,
    "u16": 16,
    "i16": 16,
    "u32": 32,
    "i32": 32,
    "u64": 64,
    "i64": 64,
    "b32": 32,
    "b64": 64,
    "b16": 16,
}
_PACK = {"f16": "<e", "f32": "<f", "f64": "<d"}
_UPACK = {"f16": "<H", "f32": "<I", "f64": "<Q"}
NAN = float("nan")
INF = float("inf")


# ------------------------------------------------------------------------------- bits <-> values
def fval(bits, t):
    """Float value of the low BITS[t] bits."""
    n = BITS[t]
    bits &= (1 << n) - 1
    v = struct.unpack(_PACK[t], struct.pack(_UPACK[t], bits))[0]
    return NaN(bits, t) if v != v else v


def fbits(x, t):
    """Bits of an exactly representable value (or inf/NaN) of float type t.  A NaN operand
    (``NaN``) keeps its sign and payload (converted to t); any other NaN is the result of an
    invalid operation: the default NaN."""
    if isinstance(x, NaN):
        return x.to(t)
    if x != x:
        return DNAN[t]
    return struct.unpack(_UPACK[t], struct.pack(_PACK[t], x))[0]


# ------------------------------------------------------------------------------------ NaN rules
# docs/float-semantics.md "NaN results" and its sources (AMD ISA pseudo-code, LLVM, AMD's
# emulator): an invalid operation gives the default NaN (sign set, quiet bit, no payload); a NaN
# operand gives the first NaN operand in source order, with its sign and payload, quieted only
# under MODE.IEEE (Mode.fout) or by the few ops that always quiet (``quiet``).
DNAN = {"f16": 0xFE00, "f32": 0xFFC00000, "f64": 0xFFF8000000000000}
_QBIT = {"f16": 1 << 9, "f32": 1 << 22, "f64": 1 << 51}


class NaN(float):
    """A NaN value that remembers its bits (of float type ``t``)."""

    def __new__(cls, bits, t):
        o = float.__new__(cls, "nan")
        o.bits, o.t = bits & ((1 << BITS[t]) - 1), t
        return o

    def __neg__(self):
        return NaN(self.bits ^ (1 << (BITS[self.t] - 1)), self.t)

    def __abs__(self):
        return NaN(self.bits & ((1 << (BITS[self.t] - 1)) - 1), self.t)

    def __pos__(self):
        return self

    def quiet(self):
        return NaN(self.bits | _QBIT[self.t], self.t)

    def to(self, t):
        """Bits in type t: sign kept, the fraction's top bits kept (widening pads with zeros,
        narrowing drops the low bits; a fraction that drops to zero keeps the NaN a NaN with the
        quiet bit -- no source fixes that case)."""
        n0, n1 = BITS[self.t], BITS[t]
        p0, p1 = FMT[self.t][0] - 1, FMT[t][0] - 1
        frac = self.bits & ((1 << p0) - 1)
        frac = frac << (p1 - p0) if p1 >= p0 else frac >> (p0 - p1)
        if not frac:
            frac = _QBIT[t]
        sign = self.bits >> (n0 - 1)
        return (sign << (n1 - 1)) | (((1 << (n1 - 1 - p1)) - 1) << p1) | frac


def first_nan(*xs):
    """The first NaN among xs as a ``NaN`` (a NaN without bits is an invalid result: the
    default NaN), or None."""
    for x in xs:
        if isinstance(x, NaN):
            return x
        if x != x:
            return NaN(DNAN["f64"], "f64")
    return None


def quiet(x):
    return x.quiet() if isinstance(x, NaN) else x


def ival(bits, t):
    n = BITS[t]
    v = bits & ((1 << n) - 1)
    if t[0] == "i" and v >> (n - 1):
        v -= 1 << n
    return v


def ibits(v, t):
    return v & ((1 << BITS[t]) - 1)


def is_nan_bits(bits, t):
    return math.isnan(fval(bits, t))


# ---------------------------------------------------------------------------------- rounding
def rnd(q, t, mode="rne"):
    """Round an exact rational (Fraction/int) to float type t; returns a Python float."""
    p, emin, emax = FMT[t]
    if q == 0:
        return 0.0
    neg = q < 0
    a = -Fraction(q) if neg else Fraction(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    quantum = Fraction(2) ** (e - (p - 1))
    n, rem = divmod(a, quantum)
    n = int(n)
    if mode == "rne":
        if rem * 2 > quantum or (rem * 2 == quantum and n & 1):
            n += 1
    elif mode != "rtz":
        raise ValueError(mode)
    v = n * quantum
    top = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if v > top:
        v = INF if mode == "rne" else top
    v = float(v) if v != INF else INF
    return -v if neg else v


def tiny(x, t):
    return x == x and x != 0 and abs(x) < 2.0 ** FMT[t][1]


class Mode:
    def __init__(self, byte, dx10=True, ieee=False):
        self.byte, self.dx10, self.ieee = byte, dx10, ieee

    def den(self, t):
        return (self.byte >> (4 if t == "f32" else 6)) & 3

    def fin(self, x, t):
        return math.copysign(0.0, x) if self.den(t) in (0, 2) and tiny(x, t) else x

    def fout(self, x, t, quiets=True):
        """Result flush; a NaN result taken from an operand is quieted under MODE.IEEE (only
        there: LLVM issue 139622, measured on gfx1030), unless the op never quiets."""
        if isinstance(x, NaN):
            return x.quiet() if self.ieee and quiets else x
        return math.copysign(0.0, x) if self.den(t) in (0, 1) and tiny(x, t) else x

    def omod(self, x, factor, t):
        """The output modifier: ignored under MODE.IEEE and where t's output denormals are kept;
        a zero result is +0 (LLVM SIFoldOperands isOMod and its "omod is ignored by hardware if
        IEEE bit is enabled"; ACO can_use_omod: "omod flushes -0 to +0 and has no effect if
        denormals are enabled")."""
        if self.ieee or self.den(t) in (2, 3):
            return x
        r = f_mul(x, factor, t)
        return 0.0 if r == 0 else r


# ----------------------------------------------------------------------------- exact arithmetic
def f_add(x, y, t):
    if (n := first_nan(x, y)) is not None:
        return n
    if not (math.isfinite(x) and math.isfinite(y)):
        return x + y
    q = Fraction(x) + Fraction(y)
    if q == 0:
        return x + y  # signed-zero rules of IEEE (exact: both are zeros or cancel)
    return rnd(q, t)


def f_sub(x, y, t):
    """x - y: a NaN operand passes with its own sign (no source says whether hardware negates
    a NaN S1 as a subtraction by addition would; x86 does not)."""
    if (n := first_nan(x, y)) is not None:
        return n
    return f_add(x, -y, t)


def f_mul(x, y, t):
    if (n := first_nan(x, y)) is not None:
        return n
    if not (math.isfinite(x) and math.isfinite(y)):
        return x * y
    q = Fraction(x) * Fraction(y)
    if q == 0:
        return math.copysign(0.0, x) * math.copysign(1.0, y)
    r = rnd(q, t)
    return r


def f_fma(x, y, z, t):
    if (n := first_nan(x, y)) is not None:
        return n
    if (x == 0 and math.isinf(y)) or (math.isinf(x) and y == 0):
        return NAN  # an invalid product wins over a NaN addend (AMD's emulator)
    if (n := first_nan(z)) is not None:
        return n
    if math.isfinite(x) and math.isfinite(y) and math.isinf(z):
        return z  # the exact product is finite, however large
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        return x * y + z
    prod = Fraction(x) * Fraction(y)
    q = prod + Fraction(z)
    if q == 0:
        if prod == 0:
            return (math.copysign(0.0, x) * math.copysign(1.0, y)) + z
        return 0.0
    return rnd(q, t)


def f_min(x, y, mode, is_snan):
    if mode.ieee and (is_snan[0] or is_snan[1]):
        return quiet(x if is_snan[0] else y)
    if x != x:
        return y
    if y != y:
        return x
    if x < y or (x == y and math.copysign(1, x) < 0):
        return x
    return y


def f_max(x, y, mode, is_snan):
    if mode.ieee and (is_snan[0] or is_snan[1]):
        return quiet(x if is_snan[0] else y)
    if x != x:
        return y
    if y != y:
        return x
    if x > y or (x == y and math.copysign(1, x) > 0):
        return x
    return y


def snan(bits, t):
    q = {"f16": 1 << 9, "f32": 1 << 22, "f64": 1 << 51}[t]
    return is_nan_bits(bits, t) and not (bits & q)


def cvt_f2i(x, t):
    if x != x:
        return 0
    lo, hi = (-(1 << (BITS[t] - 1)), (1 << (BITS[t] - 1)) - 1) if t[0] == "i" else (0, (1 << BITS[t]) - 1)
    if x == INF:
        return hi
    if x == -INF:
        return lo
    return max(lo, min(hi, int(x)))  # int() truncates toward zero


def exponent(x, t):
    return (fbits(x, t) >> (FMT[t][0] - 1)) & ((1 << (BITS[t] - FMT[t][0])) - 1)


def fclass(x, bits, t):
    """v_cmp_class bit index of x."""
    if x != x:
        return 0 if snan(bits, t) else 1
    neg = math.copysign(1, x) < 0
    if math.isinf(x):
        return 2 if neg else 9
    if x == 0:
        return 5 if neg else 6
    if tiny(x, t):
        return 4 if neg else 7
    return 3 if neg else 8


def clamp01(x, mode):
    if x != x:
        return 0.0 if mode.dx10 else x
    if x <= 0:
        return 0.0  # max(x, +0) with -0 < +0: -0 clamps to +0
    return 1.0 if x >= 1 else x


def ulps(a_bits, b_bits, t):
    """Distance in ULPs between two float bit patterns (same-sign ordering; NaN -> huge)."""
    n = BITS[t]
    a, b = fval(a_bits, t), fval(b_bits, t)
    if a != a or b != b:
        return 0 if (a != a and b != b) else 1 << 70

    def key(v):
        v &= (1 << n) - 1
        return -(v & ((1 << (n - 1)) - 1)) if v >> (n - 1) else v

    return abs(key(a_bits) - key(b_bits))


# ------------------------------------------------------------------------------- op references
def snan_list(raws, t):
    return [snan(r, t) for r in raws]


def f_rnd(x, t, mode="rne"):
    if not math.isfinite(x) or x == 0:
        return x
    return rnd(Fraction(x), t, mode)


def f_ldexp(x, e, t):
    if not math.isfinite(x) or x == 0:
        return x
    e = max(-4000, min(4000, e))
    return rnd(Fraction(x) * Fraction(2) ** e, t)


def f_round(x, fn):
    if not math.isfinite(x):
        return x
    r = fn(Fraction(x)) if fn is not round else round(Fraction(x))  # round(): ties to even
    return math.copysign(0.0, x) if r == 0 else float(r)


def f_fract(x, t):
    if math.isinf(x):
        return NAN
    if x != x:
        return x
    r = rnd(Fraction(x) - math.floor(Fraction(x)), t)
    below1 = 1.0 - 2.0 ** -FMT[t][0]
    return min(r, below1)


def f_approx(fn, x, t):
    """fn evaluated in double, rounded to t (compared with the documented ULP bound)."""
    if x != x:
        return x
    try:
        v = fn(x)
    except ZeroDivisionError:
        v = math.copysign(INF, x)
    except ValueError:
        v = NAN
    except OverflowError:
        v = INF
    return f_rnd(v, t)


def log2(x):
    if x != x:
        return x
    if x < 0:
        return NAN
    if x == 0:
        return -INF
    if math.isinf(x):
        return INF
    return math.log2(x)


def f_trig(fn, x, t):
    if x != x:
        return x
    if not math.isfinite(x):
        return NAN
    return f_rnd(fn(2 * math.pi * x), t)


def f_mm3(op, x, y, z, mode, sn):
    if op == "min3":
        return f_min(f_min(x, y, mode, sn[:2]), z, mode, [False, sn[2]])
    if op == "max3":
        return f_max(f_max(x, y, mode, sn[:2]), z, mode, [False, sn[2]])
    if x != x or y != y or z != z:
        return f_mm3("min3", x, y, z, mode, sn)
    mx = f_mm3("max3", x, y, z, mode, [False] * 3)
    if mx == x:
        return f_max(y, z, mode, [False] * 2)
    if mx == y:
        return f_max(x, z, mode, [False] * 2)
    return f_max(x, y, mode, [False] * 2)


def div_fixup(q, den, num, t):
    sign = (math.copysign(1, den) < 0) != (math.copysign(1, num) < 0)
    s = -1.0 if sign else 1.0
    if (n := first_nan(num, den)) is not None:
        return n.quiet()  # ISA: cvtToQuietNAN(S2), else of S1, whatever MODE
    if (den == 0 and num == 0) or (math.isinf(den) and math.isinf(num)):
        return NAN
    if den == 0 or math.isinf(num):
        return s * INF
    if math.isinf(den) or num == 0:
        return s * 0.0
    if exponent(num, t) - exponent(den, t) < -{"f16": 25, "f32": 150, "f64": 1075}[t]:
        return s * 0.0
    if q != q:
        return s * INF
    return s * abs(q)


def _denorm(v, t):
    return tiny(v, t)


def div_scale_out(m, a, b, c, t, dest="s"):
    """V_DIV_SCALE pseudo-code (ISA guide): S0 value to scale, S1 denominator, S2 numerator."""
    s0, s1, s2 = (m.fin(fval(v, t), t) for v in (a, b, c))
    k, big, small = (64, 96, 23) if t == "f32" else (128, 768, 53)
    vcc, d = 0, s0

    def q_is_den():
        if not (math.isfinite(s2) and math.isfinite(s1)) or s1 == 0:
            return False
        return _denorm(rnd(Fraction(s2) / Fraction(s1), t), t)

    def rcp_is_den():
        if not math.isfinite(s1) or s1 == 0:
            return False
        return _denorm(rnd(1 / Fraction(s1), "f64"), "f64")

    if s2 == 0 or s1 == 0:
        d = NAN
    elif exponent(s2, t) - exponent(s1, t) >= big:
        vcc = 1
        if s0 == s1:
            d = f_ldexp(s0, k, t)
    elif _denorm(s1, t):
        d = f_ldexp(s0, k, t)
    elif rcp_is_den() and q_is_den():
        vcc = 1
        if s0 == s1:
            d = f_ldexp(s0, k, t)
    elif rcp_is_den():
        d = f_ldexp(s0, -k, t)
    elif q_is_den():
        vcc = 1
        if s0 == s2:
            d = f_ldexp(s0, k, t)
    elif exponent(s2, t) <= small:
        d = f_ldexp(s0, k, t)
    # a NaN S0 passes unquieted whatever MODE (LLVM PR 208733, hardware before GFX12)
    return {"d": fbits(m.fout(d, t, quiets=False), t), dest: vcc}


def div_fmas_out(m, a, b, c, vcc, t):
    """fma; with VCC: times 2^64 (f64 2^128) when exponent(S2) says |S2| >= 2, else 2^-64 (2^-128).
    Inputs are not flushed (ISA note); the output is."""
    x, y, z = (fval(v, t) for v in (a, b, c))
    r = f_fma(x, y, z, t)
    if vcc:
        k = 64 if t == "f32" else 128
        big = exponent(z, t) >= (128 if t == "f32" else 1024)
        r = f_ldexp(r, k if big else -k, t)
    return {"d": fbits(m.fout(quiet(r), t), t)}  # quiets whatever MODE (AMD's emulator)


def cube(what, x, y, z):
    ax, ay, az = abs(x), abs(y), abs(z)
    if az >= ax and az >= ay:
        face = "z"
    elif ay >= ax:
        face = "y"
    else:
        face = "x"
    if what == "id":
        return {"z": 5.0 if z < 0 else 4.0, "y": 3.0 if y < 0 else 2.0, "x": 1.0 if x < 0 else 0.0}[face]
    if what == "ma":
        return f_mul(2.0, {"z": z, "y": y, "x": x}[face], "f32")
    if what == "sc":
        return {"z": -x if z < 0 else x, "y": x, "x": z if x < 0 else -z}[face]
    return {"z": -y, "y": (-z if y < 0 else z), "x": -y}[face]


def _pi_fixed(bits):
    """pi * 2^bits (Stormer: pi/4 = 44 atan(1/57) + 7 atan(1/239) - 12 atan(1/682) + 24 atan(1/12943))."""
    one = 1 << (bits + 32)

    def atan_inv(k):
        total, term, n, sgn = 0, one // k, 1, 1
        while term:
            total += sgn * (term // n)
            term //= k * k
            n += 2
            sgn = -sgn
        return total

    return (4 * (44 * atan_inv(57) + 7 * atan_inv(239) - 12 * atan_inv(682) + 24 * atan_inv(12943))) >> 32


_TWO_PI_BITS = None


def trig_preop(x, seg):
    """V_TRIG_PREOP_F64 per the ISA pseudo-code: 53 bits of 2/pi = 0.b1200 b1199 ... from
    position shift, scaled by 2^(-53-shift) (+128 for huge exponents)."""
    global _TWO_PI_BITS
    if _TWO_PI_BITS is None:
        _TWO_PI_BITS = (2 << (1201 + 1300)) // _pi_fixed(1300)  # floor(2/pi * 2^1201)
    e = exponent(x, "f64")
    shift = (seg & 31) * 53 + max(e - 1077, 0)
    whole = ((_TWO_PI_BITS << shift) >> (1201 - 53)) & ((1 << 53) - 1)
    scale = -53 - shift + (128 if e >= 1968 else 0)
    return rnd(Fraction(whole) * Fraction(2) ** scale, "f64") if whole else 0.0


def norm16(x, signed):
    if x != x:
        return 0
    lo = -1.0 if signed else 0.0
    c = min(max(x, lo), 1.0)
    return round(Fraction(f_mul(c, 32767.0 if signed else 65535.0, "f32")))


def cvt_pk_u8(x, sel, acc):
    v = 0 if x != x else max(0, min(255, round(Fraction(x)) if math.isfinite(x) else (255 if x > 0 else 0)))
    sh = (sel & 3) * 8
    return (acc & ~(0xFF << sh) & 0xFFFFFFFF) | (v << sh)


def sext(v, w):
    if w == 0:
        return 0
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


def perm(x, y, sel):
    data = ((x & 0xFFFFFFFF) << 32) | (y & 0xFFFFFFFF)
    by = [(data >> 8 * i) & 0xFF for i in range(8)]
    out = 0
    for k in range(4):
        s = (sel >> 8 * k) & 0xFF
        if s >= 13:
            v = 0xFF
        elif s == 12:
            v = 0
        elif s >= 8:
            v = 0xFF * (by[2 * (s - 8) + 1] >> 7)
        else:
            v = by[s]
        out |= v << 8 * k
    return out


def sad(x, y, w, n, masked=False):
    m = (1 << w) - 1
    tot = 0
    for k in range(n):
        xa, ya = (x >> w * k) & m, (y >> w * k) & m
        if masked and ya == 0:
            continue
        tot += abs(xa - ya)
    return tot


def qsad(x, y, z, masked):
    out = 0
    for k in range(4):
        win = (x >> 8 * k) & 0xFFFFFFFF
        acc = (z >> 16 * k) & 0xFFFF
        out |= ((sad(win, y & 0xFFFFFFFF, 8, 4, masked) + acc) & 0xFFFF) << 16 * k
    return out


def dot(a, b, cnt, w, signed):
    m = (1 << w) - 1
    tot = 0
    for k in range(cnt):
        xa, ya = (a >> w * k) & m, (b >> w * k) & m
        if signed:
            xa, ya = sext(xa, w), sext(ya, w)
        tot += xa * ya
    return tot


def sat(v, signed):
    lo, hi = (-(2**31), 2**31 - 1) if signed else (0, 2**32 - 1)
    return max(lo, min(hi, v))


def dot2f(m, a, b, c):
    xs = [m.fin(fval((a >> 16 * h) & 0xFFFF, "f16"), "f16") for h in (0, 1)]
    ys = [m.fin(fval((b >> 16 * h) & 0xFFFF, "f16"), "f16") for h in (0, 1)]
    vals = xs + ys + [c]
    if not all(math.isfinite(v) for v in vals):
        # the sum in order (x0*y0 + x1*y1) + c; a NaN is quieted whatever MODE (LLVM PR 208733)
        def op(u, v, f):
            n = first_nan(u, v)
            return n if n is not None else f(u, v)

        mul, add = (lambda u, v: u * v), (lambda u, v: u + v)
        return quiet(op(op(op(xs[0], ys[0], mul), op(xs[1], ys[1], mul), add), c, add))
    q = Fraction(xs[0]) * Fraction(ys[0]) + Fraction(xs[1]) * Fraction(ys[1]) + Fraction(c)
    if q == 0:
        return (xs[0] * ys[0] + xs[1] * ys[1]) + c
    return rnd(q, "f32")
