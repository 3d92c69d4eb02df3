"""Every modifier LLVM prints is honoured or refused, never dropped.

Random words are decoded (gfx1030, wave32) and each VALU instruction that translates is
translated alone; a modifier field whose value is not its default, and which LLVM's text shows
(our text equals llvm-objdump-19's: tests/isa), must be read by the translator.  A field read is
not yet a field honoured, but a field never read is certainly ignored: this found SDWA's omod,
DPP/SDWA abs/neg of v_cndmask_b32 and op_sel/neg of the dot products being dropped (silently
wrong results).  Modifiers LLVM does not print (op_sel of 32-bit operands, abs/neg of integer
operands) are not operands of that instruction and are not checked.
"""

from __future__ import annotations

import random
import struct

import pytest

import wavelift.frontend.flow as flow
from wavelift.errors import Refused
from wavelift.frontend.program import translate
from wavelift.isa import decode_one

END = struct.pack("<I", 0xBF810000)  # s_endpgm
# field -> (its default, a test on LLVM's text that says the modifier is shown)
SHOWN = {
    "omod": (0, lambda t: " mul:" in t or " div:" in t),
    "opsel": (0, lambda t: " op_sel:" in t),
    "opsel_hi": (None, lambda t: " op_sel_hi:" in t),
    "neg_hi": (0, lambda t: " neg_hi:" in t),
    "src0_abs": (0, lambda t: "|" in t),
    "src1_abs": (0, lambda t: "|" in t),
    "src0_neg": (0, lambda t: "-" in t.split(" ", 1)[1]),
    "src1_neg": (0, lambda t: "-" in t.split(" ", 1)[1]),
    "dst_sel": (6, lambda t: "dst_sel:" in t),
    "dst_unused": (0, lambda t: "dst_unused:" in t),
    "src0_sel": (6, lambda t: "src0_sel:" in t),
    "src1_sel": (6, lambda t: "src1_sel:" in t),
    "src0_sext": (0, lambda t: "sext(" in t),
    "src1_sext": (0, lambda t: "sext(" in t),
    "row_mask": (15, lambda t: "row_mask:" in t),
    "bank_mask": (15, lambda t: "bank_mask:" in t),
    "bound_ctrl": (0, lambda t: "bound_ctrl:" in t),
    "fi": (0, lambda t: "fi:" in t),
}


class _Reads(dict):
    """An instruction's fields that remember which ones were looked at."""

    def __init__(self, d):
        super().__init__(d)
        self.read: set = set()

    def __getitem__(self, k):
        self.read.add(k)
        return super().__getitem__(k)

    def get(self, k, d=None):
        self.read.add(k)
        return super().get(k, d)

    def __contains__(self, k):
        self.read.add(k)
        return super().__contains__(k)


def _dropped(count: int, seed: int):
    seen: list = []

    def decode_first(code, pos, target, wave64, base):
        ins = decode_one(code, pos, target, wave64, base)
        if pos == 0:
            ins = ins._replace(fields=_Reads(ins.fields))
            seen.append(ins)
        return ins

    rng = random.Random(seed)
    out, n = [], 0
    mp = pytest.MonkeyPatch()
    mp.setattr(flow, "decode_one", decode_first)
    try:
        for _ in range(count):
            w = [rng.getrandbits(32) for _ in range(4)]
            kind = rng.randrange(4)  # VOP1/2 SDWA or DPP, VOP3, VOP3P
            if kind < 2:
                w[0] = (w[0] & 0x7FFFFE00) | (0xF9, 0xFA)[kind]
            else:
                w[0] = (w[0] & 0x03FFFFFF) | ((0b110101, 0b110011)[kind - 2] << 26)
            words = struct.pack("<4I", *w)
            try:
                ins = decode_one(words, 0, "gfx1030", False, 0)
            except Exception:  # noqa: BLE001 - not an instruction: next word
                continue
            if not ins.name.startswith("v_") or ins.encoding in ("VOPC",):
                continue
            seen.clear()
            try:
                translate(words[: ins.size] + END + bytes(64), "gfx1030", 32, 0x1000)
            except Refused:
                continue
            n += 1
            got = seen[0]
            for k, (default, shown) in SHOWN.items():
                v = dict.get(got.fields, k)
                if v is None or k in got.fields.read or not shown(got.text):
                    continue
                if default is None or v != default:
                    out.append((k, v, got.text))
    finally:
        mp.undo()
    return n, out


def test_no_printed_modifier_is_dropped():
    n, dropped = _dropped(24000, 1)
    assert n > 1000, n  # the sample reached the translator
    assert not dropped, dropped[:10]
