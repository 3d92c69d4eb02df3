"""Dispatch setup: the register file at a DISPATCH packet -> DispatchConfig, or Refused.

Facts: /work/shared/reference/amd-facts.md §1 (registers), §4.2 and §5.2 (system SGPR order),
§6 (initial VGPRs), §0 (TMPRING units). Registers never written read as 0 (their reset value),
except COMPUTE_PGM_LO (refused: dispatch.no_program) and, with SCRATCH_EN,
COMPUTE_TMPRING_SIZE (scratch.no_tmpring) and on GFX11 COMPUTE_DISPATCH_SCRATCH_BASE_LO
(scratch.no_base).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..errors import Refused
from ..memory.guest import canonical
from ..stream.registers import BY_NAME, RegisterFile
from .config import GFX_LEVELS, DispatchConfig, grid_waves

# dispatch.grid_too_large above this many waves (a wave is the unit of work: one of a single
# thread costs what a full one does; with the instruction budget this bounds a dispatch's work,
# docs/decisions/0015-bounded-work.md).  4 Mi waves = 128 Mi threads in wave32, 256 Mi in wave64.
MAX_GRID_WAVES = 1 << 22
MAX_BLOCK_THREADS = 1024  # threads per workgroup (hardware limit)
MAX_LDS_BYTES = 64 * 1024  # LDS per workgroup on GFX10/10.3/11
MAX_SCRATCH_WAVE_BYTES = 256 * 1024  # scratch.too_large above this per wave
MAX_USER_SGPRS = 16

_R = {n: r for n, r in BY_NAME.items()}


def _xyz(values: Iterable[int]) -> tuple[int, int, int]:
    x, y, z = values  # one value per dimension
    return x, y, z


def scratch_unit(level: int) -> int:
    """Bytes per TMPRING_SIZE.WAVESIZE unit: 1024 on GFX10/10.3, 256 on GFX11."""
    return 256 if level == 11 else 1024


def _f(regs: RegisterFile, name: str, fname: str, value: int | None = None) -> int:
    v = regs.get(name, 0) if value is None else value
    return _R[name].get(v, fname, regs.level)


def build_config(regs: RegisterFile, target: str, dims=None, initiator: int | None = None) -> DispatchConfig:
    """DispatchConfig for a dispatch of `dims` (DIM_X/Y/Z) with `initiator`; both default to
    the register file's COMPUTE_DIM_* / COMPUTE_DISPATCH_INITIATOR."""
    if target not in GFX_LEVELS:
        raise Refused("dispatch.bad_target", f"target {target!r} (known: {', '.join(GFX_LEVELS)})")
    level = GFX_LEVELS[target]
    if dims is None:
        dims = tuple(regs.get(f"COMPUTE_DIM_{d}", 0) for d in "XYZ")
    dims = tuple(int(x) & 0xFFFFFFFF for x in dims)
    if initiator is None:
        initiator = regs.get("COMPUTE_DISPATCH_INITIATOR", 0)
    initiator = int(initiator) & 0xFFFFFFFF
    ini = _R["COMPUTE_DISPATCH_INITIATOR"].decode(initiator, level)

    if not ini["COMPUTE_SHADER_EN"]:
        raise Refused(
            "dispatch.unsupported_mode", f"DISPATCH_INITIATOR 0x{initiator:08x} has COMPUTE_SHADER_EN clear"
        )
    if ini["ORDERED_APPEND_ENBL"]:
        raise Refused(
            "dispatch.unsupported_mode", f"DISPATCH_INITIATOR 0x{initiator:08x} enables ORDERED_APPEND"
        )

    # program
    if not regs.written("COMPUTE_PGM_LO"):
        raise Refused("dispatch.no_program", "COMPUTE_PGM_LO was never written")
    lo = regs["COMPUTE_PGM_LO"]
    hi = _f(regs, "COMPUTE_PGM_HI", "DATA")
    program = canonical((hi << 40) | (lo << 8))

    rsrc1 = regs.get("COMPUTE_PGM_RSRC1", 0)
    rsrc2 = regs.get("COMPUTE_PGM_RSRC2", 0)
    rsrc3 = regs.get("COMPUTE_PGM_RSRC3", 0)
    r2 = _R["COMPUTE_PGM_RSRC2"].decode(rsrc2, level)

    n_user = r2["USER_SGPR"]
    if n_user > MAX_USER_SGPRS:
        raise Refused("dispatch.user_sgpr", f"RSRC2.USER_SGPR = {n_user} (at most {MAX_USER_SGPRS})")
    user = tuple(regs.get(f"COMPUTE_USER_DATA_{i}", 0) for i in range(n_user))
    unwritten = tuple(i for i in range(n_user) if not regs.written(f"COMPUTE_USER_DATA_{i}"))

    tidig = r2["TIDIG_COMP_CNT"]
    if tidig == 3:
        raise Refused("dispatch.bad_register", "RSRC2.TIDIG_COMP_CNT = 3 is not defined")
    tgid = (bool(r2["TGID_X_EN"]), bool(r2["TGID_Y_EN"]), bool(r2["TGID_Z_EN"]))
    lds = r2["LDS_SIZE"] * 512
    if lds > MAX_LDS_BYTES:
        raise Refused(
            "dispatch.bad_register", f"RSRC2.LDS_SIZE asks for {lds} bytes of LDS (at most {MAX_LDS_BYTES})"
        )

    # scratch
    scratch_en = bool(r2["SCRATCH_EN"])
    tmpring = regs.get("COMPUTE_TMPRING_SIZE", 0)
    wave_bytes = waves = 0
    scratch_base = 0
    if scratch_en:
        if not regs.written("COMPUTE_TMPRING_SIZE"):
            raise Refused(
                "scratch.no_tmpring", "SCRATCH_EN is set but COMPUTE_TMPRING_SIZE was never written"
            )
        wavesize = _f(regs, "COMPUTE_TMPRING_SIZE", "WAVESIZE")
        waves = _f(regs, "COMPUTE_TMPRING_SIZE", "WAVES")
        wave_bytes = wavesize * scratch_unit(level)
        if wavesize == 0 or waves == 0:
            raise Refused(
                "scratch.size_zero",
                f"SCRATCH_EN is set but COMPUTE_TMPRING_SIZE 0x{tmpring:08x} has "
                f"WAVESIZE={wavesize}, WAVES={waves}",
            )
        if wave_bytes > MAX_SCRATCH_WAVE_BYTES:
            raise Refused(
                "scratch.too_large",
                f"TMPRING_SIZE.WAVESIZE={wavesize} gives {wave_bytes} bytes of scratch per "
                f"wave (at most {MAX_SCRATCH_WAVE_BYTES})",
            )
        if level == 11:
            if not regs.written("COMPUTE_DISPATCH_SCRATCH_BASE_LO"):
                raise Refused(
                    "scratch.no_base",
                    "SCRATCH_EN is set but COMPUTE_DISPATCH_SCRATCH_BASE_LO was never written",
                )
            scratch_base = canonical(
                (_f(regs, "COMPUTE_DISPATCH_SCRATCH_BASE_HI", "DATA") << 40)
                | (regs["COMPUTE_DISPATCH_SCRATCH_BASE_LO"] << 8)
            )

    # grid
    full = _xyz(_f(regs, f"COMPUTE_NUM_THREAD_{d}", "NUM_THREAD_FULL") for d in "XYZ")
    part = tuple(_f(regs, f"COMPUTE_NUM_THREAD_{d}", "NUM_THREAD_PARTIAL") for d in "XYZ")
    if 0 in full:
        raise Refused(
            "dispatch.empty_block",
            f"COMPUTE_NUM_THREAD_X/Y/Z give a workgroup of {full[0]}x{full[1]}x{full[2]} threads",
        )
    if full[0] * full[1] * full[2] > MAX_BLOCK_THREADS:
        raise Refused(
            "dispatch.bad_register",
            f"workgroup of {full[0]}x{full[1]}x{full[2]} threads (at most {MAX_BLOCK_THREADS})",
        )
    thread_dims = bool(ini["USE_THREAD_DIMENSIONS"])
    force0 = bool(ini["FORCE_START_AT_000"])
    if force0:
        start = (0, 0, 0)
    else:
        if thread_dims:
            raise Refused(
                "dispatch.unsupported_mode",
                "USE_THREAD_DIMENSIONS with start values (FORCE_START_AT_000 clear)",
            )
        start = tuple(regs.get(f"COMPUTE_START_{d}", 0) for d in "XYZ")
    if thread_dims:
        end = tuple(-(-t // b) for t, b in zip(dims, full))
        partial = tuple(t % b for t, b in zip(dims, full))
        partial_tg = any(partial)
    else:
        end = dims  # end values (== counts when starting at 0)
        partial_tg = bool(ini["PARTIAL_TG_EN"])
        partial = part if partial_tg else (0, 0, 0)
        if partial_tg:
            # the last group's threads, 1..full: RADV writes full (not 0) for a dimension whose
            # size is a multiple of the block (radv_cmd_buffer.c, "If aligned, these should be an
            # entire block size, not 0"), e.g. for its meta copies of a 16x16 image
            for d, (p, b) in enumerate(zip(part, full)):
                if p > b:
                    raise Refused(
                        "dispatch.bad_register",
                        f"COMPUTE_NUM_THREAD_{'XYZ'[d]}: partial {p} is larger than full {b}",
                    )
    groups = [max(0, e - s) for s, e in zip(start, end)]
    wave_size = 32 if ini["CS_W32_EN"] else 64
    check_grid(groups, full, wave_size)

    # system SGPRs, in hardware order after the user SGPRs
    sys_sgprs: dict[str, int] = {}
    pos = n_user
    if target.startswith("gfx12"):
        sys_sgprs.update(_gfx12_workgroup_ids(end, tgid[2]))
    else:
        for axis, en in zip("xyz", tgid):
            if en:
                sys_sgprs[f"workgroup_id_{axis}"] = pos
                pos += 1
    if r2["TG_SIZE_EN"]:  # [5:0] waves in the workgroup, [11:6] this wave's index
        sys_sgprs["tg_size"] = pos
        pos += 1
    if scratch_en and level != 11:
        sys_sgprs["scratch_wave_offset"] = pos
        pos += 1

    # the compute border-colour table (decision 0043): GFX10/10.3 only (GFX11's S# and table
    # are not carried out); None when TA_CS_BC_BASE_ADDR was never written
    bc_base = None
    if level in (10, 103) and regs.written("TA_CS_BC_BASE_ADDR"):
        bc_base = canonical(
            (_f(regs, "TA_CS_BC_BASE_ADDR_HI", "ADDRESS") << 40) | (regs["TA_CS_BC_BASE_ADDR"] << 8)
        )

    return DispatchConfig(
        target=target,
        program_address=program,
        wave_size=wave_size,
        rsrc1=rsrc1,
        rsrc2=rsrc2,
        rsrc3=rsrc3,
        user_sgprs=user,
        tgid_enabled=tgid,
        tidig_comp_cnt=tidig,
        lds_bytes=lds,
        block=full,
        partial=partial,
        partial_tg=partial_tg,
        group_start=_xyz(start),
        group_end=tuple(end),
        scratch_enabled=scratch_en,
        scratch_wave_bytes=wave_bytes,
        tmpring_waves=waves,
        system_sgprs=sys_sgprs,
        initiator=initiator,
        tmpring_size=tmpring,
        scratch_base=scratch_base,
        unwritten_user_sgprs=unwritten,
        dims=dims,
        border_color_base=bc_base,
    )


TTMP7, TTMP8, TTMP9 = 115, 116, 117  # scalar operand codes of TTMP7..TTMP9


def _gfx12_workgroup_ids(end, z_enabled: bool) -> dict[str, int]:
    """GFX12's architected SGPRs (AMDGPUUsage; LLVM 19 reads x from TTMP9, y from TTMP7[15:0] and z
    from TTMP7[31:16], and y from the whole of TTMP7 when the kernel does not enable z: so z is
    there only with RSRC2.TGID_Z_EN).  The runtimes write one id per register: y goes to TTMP7,
    z (TGID_Z_EN) to TTMP8, from where the program's prologue (frontend/gfx12.py) moves it into
    TTMP7[31:16].  An id y or z that does not fit 16 bits is refused by name (decision 0027)."""
    if end[1] > 0x10000 or (z_enabled and end[2] > 0x10000):
        raise Refused(
            "dispatch.bad_register",
            f"GFX12 workgroup ids y up to {end[1] - 1}, z up to {end[2] - 1}: TTMP7 holds 16 bits of each",
        )
    ids = {"workgroup_id_x": TTMP9, "workgroup_id_y": TTMP7}
    if z_enabled:
        ids["workgroup_id_z"] = TTMP8
    return ids


def check_grid(groups, block, wave_size: int) -> None:
    """Refuse a grid of more than MAX_GRID_WAVES waves (build_config, and execute_dispatch for
    configs made by hand)."""
    waves = grid_waves(groups, block, wave_size)
    if waves > MAX_GRID_WAVES:
        raise Refused(
            "dispatch.grid_too_large",
            f"{groups[0]}x{groups[1]}x{groups[2]} workgroups of {block[0]}x{block[1]}x{block[2]} "
            f"threads is {waves} waves of {wave_size} (at most {MAX_GRID_WAVES})",
        )


def group_block(config: DispatchConfig, group: tuple[int, int, int]) -> tuple[int, int, int]:
    """Threads in x/y/z of workgroup `group` (the last group of a dimension may be partial)."""
    out = []
    for d in range(3):
        b = config.block[d]
        if config.partial_tg and config.partial[d] and group[d] == config.group_end[d] - 1:
            b = config.partial[d]
        out.append(b)
    return _xyz(out)


@dataclass(frozen=True)
class VgprInput:
    vgpr: int
    what: str  # "local_id_x" | "local_id_y" | "local_id_z"
    lo: int  # first bit within the VGPR
    width: int


def initial_vgpr_layout(config: DispatchConfig) -> list[VgprInput]:
    """Where the hardware puts the local invocation ids: v0 = x, v1 = y (TIDIG_COMP_CNT >= 1),
    v2 = z (= 2) on GFX10/10.3; packed v0 = x | y << 10 | z << 20 on GFX11 (y and z read 0 when
    TIDIG_COMP_CNT does not enable them)."""
    n = config.tidig_comp_cnt + 1
    if config.gfx_level == 11:
        return [VgprInput(0, f"local_id_{d}", 10 * i, 10) for i, d in enumerate("xyz"[:n])]
    return [VgprInput(i, f"local_id_{d}", 0, 32) for i, d in enumerate("xyz"[:n])]


def initial_vgprs(config: DispatchConfig, lx, ly, lz) -> dict[int, np.ndarray]:
    """Initial VGPR values (uint32 per lane) from per-lane local ids."""
    ids = {
        "local_id_x": np.asarray(lx, np.uint32),
        "local_id_y": np.asarray(ly, np.uint32),
        "local_id_z": np.asarray(lz, np.uint32),
    }
    out: dict[int, np.ndarray] = {}
    for v in initial_vgpr_layout(config):
        val = (
            (ids[v.what] & np.uint32((1 << v.width) - 1)) << np.uint32(v.lo)
            if v.width < 32
            else ids[v.what].copy()
        )
        out[v.vgpr] = out[v.vgpr] | val if v.vgpr in out else val.astype(np.uint32)
    return out
