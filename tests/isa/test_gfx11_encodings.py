"""GFX11/GFX12 encodings decoded after the first sweeps (tests/isa/test_gfx11_sweep.py), vs
llvm-objdump-19 (live), wave32 and wave64: VINTERP and LDSDIR (GFX12's VDSDIR).

Every opcode value of the encoding (valid or not) with random fields: in about half the words
the bits LLVM rejects for that opcode (the table's ``rej``) are cleared so that the rest gets
exercised; each word is followed by a literal dword.  Exact text and size must match and words
LLVM calls invalid must raise DecodeError (never a named refusal: these encodings are decoded).
Opcode values LLVM has no instruction for get an eighth as many.  The default run samples
(``N_FAST`` words per opcode); ``-m slow`` sweeps more and covers the
targets that share tables (gfx1101/1102/1103, gfx1151/1152, gfx1201)."""

from __future__ import annotations

import random
import struct

import pytest

from wavelift.isa.decoder import load_table
from wavelift.isa.encodings import ISAS, generation
from wavelift.isa.llvm_oracle import NOP, llvm_disasm

from .test_gfx11_sweep import CONFIGS, IDS, SHARED, needs_llvm, ours

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
    ref = llvm_disasm([b for _, b in items], target, wave64)
    bad, same, ops = [], 0, set()
    for (op, b), r in zip(items, ref):
        o = ours(b + NOP * 3, target, wave64)
        if o != r:
            bad.append((b.hex(), o, r))
        elif r is not None:
            same += 1
            ops.add(op)
    print(f"{target} w{64 if wave64 else 32} {enc}: {len(items)} words, {same} equal, {len(ops)} opcodes")
    assert ops, "no opcode decoded"
    assert not bad, bad[:5]


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
