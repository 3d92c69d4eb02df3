"""Register numbers reach every backend's state arrays (the native tier's by raw pointer): the IR
builder refuses one outside the register file instead of lowering it.  Fuzz programs seed 158
(gfx1010) made a vget of v-11, which the native driver's register clearing wrote 768 bytes below
its VGPR array with (a crash under g++, silent heap corruption under clang++)."""

import pytest

from wavelift.errors import Refused
from wavelift.ir.builder import Builder
from wavelift.ir.program import NUM_SREGS, NUM_VGPRS


@pytest.mark.parametrize("reg", [-11, -1, NUM_VGPRS, 1 << 32])
def test_vgpr_outside_the_file_is_refused(reg):
    b = Builder([0], 32)
    with pytest.raises(Refused) as e:
        b.vget(reg)
    assert e.value.refusal.code == "program.unsupported_instruction"
    with pytest.raises(Refused):
        b.vset(reg, b.vget(0))


@pytest.mark.parametrize("reg", [-1, NUM_SREGS])
def test_sgpr_outside_the_file_is_refused(reg):
    b = Builder([0], 32)
    with pytest.raises(Refused):
        b.sget(reg)
    with pytest.raises(Refused):
        b.sset(reg, b.sget(0))


def test_the_whole_file_is_allowed():
    b = Builder([0], 32)
    b.vset(NUM_VGPRS - 1, b.vget(0))
    b.sset(NUM_SREGS - 1, b.sget(0))
    assert b.max_vgpr == NUM_VGPRS - 1
