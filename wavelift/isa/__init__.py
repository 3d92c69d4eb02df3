"""RDNA decoder: GFX10 (gfx1030, gfx1010), GFX11 and GFX12 (docs/isa-coverage.md); text as LLVM 19 prints it."""

from .decoder import decode, decode_one, disassemble
from .instruction import DecodeContext, DecodeError, Instruction
from .operands import Operand

__all__ = ["DecodeContext", "DecodeError", "Instruction", "Operand", "decode", "decode_one", "disassemble"]
