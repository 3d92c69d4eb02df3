"""GFX11 typed buffer accesses (buffer_load/store_format_*, tbuffer_*) in clang-19's own gfx1100
code, with GFX11's buffer format numbers (decision 0023, 2026-12-05 amendment): against a NumPy
reference of the expected channels and against the same IR built for gfx1030 (whose MUBUF/MTBUF
typed path is exact) with GFX10's number of the same format.

The IR is tests/fixtures/gfx1200/buffers.ll (its `typed`, `typed_d16` and `tbuf_*` kernels build
the V# from a pointer and argument words, so each case picks FORMAT at run time); the gfx1100
builds come from tests/fixtures/gfx1100/build_typed_buffers.sh (commands:
tests/fixtures/build_log/clang-buffers-gfx1100.tsv), the gfx1030 ones from
tests/fixtures/gfx1200/build_buffers.sh (tests/fixtures/build_log/clang-buffers.tsv).  Each
format's number on each target is taken from llvm-mc-19's assembly of `format:[BUF_FMT_<name>]`."""

from __future__ import annotations

import pathlib
import re
import subprocess
from functools import cache

import numpy as np
import pytest
from nvrtc_check import check_cuda_kernels

import wavelift

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOGS = ("tests/fixtures/build_log/clang-buffers-gfx1100.tsv", "tests/fixtures/build_log/clang-buffers.tsv")
ROWS = [ln.split("\t") for lg in LOGS for ln in (ROOT / lg).read_text().splitlines()]
N = 64  # one workgroup of 64 work-items
SEL = 4 | 5 << 3 | 6 << 6 | 7 << 9  # DST_SEL x, y, z, w


def path(target: str, wave: int) -> str:
    (row,) = [r for r in ROWS if r[3] == target and r[4] == f"w{wave}"]
    return row[1]


