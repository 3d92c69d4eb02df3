"""NVRTC compilation of generated modules, cached in memory (by the caller) and on disk.

NVRTC needs no GPU: `pip install 'wavelift[cuda]'` (cuda-bindings + nvidia-cuda-nvrtc-cu12)
compiles modules on any Linux machine, which is how CI checks code generation.  The disk cache
holds one cubin per module under ``$WAVELIFT_CUDA_CACHE`` or ``~/.cache/wavelift/cuda/`` named by
a hash of the module key (the same key as the NumPy backend's), the CUDA arch, the generated
source and NVRTC's version; a cubin runs as code, so the cache follows backends/disk_cache.py
(a private directory, each entry checked against its digest: docs/decisions/0016-trusted-caches.md).
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import multiprocessing
import multiprocessing.util
import os
import pathlib
import re
import threading
import time

from ... import settings
from .. import disk_cache
from . import split

CODEGEN_VERSION = "wavelift-cuda-4"
DEFAULT_ARCH = "sm_90"  # H200 / H100; overridden by the device's compute capability
OPTIONS = ("--fmad=false", "-ftz=false", "-prec-div=true", "-prec-sqrt=true", "-std=c++17", "-default-device")


class CompileError(Exception):
    pass


def cache_dir() -> pathlib.Path | None:
    """The cubin cache, private and checked (backends/disk_cache.py), or None: refused (a
    CacheWarning says why), modules are compiled for this process only."""
    return disk_cache.usable_dir("cuda", "WAVELIFT_CUDA_CACHE")


def _nvrtc():
    try:
        from cuda.bindings import nvrtc

        return nvrtc
    except ImportError:
        pass
    try:
        from cuda import nvrtc  # older cuda-python layout

        return nvrtc
    except ImportError:
        return None


def nvrtc_problem() -> str | None:
    """None when NVRTC can compile here, else why not."""
    nv = _nvrtc()
    if nv is None:
        return "cuda-bindings is not installed (pip install 'wavelift[cuda]')"
    try:
        err, major, minor = nv.nvrtcVersion()
        if int(err) != 0:
            return f"NVRTC does not load ({err})"
    except Exception as e:  # noqa: BLE001 - libnvrtc missing or wrong version
        return f"NVRTC does not load ({type(e).__name__}: {e})"
    return None


def nvrtc_version() -> str:
    nv = _nvrtc()
    if nv is None:
        return "none"
    try:
        _, major, minor = nv.nvrtcVersion()
        return f"{major}.{minor}"
    except Exception:  # noqa: BLE001
        return "none"


def _check(nv, res, what, prog=None):
    err = res[0] if isinstance(res, tuple) else res
    if int(err) == 0:
        return res
    log = ""
    if prog is not None:
        try:
            _, n = nv.nvrtcGetProgramLogSize(prog)
            buf = bytearray(n)  # (a fresh buffer: see _nvrtc_build)
            nv.nvrtcGetProgramLog(prog, buf)
            log = buf.decode(errors="replace").rstrip("\x00 ")
        except Exception:  # noqa: BLE001
            pass
    raise CompileError(f"{what} failed ({err})" + (f":\n{log}" if log else ""))


# Occupancy (docs/decisions/0009): a module is first compiled for 1536 resident threads per SM
# (codegen's WL_MIN_BLOCKS, through __launch_bounds__: at most 40 registers), which hides memory
# latency better; where ptxas must spill for that, it is compiled again without the bound.
OCCUPANCY_THREADS = 1536
# the most resident threads an SM holds, by arch (CUDA's occupancy table; others: 2048).  With
# WAVELIFT_CUDA_OCCUPANCY_FULL=on or auto a module is first built for that many (0047's amendments
# h136, h143):
# a grid of one round at a full SM takes two at 1536 (lds.cl's histogram: 1024 blocks of 256 on
# 132 SMs, 8 an SM resident at once against 6), and its blocks' loops wait on memory, not issue.
FULL_SM_THREADS = {"sm_75": 1024, "sm_86": 1536, "sm_87": 1536, "sm_89": 1536, "sm_120": 1536}


def full_sm_threads(arch: str) -> int:
    return FULL_SM_THREADS.get(arch.replace("compute_", "sm_"), 2048)


def occupancy_full() -> str | None:
    """WAVELIFT_CUDA_OCCUPANCY_FULL: None (unset or `off`: no build for a full SM), `on` (kept when
    it spills at most SPILL_OK_BYTES) or `auto` (kept when it spills nothing: _full_kept)."""
    v = (settings.get("WAVELIFT_CUDA_OCCUPANCY_FULL") or "").strip().lower()
    if v in ("", "off"):
        return None
    if v not in ("on", "auto"):
        raise ValueError(f"WAVELIFT_CUDA_OCCUPANCY_FULL={v!r} is not on, auto or off")
    return v


def occupancy_threads() -> int:
    return settings.get("WAVELIFT_CUDA_OCCUPANCY") or OCCUPANCY_THREADS


# a bounded build that spills at most this much is kept: ptxas puts so small a spill on a cold
# path (vadd w32 at 40 registers: one 8-byte pair around the window search), where the fallback,
# unbounded, costs every warp occupancy
SPILL_OK_BYTES = 16


_WL_MAIN = re.compile(
    r"Function properties for wl_main\s*\n[^\n]*?(\d+) bytes stack frame, (\d+) bytes spill stores, "
    r"(\d+) bytes spill loads\s*\n[^\n]*?Used (\d+) registers"
)


def ptxas_report(log: str) -> dict | None:
    """wl_main's lines of ptxas -v (other functions' are not counted): registers, and bytes of
    stack frame, spill stores and spill loads; None: no report."""
    m = _WL_MAIN.search(log)
    if m is None:
        return None
    return dict(zip(("stack", "stores", "loads", "registers"), map(int, m.groups())))


def _spills(log: str, ok: int = SPILL_OK_BYTES) -> bool:
    """ptxas -v said wl_main spills more than ``ok`` bytes (stores), or said nothing."""
    r = ptxas_report(log)
    return r is None or r["stores"] > ok


def _full_kept(log: str, mode: str) -> bool:
    """The full SM's build is kept (occupancy_full's ``mode``): `on`, as the usual bound's, at most
    SPILL_OK_BYTES of spill stores; `auto`, no spill at all.  ptxas's totals do not say where a
    spill lands, and the two modules the setting was measured on cannot be told apart by them
    (0047's amendment h143: lds.cl's histogram, with HOIST=induction, and stencil5 both 32
    registers, 16 bytes stored; the histogram's reloads sit outside its loops and pay for a
    resident grid, stencil5's three are in its loop and cost it 12 %): `auto` takes a full SM
    only where that costs no local memory traffic anywhere."""
    if mode == "on":
        return not _spills(log)
    r = ptxas_report(log)
    return r is not None and r["stores"] == 0 and r["loads"] == 0


@functools.cache
def _report_pool() -> concurrent.futures.ProcessPoolExecutor:
    """One spawned process whose NVRTC loads with the CUDA compute cache off (see _reported_build)."""
    return _spawned_pool(1, settings.disable_cuda_compute_cache)


def _spawned_pool(workers: int, initializer=None) -> concurrent.futures.ProcessPoolExecutor:
    """A pool of spawned processes (the parent may hold a CUDA context), shut down at exit
    before interpreter teardown (else a traceback at exit) -- in a multiprocessing child too
    (gpu_check's workers): multiprocessing's exit joins a child's children after its
    exit-priority finalizers and never runs atexit there, so an atexit-only shutdown hangs it.
    It runs before the pool's own queue finalizers (priority 10: the thread that feeds the
    workers closed first, they never hear "stop") and waits for the workers (a build still
    running is waited for, queued ones dropped)."""
    pool = concurrent.futures.ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=initializer
    )
    multiprocessing.util.Finalize(
        pool, pool.shutdown, kwargs={"wait": True, "cancel_futures": True}, exitpriority=100
    )
    return pool


def _reported_build(source: str, arch: str, extra: tuple) -> tuple[bytes, str]:
    """_nvrtc_build with ptxas's -v report in the log.  NVRTC 13 serves ptxas's result from the
    CUDA compute cache (~/.nv/ComputeCache) when the same PTX was built before, by any process,
    and such a build has no report (seen on the H200 machine: every bounded build of a module
    built once before read as spilling and was thrown away).  The cache is configured once, when
    NVRTC loads, so a build without its report runs again in a process whose NVRTC loaded with
    the cache off."""
    if not _IN_PROCESS_REPORTS:  # seen once: this process's builds never report again
        return _report_pool().submit(_nvrtc_build, source, arch, extra).result()
    cubin, log = _nvrtc_build(source, arch, extra)
    if "Function properties for" in log:
        return cubin, log
    _IN_PROCESS_REPORTS.clear()
    return _report_pool().submit(_nvrtc_build, source, arch, extra).result()


# non-empty while this process's own NVRTC builds carry ptxas's report (emptied the first time one
# does not: its NVRTC uses the compute cache, so later bounded builds are not compiled twice)
_IN_PROCESS_REPORTS = [True]


def nvrtc_compile(source: str, arch: str = DEFAULT_ARCH) -> bytes:
    """-> cubin bytes for `arch` (e.g. 'sm_90'): the occupancy-bounded build unless it spills."""
    return nvrtc_build(source, arch)[0]


def nvrtc_build(source: str, arch: str = DEFAULT_ARCH, extra: tuple = ()) -> tuple[bytes, str, int]:
    """-> (cubin, NVRTC/ptxas log, the minimum blocks per SM the kept build was bounded to, 0:
    unbounded); ``extra``: more NVRTC options for both builds (tools/cuda_sass.py)."""
    blocks = block_threads(source)
    if blocks:
        minb = max(1, min(32, occupancy_threads() // blocks))
        full = max(1, min(32, full_sm_threads(arch) // blocks))
        mode = occupancy_full()
        if mode and full > minb:
            cubin, log = _reported_build(
                source, arch, (f"-DWL_MIN_BLOCKS={full}", "--ptxas-options=-v") + extra
            )
            if _full_kept(log, mode):
                return cubin, log, full
        cubin, log = _reported_build(source, arch, (f"-DWL_MIN_BLOCKS={minb}", "--ptxas-options=-v") + extra)
        if not _spills(log):
            return cubin, log, minb
        # WAVELIFT_CUDA_OCCUPANCY_STEP (bytes; opt-in until measured): one block fewer per SM
        # before giving the bound up -- 256-thread blocks at 48 registers (5 blocks, 1280
        # threads) rather than unbounded (matmul16: 56 registers, 4 blocks), a small spill
        # allowed, as a refill from L1 may cost less than a quarter of the warps
        step = settings.get("WAVELIFT_CUDA_OCCUPANCY_STEP")
        if step is not None and minb > 1:
            cubin, log = _reported_build(
                source, arch, (f"-DWL_MIN_BLOCKS={minb - 1}", "--ptxas-options=-v") + extra
            )
            if not _spills(log, step):
                return cubin, log, minb - 1
    cubin, log = _nvrtc_build(source, arch, extra)
    return cubin, log, 0


def block_threads(source: str) -> int | None:
    """The launch's block size generate() defined for the source (small programs only), or None
    (the kernel's "#ifndef" fallback, 1024, is not one)."""
    m = re.search(r"(?<!#ifndef WL_BLOCK_THREADS\n)#define WL_BLOCK_THREADS (\d+)\n", source)
    return int(m.group(1)) if m else None


def _nvrtc_build(source: str, arch: str, extra: tuple, cubin: bool = True) -> tuple[bytes, str]:
    """-> (the cubin, b"" when not ``cubin``; NVRTC's log)."""
    nv = _nvrtc()
    if nv is None:
        raise CompileError(nvrtc_problem() or "NVRTC unavailable")
    res = nv.nvrtcCreateProgram(source.encode(), b"wavelift_module.cu", 0, [], [])
    _check(nv, res, "nvrtcCreateProgram")
    prog = res[1]
    try:
        opts = [f"-arch={arch}".encode()] + [o.encode() for o in OPTIONS + extra]
        _check(nv, nv.nvrtcCompileProgram(prog, len(opts), opts), "nvrtcCompileProgram", prog)
        # NVRTC writes into the buffers it is given: bytearrays, never ``b" " * n`` (an immutable
        # object; for n == 1, an empty log's NUL, it is the interpreter's shared b" ", which
        # NVRTC would turn into b"\x00" for the whole process)
        buf = bytearray()
        if cubin:
            res = _check(nv, nv.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
            buf = bytearray(res[1])
            _check(nv, nv.nvrtcGetCUBIN(prog, buf), "nvrtcGetCUBIN")
        _, n = nv.nvrtcGetProgramLogSize(prog)
        lb = bytearray(n)
        nv.nvrtcGetProgramLog(prog, lb)
        return bytes(buf), lb.decode(errors="replace")
    finally:
        try:
            nv.nvrtcDestroyProgram(prog)
        except Exception:  # noqa: BLE001
            pass


def check_source(source: str, arch: str = DEFAULT_ARCH) -> None:
    """NVRTC takes ``source`` through its front end and NVVM to PTX without optimising (-G:
    about a second for any module, where an optimised build of a big -O0 kernel takes minutes),
    raising CompileError with the log: how CI checks every fixture module (tests/cuda)."""
    _nvrtc_build(source, arch.replace("sm_", "compute_"), ("-G",), cubin=False)


def occupancy_settings() -> tuple:
    """What picks a build's register bound (occupancy_threads, WAVELIFT_CUDA_OCCUPANCY_STEP,
    occupancy_full): part of the module key (CudaBackend.key_extra)."""
    return (occupancy_threads(), settings.get("WAVELIFT_CUDA_OCCUPANCY_STEP"), occupancy_full())


def occupancy_full_parts() -> list[str]:
    """The stored entry's and the cubin's name parts for WAVELIFT_CUDA_OCCUPANCY_FULL (none
    unset: the names made without it stay)."""
    mode = occupancy_full()
    return [] if mode is None else ["occupancy=full"] if mode == "on" else [f"occupancy=full-{mode}"]


def disk_name(key, arch: str, source: str, source_digest: str | None = None) -> str:
    """The cubin's entry name; ``source_digest``: the source's SHA-256 when the caller has it
    (stored.py: the digest its source entry was checked against)."""
    if source_digest is None:
        source_digest = hashlib.sha256(source.encode()).hexdigest()
    h = hashlib.sha256()
    for part in (
        CODEGEN_VERSION,
        repr(key),
        arch,
        nvrtc_version(),
        str(occupancy_threads()),
        # (they pick the build's WL_MIN_BLOCKS, not the source: a cubin of either is another)
        str(settings.get("WAVELIFT_CUDA_OCCUPANCY_STEP")),
        *occupancy_full_parts(),
        source_digest,
    ):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


def _on_disk(key, source: str, arch: str, use_disk: bool) -> tuple:
    """(the source's optimising build from the disk cache or None, the cache directory or None,
    the cubin's entry name)."""
    d = cache_dir() if use_disk else None
    name = disk_name(key, arch, source)
    return (disk_cache.read(d, name, ".cubin") if d else None), d, name


def cached_compile(key, source: str, arch: str, use_disk: bool = True):
    """-> (cubin bytes, seconds, 'disk' | 'nvrtc')."""
    t0 = time.perf_counter()
    cubin, d, name = _on_disk(key, source, arch, use_disk)
    if cubin:
        return cubin, time.perf_counter() - t0, "disk"
    cubin = nvrtc_compile(source, arch)
    if d:
        disk_cache.write(d, name, ".cubin", cubin)
    return cubin, time.perf_counter() - t0, "nvrtc"


# ---- the fast first tier (docs/decisions/0009, "Builds in seconds") ---------------------------
# NVRTC's time on a big module is NVVM optimising one giant wl_main and ptxas scheduling it
# (bench/bench_cuda_build.py); -Ofast-compile=max (NVRTC 12.8+) skips most of both: descriptor_types
# 14.9 -> 2.1 s of CPU.  Same source, same float options: the same semantics, slower code.  So a
# big module is first built that way and used at once, while the optimising build (the one the
# disk cache holds, under the same name as before) runs in a background thread, started beside
# the fast one, and replaces it at the module's next launch (Module.variant).
FAST_OPTIONS = ("--Ofast-compile=max",)
FAST_MIN_VERSION = (12, 8)
# sources at least this long get the fast tier first (the prelude alone is ~40 KB; a module this
# big takes NVRTC seconds to optimise: smaller ones are built once, optimised)
TIER_SOURCE_BYTES = 150_000


def fast_tier_ok() -> bool:
    """NVRTC here knows -Ofast-compile."""
    try:
        major, minor = (int(x) for x in nvrtc_version().split("."))
    except ValueError:
        return False
    return (major, minor) >= FAST_MIN_VERSION


def tier_for(source: str) -> str:
    """'fast' (a fast build now, the optimising one in the background), 'full' (the optimising
    build only) or 'fastonly' (the fast build only, never replaced: A/B and GPU checks), by
    WAVELIFT_CUDA_TIER (auto | off | fast) and the source's size."""
    want = settings.get("WAVELIFT_CUDA_TIER") or "auto"
    if want == "off" or not fast_tier_ok():
        return "full"
    if want == "fast":
        return "fastonly"
    return "fast" if len(source) >= TIER_SOURCE_BYTES else "full"


def fast_compile(source: str, arch: str = DEFAULT_ARCH) -> bytes:
    """-> the first tier's cubin: no occupancy bound, no ptxas report, -Ofast-compile=max; split
    into parts built in parallel where that is faster (split_compile)."""
    return split_compile(source, arch) or _nvrtc_build(source, arch, FAST_OPTIONS)[0]


# ---- split builds (docs/decisions/0009, amendment "split builds") ------------------------------
# On a machine with SPLIT_MIN_CORES cores or more the fast tier builds a big module as split.py's
# units, each its own NVRTC program (-rdc) in a pool of processes (threads overlap only partly:
# 3.9 s against 2.1 s for int64_div's 13 units on the H100 host), and links them with nvJitLink
# (0.17 s; the driver's linker 1.2 s): the first build waits for the largest part, not the whole.
# On fewer cores the parts' CPU (about the whole build's) would only queue: one unit.
SPLIT_MIN_CORES = 8
# modules at least this big (IR ops) start the pool's processes before their source is generated
# (build_module: spawning them costs ~1.2 s, generating such a module 1-2 s)
SPLIT_WARM_OPS = 20_000


def split_workers() -> int:
    """Units compiled at once in a split build; 0: no split (WAVELIFT_CUDA_SPLIT auto | off | on)."""
    want = settings.get("WAVELIFT_CUDA_SPLIT") or "auto"
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if want == "off" or (want != "on" and cores < SPLIT_MIN_CORES):
        return 0
    return max(cores, 2)


def split_compile(source: str, arch: str = DEFAULT_ARCH) -> bytes | None:
    """-> the linked cubin of the source's split units, or None: no split here (too few cores,
    too small a module, no linker)."""
    workers = split_workers()
    small = settings.get("WAVELIFT_CUDA_SPLIT") == "on"
    units = (
        split.split_source(source, 64, split.TEST_PART_BYTES if small else split.PART_BYTES)
        if workers
        else None
    )
    link = linker() if units else None
    if units is None or link is None:
        return None
    # a called function may use no more registers than the kernel's launch bound lets it
    # (WL_BLOCK_THREADS, else 1024, at the fast tier's one block per SM): the link refuses it otherwise
    regs = min(255, 65536 // (block_threads(source) or 1024)) & ~7
    opts = (*FAST_OPTIONS, "-rdc=true", f"-maxrregcount={regs}")
    pool = _split_pool(workers)
    try:
        objs = [f.result()[0] for f in [pool.submit(_nvrtc_build, u, arch, opts) for u in units]]
        return link(objs, arch)
    except CompileError:  # (never seen) the one-unit build decides: it compiles or says why
        return None


@functools.cache
def _split_pool(workers: int) -> concurrent.futures.ProcessPoolExecutor:
    """The processes split builds compile in (spawned: the parent may hold a CUDA context)."""
    return _spawned_pool(workers)


def warm_split_pool(ir_ops: int) -> None:
    """Start the split pool's processes (NVRTC loaded) now, in the background, when a module of
    ``ir_ops`` will likely be built split: they come up while its source is generated."""
    workers = split_workers()
    if workers and ir_ops >= SPLIT_WARM_OPS:
        pool = _split_pool(workers)
        for _ in range(workers):
            pool.submit(nvrtc_version)


@functools.cache
def linker():
    """The link step of a split build: nvJitLink (no GPU needed; its version at least NVRTC's),
    else the CUDA driver's (needs the GPU), else None."""
    try:
        from cuda.bindings import nvjitlink

        if nvjitlink.version()[0] >= int(nvrtc_version().split(".")[0]):
            return _nvjitlink
    except Exception:  # noqa: BLE001 - not installed, or its library does not load
        pass
    try:
        import cupy  # noqa: F401
        from cuda.bindings import driver  # noqa: F401

        return _driver_link
    except Exception:  # noqa: BLE001
        return None


def _nvjitlink(objs: list[bytes], arch: str) -> bytes:
    from cuda.bindings import nvjitlink as nj

    h = nj.create(1, [f"-arch={arch}"])
    try:
        for k, o in enumerate(objs):
            nj.add_data(h, nj.InputType.CUBIN, o, len(o), f"wl_part{k}")
        try:
            nj.complete(h)
        except nj.nvJitLinkError as e:
            log = bytearray(nj.get_error_log_size(h))
            nj.get_error_log(h, log)
            raise CompileError(f"nvJitLink: {e}: {log.decode(errors='replace')[:2000]}") from None
        out = bytearray(nj.get_linked_cubin_size(h))
        nj.get_linked_cubin(h, out)
        return bytes(out)
    finally:
        nj.destroy(h)


def _driver_link(objs: list[bytes], arch: str) -> bytes:
    import ctypes

    import cupy
    from cuda.bindings import driver as cu

    cupy.cuda.runtime.free(0)  # this thread's context current (the driver links in one)
    err, state = cu.cuLinkCreate(0, [], [])
    if int(err):
        raise CompileError(f"cuLinkCreate failed ({err})")
    try:
        for k, o in enumerate(objs):
            (err,) = cu.cuLinkAddData(
                state, cu.CUjitInputType.CU_JIT_INPUT_CUBIN, o, len(o), f"wl_part{k}".encode(), 0, [], []
            )
            if int(err):
                raise CompileError(f"cuLinkAddData failed ({err})")
        err, ptr, size = cu.cuLinkComplete(state)
        if int(err):
            raise CompileError(f"cuLinkComplete failed ({err})")
        return ctypes.string_at(int(ptr), int(size))
    finally:
        cu.cuLinkDestroy(state)


class Upgrade:
    """The optimising build of a module, running in a daemon thread (NVRTC releases the GIL);
    a process that ends first just loses it (the next one builds it again).  ``result()``: the
    cubin when it is there, else None (still running, or it failed: the fast build stays).
    ``fast``: the fast build instead (background_compile under WAVELIFT_CUDA_TIER=fast; never
    written to the disk).  ``then``: called in the thread once a cubin is there, after ``done``
    is set (background_compile: Module.lean_ready's news)."""

    def __init__(self, source: str, arch: str, d, name: str, fast: bool = False, then=None):
        self._cubin: bytes | None = None
        self.error: str | None = None
        self.seconds = 0.0
        self.done = threading.Event()
        args = (source, arch, d, name, fast, then)
        self._thread = threading.Thread(
            target=self._run, args=args, name="wavelift-cuda-upgrade", daemon=True
        )
        self._thread.start()

    def _run(self, source, arch, d, name, fast, then) -> None:
        t0 = time.perf_counter()
        try:
            cubin = fast_compile(source, arch) if fast else nvrtc_compile(source, arch)
            if d and not fast:
                disk_cache.write(d, name, ".cubin", cubin)
            self._cubin = cubin
        except Exception as e:  # noqa: BLE001 - kept on the fast build; said in .error
            self.error = f"{type(e).__name__}: {e}"[:2000]
        self.seconds = time.perf_counter() - t0
        self.done.set()
        if self._cubin is not None and then is not None:
            then()

    def result(self) -> bytes | None:
        return self._cubin if self.done.is_set() else None

    def wait(self, timeout: float | None = None) -> bytes | None:
        self.done.wait(timeout)
        return self.result()


def tiered_compile(key, source: str, arch: str, use_disk: bool = True):
    """-> (cubin bytes, seconds, 'disk' | 'nvrtc' | 'nvrtc-fast', Upgrade or None).  The disk
    cache holds optimising builds only, named as cached_compile names them; a fast build is never
    written there."""
    tier = tier_for(source)
    if tier == "full":
        return (*cached_compile(key, source, arch, use_disk), None)
    t0 = time.perf_counter()
    cubin, d, name = _on_disk(key, source, arch, use_disk)
    if cubin:
        return cubin, time.perf_counter() - t0, "disk", None
    # the optimising build starts first, beside the fast one (NVRTC compiles distinct programs
    # in parallel threads): it arrives at its own build time, not after the fast one, and where
    # it is the quicker of the two (a few -O0 kernels, bench/README.md) it is taken at once
    up = Upgrade(source, arch, d, name) if tier == "fast" else None
    cubin = fast_compile(source, arch)
    if up is not None and up.result() is not None:
        return up.result(), time.perf_counter() - t0, "nvrtc", None
    return cubin, time.perf_counter() - t0, "nvrtc-fast", up


def background_compile(key, source: str, arch: str, use_disk: bool = True, then=None):
    """A build nothing waits for (a module's lean build: Module.lean_ready, decision 0049's
    amendment h163) -> (cubin bytes, seconds, 'disk') where the disk cache holds it -- there at
    once --, else an Upgrade building it in a daemon thread: the optimising build, written to
    the disk as tiered_compile's is (nothing waits, so no fast tier first), or under
    WAVELIFT_CUDA_TIER=fast the fast build only, as every build then; ``then``: Upgrade's."""
    t0 = time.perf_counter()
    cubin, d, name = _on_disk(key, source, arch, use_disk)
    if cubin:
        return cubin, time.perf_counter() - t0, "disk"
    return Upgrade(source, arch, d, name, fast=tier_for(source) == "fastonly", then=then)
