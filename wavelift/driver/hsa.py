"""What ROCr/CLR build in memory for one HSA kernel dispatch: kernarg segment, AQL dispatch
packet, scratch buffer descriptor and user SGPR values.  Pure functions; `device.py` places the
results in guest memory.  Sources are cited in docs/decisions/0004-driver.md.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from ..errors import UserError
from .codeobject import KernelArg, KernelDescriptor, KernelInfo


# Per target: compute units (scratch WAVES cap = 32 * CUs, as ROCr's MaxSlotsScratchCU=32 and
# RADV's scratch_waves = 32 * num_cu give for these chips), shader engines, and the
# TMPRING_SIZE.WAVESIZE unit.
class TargetInfo(TypedDict):
    level: int
    gfx11: bool
    cus: int
    ses: int
    wavesize_unit: int


TARGETS: dict[str, TargetInfo] = {
    "gfx1010": TargetInfo(level=10, gfx11=False, cus=40, ses=2, wavesize_unit=1024),
    "gfx1030": TargetInfo(level=103, gfx11=False, cus=80, ses=4, wavesize_unit=1024),
    "gfx1100": TargetInfo(level=11, gfx11=True, cus=96, ses=6, wavesize_unit=256),
    # the other GFX11 chips (Navi32, Navi33, Phoenix, Strix Point, Strix Halo, Krackan Point): the
    # counts only size the scratch backing our driver allocates (WAVES = the slots it holds)
    "gfx1101": TargetInfo(level=11, gfx11=True, cus=60, ses=3, wavesize_unit=256),
    "gfx1102": TargetInfo(level=11, gfx11=True, cus=32, ses=2, wavesize_unit=256),
    "gfx1103": TargetInfo(level=11, gfx11=True, cus=12, ses=1, wavesize_unit=256),
    "gfx1150": TargetInfo(level=11, gfx11=True, cus=16, ses=1, wavesize_unit=256),
    "gfx1151": TargetInfo(level=11, gfx11=True, cus=40, ses=2, wavesize_unit=256),
    "gfx1152": TargetInfo(level=11, gfx11=True, cus=8, ses=1, wavesize_unit=256),
    # GFX12 (Navi44, Navi48): GFX11's architected flat scratch and TMPRING units (decision 0027)
    "gfx1200": TargetInfo(level=11, gfx11=True, cus=32, ses=2, wavesize_unit=256),
    "gfx1201": TargetInfo(level=11, gfx11=True, cus=64, ses=4, wavesize_unit=256),
}

# Apertures (high 32 bits of the 64-bit flat bases) for hidden_shared_base/private_base: the
# values the Linux amdkfd driver uses on GFX9+ (LDS aperture 0x1000000000000, scratch
# 0x2000000000000).
SHARED_APERTURE_HI = 0x10000
PRIVATE_APERTURE_HI = 0x20000

GFX10_BUF_FORMAT_32_UINT = 20
GFX11_BUF_FORMAT_32_UINT = 20


class LaunchError(UserError):
    """A launch the runtime cannot build (wrong arguments, impossible sizes)."""


@dataclass(frozen=True)
class Local:
    """A `__local` (dynamic_shared_pointer) kernel argument of `nbytes` bytes."""

    nbytes: int


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def align_up(a: int, b: int) -> int:
    return ceil_div(a, b) * b


# ---- scratch --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScratchPlan:
    per_lane: int  # bytes per work-item, as the dispatch packet carries it (dword multiple)
    wave_bytes: int  # bytes per wave slot (a WAVESIZE multiple)
    wavesize: int  # TMPRING_SIZE.WAVESIZE field
    waves: int  # TMPRING_SIZE.WAVES field
    slots: int  # wave slots the backing memory holds (waves, or waves * SEs on GFX11)
    total: int  # backing bytes = slots * wave_bytes

    def tmpring_size(self) -> int:
        if self.total == 0:
            return 0
        return (self.waves & 0xFFF) | (self.wavesize << 12)


def plan_scratch(
    target: str, per_lane_bytes: int, wave_size: int, total_waves: int, align: int = 16
) -> ScratchPlan:
    """Scratch sizing as ROCr's AqlQueue::FillComputeTmpRingSize does it: per-thread size rounded
    up to `align` (ROCr: 16), WAVESIZE = ceil(lanes * per_thread / unit), WAVES = slots the
    backing holds, capped at 32 * CUs.  We size the backing for min(waves in the dispatch, cap)
    slots (ROCr sizes it for the whole device)."""
    t = TARGETS[target]
    if per_lane_bytes <= 0:
        return ScratchPlan(0, 0, 0, 0, 0, 0)
    per_lane = align_up(per_lane_bytes, align)
    unit = t["wavesize_unit"]
    wavesize = ceil_div(per_lane * wave_size, unit)
    limit = (1 << 15) - 1 if t["gfx11"] else (1 << 13) - 1
    if wavesize > limit:
        raise LaunchError(
            f"{per_lane} bytes of private memory per work-item need "
            f"{wavesize * unit} bytes per wave, more than TMPRING_SIZE can say"
        )
    waves, slots = scratch_waves(target, total_waves)
    return ScratchPlan(per_lane, wavesize * unit, wavesize, waves, slots, slots * wavesize * unit)


def scratch_waves(target: str, total_waves: int) -> tuple[int, int]:
    """(TMPRING_SIZE.WAVES, wave slots the backing holds) for a dispatch of ``total_waves``
    waves: min(those waves, 32 * CUs) slots (at least one); on GFX11 WAVES counts per shader
    engine, so the slots are rounded up to a multiple of the SEs."""
    t = TARGETS[target]
    slots = max(1, min(total_waves, 32 * t["cus"]))
    if t["gfx11"]:
        waves = min(ceil_div(slots, t["ses"]), 0xFFF)
        return waves, waves * t["ses"]
    waves = min(slots, 0xFFF)
    return waves, waves


def scratch_buffer_descriptor(target: str, base: int, num_records: int, wave_size: int) -> list[int]:
    """The private segment buffer V# (s[0:3]) as ROCr fills amd_queue_t.scratch_resource_descriptor
    (AqlQueue::FillBufRsrcWord0..3_Gfx10/Gfx11) and CP completes it: BASE = scratch backing,
    STRIDE 0, SWIZZLE_ENABLE, NUM_RECORDS = backing size, DST_SEL XYZW, FORMAT 32_UINT,
    ADD_TID_ENABLE, RESOURCE_LEVEL 1 (GFX10 only), OOB_SELECT 2, INDEX_STRIDE filled in by CP from
    the wave size (3 = 64 for wave64, 2 = 32 for wave32)."""
    gfx11 = TARGETS[target]["gfx11"]
    w0 = base & 0xFFFFFFFF
    hi = (base >> 32) & 0xFFFF
    w1 = hi | ((1 << 30) if gfx11 else (1 << 31))  # SWIZZLE_ENABLE
    w2 = num_records & 0xFFFFFFFF
    index_stride = 3 if wave_size == 64 else 2
    dst_sel = 4 | (5 << 3) | (6 << 6) | (7 << 9)
    w3 = dst_sel | (GFX10_BUF_FORMAT_32_UINT << 12) | (index_stride << 21) | (1 << 23) | (2 << 28)
    if not gfx11:
        w3 |= 1 << 24  # RESOURCE_LEVEL
    return [w0, w1, w2, w3]


# ---- kernargs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grid:
    block: tuple[int, int, int]  # work-group size
    size: tuple[int, int, int]  # grid size in work-items
    offset: tuple[int, int, int] = (0, 0, 0)
    dims: int = 3

    @property
    def groups(self) -> tuple[int, int, int]:
        (sx, sy, sz), (bx, by, bz) = self.size, self.block
        return ceil_div(sx, bx), ceil_div(sy, by), ceil_div(sz, bz)

    @property
    def remainder(self) -> tuple[int, int, int]:
        (sx, sy, sz), (bx, by, bz) = self.size, self.block
        return sx % bx, sy % by, sz % bz

    def total_waves(self, wave_size: int) -> int:
        full = ceil_div(self.block[0] * self.block[1] * self.block[2], wave_size)
        gx, gy, gz = self.groups
        return full * gx * gy * gz


def make_grid(
    groups=None, block=(64, 1, 1), global_size=None, global_offset=(0, 0, 0), dims: int | None = None
) -> Grid:
    """The Grid of a launch (a pure function of its arguments: kept for hashable ones, the
    last few hundred, as a repeated launch gives the same again; errors are not kept)."""
    try:
        return _grid_kept(groups, block, global_size, global_offset, dims)
    except TypeError:  # (a list or an array: not hashable)
        return _make_grid(groups, block, global_size, global_offset, dims)


def _make_grid(groups, block, global_size, global_offset, dims) -> Grid:
    b = _triple(block, "block")
    if (groups is None) == (global_size is None):
        raise LaunchError("give exactly one of groups= and global_size=")
    if groups is not None:
        g = _triple(groups, "groups")
        size = (g[0] * b[0], g[1] * b[1], g[2] * b[2])
        given = len(groups) if isinstance(groups, (tuple, list)) else 1
    else:
        size = _triple(global_size, "global_size")
        given = len(global_size) if isinstance(global_size, (tuple, list)) else 1
    if any(x <= 0 for x in b) or b[0] * b[1] * b[2] > 1024:
        raise LaunchError(f"block {b}: each dimension must be positive and the product <= 1024")
    if any(x <= 0 for x in size):
        raise LaunchError(f"grid {size}: every dimension must be positive")
    if any(x >= 1 << 32 for x in size):
        raise LaunchError(f"grid {size}: a dimension does not fit in 32 bits")
    if any(x > 0xFFFF for x in b):
        raise LaunchError(f"block {b}: a dimension does not fit in 16 bits")
    if dims is None:
        dims = given if given in (1, 2, 3) else 3
        dims = max(dims, max((i + 1 for i in range(3) if size[i] > 1 or b[i] > 1), default=1))
    return Grid(b, size, _triple(global_offset, "global_offset"), dims)


_grid_kept = functools.lru_cache(maxsize=256, typed=True)(_make_grid)


def _triple(v, what) -> tuple[int, int, int]:
    if isinstance(v, (int, np.integer)):
        v = (int(v),)
    v = tuple(int(x) for x in v)
    if not 1 <= len(v) <= 3:
        raise LaunchError(f"{what} needs 1 to 3 values, not {len(v)}")
    return v + (1,) * (3 - len(v))


@dataclass
class KernargPlan:
    data: bytearray
    dynamic_lds: int
    filled: list[tuple[str, int, int, int | None]]  # (value_kind, offset, size, value) for reports;
    # value None: a by-value argument


def _pack_value(arg: KernelArg, value, index: int) -> bytes:
    """Bytes of one by_value argument."""
    size = arg.size
    if isinstance(value, (bytes, bytearray, memoryview)):
        b = bytes(value)
    elif isinstance(value, np.ndarray):
        b = value.tobytes()
    elif isinstance(value, np.generic):
        b = value.tobytes()
    elif isinstance(value, bool):
        b = int(value).to_bytes(size, "little")
    elif isinstance(value, int):
        if -(1 << (8 * size - 1)) <= value < 0:
            b = (value + (1 << (8 * size))).to_bytes(size, "little")
        elif 0 <= value < (1 << (8 * size)):
            b = value.to_bytes(size, "little")
        else:
            raise LaunchError(
                f"argument {index} ({arg.name or arg.type_name or 'by_value'}): "
                f"{value} does not fit in {size} bytes"
            )
    elif isinstance(value, float):
        if size == 4:
            b = struct.pack("<f", value)
        elif size == 8:
            b = struct.pack("<d", value)
        elif size == 2:
            b = np.float16(value).tobytes()
        else:
            raise LaunchError(f"argument {index}: a float cannot fill {size} bytes")
    else:
        raise LaunchError(
            f"argument {index} ({arg.type_name or 'by_value'}, {size} bytes): "
            f"cannot pass a {type(value).__name__}; use a NumPy scalar, int, "
            f"float or bytes"
        )
    if len(b) != size:
        raise LaunchError(
            f"argument {index} ({arg.name or arg.type_name or 'by_value'}) is "
            f"{size} bytes, but the value given has {len(b)} "
            f"({type(value).__name__})"
        )
    return b


def _address_of(value, index: int, arg: KernelArg) -> int:
    if value is None:
        return 0
    addr = getattr(value, "address", None)
    if addr is not None:
        return int(addr)
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    raise LaunchError(
        f"argument {index} ({arg.type_name or arg.value_kind}) is a pointer: pass a "
        f"Buffer from Device.upload/alloc (or an int address, or None), not a "
        f"{type(value).__name__}"
    )


def build_kernargs(
    kernel: KernelInfo,
    args,
    grid: Grid,
    *,
    queue_address: int = 0,
    group_static: int | None = None,
    extra_hidden: dict | None = None,
) -> KernargPlan:
    """The kernarg segment bytes: explicit arguments in metadata order, then hidden arguments
    filled the way CLR (rocclr device/rocm/rocvirtual.cpp, VirtualGPU::submitKernelInternal)
    fills them for code object v4/v5."""
    size = kernel.kernarg_segment_size
    buf = bytearray(max(size, 0))
    explicit = kernel.explicit_args
    args = list(args)
    if len(args) != len(explicit):
        kinds = ", ".join(a.type_name or a.value_kind for a in explicit)
        raise LaunchError(
            f"kernel {kernel.name} takes {len(explicit)} arguments ({kinds}), {len(args)} given"
        )
    lds = group_static if group_static is not None else kernel.group_segment_fixed_size
    dynamic_lds = 0
    filled: list[tuple[str, int, int, int | None]] = []

    def put(arg: KernelArg, raw: bytes):
        if arg.offset < 0 or arg.offset + len(raw) > len(buf):
            raise LaunchError(
                f"kernel {kernel.name}: argument at offset {arg.offset} "
                f"({len(raw)} bytes) lies outside the {len(buf)}-byte kernarg segment"
            )
        buf[arg.offset : arg.offset + len(raw)] = raw

    for i, (arg, val) in enumerate(zip(explicit, args)):
        vk = arg.value_kind
        if vk == "global_buffer":
            a = _address_of(val, i, arg)
            put(arg, (a & (1 << 64) - 1).to_bytes(8, "little")[: arg.size])
            filled.append((vk, arg.offset, arg.size, a))
        elif vk == "by_value":
            if hasattr(val, "address") and not isinstance(val, np.ndarray):
                raise LaunchError(
                    f"argument {i} ({arg.type_name or 'by_value'}) is passed by "
                    f"value, not a pointer; a Buffer was given"
                )
            put(arg, _pack_value(arg, val, i))
            filled.append((vk, arg.offset, arg.size, None))
        elif vk == "dynamic_shared_pointer":
            if not isinstance(val, Local):
                raise LaunchError(
                    f"argument {i} is a __local pointer: pass "
                    f"wavelift.driver.Local(nbytes), not {type(val).__name__}"
                )
            align = max(arg.pointee_align or 1, 4)
            off = align_up(lds, align)
            lds = off + int(val.nbytes)
            dynamic_lds = lds - (
                group_static if group_static is not None else kernel.group_segment_fixed_size
            )
            put(arg, off.to_bytes(4, "little")[: arg.size])
            filled.append((vk, arg.offset, arg.size, off))
        else:
            raise LaunchError(
                f"argument {i}: value kind {vk!r} (images, samplers, pipes, "
                f"queues) is not supported by wavelift's runtime"
            )

    gx, gy, gz = grid.groups
    bx, by, bz = grid.block
    rx, ry, rz = grid.remainder
    ox, oy, oz = grid.offset
    hidden_values = {
        "hidden_block_count_x": gx,
        "hidden_block_count_y": gy,
        "hidden_block_count_z": gz,
        "hidden_group_size_x": bx,
        "hidden_group_size_y": by,
        "hidden_group_size_z": bz,
        "hidden_remainder_x": rx,
        "hidden_remainder_y": ry,
        "hidden_remainder_z": rz,
        "hidden_global_offset_x": ox,
        "hidden_global_offset_y": oy,
        "hidden_global_offset_z": oz,
        "hidden_grid_dims": grid.dims,
        "hidden_queue_ptr": queue_address,
        "hidden_dynamic_lds_size": dynamic_lds,
        "hidden_private_base": PRIVATE_APERTURE_HI,
        "hidden_shared_base": SHARED_APERTURE_HI,
        # Null: wavelift provides no printf/hostcall buffer, device heap, device-side enqueue,
        # multi-grid sync or tool correlation; kernels that use them get a null pointer.
        "hidden_printf_buffer": 0,
        "hidden_hostcall_buffer": 0,
        "hidden_multigrid_sync_arg": 0,
        "hidden_heap_v1": 0,
        "hidden_default_queue": 0,
        "hidden_completion_action": 0,
        "hidden_tool_correlation_id": 0,
        "hidden_none": 0,
    }
    if extra_hidden:
        hidden_values.update(extra_hidden)
    for arg in kernel.args:
        if not arg.hidden:
            continue
        v = hidden_values.get(arg.value_kind, 0)
        put(arg, (int(v) & ((1 << (8 * arg.size)) - 1)).to_bytes(arg.size, "little"))
        filled.append((arg.value_kind, arg.offset, arg.size, int(v)))
    return KernargPlan(buf, dynamic_lds, filled)


# ---- AQL dispatch packet --------------------------------------------------------------------

HSA_PACKET_TYPE_KERNEL_DISPATCH = 2
HSA_FENCE_SCOPE_SYSTEM = 2
DISPATCH_PACKET_SIZE = 64
AMD_QUEUE_SIZE = 256  # sizeof(amd_queue_t) in ROCr (hsa_queue_t + AMD fields)


def dispatch_packet(
    grid: Grid, private_segment_size: int, group_segment_size: int, kernel_object: int, kernarg_address: int
) -> bytes:
    """hsa_kernel_dispatch_packet_t (HSA 1.2 runtime spec 2.8; hsa.h)."""
    header = HSA_PACKET_TYPE_KERNEL_DISPATCH | (HSA_FENCE_SCOPE_SYSTEM << 9) | (HSA_FENCE_SCOPE_SYSTEM << 11)
    setup = grid.dims & 3
    return struct.pack(
        "<HHHHHHIIIIIQQQQ",
        header,
        setup,
        *grid.block,
        0,
        *grid.size,
        private_segment_size,
        group_segment_size,
        kernel_object,
        kernarg_address,
        0,
        0,
    )


# ---- user SGPRs -----------------------------------------------------------------------------


def hsa_user_sgprs(
    kd: KernelDescriptor,
    *,
    target: str,
    wave_size: int,
    scratch_base: int,
    scratch_total: int,
    dispatch_ptr: int,
    queue_ptr: int,
    kernarg_ptr: int,
    dispatch_id: int,
    private_segment_size: int,
    kernargs: bytes = b"",
) -> list[int]:
    """COMPUTE_USER_DATA_0.. for an HSA kernel, in AMDGPUUsage "SGPR Register Set Up Order"."""
    out: list[int] = []
    for what, first, count in kd.user_sgpr_layout():
        assert first == len(out)
        if what == "private_segment_buffer":
            out += scratch_buffer_descriptor(target, scratch_base, scratch_total, wave_size)
        elif what == "dispatch_ptr":
            out += [dispatch_ptr & 0xFFFFFFFF, (dispatch_ptr >> 32) & 0xFFFFFFFF]
        elif what == "queue_ptr":
            out += [queue_ptr & 0xFFFFFFFF, (queue_ptr >> 32) & 0xFFFFFFFF]
        elif what == "kernarg_segment_ptr":
            out += [kernarg_ptr & 0xFFFFFFFF, (kernarg_ptr >> 32) & 0xFFFFFFFF]
        elif what == "dispatch_id":
            out += [dispatch_id & 0xFFFFFFFF, (dispatch_id >> 32) & 0xFFFFFFFF]
        elif what == "flat_scratch_init":
            # GFX10: the 64-bit base of the scratch backing memory (AMDGPUUsage "Flat Scratch");
            # the kernel prologue adds the wave offset and writes FLAT_SCRATCH with s_setreg.
            out += [scratch_base & 0xFFFFFFFF, (scratch_base >> 32) & 0xFFFFFFFF]
        elif what == "preloaded_kernargs":
            off = kd.kernarg_preload_offset * 4
            raw = bytes(kernargs[off : off + 4 * count]).ljust(4 * count, b"\0")
            out += list(struct.unpack(f"<{count}I", raw))
        elif what == "private_segment_size":
            out.append(align_up(private_segment_size, 4) & 0xFFFFFFFF)
    return out
