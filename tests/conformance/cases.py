"""The ALU cases of the conformance tests: every pure IR op of the op table (wavelift/ir/ops.py)
in each type variant the IR defines it on, with operands (random bits plus edge values) and the
reference result of each case from wavelift/ir/interp.py.

``VARIANTS`` lists (op, op type, operand types, attrs); ``operands`` gives a variant's operands,
drawn from pools that variants share (``pool_key``, ``pool``: the rig loads each pool once);
``reference`` evaluates them.  ``NOT_HERE`` names the pure ops left out, with why.
"""

from __future__ import annotations

import functools
import zlib
from typing import NamedTuple

import numpy as np

from wavelift.ir import interp, ops
from wavelift.ir.numerics import DT

INTS, FLOATS = ops.INTS, ops.FLOAT
# pure ops these cases leave out, with why (test_alu.py checks the rest of the table is here)
NOT_HERE = {
    "const": "a constant: what it is lowered to is interp.const_value's bits by construction",
    "lane_id": "needs the wave (tests/ir/test_ops.py lowers it; every program reads it)",
    "maskbit": "reads a wave-uniform mask per lane: interp does not evaluate it",
    "word": "a word of a load's result (memory: tests/backends)",
}
# value ops that are not pure but that interp evaluates given MODE: cases under several MODEs
MODE_OPS = ("fin", "fout")
# ops whose value is the count as an i32 whatever the op type (the frontends convert it with
# cvt i32 first: frontend/scalar_alu.py, vector_alu.py), so the cases do too
I32_VALUE = ("popcount", "clz", "ctz")
# ops the ISA has in f16 and f32 only (v_exp, v_log, v_sin, v_cos): no frontend emits an f64
# one, and f64 libm results are not correctly rounded (NumPy's and the C library's exp2 differ
# by an ulp), so they are cases in those types only
TRANSCENDENTAL = ("exp2", "log2", "sin", "cos")


class Variant(NamedTuple):
    name: str
    type: str  # the op's type
    args: tuple[str, ...]  # operand types
    attrs: dict
    const: tuple = ()  # (operand index, its bits as an int): operands that are IR constants

    @property
    def result(self) -> str:
        """The type the result is compared as."""
        return "i32" if self.name in I32_VALUE else ops.result_type(self.name, self.type, self.attrs)

    @property
    def id(self) -> str:
        at = ",".join(f"{k}={v}" for k, v in self.attrs.items())
        ks = "".join(f"[{i}={b:#x}]" for i, b in self.const)
        return f"{self.name}.{self.type}({','.join(self.args)}){'{' + at + '}' if at else ''}{ks}"


