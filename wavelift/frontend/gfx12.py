"""GFX12 (gfx1200, gfx1201; RDNA4) instructions in the shape the family frontends read
(decision 0027).

GFX12 keeps GFX11's semantics for most instructions; what it changed is names, the memory
encodings' layouts and a few conventions.  ``normalize`` gives a GFX12 instruction GFX11's shape;
``frontend/gfx11.py normalize`` then gives it GFX10's (flow.discover runs both), so semantics stay
written once:

* renames that llvm-mc-19 itself treats as one instruction (the GFX11 mnemonic, assembled for
  gfx1200, gives the GFX12 instruction's encoding: tests/gfx12/test_gfx12_names.py checks every
  row): ``s_add_co_u32`` -> ``s_add_u32``, ``v_mad_co_u64_u32`` -> ``v_mad_u64_u32``,
  ``v_max_num_f32`` -> ``v_max_f32``, ...;
* VGLOBAL/VSCRATCH/VFLAT become GLOBAL/SCRATCH/FLAT with GFX11's field names; the cache policy
  (``th``/``scope``) only schedules, but bit 0 of ``th`` on an atomic is GFX11's GLC (return the
  pre-op value).  The 24-bit signed offsets of these and of SMEM are read where the family's
  frontend reads the offset (it tells GFX12's layout by its ``th``/``cpol`` field);
* the split wait counters (``s_wait_loadcnt`` ...), cache write-back/invalidate (``global_wb``,
  ``global_inv``) only schedule: no-ops;
* the split workgroup barrier: ``s_barrier_signal -1`` is a no-op and ``s_barrier_wait -1`` the
  barrier (GFX10's ``s_barrier``); other barrier ids (named barriers) are refused by name.

Instructions GFX12 added (``s_add_nc_u64`` ...) and the f32 scalar float instructions (GFX12's and
gfx1150's: their semantics are the VALU op's, taken from frontend/vector_alu.py) are in
``HANDLERS`` (by name; frontend/program.py looks there first).  The workgroup ids' packing into
TTMP7 is ``prologue``.  VBUFFER's loads, stores (untyped and typed) and atomics are
``_vbuffer`` (GFX12's V# layout and range checking, decision 0027).  Everything else new in GFX12
is refused by name.
"""

from __future__ import annotations

from functools import cache

from ..errors import Refused
from ..ir.builder import Builder
from ..ir.ops import BITS
from ..ir.program import Value, is_float
from ..isa import Instruction
from . import gfx11
from .common import C, read_sreg, set_scc, unsupported, write_sdst

