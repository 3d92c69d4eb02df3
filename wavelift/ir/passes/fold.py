"""Constant folding and algebraic simplification (rules of the forward pass, passes/forward.py):
an op whose operands are all constants becomes the constant ir/interp.py computes (exactly the
bits a backend would compute; an op that does not evaluate stays), integer identities drop
(x + 0, x | 0, x ^ 0, x << 0, x & ~0, x * 1, ...), b1 and/or with a constant operand and
select with a constant or repeated choice become the operand they pick, a bitcast back to the
original type the original."""

from __future__ import annotations

import numpy as np

from .. import interp
from ..ops import BITS, INTS
from ..program import Op, Value
from .cse import ValueTable

_INT = frozenset(INTS)


def ival(tab: ValueTable, c: Value) -> int | None:
    """The integer value of constant ``c``, else None (not a constant, or a float one: an op of
    an integer type may take one, e.g. isclass, and NaN has no int)."""
    return int(tab.cval[c.id]) if c.id in tab.cval and c.type in _INT else None


def identity(tab: ValueTable, n: str, t: str, args) -> Value | None:
    """x op identity -> x (integer types; the other operand of the op's type)."""
    if t not in _INT or len(args) != 2:
        return None
    a, b = args
    for x, c, ok in (
        (a, b, n in ("add", "sub", "or", "xor", "shl", "shr", "sar")),
        (b, a, n in ("add", "or", "xor")),
    ):
        if ok and ival(tab, c) == 0 and x.type == t:
            return x
    if n not in ("and", "mul"):
        return None
    ones = (1 << BITS[t]) - 1
    for x, c in ((a, b), (b, a)):
        k = ival(tab, c)
        if k is not None and x.type == t and k & ones == (ones if n == "and" else 1):
            return x
    return None


def evaluate(tab: ValueTable, op: Op, args) -> np.ndarray | None:
    """``op`` on ``args`` (its own, after substitution) when every one is a constant and it
    evaluates: the 0-d value, else None."""
    cval = tab.cval
    vals = []
    for x in args:  # (a loop: every pure op of a block is offered here)
        k = cval.get(x.id)
        if k is None:
            return None
        vals.append(k)
    return interp.evaluate_op(op, vals)


def fold(tab: ValueTable, name: str, t: str, a, attrs: dict, instr: int) -> Value:
    """A pure op the passes make, folded (constants, identities) or shared."""
    r = evaluate(tab, Op(name, t, a, attrs, None, instr), a)
    if r is not None:
        return tab.const(t, r[()])
    x = identity(tab, name, t, a)
    if x is not None:
        return x
    return tab.emit(name, t, a, attrs, instr)


def simplify(tab: ValueTable, op: Op, args) -> Value | None:
    """What pure ``op`` (operands ``args``) equals without computing it: the folded constant,
    the operand a b1 and/or or a select picks, the operand an identity leaves; else None."""
    n = op.name
    if n == "bitcast" and args[0].id in tab.defop:
        d = tab.defop[args[0].id]  # a bitcast back to the original type: the original
        if d.name == "bitcast" and d.args[0].type == op.attrs["to"]:
            return d.args[0]
    r = evaluate(tab, op, args)
    if r is not None:
        return tab.const(op.type, r[()])
    if op.type == "b1" and n in ("and", "or") and len(args) == 2:
        for x, y in ((args[0], args[1]), (args[1], args[0])):
            if x.id in tab.cval and y.type == "b1":
                c = bool(tab.cval[x.id])
                if (n == "and") != c:  # and False / or True: constant
                    return tab.const("b1", np.bool_(c))
                return y  # and True / or False: the other
    if n == "select" and args[1].type == args[2].type == op.type:
        if args[0].id in tab.cval:
            return args[1] if bool(tab.cval[args[0].id]) else args[2]
        if args[1].id == args[2].id:
            return args[1]
    return identity(tab, n, op.type, args)
