"""Guest text never drives the terminal: allocation names, capture notes, expected-result names
and symbol names are printed escaped by every text command (JSON stays JSON); files that are not
captures (FIFOs, devices) are refused without waiting."""

import json
import os
import subprocess
import sys

import pytest
from clipaths import ROOT, VADD_HSACO

import wavelift

ESC = "\x1b]0;owned\x07\x1b[2J"  # set the window title, clear the screen
NASTY = {"a": ESC + "a", "b": "b\nforged line", "c": "\u202ec", "kernargs:vadd#0": "k\x9b31m"}


def printable(text: str) -> bool:
    return all(c.isprintable() or c == "\n" for c in text)


@pytest.fixture(scope="module")
def nasty(built, tmp_path_factory):
    """vadd with guest text full of control sequences everywhere a capture can carry text."""
    cap = wavelift.Capture.load(built["vadd"])
    for a in cap.memory:
        a.name = NASTY.get(a.name, a.name)
    cap.notes = {ESC: "note\x1b[31m red", "plain": ["x\ty", {"deep": "\x07"}]}
    cap.expected["memory"][0]["name"] = ESC
    cap.expected["memory"][0]["sha256"] = "0" * 64  # differs: `run` names the region
    cap.expected["dispatches"] = ["\x1b[5mblink"]
    p = tmp_path_factory.mktemp("nasty") / "nasty.wlcap"
    cap.save(p)
    return p


@pytest.mark.parametrize(
    "argv",
    [["info"], ["run"], ["trace", "--dispatch", "0"], ["show", "\x1b", "--format", "r8", "--width", "4"]],
)
def test_guest_text_is_escaped(cli, nasty, tmp_path, argv):
    extra = ["--png", tmp_path / "x.png"] if argv[0] == "show" else []
    rc, out, err = cli(argv[0], nasty, *argv[1:], *extra)
    assert rc in (0, 1, 2) and "internal error" not in err, err
    assert printable(out) and printable(err), repr(out + err)
    text = out + err
    if argv[0] == "info":
        assert "\\x1b]0;owned\\x07\\x1b[2Ja" in text and "b\\nforged line" in text
        assert "\\u202ec" in text and "k\\x9b31m" in text and "note\\x1b[31m red" in text
    if argv[0] == "run":
        assert "\\x1b]0;owned" in text and "\\x1b[5mblink" in text  # expected results
    if argv[0] == "trace":
        assert "\\x1b]0;owned\\x07\\x1b[2Ja" in text  # windows: allocation names


def test_json_report_stays_json(cli, nasty, tmp_path):
    rc, out, err = cli("run", nasty, "--json", tmp_path / "r.json")
    text = (tmp_path / "r.json").read_text()
    assert text.isascii() and printable(text)
    names = {w["name"] for d in json.loads(text)["dispatches"] for w in d["windows"]}
    assert NASTY["a"] in names  # the exact name, as JSON


def test_disasm_symbol_names_escaped(cli, tmp_path):
    data = VADD_HSACO.read_bytes()
    assert b"\x00vadd\x00" in data
    p = tmp_path / "evil.hsaco"  # the symbol's name, everywhere
    p.write_bytes(data.replace(b"\x00vadd\x00", b"\x00\x1b[2J\x00"))
    rc, out, err = cli("disasm", p)
    assert rc == 0, err
    assert printable(out.replace("\t", " ")) and "<\\x1b[2J>:" in out


def test_error_messages_escaped(cli, tmp_path):
    p = tmp_path / "\x1b[2Jbad.wlcap"
    p.write_bytes(b"not a capture \x1b[2J" * 8)
    rc, out, err = cli("info", p)
    assert rc == 2 and printable(err) and "\\x1b[2Jbad.wlcap" in err


@pytest.mark.parametrize("cmd", ["info", "run"])
def test_fifo_is_refused_not_waited_on(tmp_path, cmd):
    fifo = tmp_path / "pipe.wlcap"
    os.mkfifo(fifo)
    r = subprocess.run(
        [sys.executable, "-m", "wavelift.cli", cmd, str(fifo)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 2 and "FIFO" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_metadata_of_the_wrong_type_is_a_user_error(cli, built, tmp_path):
    """`wavelift info` used to report "internal error: AttributeError" for notes that are not
    an object (they were used unchecked)."""
    cap = wavelift.Capture.load(built["vadd"])
    cap.notes = ["not", "an", "object"]  # (save writes what it is given)
    p = tmp_path / "notes.wlcap"
    cap.save(p)
    rc, o, err = cli("info", p)
    assert rc == 2 and "notes is not an object" in err and "internal error" not in err
