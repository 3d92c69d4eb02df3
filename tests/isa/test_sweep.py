"""Every opcode of every ALU/scalar encoding, random fields, ours vs llvm-objdump-19 (live)."""
import pytest

from wavelift.isa.llvm_oracle import have_llvm

from .sweep import ENCS, compare

# Encodings whose random-field sweep still differs from LLVM (see docs/isa-coverage.md).
KNOWN_DIFF = {"SOP2", "SOP1", "SOPC", "SOPK", "SOPP", "SMEM", "VOP1", "VOPC", "VOP3", "VOP3P"}


@pytest.mark.parametrize("wave64", [False, True], ids=["w32", "w64"])
@pytest.mark.parametrize("target", ["gfx1030", "gfx1010"])
@pytest.mark.parametrize("enc", ENCS)
def test_sweep(enc, target, wave64):
    if not have_llvm():
        pytest.skip("llvm-mc-19 not installed: cannot compare with LLVM")
    ops, bad = compare(enc, target, wave64, n_per_op=2, seed=hash((enc, target, wave64)) & 0xFFFF)
    print(f"{target} {'w64' if wave64 else 'w32'} {enc}: {len(ops)} opcodes matched, {len(bad)} mismatches")
    if bad and enc in KNOWN_DIFF:
        pytest.xfail(f"{len(bad)} known mismatches, e.g. {bad[0]}")
    assert not bad, bad[:5]
