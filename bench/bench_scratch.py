"""Scratch benchmark: the two game-shaped passes of D954 (ACO scratch_game, wave64, a dynamically
indexed private uint[96] per thread) — 240x135 workgroups of 8x8, and 32400 workgroups of 8x8.

    python bench/bench_scratch.py [--steps N] [--mode wave|lane] [--small]

Prints seconds per pass, waves/s and the ratio to a baseline: the same shader with scratch
turned into plain arithmetic is not available, so the baseline is the NumPy reference of the
same computation (tests/scratch/references.py), i.e. "how many times slower than vectorised
NumPy with no GPU semantics".
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "scratch"))

import numpy as np  # noqa: E402
from references import FIX, ref_scratch_game, run_scratch_game  # noqa: E402

import wavelift  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--mode", default="wave", choices=("wave", "lane"))
    ap.add_argument("--small", action="store_true", help="1/16 of each pass (quick check)")
    a = ap.parse_args(argv)
    shapes = [("240x135", (240, 135)), ("32400", (32400, 1))]
    if a.small:
        shapes = [("60x34", (60, 34)), ("2025", (2025, 1))]
    js = FIX / "gfx1030" / "aco" / "scratch_game-w64.json"
    print(f"scratch_game-w64 gfx1030 mode={a.mode} steps={a.steps}")
    for name, shape in shapes:
        dev = wavelift.Device("gfx1030", backend="numpy", mode=a.mode)
        t0 = time.perf_counter()
        r, sh, got, (seeds, steps) = run_scratch_game(dev, js, shape, steps=a.steps)
        t = time.perf_counter() - t0
        if not r.landed:
            print(f"  {name}: refused {r.refusal.code}: {r.refusal.message}")
            continue
        t1 = time.perf_counter()
        want = ref_scratch_game(seeds, steps)
        tb = time.perf_counter() - t1
        ok = np.array_equal(got, want)
        waves = r.stats["waves"]
        print(
            f"  {name}: {t:7.2f} s  {waves} waves  {waves / t:9.0f} waves/s  "
            f"exec {r.stats['time_s']:.2f} s  numpy-ref {tb:.2f} s  ratio {t / tb:6.1f}x  "
            f"{'OK' if ok else 'WRONG'}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
