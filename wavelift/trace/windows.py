"""Windows: private copies of guest ranges the module may touch, address checks, write spans.

All windows live back to back in one uint8 *arena* (each placed at an arena offset congruent to
its guest address mod 8, so aligned guest accesses are aligned arena accesses).  An access whose
addresses all lie in one window is found from their min/max (``locate``: arena index = address +
one constant); otherwise each address is resolved with ``np.searchsorted`` over the window
starts, and an access that is not wholly inside one window is an escape (so is one at an address
that is not canonical; the range test cannot wrap: guest.holds, decision 0014).  Every byte stored is
marked in ``written``; write spans are the runs of marked bytes, and landing copies exactly those
bytes back to guest memory.
"""

from __future__ import annotations

import threading
from bisect import bisect_right

import numpy as np

from ..kept import keep
from ..memory.guest import holds, is_canonical
from ..run.result import Window

# Arenas and written maps of finished dispatches, kept for the next ones: a fresh large array
# page-faults on every first touch (the kernel zeroes each page), a reused one does not.
# Invariant: a free written map is all zero.
_FREE: list = []
_FREE_LOCK = threading.Lock()
KEEP_BYTES = 512 << 20  # at most this much kept (arena + written)


def _take(size: int):
    with _FREE_LOCK:
        for i, (a, w) in enumerate(_FREE):
            if size <= a.size <= 2 * size + (1 << 20):
                del _FREE[i]
                return a[:size], w[:size]
    return np.empty(size, np.uint8), np.zeros(size, np.uint8)


def _give(arena, written):
    a, w = (
        arena.base if arena.base is not None else arena,
        written.base if written.base is not None else written,
    )
    with _FREE_LOCK:
        _FREE.append((a, w))
        while sum(2 * x.size for x, _ in _FREE) > KEEP_BYTES:
            del _FREE[0]


# layouts of recent window lists (merged windows, arena offsets, arena bytes): a dispatch
# launched again with the same arguments places the same windows (tracer.trace's cache hands
# out the same list), so the merge and the offsets are not worked out again
_LAYOUTS: dict = {}
LAYOUTS = 64


class Layout:
    """Merged windows, their arena offsets and the arena's size, for one window list (the same
    object while the list is among the last LAYOUTS: a runtime may key what follows from the
    layout alone on it, weakly -- the CUDA backend's device window tables)."""

    __slots__ = ("windows", "offs", "nbytes", "tables", "__weakref__")

    def __init__(self, windows: list[Window], offs: list[int], nbytes: int):
        self.windows, self.offs, self.nbytes = windows, offs, nbytes
        self.tables: tuple | None = None  # (``arrays``)

    def arrays(self) -> tuple:
        """(offsets int64, starts uint64, ends uint64 -- read-only arrays --, start list, end
        list, arena index minus address per window): made once per layout, shared by every
        WindowSet of it (a pure function of the windows and offsets, which never change)."""
        t = self.tables
        if t is None:
            ws, offs = self.windows, self.offs
            arrs = (
                np.array(offs, np.int64),
                np.array([w.address for w in ws], np.uint64),
                np.array([w.address + w.size for w in ws], np.uint64),
            )
            for a in arrs:
                a.flags.writeable = False
            t = self.tables = arrs + (
                [w.address for w in ws],
                [w.address + w.size for w in ws],
                [o - w.address for w, o in zip(ws, offs)],
            )
        return t


# (the window objects of the last _layout call, and its layout): the trace cache hands out the
# same Window objects for a repeated launch (frozen: the same objects, the same values)
_LAST: list = [(), None]


def _layout(windows) -> Layout:
    last = _LAST[0]
    if len(windows) == len(last) and all(a is b for a, b in zip(windows, last)) and _LAST[1] is not None:
        return _LAST[1]
    key = tuple(windows)
    hit = _LAYOUTS.get(key)
    if hit is not None:
        _LAST[:] = [key, hit]
        return hit
    ws = sorted(windows, key=lambda w: w.address)
    merged: list[Window] = []
    for w in ws:  # merge overlapping/adjacent requests of one allocation
        if merged and w.address < merged[-1].address + merged[-1].size:
            m = merged[-1]
            end = max(m.address + m.size, w.address + w.size)
            merged[-1] = Window(
                m.address,
                end - m.address,
                m.name,
                m.reason if w.reason in m.reason else m.reason + "; " + w.reason,
            )
        else:
            merged.append(w)
    offs, pos = [], 0
    for w in merged:
        pos += (w.address - pos) % 8
        offs.append(pos)
        pos += w.size
    # spare tail: a masked-off or escaping lane reads at index 0, and its widest access
    # (s_load_dwordx16: 64 bytes) must stay inside the arena
    pos = max(pos + 8, 64)
    out = Layout(merged, offs, pos + (-pos) % 8)
    keep(_LAYOUTS, key, out, LAYOUTS)
    _LAST[:] = [key, out]
    return out


