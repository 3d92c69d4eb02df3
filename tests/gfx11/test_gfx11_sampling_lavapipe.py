"""GFX11 sampling against lavapipe (decision 0044): ACO's gfx1100 builds of
tests/fixtures/glsl/sampling.comp (textureLod at LOD 0 and at a per-invocation LOD,
textureLodOffset, textureGather, textureGatherOffset; -DUINT, -DUNNORM) and of
tests/fixtures/gfx1100/sampling/grad.comp (textureGrad / textureGradOffset: image_sample_d,
image_sample_d_o, and gathers of other channels), committed with command.txt, run in wavelift on
gfx1100 with the GFX11 T# and S# RADV writes for the VkImage/VkSampler (wavelift.driver.aco's
GFX11 T# of a linear image; the S# radv_init_sampler writes, laid out with GFX11's fields), and
the same SPIR-V on lavapipe (tools/lavapipe_run/lavapipe_sample.c) with the same image and
sampler.  The comparisons are the GFX10.3 test's (tests/execute/test_sampling_lavapipe.py
``compare``): point samples and gathers equal (rgba16f and R8G8B8A8_UINT bit for bit, rgba8
within lavapipe's one-ulp UNORM reads), linear filtering within decision 0025's bound."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from testpaths import ROOT

import wavelift
from tests.execute import test_sampling_lavapipe as lv
from tests.execute.conftest import lavapipe_sample  # noqa: F401  (the fixture)
from wavelift.driver.aco import Image, image_descriptor
from wavelift.memory import ssharp

FIX = ROOT / "tests/fixtures/gfx1100/sampling"
pytestmark = lv.pytestmark


def radv_sampler11(*samp, unnorm=0):
    """The S# radv_init_sampler writes on GFX11 for the sampler: GFX10.3's fields and values
    (tests/execute/test_sampling_lavapipe.py radv_sampler), placed with GFX11's fields
    (BORDER_COLOR_PTR 0 here: no custom colour)."""
    fields = ssharp.decode(lv.radv_sampler(*samp, unnorm))
    return ssharp.encode(gfx11=True, **{k: v for k, v in fields.items() if v})


def run_wavelift11(shader, mode, fmt, texels, samp, c, unnorm=0):
    dev = wavelift.Device("gfx1100", backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(FIX / f"{shader}.json"))
    bpp = texels.dtype.itemsize * 4
    pitch = -(-lv.W * bpp // 256) * 256 // bpp
    img = np.zeros((lv.H, pitch, 4), texels.dtype)
    img[:, : lv.W] = texels
    src = dev.upload(img.reshape(-1).view(np.uint8))
    inp = dev.upload(c)
    out = dev.upload(np.full((lv.N, 5, 4), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(1, 1, 1), buffers={(0, 1): inp, (0, 2): out})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    assert binding["type"] == "combined_image_sampler"
    at = rec.extra["sets"][0] + int(binding["offset"])
    t = image_descriptor(Image(src, lv.W, lv.H, fmt), True)
    dev.memory.write(at, struct.pack("<8I", *t))  # the T# at +0, the S# at +80 (RADV)
    dev.memory.write(at + 80, struct.pack("<4I", *radv_sampler11(*samp, unnorm=unnorm)))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    assert res.landed, res.refusal
    return dev.download(out, np.uint32).reshape(lv.N, 5, 4)


def _lavapipe(monkeypatch, exe, tmp_path, fmt, texels, samp, c, shader, unnorm=0):
    monkeypatch.setattr(lv, "FIX", FIX)  # the SPIR-V beside the gfx1100 build
    return lv.run_lavapipe(exe, tmp_path, fmt, texels, samp, c, shader, unnorm)


def test_sampling_spirv_is_the_gfx1030_tests():
    """The SPIR-V aco-compile wrote for gfx1100 is the GFX10.3 tests' byte for byte (one
    shader, two targets)."""
    for v in ("sampling-w32", "sampling-uint-w32", "sampling-unnorm-w32", "half-w32"):
        assert (FIX / f"{v}.spv").read_bytes() == (lv.FIX / f"{v}.spv").read_bytes(), v


# default run: lane mode; wave mode with -m slow
MODES = ["lane", pytest.param("wave", marks=pytest.mark.slow)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(lv.CASES))
def test_gfx11_sampling_equals_lavapipe(case, mode, lavapipe_sample, tmp_path, monkeypatch):  # noqa: F811
    """image_sample_lz/_l/_lz_o, image_gather4_lz/_lz_o (the GFX10.3 test's cases and inputs)."""
    fmt, samp = lv.CASES[case]
    seed = sorted(lv.CASES).index(case)
    texels = lv.texels_for(fmt, seed)
    c = lv.inputs(seed + 100)
    want = _lavapipe(monkeypatch, lavapipe_sample, tmp_path, fmt, texels, samp, c, "sampling-w32")
    got = run_wavelift11("sampling-w32", mode, fmt, texels, samp, c)
    lv.compare(fmt, samp, c, got, want, case, span=lv._span(texels))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(lv.EXTRA))
