"""Scratch benchmark: the two game-shaped passes of D954 (ACO scratch_game, wave64, a dynamically
indexed private uint[96] per thread) — 240x135 workgroups of 8x8, and 32400 workgroups of 8x8.

    python bench/bench_scratch.py [--steps N] [--mode wave|lane] [--small] [--tiers numpy,native]
                                  [--repeat N]

For each pass and tier: seconds per pass (the native tier: best of --repeat warm runs, its
library compiled and cached by a small dispatch first; NumPy blocks: one run, they take
seconds), waves/s, the ratio NumPy blocks / native tier (the previous path of scratch programs
next to the new one, decision 0020), and the ratio to a baseline: the same shader with scratch
turned into plain arithmetic is not available, so the baseline is the NumPy reference of the
same computation (tests/scratch/references.py), i.e. "how many times slower than vectorised
NumPy with no GPU semantics".  Every run's output is checked against that reference (OK/WRONG).
The host's load average is printed before and after (a shared machine).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "scratch"))

import numpy as np  # noqa: E402
from references import FIX, ref_scratch_game, run_scratch_game  # noqa: E402

import wavelift  # noqa: E402
from wavelift.backends import native  # noqa: E402
from wavelift.backends.numpy import runtime  # noqa: E402


def _tier(name: str) -> None:
    """NumPy blocks ("numpy") or the native tier forced on ("native": the driver, its threads)."""
    runtime.NATIVE = "off" if name == "numpy" else "on"


def _pass(js, shape, mode, steps):
    dev = wavelift.Device("gfx1030", backend="numpy", mode=mode)
    t0 = time.perf_counter()
    r, _, got, (seeds, st) = run_scratch_game(dev, js, shape, steps=steps)
    return time.perf_counter() - t0, r, got, seeds, st


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--mode", default="wave", choices=("wave", "lane"))
    ap.add_argument("--small", action="store_true", help="1/16 of each pass (quick check)")
    ap.add_argument("--tiers", default="numpy,native", help="comma-separated: numpy, native")
    ap.add_argument("--repeat", type=int, default=3, help="warm native runs (best of)")
    a = ap.parse_args(argv)
    tiers = [t for t in a.tiers.split(",") if t]
    shapes = [("240x135", (240, 135)), ("32400", (32400, 1))]
    if a.small:
        shapes = [("60x34", (60, 34)), ("2025", (2025, 1))]
    js = FIX / "gfx1030" / "aco" / "scratch_game-w64.json"
    print(
        f"scratch_game-w64 gfx1030 mode={a.mode} steps={a.steps} tiers={','.join(tiers)} "
        f"threads={runtime.NATIVE_THREADS} load={os.getloadavg()[0]:.2f}"
    )
    if "native" in tiers:  # the library: compiled (or found in the disk cache) before timing
        _tier("native")
        t, r, *_ = _pass(js, (2, 1), a.mode, a.steps)
        native.wait_for_compiles()
        print(f"  native library: {r.stats.get('native_library')} in {t:.2f} s")
    for name, shape in shapes:
        times = {}
        for tier in tiers:
            _tier(tier)
            best = None
            for _ in range(1 if tier == "numpy" else max(1, a.repeat)):
                t, r, got, seeds, steps = _pass(js, shape, a.mode, a.steps)
                if not r.landed:
                    print(f"  {name} {tier}: refused {r.refusal.code}: {r.refusal.message}")
                    break
                best = t if best is None else min(best, t)
            if best is None:
                continue
            times[tier] = best
            t1 = time.perf_counter()
            want = ref_scratch_game(seeds, steps)
            tb = time.perf_counter() - t1
            ok = np.array_equal(got, want)
            waves = r.stats["waves"]
            extra = ""
            if r.stats.get("native"):
                extra = (
                    f"  driver={r.stats.get('native_driver')} threads={r.stats.get('native_threads')} "
                    f"numpy_blocks={len(r.stats.get('numpy_blocks', {}))}"
                )
            print(
                f"  {name} {tier:6s}: {best:7.3f} s  {waves} waves  {waves / best:9.0f} waves/s  "
                f"numpy-ref {tb:.2f} s  ratio {best / tb:6.2f}x  {'OK' if ok else 'WRONG'}{extra}"
            )
        if "numpy" in times and "native" in times:
            print(f"  {name}: NumPy blocks / native tier = {times['numpy'] / times['native']:.1f}x")
    print(f"load={os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
