"""Translate a whole program: discover → blocks → IR per block via the family frontends."""

from __future__ import annotations

import dataclasses

from ..errors import Refused
from ..ir.builder import Builder
from ..ir.program import Block, Program
from ..isa import Instruction
from . import (
    data_share,
    flow,
    gfx11,
    gfx12,
    image,
    instr_cache,
    sample,
    scalar_alu,
    scalar_memory,
    vector_alu,
    vector_memory,
)
from . import scratch as scratch_mod
from .common import Unsupported

FRONTEND = {
    "SOP1": scalar_alu.sop1,
    "SOP2": scalar_alu.sop2,
    "SOPK": scalar_alu.sopk,
    "SOPC": scalar_alu.sopc,
    "SOPP": scalar_alu.sopp,
    "SMEM": scalar_memory.translate,
    "VOP1": vector_alu.translate,
    "VOP2": vector_alu.translate,
    "VOPC": vector_alu.translate,
    "VOP3": vector_alu.translate,
    "VOP3B": vector_alu.translate,
    "VOP3P": vector_alu.translate,
    "VOPD": vector_alu.translate,
    "DS": data_share.translate,
    "MUBUF": vector_memory.translate,
    "MTBUF": vector_memory.translate,
    "FLAT": vector_memory.translate,
    "GLOBAL": vector_memory.translate,
    "SCRATCH": vector_memory.translate,
    "MIMG": lambda ins, b: (
        gfx11.mimg(ins, b)
        if b.target.startswith("gfx11")
        else (sample if ins.name.startswith(sample.INSTRUCTIONS) else image).translate(ins, b)
    ),
    "VIMAGE": gfx12.vimage,  # refused by name at run time (decision 0038)
    "VSAMPLE": gfx12.vimage,
}
VECTOR = {
    "VOP1",
    "VOP2",
    "VOPC",
    "VOP3",
    "VOP3B",
    "VOP3P",
    "VOPD",
    "DS",
    "MUBUF",
    "MTBUF",
    "FLAT",
    "GLOBAL",
    "SCRATCH",
    "MIMG",
    "VINTRP",
    # GFX11/GFX12 encodings of vector instructions (isa/encodings.py)
    "VINTERP",
    "LDSDIR",
    "VFLAT",
    "VBUFFER",
    "VIMAGE",
    "VSAMPLE",
}


def lane_count_points(program: Program, blk: Block, within: tuple | None = None) -> dict[int, int]:
    """Exact ``lane_instructions`` for every backend: op index -> number of vector instructions
    of the segment starting there, each to be counted times the active lanes at that op.
    Segments end after each instruction that writes EXEC, so every vector instruction is counted
    with the EXEC it ran under.  ``within``: ``blk`` is a piece of a larger block whose ops start
    at op ``first`` of it, given as (that block's Block.exec_writes..., first): a piece holds
    every op of each of its instructions, so an instruction's last op in the piece is its last
    op in the block less ``first`` (numpy/codegen.py PieceCache, without a walk over the ops)."""
    last_op, writes_exec, first = (*blk.exec_writes(), 0) if within is None else within
    points: dict[int, int] = {}
    start, k = 0, 0
    for ins in blk.instrs:
        if program.instructions[ins].encoding in VECTOR:
            k += 1
        if ins in writes_exec:
            if k:
                points[start] = points.get(start, 0) + k
            start, k = last_op[ins] + 1 - first, 0
    if k:
        points[start] = points.get(start, 0) + k
    return points


