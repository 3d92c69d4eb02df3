"""AMDHSA code object parsing, checked against the fixture manifest (written at build time from
llvm-readelf-19 --notes / --symbols) and against hand-made broken files."""

import json
import shutil
import struct
import subprocess

import pytest
from testpaths import FIXTURES, ROOT

from wavelift.driver.codeobject import R_AMDGPU_RELATIVE64, CodeObject, CodeObjectError, load
from wavelift.errors import UserError

MANIFEST = FIXTURES / "manifest.json"


def _clang_binaries():
    if not MANIFEST.exists():
        return []
    m = json.loads(MANIFEST.read_text())
    return [b for b in m["binaries"] if b["kind"] == "clang"]


CLANG = _clang_binaries()
HIDDEN = json.loads(MANIFEST.read_text()).get("hidden_arg_layouts", []) if MANIFEST.exists() else []


@pytest.mark.parametrize("entry", CLANG, ids=[b["path"].split("fixtures/")[1] for b in CLANG])
def test_kernels_match_manifest(entry):
    co = load(ROOT / entry["path"])
    assert co.target == entry["target"]
    assert co.version == 5  # clang-19 default
    assert sorted(k.name for k in co.kernels) == sorted(entry["kernels"])
    for ki in entry["kernel_info"]:
        k = co.kernel(ki["name"])
        assert k.symbol == ki["symbol"] == ki["kd_symbol"]
        assert k.kd_address == int(ki["kd_address"], 16)
        assert k.code_address == int(ki["entry_address"], 16)
        assert (k.code_symbol == ki["name"]) == ki["entry_matches_symbol"]
        kd = k.kd
        assert kd.group_segment_fixed_size == ki["kd_group_segment_fixed_size"]
        assert kd.private_segment_fixed_size == ki["kd_private_segment_fixed_size"]
        assert kd.kernarg_size == ki["kd_kernarg_size"]
        assert kd.compute_pgm_rsrc1 == int(ki["compute_pgm_rsrc1"], 16)
        assert kd.compute_pgm_rsrc2 == int(ki["compute_pgm_rsrc2"], 16)
        assert kd.compute_pgm_rsrc3 == int(ki["compute_pgm_rsrc3"], 16)
        assert kd.kernel_code_properties == int(ki["kernel_code_properties"], 16)
        assert kd.wave_size == ki["wavefront_size"] == entry["wave_size"]
        # metadata
        assert k.kernarg_segment_size == ki["kernarg_segment_size"]
        assert k.group_segment_fixed_size == ki["group_segment_fixed_size"]
        assert k.private_segment_fixed_size == ki["private_segment_fixed_size"]
        assert k.uses_dynamic_stack == ki["uses_dynamic_stack"]
        assert k.sgpr_count == ki["sgpr_count"] and k.vgpr_count == ki["vgpr_count"]
        assert k.metadata[".max_flat_workgroup_size"] == ki["max_flat_workgroup_size"]
        assert [[a.offset, a.size, a.value_kind, a.type_name] for a in k.explicit_args] == ki["args"]
        hidden = [[a.offset, a.size, a.value_kind[7:]] for a in k.args if a.hidden]
        idx = ki["hidden_args"]
        assert hidden == (HIDDEN[idx] if idx is not None else [])
        # USER_SGPR in RSRC2 equals what kernel_code_properties enable
        assert sum(c for _, _, c in kd.user_sgpr_layout()) == kd.user_sgpr_count


def test_kd_fields_by_hand():
    """Decode one descriptor by hand (the bytes llvm-readelf -x .rodata shows)."""
    co = load(FIXTURES / "gfx1030/stack-O2-w32-mubuf.hsaco")
    k = co.kernel("spill")
    raw = co.read_image(k.kd_address, 64)
    assert raw == k.kd.raw
    assert struct.unpack_from("<q", raw, 16)[0] == k.code_address - k.kd_address
    kd = k.kd
    assert kd.enable_sgpr_private_segment_buffer and kd.enable_sgpr_kernarg_segment_ptr
    assert not kd.enable_sgpr_queue_ptr and not kd.enable_sgpr_dispatch_id
    assert kd.enable_wavefront_size32
    assert kd.scratch_en and kd.tgid_enabled[0]
    assert kd.user_sgpr_layout()[0] == ("private_segment_buffer", 0, 4)


def test_functions_and_text():
    co = load(FIXTURES / "gfx1030/stack-O2-w32-mubuf.hsaco")
    names = [f.name for f in co.functions]
    assert "spill" in names and "call" in names and "wl_helper" in names  # a called function
    t = co.text
    assert t is not None and co.text_offset == t.offset
    assert co.file_offset(co.kernel("call").code_address) == co.kernel("call").code_offset
    assert co.target_id == "amdgcn-amd-amdhsa--gfx1030"


