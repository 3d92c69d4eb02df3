"""Device-resident guest memory on a GPU (backends/cuda/resident.py, decision 0026); each test
skips without CuPy or a device.  The bookkeeping itself is tested without a GPU in
test_resident_host.py; here the device kernels (written runs, the landing over them) are held to
NumPyOps, and a Device's stream of dispatches to NumPy's results."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from test_cuda_backend import _needs_gpu

from wavelift.backends.cuda import resident as R

HERE = pathlib.Path(__file__).resolve().parent
pytestmark = pytest.mark.cuda


def _masked(dst, doff, src, soff, mask, n):
    """The masked commit wl_land replaced (the oracle): each byte whose map byte is nonzero."""
    m = mask[soff : soff + n] != 0
    dst[doff : doff + n][m] = src[soff : soff + n][m]
    mask[soff : soff + n] = 0


def test_gpu_runs_and_land_equal_the_host_ones(monkeypatch):
    """wl_runs and wl_land on random maps up to 1 MiB (more runs than room: the second launch):
    the runs NumPyOps finds; the landing of a window over them (its device copy at every
    alignment mod 16) equal to NumPyOps' and to the masked commit, the map zero in the window."""
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
            t = R.run_table(hs, he)
            src = rng.integers(0, 256, size, dtype=np.uint8)
            dst = rng.integers(0, 256, size + 16, dtype=np.uint8)
            doff = int(rng.integers(0, 16))
            want, w_want = dst.copy(), w.copy()
            d_dst, d_w = cupy.asarray(dst), cupy.asarray(w)
            gpu.land(d_dst, doff, cupy.asarray(src), d_w, 3, size - 3, cupy.asarray(t))
            host.land(dst, doff, src, w, 3, size - 3, t)
            _masked(want, doff, src, 3, w_want, size - 3)
            assert np.array_equal(d_dst.get(), dst) and np.array_equal(dst, want), (size, p, doff)
            assert np.array_equal(d_w.get(), w) and np.array_equal(w, w_want), (size, p)
            into = np.zeros(size + 32, np.uint8)
            gpu.download_into(d_dst, 7, into[9 : 9 + size])
            assert np.array_equal(into[9 : 9 + size], dst[7 : 7 + size])
            assert not into[:9].any() and not into[9 + size :].any()


def _bitmap(flags) -> np.ndarray:
    """The bit map of a byte map (NumPy's packbits, little-endian: bit i & 31 of word i >> 5)."""
    f = np.asarray(flags) != 0
    f = np.concatenate((f, np.zeros(-f.size % 32, bool)))
    return np.packbits(f, bitorder="little").view(np.uint32).copy()


