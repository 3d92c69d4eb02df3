"""Every instruction of every compiler fixture: `wavelift disasm` == llvm-objdump-19 -d (live).

Code objects (tests/fixtures/**/*.hsaco) are given to objdump as they are (target from the ELF
flags, wave64 per the manifest); raw ACO / RADV-LLVM code (``aco/*.bin``, ``radv-llvm/*.bin``)
is wrapped into an ELF by assembling ``.byte`` lines with llvm-mc-19.  Raw files are compared
whole: the code, the ``s_code_end`` padding and the constant data after it (objdump decodes
that too, so must we).  objdump's ``// address: words`` comments are dropped.
"""

from __future__ import annotations

import glob
import io
import json
import os
import re
import subprocess
import tempfile

import pytest

from wavelift.isa.disasm_cli import disasm_command
from wavelift.isa.llvm_oracle import LLVM_MC, LLVM_OBJDUMP, have_llvm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "tests", "fixtures")
MANIFEST = {b["path"]: b for b in json.load(open(os.path.join(FIX, "manifest.json")))["binaries"]}
FILES = sorted(
    glob.glob(os.path.join(FIX, "**", "*.hsaco"), recursive=True)
    + glob.glob(os.path.join(FIX, "**", "aco", "*.bin"), recursive=True)
    + glob.glob(os.path.join(FIX, "**", "radv-llvm", "*.bin"), recursive=True)
)
_INSN = re.compile(r"^(\t.*?)\s*// [0-9A-F]+: [0-9A-F ]+?(?: <.*>)?$")


def _rel(p):
    return os.path.relpath(p, ROOT)


def _info(path):
    """(target, wave64) of a fixture from the manifest (independent of our ELF reading)."""
    b = MANIFEST[_rel(path)]
    return b["target"], b["wave_size"] == 64


def objdump_listing(path, raw_target=None, wave64=False):
    """objdump's lines from the first symbol header on, comments dropped."""
    args = [LLVM_OBJDUMP, "-d"]
    if wave64:
        args.append("--mattr=+wavefrontsize64")
    with tempfile.TemporaryDirectory() as d:
        if raw_target:
            data = open(path, "rb").read()
            s = os.path.join(d, "raw.s")
            with open(s, "w") as f:
                f.write(".text\n")
                for i in range(0, len(data), 64):
                    f.write(".byte " + ",".join(str(x) for x in data[i : i + 64]) + "\n")
            obj = os.path.join(d, "raw.o")
            subprocess.run(
                [LLVM_MC, "-triple=amdgcn-amd-amdhsa", f"-mcpu={raw_target}", "-filetype=obj", s, "-o", obj],
                check=True,
                capture_output=True,
            )
            args += [f"--mcpu={raw_target}", obj]
        else:
            args.append(path)
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    lines = out.splitlines()
    start = lines.index("Disassembly of section .text:") + 1
    res = []
    for ln in lines[start:]:
        m = _INSN.match(ln)
        res.append(m.group(1) if m else ln.rstrip())
    while res and res[-1] == "":
        res.pop()
    return res


def ours(path, target=None, wave64=None):
    buf = io.StringIO()
    disasm_command(path, target=target, wave64=wave64, out=buf)
    return buf.getvalue().rstrip("\n").split("\n")


def _diff(got, want, limit=12):
    out = []
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else "<missing>"
        w = want[i] if i < len(want) else "<missing>"
        if g != w:
            out.append(f"line {i}: ours {g!r} objdump {w!r}")
            if len(out) >= limit:
                break
    return out


@pytest.mark.parametrize("path", FILES, ids=_rel)
def test_fixture_disasm_equals_objdump(path):
    if not have_llvm():
        pytest.skip("llvm-mc-19/llvm-objdump-19 not installed: cannot compare with LLVM")
    target, wave64 = _info(path)
    if path.endswith(".hsaco"):
        want = objdump_listing(path, None, wave64)
        got = ours(path)  # target from e_flags, wave size from the kernel descriptors
        # objdump's raw listing starts with "\n<.text>:"; ours has no header for raw code
    else:
        want = objdump_listing(path, target, wave64)
        assert want[:2] == ["", "0000000000000000 <.text>:"], want[:3]
        want = want[2:]
        got = ours(path, target, wave64 or None)
    n = sum(1 for x in want if x.startswith("\t"))
    bad = _diff(got, want)
    print(f"{_rel(path)}: {n} lines compared, {'0' if not bad else 'some'} differ")
    assert not bad, "\n".join(bad)
    assert n > 10


def test_every_fixture_kind_is_covered():
    kinds = {MANIFEST[_rel(p)]["kind"] for p in FILES}
    assert kinds == {"clang", "aco", "radv-llvm"}, kinds
    assert len(FILES) == len(MANIFEST), "a manifest binary is not compared (or vice versa)"
