#!/usr/bin/env python3
"""One script for an NVIDIA machine: the CUDA backend checked against NumPy lane mode, and timed
against the same kernels written natively in CUDA.

    python bench/gpu_check.py [--only PATTERN] [--skip-fixtures] [--skip-bench] [--quick]
                              [--jobs N] [--time-limit S] [--repeat N]

(a) fixtures: every dispatch of tests/fixtures (clang kernels x their tests/reference cases,
    ACO/RADV-LLVM shaders, RADV captures) and every dispatch the scratch tests (tests/scratch and
    GFX11's) make, run on NumPy lane mode and on CUDA lane mode (and wave mode where the program uses
    scratch); compared bit for bit: refusal code, escape count, write spans, instruction count,
    every byte of guest memory.  One line per dispatch.  basic.cl's atomics kernel is "race-ok"
    when only its order-dependent results differ (which lane's atomic_xchg/cmpxchg came last, as
    on hardware) and the fixture test's own invariants hold on the CUDA result.  Worker processes
    compile the modules and run the NumPy half while (b) uses the GPU.
(b) bench: full-screen 1920x1080 elementwise (bench.cl shade), divergent loop (collatz), and
    two game-shaped scratch dispatches (scratch_game.comp, 240x135 groups of 8x8 and 32400
    groups), each next to bench/kernels/native.cu compiled with NVRTC for this GPU: kernel time
    translated/native (target <= 3x on full-screen kernels), CUDA/NumPy wall time, and module
    compile time cold (NVRTC), from the disk cache and from memory.

Every item is guarded: a failure prints and the script goes on.  Results go to stdout and, when
$OUT is set, to $OUT/gpu_check.json.  Exit 0 when it ran (read the table), 2 without a GPU.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import copy
import json
import os
import pathlib
import struct
import sys
import tempfile
import time
import traceback

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "cuda"))

REPORT: dict = {"fixtures": [], "bench": [], "compile": {}, "errors": []}
T0 = time.perf_counter()


def picked(args, name: str) -> bool:
    """``name`` holds one of --only's comma-separated substrings."""
    return any(p in name for p in args.only.split(","))


def log(*a):
    print(*a, flush=True)


def guarded(what):
    def deco(fn):
        def run(*a, **k):
            try:
                return fn(*a, **k)
            except Exception as e:  # noqa: BLE001 - print and go on
                msg = f"{what}: {type(e).__name__}: {e}"
                log("  ERROR " + msg)
                log("  " + traceback.format_exc().replace("\n", "\n  ")[-3000:])
                REPORT["errors"].append(msg)
                return None

        return run

    return deco


# ------------------------------------------------------------------------------- fixtures
SCRATCH_FILE = None  # --scratch-dispatches: a pickle of the recorded scratch-test dispatches
# the scratch tests whose dispatches are recorded: GFX10's rules and GFX11's (architected flat
# scratch, 256-byte WAVESIZE units, hand-assembled gfx1100 programs)
SCRATCH_TESTS = ("scratch", "gfx11/test_gfx11_scratch.py")


def scratch_test_dispatches():
    """Every dispatch the scratch tests make: run SCRATCH_TESTS under pytest with execute_dispatch
    wrapped to record (memory copy, config) before NumPy runs it. Most scratch tests assemble with
    llvm-mc-19, which a GPU machine may lack; there, --scratch-dispatches loads the dispatches
    recorded on a machine that has it (same option: records when the file does not exist)."""
    import gzip
    import pickle
    import shutil

    if SCRATCH_FILE and pathlib.Path(SCRATCH_FILE).exists():
        got = pickle.loads(gzip.decompress(pathlib.Path(SCRATCH_FILE).read_bytes()))
        log(f"(scratch tests: {len(got)} dispatches loaded from {SCRATCH_FILE})")
        return got
    if not shutil.which("llvm-mc-19"):
        log(
            "WARNING: llvm-mc-19 missing: the scratch tests that assemble skip, so their dispatches "
            "are not checked; record them where it exists with --scratch-dispatches FILE"
        )
    got = _record_scratch_tests()
    if SCRATCH_FILE:
        pathlib.Path(SCRATCH_FILE).write_bytes(gzip.compress(pickle.dumps(got), 6))
        log(f"(scratch tests: {len(got)} dispatches recorded into {SCRATCH_FILE})")
    return got


