"""The C-family expression lowering: a pure IR value op as one C expression over its operands.

The tables and ``ValueLowering.value_expr`` are what the CUDA kernel (backends/cuda/codegen.py)
and the NumPy backend's native tier (backends/native/) both lower value ops by; the
expressions call the semantics of cfamily/prelude.h and name the IR's types as C types
(cfamily/types.h).  Generated text holds numbers and names made from numbers only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir.numerics import IR_TYPE
from ...ir.ops import BITS

UN = {
    "u8": "u8",
    "i8": "u8",
    "u16": "u16",
    "i16": "u16",
    "u32": "u32",
    "i32": "u32",
    "u64": "u64",
    "i64": "u64",
    "b1": "u32",
}
INT_LIMITS = {
    "u8": (0, 255),
    "i8": (-128, 127),
    "u16": (0, 65535),
    "i16": (-32768, 32767),
    "u32": (0, 2**32 - 1),
    "i32": (-(2**31), 2**31 - 1),
}
CMP = {
    "lt": "({0} < {1})",
    "le": "({0} <= {1})",
    "gt": "({0} > {1})",
    "ge": "({0} >= {1})",
    "eq": "({0} == {1})",
    "ne": "({0} != {1})",
    "lg": "(({0} < {1}) || ({0} > {1}))",
    "o": "!(({0} != {0}) || ({1} != {1}))",
    "u": "(({0} != {0}) || ({1} != {1}))",
    "nge": "!({0} >= {1})",
    "nlg": "!(({0} < {1}) || ({0} > {1}))",
    "ngt": "!({0} > {1})",
    "nle": "!({0} <= {1})",
    "neq": "!({0} == {1})",
    "nlt": "!({0} < {1})",
    "f": "false",
    "tru": "true",
}
FLOAT_FN = {
    "fadd",
    "fsub",
    "fmul",
    "fdiv",
    "fma",
    "fmin",
    "fmax",
    "fneg",
    "fabs",
    "floor",
    "ceil",
    "trunc",
    "rndne",
    "fract",
    "sqrt",
    "rcp",
    "rsq",
    "exp2",
    "log2",
    "sin",
    "cos",
    "frexp_mant",
    "frexp_exp",
    "fnan",
}
I32_RESULT = {"popcount", "clz", "ctz", "frexp_exp"}  # NumPy gives int32 whatever the op type


class Unsupported(Exception):
    """An IR construct the C-family lowering does not lower (the target refuses it or leaves it
    to another path, never miscomputes it)."""


def is_float(t: str) -> bool:
    return t in ("f16", "f32", "f64")


def wide_unsigned(t: str) -> str:
    """The unsigned C type integer arithmetic on ``t`` wraps in (u32 for 32 bits and less)."""
    return "u64" if BITS[t] == 64 else "u32"


def result_ctype(op) -> str:
    """The C type of value op ``op``'s expression (NumPy gives int32 for I32_RESULT ops)."""
    n = op.name
    if n in ("cvt", "bitcast"):
        return op.attrs["to"]
    if n in I32_RESULT:
        return "i32"
    if n == "cmp":
        return "b1"
    return op.out.type


def const_literal(t: str, value) -> str:
    """A constant of IR type ``t`` as a C literal of that type (floats by their bits)."""
    if t == "b1":
        return "true" if value else "false"
    if t == "f32":
        return f"__uint_as_float({int(np.float32(value).view(np.uint32)):#x}u)"
    if t == "f64":
        return f"__longlong_as_double((i64){int(np.float64(value).view(np.uint64)):#x}ull)"
    if t == "f16":
        return f"f16{{(u16){int(np.float16(value).view(np.uint16)):#x}u}}"
    v = int(value) & ((1 << BITS[t]) - 1)
    return f"(({t}){v:#x}ull)"


_F32_LITERAL = re.compile(r"__uint_as_float\((0x[0-9a-f]+)u\)")


