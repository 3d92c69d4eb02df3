"""The value table of the forward pass (passes/forward.py): the block's rewritten op list with
value numbering.  Equal pure ops (same name, type, operands after substitution and attributes)
and equal constants (same NumPy type and bits) give one Value; a dropped op's result is
substituted (``sub``) by the Value it equals in every later operand."""

from __future__ import annotations

import numpy as np

from ..interp import const_value
from ..numerics import IR_TYPE
from ..program import Op, Value


def op_key(name: str, t: str, args, attrs: dict) -> tuple:
    """What equal pure ops share: name, type, operand values, attributes."""
    return (name, t, tuple(x.id for x in args), repr(sorted(attrs.items())))


def const_key(v) -> tuple:
    """What equal constants share: NumPy type and bits (so -0.0 != 0.0, NaNs by payload)."""
    a = np.asarray(v)
    return ("const", a.dtype.str, a.tobytes())


class ValueTable:
    """Rewritten ops (``ops``), substitutions (``sub``: value id -> Value it equals), constant
    values (``cval``: value id -> NumPy scalar), shared keys (``cse``) and the pure op that
    computes each kept value (``defop``)."""

    FIRST_NEW = 1 << 30  # ids of values the passes make (the frontends' ids are smaller)

    def __init__(self) -> None:
        self.sub: dict = {}
        self.cval: dict = {}
        self.cse: dict = {}
        self.ops: list[Op] = []
        self.defop: dict = {}
        self.fresh = self.FIRST_NEW

    def new_value(self, t: str, uniform: bool) -> Value:
        self.fresh += 1
        return Value(self.fresh, t, uniform)

    def get(self, x: Value) -> Value:
        return self.sub.get(x.id, x)

    def const(self, t: str, v) -> Value:
        """The (shared) constant Value of NumPy scalar ``v`` (its IR type from its NumPy type)."""
        v = np.asarray(v)[()]
        ck = const_key(v)
        if ck in self.cse:
            return self.cse[ck]
        out = self.new_value(IR_TYPE.get(np.asarray(v).dtype.type, t), True)
        self.cse[ck] = out
        self.cval[out.id] = v
        self.ops.append(Op("const", out.type, (), {"value_np": v}, out, -1))
        return out

    def block_const(self, op: Op) -> None:
        """The block's own ``const`` op: kept with its NumPy value, or substituted by an equal one."""
        assert op.out is not None
        v = const_value(op.type, op.attrs["value"])
        ck = const_key(v)
        if ck in self.cse:
            self.sub[op.out.id] = self.cse[ck]
            return
        self.cse[ck] = op.out
        self.cval[op.out.id] = v
        self.ops.append(Op("const", op.type, (), {"value_np": v}, op.out, op.instr))

    def emit(self, name: str, t: str, a, attrs: dict, instr: int, out: Value | None = None) -> Value:
        """A pure op the passes make (or the equal one already made); ``out``: its result is
        that Value (substituted by the equal one's when shared)."""
        key = op_key(name, t, a, attrs)
        if key in self.cse:
            if out is not None:
                self.sub[out.id] = self.cse[key]
            return self.cse[key]
        if out is None:
            out = self.new_value("b1" if name == "cmp" else t, all(x.uniform for x in a))
        self.cse[key] = out
        op = Op(name, t, tuple(a), attrs, out, instr)
        self.ops.append(op)
        self.defop[out.id] = op
        return out

    def keep(self, op: Op) -> None:
        """Pure ``op`` kept as it is, or substituted by an equal one already kept."""
        assert op.out is not None
        key = op_key(op.name, op.type, op.args, op.attrs)
        if key in self.cse:
            self.sub[op.out.id] = self.cse[key]
            return
        self.cse[key] = op.out
        self.ops.append(op)
        self.defop[op.out.id] = op
