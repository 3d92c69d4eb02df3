"""Assemble GFX10 snippets with llvm-mc-19 (test helper)."""
from __future__ import annotations

import re
import shutil
import subprocess

HAVE_MC = shutil.which("llvm-mc-19") is not None


def assemble(src: str, wave64: bool = False, mcpu: str = "gfx1030") -> bytes:
    args = ["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-show-encoding"]
    if wave64:
        args.append("-mattr=+wavefrontsize64")
    p = subprocess.run(args, input=src, capture_output=True, text=True)
    if p.returncode != 0 or "error" in p.stderr:
        raise ValueError(p.stderr)
    out = b""
    for line in p.stdout.splitlines():
        m = re.search(r"encoding: \[(.*)\]", line)
        if m:
            out += bytes(int(x, 16) for x in m.group(1).split(","))
    return out
