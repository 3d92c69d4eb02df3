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


DPP_SGPR = """
  v_lshlrev_b32 v10, 2, v0
  v_cvt_f32_u32 v2, v0
  v_mov_b32 v1, -1.0
  s_mov_b32 s3, 0.5
  v_add_f32_e64_dpp v1, v2, s3 row_shl:1 row_mask:0xf bank_mask:0xf
  global_store_b32 v10, v1, s[0:1]
  s_endpgm
"""


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_gfx1150_dpp_with_an_sgpr_src1(mode):
    """gfx1150's FeatureDPPSrc1SGPR: llvm-mc-19 assembles an SGPR src1 in VOP3 DPP for gfx1150
    (not for gfx1100); lane i adds s3 to lane i+1's v2 within its row of 16 (row_shl:1), and the
    row's last lane, whose source is outside the row, keeps v1 (bound_ctrl off)."""
    import pathlib
    import sys

    import numpy as np

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "execute"))
    from asm import HAVE_MC, assemble
    from harness import Rig, ptr

    if not HAVE_MC:
        pytest.skip("llvm-mc-19 not installed")
    r = Rig("s_endpgm")
    r.target = "gfx1150"
    r.code = assemble(DPP_SGPR, False, mcpu="gfx1150")
    r.prog = r.mem.alloc(len(r.code) + 256, name="code1150", data=r.code + b"\0" * 256)
    out = r.buf(np.zeros(32, np.float32), "out")
    res = r.run(r.config(user_sgprs=ptr(out), tgid=(False, False, False)), mode=mode)
    assert res.landed, res.refusal
    i = np.arange(32)
    want = np.where(i % 16 < 15, (i + 1) + 0.5, -1.0).astype(np.float32)
    np.testing.assert_array_equal(r.read(out, np.float32, 32), want)
