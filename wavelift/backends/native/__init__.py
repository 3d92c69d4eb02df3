"""The NumPy backend's native tier: blocks compiled to host code (docs/decisions/0012-native-tier.md).

A block function here does exactly what the generated NumPy block does -- same optimised IR
(ir/passes for the group's MODE), same state arrays S [regs, waves, 1] / V [regs, waves, lanes],
same windows, escapes and written map, same return value (the next block of each wave) -- but as
C++ compiled with the host compiler: per wave, the block's uniform ops are scalar statements and
its per-lane ops are fused into loops over the wave's lanes, which the compiler vectorises.  The
value ops are the C-family lowering the CUDA kernel uses too (``cfamily.lowering.ValueLowering``
over cfamily's prelude for the host, ``backends/host.py``): semantics written once for both C++
targets, checked bit for bit against the NumPy lowering in CI (tests/cuda/test_cuda_ops_host.py).

Loop rules (so that a fused loop computes what the op-by-op NumPy block computes):
  * a loop holds per-lane ops in op order; uniform ops met while it is open run before it (they
    read no per-lane value and touch no memory);
  * each per-lane memory access gets a loop of its own (lane order inside one access, as NumPy's
    scatter; every lane's access before the next access starts), and loops without one stay free
    of calls, so that they vectorise;
  * ballot and readlane accumulate inside the loop that makes their operand and end it; shuffle
    starts a new loop (it reads other lanes); permute is a scatter between loops;
  * a per-lane value used outside its loop lives in an array [lanes], else in a register.
Scratch is each wave's private arena (hardware layout; lane mode: the lane's own words), atomics
are each lane's whole read-modify-write in lane order, and an s_setpc/s_swappc block hands its
waves' target addresses to the scheduler or the driver (docs/decisions/0020).  Blocks with a
rounding mode other than nearest-even, or whose lane arrays exceed the stack bound, stay NumPy
blocks (``unsupported``); a dispatch mixes both kinds freely (they share the state).
Generated text holds numbers and names made from numbers only -- never guest text.
"""

from __future__ import annotations

import _ctypes  # (CFuncPtr: the type of a library's function)
import ctypes
import functools
import hashlib
import json
import os
import pathlib
import platform
import queue
import re
import subprocess
import sys
import threading
import types
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import numpy as np

from ... import settings
from ...frontend.program import lane_count_points
from ...ir.blends import deferred_blends
from ...ir.numerics import IR_TYPE
from ...ir.passes.liveness import live_in
from ...ir.program import EXEC_HI, EXEC_LO, MODE_REG, Program, refusal_of
from .. import disk_cache, host
from ..cfamily import lowering as cf
from ..cfamily.lowering import I32_RESULT, VALUE_EXPR, const_literal
from ..cfamily.prelude import header

COMPILE_TIMEOUT_S = 600
MAX_STACK_BYTES = 2 << 20  # lane arrays of one block (Linux gives threads 8 MiB stacks)
# blocks of at most this many ops get a second copy of their wave code for waves with every lane
# on (BlockSource.block), first come first served while the copies of a program hold at most
# ALLON_PROGRAM_OPS ops: a program's compile grows by a bounded amount (the ALU conformance
# programs, ~500 blocks each, compiled 1.5x as long with every block copied)
ALLON_MAX_OPS = 1024
ALLON_PROGRAM_OPS = 4096
# the context: one int64 word per field (runtime fills them), the C struct made from the same list
CTX_FIELDS = (
    ("S", "u32*"),
    ("V", "u32*"),
    ("n", "i64"),
    ("arena", "u8*"),
    ("written", "u8*"),
    ("ws", "const u64*"),
    ("we", "const u64*"),
    ("wo", "const i64*"),
    ("nwin", "i64"),
    ("lds", "u8*"),
    ("lds_stride", "i64"),
    ("lds_bytes", "i64"),
    ("grp", "i64*"),
    ("esc", "u64*"),
    ("esc_n", "i64"),
    ("esc_cap", "i64"),
    ("esc_count", "i64"),
    ("lanes", "i64"),
    ("refuse", "i64"),
    ("wave0", "i64"),  # dispatch index of wave 0 of S/V (escape reports)
    ("instructions", "i64"),  # the driver's count
    ("stop", "i64"),  # the driver's own refusals (STOP_*)
    ("touch", "i64*"),  # per window: arena ranges read, written (wl_touch)
    ("wkind", "const u8*"),  # per window: 0 copied, 1 aliased (guest memory, never
    # stored to), 2 blank (arbitrary bytes, never read)
    ("ro_written", "i64"),  # a store into an aliased window was dropped
    ("blank_read", "i64"),  # a blank window was read (zeros given, the run stops)
    ("scr", "u8*"),  # scratch: wave w's private bytes at scr + w * scr_bytes (decision 0008)
    ("scr_bytes", "i64"),
    ("scr_lane", "i64"),  # lane mode: a lane reaches only its own words
    ("pcs", "u64*"),  # per wave run: the address an s_setpc/s_swappc block jumps to
    ("bad_pc", "i64"),  # the driver's STOP_BAD_JUMP: the address
    ("bad_block", "i64"),  # and the block that jumped there
    ("settled", "u8*"),  # per window: the range's written bytes were cleared from the written
    # map, its write hull wholly written (wl_settle; null: none is)
)
CTX = {name: i for i, (name, _) in enumerate(CTX_FIELDS)}
KIND_NAMES = ("load", "store", "scratch", "atomic")  # escape kinds (wl_escape)
# the driver's dispatch geometry and wave set-up (numbers only; Runtime._drive fills them)
GRID_FIELDS = (
    "gx",
    "gy",
    "gz",
    "sx",
    "sy",
    "sz",
    "bx",
    "by",
    "bz",
    "px",
    "py",
    "pz",
    "ex",
    "ey",
    "ez",
    "partial",
    "nsreg",
    "nv",
    "packed",
    "tidig",
    "user_n",
    "sys_x",
    "sys_y",
    "sys_z",
    "sys_tg",
    "sys_scratch",
    "tg_id20",
    "mode",
    "budget",
    "chunk",
    "deadline",
    "code_base",
)  # deadline: CLOCK_MONOTONIC ns (0: none; execute.Deadline); code_base: the program's address
GRID = {name: i for i, name in enumerate(GRID_FIELDS)}
STOP_BUDGET, STOP_BAD_ADDRESS, STOP_TIME, STOP_BAD_JUMP = 1, 2, 3, 4
DEADLINE_BLOCKS = 4096  # the driver looks at the clock once per this many block runs
MAX_GROUP_WAVES = 64  # the driver's per-chunk arrays (waves)
CHUNK_LDS_BYTES = 1 << 20  # LDS of one chunk's groups, at most (one group at least)

NATIVE_CTX = (
    r"""
/* ------------------------------------------------------------- native tier: context, memory */
#include <cstring>
#include <ctime>
struct WlCtx { """
    + " ".join(f"{t} {n};" for n, t in CTX_FIELDS)
    + r""" };
struct WlGrid { i64 """
    + ", ".join(GRID_FIELDS)
    + r"""; };
"""
    + header("native_memory.h", __package__)
)


# The driver: a whole dispatch (or a range of its workgroups) in one call, for programs whose
# every block is native and whose MODE never changes.  A few workgroups at a time (a chunk of at
# most MAX_GROUP_WAVES waves): their waves' state is set up here (the same values as
# Runtime._run_batch: user and system SGPRs, EXEC, MODE, local ids), kept in small arrays
# S [regs, waves] / V [regs, waves, lanes] that stay in cache, and the waves are scheduled as
# Runtime._schedule does a batch (lowest block first, every runnable wave at it together;
# s_barrier parks a wave until every live wave of its group is parked).
NATIVE_DRIVER = "\n" + header("native_driver.h", __package__)


def driver_source(program: Program, wave_size: int, entry=None) -> str:
    """The driver for a program whose every block is in the library (numbers only).
    ``entry``: the (SGPRs, VGPRs) live at the start of block 0, where every wave starts
    (ir/passes/liveness.py ``live_in`` of block 0 as it runs); None: unknown."""
    blocks = program.blocks
    consts = {
        "WL_L": wave_size,
        "WL_EXEC_LO": EXEC_LO,
        "WL_EXEC_HI": EXEC_HI,
        "WL_MODE_REG": MODE_REG,
        "WL_MAXW": MAX_GROUP_WAVES,
        "WL_NBLOCKS": len(blocks),
        "WL_STOP_BUDGET": STOP_BUDGET,
        "WL_STOP_BAD_ADDRESS": STOP_BAD_ADDRESS,
        "WL_STOP_TIME": STOP_TIME,
        "WL_STOP_BAD_JUMP": STOP_BAD_JUMP,
        "WL_NTARGETS": len(program.block_at),
        "WL_DEADLINE_BLOCKS": DEADLINE_BLOCKS,
    }
    head = "".join(f"static const i64 {k} = {int(v)};\n" for k, v in consts.items())
    # registers read: SGPRs by sget; VGPRs by vget and by vset (inactive lanes keep the old value)
    sregs = {op.attrs["reg"] for b in blocks for op in b.ops if op.name == "sget"}
    vregs = {op.attrs["reg"] for b in blocks for op in b.ops if op.name in ("vget", "vset")}
    if entry is not None:
        # of those, the driver zeroes the ones whose value at the start can be read: the others
        # are written before any read of them that a result can see (liveness: a VGPR read only
        # where its own masked write holds sees that write, whatever its other lanes hold)
        sregs &= entry[0]
        vregs &= entry[1]
    sread, vread = sorted(sregs) or [EXEC_LO], sorted(vregs) or [0]
    text = (
        NATIVE_DRIVER.replace("WL_NINSTR", ", ".join(str(len(b.instrs)) for b in blocks))
        .replace("WL_BARRIER", ", ".join("1" if b.term[0] == "barrier" else "0" for b in blocks))
        .replace("WL_SREAD", ", ".join(map(str, sread)))
        .replace("WL_VREAD", ", ".join(map(str, vread)))
        .replace("WL_SETPC", ", ".join("1" if b.term[0] == "setpc" else "0" for b in blocks))
        .replace("WL_TARGET_AT", ", ".join(f"{a}ull" for a in sorted(program.block_at)))
        .replace("WL_TARGET_BLOCK", ", ".join(str(program.block_at[a]) for a in sorted(program.block_at)))
    )
    cases = "\n".join(f"    case {b.index}: wl_b{b.index}(C, idx, N, nxt); break;" for b in blocks)
    run = (
        "static void wl_run_block(WlCtx* C, i32 bi, const i64* idx, i64 N, i32* nxt) {\n"
        f"  switch (bi) {{\n{cases}\n  }}\n}}\n"
    )
    return head + text + run


