"""The IR's passes (wavelift/ir/passes), one rule at a time, on blocks made with the Builder:
what each pass rewrites, what it must leave, and that folding gives ir/interp.py's bits.  (End to
end, tests/ir/passes/test_codegen_opt.py runs programs whose constants the passes see against the
same programs reading them from memory, and every fixture kernel runs the optimised blocks.)"""

from __future__ import annotations

import numpy as np
import pytest

from wavelift.frontend.common import ballot, read_lanemask, write_lanemask
from wavelift.ir import interp
from wavelift.ir.builder import Builder
from wavelift.ir.passes.dce import dce
from wavelift.ir.passes.forward import flushes, forward
from wavelift.ir.passes.liveness import liveness
from wavelift.ir.passes.pipeline import PASS_OPS, optimize
from wavelift.ir.program import EXEC_LO, MODE_REG, VCC_LO, Block, Program

KEEP_DENORMS, FLUSH_ALL = 0x3F0, 0x000


def _block(build, term=None, index=0):
    b = Builder([0], 32)
    out = build(b)
    if term is None:
        term = ("end",)
    elif callable(term):
        term = term(out)
    return Block(index, 0, ops=b.ops, term=term), out


def _names(blk):
    return [op.name for op in blk.ops]


def _const_of(blk, v):
    """The NumPy value of constant Value ``v`` in optimised ``blk``."""
    (op,) = [op for op in blk.ops if op.name == "const" and op.out.id == v.id]
    return op.attrs["value_np"]


def _stored(blk):
    """The Value the block's one sset writes."""
    (op,) = [op for op in blk.ops if op.name == "sset"]
    return op.args[0]


# ---- fold ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,t,a,b",
    [
        ("add", "u32", 0xFFFFFFFF, 2),
        ("mul", "i32", -7, 123456789),
        ("sub", "u64", 1, 2),
        ("fadd", "f32", 0.1, 0.2),
        ("fdiv", "f32", 1.0, 3.0),
        ("fmin", "f32", 0.0, -0.0),
    ],
)
def test_fold_gives_the_interpreters_bits(name, t, a, b):
    def build(bd):
        x = bd.bin(name, t, bd.const(t, a), bd.const(t, b))
        bd.sset(0, bd.lo32(x) if t == "u64" else x if t == "u32" else bd.bitcast("u32", x))

    blk = optimize(_block(build)[0], KEEP_DENORMS, 32)
    assert _names(blk) == ["const", "sset"]
    want = interp.evaluate(name, t, {}, [interp.const_value(t, a), interp.const_value(t, b)])
    bits = int(np.asarray(want).view(f"u{want.dtype.itemsize}"))
    assert int(_const_of(blk, _stored(blk))) == bits & 0xFFFFFFFF


def test_an_op_that_does_not_evaluate_is_not_folded():
    # readlane needs the wave: its operands are constants, it stays
    blk, _ = _block(lambda b: b.sset(0, b.emit("readlane", "u32", b.const("u32", 5), b.const("u32", 1))))
    assert "readlane" in _names(optimize(blk, KEEP_DENORMS, 32))


@pytest.mark.parametrize(
    "name,k,kept",
    [("add", 0, True), ("or", 0, True), ("xor", 0, True), ("shl", 0, True), ("and", 0xFFFFFFFF, True)]
    + [("mul", 1, True), ("sub", 0, True), ("add", 1, False), ("and", 0xFFFF, False)],
)
def test_integer_identities(name, k, kept):
    def build(b):
        x = b.sget(4)
        b.sset(0, b.bin(name, "u32", x, b.const("u32", k)))
        return x

    blk, x = _block(build)
    o = optimize(blk, KEEP_DENORMS, 32)
    assert (_stored(o) is x) == kept
    assert (name in _names(o)) != kept


