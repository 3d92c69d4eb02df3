"""Sampling against lavapipe (decision 0025): tests/fixtures/glsl/sampling.comp (textureLod at
LOD 0 and at a per-invocation LOD, textureLodOffset, textureGather and textureGatherOffset of
one combined image sampler) compiled by ACO (the committed tests/fixtures/glsl/sampling/
binaries, command.txt) runs in wavelift with the T# and S# RADV would write for the same
VkImage/VkSampler; tools/lavapipe_run/lavapipe_sample.c runs the same SPIR-V on lavapipe with
the same image and sampler.  Point samples and gathers must be equal (rgba16f bit for bit;
rgba8 within lavapipe's one-ulp UNORM reads, test_formats_lavapipe.py); linear filtering within
the decision's bound.  Skips without lavapipe, gcc or the Vulkan headers."""

from __future__ import annotations

import math
import os
import shutil
import struct
import subprocess

import numpy as np
import pytest
from testpaths import ROOT

import wavelift
from wavelift.driver.aco import Image, image_descriptor
from wavelift.memory import ssharp

LVP_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
VK_HEADER = "/usr/include/vulkan/vulkan_core.h"
FIX = ROOT / "tests/fixtures/glsl/sampling"
pytestmark = pytest.mark.skipif(
    not (os.path.exists(LVP_ICD) and os.path.exists(VK_HEADER) and shutil.which("gcc")),
    reason="lavapipe, the Vulkan headers or gcc missing",
)
W, H, N = 8, 4, 32
NEAREST, LINEAR = 0, 1  # VkFilter; VkSamplerMipmapMode the same numbers
REPEAT, MIRRORED, EDGE, BORDER_MODE = 0, 1, 2, 3  # VkSamplerAddressMode
# VkBorderColor -> SQ_TEX_BORDER_COLOR (radv_tex_bordercolor)
BORDER_TYPE = {0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 5: 2}
VK_FORMAT = {"rgba8": 37, "rgba16f": 97, "rgba8ui": 41}
CLAMP = ssharp.enum("SQ_TEX_CLAMP")
WRAP = {
    REPEAT: CLAMP["WRAP"],
    MIRRORED: CLAMP["MIRROR"],
    EDGE: CLAMP["CLAMP_LAST_TEXEL"],
    BORDER_MODE: CLAMP["CLAMP_BORDER"],
}


def radv_sampler(mag, mn, mip, au, av, border, unnorm=0):
    """The S# radv_init_sampler (radv_device.c, Mesa 22.3.6) writes for this VkSamplerCreateInfo
    (no anisotropy, LOD bias 0, minLod 0, maxLod VK_LOD_CLAMP_NONE, or 0 with unnormalized
    coordinates as lavapipe_sample sets it; no compare)."""
    uses_border = BORDER_MODE in (au, av)
    return ssharp.encode(
        CLAMP_X=WRAP[au],
        CLAMP_Y=WRAP[av],
        CLAMP_Z=CLAMP["CLAMP_LAST_TEXEL"],
        TRUNC_COORD=int(mag == mn == NEAREST),
        MAX_LOD=0 if unnorm else 15 * 256,
        FORCE_UNNORMALIZED=unnorm,
        XY_MAG_FILTER=mag,
        XY_MIN_FILTER=mn,
        MIP_FILTER=1 + mip,
        BORDER_COLOR_TYPE=BORDER_TYPE[border] if uses_border else 0,
    )


def _clear(x, lo_gap=0.02):
    """A texel-space value is clear of the precision windows: x and x - 0.5 not within 2**-7
    (and a margin) below an integer."""
    return all(0.02 < v - math.floor(v) < 1 - lo_gap for v in (x, x - 0.5))


def inputs(seed, unnorm=False):
    rng = np.random.default_rng(seed)
    c = np.zeros((N, 4), np.float32)
    k = 0
    sw, sh = (1, 1) if unnorm else (W, H)
    while k < N:
        s = np.float32(rng.uniform(-1.2, 2.2) * W / sw)
        t = np.float32(rng.uniform(-1.2, 2.2) * H / sh)
        if _clear(float(s * np.float32(sw))) and _clear(float(t * np.float32(sh))):
            c[k, :2] = s, t
            c[k, 2] = rng.choice([-1.0, -0.25, 0.0, 0.5, 2.0])
            k += 1
    return c


