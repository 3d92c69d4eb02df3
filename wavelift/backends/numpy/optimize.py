"""The NumPy backend's block optimiser: a block's ops rewritten for one MODE value (``_Opt``) and
the registers live between blocks (``liveness``).  The NumPy blocks (codegen.py) and the native
tier (native.py) both run what it leaves, so the two compute the same optimised IR.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.ops import BITS, INTS, KEEP_OPS, PURE_OPS
from ...ir.program import (
    EXEC_HI,
    EXEC_LO,
    MODE_REG,
    Block,
    Op,
    Program,
    Value,
)
from .expr import IR_TYPE, ExprLowering


class Optimizer(ExprLowering):
    """ExprLowering that also rewrites blocks (its constant folding evaluates their ops)."""

    def optimize(self, blk: Block, mode: int, live_out=None) -> Block:
        return _Opt(self, blk, mode).run(live_out)


# ops without side effects whose value depends only on their operands (folded, CSE'd, dropped):
# the op table's pure ops but const (what folding makes), lane_id and word, left as they are
_PURE = PURE_OPS - {"const", "lane_id", "word"}
_KEEP = KEEP_OPS
_INT = frozenset(INTS)
LOCAL_OPS = {"lanes"}  # ops only _Opt emits (never in the IR the frontends build)


def _flushes(mode: int, t: str, out: bool) -> bool:
    d = (mode >> (4 if t == "f32" else 6)) & 3
    return d in ((0, 1) if out else (0, 2))


class _Opt:
    """Block rewriting for one MODE value (docs/decisions/0006: MODE is a Python int per
    block): MODE reads become constants, fin/fout become identity or a flush, ops over
    constants are folded, b1 and/or/select over constants simplified, integer identities
    (x + 0, x | 0, x & ~0, ...) dropped, 64-bit values whose low or high word is all that is
    used computed in 32 bits, pure ops and repeated register (and EXEC) reads (same register
    version) shared, unused pure ops and overwritten register writes dropped.  The result is an
    op list over the same values that lowers with the same expressions."""

    def __init__(self, low, blk: Block, mode: int):
        self.low, self.blk, self.mode = low, blk, mode

    def forward(self):
        """The rewritten op list (before dead code removal) and terminator."""
        from . import helpers as H

        low, mode = self.low, self.mode
        sub: dict = {}  # value id -> Value it equals
        cval: dict = {}  # value id -> numpy constant
        cse: dict = {}
        version: dict = {}
        ops: list = []
        defop: dict = {}  # value id -> the pure op (kept in ops) that computes it
        mode_written = False
        ns = low.namespace()
        # 64-bit carry chains (v_add_co_u32 / v_add_co_ci_u32 / s_add_u32+s_addc_u32 translate
        # to zero-extend to u64, add, lo32/hi32, hi32 != 0): the sum of at most two u32 terms
        # and one b1 term fits in 33 bits, so lo32 is the wrapping u32 sum and hi32 the carry
        # (some partial sum < its predecessor) -- bit-identical, no 64-bit arrays.
        zext: dict = {}  # u64 value id -> u32/b1 Value it zero-extends
        wide: dict = {}  # u64 value id -> (u32 terms, b1 terms) it sums
        carry_of: dict = {}  # u32 value id (0/1) -> b1 Value it converts
        set_val: dict = {}  # sset reg -> (version, Value written)
        from_set: dict = {}  # sget value id -> Value of the sset it reads back
        ballot_lo: dict = {}  # u32 value id -> b1 arg of the (wave32) ballot it holds
        fresh = [1 << 30]

        def terms_of(x):
            if x.id in zext:
                y = zext[x.id]
                return ([y], []) if y.type == "u32" else ([], [y])
            return wide.get(x.id)

        def partial_sums(terms, instr):
            u, b = terms
            seq = u + b
            p, out = seq[0], []
            for y in seq[1:]:
                q = emit("add", "u32", (p, y), {}, instr)
                out.append((p, q, y))
                p = q
            return p, out

        def const(t, v):
            """The (shared) constant Value of numpy scalar ``v``."""
            v = np.asarray(v)[()]
            ck = ("const", np.asarray(v).dtype.str, np.asarray(v).tobytes())
            if ck in cse:
                return cse[ck]
            fresh[0] += 1
            out = Value(fresh[0], IR_TYPE.get(np.asarray(v).dtype.type, t), True)
            cse[ck] = out
            cval[out.id] = v
            ops.append(Op("const", out.type, (), {"value_np": v}, out, -1))
            return out

        def emit(name, t, a, attrs, instr, out=None):
            key = (name, t, tuple(x.id for x in a), repr(sorted(attrs.items())))
            if key in cse:
                if out is not None:
                    sub[out.id] = cse[key]
                return cse[key]
            if out is None:
                fresh[0] += 1
                out = Value(fresh[0], "b1" if name == "cmp" else t, all(x.uniform for x in a))
            cse[key] = out
            op = Op(name, t, tuple(a), attrs, out, instr)
            ops.append(op)
            defop[out.id] = op
            return out

        def ival(c):
            """The integer value of constant ``c``, else None (not a constant, or a float one:
            an op of an integer type may take one, e.g. isclass, and NaN has no int)."""
            return int(cval[c.id]) if c.id in cval and c.type in _INT else None

        def ident(n, t, args):
            """x op identity -> x (integer types; the other operand of the op's type)."""
            if t not in _INT or len(args) != 2:
                return None
            a, b = args
            for x, c, ok in (
                (a, b, n in ("add", "sub", "or", "xor", "shl", "shr", "sar")),
                (b, a, n in ("add", "or", "xor")),
            ):
                if ok and ival(c) == 0 and x.type == t:
                    return x
            if n not in ("and", "mul"):
                return None
            ones = (1 << BITS[t]) - 1
            for x, c in ((a, b), (b, a)):
                k = ival(c)
                if k is not None and x.type == t and k & ones == (ones if n == "and" else 1):
                    return x
            return None

        def evaluate(op, args):
            """op on args (its own, after substitution) when every one is a constant and it
            evaluates: the 0-d value, else None."""
            if not all(x.id in cval for x in args):
                return None
            return low.evaluate(op, [cval[x.id] for x in args], ns)

        def fold(name, t, a, attrs, instr):
            """A synthesised pure op, folded (constants, identities) or shared."""
            r = evaluate(Op(name, t, a, attrs, None, instr), a)
            if r is not None:
                return const(t, r[()])
            x = ident(name, t, a)
            if x is not None:
                return x
            return emit(name, t, a, attrs, instr)

        def u32c(k):
            return const("u32", np.uint32(k & 0xFFFFFFFF))

        def half(v, hi, instr, depth=0):
            """u32 Value equal to lo32(v) (hi: hi32(v)) of u64 ``v`` computed without 64-bit
            arrays, or None."""
            if ival(v) is not None:
                return u32c(ival(v) >> (32 if hi else 0))
            if v.id in zext:
                y = zext[v.id]
                return u32c(0) if hi else (y if y.type == "u32" else None)
            op = defop.get(v.id)
            if op is None or depth > 8 or op.type != "u64":
                return None
            n, a = op.name, op.args
            d = depth + 1
            if n == "pack64":
                return a[1] if hi else a[0]
            if n in ("shl", "shr") and ival(a[1]) is not None:
                s = ival(a[1])
                if s == 0:
                    return half(a[0], hi, instr, d)
                # the side the bits move to (lo32 of shl / hi32 of shr) and the side they leave
                into = hi if n == "shl" else not hi
                back = "shr" if n == "shl" else "shl"
                if s >= 64:
                    return u32c(0)
                if s >= 32:
                    if not into:
                        return u32c(0)
                    x = half(a[0], n == "shr", instr, d)
                    return None if x is None else fold(n, "u32", (x, u32c(s - 32)), {}, instr)
                x = half(a[0], hi, instr, d)
                if x is None:
                    return None
                x = fold(n, "u32", (x, u32c(s)), {}, instr)
                if not into:
                    return x
                y = half(a[0], not hi, instr, d)
                if y is None:
                    return None
                return fold("or", "u32", (x, fold(back, "u32", (y, u32c(32 - s)), {}, instr)), {}, instr)
            if n in ("and", "or", "xor") or (not hi and n in ("add", "sub", "mul")):
                # bitwise ops work per word; the low word of +, -, * needs only low words
                x = half(a[0], hi, instr, d)
                y = None if x is None else half(a[1], hi, instr, d)
                if y is not None:
                    return fold(n, "u32", (x, y), {}, instr)
            return None

        def lanes(x, out, instr):
            """``x`` as the value of ``out``: broadcast to all lanes if ``out`` is per lane."""
            if x.uniform and not out.uniform:
                fresh[0] += 1
                return emit("lanes", x.type, (x,), {}, instr, Value(fresh[0], x.type, False))
            return x

        for op in self.blk.ops:
            args = tuple(sub.get(x.id, x) for x in op.args)
            n = op.name
            if args != op.args:
                op = Op(n, op.type, args, op.attrs, op.out, op.instr)
            if n == "const":
                v = low.const_value(op.type, op.attrs["value"])
                ck = ("const", np.asarray(v).dtype.str, np.asarray(v).tobytes())
                if ck in cse:
                    sub[op.out.id] = cse[ck]
                    continue
                cse[ck] = op.out
                cval[op.out.id] = v
                ops.append(Op("const", op.type, (), {"value_np": v}, op.out, op.instr))
                continue
            if n in ("sset", "vset"):
                version[(n, op.attrs["reg"])] = version.get((n, op.attrs["reg"]), 0) + 1
                if n == "sset":
                    set_val[op.attrs["reg"]] = (version[(n, op.attrs["reg"])], args[0])
                if n == "sset" and op.attrs["reg"] == MODE_REG:
                    mode_written = True
                ops.append(op)
                continue
            if n == "sget" and op.attrs["reg"] == MODE_REG and not mode_written:
                sub[op.out.id] = const("u32", np.uint32(mode))
                continue
            if n in ("fin", "fout"):
                x = args[0]
                if not _flushes(mode, x.type, n == "fout"):
                    sub[op.out.id] = x
                    continue
                if x.id in cval:
                    with np.errstate(all="ignore"):
                        sub[op.out.id] = const(op.type, np.asarray(H.flush(cval[x.id]))[()])
                    continue
                ops.append(op)
                continue
            if n == "exec":  # one EXEC read per EXEC value (masks compare equal)
                key = ("exec", version.get(("sset", EXEC_LO), 0), version.get(("sset", EXEC_HI), 0))
                if key in cse:
                    sub[op.out.id] = cse[key]
                    continue
                cse[key] = op.out
                ops.append(op)
                continue
            if n in ("sget", "vget"):
                if n == "sget" and op.attrs["reg"] in set_val:
                    ver, val = set_val[op.attrs["reg"]]
                    if ver == version.get(("sset", op.attrs["reg"]), 0):
                        from_set[op.out.id] = val
                        # read back what this block wrote: the written value itself (a
                        # computed u32 [waves, 1] array like the read; constants still read)
                        if (
                            val.type == op.type == "u32"
                            and val.uniform
                            and val.id not in cval
                            and op.attrs["reg"] != MODE_REG
                        ):
                            sub[op.out.id] = val
                            continue
                key = (
                    n,
                    op.attrs["reg"],
                    version.get(("sset" if n == "sget" else "vset", op.attrs["reg"]), 0),
                )
                if key in cse:
                    sub[op.out.id] = cse[key]
                    continue
                cse[key] = op.out
                ops.append(op)
                continue
            if n == "ballot" and low.L == 32:
                ballot_lo[op.out.id] = args[0]
            if n == "maskbit" and low.L == 32 and args[0].id in zext:
                v = zext[args[0].id]
                v = from_set.get(v.id, v)
                if v.id in ballot_lo:  # bit `lane` of the wave32 ballot of b: b itself
                    emit("lanes", "b1", (ballot_lo[v.id],), {}, op.instr, op.out)
                    continue
            if n not in _PURE:
                ops.append(op)
                continue
            if n in ("lo32", "cvt") and op.out.type == "u32" and args[0].id in ballot_lo:
                ballot_lo[op.out.id] = ballot_lo[args[0].id]
            if (
                n == "cvt"
                and op.attrs.get("to") == "u64"
                and op.type in ("u32", "b1")
                and args[0].type == op.type
            ):
                zext[op.out.id] = args[0]
            elif n == "add" and op.type == "u64" and len(args) == 2:
                ta, tb = terms_of(args[0]), terms_of(args[1])
                if ta is not None and tb is not None:
                    u, b = ta[0] + tb[0], ta[1] + tb[1]
                    if u and len(u) <= 2 and len(b) <= 1 and len(u) + len(b) >= 2:
                        wide[op.out.id] = (u, b)
            elif n == "lo32" and args[0].id in wide and args[0].id not in cval:
                p, _ = partial_sums(wide[args[0].id], op.instr)
                sub[op.out.id] = p
                continue
            elif n == "hi32" and args[0].id in wide and args[0].id not in cval:
                _, steps = partial_sums(wide[args[0].id], op.instr)
                c = None
                for p, q, y in steps:
                    # q = p + y wraps iff q < p; for a u32 y also iff q < y: compare with
                    # the per-lane one (a [waves, 1] operand broadcasts slowly)
                    r = y if p.uniform and not y.uniform and y.type == "u32" else p
                    k = emit("cmp", "u32", (q, r), {"cond": "lt"}, op.instr)
                    c = k if c is None else emit("or", "b1", (c, k), {}, op.instr)
                carry_of[op.out.id] = c
                emit("cvt", "b1", (c,), {"to": "u32"}, op.instr, op.out)
                continue
            elif n in ("lo32", "hi32") and args[0].id not in cval:
                r = half(args[0], n == "hi32", op.instr)
                if r is not None:
                    sub[op.out.id] = lanes(r, op.out, op.instr)
                    continue
            elif n == "cmp" and op.attrs.get("cond") in ("ne", "eq") and op.type in _INT:
                for x, y in ((args[0], args[1]), (args[1], args[0])):
                    if ival(y) != 0:
                        continue
                    d = defop.get(x.id)  # an integer 0/1 made from a b1: the b1 itself
                    b = carry_of.get(x.id) or (
                        d.args[0] if d is not None and d.name == "cvt" and d.type == "b1" else None
                    )
                    if b is not None:
                        sub[op.out.id] = (
                            b if op.attrs["cond"] == "ne" else fold("not", "b1", (b,), {}, op.instr)
                        )
                        break
                if op.out.id in sub:
                    continue
            elif n == "bitcast" and args[0].id in defop:
                d = defop[args[0].id]  # a bitcast back to the original type: the original
                if d.name == "bitcast" and d.args[0].type == op.attrs["to"]:
                    sub[op.out.id] = d.args[0]
                    continue
            r = evaluate(op, args)
            if r is not None:
                sub[op.out.id] = const(op.type, r[()])
                continue
            if op.type == "b1" and n in ("and", "or") and len(args) == 2:
                done = False
                for x, y in ((args[0], args[1]), (args[1], args[0])):
                    if x.id in cval and y.type == "b1":
                        c = bool(cval[x.id])
                        if (n == "and") != c:  # and False / or True: constant
                            sub[op.out.id] = const("b1", np.bool_(c))
                        else:  # and True / or False: the other
                            sub[op.out.id] = y
                        done = True
                        break
                if done:
                    continue
            if n == "select" and args[1].type == args[2].type == op.type:
                if args[0].id in cval:
                    sub[op.out.id] = args[1] if bool(cval[args[0].id]) else args[2]
                    continue
                if args[1].id == args[2].id:
                    sub[op.out.id] = args[1]
                    continue
            x = ident(n, op.type, args)
            if x is not None:
                sub[op.out.id] = x
                continue
            key = (n, op.type, tuple(x.id for x in args), repr(sorted(op.attrs.items())))
            if key in cse:
                sub[op.out.id] = cse[key]
                continue
            cse[key] = op.out
            ops.append(op)
            defop[op.out.id] = op
        # terminator with substitutions
        term = tuple(sub.get(x.id, x) if isinstance(x, Value) else x for x in self.blk.term)
        return ops, term

    def run(self, live_out=None):
        ops, term = self.forward()
        return dataclasses.replace(self.blk, ops=self.dce(ops, term, live_out), term=term)

    @staticmethod
    def dce(ops, term, live_out):
        """Dead code: keep effects and whatever they (and the terminator) use; drop register
        writes that a later write covers with no read between (a VGPR write is covered by one
        under the same mask value) and writes of registers not in ``live_out`` ((SGPRs, VGPRs)
        that later blocks may read; None: all) that nothing after them in the block reads."""
        live = {x.id for x in term if isinstance(x, Value)}
        keep = []
        later: dict = {}  # (file, reg) -> the next write's mask id ("all" for an
        # SGPR), "dead" (unread after the block) or "read"

        def after(f, r):  # what follows the block
            if live_out is None or r in live_out[f == "vset"]:
                return "read"
            return "dead"

        for op in reversed(ops):
            if op.name in ("sset", "vset"):
                r = (op.name, op.attrs["reg"])
                nxt = later.get(r) or after(*r)
                if op.name == "sset" and op.attrs["reg"] in (EXEC_LO, EXEC_HI, MODE_REG):
                    nxt = "read"  # EXEC/MODE are read outside the IR (lane counts, regroup)
                mask = op.args[1].id if op.name == "vset" else "all"
                if nxt == "dead" or nxt == mask:
                    continue
                later[r] = mask
            if op.name in _KEEP or (op.out is not None and op.out.id in live):
                keep.append(op)
                live.update(x.id for x in op.args)
                if op.name in ("sget", "vget"):
                    later[("sset" if op.name == "sget" else "vset", op.attrs["reg"])] = "read"
        keep.reverse()
        return keep

    @staticmethod
    def live_in(keep, live_out):
        """(SGPRs, VGPRs) whose values at block entry ``keep`` (a dce result) may read, itself or
        through the blocks after it.  An SGPR write is whole; a VGPR write is per lane, so a VGPR
        live after the block is live before it."""
        if live_out is None:
            return None
        written, sin, vin = set(), set(), set(live_out[1])
        for op in keep:
            if op.name == "sget" and op.attrs["reg"] not in written:
                sin.add(op.attrs["reg"])
            elif op.name == "sset":
                written.add(op.attrs["reg"])
            elif op.name == "vget":
                vin.add(op.attrs["reg"])
        return frozenset(sin | (live_out[0] - written)), frozenset(vin)


def liveness(program: Program, wave_size: int, mode: int) -> list:
    """Per block, (SGPRs, VGPRs) live after it (None: unknown, all) when every block runs
    optimised for ``mode``: the least fixpoint over the blocks' optimised op lists (a register
    read only to compute dead values is not live).  Blocks ending in setpc (unknown target) or
    a MODE change (the next block runs in another MODE) keep everything."""
    low = Optimizer(program, wave_size)
    fw: list[tuple[list, tuple]] = [_Opt(low, b, mode).forward() for b in program.blocks]
    n = len(fw)
    succ = []
    for _ops, term in fw:
        k = term[0]
        t = (
            None
            if k in ("setpc", "mode")
            else ()
            if k == "end"
            else (term[2], term[3])
            if k == "branch"
            else (term[1],)
        )
        succ.append(None if t is None else [x for x in t if 0 <= x < n])
    live_in: list = [(frozenset(), frozenset())] * n

    def out(i):
        if succ[i] is None:
            return None
        s, v = set(), set()
        for j in succ[i]:
            if live_in[j] is None:
                return None
            s |= live_in[j][0]
            v |= live_in[j][1]
        return frozenset(s), frozenset(v)

    changed = True
    while changed:
        changed = False
        for i in reversed(range(n)):
            lo = out(i)
            li = _Opt.live_in(_Opt.dce(*fw[i], lo), lo)
            if li != live_in[i]:
                live_in[i], changed = li, True
    return [out(i) for i in range(n)]
