"""Global loads in a loop at an address affine in an induction register, tested once for the
whole range the loop can reach (WAVELIFT_CUDA_HOIST=induction; decision 0047's amendment h127).

A wave32 loop of one block ``B`` (its branch goes back to ``B``) whose EXEC at the back edge is
``EXEC & ~(... | ballot(cmp & EXEC-bit) | ...)`` with ``cmp`` ``n <= r'`` (u32; or ``r' >= n``),
``r'`` what the block leaves in VGPR ``r`` and ``n`` made of registers the block does not write:
a lane that runs the block again has ``r < n`` when it does.  A global load of ``B`` under the
EXEC bit whose address is, in the lanes it runs in, ``base + stride * r`` (``r`` the VGPR's value
at the block's entry; ``base`` of registers ``B`` does not write; 0 < stride < 2^31) then reads,
over the whole loop, at ``base + stride * r0`` (r0: the value on entering the loop) and at
addresses in ``[base, base + stride * (n - 1)]``.  Codegen tests those, once, where the loop is
entered (each active lane's own base, r0 and n), against the load's window guess, and runs a
copy of ``B`` whose load is direct when every lane passes; else ``B`` as before (guess,
hint, search, escape -- every iteration).  The direct copy reads exactly what the tested
form's direct path would: every address it reads at is inside the guess and aligned.

The address is proved on the block's own ops, with symbolic values in the lanes the EXEC bit
holds: a u32 value is ``lo(E)`` (``E mod 2^32``) or ``hi(E)`` (``E``'s high word, ``E`` mod
2^64), a u64 one ``w(E)``, ``E`` an affine form over the registers' values at the block's entry
(each in [0, 2^32)).  The guest's 64-bit address add -- ``L = A + B``, ``k = L < B`` (the carry,
anded with the EXEC bit), ``H = C + D + k``, ``pack64(L, H)`` -- becomes one u64 add of
affine forms; a 64-bit shift of a register pair ``(q:r) << c`` as ``lo(2^c r)`` and
``(q << c) | (r >> (32 - c))``; u64 adds, shifts and multiplies by constants, and lo32 / hi32 of a
u64, follow the forms.  Anything else is unknown, and a load whose address is unknown keeps its
per-iteration test."""

from __future__ import annotations

from ...ir.program import EXEC_LO
from .ldsrange import const_int

M64 = (1 << 64) - 1
M32 = (1 << 32) - 1
MAX_STRIDE = 1 << 31


# ------------------------------------------------------------------ affine forms mod 2^64
def _aff(c: int = 0, terms: dict | None = None) -> tuple:
    """(const, ((atom, coeff), ...)) mod 2^64, zero terms dropped, atoms sorted."""
    t = tuple(sorted((a, k & M64) for a, k in (terms or {}).items() if k & M64))
    return (c & M64, t)


def _atom(key) -> tuple:
    return _aff(0, {key: 1})


def _add(x, y) -> tuple:
    t = dict(x[1])
    for a, k in y[1]:
        t[a] = t.get(a, 0) + k
    return _aff(x[0] + y[0], t)


def _scale(x, k: int) -> tuple:
    return _aff(x[0] * k, {a: c * k for a, c in x[1]})


def _mod32(x) -> tuple:
    return (x[0] & M32, tuple((a, k & M32) for a, k in x[1] if k & M32))


def _low_zero(x, s: int) -> bool:
    """The low s bits of E mod 2^32 are 0 for every value of the atoms."""
    m = (1 << s) - 1
    return x[0] & m == 0 and all(k & m == 0 for _, k in x[1])


def _exact(sym) -> tuple | None:
    """The u32 value as an affine form of its integer (not only mod 2^32): a register's value,
    or a constant."""
    if sym is None or sym[0] != "lo":
        return None
    e = _mod32(sym[1])
    if not e[1]:
        return _aff(e[0])
    if e[0] == 0 and len(e[1]) == 1 and e[1][0][1] == 1:
        return _aff(0, {e[1][0][0]: 1})
    return None


class Plan:
    """One load of a loop block tested once: its op, the induction VGPR r, the stride, the
    address's base (an affine form without r) and the bound n (lane runs again => r < n)."""

    __slots__ = ("op", "reg", "stride", "base", "bound")

    def __init__(self, op, reg: int, stride: int, base: tuple, bound: tuple):
        self.op, self.reg, self.stride, self.base, self.bound = op, reg, stride, base, bound


