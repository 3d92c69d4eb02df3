"""DispatchConfig: everything a dispatch needs, taken from the registers the stream wrote.

This is the contract between dispatch setup (wavelift.dispatch.setup builds it from a register
file) and execution (wavelift.frontend / backends consume it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..isa.instruction import GFX11_RUN, GFX12_RUN

GFX_LEVELS = {"gfx1010": 10, "gfx1030": 103, "gfx1100": 11}
GFX_LEVELS.update({t: 11 for t in GFX11_RUN})  # every GFX11 target that runs: gfx1100's conventions
# GFX12: GFX11's dispatch registers; what differs (workgroup ids in TTMP registers, no DX10_CLAMP
# or IEEE_MODE in RSRC1) is read from the target name (decision 0027)
GFX_LEVELS.update({t: 11 for t in GFX12_RUN})


@dataclass(frozen=True)
class DispatchConfig:
    target: str  # "gfx1010" | "gfx1030" | "gfx1100"
    program_address: int  # canonical 48-bit guest address (sign-extended bit 47)
    wave_size: int  # 32 or 64 (DISPATCH_INITIATOR.CS_W32_EN)
    rsrc1: int
    rsrc2: int
    rsrc3: int
    user_sgprs: tuple[int, ...]  # values of s0..s(n-1) (COMPUTE_USER_DATA_*)
    tgid_enabled: tuple[bool, bool, bool]
    tidig_comp_cnt: int  # 0: v0=x; 1: +v1=y; 2: +v2=z (GFX10); packed v0 on GFX11
    lds_bytes: int  # RSRC2.LDS_SIZE * 512 (+ dynamic, if any)
    block: tuple[int, int, int]  # NUM_THREAD_FULL x/y/z: threads per full workgroup
    partial: tuple[int, int, int]  # threads of the LAST workgroup in x/y/z (used only if partial_tg;
    # 0 there = that dimension's last group is full)
    partial_tg: bool  # DISPATCH_INITIATOR.PARTIAL_TG_EN
    group_start: tuple[int, int, int]  # first workgroup id per dimension
    group_end: tuple[int, int, int]  # one past the last workgroup id per dimension
    scratch_enabled: bool = False
    scratch_wave_bytes: int = 0  # TMPRING_SIZE.WAVESIZE * unit (1024 on GFX10/10.3, 256 on GFX11)
    tmpring_waves: int = 0
    # SGPR index of each system value the hardware writes after the user SGPRs:
    # "workgroup_id_x/y/z", "scratch_wave_offset" (GFX10/10.3 with SCRATCH_EN).
    system_sgprs: dict[str, int] = field(default_factory=dict)
    initiator: int = 0
    tmpring_size: int = 0
    scratch_base: int = 0  # GFX11: COMPUTE_DISPATCH_SCRATCH_BASE_HI:LO << 8 (canonical)
    unwritten_user_sgprs: tuple[int, ...] = ()  # user SGPRs whose USER_DATA was never written (read 0)
    dims: tuple[int, int, int] = (0, 0, 0)  # DIM_X/Y/Z as the dispatch packet gave them
    # GB_ADDR_CONFIG of the GPU the stream was recorded for (pipes, pipe interleave, packers: what
    # the _X/_T image swizzle modes XOR depends on, memory/layout.py Chip), or None when the
    # capture does not say (those modes then refuse by name).  Not a register a stream writes:
    # the capture's metadata (docs/capture-format.md) or the Device's default gives it.
    gb_addr_config: int | None = None
    # the compute border-colour table's guest address (TA_CS_BC_BASE_ADDR/_HI, GFX10/10.3:
    # canonical), or None where the stream never wrote TA_CS_BC_BASE_ADDR (a REGISTER border
    # colour then refuses by name; decision 0043)
    border_color_base: int | None = None

    @property
    def gfx_level(self) -> int:
        return GFX_LEVELS[self.target]

    @property
    def packed_local_ids(self) -> bool:
        """GFX11 packs the local ids into v0 (x [9:0], y [19:10], z [29:20]); GFX10/10.3 use v0..v2.
        (gfx_level numbers 10, 103, 11 are names, not an order: never compare them with < or >.)"""
        return self.gfx_level == 11

    @property
    def float_mode(self) -> int:  # RSRC1.FLOAT_MODE [19:12]: initial MODE round/denorm bits
        return (self.rsrc1 >> 12) & 0xFF

    @property
    def gfx12(self) -> bool:
        return self.target.startswith("gfx12")

    @property
    def dx10_clamp(self) -> bool:  # GFX12: bit 21 is WG_RR_EN; there is no DX10_CLAMP mode
        return bool((self.rsrc1 >> 21) & 1) and not self.gfx12

    @property
    def ieee_mode(self) -> bool:
        # GFX12: bit 23 is DISABLE_PERF; there is no IEEE mode bit, and float arithmetic quiets a
        # signaling NaN as GFX11's IEEE mode does (decision 0027: the clang-19 fixtures vs PoCL)
        return bool((self.rsrc1 >> 23) & 1) or self.gfx12

    @property
    def num_groups(self) -> tuple[int, int, int]:
        (sx, sy, sz), (ex, ey, ez) = self.group_start, self.group_end
        return max(0, ex - sx), max(0, ey - sy), max(0, ez - sz)

    @property
    def waves(self) -> int:
        return grid_waves(self.num_groups, self.block, self.wave_size)


def shape_fields(config) -> tuple:
    """Every field of ``config`` as a hashable tuple (the system SGPR dict as its items) but the
    user SGPRs' values, which stand as their count: equal for two dispatches of one kernel over
    other buffers (new kernarg and scratch addresses in the user SGPRs).  A step that reads a
    user SGPR's value besides their count is keyed by that value beside this tuple (the scratch
    ABI reads user SGPR 1's swizzle bits: frontend/scratch.abi, in execute's translation
    inputs).  A field that is not hashable (a list where a tuple is declared) makes the tuple
    unhashable: the caller keeps nothing by it."""
    d = dict(vars(config))
    d["user_sgprs"] = len(d["user_sgprs"])
    d["system_sgprs"] = tuple(sorted(d["system_sgprs"].items()))
    return tuple(d.values())


def grid_waves(groups, block, wave_size: int) -> int:
    """Waves a grid runs (a partial workgroup's counted as a full one's: at most)."""
    return groups[0] * groups[1] * groups[2] * -(-(block[0] * block[1] * block[2]) // wave_size)
