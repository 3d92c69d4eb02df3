"""The default test run's options (docs/decisions/0031-default-test-run.md): `-m 'not slow'`
leaves the long tests to `-m slow`, pytest-xdist runs each file on one worker, and a mark that is
not registered is an error -- a misspelt `slow` would otherwise put a long test into the default
run with only a warning."""

import shlex
import tomllib

from testpaths import ROOT


def _ini() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]


def test_default_run_options():
    opts = shlex.split(_ini()["addopts"])
    assert opts[opts.index("-m") + 1] == "not slow"
    assert "--strict-markers" in opts
    assert opts[opts.index("-n") + 1] == "auto" and opts[opts.index("--dist") + 1] == "loadfile"


def test_the_marks_are_registered():
    names = {m.split(":")[0].strip() for m in _ini()["markers"]}
    assert {"slow", "cuda", "tiers"} <= names


def test_the_collector_keeps_young_objects_longer():
    """tests/conftest.py's collector thresholds (amendment h150): a young generation of 10,000
    allocations, so the short-lived objects of translation and the passes die by reference count
    instead of setting off full collections of the worker's whole heap."""
    import gc

    assert gc.get_threshold() == (10_000, 10, 10)