class Unsupported(Exception):
    """A construct the native tier leaves to the NumPy block."""


_SPACES = {"global": 0, "lds": 1, "scratch": 2}
# the atomic ops (ir attrs op), numbered as native_memory.h wl_combine
ATOMIC_OPS = (
    "add",
    "sub",
    "swap",
    "cmpswap",
    "and",
    "or",
    "xor",
    "umin",
    "umax",
    "smin",
    "smax",
    "inc",
    "dec",
)


def looping_blocks(program: Program) -> set[int]:
    """Blocks a wave may run more than once, or more: every block from a back edge's target
    (Block.successors: a jump, branch, barrier or MODE end to the block itself or an earlier
    one) to its source -- every cycle's blocks lie within such ranges --, and all of them when a
    block ends in s_setpc."""
    out: set[int] = set()
    for b in program.blocks:
        nxt = b.successors()
        if nxt is None:
            return {x.index for x in program.blocks}
        for t in nxt:
            if 0 <= t <= b.index:
                out.update(range(t, b.index + 1))
    return out


class BlockSource:
    """C++ of optimised blocks (``block``: one extern "C" function each), or Unsupported."""

    def __init__(self, wave_size: int):
        self.values = cf.ValueLowering()
        self.L = wave_size
        self.refusals: list[tuple[int, str, str]] = []  # refuse_if k -> ir.refusal_of
        self.eager_blends = settings.get("WAVELIFT_NATIVE_BLENDS") == "eager"  # (A/B, tests)
        # instructions whose scratch access of 2-4 bytes may cross a dword (scratch_*: 0008)
        self.scratch_split: set[int] = set()
        self.looping: set[int] = set()  # blocks a wave may run again (looping_blocks)
        self.allon_ops = 0  # ops of the blocks given an all-lanes copy so far

    # -------------------------------------------------------------------- classification
    @staticmethod
    def _lane(op) -> bool:
        """Per-lane op (runs in a lane loop)?"""
        if op.name in ("ballot", "readlane"):
            return True
        if op.out is not None:
            return not op.out.uniform
        if op.name == "vset":
            return True
        return any(not getattr(x, "uniform", True) for x in op.args)

    def _place(self, ops):
        """-> (place, ends): place[i] is ('s', None) scalar statement, ('l', loop) lane op or
        ('x', None) scatter; ``ends``: the ops after which their loop closes."""
        place, ends, cur, n = [], set(), [None], [0]

        def open_():
            if cur[0] is None:
                cur[0] = n[0]
                n[0] += 1

        def close():
            cur[0] = None

        for i, op in enumerate(ops):
            nm = op.name
            OPS[nm]  # (KeyError: an op of no entry)
            if nm in ("load", "store", "atomic") and op.attrs["space"] not in _SPACES:
                raise Unsupported(f"{nm} {op.attrs['space']}")
            lane = self._lane(op)
            if not lane:
                if nm in ("load", "store"):
                    if op.attrs["space"] == "scratch":
                        raise Unsupported("uniform scratch access")
                    close()
                place.append(("s", None))
                continue
            if nm == "shuffle":
                close()
            if nm in ("permute", "load", "store", "atomic"):
                close()
                place.append(("x", None))
                continue
            open_()
            place.append(("l", cur[0]))
            if nm in ("ballot", "readlane"):
                ends.add(i)
                close()
        return place, ends

    @staticmethod
    def ctype(op) -> str:
        n = op.name
        if n in ("cvt", "bitcast"):
            return op.attrs["to"]
        if n in I32_RESULT:
            return "i32"
        if n in ("cmp", "exec"):
            return "b1"
        if n == "ballot":
            return "u64"
        if n in ("sget", "vget", "lane_id", "readlane", "shuffle", "permute", "word", "load"):
            return "u32"
        return op.out.type

    # ------------------------------------------------------------------------ accesses
    def _scalar_access(self, op, a, h, scalar, tmpl):
        """A uniform load/store: once per wave (reported as lane 0, as NumPy's [waves, 1])."""
        sp, nb = _SPACES[op.attrs["space"]], op.attrs["nbytes"]
        if op.name == "load":
            o, W = f"v{op.out.id}", op.attrs["words"]
            tmpl[op.out.id] = o
            scalar(f"u32 {o}[{W}] = {{0u}};")
            scalar(f"if ({a[1]}) wl_ld(C, {sp}u, w, 0u, {op.instr}u, (u64)({a[0]}), {nb}u, {W}u, {o}, {h});")
        else:
            d = ", ".join(f"(u32)({x})" for x in a[2:])
            scalar(
                f"if ({a[1]}) {{ const u32 d[] = {{{d}}}; wl_st(C, {sp}u, w, 0u, {op.instr}u, "
                f"(u64)({a[0]}), {nb}u, d, {h}); }}"
            )

    def _scratch_access(self, op, a) -> list[str]:
        """A per-lane scratch load/store (wl_scr_ld / wl_scr_st), lanes in order.  A scratch_*
        access of 2-4 bytes of which any active lane crosses a dword is carried out byte by byte
        for every lane, byte k of all lanes before byte k + 1 (runtime._scratch_split)."""
        L, nb, ins = self.L, op.attrs["nbytes"], op.instr
        loop = f"for (u32 lane = 0; lane < {L}u; lane++)"
        if op.name == "load":
            o, W = f"v{op.out.id}", op.attrs["words"]
            whole = [
                f"  {loop} {{ if ({a[1]}) wl_scr_ld(C, w, lane, {L}u, {ins}u, (u64)({a[0]}), {nb}u, {W}u, "
                f"{o}[lane]); else for (u32 k = 0; k < {W}u; k++) {o}[lane][k] = 0u; }}"
            ]
            bytes_ = [
                f"  {loop} {o}[lane][0] = 0u;",
                f"  for (u32 k = 0; k < {nb}u; k++) {loop} if ({a[1]}) {{ u32 t; "
                f"wl_scr_ld(C, w, lane, {L}u, {ins}u, wl_scr_byte((u64)({a[0]}), k, {4 * L}ull), 1u, 1u, &t); "
                f"{o}[lane][0] |= t << (8u * k); }}",
            ]
        else:
            d = ", ".join(f"(u32)({x})" for x in a[2:])
            whole = [
                f"  {loop} if ({a[1]}) {{ const u32 d[] = {{{d}}}; "
                f"wl_scr_st(C, w, lane, {L}u, {ins}u, (u64)({a[0]}), {nb}u, d); }}"
            ]
            bytes_ = [
                f"  for (u32 k = 0; k < {nb}u; k++) {loop} if ({a[1]}) {{ "
                f"const u32 t = ((u32)({a[2]}) >> (8u * k)) & 0xffu; "
                f"wl_scr_st(C, w, lane, {L}u, {ins}u, wl_scr_byte((u64)({a[0]}), k, {4 * L}ull), 1u, &t); }}"
            ]
        # every active lane held (a branch-free test that vectorises): no per-lane checks; an
        # inactive lane reads at 0 (the arena holds nb bytes there) and keeps zero
        test = [
            "  {",
            f"    const u64 sz = (u64)C->scr_bytes; const u32 sl = (u32)C->scr_lane; u32 ok = sz >= {nb}ull;",
            f"    {loop} ok &= (({a[1]}) ? wl_scr_in(sz, sl, (u64)({a[0]}), {nb}u, lane, {L}u) : 1u);",
            "    u8* const SB = C->scr + w * C->scr_bytes;",
            "    if (ok) {",
        ]
        if op.name == "load":
            fast = [
                f"    {loop} {{ const b1 m = {a[1]}; u32 t[{W}] = {{0u}}; "
                f"memcpy(t, SB + (m ? (u64)({a[0]}) : 0ull), {nb}u); "
                f"for (u32 k = 0; k < {W}u; k++) {o}[lane][k] = m ? t[k] : 0u; }}"
            ]
        else:
            fast = [
                f"    {loop} if ({a[1]}) {{ const u32 x[] = {{{d}}}; memcpy(SB + (u64)({a[0]}), x, {nb}u); }}"
            ]
        whole = (
            test + ["  " + x for x in fast] + ["    } else {"] + ["  " + x for x in whole] + ["    }", "  }"]
        )
        words = op.attrs["words"] if op.name == "load" else len(a) - 2
        if ins not in self.scratch_split or words != 1 or not 2 <= nb <= 4:
            return whole
        return (
            [
                "  {",
                "    u32 cross = 0u;",
                f"    {loop} cross |= (({a[1]}) && ((u64)({a[0]}) & 3ull) + {nb}ull > 4ull) ? 1u : 0u;",
                "    if (cross) {",
            ]
            + ["  " + x for x in bytes_]
            + ["    } else {"]
            + ["  " + x for x in whole]
            + ["    }", "  }"]
        )

    RUN = 8  # lanes per run of consecutive addresses the copy path needs (8x8 tiles, rows)
    # run copies prefetch the same access of the wave PREFETCH_GROUPS workgroups on, guessed
    # from the stride between this wave's runs and the same wave of the previous group (a hint
    # only: no value depends on it, and a prefetch of any address is harmless)
    PREFETCH_GROUPS = 4
    RING = 64  # waves remembered per access for that stride (a group has at most 32 waves)

    def _lane_access(
        self, op, a, ar, prev, h, tmpl, allon: str | None, a0: str = "", arr: str | None = None
    ) -> list[str]:
        """A per-lane load/store, lanes in order.  Global: when the active lanes' lowest and
        highest address lie in one window (wl_span, as NumPy's locate) every lane's arena index
        is its address plus one constant -- loops without calls, and when every lane is active
        and each run of RUN lanes is at consecutive addresses (lane r + j at the address of lane
        r plus j * nbytes: rows of a 2-D tile, or a whole linear wave) one contiguous copy per
        run (no gathers, which AMD cores run slowly); else each lane is resolved (wl_ld / wl_st:
        search, escapes).  ``ar``: the address of lane r (a run's first lane); ``prev``: of lane
        ``lane - 1`` (the run test compares neighbours: one pass of plain loads); ``allon``: a
        scalar test that every lane is active, when the mask is EXEC (else the lanes' are read).
        ``a0``: lane 0's address, whose run copies remember it in the ring ``p<h>`` (RING waves)
        and prefetch each run PREFETCH_GROUPS groups of ``wl_pfg`` waves on (none: no prefetch).
        ``arr``: the addresses' lane array when they are one of u64 (the run test then reads it as
        whole vectors: wl_runs8), else None (lane by lane)."""
        L, R, sp, nb = self.L, self.RUN, _SPACES[op.attrs["space"]], op.attrs["nbytes"]
        loop = f"for (u32 lane = 0; lane < {L}u; lane++)"
        runs = [
            f"    for (u32 r = 0; r < {L}u; r += {R}u) {{",
            f"      u8* const q = AR + (i64)(u64)({ar}) + d;",
            f"      for (u32 j = 0; j < {R}u; j++) {{ const u32 lane = r + j;",
        ]
        if op.name == "load":
            o, W = f"v{op.out.id}", op.attrs["words"]
            tmpl[op.out.id] = o + "[{l}]"
            zero = f"for (u32 k = 0; k < {W}u; k++) {o}[lane][k] = 0u;"
            slow = [
                f"  {loop} {{ {zero} if ({a[1]}) wl_ld(C, {sp}u, w, lane, {op.instr}u, "
                f"(u64)({a[0]}), {nb}u, {W}u, {o}[lane], {h}); }}"
            ]
            # inactive lanes read at lo (inside the window) and keep zero: no branch, so the
            # loop vectorises (gathers)
            fast = [
                f"    {loop} {{ const b1 m = {a[1]}; const u64 a = m ? (u64)({a[0]}) : lo; "
                f"u32 t[{W}] = {{0u}}; memcpy(t, AR + (i64)a + d, {nb}u); "
                f"for (u32 k = 0; k < {W}u; k++) {o}[lane][k] = m ? t[k] : 0u; }}"
            ]
            if nb == 4 * W:
                # the run's lanes are contiguous in the lane array too: one copy of the run
                # (lane by lane, clang turned some into gathers of the rows' pointers)
                runs[2:] = [f"      memcpy((u8*){o} + (u64){nb}u * r, q, {nb * R}u);", "    }"]
            else:
                runs += [
                    f"        {zero} memcpy({o}[lane], q + {nb}u * j, {nb}u); }}",
                    "    }",
                ]
        else:
            d = ", ".join(f"(u32)({x})" for x in a[2:])
            slow = [
                f"  {loop} if ({a[1]}) {{ const u32 d[] = {{{d}}}; wl_st(C, {sp}u, w, lane, "
                f"{op.instr}u, (u64)({a[0]}), {nb}u, d, {h}); }}"
            ]
            fast = [
                f"    {loop} if ({a[1]}) {{ const u32 x[] = {{{d}}}; const i64 i = (i64)(u64)({a[0]}) + d; "
                f"memcpy(AR + i, x, {nb}u); memset(WR + i, 1, {nb}u); }}"
            ]
            # the run's data staged in order, then one copy of the run
            nw = len(a) - 2
            runs[2:] = (
                [
                    f"      u32 t[{R * nw}];",
                    f"      for (u32 j = 0; j < {R}u; j++) {{ const u32 lane = r + j; const u32 x[] = {{{d}}}; "
                    f"memcpy(t + {nw}u * j, x, {4 * nw}u); }}",
                    f"      memcpy(q, t, {nb * R}u); memset(WR + (q - AR), 1, {nb * R}u);",
                    "    }",
                ]
                if nb == 4 * nw
                else runs[2:]
                + [
                    f"        const u32 x[] = {{{d}}}; memcpy(q + {nb}u * j, x, {nb}u); }}",
                    f"      memset(WR + (q - AR), 1, {nb * R}u);",
                    "    }",
                ]
            )
        if op.attrs["space"] != "global":
            return slow
        # the run test, then the active lanes' bounds: of the runs' first lanes when it holds,
        # else of every lane (branch-free: it vectorises)
        on = "" if allon else f"(({a[1]}) ? 1u : 0u) & "
        pf: list[str] = []
        if a0:
            # the stride to the same wave of the previous group (0: none known) -> prefetch
            K, rw = self.RING - 1, 0 if op.name == "load" else 1
            # (a store's written-map bytes too)
            wr = ["        __builtin_prefetch((const void*)((u64)(uintptr_t)WR + i), 1);"] if rw else []
            pf = [
                f"    const u64 pp = kk >= wl_pfg ? p{h}[(kk - wl_pfg) & {K}] : 0ull;",
                f"    p{h}[kk & {K}] = d != WL_NONE && run ? (u64)({a0}) : 0ull;",
                f"    if (d != WL_NONE && run && pp) {{ const u64 s = ((u64)({a0}) - pp) * {self.PREFETCH_GROUPS}ull;",
                f"      for (u32 r = 0; r < {L}u; r += {R}u) {{ const u64 i = (u64)d + (u64)({ar}) + s;",
                f"        __builtin_prefetch((const void*)((u64)(uintptr_t)AR + i), {rw});",
                *wr,
                "      } }",
            ]
        # a global store forgets the remembered loads it may have overwritten (BlockSource.block
        # fills in the test: the stored bytes lie in arena [lo + d, hi + d + nb); d: WL_NONE,
        # lane by lane: every one)
        unmemo = [f"    {UNMEMO}({nb});"] if op.name == "store" else []
        return (
            [
                "  {",
                f"    u64 lo = ~0ull, hi = 0ull; u32 run = {allon or '1u'};",
                *([] if allon else [f"    {loop} run &= {on}1u;"]),
                f"    if (run) run = wl_runs8((const u64*){arr}, {L}u, {nb}ull);"
                if arr is not None and R == 8
                else f"    if (run) for (u32 lane = 1; lane < {L}u; lane++) "
                f"run &= (u32)((lane & {R - 1}u) == 0u) | (u32)((u64)({a[0]}) - (u64)({prev}) == (u64){nb}u);",
                f"    if (run) for (u32 r = 0; r < {L}u; r += {R}u) {{ const u64 b = (u64)({ar}); "
                f"lo = b < lo ? b : lo; hi = b > hi ? b : hi; }}",
                f"    if (run) hi += (u64){nb * (R - 1)}u;",
                f"    else {loop} {{ const u64 a = (u64)({a[0]}); const u32 m = ({a[1]}) ? 1u : 0u; "
                "const u64 al = m ? a : ~0ull, ah = m ? a : 0ull; lo = al < lo ? al : lo; hi = ah > hi ? ah : hi; }",
                f"    const i64 d = lo <= hi ? wl_span(C, lo, hi, {nb}u, {h}, {0 if op.name == 'load' else 1}u) : WL_NONE;",
                *pf,
                "    if (d != WL_NONE && run) {",
            ]
            + runs
            + ["    } else if (d != WL_NONE) {"]
            + fast
            + ["    } else {"]
            + ["  " + x for x in slow]
            + ["    }"]
            + unmemo
            + ["  }"]
        )

    # ------------------------------------------------------------------------- lowering
    def block(self, blk, counts: dict, live_out=None) -> str:
        """``live_out``: (SGPRs, VGPRs) live after the block (None: all)."""
        L = self.L
        ops = blk.ops
        place, ends = self._place(ops)
        term = blk.term
        if term[0] == "setpc" and not term[1].uniform:
            raise Unsupported("per-lane s_setpc target")
        if term[0] == "branch" and not term[1].uniform:
            raise Unsupported("per-lane branch condition")
        defined = {}  # value id -> op index
        for i, op in enumerate(ops):
            if op.out is not None:
                defined[op.out.id] = i
        keep_regs = {op.attrs["reg"] for op in ops if op.name == "vset"}
        if live_out is not None and live_out[1] is not None:
            keep_regs &= set(live_out[1])
        src = None if self.eager_blends else deferred_blends(ops, {k: ops[i] for k, i in defined.items()})
        last = {}  # (deferred) VGPR -> (raw value, mask) of its last write
        if src is not None:
            for op in ops:
                if op.name == "vset":
                    last[op.attrs["reg"]] = op.args
        # homes: a per-lane value used outside its loop (or by a scatter, or across lanes by a
        # shuffle) lives in an array; so do the raw values and masks of deferred blends
        arrays = set()
        alias = src or {}

        def root(x):
            """The value x stands for: a deferred write's raw value may itself be the read of
            an earlier deferred write, and a `lanes` op is its operand under another type (the
            text of either is that value's: its home must be that one's)"""
            for _ in range(len(ops) + 1):
                if not hasattr(x, "id"):
                    break
                if x.id in alias:
                    x = alias[x.id]
                elif x.id in defined and ops[defined[x.id]].name == "lanes":
                    x = ops[defined[x.id]].args[0]
                else:
                    break
            return x

        uses = [(i, j, root(x)) for i, op in enumerate(ops) for j, x in enumerate(op.args)]
        uses += [(len(ops), 0, root(x)) for r in keep_regs if r in last for x in last[r]]
        for i, j, x in uses:
            if not hasattr(x, "id") or x.uniform or x.id not in defined:
                continue
            d = defined[x.id]
            if ops[d].name in ("lanes", "word"):
                continue  # aliases (of a scalar / of a load's words)
            if (
                i == len(ops)
                or place[i] != place[d]
                or place[i][0] == "x"
                or (ops[i].name == "shuffle" and j == 0)
            ):
                arrays.add(x.id)
        tmpl: dict[int, str] = {}
        ctype: dict[int, str] = {}
        out: list[str] = []  # wave-scope statements
        decl: list[str] = []  # wave-scope array declarations
        hoist: list[str] = []  # scalar statements met while a loop is open
        body: list[str] = []  # the open loop's statements
        cur = [None]
        hints: list[str] = []
        vregs = sorted({op.attrs["reg"] for op in ops if op.name in ("vget", "vset")})
        vcur: dict[int, str] = {}  # VGPR written in the block -> template of its value

        def ref(x, lane="lane"):
            return tmpl[x.id].format(l=lane)

        def close():
            if cur[0] is not None:
                out.extend(hoist)
                loop = [f"  for (u32 lane = 0; lane < {L}u; lane++) {{", *body, "  }"]
                if not st.loop_refuse and any(_FAST_CALL.search(x) for x in body):
                    # float arithmetic first without NaN fix-ups (wl_nan: a raw result was NaN),
                    # then, only if one was, the loop again exactly: no NaN, the same values
                    # (the loop writes only its own values: running it twice is running it once)
                    loop = (
                        ["  { u32 wl_nan = 0u;", f"  {{ {_FAST_DECL}"]
                        + loop
                        + ["  }", "  if (wl_nan) {"]
                        + [f"  {x} = 0u;" for x in st.accs]
                        + loop
                        + ["  } }"]
                    )
                out.extend(loop)
                hoist.clear()
                body.clear()
                st.accs.clear()
                st.loop_refuse = False
                cur[0] = None

        def scalar(line):
            (hoist if cur[0] is not None else out).append("  " + line)

        def lane(line):
            body.append("    " + line)

        def define(op, e, where):
            """Value of op = expression e: scalar at wave scope, loop-local or array."""
            o = f"v{op.out.id}"
            t = ctype[op.out.id] = self.ctype(op)
            if where == "s":
                scalar(f"const {t} {o} = {e};")
                tmpl[op.out.id] = o
            elif op.out.id in arrays:
                # b1 lanes stored as u32: a loop mixing byte and word arrays does not vectorise
                decl.append(f"  {'u32' if t == 'b1' else t} {o}[{L}];")
                lane(f"{o}[lane] = {e};")
                tmpl[op.out.id] = o + "[{l}]"
            else:
                lane(f"const {t} {o} = {e};")
                tmpl[op.out.id] = o

        exec64 = (
            f"((u64)S[{EXEC_LO}ll * n + w])"
            if L == 32
            else f"((u64)S[{EXEC_LO}ll * n + w] | ((u64)S[{EXEC_HI}ll * n + w] << 32))"
        )
        st = _Blk(ops, defined, src, tmpl, ctype, out, decl, hoist, hints, vcur, exec64)
        st.ref, st.close, st.scalar, st.lane, st.define = ref, close, scalar, lane, define
        for i, op in enumerate(ops):
            if i in counts:
                st.entry_exec |= not st.exec_written
                e = exec64 if st.exec_written else "wl_exec0"
                scalar(f"lc += (u64){counts[i]} * (u64)__builtin_popcountll({e});")
            kind, loop = place[i]
            if kind == "l" and loop != cur[0]:
                close()
                cur[0] = loop
            elif kind == "x" or kind == "s" and op.name in ("load", "store"):
                close()
            a = [ref(x) for x in op.args]
            at = [ctype[x.id] for x in op.args]
            OPS[op.name](self, st, op, kind, a, at)
            if i in ends:
                close()
        close()
        keep = sorted(keep_regs)
        if keep:
            # one lane loop per register (decision 0013, amendment h88): each reads and writes
            # only its own row of V and lane arrays of this wave, so the loops in register order
            # store what one loop over every register stored; one loop of several rows stayed
            # scalar (the compiler takes the rows, `__restrict` locals, for possibly aliased)
            def each(lines):
                return [f"  for (u32 lane = 0; lane < {L}u; lane++) {x}" for x in lines]

            if src is None:
                out.extend(each(f"VR{r}[lane] = {vcur[r].format(l='lane')};" for r in keep))
            else:
                blend = each(
                    f"{{ const u32 o = VR{r}[lane]; VR{r}[lane] = o ^ ((o ^ (u32)({ref(last[r][0])})) "
                    f"& (0u - (u32)({ref(last[r][1])}))); }}"
                    for r in keep
                )
                # masks that are EXEC words (exec ops): when each has every lane on, the
                # blends are the raw values (a wave with all lanes on skips the blend work)
                masks = {getattr(last[r][1], "id", None) for r in keep}
                if all(m in defined and ops[defined[m]].name == "exec" for m in masks):
                    full = " && ".join(
                        f"(x{m} == {(1 << L) - 1:#x}ull)" for m in sorted(m for m in masks if m is not None)
                    )
                    out.append(f"  if ({full}) {{")
                    out.extend(each(f"VR{r}[lane] = (u32)({ref(last[r][0])});" for r in keep))
                    out.append("  } else {")
                    out.extend(blend)
                    out.append("  }")
                else:
                    out.extend(blend)
        if len(ops) in counts:
            out.append(f"  lc += (u64){counts[len(ops)]} * (u64)__builtin_popcountll({exec64});")
        k = term[0]
        if k in ("jump", "barrier", "mode"):
            out.append(f"  next[kk] = {term[1]};")
        elif k == "branch":
            out.append(f"  next[kk] = ({ref(term[1])}) ? {term[2]} : {term[3]};")
        elif k == "end":
            out.append("  next[kk] = -1;")
        elif k == "setpc":  # the address: the scheduler (or the driver) finds its block
            out.append(f"  C->pcs[kk] = (u64)({ref(term[1])}); next[kk] = -1;")
        else:
            raise Unsupported(f"terminator {k}")
        # the lane arrays live on the caller's stack
        size = {"u64": 8, "i64": 8, "f64": 8, "u16": 2, "i16": 2, "f16": 2, "u8": 1, "i8": 1, "b1": 1}
        stack = sum(
            size.get(d.split()[0], 4) * int(np.prod([int(x) for x in re.findall(r"\[(\d+)\]", d)]))
            for d in decl
        )
        if stack > MAX_STACK_BYTES:
            raise Unsupported(f"lane arrays of {stack} bytes: more than the stack bound")
        head = [
            f'extern "C" void wl_b{blk.index}(WlCtx* C, const i64* waves, i64 N, i32* next) {{',
            "  u32* const S = C->S; const i64 n = C->n; u64 lc = 0;",
            # (locals: a store through u8* would otherwise make every use reload C's fields)
            "  u8* const AR = C->arena; u8* const WR = C->written;",
        ]
        head += [f"  i64 {h} = -1;" for h in hints]
        # remembered uniform loads (wl_ldm): for the call's waves
        head += [
            f"  u32 m{h}ok = 0u; u64 m{h}a = 0ull; i64 m{h}i = 0; u32 m{h}v[{W}];" for h, _, W in st.memos
        ]
        if st.rings:
            # waves of the first wave's workgroup (the prefetches' stride: one group on)
            head += [f"  u64 p{h}[{self.RING}];" for h in st.rings]
            head += [
                "  i64 wl_pfg = 1;",
                "  if (N > 0) { const i64 w0 = waves ? waves[0] : 0;",
                f"    while (wl_pfg < {self.RING} && w0 + wl_pfg < n && C->grp[w0 + wl_pfg] == C->grp[w0]) wl_pfg++; }}",
            ]
        head += ["  for (i64 kk = 0; kk < N; kk++) {", "  const i64 w = waves ? waves[kk] : kk;"]
        # distinct registers are distinct rows of V: restrict lets the lane loops vectorise
        head += [f"  u32* __restrict const VR{r} = C->V + ({r}ll * n + w) * {L};" for r in vregs]
        out = _unmemo(out, st.memos)
        full = f"{(1 << L) - 1:#x}ull"
        if (
            st.entry_exec
            and blk.index not in self.looping
            and any(x.startswith("  for (u32 lane") for x in out)
            and len(ops) <= ALLON_MAX_OPS
            and self.allon_ops + len(ops) <= ALLON_PROGRAM_OPS
        ):
            self.allon_ops += len(ops)
            # a wave with every lane on runs a copy of the code in which EXEC at the block's
            # start is that constant: its masks, blends and run tests fold away.  Not in a loop:
            # there the lanes drop out from one run to the next, and the test was a branch the
            # core mispredicted (Collatz: 1.8x the time, 2026-12-05)
            out = (
                [f"  const u64 wl_e = {exec64};", f"  if (wl_e == {full}) {{ const u64 wl_exec0 = {full};"]
                + out
                + ["  } else { const u64 wl_exec0 = wl_e;"]
                + out
                + ["  }"]
            )
        elif st.entry_exec:
            out = [f"  const u64 wl_exec0 = {exec64};", *out]
        # lane arrays on 64-byte boundaries: the lane loops move them as whole vectors, and one
        # across two cache lines split those accesses and stalled the reads of stored vectors
        # (a store-to-load forward from a split store; the run tests, 2026-12-05)
        decl = ["  alignas(64) " + d.lstrip() for d in decl]
        return "\n".join(head + decl + out + ["  }", "  C->lanes += (i64)lc;", "}"]) + "\n"


