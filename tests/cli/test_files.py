"""Output files are safe (issue 26 item 1): no command overwrites its input (however the path is
spelled), outputs are written all or nothing, and with the mode a new file gets or the replaced
file had."""

import os
import shutil
import stat

import pytest
from clipaths import sha

import wavelift
from wavelift.outfile import atomic_output


@pytest.fixture
def capture(built, tmp_path):
    p = tmp_path / "vadd.wlcap"
    shutil.copyfile(built["vadd"], p)
    os.chmod(p, 0o644)
    return p


def unchanged(path, digest, mode=0o644):
    assert sha(path) == digest
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_run_out_is_its_input(wavelift_cmd, capture):
    """The issue's case as a user types it: `wavelift run X.wlcap --out X.wlcap`."""
    digest = sha(capture)
    p = wavelift_cmd("run", capture, "--out", capture)
    assert p.returncode == 2, p.stdout + p.stderr
    err = p.stderr.strip()
    assert err.startswith("wavelift: ") and "\n" not in err and "Traceback" not in err
    assert f"--out {capture} is the capture ({capture})" in err and "does not overwrite" in err
    unchanged(capture, digest)


@pytest.mark.parametrize("spell", ["dot", "link", "hardlink"])
@pytest.mark.parametrize("opt", ["--out", "--json"])
def test_run_never_overwrites_its_input(cli, capture, tmp_path, spell, opt):
    """However the input's path is spelled (compared as files, not as text)."""
    digest = sha(capture)
    if spell == "dot":
        out = tmp_path / "." / ".." / tmp_path.name / "vadd.wlcap"
    elif spell == "link":
        out = tmp_path / "alias.wlcap"
        out.symlink_to(capture)
    else:
        out = tmp_path / "hard.wlcap"
        os.link(capture, out)
    rc, _, err = cli("run", capture, opt, out)
    assert rc == 2 and f"{opt} {out} is the capture ({capture})" in err
    unchanged(capture, digest)


def test_run_out_and_json_not_the_same_file(cli, capture, tmp_path):
    rc, _, err = cli("run", capture, "--out", tmp_path / "o", "--json", tmp_path / "o")
    assert rc == 2 and "--json" in err and "is --out" in err
    assert not (tmp_path / "o").exists()


def test_show_never_overwrites_its_input(cli, capture):
    digest = sha(capture)
    rc, _, err = cli("show", capture, "c", "-f", "r8", "-W", 16, "--png", capture)
    assert rc == 2 and "--png" in err and "does not overwrite" in err
    unchanged(capture, digest)


def test_output_modes(wavelift_cmd, capture, tmp_path):
    """New outputs get 0666 less the umask (not a temporary file's 0600); a replaced output
    keeps its mode; no temporary file is left behind."""
    out, rep, img = tmp_path / "after.wlcap", tmp_path / "r.json", tmp_path / "c.png"
    old = os.umask(0o022)
    try:
        p = wavelift_cmd("run", capture, "--out", out, "--json", rep)
        assert p.returncode == 0, p.stderr
        p = wavelift_cmd("show", capture, "c", "-f", "r32f", "-W", 32, "--png", img)
        assert p.returncode == 0, p.stderr
        for f in (out, rep, img):
            assert stat.S_IMODE(os.stat(f).st_mode) == 0o644, f
        for f in (out, rep, img):
            os.chmod(f, 0o640)
        assert wavelift_cmd("run", capture, "--out", out, "--json", rep).returncode == 0
        assert wavelift_cmd("show", capture, "c", "-f", "r32f", "-W", 32, "--png", img).returncode == 0
        for f in (out, rep, img):
            assert stat.S_IMODE(os.stat(f).st_mode) == 0o640, f
    finally:
        os.umask(old)
    assert wavelift.Capture.load(out).notes["after_replay_of"] == "vadd.wlcap"
    assert sorted(x.name for x in tmp_path.iterdir()) == ["after.wlcap", "c.png", "r.json", "vadd.wlcap"]


def test_output_is_a_directory(cli, capture, tmp_path):
    (tmp_path / "d").mkdir()
    rc, _, err = cli("run", capture, "--out", tmp_path / "d")
    assert rc == 2 and "is a directory" in err
    rc, _, err = cli("run", capture, "--json", tmp_path / "nodir" / "r.json")
    assert rc == 2 and "does not exist" in err


def test_atomic_output_all_or_nothing(tmp_path):
    """A write that fails half way leaves the old file as it was and no temporary file; a
    symbolic link is written through, not replaced; a FIFO is never renamed over."""
    f = tmp_path / "f"
    f.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_output(f) as out:
            out.write(b"new, half")
            raise RuntimeError("disk full")
    assert f.read_bytes() == b"old" and os.listdir(tmp_path) == ["f"]
    link = tmp_path / "link"
    link.symlink_to(f)
    with atomic_output(link) as out:
        out.write(b"through")
    assert link.is_symlink() and f.read_bytes() == b"through"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file"):
        with atomic_output(tmp_path / "fifo") as out:
            out.write(b"x")
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)


def test_capture_save_mode(tmp_path, built):
    """Capture.save from Python: a new file is 0666 less the umask; saving over a file keeps
    that file's mode."""
    cap = wavelift.Capture.load(built["vadd"])
    old = os.umask(0o027)
    try:
        cap.save(tmp_path / "a.wlcap")
        assert stat.S_IMODE(os.stat(tmp_path / "a.wlcap").st_mode) == 0o640
        os.chmod(tmp_path / "a.wlcap", 0o604)
        cap.save(tmp_path / "a.wlcap")
        assert stat.S_IMODE(os.stat(tmp_path / "a.wlcap").st_mode) == 0o604
    finally:
        os.umask(old)
