"""`wavelift show`: PNGs decoded with wavelift.png and compared pixel by pixel with NumPy."""

import struct
import zlib

import numpy as np
import pytest

from wavelift import png


def expected_map(x, lo, hi):
    """The documented mapping: clip(floor((x - lo) / (hi - lo) * 255 + 0.5), 0, 255)."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        v = np.floor((x - lo) / (hi - lo) * 255 + 0.5)
    return np.clip(np.nan_to_num(v, nan=0, posinf=255, neginf=0), 0, 255).astype(np.uint8)


def test_rgba8_bgra8_r8(cli, built, tmp_path):
    img = built["img"]
    rc, out, err = cli(
        "show",
        built["images"],
        "img",
        "--format",
        "rgba8",
        "--width",
        16,
        "--alpha",
        "keep",
        "--png",
        tmp_path / "a.png",
    )
    assert rc == 0, err
    assert "16x8 rgba8" in out
    np.testing.assert_array_equal(png.read(tmp_path / "a.png"), img)
    rc, out, err = cli("show", built["images"], "img", "-f", "bgra8", "-W", 16, "--png", tmp_path / "b.png")
    np.testing.assert_array_equal(png.read(tmp_path / "b.png"), img[:, :, [2, 1, 0]])  # opaque
    # r8 of the same bytes, 64 wide, rows 2..5 by offset/height
    rc, out, err = cli(
        "show",
        built["images"],
        "img",
        "-f",
        "r8",
        "-W",
        64,
        "--offset",
        128,
        "-H",
        4,
        "--png",
        tmp_path / "c.png",
    )
    np.testing.assert_array_equal(
        png.read(tmp_path / "c.png")[:, :, 0], img.reshape(-1)[128 : 128 + 256].reshape(4, 64)
    )


def test_r32f_auto_and_nan(cli, built, tmp_path):
    f = built["floats"]
    rc, out, err = cli(
        "show", built["images"], "floats", "-f", "r32f", "-W", 12, "-H", 10, "--png", tmp_path / "f.png"
    )
    assert rc == 0, err
    assert "range [-1, 3]" in out  # min/max of the finite values
    got = png.read(tmp_path / "f.png")
    assert got.shape == (10, 12, 3)
    g = expected_map(f, -1.0, 3.0)
    exp = np.stack([g, g, g], axis=2)  # gray, as the help says
    exp[2, 3] = (255, 0, 255)  # NaN: magenta
    np.testing.assert_array_equal(got, exp)
    assert tuple(got[4, 5]) == (255, 255, 255)  # +inf clips to 255
    rc, out, err = cli(
        "show",
        built["images"],
        "floats",
        "-f",
        "rg32f",
        "-W",
        6,
        "-H",
        10,
        "--range",
        "0,2",
        "--png",
        tmp_path / "g.png",
    )
    got = png.read(tmp_path / "g.png")
    pairs = f.reshape(10, 6, 2)
    ok = ~np.isnan(pairs).any(axis=2)
    assert not got[:, :, 2][ok].any()
    assert ok.sum() == 59 and tuple(got[~ok][0]) == (255, 0, 255)
    np.testing.assert_array_equal(got[:, :, :2][ok], expected_map(pairs, 0, 2)[ok])


def test_r32ui(cli, built, tmp_path):
    u = built["uints"]
    rc, out, err = cli(
        "show",
        built["images"],
        "uints",
        "-f",
        "r32ui",
        "-W",
        7,
        "--range",
        "0,41000",
        "--png",
        tmp_path / "u.png",
    )
    assert rc == 0
    got = png.read(tmp_path / "u.png")
    assert got.shape == (6, 7, 1)
    np.testing.assert_array_equal(got[:, :, 0], expected_map(u, 0, 41000))


def test_before_after_vadd(cli, built, tmp_path):
    n = built["vadd_n"]
    rc, out, err = cli(
        "show",
        built["vadd"],
        "c",
        "-f",
        "r32f",
        "-W",
        32,
        "--dispatch",
        0,
        "--before-after",
        "--range=-1024,512",
        "--png",
        tmp_path / "ba.png",
    )
    assert rc == 0, err
    assert "dispatch 0: landed" in out
    changed = int(np.count_nonzero(built["vadd_c"]))
    assert f"{changed} of {n} pixels changed" in out
    got = png.read(tmp_path / "ba.png")
    h = n // 32
    assert got.shape == (h, 2 * 32 + 2, 3)
    before = expected_map(np.zeros((h, 32)), -1024, 512)
    after = expected_map(built["vadd_c"].reshape(h, 32), -1024, 512)
    np.testing.assert_array_equal(got[:, :32], np.stack([before] * 3, axis=2))
    np.testing.assert_array_equal(got[:, 32:34], np.full((h, 2, 3), 128, np.uint8))
    np.testing.assert_array_equal(got[:, 34:], np.stack([after] * 3, axis=2))
    # --scale 3 and a negative --range without '=': the same image, each pixel a 3x3 square
    rc, out, err = cli(
        "show",
        built["vadd"],
        "c",
        "-f",
        "r32f",
        "-W",
        32,
        "--dispatch",
        0,
        "--before-after",
        "--range",
        "-1024,512",
        "--scale",
        3,
        "--png",
        tmp_path / "ba3.png",
    )
    assert rc == 0, err
    big = png.read(tmp_path / "ba3.png")
    assert big.shape == (3 * h, 3 * (2 * 32 + 2), 3)
    np.testing.assert_array_equal(big, got.repeat(3, axis=0).repeat(3, axis=1))


def test_alpha(cli, built, tmp_path):
    """A zeroed rgba8 buffer (alpha 0) is seen: black by default, the checkerboard with
    --alpha checker; stored alpha only with --alpha keep."""
    import wavelift

    cap = wavelift.Capture(target="gfx1030")
    px = np.zeros((16, 16, 4), np.uint8)
    px[8:, :, :] = (200, 100, 50, 255)  # lower half opaque colour, upper half all zero
    px[:8, 8:, :] = (200, 100, 50, 0)  # colour with alpha 0 on the upper right
    cap.alloc(px.nbytes, data=px.reshape(-1), name="rgba")
    cap.save(tmp_path / "z.wlcap")

    def show(*args):
        rc, out, err = cli(
            "show", tmp_path / "z.wlcap", "rgba", "-f", "rgba8", "-W", 16, "--png", tmp_path / "z.png", *args
        )
        assert rc == 0, err
        return png.read(tmp_path / "z.png")

    got = show()
    np.testing.assert_array_equal(got, px[:, :, :3])
    got = show("--alpha", "checker")
    assert got.shape == (16, 16, 3)
    board = (np.indices((16, 16)) // 8).sum(axis=0) % 2
    board = np.where(board == 0, 153, 102).astype(np.uint8)
    np.testing.assert_array_equal(got[:8], np.stack([board[:8]] * 3, axis=2))
    np.testing.assert_array_equal(got[8:], px[8:, :, :3])
    np.testing.assert_array_equal(show("--alpha", "keep"), px)


def test_scale_limits(cli, built, tmp_path):
    for scale in ("0", "65"):
        rc, out, err = cli(
            "show",
            built["images"],
            "img",
            "-f",
            "r8",
            "-W",
            16,
            "--scale",
            scale,
            "--png",
            tmp_path / "s.png",
        )
        assert rc == 2 and "--scale" in err
    import wavelift

    cap = wavelift.Capture(target="gfx1030")
    cap.alloc(1 << 16, name="big")
    cap.save(tmp_path / "big.wlcap")
    rc, out, err = cli(
        "show",
        tmp_path / "big.wlcap",
        "big",
        "-f",
        "r8",
        "-W",
        256,
        "--scale",
        64,
        "--png",
        tmp_path / "s.png",
    )
    assert rc == 2 and "the PNG would have 268435456 pixels" in err
    assert not (tmp_path / "s.png").exists()


def test_png_roundtrip_and_filters():
    rng = np.random.default_rng(1)
    for shape in [(5, 7), (3, 4, 2), (6, 5, 3), (4, 9, 4), (1, 1, 1)]:
        a = rng.integers(0, 256, size=shape, dtype=np.uint8)
        b = png.decode(png.encode(a))
        np.testing.assert_array_equal(b.reshape(a.shape), a)
    # rows written with Sub, Average and Paeth filters by hand (the encoder only uses None/Up)
    a = rng.integers(0, 256, size=(3, 4, 3), dtype=np.int64)
    raw = bytearray()
    prev = np.zeros(12, np.int64)
    for y, ft in enumerate([1, 3, 4]):
        row = a[y].reshape(-1)
        left = np.concatenate([[0, 0, 0], row[:-3]])
        ul = np.concatenate([[0, 0, 0], prev[:-3]])
        if ft == 1:
            pred = left
        elif ft == 3:
            pred = (left + prev) // 2
        else:
            p = left + prev - ul
            pa, pb, pc = abs(p - left), abs(p - prev), abs(p - ul)
            pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, ul))
        raw += bytes([ft]) + bytes(((row - pred) % 256).astype(np.uint8))
        prev = row

    def chunk(k, d):
        return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))

    data = (
        png.SIGNATURE
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 4, 3, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(bytes(raw)))
        + chunk(b"IEND", b"")
    )
    np.testing.assert_array_equal(png.decode(data), a.astype(np.uint8))
    bad = bytearray(data)
    bad[20] ^= 1
    with pytest.raises(png.PNGError):
        png.decode(bytes(bad))
