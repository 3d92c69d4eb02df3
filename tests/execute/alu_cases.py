"""Differential cases: every arithmetic VALU opcode of gfx1030 with its reference (alu_ref).

A case is: assembly (``{D}`` destination, ``{A}/{B}/{C}`` sources: v[16:17], v[10:11], v[12:13],
v[14:15] or their low register for 32/16-bit operands), operand kinds for the generators, and a
reference ``ref(m, a, b, c, d, vcc) -> {"d": bits, "vcc": bit, "s": bit, "exec": bit}``
over one lane's raw 64-bit operand values.  Outputs a case names are compared; ``tol`` is the
documented bound for approximate ops (ULPs of the result type, or an absolute bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import alu_ref as R
from alu_ref import INF, fbits, fval, ibits, ival, rnd

M16, M32, M64 = 0xFFFF, 0xFFFFFFFF, (1 << 64) - 1


@dataclass
class Case:
    asm: str
    kinds: tuple  # operand kinds of A, B, C (generators)
    ref: object
    out: tuple = ("d",)
    dst: str = "b32"  # b16 (low half compared whole: high half must be kept), b32, b64
    tol: object = None  # ("ulp", n, type) | ("abs", x, type, limit) | None (bit-exact)
    float_mode: bool = True  # draw MODE denormal/IEEE/DX10 settings
    vcc_in: bool = False
    name: str = ""
    opcode: str = ""
    target: str = "gfx1030"


CASES: dict[str, Case] = {}


def add(name, asm, kinds, ref, opcode=None, **kw):
    c = Case(asm, tuple(kinds), ref, name=name, opcode=opcode or name.split(":")[0], **kw)
    CASES[name] = c
    return c


def lo16(x):
    return x & M16


def hi16(x):
    return (x >> 16) & M16


def keep_hi(d, r16):
    return (d & 0xFFFF0000) | (r16 & M16)


# --------------------------------------------------------------------------- float op builders
def fl(t, bits_of, x, m):
    return m.fin(fval(bits_of, t), t)


def fout(m, r, t):
    return fbits(m.fout(r, t), t)


def dst_of(t):
    return {
        "f16": "b16",
        "i16": "b16",
        "u16": "b16",
        "f32": "b32",
        "u32": "b32",
        "i32": "b32",
        "f64": "b64",
        "u64": "b64",
        "i64": "b64",
    }[t]


def wrap(t, r_bits, d):
    return keep_hi(d, r_bits) if t in ("f16", "i16", "u16") else r_bits


def ffun(t, n, fn, dt=None, flush_out=True, flush_in=True, quiets=True):
    """Float op of n sources of type t: fn(m, *values, raws=...) -> float (or int for int dt);
    ``quiets``: a NaN result from an operand is quieted under MODE.IEEE (Mode.fout)."""
    dt = dt or t

    def ref(m, a, b, c, d, vcc):
        raws = (a, b, c)[:n]
        vals = [m.fin(fval(r, t), t) if flush_in else fval(r, t) for r in raws]
        r = fn(m, *vals, raws=raws)
        if dt in R.FMT:
            r = fbits(m.fout(r, dt, quiets), dt) if flush_out else fbits(r, dt)
        else:
            r = ibits(r, dt)
        return {"d": wrap(dt, r, d)}

    return ref


def f2(t, fn, **kw):
    return ffun(t, 2, lambda m, x, y, raws: fn(x, y), **kw)


def snans(raws, t):
    return [R.snan(r, t) for r in raws]


FLOATS = ("f16", "f32", "f64")


def reg(t):
    return "{A}", "{B}", "{C}"


# ================================================================================= float cases
for t in FLOATS:
    sfx = "_" + t
    k2, k3 = (t, t), (t, t, t)
    add(
        "v_add" + sfx,
        "v_add%s {D}, {A}, {B}" % sfx,
        k2,
        f2(t, lambda x, y, t=t: R.f_add(x, y, t)),
        dst=dst_of(t),
    )
    add(
        "v_mul" + sfx,
        "v_mul%s {D}, {A}, {B}" % sfx,
        k2,
        f2(t, lambda x, y, t=t: R.f_mul(x, y, t)),
        dst=dst_of(t),
    )
    add(
        "v_fma" + sfx,
        "v_fma%s {D}, {A}, {B}, {C}" % sfx,
        k3,
        ffun(t, 3, lambda m, x, y, z, raws, t=t: R.f_fma(x, y, z, t)),
        dst=dst_of(t),
    )
    add(
        "v_min" + sfx,
        "v_min%s {D}, {A}, {B}" % sfx,
        k2,
        ffun(t, 2, lambda m, x, y, raws, t=t: R.f_min(x, y, m, R.snan_list(raws, t))),
        dst=dst_of(t),
    )
    add(
        "v_max" + sfx,
        "v_max%s {D}, {A}, {B}" % sfx,
        k2,
        ffun(t, 2, lambda m, x, y, raws, t=t: R.f_max(x, y, m, R.snan_list(raws, t))),
        dst=dst_of(t),
    )
    add(
        "v_ldexp" + sfx,
        "v_ldexp%s {D}, {A}, {B}" % sfx,
        (t, "i16" if t == "f16" else "exp"),
        lambda m, a, b, c, d, vcc, t=t: {
            "d": wrap(
                t, fout(m, R.f_ldexp(m.fin(fval(a, t), t), ival(b, "i16" if t == "f16" else "i32"), t), t), d
            )
        },
        dst=dst_of(t),
    )
    for op, fn in (("floor", math.floor), ("ceil", math.ceil), ("trunc", math.trunc), ("rndne", round)):
        add(
            "v_%s%s" % (op, sfx),
            "v_%s%s {D}, {A}" % (op, sfx),
            (t,),
            ffun(t, 1, lambda m, x, raws, fn=fn: R.f_round(x, fn)),
            dst=dst_of(t),
        )
    add(
        "v_fract" + sfx,
        "v_fract%s {D}, {A}" % sfx,
        (t,),
        ffun(t, 1, lambda m, x, raws, t=t: R.f_fract(x, t)),
        dst=dst_of(t),
    )
    add(
        "v_frexp_mant" + sfx,
        "v_frexp_mant%s {D}, {A}" % sfx,
        (t,),
        ffun(t, 1, lambda m, x, raws: math.frexp(x)[0] if math.isfinite(x) else x),
        dst=dst_of(t),
    )
    et = "i16" if t == "f16" else "i32"
    add(
        "v_frexp_exp_%s%s" % (et, sfx),
        "v_frexp_exp_%s%s {D}, {A}" % (et, sfx),
        (t,),
        ffun(t, 1, lambda m, x, raws: math.frexp(x)[1] if math.isfinite(x) else 0, dt=et),
        dst=dst_of(et),
    )
    # approximate ops: the documented bound
    approx = {"sqrt": (math.sqrt, 1), "rcp": (lambda x: 1 / x, 1), "rsq": (lambda x: 1 / math.sqrt(x), 1)}
    for op, (fn, u) in approx.items():
        add(
            "v_%s%s" % (op, sfx),
            "v_%s%s {D}, {A}" % (op, sfx),
            (t,),
            ffun(t, 1, lambda m, x, raws, fn=fn, t=t: R.f_approx(fn, x, t)),
            dst=dst_of(t),
            tol=("ulp", u, t),
        )
    add(
        "v_div_fixup" + sfx,
        "v_div_fixup%s {D}, {A}, {B}, {C}" % sfx,
        k3,
        ffun(t, 3, lambda m, q, den, num, raws, t=t: R.div_fixup(q, den, num, t)),
        dst=dst_of(t),
    )

for t in ("f16", "f32"):
    sfx = "_" + t
    add(
        "v_sub" + sfx,
        "v_sub%s {D}, {A}, {B}" % sfx,
        (t, t),
        f2(t, lambda x, y, t=t: R.f_sub(x, y, t)),
        dst=dst_of(t),
    )
    add(
        "v_subrev" + sfx,
        "v_subrev%s {D}, {A}, {B}" % sfx,
        (t, t),
        f2(t, lambda x, y, t=t: R.f_sub(y, x, t)),
        dst=dst_of(t),
    )
    add(
        "v_fmac" + sfx,
        "v_fmac%s {D}, {A}, {B}" % sfx,
        (t, t, t),
        lambda m, a, b, c, d, vcc, t=t: ffun(t, 3, lambda m, x, y, z, raws: R.f_fma(x, y, z, t))(
            m, a, b, d, d, vcc
        ),
        dst=dst_of(t),
    )
    add(
        "v_fmamk" + sfx,
        "v_fmamk%s {D}, {A}, %s, {B}" % (sfx, "0x4248" if t == "f16" else "0x40490fdb"),
        (t, t),
        ffun(
            t, 2, lambda m, x, y, raws, t=t: R.f_fma(x, fval(0x4248 if t == "f16" else 0x40490FDB, t), y, t)
        ),
        dst=dst_of(t),
    )
    add(
        "v_fmaak" + sfx,
        "v_fmaak%s {D}, {A}, {B}, %s" % (sfx, "0xc248" if t == "f16" else "0xc0490fdb"),
        (t, t),
        ffun(
            t, 2, lambda m, x, y, raws, t=t: R.f_fma(x, y, fval(0xC248 if t == "f16" else 0xC0490FDB, t), t)
        ),
        dst=dst_of(t),
    )
    for op in ("min3", "max3", "med3"):
        add(
            "v_%s%s" % (op, sfx),
            "v_%s%s {D}, {A}, {B}, {C}" % (op, sfx),
            (t, t, t),
            ffun(t, 3, lambda m, x, y, z, raws, op=op, t=t: R.f_mm3(op, x, y, z, m, R.snan_list(raws, t))),
            dst=dst_of(t),
        )
    trans = {"exp": lambda x: x if x != x else (2.0**x if x < 1024 else INF), "log": R.log2}
    for op, fn in trans.items():
        add(
            "v_%s%s" % (op, sfx),
            "v_%s%s {D}, {A}" % (op, sfx),
            (t,),
            ffun(t, 1, lambda m, x, raws, fn=fn, t=t: R.f_approx(fn, x, t)),
            dst=dst_of(t),
            tol=("ulp", 1, t),
        )
    for op, fn in (("sin", math.sin), ("cos", math.cos)):
        add(
            "v_%s%s" % (op, sfx),
            "v_%s%s {D}, {A}" % (op, sfx),
            (t,),
            ffun(t, 1, lambda m, x, raws, fn=fn, t=t: R.f_trig(fn, x, t)),
            dst=dst_of(t),
            tol=("abs", 2.0**-20 if t == "f32" else 2.0**-9, t, 256.0),
        )

add(
    "v_rcp_iflag_f32",
    "v_rcp_iflag_f32 {D}, {A}",
    ("f32",),
    ffun("f32", 1, lambda m, x, raws: R.f_approx(lambda v: 1 / v, x, "f32")),
    tol=("ulp", 1, "f32"),
)
add(
    "v_mul_legacy_f32",
    "v_mul_legacy_f32 {D}, {A}, {B}",
    ("f32", "f32"),
    f2("f32", lambda x, y: 0.0 if x == 0 or y == 0 else R.f_mul(x, y, "f32")),
)
add(
    "v_fma_legacy_f32",
    "v_fma_legacy_f32 {D}, {A}, {B}, {C}",
    ("f32",) * 3,
    ffun("f32", 3, lambda m, x, y, z, raws: z if x == 0 or y == 0 else R.f_fma(x, y, z, "f32")),
)
add(
    "v_fmac_legacy_f32",
    "v_fmac_legacy_f32 {D}, {A}, {B}",
    ("f32",) * 3,
    lambda m, a, b, c, d, vcc: ffun(
        "f32", 3, lambda m, x, y, z, raws: z if x == 0 or y == 0 else R.f_fma(x, y, z, "f32")
    )(m, a, b, d, d, vcc),
)
add(
    "v_sub_f64:neg",
    "v_add_f64 {D}, {A}, -{B}",
    ("f64", "f64"),
    f2("f64", lambda x, y: R.f_add(x, -y, "f64")),
    dst="b64",
    opcode="v_add_f64",
)
add(
    "v_cubeid_f32",
    "v_cubeid_f32 {D}, {A}, {B}, {C}",
    ("f32",) * 3,
    ffun("f32", 3, lambda m, x, y, z, raws: R.cube("id", x, y, z)),
)
# cubesc/tc select a (negated) operand: a NaN as it is, whatever MODE (docs: not determined)
add(
    "v_cubesc_f32",
    "v_cubesc_f32 {D}, {A}, {B}, {C}",
    ("f32",) * 3,
    ffun("f32", 3, lambda m, x, y, z, raws: R.cube("sc", x, y, z), quiets=False),
)
add(
    "v_cubetc_f32",
    "v_cubetc_f32 {D}, {A}, {B}, {C}",
    ("f32",) * 3,
    ffun("f32", 3, lambda m, x, y, z, raws: R.cube("tc", x, y, z), quiets=False),
)
add(
    "v_cubema_f32",
    "v_cubema_f32 {D}, {A}, {B}, {C}",
    ("f32",) * 3,
    ffun("f32", 3, lambda m, x, y, z, raws: R.cube("ma", x, y, z)),
)
add(
    "v_trig_preop_f64",
    "v_trig_preop_f64 {D}, {A}, {B}",
    ("f64", "seg"),
    lambda m, a, b, c, d, vcc: {"d": fbits(R.trig_preop(fval(a, "f64"), b & M32), "f64")},
    dst="b64",
    float_mode=False,
)

# modifiers: abs/neg, clamp (DX10_CLAMP decides NaN), omod, op_sel
add(
    "v_add_f32:mods",
    "v_add_f32_e64 {D}, -|{A}|, |{B}| clamp",
    ("f32", "f32"),
    lambda m, a, b, c, d, vcc: {
        "d": fbits(
            m.fout(
                R.clamp01(
                    R.f_add(-abs(m.fin(fval(a, "f32"), "f32")), abs(m.fin(fval(b, "f32"), "f32")), "f32"), m
                ),
                "f32",
            ),
            "f32",
        )
    },
    opcode="v_add_f32",
)
add(
    "v_mul_f32:omod",
    "v_mul_f32_e64 {D}, {A}, -{B} mul:4",
    ("f32", "f32"),
    lambda m, a, b, c, d, vcc: {
        "d": fbits(
            m.fout(
                m.omod(
                    R.f_mul(m.fin(fval(a, "f32"), "f32"), -m.fin(fval(b, "f32"), "f32"), "f32"), 4.0, "f32"
                ),
                "f32",
            ),
            "f32",
        )
    },
    opcode="v_mul_f32",
)
# SDWA has omod too (it was dropped: a silently wrong result)
add(
    "v_add_f32:sdwa_omod",
    "v_add_f32_sdwa {D}, {A}, {B} mul:2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD",
    ("f32", "f32"),
    lambda m, a, b, c, d, vcc: {
        "d": fbits(
            m.fout(
                m.omod(
                    R.f_add(m.fin(fval(a, "f32"), "f32"), m.fin(fval(b, "f32"), "f32"), "f32"), 2.0, "f32"
                ),
                "f32",
            ),
            "f32",
        )
    },
    opcode="v_add_f32",
)
add(
    "v_mul_f32:sdwa_omod_clamp",
    "v_mul_f32_sdwa {D}, {A}, {B} clamp div:2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD",
    ("f32", "f32"),
    lambda m, a, b, c, d, vcc: {
        "d": fbits(
            m.fout(
                R.clamp01(
                    m.omod(
                        R.f_mul(m.fin(fval(a, "f32"), "f32"), m.fin(fval(b, "f32"), "f32"), "f32"), 0.5, "f32"
                    ),
                    m,
                ),
                "f32",
            ),
            "f32",
        )
    },
    opcode="v_mul_f32",
)
add(
    "v_fma_f64:mods",
    "v_fma_f64 {D}, -{A}, |{B}|, {C} clamp div:2",
    ("f64",) * 3,
    lambda m, a, b, c, d, vcc: {
        "d": fbits(
            m.fout(
                R.clamp01(
                    m.omod(
                        R.f_fma(
                            -m.fin(fval(a, "f64"), "f64"),
                            abs(m.fin(fval(b, "f64"), "f64")),
                            m.fin(fval(c, "f64"), "f64"),
                            "f64",
                        ),
                        0.5,
                        "f64",
                    ),
                    m,
                ),
                "f64",
            ),
            "f64",
        )
    },
    dst="b64",
    opcode="v_fma_f64",
)
add(
    "v_fma_f16:opsel",
    "v_fma_f16 {D}, {A}, -{B}, {C} op_sel:[1,0,1,1] clamp",
    ("f16",) * 3,
    lambda m, a, b, c, d, vcc: {
        "d": (d & M16)
        | (
            fbits(
                m.fout(
                    R.clamp01(
                        R.f_fma(
                            m.fin(fval(hi16(a), "f16"), "f16"),
                            -m.fin(fval(b, "f16"), "f16"),
                            m.fin(fval(hi16(c), "f16"), "f16"),
                            "f16",
                        ),
                        m,
                    ),
                    "f16",
                ),
                "f16",
            )
            << 16
        )
    },
    opcode="v_fma_f16",
)
add(
    "v_max3_f16:opsel",
    "v_max3_f16 {D}, {A}, {B}, {C} op_sel:[0,1,1,1]",
    ("f16",) * 3,
    lambda m, a, b, c, d, vcc: {
        "d": (d & M16)
        | fbits(
            m.fout(
                R.f_mm3(
                    "max3",
                    m.fin(fval(a & M16, "f16"), "f16"),
                    m.fin(fval(hi16(b), "f16"), "f16"),
                    m.fin(fval(hi16(c), "f16"), "f16"),
                    m,
                    [R.snan(a & M16, "f16"), R.snan(hi16(b), "f16"), R.snan(hi16(c), "f16")],
                ),
                "f16",
            ),
            "f16",
        )
        << 16
    },
    opcode="v_max3_f16",
)
add(
    "v_mad_u32_u16:opsel",
    "v_mad_u32_u16 {D}, {A}, {B}, {C} op_sel:[1,0,0,0]",
    ("u16", "u16", "u32"),
    lambda m, a, b, c, d, vcc: {"d": (hi16(a) * (b & M16) + c) & M32},
    float_mode=False,
    opcode="v_mad_u32_u16",
)


# ---------------------------------------------------------------------------- conversions
def cvt(name, st, dt, fn, flush=True, **kw):
    add(
        name,
        "%s {D}, {A}" % name,
        (st,),
        ffun(st, 1, lambda m, x, raws: fn(x), dt=dt, flush_out=flush, flush_in=flush)
        if st in R.FMT
        else (
            lambda m, a, b, c, d, vcc: {
                "d": wrap(dt, fout(m, fn(ival(a, st)), dt) if dt in R.FMT else ibits(fn(ival(a, st)), dt), d)
            }
        ),
        dst=dst_of(dt),
        **kw,
    )


cvt("v_cvt_f32_i32", "i32", "f32", lambda v: rnd(v, "f32"))
cvt("v_cvt_f32_u32", "u32", "f32", lambda v: rnd(v, "f32"))
cvt("v_cvt_f64_i32", "i32", "f64", lambda v: float(v))
cvt("v_cvt_f64_u32", "u32", "f64", lambda v: float(v))
cvt("v_cvt_f16_i16", "i16", "f16", lambda v: rnd(v, "f16"))
cvt("v_cvt_f16_u16", "u16", "f16", lambda v: rnd(v, "f16"))
cvt("v_cvt_i32_f32", "f32", "i32", lambda x: R.cvt_f2i(x, "i32"))
cvt("v_cvt_u32_f32", "f32", "u32", lambda x: R.cvt_f2i(x, "u32"))
cvt("v_cvt_i32_f64", "f64", "i32", lambda x: R.cvt_f2i(x, "i32"))
cvt("v_cvt_u32_f64", "f64", "u32", lambda x: R.cvt_f2i(x, "u32"))
cvt("v_cvt_i16_f16", "f16", "i16", lambda x: R.cvt_f2i(x, "i16"))
cvt("v_cvt_u16_f16", "f16", "u16", lambda x: R.cvt_f2i(x, "u16"))
cvt("v_cvt_f16_f32", "f32", "f16", lambda x: R.quiet(R.f_rnd(x, "f16")))  # quiets whatever MODE
cvt("v_cvt_f32_f16", "f16", "f32", lambda x: x)
cvt("v_cvt_f32_f64", "f64", "f32", lambda x: R.f_rnd(x, "f32"))
cvt("v_cvt_f64_f32", "f32", "f64", lambda x: x)
cvt("v_cvt_flr_i32_f32", "f32", "i32", lambda x: R.cvt_f2i(math.floor(x) if math.isfinite(x) else x, "i32"))
cvt(
    "v_cvt_rpi_i32_f32",
    "f32",
    "i32",
    lambda x: R.cvt_f2i(
        math.floor(R.f_add(x, 0.5, "f32"))
        if math.isfinite(R.f_add(x, 0.5, "f32"))
        else R.f_add(x, 0.5, "f32"),
        "i32",
    ),
)
for k in range(4):
    cvt("v_cvt_f32_ubyte%d" % k, "u32", "f32", lambda v, k=k: float((v >> 8 * k) & 0xFF))
cvt(
    "v_cvt_off_f32_i4",
    "u32",
    "f32",
    lambda v: ival(v & 0xF, "i4") / 16.0 if False else (((v & 0xF) ^ 8) - 8) / 16.0,
)
add(
    "v_cvt_norm_i16_f16",
    "v_cvt_norm_i16_f16 {D}, {A}",
    ("f16",),
    ffun("f16", 1, lambda m, x, raws: R.norm16(x, True), dt="i16"),
    dst="b16",
)
add(
    "v_cvt_norm_u16_f16",
    "v_cvt_norm_u16_f16 {D}, {A}",
    ("f16",),
    ffun("f16", 1, lambda m, x, raws: R.norm16(x, False), dt="u16"),
    dst="b16",
)
add(
    "v_sat_pk_u8_i16",
    "v_sat_pk_u8_i16 {D}, {A}",
    ("u32",),
    lambda m, a, b, c, d, vcc: {
        "d": keep_hi(d, max(0, min(255, ival(a, "i16"))) | max(0, min(255, ival(a >> 16, "i16"))) << 8)
    },
)


def pk2(name, kinds, fn):
    add(
        name,
        "%s {D}, {A}, {B}" % name,
        kinds,
        lambda m, a, b, c, d, vcc: {"d": (fn(m, a, b, 0) & M16) | (fn(m, a, b, 1) & M16) << 16},
        float_mode=any(k in R.FMT for k in kinds),
    )


pk2(
    "v_cvt_pkrtz_f16_f32",
    ("f32", "f32"),
    lambda m, a, b, h: fbits(R.quiet(R.f_rnd(fval((a, b)[h], "f32"), "f16", "rtz")), "f16"),
)
pk2("v_cvt_pk_u16_u32", ("u32", "u32"), lambda m, a, b, h: min((a, b)[h] & M32, 0xFFFF))
pk2(
    "v_cvt_pk_i16_i32",
    ("i32", "i32"),
    lambda m, a, b, h: ibits(max(-32768, min(32767, ival((a, b)[h], "i32"))), "i16"),
)
pk2("v_pack_b32_f16", ("f16", "f16"), lambda m, a, b, h: (a, b)[h] & M16)
for st in ("f32", "f16"):
    for sg in (True, False):
        nm = "v_cvt_pknorm_%s16_%s" % ("i" if sg else "u", st)
        pk2(
            nm,
            (st, st),
            lambda m, a, b, h, st=st, sg=sg: ibits(R.norm16(m.fin(fval((a, b)[h], st), st), sg), "i16"),
        )
add(
    "v_cvt_pk_u8_f32",
    "v_cvt_pk_u8_f32 {D}, {A}, {B}, {C}",
    ("f32", "u32", "u32"),
    lambda m, a, b, c, d, vcc: {"d": R.cvt_pk_u8(m.fin(fval(a, "f32"), "f32"), b & M32, c & M32)},
)

# -------------------------------------------------------------------------- division helpers
for t in ("f32", "f64"):
    add(
        "v_div_scale_" + t,
        "v_div_scale_%s {D}, s22, {A}, {B}, {C}" % t,
        (t, t, t),
        lambda m, a, b, c, d, vcc, t=t: R.div_scale_out(m, a, b, c, t),
        out=("d", "s"),
        dst=dst_of(t),
    )
    add(
        "v_div_scale_%s:num" % t,
        "v_div_scale_%s {D}, vcc_lo, {A}, {B}, {A}" % t,
        (t, t),
        lambda m, a, b, c, d, vcc, t=t: R.div_scale_out(m, a, b, a, t, "vcc"),
        out=("d", "vcc"),
        dst=dst_of(t),
        opcode="v_div_scale_" + t,
    )
    add(
        "v_div_fmas_" + t,
        "v_div_fmas_%s {D}, {A}, {B}, {C}" % t,
        (t, t, t),
        lambda m, a, b, c, d, vcc, t=t: R.div_fmas_out(m, a, b, c, vcc, t),
        dst=dst_of(t),
        vcc_in=True,
    )


# ================================================================================ integer cases
def iop(name, kinds, fn, dt="u32", asm=None, **kw):
    n = len(kinds)
    regs = ", ".join("{%s}" % x for x in "ABC"[:n])
    add(
        name,
        asm or "%s {D}, %s" % (name.split(":")[0], regs),
        kinds,
        lambda m, a, b, c, d, vcc: {
            "d": wrap(
                dt,
                ibits(fn(*[ival(v, k if k in R.BITS else "u32") for v, k in zip((a, b, c), kinds)]), dt),
                d,
            )
        },
        dst=dst_of(dt),
        float_mode=False,
        **kw,
    )


U, I = "u32", "i32"
iop("v_add_nc_u32", (U, U), lambda x, y: x + y)
iop("v_sub_nc_u32", (U, U), lambda x, y: x - y)
iop("v_subrev_nc_u32", (U, U), lambda x, y: y - x)
iop("v_add_nc_i32", (I, I), lambda x, y: x + y)
iop("v_sub_nc_i32", (I, I), lambda x, y: x - y)
iop("v_add_nc_u32:clamp", (U, U), lambda x, y: min(x + y, M32), asm="v_add_nc_u32_e64 {D}, {A}, {B} clamp")
iop("v_sub_nc_u32:clamp", (U, U), lambda x, y: max(x - y, 0), asm="v_sub_nc_u32_e64 {D}, {A}, {B} clamp")
iop(
    "v_subrev_nc_u32:clamp", (U, U), lambda x, y: max(y - x, 0), asm="v_subrev_nc_u32_e64 {D}, {A}, {B} clamp"
)
iop(
    "v_add_nc_i32:clamp",
    (I, I),
    lambda x, y: max(-(2**31), min(2**31 - 1, x + y)),
    asm="v_add_nc_i32 {D}, {A}, {B} clamp",
)
iop(
    "v_sub_nc_i32:clamp",
    (I, I),
    lambda x, y: max(-(2**31), min(2**31 - 1, x - y)),
    asm="v_sub_nc_i32 {D}, {A}, {B} clamp",
)
for t16 in ("u16", "i16"):
    lo_, hi_ = (0, 0xFFFF) if t16 == "u16" else (-(2**15), 2**15 - 1)
    iop("v_add_nc_" + t16, (t16, t16), lambda x, y: x + y, dt=t16)
    iop("v_sub_nc_" + t16, (t16, t16), lambda x, y: x - y, dt=t16)
    iop(
        "v_add_nc_%s:clamp" % t16,
        (t16, t16),
        lambda x, y, lo_=lo_, hi_=hi_: max(lo_, min(hi_, x + y)),
        dt=t16,
        asm="v_add_nc_%s {D}, {A}, {B} clamp" % t16,
    )
    iop(
        "v_sub_nc_%s:clamp" % t16,
        (t16, t16),
        lambda x, y, lo_=lo_, hi_=hi_: max(lo_, min(hi_, x - y)),
        dt=t16,
        asm="v_sub_nc_%s {D}, {A}, {B} clamp" % t16,
    )
    iop("v_min_" + t16, (t16, t16), min, dt=t16)
    iop("v_max_" + t16, (t16, t16), max, dt=t16)
    iop("v_min3_" + t16, (t16,) * 3, lambda x, y, z: min(x, y, z), dt=t16)
    iop("v_max3_" + t16, (t16,) * 3, lambda x, y, z: max(x, y, z), dt=t16)
    iop("v_med3_" + t16, (t16,) * 3, lambda x, y, z: sorted((x, y, z))[1], dt=t16)
    iop("v_mad_" + t16, (t16,) * 3, lambda x, y, z: x * y + z, dt=t16)
    iop(
        "v_mad_%s:clamp" % t16,
        (t16,) * 3,
        lambda x, y, z, lo_=lo_, hi_=hi_: max(lo_, min(hi_, x * y + z)),
        dt=t16,
        asm="v_mad_%s {D}, {A}, {B}, {C} clamp" % t16,
    )
iop("v_add_nc_u16:opsel", ("u16", "u16"), None, dt="u16")  # replaced below
CASES["v_add_nc_u16:opsel"] = Case(
    "v_add_nc_u16 {D}, {A}, {B} op_sel:[1,1,1]",
    ("u16", "u16"),
    lambda m, a, b, c, d, vcc: {"d": (d & M16) | (((hi16(a) + hi16(b)) & M16) << 16)},
    dst="b32",
    float_mode=False,
    name="v_add_nc_u16:opsel",
    opcode="v_add_nc_u16",
)
iop("v_mul_lo_u16", ("u16", "u16"), lambda x, y: x * y, dt="u16")
iop("v_mad_u32_u16", ("u16", "u16", U), lambda x, y, z: x * y + z)
iop("v_mad_i32_i16", ("i16", "i16", I), lambda x, y, z: x * y + z, dt="i32")
iop(
    "v_mad_u32_u16:clamp",
    ("u16", "u16", U),
    lambda x, y, z: min(x * y + z, M32),
    asm="v_mad_u32_u16 {D}, {A}, {B}, {C} clamp",
)
iop("v_mul_lo_u32", (U, U), lambda x, y: x * y)
iop("v_mul_hi_u32", (U, U), lambda x, y: (x * y) >> 32)
iop("v_mul_hi_i32", (I, I), lambda x, y: (x * y) >> 32, dt="i32")
s24 = lambda v: ((v & 0xFFFFFF) ^ 0x800000) - 0x800000
iop("v_mul_u32_u24", (U, U), lambda x, y: (x & 0xFFFFFF) * (y & 0xFFFFFF))
iop("v_mul_hi_u32_u24", (U, U), lambda x, y: ((x & 0xFFFFFF) * (y & 0xFFFFFF)) >> 32)
iop("v_mul_i32_i24", (U, U), lambda x, y: s24(x) * s24(y))
iop("v_mul_hi_i32_i24", (U, U), lambda x, y: (s24(x) * s24(y)) >> 32)
iop("v_mad_u32_u24", (U, U, U), lambda x, y, z: (x & 0xFFFFFF) * (y & 0xFFFFFF) + z)
iop("v_mad_i32_i24", (U, U, U), lambda x, y, z: s24(x) * s24(y) + z)
iop(
    "v_mad_u32_u24:clamp",
    (U, U, U),
    lambda x, y, z: min((x & 0xFFFFFF) * (y & 0xFFFFFF) + z, M32),
    asm="v_mad_u32_u24 {D}, {A}, {B}, {C} clamp",
)
iop(
    "v_mad_i32_i24:clamp",
    (U, U, I),
    lambda x, y, z: max(-(2**31), min(2**31 - 1, s24(x) * s24(y) + z)),
    asm="v_mad_i32_i24 {D}, {A}, {B}, {C} clamp",
)
iop("v_add3_u32", (U, U, U), lambda x, y, z: x + y + z)
iop("v_xad_u32", (U, U, U), lambda x, y, z: (x ^ y) + z)
iop("v_lshl_add_u32", (U, "sh", U), lambda x, y, z: (x << (y & 31)) + z)
iop("v_add_lshl_u32", (U, U, "sh"), lambda x, y, z: ((x + y) & M32) << (z & 31))
iop("v_lshl_or_b32", (U, "sh", U), lambda x, y, z: (x << (y & 31)) | z)
iop("v_and_or_b32", (U, U, U), lambda x, y, z: (x & y) | z)
iop("v_or3_b32", (U, U, U), lambda x, y, z: x | y | z)
iop("v_xor3_b32", (U, U, U), lambda x, y, z: x ^ y ^ z)
for nm, fn in (("min", min), ("max", max)):
    iop("v_%s_i32" % nm, (I, I), fn, dt="i32")
    iop("v_%s_u32" % nm, (U, U), fn)
    iop("v_%s3_i32" % nm, (I, I, I), lambda x, y, z, fn=fn: fn(x, y, z), dt="i32")
    iop("v_%s3_u32" % nm, (U, U, U), lambda x, y, z, fn=fn: fn(x, y, z))
iop("v_med3_i32", (I, I, I), lambda x, y, z: sorted((x, y, z))[1], dt="i32")
iop("v_med3_u32", (U, U, U), lambda x, y, z: sorted((x, y, z))[1])
iop("v_and_b32", (U, U), lambda x, y: x & y)
iop("v_or_b32", (U, U), lambda x, y: x | y)
iop("v_xor_b32", (U, U), lambda x, y: x ^ y)
iop("v_xnor_b32", (U, U), lambda x, y: ~(x ^ y))
iop("v_not_b32", (U,), lambda x: ~x)
iop("v_lshlrev_b32", ("sh", U), lambda s, x: x << (s & 31))
iop("v_lshrrev_b32", ("sh", U), lambda s, x: x >> (s & 31))
iop("v_ashrrev_i32", ("sh", I), lambda s, x: x >> (s & 31), dt="i32")
iop("v_lshlrev_b64", ("sh", "u64"), lambda s, x: x << (s & 63), dt="u64")
iop("v_lshrrev_b64", ("sh", "u64"), lambda s, x: x >> (s & 63), dt="u64")
iop("v_ashrrev_i64", ("sh", "i64"), lambda s, x: x >> (s & 63), dt="i64")
iop("v_lshlrev_b16", ("sh", "u16"), lambda s, x: x << (s & 15), dt="u16")
iop("v_lshrrev_b16", ("sh", "u16"), lambda s, x: x >> (s & 15), dt="u16")
iop("v_ashrrev_i16", ("sh", "i16"), lambda s, x: x >> (s & 15), dt="i16")
iop("v_bfe_u32", (U, "sh", "sh"), lambda x, o, w: (x >> (o & 31)) & ((1 << (w & 31)) - 1))
iop(
    "v_bfe_i32",
    (I, "sh", "sh"),
    lambda x, o, w: R.sext((x >> (o & 31)) & ((1 << (w & 31)) - 1), w & 31),
    dt="i32",
)
iop("v_bfi_b32", (U, U, U), lambda m_, x, y: (m_ & x) | (~m_ & y))
iop("v_bfm_b32", ("sh", "sh"), lambda w, o: ((1 << (w & 31)) - 1) << (o & 31))
iop("v_alignbit_b32", (U, U, "sh"), lambda x, y, s: ((x << 32) | y) >> (s & 31))
iop("v_alignbyte_b32", (U, U, "sh"), lambda x, y, s: ((x << 32) | y) >> (8 * (s & 3)))
iop("v_perm_b32", (U, U, "perm"), R.perm)
iop("v_bfrev_b32", (U,), lambda x: int(format(x, "032b")[::-1], 2))
iop("v_ffbh_u32", (U,), lambda x: 32 - x.bit_length() if x else -1)
iop("v_ffbl_b32", (U,), lambda x: (x & -x).bit_length() - 1 if x else -1)
iop("v_ffbh_i32", (I,), lambda x: -1 if x in (0, -1) else 32 - (x if x >= 0 else ~x).bit_length())
iop("v_bcnt_u32_b32", (U, U), lambda x, y: bin(x).count("1") + y)
iop("v_sad_u32", (U, U, U), lambda x, y, z: abs(x - y) + z)
iop("v_sad_u8", (U, U, U), lambda x, y, z: R.sad(x, y, 8, 4) + z)
iop("v_sad_hi_u8", (U, U, U), lambda x, y, z: (R.sad(x, y, 8, 4) << 16) + z)
iop("v_sad_u16", (U, U, U), lambda x, y, z: R.sad(x, y, 16, 2) + z)
iop("v_msad_u8", (U, U, U), lambda x, y, z: R.sad(x, y, 8, 4, masked=True) + z)
iop("v_qsad_pk_u16_u8", ("u64", U, "u64"), lambda x, y, z: R.qsad(x, y, z, False), dt="u64")
iop("v_mqsad_pk_u16_u8", ("u64", U, "u64"), lambda x, y, z: R.qsad(x, y, z, True), dt="u64")
iop(
    "v_lerp_u8",
    (U, U, U),
    lambda x, y, z: sum(
        (((x >> 8 * k & 255) + (y >> 8 * k & 255) + (z >> 8 * k & 1)) >> 1) << 8 * k for k in range(4)
    ),
)
iop("v_dot4c_i32_i8", (U, U), None)  # replaced below (accumulates into D)
CASES["v_dot4c_i32_i8"] = Case(
    "v_dot4c_i32_i8 {D}, {A}, {B}",
    (U, U),
    lambda m, a, b, c, d, vcc: {"d": ibits(R.dot(a, b, 4, 8, True) + ival(d, "i32"), "u32")},
    float_mode=False,
    name="v_dot4c_i32_i8",
    opcode="v_dot4c_i32_i8",
)


def mad64(name, signed):
    def ref(m, a, b, c, d, vcc):
        t = "i32" if signed else "u32"
        z = ival(c, "i64" if signed else "u64")
        r = ival(a, t) * ival(b, t) + z
        if signed:
            carry = int(not (-(2**63) <= r < 2**63))
        else:
            carry = int(r >> 64 != 0)
        return {"d": r & M64, "s": carry}

    add(
        name,
        "%s {D}, s22, {A}, {B}, {C}" % name,
        ("i32" if signed else U, "i32" if signed else U, "i64" if signed else "u64"),
        ref,
        out=("d", "s"),
        dst="b64",
        float_mode=False,
    )


mad64("v_mad_u64_u32", False)
mad64("v_mad_i64_i32", True)
add(
    "v_mad_u64_u32:clamp",
    "v_mad_u64_u32 {D}, s22, {A}, {B}, {C} clamp",
    (U, U, "u64"),
    lambda m, a, b, c, d, vcc: (lambda r: {"d": min(r, M64), "s": int(r > M64)})(
        (a & M32) * (b & M32) + (c & M64)
    ),
    out=("d", "s"),
    dst="b64",
    float_mode=False,
    opcode="v_mad_u64_u32",
)
add(
    "v_mad_i64_i32:clamp",
    "v_mad_i64_i32 {D}, s22, {A}, {B}, {C} clamp",
    ("i32", "i32", "i64"),
    lambda m, a, b, c, d, vcc: (
        lambda r: {"d": max(-(2**63), min(2**63 - 1, r)) & M64, "s": int(not -(2**63) <= r < 2**63)}
    )(ival(a, "i32") * ival(b, "i32") + ival(c, "i64")),
    out=("d", "s"),
    dst="b64",
    float_mode=False,
    opcode="v_mad_i64_i32",
)


def carry_op(name, asm, fn, vcc_in, out):
    def ref(m, a, b, c, d, vcc):
        r = fn(a & M32, b & M32, vcc)
        return {"d": r & M32, "vcc": int(r >> 32 != 0 or r < 0), "s": int(r >> 32 != 0 or r < 0)}

    add(name, asm, (U, U), ref, out=("d", out), float_mode=False, vcc_in=vcc_in, opcode=name.split(":")[0])


carry_op("v_add_co_u32", "v_add_co_u32 {D}, s22, {A}, {B}", lambda x, y, c: x + y, False, "s")
carry_op("v_sub_co_u32", "v_sub_co_u32 {D}, s22, {A}, {B}", lambda x, y, c: x - y, False, "s")
carry_op("v_subrev_co_u32", "v_subrev_co_u32 {D}, s22, {A}, {B}", lambda x, y, c: y - x, False, "s")
carry_op(
    "v_add_co_ci_u32", "v_add_co_ci_u32 {D}, vcc_lo, {A}, {B}, vcc_lo", lambda x, y, c: x + y + c, True, "vcc"
)
carry_op(
    "v_sub_co_ci_u32", "v_sub_co_ci_u32 {D}, vcc_lo, {A}, {B}, vcc_lo", lambda x, y, c: x - y - c, True, "vcc"
)
carry_op(
    "v_subrev_co_ci_u32",
    "v_subrev_co_ci_u32 {D}, vcc_lo, {A}, {B}, vcc_lo",
    lambda x, y, c: y - x - c,
    True,
    "vcc",
)
carry_op(
    "v_add_co_u32:clamp",
    "v_add_co_u32 {D}, s22, {A}, {B} clamp",
    lambda x, y, c: x + y if x + y <= M32 else M32 | 1 << 32,
    False,
    "s",
)
carry_op(
    "v_sub_co_ci_u32:clamp",
    "v_sub_co_ci_u32_e64 {D}, s22, {A}, {B}, s20 clamp",
    lambda x, y, c: x - y - c if x - y - c >= 0 else -(1 << 32),
    True,
    "s",
)
carry_op(
    "v_add_co_ci_u32:e64", "v_add_co_ci_u32_e64 {D}, s22, {A}, {B}, s20", lambda x, y, c: x + y + c, True, "s"
)
add(
    "v_cndmask_b32",
    "v_cndmask_b32 {D}, {A}, {B}, vcc_lo",
    (U, U),
    lambda m, a, b, c, d, vcc: {"d": (b if vcc else a) & M32},
    float_mode=False,
    vcc_in=True,
)
add(
    "v_cndmask_b32:e64",
    "v_cndmask_b32_e64 {D}, -{A}, |{B}|, s20",
    ("f32", "f32"),
    lambda m, a, b, c, d, vcc: {"d": ((b & 0x7FFFFFFF) if vcc else (a ^ 0x80000000)) & M32},
    float_mode=False,
    vcc_in=True,
    opcode="v_cndmask_b32",
)
# DPP and SDWA carry abs/neg in their own fields (they were dropped: a silently wrong result)
for _v, _sfx in (
    ("dpp", "quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf"),
    ("sdwa", "dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD"),
):
    add(
        "v_cndmask_b32:" + _v,
        "v_cndmask_b32_%s {D}, -{A}, |{B}|, vcc_lo %s" % (_v, _sfx),
        ("f32", "f32"),
        lambda m, a, b, c, d, vcc: {"d": ((b & 0x7FFFFFFF) if vcc else (a ^ 0x80000000)) & M32},
        float_mode=False,
        vcc_in=True,
        opcode="v_cndmask_b32",
    )


# ===================================================================================== VOP3P
def pk(name, t, n, fn, asm=None, **kw):
    regs = ", ".join("{%s}" % x for x in "ABC"[:n])

    def ref(m, a, b, c, d, vcc):
        out = 0
        for h in (0, 1):
            v = [(x >> 16 * h) & M16 for x in (a, b, c)[:n]]
            if t in R.FMT:
                xs = [m.fin(fval(x, t), t) for x in v]
                r = fbits(m.fout(fn(m, *xs, raws=v), t), t)
            else:
                r = ibits(fn(*[ival(x, t) for x in v]), t)
            out |= r << 16 * h
        return {"d": out}

    add(name, asm or "%s {D}, %s" % (name.split(":")[0], regs), (t,) * n, ref, float_mode=t in R.FMT, **kw)


pk("v_pk_add_f16", "f16", 2, lambda m, x, y, raws: R.f_add(x, y, "f16"))
pk("v_pk_mul_f16", "f16", 2, lambda m, x, y, raws: R.f_mul(x, y, "f16"))
pk("v_pk_fma_f16", "f16", 3, lambda m, x, y, z, raws: R.f_fma(x, y, z, "f16"))
pk("v_pk_min_f16", "f16", 2, lambda m, x, y, raws: R.f_min(x, y, m, R.snan_list(raws, "f16")))
pk("v_pk_max_f16", "f16", 2, lambda m, x, y, raws: R.f_max(x, y, m, R.snan_list(raws, "f16")))
pk("v_pk_add_u16", "u16", 2, lambda x, y: x + y)
pk("v_pk_sub_u16", "u16", 2, lambda x, y: x - y)
pk("v_pk_add_i16", "i16", 2, lambda x, y: x + y)
pk("v_pk_sub_i16", "i16", 2, lambda x, y: x - y)
pk("v_pk_add_u16:clamp", "u16", 2, lambda x, y: min(x + y, 0xFFFF), asm="v_pk_add_u16 {D}, {A}, {B} clamp")
pk(
    "v_pk_sub_i16:clamp",
    "i16",
    2,
    lambda x, y: max(-32768, min(32767, x - y)),
    asm="v_pk_sub_i16 {D}, {A}, {B} clamp",
)
pk("v_pk_mul_lo_u16", "u16", 2, lambda x, y: x * y)
pk("v_pk_mad_u16", "u16", 3, lambda x, y, z: x * y + z)
pk("v_pk_mad_i16", "i16", 3, lambda x, y, z: x * y + z)
pk("v_pk_lshlrev_b16", "u16", 2, lambda s, x: x << (s & 15))
pk("v_pk_lshrrev_b16", "u16", 2, lambda s, x: x >> (s & 15))
pk("v_pk_ashrrev_i16", "i16", 2, lambda s, x: x >> (s & 15))
pk("v_pk_max_i16", "i16", 2, max)
pk("v_pk_min_i16", "i16", 2, min)
pk("v_pk_max_u16", "u16", 2, max)
pk("v_pk_min_u16", "u16", 2, min)
add(
    "v_pk_add_f16:opsel",
    "v_pk_add_f16 {D}, {A}, {B} op_sel:[1,0] op_sel_hi:[0,1] neg_lo:[0,1] neg_hi:[1,0]",
    ("f16", "f16"),
    lambda m, a, b, c, d, vcc: {
        "d": fbits(
            m.fout(R.f_add(m.fin(fval(hi16(a), "f16"), "f16"), -m.fin(fval(b, "f16"), "f16"), "f16"), "f16"),
            "f16",
        )
        | fbits(
            m.fout(R.f_add(-m.fin(fval(a, "f16"), "f16"), m.fin(fval(hi16(b), "f16"), "f16"), "f16"), "f16"),
            "f16",
        )
        << 16
    },
    opcode="v_pk_add_f16",
)
add(
    "v_pk_fmac_f16",
    "v_pk_fmac_f16 {D}, {A}, {B}",
    ("f16", "f16"),
    lambda m, a, b, c, d, vcc: {
        "d": sum(
            fbits(
                m.fout(
                    R.f_fma(*[m.fin(fval((x >> 16 * h) & M16, "f16"), "f16") for x in (a, b, d)], "f16"),
                    "f16",
                ),
                "f16",
            )
            << 16 * h
            for h in (0, 1)
        )
    },
)
for nm, (cnt, w, sg) in {
    "v_dot2_i32_i16": (2, 16, True),
    "v_dot2_u32_u16": (2, 16, False),
    "v_dot4_i32_i8": (4, 8, True),
    "v_dot4_u32_u8": (4, 8, False),
    "v_dot8_i32_i4": (8, 4, True),
    "v_dot8_u32_u4": (8, 4, False),
}.items():
    add(
        nm,
        "%s {D}, {A}, {B}, {C}" % nm,
        (U, U, U),
        lambda m, a, b, c, d, vcc, cnt=cnt, w=w, sg=sg: {
            "d": ibits(R.dot(a, b, cnt, w, sg) + ival(c, "i32" if sg else "u32"), "u32")
        },
        float_mode=False,
    )
    add(
        nm + ":clamp",
        "%s {D}, {A}, {B}, {C} clamp" % nm,
        (U, U, U),
        lambda m, a, b, c, d, vcc, cnt=cnt, w=w, sg=sg: {
            "d": ibits(R.sat(R.dot(a, b, cnt, w, sg) + ival(c, "i32" if sg else "u32"), sg), "u32")
        },
        float_mode=False,
        opcode=nm,
    )
add(
    "v_dot2_f32_f16",
    "v_dot2_f32_f16 {D}, {A}, {B}, {C}",
    ("f16", "f16", "f32"),
    lambda m, a, b, c, d, vcc: {
        "d": fbits(m.fout(R.dot2f(m, a, b, m.fin(fval(c, "f32"), "f32")), "f32"), "f32")
    },
    tol=("ulp", 1, "f32"),
)
add(
    "v_dot2c_f32_f16",
    "v_dot2c_f32_f16 {D}, {A}, {B}",
    ("f16", "f16"),
    lambda m, a, b, c, d, vcc: {
        "d": fbits(m.fout(R.dot2f(m, a, b, m.fin(fval(d, "f32"), "f32")), "f32"), "f32")
    },
    tol=("ulp", 1, "f32"),
)
add(
    "v_fma_mix_f32",
    "v_fma_mix_f32 {D}, {A}, -{B}, |{C}| op_sel:[0,1,0] op_sel_hi:[0,1,1]",
    ("f32", "f16", "f16"),
    lambda m, a, b, c, d, vcc: {
        "d": fbits(
            m.fout(
                R.f_fma(
                    m.fin(fval(a, "f32"), "f32"),
                    -m.fin(fval(hi16(b), "f16"), "f16"),
                    abs(m.fin(fval(c, "f16"), "f16")),
                    "f32",
                ),
                "f32",
            ),
            "f32",
        )
    },
)
add(
    "v_fma_mixlo_f16",
    "v_fma_mixlo_f16 {D}, {A}, {B}, {C} op_sel_hi:[1,1,0]",
    ("f16", "f16", "f32"),
    lambda m, a, b, c, d, vcc: {
        "d": keep_hi(
            d,
            fbits(
                m.fout(
                    R.f_fma(
                        m.fin(fval(a & M16, "f16"), "f16"),
                        m.fin(fval(b & M16, "f16"), "f16"),
                        m.fin(fval(c, "f32"), "f32"),
                        "f16",
                    ),
                    "f16",
                ),
                "f16",
            ),
        )
    },
)
add(
    "v_fma_mixhi_f16",
    "v_fma_mixhi_f16 {D}, {A}, {B}, {C} op_sel:[1,1,0] op_sel_hi:[1,1,0] clamp",
    ("f16", "f16", "f32"),
    lambda m, a, b, c, d, vcc: {
        "d": (d & M16)
        | fbits(
            m.fout(
                R.clamp01(
                    R.f_fma(
                        m.fin(fval(hi16(a), "f16"), "f16"),
                        m.fin(fval(hi16(b), "f16"), "f16"),
                        m.fin(fval(c, "f32"), "f32"),
                        "f16",
                    ),
                    m,
                ),
                "f16",
            ),
            "f16",
        )
        << 16
    },
)


# ======================================================================================= VOPC
_INT_CONDS = {
    "f": lambda x, y: False,
    "lt": lambda x, y: x < y,
    "eq": lambda x, y: x == y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ne": lambda x, y: x != y,
    "ge": lambda x, y: x >= y,
    "t": lambda x, y: True,
}
_F_CONDS = {
    "f": lambda x, y: False,
    "lt": lambda x, y: x < y,
    "eq": lambda x, y: x == y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "lg": lambda x, y: x < y or x > y,
    "ge": lambda x, y: x >= y,
    "o": lambda x, y: x == x and y == y,
    "u": lambda x, y: x != x or y != y,
    "nge": lambda x, y: not x >= y,
    "nlg": lambda x, y: not (x < y or x > y),
    "ngt": lambda x, y: not x > y,
    "nle": lambda x, y: not x <= y,
    "neq": lambda x, y: not x == y,
    "nlt": lambda x, y: not x < y,
    "tru": lambda x, y: True,
}


def cmp_case(name, form):
    x = name.startswith("v_cmpx_")
    rest = name[7 if x else 6 :]
    cond, t = rest.rsplit("_", 1)
    if cond == "class":

        def test(m, a, b):
            # class looks at the operand as given (no denormal flush)
            return bool((b >> R.fclass(fval(a, t), a & ((1 << R.BITS[t]) - 1), t)) & 1)

        kinds = (t, "class")
    elif t in R.FMT:

        def test(m, a, b, cond=cond):
            return _F_CONDS[cond](m.fin(fval(a, t), t), m.fin(fval(b, t), t))

        kinds = (t, t)
    else:

        def test(m, a, b, cond=cond):
            return _INT_CONDS[cond](ival(a, t), ival(b, t))

        kinds = (t, t)
    64 if t.endswith("64") else 32
    A, B = ("{A}", "{B}")
    if x:
        asm, out = ("%s %s, %s" % (name, A, B) if form == "e32" else "%s_e64 %s, %s" % (name, A, B)), "exec"
    else:
        asm, out = (
            ("%s vcc_lo, %s, %s" % (name, A, B) if form == "e32" else "%s_e64 s22, %s, %s" % (name, A, B)),
            ("vcc" if form == "e32" else "s"),
        )
    add(
        name + ("" if form == "e32" else ":e64"),
        asm,
        kinds,
        lambda m, a, b, c, d, vcc: {out: int(test(m, a, b))},
        out=(out,),
        opcode=name,
        float_mode=t in R.FMT,
    )


def register_vopc(names):
    for n in names:
        cmp_case(n, "e32")
        # VOP3 forms with an SGPR destination, as the int64 lowerings use them (64-bit and u32
        # compares of the division loops)
        if (
            n.endswith(("_f32", "_i32", "_u16", "_f64"))
            or "class" in n
            or (n.startswith("v_cmp_") and n.endswith(("_u32", "_u64", "_i64")))
        ):
            cmp_case(n, "e64")


# ====================================================================== GFX10.1-only opcodes
def _mad_ref(legacy):
    def fn(m, x, y, z, raws):
        if legacy and (x == 0 or y == 0):
            p = 0.0
        else:
            p = m.fin(m.fout(R.f_mul(x, y, "f32"), "f32"), "f32")
        return R.f_add(p, z, "f32")

    return fn


for _n, _lg in (("v_mad_f32", False), ("v_mad_legacy_f32", True)):
    add(
        _n + ":gfx1010",
        _n + " {D}, {A}, {B}, {C}",
        ("f32",) * 3,
        ffun("f32", 3, _mad_ref(_lg)),
        opcode=_n,
        target="gfx1010",
    )
for _n, _lg in (("v_mac_f32", False), ("v_mac_legacy_f32", True)):
    add(
        _n + ":gfx1010",
        _n + " {D}, {A}, {B}",
        ("f32",) * 2,
        lambda m, a, b, c, d, vcc, _lg=_lg: ffun("f32", 3, _mad_ref(_lg))(m, a, b, d, d, vcc),
        opcode=_n,
        target="gfx1010",
    )
add(
    "v_madmk_f32:gfx1010",
    "v_madmk_f32 {D}, {A}, 0x40490fdb, {B}",
    ("f32", "f32"),
    ffun("f32", 2, lambda m, x, y, raws: _mad_ref(False)(m, x, fval(0x40490FDB, "f32"), y, raws)),
    opcode="v_madmk_f32",
    target="gfx1010",
)
add(
    "v_madak_f32:gfx1010",
    "v_madak_f32 {D}, {A}, {B}, 0xc0490fdb",
    ("f32", "f32"),
    ffun("f32", 2, lambda m, x, y, raws: _mad_ref(False)(m, x, y, fval(0xC0490FDB, "f32"), raws)),
    opcode="v_madak_f32",
    target="gfx1010",
)
iop("v_mul_lo_i32", (I, I), lambda x, y: x * y, dt="i32")
CASES["v_mul_lo_i32"].target = "gfx1010"
