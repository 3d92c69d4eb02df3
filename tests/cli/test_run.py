"""`wavelift run`: the table, the exit status, --json against its schema, --out, errors."""

import json
import pathlib
import re
import shutil

import numpy as np
import pytest
from clipaths import CAPTURES, EXAMPLE, sha

import wavelift
from wavelift.run import report


def rows(out: str) -> dict:
    """Table rows of `wavelift run` output, by dispatch index: the cells split on 2+ spaces."""
    lines = out.splitlines()
    h = next(i for i, l in enumerate(lines) if l.startswith("#  program"))
    got = {}
    for l in lines[h + 1 :]:
        if not l.strip():
            break
        cells = re.split(r"\s{2,}", l.strip())
        got[int(cells[0])] = cells
    return got


def check_report(path, n):
    doc = json.loads(pathlib.Path(path).read_text())
    assert report.validate(doc) == []
    try:
        import jsonschema
    except ImportError:
        pass
    else:
        jsonschema.Draft202012Validator.check_schema(report.SCHEMA)
        jsonschema.validate(doc, report.SCHEMA)
    assert doc["schema"] == "wavelift-report" and doc["version"] == 1
    assert len(doc["dispatches"]) == n
    return doc


def test_example_lands_and_matches(cli, tmp_path, built):
    rc, out, err = cli("run", EXAMPLE, "--json", tmp_path / "r.json")
    assert rc == 0, out + err
    r = rows(out)
    assert list(r) == [0]
    cells = r[0]
    cfg = wavelift.replay(EXAMPLE, execute=lambda m, c, i: wavelift.DispatchResult(i, c))[0].config
    assert cells[1] == f"0x{cfg.program_address:016x}"
    assert cells[2] == "4x1x1 x 256x1x1"
    assert cells[3] == "32"
    assert cells[4] == "landed"
    assert cells[5] == "32"  # 4 groups x 256 lanes / wave32
    assert int(cells[6]) > 0
    assert cells[7] == "4096"  # c: 1024 floats
    assert cells[8] == "0"
    assert "expected results: all match" in out
    doc = check_report(tmp_path / "r.json", 1)
    d = doc["dispatches"][0]
    assert d["landed"] and d["refusal"] is None
    assert d["config"]["program_address"] == cells[1]
    assert d["config"]["wave_size"] == 32 and d["config"]["groups"] == [4, 1, 1]
    assert d["stats"]["bytes_written"] == 4096
    cap = wavelift.Capture.load(EXAMPLE)
    c = next(a for a in cap.memory if a.name == "c")
    assert d["write_spans"] == [{"address": f"0x{c.base:016x}", "size": 4096}]
    assert {w["name"] for w in d["windows"]} >= {"a", "b", "c"}
    assert doc["summary"] == {
        **doc["summary"],
        "dispatches": 1,
        "landed": 1,
        "refused": 0,
        "expected": {"ok": True, "problems": []},
    }


def test_out_saves_memory_after_replay(cli, tmp_path, built):
    src = tmp_path / "in.wlcap"
    shutil.copy(built["vadd"], src)
    before = sha(src)
    rc, out, err = cli("run", src, "--out", tmp_path / "after.wlcap")
    assert rc == 0, out + err
    assert sha(src) == before  # the input is never written
    cap = wavelift.Capture.load(tmp_path / "after.wlcap")
    c = next(a for a in cap.memory if a.name == "c")
    np.testing.assert_array_equal(np.frombuffer(cap.read(c.base, c.size), "<f4"), built["vadd_c"])
    orig = wavelift.Capture.load(src)
    oc = next(a for a in orig.memory if a.name == "c")
    assert not orig.read(oc.base, oc.size).strip(b"\0")  # c was zero before the replay


def test_refused_dispatch_exit_1(cli, tmp_path, built):
    rc, out, err = cli("run", built["two"], "--json", tmp_path / "r.json")
    assert rc == 1
    r = rows(out)
    assert list(r) == [0, 1]
    assert r[0][4] == "landed"
    assert r[1][1:5] == ["-", "-", "-", "refused: dispatch.unsupported_mode"]
    assert re.search(r"^dispatch 1 refused: dispatch.unsupported_mode: .*COMPUTE_SHADER_EN", out, re.M)
    doc = check_report(tmp_path / "r.json", 2)
    assert doc["summary"]["refused"] == 1
    assert doc["summary"]["refusals"] == {"dispatch.unsupported_mode": 1}
    assert doc["dispatches"][1]["config"] is None


