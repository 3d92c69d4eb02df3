"""Typed instructions: the one shape every later stage reads.

`Instruction` is what `wavelift.isa.decode` returns.  The executor reads ``name``, ``encoding``,
``variant``, ``fields`` (raw bit fields, lowercase names from AMD's RDNA ISA guide) and
``literal``; ``operands``/``text`` are the LLVM 19 view (``llvm-mc-19 --disassemble``).

Memory encodings (DS, MUBUF, MTBUF, MIMG, FLAT/GLOBAL/SCRATCH, EXP, VINTRP) are decoded by
``wavelift.isa.memory.decode_memory(encoding, words, pos, ctx) -> Instruction``, where ``words``
holds every dword from ``pos`` that is available (at least the instruction's own; usually up to
3 dwords), ``pos`` is the byte offset of the instruction and ``ctx`` a `DecodeContext`.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter as _itemgetter

from .operands import Operand

__all__ = [
    "DecodeError",
    "DecodeContext",
    "Instruction",
    "Operand",
    "ENCODINGS",
    "VARIANTS",
    "DECODE_TARGETS",
    "RUN_TARGETS",
    "GFX11_RUN",
    "GFX12_RUN",
    "TARGETS",
]

ENCODINGS = (
    "SOP1",
    "SOP2",
    "SOPK",
    "SOPC",
    "SOPP",
    "SMEM",
    "VOP1",
    "VOP2",
    "VOPC",
    "VOP3",
    "VOP3B",
    "VOP3P",
    "DS",
    "MUBUF",
    "MTBUF",
    "MIMG",
    "FLAT",
    "GLOBAL",
    "SCRATCH",
    "EXP",
    "VINTRP",
)
VARIANTS = ("", "e32", "e64", "dpp", "dpp8", "sdwa")
TARGETS = ("gfx1030", "gfx1010")  # the GFX10 targets (the GFX10 tables and their sweeps)
# the GFX11 targets whose code runs: LLVM 19 gives them gfx1100's instructions and semantics; they
# differ in VGPRs per SIMD, the user-SGPR-init bug and (gfx115x) SALU float opcodes (decision 0023)
GFX11_RUN = ("gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152")
# the GFX12 targets whose code runs (decision 0027): GFX11's dispatch registers and semantics
# under GFX12's names and memory layouts (frontend/gfx12.py), workgroup ids in TTMP7/TTMP9
GFX12_RUN = ("gfx1200", "gfx1201")
# the targets whose code wavelift runs (decisions 0023, 0027)
RUN_TARGETS = TARGETS + GFX11_RUN + GFX12_RUN
# the targets whose code wavelift decodes; a target whose every instruction LLVM 19 prints as
# another's shares that one's tables (TABLE_TARGET; tests/isa/test_gfx11_sweep.py checks it)
DECODE_TARGETS = TARGETS + (
    "gfx1100",
    "gfx1101",
    "gfx1102",
    "gfx1103",
    "gfx1150",
    "gfx1151",
    "gfx1152",
    "gfx1200",
    "gfx1201",
)
TABLE_TARGET = {
    "gfx1101": "gfx1100",
    "gfx1102": "gfx1100",
    "gfx1103": "gfx1100",
    "gfx1151": "gfx1150",
    "gfx1152": "gfx1150",
    "gfx1201": "gfx1200",
}


NOT_DECODED = "not decoded yet"  # DecodeError reason prefix: an encoding refused by name, not invalid


class DecodeError(Exception):
    """Bytes that are not a valid instruction (as LLVM 19 judges them), or that run off the end.

    ``offset`` is the byte offset of the instruction's first byte, ``bytes`` the bytes that were
    looked at (may be fewer than an instruction when the input is truncated).
    """

    def __init__(self, offset: int, data: bytes, reason: str = "invalid instruction"):
        self.offset = int(offset)
        self.bytes = bytes(data)
        self.reason = reason
        super().__init__(f"{reason} at offset {self.offset:#x}: bytes {self.bytes.hex(' ') or '(none)'}")


@dataclass(frozen=True, slots=True)
class DecodeContext:
    """What a decoder needs beyond the bytes."""

    target: str = "gfx1030"
    wave64: bool = False

    def __post_init__(self):
        if self.target not in DECODE_TARGETS:
            raise ValueError(f"unsupported target {self.target!r} (decoded: {', '.join(DECODE_TARGETS)})")


_ATTRS = (
    "offset",
    "size",
    "words",
    "encoding",
    "variant",
    "opcode",
    "name",
    "fields",
    "literal",
    "operands",
    "text",
)


class Instruction(tuple):
    """One decoded instruction (immutable).

    Attributes (in this order)::

        offset: int        byte offset (includes decode's ``base``)
        size: int          bytes, including a literal
        words: tuple       dwords of the instruction, literal included
        encoding: str      one of ENCODINGS
        variant: str       one of VARIANTS
        opcode: int
        name: str          LLVM mnemonic without _e32/_e64/_dpp/_sdwa
        fields: dict       raw bit fields (shared between decodes of the same bytes: read-only)
        literal: int|None  32-bit literal dword or None
        operands: tuple    Operand, in printed order
        text: str          full LLVM line

    A tuple underneath (like a named tuple) because building one is the largest single cost of
    decoding; compare/hash as the attributes (``fields`` is left out of the hash).
    """

    __slots__ = ()

    def __new__(cls, offset, size, words, encoding, variant, opcode, name, fields, literal, operands, text):
        return tuple.__new__(
            cls, (offset, size, words, encoding, variant, opcode, name, fields, literal, operands, text)
        )

    offset = property(_itemgetter(0))
    size = property(_itemgetter(1))
    words = property(_itemgetter(2))
    encoding = property(_itemgetter(3))
    variant = property(_itemgetter(4))
    opcode = property(_itemgetter(5))
    name = property(_itemgetter(6))
    fields = property(_itemgetter(7))
    literal = property(_itemgetter(8))
    operands = property(_itemgetter(9))
    text = property(_itemgetter(10))

    def __getnewargs__(self):
        return tuple(self)

    def __repr__(self) -> str:
        return "Instruction(" + ", ".join(f"{a}={v!r}" for a, v in zip(_ATTRS, self)) + ")"

    def __hash__(self):
        return hash(self[:7] + self[8:])

    def __eq__(self, other):
        return other.__class__ is Instruction and tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)

    def _replace(self, **kw):
        return tuple.__new__(Instruction, tuple(kw.pop(a, v) for a, v in zip(_ATTRS, self)))

    def __str__(self) -> str:
        return self[10]

    @property
    def mnemonic(self) -> str:
        """The printed mnemonic (with _e32/_e64/_dpp/_sdwa where LLVM prints one)."""
        return self[10].split(" ", 1)[0]


def new_instruction(
    offset,
    size,
    words,
    encoding,
    variant,
    opcode,
    name,
    fields,
    literal,
    operands,
    text,
    _new=tuple.__new__,
    _I=Instruction,
):
    """``Instruction(...)``, a little faster (the decoders' hot path)."""
    return _new(_I, (offset, size, words, encoding, variant, opcode, name, fields, literal, operands, text))


def moved(ins, offset, _new=tuple.__new__, _I=Instruction):
    """``ins`` at byte offset ``offset`` (every other attribute shared, read-only)."""
    return _new(_I, (offset,) + ins[1:])