UNMEMO = "WL_UNMEMO"  # (a marker: BlockSource.block writes the test in its place)
UNMEMO_ALL = "WL_UNMEMO_ALL;"


def _unmemo(out: list[str], memos) -> list[str]:
    """The block's statements with its stores' WL_UNMEMO markers written out: each remembered
    uniform load (hint, bytes) whose arena bytes [m<h>i, + bytes) the store may have covered is
    forgotten; none remembered: nothing."""
    res = []
    for x in out:
        t = x.strip()
        if t == UNMEMO_ALL:
            res += [f"  m{h}ok = 0u;" for h, _, _ in memos]
        elif t.startswith(UNMEMO + "("):
            nb = t[len(UNMEMO) + 1 : t.index(")")]
            res += [
                f"    if (d == WL_NONE || ((i64)lo + d < m{h}i + {mb} && m{h}i < (i64)hi + d + {nb})) m{h}ok = 0u;"
                for h, mb, _ in memos
            ]
        else:
            res.append(x)
    return res


class _Blk:
    """What the lowering of one block's ops (BlockSource.block) shares with each op's entry of
    OPS: the block's ops, the value templates and C types, the statement lists and writers."""

    def __init__(self, ops, defined, src, tmpl, ctype, out, decl, hoist, hints, vcur, exec64) -> None:
        self.ops, self.defined, self.src = ops, defined, src
        self.tmpl, self.ctype, self.out, self.decl, self.hoist = tmpl, ctype, out, decl, hoist
        self.hints, self.vcur, self.exec64 = hints, vcur, exec64
        self.rings: list[str] = []  # global accesses' prefetch rings (BlockSource._lane_access)
        self.memos: list[tuple[str, int, int]] = []  # remembered uniform loads (hint, bytes, words)
        self.accs: list[str] = []  # the open loop's accumulators (ballot, readlane)
        self.loop_refuse = False  # the open loop refuses (it returns: not run twice)
        self.exec_written = False  # an EXEC word was written (sset) by the ops so far
        self.entry_exec = False  # an exec op read EXEC before any write (wl_exec0)
        # ref(value[, lane]), close(), scalar(line), lane(line), define(op, expr, where)
        self.ref: Any = None
        self.close: Any = None
        self.scalar: Any = None
        self.lane: Any = None
        self.define: Any = None