# GFX12 name -> GFX11 name of the same instruction (llvm-mc-19 aliases; tests/gfx12 check them)
RENAMES: dict[str, str] = {
    "s_add_co_u32": "s_add_u32",
    "s_sub_co_u32": "s_sub_u32",
    "s_add_co_i32": "s_add_i32",
    "s_sub_co_i32": "s_sub_i32",
    "s_add_co_ci_u32": "s_addc_u32",
    "s_sub_co_ci_u32": "s_subb_u32",
    "v_mad_co_u64_u32": "v_mad_u64_u32",
    "v_mad_co_i64_i32": "v_mad_i64_i32",
    "v_max_num_f32": "v_max_f32",
    "v_min_num_f32": "v_min_f32",
    "v_max_num_f16": "v_max_f16",
    "v_min_num_f16": "v_min_f16",
    "v_max_num_f64": "v_max_f64",
    "v_min_num_f64": "v_min_f64",
    "v_max3_num_f32": "v_max3_f32",
    "v_min3_num_f32": "v_min3_f32",
    "v_max3_num_f16": "v_max3_f16",
    "v_min3_num_f16": "v_min3_f16",
    "v_med3_num_f32": "v_med3_f32",
    "v_med3_num_f16": "v_med3_f16",
    "v_pk_max_num_f16": "v_pk_max_f16",
    "v_pk_min_num_f16": "v_pk_min_f16",
    "v_maxmin_num_f32": "v_maxmin_f32",
    "v_minmax_num_f32": "v_minmax_f32",
    "v_maxmin_num_f16": "v_maxmin_f16",
    "v_minmax_num_f16": "v_minmax_f16",
}
# VOPD halves: GFX12 name -> GFX11 name.  LLVM 19 gives them no alias on gfx1200, but the GFX11
# pair assembled for gfx1100 and the GFX12 pair for gfx1200 are the same bytes, and each half is
# the VOP2 instruction renamed above (tests/gfx12/test_gfx12_names.py checks both)
VOPD_RENAMES = {"v_dual_max_num_f32": "v_dual_max_f32", "v_dual_min_num_f32": "v_dual_min_f32"}
# only schedule (wait counters, cache write-back/invalidate, prefetch hints): no operation
NOPS = frozenset(
    (
        "s_wait_loadcnt",
        "s_wait_storecnt",
        "s_wait_samplecnt",
        "s_wait_bvhcnt",
        "s_wait_expcnt",
        "s_wait_dscnt",
        "s_wait_kmcnt",
        "s_wait_loadcnt_dscnt",
        "s_wait_storecnt_dscnt",
        "s_wait_alu",
        "s_wait_event",
        "s_prefetch_inst",
        "s_prefetch_inst_pc_rel",
        "s_prefetch_data",
        "s_prefetch_data_pc_rel",
        "s_buffer_prefetch_data",
        "global_wb",
        "global_inv",
        "global_wbinv",
    )
)
MEMORY = {"VGLOBAL": "GLOBAL", "VSCRATCH": "SCRATCH", "VFLAT": "FLAT"}
WORKGROUP_BARRIER = 193  # the inline constant -1: the workgroup's barrier (s_barrier_signal)


def _nop(ins: Instruction) -> Instruction:
    return ins._replace(name="s_nop", encoding="SOPP", variant="", fields={"op": 0, "simm16": 0})


def _refuse(ins: Instruction, why: str):
    raise Refused("program.unsupported_instruction", f"offset {ins.offset:#x}: {ins.text} ({why})")


def _check(ins: Instruction) -> None:
    """Refuse by name the GFX12 forms whose reading is GFX11's but not GFX10's, where the family
    frontends branch on gfx11 only (they would give GFX10's reading): 16-bit VOP1/VOP2/VOPC
    operands in VGPRs 128-255 (hardware: the high halves), a VOP3P inline constant read through
    op_sel/op_sel_hi (GFX11: the constant's 32-bit value's halves), hardware registers
    through s_getreg/s_setreg but MODE's FP_ROUND/FP_DENORM bits (GFX12 renumbered them; it
    has no IEEE or DX10_CLAMP mode bits)."""
    n, enc, f = ins.name, ins.encoding, ins.fields
    if enc in ("VOP1", "VOP2", "VOPC") and "16" in n:
        if f.get("src0", 0) >= 384 or f.get("vsrc1", 0) >= 128 or (enc != "VOPC" and f.get("vdst", 0) >= 128):
            _refuse(ins, "GFX12 16-bit operand in VGPR 128-255 (a high half)")
    if enc == "VOP3P":
        sel = f.get("opsel", 0) | f.get("opsel_hi", 0) | (f.get("opsel_hi2", 0) << 2)
        for i, k in enumerate(("src0", "src1", "src2")):
            if 128 <= f.get(k, 0) <= 248 and sel >> i & 1:
                _refuse(ins, "GFX12 VOP3P inline constant read through op_sel/op_sel_hi")
    if n.startswith(("s_getreg", "s_setreg")):
        hw = f.get("simm16", 0)
        hid, off, size = hw & 0x3F, (hw >> 6) & 0x1F, ((hw >> 11) & 0x1F) + 1
        if hid != 1:  # GFX12 numbers its hardware registers anew (20/21: SCRATCH_BASE_LO/HI)
            _refuse(ins, f"GFX12 hardware register {hid}")
        if off + size > 8:
            _refuse(ins, "GFX12 MODE bits above FP_ROUND/FP_DENORM")


TTMP_FIRST, TTMP_LAST, TTMP7, TTMP8, TTMP9 = 108, 123, 115, 116, 117
_SOURCES = ("ssrc0", "ssrc1", "src0", "src1", "src2", "src0x", "src0y")
_SCALAR = _SOURCES + ("sdst", "saddr", "soffset", "sdata")


