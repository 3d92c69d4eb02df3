"""The tinygrad hook's warm (repeated) dispatches, tree against tree, per phase.

    python bench/bench_tinygrad_warm.py --old /tmp/oldNN [--new .] [--rounds 4] [--reps 5]

Each round runs one child process per tree, in alternating order (old, new / new, old / ...).
A child replays every gfx1100 test fixture (tests/fixtures/tinygrad, as bench_tinygrad.py does
through tests/compat/harness.py) once cold, then once warm over new buffers -- *first*: the
replay bench_tinygrad.py's warm column times, the first of each kernel on new buffers after its
cold one --, then ``--reps`` times warm in each of two ways:
*fresh* buffers (new host blocks each replay, the earlier replays' kept alive so that no address
comes back: bench_tinygrad.py's warm column, where every call is new to the hook) and *same*
buffers (the host blocks of the first replay again: every dispatch repeats one exactly, as a
runtime that runs the same kernels on the same buffers).  It measures thread CPU inside
``run_asm`` and inside the backend's run (``NumpyBackend.run``) per dispatch: the *fixed* cost
is the difference (everything of a dispatch but the backend's own run).  Results must equal
tinygrad's CPU device's (bounds.check) and the two trees' outputs are compared by digest.
The load average is printed (a shared machine).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys

CHILD = r"""
import hashlib, json, sys, time
sys.path.insert(0, sys.argv[1])
from tests.compat import bounds, harness
from wavelift.compat import tinygrad as tg
import wavelift.backends.numpy as nb
reps = int(sys.argv[2])
T = {"run_asm": 0, "backend": 0}
def timed(obj, name, label):
    f = getattr(obj, name)
    def w(*a, **k):
        t = time.thread_time_ns()
        try:
            return f(*a, **k)
        finally:
            T[label] += time.thread_time_ns() - t
    setattr(obj, name, w)
timed(tg, "_run_asm", "run_asm")
timed(nb.NumpyBackend, "run", "backend")
HB = harness.HostBlock
pool, seq = {}, [0]
def pooled(size):
    k = (seq[0], size)
    seq[0] += 1
    b = pool.get(k)
    if b is None:
        b = pool[k] = HB(size)
    b.view[:] = 0
    return b
out = {}
alive = []
for p in harness.fixtures("gfx1100"):
    fx = harness.load(p)
    row, h = {}, hashlib.sha256()
    for way in ("first", "fresh", "same"):
        harness.HostBlock = pooled if way == "same" else HB
        pool.clear()
        seq[0] = 0
        if way != "fresh":  # (cold before the first way; the same blocks' first plan in the third)
            # (its buffers held through the first way's replay, as bench_tinygrad.py holds them)
            cold = harness.replay(fx, tg.run_asm, keep_code=True)
        for k in T:
            T[k] = 0
        wall = n = 0
        ok = True
        for _ in range(1 if way == "first" else reps):
            seq[0] = 0
            r = harness.replay(fx, tg.run_asm, keep_code=True)
            if way != "same":
                alive.append(r)  # (its buffers stay: the next replay's are at new addresses)
            wall += sum(r.seconds)
            n += len(r.codes)
            ok &= all(c == 0 for c in r.codes) and bounds.check(fx.name, r.output, fx.expected(), fx.inputs()) is None
            h.update(bytes(r.codes)); h.update(r.output.tobytes())
        k = 1 if way == "first" else reps
        row[way] = {"n": n // k, "wall_ms": wall / k * 1e3, "cpu_ms": T["run_asm"] / k / 1e6,
                    "fixed_us": (T["run_asm"] - T["backend"]) / n / 1e3, "backend_us": T["backend"] / n / 1e3, "ok": ok}
    harness.HostBlock = HB
    cold = None
    row["digest"] = h.hexdigest()[:16]
    out[fx.name] = row
