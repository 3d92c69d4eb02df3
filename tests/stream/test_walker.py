"""One walk test per packet type, IB call/chain, and every stream refusal code."""

import numpy as np
import pytest

from wavelift.errors import Refused
from wavelift.memory.guest import GuestMemory
from wavelift.stream import pm4
from wavelift.stream.registers import RegisterFile
from wavelift.stream.walker import StreamWalker


class Env:
    def __init__(self):
        self.mem = GuestMemory()
        self.buf = self.mem.alloc(4096, name="buf")
        self.regs = RegisterFile("gfx1030")
        self.events = []

    def ib(self, dw, name="ib"):
        a = self.mem.alloc(4 * len(dw), name=name, data=np.array(dw, "<u4").view(np.uint8))
        return a, len(dw)

    def walk(self, dw, **kw):
        a, n = self.ib(dw)
        w = StreamWalker(self.mem, self.regs, self.events.append, **kw)
        return w.walk(a, n)

    def refused(self, dw, code, **kw):
        with pytest.raises(Refused) as e:
            self.walk(dw, **kw)
        assert e.value.refusal.code == code, str(e.value)
        return str(e.value)


@pytest.fixture
def env():
    return Env()


def test_set_regs_and_dispatch_direct(env):
    env.walk(
        pm4.set_sh_reg("COMPUTE_PGM_LO", 0x1183)
        + pm4.set_context_reg(0x1BA, 9)
        + pm4.set_config_reg(0x10, 3)
        + pm4.set_uconfig_reg(0x200, 4)
        + pm4.set_sh_reg_index("COMPUTE_STATIC_THREAD_MGMT_SE0", 0x3F)
        + pm4.dispatch_direct(4, 2, 1, 0x8045)
    )
    r = env.regs
    assert r["COMPUTE_PGM_LO"] == 0x1183 and r.get(0x286E8) == 9 and r.get(0x8040) == 3
    assert r.get(0x30800) == 4 and r["COMPUTE_STATIC_THREAD_MGMT_SE0"] == 0x3F
    (ev,) = env.events
    assert ev.kind == "direct" and ev.dims == (4, 2, 1) and ev.initiator == 0x8045
    assert r["COMPUTE_DIM_X"] == 4 and r["COMPUTE_DISPATCH_INITIATOR"] == 0x8045


def test_nops_of_all_kinds(env):
    st = env.walk(pm4.nop(5) + pm4.nop_pad() + pm4.type2_nop() + pm4.nop(2) + pm4.dispatch_direct(1, 1, 1))
    assert st.packets == 5 and len(env.events) == 1


def test_dispatch_indirect_both_forms(env):
    env.mem.write_dwords(env.buf + 64, [3, 2, 1])
    env.walk(
        pm4.set_base(1, env.buf)
        + pm4.dispatch_indirect(64, 0x8041)
        + pm4.dispatch_indirect(initiator=0x41, address=env.buf + 64)
    )
    assert [(e.kind, e.dims, e.indirect_address) for e in env.events] == [
        ("indirect", (3, 2, 1), env.buf + 64)
    ] * 2


def test_dispatch_indirect_without_base_refused(env):
    env.refused(pm4.dispatch_indirect(0, 0x41), "stream.malformed")


def test_load_sh_reg_index(env):
    env.mem.write_dwords(env.buf, [7, 8, 9])
    env.walk(pm4.load_sh_reg_index(env.buf, "COMPUTE_USER_DATA_9", 3))
    assert [env.regs[f"COMPUTE_USER_DATA_{i}"] for i in (9, 10, 11)] == [7, 8, 9]


def test_write_data_memory_and_register(env):
    env.walk(
        pm4.write_data(env.buf + 8, 0xA, 0xB)
        + pm4.write_data(0xB900 >> 2, 0x55, dst_sel=pm4.WRITE_DST_REG)
        + pm4.write_data(env.buf + 32, 1, 2, 3, one_addr=True)
    )
    assert env.mem.read_dwords(env.buf + 8, 2).tolist() == [0xA, 0xB]
    assert env.regs["COMPUTE_USER_DATA_0"] == 0x55
    assert env.mem.read_dwords(env.buf + 32, 2).tolist() == [3, 0]


