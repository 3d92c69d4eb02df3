"""Border colours against lavapipe and a NumPy reference (decision 0041): the S# address mode
CLAMP_BORDER with each predefined BORDER_COLOR_TYPE (TRANS_BLACK, OPAQUE_BLACK, OPAQUE_WHITE:
VkBorderColor's six values, float and int) on formats whose RADV T# moves channels (DST_SEL
other than XYZW, so BC_SWIZZLE other than XYZW: R8, R32, R4G4B4A4, B4G4R4A4, B8G8R8A8,
A2R10G10B10, R5G6B5, R16G16, R32_UINT, R16_SINT) and on 4-channel ones (RGBA8 UNORM/UINT/SINT).

tests/fixtures/glsl/sampling/border.comp (textureLod, textureLodOffset, textureGather of
components 0 and 3) compiled by ACO (command.txt) runs in wavelift with the T# and S# RADV
writes (radv_make_texture_descriptor: FORMAT from gfx10_format_table, DST_SEL the pipe format's
swizzle, BC_SWIZZLE from gfx9_border_color_swizzle, re-derived here from those swizzles) and on
lavapipe (tools/lavapipe_run/lavapipe_sample.c) with the same SPIR-V, image and sampler.  Point
samples and gathers: equal to a NumPy reference of Vulkan's rule (border texel = the border
colour, then conversion to RGBA) bit for bit, and to lavapipe (its UNORM reads one ulp);
linear filtering across the border: decision 0025's bound against lavapipe (rgba8/r8/bgra8
within 1/255, float formats 2**-9 of the span per axis).  Skips without lavapipe, gcc or the
Vulkan headers."""

from __future__ import annotations

import os
import struct
import subprocess

import numpy as np
import pytest
from test_sampling_lavapipe import (
    BORDER_MODE,
    FIX,
    LINEAR,
    LVP_ICD,
    NEAREST,
    REPEAT,
    H,
    N,
    W,
    assert_within_bound,
    inputs,
    pytestmark,  # noqa: F401 (the skip when lavapipe is missing)
    radv_sampler,
)
from testpaths import ROOT

import wavelift
from wavelift.driver.aco import Image, image_descriptor
from wavelift.memory import ssharp, tsharp

R = 4  # results per invocation (border.comp)
BC = ssharp.bc_swizzle()
SEL = {"x": 4, "y": 5, "z": 6, "w": 7, "0": 0, "1": 1}


# name: (VkFormat, GFX10 IMG_FORMAT (gfx10_format_table of the pipe format RADV's
# vk_format_to_pipe_format gives), the pipe format's swizzle (u_format.csv; RADV's DST_SEL for an
# identity view), bytes per texel, numeric kind, the stored channels' (bit offset, width) from
# bit 0, the shader variant)
FORMATS = {
    "rgba8": (37, "8_8_8_8_UNORM", "xyzw", 4, "unorm", ((0, 8), (8, 8), (16, 8), (24, 8)), "w32"),
    "r8": (9, "8_UNORM", "x001", 1, "unorm", ((0, 8),), "noalpha-w32"),
    "bgra8": (44, "8_8_8_8_UNORM", "zyxw", 4, "unorm", ((0, 8), (8, 8), (16, 8), (24, 8)), "w32"),
    "rgba4": (2, "4_4_4_4_UNORM", "wzyx", 2, "unorm", ((0, 4), (4, 4), (8, 4), (12, 4)), "w32"),
    "bgra4": (3, "4_4_4_4_UNORM", "yzwx", 2, "unorm", ((0, 4), (4, 4), (8, 4), (12, 4)), "w32"),
    "a2r10g10b10": (58, "2_10_10_10_UNORM", "zyxw", 4, "unorm", ((0, 10), (10, 10), (20, 10), (30, 2)), "w32"),
    "r5g6b5": (4, "5_6_5_UNORM", "zyx1", 2, "unorm", ((0, 5), (5, 6), (11, 5)), "noalpha-w32"),
    "rg16f": (83, "16_16_FLOAT", "xy01", 4, "float", ((0, 16), (16, 16)), "noalpha-w32"),
    "r32f": (100, "32_FLOAT", "x001", 4, "float", ((0, 32),), "noalpha-w32"),
    "rgba8ui": (41, "8_8_8_8_UINT", "xyzw", 4, "uint", ((0, 8), (8, 8), (16, 8), (24, 8)), "uint-w32"),
    "r32ui": (98, "32_UINT", "x001", 4, "uint", ((0, 32),), "uint-noalpha-w32"),
    "rgba8i": (42, "8_8_8_8_SINT", "xyzw", 4, "sint", ((0, 8), (8, 8), (16, 8), (24, 8)), "sint-w32"),
    "r16i": (75, "16_SINT", "x001", 2, "sint", ((0, 16),), "sint-noalpha-w32"),
}  # fmt: skip
# lavapipe 22.3 samples R4G4B4A4_UNORM_PACK16 as 0 everywhere (not a format it samples): that
# format (RADV's only BC_SWIZZLE WZYX here) is checked against the NumPy reference alone
NOT_ON_LAVAPIPE = {"rgba4"}
# a format of the same texel size that image_descriptor knows (its T# is then re-formatted)
SAME_SIZE = {1: "r8", 2: "r16f", 4: "rgba8", 8: "rgba16f"}


