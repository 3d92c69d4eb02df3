"""Scratch benchmark: the two game-shaped passes of D954 (ACO scratch_game, wave64, a dynamically
indexed private uint[96] per thread) — 240x135 workgroups of 8x8, and 32400 workgroups of 8x8 —
next to PoCL running the same private-array kernel (issue 25's acceptance).

    python bench/bench_scratch.py [--steps N] [--mode wave|lane] [--small | --quick]
                                  [--tiers numpy,native] [--repeat N] [--rounds N] [--json FILE]

Baseline: PoCL (pyopencl, tests/reference/pocl.py) runs bench/kernels/scratch_game.cl, an OpenCL C
transcription of tests/fixtures/glsl/scratch_game.comp (the source of the ACO binary), on the same
seeds, in its best shape: the work-group size that runs fastest for it (bench/pocl_best.py;
the shader's own 8x8 and PoCL's choice among the candidates), its compile not counted.  Every
output — PoCL's and each wavelift tier's — is checked bit-exact against the NumPy reference
(tests/scratch/references.py) and wavelift's against PoCL's (integer results: OK / WRONG).

Times, side by side, for PoCL and for each wavelift tier (NumPy blocks; the native tier forced on,
its library compiled or found in the disk cache by a small dispatch first):
  kernel      PoCL: the profiled kernel time; wavelift: DispatchResult.stats['time_s'] (the
              dispatch in execute_dispatch: module lookup, tracer, run, landing)
  launch      PoCL: host enqueue->finish; wavelift: the wall time of AcoShader.launch
  end to end  the host's view of one pass: seeds copied in, run, result copied back (PoCL: its
              buffers made once, bench/pocl_best.Runner; wavelift: Device.write into the seeds'
              allocation, launch, Device.download of the result)
PoCL: best of --repeat after its warm-up; the native tier: best of --repeat warm passes; NumPy
blocks: one pass (they take seconds).  Ratios wavelift / PoCL for all three, and --rounds N
(default 3) alternating rounds — best of ROUND_POCL PoCL runs, then best of ROUND_WAVELIFT native
passes — whose median ratio (launch and end to end) cancels a shared host's drift.  Also: NumPy
blocks / native tier, and each tier against the time of the vectorised NumPy reference model
(computed once per pass).  wavelift runs on one Device(record=False) per pass shape (a Device for
long runs: host writes go straight to guest memory, per-launch allocations reused).  The host's
load average is printed before and after (a shared machine).  Issue 25's targets: a pass < 2 s
end to end in wave mode, < 4 s in lane mode (native tier).

Exit status: 0 ran and every output agreed; 1 a refusal or a WRONG output; 3 PoCL unavailable
(the wavelift half still runs and prints).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import struct
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "scratch"))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
import pocl_best  # noqa: E402
from reference import pocl  # noqa: E402
from references import FIX, ref_scratch_game  # noqa: E402

import wavelift  # noqa: E402
from wavelift.backends import native  # noqa: E402
from wavelift.backends.numpy import runtime  # noqa: E402

CL = str(ROOT / "bench" / "kernels" / "scratch_game.cl")
JS = FIX / "gfx1030" / "aco" / "scratch_game-w64.json"
ROUND_POCL = 3
ROUND_WAVELIFT = 2
TARGET_S = {"wave": 2.0, "lane": 4.0}


def _tier(name: str) -> None:
    """NumPy blocks ("numpy") or the native tier forced on ("native": the driver, its threads)."""
    runtime.NATIVE = "off" if name == "numpy" else "on"


def make_seeds(groups, seed: int = 1) -> np.ndarray:
    """The pass's input, as tests/scratch/references.run_scratch_game makes it."""
    n = 64 * groups[0] * groups[1]
    return np.random.default_rng(seed).integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)


class WaveliftPass:
    """One pass shape on one Device: the ACO shader loaded, the seeds and result allocated."""

    def __init__(self, groups, mode: str, seeds: np.ndarray, steps: int):
        self.groups = (groups[0], groups[1], 1)
        self.seeds = seeds
        self.dev = wavelift.Device("gfx1030", backend="numpy", mode=mode, record=False)
        self.sh = self.dev.load_aco_shader(JS)
        self.sb = self.dev.upload(seeds, name="seeds")
        self.rb = self.dev.alloc(4 * seeds.size, name="result", fill=0xA5)
        self.push = struct.pack("<2I", 8 * groups[0], steps)

    def run(self) -> dict:
        t0 = time.perf_counter()
        self.dev.write(self.sb, self.seeds)
        t1 = time.perf_counter()
        r = self.sh.launch(
            groups=self.groups, buffers={(0, 0): self.sb, (0, 1): self.rb}, push_constants=self.push
        )
        t2 = time.perf_counter()
        got = self.dev.download(self.rb, np.uint32)
        t3 = time.perf_counter()
        return dict(kernel=r.stats.get("time_s", t2 - t1), launch=t2 - t1, e2e=t3 - t0, r=r, got=got)


