"""The passes in their order: what every backend runs on a block before lowering it (the NumPy
blocks, the native tier and CUDA compute the same optimised IR).  The NumPy blocks and the native
tier optimise for the MODE value of the waves that run the block (docs/decisions/0006); a CUDA
kernel for the dispatch's initial MODE, which it compiles in (codegen.BAKED), or -- when the
program writes MODE -- for any MODE (``mode`` None: MODE reads and denormal flushes are left to
the kernel; backends/cuda/codegen.py ``optimized``).

1. ``forward`` (passes/forward.py): MODE specialisation, register forwarding, 64-bit arithmetic
   in 32 bits (narrow.py), constant folding with ir/interp.py and simplification (fold.py),
   value numbering (cse.py) -- one walk, for one MODE value;
2. ``dce`` (passes/dce.py): dead ops and dead register writes, given the registers live after
   the block (``liveness``, passes/liveness.py: a fixpoint over the program's blocks after 1-2).

The result is an op list over the same values, with two additions a backend lowers: ``const``
ops carry their NumPy value (attribute ``value_np``), and PASS_OPS."""

from __future__ import annotations

import dataclasses

from ..program import Block, Op, Program, Value
from .cse import ValueTable
from .dce import dce
from .forward import forward
from .liveness import liveness

PASS_OPS = frozenset({"lanes"})  # ops only the passes emit (never in the IR the frontends build):
# lanes(x) is uniform x broadcast to every lane of a per-lane value

__all__ = ["PASS_OPS", "liveness", "optimize", "optimize_program"]


def optimize(blk: Block, mode: int | None, wave_size: int, live_out=None) -> Block:
    """``blk`` after the passes, for MODE value ``mode`` (None: any); ``live_out``: the registers
    live after it (``liveness(program, wave_size, mode)[blk.index]``; None: all)."""
    ops, term = forward(blk, mode, wave_size)
    return dataclasses.replace(blk, ops=dce(ops, term, live_out), term=term)


def optimize_program(program: Program, mode: int | None, wave_size: int) -> Program:
    """Every block of ``program`` after the passes for ``mode`` (None: any), each with the
    registers live after it: the whole program at once, for a backend that lowers all of it
    together (CUDA: one kernel).  The values the passes make are numbered per block
    (cse.ValueTable.FIRST_NEW); here they are renumbered so that, as in the frontends' IR, no
    two blocks share a value id (the CUDA host evaluates preloads over several blocks)."""
    live = liveness(program, wave_size, mode)
    fresh = ValueTable.FIRST_NEW
    blocks = []
    for b in program.blocks:
        o = optimize(b, mode, wave_size, live[b.index])
        new: dict[int, Value] = {}

        def v(x):
            return new.get(x.id, x) if isinstance(x, Value) else x

        ops = []
        for op in o.ops:
            out = op.out
            if out is not None and out.id >= ValueTable.FIRST_NEW:
                fresh += 1
                new[out.id] = Value(fresh, out.type, out.uniform)
                out = new[out.id]
            ops.append(Op(op.name, op.type, tuple(v(x) for x in op.args), op.attrs, out, op.instr))
        blocks.append(dataclasses.replace(o, ops=ops, term=tuple(v(x) for x in o.term)))
    optimised = dataclasses.replace(program, blocks=blocks)
    optimised.scratch = program.scratch  # (set after construction: replace does not carry it)
    optimised.made_with = program.made_with
    return optimised
