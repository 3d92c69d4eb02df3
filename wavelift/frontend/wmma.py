"""GFX11 WMMA (V_WMMA_*_16X16X16_*): D = A x B + C on 16x16 tiles spread over a wave's VGPRs.

Layouts (RDNA3 ISA guide, "Wave Matrix Multiply Accumulate", and AMD's matrix instruction
calculator for gfx11): an A/B element k of a 16-bit type is bits [16(k%2)+15 : 16(k%2)] of
VGPR k/2, of iu8 bits [8(k%4)+7 : 8(k%4)] of VGPR k/4, of iu4 bits [4(k%8)+3 : 4(k%8)] of VGPR
k/8; row i of A is in lane i, column j of B in lane j (lanes 16-31, and 32-63 in wave64, must
hold copies: lanes 0-15 are read).  C/D element (i, j) is VGPR i/2 (wave64: i/4) of lane
16*(i%2) + j (wave64: 16*(i%4) + j); a 16-bit C/D uses the low half of each VGPR, or the high
half with OP_SEL[2], and keeps the other half.

Modifiers: float inputs: NEG[0]/NEG_HI[0] negate A's elements in the low/high halves (even/odd
k), NEG[1]/NEG_HI[1] B's; NEG_HI[2] takes |C|, NEG[2] negates C (after the abs).  Integer inputs:
NEG[0]/NEG[1] make A/B signed (else unsigned).

Arithmetic: integer products and sums are exact, the sum with C wraps to 32 bits.  Float
products are exact in f64 (f16 x f16: 22 bits), summed over k in order in f64 with C last, and
rounded once to the output type: the hardware's internal order and rounding are not documented,
so a result may differ from it in the last bit.  Inputs and outputs are not flushed by MODE's
denormal controls.

Refused by name: any WMMA outside GFX11 (RDNA4 has other layouts), v_wmma_bf16_16x16x16_bf16 (a bf16 result needs one rounding from f64 to bf16,
not written), CLAMP, OP_SEL[1:0], OP_SEL[2] on a 32-bit result, NEG[2]/NEG_HI on integer
inputs, and A/B/C operands that are not VGPRs.
"""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.program import Value
from .common import C, unsupported

# name -> (input kind, output type)
WMMA = {
    "v_wmma_f32_16x16x16_f16": ("f16", "f32"),
    "v_wmma_f32_16x16x16_bf16": ("bf16", "f32"),
    "v_wmma_f16_16x16x16_f16": ("f16", "f16"),
    "v_wmma_i32_16x16x16_iu8": ("iu8", "i32"),
    "v_wmma_i32_16x16x16_iu4": ("iu4", "i32"),
}
_WIDTH = {"f16": 16, "bf16": 16, "iu8": 8, "iu4": 4}


def is_wmma(name: str) -> bool:
    return name.startswith("v_wmma_")