def prologue(b: Builder) -> None:
    """At the entry of every GFX12 program: TTMP7 |= TTMP8 << 16, TTMP8 = 0.  dispatch/setup.py
    puts workgroup id y in TTMP7 and z (when RSRC2.TGID_Z_EN) in TTMP8 (the runtimes write one id
    per register), and this packs them as the hardware does (y [15:0], z [31:16]).  A branch back
    to the entry runs it again to the same effect (TTMP8 is 0 then, and no instruction that
    writes a TTMP register runs: ``_check_ttmp``); TTMP8 itself is never read (refused by name)."""
    z = b.bin("shl", "u32", b.sget(TTMP8), b.const("u32", 16))
    b.sset(TTMP7, b.bin("or", "u32", b.sget(TTMP7), z))
    b.sset(TTMP8, b.const("u32", 0))


def _check_ttmp(ins: Instruction) -> None:
    """Only TTMP7 and TTMP9 (the workgroup ids) are modelled, and only as sources."""
    f = ins.fields
    for k in _SCALAR:
        v = f.get(k)
        if v is None or not TTMP_FIRST <= v <= TTMP_LAST:
            continue
        if k in _SOURCES and v in (TTMP7, TTMP9):
            continue
        _refuse(ins, "a trap temporary register other than reading TTMP7/TTMP9")
    if ins.encoding == "SMEM" and TTMP_FIRST <= 2 * f.get("sbase", 0) <= TTMP_LAST:
        _refuse(ins, "a trap temporary register other than reading TTMP7/TTMP9")
    if ins.encoding in ("VOP3", "VOP1") and ins.name.startswith(("v_cmp", "v_readlane", "v_readfirstlane")):
        if TTMP_FIRST <= f.get("vdst", 0) <= TTMP_LAST:
            _refuse(ins, "a trap temporary register other than reading TTMP7/TTMP9")


def normalize(ins: Instruction) -> Instruction:
    """``ins`` (decoded for gfx12) in GFX11's shape; ``text`` stays LLVM's GFX12 text."""
    n, enc = ins.name, ins.encoding
    _check(ins)
    _check_ttmp(ins)
    if n in NOPS:
        return _nop(ins)
    if n == "s_barrier_signal" and ins.fields.get("ssrc0") == WORKGROUP_BARRIER:
        return _nop(ins)
    if n == "s_barrier_wait" and ins.fields.get("simm16") == 0xFFFF:
        return ins._replace(name="s_barrier")
    if enc in MEMORY:
        f = dict(ins.fields)
        f["glc"] = f.get("th", 0) & 1 if "_atomic_" in n else 0
        return ins._replace(encoding=MEMORY[enc], fields=f)
    if n in RENAMES:
        return ins._replace(name=RENAMES[n])
    if enc == "VOPD":
        return ins._replace(name="::".join(VOPD_RENAMES.get(h, h) for h in n.split("::")))
    return ins


def is_gfx12(target: str) -> bool:
    return target.startswith("gfx12")


def vimage(ins: Instruction, b: Builder) -> None:
    """GFX12 VIMAGE/VSAMPLE (decoded exactly as LLVM 19 prints them, isa/memory.py): refused by
    name at run time when an active lane reaches one (``image.unsupported_descriptor``), as
    GFX11's MIMG (gfx11.mimg).  GFX12's T# (its image formats, swizzle modes and addrlib
    equations) is not checked against a primary source here, so reading it as GFX10.3's would
    guess: decision 0038.  A program whose image code no active lane reaches still lands."""
    b.effect(
        "refuse_if",
        "b1",
        b.exec(),
        why="a GFX12 image instruction (GFX12's T# layout, image formats and swizzle modes are not "
        "carried out)",
        code="image.unsupported_descriptor",
    )


