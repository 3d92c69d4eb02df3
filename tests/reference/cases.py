"""Test cases for the clang fixture kernels (tests/fixtures/opencl/*.cl): arguments, launch
shapes, NumPy references and comparison rules. Expected values come from PoCL (pocl.py, the same
OpenCL source) and from the NumPy references here; tests/test_fixture_kernels.py checks that the
two agree (that validates the oracle) and then checks wavelift against them.

Comparison rules (one per output, `Output.cmp`):
  "bits"      integers, and correctly rounded float ops: bit-exact.
  "bits_nan"  floats from correctly rounded IEEE ops: bit-exact, NaNs included (sign and payload:
              RDNA's rules, docs/float-semantics.md "NaN results"; the NumPy reference's NaNs are
              the expected ones -- x86 arithmetic follows those rules under MODE.IEEE, which
              OpenCL kernels run with). PoCL's NaNs are x86 LLVM's choice, not RDNA's: the
              oracle self-check lets any NaN match any NaN. -0.0 vs +0.0 IS a difference.
  "close"     approximate results: |got - ref| <= atol + rtol * |ref| (bound documented per case).
  atomics     only order-independent results (final counters, the multiset of returned values).
Elements where the C source has undefined behaviour for the given input (double_math out[8g+7]
for NaN/out-of-range conversions) are not compared (`Output.defined`).

Outputs are pre-filled with a sentinel (0xCD bytes) on every side, so an element the kernel must
not write (vadd beyond n, padding after lds_reduce's results) is checked to still hold it.

Launch shapes: `small` (default run) has several workgroups, more than one wave per workgroup in
both wave32 and wave64 (block 128 or 256), and a partial last workgroup (with a partial last wave)
wherever the kernel allows it (everything but lds_reduce, which requires 256, and lane_ops, whose
cross-lane results need full waves: it gets a partial last workgroup of whole waves). `large`
shapes are marked slow.

Expected values for partial-group launches come from PoCL run with a work-group size that divides
the grid (PoCL has no non-uniform work-groups); every result taken from PoCL is independent of
the grouping, and the group-dependent ones (atomics counters[7]) are computed here.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .exact import fma_f32

SENTINEL_BYTE = 0xCD
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1


# ---- shapes and arguments -----------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    name: str
    global_size: int
    block: int
    slow: bool = False

    @property
    def groups(self) -> int:
        return -(-self.global_size // self.block)

    @property
    def partial(self) -> bool:
        return self.global_size % self.block != 0

    def launch_kwargs(self) -> dict:
        """Keyword arguments for wavelift's Kernel.launch."""
        if self.partial:
            return dict(global_size=(self.global_size,), block=(self.block,))
        return dict(groups=(self.groups,), block=(self.block,))

    def waves_per_group(self, wave: int) -> int:
        return -(-self.block // wave)


@dataclass
class Arg:
    name: str
    value: Any  # np.ndarray or a NumPy scalar
    role: str  # "in" | "out" | "inout" | "scalar"

    @property
    def is_buffer(self) -> bool:
        return isinstance(self.value, np.ndarray)


@dataclass(frozen=True)
class Output:
    name: str
    cmp: str = "bits"  # "bits" | "bits_nan" | "close" | "atomics"
    rtol: float = 0.0
    atol: float = 0.0
    per: int = 1  # elements per work-item (for messages)
    defined: Callable | None = None  # (args) -> bool mask of comparable elements
    pocl: Any = "all"  # "all" | "none" | (args) -> mask PoCL provides
    agree: tuple | None = None  # oracle-agreement rule if not cmp: ("ulp16", 1)


@dataclass
class Case:
    kernel: str
    source: str  # file in tests/fixtures/opencl
    shape: Shape
    make: Callable[[Case, np.random.Generator], list[Arg]]
    reference: Callable[[Case, dict], dict] | None  # NumPy: args by name -> outputs by name
    outputs: tuple[Output, ...]
    params: dict = field(default_factory=dict)
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.kernel}-{self.shape.name}"

    @property
    def seed(self) -> int:
        return zlib.crc32(self.id.encode())

    def args(self) -> list[Arg]:
        """Fresh arguments (deterministic: seeded by the case id)."""
        return self.make(self, np.random.default_rng(self.seed))

    def pocl_local(self) -> int | None:
        """The work-group size PoCL runs with (it has no partial work-groups)."""
        n, b = self.shape.global_size, self.shape.block
        if n % b == 0:
            return b
        g = math.gcd(n, b)
        return g if g >= 8 else None


def _sentinel(n: int, dtype) -> np.ndarray:
    dt = np.dtype(dtype)
    return np.full(n * dt.itemsize, SENTINEL_BYTE, np.uint8).view(dt).copy()


def _by_name(args: list[Arg]) -> dict:
    return {a.name: a.value for a in args}


def _place(rng: np.random.Generator, arr: np.ndarray, edges) -> np.ndarray:
    """Put the edge values at random distinct positions of `arr` (in place)."""
    edges = np.asarray(edges, dtype=arr.dtype)
    k = min(len(edges), arr.size)
    pos = rng.choice(arr.size, size=k, replace=False)
    arr.reshape(-1)[pos] = edges[:k]
    return arr


