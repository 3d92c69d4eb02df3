"""Custom border colours (VK_EXT_custom_border_color) as RADV 22.3.6 records them (decision
0043): tests/fixtures/radv_images/img_border.comp captured by tools/radv_capture
(record_images.sh, ``--border``) for navi21 wave32/wave64 and navi10 wave64.  RADV allocates its
border-colour table when the feature is enabled, writes TA_CS_BC_BASE_ADDR/_HI in its compute
preamble (SET_UCONFIG_REG) and, per sampler, the S# BORDER_COLOR_TYPE REGISTER with
BORDER_COLOR_PTR its slot in the table (16 bytes: the VkClearColorValue's dwords).  The replay
(wave and lane mode) must equal a NumPy reference made from the sampler state and the input
texels alone (point samples and gathers, bit for bit) and lavapipe running the same
application (its one-ulp UNORM reads; linear filtering within decision 0025's bound).  What
is not carried out refuses by name: a table entry that is not a value of the image's format,
a stream that never wrote TA_CS_BC_BASE_ADDR, and an entry outside the table (an escape).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
from radv_fixtures import load_capture, read_bindings
from testpaths import FIXTURES, ROOT

from wavelift import Capture, replay
from wavelift.dispatch.setup import build_config
from wavelift.stream.registers import RegisterFile

FIX = FIXTURES / "radv_images"
LVP_LIB = "/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"
VK_HEADER = "/usr/include/vulkan/vulkan_core.h"
BUILDS = ("w32", "w64", "navi10-w64")
N = 128  # invocations
TABLE = 0xFFFF800100000000  # the border-colour BO's VA in these captures (RADV creates it first)
BC_REG = 0x380  # SET_UCONFIG_REG offset of TA_CS_BC_BASE_ADDR (0x30E00)
# the colours record_images.sh gives (--border), per sampler binding, and their table slots
# (RADV: the first free slot, in sampler creation order)
F32 = {
    0: (51 / 255, 102 / 255, 204 / 255, 153 / 255),
    1: (1.0, 17 / 255, 128 / 255, 64 / 255),
    2: (1.5, -2.25, 3.0, 0.125),
    4: (10 / 255, 20 / 255, 30 / 255, 40 / 255),
    5: (0.5, -1.25, 2.0, 0.75),
    7: (3 / 15, 6 / 15, 9 / 15, 12 / 15),
}
OURS = 7  # the shader's dispatch: after RADV's seven upload copies, before the read-backs
SLOT = {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 7: 6}


def capture(name: str, tmp_path: Path) -> Capture:
    return load_capture(FIX / "captures" / f"{name}.wlcap.gz", tmp_path)


def bindings(name: str) -> dict[int, dict[str, str]]:
    return read_bindings(FIX / name)


def outputs(cap: Capture, name: str) -> tuple[np.ndarray, np.ndarray]:
    b = bindings(name)
    f = np.frombuffer(cap.read(int(b[9]["va"], 16), int(b[9]["size"])), np.float32).reshape(N, 10, 4)
    i = np.frombuffer(cap.read(int(b[10]["va"], 16), int(b[10]["size"])), np.int32).reshape(N, 4)
    return f, i


def lavapipe() -> tuple[np.ndarray, np.ndarray]:
    d = FIX / "lavapipe" / "img_border"
    f = np.frombuffer((d / "set0_binding9.bin").read_bytes(), np.float32).reshape(N, 10, 4)
    i = np.frombuffer((d / "set0_binding10.bin").read_bytes(), np.int32).reshape(N, 4)
    return f, i


def _unorm(k, n: int) -> np.ndarray:
    return (np.asarray(k, np.float32) / np.float32(n)).astype(np.float32)


def _colour(binding: int) -> np.ndarray:
    """The custom colour as the shader sees it (RGBA; f32, k/n correctly rounded as RADV's
    command line gives the dwords)."""
    if binding in (0, 1, 4):
        return _unorm(np.round(np.array(F32[binding]) * 255), 255)
    if binding == 7:
        return _unorm(np.round(np.array(F32[binding]) * 15), 15)
    return np.array(F32[binding], np.float32)


def images() -> dict[int, np.ndarray]:
    """Each sampled image's texels as RGBA (what a texel read gives), [y, x, c]."""
    inp = FIX / "inputs" / "img_border"
    t8 = np.frombuffer((inp / "t8.bin").read_bytes(), np.uint8).reshape(8, 8, 4)
    r32 = np.frombuffer((inp / "r32.bin").read_bytes(), np.float32).reshape(8, 8)
    p16 = np.frombuffer((inp / "p16.bin").read_bytes(), np.uint16).reshape(8, 8).astype(np.int64)
    r = np.zeros((8, 8, 4), np.float32)
    r[..., 0], r[..., 3] = r32, 1.0
    # B4G4R4A4_UNORM_PACK16: B [15:12], G [11:8], R [7:4], A [3:0]
    p = np.stack([(p16 >> 4) & 15, (p16 >> 8) & 15, (p16 >> 12) & 15, p16 & 15], -1)
    return {
        0: _unorm(t8, 255),
        2: r,
        3: t8.astype(np.int32),  # rgba8ui
        4: _unorm(t8[..., [2, 1, 0, 3]], 255),  # bgra8: memory B, G, R, A
        7: _unorm(p, 15),
    }