def minmax_const(n: str, a) -> str | None:
    """f32 fmin/fmax with a constant operand c (const_literal's form), when a plain compare is
    exact: c is not NaN, and not the zero whose sign the tie-break could flip (fmax with -0, fmin
    with +0).  Then (x > c ? x : c) / (x < c ? x : c) gives wl_fmax / wl_fmin's bits for every x,
    a NaN x included (-> c); on x86 that is one vmaxps/vminps.  None: use wl_fmin/wl_fmax."""
    for i in (0, 1):
        m = _F32_LITERAL.fullmatch(a[i])
        if m is None:
            continue
        bits = int(m.group(1), 16)
        if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
            return None  # NaN
        if bits == (0x80000000 if n == "fmax" else 0):
            return None  # the zero the tie-break decides
        x, c = a[1 - i], a[i]
        return f"(({x}) {'>' if n == 'fmax' else '<'} ({c}) ? ({x}) : ({c}))"
    return None


class ValueLowering:
    """``value_expr`` of a target; ``uses_trig_preop``: a lowered op needs trig_preop_source."""

    def __init__(self):
        self.uses_trig_preop = False

    def value_expr(self, op, a: list, at: list) -> str:
        """The C++ expression of a pure value op (VALUE_EXPR) over argument expressions ``a`` of
        C types ``at``: one lane's semantics (prelude.h), used by the CUDA kernel and the native
        tier alike, and checked bit for bit against the NumPy backend's lowering compiled for
        the host (tests/cuda/test_cuda_ops_host.py).  Per-lane names it may use: ``lane`` (the
        lane index, maskbit) and ``mode`` (the MODE register, fin/fout).  An op of no entry
        raises Unsupported naming it (the targets' own tables lower the other ops)."""
        f = VALUE.get(op.name)
        if f is None:
            raise Unsupported(op.name)
        return f(self, op, a, at)

    # ------------------------------------------------------------------------ conversions
    def cvt(self, frm: str, to: str, a: str) -> str:
        if frm == to:
            return a
        if to == "b1":
            return f"(({a}) != 0)" if not is_float(frm) else f"(wl_f({a}) != 0)"
        if frm == "b1":
            src = f"(({a}) ? 1u : 0u)"
            if to == "f16":
                return f"wl_f2h((f32){src})"
            return f"(({to}){src})"
        if not is_float(frm) and not is_float(to):
            return f"(({to})({a}))"
        if not is_float(frm):
            if to == "f16":
                return f"wl_f2h((f32)({a}))"
            return f"(({to})({a}))"
        if not is_float(to):
            if frm != "f64" and to not in ("u64", "i64"):
                lo, hi = INT_LIMITS[to]
                return f"wl_f2i<{to}>(wl_f({a}), {float(lo)!r}f, {float(hi + 1)!r}f, ({to}){hi})"
            x = f"(f64)wl_f({a})"
            if to == "u64":
                return f"wl_f2u64({x})"
            if to == "i64":
                return f"wl_f2i64({x})"
            lo, hi = INT_LIMITS[to]
            return f"wl_f2i<{to}>({x}, {float(lo)!r}, {float(hi)!r})"
        if to == "f16":
            return f"wl_f2h({a})" if frm == "f32" else f"wl_d2h({a})"
        if frm == "f16":
            return f"wl_h2f({a})" if to == "f32" else f"wl_h2d({a})"
        return f"wl_d2f({a})" if to == "f32" else f"wl_f2d({a})"


# ---- the value ops' expressions: (lowering, op, argument expressions, their C types) -> C ----


def _const(low, op, a, at):
    if "value_np" in op.attrs:  # a constant the IR's passes made or kept: its NumPy value
        v = op.attrs["value_np"]
        t = IR_TYPE.get(np.asarray(v).dtype.type, op.type)
        # a float as it is: .item() makes an f32/f16 a Python float, which quiets a signaling
        # NaN (0x7f800123 became 0x7fc00123)
        return const_literal(t, v if t in ("f16", "f32", "f64") else v.item())
    return const_literal(op.type, op.attrs["value"])


