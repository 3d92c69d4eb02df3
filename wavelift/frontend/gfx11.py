"""GFX11 (gfx1100) instructions in the shape the family frontends read (decision 0023).

The frontends were written for GFX10's names and operand codes.  Much of GFX11 is the same
instruction under a new name (``s_andn2_b32`` -> ``s_and_not1_b32``, ``global_load_dword`` ->
``global_load_b32``, ``ds_read_b32`` -> ``ds_load_b32``): ``normalize`` gives such an instruction
its GFX10 name, so that its semantics stay written once.  The table below lists only renames
that llvm-mc-19 itself treats as one instruction (it assembles the GFX10 mnemonic for gfx1100 to
the same encoding as the GFX11 one: tests/gfx11/test_gfx11_names.py checks every row).

Operand codes: GFX11 swapped M0 and NULL (SGPR_NULL is 124, M0 125; GFX10 has M0 124, NULL 125).
``normalize`` swaps the two codes in every field that holds a scalar operand code, so that the
frontends' one reading of a code (frontend/common.py) serves both.

Where GFX11 differs in more than names, the frontend branches on ``b.target`` itself:
``ds_cmpstore_*`` (DATA0 is the new value, DATA1 the compare value: the opposite of
``ds_cmpst_*``; ``normalize`` swaps the fields), the 13-bit signed GLOBAL/SCRATCH offset and
SCRATCH's SVE bit (frontend/vector_memory.py), VOPD (frontend/vector_alu.py), 16-bit VOP1/VOP2/
VOPC operands in VGPR fields 128-255 (the high half of v(n-128), frontend/vector_alu.py).
"""

from __future__ import annotations

from functools import cache

from ..isa import Instruction

GFX11_NULL, GFX11_M0 = 124, 125

