"""The build rig of tests/cuda's host-compiled tests: C++ text (CUDA source or the prelude under
wavelift/backends/host.py's shim, with a test's driver) written to a directory, compiled for the
host by g++ with the caller's flags, loaded (``load``: ctypes.CDLL) or run (``build`` with
``exe=True``: an executable).  A compile error fails the test with the compiler's first
messages; without g++ the test skips."""

from __future__ import annotations

import ctypes
import pathlib
import shutil
import subprocess
from collections.abc import Sequence

import pytest


def gxx() -> str:
    """g++'s path (the test skips without it)."""
    found = shutil.which("g++")
    if not found:
        pytest.skip("g++ not installed")
    return found


def build(
    d: pathlib.Path, name: str, source: str, flags: Sequence[str], exe: bool = False, cxx: str | None = None
) -> pathlib.Path:
    """``source`` written to ``d``/name.cpp, compiled by ``cxx`` (default g++) with ``flags``
    (the caller's: -shared -fPIC for a library) into ``d``/name.so, or the executable ``d``/name
    with ``exe``."""
    src = d / f"{name}.cpp"
    src.write_text(source)
    out = d / (name if exe else f"{name}.so")
    r = subprocess.run([cxx or gxx(), *flags, str(src), "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:4000]
    return out


def load(
    d: pathlib.Path, name: str, source: str, flags: Sequence[str], cxx: str | None = None
) -> ctypes.CDLL:
    """``build``'s library of ``source``, loaded."""
    return ctypes.CDLL(str(build(d, name, source, flags, cxx=cxx)))
