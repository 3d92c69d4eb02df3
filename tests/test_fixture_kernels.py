"""Execution of real clang-19 code objects (tests/fixtures/<gfx>/*.hsaco) against independent
oracles: the same OpenCL source run on PoCL (tests/reference/pocl.py) and NumPy references
(tests/reference/cases.py), which are first checked against each other.

Matrix: every clang manifest entry (gfx1030/gfx1010 x O0/O2 x w32/w64 x MUBUF/flat scratch) x
every kernel in it x every case (small by default, large marked slow) x mode (wave, lane; lane
mode outside gfx1030 -O2 is marked slow too).

A wrong result, a refusal or a write into an input fails the test with the kernel, variant,
first wrong index and expected vs got.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

TESTS = pathlib.Path(__file__).resolve().parent
ROOT = TESTS.parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from reference import cases as C  # noqa: E402
from reference import pocl  # noqa: E402

# wavelift's runs of the matrix are marked `tiers` (NumPy blocks and the native tier,
# tests/conftest.py); the oracle tests run no program

MANIFEST = json.loads((TESTS / "fixtures" / "manifest.json").read_text())
CLANG = [b for b in MANIFEST["binaries"] if b["kind"] == "clang"]
MODES = ("wave", "lane")
# The default run covers the whole matrix in wave mode (but HEAVY_DEFAULT below) and lane mode
# on gfx1030 -O2 (w32/w64 x MUBUF/flat); the other lane-mode variants are marked slow with the
# large shapes (`pytest -m "slow or not slow"` runs everything).
LANE_DEFAULT = ("gfx1030", "O2")
# Tiers (tests/conftest.py): NumPy blocks run every test above.  The native tier ("native", with
# its driver, and "native-blocks", its blocks under the Python scheduler; one compile serves both)
# runs on the variants below by default — one per scratch kind, both wave sizes, -O0 and -O2 (the
# -O0 builds of basic/math take 30-60 s each to compile: -O0 through stack and gfx1010) — and
# on the rest of the matrix under `slow`: the tier's C++ is the same for every variant of one
# instruction mix, and the spill/private_bytes programs at -O2 (thousands of instructions
# through scratch) each take a minute or more to compile, which the default run cannot afford.
TIERS = ("numpy", "native", "native-blocks")
NATIVE_DEFAULT = (
    "gfx1030/stack-O0-w32-flat",
    "gfx1030/basic-O2-w64-mubuf",
    "gfx1030/math-O2-w64-mubuf",
    "gfx1030/stack-O2-w64-mubuf",
    "gfx1010/basic-O2-w32-flat",
    "gfx1010/stack-O0-w64-mubuf",
)
NATIVE_COMPILE_HEAVY = {("O2", "spill"), ("O2", "private_bytes")}
# divergent_loop at -O0 (its loop through scratch) takes 10-25 s a variant on NumPy blocks, a
# fifth of this file's time (h114, loaded 2-core host): by default two of its eight -O0 variants
# run, gfx1030 w32 flat and gfx1010 w64 mubuf (each target, wave size and scratch kind once);
# the other six under `slow`.  Every other basic-O0 kernel still runs on all eight variants.
HEAVY_DEFAULT = {("O0", "divergent_loop"): ("gfx1030/basic-O0-w32-flat", "gfx1010/basic-O0-w64-mubuf")}


def _variant(b) -> str:
    return f"{b['target']}/{pathlib.Path(b['path']).stem}"


def _engine_params():
    for b in CLANG:
        for kname in b["kernels"]:
            for case in C.cases_for(kname, b["wave_size"]):
                for mode in MODES:
                    for tier in TIERS:
                        slow = case.shape.slow or (
                            mode == "lane" and (b["target"], b["opt_level"]) != LANE_DEFAULT
                        )
                        heavy = HEAVY_DEFAULT.get((b["opt_level"], kname))
                        slow = slow or (heavy is not None and _variant(b) not in heavy)
                        if tier != "numpy":
                            slow = slow or (
                                _variant(b) not in NATIVE_DEFAULT
                                or (b["opt_level"], kname) in NATIVE_COMPILE_HEAVY
                            )
                        marks = [pytest.mark.slow] if slow else []
                        yield pytest.param(
                            b["path"],
                            kname,
                            case.shape.name,
                            mode,
                            tier,
                            marks=marks,
                            id=f"{tier}-{_variant(b)}-{kname}-{case.shape.name}-{mode}",
                        )


def _case_params():
    for k in C.KERNELS:
        for case in C.cases_for(k):
            marks = [pytest.mark.slow] if case.shape.slow else []
            yield pytest.param(k, case.shape.name, marks=marks, id=case.id)


def _case(kname: str, shape: str, wave: int = 32) -> C.Case:
    for c in C.cases_for(kname, wave):
        if c.shape.name == shape:
            return c
    raise KeyError((kname, shape))


def _binary(path: str) -> dict:
    return next(b for b in CLANG if b["path"] == path)


# ---- expected values (once per session per case) -------------------------------------------

_EXPECTED: dict = {}


def expected_for(case: C.Case) -> tuple[dict, str]:
    """(expected outputs by name, where they came from): PoCL where it can produce them, the
    NumPy reference for the rest, or the NumPy reference alone when PoCL is unavailable."""
    key = (case.id, case.params.get("wave"))
    if key not in _EXPECTED:
        args = case.args()
        np_out = C.numpy_expected(case, args)
        reason = pocl.unavailable_reason()
        if reason is None:
            try:
                p_out = C.pocl_expected(case, args)
            except pocl.PoclUnavailable as e:
                reason = str(e)
        if reason is None:
            _EXPECTED[key] = (
                C.merge_expected(case, p_out, np_out),
                "PoCL" + (" + NumPy" if np_out is not None else ""),
            )
        elif np_out is not None:
            _EXPECTED[key] = (np_out, f"NumPy (PoCL unavailable: {reason})")
        else:
            _EXPECTED[key] = (None, f"PoCL unavailable and no NumPy reference: {reason}")
    exp, src = _EXPECTED[key]
    if exp is None:
        pytest.skip(src)
    return exp, src


# ---- the oracles themselves ------------------------------------------------------------------


def test_pocl_shim_builds_every_fixture_source():
    reason = pocl.unavailable_reason()
    if reason:
        pytest.skip(f"PoCL unavailable: {reason}")
    for src in sorted({c.source for c in C.all_cases()}):
        prg = pocl.program(src)
        names = {k.function_name for k in prg.all_kernels()}
        want = {c.kernel for c in C.all_cases() if c.source == src}
        assert want <= names, f"{src} on PoCL lacks {sorted(want - names)}"


def test_every_manifest_kernel_has_cases():
    kernels = {k for b in CLANG for k in b["kernels"]}
    assert kernels == set(C.KERNELS), f"manifest {sorted(kernels)} vs cases {C.KERNELS}"
    assert len(CLANG) == 48


@pytest.mark.parametrize("kname,shape", list(_case_params()))
def test_oracles_agree(kname, shape):
    """PoCL and the NumPy reference agree (on everything PoCL can compute)."""
    reason = pocl.unavailable_reason()
    if reason:
        pytest.skip(f"PoCL unavailable: {reason}")
    for wave in (32, 64) if kname == "lane_ops" else (32,):
        case = _case(kname, shape, wave)
        args = case.args()
        np_out = C.numpy_expected(case, args)
        p_out = C.pocl_expected(case, args)
        C.compare_oracles(case, np_out, p_out, C._by_name(args))
        # inputs are not written by the kernel on PoCL either
        for a, after in zip(
            args,
            pocl.run(
                case.source,
                case.kernel,
                [x.value for x in args],
                (case.shape.global_size,),
                case.pocl_local(),
            ),
        ):
            if a.role == "in":
                assert np.array_equal(C._uview(a.value), C._uview(after)), f"{kname}: {a.name}"


@pytest.mark.parametrize("kname", C.KERNELS)
def test_comparison_catches_a_wrong_element(kname):
    """The comparison can fail: one corrupted element (or broken atomics invariant) is reported
    with its index."""
    case = _case(kname, "small")
    args = case.args()
    exp = C.numpy_expected(case, args)
    named = C._by_name(args)
    C.compare(case, exp, exp, named)  # equal passes
    bad = {k: v.copy() for k, v in exp.items()}
    out = case.outputs[0]
    if out.cmp == "atomics":
        bad["old"] = np.concatenate([exp["old"][:1], exp["old"][:-1]])  # a duplicated xchg value
        bad["counters"] = exp["counters"]
    else:
        arr = bad[out.name].reshape(-1)
        i = arr.size // 3
        while out.defined is not None and not out.defined(named)[i]:
            i += 1
        u = C._uview(arr)
        u[i] ^= np.array(1 << (8 * arr.dtype.itemsize - 2), u.dtype)  # a big flip in any format
        if out.cmp == "bits_nan" and np.isnan(arr[i]) and np.isnan(exp[out.name].reshape(-1)[i]):
            arr[i] = 1.0
    with pytest.raises(AssertionError, match=r"index|permutation"):
        C.compare(case, exp, bad, named)


# ---- wavelift against the oracles ----------------------------------------------------------


def _launch(b, case, mode, where):
    """Run ``case`` on wavelift -> (args, outputs by name); fails on a refusal."""
    import wavelift

    dev = wavelift.Device(b["target"], backend="numpy", mode=mode)
    co = dev.load_code_object(str(ROOT / b["path"]))
    k = co.kernel(case.kernel)
    args = case.args()
    launch_args, bufs = [], {}
    for a in args:
        if a.is_buffer:
            bufs[a.name] = dev.upload(a.value, name=a.name)
            launch_args.append(bufs[a.name])
        else:
            launch_args.append(a.value)
    r = k.launch(**case.shape.launch_kwargs(), args=launch_args)
    assert r is not None, f"{where}: launch returned no DispatchResult"
    assert r.landed, f"{where}: refused {r.refusal.code}: {r.refusal.message}"
    got = {
        a.name: dev.download(bufs[a.name], a.value.dtype).reshape(a.value.shape) for a in args if a.is_buffer
    }
    return args, got


# runs a program on each tier (TIERS above; the `tier` fixture of tests/conftest.py sets it up)
@pytest.mark.parametrize("path,kname,shape,mode,tier", list(_engine_params()), indirect=["tier"])
def test_fixture_kernel(path, kname, shape, mode, tier):
    b = _binary(path)
    case = _case(kname, shape, b["wave_size"])
    expected, source = expected_for(case)
    where = (
        f"{_variant(b)} kernel {kname} shape {shape} (grid {case.shape.global_size}, "
        f"block {case.shape.block}) mode {mode}; expected from {source}"
    )
    args, got = _launch(b, case, mode, where)
    for a in args:
        if a.role == "in":
            bad = np.flatnonzero(C._uview(a.value).reshape(-1) != C._uview(got[a.name]).reshape(-1))
            assert bad.size == 0, (
                f"{where}: input {a.name!r} was written: {bad.size} elements, first index {bad[0]}"
            )
    try:
        C.compare(case, expected, got, C._by_name(args))
    except AssertionError as e:
        raise AssertionError(f"{where}\n{e}") from None


def test_spill_catches_an_unfused_translation(monkeypatch):
    """The spill reference is the fused float32 result bit for bit: the same kernel with every
    f32 fma translated as a rounded multiply then an add (fresh modules) fails the comparison
    in thousands of elements."""
    from wavelift.backends.numpy import runtime
    from wavelift.frontend import instr_cache
    from wavelift.ir import builder
    from wavelift.run import execute

    emit = builder.Builder.emit

    def unfused(self, name, type, *args, **kw):
        if name == "fma" and type == "f32":
            return emit(self, "fadd", type, emit(self, "fmul", type, args[0], args[1]), args[2])
        return emit(self, name, type, *args, **kw)

    monkeypatch.setattr(builder.Builder, "emit", unfused)
    monkeypatch.setattr(execute, "_CACHE", {})
    # an earlier test in this process may hold v_fma_f32's fused IR in the per-instruction cache
    monkeypatch.setattr(instr_cache, "ENABLED", [False])
    # and NumPy blocks only: a native library built earlier for this module key (the disk cache
    # keys by what the translation is made from, not by a patched builder) would run fused code
    monkeypatch.setattr(runtime, "NATIVE", "off")
    b = next(x for x in CLANG if x["path"].endswith("gfx1030/stack-O2-w32-flat.hsaco"))
    case = _case("spill", "small")
    args, got = _launch(b, case, "wave", "spill, unfused")
    exp = C.numpy_expected(case, args)
    with pytest.raises(AssertionError, match=r"differs \(bits\) at (\d{4,}) of 13120") as e:
        C.compare(case, exp, got, C._by_name(args))
    print(e.value)
