"""`wavelift show --swizzle`: a tiled image rendered through wavelift/memory/layout.py (the layout
image load/store uses, checked against Mesa's addrlib in tests/memory/test_layout.py) equals the
image it was tiled from; wrong use is a user error."""

import numpy as np
import pytest

from wavelift import png
from wavelift.memory import layout as L


def _tiled_capture(tmp_path, mode_name, target="gfx1030", gb=0, pbx=0, w=150, h=70):
    import wavelift

    g11 = target.startswith("gfx11")
    mode = {n: m for m, n in L.sw_mode_names(g11).items()}[mode_name]
    chip = L.Chip.from_gb_addr_config(gb, target.startswith("gfx103"), gfx11=g11)
    s = L.Surface(mode, L.RSRC_2D, 2, w, h)
    size = L.surface_info(s, chip).slice_size
    img = np.random.default_rng(mode).integers(0, 256, (h, w, 4), dtype=np.uint8)
    raw = np.zeros(size, np.uint8)
    yy, xx = np.indices((h, w))
    offs = L.address(chip, s, xx, yy, 0, 0, pbx).astype(np.int64)
    raw[offs[:, :, None] + np.arange(4)] = img
    cap = wavelift.Capture(target=target)
    cap.alloc(size, data=raw.tobytes(), name="tiled", align=65536)
    path = tmp_path / f"{mode_name}.wlcap"
    cap.save(path)
    return path, img


@pytest.mark.parametrize("mode", ["64KB_S", "4KB_D", "256B_S"])
def test_show_tiled_equals_the_image(cli, tmp_path, mode):
    path, img = _tiled_capture(tmp_path, mode)
    rc, out, err = cli(
        "show",
        path,
        "tiled",
        "-f",
        "rgba8",
        "-W",
        150,
        "-H",
        70,
        "--swizzle",
        mode,
        "--alpha",
        "keep",
        "--png",
        tmp_path / "t.png",
    )
    assert rc == 0, err
    np.testing.assert_array_equal(png.read(tmp_path / "t.png"), img)


def test_show_xor_mode_with_config(cli, tmp_path):
    path, img = _tiled_capture(tmp_path, "64KB_R_X", gb=0x444, pbx=0x2B)
    argv = [
        "show",
        path,
        "tiled",
        "-f",
        "rgba8",
        "-W",
        150,
        "-H",
        70,
        "--swizzle",
        "64KB_R_X",
        "--alpha",
        "keep",
    ]
    rc, out, err = cli(*argv, "--png", tmp_path / "t.png")
    assert rc != 0 and "--gb-addr-config" in err  # an _X mode is never guessed
    rc, out, err = cli(
        *argv, "--gb-addr-config", "0x444", "--pipe-bank-xor", "0x2b", "--png", tmp_path / "t.png"
    )
    assert rc == 0, err
    np.testing.assert_array_equal(png.read(tmp_path / "t.png"), img)


def test_show_gfx11_layouts(cli, tmp_path):
    """A gfx1100 capture's image is read in GFX11's layouts (decision 0039): 4KB_D_X with
    Navi31's GB_ADDR_CONFIG and a 256KB_R_X one; GFX11 has no 2-D 64KB_S."""
    for mode, gb, pbx in (("4KB_D_X", 0x545, 0xB), ("256KB_R_X", 0x545, 0x1F3), ("64KB_D", 0, 0)):
        path, img = _tiled_capture(tmp_path, mode, target="gfx1100", gb=gb, pbx=pbx)
        argv = ["show", path, "tiled", "-f", "rgba8", "-W", 150, "-H", 70, "--swizzle", mode]
        argv += ["--alpha", "keep", "--gb-addr-config", hex(gb), "--pipe-bank-xor", hex(pbx)]
        rc, out, err = cli(*argv, "--png", tmp_path / "t.png")
        assert rc == 0, err
        np.testing.assert_array_equal(png.read(tmp_path / "t.png"), img)
    path, _ = _tiled_capture(tmp_path, "64KB_D", target="gfx1100")
    rc, out, err = cli("show", path, "tiled", "-f", "rgba8", "-W", 150, "-H", 70, "--swizzle", "64KB_S")
    assert rc != 0 and "not a layout" in err, err


@pytest.mark.parametrize(
    "extra,msg",
    [
        (["--swizzle", "64KB_Q"], "not a swizzle mode"),
        (["--swizzle", "64KB_Z", "-H", 70], "not a layout"),
        (["--swizzle", "64KB_S"], "--height"),
        (["--swizzle", "64KB_S", "-H", 70, "--stride", 600], "--stride"),
        (["--swizzle", "64KB_S", "-H", 700], "spans"),
    ],
)
def test_show_tiled_user_errors(cli, tmp_path, extra, msg):
    path, _ = _tiled_capture(tmp_path, "64KB_S")
    rc, out, err = cli("show", path, "tiled", "-f", "rgba8", "-W", 150, *extra, "--png", tmp_path / "t.png")
    assert rc != 0 and msg in err, (rc, err)
