"""Which window each global access of a dispatch lies in, proved before it runs (decision 0049,
step 3; its amendment h110 lists what is followed).

ldsrange's forward analysis (its intervals and congruences of u32 values, its driver over
blocks, registers and the lanes EXEC leaves active), seeded with this dispatch's values -- the
user SGPRs, the workgroup-id SGPRs bounded by the grid, the local ids by the block, the words of
the uniform loads the host preloads (preload.evaluate) -- and given the ops of 64-bit addresses:
a u64 value is an interval ``W`` of 64-bit integers (pack64 of two u32 intervals, zero and
non-negative sign extension, +, -, and / or with constants, constant shifts, *), and a b1 value
an interval inside [0, 1], so that a carry (``q < p`` of ``q = p + y``, the form the passes
narrow v_add_co_u32 / v_add_co_ci_u32 / s_add_u32 / s_addc_u32 to, or ``hi32(zext + zext) != 0``)
is known 0 where the operands' intervals cannot overflow.  A global access is proved inside
window k when its bytes (an atomic's: the aligned cell the backends check) lie inside [start,
end) of window k for every value of its address's interval; anything not followed is any value,
so such an access is unproved (None).

What a proof assumes: the preloaded words are the bytes the loads read (a store of the same
dispatch to them voids it: the runtime's rerun without preloads, 0049's "stores disjoint from
every preloaded byte"), and the registers start as the CUDA kernel and the NumPy backend start
them (ldsrange.analyse: VGPRs other than the local ids 0).
"""

from __future__ import annotations

from bisect import bisect_right

from . import ldsrange as L
from .induction import lane_loop_exits, one_block_loop
from .ldsrange import TOP, V
from .spans import base_and_offset

M64 = (1 << 64) - 1
CANON_LOW = 1 << 47  # windows below: addresses there are their own canonical form
CANON_HIGH = 0xFFFF800000000000  # (and at or above this)


class W(tuple):
    """(lo, hi): a u64 whose value lies in [lo, hi]."""

    __slots__ = ()

    def __new__(cls, lo: int, hi: int):
        lo, hi = max(int(lo), 0), min(int(hi), M64)
        if lo > hi:
            lo, hi = 0, M64
        return tuple.__new__(cls, (lo, hi))

    lo = property(lambda s: s[0])
    hi = property(lambda s: s[1])


WTOP = W(0, M64)
FALSE, TRUE, BOOL = V(0, 0, 32, 0), V(1, 1, 32, 1), V(0, 1)
TYPES = ("u32", "i32", "u64", "i64", "b1")


def _w(x) -> W:
    """x as a 64-bit interval (a u32 value zero-extended)."""
    if isinstance(x, W):
        return x
    if isinstance(x, V):
        return W(x.lo, x.hi)
    return WTOP


def _cmp(cond: str, a, b) -> V:
    """b1 of ``a cond b`` where the intervals decide it, else [0, 1]."""
    if cond == "lt":
        return TRUE if a.hi < b.lo else FALSE if a.lo >= b.hi else BOOL
    if cond == "le":
        return TRUE if a.hi <= b.lo else FALSE if a.lo > b.hi else BOOL
    if cond == "gt":
        return _cmp("lt", b, a)
    if cond == "ge":
        return _cmp("le", b, a)
    if cond == "eq":
        return TRUE if a.lo == a.hi == b.lo == b.hi else FALSE if a.hi < b.lo or b.hi < a.lo else BOOL
    if cond == "ne":
        e = _cmp("eq", a, b)
        return BOOL if e == BOOL else FALSE if e == TRUE else TRUE
    return BOOL


_NEGATE = {"lt": "ge", "le": "gt", "gt": "le", "ge": "lt", "eq": "ne", "ne": "eq"}
_SWAP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}


