"""The NumPy backend: IR blocks → generated Python over arrays [reg, waves, lanes]."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...translate.ir import Program
from .codegen import compile_program


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


def build_module(key, program: Program, wave_size: int, base_address: int) -> Module:
    blocks, src = compile_program(program, wave_size)
    return Module(key, program, blocks, src, ModuleMeta(base_address, program.block_at))
