"""`wavelift import-radv` (issue 26 item 2): the committed raw RADV captures convert to the
committed .wlcap files byte for byte (the format is deterministic: sorted JSON metadata, extents in
allocation order), and a damaged raw directory is refused by name, rc != 0, with no output file."""

import json
import os
import shlex
import shutil

import pytest
from clipaths import CAPTURES, ROOT

RADV = ROOT / "tests" / "fixtures" / "radv"
NAMES = sorted(p.parent.name for p in RADV.glob("*/raw"))


def import_args(name: str) -> list:
    """The `wavelift import-radv` arguments that made the committed capture: the last line of the
    fixture's command.txt (tools/radv_capture_raw/record.sh writes it; paths relative to the
    fixture's directory), without `-o OUT`."""
    line = (RADV / name / "command.txt").read_text().strip().splitlines()[-1]
    argv = shlex.split(line)
    assert argv[:2] == ["wavelift", "import-radv"], line
    i = argv.index("-o")
    assert argv[i + 1] == f"../../captures/radv-{name}.wlcap"
    return argv[2:i] + argv[i + 2 :]


def test_every_fixture_has_a_capture():
    assert len(NAMES) >= 14
    for n in NAMES:
        assert (CAPTURES / f"radv-{n}.wlcap").exists(), n


@pytest.mark.parametrize("name", NAMES)
def test_import_reproduces_committed_capture(cli, tmp_path, monkeypatch, name):
    """The command in command.txt, run where it says, gives the committed capture byte for byte."""
    out = tmp_path / f"radv-{name}.wlcap"
    monkeypatch.chdir(RADV / name)
    rc, stdout, err = cli("import-radv", *import_args(name), "-o", out)
    assert rc == 0, err
    assert stdout.startswith(f"{out}: ")
    assert out.read_bytes() == (CAPTURES / f"radv-{name}.wlcap").read_bytes()


def test_installed_command_and_submit_dir(wavelift_cmd, tmp_path):
    """As a user runs it, from a submitN/ directory: the name comes from the directory above raw/."""
    name = "push_consts_ubo-w32"
    out = tmp_path / "p.wlcap"
    p = wavelift_cmd("import-radv", RADV / name / "raw" / "submit0", "-o", out)
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == (CAPTURES / f"radv-{name}.wlcap").read_bytes()
    p = wavelift_cmd("info", out)
    assert p.returncode == 0 and "note      name: push_consts_ubo-w32" in p.stdout
    assert "converted_by: wavelift import-radv" in p.stdout


@pytest.fixture
def raw(tmp_path):
    """A copy of a raw capture to damage (scratch_array-w32: trimmed, with stored.json)."""
    d = tmp_path / "x" / "raw"
    shutil.copytree(RADV / "scratch_array-w32" / "raw", d)
    return d


def refused(cli, raw_dir, tmp_path, *words, args=()):
    out = tmp_path / "out.wlcap"
    rc, stdout, err = cli("import-radv", raw_dir, "-o", out, *args)
    assert rc == 2, (rc, stdout, err)
    err = err.strip()
    assert err.startswith("wavelift: ") and "\n" not in err and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    assert not out.exists() and not list(tmp_path.glob(".out.wlcap*"))
    return err


def _bo_files(raw):
    return sorted((raw / "submit0").glob("bo*.bin"), key=lambda p: p.stat().st_size)


def test_truncated_bo_file(cli, raw, tmp_path):
    f = _bo_files(raw)[-1]
    f.write_bytes(f.read_bytes()[:-100])
    refused(cli, raw, tmp_path, f.name, "stored.json says", "truncated")


def test_altered_bo_file(cli, raw, tmp_path):
    f = _bo_files(raw)[-1]
    data = bytearray(f.read_bytes())
    data[0] ^= 1
    f.write_bytes(bytes(data))
    refused(cli, raw, tmp_path, f.name, "sha256")


def test_truncated_bo_without_stored_json(cli, tmp_path):
    """radv_capture's own output (no stored.json) must hold every BO in full."""
    d = tmp_path / "untrimmed"
    (d / "submit0").mkdir(parents=True)
    src = RADV / "push_consts_ubo-w32" / "raw" / "submit0"
    meta = json.loads((src / "capture.json").read_text())
    bo = next(b for b in meta["bos"] if b.get("ib"))
    meta["bos"] = [bo]
    (d / "submit0" / "capture.json").write_text(json.dumps(meta))
    (d / "submit0" / bo["file"]).write_bytes((src / bo["file"]).read_bytes()[:64])
    refused(cli, d, tmp_path, bo["file"], "truncated")


@pytest.mark.parametrize(
    "text",
    [
        '{"format": "radv-capture 1", "bos": [',
        "",
        "[1, 2]",
        '{"format": "radv-capture 1", "bos": [{"id": 1}], "submits": []}',
        '{"format": "other", "bos": [], "submits": []}',
        '{"format": "radv-capture 1", "bos": 3, "submits": []}',
        '{"format": "radv-capture 1", "bos": [], "submits": [{"ibs": [{"va": "0x1000", "size_dw": NaN}]}]}',
    ],
)
def test_bad_json(cli, raw, tmp_path, text):
    (raw / "submit0" / "capture.json").write_text(text)
    refused(cli, raw, tmp_path, "capture.json")


