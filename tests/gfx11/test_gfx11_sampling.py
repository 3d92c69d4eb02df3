"""GFX11 sampling through hand-built GFX11 T#s and S#s (decision 0044): clang-19's gfx1100
``smp`` (image_sample_lz of (x, 0), tests/fixtures/gfx1100/images.ll) on a linear 32x4
R32G32B32A32_UINT image with unnormalized coordinates and point filtering, 64 lanes: lanes 0..31
read texel x (NumPy), lanes 32..63 lie past the image and read the S#'s border colour (CLAMP_X
CLAMP_BORDER, TRANS_BLACK: 0) or the last texel (CLAMP_LAST_TEXEL).  The S# is laid out with
GFX11's fields (memory/ssharp.py ``gfx11``: BORDER_COLOR_PTR in word 3 [29:18]); the bits GFX11
names no field for and the T#'s CORNER_SAMPLES refuse by name, nothing written.  The RADV
captures (tests/gfx11/test_gfx11_radv_sampling.py) are the oracle for what RADV writes."""

from __future__ import annotations

import numpy as np
import pytest

import wavelift
from tests.gfx11.test_gfx11_images import ROOT, code
from wavelift.memory import ssharp, tsharp

W, LANES = 32, 64


def tsharp11(addr: int, **extra: int) -> np.ndarray:
    """A GFX11 T# of a linear W x 4 2-D R32G32B32A32_UINT image at ``addr`` (GFX11's fields and
    format numbering, as RADV's gfx10_make_texture_descriptor fills it: DST_SEL XYZW, TYPE 2D,
    PERF_MOD 4), plus ``extra`` fields."""
    (f11,) = [int(k) for k, e in tsharp.tables11()["formats"].items() if e["name"] == "32_32_32_32_UINT"]
    d = [0] * 8
    d[0] = (addr >> 8) & 0xFFFFFFFF
    vals = {
        "BASE_ADDRESS_HI": (addr >> 40) & 0xFF,
        "FORMAT": f11,
        "WIDTH_LO": (W - 1) & 3,
        "WIDTH_HI": (W - 1) >> 2,
        "HEIGHT": 3,
        "DST_SEL_X": 4,
        "DST_SEL_Y": 5,
        "DST_SEL_Z": 6,
        "DST_SEL_W": 7,
        "TYPE": 9,
        "PERF_MOD": 4,
        **extra,
    }
    for name, v in vals.items():
        w, lo, hi = tsharp.field_bits11(name)
        d[w] |= v << lo
    return np.array(d, np.uint32)


CLAMP = ssharp.enum("SQ_TEX_CLAMP")


def ssharp11(clamp_x: str = "CLAMP_BORDER", **extra: int) -> np.ndarray:
    """A GFX11 S#: unnormalized coordinates, point filtering, CLAMP_LAST_TEXEL on y and z,
    RADV's MAX_LOD 15 (4.8), plus ``extra`` fields."""
    return np.array(
        ssharp.encode(
            gfx11=True,
            CLAMP_X=CLAMP[clamp_x],
            CLAMP_Y=CLAMP["CLAMP_LAST_TEXEL"],
            CLAMP_Z=CLAMP["CLAMP_LAST_TEXEL"],
            FORCE_UNNORMALIZED=1,
            MAX_LOD=15 * 256,
            **extra,
        ),
        np.uint32,
    )


def run(wave, mode, t_of, s):
    dev = wavelift.Device("gfx1100", mode=mode)
    co = dev.load_code_object(code(wave))
    texels = np.arange(4 * W * 4, dtype=np.uint32) * np.uint32(2654435761)
    img = dev.upload(texels)
    t = dev.upload(t_of(img.address))
    out = dev.upload(np.full(LANES * 4, 0xDEADBEEF, np.uint32))
    r = co.kernel("smp").launch(groups=(1, 1, 1), block=(LANES, 1, 1), args=[t, dev.upload(s), out])
    return r, dev.download(out, np.uint32).reshape(LANES, 4), texels.reshape(4, W, 4)