def test_gpu_bit_map_runs_and_land_equal_the_byte_map(monkeypatch):
    """WAVELIFT_CUDA_MAP=bits' device kernels (decision 0049's amendment h111): wl_runs_bits over
    the bit map of a random byte map finds the byte map's runs (more runs than room: the second
    launch); wl_land_bits over a 32-byte-piece run table lands what the masked commit lands at
    every alignment of the device copy and clears exactly the window's bits; wl_gate_bits'
    table through wl_land_gated_bits the same."""
    _needs_gpu()
    import cupy

    monkeypatch.setattr(R, "SPAN_CAPACITY", 16)
    gpu, host = R.CuPyOps(), R.NumPyOps()
    rng = np.random.default_rng(111)
    for size in (8, 64, 4096, 1 << 20):
        for p in (0.0, 0.001, 0.3, 0.97, 1.0):
            w = (rng.random(size) < p).astype(np.uint8)
            if size > 8 and p < 1:
                w[:3] = 1
            ws, we = gpu.runs(cupy.asarray(_bitmap(w)))
            hs, he = host.runs(w)
            assert np.array_equal(ws, hs) and np.array_equal(we, he), (size, p)
            t = R.run_table(hs, he, 5)
            src = rng.integers(0, 256, size, dtype=np.uint8)
            dst = rng.integers(0, 256, size + 16, dtype=np.uint8)
            doff = int(rng.integers(0, 16))
            want, w_want = dst.copy(), w.copy()
            _masked(want, doff, src, 3, w_want, size - 3)
            d_dst, d_w = cupy.asarray(dst), cupy.asarray(_bitmap(w))
            gpu.land(d_dst, doff, cupy.asarray(src), d_w, 3, size - 3, cupy.asarray(t))
            assert np.array_equal(d_dst.get(), want), (size, p, doff)
            assert np.array_equal(d_w.get(), _bitmap(w_want)), (size, p)
    from wavelift.backends.cuda import runtime as RT

    at = (RT.STATS_BYTES, 16, RT.RUNS_AT, RT.STARTS_AT, RT.ENDS_AT, RT.VERDICT_AT, RT.INLINE_RUNS)
    size = 4096
    for trial in range(100):
        c = int(rng.integers(0, 60))
        bounds = np.sort(rng.choice(size, 2 * c, replace=False)).astype(np.uint64)
        s_, e_ = bounds[0::2].copy(), bounds[1::2].copy()
        rep = np.zeros(RT.REPORT_BYTES, np.uint8)
        rep[RT.RUNS_AT : RT.RUNS_AT + 8].view(np.uint32)[:] = c
        rep[RT.STARTS_AT : RT.STARTS_AT + 8 * c].view(np.uint64)[:] = rng.permutation(s_)
        rep[RT.ENDS_AT : RT.ENDS_AT + 8 * c].view(np.uint64)[:] = rng.permutation(e_)
        okt = np.array([0, size], np.uint64)
        sticky_h = np.zeros(1, np.uint32)
        table = np.zeros(1 + 3 * RT.INLINE_RUNS, np.uint64)
        d_rep, d_sticky, d_table = cupy.asarray(rep), cupy.asarray(sticky_h), cupy.asarray(table)
        gpu.gate_launch(d_rep, at, cupy.asarray(okt), d_sticky, d_table, True)()
        host.gate_launch(rep, at, okt, sticky_h, table, True)()
        assert np.array_equal(d_table.get(), table) and not sticky_h[0], trial
        w = np.zeros(size, np.uint8)
        for s, e in zip(s_, e_):
            w[s:e] = 1
        src = rng.integers(0, 256, size, dtype=np.uint8)
        dst = rng.integers(0, 256, size + 16, dtype=np.uint8)
        want, w_want = dst.copy(), w.copy()
        _masked(want, 5, src, 3, w_want, size - 3)
        d_dst, d_w = cupy.asarray(dst), cupy.asarray(_bitmap(w))
        gpu.land_gated_launch(d_dst, 5, cupy.asarray(src), d_w, 3, size - 3, d_table, d_sticky)()
        assert np.array_equal(d_dst.get(), want) and np.array_equal(d_w.get(), _bitmap(w_want)), trial


