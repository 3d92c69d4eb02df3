#!/usr/bin/env python3
"""The GPU operations of one in-place pass, one by one (session 52: a stream of shade passes takes
~50 us of GPU work a pass for a 23 us kernel; vadd over 2^26 floats in place ~0.35 ms more than
its kernel back to back).  Run under ncu with graph nodes profiled apart:

    ncu --graph-profiling node --metrics gpu__time_duration.sum python3 bench/device_jobs/inplace_nodes.py vadd|shade|stencil5

It warms the dispatch (translation, build, guesses, kept plan, graphs), then marks the profiled
part with a cudaProfilerStart/Stop pair (ncu --profile-from-start off) around `n` launches, each
result read (so every graph ran whole).  Prints the host's view too (wall per launch)."""

import sys
import time

import numpy as np

sys.path.insert(0, "bench")
import bench_resident as BR  # noqa: E402

import wavelift  # noqa: E402

what = sys.argv[1] if len(sys.argv) > 1 else "shade"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 3
dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
if what == "vadd":
    N = 1 << 26
    k = dev.load_code_object(str(BR.ROOT / "tests/fixtures/gfx1030/basic-O2-w32-flat.hsaco")).kernel("vadd")
    a, b = dev.upload(np.ones(N, np.float32)), dev.upload(np.ones(N, np.float32))
    args = [a, b, dev.alloc(4 * N), np.uint32(N)]
    go = lambda: k.launch(global_size=(N, 1, 1), block=(256, 1, 1), args=args)  # noqa: E731
else:  # shade or stencil5: bench_resident's full-screen pass, the guest's groups
    w, h = 1920, 1080
    c = BR._pass_case(what, w, h)
    k = dev.load_code_object(str(BR.ROOT / c["hsaco"])).kernel(what)
    args = [dev.upload(x) for x in c["inputs"]] + [dev.alloc(4 * w * h)] + c["scalars"]
    bx, by = c["block"]
    go = lambda: k.launch(groups=(-(-w // bx), -(-h // by)), block=(bx, by), args=args)  # noqa: E731
for _ in range(25):
    assert go().refusal is None
import cupy  # noqa: E402

cupy.cuda.runtime.profilerStart()
t = time.perf_counter()
for _ in range(n):
    r = go()
    assert r.refusal is None, r.refusal
cupy.cuda.runtime.profilerStop()
print(
    f"{what}: {n} launches, each read: {(time.perf_counter() - t) / n * 1e6:.0f} us a launch (under the profiler); in place {r.stats.get('in_place')}"
)