def translate(
    code: bytes,
    target: str,
    wave_size: int,
    base_address: int,
    scratch_abi=None,
    entry: int = 0,
    gb_addr_config: int | None = None,
    border_color_base: int | None = None,
) -> Program:
    """``code`` starts at guest address ``base_address``; the program starts at byte ``entry``
    (block 0).  Code below the entry is decoded only where control reaches it (callees).
    ``gb_addr_config``: the GPU's GB_ADDR_CONFIG (image swizzle patterns; None: unknown).
    ``border_color_base``: TA_CS_BC_BASE_ADDR's table address (REGISTER border colours,
    decision 0043; None: never written)."""
    instrs, leaders = flow.discover(code, target, wave_size == 64, base_address, entry)
    groups = flow.blocks(instrs, leaders, entry)
    # scratch: which accesses are scratch, and the offset-register rule (docs/decisions/0008)
    splan = scratch_mod.plan(scratch_mod.analyze(instrs, groups, base_address), scratch_abi)
    counter = [0]
    table: list[Instruction] = []
    blocks = []
    block_at = {g[0]: i for i, g in enumerate(groups)}
    max_vgpr = -1
    uses_scratch = False
    instr_keys: dict = {}  # (Program.instr_keys)
    for bi, offs in enumerate(groups):
        blk = Block(bi, offs[0])
        b = Builder(counter, wave_size)
        b.target = target
        b.gb_addr_config = gb_addr_config
        b.border_color_base = border_color_base
        b.base_address = base_address
        b.scratch = splan
        b.instr_keys = instr_keys
        if instr_cache.LAZY[0]:
            b.lazy = []
        if bi == 0 and gfx12.is_gfx12(target):
            gfx12.prologue(b)  # TTMP7's z half (decision 0027)
        for off in offs:
            ins = instrs[off]
            b.instr = len(table)
            table.append(ins)
            blk.instrs.append(b.instr)
            if ins.encoding in VECTOR:
                blk.valu += 1
            fe = gfx12.HANDLERS.get(ins.name) or FRONTEND.get(ins.encoding)
            try:
                if fe is None:
                    raise Unsupported()
                if ins.name in gfx12.HANDLERS:
                    fe(ins, b)
                else:
                    instr_cache.translate_one(fe, ins, b)
            except Unsupported as e:
                why = f" ({e})" if str(e) else ""
                raise Refused(
                    "program.unsupported_instruction", f"offset {ins.offset:#x}: {ins.text}{why}"
                ) from None
        blk.ops = b.ops
        lazy = instr_cache.lazy_ops(b)
        if lazy is not None:
            blk.set_lazy(lazy)
        nxt = offs[-1] + instrs[offs[-1]].size
        term = b.term or ("jump", nxt)
        blk.term = _resolve(term, block_at, nxt)
        blk.uses_float = b.uses_float
        max_vgpr = max(max_vgpr, b.max_vgpr)
        uses_scratch = uses_scratch or b.uses_scratch
        blocks.append(blk)
    prog = Program(blocks, table, block_at, max_vgpr, uses_scratch=uses_scratch)
    prog.scratch = splan
    prog.instr_keys = instr_keys
    prog.made_with = made_with(target, wave_size, scratch_abi, gb_addr_config, border_color_base)
    return prog


def made_with(target, wave_size, scratch_abi, gb_addr_config, border_color_base) -> tuple:
    """The inputs a translation depends on besides its code, as Program.made_with records them:
    the scratch ABI as ``scratch.plan`` reads it (its fields where enabled; None, absent or
    disabled, both give the empty plan).  execute.translation_parts compares it with the
    dispatch's (decision 0049, h129): a module key names the config's inputs."""
    sabi = None
    if scratch_abi is not None and scratch_abi.enabled:
        sabi = dataclasses.astuple(scratch_abi)
    return (target, wave_size, sabi, gb_addr_config, border_color_base)


def _resolve(term, block_at, nxt):
    kind = term[0]

    def bi(off):
        if off not in block_at:
            return -2  # runs off the decoded program: refused at run time
        return block_at[off]

    if kind == "jump":
        return ("jump", bi(term[1]))
    if kind == "branch":
        return ("branch", term[1], bi(term[2]), bi(term[3]))
    if kind in ("barrier", "mode"):
        return (kind, bi(term[1]))
    return term
