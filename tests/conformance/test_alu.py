"""Conformance: the ALU cases (cases.py) x every registered backend, against ir/interp.py.

Every pure value op of the op table, in every type variant the IR defines it on (cases.VARIANTS),
on random operands plus edge values (0, +-1, the extremes, powers of two; for floats +-0, +-inf,
NaNs quiet and signaling with payloads, denormals, rounding ties), is evaluated by
wavelift/ir/interp.py, the reference, and lowered and run by each backend through its own
interface (backends/base.py: build_module, run; conformance_rig.py), with the operands per lane and uniform,
and (two-operand ops) with either operand a constant (CONST_VARIANTS: what lowerings and the
passes treat apart): the results must be the same bits, NaN bits included
(docs/float-semantics.md, decision 0017).  fin/fout (the MODE denormal flushes) run under each
combination of MODE's flush fields.

* NumPy blocks and the NumPy backend's native tier (host C++; skips without a compiler), run
  here (the tier at -O0 by default, at the user's flags under ``-m slow``);
* CUDA: without a GPU its build of the whole program is NVRTC-compiled (the fast tier by
  default, the optimising build of both modes under ``-m slow``); with one (``-m cuda``) it runs
  in lane and wave mode and is compared like the others.

A backend disagreeing with interp is a finding: fix the backend or interp (whichever is wrong
per the ISA), or list the case in XFAIL with why: its per-variant test is xfail(strict=True),
and the runs that check many variants at once leave it out.
"""

from __future__ import annotations

import functools
import pathlib

import conformance_rig as rig
import numpy as np
import pytest
from cases import (
    CONST_VARIANTS,
    MODE_OPS,
    MODE_VARIANTS,
    MODES,
    NOT_HERE,
    VARIANTS,
    bits_of,
    operands,
    reference,
)

from wavelift.backends import base
from wavelift.ir import ops

ROOT = pathlib.Path(__file__).resolve().parents[2]
GROUPS = 8  # waves: 256 lane cases and 8 wave cases per variant
SLOW_GROUPS = 64
CONST_GROUPS = 2  # (one operand is a constant: 64 lane cases and 2 wave cases a constant)
HOST_PARTS = ("numpy", "numpy-native")  # parts run here: NumPy blocks, the native tier
# (part, variant id) -> why it disagrees with interp (an xfail(strict=True) case): none today
XFAIL: dict[tuple[str, str], str] = {}


# ---- the cases cover the table, and interp evaluates them --------------------------------------


def test_every_pure_op_has_cases():
    """A new op row fails here until it has cases (or a reason in NOT_HERE)."""
    named = {v.name for v in VARIANTS}
    assert named | set(NOT_HERE) == set(ops.PURE_OPS), sorted(set(ops.PURE_OPS) ^ (named | set(NOT_HERE)))
    assert not named & set(NOT_HERE)
    assert {v.name for v in MODE_VARIANTS} == set(MODE_OPS)
    assert len({v.id for v in VARIANTS}) == len(VARIANTS)
    assert len({v.id for v in CONST_VARIANTS}) == len(CONST_VARIANTS) > 1000


def test_interp_evaluates_every_case():
    for which, groups in (("ops", GROUPS), ("const", CONST_GROUPS)):
        for v, (_, ok) in zip(SETS[which], _reference(groups, which)):
            assert ok.all(), f"{v.id}: interp does not evaluate {int((~ok).sum())} cases"


def test_registered_backends_are_covered():
    """Every registered backend (and tier) has a place here: run on the host, or NVRTC-compiled
    without a GPU and run with one."""
    assert set(_parts()) == {*HOST_PARTS, "cuda"}, sorted(_parts())


def _parts() -> dict:
    """Every registered backend and tier by name."""
    return {p.name: p for b in base.registered() for p in (b, *b.tiers)}


# ---- the runs ----------------------------------------------------------------------------------


# the case sets: the variants; fin/fout (run under each of MODES); constant operands
SETS = {"ops": VARIANTS, "mode": MODE_VARIANTS, "const": CONST_VARIANTS}