# The float arithmetic whose NaN fix-ups (cfamily/prelude.h wl_nf2, wl_nfma) a lane loop first
# runs without: in that loop's scope these names are functors (native_memory.h WlFast) of the
# same overloads, giving the raw result and noting a NaN one in wl_nan.
_FAST_FNS = ("fadd", "fsub", "fmul", "fdiv", "fma")
_FAST_CALL = re.compile(r"\bwl_(?:" + "|".join(_FAST_FNS) + r")\(")
_FAST_DECL = " ".join(f"const WlFast{f.capitalize()} wl_{f}{{wl_nan}};" for f in _FAST_FNS)

# Each op's lowering in a block: (block source, block state, op, its place kind ("s" scalar,
# "l" lane loop, "x" scatter: BlockSource._place), argument templates, their C types).


def _const(g, b, op, kind, a, at):
    v = op.attrs.get("value_np", op.attrs.get("value"))
    ct = IR_TYPE.get(np.asarray(v).dtype.type, op.type) if "value_np" in op.attrs else op.type
    # (a float as it is: .item() made an f32 a Python float, which quiets a signaling NaN)
    lit = const_literal(ct, v if ct in ("f16", "f32", "f64") or not hasattr(v, "item") else v.item())
    b.tmpl[op.out.id] = lit.replace("{", "{{").replace("}", "}}")  # (f16{...})
    b.ctype[op.out.id] = ct


