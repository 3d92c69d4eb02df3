"""Blocks made of pieces shared by programs (backends/numpy/codegen.PieceCache, decision 0040):
one-wave programs through the tinygrad hook, shaped like tinygrad's instruction tests (a common
prologue, a few instructions under test, a common epilogue storing every register), give the
same output bytes, return codes and refusals (instruction included) with pieces as without, and
their common parts are compiled once and run at other offsets."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.compat import harness
from wavelift.backends.numpy import codegen
from wavelift.compat import tinygrad as tg

PROLOGUE = (
    "s_load_b64 s[20:21], s[0:1], 0x0\n"
    "v_mov_b32 v255, v0\n"
    + "".join(f"v_mov_b32 v{i}, {i * 0x01010101 + 7}\n" for i in range(1, 12))
    + "".join(f"s_mov_b32 s{i}, {i * 0x1000193 & 0x7FFFFFFF}\n" for i in range(2, 14))
    + "s_mov_b32 vcc_lo, 0x5555aaaa\n"
)
EPILOGUE = (
    "s_waitcnt vmcnt(0) lgkmcnt(0)\n"
    "v_lshlrev_b32 v240, 2, v255\n"
    + "".join(f"global_store_b32 v240, v{i}, s[20:21] offset:{128 * i}\n" for i in range(12))
    + "v_mov_b32 v241, 0\n"
    "v_cmp_eq_u32 vcc_lo, v255, v241\n"
    "s_and_saveexec_b32 s94, vcc_lo\n"
    "v_mov_b32 v240, 0x800\n"
    + "".join(
        f"v_mov_b32 v243, s{i}\nglobal_store_b32 v240, v243, s[20:21] offset:{4 * i}\n" for i in range(2, 14)
    )
    + "s_mov_b32 exec_lo, s94\n"
    "s_endpgm\n"
)
MIDDLES = [
    "v_add_nc_u32 v0, v1, v255\n",
    "v_mul_f32 v0, v1, v2\nv_fma_f32 v3, v0, v4, v5\nv_sqrt_f32 v6, v3\n",
    "s_add_u32 s2, s3, s4\ns_addc_u32 s5, s6, s7\nv_cndmask_b32 v7, v8, v9, vcc_lo\n",
    "v_mov_b32_dpp v0, v1 quad_perm:[1,0,3,2] row_mask:0xf bank_mask:0xf\nv_xor_b32 v2, v0, v3\n",
    "v_cvt_f16_f32 v4, v5\nv_pk_add_f16 v6, v4, v4\nv_lshl_or_b32 v7, v6, 3, v8\n"
    "v_bfe_u32 v8, v7, 4, 9\nv_mad_u64_u32 v[9:10], null, v8, v11, v[2:3]\n",
    "v_cmp_gt_u32 vcc_lo, 16, v255\ns_and_saveexec_b32 s12, vcc_lo\nv_add_nc_u32 v1, 5, v1\n"
    "s_mov_b32 exec_lo, s12\n",
    # a store past the output buffer from the middle: refused, naming the instruction
    "v_mov_b32 v9, 0x100000\nglobal_store_b32 v9, v1, s[20:21] offset:0\n",
]


def _run(code: bytes):
    buf = harness.HostBlock(8192)
    out = harness.HostBlock(0x1000)
    args = harness.HostBlock(4096)
    buf.view[: len(code)] = np.frombuffer(code, np.uint8)
    args.view[:8] = np.frombuffer(np.uint64(out.address).tobytes(), np.uint8)
    rc = tg.run_asm(
        buf.address,
        len(code),
        1,
        1,
        1,
        32,
        1,
        1,
        args.address,
        0x19C,
        0,
        ranges=[(buf.address, 8192), (out.address, 0x1000), (args.address, 4096)],
    )
    ref = tg.last_result().refusal
    # (the refusal names the instruction and its pc; the host address it names differs per run)
    why = None if ref is None else (ref.code, re.sub(r"address 0x[0-9a-f]+", "", str(ref)))
    return rc, bytes(out.view), why


def _programs():
    from tests.execute.asm import HAVE_MC, assemble

    if not HAVE_MC:
        pytest.skip("llvm-mc-19 not installed")
    return [assemble(PROLOGUE + m + EPILOGUE, mcpu="gfx1100") for m in MIDDLES]


def test_pieces_give_the_same_bytes_and_refusals(monkeypatch):
    from wavelift.run import execute

    progs = _programs()
    monkeypatch.setattr(execute, "_CACHE", {})  # (modules built afresh in each pass)
    monkeypatch.setattr(codegen.PIECES, "enabled", False)
    want = [_run(c) for c in progs]
    monkeypatch.setattr(execute, "_CACHE", {})
    monkeypatch.setattr(codegen.PIECES, "enabled", True)
    monkeypatch.setattr(codegen.PIECES, "fns", {})
    hits = codegen.PIECES.hits
    got = [_run(c) for c in progs]
    assert got == want
    assert [rc for rc, _, _ in want[:-1]] == [tg.OK] * (len(progs) - 1)
    assert want[-1][0] == tg.REFUSED and want[-1][2] is not None
    # the common prologue and epilogue pieces were compiled once and reused at other offsets
    assert codegen.PIECES.hits - hits >= 2 * (len(progs) - 1)


def test_cuts_leave_no_value_crossing():
    """Every cut PieceCache makes is where no value made before it is used after it."""
    from wavelift.frontend.program import translate

    for code in _programs():
        prog = translate(code, "gfx1100", 32, 0x10000)
        for blk in prog.blocks:
            cuts, at = codegen.PieceCache._cuts(prog, blk)
            assert at == [blk.ops[c].instr for c in cuts]
            made = {}
            for i, op in enumerate(blk.ops):
                if op.out is not None:
                    made[op.out.id] = i
            uses = [(i, x.id) for i, op in enumerate(blk.ops) for x in op.args if hasattr(x, "id")]
            uses += [(len(blk.ops), x.id) for x in blk.term[1:] if hasattr(x, "id")]
            for c in cuts:
                assert 0 < c < len(blk.ops) and blk.ops[c].instr != blk.ops[c - 1].instr
                assert not [v for i, v in uses if i >= c and made.get(v, c) < c]


def test_recurring_runs_give_the_same_bytes(monkeypatch):
    """Runs of pieces (from a cut whose CRC-32 is 0 modulo PIECE_CUT * PIECE_GROUP to the next)
    are compiled as one piece from their second sighting (decision 0045 amendment): the same
    bytes, return codes and refusals as without pieces, with runs compiled and then hit."""
    from wavelift.run import execute

    progs = _programs()
    monkeypatch.setattr(execute, "_CACHE", {})
    monkeypatch.setattr(codegen.PIECES, "enabled", False)
    want = [_run(c) for c in progs]
    monkeypatch.setattr(codegen, "PIECE_CUT", 2)
    monkeypatch.setattr(codegen, "PIECE_GROUP", 2)
    monkeypatch.setattr(codegen.PIECES, "enabled", True)
    monkeypatch.setattr(codegen.PIECES, "fns", {})
    monkeypatch.setattr(codegen.PIECES, "seen", {})
    runs = []
    orig = codegen.PieceCache._piece

    def piece(self, mb, sub, mode, live, key=codegen._NOKEY, info=None):
        if key is not codegen._NOKEY:  # (a run seen before, compiled as one piece)
            runs.append(len(sub.instrs))
        return orig(self, mb, sub, mode, live, key, info)

    monkeypatch.setattr(codegen.PieceCache, "_piece", piece)
    for _ in range(2):  # (the second pass: every run seen before)
        monkeypatch.setattr(execute, "_CACHE", {})
        assert [_run(c) for c in progs] == want
    assert runs and max(runs) > 2


def test_piece_points_are_lane_count_points():
    """lane_count_points of a piece from its block's Block.exec_writes (``within``) is
    lane_count_points of the piece alone, for every run of consecutive pieces of every block."""
    from wavelift.frontend.program import lane_count_points, translate

    for code in _programs():
        prog = translate(code, "gfx1100", 32, 0x10000)
        for blk in prog.blocks:
            cuts, _ = codegen.PieceCache._cuts(prog, blk)
            bounds = [0, *cuts, len(blk.ops)]
            starts = [blk.instrs[0]] + [blk.ops[c].instr for c in cuts] + [blk.instrs[-1] + 1]
            info = blk.exec_writes()
            n = len(bounds) - 1
            for k0 in range(n):
                for k1 in range(k0 + 1, n + 1):
                    sub = codegen.PieceCache._sub(blk, bounds, starts, k0, k1, k1 == n)
                    assert lane_count_points(prog, sub, (*info, bounds[k0])) == lane_count_points(prog, sub)


def _ops_text(ops):
    return [(repr(op), op.instr) for op in ops]


def test_lazy_translation_is_the_eager_one(monkeypatch):
    """A translation that keeps instr_cache hits as entries (instr_cache.LAZY, the hook's one-wave
    dispatches: decision 0045 amendment) makes, when its ops are read, the very ops the eager
    translation makes (names, values and their ids, attributes, instructions, in order), and
    what the pieces read without making them -- Block.exec_writes, the cuts (and MODE test),
    n_ops -- equals the eager block's; every view (a piece or a run of pieces) makes its slice,
    sharing the op objects of the whole block."""
    from wavelift.frontend import instr_cache
    from wavelift.frontend.program import translate

    progs = _programs()
    lazy_blocks = 0
    for code in progs:
        translate(code, "gfx1100", 32, 0x10000)  # (entries for every cacheable instruction)
    for base in (0x10000, 0x7F0000):
        for code in progs:
            monkeypatch.setattr(instr_cache, "LAZY", [False])
            want = translate(code, "gfx1100", 32, base)
            monkeypatch.setattr(instr_cache, "LAZY", [True])
            got = translate(code, "gfx1100", 32, base)
            assert got.instr_keys == want.instr_keys and got.max_vgpr == want.max_vgpr
            for gb, wb in zip(got.blocks, want.blocks, strict=True):
                lazy = gb.__dict__.get("_lazy") is not None
                lazy_blocks += lazy
                assert gb.n_ops() == len(wb.ops)
                assert gb.exec_writes() == wb.exec_writes()
                found = codegen.PieceCache._cuts(got, gb)
                assert found == codegen.PieceCache._cuts(want, wb)
                if found is not None and found[0]:
                    bounds = [0, *found[0], len(wb.ops)]
                    # views first (ops made for them alone), then the whole block
                    views = (
                        [gb.__dict__["_lazy"].view(a, b) for a, b in zip(bounds, bounds[1:])] if lazy else []
                    )
                    parts = [v.make() for v in views]
                    for (a, b), part in zip(zip(bounds, bounds[1:]), parts):
                        assert _ops_text(part) == _ops_text(wb.ops[a:b])
                    assert gb.__dict__.get("_lazy") is None or lazy
                    whole = gb.ops
                    for (a, b), part in zip(zip(bounds, bounds[1:]), parts):
                        assert all(x is y for x, y in zip(part, whole[a:b], strict=True))
                assert _ops_text(gb.ops) == _ops_text(wb.ops) and gb.term == wb.term
                assert gb.exec_writes() == wb.exec_writes() and gb.n_ops() == len(wb.ops)
    assert lazy_blocks >= len(progs)