def test_b1_and_or_select_with_a_constant_pick_an_operand():
    def build(b):
        c = b.cmp("lt", "u32", b.sget(4), b.sget(5))
        t, f = b.const("b1", 1), b.const("b1", 0)
        x, y = b.sget(6), b.sget(7)
        b.sset(0, b.select(b.bin("and", "b1", c, t), x, y))  # c
        b.sset(1, b.select(b.bin("or", "b1", f, c), x, y))  # c
        b.sset(2, b.select(b.bin("and", "b1", c, f), x, y))  # False: y
        b.sset(3, b.select(c, x, x))  # x
        return c, x, y

    blk, (c, x, y) = _block(build)
    o = optimize(blk, KEEP_DENORMS, 32)
    assert "and" not in _names(o) and "or" not in _names(o)
    s0, s1, s2, s3 = [op.args[0] for op in o.ops if op.name == "sset"]
    assert s0 is s1 and s2 is y and s3 is x
    (sel,) = [op for op in o.ops if op.name == "select"]
    assert sel.args[0] is c and sel.out is s0


# ---- cse and forwarding ----------------------------------------------------------------------


def test_equal_pure_ops_and_register_reads_are_shared():
    def build(b):
        x, y = b.vget(1), b.vget(1)
        s1, s2 = b.bin("add", "u32", x, b.sget(3)), b.bin("add", "u32", y, b.sget(3))
        b.vset(2, s1)
        b.vset(3, s2)

    blk = optimize(_block(build)[0], KEEP_DENORMS, 32)
    assert _names(blk).count("vget") == 1 and _names(blk).count("add") == 1
    assert _names(blk).count("sget") == 1 and _names(blk).count("exec") == 1
    v2, v3 = [op.args[0] for op in blk.ops if op.name == "vset"]
    assert v2 is v3


def test_a_register_read_after_a_write_is_a_new_read_or_the_value_written():
    def build(b):
        v = b.vget(1)
        b.vset(1, b.bin("add", "u32", v, b.const("u32", 3)))
        b.vset(2, b.vget(1))  # VGPR: per lane, masked -- read again
        s = b.bin("xor", "u32", b.sget(4), b.sget(5))
        b.sset(6, s)
        b.sset(7, b.sget(6))  # SGPR written in the block: the value itself

    blk = optimize(_block(build)[0], KEEP_DENORMS, 32)
    assert _names(blk).count("vget") == 2
    s6, s7 = [op.args[0] for op in blk.ops if op.name == "sset"]
    assert s6 is s7


# ---- MODE --------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [KEEP_DENORMS, FLUSH_ALL, 0x0C0, 0x030])
def test_mode_reads_and_denormal_flushes_follow_mode(mode):
    def build(b):
        b.sset(0, b.sget(MODE_REG))
        x = b.bitcast("f32", b.vget(0))
        b.vset(1, b.bitcast("u32", b.emit("fin", "f32", x)))
        d = b.emit("fin", "f32", b.const("f32", 1e-40))  # a denormal constant
        b.vset(2, b.bitcast("u32", d))

    blk = optimize(_block(build)[0], mode, 32)
    assert int(_const_of(blk, _stored(blk))) == mode
    flush = flushes(mode, "f32", False)
    assert _names(blk).count("fin") == int(flush)  # the per-lane one: kept only to flush
    (v2,) = [op.args[0] for op in blk.ops if op.name == "vset" and op.attrs["reg"] == 2]
    bits = int(_const_of(blk, v2))  # (the bitcast of the constant folded too)
    assert bits == (0 if flush else int(np.float32(1e-40).view(np.uint32)))


def test_mode_is_not_a_constant_after_the_block_writes_it():
    def build(b):
        b.sset(MODE_REG, b.sget(4))
        b.sset(0, b.sget(MODE_REG))

    blk = optimize(_block(build)[0], KEEP_DENORMS, 32)
    assert "const" not in _names(blk)


def test_any_mode_leaves_mode_reads_and_flushes_to_the_backend():
    """``mode`` None (a CUDA kernel of a program that writes MODE): MODE reads stay reads and
    fin/fout stay ops (the kernel flushes as MODE says at run time); the other rules still run."""

    def build(b):
        b.sset(0, b.sget(MODE_REG))
        x = b.bitcast("f32", b.vget(0))
        b.vset(1, b.bitcast("u32", b.emit("fin", "f32", x)))
        b.vset(2, b.bitcast("u32", b.emit("fout", "f32", b.const("f32", 1e-40))))
        b.sset(3, b.bin("add", "u32", b.const("u32", 2), b.const("u32", 3)))

    blk = optimize(_block(build)[0], None, 32)
    assert _names(blk).count("sget") == 1 and _names(blk).count("fin") == 1
    assert _names(blk).count("fout") == 1  # (of a constant: not folded either)
    (s3,) = [op.args[0] for op in blk.ops if op.name == "sset" and op.attrs["reg"] == 3]
    assert int(_const_of(blk, s3)) == 5  # folding still runs
    for mode in (KEEP_DENORMS, FLUSH_ALL):  # a MODE value: specialised as before
        assert "sget" not in _names(optimize(_block(build)[0], mode, 32))


