"""DispatchConfig from registers, and every refusal dispatch setup raises."""

import numpy as np
import pytest

from wavelift.dispatch.setup import (
    MAX_GRID_WAVES,
    build_config,
    group_block,
    initial_vgpr_layout,
    initial_vgprs,
    scratch_unit,
)
from wavelift.errors import Refused
from wavelift.stream.registers import RegisterFile


def regs(target="gfx1030", **kw):
    r = RegisterFile(target)
    base = dict(
        COMPUTE_PGM_LO=0x1183,
        COMPUTE_PGM_HI=0x80,
        COMPUTE_PGM_RSRC1=0x602C0001,
        COMPUTE_PGM_RSRC2=0x87,
        COMPUTE_NUM_THREAD_X=64,
        COMPUTE_NUM_THREAD_Y=1,
        COMPUTE_NUM_THREAD_Z=1,
        COMPUTE_TMPRING_SIZE=0x10A00,
        COMPUTE_USER_DATA_0=0x16000,
        COMPUTE_USER_DATA_1=0x80008001,
        COMPUTE_USER_DATA_2=0x141000,
    )
    base.update(kw)
    for k, v in base.items():
        if v is not None:
            r[k] = v
    return r


def refused(code, r, target="gfx1030", dims=(4, 1, 1), initiator=0x8045):
    with pytest.raises(Refused) as e:
        build_config(r, target, dims, initiator)
    assert e.value.refusal.code == code, str(e.value)


def test_radv_scratch_array_wave32_config():
    c = build_config(regs(), "gfx1030", (4, 1, 1), 0x8045)
    assert c.program_address == 0xFFFF_8000_0011_8300
    assert c.wave_size == 32 and c.rsrc1 == 0x602C0001 and c.rsrc2 == 0x87
    assert c.user_sgprs == (0x16000, 0x80008001, 0x141000) and c.unwritten_user_sgprs == ()
    assert c.tgid_enabled == (True, False, False) and c.tidig_comp_cnt == 0
    assert c.system_sgprs == {"workgroup_id_x": 3, "scratch_wave_offset": 4}
    assert c.scratch_enabled and c.scratch_wave_bytes == 16 * 1024 and c.tmpring_waves == 2560
    assert c.block == (64, 1, 1) and c.group_start == (0, 0, 0) and c.group_end == (4, 1, 1)
    assert c.num_groups == (4, 1, 1) and not c.partial_tg and c.lds_bytes == 0
    assert build_config(regs(), "gfx1030", (4, 1, 1), 0x45).wave_size == 64


def test_gfx11_scratch_units_base_and_no_offset_sgpr():
    r = regs(
        "gfx1100",
        COMPUTE_TMPRING_SIZE=(40 << 12) | 10,
        COMPUTE_DISPATCH_SCRATCH_BASE_LO=(0x8001_0001_6000 >> 8) & 0xFFFFFFFF,
        COMPUTE_DISPATCH_SCRATCH_BASE_HI=0x80,
    )
    c = build_config(r, "gfx1100", (1, 1, 1), 0x8045)
    assert c.scratch_wave_bytes == 40 * 256 and scratch_unit(11) == 256 and scratch_unit(103) == 1024
    assert "scratch_wave_offset" not in c.system_sgprs
    assert c.scratch_base == 0xFFFF_8001_0001_6000
    refused("scratch.no_base", regs("gfx1100"), "gfx1100")


def test_tmpring_wavesize_field_width_per_level():
    big = (0x7FFF << 12) | 1  # only 13 bits of it are WAVESIZE on gfx10.3
    r = regs(COMPUTE_TMPRING_SIZE=big)
    refused("scratch.too_large", r)  # 0x1FFF KiB
    refused(
        "scratch.too_large",
        regs("gfx1100", COMPUTE_TMPRING_SIZE=(1025 << 12) | 1, COMPUTE_DISPATCH_SCRATCH_BASE_LO=1),
        "gfx1100",
    )
    c = build_config(
        regs("gfx1100", COMPUTE_TMPRING_SIZE=(1024 << 12) | 1, COMPUTE_DISPATCH_SCRATCH_BASE_LO=1),
        "gfx1100",
        (1, 1, 1),
        0x45,
    )
    assert c.scratch_wave_bytes == 256 * 1024


