"""Progress a person can follow on long work (issue 26 item 6): `wavelift run` and `wavelift
trace` say which dispatch of how many is running and the stage it is in (on a terminal, redrawn
in place; elsewhere only with --progress, a line per dispatch and one per module build), on
stderr only, never in --json output; the dispatch count comes from walking the streams without
running or changing anything."""

import hashlib
import io
import json
import os
import pty
import re
import subprocess

import pytest
from clipaths import CAPTURES, EXAMPLE, command_runner, record_only

import wavelift
from wavelift.commands.common import Progress, count_dispatches
from wavelift.run import execute as engine


def _digest(cap) -> str:
    h = hashlib.sha256()
    for a in cap.memory.allocations:
        h.update(a.base.to_bytes(8, "little") + a.data.tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("path", sorted(CAPTURES.glob("*.wlcap")) + [EXAMPLE], ids=lambda p: p.stem)
def test_count_dispatches_is_the_replay_count_and_changes_nothing(path):
    cap = wavelift.Capture.load(str(path))
    before = _digest(cap)
    n = count_dispatches(cap)
    assert _digest(cap) == before  # (WRITE_DATA / DMA_DATA / RELEASE_MEM went to copies)
    assert n == len(wavelift.replay(str(path), execute=record_only))


def test_count_dispatches_with_a_refused_stream(built):
    cap = wavelift.Capture.load(str(built["two"]))
    assert count_dispatches(cap) == 2 == len(wavelift.replay(str(built["two"]), execute=record_only))


def test_execute_tells_its_stages(built):
    cap = wavelift.Capture.load(str(built["vadd"]))
    seen = []

    def ex(memory, config, index):
        return engine.execute_dispatch(memory, config, index, cache=cache, progress=seen.append)

    cache: dict = {}
    r = wavelift.replay(cap, execute=ex)
    assert r[0].landed
    n = 1
    for g in r[0].config.num_groups:
        n *= g
    assert seen[seen.index("running") + 1] == f"running: {n} of {n} workgroups"  # (one batch)
    seen[:] = [s for s in seen if not s.startswith("running:")]
    assert seen == list(engine.STAGES)
    seen.clear()
    cap = wavelift.Capture.load(str(built["vadd"]))
    wavelift.replay(cap, execute=ex)  # module cache hit: no build
    seen[:] = [s for s in seen if not s.startswith("running:")]
    assert seen == [s for s in engine.STAGES if s != "building the module"]
    seen.clear()
    wavelift.replay(str(built["escape"]), execute=ex)  # refused after the run: nothing lands
    assert seen[-1].startswith("running") and "landing" not in seen


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_on_a_terminal_redraws_stages_with_i_of_n(built):
    out = _Terminal()
    pr = Progress(True, stream=out, total=2)
    cap = wavelift.Capture.load(str(built["two"]))
    from wavelift.commands.common import execute_fn

    wavelift.replay(cap, execute=pr.wrap(execute_fn("numpy", "wave", {}, None, pr)))
    pr.finish()
    text = out.getvalue()
    frames = text.split("\r\x1b[K")
    assert "\n" not in "".join(frames[:-2])  # redrawn in place: no line ends before the last result
    for stage in engine.STAGES:
        assert any(
            re.search(
                rf"dispatch 0 \(1 of 2\): program 0x[0-9a-f]{{16}} grid 1x1x1 x 64x1x1 wave32: {stage} …", f
            )
            for f in frames
        ), stage
    assert any(f.startswith("wavelift: dispatch 0 (1 of 2) landed in ") for f in frames)
    # (dispatch 1 is refused by dispatch setup, before anything runs: no progress of its own)
    assert text.endswith("\r\x1b[K")  # the status line cleared at the end


def test_progress_past_the_count_shows_no_total():
    out = io.StringIO()
    pr = Progress(True, stream=out, total=1)
    from wavelift.run.result import DispatchResult

    pr.done(0, DispatchResult(0, None, None, stats={"time_s": 0.25}))
    pr.done(1, DispatchResult(1, None, None, stats={"time_s": 0.25}))
    assert out.getvalue().splitlines() == [
        "wavelift: dispatch 0 (1 of 1) landed in 0.250s",
        "wavelift: dispatch 1 landed in 0.250s",
    ]


def test_run_progress_lines(cli, built, tmp_path):
    rc, out, err = cli("run", built["two"], "--progress", "--json", tmp_path / "r.json")
    assert rc == 1
    lines = err.splitlines()
    assert lines[0] == "wavelift: dispatch 0 (1 of 2): building the module"
    assert re.fullmatch(r"wavelift: dispatch 0 \(1 of 2\) landed in \d+\.\d+s", lines[-1]), err
    assert "wavelift:" not in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert len(doc["dispatches"]) == 2
    rc, out, err = cli("run", built["two"])  # stderr is not a terminal: quiet
    assert err == ""


def test_trace_progress_and_json(cli, built):
    rc, out, err = cli("trace", built["two"], "-d", "1", "--json", "--progress")
    assert rc == 1
    json.loads(out)  # stdout is the JSON document alone
    assert "wavelift: dispatch 0 (1 of 2) landed" in err
    rc, out, err = cli("trace", built["two"], "-d", "1", "--json")
    json.loads(out)
    assert err == ""


def _on_a_terminal(*argv):
    """The installed command with stderr on a pseudo-terminal -> (rc, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    try:
        p = command_runner(120)(*argv, capture_output=False, stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        got = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            got += chunk
    finally:
        os.close(master)
    return p.returncode, p.stdout, got.decode(errors="replace")


def test_run_on_a_terminal(built):
    rc, out, term = _on_a_terminal("run", built["two"])
    assert rc == 1
    assert "\r\x1b[K" in term
    assert re.search(
        r"dispatch 0 \(1 of 2\): program 0x[0-9a-f]{16} grid 1x1x1 x 64x1x1 wave32: running …", term
    )
    assert "dispatch 0 (1 of 2) landed in " in term and term.endswith("\r\x1b[K")
    assert "\x1b" not in out and "(1 of 2)" not in out  # the table on stdout has no progress