def _border(binding: int) -> np.ndarray:
    if binding == 2:  # r32f: the colour's R; G, B, A those a one-channel format gives
        return np.array([F32[2][0], 0, 0, 1], np.float32)
    if binding == 3:
        return np.array([7, 200, 0, 255], np.int32)
    return _colour(binding)


def _texel(img: np.ndarray, border: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    out = np.empty((len(i), 4), img.dtype)
    inside = (i >= 0) & (i < 8) & (j >= 0) & (j < 8)
    out[inside] = img[j[inside], i[inside]]
    out[~inside] = border
    return out


def reference() -> tuple[dict[int, np.ndarray], np.ndarray, int]:
    """NumPy, from the sampler state: CLAMP_TO_BORDER on both axes; a point sample's texel
    floor(s * 8) per axis, a gather's footprint floor(s * 8 - 0.5) and + 1 in Vulkan's order
    (i0, j1), (i1, j1), (i1, j0), (i0, j0); a texel outside the 8x8 image is the custom
    colour.  Returns the float slots, the integer result and how many lanes took a border."""
    c = np.frombuffer((FIX / "inputs/img_border/coords.bin").read_bytes(), np.float32).reshape(N, 4)
    img = images()
    u = np.floor(c.astype(np.float64) * 8).astype(np.int64)
    g = np.floor(c.astype(np.float64) * 8 - 0.5).astype(np.int64)
    slots = {
        0: _texel(img[0], _border(0), u[:, 0], u[:, 1]),
        2: _texel(img[2], _border(2), u[:, 0], u[:, 1]),
        3: _texel(img[4], _border(4), u[:, 0], u[:, 1]),
        5: _texel(img[7], _border(7), u[:, 0], u[:, 1]),
        9: _texel(img[2], _border(2), u[:, 2], u[:, 3]),
    }
    for slot, b, comp in ((6, 0, 0), (7, 0, 3), (8, 4, 2)):
        i0, j0 = g[:, 0], g[:, 1]
        quad = [(i0, j0 + 1), (i0 + 1, j0 + 1), (i0 + 1, j0), (i0, j0)]
        slots[slot] = np.stack([_texel(img[b], _border(b), i, j)[:, comp] for i, j in quad], -1)
    ints = _texel(img[3], _border(3), u[:, 0], u[:, 1])
    outside = (u[:, :2] < 0) | (u[:, :2] >= 8)
    return slots, ints, int(outside.any(1).sum())


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))


def check(name: str, mode: str, tmp_path: Path, backend: str = "numpy") -> None:
    cap = capture(name, tmp_path)
    rs = replay(cap, mode=mode, backend=backend)
    refused = [(i, str(r.refusal)) for i, r in enumerate(rs) if not r.landed]
    assert not refused, refused
    got, goti = outputs(cap, name)
    want, wanti = lavapipe()
    ref, refi, nborder = reference()
    assert 16 <= nborder <= N - 16, nborder  # lanes on border texels and lanes inside both
    # NumPy, bit for bit: point samples and gathers, border texels included
    for s, r in ref.items():
        np.testing.assert_array_equal(got[:, s], r, err_msg=f"slot {s}")
    np.testing.assert_array_equal(goti, refi)
    # lavapipe: bit for bit for the float and integer images, its one-ulp UNORM reads elsewhere
    for s in (2, 9):
        np.testing.assert_array_equal(got[:, s], want[:, s], err_msg=f"slot {s}")
    np.testing.assert_array_equal(goti, wanti)
    for s in (0, 3, 5, 6, 7, 8):
        assert ulps(got[:, s], want[:, s]).max() <= 1, s
    # linear filtering over border texels: rgba8 within 1/255 (decision 0025), rgba16f within
    # 2**-9 of the span of texels and colour per blended axis plus 2 ulp of the largest
    assert np.abs(got[:, 1].astype(np.float64) - want[:, 1]).max() <= 1 / 255
    h = np.frombuffer((FIX / "inputs/img_border/h.bin").read_bytes(), np.float16).astype(np.float64)
    vals = np.concatenate([h, np.array(F32[5])])
    bound = 2 * (vals.max() - vals.min()) * 2.0**-9 + 2 * np.abs(vals).max() * 2.0**-23
    assert np.abs(got[:, 4].astype(np.float64) - want[:, 4]).max() <= bound


