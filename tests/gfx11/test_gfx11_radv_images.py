"""RADV's own GFX11 image stream (Mesa 22.3.6 on its null device, RADV_FORCE_FAMILY=gfx1100:
tools/radv_capture with record_images.sh's img_storage options; the commands in
tests/fixtures/gfx1100/radv_images/img_storage-gfx1100-w32/command.txt) as the producer of real
GFX11 T#s (decision 0038):

* every T# RADV wrote for the capture's images (the shader's descriptor set and its meta copies'
  views), read with GFX11's register-database fields (memory/tsharp.py field_bits11, the table
  frontend/image.py reads), gives the image's texel size (from its GFX11_FORMAT mapped to
  GFX10's by name), width, height, depth or last layer and TYPE as buffers.txt records them,
  and sets no bit GFX11 names no field for (image.py refuses those);
* RADV lays GFX11 storage images out tiled (radv_capture.log: swizzle modes 21/22, 4KB_S_X for
  3-D and 4KB_D_X for 2-D), which wavelift lays out with GFX11's addrlib rules (decision 0039):
  every dispatch lands, and the images read back equal lavapipe's for the same application and
  data bit for bit (wave and lane mode, NumPy blocks and the native tier);
* img_formats and img_mips, recorded the same way with Navi31's GB_ADDR_CONFIG (0x545: 32
  pipes, 32 packers; command.txt beside each), land too and equal lavapipe / NumPy (img_mips:
  64KB_R_X mip chains with tails, arrays and a cube, every level)."""

from __future__ import annotations

import gzip
import pathlib
import re

import numpy as np
import pytest
from radv_fixtures import binding_bytes, load_capture, read_bindings

from wavelift import Capture, replay
from wavelift.memory import tsharp

FIX = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gfx1100"
LAVAPIPE = FIX.parent / "radv_images" / "lavapipe"
INPUTS = FIX.parent / "radv_images" / "inputs"
NAME = "img_storage-gfx1100-w32"
TYPE_OF_VIEW = {1: 9, 2: 10, 5: 13}  # VkImageViewType 2D, 3D, 2D_ARRAY -> SQ_RSRC_IMG_*
BACKEND = "numpy"  # the GPU test replays the same checks on CUDA (monkeypatched)


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    p = tmp_path_factory.mktemp("cap") / f"{NAME}.wlcap"
    p.write_bytes(gzip.decompress((FIX / "captures" / f"radv-{NAME}.wlcap.gz").read_bytes()))
    return Capture.load(p)


def _images():
    out = {}
    for ln in (FIX / "radv_images" / NAME / "buffers.txt").read_text().splitlines():
        m = re.search(
            r"binding=(\d+) type=storage_image format=\d+ texel_bytes=(\d+) view=(\d+) "
            r"extent=(\d+),(\d+),(\d+) layers=(\d+) va=(0x[0-9a-f]+)",
            ln,
        )
        if m:
            b, tb, view, w, h, d, layers, va = (int(x, 0) for x in m.groups())
            out[va & ((1 << 48) - 1)] = dict(binding=b, bytes=tb, view=view, w=w, h=h, d=d, layers=layers)
    return out


def _f(d, name):
    w, lo, hi = tsharp.field_bits11(name)
    return (int(d[w]) >> lo) & ((1 << (hi - lo + 1)) - 1)


def test_radv_gfx11_tsharps_read_with_gfx11_fields(capture):
    images = _images()
    assert len(images) == 8
    f10 = tsharp.formats()
    m = tsharp.format10_of11()
    found = set()
    for a in capture.memory.allocations:
        if a.data.size % 4:
            continue
        words = a.data.view(np.uint32)
        for i in range(len(words) - 7):
            d = words[i : i + 8]
            base = (int(d[0]) | (int(d[1]) & 0xFF) << 32) << 8
            img = images.get(base)
            if img is None or _f(d, "TYPE") < 8:
                continue
            found.add(img["binding"])
            assert f10[m[_f(d, "FORMAT")]].bytes == img["bytes"], (a.name, i)
            assert (_f(d, "WIDTH_LO") | _f(d, "WIDTH_HI") << 2) + 1 == img["w"]
            assert _f(d, "HEIGHT") + 1 == img["h"]
            typ = _f(d, "TYPE")
            if img["view"] == 2:  # 3-D: DEPTH is the last slice (a meta copy's view is 2-D array)
                assert typ in (10, 13) and _f(d, "DEPTH") == img["d"] - 1
            elif img["view"] == 5:  # array: layers BASE_ARRAY..DEPTH (a meta copy views one)
                assert typ == 13 and _f(d, "BASE_ARRAY") <= _f(d, "DEPTH") < img["layers"]
            else:
                assert typ == TYPE_OF_VIEW[img["view"]] and _f(d, "DEPTH") == 0
            assert _f(d, "MAX_MIP") == 0
            for w, bits in tsharp.reserved11().items():
                assert int(d[w]) & bits == 0, (a.name, i, w, hex(int(d[w])))
    assert found == {img["binding"] for img in images.values()}