# --------------------------------------------------------------- instructions GFX12 added
def _sop2_u64(op: str):
    def handle(ins, b: Builder):
        f = ins.fields
        x = read_sreg(b, f["ssrc0"], "u64", ins.literal)
        y = read_sreg(b, f["ssrc1"], "u64", ins.literal)
        write_sdst(b, f["sdst"], b.bin(op, "u64", x, y))  # SCC unchanged

    return handle


def _valu_f32(vname: str, *order: int):
    """A scalar float instruction as VALU instruction ``vname`` computes it (the SALU float ops
    follow MODE's denormal and rounding bits as the VALU does: RDNA3.5/RDNA4 ISA guides) over
    the sources in ``order`` (0: SSRC0, 1: SSRC1, 2: SDST's old value, 3: the literal K), without
    omod or clamp; the result goes to SDST."""
    from .vector_alu import NO_DENORM, NO_FIN, OPS, OWN_NAN, _ieee_nan

    dt, sts, fn = OPS[vname]

    def handle(ins, b: Builder):
        f = ins.fields
        codes = {0: f.get("ssrc0"), 1: f.get("ssrc1"), 2: f.get("sdst"), 3: 255}
        srcs = [read_sreg(b, codes[k], t, ins.literal) for k, t in zip(order, sts)]
        if vname not in NO_DENORM and vname not in NO_FIN:
            srcs = [b.emit("fin", v.type, v) if is_float(v.type) else v for v in srcs]
        r = fn(b, dt, *srcs)
        if is_float(r.type) and vname not in NO_DENORM:
            r = _ieee_nan(b, r, () if vname in OWN_NAN else srcs)
            r = b.emit("fout", r.type, r)
        if r.type != dt and BITS[r.type] == BITS[dt]:
            r = b.bitcast(dt, r)
        write_sdst(b, f["sdst"], b.bitcast("u32", r))

    return handle


def _vs_f32(vname: str):
    """GFX12's v_s_<op>_f32 (VOP3): VALU instruction ``vname`` on one value, SRC0 (abs/neg as
    VOP3 gives them), written to the SGPR in VDST (NULL: nowhere).  clamp and omod are refused
    by name (no such form is checked here)."""
    from .vector_alu import OPS, _ieee_nan

    dt, _, fn = OPS[vname]

    def handle(ins, b: Builder):
        f = ins.fields
        if f.get("clamp") or f.get("omod") or f.get("opsel"):
            unsupported("clamp, omod or op_sel on a v_s_* instruction")
        x = read_sreg(b, f["src0"], "f32", ins.literal)
        if f.get("abs", 0) & 1:
            x = b.un("fabs", "f32", x)
        if f.get("neg", 0) & 1:
            x = b.un("fneg", "f32", x)
        x = b.emit("fin", "f32", x)
        r = b.emit("fout", "f32", _ieee_nan(b, fn(b, dt, x), (x,)))
        d = f["vdst"]  # a GFX12 scalar code (NULL 124, M0 125): gfx11.normalize swaps no VDST here
        if d == 125:
            d = 124  # M0, in the frontends' (GFX10) numbering
        elif d == 124:
            return  # NULL
        write_sdst(b, d, b.bitcast("u32", r))

    return handle


def _scmp_f32(cond: str):
    """s_cmp_<cond>_f32: SCC = the compare of SSRC0 and SSRC1 as v_cmp_<cond>_f32 makes it."""
    from .vector_alu import CMP_F

    def handle(ins, b: Builder):
        f = ins.fields
        x, y = (b.emit("fin", "f32", read_sreg(b, f[k], "f32", ins.literal)) for k in ("ssrc0", "ssrc1"))
        set_scc(b, b.cmp(CMP_F[cond], "f32", x, y))

    return handle


