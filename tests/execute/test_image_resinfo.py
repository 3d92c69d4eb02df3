"""image_get_resinfo (frontend/image.py ``_resinfo``, decision 0034) on hand-built T#s of every
dim (1-D, 2-D, 3-D, 1-D/2-D arrays) with random sizes, levels and layers, a per-lane lod, both
modes and tiers.  Expected:

* a NumPy transcription of AMD's own replacement of the instruction (Mesa 22.3.6
  src/amd/common/ac_nir_lower_resinfo.c, GFX10: sizes minified by BASE_LEVEL + lod, at least 1
  for 2-D/3-D; layers DEPTH - BASE_ARRAY + 1; levels LAST_LEVEL - BASE_LEVEL + 1; 0 through the
  null descriptor);
* RADV itself: GLSL imageSize of the same T#s compiled by ACO (tools/aco_compile), which on
  GFX10.3 emits no image_get_resinfo but that lowering's descriptor arithmetic (checked here),
  run through our driver: its results equal image_get_resinfo's at lod 0.

Every case still refused is refused by name; the CUDA kernels compile (NVRTC; no GPU here)."""

from __future__ import annotations

import numpy as np
import pytest
from aco_build import aco_build
from harness import Rig, ptr
from nvrtc_check import check_cuda_kernels

import wavelift
import wavelift.driver.aco as aco
from wavelift.driver.aco import Image
from wavelift.frontend import image as I

DIMS = {  # name -> (dim, T# TYPE, dmask it defines)
    "1D": (I.DIM_1D, 8, 0b1001),
    "2D": (I.DIM_2D, 9, 0b1011),
    "3D": (I.DIM_3D, 10, 0b1111),
    "1D_ARRAY": (I.DIM_1D_ARRAY, 12, 0b1011),
    "2D_ARRAY": (I.DIM_2D_ARRAY, 13, 0b1111),
}


def program(dim_name, dmask, vaddr="v1"):
    n = bin(dmask).count("1")
    dst = "v2" if n == 1 else f"v[2:{1 + n}]"
    return f"""
  v_mul_u32_u24 v1, s10, v0
  v_lshrrev_b32 v1, 5, v1
  image_get_resinfo {dst}, {vaddr}, s[0:7] dmask:{hex(dmask)} dim:SQ_RSRC_IMG_{dim_name} unorm
  s_waitcnt vmcnt(0)
  v_lshlrev_b32 v6, 4, v0
  global_store_dwordx4 v6, v[2:5], s[8:9]
  s_endpgm
"""


def tsharp(typ, w, h, d, base_level, last_level, base_array=0, max_mip=None, addr=0x100000):
    max_mip = last_level if max_mip is None else max_mip
    d3 = 4 | 5 << 3 | 6 << 6 | 7 << 9 | base_level << 12 | last_level << 16 | typ << 28
    return [
        (addr >> 8) & 0xFFFFFFFF,
        ((addr >> 40) & 0xFF) | (20 << 20) | (((w - 1) & 3) << 30),
        ((w - 1) >> 2) | ((h - 1) << 14) | (1 << 31),
        d3,
        (d - 1) | base_array << 16,
        max_mip << 4,
        0,
        0,
    ]


def reference(dim, words, lod):
    """ac_nir_lower_resinfo.c's lower_query_size / query_levels (GFX10), per lane."""
    f = lambda k, lo, n: words[k] >> lo & ((1 << n) - 1)  # noqa: E731
    if words[1] == 0:
        return np.zeros((len(lod), 4), np.uint32)
    width = (f(1, 30, 2) | f(2, 0, 14) << 2) + 1
    height = f(2, 14, 14) + 1
    depth = f(4, 0, 13) + 1
    layers = f(4, 0, 13) - f(4, 16, 13) + 1
    base, last = f(3, 12, 4), f(3, 16, 4)
    level = base + np.asarray(lod, np.int64)
    big = dim in (I.DIM_2D, I.DIM_3D, I.DIM_2D_ARRAY)

    def mini(v):
        m = v >> level
        return np.maximum(m, 1) if big else m

    zero = np.zeros(len(lod), np.int64)
    x = mini(width)
    y = layers + zero if dim == I.DIM_1D_ARRAY else mini(height) if big else zero
    z = mini(depth) if dim == I.DIM_3D else layers + zero if dim == I.DIM_2D_ARRAY else zero
    w = last - base + 1 + zero
    return np.stack([x, y, z, w], 1).astype(np.uint32)


