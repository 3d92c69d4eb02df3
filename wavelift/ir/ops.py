"""THE op table of the IR: one row per op, every fact of an op on its row (after Mesa ACO's
aco_opcodes.py).  frontend/ir.py's Builder emits only these ops; every backend declares, per
op, that it lowers it or why it does not (backends/base.py), and tests/ir/test_ops.py walks
this table against every registered backend.  Adding an op is one row here plus its lowerings.

Types (TYPES): b1 (a lane's truth value), u8..i64, f16/f32/f64.  An op's *type* is its result
type unless the row says otherwise (``result``): cmp gives b1, cvt/bitcast the type in their
``to`` attribute, and a few ops name a fixed type.  Integer ops wrap; shift amounts are already
masked by the frontend (backends may assume ``0 <= amount < width``).  Float ops round to
nearest even and are IEEE (denormal handling is explicit: ``fin``/``fout`` apply MODE's flush
rules; see docs/float-semantics.md).  NaN results of the float ops are as RDNA gives them under
MODE.IEEE (docs/float-semantics.md "NaN results": the first NaN operand quieted, else the
default NaN, sign set); the frontend applies ``fnan`` where MODE.IEEE is clear.

Uniformity of a result (``uniform``): OPERANDS -- uniform when every operand is (one value per
wave), else per lane; UNIFORM / LANE -- always one or the other; GIVEN -- the frontend says
(a load is uniform from s_load, per lane from a vector load).

Memory spaces (attribute ``space``): "global" (64-bit guest address, checked against windows),
"lds" (32-bit byte address in the workgroup's LDS), "scratch" (32-bit per-lane private byte
offset; held by the scratch module).
"""

from __future__ import annotations

from typing import Any, NamedTuple

