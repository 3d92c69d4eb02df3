"""TA_CS_BC_BASE_ADDR/_HI (decision 0043): a SET_UCONFIG_REG of RADV's form (si_emit_compute:
one packet, both registers) reaches the dispatch config as the border-colour table's canonical
address; a stream that never writes it gives None; GFX11 dispatches do not take it (their table
is not carried out)."""

from __future__ import annotations

import numpy as np

from wavelift.dispatch.setup import build_config
from wavelift.memory.guest import GuestMemory
from wavelift.stream import pm4
from wavelift.stream.registers import RegisterFile, lookup
from wavelift.stream.walker import StreamWalker


def _config(target: str, dw: list[int]):
    mem = GuestMemory()
    regs = RegisterFile(target)
    events: list = []
    a = mem.alloc(4 * len(dw), name="ib", data=np.array(dw, "<u4").view(np.uint8))
    StreamWalker(mem, regs, events.append).walk(a, len(dw))
    (ev,) = events
    return build_config(regs, target, dims=ev.dims, initiator=ev.initiator)


PROGRAM = pm4.set_sh_reg("COMPUTE_PGM_LO", 0x100) + pm4.set_sh_reg("COMPUTE_NUM_THREAD_X", 64, 1, 1)


def test_radv_packet_reaches_the_config():
    assert lookup(0x30E00).name == "TA_CS_BC_BASE_ADDR" and lookup(0x30E04).name == "TA_CS_BC_BASE_ADDR_HI"
    # RADV: radeon_set_uconfig_reg_seq(cs, R_030E00_TA_CS_BC_BASE_ADDR, 2); bc_va >> 8; bc_va >> 40
    bc = pm4.set_uconfig_reg("TA_CS_BC_BASE_ADDR", 0x01234500, 0x80)
    assert bc[:2] == [0xC0027900, 0x380]
    cfg = _config("gfx1030", bc + PROGRAM + pm4.dispatch_direct(1, 1, 1, 0x8045))
    assert cfg.border_color_base == 0xFFFF8001_23450000
    cfg = _config(
        "gfx1010",
        pm4.set_uconfig_reg("TA_CS_BC_BASE_ADDR", 0x10, 0x00)
        + PROGRAM
        + pm4.dispatch_direct(1, 1, 1, 0x8045),
    )
    assert cfg.border_color_base == 0x1000


def test_never_written_and_gfx11():
    assert _config("gfx1030", PROGRAM + pm4.dispatch_direct(1, 1, 1, 0x8045)).border_color_base is None
    bc = pm4.set_uconfig_reg(0x380, 0x01234500, 0x80)
    assert _config("gfx1100", bc + PROGRAM + pm4.dispatch_direct(1, 1, 1, 0x8045)).border_color_base is None