def test_image_and_load_base():
    co = load(FIXTURES / "gfx1030/basic-O2-w32-mubuf.hsaco")
    assert co.image_align % 256 == 0
    img = co.load_image(0x1_0000_0000)
    k = co.kernel("vadd")
    assert img[k.kd_address : k.kd_address + 64] == k.kd.raw
    assert len(img) == co.image_size


@pytest.mark.skipif(not shutil.which("clang-19"), reason="needs clang-19")
def test_relative64_relocations_applied(tmp_path):
    """A table of pointers in .data gets R_AMDGPU_RELATIVE64 dynamic relocations."""
    src = tmp_path / "rel.cl"
    src.write_text("""
__constant uint tab[4] = {1,2,3,4};
__constant uint tab2[4] = {5,6,7,8};
__constant uint * __constant ptrs[2] = {tab, tab2};
__kernel void rel(__global uint *out, uint k) {
  uint i = __builtin_amdgcn_workitem_id_x();
  out[i] = ptrs[k&1][i&3];
}""")
    out = tmp_path / "rel.hsaco"
    subprocess.run(
        [
            "clang-19",
            "-x",
            "cl",
            "-cl-std=CL2.0",
            "-Xclang",
            "-finclude-default-header",
            "-nogpulib",
            "-target",
            "amdgcn-amd-amdhsa",
            "-mcpu=gfx1030",
            "-O2",
            str(src),
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    co = load(out)
    rels = [r for r in co.relocations if r.type == R_AMDGPU_RELATIVE64]
    assert len(rels) == 2
    base = 0x7_0000_0000
    img = co.load_image(base)
    tab = co.symbol("tab")
    tab2 = co.symbol("tab2")
    got = sorted(struct.unpack_from("<Q", img, r.offset)[0] for r in rels)
    if tab is not None and tab2 is not None:
        assert got == sorted([base + tab.value, base + tab2.value])
    assert got == sorted(base + r.addend for r in rels)
    # the pointed-to data is in the image
    for g in got:
        assert struct.unpack_from("<I", img, g - base)[0] in (1, 5)


# ---- refusals: bad files -------------------------------------------------------------------


def _good():
    return (FIXTURES / "gfx1030/basic-O2-w32-mubuf.hsaco").read_bytes()


def test_not_elf():
    with pytest.raises(CodeObjectError, match="not an ELF"):
        CodeObject(b"hello world, not an elf file")
    with pytest.raises(CodeObjectError, match="not an ELF"):
        CodeObject(b"")


def test_wrong_machine():
    d = bytearray(_good())
    struct.pack_into("<H", d, 18, 62)  # EM_X86_64
    with pytest.raises(CodeObjectError, match="wrong machine"):
        CodeObject(bytes(d))


def test_wrong_class_and_osabi():
    d = bytearray(_good())
    d[4] = 1
    with pytest.raises(CodeObjectError, match="ELF64"):
        CodeObject(bytes(d))
    d = bytearray(_good())
    d[7] = 0
    with pytest.raises(CodeObjectError, match="OSABI"):
        CodeObject(bytes(d))


def test_unknown_mach():
    d = bytearray(_good())
    struct.pack_into("<I", d, 48, 0x7F)
    with pytest.raises(CodeObjectError, match="EF_AMDGPU_MACH"):
        CodeObject(bytes(d))


@pytest.mark.parametrize("cut", [16, 63, 64, 200, 1000, 3000, -200, -1])
def test_truncated(cut):
    d = _good()
    with pytest.raises(CodeObjectError):
        CodeObject(d[:cut])


def test_garbage_metadata():
    d = bytearray(_good())
    co = CodeObject(bytes(d))
    note = co.section(".note")
    # overwrite the msgpack payload (after the 12-byte header and 8-byte "AMDGPU\0" name)
    start = note.offset + 20
    d[start : start + 8] = b"\xc1" * 8  # 0xc1 is never valid msgpack
    with pytest.raises(CodeObjectError, match="msgpack"):
        CodeObject(bytes(d))


def test_errors_are_user_errors(tmp_path):
    assert issubclass(CodeObjectError, UserError)
    with pytest.raises(CodeObjectError, match="cannot read"):
        CodeObject.from_file(tmp_path / "missing.hsaco")


def test_unknown_kernel_name():
    co = CodeObject(_good())
    with pytest.raises(CodeObjectError, match="no kernel 'nope'.*vadd"):
        co.kernel("nope")


def test_fuzzed_bytes_never_crash():
    """Random corruption gives CodeObjectError or a parse, never another exception."""
    import random

    rnd = random.Random(1234)
    base = _good()
    for _ in range(600):
        d = bytearray(base)
        for _ in range(rnd.randint(1, 8)):
            region = rnd.choice([(0, 0x400), (len(d) - 0x400, len(d)), (0, len(d))])
            i = rnd.randrange(*region)  # headers, section table / symbols, anywhere
            d[i] = rnd.randrange(256)
        try:
            co = CodeObject(bytes(d))
            for _k in co.kernels:
                co.load_image(0x1000000)
        except CodeObjectError:
            pass
