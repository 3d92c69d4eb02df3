"""a16 storage image load/store (frontend/image.py, decision 0034's 2026-12-05 section): 16-bit
integer coordinates two a VGPR, low half first, as ACO emits them for GLSL imageLoad/imageStore
at 16-bit coordinates (tools/aco_compile on navi21: ``image_load ... a16``, ``image_store ...
a16 d16``).  The same r32f image as test_images.py, coordinates in range, past the width, and
at 16-bit values at or above 0x8000 (negative as i16: out of range whether the hardware widens
them with or without sign); a NumPy reference of what lands and what is read."""

import numpy as np
import pytest
from harness import Rig, ptr
from test_images import PITCH, H, W, _image, tsharp

# x16 = lane & 3, or 0xFFFC + (lane & 3) where lane & 4; y = lane >> 3 in the upper half
PROLOGUE = """
  v_and_b32 v6, 4, v0
  v_mul_u32_u24 v6, 0x3fff, v6
  v_and_b32 v1, 3, v0
  v_or_b32 v1, v1, v6
  v_lshrrev_b32 v2, 3, v0
  v_lshlrev_b32 v2, 16, v2
  v_or_b32 v1, v1, v2
  v_mov_b32 v2, 0xabcd0000
"""
LOAD_STORE = (
    PROLOGUE
    + """
  image_load v3, v1, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm a16
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v4, 2, v0
  global_store_dword v4, v3, s[8:9]
  v_cvt_f32_u32 v5, v0
  image_store v5, v1, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm a16
  s_endpgm
"""
)
# _mip: (x, y) in v1, the level (0) in v2's low half; v2's upper half is the unused half
MIP = (
    PROLOGUE
    + """
  image_load_mip v3, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm a16
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v4, 2, v0
  global_store_dword v4, v3, s[8:9]
  v_cvt_f32_u32 v5, v0
  image_store_mip v5, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm a16
  s_endpgm
"""
)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("prog", ["load_store", "mip"])
@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_a16_load_store_equals_numpy(prog, mode, tier):
    r = Rig(LOAD_STORE if prog == "load_store" else MIP)
    img, a = _image(r)
    out = r.buf(np.full(32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=tsharp(a, W, H) + list(ptr(out)), tgid=(False,) * 3), mode=mode)
    assert res.landed, res.refusal
    lane = np.arange(32)
    x, y = lane & 3, lane >> 3
    inside = ((lane & 4) == 0) & (y < H)
    want = np.where(inside, img[np.minimum(y, H - 1), x], 0).astype(np.float32)
    np.testing.assert_array_equal(r.read(out, np.float32, 32), want)
    got = r.read(a, np.float32, H * PITCH).reshape(H, PITCH)
    exp = np.zeros((H, PITCH), np.float32)
    exp[y[inside], x[inside]] = lane[inside]
    np.testing.assert_array_equal(got, exp)


def test_a16_atomics_and_resinfo_still_refuse():
    for line in (
        "image_atomic_add v3, v1, s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm glc a16",
        "image_get_resinfo v[3:6], v1, s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm a16",
    ):
        r = Rig(PROLOGUE + line + "\n  s_endpgm\n")
        img, a = _image(r)
        res = r.run(r.config(user_sgprs=tsharp(a, W, H) + [0, 0], tgid=(False,) * 3))
        assert res.refusal is not None and res.refusal.code == "program.unsupported_instruction", line


def test_odd_d16_load_still_refuses():
    r = Rig(
        PROLOGUE + "  image_load v[3:4], v1, s[0:7] dmask:0x7 dim:SQ_RSRC_IMG_2D unorm a16 d16\n  s_endpgm\n"
    )
    img, a = _image(r)
    res = r.run(r.config(user_sgprs=tsharp(a, W, H) + [0, 0], tgid=(False,) * 3))
    assert res.refusal is not None and res.refusal.code == "program.unsupported_instruction"


def test_cuda_kernels_of_a16_image_access_compile():
    from wavelift.backends.cuda.codegen import generate, kernel_source
    from wavelift.backends.cuda.compile import check_source, nvrtc_problem
    from wavelift.frontend.program import translate

    why = nvrtc_problem()
    for src in (LOAD_STORE, MIP):
        prog = translate(Rig(src).code, "gfx1030", 32, 0x1000)
        for m in ("lane", "wave"):
            kernel_source(prog, 32, m, 0, 0x1000)
            if why is None:
                check_source(generate(prog, 32, m, 0, 0x1000)[0], "sm_90")
    if why:
        pytest.skip(f"generated; NVRTC unavailable: {why}")
