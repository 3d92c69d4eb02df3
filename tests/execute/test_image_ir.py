"""The size of the IR frontend/image.py emits for texel addressing (decision 0021, amended for
issue 22's speed debt): what is per lane, and that the per-coordinate terms are shared between
addresses of one T# (a sample's footprint: four texels on two columns and two rows).  The
addresses themselves are held equal to layout.address (and so to addrlib) by
test_images_layouts.py, test_images_layouts_aco.py and the sampling tests."""

from __future__ import annotations

import pytest

from wavelift.frontend import image as I
from wavelift.ir.builder import Builder
from wavelift.ir.passes.pipeline import optimize
from wavelift.ir.program import Block

CHIPS = [("gfx1030", 0x444), ("gfx1030", None), ("gfx1010", 0x00100044)]


def _lane_ops(target, gb, dim, coords, mip=False):
    """Per-lane ops after the passes of describe + one texel_address per coordinate tuple
    (indices of VGPRs; equal indices are one value), the addresses kept live."""
    b = Builder([0], 32)
    b.target, b.gb_addr_config, b.instr = target, gb, 0
    img = I.describe(b, [b.sget(j) for j in range(8)], dim)
    regs: dict[int, object] = {}
    k = 40
    for c in coords:
        xy = [regs.setdefault(r, b.vget(r)) for r in c]
        addr, inb = I.texel_address(b, img, xy, b.vget(30) if mip else None)
        b.vset(k, b.cvt("u32", addr))
        b.vset(k + 1, b.cvt("u32", b.bin("shr", "u64", addr, b.const("u64", 32))))
        b.vset(k + 2, b.select(inb, b.const("u32", 1), b.const("u32", 0)))
        k += 3
    blk = Block(0, 0)
    blk.ops, blk.term = b.ops, ("end",)
    return sum(1 for op in optimize(blk, 0, 32).ops if op.out is not None and not op.out.uniform)


@pytest.mark.parametrize("target,gb", CHIPS)
def test_per_lane_work_is_the_coordinates_terms(target, gb):
    """One 2-D texel address at a uniform level: the pattern's columns of each coordinate bit
    (at most 4 ops a bit: 11 x and 11 y bits), the block row and column, the bounds; the
    level chain, the mode's facts and the mip tail are uniform."""
    n = _lane_ops(target, gb, I.DIM_2D, [(0, 1)])
    assert n <= 4 * 22 + 30, n
    assert _lane_ops(target, gb, I.DIM_1D, [(0,)]) <= 4 * 11 + 25


@pytest.mark.parametrize("target,gb", CHIPS)
def test_footprint_shares_coordinate_terms(target, gb):
    """Four texels on two columns and two rows (a bilinear footprint or a gather) cost about
    two single addresses: each coordinate's terms once, a few ops to combine per texel."""
    one = _lane_ops(target, gb, I.DIM_2D, [(0, 2)])
    four = _lane_ops(target, gb, I.DIM_2D, [(0, 2), (1, 2), (0, 3), (1, 3)])
    assert four <= 2 * one + 4 * 8, (one, four)
