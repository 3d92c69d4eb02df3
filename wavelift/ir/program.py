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

from bisect import bisect_right
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

    def successors(self) -> tuple | None:
        """The blocks the terminator goes on to, as it names them (a block index; -1: the wave
        ends; below -1: a goto past the decoded program), s_barrier's continuation and a MODE
        change's next block included; None after s_setpc (any of program.block_at's blocks)
        or a terminator this table does not know.  The one successor rule: each analysis
        filters these (its own block positions, the edges it treats apart)."""
        t = self.term
        k = t[0]
        if k == "branch":
            return (t[2], t[3])
        if k in ("jump", "barrier", "mode"):
            return (t[1],)
        if k == "end":
            return ()
        return None

    def exec_writes(self) -> tuple[dict[int, int], set[int]]:
        """(instruction -> index of its last op here, the instructions that write EXEC): where
        the segments of lane_count_points end."""
        last_op: dict[int, int] = {}
        writes_exec: set[int] = set()
        lazy = self.__dict__.get("_lazy")
        made = [(0, self.ops)] if lazy is None else []  # (first op index, ops made)
        if lazy is not None:  # (an entry's ops not made: its count and flags say the same)
            for at, seg in lazy.items():
                if seg[0] is None:
                    last_op[seg[3]] = at + seg[2] - 1
                    if seg[4] & LAZY_EXEC:
                        writes_exec.add(seg[3])
                else:
                    lo = max(-at, 0)
                    made.append((at + lo, seg[0][lo : lazy.hi - lazy.lo - at]))
        for first, ops in made:
            for i, op in enumerate(ops, first):
                last_op[op.instr] = i
                if op.name == "sset" and op.attrs["reg"] in (EXEC_LO, EXEC_HI):
                    writes_exec.add(op.instr)
        return last_op, writes_exec

    def n_ops(self) -> int:
        """len(self.ops), without making ops kept lazily."""
        lazy = self.__dict__.get("_lazy")
        return len(self.ops) if lazy is None else lazy.hi - lazy.lo

    def set_lazy(self, lazy: LazyOps) -> None:
        """The block's ops are ``lazy``'s, made when ``ops`` is first read."""
        self.__dict__["_ops"] = None
        self.__dict__["_lazy"] = lazy


class LazyOps:
    """Ops [lo, hi) of a block where instructions replayed from frontend/instr_cache are kept as
    (entry, first value id, instruction) until read (decision 0045, amendment: the tinygrad
    hook's one-wave pieces read only the instructions' keys of a cached run of pieces).

    ``segs``: the block's segments in op order, each a list ``[ops, replay, n, instr, flags]``:
    ops made by the frontends (``replay`` None), or an entry's ops not made yet (``ops`` None
    until read: ``replay()`` makes them once, the very ops ``instr_cache._replay`` makes, value
    ids and all, and every view of the block reads those same objects); ``n`` the ops, ``instr``
    and ``flags`` (LAZY_EXEC / LAZY_MODE: its ops write EXEC / MODE) of an entry.
    ``starts``: each segment's first op index in the block."""

    __slots__ = ("segs", "starts", "lo", "hi")

    def __init__(self, segs: list, starts: list, lo: int, hi: int):
        self.segs, self.starts, self.lo, self.hi = segs, starts, lo, hi

    def view(self, a: int, b: int) -> LazyOps:
        """Ops [a, b) of this view."""
        return LazyOps(self.segs, self.starts, self.lo + a, self.lo + b)

    def items(self):
        """(op index in the view, segment) of every segment the view overlaps (a made segment may
        begin before the view or end after it: its ops are sliced by the caller)."""
        lo, hi, starts, segs = self.lo, self.hi, self.starts, self.segs
        i = bisect_right(starts, lo) - 1 if starts else 0
        while i < len(segs) and starts[i] < hi:
            yield starts[i] - lo, segs[i]
            i += 1

    def make(self) -> list:
        out: list = []
        lo, hi = self.lo, self.hi
        for at, seg in self.items():
            ops = seg[0]
            if ops is None:
                ops = seg[0] = seg[1]()
            s = at + lo
            out.extend(ops[max(lo - s, 0) : hi - s])
        return out


def _get_ops(self) -> list:
    d = self.__dict__
    ops = d["_ops"]
    if ops is None:
        ops = d["_ops"] = d["_lazy"].make()
        d["_lazy"] = None
    return ops


def _set_ops(self, ops: list) -> None:
    self.__dict__["_ops"] = ops
    self.__dict__["_lazy"] = None


# (after @dataclass: its __init__ assigns ``ops`` through this property, and eq/repr/replace read it)
Block.ops = property(_get_ops, _set_ops)  # type: ignore[assignment]

LAZY_EXEC, LAZY_MODE = 1, 2  # LazyOps segment flags: the entry's ops write EXEC / MODE


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
    # its accesses reached past tracer.SHALLOW_DEPTH once: traced to MAX_DEPTH from then on (0048)
    deep_pointers: bool = field(default=False, init=False, repr=False, compare=False)
    # what translate was given besides the code (frontend.program.made_with), None where the
    # program was not translated (hand-built): execute.translation_parts checks it (0049, h129)
    made_with: tuple | None = field(default=None, init=False, repr=False, compare=False)
