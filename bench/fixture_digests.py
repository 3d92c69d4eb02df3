#!/usr/bin/env python3
"""Digest of every fixture dispatch's outcome, for A/B checks that a change moves no result bit.

    python bench/fixture_digests.py [--root TREE] [--modes wave,lane] [--tiers blocks,native] [--jobs N]

For each dispatch of tests/cuda/fixture_dispatches.py (clang kernels with their reference cases,
ACO shaders with seeded buffers, the RADV captures) and each mode x NumPy tier, it runs
`execute_dispatch` on a fresh copy of the guest memory and prints one JSON line: the dispatch's
name, mode, tier, refusal code (or null) and the SHA-256 of every allocation's bytes afterwards
(so a result that landed differently, or a write outside the spans, changes the digest).

`--root TREE` runs another tree's wavelift and fixtures (e.g. a `git archive` of an older commit
unpacked under /tmp), so the same script digests both sides of an A/B:

    python bench/fixture_digests.py --root /tmp/old > old.jsonl
    python bench/fixture_digests.py > new.jsonl && diff old.jsonl new.jsonl

`--threads N` runs the native driver in N threads for every dispatch of two or more workgroups
(as the tier tests do, tests/conftest.py: fixture dispatches are mostly below the automatic
thresholds), so a change to the driver's thread split is digested too.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import copy
import hashlib
import json
import os
import pathlib
import sys

from abtrees import set_tier  # bench/ is the script's directory

HERE = pathlib.Path(__file__).resolve().parent.parent


def _setup(root: pathlib.Path, tier: str) -> None:
    for p in (root / "tests" / "cuda", root / "tests", root):
        if str(p) not in sys.path:
            sys.path.insert(0, str(p))
    # blocks: NumPy blocks only; native: every dispatch on the native tier (no size threshold;
    # -O1: the same flags on both sides, and compiles of ~300 programs in minutes, not an hour)
    set_tier(os.environ, tier, NATIVE_MIN_WAVES="0", NATIVE_OPT=os.environ.get("WAVELIFT_NATIVE_OPT", "-O1"))


def _digest(memory) -> str:
    h = hashlib.sha256()
    for a in memory.allocations:
        h.update(a.base.to_bytes(8, "little"))
        h.update(memory.read(a.base, a.size))
    return h.hexdigest()


def _work(root: str, tier: str, modes: list[str], index: int, threads: int = 0) -> list[dict]:
    _setup(pathlib.Path(root), tier)
    import fixture_dispatches as F

    if threads:
        from wavelift.backends.numpy import runtime

        runtime.NATIVE_THREADS = threads
        runtime.NATIVE_THREAD_MIN_WAVES = runtime.NATIVE_THREAD_MIN_LOOP_WAVES = 0

    from wavelift.run.execute import execute_dispatch

    name, mem, cfg = _dispatches(F)[index]
    out = []
    for mode in modes:
        if mem is None:
            out.append({"name": name, "mode": mode, "tier": tier, "refused": "launch", "digest": cfg})
            continue
        m = copy.deepcopy(mem)
        r = execute_dispatch(m, cfg, 0, "numpy", mode, cache={})
        code = r.refusal.code if r.refusal is not None else None
        out.append({"name": name, "mode": mode, "tier": tier, "refused": code, "digest": _digest(m)})
    return out


_CACHE: list = []


def _dispatches(F) -> list:
    if not _CACHE:
        _CACHE.extend(F.all_dispatches())
    return _CACHE


def _count(root: str) -> int:
    _setup(pathlib.Path(root), "blocks")
    import fixture_dispatches as F

    return len(_dispatches(F))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(HERE))
    ap.add_argument("--modes", default="wave,lane")
    ap.add_argument("--tiers", default="blocks,native")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--threads", type=int, default=0, help="the native driver's threads from 0 waves (0: as set)"
    )
    a = ap.parse_args()
    modes = a.modes.split(",")
    with cf.ProcessPoolExecutor(1) as ex:
        n = ex.submit(_count, a.root).result()
    jobs = [(t, i) for t in a.tiers.split(",") for i in range(n)]
    with cf.ProcessPoolExecutor(a.jobs) as ex:
        futs = [ex.submit(_work, a.root, t, modes, i, a.threads) for t, i in jobs]
        for f in futs:
            for line in f.result():
                print(json.dumps(line, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
