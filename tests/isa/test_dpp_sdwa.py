"""DPP16 / DPP8 / SDWA forms of VOP1/VOP2/VOPC: ours vs llvm-objdump-19 (live), plus fixed lines
and field checks that need no LLVM."""

import random
import struct
import zlib

import pytest

from wavelift.isa import DecodeError, decode, decode_one
from wavelift.isa.dpp_sdwa import load_dpp_table
from wavelift.isa.encodings import classify, encode
from wavelift.isa.llvm_oracle import have_llvm, llvm_disasm

MARK = {"dpp": (0xFA,), "dpp8": (0xE9, 0xEA), "sdwa": (0xF9,)}
# every class of dpp_ctrl: quad_perm, row_shl/shr/ror, wave_* and row_bcast (GFX10 comments),
# row_mirror, row_half_mirror, row_share, row_xmask, and values LLVM calls invalid
CTRL_POOL = [
    0x00,
    0x1B,
    0xE4,
    0xFF,
    0x39,
    0x100,
    0x101,
    0x108,
    0x10F,
    0x110,
    0x111,
    0x11F,
    0x120,
    0x121,
    0x12F,
    0x130,
    0x134,
    0x138,
    0x13C,
    0x140,
    0x141,
    0x142,
    0x143,
    0x144,
    0x14F,
    0x150,
    0x157,
    0x15F,
    0x160,
    0x16A,
    0x16F,
    0x170,
    0x1FF,
]
SRC8_POOL = [
    0,
    1,
    7,
    40,
    101,
    105,
    106,
    107,
    108,
    123,
    124,
    125,
    126,
    127,
    128,
    129,
    160,
    192,
    193,
    208,
    209,
    233,
    235,
    239,
    240,
    242,
    247,
    248,
    249,
    250,
    251,
    254,
    255,
]


def w(*words):
    return struct.pack(f"<{len(words)}I", *words)


def _sel(rnd):
    # select 7 is never sent to LLVM: llvm-objdump-19 crashes on it (llvm_unreachable)
    return rnd.choice((0, 1, 2, 3, 4, 5, 6, 6, 6))


def gen_items(target, wave64, n_per_op, seed):
    """(variant, encoding, opcode, bytes) with varied controls for every opcode value of
    VOP1/VOP2/VOPC (those LLVM rejects included) in every form."""
    rnd = random.Random(seed)
    tab = load_dpp_table(target)["w64" if wave64 else "w32"]
    items = []
    for enc in ("VOP1", "VOP2", "VOPC"):
        for op in range(64 if enc == "VOP2" else 256):
            if classify(encode(enc, op=op)[0]) != enc:
                continue
            known = tab.get(enc, {}).get(op, {})
            for var, marks in MARK.items():
                e = known.get(var)
                n = n_per_op if e and not e.get("plain") else 1
                for k in range(n):
                    clean = k == 0  # one word per opcode with only valid, plain controls
                    f = {"op": op, "src0": rnd.choice(marks)}
                    fb = e.get("fb") if e else None
                    if enc != "VOPC":
                        f["vdst"] = rnd.randrange(256) if rnd.random() < 0.9 else 0
                        if e and e.get("plain"):
                            # v_pipeflush & co. ignore src0 and are decoded as the e32 form, whose
                            # other fields test_sweep.py covers; here only the hand-off is tested
                            f["vdst"] = 0
                        if fb and (clean or rnd.random() < 0.8):
                            f["vdst"] = 0  # v_nop: the 8-byte forms need vdst 0
                    if enc != "VOP1":
                        f["vsrc1"] = rnd.randrange(256)
                    w0 = encode(enc, **f)[0]
                    src = rnd.randrange(256)
                    if var == "dpp":
                        w1 = (
                            src
                            | rnd.choice(CTRL_POOL) << 8
                            | rnd.randrange(16) << 24
                            | rnd.randrange(16) << 28
                        )
                        if rnd.random() < 0.5 and not clean:
                            w1 |= rnd.randrange(1 << 7) << 17  # r17, fi, bound_ctrl, mods
                    elif var == "dpp8":
                        w1 = src | rnd.getrandbits(24) << 8
                    else:
                        s_on = rnd.random() < 0.4 and not clean
                        if s_on:
                            src = rnd.choice(SRC8_POOL)
                        w1 = src | _sel(rnd) << 16 | s_on << 23
                        if enc != "VOP1" or (rnd.random() < 0.2 and not clean):
                            w1 |= _sel(rnd) << 24
                            if rnd.random() < 0.4 and not clean:
                                w1 |= 1 << 31
                                if enc != "VOP1":  # VOP1 has no vsrc1 (bits 9-16 = op)
                                    w0 = (w0 & ~(0xFF << 9)) | rnd.choice(SRC8_POOL) << 9
                        if enc == "VOPC":
                            sd = rnd.random() < 0.6 and not clean
                            w1 |= (rnd.randrange(128) if not clean else 0) << 8 | sd << 15
                        else:
                            w1 |= _sel(rnd) << 8 | rnd.randrange(3 if clean else 4) << 11
                            if rnd.random() < 0.3 and not clean:
                                w1 |= rnd.randrange(8) << 13  # clamp, omod
                        if rnd.random() < 0.5 and not clean:
                            w1 |= rnd.choice((1, 2, 3, 4, 8)) << 19  # src0 sext/neg/abs/r22
                        if rnd.random() < 0.3 and not clean:
                            w1 |= rnd.choice((1, 2, 3, 4, 8)) << 27  # src1 sext/neg/abs/r30
                    if fb and (clean or rnd.random() < 0.5):
                        # v_nop: LLVM takes the 8-byte form only with its fixed bits (src0 byte,
                        # modifiers) at their value, else falls back to the 4-byte v_nop
                        w1 = (w1 & ~fb[0]) | fb[1]
                        if rnd.random() < 0.3 and not clean:
                            w1 ^= 1 << rnd.choice([b for b in range(32) if fb[0] >> b & 1])
                    items.append((var, enc, op, w(w0, w1 & 0xFFFFFFFF)))
    return items


