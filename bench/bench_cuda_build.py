#!/usr/bin/env python3
"""Cold and cached CUDA module builds of the largest fixture programs (issue 24 item 4), CPU and
wall time, and where NVRTC's time goes.  Needs NVRTC only (no GPU).

    python bench/bench_cuda_build.py [--ab REV] [--quick] [--only SUBSTR]

Per program (this tree's codegen; the same source for every measurement):
  gen       generate(): the IR's passes and the CUDA lowering (Python, in this process)
  ptx       NVRTC to PTX only, the optimising options (front end + NVVM) | fast: -Ofast-compile=max
  cubin     NVRTC to a cubin, the same options (ptx + ptxas)              | fast: the same
  first     build_module's compile step on an empty disk cache: what the first launch waits for
            (this tree: the fast tier when the module is big; REV: its own build)
  upgrade   this tree only: until the optimising build (its own thread, started beside the fast
            one) is there; CPU: the whole process (both builds)
  disk      the same compile step again on the filled disk cache (digest checked: decision 0016)
  fresh     (--fresh) build_module in a new process on a disk cache it filled before (real
            module key, the optimising build): 'new' finds the entry from the key alone
            (backends/cuda/stored.py), 'old' generates first as build_module did before; the
            translation of the program (what the NumPy backend also does) beside them
Every NVRTC build runs in its own child process with CUDA's compute cache off; CPU is that
process's CPU time (NVRTC is single-threaded: on a shared host the fair number), wall next to it.
``--ab REV``: the first/disk rows also with commit REV's compile.py (a `git worktree` under /tmp),
in alternating child processes.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "tests"))
sys.path.insert(0, str(HERE / "tests" / "cuda"))

# (the fixture program, mode): the largest by IR ops of each kind (ACO int64 division: 8,658
# instructions; descriptor_types and image_blur: image ops; the biggest -O0 clang kernels)
PROGRAMS = (
    ("gfx1030/aco/int64_div-w64.bin", "lane"),
    ("gfx1030/aco/int64_div32_shapes-w32.bin", "lane"),
    ("gfx1030/aco/image_blur-w32.bin", "lane"),
    ("gfx1030/aco/descriptor_types-w32.bin", "lane"),
    ("gfx1030/math-O0-w64-mubuf:int64_math:small", "wave"),
    ("gfx1030/basic-O0-w64-mubuf:lds_reduce:small", "lane"),
)
QUICK = (PROGRAMS[3], PROGRAMS[4])

CHILD = r"""
import json, os, sys, time, resource
tree, what, src_path, cache = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
sys.path.insert(0, tree)
from wavelift.backends.cuda import compile as CC
src = open(src_path).read()
key = ("bench_cuda_build", src_path)
out = {"nvrtc": CC.nvrtc_version()}
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, t0, th0 = cpu(), time.perf_counter(), time.thread_time()
if what in ("ptx", "ptxfast", "cubin", "cubinfast"):
    opts = CC.FAST_OPTIONS if what.endswith("fast") else ()
    arch = "compute_90" if what.startswith("ptx") else "sm_90"
    data, _ = CC._nvrtc_build(src, arch, opts, cubin=what.startswith("cubin"))
    out["bytes"] = len(data)
else:  # first | disk: the backend's own compile step, with the disk cache in `cache`
    os.environ["WAVELIFT_CUDA_CACHE"] = cache
    if hasattr(CC, "tiered_compile"):
        cubin, secs, how, up = CC.tiered_compile(key, src, "sm_90")
    else:
        (cubin, secs, how), up = CC.cached_compile(key, src, "sm_90"), None
    out.update(how=how, bytes=len(cubin))
    if up is not None:
        # (the optimising build runs in its own thread from the start: this thread's CPU is
        # the fast build's)
        out["first_cpu"], out["first_wall"] = time.thread_time() - th0, time.perf_counter() - t0
        got = up.wait()
        out["upgrade_ok"] = got is not None
        out["upgrade_error"] = up.error
        out["upgrade_bytes"] = len(got or b"")