def _rand_i32(rng, n):
    return rng.integers(INT_MIN, INT_MAX, size=n, endpoint=True, dtype=np.int64).astype(np.int32)


def _rand_u32(rng, n):
    return rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)


def _rand_u64(rng, n):
    return rng.integers(0, np.iinfo(np.uint64).max, size=n, endpoint=True, dtype=np.uint64)


I32_EDGES = [0, 1, -1, INT_MIN, INT_MAX, INT_MIN + 1, INT_MAX - 1, 63, 64, -64, 1 << 30]
U32_EDGES = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFF, 0x100, 0xFFFF, 0x10000]
U64_EDGES = [
    0,
    1,
    2,
    63,
    64,
    (1 << 64) - 1,
    1 << 63,
    (1 << 63) - 1,
    (1 << 63) + 1,
    1 << 32,
    (1 << 32) - 1,
    0x8000000000000040,
    0x123456789ABCDEF0,
    (1 << 62) + 63,
]
F32_EDGES = np.array(
    [
        0.0,
        -0.0,
        1.0,
        -1.0,
        np.inf,
        -np.inf,
        np.nan,
        3.4028235e38,
        -3.4028235e38,
        1.1754944e-38,
        -1.1754944e-38,
        1e-45,
        -1e-45,
        5.877472e-39,
        0.5,
        16777216.0,
        1.0000001,
    ],
    np.float32,
)
F64_SPECIAL = [
    0.0,
    -0.0,
    np.inf,
    -np.inf,
    np.nan,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    1e-310,
    1.5,
    -2.5,
    0.5,
    -0.5,
    4503599627370496.5,
    1e300,
    -1e300,
    9.999999999999999e307,
]


# ---- comparisons ---------------------------------------------------------------------------