def _arith(sym: str):
    def e(low, op, a, at):
        t = op.type
        if is_float(t) or t == "b1":
            raise Unsupported(f"{op.name}.{t}")
        u = wide_unsigned(t)
        return f"(({t})(({u})({t})({a[0]}) {sym} ({u})({t})({a[1]})))"

    return e


def _bitwise(sym: str):
    def e(low, op, a, at):
        t = op.type
        if t == "b1":
            return f"((b1)(({a[0]}) {sym} ({a[1]})))"
        return f"(({t})(({t})({a[0]}) {sym} ({t})({a[1]})))"

    return e


def _not(low, op, a, at):
    t = op.type
    return f"(!({a[0]}))" if t == "b1" else f"(({t})~({wide_unsigned(t)})({t})({a[0]}))"


def _neg(low, op, a, at):
    t = op.type
    u = wide_unsigned(t)
    return f"(({t})(({u})0 - ({u})({t})({a[0]})))"


def _abs(low, op, a, at):
    t = op.type
    if t.startswith("i"):
        u = wide_unsigned(t)
        return f"((({t})({a[0]}) < 0) ? ({t})(({u})0 - ({u})({t})({a[0]})) : ({t})({a[0]}))"
    return f"(({t})({a[0]}))"


def _minmax(c: str):
    def e(low, op, a, at):
        t = op.type
        if is_float(t):
            raise Unsupported(f"{op.name}.{t}")
        return f"((({t})({a[0]}) {c} ({t})({a[1]})) ? ({t})({a[0]}) : ({t})({a[1]}))"

    return e


def _shl(low, op, a, at):
    t = op.type
    return f"(({t})(({wide_unsigned(t)})({t})({a[0]}) << (u32)({a[1]})))"


def _shr(low, op, a, at):
    t = op.type
    return f"(({t})(({t})({a[0]}) >> (u32)({a[1]})))"


def _mulhi(low, op, a, at):
    t = op.type
    hi = {
        "i32": f"((i32)(((i64)(i32)({a[0]}) * (i64)(i32)({a[1]})) >> 32))",
        "u32": f"__umulhi((u32)({a[0]}), (u32)({a[1]}))",
        "i64": f"__mul64hi((i64)({a[0]}), (i64)({a[1]}))",
        "u64": f"__umul64hi((u64)({a[0]}), (u64)({a[1]}))",
    }.get(t)
    if hi is None:
        raise Unsupported(f"mulhi.{t}")
    return hi


def _clz(low, op, a, at):
    t = op.type
    if BITS[t] == 64:
        return f"wl_clz64((u64)({a[0]}))"
    return f"wl_clz32((u32)({UN[t]})({a[0]}), {BITS[t]}u)"


def _ctz(low, op, a, at):
    t = op.type
    return f"wl_ctz64((u64)({a[0]}))" if BITS[t] == 64 else f"wl_ctz32((u32)({UN[t]})({a[0]}))"


def _popcount(low, op, a, at):
    t = op.type
    if BITS[t] == 64:
        return f"((i32)__popcll((u64)({a[0]})))"
    return f"((i32)__popc((u32)({UN[t]})({a[0]})))"


def _bitrev(low, op, a, at):
    t = op.type
    return {
        64: f"(({t})__brevll((u64)({a[0]})))",
        32: f"(({t})__brev((u32)({a[0]})))",
        16: f"(({t})(__brev((u32)(u16)({a[0]})) >> 16))",
        8: f"(({t})(__brev((u32)(u8)({a[0]})) >> 24))",
    }[BITS[t]]


def _float_fn(low, op, a, at):
    return f"wl_{op.name}({', '.join(a)})"


def _fminmax(low, op, a, at):
    return minmax_const(op.name, a) or _float_fn(low, op, a, at)


