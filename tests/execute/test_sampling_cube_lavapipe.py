"""Cube-map sampling against lavapipe (decision 0034): GLSL textureLod on a samplerCube /
samplerCubeArray compiled by ACO (tools/aco_compile: v_cubema/v_cubesc/v_cubetc/v_cubeid, the
face coordinates sc / |ma| + 1.5 and the face id + 8 x layer, then image_sample_lz/_l with dim
SQ_RSRC_IMG_CUBE; checked in the asm) runs in wavelift with the T# RADV writes for a sampled
cube view (TYPE CUBE, BASE_ARRAY and DEPTH the view's first and last layer: radv_image.c
gfx10_make_texture_descriptor) and the S# of test_sampling_lavapipe; lavapipe_sample runs the
same SPIR-V with a cube (array) view of the same faces.  Directions whose texels lie inside one
face: point samples equal (rgba16f bit for bit, rgba8 within lavapipe's one-ulp UNORM reads),
linear filtering within decision 0025's bound.  At a face edge the lane refuses by name
(``image.cube_edge``).  Cube gathers (decision 0036): textureGather on samplerCube /
samplerCubeArray, the four texels bit for bit.  Skips without lavapipe, gcc, the
Vulkan headers or aco-compile's dependencies."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess

import numpy as np
import pytest
from harness import Rig, ptr
from test_sampling_lavapipe import (
    EDGE,
    LINEAR,
    LVP_ICD,
    NEAREST,
    VK_FORMAT,
    VK_HEADER,
    assert_within_bound,
    radv_sampler,
)
from testpaths import ROOT

import wavelift
from wavelift.driver.aco import Image, image_descriptor
from wavelift.driver.launch import Buffer
from wavelift.memory import layout as L

pytestmark = pytest.mark.skipif(
    not (os.path.exists(LVP_ICD) and os.path.exists(VK_HEADER) and shutil.which("gcc")),
    reason="lavapipe, the Vulkan headers or gcc missing",
)
SHADER = """#version 450
layout(local_size_x = 32) in;
#ifdef ARRAY
layout(set = 0, binding = 0) uniform samplerCubeArray tex;
#else
layout(set = 0, binding = 0) uniform samplerCube tex;
#endif
layout(set = 0, binding = 1) buffer In { vec4 c[]; } i;
layout(set = 0, binding = 2) buffer Out { vec4 v[]; } o;
void main() {
  uint k = gl_GlobalInvocationID.x;
#if defined(GATHER) && defined(ARRAY)
  o.v[k] = textureGather(tex, i.c[k], COMP);
#elif defined(GATHER)
  o.v[k] = textureGather(tex, i.c[k].xyz, COMP);
#elif defined(ARRAY)
  o.v[k] = textureLod(tex, i.c[k], 0.0);
#elif defined(MIPS)
  o.v[k] = textureLod(tex, i.c[k].xyz, i.c[k].w);
#else
  o.v[k] = textureLod(tex, i.c[k].xyz, 0.0);
#endif
}
"""
S = 8  # face size
N = 64
CUBE_VIEW, CUBE_ARRAY_VIEW = 3, 6  # VkImageViewType


def compile_shader(tmp_path, array, family="navi21", wave=32, mips=False, gather=None):
    src = tmp_path / "cube.comp"
    src.write_text(SHADER)
    out = tmp_path / "cube"
    p = subprocess.run(
        [str(ROOT / "tools/aco_compile/aco-compile"), str(src), "-o", str(out), "--family", family]
        + [f"--wave{wave}", "-q"]
        + (["-D", "ARRAY"] if array else [])
        + (["-D", "MIPS"] if mips else [])
        + (["-D", "GATHER", "-D", f"COMP={gather}"] if gather is not None else []),
        capture_output=True,
        text=True,
    )
    if p.returncode == 3:
        pytest.skip("aco-compile: " + (p.stdout + p.stderr)[-200:])
    assert p.returncode == 0, p.stdout + p.stderr
    asm = (tmp_path / "cube.s").read_text()
    assert "dim:SQ_RSRC_IMG_CUBE" in asm and "v_cubeid_f32" in asm, asm
    return out


def face_coords(d):
    """Vulkan's cube face selection (major axis, sc, tc) and face coordinates in [0, 1] (f64)."""
    x, y, z = d
    ax, ay, az = abs(x), abs(y), abs(z)
    if ax >= ay and ax >= az:
        face, sc, tc, ma = (0, -z, -y, ax) if x > 0 else (1, z, -y, ax)
    elif ay >= az:
        face, sc, tc, ma = (2, x, z, ay) if y > 0 else (3, x, -z, ay)
    else:
        face, sc, tc, ma = (4, x, -y, az) if z > 0 else (5, -x, -y, az)
    return face, 0.5 * (sc / ma + 1), 0.5 * (tc / ma + 1)