# name -> semantics (ins, Builder); frontend/program.py looks here before the encoding's frontend
HANDLERS = {
    "s_add_nc_u64": _sop2_u64("add"),
    "s_sub_nc_u64": _sop2_u64("sub"),
    "s_mul_u64": _sop2_u64("mul"),
    # the f32 scalar float instructions of gfx1150/1151/1152 and GFX12 (the f16 ones, the
    # min/max and s_cvt_*_f16 forms stay refused by name: what the high half of SDST gets, and
    # the NaN rules of the _num/IEEE-2019 forms, are not checked here)
    "s_add_f32": _valu_f32("v_add_f32", 0, 1),
    "s_sub_f32": _valu_f32("v_sub_f32", 0, 1),
    "s_mul_f32": _valu_f32("v_mul_f32", 0, 1),
    "s_fmac_f32": _valu_f32("v_fma_f32", 0, 1, 2),
    "s_fmaak_f32": _valu_f32("v_fma_f32", 0, 1, 3),
    "s_fmamk_f32": _valu_f32("v_fma_f32", 0, 3, 1),
    "s_ceil_f32": _valu_f32("v_ceil_f32", 0),
    "s_floor_f32": _valu_f32("v_floor_f32", 0),
    "s_trunc_f32": _valu_f32("v_trunc_f32", 0),
    "s_rndne_f32": _valu_f32("v_rndne_f32", 0),
    "s_cvt_f32_i32": _valu_f32("v_cvt_f32_i32", 0),
    "s_cvt_f32_u32": _valu_f32("v_cvt_f32_u32", 0),
    "s_cvt_i32_f32": _valu_f32("v_cvt_i32_f32", 0),
    "s_cvt_u32_f32": _valu_f32("v_cvt_u32_f32", 0),
    # GFX12's VALU transcendentals with an SGPR result
    "v_s_rcp_f32": _vs_f32("v_rcp_f32"),
    "v_s_rsq_f32": _vs_f32("v_rsq_f32"),
    "v_s_sqrt_f32": _vs_f32("v_sqrt_f32"),
    "v_s_exp_f32": _vs_f32("v_exp_f32"),
    "v_s_log_f32": _vs_f32("v_log_f32"),
}
HANDLERS.update({f"s_cmp_{c}_f32": _scmp_f32(c) for c in ("lt", "eq", "le", "gt", "lg", "ge", "o", "u")})
HANDLERS.update({f"s_cmp_{c}_f32": _scmp_f32(c) for c in ("nge", "nlg", "ngt", "nle", "neq", "nlt")})


def _refused(ins, b: Builder):
    unsupported("a scalar float instruction without semantics here")


# the other scalar float instructions (gfx1150's and GFX12's tables): refused by name here, so
# that no family frontend's prefix rule reads them as integer ones (s_max_f32 as s_max_u32)
_SALU_FLOAT_REFUSED = (
    ["s_add_f16", "s_sub_f16", "s_mul_f16", "s_fmac_f16", "s_max_f16", "s_min_f16", "s_max_f32", "s_min_f32"]
    + ["s_max_num_f16", "s_min_num_f16", "s_max_num_f32", "s_min_num_f32"]
    + ["s_maximum_f16", "s_minimum_f16", "s_maximum_f32", "s_minimum_f32"]
    + ["s_ceil_f16", "s_floor_f16", "s_trunc_f16", "s_rndne_f16"]
    + ["s_cvt_f16_f32", "s_cvt_f32_f16", "s_cvt_hi_f32_f16", "s_cvt_pk_rtz_f16_f32"]
    + ["v_s_rcp_f16", "v_s_rsq_f16", "v_s_sqrt_f16", "v_s_exp_f16", "v_s_log_f16"]
    + [f"s_cmp_{c}_f16" for c in ("lt", "eq", "le", "gt", "lg", "ge", "o", "u")]
    + [f"s_cmp_{c}_f16" for c in ("nge", "nlg", "ngt", "nle", "neq", "nlt")]
)
HANDLERS.update({n: _refused for n in _SALU_FLOAT_REFUSED})


# --------------------------------------------------------------------------------- VBUFFER
# GFX12's buffer instructions (decision 0027, "VBUFFER"; the V# layout and its sources are in
# docs/gfx12-buffer.md).  The loads, stores and atomics run here: the untyped ones' GFX12
# name -> the GFX10 kind frontend/vector_memory.py's load/store/atomic helpers take.
# GFX12 suffixes are GFX11's (global_/scratch_/flat_/buffer_): the same tables.
VB_LOADS, VB_STORES, VB_ATOMICS = gfx11.LOAD_KINDS, gfx11.STORE_KINDS, gfx11.ATOMIC_KINDS
# V# word 3 fields (RDNA4; docs/gfx12-buffer.md)
W3_ADD_TID = 1 << 23
W3_COMPRESSION = 0xF << 24  # WRITE_COMPRESS_ENABLE [24], COMPRESSION_EN [25], ACCESS_MODE [27:26]
W3_TYPE = 0x3 << 30
GFX12_NULL = 124  # scalar operand code (GFX10 numbers NULL 125, M0 124)