def test_gpu_gate_and_gated_land_equal_the_host_ones():
    """wl_gate (a deferred dispatch's verdict and run table) and wl_land_gated on random reports
    -- flags, escapes, run counts up to past the inline room, runs inside and across the ranges,
    the sticky word set or not -- equal resident.gate and NumPyOps (decision 0029's helper-96
    amendment; the run table: 0026's amendment h109)."""
    _needs_gpu()
    import cupy

    from wavelift.backends.cuda import runtime as RT

    gpu, host = R.CuPyOps(), R.NumPyOps()
    rng = np.random.default_rng(96)
    at = (RT.STATS_BYTES, 16, RT.RUNS_AT, RT.STARTS_AT, RT.ENDS_AT, RT.VERDICT_AT, RT.INLINE_RUNS)
    verdicts = set()
    size = 4096
    for trial in range(300):
        rep = np.zeros(RT.REPORT_BYTES, np.uint8)
        st = rep[RT.STATS_BYTES : RT.STATS_BYTES + 64].view(np.uint32)
        st[0] = rng.random() < 0.1
        st[4] = rng.random() < 0.1
        rep[16:24].view(np.uint64)[0] = rng.random() < 0.1
        c = int(rng.integers(0, 72))
        bounds = np.sort(rng.choice(size, 2 * c, replace=False)).astype(np.uint64)
        s_, e_ = bounds[0::2].copy(), bounds[1::2].copy()
        k = min(c, RT.INLINE_RUNS)
        rep[RT.RUNS_AT : RT.RUNS_AT + 8].view(np.uint32)[:] = c
        rep[RT.STARTS_AT : RT.STARTS_AT + 8 * k].view(np.uint64)[:] = rng.permutation(s_)[:k]
        rep[RT.ENDS_AT : RT.ENDS_AT + 8 * k].view(np.uint64)[:] = rng.permutation(e_)[:k]
        if rng.random() < 0.5 and c:  # (ranges holding every run, some merged over them)
            cut = np.sort(rng.choice(c, int(rng.integers(0, c + 1)), replace=False))
            ok = [x for i in range(c) if i not in cut for x in (int(s_[i]), int(e_[i]))]
            ok = ok or [0, 0]
        else:
            ok = sorted(int(x) for x in rng.choice(size, 2 * int(rng.integers(1, 6)), replace=False))
        okt = np.array(ok, np.uint64)
        sticky_h = np.array([rng.random() < 0.15], np.uint32)
        table = np.zeros(1 + 3 * RT.INLINE_RUNS, np.uint64)
        d_rep, d_sticky, d_table = cupy.asarray(rep), cupy.asarray(sticky_h), cupy.asarray(table)
        gpu.gate_launch(d_rep, at, cupy.asarray(okt), d_sticky, d_table)()
        host.gate_launch(rep, at, okt, sticky_h, table)()
        assert np.array_equal(d_rep.get(), rep) and np.array_equal(d_sticky.get(), sticky_h), trial
        assert np.array_equal(d_table.get(), table), trial
        verdicts.add(int(rep[RT.VERDICT_AT : RT.VERDICT_AT + 4].view(np.uint32)[0]))
        w = np.zeros(size, np.uint8)  # (the map the runs came from)
        for s, e in zip(s_, e_):
            w[s:e] = 1
        src = rng.integers(0, 256, size, dtype=np.uint8)
        dst = rng.integers(0, 256, size + 16, dtype=np.uint8)
        want, w_want = dst.copy(), w.copy()
        if not sticky_h[0]:
            _masked(want, 5, src, 3, w_want, size - 3)
        d_dst, d_w = cupy.asarray(dst), cupy.asarray(w)
        gpu.land_gated_launch(d_dst, 5, cupy.asarray(src), d_w, 3, size - 3, d_table, d_sticky)()
        host.land_gated_launch(dst, 5, src, w, 3, size - 3, table, sticky_h)()
        assert np.array_equal(d_dst.get(), dst) and np.array_equal(d_w.get(), w), trial
        assert np.array_equal(dst, want) and np.array_equal(w, w_want), trial
    assert verdicts == {0, 1, 2}


def _vadd(dev, wave=32):
    return dev.load_code_object(
        str(HERE.parent / "fixtures" / "gfx1030" / f"basic-O2-w{wave}-flat.hsaco")
    ).kernel("vadd")