def _fresh(name, tmp_path):
    return load_capture(FIX / "captures" / f"radv-{name}.wlcap.gz", tmp_path)


def _replayed(name, mode, tmp_path):
    """The capture ``name`` replayed (a fresh copy: replay writes into the capture it runs);
    every dispatch must land."""
    cap = _fresh(name, tmp_path)
    results = replay(cap, mode=mode, backend=BACKEND)
    assert len(results) > 8
    refused = [(i, str(r.refusal)) for i, r in enumerate(results) if not r.landed]
    assert not refused, refused
    return cap, _bindings(name)


_result = binding_bytes


def _bindings(name):
    return read_bindings(FIX / "radv_images" / name)


def _equal_lavapipe(cap, b, shader, keys):
    for k in keys:
        got = _result(cap, b[k])
        want = (LAVAPIPE / shader / f"set0_binding{k}.bin").read_bytes()
        assert len(got) == len(want) and any(want)
        diff = np.flatnonzero(np.frombuffer(got, np.uint8) != np.frombuffer(want, np.uint8))
        assert not len(diff), f"binding {k}: {len(diff)} bytes differ from lavapipe, first at {diff[:8]}"


def _modes(name):
    log = (FIX / "radv_images" / name / "radv_capture.log").read_text()
    return {int(x) for x in re.findall(r"swizzle_mode (\d+), tiled", log)}


def test_radv_gfx11_images_are_tiled():
    """RADV lays the GFX11 captures' images out tiled (radv_capture.log): img_storage 4KB_D_X
    (22) for the 2-D and array images, 4KB_S_X (21) for the 3-D ones (GFX11 has no 2-D S
    modes), on the null device's GB_ADDR_CONFIG 0; img_formats 4KB_D_X (the 1-D r8 linear) and
    img_mips 4KB_D_X and 64KB_R_X (27, the 128x128 chain, levels 1..7 in its mip tail) on
    Navi31's GB_ADDR_CONFIG 0x545 (32 pipes, 32 packers), so the pipe/bank XOR spans 5 pipe
    bits."""
    assert _modes(NAME) == {21, 22}
    assert _modes("img_formats-gfx1100-w32") == {22}
    assert _modes("img_mips-gfx1100-w32") == {22, 27}
    assert _modes("img_storage256k-gfx1100-w32") == {21, 22, 29, 31}  # 256KB_S_X, 256KB_R_X
    for name in ("img_formats-gfx1100-w32", "img_mips-gfx1100-w32", "img_storage256k-gfx1100-w32"):
        assert "--gb-addr-config 0x545" in (FIX / "radv_images" / name / "command.txt").read_text()


def _surfaces(name):
    """(w, h, d, layers, bpe, mode, size, levels, tile_swizzle) of each image RADV created, in
    binding order (radv_capture.log: ac_surface + GFX11 addrlib's answer)."""
    log = (FIX / "radv_images" / name / "radv_capture.log").read_text()
    rows = re.findall(
        r"surface (\d+)x(\d+)x(\d+) layers (\d+) bpe (\d+): swizzle_mode (\d+), \w+, DCC no .*?"
        r"size (\d+), alignment \d+(?:, levels (\d+), tile_swizzle (0x[0-9a-f]+))?\n",
        log,
    )
    return [tuple(int(v or "0", 0) if i < 8 else int(v or "0x0", 16) for i, v in enumerate(r)) for r in rows]


def _chip(cap):
    from wavelift.memory import layout as L

    return L.Chip.from_gb_addr_config(cap.gb_addr_config, rbplus=True, gfx11=True)


