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
  data bit for bit (wave and lane mode, NumPy blocks and the native tier)."""

from __future__ import annotations

import gzip
import pathlib
import re

import numpy as np
import pytest

from wavelift import Capture, replay
from wavelift.memory import tsharp

FIX = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gfx1100"
LAVAPIPE = FIX.parent / "radv_images" / "lavapipe" / "img_storage"
INPUTS = FIX.parent / "radv_images" / "inputs" / "img_storage"
NAME = "img_storage-gfx1100-w32"
TYPE_OF_VIEW = {1: 9, 2: 10, 5: 13}  # VkImageViewType 2D, 3D, 2D_ARRAY -> SQ_RSRC_IMG_*


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


def _replayed(capture, mode):
    results = replay(capture, mode=mode)
    assert len(results) > 8
    refused = [(i, str(r.refusal)) for i, r in enumerate(results) if not r.landed]
    assert not refused, refused
    return capture


def _result(cap, f):
    return cap.read(int(f["readback_va"], 16), int(f["bytes"]))


def _bindings():
    out = {}
    for ln in (FIX / "radv_images" / NAME / "buffers.txt").read_text().splitlines():
        f = dict(kv.split("=", 1) for kv in ln.split() if "=" in kv)
        if "binding" in f:
            out[int(f["binding"])] = f
    return out


def test_radv_gfx11_images_are_tiled():
    """RADV lays the capture's GFX11 storage images out tiled: 4KB_D_X (22) for the 2-D and
    array images, 4KB_S_X (21) for the 3-D ones (GFX11 has no 2-D S modes), on the null
    device's GB_ADDR_CONFIG 0 (radv_capture.log)."""
    log = (FIX / "radv_images" / NAME / "radv_capture.log").read_text()
    modes = {int(x) for x in re.findall(r"swizzle_mode (\d+), tiled", log)}
    assert modes == {21, 22}


@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_radv_gfx11_image_capture_equals_lavapipe(mode, tmp_path):
    """Every dispatch of the capture (RADV's meta uploads into GFX11's tiled layouts, the
    shader, the meta read-backs) lands on GFX11's layouts (decision 0039), and every read-back
    image equals lavapipe's answer for the same application and data (tests/fixtures/
    radv_images/lavapipe/img_storage: the navi21 captures' oracle) bit for bit; the rgba8 image
    equals an independent NumPy reference (1 - texel.bgra)."""
    cap = Capture.load(_fresh(tmp_path))  # (replay writes into the capture it runs)
    _replayed(cap, mode)
    b = _bindings()
    for k in (1, 3, 5, 6, 7):
        got = _result(cap, b[k])
        want = (LAVAPIPE / f"set0_binding{k}.bin").read_bytes()
        assert len(got) == len(want) and any(want)
        diff = np.flatnonzero(np.frombuffer(got, np.uint8) != np.frombuffer(want, np.uint8))
        assert not len(diff), f"binding {k}: {len(diff)} bytes differ from lavapipe, first at {diff[:8]}"
    a = np.frombuffer((INPUTS / "a.bin").read_bytes(), np.uint8).reshape(8, 16, 4)
    np.testing.assert_array_equal(
        np.frombuffer(_result(cap, b[1]), np.uint8).reshape(8, 16, 4), 255 - a[..., [2, 1, 0, 3]]
    )


def _fresh(tmp_path):
    p = tmp_path / f"{NAME}.wlcap"
    p.write_bytes(gzip.decompress((FIX / "captures" / f"radv-{NAME}.wlcap.gz").read_bytes()))
    return p
