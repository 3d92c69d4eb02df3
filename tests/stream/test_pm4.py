"""Every encoder decodes back to what it was given (via the one decoder the walker uses)."""

import pytest

from wavelift.errors import Refused
from wavelift.stream import pm4
from wavelift.stream import registers as R

HI = 0xFFFF_8001_0000_D000


def one(dw):
    ps = pm4.decode(dw)
    assert len(ps) == 1 and ps[0].size == len(dw)
    return ps[0]


def test_header_layout_matches_sid_h():
    # PKT3(op, count, pred) = 3<<30 | count<<16 | op<<8 | pred ; SHADER_TYPE is bit 1
    assert pm4.header(pm4.SET_SH_REG, 1) == 0xC0017600
    assert pm4.dispatch_direct(4, 1, 1, 0x8045)[0] == 0xC0031502
    assert pm4.NOP_PAD == 0xFFFF1000 and pm4.TYPE2_NOP == 0x80000000


@pytest.mark.parametrize(
    "enc,space,addr",
    [
        (lambda: pm4.set_sh_reg("COMPUTE_PGM_RSRC1", 1, 2), "SH", 0xB848),
        (lambda: pm4.set_sh_reg(0x212, 1, 2), "SH", 0xB848),
        (lambda: pm4.set_sh_reg(0xB848, 1, 2), "SH", 0xB848),
        (lambda: pm4.set_context_reg(0x286E8 - 0x28000 >> 2, 1, 2), "CONTEXT", 0x286E8),
        (lambda: pm4.set_config_reg(0x10, 1, 2), "CONFIG", 0x8040),
        (lambda: pm4.set_uconfig_reg("GRBM_GFX_INDEX", 1, 2), "UCONFIG", 0x30800),
        (lambda: pm4.set_uconfig_reg_index(0x242, 1, 2), "UCONFIG", 0x30908),
    ],
)
def test_set_reg_round_trip(enc, space, addr):
    p = one(enc())
    f = p.fields()
    assert (f["space"], f["address"], f["values"]) == (space, addr, (1, 2))


def test_set_sh_reg_index_keeps_index():
    p = one(pm4.set_sh_reg_index("COMPUTE_STATIC_THREAD_MGMT_SE0", 0x3F, index=3))
    assert p.opcode == pm4.SET_SH_REG_INDEX and p.fields()["index"] == 3
    assert p.fields()["address"] == 0xB858


def test_set_sh_regs_merges_consecutive():
    dw = pm4.set_sh_regs({"COMPUTE_PGM_LO": 5, "COMPUTE_PGM_HI": 6, "COMPUTE_USER_DATA_0": 7})
    ps = pm4.decode(dw)
    assert [(p.fields()["address"], p.fields()["values"]) for p in ps] == [(0xB830, (5, 6)), (0xB900, (7,))]


def test_set_reg_rejects_bad_names():
    with pytest.raises(KeyError):
        pm4.set_sh_reg("NO_SUCH_REG", 1)
    with pytest.raises(ValueError):
        pm4.set_sh_reg(0x1234, 1)
    with pytest.raises(ValueError):
        pm4.set_sh_reg("COMPUTE_PGM_LO", 1 << 32)


def test_set_base_dispatch_round_trip():
    assert one(pm4.set_base(1, HI)).fields() == dict(base_index=1, address=HI)
    p = one(pm4.dispatch_direct(7, 8, 9, initiator=0x8045))
    assert p.fields() == dict(x=7, y=8, z=9, initiator=0x8045) and p.shader_type == 1
    f = one(pm4.dispatch_indirect(12, initiator=0x41)).fields()
    assert (f["data_offset"], f["initiator"], f["address"]) == (12, 0x41, None)
    f = one(pm4.dispatch_indirect(initiator=0x45, address=HI + 8)).fields()
    assert (f["address"], f["initiator"]) == (HI + 8, 0x45)


def test_load_sh_reg_index_round_trip():
    f = one(pm4.load_sh_reg_index(HI, "COMPUTE_USER_DATA_9", 3)).fields()
    assert (f["address"], f["address_reg"], f["count"], f["index"]) == (HI, 0xB924, 3, 0)


def test_indirect_buffer_round_trip():
    f = one(pm4.indirect_buffer(HI, 328)).fields()
    assert (f["address"], f["size_dw"], f["chain"], f["valid"]) == (HI, 328, False, False)
    dw = pm4.indirect_buffer(HI, 1024, chain=True, vmid=3)
    assert dw[3] == 1024 | 1 << 20 | 1 << 23 | 3 << 24  # RADV: CHAIN|VALID|size
    f = one(dw).fields()
    assert (f["chain"], f["valid"], f["vmid"]) == (True, True, 3)


def test_nops():
    assert pm4.nop(1) == [pm4.NOP_PAD]
    for n in (2, 3, 17):
        p = one(pm4.nop(n))
        assert p.name == "NOP" and p.size == n
    assert one(pm4.nop_pad()).size == 1 and one(pm4.type2_nop()).name == "TYPE2_NOP"
    with pytest.raises(ValueError):
        pm4.nop(0x4001)