@pytest.mark.parametrize("build,mode", [("w32", "wave"), ("navi10-w64", "lane")])
def test_custom_border_capture_equals_numpy_and_lavapipe(build, mode, tmp_path):
    check(f"img_border-{build}", mode, tmp_path)


@pytest.mark.slow
@pytest.mark.tiers
@pytest.mark.parametrize("mode", ("wave", "lane"))
@pytest.mark.parametrize("build", BUILDS)
def test_custom_border_capture_every_build(build, mode, tmp_path):
    check(f"img_border-{build}", mode, tmp_path)


@pytest.mark.cuda
@pytest.mark.parametrize("build", BUILDS)
def test_custom_border_capture_on_cuda(build, tmp_path):
    """The same captures and checks on the CUDA backend (lane mode): the border-colour table is
    a window there too, RADV's meta copies included."""
    from wavelift.backends.cuda import _gpu_problem

    if why := _gpu_problem():
        pytest.skip(f"no CUDA device: {why}")
    check(f"img_border-{build}", "lane", tmp_path, backend="cuda")


def test_capture_holds_radv_table_and_register(tmp_path):
    """RADV's table holds each custom colour's dwords at its slot, and the stream's
    TA_CS_BC_BASE_ADDR/_HI point at it; the dispatch config carries the address and the
    tracer makes the table a window."""
    cap = capture("img_border-w32", tmp_path)
    for b, slot in SLOT.items():
        words = struct.unpack("<4I", cap.read(TABLE + 16 * slot, 16))
        if b == 3:
            assert words == (7, 200, 0, 255)
        else:
            assert words == tuple(int(x) for x in _colour(b).view(np.uint32)), b
    hits = []
    for a, n in cap.streams:
        d = np.frombuffer(cap.read(a, 4 * n), np.uint32)
        hits += [(a, int(k)) for k in np.flatnonzero((d[:-2] == 0xC0027900) & (d[1:-1] == BC_REG))]
    assert len(hits) == 1
    a, k = hits[0]
    lo, hi = struct.unpack("<2I", cap.read(a + 4 * (k + 2), 8))
    assert (lo << 8 | hi << 40) | 0xFFFF << 48 == TABLE
    rs = replay(cap, mode="wave")
    ours = [r for r in rs if any(w.reason.startswith("TA_CS_BC_BASE_ADDR") for w in r.windows)]
    assert len(ours) == len(rs)  # the register reaches every dispatch after the preamble
    w = next(w for w in rs[OURS].windows if w.reason.startswith("TA_CS_BC_BASE_ADDR"))
    assert (w.address, w.size) == (TABLE, 4096 * 16)


def test_dispatch_config_takes_the_register():
    regs = RegisterFile("gfx1030")
    regs["COMPUTE_PGM_LO"] = 0x100
    regs["COMPUTE_PGM_RSRC1"] = 0
    regs["COMPUTE_NUM_THREAD_X"] = 64
    regs["COMPUTE_NUM_THREAD_Y"] = 1
    regs["COMPUTE_NUM_THREAD_Z"] = 1
    cfg = build_config(regs, "gfx1030", dims=(1, 1, 1), initiator=1)
    assert cfg.border_color_base is None  # never written
    regs["TA_CS_BC_BASE_ADDR"] = 0x1000000
    regs["TA_CS_BC_BASE_ADDR_HI"] = 0x80
    assert build_config(regs, "gfx1030", dims=(1, 1, 1), initiator=1).border_color_base == TABLE
    regs["TA_CS_BC_BASE_ADDR_HI"] = 0x00
    assert build_config(regs, "gfx1030", dims=(1, 1, 1), initiator=1).border_color_base == 1 << 32


def _patched(tmp_path, slot=None, words=None, reg=None):
    cap = capture("img_border-w32", tmp_path)
    if slot is not None:
        cap.write(TABLE + 16 * slot, struct.pack("<4I", *words))
    if reg is not None:
        for a, n in cap.streams:
            d = np.frombuffer(cap.read(a, 4 * n), np.uint32)
            for k in np.flatnonzero((d[:-2] == 0xC0027900) & (d[1:-1] == BC_REG)):
                reg(cap, a + 4 * int(k))
    return cap


