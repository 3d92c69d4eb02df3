"""Register names, byte addresses and fields for gfx10 (gfx1010), gfx10.3 (gfx1030), gfx11 (gfx1100).

One table. Addresses are byte addresses as Mesa's `R_00Bxxx` names give them; SET_SH_REG offsets
are `(address - 0xB000) >> 2`. Sources: /work/shared/reference/amd-facts.md §1 (Mesa
`src/amd/registers/gfx10.json`, `gfx103.json`, `gfx11.json`). GFX10 and GFX10.3 are identical
for every register here; GFX11 differences are given as overrides.

Registers a stream writes that are not in this table are *recorded* by RegisterFile (by address),
never refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field  # `field` is this module's own (below)

from ..isa.instruction import GFX11_RUN, GFX12_RUN

# register spaces: (name, base byte address, size in bytes)
SH_BASE, CONTEXT_BASE, CONFIG_BASE, UCONFIG_BASE = 0xB000, 0x28000, 0x8000, 0x30000
SPACES = {
    "SH": (SH_BASE, 0x1000),
    "CONTEXT": (CONTEXT_BASE, 0x1000),
    "CONFIG": (CONFIG_BASE, 0x3000),
    "UCONFIG": (UCONFIG_BASE, 0x40000),  # SET_UCONFIG_REG offsets are 16 bits of dwords
}

# levels as DispatchConfig numbers them: 10, 103 (GFX10.3), 11 -- not ordered; test "== 11"
LEVELS = {"gfx1010": 10, "gfx1030": 103, "gfx1100": 11, 10: 10, 103: 103, 11: 11}
# every GFX11 target that runs: gfx1100's registers; GFX12 too (decision 0027: the compute
# registers and fields a dispatch reads are GFX11's)
LEVELS.update({t: 11 for t in GFX11_RUN + GFX12_RUN})


def gfx_level(target) -> int:
    try:
        return LEVELS[target]
    except KeyError:
        raise ValueError(f"unknown target {target!r} (known: gfx1010, gfx1030, gfx1100)") from None


@dataclass(frozen=True)
class Register:
    name: str
    address: int  # byte address
    fields: dict = dataclass_field(default_factory=dict)  # name -> (lo, hi) inclusive bits
    gfx11_fields: dict | None = None  # GFX11 field table, if different
    levels: tuple = (10, 103, 11)  # levels where it exists
    space: str = "SH"

    def fields_for(self, level: int) -> dict:
        if level == 11 and self.gfx11_fields is not None:
            return self.gfx11_fields
        return self.fields

    def get(self, value: int, fname: str, level: int = 103) -> int:
        lo, hi = self.fields_for(level)[fname]
        return (int(value) >> lo) & ((1 << (hi - lo + 1)) - 1)

    def set(self, value: int, fname: str, fvalue: int, level: int = 103) -> int:
        lo, hi = self.fields_for(level)[fname]
        mask = (1 << (hi - lo + 1)) - 1
        if not 0 <= int(fvalue) <= mask:
            raise ValueError(f"{self.name}.{fname} = {fvalue} does not fit in bits [{hi}:{lo}]")
        return (int(value) & ~(mask << lo) & 0xFFFFFFFF) | (int(fvalue) << lo)

    def encode(self, level: int = 103, **fields) -> int:
        v = 0
        for k, x in fields.items():
            v = self.set(v, k, x, level)
        return v

    def decode(self, value: int, level: int = 103) -> dict:
        return {k: self.get(value, k, level) for k in self.fields_for(level)}

    @property
    def sh_offset(self) -> int:
        base, _ = SPACES[self.space]
        return (self.address - base) >> 2


def _b(bit):
    return (bit, bit)


_INITIATOR = dict(
    COMPUTE_SHADER_EN=_b(0),
    PARTIAL_TG_EN=_b(1),
    FORCE_START_AT_000=_b(2),
    ORDERED_APPEND_ENBL=_b(3),
    ORDERED_APPEND_MODE=_b(4),
    USE_THREAD_DIMENSIONS=_b(5),
    ORDER_MODE=_b(6),
    SCALAR_L1_INV_VOL=_b(10),
    VECTOR_L1_INV_VOL=_b(11),
    RESERVED=_b(12),
    TUNNEL_ENABLE=_b(13),
    RESTORE=_b(14),
    CS_W32_EN=_b(15),
)
_RSRC1 = dict(
    VGPRS=(0, 5),
    SGPRS=(6, 9),
    PRIORITY=(10, 11),
    FLOAT_MODE=(12, 19),
    PRIV=_b(20),
    DX10_CLAMP=_b(21),
    DEBUG_MODE=_b(22),
    IEEE_MODE=_b(23),
    BULKY=_b(24),
    CDBG_USER=_b(25),
    FP16_OVFL=_b(26),
    WGP_MODE=_b(29),
    MEM_ORDERED=_b(30),
    FWD_PROGRESS=_b(31),
)
_RSRC2 = dict(
    SCRATCH_EN=_b(0),
    USER_SGPR=(1, 5),
    TRAP_PRESENT=_b(6),
    TGID_X_EN=_b(7),
    TGID_Y_EN=_b(8),
    TGID_Z_EN=_b(9),
    TG_SIZE_EN=_b(10),
    TIDIG_COMP_CNT=(11, 12),
    EXCP_EN_MSB=(13, 14),
    LDS_SIZE=(15, 23),
    EXCP_EN=(24, 30),
)
_NUM_THREAD = dict(NUM_THREAD_FULL=(0, 15), NUM_THREAD_PARTIAL=(16, 31))
_VALUE = dict(DATA=(0, 31))

_TABLE = [
    Register(
        "COMPUTE_DISPATCH_INITIATOR",
        0xB800,
        _INITIATOR,
        {**_INITIATOR, "AMP_SHADER_EN": _b(16), "DISABLE_DISP_PREMPT_EN": _b(17)},
    ),
    Register("COMPUTE_DIM_X", 0xB804, _VALUE),
    Register("COMPUTE_DIM_Y", 0xB808, _VALUE),
    Register("COMPUTE_DIM_Z", 0xB80C, _VALUE),
    Register("COMPUTE_START_X", 0xB810, _VALUE),
    Register("COMPUTE_START_Y", 0xB814, _VALUE),
    Register("COMPUTE_START_Z", 0xB818, _VALUE),
    Register("COMPUTE_NUM_THREAD_X", 0xB81C, _NUM_THREAD),
    Register("COMPUTE_NUM_THREAD_Y", 0xB820, _NUM_THREAD),
    Register("COMPUTE_NUM_THREAD_Z", 0xB824, _NUM_THREAD),
    Register("COMPUTE_PIPELINESTAT_ENABLE", 0xB828, dict(PIPELINESTAT_ENABLE=_b(0))),
    Register("COMPUTE_PERFCOUNT_ENABLE", 0xB82C, dict(PERFCOUNT_ENABLE=_b(0))),
    Register("COMPUTE_PGM_LO", 0xB830, _VALUE),
    Register("COMPUTE_PGM_HI", 0xB834, dict(DATA=(0, 7))),
    Register("COMPUTE_DISPATCH_PKT_ADDR_LO", 0xB838, _VALUE),
    Register("COMPUTE_DISPATCH_PKT_ADDR_HI", 0xB83C, dict(DATA=(0, 7))),
    Register("COMPUTE_DISPATCH_SCRATCH_BASE_LO", 0xB840, _VALUE),
    Register("COMPUTE_DISPATCH_SCRATCH_BASE_HI", 0xB844, dict(DATA=(0, 7))),
    Register("COMPUTE_PGM_RSRC1", 0xB848, _RSRC1),
    Register("COMPUTE_PGM_RSRC2", 0xB84C, _RSRC2),
    Register("COMPUTE_VMID", 0xB850, dict(DATA=(0, 3))),
    Register(
        "COMPUTE_RESOURCE_LIMITS",
        0xB854,
        dict(
            WAVES_PER_SH=(0, 9),
            TG_PER_CU=(12, 15),
            LOCK_THRESHOLD=(16, 21),
            SIMD_DEST_CNTL=_b(22),
            FORCE_SIMD_DIST=_b(23),
            CU_GROUP_COUNT=(24, 26),
        ),
    ),
    Register("COMPUTE_STATIC_THREAD_MGMT_SE0", 0xB858, _VALUE),
    Register("COMPUTE_STATIC_THREAD_MGMT_SE1", 0xB85C, _VALUE),
    Register(
        "COMPUTE_TMPRING_SIZE",
        0xB860,
        dict(WAVES=(0, 11), WAVESIZE=(12, 24)),
        dict(WAVES=(0, 11), WAVESIZE=(12, 26)),
    ),
    Register("COMPUTE_STATIC_THREAD_MGMT_SE2", 0xB864, _VALUE),
    Register("COMPUTE_STATIC_THREAD_MGMT_SE3", 0xB868, _VALUE),
    Register("COMPUTE_DISPATCH_ID", 0xB880, _VALUE),
    Register("COMPUTE_USER_ACCUM_0", 0xB890, _VALUE),
    Register("COMPUTE_USER_ACCUM_1", 0xB894, _VALUE),
    Register("COMPUTE_USER_ACCUM_2", 0xB898, _VALUE),
    Register("COMPUTE_USER_ACCUM_3", 0xB89C, _VALUE),
    Register(
        "COMPUTE_PGM_RSRC3",
        0xB8A0,
        dict(SHARED_VGPR_CNT=(0, 3)),
        dict(
            SHARED_VGPR_CNT=(0, 3),
            INST_PREF_SIZE=(4, 9),
            TRAP_ON_START=_b(10),
            TRAP_ON_END=_b(11),
            IMAGE_OP=_b(31),
        ),
    ),
    Register("COMPUTE_DISPATCH_INTERLEAVE", 0xB8BC, dict(INTERLEAVE=(0, 9)), levels=(11,)),
    *[Register(f"COMPUTE_USER_DATA_{i}", 0xB900 + 4 * i, _VALUE) for i in range(16)],
    Register("COMPUTE_DISPATCH_TUNNEL", 0xB9F4, dict(OFF_DELAY=(0, 9), IMMEDIATE=_b(10))),
    # Non-compute registers that RADV streams write (graphics state; recorded, never used).
    Register(
        "SPI_TMPRING_SIZE",
        0x286E8,
        dict(WAVES=(0, 11), WAVESIZE=(12, 24)),
        dict(WAVES=(0, 11), WAVESIZE=(12, 26)),
        space="CONTEXT",
    ),
    # the compute border-colour table's base (bits 39:8, and 47:40 in _HI): RADV writes it in
    # its compute preamble when custom border colours are enabled (si_emit_compute,
    # SET_UCONFIG_REG; decision 0043); the sampler reads REGISTER border colours there
    Register("TA_CS_BC_BASE_ADDR", 0x30E00, dict(ADDRESS=(0, 31)), levels=(10, 103), space="UCONFIG"),
    Register("TA_CS_BC_BASE_ADDR_HI", 0x30E04, dict(ADDRESS=(0, 7)), levels=(10, 103), space="UCONFIG"),
    Register(
        "GRBM_GFX_INDEX",
        0x30800,
        dict(
            INSTANCE_INDEX=(0, 7),
            SA_INDEX=(8, 15),
            SE_INDEX=(16, 23),
            SA_BROADCAST_WRITES=_b(29),
            INSTANCE_BROADCAST_WRITES=_b(30),
            SE_BROADCAST_WRITES=_b(31),
        ),
        space="UCONFIG",
    ),
]

BY_NAME: dict[str, Register] = {r.name: r for r in _TABLE}
BY_ADDRESS: dict[int, Register] = {r.address: r for r in _TABLE}


def lookup(name_or_address) -> Register | None:
    if isinstance(name_or_address, str):
        return BY_NAME.get(name_or_address)
    return BY_ADDRESS.get(int(name_or_address))


def address_of(reg, space: str = "SH") -> int:
    """Byte address of a register given by name, byte address, or dword offset in `space`."""
    base, size = SPACES[space]
    if isinstance(reg, str):
        r = BY_NAME.get(reg)
        if r is None:
            raise KeyError(f"unknown register name {reg!r}")
        if r.space != space:
            raise ValueError(f"{reg} is a {r.space} register, not {space}")
        return r.address
    reg = int(reg)
    if 0 <= reg < size // 4:
        return base + 4 * reg
    if base <= reg < base + size and reg % 4 == 0:
        return reg
    raise ValueError(f"0x{reg:x} is neither a {space} register offset nor a {space} byte address")


def name_of(address: int) -> str:
    r = BY_ADDRESS.get(int(address))
    return r.name if r else f"0x{int(address):05X}"


def field(name: str, value: int, fname: str, level: int = 103) -> int:
    return BY_NAME[name].get(value, fname, level)


class RegisterFile:
    """Register values by byte address, remembering which were written (and in what order)."""

    def __init__(self, target="gfx1030"):
        self.level = gfx_level(target)
        self._values: dict[int, int] = {}
        self.writes = 0

    def write(self, address: int, value: int) -> None:
        self._values[int(address)] = int(value) & 0xFFFFFFFF
        self.writes += 1

    def _addr(self, reg) -> int:
        if isinstance(reg, str):
            r = BY_NAME.get(reg)
            if r is None:
                raise KeyError(f"unknown register name {reg!r}")
            return r.address
        return int(reg)

    def __setitem__(self, reg, value) -> None:
        self.write(self._addr(reg), value)

    def __getitem__(self, reg) -> int:
        a = self._addr(reg)
        if a not in self._values:
            raise KeyError(f"{name_of(a)} was never written")
        return self._values[a]

    def get(self, reg, default=None):
        return self._values.get(self._addr(reg), default)

    def written(self, reg) -> bool:
        return self._addr(reg) in self._values

    def __contains__(self, reg) -> bool:
        return self.written(reg)

    def field(self, reg, fname: str, default: int = 0) -> int:
        a = self._addr(reg)
        if a not in self._values:
            return default
        return BY_ADDRESS[a].get(self._values[a], fname, self.level)

    def items(self):
        return sorted(self._values.items())

    @property
    def unknown(self) -> list[int]:
        """Addresses written that are not in the register table."""
        return sorted(a for a in self._values if a not in BY_ADDRESS)

    def values(self) -> dict[int, int]:
        """A copy of every written register's value, by byte address (in first-write order)."""
        return dict(self._values)

    def replay_writes(self, writes: dict[int, int], count: int, after: dict[int, int]) -> bool:
        """Apply `writes` (byte address -> value, in first-write order; `count` writes in all,
        some possibly to the same register) only if the file then holds exactly `after`: the
        state a stream that makes those writes was seen to leave (Device's repeated-launch path,
        issue 24).  Returns whether it applied them; if not, nothing changed."""
        vals = self._values
        if vals == after and writes.items() <= after.items():
            # (the file holds what the stream leaves and its writes agree: they change nothing)
            self.writes += count
            return True
        if len(vals) > len(after):
            return False
        for a, v in after.items():
            if a not in writes and vals.get(a) != v:
                return False
        for a in vals:
            if a not in after:
                return False
        for a, v in writes.items():
            if after.get(a) != v:
                return False
        vals.update(writes)
        self.writes += count
        return True

    def copy(self) -> RegisterFile:
        r = RegisterFile.__new__(RegisterFile)
        r.level, r._values, r.writes = self.level, dict(self._values), self.writes
        return r

    def snapshot(self) -> dict[str, int]:
        return {name_of(a): v for a, v in sorted(self._values.items())}

    def __repr__(self) -> str:
        return f"RegisterFile(gfx{self.level}, {len(self._values)} written)"