out["cpu"], out["wall"] = cpu() - c0, time.perf_counter() - t0
print(json.dumps(out))
"""


def _programs(wanted):
    """(name, mode, program, config, base) of each wanted fixture program."""
    import fixture_dispatches as F

    from wavelift.run import execute as X

    names = {n for n, _ in wanted}
    found = {}
    disp = []
    if any("/aco/" in n for n in names):
        disp += F.aco_dispatches()
    if any("/aco/" not in n for n in names):
        disp += F.clang_dispatches()
    for name, mem, cfg in disp:
        if name not in names or name in found or mem is None:
            continue
        # (execute's own translation: the program the module key names, decision 0049's h128)
        prog, base = X.program_for(mem, cfg, cache={})
        _MEMCFG[name] = (mem, cfg)
        found[name] = (prog, cfg, base)
    return [(n, m, *found[n]) for n, m in wanted if n in found]


FRESH = r"""
import json, os, sys, time, resource
tree, what, name, mode = sys.argv[1:5]
sys.path.insert(0, tree); sys.path.insert(0, tree + "/bench"); sys.path.insert(0, tree + "/tests")
sys.path.insert(0, tree + "/tests/cuda")
import bench_cuda_build as B
[(_, _, prog0, cfg, base)] = B._programs(((name, mode),))
from wavelift.run import execute as X
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
c0, t0 = cpu(), time.perf_counter()
prog, b2 = X.program_for(B._MEMCFG[name][0], cfg, cache={})  # (execute's translation, again)
out = {"tr_cpu": cpu() - c0, "tr_wall": time.perf_counter() - t0}
key = X.module_key(prog, cfg, mode, "cuda")
import wavelift.backends.cuda as C
from wavelift.backends.cuda import compile as CC
c0, t0 = cpu(), time.perf_counter()
CC.nvrtc_version()  # loading NVRTC to learn its version (both paths name entries by it)
out.update(nv_cpu=cpu() - c0, nv_wall=time.perf_counter() - t0)
c0, t0 = cpu(), time.perf_counter()
if what == "old":  # build_module as it was: generate, then the cubin its source names
    src = C.generate(prog, cfg.wave_size, mode, cfg.scratch_wave_bytes, base, C.baked_params(cfg))[0]
    how = CC.tiered_compile(key, src, "sm_90")[2]
else:
    m = C.build_module(key, prog, cfg, mode, arch="sm_90", base_address=base)
    how = m.compiled_by
