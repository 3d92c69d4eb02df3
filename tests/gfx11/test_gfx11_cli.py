"""gfx1100 where gfx1030 goes: a Device("gfx1100") launch saved as a capture replays (Python and
`wavelift run`), `wavelift disasm --target gfx1100` and `wavelift info` read it; a target
wavelift does not run (gfx90a) and an unknown one are refused by name."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import wavelift
from wavelift import cli
from wavelift.errors import UserError

ROOT = pathlib.Path(__file__).resolve().parents[2]
BASIC = ROOT / "tests" / "fixtures" / "gfx1100" / "basic-O2-w32.hsaco"


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    dev = wavelift.Device("gfx1100")
    co = dev.load_code_object(str(BASIC))
    n = 300
    a = dev.upload(np.arange(n, dtype=np.float32))
    b = dev.upload(np.full(n, 0.5, np.float32))
    c = dev.alloc(4 * n)
    r = co.kernel("vadd").launch(groups=(3,), block=(128,), args=[a, b, c, np.uint32(n)])
    assert r.landed, r.refusal
    np.testing.assert_array_equal(dev.download(c, np.float32)[:n], np.arange(n, dtype=np.float32) + 0.5)
    p = tmp_path_factory.mktemp("g11") / "vadd.wlcap"
    dev.save_capture(str(p))
    return p


def test_capture_replays(capture):
    (r,) = wavelift.replay(str(capture), backend="numpy", mode="lane")
    assert r.landed, r.refusal
    assert r.config.target == "gfx1100" and r.config.packed_local_ids


def test_cli_run_info_disasm(capture, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert cli.main(["run", str(capture), "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    assert rep["capture"]["target"] == "gfx1100"
    assert (rep["summary"]["landed"], rep["summary"]["refused"]) == (1, 0)
    assert cli.main(["info", str(capture)]) == 0
    assert "gfx1100" in capsys.readouterr().out
    assert cli.main(["disasm", str(BASIC), "--target", "gfx1100", "--kernel", "vadd"]) == 0
    text = capsys.readouterr().out
    assert "s_load_b32" in text and "global_store_b32" in text


def test_targets_refused_by_name():
    with pytest.raises(UserError, match="target 'gfx90a': unknown target"):
        wavelift.Device("gfx90a")  # a real GPU's target that wavelift neither decodes nor runs
    with pytest.raises(UserError, match="target 'gfx42': unknown target"):
        wavelift.Device("gfx42")
