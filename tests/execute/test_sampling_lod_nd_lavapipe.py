"""image_get_lod of 1-D, 3-D and array images (decision 0041; the 2-D rule of decision 0036):
tests/fixtures/glsl/sampling/lodnd.comp (textureQueryLod of a sampler3D, sampler2DArray,
sampler1D, sampler1DArray under GL_NV_compute_shader_derivatives' linear quads) compiled by ACO
(command.txt; `image_get_lod ... dim:SQ_RSRC_IMG_3D` with three coordinates, `_2D_ARRAY` with
two and a layer operand, `_1D`, `_1D_ARRAY`) runs in wavelift (navi21 w32 wave and lane, navi10
w64 for 3-D; NumPy blocks and the native tier) with RADV's T#/S# for a tiled mip chain, and:

* equals the rule in NumPy: ρ = the largest texel-space derivative over the image's spatial
  axes (the layer takes no part), y = log2(ρ), x = y clamped to [minLod, maxLod] — within one
  f32 ulp (the backends' log2);
* 3-D and 2-D arrays: lavapipe runs the same SPIR-V on the same image, view and sampler, and
  equals the NumPy transcription of its own arithmetic (test_sampling_lod_lavapipe's model with
  the third axis: ρ = max over axes of max(|ds/dx|, |ds/dy|) × size, 0.5 × fast_log2(ρ²)); and
  wavelift is within lavapipe's LOD precision (0.0430) of it, never below.  1-D views are not
  in tools/lavapipe_run/lavapipe_sample.c's shapes: the 1-D cases check the rule alone (a 1-D
  ρ has no approximation to choose: max and sum of one derivative are equal).

The quads' derivatives are axis-aligned (each of d/dx, d/dy along one axis: other quads refuse,
decision 0036's window) and keep λ inside (-16, 16) and the clamped LOD within the view."""

from __future__ import annotations

import os
import struct
import subprocess

import numpy as np
import pytest
from test_sampling_lod_lavapipe import LVP_LOD_ERR, ts_fixed, ulps
from test_sampling_mips_lavapipe import (
    EDGE,
    FIX,
    LINEAR,
    LVP_ICD,
    MODE,
    REPEAT,
    VIEW_2D_ARRAY,
    VIEW_3D,
    VK_FORMAT,
    L,
    level_dims,
    radv_sampler,
    radv_tsharp,
)

import wavelift
from wavelift.driver.aco import IMAGE_FORMATS
from wavelift.memory import tsharp

N = 32

# name: (shader, type, size (w, h, depth or layers), levels, view base, view count, (minLod,
# maxLod), layout)
CASES = {
    "3d-16x8x8": ("3d", tsharp.TYPE_3D, (16, 8, 8), 4, 0, 4, (0.0, 1000.0), "64KB_S"),
    "3d-32x16x16-base1": ("3d", tsharp.TYPE_3D, (32, 16, 16), 5, 1, 3, (0.25, 2.5), "4KB_S"),
    "array2d-32x16x3": ("array2d", tsharp.TYPE_2D_ARRAY, (32, 16, 3), 5, 0, 5, (0.0, 1000.0), "64KB_S"),
    "1d-64": ("1d", tsharp.TYPE_1D, (64, 1, 1), 7, 0, 7, (0.0, 1000.0), "LINEAR"),
    "1d-64-base2": ("1d", tsharp.TYPE_1D, (64, 1, 1), 7, 2, 4, (0.5, 2.25), "LINEAR"),
    "array1d-64x4": ("array1d", tsharp.TYPE_1D_ARRAY, (64, 1, 4), 7, 0, 7, (0.0, 1000.0), "LINEAR"),
}
NSP = {"3d": 3, "array2d": 2, "1d": 1, "array1d": 1}


def native_default(test_id: str) -> bool:
    return "w32-gfx1030-wave" in test_id and ("3d-16x8x8" in test_id or "1d-64-" in test_id)


def view_dims(case):
    _sh, typ, (w, h, d), _levels, base, *_ = case
    bw, bh, bd = level_dims(w, h, d if typ == tsharp.TYPE_3D else 1, base)
    return (bw, bh, bd)[: NSP[case[0]]]


