"""Run a compiled module over a dispatch: batches of workgroups, waves grouped by (block, MODE).

State per batch: S [NUM_SREGS, waves, 1] and V [vgprs, waves, lanes] (uint32).  Every wave of the
batch that sits at the same block with the same MODE runs that block together; s_barrier parks a
wave until every live wave of its workgroup is parked.  LDS is one array per workgroup; scratch is
the ScratchStore (module-private, per wave).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable

import numpy as np

from ... import settings
from ...errors import Refused
from ...ir.program import EXEC_HI, EXEC_LO, MODE_REG, NUM_SREGS
from ...kept import keep
from ...memory.guest import holds
from ...run.result import Escape
from .. import native as NT
from . import atomics
from .scratch import ScratchStore

MAX_ESCAPES = 16
STATE_BYTES = 256 << 20  # bound on register state per batch
# waves per batch: small enough that per-op temporaries stay in cache (measured: bench/README.md)
BATCH_WAVES = settings.get("WAVELIFT_BATCH_WAVES") or None
# native tier (native.py, docs/decisions/0012): "auto" uses it for dispatches of at least
# NATIVE_MIN_WAVES waves once the library is ready (a compile costs seconds to minutes once per
# program and MODE, then the disk cache; it runs in the background while NumPy blocks run), "on"
# for every dispatch, compiling first (tests, benchmarks of the tier), "off" never
NATIVE = settings.get("WAVELIFT_NATIVE")
NATIVE_MIN_WAVES = settings.get("WAVELIFT_NATIVE_MIN_WAVES")
# a smaller dispatch under "auto" (decision 0012, amendment h95): native when its MODE's library is
# ready without making its source (ModeBlocks.native_known); the library is asked for (its source
# made, compiled in the background unless on disk) at the end of the dispatch whose NumPy run
# brings its module's to NATIVE_AFTER_S of thread CPU (0: never): a program that runs that long
# pays its compile back when it runs again, and one that runs once pays about one more run
NATIVE_AFTER_S = settings.get("WAVELIFT_NATIVE_AFTER_MS") / 1000
# ... or at the end of its second (or later) NumPy run when its source is expected to cost less
# than NATIVE_AFTER_S (this many seconds an instruction: 0.1-0.4 ms measured at load ~4.6, sort's
# programs 1.4-11 ms, sin_cos 450 ms; amendment h104): a program dispatched again is one a
# workload repeats (sort's passes, a training step, the next process: the index), and asking then
# costs no more than the time rule already accepts.  A program dispatched once asks nothing
NATIVE_SOURCE_S_PER_INSTR = 0.00025
NATIVE_BATCH_FACTOR = 16
# a one-range driver run's state arrays and context words kept for the module's next one
# (native.KeptContext; False: made anew for every run, as before: A/B runs and tests)
KEEP_CONTEXT = True
GRIDS = 64  # grid words kept per module (_grid: per config object and per registers; kept.keep)
# the largest context a module keeps (its arrays' bytes: a large scratch or LDS is made anew for
# each run, as before, rather than held by every cached module)
KEEP_MAX_BYTES = 8 << 20
# the native driver (a whole dispatch in one call) for programs whose every block is native;
# WAVELIFT_NATIVE_DRIVER=off keeps their native blocks under the Python scheduler
NATIVE_DRIVER = settings.get("WAVELIFT_NATIVE_DRIVER") != "off"
# the driver's threads (default: the cores this process may use), for dispatches of at least
# NATIVE_THREAD_MIN_WAVES waves, or NATIVE_THREAD_MIN_LOOP_WAVES (two chunks of
# native.MAX_GROUP_WAVES) for a program that loops: its work per wave is not bounded by its
# length (Collatz: 2,048 waves of ~7 us each), and a thread costs ~0.1-0.2 ms (decision 0013)
NATIVE_THREADS = max(1, settings.get("WAVELIFT_THREADS") or len(os.sched_getaffinity(0)))
NATIVE_THREAD_MIN_WAVES = 4096
NATIVE_THREAD_MIN_LOOP_WAVES = 128
# a thread split may leave its largest range this much above the most even split's (thread_split)
SPLIT_SLACK = 1.25
# ranges per thread of a program whose threads have not met (native_align 1): the threads claim
# them in order as they come free (Runtime._drive_parts), so a thread that starts late or loses
# its core leaves its share to the others (decision 0013, amended 2026-12-06)
# 32 (2026-12-06, h85; was 8): a quiet launch's threads ended ~0.4 ms apart with 8 (the last
# range claimed, ~0.5 ms of work, ran on one thread while the other had none left)
NATIVE_RANGES_PER_THREAD = 32
_POOL = None
# `wavelift trace` sets this to an empty dict to have the state of the first wave that escapes,
# runs past its budget or jumps off the program recorded into it (_wave_state) and the native
# tier left out (its state is not at hand there); None, the default: nothing is recorded and
# nothing costs more
WAVE_STATE: dict | None = None


def loops(program) -> bool:
    """Whether a wave can run a block twice: a branch, jump, barrier or MODE end to the block
    itself or an earlier one (Block.successors), or an s_setpc (its target is a run-time value)."""
    for b in program.blocks:
        nxt = b.successors()
        if nxt is None or any(0 <= t <= b.index for t in nxt):
            return True
    return False


def source_estimate_s(program) -> float:
    """The seconds its native source is expected to cost (NATIVE_SOURCE_S_PER_INSTR an
    instruction: amendment h104)."""
    return len(program.instructions) * NATIVE_SOURCE_S_PER_INSTR


def _source_s(m) -> float:
    """source_estimate_s of the module's program, found once and kept on the (cached) module."""
    if m.source_s is None:
        m.source_s = source_estimate_s(m.program)
    return m.source_s


