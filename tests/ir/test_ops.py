"""The op table (wavelift/ir/ops.py) against the Builder, real programs and every registered
backend: a backend (or a tier of one) that neither lowers an op nor declares it unsupported
fails here, and so does a declaration that is not what its lowering does."""

from __future__ import annotations

import copy
import pathlib
import sys

import pytest

from wavelift.backends import base
from wavelift.errors import Refused
from wavelift.ir import builder, ops, program
from wavelift.ir.ops import EFFECT, GIVEN, LANE, OPERANDS, OPS, UNIFORM, VALUE

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT / "tests" / "cuda") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests" / "cuda"))

from fixture_dispatches import clang_dispatches  # noqa: E402  (the fixture kernels' dispatches)


def _parts():
    """(id, part) of every registered backend and each of its tiers."""
    out = []
    for b in base.registered():
        out.append((b.name, b))
        out.extend((t.name, t) for t in b.tiers)
    return out


PARTS = _parts()


# ---- the table -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OPS))
def test_row_is_consistent(name):
    r = OPS[name]
    assert r.name == name and r.doc.strip()
    assert r.kind in (VALUE, EFFECT)
    assert (r.uniform is None) == (r.kind == EFFECT)
    assert r.uniform in (None, OPERANDS, UNIFORM, LANE, GIVEN)
    lo, hi = r.arity
    assert 0 <= lo <= hi
    t, args, attrs = r.example
    assert t in ops.TYPES and all(a in ops.TYPES for a in args)
    assert lo <= len(args) <= hi
    assert set(r.attrs) <= set(attrs) <= set(r.attrs) | set(r.optional)
    assert r.result in ("op", "to") or r.result in ops.TYPES
    assert not (r.pure and r.kind == EFFECT)
    if r.kind == EFFECT:
        assert name in ops.KEEP_OPS


def test_sets_derive_from_the_table():
    assert ops.VALUE_OPS | ops.EFFECT_OPS == set(OPS)
    assert not ops.VALUE_OPS & ops.EFFECT_OPS
    assert ops.PURE_OPS <= ops.VALUE_OPS
    assert ops.VALUE_OPS is ops.VALUE_OPS and ops.EFFECT_OPS is ops.EFFECT_OPS
    assert ops.TYPES is ops.TYPES and ops.CONDS is ops.CONDS and ops.BITS is ops.BITS
    assert set(ops.BITS) == set(ops.TYPES)
    assert set(ops.FLOAT) | set(ops.INTS) | {"b1"} == set(ops.TYPES)
    assert {"jump", "branch", "end", "barrier", "setpc", "mode"} == set(ops.TERMINATORS)


# ---- the Builder emits only table ops, as their rows say -------------------------------------


def _builder():
    b = builder.Builder([0], 32)
    b.instr = 0
    return b


def test_builder_refuses_ops_outside_the_table():
    b = _builder()
    x = b.sget(0)
    with pytest.raises(KeyError):
        b.emit("frobnicate", "u32", x)
    with pytest.raises(KeyError):
        b.emit("sset", "u32", x)  # an effect is not a value
    with pytest.raises(AssertionError):
        b.effect("add", "u32", x, x)  # and a value not an effect


def test_builder_follows_the_uniformity_rule():
    b = _builder()
    s, v = b.sget(0), b.vget(0)
    assert b.bin("add", "u32", s, s).uniform and not b.bin("add", "u32", s, v).uniform
    assert b.ballot(b.cmp("ne", "u32", v, s)).uniform  # UNIFORM
    assert not b.emit("maskbit", "b1", b.pack64(s, s)).uniform  # LANE
    with pytest.raises(AssertionError):
        b.emit("readlane", "u32", v, s, uniform=False)  # contradicts UNIFORM
    with pytest.raises(AssertionError):
        b.emit("load", "u32", b.pack64(s, s), b.exec(), space="global", nbytes=4, words=1)  # GIVEN
    assert b.emit(
        "load", "u32", b.pack64(s, s), b.exec(), uniform=True, space="global", nbytes=4, words=1
    ).uniform


@pytest.mark.parametrize("name", sorted(OPS))
def test_sample_follows_its_row(name):
    """base.sample_program (what backends are probed with) holds the op as its row says."""
    _check_op(base.sample_program(OPS[name])[1])


def _check_op(op):
    r = OPS.get(op.name)
    assert r is not None, f"{op.name}: not in the op table"
    assert (op.out is None) == (r.kind == EFFECT), op
    assert r.arity[0] <= len(op.args) <= r.arity[1], op
    assert set(r.attrs) <= set(op.attrs) <= set(r.attrs) | set(r.optional), op
    if op.out is not None:
        assert op.out.type == ops.result_type(op.name, op.type, op.attrs), op
        if r.uniform == OPERANDS:
            assert op.out.uniform == all(a.uniform for a in op.args), op
        elif r.uniform in (UNIFORM, LANE):
            assert op.out.uniform == (r.uniform == UNIFORM), op


def test_translated_programs_hold_only_table_ops():
    """Real programs (the ALU fixture kernels): every op is a row, used as its row says."""
    from wavelift.run.execute import program_for

    seen = set()
    n = 0
    for _, memory, config in clang_dispatches()[:40]:
        program = program_for(copy.deepcopy(memory), config, {})[0]
        n += 1
        for blk in program.blocks:
            for op in blk.ops:
                _check_op(op)
                seen.add(op.name)
            assert blk.term[0] in ops.TERMINATORS
    assert n and len(seen) > 20


