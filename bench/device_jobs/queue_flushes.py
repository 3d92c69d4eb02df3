#!/usr/bin/env python3
"""How often a stream of warmed resident passes reads its deferred queue (session 54: stencil5's
kernarg put drained it every launch until amendment h165): Resident.flush wrapped over 20 launches
of stencil5 and shade each, after the lean build is there (bench_resident._steady), counted by
``front`` (0: the whole queue -- a stream sync; depth/2: a full queue's oldest half, as designed).

    python3 bench/device_jobs/queue_flushes.py      # (WAVELIFT_CUDA_PROVED as the environment says)"""

import collections
import os
import sys
import time

sys.path.insert(0, "bench")
import bench_resident as BR  # noqa: E402

import wavelift  # noqa: E402
from wavelift.backends.cuda import resident as R  # noqa: E402

for what in ("stencil5", "shade"):
    c = BR._pass_case(what, 1920, 1080)
    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = dev.load_code_object(str(BR.ROOT / c["hsaco"])).kernel(what)
    args = [dev.upload(x) for x in c["inputs"]] + [dev.alloc(4 * 1920 * 1080)] + c["scalars"]
    bx, by = c["block"]
    go = lambda: k.launch(groups=(-(-1920 // bx), -(-1080 // by)), block=(bx, by), args=args)  # noqa: E731
    for _ in range(30):
        go()
    BR._steady(go)
    seen: collections.Counter = collections.Counter()
    orig = R.Resident.flush

    def counted(self, front=0, _o=orig):
        if self.pending:
            seen[f"front={front}"] += 1
        return _o(self, front)

    R.Resident.flush = counted
    t = time.perf_counter()
    rs = [go() for _ in range(20)]
    bad = [r.refusal for r in rs if r.refusal is not None]
    R.Resident.flush = orig
    print(
        f"{what} PROVED={os.environ.get('WAVELIFT_CUDA_PROVED', '(default)')}: reads of the queue with work "
        f"in it over 20 launches {dict(seen)}; {(time.perf_counter() - t) / 20 * 1e6:.1f} us a launch "
        f"(+ the final read); refused {len(bad)}; build {rs[-1].stats.get('build')}; "
        f"in place {rs[-1].stats.get('in_place')}"
    )
