"""Host time per tiny dispatch over a Device's life (issue 24 item 2: a constant, small host path).

    python bench/bench_dispatch_rate.py                      # 10,000 launches, record on and off
    python bench/bench_dispatch_rate.py --launches 1000
    python bench/bench_dispatch_rate.py --baseline /tmp/wl-old   # also an older tree, same run
    python bench/bench_dispatch_rate.py --launches 100000 --configs flat

One Device, one tiny dispatch launched again and again: clang's `vadd` (basic-O2-w32-flat) over
64 floats -- one wave32 workgroup -- on the NumPy backend, with the same three buffers each
time, so everything but the dispatch's own work is host path (the stream, the driver's
allocations, the tracer, the windows, landing).  Printed for each configuration: microseconds
per launch over launches 1-100, 101-1,000, 1,001-10,000 and 10,001-100,000 (wall time of
`Kernel.launch`),
the ratio of the last segment to the first (1.0 = flat), the guest allocations after the last
launch and the growth of the process's resident memory from launch 100 to the end.

Configurations: `record` (Device() as it always was: a saved capture replays every launch, so
each launch leaves its kernargs, dispatch packet and IB), `flat` (Device(record=False): those
reused), and with `--baseline TREE` the same tiny launches on an older checkout (`git worktree
add /tmp/wl-old REV`), which has only the recording Device.  Each runs in its own process, one
after the other, in the same invocation; the ratios in the last table are against the baseline's
`record` numbers when there is one, else against this tree's `record`.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEGMENTS = (100, 1000, 10000, 100000)


def _rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def measure(tree: str, record: bool | None, launches: int) -> dict:
    """(run in a child process with `tree` first on sys.path)"""
    sys.path.insert(0, tree)
    import numpy as np

    import wavelift

    assert pathlib.Path(wavelift.__file__).resolve().is_relative_to(pathlib.Path(tree).resolve())
    kw = {} if record is None else {"record": record}
    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave", **kw)
    k = dev.load_code_object(str(ROOT / "tests/fixtures/gfx1030/basic-O2-w32-flat.hsaco")).kernel("vadd")
    n = 64
    a = dev.upload(np.arange(n, dtype=np.float32))
    b = dev.upload(np.ones(n, np.float32))
    c = dev.alloc(4 * n)
    args = [a, b, c, np.uint32(n)]
    k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args)  # (translation, module build)
    marks, rss = {}, {}
    t = 0.0
    for i in range(1, launches + 1):
        t0 = time.perf_counter()
        r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args)
        t += time.perf_counter() - t0
        if not r.landed:
            raise SystemExit(f"launch {i} refused: {r.refusal}")
        if i in SEGMENTS or i == launches:
            marks[i] = t
            rss[i] = _rss_kib()
    if not (dev.download(c, np.float32) == np.arange(n) + 1).all():
        raise SystemExit("wrong result")
    return {"marks": marks, "rss": rss, "allocations": len(dev.memory)}


def _segments(marks: dict) -> list[tuple[str, float]]:
    out, prev_n, prev_t = [], 0, 0.0
    for n in sorted(int(x) for x in marks):
        t = marks[str(n)] if str(n) in marks else marks[n]
        out.append((f"{prev_n + 1:,}-{n:,}", 1e6 * (t - prev_t) / (n - prev_n)))
        prev_n, prev_t = n, t
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--launches", type=int, default=10000)
    ap.add_argument("--baseline", metavar="TREE", help="an older checkout to run the same launches on")
    ap.add_argument("--json", metavar="FILE", help="also write the numbers")
    ap.add_argument(
        "--configs", default="record,flat", help="of this tree, comma-separated (default: record,flat)"
    )
    ap.add_argument("--child", nargs=3, metavar=("TREE", "RECORD", "N"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        tree, rec, n = a.child
        print(json.dumps(measure(tree, None if rec == "default" else rec == "1", int(n))))
        return 0
    configs = []
    if a.baseline:
        configs.append(("baseline record", str(pathlib.Path(a.baseline).resolve()), "default"))
    mine = {"record": "1", "flat": "0"}
    configs += [(c, str(ROOT), mine[c]) for c in a.configs.split(",")]
    env = dict(os.environ, PYTHONPATH="")
    got = {}
    print(
        f"tiny dispatch (vadd, 64 floats, one wave32) x {a.launches:,} launches on one Device, NumPy backend"
    )
    for name, tree, rec in configs:
        p = subprocess.run(
            [sys.executable, __file__, "--child", tree, rec, str(a.launches)],
            capture_output=True,
            text=True,
            env=env,
            cwd=tree,
        )
        if p.returncode:
            print(f"{name}: failed\n{p.stderr[-2000:]}")
            return 1
        got[name] = json.loads(p.stdout.strip().splitlines()[-1])
    base = got.get("baseline record", got.get("record", next(iter(got.values()))))
    base_seg = _segments(base["marks"])
    print()
    print(f"{'configuration':<17} {'launches':>15} {'us/launch':>10} {'vs first':>9} {'vs base':>8}")
    for name, r in got.items():
        seg = _segments(r["marks"])
        for k, (span, us) in enumerate(seg):
            print(
                f"{name if k == 0 else '':<17} {span:>15} {us:>10.0f} {us / seg[0][1]:>8.2f}x "
                f"{us / base_seg[k][1]:>7.2f}x"
            )
        rss = {int(x): v for x, v in r["rss"].items()}
        first = min((x for x in rss if x >= 100), default=min(rss))
        print(
            f"{'':<17} guest allocations {r['allocations']:,}; resident memory +"
            f"{(rss[max(rss)] - rss[first]) / 1024:.1f} MiB from launch {first:,} to {max(rss):,}"
        )
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(got, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