def test_escape_is_reported(cli, tmp_path, built):
    rc, out, err = cli("run", built["escape"], "--json", tmp_path / "r.json")
    assert rc == 1
    assert rows(out)[0][4] == "refused: escape"
    doc = check_report(tmp_path / "r.json", 1)
    d = doc["dispatches"][0]
    assert d["stats"]["escapes"] == 64 and d["write_spans"] == []
    assert d["escapes"][0]["address"] == "0x0000700000000000"
    assert d["escapes"][0]["kind"] == "load"


# radv-int64_div's captures (~8,500 instructions, run twice here: the CLI's replay and the
# library's) take 7-15 s each on a 2-core host: by default its w32 capture (test_int64_shaders'
# default build too), w64 and navi10 under -m slow; the int64_misc and int64_atomic captures hold
# those families and wave sizes by default, and the CLI's rows are the same code for every shader.
CAPTURES_SLOW = ("radv-int64_div-w64", "radv-int64_div-navi10-w64")


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in CAPTURES_SLOW else [])
        for p in sorted(CAPTURES.glob("*.wlcap"))
    ],
)
def test_radv_captures(cli, tmp_path, path):
    rc, out, err = cli("run", path, "--json", tmp_path / "r.json")
    expect = wavelift.replay(path)  # the library's own answer, for comparison
    r = rows(out)
    assert list(r) == list(range(len(expect)))
    wave = 64 if path.stem.endswith("w64") else 32
    for i, res in enumerate(expect):
        assert r[i][1] == f"0x{res.config.program_address:016x}"  # RADV's VA differs by family
        assert r[i][3] == str(wave)
        assert r[i][4] == ("landed" if res.landed else f"refused: {res.refusal.code}")
    assert rc == (0 if all(x.landed for x in expect) else 1)
    doc = check_report(tmp_path / "r.json", len(expect))
    assert [d["landed"] for d in doc["dispatches"]] == [x.landed for x in expect]


def test_progress(cli, built):
    rc, out, err = cli("run", built["vadd"], "--progress")
    assert rc == 0
    assert re.search(r"^wavelift: dispatch 0 \(1 of 1\) landed in \d+\.\d+s$", err, re.M)
    rc, out, err = cli("run", built["vadd"])  # stderr is not a terminal: quiet
    assert err == ""


def test_report_api_roundtrip(built):
    results = wavelift.replay(built["two"])
    doc = report.build_report(results, backend="numpy", mode="wave")
    assert report.validate(json.loads(json.dumps(doc))) == []
    bad = json.loads(json.dumps(doc))
    bad["dispatches"][0]["landed"] = False
    assert report.validate(bad)  # cross-field rule
    bad = json.loads(json.dumps(doc))
    bad["dispatches"][0]["windows"][0]["address"] = 12
    assert report.validate(bad)


def test_budget_option(cli, tmp_path):
    """--budget N: each wave may run N instructions; vadd's waves need more than 4, so the
    dispatch is refused by name with the budget in the message, and a large one lands."""
    rc, out, err = cli("run", EXAMPLE, "--budget", "4", "--json", tmp_path / "r.json")
    assert rc == 1, out + err
    d = json.loads((tmp_path / "r.json").read_text())["dispatches"][0]
    assert d["refusal"]["code"] == "dispatch.budget_exceeded" and "4" in d["refusal"]["message"]
    rc, out, err = cli("run", EXAMPLE, "--budget", "100000")
    assert rc == 0, out + err
    rc, out, err = cli("run", EXAMPLE, "--budget", "0")
    assert rc == 2 and "--budget" in err


def test_device_budget():
    """Device(budget=) bounds every launch's waves the same way; replay(budget=) a capture's."""
    from testpaths import FIXTURES

    from wavelift.driver.device import Device

    for budget, landed in ((4, False), (None, True)):
        dev = Device("gfx1030", budget=budget)
        k = dev.load_code_object(FIXTURES / "gfx1030" / "basic-O2-w32-flat.hsaco").kernel("vadd")
        a, b = dev.upload(np.arange(64, dtype=np.float32)), dev.upload(np.ones(64, np.float32))
        c = dev.alloc(256)
        r = k.launch(groups=(1, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(64)])
        assert r.landed == landed, r.refusal
        if not landed:
            assert r.refusal.code == "dispatch.budget_exceeded"
        else:
            assert (dev.download(c, np.float32) == np.arange(64) + 1).all()
    r = wavelift.replay(wavelift.Capture.load(EXAMPLE), budget=4)[0]
    assert r.refusal is not None and r.refusal.code == "dispatch.budget_exceeded"