def quads(case, seed):
    """(N, 4) f32 inputs: 8 quads c, c + a e_i, c + b e_j, c + a e_i + b e_j (i, j spatial
    axes, i != j where there are two or more) whose texel-space derivatives keep λ in [-3,
    the view's last level - 0.1]; the layer (arrays) an integer."""
    sh, _typ, (w, h, d), _levels, base, count, (lo, hi), _ = case
    dims = view_dims(case)
    nsp = len(dims)
    rng = np.random.default_rng(seed)
    c = np.zeros((N, 4), np.float32)
    top = min(count - 1, hi) - 0.1
    for q in range(N // 4):
        lam = rng.uniform(-3.0, top)
        rho = 2.0**lam
        i = int(rng.integers(0, nsp))
        j = (i + 1 + int(rng.integers(0, nsp - 1))) % nsp if nsp > 1 else 0
        big = rho * rng.choice([-1, 1])
        small = rho * rng.uniform(0.05, 0.95) * rng.choice([-1, 1])
        da, db = (big, small) if q % 2 else (small, big)
        base_c = np.zeros(4, np.float32)
        base_c[:nsp] = rng.uniform(0.05, 0.9, nsp)
        if sh.startswith("array"):
            base_c[nsp] = rng.integers(0, d)  # the layer operand: s, layer (1-D) / s, t, layer
        ea, eb = np.zeros(4, np.float32), np.zeros(4, np.float32)
        ea[i] = da / dims[i]
        eb[j] = db / dims[j]
        c[4 * q : 4 * q + 4] = [base_c, base_c + ea, base_c + eb, base_c + ea + eb]
    return c


def rule(case, c):
    """The rule (decisions 0036, 0041) in NumPy: (x, y) per lane."""
    dims = view_dims(case)
    lo, hi = case[6]
    us = [(c[:, a] * np.float32(n)).astype(np.float32) for a, n in enumerate(dims)]
    out = np.zeros((N, 2), np.float32)
    for q in range(N // 4):
        i = 4 * q
        dv = [abs(np.float32(u[i + k] - u[i])) for u in us for k in (1, 2)]
        y = np.log2(np.float32(max(dv)))
        out[i : i + 4] = np.float32(min(max(y, ts_fixed(lo)), ts_fixed(hi))), y
    return out


def lavapipe_model(case, c):
    """lavapipe's textureQueryLod arithmetic (gallivm lp_build_rho / lp_build_lod_selector,
    test_sampling_lod_lavapipe.lavapipe_model) with every spatial axis."""
    dims = view_dims(case)
    lo, hi = case[6]
    out = np.zeros((N, 2), np.float32)
    for q in range(N // 4):
        i = 4 * q
        dd = []
        for axis, n in enumerate(dims):
            ddx = abs(np.float32(c[i + 1, axis] - c[i, axis]))
            ddy = abs(np.float32(c[i + 2, axis] - c[i, axis]))
            dd.append(np.float32(max(ddx, ddy) * np.float32(n)))
        rho = max(dd)
        m, e = np.frexp(np.float32(rho * rho))
        y = np.float32(np.float32(np.float32(e - 1) + (np.float32(2 * m) - np.float32(1))) * np.float32(0.5))
        out[i : i + 4] = np.float32(min(max(y, np.float32(lo)), np.float32(hi))), y
    return out


def image_levels(case):
    """Per level (slices or layers, h, w, 4) f16 zeros (the LOD does not read texels)."""
    _sh, typ, (w, h, d), levels, *_ = case
    out = []
    for m in range(levels):
        lw, lh, ld = level_dims(w, h, d, m)
        out.append(np.zeros((ld if typ == tsharp.TYPE_3D else d, lh, lw, 4), np.float16))
    return out


def run_lavapipe(exe, tmp_path, case, c):
    sh, typ, (w, h, d), levels, base, count, (lo, hi), _ = case
    view = VIEW_3D if typ == tsharp.TYPE_3D else VIEW_2D_ARRAY
    (tmp_path / "img.bin").write_bytes(b"".join(t.tobytes() for t in image_levels(case)))
    (tmp_path / "in.bin").write_bytes(c.tobytes())
    cmd = [str(exe), str(FIX / f"lodnd-{sh}-w32.spv"), str(tmp_path), "--groups", "1,1,1"]
    cmd += ["--image", f"0:0:{VK_FORMAT['rgba16f']}:{w}:{h}:{tmp_path / 'img.bin'}"]
    cmd += ["--shape", f"{view}:{d}:{d}:{levels}:{base}:{count}"]
    cmd += ["--sampler", f"{LINEAR}:{LINEAR}:{LINEAR}:{REPEAT}:{EDGE}:0:0", "--lod", f"{lo}:{hi}:0"]
    cmd += ["--binding", f"0:1:{16 * N}:{tmp_path / 'in.bin'}", "--binding", f"0:2:{8 * N}"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    return np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.float32).reshape(N, 2)


def run_wavelift(case, c, target="gfx1030", mode="wave", variant="w32"):
    sh, typ, (w, h, d), levels, base, count, (lo, hi), sw = case
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    shader = dev.load_aco_shader(str(FIX / f"lodnd-{sh}-{variant}.json"))
    fmt, bpp = IMAGE_FORMATS["rgba16f"]
    chip = L.Chip.from_gb_addr_config(
        dev.gb_addr_config, rbplus=target == "gfx1030", z_tail_fix=target != "gfx1010"
    )
    rsrc = {tsharp.TYPE_3D: L.RSRC_3D, tsharp.TYPE_1D: L.RSRC_1D, tsharp.TYPE_1D_ARRAY: L.RSRC_1D}.get(
        typ, L.RSRC_2D
    )
    s = L.Surface(MODE[sw], rsrc, bpp.bit_length() - 1, w, h, d, levels)
    assert L.supported(chip, s), sw
    info = L.surface_info(s, chip)
    addr = dev.alloc_window(info.slice_size * info.slices + 65536, "img", align=65536)
    inp = dev.upload(c)
    out = dev.upload(np.full((N, 2), 0x7FC0DEAD, np.uint32))
    rec = shader.prepare(groups=(1, 1, 1), buffers={(0, 1): inp, (0, 2): out})
    binding = next(b for b in shader.sets[0]["bindings"] if b["binding"] == 0)
    at = rec.extra["sets"][0] + int(binding["offset"])
    t = radv_tsharp(addr, fmt, w, h, d, typ, MODE[sw], levels, base, base + count - 1, (4, 5, 6, 7))
    samp = radv_sampler(LINEAR, LINEAR, LINEAR, REPEAT, EDGE, EDGE, lo, hi)
    dev.memory.write(at, struct.pack("<8I", *t))  # the T# at +0, the S# at +80 (RADV)
    dev.memory.write(at + 80, struct.pack("<4I", *samp))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    return res, dev.download(out, np.float32).reshape(N, 2)


RUNS = [
    (name, variant, target, mode)
    for name in sorted(CASES)
    for variant, target, mode in (
        [("w32", "gfx1030", "wave"), ("w32", "gfx1030", "lane")]
        + ([("navi10-w64", "gfx1010", "wave")] if CASES[name][0] == "3d" else [])
    )
]


@pytest.mark.tiers
@pytest.mark.parametrize("name,variant,target,mode", RUNS)
def test_get_lod_nd_equals_rule_and_lavapipe(name, variant, target, mode, lavapipe_sample, tmp_path):  # noqa: F811
    case = CASES[name]
    c = quads(case, 31 + sorted(CASES).index(name))
    res, got = run_wavelift(case, c, target, mode, variant)
    assert res.landed, res.refusal
    want = rule(case, c)
    assert ulps(got, want).max() <= 1, np.c_[got, want][::4]
    if case[0] in ("1d", "array1d"):
        return  # (no 1-D view in lavapipe_sample's shapes)
    lvp = run_lavapipe(lavapipe_sample, tmp_path, case, c)
    model = lavapipe_model(case, c)
    assert ulps(lvp, model).max() <= 1, np.c_[lvp, model][::4]
    d = np.abs(got.astype(np.float64) - lvp.astype(np.float64))
    assert d.max() <= LVP_LOD_ERR + 2.0**-16, (d.max(), np.c_[got, lvp][::4])
    assert (got.astype(np.float64) >= lvp.astype(np.float64) - 2.0**-16).all()


def test_get_lod_3d_quad_not_axis_aligned_refused():
    """d/dx along two axes: Vulkan's approximations of ρ (max, sum) differ: refused per lane."""
    case = CASES["3d-16x8x8"]
    c = np.full((N, 4), 0.5, np.float32)
    c[1::4, :3] += np.float32([2 / 16, 0, 2 / 8])  # d/dx = (2, 0, 2) texels
    c[2::4, 1] += np.float32(1 / 8)  # d/dy = (0, 1, 0)
    c[3::4, :3] += np.float32([2 / 16, 1 / 8, 2 / 8])
    res, _ = run_wavelift(case, c)
    assert res.refusal is not None and res.refusal.code == "image.sampling_precision", res.refusal
