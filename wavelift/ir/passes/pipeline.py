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

__all__ = ["PASS_OPS", "Passes", "liveness", "optimize", "optimize_program"]

# On (the tests: tests/conftest.py), Passes keeps each block as liveness read it and raises where a
# block changed after that (Passes._check): ``live`` is never computed again, so a change to the
# IR after translation would lower blocks with stale live sets, silently.  Off, nothing is kept.
CHECK = False


def optimize(blk: Block, mode: int | None, wave_size: int, live_out=None) -> Block:
    """``blk`` after the passes, for MODE value ``mode`` (None: any); ``live_out``: the registers
    live after it (``liveness(program, wave_size, mode)[blk.index]``; None: all)."""
    ops, term = forward(blk, mode, wave_size)
    return dataclasses.replace(blk, ops=dce(ops, term, live_out), term=term)


class Passes:
    """The passes over the blocks of one program for one MODE value (None: any) and wave size,
    each result computed once: liveness's fixpoint walks every block that follows another
    through forward and dce, and the block's lowering (the NumPy block, the native tier's
    library, the CUDA kernel) wants that same block after the passes -- before this, forward
    ran again for each of them (two or three times a block: ~57 % of a module's build time in
    h154's profile).  ``live`` is liveness's result and ``block(i)`` is
    ``optimize(blocks[i], mode, wave_size, live[i])``, the very same ops (shared: nothing
    changes an op after the passes make it).

    The results assume the IR is not changed after translation (ModeBlocks kept ``live`` per
    MODE on that before): ``live`` is never computed again.  The per-block check guards only a
    block's own forward and dce results -- kept with the Block at that index, its terminator and
    its ops (each the same object, in order), and computed again where the block no longer holds
    those -- not the other blocks' live sets a change would move (with CHECK on, a change is an
    error: ``_check``).  ``block(i)`` drops the forward and dce results it was made from;
    ``drop()`` the rest (a module keeps its results through one dispatch: numpy
    ModeBlocks.settle)."""

    def __init__(self, program: Program, mode: int | None, wave_size: int) -> None:
        self.program = program
        self.mode = mode
        self.wave_size = wave_size
        self._live: list | None = None
        self._fw: dict = {}  # block index -> (Block, its ops, its term, forward's (ops, term))
        self._kept: dict = {}  # block index -> (forward's result, live_out, dce's ops) last made
        self._done: dict = {}  # block index -> (Block, its ops, its term, the optimised Block)
        self._seen: list | None = None  # (CHECK) per block (Block, its term, its ops or None)

    @staticmethod
    def _holds(hit, blk: Block) -> bool:
        return hit[0] is blk and hit[2] == blk.term and hit[1] == blk.ops

    @property
    def live(self) -> list:
        """Per block, the registers live after it (``liveness``)."""
        if self._live is None:
            self._live = liveness(self.program, self.wave_size, self.mode, self)
            if CHECK:  # (ops not made yet -- kept lazily, so not read by liveness: None)
                self._seen = [
                    (b, b.term, None if b.__dict__.get("_lazy") is not None else list(b.ops))
                    for b in self.program.blocks
                ]
        return self._live

    def _check(self, index: int | None = None) -> None:
        """(CHECK) Raise where block ``index`` (None: any block) is not the Block, terminator
        and ops (each the same object, in order) liveness read: ``live`` would be stale."""
        seen, blocks = self._seen, self.program.blocks
        assert seen is not None
        if len(blocks) != len(seen):
            raise AssertionError(f"Passes: {len(seen)} blocks became {len(blocks)} after liveness")
        for i in range(len(seen)) if index is None else (index,):
            blk, term, ops = seen[i]
            b = blocks[i]
            if b is not blk or b.term != term or (ops is not None and b.ops != ops):
                raise AssertionError(
                    f"Passes: block {i} changed after liveness (its live sets, never computed "
                    "again, would be stale: the IR must not change after translation)"
                )

    def forward(self, index: int) -> tuple[list[Op], tuple]:
        """forward(blocks[index], mode, wave_size)."""
        blk = self.program.blocks[index]
        hit = self._fw.get(index)
        if hit is not None and self._holds(hit, blk):
            return hit[3]
        ops = list(blk.ops)
        out = forward(blk, self.mode, self.wave_size)
        self._fw[index] = (blk, ops, blk.term, out)
        return out

    def dce(self, index: int, fw: tuple, live_out) -> list[Op]:
        """dce(*fw, live_out), where ``fw`` is ``forward(index)``: the last one made for the block
        is kept (liveness's last round asks for each block's final live_out, block() again)."""
        hit = self._kept.get(index)
        if hit is not None and hit[0] is fw and hit[1] == live_out:
            return hit[2]
        keep = dce(fw[0], fw[1], live_out)
        self._kept[index] = (fw, live_out, keep)
        return keep

    def drop(self) -> None:
        """Forget the blocks' kept results (``live`` stays): whatever asks for one later makes
        it again."""
        if self._seen is not None:
            self._check()
        self._fw, self._kept, self._done = {}, {}, {}

    def block(self, index: int) -> Block:
        """Block ``index`` after the passes, with the registers live after it."""
        blk = self.program.blocks[index]
        hit = self._done.get(index)
        if hit is not None and self._holds(hit, blk):
            return hit[3]
        live_out = self.live[index]
        if self._seen is not None:
            self._check(index)
        ops = list(blk.ops)
        fw = self.forward(index)
        out = dataclasses.replace(blk, ops=self.dce(index, fw, live_out), term=fw[1])
        self._done[index] = (blk, ops, blk.term, out)
        self._fw.pop(index, None)
        self._kept.pop(index, None)
        return out


def optimize_program(program: Program, mode: int | None, wave_size: int) -> Program:
    """Every block of ``program`` after the passes for ``mode`` (None: any), each with the
    registers live after it: the whole program at once, for a backend that lowers all of it
    together (CUDA: one kernel).  The values the passes make are numbered per block
    (cse.ValueTable.FIRST_NEW); here they are renumbered so that, as in the frontends' IR, no
    two blocks share a value id (the CUDA host evaluates preloads over several blocks)."""
    passes = Passes(program, mode, wave_size)
    fresh = ValueTable.FIRST_NEW
    blocks = []
    for b in program.blocks:
        o = passes.block(b.index)
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
