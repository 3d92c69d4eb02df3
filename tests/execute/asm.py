"""Assemble GFX10 snippets with llvm-mc-19 (test helper): object file -> raw .text bytes."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

HAVE_MC = shutil.which("llvm-mc-19") is not None and shutil.which("llvm-objcopy-19") is not None


def assemble(src: str, wave64: bool = False, mcpu: str = "gfx1030") -> bytes:
    with tempfile.TemporaryDirectory() as d:
        obj, raw = os.path.join(d, "a.o"), os.path.join(d, "a.bin")
        args = ["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-filetype=obj",
                "-o", obj]
        if wave64:
            args.append("-mattr=+wavefrontsize64")
        p = subprocess.run(args, input=".text\n" + src + "\n", capture_output=True, text=True)
        if p.returncode != 0 or "error" in p.stderr:
            raise ValueError(p.stderr)
        subprocess.run(["llvm-objcopy-19", "-O", "binary", "--only-section=.text", obj, raw],
                       check=True)
        with open(raw, "rb") as f:
            return f.read()
