"""Words LLVM 19 rejects that the hardware runs (decision 0023, "Words LLVM 19 rejects that
hardware runs"), decoded, named by ``isa.memory.hardware_only`` and carried out; references from
the RDNA3 ISA guide's pseudo-code (NumPy).

- DS ops without a return value whose VDST field is not zero: the guide gives such an opcode no
  destination (DS_STORE_B32: MEM[ADDR] = DATA0; DS_ADD_U32: MEM[ADDR] += DATA0) and the hardware
  ignores the field, so VDST's register keeps its value.  llvm-mc-19 cannot assemble such a word:
  it is built from the assembled no-return op by setting the DS layout's VDST field (second
  dword, bits [31:24]) by hand."""

from __future__ import annotations

import numpy as np
import pytest
from gfx11_rig import HAVE_MC, Rig11, assemble, words
from harness import ptr

from wavelift.isa import decode_one
from wavelift.isa.memory import DS_VDST, hardware_only

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