def _vadd_landed(n=4096):
    """A CUDA Device and vadd's launch over n floats (a + a into a new buffer): (device, kernel,
    n, a, (a's copy, a's second copy, the output), the launch's result)."""
    import wavelift

    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = _vadd(dev)
    a = np.arange(n, dtype=np.float32)
    bufs = dev.upload(a), dev.upload(a), dev.alloc(4 * n)
    r = k.launch(groups=(n // 256,), block=(256,), args=[*bufs, np.uint32(n)])
    return dev, k, n, a, bufs, r


def _chain(backend: str, seed: int, each=None) -> tuple[list, list]:
    """A chain of vadd dispatches on one Device, each reading what the one before wrote, host
    writes between some, no host read until the end -> (each dispatch's write spans, every
    buffer at the end); ``each(dev, result)`` after each dispatch."""
    import wavelift

    rng = np.random.default_rng(seed)
    n = 4096
    dev = wavelift.Device("gfx1030", backend=backend, mode="lane", record=False)
    k = _vadd(dev)
    bufs = [dev.upload(rng.standard_normal(n).astype(np.float32)), dev.alloc(4 * n), dev.alloc(4 * n)]
    spans = []
    for step in range(12):
        x, y, z = bufs[step % 3], bufs[(step + 1) % 3], bufs[(step + 2) % 3]
        if step % 5 == 4:  # the host changes part of one (goes up as a dirty range)
            dev.memory.write(x.address + 4 * 100, np.full(50, step, np.float32))
        for groups, a in (((n // 256,), [x, x, z]), ((n // 256 - 2,), [z, x, y])):
            r = k.launch(groups=groups, block=(256,), args=a + [np.uint32(n)])
            assert r.refusal is None, r.refusal
            spans.append(list(r.write_spans))
            if each is not None:
                each(dev, r)
    return spans, [dev.download(b, np.uint32) for b in bufs]


def chain_as_numpy(seed: int, each) -> None:
    """_chain on the CUDA backend (``each`` after each dispatch) against the NumPy backend's:
    every dispatch's write spans and every buffer at the end equal."""
    want = _chain("numpy", seed)
    got = _chain("cuda", seed, each)
    assert got[0] == want[0]
    for u, v in zip(want[1], got[1]):
        assert np.array_equal(u, v)


def test_gpu_stream_of_dispatches_lands_as_numpy_does():
    """_chain: every buffer equals the NumPy backend's."""
    _needs_gpu()
    _, want = _chain("numpy", 5)
    _, got = _chain("cuda", 5)
    for u, v in zip(want, got):
        assert np.array_equal(u, v)


def test_gpu_refused_dispatch_leaves_device_and_host_copies():
    """An escape after landed dispatches: the device copies and the host's bytes as they were."""
    _needs_gpu()

    dev, k, n, a, (ba, bb, bo), r = _vadd_landed()
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


def _kept_session(backend: str, steps: int = 120, n: int = 1024, late: bool = False) -> tuple[list, int]:
    """A random session of vadd launches on one Device(record=False) -- the same launch again
    (most steps), other buffers, host writes of an input, host reads of the output, new
    allocations --: (what each step gave, the launches that ran from a kept dispatch plan).
    ``late``: each result read only at the end (deferred launches queue meanwhile)."""
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
        if late:
            seen.append(res)
            continue
        assert res.refusal is None, res.refusal
        seen.append(list(res.write_spans))
    seen.append([dev.download(b, np.float32).tobytes() for b in bufs])
    if late:
        for i, x in enumerate(seen[:-1]):
            if not isinstance(x, bytes):
                assert x.refusal is None, x.refusal
                seen[i] = list(x.write_spans)
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


@pytest.mark.parametrize("graph", [False, True])
def test_gpu_deferred_runs_land_as_numpy_does(monkeypatch, graph):
    """WAVELIFT_CUDA_DEFER=on (repeated launches not waiting for the GPU; wl_gate and
    wl_land_gated land them on the device; the reports read when the host reads memory or at
    the queue's depth), each result read only at the end: every step's write spans and reads and
    every buffer equal the NumPy backend's, and most repeated launches were deferred."""
    _needs_gpu()
    from wavelift.run import execute as X

    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on")
    monkeypatch.setenv("WAVELIFT_CUDA_GRAPH", "on" if graph else "off")
    want, _ = _kept_session("numpy")
    d0 = X.DEFERRED[0]
    got, _ = _kept_session("cuda", late=True)
    assert got == want
    assert X.DEFERRED[0] - d0 > 20, X.DEFERRED[0] - d0


def test_gpu_heap_keeps_copies_across_growth(monkeypatch):
    """WAVELIFT_CUDA_HEAP=one's Heap on the device (decision 0049's amendment h119): random
    places, uploads and releases from a small first size, so that it grows many times; every
    live copy's bytes read back as written, and the heap's bit map keeps its marks."""
    _needs_gpu()
    monkeypatch.setattr(R, "HEAP_MIN", 4096)
    rng = np.random.default_rng(119)
    h = R.Heap(R.CuPyOps(), bits=True)
    m = h.written
    live: dict = {}
    for step in range(80):
        if live and rng.random() < 0.3:
            off = list(live)[int(rng.integers(0, len(live)))]
            h.release(off, live.pop(off).size)
            continue
        size = int(rng.integers(1, 40000))
        off = h.place(size, int(rng.integers(0, 1 << 40)))
        data = rng.integers(0, 256, size, dtype=np.uint8)
        h.ops.upload(h.buf, off, data)
        live[off] = data
        if step == 0:
            m = h.written
            m[:1] = 0x5A5A5A5A
        for o, d in live.items():
            assert np.array_equal(h.buf[o : o + d.size].get(), d), step
    assert h.moves > 3 and int(h.written[:1].get()[0]) == 0x5A5A5A5A


@pytest.mark.parametrize("defer", [False, True])
def test_gpu_kept_and_deferred_runs_on_a_growing_heap(monkeypatch, defer):
    """The kept and deferred sessions above with every device copy in one heap that starts at
    4 KiB, so that new allocations move it amid kept plans and queued launches: every step
    equals the NumPy backend's."""
    _needs_gpu()
    monkeypatch.setattr(R, "HEAP_MIN", 4096)
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.setenv("WAVELIFT_CUDA_AGAIN", "on")
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on" if defer else "off")
    want, _ = _kept_session("numpy")
    got, _ = _kept_session("cuda", late=defer)
    assert got == want


# ---- in place (WAVELIFT_CUDA_INPLACE=proved: decision 0049 step 4, its amendment h125) ----------


@pytest.fixture
def in_place(monkeypatch, request):
    """In place on, on a heap that starts small (it grows amid the dispatches), with the map
    form ``request.param`` (default bits)."""
    monkeypatch.setattr(R, "HEAP_MIN", 4096)
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "proved")
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.setenv("WAVELIFT_CUDA_MAP", getattr(request, "param", "bits"))


@pytest.mark.parametrize("in_place", ["bytes", "bits"], indirect=True)
def test_gpu_in_place_stream_lands_as_numpy_does(in_place):
    """_chain, every dispatch proved and run on the heap (no arena): every write span and buffer
    equal to the NumPy backend's, and the heap's map zero after each."""
    _needs_gpu()

    def on_the_heap(dev, r):
        assert r.stats["in_place"] == "proved"
        assert not R.map_flags(dev.memory.resident.heap.written.get()).any()

    chain_as_numpy(125, on_the_heap)


def test_gpu_in_place_session_lands_as_numpy_does(in_place):
    """The kept session's random launches, host writes, reads and new allocations, in place on a
    heap that grows from 4 KiB: every step equals the NumPy backend's, and repeated launches ran
    from their kept in-place plans (runtime.InPlace)."""
    _needs_gpu()
    want, _ = _kept_session("numpy")
    got, hits = _kept_session("cuda")
    assert got == want
    assert hits > 10, hits


def _pass_launch(dev, name: str, w: int, h: int):
    from fixture_dispatches import launch_pass

    r, out = launch_pass(dev, name, w, h)
    return r, dev.download(out, np.uint32)


def unusable_alone_changed(res, heap0) -> list:
    """After a refused proof: the (allocation, entry) pairs it made unusable (``broken``), no heap
    byte outside them changed from ``heap0`` (the heap before the launch)."""
    broken = [(x, e) for x, e in res.entries.items() if e.broken is not None]
    heap1 = res.heap.buf.get()[: heap0.size]
    outside = np.ones(heap0.size, bool)
    for x, e in broken:
        outside[e.off : e.off + x.size] = False
    assert np.array_equal(heap1[outside], heap0[outside])
    return broken


def pass_as_numpy(name: str, w: int, h: int, check) -> None:
    """launch_pass's ``name`` at w x h on the NumPy and the CUDA backend (``check(result)`` on
    CUDA's): neither refused, the write spans and the output equal."""
    import wavelift

    got = {}
    for backend in ("numpy", "cuda"):
        dev = wavelift.Device("gfx1030", backend=backend, mode="lane", record=False)
        r, out = _pass_launch(dev, name, w, h)
        assert r.refusal is None, r.refusal
        got[backend] = (list(r.write_spans), out)
        if backend == "cuda":
            check(r)
    assert got["cuda"][0] == got["numpy"][0] and np.array_equal(got["cuda"][1], got["numpy"][1])


def test_gpu_in_place_pass_and_a_bounded_loop_kernel(in_place):
    """shade over 256x120 (a 2-D grid of 32x15 groups; at 250x118 its partial groups are not proved:
    `global_access`) runs in place and equals NumPy; lds.cl's stencil5 (LDS, barriers and a tile
    loop of at most two rounds: proved since 0049's amendment h126) runs in place too and equals
    its reference.  (The arena path of a dispatch not proved: the escaping vadd below.)"""
    _needs_gpu()
    import sys

    import wavelift

    def proved(r):
        assert r.stats["in_place"] == "proved"

    pass_as_numpy("shade", 256, 120, proved)

    sys.path.insert(0, str(HERE.parents[1] / "bench"))
    from gpu_check import lds_case

    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    r, out = _pass_launch(dev, "stencil5", 1920, 1080)
    assert r.refusal is None, r.refusal
    assert r.stats["in_place"] == "proved"
    assert np.array_equal(out, lds_case("stencil5")["want"])


def test_gpu_in_place_escaping_dispatch_not_proved_and_a_wrong_proof(in_place, monkeypatch):
    """An escaping vadd (16n lanes over n floats) is not proved: the arena path refuses it
    `escape` and changes no copy.  The same dispatch with the predicate forced to prove it runs
    on the heap: the kernel's window test stops every escaping store (no heap byte outside the
    windows changes), it is refused `backend.proof`, and every later dispatch on its copies too."""
    _needs_gpu()
    from wavelift.backends.cuda import runtime as RT

    dev, k, n, a, (ba, bb, bo), r = _vadd_landed()
    assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
    res = dev.memory.resident

    def copies():  # (the three buffers' device copies, from the heap)
        h = res.heap.buf.get()
        out = []
        for buf in (ba, bb, bo):
            e = res.entries[dev.memory.find(buf.address)]
            out.append(h[e.off : e.off + 4 * n].view(np.float32).copy())
        return out

    r = k.launch(groups=(16 * n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(16 * n)])
    assert r.refusal is not None and r.refusal.code == "escape", r.refusal
    assert r.stats["in_place"] == "global_access"
    for got, want in zip(copies(), (a, a, 2 * a)):
        assert np.array_equal(got, want)
    monkeypatch.setattr(RT, "_unrefusable", lambda *x: None)
    heap0 = res.heap.buf.get()
    r = k.launch(groups=(16 * n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(16 * n)])
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    # its copies (the buffers', the kernel arguments' and packet's) unusable; no other heap byte
    # changed, and in the buffers only bo's first n floats were written (with the same sums)
    broken = unusable_alone_changed(res, heap0)
    assert {x.base for x, _ in broken} >= {dev.memory.find(b.address).base for b in (ba, bb, bo)}
    for got, want in zip(copies(), (a, a, 2 * a)):
        assert np.array_equal(got, want)
    assert not R.map_flags(res.heap.written.get()).any()
    r = k.launch(groups=(n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(n)])
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal


def test_gpu_in_place_deferred_session_read_late(in_place, monkeypatch):
    """0049 step 5 (amendment h134): the kept session in place with every result read only at
    the end, so deferred in-place launches queue (no wait each; the heap map over the windows
    cleared on the device): every step equals the NumPy backend's, and most launches deferred."""
    _needs_gpu()
    from wavelift.run import execute as X

    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on")
    want, _ = _kept_session("numpy", late=True)
    d0 = X.DEFERRED[0]
    got, _ = _kept_session("cuda", late=True)
    assert got == want
    assert X.DEFERRED[0] - d0 > 20, X.DEFERRED[0] - d0


def test_gpu_aside_keeps_an_overflowing_map():
    """wl_aside (amendment h137) on the GPU, either map form: the map range zeroed, copied to the
    aside first exactly where the runs' count passed the room (else the aside untouched), and
    wl_runs over the aside finds the map's runs (NumPyOps')."""
    _needs_gpu()
    import cupy

    gpu, host = R.CuPyOps(), R.NumPyOps()
    rng = np.random.default_rng(137)
    for size in (64, 4096, 1 << 20):
        for p in (0.001, 0.3, 0.97):
            w = (rng.random(size) < p).astype(np.uint8)
            for m in (w, _bitmap(w)):
                for c in (0, 64, 65, 1 << 20):
                    d_w = cupy.asarray(m)
                    aside = cupy.full(m.size, 0xA5 if m.dtype == np.uint8 else 0xA5A5A5A5, m.dtype)
                    count = cupy.asarray(np.array([c, c], np.uint32))
                    gpu.aside_call(d_w, aside, count, 64)()
                    assert not d_w.get().any(), (size, p, c)
                    if c <= 64:
                        assert (aside.get() == aside.get()[0]).all() and aside.get()[0] != 0
                        continue
                    assert np.array_equal(aside.get(), m), (size, p, c)
                    got, want = gpu.runs(aside), host.runs(w)
                    assert all(np.array_equal(a, b) for a, b in zip(got, want)), (size, p, c)


def test_gpu_runs_copy_the_hints_into_the_report():
    """wl_runs and wl_runs_bits with the hints' copy folded into their launch (h161: the
    addresses passed as u64 arguments, as runtime's ``hint_go``): the bytes land at the report's
    place and nowhere else, the runs as without it."""
    _needs_gpu()
    import cupy

    gpu, host = R.CuPyOps(), R.NumPyOps()
    rng = np.random.default_rng(1610)
    for nb in (4, 28, 4 * 3000):
        w = (rng.random(4096) < 0.3).astype(np.uint8)
        for m in (w, _bitmap(w)):
            src = cupy.asarray(rng.integers(0, 256, nb, dtype=np.uint8))
            rep = cupy.full(nb + 64, 0xEE, cupy.uint8)
            count = cupy.zeros(2, cupy.uint32)
            gpu.runs_launch(cupy.asarray(m), count, hints=(rep.data.ptr + 32, src.data.ptr, nb))
            got = gpu.runs_finish(int(count[:1].get()[0]))
            r = rep.get()
            assert (
                np.array_equal(r[32 : 32 + nb], src.get())
                and (r[:32] == 0xEE).all()
                and (r[32 + nb :] == 0xEE).all()
            )
            assert all(np.array_equal(a, b) for a, b in zip(got, host.runs(w))), nb


def test_gpu_bit_runs_and_aside_on_views_at_every_word_offset(monkeypatch):
    """wl_runs_bits and wl_aside as h161 made them (16 bytes a thread, the neighbours' words by
    shuffle, grid-stride over the device-sized grid) on bit-map views 0..3 words past a 16-byte
    bound -- as ``Placed.scan`` is a view of the heap's map -- between all-ones words: random
    bits, all ones, long runs; lengths at every residue mod 4, up to 3M words (several rounds
    of the grid): CuPyOps.runs equals NumPyOps' (room for 16 runs: the second launch past it),
    no word outside the view read or written; wl_aside zeroes exactly the view, copying it to an
    aside (at another offset) only where the count passed the room."""
    _needs_gpu()
    import cupy

    monkeypatch.setattr(R, "SPAN_CAPACITY", 16)
    gpu, host = R.CuPyOps(), R.NumPyOps()
    rng = np.random.default_rng(161)
    for nw in (1, 2, 3, 5, 130, 4099, 1 << 16, 3 * (1 << 20) + 1):
        for a in range(4):
            for kind in ("random", "ones", "long") if nw < 1 << 20 else ("ones", "long"):
                if kind == "random":
                    f = rng.random(32 * nw) < 0.3
                elif kind == "ones":
                    f = np.ones(32 * nw, np.bool_)
                else:
                    f = np.zeros(32 * nw, np.bool_)
                    for lo in rng.integers(0, 32 * nw, 20):
                        f[lo : lo + int(rng.integers(1, 1 << 16))] = True
                m = np.packbits(f, bitorder="little").view(np.uint32)
                raw = cupy.full(nw + 8, 0xFFFFFFFF, cupy.uint32)  # (256-aligned: the view a words past)
                view = raw[a : a + nw]
                view.set(m)
                got, want = gpu.runs(view), host.runs(m)
                assert all(np.array_equal(x, y) for x, y in zip(got, want)), (nw, a, kind)
                araw = cupy.full(nw + 8, 0xA5A5A5A5, cupy.uint32)
                aside = araw[3 - a : 3 - a + nw]
                count = cupy.asarray(np.array([got[0].size] * 2, np.uint32))
                gpu.aside_call(view, aside, count, 64)()
                r = raw.get()
                assert (
                    not r[a : a + nw].any()
                    and (r[:a] == 0xFFFFFFFF).all()
                    and (r[a + nw :] == 0xFFFFFFFF).all()
                )
                ar = araw.get()
                if got[0].size > 64:
                    assert np.array_equal(ar[3 - a : 3 - a + nw], m), (nw, a, kind)
                    ar[3 - a : 3 - a + nw] = 0xA5A5A5A5
                assert (ar == 0xA5A5A5A5).all(), (nw, a, kind)
            if nw > 1 << 20:
                break  # (the largest map at one offset: ~1 s a case on the host's side)


@pytest.mark.parametrize("in_place", ["bytes", "bits"], indirect=True)
def test_gpu_in_place_deferred_runs_through_the_aside(in_place, monkeypatch):
    """The kept session in place, results read only at the end, with no room for runs in a
    deferred run's report (``InPlace.room`` 0): every deferred launch's runs are found by the host
    in its queue place's aside, which wl_aside filled on the device before clearing the map --
    every step equals the NumPy backend's, most launches deferred, nothing unusable."""
    _needs_gpu()
    from wavelift.backends.cuda import runtime as RT
    from wavelift.run import execute as X

    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on")
    monkeypatch.setattr(RT.InPlace, "room", 0)
    want, _ = _kept_session("numpy", late=True)
    d0 = X.DEFERRED[0]
    got, _ = _kept_session("cuda", late=True)
    assert got == want
    assert X.DEFERRED[0] - d0 > 20, X.DEFERRED[0] - d0


# mapbits.h's marking on the device: store instruction s of a list is block s's warp, lane l
# active where bit l of active[s] is (the others leave first), nb a constant at each call as
# codegen's (the switch: one call a size)
_MARK_KERNEL = r"""
extern "C" __global__ void t_marks(u8* wr, const i64* ix, const u32* active, const u32* nbs) {
  const u32 s = blockIdx.x, l = threadIdx.x & 31u;
  if (((active[s] >> l) & 1u) == 0u) return;
  const i64 i = ix[32u * s + l];
  switch (nbs[s]) {
    case 1u: wl_mark_bits(wr, i, 1u); break;
    case 2u: wl_mark_bits(wr, i, 2u); break;
    case 3u: wl_mark_bits(wr, i, 3u); break;
    case 4u: wl_mark_bits(wr, i, 4u); break;
    case 8u: wl_mark_bits(wr, i, 8u); break;
    case 12u: wl_mark_bits(wr, i, 12u); break;
    default: wl_mark_bits(wr, i, 16u); break;
  }
}
"""


@pytest.mark.parametrize("form", ["group", "general", "span"])
def test_gpu_bit_marking_equals_the_byte_map(form):
    """mapbits.h's wl_mark_bits on the device (decision 0049's amendments h111, h139, h160), the
    group form (the default), the general form alone and the span form: after the store shapes
    of the host test of the group form (every size, whole warps in lane order from every offset,
    shade's rows of lane groups, groups with lanes not active or a byte off, the arena's end) and
    random stores -- all at once, one warp a store -- the bit map is exactly the byte map's bits."""
    _needs_gpu()
    import cupy
    from test_land_host import MAPBITS, _bitmap, _byte_map, _case, _group_stores, _stores

    head = "typedef unsigned int u32;\ntypedef unsigned long long u64;\n"
    head += {
        "group": "",
        "general": "#define WL_MARK_GROUP 0\n",
        "span": "#define WL_MARK_SPAN 1\n#define WL_MARK_GROUP 0\n",
    }[form]
    fn = cupy.RawModule(code=head + MAPBITS + _MARK_KERNEL, options=("-std=c++14",)).get_function("t_marks")
    rng = np.random.default_rng(160)
    for _ in range(3):
        size = 32 * int(rng.integers(40, 160))
        _, wins = _case(rng, size)
        stores = _group_stores(rng, size) + _stores(
            rng, size, sorted(set((o, n) for o, n in wins if o + n <= size)), 200
        )
        wr = cupy.zeros(R.map_words(size), cupy.uint32)
        ix = cupy.asarray(np.concatenate([i for _, _, i in stores]).astype(np.int64))
        act = cupy.asarray(np.array([a for _, a, _ in stores], np.uint32))
        nbs = cupy.asarray(np.array([nb for nb, _, _ in stores], np.uint32))
        fn((len(stores),), (32,), (wr, ix, act, nbs))
        assert np.array_equal(wr.get(), _bitmap(_byte_map(size, stores))), (form, size)
