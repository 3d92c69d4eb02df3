#!/usr/bin/env python3
"""Where a stream of resident shade passes spends its host time (session 52): bench_resident's
full-screen shade (1920x1080, the guest's 8x8 groups), warmed, then `passes` launches with no
read between them and every refusal read at the end -- under cProfile (top functions by own and
cumulative time), and again timed per launch call and for the final wait.  A launch call that
takes as long as the kernel means the host waits on the GPU inside it (the stream is then host +
kernel per pass, not the larger of the two).  Also: nsys's presence, for a timeline."""

import cProfile
import io
import pstats
import shutil
import sys
import time

import numpy as np

sys.path.insert(0, "bench")
import bench_resident as BR  # noqa: E402

import wavelift  # noqa: E402

passes = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 50
if "--whole" in sys.argv:  # (A/B: a full queue read whole, as before session 52's ``front``)
    from wavelift.backends.cuda import resident as R

    _flush = R.Resident.flush
    R.Resident.flush = lambda self, front=0: _flush(self)
w, h = 1920, 1080
what = "stencil5" if "--stencil" in sys.argv else "shade"  # (bench_resident's two full-screen passes)
dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
_, k, _, go = BR.pass_launch(dev, what, w, h)
for _ in range(30):
    r = go()
    assert r.refusal is None, r.refusal
BR._steady(go)  # (the lean build, built in the background since 0049's h163, waited for and kept)


def stream():
    rs = [go() for _ in range(passes)]
    return [r.refusal for r in rs]


for rnd in range(2):
    calls = []
    t0 = time.perf_counter()
    rs = []
    for _ in range(passes):
        t = time.perf_counter()
        rs.append(go())
        calls.append(time.perf_counter() - t)
    t = time.perf_counter()
    refused = [r.refusal for r in rs if r.refusal is not None]
    wait = time.perf_counter() - t
    total = time.perf_counter() - t0
    print(
        f"round {rnd}: {passes} passes {total / passes * 1e6:.1f} us a pass; launch calls us: median "
        f"{np.median(calls) * 1e6:.1f}, min {min(calls) * 1e6:.1f}, max {max(calls) * 1e6:.1f}; "
        f"by tenths {[round(float(np.median(calls[i::10])) * 1e6) for i in range(10)]}; "
        f"final wait {wait * 1e6:.0f} us; refused {len(refused)}; in place {rs[-1].stats.get('in_place')}"
    )
print("first launch calls of the last round, us:", [round(x * 1e6) for x in calls[:12]])
pr = cProfile.Profile()
pr.enable()
stream()
pr.disable()
for key in ("tottime", "cumulative"):
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats(key).print_stats(45)
    print(f"==== cProfile by {key} ({passes} passes)\n" + s.getvalue())
print("nsys:", shutil.which("nsys"), "ncu:", shutil.which("ncu"))