class WindowSet:
    def __init__(
        self,
        windows: list[Window],
        memory,
        alias_except=None,
        blank=None,
        guess_min: int = 0,
        host_arena: bool = True,
    ):
        """For a runtime that can tell when these guesses fail (the native driver: 0013), and
        ``copy_all`` copies them in for one that cannot:
        ``alias_except``: None, or the (address, size) of windows that must be in the arena while
        every other window is *aliased*: left in guest memory, read there and never stored to;
        ``blank``: None, or the (address, size) of windows that are in the arena but not copied
        in (their bytes are arbitrary): stored to and never read;
        ``guess_min``: the smallest window either guess takes (the caller's policy, its backend's
        window plan); a smaller one is copied in.
        ``host_arena``: False for a runtime that keeps the arena and the written map itself
        (the CUDA backend's device-resident memory, decision 0029): only the layout (windows,
        offsets, ``nbytes``, the address tables) is made; ``arena``/``written`` are None and
        spans/land/refill/copy_all are not available."""
        self.layout = lay = _layout(windows)
        merged, nbytes = list(lay.windows), lay.nbytes
        self.windows = merged
        self.nbytes = nbytes  # the arena's size in bytes (the written map's too)
        self.memory = memory
        # (the layout's read-only tables, shared: made once per window list)
        self.offs, self.starts, self.ends, self._start_list, self._end_list, self._delta = lay.arrays()
        least = guess_min
        self.aliased = (
            set()
            if alias_except is None
            else {
                k for k, w in enumerate(merged) if w.size >= least and (w.address, w.size) not in alias_except
            }
        )
        self.blank = (
            set()
            if blank is None
            else {k for k, w in enumerate(merged) if w.size >= least and (w.address, w.size) in blank}
            - self.aliased
        )
        self._spans: list[tuple[int, int]] | None = None  # spans() once it has run
        self._marked: list[tuple[int, int]] = []  # of those, the ones whose marks are still set
        # window -> arena ranges [lo, hi) written, whose marks a runtime cleared (settle)
        self._settled: dict[int, list[tuple[int, int]]] = {}
        self.maybe_written = None  # indices of the windows a run may have written (None: any)
        # [lo, hi): arena indices outside which nothing was written, kept by a runtime that says
        # so (the NumPy runtime's own stores: ``mark``); None: anywhere (spans() looks at all)
        self.dirty: list[int] | None = None
        if host_arena:
            self.arena, self.written = _take(nbytes)  # written: nonzero = written
            self._copy_in()
            self.arena32 = self.arena.view(np.uint32)
        else:
            self.arena = self.written = self.arena32 = None
        # (_start_list, _end_list: plain-int copies for locate(): a scalar bisect beats
        # np.searchsorted's call overhead)

    def _copy_in(self):
        """The windows' bytes from guest memory (aliased ones stay there, blank ones are not
        copied), zeros between and after them."""
        pos = 0
        arena, view, skip = self.arena, self.memory.view, self.aliased | self.blank
        for k, (w, o) in enumerate(zip(self.windows, self.layout.offs)):
            if o > pos:  # (a gap: windows are placed 8-aligned mod their addresses)
                arena[pos:o] = 0
            if k not in skip:
                arena[o : o + w.size] = view(w.address, w.size)
            pos = o + w.size
        arena[pos:] = 0

    def copy_all(self):
        """Copy the aliased and blank windows in: every window is in the arena as guest memory
        holds it (plus what was stored) from now on."""
        for k in sorted(self.aliased | self.blank):
            w, o = self.windows[k], int(self.offs[k])
            self.arena[o : o + w.size] = self.memory.view(w.address, w.size)
        self.aliased, self.blank = set(), set()

    def release(self):
        """Give the arena and written map back for the next dispatch's windows (the set is
        not used after): written is cleared where spans() found marks, or wholly."""
        if self.arena is None:
            return
        if self._spans is None:
            self.written[:] = 0
        else:
            for addr, size in self._marked:
                o = self._index(addr)
                self.written[o : o + size] = 0
        _give(self.arena, self.written)
        self.arena = self.written = self.arena32 = None

    def refill(self):
        """Every window as guest memory holds it (aliased and blank ones as they were: see
        copy_all), nothing written (a discarded run starts over)."""
        self._copy_in()
        self.written[:] = 0
        self._settled = {}
        self.dirty = None  # (the run that starts over sets its own bound)

    def settle(self, ranges):
        """``ranges``: (window, arena lo, hi) each wholly written, whose marks the runtime has
        cleared from the written map (the native driver's wl_settle, done by the thread that
        wrote them): spans() counts them written without a scan, release() leaves them.  The
        ranges of one window do not meet (the driver's race check kept the run)."""
        self._settled = {}
        for k, lo, hi in ranges:
            self._settled.setdefault(k, []).append((lo, hi))

    def locate(self, lo: int, hi: int, nbytes: int):
        """-> d (arena index = guest address + d, d % 8 == 0) when every access of ``nbytes`` at
        guest addresses in [lo, hi] lies inside one window, else None.  Only the lower canonical
        half qualifies (there an address is its own canonical form)."""
        if lo < 0 or hi >= (1 << 47):
            return None
        k = bisect_right(self._start_list, lo) - 1
        if k >= 0 and hi + nbytes <= self._end_list[k]:
            return self._delta[k]
        return None

    def resolve(self, addr, nbytes: int):
        """-> (arena byte index int64, ok bool) for each address (same shape); ok is None when
        every address is inside one window (the common case, found from min/max alone)."""
        a = np.asarray(addr, np.uint64)
        if a.size:
            d = self.locate(int(a.min()), int(a.max()), nbytes)
            if d is not None:
                return a.view(np.int64) + d, None
        if self.starts.size == 0:
            return np.zeros(a.shape, np.int64), np.zeros(a.shape, bool)
        k = np.searchsorted(self.starts, a, side="right").astype(np.int64) - 1
        kk = np.maximum(k, 0)
        d = a - self.starts[kk]  # (wraps where a < start: k < 0 or not canonical)
        ok = (k >= 0) & is_canonical(a) & holds(d, np.uint64(nbytes), self.ends[kk] - self.starts[kk])
        idx = self.offs[kk] + np.where(ok, d, np.uint64(0)).astype(np.int64)
        return np.where(ok, idx, 0), ok

    def mark(self, lo: int, hi: int) -> None:
        """Arena indices [lo, hi) may have been written (``dirty``)."""
        d = self.dirty
        if d is not None:
            if lo < d[0]:
                d[0] = lo
            if hi > d[1]:
                d[1] = hi

    def spans(self) -> list[tuple[int, int]]:
        """(guest address, size) of every run of written bytes: taken written without a scan
        where ``settle`` says so, looked for only inside ``dirty`` where a runtime keeps that
        bound (the same runs: nothing is written outside it)."""
        out: list[tuple[int, int]] = []
        marked = self._marked = []  # (the spans whose marks release() clears)
        bound = self.dirty
        for k, (w, o) in enumerate(zip(self.windows, self.offs.tolist())):
            if self.maybe_written is not None and k not in self.maybe_written:
                continue
            done = self._settled.get(k)
            if done:  # (the whole window: settled ranges come from native runs)
                m = self.written[o : o + w.size]
                done = sorted(done)
                if (
                    done[0][0] == o
                    and done[-1][1] == o + w.size
                    and all(a[1] == b[0] for a, b in zip(done, done[1:], strict=False))
                ):
                    out.append((w.address, w.size))  # settled end to end: no mark left, no scan
                    continue
                m = m != 0
                for lo, hi in done:
                    m[lo - o : hi - o] = True
                n = len(out)
                self._runs(m, w.address, out)
                marked += out[n:]
                continue
            lo, hi = o, o + w.size
            if bound is not None:
                lo, hi = max(lo, bound[0]), min(hi, bound[1])
                if lo >= hi:
                    continue
            m = self.written[lo:hi]
            if not m.size:
                continue
            at = w.address + (lo - o)
            # (min / max over the bytes: ~3x faster than count_nonzero, the same two answers)
            if m.min():  # all of [lo, hi) (the whole window when the bound covers it): one span
                out.append((at, hi - lo))
                marked.append(out[-1])
                continue
            if not m.max():
                continue
            n = len(out)
            self._runs(m != 0, at, out)
            marked += out[n:]
        self._spans = out
        return out

    @staticmethod
    def _runs(m, address: int, out: list) -> None:
        """The runs of True in ``m`` (a window's bytes at ``address``) onto ``out``."""
        # run boundaries from one comparison of neighbours (no int8 copy, no diff)
        b = np.concatenate(([0], np.flatnonzero(m[1:] != m[:-1]) + 1, [m.size]))
        on = m[b[:-1]]
        starts, ends = b[:-1][on], b[1:][on]
        out += [(address + int(s), int(e - s)) for s, e in zip(starts.tolist(), ends.tolist())]

    def _index(self, addr: int) -> int:
        """Arena index of a guest address inside a window."""
        k = bisect_right(self._start_list, addr) - 1
        return addr + self._delta[k]

    def land(self, memory, spans, stream=None, stream_min: int = 0) -> int:
        """Copy the written bytes into guest memory; -> bytes written.  ``stream``: None, or
        copy(dst, src) of the same bytes with streaming stores (backends/native stream_copy),
        for the spans of ``stream_min`` bytes or more."""
        total = 0
        for addr, size in spans:
            o = self._index(addr)
            if stream is not None and size >= stream_min:
                stream(memory.view(addr, size), self.arena[o : o + size])
            else:
                memory.view(addr, size)[:] = self.arena[o : o + size]
            total += size
        return total