def _value(g, b, op, kind, a, at):
    try:
        e = g.values.value_expr(op, a, at)
    except cf.Unsupported as ex:
        raise Unsupported(str(ex)) from None
    b.define(op, e, kind)


def _sget(g, b, op, kind, a, at):
    b.define(op, f"S[{op.attrs['reg']}ll * n + w]", "s")


def _sset(g, b, op, kind, a, at):
    b.exec_written |= op.attrs["reg"] in (EXEC_LO, EXEC_HI)
    b.scalar(f"S[{op.attrs['reg']}ll * n + w] = (u32)({a[0]});")


def _vget(g, b, op, kind, a, at):
    r = op.attrs["reg"]
    if b.src is not None and op.out.id in b.src:  # the raw value of a deferred write
        b.tmpl[op.out.id], b.ctype[op.out.id] = f"((u32)({b.tmpl[b.src[op.out.id].id]}))", "u32"
    elif r in b.vcur:  # written earlier in the block: that value
        b.tmpl[op.out.id], b.ctype[op.out.id] = b.vcur[r], "u32"
    else:
        b.define(op, f"VR{r}[lane]", "l")


def _vset(g, b, op, kind, a, at):
    # registers written in the block live in lane arrays (L1) until its end, where
    # those live after it are stored once: no V row traffic for temporaries.  A bit
    # blend, not a select (a select of a load was if-converted to masked loads that
    # did not vectorise)
    r = op.attrs["reg"]
    if b.src is not None:
        return  # blended once, at the end (deferred_blends)
    old = b.vcur[r].format(l="lane") if r in b.vcur else f"VR{r}[lane]"
    o = f"r{r}_{len(b.decl)}"
    b.decl.append(f"  u32 {o}[{g.L}];")
    b.lane(f"{{ const u32 o = {old}; {o}[lane] = o ^ ((o ^ (u32)({a[0]})) & (0u - (u32)({a[1]}))); }}")
    b.vcur[r] = o + "[{l}]"


def _exec(g, b, op, kind, a, at):
    x = f"x{op.out.id}"
    # before any EXEC write: the wave's EXEC at the block's start (wl_exec0: a constant in the
    # all-lanes copy of the wave's code, BlockSource.block)
    b.entry_exec |= not b.exec_written
    b.scalar(f"const u64 {x} = {b.exec64 if b.exec_written else 'wl_exec0'};")
    b.define(op, f"((({x} >> lane) & 1ull) != 0ull)", "l")


def _lanes(g, b, op, kind, a, at):
    b.tmpl[op.out.id] = b.tmpl[op.args[0].id]
    b.ctype[op.out.id] = b.ctype[op.args[0].id]


def _ballot(g, b, op, kind, a, at):
    o = f"v{op.out.id}"
    b.hoist.append(f"  u64 {o} = 0ull;")
    b.accs.append(o)
    b.lane(f"{o} |= (u64)(({a[0]}) ? 1u : 0u) << lane;")
    b.tmpl[op.out.id], b.ctype[op.out.id] = o, "u64"


def _readlane(g, b, op, kind, a, at):
    o = f"v{op.out.id}"
    b.hoist.append(f"  u32 {o} = 0u;")
    b.accs.append(o)
    b.lane(f"if (lane == (u32)({a[1]}) % {g.L}u) {o} = (u32)({a[0]});")
    b.tmpl[op.out.id], b.ctype[op.out.id] = o, "u32"


def _shuffle(g, b, op, kind, a, at):
    b.define(op, f"(u32)({b.ref(op.args[0], f'((u32)({a[1]}) % {g.L}u)')})", "l")


def _permute(g, b, op, kind, a, at):
    L, o = g.L, f"v{op.out.id}"
    b.decl.append(f"  u32 {o}[{L}];")
    b.out.append(f"  for (u32 lane = 0; lane < {L}u; lane++) {o}[lane] = 0u;")
    b.out.append(
        f"  for (u32 lane = 0; lane < {L}u; lane++) if ({a[2]}) {o}[(u32)({a[1]}) % {L}u] = (u32)({a[0]});"
    )
    b.tmpl[op.out.id], b.ctype[op.out.id] = o + "[{l}]", "u32"


def _access(g, b, op, kind, a, at):
    """load and store."""
    n, L = op.name, g.L
    h = f"h{len(b.hints)}"
    b.hints.append(h)
    if kind == "s" and op.attrs["space"] == "global" and op.name == "load":
        # remembered across the call's waves (native_memory.h wl_ldm; decision 0013, h88)
        o, W, nb = f"v{op.out.id}", op.attrs["words"], op.attrs["nbytes"]
        b.tmpl[op.out.id] = o
        b.memos.append((h, nb, W))
        b.scalar(f"u32 {o}[{W}] = {{0u}};")
        b.scalar(
            f"if ({a[1]}) wl_ldm(C, w, {op.instr}u, (u64)({a[0]}), {nb}u, {W}u, {o}, {h}, "
            f"m{h}ok, m{h}a, m{h}i, m{h}v);"
        )
    elif kind == "s":
        g._scalar_access(op, a, h, b.scalar, b.tmpl)
        if op.name == "store" and op.attrs["space"] == "global":
            b.scalar(UNMEMO_ALL)
    else:
        if n == "load":
            b.decl.append(f"  u32 v{op.out.id}[{L}][{op.attrs['words']}];")
        m = op.args[1]
        allon = (
            f"(x{m.id} == {(1 << L) - 1:#x}ull)"
            if m.id in b.defined and b.ops[b.defined[m.id]].name == "exec"
            else None
        )
        if op.attrs["space"] == "scratch":
            if n == "load":
                b.tmpl[op.out.id] = f"v{op.out.id}[{{l}}]"
            b.out.extend(g._scratch_access(op, a))
        else:
            if op.attrs["space"] == "global":
                b.rings.append(h)
            b.out.extend(
                g._lane_access(
                    op,
                    a,
                    b.ref(op.args[0], "r"),
                    b.ref(op.args[0], "(lane - 1u)"),
                    h,
                    b.tmpl,
                    allon,
                    b.ref(op.args[0], "0u") if op.attrs["space"] == "global" else "",
                    _u64_array(b, op.args[0]),
                )
            )
    if n == "load":
        b.ctype[op.out.id] = "u32"


def _u64_array(b, x) -> str | None:
    """The name of value x's lane array when it has one of u64 (``v<id>[lane]``), else None."""
    t = b.tmpl.get(x.id, "") if hasattr(x, "id") else ""
    if b.ctype.get(x.id) in ("u64", "i64") and re.fullmatch(r"v\d+\[\{l\}\]", t):
        return t[: -len("[{l}]")]
    return None


def _atomic(g, b, op, kind, a, at):
    # lanes in order, each a whole read-modify-write (numpy/atomics.py apply)
    if kind != "x" or op.attrs["op"] not in ATOMIC_OPS:
        raise Unsupported(f"atomic {op.attrs['op']}")
    L = g.L
    h = f"h{len(b.hints)}"
    b.hints.append(h)
    o, T = f"v{op.out.id}", ("u64", "i64") if op.attrs["bits"] == 64 else ("u32", "i32")
    b.decl.append(f"  {T[0]} {o}[{L}];")
    cmp = f"({T[0]})({a[3]})" if len(a) > 3 else "0"
    b.out.append(
        f"  for (u32 lane = 0; lane < {L}u; lane++) {o}[lane] = ({a[1]}) ? "
        f"wl_atomic<{T[0]}, {T[1]}>(C, {_SPACES[op.attrs['space']]}u, w, lane, {L}u, {op.instr}u, "
        f"(u64)({a[0]}), {ATOMIC_OPS.index(op.attrs['op'])}u, ({T[0]})({a[2]}), {cmp}, {h}) : 0;"
    )
    b.out.append(UNMEMO_ALL)
    b.tmpl[op.out.id], b.ctype[op.out.id] = o + "[{l}]", T[0]


def _word(g, b, op, kind, a, at):
    base = b.tmpl[op.args[0].id]
    b.tmpl[op.out.id] = f"{base}[{op.attrs['k']}]"
    b.ctype[op.out.id] = "u32"