def _fma_to(low, op, a, at):
    t, frm = op.type, at[0]
    if not is_float(t) or any(x != frm for x in at):
        raise Unsupported(f"fma_to {at}->{t}")
    if frm == "f64":
        if t != "f64":
            raise Unsupported("fma_to from f64 operands")
        return f"wl_fma({a[0]}, {a[1]}, {a[2]})"
    # f64 product exact, rounded to odd, then one rounding (helpers.fma)
    return f"wl_to_{t}(wl_fma_odd(wl_fwide({a[0]}), wl_fwide({a[1]}), wl_fwide({a[2]})))"


def _trig_preop(low, op, a, at):
    if at[0] != "f64":
        raise Unsupported(f"trig_preop of {at[0]}")
    low.uses_trig_preop = True
    return f"wl_trig_preop({a[0]}, (u32)({a[1]}))"


def _flush(low, op, a, at):
    return f"wl_{op.name}({a[0]}, mode)"


def _cmp(low, op, a, at):
    t = op.type
    if is_float(t):
        x, y = f"wl_f({a[0]})", f"wl_f({a[1]})"
    else:
        x, y = f"({t})({a[0]})", f"({t})({a[1]})"
    return CMP[op.attrs["cond"]].format(x, y)


def _select(low, op, a, at):
    t = op.type
    if is_float(t):
        return f"(({a[0]}) ? ({a[1]}) : ({a[2]}))"
    return f"(({a[0]}) ? ({t})({a[1]}) : ({t})({a[2]}))"


def _bitcast(low, op, a, at):
    to = op.attrs["to"]
    if BITS[at[0]] == BITS[to]:
        return f"wl_bc<{to}>({a[0]})"
    if not is_float(at[0]) and not is_float(to):
        return f"(({to})({a[0]}))"
    raise Unsupported(f"bitcast {at[0]}->{to}")


# op name -> its C expression: every op whose lowering is one expression of its arguments, one
# entry each (the CUDA kernel and the native tier lower the other ops in tables of their own)
VALUE: dict[str, Callable[[ValueLowering, Any, list, list], str]] = {
    **{n: _float_fn for n in sorted(FLOAT_FN)},
    "const": _const,
    "add": _arith("+"),
    "sub": _arith("-"),
    "mul": _arith("*"),
    "and": _bitwise("&"),
    "or": _bitwise("|"),
    "xor": _bitwise("^"),
    "not": _not,
    "neg": _neg,
    "abs": _abs,
    "min": _minmax("<"),
    "max": _minmax(">"),
    "shl": _shl,
    "shr": _shr,
    "sar": _shr,
    "mulhi": _mulhi,
    "clz": _clz,
    "ctz": _ctz,
    "popcount": _popcount,
    "bitrev": _bitrev,
    "fmin": _fminmax,
    "fmax": _fminmax,
    "fma_to": _fma_to,
    "trig_preop": _trig_preop,
    "ldexp": lambda low, op, a, at: f"wl_ldexp({a[0]}, (i64)({a[1]}))",
    "isclass": lambda low, op, a, at: f"wl_isclass({a[0]}, (u32)({a[1]}))",
    "fin": _flush,
    "fout": _flush,
    "cmp": _cmp,
    "select": _select,
    "cvt": lambda low, op, a, at: low.cvt(at[0], op.attrs["to"], a[0]),
    "bitcast": _bitcast,
    "pack64": lambda low, op, a, at: f"((((u64)(u32)({a[1]})) << 32) | (u64)(u32)({a[0]}))",
    "lo32": lambda low, op, a, at: f"((u32)(u64)({a[0]}))",
    "hi32": lambda low, op, a, at: f"((u32)((u64)({a[0]}) >> 32))",
    "maskbit": lambda low, op, a, at: f"(((((u64)({a[0]})) >> lane) & 1ull) != 0ull)",
}
# ops whose lowering is one expression of their arguments (ValueLowering.value_expr)
VALUE_EXPR = frozenset(VALUE)
