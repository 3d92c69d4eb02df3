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
    # on); the windows it wrote and read so far.  From its second run on, windows it never wrote
    # are aliased (not copied); windows it wrote and never read are blank (not copied either).
    # A store into an aliased window ends aliasing for the module, a read of a blank window
    # blanking.
    native_serial: bool = False
    driven: bool = False
    alias_ok: bool = True
    blank_ok: bool = True
    written_windows: set = field(default_factory=set)
    read_windows: set = field(default_factory=set)

    def window_plan(self) -> dict:
        """WindowSet's guesses for the next dispatch (keyword arguments; none: copy every window)."""
        if not self.driven:
            return {}
        return dict(alias_except=self.written_windows if self.alias_ok else None,
                    blank=self.written_windows - self.read_windows if self.blank_ok else None)

    def block(self, index: int, mode: int):
        """The function of block ``index`` specialised for MODE ``mode`` (compiled on first use)."""
        return self.blocks.get(index, mode)


def build_module(key, program: Program, wave_size: int, base_address: int) -> Module:
    blocks = ModeBlocks(program, wave_size)
    return Module(key, program, blocks, "", ModuleMeta(base_address, program.block_at))