@functools.lru_cache(maxsize=256)
def thread_split(total: int, row: int, threads: int, align: int = 1) -> tuple[tuple[int, ...], int]:
    """The native driver's workgroup ranges for at most ``threads`` threads -> (bounds 0 = b0 <
    b1 < ... < bT = total: thread i runs workgroups [b_i, b_i+1), the chunk a used).

    Ranges are whole rows of ``row`` workgroups where there are at least ``threads`` rows (else
    single workgroups).  ``align`` 1 (a program whose threads have not met): the most even split.
    ``align`` > 1 (they met, _races; the driver doubles it at each race): whole chunks of ``a``
    rows, ``a`` a power of two >= ``align``: the largest whose split leaves no range more than
    SPLIT_SLACK above the most even split's with chunks of at least ``align``; fewer threads
    where they do as well (the largest range is what the dispatch waits for).  Why chunks: a
    tiled image's blocks span a power-of-two number of texel rows (a 64 KiB block of rgba8 128),
    so a split at a multiple of a large power of two of workgroup rows falls between block rows
    and the threads' write ranges, one hull per window, stay apart; a split mid-block makes both
    threads' hulls hold that block row (bench_sampling's 1920x1080 pass: 135 rows of 8x8 groups
    split at row 67, texel row 536, inside the fifth row of 128-row blocks; with align 2 it
    splits at row 64).  The even split first: a program that never meets (a linear buffer) keeps
    the best balance (decision 0030)."""
    unit = row if row > 0 and total >= threads * row else 1
    n = total // unit  # whole units; the last range also takes total % unit
    if align <= 1:
        t = min(threads, n)
        if t < 2:
            return (0, total), 1
        return tuple(n * i // t * unit for i in range(t)) + (total,), 1
    plans = []  # (largest range, a, unit bounds)
    a = 1 << (align - 1).bit_length()  # align rounded up to a power of two
    while n >= 2 and a < n:
        for t in range(2, min(threads, -(-n // a)) + 1):
            # each bound the multiple of a nearest the even split's (distinct: n / t >= a)
            b = sorted({0, n} | {min(n, (2 * i * n + t * a) // (2 * t * a) * a) for i in range(1, t)})
            plans.append((max(y - x for x, y in zip(b, b[1:], strict=False)), a, b))
        a *= 2
    if not plans:
        return (0, total), 1
    best = min(p[0] for p in plans)
    # the largest a within the slack, then its fewest threads with the smallest largest range
    _, a, b = min((p for p in plans if p[0] <= SPLIT_SLACK * best), key=lambda p: (-p[1], p[0], len(p[2])))
    return tuple(x * unit for x in b[:-1]) + (total,), a


class _RangeState:
    """A driver range's own records (Runtime._drive_parts): escapes, touch ranges and the
    windows whose write hull it settled (native_driver.h wl_settle; None: not asked)."""

    __slots__ = ("esc", "touch", "settled")

    def __init__(self, esc, touch, settled=None):
        self.esc, self.touch, self.settled = esc, touch, settled


def _pool():
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(NATIVE_THREADS, thread_name_prefix="wavelift-native")
    return _POOL


class Runtime:
    def __init__(self, module, config, windows, mode: str, budget: int):
        self.m = module
        self.cfg = config
        self.win = windows
        self.mode = mode
        self.budget = budget
        self.deadline = None  # an execute.Deadline (the optional time limit)
        self.L = config.wave_size
        self.escapes: list[Escape] = []
        self.escape_count = 0
        self.instructions = 0
        self.lane_instructions = 0
        self.waves_run = 0
        self.LANE, self.LANE64 = _lanes(self.L)
        self.LANEBITS = self.LANE if self.L == 32 else self.LANE64
        # group shape -> local-id tables (_local_ids)
        self._lid_cache: dict[tuple[int, int, int], tuple[np.ndarray, ...]] = {}
        self.native = False  # run() decides
        self.native_runs = 0  # block runs done by the native tier
        self.numpy_runs = 0  # block runs done by NumPy blocks while the tier was on
        self.numpy_blocks: dict[str, str] = {}  # those blocks (index) -> why not native
        self._native_key: dict[tuple[int, int], bool] = {}  # (block, MODE) -> its function is native
        self.native_driver = False  # the whole dispatch ran in the native driver
        self.native_threads = 1  # in this many threads
        self.windows_aliased = 0  # windows it read in guest memory (not copied)
        self.windows_blank = 0  # windows it only stored to (not copied)
        self._fns: dict[tuple[int, int], Callable] = {}  # (block, MODE) -> block function
        self.native_problem = None  # why a MODE has no native library
        self.native_compiling = False  # a MODE's library was still compiling (auto)
        self.native_origin = None  # its library's origin: "disk cache" / "compiled"
        self._bufs: dict[str, np.ndarray] = {}  # state arrays reused between batches (_zeros)
        self.progress = None  # progress(workgroups done, of) after each batch (RunCounts.progress)
        # the driver's ranges' touch rows, context words and settled windows, one range a row
        # (_drive_parts; None: one range, or not asked)
        self._touch_rows = self._x_rows = self._settled_rows = None
        self._kept = None  # the one-range run's native.KeptContext (_serial_words)
        self._mode = None  # (_mode_word, once)
        self._grid_at = None  # (G, its address, the user SGPRs' address): _grid's kept words

    def count_lanes(self, k, lo, hi):
        """``k`` vector instructions ran under this EXEC (lane_instructions is exact)."""
        n = int(np.bitwise_count(lo).sum())
        if hi is not None:
            n += int(np.bitwise_count(hi).sum())
        self.lane_instructions += k * n

    # ------------------------------------------------------------------ errors and escapes
    def refuse_rounding(self, mode, w=None, instr=None):
        """A float block under MODE.FP_ROUND other than nearest-even (``w``: its waves, ``instr``:
        its first instruction, for WAVE_STATE)."""
        if WAVE_STATE is not None and not WAVE_STATE and w is not None and instr is not None:
            self._wave_state(WAVE_STATE, w, 0, 0, self.m.program.instructions[instr], None, "rounding_mode")
        raise Refused(
            "float.rounding_mode", f"MODE.FP_ROUND = {mode & 15:#x}; only round-to-nearest-even is supported"
        )

    def refuse_at(self, instr, why, code, w=None, held=None):
        """A refuse_if op held (ir.refusal_of: its instruction, why and code; ``w`` and ``held``,
        the lanes where it held, for WAVE_STATE: the first such wave and lane is recorded)."""
        ins = self.m.program.instructions[instr]
        if WAVE_STATE is not None and not WAVE_STATE and w is not None and held is not None:
            h = np.asarray(held)
            if h.ndim >= 2:
                wi, li = np.nonzero(h.reshape(h.shape[0], -1))
                row, lane = (int(wi[0]), int(li[0])) if wi.size else (0, 0)
            else:
                row, lane = (int(np.argmax(h)) if h.ndim == 1 else 0), 0
            self._wave_state(WAVE_STATE, w, row, lane, ins, None, "refused")
        raise Refused(code, f"offset {ins.offset:#x}: {ins.text} ({why})")

    def _escape(self, instr, w, bad, addr, kind):
        n = int(np.count_nonzero(bad))
        if not n:
            return
        self.escape_count += n
        if len(self.escapes) >= MAX_ESCAPES:
            return
        wi, li = np.nonzero(bad)
        addr = np.broadcast_to(addr, bad.shape)
        ins = self.m.program.instructions[instr]
        if WAVE_STATE is not None and not WAVE_STATE:
            self._wave_state(WAVE_STATE, w, int(wi[0]), int(li[0]), ins, int(addr[wi[0], li[0]]), kind)
        waves = self._wave_ids(w)
        for a, b in zip(wi[:MAX_ESCAPES], li[:MAX_ESCAPES]):
            if len(self.escapes) >= MAX_ESCAPES:
                break
            self.escapes.append(Escape(ins.offset, ins.text, int(waves[a]), int(b), int(addr[a, b]), kind))

    def _wave_state(self, out, w, row, lane, ins, address, kind):
        """Record into ``out`` the state of the wave at row ``row`` of ``w`` as the NumPy blocks
        hold it when its access at ``ins`` escapes (kind "refused": a refuse_if op at ``ins``
        held; "rounding_mode": the float block starting at ``ins`` runs under a rounding mode
        not carried out, before it ran; or, kinds "budget_exceeded", "bad_jump", "runs_past",
        "time_exceeded", after the block ending at ``ins`` took it past its budget, jumped to
        ``address``, ran off the program, ran past the time limit): every SGPR (EXEC, VCC, M0,
        SCC included) and every VGPR of every lane (registers the block writes after the access
        are not yet written)."""
        b = int(np.arange(self.batch_waves)[w][row])
        out.update(
            wave=int(self.wave_base + b),
            lane=lane,
            pc=ins.offset,
            instruction=ins.text,
            address=address,
            kind=kind,
            wave_size=self.L,
            sgprs=self.S[:, b, 0].copy(),
            vgprs=self.V[:, b, :].copy(),
        )

    def native_after(self, X, refusals, recs=None, wave_base=None):
        """Fold a native run's counters, escapes and refusal into the runtime (``recs``: its
        escape records, default this batch's; their waves count from ``wave_base``)."""
        C = NT.CTX
        self.native_runs += 1
        if X[C["lanes"]]:
            self.lane_instructions += int(X[C["lanes"]])
            X[C["lanes"]] = 0
        if X[C["esc_count"]]:
            self.escape_count += int(X[C["esc_count"]])
            recs = (self._native_state.esc if recs is None else recs).reshape(-1, 5)[: int(X[C["esc_n"]])]
            base = self.wave_base if wave_base is None else wave_base
            for instr, wave, lane, addr, kind in recs.tolist():
                ins = self.m.program.instructions[instr]
                self.escapes.append(
                    Escape(ins.offset, ins.text, int(wave) + base, int(lane), int(addr), NT.KIND_NAMES[kind])
                )
            X[C["esc_count"]] = X[C["esc_n"]] = 0
            X[C["esc_cap"]] = max(0, MAX_ESCAPES - len(self.escapes))
        if X[C["refuse"]] >= 0:
            self.refuse_at(*refusals[int(X[C["refuse"]])])

    def _native_library(self, mode):
        lib = self.m.blocks.native_library(mode, background=NATIVE == "auto")
        self.native_problem = getattr(lib, "why", None) or self.native_problem
        self.native_compiling |= lib is NT.COMPILING
        self.native_origin = getattr(lib, "origin", None)
        return lib

    def _native_fn(self, bi, mode):
        return self._native_library(mode).get(bi)

    @property
    def land_stream(self):
        """(copy, min bytes) for the host's landing (backends/base.land) after a native-driver
        run: large spans with streaming stores (decision 0013, amendment h91); else None."""
        if not self.native_driver or self.win.nbytes < NT.STREAM_MIN:
            return None  # (no span of an arena this small reaches STREAM_MIN: no library asked for)
        copy = NT.stream_copy()
        return None if copy is None else (copy, NT.STREAM_MIN)

    @property
    def extra_stats(self):
        if not self.native:
            return {"native": False, **({"native_compiling": True} if self.native_compiling else {})}
        out = {
            "native": True,
            "native_block_runs": self.native_runs,
            "native_driver": self.native_driver,
            # which tier ran each block: every block not named here ran native
            "numpy_block_runs": self.numpy_runs,
            "numpy_blocks": dict(sorted(self.numpy_blocks.items(), key=lambda kv: int(kv[0]))),
        }
        if self.native_driver:
            out["native_threads"] = self.native_threads
            out["windows_aliased"] = self.windows_aliased
            out["windows_blank"] = self.windows_blank
        if self.native_problem:
            out["native_problem"] = self.native_problem
        if self.native_compiling:
            out["native_compiling"] = True
        if self.native_origin:
            out["native_library"] = self.native_origin  # "disk cache" or "compiled"
        return out

    def _wave_ids(self, w):
        ids = np.arange(self.batch_waves) + self.wave_base
        return ids[w]

    # ------------------------------------------------------------------------- memory ops
    # Global accesses whose active lanes all fall inside one window take a fast path: one
    # min/max over the addresses proves that no lane escapes, and then the arena index is the
    # address plus one constant (windows.locate).  Everything else (LDS, scratch, escapes,
    # lanes spread over windows, upper-half addresses) takes the general path below it.

    def _active(self, addr, mask, full, shape):
        """-> u64 addresses of the active lanes: ``addr`` itself (broadcastable to shape) when
        the mask is full, else the active lanes' addresses in lane order (1-D), and the
        broadcast mask (None when full)."""
        a = np.asarray(addr, np.uint64)
        if full:
            return a, None
        # (broadcast_to is slow Python: skipped where the shape is already the one wanted)
        mb = mask if mask.shape == shape else np.broadcast_to(mask, shape)
        return (a if a.shape == shape else np.broadcast_to(a, shape))[mb], mb

    def _gather_global(self, a, d, lo, hi, nbytes, words):
        """Window bytes at guest addresses ``a`` (arena index a + d) -> a.shape + (words,) u32."""
        arena = self.win.arena
        if (
            nbytes == 4 * words
            and not (lo | hi) & 3
            and (lo == hi or not int(np.bitwise_or.reduce(a, axis=None)) & 3)
        ):
            i32 = a.view(np.int64) >> 2  # d % 8 == 0: whole dwords of the arena
            i32 += d >> 2
            if words == 1:
                return self.win.arena32.take(i32)[..., None]
            return self.win.arena32.take(i32[..., None] + np.arange(words))
        raw = arena.take((a.view(np.int64) + d)[..., None] + np.arange(nbytes))
        if nbytes != 4 * words:
            pad = np.zeros(a.shape + (4 * words,), np.uint8)
            pad[..., :nbytes] = raw
            raw = pad
        return raw.view("<u4").reshape(a.shape + (words,))

    def _load_global(self, addr, mask, full, shape, nbytes, words):
        """Fast path of load() (see above); None: take the general path."""
        a, mb = self._active(addr, mask, full, shape)
        if not a.size:
            return None
        lo, hi = int(a.min()), int(a.max())
        d = self.win.locate(lo, hi, nbytes)
        if d is None:
            return None
        out_shape = shape + (words,)
        if lo == hi:  # e.g. s_load of a kernarg: read it once
            v = self._gather_global(np.array([lo], np.uint64), d, lo, hi, nbytes, words)[0]
        else:
            v = self._gather_global(a, d, lo, hi, nbytes, words)
            if full and v.shape == out_shape:
                return v
        if full and lo == hi:  # np.repeat: cheaper than a broadcast copy
            out = np.repeat(v.reshape(1, words), shape[0] * shape[1], axis=0).reshape(out_shape)
        elif full:
            out = np.empty(out_shape, np.uint32)
            out[...] = v
        else:
            out = np.zeros(out_shape, np.uint32)
            out[mb] = v
        return out

    def _store_global(self, addr, mask, full, shape, data, nbytes):
        """Fast path of store(); False: take the general path."""
        a, mb = self._active(addr, mask, full, shape)
        if not a.size:
            return False
        lo, hi = int(a.min()), int(a.max())
        d = self.win.locate(lo, hi, nbytes)
        if d is None:
            return False
        win = self.win
        if full:
            if a.shape != shape:  # lane order decides which lane's store lands
                a = np.broadcast_to(a, shape)

            def vals(x):
                return np.asarray(x, np.uint32)  # setitem broadcasts it against the cells
        else:

            def vals(x):
                x = np.asarray(x, np.uint32)
                return (x if x.shape == shape else np.broadcast_to(x, shape))[mb]

        if (
            nbytes == 4 * len(data)
            and not (lo | hi) & 3
            and (lo == hi or not int(np.bitwise_or.reduce(a, axis=None)) & 3)
        ):
            cells = a.view(np.int64) >> 2
            cells += d >> 2
            a32, w32 = win.arena32, win.written.view(np.uint32)
            for j, x in enumerate(data):  # one scatter per dword, dword j of every lane
                c = cells + j if j else cells
                a32[c] = vals(x)
                w32[c] = 0x01010101  # exactly these 4 bytes are written
            win.mark(lo + d, hi + d + 4 * len(data))
            return True
        idx = (a.view(np.int64) + d).reshape(-1)
        if full:
            ws = [np.broadcast_to(np.asarray(x, np.uint32), shape).reshape(-1) for x in data]
        else:
            ws = [vals(x) for x in data]
        bytes_ = np.ascontiguousarray(np.stack(ws, -1)).view(np.uint8)[:, :nbytes]
        pos = idx[:, None] + np.arange(nbytes)
        win.arena[pos] = bytes_
        win.written[pos] = True
        win.mark(lo + d, hi + d + nbytes)
        return True

    def _store_dword(self, addr, mask, x):
        """store() of one dword a lane whose address, mask and data are (N, L) arrays (u64,
        bool, u32: the common global store), where every active lane's address is aligned and
        in one window: what _store_global does for it, with fewer steps; False: nothing done,
        take store()'s own path (an escape, a misaligned or spread address)."""
        full = bool(mask.all())
        if full:
            a = addr
        else:
            a = addr[mask]
            if not a.size:
                return True  # (no lane active: store() returns without a write too)
        if a.size == 1:
            lo = hi = int(a.reshape(-1)[0])
        else:
            lo, hi = int(a.min()), int(a.max())
        d = self.win.locate(lo, hi, 4)
        if d is None or (lo | hi) & 3 or (lo != hi and int(np.bitwise_or.reduce(a, axis=None)) & 3):
            return False
        cells = a.view(np.int64) >> 2
        cells += d >> 2
        self.win.arena32[cells] = x if full else x[mask]
        self.win.written.view(np.uint32)[cells] = 0x01010101  # exactly these 4 bytes are written
        self.win.mark(lo + d, hi + d + 4)
        return True

    def _space(self, space, w, addr, nbytes):
        """-> (arena uint8, written-or-None, index, ok); ``ok`` None: every address is fine."""
        if space == "global":
            idx, ok = self.win.resolve(addr, nbytes)
            return self.win.arena, self.win.written, idx, ok
        if space == "lds":
            a = np.asarray(addr, np.int64)
            base = (self.wave_group[w] * self.lds_stride)[:, None]
            if (
                a.size
                and holds(int(a.min()), nbytes, self.lds_bytes)
                and holds(int(a.max()), nbytes, self.lds_bytes)
            ):
                return self.lds, None, base + a, None  # min/max: every lane in range
            ok = holds(a, nbytes, self.lds_bytes)
            idx = np.where(ok, base + a, 0)
            return self.lds, None, idx, ok
        if space == "scratch":
            idx, ok = self.scratch.resolve(w, addr, nbytes, self.LANE)
            return self.scratch.arena, None, idx, ok
        raise ValueError(space)

    def _scratch_split(self, addr, mask, nbytes):
        """Scratch addresses are swizzled per dword.  A scratch_* (flat scratch segment) access
        of <= 4 bytes that crosses a dword is carried out byte by byte in the lane's own linear
        space: its later bytes come from the same lane's next dword, 4 x wave-size bytes on.
        LLVM emits such accesses whenever flat scratch is enabled (allowsMisalignedMemoryAccesses
        for the private address space), so the hardware path takes them; MUBUF scratch accesses
        keep the alignment rule (docs/decisions/0008-scratch.md).  -> per-byte addresses, or None
        when no active lane crosses."""
        if nbytes <= 1 or nbytes > 4:
            return None
        a = np.asarray(addr, np.uint64)
        if not (mask & ((a & np.uint64(3)) + np.uint64(nbytes) > np.uint64(4))).any():
            return None
        W4 = np.uint64(4 * self.L)
        dw, lane4, r = a // W4, a % W4 - (a & np.uint64(3)), a & np.uint64(3)
        out = []
        for k in range(nbytes):
            o = r + np.uint64(k)
            out.append((dw + o // np.uint64(4)) * W4 + lane4 + o % np.uint64(4))
        return out

    def load(self, space, instr, addr, mask, nbytes, words, w, N, uniform):
        shape = (N, 1) if uniform else (N, self.L)
        mask = np.asarray(mask)
        full = bool(mask) if mask.ndim == 0 else bool(mask.all())  # before any broadcast
        if not full and not mask.any():
            return np.zeros(shape + (words,), np.uint32)
        if space == "global":
            out = self._load_global(addr, mask, full, shape, nbytes, words)
            if out is not None:
                return out
        addr = np.broadcast_to(addr, shape)
        mask = np.broadcast_to(mask, shape)
        if space == "scratch" and words == 1 and self.m.program.instructions[instr].encoding == "SCRATCH":
            parts = self._scratch_split(addr, mask, nbytes)
            if parts is not None:
                v = np.zeros(shape + (1,), np.uint32)
                for k, a in enumerate(parts):
                    v |= self.load(space, instr, a, mask, 1, 1, w, N, uniform) << np.uint32(8 * k)
                return v
        arena, _, idx, ok = self._space(space, w, addr, nbytes)
        if ok is None:  # every address resolved
            sel = mask
        else:
            bad = mask & ~ok
            if space != "lds" and bad.any():  # out-of-range LDS reads give 0
                self._escape(instr, w, bad, addr, "scratch" if space == "scratch" else "load")
            sel = mask & ok
            full = full and bool(ok.all())
        if not full:
            idx = np.where(sel, idx, 0)
        if nbytes % 4 == 0 and not (idx & 3).any():
            i32 = idx >> 2
            if words == 1:
                out = arena.view(np.uint32)[i32][..., None]
            else:
                out = arena.view(np.uint32)[i32[..., None] + np.arange(words)]
        else:
            raw = arena[idx[..., None] + np.arange(nbytes)]
            if nbytes < 4 * words or nbytes % 4:
                pad = np.zeros(shape + (4 * words,), np.uint8)
                pad[..., :nbytes] = raw
                raw = pad
            out = np.ascontiguousarray(raw).view("<u4").reshape(shape + (words,))
        if full:
            return out
        return np.where(sel[..., None], out, np.uint32(0))

    def store(self, space, instr, addr, mask, data, nbytes, w, N):
        if (
            space == "global"
            and nbytes == 4
            and len(data) == 1
            and type(mask) is np.ndarray
            and type(addr) is np.ndarray
            and mask.ndim == 2
            and mask.shape[0] == N
            and mask.dtype == np.bool_
            and addr.shape == mask.shape
            and addr.dtype == np.uint64
        ):
            x = data[0]
            if type(x) is np.ndarray and x.shape == mask.shape and x.dtype == np.uint32:
                if self._store_dword(addr, mask, x):
                    return
        shapes = [np.shape(addr), np.shape(mask)] + [np.shape(d) for d in data]
        shape = shapes[0] if shapes.count(shapes[0]) == len(shapes) else np.broadcast_shapes(*shapes)
        shape = (N, shape[1] if len(shape) == 2 else 1)
        mask = np.asarray(mask)
        full = bool(mask) if mask.ndim == 0 else bool(mask.all())
        if not full and not mask.any():
            return
        if space == "global" and self._store_global(addr, mask, full, shape, data, nbytes):
            return
        mask = np.broadcast_to(mask, shape)
        addr = np.broadcast_to(addr, shape)
        if space == "scratch" and len(data) == 1 and self.m.program.instructions[instr].encoding == "SCRATCH":
            parts = self._scratch_split(addr, mask, nbytes)
            if parts is not None:
                d = np.asarray(data[0], np.uint32)
                for k, a in enumerate(parts):
                    self.store(space, instr, a, mask, ((d >> np.uint32(8 * k)) & np.uint32(0xFF),), 1, w, N)
                return
        arena, written, idx, ok = self._space(space, w, addr, nbytes)
        if ok is None:
            sel = mask
        else:
            bad = mask & ~ok
            if space != "lds" and bad.any():
                self._escape(instr, w, bad, addr, "scratch" if space == "scratch" else "store")
            sel = mask & ok
            full = full and bool(ok.all())
            if not full and not sel.any():
                return
        if nbytes % 4 == 0 and len(data) * 4 == nbytes and not (idx & 3).any():
            # whole aligned dwords: one scatter per dword
            a32 = arena.view(np.uint32)
            cells = (idx >> 2).reshape(-1) if full else (idx >> 2)[sel]
            for j, d in enumerate(data):
                v = np.broadcast_to(np.asarray(d, np.uint32), shape)
                a32[cells + j] = v.reshape(-1) if full else v[sel]
            if written is not None:
                self.win.dirty = None  # (its range not worked out: spans() looks everywhere)
                w32 = written.view(np.uint32)
                for j in range(len(data)):
                    w32[cells + j] = 0x01010101
            return
        if full:
            sel = np.ones(shape, bool)
        words = np.stack([np.broadcast_to(np.asarray(d, np.uint32), shape) for d in data], -1)
        bytes_ = np.ascontiguousarray(words[sel]).view(np.uint8).reshape(-1, 4 * len(data))[:, :nbytes]
        pos = idx[sel][:, None] + np.arange(nbytes)
        arena[pos] = bytes_
        if written is not None:
            self.win.dirty = None  # (as above)
            written[pos] = True

    def atomic(self, space, instr, op, bits, addr, mask, data, cmp, w, N):
        shape = (N, self.L)
        mask = np.broadcast_to(mask, shape)
        t = np.uint64 if bits == 64 else np.uint32
        out = np.zeros(shape, t)
        if not mask.any():
            return out
        nb = bits // 8
        addr = np.broadcast_to(addr, shape)
        # the cell the atomic works on is the aligned one: those are the bytes checked
        cell = (
            np.asarray(addr, np.uint64) & np.uint64(~(nb - 1) & 0xFFFFFFFFFFFFFFFF)
            if space == "global"
            else addr
        )
        cells = None
        if space == "global":  # fast path: active lanes inside one window
            a = cell[mask]
            d = self.win.locate(int(a.min()), int(a.max()), nb)
            if d is not None:
                arena, written, sel = self.win.arena, self.win.written, mask
                cells = (a.view(np.int64) + d) // nb
        if cells is None:
            arena, written, idx, ok = self._space(space, w, cell, nb)
            if ok is None:
                ok = np.ones(shape, bool)
            bad = mask & ~ok
            if bad.any() and space != "lds":
                self._escape(instr, w, bad, addr, "atomic")
            sel = mask & ok
            if not sel.any():
                return out
            cells = idx[sel] // nb
        d = np.broadcast_to(np.asarray(data, t), shape)[sel]
        c = None if cmp is None else np.broadcast_to(np.asarray(cmp, t), shape)[sel]
        old = atomics.apply(arena.view(t), cells, op, d, c, t)
        out[sel] = old
        if written is not None:  # the nb bytes of each cell, one scatter
            self.win.dirty = None  # (as in store)
            written.view(t)[cells] = t(0x0101010101010101 if nb == 8 else 0x01010101)
        return out

    # --------------------------------------------------------------------------- running
    def run(self):
        cfg = self.cfg
        gx, gy, gz = cfg.num_groups
        total = gx * gy * gz
        if total == 0:
            return
        bx, by, bz = cfg.block
        per_group_waves = -(-(bx * by * bz) // self.L)
        self.native = WAVE_STATE is None and (
            NATIVE == "on" or (NATIVE == "auto" and total * per_group_waves >= NATIVE_MIN_WAVES)
        )
        if self.native and self._native_library(self._mode_word()) is NT.COMPILING:
            self.native = False  # this dispatch runs as NumPy blocks throughout
        small = WAVE_STATE is None and NATIVE == "auto" and not self.native
        if small:
            lib = self.m.blocks.native_known(self._mode_word())
            if lib is not None:
                self.native, self.native_origin = True, lib.origin
        if self.native or not small:
            self._run(total, per_group_waves)
            return
        t0 = time.thread_time()
        self._run(total, per_group_waves)
        m = self.m
        m.numpy_seconds += time.thread_time() - t0
        m.numpy_runs += 1
        if NATIVE_AFTER_S and (
            m.numpy_seconds >= NATIVE_AFTER_S or (m.numpy_runs >= 2 and _source_s(m) <= NATIVE_AFTER_S)
        ):
            # (after this dispatch's own run: its source made, compiled in the background unless
            # the disk has it; a later dispatch finds it ready through native_known)
            self._native_library(self._mode_word())

    def _run(self, total, per_group_waves):
        cfg = self.cfg
        bx, by, bz = cfg.block
        # NumPy blocks only: every write to the written map is one of this runtime's stores,
        # which mark what they write (WindowSet.mark; a path that does not know its range drops
        # the bound): spans() looks only there.  Native code: no bound (set anew each run, so a
        # window set run again never keeps an earlier run's bound)
        self.win.dirty = [self.win.nbytes, 0] if not self.native and self.win.arena is not None else None
        nv = max(self.m.program.max_vgpr + 1, 3)
        self.wave_base = 0
        if self.native and NATIVE_DRIVER and per_group_waves <= NT.MAX_GROUP_WAVES:
            lib = self._native_library(self._mode_word())
            if lib.drive is not None:
                self._drive(lib, nv, total, per_group_waves)
                if self.progress is not None:
                    self.progress(total, total)  # (the driver's threads report nothing sooner)
                return
        per_wave = (
            4 * (nv * self.L + NUM_SREGS) + cfg.lds_bytes // max(per_group_waves, 1) + cfg.scratch_wave_bytes
        )
        groups_per_batch = max(1, STATE_BYTES // max(per_wave * per_group_waves, 1))
        # NumPy blocks want small batches (temporaries stay in cache); native blocks keep their
        # temporaries per wave, so fewer, larger batches only save per-batch work
        cap = BATCH_WAVES and BATCH_WAVES * (NATIVE_BATCH_FACTOR if self.native else 1)
        if cap:
            groups_per_batch = max(1, min(groups_per_batch, cap // max(per_group_waves, 1)))
        self.win.copy_all()  # (NumPy and native blocks read the arena only)
        for g0 in range(0, total, groups_per_batch):
            g1 = min(total, g0 + groups_per_batch)
            self._run_batch(np.arange(g0, g1), nv)
            if self.progress is not None:
                self.progress(g1, total)

    def _run_batch(self, groups, nv):
        cfg = self.cfg
        L = self.L
        gx, gy, gz = cfg.num_groups
        sx, sy, sz = cfg.group_start
        gid_x = groups % gx + sx
        gid_y = (groups // gx) % gy + sy
        gid_z = groups // (gx * gy) + sz
        bx, by, bz = cfg.block
        px, py, pz = cfg.partial if cfg.partial_tg else cfg.block
        ex, ey, ez = cfg.group_end
        tx = np.where((gid_x == ex - 1) & bool(cfg.partial_tg) & (px > 0), px, bx)
        ty = np.where((gid_y == ey - 1) & bool(cfg.partial_tg) & (py > 0), py, by)
        tz = np.where((gid_z == ez - 1) & bool(cfg.partial_tg) & (pz > 0), pz, bz)
        threads = tx * ty * tz
        wpg = -(-threads // L)
        n = int(wpg.sum())
        grp = np.repeat(np.arange(len(groups)), wpg)
        first = np.repeat(np.cumsum(wpg) - wpg, wpg)
        k = np.arange(n) - first  # wave index within group
        # Local ids and EXEC depend only on the group's shape and the wave's index in it: one
        # small table per distinct shape (one, or a few with partial groups), then row copies
        # instead of (n, L) int64 divisions (the native driver computes the same: native.py).
        shape = (tx != bx) + 2 * (ty != by) + 4 * (tz != bz)  # which dims are partial
        present = np.flatnonzero(np.bincount(shape, minlength=8))
        tabs = [
            self._local_ids(px if c & 1 else bx, py if c & 2 else by, pz if c & 4 else bz)
            for c in present.tolist()
        ]
        slot = np.zeros(8, np.int64)
        slot[present] = np.cumsum([0] + [len(tb[0]) for tb in tabs[:-1]])
        row = slot[shape[grp]] + k
        lid_x, lid_y, lid_z, exec_bits = (
            tabs[0] if len(tabs) == 1 else (np.concatenate(x) for x in zip(*tabs))
        )
        self.batch_waves = n
        self.wave_group = grp
        S = self._zeros("S", (NUM_SREGS, n, 1), np.uint32)
        V = self._zeros("V", (nv, n, L), np.uint32)
        for i, v in enumerate(cfg.user_sgprs):
            S[i] = np.uint32(v & 0xFFFFFFFF)
        sysr = cfg.system_sgprs
        for key, vals in (("workgroup_id_x", gid_x), ("workgroup_id_y", gid_y), ("workgroup_id_z", gid_z)):
            if key in sysr:
                S[sysr[key], :, 0] = vals[grp].astype(np.uint32)
        if "tg_size" in sysr:
            # [5:0] waves in the group, [11:6] this wave's index (GFX10), [24:20] the wave id
            # (GFX10.3, Mesa ac_nir_lower_intrinsics_to_args) — docs/decisions/0011-tg-size.md
            tg = wpg[grp] | (k << 6)
            if cfg.target == "gfx1030":
                tg = tg | (k << 20)
            S[sysr["tg_size"], :, 0] = tg.astype(np.uint32)
        if "scratch_wave_offset" in sysr:
            S[sysr["scratch_wave_offset"]] = 0  # D954: the offset reads zero
        e = exec_bits[row]
        if L == 32:
            S[EXEC_LO, :, 0] = e
        else:
            S[EXEC_LO, :, 0] = (e & 0xFFFFFFFF).astype(np.uint32)
            S[EXEC_HI, :, 0] = (e >> 32).astype(np.uint32)
        S[MODE_REG] = self._mode_word()
        # every group of one shape: its table repeated (a broadcast copy; take is slower)
        same = len(tabs) == 1 and len(lid_x) * len(groups) == n

        def put(r, tab):
            if same:
                V[r].reshape(len(groups), -1, L)[...] = tab
            else:
                np.take(tab, row, axis=0, out=V[r])

        if cfg.packed_local_ids:
            put(0, lid_x | (lid_y << 10) | (lid_z << 20))
        else:
            put(0, lid_x)
            if cfg.tidig_comp_cnt >= 1:
                put(1, lid_y)
            if cfg.tidig_comp_cnt >= 2:
                put(2, lid_z)
        self.S, self.V = S, V
        self.lds_bytes = cfg.lds_bytes
        self.lds_stride = self._lds_stride()
        self.lds = self._zeros("lds", (len(groups) * self.lds_stride + 8,), np.uint8)
        self.scratch = ScratchStore(n, cfg.scratch_wave_bytes, self.mode, L)
        if self.native:
            self.native_ctx, self._native_state = NT.new_context(
                self.win,
                S,
                V,
                n,
                self.lds,
                self.lds_stride,
                self.lds_bytes,
                grp,
                MAX_ESCAPES - len(self.escapes),
                self._native_scratch(self.scratch.arena),
            )
        self._schedule(n, grp)
        self.wave_base += n
        self.waves_run += n

    def _native_scratch(self, arena):
        """The native context's scratch (native.new_context): ``arena`` holds wave w's private
        bytes at w * wave bytes; None when the dispatch has none."""
        b = self.cfg.scratch_wave_bytes
        return (arena, b, self.mode == "lane") if b else None

    def _mode_word(self):
        """Every wave's MODE register at its start (our layout: frontend/ir.py MODE_REG)."""
        m = self._mode
        if m is None:
            cfg = self.cfg
            m = self._mode = cfg.float_mode | (int(cfg.dx10_clamp) << 8) | (int(cfg.ieee_mode) << 9)
        return m

    def _drive(self, lib, nv, total, group_waves):
        """The whole dispatch through the native driver (native.NATIVE_DRIVER): state per
        workgroup, set up and scheduled in the library; the same values and order as the
        batches below.  Large dispatches split their workgroups over threads in order; the
        result is the serial one (docs/decisions/0013-native-driver.md): a run whose threads
        touched the same memory where order matters is discarded and run again in one thread."""
        cfg = self.cfg
        G, user = self._grid(nv, group_waves)
        least = NATIVE_THREAD_MIN_WAVES
        if self.m.loops is None:
            self.m.loops = loops(self.m.program)
        if self.m.loops:
            least = min(least, NATIVE_THREAD_MIN_LOOP_WAVES)
        bounds, align = (0, total), 1
        nthreads = min(NATIVE_THREADS, total)
        if not self.m.native_serial and total * group_waves >= least:
            # threads that have not met: NATIVE_RANGES_PER_THREAD ranges a thread, claimed in
            # order (_drive_parts); after a race, one range a thread as before (decision 0030)
            ranges = nthreads
            if nthreads > 1 and self.m.native_align <= 1:
                # (no range smaller than a chunk: a smaller one runs fewer waves per block call)
                ranges = max(
                    nthreads, min(nthreads * NATIVE_RANGES_PER_THREAD, total // int(G[NT.GRID["chunk"]]))
                )
            bounds, align = thread_split(total, cfg.num_groups[0], ranges, self.m.native_align)
        self.native_driver = True

        def attempt(bounds):
            parts = self._drive_parts(lib, G, user, nv, group_waves, bounds)
            stored = any(X[NT.CTX["ro_written"]] for X, _, _ in parts)
            read = any(X[NT.CTX["blank_read"]] for X, _, _ in parts)
            if stored or read:
                # it stored into a window it had not written before, or read one it had only
                # written: that guess ends for the program
                self.m.alias_ok &= not stored
                self.m.blank_ok &= not read
                self.win.refill()
                self.win.copy_all()
                parts = self._drive_parts(lib, G, user, nv, group_waves, bounds)
            return parts

        parts = attempt(bounds)
        if len(parts) > 1 and self._ranges_met(lib, parts):
            # this program's ranges met: this run again in one thread, and from now on one
            # range a thread, of power-of-two chunks of rows, at least twice the last (serial
            # once that leaves one range even for this dispatch: thread_split).  The several
            # ranges a thread of align 1 refine the most even split over the threads (their
            # bounds include its bounds): as before them, that split counts as the one that met
            met = bounds if align > 1 else thread_split(total, cfg.num_groups[0], nthreads, 1)[0]
            nxt = 2 * align
            while True:  # (a split that is the one that met is no step)
                b2, a2 = thread_split(total, cfg.num_groups[0], nthreads, nxt)
                if len(b2) == 2 or b2 != met:
                    break
                nxt = 2 * a2
            self.m.native_align, self.m.native_serial = nxt, len(b2) == 2
            self.win.refill()
            parts = attempt((0, total))
        self.native_threads = min(NATIVE_THREADS, len(parts))
        self.windows_aliased, self.windows_blank = len(self.win.aliased), len(self.win.blank)
        rows = (
            self._touch_rows if self._touch_rows is not None and len(self._touch_rows) == len(parts) else None
        )
        if len(parts) == 1 and rows is None:  # (one range: its few windows' rows as a list)
            t = parts[0][1].touch.tolist()  # per window: read lo, hi, write lo, hi
            read = [k for k in range(len(t) // 4) if t[4 * k] < t[4 * k + 1]]
            written = [k for k in range(len(t) // 4) if t[4 * k + 2] < t[4 * k + 3]]
        else:
            if rows is not None:  # (the ranges' rows in place, one array: no stack of them)
                rng = rows.reshape(len(parts), -1, 2, 2)
                used = (rng[..., 0] < rng[..., 1]).any(axis=0)  # [window, read/write]
            else:
                used = self._touched(parts)[1].any(axis=0)
            read, written = np.flatnonzero(used[:, 0]).tolist(), np.flatnonzero(used[:, 1]).tolist()
        self.win.maybe_written = set(written)
        # the write hulls the ranges settled (wl_settle): their bytes written, their marks
        # cleared; only in a run kept whole (a discarded one was refilled above, and a serial
        # run settles none)
        if rows is not None and self._settled_rows is not None:
            pi, ki = np.nonzero(self._settled_rows)
            self.win.settle(
                zip(ki.tolist(), rng[pi, ki, 1, 0].tolist(), rng[pi, ki, 1, 1].tolist(), strict=True)
            )
        else:
            self.win.settle(())
        self.m.driven = True
        ws = self.win.windows
        self.m.written_windows |= {(ws[k].address, ws[k].size) for k in self.win.maybe_written}
        self.m.read_windows |= {(ws[k].address, ws[k].size) for k in read}
        C = NT.CTX
        Xs = self._x_rows if rows is not None else None
        if Xs is not None and not (
            Xs[:, C["esc_count"]].any() or Xs[:, C["stop"]].any() or (Xs[:, C["refuse"]] >= 0).any()
        ):
            # no range escaped, stopped or refused: the loop below's sums, over the rows at once
            self.waves_run += int(Xs[:, C["wave0"]].sum()) - sum(p[2] for p in parts)
            self.instructions += int(Xs[:, C["instructions"]].sum())
            self.lane_instructions += int(Xs[:, C["lanes"]].sum())
            self.native_runs += len(parts)
            Xs[:, C["lanes"]] = 0
            parts = []
        for X, st, start in parts:  # in workgroup order: the serial run's report
            self.waves_run += int(X[C["wave0"]]) - start
            self.instructions += int(X[C["instructions"]])
            # the escapes a serial run records: the first MAX_ESCAPES in order (each range
            # recorded up to that many of its own)
            X[C["esc_n"]] = min(int(X[C["esc_n"]]), max(0, MAX_ESCAPES - len(self.escapes)))
            self.native_after(X, lib.refusals, st.esc, 0)
            stop = int(X[C["stop"]])
            if stop == NT.STOP_BUDGET:
                raise Refused("dispatch.budget_exceeded", f"a wave ran more than {self.budget} instructions")
            if stop == NT.STOP_BAD_ADDRESS:
                raise Refused("program.bad_address", "control runs past the decoded program")
            if stop == NT.STOP_TIME:
                self.deadline.refuse()
            if stop == NT.STOP_BAD_JUMP:
                ins = self.m.program.instructions[self.m.program.blocks[int(X[C["bad_block"]])].instrs[-1]]
                raise Refused(
                    "program.bad_jump",
                    f"s_setpc/s_swappc at offset {ins.offset:#x} jumps to "
                    f"{int(X[C['bad_pc']]) & 0xFFFFFFFFFFFFFFFF:#x}, not a decoded instruction of the program",
                )
        if self._kept is not None and not self.m.kept and self._kept.nbytes <= KEEP_MAX_BYTES:
            self.m.kept.append(self._kept)  # (its run folded in: the next one may take it)
        self._kept = None

    def _serial_words(self, nv, lds_stride, chunk):
        """The context words and state of a one-range run (native.KeptContext): over the arrays
        this module's last one-range run of the same shapes kept (taken from ``Module.kept``,
        given back by _drive once the run is folded in), else new ones."""
        cfg, W = self.cfg, NT.MAX_GROUP_WAVES
        esc_cap = MAX_ESCAPES - len(self.escapes)
        shape = (
            nv,
            self.L,
            chunk * lds_stride,
            lds_stride,
            cfg.lds_bytes,
            cfg.scratch_wave_bytes,
            self.mode,
            esc_cap,
        )
        try:
            k = self.m.kept.pop()  # (atomic: a run in another thread makes its own)
        except IndexError:
            k = None
        if k is None or k.shape != shape:
            scratch = self._native_scratch(np.zeros(W * cfg.scratch_wave_bytes + 8, np.uint8))
            k = NT.KeptContext(
                _zeros64(NUM_SREGS * W, np.uint32),
                _zeros64(nv * W * self.L, np.uint32),
                W,
                np.zeros(chunk * lds_stride, np.uint8),
                lds_stride,
                cfg.lds_bytes,
                np.zeros(W, np.int64),
                esc_cap,
                scratch,
                shape,
            )
        self._kept = k
        return k.words(self.win)

    def _grid(self, nv, group_waves):
        """The driver's grid words and user SGPRs (native.GRID_FIELDS) -> (G, user): those of
        this module's last run with the same config object (held: its id is its own) with the
        same system SGPRs (DispatchConfig is frozen but for that dict), budget, register count
        and wave count, neither with a deadline (Module.grids; the driver only reads them)."""
        cfg = self.cfg
        sysr = cfg.system_sgprs
        kept = self.m.grids.get(id(cfg))
        if (
            self.deadline is None
            and kept is not None
            and kept[0] is cfg
            and kept[1] == (self.budget, nv, group_waves)
            and kept[4] == sysr
        ):
            self._grid_at = kept[5]
            return kept[2], kept[3]
        user = np.array([v & 0xFFFFFFFF for v in cfg.user_sgprs] or [0], np.uint32)
        # G by everything ``vals`` below reads (another config object of the same registers
        # but the user SGPRs' values -- the tinygrad hook's next kernarg address -- has the
        # same G; only ``user`` is its own)
        vkey = None
        if self.deadline is None:
            vkey = (
                "words",
                cfg.num_groups,
                cfg.group_start,
                cfg.block,
                cfg.partial,
                bool(cfg.partial_tg),
                cfg.group_end,
                bool(cfg.packed_local_ids),
                cfg.tidig_comp_cnt,
                len(cfg.user_sgprs),
                tuple(sorted(sysr.items())),
                cfg.target,
                cfg.lds_bytes,
                self._mode_word(),
                self.budget,
                nv,
                group_waves,
            )
            words = self.m.grids.get(vkey)
            if words is not None:
                return self._keep_grid(cfg, nv, group_waves, words, user, vkey)
        G = np.zeros(len(NT.GRID_FIELDS), np.int64)
        vals = dict(
            zip(("gx", "gy", "gz"), cfg.num_groups),
            **dict(zip(("sx", "sy", "sz"), cfg.group_start)),
            **dict(zip(("bx", "by", "bz"), cfg.block)),
            **dict(zip(("px", "py", "pz"), cfg.partial if cfg.partial_tg else cfg.block)),
            **dict(zip(("ex", "ey", "ez"), cfg.group_end)),
            partial=int(bool(cfg.partial_tg)),
            nsreg=NUM_SREGS,
            nv=nv,
            packed=int(bool(cfg.packed_local_ids)),
            tidig=cfg.tidig_comp_cnt,
            user_n=len(cfg.user_sgprs),
            sys_x=sysr.get("workgroup_id_x", -1),
            sys_y=sysr.get("workgroup_id_y", -1),
            sys_z=sysr.get("workgroup_id_z", -1),
            sys_tg=sysr.get("tg_size", -1),
            sys_scratch=sysr.get("scratch_wave_offset", -1),
            tg_id20=int(cfg.target == "gfx1030"),
            mode=self._mode_word(),
            budget=self.budget,
            chunk=self._chunk_groups(group_waves),
            deadline=0 if self.deadline is None else self.deadline.ns,
            code_base=(self.m.meta.base_address + (1 << 63)) % (1 << 64) - (1 << 63),  # (as i64)
        )
        for k, v in vals.items():
            G[NT.GRID[k]] = v
        if vkey is not None:
            G.flags.writeable = False  # (shared by config objects: never written after this)
            return self._keep_grid(cfg, nv, group_waves, (G, G.ctypes.data), user, vkey)
        return G, user

    def _keep_grid(self, cfg, nv, group_waves, words, user, vkey):
        """Keep ``words`` -- (G, its address): a config object of the same registers takes the
        address too (``ctypes.data`` of a read-only array, ~2 us) -- by ``vkey``, and this config
        object's words by its id, for _grid (kept.keep: the oldest dropped past GRIDS)."""
        grids = self.m.grids
        G, at_G = words
        keep(grids, vkey, words, GRIDS)
        # (the user SGPRs' array is new and writable: native.address_of, ~0.5 us)
        at = self._grid_at = (G, at_G, NT.address_of(user))
        keep(
            grids, id(cfg), [cfg, (self.budget, nv, group_waves), G, user, dict(cfg.system_sgprs), at], GRIDS
        )
        return G, user

    def _chunk_groups(self, group_waves):
        """Workgroups the driver runs together (native.NATIVE_DRIVER)."""
        return max(1, min(NT.MAX_GROUP_WAVES // group_waves, NT.CHUNK_LDS_BYTES // self._lds_stride()))

    def _lds_stride(self):
        b = self.cfg.lds_bytes
        return b + (-b) % 8 + 8

    def _drive_parts(self, lib, G, user, nv, group_waves, bounds):
        """Run the workgroup ranges [bounds[i], bounds[i + 1]) (thread_split: whole rows of
        workgroups, so a tiled kernel's ranges touch disjoint bytes, _races) over at most
        NATIVE_THREADS threads -> per range (context words, state, its first wave's index).

        Each thread claims the next range not yet claimed, in order, and runs it to its end
        before it claims another: a thread that starts late or loses its core leaves its share
        to the others.  Each range has its own context words, escape records and touch ranges
        (the race check is per range, whichever thread ran it); a thread's register state, LDS,
        scratch and wave tables serve the ranges it runs in turn, as they serve one range's
        chunks (the driver zeroes what a chunk can read at its start)."""
        cfg, L = self.cfg, self.L
        lds_stride, W = self._lds_stride(), NT.MAX_GROUP_WAVES
        ranges = len(bounds) - 1
        self._touch_rows = self._settled_rows = self._x_rows = None
        if ranges == 1 and KEEP_CONTEXT:
            X, st = self._serial_words(nv, lds_stride, int(G[NT.GRID["chunk"]]))
            at = self._grid_at
            G_at, user_at = at[1:] if at is not None and at[0] is G else (G.ctypes.data, user.ctypes.data)
            lib.drive(self._kept.X_at, G_at, user_at, bounds[0], bounds[1])
            return [(X, st, 0)]
        threads = min(NATIVE_THREADS, ranges)
        base = []  # per thread: (context words, state) pointing at its own arrays
        for t in range(threads):
            state = (
                _zeros64(NUM_SREGS * W, np.uint32),
                _zeros64(nv * W * L, np.uint32),
                np.zeros(int(G[NT.GRID["chunk"]]) * lds_stride, np.uint8),
                np.zeros(W, np.int64),
                self._native_scratch(np.zeros(W * cfg.scratch_wave_bytes + 8, np.uint8)),
            )
            if t:  # (the first thread's words with this thread's arrays)
                base.append(NT.thread_context(*base[0], *state))
                continue
            S, V, lds, grp, scratch = state
            esc_cap = MAX_ESCAPES - len(self.escapes)
            base.append(
                NT.new_context(self.win, S, V, W, lds, lds_stride, cfg.lds_bytes, grp, esc_cap, scratch)
            )
        if ranges == 1:
            X, st = base[0]
            lib.drive(X.ctypes.data, G.ctypes.data, user.ctypes.data, bounds[0], bounds[1])
            return [(X, st, 0)]
        C = NT.CTX
        st0 = base[0][1]
        # per range: its own escape records and touch ranges (fresh: empty), its context words
        # made from the claiming thread's when it is claimed; each range's rows on cache lines
        # of their own (two threads' ranges next to each other would share a line that both
        # write at every access: the touch ranges, the counters)
        esc = _rows64(ranges, st0.esc.size, np.uint64)
        touch = _rows64(ranges, st0.touch.size, np.int64)
        touch[:] = st0.touch
        self._touch_rows = touch  # (the race check reads them in place: _ranges_met)
        settled = _rows64(ranges, st0.touch.size // 4, np.uint8)
        Xs = self._x_rows = _rows64(ranges, len(NT.CTX_FIELDS), np.int64)
        parts = []
        G_at, user_at = G.ctypes.data, user.ctypes.data
        start = 0  # (each range's first wave: the waves of the ranges before it, counted once)
        for i in range(ranges):
            if i:
                start += lib.waves(G_at, bounds[i - 1], bounds[i])
            parts.append((Xs[i], _RangeState(esc[i], touch[i], settled[i]), start))
        esc_at, touch_at, X_at = esc.ctypes.data, touch.ctypes.data, Xs.ctypes.data
        esc_step, touch_step, X_step = esc.strides[0], touch.strides[0], Xs.strides[0]
        Xs[:, C["esc"]] = esc_at + esc_step * np.arange(ranges)
        Xs[:, C["touch"]] = touch_at + touch_step * np.arange(ranges)
        Xs[:, C["wave0"]] = [p[2] for p in parts]
        Xs[:, C["refuse"]] = -1  # (a range never claimed: nothing run, nothing refused)
        if lib.drive_ranges is not None:  # the claims in the library (native_driver.h)
            # (each range settles its write hulls as it ends: wl_settle)
            Xs[:, C["settled"]] = settled.ctypes.data + settled.strides[0] * np.arange(ranges)
            self._settled_rows = settled
            b = np.array(bounds, np.int64)
            claim = np.zeros(1, np.int64)
            b_at, claim_at = b.ctypes.data, claim.ctypes.data

            def go(t):
                lib.drive_ranges(base[t][0].ctypes.data, X_at, X_step, G_at, user_at, b_at, ranges, claim_at)

        else:  # a library from an older source: the claims here (next() holds the GIL)
            claims = iter(range(ranges))

            def go(t):
                X0 = base[t][0]
                for i in claims:
                    X = Xs[i]
                    esc_i, touch_i = X[C["esc"]], X[C["touch"]]
                    X[:] = X0
                    X[C["esc"]], X[C["touch"]], X[C["wave0"]] = esc_i, touch_i, parts[i][2]
                    lib.drive(X_at + i * X_step, G_at, user_at, bounds[i], bounds[i + 1])
                    if X[C["stop"]] or X[C["refuse"]] >= 0 or X[C["blank_read"]]:
                        break  # (the first stop in order is the dispatch's; see native_driver.h)

        # this thread claims too (nothing to hand over or wake), the others in the pool (ctypes
        # lets go of the GIL during the call)
        rest = [_pool().submit(go, t) for t in range(1, threads)]
        go(0)
        for f in rest:
            f.result()
        return parts

    @staticmethod
    def _touched(parts):
        """The threads' touch ranges (native.wl_touch) -> (ranges [thread, window, read/write,
        lo/hi], whether each is non-empty [thread, window, read/write])."""
        rng = np.stack([st.touch.reshape(-1, 2, 2) for _, st, _ in parts])
        return rng, rng[..., 0] < rng[..., 1]

    def _ranges_met(self, lib, parts) -> bool:
        """_races, by the library's wl_races over the ranges' touch rows where it has one (the
        same test in one pass, without the array passes' set-up), else in NumPy."""
        rows = self._touch_rows
        if getattr(lib, "races", None) is not None and rows is not None and len(rows) == len(parts):
            return bool(lib.races(rows.ctypes.data, rows.strides[0], len(rows), rows.shape[1] // 4))
        return self._races(parts)

    def _races(self, parts) -> bool:
        """Whether the ranges' order could have mattered: each range keeps, per window, the
        arena range it read and the range it wrote (native.wl_touch); a range one part wrote
        that meets a range another part read or wrote could hold a byte both touched.  Parts,
        not threads: which thread ran which range is timing, the answer must not be."""
        rng, used = self._touched(parts)  # [part, window, read/write, lo/hi], [part, window, r/w]
        T = len(parts)
        wlo, whi, wused = rng[:, None, :, 1, 0], rng[:, None, :, 1, 1], used[:, None, :, 1]  # [t, 1, k]
        other = ~np.eye(T, dtype=bool)[:, :, None]  # [t, u, 1]
        for kind in (0, 1):
            lo, hi, u = (
                rng[None, :, :, kind, 0],
                rng[None, :, :, kind, 1],
                used[None, :, :, kind],
            )  # [1, u, k]
            if (other & wused & u & (wlo < hi) & (lo < whi)).any():
                return True
        return False

    def _zeros(self, name, shape, dtype):
        """A zeroed state array, reusing the previous batch's when the shape is the same:
        refilling costs a memset, a fresh large allocation page faults on every first touch."""
        bufs = self._bufs
        a = bufs.get(name)
        if a is not None and a.shape == shape and a.dtype == dtype:
            a.fill(0)
            return a
        a = bufs[name] = np.zeros(shape, dtype)
        return a

    def _local_ids(self, tx, ty, tz):
        """-> (lx, ly, lz) u32 [waves of the group, L] and EXEC bits [waves] of a tx*ty*tz group."""
        key = (tx, ty, tz)
        cache = self._lid_cache
        if key not in cache:
            L = self.L
            thr = tx * ty * tz
            t = np.arange(-(-thr // L) * L, dtype=np.int64).reshape(-1, L)  # thread index
            if ty == 1 and tz == 1:  # 1-D shape: lx = thread index (no modulo)
                lx, ly, lz = t, 0 * t, 0 * t
            else:
                lx, ly, lz = t % tx, (t // tx) % ty, t // (tx * ty)
            bits = np.packbits(t < thr, axis=1, bitorder="little").view("<u4" if L == 32 else "<u8")
            cache[key] = (lx.astype(np.uint32), ly.astype(np.uint32), lz.astype(np.uint32), bits.reshape(-1))
        return cache[key]

    def _schedule(self, n, grp):
        prog = self.m.program
        meta = self.m.meta
        pc = np.zeros(n, np.int64)
        waiting = np.zeros(n, bool)
        counts = np.zeros(n, np.int64)
        S = self.S
        while True:
            runnable = (pc >= 0) & ~waiting
            if not runnable.any():
                if not waiting.any():
                    break
                alive = pc >= 0
                wait_n = np.bincount(grp, weights=waiting, minlength=grp.max() + 1)
                alive_n = np.bincount(grp, weights=alive, minlength=grp.max() + 1)
                release = (wait_n == alive_n) & (wait_n > 0)
                waiting &= ~release[grp]
                continue
            bi = int(pc[runnable].min())
            sel = runnable & (pc == bi)
            modes = S[MODE_REG, :, 0]
            m0 = int(modes[np.argmax(sel)])
            sel &= modes == m0
            if sel.all():  # every wave: plain slices, no index arrays
                w, N = slice(None), n
            else:
                w = np.flatnonzero(sel)
                N = w.size
            blk = prog.blocks[bi]
            fn = self._fns.get((bi, m0))
            if fn is None:
                nfn = self.native and self._native_fn(bi, m0)
                fn = self._fns[(bi, m0)] = nfn or self.m.block(bi, m0)
                self._native_key[(bi, m0)] = bool(nfn)
            if self.native and not self._native_key[(bi, m0)]:
                self.numpy_runs += 1
                if str(bi) not in self.numpy_blocks:
                    lib = self._native_library(m0)
                    self.numpy_blocks[str(bi)] = (
                        lib.unsupported.get(bi) or getattr(lib, "why", None) or "its library is compiling"
                    )
            with np.errstate(all="ignore"):
                nxt = fn(self, w, N, m0)
            counts[w] += len(blk.instrs)
            self.instructions += N * len(blk.instrs)
            if counts[w].max() > self.budget:
                if WAVE_STATE is not None and not WAVE_STATE:
                    row = int(np.argmax(counts[w] > self.budget))
                    self._wave_state(
                        WAVE_STATE, w, row, 0, prog.instructions[blk.instrs[-1]], None, "budget_exceeded"
                    )
                raise Refused("dispatch.budget_exceeded", f"a wave ran more than {self.budget} instructions")
            if self.deadline is not None:
                try:
                    self.deadline.check()
                except Refused:
                    if WAVE_STATE is not None and not WAVE_STATE:
                        self._wave_state(
                            WAVE_STATE, w, 0, 0, prog.instructions[blk.instrs[-1]], None, "time_exceeded"
                        )
                    raise
            kind = blk.term[0]
            if kind == "setpc":
                addrs = np.asarray(nxt, np.uint64)
                tgt = (
                    np.array([meta.block_of_address(int(a)) for a in addrs], np.int64)
                    if N < 64
                    else _map_addrs(meta, addrs)
                )
                if (tgt == -2).any():
                    a = int(addrs[np.argmax(tgt == -2)])
                    if WAVE_STATE is not None and not WAVE_STATE:
                        self._wave_state(
                            WAVE_STATE,
                            w,
                            int(np.argmax(tgt == -2)),
                            0,
                            prog.instructions[blk.instrs[-1]],
                            a,
                            "bad_jump",
                        )
                    raise Refused(
                        "program.bad_jump",
                        f"s_setpc/s_swappc at offset {prog.instructions[blk.instrs[-1]].offset:#x} "
                        f"jumps to {a:#x}, not a decoded instruction of the program",
                    )
                pc[w] = tgt
            else:
                nxt = np.asarray(nxt)
                if (nxt == -2).any():
                    if WAVE_STATE is not None and not WAVE_STATE:
                        row = int(np.argmax(np.broadcast_to(nxt, (N,)) == -2))
                        self._wave_state(
                            WAVE_STATE, w, row, 0, prog.instructions[blk.instrs[-1]], None, "runs_past"
                        )
                    raise Refused("program.bad_address", "control runs past the decoded program")
                pc[w] = nxt
                if kind == "barrier":
                    waiting[w] = True


@functools.cache
def _lanes(L: int) -> tuple[np.ndarray, np.ndarray]:
    """The lane indices [1, L] as u32 and u64 (Runtime.LANE, LANE64), made once a wave size,
    read-only: shared by every runtime."""
    out = np.arange(L, dtype=np.uint32)[None, :], np.arange(L, dtype=np.uint64)[None, :]
    for a in out:
        a.flags.writeable = False
    return out


def _zeros64(n: int, dtype) -> np.ndarray:
    """A zeroed array of ``n`` items that starts on a 64-byte boundary: the native driver's
    register rows are whole vectors of the lane loops (a row across cache lines split their
    loads and stores, and its speed moved with where the allocator put it)."""
    size = np.dtype(dtype).itemsize
    raw = np.zeros(n * size + 64, np.uint8)
    k = -raw.ctypes.data % 64
    return raw[k : k + n * size].view(dtype)


def _rows64(rows: int, n: int, dtype) -> np.ndarray:
    """A zeroed [rows, n] array whose rows start on 64-byte boundaries (rows that different
    threads write must not share a cache line)."""
    size = np.dtype(dtype).itemsize
    per = -(-n * size // 64) * 64 // size
    return _zeros64(rows * per, dtype).reshape(rows, per)[:, :n]


def _map_addrs(meta, addrs):
    u, inv = np.unique(addrs, return_inverse=True)
    return np.array([meta.block_of_address(int(a)) for a in u], np.int64)[inv]