def _loop_program():
    """b0 -> b1 (a loop on itself) -> b2: every block but b0 follows another."""

    def build(b):
        b.vset(1, b.bitcast("u32", b.emit("fadd", "f32", b.const("f32", 1.0), b.const("f32", 2.0))))
        b.sset(3, b.bin("add", "u32", b.sget(4), b.const("u32", 0)))
        b.sset(5, b.sget(6))
        return b.cmp("eq", "u32", b.sget(3), b.const("u32", 1))

    b0 = Block(0, 0, ops=_block(build)[0].ops, term=("jump", 1))
    b1 = _block(build, term=lambda c: ("branch", c, 1, 2), index=1)[0]
    b2 = _block(lambda b: b.sset(EXEC_LO, b.sget(3)), index=2)[0]
    return Program([b0, b1, b2], [], {0: 0}, max_vgpr=4)


def test_passes_run_forward_once_a_block_and_give_what_optimize_gives(monkeypatch):
    """pipeline.Passes: liveness, then every block after the passes (what the NumPy block, the
    native tier and optimize_program lower), with forward run once per block, not once for
    liveness and again per lowering; the blocks and live sets are liveness's and optimize's."""
    from wavelift.ir.dump import block_text
    from wavelift.ir.passes import liveness as liveness_module
    from wavelift.ir.passes import pipeline

    prog = _loop_program()
    for mode in (KEEP_DENORMS, FLUSH_ALL, None):
        live = liveness(prog, 32, mode)
        want = [block_text(optimize(b, mode, 32, live[b.index]), live[b.index]) for b in prog.blocks]
        calls = []
        for module in (pipeline, liveness_module):
            monkeypatch.setattr(
                module, "forward", lambda blk, *a: calls.append(blk.index) or forward(blk, *a)
            )
        p = pipeline.Passes(prog, mode, 32)
        assert p.live == live
        for _ in range(2):  # (the NumPy block, then the native tier's library)
            assert [block_text(p.block(b.index), p.live[b.index]) for b in prog.blocks] == want
        assert sorted(calls) == [0, 1, 2]
        monkeypatch.undo()


def test_passes_compute_a_changed_block_again(monkeypatch):
    """A block's kept results hold only while it is the same Block with the same ops and
    terminator: one replaced, or whose ops or terminator changed, gets its passes again (with
    pipeline.CHECK off, as outside the tests: on, the change raises -- the next test)."""
    from wavelift.ir.dump import block_text, op_text
    from wavelift.ir.passes import pipeline
    from wavelift.ir.passes.pipeline import Passes

    monkeypatch.setattr(pipeline, "CHECK", False)
    prog = _loop_program()
    p = Passes(prog, KEEP_DENORMS, 32)
    live = p.live
    p.forward(2)  # (kept: liveness walked b2)
    before = block_text(p.block(1), live[1])
    b1 = prog.blocks[1]
    bd = Builder([100], 32)  # (value ids apart from the program's)
    bd.sset(3, bd.sget(7))
    other = Block(1, 0, ops=bd.ops, term=("jump", 2))
    for change in ("ops", "term", "block"):
        if change == "ops":
            b1.ops.extend(other.ops)
        elif change == "term":
            b1.term = ("jump", 2)
        else:
            bd = Builder([200], 32)
            bd.sset(4, bd.sget(8))
            prog.blocks[1] = Block(1, 0, ops=bd.ops, term=("jump", 2))
        got = p.block(1)
        assert block_text(got, live[1]) == block_text(
            optimize(prog.blocks[1], KEEP_DENORMS, 32, live[1]), live[1]
        )
        assert block_text(got, live[1]) != before
        before = block_text(got, live[1])
    # forward's kept result (made by liveness) of a block whose ops changed is made again
    texts = lambda fw: [op_text(op) for op in fw[0]] + [repr(fw[1])]  # noqa: E731
    kept = texts(p.forward(2))
    prog.blocks[2].ops.pop()
    assert texts(p.forward(2)) == texts(forward(prog.blocks[2], KEEP_DENORMS, 32)) != kept


