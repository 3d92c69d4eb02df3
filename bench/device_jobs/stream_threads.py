#!/usr/bin/env python3
"""Why a stencil5 stream's launch calls take ~110 us where shade's take ~30 (session 56): the
cProfile of session 55's fourth job found no blocking call -- every Python function of the
launch path ran ~3x slower.  This job times, in one process: a pure-Python probe (a loop of small
function calls) with the GPU idle; then for shade and stencil5 each the passes (launch calls)
with the probe after them, the threads alive (a module's optimising build, Upgrade, runs in a
daemon thread) and each module's build state; then the same passes again after every wavelift
thread was joined.  A slower probe during a stream, or a faster stream once the threads are
gone, names the cause."""

import sys
import threading
import time

import numpy as np

sys.path.insert(0, "bench")
import bench_resident as BR  # noqa: E402

import wavelift  # noqa: E402


def probe(n=200_000):
    def f(x):
        return x + 1

    t = time.perf_counter()
    x = 0
    for _ in range(n):
        x = f(x)
    return (time.perf_counter() - t) / n * 1e9


def threads():
    return [(t.name, t.daemon) for t in threading.enumerate() if t is not threading.main_thread()]


def why_not_fast(dev, k, go):
    """Whether kernel ``k``'s repeated launches take the driver's kept launch (Device._launch_fast;
    the stencil stream's cProfile showed _prepare and _keep_fast every launch, _launch_fast
    never): kept now, the kernargs' and packet's device copies (a stamp needs one), and of 8 more
    launches how many _launch_fast ran to a result (Device.fast_launches counts _run_again too)."""
    from wavelift.driver.device import Device

    rec, mem = k.last_launch, dev.memory
    out = {"kept": k._fast is not None}
    for name, addr in (("kernargs", rec.kernarg_address), ("packet", rec.packet_address)):
        a = mem.find(addr)
        out[name] = "no allocation" if a is None else ("device copy" if a.resident else "no device copy")
    real, ran = Device._launch_fast, []
    Device._launch_fast = lambda self, kk, fp: ran.append(real(self, kk, fp)) or ran[-1]  # type: ignore[method-assign]
    try:
        for _ in range(8):
            go()
    finally:
        Device._launch_fast = real  # type: ignore[method-assign]
    out["kept launches of 8"] = sum(r is not None for r in ran)
    return out


print(f"probe idle: {probe():.1f} ns a call; threads {threads()}")
w, h = 1920, 1080
dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
cases = {}
for what in ("shade", "stencil5"):
    _, k, _, go = BR.pass_launch(dev, what, w, h)
    for _ in range(30):
        assert go().refusal is None
    BR._steady(go)
    cases[what] = (go, k)
    print(f"{what}: fast launches {dev.fast_launches}; why: {why_not_fast(dev, k, go)}")


def rounds(label, passes=100):
    for what, (go, _k) in cases.items():
        for rnd in range(2):
            calls, rs = [], []
            t0 = time.perf_counter()
            for _ in range(passes):
                t = time.perf_counter()
                rs.append(go())
                calls.append(time.perf_counter() - t)
            host = time.perf_counter() - t0
            p = probe(50_000)  # (the queue's GPU work may still run)
            assert all(r.refusal is None for r in rs)
            total = time.perf_counter() - t0
            print(
                f"{label} {what} round {rnd}: launch calls median {np.median(calls) * 1e6:.1f} us, "
                f"host {host / passes * 1e6:.1f} us a pass, all {total / passes * 1e6:.1f}; "
                f"probe right after {p:.1f} ns; build {rs[-1].stats.get('build')}"
            )
    print(f"{label} threads: {threads()}")


rounds("as run")

t = time.perf_counter()
for th in threading.enumerate():
    if th is not threading.main_thread() and th.name.startswith("wavelift"):
        th.join(120)
print(f"joined wavelift threads in {time.perf_counter() - t:.2f} s; left {threads()}")
rounds("joined")
print(f"probe idle at the end: {probe():.1f} ns a call")
import gc  # noqa: E402

gc.disable()
rounds("gc off")
gc.enable()
print(f"gc counts {gc.get_count()}, objects {len(gc.get_objects())}")