print(json.dumps(out))
"""


def child(tree: str, reps: int, cache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=tree, WAVELIFT_PIECE_CACHE=cache, PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run(
        [sys.executable, "-c", CHILD, tree, str(reps)], env=env, cwd=tree, capture_output=True, text=True
    )
    if p.returncode:
        raise SystemExit(f"child {tree} failed:\n{p.stderr[-3000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", default=str(pathlib.Path(__file__).resolve().parents[1]))
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="unmeasured child runs per tree first (each tree's piece cache and native index "
        "filled: a tree whose sources changed makes its native sources again in its first runs)",
    )
    a = ap.parse_args(argv)
    trees = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    caches = {k: f"/tmp/bench_tinygrad_warm-cache-{os.getpid()}-{k}" for k in trees}
    print(f"old = {trees['old']}, new = {trees['new']}; load before {os.getloadavg()}")
    for i in range(a.warmup):
        for k in trees:
            child(trees[k], 1, caches[k])
            print(f"warm-up {i} {k} done, load {os.getloadavg()[0]:.2f}", flush=True)
    res: dict = {"old": [], "new": []}
    for r in range(a.rounds):
        order = ("old", "new") if r % 2 == 0 else ("new", "old")
        for k in order:
            res[k].append(child(trees[k], a.reps, caches[k]))
            print(f"round {r} {k} done, load {os.getloadavg()[0]:.2f}", flush=True)
    print(f"load after {os.getloadavg()}")
    for way in ("first", "fresh", "same"):
        med = {k: sorted(sum(x[fx][way]["cpu_ms"] for fx in x) for x in res[k]) for k in res}
        print(
            f"{way}: CPU ms a replay of all fixtures, per round: "
            + "; ".join(
                f"{k} {' '.join(f'{v:.2f}' for v in med[k])} (median {med[k][len(med[k]) // 2]:.2f})"
                for k in med
            )
        )
    best = lambda k, fx, way, f: min(x[fx][way][f] for x in res[k])  # noqa: E731
    for way in ("first", "fresh", "same"):
        print(
            f"\n## {way} buffers: per warm replay, best over rounds (CPU = thread time inside run_asm); "
            "per dispatch: fixed = run_asm - backend run, µs"
        )
        print(
            f"{'op':16s} {'n':>3s} {'old cpu ms':>10s} {'new cpu ms':>10s} {'o/n':>5s} {'old wall':>9s} {'new wall':>9s} "
            f"{'old fixed':>9s} {'new fixed':>9s} {'o/n':>5s} {'old run':>8s} {'new run':>8s} digests ok"
        )
        tot = dict.fromkeys(("oc", "nc", "ow", "nw", "of", "nf", "n"), 0.0)
        for fx in res["old"][0]:
            n = res["old"][0][fx][way]["n"]
            oc, nc = best("old", fx, way, "cpu_ms"), best("new", fx, way, "cpu_ms")
            ow, nw = best("old", fx, way, "wall_ms"), best("new", fx, way, "wall_ms")
            of, nf = best("old", fx, way, "fixed_us"), best("new", fx, way, "fixed_us")
            orun, nrun = best("old", fx, way, "backend_us"), best("new", fx, way, "backend_us")
            same = len({x[fx]["digest"] for k in res for x in res[k]}) == 1
            ok = all(x[fx][way]["ok"] for k in res for x in res[k])
            print(
                f"{fx:16s} {n:3d} {oc:10.2f} {nc:10.2f} {oc / nc:5.2f} {ow:9.2f} {nw:9.2f} {of:9.1f} {nf:9.1f} "
                f"{of / nf:5.2f} {orun:8.1f} {nrun:8.1f} {'same' if same else 'DIFFERENT'} {ok}"
            )
            for k, v in (
                ("oc", oc),
                ("nc", nc),
                ("ow", ow),
                ("nw", nw),
                ("of", of * n),
                ("nf", nf * n),
                ("n", n),
            ):
                tot[k] += v
        print(
            f"{'total':16s} {int(tot['n']):3d} {tot['oc']:10.2f} {tot['nc']:10.2f} {tot['oc'] / tot['nc']:5.2f} "
            f"{tot['ow']:9.2f} {tot['nw']:9.2f} {tot['of'] / tot['n']:9.1f} {tot['nf'] / tot['n']:9.1f} "
            f"{tot['of'] / tot['nf']:5.2f}   (fixed: mean over dispatches)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