def _record_scratch_tests():
    import pytest

    import wavelift.run.execute as X

    got = []
    orig = X.execute_dispatch

    def rec(memory, config, index=0, backend="numpy", mode="wave", cache=None, *more, **kw):
        # (*more: execute_dispatch's later parameters, which replay's fast call passes by place)
        got.append((f"scratch-test#{len(got)}:{mode}", copy.deepcopy(memory), config))
        return orig(memory, config, index, backend, mode, cache, *more, **kw)

    X.execute_dispatch = rec
    try:
        pytest.main(
            [
                "-q",
                "-p",
                "no:cacheprovider",
                "-x",
                "--no-header",
                "-o",
                "addopts=",
                *(str(ROOT / "tests" / t) for t in SCRATCH_TESTS),
            ]
        )
    finally:
        X.execute_dispatch = orig
    return got


def _precompile_one(args):
    """In a worker process: compile the dispatch's CUDA modules (cold NVRTC into the shared disk
    cache) and run NumPy lane/wave mode on a copy of its memory (the CPU half of the comparison,
    spread over the machine's cores)."""
    mem, cfg, modes, arch, cache_dir = args
    os.environ["WAVELIFT_CUDA_CACHE"] = cache_dir
    from test_cuda_backend import translate_dispatch

    from wavelift.backends.cuda import build_module
    from wavelift.run.execute import execute_dispatch, module_key

    out = []
    try:
        prog, base = translate_dispatch(mem, cfg)
    except Exception:  # noqa: BLE001 - refused translation: both backends refuse
        prog = None
    for m in modes:
        secs = how = None
        if prog is not None:
            mod = build_module(module_key(prog, cfg, m, "cuda"), prog, cfg, m, arch=arch, base_address=base)
            secs, how = mod.compile_s, mod.compiled_by
        m1 = copy.deepcopy(mem)
        t = time.perf_counter()
        r1 = execute_dispatch(m1, cfg, backend="numpy", mode=m, cache={})
        out.append((m, secs, how, _summary(r1, m1), time.perf_counter() - t))
    return out


def _summary(r, mem):
    """What the comparison looks at, picklable: outcome, escapes, spans, counters, memory."""
    return dict(
        outcome="landed" if r.refusal is None else r.refusal.code,
        refusal=str(r.refusal),
        escapes=r.stats.get("escapes"),
        spans=list(r.write_spans or []),
        stats={k: r.stats.get(k) for k in ("instructions", "lane_instructions", "waves")},
        memory=[(x.name or hex(x.base), bytes(x.data)) for x in mem],
    )


def _memdiff(a, b):
    for (name, bx), (_, by) in zip(a, b):
        if bx != by:
            d = np.flatnonzero(np.frombuffer(bx, np.uint8) != np.frombuffer(by, np.uint8))
            return f"{name}+{int(d[0]):#x} ({d.size} bytes differ)"
    return None


def start_fixtures(args, arch):
    """Collect every fixture dispatch and hand each to a worker process, which compiles its CUDA
    modules (cold NVRTC into a fresh disk cache) and runs the NumPy half; the GPU half runs in
    this process (finish_fixtures), so the benchmarks can use the GPU meanwhile."""
    import fixture_dispatches as F
    from test_cuda_backend import translate_dispatch

    items = []
    for fn in (
        F.clang_dispatches,
        F.clang_target_dispatches,
        F.aco_dispatches,
        F.capture_dispatches,
        scratch_test_dispatches,
    ):
        r = guarded(f"collect {fn.__name__}")(fn)()
        items += [(n, m, c) for n, m, c in (r or []) if m is not None]
    if args.only:
        items = [i for i in items if picked(args, i[0])]
    cache_dir = tempfile.mkdtemp(prefix="wl-cuda-cache-")
    os.environ["WAVELIFT_CUDA_CACHE"] = cache_dir
    jobs = []
    for _n, m, c in items:
        try:
            prog, _ = translate_dispatch(m, c)
            modes = ("lane", "wave") if prog.uses_scratch else ("lane",)
        except Exception:  # noqa: BLE001 - refused translation: both backends refuse
            modes = ("lane",)
        jobs.append((m, c, modes, arch, cache_dir))
    ex = cf.ProcessPoolExecutor(
        max_workers=args.jobs, mp_context=__import__("multiprocessing").get_context("spawn")
    )
    futs = [ex.submit(_guard_precompile, j) for j in jobs]
    log(f"\n(fixtures: {len(items)} dispatches handed to {args.jobs} worker processes)")
    return dict(items=items, jobs=jobs, futs=futs, ex=ex, t=time.perf_counter(), cache=cache_dir)