def bc_swizzle(sw: str) -> int:
    """RADV's BC_SWIZZLE for a pipe format's swizzle (gfx9_border_color_swizzle, Mesa 22.3.6,
    restated): where the border colour's alpha must land for the swizzle to bring it to W."""
    if sw[3] == "x":
        return BC["WZYX"] if sw[2] == "y" else BC["WXYZ"]
    if sw[0] == "x":
        return BC["XYZW"] if sw[1] == "y" else BC["XWYZ"]
    if sw[1] == "x":
        return BC["YXWZ"]
    if sw[2] == "x":
        return BC["ZYXW"]
    return BC["XYZW"]


def radv_tsharp(buf, name: str) -> list[int]:
    vk, gfmt, sw, nb, _kind, _bits, _v = FORMATS[name]
    t = image_descriptor(Image(buf, W, H, SAME_SIZE[nb]), False)
    (fmt,) = [v for v, f in tsharp.formats().items() if f.name == gfmt]
    t[1] = (t[1] & ~(0x1FF << 20)) | fmt << 20
    sel = sum(SEL[c] << (3 * k) for k, c in enumerate(sw))
    t[3] = (t[3] & ~((1 << 12) - 1) & ~(7 << 25)) | sel | bc_swizzle(sw) << 25
    return t


def texels_for(name: str, seed: int) -> np.ndarray:
    """(H, W) texels as raw bytes (H, W, bytes)."""
    _vk, _g, _sw, nb, kind, bits, _v = FORMATS[name]
    rng = np.random.default_rng(seed)
    if kind == "float":
        w = bits[0][1]
        vals = rng.uniform(-4, 4, (H, W, len(bits))).astype(np.float16 if w == 16 else np.float32)
        return vals.view(np.uint8).reshape(H, W, nb)
    return rng.integers(0, 256, (H, W, nb), dtype=np.uint8)


def channels(name: str, raw: np.ndarray) -> list[np.ndarray]:
    """The stored channels of each texel as u32/i32/f32 (NumPy), in the T#'s channel order."""
    _vk, _g, _sw, nb, kind, bits, _v = FORMATS[name]
    word = np.zeros(raw.shape[:-1], np.uint64)
    for k in range(nb):
        word |= raw[..., k].astype(np.uint64) << np.uint64(8 * k)
    out = []
    for off, w in bits:
        v = (word >> np.uint64(off)) & np.uint64((1 << w) - 1)
        if kind == "unorm":
            out.append(v.astype(np.float32) / np.float32((1 << w) - 1))
        elif kind == "float":
            out.append(
                (
                    v.astype(np.uint16).view(np.float16) if w == 16 else v.astype(np.uint32).view(np.float32)
                ).astype(np.float32)
            )
        elif kind == "uint":
            out.append(v.astype(np.uint32))
        else:
            s = v.astype(np.int64)
            out.append(np.where(s >= 1 << (w - 1), s - (1 << w), s).astype(np.int32))
    return out


def rgba(name: str, ch: list) -> list:
    """Vulkan's conversion to RGBA then the format's swizzle: the view's components."""
    kind = FORMATS[name][4]
    one = np.float32(1) if kind in ("unorm", "float") else 1
    # missing components (0, 0, 0, 1); the pipe swizzle maps stored channels to R, G, B, A
    stored = list(ch) + [None] * (4 - len(ch))
    out = []
    for c in FORMATS[name][2]:
        if c in "xyzw" and stored["xyzw".index(c)] is not None:
            out.append(stored["xyzw".index(c)])
        else:
            out.append(one if c == "1" else 0)
    return out