def _refuse_if(g, b, op, kind, a, at):
    k = len(g.refusals)
    g.refusals.append(refusal_of(op))
    if kind == "l":
        b.loop_refuse = True
    (b.lane if kind == "l" else b.scalar)(f"if ({a[0]}) {{ C->refuse = {k}; return; }}")


# op name -> its lowering in a native block (BlockSource.block): every op of ir/ops.py and the
# passes' PASS_OPS, one entry each (a missing one is a KeyError, which tests/ir/test_ops.py's
# probe reports; an op the tier leaves to the NumPy block would be an entry raising
# Unsupported with its name).  The pure value ops are cfamily's expressions (VALUE_EXPR).
OPS: dict[str, Callable[..., None]] = {
    **{n: _value for n in VALUE_EXPR},
    "const": _const,
    "sget": _sget,
    "sset": _sset,
    "vget": _vget,
    "vset": _vset,
    "exec": _exec,
    "lane_id": lambda g, b, op, kind, a, at: b.define(op, "lane", "l"),
    "lanes": _lanes,
    "ballot": _ballot,
    "readlane": _readlane,
    "shuffle": _shuffle,
    "permute": _permute,
    "load": _access,
    "store": _access,
    "atomic": _atomic,
    "word": _word,
    "refuse_if": _refuse_if,
}


# ------------------------------------------------------------------------------ compiling
def cache_dir() -> pathlib.Path | None:
    """The native tier's library cache, private and checked (backends/disk_cache.py), or None:
    refused (a CacheWarning says why), libraries are built for this process only."""
    return disk_cache.usable_dir("native", "WAVELIFT_NATIVE_CACHE")


# -O3: if-conversion and vectorisation of the lane loops; -fno-trapping-math lets the compiler
# evaluate both sides of a float select (it changes no value: we never read the FP flags)
FLAGS = (
    tuple(settings.get("WAVELIFT_NATIVE_OPT").split())
    + ("-march=native", "-fno-trapping-math")
    + host.COMPILE_FLAGS
)


def library_name(source: str, cxx: str) -> str:
    """The cache entry of ``source``'s library: a hash of source, compiler version, flags and
    host."""
    h = hashlib.sha256(
        "\0".join((source, _version(cxx), *FLAGS, platform.machine(), platform.node())).encode()
    )  # -march=native: this host
    return h.hexdigest()[:32]


def index_name(version: str, key: tuple, mode: int, wave_size: int) -> str | None:
    """The native index's name for the library of the program that ``key`` names (parts whose
    repr is the same in every process: numpy/codegen.ModeBlocks) under ``version`` (a digest of
    the code that makes a library's source from a program) for ``mode`` and ``wave_size``, with
    what else goes into the library: compiler (its file's identity rather than its --version,
    a process's run of which costs ~20-60 ms), flags, host, the blends setting; None: no
    compiler."""
    cxx = _index_compiler(settings.get("WAVELIFT_CXX"))
    if cxx is None:
        return None
    parts = (
        "native-index",
        1,
        version,
        key,
        mode,
        wave_size,
        cxx,
        _identity(cxx),
        FLAGS,
        platform.machine(),
        platform.node(),
        settings.get("WAVELIFT_NATIVE_BLENDS"),
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def compile_library(source: str, background: bool = False, origin: list | None = None, index=None):
    """Find in the disk cache (verified: docs/decisions/0016-trusted-caches.md) or compile, then
    load from a private copy of the checked bytes.  ``background``: a library not in the cache is
    compiled in a worker thread and a Future of it is returned at once (the caller runs NumPy
    blocks meanwhile: a large program costs minutes of g++ -O3).  ``origin``, if given, gets
    where the library comes from appended: "disk cache" or "compiled", then its cache name.
    ``index``: (the native index's name, a function: library cache name -> its entry) -- a
    background compile writes that entry as soon as the library is on disk (decision 0012,
    amendment h107; the caller writes it otherwise, when it attaches the library)."""
    cxx = host.compiler()
    if cxx is None:
        raise Unsupported("no C++ compiler (clang++ or g++) found")
    name = library_name(source, cxx)
    d = cache_dir()
    try:
        data = disk_cache.read(d, name, ".so") if d else None
    except disk_cache.CacheRefused as e:
        raise Unsupported(f"no private temp directory: {e}") from None
    if origin is not None:
        origin += ["compiled" if data is None else "disk cache", name]
    if data is None and background:
        entry = None if index is None or d is None else (index[0], index[1](name))
        return _background(cxx, source, name, d, entry)
    return _build_and_load(cxx, source, name, d, data)


def _build_and_load(cxx: str, source: str, name: str, d, data: bytes | None = None) -> ctypes.CDLL:
    try:
        if data is None:
            data = _build(cxx, source)
            if d:
                disk_cache.write(d, name, ".so", data)
        return disk_cache.load_library(data)
    except disk_cache.CacheRefused as e:
        raise Unsupported(f"no private temp directory: {e}") from None


_COMPILES: queue.SimpleQueue | None = None
_QUEUED = [0]  # compiles queued and not finished (under _DONE)
_DONE = threading.Condition()


def _background(cxx: str, source: str, name: str, d, index=None) -> Future:
    """Queue a background compile (one at a time: each is a whole C++ compiler run) -> a Future
    of the loaded library.  With a disk cache the compiler runs in a process of its own that
    stores the library there, so a run that ends first still leaves it for the next run (at
    exit, compiles not yet started are dropped).  ``index``: (name, entry) of the native index,
    written by that process right after the library (a run that ends while it compiles still
    leaves the next run an entry: it makes no source for it)."""
    global _COMPILES
    if _COMPILES is None:
        _COMPILES = queue.SimpleQueue()
        threading.Thread(target=_compile_worker, name="wavelift-native-compile", daemon=True).start()
    fut: Future = Future()
    with _DONE:
        _QUEUED[0] += 1
    _COMPILES.put((fut, cxx, source, name, d, index))
    return fut


def _compile_worker() -> None:
    assert _COMPILES is not None
    while True:
        fut, cxx, source, name, d, index = _COMPILES.get()
        try:
            if d is None:
                fut.set_result(_build_and_load(cxx, source, name, d))
            else:
                _store_in_child(source, d, name, index)
                data = disk_cache.read(d, name, ".so")
                fut.set_result(
                    disk_cache.load_library(data)
                    if data is not None
                    else _build_and_load(cxx, source, name, d)
                )
        except BaseException as e:  # noqa: BLE001 - handed to the waiting dispatch
            fut.set_exception(e if isinstance(e, Exception) else Unsupported(repr(e)))
        with _DONE:
            _QUEUED[0] -= 1
            _DONE.notify_all()


_STORE = "from wavelift.backends import native; native.store_main()"


def _store_in_child(source: str, d, name: str, index=None) -> None:
    """Compile ``source`` into the disk cache entry ``name`` in a process of its own (its own
    session: it is not killed with this one), then write the native index's entry ``index``
    ((name, entry bytes): our own JSON) when given.  Only numbers and our own text reach it."""
    env = settings.environment()
    root = str(pathlib.Path(__file__).resolve().parents[3])  # (where ``wavelift`` is)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    p = subprocess.Popen(
        [sys.executable, "-c", _STORE, str(d), name, *(() if index is None else (index[0],))],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
        text=True,
    )
    text = source if index is None else source + "\0" + index[1].decode()
    _, err = p.communicate(text, timeout=COMPILE_TIMEOUT_S + 60)
    if p.returncode != 0:
        raise Unsupported(
            err.strip().splitlines()[-1] if err.strip() else f"background compile exited with {p.returncode}"
        )


def store_main() -> None:
    """The background compile's process: source on stdin -> the disk cache entry argv[1:3]; with
    an index name argv[3], the native index's entry (after a NUL on stdin) written after it."""
    d, name = pathlib.Path(sys.argv[1]), sys.argv[2]
    source, entry = sys.stdin.read(), None
    if len(sys.argv) > 3:
        source, _, entry = source.partition("\0")
    cxx = host.compiler()
    if cxx is None or library_name(source, cxx) != name:
        raise SystemExit("the background compile's compiler or source differs from its caller's")
    try:
        disk_cache.write(d, name, ".so", _build(cxx, source))
    except (Unsupported, disk_cache.CacheRefused) as e:
        raise SystemExit(str(e)) from None
    if entry is not None and re.fullmatch("[0-9a-f]{32}", sys.argv[3]):
        # (an entry of index_entry's form naming this library; else none: the caller writes
        # one when it attaches the library, as without this)
        try:
            if _index_fields(entry.encode())["library"] == name:
                disk_cache.write(d, sys.argv[3], ".idx", entry.encode())
        except (ValueError, KeyError, TypeError, AttributeError, disk_cache.CacheRefused, OSError):
            pass


# Landing's copy of a large written span with non-temporal stores (decision 0013, amendment
# h91): the 8 MiB output of a full-screen dispatch lands in guest memory that is not in cache
# (the run streamed its inputs, the arena and the written map through it), and a plain copy
# reads each destination line before writing it; streaming stores do not.  The same bytes land.
STREAM_MIN = 4 << 20  # (bytes) smaller spans: numpy's copy, whose destination may be cached
_STREAM_SRC = r"""
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
extern "C" void wl_stream_copy(char* dst, const char* src, uint64_t n) {
#if defined(__SSE2__)
  uint64_t h = (16u - ((uintptr_t)dst & 15u)) & 15u;
  if (h > n) h = n;
  memcpy(dst, src, h); dst += h; src += h; n -= h;
  const uint64_t m = n & ~(uint64_t)63;
  for (uint64_t i = 0; i < m; i += 64) {
    const __m128i a = _mm_loadu_si128((const __m128i*)(src + i));
    const __m128i b = _mm_loadu_si128((const __m128i*)(src + i + 16));
    const __m128i c = _mm_loadu_si128((const __m128i*)(src + i + 32));
    const __m128i d = _mm_loadu_si128((const __m128i*)(src + i + 48));
    _mm_stream_si128((__m128i*)(dst + i), a); _mm_stream_si128((__m128i*)(dst + i + 16), b);
    _mm_stream_si128((__m128i*)(dst + i + 32), c); _mm_stream_si128((__m128i*)(dst + i + 48), d);
  }
  _mm_sfence();
  memcpy(dst + m, src + m, n - m);
#else
  memcpy(dst, src, n);
#endif
}
"""
_STREAM: list = []  # [the library, a Future of it, or None: none to be had]


