#!/usr/bin/env python3
"""Run a fuzz target's cases for a range of seeds, in worker processes, with a watchdog.

    python3 tools/fuzz.py TARGET --count N [--start S] [--jobs J] [--time-limit SEC]

TARGET names tests/fuzz/fuzz_TARGET.py, whose ``case(seed)`` builds one input from the seed,
runs it and raises (AssertionError naming the seed) on any violation.  Every seed S..S+N-1 runs
once.  A case that raises is a failure; a case still running after --time-limit seconds of wall
clock is a hang (its worker is killed and replaced); a worker that dies (a signal, heap
corruption, os._exit) is a crash.  The summary lists cases, failures with their seeds and the
exception, the slowest cases and the total time; the exit status is 1 when anything failed.
Reproduce one seed with ``--start SEED --count 1 --inline`` (docs/fuzzing.md).
"""

from __future__ import annotations

import argparse
import collections
import heapq
import importlib.util
import multiprocessing as mp
import multiprocessing.connection as mpc
import os
import sys
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ_DIR = os.path.join(ROOT, "tests", "fuzz")
SLOWEST = 10
PROGRESS_S = 60.0  # a progress line on stderr this often (long runs' logs)


def load_target(name: str):
    """tests/fuzz/fuzz_NAME.py (or NAME itself when it is a path to a .py file)."""
    path = name if name.endswith(".py") else os.path.join(FUZZ_DIR, f"fuzz_{name}.py")
    if not os.path.isfile(path):
        have = sorted(f[5:-3] for f in os.listdir(FUZZ_DIR) if f.startswith("fuzz_") and f.endswith(".py"))
        raise SystemExit(f"fuzz: no target {name!r} (have: {', '.join(have)})")
    if FUZZ_DIR not in sys.path:
        sys.path.insert(0, FUZZ_DIR)
    import fuzzing_paths

    fuzzing_paths.add()
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not callable(getattr(mod, "case", None)):
        raise SystemExit(f"fuzz: {path} defines no case(seed)")
    return mod


def _worker(name, conn, current):
    """Run the chunks (first, count) the parent sends on ``conn``; ``current`` = [start time,
    seed] of the case under way (the parent's watchdog reads it).  Failures are sent at once,
    the chunk's slowest cases when it is done.  (A pipe per worker, no shared queue: a worker
    killed mid-write cannot leave a lock held that the others wait on.)"""
    case = load_target(name).case
    while True:
        job = conn.recv()
        if job is None:
            return
        first, count = job
        slow = []
        for seed in range(first, first + count):
            current[0] = time.monotonic()  # (before the seed: no stale start time)
            current[1] = seed
            t0 = time.perf_counter()
            try:
                case(seed)
            except BaseException as e:  # noqa: BLE001 (every escape is a finding)
                if isinstance(e, KeyboardInterrupt):
                    raise
                tb = traceback.format_exc(limit=-6)
                conn.send(("fail", seed, "exception", f"{type(e).__name__}: {e}"[:2000], tb[-4000:]))
            dt = time.perf_counter() - t0
            if len(slow) < SLOWEST:
                heapq.heappush(slow, (dt, seed))
            elif dt > slow[0][0]:
                heapq.heapreplace(slow, (dt, seed))
        current[1] = -1
        conn.send(("done", slow))


class _Slot:
    """One worker process, its pipe and the chunk it holds."""

    def __init__(self, ctx, name):
        self.current = ctx.Array("d", [0.0, -1.0], lock=False)
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(name, child, self.current), daemon=True)
        self.proc.start()
        child.close()
        self.chunk = None

    def stop(self):
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()
        self.conn.close()


