"""The Builder: the frontends emit IR through it, one block at a time (never a backend).

Every op it emits is a row of the op table (ir/ops.py); it derives the result's type and
uniformity from that row, so a frontend names only the op, its type and its operands.
"""

from __future__ import annotations

from . import ops
from .ops import BITS, CONDS, EFFECT_OPS, GIVEN, OPERANDS, UNIFORM
from .program import NUM_SREGS, NUM_VGPRS, Op, Plan, Value, is_float

# value op name -> (its result's uniformity rule, its result type rule) from ops.py, for the
# Builder's emit (hot: one dict lookup)
# ("" for "op": the op's type, None for "to": attrs["to"])
_EMIT = {
    r.name: (r.uniform, {"op": "", "to": None}.get(r.result, r.result))
    for r in ops.OPS.values()
    if r.kind == ops.VALUE
}


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
        self.gb_addr_config: int | None = None  # the GPU's GB_ADDR_CONFIG (frontend/image.py), if known
        # TA_CS_BC_BASE_ADDR's border-colour table address (frontend/sample.py), if written
        self.border_color_base: int | None = None
        self.base_address = 0  # guest address of byte offset 0 of the program
        self.scratch: Plan | None = None  # set by frontend.program; read by the memory frontends
        # instruction index -> (instr_cache serial of its key, ops), set by frontend.program (Program.instr_keys)
        self.instr_keys: dict | None = None
        self._dpp_ok: Value | None = None  # a DPP row-mask condition, live within one instruction
        # frontend/instr_cache's hits kept as entries (instr_cache.LAZY: their ops made when read)
        self.lazy: list | None = None

    # -- raw emission -------------------------------------------------------------------------
    def emit(self, name: str, type: str, *args, uniform: bool | None = None, **attrs) -> Value:
        rule, result = _EMIT[name]  # (KeyError: not a value op of the table)
        if rule == OPERANDS:  # (a loop, not all() over a generator: emit is the frontends' hot path)
            u = True
            for a in args:
                if isinstance(a, Value) and not a.uniform:
                    u = False
                    break
            assert uniform is None or uniform == u, (name, uniform)
            uniform = u
        elif rule != GIVEN:
            u = rule == UNIFORM
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