def test_a_block_changed_after_liveness_raises_with_check_on(monkeypatch):
    """pipeline.CHECK (on in the tests): ``live`` is never computed again, so a block replaced,
    or whose terminator or ops changed, after liveness ran raises where the passes next look --
    that block's ``block()``, any block's at ``drop()`` (a dispatch's end) -- as does a block
    added; an unchanged program does not, and ops kept lazily that liveness never read are not
    made by the check."""
    from wavelift.ir.passes import pipeline
    from wavelift.ir.passes.pipeline import Passes
    from wavelift.ir.program import LazyOps

    monkeypatch.setattr(pipeline, "CHECK", True)
    prog = _loop_program()
    b0 = prog.blocks[0].ops  # (b0 follows no block: liveness never reads its ops)
    prog.blocks[0].set_lazy(LazyOps([[None, lambda: b0, len(b0), 0, 0]], [0], 0, len(b0)))
    p = Passes(prog, KEEP_DENORMS, 32)
    p.block(1)
    p.drop()
    assert prog.blocks[0].__dict__["_lazy"] is not None
    for i in range(3):  # (made again after drop: unchanged, nothing raises)
        p.block(i)
    p.drop()
    extra = Builder([100], 32)
    extra.sset(3, extra.sget(7))

    def replace(prog):
        prog.blocks[1] = Block(1, 0, ops=extra.ops, term=("jump", 2))

    changes = {
        "ops": lambda prog: prog.blocks[1].ops.extend(extra.ops),
        "op": lambda prog: prog.blocks[1].ops.__setitem__(0, extra.ops[0]),
        "term": lambda prog: setattr(prog.blocks[1], "term", ("jump", 2)),
        "block": replace,
        "added": lambda prog: prog.blocks.append(Block(3, 0, ops=list(extra.ops))),
    }
    for name, change in changes.items():
        for where in ("block", "drop"):
            prog = _loop_program()
            p = Passes(prog, KEEP_DENORMS, 32)
            p.block(1)  # (its kept result: a change makes it again, and that looks)
            change(prog)
            with pytest.raises(AssertionError, match="after liveness"):
                p.block(2 if name == "added" else 1) if where == "block" else p.drop()


def test_optimize_program_is_optimize_per_block_with_program_wide_value_ids():
    """pipeline.optimize_program: each block as ``optimize`` makes it with the registers live
    after it, the values the passes made renumbered so that no two blocks share an id."""
    from wavelift.ir.passes.pipeline import optimize_program

    def build(b):
        b.vset(1, b.bitcast("u32", b.emit("fadd", "f32", b.const("f32", 1.0), b.const("f32", 2.0))))
        b.sset(3, b.bin("add", "u32", b.sget(4), b.const("u32", 0)))
        return b.cmp("eq", "u32", b.sget(3), b.const("u32", 1))

    b0 = _block(build, term=lambda c: ("branch", c, 1, 2))[0]
    b1 = Block(1, 0, ops=_block(build)[0].ops, term=("jump", 2))
    b2 = Block(2, 0, ops=_block(build)[0].ops, term=("end",))
    prog = Program([b0, b1, b2], [], {0: 0}, max_vgpr=4)
    for mode in (KEEP_DENORMS, None):
        out = optimize_program(prog, mode, 32)
        live = liveness(prog, 32, mode)
        ids = [op.out.id for blk in out.blocks for op in blk.ops if op.out is not None]
        assert len(ids) == len(set(ids))
        for blk, want in zip(out.blocks, (optimize(b, mode, 32, live[b.index]) for b in prog.blocks)):
            assert [(op.name, op.type, op.attrs.get("reg")) for op in blk.ops] == [
                (op.name, op.type, op.attrs.get("reg")) for op in want.ops
            ]
            assert blk.term[0] == want.term[0]
            defined = {op.out.id for op in blk.ops if op.out is not None}
            used = {x.id for op in blk.ops for x in op.args} | {
                x.id for x in blk.term[1:2] if hasattr(x, "id")
            }
            assert used <= defined  # every operand is defined in its own block