TYPES = ("b1", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f16", "f32", "f64")
BITS = {
    "b1": 1,
    "u8": 8,
    "i8": 8,
    "u16": 16,
    "i16": 16,
    "u32": 32,
    "i32": 32,
    "u64": 64,
    "i64": 64,
    "f16": 16,
    "f32": 32,
    "f64": 64,
}
FLOAT = ("f16", "f32", "f64")
INTS = ("u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64")
# cmp conditions: the float ones of v_cmp_* (the n* forms are true on unordered operands); the
# integer compares use f lt eq le gt ne ge tru
CONDS = (
    "f",
    "lt",
    "eq",
    "le",
    "gt",
    "lg",
    "ne",
    "ge",
    "o",
    "u",
    "nge",
    "nlg",
    "ngt",
    "nle",
    "neq",
    "nlt",
    "tru",
)

VALUE, EFFECT = "value", "effect"  # kind
OPERANDS, UNIFORM, LANE, GIVEN = "operands", "uniform", "lane", "given"  # result uniformity


class OpRow(NamedTuple):
    name: str
    kind: str  # VALUE: defines a Value; EFFECT: none (Block.ops all the same)
    uniform: str | None  # result uniformity (None for an EFFECT op)
    arity: tuple[int, int]  # fewest, most operands
    attrs: tuple[str, ...]  # attributes every instance has
    optional: tuple[str, ...]  # attributes an instance may have
    result: str  # "op": the op's type; "to": attrs["to"]; else that type
    pure: bool  # no register, memory, MODE or other lane read: an unused one
    # may be dropped and equal ones shared
    doc: str
    example: tuple  # (op type, operand types, attrs): a valid instance (tests)


def _row(name, kind, uniform, arity, doc, example, attrs=(), optional=(), result="op", pure=True) -> OpRow:
    return OpRow(name, kind, uniform, arity, attrs, optional, result, pure, doc, example)


def _v(name, arity, doc, example, uniform=OPERANDS, **kw) -> OpRow:
    return _row(name, VALUE, uniform, (arity, arity) if isinstance(arity, int) else arity, doc, example, **kw)


def _same(names: str, arity: int, t: str, doc: str, **kw) -> list[OpRow]:
    """Rows of ops whose operands all have the op's type (t: the example's type)."""
    return [_v(n, arity, doc, (t, (t,) * arity, {}), **kw) for n in names.split()]


_U, _S = "u32", "f32"
_ROWS: list[OpRow] = [
    # -- values from nowhere and from state
    _v(
        "const",
        0,
        "a constant (attrs value)",
        (_U, (), {"value": 1}),
        UNIFORM,
        attrs=("value",),
        optional=("value_np",),
    ),
    _v(
        "sget",
        0,
        "the SGPR file word ``reg`` (s0..s105, vcc 106/107, m0 124, exec 126/127, SCC 128, MODE 129)",
        (_U, (), {"reg": 0}),
        UNIFORM,
        attrs=("reg",),
        result="u32",
        pure=False,
    ),
    _v(
        "vget",
        0,
        "the VGPR ``reg`` of each lane",
        (_U, (), {"reg": 0}),
        LANE,
        attrs=("reg",),
        result="u32",
        pure=False,
    ),
    _v("lane_id", 0, "the lane's index in its wave", (_U, (), {}), LANE, result="u32"),
    _v("exec", 0, "the lane's bit of EXEC", ("b1", (), {}), LANE, result="b1", pure=False),
    # -- integer
    *_same("add sub mul and or xor min max", 2, _U, "integer arithmetic and bitwise (wraps)"),
    *_same("mulhi", 2, _U, "high half of the double-width product (signed for i*)"),
    *_same("shl shr sar", 2, _U, "shift left, logical right, arithmetic right (amount < width)"),
    *_same("not neg abs", 1, _U, "bitwise not, negation, absolute value"),
    *_same("clz ctz", 1, _U, "leading / trailing zeros (of 0: -1, as s_ff1 / v_ffbh give)"),
    *_same("popcount bitrev", 1, _U, "set bits; bits reversed"),
    # -- float
    *_same("fadd fsub fmul fdiv fmin fmax", 2, _S, "float arithmetic, IEEE min / max"),
    *_same("fma", 3, _S, "a*b+c rounded once"),
    *_same(
        "fneg fabs floor ceil trunc rndne fract sqrt rcp rsq exp2 log2",
        1,
        _S,
        "float unary ops (rndne: round to nearest even)",
    ),
    *_same("sin cos", 1, _S, "sine / cosine of an argument in revolutions"),
    _v("ldexp", 2, "x * 2**e (i32 e)", (_S, (_S, "i32"), {})),
    *_same("frexp_mant", 1, _S, "frexp's mantissa"),
    _v("frexp_exp", 1, "frexp's exponent (op type i32, operand the float)", ("i32", (_S,), {})),
    _v("isclass", 2, "v_cmp_class: the float's class bit in the u32 mask (op type u32)", (_U, (_S, _U), {})),
    *_same("fin", 1, _S, "denormal flush of an input per MODE", pure=False),
    *_same("fout", 1, _S, "denormal flush of a result per MODE", pure=False),
    _v(
        "fma_to",
        3,
        "a*b+c of one float type rounded once to the op's float type (v_fma_mix*: "
        "f32 operands, f16 result; no double rounding)",
        ("f16", (_S, _S, _S), {}),
    ),
    _v(
        "trig_preop",
        2,
        "V_TRIG_PREOP_F64 (f64 x, u32 segment): 53-bit window of 2/pi, scaled",
        ("f64", ("f64", _U), {}),
    ),
    _v(
        "fnan",
        (2, 4),
        "(r, s0[, s1[, s2]]) of one float type: r, except a NaN r whose bits are "
        "those of a NaN source quieted: that source as it is (the first such)",
        (_S, (_S, _S), {}),
    ),
    # -- compare, select, conversions
    _v(
        "cmp",
        2,
        "compare by attrs cond (CONDS); operand type = op type; result b1",
        (_U, (_U, _U), {"cond": "lt"}),
        attrs=("cond",),
        result="b1",
    ),
    _v("select", 3, "(b1 c, a, b): a where c, else b", (_U, ("b1", _U, _U), {})),
    _v(
        "cvt",
        1,
        "numeric conversion to attrs to (float->int saturates, NaN->0; int narrowing "
        "wraps; float->float rounds to nearest even)",
        (_U, (_U,), {"to": "u64"}),
        attrs=("to",),
        result="to",
    ),
    _v(
        "bitcast",
        1,
        "the same bits as attrs to (same width)",
        (_U, (_U,), {"to": "f32"}),
        attrs=("to",),
        result="to",
    ),
    _v("pack64", 2, "(lo u32, hi u32) -> u64", ("u64", (_U, _U), {}), result="u64"),
    _v("lo32", 1, "low word of a u64", (_U, ("u64",), {}), result="u32"),
    _v("hi32", 1, "high word of a u64", (_U, ("u64",), {}), result="u32"),
    # -- across lanes
    _v(
        "ballot",
        1,
        "(b1 per lane) -> u64 uniform: bit L set where lane L is true",
        ("u64", ("b1",), {}),
        UNIFORM,
        result="u64",
        pure=False,
    ),
    _v(
        "maskbit",
        1,
        "(u64 uniform) -> b1 per lane: bit L of the mask",
        ("b1", ("u64",), {}),
        LANE,
        result="b1",
    ),
    _v(
        "readlane",
        2,
        "(per-lane u32, uniform u32 lane) -> uniform u32",
        (_U, (_U, _U), {}),
        UNIFORM,
        result="u32",
        pure=False,
    ),
    _v(
        "shuffle",
        2,
        "(per-lane u32, per-lane u32 source lane) -> per-lane u32 (the lane index taken mod the wave size)",
        (_U, (_U, _U), {}),
        LANE,
        result="u32",
        pure=False,
    ),
    _v(
        "permute",
        3,
        "(per-lane u32, per-lane u32 dest lane, b1 active) -> per-lane u32 "
        "(unwritten lanes 0; the highest writing lane wins)",
        (_U, (_U, _U, "b1"), {}),
        LANE,
        result="u32",
        pure=False,
    ),
    # -- memory
    _v(
        "load",
        2,
        "(addr, b1 mask) attrs space, nbytes, words -> ``words`` u32 words (``word``)",
        (_U, ("u64", "b1"), {"space": "global", "nbytes": 4, "words": 1}),
        GIVEN,
        attrs=("space", "nbytes", "words"),
        result="u32",
        pure=False,
    ),
    _v("word", 1, "word attrs k of a load's result", (_U, (_U,), {"k": 0}), attrs=("k",), result="u32"),
    _v(
        "atomic",
        (3, 4),
        "(addr, b1 mask, data[, cmp]) attrs space, op, bits -> the old value (u32 or u64)",
        (_U, ("u64", "b1", _U), {"space": "global", "op": "add", "bits": 32}),
        GIVEN,
        attrs=("space", "op", "bits"),
        pure=False,
    ),
    # -- effects
    _row(
        "sset",
        EFFECT,
        None,
        (1, 1),
        "SGPR ``reg`` = a uniform u32",
        ("u32", ("u32",), {"reg": 0}),
        attrs=("reg",),
        pure=False,
    ),
    _row(
        "vset",
        EFFECT,
        None,
        (2, 2),
        "(u32 value, b1 mask): VGPR ``reg`` of the lanes whose "
        "mask is true (EXEC, or EXEC & lane==n for v_writelane); the others keep theirs",
        ("u32", ("u32", "b1"), {"reg": 0}),
        attrs=("reg",),
        pure=False,
    ),
    _row(
        "store",
        EFFECT,
        None,
        (3, 6),
        "(addr, b1 mask, *u32 words) attrs space, nbytes",
        ("u32", ("u64", "b1", "u32"), {"space": "global", "nbytes": 4}),
        attrs=("space", "nbytes"),
        pure=False,
    ),
    _row(
        "refuse_if",
        EFFECT,
        None,
        (1, 1),
        "(b1 cond) attrs why[, code]: refuses the dispatch "
        "(code, default program.unsupported_instruction, naming the instruction) when cond "
        "holds for any lane -- for a form translated only where it can be exact",
        ("b1", ("b1",), {"why": "a test"}),
        attrs=("why",),
        optional=("code",),
        pure=False,
    ),
]

OPS: dict[str, OpRow] = {r.name: r for r in _ROWS}
VALUE_OPS = frozenset(r.name for r in _ROWS if r.kind == VALUE)
EFFECT_OPS = frozenset(r.name for r in _ROWS if r.kind == EFFECT)
PURE_OPS = frozenset(r.name for r in _ROWS if r.pure)
# ops never dropped, even when nothing reads their result: effects, and the memory ops whose
# access itself matters (an escape is a refusal; an atomic writes)
KEEP_OPS = EFFECT_OPS | {"load", "atomic"}

# Terminators (Block.term, a tuple: the name, then its operands) -> doc.
TERMINATORS: dict[str, str] = {
    "jump": "(jump, block)",
    "branch": "(branch, b1 value, taken block, fallthrough block)",
    "end": "(end,): the wave ends",
    "barrier": "(barrier, next block): s_barrier; the wave continues at next",
    "setpc": "(setpc, u64 value): continue at that guest address",
    "mode": "(mode, next block): after an instruction that changes MODE, so that waves "
    "regroup by their float mode",
}


def row(name: str) -> OpRow:
    """The row of op ``name`` (KeyError names it)."""
    return OPS[name]


def result_type(name: str, type: str, attrs: dict[str, Any]) -> str:
    """The type of the Value an op of ``type`` defines."""
    r = OPS[name].result
    return type if r == "op" else attrs["to"] if r == "to" else r
