"""Every opcode of every ALU/scalar encoding, random fields, ours vs llvm-objdump-19 (live).

Exact text and size must match; bytes LLVM calls invalid must raise DecodeError.  One LLVM run
per target/wave size (all encodings batched) keeps the default run short; the `slow` variant
takes more samples per opcode and other seeds."""

import functools

import pytest

from wavelift.isa.llvm_oracle import have_llvm

from .sweep import ENCS, compare_edges, compare_many, edge_words

CONFIGS = [("gfx1030", False), ("gfx1030", True), ("gfx1010", False), ("gfx1010", True)]


@functools.cache
def _results(target, wave64, n_per_op, seed):
    return compare_many(ENCS, target, wave64, n_per_op=n_per_op, seed=seed)


def _check(enc, target, wave64, n_per_op, seed):
    if not have_llvm():
        pytest.skip("llvm-mc-19 not installed: cannot compare with LLVM")
    ops, bad, total = _results(target, wave64, n_per_op, seed)[enc]
    print(
        f"{target} {'w64' if wave64 else 'w32'} {enc}: {len(ops)} opcodes matched, "
        f"{total} words, {len(bad)} mismatches"
    )
    assert ops, "no opcode decoded"
    assert not bad, bad[:5]


@pytest.mark.parametrize("target,wave64", CONFIGS, ids=[f"{t}-w{64 if w else 32}" for t, w in CONFIGS])
@pytest.mark.parametrize("enc", ENCS)
def test_sweep(enc, target, wave64):
    _check(enc, target, wave64, 2, 1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
@pytest.mark.parametrize("target,wave64", CONFIGS, ids=[f"{t}-w{64 if w else 32}" for t, w in CONFIGS])
@pytest.mark.parametrize("enc", ENCS)
def test_sweep_slow(enc, target, wave64, seed):
    _check(enc, target, wave64, 12, seed)


@pytest.mark.parametrize("target,wave64", CONFIGS, ids=[f"{t}-w{64 if w else 32}" for t, w in CONFIGS])
def test_edge_words(target, wave64):
    """Every encoding's all-zero and all-ones words (and the 0x00000000 dword, v_illegal)."""
    if not have_llvm():
        pytest.skip("llvm-mc-19 not installed: cannot compare with LLVM")
    bad, n = compare_edges(target, wave64)
    assert n == len(edge_words()) >= 30
    assert not bad, bad