# ---- narrow ------------------------------------------------------------------------------------


def test_a_64_bit_carry_chain_is_computed_in_32_bits():
    def build(b):
        x, y = b.vget(0), b.vget(1)
        s = b.bin("add", "u64", b.cvt("u64", x), b.cvt("u64", y))
        b.vset(2, b.lo32(s))
        b.vset(3, b.hi32(s))

    blk = optimize(_block(build)[0], KEEP_DENORMS, 32)
    assert all(op.type != "u64" and op.out is None or op.out.type != "u64" for op in blk.ops)
    assert {"add", "cmp", "cvt"} <= set(_names(blk))


def test_the_words_of_a_pack64_and_a_constant_shift():
    def build(b):
        lo, hi = b.sget(4), b.sget(5)
        p = b.pack64(lo, hi)
        b.sset(0, b.lo32(p))
        b.sset(1, b.hi32(b.bin("shl", "u64", p, b.const("u64", 32))))
        return lo

    blk, lo = _block(build)
    o = optimize(blk, KEEP_DENORMS, 32)
    assert [op.args[0] for op in o.ops if op.name == "sset"] == [lo, lo]
    assert "pack64" not in _names(o) and "shl" not in _names(o)


def test_a_uniform_half_of_a_per_lane_value_is_broadcast_with_the_pass_op():
    assert PASS_OPS == {"lanes"}

    def build(b):
        p = b.pack64(b.sget(4), b.vget(0))  # per lane: the low word is uniform
        b.vset(1, b.lo32(p))

    blk = optimize(_block(build)[0], KEEP_DENORMS, 32)
    assert "lanes" in _names(blk) and "pack64" not in _names(blk)


# ---- dce and liveness --------------------------------------------------------------------------


def test_dce_drops_dead_values_and_covered_or_dead_writes():
    def build(b):
        b.bin("mul", "u32", b.sget(4), b.sget(5))  # unused
        b.sset(0, b.sget(6))  # covered by the next write, no read between
        b.sset(0, b.sget(7))
        b.sset(1, b.sget(8))  # not live after the block
        b.sset(EXEC_LO, b.sget(9))  # EXEC: always kept

    blk, _ = _block(build)
    ops, term = forward(blk, KEEP_DENORMS, 32)
    kept = dce(ops, term, (frozenset({0}), frozenset()))
    ss = [(op.attrs["reg"], op.args[0]) for op in kept if op.name == "sset"]
    assert [r for r, _ in ss] == [0, EXEC_LO]
    assert "mul" not in [op.name for op in kept]
    assert [op.attrs["reg"] for op in kept if op.name == "sget"] == [7, 9]
    # unknown liveness (None): every last write stays
    assert [op.attrs["reg"] for op in dce(ops, term, None) if op.name == "sset"] == [0, 1, EXEC_LO]


def test_liveness_is_what_later_blocks_read():
    b0, _ = _block(lambda b: (b.sset(1, b.sget(4)), b.sset(2, b.sget(5))), ("jump", 1), 0)
    b1, _ = _block(lambda b: b.sset(EXEC_LO, b.sget(1)), ("end",), 1)  # (EXEC: always kept)
    live = liveness(Program([b0, b1], [], {0: 0, 4: 1}, max_vgpr=0), 32, KEEP_DENORMS)
    assert live[0] == (frozenset({1}), frozenset())  # s2 is never read again
    assert live[1] == (frozenset(), frozenset())
    kept = optimize(b0, KEEP_DENORMS, 32, live[0])
    assert [op.attrs["reg"] for op in kept.ops if op.name == "sset"] == [1]


