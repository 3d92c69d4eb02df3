#!/usr/bin/env python3
"""One script for an NVIDIA machine: the CUDA backend checked against NumPy lane mode, and timed
against the same kernels written natively in CUDA.

    python bench/gpu_check.py [--only PATTERN] [--skip-fixtures] [--skip-bench] [--quick]
                              [--jobs N] [--time-limit S] [--repeat N]
                              [--scratch-dispatches FILE] [--prepare DIR [--arch sm_90] | --prepared DIR]

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

The fixtures' CPU half can run on another machine, so that a GPU call runs only the CUDA half
(a full check in one 10-minute call): `--prepare DIR` (no GPU; --jobs defaults to every core)
builds every module for `--arch` (default sm_90, the H100's and H200's; the optimising builds,
and each module's lean sibling where WAVELIFT_CUDA_PROVED=lean) into a fresh disk cache and runs
NumPy (without its native tier), and writes DIR: prepared.json.gz (the manifest -- git HEAD and a digest of wavelift/, arch,
NVRTC/NumPy versions, WAVELIFT_ settings -- and per dispatch its input digest, modes and NumPy
summary, guest memory as SHA-256s per range and per 64 KiB chunk; basic.cl's atomics items keep
their bytes for the race check), cuda-cache.tar.xz (the disk cache) and
scratch_dispatches.pkl.gz (the scratch tests' dispatches; --scratch-dispatches FILE instead where
given).  `--prepared DIR` then runs no workers: the cache is unpacked into a fresh private
directory (DIR's cubins run as code: use a DIR you made), each dispatch's CUDA result is compared
with DIR's summary by the same comparison as the live path's (a memory difference names the range
and the 64 KiB chunk), and what DIR lacks or has with other inputs is reported ("unprepared"),
as are a DIR made by other code, arch, versions or settings (warnings; the generation entries of
DIR are used where wavelift/ is the same by content).  Prepare and run under the same
WAVELIFT_ settings: they are in the module keys.

Every item is guarded: a failure prints and the script goes on.  Results go to stdout and, when
$OUT is set, to $OUT/gpu_check.json.  Exit 0 when it ran (read the table), 2 without a GPU.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import copy
import io
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


def collect_items(args) -> list:
    """Every fixture dispatch as (name, memory, config), --only's."""
    import fixture_dispatches as F

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
    return items


def dispatch_modes(mem, cfg) -> tuple:
    """The modes a dispatch is compared in: lane, and wave where its program uses scratch."""
    return _translated(mem, cfg)[2]


def _translated(mem, cfg) -> tuple:
    """(program, the address its code was read from, the modes it is compared in); (None, None,
    ("lane",)) where the translation refuses it (both backends refuse)."""
    from test_cuda_backend import translate_dispatch

    try:
        prog, base = translate_dispatch(mem, cfg)
    except Exception:  # noqa: BLE001 - refused translation: both backends refuse
        return None, None, ("lane",)
    return prog, base, ("lane", "wave") if prog.uses_scratch else ("lane",)


def _precompile_one(job):
    """In a worker process: the CPU half of one dispatch -- its CUDA modules compiled (cold
    NVRTC into the shared disk cache) and NumPy lane/wave mode run on a copy of its memory.
    ``job["prepare"]`` (--prepare): the optimising builds only (WAVELIFT_CUDA_TIER=off: the disk
    holds those, a fast build is lost with the process), NumPy without its native tier
    (WAVELIFT_NATIVE=off), each module's lean sibling too
    (_build_lean), the NumPy memory as digests (_stored_memory; bytes kept where
    ``keep_bytes``: the atomics race check reads them), and the modes found here where
    ``job["modes"]`` is None.  -> per mode a dict: mode, compile_s, compiled_by, lean, numpy_s,
    summary (_summary)."""
    mem, cfg, arch, prepare = job["mem"], job["cfg"], job["arch"], job["prepare"]
    os.environ["WAVELIFT_CUDA_CACHE"] = job["cache"]
    if prepare:
        os.environ["WAVELIFT_CUDA_TIER"] = "off"
        # (the NumPy backend itself: under `auto` it compiles native-tier libraries in the
        # background, minutes of clang -O3 each on a small machine, for later runs)
        os.environ["WAVELIFT_NATIVE"] = "off"
    from wavelift.backends.cuda import build_module
    from wavelift.run.execute import execute_dispatch, module_key

    out = []
    prog, base, modes = _translated(mem, cfg)
    if prepare:
        _track_cache_entries(job["cache"])
    for m in job["modes"] or modes:
        secs = how = lean = None
        if prepare:
            _USED.clear()
        if prog is not None:
            mod = build_module(module_key(prog, cfg, m, "cuda"), prog, cfg, m, arch=arch, base_address=base)
            secs, how = mod.compile_s, mod.compiled_by
            if prepare:
                lean = _build_lean(mod)
        m1 = copy.deepcopy(mem)
        t = time.perf_counter()
        r1 = execute_dispatch(m1, cfg, backend="numpy", mode=m, cache={})
        numpy_s = time.perf_counter() - t  # (the run alone: before its memory is digested)
        s = _summary(r1, m1)
        r = dict(mode=m, compile_s=secs, compiled_by=how, lean=lean, numpy_s=numpy_s, summary=s)
        if prepare:
            s["memory"] = _stored_memory(s["memory"], job["keep_bytes"])
            r["entries"] = sorted(_USED)
        out.append(r)
    return out


