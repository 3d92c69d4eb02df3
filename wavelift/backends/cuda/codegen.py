"""Lower IR blocks to one CUDA C++ kernel (lane mode: one CUDA thread per guest lane).

Shape of a module (docs/decisions/0009-cuda.md):
  * one CUDA block per workgroup; wave k of the workgroup is threads [k*W, (k+1)*W) — wave32 is
    one warp, wave64 two warps that meet at a named barrier (``bar.sync 1+k, 64``) for cross-lane
    ops and between dependent memory accesses; a program with no LDS op and no s_barrier runs
    several workgroups a block, each in its own slot of its waves' threads (decision 0046);
  * every SGPR/VGPR the program names is a local variable; scalar state is computed identically
    by every lane of the wave (so it stays uniform), EXEC masks every vector write (``vset``);
  * basic blocks are C labels, terminators are gotos; s_setpc becomes a switch over the decoded
    block offsets; s_barrier is one round of barrier 0 where the wave stands, and an ended wave
    takes part in every later round until all have ended — so a barrier can never hang
    (decision 0047; WAVELIFT_CUDA_BARRIERS=phase: s_barrier ends a *phase*, each wave parks and
    re-enters through a switch);
  * an LDS access whose address ldsrange proves inside the (baked) LDS size has no bounds test,
    one proved aligned is read/written as whole words (decision 0047, amendment "LDS accesses in
    their direct form"); the others keep the test (one u32 compare) and the shifted form;
  * every block adds its instruction count to a per-wave counter; past the budget the wave stops
    and flags the dispatch (and every 2^20 instructions a wave looks whether another one stopped).
Generated text holds numbers and names made from numbers only — never guest text.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from ... import settings
from ...ir.blends import deferred_blends
from ...ir.ops import BITS
from ...ir.passes.pipeline import optimize_program
from ...ir.program import (
    EXEC_HI,
    EXEC_LO,
    MODE_REG,
    NUM_SREGS,
    VCC_HI,
    VCC_LO,
    Block,
    Program,
    refusal_of,
)
from ..cfamily.lowering import I32_RESULT, VALUE_EXPR, ValueLowering, is_float, minmax_const
from ..cfamily.lowering import Unsupported as CudaUnsupported  # refused, never miscomputed
from ..cfamily.prelude import header, trig_preop_source
from . import induction, ldsrange, nanchain, preload, spans, split
from .prelude import ATOMIC_OPS, PRELUDE

# parameter words (P[]): the dispatch's numbers, filled by runtime.py
P_USER = 0  # 16 user SGPRs
P_NUSER = 16
P_SYS = 17  # x, y, z workgroup id registers, scratch offset register (0xffffffff: none)
P_NGROUPS = 21  # gx gy gz
P_GSTART = 24
P_BLOCK = 27
P_PARTIAL = 30
P_PARTIAL_TG = 33
P_GEND = 34
P_MODE = 37
P_TIDIG = 38
P_GFX11 = 39
P_LDS = 40
P_NWIN = 41
P_BUDGET = 42  # lo, hi
P_XOFF = 44  # byte offset of the exchange area in dynamic shared memory
P_TG_SIZE = 45  # workgroup-info (TG_SIZE) register (0xffffffff: none), 0011
P_TG_WID20 = 46  # 1: also the wave id in TG_SIZE bits [24:20] (GFX10.3)
P_GRIDDIM = 47  # the grid's dimensions in use: 1 (gy = gz = 1), 2 (gz = 1) or 3 (grid_dims)
P_DIV = 48  # group-count divisors gx, gy as (magic, shifts) pairs (div_magic)
P_NTOTAL = 56  # the groups, gx * gy * gz mod 2^64, lo, hi: made here, not by every thread
P_NARROW = 58  # 1: every group index a launch's slot takes fits 32 bits (narrow_groups)
P_WORDS = 59
CONST_WINDOWS = 128  # window tables up to this size live in constant memory (runtime._set_constants)

MAX_GUESSES = 1024  # global accesses with a window guess in constant memory (guesses)
HOIST_SLOTS = 8  # window bases made in the prologue (WAVELIFT_CUDA_HOIST=loops): registers
MIRROR_BYTES = 16384  # constant memory for copies of the windows uniform loads read (mirrors)
INLINE_MEMORY_OPS = 48  # programs with more global/LDS accesses call the memory helpers
OCCUPANCY_MAX_INSTRUCTIONS = 256  # programs up to this size try the occupancy bound (compile.py)
# exchange words per wave, twice: 64 values, 64 writer ids, 4 spare.  A wave64 exchange writes
# the half at xo, meets at one named barrier, reads, and flips xo: the next write to this half
# comes after the next exchange's barrier, which both warps pass only after this read
XWORDS = 132
# the pending-state bits of every memory (Lowering.space_bits: 1 the LDS, 2 the others; those
# shifted left by 2: an atomic add or sub whose value nobody reads, pending)
SYNC_ALL = 15
KIND = {"load": 0, "store": 1, "atomic": 2, "scratch": 3}
WL_REFUSE = 16  # status flag: a refuse_if op held (status[1] = instruction, [2] = its ordinal)
KIND_NAMES = {v: k for k, v in KIND.items()}


def refusal_table(program: Program) -> list[tuple[int, str, str]]:
    """ir.refusal_of every refuse_if op, in the order the kernel numbers them."""
    return [refusal_of(op) for b in program.blocks for op in b.ops if op.name == "refuse_if"]


def optimized(program: Program, wave_size: int, mode_reg: int | None) -> Program:
    """``program`` after the IR's passes (ir/passes/pipeline.py), as the NumPy blocks and the
    native tier run them: each block optimised with the registers live after it.  ``mode_reg``:
    the MODE register value the kernel starts with (the baked P_MODE word); a program that
    writes MODE (an sset of it, a "mode" terminator) is optimised for any MODE (None: the
    kernel reads MODE at run time), as is one without a known initial value."""
    if mode_reg is not None and any(
        b.term[0] == "mode" or any(op.name == "sset" and op.attrs["reg"] == MODE_REG for op in b.ops)
        for b in program.blocks
    ):
        mode_reg = None
    out = optimize_program(program, mode_reg, wave_size)
    # the kernel numbers refuse_if ops in program order and the host names them from the
    # program it keeps (runtime._raise_flags): the passes keep every one, in order
    assert refusal_table(out) == refusal_table(program)
    return out


def lowered(program: Program, wave_size: int, baked: tuple = ()) -> Program:
    """The program a kernel of ``program`` with these baked words lowers: ``optimized`` for its
    baked MODE (WAVELIFT_CUDA_PASSES=off: the program as the frontends built it, for A/B runs).
    The module keeps it (Module.lowered): globalrange proves its accesses' windows on it."""
    if settings.get("WAVELIFT_CUDA_PASSES") == "off":
        return program
    return optimized(program, wave_size, dict(baked).get(P_MODE))


# the lean build's define in front of a module's source (kernel.h's WL_PROVED; Module.variant)
PROVED_DEFINE = "#define WL_PROVED 1\n"


def proved_lean() -> bool:
    """WAVELIFT_CUDA_PROVED: `lean` (the default since amendment h163 of decision 0049) -- a
    dispatch run in place on a proof launches its module's lean build (amendment h148) once it
    is built, in the background -- or `own` (the module's own build always; part of the module
    key).  Here, not in the package's __init__, so the runtime reads it without an import cycle."""
    v = settings.get("WAVELIFT_CUDA_PROVED")
    if v not in ("lean", "own"):
        raise ValueError(f"WAVELIFT_CUDA_PROVED={v!r} is not lean or own")
    return v == "lean"


def f2i_rzi(frm: str, to: str, a: str) -> str | None:
    """WAVELIFT_CUDA_F2I=cvt: f32 (f16, widened exactly) -> u32 / i32 as one cvt.rzi, which
    truncates, clamps to the destination's range and makes NaN 0 -- cfamily's wl_f2i result
    (tests/cuda/test_cuda_lean_gpu.py: every f32 bit pattern), without its compares and selects
    (0009's amendment h146).  None: another conversion (wl_f2i's narrower types stay)."""
    if frm in ("f32", "f16") and to in ("u32", "i32"):
        return f"__float2{'uint' if to == 'u32' else 'int'}_rz(wl_f({a}))"
    return None


def _zext32(op) -> bool:
    """op widens a u32 to u64."""
    return op is not None and op.name == "cvt" and op.attrs["to"] == "u64" and op.args[0].type == "u32"