def _vb_kind(name: str) -> tuple[str, str]:
    """(verb, GFX10 kind) of a VBUFFER instruction, the kind of a typed one ``format:<channels>``
    or ``format_d16:<channels>``; refused by name where no semantics are written."""
    prefix, _, rest = name.partition("_")
    for verb, table in (("load_", VB_LOADS), ("store_", VB_STORES), ("atomic_", VB_ATOMICS)):
        if prefix == "buffer" and rest.startswith(verb) and rest[len(verb) :] in table:
            return verb[:-1], table[rest[len(verb) :]]
    for verb in ("load_", "store_"):
        for d16 in ("", "d16_"):
            form = f"{verb}{d16}format_"
            if rest.startswith(form) and rest[len(form) :] in ("x", "xy", "xyz", "xyzw"):
                chans = rest[len(form) :]
                if d16 and chans not in ("xy", "xyzw"):
                    # d16_x / d16_xyz: what the last VGPR's other half gets is not established
                    unsupported("d16 buffer format access of an odd number of components")
                return verb[:-1], f"format{'_d16' if d16 else ''}:{chans}"
    unsupported("a GFX12 buffer instruction without semantics here")
    raise AssertionError


@cache
def format_map() -> dict[int, int]:
    """GFX12 buffer format number -> GFX10's number of the format of the same name (LLVM 19's
    BUF_FMT names in isa/tables/memory_gfx1200.json and memory_gfx1030.json; 1, the default
    BUF_FMT_8_UNORM that LLVM prints as no format, is 1 on both).  The V#'s FORMAT and MTBUF's
    format field number formats alike (Mesa writes the V# FORMAT from the same format table)."""
    from ..isa.memory import load_memory_table

    n10 = {n: i for i, n in enumerate(load_memory_table("gfx1030")["names"]["format"])}
    out = {1: 1}
    for i, n in enumerate(load_memory_table("gfx1200")["names"]["format"]):
        if n.startswith("format:[BUF_FMT_") and n != "format:[BUF_FMT_INVALID]" and n in n10:
            out[i] = n10[n]
    return out