def compare(target, wave64, n_per_op=6, seed=1):
    items = gen_items(target, wave64, n_per_op, seed)
    ref = llvm_disasm([b for *_, b in items], target, wave64)
    bad = []
    ops = {"dpp": set(), "dpp8": set(), "sdwa": set()}
    for (var, enc, op, b), r in zip(items, ref):
        try:
            ins = decode_one(b, 0, target, wave64)
            ours = (ins.text, ins.size)
        except DecodeError:
            ours = None
        if ours != r:
            bad.append((b.hex(), ours, r))
        elif r is not None and r[1] == 8:
            ops[var].add((enc, op))
    return ops, bad, len(items)


@pytest.mark.parametrize("wave64", [False, True], ids=["w32", "w64"])
@pytest.mark.parametrize("target", ["gfx1030", "gfx1010"])
def test_sweep_vs_llvm(target, wave64):
    _sweep(target, wave64, 6, _seed(target, wave64))


def _seed(target, wave64, k=0):
    # a fixed function of the parameters (hash() of a str changes with PYTHONHASHSEED)
    return zlib.crc32(f"dpp:{target}:{int(wave64)}:{k}".encode()) & 0xFFFF


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("wave64", [False, True], ids=["w32", "w64"])
@pytest.mark.parametrize("target", ["gfx1030", "gfx1010"])
def test_sweep_vs_llvm_slow(target, wave64, k):
    _sweep(target, wave64, 24, _seed(target, wave64, k))


def _sweep(target, wave64, n_per_op, seed):
    if not have_llvm():
        pytest.skip("llvm-mc-19/llvm-objdump-19 not installed: cannot compare with LLVM")
    ops, bad, n = compare(target, wave64, n_per_op, seed=seed)
    print(
        f"{target} {'w64' if wave64 else 'w32'}: {n} words; opcodes matched: "
        + ", ".join(f"{v} {len(s)}" for v, s in ops.items())
        + f"; {len(bad)} mismatches"
    )
    assert not bad, bad[:8]
    tab = load_dpp_table(target)["w64" if wave64 else "w32"]
    for var in ops:  # every opcode of the table was seen decoding to the same text as LLVM
        want = {
            (enc, op)
            for enc, t in tab.items()
            for op, byv in t.items()
            if var in byv and not byv[var].get("plain")
        }
        assert ops[var] == want, (var, sorted(want - ops[var])[:10])
    assert len(ops["dpp"]) >= 90 and len(ops["dpp8"]) >= 90 and len(ops["sdwa"]) >= 200


