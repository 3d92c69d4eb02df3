"""WindowSet.dirty (decision 0045's "whole costs" amendment): spans() looks for written runs only
inside the bound a runtime keeps, and finds the same runs as a search of every window while the
bound covers every written byte; a bound dropped (None) or reset by ``refill`` searches all."""

from __future__ import annotations

import numpy as np

from wavelift.memory.guest import GuestMemory
from wavelift.run.result import Window
from wavelift.trace.windows import WindowSet


def _set(rng):
    mem = GuestMemory()
    sizes = [int(rng.integers(64, 400)) for _ in range(4)]
    bases = [mem.alloc(n, name=f"b{i}") for i, n in enumerate(sizes)]
    return WindowSet([Window(b, n, f"b{i}", "t") for i, (b, n) in enumerate(zip(bases, sizes))], mem)


def test_bound_finds_the_same_runs_as_a_full_search():
    rng = np.random.default_rng(7)
    for _ in range(200):
        win = _set(rng)
        lo = int(rng.integers(0, win.nbytes))
        hi = int(rng.integers(lo, win.nbytes + 1))
        win.dirty = [win.nbytes, 0]
        for _ in range(int(rng.integers(0, 6))):  # writes inside [lo, hi), each marked
            if hi <= lo:
                break
            a = int(rng.integers(lo, hi))
            b = int(rng.integers(a, hi + 1))
            win.written[a:b] = 1
            win.mark(a, b)
        bounded = win.spans()
        win.dirty, win._spans = None, None
        assert bounded == win.spans()


def test_refill_drops_the_bound():
    win = _set(np.random.default_rng(1))
    win.dirty = [0, 8]
    win.refill()
    assert win.dirty is None
    end = int(win.offs[-1]) + win.windows[-1].size
    win.written[end - 4 : end] = 1  # (a later run's write far from the old bound is found)
    assert win.spans() == [(win.windows[-1].address + win.windows[-1].size - 4, 4)]
