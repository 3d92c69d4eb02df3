"""GFX12 code runs (decision 0027): the clang-19 fixtures for gfx1200 and gfx1201
(tests/fixtures/<gfx>/, `tools/build_fixtures.sh clang11x`) land equal to the gfx1030 fixtures'
references (PoCL, NumPy) in wave and lane mode, wave32 and wave64, -O0 and -O2.  The default run
takes -O2 wave32 in wave mode and -O2 wave64 in lane mode; `-m slow` runs the whole
matrix."""

from __future__ import annotations

import clang_targets as CT
import pytest

from wavelift.isa.instruction import GFX12_RUN, RUN_TARGETS


def test_the_gfx12_targets_run():
    assert GFX12_RUN == ("gfx1200", "gfx1201")
    assert set(GFX12_RUN) <= set(RUN_TARGETS)


@pytest.mark.parametrize("target", GFX12_RUN)
def test_every_binary_is_logged_and_present(target):
    CT.check_logged(target)


@pytest.mark.parametrize(
    "target,path,kname,shape,mode", list(CT.params(GFX12_RUN, {("O2", 32, "wave"), ("O2", 64, "lane")}))
)
def test_gfx12_fixture_kernel(target, path, kname, shape, mode):
    CT.check(target, path, kname, shape, mode)


TIERS = (
    ("gfx1200", "tests/fixtures/gfx1200/basic-O2-w32.hsaco", "vadd"),
    ("gfx1200", "tests/fixtures/gfx1200/basic-O2-w32.hsaco", "lds_reduce"),
    ("gfx1201", "tests/fixtures/gfx1201/stack-O2-w32.hsaco", "call"),
)


@pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py): TTMP ids, barrier, calls
@pytest.mark.parametrize("target,path,kname", TIERS)
def test_gfx12_fixture_kernel_tiers(target, path, kname):
    CT.check(target, path, kname, "small", "wave")