def test_copy_data_sources_and_destinations(env):
    env.mem.write_dwords(env.buf, [0x11, 0x22])
    env.regs["COMPUTE_USER_DATA_3"] = 0x77
    env.walk(
        pm4.copy_data(pm4.COPY_SRC_MEM, env.buf, pm4.COPY_DST_MEM, env.buf + 16, count64=True)
        + pm4.copy_data(pm4.COPY_SRC_IMM, 0x99, pm4.COPY_DST_TC_L2, env.buf + 32)
        + pm4.copy_data(pm4.COPY_SRC_REG, 0xB90C >> 2, pm4.COPY_DST_MEM, env.buf + 40)
        + pm4.copy_data(pm4.COPY_SRC_IMM, 0x42, pm4.COPY_DST_REG, 0xB910 >> 2)
    )
    assert env.mem.read_dwords(env.buf + 16, 2).tolist() == [0x11, 0x22]
    assert env.mem.read_u32(env.buf + 32) == 0x99 and env.mem.read_u32(env.buf + 40) == 0x77
    assert env.regs["COMPUTE_USER_DATA_4"] == 0x42


def test_dma_data_copy_fill_prefetch(env):
    env.mem.write(env.buf, bytes(range(16)))
    env.walk(
        pm4.dma_data(env.buf, env.buf + 100 * 4, 16)
        + pm4.dma_data(0xCAFE, env.buf + 200 * 4, 8, src_sel=pm4.DMA_SRC_DATA)
        + pm4.dma_data(env.buf, env.buf, 0x400, src_sel=3, dst_sel=pm4.DMA_DST_NOWHERE)
    )
    assert env.mem.read(env.buf + 400, 16) == bytes(range(16))
    assert env.mem.read_dwords(env.buf + 800, 3).tolist() == [0xCAFE, 0xCAFE, 0]


def test_release_mem_writes_fence(env):
    env.walk(
        pm4.release_mem(env.buf, 0xFEED)
        + pm4.release_mem(env.buf + 8, 0x1_0000_0003, data_sel=2)
        + pm4.release_mem(env.buf + 16, data_sel=pm4.DATA_SEL_DISCARD, data=5)
    )
    assert env.mem.read_u32(env.buf) == 0xFEED and env.mem.read_u64(env.buf + 8) == 0x1_0000_0003
    assert env.mem.read_u32(env.buf + 16) == 0


def test_acquire_event_and_skipped_graphics_state(env):
    st = env.walk(
        pm4.context_control()
        + pm4.clear_state()
        + pm4.pfp_sync_me()
        + pm4.acquire_mem(gcr_cntl=0xC3B1)
        + pm4.event_write(0x19)
        + pm4.event_write(pm4.CS_PARTIAL_FLUSH)
        + pm4.set_predication(0, 0)
    )
    assert st.skipped == {"CONTEXT_CONTROL": 1, "CLEAR_STATE": 1, "PFP_SYNC_ME": 1}


def test_wait_reg_mem_met_and_unmet(env):
    env.mem.write_u32(env.buf, 5)
    env.walk(
        pm4.wait_reg_mem(env.buf, 5)
        + pm4.wait_reg_mem(env.buf, 4, function=pm4.WAIT_GT)
        + pm4.wait_reg_mem(env.buf, 0x4, mask=0x4, function=pm4.WAIT_EQ)
    )
    msg = env.refused(
        pm4.write_data(env.buf + 4, 1) + pm4.wait_reg_mem(env.buf, 6) + pm4.write_data(env.buf + 8, 1),
        "stream.wait_unmet",
    )
    assert "dword 5" in msg
    assert (
        env.mem.read_u32(env.buf + 4) == 1 and env.mem.read_u32(env.buf + 8) == 0
    )  # before stays, after never ran


def test_ib_call_returns_and_chain_jumps(env):
    sub, n = env.ib(pm4.set_sh_reg("COMPUTE_USER_DATA_0", 1) + pm4.nop_pad(), "sub")
    tail, m = env.ib(pm4.dispatch_direct(2, 1, 1), "tail")
    env.walk(
        pm4.indirect_buffer(sub, n)
        + pm4.set_sh_reg("COMPUTE_USER_DATA_1", 2)
        + pm4.indirect_buffer(sub, n)
        + pm4.indirect_buffer(tail, m, chain=True)
        + pm4.dispatch_direct(9, 9, 9)
    )  # after a chain: never runs
    assert env.regs["COMPUTE_USER_DATA_1"] == 2 and [e.dims for e in env.events] == [(2, 1, 1)]


