"""GFX11 sampling of mip chains, arrays and depth compares against lavapipe (decision 0044):
ACO's gfx1100 builds of tests/fixtures/glsl/sampling/mip.comp (textureLod, textureLodOffset,
textureGrad, texture; -DARRAY, -DTEX3D) and shadow.comp (sampler2DShadow: image_sample_c_l, _c_l_o,
image_gather4_c_lz, image_sample_c_d) (tests/fixtures/gfx1100/sampling/command.txt) run in
wavelift on gfx1100 over mip chains laid out in GFX11's modes (64KB_R_X, 4KB_D_X, 64KB_Z_X on
Navi31's GB_ADDR_CONFIG, linear; layout.Chip gfx11) with the GFX11 T# RADV writes and the S#
radv_init_sampler writes (GFX11's fields), and on lavapipe with the same SPIR-V, image, view and
sampler.  The cases and the comparison are the GFX10.3 test's
(tests/execute/test_sampling_mips_lavapipe.py CHECKED, ``compare``): point sampling and nearest
mips bit for bit, linear filtering and linear mip blends within decision 0025's bound.  3-D
images in GFX11's 3-D 64KB_S_X (thick) mode."""

from __future__ import annotations

import copy
import os
import struct

import numpy as np
import pytest
from gfx11_rig import radv_tsharp11
from tiled_upload import tiled_levels

import tests.execute.conftest  # noqa: F401  (puts tests/execute on sys.path for the modules below)
import wavelift
from tests.execute import test_sampling_mips_lavapipe as mips
from tests.execute.conftest import lavapipe_sample  # noqa: F401  (the fixture)
from tests.gfx11.test_gfx11_sampling_lavapipe import FIX
from wavelift.driver.aco import IMAGE_FORMATS
from wavelift.memory import layout as L
from wavelift.memory import ssharp, tsharp

pytestmark = pytest.mark.skipif(not os.path.exists(mips.LVP_ICD), reason="lavapipe missing")
MODE11 = {n: v for v, n in L.sw_mode_names(True).items()}
# GFX10.3's modes -> GFX11's for these 2-D images (GFX11 has no 2-D S modes)
SW11 = {"64KB_S": "64KB_R_X", "4KB_S": "4KB_D_X", "LINEAR": "LINEAR"}
NAMES = list(mips.CHECKED)


def case11(name):
    c = copy.copy(mips.CASES[name])
    if c.view == mips.VIEW_3D:
        c.sw_mode = "64KB_S_X"
    else:
        c.sw_mode = "64KB_Z_X" if c.fmt == "d32" else SW11[c.sw_mode]
    return c


