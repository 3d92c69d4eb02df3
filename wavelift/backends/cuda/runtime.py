"""Run a CUDA module over a dispatch (CuPy for memory and launches).

Guest memory stays on the device across dispatches (resident.py, decision 0026): the windows
are gathered, device to device, into an arena laid out as trace/windows.WindowSet lays it out;
the kernel runs every workgroup as one CUDA block (or several in one where they share nothing:
decision 0046) and marks a written-byte map; the written runs
are found on the device, and one small report (stats, status, escapes, the runs' count) comes
back, then the runs.  Landing (``land``, called by execute_dispatch only when nothing escaped or
was refused) copies the written bytes into the device copies; the host's bytes follow lazily.
Escapes are counted on the device and the first 16 recorded; budget, bad jumps, a program
running off its end and non-RNE rounding are flags in the status words.
"""

from __future__ import annotations

import sys
import time
from bisect import bisect_right
from typing import Any

import numpy as np

from ... import settings
from ...errors import Refused
from ...kept import keep
from ...run.result import Escape
from . import codegen as G
from . import preload as P_
from . import resident as R
from .memo import by_config

MAX_SCRATCH_BYTES = 1 << 30  # wave-mode scratch held on the device per launch
MAX_GRID = (1 << 31) - 1
# the report buffer read back after a dispatch (one copy): stats (u64: [2] escapes, [8 + 2k],
# [9 + 2k] instruction counts of slot k), status (16 u32), escapes (16 x 8 u32), runs (2 u32)
STATS_BYTES = 8 * (8 + 2 * 256)
INLINE_RUNS = 64  # written runs that come back with the report (more: a second readback)
if INLINE_RUNS > 64:  # (resident.wl_gate checks them in one block of 64 threads: 64 at most)
    raise ImportError("INLINE_RUNS > 64: resident.wl_gate would pass runs it never checked")
RUNS_AT = STATS_BYTES + 576  # the runs' count (2 u32; 8 bytes)
STARTS_AT = RUNS_AT + 8  # then INLINE_RUNS starts and INLINE_RUNS ends (u64)
ENDS_AT = STARTS_AT + 8 * INLINE_RUNS
HINTS_AT = ENDS_AT + 8 * INLINE_RUNS  # then WL_HINT (u32 per access slot)
REPORT_BYTES = HINTS_AT
VERDICT_AT = STATS_BYTES + 60  # status[15]: a deferred dispatch's wl_gate verdict (0: it landed)
# (a report's scalars as indices of its host array's u32 / u64 words: _Slot.words, dwords)
_RUNS_WORD, _VERDICT_WORD = RUNS_AT // 4, VERDICT_AT // 4
_ESCAPES_DWORD, _START_DWORD, _END_DWORD = 2, STARTS_AT // 8, ENDS_AT // 8


class _Mirrored:
    """The bytes of the windows ``ks`` that a mirror may copy (at most codegen.MIRROR_BYTES), as
    codegen.mirrors reads them from an arena (``[o : o + size]`` at a window's arena offset),
    read from guest memory (what the device holds newer comes down first): the runtime keeps no
    host arena (0029)."""

    def __init__(self, win, ks):
        self.at: dict = {}
        for k in ks:
            w = win.windows[k]
            if w.size <= G.MIRROR_BYTES:
                self.at[int(win.offs[k])] = np.frombuffer(win.memory.read(w.address, w.size), np.uint8)

    def __getitem__(self, sl: slice):
        return self.at[sl.start][: sl.stop - sl.start]


# runtime._preloads' results: (module id, user SGPRs, fixed registers, layout id) -> (module,
# layout, [(window index, entry, version) of the device copies read], constants, ranges,
# complete)
_PRELOADS: dict = {}
PRELOADS = 64
_GUESSES: dict = {}  # (module id, layout id) -> (module, layout, hints bytes, guesses' arrays)
GUESSES = 64
# _pointers' results: (id of the guesses' arrays, arena device address) -> (guesses, WL_GA)
_POINTERS: dict = {}


# runtime._mirrors' results: (module id, layout id, hints bytes, mirror) -> (module, layout,
# [(window index, entry, version) of the device copies mirrored], (WL_GM, words, ranges))
_MIRRORS: dict = {}


def _guesses(m, hints, win, hb=None, offs=None):
    """codegen.guesses for module ``m``'s slots, ``hints`` (``hb``: their bytes) and ``win``'s
    tables, kept for the next dispatch with the same module, layout and hints (the arrays are
    not changed); ``offs``: the windows' offsets when not the arena's (a tuple: the heap's, in
    place)."""
    key = (id(m), id(win.layout)) if offs is None else (id(m), id(win.layout), offs)
    hb = hints.tobytes() if hb is None else hb
    hit = _GUESSES.get(key)
    if hit is not None and hit[0] is m and hit[1] is win.layout and hit[2] == hb:
        return hit[3]
    g = G.guesses([nb for nb, _ in m.slots], hints, win.starts, win.ends, win.offs if offs is None else offs)
    keep(_GUESSES, key, (m, win.layout, hb, g), GUESSES)
    return g


def _pointers(g, arena: int) -> np.ndarray:
    """codegen.guess_pointers of the guesses ``g`` (_guesses': kept, never changed) for the arena
    at device address ``arena``, kept while both are the same (the array is not changed:
    put_constant skips it by identity).  The address is part of the key: a launch on another
    arena or heap -- or on copies, the timing repeats -- gets its own WL_GA."""
    key = (id(g), arena)
    hit = _POINTERS.get(key)
    if hit is not None and hit[0] is g:
        return hit[1]
    ga = G.guess_pointers(g, arena)
    ga.flags.writeable = False
    keep(_POINTERS, key, (g, ga), GUESSES)
    return ga


def _proof_input(m, cfg) -> tuple:
    """(the program module ``m``'s kernel lowers, its preload.find, whether its global accesses
    are the module's slots), kept on the module: the program generate lowered (Module.lowered),
    or, for a module read from the disk, lowered here once (codegen.lowered)."""
    from . import globalrange as GR

    got = m.proof_input
    if got is None:
        low = m.lowered
        if low is None:
            low = m.lowered = G.lowered(m.program, cfg.wave_size, G.baked_params(cfg))
        same = [GR.access_bytes(op) for op in GR.global_accesses(low)] == [nb for nb, _ in m.slots]
        got = m.proof_input = (low, P_.find(low), same)
    return got


def _proved_hints(m, cfg, win, pre: list) -> np.ndarray:
    """globalrange's windows of module ``m``'s slots for this dispatch (-1: not proved), on the
    program its kernel lowers (_proof_input) and the words of the preloads the runtime resolved
    (``pre``: WL_PO / WL_PRE), when the program's slots and preloads are the module's (else none
    proved, or evaluated again)."""
    from . import globalrange as GR

    n = len(m.slots)
    out = np.full(n, -1, np.int64)
    low, (loads, plan), same = _proof_input(m, cfg)
    if not same:
        return out  # (not the module's numbering: nothing claimed)
    mine = [(op.instr, op.attrs["nbytes"], op.attrs["words"]) for op in loads]
    if pre and mine == [(op.instr, op.attrs["nbytes"], op.attrs["words"]) for op in m.preloads[0]]:
        po, words = pre[0][1], pre[1][1]
        got = [None if at < 0 else words[at : at + op.attrs["words"]] for op, at in zip(loads, po.tolist())]
    else:
        got = P_.evaluate(
            loads, plan, low, cfg.wave_size, cfg.user_sgprs, set(cfg.system_sgprs.values()), win
        )[0]
    for j, k in enumerate(GR.prove_dispatch(low, cfg, win, loads, got)):
        if k is not None:
            out[j] = k
    return out


# (module id, layout id, budget, config fields) -> (module, layout, words, why, the proved window of
# each access slot of the program the proof ran on -- globalrange.unrefusable's ``windows``)
_UNREFUSABLE: dict = {}


def _unrefusable(m, cfg, win, budget: int, windows: list | None = None) -> str | None:
    """globalrange.unrefusable of this dispatch (None: proved), on the program module ``m``'s
    kernel lowers (_proof_input) with its preload.find, ``win`` (the dispatch's own WindowSet)
    and ``budget``; kept while the module, layout, config, budget and the preloaded words the
    proof read (preload.evaluate: memoised, the words read again) are the same (0049 h124's
    "keep a proof only while what it was made on holds").  ``windows`` (if given) gets the
    proved window of each access slot of that program where it is proved."""
    from . import globalrange as GR
    from .memo import key_of

    low, found, _ = _proof_input(m, cfg)
    loads, pplan = found
    words = P_.evaluate(
        loads, pplan, low, cfg.wave_size, cfg.user_sgprs, set(cfg.system_sgprs.values()), win
    )[0]
    sig = tuple(None if w is None else w.tobytes() for w in words)
    # (the config's key as by_config keeps it for the config object last seen: run's "shape"
    # look-up made it; None where a field cannot be hashed: proved again)
    ck = key_of(cfg)
    key = None if ck is None else (id(m), id(win.layout), int(budget), ck)
    hit = _UNREFUSABLE.get(key) if key is not None else None
    if hit is not None and hit[0] is m and hit[1] is win.layout and hit[2] == sig:
        if windows is not None:
            windows.extend(hit[4])
        return hit[3]
    got: list = []
    why = GR.unrefusable(low, cfg, win, found, budget, windows_out=got)
    if key is not None:
        keep(_UNREFUSABLE, key, (m, win.layout, sig, why, tuple(got)), GUESSES)
    if windows is not None:
        windows.extend(got)
    return why


def _lean_hints(m, windows: list) -> np.ndarray | None:
    """The guesses a dispatch in place on a proof launches module ``m``'s lean build with
    (WAVELIFT_CUDA_PROVED=lean, the default; decision 0049's amendment h148): the proved window of every
    access slot (``windows``: _unrefusable's), or None -- the module's own build -- where the
    setting is off, the module has no slot, a slot has no guess (past codegen.MAX_GUESSES) or
    no proved window, or the program the proof ran on is not numbered as the module's slots
    (_proof_input's ``same``): the lean build's rare path finds no other window."""
    n = len(m.slots)
    if not n or n > G.MAX_GUESSES or len(windows) != n or not G.proved_lean():
        return None
    if any(k is None for k in windows) or not m.proof_input[2]:
        return None
    return np.asarray(windows, np.int64)


_WRITABLE: dict = {}  # (id(program), proved windows) -> (program, globalrange.written_windows)


def _writable(m, windows: list) -> frozenset:
    """The windows module ``m``'s lean build can store into on the proved ``windows`` (each
    access slot's, all proved: _lean_hints held) -- globalrange.written_windows of the program
    the proof ran on, kept by it and the windows.  In place, only their map is scanned and
    cleared (decision 0049's amendment h157): the lean build flags an access outside its proved
    window and makes none, so no other window's map can hold a mark.  The module's own build
    may store into any window its search finds (a proof wrong about a window lands unflagged):
    its runs are scanned over every window (None)."""
    low = m.proof_input[0]
    key = (id(low), tuple(windows))
    hit = _WRITABLE.get(key)
    if hit is not None and hit[0] is low:
        return hit[1]
    from . import globalrange as GR

    got = GR.written_windows(low, windows)
    keep(_WRITABLE, key, (low, got), GUESSES)
    return got