def _uview(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def _fmt(v) -> str:
    v = np.asarray(v)[()]
    if isinstance(v, np.floating):
        bits = _uview(np.array([v]))[0]
        return f"{float(v)!r} (0x{int(bits):0{v.dtype.itemsize * 2}x})"
    if isinstance(v, np.integer):
        return f"{int(v)} (0x{int(v) & ((1 << (8 * v.dtype.itemsize)) - 1):x})"
    return repr(v)


def _where(i: int, per: int) -> str:
    return f"index {i} (work-item {i // per}, element {i % per})" if per > 1 else f"index {i}"


def compare_output(
    kernel: str,
    out: Output,
    expected: np.ndarray,
    got: np.ndarray,
    mask: np.ndarray | None = None,
    cmp: str | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    nan_bits: bool = True,
) -> None:
    """Raise AssertionError (first wrong index, expected vs got, how many) if they differ.
    ``nan_bits``: NaN results must have the expected bits (else any NaN matches any NaN: only
    for the PoCL-vs-NumPy oracle check)."""
    cmp = cmp or out.cmp
    exp = np.ascontiguousarray(expected).reshape(-1)
    gv = np.ascontiguousarray(got).reshape(-1)
    assert gv.dtype == exp.dtype and gv.size == exp.size, (
        f"{kernel}: output {out.name!r}: got {gv.dtype}[{gv.size}], expected {exp.dtype}[{exp.size}]"
    )
    if cmp in ("bits", "bits_nan"):
        bad = _uview(exp) != _uview(gv)
        if cmp == "bits_nan" and not nan_bits:
            bad &= ~(np.isnan(exp) & np.isnan(gv))
    elif cmp == "close":
        e64, g64 = exp.astype(np.float64), gv.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.abs(g64 - e64) <= (atol if atol is not None else out.atol) + (
                rtol if rtol is not None else out.rtol
            ) * np.abs(e64)
        ok |= e64 == g64
        nan = np.isnan(e64) | np.isnan(g64)
        ok = np.where(nan, (_uview(exp) == _uview(gv)) if nan_bits else np.isnan(e64) & np.isnan(g64), ok)
        bad = ~ok
    elif cmp == "ulp16":
        # within `atol` units in the last place of float16 (ordered integer distance)
        def ordered(a):
            u = _uview(a).astype(np.int64)
            return np.where(u & 0x8000, 0x8000 - u, u)

        n = int(atol if atol is not None else 1)
        bad = np.abs(ordered(exp) - ordered(gv)) > n
        nan = np.isnan(exp) | np.isnan(gv)
        bad = np.where(nan, (_uview(exp) != _uview(gv)) if nan_bits else ~(np.isnan(exp) & np.isnan(gv)), bad)
    else:
        raise ValueError(cmp)
    if mask is not None:
        bad &= np.asarray(mask).reshape(-1)
    if bad.any():
        idx = np.flatnonzero(bad)
        i = int(idx[0])
        lines = [
            f"{kernel}: output {out.name!r} differs ({cmp}) at {idx.size} of "
            f"{exp.size if mask is None else int(np.count_nonzero(mask))} compared elements; "
            f"first at {_where(i, out.per)}: expected {_fmt(exp[i])}, got {_fmt(gv[i])}"
        ]
        for j in idx[1:4]:
            j = int(j)
            lines.append(f"  also {_where(j, out.per)}: expected {_fmt(exp[j])}, got {_fmt(gv[j])}")
        raise AssertionError("\n".join(lines))


def compare(case: Case, expected: dict, got: dict, args: dict) -> None:
    """Check every output of `case` (wavelift or PoCL results in `got`) against `expected`."""
    for out in case.outputs:
        if out.cmp == "atomics":
            compare_atomics(case, expected, got, args)
            continue
        mask = out.defined(args) if out.defined else None
        compare_output(case.kernel, out, expected[out.name], got[out.name], mask)


def compare_oracles(case: Case, numpy_out: dict, pocl_out: dict, args: dict) -> None:
    """PoCL vs the NumPy reference, on the elements PoCL provides (the oracle self-check)."""
    for out in case.outputs:
        if out.cmp == "atomics":
            compare_atomics(case, numpy_out, pocl_out, args, groups=None)
            continue
        if out.pocl == "none" and out.agree is None:
            continue
        mask = out.defined(args) if out.defined else None
        if callable(out.pocl):
            pm = out.pocl(args)
            mask = pm if mask is None else (mask & pm)
        if out.agree is not None:
            rule, n = out.agree
            compare_output(
                case.kernel + " [PoCL vs NumPy]",
                out,
                numpy_out[out.name],
                pocl_out[out.name],
                mask,
                cmp=rule,
                atol=n,
                nan_bits=False,
            )
        else:
            compare_output(
                case.kernel + " [PoCL vs NumPy]",
                out,
                numpy_out[out.name],
                pocl_out[out.name],
                mask,
                nan_bits=False,
            )


def merge_expected(case: Case, pocl_out: dict | None, numpy_out: dict | None) -> dict:
    """Expected outputs: PoCL where it provides them, the NumPy reference elsewhere and for the
    bits of NaN results (PoCL's are x86 LLVM's, see "bits_nan")."""
    if pocl_out is None:
        assert numpy_out is not None
        return numpy_out
    exp = {}
    for out in case.outputs:
        p = pocl_out[out.name]
        if out.pocl == "all" or numpy_out is None:
            exp[out.name] = p
        elif out.pocl == "none":
            exp[out.name] = numpy_out[out.name]
        else:
            m = out.pocl(numpy_out)  # masks only look at shapes
            e = numpy_out[out.name].copy()
            e.reshape(-1)[m.reshape(-1)] = p.reshape(-1)[m.reshape(-1)]
            exp[out.name] = e
        if numpy_out is not None and exp[out.name].dtype.kind == "f":
            e, r = exp[out.name].copy(), numpy_out[out.name]
            nan = np.isnan(e) & np.isnan(r)
            e[nan] = r[nan]
            exp[out.name] = e
    return exp


# ---- vadd ------------------------------------------------------------------------------------


def _make_vadd(case, rng):
    n_grid = case.shape.global_size

    def floats():
        a = rng.standard_normal(n_grid).astype(np.float32) * np.float32(1000)
        bits = _rand_u32(rng, n_grid).view(np.float32)  # every class incl. NaN payloads
        sel = rng.random(n_grid) < 0.3
        a[sel] = bits[sel]
        return _place(rng, a, F32_EDGES)

    a, b = floats(), floats()
    b[:8] = -a[:8]  # exact cancellation -> +0
    return [
        Arg("a", a, "in"),
        Arg("b", b, "in"),
        Arg("c", _sentinel(n_grid, np.float32), "out"),
        Arg("n", np.uint32(case.params["n"]), "scalar"),
    ]


def _ref_vadd(case, a):
    n = int(a["n"])
    c = a["c"].copy()
    with np.errstate(all="ignore"):
        c[:n] = a["a"][:n] + a["b"][:n]
    return {"c": c}


# ---- private_array -------------------------------------------------------------------------


def _make_private_array(case, rng):
    n = case.shape.global_size
    return [
        Arg("in", _place(rng, _rand_i32(rng, n), I32_EDGES), "in"),
        Arg("out", _sentinel(n, np.int32), "out"),
        Arg("rounds", np.uint32(case.params["rounds"]), "scalar"),
    ]


def _ref_private_array(case, a):
    seed = a["in"].view(np.uint32).astype(np.uint32)
    n = seed.size
    lanes = np.arange(n)
    arr = (seed[:, None] * np.uint32(3) + np.arange(64, dtype=np.uint32)[None, :]).astype(np.uint32)
    idx = (seed & np.uint32(63)).astype(np.int64)
    acc = np.zeros(n, np.uint32)
    for _ in range(int(a["rounds"])):
        acc = acc + arr[lanes, idx]
        j = (idx + 5) & 63
        arr[lanes, j] ^= acc
        idx = (idx * 5 + 1) & 63
    out = acc + arr[lanes, lanes & 63]
    return {"out": out.view(np.int32)}


# ---- lds_reduce ------------------------------------------------------------------------------


def _make_lds_reduce(case, rng):
    n = case.shape.global_size
    x = _place(rng, _rand_u32(rng, n), U32_EDGES)
    x[:256] = 0xFFFFFFFF  # group 0 wraps many times
    return [Arg("in", x, "in"), Arg("out", _sentinel(case.shape.groups + 3, np.uint32), "out")]


def _ref_lds_reduce(case, a):
    g = case.shape.groups
    out = a["out"].copy()
    out[:g] = a["in"].astype(np.uint64).reshape(g, 256).sum(axis=1).astype(np.uint32)
    return {"out": out}


# ---- atomics ---------------------------------------------------------------------------------

ATOMIC_INIT = np.array([0, INT_MAX, INT_MIN, -1, 0, 0, INT_MIN, 0], np.int32)


def _make_atomics(case, rng):
    n = case.shape.global_size
    v = _rand_i32(rng, n)
    if case.params.get("small_values"):
        v = (v % 2001 - 1000).astype(np.int32)
    v = _place(rng, v, [INT_MIN, INT_MAX, 0, -1])
    return [
        Arg("counters", ATOMIC_INIT.copy(), "inout"),
        Arg("in", v, "in"),
        Arg("old", _sentinel(n, np.int32), "out"),
    ]


def _ref_atomics(case, a):
    v = a["in"]
    c = ATOMIC_INIT.copy()
    s = np.int32(np.uint32(v.view(np.uint32).astype(np.uint64).sum() & 0xFFFFFFFF).view(np.int32))
    c[0] = s
    c[1] = min(INT_MAX, int(v.min()))
    c[2] = max(INT_MIN, int(v.max()))
    c[5] = s
    c[6] = c[2]
    c[7] = case.shape.groups
    # order-dependent (checked by invariants only): c[3], c[4], old[]
    c[3] = v.size - 1
    c[4] = 1
    return {"counters": c, "old": np.concatenate([[-1], np.arange(v.size - 1)]).astype(np.int32)}


def compare_atomics(case: Case, expected: dict, got: dict, args: dict, groups="shape") -> None:
    """Order-independent atomics results: final add/min/max counters, number of groups, the
    xchg values (old[] + final counters[3] = {-1, 0..N-1} as a multiset), one cmpxchg winner."""
    n = case.shape.global_size
    ce, cg, old = expected["counters"], got["counters"], got["old"]
    k = case.kernel
    names = {
        0: "sum (atomic_add)",
        1: "min (atomic_min)",
        2: "max (atomic_max)",
        5: "sum of local atomic_add sums",
        6: "max of local atomic_max",
    }
    for i, what in names.items():
        assert cg[i] == ce[i], f"{k}: counters[{i}] = {what}: expected {_fmt(ce[i])}, got {_fmt(cg[i])}"
    if groups == "shape":
        assert cg[7] == case.shape.groups, (
            f"{k}: counters[7] (one per workgroup whose local cmpxchg/xchg/min/max worked): "
            f"expected {case.shape.groups}, got {int(cg[7])}"
        )
    assert 1 <= cg[4] <= n, f"{k}: counters[4] (cmpxchg winner gid+1) = {int(cg[4])}, not in 1..{n}"
    vals = np.sort(np.concatenate([old.reshape(-1), cg[3:4]]).astype(np.int64))
    want = np.arange(-1, n, dtype=np.int64)
    if not np.array_equal(vals, want):
        missing = np.setdiff1d(want, vals)[:5]
        u, cnt = np.unique(vals, return_counts=True)
        dup = u[cnt > 1][:5]
        extra = np.setdiff1d(vals, want)[:5]
        raise AssertionError(
            f"{k}: old[] + final counters[3] is not a permutation of {{-1, 0..{n - 1}}} "
            f"(atomic_xchg chain): missing {missing.tolist()}, duplicated {dup.tolist()}, "
            f"unexpected {extra.tolist()}; counters[3] = {int(cg[3])}"
        )


# ---- divergent_loop --------------------------------------------------------------------------


def _make_divergent_loop(case, rng):
    n = case.shape.global_size
    trip = rng.integers(0, case.params["max_trip"], size=n).astype(np.uint32)
    trip[rng.random(n) < 0.15] = 0
    trip[rng.choice(n, size=max(1, n // 50), replace=False)] = case.params["long_trip"]
    return [Arg("trip", trip, "in"), Arg("out", _sentinel(n, np.uint32), "out")]


def _ref_divergent_loop(case, a):
    trip = a["trip"].astype(np.int64)
    n = trip.size
    x = np.arange(n, dtype=np.uint32)
    acc = np.zeros(n, np.uint32)
    live = trip > 0
    i = 0
    while live.any():
        xl = x[live] * np.uint32(1103515245) + np.uint32(12345)
        x[live] = xl
        al = acc[live]
        al = np.where(xl & np.uint32(0x10000), al + (xl >> np.uint32(16)), al ^ xl).astype(np.uint32)
        brk = ((al & np.uint32(0x80000000)) == 0) & ((al & np.uint32(0xFF)) == 0x5A)
        j = (xl & np.uint32(7)).astype(np.uint32)
        for _ in range(7):
            m = (j != 0) & ~brk
            al = np.where(m, al * np.uint32(3) + j, al).astype(np.uint32)
            j = np.where(m, j - np.uint32(1), j).astype(np.uint32)
        acc[live] = al
        idx = np.flatnonzero(live)
        i += 1
        live[idx[brk]] = False
        live &= trip > i
    return {"out": acc}


# ---- int64_math ------------------------------------------------------------------------------


def _make_int64(case, rng):
    n = case.shape.global_size
    a = _place(rng, _rand_u64(rng, n), U64_EDGES)
    b = _place(rng, _rand_u64(rng, n), U64_EDGES)
    small = rng.random(n) < 0.25  # small divisors / shift counts
    b[small] = rng.integers(0, 1000, size=int(small.sum())).astype(np.uint64)
    a[:3] = b[:3]  # x == y
    return [Arg("a", a, "in"), Arg("b", b, "in"), Arg("out", _sentinel(8 * n, np.uint64), "out")]


def _bit_length_u64(v: np.ndarray) -> np.ndarray:
    v = v.copy()
    bl = np.zeros(v.size, np.int64)
    for sh in (32, 16, 8, 4, 2, 1):
        m = v >= (np.uint64(1) << np.uint64(sh))
        bl[m] += sh
        v[m] >>= np.uint64(sh)
    return bl + (v > 0)


def _popcount_u64(v: np.ndarray) -> np.ndarray:
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(v).astype(np.uint64)
    return np.unpackbits(v.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1).astype(np.uint64)


def _ref_int64(case, a):
    x, y = a["a"].astype(np.uint64), a["b"].astype(np.uint64)
    u = np.uint64
    s = y & u(63)
    d = y | u(1)
    o = np.empty((x.size, 8), np.uint64)
    o[:, 0] = x * y
    o[:, 1] = x + y - (y << u(7))
    o[:, 2] = x // d
    o[:, 3] = x % d
    o[:, 4] = (x.view(np.int64) >> s.astype(np.int64)).view(np.uint64)
    o[:, 5] = (x << s) ^ (x >> (u(63) - s))
    xs = x.view(np.int64)
    den = (d | (u(1) << u(62))).view(np.int64)  # negative when y has bit 63 set
    q = [
        abs(p) // abs(r) * (1 if (p < 0) == (r < 0) else -1)  # C: truncate toward zero
        for p, r in zip(xs.tolist(), den.tolist())
    ]
    o[:, 6] = np.array(q, dtype=np.int64).view(np.uint64)
    clz = (64 - _bit_length_u64(y | u(1))).astype(np.uint64)
    o[:, 7] = (
        _popcount_u64(x)
        + u(64) * clz
        + np.where(x > y, u(1) << u(40), u(0))
        + (xs < y.view(np.int64)).astype(np.uint64)
    )
    return {"out": o.reshape(-1)}


# ---- double_math -----------------------------------------------------------------------------


def _fma64_special(x: float, y: float, z: float) -> float:
    """fma with a NaN or infinite operand, by RDNA's NaN rules (docs/float-semantics.md "NaN
    results"; NumPy's scalar ops may return either NaN): the first NaN of x, y quieted; an
    invalid product (0 x inf) the default NaN even with a NaN z; then a NaN z quieted."""

    def quiet(v):
        return np.array([v]).view(np.uint64) | np.uint64(1 << 51)

    for v in (x, y):
        if v != v:
            return float(quiet(v).view(np.float64)[0])
    if (x == 0 and math.isinf(y)) or (math.isinf(x) and y == 0):
        return float(np.uint64(0xFFF8000000000000).view(np.float64))
    if z != z:
        return float(quiet(z).view(np.float64)[0])
    with np.errstate(all="ignore"):
        return float(np.float64(x) * np.float64(y) + np.float64(z))  # inf - inf: the default NaN


def fma64(a, b, c) -> np.ndarray:
    """Exact fused multiply-add on float64 arrays (correctly rounded once, IEEE specials)."""
    a, b, c = np.broadcast_arrays(
        np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64)
    )
    out = np.empty(a.shape, np.float64)
    for i, (x, y, z) in enumerate(
        zip(a.reshape(-1).tolist(), b.reshape(-1).tolist(), c.reshape(-1).tolist())
    ):
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            out.flat[i] = _fma64_special(x, y, z)
            continue
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        if exact == 0:
            prod_neg = (math.copysign(1.0, x) * math.copysign(1.0, y)) < 0
            both_neg_zero = (x == 0 or y == 0) and z == 0 and prod_neg and math.copysign(1.0, z) < 0
            out.flat[i] = -0.0 if both_neg_zero else 0.0
            continue
        try:
            out.flat[i] = exact.numerator / exact.denominator  # correctly rounded (CPython)
        except OverflowError:
            out.flat[i] = math.inf if exact > 0 else -math.inf
    return out


def _make_double(case, rng):
    n = case.shape.global_size

    def vals():
        v = rng.uniform(-1e6, 1e6, n)
        m = rng.random(n)
        v[m < 0.2] = rng.uniform(-4, 4, int((m < 0.2).sum()))
        bits = rng.integers(0, np.iinfo(np.uint64).max, size=n, endpoint=True, dtype=np.uint64).view(
            np.float64
        )
        v[m > 0.8] = bits[m > 0.8]  # every class incl. NaN payloads
        return _place(rng, v, F64_SPECIAL)

    x, y = vals(), vals()
    x[:4] = [1.5e308, -1.5e308, 2.5, -0.0]  # fma(fmax, 2, fmin) overflow edge
    y[:4] = [-1.5e308, 1.5e308, 2.5, 0.0]
    return [Arg("a", x, "in"), Arg("b", y, "in"), Arg("out", _sentinel(8 * n, np.float64), "out")]


def _double_defined(a) -> np.ndarray:
    """out[8g+7] is UB for NaN or out-of-range conversions; out[8g+6] (fmin/fmax) has an
    unspecified zero sign when x and y are zeros of different signs (IEEE 754-2008 minNum/maxNum:
    PoCL on x86 gives -0.0 for x=-0, y=+0); everything else is defined."""
    x, y = a["a"], a["b"]
    with np.errstate(all="ignore"):
        ok7 = (
            np.isfinite(x)
            & (np.trunc(x) >= INT_MIN)
            & (np.trunc(x) <= INT_MAX)
            & np.isfinite(y)
            & (np.abs(y) * 1000.0 < 2.0**64)
        )
    m = np.ones((x.size, 8), bool)
    m[:, 6] = ~((x == 0) & (y == 0) & (np.signbit(x) != np.signbit(y)))
    m[:, 7] = ok7
    return m.reshape(-1)


def _ref_double(case, a):
    x, y = a["a"], a["b"]
    o = np.empty((x.size, 8), np.float64)
    with np.errstate(all="ignore"):
        o[:, 0] = x + y
        o[:, 1] = fma64(x, y, -y)  # clang contracts x*y - y (v_fma_f64; PoCL too)
        o[:, 2] = x / y
        o[:, 3] = fma64(x, y, 0.5)
        o[:, 4] = np.sqrt(np.abs(x))
        o[:, 5] = np.floor(x) + np.ceil(y)
        o[:, 6] = fma64(np.fmax(x, y), 2.0, np.fmin(x, y))  # contracted: v_fma_f64 max, 2.0, min
        ok = _double_defined(a).reshape(-1, 8)[:, 7]
        xi = np.where(ok, np.trunc(x), 0).astype(np.int64).astype(np.float64)
        yu = np.where(ok, np.trunc(np.abs(y) * 1000.0), 0)
        o[:, 7] = np.where(ok, (xi + yu) + x.astype(np.float32).astype(np.float64), 0.0)
    return {"out": o.reshape(-1)}


# ---- lane_ops --------------------------------------------------------------------------------


def _make_lane_ops(case, rng):
    n = case.shape.global_size
    v = _place(rng, _rand_i32(rng, n), I32_EDGES)

    def halves():
        h = rng.uniform(-8, 8, 2 * n).astype(np.float16)
        bits = rng.integers(0, 1 << 16, size=2 * n, dtype=np.uint32).astype(np.uint16).view(np.float16)
        sel = rng.random(2 * n) < 0.3
        h[sel] = bits[sel]
        return _place(
            rng,
            h,
            np.array(
                [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 6e-08, 6.1e-05, 1.0, -1.0, 2.0, 0.5], np.float16
            ),
        )

    cin = rng.integers(0, 256, size=4 * n, dtype=np.int64).astype(np.uint8)
    sin = _place(
        rng,
        rng.integers(-32768, 32768, size=2 * n, dtype=np.int64).astype(np.int16),
        [-32768, 32767, 0, -1, 1, -4, 3],
    )
    return [
        Arg("in", v, "in"),
        Arg("out", _sentinel(6 * n, np.int32), "out"),
        Arg("h", halves(), "in"),
        Arg("h2", halves(), "in"),
        Arg("hout", _sentinel(2 * n, np.float16), "out"),
        Arg("cin", cin, "in"),
        Arg("sin", sin, "in"),
    ]


def lane_ops_cross_lane(v: np.ndarray, wave: int, block: int) -> np.ndarray:
    """out[6g+0..4] for full waves: lane = local id mod wave (waves are consecutive local ids)."""
    n = v.size
    g = np.arange(n)
    lid = g % block
    lane = lid % wave
    base = g - lane  # gid of the wave's lane 0
    row = lane & ~15
    r = lane & 15
    o = np.empty((n, 5), np.int32)
    o[:, 0] = v[base + (lane ^ 1)]  # quad_perm [1,0,3,2]
    o[:, 1] = np.where(r == 0, -1, v[np.maximum(g - 1, 0)])  # row_shr:1, old = -1 in lane 0 of a row
    o[:, 2] = v[base + row + (15 - r)]  # row_mirror
    o[:, 3] = v[base + row + (r ^ 1)]  # permlane16 with sel = i^1
    o[:, 4] = v[base + (lane ^ 16)]  # permlanex16: same lane, other row
    return o


def _ref_lane_ops(case, a):
    n = a["in"].size
    o = np.empty((n, 6), np.int32)
    o[:, :5] = lane_ops_cross_lane(a["in"], case.params["wave"], case.shape.block)
    c = a["cin"].reshape(n, 4).astype(np.int64)
    s = a["sin"].reshape(n, 2).astype(np.int64)
    u = (
        ((c[:, 0] * c[:, 1]) & 0xFF)
        + ((s[:, 0] * s[:, 1]) & 0xFFFF)
        + (c[:, 2] >> 3) * ((c[:, 3] + 7) & 0xFF)
    )
    hi = (s[:, 1] >> 2) << 8  # (uint)(short)(s.y >> 2) << 8
    o[:, 5] = ((u ^ hi) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    # hout = h * h2 + (1, -2), fused (v_pk_fma_f16): the f64 product of two halves is exact and
    # the sum is exact wherever it could matter for the final f16 rounding -> one correct rounding.
    h = a["h"].astype(np.float64).reshape(n, 2)
    h2 = a["h2"].astype(np.float64).reshape(n, 2)
    with np.errstate(all="ignore"):
        hout = (h * h2 + np.array([1.0, -2.0])).astype(np.float16)
    return {"out": o.reshape(-1), "hout": hout.reshape(-1)}


def _lane_ops_pocl_mask(a) -> np.ndarray:
    """PoCL provides out[6g+5] only (the cross-lane builtins have no CPU equivalent)."""
    n = a["out"].size // 6
    m = np.zeros((n, 6), bool)
    m[:, 5] = True
    return m.reshape(-1)


# ---- private_bytes ---------------------------------------------------------------------------


def _make_private_bytes(case, rng):
    n = case.shape.global_size
    return [
        Arg("in", _place(rng, _rand_u32(rng, n), U32_EDGES), "in"),
        Arg("out", _sentinel(n, np.uint32), "out"),
    ]


def _ref_private_bytes(case, a):
    seed = a["in"].astype(np.uint32)
    n = seed.size
    lanes = np.arange(n)
    b = (seed[:, None] + np.arange(256, dtype=np.uint32)[None, :] * np.uint32(7)).astype(np.uint8)
    s = (seed[:, None] * np.uint32(13) + np.arange(128, dtype=np.uint32)[None, :] * np.uint32(1021)).astype(
        np.uint16
    )
    idx = (seed & np.uint32(255)).astype(np.int64)
    acc = np.zeros(n, np.uint32)
    for _ in range(12):
        acc = acc + b[lanes, idx].astype(np.uint32) + s[lanes, idx & 127].astype(np.uint32)
        b[lanes, (idx * 3) & 255] = acc.astype(np.uint8)
        s[lanes, (idx + 9) & 127] = (acc * np.uint32(5)).astype(np.uint16)
        idx = (idx + b[lanes, idx].astype(np.int64) + 1) & 255
    out = (
        acc
        + (b[lanes, lanes & 255].astype(np.uint32) << np.uint32(16))
        + s[lanes, (seed >> np.uint32(8)).astype(np.int64) & 127].astype(np.uint32)
    )
    return {"out": out.astype(np.uint32)}


# ---- spill -----------------------------------------------------------------------------------

NV = 40
# spill: 120 dependent fp32 multiply-adds per work-item; clang-19 fuses every one into v_fma_f32
# (-O2: 120 v_fma_f32, -O0: one in its loop), so the reference is the fused float32 result, bit
# for bit (exact.fma_f32); an unfused translation differs in thousands of elements.


def _make_spill(case, rng):
    n = case.shape.global_size
    x = rng.uniform(-0.5, 0.5, NV * n).astype(np.float32)
    x[:NV] = 0.0
    x[NV : NV + 8] = [-0.0, 0.5, -0.5, 1e-40, -1e-40, 1e-30, 0.25, 0.125]
    return [Arg("in", x, "in"), Arg("out", _sentinel(NV * n, np.float32), "out")]


def _ref_spill(case, a):
    v = a["in"].reshape(-1, NV).copy()
    for _ in range(3):
        for i in range(NV):
            v[:, i] = fma_f32(v[:, i], v[:, (i + 7) % NV], v[:, (i + 13) % NV])
    return {"out": v.reshape(-1)}


# ---- call ------------------------------------------------------------------------------------


def _make_call(case, rng):
    n = case.shape.global_size
    k = _rand_i32(rng, n)
    small = rng.random(n) < 0.4
    k[small] = rng.integers(-100, 100, size=int(small.sum()))
    return [Arg("in", _place(rng, k, I32_EDGES), "in"), Arg("out", _sentinel(n, np.int32), "out")]


def _helper(arr: np.ndarray, k: np.ndarray) -> np.ndarray:
    n = k.size
    lanes = np.arange(n)
    t = arr[:, :16] ^ k[:, None]
    s = np.zeros(n, np.uint32)
    for i in range(32):
        s = (
            s
            + arr[lanes, (np.uint32(i) * k & np.uint32(31)).astype(np.int64)] * np.uint32(i + 1)
            + t[lanes, ((k + np.uint32(i)) & np.uint32(15)).astype(np.int64)]
        )
    arr[lanes, (k & np.uint32(31)).astype(np.int64)] = s
    return s


def _ref_call(case, a):
    k = a["in"].view(np.uint32).astype(np.uint32)
    n = k.size
    lanes = np.arange(n)
    arr = (k[:, None] + np.arange(32, dtype=np.uint32)[None, :]).astype(np.uint32)
    r1 = _helper(arr, k)
    r2 = _helper(arr, (k + np.uint32(3)).astype(np.uint32))
    out = r1 * np.uint32(3) + r2 + arr[:, 5] + arr[lanes, lanes & 31]
    return {"out": out.astype(np.uint32).view(np.int32)}


# ---- the table -------------------------------------------------------------------------------


def _shapes(small: tuple[int, int], large: tuple[int, int]) -> list[Shape]:
    return [Shape("small", *small), Shape("large", *large, slow=True)]


def cases_for(kernel: str, wave: int = 32) -> list[Case]:
    """Every Case of one fixture kernel (lane_ops' reference depends on the wave size)."""
    C = Case
    out: list[Case] = []
    if kernel == "vadd":
        for sh in _shapes((328, 128), (1920 * 64 + 77, 256)):
            out.append(
                C(
                    "vadd",
                    "basic.cl",
                    sh,
                    _make_vadd,
                    _ref_vadd,
                    (Output("c", "bits_nan"),),
                    params=dict(n=sh.global_size - 28),
                )
            )
    elif kernel == "private_array":
        for sh, rounds in zip(_shapes((328, 128), (4096 + 37, 192)), (37, 100)):
            out.append(
                C(
                    "private_array",
                    "basic.cl",
                    sh,
                    _make_private_array,
                    _ref_private_array,
                    (Output("out"),),
                    params=dict(rounds=rounds),
                )
            )
    elif kernel == "lds_reduce":
        for sh in _shapes((3 * 256, 256), (64 * 256, 256)):
            out.append(C("lds_reduce", "basic.cl", sh, _make_lds_reduce, _ref_lds_reduce, (Output("out"),)))
    elif kernel == "atomics":
        for sh in _shapes((328, 128), (8192 + 100, 256)):
            out.append(
                C("atomics", "basic.cl", sh, _make_atomics, _ref_atomics, (Output("counters", "atomics"),))
            )
    elif kernel == "divergent_loop":
        for sh, mt, lt in zip(_shapes((328, 128), (8192 + 5, 192)), (24, 40), (150, 400)):
            out.append(
                C(
                    "divergent_loop",
                    "basic.cl",
                    sh,
                    _make_divergent_loop,
                    _ref_divergent_loop,
                    (Output("out"),),
                    params=dict(max_trip=mt, long_trip=lt),
                )
            )
    elif kernel == "int64_math":
        for sh in _shapes((328, 128), (8192 + 33, 256)):
            out.append(C("int64_math", "math.cl", sh, _make_int64, _ref_int64, (Output("out", per=8),)))
    elif kernel == "double_math":
        for sh in _shapes((328, 128), (4096 + 33, 256)):
            out.append(
                C(
                    "double_math",
                    "math.cl",
                    sh,
                    _make_double,
                    _ref_double,
                    (Output("out", "bits_nan", per=8, defined=_double_defined),),
                )
            )
    elif kernel == "lane_ops":
        for sh in _shapes((320, 128), (8192 + 128, 256)):
            out.append(
                C(
                    "lane_ops",
                    "math.cl",
                    sh,
                    _make_lane_ops,
                    _ref_lane_ops,
                    (
                        Output("out", per=6, pocl=_lane_ops_pocl_mask),
                        Output("hout", "bits_nan", per=2, pocl="none", agree=("ulp16", 1)),
                    ),
                    params=dict(wave=wave),
                )
            )
    elif kernel == "private_bytes":
        for sh in _shapes((328, 128), (4096 + 37, 256)):
            out.append(
                C("private_bytes", "math.cl", sh, _make_private_bytes, _ref_private_bytes, (Output("out"),))
            )
    elif kernel == "spill":
        for sh in _shapes((328, 128), (4096 + 37, 256)):
            out.append(C("spill", "stack.cl", sh, _make_spill, _ref_spill, (Output("out", per=NV),)))
    elif kernel == "call":
        for sh in _shapes((328, 128), (4096 + 37, 256)):
            out.append(C("call", "stack.cl", sh, _make_call, _ref_call, (Output("out"),)))
    else:
        raise KeyError(f"no cases for kernel {kernel!r}")
    return out


KERNELS = (
    "vadd",
    "private_array",
    "lds_reduce",
    "atomics",
    "divergent_loop",
    "int64_math",
    "double_math",
    "lane_ops",
    "private_bytes",
    "spill",
    "call",
)


def all_cases(wave: int = 32) -> list[Case]:
    return [c for k in KERNELS for c in cases_for(k, wave)]


# ---- expected values -------------------------------------------------------------------------


def numpy_expected(case: Case, args: list[Arg]) -> dict | None:
    if case.reference is None:
        return None
    return case.reference(case, _by_name(args))


def pocl_expected(case: Case, args: list[Arg]) -> dict:
    """Run the case on PoCL (raises pocl.PoclUnavailable) and return its outputs by name."""
    from . import pocl

    res = pocl.run(
        case.source, case.kernel, [a.value for a in args], (case.shape.global_size,), case.pocl_local()
    )
    return {a.name: r for a, r in zip(args, res) if r is not None and a.role in ("out", "inout")}


__all__ = [
    "Shape",
    "Arg",
    "Output",
    "Case",
    "KERNELS",
    "cases_for",
    "all_cases",
    "compare",
    "compare_oracles",
    "compare_output",
    "compare_atomics",
    "merge_expected",
    "numpy_expected",
    "pocl_expected",
    "fma64",
    "lane_ops_cross_lane",
    "SENTINEL_BYTE",
]