def run_wavelift11(case, tex, c, mode, nres=4):
    dev = wavelift.Device("gfx1100", backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(FIX / f"{case.shader}.json"))
    glsl = {"rgba16f": "rgba16f", "d32": "r32f"}[case.fmt]
    fmt, bpp = IMAGE_FORMATS[glsl]
    chip = L.Chip.from_gb_addr_config(dev.gb_addr_config, rbplus=True, gfx11=True)
    rsrc = L.RSRC_3D if case.view == mips.VIEW_3D else L.RSRC_2D
    s = L.Surface(MODE11[case.sw_mode], rsrc, bpp.bit_length() - 1, case.w, case.h, case.d, case.levels)
    assert L.supported(chip, s), case.sw_mode
    mem = tiled_levels(chip, s, tex, bpp)
    addr = dev.alloc_window(mem.size, "img", align=65536, data=mem.tobytes())
    inp = dev.upload(c)
    out = dev.upload(np.full((mips.N, nres, 4), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(1, 1, 1), buffers={(0, 1): inp, (0, 2): out})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    at = rec.extra["sets"][0] + int(binding["offset"])
    typ = {
        mips.VIEW_2D: tsharp.TYPE_2D,
        mips.VIEW_3D: tsharp.TYPE_3D,
        mips.VIEW_2D_ARRAY: tsharp.TYPE_2D_ARRAY,
    }[case.view]
    sel = (4, 0, 0, 1) if case.fmt == "d32" else (4, 5, 6, 7)
    t = radv_tsharp11(
        addr, fmt, case.w, case.h, case.d, typ, MODE11[case.sw_mode], case.levels, case.base,
        case.base + case.count - 1, sel,
    )  # fmt: skip
    mag, mn, mip, au, av, aw = case.samp[:6]
    lo, hi = case.samp_lod
    fields = ssharp.decode(mips.radv_sampler(mag, mn, mip, au, av, aw, lo, hi, case.compare))
    samp = ssharp.encode(gfx11=True, **{k: v for k, v in fields.items() if v})
    dev.memory.write(at, struct.pack("<8I", *t))  # the T# at +0, the S# at +80 (RADV)
    dev.memory.write(at + 80, struct.pack("<4I", *samp))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    assert res.landed, res.refusal
    return dev.download(out, np.uint32).reshape(mips.N, nres, 4)


@pytest.mark.parametrize("mode", ["lane", pytest.param("wave", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", NAMES)
def test_gfx11_mips_arrays_compare_equal_lavapipe(name, mode, lavapipe_sample, tmp_path, monkeypatch):  # noqa: F811
    case = case11(name)
    tex = mips.texels(case)
    c = mips.inputs(case)
    if case.fmt == "d32":  # the GFX10.3 test's references
        c[:, 3] = np.random.default_rng(case.seed).choice([0.0, 0.25, 0.5, 0.75, 1.0, -0.5, 1.5], mips.N)
        c[: mips.N // 2, 3] = tex[0].reshape(-1)[: mips.N // 2]
    monkeypatch.setattr(mips, "FIX", FIX)  # the SPIR-V beside the gfx1100 build
    want = mips.run_lavapipe(lavapipe_sample, tmp_path, case, tex, c)
    got = run_wavelift11(case, tex, c, mode)
    mips.compare(case, c, tex, got, want)


def test_mip_spirv_is_the_gfx1030_tests():
    """The gfx1100 builds' SPIR-V is the GFX10.3 tests' byte for byte (one shader, two targets)."""
    for v in ("mip-w32", "mip-array-w32", "mip-3d-w32", "shadow-w32", "grad16-w32"):
        assert (FIX / f"{v}.spv").read_bytes() == (mips.FIX / f"{v}.spv").read_bytes(), v


@pytest.mark.parametrize("mode", ["lane", pytest.param("wave", marks=pytest.mark.slow)])
@pytest.mark.parametrize("samp", ["point", "linear"])
def test_gfx11_g16_a16_derivative_bias_forms_equal_32bit_and_lavapipe(
    samp,
    mode,
    lavapipe_sample,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    """grad16.comp (image_sample_d, _d_g16, their a16 forms, _d_o, _d_o_g16, image_sample_b and
    its a16 form with the LOD from the quad's derivatives) on a 16x8 rgba16f chain of 5 levels
    in GFX11's 4KB_D_X / 64KB_R_X: the 16-bit forms equal their 32-bit forms bit for bit, and
    lavapipe (point bit for bit, linear within decision 0025's bound) -- the GFX10.3 test's
    checks (tests/execute/test_sampling_g16_lavapipe.py)."""
    from tests.execute import test_sampling_g16_lavapipe as g16

    case = g16.make_case(samp, sw="4KB_S" if samp == "linear" else "64KB_S")
    case.sw_mode = SW11[case.sw_mode]
    tex = mips.texels(case)
    c = g16.inputs(17 + ["linear", "point"].index(samp))
    got = run_wavelift11(case, tex, c, mode, nres=g16.NRES)
    for row, ref in ((1, 0), (2, 0), (3, 0), (5, 4), (7, 6)):
        np.testing.assert_array_equal(got[:, row], got[:, ref], err_msg=f"row {row} vs {ref}")
    monkeypatch.setattr(mips, "FIX", FIX)
    want = mips.run_lavapipe(lavapipe_sample, tmp_path, case, tex, c, nres=g16.NRES)
    if samp == "point":
        np.testing.assert_array_equal(got, want)
    else:
        span = max(float(np.ptp(t.astype(np.float64))) for t in tex)
        g, w = got.view(np.float32).astype(np.float64), want.view(np.float32).astype(np.float64)
        bound = 2 * 2.0**-9 * span + 4 * float(np.spacing(np.float32(np.abs(w).max())))
        assert np.abs(g - w).max() <= bound, (np.abs(g - w).max(), bound)
