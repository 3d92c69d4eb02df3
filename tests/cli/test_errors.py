"""Errors a user can act on: one line `wavelift: ...`, exit 2, no traceback (unless --debug)."""

import subprocess
import sys

import pytest
from clipaths import ROOT

import wavelift
from wavelift.commands.common import cuda_problem


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("wavelift: ")
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    "cmd", [["run"], ["info"], ["trace", "--dispatch", "0"], ["show", "x", "--format", "r8", "--width", "4"]]
)
def test_missing_file(cli, tmp_path, cmd):
    rc, out, err = cli(cmd[0], tmp_path / "nope.wlcap", *cmd[1:])
    assert rc == 2
    assert "no such file" in one_line(err)


def test_corrupt_capture(cli, tmp_path, built):
    bad = tmp_path / "cut.wlcap"
    bad.write_bytes(built["vadd"].read_bytes()[:-100])  # truncated
    rc, out, err = cli("run", bad)
    assert rc == 2 and "truncated" in one_line(err)
    data = bytearray(built["vadd"].read_bytes())
    data[200] ^= 0xFF  # payload byte
    bad.write_bytes(bytes(data))
    rc, out, err = cli("info", bad)
    assert rc == 2 and "checksum" in one_line(err)
    bad.write_bytes(b"hello, not a capture" * 10)
    rc, out, err = cli("run", bad)
    assert rc == 2 and "not a wavelift capture" in one_line(err)


def test_unknown_target(cli, tmp_path):
    cap = wavelift.Capture(target="gfx9999")
    cap.alloc(16, name="x")
    cap.save(tmp_path / "t.wlcap")
    rc, out, err = cli("run", tmp_path / "t.wlcap")
    assert rc == 2 and "gfx9999" in one_line(err)


@pytest.mark.skipif(cuda_problem() is None, reason="a CUDA GPU is available here")
def test_cuda_unavailable(cli, built):
    rc, out, err = cli("run", built["vadd"], "--backend", "cuda")
    line = one_line(err)
    assert rc == 2 and "cuda" in line and "--backend numpy" in line


def test_bad_arguments(cli, built, tmp_path):
    rc, out, err = cli("trace", built["vadd"], "--dispatch", "5")
    assert rc == 2 and "no dispatch 5" in one_line(err)
    rc, out, err = cli("show", built["images"], "nothere", "--format", "r8", "--width", "4")
    assert rc == 2 and "no allocation named 'nothere'" in one_line(err)
    rc, out, err = cli(
        "show", built["images"], "img", "--format", "rgba8", "--width", "16", "--height", "100"
    )
    assert rc == 2 and "need" in one_line(err)
    rc, out, err = cli("run", built["vadd"], "--json", tmp_path / "no" / "dir" / "r.json")
    assert rc == 2 and "does not exist" in one_line(err)


def test_debug_shows_the_traceback(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "wavelift.cli", "run", str(tmp_path / "x.wlcap"), "--debug"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode != 0 and "Traceback" in p.stderr and "UserError" in p.stderr
    p = subprocess.run(
        [sys.executable, "-m", "wavelift.cli", "run", str(tmp_path / "x.wlcap")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr


def test_engine_crash_is_an_internal_error(cli, built, monkeypatch):
    import importlib

    rp = importlib.import_module("wavelift.run.replay")

    def boom(backend="numpy", mode="wave", cache=None, **kw):
        def run(memory, config, index):
            raise IndexError("simulated engine bug")

        return run

    monkeypatch.setattr(rp, "default_execute", boom)
    rc, out, err = cli("run", built["vadd"])
    assert rc == 3
    line = one_line(err)
    assert "internal error" in line and "dispatch 0" in line and "--debug" in line
