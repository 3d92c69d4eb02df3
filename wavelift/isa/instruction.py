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

from dataclasses import dataclass, field
from typing import Optional

from .operands import Operand

__all__ = ["DecodeError", "DecodeContext", "Instruction", "Operand", "ENCODINGS", "VARIANTS"]

ENCODINGS = ("SOP1", "SOP2", "SOPK", "SOPC", "SOPP", "SMEM", "VOP1", "VOP2", "VOPC", "VOP3",
             "VOP3B", "VOP3P", "DS", "MUBUF", "MTBUF", "MIMG", "FLAT", "GLOBAL", "SCRATCH",
             "EXP", "VINTRP")
VARIANTS = ("", "e32", "e64", "dpp", "dpp8", "sdwa")
TARGETS = ("gfx1030", "gfx1010")


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
        if self.target not in TARGETS:
            raise ValueError(f"unsupported target {self.target!r} (supported: {', '.join(TARGETS)})")


@dataclass(frozen=True, slots=True)
class Instruction:
    offset: int                 # byte offset (includes decode's ``base``)
    size: int                   # bytes, including a literal
    words: tuple                # dwords of the instruction, literal included
    encoding: str               # one of ENCODINGS
    variant: str                # one of VARIANTS
    opcode: int
    name: str                   # LLVM mnemonic without _e32/_e64/_dpp/_sdwa
    fields: dict = field(hash=False, compare=True)   # raw bit fields
    literal: Optional[int]      # 32-bit literal dword or None
    operands: tuple             # Operand, in printed order
    text: str                   # full LLVM line

    def __str__(self) -> str:
        return self.text

    @property
    def mnemonic(self) -> str:
        """The printed mnemonic (with _e32/_e64/_dpp/_sdwa where LLVM prints one)."""
        return self.text.split(" ", 1)[0]