def test_scratch_refusals():
    refused("scratch.no_tmpring", regs(COMPUTE_TMPRING_SIZE=None))
    refused("scratch.size_zero", regs(COMPUTE_TMPRING_SIZE=0xA00))
    refused("scratch.size_zero", regs(COMPUTE_TMPRING_SIZE=0x10000))  # WAVES = 0
    refused("scratch.too_large", regs(COMPUTE_TMPRING_SIZE=(257 << 12) | 1))
    c = build_config(regs(COMPUTE_PGM_RSRC2=0x86, COMPUTE_TMPRING_SIZE=None), "gfx1030", (1, 1, 1), 0x45)
    assert not c.scratch_enabled and "scratch_wave_offset" not in c.system_sgprs


def test_system_sgprs_follow_user_sgprs_and_enabled_tgids():
    # USER_SGPR=2, TGID_Y_EN and TGID_Z_EN only, scratch on
    r = regs(COMPUTE_PGM_RSRC2=(2 << 1) | (1 << 8) | (1 << 9) | 1)
    c = build_config(r, "gfx1030", (1, 1, 1), 0x45)
    assert c.system_sgprs == {"workgroup_id_y": 2, "workgroup_id_z": 3, "scratch_wave_offset": 4}
    c = build_config(regs(COMPUTE_PGM_RSRC2=5 << 1), "gfx1010", (1, 1, 1), 0x45)
    assert c.system_sgprs == {} and c.unwritten_user_sgprs == (3, 4)


def test_program_address_and_no_program():
    c = build_config(regs(COMPUTE_PGM_HI=None, COMPUTE_PGM_LO=0x100), "gfx1030", (1, 1, 1), 0x45)
    assert c.program_address == 0x10000
    refused("dispatch.no_program", regs(COMPUTE_PGM_LO=None))


def test_grid_start_end_values_and_force_start():
    r = regs(COMPUTE_START_X=2, COMPUTE_START_Y=1, COMPUTE_START_Z=0)
    c = build_config(r, "gfx1030", (5, 3, 1), 0x8041)  # FORCE_START_AT_000 clear
    assert c.group_start == (2, 1, 0) and c.group_end == (5, 3, 1) and c.num_groups == (3, 2, 1)
    c = build_config(r, "gfx1030", (5, 3, 1), 0x8045)
    assert c.group_start == (0, 0, 0) and c.num_groups == (5, 3, 1)


def test_partial_workgroups():
    r = regs(COMPUTE_NUM_THREAD_X=64 | 36 << 16, COMPUTE_NUM_THREAD_Y=1, COMPUTE_NUM_THREAD_Z=1)
    c = build_config(r, "gfx1030", (3, 1, 1), 0x8045 | 2)  # PARTIAL_TG_EN
    assert c.partial_tg and c.partial == (36, 0, 0)
    assert group_block(c, (2, 0, 0)) == (36, 1, 1) and group_block(c, (1, 0, 0)) == (64, 1, 1)
    c = build_config(
        regs(COMPUTE_NUM_THREAD_X=8, COMPUTE_NUM_THREAD_Y=8), "gfx1030", (20, 16, 1), 0x8045 | 0x20
    )  # USE_THREAD_DIMENSIONS
    assert c.group_end == (3, 2, 1) and c.partial == (4, 0, 0) and c.partial_tg
    assert group_block(c, (2, 1, 0)) == (4, 8, 1)
    # partial == full: the last group is whole (RADV's unaligned dispatch of an aligned size)
    c = build_config(regs(COMPUTE_NUM_THREAD_X=64 | 64 << 16), "gfx1030", (3, 1, 1), 0x8047)
    assert c.partial == (64, 0, 0) and group_block(c, (2, 0, 0)) == (64, 1, 1)
    refused("dispatch.bad_register", regs(COMPUTE_NUM_THREAD_X=64 | 65 << 16), initiator=0x8047)
    refused("dispatch.unsupported_mode", regs(), initiator=0x8041 | 0x20)