def _vbuffer(ins, b: Builder) -> None:
    """A GFX12 buffer load, store or atomic (MUBUF's semantics, GFX12's V#):

    address = V#.base + SOFFSET + STRIDE * index + offset, index = (IDXEN ? VGPR[VADDR] : 0) +
    (ADD_TID_ENABLE ? lane : 0), offset = (OFFEN ? VGPR[VADDR + IDXEN] : 0) + the instruction's
    offset.  Range checking is GFX11+'s (Mesa ac_descriptors.c), per dword for loads and stores
    (each dword's payload its bytes, at most 4) and all or nothing for an atomic (4 or 8 bytes):
    OOB_SELECT 0: index >= NUM_RECORDS or offset + payload > STRIDE; 1: index >= NUM_RECORDS;
    2: NUM_RECORDS == 0; 3: STRIDE * index + offset + payload > NUM_RECORDS.  An out-of-range
    load gives 0, an out-of-range store or atomic writes nothing (an atomic returns 0).

    Typed accesses (``buffer_*_format_*`` with the V#'s FORMAT, ``tbuffer_*`` with the
    instruction's) run as GFX10's (frontend/vector_memory.py ``_typed``, frontend/formats.py) on
    the GFX10 number of the format of the same name (``format_map``); an element is in range when
    its first byte is (the payload of rule 0/3 one byte) and refused by name when its last is not.

    Refused by name, statically: TFE, a 24-bit offset with bit 23 set.  At run
    time, for an active lane: a swizzled V# (SWIZZLE_ENABLE), compression (word 3 [27:24]),
    TYPE not 0 (a buffer), an in-range access through a V# whose FORMAT is 0 (INVALID), and a
    raw (OOB_SELECT 3) access whose range check would come out otherwise if SOFFSET counted in
    the offset (which of the two hardware does is not established here)."""
    from . import formats
    from .gfx11 import _swap
    from .scalar_memory import buffer_base
    from .vector_memory import LOADS, STORES, _atomic, _load, _store, _typed, translate

    if ins.encoding != "VBUFFER":
        # HANDLERS is looked up by name for every target, and GFX10/GFX11 MUBUF/MTBUF share
        # some of these names (buffer_load_format_x, tbuffer_*): theirs is the MUBUF frontend
        return translate(ins, b)
    f = ins.fields
    verb, kind = _vb_kind(ins.name)
    if f.get("tfe"):
        unsupported("TFE on a GFX12 buffer instruction")
    off = f.get("offset", 0) & 0xFFFFFF
    if off & 0x800000:
        unsupported("a GFX12 buffer offset with bit 23 set")
    ex = b.exec()
    r = f["srsrc"]
    w0, w1, w2, w3 = (b.sget(r + j) for j in range(4))
    base = buffer_base(b, w0, w1)  # word 0, word 1 [15:0]: the 48-bit base, canonical
    stride = _field(b, w1, 16, 14)
    nrec = w2
    oob_sel = _field(b, w3, 28, 2)
    code = "program.unsupported_instruction"
    bad = b.cmp("ne", "u32", b.bin("and", "u32", w1, C(b, "u32", 0xC0000000)), C(b, "u32", 0))
    bad = b.bin(
        "or",
        "b1",
        bad,
        b.cmp("ne", "u32", b.bin("and", "u32", w3, C(b, "u32", W3_COMPRESSION | W3_TYPE)), C(b, "u32", 0)),
    )
    _refuse_if(b, code, bad, "a GFX12 V# with SWIZZLE_ENABLE, compression or a TYPE other than buffer")
    so = _swap(f.get("soffset", GFX12_NULL))  # GFX12's NULL 124 / M0 125 -> GFX10's M0 124 / NULL 125
    soff = b.cvt("u64", read_sreg(b, so, "u32", ins.literal))
    idx = b.vget(f["vaddr"]) if f.get("idxen") else C(b, "u32", 0)
    add_tid = b.cmp("ne", "u32", b.bin("and", "u32", w3, C(b, "u32", W3_ADD_TID)), C(b, "u32", 0))
    idx = b.select(add_tid, b.bin("add", "u32", idx, b.lane_id()), idx)
    voff = C(b, "u32", off)
    if f.get("offen"):
        voff = b.bin("add", "u32", voff, b.vget(f["vaddr"] + (1 if f.get("idxen") else 0)))
    rec = b.bin("mul", "u64", b.cvt("u64", stride), b.cvt("u64", idx))
    idx_oob = b.cmp("ge", "u32", idx, nrec)
    fmt0 = b.cmp("eq", "u32", _field(b, w3, 12, 6), C(b, "u32", 0))

    def locate(o: Value, payload: int, typed: bool = False) -> tuple[Value, Value]:
        """(address, out of range) of ``payload`` bytes at byte offset ``o`` of the element."""
        o64 = b.cvt("u64", o)
        end = b.bin("add", "u64", o64, C(b, "u64", payload))
        rel = b.bin("add", "u64", rec, o64)
        raw_end = b.bin("add", "u64", rel, C(b, "u64", payload))
        nrec64 = b.cvt("u64", nrec)
        raw = b.cmp("gt", "u64", raw_end, nrec64)
        oob = _by_sel(
            b,
            oob_sel,
            b.bin("or", "b1", idx_oob, b.cmp("gt", "u64", end, b.cvt("u64", stride))),
            idx_oob,
            b.cmp("eq", "u32", nrec, C(b, "u32", 0)),
            raw,
        )
        with_soff = b.cmp("gt", "u64", b.bin("add", "u64", raw_end, soff), nrec64)
        unclear = b.bin(
            "and", "b1", b.cmp("eq", "u32", oob_sel, C(b, "u32", 3)), b.bin("xor", "b1", raw, with_soff)
        )
        _refuse_if(
            b, code, unclear, "a raw GFX12 buffer access whose range check depends on whether SOFFSET counts"
        )
        if not typed:  # a typed access refuses an unknown format itself
            _refuse_if(
                b,
                code,
                b.bin("and", "b1", fmt0, b.un("not", "b1", oob)),
                "an in-range GFX12 buffer access through a V# whose FORMAT is 0 (INVALID)",
            )
        return b.bin("add", "u64", b.bin("add", "u64", base, soff), rel), oob

    if kind.startswith("format"):
        form, chans = kind.split(":")
        fv = C(b, "u32", f["format"]) if ins.name.startswith("tbuffer") else _field(b, w3, 12, 6)
        fv10 = formats.lut(b, fv, format_map(), 7, "u32")
        never = b.cmp("ne", "u32", C(b, "u32", 0), C(b, "u32", 0))
        target = b.target
        b.target = "gfx1030"  # formats.Format reads GFX10's table for a GFX10 target only
        try:
            _typed(
                b,
                ins,
                verb,
                len(chans),
                fv10,
                w3,
                never,
                lambda o: locate(o, 1, True),
                voff,
                form != "format",
            )
        finally:
            b.target = target
        return
    if verb == "atomic":
        addr, oob = locate(voff, 8 if kind.endswith("_x2") else 4)
        targets = [("global", [addr], [b.bin("and", "b1", ex, b.un("not", "b1", oob))])]
        returns = bool(f.get("th", 0) & 1)  # TH_ATOMIC_RETURN
        _atomic(b, ins, kind, targets, f["vdata"], f["vdata"], returns)
        return
    nbytes, words, _ = (LOADS if verb == "load" else STORES)[kind]
    addrs, masks = [], []
    for j in range(words):
        a, oob = locate(b.bin("add", "u32", voff, C(b, "u32", 4 * j)), min(4, nbytes))
        addrs.append(a)
        masks.append(b.bin("and", "b1", ex, b.un("not", "b1", oob)))
    targets = [("global", addrs, masks)]
    if verb == "load":
        _load(b, ins, kind, targets, f["vdata"])
    else:
        _store(b, ins, kind, targets, f["vdata"])