def _f(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


@pytest.mark.parametrize(
    "what, slot, words, code",
    [
        # rgba8 unorm: 0.3 lies between two of its values (what the hardware converts it to is
        # not established); 1.5 outside [0, 1]; a NaN
        ("unorm between values", 0, (_f(0.3), _f(0.4), _f(0.8), _f(0.6)), "image.custom_border_color"),
        ("unorm out of range", 0, (_f(1.5), _f(0.4), _f(0.8), _f(0.6)), "image.custom_border_color"),
        ("rgba16f not an f16", 5, (_f(0.1), 0, 0, 0), "image.custom_border_color"),
        ("r32f NaN", 2, (0x7FC00000, 0, 0, 0), "image.custom_border_color"),
        ("r32f denormal", 2, (1, 0, 0, 0), "image.custom_border_color"),
        ("rgba8ui 300", 3, (300, 0, 0, 0), "image.custom_border_color"),
        # components a format lacks change nothing: r32f's G, B, A
        ("r32f's missing channels", 2, (_f(1.5), 0x7FC00000, 12345, 1), None),
        # a colour of the format's values, different: lands and is read
        ("another unorm colour", 0, (0, _f(1.0), 0, _f(1.0)), None),
    ],
)
def test_table_entries(what, slot, words, code, tmp_path):
    cap = _patched(tmp_path, slot, words)
    rs = replay(cap, mode="wave")
    bad = [r for r in rs if not r.landed]
    if code is None:
        assert not bad, (what, [str(r.refusal) for r in bad])
        got, _ = outputs(cap, "img_border-w32")
        ref, _, _ = reference()
        if slot == 0:
            c = np.frombuffer((FIX / "inputs/img_border/coords.bin").read_bytes(), np.float32).reshape(N, 4)
            out = ((c[:, :2] < 0) | (c[:, :2] >= 1)).any(1)
            np.testing.assert_array_equal(got[out, 0], np.tile(np.float32([0, 1, 0, 1]), (out.sum(), 1)))
            np.testing.assert_array_equal(got[~out, 0], ref[0][~out])
        else:
            np.testing.assert_array_equal(got[:, 2], ref[2])
    else:
        assert len(bad) == 1 and bad[0].refusal.code == code, (what, [str(r.refusal) for r in bad])
        assert rs.index(bad[0]) == OURS  # RADV's meta copies land


def test_register_never_written_refused_by_name(tmp_path):
    """The same stream with the TA_CS_BC_BASE_ADDR write turned into one of a register nothing
    reads: the dispatch that takes border texels through a REGISTER colour refuses by name."""

    def unwrite(cap, at):
        cap.write(at + 4, struct.pack("<I", 0x0FF0))  # SET_UCONFIG_REG offset -> 0x33FC0

    cap = _patched(tmp_path, reg=unwrite)
    rs = replay(cap, mode="lane")
    bad = [(i, r.refusal.code) for i, r in enumerate(rs) if not r.landed]
    assert bad == [(OURS, "image.custom_border_color")], bad
    assert not any(w.reason.startswith("TA_CS_BC_BASE_ADDR") for r in rs for w in r.windows)


def test_table_outside_memory_escapes(tmp_path):
    """TA_CS_BC_BASE_ADDR pointing where no allocation is: no window, and the colour's read is
    an escape (the dispatch is refused; nothing it wrote lands)."""

    def move(cap, at):
        cap.write(at + 12, struct.pack("<I", 0x7F))  # _HI: address bits 47:40

    cap = _patched(tmp_path, reg=move)
    b = bindings("img_border-w32")
    before = cap.read(int(b[9]["va"], 16), 64)
    rs = replay(cap, mode="wave")
    bad = [(i, r.refusal.code) for i, r in enumerate(rs) if not r.landed]
    assert bad == [(OURS, "escape")], bad
    assert cap.read(int(b[9]["va"], 16), 64) == before


def test_committed_lavapipe_answers_are_lavapipes(tmp_path):
    """lavapipe/img_border/ is what run_lavapipe (the same vkapp.h application, custom border
    colours included) gives with the capture's own command line, re-made live."""
    if not (os.path.exists(LVP_LIB) and os.path.exists(VK_HEADER) and shutil.which("gcc")):
        pytest.skip("lavapipe (mesa-vulkan-drivers), the Vulkan headers (libvulkan-dev) or gcc missing")
    exe = tmp_path / "run_lavapipe"
    p = subprocess.run(
        ["gcc", "-O1", "-o", str(exe), str(ROOT / "tools/radv_capture/run_lavapipe.c"), "-ldl"],
        capture_output=True,
        text=True,
    )
    if p.returncode:
        pytest.skip("run_lavapipe does not build here: " + p.stderr[-300:])
    name = "img_border-w32"
    line = next(x for x in (FIX / name / "command.txt").read_text().splitlines() if " radv_capture " in x)
    args = line.split(" radv_capture ", 1)[1].split()
    out = tmp_path / "out"
    p = subprocess.run(
        [str(exe), args[0], str(out), *args[2:]], cwd=FIX / name, capture_output=True, text=True
    )
    assert p.returncode == 0, p.stderr[-500:]
    committed = sorted((FIX / "lavapipe" / "img_border").glob("set*_binding*.bin"))
    assert len(committed) == 2
    for f in committed:
        assert (out / f.name).read_bytes() == f.read_bytes(), f.name