# GFX11 name -> GFX10 name of the same instruction (llvm-mc-19 aliases; tests/gfx11 check them)
RENAMES: dict[str, str] = {
    # SOP1 / SOP2
    "s_and_not1_b32": "s_andn2_b32",
    "s_and_not1_b64": "s_andn2_b64",
    "s_or_not1_b32": "s_orn2_b32",
    "s_or_not1_b64": "s_orn2_b64",
    "s_and_not1_saveexec_b32": "s_andn2_saveexec_b32",
    "s_and_not1_saveexec_b64": "s_andn2_saveexec_b64",
    "s_or_not1_saveexec_b32": "s_orn2_saveexec_b32",
    "s_or_not1_saveexec_b64": "s_orn2_saveexec_b64",
    "s_and_not0_saveexec_b32": "s_andn1_saveexec_b32",
    "s_and_not0_saveexec_b64": "s_andn1_saveexec_b64",
    "s_or_not0_saveexec_b32": "s_orn1_saveexec_b32",
    "s_or_not0_saveexec_b64": "s_orn1_saveexec_b64",
    "s_and_not0_wrexec_b32": "s_andn1_wrexec_b32",
    "s_and_not0_wrexec_b64": "s_andn1_wrexec_b64",
    "s_and_not1_wrexec_b32": "s_andn2_wrexec_b32",
    "s_and_not1_wrexec_b64": "s_andn2_wrexec_b64",
    "s_ctz_i32_b32": "s_ff1_i32_b32",
    "s_ctz_i32_b64": "s_ff1_i32_b64",
    "s_clz_i32_u32": "s_flbit_i32_b32",
    "s_clz_i32_u64": "s_flbit_i32_b64",
    "s_cls_i32": "s_flbit_i32",
    "s_cls_i32_i64": "s_flbit_i32_i64",
    # SOPP
    "s_set_inst_prefetch_distance": "s_inst_prefetch",
    # VALU
    "v_cvt_pk_rtz_f16_f32": "v_cvt_pkrtz_f16_f32",
    "v_clz_i32_u32": "v_ffbh_u32",
    "v_ctz_i32_b32": "v_ffbl_b32",
    "v_cls_i32": "v_ffbh_i32",
    "v_cvt_nearest_i32_f32": "v_cvt_rpi_i32_f32",
    "v_cvt_floor_i32_f32": "v_cvt_flr_i32_f32",
    "v_dot2acc_f32_f16": "v_dot2c_f32_f16",
    "v_fmac_dx9_zero_f32": "v_fmac_legacy_f32",
    "v_mul_dx9_zero_f32": "v_mul_legacy_f32",
    "v_fma_dx9_zero_f32": "v_fma_legacy_f32",
    "v_cvt_pk_norm_i16_f32": "v_cvt_pknorm_i16_f32",
    "v_cvt_pk_norm_u16_f32": "v_cvt_pknorm_u16_f32",
    # DS
    "ds_load_b32": "ds_read_b32",
    "ds_load_b64": "ds_read_b64",
    "ds_load_b96": "ds_read_b96",
    "ds_load_b128": "ds_read_b128",
    "ds_load_u8": "ds_read_u8",
    "ds_load_i8": "ds_read_i8",
    "ds_load_u16": "ds_read_u16",
    "ds_load_i16": "ds_read_i16",
    "ds_load_u8_d16": "ds_read_u8_d16",
    "ds_load_u8_d16_hi": "ds_read_u8_d16_hi",
    "ds_load_i8_d16": "ds_read_i8_d16",
    "ds_load_i8_d16_hi": "ds_read_i8_d16_hi",
    "ds_load_u16_d16": "ds_read_u16_d16",
    "ds_load_u16_d16_hi": "ds_read_u16_d16_hi",
    "ds_load_2addr_b32": "ds_read2_b32",
    "ds_load_2addr_b64": "ds_read2_b64",
    "ds_load_2addr_stride64_b32": "ds_read2st64_b32",
    "ds_load_2addr_stride64_b64": "ds_read2st64_b64",
    "ds_store_b32": "ds_write_b32",
    "ds_store_b64": "ds_write_b64",
    "ds_store_b96": "ds_write_b96",
    "ds_store_b128": "ds_write_b128",
    "ds_store_b8": "ds_write_b8",
    "ds_store_b16": "ds_write_b16",
    "ds_store_b8_d16_hi": "ds_write_b8_d16_hi",
    "ds_store_b16_d16_hi": "ds_write_b16_d16_hi",
    "ds_store_2addr_b32": "ds_write2_b32",
    "ds_store_2addr_b64": "ds_write2_b64",
    "ds_store_2addr_stride64_b32": "ds_write2st64_b32",
    "ds_store_2addr_stride64_b64": "ds_write2st64_b64",
    "ds_storexchg_rtn_b32": "ds_wrxchg_rtn_b32",
    "ds_storexchg_rtn_b64": "ds_wrxchg_rtn_b64",
    "ds_storexchg_2addr_rtn_b32": "ds_wrxchg2_rtn_b32",
    "ds_storexchg_2addr_stride64_rtn_b32": "ds_wrxchg2st64_rtn_b32",
    "ds_storexchg_2addr_rtn_b64": "ds_wrxchg2_rtn_b64",
    "ds_storexchg_2addr_stride64_rtn_b64": "ds_wrxchg2st64_rtn_b64",
    "ds_load_addtid_b32": "ds_read_addtid_b32",
    "ds_store_addtid_b32": "ds_write_addtid_b32",
}
# d16 typed buffer forms: GFX11 puts d16 before format (GFX10: buffer_load_format_d16_xyzw)
D16_FORMAT: dict[str, str] = {
    **{
        f"{p}_{v}_d16_format_{c}": f"{p}_{v}_format_d16_{c}"
        for p in ("buffer", "tbuffer")
        for v in ("load", "store")
        for c in ("x", "xy", "xyz", "xyzw")
    },
    **{f"buffer_{v}_d16_hi_format_x": f"buffer_{v}_format_d16_hi_x" for v in ("load", "store")},
}
# ds_cmpstore_* takes (new value, compare value); ds_cmpst_* (compare value, new value)
CMPSTORE = {
    "ds_cmpstore_b32": "ds_cmpst_b32",
    "ds_cmpstore_rtn_b32": "ds_cmpst_rtn_b32",
    "ds_cmpstore_b64": "ds_cmpst_b64",
    "ds_cmpstore_rtn_b64": "ds_cmpst_rtn_b64",
}