@functools.cache
def _layout(groups: int, which: str = "ops", wave: int = 32, chunk: int = 0, chunks: int = 1) -> rig.Layout:
    """The set's variants (every ``chunks``-th from ``chunk``: a program of a fraction of them,
    which the GPU test compiles apart, in parallel)."""
    return rig.Layout(SETS[which][chunk::chunks], groups, wave)


@functools.cache
def _program(groups: int, which: str = "ops", wave: int = 32, chunk: int = 0, chunks: int = 1):
    return rig.program(_layout(groups, which, wave, chunk, chunks))


@functools.cache
def _reference(
    groups: int, which: str = "ops", mode: int | None = None, wave: int = 32, chunk: int = 0, chunks: int = 1
) -> list:
    """interp's (results, evaluated?) per variant of a set (``mode``: MODE for fin/fout)."""
    lay = _layout(groups, which, wave, chunk, chunks)
    n = lay.lanes + lay.groups
    return [reference(v, operands(v, n), mode) for v in lay.variants]


def _all_differences(lay: rig.Layout, part: str, out, refs, prefix: str = "") -> list[str]:
    bad = []
    for k, (want, ok) in enumerate(refs):
        if (part, lay.variants[k].id) not in XFAIL:
            bad += [prefix + line for line in _differences(lay, k, out, want, ok)]
    return bad


def _run(
    part: str,
    groups: int,
    tmp,
    which: str = "ops",
    float_mode: int = 0xF0,
    flags: str = "-O0",
    wave: int = 32,
    extra: tuple = (),
):
    """Run the cases on a host part -> ``out``; the native tier must have run every block
    (``extra``: more compiler flags for it)."""
    from wavelift.backends import host, native
    from wavelift.backends.numpy import runtime

    with pytest.MonkeyPatch.context() as mp:
        if part == "numpy":
            mp.setattr(runtime, "NATIVE", "off")
        else:
            if host.compiler() is None:
                pytest.skip("no host C++ compiler (clang++-19 / g++): the native tier is not available")
            mp.setattr(runtime, "NATIVE", "on")
            mp.setenv("WAVELIFT_NATIVE_CACHE", str(tmp))
            if flags:
                mp.setattr(native, "FLAGS", tuple(flags if f.startswith("-O") else f for f in native.FLAGS))
            mp.setattr(native, "FLAGS", native.FLAGS + extra)
        before = len(native.PROBLEMS)
        lay, prog = _layout(groups, which, wave), _program(groups, which, wave)
        out, info = rig.run("numpy", lay, prog, float_mode=float_mode)
        if part != "numpy":
            assert native.PROBLEMS[before:] == [], native.PROBLEMS[before:][:1]
            extra = info.counts.extra
            assert extra.get("native") and not extra.get("numpy_block_runs"), str(extra)[:2000]
    return out


def _differences(lay: rig.Layout, k: int, out: np.ndarray, want: np.ndarray, ok: np.ndarray) -> list[str]:
    """Where variant k's results in ``out`` are not interp's, in words (one line per operand shape)."""
    v = lay.variants[k]
    lanes, waves = lay.results(out, k)
    cols = operands(v, lay.lanes + lay.groups)
    bad = []
    shapes = (
        ("per-lane operands", lanes, want[: lay.lanes], ok[: lay.lanes], lambda i: i),
        (
            "uniform operands",
            waves,
            np.repeat(want[lay.lanes :], lay.wave),
            np.repeat(ok[lay.lanes :], lay.wave),
            lambda i: lay.lanes + i // lay.wave,
        ),
    )
    for what, got, w, m, case in shapes:
        d = np.flatnonzero(m & (got != w))
        if d.size:
            i = int(d[0])
            x = [hex(int(bits_of(c[case(i) : case(i) + 1])[0])) for c in cols]
            bad.append(
                f"{v.id}, {what}: {d.size} of {int(m.sum())} differ; e.g. operands {x} -> "
                f"{int(got[i]):#x}, interp {int(w[i]):#x}"
            )
    return bad