def test_missing_ib(cli, raw, tmp_path):
    """The IB's BO file deleted: its bytes cannot be rebuilt."""
    meta = json.loads((raw / "submit0" / "capture.json").read_text())
    ib = next(b for b in meta["bos"] if b.get("ib"))
    (raw / "submit0" / ib["file"]).unlink()
    refused(cli, raw, tmp_path, ib["file"], "missing")


def test_ib_outside_every_bo(cli, raw, tmp_path):
    cj = raw / "submit0" / "capture.json"
    meta = json.loads(cj.read_text())
    meta["bos"] = [b for b in meta["bos"] if not b.get("ib")]
    cj.write_text(json.dumps(meta))
    refused(cli, raw, tmp_path, "not inside one BO", "missing IB")


@pytest.mark.parametrize(
    "field,value,words",
    [
        ("file", "../../../etc/passwd", ["not a plain file name"]),
        ("va", "0x7ffffffff000", ["leaves the 48-bit address space"]),
        ("size", -1, ["size -1"]),
        ("size", 1 << 40, ["size"]),
        ("va", 12, ["`va`"]),
    ],
)
def test_bad_bo_fields(cli, raw, tmp_path, field, value, words):
    cj = raw / "submit0" / "capture.json"
    meta = json.loads(cj.read_text())
    meta["bos"][0][field] = value
    cj.write_text(json.dumps(meta))
    refused(cli, raw, tmp_path, "bos[0]", *words)


def test_fifo_is_not_read(cli, raw, tmp_path):
    """A FIFO where a BO file should be: refused at once, not a hang."""
    f = _bo_files(raw)[0]
    f.unlink()
    os.mkfifo(f)
    refused(cli, raw, tmp_path, f.name, "not a regular file")


def test_not_a_raw_directory(cli, tmp_path):
    refused(cli, tmp_path, tmp_path, "neither capture.json nor submit0/")
    refused(cli, tmp_path / "nope", tmp_path, "not a directory")


def test_output_never_overwrites_an_input(cli, raw, tmp_path):
    cj = raw / "submit0" / "capture.json"
    before = cj.read_bytes()
    rc, _, err = cli("import-radv", raw, "-o", cj)
    assert rc == 2 and "does not overwrite" in err
    assert cj.read_bytes() == before


def test_expect_errors(cli, raw, tmp_path):
    refused(cli, raw, tmp_path, "no buffer set=7 binding=0", args=["--expect", f"7:0:{raw / 'buffers.txt'}"])
    refused(
        cli, raw, tmp_path, "bytes, buffer set=0 binding=0", args=["--expect", f"0:0:{raw / 'buffers.txt'}"]
    )
    refused(cli, raw, tmp_path, "SET:BINDING:FILE", args=["--expect", "zero"])


def test_mutated_capture_json_never_crashes(cli, raw, tmp_path):
    """Seeded mutations of capture.json's fields (wrong types, bad addresses, paths): each is
    converted or refused as a user error (rc 2, no output), never an internal error (rc 3)."""
    import random

    cj = raw / "submit0" / "capture.json"
    base = json.loads(cj.read_text())
    values = [
        None,
        True,
        -1,
        0,
        2**70,
        1.5,
        "",
        "0x",
        "0xffffffffffffffff",
        "0x0001000000000000",
        "0xffff800000100000",
        [],
        {},
        "../x",
        "a/b",
        "x" * 2000,
        4,
        256,
    ]
    rng = random.Random(26)
    out = tmp_path / "m.wlcap"
    for _ in range(60):
        meta = json.loads(json.dumps(base))
        r = rng.random()
        if r < 0.5:
            bo = rng.choice(meta["bos"])
            bo[rng.choice(sorted(bo) + ["extra"])] = rng.choice(values)
        elif r < 0.8:
            ib = rng.choice(meta["submits"][0]["ibs"])
            ib[rng.choice(sorted(ib))] = rng.choice(values)
        else:
            meta[rng.choice(["bos", "submits", "format"])] = rng.choice(values)
        cj.write_text(json.dumps(meta))
        rc, _, err = cli("import-radv", raw, "-o", out)
        assert rc in (0, 2), err
        assert out.exists() == (rc == 0), err
        if out.exists():
            out.unlink()


def test_gb_addr_config_recorded(cli, raw, tmp_path):
    """radv_capture records RADV's rad_info.gb_addr_config in capture.json (0 on the null
    device); the capture gets it (the _X/_T image modes depend on it), a bad value is refused;
    raw captures made before it was recorded give captures without it (test above)."""
    from wavelift import Capture

    cj = raw / "submit0" / "capture.json"
    meta = json.loads(cj.read_text())
    assert "gb_addr_config" not in meta
    meta["gb_addr_config"] = 0
    cj.write_text(json.dumps(meta))
    out = tmp_path / "gb.wlcap"
    rc, _, err = cli("import-radv", raw, "-o", out)
    assert rc == 0, err
    assert Capture.load(out).gb_addr_config == 0
    for bad, words in ((1 << 32, ["not a 32-bit register value"]), ("0", ["`gb_addr_config`"])):
        meta["gb_addr_config"] = bad
        cj.write_text(json.dumps(meta))
        refused(cli, raw, tmp_path, *words)