def random_tsharp(rng, dim, typ):
    w = int(rng.integers(1, 1 << 14))
    h = int(rng.integers(1, 1 << 14)) if dim in (I.DIM_2D, I.DIM_3D, I.DIM_2D_ARRAY) else 1
    if dim == I.DIM_3D:
        d = int(rng.integers(1, 1 << 11))
    elif dim in (I.DIM_1D_ARRAY, I.DIM_2D_ARRAY):
        d = int(rng.integers(1, 1 << 13))
    else:
        d = 1
    levels = max(w, h, d if dim == I.DIM_3D else 1).bit_length()
    max_mip = int(rng.integers(0, levels))
    base = int(rng.integers(0, max_mip + 1))
    last = int(rng.integers(base, max_mip + 1))
    base_array = int(rng.integers(0, d)) if dim in (I.DIM_1D_ARRAY, I.DIM_2D_ARRAY) else 0
    return tsharp(typ, w, h, d, base, last, base_array, max_mip), last - base + 1


def run_resinfo(dim_name, words, nlevels, mode="wave", dmask=None):
    dim, _typ, defined = DIMS[dim_name]
    dmask = defined if dmask is None else dmask
    r = Rig(program(dim_name, dmask))
    out = r.buf(np.full(4 * 32, 7, np.uint32), "out")
    # lane k asks for lod (k * nlevels) >> 5: every level of the view, in order
    res = r.run(r.config(user_sgprs=list(words) + list(ptr(out)) + [nlevels], tgid=(False,) * 3), mode=mode)
    lod = (np.arange(32) * nlevels) >> 5
    return res, r.read(out, np.uint32, 4 * 32).reshape(32, 4), lod


@pytest.mark.tiers  # runs a program: NumPy blocks and the native tier (tests/conftest.py)
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("dim_name", sorted(DIMS))
def test_resinfo_equals_the_descriptor_lowering(dim_name, mode):
    dim, typ, defined = DIMS[dim_name]
    rng = np.random.default_rng(sorted(DIMS).index(dim_name))
    for _ in range(4):
        words, nlevels = random_tsharp(rng, dim, typ)
        res, got, lod = run_resinfo(dim_name, words, nlevels, mode)
        assert res.landed, res.refusal
        want = reference(dim, words, lod)[:, [c for c in range(4) if defined >> c & 1]]
        n = want.shape[1]
        np.testing.assert_array_equal(got[:, :n], want)


def native_default(test_id: str) -> bool:
    return "2D_ARRAY" in test_id or "-3D-" in test_id


def test_resinfo_one_component_and_null_descriptor():
    words, nlevels = random_tsharp(np.random.default_rng(9), I.DIM_2D, 9)
    for c in (0, 1, 3):
        res, got, lod = run_resinfo("2D", words, nlevels, dmask=1 << c)
        assert res.landed, res.refusal
        np.testing.assert_array_equal(got[:, 0], reference(I.DIM_2D, words, lod)[:, c])
    res, got, _ = run_resinfo("2D", [0] * 8, 1)
    assert res.landed, res.refusal
    assert (got[:, :3] == 0).all()


# ---- refused by name -------------------------------------------------------------------------
DESC = "image.unsupported_descriptor"


@pytest.mark.parametrize(
    "dim_name,words,nlevels,dmask",
    [
        ("2D", tsharp(13, 64, 64, 4, 0, 3), 4, None),  # a 2-D array T# through dim 2D
        ("2D_ARRAY", tsharp(11, 64, 64, 1, 0, 3), 4, None),  # a cube T# (TYPE 11)
        ("2D", tsharp(9, 64, 64, 1, 0, 3), 4, 0b0100),  # z of a 2-D image
        ("1D", tsharp(8, 64, 1, 1, 0, 3), 4, 0b0010),  # y of a 1-D image
        ("2D", tsharp(9, 64, 64, 1, 1, 3), 4, None),  # lod past LAST_LEVEL (3 levels in the view)
        ("1D", tsharp(8, 4, 1, 1, 0, 5, max_mip=5), 6, None),  # a 1-D width that minifies to 0
        ("2D", [0, 0, 0, 9 << 28, 0, 0, 0, 0], 1, None),  # dword 1 zero, TYPE 2D
        ("2D", [0, 20 << 20, 0, 0, 0, 0, 0, 0], 1, None),  # TYPE 0, dword 1 set
    ],
    ids=[
        "array_through_2d",
        "cube_type",
        "z_of_2d",
        "y_of_1d",
        "lod_past_last",
        "1d_zero",
        "null_d1",
        "null_type",
    ],
)
def test_resinfo_refused_by_name(dim_name, words, nlevels, dmask):
    res, got, _ = run_resinfo(dim_name, words, nlevels, dmask=dmask)
    assert not res.landed and res.refusal.code == DESC, res.refusal
    assert "image_get_resinfo" in res.refusal.message
    assert (got == 7).all()


