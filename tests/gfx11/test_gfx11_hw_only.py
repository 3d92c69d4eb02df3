"""Words LLVM 19 rejects that the hardware runs (decision 0023, "Words LLVM 19 rejects that
hardware runs"), decoded, named by ``isa.memory.hardware_only`` and carried out; references from
the RDNA3 ISA guide's pseudo-code (NumPy).

- DS ops without a return value whose VDST field is not zero: the guide gives such an opcode no
  destination (DS_STORE_B32: MEM[ADDR] = DATA0; DS_ADD_U32: MEM[ADDR] += DATA0) and the hardware
  ignores the field, so VDST's register keeps its value.  llvm-mc-19 cannot assemble such a word:
  it is built from the assembled no-return op by setting the DS layout's VDST field (second
  dword, bits [31:24]) by hand."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
from gfx11_rig import HAVE_MC, Rig11, assemble, encode_true16, run11, words
from harness import ptr

from wavelift.isa import DecodeError, decode_one
from wavelift.isa.decoder import VOP2_HIGH_DST, VOPD_VSRC1, hardware_only
from wavelift.isa.llvm_oracle import llvm_disasm
from wavelift.isa.memory import DS_VDST

pytestmark = pytest.mark.skipif(not HAVE_MC, reason="llvm-mc-19 not installed")
MODES = ("wave", "lane")


def _with_vdst(text: str, vdst: int) -> bytes:
    """``text`` (a DS op without a return value) assembled for gfx1100, VDST set to ``vdst``."""
    code = bytearray(assemble(text, mcpu="gfx1100"))
    assert len(code) == 8 and code[7] == 0
    code[7] = vdst
    return bytes(code)


def test_ds_vdst_decodes_as_the_no_return_op():
    for text in ("ds_store_b32 v1, v2 offset:16", "ds_add_u32 v1, v2", "ds_store_b64 v1, v[2:3]"):
        plain = decode_one(assemble(text, mcpu="gfx1100"), 0, "gfx1100", False)
        ins = decode_one(_with_vdst(text, 7), 0, "gfx1100", False)
        assert hardware_only(plain) is None and hardware_only(ins) == DS_VDST
        assert (ins.name, ins.text, ins.operands, ins.size) == (plain.name, plain.text, plain.operands, 8)


@pytest.mark.parametrize("mode", MODES)
def test_ds_vdst_runs_without_a_destination(mode):
    src = "\n".join(
        [
            "v_lshlrev_b32 v1, 2, v0",  # lane * 4: LDS address and output offset
            "global_load_b32 v2, v1, s[2:3]",
            "s_waitcnt vmcnt(0)",
            "v_mov_b32 v7, 0x5a5a0000",
            "v_or_b32 v7, v7, v0",  # the register VDST names: must keep this value
            words(_with_vdst("ds_store_b32 v1, v2", 7)),
            words(_with_vdst("ds_add_u32 v1, v2", 7)),
            "s_waitcnt lgkmcnt(0)",
            "ds_load_b32 v3, v1",
            "s_waitcnt lgkmcnt(0)",
            "global_store_b32 v1, v3, s[0:1]",
            "global_store_b32 v1, v7, s[0:1] offset:128",
            "s_endpgm",
        ]
    )
    x = np.random.default_rng(5).integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    r = Rig11(src)
    out_b = r.buf(np.full(64, 0xDEADBEEF, np.uint32), "out")
    inp = r.buf(x, "in")
    res = r.run(r.config(user_sgprs=ptr(out_b) + ptr(inp), lds=128), mode=mode)
    out = r.read(out_b, np.uint32, 64)
    assert res.landed, res.refusal
    lane = np.arange(32, dtype=np.uint32)
    np.testing.assert_array_equal(out[:32], x + x)  # MEM = DATA0, then MEM += DATA0 (wrapping)
    np.testing.assert_array_equal(out[32:], 0x5A5A0000 | lane)


# ----------------------------------------------------------------------------- VOP2 .h destinations
def _llvm_true16(word: bytes) -> str | None:
    """llvm-mc-19's +real-true16 text of one gfx1100 instruction, or None (invalid)."""
    p = subprocess.run(
        ["llvm-mc-19", "--disassemble", "-arch=amdgcn", "-mcpu=gfx1100", "-mattr=+real-true16"],
        input=",".join(f"{x:#04x}" for x in word) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    if "invalid" in p.stderr:
        return None
    lines = [ln.strip() for ln in p.stdout.splitlines() if ln.strip() and not ln.strip().startswith(".")]
    return lines[0] if len(lines) == 1 else None


def _high(code: bytes) -> bytes:
    """``code`` (a VOP2 e32 word LLVM 19 assembles) with VDST field bit 7 (word 0 bit 24) set by
    hand: the same destination's high half (llvm-mc-19 assembles no such word with a literal)."""
    w = int.from_bytes(code[:4], "little") | 1 << 24
    return w.to_bytes(4, "little") + code[4:]


def test_vop2_high_dst_text_is_llvm_true16():
    """Every GFX11 VOP2 opcode with VDST >= 128 and VGPR/SGPR/constant sources: where LLVM 19
    rejects the word and LLVM 19 +real-true16 decodes it, our text is that text and the word is
    named; where both LLVM texts exist they agree with ours; other rejected words stay invalid
    unless the same word with VDST bit 7 clear decodes (a 16-bit destination)."""
    rng = np.random.default_rng(11)
    checked = named = 0
    for op in range(64):
        for src0 in (258, 300, 384 + int(rng.integers(0, 128)), 2, 0xF2):
            w0 = src0 | int(rng.integers(0, 256)) << 9 | (128 | int(rng.integers(0, 128))) << 17 | op << 25
            plain = ours11(w0.to_bytes(4, "little") + _LIT)
            if plain is None or hardware_only(plain) is None:
                continue
            word = (w0.to_bytes(4, "little") + _LIT)[: plain.size]
            t16 = _llvm_true16(word)
            named += 1
            if plain.name in _NO_TRUE16:  # +real-true16 rejects these: LLVM's text, halves spelled
                assert t16 is None
                low = (w0 & ~(1 << 24)).to_bytes(4, "little") + word[4:]
                ((ref, _),) = llvm_disasm([low], "gfx1100", False)
                ref = re.sub(r"/\*Invalid register[^*]*\*/", "", ref)  # v128+ sources: halves now
                t16 = _spell_halves(ref).replace(".l", ".h", 1)
            assert t16 == plain.text, (word.hex(), plain.text, t16)
            checked += 1
    assert named >= 40 and checked == named  # f16 ops x sources


_LIT = (0x4100).to_bytes(4, "little")  # the literal dword, for the ops that read one

# LLVM 19 +real-true16 still prints these with 32-bit registers and rejects a .h destination
# (its fake16 forms)
_NO_TRUE16 = {"v_fmac_f16", "v_fmamk_f16", "v_fmaak_f16", "v_ldexp_f16"}


def _spell_halves(text: str) -> str:
    """LLVM's text with each VGPR vN spelled as a 16-bit half: v(N).l below 128, v(N-128).h."""
    return re.sub(r"\bv(\d+)\b", lambda m: f"v{int(m[1]) & 127}.{'h' if int(m[1]) >= 128 else 'l'}", text)


def ours11(word: bytes):
    try:
        return decode_one(word + bytes(8), 0, "gfx1100", False)
    except DecodeError:
        return None


def test_vop2_high_dst_literal_forms():
    """v_fmac_f16 with a literal, v_fmamk_f16 and v_fmaak_f16 with a .h destination: LLVM 19
    rejects them with or without +real-true16; our text is the +real-true16 spelling of the
    word with VDST bit 7 clear, the destination's ``.l`` made ``.h``."""
    for text, want in (
        ("v_fmac_f16_e32 v4, 0x4100, v2", "v_fmac_f16_e32 v4.h, 0x4100, v2.l"),
        ("v_fmamk_f16 v5, v1, 0x4100, v2", "v_fmamk_f16 v5.h, v1.l, 0x4100, v2.l"),
        ("v_fmaak_f16 v6, v1, v2, 0x4100", "v_fmaak_f16 v6.h, v1.l, v2.l, 0x4100"),
    ):
        word = _high(assemble(text, mcpu="gfx1100"))
        assert _llvm_true16(word) is None
        ins = ours11(word)
        assert ins is not None and hardware_only(ins) == VOP2_HIGH_DST
        assert (ins.text, ins.size, ins.fields["vdst"] >= 128) == (want, 8, True)


def _f16(u):
    return (np.asarray(u, np.uint32) & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float64)


@pytest.mark.parametrize("mode", MODES)
def test_vop2_high_dst_runs(mode):
    """V_ADD_F16 / V_FMAC_F16 (literal) / V_FMAMK_F16 / V_FMAAK_F16 into a .h destination: the
    high half of the register takes the result, the low half keeps its value (RDNA3 guide:
    D.f16 = S0 + S1; D = S0 * S1 + D; D = S0 * K + S1; D = S0 * S1 + K; one rounding)."""
    src = "\n".join(
        [
            "v_lshlrev_b32 v10, 2, v0",
            "global_load_b32 v1, v10, s[2:3]",
            "global_load_b32 v2, v10, s[2:3] offset:128",
            "global_load_b32 v4, v10, s[2:3] offset:256",
            "s_waitcnt vmcnt(0)",
            "v_mov_b32 v3, 0x12345678",
            "v_mov_b32 v5, 0x9abc1357",
            "v_mov_b32 v6, 0x2468ace0",
            words(encode_true16("v_add_f16_e32 v3.h, v1.l, v2.l")),
            words(_high(assemble("v_fmac_f16_e32 v4, 0x4100, v2", mcpu="gfx1100"))),
            words(_high(assemble("v_fmamk_f16 v5, v1, 0x4100, v2", mcpu="gfx1100"))),
            words(_high(assemble("v_fmaak_f16 v6, v1, v2, 0x4100", mcpu="gfx1100"))),
            "global_store_b32 v10, v3, s[0:1]",
            "global_store_b32 v10, v4, s[0:1] offset:128",
            "global_store_b32 v10, v5, s[0:1] offset:256",
            "global_store_b32 v10, v6, s[0:1] offset:384",
            "s_endpgm",
        ]
    )
    rng = np.random.default_rng(9)
    halves = rng.uniform(0.5, 4.0, (3, 32, 2)).astype(np.float16).view(np.uint16).astype(np.uint32)
    x = halves[..., 0] | halves[..., 1] << 16  # [3, 32]: a, b, c
    res, out = run11(src, x, 128, mode)
    assert res.landed, res.refusal
    a, b, c = x
    K = float(np.uint16(0x4100).view(np.float16))

    def hi(low, r):
        bits = np.asarray(r, np.float64).astype(np.float16).view(np.uint16).astype(np.uint32)
        return (np.uint32(low) & 0xFFFF) | bits << 16

    want = [
        hi(0x5678, _f16(a) + _f16(b)),
        hi(c, K * _f16(b) + _f16(c >> 16)),
        hi(0x1357, _f16(a) * K + _f16(b)),
        hi(0xACE0, _f16(a) * _f16(b) + K),
    ]
    np.testing.assert_array_equal(out.reshape(4, 32), np.array(want, np.uint32))


# ----------------------------------------------------------------------------- VOPD VSRC1
def _vopd_vsrc1x(text: str, vsrc1x: int) -> bytes:
    """``text`` (a VOPD word whose X half takes one source) assembled by llvm-mc-19 for gfx1100,
    with the VOPD layout's VSRCX1 field (word 0 bits [16:9]) set by hand (LLVM assembles none)."""
    code = bytearray(assemble(text, mcpu="gfx1100"))
    w = int.from_bytes(code[:4], "little")
    assert (w >> 9) & 0xFF == 0
    code[:4] = (w | vsrc1x << 9).to_bytes(4, "little")
    return bytes(code)


def test_vopd_vsrc1_of_a_one_source_half():
    text = "v_dual_mov_b32 v2, 0x64 :: v_dual_add_nc_u32 v1, v0, v1"
    plain = decode_one(assemble(text, mcpu="gfx1100") + bytes(8), 0, "gfx1100", False)
    word = _vopd_vsrc1x(text, 2)
    (ref,) = llvm_disasm([word], "gfx1100", False)
    assert ref is None  # LLVM 19 rejects it
    ins = decode_one(word + bytes(8), 0, "gfx1100", False)
    assert hardware_only(plain) is None and hardware_only(ins) == VOPD_VSRC1
    assert (ins.text, ins.size, ins.literal, ins.fields["vsrc1x"]) == (plain.text, 12, 100, 2)


@pytest.mark.parametrize("mode", MODES)
def test_vopd_vsrc1_runs(mode):
    """V_DUAL_MOV_B32 (X, a literal, VSRCX1 = v2) :: V_DUAL_ADD_NC_U32 (Y): X's VSRC1 is not
    read; v2 = 100, v1 = v0 + v1 (the RDNA3 guide: both halves read before either writes)."""
    src = "\n".join(
        [
            "v_lshlrev_b32 v10, 2, v0",
            "global_load_b32 v1, v10, s[2:3]",
            "s_waitcnt vmcnt(0)",
            "v_mov_b32 v2, 7",
            words(_vopd_vsrc1x("v_dual_mov_b32 v2, 0x64 :: v_dual_add_nc_u32 v1, v0, v1", 2)),
            "global_store_b32 v10, v1, s[0:1]",
            "global_store_b32 v10, v2, s[0:1] offset:128",
            "s_endpgm",
        ]
    )
    x = np.random.default_rng(4).integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)
    res, out = run11(src, x, 64, mode)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(out[:32], x + np.arange(32, dtype=np.uint32))
    np.testing.assert_array_equal(out[32:], np.full(32, 100, np.uint32))
