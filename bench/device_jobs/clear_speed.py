#!/usr/bin/env python3
"""How fast the in-place run's map clear can be (session 53: ncu gave wl_aside 32 us for vadd 2^26's
32 MB map, ~1 TB/s): wl_aside (resident.CuPyOps.aside_call, not overflowed) against cudaMemsetAsync
and CuPy's fill on the same 32 MB, each after a kernel that dirties the map (all ones, as a
vadd's marks leave it), timed by events over 20 rounds -- the numbers decide whether the clear
should be a memset node (the aside copy a kernel of its own before it)."""

import sys

import cupy as cp
import numpy as np

from wavelift.backends.cuda.resident import CuPyOps

n = int(sys.argv[1]) if len(sys.argv) > 1 else 32 << 20
ops = CuPyOps()
w = cp.zeros(n, cp.uint8)
aside = cp.zeros(n, cp.uint8)
count = cp.zeros(2, cp.uint32)
clear = ops.aside_call(w, aside, count, 1 << 20)
dirty = cp.ElementwiseKernel("", "uint32 x", "x = 0xFFFFFFFFu", "wl_dirty")
ways = {
    "wl_aside": clear,
    "memsetAsync": lambda: cp.cuda.runtime.memsetAsync(w.data.ptr, 0, n, cp.cuda.get_current_stream().ptr),
    "fill": lambda: w.fill(0),
}
for name, f in ways.items():
    best = []
    for _ in range(20):
        dirty(w.view(cp.uint32))
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        f()
        b.record()
        b.synchronize()
        best.append(cp.cuda.get_elapsed_time(a, b) * 1000)
    assert not bool(w.any()), name
    print(f"{name:12s} {n >> 20} MB: median {np.median(best):.1f} us, min {min(best):.1f} us", flush=True)
