"""The NumPy backend: IR blocks → generated Python over arrays [reg, waves, lanes]."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from ...ir.ops import OPS
from ...ir.program import Program
from ..base import run_backend
from .codegen import ModeBlocks


@dataclass
class ModuleMeta:
    base_address: int
    block_at: dict

    def block_of_address(self, a: int) -> int:
        return self.block_at.get(a - self.base_address, -2)


# the smallest window the native driver's guesses leave out of the arena (aliased or blank:
# Module.window_plan): copying a smaller one in costs less than the guess's own set-up (the
# native words of an aliased window: its guest view, ~3-4 us a window, against ~1 us to copy a
# few KiB), and a guess that fails costs a run redone (decision 0035, amendment h117)
GUESS_MIN_BYTES = 16 << 10


@dataclass
class Module:
    key: tuple
    program: Program
    blocks: ModeBlocks
    source: str
    meta: ModuleMeta

    # the native driver's record (0013): its threads' ranges (runtime.thread_split, 0030): the
    # most even split while native_align is 1 (several ranges a thread, claimed in order: 0013's
    # amendment of 2026-12-06), after a race between its ranges one a thread, chunks of at
    # least native_align rows (at least doubled at each race), serial once no split is left; the
    # windows it wrote and read so far.  From its second run on, windows it never wrote
    # are aliased (not copied); windows it wrote and never read are blank (not copied either).
    # A store into an aliased window ends aliasing for the module, a read of a blank window
    # blanking.
    native_serial: bool = False
    native_align: int = 1
    driven: bool = False
    alias_ok: bool = True
    blank_ok: bool = True
    written_windows: set = field(default_factory=set)
    read_windows: set = field(default_factory=set)
    # whether a wave can run a block twice (runtime.loops, found on the first driver run): such a
    # program's dispatches split over threads from fewer waves (0013)
    loops: bool | None = None
    # thread CPU seconds its dispatches have spent running NumPy blocks: a dispatch below the
    # native tier's size asks for its library once they reach NATIVE_AFTER_MS (runtime.py)
    numpy_seconds: float = 0.0
    numpy_runs: int = 0  # ... and how many (a small program asks at its second: runtime.py)
    source_s: float | None = None  # its native source's expected cost (runtime._source_s; once)
    # its last one-range driver run's native.KeptContext (runtime._serial_words; at most one)
    kept: list = field(default_factory=list)
    # its driver runs' grid words, by config id: [config, (budget, registers, group waves), G,
    # user SGPRs, system SGPRs, (G, its address, the user SGPRs')] (runtime._grid)
    grids: dict = field(default_factory=dict)

    def window_plan(self) -> dict:
        """WindowSet's guesses for the next dispatch (keyword arguments; none: copy every window),
        each only about windows of at least GUESS_MIN_BYTES."""
        if not self.driven:
            return {}
        return dict(
            alias_except=self.written_windows if self.alias_ok else None,
            blank=self.written_windows - self.read_windows if self.blank_ok else None,
            guess_min=GUESS_MIN_BYTES,
        )

    def block(self, index: int, mode: int):
        """The function of block ``index`` specialised for MODE ``mode`` (compiled on first use)."""
        return self.blocks.get(index, mode)


def build_module(
    key, program: Program, config, mode: str = "wave", base_address: int | None = None
) -> Module:
    """The module of ``program`` (its blocks are generated and compiled on first use, per MODE);
    the backends' one signature (backends/base.py).  ``mode`` changes nothing here: the runtime
    takes it."""
    base = config.program_address if base_address is None else base_address
    blocks = ModeBlocks(program, config.wave_size, _index_key(program, config, base))
    return Module(key, program, blocks, "", ModuleMeta(base, program.block_at))


def _index_key(program: Program, config, base: int) -> tuple | None:
    """The program as every process names it, for the native index (decision 0012, amendment
    h95): what its translation was made from (run/execute.translation_parts, which module_key
    holds too) and the code's address only where the program reads it (an instruction of
    instr_cache.PC_NAMES: frontend/flow.py, scratch.py, scalar_alu.py read it for those alone),
    so a kernel loaded elsewhere by another process has the same name; None: a part whose repr
    is not the same in every process."""
    from ...frontend.instr_cache import PC_NAMES
    from ...run.execute import translation_parts
    from .codegen import _reprable

    pc = any(ins.name in PC_NAMES for ins in program.instructions)
    key = translation_parts(program, config) + ((base, config.program_address) if pc else None,)
    return key if _reprable(key) else None


# ---- the backend's declaration (backends/base.py) ---------------------------------------------


def _lower_blocks(program: Program) -> None:
    """NumPy blocks of every block of ``program`` (the dispatch of codegen.Lowering: an op it
    does not lower raises NotImplementedError naming it)."""
    from .codegen import Lowering

    low = Lowering(program, 32)  # (base.probe's samples are wave32)
    for blk in program.blocks:
        low.block_source(blk)


def _lower_native(program: Program) -> None:
    """Native-tier C++ of every block (native.BlockSource: an op it leaves to the NumPy block
    raises native.Unsupported naming it)."""
    from .. import native

    gen = native.BlockSource(32)
    for blk in program.blocks:
        gen.block(blk, {}, None)


@functools.cache
def _lowers() -> frozenset:
    from ..base import probe

    return probe(_lower_blocks, NotImplementedError)


@functools.cache
def _native_lowers() -> frozenset:
    from ..base import probe
    from ..native import Unsupported

    return probe(_lower_native, Unsupported)


def _native_refused():
    from ..native import Unsupported

    return Unsupported


class NativeTier:
    """The native tier (native.py, docs/decisions/0012): C++ of the blocks it lowers; a block
    with an op it does not lower stays a NumPy block (per block, per MODE: the dispatch runs
    either way), so nothing is refused for it."""

    name = "numpy-native"

    def lower(self, program: Program) -> None:
        _lower_native(program)

    @property
    def refused(self) -> type[Exception]:
        return _native_refused()

    def lowers(self) -> frozenset:
        return _native_lowers()

    def unsupported(self) -> dict[str, str]:
        return {n: "a block that holds it stays a NumPy block" for n in OPS if n not in self.lowers()}


class NumpyBackend:
    """The reference backend: runs anywhere, lowers every op."""

    name = "numpy"
    missing = "the NumPy backend"
    tiers = (NativeTier(),)
    refused = NotImplementedError

    def lower(self, program: Program) -> None:
        _lower_blocks(program)

    def available(self):
        return True

    def lowers(self) -> frozenset:
        return _lowers()

    def unsupported(self) -> dict[str, str]:
        return {}

    def key_extra(self, config) -> tuple:
        return ()

    def build_module(self, key, program, config, mode, base_address):
        return build_module(key, program, config, mode, base_address)

    def window_plan(self, module) -> dict:
        return module.window_plan()

    def run(self, module, config, windows, mode, budget, deadline=None, counts=None):
        try:
            return run_backend(__package__, module, config, windows, mode, budget, deadline, counts)
        finally:
            module.blocks.settle()


BACKEND = NumpyBackend()
