"""Paths and helpers the command-line tests share (a module of its own: ``from conftest import``
finds whichever conftest.py was loaded last when several test directories run together)."""

import hashlib
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "fixtures" / "captures"
VADD_HSACO = ROOT / "tests" / "fixtures" / "gfx1030" / "basic-O2-w32-mubuf.hsaco"
EXAMPLE = ROOT / "examples" / "vadd.wlcap"


def record_only(memory, config, index):
    from wavelift.errors import Refusal
    from wavelift.run.result import DispatchResult

    return DispatchResult(index, config, Refusal("backend.unavailable", "recorded, not run"))


def sha(path) -> str:
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def command_runner(timeout: float):
    """-> run(*argv, **run_kwargs): the installed `wavelift` command (else `python -m wavelift`),
    text output captured, as a user runs it."""
    import shutil
    import subprocess
    import sys

    exe = shutil.which("wavelift")
    base = [exe] if exe else [sys.executable, "-m", "wavelift"]

    def run(*argv, **kw):
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        kw.setdefault("timeout", timeout)
        return subprocess.run(base + [str(a) for a in argv], check=False, **kw)

    return run