def translate(ins, b: Builder) -> None:
    n, f = ins.name, ins.fields
    if not getattr(b, "target", "").startswith("gfx11"):
        # GFX12 (RDNA4) WMMA packs A/B and C/D differently: no semantics written for it here
        unsupported("WMMA outside GFX11")
    spec = WMMA.get(n)
    if spec is None:
        unsupported("WMMA form without semantics written (a bf16 result)")
    kind, out = spec
    is_int = out == "i32"
    neg, neg_hi, opsel = f.get("neg", 0), f.get("neg_hi", 0), f.get("opsel", 0)
    if f.get("clamp", 0):
        unsupported("WMMA with clamp")
    if opsel & 3 or (opsel & 4 and out != "f16"):
        unsupported("WMMA op_sel")
    if is_int and (neg & 4 or neg_hi):
        unsupported("integer WMMA with neg_lo[2] or neg_hi")
    codes = [f.get("src0"), f.get("src1"), f.get("src2")]
    if any(c is None or c < 256 for c in codes):
        unsupported("WMMA operand that is not a VGPR")
    a_reg, b_reg, c_reg = (c - 256 for c in codes)
    d_reg = f["vdst"]
    width = _WIDTH[kind]
    per = 32 // width  # elements per VGPR
    nregs = 16 // per  # VGPRs of one row of A / column of B
    groups = b.wave_size // 16  # rows of C/D per VGPR
    lane = b.lane_id()
    col = b.bin("and", "u32", lane, C(b, "u32", 15))
    half = b.bin("shr", "u32", lane, C(b, "u32", 4))

    def fetch(reg: int, src: Value) -> list[Value]:
        return [b.emit("shuffle", "u32", b.vget(reg + q), src, uniform=False) for q in range(nregs)]

    def elems(words: list[Value], signed: bool, lo_neg: bool, hi_neg: bool) -> list[Value]:
        vals = []
        for k in range(16):
            w = words[k // per]
            sh = width * (k % per)
            x = b.bin("shr", "u32", w, C(b, "u32", sh)) if sh else w
            if is_int:
                x = b.bin("and", "u32", x, C(b, "u32", (1 << width) - 1))
                if signed:  # sign-extend the field
                    s = 32 - width
                    x = b.bin(
                        "sar", "i32", b.bitcast("i32", b.bin("shl", "u32", x, C(b, "u32", s))), C(b, "i32", s)
                    )
                vals.append(b.bitcast("i32", x))
                continue
            if kind == "f16":
                v = b.cvt("f64", b.bitcast("f16", b.cvt("u16", x)))
            else:  # bf16: the high 16 bits of an f32
                v = b.cvt(
                    "f64",
                    b.bitcast(
                        "f32",
                        b.bin("shl", "u32", b.bin("and", "u32", x, C(b, "u32", 0xFFFF)), C(b, "u32", 16)),
                    ),
                )
            if lo_neg if k % 2 == 0 else hi_neg:
                v = b.un("fneg", "f64", v)
            vals.append(v)
        return vals

    bcol = elems(fetch(b_reg, col), bool(neg & 2), bool(neg & 2), bool(neg_hi & 2))
    hi16 = bool(opsel & 4)
    results: list[tuple[int, Value, Value | None]] = []
    for g in range(16 // groups):  # output VGPRs: 8 (wave32) or 4 (wave64)
        row = b.bin("add", "u32", half, C(b, "u32", groups * g))
        arow = elems(fetch(a_reg, row), bool(neg & 1), bool(neg & 1), bool(neg_hi & 1))
        cw = b.vget(c_reg + g)
        if is_int:
            acc = C(b, "i32", 0)
            for x, y in zip(arow, bcol):
                acc = b.bin("add", "i32", acc, b.bin("mul", "i32", x, y))
            r = b.bitcast("u32", b.bin("add", "i32", acc, b.bitcast("i32", cw)))
            results.append((g, r, None))
            continue
        acc64 = C(b, "f64", 0.0)
        for x, y in zip(arow, bcol):
            acc64 = b.bin("fadd", "f64", acc64, b.bin("fmul", "f64", x, y))
        if out == "f16":
            c16 = b.bin("shr", "u32", cw, C(b, "u32", 16)) if hi16 else cw
            c = b.cvt("f64", b.bitcast("f16", b.cvt("u16", c16)))
        else:
            c = b.cvt("f64", b.bitcast("f32", cw))
        if neg_hi & 4:
            c = b.un("fabs", "f64", c)
        if neg & 4:
            c = b.un("fneg", "f64", c)
        acc64 = b.bin("fadd", "f64", acc64, c)
        if out == "f32":
            results.append((g, b.bitcast("u32", b.cvt("f32", acc64)), None))
        else:
            bits = b.cvt("u32", b.bitcast("u16", b.cvt("f16", acc64)))
            results.append((g, bits, cw))
    for g, r, old in results:  # every source is read before D is written (D may be C, A or B)
        if old is not None:
            if hi16:
                r = b.bin(
                    "or",
                    "u32",
                    b.bin("and", "u32", old, C(b, "u32", 0xFFFF)),
                    b.bin("shl", "u32", r, C(b, "u32", 16)),
                )
            else:
                r = b.bin("or", "u32", b.bin("and", "u32", old, C(b, "u32", 0xFFFF0000)), r)
        b.vset(d_reg + g, r)
