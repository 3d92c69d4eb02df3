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

READELF = "llvm-readelf-19"

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
    """(target, wave64) of a fixture from the manifest (independent of our ELF reading); a code
    object the manifest does not list yet (GFX11/12 fixtures, see test_every_fixture_kind_is_covered)
    from llvm-readelf-19: the target from the ELF header, the wave size from the kernels' metadata."""
    b = MANIFEST.get(_rel(path))
    if b is not None:
        return b["target"], b["wave_size"] == 64
    if path.endswith(".bin"):  # raw ACO code not listed yet: aco-compile's own record beside it
        with open(path[:-4] + ".json") as f:
            side = json.load(f)
        return side["llvm_cpu"], side["wave_size"] == 64
    hdr = subprocess.run([READELF, "-h", "--notes", path], capture_output=True, text=True, check=True).stdout
    target = re.search(r"Flags:\s+0x[0-9a-fA-F]+, (gfx\d+)", hdr).group(1)
    sizes = set(re.findall(r"\.wavefront_size:\s+(\d+)", hdr))
    assert len(sizes) == 1, (path, sizes)
    return target, sizes == {"64"}


def _unlisted_ok(path):
    """A fixture the manifest need not list (yet): GFX11/12 code (a clang code object, or raw ACO
    code with aco-compile's record beside it)."""
    return (path.endswith(".hsaco") or os.path.exists(path[:-4] + ".json")) and re.search(
        r"/gfx1[12]\d\d[^/]*/", f"/{_rel(path)}"
    ) is not None


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
    kinds = {MANIFEST[_rel(p)]["kind"] for p in FILES if _rel(p) in MANIFEST}
    assert kinds == {"clang", "aco", "radv-llvm"}, kinds
    assert set(MANIFEST) <= {_rel(p) for p in FILES}, "a manifest binary is not compared"
    unlisted = [_rel(p) for p in FILES if _rel(p) not in MANIFEST]
    assert all(_unlisted_ok(os.path.join(ROOT, p)) for p in unlisted), unlisted


# ----------------------------------------------------------------------------- tinygrad kernels
# tests/fixtures/tinygrad/<target>*/<op>.npz hold the loaded code object image of each kernel
# tinygrad compiled (image_<k>; meta "kernels"[k]["rodata"]: where its kernel descriptor starts).
# The code before the descriptor is compared whole as raw code, as the ACO fixtures are.
TG = sorted(glob.glob(os.path.join(FIX, "tinygrad", "gfx1*", "*.npz")))


def _tg_kernels(path):
    import numpy as np

    z = np.load(path, allow_pickle=False)
    meta = json.loads(z["meta"].tobytes())
    return meta["target"], [
        (k, z[f"image_{k}"].tobytes()[: kd["rodata"]]) for k, kd in enumerate(meta["kernels"])
    ]


@pytest.mark.parametrize("path", TG, ids=_rel)
def test_tinygrad_kernel_disasm_equals_objdump(path, tmp_path):
    if not have_llvm():
        pytest.skip("llvm-mc-19/llvm-objdump-19 not installed: cannot compare with LLVM")
    target, kernels = _tg_kernels(path)
    seen = set()
    n = 0
    for k, code in kernels:
        if code in seen:  # sort's kernels repeat
            continue
        seen.add(code)
        raw = tmp_path / f"k{k}.bin"
        raw.write_bytes(code)
        want = objdump_listing(str(raw), target, False)
        assert want[:2] == ["", "0000000000000000 <.text>:"], want[:3]
        want = want[2:]
        got = ours(str(raw), target, None)
        bad = _diff(got, want)
        assert not bad, f"kernel {k}:\n" + "\n".join(bad)
        n += sum(1 for x in want if x.startswith("\t"))
    print(f"{_rel(path)}: {len(seen)} kernels, {n} lines equal")
    assert n > 10