def c_expr(e: tuple) -> str:
    """A u64 C expression of the affine form, its atoms the kernel's register variables."""
    parts = [f"{e[0]:#x}ull"] + [f"{k:#x}ull * (u64){kind}{r}" for (kind, r), k in e[1]]
    return "(" + " + ".join(parts) + ")"


# ------------------------------------------------------------------ one block's symbols
class _Walk:
    """The block's ops evaluated symbolically in the lanes the entry EXEC bit holds."""

    def __init__(self, blk):
        self.sym: dict[int, object] = {}
        self.defs = {op.out.id: op for op in blk.ops if op.out is not None}
        self.regs: dict = {}  # ("v" | "s", reg) -> sym written by the block so far
        self.written: set = set()
        for op in blk.ops:
            self.step(op)

    def s(self, v):
        return self.sym.get(v.id) if hasattr(v, "id") else None

    def step(self, op) -> None:
        n, a = op.name, op.args
        out = None
        if n in ("vget", "sget"):
            key = (n[0], op.attrs["reg"])
            out = self.regs[key] if key in self.regs else ("lo", _atom(key))
        elif n in ("vset", "sset"):
            key = (n[0], op.attrs["reg"])
            self.written.add(key)
            ok = n == "sset" or self.s(a[1]) in (("exec",), ("true",))
            self.regs[key] = self.s(a[0]) if ok else None
        elif n == "exec":
            out = ("exec",) if ("s", EXEC_LO) not in self.regs else None
        elif n == "const":
            k = const_int(op)
            if k is not None:
                out = {"u32": ("lo", _aff(k & M32)), "u64": ("w", _aff(k))}.get(op.type)
                if op.type == "b1" and k:
                    out = ("true",)
        elif n == "lanes":
            out = self.s(a[0])
        elif n == "and" and op.type == "b1":
            x, y = self.s(a[0]), self.s(a[1])
            out = y if x in (("exec",), ("true",)) else x if y in (("exec",), ("true",)) else None
        elif n == "cmp" and op.type == "u32" and op.attrs.get("cond") in ("lt", "gt"):
            out = self._carry(op)
        elif n == "cvt" and op.attrs.get("to") == "u64" and a[0].type == "u32":
            e = _exact(self.s(a[0]))
            out = ("w", e) if e is not None else None
        elif op.type == "u32" and n in ("add", "shl", "shr", "or"):
            out = self._u32(n, [self.s(x) for x in a])
        elif op.type == "u64" and n in ("add", "pack64", "shl", "mul"):
            out = self._u64(n, [self.s(x) for x in a])
        elif n in ("lo32", "hi32") and a[0].type == "u64":
            x = self.s(a[0])
            out = ("lo" if n == "lo32" else "hi", x[1]) if x is not None and x[0] == "w" else None
        if op.out is not None and out is not None:
            self.sym[op.out.id] = out

    def _carry(self, op):
        """cmp lt(A + B, B) (or gt(B, A + B)): the carry out of the u32 add A + B."""
        s, b = (op.args[0], op.args[1]) if op.attrs["cond"] == "lt" else (op.args[1], op.args[0])
        d = self.defs.get(s.id)
        if d is None or d.name != "add" or d.type != "u32" or b.id not in [x.id for x in d.args]:
            return None
        other = d.args[1] if d.args[0].id == b.id else d.args[0]
        x, y = self.s(other), self.s(b)
        if x is None or y is None or x[0] != "lo" or y[0] != "lo":
            return None
        return ("carry", x, y)

    def _u32(self, n, s):
        if any(x is None for x in s):
            return None
        if n == "add":
            x, y = s
            if x[0] == "lo" and y[0] == "lo":
                return ("lo", _add(x[1], y[1]))
            for p, q in ((x, y), (y, x)):
                if p[0] == "lo" and q[0] == "hi":  # (2^32 E has no low word: no carry)
                    return ("hi", _add(_scale(p[1], 1 << 32), q[1]))
                if p[0] == "hi" and q[0] == "carry":
                    # hi(F) + carry(lo(A), lo(B)) where F's low word is one addend: hi(F + other)
                    for mine, other in ((q[2], q[1]), (q[1], q[2])):
                        e = _exact(other)
                        if _mod32(p[1]) == _mod32(mine[1]) and e is not None:
                            return ("hi", _add(p[1], e))
            return None
        if n == "or":
            return self._or(s)
        k = _exact(s[1])  # (a shift by a constant)
        if k is None or k[1] or not 0 < k[0] < 32:
            return None
        if n == "shl" and s[0][0] == "lo":
            return ("lo", _scale(s[0][1], 1 << k[0]))
        e = _exact(s[0])
        if n == "shr" and e is not None and e[1]:  # a register's r >> k: the high word of r << (32 - k)
            return ("hi", _scale(e, 1 << (32 - k[0])))
        return None

    def _or(self, s):
        """(q << c) | (r >> (32 - c)): the bits do not meet -- the high word of one sum."""
        for x, y in ((s[0], s[1]), (s[1], s[0])):
            if x[0] != "lo" or y[0] != "hi":
                continue
            f = y[1]
            # y = hi(2^t * r), r a register: y < 2^t; x's low t bits zero
            if f[0] == 0 and len(f[1]) == 1:
                k = f[1][0][1]
                t = k.bit_length() - 1
                if k == 1 << t and t <= 32 and _low_zero(x[1], t):
                    return ("hi", _add(_scale(x[1], 1 << 32), f))
        return None

    def _u64(self, n, s):
        if any(x is None for x in s):
            return None
        if n == "add" and s[0][0] == "w" and s[1][0] == "w":
            return ("w", _add(s[0][1], s[1][1]))
        if n == "mul" and s[1][0] == "w" and not s[0][1][1]:
            s = [s[1], s[0]]
        if n in ("shl", "mul") and s[0][0] == "w" and s[1][0] in ("w", "lo") and not s[1][1][1]:
            k = s[1][1][0]  # (a constant: a shift below 64, or a factor)
            if n == "mul":
                return ("w", _scale(s[0][1], k))
            return ("w", _scale(s[0][1], 1 << k)) if k < 64 else None
        if n == "pack64":
            lo, hi = s
            if lo[0] != "lo":
                return None
            if hi[0] == "hi" and _mod32(hi[1]) == _mod32(lo[1]):
                return ("w", hi[1])
            e = _exact(lo)
            if hi[0] == "lo" and e is not None:
                return ("w", _add(_scale(hi[1], 1 << 32), e))
        return None