def test_write_copy_dma_round_trip():
    f = one(pm4.write_data(HI, 1, 2, 3)).fields()
    assert (f["address"], f["values"], f["dst_sel"], f["wr_confirm"]) == (HI, (1, 2, 3), 5, True)
    f = one(pm4.copy_data(pm4.COPY_SRC_MEM, HI, pm4.COPY_DST_MEM, HI + 64, count64=True)).fields()
    assert (f["src_sel"], f["src"], f["dst_sel"], f["dst"], f["count64"]) == (1, HI, 5, HI + 64, True)
    f = one(
        pm4.dma_data(HI, HI + 256, 0xAE0, src_sel=3, dst_sel=2, cp_sync=False, disable_wr_confirm=True)
    ).fields()
    assert (
        f["src"],
        f["dst"],
        f["byte_count"],
        f["src_sel"],
        f["dst_sel"],
        f["cp_sync"],
        f["disable_wr_confirm"],
    ) == (HI, HI + 256, 0xAE0, 3, 2, False, True)
    # the DMA_DATA word RADV emits for its shader prefetch (fixtures/radv pm4_listing)
    assert (
        pm4.dma_data(0, 0, 0xAE0, src_sel=3, dst_sel=2, cp_sync=False, disable_wr_confirm=True)[1]
        == 0x60200000
    )


def test_release_acquire_event_wait_round_trip():
    f = one(pm4.release_mem(HI, 0x1_0000_0002, data_sel=pm4.DATA_SEL_64)).fields()
    assert (f["address"], f["data"], f["data_sel"], f["event_type"], f["event_index"]) == (
        HI,
        0x1_0000_0002,
        2,
        pm4.BOTTOM_OF_PIPE_TS,
        5,
    )
    p = one(pm4.acquire_mem(gcr_cntl=0xC3B1))
    assert len(p.body) == 7 and p.body[-1] == 0xC3B1
    f = one(pm4.event_write(pm4.CS_PARTIAL_FLUSH)).fields()
    assert (f["event_type"], f["event_index"], f["address"]) == (7, 4, None)
    assert one(pm4.event_write(0x19)).body == (0x19,)  # as RADV's preamble
    f = one(pm4.event_write(1, 1, address=HI)).fields()
    assert f["address"] == HI
    f = one(pm4.wait_reg_mem(HI, 5, 0xFF, pm4.WAIT_GE)).fields()
    assert (f["address"], f["reference"], f["mask"], f["function"], f["mem_space"]) == (HI, 5, 0xFF, 5, 1)


def test_graphics_state_packets_round_trip():
    assert one(pm4.context_control()).fields() == dict(load=0x80000000, shadow=0x80000000)
    assert one(pm4.clear_state()).name == "CLEAR_STATE"
    assert one(pm4.pfp_sync_me()).name == "PFP_SYNC_ME"
    f = one(pm4.set_predication(3, HI)).fields()
    assert (f["op"], f["address"]) == (3, HI)


def test_decoder_refusals():
    with pytest.raises(Refused) as e:
        pm4.decode(pm4.set_sh_reg("COMPUTE_PGM_LO", 1)[:2])
    assert e.value.refusal.code == "stream.truncated" and "dword 0" in str(e.value)
    with pytest.raises(Refused) as e:
        pm4.decode([0x40000000])
    assert e.value.refusal.code == "stream.bad_packet_type"
    with pytest.raises(Refused) as e:
        pm4.decode_body(pm4.DISPATCH_DIRECT, [1, 2, 3])
    assert e.value.refusal.code == "stream.malformed"


def test_register_fields_per_level():
    tm = R.BY_NAME["COMPUTE_TMPRING_SIZE"]
    v = 0x7FFF << 12
    assert tm.get(v, "WAVESIZE", 103) == 0x1FFF and tm.get(v, "WAVESIZE", 11) == 0x7FFF
    r2 = R.BY_NAME["COMPUTE_PGM_RSRC2"]
    assert r2.decode(0x87) == dict(
        SCRATCH_EN=1,
        USER_SGPR=3,
        TRAP_PRESENT=0,
        TGID_X_EN=1,
        TGID_Y_EN=0,
        TGID_Z_EN=0,
        TG_SIZE_EN=0,
        TIDIG_COMP_CNT=0,
        EXCP_EN_MSB=0,
        LDS_SIZE=0,
        EXCP_EN=0,
    )
    assert r2.encode(USER_SGPR=3, SCRATCH_EN=1, TGID_X_EN=1) == 0x87
    assert R.BY_NAME["COMPUTE_USER_DATA_15"].address == 0xB93C
    assert R.BY_NAME["COMPUTE_PGM_RSRC3"].sh_offset == 0x228
    rf = R.RegisterFile("gfx1030")
    rf.write(0xB3FC, 5)  # not in the table: recorded, not refused
    assert rf.unknown == [0xB3FC] and rf.get(0xB3FC) == 5 and not rf.written("COMPUTE_PGM_LO")