def as_u32(kind: str, v) -> int:
    if kind in ("unorm", "float"):
        return int(np.float32(v).view(np.uint32))
    return int(np.int64(v)) & 0xFFFFFFFF


# VkBorderColor -> its (R, G, B, A)
BORDER_RGBA = {
    0: (0, 0, 0, 0),
    1: (0, 0, 0, 0),
    2: (0, 0, 0, 1),
    3: (0, 0, 0, 1),
    4: (1, 1, 1, 1),
    5: (1, 1, 1, 1),
}


def reference(name: str, raw: np.ndarray, c: np.ndarray, border: int) -> np.ndarray:
    """NumPy: border.comp's four results, point sampled (both axes CLAMP_TO_BORDER): the texel
    floor(s * size) (+ offset), a border texel = the border colour (R, G, B, A as Vulkan's
    texel replacement gives it, then conversion to RGBA: components the format lacks read 0,
    alpha 1); gathers floor(s * size - 0.5) and the next texel, (i0,j1), (i1,j1), (i1,j0),
    (i0,j0)."""
    kind = FORMATS[name][4]
    view = rgba(name, channels(name, raw))  # 4 arrays (or constants) of (H, W)
    # the border texel: the colour's R, G, B, A where the format has that component (its
    # swizzle names a stored channel there), else conversion to RGBA's 0 (R, G, B) or 1 (A)
    sw = FORMATS[name][2]
    bcol = [BORDER_RGBA[border][q] if sw[q] in "xyzw" else int(sw[q] == "1") for q in range(4)]

    def texel(i, j, comp):
        if not (0 <= i < W and 0 <= j < H):
            v = bcol[comp]
        else:
            v = view[comp]
            v = v[j, i] if isinstance(v, np.ndarray) else v
        return as_u32(kind, v)

    out = np.zeros((N, R, 4), np.uint32)
    for k in range(N):
        u, v = float(np.float32(c[k, 0]) * np.float32(W)), float(np.float32(c[k, 1]) * np.float32(H))
        i, j = int(np.floor(u)), int(np.floor(v))
        out[k, 0] = [texel(i, j, q) for q in range(4)]
        out[k, 1] = [texel(i - 1, j + 1, q) for q in range(4)]
        i0, j0 = int(np.floor(u - 0.5)), int(np.floor(v - 0.5))
        for r, comp in ((2, 0), (3, 0 if "noalpha" in FORMATS[name][6] else 3)):
            out[k, r] = [
                texel(i0, j0 + 1, comp),
                texel(i0 + 1, j0 + 1, comp),
                texel(i0 + 1, j0, comp),
                texel(i0, j0, comp),
            ]
    return out


def run_lavapipe(exe, tmp_path, name, raw, samp, c):
    vk, *_rest, variant = FORMATS[name]
    (tmp_path / "img.bin").write_bytes(raw.tobytes())
    (tmp_path / "in.bin").write_bytes(c.tobytes())
    cmd = [
        str(exe),
        str(FIX / f"border-{variant}.spv"),
        str(tmp_path),
        "--groups",
        "1,1,1",
        "--image",
        f"0:0:{vk}:{W}:{H}:{tmp_path / 'img.bin'}",
        "--sampler",
        ":".join(str(v) for v in (*samp, 0)),
        "--binding",
        f"0:1:{16 * N}:{tmp_path / 'in.bin'}",
        "--binding",
        f"0:2:{16 * R * N}",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    return np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.uint32).reshape(N, R, 4)