@pytest.fixture(scope="module")
def host_runs(tmp_path_factory):
    """part -> ``out`` of the default cases (run once per part)."""
    got: dict = {}

    def get(part):
        if part not in got:
            got[part] = _run(part, GROUPS, tmp_path_factory.mktemp("native"))
        return got[part]

    return get


def _cases():
    out = []
    for part in HOST_PARTS:
        for k, v in enumerate(VARIANTS):
            why = XFAIL.get((part, v.id))
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            out.append(pytest.param(part, k, id=f"{part}-{v.id}", marks=marks))
    return out


@pytest.mark.parametrize("part,k", _cases())
def test_backend_matches_interp(host_runs, part, k):
    if VARIANTS[k].name not in _parts()[part].lowers():
        pytest.skip(f"{part} declares {VARIANTS[k].name} unsupported")
    want, ok = _reference(GROUPS)[k]
    bad = _differences(_layout(GROUPS), k, host_runs(part), want, ok)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("part", HOST_PARTS)
def test_mode_flushes_match_interp(part, tmp_path):
    """fin/fout under every combination of MODE's denormal fields (flush in, out, both, none)."""
    lay = _layout(GROUPS, "mode")
    bad = []
    for fm in MODES:
        out = _run(part, GROUPS, tmp_path, "mode", fm)
        refs = _reference(GROUPS, "mode", fm | 0x100)  # (MODE's DX10_CLAMP: rig.config)
        bad += _all_differences(lay, part, out, refs, f"MODE {fm | 0x100:#x}: ")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("part", HOST_PARTS)
def test_constant_operands_match_interp(part, tmp_path):
    """Each two-operand variant with a constant operand (CONST_VARIANTS: zeros, one, all ones,
    the sign bit, inf, NaNs, ...): the passes' identities and the lowerings' constant forms."""
    lay = _layout(CONST_GROUPS, "const")
    out = _run(part, CONST_GROUPS, tmp_path, "const")
    bad = _all_differences(lay, part, out, _reference(CONST_GROUPS, "const"))
    assert not bad, "\n".join(bad[:40]) + f"\n({len(bad)} differ)"


# The WL_GPU_NANS fix-ups are the same C++ at either wave size: wave64 by default (the default
# run's one wave64 rig on the native tier; wave32 native runs in test_backend_matches_interp),
# wave32 under -m slow (each build took 80-95 s on the loaded 2-core host, half this file's time).
@pytest.mark.parametrize("wave", [pytest.param(32, marks=pytest.mark.slow), 64])
def test_native_with_gpu_nans_matches_interp(wave, tmp_path):
    """The native tier built with WL_GPU_NANS (cfamily/host.h: its f32 intrinsics and libm calls
    return NaNs as an NVIDIA GPU does, canonical, without payload) still equals interp: every NaN
    fix-up the CUDA build needs is there, checked without a GPU (fract, sqrt.f16 and ldexp lacked
    theirs and differed on the H100 only)."""
    bad = []
    for which, groups in (("ops", GROUPS), ("const", CONST_GROUPS)):
        out = _run("numpy-native", groups, tmp_path, which, wave=wave, extra=("-DWL_GPU_NANS",))
        refs = _reference(groups, which, None, wave)
        bad += _all_differences(_layout(groups, which, wave), "numpy-native", out, refs)
    assert not bad, "\n".join(bad[:40]) + f"\n({len(bad)} differ)"


@pytest.mark.slow
@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("part", HOST_PARTS)
def test_backend_matches_interp_many(part, wave, tmp_path):
    """More cases (SLOW_GROUPS waves), wave32 and wave64, the native tier at the user's flags
    (WAVELIFT_NATIVE_OPT)."""
    lay = _layout(SLOW_GROUPS, "ops", wave)
    out = _run(part, SLOW_GROUPS, tmp_path, flags="", wave=wave)
    bad = _all_differences(lay, part, out, _reference(SLOW_GROUPS, "ops", None, wave))
    assert not bad, "\n".join(bad[:40]) + f"\n({len(bad)} differ)"


