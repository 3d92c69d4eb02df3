#!/usr/bin/env python3
"""The CUDA backend with guest memory resident on the device (decision 0026, issue 24 item 1):
host time per tiny dispatch, and a full-screen elementwise pass end to end next to native CUDA.

    python bench/bench_resident.py                    # on an NVIDIA machine
    python bench/bench_resident.py --tiny 5000 --passes 50

(1) tiny: one Device (record=False), clang's vadd (basic-O2-w32-flat) over 64 floats, launched
    again and again on the same buffers: wall microseconds per launch (Kernel.launch, whole),
    dispatches per second, and the bytes that crossed the bus per launch (resident.py's counts).
    The same on the NumPy backend for scale.
(2) full screen: bench.cl's shade over 1920x1080 (the guest's 8x8 groups), `--passes` launches
    back to back with the data resident (no download between them; one at the end, timed
    apart): wall per pass end to end and kernel time per pass (CUDA events around the launch,
    `device_time_s`), next to bench/kernels/native.cu's shade launched on device-resident
    arrays with the guest's 8x8 blocks and with its best block shape of a few, each timed as
    kernel time (events, back to back) and as wall per pass (launch + synchronize, so a pass
    ends when its result is there, as ours does).  Then a stream: `--passes` launches with
    nothing read between them and one wait at the end (ours: every result's refusal read after
    the last launch, which with WAVELIFT_CUDA_DEFER=on is the only wait), wall per pass, next to
    native's launches back to back and one synchronize.  The outputs are compared (shade's native
    build uses fmad: within 1 per channel, as gpu_check).
    --stencil: lds.cl's 5x5 stencil through an LDS tile (16x16 groups) the same ways, next to
    native.cu's stencil5 (written for 16x16 blocks: its only shape); exact against NumPy and native.
(2b) --vadd N: clang's vadd over N floats (e.g. 2^26 = 67108864) the same ways, against native.cu's
    vadd at its best block size of 128-1024; the result compared with NumPy's and native's.
(3) --host-only N: the tiny launches of (1) on the CUDA backend's host path without a GPU:
    tests/cuda/standin_cupy.py stands in for CuPy (device arrays are host arrays; the
    translated kernel is built by NVRTC as on a GPU but not run: a stand-in plays vadd through
    the window tables it is handed; wl_runs/wl_land in NumPy).  Reported: wall us per launch,
    the thread's CPU time per launch less the time inside the stand-in's kernels ("host": CPU
    time, so that other work on a shared machine counts less), execute_dispatch's share,
    the operations that would be launches or synchronous copies on a GPU per launch, and the
    host us per launch of each tenth of the run and of the first and last 1,000 launches, with
    the process's gc object count and RSS before and after (flat or not).  ``--ab REV`` runs the
    same measurement on commit REV too (a git worktree under /tmp, or REV itself when it is a
    directory holding a tree, e.g. a ``git archive``; this script run there with ``--tree``)
    and prints both with their ratio.  No GPU needed.
(4) --long N: N tiny launches of (3) on one Device, then 1,000-launch blocks alternating between
    it and a fresh Device (flat over a Device's life, or not), with what the Device holds.
Results print, and go to $OUT/bench_resident.json when $OUT is set.  Exit 2 without a GPU
(except --host-only and --long).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
HERE = pathlib.Path(__file__).resolve().parent
if "--tree" in sys.argv:  # (--ab: the wavelift of another worktree, this script's stand-in)
    ROOT = pathlib.Path(sys.argv[sys.argv.index("--tree") + 1]).resolve()
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "cuda"))

SHAPES = ((8, 8), (16, 8), (16, 16), (32, 4), (32, 8), (32, 16), (64, 2), (64, 4), (128, 1), (256, 1))


def _res(dev):
    return getattr(dev.memory, "resident", None)


def tiny(backend: str, launches: int) -> dict:
    import wavelift

    dev = wavelift.Device("gfx1030", backend=backend, mode="lane", record=False)
    k = dev.load_code_object(str(ROOT / "tests/fixtures/gfx1030/basic-O2-w32-flat.hsaco")).kernel("vadd")
    n = 64
    a = dev.upload(np.arange(n, dtype=np.float32))
    b = dev.upload(np.ones(n, np.float32))
    c = dev.alloc(4 * n)
    args = [a, b, c, np.uint32(n)]
    for _ in range(20):  # (translation, module build, guesses learned)
        r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args)
        assert r.refusal is None, r.refusal
    if backend == "cuda":
        _steady(lambda: k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args))
    ops = getattr(_res(dev), "ops", None)
    up0, down0 = (ops.up, ops.down) if ops else (0, 0)
    t = time.perf_counter()
    ex = 0.0
    tenth = max(1, launches // 10)
    marks = []
    rs = []
    places: dict = {}
    for i in range(launches):
        if i % tenth == 0:
            marks.append(time.perf_counter())
        rs.append(k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args))
        if len(rs) == 1024:  # (stats read a batch at a time: WAVELIFT_CUDA_DEFER=on waits then)
            ex += sum(r.stats["time_s"] for r in rs)
            _places(places, rs)
            rs.clear()
    assert k.last_launch.result.refusal is None  # (WAVELIFT_CUDA_DEFER=on: the last reports read)
    end = time.perf_counter()
    ex += sum(r.stats["time_s"] for r in rs)
    _places(places, rs)
    wall = (end - t) / launches
    tenths = [(b - a) / tenth * 1e6 for a, b in zip(marks, marks[1:] + [end])][: launches // tenth]
    assert np.array_equal(dev.download(c, np.float32), np.arange(n, dtype=np.float32) + 1)
    out = {
        "backend": backend,
        "launches": launches,
        "wall_us_per_launch": wall * 1e6,
        "execute_us_per_launch": ex / launches * 1e6,
        "dispatches_per_s": 1 / wall,
        "wall_us_per_launch_by_tenths": tenths,
        "in_place": places,
    }
    if ops:
        out["bytes_up_per_launch"] = (ops.up - up0) / launches
        out["bytes_down_per_launch"] = (ops.down - down0) / launches
    print(
        f"tiny vadd x{launches} on {backend}: {wall * 1e6:.0f} us per launch wall "
        f"({1 / wall:,.0f}/s), execute_dispatch {ex / launches * 1e6:.0f} us"
        + (
            f"; per launch {out['bytes_up_per_launch']:.0f} B up, {out['bytes_down_per_launch']:.0f} B down"
            if ops
            else ""
        )
        + "\n  wall us per launch by tenths: "
        + " ".join(f"{x:.0f}" for x in tenths)
        + f"; in place: {places}",
        flush=True,
    )
    return out


def _places(places: dict, rs) -> None:
    """Count how each result's launch ran (stats' ``in_place``: "proved", the predicate's reason
    it was not proved, or "-" where not asked: decision 0049 step 4, amendment h125; " lean" after
    it where the lean build ran: amendment h148)."""
    for r in rs:
        p = r.stats.get("in_place", "-") + (" lean" if r.stats.get("build") == "lean" else "")
        places[p] = places.get(p, 0) + 1


def _steady(go) -> None:
    """After the warm-up: the lean builds started in the background (WAVELIFT_CUDA_PROVED=lean,
    the default: decision 0049's amendment h163) waited for, then launches until the plans are
    kept on them, so the passes timed run the build a long run does."""
    from wavelift.backends.cuda import wait_lean

    wait_lean()
    for _ in range(10):
        assert go().refusal is None


def _ours(go, passes: int) -> dict:
    """Our launches of ``go`` (data resident, warmed up by the caller): wall per pass (launch and
    its result: the refusal read, as native's wall includes its synchronize), kernel time per pass (``device_time_s``), execute_dispatch's time, and a stream
    of ``passes`` launches with nothing read between them and every refusal read after the last
    (with WAVELIFT_CUDA_DEFER=on the only wait), wall per pass."""
    walls, kern, ex = [], [], []
    # (how each timed launch ran: "proved" in place, or why not -- globalrange.REASONS --, "-":
    # not asked, WAVELIFT_CUDA_INPLACE off or no heap; decision 0049 step 4, amendment h125)
    places: dict = {}
    for _ in range(passes):
        t = time.perf_counter()
        r = go()
        refusal = r.refusal  # (in the timer: with WAVELIFT_CUDA_DEFER on, reading it waits for the result)
        walls.append(time.perf_counter() - t)
        assert refusal is None, refusal
        kern.append(r.stats.get("device_time_s", float("nan")))
        ex.append(r.stats.get("time_s", float("nan")))
        _places(places, [r])
    t = time.perf_counter()
    rs = [go() for _ in range(passes)]
    refused = [r.refusal for r in rs if r.refusal is not None]
    stream = (time.perf_counter() - t) / passes
    assert not refused, refused[0]
    # the kernel back to back, as native's is timed (WAVELIFT_CUDA_TIMING_REPEAT: 30 launches on
    # copies between two events): a lone launch's events also hold the host's launch call, since
    # the start event is stamped on an idle stream before the kernel is handed over.  What it
    # holds (B2B_HOLDS): the module's kernel alone -- no gather, no map clear, no wl_runs scan,
    # no report read -- and always on the arena's copies: a dispatch with timing repeats never
    # runs in place (runtime._in_place), so under WAVELIFT_CUDA_INPLACE=proved this is the same
    # module's kernel on the arena (the map in the module's form, WAVELIFT_CUDA_MAP), not the
    # in-place launch; the in-place cost beyond its kernel shows in wall and stream only
    old = os.environ.get("WAVELIFT_CUDA_TIMING_REPEAT")
    os.environ["WAVELIFT_CUDA_TIMING_REPEAT"] = "30"
    try:
        r = go()
        assert r.refusal is None, r.refusal
        b2b = r.stats.get("device_time_s", float("nan"))
    finally:
        if old is None:
            del os.environ["WAVELIFT_CUDA_TIMING_REPEAT"]
        else:
            os.environ["WAVELIFT_CUDA_TIMING_REPEAT"] = old
    _places(places, rs)
    med = lambda x: float(np.median(x))  # noqa: E731
    return {
        "ours_wall_s": med(walls),
        "ours_kernel_s": med(kern),
        "ours_kernel_b2b_s": b2b,
        "ours_execute_s": med(ex),
        "ours_stream_s": stream,
        "in_place": places,
    }


# what "kernel back to back" holds (_ours), said beside each such number
B2B_HOLDS = "kernel only, arena copies: no gather/clear/scan, never in place"


def _map_form() -> str:
    """the written map's form and marking the modules are generated with (they change the kernel)"""
    from wavelift import settings

    mark = settings.get("WAVELIFT_CUDA_MAPMARK")
    return f"map {settings.get('WAVELIFT_CUDA_MAP')}" + (f" (mark {mark})" if mark else "")


def _native(fn, grid, blk, arg, passes: int) -> dict:
    """A native kernel on device-resident arrays: kernel time (events around ``passes`` launches
    back to back), wall per pass (launch + synchronize, so a pass ends when its result is there,
    as ours does) and a stream (launches back to back, one synchronize)."""
    import cupy

    sync = cupy.cuda.get_current_stream().synchronize
    fn(grid, blk, arg)
    sync()
    s, e = cupy.cuda.Event(), cupy.cuda.Event()
    s.record()
    for _ in range(passes):
        fn(grid, blk, arg)
    e.record()
    e.synchronize()
    kt = cupy.cuda.get_elapsed_time(s, e) / 1000 / passes
    ws = []
    for _ in range(max(passes, 20)):
        t = time.perf_counter()
        fn(grid, blk, arg)
        sync()
        ws.append(time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(passes):
        fn(grid, blk, arg)
    sync()
    return {"kernel_s": kt, "wall_s": float(np.median(ws)), "stream_s": (time.perf_counter() - t) / passes}


def _pass_case(name: str, w: int, h: int) -> dict:
    """A full-screen pass: bench.cl's shade (the guest's 8x8 groups; native at those and at a few
    shapes) or lds.cl's 5x5 stencil through an LDS tile (16x16 groups; native.cu's is written
    for 16x16 blocks, its only shape); inputs, scalars, launch, code object and how the result is
    compared (shade's native build uses fmad: within 1 per channel, as gpu_check; the stencil:
    exact, against NumPy too)."""
    rng = np.random.default_rng(1080)
    if name == "shade":
        px = rng.integers(0, 1 << 32, size=w * h, dtype=np.uint64).astype(np.uint32)
        wt = rng.uniform(0.0, 2.0, w * h).astype(np.float32)
        return dict(
            hsaco="bench/kernels/bench-gfx1030-O2-w32.hsaco",
            inputs=[px, wt],
            scalars=[np.uint32(w), np.uint32(h), np.float32(1.25), np.float32(-8.0)],
            block=(8, 8),
            shapes=SHAPES,
            want=None,
        )
    from gpu_check import lds_case

    c = lds_case("stencil5")
    assert (w, h) == (1920, 1080), "lds_case's stencil5 is 1920x1080"
    return dict(
        hsaco="bench/kernels/lds-gfx1030-O2-w32.hsaco",
        inputs=c["inputs"],
        scalars=c["scalars"],
        block=(16, 16),
        shapes=((16, 16),),
        want=c["want"],
    )


def pass_launch(dev, name: str, w: int = 1920, h: int = 1080):
    """A full-screen pass (_pass_case) on Device ``dev``: its inputs uploaded, its output
    allocated -> (case, kernel, output buffer, ``go``: one launch of it, its result returned)."""
    c = _pass_case(name, w, h)
    k = dev.load_code_object(str(ROOT / c["hsaco"])).kernel(name)
    bufs = [dev.upload(a) for a in c["inputs"]]
    bo = dev.alloc(4 * w * h)
    bx, by = c["block"]
    groups = (-(-w // bx), -(-h // by))
    args = bufs + [bo] + c["scalars"]
    return c, k, bo, lambda: k.launch(groups=groups, block=(bx, by), args=args)


def fullscreen(passes: int, name: str = "shade", w: int = 1920, h: int = 1080) -> dict:
    import cupy
    from gpu_check import native_module

    import wavelift

    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    c, k, bo, go = pass_launch(dev, name, w, h)
    bx, by = c["block"]
    t = time.perf_counter()
    r = go()
    first = time.perf_counter() - t
    assert r.refusal is None, r.refusal
    for _ in range(20):  # (window guesses learned, kept plans; deferred: each queue slot's graph)
        go()
    _steady(go)
    ops = _res(dev).ops
    up0, down0 = ops.up, ops.down
    ours = _ours(go, passes)
    up, down = (ops.up - up0) / (2 * passes), (ops.down - down0) / (2 * passes)
    t = time.perf_counter()
    got = dev.download(bo, np.uint32)
    dl = time.perf_counter() - t

    fn = native_module(f"sm_{cupy.cuda.Device().compute_capability}").get_function(name)
    ins = [cupy.asarray(a) for a in c["inputs"]]
    dout = cupy.zeros(w * h, cupy.uint32)
    nat = {}
    for sx, sy in c["shapes"]:
        nat[f"{sx}x{sy}"] = _native(
            fn, (-(-w // sx), -(-h // sy)), (sx, sy), (*ins, dout, *c["scalars"]), passes
        )
    if c["want"] is None:
        diff = np.abs(got.view(np.uint8).astype(np.int16) - dout.get().view(np.uint8).astype(np.int16))
        agrees = bool(diff.max() <= 1)
    else:
        agrees = bool(np.array_equal(got, c["want"]) and np.array_equal(dout.get(), c["want"]))
    best = min(nat, key=lambda s: nat[s]["kernel_s"])
    out = {
        "kernel": name,
        "size": [w, h],
        "passes": passes,
        "first_launch_s": first,
        **ours,
        "bytes_up_per_pass": up,
        "bytes_down_per_pass": down,
        "download_s": dl,
        "native": nat,
        "native_best_shape": best,
        "agrees": agrees,
    }
    g, b, stream = nat[f"{bx}x{by}"], nat[best], ours["ours_stream_s"]
    print(
        f"{name} {w}x{h}, {passes} passes resident: ours {out['ours_wall_s'] * 1e3:.3f} ms wall per pass "
        f"(execute {out['ours_execute_s'] * 1e3:.3f}), kernel {out['ours_kernel_s'] * 1e3:.3f} ms; "
        f"{up:.0f} B up, {down:.0f} B down per pass; download at the end {dl * 1e3:.2f} ms\n"
        f"  native {bx}x{by}: kernel {g['kernel_s'] * 1e3:.3f} ms, wall {g['wall_s'] * 1e3:.3f} ms; "
        f"best {best}: kernel {b['kernel_s'] * 1e3:.3f} ms, wall {b['wall_s'] * 1e3:.3f} ms\n"
        f"  ratios: wall ours/native({bx}x{by}) {out['ours_wall_s'] / g['wall_s']:.2f}x, "
        f"/native(best) {out['ours_wall_s'] / b['wall_s']:.2f}x; kernel ours/native({bx}x{by}) "
        f"{out['ours_kernel_s'] / g['kernel_s']:.2f}x, /native(best) {out['ours_kernel_s'] / b['kernel_s']:.2f}x; "
        f"kernel back to back ({B2B_HOLDS}; {_map_form()}) {out['ours_kernel_b2b_s'] * 1e3:.3f} ms: "
        f"{out['ours_kernel_b2b_s'] / g['kernel_s']:.2f}x / {out['ours_kernel_b2b_s'] / b['kernel_s']:.2f}x; "
        f"{'agrees within 1' if c['want'] is None else 'exact (vs NumPy and native)'}: {agrees}\n"
        f"  a stream of {passes} passes, one wait at its end: ours {stream * 1e3:.3f} ms a pass, native {bx}x{by} "
        f"{g['stream_s'] * 1e3:.3f}, best {b['stream_s'] * 1e3:.3f}: {stream / g['stream_s']:.2f}x / "
        f"{stream / b['stream_s']:.2f}x; in place: {ours['in_place']}",
        flush=True,
    )
    return out


def big_vadd(n: int, passes: int) -> dict:
    """clang's vadd over n floats (guest workgroups of 256), data resident, against native.cu's
    vadd at its best block size of a few: wall per launch (launch + wait), as a stream (one wait
    at its end), and kernel time (ours: device_time_s; native: events back to back)."""
    import cupy
    from gpu_check import native_module

    import wavelift

    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = dev.load_code_object(str(ROOT / "tests/fixtures/gfx1030/basic-O2-w32-flat.hsaco")).kernel("vadd")
    rng = np.random.default_rng(26)
    a_h = rng.standard_normal(n, dtype=np.float32)
    b_h = rng.standard_normal(n, dtype=np.float32)
    a, b, c = dev.upload(a_h), dev.upload(b_h), dev.alloc(4 * n)
    args = [a, b, c, np.uint32(n)]
    go = lambda: k.launch(global_size=(n, 1, 1), block=(256, 1, 1), args=args)  # noqa: E731
    for _ in range(20):  # (translation, build, guesses learned, kept plans, queue slots' graphs)
        assert go().refusal is None
    _steady(go)
    o = _ours(go, passes)
    got = dev.download(c, np.float32)
    exact = bool(np.array_equal(got, a_h + b_h))

    fn = native_module(f"sm_{cupy.cuda.Device().compute_capability}").get_function("vadd")
    da, db, dc = cupy.asarray(a_h), cupy.asarray(b_h), cupy.zeros(n, cupy.float32)
    nat = {
        str(bx): _native(fn, (-(-n // bx),), (bx,), (da, db, dc, np.uint32(n)), passes)
        for bx in (128, 256, 512, 1024)
    }
    exact = exact and bool(np.array_equal(dc.get(), got))
    best = min(nat, key=lambda s: nat[s]["kernel_s"])
    bb, stream = nat[best], o["ours_stream_s"]
    out = {"n": n, "passes": passes, **o, "native": nat, "native_best_block": best, "exact": exact}
    print(
        f"vadd over {n:,} floats, {passes} passes resident: ours wall {out['ours_wall_s'] * 1e3:.3f} ms, "
        f"kernel (a lone launch's events: its host launch call in them) {out['ours_kernel_s'] * 1e3:.3f} ms, "
        f"stream {stream * 1e3:.3f} ms a pass; native best block "
        f"{best}: wall {bb['wall_s'] * 1e3:.3f}, kernel {bb['kernel_s'] * 1e3:.3f}, stream "
        f"{bb['stream_s'] * 1e3:.3f} ms\n  ratios ours/native(best): wall {out['ours_wall_s'] / bb['wall_s']:.2f}x, "
        f"kernel {out['ours_kernel_s'] / bb['kernel_s']:.2f}x (back to back, {B2B_HOLDS}; {_map_form()}: "
        f"{out['ours_kernel_b2b_s'] * 1e3:.3f} ms: "
        f"{out['ours_kernel_b2b_s'] / bb['kernel_s']:.2f}x), stream {stream / bb['stream_s']:.2f}x; "
        f"exact (vs NumPy and native): {exact}; in place: {o['in_place']}",
        flush=True,
    )
    return out


def scan_head_only() -> None:
    """Measurement only (--scan-head): Allocation.data pulls just the first SCAN_BYTES from the
    device -- what the tracer's pointer scan reads -- as the tracer would if it read them with
    GuestMemory.peek instead of Allocation.data (the rest of the bench reads guest memory only
    through download, which pulls what it reads)."""
    from wavelift.memory.guest import Allocation
    from wavelift.trace.tracer import SCAN_BYTES

    def data(self):
        if self.resident is not None:
            self.resident.pull(self, 0, min(self.size, SCAN_BYTES))
        return self._data

    Allocation.data = property(data)  # type: ignore[assignment,method-assign]


def profile(launches: int) -> None:
    import cProfile
    import pstats

    pr = cProfile.Profile()
    pr.enable()
    tiny("cuda", launches)
    pr.disable()
    pstats.Stats(pr).sort_stats("tottime").print_stats(30)


def host_only(launches: int, quiet: bool = False) -> dict:
    """(3): the tiny launches' host path on the stand-in (no GPU)."""
    import standin_cupy as S

    from wavelift.run import execute as engine

    inner = {"cpu": 0.0}
    real = engine.execute_dispatch

    def timed(*a, **k):  # (execute_dispatch's CPU time, the stand-in's kernels included)
        t0 = time.thread_time()
        try:
            return real(*a, **k)
        finally:
            inner["cpu"] += time.thread_time() - t0

    engine.execute_dispatch = timed  # type: ignore[assignment]
    try:
        return _host_only(launches, quiet, S, inner)
    finally:
        engine.execute_dispatch = real  # type: ignore[assignment]


def _rss_kib() -> int:
    """This process's resident set (KiB; Linux), 0 where /proc does not say."""
    try:
        for line in pathlib.Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tiny_vadd(n: int = 64):
    """A Device(record=False) on the CUDA backend with clang's vadd and its three buffers of
    ``n`` floats: (device, kernel, a, b, c, launch arguments)."""
    import wavelift

    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = dev.load_code_object(str(ROOT / "tests/fixtures/gfx1030/basic-O2-w32-flat.hsaco")).kernel("vadd")
    a = dev.upload(np.arange(n, dtype=np.float32))
    b = dev.upload(np.ones(n, np.float32))
    c = dev.alloc(4 * n)
    return dev, k, a, b, c, [a, b, c, np.uint32(n)]


def _host_only(launches: int, quiet: bool, S, inner: dict) -> dict:
    with S.installed() as st:
        n = 64
        dev, k, a, b, c, args = _tiny_vadd(n)
        st.kernel = S.vadd_player((a.address, b.address, c.address), n)
        for _ in range(20):  # (translation, module build, guesses learned)
            r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args)
            assert r.refusal is None, r.refusal
        st.calls.clear()
        fast0 = getattr(dev, "fast_launches", None)
        tenth = max(1, launches // 10)
        parts = []
        # (long life: the first and the last 1,000 launches' host time, and what the process holds)
        edge = min(1000, launches // 2)
        marks: dict = {}
        objs0, rss0 = len(gc.get_objects()), _rss_kib()
        ex = 0.0
        dev0 = st.device_s
        t = time.perf_counter()
        c0 = time.thread_time()
        inner["cpu"] = 0.0
        rs = []
        for i in range(launches):
            if i % tenth == 0:
                parts.append((time.thread_time(), st.device_s))
            if i == edge or i == launches - edge:
                marks[i] = (time.thread_time(), st.device_s)
            rs.append(k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args))
        r = rs[-1]
        assert r.refusal is None, r.refusal  # (WAVELIFT_CUDA_DEFER=on: the last reports read, timed)
        end = time.perf_counter()
        cpu_end = time.thread_time()
        # (each result's stats read after the loop: a deferred one's reading waits for reports)
        ex = sum(x.stats["time_s"] for x in rs)
        del rs
        parts.append((cpu_end, st.device_s))
        gc.collect()
        objs1, rss1 = len(gc.get_objects()), _rss_kib()
        first = ((marks[edge][0] - c0) - (marks[edge][1] - dev0)) / edge * 1e6 if edge else None
        last = (
            ((cpu_end - marks[launches - edge][0]) - (st.device_s - marks[launches - edge][1])) / edge * 1e6
            if edge
            else None
        )
        wall = (end - t) / launches
        cpu = (cpu_end - c0) / launches
        device = (st.device_s - dev0) / launches
        assert r.refusal is None, r.refusal
        out_c = dev.download(c, np.float32)
        assert np.array_equal(out_c, np.arange(n, dtype=np.float32) + 1)
        calls = {name: v / launches for name, v in sorted(st.calls.items())}
    pieces = [
        ((t1 - t0) - (d1 - d0)) / tenth * 1e6
        for (t0, d0), (t1, d1) in zip(parts[:-1], parts[1:-1] + parts[-1:])
    ][: launches // tenth]
    out = {
        "tree": str(ROOT),
        "launches": launches,
        "wall_us_per_launch": wall * 1e6,
        "cpu_us_per_launch": cpu * 1e6,
        "standin_device_us_per_launch": device * 1e6,
        "host_us_per_launch": (cpu - device) * 1e6,
        "execute_us_per_launch": ex / launches * 1e6,
        "execute_host_us_per_launch": (inner["cpu"] / launches - device) * 1e6,
        "device_calls_per_launch": calls,
        "output_sha256": hashlib.sha256(out_c.tobytes()).hexdigest()[:16],
        "host_us_per_tenth": pieces,
        "host_us_first_last_1000": [first, last],
        "gc_objects_before_after": [objs0, objs1],
        "rss_kib_before_after": [rss0, rss1],
        # launches that took Device's repeated-launch path (trees that have one)
        "fast_launches": None if fast0 is None else dev.fast_launches - fast0,
    }
    if not quiet:
        _print_host(out)
    return out


def long_life(launches: int) -> dict:
    """--long N (no GPU): N tiny launches on one Device on the stand-in (as --host-only), then
    1,000-launch blocks alternating between that Device and a fresh one (warmed as the first
    was), five each: host us per launch of each block (a Device that grew slower with its life
    would lose to the fresh one under the same load), with the old Device's allocations, free
    lists and kept runs, the process's gc objects and RSS after the N launches and at the end."""
    import standin_cupy as S

    def device(st):
        n = 64
        dev, k, a, b, c, args = _tiny_vadd(n)

        def go(count):
            st.kernel = S.vadd_player((a.address, b.address, c.address), n)
            t0, d0 = time.thread_time(), st.device_s
            for _ in range(count):
                r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args)
            assert r.refusal is None, r.refusal
            return ((time.thread_time() - t0) - (st.device_s - d0)) / count * 1e6

        go(20)
        return dev, c, go

    def held(dev):
        res = dev.memory.resident
        return {
            "allocations": len(dev.memory.allocations),
            "free_lists": sum(len(v) for v in dev._pool.values()),
            "kept_runs": len(res.kept) if res is not None and hasattr(res, "kept") else None,
            "gc_objects": len(gc.get_objects()),
            "rss_kib": _rss_kib(),
        }

    with S.installed() as st:
        old, c_old, go_old = device(st)
        t = time.perf_counter()
        first = go_old(launches)
        after = held(old)
        fresh, c_new, go_new = device(st)
        blocks: dict = {"old": [], "fresh": []}
        for _ in range(5):
            blocks["old"].append(go_old(1000))
            blocks["fresh"].append(go_new(1000))
        end = held(old)
        for dev, c in ((old, c_old), (fresh, c_new)):
            assert np.array_equal(dev.download(c, np.float32), np.arange(64, dtype=np.float32) + 1)
        out = {
            "launches": launches,
            "host_us_per_launch": first,
            "wall_s": time.perf_counter() - t,
            "after_launches": after,
            "at_end": end,
            "blocks_host_us": blocks,
            "median_old_fresh": [float(np.median(blocks["old"])), float(np.median(blocks["fresh"]))],
            "fast_launches": getattr(old, "fast_launches", None),
        }
    print(
        f"long life: {launches} tiny launches on one Device, {first:.1f} us host per launch; then 1,000-launch "
        f"blocks, old / fresh Device: "
        + " ".join(f"{a:.1f}/{b:.1f}" for a, b in zip(blocks["old"], blocks["fresh"]))
        + f" (medians {out['median_old_fresh'][0]:.1f} / {out['median_old_fresh'][1]:.1f})\n  held after the "
        f"launches: {after}\n  held at the end: {end}\n  launches through the kept launch: {out['fast_launches']}",
        flush=True,
    )
    return out


def _print_host(o: dict, label: str = "") -> None:
    print(
        f"host-only{label} tiny vadd x{o['launches']} (stand-in device, {o['tree']}): "
        f"{o['host_us_per_launch']:.1f} us host per launch (CPU time of the thread, "
        f"{o['cpu_us_per_launch']:.1f}, less {o['standin_device_us_per_launch']:.1f} in stand-in kernels; "
        f"wall {o['wall_us_per_launch']:.1f}); of it execute_dispatch "
        f"{o['execute_host_us_per_launch']:.1f} us host (CPU, less the stand-in's kernels; the rest is "
        f"the driver's launch, PM4 and the stream walker)\n  per launch: "
        + ", ".join(f"{k} {v:g}" for k, v in o["device_calls_per_launch"].items())
        + (
            f"\n  repeated-launch path: {o['fast_launches']} of {o['launches']} launches"
            if o.get("fast_launches") is not None
            else ""
        )
        + (f"\n  output c sha256 {o['output_sha256']}" if "output_sha256" in o else "")
        + "\n  host us per launch by tenths: "
        + " ".join(f"{x:.1f}" for x in o["host_us_per_tenth"])
        + (
            "\n  first / last 1,000 launches: {:.1f} / {:.1f} us host; gc objects {} -> {}; RSS {} -> {} KiB".format(
                *o["host_us_first_last_1000"], *o["gc_objects_before_after"], *o["rss_kib_before_after"]
            )
            if o.get("host_us_first_last_1000", [None])[0] is not None
            else ""
        ),
        flush=True,
    )


def ab(rev: str, launches: int, rounds: int) -> dict:
    """--ab: the host-only measurement on commit ``rev`` (a worktree under /tmp) and on this
    tree, in alternating processes (``rounds`` each: a shared machine's load falls on both
    alike); the best and the median round of each."""
    import subprocess
    import tempfile

    if pathlib.Path(rev).is_dir():  # (a tree itself, e.g. a `git archive` of a commit)
        sha, wt = rev, pathlib.Path(rev).resolve()
    else:
        sha = subprocess.run(
            ["git", "-C", str(HERE.parent), "rev-parse", "--short", rev],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        wt = pathlib.Path(tempfile.gettempdir()) / f"wavelift-ab-{sha}"
    if not wt.exists():
        subprocess.run(
            ["git", "-C", str(HERE.parent), "worktree", "add", "--detach", str(wt), sha],
            check=True,
            capture_output=True,
        )
    tmp = pathlib.Path(tempfile.mkdtemp())
    got: dict = {"before": [], "after": []}
    for r in range(rounds):
        for side, tree in (("before", wt), ("after", HERE.parent)):
            js = tmp / f"{side}{r}.json"
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--tree",
                    str(tree),
                    "--host-only",
                    str(launches),
                    "--json",
                    str(js),
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            got[side].append(json.loads(js.read_text())["host_only"])
    out: dict = {"rev": sha, "rounds": rounds}
    for side in ("before", "after"):
        xs = sorted(got[side], key=lambda o: o["host_us_per_launch"])
        _print_host(xs[0], f" {side.upper()} ({sha if side == 'before' else 'this tree'}), best of {rounds}")
        out[side] = {
            "best": xs[0],
            "median_host_us": float(np.median([o["host_us_per_launch"] for o in xs])),
            "host_us": [o["host_us_per_launch"] for o in got[side]],
        }
    b, a = out["before"], out["after"]
    print(
        f"host us per launch, best of {rounds} rounds: before {b['best']['host_us_per_launch']:.1f}, "
        f"after {a['best']['host_us_per_launch']:.1f} ({b['best']['host_us_per_launch'] / a['best']['host_us_per_launch']:.2f}x); "
        f"medians {b['median_host_us']:.1f} -> {a['median_host_us']:.1f} "
        f"({b['median_host_us'] / a['median_host_us']:.2f}x)",
        flush=True,
    )
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", type=int, default=2000, help="tiny launches timed (0: none)")
    ap.add_argument("--passes", type=int, default=30, help="full-screen passes timed (0: none)")
    ap.add_argument("--vadd", type=int, default=0, help="vadd over this many floats, e.g. 67108864 (0: none)")
    ap.add_argument("--stencil", action="store_true", help="lds.cl's 5x5 stencil passes too (1920x1080)")
    ap.add_argument("--numpy", action="store_true", help="the tiny launches on the NumPy backend too")
    ap.add_argument("--scan-head", action="store_true", help="measurement only: scan_head_only()")
    ap.add_argument("--profile", type=int, default=0, help="cProfile N tiny launches")
    ap.add_argument("--host-only", type=int, default=0, help="N tiny launches on the stand-in (no GPU)")
    ap.add_argument(
        "--ab", default=None, help="with --host-only: also measure commit AB (a worktree), or the tree AB"
    )
    ap.add_argument("--rounds", type=int, default=3, help="--ab: alternating rounds of each")
    ap.add_argument(
        "--long", type=int, default=0, help="N launches on one Device, then it against a fresh one"
    )
    ap.add_argument("--tree", default=None, help="(internal) the wavelift tree to import")
    ap.add_argument("--json", default=None, help="write the results here as well")
    args = ap.parse_args()
    if args.long:
        rep = {"long_life": long_life(args.long)}
        if os.environ.get("OUT"):
            pathlib.Path(os.environ["OUT"], "bench_resident_long.json").write_text(json.dumps(rep, indent=1))
        return
    if args.host_only:
        rep = (
            ab(args.ab, args.host_only, args.rounds) if args.ab else {"host_only": host_only(args.host_only)}
        )
        if args.profile:
            import cProfile
            import pstats

            pr = cProfile.Profile()
            pr.enable()
            host_only(args.profile, quiet=True)
            pr.disable()
            # (the stand-in's rows are its "device": tests/cuda/standin_cupy.py, and NumPy under it)
            print(
                f"cProfile of {args.profile} host-only launches ({ROOT}): top 25 by tottime, then by cumtime"
            )
            pstats.Stats(pr).sort_stats("tottime").print_stats(25)
            pstats.Stats(pr).sort_stats("cumtime").print_stats(25)
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(rep, indent=1))
        if os.environ.get("OUT"):
            pathlib.Path(os.environ["OUT"], "bench_resident_host.json").write_text(json.dumps(rep, indent=1))
        return
    from wavelift.backends.cuda import available

    if available() is not True:
        print(f"no CUDA device: {available()}")
        sys.exit(2)
    rep: dict = {"scan_head": args.scan_head}
    if args.scan_head:
        scan_head_only()
    if args.profile:
        profile(args.profile)
    if args.tiny:
        rep["tiny_cuda"] = tiny("cuda", args.tiny)
        if args.numpy:
            rep["tiny_numpy"] = tiny("numpy", args.tiny)
    if args.passes:
        rep["fullscreen"] = fullscreen(args.passes)
        if args.stencil:
            rep["stencil5"] = fullscreen(args.passes, "stencil5")
    if args.vadd:
        rep["vadd"] = big_vadd(args.vadd, max(args.passes, 10))
    if os.environ.get("OUT"):
        pathlib.Path(os.environ["OUT"], "bench_resident.json").write_text(json.dumps(rep, indent=1))


if __name__ == "__main__":
    main()