def stream_copy() -> Callable[[np.ndarray, np.ndarray], None] | None:
    """copy(dst, src) of two contiguous byte arrays of one size with streaming stores, once the
    helper library is loaded; None before (its compile, the first call's, runs in the
    background: the caller copies as before) or where it cannot be built."""
    if not _STREAM:
        try:
            _STREAM.append(compile_library(_STREAM_SRC, background=True))
        except Unsupported:
            _STREAM.append(None)
    lib = _STREAM[0]
    if isinstance(lib, Future):
        if not lib.done():
            return None
        try:
            lib = _STREAM[0] = lib.result()
        except Exception:
            lib = _STREAM[0] = None
    if lib is None:
        return None
    fn = lib.wl_stream_copy
    if fn.argtypes is None:
        fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64], None

    def copy(dst: np.ndarray, src: np.ndarray) -> None:
        if dst.nbytes != src.nbytes or not (dst.flags.c_contiguous and src.flags.c_contiguous):
            dst[:] = src  # (never a raw copy past either array: a checked one, not an assert)
            return
        fn(dst.ctypes.data, src.ctypes.data, dst.nbytes)

    return copy


def wait_for_compiles() -> None:
    """Block until every background compile queued so far has finished (benchmarks call it
    between a cold and the warm runs, so the warm runs measure the tier itself)."""
    with _DONE:
        _DONE.wait_for(lambda: _QUEUED[0] == 0)


def _build(cxx: str, source: str) -> bytes:
    """The library of ``source``, compiled in a private temp directory."""
    with disk_cache.private_temp() as tmp:
        src, so = pathlib.Path(tmp) / "m.cpp", pathlib.Path(tmp) / "m.so"
        src.write_text(source)
        try:
            r = subprocess.run(
                [cxx, *FLAGS, str(src), "-o", str(so)],
                capture_output=True,
                text=True,
                timeout=COMPILE_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise Unsupported(f"host compile took more than {COMPILE_TIMEOUT_S} s") from None
        if r.returncode != 0:
            raise Unsupported(f"host compile failed: {r.stderr[:2000]}")
        return so.read_bytes()


@functools.cache
def _index_compiler(_setting) -> str | None:
    """host.compiler() once a process for the same setting (index_name: ~0.1 ms of PATH search
    a lookup otherwise).  A compiler found later on another PATH only changes which entries are
    looked for: each names a library its own compiler built from the same source."""
    return host.compiler()


# the native index's entries in each cache directory, as listed by this process once (names
# with a digest file) plus those it wrote: a name not there is not looked for on disk (a program
# run once, e.g. each of tinygrad's instruction tests, costs no file system call for it)
_INDEX_NAMES: dict = {}


def _index_names(d: pathlib.Path) -> set:
    names = _INDEX_NAMES.get(str(d))
    if names is None:
        try:
            names = {f[:-7] for f in os.listdir(d) if f.endswith(".sha256")}
        except OSError:
            names = set()
        _INDEX_NAMES[str(d)] = names
    return names


def index_store(name: str, entry: bytes) -> None:
    """Write the native index's entry ``name`` (NativeBlocks.index_entry) in the cache."""
    d = cache_dir()
    if d is not None:
        disk_cache.write(d, name, ".idx", entry)
        _index_names(d).add(name)


@functools.cache
def _identity(cxx: str) -> tuple:
    """The compiler's file as found on PATH (where its links lead): path, size, mtime, inode."""
    import shutil

    path = os.path.realpath(shutil.which(cxx) or cxx)
    st = os.stat(path)
    return (path, st.st_size, st.st_mtime_ns, st.st_ino)


@functools.cache
def _version(cxx: str) -> str:
    r = subprocess.run([cxx, "--version"], capture_output=True, text=True)
    return r.stdout.split("\n", 1)[0]


class NativeBlocks:
    """One MODE's native block functions of a program: every block the tier lowers, in one
    library compiled on first use; ``get`` -> a callable with the NumPy block's signature, or
    None (the block stays a NumPy block)."""

    def _start(self) -> None:
        """The fields of one with no library attached (yet): no block native, no driver."""
        self.unsupported: dict[int, str] = {}
        self.refusals: list = []
        # the driver (wl_drive, wl_waves, wl_drive_ranges), when there is one
        self.drive: _ctypes.CFuncPtr | None = None
        self.waves: _ctypes.CFuncPtr | None = None
        self.drive_ranges: _ctypes.CFuncPtr | None = None  # wl_drive_ranges
        self.races: _ctypes.CFuncPtr | None = None  # wl_races
        self.pending: Future | None = None  # the Future of a background compile
        self.fns: dict = {}
        self.source = ""
        self.origin: str | None = None  # "disk cache", "compiled" or "disk cache (index)"
        self.library = None  # its name in the disk cache (none made: no index entry either)
        # no block lowered (each one's reason in ``unsupported``): what the native index keeps
        # of it (an entry without a library), so that a later process makes no source for it
        self.nothing_lowered = False
        self._drivable = False
        self._names: dict[int, str] = {}  # block -> its function's name in the library
        self._setpc: dict[int, bool] = {}  # block -> whether it ends in s_setpc

    def __init__(
        self, program: Program, wave_size: int, mode: int, passes, background: bool = False, index=None
    ):
        """``passes``: the ir/passes pipeline.Passes of this program and MODE (the blocks after
        the passes, the registers live after each), shared with the NumPy blocks.
        ``background``: a library not in the disk cache compiles in a worker thread; until
        ``ready()`` has attached it, no block is native (``pending``).  ``index``: its native
        index name (ModeBlocks), whose entry the background compile writes once it is done."""
        self._start()
        gen = BlockSource(wave_size)
        gen.scratch_split = {i for i, ins in enumerate(program.instructions) if ins.encoding == "SCRATCH"}
        gen.looping = looping_blocks(program)
        parts, names, entry = [], {}, None
        live = passes.live
        for b in program.blocks:
            if b.uses_float and mode & 15:
                self.unsupported[b.index] = "rounding mode"
                continue
            try:
                blk = passes.block(b.index)  # as the NumPy blocks run it
                if b.index == 0:
                    entry = live_in(blk.ops, live[0], blk.term)
                parts.append(gen.block(blk, lane_count_points(program, blk), live[b.index]))
                names[b.index] = f"wl_b{b.index}"
            except Unsupported as e:
                self.unsupported[b.index] = str(e)
        self.refusals = gen.refusals
        if not parts:
            self.nothing_lowered = bool(self.unsupported)
            return
        # the driver: when every block is here and none changes MODE or jumps to a computed
        # address (what the driver schedules is then exactly the program)
        self._drivable = not self.unsupported and all(
            b.index == i and b.term[0] in ("jump", "branch", "barrier", "end", "setpc")
            for i, b in enumerate(program.blocks)
        )
        self._names = names
        self._setpc = {b.index: b.term[0] == "setpc" for b in program.blocks}
        self.source = (
            host.prelude_semantics()
            + NATIVE_CTX
            + f"static const u32 mode = {mode}u;\n"
            + "\n".join(parts)
            + (driver_source(program, wave_size, entry) if self._drivable else "")
        )
        origin: list = []
        entry = None if index is None else (index, self.index_entry)
        lib = compile_library(self.source, background, origin, entry)
        self.origin = origin[0] if origin else None  # "disk cache" or "compiled"
        self.library = origin[1] if origin else None  # its name in the disk cache
        if isinstance(lib, ctypes.CDLL):
            self._attach(lib)
        else:
            self.pending = lib

    def index_entry(self, library: str | None = None) -> bytes:
        """What the native index (index_name) keeps of this library: everything ``_attach`` and
        the runtime read besides the library itself, which is named by its cache name
        (``library``, else its own; None: nothing lowered, no library)."""
        return json.dumps(
            {
                "library": library or self.library,
                "unsupported": {str(k): v for k, v in self.unsupported.items()},
                "refusals": self.refusals,
                "drivable": self._drivable,
                "names": {str(k): v for k, v in self._names.items()},
                "setpc": {str(k): v for k, v in self._setpc.items()},
            },
            sort_keys=True,
        ).encode()

    @classmethod
    def from_index(cls, name: str) -> NativeBlocks | None:
        """The library the native index names ``name`` (index_name), loaded without making its
        source, or None: no entry, no library, or either not as the cache's rules want them
        (decision 0016: the caller then makes the source as before)."""
        d = _index_dir(settings.get("WAVELIFT_NATIVE_CACHE"), settings.get("XDG_CACHE_HOME"))
        if d is None or name not in _index_names(d):
            return None
        d = cache_dir()  # (checked again where an entry is there to be read)
        if d is None:
            return None
        try:
            raw = disk_cache.read(d, name, ".idx")
            e = None if raw is None else _index_fields(raw)
        except (disk_cache.CacheRefused, OSError, ValueError, KeyError, TypeError, AttributeError):
            return None  # (a malformed entry: made again and written over)
        if e is None:
            return None
        if e["library"] is None:  # (nothing lowered: no library, each block's reason kept)
            if not e["unsupported"] or e["names"] or e["drivable"]:
                return None
            self = cls.__new__(cls)
            self._start()
            self.origin = "native index (nothing lowered)"
            self.unsupported, self.nothing_lowered = e["unsupported"], True
            return self
        try:
            data = disk_cache.read(d, e["library"], ".so")
            lib = None if data is None else disk_cache.load_library(data)
        except (disk_cache.CacheRefused, OSError):
            return None  # (a library that cannot be loaded: made again)
        wanted = [*e["names"].values(), *(("wl_drive", "wl_waves") if e["drivable"] else ())]
        if lib is None or e["names"].keys() - e["setpc"].keys() or not all(hasattr(lib, f) for f in wanted):
            return None  # (a stale entry: a library without a function it names)
        self = cls.__new__(cls)
        self._start()
        self.origin = "disk cache (index)"  # (no source made: the index names its library)
        self.library, self.unsupported, self.refusals = e["library"], e["unsupported"], e["refusals"]
        self._drivable, self._names, self._setpc = e["drivable"], e["names"], e["setpc"]
        self._attach(lib)
        return self

    def ready(self) -> bool:
        """Attach a finished background compile (in the caller's thread, between block runs);
        False while it is still compiling.  A failed compile raises its Unsupported here."""
        if self.pending is not None:
            if not self.pending.done():
                return False
            fut, self.pending = self.pending, None
            self._attach(fut.result())
        return True

    def _attach(self, lib: ctypes.CDLL) -> None:
        if self._drivable:
            self.drive, self.waves = lib.wl_drive, lib.wl_waves
            self.drive.restype = None
            self.drive.argtypes = (ctypes.c_void_p,) * 3 + (ctypes.c_int64,) * 2
            self.waves.restype = ctypes.c_int64
            self.waves.argtypes = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
            # (a library built from an older driver source has none: Runtime._drive_parts
            # then claims the ranges in Python)
            self.races = getattr(lib, "wl_races", None)
            if self.races is not None:
                self.races.restype = ctypes.c_int64
                self.races.argtypes = (ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64)
            self.drive_ranges = getattr(lib, "wl_drive_ranges", None)
            if self.drive_ranges is not None:
                self.drive_ranges.restype = None
                self.drive_ranges.argtypes = (
                    (ctypes.c_void_p,) * 2
                    + (ctypes.c_int64,)
                    + (ctypes.c_void_p,) * 3
                    + (
                        ctypes.c_int64,
                        ctypes.c_void_p,
                    )
                )
        for bi, nm in self._names.items():
            f = getattr(lib, nm)
            f.restype = None
            f.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)
            self.fns[bi] = self._wrap(f, self._setpc[bi])
        self.lib = lib  # (the functions need the library loaded)

    def _wrap(self, f, setpc: bool):
        """The NumPy block's signature; an s_setpc block returns its waves' target addresses."""
        refusals = self.refusals

        def run(R, w, N, mode):
            X = R.native_ctx
            nxt = np.empty(N, np.int32)
            if type(w) is slice:
                f(X.ctypes.data, None, N, nxt.ctypes.data)
            else:
                wi = np.ascontiguousarray(w, np.int64)
                f(X.ctypes.data, wi.ctypes.data, N, nxt.ctypes.data)
            R.native_after(X, refusals)
            return R._native_state.pcs[:N].copy() if setpc else nxt

        return run

    def get(self, index: int):
        return self.fns.get(index)


