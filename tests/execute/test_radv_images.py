"""RADV's own streams with images (issue 22 item 6; decision 0033): our GLSL image shaders
(tests/fixtures/radv_images/*.comp) as RADV 22.3.6 recorded them on its null device with
tools/radv_capture (tools/radv_capture/record_images.sh) for navi21 wave32/wave64 and navi10
wave64: every image uploaded by RADV's own meta compute dispatches (vkCmdCopyBufferToImage on a
compute queue, into the tiled layout addrlib chose), our dispatch, and every image read back by
RADV's meta dispatches (vkCmdCopyImageToBuffer).  Each capture replays in wavelift (wave and lane
mode; NumPy blocks and the native tier) and the read-back buffers must equal what lavapipe
computed running the same application (tools/radv_capture/run_lavapipe.c, the same vkapp.h) on
the same data: bit for bit where the result is determined, lavapipe's one-ulp UNORM reads
(docs/float-semantics.md) and decision 0025's bound where linear filtering decides.  The
committed lavapipe answers (tests/fixtures/radv_images/lavapipe/) are re-made live when lavapipe,
gcc and the Vulkan headers are there (skipped cleanly otherwise), and so is the full-screen
pass's (16 MB, not committed).  A render target RADV compresses with DCC is refused by name.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from radv_fixtures import binding_bytes, load_capture, read_bindings
from testpaths import FIXTURES, ROOT

from wavelift import Capture, replay

FIX = FIXTURES / "radv_images"
LVP_LIB = "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"
VK_HEADER = "/usr/include/vulkan/vulkan_core.h"
BUILDS = ("w32", "w64", "navi10-w64")
SHADERS = ("img_storage", "img_formats", "img_sample", "texel_buffers")
BACKEND = "numpy"  # the GPU test below replays the same checks on CUDA (monkeypatched)


def capture(name: str, tmp_path: Path) -> Capture:
    return load_capture(FIX / "captures" / f"{name}.wlcap.gz", tmp_path)


def bindings(name: str) -> dict[int, dict[str, str]]:
    return read_bindings(FIX / name)


result = binding_bytes


def lavapipe(shader: str, binding: int) -> bytes:
    return (FIX / "lavapipe" / shader / f"set0_binding{binding}.bin").read_bytes()


def replayed(name: str, mode: str, tmp_path: Path) -> tuple[Capture, dict[int, dict[str, str]]]:
    cap = capture(name, tmp_path)
    rs = replay(cap, mode=mode, backend=BACKEND)
    refused = [(i, str(r.refusal)) for i, r in enumerate(rs) if not r.landed]
    assert not refused, refused
    return cap, bindings(name)


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of the last place of f32 (same-sign finite values)."""
    g, w = got.view(np.int32).astype(np.int64), want.view(np.int32).astype(np.int64)
    return np.abs(g - w)


# ---- img_storage: imageLoad/imageStore of rgba8, r32f (3-D), rgba16f (2-D array), r32ui, rg16
# snorm: every result determined, so bit for bit


def check_storage(name, mode, tmp_path):
    cap, b = replayed(name, mode, tmp_path)
    for k in (1, 3, 5, 6, 7):
        got, want = result(cap, b[k]), lavapipe("img_storage", k)
        assert len(got) == len(want) and any(want)
        diff = np.flatnonzero(np.frombuffer(got, np.uint8) != np.frombuffer(want, np.uint8))
        assert not len(diff), f"binding {k}: {len(diff)} bytes differ from lavapipe, first at {diff[:8]}"
    # an independent NumPy reference for the rgba8 image: 1 - texel.bgra
    a = np.frombuffer((FIX / "inputs/img_storage/a.bin").read_bytes(), np.uint8).reshape(8, 16, 4)
    np.testing.assert_array_equal(
        np.frombuffer(result(cap, b[1]), np.uint8).reshape(8, 16, 4), 255 - a[..., [2, 1, 0, 3]]
    )


# ---- img_formats: a 1-D r8 (linear; RADV's meta copies use 2-D dims on it), rg16f, rgba32f,
# rgb10_a2, r11f_g11f_b10f read-modify-write, image atomics (add, max) on r32ui