# memory kinds: GFX11 suffix -> GFX10 suffix (global_/scratch_/flat_/buffer_ loads and stores)
LOAD_KINDS = {
    "b32": "dword",
    "b64": "dwordx2",
    "b96": "dwordx3",
    "b128": "dwordx4",
    "u8": "ubyte",
    "i8": "sbyte",
    "u16": "ushort",
    "i16": "sshort",
    "d16_u8": "ubyte_d16",
    "d16_i8": "sbyte_d16",
    "d16_b16": "short_d16",
    "d16_hi_u8": "ubyte_d16_hi",
    "d16_hi_i8": "sbyte_d16_hi",
    "d16_hi_b16": "short_d16_hi",
}
STORE_KINDS = {
    "b8": "byte",
    "b16": "short",
    "b32": "dword",
    "b64": "dwordx2",
    "b96": "dwordx3",
    "b128": "dwordx4",
    "d16_hi_b8": "byte_d16_hi",
    "d16_hi_b16": "short_d16_hi",
}
ATOMIC_KINDS = {
    "swap_b32": "swap",
    "cmpswap_b32": "cmpswap",
    "add_u32": "add",
    "sub_u32": "sub",
    "min_i32": "smin",
    "max_i32": "smax",
    "min_u32": "umin",
    "max_u32": "umax",
    "and_b32": "and",
    "or_b32": "or",
    "xor_b32": "xor",
    "inc_u32": "inc",
    "dec_u32": "dec",
    "swap_b64": "swap_x2",
    "cmpswap_b64": "cmpswap_x2",
    "add_u64": "add_x2",
    "sub_u64": "sub_x2",
    "min_i64": "smin_x2",
    "max_i64": "smax_x2",
    "min_u64": "umin_x2",
    "max_u64": "umax_x2",
    "and_b64": "and_x2",
    "or_b64": "or_x2",
    "xor_b64": "xor_x2",
    "inc_u64": "inc_x2",
    "dec_u64": "dec_x2",
}
SMEM_KINDS = {"b32": "dword", "b64": "dwordx2", "b128": "dwordx4", "b256": "dwordx8", "b512": "dwordx16"}
MEMORY_PREFIXES = ("global", "scratch", "flat", "buffer")

# fields holding a scalar operand code, per encoding (VALU sources below 256 are scalar codes)
_SCALAR_FIELDS = {
    "SOP1": ("sdst", "ssrc0"),
    "SOP2": ("sdst", "ssrc0", "ssrc1"),
    "SOPC": ("ssrc0", "ssrc1"),
    "SOPK": ("sdst",),
    "SMEM": ("sdata", "soffset"),
    "VOP1": ("src0",),
    "VOP2": ("src0",),
    "VOPC": ("src0",),
    "VOP3": ("src0", "src1", "src2"),
    "VOP3B": ("src0", "src1", "src2", "sdst"),
    "VOP3P": ("src0", "src1", "src2"),
    "VOPD": ("src0x", "src0y"),
    "MUBUF": ("soffset",),
    "MTBUF": ("soffset",),
    "FLAT": ("saddr",),
    "GLOBAL": ("saddr",),
    "SCRATCH": ("saddr",),
}
# VALU instructions whose VDST field is a scalar destination
_SDST_PREFIXES = ("v_cmp_", "v_cmpx_", "v_readlane_", "v_readfirstlane_")


def gfx10_name(name: str, encoding: str) -> str:
    """The GFX10 name of GFX11 instruction ``name`` (itself when GFX11 kept the name)."""
    if name in RENAMES:
        return RENAMES[name]
    if name in CMPSTORE:
        return CMPSTORE[name]
    if name in D16_FORMAT and encoding in ("MUBUF", "MTBUF"):  # GFX12's VBUFFER keeps its name
        return D16_FORMAT[name]
    if encoding == "SMEM":
        for p in ("s_load_", "s_buffer_load_"):
            if name.startswith(p) and name[len(p) :] in SMEM_KINDS:
                return p + SMEM_KINDS[name[len(p) :]]
        return name
    prefix, _, rest = name.partition("_")
    if prefix in MEMORY_PREFIXES and encoding in ("MUBUF", "FLAT", "GLOBAL", "SCRATCH"):
        for verb, kinds in (("load_", LOAD_KINDS), ("store_", STORE_KINDS), ("atomic_", ATOMIC_KINDS)):
            if rest.startswith(verb) and rest[len(verb) :] in kinds:
                return f"{prefix}_{verb}{kinds[rest[len(verb) :]]}"
    return name


