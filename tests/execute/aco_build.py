"""Compile a GLSL compute shader with tools/aco_compile (Mesa's ACO through RADV's null device)
for a test: one place for the command line, the skip when the tool is unavailable (exit 3) and
the failure text."""

from __future__ import annotations

import subprocess

import pytest
from testpaths import ROOT


def aco_build(tmp_path, name: str, source: str, family: str, wave: int, defs=()):
    """-> the output path (aco-compile's -o; the listing is beside it as ``<name>.s``)."""
    src = tmp_path / f"{name}.comp"
    src.write_text(source)
    out = tmp_path / name
    cmd = [str(ROOT / "tools/aco_compile/aco-compile"), str(src), "-o", str(out)]
    p = subprocess.run(
        [*cmd, "--family", family, f"--wave{wave}", "-q", *defs], capture_output=True, text=True
    )
    if p.returncode == 3:
        pytest.skip("aco-compile: " + (p.stdout + p.stderr)[-200:])
    assert p.returncode == 0, p.stdout + p.stderr
    return out
