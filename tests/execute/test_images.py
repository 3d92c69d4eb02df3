"""MIMG storage image load/store (frontend/image.py) on hand-built T#s: linear 2-D r32f image
(rows 256 bytes apart, as addrlib lays out linear images), out-of-range coordinates read 0 / drop
stores, null descriptors; every T# not carried out exactly refuses by name (image.*) and changes
nothing; and the runtime refusals of forms translated only for null descriptors (buffer format
loads in range)."""

import numpy as np
import pytest
from harness import Rig, ptr

# tests marked `tiers` run on NumPy blocks and the native tier (tests/conftest.py); the T# checks
# are IR (frontend/image.py), so the full list of refused T#s runs once and one per code per tier

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
PITCH = 64  # texels: align(width, 256 bytes / 4 bytes per texel)


def tsharp(addr, w, h, fmt=22, sel=(4, 5, 6, 7), typ=9, sw_mode=0):
    d3 = sel[0] | sel[1] << 3 | sel[2] << 6 | sel[3] << 9 | sw_mode << 20 | typ << 28
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


def _image(r):
    img = np.zeros((H, PITCH), np.float32)
    img[:, :W] = np.arange(W * H, dtype=np.float32).reshape(H, W) + 0.5
    return img, r.mem.alloc(img.nbytes, name="img", align=256, data=img.tobytes())


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("sel", [(4, 5, 6, 7), (4, 0, 0, 1)], ids=["xyzw", "x001"])
@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_image_load_store_r32f_with_edges(mode, sel):
    _load_store(lambda a: tsharp(a, W, H, sel=sel), mode)


