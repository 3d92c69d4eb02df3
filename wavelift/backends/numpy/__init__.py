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

    # the native driver's record (0013): a race between its threads was seen (serial from then
    # on); the windows it wrote so far (the rest are aliased, not copied, from its second run on;
    # a store into an aliased window ends aliasing for the module)
    native_serial: bool = False
    driven: bool = False
    alias_ok: bool = True
    written_windows: set = field(default_factory=set)

    def alias_except(self):
        """WindowSet's ``alias_except`` for the next dispatch (None: copy every window)."""
        return self.written_windows if self.driven and self.alias_ok else None

    def block(self, index: int, mode: int):
        """The function of block ``index`` specialised for MODE ``mode`` (compiled on first use)."""
        return self.blocks.get(index, mode)


def build_module(key, program: Program, wave_size: int, base_address: int) -> Module:
    blocks = ModeBlocks(program, wave_size)
    return Module(key, program, blocks, "", ModuleMeta(base_address, program.block_at))
