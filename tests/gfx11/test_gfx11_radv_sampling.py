"""GFX11 sampling (decision 0044) against RADV's own gfx1100 stream and lavapipe.

The captures: tests/fixtures/radv_images/img_sample.comp and img_mipsample.comp, recorded with
Mesa 22.3.6 RADV on its null device (RADV_FORCE_FAMILY=gfx1100, Navi31's GB_ADDR_CONFIG 0x545;
the commands in tests/fixtures/gfx1100/radv_images/<name>/command.txt), so every T# and S# is the
one RADV writes for GFX11 and every sample instruction is ACO's gfx1100 encoding (MIMG with
GFX11's NSA).  Each replay must land, and the read-back equals lavapipe's answer for the same
application and data (tests/fixtures/radv_images/lavapipe/, committed with the GFX10.3
captures) by the checks the GFX10.3 captures pass (tests/execute/test_radv_images.py
check_sample / check_mipsample: bit for bit where the texels are determined, decision 0025's
bound for linear filtering, NumPy references and, for the trilinear lookups, decision 0025's
rule bit for bit); every image's texels at GFX11's addresses (decision 0039's placement check).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.execute import test_radv_images as r10
from tests.gfx11 import test_gfx11_radv_images as r11
from wavelift.memory import ssharp, tsharp

SAMPLE, MIPSAMPLE = "img_sample-gfx1100-w32", "img_mipsample-gfx1100-w32"
# VkSamplerAddressMode -> SQ_TEX_CLAMP (radv_tex_wrap); VkFilter -> SQ_TEX_XY_FILTER
WRAP = {0: "WRAP", 1: "MIRROR", 2: "CLAMP_LAST_TEXEL"}
XY = {0: "POINT", 1: "BILINEAR"}


def _gfx11(monkeypatch):
    """Point the GFX10.3 checks at the GFX11 capture directories: the replay (every dispatch
    must land) and the placement check with GFX11's chip."""
    monkeypatch.setattr(r10, "replayed", r11._replayed)
    monkeypatch.setattr(r10, "check_placement", r11._placement)


def check_sample(mode, tmp_path, monkeypatch):
    """texelFetch and textureLod (image_load, image_sample_lz) of combined image samplers,
    nearest and linear, 2-D (rgba8 4KB_D_X), 2-D array (rgba16f), 3-D (r32f 4KB_S_X)."""
    _gfx11(monkeypatch)
    r10.check_sample(SAMPLE, mode, tmp_path)
    cap, _ = r11._replayed(SAMPLE, mode, tmp_path)
    r11._placement(cap, SAMPLE)


def check_mipsample(mode, tmp_path, monkeypatch):
    """textureLod (image_sample_l) over full chains: the 128x128 rgba8 chain (64KB_R_X with its
    tail) nearest and trilinear, a 32x32 rgba8 cube of 6 levels point and linear, a 32x32x3 r32f
    array of 6 levels; texelFetch per level."""
    _gfx11(monkeypatch)
    r10.check_mipsample(MIPSAMPLE, mode, tmp_path)


CHECKS = {"img_sample": check_sample, "img_mipsample": check_mipsample}


def _samplers(name):
    """{binding: (mag, min, mip, u, v, w)} from the capture's --sampler options."""
    cmd = (r11.FIX / "radv_images" / name / "command.txt").read_text()
    return {
        int(m[0]): tuple(int(x) for x in m[1:])
        for m in re.findall(r"--sampler 0:(\d+):(\d+):(\d+):(\d+):(\d+):(\d+):(\d+)", cmd)
    }


