"""WAVELIFT_CUDA_STATS's forms (decision 0009's amendments h146, h162 and session 53's: auto, the
default, block, pair; wave the form before) on the device: a dispatch's instruction and lane
counts -- and its memory, write spans and escapes -- NumPy's, with one and with several
workgroups a CUDA block (decision 0046), wave32 and wave64, partial last groups
(test_cuda_groups_per_block's GPU cases); fixture dispatches with LDS and barriers (where block
gives way to pair); and full-screen vadd, thousands of blocks on the 256 slots, equal to the
per-wave atomics' counts.  Each module's source is checked for the count call that ran (the call
site, not kernel.h's definitions, which every source holds).  Skips without CuPy or a device."""

from __future__ import annotations

import copy

import pytest
import test_cuda_backend as T
import test_cuda_groups_per_block as GPB

pytestmark = pytest.mark.cuda

# the kernel's count call of each form (codegen.stats_form; auto: block or pair)
CALL = {
    "wave": ("wl_count_(C.wave, lane, icnt + ic, lc);",),
    "pair": ("wl_count_pair(C.wave, lane, icnt + ic, lc);",),
    "block": ("wl_count_block(lane < 32u, icnt + ic, lc);",),
}
CALL["auto"] = CALL["block"] + CALL["pair"]


def _ran(stats: str, src: str, may_block: bool = True) -> bool:
    """the source's count call is one of ``stats``'s (block only where ``may_block``)"""
    want = [c for c in CALL[stats] if may_block or "block" not in c] or list(CALL["pair"])
    return any(c in src for c in want) and not any(c in src for k in CALL for c in CALL[k] if c not in want)


@pytest.mark.parametrize("gpb", ["1", "8"])
@pytest.mark.parametrize(
    "case", ["vadd-w32-partial", "vadd-w64-partial", "shade-w32-partial-2d", "scratch_game-w64-wave"]
)
@pytest.mark.parametrize("stats", ["auto", "block", "pair"])
def test_stats_forms_count_as_numpy(stats, case, gpb, monkeypatch, tmp_path):
    T._needs_gpu()
    monkeypatch.setenv("WAVELIFT_CUDA_STATS", stats)
    monkeypatch.setenv(GPB.SETTING, gpb)
    mod, cfg = GPB._gpu_equal(case, monkeypatch, tmp_path)  # (NumPy's counts, memory, spans)
    assert _ran(stats, mod.source) and mod.groups == int(gpb)


@pytest.mark.parametrize("pattern", ["lds_reduce", "stack-O2-w64-flat", "fullscreen-w32", "lane_ops"])
@pytest.mark.parametrize("stats", ["auto", "block", "pair"])
def test_stats_forms_on_fixtures(stats, pattern, monkeypatch):
    """the counts NumPy's and the per-wave atomics'; block only where no LDS or barrier"""
    T._needs_gpu()
    from wavelift.run.execute import execute_dispatch

    hits = [d for d in T._dispatches() if pattern in d[0]][:2]
    assert hits, pattern
    for name, mem, cfg in hits:
        want = execute_dispatch(copy.deepcopy(mem), cfg, backend="numpy", mode="lane", cache={})
        monkeypatch.setenv("WAVELIFT_CUDA_STATS", "wave")
        m1 = copy.deepcopy(mem)
        r1 = execute_dispatch(m1, cfg, backend="cuda", mode="lane", cache={})
        monkeypatch.setenv("WAVELIFT_CUDA_STATS", stats)
        m2, cache = copy.deepcopy(mem), {}
        r2 = execute_dispatch(m2, cfg, backend="cuda", mode="lane", cache=cache)
        assert (r1.refusal and r1.refusal.code) == (r2.refusal and r2.refusal.code), name
        for k in ("escapes", "instructions", "lane_instructions"):
            assert r1.stats[k] == r2.stats[k], (name, k)
        assert r1.write_spans == r2.write_spans and not T._compare(m1, m2), name
        if r2.refusal is None and want.refusal is None:
            assert r2.stats["instructions"] == want.stats["instructions"], name
            assert r2.stats["lane_instructions"] == want.stats["lane_instructions"], name
        srcs = [getattr(mod, "source", "") for mod in cache.values()]
        assert r2.refusal or any(_ran(stats, s, "lds" not in pattern) for s in srcs), name


@pytest.mark.parametrize("wave", [32, 64])
def test_stats_forms_full_screen(wave, monkeypatch, tmp_path):
    """vadd over 1920 x 1088 lanes (8,160 blocks of 256): each form's counts the per-wave ones,
    run after run on the same memory (the report is reset: a second run counts only its own)"""
    T._needs_gpu()
    import sys

    sys.path.insert(0, str(GPB.HERE.parent.parent / "bench"))
    import gpu_check as GC

    from wavelift.run.execute import execute_dispatch

    mem, cfg = GC.vadd_dispatch(1920 * 1088, wave)[:2]
    got = {}
    for stats in ("wave", "auto", "pair", "block"):
        monkeypatch.setenv("WAVELIFT_CUDA_STATS", stats)
        m, cache = copy.deepcopy(mem), {}
        for _ in range(2):
            r = execute_dispatch(m, cfg, backend="cuda", mode="lane", cache=cache)
            assert r.refusal is None, (stats, r.refusal)
            got.setdefault(stats, set()).add((r.stats["instructions"], r.stats["lane_instructions"]))
    assert len(got["wave"]) == 1 and all(v == got["wave"] for v in got.values()), got
    ins, lanes = next(iter(got["wave"]))
    assert ins > 0 and lanes >= 1920 * 1088  # (every lane ran a vector instruction at least)
