"""`wavelift info`: what a capture holds, found without running anything and saving nothing."""

import re

from clipaths import CAPTURES, sha


def test_info_fullscreen_indirect(cli, monkeypatch):
    import importlib

    rp = importlib.import_module("wavelift.run.replay")

    def no_engine(*a, **k):
        raise AssertionError("info must not run the execution engine")

    monkeypatch.setattr(rp, "default_execute", no_engine)
    path = CAPTURES / "radv-fullscreen-indirect-w32.wlcap"
    before = sha(path)
    rc, out, err = cli("info", path)
    assert rc == 0, err
    assert sha(path) == before
    assert re.search(r"^target\s+gfx1030$", out, re.M)
    assert "allocations (11," in out and "streams (2):" in out
    assert re.search(r"^DISPATCH_DIRECT\s+1$", out, re.M)
    assert re.search(r"^DISPATCH_INDIRECT\s+1$", out, re.M)
    assert re.search(r"^SET_BASE\s+1$", out, re.M)
    assert "dispatches (2;" in out
    for i in (0, 1):
        assert re.search(rf"^{i}\s+0xffff800000118300\s+3x2x1 x 8x8x1\s+32\s+7\s", out, re.M)
    assert re.search(
        r"^dispatch 1 \(DISPATCH_INDIRECT at 0xffff800100013000 dword \d+\): "
        r"program in bo1\+0x18300$",
        out,
        re.M,
    )
    assert "s2=0x00141000" in out


def test_info_built(cli, built):
    rc, out, err = cli("info", built["two"])
    assert rc == 0
    assert re.search(r"^1\s+-\s+-\s+-\s+-\s+-\s+refused: dispatch.unsupported_mode", out, re.M)
    assert re.search(r"^0\s+0x[0-9a-f]{16}\s+1x1x1 x 64x1x1\s+32\s+8\s", out, re.M)
    assert "kernargs:vadd#0" in out


def test_info_scratch(cli):
    rc, out, err = cli("info", CAPTURES / "radv-scratch_array-w64.wlcap")
    assert rc == 0
    assert re.search(r"^0\s+0xffff800000118300\s+4x1x1 x 64x1x1\s+64\s+\d+\s+\d+ B/wave", out, re.M)
