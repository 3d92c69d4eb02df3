"""GFX11 MIMG (image_load, image_store, image_sample_lz in clang-19's gfx1100 code) refuses the
dispatch by name when an active lane reaches it (``image.unsupported_descriptor``; decision 0023,
2026-12-05 amendment): GFX11's T# (IMG_FORMAT renumbered, RESOURCE_LEVEL gone) and its swizzle
modes are not carried out, so neither a null (all-zero) T# nor one GFX10.3 would read as a valid
linear 2-D image may run with GFX10.3's reading.  An image instruction no active lane reaches
changes nothing (the dispatch lands, NumPy reference).  The fixture: tests/fixtures/gfx1100/
images.ll, built by tests/fixtures/gfx1100/build_images.sh (tests/fixtures/build_log/
clang-images-gfx1100.tsv); its disassembly is checked against llvm-objdump-19 with every
fixture (tests/isa/test_fixtures_disasm.py)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import wavelift

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROWS = [
    ln.split("\t")
    for ln in (ROOT / "tests/fixtures/build_log/clang-images-gfx1100.tsv").read_text().splitlines()
]
N = 64


def code(wave: int) -> str:
    (row,) = [r for r in ROWS if r[4] == f"w{wave}"]
    return str(ROOT / row[1])


def gfx103_linear_tsharp(addr: int) -> np.ndarray:
    """A T# GFX10.3 reads as a valid linear 64x4 2-D R32G32B32A32_UINT image (frontend/image.py's
    field list: FORMAT 77, RESOURCE_LEVEL set, DST_SEL XYZW, SW_MODE 0, TYPE 2D (9))."""
    d = np.zeros(8, np.uint32)
    d[0] = (addr >> 8) & 0xFFFFFFFF
    d[1] = (addr >> 40) & 0xFF | 77 << 20 | ((N - 1) & 3) << 30
    d[2] = (N - 1) >> 2 | 3 << 14 | 1 << 31
    d[3] = 4 | 5 << 3 | 6 << 6 | 7 << 9 | 9 << 28
    return d


def run(wave, mode, kernel, tsharp_of, extra=()):
    dev = wavelift.Device("gfx1100", mode=mode)
    co = dev.load_code_object(code(wave))
    img = dev.upload(np.arange(4 * N * 4, dtype=np.uint32))
    t = dev.upload(tsharp_of(img.address))
    out0 = np.full(512, 0xDEADBEEF, np.uint32)
    out = dev.upload(out0)
    args = [t] + ([dev.upload(np.zeros(4, np.uint32))] if kernel == "smp" else []) + [out, *extra]
    r = co.kernel(kernel).launch(groups=(1, 1, 1), block=(N, 1, 1), args=args)
    return r, dev.download(out, np.uint32), dev.download(img, np.uint32)


TSHARPS = {"null": lambda a: np.zeros(8, np.uint32), "gfx103_linear": gfx103_linear_tsharp}


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("tsharp", list(TSHARPS))
@pytest.mark.parametrize("kernel", ["ld", "smp"])
def test_gfx11_image_refused_by_name(kernel, tsharp, wave, mode):
    r, out, img = run(wave, mode, kernel, TSHARPS[tsharp])
    assert not r.landed and r.refusal.code == "image.unsupported_descriptor", r.refusal
    assert "GFX11" in r.refusal.message
    assert (out == 0xDEADBEEF).all()
    np.testing.assert_array_equal(img, np.arange(4 * N * 4, dtype=np.uint32))


@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave", [32, 64])
def test_unreached_image_instruction_lands(wave, mode, tier):
    """`maybe`: the image_load runs only for work-items below n; n = 0 leaves no active lane there,
    so the dispatch lands: out[256 + i] = 7 (NumPy), the rest untouched."""
    r, out, _ = run(wave, mode, "maybe", gfx103_linear_tsharp, (np.uint32(0),))
    assert r.landed, r.refusal
    want = np.full(512, 0xDEADBEEF, np.uint32)
    want[256 : 256 + N] = 7
    np.testing.assert_array_equal(out, want)
    r, out, _ = run(wave, mode, "maybe", gfx103_linear_tsharp, (np.uint32(1),))
    assert not r.landed and r.refusal.code == "image.unsupported_descriptor", r.refusal


def _gfx1200_code_object(d):
    """clang-19's gfx1200 build of the same IR (tests/fixtures/gfx1100/images.ll), in ``d``."""
    import subprocess

    out = f"{d}/img.hsaco"
    subprocess.run(
        [
            "clang-19",
            "-x",
            "ir",
            "-nogpulib",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx1200",
            "-O2",
            str(ROOT / "tests/fixtures/gfx1100/images.ll"),
            "-o",
            out,
        ],
        check=True,
        capture_output=True,
    )
    return out


@pytest.mark.parametrize("kernel", ["ld", "smp"])
def test_gfx1200_image_code_is_refused_by_name(kernel):
    """GFX12 VIMAGE/VSAMPLE decode (tests/isa/test_gfx12_vimage_decode.py) but are not carried
    out: the same IR built for gfx1200 refuses by name when an active lane reaches one (decision
    0038), nothing written; the disassembly equals llvm-objdump-19's."""
    import tempfile

    from wavelift.isa.llvm_oracle import have_llvm

    with tempfile.TemporaryDirectory() as d:
        path = _gfx1200_code_object(d)
        if have_llvm():
            import subprocess

            from wavelift.isa.disasm_cli import code_object_listing

            with open(path, "rb") as fh:
                ours = [ln.strip() for ln in code_object_listing(fh.read()) if "image_" in ln]
            ref = subprocess.run(
                ["llvm-objdump-19", "-d", path], check=True, capture_output=True, text=True
            ).stdout
            want = [ln.split("//")[0].strip() for ln in ref.splitlines() if "image_" in ln]
            assert len(want) == 4 and ours == want, (ours, want)
        dev = wavelift.Device("gfx1200", mode="wave")
        co = dev.load_code_object(path)
        t = dev.upload(gfx103_linear_tsharp(dev.upload(np.zeros(4 * N * 4, np.uint32)).address))
        o = dev.upload(np.full(512, 0xDEADBEEF, np.uint32))
        args = [t] + ([dev.upload(np.zeros(4, np.uint32))] if kernel == "smp" else []) + [o]
        r = co.kernel(kernel).launch(groups=(1, 1, 1), block=(N, 1, 1), args=args)
        assert not r.landed and r.refusal.code == "image.unsupported_descriptor", r.refusal
        assert "GFX12" in r.refusal.message
        assert (dev.download(o, np.uint32) == 0xDEADBEEF).all()


@pytest.mark.parametrize("mode", ["wave", "lane"])
def test_gfx1200_unreached_image_instruction_lands(mode):
    """gfx1200's `maybe` with n = 0: no active lane reaches the image_load, the dispatch lands
    (out[256 + i] = 7, NumPy), the rest untouched."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        dev = wavelift.Device("gfx1200", mode=mode)
        co = dev.load_code_object(_gfx1200_code_object(d))
        t = dev.upload(gfx103_linear_tsharp(dev.upload(np.zeros(4 * N * 4, np.uint32)).address))
        o = dev.upload(np.full(512, 0xDEADBEEF, np.uint32))
        r = co.kernel("maybe").launch(groups=(1, 1, 1), block=(N, 1, 1), args=[t, o, np.uint32(0)])
        assert r.landed, r.refusal
        want = np.full(512, 0xDEADBEEF, np.uint32)
        want[256 : 256 + N] = 7
        np.testing.assert_array_equal(dev.download(o, np.uint32), want)
