"""A block of IR ops built by hand, for the tests of the CUDA lowering's block analyses (blends,
nanchain): one builder, so that an op's result type follows one rule in every such test."""

from __future__ import annotations

from wavelift.ir.program import Op, Value


class Ops:
    """ops in program order; ``mask`` is the block's EXEC (an ``exec`` op)"""

    def __init__(self):
        self.n = 0
        self.ops: list = []
        self.mask = self.op("exec", "b1")

    def op(self, name, t, args=(), out=True, **attrs):
        """append op ``name`` of type ``t``; its result is b1 for exec and compares, ``to`` for a
        bitcast, else ``t``"""
        o = None
        if out:
            self.n += 1
            o = Value(self.n, attrs.get("to", "b1" if name in ("exec", "cmp") else t), False)
        self.ops.append(Op(name, t, tuple(args), dict(attrs), o, 0))
        return o

    def vset(self, reg, x, mask=None):
        self.op("vset", "u32", (x, self.mask if mask is None else mask), out=False, reg=reg)

    def values(self):
        """value id -> the op that makes it (deferred_blends' table)"""
        return {op.out.id: op for op in self.ops if op.out is not None}