def _variants() -> list[Variant]:
    v = []
    for n in ("add", "sub", "mul", "and", "or", "xor", "min", "max", "shl", "shr", "sar"):
        v += [Variant(n, t, (t, t), {}) for t in INTS]
    v += [Variant(n, "b1", ("b1", "b1"), {}) for n in ("and", "or", "xor")]
    v += [Variant(n, t, (t,), {}) for n in ("not", "neg", "abs") for t in INTS]
    v += [Variant("not", "b1", ("b1",), {})]
    v += [
        Variant(n, t, (t,), {}) for n in ("popcount", "bitrev", "clz", "ctz") for t in ("u32", "u64", "i32")
    ]
    v += [Variant("mulhi", t, (t, t), {}) for t in ("u32", "i32")]
    for t in FLOATS:
        v += [Variant(n, t, (t, t), {}) for n in ("fadd", "fsub", "fmul", "fdiv", "fmin", "fmax")]
        v += [
            Variant(n, t, (t,), {})
            for n in (
                *("fneg", "fabs", "floor", "ceil", "trunc", "rndne", "fract", "sqrt"),
                *("rcp", "rsq", "frexp_mant"),
            )
        ]
        if t != "f64":  # (RDNA has v_exp/log/sin/cos in f16 and f32 only: TRANSCENDENTAL)
            v += [Variant(n, t, (t,), {}) for n in TRANSCENDENTAL]
        v += [Variant("frexp_exp", "i32", (t,), {}), Variant("fma", t, (t, t, t), {})]
        v += [Variant("ldexp", t, (t, "i32"), {}), Variant("isclass", "u32", (t, "u32"), {})]
        v += [Variant("fnan", t, (t,) * k, {}) for k in (2, 3, 4)]
        v += [Variant("cmp", t, (t, t), {"cond": c}) for c in ops.CONDS]
    v += [Variant("fma_to", "f16", ("f32",) * 3, {}), Variant("fma_to", "f32", ("f16",) * 3, {})]
    v += [Variant("trig_preop", "f64", ("f64", "u32"), {})]
    v += [
        Variant("cmp", t, (t, t), {"cond": c})
        for t in INTS
        for c in ("f", "lt", "eq", "le", "gt", "ne", "ge", "tru")
    ]
    v += [Variant("cmp", "b1", ("b1", "b1"), {"cond": c}) for c in ("eq", "ne")]
    v += [Variant("select", t, ("b1", t, t), {}) for t in ops.TYPES]
    # every conversion but float -> b1 (no frontend emits it; the NumPy expression fails on it)
    v += [
        Variant("cvt", f, (f,), {"to": to})
        for f in ops.TYPES
        for to in ops.TYPES
        if f != to and not (f in FLOATS and to == "b1")
    ]
    v += [
        Variant("bitcast", f, (f,), {"to": to})
        for f in ops.TYPES
        for to in ops.TYPES
        if f != to and ops.BITS[f] == ops.BITS[to] and "b1" not in (f, to)
    ]
    v += [Variant("pack64", "u64", ("u32", "u32"), {}), Variant("lo32", "u32", ("u64",), {})]
    v += [Variant("hi32", "u32", ("u64",), {})]
    return v


VARIANTS = _variants()
MODE_VARIANTS = [Variant(n, t, (t,), {}) for n in MODE_OPS for t in FLOATS]
# initial MODE values for MODE_VARIANTS (FP_DENORM f32 bits 5:4, f16/f64 bits 7:6): every
# combination of flush in/out per field, the other field kept
MODES = (0x0F0, 0x000, 0x0C0, 0x030, 0x0D0, 0x0E0, 0x070, 0x0B0)

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def float_edges(t: str) -> np.ndarray:
    """Edge values of float type t: signed zeros, infinities, extremes, (largest and smallest)
    denormals, powers of two (conversion limits among them), ties of rounding to an integer and
    to the narrower types, NaNs quiet and signaling with payloads and both signs."""
    ft = DT[t]
    fi = np.finfo(ft)
    bits = ops.BITS[t]
    u = _UINT[bits]
    vals = [0.0, 1.0, 0.5, 1.5, 2.5, 3.0, 0.49999997, 0.75, 1e10, 65504.0, 65520.0, 7.25, 1e-3]
    vals += [float(fi.max), float(fi.tiny), float(fi.tiny) / 2, float(fi.smallest_subnormal)]
    vals += [float(fi.tiny) - float(fi.smallest_subnormal)]  # the largest denormal
    vals += [2.0**k for k in (-24, -14, -1, 10, 15, 16, 23, 24, 31, 32, 52, 53, 63, 64, 127, 128)]
    vals += [4294967295.0, 2147483647.0, 2147483648.5, 1 + 2.0**-11, 1 + 3 * 2.0**-11]
    vals += [1 + 2.0**-24, 1 + 3 * 2.0**-24, 1 + 2.0**-53, 0.25 + 2.0**-30, 1.0 / 3]
    with np.errstate(over="ignore"):
        x = np.array(vals + [np.inf], np.float64).astype(ft)
    x = np.concatenate([x, -x])
    one = {16: 0x3C00, 32: 0x3F800000, 64: 0x3FF0000000000000}[bits]
    q, s = {16: (0x7E00, 0x7C01), 32: (0x7FC00000, 0x7F800001), 64: (0x7FF8 << 48, (0x7FF << 52) | 1)}[bits]
    sign = 1 << (bits - 1)
    top = (1 << (bits - 1)) - 1  # every bit but the sign: the NaN of all payload bits
    raw = [q, q | sign, q | 1, q | sign | 0x123, s, s | 0x123, s | sign, s | sign | 0x55, top, top | sign]
    raw += [one + 1, one - 1, 1, sign | 1]  # neighbours of 1.0, the smallest denormals
    return np.concatenate([x, np.array(raw, np.uint64).astype(u).view(ft)])