def _rewrite_then_read(masked: bool):
    """b0 writes v0 and v1; b1 reads v0, writes v1 under EXEC and reads it back, and sends a
    ballot of a test of it to EXEC: of x & EXEC (``masked``: the lanes off EXEC, which hold v1's
    value from before b1, are never observed) or of x itself (they are)."""

    def build(b):
        b.vset(1, b.bin("add", "u32", b.vget(0), b.sget(6)))
        c = b.cmp("eq", "u32", b.vget(1), b.sget(7))
        b.sset(EXEC_LO, b.lo32(b.ballot(b.bin("and", "b1", c, b.exec()) if masked else c)))

    b0, _ = _block(lambda b: (b.vset(1, b.sget(4)), b.vset(0, b.sget(5))), ("jump", 1), 0)
    b1, _ = _block(build, ("end",), 1)
    return Program([b0, b1], [], {0: 0, 4: 1}, max_vgpr=2)


def test_a_register_read_only_after_its_own_masked_write_is_not_live_before():
    # (cfamily deferred_blends: the read sees the written lanes only) -> b0's v1 write is dead
    prog = _rewrite_then_read(masked=True)
    live = liveness(prog, 32, KEEP_DENORMS)
    assert live[0] == (frozenset({6, 7}), frozenset({0}))
    kept = optimize(prog.blocks[0], KEEP_DENORMS, 32, live[0])
    assert [op.attrs["reg"] for op in kept.ops if op.name == "vset"] == [0]
    # a consumer that sees the lanes off the mask: v1 from before b1 is read through them
    prog = _rewrite_then_read(masked=False)
    assert liveness(prog, 32, KEEP_DENORMS)[0] == (frozenset({6, 7}), frozenset({0, 1}))


def _carry_then_read(masked: bool):
    """As _rewrite_then_read, b1's test reaching EXEC through a carry: v1 is rewritten under EXEC
    and read back into a 64-bit add whose carry goes to VCC (a ballot of carry & EXEC) and comes
    back per lane (v_add_co_ci's maskbit of VCC, which forward makes the pass op ``lanes`` of
    carry & EXEC), then a ballot of a test of the sum to EXEC: of x & EXEC (``masked``) or x."""

    def build(b):
        b.vset(1, b.bin("add", "u32", b.vget(0), b.sget(6)))
        r = b.bin("add", "u64", b.cvt("u64", b.vget(1)), b.cvt("u64", b.sget(7)))
        write_lanemask(b, VCC_LO, ballot(b, b.cmp("ne", "u32", b.hi32(r), b.const("u32", 0))))
        cin = b.cvt("u64", b.maskbit(read_lanemask(b, VCC_LO)))
        y = b.lo32(b.bin("add", "u64", b.cvt("u64", b.sget(8)), cin))
        c = b.cmp("eq", "u32", y, b.sget(9))
        b.sset(EXEC_LO, b.lo32(ballot(b, c) if masked else b.ballot(c)))

    b0, _ = _block(lambda b: (b.vset(1, b.sget(4)), b.vset(0, b.sget(5))), ("jump", 1), 0)
    b1, _ = _block(build, ("end",), 1)
    return Program([b0, b1], [], {0: 0, 4: 1}, max_vgpr=2)


def test_a_masked_rewrite_read_through_a_carry_is_not_live_before():
    # the carry's lanes(x) is x in each lane: lane-wise for deferred_blends, its taint goes on
    prog = _carry_then_read(masked=True)
    assert "lanes" in _names(optimize(prog.blocks[1], KEEP_DENORMS, 32))
    live = liveness(prog, 32, KEEP_DENORMS)
    assert live[0] == (frozenset({6, 7, 8, 9}), frozenset({0}))
    kept = optimize(prog.blocks[0], KEEP_DENORMS, 32, live[0])
    assert [op.attrs["reg"] for op in kept.ops if op.name == "vset"] == [0]
    # through lanes(x) to a ballot of the lanes off the mask: v1 from before b1 is read
    prog = _carry_then_read(masked=False)
    assert liveness(prog, 32, KEEP_DENORMS)[0] == (frozenset({6, 7, 8, 9}), frozenset({0, 1}))


def test_setpc_and_mode_blocks_keep_everything():
    b0, _ = _block(lambda b: b.sset(1, b.sget(4)), ("mode", 1), 0)
    b1, _ = _block(lambda b: None, ("end",), 1)
    live = liveness(Program([b0, b1], [], {0: 0, 4: 1}, max_vgpr=0), 32, KEEP_DENORMS)
    assert live[0] is None