def finish_fixtures(fx, args):
    from wavelift.run.execute import execute_dispatch

    items, jobs, futs, ex = fx["items"], fx["jobs"], fx["futs"], fx["ex"]
    os.environ["WAVELIFT_CUDA_CACHE"] = fx["cache"]  # the modules the workers compiled
    log(f"\n== (a) fixtures: {len(items)} dispatches, NumPy lane vs CUDA ==")
    log(f"   {'dispatch':58s} {'mode':4s} {'numpy':22s} {'cuda':22s} {'match':6s} {'np s':>7s} {'cu s':>7s}")
    counts = {"equal": 0, "race-ok": 0, "DIFFERENT": 0, "error": 0, "skipped": 0}
    times = []
    for (n, m, c), job, fut in zip(items, jobs, futs):
        left = args.time_limit - (time.perf_counter() - T0)
        try:
            res = fut.result(timeout=max(left, 0.1))
        except cf.TimeoutError:
            counts["skipped"] += len(job[2])
            log(f"   {n[:58]:58s} SKIPPED (time limit; rerun with --only)")
            continue
        if isinstance(res, str):
            REPORT["errors"].append(f"{n}: {res}")
            counts["error"] += 1
            log(f"   {n[:58]:58s} ERROR {res[:200]}")
            continue
        for mode, secs, how, np_sum, np_s in res:
            if how == "nvrtc":
                times.append(secs)
            row = guarded(f"fixture {n} {mode}")(_one_fixture)(n, m, c, mode, np_sum, np_s, execute_dispatch)
            if row is None:
                counts["error"] += 1
                continue
            counts[row["match"]] += 1
            REPORT["fixtures"].append(row)
            log(
                f"   {n[:58]:58s} {mode:4s} {row['numpy'][:22]:22s} {row['cuda'][:22]:22s} "
                f"{row['match']:6s} {row['numpy_s']:7.3f} {row['cuda_s']:7.3f}"
                + (f"  {row['why']}" if row.get("why") else "")
            )
    ex.shutdown(wait=False, cancel_futures=True)
    if times:
        REPORT["compile"]["fixtures"] = dict(
            modules=len(times),
            total_s=sum(times),
            mean_s=float(np.mean(times)),
            max_s=max(times),
            wall_s=time.perf_counter() - fx["t"],
            jobs=args.jobs,
        )
        log(
            f"   cold NVRTC: {len(times)} modules, mean {np.mean(times):.2f} s, max {max(times):.2f} s "
            f"(in {args.jobs} worker processes, next to the NumPy runs)"
        )
    REPORT["fixture_counts"] = counts
    log(f"   fixtures: {counts}")


def _guard_precompile(job):
    try:
        return _precompile_one(job)
    except Exception as e:  # noqa: BLE001
        return f"worker: {type(e).__name__}: {str(e)[:500]}"


def _one_fixture(n, mem, cfg, mode, s1, t1, execute_dispatch):
    m2 = copy.deepcopy(mem)
    t = time.perf_counter()
    r2 = execute_dispatch(m2, cfg, backend="cuda", mode=mode, cache={})
    t2 = time.perf_counter() - t
    s2 = _summary(r2, m2)
    why = []
    if s1["outcome"] != s2["outcome"]:
        why.append(f"numpy: {s1['refusal']} | cuda: {s2['refusal']}"[:300])
    if s1["escapes"] != s2["escapes"]:
        why.append(f"escapes {s1['escapes']} vs {s2['escapes']}")
    if s1["outcome"] == s2["outcome"] == "landed":
        if s1["spans"] != s2["spans"]:
            why.append(f"write spans differ ({len(s1['spans'])} vs {len(s2['spans'])})")
        for k, v in s1["stats"].items():
            if v != s2["stats"][k]:
                why.append(f"{k} {v} vs {s2['stats'][k]}")
        d = _memdiff(s1["memory"], s2["memory"])
        if d and ":atomics:" in n:
            d = _atomics_race(n, cfg, s1["memory"], s2["memory"])
            if d is None:
                return dict(
                    name=n,
                    mode=mode,
                    numpy=s1["outcome"],
                    cuda=s2["outcome"],
                    match="race-ok",
                    numpy_s=t1,
                    cuda_s=t2,
                    why="atomic_xchg/cmpxchg order differs (as on hardware); "
                    "order-independent results equal, invariants hold",
                    device_s=r2.stats.get("device_time_s"),
                )
        if d:
            why.append("memory: " + d)
    return dict(
        name=n,
        mode=mode,
        numpy=s1["outcome"],
        cuda=s2["outcome"],
        match="DIFFERENT" if why else "equal",
        why="; ".join(why),
        numpy_s=t1,
        cuda_s=t2,
        device_s=r2.stats.get("device_time_s"),
    )