def directions(seed, linear, layers):
    """N directions (and integral layers) whose face texels are established: no tie of the
    major axis, face coordinates in texel space clear of the 2**-7 window (and the linear
    footprint's u - 0.5) by 0.02 texel, every texel inside the face."""
    rng = np.random.default_rng(seed)
    out = np.zeros((N, 4), np.float32)
    k = 0
    while k < N:
        d = rng.uniform(-1, 1, 3).astype(np.float32)
        a = np.sort(np.abs(d.astype(np.float64)))
        if a[2] < 0.1 or a[2] - a[1] < 0.01 * a[2]:
            continue
        _face, s, t = face_coords(d.astype(np.float64))
        ok = True
        for u in (s * S, t * S):
            x = u - 0.5 if linear else u
            fr = x - np.floor(x)
            lo, hi = (0.0, S - 1.0) if linear else (0.0, float(S))
            ok &= 0.02 < fr < 0.98 and lo + 0.02 < x < hi - 0.02
        if ok:
            out[k, :3] = d
            out[k, 3] = rng.integers(0, layers // 6)
            k += 1
    return out


def run_lavapipe(exe, tmp_path, fmt, texels, samp, c, spv, layers):
    (tmp_path / "img.bin").write_bytes(texels.tobytes())
    (tmp_path / "in.bin").write_bytes(c.tobytes())
    view = CUBE_ARRAY_VIEW if layers > 6 else CUBE_VIEW
    cmd = [
        str(exe),
        str(spv),
        str(tmp_path),
        "--groups",
        f"{N // 32},1,1",
        "--image",
        f"0:0:{VK_FORMAT[fmt]}:{S}:{S}:{tmp_path / 'img.bin'}",
        "--sampler",
        ":".join(str(v) for v in (*samp, 0)),
        "--shape",
        f"{view}:1:{layers}:1:0:1",
        "--binding",
        f"0:1:{16 * N}:{tmp_path / 'in.bin'}",
        "--binding",
        f"0:2:{16 * N}",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    return np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.uint32).reshape(N, 4)


def radv_cube_tsharp(addr, fmt, layers, sw_mode=0):
    """RADV's sampled cube view: the 2-D T# of image_descriptor with TYPE CUBE (11), DEPTH the
    last layer, BASE_ARRAY 0 (the whole image)."""
    t = image_descriptor(Image(Buffer(addr, 0), S, S, fmt), False)
    t[3] = (t[3] & 0x0FFFFFFF & ~(31 << 20)) | 11 << 28 | sw_mode << 20
    t[4] = layers - 1
    return t


def run_wavelift(out, target, mode, fmt, texels, samp, c, layers, sw_mode=0, tsharp=None):
    """The ACO shader on the faces laid out as RADV's 2-D array of layers (linear or sw_mode)."""
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(out) + ".json")
    bpe = texels.dtype.itemsize * 4
    chip = L.Chip(target == "gfx1030", 0)
    s = L.Surface(sw_mode, L.RSRC_2D, bpe.bit_length() - 1, S, S, layers)
    size = L.surface_info(s, chip).slice_size * layers
    z, y, x = np.mgrid[0:layers, 0:S, 0:S]
    offs = L.address(chip, s, x.ravel(), y.ravel(), z.ravel()).astype(np.int64)
    img = np.zeros(size + 65536, np.uint8)
    raw = dev.upload(img)
    base = (raw.address + 65535) & ~65535
    flat = texels.reshape(-1, 4)
    data = bytearray(size)
    for k, o in enumerate(offs):
        data[o : o + bpe] = flat[k].tobytes()
    dev.memory.write(base, bytes(data))
    inp = dev.upload(c)
    ob = dev.upload(np.full((N, 4), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(N // 32, 1, 1), buffers={(0, 1): inp, (0, 2): ob})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    at = rec.extra["sets"][0] + int(binding["offset"])
    t = radv_cube_tsharp(base, fmt, layers, sw_mode) if tsharp is None else tsharp(base)
    dev.memory.write(at, struct.pack("<8I", *t))
    dev.memory.write(at + 80, struct.pack("<4I", *radv_sampler(*samp)))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    return res, dev.download(ob, np.uint32).reshape(N, 4)


def texels_for(fmt, layers, seed):
    rng = np.random.default_rng(seed)
    if fmt == "rgba8":
        return rng.integers(0, 256, (layers, S, S, 4), dtype=np.uint8)
    return rng.uniform(-4, 4, (layers, S, S, 4)).astype(np.float16)


CASES = [
    # (format, filter, layers, target, mode, swizzle mode name)
    ("rgba16f", NEAREST, 6, "gfx1030", "wave", "LINEAR"),
    ("rgba8", NEAREST, 12, "gfx1030", "lane", "64KB_S"),
    ("rgba16f", LINEAR, 6, "gfx1030", "wave", "4KB_S"),
    pytest.param("rgba16f", NEAREST, 18, "gfx1030", "lane", "64KB_D", marks=pytest.mark.slow),
    pytest.param("rgba8", LINEAR, 12, "gfx1030", "wave", "LINEAR", marks=pytest.mark.slow),
    pytest.param("rgba16f", NEAREST, 12, "gfx1010", "wave", "64KB_S", marks=pytest.mark.slow),  # navi10 w64
]


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("fmt,filt,layers,target,mode,mode_name", CASES)
def test_cube_sampling_equals_lavapipe(fmt, filt, layers, target, mode, mode_name, lavapipe_sample, tmp_path):
    array = layers > 6
    out = compile_shader(tmp_path, array, *(("navi10", 64) if target == "gfx1010" else ()))
    samp = (filt, filt, NEAREST, EDGE, EDGE, 0)
    texels = texels_for(fmt, layers, layers + filt)
    c = directions(layers * 2 + filt, filt == LINEAR, layers)
    want = run_lavapipe(lavapipe_sample, tmp_path, fmt, texels, samp, c, str(out) + ".spv", layers)
    sw = 0 if mode_name == "LINEAR" else next(m for m, n in L.sw_mode_names().items() if n == mode_name)
    res, got = run_wavelift(out, target, mode, fmt, texels, samp, c, layers, sw)
    assert res.landed, res.refusal
    # the samples come from the faces they should: a NumPy point sample agrees with lavapipe
    if filt == NEAREST:
        for k in range(N):
            face, s, t = face_coords(c[k, :3].astype(np.float64))
            tx = texels[int(c[k, 3]) * 6 + face, int(t * S), int(s * S)]
            if fmt == "rgba16f":
                ref = tx.astype(np.float32).view(np.uint32)
                assert (ref == want[k]).all() and (ref == got[k]).all(), (k, ref, want[k], got[k])
            else:
                ulps = np.abs(got[k].astype(np.int64) - want[k].astype(np.int64))
                assert ulps.max() <= 1, (k, got[k], want[k])
                np.testing.assert_allclose(got[k].view(np.float32), tx / np.float32(255), rtol=1e-6)
    else:
        span = float(texels.astype(np.float64).max() - texels.astype(np.float64).min())
        for k in range(N):
            assert_within_bound(fmt, got[k].view(np.float32), want[k].view(np.float32), k, span)


def native_default(test_id: str) -> bool:
    # the native tier builds a library per program: the linear case (and one gather) in the
    # default run
    return "rgba16f-1-6" in test_id or "rgba16f-6-0" in test_id


# ---- refused by name -------------------------------------------------------------------------
def test_cube_edges_and_other_types_refused_by_name(tmp_path):
    out = compile_shader(tmp_path, False)
    texels = texels_for("rgba16f", 6, 3)
    base_c = directions(5, False, 6)
    samp = (NEAREST, NEAREST, NEAREST, EDGE, EDGE, 0)
    res, _ = run_wavelift(out, "gfx1030", "wave", "rgba16f", texels, samp, base_c, 6)
    assert res.landed, res.refusal
    c = base_c.copy()
    c[7, :3] = (1.0, 0.5, 1.0)  # |x| = |z|: face +Z, s = x / |z|: the face's edge
    res, _ = run_wavelift(out, "gfx1030", "wave", "rgba16f", texels, samp, c, 6)
    assert not res.landed and res.refusal.code == "image.cube_edge" and "face" in res.refusal.message
    c = base_c.copy()
    c[9, :3] = (0.999, 0.1, 0.99)  # u = 0.036: texel 0 inside, the linear footprint crosses
    lin = (LINEAR, LINEAR, NEAREST, EDGE, EDGE, 0)
    res, _ = run_wavelift(out, "gfx1030", "lane", "rgba16f", texels, lin, c, 6)
    assert not res.landed and res.refusal.code == "image.cube_edge"
    # a 2-D array T# through the cube dim
    res, _ = run_wavelift(
        out,
        "gfx1030",
        "wave",
        "rgba16f",
        texels,
        samp,
        base_c,
        6,
        tsharp=lambda a: retype(radv_cube_tsharp(a, "rgba16f", 6), 13),
    )
    assert not res.landed and res.refusal.code == "image.cube_edge" and "TYPE" in res.refusal.message


def retype(t, typ):
    return t[:3] + [(t[3] & 0x0FFFFFFF) | typ << 28] + t[4:]


CUBE_PROG = """
  image_sample_lz v[4:7], v[0:2], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_CUBE
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v8, 4, v3
  global_store_dwordx4 v8, v[4:7], s[12:13]
  s_endpgm
"""


@pytest.mark.parametrize(
    "s_coord,face,why",
    [(2.5, 0.0, "outside [1, 2]"), (1.5, 6.0, "face id"), (1.5, 2.5, "face id"), (1.5, 8.0, "past the view")],
    ids=["outside_face", "face_6", "face_fraction", "layer_past_view"],
)
def test_cube_coordinates_not_established_refused(s_coord, face, why):
    """Hand-written image_sample_lz dim CUBE (v0 = s, v1 = t, v2 = face id + 8 x layer)."""
    src = (
        "  v_mov_b32 v3, v0\n"
        f"  v_mov_b32 v0, {float(s_coord)}\n  v_mov_b32 v1, 1.5\n  v_mov_b32 v2, {float(face)}\n" + CUBE_PROG
    )
    r = Rig(src)
    img = r.mem.alloc(6 * 256 * S, name="img", align=256)
    out = r.buf(np.full(32 * 4, 7, np.uint32), "out")
    t = radv_cube_tsharp(img, "rgba16f", 6)
    samp = radv_sampler(NEAREST, NEAREST, NEAREST, EDGE, EDGE, 0)
    res = r.run(r.config(user_sgprs=t + samp + list(ptr(out)), tgid=(False,) * 3))
    assert not res.landed and res.refusal.code == "image.cube_edge", res.refusal
    assert why in res.refusal.message


@pytest.mark.parametrize(
    "text",
    [
        "image_gather4_lz_o v[4:7], v[0:3], s[0:7], s[8:11] dmask:0x1 dim:SQ_RSRC_IMG_CUBE",
        # (32-bit derivatives are carried out since decision 0041: test_sampling_cube_grad_lavapipe.py)
        "image_sample_d_g16 v[4:7], v[0:4], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_CUBE",
        "image_sample_lz_o v[4:7], v[0:3], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_CUBE",
    ],
    ids=["gather_offsets", "derivatives_g16", "offsets"],
)
def test_cube_forms_not_translated_refused(text):
    r = Rig("  " + text + "\n  s_endpgm")
    res = r.run(r.config(user_sgprs=[0] * 12))
    assert res.refusal.code == "program.unsupported_instruction", res.refusal


# ---- a mip chain: textureLod with a per-lane LOD (point and linear mip filters) ---------------
S0, LEVELS = 16, 3
LODS = [-0.5, 0.0, 0.25, 1.0, 1.3, 2.0, 2.7, 0.6, 1.75]  # clear of k + 0.5 by more than 2**-8


def mip_inputs(seed):
    """Directions and LODs whose texels are established at every level the LOD may touch."""
    rng = np.random.default_rng(seed)
    out = np.zeros((N, 4), np.float32)
    k = 0
    while k < N:
        d = rng.uniform(-1, 1, 3).astype(np.float32)
        a = np.sort(np.abs(d.astype(np.float64)))
        if a[2] < 0.1 or a[2] - a[1] < 0.01 * a[2]:
            continue
        _face, fs, ft = face_coords(d.astype(np.float64))
        ok = True
        for n in (S0 >> m for m in range(LEVELS)):
            for u in (fs * n, ft * n):
                fr = u - np.floor(u)
                ok &= 0.02 < fr < 0.98 and 0.02 < u < n - 0.02
        if ok:
            out[k, :3] = d
            out[k, 3] = LODS[k % len(LODS)]
            k += 1
    return out


def run_cube_mips(shader_json, target, mode, levels, c, samp, sw, s0, n_levels, n):
    """An ACO cube shader (binding 0: the cube, 1: ``c``, 2: n x uvec4 out) run on wavelift over
    the rgba16f faces' mip chain ``levels`` (per level (6, s, s, 4)) laid out as RADV's (addrlib's)
    2-D array of 6 layers in swizzle mode ``sw``; the cube T# and sampler ``samp`` written into
    the descriptor set. -> (the dispatch's result, the n x 4 u32 read back)."""
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(shader_json)
    chip = L.Chip(target == "gfx1030", 0)
    surf = L.Surface(sw, L.RSRC_2D, 3, s0, s0, 6, n_levels)
    size = L.surface_info(surf, chip).slice_size * 6
    data = bytearray(size)
    for m, lv in enumerate(levels):
        k = s0 >> m
        z, y, x = np.mgrid[0:6, 0:k, 0:k]
        offs = L.address(chip, surf, x.ravel(), y.ravel(), z.ravel(), m).astype(np.int64)
        for i, o in enumerate(offs):
            data[o : o + 8] = lv.reshape(-1, 4)[i].tobytes()
    raw = dev.upload(np.zeros(size + 65536, np.uint8))
    base = (raw.address + 65535) & ~65535
    dev.memory.write(base, bytes(data))
    inp = dev.upload(c)
    ob = dev.upload(np.full((n, 4), 0x7FC0DEAD, np.uint32))
    rec = sh.prepare(groups=(n // 32, 1, 1), buffers={(0, 1): inp, (0, 2): ob})
    binding = next(b for b in sh.sets[0]["bindings"] if b["binding"] == 0)
    at = rec.extra["sets"][0] + int(binding["offset"])
    t = image_descriptor(Image(Buffer(base, 0), s0, s0, "rgba16f"), False)
    t[3] = (t[3] & 0x0FF0FFFF & ~(31 << 20)) | 11 << 28 | sw << 20 | (n_levels - 1) << 16  # CUBE, LAST_LEVEL
    t[4] = 5
    t[5] = (n_levels - 1) << 4  # MAX_MIP
    dev.memory.write(at, struct.pack("<8I", *t))
    dev.memory.write(at + 80, struct.pack("<4I", *radv_sampler(*samp)))
    _dw, res = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
    return res, dev.download(ob, np.uint32).reshape(n, 4)


@pytest.mark.parametrize("mip_mode", [NEAREST, LINEAR], ids=["mip_nearest", "mip_linear"])
@pytest.mark.parametrize("mode_name", ["LINEAR", "64KB_S"])
def test_cube_mip_chain_equals_lavapipe(mip_mode, mode_name, lavapipe_sample, tmp_path):
    out = compile_shader(tmp_path, False, mips=True)
    assert "image_sample_l " in (tmp_path / "cube.s").read_text()
    rng = np.random.default_rng(77 + mip_mode)
    levels = [rng.uniform(-4, 4, (6, S0 >> m, S0 >> m, 4)).astype(np.float16) for m in range(LEVELS)]
    c = mip_inputs(5 + mip_mode)
    samp = (NEAREST, NEAREST, mip_mode, EDGE, EDGE, 0)
    (tmp_path / "img.bin").write_bytes(b"".join(lv.tobytes() for lv in levels))
    (tmp_path / "in.bin").write_bytes(c.tobytes())
    cmd = [str(lavapipe_sample), str(out) + ".spv", str(tmp_path), "--groups", f"{N // 32},1,1"]
    cmd += ["--image", f"0:0:{VK_FORMAT['rgba16f']}:{S0}:{S0}:{tmp_path / 'img.bin'}"]
    cmd += [
        "--sampler",
        ":".join(str(v) for v in (*samp, 0)),
        "--shape",
        f"{CUBE_VIEW}:1:6:{LEVELS}:0:{LEVELS}",
    ]
    cmd += ["--binding", f"0:1:{16 * N}:{tmp_path / 'in.bin'}", "--binding", f"0:2:{16 * N}"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    want = np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.uint32).reshape(N, 4)
    sw = 0 if mode_name == "LINEAR" else next(m for m, n in L.sw_mode_names().items() if n == mode_name)
    res, got = run_cube_mips(str(out) + ".json", "gfx1030", "wave", levels, c, samp, sw, S0, LEVELS, N)
    assert res.landed, res.refusal
    if mip_mode == NEAREST:
        for k in range(N):
            face, fs, ft = face_coords(c[k, :3].astype(np.float64))
            m = int(np.floor(min(max(float(c[k, 3]), 0.0), LEVELS - 1) + 0.5))
            n = S0 >> m
            ref = levels[m][face, int(ft * n), int(fs * n)].astype(np.float32).view(np.uint32)
            assert (ref == want[k]).all() and (ref == got[k]).all(), (k, m, ref, want[k], got[k])
    else:
        span = max(float(lv.astype(np.float64).max() - lv.astype(np.float64).min()) for lv in levels)
        for k in range(N):
            assert_within_bound("rgba16f", got[k].view(np.float32), want[k].view(np.float32), k, span)


IMPLICIT = """
  v_mov_b32 v3, v0
  v_mov_b32 v0, 1.3
  v_mov_b32 v1, 1.7
  v_mov_b32 v2, 4.0
  image_sample v[4:7], v[0:2], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_CUBE
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v8, 4, v3
  global_store_dwordx4 v8, v[4:7], s[12:13]
  s_endpgm
"""


@pytest.mark.parametrize("mag,mn,lands", [(NEAREST, NEAREST, True), (NEAREST, LINEAR, False)])
def test_cube_implicit_lod_only_where_it_changes_nothing(mag, mn, lands):
    """image_sample (implicit LOD) dim CUBE on one level: with equal min and mag filters the LOD
    changes nothing and the sample lands (face +Z, texel (floor(0.3 * 8), floor(0.7 * 8)));
    where they differ the LOD would come from cube derivatives: refused by name."""
    r = Rig(IMPLICIT)
    texels = texels_for("rgba16f", 6, 9)
    img = np.zeros((6, S, 256 // 8, 4), np.float16)  # linear rows of 256 bytes
    img[:, :, :S] = texels
    a = r.mem.alloc(img.nbytes, name="img", align=256, data=img.tobytes())
    out = r.buf(np.full(32 * 4, 7, np.uint32), "out")
    sg = radv_cube_tsharp(a, "rgba16f", 6) + radv_sampler(mag, mn, NEAREST, EDGE, EDGE, 0) + list(ptr(out))
    res = r.run(r.config(user_sgprs=sg, tgid=(False,) * 3))
    if lands:
        assert res.landed, res.refusal
        want = texels[4, int(0.7 * S), int(0.3 * S)].astype(np.float32).view(np.uint32)
        assert (r.read(out, np.uint32, 128).reshape(32, 4) == want).all()
    else:
        assert res.refusal.code == "image.cube_edge" and "derivatives" in res.refusal.message, res.refusal


# ---- cube gathers (decision 0036) -----------------------------------------------------------
@pytest.mark.tiers
@pytest.mark.parametrize(
    "fmt,layers,comp,target,mode,mode_name",
    [
        ("rgba16f", 6, 0, "gfx1030", "wave", "64KB_S"),
        ("rgba16f", 12, 2, "gfx1030", "lane", "LINEAR"),
        ("rgba8", 6, 3, "gfx1030", "wave", "4KB_S"),
        ("rgba16f", 12, 1, "gfx1010", "wave", "64KB_S"),  # navi10 w64
    ],
)
def test_cube_gathers_equal_lavapipe(
    fmt, layers, comp, target, mode, mode_name, tier, lavapipe_sample, tmp_path
):
    """textureGather on a cube (array): ACO emits image_gather4_lz dim CUBE on the face
    coordinates; the footprint floor(u - 0.5) and the next texel inside the face (the
    directions keep it there, as for linear filtering).  Equal to lavapipe and to a NumPy
    gather of Vulkan's face table: (i0, j1), (i1, j1), (i1, j0), (i0, j0) of channel comp."""
    array = layers > 6
    out = compile_shader(tmp_path, array, *(("navi10", 64) if target == "gfx1010" else ()), gather=comp)
    assert "image_gather4_lz" in (tmp_path / "cube.s").read_text()
    samp = (NEAREST, NEAREST, NEAREST, EDGE, EDGE, 0)
    texels = texels_for(fmt, layers, 40 + comp)
    c = directions(60 + comp, True, layers)
    want = run_lavapipe(lavapipe_sample, tmp_path, fmt, texels, samp, c, str(out) + ".spv", layers)
    sw = 0 if mode_name == "LINEAR" else next(m for m, n in L.sw_mode_names().items() if n == mode_name)
    res, got = run_wavelift(out, target, mode, fmt, texels, samp, c, layers, sw)
    assert res.landed, res.refusal
    for k in range(N):
        face, s, t = face_coords(c[k, :3].astype(np.float64))
        i0, j0 = int(np.floor(s * S - 0.5)), int(np.floor(t * S - 0.5))
        lay = texels[int(c[k, 3]) * 6 + face]
        quad = [lay[j0 + 1, i0, comp], lay[j0 + 1, i0 + 1, comp], lay[j0, i0 + 1, comp], lay[j0, i0, comp]]
        if fmt == "rgba16f":
            ref = np.array(quad, np.float16).astype(np.float32).view(np.uint32)
            assert (ref == got[k]).all() and (ref == want[k]).all(), (k, ref, got[k], want[k])
        else:
            np.testing.assert_allclose(got[k].view(np.float32), np.array(quad) / np.float32(255), rtol=1e-6)
            assert np.abs(got[k].astype(np.int64) - want[k].astype(np.int64)).max() <= 1, k


def test_cube_gather_over_an_edge_refused(tmp_path):
    out = compile_shader(tmp_path, False, gather=0)
    texels = texels_for("rgba16f", 6, 3)
    c = directions(5, True, 6)
    samp = (NEAREST, NEAREST, NEAREST, EDGE, EDGE, 0)
    res, _ = run_wavelift(out, "gfx1030", "wave", "rgba16f", texels, samp, c, 6)
    assert res.landed, res.refusal
    c[9, :3] = (0.999, 0.1, 0.99)  # u = 0.036: the footprint floor(u - 0.5) = -1 crosses the edge
    res, _ = run_wavelift(out, "gfx1030", "wave", "rgba16f", texels, samp, c, 6)
    assert not res.landed and res.refusal.code == "image.cube_edge", res.refusal