# ---- every registered backend against the table ----------------------------------------------


def test_backends_are_registered():
    assert base.names()[:2] == ("numpy", "cuda") and base.DEFAULT == "numpy"
    for name in base.names():
        assert base.get(name).name == name


@pytest.mark.parametrize("pid,part", PARTS, ids=[p[0] for p in PARTS])
def test_every_op_is_lowered_or_declared_unsupported(pid, part):
    lowers, unsupported = part.lowers(), part.unsupported()
    missing = sorted(set(OPS) - lowers - set(unsupported))
    assert not missing, f"{pid} neither lowers nor declares unsupported: {missing}"
    assert lowers <= set(OPS)
    assert not lowers & set(unsupported), f"{pid}: declared unsupported yet lowered"
    assert all(isinstance(w, str) and w.strip() for w in unsupported.values())


@pytest.mark.parametrize("pid,part", PARTS, ids=[p[0] for p in PARTS])
def test_lowers_is_what_the_lowering_does(pid, part):
    """Every op it claims lowers (a sample of it), every op it declares unsupported is refused
    by name: the declaration cannot drift from the dispatch."""
    for name in sorted(OPS):
        program, _ = base.sample_program(OPS[name])
        if name in part.lowers():
            part.lower(program)
        else:
            with pytest.raises(part.refused) as e:
                part.lower(program)
            assert str(e.value) == name


@pytest.mark.parametrize("pid,part", PARTS, ids=[p[0] for p in PARTS])
def test_cmp_lowers_every_cond(pid, part):
    if "cmp" not in part.lowers():
        pytest.skip(f"{pid} does not lower cmp")
    for cond in ops.CONDS:
        for t in ("u32", "i64", "f32", "f64"):
            program = base.sample_program(OPS["cmp"]._replace(example=(t, (t, t), {"cond": cond})))[0]
            part.lower(program)


def test_declared_unsupported_op_is_refused_by_name(monkeypatch):
    """A program that needs an op its backend declares unsupported is refused naming the op
    (backend.unavailable), before any module is built."""
    from wavelift.run.execute import execute_dispatch, program_for

    _, memory, config = clang_dispatches()[0]
    program = program_for(copy.deepcopy(memory), config, {})[0]
    needed = program.blocks[0].ops[0].name
    be = base.get("numpy")
    monkeypatch.setattr(type(be), "unsupported", lambda self: {needed: "a test says so"})
    with pytest.raises(Refused) as e:
        base.check_program(be, program)
    assert needed in str(e.value) and "a test says so" in str(e.value)
    before = copy.deepcopy(memory)
    r = execute_dispatch(memory, config, backend="numpy", cache={})
    assert r.refusal is not None and r.refusal.code == "backend.unavailable"
    assert f"IR op {needed} " in r.refusal.message
    for a, b in zip(before, memory):
        assert bytes(a.data) == bytes(b.data)


def test_unknown_backend_is_refused():
    from wavelift.run.execute import execute_dispatch

    _, memory, config = clang_dispatches()[0]
    r = execute_dispatch(memory, config, backend="opencl", cache={})
    assert r.refusal is not None and r.refusal.code == "backend.unavailable"
    assert base.problem("numpy") is None


def _terminator_program(kind: str):
    """Two blocks: block 0 ends with terminator ``kind``, block 1 ends the wave."""
    b = builder.Builder([0], 32)
    b.instr = 0
    x = b.sget(2)
    term = {
        "jump": ("jump", 1),
        "end": ("end",),
        "barrier": ("barrier", 1),
        "mode": ("mode", 1),
        "branch": ("branch", b.cmp("ne", "u32", x, b.const("u32", 0)), 1, 1),
        "setpc": ("setpc", b.pack64(x, b.sget(3))),
    }[kind]
    blocks = [program.Block(0, 0, [], b.ops, term), program.Block(1, 4, [], [], ("end",))]
    return program.Program(blocks, [], {0: 0, 4: 1}, 2)


@pytest.mark.parametrize("pid,part", PARTS, ids=[p[0] for p in PARTS])
def test_every_terminator_lowers(pid, part):
    """A backend lowers every terminator; a tier may leave one to the backend, naming it."""
    tier = all(part is not b for b in base.registered())
    for kind in ops.TERMINATORS:
        try:
            part.lower(_terminator_program(kind))
        except part.refused as e:
            assert tier and str(e) == kind, f"{pid}: terminator {kind}: {e}"


def test_successors_follow_every_terminator():
    """Block.successors, the one successor rule of the analyses (liveness, preload, ldsrange,
    globalrange, codegen's): every kind of ops.TERMINATORS answers its targets as named, only
    s_setpc's (a run-time address) is unknown -- a new terminator kind must be given its rule."""
    cond = program.Value(0, "b1", True)  # (a branch condition / s_setpc address: not a target)
    made = {
        "jump": (("jump", 3), (3,)),
        "branch": (("branch", cond, 5, 2), (5, 2)),
        "end": (("end",), ()),
        "barrier": (("barrier", 4), (4,)),
        "setpc": (("setpc", cond), None),
        "mode": (("mode", 1), (1,)),
    }
    assert set(made) == set(ops.TERMINATORS)
    for kind, (term, want) in made.items():
        assert program.Block(0, 0, term=term).successors() == want, kind
    assert program.Block(0, 0, term=("nonesuch", 1)).successors() is None