@pytest.mark.parametrize(
    "text",
    [
        "image_get_resinfo v[2:5], v1, s[0:7] dmask:0xf dim:SQ_RSRC_IMG_CUBE unorm",
        "image_get_resinfo v[2:5], v1, s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D_MSAA unorm",
        "image_get_resinfo v[2:5], v1, s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm lwe",
        "image_get_resinfo v[2:5], v1, s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm a16",
    ],
    ids=["cube", "msaa", "lwe", "a16"],
)
def test_untranslated_resinfo_forms_refused(text):
    src = program("2D", 0xF).replace(
        "image_get_resinfo v[2:5], v1, s[0:7] dmask:0xf dim:SQ_RSRC_IMG_2D unorm", text
    )
    assert text in src
    r = Rig(src)
    out = r.buf(np.full(4 * 32, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=tsharp(9, 8, 8, 1, 0, 0) + list(ptr(out)) + [1], tgid=(False,) * 3))
    assert res.refusal.code == "program.unsupported_instruction", res.refusal
    assert "image_get_resinfo" in res.refusal.message


# ---- RADV's own answer: GLSL imageSize compiled by ACO ---------------------------------------
SHADER = """#version 450
layout(local_size_x = 32) in;
layout(set = 0, binding = 0, r32ui) uniform readonly uimage1D i1;
layout(set = 0, binding = 1, r32ui) uniform readonly uimage2D i2;
layout(set = 0, binding = 2, r32ui) uniform readonly uimage3D i3;
layout(set = 0, binding = 3, r32ui) uniform readonly uimage1DArray i1a;
layout(set = 0, binding = 4, r32ui) uniform readonly uimage2DArray i2a;
layout(set = 0, binding = 5) buffer Out { uint v[]; } o;
void main() {
  uint k = gl_GlobalInvocationID.x;
  if (k == 0u) {
    o.v[0] = imageSize(i1);
    o.v[1] = imageSize(i2).x; o.v[2] = imageSize(i2).y;
    o.v[3] = imageSize(i3).x; o.v[4] = imageSize(i3).y; o.v[5] = imageSize(i3).z;
    o.v[6] = imageSize(i1a).x; o.v[7] = imageSize(i1a).y;
    o.v[8] = imageSize(i2a).x; o.v[9] = imageSize(i2a).y; o.v[10] = imageSize(i2a).z;
  }
}
"""
ORDER = ["1D", "2D", "3D", "1D_ARRAY", "2D_ARRAY"]


@pytest.mark.parametrize("family,wave", [("navi21", 32), ("navi10", 64)])
def test_resinfo_equals_radv_image_size(family, wave, tmp_path, monkeypatch):
    out = aco_build(tmp_path, "size", SHADER, family, wave)
    asm = (tmp_path / "size.s").read_text()
    assert "image_get_resinfo" not in asm and "image_" not in asm  # RADV reads the T# instead
    target = {"navi21": "gfx1030", "navi10": "gfx1010"}[family]
    rng = np.random.default_rng(wave)
    for _ in range(3):
        words = {}
        for name in ORDER:
            dim, typ, _ = DIMS[name]
            words[name] = random_tsharp(rng, dim, typ)[0]
        dev = wavelift.Device(target, backend="numpy", mode="wave")
        sh = dev.load_aco_shader(str(out) + ".json")
        bufs = {name: dev.upload(np.zeros(64, np.uint32)) for name in ORDER}
        by_addr = {bufs[n].address: n for n in ORDER}
        monkeypatch.setattr(
            aco, "image_descriptor", lambda im, gfx11: list(words[by_addr[im.buffer.address]])
        )
        ob = dev.upload(np.full(16, 7, np.uint32))
        r = sh.launch(
            groups=(1, 1, 1),
            buffers={(0, 5): ob},
            images={(0, k): Image(bufs[n], 1, 1, "r32ui") for k, n in enumerate(ORDER)},
        )
        assert r.landed, r.refusal
        radv = dev.download(ob, np.uint32)[:11].tolist()
        ours = []
        for name in ORDER:
            dim, _typ, defined = DIMS[name]
            res, got, _ = run_resinfo(name, words[name], 1)
            assert res.landed, res.refusal
            ours += got[0, : bin(defined & 7).count("1")].tolist()
        assert ours == radv, (ours, radv)


# ---- CUDA: NVRTC compiles the kernels (no GPU here) ------------------------------------------
def test_cuda_kernels_of_resinfo_compile():
    from wavelift.frontend.program import translate

    progs = [translate(Rig(program(n, DIMS[n][2])).code, "gfx1030", 32, 0x1000) for n in ("1D_ARRAY", "3D")]
    check_cuda_kernels(progs)