def _placement(cap, name):
    """Where the replay put every texel: each image's BO (after RADV's upload, the shader and
    RADV's read-back, all replayed by wavelift) holds, at the addresses GFX11's addrlib gives
    (layout.address with Chip.gfx11, held to the compiled addrlib by tests/memory/
    test_gfx11_layout.py; the log's mode and tile_swizzle, the capture's GB_ADDR_CONFIG), the
    read-back buffer's texels, every level and layer; and layout.surface_info gives the size
    RADV allocated.  A layout that only round-trips through wavelift's own copies would pass
    the read-back comparisons but not this."""
    from wavelift.memory import layout as L

    chip = _chip(cap)
    images = [f for _, f in sorted(_bindings(name).items()) if "readback_va" in f]
    surf = _surfaces(name)
    assert len(images) == len(surf) and images
    for f, (w, h, d, layers, bpe, mode, size, levels, xor) in zip(images, surf, strict=True):
        levels = max(levels, 1)
        three_d = f["view"] == "2"  # VK_IMAGE_VIEW_TYPE_3D
        one_d = h == 1 and f["view"] == "0"
        rsrc = L.RSRC_3D if three_d else L.RSRC_1D if one_d else L.RSRC_2D
        s = L.Surface(mode, rsrc, bpe.bit_length() - 1, w, h, d if three_d else layers, levels)
        if mode != L.LINEAR:
            info = L.surface_info(s, chip)
            assert info.slice_size * info.slices == size, (name, f["binding"])
        tb = int(f["texel_bytes"])
        bo = np.frombuffer(cap.read(int(f["va"], 16), int(f["size"])), np.uint8)
        rb = np.frombuffer(cap.read(int(f["readback_va"], 16), int(f["bytes"])), np.uint8)
        off = 0
        for lv in range(levels):
            lw, lh, ld = (max(n >> lv, 1) for n in (w, h, d))
            nz = ld if three_d else layers
            z, y, x = np.meshgrid(np.arange(nz), np.arange(lh), np.arange(lw), indexing="ij")
            addr = L.address(chip, s, x.ravel(), y.ravel(), z.ravel(), lv, xor).astype(np.int64)
            got = bo[addr[:, None] + np.arange(tb)]
            want = rb[off : off + addr.size * tb].reshape(-1, tb)
            np.testing.assert_array_equal(got, want, err_msg=f"{name} binding {f['binding']} level {lv}")
            off += addr.size * tb
        assert off == len(rb)


def check_storage(mode, tmp_path):
    """img_storage (imageLoad/imageStore of rgba8, r32f 3-D, rgba16f 2-D array, r32ui, rg16
    snorm): lavapipe's answer for the same application and data bit for bit, and the rgba8
    image an independent NumPy reference (1 - texel.bgra)."""
    cap, b = _replayed(NAME, mode, tmp_path)
    _placement(cap, NAME)
    _equal_lavapipe(cap, b, "img_storage", (1, 3, 5, 6, 7))
    a = np.frombuffer((INPUTS / "img_storage" / "a.bin").read_bytes(), np.uint8).reshape(8, 16, 4)
    np.testing.assert_array_equal(
        np.frombuffer(_result(cap, b[1]), np.uint8).reshape(8, 16, 4), 255 - a[..., [2, 1, 0, 3]]
    )


