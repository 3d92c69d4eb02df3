"""WAVELIFT_CUDA_COUNT_SLOTS (decision 0009's amendment h152) on the device: with the counts in
1024, 4096 or 16384 slots folded into the report's 256 by wl_fold, each of a few fixture
dispatches reports NumPy's instruction count and the 256-slot build's lane instructions, run
after run on the same memory (wl_fold zeroes the slots: a second run counts only its own), with
the per-wave atomics and with WAVELIFT_CUDA_STATS=block.  Skips without CuPy or a device."""

from __future__ import annotations

import pytest
from test_cuda_backend import _needs_gpu

pytestmark = pytest.mark.cuda

# fixture dispatches: wave32 without barriers or LDS (STATS=block applies), wave64, LDS and barriers;
# each one's instruction count the same run after run on the same memory (NumPy, checked on the CPU)
SAMPLE = ("basic-O2-w32-flat:vadd", "stack-O2-w64-flat", "lds_reduce")
_NUMPY: dict = {}  # fixture name -> NumPy's result (one run: the oracle of every slot count)


@pytest.mark.parametrize("slots, stats", [(1024, None), (4096, "block"), (16384, None)])
def test_count_slots_count_as_numpy(slots, stats, monkeypatch):
    _needs_gpu()
    import copy

    from test_cuda_backend import _dispatches

    from wavelift.run.execute import execute_dispatch

    if stats is None:
        monkeypatch.delenv("WAVELIFT_CUDA_STATS", raising=False)
    else:
        monkeypatch.setenv("WAVELIFT_CUDA_STATS", stats)
    every = _dispatches()
    hits = [d for p in SAMPLE for d in [d for d in every if p in d[0]][:1]]
    assert len(hits) == len(SAMPLE), [d[0] for d in hits]
    for name, mem, cfg in hits:
        if name not in _NUMPY:
            _NUMPY[name] = execute_dispatch(copy.deepcopy(mem), cfg, backend="numpy", mode="lane", cache={})
        want = _NUMPY[name]
        assert want.refusal is None, (name, want.refusal)
        monkeypatch.delenv("WAVELIFT_CUDA_COUNT_SLOTS", raising=False)
        base = execute_dispatch(copy.deepcopy(mem), cfg, backend="cuda", mode="lane", cache={})
        monkeypatch.setenv("WAVELIFT_CUDA_COUNT_SLOTS", str(slots))
        m, cache = copy.deepcopy(mem), {}
        for i in range(3):  # (the same memory: a slot wl_fold left nonzero would count twice)
            r = execute_dispatch(m, cfg, backend="cuda", mode="lane", cache=cache)
            assert r.refusal is None, (name, i, r.refusal)
            assert r.stats["instructions"] == want.stats["instructions"], (name, i)
            assert r.stats["lane_instructions"] == base.stats["lane_instructions"], (name, i)
        # (the wide form was what ran: the module's source holds it)
        srcs = [getattr(mod, "source", "") for mod in cache.values()]
        assert any(f"#define WL_WIDE_SLOTS {slots}u" in s for s in srcs), name
