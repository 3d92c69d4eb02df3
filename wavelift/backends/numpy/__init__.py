"""The NumPy backend: IR blocks → generated Python over arrays [reg, waves, lanes]."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...translate.ir import Program
from .codegen import ModeBlocks


@dataclass
class ModuleMeta:
    base_address: int
    block_at: dict

    def block_of_address(self, a: int) -> int:
        return self.block_at.get(a - self.base_address, -2)


@dataclass
class Module:
    key: tuple
    program: Program
    blocks: list
    source: str
    meta: ModuleMeta = field(default=None)

    def block(self, index: int, mode: int):
        """The function of block ``index`` specialised for MODE ``mode`` (compiled on first use)."""
        return self.blocks.get(index, mode)


def build_module(key, program: Program, wave_size: int, base_address: int) -> Module:
    blocks = ModeBlocks(program, wave_size)
    return Module(key, program, blocks, "", ModuleMeta(base_address, program.block_at))
