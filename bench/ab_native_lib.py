#!/usr/bin/env python3
"""The native tier's library for a bench_exec.py workload: its C++ source, and A/B of sources in
one process (the same memory, the same windows, the same load: only the library differs).

    python bench/ab_native_lib.py dump OUT.cpp [--work shade|collatz] [--mode wave|lane]
    python bench/ab_native_lib.py ab A.cpp B.cpp ... [--work shade] [--mode wave] [--rounds 8] [--cpu]

``dump`` writes the source the tree's native tier generates for the workload (the program's one
library; the tree is the one this script imports: ``--root`` to take another, e.g. a `git
archive` of an older commit).  ``ab`` builds each source with the tier's own compiler and
flags, swaps the Device's driver between them launch by launch (WAVELIFT_THREADS=1 for one
thread's time) and prints, per source, the median and best over rounds of the driver's wall
time per launch (Runtime._drive_parts: the native call and its contexts; each round: two
launches, then the best of three) and the output's SHA-256 prefix at the first and last round.
A source may be hand-edited (what would a change give?); its driver and block names must be
the generated ones.  ``--cpu`` times the calling thread's CPU time instead of the wall clock:
with WAVELIFT_THREADS=1 the whole native call runs in that thread, so a loaded host's other
processes (which take the core away, not the work) move it much less.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import pathlib
import statistics
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("dump", "ab"))
    ap.add_argument("files", nargs="+")
    ap.add_argument("--work", default="shade", choices=("shade", "collatz"))
    ap.add_argument("--mode", default="wave", choices=("wave", "lane"))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--root", default=str(HERE))
    ap.add_argument("--cpu", action="store_true", help="the calling thread's CPU time (one thread)")
    a = ap.parse_args()
    root = pathlib.Path(a.root).resolve()
    sys.path[:0] = [str(root), str(root / "tests"), str(HERE / "bench")]
    import bench_exec as B  # (puts this tree first on sys.path again: undone below)

    sys.path[:] = [str(root)] + [p for p in sys.path if p != str(HERE)]
    import numpy as np

    import wavelift
    from wavelift.backends import host, native
    from wavelift.backends.numpy import runtime as RT

    assert pathlib.Path(wavelift.__file__).resolve().is_relative_to(root), wavelift.__file__
    made: list = []  # the NativeBlocks of the workload's program
    attach = native.NativeBlocks._attach

    def _attach(self, lib):
        made.append(self)
        return attach(self, lib)

    native.NativeBlocks._attach = _attach
    drive_parts, times = RT.Runtime._drive_parts, []
    clock = time.thread_time if a.cpu else time.perf_counter

    def _drive_parts(self, *args, **kw):
        t0 = clock()
        out = drive_parts(self, *args, **kw)
        times.append(clock() - t0)
        return out

    RT.Runtime._drive_parts = _drive_parts
    work = B.shade_work(False) if a.work == "shade" else B.collatz_work(False)
    dev = wavelift.Device(B.TARGET, backend="numpy", mode=a.mode, record=False)
    k = dev.load_code_object(str(B.HSACO)).kernel(work["name"])
    args = [dev.upload(x) if isinstance(x, np.ndarray) else x for x in work["args"]]

    def launch():
        r = k.launch(groups=work["groups"], block=work["block"], args=args)
        assert r.landed, r.refusal

    launch()
    native.wait_for_compiles()
    launch()
    nb = made[-1]
    if a.what == "dump":
        pathlib.Path(a.files[0]).write_text(nb.source)
        return 0
    libs = []
    for f in a.files:
        lib = native._build_and_load(host.compiler(), pathlib.Path(f).read_text(), "ab", None)
        lib.wl_drive.restype = None
        lib.wl_drive.argtypes = (ctypes.c_void_p,) * 3 + (ctypes.c_int64,) * 2
        lib.wl_waves.restype = ctypes.c_int64
        lib.wl_waves.argtypes = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
        # (a source from before wl_drive_ranges has none: its ranges are then claimed in Python)
        ranges = getattr(lib, "wl_drive_ranges", None)
        if ranges is not None:
            ranges.restype = None
            ranges.argtypes = (ctypes.c_void_p,) * 5 + (ctypes.c_int64, ctypes.c_void_p)
        libs.append((lib, ranges))
    got: dict[str, list[float]] = {f: [] for f in a.files}
    outs: dict[str, set[str]] = {f: set() for f in a.files}
    for r in range(a.rounds):
        for f, (lib, ranges) in zip(a.files, libs):
            nb.drive, nb.waves = lib.wl_drive, lib.wl_waves
            if hasattr(nb, "drive_ranges"):
                nb.drive_ranges = ranges
            launch()
            launch()
            best = []
            for _ in range(3):
                launch()
                best.append(times[-1])
            got[f].append(min(best))
            if r in (0, a.rounds - 1):
                out = dev.download(args[work["out"]], work["args"][work["out"]].dtype)
                outs[f].add(hashlib.sha256(out.tobytes()).hexdigest()[:12])
    base = statistics.median(got[a.files[0]])
    print(
        f"load {os.getloadavg()[0]:.2f}, threads {RT.NATIVE_THREADS}, {a.work} {a.mode}, {a.rounds} rounds"
        + (", calling thread's CPU time" if a.cpu else "")
    )
    for f in a.files:
        m = statistics.median(got[f])
        print(
            f"{os.path.basename(f):28s} drive median {m * 1e3:6.2f} ms  best {min(got[f]) * 1e3:6.2f} ms  "
            f"x{m / base:5.3f}  out {sorted(outs[f])}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
