"""Bounded stream work (issue 19 item 6, docs/decisions/0015-bounded-work.md): IB dwords copied,
DMA bytes, dispatches and instructions, counted over all of a capture's streams."""

import numpy as np
import pytest

from wavelift import Capture, pm4, replay
from wavelift.errors import Refused
from wavelift.memory.guest import GuestMemory
from wavelift.run.replay import run_stream
from wavelift.run.result import DispatchResult
from wavelift.stream import walker as W
from wavelift.stream.registers import RegisterFile
from wavelift.stream.walker import StreamLimits, StreamWalker


def _walk(mem, addr, n, **kw):
    return StreamWalker(mem, RegisterFile("gfx1030"), lambda ev: None, **kw).walk(addr, n)


def test_chain_hops_count_the_dwords_they_copy():
    """Each CHAIN hop copies its whole IB: 100 hops of 50,000-dword IBs copy 5M dwords while
    walking 4 dwords each (the old count: 400 dwords, so 4 MB files ran for 40 s)."""
    mem = GuestMemory()
    hops, size = 100, 50_000
    x = mem.alloc(4 * (4 * hops + size), name="chains")
    dw = []
    for k in range(hops):
        dw += pm4.indirect_buffer(x + 16 * (k + 1), size, chain=True)
    mem.write_dwords(x, dw)
    with pytest.raises(Refused) as e:
        _walk(mem, x, 4, max_dwords=10 * size)
    assert e.value.refusal.code == "stream.budget", e.value
    lim = StreamLimits(dwords=10 * size)
    with pytest.raises(Refused):
        StreamWalker(mem, RegisterFile("gfx1030"), limits=lim).walk(x, 4)
    assert lim.used_dwords <= 10 * size


def test_dma_bytes_bounded_before_copying():
    mem = GuestMemory()
    src = mem.alloc(64 << 10, name="src", data=np.full(64 << 10, 7, np.uint8))
    dst = mem.alloc(64 << 10, name="dst")
    stream = []
    for _k in range(20):  # 20 x 64 KiB = 1.25 MiB through DMA_DATA
        stream += pm4.dma_data(src, dst, 64 << 10)
    stream += pm4.dma_data(0x1234, dst, 4, src_sel=pm4.DMA_SRC_DATA)
    ib = mem.alloc(4 * len(stream), name="ib", data=np.array(stream, "<u4").view(np.uint8))
    with pytest.raises(Refused) as e:
        _walk(mem, ib, len(stream), limits=StreamLimits(dma_bytes=1 << 20))
    assert e.value.refusal.code == "stream.dma_budget" and "DMA_DATA" in str(e.value)
    # within the limit it all runs
    lim = StreamLimits(dma_bytes=2 << 20)
    _walk(mem, ib, len(stream), limits=lim)
    assert lim.used_dma_bytes == 20 * (64 << 10) + 4
    assert mem.read_u32(dst) == 0x1234


def test_dma_packet_bounded_by_the_field():
    """One packet moves less than 64 MiB (BYTE_COUNT is 26 bits); the default per-capture
    limit stops a file of 64 MiB packets after MAX_DMA_BYTES."""
    assert W.MAX_DMA_BYTES >= (1 << 26) and W.MAX_DMA_BYTES <= 1 << 30
    body = pm4.dma_data(0, 0, (1 << 26) - 1)[1:]
    assert pm4.decode_body(pm4.DMA_DATA, body)["byte_count"] == (1 << 26) - 1
    lim = StreamLimits(used_dma_bytes=W.MAX_DMA_BYTES - 8)
    mem = GuestMemory()
    buf = mem.alloc(64, name="buf")
    stream = pm4.dma_data(buf, buf + 32, 16)
    ib = mem.alloc(4 * len(stream), name="ib", data=np.array(stream, "<u4").view(np.uint8))
    with pytest.raises(Refused) as e:
        _walk(mem, ib, len(stream), limits=lim)
    assert e.value.refusal.code == "stream.dma_budget"


