"""tinygrad's hardware-validated instruction tests (``test/amd/hw``) through wavelift's hook vs
tinygrad's own emulator, and A/B of two wavelift trees on them, in one run.

    python bench/bench_tinygrad_hw.py --tinygrad-src /tmp/tgsrc [--old /tmp/old] [--new .]
                                      [--no-emulator] [--files test_sop.py,test_vop1.py] [--json F]
                                      [--emulator-cache warm|cold] [--wavelift-cache warm|cold]
    python bench/bench_tinygrad_hw.py --tinygrad-src /tmp/tgsrc --record progs.pkl
    python bench/bench_tinygrad_hw.py --replay progs.pkl --old /tmp/old [--new .] [--rounds 3]

Every test of ``test/amd/hw`` that goes through its ``helpers.run_program_emu`` (769 one-wave
programs: each one ``run_asm`` call of a fresh program, so wavelift's cost is the cold path:
decode, translation, passes, NumPy code generation, run) runs under pytest in a child process,
once per side, with ``helpers.run_asm`` replaced by a timer around the side's ``run_asm``:
tinygrad's emulator (``test/mockgpu/amd/emu.py``), or ``wavelift.compat.tinygrad.run_asm`` from
the tree ``--old`` / ``--new`` (each child's ``sys.path`` holds that tree only).  Printed per
side: seconds inside ``run_asm`` (wall, and the calling thread's CPU time: on a loaded host
the CPU time is the steadier measure), calls, passed/failed, and a SHA-256 over every call's output
buffer after the call (the register dumps the tests read), so two wavelift trees that move no
result bit print the same digest.  Ratios: emulator / wavelift, and old / new.  The tests' own
files are not modified (the timer is a pytest plugin written to a temporary directory).

``--record`` saves each program (code bytes, lanes, RSRC2, scratch size) as the tests hand them
over; ``--replay`` runs those programs again, with no pytest and no tinygrad, through the
hook of each tree in alternating child processes (``--rounds``), each program fresh in its
process: the cold path alone, and the digest of every output buffer.  Recorded programs are
tinygrad's test content: keep them under /tmp, never commit them.

The host's load average is printed with the numbers (a shared machine: compare within one run).

wavelift's pieces on disk (decision 0045, amendment "pieces on disk") are to it what tinygrad's
compile cache is to the emulator: ``--wavelift-cache cold`` gives each wavelift child an empty one
(a first run); the default (warm) uses the one earlier runs left.
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

HERE = pathlib.Path(__file__).resolve().parent.parent

PLUGIN = r"""
import ctypes, hashlib, json, os, pickle, time

STATE = {"seconds": 0.0, "cpu": 0.0, "calls": 0, "digest": hashlib.sha256(), "record": []}


def pytest_configure(config):
    from test.amd.hw import helpers

    side = os.environ["WLB_SIDE"]
    if side == "emulator":
        from test.mockgpu.amd.emu import run_asm as impl
    else:
        from wavelift.compat.tinygrad import run_asm as impl
        import wavelift

        assert os.path.realpath(wavelift.__file__).startswith(os.path.realpath(side)), wavelift.__file__

    def timed(lib, lib_sz, gx, gy, gz, lx, ly, lz, args_ptr, rsrc2, scratch_size, *a, **k):
        if os.environ.get("WLB_RECORD"):
            STATE["record"].append((ctypes.string_at(lib, lib_sz), lx, rsrc2, scratch_size))
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return impl(lib, lib_sz, gx, gy, gz, lx, ly, lz, args_ptr, rsrc2, scratch_size, *a, **k)
        finally:
            STATE["seconds"] += time.perf_counter() - t0
            STATE["cpu"] += time.thread_time() - c0
            STATE["calls"] += 1
            out = ctypes.c_uint64.from_address(args_ptr).value
            STATE["digest"].update(ctypes.string_at(out, helpers._out_bytes(lx)))

    helpers.run_asm = timed