def _atomics_race(n, cfg, mem1, mem2):
    """basic.cl atomics: which lane's atomic_xchg / atomic_cmpxchg comes last is up to the
    scheduler, on hardware too.  -> None when every other byte is equal and the CUDA result
    passes the fixture test's own order-independent check (reference.cases.compare_atomics)
    against the NumPy one; else what differs."""
    from reference import cases as C

    racy = ("counters", "old")
    d = _memdiff([m for m in mem1 if m[0] not in racy], [m for m in mem2 if m[0] not in racy])
    if d:
        return d
    shape = n.rsplit(":", 1)[1]
    case = next(c for c in C.cases_for("atomics", cfg.wave_size) if c.shape.name == shape)
    arr = lambda mem, k: np.frombuffer(dict(mem)[k], np.int32)  # noqa: E731
    try:
        C.compare_atomics(
            case,
            {"counters": arr(mem1, "counters")},
            {"counters": arr(mem2, "counters"), "old": arr(mem2, "old")},
            {},
        )
    except AssertionError as e:
        return f"atomics: {str(e)[:300]}"
    return None


# ---------------------------------------------------------------------------------- bench
class Catch:
    def __init__(self):
        self.got = []

    def __call__(self, memory, config, index):
        from wavelift.errors import Refusal
        from wavelift.run.result import DispatchResult

        self.got.append((copy.deepcopy(memory), config))
        return DispatchResult(index, config, Refusal("backend.unavailable", "caught"))