def _field(b: Builder, x: Value, lo: int, n: int) -> Value:
    return b.bin("and", "u32", b.bin("shr", "u32", x, C(b, "u32", lo)), C(b, "u32", (1 << n) - 1))


def _by_sel(b: Builder, sel: Value, *cases: Value) -> Value:
    out = cases[-1]
    for k in range(len(cases) - 2, -1, -1):
        out = b.select(b.cmp("eq", "u32", sel, C(b, "u32", k)), cases[k], out)
    return out


def _refuse_if(b: Builder, code: str, cond: Value, why: str) -> None:
    b.effect("refuse_if", "b1", b.bin("and", "b1", b.exec(), cond), why=why, code=code)


for _verb, _table in (("load", VB_LOADS), ("store", VB_STORES), ("atomic", VB_ATOMICS)):
    HANDLERS.update({f"buffer_{_verb}_{k}": _vbuffer for k in _table})
# the typed ones, and the rest of LLVM 19's VBUFFER mnemonics (refused by name by _vbuffer:
# d16_hi format accesses, float/packed/clamped atomics: no semantics written)
_VB_REFUSED = [
    f"{p}_{v}_{d}format_{c}"
    for p in ("buffer", "tbuffer")
    for v in ("load", "store")
    for d in ("", "d16_")
    for c in ("x", "xy", "xyz", "xyzw")
] + ["buffer_load_d16_hi_format_x", "buffer_store_d16_hi_format_x"]
_VB_REFUSED += [
    f"buffer_atomic_{k}"
    for k in (
        "add_f32",
        "max_num_f32",
        "min_num_f32",
        "pk_add_bf16",
        "pk_add_f16",
        "cond_sub_u32",
        "sub_clamp_u32",
    )
]
HANDLERS.update({n: _vbuffer for n in _VB_REFUSED})