out.update(cpu=cpu() - c0, wall=time.perf_counter() - t0, how=how)
print(json.dumps(out))
"""


def _fresh(what: str, name: str, mode: str, cache: str) -> dict:
    env = dict(os.environ, CUDA_CACHE_DISABLE="1", PYTHONPATH="", WAVELIFT_CUDA_CACHE=cache)
    env["WAVELIFT_CUDA_TIER"] = "off"  # the fill builds the optimising build (the one cached)
    return _json_child([FRESH, str(HERE), what, name, mode], env)


def _json_child(args: list, env: dict) -> dict:
    """``python -c args...`` in a child: its last stdout line as JSON, or the error it ended with."""
    r = subprocess.run([sys.executable, "-c", *args], capture_output=True, text=True, env=env, timeout=900)
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"rc {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


# name -> (guest memory, config) of the dispatches _programs found (FRESH re-translates from them)
_MEMCFG: dict = {}


def _child(tree: str, what: str, src_path: str, cache: str) -> dict:
    env = dict(os.environ, CUDA_CACHE_DISABLE="1", PYTHONPATH="")
    env.pop("WAVELIFT_CUDA_TIER", None)
    return _json_child([CHILD, tree, what, src_path, cache], env)


def _worktree(rev: str) -> pathlib.Path:
    sha = subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", rev], capture_output=True, text=True, check=True
    )
    sha = sha.stdout.strip()
    wt = pathlib.Path(tempfile.gettempdir()) / f"wl-bench-cuda-build-{sha[:12]}"
    if not (wt / "wavelift").is_dir():
        subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", str(wt), sha], check=True)
    return wt


def _fmt(r: dict, cpu="cpu", wall="wall") -> str:
    if "error" in r:
        return f"ERROR {r['error'][:60]}"
    return f"{r[cpu]:7.2f} {r[wall]:7.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ab", default=None, help="also build with commit AB's compile.py (a worktree)")
    ap.add_argument("--quick", action="store_true", help="two programs, no ptx split")
    ap.add_argument("--only", default=None, help="programs whose name holds this")
    ap.add_argument("--fresh", action="store_true", help="also: cached build_module in a fresh process")
    args = ap.parse_args()

    from wavelift.backends.cuda import baked_params
    from wavelift.backends.cuda import compile as CC
    from wavelift.backends.cuda.codegen import generate

    if CC.nvrtc_problem():
        sys.exit(f"NVRTC unavailable: {CC.nvrtc_problem()}")
    head = subprocess.run(
        ["git", "-C", str(HERE), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    trees = [("this", str(HERE))]
    if args.ab:
        trees.append((args.ab, str(_worktree(args.ab))))
    wanted = QUICK if args.quick and not args.only else PROGRAMS
    if args.only:
        wanted = tuple(w for w in wanted if args.only in w[0])
    print(
        f"# bench_cuda_build {time.strftime('%Y-%m-%d %H:%M:%S')} UTC, tree {head.stdout.strip()} (+ working "
        f"changes), NVRTC {CC.nvrtc_version()}, arch sm_90, {os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.1f}; seconds as CPU / wall"
    )
    tmp = tempfile.TemporaryDirectory(prefix="wl-bench-cuda-build-")
    for name, mode, prog, cfg, base in _programs(wanted):
        c0, t0 = time.process_time(), time.perf_counter()
        src = generate(prog, cfg.wave_size, mode, cfg.scratch_wave_bytes, base, baked_params(cfg))[0]
        gen = {"cpu": time.process_time() - c0, "wall": time.perf_counter() - t0}
        nops = sum(len(b.ops) for b in prog.blocks)
        path = pathlib.Path(tmp.name) / f"{abs(hash(name))}-{mode}.cu"
        path.write_text(src)
        print(
            f"\n## {name} {mode}: {len(prog.instructions)} instructions, {nops} IR ops, {len(prog.blocks)} "
            f"blocks, source {len(src) / 1e3:.0f} kB, tier {CC.tier_for(src)}"
        )
        print(f"  gen        {_fmt(gen)}")
        if not args.quick:
            for what in ("ptx", "cubin", "ptxfast", "cubinfast"):
                r = _child(str(HERE), what, str(path), "")
                print(f"  {what:10s} {_fmt(r)}" + (f"  ({r['bytes']} B)" if "bytes" in r else ""))
        for label, tree in trees:
            cache = pathlib.Path(tmp.name) / f"cache-{abs(hash((label, name, mode)))}"
            cache.mkdir(mode=0o700)
            r = _child(tree, "first", str(path), str(cache))
            if "first_cpu" in r:
                print(f"  first      {_fmt(r, 'first_cpu', 'first_wall')}  [{label}: {r['how']}]")
                ok = "ok" if r.get("upgrade_ok") else f"FAILED {r.get('upgrade_error')}"
                print(f"  upgrade    {_fmt(r)}  [{label}: first + optimising build, {ok}]")
            else:
                print(f"  first      {_fmt(r)}  [{label}: {r.get('how')}]")
            d = _child(tree, "disk", str(path), str(cache))
            print(
                f"  disk       {d.get('cpu', 0) * 1e3:7.1f} {d.get('wall', 0) * 1e3:7.1f} ms  [{label}: {d.get('how')}]"
            )
        if args.fresh:
            cache = pathlib.Path(tmp.name) / f"fresh-{abs(hash((name, mode)))}"
            fill = _fresh("new", name, mode, str(cache))  # empty cache: generates, compiles, stores
            print(f"  fill       {_fmt(fill)}  [{fill.get('how')}]")
            for _ in range(3):
                for what in ("old", "new"):
                    r = _fresh(what, name, mode, str(cache))
                    if "error" in r:
                        print(f"  fresh {what:4s} ERROR {r['error'][:80]}")
                        continue
                    print(
                        f"  fresh {what:4s} {r['cpu'] * 1e3:7.1f} {r['wall'] * 1e3:7.1f} ms  [{r['how']}; translate "
                        f"{r['tr_cpu'] * 1e3:.1f} {r['tr_wall'] * 1e3:.1f} ms; loading NVRTC before it "
                        f"{r['nv_cpu'] * 1e3:.1f} {r['nv_wall'] * 1e3:.1f} ms]"
                    )


if __name__ == "__main__":
    main()
