"""bench/kernels/lds.cl (the LDS and barrier benchmark kernels, issue 24 item 5) at a few groups:
the NumPy backend (both modes) and the CUDA backend (both modes, both barrier lowerings:
decision 0047) against NumPy references of the same computations (gpu_check.lds_case)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
for p in (ROOT / "bench", ROOT / "tests" / "cuda"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import gpu_check as G  # noqa: E402

from wavelift.run.execute import execute_dispatch  # noqa: E402


def _run(name: str, backend: str, mode: str) -> None:
    mem, cfg, out, nbytes, native = G.lds_dispatch(name, small=True)
    r = execute_dispatch(mem, cfg, backend=backend, mode=mode, cache={})
    assert r.refusal is None, r.refusal
    got = np.frombuffer(mem.read(out, nbytes), np.uint32)
    bad = np.flatnonzero(got != native["want"])
    assert not bad.size, (name, backend, mode, bad[:8], got[bad[:8]], native["want"][bad[:8]])


@pytest.mark.parametrize("mode", ["lane", "wave"])
@pytest.mark.parametrize("name", G.LDS_KERNELS)
def test_lds_kernel_on_numpy(name, mode):
    _run(name, "numpy", mode)


@pytest.mark.cuda
@pytest.mark.parametrize("barriers", ["inline", "phase"])
@pytest.mark.parametrize("mode", ["lane", "wave"])
@pytest.mark.parametrize("name", G.LDS_KERNELS)
def test_lds_kernel_on_cuda(name, mode, barriers, monkeypatch, tmp_path):
    from test_cuda_backend import _needs_gpu

    _needs_gpu()
    monkeypatch.setenv("WAVELIFT_CUDA_BARRIERS", barriers)
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    _run(name, "cuda", mode)


@pytest.mark.parametrize("name", ["matmul16", "scan256"])
def test_barrier_lowerings_generate_and_compile(name, monkeypatch):
    """Decision 0047: by default each s_barrier is a round of barrier 0 where the wave stands
    (no phase switch), ended waves take part at WL_PARK; WAVELIFT_CUDA_BARRIERS=phase gives the
    phases.  Both compile (NVRTC to PTX, where NVRTC is installed)."""
    from test_cuda_backend import _nvrtc_problem, translate_dispatch

    from wavelift.backends.cuda.codegen import generate
    from wavelift.backends.cuda.compile import check_source

    mem, cfg, *_ = G.lds_dispatch(name, small=True)
    prog, base = translate_dispatch(mem, cfg)
    barriers = sum(1 for b in prog.blocks if b.term[0] == "barrier" and b.term[1] >= 0)
    assert barriers >= 2
    srcs = {}
    for how in ("inline", "phase"):
        monkeypatch.setenv("WAVELIFT_CUDA_BARRIERS", how)
        srcs[how] = generate(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base)[0]
    inline, phase = srcs["inline"], srcs["phase"]
    assert "switch (pc)" not in inline and inline.count("(void)__syncthreads_and(0); goto B") == barriers
    assert "WL_PARK:\n  for (;;) { if (__syncthreads_and(done)) break; }" in inline
    assert "switch (pc)" in phase and "(void)__syncthreads_and" not in phase
    if _nvrtc_problem() is None:
        for src in srcs.values():
            check_source(src, "sm_90")


def _matmul16_with_nans():
    """(mem, cfg, output address, bytes) of lds.cl's matmul16 (small) with NaNs of several
    payloads and signs, infinities and zeros in A and B: rows of C whose chains meet a NaN, an
    invalid product (0 * inf) or inf - inf"""
    import wavelift

    c = G.lds_case("matmul16", True)
    a, b = (x.copy() for x in c["inputs"])
    rng = np.random.default_rng(106)
    for arr, n in ((a, 40), (b, 40)):
        at = rng.choice(arr.size, n, replace=False)
        bits = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFA00005, 0x7FC12345, 0x7F800000, 0xFF800000, 0x0]
        arr.view(np.uint32)[at] = rng.choice(np.array(bits, np.uint32), n)
    cat = G.Catch()
    dev = wavelift.Device("gfx1030", execute=cat)
    k = dev.load_code_object(str(ROOT / "bench" / "kernels" / "lds-gfx1030-O2-w32.hsaco")).kernel("matmul16")
    bufs = [dev.upload(x) for x in (a, b)]
    out = dev.upload(np.zeros(c["out_n"], np.uint32))
    k.launch(groups=c["groups"], block=c["block"], args=[*bufs, out, *c["scalars"]])
    mem, cfg = cat.got[0]
    return mem, cfg, out.address, 4 * c["out_n"]


@pytest.mark.cuda
@pytest.mark.parametrize("nan", ["every", "chain", "chain16"])
def test_matmul16_nans_on_cuda(nan, monkeypatch, tmp_path):
    """WAVELIFT_CUDA_NAN (decision 0047's amendment h106): fma chains tested for NaN at their
    end give the NaN bits the NumPy backend gives (RDNA's rule) where NaNs, infinities and
    zeros meet in the multiply-adds -- the end's run again, bit for bit"""
    import copy

    from test_cuda_backend import _needs_gpu

    _needs_gpu()
    mem, cfg, out, nbytes = _matmul16_with_nans()
    ref = copy.deepcopy(mem)
    r = execute_dispatch(ref, cfg, backend="numpy", mode="lane", cache={})
    assert r.refusal is None, r.refusal
    want = np.frombuffer(ref.read(out, nbytes), np.uint32)
    assert (want & 0x7FFFFFFF > 0x7F800000).sum() > 10  # (NaNs reached C)
    monkeypatch.setenv("WAVELIFT_CUDA_NAN", nan)
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache={})
    assert r.refusal is None, r.refusal
    got = np.frombuffer(mem.read(out, nbytes), np.uint32)
    bad = np.flatnonzero(got != want)
    assert not bad.size, (nan, bad[:8], got[bad[:8]], want[bad[:8]])