def test_gfx11_integer_and_unnormalized_sampling_equals_lavapipe(
    case,
    mode,
    lavapipe_sample,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    """usampler2D on R8G8B8A8_UINT (border colours in integer form), unnormalized coordinates."""
    shader, fmt, samp, unnorm = lv.EXTRA[case]
    seed = 50 + sorted(lv.EXTRA).index(case)
    texels = lv.texels_for(fmt, seed)
    c = lv.inputs(seed + 100, bool(unnorm))
    want = _lavapipe(monkeypatch, lavapipe_sample, tmp_path, fmt, texels, samp, c, shader, unnorm)
    got = run_wavelift11(shader, mode, fmt, texels, samp, c, unnorm)
    lv.compare(fmt, samp, c, got, want, case, bool(unnorm), lv._span(texels))


# grad.comp: one filter for min and mag (the derivatives' LOD then chooses nothing on a one-level
# image; lv.compare's filter choice for row 1 assumes sampling.comp's LOD row)
GRAD_CASES = sorted(k for k, (_f, s) in lv.CASES.items() if s[0] == s[1])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", GRAD_CASES)
def test_gfx11_grad_sampling_equals_lavapipe(case, mode, lavapipe_sample, tmp_path, monkeypatch):  # noqa: F811
    """image_sample_d and image_sample_d_o (6 and 7 address dwords) and gathers of channels y
    and z."""
    fmt, samp = lv.CASES[case]
    seed = 20 + sorted(lv.CASES).index(case)
    texels = lv.texels_for(fmt, seed)
    c = lv.inputs(seed + 100)
    # row 2 samples at (t, s): keep those clear of the precision windows too
    keep = [k for k in range(lv.N) if lv._clear(float(c[k, 1] * lv.W)) and lv._clear(float(c[k, 0] * lv.H))]
    c = c[keep * (lv.N // len(keep) + 1)][: lv.N].copy()
    want = _lavapipe(monkeypatch, lavapipe_sample, tmp_path, fmt, texels, samp, c, "grad-w32")
    got = run_wavelift11("grad-w32", mode, fmt, texels, samp, c)
    lv.compare(fmt, samp, c, got, want, case, span=lv._span(texels))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    "case", ["rgba8-nearest-repeat", "rgba16f-nearest-border-white", "rgba8-linear-mirror-edge"]
)
def test_gfx11_d16_a16_sampling_equals_lavapipe_and_numpy(
    case,
    mode,
    lavapipe_sample,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    """half.comp's d16 and a16 lookups (image_sample_lz d16 / a16, image_sample_l a16 in NSA,
    image_gather4_lz d16, a16 d16) on gfx1100, by the GFX10.3 test's checks
    (tests/execute/test_sampling_half_lavapipe.py): d16 rows are the f32 lookups (sampling.comp
    on gfx1100) rounded to f16, a16 rows the f32 lookups at the widened coordinates, bit for
    bit; lavapipe's answers within its one-ulp UNORM reads (point, gathers) or decision 0025's
    bound (linear)."""
    from tests.execute import test_sampling_half_lavapipe as hf

    fmt, samp = hf.CASES[case]
    seed = 7 + sorted(hf.CASES).index(case)
    texels = lv.texels_for(fmt, seed)
    c = lv.inputs(seed + 100)
    got = run_wavelift11("half-w32", mode, fmt, texels, samp, c)
    want = _lavapipe(monkeypatch, lavapipe_sample, tmp_path, fmt, texels, samp, c, "half-w32")
    f32 = run_wavelift11("sampling-w32", mode, fmt, texels, samp, c)
    c16 = c.copy()
    c16[:, :3] = c[:, :3].astype(np.float16).astype(np.float32)
    f32_at16 = run_wavelift11("sampling-w32", mode, fmt, texels, samp, c16)
    np.testing.assert_array_equal(hf.halves(got[:, 0]).view(np.uint16), hf.f16_of(f32[:, 0]).view(np.uint16))
    np.testing.assert_array_equal(got[:, 1], f32_at16[:, 0])
    np.testing.assert_array_equal(got[:, 3], f32_at16[:, 1])
    assert (got[:, [0, 2, 4], 2:] == 0).all()
    tol = 1 if fmt == "rgba8" else 0
    for r in (2, 4):
        assert hf.f16_ulps(hf.halves(got[:, r]), hf.halves(want[:, r])).max() <= tol, (case, r)
    if samp[0] == samp[1] == lv.NEAREST:
        assert hf.f16_ulps(hf.halves(got[:, 0]), hf.halves(want[:, 0])).max() <= tol, case
        for r in (1, 3):
            assert np.abs(got[:, r].astype(np.int64) - want[:, r].astype(np.int64)).max() <= tol, (case, r)
    else:
        g0, w0 = hf.halves(got[:, 0]).astype(np.float64), hf.halves(want[:, 0]).astype(np.float64)
        assert np.abs(g0 - w0).max() <= 1 / 255 + 2.0**-11 + 1e-6, case
        for r in (1, 3):
            d = np.abs(got[:, r].view(np.float32).astype(np.float64) - want[:, r].view(np.float32))
            assert d.max() <= 1 / 255 + 1e-6, (case, r)
