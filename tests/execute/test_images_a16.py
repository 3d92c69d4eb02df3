"""a16 storage image load/store (frontend/image.py, decision 0034's 2026-12-05 section): 16-bit
integer coordinates two a VGPR, low half first, as ACO emits them for GLSL imageLoad/imageStore
at 16-bit coordinates (tools/aco_compile on navi21: ``image_load ... a16``, ``image_store ...
a16 d16``).  The same r32f image as test_images.py, coordinates in range, past the width, and
at 16-bit values at or above 0x8000 (negative as i16: out of range whether the hardware widens
them with or without sign); a NumPy reference of what lands and what is read."""

import numpy as np
import pytest
from harness import Rig, ptr
from nvrtc_check import check_cuda_kernels
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
    from wavelift.frontend.program import translate

    check_cuda_kernels([translate(Rig(src).code, "gfx1030", 32, 0x1000) for src in (LOAD_STORE, MIP)])


# ---- GLSL at 16-bit coordinates, compiled by ACO, through our driver ---------------------------
ACO_SHADER = """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0, r32ui) uniform readonly uimage2D src;
layout(set = 0, binding = 1, r32ui) uniform writeonly uimage2D dst;
layout(set = 0, binding = 2) buffer P { i16vec2 p[]; } pin;  // 64 load, then 64 store coords
layout(set = 0, binding = 3) buffer O { uint v[]; } o;
void main() {
  uint i = gl_GlobalInvocationID.x;
  o.v[i] = imageLoad(src, ivec2(pin.p[i])).x;
  imageStore(dst, ivec2(pin.p[64u + i]), uvec4(i + 1u));
}
"""
AW, AH, APITCH = 16, 8, 64  # texels; rows 256 bytes apart (r32ui, linear)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize(
    "family,wave,mode", [("navi21", 32, "wave"), ("navi21", 32, "lane"), ("navi10", 64, "wave")]
)
def test_aco_a16_image_load_store_equals_numpy(family, wave, mode, tier, tmp_path):
    import subprocess

    from testpaths import ROOT

    import wavelift
    from wavelift.driver.aco import Image

    src = tmp_path / "a16.comp"
    src.write_text(ACO_SHADER)
    out = tmp_path / "a16"
    cmd = [str(ROOT / "tools/aco_compile/aco-compile"), str(src), "-o", str(out), "--family", family]
    p = subprocess.run([*cmd, f"--wave{wave}", "-q"], capture_output=True, text=True)
    if p.returncode == 3:
        pytest.skip("aco-compile: " + (p.stdout + p.stderr)[-200:])
    assert p.returncode == 0, p.stdout + p.stderr
    asm = [ln for ln in (tmp_path / "a16.s").read_text().splitlines() if "image_" in ln]
    assert any("image_load" in ln and "a16" in ln for ln in asm), asm
    assert any("image_store" in ln and "a16" in ln for ln in asm), asm
    rng = np.random.default_rng(wave + (mode == "lane"))
    ld = np.stack([rng.integers(-3, AW + 3, 64), rng.integers(-3, AH + 3, 64)], 1)
    cells = rng.permutation(AW * AH)[:48]  # distinct texels in range, and 16 outside
    st = np.concatenate(
        [
            np.stack([cells % AW, cells // AW], 1),
            np.stack([rng.integers(AW, 300, 16), rng.integers(-5, AH, 16)], 1),
        ]
    )
    st = st[rng.permutation(64)]
    coords = np.concatenate([ld, st]).astype(np.int16)
    dev = wavelift.Device({"navi21": "gfx1030", "navi10": "gfx1010"}[family], backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(out) + ".json")
    src_img = rng.integers(0, 2**32, (AH, APITCH), dtype=np.uint64).astype(np.uint32)
    dst_img = rng.integers(0, 2**32, (AH, APITCH), dtype=np.uint64).astype(np.uint32)
    bs, bd = dev.upload(src_img), dev.upload(dst_img)
    bp, bo = dev.upload(coords), dev.upload(np.full(64, 7, np.uint32))
    r = sh.launch(
        groups=(1, 1, 1),
        buffers={(0, 2): bp, (0, 3): bo},
        images={(0, 0): Image(bs, AW, AH, "r32ui"), (0, 1): Image(bd, AW, AH, "r32ui")},
    )
    assert r.landed, r.refusal
    x, y = ld[:, 0], ld[:, 1]
    inside = (x >= 0) & (x < AW) & (y >= 0) & (y < AH)
    want = np.where(inside, src_img[np.clip(y, 0, AH - 1), np.clip(x, 0, AW - 1)], 0)
    np.testing.assert_array_equal(dev.download(bo, np.uint32), want)
    exp = dst_img.copy()
    sx, sy = st[:, 0], st[:, 1]
    ins = (sx >= 0) & (sx < AW) & (sy >= 0) & (sy < AH)
    exp[sy[ins], sx[ins]] = (np.arange(64) + 1)[ins]
    np.testing.assert_array_equal(dev.download(bd, np.uint32).reshape(AH, APITCH), exp)
