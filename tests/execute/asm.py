"""Assemble GFX10 snippets with llvm-mc-19 (test helper): object file -> raw .text bytes.

WAVELIFT_ASM_CACHE=FILE (JSON): where llvm-mc-19 exists, every snippet assembled is recorded there;
where it does not (the GPU machine), snippets are taken from it — so the fuzz targets and tests
that assemble can run there from a file recorded here."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile

from wavelift import settings

HAVE_MC = shutil.which("llvm-mc-19") is not None and shutil.which("llvm-objcopy-19") is not None


def _recorded(key: str, code: bytes | None = None) -> bytes | None:
    """The WAVELIFT_ASM_CACHE entry for key (None: none), or record code under it."""
    path = settings.get("WAVELIFT_ASM_CACHE")
    if not path:
        return None
    try:
        with open(path) as f:
            book = json.load(f)
    except FileNotFoundError:
        book = {}
    if code is None:
        return bytes.fromhex(book[key]) if key in book else None
    if book.get(key) != code.hex():
        book[key] = code.hex()
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(book, f)
        os.replace(tmp, path)
    return code


def assemble(src: str, wave64: bool = False, mcpu: str = "gfx1030") -> bytes:
    key = hashlib.sha256(f"{mcpu}|{int(wave64)}|{src}".encode()).hexdigest()
    if not HAVE_MC:
        code = _recorded(key)
        if code is None:
            raise ValueError("llvm-mc-19 is missing and WAVELIFT_ASM_CACHE has no recording of this snippet")
        return code
    code = _assemble(src, wave64, mcpu)
    _recorded(key, code)
    return code


def _assemble(src: str, wave64: bool, mcpu: str) -> bytes:
    with tempfile.TemporaryDirectory() as d:
        obj, raw = os.path.join(d, "a.o"), os.path.join(d, "a.bin")
        args = ["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", f"-mcpu={mcpu}", "-filetype=obj", "-o", obj]
        if wave64:
            args.append("-mattr=+wavefrontsize64")
        p = subprocess.run(args, input=".text\n" + src + "\n", capture_output=True, text=True)
        if p.returncode != 0 or "error" in p.stderr:
            raise ValueError(p.stderr)
        subprocess.run(["llvm-objcopy-19", "-O", "binary", "--only-section=.text", obj, raw], check=True)
        with open(raw, "rb") as f:
            return f.read()