@cache
def fmt_number(target: str, name: str) -> int:
    """BUF_FMT_<name>'s number on ``target``: MTBUF's format field as llvm-mc-19 assembles it
    (GFX10: dword 0 [25:19]; GFX11: dword 0 [25:19] as well)."""
    src = f"tbuffer_load_format_x v1, off, s[0:3], s0 format:[BUF_FMT_{name}]\n"
    out = subprocess.run(
        ["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={target}", "-show-encoding"],
        input=src,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    enc = bytes(int(x, 16) for x in re.search(r"encoding: \[(.*)\]", out).group(1).split(","))
    return (int.from_bytes(enc[0:4], "little") >> 19) & 0x7F


def flags(target: str, fmt: int, sel: int = SEL) -> int:
    """V# word 3: DST_SEL, FORMAT [18:12], OOB_SELECT 3 (raw); RESOURCE_LEVEL [24] set on GFX10.3
    (as Mesa sets it below GFX11; reserved on GFX11)."""
    return sel | fmt << 12 | 3 << 28 | (1 << 24 if target == "gfx1030" else 0)


def launch(target, wave, mode, kernel, arrays, words):
    dev = wavelift.Device(target, mode=mode)
    co = dev.load_code_object(str(ROOT / path(target, wave)))
    bufs = [dev.upload(a) for a in arrays]
    r = co.kernel(kernel).launch(
        groups=(1, 1, 1), block=(N, 1, 1), args=bufs + [np.uint32(w & 0xFFFFFFFF) for w in words]
    )
    return r, [dev.download(b, a.dtype) for b, a in zip(bufs, arrays)]


RNG = np.random.default_rng(11)
HALFS = RNG.uniform(-4, 4, 2048).astype(np.float16).view(np.uint16)
F32 = RNG.uniform(-100, 100, 1024).astype(np.float32).view(np.uint32)
BITS = RNG.integers(0, 2**32, 1024, dtype=np.uint64).astype(np.uint32)
FORMATS = {
    "32_32_32_32_UINT": BITS,
    "8_8_8_8_UINT": BITS,
    "16_16_SINT": BITS,
    "32_FLOAT": F32,
    "32_32_FLOAT": F32,
    "8_8_8_8_UNORM": BITS,
    "8_8_8_8_SNORM": BITS,
    "16_16_16_16_UNORM": BITS,
    "16_16_FLOAT": HALFS.view(np.uint32),
    "16_16_16_16_FLOAT": HALFS.view(np.uint32),
    "2_10_10_10_UNORM": BITS,
}


def _f32(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).view(np.uint32)


def channels(name: str, data: np.ndarray, t: int) -> list[int] | None:
    """NumPy reference of one element's four channels (missing ones 0, 0, 0, 1 as integer or
    float), the element at byte 16*t; None where the format has no reference here."""
    by = data.view(np.uint8)
    a = 16 * t
    one_f, one_i = 0x3F800000, 1
    if name == "32_32_32_32_UINT":
        return [int(x) for x in data[4 * t : 4 * t + 4]]
    if name == "8_8_8_8_UINT":
        return [int(x) for x in by[a : a + 4]]
    if name == "16_16_SINT":
        h = by[a : a + 4].view(np.int16)
        return [int(h[0]) & 0xFFFFFFFF, int(h[1]) & 0xFFFFFFFF, 0, one_i]
    if name == "32_FLOAT":
        return [int(data[4 * t]), 0, 0, one_f]
    if name == "32_32_FLOAT":
        return [int(data[4 * t]), int(data[4 * t + 1]), 0, one_f]
    if name == "8_8_8_8_UNORM":
        return [int(v) for v in _f32(by[a : a + 4].astype(np.float32) / np.float32(255))]
    if name == "16_16_16_16_UNORM":
        return [int(v) for v in _f32(by[a : a + 8].view(np.uint16).astype(np.float32) / np.float32(65535))]
    if name == "16_16_FLOAT":
        return [int(v) for v in _f32(by[a : a + 4].view(np.float16).astype(np.float32))] + [0, one_f]
    if name == "16_16_16_16_FLOAT":
        return [int(v) for v in _f32(by[a : a + 8].view(np.float16).astype(np.float32))]
    return None


CASES = list(FORMATS)


@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("name", CASES)
def test_typed_against_numpy_and_gfx1030(name, mode, tier):
    """buffer_load_format_{xyzw,x,xy} and buffer_store_format_xyzw through a V# whose FORMAT is
    GFX11's number of the format: the channels NumPy expects, and the same bytes (loads and
    stores) as the gfx1030 build with GFX10's number of the same format."""
    data = FORMATS[name]
    outs = []
    for target, m in (("gfx1100", mode), ("gfx1030", "wave")):
        fl = flags(target, fmt_number(target, name))
        arrays = [data, np.zeros(8 * N, np.uint32), np.full(1024, 0x5555AAAA, np.uint32)]
        r, got = launch(target, 32, m, "typed", arrays, [0, 4096, fl, 0])
        assert r.landed, (target, r.refusal)
        outs.append(got)
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    np.testing.assert_array_equal(outs[0][2], outs[1][2])
    out = outs[0][1].reshape(N, 8)
    for t in range(N):
        ch = channels(name, data, t)
        if ch is None:
            break
        assert list(out[t, :4]) == ch, (t, list(out[t, :4]), ch)
        assert out[t, 4] == ch[0] and list(out[t, 5:7]) == ch[:2]


@pytest.mark.parametrize("wave", [32, 64])
def test_typed_d16(wave):
    """buffer_load/store_d16_format_xyzw on 16_16_16_16_FLOAT: the halves are the memory's own."""
    name = "16_16_16_16_FLOAT"
    data = FORMATS[name]
    fl = flags("gfx1100", fmt_number("gfx1100", name))
    arrays = [data, np.zeros(2 * N, np.uint32), np.full(1024, 0x5555AAAA, np.uint32)]
    r, (_, out, dst) = launch("gfx1100", wave, "wave", "typed_d16", arrays, [0, 4096, fl, 0])
    assert r.landed, r.refusal
    want = data.view(np.uint16)[: 8 * N].reshape(N, 8)[:, :4]
    np.testing.assert_array_equal(out.view(np.uint16).reshape(N, 4), want)
    np.testing.assert_array_equal(dst.view(np.uint16)[: 8 * N].reshape(N, 8)[:, :4], want)


@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave", [32, 64])
def test_tbuffer_format_from_the_instruction(wave, mode, tier):
    """tbuffer_load_format_xyzw with the instruction's format (GFX11's 46, 8_8_8_8_UINT), whatever
    the V#'s FORMAT (32_FLOAT here): each byte zero-extended (NumPy)."""
    assert fmt_number("gfx1100", "8_8_8_8_UINT") == 46  # the number buffers.ll's tbuf_gfx11 uses
    fl = flags("gfx1100", fmt_number("gfx1100", "32_FLOAT"))
    r, (_, out) = launch(
        "gfx1100", wave, mode, "tbuf_gfx11", [BITS, np.zeros(4 * N, np.uint32)], [0, 4096, fl, 0]
    )
    assert r.landed, r.refusal
    by = BITS.view(np.uint8)
    want = np.stack([by[4 * t : 4 * t + 4] for t in range(N)]).astype(np.uint32).reshape(-1)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("fmt", [0, 64, 127], ids=["INVALID", "64", "127"])
def test_format_without_a_gfx10_name_is_refused(fmt):
    """A GFX11 FORMAT with no LLVM BUF_FMT name (0 INVALID, 64-127) refuses by name, nothing lands."""
    dst0 = np.full(1024, 0x5555AAAA, np.uint32)
    arrays = [BITS, np.zeros(8 * N, np.uint32), dst0]
    r, (_, out, dst) = launch("gfx1100", 32, "wave", "typed", arrays, [0, 4096, flags("gfx1100", fmt), 0])
    assert not r.landed and r.refusal.code == "buffer.unsupported_format", r.refusal
    assert not out.any() and (dst == 0x5555AAAA).all()


def test_gfx11_table_is_gfx12s():
    """GFX11 and GFX12 number buffer formats alike (LLVM 19's tables): one map serves both."""
    from wavelift.frontend import gfx11, gfx12

    assert gfx11.format_map() == gfx12.format_map()
    for name in FORMATS:
        assert gfx11.format_map()[fmt_number("gfx1100", name)] == fmt_number("gfx1030", name)


def test_d16_format_names_are_llvm_aliases():
    """GFX11's `*_d16_format_*` and GFX10's `*_format_d16_*` are one instruction to llvm-mc-19 for
    gfx1100 (the frontend runs the first under the second's name: gfx11.D16_FORMAT)."""
    from wavelift.frontend import gfx11

    def enc(text: str) -> str:
        out = subprocess.run(
            ["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx1100", "-show-encoding"],
            input=text + "\n",
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return re.search(r"encoding: (\[.*\])", out).group(1)

    for new, old in gfx11.D16_FORMAT.items():
        c = new.rsplit("_", 1)[1]
        n = (len(c) + 1) // 2
        reg = "v1" if n == 1 else f"v[1:{n}]"
        fmt = " format:[BUF_FMT_32_FLOAT]" if new.startswith("t") else ""
        ops = f"{reg}, v3, s[12:15], s11{fmt} offen"
        assert enc(f"{new} {ops}") == enc(f"{old} {ops}"), new


@pytest.mark.parametrize(
    "name,nrec,data,why",
    [
        ("32_32_32_32_UINT", 16 * 40 + 4, BITS, "partly out of range"),
        ("10_11_11_FLOAT", 4096, F32, "NaN"),
    ],
    ids=["partly-out-of-range", "nan-11-bit-float"],
)
def test_typed_refusals_of_gfx10_kept(name, nrec, data, why):
    """_typed's refusals hold on GFX11's numbers: an element straddling NUM_RECORDS, and a NaN read
    from a 10/11-bit float channel (random f32 words hold such NaNs), refuse by name; nothing lands."""
    arrays = [data, np.zeros(8 * N, np.uint32), np.full(1024, 0x5555AAAA, np.uint32)]
    fl = flags("gfx1100", fmt_number("gfx1100", name))
    r, (_, out, dst) = launch("gfx1100", 32, "wave", "typed", arrays, [0, nrec, fl, 0])
    assert not r.landed and r.refusal.code == "buffer.unsupported_format", r.refusal
    assert why in r.refusal.message
    assert not out.any() and (dst == 0x5555AAAA).all()


@pytest.mark.parametrize("kernel", ["typed", "typed_d16", "tbuf_gfx11"])
def test_cuda_kernels_compile(kernel):
    """CUDA: NVRTC compiles the gfx1100 typed kernels' modules in both modes (no GPU here)."""
    from wavelift.driver.device import _load_co
    from wavelift.frontend.program import translate

    co = _load_co(str(ROOT / path("gfx1100", 32)))
    check_cuda_kernels(
        [translate(co.load_image(0), "gfx1100", 32, 0, entry=co.kernel(kernel).code_address)], base=0
    )