_WINDOW_CONSTANTS: dict = {}  # (id(layout), offs) -> (layout, [(name, array)]): WL_WS/WL_WE/WL_WO


def _window_constants(win, offs=None) -> list:
    """The window tables as constants, kept per layout (a pure function of it; the arrays are
    not changed, so Module.put_constant skips them by identity on a repeated launch);
    ``offs``: the windows' offsets when not the arena's (a tuple: the heap's, in place)."""
    lay = win.layout
    key = (id(lay), offs)
    hit = _WINDOW_CONSTANTS.get(key)
    if hit is not None and hit[0] is lay:
        return hit[1]
    out = [
        ("WL_WS", np.asarray(win.starts, np.uint64)),
        ("WL_WE", np.asarray(win.ends, np.uint64)),
        ("WL_WO", np.asarray(win.offs if offs is None else offs, np.int64)),
    ]
    keep(_WINDOW_CONSTANTS, key, (lay, out), GUESSES)
    return out


_REPORT_NAMES = {"status": "WL_STATUS", "stats": "WL_STATS", "esc": "WL_ESC"}
_REPORT_ORDER = ("status", "stats", "esc")
_POINTER_WORDS: dict = {}  # device address -> its one-word uint64 array (never changed)


def _pointer_word(ptr: int) -> np.ndarray:
    """A device pointer as a one-word constant, the same array for the same address (a kept
    report buffer: Module.put_constant skips it by identity)."""
    w = _POINTER_WORDS.get(ptr)
    if w is None:
        w = keep(_POINTER_WORDS, ptr, np.array([ptr], np.uint64), 4 * GUESSES)
    return w


_VIEWS: dict = {}  # id(report) -> (report, its views): kept for the kept report (Resident.staging)


def _report_views(rep, cp) -> tuple:
    """({stats, status, esc}, the runs' count, (inline starts, ends), the one-word constants of
    the status, stats and escape views' device addresses): views of the report ``rep`` (the same
    objects for the same report array: no slicing per dispatch)."""
    hit = _VIEWS.get(id(rep))
    if hit is not None and hit[0] is rep:
        return hit[1]
    views = {
        "stats": rep[:STATS_BYTES].view(cp.uint64),  # [2] escapes; [8 + 2k], [9 + 2k] slot k
        "status": rep[STATS_BYTES : STATS_BYTES + 64].view(cp.uint32),
        "esc": rep[STATS_BYTES + 64 : STATS_BYTES + 576].view(cp.uint32),
    }
    count = rep[RUNS_AT : RUNS_AT + 8].view(cp.uint32)
    inline = (
        rep[STARTS_AT : STARTS_AT + 8 * INLINE_RUNS].view(cp.uint64),
        rep[ENDS_AT : ENDS_AT + 8 * INLINE_RUNS].view(cp.uint64),
    )
    out = (views, count, inline, [_pointer_word(views[n].data.ptr) for n in _REPORT_ORDER])
    keep(_VIEWS, id(rep), (rep, out), 16)
    return out


_HINT_AT: dict = {}  # id(module) -> (module, its loaded CUDA module, (WL_HINT's address, size))


def _hint_address(k) -> tuple[int, int]:
    """k.global_address("WL_HINT"), kept while ``k`` has the same loaded CUDA module (a module
    whose build is replaced loads again: Module.take_upgrade)."""
    mod = getattr(k, "_mod", None)
    hit = _HINT_AT.get(id(k))
    if hit is not None and hit[0] is k and mod is not None and hit[1] is mod:
        return hit[2]
    at = k.global_address("WL_HINT")
    mod = getattr(k, "_mod", None)  # (loaded by then)
    if mod is not None:
        keep(_HINT_AT, id(k), (k, mod, at), GUESSES)
    return at


def _hints_into(k, rep, nslots: int):
    """The copy of ``k``'s guesses (WL_HINT, ``nslots`` access slots) into the report ``rep``
    that wl_runs' launch makes (resident._hint_args; amendment h161 of 0049: no copy of its own
    in the stream or a graph): (report address, WL_HINT's address, bytes), or None (none)."""
    if not nslots:
        return None
    ptr, size = _hint_address(k)
    nb = min(4 * nslots, size)
    return (rep.data.ptr + HINTS_AT, ptr, nb) if nb else None


def _hits(runs, ranges) -> bool:
    """Whether any written run (sorted arena starts, ends) meets one of the (offset, bytes)."""
    starts, ends = runs
    return bool(len(starts)) and _meets(starts.tolist(), ends.tolist(), ranges)


def _meets(s: list, e: list, ranges) -> bool:
    """``_hits`` of the runs as sorted int lists."""
    for o, n in ranges:
        k = bisect_right(e, o)  # first run ending after o
        if k < len(s) and s[k] < o + n:
            return True
    return False


