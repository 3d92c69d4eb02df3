"""Lower IR blocks to Python source over NumPy arrays (numbers only; no guest text).

Generated block functions have the signature ``blk(R, w, N, mode)``:
  R     the runtime (state arrays S [regs, waves, 1] and V [regs, waves, lanes], memory)
  w     the waves of the group: ``slice(None)`` when all waves of the batch run, else indices
  N     number of waves in the group
  mode  the group's MODE register value (waves are grouped by it)
and return the next block index (int or per-wave int array), or for ``setpc`` the target address.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ...translate.ir import BITS, EXEC_HI, EXEC_LO, MODE_REG, VALUE_OPS, Block, Op, Program, Value

DT = {"b1": "np.bool_", "u8": "np.uint8", "i8": "np.int8", "u16": "np.uint16",
      "i16": "np.int16", "u32": "np.uint32", "i32": "np.int32", "u64": "np.uint64",
      "i64": "np.int64", "f16": "np.float16", "f32": "np.float32", "f64": "np.float64"}

_BIN = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^", "shl": "<<",
        "shr": ">>", "sar": ">>", "fadd": "+", "fsub": "-", "fmul": "*", "fdiv": "/"}
_UN = {"not": "~{0}", "neg": "-{0}", "abs": "np.abs({0})", "fneg": "-{0}", "fabs": "np.abs({0})",
       "floor": "np.floor({0})", "ceil": "np.ceil({0})", "trunc": "np.trunc({0})",
       "rndne": "np.rint({0})", "fract": "H.fract({0})", "sqrt": "H.sqrt({0})",
       "rcp": "H.rcp({0})", "rsq": "H.rsq({0})", "exp2": "H.exp2({0})", "log2": "H.log2({0})",
       "sin": "H.sin({0})", "cos": "H.cos({0})", "frexp_mant": "H.frexp_mant({0})",
       "frexp_exp": "H.frexp_exp({0})", "bitrev": "H.bitrev({0})",
       "popcount": "H.popcount({0})"}
_CMP = {"lt": "({0} < {1})", "le": "({0} <= {1})", "gt": "({0} > {1})", "ge": "({0} >= {1})",
        "eq": "({0} == {1})", "ne": "({0} != {1})",
        "lg": "(({0} < {1}) | ({0} > {1}))",
        "o": "~(np.isnan({0}) | np.isnan({1}))", "u": "(np.isnan({0}) | np.isnan({1}))",
        "nge": "~({0} >= {1})", "nlg": "~(({0} < {1}) | ({0} > {1}))", "ngt": "~({0} > {1})",
        "nle": "~({0} <= {1})", "neq": "~({0} == {1})", "nlt": "~({0} < {1})",
        "f": "np.zeros(np.broadcast({0}, {1}).shape, bool)",
        "tru": "np.ones(np.broadcast({0}, {1}).shape, bool)"}


class Lowering:
    def __init__(self, program: Program, wave_size: int):
        self.p = program
        self.L = wave_size
        self.consts: list = []

    @staticmethod
    def const_value(t: str, value):
        from .helpers import DT as NPDT
        dt = NPDT[t]
        if t.startswith("f"):
            return dt(value)
        if t == "b1":
            return np.bool_(value)
        return np.array(int(value) & ((1 << BITS[t]) - 1), dtype=np.uint64).astype(dt)[()]

    def const(self, t: str, value) -> str:
        self.consts.append(self.const_value(t, value))
        return f"K[{len(self.consts) - 1}]"

    def optimize(self, blk: Block, mode: int) -> Block:
        return _Opt(self, blk, mode).run()

    def lane_count_points(self, blk: Block) -> dict:
        """Exact ``lane_instructions``: op index -> statement adding (vector instructions of the
        segment starting there) x (active lanes).  Segments end after each instruction that
        writes EXEC, so every vector instruction is counted with the EXEC it ran under."""
        from ...translate.program import lane_count_points
        points = lane_count_points(self.p, blk)
        hi = f"S[{EXEC_HI}, w]" if self.L == 64 else "None"
        return {i: f"    R.count_lanes({k}, S[{EXEC_LO}, w], {hi})"
                for i, k in points.items()}

    @staticmethod
    def reads_to_copy(blk: Block) -> set:
        """Op indices of register reads that must copy: a read is a view of the register file,
        so it is copied only when the value (or a bitcast view of it) is used after the next
        write of that register in the block."""
        root: dict[int, int] = {}
        last_use: dict[int, int] = {}
        for i, op in enumerate(blk.ops):
            for x in op.args:
                r = root.get(x.id, x.id)
                last_use[r] = i
            if op.name == "bitcast" and op.out is not None:
                root[op.out.id] = root.get(op.args[0].id, op.args[0].id)
        end = len(blk.ops)
        for x in blk.term[1:]:
            if hasattr(x, "id"):
                last_use[root.get(x.id, x.id)] = end
        import bisect
        writes: dict = {}
        for k, op in enumerate(blk.ops):
            if op.name in ("sset", "vset"):
                writes.setdefault((op.name, op.attrs["reg"]), []).append(k)
        out = set()
        for i, op in enumerate(blk.ops):
            if op.name not in ("sget", "vget"):
                continue
            ws = writes.get(("sset" if op.name == "sget" else "vset", op.attrs["reg"]))
            if not ws:
                continue
            p = bisect.bisect_right(ws, i)
            if p < len(ws) and last_use.get(op.out.id, -1) > ws[p]:
                out.add(i)
        return out

    def expr(self, op, a) -> str:
        """Python expression of a value op over argument names ``a``."""
        n, t = op.name, op.type
        if n == "lane_id":
            e = "R.LANE"
        elif n in _BIN:
            e = f"({a[0]} {_BIN[n]} {a[1]})"
        elif n in _UN:
            e = _UN[n].format(a[0])
        elif n in ("min", "max"):
            e = f"np.{n}imum({a[0]}, {a[1]})"
        elif n in ("fmin", "fmax"):
            e = f"H.{n}({a[0]}, {a[1]})"
        elif n == "mulhi":
            e = f"H.mulhi({a[0]}, {a[1]}, {t.startswith('i')})"
        elif n in ("clz", "ctz"):
            e = f"H.{n}({a[0]}, {BITS[t]})"
        elif n == "fma":
            e = f"H.fma({a[0]}, {a[1]}, {a[2]})"
        elif n == "trig_preop":
            e = f"H.trig_preop({a[0]}, {a[1]})"
        elif n == "fma_to":
            e = f"H.fma({a[0]}, {a[1]}, {a[2]}, {DT[t]})"
        elif n == "ldexp":
            e = f"H.ldexp({a[0]}, {a[1]})"
        elif n == "isclass":
            e = f"H.isclass({a[0]}, {a[1]})"
        elif n in ("fin", "fout"):
            e = f"H.{n}({a[0]}, mode)"
        elif n == "cmp":
            e = _CMP[op.attrs["cond"]].format(a[0], a[1])
        elif n == "select":
            e = f"np.where({a[0]}, {a[1]}, {a[2]})"
        elif n == "cvt":
            to = op.attrs["to"]
            if t.startswith("f") and not to.startswith("f"):
                e = f"H.cvt({a[0]}, {t!r}, {to!r})"
            else:
                e = f"np.asarray({a[0]}).astype({DT[to]})"
        elif n == "bitcast":
            e = f"np.asarray({a[0]}).view({DT[op.attrs['to']]})"
        elif n == "pack64":
            e = f"(np.asarray({a[0]}).astype(np.uint64) | (np.asarray({a[1]}).astype(np.uint64) << np.uint64(32)))"
        elif n == "lo32":
            e = f"np.asarray({a[0]}).astype(np.uint32)"
        elif n == "hi32":
            e = f"(np.asarray({a[0]}) >> np.uint64(32)).astype(np.uint32)"
        elif n == "ballot":
            e = f"H.ballot({a[0]}, N, {self.L})"
        elif n == "lanes":                  # backend-local (_Opt): a b1 broadcast to all lanes
            e = f"np.broadcast_to({a[0]}, (N, {self.L}))"
        elif n == "maskbit":
            e = f"(((np.asarray({a[0]}, np.uint64) >> R.LANE64) & np.uint64(1)) != 0)"
        elif n == "readlane":
            e = f"H.readlane({a[0]}, {a[1]}, N, {self.L})"
        elif n == "shuffle":
            e = f"H.shuffle({a[0]}, {a[1]}, N, {self.L})"
        elif n == "permute":
            e = f"H.permute({a[0]}, {a[1]}, {a[2]}, N, {self.L})"
        elif n == "load":
            e = (f"R.load({op.attrs['space']!r}, {op.instr}, {a[0]}, {a[1]}, "
                 f"{op.attrs['nbytes']}, {op.attrs['words']}, w, N, {int(op.out.uniform)})")
        elif n == "word":
            e = f"{a[0]}[..., {op.attrs['k']}]"
        elif n == "atomic":
            e = (f"R.atomic({op.attrs['space']!r}, {op.instr}, {op.attrs['op']!r}, "
                 f"{op.attrs['bits']}, {a[0]}, {a[1]}, {a[2]}, "
                 f"{a[3] if len(a) > 3 else 'None'}, w, N)")
        else:
            raise NotImplementedError(n)
        return e

    def block_source(self, blk: Block, mode=None) -> str:
        lines = [f"def blk_{blk.index}(R, w, N, mode):",
                 "    S = R.S; V = R.V"]
        if blk.uses_float:
            if mode is None:
                lines.append("    if mode & 15: R.refuse_rounding(mode)")
            elif mode & 15:
                lines.append("    R.refuse_rounding(mode)")
        if mode is not None:
            blk = self.optimize(blk, mode)
        name = {}
        kval = {}                       # name of a constant -> its value
        must_copy = self.reads_to_copy(blk)
        exec_full = {}                  # exec value name -> name of its "all lanes on" flag
        exec_cache = None
        counts = self.lane_count_points(blk)
        for i, op in enumerate(blk.ops):
            if i in counts:
                lines.append(counts[i])
            a = [name[x.id] for x in op.args]
            t = op.type
            o = f"v{op.out.id}" if op.out is not None else None
            n = op.name
            if n == "const":
                if "value_np" in op.attrs:
                    self.consts.append(op.attrs["value_np"])
                    e = f"K[{len(self.consts) - 1}]"
                else:
                    e = self.const(t, op.attrs["value"])
                kval[o] = self.consts[-1]
            elif n == "sget":
                e = f"S[{op.attrs['reg']}, w]"
                if i in must_copy:
                    e += ".copy()"
            elif n == "vget":
                e = f"V[{op.attrs['reg']}, w]"
                if i in must_copy:
                    e += ".copy()"
            elif n == "exec":
                if exec_cache is not None:
                    name[op.out.id] = exec_cache
                    continue
                e = f"H.exec_mask(S[{EXEC_LO}, w], S[{EXEC_HI}, w], {self.L}, R.LANEBITS)"
                exec_cache = o
                lines.append(f"    {o} = {e}")
                lines.append(f"    {o}_all = bool({o}.all())")
                name[op.out.id] = o
                exec_full[o] = f"{o}_all"
                continue
            elif n in ("fin", "fout") and mode is not None:
                e = f"H.flush({a[0]})"            # kept by optimize() only when MODE flushes
            elif n in ("fmin", "fmax") and t == "f32" and (e := _minmax_const(n, a, kval)):
                pass
            elif n in VALUE_OPS or n in _LOCAL_OPS:
                e = self.expr(op, a)
            elif n == "sset":
                lines.append(f"    S[{op.attrs['reg']}, w] = {a[0]}")
                if op.attrs["reg"] in (EXEC_LO, EXEC_HI):
                    exec_cache = None
                continue
            elif n == "vset":
                r = op.attrs["reg"]
                if a[1] in exec_full:           # EXEC mask: a plain store when all lanes are on
                    lines.append(f"    if {exec_full[a[1]]}: V[{r}, w] = {a[0]}")
                    lines.append(f"    else: V[{r}, w] = np.where({a[1]}, {a[0]}, V[{r}, w])")
                else:
                    lines.append(f"    V[{r}, w] = np.where({a[1]}, {a[0]}, V[{r}, w])")
                continue
            elif n == "refuse_if":
                lines.append(f"    if np.any({a[0]}): R.refuse_at({op.instr}, {op.attrs['why']!r})")
                continue
            elif n == "store":
                ws = "(" + "".join(x + ", " for x in a[2:]) + ")"
                lines.append(f"    R.store({op.attrs['space']!r}, {op.instr}, {a[0]}, {a[1]}, "
                             f"{ws}, {op.attrs['nbytes']}, w, N)")
                continue
            else:
                raise NotImplementedError(n)
            lines.append(f"    {o} = {e}")
            name[op.out.id] = o
        if len(blk.ops) in counts:
            lines.append(counts[len(blk.ops)])
        term = blk.term
        k = term[0]
        if k in ("jump", "barrier", "mode"):
            lines.append(f"    return {term[1]}")
        elif k == "branch":
            c = name[term[1].id]
            lines.append(f"    c = np.asarray({c})")
            lines.append(f"    if c.ndim == 0: return {term[2]} if c else {term[3]}")
            lines.append(f"    return np.where(c.reshape(-1), {term[2]}, {term[3]})")
        elif k == "end":
            lines.append("    return -1")
        elif k == "setpc":
            lines.append(f"    return np.broadcast_to(np.asarray({name[term[1].id]}, np.uint64).reshape(-1), (N,))")
        else:
            raise NotImplementedError(k)
        return "\n".join(lines) + "\n"


def _minmax_const(n, a, kval):
    """f32 fmin/fmax with one non-NaN constant operand C, exactly as H.fmin/H.fmax: their
    equal-operand fix (bitwise OR for min / AND for max) changes nothing unless C is a zero, and
    their two-NaN fix never applies, so this is np.fmin/np.fmax (same operand order, so the same
    NaN results) and, for C = +-0, the OR/AND of x and C where x is a zero (x itself or C)."""
    for x, c in ((a[0], a[1]), (a[1], a[0])):
        k = kval.get(c)
        if k is None or not isinstance(k, np.float32) or np.isnan(k):
            continue
        e = f"np.{n}({a[0]}, {a[1]})"
        if k == 0:
            keep_x = (n == "fmin") != bool(np.signbit(k))   # min(x, +0) / max(x, -0): x
            e = f"np.where({x} == {c}, {x if keep_x else c}, {e})"
        return e
    return None


# ops without side effects whose value depends only on their operands (folded, CSE'd, dropped)
_PURE = VALUE_OPS - {"sget", "vget", "exec", "load", "atomic", "word", "lane_id", "ballot",
                     "readlane", "shuffle", "permute", "fin", "fout", "const"}
_KEEP = {"sset", "vset", "store", "refuse_if", "load", "atomic"}
_LOCAL_OPS = {"lanes"}            # ops only _Opt emits (never in the IR the frontends build)


_IRT = {np.bool_: "b1", np.uint8: "u8", np.int8: "i8", np.uint16: "u16", np.int16: "i16",
        np.uint32: "u32", np.int32: "i32", np.uint64: "u64", np.int64: "i64", np.float16: "f16",
        np.float32: "f32", np.float64: "f64"}


def _app(ops, op):
    if op is not None:
        ops.append(op)


def _flushes(mode: int, t: str, out: bool) -> bool:
    d = (mode >> (4 if t == "f32" else 6)) & 3
    return d in ((0, 1) if out else (0, 2))


class _Opt:
    """Block rewriting for one MODE value (docs/decisions/0006: MODE is a Python int per
    block): MODE reads become constants, fin/fout become identity or a flush, ops over
    constants are folded, b1 and/or/select over constants simplified, pure ops and repeated
    register reads (same register version) shared, unused pure ops dropped.  The result is an
    op list over the same values that lowers with the same expressions."""

    def __init__(self, low, blk: Block, mode: int):
        self.low, self.blk, self.mode = low, blk, mode

    def run(self):
        from . import helpers as H
        low, mode = self.low, self.mode
        sub: dict = {}                 # value id -> Value it equals
        cval: dict = {}                # value id -> numpy constant
        cse: dict = {}
        version: dict = {}
        ops: list = []
        mode_written = False
        ns = {"np": np, "H": H, "K": low.consts}
        # 64-bit carry chains (v_add_co_u32 / v_add_co_ci_u32 / s_add_u32+s_addc_u32 translate
        # to zero-extend to u64, add, lo32/hi32, hi32 != 0): the sum of at most two u32 terms
        # and one b1 term fits in 33 bits, so lo32 is the wrapping u32 sum and hi32 the carry
        # (some partial sum < its predecessor) -- bit-identical, no 64-bit arrays.
        zext: dict = {}                # u64 value id -> u32/b1 Value it zero-extends
        wide: dict = {}                # u64 value id -> (u32 terms, b1 terms) it sums
        carry_of: dict = {}            # u32 value id (0/1) -> b1 Value it converts
        set_val: dict = {}             # sset reg -> (version, Value written)
        from_set: dict = {}            # sget value id -> Value of the sset it reads back
        ballot_lo: dict = {}           # u32 value id -> b1 arg of the (wave32) ballot it holds
        fresh = [1 << 30]

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
            ops.append(Op(name, t, tuple(a), attrs, out, instr))
            return out

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
                out.append((p, q))
                p = q
            return p, out

        def newconst(t, v, like):
            d = np.asarray(v).dtype
            t = _IRT.get(d.type, t)
            out = Value(like.id, t, True)
            ck = ("const", d.str, np.asarray(v).tobytes())
            if ck in cse:
                sub[like.id] = cse[ck]
                return None
            cse[ck] = out
            cval[out.id] = v
            return Op("const", t, (), {"value_np": v}, out, -1)

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
                _app(ops, newconst("u32", np.uint32(mode), op.out))
                continue
            if n in ("fin", "fout"):
                x = args[0]
                if not _flushes(mode, x.type, n == "fout"):
                    sub[op.out.id] = x
                    continue
                if x.id in cval:
                    with np.errstate(all="ignore"):
                        _app(ops, newconst(op.type, np.asarray(H.flush(cval[x.id]))[()], op.out))
                    continue
                ops.append(op)
                continue
            if n in ("sget", "vget"):
                if n == "sget" and op.attrs["reg"] in set_val:
                    ver, val = set_val[op.attrs["reg"]]
                    if ver == version.get(("sset", op.attrs["reg"]), 0):
                        from_set[op.out.id] = val
                        # read back what this block wrote: the written value itself (a
                        # computed u32 [waves, 1] array like the read; constants still read)
                        if val.type == op.type == "u32" and val.uniform and val.id not in cval \
                                and op.attrs["reg"] != MODE_REG:
                            sub[op.out.id] = val
                            continue
                key = (n, op.attrs["reg"], version.get(("sset" if n == "sget" else "vset",
                                                          op.attrs["reg"]), 0))
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
                if v.id in ballot_lo:      # bit `lane` of the wave32 ballot of b: b itself
                    emit("lanes", "b1", (ballot_lo[v.id],), {}, op.instr, op.out)
                    continue
            if n not in _PURE:
                ops.append(op)
                continue
            if n in ("lo32", "cvt") and op.out.type == "u32" and args[0].id in ballot_lo:
                ballot_lo[op.out.id] = ballot_lo[args[0].id]
            if n == "cvt" and op.attrs.get("to") == "u64" and op.type in ("u32", "b1") \
                    and args[0].type == op.type:
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
                for p, q in steps:
                    k = emit("cmp", p.type if p.type == "u32" else "u32", (q, p),
                             {"cond": "lt"}, op.instr)
                    c = k if c is None else emit("or", "b1", (c, k), {}, op.instr)
                carry_of[op.out.id] = c
                emit("cvt", "b1", (c,), {"to": "u32"}, op.instr, op.out)
                continue
            elif n == "cmp" and op.attrs.get("cond") == "ne" and len(args) == 2:
                for x, y in ((args[0], args[1]), (args[1], args[0])):
                    if x.id in carry_of and y.id in cval and int(cval[y.id]) == 0:
                        sub[op.out.id] = carry_of[x.id]
                        break
                if op.out.id in sub:
                    continue
            if all(x.id in cval for x in args):
                names = []
                for x in args:
                    names.append(f"K[{len(low.consts)}]")
                    low.consts.append(cval[x.id])
                try:
                    with np.errstate(all="ignore"):
                        r = eval(low.expr(op, names), ns)
                    del low.consts[len(low.consts) - len(args):]
                    r = np.asarray(r)
                    if r.ndim == 0:
                        _app(ops, newconst(op.type, r[()], op.out))
                        continue
                except Exception:
                    del low.consts[len(low.consts) - len(args):]
            if op.type == "b1" and n in ("and", "or") and len(args) == 2:
                done = False
                for x, y in ((args[0], args[1]), (args[1], args[0])):
                    if x.id in cval and y.type == "b1":
                        c = bool(cval[x.id])
                        if (n == "and") != c:             # and False / or True: constant
                            _app(ops, newconst("b1", np.bool_(c), op.out))
                        else:                              # and True / or False: the other
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
            key = (n, op.type, tuple(x.id for x in args), repr(sorted(op.attrs.items())))
            if key in cse:
                sub[op.out.id] = cse[key]
                continue
            cse[key] = op.out
            ops.append(op)
        # terminator with substitutions
        term = tuple(sub.get(x.id, x) if isinstance(x, Value) else x for x in self.blk.term)
        # dead code: keep effects and whatever they (and the terminator) use
        live = {x.id for x in term if isinstance(x, Value)}
        keep = []
        overwritten: set = set()       # scalar regs written again later with no read between
        for op in reversed(ops):
            if op.name == "sset":
                r = op.attrs["reg"]
                if r in overwritten:   # dead store (EXEC/MODE are read outside the IR: kept)
                    continue
                if r not in (EXEC_LO, EXEC_HI, MODE_REG):
                    overwritten.add(r)
            if op.name in _KEEP or (op.out is not None and op.out.id in live):
                keep.append(op)
                live.update(x.id for x in op.args)
                if op.name == "sget":
                    overwritten.discard(op.attrs["reg"])
        keep.reverse()
        return dataclasses.replace(self.blk, ops=keep, term=term)


def compile_program(program: Program, wave_size: int):
    """-> list of block functions (compiled once; cached with the module)."""
    from . import helpers as H
    low = Lowering(program, wave_size)
    src = "\n".join(low.block_source(b) for b in program.blocks)
    ns = {"np": np, "H": H, "K": low.consts}
    exec(compile(src, "<wavelift-module>", "exec"), ns)
    return [ns[f"blk_{b.index}"] for b in program.blocks], src


class ModeBlocks:
    """Block functions specialised for one MODE value each, compiled on first use (the
    scheduler runs a group of waves that share MODE; docs/decisions/0006)."""

    def __init__(self, program: Program, wave_size: int):
        self.program = program
        self.L = wave_size
        self.fns: dict = {}
        self.sources: list = []

    def get(self, index: int, mode: int):
        f = self.fns.get((index, mode))
        if f is None:
            from . import helpers as H
            low = Lowering(self.program, self.L)
            src = low.block_source(self.program.blocks[index], int(mode))
            ns = {"np": np, "H": H, "K": low.consts}
            exec(compile(src, f"<wavelift-block-{index}-mode-{mode:#x}>", "exec"), ns)
            f = self.fns[(index, mode)] = ns[f"blk_{index}"]
            self.sources.append(src)
        return f