_USED: set = set()  # (a --prepare worker's: the disk-cache entries the mode's builds used)
_TRACKED: list = []  # (the cache whose entries go into _USED, once tracking is installed)


def _track_cache_entries(cache: str):
    """In a --prepare worker: the name of each entry of the disk cache ``cache`` read or written
    (backends/disk_cache.py's read_digest and write) goes into _USED, so that DIR's archive holds
    the entries this run used where its cache was seeded with a previous run's (prepare)."""
    if _TRACKED:
        _TRACKED[0] = os.path.abspath(cache)
        return
    _TRACKED.append(os.path.abspath(cache))
    from wavelift.backends import disk_cache as D

    read_digest, write = D.read_digest, D.write

    def tracked_read(d, name, suffix):
        got = read_digest(d, name, suffix)
        if got is not None and os.path.abspath(d) == _TRACKED[0]:
            _USED.add(name)
        return got

    def tracked_write(d, name, suffix, data):
        if os.path.abspath(d) == _TRACKED[0]:
            _USED.add(name)
        return write(d, name, suffix, data)

    D.read_digest, D.write = tracked_read, tracked_write


def _guard_precompile(job):
    try:
        return _precompile_one(job)
    except Exception as e:  # noqa: BLE001
        return f"worker: {type(e).__name__}: {str(e)[:500]}"


def _build_lean(mod):
    """``mod``'s lean sibling (Module.variant's proved build, decision 0049's amendment h148) built
    into the disk cache, for a module the CUDA half may launch it for: WAVELIFT_CUDA_PROVED=lean
    and each access slot with a guess (runtime._lean_hints; whether the dispatch runs in place is
    known only on the GPU) -> [seconds, how], or None (not launched: not built)."""
    from wavelift.backends.cuda.codegen import MAX_GUESSES, proved_lean

    if not proved_lean() or not 0 < len(mod.slots) <= MAX_GUESSES:
        return None
    sib = mod.variant(True, None, proved=True)
    if sib.upgrade is not None:  # (a background build: the disk gets it when it is done)
        sib.upgrade.wait()
    return [sib.compile_s, sib.compiled_by]


def _plain(v):
    """JSON of a NumPy scalar (the stats hold some)."""
    if hasattr(v, "item"):
        return v.item()
    raise TypeError(f"{type(v).__name__} in a dispatch summary")


def _summary(r, mem):
    """What the comparison looks at, picklable: outcome, escapes, spans, counters, memory -- all
    but the memory in the JSON form a prepared DIR stores, so that the live and the prepared
    comparisons see the same values."""
    s = dict(
        outcome="landed" if r.refusal is None else r.refusal.code,
        refusal=str(r.refusal),
        escapes=r.stats.get("escapes"),
        spans=list(r.write_spans or []),
        stats={k: r.stats.get(k) for k in ("instructions", "lane_instructions", "waves")},
    )
    s = json.loads(json.dumps(s, default=_plain))
    s["memory"] = [(_range_name(x), bytes(x.data)) for x in mem]
    return s


def _range_name(x) -> str:
    """A memory range's name, the tree's place left out (a code object's range is named by its
    path: another copy of the tree, on the GPU machine, names it alike)."""
    return (x.name or hex(x.base)).replace(str(ROOT) + os.sep, "")


# ---- guest memory by digest (--prepare's results: a difference still names the range and chunk)
CHUNK = 64 << 10


def _range_digest(name: str, data: bytes, keep_bytes: bool = False) -> dict:
    """One memory range as --prepare stores it: name, size, SHA-256 of the whole and of each
    CHUNK; with ``keep_bytes`` the bytes too (base64)."""
    import base64
    import hashlib

    mv = memoryview(data)
    d = dict(
        name=name,
        size=len(data),
        sha256=hashlib.sha256(mv).hexdigest(),
        chunks=[hashlib.sha256(mv[i : i + CHUNK]).hexdigest() for i in range(0, len(data), CHUNK)],
    )
    if keep_bytes:
        d["data"] = base64.b64encode(data).decode()
    return d


def _stored_memory(memory, keep_bytes: bool) -> list:
    return [_range_digest(name, data, keep_bytes) for name, data in memory]


