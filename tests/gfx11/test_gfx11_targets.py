"""The GFX11 targets besides gfx1100 run with gfx1100's semantics (decision 0023, amended): their
clang-19 fixtures (tests/fixtures/<gfx>/, `tools/build_fixtures.sh clang11x`) land equal to the
gfx1030 fixtures' references (PoCL, NumPy) in wave and lane mode, wave32 and wave64, -O0 and -O2.
The default run takes -O2 wave32 in wave mode and -O2 wave64 in lane mode; `-m slow` runs the whole matrix."""

from __future__ import annotations

import clang_targets as CT
import pytest

from wavelift.isa.instruction import GFX11_RUN, RUN_TARGETS

OTHERS = tuple(t for t in GFX11_RUN if t != "gfx1100")


def test_the_gfx11_targets_run():
    assert OTHERS == ("gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152")
    assert set(GFX11_RUN) <= set(RUN_TARGETS)


@pytest.mark.parametrize("target", OTHERS)
def test_every_binary_is_logged_and_present(target):
    CT.check_logged(target)


@pytest.mark.parametrize("target", OTHERS)
def test_code_object_names_its_target(target):
    import wavelift

    for b in CT.rows(target):
        dev = wavelift.Device(target)
        co = dev.load_code_object(str(CT.ROOT / b["path"]))
        assert co.code_object.target == target


@pytest.mark.parametrize(
    "target,path,kname,shape,mode", list(CT.params(OTHERS, {("O2", 32, "wave"), ("O2", 64, "lane")}))
)
def test_gfx11_target_fixture_kernel(target, path, kname, shape, mode):
    CT.check(target, path, kname, shape, mode)


@pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py): a small subset
@pytest.mark.parametrize(
    "target,path,kname",
    [
        ("gfx1101", "tests/fixtures/gfx1101/basic-O2-w32.hsaco", "vadd"),
        ("gfx1150", "tests/fixtures/gfx1150/stack-O2-w32.hsaco", "call"),
    ],
)
def test_gfx11_target_fixture_kernel_tiers(target, path, kname):
    CT.check(target, path, kname, "small", "wave")
