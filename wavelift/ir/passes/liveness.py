"""Registers live between blocks: per block, the (SGPRs, VGPRs) later blocks may read, so that
dce (passes/dce.py) drops writes nothing reads.  Computed over the blocks as the pipeline leaves
them (forward then dce), so a register read only to compute dead values is not live; nor is a
register whose every read in a block follows a write of it there whose lanes off the write's mask
the block never observes (ir/blends.py ``deferred_blends``: such a read sees the written
lanes only, so the register's value before the block is never read through it)."""

from __future__ import annotations

from ..blends import deferred_blends
from ..program import Program
from .dce import dce
from .forward import forward


def live_in(keep, live_out, term=()):
    """(SGPRs, VGPRs) whose values at block entry ``keep`` (a dce result; ``term`` its block's
    terminator) may read, itself or through the blocks after it.  An SGPR write is whole; a VGPR
    write is per lane, so a VGPR live after the block is live before it, and a VGPR read after
    a write of it in the block reads the lanes the write's mask left, unless deferred_blends
    shows that no lane off that mask of the read (or of anything made from it) is observed:
    then the read sees only the write's value (the old lanes are never used, whatever they
    hold)."""
    if live_out is None:
        return None
    written, sin, vin = set(), set(), set(live_out[1])
    defined = {op.out.id: op for op in keep if op.out is not None}
    raw = deferred_blends(keep, defined, [x for x in term[1:] if hasattr(x, "id")]) or {}
    for op in keep:
        if op.name == "sget" and op.attrs["reg"] not in written:
            sin.add(op.attrs["reg"])
        elif op.name == "sset":
            written.add(op.attrs["reg"])
        elif op.name == "vget" and op.out.id not in raw:
            vin.add(op.attrs["reg"])
    return frozenset(sin | (live_out[0] - written)), frozenset(vin)


def liveness(program: Program, wave_size: int, mode: int | None, passes=None) -> list:
    """Per block, (SGPRs, VGPRs) live after it (None: unknown, all) when every block runs
    optimised for ``mode`` (None: any MODE, passes/forward.py): the least fixpoint over the
    blocks' forward op lists.  Blocks ending in setpc (unknown target) or a MODE change (the
    next block runs in another MODE) keep everything.  ``passes``: the pipeline.Passes of
    (``program``, ``mode``, ``wave_size``) that computes each block's forward and dce results
    and keeps them for the blocks' lowering (None: computed here and dropped)."""
    n = len(program.blocks)
    succ = []
    for b in program.blocks:
        # (forward substitutes the terminator's values, never its kind or targets)
        t = None if b.term[0] == "mode" else b.successors()
        succ.append(None if t is None else [x for x in t if 0 <= x < n])
    # only a successor's live-in is ever read: the forward op lists of the blocks no block
    # continues to (a one-block program's only block, a loop-free entry) are never made
    follow = sorted({j for t in succ if t for j in t})
    if passes is None:
        fw = {j: forward(program.blocks[j], mode, wave_size) for j in follow}
        kept = lambda i, lo: dce(*fw[i], lo)  # noqa: E731
    else:
        fw = {j: passes.forward(j) for j in follow}
        kept = lambda i, lo: passes.dce(i, fw[i], lo)  # noqa: E731
    live: list = [(frozenset(), frozenset())] * n

    def out(i):
        if succ[i] is None:
            return None
        s, v = set(), set()
        for j in succ[i]:
            if live[j] is None:
                return None
            s |= live[j][0]
            v |= live[j][1]
        return frozenset(s), frozenset(v)

    changed = True
    while changed:
        changed = False
        for i in reversed(range(n)):
            if i not in fw:
                continue
            lo = out(i)
            li = live_in(kept(i, lo), lo, fw[i][1])
            if li != live[i]:
                live[i], changed = li, True
    return [out(i) for i in range(n)]