# ------------------------------------------------------------------ no LLVM needed
CASES = [
    # (target, wave64, words, text)  -- texts as llvm-objdump-19 prints them
    (
        "gfx1030",
        False,
        (0x7E0A02FA, 0xFF00E407),
        "v_mov_b32_dpp v5, v7 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
    ),
    (
        "gfx1030",
        False,
        (0x7E0A02FA, 0xF30C1B07),
        "v_mov_b32_dpp v5, v7 quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0x3 bound_ctrl:1 fi:1",
    ),
    (
        "gfx1030",
        False,
        (0x7E0A02FA, 0xFF013007),
        "v_mov_b32_dpp v5, v7 /* wave_shl is not supported starting from GFX10 */ row_mask:0xf bank_mask:0xf",
    ),
    (
        "gfx1030",
        False,
        (0x7E0A02FA, 0x00017007),
        "v_mov_b32_dpp v5, v7 /* Invalid dpp_ctrl value */ row_mask:0x0 bank_mask:0x0",
    ),
    (
        "gfx1030",
        False,
        (0x060A12FA, 0xFF30E407),
        "v_add_f32_dpp v5, -|v7|, v9 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf",
    ),
    ("gfx1030", False, (0x7E0A02EA, 0x05397707), "v_mov_b32_dpp v5, v7 dpp8:[7,6,5,4,3,2,1,0] fi:1"),
    (
        "gfx1030",
        False,
        (0x060A12F9, 0x00006007),
        "v_add_f32_sdwa v5, v7, v9 clamp mul:2 dst_sel:BYTE_0 dst_unused:UNUSED_PAD "
        "src0_sel:BYTE_0 src1_sel:BYTE_0",
    ),
    (
        "gfx1030",
        False,
        (0x060A12F9, 0x00800007),
        "v_add_f32_sdwa v5, s7, v9 dst_sel:BYTE_0 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:BYTE_0",
    ),
    (
        "gfx1030",
        False,
        (0x7C0212F9, 0x00009407),
        "v_cmp_lt_f32_sdwa s20, v7, v9 src0_sel:BYTE_0 src1_sel:BYTE_0",
    ),
    (
        "gfx1030",
        True,
        (0x7C0212F9, 0x00000007),
        "v_cmp_lt_f32_sdwa vcc, v7, v9 src0_sel:BYTE_0 src1_sel:BYTE_0",
    ),
    (
        "gfx1030",
        True,
        (0x7C0212F9, 0x00009407),
        "v_cmp_lt_f32_sdwa s[20:21], v7, v9 src0_sel:BYTE_0 src1_sel:BYTE_0",
    ),
    # v_nop (vdst 0, src0 byte 0): 8-byte forms
    ("gfx1030", False, (0x7E0000EA, 0x0FB74A00), "v_nop dpp8:[2,1,5,3,3,7,3,0] fi:1"),
    ("gfx1010", True, (0x7E0000E9, 0x004AB700), "v_nop dpp8:[7,6,2,5,4,0,0,0]"),
    (
        "gfx1030",
        False,
        (0x7E0000FA, 0xF30C1B00),
        "v_nop quad_perm:[3,2,1,0] row_mask:0xf bank_mask:0x3 bound_ctrl:1 fi:1",
    ),
    (
        "gfx1010",
        False,
        (0x7E0000FA, 0x00017000),
        "v_nop /* Invalid dpp_ctrl value */ row_mask:0x0 bank_mask:0x0",
    ),
    ("gfx1030", False, (0x7E0000F9, 0x40401F00), "v_nop"),
]

# v_nop with a marker whose fixed bits are not at their value: LLVM's 4-byte v_nop
FALLBACK = [
    ("gfx1030", (0x7E0000EA, 0x0FB74A0F)),  # DPP8: src0 byte != 0
    ("gfx1030", (0x7E0000FA, 0xFF10E400)),  # DPP16: src0_neg
    ("gfx1010", (0x7E0000FA, 0xFF00E401)),  # DPP16: src0 byte
    ("gfx1030", (0x7E0000F9, 0x00002000)),  # SDWA: clamp
    ("gfx1030", (0x7E0000F9, 0x00060000)),  # SDWA: src0_sel
    ("gfx1030", (0x7E0036FA, 0xFF00E400)),  # v_pipeflush: always plain
    ("gfx1030", (0x7E0082E9, 0x00000000)),  # v_clrexcp: always plain
]


@pytest.mark.parametrize("target,words", FALLBACK)
def test_nop_fallback(target, words):
    ins = decode_one(w(*words), 0, target, False)
    assert ins.size == 4 and ins.text in ("v_nop", "v_pipeflush", "v_clrexcp")
    assert ins.variant != "dpp" and ins.variant != "dpp8" and ins.variant != "sdwa"


