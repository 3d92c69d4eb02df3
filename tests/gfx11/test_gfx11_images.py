"""GFX11 MIMG (image_load, image_store, image_sample_lz in clang-19's gfx1100 code) refuses the
dispatch by name when an active lane reaches it through a T# not carried out
(``image.unsupported_descriptor``; decisions 0023, 0038): a null (all-zero) T# or one GFX10.3
would read as a valid linear 2-D image may not run with GFX10.3's reading (GFX11 renumbered
IMG_FORMAT and dropped RESOURCE_LEVEL).  GFX11 linear and tiled images run (decisions 0038,
0039), sampling too (0044, tests/gfx11/test_gfx11_sampling.py).  An image instruction no active
lane reaches changes nothing (the dispatch lands, NumPy reference).  The fixture:
tests/fixtures/gfx1100/images.ll, built by tests/fixtures/gfx1100/build_images.sh
(tests/fixtures/build_log/clang-images-gfx1100.tsv); its disassembly is checked against
llvm-objdump-19 with every fixture (tests/isa/test_fixtures_disasm.py)."""

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


def gfx11_tsharp(addr: int, sw_mode: int = 0, fmt: str = "32_32_32_32_UINT") -> np.ndarray:
    """A GFX11 T# of a 64x4 2-D image at ``addr`` from GFX11's own field layout and format
    numbering (Mesa's register database, tables/gfx11_image.json: tsharp.field_bits11), as
    RADV's gfx10_make_texture_descriptor fills it for GFX11: FORMAT by name, WIDTH/HEIGHT minus
    1, DST_SEL XYZW, TYPE 2D, SW_MODE, one level."""
    from wavelift.memory import tsharp

    (f11,) = [int(k) for k, e in tsharp.tables11()["formats"].items() if e["name"] == fmt]
    d = [0] * 8
    d[0] = (addr >> 8) & 0xFFFFFFFF
    vals = {
        "BASE_ADDRESS_HI": (addr >> 40) & 0xFF,
        "FORMAT": f11,
        "WIDTH_LO": (N - 1) & 3,
        "WIDTH_HI": (N - 1) >> 2,
        "HEIGHT": 3,
        "DST_SEL_X": 4,
        "DST_SEL_Y": 5,
        "DST_SEL_Z": 6,
        "DST_SEL_W": 7,
        "SW_MODE": sw_mode,
        "TYPE": 9,
    }
    for name, v in vals.items():
        w, lo, hi = tsharp.field_bits11(name)
        assert v < 1 << (hi - lo + 1)
        d[w] |= v << lo
    return np.array(d, np.uint32)


TSHARPS = {"null": lambda a: np.zeros(8, np.uint32), "gfx103_linear": gfx103_linear_tsharp}


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("tsharp", list(TSHARPS))
def test_gfx11_sampling_refused_by_name(tsharp, wave, mode):
    """image_sample_lz through a T# GFX11 sampling does not carry out: refused by name, nothing
    written (GFX11 sampling itself runs since decision 0044: tests/gfx11/test_gfx11_sampling.py;
    the null T# is not established on GFX11, and the GFX10.3 T# sets d2[31], reserved there)."""
    r, out, img = run(wave, mode, "smp", TSHARPS[tsharp])
    assert not r.landed and r.refusal.code == "image.unsupported_descriptor", r.refusal
    assert ("GFX11" if tsharp == "null" else "reserved bits") in r.refusal.message
    assert (out == 0xDEADBEEF).all()
    np.testing.assert_array_equal(img, np.arange(4 * N * 4, dtype=np.uint32))


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize(
    "tsharp,code",
    [
        ("null", "image.unsupported_descriptor"),  # GFX11's null T# is not established
        # d2[31] (GFX10.3's RESOURCE_LEVEL) is reserved on GFX11 (its FORMAT 77: GFX11's 8_24_UINT)
        ("gfx103_linear", "image.unsupported_descriptor"),
        # 64KB_S: GFX11 has no 2-D S modes (no pattern in its addrlib); 64KB_Z_X: no Z layout of
        # 16-byte texels (addrlib rejects it; decision 0039)
        ("gfx11_64KB_S", "image.unsupported_layout"),
        ("gfx11_64KB_Z_X", "image.unsupported_layout"),
    ],
)
def test_gfx11_load_store_refused(tsharp, code, mode):
    """T#s image_load/store do not carry out on GFX11 refuse by name, nothing written."""
    of = {
        "null": TSHARPS["null"],
        "gfx103_linear": gfx103_linear_tsharp,
        "gfx11_64KB_S": lambda a: gfx11_tsharp(a, sw_mode=9),
        "gfx11_64KB_Z_X": lambda a: gfx11_tsharp(a, sw_mode=24),
    }[tsharp]
    r, out, img = run(32, mode, "ld", of)
    assert not r.landed and r.refusal.code == code, r.refusal
    assert (out == 0xDEADBEEF).all()
    np.testing.assert_array_equal(img, np.arange(4 * N * 4, dtype=np.uint32))