def run_wavelift(name, variant, target, mode, raw, samp, c, tsharp_patch=None, ssharp_patch=None):
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(FIX / f"border-{variant}.json"))
    nb = raw.shape[-1]
    pitch = -(-W * nb // 256) * 256 // nb
    img = np.zeros((H, pitch, nb), np.uint8)
    img[:, :W] = raw
    src = dev.upload(img.reshape(-1))
    inp = dev.upload(c)
    out = dev.upload(np.full((N, R, 4), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(1, 1, 1), buffers={(0, 1): inp, (0, 2): out})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    at = rec.extra["sets"][0] + int(binding["offset"])
    t = radv_tsharp(src, name)
    if tsharp_patch:
        t = tsharp_patch(t)
    dev.memory.write(at, struct.pack("<8I", *t))  # the T# at +0, the S# at +80 (RADV)
    sd = radv_sampler(*samp)
    if ssharp_patch:
        sd = ssharp_patch(sd)
    dev.memory.write(at + 80, struct.pack("<4I", *sd))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    if not res.landed:
        return res, None
    return res, dev.download(out, np.uint32).reshape(N, R, 4)


FLOAT_BORDERS, INT_BORDERS = (0, 2, 4), (1, 3, 5)
POINT = [
    (name, border)
    for name, f in FORMATS.items()
    for border in (INT_BORDERS if f[4] in ("uint", "sint") else FLOAT_BORDERS)
]
FAST = {("r8", 2), ("rgba4", 2), ("bgra4", 2), ("r32ui", 5), ("rgba8i", 3), ("rg16f", 0)}


def native_default(test_id: str) -> bool:
    """Native tiers by default for a few cases (one per BC_SWIZZLE value and kind); the rest slow."""
    return any(f"-{n}-{b}-" in f"-{test_id}-" or test_id.endswith(f"{n}-{b}") for n, b in FAST)


@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("name,border", POINT)
def test_point_border_colours_equal_lavapipe_and_numpy(name, border, mode, lavapipe_sample, tmp_path):
    """Point sampling and gathers with both axes CLAMP_TO_BORDER: bit for bit the NumPy
    reference, and lavapipe (UNORM within its one-ulp reads)."""
    seed = 7 * sorted(FORMATS).index(name) + border
    raw = texels_for(name, seed)
    c = inputs(seed + 300)
    samp = (NEAREST, NEAREST, NEAREST, BORDER_MODE, BORDER_MODE, border)
    want = run_lavapipe(lavapipe_sample, tmp_path, name, raw, samp, c)
    res, got = run_wavelift(name, FORMATS[name][6], "gfx1030", mode, raw, samp, c)
    assert res.landed, res.refusal
    ref = reference(name, raw, c, border)
    assert (got == ref).all(), np.argwhere(got != ref)[:4]
    if name in NOT_ON_LAVAPIPE:
        assert not want.any()  # (what lavapipe 22.3 gives: every sample 0, inside the image too)
        return
    d = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert d.max() <= (1 if FORMATS[name][4] == "unorm" else 0), np.argwhere(d > 0)[:4]


LINEAR_CASES = [
    (name, border, av)
    for name in ("rgba8", "r8", "bgra8", "rg16f", "r32f")
    for border in FLOAT_BORDERS
    for av in (BORDER_MODE, REPEAT)
]


@pytest.mark.tiers
@pytest.mark.parametrize("name,border,av", LINEAR_CASES)
def test_linear_filtering_into_the_border_within_the_bound(name, border, av, lavapipe_sample, tmp_path):
    """Linear filtering whose footprint takes border texels (u CLAMP_TO_BORDER, v either): the
    blend of texels and the border colour within decision 0025's bound of lavapipe; the
    gathers (results 2 and 3) bit for bit the NumPy reference (v CLAMP_TO_BORDER) and lavapipe."""
    seed = 11 * sorted(FORMATS).index(name) + border + av
    raw = texels_for(name, seed)
    c = inputs(seed + 500)
    samp = (LINEAR, LINEAR, NEAREST, BORDER_MODE, av, border)
    want = run_lavapipe(lavapipe_sample, tmp_path, name, raw, samp, c)
    res, got = run_wavelift(name, FORMATS[name][6], "gfx1030", "wave", raw, samp, c)
    assert res.landed, res.refusal
    kind = FORMATS[name][4]
    # the span of the blended values: the texels' channels and the border colour's (0 and 1)
    vals = np.concatenate(
        [v.ravel().astype(np.float64) for v in channels(name, raw)] + [np.array([0.0, 1.0])]
    )
    span = float(vals.max() - vals.min())
    for k in range(N):
        for r in (0, 1):
            fmt = "rgba8" if kind == "unorm" else "rgba16f"  # 0025's two bounds: 8-bit UNORM, float
            assert_within_bound(fmt, got[k, r].view(np.float32), want[k, r].view(np.float32), (k, r), span)
    d = np.abs(got[:, 2:].astype(np.int64) - want[:, 2:].astype(np.int64))
    assert d.max() <= (1 if kind == "unorm" else 0), np.argwhere(d > 0)[:4]
    if av == BORDER_MODE:
        ref = reference(name, raw, c, border)
        assert (got[:, 2:] == ref[:, 2:]).all()


@pytest.mark.parametrize("name,border", [("bgra8", 2), ("bgra4", 4), ("rgba8", 0)])
def test_border_colours_navi10_wave64(name, border, lavapipe_sample, tmp_path):
    """The navi10 wave64 build of border.comp (4-channel float formats): as on navi21."""
    seed = 13 * sorted(FORMATS).index(name) + border
    raw = texels_for(name, seed)
    c = inputs(seed + 700)
    samp = (NEAREST, NEAREST, NEAREST, BORDER_MODE, BORDER_MODE, border)
    want = run_lavapipe(lavapipe_sample, tmp_path, name, raw, samp, c)
    res, got = run_wavelift(name, "navi10-w64", "gfx1010", "wave", raw, samp, c)
    assert res.landed, res.refusal
    assert (got == reference(name, raw, c, border)).all()
    assert np.abs(got.astype(np.int64) - want.astype(np.int64)).max() <= 1


def _with_bc(v):
    return lambda t: [*t[:3], (t[3] & ~(7 << 25)) | v << 25, *t[4:]]


@pytest.mark.parametrize(
    "what, au, tpatch, spatch, code",
    [
        # a custom colour (VK_EXT_custom_border_color: RADV's REGISTER type, its BORDER_COLOR_PTR
        # indexing the colours at TA_CS_BC_BASE_ADDR): this dispatch's stream never wrote that
        # register, so the colour is refused by name (decision 0043; the RADV captures with the
        # table: test_radv_border_colors.py)
        (
            "register colour",
            BORDER_MODE,
            None,
            lambda w: [*w[:3], w[3] | 3 << 30 | 5],
            "image.custom_border_color",
        ),
        (
            "register colour, pointer 0",
            BORDER_MODE,
            None,
            lambda w: [*w[:3], w[3] | 3 << 30],
            "image.custom_border_color",
        ),
        ("BC_SWIZZLE 6", BORDER_MODE, _with_bc(6), None, "image.unsupported_sampler"),
        ("BC_SWIZZLE 7", BORDER_MODE, _with_bc(7), None, "image.unsupported_sampler"),
        ("BC_SWIZZLE 7 without a border mode", REPEAT, _with_bc(7), None, None),
        ("BORDER_COLOR_PTR without REGISTER", BORDER_MODE, None, lambda w: [*w[:3], w[3] | 77], None),
    ],
)
def test_border_fields_not_carried_out_refused_by_name(what, au, tpatch, spatch, code):
    """What is not carried out refuses by name; BC_SWIZZLE without a border address mode and
    BORDER_COLOR_PTR with a predefined colour change nothing and land."""
    raw = texels_for("bgra8", 3)
    c = inputs(303)
    samp = (NEAREST, NEAREST, NEAREST, au, BORDER_MODE if au == BORDER_MODE else REPEAT, 2)
    res, got = run_wavelift("bgra8", "w32", "gfx1030", "wave", raw, samp, c, tpatch, spatch)
    if code is None:
        assert res.landed, (what, res.refusal)
        if au == BORDER_MODE:
            assert (got == reference("bgra8", raw, c, 2)).all()
    else:
        assert res.refusal is not None and res.refusal.code == code, (what, res.refusal)


@pytest.mark.parametrize("filt", [NEAREST, LINEAR], ids=["point", "linear-in-level"])
def test_3d_border_on_every_axis_equals_lavapipe(filt, tmp_path):
    """A 3-D mip chain (mip.comp -DTEX3D: textureLod, textureLodOffset, textureGrad at explicit
    LODs) with CLAMP_TO_BORDER on u, v and w (transparent black; S# CLAMP_Z a border mode):
    the z axis's border texels too, through test_sampling_mips_lavapipe's harness and bound."""
    import test_sampling_mips_lavapipe as M

    exe = tmp_path / "lavapipe_sample"
    p = subprocess.run(
        ["gcc", "-O1", "-o", str(exe), str(ROOT / "tools/lavapipe_run/lavapipe_sample.c"), "-lvulkan"],
        capture_output=True,
        text=True,
    )
    if p.returncode:
        pytest.skip("lavapipe_sample does not build here: " + p.stderr[-200:])
    samp = (filt, filt, NEAREST, BORDER_MODE, BORDER_MODE, BORDER_MODE)
    case = M._case("mip-3d-w32", M.VIEW_3D, "rgba16f", (8, 8, 8), 4, 0, 4, samp)
    case.seed = 91 + filt
    tex = M.texels(case)
    c = M.inputs(case)
    assert ((c[:, 3] < 0) | (c[:, 3] > 1)).any()  # some r outside: border texels along w
    want = M.run_lavapipe(exe, tmp_path, case, tex, c)
    got = M.run_wavelift(case, tex, c)
    M.compare(case, c, tex, got, want)