def _range(e) -> tuple:
    """A summary's memory entry -> (name, its bytes or None: digests only)."""
    if isinstance(e, dict):
        if "data" not in e:
            return e["name"], None
        import base64

        return e["name"], base64.b64decode(e["data"])
    return e[0], e[1]


def _memdiff(a, b):
    """The first difference between two summaries' memory (NumPy's ``a``, CUDA's ``b``), each
    range as bytes or as digests (_range_digest), or None: equal.  Bytes on both sides: the
    first differing byte and how many differ; else by digest: the first differing chunk and how
    many do."""
    na, nb = [_range(e)[0] for e in a], [_range(e)[0] for e in b]
    if na != nb:
        return (
            f"memory ranges differ: numpy only {[n for n in na if n not in nb]}, "
            f"cuda only {[n for n in nb if n not in na]}" + ("" if set(na) ^ set(nb) else " (other order)")
        )
    for ea, eb in zip(a, b):
        name, bx = _range(ea)
        _, by = _range(eb)
        if bx is not None and by is not None:
            if bx == by:
                continue
            if len(bx) != len(by):
                return f"{name}: {len(bx)} vs {len(by)} bytes"
            d = np.flatnonzero(np.frombuffer(bx, np.uint8) != np.frombuffer(by, np.uint8))
            return f"{name}+{int(d[0]):#x} ({d.size} bytes differ)"
        da = ea if isinstance(ea, dict) else _range_digest(name, bx)
        db = eb if isinstance(eb, dict) else _range_digest(name, by)
        if da["size"] != db["size"]:
            return f"{name}: {da['size']} vs {db['size']} bytes"
        if da["sha256"] == db["sha256"]:
            continue
        bad = [i for i, (x, y) in enumerate(zip(da["chunks"], db["chunks"])) if x != y]
        if not bad:  # (the chunks agree, the whole does not: a damaged record)
            return f"{name}: its SHA-256 differs, no chunk's does"
        return (
            f"{name} chunk {bad[0]} (+{bad[0] * CHUNK:#x}) differs "
            f"({len(bad)} of {len(da['chunks'])} 64 KiB chunks differ)"
        )
    return None


def compare(n, cfg, s1, s2) -> tuple[str, str]:
    """NumPy's summary ``s1`` against CUDA's ``s2`` of dispatch ``n`` -> (match: equal | race-ok |
    DIFFERENT, why): outcome (the refusal's code), escapes and, where both landed, write spans, the three
    stats and every byte of memory (by digest where a side has only digests).  The one
    comparison of the live (--jobs workers) and the prepared (--prepared DIR) paths."""
    why = []
    if s1["outcome"] != s2["outcome"]:
        why.append(f"numpy: {s1['refusal']} | cuda: {s2['refusal']}"[:300])
    if s1["escapes"] != s2["escapes"]:
        why.append(f"escapes {s1['escapes']} vs {s2['escapes']}")
    if s1["outcome"] == s2["outcome"] == "landed":
        if s1["spans"] != s2["spans"]:
            why.append(f"write spans differ ({len(s1['spans'])} vs {len(s2['spans'])})")
        for k, v in s1["stats"].items():
            if v != s2["stats"].get(k):
                why.append(f"{k} {v} vs {s2['stats'].get(k)}")
        d = _memdiff(s1["memory"], s2["memory"])
        if d and ":atomics:" in n and not why:
            d = _atomics_race(n, cfg, s1["memory"], s2["memory"])
            if d is None:
                return (
                    "race-ok",
                    "atomic_xchg/cmpxchg order differs (as on hardware); "
                    "order-independent results equal, invariants hold",
                )
        if d:
            why.append("memory: " + d)
    return ("DIFFERENT" if why else "equal"), "; ".join(why)


