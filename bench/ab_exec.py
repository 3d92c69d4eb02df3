#!/usr/bin/env python3
"""A/B of wavelift's execution speed between two trees, in one run: bench_exec.py's workloads
(full-screen `shade`, loop-heavy `collatz`) launched by each tree's own wavelift in alternating
child processes, so both sides see the same machine state.

    python bench/ab_exec.py --old /tmp/old [--new .] [--rounds 3] [--tiers native,blocks] [--quick]

Per tree x workload x NumPy tier (native tier forced on, or NumPy blocks only) x mode, each child
process prints the cold launch (decode, translate, build incl. the native compile, run) and the
best of 5 warm launches; the report gives, per row, the median of the rounds for each tree and
new/old.  The native disk cache is a fresh directory per tree and child (cold builds compare
compiles, not cache hits).  `--old` is an unpacked `git archive` of the baseline commit.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

from abtrees import set_tier  # bench/ is the script's directory

HERE = pathlib.Path(__file__).resolve().parent.parent

CHILD = r"""
import json, os, sys, time, importlib.util, pathlib
tree, bench, work_name, mode, quick = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
spec = importlib.util.spec_from_file_location("bench_exec", bench)
B = importlib.util.module_from_spec(spec)
spec.loader.exec_module(B)  # (puts its own tree first on sys.path; wavelift not imported yet)
sys.path[:] = [tree] + [p for p in sys.path if p not in (tree, str(pathlib.Path(bench).parent.parent))]
for m in [m for m in sys.modules if m == "wavelift" or m.startswith("wavelift.")]:
    del sys.modules[m]
import numpy as np
import wavelift
assert pathlib.Path(wavelift.__file__).resolve().is_relative_to(pathlib.Path(tree).resolve()), wavelift.__file__
work = {"shade": B.shade_work, "collatz": B.collatz_work}[work_name](quick)
dev = wavelift.Device(B.TARGET, backend="numpy", mode=mode)
k = dev.load_code_object(str(B.HSACO)).kernel(work["name"])
args = [dev.upload(a) if isinstance(a, np.ndarray) else a for a in work["args"]]
t0 = time.perf_counter(); r = k.launch(groups=work["groups"], block=work["block"], args=args)
cold = time.perf_counter() - t0
assert r.landed, r.refusal
warm = []
for _ in range(5):
    t0 = time.perf_counter(); r = k.launch(groups=work["groups"], block=work["block"], args=args)
    warm.append(time.perf_counter() - t0)
out = dev.download(args[work["out"]], work["args"][work["out"]].dtype)
import hashlib
print(json.dumps({"cold": cold, "warm": min(warm), "out": hashlib.sha256(out.tobytes()).hexdigest()}))
"""


def run_child(tree: str, work: str, mode: str, tier: str, quick: bool) -> dict:
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        set_tier(env, tier, NATIVE_CACHE=cache)
        env["PYTHONPATH"] = tree
        p = subprocess.run(
            [
                sys.executable,
                "-c",
                CHILD,
                tree,
                str(HERE / "bench" / "bench_exec.py"),
                work,
                mode,
                "1" if quick else "0",
            ],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    if p.returncode:
        raise SystemExit(f"{tree} {work} {mode} {tier} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", default=str(HERE))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tiers", default="native,blocks")
    ap.add_argument("--modes", default="wave,lane")
    ap.add_argument("--works", default="shade,collatz")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    trees = {"old": str(pathlib.Path(a.old).resolve()), "new": str(pathlib.Path(a.new).resolve())}
    rows = []
    for work in a.works.split(","):
        for tier in a.tiers.split(","):
            for mode in a.modes.split(","):
                got: dict = {"old": [], "new": []}
                for _ in range(a.rounds):
                    for side in ("old", "new"):
                        got[side].append(run_child(trees[side], work, mode, tier, a.quick))
                same = len({g["out"] for side in got for g in got[side]}) == 1
                med = {s: {k: statistics.median(g[k] for g in got[s]) for k in ("cold", "warm")} for s in got}
                rows.append((work, tier, mode, med, same))
                print(
                    f"{work:8s} {tier:6s} {mode:4s}  warm old {med['old']['warm'] * 1e3:9.1f} ms"
                    f"  new {med['new']['warm'] * 1e3:9.1f} ms  new/old {med['new']['warm'] / med['old']['warm']:.2f}"
                    f"   cold old {med['old']['cold']:7.2f} s  new {med['new']['cold']:7.2f} s"
                    f"  new/old {med['new']['cold'] / med['old']['cold']:.2f}   outputs equal: {same}",
                    flush=True,
                )
    return 0 if all(r[4] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