def test_a_repeated_stream_list_is_bounded():
    """A capture whose stream list names one large IB again and again: the IB dwords copied are
    counted over the whole replay (each stream used to start from zero)."""
    cap = Capture(target="gfx1030")
    n = W.MAX_IB_DWORDS
    dw = []
    while len(dw) < n:
        dw += pm4.nop(min(0x4000, n - len(dw)))
    addr = cap.alloc(4 * n, data=np.array(dw, "<u4").view(np.uint8).tobytes(), name="ib")
    for _ in range(W.MAX_STREAM_DWORDS // n + 2):
        cap.submit_at(addr, n)
    res = replay(cap, execute=lambda m, c, i: DispatchResult(i, c))
    assert len(res) == 1 and res[0].refusal.code == "stream.budget", res


def _dispatching_capture(k):
    cap = Capture(target="gfx1030")
    code = cap.alloc(256, data=b"\x00" * 256, name="code")
    cap.submit(
        pm4.set_sh_regs(
            {
                "COMPUTE_PGM_LO": code >> 8,
                "COMPUTE_NUM_THREAD_X": 32,
                "COMPUTE_NUM_THREAD_Y": 1,
                "COMPUTE_NUM_THREAD_Z": 1,
            }
        )
    )
    for _ in range(k):
        cap.submit(pm4.dispatch_direct(1, 1, 1, initiator=pm4.initiator(wave32=True)))
    return cap


def test_dispatches_and_instructions_per_capture():
    cap = _dispatching_capture(5)
    calls = []

    def execute(memory, config, index):
        calls.append(index)
        return DispatchResult(index, config, stats={"instructions": 1000})

    res = replay(cap, execute=execute, limits=StreamLimits(dispatches=3))
    assert calls == [0, 1, 2] and res[-1].refusal.code == "stream.dispatch_budget"
    calls.clear()
    res = replay(cap, execute=execute, limits=StreamLimits(instructions=2500))
    # the third starts with 2000 run (under the limit), the fourth is refused before it starts
    assert calls == [0, 1, 2] and res[-1].refusal.code == "stream.dispatch_budget"
    assert "3000 instructions" in res[-1].refusal.message
    calls.clear()
    assert all(r.refusal is None for r in replay(cap, execute=execute)) and len(calls) == 5


def test_run_stream_alone_has_its_own_limits():
    mem = GuestMemory()
    stream = pm4.nop(4)
    ib = mem.alloc(16, name="ib", data=np.array(stream, "<u4").view(np.uint8))
    results = []
    assert run_stream(mem, "gfx1030", ib, 4, RegisterFile("gfx1030"), None, results) is None


def test_packets_walked_are_bounded():
    """A 1-dword NOP_PAD is a packet too (~3-8 us of walking each): a million-dword IB of them,
    submitted again and again, stops at MAX_PACKETS packets for the capture, not 16 Mi dwords."""
    mem = GuestMemory()
    n = 5000
    ib = mem.alloc(4 * n, name="pads", data=np.full(n, pm4.NOP_PAD, "<u4").view(np.uint8))
    lim = StreamLimits(packets=12_000)
    _walk(mem, ib, n, limits=lim)
    _walk(mem, ib, n, limits=lim)
    with pytest.raises(Refused) as e:
        _walk(mem, ib, n, limits=lim)
    assert e.value.refusal.code == "stream.budget" and "12000 packets" in str(e.value)
    assert W.MAX_PACKETS <= 1 << 20


def test_load_sh_reg_index_charges_its_dwords():
    mem = GuestMemory()
    src = mem.alloc(4096, name="src")
    stream = pm4.load_sh_reg_index(src, "COMPUTE_USER_DATA_0", 16) * 10
    ib = mem.alloc(4 * len(stream), name="ib", data=np.array(stream, "<u4").view(np.uint8))
    lim = StreamLimits()
    _walk(mem, ib, len(stream), limits=lim)
    assert lim.used_dwords == len(stream) + 10 * 16
