#!/usr/bin/env python3
"""The host cost of a CUDA module's first-dispatch proof (WAVELIFT_CUDA_PROVE=on: decision 0049's
amendments h110 and h112), on the CPU alone: runtime._proved_hints for a module made as
build_module makes it in each tree (generate's source, slots and preloads; a tree whose modules
keep the program generate lowered keeps it), timed wall and CPU.

    python bench/bench_prove_cost.py --old /tmp/oldNN [--new .] [--reps 5] [--only PATTERN]

Each rep runs one process per tree, alternating old / new; each process builds every picked
fixture dispatch's module (not timed: generate, as a first dispatch does before its proof) and
times its first proof once.  Printed per dispatch: the median wall and CPU ms per tree and the
ratio new / old; the load average before and after."""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

PICK = (
    "gfx1030/basic-O2-w32-flat:vadd:",
    "gfx1030/basic-O2-w64-mubuf:vadd:",
    "gfx1030/math-O2-w32-flat:lane_ops:",
    "gfx1030/math-O2-w32-flat:int64_math:",
    "gfx1030/stack-O2-w32-flat:spill:",  # (3,345 ops after the passes: the largest fixture program)
)


def child(only: str) -> None:
    root = pathlib.Path.cwd()
    sys.path[:0] = [str(root / "tests" / "cuda"), str(root / "tests"), str(root)]
    from fixture_dispatches import clang_dispatches

    from wavelift.backends import cuda as C
    from wavelift.backends.cuda import codegen as G
    from wavelift.backends.cuda import runtime as R
    from wavelift.run.execute import program_for
    from wavelift.trace.tracer import trace
    from wavelift.trace.windows import WindowSet

    out = {}
    for name, mem, cfg in clang_dispatches():
        if not any(name.startswith(p) for p in PICK) or only not in name:
            continue
        program, _ = program_for(mem, cfg)
        baked = G.baked_params(cfg)
        args = (program, cfg.wave_size, "lane", cfg.scratch_wave_bytes, cfg.program_address, baked)
        kw = {}
        if hasattr(G, "lowered"):  # (build_module's module keeps the program generate lowered)
            kw["lowered"] = G.lowered(program, cfg.wave_size, baked)
            src, slots, pre = G.generate(*args, 1, kw["lowered"])
        else:
            src, slots, pre = G.generate(*args)
        m = C.Module(("k",), program, src, "sm_90", b"", 0.0, "nvrtc", slots, preloads=pre, **kw)
        win = WindowSet(trace(mem, cfg, scratch_roots=program.scratch.tracer_skip), mem)
        try:
            t0, c0 = time.perf_counter(), time.process_time()
            got = R._proved_hints(m, cfg, win, [])
            t1, c1 = time.perf_counter(), time.process_time()
        finally:
            win.release()
        out[name] = (t1 - t0, c1 - c0, int((got >= 0).sum()), len(got))
    print(json.dumps(out))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=False)
    ap.add_argument("--new", default=".")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        child(args.only)
        return 0
    trees = {"old": pathlib.Path(args.old).resolve(), "new": pathlib.Path(args.new).resolve()}
    print("load average", os.getloadavg())
    runs: dict = {"old": [], "new": []}
    for _ in range(args.reps):
        for tag, tree in trees.items():
            env = dict(os.environ, PYTHONPATH=str(tree), WAVELIFT_CUDA_PROVE="on")
            cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--child", "--only", args.only]
            p = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=True)
            runs[tag].append(json.loads(p.stdout.strip().splitlines()[-1]))
    for name in runs["new"][0]:
        med = {tag: [statistics.median(r[name][i] for r in runs[tag]) * 1e3 for i in (0, 1)] for tag in runs}
        proved = {tag: f"{runs[tag][0][name][2]}/{runs[tag][0][name][3]}" for tag in runs}
        print(
            f"{name}: wall old {med['old'][0]:.1f} ms new {med['new'][0]:.1f} ms "
            f"ratio {med['new'][0] / med['old'][0]:.3f}; CPU old {med['old'][1]:.1f} ms "
            f"new {med['new'][1]:.1f} ms ratio {med['new'][1] / med['old'][1]:.3f}; "
            f"slots proved old {proved['old']} new {proved['new']}"
        )
    print("load average", os.getloadavg())
    return 0


if __name__ == "__main__":
    sys.exit(main())
