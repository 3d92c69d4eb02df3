"""The GFX11/GFX12 decoder sweeps' shared part (tests/isa/test_gfx11_sweep.py and
tests/isa/test_gfx11_encodings.py): the targets, our decode of one word, and the comparison of a
batch of words against llvm-objdump-19 (live), tallied."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from wavelift.isa import DecodeError, decode_one
from wavelift.isa.decoder import NOT_DECODED, hardware_only
from wavelift.isa.llvm_oracle import NOP, have_llvm, llvm_disasm

CONFIGS = [("gfx1100", False), ("gfx1100", True), ("gfx1150", False), ("gfx1200", False), ("gfx1200", True)]
SHARED = [
    ("gfx1101", False),
    ("gfx1102", True),
    ("gfx1103", False),
    ("gfx1150", True),
    ("gfx1151", False),
    ("gfx1152", True),
    ("gfx1201", False),
    ("gfx1201", True),
]
IDS = [f"{t}-w{64 if w else 32}" for t, w in CONFIGS]

needs_llvm = pytest.mark.skipif(not have_llvm(), reason="llvm-mc-19 not installed: cannot compare with LLVM")


class HardwareOnly(str):
    """What ``ours`` gives for a word LLVM 19 rejects but the hardware runs: its named category
    (decision 0023, "Words LLVM 19 rejects that hardware runs"); never equal to LLVM's verdict."""


def ours(b, target, wave64):
    """(text, size), None for invalid, "not decoded" for a named refusal, or a HardwareOnly
    category for a word LLVM 19 rejects and the hardware runs."""
    try:
        ins = decode_one(b, 0, target, wave64)
    except DecodeError as e:
        return "not decoded" if e.reason.startswith(NOT_DECODED) else None
    cat = hardware_only(ins)
    return HardwareOnly(cat) if cat else (ins.text, ins.size)


@dataclass
class Tally:
    """Words compared with LLVM: ``same`` valid and equal (text and size), ``invalid`` invalid
    for both, ``refused`` refused by name where allowed, ``bad`` (hex, ours, LLVM's) for the
    rest; ``valid`` how many LLVM decodes; ``ops`` the keys of the words counted ``same``."""

    same: int = 0
    invalid: int = 0
    refused: int = 0
    valid: int = 0
    bad: list = field(default_factory=list)
    ops: set = field(default_factory=set)
    hardware: dict = field(default_factory=dict)


def against_llvm(items, target, wave64, pad=3, refusals="any", keys=None) -> Tally:
    """Each word of ``items`` (bytes; ``pad`` NOPs appended for ours, so that a short word does
    not read past its end) decoded by us and by llvm-objdump-19.  ``refusals``: where a named
    refusal ("not decoded yet") is allowed: "any" word, "invalid" only a word LLVM rejects (one
    the hardware runs), "none" (then it is a mismatch).  ``keys``: per word, what ``ops``
    collects for the words that match and are valid."""
    ref = llvm_disasm(items, target, wave64)
    t = Tally()
    for k, (b, r) in enumerate(zip(items, ref)):
        o = ours(b + NOP * pad, target, wave64)
        t.valid += r is not None
        if o == "not decoded" and (refusals == "any" or (refusals == "invalid" and r is None)):
            t.refused += 1
        elif isinstance(o, HardwareOnly) and r is None:
            t.hardware[o] = t.hardware.get(o, 0) + 1
        elif o != r:
            t.bad.append((b.hex(), o, r))
        elif r is None:
            t.invalid += 1
        else:
            t.same += 1
            if keys is not None:
                t.ops.add(keys[k])
    return t
