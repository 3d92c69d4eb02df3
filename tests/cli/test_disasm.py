"""`wavelift disasm` on what is not a code object (issue 26 item 3, clear errors): a capture
disassembles each dispatch's program (its header was decoded as code), a directory is called a
directory, an empty file or a FIFO is an error (not rc 0, not a hang)."""
import os

import wavelift

from conftest import VADD_HSACO


def one_error(p) -> str:
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stdout == "" and "Traceback" not in p.stderr
    err = p.stderr.strip()
    assert err.startswith("wavelift: ") and "\n" not in err
    return err


def test_capture_lists_each_dispatch_program(wavelift_cmd, built):
    """The capture's dispatch 0 runs the code object's vadd: the same instructions (the code
    object's listing goes on past s_endpgm with padding)."""
    p = wavelift_cmd("disasm", built["two"])
    assert p.returncode == 0, p.stderr
    cap = wavelift.Capture.load(built["two"])
    lines = p.stdout.split("\n")
    heads = [i for i, x in enumerate(lines) if x.endswith(">:")]
    assert len(heads) == 1 and lines[heads[0]].endswith(" <dispatch 0>:")   # dispatch 1: refused
    addr = int(lines[heads[0]].split()[0], 16)
    assert cap.memory.find(addr).name == "code:basic.hsaco"
    got = [x for x in lines[heads[0] + 1:] if x]
    assert got[-1] == "\ts_endpgm" and len(got) > 10
    co = wavelift_cmd("disasm", VADD_HSACO).stdout.split("\n")
    start = co.index(next(x for x in co if x.endswith("<vadd>:")))
    assert co[start + 1:start + 1 + len(got)] == got
    assert "WLCAP" not in p.stdout and ".long" not in p.stdout


def test_capture_errors(wavelift_cmd, tmp_path, built):
    cap = wavelift.Capture(target="gfx1030")
    cap.alloc(16, name="x")
    cap.save(tmp_path / "empty.wlcap")
    assert "no dispatch" in one_error(wavelift_cmd("disasm", tmp_path / "empty.wlcap"))
    assert "leave out --target" in one_error(wavelift_cmd("disasm", built["two"], "--target",
                                                          "gfx1010"))
    bad = tmp_path / "cut.wlcap"
    bad.write_bytes(built["vadd"].read_bytes()[:-100])
    assert "truncated" in one_error(wavelift_cmd("disasm", bad))


def test_not_code(wavelift_cmd, tmp_path):
    assert one_error(wavelift_cmd("disasm", tmp_path)).endswith("is a directory, not a code "
                                                                "object, raw code or capture")
    assert "no such file" in one_error(wavelift_cmd("disasm", tmp_path / "nope"))
    (tmp_path / "empty").write_bytes(b"")
    assert "is empty" in one_error(wavelift_cmd("disasm", tmp_path / "empty"))
    os.mkfifo(tmp_path / "fifo")
    assert "a FIFO" in one_error(wavelift_cmd("disasm", tmp_path / "fifo", timeout=60))
