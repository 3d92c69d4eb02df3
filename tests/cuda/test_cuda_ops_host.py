"""The CUDA backend's lowering of every pure value op that the fixture programs (by default
test_cuda_backend's codegen sample: -m slow checks that it holds every variant) and the per-opcode
ALU programs (tests/execute/alu_cases.py) contain, compiled for the host (g++, through wavelift/backends/host.py's shim) and run on the same operands as the NumPy
backend's lowering of that op: bit for bit equal.  Instruction semantics are written once per
backend, so this is what keeps the two lowerings in step without a GPU; bench/gpu_check.py does
the same per dispatch on the device.

Operand mix per op: random bit patterns plus the edges (zeros of both signs, infinities, NaNs
with payloads, denormals, the extremes of each integer type, values on and next to integers and
halves); shift amounts below the width, as the IR promises.  NaN results are compared bit for
bit too, f16 included: both sides make them as RDNA does (docs/float-semantics.md "NaN results";
the prelude's NaN fix-ups on the CUDA side).
Skips without g++ (and, for the per-opcode programs, without llvm-mc-19).
"""

from __future__ import annotations

import ctypes
import pathlib
import sys

import host_build  # (tests/cuda/host_build.py: the g++ build rig)
import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

N = 4096  # operands per op (a multiple of 32: [waves, lanes] on the NumPy side)
MODES = (0x3F0, 0x000, 0x0F0 & ~0x30, 0x0F0 & ~0xC0)  # denormals kept / flushed per MODE
_NP = {
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
_BITS = {
    "b1": 1,
    "u8": 8,
    "i8": 8,
    "u16": 16,
    "i16": 16,
    "u32": 32,
    "i32": 32,
    "u64": 64,
    "i64": 64,
    "f16": 16,
    "f32": 32,
    "f64": 64,
}
_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}

_SHIFTS = {"shl", "shr", "sar"}  # amounts below the width (the IR's promise)

SHIM_EXTRA = r"""
template <class T> static inline T wl_from_bits(unsigned long long v) { T x; memcpy(&x, &v, sizeof(T)); return x; }
template <> inline bool wl_from_bits<bool>(unsigned long long v) { return (v & 1ull) != 0ull; }
template <class T> static inline unsigned long long wl_to_bits(T x) { unsigned long long v = 0; memcpy(&v, &x, sizeof(T)); return v; }
template <> inline unsigned long long wl_to_bits<bool>(bool x) { return x ? 1ull : 0ull; }
"""


def _fixture_programs(every=False):
    """test_cuda_backend's codegen sample of the fixture programs (every axis value of their
    names: 31 of ~235, translated by name), or with ``every`` all of them (35-50 s of
    translation: -m slow's test_the_sample_holds_every_fixture_variant checks that the sample
    holds every variant the others do)."""
    import test_cuda_backend as T

    if every:
        return [p for _, p, *_ in T._programs() if p is not None]
    return [T._named(n)[1] for n in T._codegen_sample()]


def _programs():
    """The fixture programs' sample (_fixture_programs) and, with llvm-mc-19, a program per
    arithmetic VALU opcode (tests/execute's alu cases, both targets)."""
    progs = _fixture_programs()
    sys.path.insert(0, str(HERE.parent / "execute"))
    from asm import HAVE_MC

    if HAVE_MC:
        from test_alu_ops import CASES, encodings

        from wavelift.frontend.program import translate

        enc = encodings()
        for name, case in sorted(CASES.items()):
            if name in enc:
                progs.append(translate(enc["_pre"] + enc[name] + enc["_post"], case.target, 32, 0))
    return progs


def _harvest(progs) -> dict:
    """Distinct (op name, type, argument types, attrs) of the pure value ops in ``progs`` -> one
    op each."""
    from wavelift.backends.cuda.codegen import VALUE_EXPR

    seen: dict = {}
    for prog in progs:
        for b in prog.blocks:
            for op in b.ops:
                if op.name not in VALUE_EXPR or op.name == "const" or op.out is None:
                    continue
                seen.setdefault(_key(op), op)
    return seen


def _key(op) -> tuple:
    return (
        op.name,
        op.type,
        tuple(x.type for x in op.args),
        tuple(sorted((k, repr(v)) for k, v in op.attrs.items())),
    )


def _variants():
    """_harvest(_programs()), in key order."""
    seen = _harvest(_programs())
    return [seen[k] for k in sorted(seen)]