# ---- CUDA ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "which,mode,tier",
    [
        ("ops", "lane", "fast"),
        pytest.param("ops", "lane", "off", marks=pytest.mark.slow),
        pytest.param("ops", "wave", "off", marks=pytest.mark.slow),
        pytest.param("const", "lane", "fast", marks=pytest.mark.slow),
    ],
)
def test_cuda_build_compiles(which, mode, tier, monkeypatch, tmp_path):
    """Without a GPU: the CUDA backend builds the whole case program (NVRTC): every variant's
    lowering is valid CUDA.  The fast tier by default; the optimising builds and the constant
    operands' program under -m slow."""
    from wavelift.backends.cuda.compile import nvrtc_problem

    why = nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", tier)
    groups = CONST_GROUPS if which == "const" else GROUPS
    lay = _layout(groups, which)
    m = base.get("cuda").build_module(
        rig.key(lay, mode, 0xF0), _program(groups, which), rig.config(lay), mode, rig.CODE
    )
    assert m.cubin[:4] == b"\x7fELF" and m.compiled_by == ("nvrtc-fast" if tier == "fast" else "nvrtc")


# the GPU test's programs: each set in CUDA_CHUNKS programs of every CUDA_CHUNKS-th variant
# (NVRTC's time grows faster than a program: the whole const set's optimising build takes 63 s
# of CPU, a sixth of it 4 s; the chunks build in parallel under -n)
CUDA_CHUNKS = 6


def test_chunks_hold_every_variant_once():
    for which in SETS:
        got = [v.id for k in range(CUDA_CHUNKS) for v in _layout(2, which, 32, k, CUDA_CHUNKS).variants]
        assert sorted(got) == sorted(v.id for v in SETS[which]), which


@pytest.mark.cuda
@pytest.mark.parametrize("chunk", range(CUDA_CHUNKS))
@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("mode", ["lane", "wave"])
def test_cuda_matches_interp_on_the_gpu(mode, wave, chunk, monkeypatch, tmp_path):
    why = base.problem("cuda")
    if why:
        pytest.skip(why)
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    part = (chunk, CUDA_CHUNKS)
    bad = []
    for which, groups in (("ops", GROUPS), ("const", CONST_GROUPS)):
        lay = _layout(groups, which, wave, *part)
        out, _ = rig.run("cuda", lay, _program(groups, which, wave, *part), mode)
        bad += _all_differences(lay, "cuda", out, _reference(groups, which, None, wave, *part))
    lay = _layout(GROUPS, "mode", wave, *part)
    if lay.variants:
        for fm in MODES:
            out, _ = rig.run("cuda", lay, _program(GROUPS, "mode", wave, *part), mode, fm)
            refs = _reference(GROUPS, "mode", fm | 0x100, wave, *part)
            bad += _all_differences(lay, "cuda", out, refs, f"MODE {fm | 0x100:#x}: ")
    assert not bad, "\n".join(bad[:40]) + f"\n({len(bad)} differ)"


@pytest.mark.slow
def test_cases_hold_every_variant_programs_emit():
    """Every pure op variant of the fixture programs and the per-opcode ALU programs (as
    tests/cuda/test_cuda_ops_host.py harvests them) is a case here (or MODE_VARIANTS)."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "cuda"))
    from test_cuda_ops_host import _variants

    have = {(v.name, v.type, v.args, tuple(sorted(v.attrs.items()))) for v in VARIANTS + MODE_VARIANTS}
    seen = 0
    for op in _variants():
        if op.name in ops.PURE_OPS and op.name not in NOT_HERE:
            seen += 1
            k = (op.name, op.type, tuple(x.type for x in op.args), tuple(sorted(op.attrs.items())))
            assert k in have, f"{k}: emitted by a program, not a conformance case"
    assert seen > 150
