"""GFX11/GFX12 encodings decoded after the first sweeps (tests/isa/test_gfx11_sweep.py), vs
llvm-objdump-19 (live), wave32 and wave64: VINTERP and LDSDIR (GFX12's VDSDIR), VOP3/VOP3P with
DPP16/DPP8, GFX11 MIMG, EXP (GFX12 export).

Each sweep takes every opcode value of its encoding (VOP3 with DPP: every VOP3/VOP3P opcode of
the ALU table with each DPP mark; EXP: every target value) with random fields; in part of the
words the bits LLVM rejects for that opcode (the table's ``rej``/``zero``) are cleared so that
the rest gets exercised; trailing random or literal dwords follow.  Exact text and size must
match and words LLVM calls invalid must raise DecodeError; a named refusal (``not decoded yet``)
is allowed only where the docstring of a sweep says so, and counted.  The default run samples;
``-m slow`` sweeps more words and covers the targets that share tables (gfx1101/1102/1103,
gfx1151/1152, gfx1201)."""

from __future__ import annotations

import random
import struct

import pytest

from wavelift.isa.decoder import load_table
from wavelift.isa.encodings import ISAS, generation

from .gfx11_compare import CONFIGS, IDS, SHARED, against_llvm, needs_llvm
from .sweep import SRC_POOL

ALL = CONFIGS + SHARED
ALL_IDS = [f"{t}-w{64 if w else 32}" for t, w in ALL]
LATE = ("VINTERP", "LDSDIR")
N_FAST = 24


