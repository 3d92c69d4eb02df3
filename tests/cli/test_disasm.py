"""`wavelift disasm` (issue 26 item 3): a capture disassembles each dispatch's program (its
header was decoded as code), a directory is called a directory, an empty file or a FIFO is an
error (not rc 0, not a hang); --show-encoding gives llvm-objdump -d's lines exactly (address,
words, branch labels), --kernel one symbol."""

import os
import re
import subprocess

import pytest
from clipaths import ROOT, VADD_HSACO

import wavelift
from wavelift.isa.llvm_oracle import LLVM_OBJDUMP, have_llvm


def one_error(p) -> str:
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stdout == "" and "Traceback" not in p.stderr
    err = p.stderr.strip()
    assert err.startswith("wavelift: ") and "\n" not in err
    return err


def test_capture_lists_each_dispatch_program(wavelift_cmd, built):
    """The capture's dispatch 0 runs the code object's vadd: the same instructions (the code
    object's listing goes on past s_endpgm with padding)."""
    p = wavelift_cmd("disasm", built["two"])
    assert p.returncode == 0, p.stderr
    cap = wavelift.Capture.load(built["two"])
    lines = p.stdout.split("\n")
    heads = [i for i, x in enumerate(lines) if x.endswith(">:")]
    assert len(heads) == 1 and lines[heads[0]].endswith(" <dispatch 0>:")  # dispatch 1: refused
    addr = int(lines[heads[0]].split()[0], 16)
    assert cap.memory.find(addr).name == "code:basic.hsaco"
    got = [x for x in lines[heads[0] + 1 :] if x]
    assert got[-1] == "\ts_endpgm" and len(got) > 10
    co = wavelift_cmd("disasm", VADD_HSACO).stdout.split("\n")
    start = co.index(next(x for x in co if x.endswith("<vadd>:")))
    assert co[start + 1 : start + 1 + len(got)] == got
    assert "WLCAP" not in p.stdout and ".long" not in p.stdout


def test_capture_errors(wavelift_cmd, tmp_path, built):
    cap = wavelift.Capture(target="gfx1030")
    cap.alloc(16, name="x")
    cap.save(tmp_path / "empty.wlcap")
    assert "no dispatch" in one_error(wavelift_cmd("disasm", tmp_path / "empty.wlcap"))
    assert "leave out --target" in one_error(wavelift_cmd("disasm", built["two"], "--target", "gfx1010"))
    bad = tmp_path / "cut.wlcap"
    bad.write_bytes(built["vadd"].read_bytes()[:-100])
    assert "truncated" in one_error(wavelift_cmd("disasm", bad))


def test_not_code(wavelift_cmd, tmp_path):
    assert one_error(wavelift_cmd("disasm", tmp_path)).endswith(
        "is a directory, not a code object, raw code or capture"
    )
    assert "no such file" in one_error(wavelift_cmd("disasm", tmp_path / "nope"))
    (tmp_path / "empty").write_bytes(b"")
    assert "is empty" in one_error(wavelift_cmd("disasm", tmp_path / "empty"))
    os.mkfifo(tmp_path / "fifo")
    assert "a FIFO" in one_error(wavelift_cmd("disasm", tmp_path / "fifo", timeout=60))


def objdump(path, wave64):
    args = [LLVM_OBJDUMP, "-d"] + (["--mattr=+wavefrontsize64"] if wave64 else []) + [str(path)]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout.split("\n")
    return out[out.index("Disassembly of section .text:") + 1 :]


@pytest.mark.parametrize(
    "name",
    [
        "gfx1030/basic-O2-w32-mubuf.hsaco",
        "gfx1030/basic-O0-w64-flat.hsaco",
        "gfx1010/basic-O2-w32-mubuf.hsaco",
    ],
)
def test_show_encoding_is_objdump(wavelift_cmd, name):
    if not have_llvm():
        pytest.skip("llvm-objdump-19 not installed: cannot compare with LLVM")
    path = ROOT / "tests" / "fixtures" / name
    want = objdump(path, "-w64" in name)
    p = wavelift_cmd("disasm", "--show-encoding", path)
    assert p.returncode == 0, p.stderr
    got = p.stdout.split("\n")
    assert got == want
    assert sum(" <" in x and "// " in x for x in got) > 3  # branch labels compared
    # --kernel: that symbol's part of the listing, exactly
    heads = [i for i, x in enumerate(got) if x.endswith(">:")]
    i = next(k for k, h in enumerate(heads) if got[h].endswith("<lds_reduce>:"))
    p = wavelift_cmd("disasm", "-e", "--kernel", "lds_reduce", path)
    assert p.stdout.split("\n") == [""] + got[heads[i] : heads[i + 1] - 1] + [""]


