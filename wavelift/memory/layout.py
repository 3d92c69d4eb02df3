"""Where a texel of a GFX10/10.3/11 image lies: addrlib's Addr2 surface layout, our own code.

The one place wavelift turns an image's (x, y, slice, mip) into a byte offset from its base:
image load/store (frontend/image.py) and ``wavelift show`` use it.  It follows addrlib's GFX10 path
(Gfx10Lib in Mesa 22.3.6: ComputeSurfaceInfo{Linear,MicroTiled,MacroTiled},
ComputeSurfaceAddrFromCoord{Linear,MicroTiled,MacroTiled}), which is what the hardware reads:

* **Swizzle patterns.**  A tiled mode places each byte of a block (256 B, 4 KiB or 64 KiB) by a
  pattern: address bit i is the XOR of some x, y and z (slice) bits, x and y in elements.  The
  patterns are addrlib's own tables, generated into ``tables/gfx10_image.json`` from
  gfx10SwizzlePattern.h by tools/gen_image_tables.py (never typed); the table row depends on the
  mode, the resource type (2-D/1-D or 3-D), bytes per element and, for the _X/_T modes, on the
  chip's pipes and packers (GB_ADDR_CONFIG; RB+ chips, GFX10.3, have their own tables).
* **Blocks.**  Elements per block: 2^(block log2 - bpe log2) split between x and y, x getting the
  odd bit (thin), or the 1 KiB 3-D micro block scaled on x, y, z (thick: 3-D in S/D modes).
  Pitch and height are rounded up to the block; blocks are row-major within a slice (a mip).
* **Pipe/bank XOR** (_X and _T modes): the pipe and bank bits of the surface's pipeBankXor,
  shifted to the 256-byte pipe interleave, are XORed into the offset within the block.  RADV puts
  that value into the T#'s base address bits above 256 B (ac_surface ``tile_swizzle``); a caller
  passes those bits as ``pipe_bank_xor``.
* **Mip chains.**  256 B modes and linear: levels from the smallest up, each a whole slice
  piece.  4 KiB / 64 KiB modes: the levels that fit the tail (at most half a block wide or high,
  and few enough) share the first block at fixed offsets (addrlib's mip-tail rule); larger levels
  follow, smallest first.

Only 1 sample per pixel (storage images); MSAA, VAR block modes and the swizzle modes GFX10 does
not define have no pattern here: ``pattern_for`` returns None and the caller refuses the image.
The compiled addrlib checks every mode x bytes per element x resource type on random
coordinates (tools/addrlib_oracle, tests/memory/test_layout.py).

**GFX11** (``Chip.gfx11``, decision 0039): Gfx11Lib in Mesa 22.3.6 places texels by the same
rules (blocks, block dimensions, mip-tail rule and offsets, pipe/bank XOR) with its own pattern
tables (gfx11SwizzlePattern.h, generated into ``tables/gfx11_image.json``), its own mode set
(2-D: 256B_D, 4KB_D/_D_X, 64KB_D/_D_T/_D_X/_Z_X/_R_X, 256KB_D_X/_Z_X/_R_X; 3-D: 4KB_S/_S_X,
64KB_S/_S_T/_S_X/_D_X/_Z_X/_R_X, 256KB_S_X/_Z_X/_R_X; 1-D: 64KB_Z_X/_R_X; the 256KB modes
take GFX10's VAR values 28..31), always the packer-indexed (RB+) rows, and the small-element
tail fix on R modes as well as Z ones, on every part (tests/memory/test_gfx11_layout.py).

For the IR (frontend/image.py, where the mode and texel size are run-time values):
``mode_facts`` gives a (chip, mode, resource type, element size)'s numbers (block shape, mip-tail
rule, the bits the pipe/bank XOR flips, each address bit's x/y/z masks packed in 30 bits),
``level_plan`` and ``address_by_facts`` the arithmetic the IR carries out on them; the tests
hold them equal to ``surface_info`` and ``address``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

LINEAR = 0
RSRC_1D, RSRC_2D, RSRC_3D = 0, 1, 2  # addrlib's AddrResourceType


@cache
def tables(gfx11: bool = False) -> dict:
    name = "tables/gfx11_image.json" if gfx11 else "tables/gfx10_image.json"
    return json.loads(resources.files("wavelift.memory").joinpath(name).read_text())


@cache
def sw_mode_names(gfx11: bool = False) -> dict[int, str]:
    """SW_MODE value -> addrlib name (``64KB_R_X``), for every name addrtypes.h defines (GFX11:
    with the 256KB names of values 28..31)."""
    return {int(k): v for k, v in tables(gfx11)["sw_modes"].items()}


@dataclass(frozen=True)
class Chip:
    """What a layout depends on beyond the T#: GFX10.3 parts use the RB+ patterns; the pipe and
    packer counts come from GB_ADDR_CONFIG (NUM_PIPES [2:0], NUM_PKRS [10:8]; the pipe
    interleave, [5:3], must be 256 bytes, the only size addrlib's patterns are made for)."""

    rbplus: bool
    pipes_log2: int
    pkrs_log2: int = 0
    # addrlib's dsMipmapHtileFix: every GFX10 part but Navi10 (smaller mip tails in Z modes)
    z_tail_fix: bool = True
    # GFX11 (Gfx11Lib): its own patterns and modes; packers always count; the tail fix on every
    # part, for Z and R modes
    gfx11: bool = False

    @staticmethod
    def from_gb_addr_config(value: int, rbplus: bool, z_tail_fix: bool = True, gfx11: bool = False) -> Chip:
        if (value >> 3) & 7:
            raise ValueError("GB_ADDR_CONFIG.PIPE_INTERLEAVE_SIZE other than 256 bytes")
        if gfx11:
            return Chip(True, value & 7, (value >> 8) & 7, True, True)
        return Chip(rbplus, value & 7, ((value >> 8) & 7) if rbplus else 0, z_tail_fix)

    @staticmethod
    def gfx11_plain() -> Chip:
        """GFX11 with no GB_ADDR_CONFIG: the modes without pipe/bank XOR do not depend on it."""
        return Chip(True, 0, 0, True, True)

    @property
    def color_base_index(self) -> int:
        """Row of the _X/_T pattern tables for 1-byte elements (Gfx10Lib/Gfx11Lib::
        HwlInitGlobalParams)."""
        i = self.pipes_log2 * 5
        if self.rbplus and self.pkrs_log2 >= 2:
            i += (2 * self.pkrs_log2 - 2) * 5
        return i

    def tail_fix(self, kind: str) -> bool:
        """The smaller mip-tail fit of 1/2-byte elements applies to a mode of this kind."""
        if self.gfx11:
            return kind in ("Z", "R")
        return self.z_tail_fix and kind == "Z"


def pipe_bank_mask(chip: Chip, blk: int) -> int:
    """The offset bits within a 2^``blk``-byte block that an XOR mode's pipe/bank XOR flips:
    the pipe bits and up to four bank bits above them, from bit 8."""
    pipe_mask = (1 << chip.pipes_log2) - 1
    bank_bits = max(0, min(blk - 8 - chip.pipes_log2 - 2, 4))
    bank_mask = ((1 << bank_bits) - 1) << (chip.pipes_log2 + 2)
    return ((pipe_mask | bank_mask) << 8) & ((1 << blk) - 1)


def mode_kind(sw_mode: int, gfx11: bool = False) -> tuple[int, str, bool] | None:
    """(block size log2, S/D/R/Z, XOR) from the mode's name, or None (linear, unknown, VAR)."""
    name = sw_mode_names(gfx11).get(sw_mode)
    if name is None or sw_mode == LINEAR:
        return None
    parts = name.split("_")
    blk = {"256B": 8, "4KB": 12, "64KB": 16, "256KB": 18}.get(parts[0])
    if blk is None:
        return None
    return blk, parts[1], len(parts) > 2  # _X and _T both XOR the pipe/bank bits


def is_thick(rsrc: int, sw_mode: int, gfx11: bool = False) -> bool:
    k = mode_kind(sw_mode, gfx11)
    return rsrc == RSRC_3D and k is not None and k[1] in ("S", "D")


# GFX11's modes per resource type (Gfx11Rsrc{1d,2d,3d}SwModeMask) and their pattern tables
# (Gfx11Lib::GetSwizzlePatternInfo, one sample per pixel)
_GFX11_2D = ("256B_D", "4KB_D", "4KB_D_X", "64KB_D", "64KB_D_T", "64KB_D_X", "256KB_D_X")
_GFX11_ZR = ("64KB_Z_X", "64KB_R_X", "256KB_Z_X", "256KB_R_X")
_GFX11_S3 = ("4KB_S", "4KB_S_X", "64KB_S", "64KB_S_T", "64KB_S_X", "256KB_S_X")


def _pattern_name11(name: str, rsrc: int) -> str | None:
    size, rest = name.split("_", 1)
    short = {"256B": "256", "4KB": "4K", "64KB": "64K", "256KB": "256K"}[size]
    if name in _GFX11_ZR and (rsrc != RSRC_1D or size == "64KB"):
        return f"GFX11_SW_{short}_ZR_X_1xaa_PATINFO"
    if rsrc == RSRC_3D:
        if name == "64KB_D_X":  # (256KB_D_X: addrlib has no 3-D pattern)
            return "GFX11_SW_64K_D3_X_PATINFO"
        if name in _GFX11_S3:
            return f"GFX11_SW_{short}_S3{rest[1:]}_PATINFO"
        return None
    if rsrc == RSRC_2D and name in _GFX11_2D:
        return f"GFX11_SW_{short}_{rest}_PATINFO"
    return None


def pattern_name(sw_mode: int, rsrc: int, rbplus: bool, gfx11: bool = False) -> str | None:
    """The addrlib pattern table of a mode for one sample per pixel (Gfx10Lib/Gfx11Lib::
    GetSwizzlePatternInfo), or None where the GFX level has none (the mode is refused)."""
    name = sw_mode_names(gfx11).get(sw_mode)
    k = mode_kind(sw_mode, gfx11)
    if k is None or name is None:
        return None
    if gfx11:
        t = _pattern_name11(name, rsrc)
        return t if t is not None and t in tables(True)["patinfo"] else None
    blk, kind, _ = k
    suffix = "_RBPLUS_PATINFO" if rbplus else "_PATINFO"
    short = {8: "256", 12: "4K", 16: "64K"}[blk]
    rest = name.split("_", 1)[1]  # S, S_X, D_T, R_X, Z_X, ...
    if rsrc == RSRC_3D:
        allowed = {"4KB_S", "64KB_S", "64KB_S_T", "4KB_S_X", "64KB_Z_X", "64KB_S_X", "64KB_D_X", "64KB_R_X"}
        if name not in allowed:
            return None
        if kind in ("R", "Z"):
            table = f"GFX10_SW_64K_{kind}_X_1xaa"
        elif kind == "D":
            table = "GFX10_SW_64K_D3_X"
        else:
            table = f"GFX10_SW_{short}_S3" + rest[1:]
    else:
        if rsrc == RSRC_1D and kind not in ("R", "Z"):
            return None  # 1-D images: linear, R_X or Z_X only (Gfx10Rsrc1dSwModeMask)
        if kind in ("R", "Z"):
            if name not in ("64KB_R_X", "64KB_Z_X"):
                return None  # 4KB_R_X has no 2-D pattern; the other R/Z modes are GFX9's
            table = f"GFX10_SW_64K_{kind}_X_1xaa"
        else:
            table = f"GFX10_SW_{short}_{rest}"
    table += suffix
    return table if table in tables()["patinfo"] else None


@cache
def pattern_for(
    chip: Chip, sw_mode: int, rsrc: int, bpe_log2: int
) -> tuple[tuple[int, int, int], ...] | None:
    """Per address bit of the block, the (x, y, z) masks whose bits it XORs (x, y in elements,
    z the slice), or None when the mode has no pattern for this resource type."""
    name = pattern_name(sw_mode, rsrc, chip.rbplus, chip.gfx11)
    k = mode_kind(sw_mode, chip.gfx11)
    if name is None or k is None or not 0 <= bpe_log2 <= 4:
        return None
    blk, kind, xor = k
    if kind == "Z" and bpe_log2 > 3:
        return None  # addrlib rejects Z-order surfaces of 16-byte elements (ValidateSwModeParams)
    t = tables(chip.gfx11)
    rows = t["patinfo"][name]
    index = (chip.color_base_index + bpe_log2) if xor else bpe_log2
    if index >= len(rows):
        return None
    items, n01, n2, n3, n4 = rows[index]
    if items > 3:
        return None  # addrlib has no equation for it (3-D 64KB_D_X, 8/16-byte, RB+): unchecked
    bits = t["nibble01"][n01] + t["nibble2"][n2] + t["nibble3"][n3] + t["nibble4"][n4]
    out = []
    for term in bits[:blk]:
        m = {"X": 0, "Y": 0, "Z": 0, "S": 0}
        if term != "0":
            for f in term.split("^"):
                m[f[0]] |= 1 << int(f[1:])
        if m["S"]:
            return None  # a sample bit: not a 1-sample pattern
        out.append((m["X"], m["Y"], m["Z"]))
    return tuple(out)


def block_dims(sw_mode: int, rsrc: int, bpe_log2: int, gfx11: bool = False) -> tuple[int, int, int]:
    """Block width, height, depth in elements (addrlib ComputeThin/ThickBlockDimension)."""
    if sw_mode == LINEAR:
        return 256 >> bpe_log2, 1, 1
    k = mode_kind(sw_mode, gfx11)
    assert k is not None
    blk = k[0]
    if is_thick(rsrc, sw_mode, gfx11):
        # the 1 KiB 3-D micro block per element size, scaled up to the block size
        micro = [(16, 8, 8), (8, 8, 8), (8, 8, 4), (8, 4, 4), (4, 4, 4)][bpe_log2]
        amp, rest = divmod(blk - 10, 3)
        return micro[0] << amp, micro[1] << (amp + rest // 2), micro[2] << (amp + (1 if rest else 0))
    n = blk - bpe_log2
    w = (n + 1) // 2  # the width takes the odd bit (one sample)
    return 1 << w, 1 << (n - w), 1


@dataclass(frozen=True)
class Mip:
    offset: int  # bytes from the base to this level of slice 0 (addrlib's macroBlockOffset)
    pitch: int  # elements
    height: int
    tail: tuple[int, int, int] | None  # (x, y, z) of the level inside the mip-tail block


@dataclass(frozen=True)
class Surface:
    """An image as a T# describes it: mode, resource type, element size, level-0 size in
    elements (width, height, slices or depth), number of levels."""

    sw_mode: int
    rsrc: int
    bpe_log2: int
    width: int
    height: int
    depth: int = 1
    levels: int = 1


@dataclass(frozen=True)
class Info:
    pitch: int
    height: int
    slices: int
    block: tuple[int, int, int]
    slice_size: int  # bytes of one slice, all levels (a thick block of slices is block-depth of them)
    mips: tuple[Mip, ...]


def _mip_size(v: int, level: int) -> int:
    """addrlib's level size: rounded up (ShiftCeil), not the API's floor."""
    return max(-(-v >> level), 1)


def _align(v: int, a: int) -> int:
    return (v + a - 1) // a * a


def max_mips_in_tail(blk: int, thin: bool) -> int:
    eff = blk if thin else blk - (blk - 8) // 3
    return 1 + (1 << (eff - 9)) if eff <= 11 else eff - 4


def surface_info(s: Surface, chip: Chip | None = None) -> Info:
    """Pitch, height, slice size and each level's place (addrlib ComputeSurfaceInfo*)."""
    bpe = 1 << s.bpe_log2
    g11 = chip is not None and chip.gfx11
    bw, bh, bd = block_dims(s.sw_mode, s.rsrc, s.bpe_log2, g11)
    thick = is_thick(s.rsrc, s.sw_mode, g11)
    if s.sw_mode == LINEAR or mode_kind(s.sw_mode, g11)[0] == 8:  # type: ignore[index]
        # linear and 256 B blocks: levels from the smallest up, no tail
        hal = 1 if s.sw_mode == LINEAR else bh
        mips: list[Mip] = [Mip(0, 0, 0, None)] * s.levels
        size = 0
        for i in reversed(range(s.levels)):
            p = _align(_mip_size(s.width, i), bw)
            h = _align(_mip_size(s.height, i), hal)
            mips[i] = Mip(size, p, h, None)
            size += p * h * bpe
        slices = s.depth
        return Info(mips[0].pitch, mips[0].height, slices, (bw, bh, bd), size, tuple(mips))
    blk = mode_kind(s.sw_mode, g11)[0]  # type: ignore[index]
    pitch, height, slices = _align(s.width, bw), _align(s.height, bh), _align(s.depth, bd)
    if s.levels == 1:
        return Info(pitch, height, slices, (bw, bh, bd), pitch * height * bpe, (Mip(0, pitch, height, None),))
    # the tail: levels at most (block width / 2) x block height (thin) that are among the last
    # max_mips_in_tail levels share one block
    tail_w, tail_h, tail_d = bw, bh, bd
    if thick:
        tail_h, tail_w, tail_d = (
            (bh >> 1, bw, bd) if blk % 3 == 0 else (bh, bw >> 1, bd) if blk % 3 == 1 else (bh, bw, bd >> 1)
        )
    else:
        tail_w >>= 1
    fit_w, fit_h = tail_w, tail_h
    if chip is not None and chip.tail_fix(mode_kind(s.sw_mode, g11)[1]) and s.bpe_log2 <= 1:  # type: ignore[index]
        b = [(16, 16), (16, 8), (8, 8)]
        fit_w //= b[s.bpe_log2][0] // b[2][0]
        fit_h //= b[s.bpe_log2][1] // b[2][1]
    max_tail = max_mips_in_tail(blk, not thick)
    first_tail = s.levels
    chain = 0
    sizes: dict[int, tuple[int, int, int]] = {}
    for i in range(s.levels):
        w, h = _mip_size(s.width, i), _mip_size(s.height, i)
        if w <= fit_w and h <= fit_h and s.levels - i <= max_tail:
            first_tail = i
            chain += (1 << blk) // bd
            break
        p, hh = _align(w, bw), _align(h, bh)
        sizes[i] = (p, hh, p * hh * bpe * bd)
        chain += p * hh * bpe
    out: list[Mip] = [Mip(0, 0, 0, None)] * s.levels
    off = (1 << blk) if first_tail != s.levels else 0
    for i in reversed(range(first_tail)):
        p, hh, per_block_of_slices = sizes[i]
        out[i] = Mip(off, p, hh, None)
        off += per_block_of_slices
    b256 = [(16, 16), (16, 8), (8, 8), (8, 4), (4, 4)][s.bpe_log2]
    b256_3d = [(8, 4, 8), (4, 4, 8), (4, 4, 4), (4, 2, 4), (2, 2, 4)][s.bpe_log2]
    unit = b256_3d[:2] if thick else b256
    tp, th = tail_w, tail_h
    for i in range(first_tail, s.levels):
        m = max_tail - 1 - (i - first_tail)
        mo = (16 << m) if m > 6 else (m << 8)
        mx = sum(((mo >> (9 + 2 * k)) & 1) << k for k in range(6))
        my = sum(((mo >> (8 + 2 * k)) & 1) << k for k in range(6))
        if blk & 1:
            mx, my = my, mx
            if s.bpe_log2 & 1:
                my = (my << 1) | (mx & 1)
                mx >>= 1
        out[i] = Mip(0, tp, th, (mx * unit[0], my * unit[1], 0))
        tp, th = max(tp >> 1, unit[0]), max(th >> 1, unit[1])
    return Info(pitch, height, slices, (bw, bh, bd), chain, tuple(out))


COORD_BITS = (11, 11, 8)  # x, y, z bits any GFX10/10.3 pattern reads (x, y < 2**11, z < 2**8)


@dataclass(frozen=True)
class ModeFacts:
    """What places a texel of one (chip, swizzle mode, resource type, element size), as numbers
    frontend/image.py looks up at run time and surface_info/address use here (so the addrlib
    oracle checks the very facts the IR uses).  Log2s throughout.  Linear is the 256-byte-row
    case of a blocked layout: blocks of one 256-byte row (block_dims), whose pattern places x."""

    blk: int  # block bytes (8: linear and the 256 B modes, which have no mip tail)
    bw: int  # block width, height, depth in elements
    bh: int
    bd: int
    thick: bool
    tail: bool  # a mip chain may end in a tail (4 KiB / 64 KiB blocks)
    fit_w: int  # a level fits the tail when its (addrlib-rounded) size is at most this
    fit_h: int
    max_tail: int  # levels a tail holds at most
    unit_x: int  # the tail's 256 B unit (a level's origin in the tail is a multiple)
    unit_y: int
    xor_mask: int  # the bits of the offset within the block the pipe/bank XOR may flip
    packed: tuple[int, ...]  # per address bit of the block: x | y << 11 | z << 22 (pack_masks)


def pack_masks(mx: int, my: int, mz: int) -> int:
    return mx | my << COORD_BITS[0] | mz << (COORD_BITS[0] + COORD_BITS[1])


@cache
def mode_facts(chip: Chip, sw_mode: int, rsrc: int, bpe_log2: int) -> ModeFacts | None:
    """The facts of a laid-out (mode, resource type, element size), or None (refused)."""
    if not 0 <= bpe_log2 <= 4:
        return None
    if sw_mode == LINEAR:
        n = 8 - bpe_log2
        pat = tuple(pack_masks(1 << (i - bpe_log2), 0, 0) if i >= bpe_log2 else 0 for i in range(8))
        return ModeFacts(8, n, 0, 0, False, False, 0, 0, 0, 0, 0, 0, pat)
    pattern = pattern_for(chip, sw_mode, rsrc, bpe_log2)
    k = mode_kind(sw_mode, chip.gfx11)
    if pattern is None or k is None:
        return None
    blk, kind, xor = k
    for mx, my, mz in pattern:
        assert mx < 1 << COORD_BITS[0] and my < 1 << COORD_BITS[1] and mz < 1 << COORD_BITS[2]
    bw, bh, bd = block_dims(sw_mode, rsrc, bpe_log2, chip.gfx11)
    thick = is_thick(rsrc, sw_mode, chip.gfx11)
    lg = int.bit_length
    tail_w, tail_h = bw, bh
    if thick:
        tail_w, tail_h = (bw, bh >> 1) if blk % 3 == 0 else (bw >> 1, bh) if blk % 3 == 1 else (bw, bh)
    else:
        tail_w >>= 1
    fit_w, fit_h = tail_w, tail_h
    if chip.tail_fix(kind) and bpe_log2 <= 1:
        b = [(16, 16), (16, 8), (8, 8)]
        fit_w //= b[bpe_log2][0] // b[2][0]
        fit_h //= b[bpe_log2][1] // b[2][1]
    unit = [(8, 4), (4, 4), (4, 4), (4, 2), (2, 2)][bpe_log2] if thick else B256[bpe_log2]
    xor_mask = pipe_bank_mask(chip, blk) if xor else 0
    assert blk % 2 == 0  # (addrlib swaps tail coordinates for odd blocks: VAR modes, refused)
    return ModeFacts(
        blk,
        lg(bw) - 1,
        lg(bh) - 1,
        lg(bd) - 1,
        thick,
        blk > 8,
        lg(fit_w) - 1,
        lg(fit_h) - 1,
        max_mips_in_tail(blk, not thick) if blk > 8 else 0,
        lg(unit[0]) - 1,
        lg(unit[1]) - 1,
        xor_mask,
        tuple(pack_masks(*t) for t in pattern),
    )


B256 = [(16, 16), (16, 8), (8, 8), (8, 4), (4, 4)]  # elements of a 256 B thin block per bpe


def tail_origin(m: int) -> tuple[int, int]:
    """(x, y) in tail units of the level ``m`` places before the tail's last (addrlib's mip-tail
    offsets, even block sizes)."""
    mo = (16 << m) if m > 6 else (m << 8)
    mx = sum(((mo >> (9 + 2 * k)) & 1) << k for k in range(6))
    my = sum(((mo >> (8 + 2 * k)) & 1) << k for k in range(6))
    return mx, my


def _parity_terms(mask: int, v: np.ndarray) -> np.ndarray:
    out = np.zeros_like(v)
    b = 0
    while mask:
        if mask & 1:
            out ^= (v >> np.uint64(b)) & np.uint64(1)
        mask >>= 1
        b += 1
    return out


def block_offset(pattern, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The offset within a block the pattern gives (x, y in elements, z the slice)."""
    off = np.zeros_like(x)
    for i, (mx, my, mz) in enumerate(pattern):
        v = _parity_terms(mx, x) ^ _parity_terms(my, y) ^ _parity_terms(mz, z)
        off |= v << np.uint64(i)
    return off


def supported(chip: Chip, s: Surface) -> bool:
    return s.sw_mode == LINEAR or pattern_for(chip, s.sw_mode, s.rsrc, s.bpe_log2) is not None


def address(chip: Chip, s: Surface, x, y, z, mip: int = 0, pipe_bank_xor: int = 0) -> np.ndarray:
    """Byte offsets from the image's base of elements (x, y, z) of level ``mip`` (z: the slice
    of a 2-D array or the depth of a 3-D image), as addrlib's Addr2ComputeSurfaceAddrFromCoord
    gives them.  Arrays of any shape (they broadcast); ValueError for a mode without pattern."""
    x = np.asarray(x, np.uint64)
    y = np.asarray(y, np.uint64)
    z = np.asarray(z, np.uint64)
    x, y, z = np.broadcast_arrays(x, y, z)
    info = surface_info(s, chip)
    mi = info.mips[mip]
    bpe = 1 << s.bpe_log2
    u = np.uint64
    if s.sw_mode == LINEAR:
        return u(info.slice_size) * z + u(mi.offset) + (y * u(mi.pitch) + x) * u(bpe)
    pattern = pattern_for(chip, s.sw_mode, s.rsrc, s.bpe_log2)
    k = mode_kind(s.sw_mode, chip.gfx11)
    if pattern is None or k is None:
        raise ValueError(f"no layout for swizzle mode {s.sw_mode} ({s.rsrc}-type, {bpe} bytes)")
    blk, _, xor = k
    bw, bh, bd = info.block
    pb = u(mi.pitch // bw)
    blk_idx = (y // u(bh)) * pb + x // u(bw)
    if blk == 8:
        return u(info.slice_size) * z + u(mi.offset) + blk_idx * u(256) + block_offset(pattern, x, y, z)
    px, py, pz = (x, y, z) if mi.tail is None else (x + u(mi.tail[0]), y + u(mi.tail[1]), z + u(mi.tail[2]))
    off = block_offset(pattern, px, py, pz)
    if xor:
        off ^= u((pipe_bank_xor << 8) & pipe_bank_mask(chip, blk))
    thick = is_thick(s.rsrc, s.sw_mode, chip.gfx11)
    slice_size, slice_id = (u(info.slice_size * bd), z // u(bd)) if thick else (u(info.slice_size), z)
    return slice_size * slice_id + u(mi.offset) + (blk_idx << u(blk)) + off


def level_plan(f: ModeFacts, bpe_log2: int, width: int, height: int, levels: int):
    """(chain, [(offset, pitch, tail origin or None) per level]) by the arithmetic
    frontend/image.py carries out in IR: chain is the bytes of one slice (all levels; times
    block depth for a thick block of slices), offset a level's bytes from its slice's start.
    Equals surface_info (tests/memory/test_layout.py)."""
    sizes, tails = [], []
    for i in range(levels):
        w, h = _mip_size(width, i), _mip_size(height, i)
        p, hh = _align(w, 1 << f.bw), _align(h, 1 << f.bh)
        sizes.append((p * hh) << bpe_log2)
        tails.append(
            f.tail and levels > 1 and w <= 1 << f.fit_w and h <= 1 << f.fit_h and levels - i <= f.max_tail
        )
    has_tail = tails[-1]
    first_tail = tails.index(True) if has_tail else levels
    head = (1 << f.blk) if has_tail else 0
    chain = sum(sz for sz, t in zip(sizes, tails) if not t) + (head >> f.bd)
    out: list[tuple[int, int, tuple[int, int] | None]] = []
    for lv in range(levels):
        off = head + sum(sizes[i] << f.bd for i in range(lv + 1, levels) if not tails[i])
        pitch = _align(_mip_size(width, lv), 1 << f.bw)
        if tails[lv]:
            mx, my = tail_origin(f.max_tail - 1 - (lv - first_tail))
            out.append((0, pitch, (mx << f.unit_x, my << f.unit_y)))
        else:
            out.append((off, pitch, None))
    return chain, out


def address_by_facts(
    f: ModeFacts,
    bpe_log2: int,
    width: int,
    height: int,
    levels: int,
    x,
    y,
    z,
    mip: int,
    pipe_bank_xor: int = 0,
) -> np.ndarray:
    """address() by the facts and the arithmetic frontend/image.py carries out in IR (a mode's
    pattern applied as parities of packed coordinates); equals address()."""
    u = np.uint64
    x, y, z = (np.asarray(v, np.uint64) for v in (x, y, z))
    chain, plan = level_plan(f, bpe_log2, width, height, levels)
    off, pitch, tail = plan[mip]
    if tail is not None:
        px, py, row, col = x + u(tail[0]), y + u(tail[1]), u(0), u(0)
    else:
        px, py, row, col = x, y, y >> u(f.bh), x >> u(f.bw)
    packed = (
        (px & u(0x7FF))
        | (py & u(0x7FF)) << u(COORD_BITS[0])
        | (z & u(0xFF)) << u(COORD_BITS[0] + COORD_BITS[1])
    )
    inner = np.zeros_like(packed)
    for i, m in enumerate(f.packed):
        bits = packed & u(m)
        par = np.array([bin(int(v)).count("1") & 1 for v in bits.ravel()], np.uint64).reshape(bits.shape)
        inner |= par << u(i)
    inner ^= u((pipe_bank_xor << 8) & f.xor_mask)
    index = row * u(pitch >> f.bw) + col
    return (z >> u(f.bd)) * u(chain << f.bd) + u(off) + (index << u(f.blk)) + inner
