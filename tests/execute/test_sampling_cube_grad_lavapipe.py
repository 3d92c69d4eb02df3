"""Cube sampling with explicit derivatives (decision 0041): tests/fixtures/glsl/sampling/
cubegrad.comp (textureGrad of a samplerCube) compiled by ACO (command.txt): ACO turns the
direction's derivatives into face space itself — v_cubema/v_cubesc/v_cubetc and the quotient
rule, d(sc / |ma|) = (dsc - sc d|ma| / |ma|) / |ma| (|ma| = 2 x the major axis) — and passes
those, the face coordinates and the face id to `image_sample_d ... dim:SQ_RSRC_IMG_CUBE`.  The
hardware's LOD is then the 2-D rule on the face-space derivatives in texel space of the face
(Mesa's compilers transform the derivatives because the hardware does not: RADV's textureGrad
on cubes is correct only so).

On a 16x16 cube of 5 levels (linear and 64KB_S layouts), point filters and a nearest mip
filter, wavelift (navi21 w32 wave and lane, navi10 w64; NumPy blocks and the native tier) equals
a NumPy reference of Vulkan's rule (face selection, the cube derivative formula, ρ, the nearest
level, the texel) and lavapipe bit for bit, on inputs whose level every approximation of ρ
(Vulkan's max to sum, lavapipe's LOD precision 0.043) selects alike and whose texel is clear of
the 2**-7 window."""

from __future__ import annotations

import math
import os
import shutil
import subprocess

import numpy as np
import pytest
from test_sampling_cube_lavapipe import CUBE_VIEW, face_coords, run_cube_mips
from test_sampling_lavapipe import EDGE, LVP_ICD, NEAREST, VK_HEADER
from testpaths import ROOT

from wavelift.memory import layout as L

pytestmark = pytest.mark.skipif(
    not (os.path.exists(LVP_ICD) and os.path.exists(VK_HEADER) and shutil.which("gcc")),
    reason="lavapipe, the Vulkan headers or gcc missing",
)
FIX = ROOT / "tests/fixtures/glsl/sampling"
S0, LEVELS, N = 16, 5, 64


def face_derivs(d, dd, aco=False):
    """Vulkan's cube map derivatives (the spec's "Cube Map Derivatives"): (ds/dP, dt/dP) of the
    face coordinates in [0, 1] along the direction derivative ``dd`` (f64).  ``aco``: ACO
    22.3's transform instead, |d ma| for d|ma|."""
    x, y, z = d
    dx, dy, dz = dd
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax >= ay and ax >= az:
        sc, tc, rc, dsc, dtc, drc = (-z, -y, x, -dz, -dy, dx) if x > 0 else (z, -y, x, dz, -dy, dx)
    elif ay >= az:
        sc, tc, rc, dsc, dtc, drc = (x, z, y, dx, dz, dy) if y > 0 else (x, -z, y, dx, -dz, dy)
    else:
        sc, tc, rc, dsc, dtc, drc = (x, -y, z, dx, -dy, dz) if z > 0 else (-x, -y, z, -dx, -dy, dz)
    m = abs(rc)
    dm = abs(drc) if aco else math.copysign(1.0, rc) * drc
    return 0.5 * (dsc / m - sc * dm / m**2), 0.5 * (dtc / m - tc * dm / m**2)


def lambdas(c, k, aco=False):
    """(λ from the max approximation of ρ, λ from the sum) for invocation k, texel space of
    level 0."""
    d = c[3 * k, :3].astype(np.float64)
    gx = face_derivs(d, c[3 * k + 1, :3].astype(np.float64), aco)
    gy = face_derivs(d, c[3 * k + 2, :3].astype(np.float64), aco)
    lo = max(max(abs(v) for v in gx), max(abs(v) for v in gy)) * S0
    hi = max(sum(abs(v) for v in gx), sum(abs(v) for v in gy)) * S0
    return math.log2(lo), math.log2(hi)


def level_of(lam):
    return int(math.floor(min(max(lam, 0.0), LEVELS - 1) + 0.5))


def inputs(seed, shrinking=False):
    """N (direction, dP/dx, dP/dy): the level alike for λ in [λmax - 0.07, λsum + 0.07] (clear
    of k + 0.5), the face texel of that level clear of the window, no tie of the major axis."""
    rng = np.random.default_rng(seed)
    c = np.zeros((3 * N, 4), np.float32)
    k = 0
    while k < N:
        d = rng.uniform(-1, 1, 3).astype(np.float32)
        a = np.sort(np.abs(d.astype(np.float64)))
        if a[2] < 0.2 or a[2] - a[1] < 0.02 * a[2]:
            continue
        scale = 2.0 ** rng.uniform(-6, 0)
        dx = (rng.uniform(-1, 1, 3) * scale).astype(np.float32)
        dy = (rng.uniform(-1, 1, 3) * scale * rng.uniform(0.2, 1)).astype(np.float32)
        if k % 4 == 0:  # derivatives along one face axis (ρ's approximations coincide)
            dy = np.zeros(3, np.float32)
        # ACO 22.3 takes |d ma| where the spec's rule has d|ma| = sign(ma) d ma: the two agree
        # where |ma| does not shrink along the derivative (see the module's doc)
        major = int(np.argmax(np.abs(d.astype(np.float64))))
        if shrinking != (np.sign(d[major]) * dx[major] < 0):  # (shrinking: along dP/dx)
            continue
        if np.sign(d[major]) * dy[major] < 0:
            continue
        c[3 * k, :3], c[3 * k + 1, :3], c[3 * k + 2, :3] = d, dx, dy
        chosen = set()
        for aco in (False, shrinking):  # clear under the spec's transform and ACO's alike
            lo, hi = lambdas(c, k, aco)
            if not (math.isfinite(lo) and level_of(lo - 0.07) == level_of(hi + 0.07)):
                break
            chosen.add(level_of(lo))
        else:
            _face, fs, ft = face_coords(d.astype(np.float64))
            if all(
                0.03 < u - math.floor(u) < 0.97 and 0.03 < u < (S0 >> m) - 0.03
                for m in chosen
                for u in (fs * (S0 >> m), ft * (S0 >> m))
            ):
                k += 1
    return c