def test_ib_loop_call_and_chain_refused(env):
    a = env.mem.alloc(64, name="selfcall")
    env.mem.write_dwords(a, pm4.indirect_buffer(a, 4))
    env.mem.write_dwords(a + 16, pm4.nop(4))
    with pytest.raises(Refused) as e:
        StreamWalker(env.mem, env.regs).walk(a, 4)
    assert e.value.refusal.code == "stream.ib_loop"
    b = env.mem.alloc(64, name="chain_a")
    c = env.mem.alloc(64, name="chain_b")
    env.mem.write_dwords(b, pm4.indirect_buffer(c, 4, chain=True))
    env.mem.write_dwords(c, pm4.indirect_buffer(b, 4, chain=True))
    with pytest.raises(Refused) as e:
        StreamWalker(env.mem, env.regs).walk(b, 4)
    assert e.value.refusal.code == "stream.ib_loop"


def test_ib_depth_refused(env):
    leaf, n = env.ib(pm4.nop(2), "leaf")
    for k in range(6):
        leaf, n = env.ib(pm4.indirect_buffer(leaf, n), f"level{k}")
    env.refused(pm4.indirect_buffer(leaf, n), "stream.ib_depth")


def test_budget_refused(env):
    leaf, n = env.ib(pm4.nop(1000), "leaf")
    env.refused(pm4.indirect_buffer(leaf, n) * 10, "stream.budget", max_dwords=5000)


def test_unknown_opcode_stops_stream_and_names_offset(env):
    msg = env.refused(
        pm4.write_data(env.buf, 1) + pm4.packet(0x2D, [0, 0]) + pm4.write_data(env.buf + 4, 1),
        "stream.unknown_opcode",
    )
    assert "dword 5" in msg and "0x2D" in msg
    assert env.mem.read_dwords(env.buf, 2).tolist() == [1, 0]


def test_truncated_and_bad_type_and_malformed(env):
    assert "dword 2" in env.refused(pm4.nop(2) + pm4.dispatch_direct(1, 1, 1)[:3], "stream.truncated")
    env.refused([0x00001234], "stream.bad_packet_type")
    env.refused(pm4.packet(pm4.DISPATCH_DIRECT, [1, 1]), "stream.malformed")
    env.refused(pm4.packet(pm4.SET_SH_REG, [0x3FF, 1, 2]), "stream.malformed")  # past SH space
    env.refused(pm4.write_data(env.buf + 2, 1), "stream.malformed")  # unaligned
    env.refused(pm4.wait_reg_mem(env.buf, 0, function=7), "stream.malformed")


def test_bad_address_refused(env):
    env.refused(pm4.write_data(0x7000_0000_0000, 1), "stream.bad_address")
    env.refused(pm4.write_data(env.buf + 4092, 1, 2), "stream.bad_address")  # leaves allocation
    env.refused(pm4.indirect_buffer(0x7000_0000_0000, 8), "stream.bad_address")
    env.refused(pm4.dispatch_indirect(initiator=1, address=0x7000_0000_0000), "stream.bad_address")
    assert env.mem.read(env.buf + 4092, 4) == bytes(4)


def test_unsupported_modes_refused(env):
    env.refused(pm4.write_data(0, 1, dst_sel=pm4.WRITE_DST_GDS), "stream.unsupported")
    env.refused(pm4.copy_data(pm4.COPY_SRC_GDS, 0, pm4.COPY_DST_MEM, env.buf), "stream.unsupported")
    env.refused(pm4.release_mem(env.buf, data_sel=pm4.DATA_SEL_GDS), "stream.unsupported")
    env.refused(pm4.event_write(1, 1, address=env.buf), "stream.unsupported")
    env.refused(
        pm4.set_predication(3, env.buf) + pm4.dispatch_direct(1, 1, 1, predicate=1), "stream.unsupported"
    )
    assert env.events == []
