"""Windows: private copies of guest ranges the module may touch, address checks, write spans.

All windows live back to back in one uint8 *arena* (each placed at an arena offset congruent to
its guest address mod 8, so aligned guest accesses are aligned arena accesses).  A guest address
is resolved with one ``np.searchsorted`` over the window starts; an access that is not wholly
inside one window is an escape.  Every byte stored is marked in ``written``; write spans are the
runs of marked bytes, and landing copies exactly those bytes back to guest memory.
"""
from __future__ import annotations

import numpy as np

from ..result import Window

MASK48 = np.uint64((1 << 48) - 1)
SIGN_EXT = np.uint64(0xFFFF000000000000)
BIT47 = np.uint64(1 << 47)


def canonical(addr):
    """Guest addresses as the memory system sees them: 48 bits, sign-extended from bit 47."""
    a = np.asarray(addr, np.uint64) & MASK48
    return np.where((a & BIT47) != 0, a | SIGN_EXT, a)


class WindowSet:
    def __init__(self, windows: list[Window], memory):
        ws = sorted(windows, key=lambda w: w.address)
        merged: list[Window] = []
        for w in ws:                     # merge overlapping/adjacent requests of one allocation
            if merged and w.address < merged[-1].address + merged[-1].size:
                m = merged[-1]
                end = max(m.address + m.size, w.address + w.size)
                merged[-1] = Window(m.address, end - m.address, m.name,
                                    m.reason if w.reason in m.reason else m.reason + "; " + w.reason)
            else:
                merged.append(w)
        self.windows = merged
        offs, pos = [], 0
        for w in merged:
            pos += (w.address - pos) % 8
            offs.append(pos)
            pos += w.size
        pos += 8
        self.arena = np.zeros(pos + (-pos) % 8, np.uint8)
        self.written = np.zeros(self.arena.size, bool)
        for w, o in zip(merged, offs):
            self.arena[o:o + w.size] = memory.view(w.address, w.size)
        self.arena32 = self.arena.view(np.uint32)
        self.starts = np.array([w.address for w in merged], np.uint64)
        self.ends = np.array([w.address + w.size for w in merged], np.uint64)
        self.offs = np.array(offs, np.int64)

    def resolve(self, addr, nbytes: int):
        """-> (arena byte index int64, ok bool) for each address (same shape); ok is None when
        every address is inside one window (the common case, found from min/max alone)."""
        a = np.asarray(addr, np.uint64)
        if a.size and self.starts.size:
            lo, hi = int(a.min()), int(a.max())
            if hi < (1 << 47):                  # lower half: already canonical
                k = int(np.searchsorted(self.starts, np.uint64(lo), side="right")) - 1
                if k >= 0 and lo >= int(self.starts[k]) and hi + nbytes <= int(self.ends[k]):
                    d = int(self.offs[k]) - int(self.starts[k])
                    return a.astype(np.int64) + d, None
        a = canonical(a)
        if self.starts.size == 0:
            return np.zeros(a.shape, np.int64), np.zeros(a.shape, bool)
        k = np.searchsorted(self.starts, a, side="right").astype(np.int64) - 1
        kk = np.maximum(k, 0)
        ok = (k >= 0) & (a + np.uint64(nbytes) <= self.ends[kk]) & (a >= self.starts[kk])
        idx = self.offs[kk] + (a - self.starts[kk]).astype(np.int64)
        return np.where(ok, idx, 0), ok

    def spans(self) -> list[tuple[int, int]]:
        """(guest address, size) of every run of written bytes."""
        out = []
        for w, o in zip(self.windows, self.offs):
            m = self.written[o:o + w.size]
            if not m.any():
                continue
            # run boundaries from one comparison of neighbours (no int8 copy, no diff)
            b = np.concatenate(([0], np.flatnonzero(m[1:] != m[:-1]) + 1, [m.size]))
            on = m[b[:-1]]
            starts, ends = b[:-1][on], b[1:][on]
            out += [(w.address + int(s), int(e - s)) for s, e in zip(starts.tolist(), ends.tolist())]
        return out

    def land(self, memory, spans) -> int:
        """Copy the written bytes into guest memory; -> bytes written."""
        total = 0
        for addr, size in spans:
            k = int(np.searchsorted(self.starts, np.uint64(addr), side="right")) - 1
            o = int(self.offs[k]) + (addr - int(self.starts[k]))
            memory.view(addr, size)[:] = self.arena[o:o + size]
            total += size
        return total