def launch_groups(total: int, full: int, wb: int, groups: int = 1) -> int:
    """Workgroups per launch: all ``total`` in one where the grid and, with wave-mode scratch
    of ``wb`` bytes a wave (``full`` waves a group), MAX_SCRATCH_BYTES allow; else as many as they
    allow, a multiple of ``groups`` (the kernel's workgroups per block, decision 0046: each
    launch but the last fills its blocks, so no group runs in two launches) -- at least
    ``groups`` (one block's scratch, however big: a launch runs whole blocks)."""
    most = MAX_GRID * groups
    if wb:
        most = min(most, MAX_SCRATCH_BYTES // max(full * wb, 1))
    if total <= most:
        return max(total, 1)
    return max(most // groups * groups, groups)


def _no_scratch(res):
    """The one-word scratch array of dispatches without wave-mode scratch (kept: 0029)."""
    if res.spare is None:
        res.spare = res.ops.zeros(8).view(np.uint32)
    return res.spare


def _settle_in_place(
    res, win, plan, placed, pre: list, status, escapes: int, s_: list, e_: list, cleared: bool = False
):
    """An in-place run's report read (decision 0049 step 4), the one place its proof is checked:
    its runs (sorted heap offsets) cleared from the heap's map, then -- a flag (status[0]), an
    escape (recorded, status[4], or counted, ``escapes``), a run meeting a preloaded word
    (``pre``: heap ranges) or a store outside its windows, none of which a proved dispatch can
    have -- its device copies made unusable (Resident.broke_in_place: nothing possibly wrong
    ever lands) -> the refusal's text (``backend.proof``); else its runs booked as its write
    spans, newer on the device (Resident.landed_in_place) -> (spans, bytes, the indices of the
    windows they wrote).  ``cleared``: the
    map it scans (``Placed.scan``) was cleared on the device after the runs scan (a deferred run)."""
    if not cleared:
        res.clear_heap_runs(s_, e_)
    cut = placed.cut(win.windows, s_, e_)
    # (what the runs are to the preloaded words and the windows, once per cut: the same cut
    # object is the same runs -- Placed.cut)
    facts = placed.facts
    if facts is None or facts[0] is not cut or facts[1] != pre:
        facts = placed.facts = (cut, list(pre), bool(pre) and _meets(s_, e_, pre), R.outside(cut, s_, e_))
    bad = []
    if status[0]:
        bad.append(f"flags {int(status[0]):#x}")
    if escapes or status[4]:
        bad.append(f"{max(escapes, int(status[4]))} escape(s)")
    if facts[2]:
        bad.append("a store into a preloaded word")
    if facts[3]:
        bad.append("a store outside its windows")
    if bad:
        why = (
            f"a dispatch run in place on a proof that it cannot be refused reported {', '.join(bad)}; "
            "the device copies it ran on are unusable"
        )
        res.broke_in_place(plan, s_, e_, why)
        return why
    return res.landed_in_place(win, plan, placed, cut)


def _lost_in_place(res, plan, placed, exc: BaseException) -> None:
    """An in-place run whose report could not be settled (an error between its launch and
    ``_settle_in_place``: a device fault, a failed copy): its runs are unknown, so every device
    copy it ran on is made unusable and the bytes only the device held in its windows' hull
    (``Placed.hull``) are lost (``Resident.broke_in_place``) -- the heap's bytes may have
    changed and nothing tells which --, and the hull's map cleared where the device still
    answers (no later run may read these marks as its own)."""
    lo, hi = placed.hull
    why = f"an in-place run's report could not be read ({type(exc).__name__}: {exc}); the device copies it ran on are unusable"
    res.broke_in_place(plan, [lo], [hi], why)
    try:  # (the whole hull's map, not only ``scan``'s: nothing is known of this run)
        res.ops.clear(res.heap.map_over(lo, hi))
    except Exception:  # noqa: BLE001 - the device may be gone: the copies are broken already
        pass


def _counted(counts: bytes) -> tuple[int, int]:
    """A report's per-slot counts (its stats from word 8, as bytes) -> (instructions, lane
    instructions): slot k's at words 2k and 2k + 1, summed as uint64 (as ``_take_report``)."""
    c = np.frombuffer(counts, np.uint64)
    add = np.add.reduce
    return int(add(c[0::2])), int(add(c[1::2]))


def _fold(k, res, stats):
    """wl_fold's call adding the count slots of the build ``k`` (kernel.h's WL_WIDE_SLOTS) into
    a report's (``stats``: its u64 view), to run after each launch before the report is read;
    None where the kernel adds to the report's own 256 (decision 0009's amendment h152)."""
    n = k.count_slots
    if n == G.COUNT_SLOTS:
        return None
    return res.ops.fold_call(res.counts(n), n // G.COUNT_SLOTS, stats)


def _folded_runs(k, res, rep, runs_go):
    """A kept plan's ``runs_go``: wl_runs' call, after wl_fold's of its build ``k``'s count slots
    into the report ``rep`` where it has more than the report's (``_fold``): one call of no
    arguments."""
    fold = _fold(k, res, rep[:STATS_BYTES].view(np.uint64))
    if fold is None:
        return runs_go

    def go() -> None:
        fold()
        runs_go()

    return go


def _cupy():
    """The cupy module: the one ``import cupy`` gives (sys.modules' first; no import statement
    per dispatch once it is there -- a stand-in installed there is the one taken)."""
    cp = sys.modules.get("cupy")
    if cp is None:
        import cupy as cp
    return cp


class Runtime:
    def __init__(self, module, config, windows, mode: str, budget: int):
        self.m = module
        self.cfg = config
        self.win = windows
        self.mode = mode
        self.budget = int(budget)
        self.L = config.wave_size
        self.escapes: list[Escape] = []
        self.escape_count = 0
        self.instructions = 0
        self.lane_instructions = 0
        self.waves_run = 0
        self.land: Any = None  # () -> (spans, bytes): the dispatch's landing (resident.Resident.commit)
        self.again = None  # the plan to run this dispatch again (Again), when it may have one
        self.plan = None  # resident.Resident.prepare's plan, once made (run)
        self.guessed = None  # the guesses' arrays _set_constants put last (None: no slots)
        self.deadline = None  # (execute's: run_runtime sets it; checked before an in-place launch)
        # the proved window of each access slot where an in-place dispatch launches the lean
        # build (_in_place: _lean_hints), else None
        self.lean: np.ndarray | None = None
        # the windows the lean build can store into (_writable), where it launches; else None
        self.writable: frozenset | None = None
        # the module's lean_news as this dispatch began (run), before it asked for its lean build
        # (_prove): a kept plan holds while it is the module's (_Kept._holds)
        self.news: Any = None
        # where the module's cubin came from (the run table's "disk hit": commands/common.py)
        self.extra_stats: dict = {
            "cubin": "disk cache" if getattr(module, "compiled_by", "") == "disk" else "compiled"
        }

    # ------------------------------------------------------------------------ host tables
    def _groups(self):
        """-> (total groups, waves per group (array), full waves per group)."""
        cfg, L = self.cfg, self.L
        gx, gy, gz = cfg.num_groups
        total = gx * gy * gz
        bx, by, bz = cfg.block
        full = -(-(bx * by * bz) // L)
        if not cfg.partial_tg:
            return total, None, full
        g = np.arange(total, dtype=np.int64)
        sx, sy, sz = cfg.group_start
        ex, ey, ez = cfg.group_end
        px, py, pz = cfg.partial
        gid_x, gid_y, gid_z = g % gx + sx, (g // gx) % gy + sy, g // (gx * gy) + sz
        tx = np.where((gid_x == ex - 1) & (px > 0), px, bx)
        ty = np.where((gid_y == ey - 1) & (py > 0), py, by)
        tz = np.where((gid_z == ez - 1) & (pz > 0), pz, bz)
        return total, -(-(tx * ty * tz) // L), full

    def _set_constants(
        self, P: np.ndarray, arena: int, mirror: bool = True, offs: tuple | None = None
    ) -> None:
        """The kernel's constant memory: P, the window tables when they fit (codegen WL_CW;
        the global tables are passed in every case and used beyond that), the accesses' window
        guesses (with their pointers for the launch's arena at device address ``arena``:
        WL_GA) and (``mirror``) copies of the windows uniform loads read (codegen.mirrors) and
        the preloads' words -- in the build launched (self.k: the module's own when every
        preload resolved, else its checked build); self.mirrored: the bytes to check after it.
        ``offs``: a dispatch run in place (decision 0049 step 4): the windows' heap offsets
        for the tables and guesses (``arena``: the heap's), no mirrors (the proof's
        ``store_mirrored`` row assumes a mirror copies only a proved window: none is simpler),
        the preloads as evaluated."""
        win = self.win
        self.mirrored = []
        pre, complete = self._preloads(mirror or offs is not None)
        lean = self.lean  # (set by _prove only: _in_place's, or bench/cuda_costs.py's ``proved``)
        # the module launched (Module.variant): with ``lean``, its lean build (h148)
        self.k = self.m.variant(complete, self.budget, lean is not None)
        put = [("P", P)] + pre
        if lean is not None:  # (never written by the lean build: the hints read back are these)
            put.append(("WL_HINT", lean.astype(np.uint32)))
        if len(win.starts) <= G.CONST_WINDOWS:
            put += _window_constants(win, offs)
        m = self.m
        if m.slots:
            # (the lean build's guesses are its proved windows, whatever m.hints holds by now)
            hints = lean if lean is not None else m.hints if m.hints is not None else self._first_hints(pre)
            hb = hints.tobytes()
            g = self.guessed = _guesses(m, hints, win, hb, offs)
            put += list(zip(("WL_GB", "WL_GL", "WL_GO"), g))
            put.append(("WL_GA", _pointers(g, arena)))
            if any(u for _, u in m.slots):
                gm, words, copied = self._mirrors(hints, hb, g, mirror and offs is None)
                self.mirrored += copied
                put += [("WL_GM", gm), ("WL_MIRROR", words)]
        k = self.k
        kept = getattr(k, "_consts", None)  # (put_constant's last arrays: the same one is skipped)
        for name, host in put:
            if kept is not None:
                last = kept.get(name)
                if last is not None and last[0] is host:
                    continue
            if host.size:
                k.put_constant(name, host if host.flags.c_contiguous else np.ascontiguousarray(host))

    def _point(self, arena) -> None:
        """WL_GA for a launch of the guesses set last (_set_constants) on the device array
        ``arena`` (the timing repeats' copies, then the dispatch's own again)."""
        if self.guessed is not None:
            self.k.put_constant("WL_GA", _pointers(self.guessed, arena.data.ptr))

    def _first_hints(self, pre: list) -> np.ndarray:
        """The hints of a module's first dispatch (none learned yet): -1 (no guess) in every
        slot, or, with WAVELIFT_CUDA_PROVE=on, the window globalrange proves each access lies
        in on this dispatch's values (``pre``: _preloads' constants, whose words it takes).
        Guesses are checked in the kernel, never trusted (0009), so this is exact either way."""
        m = self.m
        n = len(m.slots)
        if settings.get("WAVELIFT_CUDA_PROVE") != "on":
            return np.full(n, -1, np.int64)
        got = getattr(self, "_proved", None)  # (a rerun without mirrors: the same guesses)
        if got is None:
            got = self._proved = _proved_hints(m, self.cfg, self.win, pre)
        return got

    def _mirrors(self, hints, hb: bytes, g, mirror: bool) -> tuple:
        """codegen.mirrors of this dispatch (WL_GM, WL_MIRROR words, the arena ranges copied),
        kept per (module, layout, hints, ``mirror``) while this dispatch's own device copies of
        the windows they copy keep their versions (window index, entry, version: decision 0029;
        the copies are the only bytes mirrors reads, the rest is a function of the key).  The
        arrays are not changed (put_constant skips them by identity)."""
        m, win, plan = self.m, self.win, self.plan
        key = (id(m), id(win.layout), hb, mirror)
        hit = _MIRRORS.get(key)
        if hit is not None and hit[0] is m and hit[1] is win.layout and plan is not None:
            if all(plan[k][0] is e and e.version == v for k, e, v in hit[2]):
                return hit[3]
        ks = (
            {int(hints[j]) for j in range(min(len(m.slots), G.MAX_GUESSES)) if g[1][j] and m.slots[j][1]}
            if mirror
            else set()
        )
        src = _Mirrored(win, ks)
        out = G.mirrors(m.slots, hints, g[1], win.starts, win.ends, win.offs, src, enabled=mirror)
        if plan is not None and all(not plan[k][0].shared for k in ks):
            keep(
                _MIRRORS,
                key,
                (m, win.layout, [(k, plan[k][0], plan[k][0].version) for k in sorted(ks)], out),
                GUESSES,
            )
        return out

    def _preloads(self, enabled: bool) -> tuple[list, bool]:
        """(WL_PO / WL_PRE: the words of the loads whose address the host resolves, each at its
        place (preload.layout; WL_PO: the place, -1 where unresolved), whether every load was
        resolved); the bytes they came from join self.mirrored (written during the dispatch: a
        rerun, without preloads).  Kept per (module, user SGPRs, fixed registers, layout) while
        the device copies of the windows the loads read keep their versions (0029)."""
        m = self.m
        loads, plan = m.preloads
        if not loads:
            return [], True
        if not enabled:
            return [
                ("WL_PO", np.full(len(loads), -1, np.int32)),
                ("WL_PRE", np.zeros(P_.PRELOAD_WORDS, np.uint32)),
            ], False
        cfg = self.cfg
        fixed = frozenset(cfg.system_sgprs.values())
        key = (id(m), tuple(int(v) & 0xFFFFFFFF for v in cfg.user_sgprs), fixed, id(self.win.layout))
        hit = _PRELOADS.get(key)
        plan_now = self.plan
        if hit is not None and hit[0] is m and hit[1] is self.win.layout and plan_now is not None:
            # the same device copies (this memory's, the same allocations) at the same versions
            if all(plan_now[k][0] is e and e.version == v for k, e, v in hit[2]):
                self.mirrored += hit[4]
                return hit[3], hit[5]
        po = np.full(len(loads), -1, np.int32)
        pre = np.zeros(P_.PRELOAD_WORDS, np.uint32)
        words, ranges = P_.evaluate(loads, plan, m.program, self.L, cfg.user_sgprs, set(fixed), self.win)
        for k, (w, at) in enumerate(zip(words, P_.layout(loads))):
            if w is not None:
                pre[at : at + w.size] = w
                po[k] = at
        self.mirrored += ranges
        out = [("WL_PO", po), ("WL_PRE", pre)]
        complete = bool((po >= 0).all())
        if self.plan is not None:
            # the device copies the loads read (ranges are arena ranges: their windows' entries)
            offs = self.win.offs.tolist()
            read = sorted({bisect_right(offs, o) - 1 for o, _ in ranges})
            if all(not self.plan[k][0].shared for k in read):
                keep(
                    _PRELOADS,
                    key,
                    (
                        m,
                        self.win.layout,
                        [(k, self.plan[k][0], self.plan[k][0].version) for k in read],
                        out,
                        list(ranges),
                        complete,
                    ),
                    PRELOADS,
                )
        return out, complete

    # --------------------------------------------------------------------------- running
    def _shape(self, cfg, mode: str, budget: int, nwin: int, groups: int = 1) -> tuple:
        """(total groups, waves per group (array) or None, full waves per group, waves run,
        the wavebase table (host) or None, shared bytes, P, groups per launch, wave scratch
        bytes): a pure function of the config's fields (its wave size among them), the mode,
        the budget, the number of windows and the module's workgroups per block (``groups``,
        decision 0046: the exchange areas of all its waves in shared memory, and launches of a
        multiple of it but the last; kept by memo.by_config; not changed)."""
        total, wpg, full = self._groups()  # (self.cfg is cfg)
        if wpg is None:
            wavebase = None  # (read only with partial groups: codegen C.wave)
            waves = total * full
        else:
            wavebase = (np.cumsum(wpg) - wpg).astype(np.uint64)
            wavebase.flags.writeable = False
            waves = int(wpg.sum())
        xoff = (cfg.lds_bytes + 15) // 16 * 16
        shared = xoff + groups * full * 2 * G.XWORDS * 4
        P = G.param_words(cfg, nwin, budget, xoff)
        P.flags.writeable = False
        wb = cfg.scratch_wave_bytes if mode == "wave" else 0
        return total, wpg, full, waves, wavebase, shared, P, launch_groups(total, full, wb, groups), wb

    def run(self):
        cfg, L = self.cfg, self.L
        win = self.win
        gpb = getattr(self.m, "groups", 1)  # (the module's source says: codegen.source_groups)
        total, wpg, full, waves, wavebase, shared, P, chunk, wb = by_config(
            "shape", cfg, self._shape, self.mode, self.budget, len(win.starts), gpb
        )
        if total == 0:
            return
        if L == 64 and full > 15:
            raise Refused(
                "backend.unavailable",
                f"the CUDA backend runs wave64 workgroups of at most 960 threads "
                f"(15 named barriers); this one has {full} waves",
            )
        cp = _cupy()
        self.waves_run = waves

        res = R.for_memory(win.memory)
        plan = self.plan = res.prepare(win)  # (what the host changed goes up)
        for e, _ in plan:  # (a copy a failed proof left unusable: decision 0049 step 4)
            if e.broken is not None:
                raise Refused("backend.proof", e.broken)
        m = self.m
        self.news = m.lean_news  # (before _in_place asks for the lean build: _Kept._holds)
        nslots = len(m.slots)
        reps_now = settings.get("WAVELIFT_CUDA_TIMING_REPEAT")
        # in place (WAVELIFT_CUDA_INPLACE=proved): the heap's buffer and map for arena and map,
        # its offsets for the windows' (decision 0049 step 4); else the arena
        place = self._in_place(res, plan, reps_now)
        # the report: stats, status, escapes, the runs' count, the first INLINE_RUNS runs and
        # the window hints -- one readback per dispatch (decision 0029)
        # (the map in the form the module's kernel marks: Module.map_bits)
        if place is None:
            arena, written, rep = res.staging(win.nbytes, REPORT_BYTES + 4 * nslots, m.map_bits)
            wstart, wend, woff = res.window_tables(win)
        else:
            heap = res.heap
            assert heap is not None  # (_in_place's)
            arena, written, rep = heap.buf, heap.written, res.report(REPORT_BYTES + 4 * nslots)
            wstart, wend, woff = res.heap_tables(win, plan, place)
        if wpg is None:
            if res.zero_word is None:  # (the same one-word table every time)
                res.zero_word = res.table(np.zeros(1, np.uint64))
            wb_dev = res.zero_word
        else:
            wb_dev = res.table(wavebase) if wavebase.size <= 4096 else cp.asarray(wavebase)
        views, count, inline, ptr_words = _report_views(rep, cp)
        # (the hints the guesses are made from: a plan holds while the next ones are the same)
        hints_in = None if not nslots or m.hints is None else m.hints.tobytes()
        gscr0 = None if wb else _no_scratch(res)

        def attempt(mirror: bool) -> dict:
            # (WL_GA: for the arena launched, the staging one gather fills, or the heap)
            self._set_constants(P, arena.data.ptr, mirror, None if place is None else place.offs)
            fn = self.k.function()
            if shared > 48 * 1024:
                self.k.set_shared(fn, shared)
            if place is None:
                res.clear(rep, written)  # (the map too when a kernel marked it since it landed)
            else:
                res.ops.clear(rep)  # (the heap's map is zero: every in-place run clears its marks)
            d = {
                "arena": res.gather(win, plan, arena) if place is None else arena,
                "written": written,
                "wstart": wstart,
                "wend": wend,
                "woff": woff,
                "wavebase": wb_dev,
                "rep": rep,
                **views,
            }
            # (a launch's blocks hold whole slots: the last one may run past chunk, done)
            gscr = (
                cp.zeros(max(-(-chunk // gpb) * gpb * full * wb // 4, 1), cp.uint32)
                if wb
                else _no_scratch(res)
            )

            # (the count slots of a kernel with more than the report's: folded into dd's
            # report after its launches, timed with them -- 0009's amendment h152)
            wide = None if self.k.count_slots == G.COUNT_SLOTS else res.counts(self.k.count_slots)

            def report_to(dd):  # (codegen: WL_STATUS, ...; the same buffer: no copy after the first)
                words = ptr_words if dd is d else [_pointer_word(dd[n].data.ptr) for n in _REPORT_ORDER]
                k = self.k
                kept = getattr(k, "_consts", None)  # (put_constant's skip of the same array, inline)
                for name, word in zip(_REPORT_ORDER, words):
                    cname = _REPORT_NAMES[name]
                    if kept is not None:
                        last = kept.get(cname)
                        if last is not None and last[0] is word:
                            continue
                    k.put_constant(cname, word)
                if wide is not None:
                    k.put_constant("WL_WIDE", _pointer_word(wide.data.ptr))

            def launch_all(dd):
                for g0 in range(0, total, chunk):
                    n = min(chunk, total - g0)
                    if wb and g0:
                        gscr.fill(0)
                    fn(
                        (-(-n // gpb),),
                        (gpb * full * L,),
                        (
                            dd["arena"],
                            dd["written"],
                            dd["wstart"],
                            dd["wend"],
                            dd["woff"],
                            dd["wavebase"],
                            gscr,
                            np.uint64(g0),
                        ),
                        shared_mem=shared,
                    )
                if wide is not None:
                    _fold(self.k, res, dd["stats"])()

            # benchmarks only: time N back-to-back launches on copies (so that the host's launch
            # latency is not counted); the dispatch's own results come from the launch after them
            reps = settings.get("WAVELIFT_CUDA_TIMING_REPEAT")
            if res.events is None:  # (kept: recorded again by each dispatch, read before the next)
                res.events = (cp.cuda.Event(), cp.cuda.Event())
            start, stop = res.events
            if reps > 0:
                r2 = rep.copy()
                dd = {
                    **d,
                    "arena": d["arena"].copy(),
                    "written": d["written"].copy(),
                    "stats": r2[:STATS_BYTES].view(cp.uint64),
                    "status": r2[STATS_BYTES : STATS_BYTES + 64].view(cp.uint32),
                    "esc": r2[STATS_BYTES + 64 : STATS_BYTES + 576].view(cp.uint32),
                }
                report_to(dd)
                self._point(dd["arena"])  # (the loads' pointers into the copy)
                launch_all(dd)  # warm-up
                start.record()
                for _ in range(reps):
                    launch_all(dd)
                stop.record()
                stop.synchronize()
                self.extra_stats["device_time_s"] = cp.cuda.get_elapsed_time(start, stop) / 1000.0 / reps
                self._point(d["arena"])
                del dd
                if wb:
                    gscr.fill(0)
            report_to(d)
            if place is None:
                res.launched(arena, written)  # (its windows no longer known to equal the device copies)
            elif self.deadline is not None:
                # (in place, the time limit is checked before the launch, never after: a
                # dispatch whose bytes stand on the device is not refused for its time)
                self.deadline.check()
            start.record()
            launch_all(d)
            launched.append(place)  # (in place: the heap's bytes may change from here on)
            stop.record()
            # the written runs, found on the device: their count and the first INLINE_RUNS come
            # back with the report, and so do the hints the accesses resolved to
            # (count lies in the report, cleared above on the stream; the kernel writes only
            # the report's status, stats and escapes: it is still zero)
            # (in place: over ``Placed.scan`` only -- the windows' hull, or the lean build's those
            # it can store into --, not the whole heap's)
            # (and the module's guesses into the report by the same launch: wl_hints)
            res.ops.runs_launch(
                written if place is None else place.scan,
                count,
                inline,
                cleared=True,
                hints=_hints_into(self.k, rep, nslots),
            )
            host = rep.get()  # (waits for the kernel)
            if reps <= 0:
                self.extra_stats["device_time_s"] = cp.cuda.get_elapsed_time(start, stop) / 1000.0
            d["host"] = host
            runs = res.ops.runs_finish(
                int(host[RUNS_AT : RUNS_AT + 4].view(np.uint32)[0]),
                (
                    host[STARTS_AT : STARTS_AT + 8 * INLINE_RUNS].view(np.uint64),
                    host[ENDS_AT : ENDS_AT + 8 * INLINE_RUNS].view(np.uint64),
                ),
            )
            d["spans"] = R.spans(runs[0], runs[1], win) if place is None else None
            d["runs"] = runs
            return d

        def keepable() -> bool:
            """Whether the dispatch, its report taken, may be kept to run again as it ran (a
            kept plan: ``Again`` on the arena, ``InPlace`` on the heap): one launch, no wave
            scratch, the guesses it ran with still the module's, a loaded build."""
            return bool(
                res.again
                and not wb
                and total <= chunk
                and hints_in == (m.hints.tobytes() if nslots else None)
                and getattr(self.k, "_fn", None) is not None
                and hasattr(self.k, "_puts")
            )

        launch = (
            (-(-total // gpb),),
            (gpb * full * L,),
            (arena, written, wstart, wend, woff, wb_dev, gscr0, np.uint64(0)),
        )
        launched: list = []
        try:
            d = attempt(True)
            if place is not None:
                pre, wrote = self._landed_in_place(res, d, place)
        except Refused:  # (settled: booked or made unusable, with its reason)
            raise
        except BaseException as exc:
            if place is not None and launched:
                _lost_in_place(res, self.plan, place, exc)
            raise
        if place is not None:
            self.landed = True  # (its bytes stand: RunCounts.landed)
            if keepable():
                self.again = InPlace(self, res, rep, (count, inline), launch, shared, place, pre)
                self.again.note(wrote)
            return
        # a mirrored window this dispatch wrote: its uniform loads may have read stale copies,
        # so the dispatch runs again, from the same arena, without mirrors (codegen.mirrors)
        if self.mirrored and _hits(d["runs"], self.mirrored):
            self.extra_stats["mirror_rerun"] = True
            d = attempt(False)
        t0 = time.perf_counter()
        status = self._take_report(d["host"])
        self._raise_flags(status)
        spans = d["spans"]
        # landing, when execute_dispatch lands (nothing escaped or was refused): on the device
        # (the staging arrays are not used again before this: execute lands or refuses the
        # dispatch before the next one starts)
        self.land = lambda: (spans, res.commit(win, plan, d["arena"], d["written"], spans))
        self.extra_stats["download_s"] = time.perf_counter() - t0
        if reps_now <= 0 and not self.escape_count and "mirror_rerun" not in self.extra_stats and keepable():
            self.again = Again(self, res, (arena, written, rep), (count, inline), launch, shared)
            self.again.note(spans)

    def _in_place(self, res, plan, reps: int):
        """The windows as placed in the heap (resident.Placed) where this dispatch runs in place
        (decision 0049 step 4: WAVELIFT_CUDA_INPLACE=proved, a heap whose map has the module's
        form, no shared allocation -- its owner reads at once --, no timing repeats, and proved
        unrefusable on this WindowSet, the program the kernel lowers and this budget); else None."""
        if res.heap is None or reps > 0 or settings.get("WAVELIFT_CUDA_INPLACE") != "proved":
            return None
        if res.heap.bits != bool(self.m.map_bits) or any(e.shared for e, _ in plan):
            return None
        why = self._prove()
        self.extra_stats["in_place"] = why or "proved"
        if why is not None:
            return None
        if self.lean is not None:
            self.extra_stats["build"] = "lean"
        return res.placed(self.win, plan, self.writable)

    def _prove(self) -> str | None:
        """_unrefusable of this dispatch (None: proved) and, where proved, the build it launches:
        self.lean (_lean_hints: the lean build's guesses, else None) -- with the lean build, the
        module's hints are the proved windows, so that a kept plan's hints are what it ran with
        (the same array while they are equal).  _in_place's, and bench/cuda_costs.py's
        ``proved`` (its timed launches on the arena)."""
        windows: list = []
        why = _unrefusable(self.m, self.cfg, self.win, self.budget, windows)
        if why is None:
            m = self.m
            lean = _lean_hints(m, windows)
            # (the lean build launches once it is built -- in the background, never waited for:
            # until then the module's own, as with WAVELIFT_CUDA_PROVED=own; decision 0049's
            # amendment h163 -- for the preloads as _set_constants will find them; run read the
            # news before, so a build finishing after this look drops the plan armed now)
            if lean is not None and not m.lean_ready(self._resolved(), self.budget):
                lean = None
            self.lean = lean
            if lean is not None and (m.hints is None or not np.array_equal(m.hints, lean)):
                m.hints = lean
            self.writable = None if lean is None else _writable(m, windows)
        return why

    def _resolved(self) -> bool:
        """Whether the host resolves every preload of this dispatch (_preloads, as
        _set_constants calls it with the preloads on: the build it launches, Module.variant's
        ``preloaded``); what it notes in self.mirrored is made again there."""
        self.mirrored = []
        return self._preloads(True)[1]

    def _landed_in_place(self, res, d: dict, placed) -> tuple:
        """An in-place run's report: settled (``_settle_in_place``: booked, or refused
        ``backend.proof`` with its device copies made unusable) -> (the preloaded words' heap
        ranges -- its kept plan checks its runs against them --, the windows it wrote)."""
        t0 = time.perf_counter()
        host = d["host"]
        offs = self.win.offs.tolist()
        pre = []  # (the preloaded words' arena ranges at their windows' heap offsets)
        for o, n in self.mirrored:
            k = bisect_right(offs, o) - 1
            pre.append((placed.offs[k] + o - offs[k], n))
        s_, e_ = placed.runs(d["runs"][0].tolist(), d["runs"][1].tolist())
        # (the proof's checks first, on the status words and the escape count alone: nothing
        # else of the report -- an escape record the module cannot make -- may stop the run
        # before its runs are cleared and, where it failed, its copies made unusable)
        status = host[STATS_BYTES : STATS_BYTES + 64].view(np.uint32)
        escapes = int(host[:STATS_BYTES].view(np.uint64)[2])
        got = _settle_in_place(res, self.win, self.plan, placed, pre, status, escapes, s_, e_)
        if isinstance(got, str):
            try:  # (the escapes' details for the result, where the report's records name them)
                self._take_report(host)
            except Refused:  # (backend.bad_report: the failed proof is the refusal)
                pass
            raise Refused("backend.proof", got)
        self._take_report(host)
        booked = got[0], got[1]
        self.land = lambda: booked
        self.extra_stats["download_s"] = time.perf_counter() - t0
        return pre, got[2]

    def _take_report(self, host) -> np.ndarray:
        """The report's hints (the module's next guesses), counts and escapes taken into this
        runtime -> its status words."""
        m = self.m
        nslots = len(m.slots)
        if nslots:  # (the windows the accesses last resolved to: the next dispatch's guesses)
            m.hints = host[HINTS_AT : HINTS_AT + 4 * nslots].view(np.uint32).astype(np.int64)
        status = host[STATS_BYTES : STATS_BYTES + 64].view(np.uint32)
        stats = host[:STATS_BYTES].view(np.uint64)
        # (slot k: [8 + 2k], [9 + 2k]; two strided uint64 sums -- what a reshape's axis-0 sum
        # gives, in a third of its time --, by the ufunc's reduce: no Python wrapper)
        add = np.add.reduce
        self.instructions, self.lane_instructions = int(add(stats[8::2])), int(add(stats[9::2]))
        self.escape_count = int(stats[2])
        recorded = min(int(status[4]), 16)
        esc = (
            host[STATS_BYTES + 64 : STATS_BYTES + 64 + 32 * recorded].view(np.uint32).reshape(recorded, 8)
            if recorded
            else ()
        )
        prog = self.m.program
        for e in esc:
            if int(e[0]) >= len(prog.instructions) or int(e[6]) not in G.KIND_NAMES:
                raise Refused(
                    "backend.bad_report",
                    f"an escape record names instruction {int(e[0])} and access kind {int(e[6])}; "
                    f"the module has {len(prog.instructions)} instructions",
                )
            ins = prog.instructions[int(e[0])]
            self.escapes.append(
                Escape(
                    ins.offset,
                    ins.text,
                    int(e[1]) | (int(e[2]) << 32),
                    int(e[3]),
                    int(e[4]) | (int(e[5]) << 32),
                    G.KIND_NAMES[int(e[6])],
                )
            )
        return status

    def _raise_flags(self, status):
        flags, first = int(status[0]), int(status[5])
        if not flags:
            return
        prog = self.m.program
        a, b, blk = int(status[1]), int(status[2]), int(status[3])
        if first & G_FLAGS["rounding"]:
            raise Refused(
                "float.rounding_mode", f"MODE.FP_ROUND = {a & 15:#x}; only round-to-nearest-even is supported"
            )
        if first & G_FLAGS["bad_jump"]:
            last = prog.blocks[blk].instrs[-1]
            raise Refused(
                "program.bad_jump",
                f"s_setpc/s_swappc at offset {prog.instructions[last].offset:#x} "
                f"jumps to {a | (b << 32):#x}, not a decoded instruction of the program",
            )
        if first & G_FLAGS["bad_address"]:
            raise Refused("program.bad_address", "control runs past the decoded program")
        if first & G_FLAGS["refuse"]:  # a refuse_if op held (as Runtime.refuse_at)
            table = G.refusal_table(prog)
            if b >= len(table) or a >= len(prog.instructions):  # (never guessed: named, refused)
                raise Refused(
                    "backend.bad_report",
                    f"refuse_if {b} at instruction {a} flagged; the module has {len(table)} "
                    f"refuse_if ops and {len(prog.instructions)} instructions",
                )
            _, why, code = table[b]
            ins = prog.instructions[a]
            raise Refused(code, f"offset {ins.offset:#x}: {ins.text} ({why})")
        raise Refused("dispatch.budget_exceeded", f"a wave ran more than {self.budget} instructions")


G_FLAGS = {"budget": 1, "bad_jump": 2, "bad_address": 4, "rounding": 8, "refuse": G.WL_REFUSE}


class _Kept:
    """What a kept plan (``Again`` on the arena, ``InPlace`` on the heap) holds of the dispatch
    that armed it -- module, launched build and function, window set and device copies' plan,
    report, runs' arrays, launch arguments, the hints its guesses came from -- and the test that
    nothing it depends on changed since it was armed (``_holds``)."""

    __slots__ = (
        "res",
        "m",
        "k",
        "fn",
        "win",
        "plan",
        "entries",
        "rep",
        "count",
        "inline",
        "grid",
        "block",
        "args",
        "shared",
        "nslots",
        "hints",
        "hb32",
        "puts",
        "waves",
        "cubin",
        "events",
        "changes",
        "host",
        "own",
        "hint_go",
        "news",
        "traced",
    )

    def __init__(self, rt, res, rep, runs, launch, shared):
        self.res, self.m, self.k = res, rt.m, rt.k
        self.fn = rt.k._fn
        self.win, self.plan = rt.win, rt.plan
        self.entries = list({id(e): e for e, _ in rt.plan}.values())
        self.rep = rep
        self.count, self.inline = runs
        self.grid, self.block, self.args = launch
        self.shared = shared
        self.nslots = n = len(rt.m.slots)
        self.hints = rt.m.hints
        self.hb32 = rt.m.hints.astype(np.uint32).tobytes() if n else b""
        self.puts = rt.k._puts
        self.waves = rt.waves_run
        self.cubin = rt.extra_stats["cubin"]
        self.events = res.events
        self.changes = None  # (Resident.changes when armed; None: not armed)
        # the report read back into a kept page-locked host array, and its views, made once
        self.host = h = res.readback(rep)
        self.own = _Slot(self, h, res.events)  # (its views of the report, as a queue place's)
        # (the hints' copy into the report, by wl_runs' launch: the device addresses, made once)
        self.hint_go = _hints_into(rt.k, rep, n)
        self.news = rt.news  # (the module's lean_news when its build was chosen: ``_holds``)
        # the device copies of what the trace of its dispatch read (its record's stamps: set by
        # execute's _keep_again; None: not known) -- what a replay's trace reads again
        self.traced: frozenset | None = None

    @staticmethod
    def _captured(cp, go):
        """The GPU operations ``go(stream pointer)`` issues, captured on a stream of their own as
        a CUDA graph (their arguments fixed), or False where capture fails (the plan then runs
        them one by one)."""
        try:
            s = cp.cuda.Stream(non_blocking=True)
            with s:
                s.begin_capture()
                try:
                    go(s.ptr)
                finally:
                    graph = s.end_capture()
            return graph
        except Exception:  # noqa: BLE001 - no graph (an old CuPy, capture refused): one by one
            return False

    def _runs(self) -> tuple[list, list]:
        """The runs of the report in ``own`` (read back): sorted starts and ends."""
        own = self.own
        c = own.words[_RUNS_WORD]
        if c <= INLINE_RUNS:  # (every run came back with the report: as runs_finish, in lists)
            return own.runs(c)
        runs = self.res.ops.runs_finish(c, (own.starts, own.ends))
        return runs[0].tolist(), runs[1].tolist()

    # (an in-place plan holds only while WAVELIFT_CUDA_INPLACE=proved: ``_holds``)
    IN_PLACE = False
    lean = False  # (InPlace's: its build the lean one -- ``_stats``)

    def _holds(self) -> bool:
        """Whether this plan may run again (``run``; ``Again.defer``): armed (``arm``), nothing
        on the device side changed since (the Resident's changes, the module's constants,
        function, hints and upgrades, no lean build finished since its build was chosen: the
        full path then launches that -- decision 0049's amendment h163), no timing repeats; in
        place (``InPlace``), the setting still on.  (One method for both: a call less per
        launch.)"""
        k, m = self.k, self.m
        return not (
            self.changes is None
            or self.res.changes != self.changes
            or k._puts != self.puts
            or k._fn is not self.fn
            or m.hints is not self.hints
            or m.upgrade is not None
            or k.upgrade is not None
            or m.lean_news is not self.news
            or settings.get("WAVELIFT_CUDA_TIMING_REPEAT") > 0
            or (self.IN_PLACE and settings.get("WAVELIFT_CUDA_INPLACE") != "proved")
        )

    def _hints_from(self, sl) -> None:
        """New guesses in a report (``sl``'s host array) go to the module (the next launch's
        full path)."""
        if self.nslots and sl.hints.tobytes() != self.hb32:
            self.m.hints = sl.hints.view(np.uint32).astype(np.int64)
            self.hints = None

    def _stats(self, cp, sl, t0: float) -> dict:
        """A landed run's extra stats: its kernel's time between ``sl``'s events (``sl``: this
        plan's own report or a queue place's) and the time since ``t0`` its report took to read."""
        start, stop = sl.events
        extra = {"cubin": self.cubin, "device_time_s": cp.cuda.get_elapsed_time(start, stop) / 1000.0}
        if self.IN_PLACE:
            extra["in_place"] = "proved"
        if self.lean:
            extra["build"] = "lean"
        extra["download_s"] = time.perf_counter() - t0
        return extra


class Again(_Kept):
    """A dispatch that landed, kept to run again as it ran (issue 24: a repeated launch's
    straight path): its module, launched build and function, window set and device copies'
    plan, staging arrays, launch arguments, report views and the hints its guesses came from.
    ``run`` issues only the GPU operations (one memset, the kernel, wl_runs with the hints' copy)
    and the one report read-back, while nothing it depends on changed since it was armed
    (``arm``, after the landing: ``Resident.changes``, the build's constant memory and loaded
    function, the module's hints object, no pending upgrade, no timing repeat); a report with
    an escape, a flag or a written mirrored range hands the dispatch to the full path (nothing
    landed).  What the full path does besides, on the state a landing of the same dispatch left
    and nothing changed since, changes nothing (``arm`` checks that ``Resident.prepare`` would
    upload nothing and make no shadow, and that the kept arena holds every window)."""

    __slots__ = (
        "arena",
        "written",
        "mirrored",
        "runs_go",
        "runs_note",
        "graph",
        "graph_on",
        "offs",
        "kept",
        "defer_on",
        "wrote",
        "deferral",
    )

    def __init__(self, rt, res, staging, runs, launch, shared):
        self.arena, self.written, rep = staging
        super().__init__(rt, res, rep, runs, launch, shared)
        self.mirrored = list(rt.mirrored)
        # what ``run`` does, made once: wl_runs' call (the hints' copy by its launch) with its
        # arguments; the windows' arena offsets and addresses and the wl_land calls (land)
        rep = self.rep
        ops = res.ops
        go, self.runs_note = ops.runs_call(self.written, self.count, self.inline, self.hint_go)
        self.runs_go = _folded_runs(self.k, res, rep, go)  # (0009, h152)
        # those GPU operations captured once as a CUDA graph (``_capture``; None: not yet, False:
        # not to be); WAVELIFT_CUDA_GRAPH=off runs them one by one (A/B runs)
        self.graph_on = settings.get("WAVELIFT_CUDA_GRAPH") != "off"
        self.graph = None
        lay = getattr(self.win, "layout", None)
        self.offs = lay.offs if lay is not None else [int(o) for o in self.win.offs]
        self.kept = ([w.address for w in self.win.windows], {})
        # WAVELIFT_CUDA_DEFER (unset or on; `off`: A/B runs): repeated runs without waiting (``defer``); the windows the last
        # landing wrote (``note``: where a deferred run may write); its device calls (None: not
        # made yet for those windows)
        self.defer_on = settings.get("WAVELIFT_CUDA_DEFER") != "off"
        self.wrote: tuple | None = ()
        self.deferral = None

    def arm(self) -> bool:
        """After this dispatch landed (by the full path or ``run``): whether the next run may
        skip what the full path does before the launch -- ``Resident.prepare`` would upload
        nothing and make no shadow (no entry shared or with host-dirty bytes, each small one
        without device-dirty bytes shadowed), the kept arena holds every window at its device
        copy's version, and the written map landed (zero) -- noting ``Resident.changes``."""
        res = self.res
        self.changes = None
        for e in self.entries:
            if e.shared or e.host_dirty.lo or (e.shadow is None and e.small and not e.dev_dirty.lo):
                return False
        st = res._arena_state.get(id(self.arena))
        if st is None or st[0] is not self.arena or st[1] is not self.win.layout:
            return False
        for (e, _), (x, v) in zip(self.plan, st[2]):
            if x is not e or e.version != v:
                return False
        if id(self.written) in res._dirty_maps or self.win.memory.resident is not res:
            return False
        if self.m.hints is not self.hints:
            return False
        self.changes = res.changes
        return True

    def run(self):
        """The dispatch again: None when the plan does not hold (nothing done); False when
        it ran but its report needs the full path (an escape, a flag, a mirrored range
        written: nothing landed, the arena forgotten, so the full path starts afresh); else
        (spans, instructions, lane instructions, extra stats) -- land with ``land``."""
        res = self.res
        if not self._holds():
            return None
        self.changes = None
        cp = _cupy()
        written = self.written
        start, stop = self.events
        if self.graph_on and self.graph is not False and res.clears_report_only(self.rep, written):
            # (the report's memset, the kernel, wl_runs and the hints' and report's copies: one
            # graph launch and one wait; the host's bookkeeping as below)
            if self.graph is None:
                self.graph = self._capture(cp)
            if self.graph:
                res.launched(self.arena, written)
                stream = cp.cuda.get_current_stream()
                start.record()
                self.graph.launch(stream)
                stop.record()
                self.runs_note()
                stream.synchronize()  # (the report is in the host array)
                return self._read(cp)
        res.clear(self.rep, written)
        res.launched(self.arena, written)
        start.record()
        self.fn(self.grid, self.block, self.args, shared_mem=self.shared)
        stop.record()
        self.runs_go()
        self.runs_note()
        self.rep.get(out=self.host)  # (waits for the kernel)
        return self._read(cp)

    def _read(self, cp):
        """``run``'s result from the report in the host array (read back)."""
        t0 = time.perf_counter()
        own = self.own
        status = own.status
        if (
            status[0] or status[4] or own.dwords[_ESCAPES_DWORD]
        ):  # (a flag or an escape: the full path's to tell)
            return False
        s_, e_ = self._runs()
        if self.mirrored and _meets(s_, e_, self.mirrored):
            return False
        return self._landing(cp, own, s_, e_, t0)

    def _landing(self, cp, sl, s_, e_, t0: float) -> tuple:
        """(spans, instructions, lane instructions, extra stats) of a run that lands, from its
        report in ``sl``'s host array (``_read``: this plan's own; ``Deferred.settle``: a queue
        place's) and its runs' sorted starts ``s_`` and ends ``e_``; new guesses in the report
        go to the module (the next launch's full path)."""
        self._hints_from(sl)
        spans = R.spans_of(s_, e_, self.offs, self.win.windows)
        add = np.add.reduce
        return spans, int(add(sl.ins)), int(add(sl.lane)), self._stats(cp, sl, t0)

    def _capture(self, cp, deferral=None, host=None):
        """``run``'s GPU operations, the report's memset (``clear`` of a kept pair whose map
        landed: ``Resident.clears_report_only``) to the report's copy into the host array,
        captured as a CUDA graph (``_captured``), or False.  ``deferral``: ``defer``'s
        operations instead (``_deferred_ops``), the report into ``host``."""
        rt = cp.cuda.runtime

        def go(stream: int) -> None:
            if deferral is not None:
                self._deferred_ops(cp, deferral, host, stream)
                return
            self.res.ops.clear(self.rep)
            self.fn(self.grid, self.block, self.args, shared_mem=self.shared)
            self.runs_go()
            h = self.host
            rt.memcpyAsync(h.ctypes.data, self.rep.data.ptr, h.size, rt.memcpyDeviceToHost, stream)

        return self._captured(cp, go)

    def land(self, spans) -> tuple:
        """(spans, bytes written): ``run``'s dispatch landed in the device copies."""
        self.note(spans)
        return spans, self.res.commit(self.win, self.plan, self.arena, self.written, spans, self.kept)

    def note(self, spans) -> None:
        """The windows a landing's ``spans`` wrote: where a deferred run may write (``defer``);
        None (no deferral) after more runs than come back inline (wl_gate would fail each)."""
        if len(spans) > INLINE_RUNS:  # (spans: never fewer than runs, so this errs safe)
            self.wrote, self.deferral = None, None
        elif spans:
            starts = self.kept[0]
            wrote = tuple(sorted({bisect_right(starts, a) - 1 for a, _ in spans}))
            if wrote != self.wrote:
                self.wrote, self.deferral = wrote, None

    def defer(self, result):
        """The dispatch again without waiting for the GPU (WAVELIFT_CUDA_DEFER=on), or None
        (nothing done: ``run`` or the full path).  Its operations as ``run``'s, then wl_gate
        (its verdict into the report: it landed only if no flag, no escape, every run inline and
        inside the windows the last landing wrote, less the mirrored ranges, and nothing queued
        before it failed), the report's copy into this queue place's host array, and
        wl_land_gated over each of those windows; the host books the landing at once
        (``Resident.landed_deferred``) and reads the report later (``Resident.flush``:
        ``Deferred.settle``, or ``fail`` and ``replay``).  -> the ``Deferred``, queued."""
        res = self.res
        if not self.defer_on or self.wrote is None or res.flushing:
            return None  # (before any CuPy call: a repeated launch that cannot defer pays nothing)
        cp = _cupy()
        stream = cp.cuda.get_current_stream()
        if (
            # (the queue on another stream: no order between the two on the device)
            (res.pending and res.stream.ptr != stream.ptr)
            or not self._holds()
            or not res.clears_report_only(self.rep, self.written)
        ):
            return None
        d = self.deferral
        if d is None:
            d = self.deferral = self._deferral()
        # (its places in turn: the queue holds this plan's latest launches, fewer than depth --
        # Resident.flush reads its oldest first --, so the place depth launches back is free)
        # (advanced once the place exists: a place whose making raised leaves the turn as it was)
        slots, n = d["slots"], d["next"] % res.depth
        sl = slots[n] if n < len(slots) else self._slot(slots)
        d["next"] += 1
        self.changes = None  # (no ``launched``: ``landed_deferred`` books the arena after it)
        start, stop = sl.events
        start.record()
        if sl.graph:
            sl.graph.launch(stream)
        else:
            self._deferred_ops(cp, d, sl.host, stream.ptr)
        stop.record()
        res.landed_deferred(self.win, self.plan, self.arena, self.written, d["ranges"])
        item = Deferred(self, sl, result, d["ranges"])
        # (where it may write: anywhere -- a failed one runs again through the full path, which
        # lands in whatever windows it finds then; a host read waits for the queue as before)
        res.queue(item, stream, None)
        return item

    def _slot(self, slots: list) -> _Slot:
        """The next queue place of ``defer``: its host array, events and graph (captured)."""
        cp = _cupy()
        d = self.deferral
        sl = _Slot(self, self.res.ops.pinned(int(self.rep.size)), (cp.cuda.Event(), cp.cuda.Event()))
        sl.graph = self._capture(cp, d, sl.host) if self.graph_on else False
        slots.append(sl)
        return sl

    def _deferral(self) -> dict:
        """``defer``'s calls, made once per written windows: the ranges a run may write (the
        windows ``wrote``, adjacent ones merged, less the mirrored ranges) as wl_gate's table,
        its launch and the wl_land_gated launch of each window, the entries' ranges the host
        books, and the queue places' host arrays, events and graphs (made as needed)."""
        res, ops = self.res, self.res.ops
        assert self.wrote is not None  # (``defer``'s check)
        sticky = res.sticky()
        ok: list[list[int]] = []
        for k in self.wrote:
            lo, hi = self.offs[k], self.offs[k] + self.win.windows[k].size
            if ok and ok[-1][1] == lo:
                ok[-1][1] = hi
            else:
                ok.append([lo, hi])
        for mlo, mn in self.mirrored:  # (a mirrored range written: the full path reruns it)
            mhi = mlo + mn
            cut = []
            for lo, hi in ok:
                if mhi <= lo or hi <= mlo:
                    cut.append([lo, hi])
                    continue
                if lo < mlo:
                    cut.append([lo, mlo])
                if mhi < hi:
                    cut.append([mhi, hi])
            ok = cut
        table = res.table(np.array([x for r in ok for x in r] or [0, 0], np.uint64))
        at = (STATS_BYTES, 16, RUNS_AT, STARTS_AT, ENDS_AT, VERDICT_AT, INLINE_RUNS)
        runs = res.gate_runs(INLINE_RUNS)  # (wl_gate's run table, wl_land_gated's)
        commits = []
        ranges = []
        for k in self.wrote:
            (e, a), n = self.plan[k], self.win.windows[k].size
            commits.append(
                ops.land_gated_launch(*e.at(a), self.arena, self.written, self.offs[k], n, runs, sticky)
            )
            ranges.append((e, a, a + n))
        return {
            "gate": ops.gate_launch(self.rep, at, table, sticky, runs, R.is_bits(self.written)),
            "commits": commits,
            "ranges": ranges,
            "slots": [],
            "next": 0,
        }

    def _deferred_ops(self, cp, d, host, stream: int) -> None:
        """``defer``'s GPU operations, one by one on ``stream`` (captured once: ``_capture``)."""
        rt = cp.cuda.runtime
        self.res.ops.clear(self.rep)
        self.fn(self.grid, self.block, self.args, shared_mem=self.shared)
        self.runs_go()
        d["gate"]()
        rt.memcpyAsync(host.ctypes.data, self.rep.data.ptr, host.size, rt.memcpyDeviceToHost, stream)
        for go in d["commits"]:
            go()


class InPlace(_Kept):
    """A dispatch that ran in place (decision 0049 step 4, amendment h125), kept to run again
    as it ran -- what ``Again`` is to the arena path, for execute's ``_again``: ``run`` issues
    the report's memset, the kernel on the heap, wl_runs over the heap map of its windows' hull
    -- the lean build's: of the windows it can store into -- (``Placed.scan``) copying the hints
    too, and the report's read-back (one captured graph), then clears the runs' hull and books them
    (``_settle_in_place``), while nothing it depends on changed since it was armed
    (``Resident.changes`` -- a host write, a landing, a heap move --, the build's constants and function, the module's hints, no upgrade, no timing repeat,
    the setting still on).  The proof holds while those do: the same record (config, program,
    windows, budget: execute checks), the same preloaded words (no change since).  A report with
    a flag, an escape, a run over a preloaded word or outside its windows makes its copies
    unusable (``Resident.broke_in_place``) and hands the dispatch to the full path, which
    refuses it ``backend.proof``.  ``defer``: the same without waiting (step 5, amendment h134)."""

    IN_PLACE = True

    __slots__ = (
        "placed",
        "pre",
        "buf",
        "booked",
        "defer_on",
        "graph_on",
        "graph",
        "runs_go",
        "runs_note",
        "wrote",
        "wrote_ks",
        "slots",
        "ring",
        "depth",
        "booked_at",
        "lean",
        "reach",
        "reach_entries",
    )
    arena = None  # (Resident.staging's eviction looks for a kept plan's staging arena: none)
    # the runs a deferred run's report holds for the host; more: its place's aside (``_slot``)
    room = INLINE_RUNS

    def __init__(self, rt, res, rep, runs, launch, shared, placed, pre: list):
        super().__init__(rt, res, rep, runs, launch, shared)
        # (Resident.changes right after ``defer`` booked a launch of this armed plan: ``arm``)
        self.booked_at: int | None = None
        # (its build: the lean one -- the stats say so -- or the module's own)
        self.lean = rt.lean is not None
        # (its windows in the heap and its map range, and the preloaded words' heap ranges: as
        # the full path found them; a heap move drops the plan)
        self.placed, self.pre = placed, pre
        self.buf = launch[2][0]  # (the heap's buffer it runs on: a move drops the plan anyway)
        self.booked: tuple = ([], 0)
        # WAVELIFT_CUDA_DEFER (unset or on) / WAVELIFT_CUDA_GRAPH (unset or on), as Again's
        self.defer_on = settings.get("WAVELIFT_CUDA_DEFER") != "off"
        self.graph_on = settings.get("WAVELIFT_CUDA_GRAPH") != "off"
        self.graph = None  # (``run``'s operations captured: None not yet, False not to be)
        go, self.runs_note = res.ops.runs_call(placed.scan, self.count, self.inline, self.hint_go)
        self.runs_go = _folded_runs(self.k, res, self.rep, go)  # (0009, h152)
        # (entry, lo, hi) of the windows the last landing wrote: what a deferred run books at its
        # launch (``note``; None: no deferral); the queue places (``_slot``)
        self.wrote: list | None = None
        self.wrote_ks: frozenset = frozenset()
        # (entry, lo, hi) of the windows a deferred run may write, and their entries (``note``)
        self.reach: list = []
        self.reach_entries: frozenset = frozenset()
        self.slots: list = []
        self.ring = 0  # (the next queue place: ``defer``)
        # (its queue places: each needs an aside as large as the windows' map -- Resident.aside --
        # so DEFER_DEPTH of them where they fit in ASIDE_BYTES, else one: the memory bounded)
        fits = R.DEFER_DEPTH * int(placed.scan.nbytes) <= R.ASIDE_BYTES
        self.depth = R.DEFER_DEPTH if fits else 1

    def arm(self) -> bool:
        """After this dispatch landed: whether the next run may skip the full path's steps --
        ``Resident.prepare`` would upload nothing and make no shadow, no copy is unusable, the
        heap is the one it ran on -- noting ``Resident.changes``.  Where nothing but this plan's own
        deferred launch (``defer``: armed then, its windows booked) changed since -- ``changes``
        moved by that booking alone --, what the entries' look found then holds: the booking
        leaves no entry shared, host-dirty or unusable, and each it booked newer on the device."""
        res = self.res
        booked, self.booked_at = self.booked_at, None
        self.changes = None
        if booked == res.changes and res.heap is not None and res.heap.buf is self.buf:
            if self.win.memory.resident is res and self.m.hints is self.hints:
                self.changes = booked
                return True
        for e in self.entries:
            if (
                e.shared
                or e.host_dirty.lo
                or e.broken is not None
                or (e.shadow is None and e.small and not e.dev_dirty.lo)
            ):
                return False
        if res.heap is None or res.heap.buf is not self.buf or self.win.memory.resident is not res:
            return False
        if self.m.hints is not self.hints:
            return False
        self.changes = res.changes
        return True

    def note(self, ks: frozenset) -> None:
        """The windows a landing wrote (``ks``: their indices, as Resident.landed_in_place gives
        them), as (entry, lo, hi): what a deferred run books at its launch (however many runs: a
        deferred run's that do not come back with its report are in its place's aside --
        ``_slot``).  The same windows as the last landing's: the list made then (a pure function
        of them and the plan's fixed windows and entries; never changed)."""
        if ks == self.wrote_ks and self.wrote is not None:
            return
        self.wrote_ks = ks
        plan, windows = self.plan, self.win.windows
        self.wrote = [(plan[k][0], plan[k][1], plan[k][1] + windows[k].size) for k in sorted(ks)]
        # where a deferred run may write (``defer``; amendment h165): the lean build only into
        # the windows it can store into (``Placed.written``: an access outside its proved window
        # flags and stores nothing), the module's own into any of its windows (its search stores,
        # unflagged, into whichever window holds the address: h157); and those its launch books
        can = range(len(plan)) if self.placed.written is None else self.placed.written | ks
        self.reach = [(plan[k][0], plan[k][1], plan[k][1] + windows[k].size) for k in sorted(can)]
        self.reach_entries = frozenset(e for e, _, _ in self.reach)

    def _ops(self, cp, host, stream: int, aside=None) -> None:
        """The GPU operations of a run: the report's memset, the kernel on the heap, wl_runs over
        the windows' map (``Placed.scan``) with the hints' copy, the report into ``host``; ``aside`` (a
        deferred run: its queue place's wl_aside call) then that map zeroed -- exact with
        no look at the runs, since it holds no mark but this run's (every in-place run clears its
        own) -- and first copied to the place's aside where the runs overflow the report's room
        (amendment h137: the host finds them there, exact, when it reads the report)."""
        rt = cp.cuda.runtime
        ops = self.res.ops
        ops.clear(self.rep)
        self.fn(self.grid, self.block, self.args, shared_mem=self.shared)
        self.runs_go()
        rt.memcpyAsync(host.ctypes.data, self.rep.data.ptr, host.size, rt.memcpyDeviceToHost, stream)
        if aside is not None:
            aside()

    def _launch(self, cp, stream, graph, host, aside, events) -> None:
        """``_ops`` on ``stream`` between the timing ``events``: one launch of ``graph`` where
        it was captured, else one by one."""
        start, stop = events
        start.record()
        if graph:
            graph.launch(stream)
        else:
            self._ops(cp, host, stream.ptr, aside)
        stop.record()

    def run(self):
        """The dispatch again, in place: None when the plan does not hold (nothing done); False
        when its report showed a failed proof (its copies made unusable: the full path refuses
        it); else (spans, instructions, lane instructions, extra stats), booked already --
        ``land`` hands them on."""
        res = self.res
        if not self._holds():
            return None
        self.changes = None
        cp = _cupy()
        stream = cp.cuda.get_current_stream()
        if self.graph is None:
            self.graph = self._captured(cp, lambda s: self._ops(cp, self.host, s)) if self.graph_on else False
        self._launch(cp, stream, self.graph, self.host, None, self.events)
        try:
            self.runs_note()  # (what runs_finish reads, where more runs than come back inline)
            res.ops.sync(stream)  # (the report is in the host array)
            t0 = time.perf_counter()
            s_, e_ = self.placed.runs(*self._runs())
            got = self._settle(self.own, s_, e_)
        except BaseException as exc:
            _lost_in_place(res, self.plan, self.placed, exc)
            raise
        own = self.own
        if isinstance(got, str):
            return False
        self._hints_from(own)
        self.booked = got[0], got[1]
        self.note(got[2])
        add = np.add.reduce
        return self.booked[0], int(add(own.ins)), int(add(own.lane)), self._stats(cp, own, t0)

    def _settle(self, sl, s_: list, e_: list, cleared: bool = False):
        """``_settle_in_place`` of a run of this plan from its report in ``sl``'s host array
        (``run``: this plan's own; DeferredInPlace.settle: a queue place's) and its runs (sorted
        heap offsets)."""
        return _settle_in_place(
            self.res,
            self.win,
            self.plan,
            self.placed,
            self.pre,
            sl.status,
            sl.dwords[_ESCAPES_DWORD],
            s_,
            e_,
            cleared,
        )

    def land(self, spans) -> tuple:
        """(spans, bytes written): ``run`` booked them (the bytes stand on the device)."""
        return self.booked

    def defer(self, result):
        """The dispatch again without waiting for the GPU (decision 0049 step 5: a proved
        dispatch needs no gate), or None (nothing done: ``run`` or the full path).  ``_ops``
        with the map cleared on the device (kept first in the place's aside where its runs
        overflow the report's room), into this queue place's host array (one graph launch; the
        queue read first where this plan's ``depth`` places are taken); the host books at once only what the launch makes true whatever the report
        says -- the windows the last landing wrote newer on the device at new versions
        (``Resident.launched_in_place``: a pull of their unwritten bytes takes the bytes the host
        holds) -- and reads the report later (``Resident.flush``): ``DeferredInPlace.settle``
        checks the proof and books the runs (``_settle_in_place``) before ``result`` is filled,
        so nothing reads the dispatch as landed before its report was read.  -> the item, queued."""
        res = self.res
        if not self.defer_on or self.wrote is None or res.flushing:
            return None
        cp = _cupy()
        stream = cp.cuda.get_current_stream()
        # (a queue holds one plan's launches: any other launch booked moves ``changes``, so this
        # plan does not hold after an arena plan's deferral, nor theirs after this one's)
        if res.pending and res.stream.ptr != stream.ptr:
            return None
        if len(res.pending) >= self.depth:  # (its places all taken: read the oldest -- ``depth``)
            res.flush(front=self.depth // 2)  # (0 at depth 1: the whole queue, one launch)
        if not self._holds():
            return None
        # (its places in turn, as Again.defer's: the one ``depth`` launches back is read)
        n = self.ring % self.depth
        sl = self.slots[n] if n < len(self.slots) else self._slot(cp)
        self.ring += 1
        self.changes = None
        self._launch(cp, stream, sl.graph, sl.host, sl.aside, sl.events)
        res.launched_in_place(self.wrote)
        self.booked_at = res.changes
        item = DeferredInPlace(self, sl, result, (self.wrote, self.wrote_ks))
        # (where it may write: ``reach`` -- a replay of a failed one stores nothing: its copies
        # are unusable, so the full path refuses it ``backend.proof`` -- where its trace read no
        # copy the queue may write (``traced``), so that a replay traces the windows it was
        # launched with; else anywhere: a host read waits for the queue, as before)
        traced = self.traced
        res.queue(
            item,
            stream,
            self.reach if traced is not None and traced.isdisjoint(self.reach_entries) else None,
            self.reach,  # (where its stores land, ungated: Resident.may_store)
        )
        return item

    def _slot(self, cp) -> _Slot:
        """The next queue place of ``defer``: its host array, events, aside (``kept``: the
        place's Resident.aside as large as the windows' map, in the map's form, which wl_aside --
        ``aside``, the call -- fills when the runs overflow the report's room) and graph."""
        res, scan = self.res, self.placed.scan
        ops = res.ops
        sl = _Slot(self, ops.pinned(int(self.rep.size)), (cp.cuda.Event(), cp.cuda.Event()))
        sl.kept = res.aside(len(self.slots), int(scan.nbytes)).view(scan.dtype)
        sl.aside = ops.aside_call(scan, sl.kept, self.count, self.room)
        sl.graph = (
            self._captured(cp, lambda s: self._ops(cp, sl.host, s, sl.aside)) if self.graph_on else False
        )
        self.slots.append(sl)
        return sl


class _Slot:
    """A queue place of a deferred plan (``Again.defer``, ``InPlace.defer``; and a kept plan's
    own report: ``_Kept.own``):
    the host array its report is copied into and the views read from it (made once), its
    timing events, its captured graph (False: its operations one by one)."""

    __slots__ = (
        "host",
        "events",
        "graph",
        "words",
        "dwords",
        "starts",
        "ends",
        "hints",
        "ins",
        "lane",
        "status",
        "stats",
        "counts",
        "aside",
        "kept",
    )

    def __init__(self, ag, host, events):
        self.host, self.events, self.graph = host, events, False
        # (an in-place plan's place: its wl_aside call and the aside it fills -- InPlace._slot)
        self.aside = self.kept = None
        # (the report's words read one at a time -- count, verdict, status, escapes, a lone run --
        # through memoryviews: a Python int each, no NumPy scalar made; a settle reads several)
        head = memoryview(host)[:HINTS_AT]
        self.words, self.dwords = head.cast("I"), head.cast("Q")
        self.starts = host[STARTS_AT : STARTS_AT + 8 * INLINE_RUNS].view(np.uint64)
        self.ends = host[ENDS_AT : ENDS_AT + 8 * INLINE_RUNS].view(np.uint64)
        self.hints = host[HINTS_AT : HINTS_AT + 4 * ag.nslots]
        self.stats = stats = host[:STATS_BYTES].view(np.uint64)
        self.ins, self.lane = stats[8::2], stats[9::2]
        self.counts = host[64:STATS_BYTES]  # (stats' words from 8 on: the per-slot counts)
        self.status = self.words[STATS_BYTES // 4 : STATS_BYTES // 4 + 16]

    def runs(self, c: int) -> tuple[list, list]:
        """The report's ``c`` runs (all inline: ``c`` <= INLINE_RUNS) -> (starts, ends), each
        sorted (as runs_finish: threads write them in any order)."""
        # (a stream's common report, once a launch: one run, nothing to sort, read through the
        # memoryview -- measured ~0.19 us against ~0.65 for the general form (timeit, h151); the
        # same lists: tests/cuda/test_inplace_host.py)
        if c == 1:
            q = self.dwords
            return [q[_START_DWORD]], [q[_END_DWORD]]
        return sorted(self.starts[:c].tolist()), sorted(self.ends[:c].tolist())


class Deferred:
    """A deferred dispatch (``Again.defer``) until its report is read (``Resident.flush``):
    ``settle`` fills ``result`` (run/execute.DeferredResult) from the report when wl_gate let
    it land; else ``fail`` undoes the host's booking of its landing and ``replay`` runs it again
    (the result's ``rerun``: execute_dispatch with its arguments), which fills it."""

    __slots__ = ("ag", "slot", "result", "ranges")

    def __init__(self, ag, slot, result, ranges):
        # (``ranges``: the (entry, lo, hi) its launch booked: ``fail`` undoes those)
        self.ag, self.slot, self.result, self.ranges = ag, slot, result, ranges

    def settle(self) -> bool:
        """Fill the result from the report where wl_gate let the dispatch land (True), else
        False (``fail`` and ``replay`` then)."""
        ag, sl = self.ag, self.slot
        if sl.words[_VERDICT_WORD]:
            return False
        t0 = time.perf_counter()
        s_, e_ = sl.runs(sl.words[_RUNS_WORD])  # (at most INLINE_RUNS: wl_gate)
        self.result.settled(*ag._landing(_cupy(), sl, s_, e_, t0))
        return True

    def wait(self) -> None:
        """Until its launch finished (its report in its place's host array: Resident.flush's
        ``front``)."""
        self.slot.events[1].synchronize()

    def fail(self) -> None:
        ag = self.ag
        ag.changes = None
        ag.res.failed_deferred(ag.arena, ag.written, self.ranges)

    def replay(self) -> None:
        self.result.rerun()

    def lose(self, exc: BaseException) -> None:
        """Neither settled nor run again (``Resident.flush`` raised): its booking undone, its
        result lost (reading it raises DeferredLost)."""
        self.fail()
        self.result.lost(exc)


class DeferredInPlace(Deferred):
    """A deferred in-place dispatch (``InPlace.defer``) until its report is read
    (``Resident.flush``).  Its runs are exact however many: the report's, or where they passed
    its room the runs of its map as its queue place's aside kept it (``_runs``, amendment h137).
    ``settle`` checks what the proof promised (``_settle_in_place``: no flag, no escape, no run
    over a preloaded word or outside its windows) and, where it held, books the runs and fills
    ``result``; else False.  ``fail`` (that one, or any queued after it: they ran on the copies
    it spoiled) makes the copies unusable and the bytes it wrote unreadable where the device held
    the only current copy (``Resident.broke_in_place`` over its runs) -- the bytes stand, there
    are no pre-images -- and ``replay`` runs it again through the full path, which refuses it
    ``backend.proof`` (its copies unusable)."""

    __slots__ = ()

    def _runs(self) -> tuple[list, list]:
        """Its runs (sorted heap offsets): the report's, or where they overflowed its room the
        runs of its map as wl_aside kept it in the place's aside (the map itself was cleared)."""
        ag, sl = self.ag, self.slot
        c = sl.words[_RUNS_WORD]
        if c <= ag.room:
            return ag.placed.runs(*sl.runs(c))
        s, e = ag.res.ops.runs(sl.kept)
        return ag.placed.runs(s.tolist(), e.tolist())

    def settle(self) -> bool:
        ag, sl = self.ag, self.slot
        t0 = time.perf_counter()
        s_, e_ = self._runs()
        res = ag.res
        armed = ag.changes is not None and ag.changes == res.changes
        got = ag._settle(sl, s_, e_, cleared=True)
        if isinstance(got, str):
            return False
        spans, written, ks = got
        # (runs only in the windows its launch booked: nothing new to the plan or its record's
        # checks, made after that booking -- it stays armed; else the full path looks again)
        if armed and ks <= self.ranges[1]:
            ag.changes = res.changes
        ag._hints_from(sl)
        ag.note(ks)
        # (the counts copied -- the place's host array serves a later launch -- and summed when
        # the stats are read: a stream's results are mostly read for their refusal alone)
        self.result.settled_counted(spans, written, _counted, sl.counts.tobytes(), ag._stats(_cupy(), sl, t0))
        return True

    def fail(self) -> None:
        ag = self.ag
        ag.changes = None
        try:
            s_, e_ = self._runs()
        except Exception:  # noqa: BLE001 - (a faulted device: ``lose``) where it wrote is not known
            lo, hi = ag.placed.hull  # (as ``_lost_in_place``: Placed.hull)
            s_, e_ = [lo], [hi]
        ag.res.broke_in_place(
            ag.plan,
            s_,
            e_,
            "a deferred dispatch run in place reported a failed proof, or ran after one that did; "
            "the device copies it ran on are unusable",
        )