def late_words(enc, target, wave64, n_per_op, seed):
    """[(op, bytes)]: every opcode value of ``enc``, ``n_per_op`` words of random fields each."""
    rnd = random.Random(seed)
    isa = ISAS[generation(target)]
    tab = load_table(target, wave64).get(enc, {})
    (op_lo, op_w) = next((lo, w) for n, lo, w in isa.layouts[enc] if n == "op")
    nw = isa.nwords.get(enc, 1)
    fv, fl = isa.fixed[enc]
    top = ((1 << (32 - fl)) - 1) << fl
    items = []
    for op in range(1 << op_w):
        rej = tab.get(op, {}).get("rej", 0)
        for k in range(n_per_op if op in tab else max(1, n_per_op // 8)):
            val = rnd.getrandbits(32 * nw) & ~top & ~(((1 << op_w) - 1) << op_lo)
            val |= fv << fl | op << op_lo
            if k % 2 == 0:
                val &= ~rej
            if enc == "VINTERP" and k % 4 == 1:  # VGPR sources
                for lo in (32, 41, 50):
                    val |= 0x100 << lo
            words = [(val >> (32 * i)) & 0xFFFFFFFF for i in range(nw)]
            words.append(rnd.choice([0x3F800000, 0x12345678, 0x40, 0xFFFFFFF0]))
            items.append((op, struct.pack(f"<{len(words)}I", *words)))
    return items


def _check(enc, target, wave64, n, seed):
    items = late_words(enc, target, wave64, n, seed)
    t = against_llvm([b for _, b in items], target, wave64, refusals="none", keys=[op for op, _ in items])
    print(f"{target} w{64 if wave64 else 32} {enc}: {len(items)} words, {t.same} equal, {len(t.ops)} opcodes")
    assert t.ops, "no opcode decoded"
    assert not t.bad, t.bad[:5]


@needs_llvm
@pytest.mark.parametrize("target,wave64", CONFIGS, ids=IDS)
@pytest.mark.parametrize("enc", LATE)
def test_late_sweep(enc, target, wave64):
    _check(enc, target, wave64, N_FAST, 1)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize("target,wave64", ALL, ids=ALL_IDS)
@pytest.mark.parametrize("enc", LATE)
def test_late_sweep_slow(enc, target, wave64):
    _check(enc, target, wave64, 1000 if enc == "LDSDIR" else 400, 2)


# ----------------------------------------------------------------------------- VOP3 with DPP
def dpp3_words(target, wave64, n_per_op, seed):
    """Every VOP3/VOP3P opcode of the ALU table with each DPP mark (0xFA DPP16, 0xE9/0xEA DPP8)
    in src0: random vdst/sdst, modifiers and src1/src2 (mostly VGPRs, else SGPRs, constants or
    the literal code), a random control dword (DPP16: half of them with a common dpp_ctrl),
    then a literal."""
    rnd = random.Random(seed)
    tab = load_table(target, wave64)
    isa = ISAS[generation(target)]
    items = []
    for enc in ("VOP3", "VOP3P"):
        for op, e in sorted(tab[enc].items()):
            lay = e.get("enc") or enc
            for mark in (0xFA, 0xE9, 0xEA):
                for k in range(n_per_op):
                    f = {"op": op, "src0": mark}
                    for name, _lo, w in isa.layouts[lay]:
                        if name in f:
                            continue
                        if name in ("src1", "src2"):
                            v = 256 + rnd.randrange(256) if rnd.random() < 0.6 else rnd.choice(SRC_POOL)
                        elif name in (
                            "abs",
                            "neg",
                            "opsel",
                            "clamp",
                            "omod",
                            "neg_hi",
                            "opsel_hi",
                            "opsel_hi2",
                        ):
                            v = rnd.randrange(1 << w) if rnd.random() < 0.3 else 0
                            if name.startswith("opsel_hi") and rnd.random() < 0.6:
                                v = (1 << w) - 1
                        else:
                            v = rnd.randrange(1 << w)
                        f[name] = v
                    ws = isa.encode(lay, **f)
                    if k % 2 == 0:  # mostly clear of the bits the e64 form rejects
                        val = (ws[0] | ws[1] << 32) & ~e.get("rej", 0)
                        ws = [val & 0xFFFFFFFF, val >> 32]
                    w2 = rnd.getrandbits(32)
                    if mark == 0xFA and rnd.random() < 0.5:
                        c = rnd.choice([0xE4, 0x1B, 0x111, 0x121, 0x141, 0x150, 0x160])
                        w2 = (w2 & ~(0x1FF << 8) & ~(0xF << 20)) | c << 8 | 0xFF << 24
                    lit = rnd.choice([0x3F800000, 0x12345678, 0x40, 0xFFFFFFF0])
                    items.append(struct.pack("<4I", ws[0], ws[1], w2, lit))
    return items


def _check_dpp3(target, wave64, n, seed):
    """Named refusals allowed (under a tenth): the forms the DPP table marks unk/unk2/vonly/nd."""
    items = dpp3_words(target, wave64, n, seed)
    t = against_llvm(items, target, wave64)
    print(
        f"{target} w{64 if wave64 else 32} VOP3/VOP3P with DPP: {len(items)} words, {t.same} equal, "
        f"{t.refused} refused by name"
    )
    assert t.same > len(items) // 10
    assert t.refused < len(items) // 10
    assert not t.bad, t.bad[:5]


@needs_llvm
@pytest.mark.parametrize("target,wave64", CONFIGS, ids=IDS)
def test_vop3_dpp(target, wave64):
    _check_dpp3(target, wave64, 1, 1)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize("target,wave64", ALL, ids=ALL_IDS)
def test_vop3_dpp_slow(target, wave64):
    _check_dpp3(target, wave64, 6, 2)


# ----------------------------------------------------------------------------- GFX11 MIMG
GFX11 = [c for c in CONFIGS if generation(c[0]) == "gfx11"]
GFX11_ALL = [c for c in ALL if generation(c[0]) == "gfx11"]


def mimg_words(target, n_per_op, seed):
    """Every MIMG opcode value: opcodes of the table ``n_per_op`` words, the others one; random
    dmask/dim/NSA/flags (in a third of the words the table's base fields and zero fields), VGPRs mostly in range (a fifth near v255, where LLVM keeps the decoded
    widths), random srsrc/ssamp; in a third the bits no field names are random too; an NSA word
    carries its address dword, and every word is followed by two random dwords."""
    from wavelift.isa.instruction import TABLE_TARGET
    from wavelift.isa.memory import load_memory_table

    rnd = random.Random(seed)
    tab = load_memory_table(TABLE_TARGET.get(target, target))
    lay = tab["layout"]["MIMG"]
    items = []
    for op in range(256):
        for k in range(n_per_op if str(op) in tab["MIMG"] else 1):
            f = {"op": op, "nsa": rnd.randrange(2), "dim": rnd.randrange(8), "dmask": rnd.randrange(16)}
            for name in ("unrm", "glc", "slc", "dlc", "r128", "a16", "d16", "tfe", "lwe"):
                f[name] = int(rnd.random() < 0.25)
            for name in ("vdata", "vaddr"):
                f[name] = 250 + rnd.randrange(6) if rnd.random() < 0.2 else rnd.randrange(240)
            f["srsrc"], f["ssamp"] = rnd.randrange(32), rnd.randrange(32)
            if k % 3 == 2:
                for name in ("r1", "r5", "r55", "r63"):
                    f[name] = rnd.getrandbits(lay[name][2])
            elif k % 3 == 1 and str(op) in tab["MIMG"]:  # the table's valid base and zero fields
                e = tab["MIMG"][str(op)]
                f.update(e["base"])
                f.update({z: 0 for z in e["zero"]})
            ws = [0xF0000000, 0]
            for name, v in f.items():
                w, lo, width = lay[name]
                ws[w] |= (v & ((1 << width) - 1)) << lo
            ws += [rnd.getrandbits(32) & 0x7F7F7F7F, rnd.getrandbits(32)]
            items.append((op, struct.pack("<4I", *ws)))
    return items


def _check_mimg(target, wave64, n, seed):
    """Named refusals allowed (under a fiftieth): BVH with NSA."""
    items = mimg_words(target, n, seed)
    # (refused by name: BVH with NSA, LLVM prints several address ranges)
    t = against_llvm([b for _, b in items], target, wave64, keys=[op for op, _ in items])
    print(
        f"{target} w{64 if wave64 else 32} MIMG: {len(items)} words, {t.same} equal, {len(t.ops)} opcodes, "
        f"{t.refused} refused by name"
    )
    assert t.same > len(items) // 4
    assert t.refused < len(items) // 50
    assert not t.bad, t.bad[:5]


@needs_llvm
@pytest.mark.parametrize("target,wave64", GFX11, ids=[f"{t}-w{64 if w else 32}" for t, w in GFX11])
def test_mimg11(target, wave64):
    _check_mimg(target, wave64, 12, 1)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize("target,wave64", GFX11_ALL, ids=[f"{t}-w{64 if w else 32}" for t, w in GFX11_ALL])
def test_mimg11_slow(target, wave64):
    _check_mimg(target, wave64, 150, 2)


# ----------------------------------------------------------------------------- EXP
def exp_words(n, seed):
    """EXP words: every target value, random en/sources and random other bits of the first dword
    (in half the words only done/row_en), then two random dwords."""
    rnd = random.Random(seed)
    items = []
    for tgt in range(64):
        for k in range(n):
            other = rnd.getrandbits(16) << 10 if k % 2 else rnd.choice([0, 1 << 11, 1 << 13, 5 << 11])
            w0 = 0xF8000000 | (other & 0x3FFFC00) | tgt << 4 | rnd.randrange(16)
            items.append(
                struct.pack("<4I", w0, rnd.getrandbits(32), rnd.getrandbits(32), rnd.getrandbits(32))
            )
    return items


def _check_exp(target, wave64, n, seed):
    items = exp_words(n, seed)
    t = against_llvm(items, target, wave64, refusals="none")
    print(f"{target} w{64 if wave64 else 32} EXP: {len(items)} words, {t.same} equal")
    assert t.same > len(items) // 4
    assert not t.bad, t.bad[:5]


@needs_llvm
@pytest.mark.parametrize("target,wave64", CONFIGS, ids=IDS)
def test_exp(target, wave64):
    _check_exp(target, wave64, 4, 1)


@needs_llvm
@pytest.mark.slow
@pytest.mark.parametrize("target,wave64", ALL, ids=ALL_IDS)
def test_exp_slow(target, wave64):
    _check_exp(target, wave64, 60, 2)