def shade_dispatch(w, h):
    import wavelift

    rng = np.random.default_rng(1080)
    px = rng.integers(0, 1 << 32, size=w * h, dtype=np.uint64).astype(np.uint32)
    wt = rng.uniform(0.0, 2.0, w * h).astype(np.float32)
    cat = Catch()
    dev = wavelift.Device("gfx1030", execute=cat)
    k = dev.load_code_object(str(ROOT / "bench" / "kernels" / "bench-gfx1030-O2-w32.hsaco")).kernel("shade")
    bp, bw, bo = dev.upload(px), dev.upload(wt), dev.alloc(4 * w * h)
    k.launch(
        groups=(w // 8, h // 8),
        block=(8, 8),
        args=[bp, bw, bo, np.uint32(w), np.uint32(h), np.float32(1.25), np.float32(-8.0)],
    )
    mem, cfg = cat.got[0]
    native = dict(
        fn="shade",
        grid=(w // 8, h // 8),
        block=(8, 8),
        inputs=[px, wt],
        out_n=w * h,
        scalars=[np.uint32(w), np.uint32(h), np.float32(1.25), np.float32(-8.0)],
        tolerance=1,
    )
    return mem, cfg, bo.address, 4 * w * h, native


def collatz_dispatch(n):
    import wavelift

    rng = np.random.default_rng(65536)
    start = rng.integers(1, 100_000, size=n).astype(np.uint32)
    cat = Catch()
    dev = wavelift.Device("gfx1030", execute=cat)
    k = dev.load_code_object(str(ROOT / "bench" / "kernels" / "bench-gfx1030-O2-w32.hsaco")).kernel("collatz")
    bs, bo = dev.upload(start), dev.alloc(4 * n)
    k.launch(groups=(n // 256,), block=(256,), args=[bs, bo, np.uint32(1000)])
    mem, cfg = cat.got[0]
    native = dict(
        fn="collatz",
        grid=(n // 256, 1),
        block=(256, 1),
        inputs=[start],
        out_n=n,
        scalars=[np.uint32(1000)],
        tolerance=0,
    )
    return mem, cfg, bo.address, 4 * n, native


def vadd_dispatch(n, wave=32):
    import wavelift

    rng = np.random.default_rng(2)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    cat = Catch()
    dev = wavelift.Device("gfx1030", execute=cat)
    k = dev.load_code_object(
        str(ROOT / "tests" / "fixtures" / "gfx1030" / f"basic-O2-w{wave}-flat.hsaco")
    ).kernel("vadd")
    ba, bb, bo = dev.upload(a), dev.upload(b), dev.alloc(4 * n)
    k.launch(groups=(n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(n)])
    mem, cfg = cat.got[0]
    native = dict(
        fn="vadd",
        grid=(n // 256, 1),
        block=(256, 1),
        inputs=[a, b],
        out_n=n,
        scalars=[np.uint32(n)],
        tolerance=0,
    )
    return mem, cfg, bo.address, 4 * n, native


def scratch_game_dispatch(groups, width, steps, wave=64):
    import wavelift

    j = ROOT / "tests" / "fixtures" / "gfx1030" / "aco" / f"scratch_game-w{wave}.json"
    gx, gy = groups
    n = gx * 8 * gy * 8
    rng = np.random.default_rng(240135)
    seeds = rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)
    cat = Catch()
    dev = wavelift.Device("gfx1030", execute=cat)
    sh = dev.load_aco_shader(j)
    bs, bo = dev.upload(seeds), dev.alloc(4 * n)
    sh.launch(
        groups=(gx, gy, 1), buffers={(0, 0): bs, (0, 1): bo}, push_constants=struct.pack("<II", width, steps)
    )
    mem, cfg = cat.got[0]
    native = dict(
        fn="scratch_game",
        grid=(gx, gy),
        block=(8, 8),
        inputs=[seeds],
        out_n=n,
        scalars=[np.uint32(width), np.uint32(steps)],
        tolerance=0,
    )
    return mem, cfg, bo.address, 4 * n, native


# bench/kernels/lds.cl: the LDS and barrier kernels (issue 24 item 5), each with its inputs, its
# launch and a NumPy reference of its output (exact: integer results, or small-integer floats)
LDS_KERNELS = ("matmul16", "stencil5", "histogram", "reduce1024", "scan256")


def lds_case(name: str, small: bool = False) -> dict:
    """-> inputs, scalars, groups, block, output words and the expected output of lds.cl's
    ``name`` at the benchmark's size (``small``: a few groups, for tests on the NumPy backend)."""
    rng = np.random.default_rng(1024)
    u32 = lambda n: rng.integers(0, 1 << 32, size=n, dtype=np.uint64).astype(np.uint32)  # noqa: E731
    if name == "matmul16":
        n = 32 if small else 1024
        a = rng.integers(-8, 9, size=(n, n)).astype(np.float32)
        b = rng.integers(-8, 9, size=(n, n)).astype(np.float32)
        want = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32)
        return dict(
            inputs=[a.ravel(), b.ravel()],
            scalars=[np.uint32(n)],
            groups=(n // 16, n // 16),
            block=(16, 16),
            out_n=n * n,
            want=want.ravel().view(np.uint32),
        )
    if name == "stencil5":
        w, h = (40, 21) if small else (1920, 1080)
        img = (rng.integers(0, 1 << 24, size=(h, w))).astype(np.uint32)
        pad = np.pad(img.astype(np.uint64), 2, mode="edge")
        want = sum(pad[dy : dy + h, dx : dx + w] for dy in range(5) for dx in range(5))
        return dict(
            inputs=[img.ravel()],
            scalars=[np.uint32(w), np.uint32(h)],
            groups=(-(-w // 16), -(-h // 16)),
            block=(16, 16),
            out_n=w * h,
            want=(want & 0xFFFFFFFF).astype(np.uint32).ravel(),
        )
    if name == "histogram":
        n, groups = (5000, 3) if small else (1920 * 1080 * 4, 1024)
        x = u32(n)
        return dict(
            inputs=[x],
            scalars=[np.uint32(n)],
            groups=(groups,),
            block=(256,),
            out_n=256,
            want=np.bincount(x & 255, minlength=256).astype(np.uint32),
        )
    if name == "reduce1024":
        groups = 3 if small else 4096
        x = u32(groups * 1024)
        want = (x.reshape(groups, 1024).astype(np.uint64).sum(axis=1) & 0xFFFFFFFF).astype(np.uint32)
        return dict(inputs=[x], scalars=[], groups=(groups,), block=(256,), out_n=groups, want=want)
    if name == "scan256":
        groups = 3 if small else 4096
        x = u32(groups * 256)
        want = (np.cumsum(x.reshape(groups, 256).astype(np.uint64), axis=1) & 0xFFFFFFFF).astype(np.uint32)
        return dict(
            inputs=[x], scalars=[], groups=(groups,), block=(256,), out_n=groups * 256, want=want.ravel()
        )
    raise KeyError(name)


def lds_dispatch(name: str, small: bool = False):
    """(mem, cfg, output address, output bytes, native spec) of lds.cl's ``name``, as the other
    bench dispatches; the native spec carries the NumPy reference (``want``)."""
    import wavelift

    c = lds_case(name, small)
    cat = Catch()
    dev = wavelift.Device("gfx1030", execute=cat)
    k = dev.load_code_object(str(ROOT / "bench" / "kernels" / "lds-gfx1030-O2-w32.hsaco")).kernel(name)
    bufs = [dev.upload(a) for a in c["inputs"]]
    out = dev.upload(np.zeros(c["out_n"], np.uint32))
    k.launch(groups=c["groups"], block=c["block"], args=[*bufs, out, *c["scalars"]])
    mem, cfg = cat.got[0]
    grid = tuple(c["groups"]) + (1,) * (2 - len(c["groups"]))
    block = tuple(c["block"]) + (1,) * (2 - len(c["block"]))
    native = dict(
        fn=name,
        grid=grid,
        block=block,
        inputs=c["inputs"],
        out_n=c["out_n"],
        scalars=c["scalars"],
        tolerance=0,
        want=c["want"],
    )
    return mem, cfg, out.address, 4 * c["out_n"], native


_NATIVE = {}


def native_module(arch):
    if "m" not in _NATIVE:
        import cupy

        src = (ROOT / "bench" / "kernels" / "native.cu").read_text()
        t = time.perf_counter()
        from wavelift.backends.cuda import compile as C

        nv = C._nvrtc()
        res = nv.nvrtcCreateProgram(src.encode(), b"native.cu", 0, [], [])
        prog = res[1]
        opts = [f"-arch={arch}".encode(), b"-default-device"]
        C._check(nv, nv.nvrtcCompileProgram(prog, len(opts), opts), "native compile", prog)
        _, size = nv.nvrtcGetCUBINSize(prog)
        buf = bytearray(size)  # (NVRTC writes into it: never an immutable bytes object)
        nv.nvrtcGetCUBIN(prog, buf)
        m = cupy.cuda.function.Module()
        m.load(bytes(buf))
        _NATIVE["m"] = m
        _NATIVE["compile_s"] = time.perf_counter() - t
    return _NATIVE["m"]


def run_native(spec, arch, repeat):
    import cupy

    fn = native_module(arch).get_function(spec["fn"])
    ins = [cupy.asarray(a) for a in spec["inputs"]]
    out = cupy.zeros(spec["out_n"], cupy.uint32)
    args = tuple(ins) + (out,) + tuple(spec["scalars"])
    fn(spec["grid"], spec["block"], args)  # warm-up (and the output compared)
    s, e = cupy.cuda.Event(), cupy.cuda.Event()
    reps = max(repeat, 1) * 10
    s.record()
    for _ in range(reps):  # back to back: no host latency counted
        fn(spec["grid"], spec["block"], args)
    e.record()
    e.synchronize()
    return cupy.cuda.get_elapsed_time(s, e) / 1000.0 / reps, out.get()


def bench_one(name, make, args, arch):
    from test_cuda_backend import translate_dispatch

    from wavelift.backends.cuda import build_module
    from wavelift.run.execute import execute_dispatch, module_key

    log(f"\n-- {name}")
    mem, cfg, out_addr, out_bytes, native = make()
    row = dict(name=name, groups=list(cfg.num_groups), block=list(cfg.block), wave=cfg.wave_size)
    # compile times: cold NVRTC into a fresh disk cache, then from disk, then from memory
    prog, base = translate_dispatch(mem, cfg)
    key = module_key(prog, cfg, "lane", "cuda")
    os.environ["WAVELIFT_CUDA_CACHE"] = tempfile.mkdtemp(prefix="wl-bench-cache-")
    t = time.perf_counter()
    first = build_module(key, prog, cfg, "lane", arch=arch, base_address=base)
    row["compile_cold_s"] = time.perf_counter() - t
    if first.upgrade is not None:  # a big module's fast first tier (compile.tiered_compile)
        first.upgrade.wait()
        row["compile_upgrade_s"] = time.perf_counter() - t
    t = time.perf_counter()
    mod2 = build_module(key, prog, cfg, "lane", arch=arch, base_address=base)
    row["compile_disk_s"] = time.perf_counter() - t
    assert mod2.compiled_by == "disk"
    cache = {}
    t = time.perf_counter()
    m = copy.deepcopy(mem)
    r = execute_dispatch(m, cfg, backend="cuda", mode="lane", cache=cache)
    row["first_dispatch_s"] = time.perf_counter() - t
    # the module's first dispatch runs without window guesses (codegen.guesses): its kernel time
    row["first_kernel_s"] = r.stats.get("device_time_s")
    if r.refusal:
        row["cuda"] = str(r.refusal)
        log(f"   CUDA refused: {r.refusal}")
        REPORT["bench"].append(row)
        return
    cu_out = np.frombuffer(m.read(out_addr, out_bytes), np.uint32).copy()
    dev_best, wall_best = None, None
    os.environ["WAVELIFT_CUDA_TIMING_REPEAT"] = str(max(args.repeat, 1) * 10)
    # the same timing with the module's window guesses withheld (device hints only, as in a
    # module's first dispatch once its first blocks ran): what the guesses and mirrors buy
    try:
        for mod in cache.values():
            if hasattr(mod, "hints"):
                mod.hints = None
        r0 = execute_dispatch(copy.deepcopy(mem), cfg, backend="cuda", mode="lane", cache=cache)
        row["no_guess_kernel_s"] = r0.stats.get("device_time_s")
    except Exception as e:  # noqa: BLE001 - a missing column, not a lost row
        log(f"   (no-guess timing failed: {type(e).__name__}: {e})")
    m = copy.deepcopy(mem)
    r = execute_dispatch(m, cfg, backend="cuda", mode="lane", cache=cache)
    os.environ.pop("WAVELIFT_CUDA_TIMING_REPEAT", None)
    dev_best = r.stats.get("device_time_s")
    for _ in range(args.repeat):
        m = copy.deepcopy(mem)
        t = time.perf_counter()
        r = execute_dispatch(m, cfg, backend="cuda", mode="lane", cache=cache)
        w = time.perf_counter() - t
        wall_best = w if wall_best is None else min(wall_best, w)
    row["compile_memory_hit"] = bool(r.stats.get("module_cache_hit"))
    row.update(
        cuda_kernel_s=dev_best, cuda_dispatch_s=wall_best, lane_instructions=r.stats.get("lane_instructions")
    )
    nat_s, nat_out = guarded(f"{name} native")(run_native)(native, arch, args.repeat) or (None, None)
    row["native_kernel_s"] = nat_s
    if nat_out is not None:
        diff = np.abs(nat_out.astype(np.int64) - cu_out.astype(np.int64))
        if native["tolerance"]:
            b = np.stack([(nat_out >> s) & 255 for s in (0, 8, 16, 24)]).astype(np.int64) - np.stack(
                [(cu_out >> s) & 255 for s in (0, 8, 16, 24)]
            ).astype(np.int64)
            row["native_agrees"] = bool(np.abs(b).max() <= native["tolerance"])
        else:
            row["native_agrees"] = bool(diff.max() == 0)
    if "want" in native:  # (a NumPy reference: both sides checked against it)
        row["cuda_equals_reference"] = bool(np.array_equal(cu_out, native["want"]))
        row["native_equals_reference"] = nat_out is not None and bool(np.array_equal(nat_out, native["want"]))
        log(f"   reference: CUDA {row['cuda_equals_reference']}, native {row['native_equals_reference']}")
    if nat_s:
        row["translated_over_native"] = dev_best / nat_s
    if not args.skip_numpy and time.perf_counter() - T0 < args.time_limit + 120:
        m = copy.deepcopy(mem)
        t = time.perf_counter()
        rn = execute_dispatch(m, cfg, backend="numpy", mode="lane", cache={})
        row["numpy_dispatch_s"] = time.perf_counter() - t
        if rn.refusal is None:
            np_out = np.frombuffer(m.read(out_addr, out_bytes), np.uint32)
            row["numpy_equal"] = bool(np.array_equal(np_out, cu_out))
            row["cuda_over_numpy"] = wall_best / row["numpy_dispatch_s"]
        else:
            row["numpy"] = str(rn.refusal)
    REPORT["bench"].append(row)
    f = lambda v, fmt: "-" if v is None else format(v, fmt)  # noqa: E731
    fk, ng = row.get("first_kernel_s"), row.get("no_guess_kernel_s")
    log(
        f"   kernel: translated {f(dev_best * 1e3 if dev_best else None, '.3f')} ms, native "
        f"{f(nat_s * 1e3 if nat_s else None, '.3f')} ms -> translated/native "
        f"{f(row.get('translated_over_native'), '.2f')}x (agrees: {row.get('native_agrees')}); "
        f"without window guesses {f(ng * 1e3 if ng else None, '.3f')} ms "
        f"({f(ng / nat_s if ng and nat_s else None, '.2f')}x); the module's first launch "
        f"{f(fk * 1e3 if fk else None, '.3f')} ms"
    )
    log(
        f"   dispatch (trace+upload+run+download+land): CUDA {f(wall_best, '.4f')} s, NumPy lane "
        f"{f(row.get('numpy_dispatch_s'), '.3f')} s -> CUDA/NumPy {f(row.get('cuda_over_numpy'), '.4f')} "
        f"(outputs equal: {row.get('numpy_equal')})"
    )
    log(
        f"   module: cold NVRTC {row['compile_cold_s']:.2f} s, disk cache {row['compile_disk_s'] * 1e3:.1f} ms, "
        f"memory cache hit: {row['compile_memory_hit']}; first dispatch {row['first_dispatch_s']:.2f} s"
    )


def benchmarks(args, arch):
    log(
        "\n== (b) benchmarks (kernel times: mean of %d back-to-back launches, CUDA events; dispatch: best of %d) =="
        % (args.repeat * 10, args.repeat)
    )
    q = args.quick
    work = [
        (
            "fullscreen 1920x1080 shade (w32)",
            lambda: shade_dispatch(480, 272) if q else shade_dispatch(1920, 1080),
        ),
        (
            "full-screen 1920x1080 vadd f32 (w32, clang)",
            lambda: vadd_dispatch(1920 * 1088 // (16 if q else 1)),
        ),
        (
            "full-screen 1920x1080 vadd f32 (w64, clang)",
            lambda: vadd_dispatch(1920 * 1088 // (16 if q else 1), 64),
        ),
        ("divergent loop collatz 65536 (w32)", lambda: collatz_dispatch(8192 if q else 65536)),
        (
            "scratch game 240x135 groups of 8x8 (w64)",
            lambda: scratch_game_dispatch((60, 34) if q else (240, 135), (60 if q else 240) * 8, 64),
        ),
        (
            "scratch game 32400 groups (w64)",
            lambda: scratch_game_dispatch((4000 if q else 32400, 1), (4000 if q else 32400) * 8, 64),
        ),
    ]
    # LDS and barriers (bench/kernels/lds.cl; results against NumPy references too)
    work += [(f"lds.cl {k} (w32)", lambda k=k: lds_dispatch(k, small=q)) for k in LDS_KERNELS]
    if (ROOT / "tests/fixtures/gfx1030/aco/scratch_game-w32.json").exists():
        work.append(
            (
                "scratch game 240x135 groups of 8x8 (w32)",
                lambda: scratch_game_dispatch(
                    (60, 34) if q else (240, 135), (60 if q else 240) * 8, 64, wave=32
                ),
            )
        )
    for name, make in work:
        if args.only and not picked(args, name):
            continue
        guarded(f"bench {name}")(bench_one)(name, make, args, arch)
    if "compile_s" in _NATIVE:
        REPORT["compile"]["native_module_s"] = _NATIVE["compile_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--only",
        default="",
        help="run only the items whose name holds one of these comma-separated substrings",
    )
    ap.add_argument("--skip-fixtures", action="store_true")
    ap.add_argument("--skip-bench", action="store_true")
    ap.add_argument("--skip-numpy", action="store_true", help="no NumPy runs in the benchmarks")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=max(1, min(12, (os.cpu_count() or 2) - 2)))
    ap.add_argument(
        "--time-limit",
        type=float,
        default=300.0,
        help="seconds after which no new fixture item starts (the bench still runs)",
    )
    ap.add_argument(
        "--scratch-dispatches",
        default="",
        metavar="FILE",
        help="load the scratch-test dispatches from FILE (gzipped pickle); when FILE does "
        "not exist, record them into it (and, without CUDA, stop there)",
    )
    args = ap.parse_args()
    global SCRATCH_FILE
    SCRATCH_FILE = args.scratch_dispatches or None
    from wavelift.backends import cuda

    if SCRATCH_FILE and not pathlib.Path(SCRATCH_FILE).exists() and cuda.available() is not True:
        scratch_test_dispatches()
        return 0
    ok = cuda.available()
    REPORT["available"] = ok
    if ok is not True:
        log(f"CUDA backend unavailable: {ok}")
        _write()
        return 2
    arch = cuda.device_arch()
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(0)
    from wavelift.backends.cuda.compile import nvrtc_version

    REPORT["device"] = dict(
        name=props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
        arch=arch,
        nvrtc=nvrtc_version(),
        cupy=cupy.__version__,
    )
    log(f"device: {REPORT['device']}")
    # the fixture workers (NVRTC + the NumPy half, CPU only) start first and run while the
    # benchmarks use the GPU; the NumPy timings of the benchmarks share the CPU with them
    fx = None if args.skip_fixtures else guarded("fixtures")(start_fixtures)(args, arch)
    if not args.skip_bench:
        guarded("benchmarks")(benchmarks)(args, arch)
    if fx:
        guarded("fixtures")(finish_fixtures)(fx, args)
    REPORT["total_s"] = time.perf_counter() - T0
    log(f"\nerrors: {len(REPORT['errors'])}; total {REPORT['total_s']:.0f} s")
    _write()
    return 0


def _write():
    out = os.environ.get("OUT")
    if out:
        p = pathlib.Path(out) / "gpu_check.json"
        p.write_text(json.dumps(REPORT, indent=1, default=str))
        log(f"wrote {p}")


if __name__ == "__main__":
    sys.exit(main())
