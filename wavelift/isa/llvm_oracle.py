"""Ask LLVM 19 to disassemble many instructions in one go (tools and tests only, not runtime).

``llvm_disasm(items, target, wave64)`` takes a list of byte strings, one instruction each, and
returns for each either ``(text, size)`` for the first instruction LLVM decodes from it, or
``None`` when LLVM calls its first bytes invalid.

How: the items (each padded with three ``s_nop 0``) are written as ``.byte`` lines, assembled
by ``llvm-mc-19 -filetype=obj`` into an ELF and disassembled by ``llvm-objdump-19 -d``, whose
``// address: words`` comments give each instruction's exact position and size (llvm-mc
``--disassemble -show-encoding`` re-encodes, so its sizes lie for literals LLVM could inline).
An item whose start is swallowed by its neighbour's runaway decode is asked again on its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

LLVM_MC = "llvm-mc-19"
LLVM_OBJDUMP = "llvm-objdump-19"
NOP = b"\x00\x00\x80\xbf"  # s_nop 0
_LINE = re.compile(r"^\t(.*?)\s*// ([0-9A-F]+): ([0-9A-F]+(?: [0-9A-F]+)*)(?:\s+<.*?>)?(?: ; .*)?$")


def have_llvm() -> bool:
    return shutil.which(LLVM_MC) is not None and shutil.which(LLVM_OBJDUMP) is not None


def mattrs(wave64: bool):
    return ["--mattr=+wavefrontsize64"] if wave64 else []


def objdump_lines(path, target=None, wave64=False, extra=()):
    args = [LLVM_OBJDUMP, "-d", *([f"--mcpu={target}"] if target else []), *mattrs(wave64), *extra, str(path)]
    p = subprocess.run(args, capture_output=True, text=True, check=True)
    return p.stdout.splitlines()


def _run(items, target, wave64):
    starts = []
    blob = bytearray()
    for b in items:
        starts.append(len(blob))
        blob += b + NOP * 3
    with tempfile.TemporaryDirectory() as d:
        s = os.path.join(d, "t.s")
        o = os.path.join(d, "t.o")
        with open(s, "w") as f:
            f.write(".text\n")
            for i in range(0, len(blob), 64):
                f.write(".byte " + ",".join(str(x) for x in blob[i : i + 64]) + "\n")
        subprocess.run(
            [LLVM_MC, "-triple=amdgcn-amd-amdhsa", f"-mcpu={target}", "-filetype=obj", s, "-o", o],
            check=True,
            capture_output=True,
        )
        # -z: objdump otherwise prints a run of zero bytes as '...' (the zero dword is v_illegal)
        lines = objdump_lines(o, target, wave64, ("--disassemble-zeroes",))
    at = {}
    for ln in lines:
        m = _LINE.match(ln)
        if not m:
            continue
        text, addr, enc = m.groups()
        addr = int(addr, 16)
        if text.startswith(".long") or text.startswith(".byte") or text.startswith(".short"):
            at[addr] = None
        else:
            at[addr] = (text, 4 * len(enc.split()))
    return at, starts


def llvm_disasm(items, target="gfx1030", wave64=False):
    items = [bytes(b) for b in items]
    at, starts = _run(items, target, wave64)
    res = []
    retry = []
    for i, s in enumerate(starts):
        if s in at:
            res.append(at[s])
        else:
            res.append(None)
            retry.append(i)
    for i in retry:
        a2, _ = _run([items[i]], target, wave64)
        res[i] = a2.get(0)
    return res