@pytest.mark.parametrize(
    "wave,mode",
    [
        (32, "wave"),
        (64, "lane"),
        pytest.param(32, "lane", marks=pytest.mark.slow),
        pytest.param(64, "wave", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("clamp_x", ["CLAMP_BORDER", "CLAMP_LAST_TEXEL"])
def test_gfx11_point_sample_unnormalized(clamp_x, wave, mode):
    """Texel x of row 0 for x < 32 (NumPy: the linear image's bytes, a UINT format's channels
    returned as they are); past the image the border colour TRANS_BLACK (0) or the last texel.
    The S# also sets BORDER_COLOR_PTR (GFX11's word 3 [29:18], ignored for a predefined colour),
    where GFX10 names no field: read with GFX10's places the S# would refuse."""
    s = ssharp11(clamp_x, BORDER_COLOR_PTR=5)
    assert s[3] & ssharp.reserved(gfx11=False)[3]  # (GFX10.3 reserves those bits)
    r, out, texels = run(wave, mode, tsharp11, s)
    assert r.landed, r.refusal
    want = np.zeros((LANES, 4), np.uint32)
    want[:W] = texels[0]
    if clamp_x == "CLAMP_LAST_TEXEL":
        want[W:] = texels[0, W - 1]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(
    "what,t_extra,s_extra,code",
    [
        # GFX10's BORDER_COLOR_PTR place: reserved on GFX11
        ("s3_bit0", {}, {"_w3": 1}, "image.unsupported_sampler"),
        # GFX10's DERIV_ADJUST_EN and MIP_POINT_PRECLAMP: reserved on GFX11
        ("s2_bit31", {}, {"_w2": 1 << 31}, "image.unsupported_sampler"),
        ("s2_bit28", {}, {"_w2": 1 << 28}, "image.unsupported_sampler"),
        # corner-sampled texels (centres on integer coordinates): not carried out
        ("corner_samples", {"CORNER_SAMPLES": 1}, {}, "image.unsupported_sampler"),
        # the T#'s MIN_LOD (GFX11: split into d5[31:27] and d6[6:0])
        ("min_lod_hi", {"MIN_LOD_HI": 1}, {}, "image.unsupported_descriptor"),
        # anisotropy (the same S# field as GFX10.3's)
        ("aniso", {}, {"MAX_ANISO_RATIO": 1}, "image.unsupported_sampler"),
        # a REGISTER (custom) border colour: GFX11's table is not carried out (decision 0043)
        ("custom_border", {}, {"BORDER_COLOR_TYPE": 3, "BORDER_COLOR_PTR": 1}, "image.custom_border_color"),
    ],
)
def test_gfx11_sampling_fields_not_carried_out_refuse(what, t_extra, s_extra, code):
    """GFX11 T#/S# field values GFX11 sampling does not carry out refuse by name, nothing
    written."""
    raw = {k: v for k, v in s_extra.items() if k.startswith("_w")}
    s = ssharp11("CLAMP_BORDER", **{k: v for k, v in s_extra.items() if not k.startswith("_w")})
    for k, v in raw.items():
        s[int(k[2:])] |= np.uint32(v)
    r, out, _ = run(32, "wave", lambda a: tsharp11(a, **t_extra), s)
    assert not r.landed and r.refusal.code == code, (what, r.refusal)
    assert (out == 0xDEADBEEF).all()


def test_gfx11_ssharp_places():
    """GFX11's S# (gfx11-rsrc.json) differs from GFX10.3's in word 3 (BORDER_COLOR_PTR [29:18])
    and word 2 (bits 28 and 31 reserved); every other field where GFX10.3 has it."""
    assert ssharp.field_bits("BORDER_COLOR_PTR", gfx11=True) == (3, 18, 29)
    assert ssharp.field_bits("BORDER_COLOR_PTR") == (3, 0, 11)
    assert ssharp.reserved(gfx11=True) == {0: 0, 1: 0, 2: 0x9000_0000, 3: 0x3FFFF}
    assert ssharp.reserved() == {0: 0, 1: 0, 2: 0, 3: 0x3FFFF000}
    for n in ("CLAMP_X", "MAX_ANISO_RATIO", "FORCE_UNNORMALIZED", "MIN_LOD", "MAX_LOD", "LOD_BIAS",
              "XY_MAG_FILTER", "XY_MIN_FILTER", "Z_FILTER", "MIP_FILTER", "BORDER_COLOR_TYPE",
              "DEPTH_COMPARE_FUNC", "FILTER_MODE", "TRUNC_COORD", "LOD_BIAS_SEC"):  # fmt: skip
        assert ssharp.field_bits(n, gfx11=True) == ssharp.field_bits(n), n
    for n in ("MIP_POINT_PRECLAMP", "DERIV_ADJUST_EN"):
        with pytest.raises(KeyError):
            ssharp.field_bits(n, gfx11=True)


NSA = ROOT / "tests/fixtures/gfx1100/sampling/nsa-gfx1100-w32.hsaco"


@pytest.mark.parametrize("mode", ["lane", pytest.param("wave", marks=pytest.mark.slow)])
def test_gfx11_partial_nsa_sample_d(mode):
    """clang-19's gfx1100 image_sample_d of a 2-D image (tests/fixtures/gfx1100/sampling/nsa.ll):
    six address dwords in GFX11's partial NSA form, ``[v3, v4, v5, v6, v[1:2]]`` (the last
    register holds s and t after the four derivatives).  Lane x samples (x, x & 3) with
    unnormalized point sampling (one filter: the derivatives, all different, choose nothing):
    NumPy, texel (min(x, 31), x & 3) -- a derivative read in place of a coordinate would give
    another texel."""
    from wavelift.isa.disasm_cli import code_object_listing

    listing = [ln.strip() for ln in code_object_listing(NSA.read_bytes()) if "image_" in ln]
    assert listing == [
        "image_sample_d  v[1:4], [v3, v4, v5, v6, v[1:2]], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_2D"
    ], listing
    dev = wavelift.Device("gfx1100", mode=mode)
    co = dev.load_code_object(str(NSA))
    texels = np.arange(4 * W * 4, dtype=np.uint32) * np.uint32(2654435761)
    img = dev.upload(texels)
    t = dev.upload(tsharp11(img.address))
    s = dev.upload(ssharp11("CLAMP_LAST_TEXEL"))
    out = dev.upload(np.full(LANES * 4, 0xDEADBEEF, np.uint32))
    r = co.kernel("smpd").launch(groups=(1, 1, 1), block=(LANES, 1, 1), args=[t, s, out])
    assert r.landed, r.refusal
    x = np.arange(LANES)
    want = texels.reshape(4, W, 4)[x & 3, np.minimum(x, W - 1)]
    np.testing.assert_array_equal(dev.download(out, np.uint32).reshape(LANES, 4), want)