def _operands(t, rng, shift_width=None):
    """N operands of IR type t as numpy values."""
    if t == "b1":
        return rng.integers(0, 2, N).astype(bool)
    bits = _BITS[t]
    u = _UINT[bits]
    raw = rng.integers(0, 1 << 63, N, dtype=np.uint64) ^ (
        rng.integers(0, 2, N, dtype=np.uint64) << np.uint64(63)
    )
    raw = (raw & np.uint64((1 << bits) - 1)).astype(u)
    if shift_width is not None:
        raw = (raw % u(shift_width)).astype(u)
        return raw.view(_NP[t])
    if t.startswith("f"):
        ft = _NP[t]
        fi = np.finfo(ft)
        with np.errstate(over="ignore"):  # (edges past f16's range become its infinities)
            edges = np.array(
                [
                    0.0,
                    -0.0,
                    np.inf,
                    -np.inf,
                    1.0,
                    -1.0,
                    0.5,
                    -0.5,
                    1.5,
                    2.5,
                    -2.5,
                    float(fi.max),
                    -float(fi.max),
                    float(fi.tiny),
                    -float(fi.tiny),
                    float(fi.tiny) / 2,
                    -float(fi.tiny) / 4,
                    float(fi.smallest_subnormal),
                    3.0,
                    1e10,
                    -7.25,
                    0.49999997,
                    65504.0,
                    2.0**31,
                    -(2.0**31),
                    2.0**32,
                    2.0**63,
                    2.0**64,
                    4294967295.0,
                    -1e-3,
                ],
                dtype=np.float64,
            ).astype(ft)
        nans = (
            (
                np.array([0x7FC00000, 0xFFC00001, 0x7F800001, 0x7FA00123], np.uint64)
                if bits == 32
                else np.array([0x7E00, 0xFE01, 0x7C01, 0x7D23], np.uint64)
                if bits == 16
                else np.array(
                    [0x7FF8000000000000, 0xFFF8000000000001, 0x7FF0000000000001, 0x7FF4000000000123],
                    np.uint64,
                )
            )
            .astype(u)
            .view(ft)
        )
        near = (rng.integers(-40, 40, N).astype(np.float64) + rng.choice([0.0, 0.5, 0.25, 0.75], N)).astype(
            ft
        )
        x = raw.view(ft).copy()
        pick = rng.integers(0, 4, N)
        x[pick == 0] = rng.choice(np.concatenate([edges, nans]), int((pick == 0).sum()))
        x[pick == 1] = near[pick == 1]
        return x
    info = np.iinfo(_NP[t])
    edges = (
        np.array(
            [
                v & ((1 << bits) - 1)
                for v in (
                    0,
                    1,
                    2,
                    int(info.max),
                    int(info.min),
                    int(info.max) - 1,
                    int(info.min) + 1,
                    31,
                    32,
                    63,
                    64,
                )
            ],
            dtype=np.uint64,
        )
        .astype(u)
        .view(_NP[t])
    )
    x = raw.view(_NP[t]).copy()
    pick = rng.integers(0, 4, N) == 0
    x[pick] = rng.choice(edges, int(pick.sum()))
    return x