def best_of(runs: list[dict]) -> dict:
    """Each time column's best over the runs (the columns' best runs may differ)."""
    return {k: min(r[k] for r in runs) for k in ("kernel", "launch", "e2e")}


def ms(x: float) -> str:
    return f"{x * 1e3:9.1f} ms"


def check(got, want, pocl_got) -> str:
    ok = np.array_equal(got, want)
    s = "OK (= reference" if ok else f"WRONG ({int(np.count_nonzero(got != want))} items != reference"
    if pocl_got is not None:
        s += ", = PoCL)" if np.array_equal(got, pocl_got) else ", != PoCL)"
    else:
        s += ")"
    return s


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--mode", default="wave", choices=("wave", "lane"))
    ap.add_argument("--small", action="store_true", help="1/16 of each pass (quick check)")
    ap.add_argument("--quick", action="store_true", help="smoke test: --small, --repeat 2, --rounds 3")
    ap.add_argument("--tiers", default="numpy,native", help="comma-separated: numpy, native")
    ap.add_argument("--repeat", type=int, default=3, help="PoCL runs and warm native passes (best of)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating PoCL / native rounds (0: none)")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args(argv)
    if a.quick:
        a.small, a.repeat, a.rounds = True, min(a.repeat, 2), min(a.rounds, 3)
    tiers = [t for t in a.tiers.split(",") if t]
    shapes = [("240x135", (240, 135)), ("32400", (32400, 1))]
    if a.small:
        shapes = [("60x34", (60, 34)), ("2025", (2025, 1))]
    why = pocl.unavailable_reason()
    print(
        f"scratch_game-w64 gfx1030 mode={a.mode} steps={a.steps} tiers={','.join(tiers)} "
        f"threads={runtime.NATIVE_THREADS} load={os.getloadavg()[0]:.2f}\n"
        f"host: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, numpy {np.__version__}; "
        + (f"PoCL: {pocl.device_name()}" if not why else f"PoCL unavailable: {why}")
    )
    status = 0
    if "native" in tiers:  # the library: compiled (or found in the disk cache) before timing
        _tier("native")
        t0 = time.perf_counter()
        p = WaveliftPass((2, 1), a.mode, make_seeds((2, 1)), a.steps).run()
        native.wait_for_compiles()
        print(f"  native library: {p['r'].stats.get('native_library')} in {time.perf_counter() - t0:.2f} s")
    results = []
    for name, shape in shapes:
        seeds = make_seeds(shape)
        width, height = 8 * shape[0], 8 * shape[1]
        t0 = time.perf_counter()
        want = ref_scratch_game(seeds, a.steps)
        t_ref = time.perf_counter() - t0
        row: dict = dict(pass_=name, groups=list(shape), items=int(seeds.size), ref_s=t_ref)
        print(
            f"[{name}] {shape[0]}x{shape[1]} groups of 8x8, {seeds.size} items; NumPy reference model {t_ref:.2f} s"
        )
        pargs = [seeds, np.zeros(seeds.size, np.uint32), np.uint32(width), np.uint32(a.steps)]
        pl = None
        if not why:
            runner = pocl_best.Runner(CL, "scratch_game", pargs, out=1)
            local, tried = pocl_best.pick(runner, (width, height), natural=(8, 8))
            runs = [runner.run((width, height), local) for _ in range(max(1, a.repeat))]
            pl = best_of(runs)
            pocl_got = runs[0]["got"]
            ok = all(np.array_equal(r["got"], want) for r in runs)
            status |= 0 if ok else 1
            row.update(pocl_local=pocl_best.fmt_local(local), pocl=pl, pocl_ok=ok)
            others = ", ".join(
                f"{pocl_best.fmt_local(k)} {v * 1e3:.1f}" for k, v in tried.items() if k != local
            )
            print(f"  PoCL    local {pocl_best.fmt_local(local)} (launch ms at the others: {others})")
            print(
                f"  PoCL   : kernel {ms(pl['kernel'])}  launch {ms(pl['launch'])}  end to end {ms(pl['e2e'])}  "
                f"{'OK (= reference)' if ok else 'WRONG (!= reference)'}"
            )
        else:
            pocl_got = None
        times: dict = {}
        passes: dict = {}
        for tier in tiers:
            _tier(tier)
            wp = WaveliftPass(shape, a.mode, seeds, a.steps)
            runs = []
            for _ in range(1 if tier == "numpy" else max(1, a.repeat)):
                p = wp.run()
                if not p["r"].landed:
                    rf = p["r"].refusal
                    print(f"  {tier:7s}: refused {rf.code}: {rf.message}")
                    status = 1
                    runs = []
                    break
                runs.append(p)
            if not runs:
                continue
            bt = best_of(runs)
            times[tier], passes[tier] = bt, wp
            st = runs[-1]["r"].stats
            # the first pass wrote into the 0xA5 fill; later passes must give the same
            verdict = check(runs[0]["got"], want, pocl_got)
            if any(not np.array_equal(r["got"], runs[0]["got"]) for r in runs):
                verdict = "WRONG (passes differ)"
            status |= 0 if verdict.startswith("OK") and "!=" not in verdict else 1
            extra = ""
            if st.get("native"):
                extra = (
                    f"  driver={st.get('native_driver')} threads={st.get('native_threads')} "
                    f"numpy_blocks={len(st.get('numpy_blocks', {}))}"
                )
            print(
                f"  {tier:7s}: kernel {ms(bt['kernel'])}  launch {ms(bt['launch'])}  end to end {ms(bt['e2e'])}  "
                f"{verdict}  {st['waves']} waves{extra}"
            )
            line = f"           {st['waves'] / bt['e2e']:9.0f} waves/s   vs NumPy model {bt['e2e'] / t_ref:6.2f}x"
            if pl:
                line += (
                    f"   vs PoCL: kernel {bt['kernel'] / pl['kernel']:6.1f}x  launch {bt['launch'] / pl['launch']:6.1f}x  "
                    f"end to end {bt['e2e'] / pl['e2e']:6.1f}x"
                )
            if tier == "native":
                line += f"   target < {TARGET_S[a.mode]:.0f} s: {'met' if bt['e2e'] < TARGET_S[a.mode] else 'NOT met'}"
            print(line)
            row[tier] = dict(bt, ok=verdict, waves=st["waves"], threads=st.get("native_threads"))
        if pl and "native" in passes and a.rounds > 0:
            _tier("native")
            rl, re_ = [], []
            for _ in range(a.rounds):
                pr = best_of([runner.run((width, height), local) for _ in range(ROUND_POCL)])
                wr = best_of([passes["native"].run() for _ in range(ROUND_WAVELIFT)])
                rl.append(wr["launch"] / pr["launch"])
                re_.append(wr["e2e"] / pr["e2e"])
            rl.sort()
            re_.sort()
            med_l, med_e = statistics.median(rl), statistics.median(re_)
            row.update(round_launch=rl, round_e2e=re_, round_launch_median=med_l, round_e2e_median=med_e)
            print(
                f"  native / PoCL per round ({a.rounds} alternating rounds, best of {ROUND_POCL} PoCL / "
                f"{ROUND_WAVELIFT} native): launch median {med_l:.1f}x ({rl[0]:.1f}-{rl[-1]:.1f})   "
                f"end to end median {med_e:.1f}x ({re_[0]:.1f}-{re_[-1]:.1f})"
            )
        if "numpy" in times and "native" in times:
            print(
                f"  NumPy blocks / native tier (end to end) = {times['numpy']['e2e'] / times['native']['e2e']:.1f}x"
            )
        results.append(row)
    print(f"load={os.getloadavg()[0]:.2f}")
    print("\nsummary (end to end; ratio = wavelift / PoCL):")
    for row in results:
        s = f"  {row['pass_']:8s}"
        if "pocl" in row:
            s += f" PoCL {row['pocl']['e2e'] * 1e3:7.1f} ms ({row['pocl_local']})"
        for tier in tiers:
            if tier in row:
                s += f"  {tier} {row[tier]['e2e']:6.3f} s"
                if "pocl" in row:
                    s += f" ({row[tier]['e2e'] / row['pocl']['e2e']:.1f}x)"
        if "round_e2e_median" in row:
            s += f"  native rounds median {row['round_e2e_median']:.1f}x"
        print(s)
    if a.json:
        pathlib.Path(a.json).write_text(
            json.dumps(dict(mode=a.mode, steps=a.steps, results=results), indent=1, default=str)
        )
    if why:
        return 3
    return status


if __name__ == "__main__":
    sys.exit(main())
