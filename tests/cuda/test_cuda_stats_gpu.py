"""WAVELIFT_CUDA_STATS=last and =pair (decision 0009's amendment h162) on the device: a dispatch's
instruction and lane counts -- and its memory, write spans and escapes -- NumPy's, with one and
with several workgroups a CUDA block (decision 0046), wave32 and wave64, partial last groups
(test_cuda_groups_per_block's GPU cases); fixture dispatches with LDS and barriers (where `last`
keeps the per-wave count and `pair` applies); and full-screen vadd, thousands of blocks on the
256 slots, equal to the per-wave atomics' counts.  Skips without CuPy or a device."""

from __future__ import annotations

import copy

import pytest
import test_cuda_backend as T
import test_cuda_groups_per_block as GPB

pytestmark = pytest.mark.cuda

FORM = {"last": "wl_count_last(", "pair": "wl_count_pair("}


@pytest.mark.parametrize("gpb", ["1", "8"])
@pytest.mark.parametrize(
    "case", ["vadd-w32-partial", "vadd-w64-partial", "shade-w32-partial-2d", "scratch_game-w64-wave"]
)
@pytest.mark.parametrize("stats", ["last", "pair"])
def test_stats_forms_count_as_numpy(stats, case, gpb, monkeypatch, tmp_path):
    T._needs_gpu()
    monkeypatch.setenv("WAVELIFT_CUDA_STATS", stats)
    monkeypatch.setenv(GPB.SETTING, gpb)
    mod, cfg = GPB._gpu_equal(case, monkeypatch, tmp_path)  # (NumPy's counts, memory, spans)
    assert FORM[stats] in mod.source and mod.groups == int(gpb)


@pytest.mark.parametrize("pattern", ["lds_reduce", "stack-O2-w64-flat", "fullscreen-w32", "lane_ops"])
@pytest.mark.parametrize("stats", ["last", "pair"])
def test_stats_forms_on_fixtures(stats, pattern, monkeypatch):
    """the counts NumPy's and the per-wave atomics'; `last` only where no LDS or barrier"""
    T._needs_gpu()
    from wavelift.run.execute import execute_dispatch

    hits = [d for d in T._dispatches() if pattern in d[0]][:2]
    assert hits, pattern
    for name, mem, cfg in hits:
        want = execute_dispatch(copy.deepcopy(mem), cfg, backend="numpy", mode="lane", cache={})
        monkeypatch.delenv("WAVELIFT_CUDA_STATS", raising=False)
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
        lds = "lds" in pattern
        assert any(FORM[stats] in s for s in srcs) != (lds and stats == "last") or r2.refusal, name


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
    for stats in (None, "last", "pair", "block"):
        if stats is None:
            monkeypatch.delenv("WAVELIFT_CUDA_STATS", raising=False)
        else:
            monkeypatch.setenv("WAVELIFT_CUDA_STATS", stats)
        m, cache = copy.deepcopy(mem), {}
        for _ in range(2):
            r = execute_dispatch(m, cfg, backend="cuda", mode="lane", cache=cache)
            assert r.refusal is None, (stats, r.refusal)
            got.setdefault(stats, set()).add((r.stats["instructions"], r.stats["lane_instructions"]))
    assert len(got[None]) == 1 and all(v == got[None] for v in got.values()), got
    ins, lanes = next(iter(got[None]))
    assert ins > 0 and lanes >= 1920 * 1088  # (every lane ran a vector instruction at least)
