"""Cube and cube-array storage images as ACO and RADV hand them to the hardware (decision 0034):
GLSL imageLoad / imageStore / imageAtomicAdd on imageCube and imageCubeArray, compiled by ACO
(tools/aco_compile), address them as 2-D arrays (MIMG dim SQ_RSRC_IMG_2D_ARRAY, the face the
layer: 6 * cube + face; checked in the asm here), and RADV describes a storage view of a cube
image as TYPE 2D_ARRAY with BASE_ARRAY its first layer and DEPTH its last (radv_image.c
radv_tex_dim: "is_storage_image ? V_008F1C_SQ_RSRC_IMG_2D_ARRAY : V_008F1C_SQ_RSRC_IMG_CUBE";
gfx10_make_texture_descriptor: DEPTH = last_layer).  Run through our driver with those T#s
(linear and 64KB_S) on the same data, the results equal a NumPy model of the faces, both modes.
A hand-written MIMG access with dim CUBE (which ACO does not emit for storage images) refuses by
name.  Skips where aco-compile's dependencies are missing."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from aco_build import aco_build
from harness import Rig, ptr
from nvrtc_check import check_cuda_kernels
from testpaths import ROOT

import wavelift
import wavelift.driver.aco as aco
from wavelift.driver.aco import Image
from wavelift.memory import layout as L

SHADER = """#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32ui) uniform readonly uimageCube src;
layout(set = 0, binding = 1, r32ui) uniform writeonly uimageCubeArray dst;
layout(set = 0, binding = 2, r32ui) uniform coherent uimageCubeArray acc;
layout(set = 0, binding = 3) buffer Out { uint v[]; } o;
void main() {
  uvec3 g = gl_GlobalInvocationID;  // x, y in a face; z: the face (0..5) of cube 0 and 1
  uint face = g.z % 6u, cube = g.z / 6u;
  uint t = imageLoad(src, ivec3(g.xy, face)).x;
  o.v[(g.z * 8u + g.y) * 8u + g.x] = t;
  imageStore(dst, ivec3(g.xy, g.z), uvec4(t ^ (cube << 16)));
  imageAtomicAdd(acc, ivec3(g.x & 3u, g.y & 1u, g.z), t & 255u);
}
"""
S = 8  # face size
CUBES = 2


def _compile(tmp_path, family, wave):
    out = aco_build(tmp_path, "cube", SHADER, family, wave)
    asm = (tmp_path / "cube.s").read_text()
    assert "SQ_RSRC_IMG_2D_ARRAY" in asm and "IMG_CUBE" not in asm, asm
    return out


def radv_storage_cube(addr, w, h, first_layer, last_layer, sw_mode=0, fmt=20):
    """The storage-image T# RADV writes for a cube (array) view: TYPE 2D_ARRAY (13), BASE_ARRAY
    = the view's first layer, DEPTH = its last."""
    d3 = 4 | 5 << 3 | 6 << 6 | 7 << 9 | sw_mode << 20 | 13 << 28
    return [
        (addr >> 8) & 0xFFFFFFFF,
        ((addr >> 40) & 0xFF) | (fmt << 20) | (((w - 1) & 3) << 30),
        ((w - 1) >> 2) | ((h - 1) << 14) | (1 << 31),
        d3,
        last_layer | first_layer << 16,
        0,
        0,
        0,
    ]


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize(
    "family,wave,mode,mode_name",
    [
        ("navi21", 32, "wave", "LINEAR"),
        ("navi21", 32, "lane", "64KB_S"),
        pytest.param("navi10", 64, "wave", "64KB_S", marks=pytest.mark.slow),
    ],
)
def test_aco_cube_storage_images(family, wave, mode, mode_name, tmp_path, monkeypatch):
    out = _compile(tmp_path, family, wave)
    target = {"navi21": "gfx1030", "navi10": "gfx1010"}[family]
    sw = 0 if mode_name == "LINEAR" else next(m for m, n in L.sw_mode_names().items() if n == mode_name)
    chip = L.Chip(target == "gfx1030", 0)
    layers = {"src": (2, 7), "dst": (0, 6 * CUBES - 1), "acc": (6, 6 + 6 * CUBES - 1)}  # (first, last)
    total = 6 * (CUBES + 2)  # the image's layers: the views start at different ones
    s = L.Surface(sw, L.RSRC_2D, 2, S, S, total)
    size = L.surface_info(s, chip).slice_size * total
    z, y, x = np.mgrid[0:total, 0:S, 0:S]
    offs = L.address(chip, s, x.ravel(), y.ravel(), z.ravel()).astype(np.int64).reshape(total, S, S) // 4
    rng = np.random.default_rng(wave)
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(out) + ".json")
    mems, bufs = {}, {}
    for name in ("src", "dst", "acc"):
        mems[name] = rng.integers(0, 2**32, size // 4 + 16384, dtype=np.uint64).astype(np.uint32)
        raw = dev.upload(mems[name])
        base = (raw.address + 65535) & ~65535
        pad = (base - raw.address) // 4
        bufs[name] = (raw, base, pad)
    words = {}
    for name, (first, last) in layers.items():
        words[bufs[name][0].address] = radv_storage_cube(bufs[name][1], S, S, first, last, sw)
    monkeypatch.setattr(aco, "image_descriptor", lambda im, gfx11: list(words[im.buffer.address]))
    ob = dev.upload(np.full(S * S * 6 * CUBES, 7, np.uint32))
    r = sh.launch(
        groups=(1, 1, 6 * CUBES),
        buffers={(0, 3): ob},
        images={(0, k): Image(bufs[n][0], S, S, "r32ui") for k, n in enumerate(("src", "dst", "acc"))},
    )
    assert r.landed, r.refusal

    def image(name):
        raw, _base, pad = bufs[name]
        return dev.download(raw, np.uint32)[pad : pad + size // 4], mems[name][pad : pad + size // 4]

    got_src, src = image("src")
    first = layers["src"][0]
    gz, gy, gx = np.mgrid[0 : 6 * CUBES, 0:S, 0:S]
    face, cube = gz % 6, gz // 6
    loaded = src[offs[first + face, gy, gx]]
    np.testing.assert_array_equal(dev.download(ob, np.uint32).reshape(6 * CUBES, S, S), loaded)
    np.testing.assert_array_equal(got_src, src)
    got_dst, dst = image("dst")
    want = dst.copy()
    want[offs[layers["dst"][0] + gz, gy, gx]] = loaded ^ (cube.astype(np.uint32) << 16)
    np.testing.assert_array_equal(got_dst, want)
    got_acc, acc = image("acc")
    want = acc.copy()
    np.add.at(want, offs[layers["acc"][0] + gz, gy & 1, gx & 3].ravel(), (loaded & 255).ravel())
    np.testing.assert_array_equal(got_acc, want)


def native_default(test_id: str) -> bool:
    return "LINEAR" in test_id


@pytest.mark.parametrize(
    "text",
    [
        "image_load v3, v[0:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_CUBE unorm",
        "image_store v3, v[0:2], s[0:7] dmask:0x1 dim:SQ_RSRC_IMG_CUBE unorm",
    ],
    ids=["load", "store"],
)
def test_mimg_cube_dim_storage_refused_by_name(text):
    r = Rig(f"  {text}\n  s_endpgm")
    out = r.buf(np.zeros(4, np.uint32))
    res = r.run(r.config(user_sgprs=[0] * 8 + list(ptr(out))))
    assert res.refusal.code == "program.unsupported_instruction", res.refusal
    assert "cube" in res.refusal.message


# ---- CUDA: NVRTC compiles the kernels of a cube sample (no GPU here) --------------------------
CUBE_SAMPLES = """
  image_sample_lz v[4:7], v[0:2], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_CUBE
  image_sample_l v[8:11], v[0:3], s[0:7], s[8:11] dmask:0xf dim:SQ_RSRC_IMG_CUBE
  image_sample_c_lz v12, v[0:3], s[0:7], s[8:11] dmask:0x1 dim:SQ_RSRC_IMG_CUBE
  s_waitcnt vmcnt(0)
  global_store_dwordx4 v13, v[4:7], s[12:13]
  global_store_dwordx4 v13, v[8:11], s[12:13] offset:16
  global_store_dword v13, v12, s[12:13] offset:32
  s_endpgm
"""


def test_cuda_kernels_of_cube_sampling_compile():
    from wavelift.frontend.program import translate

    check_cuda_kernels([translate(Rig(CUBE_SAMPLES).code, "gfx1030", 32, 0x1000)])


# ---- lavapipe: the same SPIR-V on a cube (array) storage view --------------------------------
LVP_SHADER = """#version 450
layout(local_size_x = 8, local_size_y = 8) in;
#ifdef ARRAY
layout(set = 0, binding = 0, r32ui) uniform coherent uimageCubeArray img;
#else
layout(set = 0, binding = 0, r32ui) uniform coherent uimageCube img;
#endif
layout(set = 0, binding = 1) buffer Out { uint v[]; } o;
void main() {
  uvec3 g = gl_GlobalInvocationID;  // z: the face-layer (6 x cube + face)
  ivec3 p = ivec3(g.xy, g.z);
  uint t = imageLoad(img, p).x;
  o.v[(g.z * 8u + g.y) * 8u + g.x] = t;
  barrier();
  imageStore(img, ivec3(7 - p.x, p.y, p.z), uvec4(t * 3u + g.z));
}
"""
LVP_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


@pytest.mark.parametrize("layers", [6, 12])
def test_cube_storage_equals_lavapipe(layers, tmp_path, monkeypatch):
    """imageLoad / imageStore on imageCube / imageCubeArray (ACO: dim 2D_ARRAY, the face-layer as
    the layer) against lavapipe on a cube (array) storage view of the same faces
    (lavapipe_sample --storage --shape 3 or 6): loads and the final image bit for bit."""
    import os
    import shutil

    if not (os.path.exists(LVP_ICD) and shutil.which("gcc")):
        pytest.skip("lavapipe or gcc missing")
    exe = tmp_path / "lavapipe_sample"
    p = subprocess.run(
        ["gcc", "-O1", "-o", str(exe), str(ROOT / "tools/lavapipe_run/lavapipe_sample.c"), "-lvulkan"],
        capture_output=True,
        text=True,
    )
    if p.returncode:
        pytest.skip("lavapipe_sample does not build here: " + p.stderr[-200:])
    src = tmp_path / "cube_lvp.comp"
    src.write_text(LVP_SHADER)
    out = tmp_path / "cube_lvp"
    cmd = [str(ROOT / "tools/aco_compile/aco-compile"), str(src), "-o", str(out), "--family", "navi21"]
    p = subprocess.run(
        cmd + ["--wave32", "-q"] + (["-D", "ARRAY"] if layers > 6 else []), capture_output=True, text=True
    )
    if p.returncode == 3:
        pytest.skip("aco-compile: " + (p.stdout + p.stderr)[-200:])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "SQ_RSRC_IMG_2D_ARRAY" in (tmp_path / "cube_lvp.s").read_text()
    init = np.random.default_rng(layers).integers(0, 2**32, (layers, S, S), dtype=np.uint64).astype(np.uint32)
    (tmp_path / "img.bin").write_bytes(init.tobytes())
    lvp = [str(exe), str(out) + ".spv", str(tmp_path), "--groups", f"1,1,{layers}", "--storage"]
    lvp += [
        "--image",
        f"0:0:98:{S}:{S}:{tmp_path / 'img.bin'}",
        "--shape",
        f"{6 if layers > 6 else 3}:1:{layers}:1:0:1",
    ]
    lvp += ["--binding", f"0:1:{4 * S * S * layers}"]
    p = subprocess.run(lvp, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    want_img = np.frombuffer((tmp_path / "image.bin").read_bytes(), np.uint32).reshape(layers, S, S)
    want_out = np.frombuffer((tmp_path / "set0_binding1.bin").read_bytes(), np.uint32)
    # wavelift: RADV's storage T# of the cube view (2D_ARRAY, layers 0..layers-1), linear rows
    dev = wavelift.Device("gfx1030", backend="numpy", mode="wave")
    sh = dev.load_aco_shader(str(out) + ".json")
    pitch = 64  # 256-byte rows
    img = np.zeros((layers, S, pitch), np.uint32)
    img[:, :, :S] = init
    ib = dev.upload(img)
    monkeypatch.setattr(
        aco, "image_descriptor", lambda im, gfx11: radv_storage_cube(im.buffer.address, S, S, 0, layers - 1)
    )
    ob = dev.upload(np.full(S * S * layers, 7, np.uint32))
    r = sh.launch(groups=(1, 1, layers), buffers={(0, 1): ob}, images={(0, 0): Image(ib, S, S, "r32ui")})
    assert r.landed, r.refusal
    np.testing.assert_array_equal(dev.download(ob, np.uint32), want_out)
    np.testing.assert_array_equal(dev.download(ib, np.uint32).reshape(layers, S, pitch)[:, :, :S], want_img)
    assert not (want_img == init).all()
