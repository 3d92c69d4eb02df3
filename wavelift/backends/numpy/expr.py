"""The NumPy lowering of one IR value op: a Python expression over NumPy arrays (``expr``) and
the constants it names.  Numbers only; no guest text.  (ir/interp.py evaluates the same
operations on known operands; tests/ir/test_interp.py holds the two to the same bits.)
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from ...ir.interp import const_value
from ...ir.ops import BITS
from ...ir.program import Op, Program

DT = {
    "b1": "np.bool_",
    "u8": "np.uint8",
    "i8": "np.int8",
    "u16": "np.uint16",
    "i16": "np.int16",
    "u32": "np.uint32",
    "i32": "np.int32",
    "u64": "np.uint64",
    "i64": "np.int64",
    "f16": "np.float16",
    "f32": "np.float32",
    "f64": "np.float64",
}

_BIN = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "and": "&",
    "or": "|",
    "xor": "^",
    "shl": "<<",
    "shr": ">>",
    "sar": ">>",
    "fadd": "+",
    "fsub": "-",
    "fmul": "*",
    "fdiv": "/",
}
_UN = {
    "not": "~{0}",
    "neg": "-{0}",
    "abs": "np.abs({0})",
    "fneg": "-{0}",
    "fabs": "np.abs({0})",
    "floor": "np.floor({0})",
    "ceil": "np.ceil({0})",
    "trunc": "np.trunc({0})",
    "rndne": "np.rint({0})",
    "fract": "H.fract({0})",
    "sqrt": "H.sqrt({0})",
    "rcp": "H.rcp({0})",
    "rsq": "H.rsq({0})",
    "exp2": "H.exp2({0})",
    "log2": "H.log2({0})",
    "sin": "H.sin({0})",
    "cos": "H.cos({0})",
    "frexp_mant": "H.frexp_mant({0})",
    "frexp_exp": "H.frexp_exp({0})",
    "bitrev": "H.bitrev({0})",
    "popcount": "H.popcount({0})",
}
_CMP = {
    "lt": "({0} < {1})",
    "le": "({0} <= {1})",
    "gt": "({0} > {1})",
    "ge": "({0} >= {1})",
    "eq": "({0} == {1})",
    "ne": "({0} != {1})",
    "lg": "(({0} < {1}) | ({0} > {1}))",
    "o": "~(np.isnan({0}) | np.isnan({1}))",
    "u": "(np.isnan({0}) | np.isnan({1}))",
    "nge": "~({0} >= {1})",
    "nlg": "~(({0} < {1}) | ({0} > {1}))",
    "ngt": "~({0} > {1})",
    "nle": "~({0} <= {1})",
    "neq": "~({0} == {1})",
    "nlt": "~({0} < {1})",
    "f": "np.zeros(np.broadcast({0}, {1}).shape, bool)",
    "tru": "np.ones(np.broadcast({0}, {1}).shape, bool)",
}


class ExprLowering:
    """The NumPy expression of each value op (``expr``) and the constants it names (``consts``,
    the generated code's K)."""

    def __init__(self, program: Program, wave_size: int):
        self.p = program
        self.L = wave_size
        self.consts: list = []
        self.ib: int | None = None  # a piece's first instruction (codegen.PieceCache): None in a block

    def ins(self, n: int) -> str:
        """The instruction index ``n`` as the generated code names it: the number in a block; in
        a piece (codegen.PieceCache, shared by programs) relative to its argument IB, the piece's
        first instruction in the program that runs it."""
        return str(n) if self.ib is None else f"(IB + {n - self.ib})"

    def const(self, t: str, value) -> str:
        self.consts.append(const_value(t, value))
        return f"K[{len(self.consts) - 1}]"

    def namespace(self) -> dict:
        """The names generated code runs in (K: this lowering's constants)."""
        from . import helpers as H

        return {"np": np, "H": H, "K": self.consts, "G": G}

    def expr(self, op, a) -> str:
        """Python expression of a value op over argument names ``a`` (EXPR: one entry per op;
        a missing one is a KeyError, which tests/ir/test_ops.py's probe reports)."""
        return EXPR[op.name](self, op, a)


def _per_lane(op) -> bool:
    return op.out is not None and not op.out.uniform


def _bin(sym: str):
    return lambda low, op, a: f"({a[0]} {sym} {a[1]})"


def _fbin(sym: str):
    def e(low, op, a):
        x = f"({a[0]} {sym} {a[1]})"
        return f"H.nan_first({x}, {a[0]})" if op.type == "f16" else x  # NumPy's half loops pick either NaN

    return e


def _un(template: str):
    return lambda low, op, a: template.format(a[0])


def _cvt(low, op, a):
    t, to = op.type, op.attrs["to"]
    if t.startswith("f") and not to.startswith("f"):
        return f"H.cvt({a[0]}, {t!r}, {to!r})"
    return f"np.asarray({a[0]}).astype({DT[to]})"


def _pack64(low, op, a):
    if _LITTLE and _per_lane(op):
        return f"G.pack64({a[0]}, {a[1]})"
    return f"(np.asarray({a[0]}).astype(np.uint64) | (np.asarray({a[1]}).astype(np.uint64) << np.uint64(32)))"


def _load(low, op, a):
    return (
        f"R.load({op.attrs['space']!r}, {low.ins(op.instr)}, {a[0]}, {a[1]}, "
        f"{op.attrs['nbytes']}, {op.attrs['words']}, w, N, {int(op.out.uniform)})"
    )


def _atomic(low, op, a):
    return (
        f"R.atomic({op.attrs['space']!r}, {low.ins(op.instr)}, {op.attrs['op']!r}, "
        f"{op.attrs['bits']}, {a[0]}, {a[1]}, {a[2]}, "
        f"{a[3] if len(a) > 3 else 'None'}, w, N)"
    )


# op name -> (lowering, op, argument names) -> the op's NumPy expression: every value op the
# NumPy blocks lower as an expression (ir/ops.py), and the passes' ``lanes``
EXPR: dict[str, Callable[[ExprLowering, Op, list[str]], str]] = {
    **{n: _bin(s) for n, s in _BIN.items()},
    **{n: _fbin(_BIN[n]) for n in ("fadd", "fsub", "fmul", "fdiv")},
    **{n: _un(s) for n, s in _UN.items()},
    "lane_id": lambda low, op, a: "R.LANE",
    "min": lambda low, op, a: f"np.minimum({a[0]}, {a[1]})",
    "max": lambda low, op, a: f"np.maximum({a[0]}, {a[1]})",
    "fmin": lambda low, op, a: f"H.fmin({a[0]}, {a[1]})",
    "fmax": lambda low, op, a: f"H.fmax({a[0]}, {a[1]})",
    "mulhi": lambda low, op, a: f"H.mulhi({a[0]}, {a[1]}, {op.type.startswith('i')})",
    "clz": lambda low, op, a: f"H.clz({a[0]}, {BITS[op.type]})",
    "ctz": lambda low, op, a: f"H.ctz({a[0]}, {BITS[op.type]})",
    "fma": lambda low, op, a: f"H.fma({a[0]}, {a[1]}, {a[2]})",
    "trig_preop": lambda low, op, a: f"H.trig_preop({a[0]}, {a[1]})",
    "fma_to": lambda low, op, a: f"H.fma({a[0]}, {a[1]}, {a[2]}, {DT[op.type]})",
    "ldexp": lambda low, op, a: f"H.ldexp({a[0]}, {a[1]})",
    "fnan": lambda low, op, a: f"H.fnan({', '.join(a)})",
    "isclass": lambda low, op, a: f"H.isclass({a[0]}, {a[1]})",
    "fin": lambda low, op, a: f"H.fin({a[0]}, mode)",
    "fout": lambda low, op, a: f"H.fout({a[0]}, mode)",
    "cmp": lambda low, op, a: _CMP[op.attrs["cond"]].format(a[0], a[1]),
    "select": lambda low, op, a: f"{'G.sel' if _per_lane(op) else 'np.where'}({a[0]}, {a[1]}, {a[2]})",
    "cvt": _cvt,
    "bitcast": lambda low, op, a: f"np.asarray({a[0]}).view({DT[op.attrs['to']]})",
    "pack64": _pack64,
    "lo32": lambda low, op, a: f"np.asarray({a[0]}).astype(np.uint32)",
    "hi32": lambda low, op, a: f"(np.asarray({a[0]}) >> np.uint64(32)).astype(np.uint32)",
    "ballot": lambda low, op, a: f"H.ballot({a[0]}, N, {low.L})",
    # a pass op (ir/passes PASS_OPS): a value broadcast to all lanes
    "lanes": lambda low, op, a: f"G.lanes({a[0]}, N, {low.L})",
    "maskbit": lambda low, op, a: f"(((np.asarray({a[0]}, np.uint64) >> R.LANE64) & np.uint64(1)) != 0)",
    "readlane": lambda low, op, a: f"H.readlane({a[0]}, {a[1]}, N, {low.L})",
    "shuffle": lambda low, op, a: f"H.shuffle({a[0]}, {a[1]}, N, {low.L})",
    "permute": lambda low, op, a: f"H.permute({a[0]}, {a[1]}, {a[2]}, N, {low.L})",
    "load": _load,
    "word": lambda low, op, a: f"{a[0]}[..., {op.attrs['k']}]",
    "atomic": _atomic,
}


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
            s = keep.shape  # the result's shape when every operand is s or scalar
            if all(np.shape(x) in (s, ()) for x in (c, a, b)):
                return keep
        return np.where(c, a, b)


_LITTLE = sys.byteorder == "little"
