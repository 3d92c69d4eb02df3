"""What the CUDA kernel may know of an LDS access's address before it runs (decision 0047,
amendment "LDS accesses in their direct form"): a forward analysis of the program's u32 values
over its blocks and registers, each value an interval [lo, hi] of its bits as an unsigned
number and a congruence (its low ``k`` bits are ``r``).  An access whose address is always
inside the LDS (hi + nbytes <= lds_bytes) needs no bounds test, one whose address is aligned
to its size is read or written as whole words instead of the shifted two-word form -- the
same bytes either way.  Anything the analysis does not follow is "any value", so a form is
only ever chosen where it is proved.

What the values cover: every lane, active or not (a VGPR write joins the old value with the
new one; readlane, shuffle and permute read other lanes and are "any value"), every path (a
block's entry joins its predecessors' exits: gotos, branches, s_barrier's continuation;
s_setpc's targets and blocks no goto reaches start from "any value" in every register), and
every value the generated C holds for an IR value (a deferred EXEC blend's raw value is the
register's new value, covered by the join; a skipped sset leaves the old value, also covered).
The kernel's start: v0..v2 hold the local ids, bounded by the baked block shape when no group
is partial (a lane past the group's threads has its z id past the last) or 0 where TIDIG_COMP_CNT leaves them
unset, every other VGPR 0 (the kernel declares them so); SGPRs are any value.
Intervals that keep growing around a loop are widened to any value after a few rounds, so the
analysis ends."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

M = 0xFFFFFFFF
TOP_K = 0  # no low bits known
WIDEN_AFTER = 8  # updates of a block's entry before a still-changing interval becomes any value


class V(tuple):
    """(lo, hi, k, r): a u32 whose value lies in [lo, hi] and whose low k bits are r."""

    __slots__ = ()

    def __new__(cls, lo: int, hi: int, k: int = 0, r: int = 0):
        k = max(0, min(int(k), 32))
        r = int(r) & ((1 << k) - 1)
        lo, hi = max(int(lo), 0), min(int(hi), M)
        if lo > hi:
            lo, hi = 0, M
        return tuple.__new__(cls, (lo, hi, k, r))

    lo = property(lambda s: s[0])
    hi = property(lambda s: s[1])
    k = property(lambda s: s[2])
    r = property(lambda s: s[3])


TOP = V(0, M)


def const(c: int) -> V:
    c &= M
    return V(c, c, 32, c)


def join(a: V | None, b: V | None) -> V:
    if a is None:
        return b if b is not None else TOP
    if b is None:
        return a
    k = min(a.k, b.k)
    d = (a.r ^ b.r) & ((1 << k) - 1)
    if d:
        k = (d & -d).bit_length() - 1  # the lowest differing bit
    return V(min(a.lo, b.lo), max(a.hi, b.hi), k, a.r)


def _tz(a: V) -> int:
    """Low bits known zero."""
    if a.k == 0:
        return 0
    return a.k if a.r == 0 else (a.r & -a.r).bit_length() - 1


def _bits(hi: int) -> int:
    """Every value of at most hi has its bits in this mask."""
    return (1 << hi.bit_length()) - 1


def add(a: V, b: V) -> V:
    k = min(a.k, b.k)
    r = a.r + b.r
    if a.lo + b.lo > M:  # every sum passes 2^32 once (x + a negative constant): less 2^32
        return V(a.lo + b.lo - (1 << 32), a.hi + b.hi - (1 << 32), k, r)
    if a.hi + b.hi > M:
        return V(0, M, k, r)
    return V(a.lo + b.lo, a.hi + b.hi, k, r)


def sub(a: V, b: V) -> V:
    k = min(a.k, b.k)
    r = a.r - b.r
    if a.lo < b.hi:
        return V(0, M, k, r)
    return V(a.lo - b.hi, a.hi - b.lo, k, r)


def mul(a: V, b: V) -> V:
    tz = min(_tz(a) + _tz(b), 32)
    if a.hi * b.hi > M:
        return V(0, M, tz, 0)
    return V(a.lo * b.lo, a.hi * b.hi, tz, 0)


def shl(a: V, s: V) -> V:
    if s.hi > 31:
        return TOP
    if s.lo != s.hi:  # an amount in [s.lo, s.hi]: at least s.lo more low zero bits
        tz = min(_tz(a) + s.lo, 32)
        if a.hi << s.hi > M:
            return V(0, M, tz, 0)
        return V(a.lo << s.lo, a.hi << s.hi, tz, 0)
    c = s.lo
    if a.hi << c > M:
        return V(0, M, a.k + c, a.r << c)
    return V(a.lo << c, a.hi << c, a.k + c, a.r << c)


def shr(a: V, s: V) -> V:
    if s.lo != s.hi or s.lo > 31:
        return V(0, a.hi)  # a logical shift right never grows the value
    c = s.lo
    return V(a.lo >> c, a.hi >> c, max(a.k - c, 0), a.r >> c)


def and_(a: V, b: V) -> V:
    hi = min(a.hi, b.hi)
    k, r = _and_low(a, b)
    return V(0, hi, k, r)


def _and_low(a: V, b: V) -> tuple[int, int]:
    """Low bits of a & b known: a bit is known where both are known or either is known 0."""
    k = 0
    r = 0
    while k < 32:
        ka, kb = k < a.k, k < b.k
        ba, bb = (a.r >> k) & 1 if ka else None, (b.r >> k) & 1 if kb else None
        if ba == 0 or bb == 0:
            pass
        elif ka and kb:
            r |= 1 << k
        else:
            break
        k += 1
    return k, r


def or_(a: V, b: V) -> V:
    k = min(a.k, b.k)
    hi = min(_bits(max(a.hi, b.hi)), a.hi + b.hi)  # a | b <= a + b
    return V(max(a.lo, b.lo), hi, k, a.r | b.r)


def xor(a: V, b: V) -> V:
    k = min(a.k, b.k)
    return V(0, _bits(max(a.hi, b.hi)), k, a.r ^ b.r)


_BIN = {"add": add, "sub": sub, "mul": mul, "shl": shl, "shr": shr, "and": and_, "or": or_, "xor": xor}
_INT32 = ("u32", "i32")


def const_int(op) -> int | None:
    """The integer a const op holds (None: ``op`` is not one, or holds no integer)."""
    if op is None or op.name != "const":
        return None
    v = op.attrs["value_np"] if "value_np" in op.attrs else op.attrs.get("value")
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def value_of(op, val) -> V:
    """The abstract value of op's result (a u32/i32 op), from its arguments' (``val``: id ->
    V); any value for everything else."""
    n, t = op.name, op.type
    if n == "const":
        c = const_int(op) if t in _INT32 else None
        return TOP if c is None else const(c)
    args = [val.get(x.id, TOP) for x in op.args]
    if n in _BIN and t in _INT32:
        return _BIN[n](args[0], args[1])
    if n == "sar" and t in _INT32 and args[0].hi <= 0x7FFFFFFF:
        return shr(args[0], args[1])  # a non-negative value: as a logical shift
    if n in ("min", "max") and (
        t == "u32"
        # (i32: one sign on both sides, where the signed order is the unsigned one)
        or (t == "i32" and (all(x.hi <= 0x7FFFFFFF for x in args) or all(x.lo > 0x7FFFFFFF for x in args)))
    ):
        a, b = args
        j = join(a, b)
        if n == "min":
            return V(min(a.lo, b.lo), min(a.hi, b.hi), j.k, j.r)
        return V(max(a.lo, b.lo), max(a.hi, b.hi), j.k, j.r)
    if n == "select" and t in _INT32:
        return join(args[1], args[2])
    if n == "lanes" and t in _INT32:
        return args[0]
    if n == "bitcast" and op.attrs["to"] in _INT32 and op.args[0].type in _INT32:
        return args[0]
    if n == "cvt" and op.attrs["to"] in ("u32", "i32") and op.args[0].type in ("u8", "u16"):
        return V(0, (1 << (8 if op.args[0].type == "u8" else 16)) - 1)
    return TOP


class Lanes(dict):
    """The values of an op's arguments in the lanes EXEC leaves active: what analyse hands its
    ``value`` in place of the table of every lane's values; ``look(x)`` gives any other value's
    there (for an evaluator that looks past the arguments); ``within(token)``: whether a copy
    (Spec.copies' entry) holds in these lanes (None: none does)."""

    def __init__(self, values: dict, look, within=None):
        super().__init__(values)
        self.look = look
        self.within = within


def entry_registers(wave_size: int, shape: dict | None) -> dict:
    """The registers' values at the kernel's start: v0..v2, the local ids, when ``shape`` (the
    baked block x, y, z, TIDIG_COMP_CNT, packed GFX11 ids) is known; any value elsewhere."""
    if not shape:
        return {}
    bx, by, bz = shape["block"]
    if min(bx, by, bz) < 1:
        return {}
    # (no partial groups: codegen.generate) lx = t % bx, ly = (t / bx) % by, lz = t / (bx*by)
    # for every thread t of the group's waves, t < wpg * WV: a lane past the group's threads
    # has its z id past the last
    wpg = -(-(bx * by * bz) // wave_size)
    lx, ly, lz = V(0, bx - 1), V(0, by - 1), V(0, (wpg * wave_size - 1) // (bx * by))
    if shape["packed"]:
        return {
            ("v", 0): or_(or_(lx, shl(ly, const(10))), shl(lz, const(20))),
            ("v", 1): const(0),
            ("v", 2): const(0),
        }
    t = shape["tidig"]
    return {("v", 0): lx, ("v", 1): ly if t >= 1 else const(0), ("v", 2): lz if t >= 2 else const(0)}


def tighten(v: V) -> V:
    """v's interval narrowed to its ends that have its low bits (an and with a constant knows
    every bit of a small value but not its interval: (x & 31) with x = 2 is [0, 2], bits 2)."""
    if not isinstance(v, V):  # (another analysis's value: globalrange's 64-bit ones)
        return v
    step = 1 << v.k
    lo = v.lo + ((v.r - v.lo) % step)
    hi = v.hi - ((v.hi - v.r) % step)
    return v if lo > hi else V(lo, hi, v.k, v.r)


def meet_bounds(a: V, lo: int, hi: int) -> V:
    """a narrowed to [lo, hi] (a itself where nothing is left: no lane holds such a value)."""
    lo, hi = max(a.lo, lo), min(a.hi, hi)
    return a if lo > hi else V(lo, hi, a.k, a.r)


def refine(cond: str, a: V, b: V) -> tuple[int, int]:
    """Bounds of a (u32) in the lanes where ``a cond b`` holds (b in its interval)."""
    if cond == "lt":
        return (0, b.hi - 1)
    if cond == "le":
        return (0, b.hi)
    if cond == "gt":
        return (b.lo + 1, M)
    if cond == "ge":
        return (b.lo, M)
    if cond == "eq":
        return (b.lo, b.hi)
    return (0, M)


_SWAP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq"}
EXEC_REGS = (126, 127)  # EXEC_LO, EXEC_HI (frontend.common)


def exec_at_start(wave_size: int, shape: dict | None) -> dict:
    """EXEC at the kernel's start, when known: the wave's lanes inside its group -- all of
    them when the group fills its waves (codegen.kernel_source sets s126 / s127 from the lanes
    below the group's threads; ``shape`` is given only where no group is partial)."""
    if not shape or min(shape["block"]) < 1:
        return {}
    bx, by, bz = shape["block"]
    if (bx * by * bz) % wave_size:
        return {}
    return {("s", 126 + h): const(M) for h in range(wave_size // 32)}


@dataclass(frozen=True)
class Spec:
    """What an analysis is seeded with and follows (analyse's ``spec``: the one place that says
    it; LDS is the LDS forms', globalrange.prove builds the global accesses' one).

    ``value`` evaluates an op from its arguments' values (value_of's signature); ``types``: the
    value types it gives values of (their values are read wherever an op's argument is one);
    ``sregs``: SGPR values at the kernel's start ({register: V}); ``spaces``: the memories whose
    accesses are recorded; ``active`` (with ``lanes``): {("v", r): V} of VGPRs in the lanes EXEC
    holds at the start; ``ballots64`` (with ``lanes``): an EXEC written as a ballot's word and-ed
    with other bits (s_and_saveexec) narrows as the ballot's word alone does (the lanes are a
    subset of the ballot's), and a wave64 EXEC written as both halves of one ballot, one write
    after the other, as wave32's one write does; ``address`` (with ``lanes``): an access's
    address value from the op and ``look`` (a value in the lanes of the access's mask), None:
    ``look`` of its address operand; ``copies`` (with ``lanes``, if given) gets {value id of a
    vget: (the value the block wrote to that VGPR last, under an EXEC holding every lane the
    vget's EXEC holds, a token)}: the vget is that value in the lanes of a Lanes whose
    ``within(token)`` holds (globalrange's selects follow it)."""

    value: Callable = value_of
    types: tuple = _INT32
    sregs: Mapping | None = None
    spaces: tuple = ("lds",)
    active: Mapping | None = None
    ballots64: bool = False
    address: Callable | None = None
    copies: dict | None = None


LDS = Spec()


def analyse(
    program,
    wave_size: int,
    shape: dict | None,
    skip=frozenset(),
    lanes: bool = False,
    data: dict | None = None,
    every: dict | None = None,
    whole: set | None = None,
    exec_whole: set | None = None,
    spec: Spec = LDS,
    facts: tuple | None = None,
) -> dict:
    """-> {id(op): V of its address} for every LDS load, store and atomic of ``program``; with
    ``lanes``, ``data`` (if given) gets {id(op): V of its data operand in its lanes} for every
    LDS atomic, ``every`` (if given) {id(op): V of its address in every lane, active or
    not} for every LDS access and ``whole`` (if given) the id(op) of each LDS access whose
    mask is an EXEC that holds every lane of the wave; with ``lanes``, ``exec_whole`` (if given)
    gets (block index, op position) of each place where EXEC holds every lane of the wave before
    that op (position len(ops): the block's end) -- EXEC's registers all ones in every path.

    The same analysis serves other addresses (globalrange.py): ``spec`` (Spec) says what it is
    seeded with, how it evaluates and which accesses it records; with ``lanes``, ``facts`` (if
    given: two dicts) gets {value id: its value in every lane} and {block index: (registers in
    every lane, in the active lanes) at its end}, each block run from its final entry (what
    globalrange's loop bounds read).

    ``lanes`` (WAVELIFT_CUDA_LDS=lanes; decision 0047, amendment "values in the active lanes"):
    also follow, across blocks, each VGPR's value in the lanes EXEC leaves active -- a write
    under the whole EXEC sets it there, EXEC made a subset of itself (a ballot of a condition
    and EXEC, EXEC and a mask) keeps it and the condition's compares narrow it, any other EXEC
    write forgets it -- and read an access's address there."""
    value, types, spaces, ballots64 = spec.value, spec.types, spec.spaces, spec.ballots64
    blocks = program.blocks
    pos = {b.index: i for i, b in enumerate(blocks)}
    setpc = any(b.term[0] == "setpc" for b in blocks)
    targets = {pos[bi] for bi in program.block_at.values() if bi in pos} if setpc else set()
    entry: list = [None] * len(blocks)
    updates = [0] * len(blocks)
    if blocks and 0 not in targets:
        # the kernel declares every VGPR the program names as 0 (codegen.kernel_source), then
        # sets v0..v2 to the local ids
        vregs = {op.attrs["reg"] for b in blocks for op in b.ops if op.name in ("vget", "vset")}
        regs0 = {("v", r): const(0) for r in vregs if r > 2}
        regs0.update(entry_registers(wave_size, shape))
        regs0.update({("s", r): v for r, v in (spec.sregs or {}).items()})
        if lanes:
            regs0.update(exec_at_start(wave_size, shape))
        act0 = {k: v for k, v in (spec.active or {}).items() if lanes and v != regs0.get(k, TOP)}
        entry[0] = (regs0, act0)
    for i in targets:
        entry[i] = ({}, {})  # any value in every register

    def succ(b):  # (s_setpc's targets start from any value: ``targets``)
        return [pos[x] for x in b.successors() or () if x in pos and pos[x] not in targets]

    out: dict = {}
    exec_halves = EXEC_REGS if wave_size == 64 else EXEC_REGS[:1]

    def run(i, state, mask=None, record=False):
        """-> the registers after block i from ``state`` (every lane, the active lanes); with
        ``mask`` (a b1 value id; not ``lanes``), the values in the lanes where that mask holds: a
        VGPR written under it holds the new value there (an access under the same mask reads
        only those lanes), and the addresses of the block's LDS accesses under that mask go to
        ``out``; with ``record`` (``lanes``), every LDS access's address goes to ``out``."""
        regs = dict(state[0])
        act = dict(state[1])  # VGPR -> its value in the lanes the current EXEC holds
        val: dict = {}
        # VGPR -> (its value before a run of writes under one mask, that mask): the lanes the
        # mask leaves out hold the value before the run, the others the run's last value
        run_of: dict = {}
        # the active lanes' side (lanes): EXEC's writes in this block number its epochs; reset[e]
        # is the first epoch of e's chain (EXEC only became a subset of itself from there to e),
        # half[e] the EXEC register whose write began e
        cur, reset, half = 0, [0], [None]
        wrote: list = [None]  # the value each epoch's EXEC write wrote
        # full[e]: EXEC at epoch e holds every lane of the wave (its registers all ones)
        full = [all(regs.get(("s", h)) == const(M) for h in exec_halves)]
        aval: dict = {}  # value id -> its value in the lanes EXEC held when it was made (ep)
        ep: dict = {}
        exec_ep: dict = {}  # b1 value id -> the epoch whose EXEC bit it is
        sub_ep: dict = {}  # b1 value id -> an epoch whose EXEC holds every lane where it holds
        defs: dict = {}  # value id -> its op
        src: dict = {}  # value id of a vget -> (register, its version then)
        last: dict = {}  # VGPR -> (the value its last write took in every lane of EXEC then, epoch)
        ver: dict = {}
        looks: tuple = (None,)  # (epoch, at() there, Lanes.within there) of the last evaluated op

        def chain(e1, e2):  # EXEC at e2 is a subset of EXEC at e1
            return e1 <= e2 and reset[e2] <= e1

        def unchanged(h, e):  # EXEC register h not written since epoch e
            return all(half[x] != h for x in range(e + 1, cur + 1))

        def at(x, e):  # value x in the lanes of EXEC at epoch e (-1: in every lane)
            if e >= 0 and x.id in aval and chain(ep[x.id], e):
                return aval[x.id]
            return val.get(x.id, TOP) if x.type in types else TOP

        def eff(key):
            return act.get(key, regs.get(key, TOP))

        def subset(x, h) -> bool:
            """Every set bit of u32 x is set in EXEC register h now."""
            d = defs.get(x.id)
            if d is None:
                return False
            if d.name == "sget":
                return d.attrs["reg"] == h and unchanged(h, ep[x.id])
            if d.name == "and":
                return subset(d.args[0], h) or subset(d.args[1], h)
            if d.name in ("lo32", "hi32") and (d.name == "lo32") == (h == EXEC_REGS[0]):
                b = defs.get(d.args[0].id)
                if b is not None and b.name == "ballot":
                    e = sub_ep.get(b.args[0].id)
                    return e is not None and unchanged(h, e)
            return False

        def conjuncts(b):
            d = defs.get(b.id)
            if d is not None and d.name == "and" and d.type == "b1":
                return conjuncts(d.args[0]) + conjuncts(d.args[1])
            return [d]

        def ballot_of(x, word):
            """The ballot whose ``word`` (lo32 / hi32) u32 x is, alone or and-ed with other
            bits (ballots64), else None."""
            d = defs.get(x.id)
            if d is None:
                return None
            if d.name == word:
                b = defs.get(d.args[0].id)
                return b if b is not None and b.name == "ballot" else None
            if d.name == "and" and d.type in _INT32:
                return ballot_of(d.args[0], word) or ballot_of(d.args[1], word)
            return None

        def ballots_of(x):
            """Every ballot whose low word u32 x and-s with other bits."""
            d = defs.get(x.id)
            if d is not None and d.name == "lo32":
                b = defs.get(d.args[0].id)
                return [b] if b is not None and b.name == "ballot" else []
            if d is not None and d.name == "and" and d.type in _INT32:
                return ballots_of(d.args[0]) + ballots_of(d.args[1])
            return []

        def exec_write(h, x):
            nonlocal cur, act
            shrink = subset(x, h)
            cur += 1
            reset.append(reset[cur - 1] if shrink else cur)
            half.append(h)
            wrote.append(x)
            full.append(all(regs.get(("s", r)) == const(M) for r in exec_halves))
            if not shrink:
                act = {}
            # wave32: the new EXEC is the lanes where the ballot's condition held -- every
            # compare of it holds there; narrow a VGPR read by it and not written since
            d = defs.get(x.id)
            if not ballots64:
                b = defs.get(d.args[0].id) if wave_size == 32 and d is not None and d.name == "lo32" else None
            elif wave_size == 32:
                b = ballot_of(x, "lo32")
            else:
                # the other half of the same ballot written just before: the whole EXEC is now
                # (a subset of) that ballot's lanes
                w = "lo32" if h == EXEC_REGS[0] else "hi32"
                b = ballot_of(x, w)
                p = wrote[cur - 1]
                if p is None or half[cur - 1] in (None, h):
                    b = None
                elif b is not ballot_of(p, "hi32" if w == "lo32" else "lo32"):
                    b = None
            if b is None or b.name != "ballot":
                return
            # (wave32: every ballot the written word and-s together holds the lanes)
            bs = ballots_of(x) if ballots64 and wave_size == 32 else [b]
            for c in (c for b in bs for c in conjuncts(b.args[0])):
                if c is None or c.name != "cmp" or c.type not in _INT32 or c.attrs.get("cond") not in _SWAP:
                    continue
                for j in (0, 1):
                    a, o = c.args[j], c.args[1 - j]
                    d = defs.get(a.id)
                    if ballots64 and d is not None and d.name == "bitcast" and d.args[0].type in _INT32:
                        a = d.args[0]  # (an i32 compare of a register: its bits; globalrange's only)
                    s = src.get(a.id)
                    if s is None or ver.get(s[0], 0) != s[1]:
                        continue
                    av, ov = eff(s[0]), at(o, cur)
                    if c.type == "i32" and max(av.hi, ov.hi) > 0x7FFFFFFF:
                        continue  # (signed order = unsigned order on non-negative values)
                    cond = c.attrs["cond"] if j == 0 else _SWAP[c.attrs["cond"]]
                    nv = meet_bounds(av, *refine(cond, av, ov))
                    if nv != regs.get(s[0], TOP):
                        act[s[0]] = nv

        for k, op in enumerate(blocks[i].ops):
            if record and exec_whole is not None and all(regs.get(("s", h)) == const(M) for h in exec_halves):
                exec_whole.add((blocks[i].index, k))
            n = op.name
            o = op.out
            if o is not None:
                defs[o.id] = op
                ep[o.id] = cur
            if n == "sget":
                val[o.id] = regs.get(("s", op.attrs["reg"]), TOP)
            elif n == "vget":
                key = ("v", op.attrs["reg"])
                val[o.id] = regs.get(key, TOP)
                if lanes:
                    src[o.id] = (key, ver.get(key, 0))
                    aval[o.id] = eff(key)
                    if spec.copies is not None and key in last:
                        spec.copies[o.id] = (last[key][0], (i, last[key][1]))
                    elif spec.copies is not None:
                        spec.copies.pop(o.id, None)
            elif n in ("sset", "vset"):
                key = ("s" if n == "sset" else "v", op.attrs["reg"])
                new = val.get(op.args[0].id, TOP) if op.args[0].type in _INT32 else TOP
                old = regs.get(key, TOP)
                if lanes and n == "vset":
                    m = exec_ep.get(op.args[1].id)
                    if id(op) in skip or m is None or not chain(m, cur):
                        act[key] = join(eff(key), new)
                        last.pop(key, None)
                    else:  # every active lane is written
                        act[key] = at(op.args[0], cur) if op.args[0].type in _INT32 else TOP
                        last[key] = (op.args[0], m)
                    ver[key] = ver.get(key, 0) + 1
                if id(op) in skip:  # not written by the kernel (a dead register)
                    regs[key] = join(old, new)
                    run_of.pop(key, None)
                elif n == "sset" or (mask is not None and op.args[1].id == mask):
                    regs[key] = new
                    run_of.pop(key, None)
                else:
                    m = op.args[1].id
                    if key not in run_of or run_of[key][1] != m:
                        run_of[key] = (old, m)
                    regs[key] = join(run_of[key][0], new)
                if lanes and n == "sset" and op.attrs["reg"] in exec_halves and id(op) not in skip:
                    exec_write(op.attrs["reg"], op.args[0])
                if lanes and n == "vset":
                    act = {k: v for k, v in act.items() if v != regs.get(k, TOP)}
            else:
                if n in ("load", "store", "atomic") and op.attrs["space"] in spaces:
                    a = op.args[0]
                    if mask is not None and op.args[1].id == mask:
                        out[id(op)] = val.get(a.id, TOP) if a.type in types else TOP
                    elif record:  # read in the lanes of the access's mask
                        e = sub_ep.get(op.args[1].id)
                        lk = functools.partial(at, e=e if e is not None else -1)
                        out[id(op)] = lk(a) if spec.address is None else spec.address(op, lk)
                        if every is not None:  # (under a full EXEC every lane is active)
                            every[id(op)] = at(a, e) if e is not None and full[e] else at(a, -1)
                        w = exec_ep.get(op.args[1].id)
                        if whole is not None and w is not None and full[w]:
                            whole.add(id(op))
                        if n == "atomic" and data is not None:
                            data[id(op)] = at(op.args[2], e) if e is not None else at(op.args[2], -1)
                if o is not None:
                    val[o.id] = value(op, val)
                    if lanes:
                        if n == "exec":
                            exec_ep[o.id] = sub_ep[o.id] = cur
                        elif n == "and" and op.type == "b1":
                            e = [sub_ep[x.id] for x in op.args if x.id in sub_ep]
                            if e:
                                sub_ep[o.id] = max(e)  # (either epoch's EXEC holds its lanes)
                        if n != "exec" and o.type in types and any(x.id in aval for x in op.args):
                            if looks[0] != cur:  # (made once per EXEC epoch, not per op)
                                # (a copy made in block i under the EXEC of epoch e0 holds in
                                # these lanes where this EXEC is a subset of that one)
                                looks = (
                                    cur,
                                    functools.partial(at, e=cur),
                                    functools.partial(_within, i, cur, chain),
                                )
                            lk = looks[1]
                            aval[o.id] = tighten(
                                value(op, Lanes({x.id: lk(x) for x in op.args}, lk, looks[2]))
                            )
        if record and exec_whole is not None and all(regs.get(("s", h)) == const(M) for h in exec_halves):
            exec_whole.add((blocks[i].index, len(blocks[i].ops)))
        # registers at any value are left out (a missing key is any value); active-lane values
        # only where they say more
        regs = {k: v for k, v in regs.items() if v != TOP}
        got = regs, {k: v for k, v in act.items() if v != regs.get(k, TOP)}
        if record and facts is not None:
            facts[0].update(val)
            facts[1][blocks[i].index] = got
        return got

    work = [i for i, e in enumerate(entry) if e is not None]
    while work:
        i = work.pop()
        ex = run(i, entry[i])
        for j in succ(blocks[i]):
            e = entry[j]
            if e is None:
                new = ex
            else:
                r = {k: join(e[0][k], ex[0][k]) for k in e[0].keys() & ex[0].keys()}
                r = {k: v for k, v in r.items() if v != TOP}
                # a lane active at j's start was active at the end of the block it came from
                ea = {k: e[1].get(k, e[0].get(k, TOP)) for k in e[1].keys() | ex[1].keys()}
                xa = {k: ex[1].get(k, ex[0].get(k, TOP)) for k in ea}
                a = {k: join(ea[k], xa[k]) for k in ea}
                new = (r, {k: v for k, v in a.items() if v != r.get(k, TOP)})
            if new != e:
                updates[j] += 1
                if e is not None and updates[j] > WIDEN_AFTER:
                    # widen: an interval still changing becomes any value (its low bits stay)
                    new = (_widen(new[0], e[0], {}), _widen(new[1], e[1], e[0]))
                    new = (new[0], {k: v for k, v in new[1].items() if v != new[0].get(k, TOP)})
                if new != e:
                    entry[j] = new
                    work.append(j)
    if lanes:
        for i, e in enumerate(entry):
            run(i, e if e is not None else ({}, {}), record=True)
        return out
    # each block again from its entry (a block no goto reaches: any value), once per mask its
    # LDS accesses are made under
    for i, e in enumerate(entry):
        masks = {
            op.args[1].id
            for op in blocks[i].ops
            if op.name in ("load", "store", "atomic") and op.attrs["space"] in spaces
        }
        for m in sorted(masks):
            run(i, e if e is not None else ({}, {}), m)
    return out


def _within(i: int, cur: int, chain, token) -> bool:
    """Lanes.within of block i's EXEC at epoch ``cur`` for a copy's (block, epoch) token."""
    return token[0] == i and chain(token[1], cur)


def _widen(new: dict, old: dict, fallback: dict) -> dict:
    """Each value of ``new`` whose interval differs from ``old``'s (``fallback``'s where old
    has none) as any value in its interval's place (its low bits stay)."""
    w = {}
    for k, v in new.items():
        o = old.get(k, fallback.get(k, TOP))
        w[k] = v if (v.lo, v.hi) == (o.lo, o.hi) else V(0, M, v.k, v.r)
    return {k: v for k, v in w.items() if v != TOP}


def align_of(v: V) -> int:
    """The largest power of two (at most 16) the value is known to be a multiple of."""
    return 1 << min(_tz(v), 4)
