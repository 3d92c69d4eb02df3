"""Scratch in the native tier (docs/decisions/0020-native-scratch-atomics-calls.md): the ACO and
RADV-LLVM scratch fixtures and clang-19's private-memory kernels run with every block native --
the driver in two threads, and native blocks under the Python scheduler -- in wave and lane mode,
bit for bit equal to the NumPy blocks and to the NumPy references.  (The hand-assembled rules,
escapes included, run in all three tiers in test_scratch_asm.py.)
"""

from __future__ import annotations

import numpy as np
import pytest
from reference import cases as C
from references import FIX, ROOT, ref_scratch_game, run_scratch_array, run_scratch_game

import wavelift
from wavelift.backends import host

pytestmark = pytest.mark.skipif(host.compiler() is None, reason="no host C++ compiler")

TIERS = ("numpy", "native", "native-blocks")


def _tier(monkeypatch, cache, tier):
    from wavelift.backends.numpy import runtime

    monkeypatch.setattr(runtime, "NATIVE", "off" if tier == "numpy" else "on")
    monkeypatch.setattr(runtime, "NATIVE_DRIVER", tier == "native")
    monkeypatch.setattr(runtime, "NATIVE_THREADS", 2)
    monkeypatch.setattr(runtime, "NATIVE_THREAD_MIN_WAVES", 0)
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(cache))


def _native(r, tier):
    assert r.landed, r.refusal
    if tier == "numpy":
        assert not r.stats["native"]
    else:  # every block ran native
        assert r.stats["native"] and r.stats["numpy_blocks"] == {} and r.stats["numpy_block_runs"] == 0, (
            r.stats
        )
        assert r.stats["native_driver"] == (tier == "native")


GAME = [
    ("gfx1030", "aco/scratch_game-w32"),
    ("gfx1030", "aco/scratch_game-w64"),
    ("gfx1010", "aco/scratch_game-w64"),
]
ARRAY = [
    ("gfx1030", "radv-llvm/scratch_array-w32"),
    pytest.param("gfx1030", "radv-llvm/scratch_array-w64", marks=pytest.mark.slow),
    # (ACO's scratch_array: one C++ compile of ~1 min on 2 cores)
    pytest.param("gfx1030", "aco/scratch_array-w32", marks=pytest.mark.slow),
    pytest.param("gfx1030", "aco/scratch_array-w64", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("target,name", GAME, ids=[f"{t}-{n}" for t, n in GAME])
def test_scratch_game_native(target, name, mode, monkeypatch, _native_cache):
    outs = {}
    for tier in TIERS:
        _tier(monkeypatch, _native_cache, tier)
        dev = wavelift.Device(target, backend="numpy", mode=mode)
        r, _, got, (seeds, steps) = run_scratch_game(dev, FIX / target / f"{name}.json", (5, 3))
        _native(r, tier)
        outs[tier] = got
        np.testing.assert_array_equal(got, ref_scratch_game(seeds, steps), err_msg=tier)
    for tier in TIERS[1:]:
        np.testing.assert_array_equal(outs[tier], outs["numpy"], err_msg=tier)


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("target,name", ARRAY)
def test_scratch_array_native(target, name, mode, monkeypatch, _native_cache):
    outs = {}
    for tier in TIERS:
        _tier(monkeypatch, _native_cache, tier)
        dev = wavelift.Device(target, backend="numpy", mode=mode)
        r, _, got, want = run_scratch_array(dev, FIX / target / f"{name}.json", groups=3)
        _native(r, tier)
        outs[tier] = got
        np.testing.assert_array_equal(got, want, err_msg=tier)
    for tier in TIERS[1:]:
        np.testing.assert_array_equal(outs[tier], outs["numpy"], err_msg=tier)


# clang-19: MUBUF and flat scratch, -O0 (everything spilled) and -O2 (private_bytes: scratch_*
# accesses that cross a dword, carried out byte by byte)
# (private_bytes: one C++ compile of 1.5 min on 2 cores)
CLANG = [
    ("basic-O2-w32-mubuf", "private_array"),
    ("basic-O0-w64-flat", "private_array"),
    pytest.param("math-O2-w32-flat", "private_bytes", marks=pytest.mark.slow),
    pytest.param("math-O2-w64-flat", "private_bytes", marks=pytest.mark.slow),
    ("stack-O0-w32-flat", "spill"),
]


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("stem,kname", CLANG)
def test_clang_private_memory_native(stem, kname, mode, monkeypatch, _native_cache):
    path = ROOT / "tests" / "fixtures" / "gfx1030" / f"{stem}.hsaco"
    case = next(iter(C.cases_for(kname, 64 if "w64" in stem else 32)))
    args = case.args()
    outs = {}
    for tier in TIERS:
        _tier(monkeypatch, _native_cache, tier)
        dev = wavelift.Device("gfx1030", backend="numpy", mode=mode)
        k = dev.load_code_object(str(path)).kernel(kname)
        bufs = {a.name: dev.upload(a.value, name=a.name) for a in args if a.is_buffer}
        r = k.launch(**case.shape.launch_kwargs(), args=[bufs.get(a.name, a.value) for a in args])
        _native(r, tier)
        got = {
            a.name: dev.download(bufs[a.name], a.value.dtype).reshape(a.value.shape)
            for a in args
            if a.is_buffer
        }
        C.compare(case, C.numpy_expected(case, args), got, C._by_name(args))
        outs[tier] = got
    for tier in TIERS[1:]:
        for n in outs["numpy"]:
            np.testing.assert_array_equal(outs[tier][n], outs["numpy"][n], err_msg=f"{tier}: {n}")