def pytest_terminal_summary(terminalreporter):
    st = terminalreporter.stats
    row = {
        "seconds": STATE["seconds"],
        "cpu": STATE["cpu"],
        "calls": STATE["calls"],
        "digest": STATE["digest"].hexdigest(),
        "passed": len(st.get("passed", [])),
        "failed": len(st.get("failed", [])),
    }
    print("\nWLB " + json.dumps(row), flush=True)
    if os.environ.get("WLB_RECORD"):
        with open(os.environ["WLB_RECORD"], "wb") as f:
            pickle.dump(STATE["record"], f)
"""

REPLAY = r"""
import ctypes, hashlib, json, os, pickle, sys, time
tree, progs = sys.argv[1], sys.argv[2]
sys.path.insert(0, tree)
import wavelift
from wavelift.compat.tinygrad import run_asm
assert os.path.realpath(wavelift.__file__).startswith(os.path.realpath(tree)), wavelift.__file__
N_VGPRS, SGPR_BYTES, WAVE = 16, 64, 32
total, cpu, digest, codes = 0.0, 0.0, hashlib.sha256(), []
for code, lanes, rsrc2, scratch in pickle.load(open(progs, "rb")):
    n = max(N_VGPRS * lanes * 4, N_VGPRS * WAVE * 4) + SGPR_BYTES + 12
    out = (ctypes.c_uint8 * n)()
    args = (ctypes.c_uint64 * 1)(ctypes.addressof(out))
    kbuf = (ctypes.c_char * len(code)).from_buffer_copy(code)
    t0, c0 = time.perf_counter(), time.thread_time()
    r = run_asm(ctypes.addressof(kbuf), len(code), 1, 1, 1, lanes, 1, 1, ctypes.addressof(args), rsrc2, scratch)
    total += time.perf_counter() - t0
    cpu += time.thread_time() - c0
    codes.append(r)
    digest.update(bytes([r]) + bytes(out))