def check_formats(mode, tmp_path):
    """img_formats (1-D r8, rg16f, rgba32f, rgb10a2, r11g11b10f read-modify-write, image atomics
    add/max on r32ui): lavapipe bit for bit; r8 and the atomics against NumPy too."""
    cap, b = _replayed("img_formats-gfx1100-w32", mode, tmp_path)
    _placement(cap, "img_formats-gfx1100-w32")
    _equal_lavapipe(cap, b, "img_formats", range(7))
    inp = INPUTS / "img_formats"
    r8 = np.frombuffer((inp / "r8.bin").read_bytes(), np.uint8)
    np.testing.assert_array_equal(np.frombuffer(_result(cap, b[0]), np.uint8), 255 - r8)
    add = np.frombuffer((inp / "atomic.bin").read_bytes(), np.uint32).reshape(8, 8).copy()
    mx = np.frombuffer((inp / "amax.bin").read_bytes(), np.uint32).reshape(8, 8).copy()
    for y in range(16):
        for x in range(16):
            add[y // 2, x // 2] += np.uint32(x * 17 + y + 1)
            mx[7 - y // 2, 7 - x // 2] = max(mx[7 - y // 2, 7 - x // 2], (x * y) << 20)
    np.testing.assert_array_equal(np.frombuffer(_result(cap, b[5]), np.uint32).reshape(8, 8), add)
    np.testing.assert_array_equal(np.frombuffer(_result(cap, b[6]), np.uint32).reshape(8, 8), mx)


def check_mips(mode, tmp_path):
    """img_mips (image_load_mip/image_store_mip over every level: 128x128 rgba8 in 64KB_R_X with
    a mip tail, a 32x32x3 r32ui array and a 16x16 rgba16f cube of 5 levels in 4KB_D_X): NumPy,
    bit for bit (lavapipe lacks VK_AMD_shader_image_load_store_lod: tests/execute/
    test_radv_images.py check_mips)."""
    from tests.execute.test_radv_images import chain

    cap, b = _replayed("img_mips-gfx1100-w32", mode, tmp_path)
    _placement(cap, "img_mips-gfx1100-w32")
    inp = INPUTS / "img_mips"
    src = chain((inp / "src.bin").read_bytes(), np.uint8, 128, 8, 1, 4)
    got = chain(_result(cap, b[1]), np.uint8, 128, 8, 1, 4)
    for lv in range(8):
        np.testing.assert_array_equal(got[lv], 255 - src[lv][..., [2, 1, 0, 3]], err_msg=f"rgba8 level {lv}")
    src = chain((inp / "asrc.bin").read_bytes(), np.uint32, 32, 6, 3, 1)
    got = chain(_result(cap, b[3]), np.uint32, 32, 6, 3, 1)
    for lv in range(6):
        want = src[lv] * np.uint32(3) + (16 * lv + np.arange(3, dtype=np.uint32))[:, None, None, None]
        np.testing.assert_array_equal(got[lv], want, err_msg=f"r32ui array level {lv}")
    src = chain((inp / "csrc.bin").read_bytes(), np.float16, 16, 5, 6, 4)
    got = chain(_result(cap, b[5]), np.float16, 16, 5, 6, 4)
    for lv in range(5):
        want = (src[lv][..., ::-1].astype(np.float32) * -2).astype(np.float16)
        np.testing.assert_array_equal(
            got[lv].view(np.uint16), want.view(np.uint16), err_msg=f"cube level {lv}"
        )


def check_storage_256k(mode, tmp_path):
    """img_storage with its output images 1 (1024x1024 rgba8) and 3 (256x256x64 r32f) large
    enough that addrlib picks GFX11's 256KB blocks (256KB_R_X, 256KB_S_X: 3-D thick): the
    shader writes the same 16x8 / 8x4x4 region as in the small capture (its values do not depend
    on the image size), so the read-back images are lavapipe's small answers pasted at the
    origin of zeros (RADV's null device and the replay start from zeroed memory); every texel
    placed at GFX11's addresses (_placement)."""
    name = "img_storage256k-gfx1100-w32"
    cap, b = _replayed(name, mode, tmp_path)
    _placement(cap, name)
    _equal_lavapipe(cap, b, "img_storage", (5, 6, 7))
    small = (LAVAPIPE / "img_storage" / "set0_binding1.bin").read_bytes()
    want = np.zeros((1024, 1024, 4), np.uint8)
    want[:8, :16] = np.frombuffer(small, np.uint8).reshape(8, 16, 4)
    np.testing.assert_array_equal(np.frombuffer(_result(cap, b[1]), np.uint8).reshape(want.shape), want)
    small = (LAVAPIPE / "img_storage" / "set0_binding3.bin").read_bytes()
    want3 = np.zeros((64, 256, 256), np.uint32)
    want3[:4, :4, :8] = np.frombuffer(small, np.uint32).reshape(4, 4, 8)
    np.testing.assert_array_equal(np.frombuffer(_result(cap, b[3]), np.uint32).reshape(want3.shape), want3)


CHECKS = {"img_storage": check_storage, "img_formats": check_formats, "img_mips": check_mips}


# ~10 s a mode (RADV's meta copies of 20 MiB of images, 157 dispatches): lane mode by default
@pytest.mark.parametrize("mode", [pytest.param("wave", marks=pytest.mark.slow), "lane"])
def test_radv_gfx11_256kb_capture(mode, tmp_path):
    check_storage_256k(mode, tmp_path)


# default run: NumPy blocks, img_mips in lane mode only (its 225 dispatches take ~30 s in wave
# mode on a loaded machine); every capture, both modes, every tier with -m slow
@pytest.mark.parametrize(
    "shader,mode",
    [
        ("img_storage", "wave"),
        ("img_storage", "lane"),
        ("img_formats", "wave"),
        ("img_formats", "lane"),
        ("img_mips", "lane"),
    ],
)
def test_radv_gfx11_image_capture(shader, mode, tmp_path):
    """Every dispatch of RADV's GFX11 captures (its meta uploads into GFX11's tiled layouts, the
    shader, the meta read-backs) lands on GFX11's layouts (decision 0039) and gives the oracle's
    images, NumPy blocks."""
    CHECKS[shader](mode, tmp_path)


@pytest.mark.cuda
@pytest.mark.parametrize("shader", [*CHECKS, "img_storage256k"])
def test_radv_gfx11_image_capture_on_cuda(shader, tmp_path, monkeypatch):
    """The same GFX11 captures and checks on the CUDA backend (lane mode)."""
    from wavelift.backends.cuda import _gpu_problem

    if why := _gpu_problem():
        pytest.skip(f"no CUDA device: {why}")
    monkeypatch.setitem(globals(), "BACKEND", "cuda")
    {**CHECKS, "img_storage256k": check_storage_256k}[shader]("lane", tmp_path)


@pytest.mark.slow
@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("shader", [*CHECKS, "img_storage256k"])
def test_radv_gfx11_image_capture_every_tier(shader, mode, tmp_path):
    {**CHECKS, "img_storage256k": check_storage_256k}[shader](mode, tmp_path)
