"""Decoder contract and bad input (no LLVM needed)."""

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wavelift.isa import DecodeError, decode, decode_one, disassemble


def w(*words):
    return struct.pack(f"<{len(words)}I", *words)


def test_known_lines():
    code = w(0x060204FF, 0x3F800000, 0xBF8CC07F, 0xBF810000)
    assert disassemble(code) == ["v_add_f32_e32 v1, 1.0, v2", "s_waitcnt lgkmcnt(0)", "s_endpgm"]
    ins = decode(code, base=0x100)
    assert ins[0].offset == 0x100 and ins[0].size == 8 and ins[0].literal == 0x3F800000
    assert ins[0].encoding == "VOP2" and ins[0].variant == "e32" and ins[0].name == "v_add_f32"
    assert ins[0].fields["vdst"] == 1 and ins[0].fields["src0"] == 255
    assert [o.role for o in ins[0].operands] == ["vdst", "src0", "vsrc1"]
    assert ins[0].operands[1].kind == "literal"
    assert ins[1].offset == 0x108


def test_missing_literal():
    with pytest.raises(DecodeError) as e:
        decode(w(0x060204FF))
    assert e.value.offset == 0 and e.value.bytes == w(0x060204FF)
    assert "0x0" in str(e.value) and "ff 04 02 06" in str(e.value)


def test_truncated_second_dword_and_tail():
    with pytest.raises(DecodeError):
        decode(w(0xBF810000) + w(0xD5030001)[:4])  # VOP3 first dword only
    with pytest.raises(DecodeError) as e:
        decode(w(0xBF810000) + b"\x00\x00")
    assert e.value.offset == 4


def test_invalid_bytes():
    with pytest.raises(DecodeError):
        decode(w(0xFFFFFFFF))


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=0, max_size=40))
def test_random_bytes_never_crash(data):
    try:
        decode(data)
    except DecodeError:
        pass


# Lines llvm-objdump-19 prints for these bytes (gfx1030, wave32); bytes LLVM rejects -> None.
LLVM_LINES = [
    ("efe790bf", "s_sendmsg 59375"),  # more than 10 bits: a number
    ("01f890bf", "s_sendmsg sendmsg(MSG_INTERRUPT)"),  # named message, high bits set
    ("0000caba83f9223e", "s_setreg_imm32_b32 hwreg(0, 0, 1), 0.15915494"),
    ("7e400ccccbb70218", "v_pk_max_u16 v126, v203, v91"),  # op_sel_hi default [1,1]
    ("20c700cc6e655b06", "v_pk_mad_i16 v32, v110, v178, v150 op_sel_hi:[0,0,1] neg_hi:[1,1,1] clamp"),
    ("ac4808d4fb360300", "v_cmp_u_f32_e64 44/*Invalid immediate*/, src_vccz, v155"),
    ("550203d42ce50120", "v_cmp_le_f32_e64 s85, -v44, |1.0|"),
    ("fd0a87be", "s_wqm_b64 s[6:7], src_scc"),
    ("d40001d41e010300", None),  # v_cmp sdst 212
    ("424605f4cd031b60", "s_load_dwordx2 s[24:25], s[4:5], s48 offset:-0x4fc33 glc dlc"),  # odd sdata
    ("6b0001d41e010300", "v_cmp_lt_f32_e64 vcc_hi, v30, v128"),
]


@pytest.mark.parametrize("hexbytes,text", LLVM_LINES)
def test_llvm_lines(hexbytes, text):
    code = bytes.fromhex(hexbytes)
    if text is None:
        with pytest.raises(DecodeError):
            decode_one(code)
    else:
        ins = decode_one(code)
        assert ins.text == text
        assert ins.size == len(code)


@pytest.mark.parametrize("target", ["gfx1030", "gfx1010"])
@pytest.mark.parametrize("wave64", [False, True])
def test_zero_dword_is_v_illegal(target, wave64):
    """LLVM 19 prints the zero dword as v_illegal on every gfx10 target and wave size (checked
    against LLVM in test_sweep.test_edge_words); other VOP2 opcode-0 words stay invalid."""
    ins = decode_one(w(0), 0, target, wave64)
    assert (ins.name, ins.text, ins.size) == ("v_illegal", "v_illegal", 4)
    with pytest.raises(DecodeError):
        decode_one(w(1), 0, target, wave64)
    from wavelift.isa.disasm_cli import listing

    assert listing(w(0), target, wave64) == ["v_illegal"]  # `wavelift disasm`
