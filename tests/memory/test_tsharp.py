"""wavelift/memory/tsharp.py: T#/S# fields by the register database's names, checked on
descriptors built field by field the way RADV 22.3.6 builds them (gfx10_make_texture_descriptor,
si_set_mutable_tex_desc_fields), and the IMG_FORMAT table's structure."""

from __future__ import annotations

import pytest

from wavelift.memory import layout
from wavelift.memory import tsharp as T


def radv_tsharp(
    va,
    fmt,
    w,
    h,
    typ,
    sw_mode,
    depth_field=0,
    base_array=0,
    sel=(4, 5, 6, 7),
    levels=(0, 0),
    swizzle=0,
    max_mip=0,
):
    """The T# words as RADV's gfx10_make_texture_descriptor + mutable fields compose them."""
    return [
        ((va >> 8) & 0xFFFFFFFF) | swizzle,
        ((va >> 40) & 0xFF) | fmt << 20 | ((w - 1) & 3) << 30,
        (w - 1) >> 2 | (h - 1) << 14 | 1 << 31,
        sel[0]
        | sel[1] << 3
        | sel[2] << 6
        | sel[3] << 9
        | levels[0] << 12
        | levels[1] << 16
        | sw_mode << 20
        | typ << 28,
        depth_field | base_array << 16,
        max_mip << 4,
        0,
        0,
    ]


def test_fields_of_a_3d_storage_image():
    t = T.decode_tsharp(
        radv_tsharp(0x12_3456_0000, 77, 300, 200, T.TYPE_3D, 25, depth_field=63, levels=(2, 5), max_mip=8)
    )
    assert t.base_address == 0x12_3456_0000
    assert (t.width, t.height, t.depth) == (300, 200, 64)
    assert t.format is not None and t.format.name == "32_32_32_32_FLOAT" and t.format.bytes == 16
    assert t.levels == (2, 5) and t.sw_mode == 25 and t.dst_sel == (4, 5, 6, 7)
    assert T.enum_name("SQ_RSRC_IMG_TYPE", t.type) == "SQ_RSRC_IMG_3D"
    assert t.fields["RESOURCE_LEVEL"] == 1 and t.pitch is None
    s, base, pbx = t.layout(layout.Chip(True, 4, 4))
    assert s.levels == 9 and (s.rsrc, s.depth, s.bpe_log2) == (layout.RSRC_3D, 64, 4)
    # a view's levels must lie inside the MAX_MIP + 1 levels of the image
    bad = radv_tsharp(0x10000, 22, 64, 64, T.TYPE_2D, 9, levels=(0, 3), max_mip=2)
    assert T.decode_tsharp(bad).layout(layout.Chip(True, 0))[0] == "image.unsupported_descriptor"


def test_array_layers_and_pipe_bank_xor():
    words = radv_tsharp(
        0x4000_0000, 56, 64, 64, T.TYPE_2D_ARRAY, 27, depth_field=5, base_array=2, swizzle=0x35
    )
    t = T.decode_tsharp(words)
    assert (t.base_array, t.last_array) == (2, 5)
    # 64KB_R_X on 16 pipes: the pipe bits [3:0] and two bank bits [7:6] of the XOR; 0x35 sets
    # bits 4 and 5, which no pipe/bank XOR has: refused (as frontend/image.py does)
    assert t.layout(layout.Chip(True, 4, 4)) == (
        "image.unsupported_layout",
        "the base address has bits set inside its swizzle block other than an _X/_T mode's pipe/bank XOR",
    )
    words = radv_tsharp(
        0x4000_0000, 56, 64, 64, T.TYPE_2D_ARRAY, 27, depth_field=5, base_array=2, swizzle=0xC5
    )
    s, base, pbx = T.decode_tsharp(words).layout(layout.Chip(True, 4, 4))
    assert base == 0x4000_0000 and pbx == 0xC5
    assert (s.rsrc, s.bpe_log2, s.depth, s.sw_mode) == (layout.RSRC_2D, 2, 6, 27)


def test_gfx103_pitch_and_gfx10_depth_share_bits():
    w = radv_tsharp(0x10000, 22, 100, 10, T.TYPE_2D, 0, depth_field=127)
    assert T.decode_tsharp(w).pitch == 128
    assert T.decode_tsharp(w).layout(layout.Chip(True, 0))[0] == "image.unsupported_descriptor"
    f10 = T.decode_tsharp(w, gfx103=False)
    assert "PITCH" not in f10.fields and f10.pitch is None


@pytest.mark.parametrize(
    "change,code",
    [
        (dict(fmt=169), "image.unsupported_format"),  # BC1: not a texel format
        (dict(sw_mode=12), "image.unsupported_layout"),  # reserved
        (dict(sw_mode=9, va=0x10100), "image.unsupported_layout"),  # 64KB_S, base not aligned
        (dict(typ=T.TYPE_2D_MSAA), "image.unsupported_descriptor"),
        (dict(typ=0), "image.unsupported_descriptor"),  # null descriptor
    ],
)
def test_layout_refusals(change, code):
    args = dict(va=0x10000, fmt=22, w=8, h=8, typ=T.TYPE_2D, sw_mode=9) | change
    got = T.decode_tsharp(radv_tsharp(**args)).layout(layout.Chip(True, 0))
    assert got[0] == code


def test_ssharp_fields():
    # CLAMP_X mirror (1), XY_MAG_FILTER bilinear (1) << 20, MIP_FILTER linear (2) << 26, border colour white
    s = T.decode_ssharp([1, 0, 1 << 20 | 2 << 26, 2 << 30])
    assert T.enum_name("SQ_TEX_CLAMP", s["CLAMP_X"]) == "SQ_TEX_MIRROR"
    assert T.enum_name("SQ_TEX_XY_FILTER", s["XY_MAG_FILTER"]) == "SQ_TEX_XY_FILTER_BILINEAR"
    assert T.enum_name("SQ_TEX_MIP_FILTER", s["MIP_FILTER"]) == "SQ_TEX_MIP_FILTER_LINEAR"
    assert T.enum_name("SQ_TEX_BORDER_COLOR", s["BORDER_COLOR_TYPE"]) == "SQ_TEX_BORDER_COLOR_OPAQUE_WHITE"


def test_every_format_value_decodes():
    fs = T.formats()
    assert len(fs) == 160 and fs[0].name == "INVALID"
    plain = [f for f in fs.values() if f.bits]
    assert all(sum(f.bits) == 8 * f.bytes for f in plain)
    assert {f.numeric for f in plain} >= {
        "UNORM",
        "SNORM",
        "USCALED",
        "SSCALED",
        "UINT",
        "SINT",
        "FLOAT",
        "SRGB",
    }
    assert T.img_format(300) is None


def test_unnamed_bits_per_word():
    """tsharp.unnamed_bits (the reserved bits of T# and S# words, written once): per word of
    the range, the bits no (word, lo, hi) place covers."""
    places = [(0, 0, 3), (0, 8, 8), (1, 0, 31), (3, 4, 7)]
    assert T.unnamed_bits(places, range(3)) == {0: 0xFFFFFEF0, 1: 0, 2: 0xFFFFFFFF}