def _bits(x, width):
    """numpy values -> uint64 bit patterns, masked to width bits (booleans 0/1)."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return x.astype(np.uint64)
    v = x.view(_UINT[x.dtype.itemsize * 8]).astype(np.uint64)
    return v & np.uint64((1 << width) - 1) if width < 64 else v


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    host_build.gxx()
    from wavelift.backends import host
    from wavelift.backends.cfamily.lowering import I32_RESULT, ValueLowering

    ops = _variants()
    low = ValueLowering()
    fns, kinds = [], []
    for k, op in enumerate(ops):
        at = [x.type for x in op.args]
        ot = "i32" if op.name in I32_RESULT else ("b1" if op.name == "cmp" else op.type)
        if op.name in ("cvt", "bitcast"):
            ot = op.attrs["to"]
        e = low.value_expr(op, [f"a{i}" for i in range(len(at))], at)
        decl = "".join(
            f"    const {t} a{i} = wl_from_bits<{t}>(in[i * 4 + {i}]);\n" for i, t in enumerate(at)
        )
        fns.append(
            f'extern "C" void wl_op{k}(const u64* in, u64* out, long n, u32 mode) {{\n'
            f"  for (long i = 0; i < n; i++) {{\n    const u32 lane = (u32)(i & 31); (void)lane; (void)mode;\n"
            f"{decl}    const {ot} r = {e};\n    out[i] = wl_to_bits<{ot}>(r);\n  }}\n}}\n"
        )
        kinds.append(ot)
    flags = ("-O1", "-ffp-contract=off", "-std=c++17", "-w", "-shared", "-fPIC", f"-I{HERE}")
    source = host.prelude_semantics() + SHIM_EXTRA + "".join(fns)
    return host_build.load(tmp_path_factory.mktemp("ops"), "ops", source, flags), ops, kinds


def test_every_fixture_value_op_variant_is_checked(lowered):
    """The harvest is not empty and covers the op families compilers emit (so the check below
    cannot pass vacuously)."""
    _, ops, _ = lowered
    names = {op.name for op in ops}
    assert {"add", "and", "shl", "cmp", "select", "cvt", "pack64", "fadd", "fmul", "fma"} <= names
    assert len(ops) > 100


@pytest.mark.slow
def test_the_sample_holds_every_fixture_variant(lowered):
    """Every value-op variant of every fixture program is among those the default run checks
    (the sample's and the ALU programs'), so the checks below cover them all."""
    every = _harvest(_fixture_programs(every=True))
    checked = {_key(op) for op in lowered[1]}
    assert len(every) > 100
    assert set(every) <= checked, sorted(set(every) - checked)[:10]


def _numpy_env():
    from wavelift.backends.numpy import expr as NE
    from wavelift.backends.numpy import helpers as H

    R = type(
        "R",
        (),
        {"LANE": np.arange(32, dtype=np.uint32)[None, :], "LANE64": np.arange(32, dtype=np.uint64)[None, :]},
    )
    return NE.ExprLowering(None, 32), {"np": np, "H": H, "G": NE.G, "R": R, "N": N // 32}


def _runs(lowered):
    """Per op variant and MODE: (op, result type, operands, packed bits, CUDA result bits)."""
    lib, ops, kinds = lowered
    for k, (op, ot) in enumerate(zip(ops, kinds)):
        rng = np.random.default_rng(k)
        width = _BITS[op.type]
        args = [
            _operands(x.type, rng, width if op.name in _SHIFTS and i == 1 else None)
            for i, x in enumerate(op.args)
        ]
        if op.name == "maskbit":
            args[0] = np.repeat(args[0][::32], 32)
        packed = np.zeros((N, 4), np.uint64)
        for i, x in enumerate(args):
            packed[:, i] = _bits(x, 64 if x.dtype != np.bool_ else 1)
        for mode in MODES if op.name in ("fin", "fout") else (0x3F0,):
            got = np.zeros(N, np.uint64)
            getattr(lib, f"wl_op{k}")(
                packed.ctypes.data_as(ctypes.c_void_p),
                got.ctypes.data_as(ctypes.c_void_p),
                ctypes.c_long(N),
                ctypes.c_uint(mode),
            )
            yield op, ot, args, packed, mode, got


def _differ(op, ot, want, got):
    """Indices where NumPy's ``want`` (values) and CUDA's ``got`` (bits) disagree."""
    w = _bits(want.astype(_NP[ot]) if want.dtype != _NP[ot] else want, _BITS[ot])
    g = got & np.uint64((1 << _BITS[ot]) - 1) if _BITS[ot] < 64 else got
    differ = w != g
    return np.flatnonzero(differ), w, g


def _report(op, mode, diff, packed, g, w, n):
    i = int(diff[0])
    return (
        f"{op.name}.{op.type}({', '.join(x.type for x in op.args)}) {op.attrs} mode {mode:#x}: "
        f"{diff.size} of {n} differ; e.g. operands {[hex(int(v)) for v in packed[i, : len(op.args)]]} "
        f"-> CUDA {int(g[i]):#x}, NumPy {int(w[i]):#x}"
    )


def test_value_ops_agree_with_numpy(lowered):
    nlow, env = _numpy_env()
    bad = []
    for op, ot, args, packed, mode, got in _runs(lowered):
        # maskbit reads one uniform mask per wave (its operand is the same in a wave's lanes)
        shaped = [a[::32].reshape(-1, 1) if op.name == "maskbit" else a.reshape(-1, 32) for a in args]
        ns = dict(env, K=shaped, mode=mode)
        with np.errstate(all="ignore"):
            want = np.broadcast_to(
                np.asarray(eval(nlow.expr(op, [f"K[{i}]" for i in range(len(args))]), ns)), (N // 32, 32)
            ).reshape(-1)
        diff, w, g = _differ(op, ot, want, got)
        if diff.size:
            bad.append(_report(op, mode, diff, packed, g, w, N))
    assert not bad, "\n".join(bad[:25]) + f"\n({len(bad)} op variants differ)"


def test_value_ops_on_single_values_agree(lowered):
    """The same ops evaluated on single values by ir/interp.py, the passes' constant folding and
    the CUDA backend's preloads: where that evaluates at all, it gives the CUDA result (an op
    that needs lanes may refuse, never differ).  (On 0-d scalars NumPy picked other NaNs and cast
    a signaling NaN to 0xffffffff; hence operands filled into a wave's lanes there.)"""
    from wavelift.ir import interp

    bad, evaluated = [], 0
    m = 96
    for op, ot, args, packed, mode, got in _runs(lowered):
        if op.name == "maskbit":
            continue
        want, ok = np.zeros(m, _NP[ot]), np.zeros(m, bool)
        for i in range(m):
            r = interp.evaluate_op(op, [np.asarray(a[i])[()] for a in args])
            if r is not None:
                want[i], ok[i] = r.astype(_NP[ot]), True
        evaluated += int(ok.sum())
        diff, w, g = _differ(op, ot, want[ok], got[:m][ok])
        if diff.size:
            bad.append(_report(op, mode, diff, packed[:m][ok], g, w, int(ok.sum())))
    assert evaluated > 0.5 * m * 250
    assert not bad, "\n".join(bad[:25]) + f"\n({len(bad)} op variants differ)"