def _index_fields(raw: bytes) -> dict:
    """index_entry's fields read back from ``raw``, typed; an entry not of that form raises
    ValueError, KeyError, TypeError or AttributeError."""
    e = json.loads(raw)
    return dict(
        library=None if e["library"] is None else str(e["library"]),
        unsupported={int(k): str(v) for k, v in e["unsupported"].items()},
        refusals=[(int(k), str(a), str(b)) for k, a, b in e["refusals"]],
        drivable=bool(e["drivable"]),
        names={int(k): str(v) for k, v in e["names"].items()},
        setpc={int(k): bool(v) for k, v in e["setpc"].items()},
    )


_I64 = np.iinfo(np.int64)


def new_context(win, S, V, n, lds, lds_stride, lds_bytes, grp, esc_cap: int, scratch=None):
    """-> (context words, state): ``state.esc`` the escape records, ``state.touch`` the windows'
    flags, ``state.alive`` every array the words point into (keep it).  S/V: state of ``n``
    waves; grp: each wave's group (its LDS at lds + grp * lds_stride); ``esc_cap``: how many
    escapes may still be recorded; ``scratch``: (u8 array holding wave w's private bytes at
    w * wave bytes, wave bytes, lane mode) when the program has scratch.  (A KeptContext made
    for this run alone: one place builds a context's words.)"""
    return KeptContext(S, V, n, lds, lds_stride, lds_bytes, grp, esc_cap, scratch).words(win)


def _own_words(X, S, V, lds, grp, esc, pcs, scratch) -> list:
    """Set in ``X`` the words of the arrays a context does not share with another thread's
    (register state, LDS, wave groups, escape records, jump addresses, scratch: new_context's
    ``scratch``) -> those arrays (the words point into them: keep them)."""
    alive = [S, V, lds, grp, esc, pcs]
    for name, a in zip(("S", "V", "lds", "grp", "esc", "pcs"), alive, strict=True):
        X[CTX[name]] = address_of(a)
    if scratch is not None:
        arr, wave_bytes, lane_mode = scratch
        alive.append(arr)
        X[CTX["scr"]], X[CTX["scr_bytes"]], X[CTX["scr_lane"]] = address_of(arr), wave_bytes, int(lane_mode)
    return alive


_ARENA, _WRITTEN, _NWIN = CTX["arena"], CTX["written"], CTX["nwin"]


def address_of(a: np.ndarray) -> int:
    """``a.ctypes.data``, ~4x cheaper (~0.5 us) for a writable C-contiguous array with bytes (a
    ctypes object over its buffer starts where its data does); else ``a.ctypes.data`` itself."""
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(a))  # type: ignore[arg-type]
    except (TypeError, ValueError, BufferError):
        return a.ctypes.data


class KeptContext:
    """new_context's words and state for runs of one range, over arrays kept from one run to the
    next of the same module and shapes (numpy/runtime.py ``_serial_words``; decision 0013,
    amendment h95): the register state, LDS, wave groups and scratch as a later chunk of one run
    finds them (the driver zeroes what a chunk can read at its start: native_driver.h), the
    escape records, jump addresses, touch ranges and window words set anew by ``words`` -- the
    words new_context makes, without making the arrays and their addresses again."""

    def __init__(self, S, V, n, lds, lds_stride, lds_bytes, grp, esc_cap: int, scratch=None, shape=()):
        self.shape = shape  # (what the caller matches a kept one by)
        self.esc = np.zeros(5 * max(esc_cap, 1), np.uint64)
        self.pcs = np.zeros(max(n, 1), np.uint64)
        X = np.zeros(len(CTX_FIELDS), np.int64)
        grp = np.ascontiguousarray(grp, np.int64)
        self.alive = _own_words(X, S, V, lds, grp, self.esc, self.pcs, scratch)
        X[CTX["n"]], X[CTX["lds_stride"]], X[CTX["lds_bytes"]] = n, lds_stride, lds_bytes
        X[CTX["esc_cap"]], X[CTX["refuse"]] = max(0, esc_cap), -1
        self.nbytes = sum(a.nbytes for a in self.alive)  # (what keeping it holds)
        self.X0 = X
        self.X = X.copy()  # (the words handed out: one array, its address known)
        self.X_at = self.X.ctypes.data
        self.nwin = -1

    def _sized(self, nw: int) -> None:
        self.nwin = nw
        self.ws, self.we = np.zeros(nw, np.uint64), np.zeros(nw, np.uint64)
        self.wo, self.wkind = np.zeros(nw, np.int64), np.zeros(nw, np.uint8)
        # empty ranges [max, min): an aliased window's offsets are negative, so no start value
        # above them may stand for 'nothing touched'
        self.touch0 = np.tile(np.array([_I64.max, _I64.min], np.int64), 2 * nw)
        self.touch = self.touch0.copy()
        for k, a in zip(("ws", "we", "wo", "wkind", "touch"), self._wins(), strict=True):
            self.X0[CTX[k]] = address_of(a)

    def _wins(self):
        return self.ws, self.we, self.wo, self.wkind, self.touch

    def words(self, win):
        """-> (context words, state) of a run over windows ``win``, as new_context's (the words
        are ``self.X``, at ``self.X_at``: the next call sets them again)."""
        n = len(win.starts)
        if max(n, 1) != self.nwin:
            self._sized(max(n, 1))
        ws, we, wo, wkind, touch = self._wins()
        ws[:n], we[:n], wo[:n] = win.starts, win.ends, win.offs
        wkind[:] = 0
        if win.blank:
            wkind[list(win.blank)] = 2
        arena = address_of(win.arena)
        # an aliased window's "arena offset" reaches its guest memory (native code adds it to
        # the arena pointer; only loads use it)
        for k in win.aliased:
            w = win.windows[k]
            wo[k] = address_of(win.memory.view(w.address, w.size)) - arena
            wkind[k] = 1
        touch[:] = self.touch0
        self.esc[:] = 0
        self.pcs[:] = 0
        written = win.written
        X = self.X
        np.copyto(X, self.X0)
        X[_ARENA], X[_WRITTEN], X[_NWIN] = arena, address_of(written), n
        st = types.SimpleNamespace(esc=self.esc, pcs=self.pcs, touch=touch)
        st.windows = (ws, we, wo, written, wkind)
        st.alive = [*self.alive, ws, we, wo, written, wkind, touch]
        return X, st


@functools.cache
def _index_dir(_setting, _xdg) -> pathlib.Path | None:
    """cache_dir() for the same settings, checked once a process to list its index entries
    (from_index checks it again before reading one)."""
    return cache_dir()


def thread_context(X0, st0, S, V, lds, grp, scratch=None):
    """Another thread's context over the windows of ``X0, st0`` (new_context's; the same
    ``n``, escape capacity, LDS shape): the same words but its own register state ``S``/``V``,
    LDS, wave groups, scratch (as new_context's), escape records, touch ranges and jump
    addresses -> (context words, state) -- without working out the windows' words again."""
    st = types.SimpleNamespace(
        esc=np.zeros_like(st0.esc),
        pcs=np.zeros_like(st0.pcs),
        touch=np.tile(np.array([_I64.max, _I64.min], np.int64), st0.touch.size // 2),
    )
    st.windows = st0.windows
    X = X0.copy()
    own = _own_words(X, S, V, lds, grp, st.esc, st.pcs, scratch)
    X[CTX["touch"]] = st.touch.ctypes.data
    st.alive = [*st0.windows, *own, st.touch]
    return X, st


PROBLEMS: list[str] = []  # every NoNative's reason, in order (the tier tests watch it)


class NoNative:
    """No native library for this MODE (why: no compiler, a failed compile)."""

    drive = None

    def __init__(self, why: str):
        self.why = why
        PROBLEMS.append(why)
        self.unsupported: dict = {}

    def get(self, index: int):
        return None


class _Compiling:
    """A MODE whose library is compiling in the background: no block is native yet."""

    drive = None
    why = None
    unsupported: dict = {}

    def get(self, index: int):
        return None


COMPILING = _Compiling()
