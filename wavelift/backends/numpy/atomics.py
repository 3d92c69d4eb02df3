"""Atomic read-modify-write on a typed view, in lane order (wave-major, then lane)."""
from __future__ import annotations

import numpy as np


def _signed(t):
    return np.int64 if t is np.uint64 else np.int32


def combine(op, old, d, c, t):
    """New memory value for one step (arrays of the unsigned type t)."""
    s = _signed(t)
    if op == "add":
        return old + d
    if op == "sub":
        return old - d
    if op == "swap":
        return d
    if op == "cmpswap":
        return np.where(old == c, d, old)
    if op == "and":
        return old & d
    if op == "or":
        return old | d
    if op == "xor":
        return old ^ d
    if op == "umin":
        return np.minimum(old, d)
    if op == "umax":
        return np.maximum(old, d)
    if op == "smin":
        return np.minimum(old.view(s), d.view(s)).view(t)
    if op == "smax":
        return np.maximum(old.view(s), d.view(s)).view(t)
    if op == "inc":
        return np.where(old >= d, t(0), old + t(1))
    if op == "dec":
        return np.where((old == 0) | (old > d), d, old - t(1))
    raise ValueError(op)


def apply(view, cells, op, d, c, t):
    """Apply the atomics of all selected lanes (in order); -> old value per lane."""
    with np.errstate(all="ignore"):
        # strictly increasing cells (one pass) or, failing that, no duplicates (a sort):
        # no two lanes share a cell, so one gather and one scatter do it
        if cells.size < 2 or bool((cells[1:] > cells[:-1]).all()):
            uniq = cells
        else:
            uniq = np.unique(cells)
        if uniq.size == cells.size:
            old = view[cells]
            view[cells] = combine(op, old, d, c, t)
            return old
        if op in ("add", "sub"):
            order = np.argsort(cells, kind="stable")
            sc, sd = cells[order], d[order]
            if op == "sub":
                sd = (t(0) - sd).astype(t)
            csum = np.cumsum(sd, dtype=t)
            start = np.searchsorted(sc, sc, side="left")
            before = csum - sd - np.where(start > 0, csum[start - 1], t(0))
            old_sorted = view[sc] + before
            old = np.empty_like(old_sorted)
            old[order] = old_sorted
            total = np.zeros(uniq.size, t)
            np.add.at(total, np.searchsorted(uniq, cells), d)
            view[uniq] = view[uniq] + total if op == "add" else view[uniq] - total
            return old
        # general case: rounds; each round takes the next pending lane of every cell
        old = np.empty(cells.size, t)
        pending = np.ones(cells.size, bool)
        while pending.any():
            pidx = np.flatnonzero(pending)
            _, f = np.unique(cells[pidx], return_index=True)
            take = pidx[f]
            o = view[cells[take]].copy()
            view[cells[take]] = combine(op, o, d[take], None if c is None else c[take], t)
            old[take] = o
            pending[take] = False
        return old