def run(name, start, count, jobs, time_limit, chunk=None, out=sys.stdout):
    load_target(name)  # fail early, in the parent, on a bad target
    ctx = mp.get_context("fork")
    chunk = chunk or max(1, min(1000, count // (jobs * 20) or 1))
    pending = collections.deque(
        (s, min(chunk, start + count - s)) for s in range(start, start + count, chunk)
    )
    slots = [_Slot(ctx, name) for _ in range(min(jobs, len(pending)))]
    failures, slow, done = [], [], 0
    t0 = last = time.monotonic()

    def note_slow(items):
        for it in items:
            if len(slow) < SLOWEST:
                heapq.heappush(slow, it)
            elif it[0] > slow[0][0]:
                heapq.heapreplace(slow, it)

    def note_failure(f):
        """(each failure also on stderr as it happens: a long run's log shows it at once)"""
        print(f"fuzz {name}: seed {f[0]}: {f[1]}: {f[2][:300]}", file=sys.stderr, flush=True)

    def drain(slot):
        """Every message the worker sent; False when its pipe is closed (it died)."""
        nonlocal done
        try:
            while slot.conn.poll():
                msg = slot.conn.recv()
                if msg[0] == "fail":
                    failures.append(msg[1:])
                    note_failure(msg[1:])
                else:
                    done += slot.chunk[1]
                    slot.chunk = None
                    note_slow(msg[1])
        except (EOFError, OSError):
            return False
        return True

    def replace(i, kind, detail):
        """Worker i hung or died in a case: record it, requeue the rest of its chunk."""
        nonlocal done
        slot = slots[i]
        seed = int(slot.current[1])
        slot.stop()
        first, n = slot.chunk
        if not first <= seed < first + n:  # (died between cases: redo the chunk)
            pending.appendleft(slot.chunk)
        else:
            failures.append((seed, kind, detail, ""))
            note_failure(failures[-1])
            done += seed - first + 1
            if seed + 1 < first + n:
                pending.appendleft((seed + 1, first + n - seed - 1))
        slots[i] = _Slot(ctx, name)

    try:
        while pending or any(s.chunk for s in slots):
            for slot in slots:
                if slot.chunk is None and pending:
                    slot.chunk = pending.popleft()
                    slot.conn.send(slot.chunk)
            mpc.wait([s.conn for s in slots] + [s.proc.sentinel for s in slots], timeout=0.2)
            now = time.monotonic()
            for i, slot in enumerate(slots):
                alive = drain(slot) and slot.proc.is_alive()
                if slot.chunk is None:
                    continue
                if not alive:
                    slot.proc.join(5)
                    drain(slot)
                    replace(i, "crash", f"worker died (exit status {slot.proc.exitcode})")
                elif slot.current[1] >= 0 and now - slot.current[0] > time_limit:
                    replace(i, "hang", f"still running after {time_limit:g} s (killed)")
            if now - last >= PROGRESS_S:
                last = now
                busy = sum(
                    int(s.current[1]) - s.chunk[0]
                    for s in slots
                    if s.chunk and s.chunk[0] <= s.current[1] < s.chunk[0] + s.chunk[1]
                )
                print(
                    f"fuzz {name}: {done + busy}/{count} cases, {len(failures)} failure(s), {now - t0:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        for slot in slots:
            try:
                slot.conn.send(None)
            except OSError:
                pass
        for slot in slots:
            slot.proc.join(timeout=5)
            slot.stop()
    total = time.monotonic() - t0
    report(name, start, count, jobs, time_limit, failures, slow, total, out)
    return failures


def report(name, start, count, jobs, time_limit, failures, slow, total, out):
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(
        f"fuzz {name}: seeds {start}..{start + count - 1} ({count} cases), {jobs} job(s), "
        f"time limit {time_limit:g} s per case"
    )
    kinds = {}
    for f in failures:
        kinds[f[1]] = kinds.get(f[1], 0) + 1
    p(
        f"failures: {len(failures)}"
        + (f" ({', '.join(f'{v} {k}' for k, v in sorted(kinds.items()))})" if kinds else "")
    )
    for seed, kind, detail, tb in sorted(failures)[:50]:
        p(f"  seed {seed}: {kind}: {detail}")
        if tb:
            p("    " + tb.strip().replace("\n", "\n    "))
    if len(failures) > 50:
        p(f"  ... {len(failures) - 50} more")
    p("slowest: " + ", ".join(f"seed {s} {t:.3f} s" for t, s in sorted(slow, reverse=True)))
    p(f"total: {total:.1f} s ({count / total if total else 0:.1f} cases/s)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("target", help="tests/fuzz/fuzz_TARGET.py")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="seconds of wall clock per case before it counts as a hang "
        "(default: the target's TIME_LIMIT, else 60)",
    )
    ap.add_argument("--chunk", type=int, default=None, help="seeds handed to a worker at once")
    ap.add_argument(
        "--inline",
        action="store_true",
        help="run the seeds in this process, no watchdog; the first failure raises "
        "with its whole traceback (to reproduce and debug one seed)",
    )
    a = ap.parse_args(argv)
    if a.count < 1 or a.jobs < 1:
        ap.error("--count and --jobs must be at least 1")
    if a.inline:
        case = load_target(a.target).case
        for seed in range(a.start, a.start + a.count):
            case(seed)
        print(f"fuzz {a.target}: seeds {a.start}..{a.start + a.count - 1} passed")
        return 0
    limit = a.time_limit or getattr(load_target(a.target), "TIME_LIMIT", 60.0)
    failures = run(a.target, a.start, a.count, a.jobs, limit, a.chunk)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
