"""Device-resident guest memory on a GPU (backends/cuda/resident.py, decision 0026); each test
skips without CuPy or a device.  The bookkeeping itself is tested without a GPU in
test_resident_host.py; here the device kernels (written runs, the masked commit) are held to
NumPyOps, and a Device's stream of dispatches to NumPy's results."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from wavelift.backends.cuda import _gpu_problem
from wavelift.backends.cuda import resident as R

HERE = pathlib.Path(__file__).resolve().parent
pytestmark = pytest.mark.cuda


def _needs_gpu():
    why = _gpu_problem()
    if why:
        pytest.skip(f"no CUDA device: {why}")


def test_gpu_runs_and_commit_equal_the_host_ones(monkeypatch):
    _needs_gpu()
    import cupy

    monkeypatch.setattr(R, "SPAN_CAPACITY", 16)  # (more runs than room: the second launch)
    gpu, host = R.CuPyOps(), R.NumPyOps()
    rng = np.random.default_rng(24)
    for size in (8, 64, 4096, 1 << 20):
        for p in (0.0, 0.001, 0.3, 0.97, 1.0):
            w = (rng.random(size) < p).astype(np.uint8)
            if size > 8 and p < 1:
                w[:3] = 1  # (a run at the very start)
            ws, we = gpu.runs(cupy.asarray(w))
            hs, he = host.runs(w)
            assert np.array_equal(ws, hs) and np.array_equal(we, he), (size, p)
            src = rng.integers(0, 256, size, dtype=np.uint8)
            dst = rng.integers(0, 256, size + 16, dtype=np.uint8)
            d_dst = cupy.asarray(dst)
            gpu.commit(d_dst, 5, cupy.asarray(src), 3, cupy.asarray(w), size - 3)
            host.commit(dst, 5, src, 3, w, size - 3)
            assert np.array_equal(d_dst.get(), dst), (size, p)
            into = np.zeros(size + 32, np.uint8)
            gpu.download_into(d_dst, 7, into[9 : 9 + size])
            assert np.array_equal(into[9 : 9 + size], dst[7 : 7 + size])
            assert not into[:9].any() and not into[9 + size :].any()


def _vadd(dev, wave=32):
    return dev.load_code_object(
        str(HERE.parent / "fixtures" / "gfx1030" / f"basic-O2-w{wave}-flat.hsaco")
    ).kernel("vadd")


def test_gpu_stream_of_dispatches_lands_as_numpy_does():
    """A chain of dispatches each reading what the one before wrote, host writes between some,
    no host read until the end: every buffer equals the NumPy backend's."""
    _needs_gpu()
    import wavelift

    rng = np.random.default_rng(5)
    n = 4096
    a0 = rng.standard_normal(n).astype(np.float32)
    got = {}
    for backend in ("numpy", "cuda"):
        dev = wavelift.Device("gfx1030", backend=backend, mode="lane", record=False)
        k = _vadd(dev)
        bufs = [dev.upload(a0), dev.alloc(4 * n), dev.alloc(4 * n)]
        for step in range(12):
            x, y, z = bufs[step % 3], bufs[(step + 1) % 3], bufs[(step + 2) % 3]
            if step % 5 == 4:  # the host changes part of one (goes up as a dirty range)
                dev.memory.write(x.address + 4 * 100, np.full(50, step, np.float32))
            r = k.launch(groups=(n // 256,), block=(256,), args=[x, x, z, np.uint32(n)])
            assert r.refusal is None, r.refusal
            r = k.launch(groups=(n // 256 - 2,), block=(256,), args=[z, x, y, np.uint32(n)])
            assert r.refusal is None, r.refusal
        got[backend] = [dev.download(b, np.uint32) for b in bufs]
    for u, v in zip(got["numpy"], got["cuda"]):
        assert np.array_equal(u, v)


def test_gpu_refused_dispatch_leaves_device_and_host_copies():
    """An escape after landed dispatches: the device copies and the host's bytes as they were."""
    _needs_gpu()
    import wavelift

    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = _vadd(dev)
    n = 4096
    a = np.arange(n, dtype=np.float32)
    ba, bb, bo = dev.upload(a), dev.upload(a), dev.alloc(4 * n)
    r = k.launch(groups=(n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(n)])
    assert r.refusal is None, r.refusal
    res = dev.memory.resident
    dev_before = {x.base: e.buf[: x.size].get() for x, e in res.entries.items()}
    r = k.launch(groups=(16 * n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(16 * n)])
    assert r.refusal is not None and r.refusal.code == "escape", r.refusal
    for x, e in res.entries.items():
        # (the kernel's buffers; the launch's kernargs went up as the host wrote them)
        if x.base in dev_before and x.base in (ba.address, bb.address, bo.address):
            assert np.array_equal(e.buf[: x.size].get(), dev_before[x.base]), x.name
            # (newer on the device: what landed before and the host has not read yet; the
            # refused dispatch added nothing -- its tracing read the output, which pulled it)
            assert e.dev_dirty.ranges() in ([], [(0, x.size)]) if x.base == bo.address else True
            assert not e.dev_dirty or x.base == bo.address, x.name
    assert np.array_equal(dev.download(bo, np.float32), 2 * a)


def _kept_session(backend: str, steps: int = 120, n: int = 1024) -> tuple[list, int]:
    """A random session of vadd launches on one Device(record=False) -- the same launch again
    (most steps), other buffers, host writes of an input, host reads of the output, new
    allocations --: (what each step gave, the launches that ran from a kept dispatch plan)."""
    import wavelift
    from wavelift.run import execute as X

    rng = np.random.default_rng(11)
    dev = wavelift.Device("gfx1030", backend=backend, mode="lane", record=False)
    k = _vadd(dev)
    bufs = [dev.upload(rng.standard_normal(n).astype(np.float32)) for _ in range(4)]
    args = [bufs[0], bufs[1], bufs[2], np.uint32(n)]
    seen: list = []
    hits = X.AGAIN_HITS[0]
    for _ in range(steps):
        r = rng.random()
        if r < 0.1:
            args = [
                bufs[int(rng.integers(0, len(bufs)))],
                bufs[1],
                bufs[int(rng.integers(2, len(bufs)))],
                np.uint32(n),
            ]
        elif r < 0.18:
            at = args[0].address + 4 * int(rng.integers(0, n - 8))
            dev.memory.write(at, rng.standard_normal(8).astype(np.float32))
            continue
        elif r < 0.26:
            seen.append(dev.download(args[2], np.float32).tobytes())
            continue
        elif r < 0.3:
            bufs.append(dev.upload(rng.standard_normal(n).astype(np.float32)))
            continue
        res = k.launch(groups=(n // 256,), block=(256,), args=args)
        assert res.refusal is None, res.refusal
        seen.append(list(res.write_spans))
    seen.append([dev.download(b, np.float32).tobytes() for b in bufs])
    return seen, X.AGAIN_HITS[0] - hits


@pytest.mark.parametrize("graph", [False, True])
def test_gpu_kept_runs_land_as_numpy_does(monkeypatch, graph):
    """WAVELIFT_CUDA_AGAIN=on, and WAVELIFT_CUDA_GRAPH=on (a kept plan's operations captured as
    a CUDA graph): repeated launches run from their kept plans amid host writes, host reads, new
    allocations and other arguments; every step's write spans and reads and every buffer at the
    end equal the NumPy backend's, and most repeated launches took the kept run."""
    _needs_gpu()
    monkeypatch.setenv("WAVELIFT_CUDA_AGAIN", "on")
    monkeypatch.setenv("WAVELIFT_CUDA_GRAPH", "on" if graph else "off")
    want, _ = _kept_session("numpy")
    got, hits = _kept_session("cuda")
    assert got == want
    assert hits > 20, hits  # (53 of the 91 launches on the stand-in)