print(json.dumps({"seconds": total, "cpu": cpu, "calls": len(codes), "ok": codes.count(0), "digest": digest.hexdigest()}))
"""


def run_side(
    src: str, side: str, tree: str, files: list[str], record: str | None, cold: bool = False
) -> dict:
    """One pytest child: ``side`` is "emulator" or a wavelift tree; ``tree`` goes on its path;
    ``cold``: the side's disk cache empty, as on a first run (the emulator: tinygrad's compile
    cache (CACHEDB) a fresh file; wavelift: its pieces on disk (WAVELIFT_PIECE_CACHE) a fresh
    directory)."""
    with tempfile.TemporaryDirectory() as d:
        pathlib.Path(d, "wlb_plugin.py").write_text(PLUGIN)
        env = dict(os.environ)
        if cold and side == "emulator":
            env["CACHEDB"] = str(pathlib.Path(d, "cache.db"))
        elif cold:
            env["WAVELIFT_PIECE_CACHE"] = str(pathlib.Path(d, "pieces"))
        env["PYTHONPATH"] = os.pathsep.join([src, str(pathlib.Path(tree).resolve()), d])
        env["PATH"] = "/usr/lib/llvm-19/bin:" + env.get("PATH", "")
        env["WLB_SIDE"] = "emulator" if side == "emulator" else str(pathlib.Path(tree).resolve())
        if record:
            env["WLB_RECORD"] = str(pathlib.Path(record).resolve())
        tests = [f"test/amd/hw/{f}" for f in files] if files else ["test/amd/hw"]
        p = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "wlb_plugin", *tests],
            env=env,
            cwd=src,
            capture_output=True,
            text=True,
        )
    for line in p.stdout.splitlines():
        if line.startswith("WLB "):
            return json.loads(line[4:])
    return {"error": (p.stdout + p.stderr)[-2000:]}


def replay(progs: str, tree: str, cold: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, PYTHONPATH="")
        if cold:
            env["WAVELIFT_PIECE_CACHE"] = str(pathlib.Path(d, "pieces"))
        p = subprocess.run(
            [sys.executable, "-c", REPLAY, str(pathlib.Path(tree).resolve()), progs],
            capture_output=True,
            text=True,
            env=env,
        )
    if p.returncode:
        return {"error": p.stderr[-2000:]}
    return json.loads(p.stdout.splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tinygrad-src", help="a checkout of tinygrad's repository (test/amd/hw, test/mockgpu)")
    ap.add_argument("--new", default=str(HERE), help="wavelift tree (default: this one)")
    ap.add_argument("--old", help="a baseline wavelift tree (an unpacked git archive)")
    ap.add_argument("--no-emulator", action="store_true", help="leave tinygrad's emulator out")
    ap.add_argument(
        "--emulator-cache",
        default="warm",
        choices=["warm", "cold"],
        help="the emulator's per-instruction kernels from tinygrad's disk cache (warm: as earlier "
        "runs left it) or compiled afresh into an empty one (cold: a first run, e.g. a fresh CI box)",
    )
    ap.add_argument(
        "--wavelift-cache",
        default="warm",
        choices=["warm", "cold"],
        help="wavelift's pieces from its disk cache (warm: as earlier runs left it, "
        "$WAVELIFT_PIECE_CACHE or ~/.cache/wavelift/pieces) or from an empty one (cold: a first run)",
    )
    ap.add_argument("--files", default="", help="comma-separated test files of test/amd/hw (default: all)")
    ap.add_argument("--record", help="save the programs the tests hand over (pickle; keep under /tmp)")
    ap.add_argument("--replay", help="replay recorded programs through the hook of each tree")
    ap.add_argument("--rounds", type=int, default=3, help="--replay: alternating rounds")
    ap.add_argument("--json", help="also write the numbers here")
    a = ap.parse_args(argv)
    trees = [("old", a.old)] if a.old else []
    trees.append(("new", a.new))
    print(f"load average before: {os.getloadavg()}", flush=True)
    res: dict = {}
    if a.replay:
        for r in range(a.rounds):
            for name, tree in trees if r % 2 == 0 else trees[::-1]:
                row = replay(a.replay, tree, a.wavelift_cache == "cold")
                res.setdefault(name, []).append(row)
                print(f"round {r} {name}: {json.dumps(row)}  load {os.getloadavg()[0]:.1f}", flush=True)
        print(f"load average after:  {os.getloadavg()}")
        ok = {n: rows for n, rows in res.items() if "error" not in rows[0]}
        med = {n: statistics.median(x["seconds"] for x in rows) for n, rows in ok.items()}
        cpu = {n: statistics.median(x["cpu"] for x in rows) for n, rows in ok.items()}
        for n, rows in res.items():
            print(
                f"{n}: median {med.get(n, float('nan')):.2f} s wall, {cpu.get(n, float('nan')):.2f} s CPU, "
                f"digests {sorted({x.get('digest') for x in rows})}"
            )
        if "old" in med and "new" in med:
            print(f"old / new: {med['old'] / med['new']:.2f}x wall, {cpu['old'] / cpu['new']:.2f}x CPU")
    else:
        if not a.tinygrad_src:
            ap.error("--tinygrad-src is needed (or --replay)")
        files = [f for f in a.files.split(",") if f]
        sides = [] if a.no_emulator or a.record else [("emulator", "emulator", a.new)]
        sides += [(n, t, t) for n, t in trees]
        for name, side, tree in sides:
            rec = a.record if name == "new" else None
            cold = a.emulator_cache == "cold" if side == "emulator" else a.wavelift_cache == "cold"
            res[name] = run_side(a.tinygrad_src, side, tree, files, rec, cold)
            print(f"{name}: {json.dumps(res[name])}  load {os.getloadavg()[0]:.1f}", flush=True)
        print(f"load average after:  {os.getloadavg()}")
        sec = {n: r["seconds"] for n, r in res.items() if "seconds" in r}
        cpu = {n: r["cpu"] for n, r in res.items() if "cpu" in r}
        for x, y in (("emulator", "old"), ("emulator", "new"), ("old", "new")):
            if x in sec and y in sec:
                print(f"{x} / {y}: {sec[x] / sec[y]:.2f}x wall, {cpu[x] / cpu[y]:.2f}x CPU")
    if a.json:
        pathlib.Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
