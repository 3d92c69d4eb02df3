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
import sys

import numpy as np

from ...translate.ir import (BITS, EXEC_HI, EXEC_LO, MODE_REG, VALUE_OPS, Block, Op, Program, Value,
                             refusal_of)

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

    def evaluate(self, op, values, ns):
        """``op`` over known operand values (0-d) as the generated code computes it over a wave's
        lanes -- operands filled into [1, 32] arrays: NumPy's scalar loops (0-d values, or the
        tail of an array past its SIMD width) treat signaling NaNs differently from its SIMD
        loops (np.fmin/np.fmax return the NaN, casts give other integers) -- for constant
        folding and the CUDA backend's preloads: the 0-d result, or None where it does not
        evaluate (a helper that needs the wave's shape, say)."""
        n0 = len(self.consts)
        self.consts.extend(np.full((1, 32), v) for v in values)
        try:
            with np.errstate(all="ignore"):
                r = np.asarray(eval(self.expr(op, [f"K[{n0 + i}]" for i in range(len(values))]), ns))
        except Exception:           # noqa: BLE001 - not evaluable here
            return None
        finally:
            del self.consts[n0:]
        if r.ndim != 2 or r.shape[0] != 1 or r.shape[1] not in (1, 32):
            return None
        return np.asarray(r[0, 0])          # (every lane had the same operands)

    def optimize(self, blk: Block, mode: int, live_out=None) -> Block:
        return _Opt(self, blk, mode).run(live_out)

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
        so it is copied only when the value (or a value that may be a view of it: a bitcast,
        a broadcast, a select or min/max that may return an operand, G.sel) is used after the
        next write of that register in the block."""
        roots: dict[int, tuple] = {}
        last_use: dict[int, int] = {}

        def rs(x):
            return roots.get(x.id, (x.id,))

        for i, op in enumerate(blk.ops):
            for x in op.args:
                for r in rs(x):
                    last_use[r] = i
            if op.name in ("bitcast", "lanes") and op.out is not None:
                roots[op.out.id] = rs(op.args[0])
            elif op.name in ("select", "fmin", "fmax") and op.out is not None:
                roots[op.out.id] = sum((rs(x) for x in op.args[-2:]), ())
        end = len(blk.ops)
        for x in blk.term[1:]:
            if hasattr(x, "id"):
                for r in rs(x):
                    last_use[r] = end
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
            if t == "f16" and n in ("fadd", "fsub", "fmul", "fdiv"):
                e = f"H.nan_first({e}, {a[0]})"      # NumPy's half loops pick either NaN
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
        elif n == "fnan":
            e = f"H.fnan({', '.join(a)})"
        elif n == "isclass":
            e = f"H.isclass({a[0]}, {a[1]})"
        elif n in ("fin", "fout"):
            e = f"H.{n}({a[0]}, mode)"
        elif n == "cmp":
            e = _CMP[op.attrs["cond"]].format(a[0], a[1])
        elif n == "select":
            per_lane = op.out is not None and not op.out.uniform
            e = f"{'G.sel' if per_lane else 'np.where'}({a[0]}, {a[1]}, {a[2]})"
        elif n == "cvt":
            to = op.attrs["to"]
            if t.startswith("f") and not to.startswith("f"):
                e = f"H.cvt({a[0]}, {t!r}, {to!r})"
            else:
                e = f"np.asarray({a[0]}).astype({DT[to]})"
        elif n == "bitcast":
            e = f"np.asarray({a[0]}).view({DT[op.attrs['to']]})"
        elif n == "pack64" and _LITTLE and op.out is not None and not op.out.uniform:
            e = f"G.pack64({a[0]}, {a[1]})"
        elif n == "pack64":
            e = f"(np.asarray({a[0]}).astype(np.uint64) | (np.asarray({a[1]}).astype(np.uint64) << np.uint64(32)))"
        elif n == "lo32":
            e = f"np.asarray({a[0]}).astype(np.uint32)"
        elif n == "hi32":
            e = f"(np.asarray({a[0]}) >> np.uint64(32)).astype(np.uint32)"
        elif n == "ballot":
            e = f"H.ballot({a[0]}, N, {self.L})"
        elif n == "lanes":                  # backend-local (_Opt): a value broadcast to all lanes
            e = f"G.lanes({a[0]}, N, {self.L})"
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

    def block_source(self, blk: Block, mode=None, live_out=None) -> str:
        lines = [f"def blk_{blk.index}(R, w, N, mode):",
                 "    S = R.S; V = R.V"]
        if blk.uses_float:
            if mode is None:
                lines.append("    if mode & 15: R.refuse_rounding(mode)")
            elif mode & 15:
                lines.append("    R.refuse_rounding(mode)")
        if mode is not None:
            blk = self.optimize(blk, mode, live_out)
        name = {}
        kval = {}                       # name of a constant -> its value
        must_copy = self.reads_to_copy(blk)
        exec_full = {}                  # exec value name -> name of its "all lanes on" flag
        exec_cache = None
        counts = self.lane_count_points(blk)
        exec_m = set()                  # exec value names whose u32 mask (for G.blend) is made
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
            elif n in ("fmin", "fmax") and t == "f32" and \
                    (e := _minmax_const(n, a, kval, not op.out.uniform)):
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
                    if a[1] not in exec_m:
                        exec_m.add(a[1])
                        lines.append(f"    {a[1]}_m = None if {exec_full[a[1]]} else G.umask({a[1]})")
                    lines.append(f"    if {exec_full[a[1]]}: V[{r}, w] = {a[0]}")
                    lines.append(f"    else: G.blend(V, {r}, w, {a[0]}, {a[1]}_m)")
                else:
                    lines.append(f"    G.blend(V, {r}, w, {a[0]}, G.umask({a[1]}))")
                continue
            elif n == "refuse_if":
                lines.append(f"    if np.any({a[0]}): R.refuse_at{refusal_of(op)!r}")
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


def _minmax_const(n, a, kval, per_lane):
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
            if (n == "fmin") != bool(np.signbit(k)):    # min(x, +0) / max(x, -0): x
                e = f"{'G.sel' if per_lane else 'np.where'}({x} == {c}, {x}, {e})"
            elif n == "fmax":          # max(x, +0) >= +0 (NaN x: +0): |r| turns -0 into +0
                e = f"np.abs({e})"
            else:                      # min(x, -0) <= -0: -|r| turns +0 into -0
                e = f"np.negative(np.abs({e}))"
        return e
    return None


class G:
    """Run-time helpers of the generated code (besides helpers.py's semantics)."""

    @staticmethod
    def pack64(lo, hi):
        """pack64 of u32 arrays: both words stored into one u64 array (little-endian host;
        cheaper than two widening casts, a shift and an or)."""
        shape = np.shape(lo)
        if shape != np.shape(hi):
            shape = np.broadcast_shapes(shape, np.shape(hi))
        if not shape:
            return np.uint64(lo) | (np.uint64(hi) << np.uint64(32))
        out = np.empty(shape, np.uint64)
        words = out.view(np.uint32)
        words[..., 0::2] = lo
        words[..., 1::2] = hi
        return out

    @staticmethod
    def lanes(x, n, L):
        """x broadcast to [n, L] (x itself when it has that shape: broadcast_to is slow Python)."""
        if type(x) is np.ndarray and x.shape == (n, L):
            return x
        return np.broadcast_to(x, (n, L))

    @staticmethod
    def umask(m):
        """b1 lane mask -> u32 0 / 0xFFFFFFFF (for blend)."""
        return (-np.asarray(m).astype(np.int32)).view(np.uint32)

    @staticmethod
    def blend(V, r, w, x, m):
        """V[r, w] = where(lanes of u32 mask m, x, V[r, w]) as old ^ ((old ^ x) & m), in place
        when w is a slice (np.where with a mixed mask costs several times these three ops)."""
        old = V[r, w]
        # x cast as V[r, w] = x would (some helpers give wider integer arrays)
        t = np.bitwise_xor(old, x, dtype=np.uint32, casting="unsafe")
        t &= m
        old ^= t
        if type(w) is not slice:
            V[r, w] = old

    @staticmethod
    def sel(c, a, b):
        """np.where(c, a, b), or the operand that every lane picks when it already has the
        result's shape and type (np.where costs several times an arithmetic op; fix-up selects
        rarely pick their special value)."""
        keep = b if not c.any() else a if c.all() else None
        if type(keep) is np.ndarray and keep.dtype == np.result_type(a, b):
            s = keep.shape              # the result's shape when every operand is s or scalar
            if all(np.shape(x) in (s, ()) for x in (c, a, b)):
                return keep
        return np.where(c, a, b)


_LITTLE = sys.byteorder == "little"


# ops without side effects whose value depends only on their operands (folded, CSE'd, dropped)
_PURE = VALUE_OPS - {"sget", "vget", "exec", "load", "atomic", "word", "lane_id", "ballot",
                     "readlane", "shuffle", "permute", "fin", "fout", "const"}
_KEEP = {"sset", "vset", "store", "refuse_if", "load", "atomic"}
_INT = {"u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64"}
_LOCAL_OPS = {"lanes"}            # ops only _Opt emits (never in the IR the frontends build)


_IRT = {np.bool_: "b1", np.uint8: "u8", np.int8: "i8", np.uint16: "u16", np.int16: "i16",
        np.uint32: "u32", np.int32: "i32", np.uint64: "u64", np.int64: "i64", np.float16: "f16",
        np.float32: "f32", np.float64: "f64"}


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
        sub: dict = {}                 # value id -> Value it equals
        cval: dict = {}                # value id -> numpy constant
        cse: dict = {}
        version: dict = {}
        ops: list = []
        defop: dict = {}               # value id -> the pure op (kept in ops) that computes it
        mode_written = False
        ns = {"np": np, "H": H, "K": low.consts, "G": G}
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
            out = Value(fresh[0], _IRT.get(np.asarray(v).dtype.type, t), True)
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
            for x, c, ok in ((a, b, n in ("add", "sub", "or", "xor", "shl", "shr", "sar")),
                             (b, a, n in ("add", "or", "xor"))):
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
            if n == "exec":                    # one EXEC read per EXEC value (masks compare equal)
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
                    d = defop.get(x.id)        # an integer 0/1 made from a b1: the b1 itself
                    b = carry_of.get(x.id) or (d.args[0] if d is not None and d.name == "cvt"
                                               and d.type == "b1" else None)
                    if b is not None:
                        sub[op.out.id] = b if op.attrs["cond"] == "ne" else \
                            fold("not", "b1", (b,), {}, op.instr)
                        break
                if op.out.id in sub:
                    continue
            elif n == "bitcast" and args[0].id in defop:
                d = defop[args[0].id]          # a bitcast back to the original type: the original
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
                        if (n == "and") != c:             # and False / or True: constant
                            sub[op.out.id] = const("b1", np.bool_(c))
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
        later: dict = {}               # (file, reg) -> the next write's mask id ("all" for an
                                       # SGPR), "dead" (unread after the block) or "read"

        def after(f, r):               # what follows the block
            if live_out is None or r in live_out[f == "vset"]:
                return "read"
            return "dead"

        for op in reversed(ops):
            if op.name in ("sset", "vset"):
                r = (op.name, op.attrs["reg"])
                nxt = later.get(r) or after(*r)
                if op.name == "sset" and op.attrs["reg"] in (EXEC_LO, EXEC_HI, MODE_REG):
                    nxt = "read"       # EXEC/MODE are read outside the IR (lane counts, regroup)
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
    low = Lowering(program, wave_size)
    fw = [_Opt(low, b, mode).forward() for b in program.blocks]
    n = len(fw)
    succ = []
    for ops, term in fw:
        k = term[0]
        t = None if k in ("setpc", "mode") else () if k == "end" else \
            (term[2], term[3]) if k == "branch" else (term[1],)
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


def compile_program(program: Program, wave_size: int):
    """-> list of block functions (compiled once; cached with the module)."""
    from . import helpers as H
    low = Lowering(program, wave_size)
    src = "\n".join(low.block_source(b) for b in program.blocks)
    ns = {"np": np, "H": H, "K": low.consts, "G": G}
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
        self.live: dict = {}            # MODE -> per block, registers live after it
        self.natives: dict = {}         # MODE -> native.NativeBlocks (or the reason there are none)

    def _live(self, mode: int):
        live = self.live.get(mode)
        if live is None:
            live = self.live[mode] = liveness(self.program, self.L, int(mode))
        return live

    def get(self, index: int, mode: int):
        f = self.fns.get((index, mode))
        if f is None:
            from . import helpers as H
            live = self._live(mode)
            low = Lowering(self.program, self.L)
            src = low.block_source(self.program.blocks[index], int(mode), live[index])
            ns = {"np": np, "H": H, "K": low.consts, "G": G}
            exec(compile(src, f"<wavelift-block-{index}-mode-{mode:#x}>", "exec"), ns)
            f = self.fns[(index, mode)] = ns[f"blk_{index}"]
            self.sources.append(src)
        return f

    def native(self, index: int, mode: int):
        """The native-tier function of block ``index`` for ``mode`` (native.py; its library is
        compiled on the first request for that MODE), or None: the NumPy block runs."""
        return self.native_library(mode).get(index)

    def native_library(self, mode: int, background: bool = False):
        """native.NativeBlocks of ``mode`` (or NoNative: why there is none).  ``background``
        (WL_NATIVE=auto): a library not in the disk cache compiles while NumPy blocks run; it
        is used from the first request after it is ready."""
        from . import native
        nb = self.natives.get(mode)
        if nb is None:
            try:
                nb = native.NativeBlocks(self.program, self.L, int(mode), self._live(mode),
                                         background)
            except native.Unsupported as e:
                nb = native.NoNative(str(e))
            except Exception as e:      # noqa: BLE001 - a tier bug must not fail the dispatch:
                # its NumPy blocks run instead, and the tier tests fail on the recorded problem
                nb = native.NoNative(f"internal error: {type(e).__name__}: {e}")
            self.natives[mode] = nb
        if getattr(nb, "pending", None) is not None:
            try:
                if not nb.ready():
                    return native.COMPILING
            except native.Unsupported as e:
                nb = self.natives[mode] = native.NoNative(str(e))
            except Exception as e:      # noqa: BLE001 - as above
                nb = self.natives[mode] = native.NoNative(f"internal error: {type(e).__name__}: {e}")
        return nb
