"""GFX11 image_get_lod against lavapipe and the rule (decision 0044): ACO's gfx1100 build of
tests/fixtures/glsl/sampling/lod.comp (textureQueryLod under GL_NV_compute_shader_derivatives'
linear quads; tests/fixtures/gfx1100/sampling/command.txt) runs in wavelift on gfx1100 with the
GFX11 T# RADV writes for a mip chain laid out in GFX11's modes (4KB_D_X, 64KB_R_X on Navi31's
GB_ADDR_CONFIG, linear; layout.Chip gfx11) and the S# radv_init_sampler writes, laid out with
GFX11's fields; lavapipe runs the same SPIR-V with the same image, view and sampler.  The checks
are the GFX10.3 test's (tests/execute/test_sampling_lod_lavapipe.py): wavelift equals the rule
in NumPy within one ulp, lavapipe its own model, and the two agree within lavapipe's LOD
precision."""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest
from gfx11_rig import radv_tsharp11
from tiled_upload import tiled_levels

import tests.execute.conftest  # noqa: F401  (puts tests/execute on sys.path for the modules below)
import wavelift
from tests.execute import test_sampling_lod_lavapipe as lod
from tests.execute import test_sampling_mips_lavapipe as mips
from tests.execute.conftest import lavapipe_sample  # noqa: F401  (the fixture)
from tests.gfx11.test_gfx11_sampling_lavapipe import FIX
from wavelift.driver.aco import IMAGE_FORMATS
from wavelift.memory import layout as L
from wavelift.memory import ssharp, tsharp

pytestmark = pytest.mark.skipif(not os.path.exists(mips.LVP_ICD), reason="lavapipe missing")
MODE11 = {n: v for v, n in L.sw_mode_names(True).items()}
# the GFX10.3 test's cases in GFX11's modes (GFX11 has no 2-D S modes)
CASES = {
    "16x16-all-levels-64KB_R_X": ((16, 16), 5, 0, 5, (0.0, 1000.0), "64KB_R_X"),
    "32x8-base1-clamped-4KB_D_X": ((32, 8), 6, 1, 4, (0.5, 2.75), "4KB_D_X"),
    "64x32-linear-layout": ((64, 32), 7, 0, 7, (0.0, 1000.0), "LINEAR"),
}


def run_wavelift11(case, tex, c, mode):
    (w, h), levels, base, count, (lo, hi), sw = case
    dev = wavelift.Device("gfx1100", backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(FIX / "lod-w32.json"))
    fmt, bpp = IMAGE_FORMATS["rgba16f"]
    chip = L.Chip.from_gb_addr_config(dev.gb_addr_config, rbplus=True, gfx11=True)
    s = L.Surface(MODE11[sw], L.RSRC_2D, bpp.bit_length() - 1, w, h, 1, levels)
    assert L.supported(chip, s), sw
    mem = tiled_levels(chip, s, tex, bpp)
    addr = dev.alloc_window(mem.size, "img", align=65536, data=mem.tobytes())
    inp = dev.upload(c)
    out = dev.upload(np.full((lod.N, 2), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(1, 1, 1), buffers={(0, 1): inp, (0, 2): out})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    at = rec.extra["sets"][0] + int(binding["offset"])
    t = radv_tsharp11(
        addr, fmt, w, h, 1, tsharp.TYPE_2D, MODE11[sw], levels, base, base + count - 1, (4, 5, 6, 7)
    )
    samp10 = mips.radv_sampler(
        mips.LINEAR, mips.LINEAR, mips.LINEAR, mips.REPEAT, mips.EDGE, mips.EDGE, lo, hi
    )
    fields = ssharp.decode(samp10)
    samp = ssharp.encode(gfx11=True, **{k: v for k, v in fields.items() if v})
    dev.memory.write(at, struct.pack("<8I", *t))  # the T# at +0, the S# at +80 (RADV)
    dev.memory.write(at + 80, struct.pack("<4I", *samp))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    return res, dev.download(out, np.float32).reshape(lod.N, 2)


@pytest.mark.parametrize("mode", ["lane", pytest.param("wave", marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", sorted(CASES))
def test_gfx11_get_lod_equals_rule_and_lavapipe(name, mode, lavapipe_sample, tmp_path, monkeypatch):  # noqa: F811
    case = CASES[name]
    seed = 11 + sorted(CASES).index(name)
    tex = lod.image_bytes(case, seed)
    c = lod.quads(case, seed + 50)
    res, got = run_wavelift11(case, tex, c, mode)
    assert res.landed, res.refusal
    want = lod.rule(case, c)
    assert lod.ulps(got, want).max() <= 1, np.c_[got, want][::4]
    monkeypatch.setattr(lod, "FIX", FIX)  # the SPIR-V beside the gfx1100 build
    lvp = lod.run_lavapipe(lavapipe_sample, tmp_path, case, tex, c, "lod-w32")
    assert lod.ulps(lvp, lod.lavapipe_model(case, c)).max() <= 1
    d = np.abs(got.astype(np.float64) - lvp.astype(np.float64))
    assert d.max() <= lod.LVP_LOD_ERR + 2.0**-16, (d.max(), np.c_[got, lvp][::4])
    assert (got.astype(np.float64) >= lvp.astype(np.float64) - 2.0**-16).all()


def test_lod_spirv_is_the_gfx1030_tests():
    """The gfx1100 build's SPIR-V is the GFX10.3 test's byte for byte (one shader, two targets)."""
    assert (FIX / "lod-w32.spv").read_bytes() == (mips.FIX / "lod-w32.spv").read_bytes()