class Lowering(ValueLowering):
    """The kernel of one program (kernel_source); value ops by cfamily's ValueLowering."""

    def __init__(
        self,
        program: Program,
        wave_size: int,
        mode: str,
        scratch_wave_bytes: int,
        base_address: int,
        groups: int = 1,
        slot_threads: int = 0,
        shape: dict | None = None,
        lds_bytes: int | None = None,
        griddim: int | None = None,
        narrow: bool = False,
    ):
        super().__init__()
        self.p = program
        # the baked grid dimensions (WAVELIFT_CUDA_GRIDDIM=baked: baked_params), None: not baked
        self.griddim = griddim
        # the group index in 32 bits (P_NARROW baked 1 with them: narrow_groups)
        self.narrow = narrow
        self.L = wave_size
        # workgroups per CUDA block (decision 0046), each in its own slot of slot_threads threads
        # (its waves, whole); 1: one workgroup a block, slot_threads unused
        self.groups = int(groups)
        self.slot_threads = int(slot_threads)
        assert self.groups == 1 or self.slot_threads > 0
        self.mode = mode
        self.wb = int(scratch_wave_bytes)
        self.base = int(base_address)
        self.has_barrier = has_barrier(program)
        sregs, vregs = {EXEC_LO, EXEC_HI, MODE_REG}, {0, 1, 2}
        for b in program.blocks:
            for op in b.ops:
                if op.name in ("sget", "sset"):
                    sregs.add(op.attrs["reg"])
                elif op.name in ("vget", "vset"):
                    vregs.add(op.attrs["reg"])
        self.sregs, self.vregs = sorted(sregs), sorted(vregs)
        # refuse_if ops: (instruction, why, code), numbered in program order (refusal_table) whatever
        # order the blocks are lowered in
        self.refusals: list[tuple[int, str, str]] = refusal_table(program)
        self.refusal_k = {
            id(op): k
            for k, op in enumerate(op for b in program.blocks for op in b.ops if op.name == "refuse_if")
        }
        self.eager_blends = settings.get("WAVELIFT_CUDA_BLENDS") == "eager"  # (A/B, tests)
        # WAVELIFT_CUDA_BLENDS=atomics: a block's blends also deferred across an atomic under
        # their mask (deferred_blends's ``atomics``: an atomic is lowered ``if (mask) ...`` with
        # its result 0 elsewhere; decision 0047's amendment h115) -- the histogram's loop
        self.atomic_blends = settings.get("WAVELIFT_CUDA_BLENDS") == "atomics"
        # s_barrier as a block-wide barrier where the wave stands (decision 0047), or as the end
        # of a phase (park, barrier, re-enter through the switch: WAVELIFT_CUDA_BARRIERS=phase)
        self.phases = self.has_barrier and settings.get("WAVELIFT_CUDA_BARRIERS") == "phase"
        # WAVELIFT_CUDA_BUDGET=straight: a small program without loops (straight_path) is a
        # straight kernel: its blocks' budget checks are the macro WL_BCHK (budget_check), empty
        # in the build the runtime launches when the wave's budget covers the longest path --
        # no check could fire there: the count at a block's end is at most that path's and rl,
        # the count to the next check, starts at min(budget, 2^20) >= it.  (That path runs each
        # instruction once at most: <= OCCUPANCY_MAX_INSTRUCTIONS, far below 2^20.  Nor does a
        # wave then poll the stop flag, which wl_check_ reads: decision 0009, amendment h103.)
        self.straight: int | None = None
        if (
            settings.get("WAVELIFT_CUDA_BUDGET") == "straight"
            and not self.has_barrier
            and len(program.instructions) <= OCCUPANCY_MAX_INSTRUCTIONS
        ):
            self.straight = straight_path(program)
        self.skip, self.fwd = _plan(program, wave_size)
        # LDS accesses whose address is proved inside the LDS and/or aligned (ldsrange; decision
        # 0047, amendment "LDS accesses in their direct form"): id(op) -> the address's value.
        # lds_bytes: the baked LDS size (None: not baked, no access is proved inside);
        # the proved forms by default (decision 0047 amendment; equal to NumPy on the GPU);
        # WAVELIFT_CUDA_LDS=checked keeps every access tested and shifted (A/B runs)
        self.lds_checked = settings.get("WAVELIFT_CUDA_LDS") == "checked"
        # the written map as bits (kernel.h's WL_MAP_BITS; decision 0049's amendment h111)
        self.map_bits = map_bits()
        # the memories a wave sync orders, as bits of the pending state (block_source's pend):
        # WAVELIFT_CUDA_WAVESYNC=spaces keeps the LDS (shared memory) apart from the rest
        # (global and scratch: the arena's or global buffers), which no LDS address reaches --
        # an access waits only for the pending ones of its own memory (0047's amendment h101);
        # unset, one memory: every access waits for every pending one (the bits all set)
        how = settings.get("WAVELIFT_CUDA_WAVESYNC")
        self.sync_spaces = how in ("spaces", "commute")
        # (WAVELIFT_CUDA_WAVESYNC=commute, also) the values a kept op or a terminator reads: an
        # atomic add / sub whose value is not among them commutes with another such one (the
        # memory ends the same in either order, and no lane of the wave sees the value between),
        # so no sync is placed between two of them -- a racing wave reading the word between
        # may see a sum no in-order run gives (hence a value of its own)
        self.read_values: set[int] = set()
        self.sync_commute = how == "commute"
        if self.sync_commute:
            for b in program.blocks:
                for op in b.ops:
                    if id(op) not in self.skip:
                        self.read_values.update(x.id for x in op.args if hasattr(x, "id"))
                self.read_values.update(x.id for x in b.term[1:] if hasattr(x, "id"))
        self.lds_bytes = None if self.lds_checked else lds_bytes
        # WAVELIFT_CUDA_LDSBASE=kept: the LDS window's shared address made once in the prologue
        # and kept in a register (wl_sb, by an empty asm as WL_KEEP keeps the window bases), each
        # direct LDS access at __cvta_shared_to_generic(wl_sb + offset) -- the byte wl_smem +
        # offset names (cvta's round trip), still a shared access to NVVM and ptxas (LDS, STS,
        # ATOMS); unset, NVVM may make the window's address (S2R SR_CgaCtaId, MOV, LEA) again
        # inside a predicated access of a loop, every iteration (the histogram's atomic with
        # WAVESYNC=spaces; 0047's amendment h118)
        self.lds_kept = settings.get("WAVELIFT_CUDA_LDSBASE") == "kept"
        self.lds_addr: dict = {}
        # (lanes) id(op) -> a 32-bit LDS atomic's data operand in its lanes: a constant is
        # written as one, so that a count (atomic_inc, += 1) is the native shared increment
        self.lds_data: dict = {}
        # (lanes) id(op) -> an LDS access's address in every lane, active or not: a load proved
        # inside and aligned there reads in every thread and keeps the word where its mask
        # holds (0 elsewhere, as before) -- a select, not a branch around each load (NVVM
        # rebuilt the shared window's address inside each one: 3 SASS instructions a load)
        self.lds_every: dict = {}
        # (lanes) the LDS accesses whose mask holds in every lane (EXEC known whole): such a
        # load's word needs no select
        self.lds_whole: set = set()
        # (lanes, WAVELIFT_CUDA_EXEC=known) (block index, op position) where EXEC is known to
        # hold every lane of the wave: an EXEC bit there is 1 and a lane count 32 a warp (0047's
        # amendment h106)
        self.exec_whole: set = set()
        # f32 fma chains tested for NaN at their end (nanchain; 0047's amendment h106)
        nan = str(settings.get("WAVELIFT_CUDA_NAN") or "")
        m = re.fullmatch(r"chain(\d*)", nan)
        self.nan_chain = (int(m.group(1)) if m.group(1) else 4) if m else 0
        known = settings.get("WAVELIFT_CUDA_EXEC") == "known"
        if not self.lds_checked and (uses_space(program, "lds") or known):
            # WAVELIFT_CUDA_LDS=lanes: also the values in the lanes EXEC leaves active (0047's
            # amendment "values in the active lanes")
            lanes = settings.get("WAVELIFT_CUDA_LDS") == "lanes"
            self.lds_addr = ldsrange.analyse(
                program,
                wave_size,
                shape,
                self.skip,
                lanes,
                self.lds_data,
                self.lds_every,
                self.lds_whole,
                self.exec_whole if known else None,
            )
        # blocks entered other than by a goto the analyses follow (sync_entries): s_barrier's
        # continuation (and block 0 of a program with barriers: both from the phase switch; with
        # barriers where the wave stands, decision 0047, block 0 is kept here too, which is only
        # conservative: its entry state is then pending) and every s_setpc target -- by block index
        self.fixed: set[int] = set()
        idx = {b.index for b in program.blocks}
        for b in program.blocks:
            t = b.term
            if t[0] == "barrier" and t[1] in idx:
                self.fixed.add(t[1])
            elif t[0] == "setpc":
                self.fixed.update(bi for bi in program.block_at.values() if bi in idx)
        if self.has_barrier and program.blocks:
            self.fixed.add(program.blocks[0].index)
        # every global access gets a dense slot: its window hint (WL_HINT) and, for the first
        # MAX_GUESSES, a window guess in constant memory (WL_G*), both checked, never trusted
        # (and, for uniform loads of whole words, the copy of that window, mirrors())
        self.slot: dict[int, int] = {}
        self.slots: list[tuple[int, bool]] = []  # (bytes per access, mirrorable)
        # uniform loads from dispatch-constant addresses: their words, when the host resolved
        # them, come from constant memory (preload.py)
        self.preloads = preload.find(program)
        self.pre = {id(op): k for k, op in enumerate(self.preloads[0])}
        self.pre_at = preload.layout(self.preloads[0])  # fixed: constant-bank operands
        for b in program.blocks:
            for op in b.ops:
                if op.name in ("load", "store", "atomic") and op.attrs["space"] == "global":
                    nb = op.attrs["nbytes"] if op.name != "atomic" else op.attrs["bits"] // 8
                    self.slot[id(op)] = len(self.slots)
                    self.slots.append(
                        (
                            nb,
                            op.name == "load"
                            and op.out is not None
                            and op.out.uniform
                            and nb % 4 == 0
                            and len(self.slots) < MAX_GUESSES,
                        )
                    )
        # global accesses of a block at known offsets from one base, tested once against one
        # guessed window (spans.py; decision 0047's amendment on global accesses at known offsets): id(op) -> its Span.
        # WAVELIFT_CUDA_SPANS=access keeps a test per access (A/B runs)
        self.span_of: dict = {}
        self.span_lead: dict = {}
        if settings.get("WAVELIFT_CUDA_SPANS") != "access":
            self.span_of, self.span_lead = spans.find(program, self._groupable)
        # WAVELIFT_CUDA_HOIST=loops: the window bases (wl_gbase) of the guessed slots of global
        # loads and stores in loops, made once in the prologue (wl_gp<slot>) instead of at each
        # access (decision 0047's amendment h115); at most HOIST_SLOTS (registers)
        self.hoisted: set[int] = set()
        hoist = settings.get("WAVELIFT_CUDA_HOIST")
        if hoist in ("loops", "induction"):
            looped = loop_blocks(program)
            for b in program.blocks:
                for op in b.ops if b.index in looped else ():
                    j = self.slot.get(id(op))
                    if (
                        j is not None
                        and op.name in ("load", "store")
                        and j < MAX_GUESSES
                        and id(op) not in self.pre
                        and id(op) not in self.span_of  # (a group's member: its group's base)
                        and len(self.hoisted) < HOIST_SLOTS
                    ):
                        self.hoisted.add(j)
        # WAVELIFT_CUDA_HOIST=induction (also the bases above): the global loads of a one-block
        # loop at base + stride * r, r a VGPR the loop's exit bounds by n, tested once where the
        # loop is entered for every address it can reach; a copy of the block reads them
        # directly when that holds (induction.py; decision 0047's amendment h127)
        self.induction: dict[int, list] = {}
        if hoist == "induction" and not self.phases:
            self.induction = induction.find(
                program,
                wave_size,
                lambda op: self._groupable(op) and id(op) not in self.span_of,
            )
        self._direct: set[int] = set()  # (the copy being lowered) ids of its direct loads
        self._back: str | None = None  # (the copy being lowered) the label of its loop's goto

    def _groupable(self, op) -> bool:
        """A global load or store that may share its block's window test (spans.find): one that
        takes wl_gload's / wl_gstore's per-lane path (not preloaded, not mirrored, not a wave64
        uniform load) and has a window guess (its slot one of the first MAX_GUESSES)."""
        if id(op) in self.skip or id(op) in self.pre or self.slot[id(op)] >= MAX_GUESSES:
            return False
        if op.name == "load":
            assert op.out is not None
            return not self.slots[self.slot[id(op)]][1] and not (op.out.uniform and self.L == 64)
        return True

    def span_member(self, op, b) -> tuple[str, int] | None:
        """(the name of op's group test, op's offset c from the group's root), when op is in a
        group whose test its block emitted (at the group's first member, span_test); else None:
        op keeps its own test."""
        s = self.span_of.get(id(op))
        if s is None:
            return None
        g = b.spans.get(id(s))
        return None if g is None else (g, s.members[id(op)])

    def span_test(self, op, b) -> None:
        """Before a group's first member: the group's one test (wl_span), named for the block
        (b.spans); not emitted when the root has no plain name here (a lazy wave64 half)."""
        s = self.span_lead.get(id(op))
        if s is None or s.root.id not in b.name or s.root.id in b.kind:
            return
        g = f"gs{len(b.spans)}"  # (block-local: each block is one C scope)
        nb = op.attrs["nbytes"]
        b.emit(
            f"  u8* {g}_b; const bool {g} = wl_span(C, (u64)({b.name[s.root.id]}), (u64)({s.lo}ll), "
            f"{s.need - nb + 1}ull, {self.slot[id(op)]}u, {s.align}ull, &{g}_b);"
        )
        b.spans[id(s)] = g

    # ------------------------------------------------------------------------------ helpers
    def wsync(self) -> str:
        if self.L == 32:
            return "__syncwarp();"
        return 'asm volatile("bar.sync %0, 64;" :: "r"(wv + 1u) : "memory");'

    def wave_any(self, cond: str) -> str:
        """True in every lane of the wave when cond holds in any lane (all lanes must call it)."""
        if self.L == 32:
            return f"__any_sync(WL_FULL, {cond})"
        return f"wl_any64({cond}, wv + 1u)"

    def space_bits(self, space: str) -> int:
        """The pending-state bits an access to ``space`` sets and waits for (sync_spaces)."""
        if not self.sync_spaces:
            return SYNC_ALL
        return 1 if space == "lds" else 2

    def cvt(self, frm: str, to: str, a: str) -> str:
        if settings.get("WAVELIFT_CUDA_F2I") == "cvt":
            e = f2i_rzi(frm, to, a)
            if e is not None:
                return e
        return super().cvt(frm, to, a)

    def exec_bit(self) -> str:
        if self.L == 32:
            return f"(((s{EXEC_LO} >> lane) & 1u) != 0u)"
        return f"((((lane < 32u) ? s{EXEC_LO} : s{EXEC_HI}) >> (lane & 31u)) & 1u) != 0u"

    # --------------------------------------------------------------------------- one block
    def sync_entries(self) -> list[tuple]:
        """The state at each block's entry (by position in program.blocks): (a store, an access)
        of this wave may be unordered by a wave sync on some path from the kernel's start, and
        (wave64) the registers that may hold a lazy mask half (block_source: "lazy wave64
        masks").  A forward may-analysis over the gotos (jump, mode, branch), the join an or
        (a union): the kernel's start has no access and no lazy register; blocks a phase enters
        (s_barrier's continuation, and block 0 in a program with barriers) and s_setpc's
        targets (``self.fixed``) are taken as pending with no lazy register (their predecessors
        are not followed: every goto into them and every barrier / s_setpc makes its lazy
        registers whole first), as is a block no goto reaches.  Each block's exit state comes
        from lowering it (block_source), so the analyses and what they place are one logic;
        entry states only grow, so the iteration ends (each block is lowered a few times)."""
        blocks = self.p.blocks
        pos = {b.index: i for i, b in enumerate(blocks)}
        none: frozenset[int] = frozenset()
        top = (SYNC_ALL, SYNC_ALL, none)
        entry: list = [None] * len(blocks)
        fixed = {pos[bi] for bi in self.fixed}
        calm: set[int] = set()
        if self.sync_spaces and not self.phases:
            # (0047's amendment h101) barriers where the wave stands: an s_barrier's continuation
            # is entered from its bar.red, which orders memory as a sync does, so that edge
            # brings nothing pending (as the kernel's start brings nothing to block 0); their
            # other gotos are followed.  s_setpc's targets stay pending.
            setpc = set()
            if any(b.term[0] == "setpc" for b in blocks):
                setpc = {pos[bi] for bi in self.p.block_at.values() if bi in pos}
            met = {pos[b.term[1]] for b in blocks if b.term[0] == "barrier" and b.term[1] in pos}
            calm = (met | ({0} if blocks else set())) - setpc
            fixed -= calm
        for i in fixed:
            entry[i] = top
        for i in calm:
            entry[i] = (0, 0, none)
        if blocks and entry[0] is None:
            entry[0] = (0, 0, none)

        def succ(b):  # (not s_barrier's continuation: entered from the phase switch or calm)
            nxt = () if b.term[0] == "barrier" else b.successors() or ()
            return [pos[x] for x in nxt if x in pos and pos[x] not in fixed]

        self._lowered: dict = {}
        work = [i for i, e in enumerate(entry) if e is not None]
        while work:
            i = work.pop()
            ex = self._lower(i, entry[i])[1]
            for j in succ(blocks[i]):
                e = entry[j]
                new = ex if e is None else (e[0] | ex[0], e[1] | ex[1], e[2] | ex[2])
                if new != e:
                    entry[j] = new
                    work.append(j)
        return [top if e is None else e for e in entry]

    def _lower(self, i: int, entry: tuple, direct: bool = False):
        """-> (block_source's lines, exit state) of block i for this entry state (cached);
        ``direct``: its copy with the induction plans' loads direct (self.induction)."""
        key = (i, entry, direct)
        if key not in self._lowered:
            blk = self.p.blocks[i]
            if direct:
                self._direct = {id(p.op) for p in self.induction[blk.index]}
            if blk.index in self.induction:  # (its loop's own goto stays in its copy: _versioned)
                self._back = f"B{blk.index}_{'h' if direct else 't'}"
            try:
                lines = self.block_source(blk, entry)
            finally:
                self._direct, self._back = set(), None
            self._lowered[key] = (lines, self.exit_pend)
        return self._lowered[key]

    def _versioned(self, i: int, entry: tuple) -> list[str]:
        """Block i of an induction plan (WAVELIFT_CUDA_HOIST=induction): where the loop is
        entered (its label: every goto from outside, a switch's case), each active lane's
        addresses the loop can reach are tested once against the loads' guesses -- the first,
        base + stride * r, and the range [base, base + stride * (n - 1)] the exit leaves it
        (induction.py) -- and the wave runs the copy B<i>_h with those loads direct when every
        lane passes; else the block as before (B<i>_t: each iteration tested).  The two copies
        count, sync and blend alike (one lowering but for the loads' form)."""
        blk = self.p.blocks[i]
        b = blk.index
        tested = self._lower(i, entry)[0]
        direct = self._lower(i, entry, True)[0]
        # each range is wl_span's test (a group's one test) of the load's guess: the first
        # address, base + stride * r (its first byte: k = 1), and [base, base + stride * (n - 1)]
        # (k = that span + 1; below 2^63: stride < 2^31), base aligned to the access
        guard = ["  { bool ok_ = true;"]
        for p in self.induction[b]:
            j = self.slot[id(p.op)]
            nb = p.op.attrs["nbytes"]
            al = 4 if nb >= 4 else nb
            guard.append(
                f"    {{ const u64 b_ = {induction.c_expr(p.base)}; const u32 n_ = (u32){induction.c_expr(p.bound)}; u8* p_;"
                f" ok_ = ok_ && wl_span(C, b_, {p.stride}ull * (u64)v{p.reg}, 1ull, {j}u, {al}ull, &p_)"
                f" && (n_ == 0u || wl_span(C, b_, 0ull, {p.stride}ull * (u64)(n_ - 1u) + 1ull, {j}u, {al}ull, &p_)); }}"
            )
        guard.append(f"    if (__all_sync(WL_FULL, !{self.exec_bit()} || ok_)) goto B{b}_h; }}")
        # (each copy's loop goto is to its own label: _lower's self._back)
        return [tested[0], *guard, f"B{b}_t: ;", *tested[1:], f"B{b}_h: {{", *direct[1:]]

    def block_source(self, blk: Block, entry: tuple = (SYNC_ALL, SYNC_ALL)) -> list[str]:
        """The block's C++ lines, its wave syncs placed for the sync state ``entry``
        (sync_entries: store pending, access pending and, in wave64, the registers holding a
        lazy mask half); the state at its end is left in ``self.exit_pend``.

        Lazy wave64 masks: a ballot (and what bitwise ops, lo32/hi32, pack64, sset/sget make
        of it) is kept as *this warp's half*: warp w's copy is right in bits [32w, 32w+32) of a
        u64 ("split"), or, for a u32 half of a mask, in warp h only ("t0"/"t1"; SGPRs hold
        only their natural half -- even registers t0, odd ones t1 -- so EXEC's own lane bit
        is always in s126 for warp 0 and s127 for warp 1); an or of the two halves is "orh"
        (each warp knows its part).  Each lane's own bit needs nothing from the other warp
        (EXEC predication, maskbit); a zero test of a whole mask is one ``bar.red.or``
        (wl_any64); any other use of a whole value (arithmetic, counts, compares, stores,
        MODE, readlane...) fetches it at that point through the exchange area (one named
        barrier), and a lazy register whose value is fetched is made whole too.  Both warps
        lower the same text, so exchanges and barriers match."""
        L = self.L
        out = [f"B{blk.index}: {{"]
        emit = out.append
        if blk.uses_float:
            emit(
                f"  if (s{MODE_REG} & 15u) {{ wl_flag(C, WL_ROUNDING, s{MODE_REG}, 0u, {blk.index}u); goto WL_STOP; }}"
            )
        # lane counts: per warp in wave64 (each warp's own EXEC half; both warps' totals are
        # added to the stats at the end)
        pc = f"__popc(s{EXEC_LO})" if L == 32 else f"__popc((lane < 32u) ? s{EXEC_LO} : s{EXEC_HI})"
        from ...frontend.program import lane_count_points

        counts = lane_count_points(self.p, blk)
        emit(f"  const u32 mode = s{MODE_REG}; (void)mode;")
        # deferred EXEC blends (deferred_blends): VGPR writes keep their raw values, blended
        # once at the block's end; NVRTC drops the blends of registers dead after it
        defs = {op.out.id: op for op in blk.ops if op.out is not None}
        src = (
            None
            if self.eager_blends
            else deferred_blends(
                blk.ops, defs, [x for x in blk.term[1:] if hasattr(x, "id")], atomics=self.atomic_blends
            )
        )
        # (WAVELIFT_CUDA_NAN=chain) f32 fmas whose NaN test waits for their chain's end
        # (nanchain): operand value id -> the inner fma whose result it is
        inner_of = (
            nanchain.chains(
                blk.ops, [x for x in blk.term[1:] if hasattr(x, "id")], src, self.skip, self.nan_chain
            )
            if self.nan_chain
            else {}
        )
        inner_ops = {id(op) for op in inner_of.values()}
        last: dict[int, tuple] = {}  # VGPR -> (raw value, mask) of its last deferred write
        name: dict[int, str] = {}
        ctype: dict[int, str] = {}
        words: dict[int, int] = {}
        # [stores since the last sync, loads since it]: bits of the memories (space_bits)
        pend = [int(entry[0]), int(entry[1])]
        lazy = set(entry[2]) if len(entry) > 2 else set()
        kind: dict[int, str] = {}  # value id -> "split" | "t0" | "t1" | "orh" (wave64)
        consts: dict[int, int] = {}  # value id -> integer constant
        from_reg: dict[int, tuple] = {}  # value id -> (lazy register it was read from, version)
        ver: dict[int, int] = {}  # register -> ssets lowered so far in this block

        def sync():
            emit("  " + self.wsync())
            pend[0] = pend[1] = 0

        def set_sreg(r, value, half: bool):
            """SGPR r = value; ``half``: the warp's own half of a wave64 mask (lazy)."""
            emit(f"  s{r} = (u32)({value});")
            (lazy.add if half else lazy.discard)(r)
            ver[r] = ver.get(r, 0) + 1

        def whole(x) -> str:
            """The whole value of x (fetched through the exchange area if it is lazy)."""
            k = kind.pop(x.id, None)
            v = name[x.id]
            if k is None:
                return v
            f = f"{v}_x"
            if k == "split":
                emit(
                    f"  if ((lane & 31u) == 0u) X[xo + 128u + (lane >> 5)] = (u32)((u64)({v}) >> (lane & 32u));"
                )
                sync()
                emit(f"  const u64 {f} = (u64)X[xo + 128u] | ((u64)X[xo + 129u] << 32); xo ^= {XWORDS}u;")
            elif k == "orh":
                emit(f"  if ((lane & 31u) == 0u) X[xo + 128u + (lane >> 5)] = (u32)({v});")
                sync()
                emit(f"  const u32 {f} = X[xo + 128u] | X[xo + 129u]; xo ^= {XWORDS}u;")
            else:
                emit(f"  if (lane == {0 if k == 't0' else 32}u) X[xo + 128u] = (u32)({v});")
                sync()
                emit(f"  const u32 {f} = X[xo + 128u]; xo ^= {XWORDS}u;")
            name[x.id] = f
            r = from_reg.pop(x.id, None)
            if r is not None and r[0] in lazy and ver.get(r[0], 0) == r[1]:
                emit(f"  s{r[0]} = {f};")  # the register holds it whole from here on
                lazy.discard(r[0])
            return f

        def flush():
            """Every lazy register made whole (one exchange round per 128 registers)."""
            regs = sorted(lazy)
            for i in range(0, len(regs), 128):
                part = list(enumerate(regs[i : i + 128]))
                w = [" ".join(f"X[xo + {k}u] = s{r};" for k, r in part if r & 1 == h) for h in (0, 1)]
                emit(f"  if (lane == 0u) {{ {w[0]} }} else if (lane == 32u) {{ {w[1]} }}")
                sync()
                emit("  " + " ".join(f"s{r} = X[xo + {k}u];" for k, r in part) + f" xo ^= {XWORDS}u;")
            lazy.clear()

        def lazy_rule(op):
            """How op is lowered with lazy arguments: the kind of its result (its expression is
            the usual one of the arguments' own halves), "any" (a zero test: wl_any64),
            "orh2" (or of a t0 and a t1 half), "sset" (a register keeps its natural half) --
            or None: its arguments are fetched whole first."""
            n, t = op.name, op.type
            ks = [kind.get(x.id) for x in op.args]
            tags = {k for k in ks if k}
            if n in ("and", "or", "xor", "not") and t == "u64" and tags == {"split"}:
                return "split"
            if n in ("and", "or", "xor", "not") and t == "u32" and len(tags) == 1 and tags <= {"t0", "t1"}:
                return tags.pop()
            if n == "or" and t == "u32" and ks in (["t0", "t1"], ["t1", "t0"]):
                return "orh2"
            if n in ("and", "or") and t == "u32" and tags == {"orh"} and (n == "or" or None in ks):
                return "orh"  # (a0 | a1) & z = (a0 & z) | (a1 & z); or of ors
            if n in ("lo32", "hi32") and ks[0] == "split":
                return "t0" if n == "lo32" else "t1"
            if n == "pack64" and ks[0] in (None, "t0") and ks[1] in (None, "t1"):
                return "split"
            if n == "maskbit" and ks[0] == "split":
                return "full"  # the lane's own bit
            if n == "cmp" and op.attrs["cond"] in ("eq", "ne") and len(ks) == 2:
                for i in (0, 1):
                    if ks[i] and ks[1 - i] is None and consts.get(op.args[1 - i].id) == 0:
                        return "any"
            if (
                n == "sset"
                and ks[0] in ("t0", "t1")
                and op.attrs["reg"] in LAZY_REGS
                and ks[0] == f"t{op.attrs['reg'] & 1}"
            ):
                return "sset"
            return None

        def before(kind, space):
            """kind: "load" | "store" | "rmw" | "add" (an atomic add / sub whose value nobody
            reads: it waits for no other such one); space: the op's memory."""
            m = self.space_bits(space)
            w = m | m << 2  # its stores and adds
            if kind == "add":
                if (pend[0] | pend[1]) & m:
                    sync()
            elif (
                kind in ("load", "rmw")
                and pend[0] & w
                or kind in ("store", "rmw")
                and (pend[0] | pend[1]) & w
            ):
                sync()

        def after(kind, space):
            m = self.space_bits(space)
            if kind == "add":
                pend[0] |= m << 2
                return
            if kind in ("load", "rmw"):
                pend[1] |= m
            if kind in ("store", "rmw"):
                pend[0] |= m

        st = _Blk(blk, emit, sync, before, after, set_sreg, pend, src, defs, last, name, ctype, words, kind)
        st.consts, st.from_reg, st.ver, st.lazy = consts, from_reg, ver, lazy
        for i, op in enumerate(blk.ops):
            if i in counts:
                lanes_here = "32u" if (blk.index, i) in self.exec_whole else f"(u32){pc}"
                emit(f"  lc += {lanes_here} * {counts[i]}u;")
            if id(op) in self.skip:
                continue
            n = op.name
            if n == "exec" and (blk.index, i) in self.exec_whole:
                # EXEC known whole here: its bit is 1 in every lane (each warp's own half of it)
                assert op.out is not None
                emit(f"  const b1 t{op.out.id} = true; /* EXEC whole */")
                name[op.out.id], ctype[op.out.id] = f"t{op.out.id}", "b1"
                continue
            lower = OPS[n]  # (KeyError: an op of no entry)
            if id(op) in self.fwd:  # bit `lane` of the ballot of b: b itself
                assert op.out is not None  # (a maskbit: a value op)
                name[op.out.id], ctype[op.out.id] = name[self.fwd[id(op)].id], "b1"
                continue
            lz = None
            if kind and any(x.id in kind for x in op.args):
                lz = lazy_rule(op)
                if lz is None:
                    for x in op.args:
                        whole(x)
            a = [name[x.id] for x in op.args]
            at = [ctype[x.id] for x in op.args]
            o = f"t{op.out.id}" if op.out is not None else None
            if lz == "any":  # a zero test: wave-wide or of each warp's half
                assert op.out is not None and o is not None  # (a cmp)
                i = 0 if op.args[0].id in kind else 1
                k = kind[op.args[i].id]
                own = {
                    "split": f"((u32)((u64)({a[i]}) >> (lane & 32u)) != 0u)",
                    "orh": f"((u32)({a[i]}) != 0u)",
                    "t0": f"((lane < 32u) && (u32)({a[i]}) != 0u)",
                    "t1": f"((lane >= 32u) && (u32)({a[i]}) != 0u)",
                }[k]
                neg = "!" if op.attrs["cond"] == "eq" else ""
                emit(f"  const b1 {o} = {neg}wl_any64({own}, wv + 1u);")
                pend[0] = pend[1] = 0  # bar.red orders memory as bar.sync does
                name[op.out.id], ctype[op.out.id] = o, "b1"
                continue
            if lz == "orh2":
                assert op.out is not None and o is not None  # (an or)
                i = 0 if kind[op.args[0].id] == "t0" else 1
                emit(f"  const u32 {o} = (lane < 32u) ? (u32)({a[i]}) : (u32)({a[1 - i]});")
                name[op.out.id], ctype[op.out.id] = o, "u32"
                kind[op.out.id] = "orh"
                continue
            if lz == "sset":
                set_sreg(op.attrs["reg"], a[0], True)
                continue
            ot = None
            if op.out is not None:
                ot = "i32" if n in I32_RESULT else ("b1" if n == "cmp" else op.out.type)
                if n == "cvt":
                    ot = op.attrs["to"]
                elif n == "bitcast":
                    ot = op.attrs["to"]
            e: str | None
            if n == "fma" and id(op) in inner_ops:
                e = f"__fmaf_rn({a[0]}, {a[1]}, {a[2]})"  # (tested at its chain's end)
            elif n == "fma" and any(x.id in inner_of for x in op.args):
                # a chain's end: a NaN here may have come from any fma of the chain -- all
                # of it again with each fma's NaN test
                emit(f"  f32 {o}n = __fmaf_rn({a[0]}, {a[1]}, {a[2]});")
                emit(f"  if ({o}n != {o}n) {o}n = {nanchain.exact(op, inner_of, name)};")
                e = f"{o}n"
            else:
                e = lower(self, st, op, a, at, o)
            if e is None:
                continue
            assert op.out is not None and o is not None and ot is not None  # (a value op: typed above)
            emit(f"  const {ot} {o} = {e};")
            name[op.out.id], ctype[op.out.id] = o, ot
            if lz in ("split", "t0", "t1", "orh"):
                kind[op.out.id] = lz
        for r, (v, m) in sorted(last.items()):
            emit(f"  v{r} = ({m}) ? (u32)({v}) : v{r};")
        term = blk.term
        k = term[0]
        for x in term[1:]:
            if hasattr(x, "id") and x.id in kind:
                whole(x)  # a setpc target (a branch condition is a b1)
        nxt = blk.successors() or ()
        if lazy and (k in ("barrier", "setpc") or any(bi in self.fixed for bi in nxt)):
            flush()  # entered from the phase switch / s_setpc: whole state
        if len(blk.ops) in counts:
            lanes_here = "32u" if (blk.index, len(blk.ops)) in self.exec_whole else f"(u32){pc}"
            emit(f"  lc += {lanes_here} * {counts[len(blk.ops)]}u;")
        # count and check the budget, then the terminator
        # 32-bit counts since the last check (cheap in loops), folded into the 64-bit totals
        # there; every lane of a wave gets here together (the counts are wave-uniform); in wave64
        # the two warps agree on stopping (one could see another wave's flag before the other)
        emit(f"  ic += {len(blk.instrs)}u;")
        emit(self.budget_check())

        def go(bi):
            if bi == blk.index and self._back is not None:
                return f"goto {self._back};"
            if bi == -1:
                return "goto WL_DONE;"
            if bi < 0:
                return f"{{ wl_flag(C, WL_BAD_ADDRESS, 0u, 0u, {blk.index}u); goto WL_STOP; }}"
            return f"goto B{bi};"

        if k in ("jump", "mode"):
            emit("  " + go(term[1]))
        elif k == "barrier":
            if term[1] < 0:
                emit("  " + go(term[1]))
            elif self.phases:
                emit(f"  pc = {term[1]}; goto WL_PARK;")
            else:
                # this wave's share of one round of barrier 0 (bar.red, as the park's; `done`
                # is false here, and not in a split build's part): the other waves of the group
                # meet it at their own s_barrier, ended ones at WL_PARK (kernel_source)
                emit(f"  (void)__syncthreads_and(0); {go(term[1])}")
        elif k == "branch":
            emit(f"  if ({name[term[1].id]}) {go(term[2])} else {go(term[3])}")
        elif k == "end":
            emit("  goto WL_DONE;")
        elif k == "setpc":
            tv = name[term[1].id]
            emit(f"  switch ((u64)({tv}) - {self.base:#x}ull) {{")
            for off, bi in sorted(self.p.block_at.items()):
                emit(f"    case {off:#x}ull: goto B{bi};")
            emit(
                f"    default: wl_flag(C, WL_BAD_JUMP, (u32)(u64)({tv}), (u32)((u64)({tv}) >> 32), {blk.index}u); goto WL_STOP;"
            )
            emit("  }")
        else:
            raise CudaUnsupported(f"terminator {k}")
        out.append("}")
        self.exit_pend = (pend[0], pend[1], frozenset(lazy))
        return out

    def budget_check(self) -> str:
        """The budget check after each block; in a straight kernel (``self.straight``) the macro
        WL_BCHK, which is this check in the build with budget checks and nothing in the other
        (kernel_source)."""
        if self.straight is not None:
            return "  WL_BCHK"
        stop = "nl == 0ull" if self.L == 32 else "wl_any64(nl == 0ull, wv + 1u)"
        return (
            f"  if (ic > rl) {{ icnt += ic; wl_lanes(C, lc); ic = lc = 0u; "
            f"const u64 nl = wl_check_(icnt); if ({stop}) goto WL_STOP; "
            f"rl = (u32)(nl - icnt); }}"
        )

    # ---------------------------------------------------------------------------- memory
    def lds_form(self, op, nb: int, addr: str) -> tuple[str, bool]:
        """(the bounds test to and with the access's mask, "" where none is needed; whether the
        access may be direct: whole words, or a u8/u16, at an address aligned to min(nb, 4))
        for an LDS access of nb bytes (decision 0047, amendment "LDS accesses in their direct
        form").  The same bytes as wl_inside + wl_read / wl_write in every case:
          * address proved inside (hi + nb <= the baked LDS size): no test;
          * else, LDS size baked: one 32-bit compare, a <= lds_bytes - nb (a is a u32, so
            this is wl_inside(a, nb, 0, lds_bytes)); no access fits an LDS smaller than nb;
          * else wl_inside as before;
        direct where the address is proved a multiple of min(nb, 4) and nb is 1, 2 or 4k."""
        v = self.lds_addr.get(id(op))
        lds = self.lds_bytes
        addr = f"(u32)({addr})"
        if v is not None and lds is not None and v.hi + nb <= lds:
            inside = ""
        elif lds is not None:
            inside = f" && ({addr} <= {lds - nb}u)" if lds >= nb else " && false"
        else:
            inside = f" && wl_inside((u64){addr}, {nb}u, 0ull, (u64)P[{P_LDS}])"
        direct = v is not None and (nb in (1, 2) or nb % 4 == 0) and ldsrange.align_of(v) >= min(nb, 4)
        return inside, direct

    def _lds_everywhere(self, op, nb: int, addr: str) -> str | None:
        """For a direct LDS load (its address aligned to min(nb, 4) in its lanes): an address
        the load may read at in every thread -- inside the (baked) LDS in every lane, active
        or not (lds_every), and aligned there (the address itself, or with its low bits
        cleared: equal in the load's lanes) -- or None."""
        ev = self.lds_every.get(id(op))
        lds = self.lds_bytes
        if ev is None or lds is None or ev.hi + nb > lds:
            return None
        al = min(nb, 4)
        return addr if ldsrange.align_of(ev) >= al or al == 1 else f"((u32)({addr}) & ~{al - 1}u)"

    def smem(self, off: str) -> str:
        """The u8* of the LDS byte at offset ``off`` (a u32 expression): wl_smem + off, or
        (WAVELIFT_CUDA_LDSBASE=kept) the same byte from the kept shared address wl_sb."""
        if self.lds_kept:
            return f"((u8*)__cvta_shared_to_generic(wl_sb + {off}))"
        return f"(wl_smem + {off})"

    def _lds_cells(self, addr: str, nb: int, const: bool) -> list[tuple[str, str]]:
        """(C type, lvalue) of each piece of the nb bytes at an aligned LDS address: one u8 or
        u16, or nb / 4 u32 words -- a direct access's reads (``const``) and writes (wl_read's,
        wl_write's bytes)."""
        at = self.smem(f"(u32)({addr})")
        q = "const " if const else ""
        if nb in (1, 2):
            t = "u8" if nb == 1 else "u16"
            return [(t, f"*({q}{t}*){at}")]
        return [("u32", f"(({q}u32*){at})[{k}]") for k in range(nb // 4)]

    def _lds_direct_read(self, addr: str, nb: int, o: str) -> str:
        """The nb bytes at the aligned LDS address as the load's words."""
        cells = self._lds_cells(addr, nb, True)
        return " ".join(
            f"{o}_w[{k}] = {c};" if t == "u32" else f"{o}_w[{k}] = (u32){c};"
            for k, (t, c) in enumerate(cells)
        )

    def _lds_direct_write(self, addr: str, nb: int, data) -> str:
        """The store's nb bytes at the aligned LDS address."""
        return " ".join(f"{c} = ({t})({d});" for (t, c), d in zip(self._lds_cells(addr, nb, False), data))

    def load(self, op, a, o, emit, before, after, sync, pend, member=None):
        sp, nb, words = op.attrs["space"], op.attrs["nbytes"], op.attrs["words"]
        emit(f"  u32 {o}_w[{max(words, 1)}];")
        emit(f"  for (u32 k = 0; k < {words}u; k++) {o}_w[k] = 0u;")
        if sp == "scratch":
            self.scratch_load(op, a, o, nb, emit, before, after)
            return
        if sp == "lds":
            before("load", "lds")
            inside, direct = self.lds_form(op, nb, a[0])
            every = self._lds_everywhere(op, nb, a[0]) if direct else None
            if every is not None:
                for k, (_, c) in enumerate(self._lds_cells(every, nb, True)):
                    if id(op) in self.lds_whole:
                        emit(f"  {o}_w[{k}] = (u32){c};")
                    else:
                        emit(f"  {{ const u32 x_ = (u32){c}; {o}_w[{k}] = ({a[1]}) ? x_ : 0u; }}")
            elif direct:
                emit(f"  if (({a[1]}){inside}) {{ {self._lds_direct_read(a[0], nb, o)} }}")
            else:
                emit(f"  if (({a[1]}){inside}) wl_read(wl_smem, (i64)(u32)({a[0]}), {nb}u, {o}_w, {words}u);")
            after("load", "lds")
            return
        if sp != "global":
            raise CudaUnsupported(f"load {sp}")
        k = self.pre.get(id(op))
        if k is not None:  # the words the host read before the launch, when it could
            pre_pend = list(pend)  # (no sync: a preloaded byte written means a rerun)
            # WL_PRELOADED (the module's first build): the host resolved every preload, each is
            # constants; else (Module.variant) each is checked, the load itself where unresolved
            read = f"if ({a[1]}) for (u32 k = 0; k < {words}u; k++) {o}_w[k] = WL_PRE[{self.pre_at[k]}u + k];"
            emit("#if WL_PRELOADED")
            emit(f"  {read}")
            emit("#else")
            emit(f"  if (WL_PO[{k}] >= 0) {{ {read} }} else {{")
            self._global_load(op, a, o, emit, before, after, sync, pend)
            emit("  }")
            emit("#endif")
            pend[:] = [x | y for x, y in zip(pre_pend, pend)]
            return
        self._global_load(op, a, o, emit, before, after, sync, pend, member)

    def _gload(self, j: int) -> str:
        """The call of slot j's load up to its address: with its hoisted window base, or not."""
        return f"wl_gload_b(C, wl_gp{j}, " if j in self.hoisted else "wl_gload(C, "

    def _global_load(self, op, a, o, emit, before, after, sync, pend, member=None):
        nb, words = op.attrs["nbytes"], op.attrs["words"]
        uniform = op.out.uniform
        j = self.slot[id(op)]
        rec = "(lane == 0u)" if uniform else "true"
        if member is not None:  # its group's test held: direct at the group's pointer; else
            g, c = member  # the per-access path (wl_gload's, after its direct form)
            before("load", "global")
            emit(f"  if ({g} & ({a[1]})) wl_gread_at({g}_b + ({c}ll), {nb}u, {o}_w);")
            emit(
                f"  if (({a[1]}) & !{g}) wl_gload_(C, (u64)({a[0]}), {nb}u, {o}_w, {words}u, {op.instr}u, {j}u, lane, {rec});"
            )
            after("load", "global")
            return
        mirrored = self.slots[j][1]
        if mirrored:  # the copy, when there is one: the same in every lane
            before("load", "global")
            saved = list(pend)  # the syncs below run only without the copy
            emit(f"  if (!wl_mirror((u64)({a[0]}), ({a[1]}), {j}u, {nb}u, {o}_w)) {{")
        if uniform and self.L == 64:
            if words > 64:
                raise CudaUnsupported("uniform load wider than 64 words")
            before("load", "global")
            emit(
                f"  if (lane == 0u) {{ {self._gload(j)}(u64)({a[0]}), ({a[1]}), {nb}u, {o}_w, {words}u, {op.instr}u, {j}u, 0u, true);"
                f" for (u32 k = 0; k < {words}u; k++) X[xo + k] = {o}_w[k]; }}"
            )
            sync()
            emit(f"  for (u32 k = 0; k < {words}u; k++) {o}_w[k] = X[xo + k];")
            emit(f"  xo ^= {XWORDS}u;")
            if mirrored:
                emit("  }")
                pend[:] = [x | y for x, y in zip(saved, pend)]
            return
        before("load", "global")
        if id(op) in self._direct:  # (the induction copy: every address it reads was tested)
            base = f"wl_gp{j}" if j in self.hoisted else f"wl_gbase(C, {j}u)"
            emit(
                f"  if ({a[1]}) {{ const u8* p_ = {base} + ((u64)({a[0]}) - WL_GB[{j}u]); WL_GLOBAL_AT(p_); wl_gread_at(p_, {nb}u, {o}_w); }}"
            )
        else:
            emit(
                f"  {self._gload(j)}(u64)({a[0]}), ({a[1]}), {nb}u, {o}_w, {words}u, {op.instr}u, {j}u, lane, {rec});"
            )
        after("load", "global")
        if mirrored:
            emit("  }")
            pend[:] = [x | y for x, y in zip(saved, pend)]

    # scratch (docs/decisions/0008-scratch.md, backends/numpy/scratch.py): wave-relative byte
    # addresses are u64 (a wild offset never wraps onto a valid one); an access is in range,
    # inside one dword and, in lane mode, in a dword whose lane bits name this lane
    def _scratch_ok(self, sa: str, nb: int) -> str:
        if nb > 4:
            raise CudaUnsupported("scratch access wider than a dword")
        if self.wb < nb:
            return "false"
        cond = f"wl_inside({sa}, {nb}u, 0ull, {self.wb}ull) && (((u32){sa} & 3u) + {nb}u <= 4u)"
        if self.mode == "lane":
            cond += f" && ((u32)(({sa} >> 2) % {self.L}ull) == lane)"
        return cond

    def _scratch_word(self, sa: str) -> str:
        if self.mode == "lane":
            return f"scr[(u32)(({sa} >> 2) / {self.L}ull)]"
        return f"C.gscr[(u32)({sa} >> 2)]"

    def _splits(self, op, nb: int) -> bool:
        """A scratch_* (flat scratch segment) access of 2..4 bytes: one that crosses a dword is
        carried out byte by byte in the lane's own linear space (runtime._scratch_split); MUBUF
        scratch keeps the alignment rule."""
        return 2 <= nb <= 4 and self.p.instructions[op.instr].encoding == "SCRATCH"

    def _scratch_read(self, op, sa: str, nb: int, dst: str) -> str:
        """C statement: dst = the nb bytes at sa (escape and 0 where out of reach)."""
        m = (1 << (8 * nb)) - 1
        esc = f"wl_escape(C, {op.instr}u, lane, {sa}, {KIND['scratch']}u);"
        whole = (
            f"if ({self._scratch_ok(sa, nb)}) {dst} = ({self._scratch_word(sa)} >> "
            f"(8u * ((u32){sa} & 3u))) & {m:#x}u; else {esc}"
        )
        if not self._splits(op, nb):
            return whole
        ba = "ba"
        byte = (
            f"const u64 ba = wl_sbyte({sa}, k, {4 * self.L}ull); "
            f"if ({self._scratch_ok(ba, 1)}) v |= (({self._scratch_word(ba)} >> (8u * ((u32)ba & 3u))) & 0xffu) << (8u * k); "
            f"else wl_escape(C, {op.instr}u, lane, ba, {KIND['scratch']}u);"
        )
        return (
            f"if (((u32){sa} & 3u) + {nb}u <= 4u) {{ {whole} }} "
            f"else {{ u32 v = 0u; for (u32 k = 0u; k < {nb}u; k++) {{ {byte} }} {dst} = v; }}"
        )

    def _merge(self) -> str:
        # lane mode: the thread's own words; wave mode: lanes may share a word (sub-dword stores)
        return "wl_smerge" if self.mode == "lane" else "wl_smerge_atomic"

    def _scratch_write(self, op, sa: str, nb: int, d: str) -> str:
        m = (1 << (8 * nb)) - 1
        esc = f"wl_escape(C, {op.instr}u, lane, {sa}, {KIND['scratch']}u);"
        whole = (
            f"if ({self._scratch_ok(sa, nb)}) {{ const u32 sh = 8u * ((u32){sa} & 3u); "
            f"{self._merge()}(&{self._scratch_word(sa)}, {m:#x}u << sh, (u32)({d}) << sh); }} else {esc}"
        )
        if not self._splits(op, nb):
            return whole
        byte = (
            f"const u64 ba = wl_sbyte({sa}, k, {4 * self.L}ull); "
            f"if ({self._scratch_ok('ba', 1)}) {{ const u32 sh = 8u * ((u32)ba & 3u); "
            f"{self._merge()}(&{self._scratch_word('ba')}, 0xffu << sh, (((u32)({d}) >> (8u * k)) & 0xffu) << sh); }} "
            f"else wl_escape(C, {op.instr}u, lane, ba, {KIND['scratch']}u);"
        )
        return (
            f"if (((u32){sa} & 3u) + {nb}u <= 4u) {{ {whole} }} "
            f"else {{ for (u32 k = 0u; k < {nb}u; k++) {{ {byte} }} }}"
        )

    def scratch_load(self, op, a, o, nb, emit, before, after):
        if self.mode == "wave":
            before("load", "scratch")
        emit(
            f"  if ({a[1]}) {{ const u64 sa = (u64)({a[0]}); {self._scratch_read(op, 'sa', nb, o + '_w[0]')} }}"
        )
        if self.mode == "wave":
            after("load", "scratch")

    def store(self, op, a, emit, before, after, member=None):
        sp, nb = op.attrs["space"], op.attrs["nbytes"]
        data = a[2:]
        if sp == "scratch":
            if len(data) != 1 or nb > 4:
                raise CudaUnsupported("scratch store wider than a dword")
            if self.mode == "wave":
                before("store", "scratch")
            emit(
                f"  if ({a[1]}) {{ const u64 sa = (u64)({a[0]}); {self._scratch_write(op, 'sa', nb, data[0])} }}"
            )
            if self.mode == "wave":
                after("store", "scratch")
            return
        before("store", sp)
        uniform = all(x.uniform for x in op.args)
        guard = "(lane == 0u) && " if uniform else ""
        dw = "{" + ", ".join(f"(u32)({d})" for d in data) + "}"
        if sp == "lds":
            inside, direct = self.lds_form(op, nb, a[0])
            if direct:
                emit(f"  if ({guard}({a[1]}){inside}) {{ {self._lds_direct_write(a[0], nb, data)} }}")
            else:
                emit(
                    f"  if ({guard}({a[1]}){inside}) "
                    f"{{ const u32 dw[{len(data)}] = {dw}; wl_write(wl_smem, (u8*)0, (i64)(u32)({a[0]}), {nb}u, dw); }}"
                )
        elif sp == "global" and member is not None:  # its group's test held: direct; else per access
            g, c = member
            emit(
                f"  if ({guard}({a[1]})) {{ const u32 dw[{len(data)}] = {dw}; if ({g}) wl_gwrite_at(C, {g}_b + ({c}ll), {nb}u, dw); "
                f"else wl_gstore_(C, (u64)({a[0]}), {nb}u, dw, {op.instr}u, {self.slot[id(op)]}u, lane); }}"
            )
        elif sp == "global":
            j = self.slot[id(op)]
            st = f"wl_gstore_b(C, wl_gp{j}, " if j in self.hoisted else "wl_gstore(C, "
            emit(
                f"  if ({guard}({a[1]})) {{ const u32 dw[{len(data)}] = {dw}; "
                f"{st}(u64)({a[0]}), {nb}u, dw, {op.instr}u, {j}u, lane); }}"
            )
        else:
            raise CudaUnsupported(f"store {sp}")
        after("store", sp)

    def atomic(self, op, a, at, o, emit, before, after):
        sp, bits = op.attrs["space"], op.attrs["bits"]
        code = ATOMIC_OPS.get(op.attrs["op"])
        if code is None or bits not in (32, 64):
            raise CudaUnsupported(f"atomic {op.attrs['op']}/{bits}")
        t = "u64" if bits == 64 else "u32"
        nb = bits // 8
        d = f"({t})({a[2]})"
        dv = self.lds_data.get(id(op)) if sp == "lds" and bits == 32 else None
        if dv is not None and dv.lo == dv.hi:  # one number in every lane the atomic runs in
            d = f"({t}){dv.lo}u"
        c = f"({t})({a[3]})" if len(a) > 3 else f"({t})0"
        unread = self.sync_commute and op.attrs["op"] in ("add", "sub") and op.out.id not in self.read_values
        rmw = "add" if unread else "rmw"
        before(rmw, sp)
        emit(f"  {t} {o} = 0;")
        if sp == "global":
            # the aligned cell the atomic works on: those are the bytes checked
            emit(
                f"  if ({a[1]}) {{ i64 ix; if (wl_res(C, (u64)({a[0]}) & ~{nb - 1}ull, {nb}u, &ix, {self.slot[id(op)]}u)) {{ "
                f"{o} = wl_atomic{bits}(({t}*)(C.arena + ix), {code}, {d}, {c}); "
                + (
                    f"wl_mark_bits(C.written, ix, {nb}u); }} "
                    if self.map_bits
                    else f"for (u32 k = 0; k < {nb}u; k++) C.written[ix + k] = 1u; }} "
                )
                + f"else wl_escape(C, {op.instr}u, lane, (u64)({a[0]}), {KIND['atomic']}u); }}"
            )
        elif sp == "lds":
            inside, _ = self.lds_form(op, nb, a[0])
            v = self.lds_addr.get(id(op))
            # the aligned cell; the address itself where it is proved a multiple of nb
            aligned = v is not None and ldsrange.align_of(v) >= nb
            cell = f"(u32)({a[0]})" if aligned else f"((u32)({a[0]}) & ~{nb - 1}u)"
            emit(f"  if (({a[1]}){inside}) {o} = wl_atomic{bits}(({t}*){self.smem(cell)}, {code}, {d}, {c});")
        elif sp == "scratch":
            if bits != 32:
                raise CudaUnsupported("64-bit atomic on scratch")
            fn = "wl_rmw32" if self.mode == "lane" else "wl_atomic32"
            emit(
                f"  if ({a[1]}) {{ const u64 sa = (u64)({a[0]}); if ({self._scratch_ok('sa', 4)}) "
                f"{o} = {fn}(&{self._scratch_word('sa')}, {code}, {d}, {c}); "
                f"else wl_escape(C, {op.instr}u, lane, sa, {KIND['atomic']}u); }}"
            )
        else:
            raise CudaUnsupported(f"atomic on {sp}")
        after(rmw, sp)

    # ---------------------------------------------------------------------------- kernel
    def _straight_header(self) -> list[str]:
        """A straight kernel's defines (WAVELIFT_CUDA_BUDGET=straight; source_straight): its
        longest path, and WL_BCHK, the budget check of every block -- nothing unless the source
        is built with WL_BUDGET_CHECKS 1, the build the runtime launches when the wave's budget is
        below that path (Module.variant)."""
        if self.straight is None:
            return []
        straight, self.straight = self.straight, None
        check = self.budget_check().strip()
        self.straight = straight
        return [
            f"#define WL_STRAIGHT {straight}u",
            "#ifndef WL_BUDGET_CHECKS",
            "#define WL_BUDGET_CHECKS 0",
            "#endif",
            "#if WL_BUDGET_CHECKS",
            f"#define WL_BCHK {check}",
            "#else",
            "#define WL_BCHK",
            "#endif",
        ]

    def _group_index(self, rel: str) -> str:
        """The flat group index g of a thread's slot, ``rel`` past the launch's first
        (group_base): in 32 bits where narrow (the same number: it fits), else in 64."""
        if self.narrow:
            return f"(u64)((u32)group_base + (u32)({rel}))"
        return f"group_base + {rel}"

    def _group_ids(self) -> list[str]:
        """The prologue's gid_x, gid_y, gid_z from the flat group index g.  With the grid's
        dimensions baked (griddim; a group's g < gx * gy * gz): a 1-D grid's g is its x (g < gx <
        2^32), a 2-D grid's q = g / gx its y (< gy) -- no second division; a slot past the last
        group (decision 0046) gets other ids than before, but it is done and reads none."""
        d = f"P[{P_DIV}], P[{P_DIV + 1}]"
        if self.griddim == 1:
            return ["  gid_x = (u32)g; gid_y = 0u; gid_z = 0u;"]
        if self.griddim == 2:
            return [
                f"  if (g >> 32 == 0ull) {{ const u32 q = wl_udiv((u32)g, {d}); gid_x = (u32)g - q * gx; gid_y = q; gid_z = 0u; }}",
                "  else { gid_x = (u32)(g % gx); gid_y = (u32)(g / gx); gid_z = 0u; }",
            ]
        return [
            f"  if (g >> 32 == 0ull) {{ const u32 q = wl_udiv((u32)g, {d}), "
            f"r = wl_udiv(q, P[{P_DIV + 2}], P[{P_DIV + 3}]);",
            "    gid_x = (u32)g - q * gx; gid_y = q - r * gy; gid_z = r; }",
            "  else { gid_x = (u32)(g % gx); gid_y = (u32)((g / gx) % gy); gid_z = (u32)(g / ((u64)gx * gy)); }",
        ]

    def kernel_source(self) -> str:
        L = self.L
        nmem = sum(op.name in ("load", "store", "atomic") for b in self.p.blocks for op in b.ops)
        # inlined memory helpers are fastest, but NVVM's time grows steeply with the number of
        # inlined copies (an -O0 program: 20 s -> 4 s); big programs call them instead
        memfn = "__forceinline__" if nmem <= INLINE_MEMORY_OPS else "__noinline__"
        nslot = len(self.slots)
        N, S = self.groups, self.slot_threads
        # the wave's index in its workgroup: wv itself with one workgroup a block; with several
        # (decision 0046) wv is the wave's index in the CUDA block (named barriers, X, wave-mode
        # scratch) and wg its index in its group (EXEC, TG_SIZE, C.wave, done, the count)
        gw = "wv" if N == 1 else "wg"
        # a slot inside the dispatch: its index below the group total the host made (P_NTOTAL)
        in_grid = (
            f"(u32)g < P[{P_NTOTAL}]"
            if self.narrow
            else f"g < ((u64)P[{P_NTOTAL}] | (u64)P[{P_NTOTAL + 1}] << 32)"
        )
        wide = count_slots()
        # the counts added once a CUDA block (stats_form: block) where every thread of it reaches
        # the end: no s_barrier rounds, no LDS beside the counts' own
        stats = stats_form(self.L, not self.phases and not self.has_barrier and not uses_space(self.p, "lds"))
        lines = [
            PRELUDE,
            f"#define WL_MEMFN {memfn}",
            f"#define WL_NSLOT {max(nslot, 1)}u",
            f"#define WL_NGUESS {max(min(nslot, MAX_GUESSES), 1)}u",
            f"#define WL_MIRROR_WORDS {MIRROR_BYTES // 4 if any(u for _, u in self.slots) else 1}u",
            f"#define WL_NPRE {max(len(self.pre), 1)}u",
            f"#define WL_PRE_WORDS {preload.PRELOAD_WORDS if self.pre else 1}u",
            "#ifndef WL_PRELOADED",
            "#define WL_PRELOADED 1",
            "#endif",
            *([f"#define WL_GPB {N}u"] if N > 1 else []),
            *self._straight_header(),
            # (kernel.h: wl_gload / wl_gstore's rare path without the guess's second test)
            *(["#define WL_RETEST 0"] if settings.get("WAVELIFT_CUDA_RETEST") == "off" else []),
            *(["#define WL_MAP_BITS 1"] if self.map_bits else []),
            # (kernel.h: the counts in WL_WIDE's slots, folded into the report's after the launch)
            *([f"#define WL_WIDE_SLOTS {wide}u"] if wide != COUNT_SLOTS else []),
            # (mapbits.h: a unit-stride warp store marks its one range, 0049's amendment h139; a
            # group of lanes storing one aligned map word sets it, h160 -- the default)
            *(["#define WL_MARK_SPAN 1"] if self.map_bits and mark_form() == "span" else []),
            *(["#define WL_MARK_GROUP 0"] if self.map_bits and mark_form() != "group" else []),
            # (mapbits.h: every map word by atomicOr, WAVELIFT_CUDA_MAPFILL=atomic; 0049, session 52)
            *(["#define WL_MAP_FILL_STORE 0"] if self.map_bits and not map_fill_store() else []),
            _CTX,
            # (compile.py defines WL_MIN_BLOCKS; generate() WL_BLOCK_THREADS)
            "#ifndef WL_MIN_BLOCKS",
            "#define WL_MIN_BLOCKS 1",
            "#endif",
            "#ifndef WL_BLOCK_THREADS",
            "#define WL_BLOCK_THREADS 1024",
            "#endif",
            'extern "C" __global__ void __launch_bounds__(WL_BLOCK_THREADS, WL_MIN_BLOCKS) wl_main(',
            "    u8* __restrict__ arena, u8* __restrict__ written,",
            "    const u64* __restrict__ wstart, const u64* __restrict__ wend,",
            "    const i64* __restrict__ woff, const u64* __restrict__ wavebase,",
            "    u32* gscr, u64 group_base) {",
            "  extern __shared__ __align__(16) u8 wl_smem[];",
            f"  const u32 WV = {L}u;",
            # (a thread index is below the launch's block, which __launch_bounds__ holds it to:
            # the compiler then knows, e.g., that a one-group block has no wave past its group's)
            "  WL_ASSUME(threadIdx.x < WL_BLOCK_THREADS);",
            # (narrow: every index the launch's slots take fits 32 bits, so g's upper word is 0
            # and the compiler drops the 64-bit forms of the group ids, wl_in and C.wave)
            *(
                [f"  const u64 g = {self._group_index('(u64)blockIdx.x')};"]
                if N == 1
                else [
                    # the group's slot in the block; the launch's groups are group_base on, in
                    # blocks of WL_GPB (every launch but the last a multiple of it: runtime._shape)
                    f"  const u32 wl_gs = threadIdx.x / {S}u;",
                    f"  const u64 g = {self._group_index('(u64)blockIdx.x * WL_GPB + wl_gs')};",
                ]
            ),
            f"  const u32 gx = P[{P_NGROUPS}], gy = P[{P_NGROUPS + 1}];",
            # the group's x, y, z from its flat index: by multiplying with the divisors'
            # magic numbers (div_magic) while the index fits 32 bits
            "  u32 gid_x, gid_y, gid_z;",
            *self._group_ids(),
            f"  gid_x += P[{P_GSTART}]; gid_y += P[{P_GSTART + 1}]; gid_z += P[{P_GSTART + 2}];",
            f"  const bool ptg = P[{P_PARTIAL_TG}] != 0u;",
            f"  const u32 tx = (ptg && gid_x == P[{P_GEND}] - 1u && P[{P_PARTIAL}] > 0u) ? P[{P_PARTIAL}] : P[{P_BLOCK}];",
            f"  const u32 ty = (ptg && gid_y == P[{P_GEND + 1}] - 1u && P[{P_PARTIAL + 1}] > 0u) ? P[{P_PARTIAL + 1}] : P[{P_BLOCK + 1}];",
            f"  const u32 tz = (ptg && gid_z == P[{P_GEND + 2}] - 1u && P[{P_PARTIAL + 2}] > 0u) ? P[{P_PARTIAL + 2}] : P[{P_BLOCK + 2}];",
            "  const u32 threads = tx * ty * tz;",
            *(
                [
                    "  const u32 wpg = (threads + WV - 1u) / WV;",
                    "  const u32 t = threadIdx.x, wv = t / WV, lane = t % WV;",
                ]
                if N == 1
                else [
                    # a slot past the dispatch's last group has no wave (done, counts nothing)
                    f"  const bool wl_in = {in_grid};",
                    "  const u32 wpg = wl_in ? (threads + WV - 1u) / WV : 0u;",
                    f"  const u32 t = threadIdx.x - wl_gs * {S}u, wg = t / WV, lane = t % WV, wv = threadIdx.x / WV;",
                ]
            ),
            "  WlCtx C;",
            f"  C.W.start = wstart; C.W.end = wend; C.W.off = woff; C.W.n = P[{P_NWIN}];",
            "  C.arena = arena; C.written = written;",
            *(f"  u8* wl_gp{j} = wl_gbase(C, {j}u); WL_KEEP(wl_gp{j});" for j in sorted(self.hoisted)),
            *([f"  {split.LDS_BASE}"] if self.lds_kept else []),
            # (without partial groups every group has the block's number of waves)
            f"  C.wave = (ptg ? {'wavebase[g]' if N == 1 else '(wl_in ? wavebase[g] : 0ull)'} : "
            f"g * ((P[{P_BLOCK}] * P[{P_BLOCK + 1}] * P[{P_BLOCK + 2}] + WV - 1u) / WV)) + {gw};",
            f"  C.gscr = gscr + ((u64)blockIdx.x * (blockDim.x / WV) + wv) * {max(self.wb // 4, 1)}ull;",
            f"  u32* X = (u32*)(wl_smem + P[{P_XOFF}]) + wv * {2 * XWORDS}u; (void)X;",
            "  u32 xo = 0u; (void)xo;",
        ]
        if self.mode == "lane" and uses_space(self.p, "scratch"):
            nw = max(self.wb // 4 // L, 1)
            lines.append(f"  u32 scr[{nw}];")
            lines.append(f"  for (u32 k = 0; k < {nw}u; k++) scr[k] = 0u;")
        for r in self.sregs:
            lines.append(f"  u32 s{r} = 0u;")
        for r in self.vregs:
            lines.append(f"  u32 v{r} = 0u;")
        for r in self.sregs:
            if r < 16:
                lines.append(f"  if ({r}u < P[{P_NUSER}]) s{r} = P[{P_USER + r}];")
            if r < 128:
                lines.append(
                    f"  if (P[{P_SYS}] == {r}u) s{r} = gid_x; if (P[{P_SYS + 1}] == {r}u) s{r} = gid_y; "
                    f"if (P[{P_SYS + 2}] == {r}u) s{r} = gid_z; if (P[{P_SYS + 3}] == {r}u) s{r} = 0u; "
                    f"if (P[{P_TG_SIZE}] == {r}u) s{r} = wpg | ({gw} << 6) | (P[{P_TG_WID20}] ? ({gw} << 20) : 0u);"
                )
        lines += [
            f"  {{ const u32 first = {gw} * WV; const u32 nact = threads > first ? min(threads - first, WV) : 0u;",
            "    const u64 m = nact >= 64u ? ~0ull : ((1ull << nact) - 1ull);",
            f"    s{EXEC_LO} = (u32)m; s{EXEC_HI} = {'(u32)(m >> 32)' if L == 64 else '0u'}; }}",
            f"  s{MODE_REG} = P[{P_MODE}];",
            "  { const u32 lx = t % tx, ly = (t / tx) % ty, lz = t / (tx * ty);",
            f"    if (P[{P_GFX11}]) v0 = lx | (ly << 10) | (lz << 20);",
            f"    else {{ v0 = lx; if (P[{P_TIDIG}] >= 1u) v1 = ly; if (P[{P_TIDIG}] >= 2u) v2 = lz; }} }}",
            "  u64 icnt = 0ull;",
            f"  u32 ic = 0u, lc = 0u, rl = P[{P_BUDGET + 1}] == 0u && P[{P_BUDGET}] < (1u << 20) ? P[{P_BUDGET}] : (1u << 20);",
            f"  bool done = {gw} >= wpg;",
            "  int pc = 0; (void)pc;",
            split.PROLOGUE_END,
        ]
        if self.phases:
            lines.append("  for (;;) {")
            lines.append("  if (!done) {")
            lines.append("  switch (pc) {")
            for b in self.p.blocks:
                lines.append(f"    case {b.index}: goto B{b.index};")
            lines.append("    default: goto WL_STOP;")
            lines.append("  }")
        else:
            lines.append("  if (done) goto WL_PARK;")
        lines.append(split.BLOCKS)
        for i, e in enumerate(self.sync_entries()):
            lines += (
                self._versioned(i, e) if self.p.blocks[i].index in self.induction else self._lower(i, e)[0]
            )
        lines.append(split.BLOCKS_END)
        if self.uses_trig_preop:
            lines[1:1] = [trig_preop_source()]
        lines += ["WL_STOP:", "  done = true; goto WL_PARK;", "WL_DONE:", "  done = true; goto WL_PARK;"]
        if self.phases:
            lines += ["  }", "WL_PARK:", "  if (__syncthreads_and(done)) break;", "  }"]
        elif self.has_barrier:
            # an ended wave takes part in every later round of barrier 0 until all have ended
            # (a round whose every thread is here: each passes done); so no wave waits on one
            # that ended, as on the hardware, and none can hang
            lines += ["WL_PARK:", "  for (;;) { if (__syncthreads_and(done)) break; }"]
        else:
            lines += ["WL_PARK:"]
        if stats == "block":
            # every thread of the block gets here: one pair of atomics a CUDA block after a
            # barrier (0009's amendment h146)
            lines += ["  wl_count_block(lane < 32u, icnt + ic, lc);", "}"]
        else:
            # (STATS=pair: both counts in one atomic instruction of two lanes; 0009's amendment h162)
            count = "wl_count_pair" if stats == "pair" else "wl_count_"
            lines += [f"  if ({gw} < wpg) {count}(C.wave, lane, icnt + ic, lc);", "}"]
        return "\n".join(lines) + "\n"


def loop_blocks(program: Program) -> set[int]:
    """The blocks of ``program`` that can run again without leaving the kernel: on a cycle of
    its gotos (jump, branch, barrier), or a target of s_setpc (any of them may be)."""
    by = {b.index: b for b in program.blocks}
    succ: dict[int, list[int]] = {}
    for b in program.blocks:
        succ[b.index] = [x for x in b.successors() or () if x in by]
    out = (
        {bi for bi in program.block_at.values() if bi in by}
        if any(b.term[0] == "setpc" for b in program.blocks)
        else set()
    )
    # on a cycle: a self-goto, or a strongly connected component of more than one block
    # (Kosaraju: finishing order on the gotos, then components on the reversed ones)
    order: list[int] = []
    seen: set[int] = set()
    for root in by:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(succ[root]))]
        while stack:
            bi, it = stack[-1]
            nx = next((x for x in it if x not in seen), None)
            if nx is None:
                order.append(bi)
                stack.pop()
            else:
                seen.add(nx)
                stack.append((nx, iter(succ[nx])))
    pred: dict[int, list[int]] = {bi: [] for bi in by}
    for bi, xs in succ.items():
        for x in xs:
            pred[x].append(bi)
    comp: dict[int, int] = {}
    for root in reversed(order):
        if root in comp:
            continue
        members, work = [root], [root]
        comp[root] = root
        while work:
            for x in pred[work.pop()]:
                if x not in comp:
                    comp[x] = root
                    members.append(x)
                    work.append(x)
        if len(members) > 1 or root in succ[root]:
            out.update(members)
    return out


def straight_path(program: Program) -> int | None:
    """The most instructions a wave counts on any path through ``program`` from its first block
    (the sum of the len(instrs) of the blocks it runs, as block_source's ``ic += n``), or None
    where a block can run twice or be reached other than by the gotos followed here (a cycle,
    s_setpc, s_barrier) or the program is empty."""
    blocks = program.blocks
    if not blocks:
        return None
    by = {b.index: b for b in blocks}
    most: dict[int, int] = {}
    on: set[int] = set()

    def walk(bi: int) -> int | None:
        if bi in most:
            return most[bi]
        if bi in on or bi not in by:  # a cycle (or a goto to no block: never generated)
            return None
        b = by[bi]
        nxt = None if b.term[0] == "barrier" else b.successors()
        if nxt is None:  # setpc, barrier, anything else
            return None
        on.add(bi)
        best = 0
        for x in nxt:
            if x < 0:  # the wave ends (done, or a flag)
                continue
            r = walk(x)
            if r is None:
                return None
            best = max(best, r)
        on.discard(bi)
        most[bi] = len(b.instrs) + best
        return most[bi]

    return walk(blocks[0].index)


class _Blk:
    """What the lowering of one block's ops shares with each op's entry of OPS: the block, the
    statement writers and sync state of Lowering.block_source, and its value maps."""

    def __init__(
        self, blk, emit, sync, before, after, set_sreg, pend, src, defs, last, name, ctype, words, kind
    ) -> None:
        self.blk, self.emit, self.sync, self.before, self.after = blk, emit, sync, before, after
        self.set_sreg, self.pend, self.src, self.defs, self.last = set_sreg, pend, src, defs, last
        self.name, self.ctype, self.words, self.kind = name, ctype, words, kind
        self.consts: dict[int, int] = {}
        self.fconsts: dict[int, str] = {}  # f32 constants of the block: value id -> its literal
        self.spans: dict[int, str] = {}  # id(Span) -> the name of its test in this block
        self.from_reg: dict[int, tuple] = {}
        self.ver: dict[int, int] = {}
        self.lazy: set[int] = set()


# Each op's lowering in a block: (lowering, block state, op, argument expressions, their C types,
# result name) -> the value's expression (block_source declares the result with it), or None
# when it wrote its own statements (and named its result).


def _value(low, b, op, a, at, o):
    e = low.value_expr(op, a, at)
    t = op.type
    if op.name == "const" and not is_float(t) and t != "b1":
        assert op.out is not None
        v = op.attrs["value_np"] if "value_np" in op.attrs else op.attrs["value"]  # (passes: value_np)
        b.consts[op.out.id] = int(v) & ((1 << BITS[t]) - 1)
    elif op.name == "const" and t == "f32":
        assert op.out is not None
        b.fconsts[op.out.id] = e
    return e


def _fminmax(low, b, op, a, at, o):
    # an f32 min/max with a constant operand the passes named (a const op of the block): the
    # plain compare of minmax_const where it is exact, as for a literal operand (2 SASS
    # instructions, not wl_fmin/wl_fmax's 8: NaN and signed-zero tests)
    lits = [b.fconsts.get(x.id, s) for x, s in zip(op.args, a)]
    return minmax_const(op.name, lits) or _value(low, b, op, a, at, o)


def _add(low, b, op, a, at, o):
    if op.type == "u64" and all(_zext32(b.defs.get(x.id)) for x in op.args):
        # (u64)a + (u64)b of two u32 (v_add_co_u32 and kin): the carry as a compare,
        # which the compiler makes one add with carry-out
        return "wl_addc({}, {})".format(*(b.name[b.defs[x.id].args[0].id] for x in op.args))
    return _value(low, b, op, a, at, o)


def _sget(low, b, op, a, at, o):
    r = op.attrs["reg"]
    if r in b.lazy:
        assert op.out is not None
        b.kind[op.out.id] = f"t{r & 1}"
        b.from_reg[op.out.id] = (r, b.ver.get(r, 0))
    return f"s{r}"


def _vget(low, b, op, a, at, o):
    assert op.out is not None
    if b.src is not None and op.out.id in b.src:
        return f"(u32)({b.name[b.src[op.out.id].id]})"
    return f"v{op.attrs['reg']}"


def _ballot(low, b, op, a, at, o):
    if low.L == 32:
        return f"((u64)__ballot_sync(WL_FULL, ({a[0]})))"
    # this warp's half, in its place (lazy wave64 masks)
    assert op.out is not None
    b.kind[op.out.id] = "split"
    return f"((u64)__ballot_sync(WL_FULL, ({a[0]})) << (lane & 32u))"


def _shuffle(low, b, op, a, at, o):
    """readlane and shuffle: the source lane's value."""
    if low.L == 32:
        return f"__shfl_sync(WL_FULL, (u32)({a[0]}), (i32)((u32)({a[1]}) & 31u))"
    assert op.out is not None and o is not None
    b.emit(f"  X[xo + lane] = (u32)({a[0]});")
    b.sync()
    b.emit(f"  const u32 {o} = X[xo + ((u32)({a[1]}) & 63u)]; xo ^= {XWORDS}u;")
    b.name[op.out.id], b.ctype[op.out.id] = o, "u32"
    return None


def _permute(low, b, op, a, at, o):
    assert op.out is not None and o is not None
    emit, sync, L = b.emit, b.sync, low.L
    sync()
    emit("  ((i32*)X)[64u + lane] = -1;")
    sync()
    emit(f"  const u32 {o}_d = (u32)({a[1]}) % {L}u;")
    emit(f"  if ({a[2]}) atomicMax((i32*)X + 64u + {o}_d, (i32)lane);")
    sync()
    emit(f"  if (({a[2]}) && ((i32*)X)[64u + {o}_d] == (i32)lane) X[{o}_d] = (u32)({a[0]});")
    sync()
    emit(f"  const u32 {o} = (((i32*)X)[64u + lane] >= 0) ? X[lane] : 0u;")
    sync()
    b.name[op.out.id], b.ctype[op.out.id] = o, "u32"
    return None


def _load(low, b, op, a, at, o):
    assert op.out is not None and o is not None
    low.span_test(op, b)
    low.load(op, a, o, b.emit, b.before, b.after, b.sync, b.pend, low.span_member(op, b))
    b.name[op.out.id], b.ctype[op.out.id] = o, "u32"
    b.words[op.out.id] = op.attrs["words"]
    return None


def _atomic(low, b, op, a, at, o):
    assert op.out is not None and o is not None
    low.atomic(op, a, at, o, b.emit, b.before, b.after)
    b.name[op.out.id], b.ctype[op.out.id] = o, op.type
    return None


def _sset(low, b, op, a, at, o):
    b.set_sreg(op.attrs["reg"], a[0], False)
    return None


def _vset(low, b, op, a, at, o):
    r = op.attrs["reg"]
    if b.src is not None:
        b.last[r] = (a[0], a[1])
    else:
        b.emit(f"  v{r} = ({a[1]}) ? (u32)({a[0]}) : v{r};")
    return None


def _store(low, b, op, a, at, o):
    low.span_test(op, b)
    low.store(op, a, b.emit, b.before, b.after, low.span_member(op, b))
    return None


def _refuse_if(low, b, op, a, at, o):
    # wave-uniform: every lane of the wave stops together (a lane that left alone
    # would hang the next wave sync); the host names the instruction (runtime.py)
    rk = low.refusal_k[id(op)]
    b.emit(
        f"  if ({low.wave_any(f'({a[0]})')}) {{ wl_flag(C, WL_REFUSE, {op.instr}u, {rk}u, {b.blk.index}u); goto WL_STOP; }}"
    )
    return None


# op name -> its lowering in a block (Lowering.block_source): every op of ir/ops.py, one entry
# each (a missing one is a KeyError, which tests/ir/test_ops.py's probe reports; an op this
# backend declares unsupported would be an entry raising CudaUnsupported with its name).  The
# pure value ops are cfamily's expressions (VALUE_EXPR); the others are state, cross-lane and
# memory ops the kernel lowers itself.
OPS: dict[str, Callable[..., str | None]] = {
    **{n: _value for n in VALUE_EXPR},
    "add": _add,
    "fmin": _fminmax,
    "fmax": _fminmax,
    "sget": _sget,
    "vget": _vget,
    "lane_id": lambda low, b, op, a, at, o: "lane",
    # a pass op (ir/passes PASS_OPS): a uniform value for every lane -- each thread holds it
    "lanes": lambda low, b, op, a, at, o: f"({a[0]})",
    "exec": lambda low, b, op, a, at, o: low.exec_bit(),
    "ballot": _ballot,
    "readlane": _shuffle,
    "shuffle": _shuffle,
    "permute": _permute,
    "load": _load,
    "word": lambda low, b, op, a, at, o: f"{a[0]}_w[{op.attrs['k']}]",
    "atomic": _atomic,
    "sset": _sset,
    "vset": _vset,
    "store": _store,
    "refuse_if": _refuse_if,
}


_CTX = "\n" + header("kernel.h", __package__).replace("P_WORDS", str(P_WORDS)).replace(
    "CONST_WINDOWS", str(CONST_WINDOWS)
).replace("P_BUDGET", str(P_BUDGET)).replace("MAPBITS_H", header("mapbits.h", __package__))


# registers that may hold a lazy wave64 mask half (block_source): s0-s105, VCC, EXEC -- not M0,
# SCC, MODE or the hardware registers, which the lowering reads itself or that hold no masks
LAZY_REGS = frozenset(range(106)) | {VCC_LO, VCC_HI, EXEC_LO, EXEC_HI}

# ops with effects beyond their value (loads and atomics can escape): always lowered
_EFFECTS = {"sset", "vset", "store", "refuse_if", "load", "atomic"}


def _plan(program: Program, wave_size: int) -> tuple[set, dict]:
    """What the lowering may leave out, so that no cross-lane exchange (a warp vote; in wave64
    a shared-memory round with a named barrier) is made for a mask nobody reads -- typically
    VCC written by v_add_co_u32 and read only by the next v_add_co_ci_u32:
      * fwd: maskbit ops that read bit `lane` of a ballot of b made earlier in the block (through
        lo32/hi32, an sset and sget of the same register version, pack64 or a zero-extension):
        op id -> b;
      * skip: sset ops whose register no later op or block reads (backward liveness over the
        blocks; EXEC and MODE are always live, read by the lowering itself; a setpc reaches
        every block) and value ops (ballot, readlane, shuffle, permute and the pure ones) whose
        value no kept op uses.  Loads, atomics, stores, vset and refuse_if always stay."""
    blocks = program.blocks
    fwd: dict = {}
    for blk in blocks:
        part: dict = {}  # u32 value id -> (b1 Value, 0 low / 1 high half of its ballot)
        ball: dict = {}  # u64 value id -> b1 Value whose ballot it is
        reg: dict = {}  # SGPR -> value id written last in this block
        for op in blk.ops:
            n, a = op.name, op.args
            if n == "ballot":
                assert op.out is not None  # (here and below: value ops)
                ball[op.out.id] = a[0]
            elif n in ("lo32", "hi32") and a[0].id in ball:
                assert op.out is not None
                part[op.out.id] = (ball[a[0].id], int(n == "hi32"))
            elif n == "sset":
                reg[op.attrs["reg"]] = a[0].id
            elif n == "sget" and reg.get(op.attrs["reg"]) in part:
                assert op.out is not None
                part[op.out.id] = part[reg[op.attrs["reg"]]]
            elif (
                n == "cvt"
                and op.attrs.get("to") == "u64"
                and op.type == "u32"
                and wave_size == 32
                and part.get(a[0].id, (None, 1))[1] == 0
            ):
                assert op.out is not None
                ball[op.out.id] = part[a[0].id][0]
            elif (
                n == "pack64"
                and a[0].id in part
                and a[1].id in part
                and part[a[0].id][0] is part[a[1].id][0]
                and (part[a[0].id][1], part[a[1].id][1]) == (0, 1)
            ):
                assert op.out is not None
                ball[op.out.id] = part[a[0].id][0]
            elif n == "maskbit" and a[0].id in ball:
                fwd[id(op)] = ball[a[0].id]
    always = {EXEC_LO, EXEC_HI, MODE_REG}
    nb = len(blocks)

    def succ(blk):
        nxt = blk.successors()
        return None if nxt is None else [x for x in nxt if 0 <= x < nb]

    def scan(blk, live_out):
        """-> (registers live at the block's start, ops it may skip) given those live after."""
        live = set(live_out)
        need = {x.id for x in blk.term if hasattr(x, "id")}
        skip = set()
        for op in reversed(blk.ops):
            n = op.name
            if n == "sset":
                r = op.attrs["reg"]
                if r not in live and r not in always:
                    skip.add(id(op))
                    continue
                live.discard(r)
            elif n not in _EFFECTS and op.out.id not in need:
                skip.add(id(op))
                continue
            if n == "sget":
                live.add(op.attrs["reg"])
            args = (fwd[id(op)],) if id(op) in fwd else op.args
            need.update(x.id for x in args)
        return live, skip

    every = set(range(NUM_SREGS))
    live_in: list[set[int]] = [set() for _ in blocks]
    changed = True
    while changed:
        changed = False
        for i in reversed(range(nb)):
            sc = succ(blocks[i])
            out = every if sc is None else set().union(*(live_in[j] for j in sc))
            li, _ = scan(blocks[i], out)
            if li != live_in[i]:
                live_in[i], changed = li, True
    skip: set = set()
    for blk in blocks:
        sc = succ(blk)
        out = every if sc is None else set().union(*(live_in[j] for j in sc))
        skip |= scan(blk, out)[1]
    return skip, fwd


def mirrors(slots, hints, lim, starts, ends, offs, arena, enabled: bool = True):
    """-> (WL_GM, WL_MIRROR words, [(arena offset, bytes) of each copied window]): copies of the
    guessed windows of the mirrorable slots (uniform whole-word loads), first come first served
    while they fit in MIRROR_BYTES; each copy starts at an offset congruent to its window's
    address mod 8, so aligned loads read aligned words.  ``lim`` is guesses()' limits (0: no
    guess).  Not ``enabled``: no copies (the rerun after a copied window was written)."""
    n = min(len(slots), MAX_GUESSES)
    gm = np.full(max(n, 1), -1, np.int32)
    buf = np.zeros(MIRROR_BYTES, np.uint8)
    done: dict = {}
    pos = 0
    for j in range(n if enabled else 0):
        if not slots[j][1] or int(lim[j]) == 0:
            continue
        k = int(hints[j])
        if k not in done:
            size = int(ends[k]) - int(starts[k])
            at = -(-pos // 8) * 8 + (int(starts[k]) & 7)
            if at + size > MIRROR_BYTES:
                continue
            o = int(offs[k])
            buf[at : at + size] = arena[o : o + size]
            done[k] = (at, o, size)
            pos = at + size
        gm[j] = done[k][0]
    return gm, buf.view(np.uint32), [(o, size) for _, o, size in done.values()]


def param_words(cfg, nwin: int = 0, budget: int = 0, xoff: int = 0) -> np.ndarray:
    """P[]: the dispatch's numbers as the kernel reads them (constant memory, runtime.py)."""
    P = np.zeros(P_WORDS, np.uint32)
    user = [int(v) & 0xFFFFFFFF for v in cfg.user_sgprs][:16]
    P[P_USER : P_USER + len(user)] = user
    P[P_NUSER] = len(user)
    sysr = cfg.system_sgprs
    for i, k in enumerate(("workgroup_id_x", "workgroup_id_y", "workgroup_id_z", "scratch_wave_offset")):
        P[P_SYS + i] = sysr[k] if k in sysr else 0xFFFFFFFF
    P[P_TG_SIZE] = sysr.get("tg_size", 0xFFFFFFFF)  # the same value as NumPy's (0011)
    P[P_TG_WID20] = int(cfg.target == "gfx1030")
    P[P_NGROUPS : P_NGROUPS + 3] = cfg.num_groups
    P[P_GSTART : P_GSTART + 3] = cfg.group_start
    P[P_BLOCK : P_BLOCK + 3] = cfg.block
    P[P_PARTIAL : P_PARTIAL + 3] = cfg.partial
    P[P_PARTIAL_TG] = int(bool(cfg.partial_tg))
    P[P_GEND : P_GEND + 3] = cfg.group_end
    P[P_MODE] = cfg.float_mode | (int(cfg.dx10_clamp) << 8) | (int(cfg.ieee_mode) << 9)
    P[P_TIDIG] = cfg.tidig_comp_cnt
    P[P_GFX11] = int(cfg.packed_local_ids)
    P[P_LDS] = cfg.lds_bytes
    P[P_NWIN] = nwin
    P[P_BUDGET] = budget & 0xFFFFFFFF
    P[P_BUDGET + 1] = (budget >> 32) & 0xFFFFFFFF
    P[P_XOFF] = xoff
    gx, gy, gz = cfg.num_groups
    P[P_DIV : P_DIV + 4] = div_magic(gx) + div_magic(gy)
    P[P_GRIDDIM] = grid_dims(cfg.num_groups)
    total = (int(gx) * int(gy) * int(gz)) & 0xFFFFFFFFFFFFFFFF  # (the kernel's u64 product was)
    P[P_NTOTAL] = total & 0xFFFFFFFF
    P[P_NTOTAL + 1] = total >> 32
    P[P_NARROW] = int(narrow_groups(cfg.num_groups))
    return P


def narrow_groups(num_groups) -> bool:
    """Whether every group index a launch of a grid of ``num_groups`` gives a thread's slot fits
    32 bits: the launches (runtime.launch_all) take group_base + block * groups a block + slot
    for each of their blocks, at most total + MAX_BLOCK_THREADS - 1 (a block holds at most
    MAX_BLOCK_THREADS slots, the last launch's last block some past the last group)."""
    gx, gy, gz = (int(x) for x in num_groups)
    return gx * gy * gz + MAX_BLOCK_THREADS <= 1 << 32


def grid_dims(num_groups) -> int:
    """The dimensions a grid of ``num_groups`` uses: 1 (gy = gz = 1), 2 (gz = 1) or 3."""
    _, gy, gz = (int(x) for x in num_groups)
    return 1 if gy == gz == 1 else 2 if gz == 1 else 3


def div_magic(d: int) -> tuple[int, int]:
    """(m, sh1 | sh2 << 8) such that n // d == (t + ((n - t) >> sh1)) >> sh2 with
    t = umulhi(n, m) for every u32 n (Granlund & Montgomery 1994, fig. 4.1; prelude wl_udiv);
    d = 0 (an empty grid, never launched) gives (1, 0)."""
    d = max(int(d), 1)
    lg = (d - 1).bit_length()
    m = ((1 << 32) * ((1 << lg) - d)) // d + 1
    return m & 0xFFFFFFFF, min(lg, 1) | (max(lg - 1, 0) << 8)


# P[] words compiled into the module as numbers: the dispatch's shape (register layout from RSRC2,
# block size, whether the last group is partial, initial MODE, target), the same from dispatch to
# dispatch of one program, so few extra modules; folding them removes most of the kernel's setup
# (measured: bench/README.md).  They are part of the module key (execute.module_key).
BAKED = (
    P_NUSER,
    P_SYS,
    P_SYS + 1,
    P_SYS + 2,
    P_SYS + 3,
    P_TG_SIZE,
    P_TG_WID20,
    P_BLOCK,
    P_BLOCK + 1,
    P_BLOCK + 2,
    P_PARTIAL_TG,
    P_MODE,
    P_TIDIG,
    P_GFX11,
    # the LDS size: accesses proved inside it need no test (ldsrange; 0047's amendment)
    P_LDS,
)


def baked_params(cfg, griddim: str | None = None) -> tuple:
    """(P index, value) of the BAKED words, and of P_GRIDDIM and P_NARROW where
    WAVELIFT_CUDA_GRIDDIM (or ``griddim``: that setting's value) is ``baked``: the group ids
    without the divisions a grid of fewer dimensions needs not (Lowering._group_ids), the group
    index in 32 bits where it fits (narrow_groups).  Part of the module key."""
    w = param_words(cfg)
    want = settings.get("WAVELIFT_CUDA_GRIDDIM") if griddim is None else griddim
    return tuple((k, int(w[k])) for k in BAKED + ((P_GRIDDIM, P_NARROW) if want == "baked" else ()))


# several workgroups per CUDA block (decision 0046): a block of at most this many threads, and in
# wave64 at most this many waves (named barriers 1..15: bar.sync 0 is __syncthreads')
MAX_BLOCK_THREADS = 1024
MAX_WAVE64_BLOCK_WAVES = 15
AUTO_BLOCK_THREADS = 256  # WAVELIFT_CUDA_GROUPS_PER_BLOCK=auto: about this many threads a block


def _groups_cap(groups: int, full: int, wave_size: int) -> int:
    """``groups`` workgroups of ``full`` waves in one block, capped at MAX_BLOCK_THREADS threads
    and (wave64) MAX_WAVE64_BLOCK_WAVES waves; at least 1."""
    n = min(int(groups), MAX_BLOCK_THREADS // max(full * wave_size, 1))
    if wave_size == 64:
        n = min(n, MAX_WAVE64_BLOCK_WAVES // max(full, 1))
    return max(n, 1)


def groups_per_block(config, want: str | None = None) -> int:
    """Workgroups per CUDA block for a dispatch of ``config`` (decision 0046), from
    WAVELIFT_CUDA_GROUPS_PER_BLOCK (``want``: that setting's value; auto | 1 | N): 1 where the
    dispatch has LDS, else auto's about AUTO_BLOCK_THREADS threads a block or N, capped
    (_groups_cap).  A function of the config's fields and the setting only: the CUDA module key
    holds it (CudaBackend.key_extra); generate() keeps it only for a program with no LDS op and
    no s_barrier."""
    raw = str(settings.get("WAVELIFT_CUDA_GROUPS_PER_BLOCK") if want is None else want).strip().lower()
    if raw in ("", "auto"):
        n = None
    else:
        try:
            n = int(raw)
        except ValueError:
            n = 0
        if n < 1:
            raise ValueError(f"WAVELIFT_CUDA_GROUPS_PER_BLOCK={raw!r} is not auto or a positive number")
    if config.lds_bytes:
        return 1
    L = config.wave_size
    bx, by, bz = config.block
    full = max(-(-(bx * by * bz) // L), 1)
    if n is None:
        n = AUTO_BLOCK_THREADS // (full * L)
    return _groups_cap(n, full, L)


def uses_space(program: Program, space: str) -> bool:
    """Some op of ``program`` reads, writes or updates memory of ``space`` (lds, scratch...)."""
    return any(
        op.name in ("load", "store", "atomic") and op.attrs["space"] == space
        for b in program.blocks
        for op in b.ops
    )


def has_barrier(program: Program) -> bool:
    """Some block of ``program`` ends in s_barrier."""
    return any(b.term[0] == "barrier" for b in program.blocks)


def generate(
    program: Program,
    wave_size: int,
    mode: str,
    scratch_wave_bytes: int,
    base_address: int,
    baked: tuple = (),
    groups: int = 1,
    lowered_program: Program | None = None,
) -> tuple[str, tuple, tuple]:
    """-> (the module's CUDA source, (bytes per access, mirrorable) of each global access slot,
    preload.find's (loads, plan) for the loads the host may resolve).  The kernel lowers the
    blocks after the IR's passes (``optimized``; WAVELIFT_CUDA_PASSES=off: as the frontends
    built them, for A/B runs).  ``groups``: workgroups per CUDA block (groups_per_block;
    decision 0046), kept only where the block size is baked and the program has no LDS op and
    no s_barrier, capped as groups_per_block caps it; the source says how many it holds
    (``source_groups``), 1 giving exactly the one-workgroup kernel.  ``lowered_program``:
    ``lowered``'s program for these arguments where the caller made it (build_module: the module
    keeps it)."""
    program = lowered(program, wave_size, baked) if lowered_program is None else lowered_program
    vals = {int(k): int(v) & 0xFFFFFFFF for k, v in baked}
    slot = 0
    if groups > 1:
        # (s_barrier is a barrier of the whole CUDA block: of all its workgroups)
        if (
            all(P_BLOCK + i in vals for i in range(3))
            and not has_barrier(program)
            and not uses_space(program, "lds")
        ):
            full = max(-(-(vals[P_BLOCK] * vals[P_BLOCK + 1] * vals[P_BLOCK + 2]) // wave_size), 1)
            groups, slot = _groups_cap(groups, full, wave_size), full * wave_size
        else:
            groups = 1
    # the local ids' bounds for ldsrange: only where no group is partial (P_PARTIAL_TG baked 0),
    # so that every group's thread counts are the baked block's
    shape = None
    if vals.get(P_PARTIAL_TG) == 0 and all(
        k in vals for k in (P_BLOCK, P_BLOCK + 1, P_BLOCK + 2, P_TIDIG, P_GFX11)
    ):
        shape = {
            "block": tuple(vals[P_BLOCK + i] for i in range(3)),
            "tidig": vals[P_TIDIG],
            "packed": bool(vals[P_GFX11]),
        }
    low = Lowering(
        program,
        wave_size,
        mode,
        scratch_wave_bytes,
        base_address,
        groups,
        slot,
        shape,
        vals.get(P_LDS),
        vals.get(P_GRIDDIM),
        vals.get(P_NARROW) == 1,
    )
    src = low.kernel_source()
    # every read of a baked word becomes its number (the declaration "u32 P[..]" stays)
    src = re.sub(
        r"(?<!u32 )\bP\[(\d+)\]",
        lambda m: f"{vals[int(m.group(1))]}u" if int(m.group(1)) in vals else m.group(0),
        src,
    )
    # the launch's block, for compile.py's occupancy-bounded build (small programs only: big ones
    # mostly spill under the bound, and trying would double their compile time)
    if all(P_BLOCK + i in vals for i in range(3)) and len(program.instructions) <= OCCUPANCY_MAX_INSTRUCTIONS:
        n = vals[P_BLOCK] * vals[P_BLOCK + 1] * vals[P_BLOCK + 2]
        n = max(-(-n // wave_size) * wave_size, wave_size) * low.groups
        src = f"#define WL_BLOCK_THREADS {n}\n" + src
    return src, tuple(low.slots), low.preloads


def kernel_source(
    program: Program,
    wave_size: int,
    mode: str,
    scratch_wave_bytes: int,
    base_address: int,
    baked: tuple = (),
    groups: int = 1,
) -> str:
    return generate(program, wave_size, mode, scratch_wave_bytes, base_address, baked, groups)[0]


_GPB = re.compile(r"^#define WL_GPB (\d+)u$", re.M)


def source_groups(source: str) -> int:
    """The workgroups per CUDA block a generated source runs (its WL_GPB; none: 1)."""
    m = _GPB.search(source)
    return int(m.group(1)) if m else 1


def map_bits() -> bool:
    """Whether modules generated now mark a written-map bit per stored byte (WAVELIFT_CUDA_MAP=bits:
    decision 0049's amendment h111) rather than a byte; part of the module key."""
    return settings.get("WAVELIFT_CUDA_MAP") == "bits"


def map_fill_store() -> bool:
    """Whether modules generated now set a whole written-map word by a store (mapbits.h's
    WL_MAP_FILL_STORE; WAVELIFT_CUDA_MAPFILL, `store` unless `atomic`: decision 0049's session-52
    amendment); part of the module key."""
    v = settings.get("WAVELIFT_CUDA_MAPFILL")
    if v not in ("store", "atomic"):
        raise ValueError(f"WAVELIFT_CUDA_MAPFILL={v!r} is not store or atomic")
    return v == "store"


def mark_form() -> str:
    """How modules generated now mark the bit map (WAVELIFT_CUDA_MAPMARK): `group` (mapbits.h's
    WL_MARK_GROUP, the default: decision 0049's amendment h160), `span` (WL_MARK_SPAN: amendment
    h139) or `general` (neither); part of the module key."""
    v = settings.get("WAVELIFT_CUDA_MAPMARK")
    if v not in ("group", "span", "general"):
        raise ValueError(f"WAVELIFT_CUDA_MAPMARK={v!r} is not group, span or general")
    return v


COUNT_SLOTS = 256  # the report's count slots (runtime.STATS_BYTES), the host's one read


def count_slots() -> int:
    """The slots modules generated now add their waves' counts to (WAVELIFT_CUDA_COUNT_SLOTS:
    a power of two from 256 to 65536; decision 0009's amendment h152); part of the module key.
    More than the report's 256 lie in a device buffer of their own, folded into the report's
    after each launch (resident.py's wl_fold), so fewer waves add to one address."""
    n = settings.get("WAVELIFT_CUDA_COUNT_SLOTS")
    if n < COUNT_SLOTS or n > 65536 or n & (n - 1):
        raise ValueError(f"WAVELIFT_CUDA_COUNT_SLOTS={n}: not a power of two from 256 to 65536")
    return n


STATS_FORMS = ("auto", "wave", "block", "pair")


def stats_setting() -> str:
    """WAVELIFT_CUDA_STATS as modules generated now read it (one of STATS_FORMS; the module key's
    and the stored entry's part where it is not ``auto``)."""
    want = str(settings.get("WAVELIFT_CUDA_STATS")).strip().lower()
    if want not in STATS_FORMS:
        raise ValueError(f"WAVELIFT_CUDA_STATS={want!r} is not one of {', '.join(STATS_FORMS)}")
    return want


def stats_form(wave_size: int, once_ok: bool) -> str:
    """How a kernel adds its waves' exact instruction and lane counts (WAVELIFT_CUDA_STATS;
    decision 0009's amendments h146, h162 and session 53's): ``wave`` two 64-bit atomics a wave,
    ``pair`` the same two as one atomic instruction of two lanes, ``block`` once a CUDA block after
    one __syncthreads -- only where ``once_ok`` (every thread reaches the end: no s_barrier, no
    LDS), else ``pair``.  ``auto`` (the default): ``block`` for a wave32 kernel that may, else
    ``pair`` -- on an H100 (session 53, kernel back to back) block took vadd32 17.4 -> 14.7 us and
    shade 22.2 -> 20.4 but vadd64 17.9 -> 20.3 (wave64: every wave's two warps wait at the end),
    pair 16.7, 17.5, 20.4."""
    want = stats_setting()
    if want == "auto":
        want = "block" if wave_size == 32 else "pair"
    return "pair" if want == "block" and not once_ok else want


_WIDE = re.compile(r"^#define WL_WIDE_SLOTS (\d+)u$", re.M)


def source_count_slots(source: str) -> int:
    """The count slots a generated source adds to (its WL_WIDE_SLOTS; none: the report's 256):
    the runtime folds them as the kernel adds them, never by the setting."""
    m = _WIDE.search(source)
    return int(m.group(1)) if m else COUNT_SLOTS


def source_map_bits(source: str) -> bool:
    """Whether a generated source marks its written map as bits (its WL_MAP_BITS 1): the runtime
    sizes, scans and lands the map as the kernel marks it, never by the setting."""
    return _MAP_BITS.search(source) is not None


_MAP_BITS = re.compile(r"^#define WL_MAP_BITS 1$", re.M)


_STRAIGHT = re.compile(r"^#define WL_STRAIGHT (\d+)u$", re.M)


def source_straight(source: str) -> int | None:
    """A straight kernel's longest path (its WL_STRAIGHT: the runtime launches the build with
    budget checks for a budget below it); None: every build checks the budget."""
    m = _STRAIGHT.search(source)
    return int(m.group(1)) if m else None


def guesses(slot_nbytes, hints, starts, ends, offs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The window guesses (WL_GB, WL_GL, WL_GO) of a dispatch: for each of the first MAX_GUESSES
    slots, the window of this dispatch's table that ``hints`` (WL_HINT read back after the
    module's previous dispatch) names, if it exists, holds only canonical addresses and is
    at least the access's size; else limit 0 (no guess)."""
    n = min(len(slot_nbytes), MAX_GUESSES)
    base = np.zeros(max(n, 1), np.uint64)
    lim = np.zeros(max(n, 1), np.uint64)
    off = np.zeros(max(n, 1), np.int64)
    if n == 0 or len(starts) == 0:
        return base, lim, off
    k = np.asarray(hints[:n], np.int64)
    ok = (k >= 0) & (k < len(starts))
    k = np.where(ok, k, 0)
    s = np.asarray(starts, np.uint64)[k]
    e = np.asarray(ends, np.uint64)[k]
    nb = np.asarray(slot_nbytes[:n], np.uint64)
    low_half = np.uint64(1 << 47)
    high_half = np.uint64(0xFFFF800000000000)
    canon = ((e <= low_half) | (s >= high_half)) & (e > s)
    ok &= canon & (e - s >= nb)
    base[:n] = np.where(ok, s, np.uint64(0))
    lim[:n] = np.where(ok, e - s - nb + np.uint64(1), np.uint64(0))
    off[:n] = np.where(ok, np.asarray(offs, np.int64)[k], 0)
    return base, lim, off


def guess_pointers(g, arena: int) -> np.ndarray:
    """WL_GA of a dispatch's guesses ``g`` (guesses': WL_GB, WL_GL, WL_GO) for a launch on the
    arena (or heap) at device address ``arena``: each guessed window's arena address less its
    base, arena + WL_GO - WL_GB mod 2^64, so that a load's pointer is WL_GA + addr (kernel.h's
    wl_gload); 0 where there is no guess (limit 0: never read)."""
    base, lim, off = g
    with np.errstate(over="ignore"):
        ga = np.uint64(int(arena) & 0xFFFFFFFFFFFFFFFF) + off.astype(np.uint64) - base
    return np.where(lim > 0, ga, np.uint64(0))