def _gfx1030_ld(d, wave, mode):
    """The same IR's ``ld`` built by clang-19 for gfx1030, run on the same data with the GFX10.3
    T# of the same image (wavelift's GFX10.3 image path, held to addrlib and lavapipe)."""
    import subprocess

    path = f"{d}/img1030-w{wave}.hsaco"
    subprocess.run(
        ["clang-19", "-x", "ir", "-nogpulib", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx1030", "-O2"]
        + (["-mwavefrontsize64"] if wave == 64 else [])
        + [str(ROOT / "tests/fixtures/gfx1100/images.ll"), "-o", path],
        check=True,
        capture_output=True,
    )
    dev = wavelift.Device("gfx1030", mode=mode)
    co = dev.load_code_object(path)
    img = dev.upload(np.arange(4 * N * 4, dtype=np.uint32))
    t = dev.upload(gfx103_linear_tsharp(img.address))
    out = dev.upload(np.full(512, 0xDEADBEEF, np.uint32))
    r = co.kernel("ld").launch(groups=(1, 1, 1), block=(N, 1, 1), args=[t, out])
    assert r.landed, r.refusal
    return dev.download(out, np.uint32), dev.download(img, np.uint32)


@pytest.mark.tiers
@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave", [32, 64])
def test_gfx11_linear_load_store(wave, mode, tier, tmp_path):
    """clang-19's gfx1100 ``ld`` through a GFX11 linear R32G32B32A32_UINT T#: image_load of
    (x, 0) to out[x], image_store of it to (x, 1).  Equal to NumPy (the linear image: rows of 64
    texels, pitch 1024 bytes) and to the gfx1030 build of the same IR on the same data with the
    GFX10.3 T# (decision 0038)."""
    r, out, img = run(wave, mode, "ld", gfx11_tsharp)
    assert r.landed, r.refusal
    src = np.arange(4 * N * 4, dtype=np.uint32).reshape(4, N, 4)
    want_out = np.full(512, 0xDEADBEEF, np.uint32)
    want_out[: 4 * N] = src[0].reshape(-1)
    want_img = src.copy()
    want_img[1] = src[0]
    np.testing.assert_array_equal(out, want_out)
    np.testing.assert_array_equal(img, want_img.reshape(-1))
    out10, img10 = _gfx1030_ld(tmp_path, wave, mode)
    np.testing.assert_array_equal(out, out10)
    np.testing.assert_array_equal(img, img10)


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


def _blur(target, wave, mode, rows, w, h):
    from wavelift.driver.aco import Image

    dev = wavelift.Device(target, mode=mode)
    sh = dev.load_aco_shader(str(ROOT / f"tests/fixtures/{target}/aco/image_blur-w{wave}.json"))
    src = Image(dev.upload(rows), w, h, "rgba8")
    dbuf = dev.upload(np.full(rows.shape, 0x5A5A5A5A, np.uint32))
    r = sh.launch(
        groups=(-(-w // 8), -(-h // 8), 1), images={(0, 0): src, (0, 1): Image(dbuf, w, h, "rgba8")}
    )
    assert r.landed, r.refusal
    return dev.download(dbuf, np.uint32)


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave", [32, 64])
def test_gfx11_aco_image_blur_equals_gfx1030(wave, mode):
    """ACO's gfx1100 image_blur (tests/fixtures/gfx1100/aco: imageLoad/imageStore of rgba8 linear
    images through GFX11 T#s, wavelift.driver.aco.image_descriptor) gives the bytes the gfx1030
    build of the same shader gives on the same data with GFX10.3 T#s (whose result
    tests/execute/test_aco_fixtures.py holds to a NumPy blur); decision 0038."""
    w, h, pitch = 29, 19, 64
    rng = np.random.default_rng(wave)
    rows = np.full((h, pitch), 0xA5A5A5A5, np.uint32)
    rows[:, :w] = rng.integers(0, 1 << 32, size=(h, w), dtype=np.uint64).astype(np.uint32)
    got = _blur("gfx1100", wave, mode, rows, w, h)
    want = _blur("gfx1030", wave, mode, rows, w, h)
    np.testing.assert_array_equal(got, want)
    assert (got.reshape(h, pitch)[:, w:] == 0x5A5A5A5A).all()
    assert (got.reshape(h, pitch)[:, :w] != 0x5A5A5A5A).any()


def _atomics(target, wave, mode, tmp_path, make_tsharp):
    """clang-19's build of tests/fixtures/gfx1100/image_atomics.ll for ``target``, run on a 64x2
    R32_UINT linear image (rows 256 bytes apart) through ``make_tsharp``."""
    import subprocess

    path = f"{tmp_path}/at-{target}-w{wave}.hsaco"
    subprocess.run(
        ["clang-19", "-x", "ir", "-nogpulib", "-target", "amdgcn-amd-amdhsa", f"-mcpu={target}", "-O2"]
        + (["-mwavefrontsize64"] if wave == 64 else [])
        + [str(ROOT / "tests/fixtures/gfx1100/image_atomics.ll"), "-o", path],
        check=True,
        capture_output=True,
    )
    dev = wavelift.Device(target, mode=mode)
    co = dev.load_code_object(path)
    rng = np.random.default_rng(5)
    init = rng.integers(0, 1000, size=(2, N), dtype=np.uint32)
    img = dev.upload(init)
    t = dev.upload(make_tsharp(img.address))
    out = dev.upload(np.full(2 * N + 8, 0xDEADBEEF, np.uint32))
    r = co.kernel("at").launch(groups=(1, 1, 1), block=(N, 1, 1), args=[t, out])
    assert r.landed, r.refusal
    return init, dev.download(out, np.uint32), dev.download(img, np.uint32).reshape(2, N)


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("wave", [32, 64])
def test_gfx11_linear_image_atomics(wave, mode, tmp_path):
    """image_atomic_add/umax with return (glc) on gfx1100 through a linear R32_UINT GFX11 T#: the
    returned old values and the image equal NumPy and the gfx1030 build with the GFX10.3 T#."""

    from wavelift.memory import tsharp

    def t11(a):
        d = gfx11_tsharp(a, fmt="32_UINT")
        w, lo, _ = tsharp.field_bits11("HEIGHT")
        d[w] &= ~np.uint32(0x3FFF << lo)
        d[w] |= np.uint32(1 << lo)  # 2 rows
        return d

    def t10(a):
        d = gfx103_linear_tsharp(a)
        d[1] = (d[1] & ~np.uint32(0x1FF << 20)) | np.uint32(20 << 20)  # GFX10 FORMAT 20: 32_UINT
        d[2] = (d[2] & ~np.uint32(0x3FFF << 14)) | np.uint32(1 << 14)  # 2 rows
        return d

    init, out, img = _atomics("gfx1100", wave, mode, tmp_path, t11)
    x = np.arange(N, dtype=np.uint32)
    want_img = init.copy()
    want_img[0] += x + 1
    want_img[1] = np.maximum(init[1], 7 * x)
    np.testing.assert_array_equal(img, want_img)
    np.testing.assert_array_equal(out[:N], init[0])
    np.testing.assert_array_equal(out[N : 2 * N], init[1])
    _, out10, img10 = _atomics("gfx1030", wave, mode, tmp_path, t10)
    np.testing.assert_array_equal(out, out10)
    np.testing.assert_array_equal(img, img10)
