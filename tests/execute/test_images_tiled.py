"""image_load / image_store on tiled 2-D images (frontend/image.py through a real dispatch): every
swizzle mode wavelift lays out, on GFX10 (gfx1010) and GFX10.3 (gfx1030, RB+ patterns), for a
32_UINT and an 8_8_8_8_UNORM image larger than one 64 KiB block in each direction.

The expected memory comes from a NumPy model of the same image: every texel placed at the byte
offset wavelift/memory/layout.py gives (checked against Mesa's addrlib in
tests/memory/test_layout.py), the padding between and after them filled with other values.  The
program reads every texel (out-of-range ones read 0) and writes a new value to each."""

from __future__ import annotations

import numpy as np
import pytest
from harness import Rig, ptr

from wavelift.frontend.image import TILED_2D
from wavelift.memory import layout as L

# wave64, 8x8 texels a workgroup: x = tgid.x * 8 + lane % 8, y = tgid.y * 8 + lane / 8
PROG = """
  s_lshl_b32 s13, s11, 3
  s_lshl_b32 s14, s12, 3
  v_and_b32 v1, 7, v0
  v_add_nc_u32 v1, s13, v1
  v_lshrrev_b32 v2, 3, v0
  v_add_nc_u32 v2, s14, v2
  image_load v3, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm
  s_waitcnt vmcnt(0)
  v_mul_u32_u24 v4, s10, v2
  v_add_nc_u32 v4, v4, v1
  v_lshlrev_b32 v4, 2, v4
  global_store_dword v4, v3, s[8:9]
  v_xor_b32 v5, 0x5a5a0000, v4
  image_store v5, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm
  s_endpgm
"""
# the same coordinates; every channel of an 8_8_8_8_UNORM texel to out[y * OUTW + x] (16 bytes)
PROG_RGBA8 = """
  s_lshl_b32 s13, s11, 3
  s_lshl_b32 s14, s12, 3
  v_and_b32 v1, 7, v0
  v_add_nc_u32 v1, s13, v1
  v_lshrrev_b32 v2, 3, v0
  v_add_nc_u32 v2, s14, v2
  image_load v[20:23], v[1:2], s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm
  s_waitcnt vmcnt(0)
  v_mul_u32_u24 v4, s10, v2
  v_add_nc_u32 v4, v4, v1
  v_lshlrev_b32 v4, 4, v4
  global_store_dwordx4 v4, v[20:23], s[8:9]
  s_endpgm
"""
W, H = 136, 132  # past one 64 KiB block (128 x 128 texels of 4 bytes) in both directions
GROUPS = (W // 8 + 2, H // 8 + 2)  # and a band of out-of-range texels
OUTW = GROUPS[0] * 8
FMT_R32UI = 20


def tsharp(addr, w, h, fmt, sw_mode):
    d3 = 4 | 5 << 3 | 6 << 6 | 7 << 9 | sw_mode << 20 | 9 << 28
    return [
        (addr >> 8) & 0xFFFFFFFF,
        ((addr >> 40) & 0xFF) | (fmt << 20) | (((w - 1) & 3) << 30),
        ((w - 1) >> 2) | ((h - 1) << 14) | (1 << 31),
        d3,
        0,
        0,
        0,
        0,
    ]


def _model(target, mode):
    chip = L.Chip(target.startswith("gfx103"), 0)
    s = L.Surface(mode, L.RSRC_2D, 2, W, H)
    info = L.surface_info(s, chip)
    size = info.slice_size
    y, x = np.mgrid[0:H, 0:W]
    offs = L.address(chip, s, x.ravel(), y.ravel(), 0).astype(np.int64)
    assert len(np.unique(offs)) == offs.size and offs.max() + 4 <= size
    return size, x.ravel(), y.ravel(), offs


@pytest.mark.parametrize("target", ["gfx1030", "gfx1010"])
@pytest.mark.parametrize("mode", TILED_2D, ids=[L.sw_mode_names()[m] for m in TILED_2D])
def test_tiled_load_store_r32ui(target, mode):
    size, xs, ys, offs = _model(target, mode)
    rng = np.random.default_rng(mode)
    mem = rng.integers(0, 2**32, size // 4, dtype=np.uint64).astype(np.uint32)  # padding: noise
    r = Rig(PROG, wave64=True, target=target)
    a = r.mem.alloc(size, name="img", align=65536, data=mem.tobytes())
    out = r.buf(np.full(OUTW * GROUPS[1] * 8, 7, np.uint32), "out")
    sg = tsharp(a, W, H, FMT_R32UI, mode) + list(ptr(out)) + [OUTW]
    res = r.run(r.config(user_sgprs=sg, groups=(*GROUPS, 1), block=(64, 1, 1), tgid=(True, True, False)))
    assert res.landed, res.refusal
    want = np.zeros((GROUPS[1] * 8, OUTW), np.uint32)
    want[ys, xs] = mem[offs // 4]
    np.testing.assert_array_equal(r.read(out, np.uint32, want.size).reshape(want.shape), want)
    exp = mem.copy()
    exp[offs // 4] = ((ys * OUTW + xs) * 4).astype(np.uint32) ^ np.uint32(0x5A5A0000)
    np.testing.assert_array_equal(r.read(a, np.uint32, size // 4), exp)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_tiled_rgba8_load_64kb_d_every_tier():
    """8_8_8_8_UNORM through a 64KB_D image (RB+ pattern), every channel, on every tier."""
    mode = next(m for m in TILED_2D if L.sw_mode_names()[m] == "64KB_D")
    size, xs, ys, offs = _model("gfx1030", mode)
    rng = np.random.default_rng(5)
    mem = rng.integers(0, 256, size, dtype=np.uint8)
    r = Rig(PROG_RGBA8, wave64=True, target="gfx1030")
    a = r.mem.alloc(size, name="img", align=65536, data=mem.tobytes())
    out = r.buf(np.full(OUTW * GROUPS[1] * 8 * 4, 7, np.uint32), "out")
    sg = tsharp(a, W, H, 56, mode) + list(ptr(out)) + [OUTW]
    res = r.run(r.config(user_sgprs=sg, groups=(*GROUPS, 1), block=(64, 1, 1), tgid=(True, True, False)))
    assert res.landed, res.refusal
    texels = mem[offs[:, None] + np.arange(4)].astype(np.float32) / np.float32(255)
    want = np.zeros((GROUPS[1] * 8, OUTW, 4), np.float32)
    want[ys, xs] = texels
    got = r.read(out, np.float32, want.size).reshape(want.shape)
    np.testing.assert_array_equal(got, want)


def test_tiled_lane_mode():
    """Lane mode (one invocation a lane) lays out the same: 4KB_S on gfx1030."""
    mode = next(m for m in TILED_2D if L.sw_mode_names()[m] == "4KB_S")
    size, xs, ys, offs = _model("gfx1030", mode)
    mem = np.random.default_rng(9).integers(0, 2**32, size // 4, dtype=np.uint64).astype(np.uint32)
    r = Rig(PROG, wave64=True, target="gfx1030")
    a = r.mem.alloc(size, name="img", align=65536, data=mem.tobytes())
    out = r.buf(np.full(OUTW * GROUPS[1] * 8, 7, np.uint32), "out")
    sg = tsharp(a, W, H, FMT_R32UI, mode) + list(ptr(out)) + [OUTW]
    cfg = r.config(user_sgprs=sg, groups=(*GROUPS, 1), block=(64, 1, 1), tgid=(True, True, False))
    res = r.run(cfg, mode="lane")
    assert res.landed, res.refusal
    want = np.zeros((GROUPS[1] * 8, OUTW), np.uint32)
    want[ys, xs] = mem[offs // 4]
    np.testing.assert_array_equal(r.read(out, np.uint32, want.size).reshape(want.shape), want)
    exp = mem.copy()
    exp[offs // 4] = ((ys * OUTW + xs) * 4).astype(np.uint32) ^ np.uint32(0x5A5A0000)
    np.testing.assert_array_equal(r.read(a, np.uint32, size // 4), exp)
