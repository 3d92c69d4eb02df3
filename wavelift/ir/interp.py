"""Reference semantics of the IR's value ops on known operands: ``evaluate`` computes one op
over NumPy values, with exactly the bits the NumPy backend's generated code gives (the same
NumPy operations and the same numerics.py functions, called directly: no source text is built
or run).  The passes fold constants with it (passes/fold.py) and the CUDA backend resolves its
preloads with it (backends/cuda/preload.py).

Operands are filled into [1, 32] arrays, as one wave's lanes: NumPy's scalar loops (0-d values,
or the tail of an array past its SIMD width) treat signaling NaNs differently from its SIMD
loops (np.fmin/np.fmax return the NaN, casts give other integers), so a 0-d evaluation could
give other bits than the module.  An op that needs the wave (lane ids, other lanes, memory) or
whose evaluation fails does not evaluate: ``evaluate`` gives None and the op is left as it is.
tests/ir/test_interp.py checks every op against the NumPy backend's own generated expression.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from . import numerics as H
from .numerics import DT
from .ops import BITS

LANES = 32  # operands are one wave32's lanes


def const_value(t: str, value: Any) -> Any:
    """The NumPy scalar of IR type ``t`` a ``const`` op of attribute ``value`` is (integers wrap
    to the type's width)."""
    dt = DT[t]
    if t.startswith("f"):
        return dt(value)
    if t == "b1":
        return np.bool_(value)
    return np.array(int(value) & ((1 << BITS[t]) - 1), dtype=np.uint64).astype(dt)[()]


def _bin(f: Callable) -> Callable:
    return lambda a, t, attrs: f(a[0], a[1])


def _fbin(f: Callable) -> Callable:
    def ev(a, t, attrs):
        r = f(a[0], a[1])
        if t == "f16":
            return H.nan_first(r, a[0])  # NumPy's half loops pick either NaN
        return r

    return ev


def _un(f: Callable) -> Callable:
    return lambda a, t, attrs: f(a[0])


def _cvt(a, t, attrs):
    to = attrs["to"]
    if t.startswith("f") and not to.startswith("f"):
        return H.cvt(a[0], t, to)
    return np.asarray(a[0]).astype(DT[to])


def _pack64(a, t, attrs):
    return np.asarray(a[0]).astype(np.uint64) | (np.asarray(a[1]).astype(np.uint64) << np.uint64(32))


def _zeros(a):
    return np.zeros(np.broadcast(a[0], a[1]).shape, bool)


def _ones(a):
    return np.ones(np.broadcast(a[0], a[1]).shape, bool)


_CMP: dict[str, Callable] = {
    "lt": lambda a: a[0] < a[1],
    "le": lambda a: a[0] <= a[1],
    "gt": lambda a: a[0] > a[1],
    "ge": lambda a: a[0] >= a[1],
    "eq": lambda a: a[0] == a[1],
    "ne": lambda a: a[0] != a[1],
    "lg": lambda a: (a[0] < a[1]) | (a[0] > a[1]),
    "o": lambda a: ~(np.isnan(a[0]) | np.isnan(a[1])),
    "u": lambda a: np.isnan(a[0]) | np.isnan(a[1]),
    "nge": lambda a: ~(a[0] >= a[1]),
    "nlg": lambda a: ~((a[0] < a[1]) | (a[0] > a[1])),
    "ngt": lambda a: ~(a[0] > a[1]),
    "nle": lambda a: ~(a[0] <= a[1]),
    "neq": lambda a: ~(a[0] == a[1]),
    "nlt": lambda a: ~(a[0] < a[1]),
    "f": _zeros,
    "tru": _ones,
}

# op name -> f(operands, op type, attrs): the NumPy backend's expression of the op (expr.py),
# as calls.  Ops missing here do not evaluate.
_EVAL: dict[str, Callable] = {
    "add": _bin(operator.add),
    "sub": _bin(operator.sub),
    "mul": _bin(operator.mul),
    "and": _bin(operator.and_),
    "or": _bin(operator.or_),
    "xor": _bin(operator.xor),
    "shl": _bin(operator.lshift),
    "shr": _bin(operator.rshift),
    "sar": _bin(operator.rshift),
    "fadd": _fbin(operator.add),
    "fsub": _fbin(operator.sub),
    "fmul": _fbin(operator.mul),
    "fdiv": _fbin(operator.truediv),
    "not": _un(operator.invert),
    "neg": _un(operator.neg),
    "abs": _un(np.abs),
    "fneg": _un(operator.neg),
    "fabs": _un(np.abs),
    "floor": _un(np.floor),
    "ceil": _un(np.ceil),
    "trunc": _un(np.trunc),
    "rndne": _un(np.rint),
    "fract": _un(H.fract),
    "sqrt": _un(H.sqrt),
    "rcp": _un(H.rcp),
    "rsq": _un(H.rsq),
    "exp2": _un(H.exp2),
    "log2": _un(H.log2),
    "sin": _un(H.sin),
    "cos": _un(H.cos),
    "frexp_mant": _un(H.frexp_mant),
    "frexp_exp": _un(H.frexp_exp),
    "bitrev": _un(H.bitrev),
    "popcount": _un(H.popcount),
    "min": lambda a, t, attrs: np.minimum(a[0], a[1]),
    "max": lambda a, t, attrs: np.maximum(a[0], a[1]),
    "fmin": lambda a, t, attrs: H.fmin(a[0], a[1]),
    "fmax": lambda a, t, attrs: H.fmax(a[0], a[1]),
    "mulhi": lambda a, t, attrs: H.mulhi(a[0], a[1], t.startswith("i")),
    "clz": lambda a, t, attrs: H.clz(a[0], BITS[t]),
    "ctz": lambda a, t, attrs: H.ctz(a[0], BITS[t]),
    "fma": lambda a, t, attrs: H.fma(a[0], a[1], a[2]),
    "fma_to": lambda a, t, attrs: H.fma(a[0], a[1], a[2], DT[t]),
    "trig_preop": lambda a, t, attrs: H.trig_preop(a[0], a[1]),
    "ldexp": lambda a, t, attrs: H.ldexp(a[0], a[1]),
    "fnan": lambda a, t, attrs: H.fnan(*a),
    "isclass": lambda a, t, attrs: H.isclass(a[0], a[1]),
    "cmp": lambda a, t, attrs: _CMP[attrs["cond"]](a),
    "select": lambda a, t, attrs: np.where(a[0], a[1], a[2]),
    "cvt": _cvt,
    "bitcast": lambda a, t, attrs: np.asarray(a[0]).view(DT[attrs["to"]]),
    "pack64": _pack64,
    "lo32": lambda a, t, attrs: np.asarray(a[0]).astype(np.uint32),
    "hi32": lambda a, t, attrs: (np.asarray(a[0]) >> np.uint64(32)).astype(np.uint32),
}
# fin/fout need MODE (evaluate's ``mode``)
_MODE_OPS: dict[str, Callable] = {"fin": H.fin, "fout": H.fout}

EVALUATES = frozenset(_EVAL) | frozenset(_MODE_OPS)
"""The ops ``evaluate`` can compute (on some operands; fin/fout only given MODE)."""


def evaluate(name: str, t: str, attrs: dict, values, mode: int | None = None) -> np.ndarray | None:
    """Op ``name`` of type ``t`` over known operand ``values`` (NumPy scalars) as the NumPy
    backend's generated code computes it over a wave's lanes: the 0-d result, or None where it
    does not evaluate (an op that needs the wave, or whose evaluation fails)."""
    f = _EVAL.get(name)
    if f is None:
        g = _MODE_OPS.get(name)
        if g is None or mode is None:
            return None
        f = lambda a, t, attrs: g(a[0], mode)  # noqa: E731
    a = [np.full((1, LANES), v) for v in values]
    try:
        with np.errstate(all="ignore"):
            r = np.asarray(f(a, t, attrs))
    except Exception:  # noqa: BLE001 - not evaluable (as the module would fail on it)
        return None
    if r.ndim != 2 or r.shape[0] != 1 or r.shape[1] not in (1, LANES):
        return None
    return np.asarray(r[0, 0])  # (every lane had the same operands)


def evaluate_op(op, values, mode: int | None = None) -> np.ndarray | None:
    """``evaluate`` for IR op ``op`` (a program.Op)."""
    return evaluate(op.name, op.type, op.attrs, values, mode)
