"""PM4 fuzzing: random and mutated real streams never crash, never hang, and never write guest
memory outside the ranges the executed packets name (checked with a decoder written here,
independently of the walker's)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testpaths import FIXTURES

from wavelift.errors import Refused
from wavelift.memory.capture import Capture
from wavelift.memory.guest import GuestMemory, canonical
from wavelift.stream import pm4
from wavelift.stream.registers import RegisterFile
from wavelift.stream.walker import StreamWalker

BUF = 0x1_0000_0000
IBS = 0x2_0000_0000
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def named_ranges(body, op):
    """Guest byte ranges a packet may write, read straight from its dwords."""
    b = list(body)
    if op == 0x37 and len(b) >= 4 and (b[0] >> 8 & 0xF) in (1, 2, 5):
        n = 1 if b[0] >> 16 & 1 else len(b) - 3
        return [(canonical(b[1] | b[2] << 32), 4 * n)]
    if op == 0x40 and len(b) == 5 and (b[0] >> 8 & 0xF) in (1, 2, 5):
        return [(canonical(b[3] | b[4] << 32), 8 if b[0] >> 16 & 1 else 4)]
    if op == 0x50 and len(b) == 6:
        return [(canonical(b[3] | b[4] << 32), b[5] & 0x3FFFFFF)]
    if op == 0x49 and len(b) == 7:
        return [(canonical(b[2] | b[3] << 32), 8)]
    return []


def check_walk(mem, address, size):
    before = {a.base: a.data.copy() for a in mem.allocations}
    ranges = []

    def on_packet(ib, p):
        if p.type == 3 and p.opcode is not None:
            ranges.extend(named_ranges(p.body, p.opcode))

    w = StreamWalker(mem, RegisterFile("gfx1030"), lambda ev: None, on_packet=on_packet, max_dwords=200_000)
    try:
        w.walk(address, size)
    except Refused as e:
        assert e.refusal.code.startswith("stream."), e
    for a in mem.allocations:
        diff = np.nonzero(a.data != before[a.base])[0]
        for off in diff:
            addr = a.base + int(off)
            assert any(s <= addr < s + n for s, n in ranges), (
                f"byte 0x{addr:x} changed outside every named range {ranges}"
            )


def fresh_memory():
    mem = GuestMemory()
    mem.alloc(4096, name="buf", address=BUF, data=np.arange(4096, dtype=np.uint32).astype(np.uint8))
    return mem


addr = st.one_of(
    st.integers(BUF - 8, BUF + 4100).map(lambda a: a & ~3),
    st.integers(0, (1 << 64) - 1),
    st.sampled_from([IBS, IBS + 64, 0]),
)
u32 = st.integers(0, 0xFFFFFFFF)
packets = st.one_of(
    st.builds(lambda a, v: pm4.write_data(a, *v), addr, st.lists(u32, min_size=1, max_size=8)),
    st.builds(
        lambda s, a, d, b, c: pm4.copy_data(s, a, d, b, count64=c),
        st.integers(0, 15),
        addr,
        st.integers(0, 15),
        addr,
        st.booleans(),
    ),
    st.builds(
        lambda a, b, n, s, d: pm4.dma_data(a, b, n, src_sel=s, dst_sel=d),
        addr,
        addr,
        st.integers(0, 5000),
        st.integers(0, 3),
        st.integers(0, 3),
    ),
    st.builds(lambda a, v, s: pm4.release_mem(a, v, data_sel=s), addr, u32, st.integers(0, 7)),
    st.builds(lambda a, r, m, f: pm4.wait_reg_mem(a, r, m, f), addr, u32, u32, st.integers(0, 7)),
    st.builds(
        lambda a, n, c: pm4.indirect_buffer(a, n, chain=c),
        st.sampled_from([IBS, IBS + 64, BUF]),
        st.integers(0, 40),
        st.booleans(),
    ),
    st.builds(
        lambda r, v: pm4.set_sh_reg(r, *v), st.integers(0, 0x3F0), st.lists(u32, min_size=1, max_size=4)
    ),
    st.builds(
        lambda a, r: pm4.load_sh_reg_index(a, r, 3),
        st.sampled_from([BUF, BUF + 4092, IBS]),
        st.integers(0x240, 0x24C),
    ),
    st.builds(lambda x, y, z, i: pm4.dispatch_direct(x, y, z, i), u32, u32, u32, u32),
    st.builds(lambda o, a: pm4.set_base(1, BUF) + pm4.dispatch_indirect(o, 0x45), st.integers(0, 5000), addr),
    st.builds(pm4.nop, st.integers(1, 20)),
    st.lists(u32, min_size=1, max_size=4),  # raw garbage dwords
)


@SETTINGS
@given(st.lists(packets, min_size=1, max_size=12), st.lists(packets, max_size=6))
def test_random_streams(main, sub):
    mem = fresh_memory()
    sub_dw = sum(sub, []) or pm4.nop(2)
    body = sum(main, [])
    mem.alloc(4 * max(len(body), 64) + 4 * len(sub_dw) + 64, name="ibs", address=IBS)
    mem.write_dwords(IBS + 64, sub_dw)  # a sub-IB the packets may call
    mem.write_dwords(IBS, pm4.nop(16))
    a = mem.alloc(4 * len(body), name="main", data=np.array(body, "<u4").view(np.uint8))
    check_walk(mem, a, len(body))


def _radv_ib():
    p = FIXTURES / "captures" / "radv-scratch_array-w32.wlcap"
    if not p.exists():
        return None
    cap = Capture.load(p)
    small = [(a.base, a.data.copy(), a.name) for a in cap.memory.allocations if a.size <= 1 << 18]
    return small, cap.streams


REAL = _radv_ib()


@pytest.mark.skipif(REAL is None, reason="no RADV capture fixture")
@SETTINGS
@given(st.lists(st.tuples(st.integers(0, 4095), u32), min_size=1, max_size=8), st.integers(0, 1))
def test_mutated_real_streams(mutations, which):
    small, streams = REAL
    mem = GuestMemory()
    for base, data, name in small:
        mem.add(base, data.copy(), name)
    ib, n = streams[which]
    for k, v in mutations:
        mem.write_u32(ib + 4 * (k % n), v)
    check_walk(mem, ib, n)