def _one_fixture(n, mem, cfg, mode, s1, t1, execute_dispatch):
    """The CUDA half of one dispatch in one mode, compared with NumPy's summary ``s1``."""
    m2 = copy.deepcopy(mem)
    t = time.perf_counter()
    r2 = execute_dispatch(m2, cfg, backend="cuda", mode=mode, cache={})
    t2 = time.perf_counter() - t
    s2 = _summary(r2, m2)
    match, why = compare(n, cfg, s1, s2)
    return dict(
        name=n,
        mode=mode,
        numpy=s1["outcome"],
        cuda=s2["outcome"],
        match=match,
        why=why,
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
    d = _memdiff([m for m in mem1 if _range(m)[0] not in racy], [m for m in mem2 if _range(m)[0] not in racy])
    if d:
        return d
    shape = n.rsplit(":", 1)[1]
    case = next(c for c in C.cases_for("atomics", cfg.wave_size) if c.shape.name == shape)
    got1, got2 = dict(map(_range, mem1)), dict(map(_range, mem2))
    if any(got[k] is None for got in (got1, got2) for k in racy):
        return "atomics: the NumPy bytes were not kept (prepared without them)"
    arr = lambda got, k: np.frombuffer(got[k], np.int32)  # noqa: E731
    try:
        C.compare_atomics(
            case,
            {"counters": arr(got1, "counters")},
            {"counters": arr(got2, "counters"), "old": arr(got2, "old")},
            {},
        )
    except AssertionError as e:
        return f"atomics: {str(e)[:300]}"
    return None


# ---- the CPU half on one machine, the CUDA half on another (--prepare DIR, --prepared DIR)
PREPARED = "prepared.json.gz"  # the manifest and every item's CPU half
CACHE_ARCHIVE = "cuda-cache.tar.xz"  # the disk cache the workers built (WAVELIFT_CUDA_CACHE)
SCRATCH_NAME = "scratch_dispatches.pkl.gz"  # the scratch tests' dispatches (--scratch-dispatches)
PREPARED_VERSION = 1


def _item_keys(items) -> list[str]:
    """Each item's name, made unique (a repeated name gets ' [k]')."""
    seen: dict = {}
    keys = []
    for n, _m, _c in items:
        seen[n] = seen.get(n, 0) + 1
        keys.append(n if seen[n] == 1 else f"{n} [{seen[n]}]")
    return keys


def _input_digest(mem, cfg) -> str:
    """SHA-256 of a dispatch's config and memory before it runs: a prepared item is the same
    dispatch only where this matches."""
    import hashlib

    h = hashlib.sha256(repr(cfg).encode())
    for x in mem:
        h.update(f"\0{_range_name(x)}\0{x.base}\0{len(x.data)}\0".encode())
        h.update(memoryview(x.data))
    return h.hexdigest()


def _code_digest() -> str:
    """SHA-256 over every file of wavelift/ (path and content) but build outputs: the code both
    halves ran."""
    import hashlib

    h = hashlib.sha256()
    pkg = ROOT / "wavelift"
    for p in sorted(pkg.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".so", ".o"):
            h.update(f"{p.relative_to(ROOT)}\0".encode())
            h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def _git_state() -> str | None:
    """HEAD, '+dirty' where a tracked file differs from it; None without git."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def _settings_env() -> dict:
    """The WAVELIFT_ settings this process runs with, but the cache's place and the build tier
    (neither changes a module key, a module's source or its cubin)."""
    return {
        k: v
        for k, v in sorted(os.environ.items())
        if k.startswith("WAVELIFT_") and k not in ("WAVELIFT_CUDA_CACHE", "WAVELIFT_CUDA_TIER")
    }


def _versions() -> dict:
    from wavelift.backends.cuda.compile import nvrtc_version

    return dict(nvrtc=nvrtc_version(), numpy=np.__version__, python=sys.version.split()[0])


def prepare(args) -> int:
    """--prepare DIR: the CPU half of every fixture item (--jobs worker processes: the modules
    built for --arch into a fresh disk cache, lean siblings included, and NumPy run), written
    into DIR: PREPARED (the manifest, and per item its modes' compile records and NumPy
    summaries, memory as digests), CACHE_ARCHIVE (the disk cache) and SCRATCH_NAME (unless
    --scratch-dispatches names another file).  No GPU needed."""
    import gzip
    import tarfile

    from wavelift.backends.cuda import stored
    from wavelift.backends.cuda.compile import DEFAULT_ARCH
    from wavelift.backends.disk_cache import private_temp

    t0 = time.perf_counter()
    d = pathlib.Path(args.prepare)
    d.mkdir(parents=True, exist_ok=True)
    arch = args.arch or DEFAULT_ARCH
    if SCRATCH_FILE == str(d / SCRATCH_NAME) and not args.scratch_dispatches:
        (d / SCRATCH_NAME).unlink(missing_ok=True)  # (DIR's own: recorded anew)
    items = collect_items(args)
    keys = _item_keys(items)
    tmp = private_temp("wl-prepare-cache-")
    if (d / CACHE_ARCHIVE).exists():  # (a module built before is not built again: its entry
        # names hold everything its build depends on, compile.disk_name and stored.entry_name)
        n = _unpack_cache(d / CACHE_ARCHIVE, pathlib.Path(tmp.name))
        log(f"(prepare: the cache seeded with {n} files of {d / CACHE_ARCHIVE})")
    jobs = [
        dict(
            mem=m,
            cfg=c,
            modes=None,  # (the worker's translation finds them)
            arch=arch,
            cache=tmp.name,
            prepare=True,
            keep_bytes=":atomics:" in n,
        )
        for n, m, c in items
    ]
    by = f"handed to {args.jobs} worker processes" if args.jobs else "in this process"
    log(f"(prepare: {len(items)} dispatches for {arch} {by})")
    if args.jobs:
        ex = cf.ProcessPoolExecutor(
            max_workers=args.jobs, mp_context=__import__("multiprocessing").get_context("spawn")
        )
        futs = {ex.submit(_guard_precompile, j): k for j, k in zip(jobs, keys)}
        got = ((futs[f], _died(f) or f.result()) for f in cf.as_completed(futs))
    else:  # (--jobs 0: in this process, one after the other)
        got = ((k, _guard_precompile(j)) for j, k in zip(jobs, keys))
    records: dict = {}
    inputs = {k: _input_digest(m, c) for k, (_n, m, c) in zip(keys, items)}
    partial = d / "prepared.partial.jsonl"  # (as they come: a long run cut off keeps what it did)
    with partial.open("w") as pf:
        for done, (k, res) in enumerate(got, 1):
            rec: dict = dict(name=k, input=inputs[k])
            if isinstance(res, str):
                rec["error"] = res
                what = "ERROR " + res[:200]
            else:
                rec["modes"] = res
                what = " ".join(
                    f"{r['mode']}:{r['summary']['outcome']} build {r['compile_s'] or 0:.1f}s {r['compiled_by']}"
                    + (f" lean {r['lean'][0]:.1f}s {r['lean'][1]}" if r["lean"] else "")
                    + f" numpy {r['numpy_s']:.2f}s"
                    for r in res
                )
            records[k] = rec
            pf.write(json.dumps(rec) + "\n")
            pf.flush()
            log(f"   [{done}/{len(jobs)} {time.perf_counter() - t0:6.0f}s] {k[:70]:70s} {what}")
    if args.jobs:
        ex.shutdown()
    man = dict(
        version=PREPARED_VERSION,
        made=time.strftime("%Y-%m-%d %H:%M:%S"),
        git=_git_state(),
        code=_code_digest(),
        stored_code=stored.code_fingerprint(),
        arch=arch,
        versions=_versions(),
        settings=_settings_env(),
        only=args.only,
        scratch=str(pathlib.Path(SCRATCH_FILE).resolve()) if SCRATCH_FILE else None,
        prepare_s=time.perf_counter() - t0,
        items=[records[k] for k in keys],
    )
    (d / PREPARED).write_bytes(gzip.compress(json.dumps(man).encode(), 9))
    # the cache as one archive of the files of the entries this run used (_cache_entry)
    used = {e for r in records.values() for m in r.get("modes", ()) for e in m["entries"]}
    t = time.perf_counter()
    raw = 0
    new = d / (CACHE_ARCHIVE + ".new")
    with tarfile.open(new, "w:xz", preset=6) as tar:
        for p in sorted(pathlib.Path(tmp.name).iterdir()):
            if p.is_file() and not p.name.startswith(".") and _cache_entry(p.name) in used:
                raw += p.stat().st_size
                tar.add(p, arcname=p.name)
    new.replace(d / CACHE_ARCHIVE)
    tmp.cleanup()
    partial.unlink()
    errors = sum("error" in r for r in records.values())
    rows = sum(len(r.get("modes", ())) for r in records.values())
    sizes = {p.name: p.stat().st_size for p in sorted(d.iterdir()) if p.is_file()}
    log(
        f"\nprepared {len(items)} dispatches ({rows} rows, {errors} errors) in "
        f"{time.perf_counter() - t0:.0f} s into {d}: "
        + ", ".join(f"{k} {v / 2**20:.1f} MiB" for k, v in sizes.items())
        + f"; the cache {raw / 2**20:.1f} MiB before compression ({time.perf_counter() - t:.0f} s); "
        f"all {sum(sizes.values()) / 2**20:.1f} MiB"
    )
    return 0


def _cache_entry(filename: str) -> str:
    """The disk-cache entry a file of the cache belongs to (disk_cache's flat naming:
    <name>.sha256 and <name>-<digest[:16]><suffix>)."""
    return filename[: -len(".sha256")] if filename.endswith(".sha256") else filename.rsplit("-", 1)[0]


def _unpack_cache(archive: pathlib.Path, cache: pathlib.Path) -> int:
    """CACHE_ARCHIVE's files written into the private directory ``cache`` by this process
    (disk_cache's rules: files of this user that nobody else may write; each entry is checked
    against its digest when read) -> how many."""
    import tarfile

    from wavelift.backends import disk_cache

    n = 0
    with tarfile.open(archive, "r:xz") as tar:
        for mem in tar:
            name = pathlib.PurePosixPath(mem.name).name
            f = tar.extractfile(mem) if mem.isfile() else None
            if f is None or name != mem.name or name.startswith("."):
                raise ValueError(f"{archive}: {mem.name!r} is not a cache entry")
            disk_cache.write_atomic(cache, name, f.read())
            n += 1
    return n


def split_prepared(args) -> int:
    """--split-prepared DIR --parts N: DIR (--prepare's) as N part DIRs, DIR/part-I-of-N, each a
    DIR of its own for --prepared: its share of the items (balanced by the cache bytes they use),
    the cache entries those use and the scratch dispatches among them.  A device call copies the
    tracked tree and the carried paths within 64 MiB together, so a whole DIR (52 MiB for every
    fixture) does not fit one; a part does.  No GPU, no build: the records are DIR's."""
    import gzip
    import pickle
    import tarfile

    d = pathlib.Path(args.split_prepared)
    n = args.parts
    man = json.loads(gzip.decompress((d / PREPARED).read_bytes()))
    if man.get("version") != PREPARED_VERSION or man.get("part"):
        raise SystemExit(f"{d}: not a whole prepared DIR of version {PREPARED_VERSION}")
    with tarfile.open(d / CACHE_ARCHIVE, "r:xz") as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]

    size: dict = {}
    for f, b in files.items():
        size[_cache_entry(f)] = size.get(_cache_entry(f), 0) + len(b)
    used = [{e for m in r.get("modes", ()) for e in m["entries"]} for r in man["items"]]
    # (largest first, each to the part holding the fewest bytes: an entry two items share counts
    # once in a part)
    parts: list = [([], set()) for _ in range(n)]
    for i in sorted(range(len(used)), key=lambda i: -sum(size.get(e, 0) for e in used[i])):
        got = min(parts, key=lambda p: sum(size.get(e, 0) for e in p[1] | used[i]))
        got[0].append(i)
        got[1].update(used[i])
    scratch = d / SCRATCH_NAME
    recorded = pickle.loads(gzip.decompress(scratch.read_bytes())) if scratch.exists() else []
    for k, (idx, entries) in enumerate(parts, 1):
        out = d / f"part-{k}-of-{n}"
        out.mkdir(exist_ok=True)
        items = [man["items"][i] for i in sorted(idx)]
        names = {r["name"] for r in items}
        pm = dict(man, items=items, part=f"{k}/{n}", scratch=str((out / SCRATCH_NAME).resolve()))
        (out / PREPARED).write_bytes(gzip.compress(json.dumps(pm).encode(), 9))
        with tarfile.open(out / CACHE_ARCHIVE, "w:xz", preset=6) as tar:
            for f in sorted(files):
                if _cache_entry(f) in entries:
                    info = tarfile.TarInfo(f)
                    info.size = len(files[f])
                    tar.addfile(info, io.BytesIO(files[f]))
        mine = [x for x in recorded if x[0] in names]
        (out / SCRATCH_NAME).write_bytes(gzip.compress(pickle.dumps(mine), 6))
        mib = sum(p.stat().st_size for p in out.iterdir()) / 2**20
        log(f"{out}: {len(items)} items ({len(mine)} of the scratch tests'), {mib:.1f} MiB")
    return 0


def _died(fut) -> str | None:
    """Why a worker process gave no result (it died: the pool is broken), else None."""
    e = fut.exception()
    return None if e is None else f"worker died: {type(e).__name__}: {str(e)[:300]}"


class Unprepared(str):
    """An item the prepared DIR has no CPU half for (the reason)."""


def _load_prepared(args, arch):
    """--prepared DIR: its manifest (warnings where it was made by other code, settings, arch or
    versions), its disk cache extracted into a fresh private directory (written by this user:
    disk_cache's rules; DIR's cubins run as code, so use a DIR you made) -> (manifest, the
    directory's TemporaryDirectory, a function that undoes the fingerprint's substitution)."""
    import gzip

    from wavelift.backends import disk_cache
    from wavelift.backends.cuda import stored

    d = pathlib.Path(args.prepared)
    man = json.loads(gzip.decompress((d / PREPARED).read_bytes()))
    if man.get("version") != PREPARED_VERSION:
        raise ValueError(f"{d / PREPARED}: version {man.get('version')}, not {PREPARED_VERSION}")
    warn = []
    same_code = man["code"] == _code_digest()
    if not same_code:
        warn.append(
            f"made by other code (wavelift/ differs: DIR's tree {man['git']}, this {_git_state()}): "
            "its NumPy halves may not be this code's"
        )
    if man["arch"] != arch:
        warn.append(f"built for {man['arch']}, this GPU is {arch}: every module compiles here")
    here = _versions()
    for k, v in man["versions"].items():
        if here.get(k) != v:
            warn.append(
                f"{k} {v} there, {here.get(k)} here"
                + (": every module compiles here" if k == "nvrtc" else "")
            )
    if man["settings"] != _settings_env():
        warn.append(
            f"settings differ: DIR's {man['settings']}, here {_settings_env()} (module keys may differ)"
        )
    for w in warn:
        log(f"WARNING: prepared DIR {d}: {w}")
    REPORT["prepared"] = dict(
        dir=str(d),
        git=man["git"],
        here_git=_git_state(),
        same_code=same_code,
        warnings=warn,
        made=man["made"],
    )
    tmp = disk_cache.private_temp("wl-prepared-cache-")
    cache = pathlib.Path(tmp.name)
    n = _unpack_cache(d / CACHE_ARCHIVE, cache)
    fingerprint = stored.code_fingerprint
    if same_code:
        # the generation entries are named by stored.code_fingerprint: path, size and mtime of
        # the code, which a copy of the tree need not keep; wavelift/ is the same by content,
        # so DIR's fingerprint names this code's entries too (else: each module is generated
        # again here and its cubin found by its source)
        stored.code_fingerprint = lambda: man["stored_code"]
    log(f"(prepared DIR {d}: made {man['made']} from {man['git']}; {n} cache files into {cache})")
    return man, tmp, lambda: setattr(stored, "code_fingerprint", fingerprint)


class _Builds:
    """Where the modules of the CUDA half came from: generation entries found, cubins read from
    the disk, NVRTC builds here (backends.cuda's _stored_build and _compile, counted)."""

    def __init__(self):
        import wavelift.backends.cuda as C

        self.stored = self.generated = self.disk = 0
        self.nvrtc: list = []
        stored_build, compile_ = C._stored_build, C._compile

        def counted_stored(*a):
            got = stored_build(*a)
            if got is None:
                self.generated += 1
            else:
                self.stored += 1
            return got

        def counted_compile(*a):
            got = compile_(*a)
            if got[2] == "disk":
                self.disk += 1
            else:
                self.nvrtc.append(got[1])
            return got

        C._stored_build, C._compile = counted_stored, counted_compile
        self.undo = lambda: setattr(C, "_stored_build", stored_build) or setattr(C, "_compile", compile_)

    def report(self) -> dict:
        return dict(
            stored=self.stored,
            generated=self.generated,
            cubin_disk=self.disk,
            nvrtc_here=len(self.nvrtc),
            nvrtc_here_s=sum(self.nvrtc),
        )


def start_fixtures(args, arch):
    """Collect every fixture dispatch and start its CPU half: live, each handed to a worker
    process, which compiles its CUDA modules (cold NVRTC into a fresh disk cache) and runs the
    NumPy half, while the benchmarks use the GPU; with --prepared DIR, read from DIR (no
    workers).  The GPU half runs in this process (finish_fixtures)."""
    items = collect_items(args)
    if args.prepared:
        man, tmp, restore = _load_prepared(args, arch)
        records = {r["name"]: r for r in man["items"]}
        keys = _item_keys(items)
        if man.get("part"):  # (a part DIR, --split-prepared's: its items only, the others' parts
            # run them; their keys as the whole collection makes them)
            mine = [i for i, k in enumerate(keys) if k in records]
            log(f"(prepared part {man['part']}: {len(mine)} of the {len(items)} items collected here)")
            items, keys = [items[i] for i in mine], [keys[i] for i in mine]
        inputs = [_input_digest(m, c) for _n, m, c in items]
        extra = sorted(set(records) - set(keys))
        extra = [k for k in extra if not args.only or picked(args, k)]
        if extra:
            log(f"WARNING: {len(extra)} prepared items are not collected here: {extra[:5]}")
            REPORT["prepared"]["not_collected"] = extra

        def result(i, left):
            if left <= 0:
                raise cf.TimeoutError
            r = records.get(keys[i])
            if r is None:
                return Unprepared("not in the prepared DIR")
            if r["input"] != inputs[i]:
                return Unprepared("its inputs differ from the prepared DIR's (fixtures changed since)")
            return r.get("error") or r["modes"]

        def modes(i):
            r = records.get(keys[i])
            return len(r["modes"]) if r and "modes" in r else 1

        builds = _Builds()

        def close():
            builds.undo()
            restore()
            tmp.cleanup()

        return dict(
            items=items,
            result=result,
            modes=modes,
            close=close,
            t=time.perf_counter(),
            cache=tmp.name,
            builds=builds,
        )
    cache_dir = tempfile.mkdtemp(prefix="wl-cuda-cache-")
    os.environ["WAVELIFT_CUDA_CACHE"] = cache_dir
    jobs = [
        dict(mem=m, cfg=c, modes=dispatch_modes(m, c), arch=arch, cache=cache_dir, prepare=False)
        for _n, m, c in items
    ]
    ex = cf.ProcessPoolExecutor(
        max_workers=max(args.jobs, 1), mp_context=__import__("multiprocessing").get_context("spawn")
    )
    futs = [ex.submit(_guard_precompile, j) for j in jobs]
    log(f"\n(fixtures: {len(items)} dispatches handed to {args.jobs} worker processes)")
    return dict(
        items=items,
        result=lambda i, left: futs[i].result(timeout=max(left, 0.1)),
        modes=lambda i: len(jobs[i]["modes"]),
        close=lambda: ex.shutdown(wait=False, cancel_futures=True),
        t=time.perf_counter(),
        cache=cache_dir,
        builds=None,
    )


def finish_fixtures(fx, args):
    from wavelift.run.execute import execute_dispatch

    items = fx["items"]
    os.environ["WAVELIFT_CUDA_CACHE"] = fx["cache"]  # the modules the workers compiled
    log(f"\n== (a) fixtures: {len(items)} dispatches, NumPy lane vs CUDA ==")
    log(f"   {'dispatch':58s} {'mode':4s} {'numpy':22s} {'cuda':22s} {'match':6s} {'np s':>7s} {'cu s':>7s}")
    counts = {"equal": 0, "race-ok": 0, "DIFFERENT": 0, "error": 0, "skipped": 0}
    if args.prepared:
        counts["unprepared"] = 0
    times = []
    for i, (n, m, c) in enumerate(items):
        left = args.time_limit - (time.perf_counter() - T0)
        try:
            res = fx["result"](i, left)
        except cf.TimeoutError:
            counts["skipped"] += fx["modes"](i)
            log(f"   {n[:58]:58s} SKIPPED (time limit; rerun with --only)")
            continue
        if isinstance(res, Unprepared):
            counts["unprepared"] += 1
            REPORT.setdefault("unprepared", []).append(dict(name=n, why=str(res)))
            log(f"   {n[:58]:58s} NOT PREPARED ({res})")
            continue
        if isinstance(res, str):
            REPORT["errors"].append(f"{n}: {res}")
            counts["error"] += 1
            log(f"   {n[:58]:58s} ERROR {res[:200]}")
            continue
        for r in res:
            if r["compiled_by"] == "nvrtc":
                times.append(r["compile_s"])
            mode = r["mode"]
            row = guarded(f"fixture {n} {mode}")(_one_fixture)(
                n, m, c, mode, r["summary"], r["numpy_s"], execute_dispatch
            )
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
    fx["close"]()
    if fx["builds"] is not None:  # (the compile times are the preparing machine's: not reported)
        got = fx["builds"].report()
        REPORT["prepared"]["builds"] = got
        log(
            f"   modules: {got['stored']} generation entries found, {got['generated']} generated here; "
            f"cubins from the prepared cache {got['cubin_disk']}, NVRTC here {got['nvrtc_here']} "
            f"({got['nvrtc_here_s']:.0f} s)"
        )
    elif times:
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


def parser() -> argparse.ArgumentParser:
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
    ap.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="worker processes for the CPU half (default: the cores less 2, at most 12; with "
        "--prepare, every core)",
    )
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
    ap.add_argument(
        "--prepare",
        default="",
        metavar="DIR",
        help="no GPU needed: run the fixtures' CPU half (modules built for --arch, NumPy) and "
        "write it into DIR for --prepared; then stop",
    )
    ap.add_argument(
        "--arch",
        default="",
        help="--prepare: the CUDA arch the modules are built for, as device_arch spells it "
        "(default sm_90: the H100's and H200's)",
    )
    ap.add_argument(
        "--split-prepared",
        default="",
        metavar="DIR",
        help="write DIR (--prepare's) as --parts part DIRs DIR/part-I-of-N for --prepared, each small "
        "enough to carry to a device call; then stop",
    )
    ap.add_argument("--parts", type=int, default=4, help="--split-prepared: how many parts")
    ap.add_argument(
        "--prepared",
        default="",
        metavar="DIR",
        help="the fixtures' CPU half from DIR (--prepare's): no worker processes, no NVRTC for "
        "the modules DIR's cache holds; only the CUDA half runs here",
    )
    return ap


def parse(argv=None):
    """The arguments, with what they leave to be worked out (the workers, the scratch file)."""
    args = parser().parse_args(argv)
    if args.prepare and args.prepared:
        parser().error("--prepare and --prepared exclude each other")
    if args.jobs is None:
        cores = os.cpu_count() or 2
        args.jobs = cores if args.prepare else max(1, min(12, cores - 2))
    global SCRATCH_FILE
    SCRATCH_FILE = args.scratch_dispatches or None
    if not SCRATCH_FILE and (args.prepare or args.prepared):
        # (DIR's recording: recorded by --prepare where llvm-mc-19 is, loaded by --prepared)
        SCRATCH_FILE = str(pathlib.Path(args.prepare or args.prepared) / SCRATCH_NAME)
    return args


def main(argv=None):
    args = parse(argv)
    if args.prepare:
        return prepare(args)
    if args.split_prepared:
        return split_prepared(args)
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
