"""The map an in-place dispatch scans and clears per pass (decision 0049's amendment h157), no
GPU: bench_resident's vadd (N floats) and its 1920x1080 shade / stencil5 passes launched on the
CUDA backend's host path with the stand-in CuPy (tests/cuda/standin_cupy.py; vadd's kernel is
its vadd stand-in, the passes' store nothing -- the map ranges are fixed before a kernel runs),
with the module's own build (WAVELIFT_CUDA_PROVED=own) and with the lean one (=lean, the default;
its build waited for here).  Per dispatch in
place: its windows (bytes, whether its launched build can store into them), the map over the
windows' hull (``Placed.hull``: what every launch scanned, and a deferred one cleared, before
h157) and the map it scans and clears now (``Placed.scan``).

    python3 bench/inplace_scan.py [--vadd 67108864] [--size 1920x1080]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cuda"))
sys.path.insert(0, str(ROOT / "bench"))


def _measure(vadd: int, w: int, h: int) -> list:
    import standin_cupy as S
    from fixture_dispatches import launch_pass

    import wavelift
    import wavelift.backends.cuda as WC
    from wavelift.backends.cuda import resident as R

    got: list = []
    made = R.Resident.placed

    def placed(self, win, plan, *a):
        p = made(self, win, plan, *a)
        wr = a[0] if a and a[0] is not None else None
        hull_map = self.heap.map_over(*p.hull).nbytes
        got.append((win, p, wr, hull_map))
        return p

    R.Resident.placed = placed  # type: ignore[method-assign]
    # (the lean build, built in the background -- decision 0049's amendment h163 --, waited for
    # where it starts, so a dispatch's first launch is the build measured)
    start = WC._lean_compile

    def waited(key, src, arch, use_disk, then):
        got = start(key, src, arch, use_disk, then)
        cubin = got[0] if isinstance(got, tuple) else got.wait()
        return got if cubin is None else (cubin, 0.0, "nvrtc")

    WC._lean_compile = waited
    rows = []
    try:
        with S.installed() as st:
            for name in ("vadd", "shade", "stencil5"):
                got.clear()
                dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
                if name == "vadd":
                    k = dev.load_code_object(
                        str(ROOT / "tests/fixtures/gfx1030/basic-O2-w32-flat.hsaco")
                    ).kernel("vadd")
                    a = dev.upload(np.arange(vadd, dtype=np.float32))
                    b = dev.upload(np.ones(vadd, np.float32))
                    c = dev.alloc(4 * vadd)
                    st.kernel = S.vadd_player((a.address, b.address, c.address), vadd)
                    r = k.launch(global_size=(vadd, 1, 1), block=(256, 1, 1), args=[a, b, c, np.uint32(vadd)])
                    label = f"vadd {vadd}"
                else:
                    st.kernel = None  # (stores nothing: the ranges are fixed before the kernel)
                    r, _ = launch_pass(dev, name, w, h)
                    label = f"{name} {w}x{h}"
                assert r.refusal is None, r.refusal
                where = r.stats.get("in_place")
                if not got:
                    rows.append((label, where, r.stats.get("build"), None))
                    continue
                win, p, wr, hull_map = got[-1]
                wins = [(win.windows[k].size, wr is None or k in wr) for k in range(len(win.windows))]
                rows.append((label, where, r.stats.get("build"), (wins, hull_map, int(p.scan.nbytes))))
                del dev, r
    finally:
        R.Resident.placed = made  # type: ignore[method-assign]
        WC._lean_compile = start
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vadd", type=int, default=1 << 26)
    ap.add_argument("--size", default="1920x1080")
    o = ap.parse_args()
    w, h = (int(x) for x in o.size.split("x"))
    os.environ.setdefault("WAVELIFT_CUDA_INPLACE", "proved")
    os.environ.setdefault("WAVELIFT_CUDA_HEAP", "one")
    for build in ("own", "lean"):
        os.environ["WAVELIFT_CUDA_PROVED"] = build
        print(f"# build: {build} (WAVELIFT_CUDA_PROVED={build})")
        for label, where, built, m in _measure(o.vadd, w, h):
            if m is None:
                print(f"{label}: in place: {where}; not in place: nothing scanned in the heap")
                continue
            wins, hull_map, scan = m
            ws = ", ".join(
                f"{n / 2**20:.2f} MiB" + ("" if built != "lean" else " written" if wr else " read only")
                for n, wr in wins
            )
            print(
                f"{label}: in place: {where}, build {built or 'own'}; windows: {ws}; map per pass "
                f"scanned (and, deferred, cleared): hull {hull_map / 2**20:.3f} MiB -> {scan / 2**20:.3f} MiB "
                f"({scan / hull_map:.3f}x)"
            )


if __name__ == "__main__":
    main()