def _meet(x, cond: str | None, y, tz: int):
    """x (a V or W) narrowed to the values for which ``x cond y`` can hold (y in its interval),
    its ends moved to multiples of 2^tz (x's low tz bits are zero); None: no value can."""
    if cond is None or cond == "ne":
        return x
    lo, hi = x.lo, x.hi
    if cond == "lt":
        hi = min(hi, y.hi - 1)
    elif cond == "le":
        hi = min(hi, y.hi)
    elif cond == "gt":
        lo = max(lo, y.lo + 1)
    elif cond == "ge":
        lo = max(lo, y.lo)
    elif cond == "eq":
        lo, hi = max(lo, y.lo), min(hi, y.hi)
    else:
        return x
    step = 1 << min(tz, 64)
    lo, hi = -(-lo // step) * step, hi // step * step
    if lo > hi:
        return None
    if isinstance(x, W):
        return W(lo, hi)
    return L.tighten(V(lo, hi, x.k, x.r))


class Values:
    """The evaluator ldsrange.analyse runs (its ``value``): ldsrange.value_of for u32 values,
    plus b1 and 64-bit values; ``words``: {value id of a preloaded load: its words}."""

    def __init__(self, words: dict, wave_size: int):
        self.words = words
        self.L = wave_size
        self.defs: dict = {}  # value id -> its op (the carry rule looks a few ops back)
        self.copies: dict = {}  # ldsrange.Spec.copies (a select's arms follow VGPR copies)
        self.val: dict = {}  # the table this op is evaluated from

    def look(self, x):
        """Value x in the lanes of the table this op is evaluated from (every lane's: the
        block's whole table; ldsrange.Lanes: looked up in the same lanes)."""
        if isinstance(self.val, L.Lanes):
            return self.val.look(x)
        return self.val.get(x.id, WTOP if x.type in ("u64", "i64") else TOP)

    def __call__(self, op, val):
        self.val = val
        o = op.out
        if o is not None:
            self.defs[o.id] = op
        n, t = op.name, op.type
        rt = o.type if o is not None else t
        args = [val.get(x.id, WTOP if x.type in ("u64", "i64") else TOP) for x in op.args]
        if n == "word":
            w = self.words.get(op.args[0].id)
            return TOP if w is None else L.const(int(w[op.attrs["k"]]))
        if n == "lanes":
            return args[0]
        if n == "select" and rt in TYPES:
            c = args[0]
            if isinstance(c, V) and c.lo == c.hi <= 1:
                # a condition that holds (or fails) in every lane of the table: its one arm
                # (a V#'s SWIZZLE_ENABLE / ADD_TID_ENABLE / OOB_SELECT read from known words)
                x = args[1] if c.lo else args[2]
                if rt == "b1":
                    return x if isinstance(x, V) and x.hi <= 1 else BOOL
                if rt in ("u64", "i64"):
                    return _w(x)
                return L.tighten(x) if isinstance(x, V) else TOP
        if rt == "b1":
            return self._b1(op, args)
        if rt in ("u64", "i64"):
            return self._u64(op, args)
        if n == "select" and isinstance(val, L.Lanes) and val.within is not None:
            plain = self._u32(op, val, args)
            if plain.hi == L.M:  # (only where the plain join knows no bound: it costs a walk)
                got = self._select(op, val)
                if got is not None:
                    return L.tighten(got)
            return L.tighten(plain)
        return L.tighten(self._u32(op, val, args))

    def address(self, op, look):
        """The address of access ``op`` in the lanes its mask holds (ldsrange.Spec.address;
        ``look``: a value in the lanes of the EXEC the mask is a subset of): the compares the
        mask is a conjunction of (through not / and / or and selects of a decided condition)
        narrow the values they compare -- a MUBUF access's mask is EXEC and not out of range, so
        in its lanes the offset is below NUM_RECORDS (the frontend's range check: a lane out of
        range accesses nothing) -- and the address is evaluated again from the narrowed
        values; None where no lane can access (no claim)."""
        given = look

        def look(x):  # (a 64-bit value the table lacks: any value, never a u32 interval)
            v = given(x)
            return v if x.type not in ("u64", "i64") or isinstance(v, W) else WTOP

        narrowed = self._narrow(op.args[1], True, look)
        if narrowed is None:
            return None  # (the mask holds in no lane)
        if not narrowed:
            return look(op.args[0])
        return self._under(op.args[0], narrowed, look, None)

    def _narrow(self, cond, holds: bool, look) -> dict | None:
        """{value id: its value narrowed} by the compares b1 ``cond`` being ``holds`` implies in a
        lane (an i32 / u32 bitcast's operand narrowed with it); None: it holds in no lane."""
        narrowed: dict = {}
        for c, h in self._facts(cond, look, holds, 0):
            cond_ = c.attrs["cond"] if h else _NEGATE.get(c.attrs["cond"])
            if cond_ is None:
                continue
            x, y = c.args
            a, b = narrowed.get(x.id, look(x)), narrowed.get(y.id, look(y))
            if c.type in ("u64", "i64"):
                a, b = _w(a), _w(b)
                if c.type == "i64" and max(a.hi, b.hi) >= 1 << 63:
                    continue
            elif c.type not in ("u32", "i32") or (c.type == "i32" and max(a.hi, b.hi) > 0x7FFFFFFF):
                continue
            for v, o, cnd in ((x, b, cond_), (y, a, _SWAP.get(cond_))):
                cur = narrowed.get(v.id, look(v))
                got = _meet(cur, cnd, o, self._tz(v, look, 0))
                if got is None:
                    return None
                narrowed[v.id] = got
                d = self.defs.get(v.id)
                if d is not None and d.name == "bitcast" and d.args[0].type in ("u32", "i32"):
                    src = d.args[0]  # (the same bits)
                    if src.id in narrowed:
                        got = _meet(narrowed[src.id], "eq", got, 0)
                        if got is None:
                            return None
                    narrowed[src.id] = got
        return narrowed

    def _under(self, x, narrowed: dict, look, within):
        """Value x evaluated again from the ``narrowed`` values (look: the others); ``within``
        (a Lanes'): a VGPR read whose copy holds in these lanes is the value copied
        (ldsrange.Spec.copies), else None: reads are as the analysis has them."""
        memo: dict = {}

        def inner(z):
            return narrowed.get(z.id, look(z))

        def ev(x, depth=0):
            if x.id in narrowed:
                return narrowed[x.id]
            if x.id in memo:
                return memo[x.id]
            d = self.defs.get(x.id)
            cp = self.copies.get(x.id) if within is not None else None
            if cp is not None and depth <= 64 and within(cp[1]):
                got = ev(cp[0], depth + 1)  # (a VGPR read: the value the block copied there)
            elif d is None or depth > 64 or not d.args:
                got = look(x)
            else:
                args = {y.id: ev(y, depth + 1) for y in d.args}
                if all(args[y.id] is look(y) or args[y.id] == look(y) for y in d.args):
                    got = look(x)  # (nothing narrowed below: the value as the analysis has it)
                else:
                    got = self(d, L.Lanes(args, inner, within))
                    self.val = {}
            memo[x.id] = got
            return got

        return ev(x)

    def _select(self, op, val):
        """A u32 select in the lanes of ``val`` (a Lanes): each arm evaluated again in the lanes
        its condition takes it in (its compares narrow the values they compare, through the
        VGPR copies the block made); None where nothing is learnt."""
        given = val.look

        def look(x):
            v = given(x)
            return v if x.type not in ("u64", "i64") or isinstance(v, W) else WTOP

        arms = []
        for holds, x in ((True, op.args[1]), (False, op.args[2])):
            nar = self._narrow(op.args[0], holds, look)
            if nar is None:
                continue  # (no lane takes this arm)
            v = self._under(x, nar, look, val.within) if nar else look(x)
            if not isinstance(v, V):
                return None
            arms.append(v)
        self.val = val
        return L.join(*arms) if len(arms) == 2 else arms[0] if arms else None

    def _facts(self, x, look, holds: bool, depth: int) -> list:
        """(cmp op, whether it holds) for each compare that b1 ``x`` holding (``holds``; else
        failing) implies in a lane."""
        d = self.defs.get(x.id)
        if d is None or depth > 16:
            return []
        n = d.name
        if n == "cmp":
            return [(d, holds)]
        if n == "not":
            return self._facts(d.args[0], look, not holds, depth + 1)
        if n == "lanes":
            return self._facts(d.args[0], look, holds, depth + 1)
        if (n == "and" and holds) or (n == "or" and not holds):
            return [f for y in d.args for f in self._facts(y, look, holds, depth + 1)]
        if n == "select":
            c = look(d.args[0])
            if isinstance(c, V) and c.lo == c.hi <= 1:
                return self._facts(d.args[1 if c.lo else 2], look, holds, depth + 1)
        return []

    def _tz(self, x, look, depth: int) -> int:
        """Low bits of value x known zero in the lanes (at most 64)."""
        v = look(x)
        if isinstance(v, V):
            return L._tz(v) if v.k else 0
        if v.lo == v.hi:
            return 64 if v.lo == 0 else (v.lo & -v.lo).bit_length() - 1
        d = self.defs.get(x.id)
        if d is None or depth > 32:
            return 0
        n, a = d.name, d.args
        if n in ("cvt", "bitcast") and len(a) == 1:
            return min(self._tz(a[0], look, depth + 1), 64)
        if n in ("add", "sub", "or") and len(a) == 2:
            return min(self._tz(a[0], look, depth + 1), self._tz(a[1], look, depth + 1))
        if n == "and" and len(a) == 2:
            return max(self._tz(a[0], look, depth + 1), self._tz(a[1], look, depth + 1))
        if n == "mul" and len(a) == 2:
            return min(self._tz(a[0], look, depth + 1) + self._tz(a[1], look, depth + 1), 64)
        if n == "shl" and len(a) == 2:
            s = _w(look(a[1]))
            if s.lo == s.hi < 64:
                return min(self._tz(a[0], look, depth + 1) + s.lo, 64)
        if n == "select" and len(a) == 3:
            return min(self._tz(a[1], look, depth + 1), self._tz(a[2], look, depth + 1))
        if n == "pack64":
            t = self._tz(a[0], look, depth + 1)
            return t if t < 32 else 32 + min(self._tz(a[1], look, depth + 1), 32)
        return 0

    def _u32(self, op, val, args) -> V:
        n, t = op.name, op.type
        rt = op.out.type if op.out is not None else t
        if n in ("lo32", "hi32") or (
            n == "cvt" and op.args[0].type in ("u64", "i64") and rt in ("u32", "i32")
        ):
            a = _w(args[0])
            if n == "hi32":
                return V(a.lo >> 32, a.hi >> 32)
            return V(a.lo & L.M, a.hi & L.M) if a.lo >> 32 == a.hi >> 32 else TOP
        if n == "cvt" and op.args[0].type == "b1" and rt in ("u32", "i32"):
            a = args[0]
            return a if a.hi <= 1 else BOOL
        if n == "mulhi" and t == "u32":  # (monotone in both unsigned operands)
            a, b = args
            return V((a.lo * b.lo) >> 32, (a.hi * b.hi) >> 32)
        if n in ("add", "sub", "and", "or", "xor", "select") and any(x.type == "b1" for x in op.args[-2:]):
            # a carry added as 0 / 1 (the passes' narrowed v_add_co_ci_u32): its interval
            args = [a if x.type != "b1" or a.hi <= 1 else BOOL for a, x in zip(args, op.args)]
            return L.value_of(op, {x.id: a for x, a in zip(op.args, args)})
        return L.value_of(op, val)

    def _b1(self, op, args) -> V:
        n = op.name
        if n == "const":
            v = op.attrs["value_np"] if "value_np" in op.attrs else op.attrs.get("value")
            return BOOL if v is None else TRUE if bool(v) else FALSE
        if n in ("and", "or") and len(args) == 2:
            a, b = (x if x.hi <= 1 else BOOL for x in args)
            if n == "and":
                return FALSE if FALSE in (a, b) else TRUE if a == b == TRUE else BOOL
            return TRUE if TRUE in (a, b) else FALSE if a == b == FALSE else BOOL
        if n == "not":
            a = args[0]
            return TRUE if a == FALSE else FALSE if a == TRUE else BOOL
        if n == "select":
            return L.join(args[1], args[2]) if max(args[1].hi, args[2].hi) <= 1 else BOOL
        if n == "cmp":
            return self._compare(op, args)
        if n == "maskbit":
            # a lane's own bit of a ballot (wave64: through its two halves packed again, as a
            # carry in VCC is read back) is the ballot's operand in that lane
            b = self._ballot_of(op.args[0])
            if b is not None:
                v = self.look(b.args[0])
                return v if v.hi <= 1 else BOOL
        return BOOL

    def _ballot_of(self, x):
        """The ballot op whose lane bits u64 x holds, bit for bit in the wave's lanes."""
        d = self.defs.get(x.id)
        if d is not None and d.name == "ballot":
            return d
        if d is None or d.name != "pack64":
            return None
        lo, hi = (self.defs.get(y.id) for y in d.args)
        if lo is None or lo.name != "lo32":
            return None
        b = self.defs.get(lo.args[0].id)
        if b is None or b.name != "ballot":
            return None
        if self.L == 32 or (hi is not None and hi.name == "hi32" and hi.args[0].id == lo.args[0].id):
            return b
        return None

    def _compare(self, op, args) -> V:
        cond, t = op.attrs["cond"], op.type
        a, b = args
        if t in ("u64", "i64"):
            a, b = _w(a), _w(b)
            if t == "i64" and max(a.hi, b.hi) >= 1 << 63:
                return BOOL
        elif t == "i32" and max(a.hi, b.hi) > 0x7FFFFFFF:
            return BOOL  # (signed order = unsigned order on non-negative values only)
        elif t not in ("u32", "i32"):
            return BOOL
        got = _cmp(cond, a, b)
        if got == BOOL and cond in ("lt", "gt") and t == "u32":
            # a carry: q < p (or p > q) of q = p + y (either order) is false where p + y cannot
            # pass 2^32 -- q is then the true sum, at least p
            q, p = (op.args[0], op.args[1]) if cond == "lt" else (op.args[1], op.args[0])
            d = self.defs.get(q.id)
            if d is not None and d.name == "add" and d.type == "u32" and p.id in (d.args[0].id, d.args[1].id):
                if self._no_wrap(d):
                    return FALSE
        return got

    def _no_wrap(self, add_op) -> bool:
        """The u32 add's operands' intervals cannot pass 2^32 in the lanes of the table the
        compare is evaluated from."""
        a, b = (self.look(x) for x in add_op.args)
        a, b = (x if y.type != "b1" or x.hi <= 1 else BOOL for x, y in zip((a, b), add_op.args))
        return not isinstance(a, W) and not isinstance(b, W) and a.hi + b.hi <= L.M

    def _u64(self, op, args) -> W:
        n = op.name
        if n == "const":
            v = op.attrs["value_np"] if "value_np" in op.attrs else op.attrs.get("value")
            try:
                c = int(v) & M64
            except (TypeError, ValueError):
                return WTOP
            return W(c, c)
        if n == "pack64":
            lo, hi = args
            return W(hi.lo << 32 | lo.lo, hi.hi << 32 | lo.hi)
        if n == "cvt":
            src = op.args[0].type
            a = args[0]
            if src in ("u32", "u8", "u16") or (src == "b1" and a.hi <= 1):
                return W(a.lo, a.hi)
            if src == "i32" and a.hi <= 0x7FFFFFFF:  # a non-negative value: as a zero extension
                return W(a.lo, a.hi)
            if src in ("u64", "i64"):
                return _w(a)
            return WTOP
        if n == "bitcast" and op.args[0].type in ("u64", "i64"):
            return _w(args[0])
        if n == "select":
            a, b = _w(args[1]), _w(args[2])
            return W(min(a.lo, b.lo), max(a.hi, b.hi))
        if len(args) != 2:
            return WTOP
        a, b = _w(args[0]), _w(args[1])
        if n == "add":
            for x, y in ((a, b), (b, a)):
                if y.lo == y.hi and y.lo >= 1 << 63:  # + a negative constant: a subtraction
                    d = (1 << 64) - y.lo
                    return W(x.lo - d, x.hi - d) if x.lo >= d else WTOP
            return W(a.lo + b.lo, a.hi + b.hi) if a.hi + b.hi <= M64 else WTOP
        if n == "sub":
            return W(a.lo - b.hi, a.hi - b.lo) if a.lo >= b.hi else WTOP
        if n == "mul":
            return W(a.lo * b.lo, a.hi * b.hi) if a.hi * b.hi <= M64 else WTOP
        if n == "sar" and b.lo == b.hi and b.lo < 64:
            s = b.lo
            if a.lo == a.hi:  # (a constant: its sign extension, sext48's high canonical half)
                x = a.lo - (1 << 64) if a.lo >> 63 else a.lo
                return W((x >> s) & M64, (x >> s) & M64)
            return W(a.lo >> s, a.hi >> s) if a.hi >> 63 == 0 else WTOP  # (non-negative)
        if n in ("shl", "shr") and b.lo == b.hi and b.lo < 64:
            s = b.lo
            if n == "shr":
                return W(a.lo >> s, a.hi >> s)
            return W(a.lo << s, a.hi << s) if a.hi << s <= M64 else WTOP
        if n == "and":
            for x, y in ((a, b), (b, a)):
                # a mask of high ones (~3: an s_load's alignment): monotone
                if y.lo == y.hi and ((~y.lo & M64) + 1) & (~y.lo & M64) == 0:
                    return W(x.lo & y.lo, x.hi & y.lo)
            return W(0, min(a.hi, b.hi))
        if n == "or":
            return W(max(a.lo, b.lo), min((1 << max(a.hi, b.hi).bit_length()) - 1, a.hi + b.hi))
        return WTOP


def global_accesses(program) -> list:
    """The global loads, stores and atomics of ``program`` in slot order (codegen.Lowering.slot:
    blocks in order, ops in order)."""
    return [
        op
        for b in program.blocks
        for op in b.ops
        if op.name in ("load", "store", "atomic") and op.attrs["space"] == "global"
    ]


def written_windows(program, proof) -> frozenset:
    """The windows the lean build of ``program`` (kernel.h's WL_PROVED: every slot's guess its
    proved window, an access outside it flagged and not made) can store into, given ``proof``
    (each global access's proved window, global_accesses' order; every one proved): a store's or
    atomic's own, and that of every global load or store whose address has the same root as a
    store's in its block (spans.base_and_offset) -- codegen's span groups (spans.find) test their
    first member's guess, which may be a load's, and write every member through it.  A superset
    of what the lean kernel can mark, whatever the proof: decision 0049's amendment h157."""
    at = {id(op): j for j, op in enumerate(global_accesses(program))}
    out = set()
    for b in program.blocks:
        defs = {op.out.id: op for op in b.ops if op.out is not None}
        roots: dict = {}  # root value id -> ([proved windows], whether a store is among them)
        for op in b.ops:
            j = at.get(id(op))
            if j is None:
                continue
            if op.name == "atomic":  # (never grouped: its own guess)
                out.add(proof[j])
                continue
            got = roots.setdefault(base_and_offset(op.args[0], defs)[0].id, [[], False])
            got[0].append(proof[j])
            got[1] = got[1] or op.name == "store"
        for ks, stored in roots.values():
            if stored:
                out.update(ks)
    return frozenset(out)


def access_bytes(op) -> int:
    return op.attrs["nbytes"] if op.name != "atomic" else op.attrs["bits"] // 8


def prove(
    program,
    wave_size: int,
    shape: dict | None,
    sregs: dict,
    words: dict,
    windows: list,
    ids: dict | None = None,
    facts: list | None = None,
) -> list:
    """-> for each global access of ``program`` (slot order), the index in ``windows`` (sorted,
    non-overlapping (start, end) pairs) of the window every lane of every group accesses it in,
    or None where that is not proved.  ``shape``: the block (ldsrange.entry_registers; None
    where a group may be partial); ``sregs``: {SGPR: V} at the kernel's start (user SGPRs as
    constants, workgroup ids bounded); ``words``: {value id of a uniform load: its words} for
    the loads the host preloaded; ``ids``: the block's shape where ``shape`` is None (a partial
    group's active lanes' local ids are inside it); ``facts`` (if given) gets the analysis's
    values and block exits (ldsrange.analyse's ``facts``: what loop bounds read)."""
    acc = global_accesses(program)
    if not acc and facts is None:
        return []
    # the local ids of the lanes a group starts with (its EXEC) are inside the block even where
    # the group is partial (then the other lanes' are not known: shape None)
    active = L.entry_registers(wave_size, shape or ids)
    values = Values(words, wave_size)
    spec = L.Spec(
        value=values,
        types=TYPES,
        sregs=sregs,
        spaces=("global",),
        active=active,
        ballots64=True,
        address=values.address,
        copies=values.copies,
    )
    seen: tuple | None = ({}, {}) if facts is not None else None  # (kept only where asked)
    got = L.analyse(program, wave_size, shape, lanes=True, spec=spec, facts=seen)
    if facts is not None:
        facts.append(seen)
    starts = [s for s, _ in windows]
    out: list = []
    for op in acc:
        a = got.get(id(op))
        nb = access_bytes(op)
        a = _w(a) if a is not None else WTOP
        lo, hi = a.lo, a.hi
        if op.name == "atomic":  # the aligned cell is what the backends check (and touch)
            lo, hi = lo & ~(nb - 1), hi & ~(nb - 1)
        k = bisect_right(starts, lo) - 1
        ok = k >= 0 and hi + nb <= windows[k][1]
        if ok:
            s, e = windows[k]
            ok = e > s and (e <= CANON_LOW or s >= CANON_HIGH)
        out.append(k if ok else None)
    return out


def dispatch_registers(config) -> dict:
    """{SGPR: V} at the kernel's start for ``config``: the user SGPRs (those no system value
    takes) as their values, the workgroup ids as [first, last] of the grid's groups."""
    from .preload import USER_SGPRS

    sys_ = config.system_sgprs
    fixed = set(sys_.values())
    out = {r: L.const(int(v)) for r, v in enumerate(config.user_sgprs[:USER_SGPRS]) if r not in fixed}
    for d, axis in enumerate("xyz"):
        r = sys_.get(f"workgroup_id_{axis}")
        if r is not None:
            out[r] = V(config.group_start[d], config.group_end[d] - 1)
    return out


def block_shape(config) -> dict:
    """ldsrange's shape of ``config``'s whole block (codegen.generate's)."""
    from . import codegen as G

    vals = dict(G.baked_params(config))
    return {"block": tuple(config.block), "tidig": vals[G.P_TIDIG], "packed": bool(vals[G.P_GFX11])}


def group_cases(config) -> list:
    """The dispatch's groups as cases that together cover them: (SGPR seeds, shape in every lane
    or None, shape in the lanes a group starts with) each.  Where a dimension's last group is
    partial (the grid's own partial dims decide, not PARTIAL_TG_EN), its groups split into the
    whole ones (ids first .. last - 1, the block's shape in every lane) and the last one (its
    partial size, in the lanes it starts with only: the others' ids are not known)."""
    from itertools import product

    regs0, shape = dispatch_registers(config), block_shape(config)
    sys_ = config.system_sgprs
    dims = [d for d in range(3) if config.partial_tg and 0 < config.partial[d] < config.block[d]]
    out = []
    for pick in product((False, True), repeat=len(dims)):  # (True: that dimension's last group)
        regs, block = dict(regs0), list(config.block)
        for d, last in zip(dims, pick):
            s, e = config.group_start[d], config.group_end[d]
            lo, hi = (e - 1, e - 1) if last else (s, e - 2)
            if lo > hi:
                break
            r = sys_.get(f"workgroup_id_{'xyz'[d]}")
            if r is not None:
                regs[r] = V(lo, hi)
            if last:
                block[d] = config.partial[d]
        else:
            sh = {**shape, "block": tuple(block)}
            out.append((regs, None if any(pick) else sh, sh))
    return out


def prove_dispatch(program, config, windows, loads=None, words=None, facts=None) -> list:
    """prove() for a dispatch of ``config`` whose windows are the WindowSet ``windows``, once per
    group case (group_cases): a slot's window where every case proves the same one;
    ``program``: the IR the CUDA kernel lowers (codegen.optimized); ``loads`` / ``words``:
    preload.find's loads of it and their words (preload.evaluate), else evaluated here;
    ``facts``: prove's, one entry per group case."""
    from . import preload as P_

    if loads is None:
        loads, plan = P_.find(program)
        fixed = set(config.system_sgprs.values())
        words, _ = P_.evaluate(loads, plan, program, config.wave_size, config.user_sgprs, fixed, windows)
    known = {op.out.id: w for op, w in zip(loads, words or ()) if w is not None}
    wins = [(int(s), int(e)) for s, e in zip(windows.starts, windows.ends)]
    out: list | None = None
    for regs, shape, ids in group_cases(config):
        got = prove(program, config.wave_size, shape, regs, known, wins, ids, facts)
        out = got if out is None else [a if a == b else None for a, b in zip(out, got)]
    return out if out is not None else [None] * len(global_accesses(program))


# unrefusable()'s reasons, in the order they are tested (decision 0049's amendment h124)
REASONS = (
    "wave64_waves",  # a wave64 group of more than 15 waves: refused before the launch
    "setpc",  # s_setpc / s_swappc: a jump the host cannot follow (program.bad_jump)
    "bad_address",  # a goto past the decoded program (program.bad_address)
    "loop",  # a back edge: a wave may run past its budget (dispatch.budget_exceeded)
    "budget",  # the longest path is longer than the wave's budget
    "refuse_if",  # an instruction that refuses at run time (its refusal code)
    "scratch",  # a scratch access: its window test may escape
    "rounding",  # a float op under a MODE the kernel refuses (float.rounding_mode)
    "global_access",  # a global access not proved inside one window for every lane
    "store_preloaded",  # a store into a window whose words the host preloaded
    "store_mirrored",  # a store into a window a uniform load reads (a mirror: a rerun)
)


def _paths(program, trips=None) -> tuple[str | None, int, list]:
    """(None, the most instructions a wave counts on any path from the first block, the blocks
    reached), else (the reason, 0, []): an s_setpc or a goto out of the program reached, or a
    cycle that is not a natural loop with one back edge whose runs per entry ``trips(header
    block, its blocks, the blocks outside it that enter it)`` bounds (None: not bounded; ``trips`` None: no loop is).  A loop counts
    its bound times its longest path from its header (its inner loops so counted), then the
    longest path from the block it leaves to (decision 0049's amendment h126)."""
    blocks = program.blocks
    if not blocks:
        return None, 0, []
    by = {b.index: b for b in blocks}
    first = blocks[0].index
    succ: dict[int, list[int]] = {}
    work = [first]
    while work:
        bi = work.pop()
        if bi in succ:
            continue
        b = by.get(bi)
        if b is None:
            return "bad_address", 0, []
        # (a barrier is a plain goto here: it stops no wave for good; unlike
        # codegen.straight_path)
        nxt = b.successors()
        if nxt is None:
            return "setpc" if b.term[0] == "setpc" else "bad_address", 0, []
        if any(x < -1 or (x >= 0 and x not in by) for x in nxt):
            return "bad_address", 0, []
        succ[bi] = [x for x in nxt if x >= 0]  # (-1: the wave ends)
        work += succ[bi]
    # back edges: to a block on the depth-first walk's stack
    back: dict[int, list[int]] = {}
    state = {first: 1}
    walk = [(first, iter(succ[first]))]
    while walk:
        bi, it = walk[-1]
        x = next(it, None)
        if x is None:
            state[bi] = 2
            walk.pop()
        elif state.get(x) == 1:
            back.setdefault(x, []).append(bi)
        elif x not in state:
            state[x] = 1
            walk.append((x, iter(succ[x])))
    pred: dict[int, list[int]] = {}
    for bi, xs in succ.items():
        for x in xs:
            pred.setdefault(x, []).append(bi)
    body: dict[int, set[int]] = {}
    for h, tails in back.items():
        if trips is None or len(tails) != 1:
            return "loop", 0, []
        # the natural loop: h and the blocks that reach the tail without passing h; reaching the
        # first block (other than h) means h does not dominate the tail: not a natural loop
        got, work = {h}, [tails[0]]
        while work:
            bi = work.pop()
            if bi in got:
                continue
            if bi == first:
                return "loop", 0, []
            got.add(bi)
            work += pred.get(bi, [])
        body[h] = got
    order = sorted(body, key=lambda h: len(body[h]))  # (inner loops first)
    for i, h in enumerate(order):
        if any(body[h] & body[g] and not body[h] <= body[g] for g in order[i + 1 :]):
            return "loop", 0, []
    rep: dict[int, int] = {}  # block -> the header of the largest loop counted that holds it
    cost: dict[int, int] = {}  # a counted loop's header -> its instructions per entry
    out: dict[int, list[int]] = {}  # ... -> the blocks it leaves to

    def longest(start: int, region, head) -> int | None:
        """The most instructions from ``start`` over ``region`` (blocks; counted loops as one
        node), not taking edges into ``head`` (the loop's back edge); None: a cycle is left."""

        def nxt(n):
            return {rep.get(x, x) for x in (out[n] if n in cost else succ[n]) if x in region and x != head}

        memo: dict[int, int] = {}
        on: set[int] = set()
        stack = [(start, False)]
        while stack:
            n, done = stack.pop()
            if done:
                on.discard(n)
                own = cost[n] if n in cost else len(by[n].instrs)
                memo[n] = own + max((memo[x] for x in nxt(n)), default=0)
                continue
            if n in memo:
                continue
            on.add(n)
            stack.append((n, True))
            for x in nxt(n):
                if x in on:
                    return None
                if x not in memo:
                    stack.append((x, False))
        return memo[start]

    for h in order:
        assert trips is not None
        entries = [by[p] for p in pred.get(h, []) if p not in body[h]]
        n, each = trips(by[h], body[h], entries), longest(h, body[h], h)
        if n is None or each is None:
            return "loop", 0, []
        cost[h] = n * each
        out[h] = [x for bi in body[h] for x in succ[bi] if x not in body[h]]
        rep.update(dict.fromkeys(body[h], h))
    most = longest(rep.get(first, first), succ.keys(), None)
    if most is None:
        return "loop", 0, []
    return None, most, [b for b in blocks if b.index in succ]


def _dom(v, signed: bool) -> tuple[int, int]:
    """u32 interval v as integers of the compare's order (signed: i32 values)."""
    v = v if isinstance(v, V) else TOP
    if not signed or v.hi <= 0x7FFFFFFF:
        return v.lo, v.hi
    if v.lo > 0x7FFFFFFF:
        return v.lo - (1 << 32), v.hi - (1 << 32)
    return -(1 << 31), (1 << 31) - 1


def loop_trips(b, wave_size: int, entries: list, facts: list) -> int | None:
    """The most times one-block loop ``b`` (a branch back to itself) runs per entry, or None where
    that is not proved (decision 0049's amendment h126).  Two forms: a **uniform** loop whose
    uniform branch condition is (or negates) a u32 / i32 compare, and a wave32 **lane loop**
    that goes on while the EXEC it writes -- ``EXEC & ~(Y)``, its only EXEC write, after every
    read of the lanes' EXEC bit -- is not 0, Y holding (through ors) the ballot of a compare
    alone or and-ed with the lane's EXEC bit (induction.lane_loop_exits, the form's one reader):
    a lane goes on only where that compare failed.
    The compare reads an **induction register** (a uniform loop's: an SGPR) at the block's
    start (before any write of it in the block) or that value plus a constant d, and the
    register's last write in the block (an SGPR's, or a VGPR's under the block's EXEC, through
    copies made in the block) is that value plus the same d; the other side is a **bound**
    whose interval the analysis knows (not all of u32).  From the register's interval at the
    loop's entry (the entering blocks' exits, in their active lanes) and the bound's:

    * <, <=, >, >= (going on while the value is at most U, stepping up; mirrored): at most
      2 + (U - start.lo) // d rounds (1 where start.lo > U), where no value that goes on can
      pass an end of the compare's order (32-bit: no wrap-around);
    * != with d = +-1 and a bound the same in every round (a constant, a register the loop
      does not write): the value meets the bound before it wraps where every start lies on
      the step's side of every bound; at most the farthest distance (+1 testing the value
      before its step).

    ``facts``: the analysis's (values, exits) per group case (prove's): the most over them."""
    t = b.term
    if not one_block_loop(b) or not entries or not facts:
        return None
    ops = b.ops
    defs = {op.out.id: op for op in ops if op.out is not None}
    at = {id(op): k for k, op in enumerate(ops)}
    writes: dict = {}  # (kind, register) -> positions of its writes
    for k, op in enumerate(ops):
        if op.name in ("sset", "vset"):
            writes.setdefault((op.name[0], op.attrs["reg"]), []).append(k)

    def strip(x):
        d = defs.get(x.id)
        while d is not None and d.name in ("bitcast", "lanes") and len(d.args) == 1:
            x = d.args[0]
            d = defs.get(x.id)
        return x, d

    def start(x):
        """The register u32 x reads at the block's start, or None."""
        x, d = strip(x)
        if d is None or d.name not in ("sget", "vget"):
            return None
        key = (d.name[0], d.attrs["reg"])
        return key if at[id(d)] < min(writes.get(key, [len(ops)])) else None

    def step(x):
        """(register, d) where u32 x is a register's start value + d, else None."""
        x, d = strip(x)
        if d is None or d.name not in ("add", "sub") or d.type not in ("u32", "i32"):
            return None
        for v, c in ((d.args[0], d.args[1]), (d.args[1], d.args[0])) if d.name == "add" else [d.args]:
            k, n = start(v), L.const_int(defs.get(strip(c)[0].id))
            if k is not None and n is not None:
                n &= L.M
                n = n - (1 << 32) if n >> 31 else n
                return k, (n if d.name == "add" else -n)
        return None

    exec_ops = [k for k, op in enumerate(ops) if op.name == "exec"]

    def whole(w) -> bool:  # a write every lane that goes on takes: an SGPR's, a VGPR's under EXEC
        m = defs.get(w.args[1].id) if w.name == "vset" else None
        return w.name == "sset" or (m is not None and m.name == "exec")

    def written(key):
        """The value register ``key`` holds at the block's end in every lane that goes on (its
        last write), through copies of registers written before in the block; None where that
        is not known."""
        ks = writes.get(key)
        if not ks or not whole(ops[ks[-1]]):
            return None
        x = ops[ks[-1]].args[0]
        for _ in range(8):
            x, d = strip(x)
            if d is None or d.name not in ("sget", "vget"):
                return x
            ks = [k for k in writes.get((d.name[0], d.attrs["reg"]), []) if k < at[id(d)]]
            if not ks:
                return x  # (a register's start value)
            if not whole(ops[ks[-1]]):
                return None
            x = ops[ks[-1]].args[0]
        return None

    cond, again = t[1], t[2] == b.index
    c = defs.get(cond.id)
    while c is not None and c.name == "not" and c.type == "b1":  # (s_cbranch_scc0: the negation)
        c, again = defs.get(c.args[0].id), not again
    tests: list = []  # (compare, whether it holds) in every round (every lane) that goes on
    exec_w = [k for k, op in enumerate(ops) if op.name == "sset" and op.attrs["reg"] in L.EXEC_REGS]
    if c is None or c.name != "cmp":
        return None
    if c.type in ("u32", "i32") and cond.uniform and not exec_w:
        tests.append((c, again))  # (uniform: the induction register must be an SGPR, below)
    elif c.attrs["cond"] in ("eq", "ne") and wave_size == 32 and len(exec_w) == 1:
        # a lane loop: goes on while its one EXEC write, after every use of the block's EXEC,
        # leaves a lane
        x, z = c.args
        exits = lane_loop_exits(b)
        if (
            (c.attrs["cond"] == "ne") == again
            and L.const_int(defs.get(z.id)) == 0
            and exits is not None
            and exits[0] is ops[exec_w[0]]
            and exits[0].args[0].id == x.id
            and all(k < exec_w[0] for k in exec_ops)
        ):
            tests += [(cb, False) for cb in exits[1]]
    best: int | None = None
    for cmp_, holds in tests:
        cnd = cmp_.attrs["cond"] if holds else _NEGATE.get(cmp_.attrs["cond"])
        if cnd not in ("lt", "le", "gt", "ge", "ne") or cmp_.type not in ("u32", "i32"):
            continue
        for j in (0, 1):  # (the induction register on either side)
            x, bound = cmp_.args[j], cmp_.args[1 - j]
            key, new = start(x), False
            if key is not None:  # the start value compared; its step is the last write's
                w = written(key)
                s_ = step(w) if w is not None else None
            else:  # the start value plus d compared, and written
                s_, new = step(x), True
                w = written(s_[0]) if s_ is not None else None
                if w is None or step(w) != s_:
                    continue
            if s_ is None or (key is not None and s_[0] != key) or (not exec_w and s_[0][0] != "s"):
                continue  # (a uniform loop's induction register is an SGPR)
            key, d = s_
            bd = defs.get(bound.id)
            if cnd == "ne":  # (met only by a bound the same in every round)
                sd = strip(bound)[1]
                fixed = sd is not None and (
                    sd.name == "const"
                    or (sd.name in ("sget", "vget") and not writes.get((sd.name[0], sd.attrs["reg"])))
                )
                if not fixed:
                    continue
            got = []
            for values, exits in facts:
                bv = (
                    L.value_of(bd, {}) if bd is not None and bd.name == "const" else values.get(bound.id, TOP)
                )
                sv = None
                for p in entries:
                    regs, act = exits.get(p.index, ({}, {}))
                    v = act.get(key, regs.get(key, TOP))
                    sv = v if sv is None else L.join(sv, v)
                n = _rounds(d, cnd if j == 0 else _SWAP.get(cnd, cnd), new, cmp_.type == "i32", bv, sv)
                if n is None:
                    break
                got.append(n)
            else:
                if got:
                    best = max(got) if best is None else min(best, max(got))
    return best


def _rounds(d: int, cond: str, new: bool, signed: bool, bound, start) -> int | None:
    """loop_trips' count of one group case: an induction value stepping by d from ``start``
    (V) goes on only while ``value cond bound`` (``new``: the value after the step is compared);
    None where the bound is not known or a value that goes on could pass an end of the order."""
    if not isinstance(bound, V) or (bound.lo, bound.hi) == (0, L.M) or d == 0:
        return None  # (a bound the analysis knows nothing of)
    if cond == "ne" and d in (1, -1):
        # going on until the value meets the bound: a step of one meets it before it wraps
        # where every start lies on the step's side of every bound (the compare's bits: u32)
        (blo, bhi), (slo, shi) = _dom(bound, False), _dom(start, False)
        if d < 0:
            return shi - blo + (0 if new else 1) if slo - (1 if new else 0) >= bhi else None
        return bhi - slo + (0 if new else 1) if shi + (1 if new else 0) <= blo else None
    lo_end, hi_end = (-(1 << 31), (1 << 31) - 1) if signed else (0, L.M)
    blo, bhi = _dom(bound, signed)
    slo, shi = _dom(start, signed)
    if d > 0 and cond in ("lt", "le"):
        u = bhi - 1 if cond == "lt" else bhi  # (the largest value compared that goes on)
        if (max(shi, u) if new else u) + d > hi_end:
            return None
        u -= d if new else 0
        return 1 if slo > u else 2 + (u - slo) // d
    if d < 0 and cond in ("gt", "ge"):
        lb = blo + 1 if cond == "gt" else blo
        if (min(slo, lb) if new else lb) + d < lo_end:
            return None
        lb -= d if new else 0
        return 1 if shi < lb else 2 + (shi - lb) // -d
    return None


def unrefusable(
    program,
    config,
    windows,
    found=None,
    budget: int | None = None,
    longest: list | None = None,
    windows_out: list | None = None,
) -> str | None:
    """Whether a dispatch of ``config`` over the WindowSet ``windows`` is proved unrefusable on
    the CUDA backend (decision 0049, step 3; its amendment h124): None where it is, else the
    first reason (REASONS) it is not.  ``program``: the IR the kernel lowers (codegen.lowered);
    ``found``: preload.find of it (else found here); ``budget``: the wave's instruction budget
    (None: the dispatch's default, execute.default_budget), against the longest path (a loop
    proved bounded counted its bound times: loop_trips, amendment h126); ``longest`` (if given)
    gets that path's count where the path row is passed; ``windows_out`` (if given) the proved window
    of each global access (global_accesses' order) where it is proved.

    Proved means: no wave can raise a flag the kernel reports (runtime._raise_flags: budget, bad
    jump, bad address, rounding MODE, refuse_if) nor record an escape (a global access outside
    every window, a scratch access outside the lane's scratch), and no store can hit a byte the
    kernel read from a copy made before it ran (a preloaded word, a mirrored window: the host
    reruns the dispatch then).  Pure host code: nothing runs it in the launch path yet (step 4:
    in place)."""
    from . import codegen as G
    from . import preload as P_

    if config.wave_size == 64 and -(-(config.block[0] * config.block[1] * config.block[2]) // 64) > 15:
        return "wave64_waves"
    from ...run.execute import default_budget  # (lazily: the run path imports the backends)

    loads, plan = P_.find(program) if found is None else found
    fixed = set(config.system_sgprs.values())
    made: list = []  # the analysis's results, made once: (proof, words, ranges, facts)

    def proved() -> tuple:
        if not made:
            words, ranges = P_.evaluate(
                loads, plan, program, config.wave_size, config.user_sgprs, fixed, windows
            )
            facts: list = []
            made.append((prove_dispatch(program, config, windows, loads, words, facts), words, ranges, facts))
        return made[0]

    def trips(b, body, entries):  # (one-block loops only)
        return loop_trips(b, config.wave_size, entries, proved()[3]) if len(body) == 1 else None

    why, most, reach = _paths(program, trips)
    if why is not None:
        return why
    if longest is not None:
        longest.append(most)
    if most > (default_budget(program, config) if budget is None else budget):
        return "budget"
    ops = [op for b in reach for op in b.ops]
    if any(op.name == "refuse_if" for op in ops):
        return "refuse_if"
    mem = [op for op in ops if op.name in ("load", "store", "atomic")]
    if any(op.attrs.get("space") not in ("global", "lds") for op in mem):
        return "scratch"  # (the IR's third space; image accesses are global loads and stores)
    if any(b.uses_float for b in reach):
        writes = any(
            b.term[0] == "mode" or any(op.name == "sset" and op.attrs["reg"] == G.MODE_REG for op in b.ops)
            for b in reach
        )
        if writes or int(config.float_mode) & 15:
            return "rounding"
    acc = global_accesses(program)
    proof, _, ranges, _ = proved()
    if any(k is None for k in proof):
        return "global_access"
    # the windows holding the preloaded words (``ranges``: their arena ranges, each inside one
    # window) and those of the uniform whole-word loads a mirror may copy (codegen's mirrorable
    # slots; step 4 launches with these proved windows as their guesses)
    wins = [(int(o), int(o) + int(e) - int(s)) for s, e, o in zip(windows.starts, windows.ends, windows.offs)]
    pre = {k for o, n in ranges for k, (a, b) in enumerate(wins) if a <= o and o + n <= b}
    mirrored = {
        k
        for op, k in zip(acc, proof)
        if op.name == "load" and op.out is not None and op.out.uniform and access_bytes(op) % 4 == 0
    }
    stored = {k for op, k in zip(acc, proof) if op.name != "load"}
    if stored & pre:
        return "store_preloaded"
    if stored & mirrored:
        return "store_mirrored"
    if windows_out is not None:
        windows_out.extend(proof)
    return None