# ------------------------------------------------------------------ the loop's exit
def one_block_loop(b) -> bool:
    """Block b ends in a branch back to itself (its other target leaves it)."""
    t = b.term
    return t[0] == "branch" and (t[2] == b.index) != (t[3] == b.index)


def lane_loop_exits(blk) -> tuple | None:
    """The exit of a wave32 lane loop in block ``blk``: (its last EXEC_LO write, the compares
    whose lanes that write drops), where the write is ``EXEC & ~(Y)`` -- the EXEC the block was
    entered with, and-ed (u32, in any nesting) with the not of Y and any other bits -- and Y
    holds, through ors, the low word of the ballot -- made before the block's first EXEC_LO
    write -- of a compare, alone or and-ed with the lane's EXEC bit as the block was entered: a
    lane still in EXEC after the write had every such compare false.  None: no EXEC_LO write, or not that form.  The one reader of this form
    (induction.find's bounds, globalrange.loop_trips' lane loops); copies through ``lanes`` /
    ``bitcast`` are followed in the ballot's operand."""
    ops = blk.ops
    writes = [k for k, op in enumerate(ops) if op.name == "sset" and op.attrs["reg"] == EXEC_LO]
    if not writes:
        return None
    first = writes[0]
    defs = {op.out.id: op for op in ops if op.out is not None}
    at = {id(op): k for k, op in enumerate(ops)}

    def op_of(x):
        return defs.get(x.id) if hasattr(x, "id") else None

    def strip(x):
        d = op_of(x)
        while d is not None and d.name in ("lanes", "bitcast") and len(d.args) == 1:
            d = op_of(d.args[0])
        return d

    def exec_bit(x) -> bool:  # the lane's EXEC bit as the block was entered
        d = strip(x)
        return d is not None and d.name == "exec" and at[id(d)] < first

    def false(b) -> list:  # the compares false in a lane of the entry EXEC where b1 b is
        d = strip(b)
        if d is None:
            return []
        if d.name == "and" and d.type == "b1":
            for x, y in ((d.args[0], d.args[1]), (d.args[1], d.args[0])):
                if exec_bit(y):
                    return false(x)
            return []
        return [d] if d.name == "cmp" else []

    def outside(y) -> list:  # the compares false in a lane of the entry EXEC not in u32 y
        d = op_of(y)
        if d is None:
            return []
        if d.name == "or" and d.type == "u32":
            return outside(d.args[0]) + outside(d.args[1])
        if d.name == "lo32":
            b = op_of(d.args[0])
            # (made under the entry EXEC, before any write of it: a ballot after one holds only
            # the lanes that EXEC kept, and the others of the entry EXEC go on whatever their
            # compare)
            if b is not None and b.name == "ballot" and at[id(b)] < first:
                return false(b.args[0])
        return []

    def bounds(x) -> tuple[bool, list]:  # (u32 x's lanes lie in the entry EXEC, compares)
        d = op_of(x)
        if d is None:
            return False, []
        if d.name == "sget" and d.attrs["reg"] == EXEC_LO and at[id(d)] < first:
            return True, []
        if d.name == "and" and d.type == "u32":
            e0, c0 = bounds(d.args[0])
            e1, c1 = bounds(d.args[1])
            return e0 or e1, c0 + c1
        if d.name == "not" and d.type == "u32":
            return False, outside(d.args[0])
        return False, []

    last = ops[writes[-1]]
    entry, cmps = bounds(last.args[0])
    return (last, cmps) if entry else None