def test_dispatch_refusals():
    # TG_SIZE_EN: the TG_SIZE system SGPR follows the workgroup ids, before the scratch offset
    c = build_config(regs(COMPUTE_PGM_RSRC2=0x87 | 1 << 10), "gfx1030", (4, 1, 1), 0x8045)
    assert c.system_sgprs == {"workgroup_id_x": 3, "tg_size": 4, "scratch_wave_offset": 5}
    refused("dispatch.empty_block", regs(COMPUTE_NUM_THREAD_Y=0))
    refused("dispatch.user_sgpr", regs(COMPUTE_PGM_RSRC2=17 << 1))
    refused("dispatch.bad_target", regs(), target="gfx900")
    refused("dispatch.bad_register", regs(COMPUTE_PGM_RSRC2=0x86 | 3 << 11))  # TIDIG 3
    refused("dispatch.bad_register", regs(COMPUTE_NUM_THREAD_X=1024, COMPUTE_NUM_THREAD_Y=2))
    refused("dispatch.bad_register", regs(COMPUTE_PGM_RSRC2=0x86 | 129 << 15))  # LDS > 64 KiB
    refused("dispatch.unsupported_mode", regs(), initiator=0x8044)  # SHADER_EN clear
    refused("dispatch.unsupported_mode", regs(), initiator=0x8045 | 8)  # ORDERED_APPEND
    refused("dispatch.grid_too_large", regs(), dims=(0xFFFFFFFF, 2, 1))
    # the grid limit is in waves (issue 19: 2^32 threads of s_endpgm ran ~46 minutes)
    refused("dispatch.grid_too_large", regs(), dims=((1 << 32) // 64, 1, 1), initiator=0x45)
    c = build_config(regs(), "gfx1030", (MAX_GRID_WAVES, 1, 1), 0x45)  # wave64, 64-thread groups
    assert c.num_groups[0] == MAX_GRID_WAVES and c.waves == MAX_GRID_WAVES
    refused("dispatch.grid_too_large", regs(), dims=(MAX_GRID_WAVES + 1, 1, 1), initiator=0x45)
    # wave32: a 64-thread group is two waves; a one-thread group is a wave
    c = build_config(regs(), "gfx1030", (MAX_GRID_WAVES // 2, 1, 1), 0x8045)
    assert c.waves == MAX_GRID_WAVES
    refused("dispatch.grid_too_large", regs(), dims=(MAX_GRID_WAVES // 2 + 1, 1, 1))
    c = build_config(regs(COMPUTE_NUM_THREAD_X=1), "gfx1030", (MAX_GRID_WAVES, 1, 1), 0x8045)
    refused("dispatch.grid_too_large", regs(COMPUTE_NUM_THREAD_X=1), dims=(MAX_GRID_WAVES, 2, 1))


def test_lds_bytes():
    c = build_config(regs(COMPUTE_PGM_RSRC2=0x86 | 128 << 15), "gfx1030", (1, 1, 1), 0x45)
    assert c.lds_bytes == 65536


def test_initial_vgpr_layout():
    c10 = build_config(regs(COMPUTE_PGM_RSRC2=0x86 | 2 << 11), "gfx1030", (1, 1, 1), 0x45)
    assert [(v.vgpr, v.what) for v in initial_vgpr_layout(c10)] == [
        (0, "local_id_x"),
        (1, "local_id_y"),
        (2, "local_id_z"),
    ]
    v = initial_vgprs(c10, [1, 2], [3, 4], [5, 6])
    assert v[0].tolist() == [1, 2] and v[2].tolist() == [5, 6]
    c11 = build_config(regs("gfx1100", COMPUTE_PGM_RSRC2=0x86 | 1 << 11), "gfx1100", (1, 1, 1), 0x45)
    assert [(v.vgpr, v.what, v.lo) for v in initial_vgpr_layout(c11)] == [
        (0, "local_id_x", 0),
        (0, "local_id_y", 10),
    ]
    v = initial_vgprs(c11, [1, 2], [3, 4], [5, 6])  # z not enabled: reads 0
    assert list(v) == [0] and v[0].tolist() == [1 | 3 << 10, 2 | 4 << 10]
    assert v[0].dtype == np.uint32