def test_kernel_errors(wavelift_cmd, built, tmp_path):
    err = one_error(wavelift_cmd("disasm", VADD_HSACO, "--kernel", "nope"))
    assert "no symbol 'nope'" in err and "'vadd'" in err
    assert "--kernel" in one_error(wavelift_cmd("disasm", built["two"], "--kernel", "vadd"))
    (tmp_path / "raw.bin").write_bytes(bytes.fromhex("000081bf"))
    assert "raw code" in one_error(wavelift_cmd("disasm", tmp_path / "raw.bin", "-k", "x"))
    p = wavelift_cmd("disasm", "-e", tmp_path / "raw.bin")
    assert p.stdout == "\ts_endpgm" + " " * 51 + "// 000000000000: BF810000\n"


def test_capture_show_encoding(wavelift_cmd, built):
    """A capture's listing with -e: the program's guest addresses, and branch labels named
    after the dispatch."""
    p = wavelift_cmd("disasm", "-e", built["two"])
    lines = [x for x in p.stdout.split("\n") if "//" in x]
    base = int(p.stdout.split("\n")[1].split()[0], 16)
    assert int(lines[0].split("// ")[1].split(":")[0], 16) == base
    assert any(x.endswith("<dispatch 0+0x9c>") for x in lines)


def readelf_kernels(path) -> dict:
    """{kernel name: {metadata key: value}} from llvm-readelf-19 --notes (the compiler's own
    metadata, read without wavelift)."""
    out = subprocess.run(
        [LLVM_OBJDUMP.replace("objdump", "readelf"), "--notes", str(path)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    kernels, cur = {}, None
    for line in out.split("\n"):
        if line.startswith("  - "):
            cur = {}
        elif cur is not None and line.startswith("    .") and ":" in line:
            key, _, value = line.strip().partition(":")
            cur[key] = value.strip()
            if key == ".name":
                kernels[value.strip()] = cur
    return kernels


@pytest.mark.parametrize("name", ["gfx1030/basic-O2-w32-mubuf.hsaco", "gfx1030/basic-O0-w64-flat.hsaco"])
def test_kernel_descriptor(wavelift_cmd, name):
    """--kernel-descriptor: per kernel, the .amdhsa_ directives agree with the compiler's
    metadata (segment sizes, kernarg size, wave size); the user SGPRs add up to the count."""
    if not have_llvm():
        pytest.skip("llvm-readelf-19 not installed")
    path = ROOT / "tests" / "fixtures" / name
    meta = readelf_kernels(path)
    p = wavelift_cmd("disasm", "--kernel-descriptor", path)
    assert p.returncode == 0, p.stderr
    blocks = p.stdout.split(".amdhsa_kernel ")[1:]
    assert len(blocks) == len(meta) >= 4
    for b in blocks:
        kname = b.split("\n")[0]
        d = dict(x.strip().split(" ", 1) for x in b.split("\n") if x.startswith("\t.amdhsa_"))
        m = meta[kname]
        assert d[".amdhsa_group_segment_fixed_size"] == m[".group_segment_fixed_size"]
        assert d[".amdhsa_private_segment_fixed_size"] == m[".private_segment_fixed_size"]
        assert d[".amdhsa_kernarg_size"] == m[".kernarg_segment_size"]
        assert d[".amdhsa_wavefront_size32"] == ("1" if m[".wavefront_size"] == "32" else "0")
        sgprs = b.split("; user SGPRs: ")[1].split("\n")[0]
        n = sum(
            int(r.split(":")[1]) - int(r.split(":")[0]) + 1 if ":" in r else 1
            for r in re.findall(r"s\[?([0-9:]+)\]?", sgprs)
        )
        assert n == int(d[".amdhsa_user_sgpr_count"])
    one = wavelift_cmd("disasm", "--kernel-descriptor", "--kernel", kname, path).stdout
    assert one == "\n" + p.stdout[p.stdout.rindex(f"<{kname}.kd>:") - 17 :]
    assert "only code objects" in one_error(
        wavelift_cmd("disasm", "--kernel-descriptor", ROOT / "examples" / "vadd.wlcap")
    )
