"""tools/fuzz.py: failures, hangs and crashed workers are each reported with their seed, and
every other seed still runs exactly once."""

import io
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import fuzz  # noqa: E402

TARGET = """
import os, time
def case(seed):
    with open({log!r}, "a") as f:
        f.write(f"{{seed}}\\n")
    if seed == 2:
        raise ValueError("bad seed 2")
    if seed == 4:
        time.sleep(60)
    if seed == 6:
        os._exit(3)
"""


def test_runner_reports_failures_hangs_and_crashes(tmp_path):
    log = tmp_path / "seeds"
    target = tmp_path / "fuzz_toy.py"
    target.write_text(TARGET.format(log=str(log)))
    out = io.StringIO()
    failures = fuzz.run(str(target), 0, 10, 2, 1.0, chunk=3, out=out)
    got = {seed: kind for seed, kind, *_ in failures}
    assert got == {2: "exception", 4: "hang", 6: "crash"}, out.getvalue()
    assert sorted(int(s) for s in log.read_text().split()) == list(range(10))
    text = out.getvalue()
    assert "failures: 3 (1 crash, 1 exception, 1 hang)" in text
    assert "seed 2: exception: ValueError: bad seed 2" in text


def test_exit_status(tmp_path):
    target = tmp_path / "fuzz_ok.py"
    target.write_text("def case(seed):\n    assert seed != 5, f'seed {seed}'\n")
    assert fuzz.main([str(target), "--count", "5", "--time-limit", "5"]) == 0
    assert fuzz.main([str(target), "--count", "6", "--time-limit", "5"]) == 1


def test_inline_raises_the_failure(tmp_path):
    target = tmp_path / "fuzz_ok.py"
    target.write_text("def case(seed):\n    assert seed != 5, f'seed {seed}'\n")
    assert fuzz.main([str(target), "--count", "5", "--inline"]) == 0
    with pytest.raises(AssertionError, match="seed 5"):
        fuzz.main([str(target), "--start", "5", "--count", "1", "--inline"])