def check_formats(name, mode, tmp_path):
    cap, b = replayed(name, mode, tmp_path)
    for k in range(7):
        got, want = result(cap, b[k]), lavapipe("img_formats", k)
        assert len(got) == len(want) and any(want)
        diff = np.flatnonzero(np.frombuffer(got, np.uint8) != np.frombuffer(want, np.uint8))
        assert not len(diff), f"binding {k}: {len(diff)} bytes differ from lavapipe, first at {diff[:8]}"
    # NumPy references: r8 1 - x; the atomics' sums and maxima over the 16x16 invocations
    inp = FIX / "inputs/img_formats"
    r8 = np.frombuffer((inp / "r8.bin").read_bytes(), np.uint8)
    np.testing.assert_array_equal(np.frombuffer(result(cap, b[0]), np.uint8), 255 - r8)
    add = np.frombuffer((inp / "atomic.bin").read_bytes(), np.uint32).reshape(8, 8).copy()
    mx = np.frombuffer((inp / "amax.bin").read_bytes(), np.uint32).reshape(8, 8).copy()
    for y in range(16):
        for x in range(16):
            add[y // 2, x // 2] += np.uint32(x * 17 + y + 1)
            mx[7 - y // 2, 7 - x // 2] = max(mx[7 - y // 2, 7 - x // 2], (x * y) << 20)
    np.testing.assert_array_equal(np.frombuffer(result(cap, b[5]), np.uint32).reshape(8, 8), add)
    np.testing.assert_array_equal(np.frombuffer(result(cap, b[6]), np.uint32).reshape(8, 8), mx)


# ---- img_sample: texelFetch and textureLod, nearest and linear, 2-D / 2-D array / 3-D

SPAN_2D, SPAN_3D = 2, 3  # axes a linear lookup blends


def check_sample(name, mode, tmp_path):
    cap, b = replayed(name, mode, tmp_path)
    got = np.frombuffer(result(cap, b[6]), np.float32).reshape(128, 8, 4)
    want = np.frombuffer(lavapipe("img_sample", 6), np.float32).reshape(128, 8, 4)
    inp = FIX / "inputs/img_sample"
    t8 = np.frombuffer((inp / "t8.bin").read_bytes(), np.uint8).reshape(16, 16, 4)
    t16 = np.frombuffer((inp / "t16.bin").read_bytes(), np.float16).astype(np.float64)
    t3 = np.frombuffer((inp / "t3d.bin").read_bytes(), np.float32).astype(np.float64)
    c = np.frombuffer((inp / "coords.bin").read_bytes(), np.float32).reshape(128, 4)
    i = np.arange(128)
    # NumPy reference, exact: texelFetch of rgba8 and the nearest/repeat lookup are c / 255
    # correctly rounded (docs/float-semantics.md)
    np.testing.assert_array_equal(
        got[:, 0], (t8[(i // 16) % 16, i % 16] / np.float32(255)).astype(np.float32)
    )
    ij = np.floor(c[:, :2].astype(np.float64) * 16).astype(int) % 16
    np.testing.assert_array_equal(got[:, 1], (t8[ij[:, 1], ij[:, 0]] / np.float32(255)).astype(np.float32))
    # lavapipe: UNORM reads within one ulp (it multiplies by 1/255), float texels bit for bit
    for s in (0, 1):
        assert ulps(got[:, s], want[:, s]).max() <= 1, s
    for s in (4, 5, 6):
        np.testing.assert_array_equal(got[:, s], want[:, s], err_msg=f"slot {s}")
    # linear filtering, decision 0025's bound: rgba8 within 1/255; float formats within 2^-9 of
    # the texels' span per blended axis plus 2 ulp of the largest texel
    assert np.abs(got[:, 2] - want[:, 2]).max() <= 1 / 255
    for s, texels, axes in ((3, t16, SPAN_2D), (7, t3, SPAN_3D)):
        span, top = texels.max() - texels.min(), np.abs(texels).max()
        bound = axes * span * 2.0**-9 + 2 * top * 2.0**-23
        d = np.abs(got[:, s].astype(np.float64) - want[:, s])
        assert d.max() <= bound, (s, d.max(), bound)


# ---- texel_buffers: uniform texel buffers (rgba8, r32f) and storage texel buffers (rgba16f,
# r32ui) read and written


def check_texel(name, mode, tmp_path):
    cap, b = replayed(name, mode, tmp_path)
    for k in (2, 3):
        assert result(cap, b[k]) == lavapipe("texel_buffers", k), k
    got = np.frombuffer(result(cap, b[4]), np.float32).reshape(256, 2, 4)
    want = np.frombuffer(lavapipe("texel_buffers", 4), np.float32).reshape(256, 2, 4)
    u8 = np.frombuffer((FIX / "inputs/texel_buffers/u8.bin").read_bytes(), np.uint8).reshape(256, 4)
    np.testing.assert_array_equal(got[:, 0], (u8 / np.float32(255)).astype(np.float32))  # NumPy, exact
    assert ulps(got[:, 0], want[:, 0]).max() <= 1  # lavapipe's UNORM reads
    assert ulps(got[:, 1, 1:3], want[:, 1, 1:3]).max() <= 1
    np.testing.assert_array_equal(got[:, 1, [0, 3]], want[:, 1, [0, 3]])


# ---- mip chains, arrays and cubes (decision 0037): RADV uploads and reads back every level and
# layer (one copy region per level), into the layouts addrlib chose with a real GB_ADDR_CONFIG


def chain(data: bytes, dtype, n: int, levels: int, layers: int, channels: int):
    """A staging/read-back buffer's levels (vkapp.h: levels in order, each level's layers in
    order, tightly packed) as arrays [layer, y, x, channel]."""
    a = np.frombuffer(data, dtype)
    out, off = [], 0
    for lv in range(levels):
        m = max(n >> lv, 1)
        k = layers * m * m * channels
        out.append(a[off : off + k].reshape(layers, m, m, channels))
        off += k
    assert off == len(a)
    return out


def check_placement(cap: Capture, name: str) -> None:
    """Where the replay put every texel of every level and layer: each image's bytes (its BO,
    after RADV's upload, our dispatch and RADV's read-back, all replayed by wavelift) at the
    addresses addrlib gives (layout.address, held to Mesa's addrlib by tests/memory/
    test_layout.py; the capture's GB_ADDR_CONFIG, the log's swizzle mode and pipe/bank XOR) are
    the read-back buffer's texels.  A layout that only round-trips through wavelift's own
    copies would pass the read-back comparisons but not this."""
    from wavelift.memory import layout as L

    gb = cap.gb_addr_config
    navi10 = "navi10" in name
    chip = L.Chip.from_gb_addr_config(gb, rbplus=not navi10, z_tail_fix=not navi10)
    surf = re.findall(
        r"swizzle_mode (\d+), tiled, .*tile_swizzle (0x[0-9a-f]+)",
        (FIX / name / "radv_capture.log").read_text(),
    )
    images = [f for _, f in sorted(bindings(name).items()) if "readback_va" in f]
    assert len(images) == len(surf) and images
    for f, (mode, xor) in zip(images, surf, strict=True):
        w, h, d = (int(v) for v in f["extent"].split(","))
        layers, levels, tb = int(f["layers"]), int(f.get("levels", 1)), int(f["texel_bytes"])
        three_d = f["view"] == "2"  # VK_IMAGE_VIEW_TYPE_3D
        s = L.Surface(
            int(mode),
            L.RSRC_3D if three_d else L.RSRC_2D,
            tb.bit_length() - 1,
            w,
            h,
            d if three_d else layers,
            levels,
        )
        bo = np.frombuffer(cap.read(int(f["va"], 16), int(f["size"])), np.uint8)
        rb = np.frombuffer(cap.read(int(f["readback_va"], 16), int(f["bytes"])), np.uint8)
        off = 0
        for lv in range(levels):
            lw, lh, ld = (max(n >> lv, 1) for n in (w, h, d))
            nz = ld if three_d else layers
            z, y, x = np.meshgrid(np.arange(nz), np.arange(lh), np.arange(lw), indexing="ij")
            addr = L.address(chip, s, x.ravel(), y.ravel(), z.ravel(), lv, int(xor, 16)).astype(np.int64)
            got = bo[addr[:, None] + np.arange(tb)]
            want = rb[off : off + addr.size * tb].reshape(-1, tb)
            np.testing.assert_array_equal(got, want, err_msg=f"{name} binding {f['binding']} level {lv}")
            off += addr.size * tb
        assert off == len(rb)


def check_mips(name, mode, tmp_path):
    """image_load_mip / image_store_mip over every level: a 128x128 rgba8 chain in SW_64KB_R_X
    (levels 1..7 in the mip tail, the destination with a pipe/bank XOR), a 32x32 r32ui 2-D array
    of 3 layers and 6 levels and a 16x16 rgba16f cube of 5 levels (SW_4KB_D_X, tails).  lavapipe
    does not implement VK_AMD_shader_image_load_store_lod (its stores all land in level 0): the
    oracle is NumPy, every result determined, so bit for bit."""
    cap, b = replayed(name, mode, tmp_path)
    check_placement(cap, name)
    inp = FIX / "inputs/img_mips"
    src = chain((inp / "src.bin").read_bytes(), np.uint8, 128, 8, 1, 4)
    got = chain(result(cap, b[1]), np.uint8, 128, 8, 1, 4)
    for lv in range(8):
        np.testing.assert_array_equal(got[lv], 255 - src[lv][..., [2, 1, 0, 3]], err_msg=f"rgba8 level {lv}")
    src = chain((inp / "asrc.bin").read_bytes(), np.uint32, 32, 6, 3, 1)
    got = chain(result(cap, b[3]), np.uint32, 32, 6, 3, 1)
    for lv in range(6):
        want = src[lv] * np.uint32(3) + (16 * lv + np.arange(3, dtype=np.uint32))[:, None, None, None]
        np.testing.assert_array_equal(got[lv], want, err_msg=f"r32ui array level {lv}")
    src = chain((inp / "csrc.bin").read_bytes(), np.float16, 16, 5, 6, 4)
    got = chain(result(cap, b[5]), np.float16, 16, 5, 6, 4)
    for lv in range(5):
        want = (src[lv][..., ::-1].astype(np.float32) * -2).astype(np.float16)
        np.testing.assert_array_equal(
            got[lv].view(np.uint16), want.view(np.uint16), err_msg=f"cube level {lv}"
        )


def _rne8(v: float) -> int:
    return int(np.round(v * 256))  # to nearest even, as 0025's 16.8 / 8-bit LOD fractions


def _bilinear_rule(img: np.ndarray, s: float, t: float) -> np.ndarray:
    """Decision 0025's documented filter on one level (clamp to edge): x = s * N - 0.5 in 16.8
    fixed point rounded to nearest even, integer weights, exact sum, one rounding to f32."""
    m = img.shape[0]
    ws = []
    for v in (s, t):
        x = _rne8(float(np.float32(v * m)) - 0.5)
        i0, a = x >> 8, x & 255
        ws.append(((min(max(i0, 0), m - 1), 256 - a), (min(max(i0 + 1, 0), m - 1), a)))
    out = np.zeros(img.shape[-1])
    for xi, wx in ws[0]:
        for yi, wy in ws[1]:
            out += (wx * wy) * img[yi, xi]
    return (out / 65536).astype(np.float32)


def check_mipsample(name, mode, tmp_path):
    """textureLod over full chains: the 128x128 rgba8 chain (SW_64KB_R_X, tail) point-sampled
    with nearest mip and filtered trilinearly, a 32x32 rgba8 cube of 6 levels point and linear,
    texelFetch / point textureLod of a 32x32x3 r32f array of 6 levels; lavapipe and NumPy."""
    cap, b = replayed(name, mode, tmp_path)
    check_placement(cap, name)
    got = np.frombuffer(result(cap, b[6]), np.float32).reshape(256, 8, 4)
    want = np.frombuffer(lavapipe("img_mipsample", 6), np.float32).reshape(256, 8, 4)
    inp = FIX / "inputs/img_mipsample"
    c = np.frombuffer((inp / "coords.bin").read_bytes(), np.float32).reshape(256, 3, 4).astype(np.float64)
    t8 = [lv[0] for lv in chain((inp / "t8.bin").read_bytes(), np.uint8, 128, 8, 1, 4)]
    arr = chain((inp / "arr.bin").read_bytes(), np.float32, 32, 6, 3, 1)
    unorm = [(lv / np.float32(255)).astype(np.float32) for lv in t8]
    # lavapipe: UNORM point reads within its one ulp, r32f bit for bit
    for s in (0, 2, 6, 7):
        assert ulps(got[:, s], want[:, s]).max() <= 1, s
    for s in (4, 5):
        np.testing.assert_array_equal(got[:, s], want[:, s], err_msg=f"slot {s}")
    # NumPy, exact: nearest mip (level floor(λ + 0.5)), nearest texel (repeat; edge), texelFetch
    for k in range(256):
        lv = int(np.floor(c[k, 0, 2] + 0.5))
        m = 128 >> lv
        x, y = (int(np.floor(v * m)) % m for v in c[k, 0, :2])
        np.testing.assert_array_equal(got[k, 0], unorm[lv][y, x], err_msg=f"point lane {k}")
        lf = k % 8
        np.testing.assert_array_equal(got[k, 6], unorm[lf][((k * 7) % 128) >> lf, (k % 128) >> lf])
        la, z = k % 6, k % 3
        np.testing.assert_array_equal(got[k, 5, 0], arr[la][z, (k // 8) >> la, (k % 32) >> la, 0])
        lv = min(int(np.floor(c[k, 2, 2] + 0.5)), 5)
        m = 32 >> lv
        x, y = (min(max(int(np.floor(v * m)), 0), m - 1) for v in c[k, 2, :2])
        np.testing.assert_array_equal(got[k, 4, 0], arr[lv][z, y, x, 0], err_msg=f"array lane {k}")
    # trilinear: wavelift is decision 0025's rule bit for bit (NumPy model: 16.8 coordinates, the
    # LOD in 8 fraction bits, each level's f32 result, one f64 blend rounded once) ...
    f64 = [u.astype(np.float64) for u in unorm]
    for k in range(256):
        s, t, lam = c[k, 0, 0], c[k, 0, 1], c[k, 0, 3]
        q = _rne8(lam)
        l0, w = min(q >> 8, 7), (q & 255) / 256
        l1 = min(l0 + 1, 7)
        lo, hi = _bilinear_rule(f64[l0], s, t), _bilinear_rule(f64[l1], s, t)
        ref = ((1 - w) * lo.astype(np.float64) + w * hi.astype(np.float64)).astype(np.float32)
        np.testing.assert_array_equal(got[k, 1], ref, err_msg=f"trilinear lane {k}")
    # ... and lavapipe, which filters rgba8 in 8-bit fixed point in two stages (each level, then
    # the level blend), within 2/255 (decision 0037; measured 0.0062); the cube's linear lookups
    # (LOD <= 3, footprints inside a face) within 0025's rgba8 1/255 plus 2^-9 for the mip weight
    assert np.abs(got[:, 1] - want[:, 1].astype(np.float64)).max() <= 2 / 255
    assert np.abs(got[:, 3] - want[:, 3].astype(np.float64)).max() <= 1 / 255 + 2.0**-9


def check_mip3d(name, mode, tmp_path):
    """A cube array (2 cubes of 16x16, 5 levels, SW_4KB_D_X) point-sampled with nearest mip, and
    a 32x16x8 r32f 3-D chain of 6 levels (SW_4KB_S_X, thick 8x16x8 blocks, levels 2..5 in the
    tail) point-sampled, trilinear with a linear mip blend, and texelFetch'd per level."""
    cap, b = replayed(name, mode, tmp_path)
    check_placement(cap, name)
    got = np.frombuffer(result(cap, b[4]), np.float32).reshape(64, 4, 4)
    want = np.frombuffer(lavapipe("img_mip3d", 4), np.float32).reshape(64, 4, 4)
    inp = FIX / "inputs/img_mip3d"
    c = np.frombuffer((inp / "coords.bin").read_bytes(), np.float32).reshape(64, 2, 4).astype(np.float64)
    a = np.frombuffer((inp / "t3.bin").read_bytes(), np.float32)
    t3, off = [], 0
    for lv in range(6):
        w, h, d = (max(n >> lv, 1) for n in (32, 16, 8))
        t3.append(a[off : off + w * h * d].reshape(d, h, w))
        off += w * h * d
    assert ulps(got[:, 0], want[:, 0]).max() <= 1  # rgba8 cube array: lavapipe's UNORM ulp
    for s in (1, 3):
        np.testing.assert_array_equal(got[:, s], want[:, s], err_msg=f"slot {s}")
    for k in range(64):  # NumPy, exact: texelFetch and the nearest-mip point samples (edge)
        lv = k % 4
        np.testing.assert_array_equal(got[k, 3, 0], t3[lv][(k % 8) >> lv, (k % 16) >> lv, (k % 32) >> lv])
        lv = int(np.floor(c[k, 0, 3] + 0.5))
        d, h, w = t3[lv].shape
        x, y, z = (min(int(np.floor(v * n)), n - 1) for v, n in zip(c[k, 0, :3], (w, h, d), strict=True))
        np.testing.assert_array_equal(got[k, 1, 0], t3[lv][z, y, x], err_msg=f"3-D point lane {k}")
    # trilinear with a linear mip blend: decision 0025's bound, 2^-9 of the span per blended axis
    # (three, and the mip weight) plus 4 ulp
    span, top = float(np.ptp(a)), float(np.abs(a).max())
    bound = 4 * span * 2.0**-9 + 4 * top * 2.0**-23
    assert np.abs(got[:, 2].astype(np.float64) - want[:, 2]).max() <= bound


CHECKS = {
    "img_storage": check_storage,
    "img_formats": check_formats,
    "img_sample": check_sample,
    "texel_buffers": check_texel,
    "img_mips": check_mips,
    "img_mipsample": check_mipsample,
    "img_mip3d": check_mip3d,
}
MIP_SHADERS = ("img_mips", "img_mipsample", "img_mip3d")


# default run: each shader once in wave mode on NumPy blocks (one build each) and one navi10
# capture in lane mode; every build, both modes, every tier with -m slow
@pytest.mark.parametrize(
    "shader,build,mode",
    [
        ("img_storage", "w32", "wave"),
        ("img_sample", "w64", "wave"),
        ("texel_buffers", "navi10-w64", "wave"),
        ("img_storage", "navi10-w64", "lane"),
        ("img_formats", "w32", "wave"),
        ("img_mipsample", "w64", "wave"),
        ("img_mip3d", "navi10-w64", "lane"),
    ],
)
def test_radv_image_capture_equals_lavapipe(shader, build, mode, tmp_path):
    CHECKS[shader](f"{shader}-{build}", mode, tmp_path)


@pytest.mark.slow
@pytest.mark.tiers
@pytest.mark.parametrize("mode", ("wave", "lane"))
@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("shader", SHADERS + MIP_SHADERS)
def test_radv_image_capture_every_tier(shader, build, mode, tmp_path):
    CHECKS[shader](f"{shader}-{build}", mode, tmp_path)


@pytest.mark.cuda
@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("shader", SHADERS + MIP_SHADERS)
def test_radv_image_capture_on_cuda(shader, build, tmp_path, monkeypatch):
    """The same captures and checks against lavapipe on the CUDA backend (lane mode): every
    dispatch, RADV's meta copies included, translated to CUDA and run on the GPU."""
    from wavelift.backends.cuda import _gpu_problem

    if why := _gpu_problem():
        pytest.skip(f"no CUDA device: {why}")
    monkeypatch.setitem(globals(), "BACKEND", "cuda")
    CHECKS[shader](f"{shader}-{build}", "lane", tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("build,mode", [("w32", "wave"), ("navi10-w64", "lane")])
def test_radv_mip_storage_capture(build, mode, tmp_path):
    """image_load_mip/image_store_mip over every level, mip tails of SW_64KB_R_X and
    SW_4KB_D_X, a 2-D array and a cube (~30 s a replay: 225 dispatches, RADV's meta copies of
    every level and layer)."""
    check_mips(f"img_mips-{build}", mode, tmp_path)


# what RADV and addrlib chose for the mip captures (radv_capture.log) and what wavelift's layout
# code (checked against addrlib, tests/memory/test_layout.py) places in the mip tail
MIP_SURFACES = {
    # (width, height, depth, layers, bytes a texel, levels): (swizzle mode, RADV/addrlib's size,
    # the levels in the mip tail)
    (128, 128, 1, 1, 4, 8): ("64KB_R_X", 131072, range(1, 8)),
    (32, 32, 1, 3, 4, 6): ("4KB_D_X", 24576, range(1, 6)),
    (16, 16, 1, 6, 8, 5): ("4KB_D_X", 24576, range(0, 5)),
    (32, 32, 1, 6, 4, 6): ("4KB_D_X", 49152, range(1, 6)),
    (16, 16, 1, 12, 4, 5): ("4KB_D_X", 49152, range(0, 5)),
    (32, 16, 8, 1, 4, 6): ("4KB_S_X", 28672, range(2, 6)),  # 3-D, thick 8x16x8 blocks
}
MIP_NSURF = {"img_mips": 6, "img_mipsample": 5, "img_mip3d": 3}


@pytest.mark.parametrize("name", [f"{s}-{b}" for s in MIP_SHADERS for b in BUILDS])
def test_mip_captures_hold_real_layouts(name, tmp_path):
    """The mip captures carry the GB_ADDR_CONFIG addrlib laid them out with (navi21 0x444: 16
    pipes, 16 packers; navi10 0x00100044), tiled swizzle modes with mip tails (wavelift's
    surface_info, held to addrlib, gives RADV's sizes and the tail levels of MIP_SURFACES), and
    the second 64 KiB image of each capture a nonzero pipe/bank XOR (tile_swizzle), the others
    none (ac_surface gives one only to 64 KiB _X modes)."""
    from wavelift.memory import layout as L

    gb = 0x100044 if "navi10" in name else 0x444
    assert capture(name, tmp_path).gb_addr_config == gb
    log = (FIX / name / "radv_capture.log").read_text()
    assert f"gb_addr_config 0x{gb:x}," in log
    chip = L.Chip.from_gb_addr_config(gb, rbplus="navi10" not in name, z_tail_fix="navi10" not in name)
    modes = {v: k for k, v in L.sw_mode_names().items()}
    surf = re.findall(
        r"surface (\d+)x(\d+)x(\d+) layers (\d+) bpe (\d+): swizzle_mode (\d+), tiled, DCC no .*"
        r"size (\d+), alignment \d+, levels (\d+), tile_swizzle (0x[0-9a-f]+)",
        log,
    )
    assert len(surf) == MIP_NSURF[name.split("-")[0]], log
    big = 0
    for w, h, d, layers, bpe, mode, size, levels, xor in surf:
        key = tuple(int(v) for v in (w, h, d, layers, bpe, levels))
        want_mode, want_size, want_tail = MIP_SURFACES[key]
        assert (int(mode), int(size)) == (modes[want_mode], want_size), key
        rsrc, depth = (L.RSRC_3D, key[2]) if key[2] > 1 else (L.RSRC_2D, key[3])
        info = L.surface_info(
            L.Surface(int(mode), rsrc, key[4].bit_length() - 1, key[0], key[1], depth, key[5]), chip
        )
        assert info.slice_size * info.slices == int(size), key
        assert [lv for lv, m in enumerate(info.mips) if m.tail is not None] == list(want_tail), key
        if want_mode.startswith("64KB"):
            big += 1
        assert int(xor, 16) == (0x80 if want_mode.startswith("64KB") and big == 2 else 0), key


def test_captures_hold_radv_meta_copies_on_a_compute_queue(tmp_path):
    """What makes these captures a game's: the stream is a compute queue's, and around our
    dispatch RADV's own meta dispatches upload and read back every image (one per image, per
    slice of a 3-D image and per layer of an array: 18 + 1 + 18 for img_storage)."""
    listing = (FIX / "img_storage-w32" / "pm4_listing.txt").read_text()
    assert listing.startswith("== compute IB initial_preamble")
    assert listing.count(" DISPATCH_DIRECT ") == 37
    assert "queue family 1 (compute)" in (FIX / "img_storage-w32" / "radv_capture.log").read_text()
    assert len(replay(capture("img_storage-w32", tmp_path), mode="wave")) == 37


def test_dcc_render_target_is_refused_by_name(tmp_path):
    """A render target a compute pass also writes (usage STORAGE | COLOR_ATTACHMENT, > 512x512):
    RADV compresses it with DCC (its log says so); every dispatch touching it — RADV's upload,
    ours and RADV's read-back — is refused with image.unsupported_layout and lands nothing."""
    log = (FIX / "dcc_target-w32" / "radv_capture.log").read_text()
    assert re.search(r"surface 1024x576x1 .*DCC yes", log), log
    cap = capture("dcc_target-w32", tmp_path)
    (f,) = bindings("dcc_target-w32").values()
    rs = replay(cap, mode="wave")
    assert len(rs) == 3
    assert [r.refusal.code if r.refusal else None for r in rs] == ["image.unsupported_layout"] * 3
    assert not any(cap.read(int(f["va"], 16), 1 << 20)) and not any(result(cap, f))


# ---- lavapipe live: the committed answers and the full-screen pass


@pytest.fixture(scope="module")
def run_lavapipe(tmp_path_factory):
    if not (os.path.exists(LVP_LIB) and os.path.exists(VK_HEADER) and shutil.which("gcc")):
        pytest.skip("lavapipe (mesa-vulkan-drivers), the Vulkan headers (libvulkan-dev) or gcc missing")
    exe = tmp_path_factory.mktemp("lvp") / "run_lavapipe"
    p = subprocess.run(
        ["gcc", "-O1", "-o", str(exe), str(ROOT / "tools/radv_capture/run_lavapipe.c"), "-ldl"],
        capture_output=True,
        text=True,
    )
    if p.returncode:
        pytest.skip("run_lavapipe does not build here: " + p.stderr[-300:])
    return exe


def lavapipe_live(exe, name: str, out: Path) -> None:
    """Run the capture's own command line (command.txt) on lavapipe, from its directory."""
    line = next(x for x in (FIX / name / "command.txt").read_text().splitlines() if " radv_capture " in x)
    args = line.split(" radv_capture ", 1)[1].split()
    spv, opts = args[0], args[2:]
    p = subprocess.run([str(exe), spv, str(out), *opts], cwd=FIX / name, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-500:]


@pytest.mark.parametrize("shader", (*SHADERS, "img_mipsample", "img_mip3d"))
def test_committed_lavapipe_answers_are_lavapipes(shader, run_lavapipe, tmp_path):
    lavapipe_live(run_lavapipe, f"{shader}-w32", tmp_path / "out")
    committed = sorted((FIX / "lavapipe" / shader).glob("set*_binding*.bin"))
    assert committed
    for f in committed:
        assert (tmp_path / "out" / f.name).read_bytes() == f.read_bytes(), f.name


FULLSCREEN = "fullscreen_sample-w32"


def fullscreen_target(mode: str, tmp_path: Path) -> np.ndarray:
    """The full-screen pass's render target after a replay on BACKEND (1080 x 1920 x rgba16f)."""
    tmp_path.mkdir(exist_ok=True)
    cap, b = replayed(FULLSCREEN, mode, tmp_path)
    return np.frombuffer(result(cap, b[2]), np.float16).reshape(1080, 1920, 4)


@pytest.mark.cuda
@pytest.mark.parametrize("mode", ("wave", "lane"))
def test_fullscreen_pass_on_cuda(mode, tmp_path, monkeypatch):
    """The 1920x1080 pass on the CUDA backend: its render target bit for bit the NumPy
    backend's (which test_fullscreen_pass_equals_lavapipe holds to lavapipe)."""
    from wavelift.backends.cuda import _gpu_problem

    if why := _gpu_problem():
        pytest.skip(f"no CUDA device: {why}")
    want = fullscreen_target("lane", tmp_path / "numpy")
    monkeypatch.setitem(globals(), "BACKEND", "cuda")
    got = fullscreen_target(mode, tmp_path / "cuda")
    differ = np.flatnonzero(got.view(np.uint16) != want.view(np.uint16))
    assert not differ.size, (
        f"{differ.size} f16 values differ, first at {np.unravel_index(differ[0], got.shape)}"
    )


@pytest.mark.slow
@pytest.mark.tiers
@pytest.mark.parametrize("mode", ("wave", "lane"))
def test_fullscreen_pass_equals_lavapipe(mode, run_lavapipe, tmp_path):
    """The 1920x1080 pass (240x135 groups of 8x8): two textures sampled with linear filtering
    into a 64 KiB-swizzled rgba16f render target (SW_64KB_R_X, radv_capture.log).  Each output
    is a.rgb * l.rgb: within the product of decision 0025's bounds (rgba8 1/255, rgba16f 2^-9 of
    its span per axis + 2 ulp) and the f16 stores' rounding (one f16 ulp each side: lavapipe
    rounds toward zero, wavelift to nearest)."""
    got = fullscreen_target(mode, tmp_path).astype(np.float64)
    lavapipe_live(run_lavapipe, FULLSCREEN, tmp_path / "lvp")
    want = np.fromfile(tmp_path / "lvp" / "set0_binding2.bin", np.float16).reshape(1080, 1920, 4)
    want = want.astype(np.float64)
    light = np.frombuffer((FIX / "inputs/fullscreen_sample/light.bin").read_bytes(), np.float16).astype(
        np.float64
    )
    da = 1 / 255  # albedo (rgba8, values <= 1)
    dl = 2 * (light.max() - light.min()) * 2.0**-9 + 2 * np.abs(light).max() * 2.0**-23
    top = np.abs(light).max()
    bound_rgb = (
        da * (top + dl) + 1.0 * dl + 2 * 2.0 ** (np.floor(np.log2(np.maximum(np.abs(want), 2.0**-14))) - 10)
    )
    d = np.abs(got - want)
    assert (d[..., :3] <= bound_rgb[..., :3]).all(), d[..., :3].max()
    assert (d[..., 3] <= da + 2 * 2.0**-11).all(), d[..., 3].max()
    assert np.count_nonzero(want) > 0.99 * want.size


# ---- CUDA: no GPU here; every program of the captures lowers to CUDA C++ and NVRTC compiles it


def _programs(names, tmp_path):
    """Unique (capture, program, config, base) over the captures' dispatches, caught before they
    run (RADV's meta shaders and ours)."""
    from wavelift.errors import Refusal
    from wavelift.run import execute as X
    from wavelift.run.execute import module_key
    from wavelift.run.result import DispatchResult

    out, seen, translated = [], set(), {}
    for name in names:
        got = []

        def catch(memory, config, index, got=got):
            got.append((memory, config))
            return DispatchResult(index, config, Refusal("backend.unavailable", "caught for a test"))

        replay(capture(name, tmp_path), execute=catch)
        for memory, cfg in got:
            # the program the dispatch runs, with all its translation inputs (module_key names
            # them: decision 0049, h129); a capture dispatches few programs many times: the one
            # cache translates each once
            prog, base = X.program_for(memory, cfg, cache=translated)
            k = module_key(prog, cfg, "lane", "cuda")
            if k not in seen:
                seen.add(k)
                out.append((name, prog, cfg, base))
    return out


NAMES_ALL = [f"{s}-{b}" for s in SHADERS + MIP_SHADERS for b in BUILDS] + ["fullscreen_sample-w32"]


@pytest.mark.parametrize(
    "names",
    [
        pytest.param(["img_storage-w32", "texel_buffers-navi10-w64"], id="two"),
        pytest.param(["img_mipsample-w32", "img_mips-navi10-w64"], id="mips"),
        pytest.param(NAMES_ALL, id="all", marks=pytest.mark.slow),
    ],
)
def test_cuda_kernels_of_the_image_captures_generate(names, tmp_path):
    """The CUDA backend's kernel source for every program of the image captures (navi21 w32/w64,
    navi10; RADV's meta shaders and ours), both modes, without guest text.  Running them needs an
    NVIDIA GPU (not here: tests/cuda's GPU tests); NVRTC compiles them with -m slow."""
    from wavelift.backends.cuda.codegen import generate, lowered

    progs = _programs(names, tmp_path)
    assert len(progs) >= 4
    for name, prog, cfg, base in progs:
        texts = {ins.text for ins in prog.instructions if len(ins.text) >= 8}
        low = lowered(prog, cfg.wave_size)  # (the IR's passes, once for both modes: build_module's way)
        for m in ("lane", "wave"):
            src = generate(prog, cfg.wave_size, m, cfg.scratch_wave_bytes, base, lowered_program=low)[0]
            assert src.isascii() and not [t for t in texts if t in src], name


@pytest.mark.slow
def test_cuda_kernels_of_the_image_captures_compile(tmp_path):
    """NVRTC compiles every one of them to PTX (sm_90), both modes: minutes on two cores."""
    from wavelift.backends.cuda.codegen import generate, lowered
    from wavelift.backends.cuda.compile import check_source, nvrtc_problem

    why = nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    for _name, prog, cfg, base in _programs(NAMES_ALL, tmp_path):
        low = lowered(prog, cfg.wave_size)
        for m in ("lane", "wave"):
            src = generate(prog, cfg.wave_size, m, cfg.scratch_wave_bytes, base, lowered_program=low)[0]
            check_source(src, "sm_90")


def test_3d_tsharp_ignores_base_array():
    """What RADV's meta copies of a 3-D image rely on (decision 0033): a 3-D T# with BASE_ARRAY
    set and ARRAY_PITCH 0 ("SRV mode: BASE_ARRAY is ignored", radv_image.c) reads the texel of
    its z coordinate, as with BASE_ARRAY 0; with ARRAY_PITCH 1 it still refuses by name."""
    from test_images_layouts import RGBA32UI, I, L, _dispatch, _mode, chip_for, tsharp

    chip, gb = chip_for("gfx1030", 0x444), 0x444
    mode = _mode("4KB_S_X")
    w, h, d = 16, 8, 4
    s = L.Surface(mode, L.RSRC_3D, 4, w, h, d, 1)
    info = L.surface_info(s, chip)
    mem = np.random.default_rng(33).integers(0, 256, info.slice_size * info.slices + 65536, dtype=np.uint8)
    coords = [(3, 5, 2, 0), (15, 7, 3, 0), (0, 0, 0, 0)]
    want = [
        mem[o : o + 16].view(np.uint32)
        for o in (int(L.address(chip, s, x, y, z, 0)) for x, y, z, _ in coords)
    ]
    for base_array in (0, 2, 3):
        t = tsharp(0, 0, RGBA32UI, w, h, d, I.TYPE_3D, mode, 1, base_array=base_array)
        res, got, _ = _dispatch(I.DIM_3D, "gfx1030", gb, t, coords, mem)
        assert res.landed, (base_array, res.refusal)
        for k in range(3):
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"BASE_ARRAY {base_array}")
    t = tsharp(0, 0, RGBA32UI, w, h, d, I.TYPE_3D, mode, 1, base_array=2)
    t[5] |= 1  # ARRAY_PITCH 1: a storage view of the slices from BASE_ARRAY
    res, _, _ = _dispatch(I.DIM_3D, "gfx1030", gb, t, coords, mem)
    assert res.refusal is not None and res.refusal.code == "image.unsupported_descriptor"


def test_1d_tsharp_read_by_a_2d_dim():
    """What RADV's meta copies of a 1-D image rely on (decision 0033: they run its 2-D pipelines
    on a TYPE 1D view): a linear one-level 1-D T# read by dim 2D at y = 0 is texel x; y = 1, a
    tiled 1-D T# or one of two levels refuses by name (not established)."""
    from test_images_layouts import RGBA32UI, I, _dispatch, tsharp

    w = 64
    mem = np.random.default_rng(34).integers(0, 256, 1 << 16, dtype=np.uint8)
    coords = [(3, 0, 0), (63, 0, 0), (0, 0, 0)]
    t = tsharp(0, 0, RGBA32UI, w, 1, 1, I.TYPE_1D, 0, 1)
    res, got, _ = _dispatch(I.DIM_2D, "gfx1030", 0, t, coords, mem)
    assert res.landed, res.refusal
    for k, (x, _, _) in enumerate(coords):
        np.testing.assert_array_equal(got[k], mem[16 * x : 16 * x + 16].view(np.uint32))
    for words, coord in (
        (t, (3, 1, 0)),  # y = 1
        (tsharp(0, 0, RGBA32UI, w, 1, 1, I.TYPE_1D, 0, 2), (3, 0, 0)),  # two levels
        (tsharp(0, 0, RGBA32UI, w, 1, 1, I.TYPE_1D, 5, 1), (3, 0, 0)),  # SW_4KB_S
    ):
        res, _, _ = _dispatch(I.DIM_2D, "gfx1030", 0, words, [coord], mem)
        assert res.refusal is not None and res.refusal.code == "image.unsupported_descriptor", coord