def run_lavapipe(exe, tmp_path, fmt, texels, samp, c, shader="sampling-w32", unnorm=0):
    (tmp_path / "img.bin").write_bytes(texels.tobytes())
    (tmp_path / "in.bin").write_bytes(c.tobytes())
    cmd = [
        str(exe),
        str(FIX / f"{shader}.spv"),
        str(tmp_path),
        "--groups",
        "1,1,1",
        "--image",
        f"0:0:{VK_FORMAT[fmt]}:{W}:{H}:{tmp_path / 'img.bin'}",
        "--sampler",
        ":".join(str(v) for v in (*samp, unnorm)),
        "--binding",
        f"0:1:{16 * N}:{tmp_path / 'in.bin'}",
        "--binding",
        f"0:2:{16 * 5 * N}",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    return np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.uint32).reshape(N, 5, 4)


def run_wavelift(variant, target, mode, fmt, texels, samp, c, unnorm=0):
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(FIX / f"sampling-{variant}.json"))
    bpp = texels.dtype.itemsize * 4
    pitch = -(-W * bpp // 256) * 256 // bpp
    img = np.zeros((H, pitch, 4), texels.dtype)
    img[:, :W] = texels
    src = dev.upload(img.reshape(-1).view(np.uint8))
    inp = dev.upload(c)
    out = dev.upload(np.full((N, 5, 4), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(1, 1, 1), buffers={(0, 1): inp, (0, 2): out})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    assert binding["type"] == "combined_image_sampler"
    at = rec.extra["sets"][0] + int(binding["offset"])
    t = image_descriptor(Image(src, W, H, fmt), False)
    dev.memory.write(at, struct.pack("<8I", *t))  # the T# at +0, the S# at +80 (RADV)
    dev.memory.write(at + 80, struct.pack("<4I", *radv_sampler(*samp, unnorm)))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    assert res.landed, res.refusal
    return dev.download(out, np.uint32).reshape(N, 5, 4)


CASES = {
    # name: (format, (mag, min, mipmap, address u, address v, VkBorderColor))
    "rgba8-nearest-repeat": ("rgba8", (NEAREST, NEAREST, NEAREST, REPEAT, REPEAT, 0)),
    "rgba8-linear-mirror-edge": ("rgba8", (LINEAR, LINEAR, NEAREST, MIRRORED, EDGE, 0)),
    "rgba8-magnearest-minlinear-border": ("rgba8", (NEAREST, LINEAR, LINEAR, BORDER_MODE, REPEAT, 2)),
    "rgba16f-nearest-border-white": ("rgba16f", (NEAREST, NEAREST, NEAREST, BORDER_MODE, MIRRORED, 4)),
    "rgba16f-linear-repeat-border": ("rgba16f", (LINEAR, LINEAR, NEAREST, REPEAT, BORDER_MODE, 0)),
}


def texels_for(fmt, seed):
    rng = np.random.default_rng(seed)
    if fmt in ("rgba8", "rgba8ui"):
        return rng.integers(0, 256, (H, W, 4), dtype=np.uint8)
    return rng.uniform(-4, 4, (H, W, 4)).astype(np.float16)


@pytest.mark.parametrize(
    "variant,target,mode",
    [("w32", "gfx1030", "wave"), ("w32", "gfx1030", "lane"), ("navi10-w64", "gfx1010", "wave")],
)
@pytest.mark.parametrize("case", sorted(CASES))
def test_sampling_equals_lavapipe(case, variant, target, mode, lavapipe_sample, tmp_path):
    fmt, samp = CASES[case]
    seed = sorted(CASES).index(case)
    texels = texels_for(fmt, seed)
    c = inputs(seed + 100)
    want = run_lavapipe(lavapipe_sample, tmp_path, fmt, texels, samp, c)
    got = run_wavelift(variant, target, mode, fmt, texels, samp, c)
    compare(fmt, samp, c, got, want, case, span=_span(texels))


def _span(texels):
    t = texels.astype(np.float64)
    return float(t.max() - t.min())


def compare(fmt, samp, c, got, want, case, unnorm=False, span=0.0):
    """got/want: (N, 5, 4) u32 results of sampling.comp's five lookups."""
    mag, mn = samp[0], samp[1]
    for k in range(N):
        for r in range(5):
            gather = r >= 3 and not unnorm
            if gather:
                filt = NEAREST
            elif r == 1 and mag != mn and not unnorm:
                filt = mn if c[k, 2] > 0 else mag
            else:
                filt = mag
            g, w = got[k, r], want[k, r]
            if fmt == "rgba8ui":
                assert (g == w).all(), (case, k, r, g, w)
            elif filt == NEAREST:
                # exact; lavapipe's UNORM reads can be one ulp off the correctly rounded x / 255
                ulps = np.abs(g.astype(np.int64) - w.astype(np.int64))
                assert ulps.max() <= (1 if fmt == "rgba8" else 0), (case, k, r, g, w)
            else:
                assert_within_bound(fmt, g.view(np.float32), w.view(np.float32), (case, k, r), span)


EXTRA = {
    # name: (shader, format, sampler as in CASES, unnormalized)
    "uint-nearest-mirror-border": (
        "sampling-uint-w32",
        "rgba8ui",
        (NEAREST, NEAREST, NEAREST, MIRRORED, BORDER_MODE, 5),
        0,
    ),
    "uint-nearest-repeat": (
        "sampling-uint-w32",
        "rgba8ui",
        (NEAREST, NEAREST, NEAREST, REPEAT, REPEAT, 0),
        0,
    ),
    "unnorm-nearest-edge-border": (
        "sampling-unnorm-w32",
        "rgba8",
        (NEAREST, NEAREST, NEAREST, EDGE, BORDER_MODE, 4),
        1,
    ),
    "unnorm-linear-border-edge": (
        "sampling-unnorm-w32",
        "rgba16f",
        (LINEAR, LINEAR, NEAREST, BORDER_MODE, EDGE, 2),
        1,
    ),
}


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("case", sorted(EXTRA))
def test_integer_and_unnormalized_sampling_equals_lavapipe(case, mode, lavapipe_sample, tmp_path):
    """usampler2D on an R8G8B8A8_UINT image (bit for bit, border colours in integer form), and
    unnormalized coordinates (textureLod at 0, clamp-to-edge / clamp-to-border)."""
    shader, fmt, samp, unnorm = EXTRA[case]
    seed = 50 + sorted(EXTRA).index(case)
    texels = texels_for(fmt, seed)
    c = inputs(seed + 100, bool(unnorm))
    want = run_lavapipe(lavapipe_sample, tmp_path, fmt, texels, samp, c, shader, unnorm)
    got = run_wavelift(shader[len("sampling-") :], "gfx1030", mode, fmt, texels, samp, c, unnorm)
    compare(fmt, samp, c, got, want, case, bool(unnorm), _span(texels))


def assert_within_bound(fmt, g, w, what, span):
    """Decision 0025's bound for linear filtering against lavapipe: rgba8 within one 8-bit step
    (lavapipe filters 8-bit UNORM in 8-bit fixed point); float formats within 2**-9 per axis of
    the texels' span (lavapipe's weights are f32, the hardware's 8-bit: half a step each) plus
    2 ulp."""
    d = np.abs(g.astype(np.float64) - w.astype(np.float64))
    if fmt == "rgba8":
        assert d.max() <= 1 / 255 + 1e-6, (what, g, w)
    else:
        assert d.max() <= 2 * 2.0**-9 * span + 2 * np.spacing(np.abs(w)).max(), (what, g, w)


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_linear_on_the_subtexel_grid_equals_lavapipe_closely(mode, lavapipe_sample, tmp_path):
    """Coordinates on the 1/256-texel grid, where the hardware's 8-bit weights and lavapipe's
    f32 weights are the same numbers: rgba16f linear filtering then agrees within 4 ulp of the
    largest texel (lavapipe's f32 lerps against the f64 sum here), far inside the bound."""
    fmt, samp = "rgba16f", (LINEAR, LINEAR, NEAREST, REPEAT, MIRRORED, 0)
    texels = texels_for(fmt, 41)
    rng = np.random.default_rng(42)
    c = np.zeros((N, 4), np.float32)
    for axis, n in ((0, W), (1, H)):
        m = rng.integers(-300, 700, 4 * N)  # u * 256; the gathers' u - 0.5 kept clear of the window
        m = m[(m - 128) % 256 < 250][:N]
        c[:, axis] = m / np.float32(256 * n)
    want = run_lavapipe(lavapipe_sample, tmp_path, fmt, texels, samp, c)
    got = run_wavelift("w32", "gfx1030", mode, fmt, texels, samp, c)
    top = float(np.abs(texels.astype(np.float32)).max())
    g, w = got[:, :3].view(np.float32), want[:, :3].view(np.float32)
    assert np.isfinite(g).all() and np.isfinite(w).all()
    d = np.abs(g.astype(np.float64) - w.astype(np.float64))
    assert d.max() <= 4 * np.spacing(np.float32(top)), d.max()