def int_edges(t: str) -> np.ndarray:
    """Edge values of integer type t: 0, 1, -1, the extremes and their neighbours, powers of
    two and their neighbours, small shift-like amounts."""
    bits = ops.BITS[t]
    info = np.iinfo(DT[t])
    vals = [0, 1, 2, 3, -1, -2, int(info.max), int(info.min), int(info.max) - 1, int(info.min) + 1]
    vals += [7, 8, 15, 16, 31, 32, 63, 64, 0x55, 0xAA, 0x7F, 0x80, 0xFF, 0x100]
    for k in range(0, bits, 3 if bits > 16 else 1):
        vals += [1 << k, (1 << k) - 1, -(1 << k)]
    return (np.array([v & ((1 << bits) - 1) for v in vals], np.uint64).astype(_UINT[bits])).view(DT[t])


def _column(t: str, n: int, rng, below: int | None = None) -> np.ndarray:
    """n operands of IR type t: a third edge values, a sixth small values (on and near integers
    and halves), the rest random bits; ``below``: amounts below it (shift amounts)."""
    if t == "b1":
        return rng.integers(0, 2, n).astype(bool)
    bits = ops.BITS[t]
    u = _UINT[bits]
    raw = rng.integers(0, 1 << 63, n, dtype=np.uint64) ^ (
        rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    )
    raw = (raw & np.uint64((1 << bits) - 1)).astype(u)
    if below is not None:
        x = (raw % u(below)).astype(u)
        x[: min(n, 4)] = np.array([0, 1, below - 1, below // 2], u)[: min(n, 4)]
        return x.view(DT[t])
    x = raw.view(DT[t]).copy()
    pick = rng.integers(0, 6, n)
    edges = float_edges(t) if t in FLOATS else int_edges(t)
    x[pick < 2] = rng.choice(edges, int((pick < 2).sum()))
    if t in FLOATS:
        small = (rng.integers(-40, 40, n) + rng.choice([0.0, 0.5, 0.25, 0.75, 1e-3], n)).astype(DT[t])
    else:
        small = rng.integers(-40, 40, n).astype(np.int64).astype(DT[t])
    x[pick == 2] = small[pick == 2]
    return x


def pool_key(v: Variant, i: int) -> tuple:
    """The operand pool operand i of variant v draws from: (type, what).  Variants share pools
    (one register load each in the rig): an op's operands are the pools of their positions, and
    positions 0 and 1 of a type start with every pair of its edge values."""
    t = v.args[i]
    if i == 1 and v.name in ("shl", "shr", "sar"):
        return (t, "shift")
    if i == 1 and v.name in ("ldexp", "trig_preop", "isclass"):
        return (t, v.name)
    return (t, i)


@functools.cache
def pool(key: tuple, n: int) -> np.ndarray:
    """n operands of pool ``key`` (pool_key), the same on every call (read-only)."""
    t, what = key
    rng = np.random.default_rng([ops.TYPES.index(t), zlib.crc32(str(what).encode()), n])
    if what == "shift":
        return _column(t, n, rng, ops.BITS[t])
    c = _column(t, n, rng)
    if what == "ldexp":
        k = rng.integers(0, 3, n) == 0
        c[k] = rng.integers(-1100, 1100, int(k.sum())).astype(np.int32)  # exponents in range
    elif what == "trig_preop":
        c[: n // 2] = rng.integers(0, 48, n // 2).astype(np.uint32)  # segments that exist
    elif what == "isclass":
        c = (rng.integers(0, 1 << 10, n) | rng.integers(0, 2, n) << rng.integers(10, 32, n)).astype(np.uint32)
        c[:10] = (1 << np.arange(10)).astype(np.uint32)  # each class alone
    elif what in (0, 1) and t != "b1":
        e = float_edges(t) if t in FLOATS else int_edges(t)
        grid = np.stack(np.meshgrid(e, e, indexing="ij"), -1).reshape(-1, 2)
        np.random.default_rng([ops.TYPES.index(t), n]).shuffle(grid)  # (both positions alike)
        k = min(n // 2, len(grid))
        c[:k] = grid[:k, what]
    c.flags.writeable = False
    return c


def operands(v: Variant, n: int) -> list[np.ndarray]:
    """n cases of variant v: one array per operand (its pools' first n values, or its constant)."""
    k = dict(v.const)
    return [
        np.full(n, k[i], _UINT[ops.BITS[t]]).view(DT[t])
        if i in k and t != "b1"
        else np.full(n, bool(k[i]))
        if i in k
        else pool(pool_key(v, i), n)
        for i, t in enumerate(v.args)
    ]


# constants an operand of each kind is given in CONST_VARIANTS (bits): zeros, one, all ones, the
# sign bit; for floats signed zeros (fmin/fmax lower a constant zero apart), 1.5, inf, NaNs
def _const_bits(t: str, shift: bool) -> list[int]:
    bits = ops.BITS[t]
    if t == "b1":
        return [0, 1]
    if shift:
        return [0, 1, bits - 1]
    if t in FLOATS:
        sign = 1 << (bits - 1)
        one5 = int(np.array(1.5, DT[t]).view(_UINT[bits]))
        inf, q, s = {
            16: (0x7C00, 0x7E00, 0x7C01),
            32: (0x7F800000, 0x7FC00000, 0x7F800123),
            64: (0x7FF << 52, 0x7FF8 << 48, (0x7FF << 52) | 0x123),
        }[bits]
        return [0, sign, one5, inf | sign, q, s]
    return [0, 1, (1 << bits) - 1, 1 << (bits - 1)]


# the two-operand ops whose operand 0 is a constant as well as operand 1 (they commute: a
# lowering or pass may look at either side)
_COMMUTE = {"add", "mul", "and", "or", "xor", "min", "max", "fadd", "fmul", "fmin", "fmax", "mulhi"}


def _const_variants() -> list[Variant]:
    """Each two-operand variant with a constant operand 1 (and 0, for those that commute): what
    the frontends' literals and inline constants make, and what lowerings and passes treat
    apart (f32 fmin/fmax with a constant, identities like x + 0, shifts by constants)."""
    out = []
    for v in VARIANTS:
        if len(v.args) != 2:
            continue
        for i in (0, 1) if v.name in _COMMUTE else (1,):
            shift = i == 1 and v.name in ("shl", "shr", "sar")
            if v.name in ("isclass", "trig_preop") and i == 1:
                ks = [0x3, 0x204, 0x3FF] if v.name == "isclass" else [0, 1, 47]
            else:
                ks = _const_bits(v.args[i], shift)
            out += [v._replace(const=((i, k),)) for k in ks]
    return out


CONST_VARIANTS = _const_variants()


def bits_of(x: np.ndarray) -> np.ndarray:
    """Values -> their bit patterns as uint64 (b1: 0/1)."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return x.astype(np.uint64)
    return x.view(_UINT[x.dtype.itemsize * 8]).astype(np.uint64)


def reference(v: Variant, cols: list[np.ndarray], mode: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """interp.evaluate of each case -> (result bits as uint64, evaluated?)."""
    n = len(cols[0]) if cols else 0
    out, ok = np.zeros(n, np.uint64), np.zeros(n, bool)
    dt = DT[v.result]
    for i in range(n):
        r = interp.evaluate(v.name, v.type, v.attrs, [c[i] for c in cols], mode)
        if r is not None:
            out[i], ok[i] = bits_of(np.asarray(r).astype(dt).reshape(1))[0], True
    return out, ok
