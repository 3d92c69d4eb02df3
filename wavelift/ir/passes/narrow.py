"""64-bit arithmetic computed in 32 bits (rules of the forward pass, passes/forward.py).

Carry chains: v_add_co_u32 / v_add_co_ci_u32 / s_add_u32+s_addc_u32 translate to zero-extend to
u64, add, lo32/hi32, hi32 != 0.  The sum of at most two u32 terms and one b1 term fits in 33
bits, so lo32 is the wrapping u32 sum and hi32 the carry (some partial sum < its predecessor)
-- bit-identical, no 64-bit arrays; ``hi32 != 0`` / ``== 0`` of such a carry (or of any 0/1
made from a b1) is that b1 (or its negation).  Halves: the low or high word of a u64 made by
pack64, a zero extension, a constant shift, a bitwise op (per word) or +, -, * (low word only)
is computed from the operands' words."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops import INTS
from ..program import Op, Value
from .cse import ValueTable
from .fold import fold, ival

_INT = frozenset(INTS)


class Narrowing:
    """The 64-bit values of one block the rules know the make-up of."""

    def __init__(self, tab: ValueTable) -> None:
        self.tab = tab
        self.zext: dict = {}  # u64 value id -> u32/b1 Value it zero-extends
        self.wide: dict = {}  # u64 value id -> (u32 terms, b1 terms) it sums
        self.carry_of: dict = {}  # u32 value id (0/1) -> b1 Value it converts

    def terms_of(self, x: Value):
        if x.id in self.zext:
            y = self.zext[x.id]
            return ([y], []) if y.type == "u32" else ([], [y])
        return self.wide.get(x.id)

    def partial_sums(self, terms, instr: int):
        u, b = terms
        seq = u + b
        p, out = seq[0], []
        for y in seq[1:]:
            q = self.tab.emit("add", "u32", (p, y), {}, instr)
            out.append((p, q, y))
            p = q
        return p, out

    def u32c(self, k: int) -> Value:
        return self.tab.const("u32", np.uint32(k & 0xFFFFFFFF))

    def half(self, v: Value, hi: bool, instr: int, depth: int = 0) -> Value | None:
        """u32 Value equal to lo32(v) (hi: hi32(v)) of u64 ``v`` computed without 64-bit arrays,
        or None."""
        tab = self.tab
        k = ival(tab, v)
        if k is not None:
            return self.u32c(k >> (32 if hi else 0))
        if v.id in self.zext:
            y = self.zext[v.id]
            return self.u32c(0) if hi else (y if y.type == "u32" else None)
        op = tab.defop.get(v.id)
        if op is None or depth > 8 or op.type != "u64":
            return None
        n, a = op.name, op.args
        d = depth + 1
        if n == "pack64":
            return a[1] if hi else a[0]
        s = ival(tab, a[1]) if n in ("shl", "shr") else None
        if s is not None:
            if s == 0:
                return self.half(a[0], hi, instr, d)
            # the side the bits move to (lo32 of shl / hi32 of shr) and the side they leave
            into = hi if n == "shl" else not hi
            back = "shr" if n == "shl" else "shl"
            if s >= 64:
                return self.u32c(0)
            if s >= 32:
                if not into:
                    return self.u32c(0)
                x = self.half(a[0], n == "shr", instr, d)
                return None if x is None else fold(tab, n, "u32", (x, self.u32c(s - 32)), {}, instr)
            x = self.half(a[0], hi, instr, d)
            if x is None:
                return None
            x = fold(tab, n, "u32", (x, self.u32c(s)), {}, instr)
            if not into:
                return x
            y = self.half(a[0], not hi, instr, d)
            if y is None:
                return None
            moved = fold(tab, back, "u32", (y, self.u32c(32 - s)), {}, instr)
            return fold(tab, "or", "u32", (x, moved), {}, instr)
        if n in ("and", "or", "xor") or (not hi and n in ("add", "sub", "mul")):
            # bitwise ops work per word; the low word of +, -, * needs only low words
            x = self.half(a[0], hi, instr, d)
            y = None if x is None else self.half(a[1], hi, instr, d)
            if y is not None:
                return fold(tab, n, "u32", (x, y), {}, instr)
        return None

    def lanes(self, x: Value, out: Value, instr: int) -> Value:
        """``x`` as the value of ``out``: broadcast to all lanes (the passes' own ``lanes`` op)
        if ``out`` is per lane."""
        if x.uniform and not out.uniform:
            return self.tab.emit("lanes", x.type, (x,), {}, instr, self.tab.new_value(x.type, False))
        return x

    def rewrite(self, op: Op, args) -> bool:
        """Apply the rules to pure ``op`` (operands ``args``): True when its result is now
        substituted or made (nothing more to do), False when it goes on to folding."""
        tab, n = self.tab, op.name
        out: Any = op.out  # (a pure op has a result)
        if (
            n == "cvt"
            and op.attrs.get("to") == "u64"
            and op.type in ("u32", "b1")
            and args[0].type == op.type
        ):
            self.zext[out.id] = args[0]
        elif n == "add" and op.type == "u64" and len(args) == 2:
            ta, tb = self.terms_of(args[0]), self.terms_of(args[1])
            if ta is not None and tb is not None:
                u, b = ta[0] + tb[0], ta[1] + tb[1]
                if u and len(u) <= 2 and len(b) <= 1 and len(u) + len(b) >= 2:
                    self.wide[out.id] = (u, b)
        elif n == "lo32" and args[0].id in self.wide and args[0].id not in tab.cval:
            p, _ = self.partial_sums(self.wide[args[0].id], op.instr)
            tab.sub[out.id] = p
            return True
        elif n == "hi32" and args[0].id in self.wide and args[0].id not in tab.cval:
            _, steps = self.partial_sums(self.wide[args[0].id], op.instr)
            c = None
            for p, q, y in steps:
                # q = p + y wraps iff q < p; for a u32 y also iff q < y: compare with the
                # per-lane one (a [waves, 1] operand broadcasts slowly)
                r = y if p.uniform and not y.uniform and y.type == "u32" else p
                k = tab.emit("cmp", "u32", (q, r), {"cond": "lt"}, op.instr)
                c = k if c is None else tab.emit("or", "b1", (c, k), {}, op.instr)
            self.carry_of[out.id] = c
            tab.emit("cvt", "b1", (c,), {"to": "u32"}, op.instr, out)
            return True
        elif n in ("lo32", "hi32") and args[0].id not in tab.cval:
            r = self.half(args[0], n == "hi32", op.instr)
            if r is not None:
                tab.sub[out.id] = self.lanes(r, out, op.instr)
                return True
        elif n == "cmp" and op.attrs.get("cond") in ("ne", "eq") and op.type in _INT:
            for x, y in ((args[0], args[1]), (args[1], args[0])):
                if ival(tab, y) != 0:
                    continue
                d = tab.defop.get(x.id)  # an integer 0/1 made from a b1: the b1 itself
                b = self.carry_of.get(x.id) or (
                    d.args[0] if d is not None and d.name == "cvt" and d.type == "b1" else None
                )
                if b is not None:
                    tab.sub[out.id] = (
                        b if op.attrs["cond"] == "ne" else fold(tab, "not", "b1", (b,), {}, op.instr)
                    )
                    return True
        return False
