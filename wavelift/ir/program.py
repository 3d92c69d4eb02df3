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
    result uniformity, purity and a one-line doc.  The Builder (ir/builder.py) emits only its ops.

Terminators (Block.term; ops.TERMINATORS): ("jump", block), ("branch", cond_value, taken, fallthrough),
("end",), ("barrier", next_block), ("setpc", u64 value), ("mode", next_block) — the last one ends a
block after an instruction that changes MODE so that waves regroup by their float mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .ops import FLOAT

SCC = 128  # SGPR file index holding SCC (0/1)
MODE_REG = 129  # per-wave MODE register (also the wave group key)
FLAT_SCR_LO, FLAT_SCR_HI = 130, 131  # hwreg 20/21 (s_setreg/s_getreg)
NUM_SREGS = 132
NUM_VGPRS = 256
EXEC_LO, EXEC_HI, VCC_LO, VCC_HI, M0 = 126, 127, 106, 107, 124


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

    def exec_writes(self) -> tuple[dict[int, int], set[int]]:
        """(instruction -> index of its last op here, the instructions that write EXEC): where
        the segments of lane_count_points end."""
        last_op: dict[int, int] = {}
        writes_exec: set[int] = set()
        for i, op in enumerate(self.ops):
            last_op[op.instr] = i
            if op.name == "sset" and op.attrs["reg"] in (EXEC_LO, EXEC_HI):
                writes_exec.add(op.instr)
        return last_op, writes_exec


@dataclass
class Plan:
    """The scratch decision for one (program, ScratchABI) (frontend/scratch.py makes it)."""

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
    # the scratch plan, set by frontend.program after construction (not an init argument)
    scratch: Plan | None = field(default=None, init=False, repr=False, compare=False)
    # instruction index -> (frontend/instr_cache serial of its key, number of ops) for each
    # instruction whose ops are that key's recipe replayed (set by frontend.program; backends/numpy PieceCache)
    instr_keys: dict = field(default_factory=dict, init=False, repr=False, compare=False)