def _invariant(e: tuple, written: set) -> bool:
    """Every atom of affine form e is a register the block does not write."""
    return all(a not in written for a, _ in e[1])


def find(program, wave_size: int, eligible) -> dict[int, list[Plan]]:
    """-> {block index: [Plan, ...]} for the one-block loops of a wave32 ``program``, over the
    global loads ``eligible(op)`` admits (codegen: a guess slot, the per-lane path)."""
    if wave_size != 32:
        return {}
    out: dict[int, list[Plan]] = {}
    for b in program.blocks:
        if not one_block_loop(b):
            continue
        loads = [op for op in b.ops if op.name == "load" and op.attrs["space"] == "global" and eligible(op)]
        if not loads:
            continue
        exits = lane_loop_exits(b)
        if exits is None:
            continue  # (EXEC unchanged or not a lane loop's: nothing bounds the loop's registers)
        cmps = exits[1]
        w = _Walk(b)
        plans = []
        for op in loads:
            nb = op.attrs["nbytes"]
            addr, mask = w.s(op.args[0]), w.s(op.args[1])
            if mask != ("exec",) or addr is None or addr[0] != "w" or not (nb in (1, 2) or nb % 4 == 0):
                continue
            al = 4 if nb >= 4 else nb
            for (kind, r), k in addr[1][1]:
                if kind != "v" or ("v", r) not in w.written or not 0 < k < MAX_STRIDE or k % al:
                    continue
                base = _aff(addr[1][0], {a: c for a, c in addr[1][1] if a != ("v", r)})
                if not _invariant(base, w.written):
                    continue
                bound = _bound(w, cmps, r)
                if bound is not None:
                    plans.append(Plan(op, r, k, base, bound))
                break
        if plans:
            out[b.index] = plans
    return out


def _bound(w: _Walk, cmps: list, r: int) -> tuple | None:
    """n (an affine form of registers the block does not write, its value mod 2^32) with a
    lane that runs the block again having r < n: a cmp ``n <= r'`` / ``r' >= n`` false there,
    r' what the block leaves in VGPR r."""
    end = w.regs.get(("v", r))
    if end is None or end[0] != "lo":
        return None
    for c in cmps:
        if c.type != "u32" or c.attrs.get("cond") not in ("le", "ge"):
            continue
        n, x = (c.args[0], c.args[1]) if c.attrs["cond"] == "le" else (c.args[1], c.args[0])
        sx, sn = w.s(x), w.s(n)
        if sx is None or sx[0] != "lo" or _mod32(sx[1]) != _mod32(end[1]):
            continue
        if sn is not None and sn[0] == "lo" and _invariant(sn[1], w.written):
            return _mod32(sn[1])
    return None
