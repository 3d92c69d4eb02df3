"""The passes in their order: what every backend runs on a block before lowering it (the NumPy
blocks, the native tier and CUDA compute the same optimised IR).

1. ``forward`` (passes/forward.py): MODE specialisation, register forwarding, 64-bit arithmetic
   in 32 bits (narrow.py), constant folding with ir/interp.py and simplification (fold.py),
   value numbering (cse.py) -- one walk, for one MODE value;
2. ``dce`` (passes/dce.py): dead ops and dead register writes, given the registers live after
   the block (``liveness``, passes/liveness.py: a fixpoint over the program's blocks after 1-2).

The result is an op list over the same values, with two additions a backend lowers: ``const``
ops carry their NumPy value (attribute ``value_np``), and PASS_OPS."""

from __future__ import annotations

import dataclasses

from ..program import Block
from .dce import dce
from .forward import forward
from .liveness import liveness

PASS_OPS = frozenset({"lanes"})  # ops only the passes emit (never in the IR the frontends build):
# lanes(x) is uniform x broadcast to every lane of a per-lane value

__all__ = ["PASS_OPS", "liveness", "optimize"]


def optimize(blk: Block, mode: int, wave_size: int, live_out=None) -> Block:
    """``blk`` after the passes, for MODE value ``mode``; ``live_out``: the registers live after
    it (``liveness(program, wave_size, mode)[blk.index]``; None: all)."""
    ops, term = forward(blk, mode, wave_size)
    return dataclasses.replace(blk, ops=dce(ops, term, live_out), term=term)