def test_nop_vdst_rejected():
    with pytest.raises(DecodeError):  # vdst != 0: LLVM rejects both forms
        decode_one(w(0x7E0A00EA, 0x0FB74A00), 0, "gfx1030", False)


@pytest.mark.parametrize("target,wave64,words,text", CASES)
def test_known_lines(target, wave64, words, text):
    ins = decode_one(w(*words), 0, target, wave64)
    assert ins.text == text and ins.size == 8


def test_fields_dpp16():
    ins = decode_one(w(0x060A12FA, 0x3C3C1B07), 0, "gfx1030", False, base=0x40)
    assert ins.offset == 0x40 and ins.encoding == "VOP2" and ins.variant == "dpp"
    assert ins.name == "v_add_f32" and ins.mnemonic == "v_add_f32_dpp"
    f = ins.fields
    assert (f["dpp_ctrl"], f["row_mask"], f["bank_mask"], f["bound_ctrl"], f["fi"]) == (0x1B, 3, 0xC, 1, 1)
    assert (f["src0_neg"], f["src0_abs"], f["src1_neg"], f["src1_abs"]) == (1, 1, 0, 0)
    assert f["src0"] == 256 + 7 and f["vsrc1"] == 9 and f["vdst"] == 5 and f["ext"] == 0xFA
    assert [o.role for o in ins.operands] == ["vdst", "src0", "src1"]
    assert ins.operands[1].kind == "vgpr" and ins.operands[1].index == 7


def test_fields_dpp8_and_sdwa():
    ins = decode_one(w(0x7E0A02E9, 0x0788C607), 0, "gfx1030", False)
    assert ins.variant == "dpp8" and ins.text == "v_mov_b32_dpp v5, v7 dpp8:[6,0,3,4,0,7,1,0]"
    sel = 0x0788C6
    assert ins.fields["dpp8"] == tuple((sel >> (3 * i)) & 7 for i in range(8))
    assert ins.fields["fi"] == 0 and ins.fields["src0"] == 256 + 7
    ins = decode_one(w(0x060A12F9, 0x86051407 | 0x800000), 0, "gfx1030", False)
    f = ins.fields
    assert ins.variant == "sdwa"
    assert (f["dst_sel"], f["dst_unused"], f["src0_sel"], f["src1_sel"]) == (4, 2, 5, 6)
    assert f["s0"] == 1 and f["src0"] == 7 and f["s1"] == 1 and f["src1"] == 9
    assert ins.operands[1].kind == "sgpr" and ins.operands[2].text == "s9"
    ins = decode_one(w(0x7C0212F9, 0x00009407), 0, "gfx1030", False)
    assert ins.fields["sd"] == 1 and ins.fields["sdst"] == 20 and ins.operands[0].text == "s20"


@pytest.mark.parametrize(
    "words",
    [
        (0x060A12F9, 0x00000707),  # dst_sel 7 (reserved; LLVM 19 crashes)
        (0x060A12F9, 0x00070007),  # src0_sel 7
        (0x060A12F9, 0x07000007),  # src1_sel 7
        (0x7C0212FA, 0xFF00E407),  # VOPC has no DPP on GFX10
        (0x7E0A02FA,),  # truncated
    ],
)
def test_rejected(words):
    with pytest.raises(DecodeError):
        decode_one(w(*words), 0, "gfx1030", False)


def test_nop_fallback_not_cached_by_first_dword():
    # the 4-byte fall-back and the 8-byte form share their first dword: decode_one's result
    # cache must not answer the second from the first (or the other way round)
    w0 = 0x7E0000EA
    a = decode_one(w(w0, 0x0FB74A0F), 0, "gfx1030", False)
    b = decode_one(w(w0, 0x0FB74A00), 0, "gfx1030", False)
    c = decode_one(w(w0, 0x0FB74A0F), 0, "gfx1030", False)
    assert (a.size, b.size, c.size) == (4, 8, 4)
    assert b.text == "v_nop dpp8:[2,1,5,3,3,7,3,0] fi:1" and a.text == c.text == "v_nop"
    seq = decode(w(w0, 0x0FB74A00, w0, 0x0FB74A0F, w0, 0x0FB74A00), "gfx1030")
    assert [i.size for i in seq] == [8, 4, 4, 8]
    assert [seq[0].text, seq[1].text, seq[3].text] == [b.text, "v_nop", b.text]