@pytest.mark.parametrize("name", [SAMPLE, MIPSAMPLE])
def test_radv_gfx11_ssharps_read_with_gfx11_fields(name, tmp_path):
    """Every combined image sampler RADV wrote for the shader (the T# at +0, the S# at +80 of its
    96-byte descriptor) read with GFX11's S# fields (memory/ssharp.py, gfx11-rsrc.json) gives
    the sampler the capture asked for (filters, mip filter, address modes; radv_init_sampler's
    mapping), RADV's LOD range (MIN_LOD 0, MAX_LOD 15 in 4.8), no bit GFX11 names no field
    for, and BORDER_COLOR_PTR (word 3 [29:18] on GFX11) 0; the T# has GFX11's fields only."""
    cap = r11._fresh(name, tmp_path)
    binding = r11._bindings(name)
    images = {int(f["va"], 16) & ((1 << 48) - 1): k for k, f in binding.items() if "readback_va" in f}
    want = _samplers(name)
    clamp, xy = ssharp.enum("SQ_TEX_CLAMP"), ssharp.enum("SQ_TEX_XY_FILTER")
    mip = ssharp.enum("SQ_TEX_MIP_FILTER")
    # the descriptor set: the allocation holding one T# of each sampled binding (RADV's meta
    # copies' descriptors, views of one level or layer each, lie in another, several an image)
    found: dict[int, int] = {}
    for a in cap.memory.allocations:
        if a.data.size % 4:
            continue
        words = a.data.view(np.uint32)
        hits: dict[int, list[int]] = {}
        for i in range(0, len(words) - 23, 8):  # descriptors: 32-byte aligned
            d = words[i : i + 8]
            k = images.get((int(d[0]) | (int(d[1]) & 0xFF) << 32) << 8)
            if k in want and r11._f(d, "TYPE") >= 8:
                hits.setdefault(k, []).append(i)
        if set(hits) != set(want) or any(len(v) != 1 for v in hits.values()):
            continue
        for k, (i,) in hits.items():
            d, s_words = words[i : i + 8], words[i + 20 : i + 24]
            s = ssharp.decode(s_words, gfx11=True)
            mag, mn, mf, u, v, w = want[k]
            assert (s["XY_MAG_FILTER"], s["XY_MIN_FILTER"]) == (xy[XY[mag]], xy[XY[mn]]), (name, k)
            assert s["MIP_FILTER"] == mip["POINT" if mf == 0 else "LINEAR"], (name, k)
            assert [s["CLAMP_X"], s["CLAMP_Y"], s["CLAMP_Z"]] == [clamp[WRAP[x]] for x in (u, v, w)]
            assert (s["MIN_LOD"], s["MAX_LOD"], s["BORDER_COLOR_PTR"]) == (0, 15 * 256, 0)
            for wd, bits in ssharp.reserved(gfx11=True).items():
                assert int(s_words[wd]) & bits == 0, (name, k, wd)
            for wd, bits in tsharp.reserved11().items():
                assert int(d[wd]) & bits == 0, (name, k, wd)
            found[k] = i
    assert set(found) == set(want), (found, want)


# default run: one mode each (lane: the mip chains' replay is the longer one); every mode and
# tier with -m slow
@pytest.mark.parametrize("shader,mode", [("img_sample", "wave"), ("img_mipsample", "lane")])
def test_radv_gfx11_sampling_capture(shader, mode, tmp_path, monkeypatch):
    """Every dispatch of RADV's GFX11 sampling captures lands and gives lavapipe's answer by the
    GFX10.3 captures' checks (NumPy blocks)."""
    CHECKS[shader](mode, tmp_path, monkeypatch)


@pytest.mark.slow
@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("shader", list(CHECKS))
def test_radv_gfx11_sampling_capture_every_tier(shader, mode, tmp_path, monkeypatch):
    CHECKS[shader](mode, tmp_path, monkeypatch)


@pytest.mark.cuda
@pytest.mark.parametrize("shader", list(CHECKS))
def test_radv_gfx11_sampling_capture_on_cuda(shader, tmp_path, monkeypatch):
    """The same captures and checks on the CUDA backend (lane mode)."""
    from wavelift.backends.cuda import _gpu_problem

    if why := _gpu_problem():
        pytest.skip(f"no CUDA device: {why}")
    monkeypatch.setattr(r11, "BACKEND", "cuda")
    CHECKS[shader]("lane", tmp_path, monkeypatch)
