"""The IR: a small typed, per-basic-block op list that every backend lowers.

Values
    Every ``Value`` has a type (one of TYPES) and is either *uniform* (one value per wave: scalar
    registers, SCC, M0, EXEC, scalar loads) or *per lane*.  Backends decide shapes (the NumPy backend
    uses ``[waves, 1]`` for uniform values and ``[waves, lanes]`` for per-lane values).

Registers
    Architectural state is 32-bit words: SGPR file ``S`` (index = 9-bit operand code: s0..s105,
    vcc 106/107, m0 124, exec 126/127, plus SCC at ``SCC``) and VGPR file ``V``.  ``sget/sset``
    and ``vget/vset`` read and write one word; wider values are built with ``pack64``/``lo32``/``hi32``.
    ``vset`` writes only the lanes whose mask is true (the frontend passes EXEC, or EXEC & lane==n
    for v_writelane); lanes outside the mask keep their value.

Ops
    The op table, wavelift/ir/ops.py, has one row per op: its operands, attributes, result type,
    result uniformity, purity and a one-line doc.  The Builder below emits only its ops.

Terminators (Block.term; ops.TERMINATORS): ("jump", block), ("branch", cond_value, taken, fallthrough),
("end",), ("barrier", next_block), ("setpc", u64 value), ("mode", next_block) — the last one ends a
block after an instruction that changes MODE so that waves regroup by their float mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..ir import ops
from ..ir.ops import (
    BITS,
    CONDS,
    EFFECT_OPS,
    FLOAT,
    GIVEN,
    OPERANDS,
    OPS,
    UNIFORM,
    VALUE,
)

TYPES, VALUE_OPS = ops.TYPES, ops.VALUE_OPS  # (names the frontends and backends import here)

SCC = 128  # SGPR file index holding SCC (0/1)
MODE_REG = 129  # per-wave MODE register (also the wave group key)
FLAT_SCR_LO, FLAT_SCR_HI = 130, 131  # hwreg 20/21 (s_setreg/s_getreg)
NUM_SREGS = 132
NUM_VGPRS = 256
EXEC_LO, EXEC_HI, VCC_LO, VCC_HI, M0 = 126, 127, 106, 107, 124

# value op name -> (its result's uniformity rule, its result type rule) from ops.py, for the
# Builder's emit (hot: one dict lookup)
# ("" for "op": the op's type, None for "to": attrs["to"])
_EMIT = {
    r.name: (r.uniform, {"op": "", "to": None}.get(r.result, r.result))
    for r in OPS.values()
    if r.kind == VALUE
}


def refusal_of(op: Op) -> tuple[int, str, str]:
    """(instruction, why, refusal code) of a refuse_if op: what every backend reports."""
    return op.instr, op.attrs.get("why", ""), op.attrs.get("code", "program.unsupported_instruction")


def is_float(t: str) -> bool:
    return t in FLOAT


def is_signed(t: str) -> bool:
    return t.startswith("i")


@dataclass(eq=False)
class Value:
    id: int
    type: str
    uniform: bool

    def __repr__(self) -> str:
        return f"%{self.id}:{self.type}{'' if self.uniform else '[]'}"


@dataclass(eq=False)
class Op:
    name: str
    type: str
    args: tuple
    attrs: dict
    out: Value | None
    instr: int  # index of the guest instruction this op belongs to

    def __repr__(self) -> str:
        a = ", ".join(map(repr, self.args))
        at = "".join(f" {k}={v}" for k, v in self.attrs.items())
        return (
            f"{self.out!r} = {self.name}.{self.type}({a}){at}"
            if self.out
            else f"{self.name}.{self.type}({a}){at}"
        )


@dataclass
class Block:
    index: int
    start: int  # byte offset of the first instruction
    instrs: list[int] = field(default_factory=list)  # instruction indices
    ops: list[Op] = field(default_factory=list)
    term: tuple = ("end",)
    valu: int = 0  # vector instructions (for lane_instructions)
    uses_float: bool = False


@dataclass
class Plan:
    """The scratch decision for one (program, ScratchABI) (translate/scratch.py makes it)."""

    mubuf_scratch: frozenset = frozenset()  # offsets of MUBUF instructions that are scratch
    roots: frozenset = frozenset()  # user SGPRs holding the scratch base
    tracer_skip: frozenset = frozenset()  # user SGPRs the buffer tracer leaves out

    def is_scratch_mubuf(self, offset: int) -> bool:
        return offset in self.mubuf_scratch


@dataclass
class Program:
    """A translated program: blocks of IR plus the instruction table (text lives only here)."""

    blocks: list[Block]
    instructions: list[Any]  # isa Instruction per index
    block_at: dict[int, int]  # byte offset -> block index
    max_vgpr: int
    max_lds_offset: int = 0
    uses_scratch: bool = False
    # the scratch plan, set by translate.program after construction (not an init argument)
    scratch: Plan | None = field(default=None, init=False, repr=False, compare=False)


class Builder:
    """Emits ops into one block; the frontends call it (never a backend)."""

    def __init__(self, counter: list[int], wave_size: int):
        self.ops: list[Op] = []
        self._counter = counter
        self.wave_size = wave_size
        self.instr = -1
        self.term: tuple | None = None
        self.max_vgpr = -1
        self.uses_float = False
        self.uses_scratch = False
        self.target = "gfx1030"
        self.base_address = 0  # guest address of byte offset 0 of the program
        self.scratch: Plan | None = None  # set by translate.program; read by the memory frontends
        self._dpp_ok: Value | None = None  # a DPP row-mask condition, live within one instruction

    # -- raw emission -------------------------------------------------------------------------
    def emit(self, name: str, type: str, *args, uniform: bool | None = None, **attrs) -> Value:
        rule, result = _EMIT[name]  # (KeyError: not a value op of the table)
        if rule == OPERANDS and uniform is None:
            uniform = all(a.uniform for a in args if isinstance(a, Value))
        elif rule != GIVEN:
            u = all(a.uniform for a in args if isinstance(a, Value)) if rule == OPERANDS else rule == UNIFORM
            assert uniform is None or uniform == u, (name, uniform)
            uniform = u
        assert uniform is not None, name  # (GIVEN: the frontend says)
        self._counter[0] += 1
        v = Value(self._counter[0], result or (attrs["to"] if result is None else type), uniform)
        self.ops.append(Op(name, type, tuple(args), attrs, v, self.instr))
        if is_float(type) or name in ("fin", "fout"):
            self.uses_float = True
        return v

    def effect(self, name: str, type: str, *args, **attrs) -> None:
        assert name in EFFECT_OPS, name
        self.ops.append(Op(name, type, tuple(args), attrs, None, self.instr))

    # -- convenience --------------------------------------------------------------------------
    def const(self, type: str, value) -> Value:
        return self.emit("const", type, uniform=True, value=value)

    # Register numbers index every backend's state arrays (the native tier's by raw pointer):
    # one outside the register file is refused here, never lowered (a frontend that made v-11
    # from an inline constant let the native driver write below its VGPR array: fuzz programs
    # seed 158).
    def _reg(self, kind: str, reg: int, count: int) -> int:
        if not (isinstance(reg, int) and 0 <= reg < count):
            from ..errors import Refused

            raise Refused(
                "program.unsupported_instruction",
                f"instruction #{self.instr}: {kind} register {reg} is outside the "
                f"register file (0..{count - 1})",
            )
        return reg

    def sget(self, reg: int) -> Value:
        return self.emit("sget", "u32", uniform=True, reg=self._reg("scalar", reg, NUM_SREGS))

    def sset(self, reg: int, v: Value) -> None:
        assert v.uniform and v.type == "u32", v
        self.effect("sset", "u32", v, reg=self._reg("scalar", reg, NUM_SREGS))

    def vget(self, reg: int) -> Value:
        self.max_vgpr = max(self.max_vgpr, self._reg("vector", reg, NUM_VGPRS))
        return self.emit("vget", "u32", uniform=False, reg=reg)

    def vset(self, reg: int, v: Value, mask: Value | None = None) -> None:
        assert v.type == "u32", v
        self.max_vgpr = max(self.max_vgpr, self._reg("vector", reg, NUM_VGPRS))
        if mask is None:
            mask = self.exec()
        self.effect("vset", "u32", v, mask, reg=reg)

    def exec(self) -> Value:
        return self.emit("exec", "b1", uniform=False)

    def lane_id(self) -> Value:
        return self.emit("lane_id", "u32", uniform=False)

    def bin(self, name: str, t: str, a: Value, b: Value) -> Value:
        return self.emit(name, t, a, b)

    def un(self, name: str, t: str, a: Value) -> Value:
        return self.emit(name, t, a)

    def cvt(self, to: str, a: Value) -> Value:
        if a.type == to:
            return a
        return self._cvt(to, a)

    def _cvt(self, to, a):
        self._counter[0] += 1
        v = Value(self._counter[0], to, a.uniform)
        self.ops.append(Op("cvt", a.type, (a,), {"to": to}, v, self.instr))
        if is_float(to) or is_float(a.type):
            self.uses_float = True
        return v

    def bitcast(self, to: str, a: Value) -> Value:
        if a.type == to:
            return a
        assert BITS[to] == BITS[a.type], (to, a)
        self._counter[0] += 1
        v = Value(self._counter[0], to, a.uniform)
        self.ops.append(Op("bitcast", a.type, (a,), {"to": to}, v, self.instr))
        return v

    def cmp(self, cond: str, t: str, a: Value, b: Value) -> Value:
        assert cond in CONDS, cond
        self._counter[0] += 1
        v = Value(self._counter[0], "b1", a.uniform and b.uniform)
        self.ops.append(Op("cmp", t, (a, b), {"cond": cond}, v, self.instr))
        if is_float(t):
            self.uses_float = True
        return v

    def select(self, c: Value, a: Value, b: Value) -> Value:
        return self.emit("select", a.type, c, a, b)

    def pack64(self, lo: Value, hi: Value) -> Value:
        return self.emit("pack64", "u64", lo, hi)

    def lo32(self, v: Value) -> Value:
        return self.emit("lo32", "u32", v)

    def hi32(self, v: Value) -> Value:
        return self.emit("hi32", "u32", v)

    def ballot(self, b: Value) -> Value:
        return self.emit("ballot", "u64", b, uniform=True)

    def maskbit(self, m: Value) -> Value:
        return self.emit("maskbit", "b1", m, uniform=False)