def reference(levels, c, aco=False):
    out = np.zeros((N, 4), np.uint32)
    for k in range(N):
        face, fs, ft = face_coords(c[3 * k, :3].astype(np.float64))
        m = level_of(lambdas(c, k, aco)[0])
        n = S0 >> m
        out[k] = levels[m][face, int(ft * n), int(fs * n)].astype(np.float32).view(np.uint32)
    return out


def run_lavapipe(exe, tmp_path, levels, c, samp):
    (tmp_path / "img.bin").write_bytes(b"".join(lv.tobytes() for lv in levels))
    (tmp_path / "in.bin").write_bytes(c.tobytes())
    cmd = [str(exe), str(FIX / "cubegrad-w32.spv"), str(tmp_path), "--groups", f"{N // 32},1,1"]
    cmd += ["--image", f"0:0:97:{S0}:{S0}:{tmp_path / 'img.bin'}"]
    cmd += [
        "--sampler",
        ":".join(str(v) for v in (*samp, 0)),
        "--shape",
        f"{CUBE_VIEW}:1:6:{LEVELS}:0:{LEVELS}",
    ]
    cmd += ["--binding", f"0:1:{48 * N}:{tmp_path / 'in.bin'}", "--binding", f"0:2:{16 * N}"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    return np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.uint32).reshape(N, 4)


def run_wavelift(variant, target, mode, levels, c, samp, sw):
    return run_cube_mips(
        str(FIX / f"cubegrad-{variant}.json"), target, mode, levels, c, samp, sw, S0, LEVELS, N
    )


RUNS = [
    ("w32", "gfx1030", "wave", "LINEAR"),
    ("w32", "gfx1030", "lane", "64KB_S"),
    ("navi10-w64", "gfx1010", "wave", "64KB_S"),
]


def native_default(test_id: str) -> bool:
    return "w32-gfx1030-wave" in test_id


@pytest.mark.tiers
@pytest.mark.parametrize("variant,target,mode,mode_name", RUNS)
def test_cube_grad_equals_numpy_and_lavapipe(variant, target, mode, mode_name, lavapipe_sample, tmp_path):
    rng = np.random.default_rng(5)
    levels = [rng.uniform(-4, 4, (6, S0 >> m, S0 >> m, 4)).astype(np.float16) for m in range(LEVELS)]
    c = inputs(9 + RUNS.index((variant, target, mode, mode_name)))
    samp = (NEAREST, NEAREST, NEAREST, EDGE, EDGE, 0)
    sw = 0 if mode_name == "LINEAR" else next(m for m, n in L.sw_mode_names().items() if n == mode_name)
    res, got = run_wavelift(variant, target, mode, levels, c, samp, sw)
    assert res.landed, res.refusal
    ref = reference(levels, c)
    assert (got == ref).all(), np.argwhere((got != ref).any(1))[:4].ravel()
    want = run_lavapipe(lavapipe_sample, tmp_path, levels, c, samp)
    assert (want == ref).all(), np.argwhere((want != ref).any(1))[:4].ravel()


@pytest.mark.tiers
def test_cube_grad_where_the_major_axis_shrinks_follows_acos_transform(lavapipe_sample, tmp_path):
    """Where |ma| shrinks along dP/dx, ACO 22.3's face-space derivatives (|d ma| for the spec's
    d|ma|) differ from the spec's: wavelift runs ACO's code, so it equals the NumPy model of
    ACO's transform with the hardware's rule; lavapipe (the spec's transform) picks another
    level on some of these lanes, as RADV on hardware would differ from lavapipe."""
    rng = np.random.default_rng(6)
    levels = [rng.uniform(-4, 4, (6, S0 >> m, S0 >> m, 4)).astype(np.float16) for m in range(LEVELS)]
    c = inputs(21, shrinking=True)
    samp = (NEAREST, NEAREST, NEAREST, EDGE, EDGE, 0)
    res, got = run_wavelift("w32", "gfx1030", "wave", levels, c, samp, 0)
    assert res.landed, res.refusal
    ref = reference(levels, c, aco=True)
    assert (got == ref).all(), np.argwhere((got != ref).any(1))[:4].ravel()
    want = run_lavapipe(lavapipe_sample, tmp_path, levels, c, samp)
    spec = reference(levels, c)
    assert (want == spec).all()  # lavapipe: the spec's transform
    assert (want != got).any(1).sum() > 0  # (where the two transforms choose different levels)
