"""Real compiler output on typed images: ACO (Mesa RADV 22.3.6 through tools/aco_compile, on
RADV's null device) compiles GLSL imageLoad / imageStore of storage images in the GLSL layout
formats below; wavelift runs the machine code and the results are compared with the
conversion reference of test_formats.py (exact rational arithmetic), which the store's
arithmetic (t * 0.5 + 0.25: the product is exact, so a fused or separate multiply-add agree; or t ^ 1 for integers, which stays in each channel's range) goes through.
Skips where aco-compile's dependencies (glslang, mesa-vulkan-drivers) are missing."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from test_formats import FORMATS, decode_ref, encode_ref, texels
from testpaths import ROOT

import wavelift
from wavelift.driver.aco import IMAGE_FORMATS, Image

SHADER = """#version 450
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, FMT) uniform readonly IMG src;
layout(set = 0, binding = 1, FMT) uniform writeonly IMG dst;
layout(set = 0, binding = 2) buffer Out { VEC v[]; } o;
layout(push_constant) uniform P { uint w; } pc;
void main() {
  ivec2 p = ivec2(gl_GlobalInvocationID.xy);
  VEC t = imageLoad(src, p);
  o.v[p.y * pc.w + p.x] = t;
  imageStore(dst, p, OP);
}
"""
CASES = [
    "r8",
    "rg8",
    "rgba8_snorm",
    "r16f",
    "rgba16_snorm",
    "rgba16f",
    "r11f_g11f_b10f",
    "rgb10_a2",
    "rgb10_a2ui",
    "rgba16i",
    "r8ui",
    "rg32f",
]


def _compile(tmp_path, glsl_fmt, family, wave):
    src = tmp_path / "fmt.comp"
    src.write_text(SHADER)
    f = FORMATS[IMAGE_FORMATS[glsl_fmt][0]]
    integer = f.numeric in ("UINT", "SINT")
    pre = "u" if f.numeric == "UINT" else "i" if integer else ""
    defs = [
        f"-DFMT={glsl_fmt}",
        f"-DIMG={pre}image2D",
        f"-DVEC={pre}vec4",
        "-DOP=t^" + pre + "vec4(1)" if integer else "-DOP=t*0.5+vec4(0.25)",
    ]
    out = tmp_path / "fmt"
    p = subprocess.run(
        [
            str(ROOT / "tools/aco_compile/aco-compile"),
            str(src),
            "-o",
            str(out),
            "--family",
            family,
            f"--wave{wave}",
            "-q",
            *defs,
        ],
        capture_output=True,
        text=True,
    )
    if p.returncode == 3:
        pytest.skip("aco-compile: " + (p.stdout + p.stderr)[-200:])
    assert p.returncode == 0, p.stdout + p.stderr
    return out


@pytest.mark.parametrize(
    "family,wave,mode", [("navi21", 32, "wave"), ("navi10", 64, "wave"), ("navi21", 32, "lane")]
)
@pytest.mark.parametrize("glsl_fmt", CASES)
def test_aco_image_formats(glsl_fmt, family, wave, mode, tmp_path):
    out = _compile(tmp_path, glsl_fmt, family, wave)
    target = {"navi21": "gfx1030", "navi10": "gfx1010"}[family]
    fmt, nbytes = IMAGE_FORMATS[glsl_fmt]
    f = FORMATS[fmt]
    w, h = 16, 8
    tex = texels(f, w * h, np.random.default_rng(fmt))
    dev = wavelift.Device(target, backend="numpy", mode=mode)
    sh = dev.load_aco_shader(str(out) + ".json")
    pitch = max(w, 256 // nbytes)
    img = bytearray(pitch * h * nbytes)
    for i, t in enumerate(tex):
        o = ((i // w) * pitch + i % w) * nbytes
        img[o : o + nbytes] = t.to_bytes(nbytes, "little")
    src = dev.upload(np.frombuffer(bytes(img), np.uint8))
    dbuf = dev.upload(np.full(len(img), 0xA5, np.uint8))
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
        stored = [
            [
                int(
                    (np.float32(np.uint32(v).view(np.float32)) * np.float32(0.5) + np.float32(0.25)).view(
                        np.uint32
                    )
                )
                for v in t
            ]
            for t in loaded
        ]
    want = bytearray(b"\xa5" * len(img))
    for i, v in enumerate(stored):
        e = encode_ref(f, v)
        assert e is not None
        o = ((i // w) * pitch + i % w) * nbytes
        want[o : o + nbytes] = e.to_bytes(nbytes, "little")
    assert dev.download(dbuf, np.uint8).tobytes() == bytes(want)
