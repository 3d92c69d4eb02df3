"""Cross-lane source selection: DPP16, DPP8, v_permlane16/x16, ds_swizzle — as IR on lane ids."""

from __future__ import annotations

from ..ir.builder import Builder
from .common import C, unsupported


def _and(b, x, m):
    return b.bin("and", "u32", x, C(b, "u32", m))


def dpp16_source(b: Builder, ctrl: int, fi: int = 0):
    """(source lane, valid) for DPP16 control ``ctrl`` (GFX10 set)."""
    lane = b.lane_id()
    row = _and(b, lane, ~15 & 0xFFFFFFFF)
    i = _and(b, lane, 15)
    true = b.cmp("eq", "u32", lane, lane)
    if ctrl <= 0xFF:
        sel = [(ctrl >> (2 * k)) & 3 for k in range(4)]
        q = _and(b, lane, 3)
        s = C(b, "u32", sel[3])
        for k in (2, 1, 0):
            s = b.select(b.cmp("eq", "u32", q, C(b, "u32", k)), C(b, "u32", sel[k]), s)
        return b.bin("or", "u32", _and(b, lane, ~3 & 0xFFFFFFFF), s), true
    n = ctrl & 15
    if 0x101 <= ctrl <= 0x10F:  # row_shl: lane i reads i + n
        src = b.bin("add", "u32", lane, C(b, "u32", n))
        return src, b.cmp("le", "u32", b.bin("add", "u32", i, C(b, "u32", n)), C(b, "u32", 15))
    if 0x111 <= ctrl <= 0x11F:  # row_shr: lane i reads i - n
        src = b.bin("sub", "u32", lane, C(b, "u32", n))
        return src, b.cmp("ge", "u32", i, C(b, "u32", n))
    if 0x121 <= ctrl <= 0x12F:  # row_ror: lane i reads (i - n) mod 16
        return b.bin("or", "u32", row, _and(b, b.bin("sub", "u32", i, C(b, "u32", n)), 15)), true
    if ctrl == 0x140:  # row_mirror
        return b.bin("or", "u32", row, b.bin("sub", "u32", C(b, "u32", 15), i)), true
    if ctrl == 0x141:  # row_half_mirror
        return b.bin(
            "or", "u32", _and(b, lane, ~7 & 0xFFFFFFFF), b.bin("sub", "u32", C(b, "u32", 7), _and(b, lane, 7))
        ), true
    if 0x150 <= ctrl <= 0x15F:  # row_share
        return b.bin("or", "u32", row, C(b, "u32", n)), true
    if 0x160 <= ctrl <= 0x16F:  # row_xmask
        return b.bin("or", "u32", row, b.bin("xor", "u32", i, C(b, "u32", n))), true
    unsupported(f"DPP control {ctrl:#x}")


def dpp8_source(b: Builder, sel: int):
    lane = b.lane_id()
    g = _and(b, lane, 7)
    s = C(b, "u32", (sel >> 21) & 7)
    for k in range(6, -1, -1):
        s = b.select(b.cmp("eq", "u32", g, C(b, "u32", k)), C(b, "u32", (sel >> (3 * k)) & 7), s)
    return b.bin("or", "u32", _and(b, lane, ~7 & 0xFFFFFFFF), s), b.cmp("eq", "u32", lane, lane)


def dpp_row_bank_mask(b: Builder, row_mask: int, bank_mask: int):
    lane = b.lane_id()
    row = b.bin("shr", "u32", lane, C(b, "u32", 4))
    bank = _and(b, b.bin("shr", "u32", lane, C(b, "u32", 2)), 3)
    rbit = _and(b, b.bin("shr", "u32", C(b, "u32", row_mask), row), 1)
    bbit = _and(b, b.bin("shr", "u32", C(b, "u32", bank_mask), bank), 1)
    return b.cmp("ne", "u32", b.bin("and", "u32", rbit, bbit), C(b, "u32", 0))


def permlane_source(b: Builder, s1, s2, cross: bool):
    """v_permlane16 (within each row of 16) / v_permlanex16 (from the other row of the pair)."""
    lane = b.lane_id()
    i = _and(b, lane, 15)
    word = b.select(b.cmp("lt", "u32", i, C(b, "u32", 8)), s1, s2)
    sh = b.bin("shl", "u32", _and(b, i, 7), C(b, "u32", 2))
    nib = _and(b, b.bin("shr", "u32", word, sh), 15)
    row = _and(b, lane, ~15 & 0xFFFFFFFF)
    if cross:
        row = b.bin("xor", "u32", row, C(b, "u32", 16))
    return b.bin("or", "u32", row, nib)


def swizzle_source(b: Builder, offset: int):
    """ds_swizzle_b32 offset:N -> (source lane, valid)."""
    lane = b.lane_id()
    true = b.cmp("eq", "u32", lane, lane)
    if offset & 0x8000:  # quad-perm mode over groups of 4
        sel = [(offset >> (2 * k)) & 3 for k in range(4)]
        q = _and(b, lane, 3)
        s = C(b, "u32", sel[3])
        for k in (2, 1, 0):
            s = b.select(b.cmp("eq", "u32", q, C(b, "u32", k)), C(b, "u32", sel[k]), s)
        return b.bin("or", "u32", _and(b, lane, ~3 & 0xFFFFFFFF), s), true
    and_m, or_m, xor_m = offset & 0x1F, (offset >> 5) & 0x1F, (offset >> 10) & 0x1F
    g = _and(b, lane, 0x1F)
    s = b.bin("xor", "u32", b.bin("or", "u32", _and(b, g, and_m), C(b, "u32", or_m)), C(b, "u32", xor_m))
    return b.bin("or", "u32", _and(b, lane, ~0x1F & 0xFFFFFFFF), _and(b, s, 0x1F)), true
