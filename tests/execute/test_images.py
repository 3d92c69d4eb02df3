"""MIMG storage image load/store (translate/image.py) on hand-built T#s: linear 2-D r32f image,
out-of-range coordinates read 0 / drop stores, null descriptors; and the runtime refusals of
forms translated only for null descriptors (buffer format loads in range)."""
import numpy as np
import pytest

from harness import Rig, ptr

pytestmark = pytest.mark.tiers     # NumPy blocks and the native tier (tests/conftest.py)

PROG = """
  v_and_b32 v1, 7, v0
  v_lshrrev_b32 v2, 3, v0
  image_load v3, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v4, 2, v0
  global_store_dword v4, v3, s[8:9]
  v_cvt_f32_u32 v5, v0
  image_store v5, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm
  s_endpgm
"""
W, H = 4, 3


def tsharp(addr, w, h, fmt=22):
    return [(addr >> 8) & 0xFFFFFFFF, ((addr >> 40) & 0xFF) | (fmt << 20) | (((w - 1) & 3) << 30),
            ((w - 1) >> 2) | ((h - 1) << 14) | (1 << 31), 4 | 5 << 3 | 6 << 6 | 7 << 9 | 9 << 28,
            0, 0, 0, 0]


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_image_load_store_r32f_with_edges(mode):
    r = Rig(PROG)
    img = (np.arange(W * H, dtype=np.float32) + 0.5)
    a = r.mem.alloc(256 * 4, name="img", align=256, data=np.pad(img, (0, 256 - W * H)).tobytes())
    out = r.buf(np.full(32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=tsharp(a, W, H) + list(ptr(out)), tgid=(False,) * 3), mode=mode)
    assert res.landed, res.refusal
    lane = np.arange(32)
    x, y = lane & 7, lane >> 3
    inside = (x < W) & (y < H)
    want = np.where(inside, img[np.minimum(y * W + x, W * H - 1)], 0).astype(np.float32)
    np.testing.assert_array_equal(r.read(out, np.float32, 32), want)
    got = r.read(a, np.float32, W * H + 4)
    exp = np.zeros(W * H, np.float32)
    exp[(y * W + x)[inside]] = lane[inside]
    np.testing.assert_array_equal(got[:W * H], exp)
    assert (got[W * H:] == 0).all()                        # nothing past the image


def test_null_descriptor_reads_zero_and_drops_stores():
    r = Rig(PROG)
    out = r.buf(np.full(32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=[0] * 8 + list(ptr(out)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    assert (r.read(out, np.uint32, 32) == 0).all()
    assert res.write_spans == [(out, 128)]


FMT = """
  buffer_load_format_x v1, v0, s[0:3], 0 idxen
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v4, 2, v0
  global_store_dword v4, v1, s[4:5]
  s_endpgm
"""


def test_buffer_format_load_null_reads_zero_in_range_refuses():
    r = Rig(FMT)
    data = r.buf(np.arange(64, dtype=np.uint32), "data")
    out = r.buf(np.full(32, 7, np.uint32), "out")
    null = [0, 0, 0, 0]
    res = r.run(r.config(user_sgprs=null + list(ptr(out)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    assert (r.read(out, np.uint32, 32) == 0).all()
    vs = [data & 0xFFFFFFFF, (data >> 32) | (4 << 16), 64, 0x31016FAC]
    res = r.run(r.config(user_sgprs=vs + list(ptr(out)), tgid=(False,) * 3))
    assert res.refusal is not None and res.refusal.code == "program.unsupported_instruction"
    assert "buffer_load_format_x" in res.refusal.message
    assert (r.read(out, np.uint32, 32) == 0).all()        # refused: nothing landed
