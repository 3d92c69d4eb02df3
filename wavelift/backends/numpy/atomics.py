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
        # general case: lanes grouped by cell (stable: in lane order within a cell).  A cell
        # shared by many lanes is one pass along them (a scan, or a loop for the ops whose next
        # value needs the last); the others go in rounds, round r taking each cell's r-th lane.
        # (Rounds alone cost a sort per round: 57 K lanes on one cell took minutes.)
        order = np.argsort(cells, kind="stable")
        sc = cells[order]
        starts = np.flatnonzero(np.concatenate(([True], sc[1:] != sc[:-1])))
        sizes = np.diff(np.append(starts, cells.size))
        old = np.empty(cells.size, t)
        big = sizes > ROUNDS
        for s0, z in zip(starts[big].tolist(), sizes[big].tolist()):
            lanes = order[s0 : s0 + z]
            old[lanes] = _along(view, int(cells[lanes[0]]), op, d[lanes], None if c is None else c[lanes], t)
        rank = np.arange(cells.size) - np.repeat(starts, sizes)
        small = np.repeat(~big, sizes)
        for r in range(int(sizes[~big].max()) if (~big).any() else 0):
            take = order[small & (rank == r)]
            o = view[cells[take]].copy()
            view[cells[take]] = combine(op, o, d[take], None if c is None else c[take], t)
            old[take] = o
        return old


ROUNDS = 64  # a cell shared by more lanes than this is done by _along
_SCAN = {
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "umin": np.minimum,
    "umax": np.maximum,
    "smin": np.minimum,
    "smax": np.maximum,
}


def _along(view, cell, op, d, c, t):
    """The atomics of lanes that share one cell, in order; -> old value per lane."""
    first = view[cell : cell + 1]
    if op in _SCAN:  # old values: the running combination before each lane
        v = _signed(t) if op in ("smin", "smax") else t
        acc = _SCAN[op].accumulate(np.concatenate((first, d)).view(v)).view(t)
    elif op == "swap":
        acc = np.concatenate((first, d))
    else:  # cmpswap, inc, dec: each step needs the last value
        acc = np.empty(d.size + 1, t)
        acc[0] = first[0]
        for k in range(d.size):
            acc[k + 1] = combine(op, acc[k : k + 1], d[k : k + 1], None if c is None else c[k : k + 1], t)[0]
    view[cell] = acc[-1]
    return acc[:-1]