def _load_store(make_tsharp, mode="wave"):
    """PROG on the r32f image under the T# make_tsharp(address) gives: lands, loads in range
    (0 outside), stores in range and nothing between rows or past them."""
    r = Rig(PROG)
    img, a = _image(r)
    out = r.buf(np.full(32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=make_tsharp(a) + list(ptr(out)), tgid=(False,) * 3), mode=mode)
    assert res.landed, res.refusal
    lane = np.arange(32)
    x, y = lane & 7, lane >> 3
    inside = (x < W) & (y < H)
    want = np.where(inside, img[np.minimum(y, H - 1), np.minimum(x, W - 1)], 0).astype(np.float32)
    np.testing.assert_array_equal(r.read(out, np.float32, 32), want)
    got = r.read(a, np.float32, H * PITCH).reshape(H, PITCH)
    exp = np.zeros((H, PITCH), np.float32)
    exp[y[inside], x[inside]] = lane[inside]
    np.testing.assert_array_equal(got, exp)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_null_descriptor_reads_zero_and_drops_stores():
    r = Rig(PROG)
    out = r.buf(np.full(32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=[0] * 8 + list(ptr(out)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    assert (r.read(out, np.uint32, 32) == 0).all()
    assert res.write_spans == [(out, 128)]


def _set(words, k, lo, width, v):
    words = list(words)
    words[k] = (words[k] & ~(((1 << width) - 1) << lo)) | (v << lo)
    return words


# T#s that must refuse, each a change of the r32f image's T#: (id, code, change)
LAYOUT, FORMAT, DESC = (
    "image.unsupported_layout",
    "image.unsupported_format",
    "image.unsupported_descriptor",
)
REFUSED = [
    # tiled modes not laid out: _X/_T (pipe/bank XOR from GB_ADDR_CONFIG), GFX9-only and reserved
    # values, VAR blocks; a laid-out mode whose base is not aligned to its block
    # (tests/execute/test_images_tiled.py runs the modes that are laid out)
    ("sw_4kb_s_x", LAYOUT, lambda t: _set(t, 3, 20, 5, 21)),
    ("sw_64kb_r_x", LAYOUT, lambda t: _set(t, 3, 20, 5, 27)),
    ("sw_64kb_s_t", LAYOUT, lambda t: _set(t, 3, 20, 5, 17)),
    ("sw_256b_r", LAYOUT, lambda t: _set(t, 3, 20, 5, 3)),
    ("sw_64kb_z", LAYOUT, lambda t: _set(t, 3, 20, 5, 8)),
    ("sw_reserved_12", LAYOUT, lambda t: _set(t, 3, 20, 5, 12)),
    ("sw_var_r_x", LAYOUT, lambda t: _set(t, 3, 20, 5, 31)),
    ("sw_64kb_s_misaligned", LAYOUT, lambda t: _set(_set(t, 3, 20, 5, 9), 0, 0, 1, 1)),
    ("sw_4kb_d_misaligned", LAYOUT, lambda t: _set(_set(t, 3, 20, 5, 6), 0, 3, 1, 1)),
    ("dcc", LAYOUT, lambda t: _set(t, 6, 21, 1, 1)),
    ("write_compress", LAYOUT, lambda t: _set(t, 6, 20, 1, 1)),
    ("fmt_8_8_8_8_srgb", FORMAT, lambda t: _set(t, 1, 20, 9, 130)),
    ("fmt_8_srgb", FORMAT, lambda t: _set(t, 1, 20, 9, 128)),
    ("fmt_32_float_clamp", FORMAT, lambda t: _set(t, 1, 20, 9, 140)),
    ("fmt_bc1", FORMAT, lambda t: _set(t, 1, 20, 9, 169)),
    ("fmt_1_unorm", FORMAT, lambda t: _set(t, 1, 20, 9, 138)),
    ("fmt_32_32_32_float_buffer_only", FORMAT, lambda t: _set(t, 1, 20, 9, 74)),
    ("fmt_6e4_float", FORMAT, lambda t: _set(t, 1, 20, 9, 131)),
    ("fmt_fmask", FORMAT, lambda t: _set(t, 1, 20, 9, 156)),
    ("fmt_invalid", FORMAT, lambda t: _set(t, 1, 20, 9, 0)),
    ("fmt_511", FORMAT, lambda t: _set(t, 1, 20, 9, 511)),
    ("sel_reserved_2", FORMAT, lambda t: _set(t, 3, 0, 3, 2)),
    ("sel_w_reserved_3", FORMAT, lambda t: _set(t, 3, 9, 3, 3)),
    ("type_3d", DESC, lambda t: _set(t, 3, 28, 4, 10)),
    ("type_cube", DESC, lambda t: _set(t, 3, 28, 4, 11)),
    ("type_2d_array_base_past_depth", DESC, lambda t: _set(_set(t, 3, 28, 4, 13), 4, 16, 13, 1)),
    ("type_3d_base_array", DESC, lambda t: _set(_set(t, 3, 28, 4, 10), 4, 16, 13, 1)),
    ("type_2d_msaa", DESC, lambda t: _set(t, 3, 28, 4, 14)),
    ("type_1d_for_dim_2d", DESC, lambda t: _set(t, 3, 28, 4, 8)),
    ("type_reserved_1", DESC, lambda t: _set(t, 3, 28, 4, 1)),
    ("type_reserved_7", DESC, lambda t: _set(t, 3, 28, 4, 7)),
    ("base_level", DESC, lambda t: _set(t, 3, 12, 4, 1)),
    ("last_level", DESC, lambda t: _set(t, 3, 16, 4, 2)),
    ("last_level_past_max_mip", DESC, lambda t: _set(_set(t, 5, 4, 4, 2), 3, 16, 4, 3)),
    ("base_level_past_last", DESC, lambda t: _set(_set(_set(t, 5, 4, 4, 3), 3, 16, 4, 1), 3, 12, 4, 2)),
    ("min_lod", DESC, lambda t: _set(t, 1, 8, 12, 0x100)),
    ("custom_pitch", DESC, lambda t: _set(t, 4, 0, 13, 127)),
    ("pitch_msb", DESC, lambda t: _set(t, 4, 13, 1, 1)),
    ("base_array", DESC, lambda t: _set(t, 4, 16, 13, 1)),
    ("array_pitch", DESC, lambda t: _set(t, 5, 0, 4, 1)),
    ("resource_level_clear", DESC, lambda t: _set(t, 2, 31, 1, 0)),
    ("reserved_d1_29", DESC, lambda t: _set(t, 1, 29, 1, 1)),
    ("reserved_d2_12", DESC, lambda t: _set(t, 2, 12, 2, 1)),
    ("reserved_d2_28", DESC, lambda t: _set(t, 2, 28, 3, 4)),
    ("reserved_d5_27", DESC, lambda t: _set(t, 5, 27, 4, 8)),
    ("reserved_d6_8", DESC, lambda t: _set(t, 6, 8, 2, 1)),
]


@pytest.mark.parametrize("code,change", [(c, f) for _, c, f in REFUSED], ids=[i for i, _, _ in REFUSED])
def test_unsupported_tsharp_refuses_by_name(code, change):
    """Each T# the translation does not carry out exactly refuses (never a silent zero or a
    linear read of a tiled image) and lands nothing."""
    _refused(code, change)


FIRST_OF_EACH = {c: (i, f) for i, c, f in reversed(REFUSED)}


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("code", sorted(FIRST_OF_EACH))
def test_each_refusal_code_on_every_tier(code):
    _refused(code, FIRST_OF_EACH[code][1])


def _refused(code, change):
    r = Rig(PROG)
    img, a = _image(r)
    out = r.buf(np.full(32, 7, np.uint32), "out")
    t = change(tsharp(a, W, H))
    res = r.run(r.config(user_sgprs=t + list(ptr(out)), tgid=(False,) * 3))
    assert res.refusal is not None and res.refusal.code == code, res.refusal
    assert "image_load" in res.refusal.message  # the first image instruction
    assert (r.read(out, np.uint32, 32) == 7).all()
    np.testing.assert_array_equal(r.read(a, np.float32, H * PITCH).reshape(H, PITCH), img)


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_hint_fields_are_ignored():
    """Fields with no effect on an uncompressed storage load/store (BC_SWIZZLE, PERF_MOD and
    the other dword-5 hints, counter bank, DCC block sizes and metadata address without
    compression) do not refuse, and the result is the plain one."""

    def hints(a):
        t = tsharp(a, W, H)
        t = _set(t, 3, 25, 3, 5)  # BC_SWIZZLE
        t = _set(t, 5, 8, 19, 0x7FFFF)  # MID_LOD_WARN .. PRT_DEFAULT
        t = _set(t, 5, 31, 1, 1)  # BIG_PAGE
        t = _set(_set(t, 6, 0, 8, 0xA5), 6, 10, 1, 1)  # COUNTER_BANK_ID, ITERATE_256
        t = _set(_set(t, 6, 15, 5, 0x1F), 6, 22, 10, 0x3FF)  # block sizes .. META_DATA_ADDRESS
        t[7] = 0xDEADBEEF  # META_DATA_ADDRESS_HI
        return t

    _load_store(hints)


def test_tiled_tsharp_no_active_lane_lands():
    """The refusal needs an active lane using the T#: with EXEC clear around the image
    instructions the dispatch lands (the exec term is IR: one tier shows it)."""
    r = Rig("""
      s_mov_b32 s20, exec_lo
      s_mov_b32 exec_lo, 0
      image_load v3, v[1:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_2D unorm
      s_waitcnt vmcnt(0)
      s_mov_b32 exec_lo, s20
      v_mov_b32 v3, 9
      v_lshlrev_b32 v4, 2, v0
      global_store_dword v4, v3, s[8:9]
      s_endpgm
    """)
    img, a = _image(r)
    out = r.buf(np.full(32, 7, np.uint32), "out")
    t = _set(tsharp(a, W, H), 3, 20, 5, 25)
    res = r.run(r.config(user_sgprs=t + list(ptr(out)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    assert (r.read(out, np.uint32, 32) == 9).all()


@pytest.mark.parametrize("fmt,dmask", [(56, "0x7"), (56, "0x1"), (22, "0x2"), (20, "0xe")])
def test_store_dmask_missing_a_channel_refuses(fmt, dmask):
    """image_store with a dmask that leaves out a channel the format has refuses (what the
    hardware would store there is not established); extra channels of a 1-channel format are
    dropped (test_image_load_store_r32f_with_edges stores dmask 0x1)."""
    n = bin(int(dmask, 16)).count("1")
    r = Rig(f"""
      v_and_b32 v1, 7, v0
      v_lshrrev_b32 v2, 3, v0
      v_mov_b32 v3, 0
      v_mov_b32 v4, 0
      v_mov_b32 v5, 0
      image_store {"v3" if n == 1 else f"v[3:{2 + n}]"}, v[1:2], s[0:7] dmask:{dmask} dim:SQ_RSRC_IMG_2D unorm
      s_endpgm
    """)
    img, a = _image(r)
    res = r.run(r.config(user_sgprs=tsharp(a, W, H, fmt=fmt), tgid=(False,) * 3))
    assert res.refusal is not None and res.refusal.code == FORMAT, res.refusal
    assert "dmask" in res.refusal.message
    np.testing.assert_array_equal(r.read(a, np.float32, H * PITCH).reshape(H, PITCH), img)


FMT = """
  buffer_load_format_x v1, v0, s[0:3], 0 idxen
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v4, 2, v0
  global_store_dword v4, v1, s[4:5]
  s_endpgm
"""


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
def test_buffer_format_load_null_reads_zero_in_range_refuses():
    """A null V# reads 0; a 32_FLOAT V# (raw range checking, 64 bytes) reads its elements in
    range and 0 past them (tests/execute/test_formats.py converts every format); a V# of a
    format that is not converted (0, INVALID) refuses by name in range."""
    r = Rig(FMT)
    data = r.buf(np.arange(64, dtype=np.uint32), "data")
    out = r.buf(np.full(32, 7, np.uint32), "out")
    null = [0, 0, 0, 0]
    res = r.run(r.config(user_sgprs=null + list(ptr(out)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    assert (r.read(out, np.uint32, 32) == 0).all()
    vs = [data & 0xFFFFFFFF, (data >> 32) | (4 << 16), 64, 0x31016FAC]
    res = r.run(r.config(user_sgprs=vs + list(ptr(out)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    np.testing.assert_array_equal(r.read(out, np.uint32, 32), np.where(np.arange(32) < 16, np.arange(32), 0))
    out = r.buf(np.full(32, 7, np.uint32), "out2")
    vs[3] &= ~(0x7F << 12)
    res = r.run(r.config(user_sgprs=vs + list(ptr(out)), tgid=(False,) * 3))
    assert res.refusal is not None and res.refusal.code == "buffer.unsupported_format"
    assert "buffer_load_format_x" in res.refusal.message
    assert (r.read(out, np.uint32, 32) == 7).all()  # refused: nothing landed


@pytest.mark.parametrize(
    "form, written",
    [
        ("image_gather4 v[10:13], v[1:2], s[0:7], s[12:15] dmask:0x1 dim:SQ_RSRC_IMG_2D", 4),
        ("image_gather4_lz v[10:13], v[1:2], s[0:7], s[12:15] dmask:0x8 dim:SQ_RSRC_IMG_2D", 4),
        ("image_sample v[10:11], v[1:2], s[0:7], s[12:15] dmask:0x5 dim:SQ_RSRC_IMG_2D", 2),
        ("image_sample v10, v[1:2], s[0:7], s[12:15] dmask:0x8 dim:SQ_RSRC_IMG_2D", 1),
    ],
)
def test_sampling_a_null_image_zeroes_what_hardware_writes(form, written):
    """Through a null T# a sample writes one zero per dmask channel, a gather four (the texels
    of its one channel): the gather once wrote one register and left three stale."""
    r = Rig(f"""
  v_mov_b32 v10, 7
  v_mov_b32 v11, 7
  v_mov_b32 v12, 7
  v_mov_b32 v13, 7
  v_mov_b32 v14, 7
  v_mov_b32 v1, 0
  v_mov_b32 v2, 0
  {form}
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v4, 4, v0
  global_store_dwordx4 v4, v[10:13], s[8:9]
  s_endpgm""")
    out = r.buf(np.full(32 * 4, 9, np.uint32), "out")
    res = r.run(r.config(user_sgprs=[0] * 8 + list(ptr(out)) + [0] * 4, tgid=(False,) * 3))
    assert res.landed, res.refusal
    got = r.read(out, np.uint32, 32 * 4).reshape(32, 4)
    want = np.array([0] * written + [7] * (4 - written), np.uint32)
    assert (got == want).all(), got[0]


@pytest.mark.parametrize(
    "form, code",
    [
        # tfe is carried out (decision 0041) but not through the null T# these programs use
        (
            "image_sample v[10:11], v[1:2], s[0:7], s[12:15] dmask:0x1 dim:SQ_RSRC_IMG_2D tfe",
            "image.unsupported_descriptor",
        ),
        (
            "image_gather4 v[10:13], v[1:2], s[0:7], s[12:15] dmask:0x1 dim:SQ_RSRC_IMG_2D lwe",
            "program.unsupported_instruction",
        ),
        ("image_sample v10, v[1:2], s[0:7], s[12:15] dim:SQ_RSRC_IMG_2D", "program.unsupported_instruction"),
    ],
)
def test_sampling_forms_without_semantics_refuse(form, code):
    """lwe (a LOD warning whose condition is not established), dmask 0 and tfe through the
    null T# (whether that counts as a fail is not established) refuse by name."""
    r = Rig(f"""
  v_mov_b32 v1, 0
  v_mov_b32 v2, 0
  {form}
  s_endpgm""")
    res = r.run(r.config(user_sgprs=[0] * 16, tgid=(False,) * 3))
    assert res.refusal is not None and res.refusal.code == code, res.refusal


@pytest.mark.parametrize("typ", [1, 7])
def test_sampling_through_a_reserved_type_refuses(typ):
    """A T# of a reserved TYPE (1..7) is neither the null descriptor nor an image: refused by
    name rather than read as 0."""
    r = Rig("""
  v_mov_b32 v1, 0
  v_mov_b32 v2, 0
  image_sample v10, v[1:2], s[0:7], s[12:15] dmask:0x1 dim:SQ_RSRC_IMG_2D
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v4, 2, v0
  global_store_dword v4, v10, s[8:9]
  s_endpgm""")
    out = r.buf(np.full(32, 9, np.uint32), "out")
    t = [0, 0, 0, typ << 28, 0, 0, 0, 0]
    res = r.run(r.config(user_sgprs=t + list(ptr(out)) + [0] * 4, tgid=(False,) * 3))
    assert res.refusal is not None and res.refusal.code == "image.unsupported_descriptor", res.refusal
    assert (r.read(out, np.uint32, 32) == 9).all()
