#!/usr/bin/env python3
"""A CUDA module's first dispatch with WAVELIFT_CUDA_PROVE on and off (decision 0049's
amendment h110): the first dispatch has no learned window hints; with the setting on its
guesses come from globalrange's proof.

    python bench/bench_prove_first.py [--reps N] [--only PATTERN]

Each fixture dispatch (clang kernels, tests/fixtures) is built once (not timed), then run
``reps`` times per setting, alternating on / off, each time as a first dispatch (the module's
hints cleared, so no kept plan applies); printed: the median kernel time (device_time_s) and
wall time per dispatch, the ratio on/off, and each result's refusal (None expected).  Needs a
GPU; the load average is printed."""

from __future__ import annotations

import argparse
import copy
import os
import pathlib
import statistics
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "cuda"), str(ROOT / "tests"), str(ROOT)]

PICK = (
    "gfx1030/basic-O2-w32-flat:vadd:",
    "gfx1030/basic-O2-w64-flat:vadd:",
    "gfx1030/basic-O2-w32-flat:atomics:",
    "gfx1030/basic-O2-w32-mubuf:divergent_loop:",
    "gfx1030/math-O2-w32-flat:int64_math:",
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    from fixture_dispatches import clang_dispatches

    from wavelift.run.execute import execute_dispatch

    print("load average", os.getloadavg())
    for name, mem, cfg in clang_dispatches():
        if not any(name.startswith(p) for p in PICK) or args.only not in name:
            continue
        cache: dict = {}
        r = execute_dispatch(copy.deepcopy(mem), cfg, backend="cuda", mode="lane", cache=cache)
        if r.refusal is not None:
            print(name, "refused", r.refusal)
            continue
        mods = [m for m in cache.values() if hasattr(m, "hints")]
        times: dict = {"on": [], "off": []}
        walls: dict = {"on": [], "off": []}
        for _ in range(args.reps):
            for how in ("on", "off"):
                os.environ["WAVELIFT_CUDA_PROVE"] = how
                for m in mods:
                    m.hints = None
                r = execute_dispatch(copy.deepcopy(mem), cfg, backend="cuda", mode="lane", cache=cache)
                assert r.refusal is None, (name, how, r.refusal)
                times[how].append(r.stats.get("device_time_s", float("nan")))
                walls[how].append(r.stats["time_s"])
        on, off = statistics.median(times["on"]), statistics.median(times["off"])
        won, woff = statistics.median(walls["on"]), statistics.median(walls["off"])
        print(
            f"{name}: kernel on {on * 1e6:.1f} us off {off * 1e6:.1f} us ratio {on / off:.3f}; "
            f"wall on {won * 1e3:.2f} ms off {woff * 1e3:.2f} ms ratio {won / woff:.3f}"
        )
    print("load average", os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
