"""PoCL in its best shape for the benchmarks: the work-group size that runs a kernel fastest.

PoCL (pthread device) specialises each kernel for its local size and runs a work-group's items in
one compiled loop, so the local size moves its time by tens of percent (scratch_game 240x135: 8x8
~100 ms, 64x4 ~80 ms on the 2-core host).  A baseline is measured in its best shape, so the
benchmarks pick, per kernel and grid, the fastest of a set of local sizes that divide the grid
(this PoCL has no non-uniform work-groups) and PoCL's own choice (None).  Each candidate gets one
warm-up run (its compile; PoCL caches it on disk) and `runs` timed runs; the best launch time
(enqueue->finish) picks.  The pick is noisy on a shared host, but the benchmark's later runs are what count.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from reference import pocl  # tests/reference on sys.path (the benchmarks put it there)


def candidates(global_size: Sequence[int], natural: Sequence[int] | None = None) -> list:
    """Local sizes worth trying for `global_size` (1-D or 2-D): powers of two that divide it
    (2-D: x 8..512 — a few other multiples of 8 where the width has few factors of two — and
    y 1..16; 64..2048 work-items in all; 1-D: 16..4096), the kernel's natural size (its GLSL / fixture launch) first and
    None (PoCL picks) last."""
    limit = min(4096, pocl.max_work_group_size())
    gs = [int(g) for g in global_size]
    out: list = []
    if natural is not None and all(g % n == 0 for g, n in zip(gs, natural)):
        out.append(tuple(int(n) for n in natural))
    if len(gs) == 1:
        for e in range(4, 13):
            c = (1 << e,)
            if c[0] <= limit and gs[0] % c[0] == 0:
                out.append(c)
    elif len(gs) == 2:
        xs = [x for x in (8, 16, 32, 64, 128, 256, 512) if gs[0] % x == 0]
        if len(xs) < 3:  # a width with few factors of two (16200 = 8 * 2025): its other multiples of 8
            xs += [x for x in range(24, 513, 8) if gs[0] % x == 0 and x & (x - 1)][:4]
        for x in xs:
            for y in (1, 4, 8, 16):
                if 64 <= x * y <= min(2048, limit) and gs[0] % x == 0 and gs[1] % y == 0:
                    out.append((x, y))
    seen: list = []
    for c in out:
        if c not in seen:
            seen.append(c)
    return seen + [None]


class Runner:
    """A kernel on PoCL with its buffers made once (as a program that runs it again and again
    keeps them): each run copies the input arrays in, runs, and copies the output array back.

    `args`: NumPy arrays or scalars, as pocl.run takes them; `out`: the index of the output
    array (not copied in: the kernel writes all of it).  run() returns the times
      kernel  the profiled kernel time
      launch  host enqueue -> finish of the kernel alone
      e2e     inputs copied in, kernel, output copied back (what the host waits for)
    and the output."""

    def __init__(self, cl_file: str, kernel: str, args, out: int):
        cl, ctx, queue, _ = pocl._device()  # the reference shim's context and profiling queue
        self.cl, self.queue, self.out = cl, queue, out
        self.knl = cl.Kernel(pocl.program(cl_file), kernel)
        mf = cl.mem_flags
        self.host = [np.ascontiguousarray(a) if isinstance(a, np.ndarray) else None for a in args]
        self.bufs = [
            cl.Buffer(ctx, mf.READ_WRITE, max(h.nbytes, 1)) if h is not None else a
            for a, h in zip(args, self.host)
        ]
        self.result = np.empty_like(self.host[out])

    def run(self, global_size, local_size) -> dict:
        cl, q = self.cl, self.queue
        gsz = tuple(int(x) for x in global_size)
        lsz = None if local_size is None else tuple(int(x) for x in local_size)
        t0 = time.perf_counter()
        for i, (h, b) in enumerate(zip(self.host, self.bufs)):
            if h is not None and i != self.out:
                cl.enqueue_copy(q, b, h, is_blocking=False)
        q.finish()
        t1 = time.perf_counter()
        ev = self.knl(q, gsz, lsz, *self.bufs)
        ev.wait()
        t2 = time.perf_counter()
        cl.enqueue_copy(q, self.result, self.bufs[self.out], is_blocking=True)
        t3 = time.perf_counter()
        return dict(
            kernel=(ev.profile.end - ev.profile.start) * 1e-9,
            launch=t2 - t1,
            e2e=t3 - t0,
            got=self.result.copy(),
        )


def pick(runner: Runner, global_size, natural=None, runs: int = 2):
    """(best local size, {local size: best launch seconds}) over `candidates`, run by `runner`."""
    times: dict = {}
    for ls in candidates(global_size, natural):
        runner.run(global_size, ls)  # its compile (disk-cached) and warm-up
        times[ls] = min(runner.run(global_size, ls)["launch"] for _ in range(runs))
    return min(times, key=lambda k: times[k]), times


def fmt_local(ls) -> str:
    return "PoCL's choice" if ls is None else "x".join(str(v) for v in ls)