def _swap(code: int) -> int:
    return GFX11_M0 if code == GFX11_NULL else GFX11_NULL if code == GFX11_M0 else code


def normalize(ins: Instruction) -> Instruction:
    """``ins`` (decoded for gfx11) with its GFX10 name and GFX10 scalar operand codes; ``text``
    stays LLVM's GFX11 text (what refusals print)."""
    enc = ins.encoding
    f = dict(ins.fields)
    for k in _SCALAR_FIELDS.get(enc, ()):
        v = f.get(k)
        if v is not None and v < 256:
            f[k] = _swap(v)
    n = ins.name
    if enc in ("VOP3", "VOP1") and n.startswith(_SDST_PREFIXES) and "vdst" in f:
        f["vdst"] = _swap(f["vdst"])
    if n in CMPSTORE:
        f["data0"], f["data1"] = f["data1"], f["data0"]
    return ins._replace(name=gfx10_name(n, enc), fields=f)


def is_gfx11(target: str) -> bool:
    return target.startswith("gfx11")


@cache
def format_map() -> dict[int, int]:
    """GFX11 buffer format number -> GFX10's number of the format of the same name (LLVM 19's
    BUF_FMT names in isa/tables/memory_gfx1100.json and memory_gfx1030.json; 1, the default
    BUF_FMT_8_UNORM that LLVM prints as no format, is 1 on both).  GFX11 renumbered the formats
    (8_8_8_8_UINT is 46 there, 60 on GFX10); the V#'s FORMAT and MTBUF's format field number them
    alike (Mesa writes the V# FORMAT from the same GFX11 format table).  A number without a GFX10
    name (INVALID, 64-127) maps nowhere: the typed access refuses it by name."""
    from ..isa.memory import load_memory_table

    n10 = {n: i for i, n in enumerate(load_memory_table("gfx1030")["names"]["format"])}
    out = {1: 1}
    for i, n in enumerate(load_memory_table("gfx1100")["names"]["format"]):
        if n.startswith("format:[BUF_FMT_") and n != "format:[BUF_FMT_INVALID]" and n in n10:
            out[i] = n10[n]
    return out


# the GFX11 MIMG instructions carried out (frontend/image.py on GFX11's T#: decision 0038)
MIMG_CARRIED_OUT = ("image_load", "image_store", "image_load_mip", "image_store_mip")


def mimg(ins: Instruction, b) -> None:
    """GFX11 MIMG.  image_load/store(_mip) and the image atomics image.py carries out (R32/R64
    integer; the rest refuse there by name) are frontend/image.py's, reading GFX11's T# (its
    register-database fields, IMG_FORMAT by name in GFX10's numbering, reserved bits refused),
    on GFX11's layouts (decision 0039); GFX11's null T# refuses (decision 0038).  Sampling
    (``image_sample*``, ``image_gather4*``, ``image_get_lod``; GFX11 keeps GFX10's names,
    operand order and MIMG fields) is frontend/sample.py's, the same semantics as GFX10.3's,
    reading GFX11's T# through image.py and GFX11's S# (memory/ssharp.py with ``gfx11``:
    BORDER_COLOR_PTR in word 3 [29:18], the bits GFX11 names no field for refused; decision
    0044).  The rest (resinfo/msaa/bvh) is refused by name at run time when an active lane
    reaches it (``image.unsupported_descriptor``)."""
    from . import sample

    if ins.name in MIMG_CARRIED_OUT or ins.name.startswith("image_atomic_"):
        from . import image

        image.translate(ins, b)
        return
    if ins.name.startswith(sample.INSTRUCTIONS):
        sample.translate(ins, b)
        return
    b.effect(
        "refuse_if",
        "b1",
        b.exec(),
        why="a GFX11 image instruction not carried out (image_get_resinfo, the _pck forms, MSAA loads, "
        "BVH intersection)",
        code="image.unsupported_descriptor",
    )
