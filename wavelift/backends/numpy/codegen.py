"""Lower IR blocks to Python source over NumPy arrays (numbers only; no guest text).

Generated block functions have the signature ``blk(R, w, N, mode)``:
  R     the runtime (state arrays S [regs, waves, 1] and V [regs, waves, lanes], memory)
  w     the waves of the group: ``slice(None)`` when all waves of the batch run, else indices
  N     number of waves in the group
  mode  the group's MODE register value (waves are grouped by it)
and return the next block index (int or per-wave int array), or for ``setpc`` the target address.
"""
from __future__ import annotations

import numpy as np

from ...translate.ir import BITS, EXEC_HI, EXEC_LO, Block, Program

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

    def const(self, t: str, value) -> str:
        from .helpers import DT as NPDT
        dt = NPDT[t]
        if t.startswith("f"):
            v = dt(value)
        elif t == "b1":
            v = np.bool_(value)
        else:
            v = np.array(int(value) & ((1 << BITS[t]) - 1), dtype=np.uint64).astype(dt)[()]
        self.consts.append(v)
        return f"K[{len(self.consts) - 1}]"

    def lane_count_points(self, blk: Block) -> dict:
        """Exact ``lane_instructions``: op index -> statement adding (vector instructions of the
        segment starting there) x (active lanes).  Segments end after each instruction that
        writes EXEC, so every vector instruction is counted with the EXEC it ran under."""
        from ...translate.program import VECTOR
        last_op: dict[int, int] = {}
        writes_exec: set[int] = set()
        for i, op in enumerate(blk.ops):
            last_op[op.instr] = i
            if op.name == "sset" and op.attrs["reg"] in (EXEC_LO, EXEC_HI):
                writes_exec.add(op.instr)
        points: dict[int, int] = {}
        start, k = 0, 0
        for ins in blk.instrs:
            if self.p.instructions[ins].encoding in VECTOR:
                k += 1
            if ins in writes_exec:
                if k:
                    points[start] = points.get(start, 0) + k
                start, k = last_op[ins] + 1, 0
        if k:
            points[start] = points.get(start, 0) + k
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

    def block_source(self, blk: Block) -> str:
        lines = [f"def blk_{blk.index}(R, w, N, mode):",
                 "    S = R.S; V = R.V"]
        if blk.uses_float:
            lines.append("    if mode & 15: R.refuse_rounding(mode)")
        name = {}
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
                e = self.const(t, op.attrs["value"])
            elif n == "sget":
                e = f"S[{op.attrs['reg']}, w]"
                if i in must_copy:
                    e += ".copy()"
            elif n == "vget":
                e = f"V[{op.attrs['reg']}, w]"
                if i in must_copy:
                    e += ".copy()"
            elif n == "lane_id":
                e = "R.LANE"
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


def compile_program(program: Program, wave_size: int):
    """-> list of block functions (compiled once; cached with the module)."""
    from . import helpers as H
    low = Lowering(program, wave_size)
    src = "\n".join(low.block_source(b) for b in program.blocks)
    ns = {"np": np, "H": H, "K": low.consts}
    exec(compile(src, "<wavelift-module>", "exec"), ns)
    return [ns[f"blk_{b.index}"] for b in program.blocks], src
