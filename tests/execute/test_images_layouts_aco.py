"""Real compiler output on tiled images: the ACO shaders of test_formats_aco.py (GLSL imageLoad
/ imageStore of storage images, compiled by tools/aco_compile for navi21 wave32 and navi10
wave64; gfx1100 on GFX11's own layouts, decision 0039) run on images in _X swizzle modes with a pipe/bank XOR in the base, as RADV's T#
carries them (SW_MODE and tile_swizzle: the driver's linear T# with those fields set), on the
Device's GB_ADDR_CONFIG.  Expected: the texels at wavelift/memory/layout.py's addresses (checked
against Mesa's addrlib), through the conversion reference of test_formats.py.  Skips where
aco-compile's dependencies are missing."""

from __future__ import annotations

import numpy as np
import pytest
from test_formats import FORMATS, decode_ref, encode_ref, texels
from test_formats_aco import _compile

import wavelift
import wavelift.driver.aco as aco
from wavelift.driver.aco import IMAGE_FORMATS, Image
from wavelift.driver.device import DEFAULT_GB_ADDR_CONFIG
from wavelift.driver.launch import Buffer
from wavelift.memory import layout as L

SLOW = pytest.mark.slow  # ~10 s each (the ACO compile); the first case runs by default
CASES = [
    ("rgba8", "64KB_R_X", "navi21", 32),
    pytest.param("r16f", "4KB_S_X", "navi21", 32, marks=SLOW),
    pytest.param("rg32f", "64KB_D_X", "navi21", 32, marks=SLOW),
    pytest.param("rgba16i", "64KB_S_X", "navi10", 64, marks=SLOW),
    pytest.param("r11f_g11f_b10f", "64KB_R_X", "navi10", 64, marks=SLOW),
    pytest.param("r8ui", "64KB_S_T", "navi21", 32, marks=SLOW),
    # GFX11 (decision 0039): Gfx11Lib's own patterns, Navi31's GB_ADDR_CONFIG (32 pipes)
    pytest.param("rgba8", "64KB_R_X", "gfx1100", 32, marks=SLOW),
    pytest.param("rg32f", "4KB_D_X", "gfx1100", 64, marks=SLOW),
    pytest.param("r16f", "64KB_D_X", "gfx1100", 32, marks=SLOW),
    pytest.param("rgba8", "256KB_R_X", "gfx1100", 32, marks=SLOW),  # 18-bit blocks
    pytest.param("r8ui", "256KB_D_X", "gfx1100", 64, marks=SLOW),
    pytest.param("rg32f", "256KB_Z_X", "gfx1100", 32, marks=SLOW),
]


@pytest.mark.parametrize("glsl_fmt,mode_name,family,wave", CASES)
def test_aco_tiled_xor_images(glsl_fmt, mode_name, family, wave, tmp_path, monkeypatch):
    out = _compile(tmp_path, glsl_fmt, family, wave)
    target = {"navi21": "gfx1030", "navi10": "gfx1010", "gfx1100": "gfx1100"}[family]
    gb = DEFAULT_GB_ADDR_CONFIG[target]
    g11 = target == "gfx1100"
    chip = L.Chip.from_gb_addr_config(
        gb, rbplus=target != "gfx1010", z_tail_fix=target != "gfx1010", gfx11=g11
    )
    mode = next(m for m, n in L.sw_mode_names(g11).items() if n == mode_name)
    fmt, nbytes = IMAGE_FORMATS[glsl_fmt]
    f = FORMATS[fmt]
    bpe_log2 = nbytes.bit_length() - 1
    w, h = 72, 40  # past a 4 KiB block and, for small texels, across 64 KiB block rows
    s = L.Surface(mode, L.RSRC_2D, bpe_log2, w, h)
    facts = L.mode_facts(chip, mode, L.RSRC_2D, bpe_log2)
    assert facts is not None and facts.xor_mask
    pbx = 0x1B & (facts.xor_mask >> 8)
    size = L.surface_info(s, chip).slice_size
    y, x = np.mgrid[0:h, 0:w]
    offs = L.address(chip, s, x.ravel(), y.ravel(), 0, 0, pbx).astype(np.int64)
    tex = texels(f, w * h, np.random.default_rng(fmt))
    # no NaN channels: what t * 0.5 + 0.25 gives a signalling NaN is the ALU's matter
    # (test_formats_aco's few texels hold none), not the layout's
    if f.numeric == "FLOAT":
        tex = [
            0 if np.isnan(np.array(decode_ref(f, t)[0], np.uint32).view(np.float32)).any() else t for t in tex
        ]
    img = bytearray(np.random.default_rng(1).integers(0, 256, size, dtype=np.uint8).tobytes())
    for i, t in enumerate(tex):
        img[offs[i] : offs[i] + nbytes] = t.to_bytes(nbytes, "little")
    dev = wavelift.Device(target, backend="numpy", mode="wave")
    assert dev.gb_addr_config == gb
    sh = dev.load_aco_shader(str(out) + ".json")

    align = max(65536, 1 << facts.blk)

    def aligned(data):  # an image base aligned to its block (64 KiB at least) inside a larger upload
        buf = dev.upload(np.concatenate([np.zeros(align, np.uint8), np.frombuffer(bytes(data), np.uint8)]))
        a = (buf.address + align - 1) & ~(align - 1)
        mem_off = a - buf.address
        if mem_off != align:  # move the data to the aligned place
            dev.memory.write(a, bytes(data))
        return Buffer(a, len(data)), buf

    src, _ = aligned(img)
    dbuf, _ = aligned(b"\xa5" * size)
    real = aco.image_descriptor

    def tiled(im, gfx11):
        d = real(im, gfx11)
        d[0] |= pbx
        d[3] |= mode << 20
        return d

    monkeypatch.setattr(aco, "image_descriptor", tiled)
    ob = dev.upload(np.full(4 * w * h, 7, np.uint32))
    r = sh.launch(
        groups=(w // 8, h // 8, 1),
        buffers={(0, 2): ob},
        images={(0, 0): Image(src, w, h, glsl_fmt), (0, 1): Image(dbuf, w, h, glsl_fmt)},
        push_constants=np.array([w], np.uint32).tobytes(),
    )
    assert r.landed, r.refusal
    loaded = [decode_ref(f, t)[0] for t in tex]
    np.testing.assert_array_equal(dev.download(ob, np.uint32).reshape(-1, 4), loaded)
    if f.numeric in ("UINT", "SINT"):
        stored = [[v ^ 1 for v in t] for t in loaded]
    else:
        half = np.float32(0.5)
        stored = [
            [int((np.uint32(v).view(np.float32) * half + np.float32(0.25)).view(np.uint32)) for v in t]
            for t in loaded
        ]
    want = bytearray(b"\xa5" * size)
    for i, v in enumerate(stored):
        e = encode_ref(f, v)
        assert e is not None
        want[offs[i] : offs[i] + nbytes] = e.to_bytes(nbytes, "little")
    assert bytes(dev.memory.read(dbuf.address, size)) == bytes(want)
    # the saved capture records the Device's GB_ADDR_CONFIG: its replay lays the images out alike
    path = tmp_path / "tiled.wlcap"
    dev.save_capture(path)
    cap = wavelift.Capture.load(path)
    assert cap.gb_addr_config == gb
    (res,) = wavelift.replay(cap)
    assert res.landed, res.refusal
    assert bytes(cap.read(dbuf.address, size)) == bytes(want)
