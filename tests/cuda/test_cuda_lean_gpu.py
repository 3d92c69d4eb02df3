"""WAVELIFT_CUDA_F2I=cvt (decision 0009's amendment h146): an f32 -> u32 / i32 conversion as one
cvt.rzi gives cfamily's wl_f2i result -- the form the host tests hold to NumPy
(test_cuda_ops_host.py) -- for every one of the 2^32 f32 bit patterns, on the device.  Skips
without CuPy or a device."""

from __future__ import annotations

import pytest

from wavelift.backends.cuda import _gpu_problem

pytestmark = pytest.mark.cuda

KERNEL = r"""
extern "C" __global__ void f2i_all(unsigned long long* bad, unsigned* first) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
    const f32 x = __uint_as_float((u32)i);
    const u32 u0 = UREF, u1 = UNEW;
    const i32 s0 = SREF, s1 = SNEW;
    if (u0 != u1) { if (atomicAdd(bad, 1ull) == 0ull) first[0] = (u32)i; }
    if (s0 != s1) { if (atomicAdd(bad + 1, 1ull) == 0ull) first[1] = (u32)i; }
  }
}
"""


def test_cvt_rzi_is_wl_f2i_for_every_f32():
    why = _gpu_problem()
    if why:
        pytest.skip(f"no CUDA device: {why}")
    import cupy as cp

    from wavelift.backends.cfamily.lowering import ValueLowering
    from wavelift.backends.cuda.codegen import f2i_rzi
    from wavelift.backends.cuda.compile import OPTIONS
    from wavelift.backends.cuda.prelude import PRELUDE

    ref = ValueLowering()
    src = PRELUDE + KERNEL
    for k, frm_to in (("UREF", "u32"), ("SREF", "i32")):
        src = src.replace(k, ref.cvt("f32", frm_to, "x"))
    src = src.replace("UNEW", f2i_rzi("f32", "u32", "x")).replace("SNEW", f2i_rzi("f32", "i32", "x"))
    assert "wl_f2i<u32>" in src and "__float2uint_rz" in src and "__float2int_rz" in src
    fn = cp.RawKernel(src, "f2i_all", options=OPTIONS)
    bad, first = cp.zeros(2, cp.uint64), cp.zeros(2, cp.uint32)
    fn((4096,), (256,), (bad, first))
    b, f = bad.get(), first.get()
    assert b[0] == 0, f"u32: {int(b[0])} differ, first bits {int(f[0]):#010x}"
    assert b[1] == 0, f"i32: {int(b[1])} differ, first bits {int(f[1]):#010x}"


# fixture dispatches without barriers or LDS (the block form applies), wave32 and wave64
BLOCK_STATS_SAMPLE = ("basic-O2-w32-flat:vadd", "fullscreen-w32", "stack-O2-w64-flat", "lane_ops")


@pytest.mark.parametrize("pattern", BLOCK_STATS_SAMPLE)
def test_block_stats_are_the_wave_stats(pattern, monkeypatch):
    """WAVELIFT_CUDA_STATS=block: the instruction and lane counts (and everything else a
    dispatch reports) those of the per-wave atomics, the instructions NumPy's."""
    why = _gpu_problem()
    if why:
        pytest.skip(f"no CUDA device: {why}")
    import copy

    from test_cuda_backend import _compare, _dispatches

    from wavelift.run.execute import execute_dispatch

    hits = [d for d in _dispatches() if pattern in d[0]][:2]
    if not hits:
        pytest.skip(f"no fixture named like {pattern}")
    for name, mem, cfg in hits:
        runs, caches = [], []
        for stats in ("wave", "block"):  # (the per-wave atomics against the block's)
            monkeypatch.setenv("WAVELIFT_CUDA_STATS", stats)
            m, cache = copy.deepcopy(mem), {}
            runs.append((m, execute_dispatch(m, cfg, backend="cuda", mode="lane", cache=cache)))
            caches.append(cache)
        (m1, r1), (m2, r2) = runs
        assert (r1.refusal and r1.refusal.code) == (r2.refusal and r2.refusal.code), name
        assert r1.stats["escapes"] == r2.stats["escapes"], name
        assert r1.stats["instructions"] == r2.stats["instructions"], name
        assert r1.stats["lane_instructions"] == r2.stats["lane_instructions"], name
        assert r1.write_spans == r2.write_spans and not _compare(m1, m2), name
        if r1.refusal is None:
            m0 = copy.deepcopy(mem)
            r0 = execute_dispatch(m0, cfg, backend="numpy", mode="lane", cache={})
            assert r0.stats["instructions"] == r2.stats["instructions"], name
        # (the block form was what ran: the module's source calls it -- the call site, as kernel.h
        # defines wl_count_block in every source)
        srcs = [getattr(mod, "source", "") for mod in caches[1].values()]
        call = "  wl_count_block(lane < 32u, icnt + ic, lc);"
        assert any(call in s for s in srcs) or r2.refusal is not None, name
