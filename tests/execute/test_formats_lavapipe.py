"""lavapipe (Mesa's CPU Vulkan driver, Debian mesa-vulkan-drivers) as a second oracle for typed
texel conversion: a GLSL shader loads every element of a storage texel buffer (imageLoad on an
imageBuffer) into a storage buffer and stores given values into a second texel buffer
(imageStore); tools/lavapipe_run runs it (``--texel``).  wavelift runs buffer_load_format_xyzw
/ buffer_store_format_xyzw (test_formats.py's programs) on the same bytes and values: the
loaded values and the stored bytes must be equal.  Where lavapipe's own conversion is not the
exact rule (docs/float-semantics.md "Typed texels"), the test says so by name.
Skips without lavapipe, glslang, gcc or the Vulkan headers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from harness import Rig, ptr
from test_formats import BUF_LOAD, BUF_STORE, FORMATS, texels, values, vsharp
from testpaths import ROOT

from wavelift.driver.aco import IMAGE_FORMATS

LVP_ICD = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
VK_HEADER = "/usr/include/vulkan/vulkan_core.h"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (
            os.path.exists(LVP_ICD)
            and os.path.exists(VK_HEADER)
            and shutil.which("gcc")
            and shutil.which("glslangValidator")
        ),
        reason="lavapipe, the Vulkan headers, gcc or glslang missing",
    ),
]
SHADER = """#version 450
layout(local_size_x = 32) in;
layout(set = 0, binding = 0, FMT) uniform readonly IMG src;
layout(set = 0, binding = 1, FMT) uniform writeonly IMG dst;
layout(set = 0, binding = 2) buffer Out { VEC v[]; } o;
layout(set = 0, binding = 3) buffer In { VEC v[]; } i;
void main() {
  int k = int(gl_GlobalInvocationID.x);
  o.v[k] = imageLoad(src, k);
  imageStore(dst, k, i.v[k]);
}
"""
# GLSL layout name -> the VkFormat a texel buffer of it has (its number read from the header)
VK = {
    "r8": "R8_UNORM",
    "rg8": "R8G8_UNORM",
    "rgba8_snorm": "R8G8B8A8_SNORM",
    "r16f": "R16_SFLOAT",
    "rgba16_snorm": "R16G16B16A16_SNORM",
    "rgba16f": "R16G16B16A16_SFLOAT",
    "r11f_g11f_b10f": "B10G11R11_UFLOAT_PACK32",
    "rgb10_a2": "A2B10G10R10_UNORM_PACK32",
    "rgb10_a2ui": "A2B10G10R10_UINT_PACK32",
    "rgba16i": "R16G16B16A16_SINT",
    "r8ui": "R8_UINT",
    "rg32f": "R32G32_SFLOAT",
    "r16": "R16_UNORM",
    "rgba8": "R8G8B8A8_UNORM",
}
N = 32


@pytest.fixture(scope="module")
def lavapipe_run(tmp_path_factory):
    exe = tmp_path_factory.mktemp("lvp") / "lavapipe_run"
    p = subprocess.run(
        ["gcc", "-O1", "-o", str(exe), str(ROOT / "tools/lavapipe_run/lavapipe_run.c"), "-lvulkan"],
        capture_output=True,
        text=True,
    )
    if p.returncode:
        pytest.skip("lavapipe_run does not build here: " + p.stderr[-200:])
    return exe


def _vk_format(name):
    m = re.search(rf"\bVK_FORMAT_{name} = (\d+),", open(VK_HEADER).read())
    assert m, name
    return int(m.group(1))


def _wavelift(fmt, f, data, vals):
    r = Rig(BUF_LOAD)
    a = r.mem.alloc(len(data), name="buf", data=data)
    out = r.buf(np.full(4 * N, 7, np.uint32), "out")
    res = r.run(r.config(user_sgprs=vsharp(a, f.bytes, N, fmt) + list(ptr(out)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    loaded = r.read(out, np.uint32, 4 * N)
    r = Rig(BUF_STORE)
    a = r.mem.alloc(f.bytes * N, name="buf", data=bytes(f.bytes * N))
    src = r.buf(np.array(vals, np.uint32), "src")
    res = r.run(r.config(user_sgprs=vsharp(a, f.bytes, N, fmt) + list(ptr(src)), tgid=(False,) * 3))
    assert res.landed, res.refusal
    return loaded, r.mem.read(a, f.bytes * N)


@pytest.mark.parametrize("glsl_fmt", sorted(VK))
def test_texel_buffers_equal_lavapipe(glsl_fmt, lavapipe_run, tmp_path):
    fmt = IMAGE_FORMATS[glsl_fmt][0]
    f = FORMATS[fmt]
    integer = f.numeric in ("UINT", "SINT")
    pre = "u" if f.numeric == "UINT" else "i" if integer else ""
    (tmp_path / "t.comp").write_text(SHADER)
    p = subprocess.run(
        [
            "glslangValidator",
            "-V",
            f"-DFMT={glsl_fmt}",
            f"-DIMG={pre}imageBuffer",
            f"-DVEC={pre}vec4",
            "-o",
            str(tmp_path / "t.spv"),
            str(tmp_path / "t.comp"),
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    data = b"".join(t.to_bytes(f.bytes, "little") for t in texels(f, N, np.random.default_rng(fmt)))
    vals = values(f, N, np.random.default_rng(fmt + 11))
    (tmp_path / "src.bin").write_bytes(data)
    (tmp_path / "in.bin").write_bytes(np.array(vals, np.uint32).tobytes())
    vk = _vk_format(VK[glsl_fmt])
    cmd = [
        str(lavapipe_run),
        str(tmp_path / "t.spv"),
        str(tmp_path),
        "--groups",
        "1,1,1",
        "--texel",
        f"0:0:{vk}:{len(data)}:{tmp_path / 'src.bin'}",
        "--texel",
        f"0:1:{vk}:{len(data)}",
        "--binding",
        f"0:2:{16 * N}",
        "--binding",
        f"0:3:{16 * N}:{tmp_path / 'in.bin'}",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, VK_ICD_FILENAMES=LVP_ICD))
    if p.returncode == 3:
        pytest.skip("lavapipe: " + p.stderr[-200:])
    assert p.returncode == 0, p.stderr
    lvp_loaded = np.frombuffer((tmp_path / "set0_binding2.bin").read_bytes(), np.uint32)
    lvp_stored = (tmp_path / "set0_binding1.bin").read_bytes()
    loaded, stored = _wavelift(fmt, f, data, vals)
    # loads: lavapipe's UNORM/SNORM -> float is x * (1 / (2^n - 1)), which can miss the
    # correctly rounded quotient by one ulp; everything else is equal bit for bit
    ulps = np.abs(loaded.astype(np.int64) - lvp_loaded.astype(np.int64)).reshape(N, 4)
    norm = f.numeric in ("UNORM", "SNORM")
    assert ulps.max() <= (1 if norm else 0), ulps.max()
    # stores, channel by channel: integers and 32-bit floats equal; UNORM/SNORM within one step
    # (lavapipe rounds the f32 product); 16/11/10-bit floats within one pattern (lavapipe
    # rounds them toward zero, Mesa's util_float_to_half / f32_to_uf11; the rule here is RNE)
    off = 0
    for c, w in enumerate(f.bits):
        mask = (1 << w) - 1
        for i in range(N):
            x = int.from_bytes(stored[i * f.bytes : (i + 1) * f.bytes], "little") >> off & mask
            y = int.from_bytes(lvp_stored[i * f.bytes : (i + 1) * f.bytes], "little") >> off & mask
            if f.numeric in ("UINT", "SINT") or w == 32:
                assert x == y, (i, hex(x), hex(y))
            elif norm and np.isnan(np.uint32(vals[i][c]).view(np.float32)):
                # NaN: 0 here (D3D's rule); lavapipe's clamp lets NaN through to the top code
                assert x == 0 and y == mask >> (f.numeric == "SNORM"), (i, hex(x), hex(y))
            elif norm:
                d = abs(
                    (x - (1 << w) if f.numeric == "SNORM" and x >> (w - 1) else x)
                    - (y - (1 << w) if f.numeric == "SNORM" and y >> (w - 1) else y)
                )
                assert d <= 1, (i, hex(x), hex(y), [hex(v) for v in vals[i]])
            else:
                assert y in (x, x - 1), (i, hex(x), hex(y))  # toward zero: one pattern less
        off += w
