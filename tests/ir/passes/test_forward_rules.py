"""The forward pass split into named rules (wavelift/ir/passes/forward.py RULES) gives exactly the
optimised IR of the one walk it was split from (tests/ir/passes/forward_onewalk.py): the same ops, types,
operands, attributes (constants by NumPy type and bits), result values and terminator, for every
block of the fixture programs, wave32 and wave64, and MODE values that keep, flush or half-flush
denormals, with and without IEEE mode and with a rounding mode set."""

from __future__ import annotations

import pathlib
import sys

import pytest

from wavelift.ir.passes import forward as F

HERE = pathlib.Path(__file__).resolve().parent
for p in (HERE, HERE.parents[1] / "cuda"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import forward_onewalk  # noqa: E402  (the one walk, the oracle)

# keep all denormals, flush all, flush f32 only, flush f16/f64 only; IEEE clear; round up
MODES = (0x3F0, 0x000, 0x0C0, 0x030, 0x1F0, 0x3F1)


def _text(ops, term) -> list[str]:
    """Everything the IR of a block holds, as comparable text (Value ids included: the passes'
    new values are numbered in the order the walk makes them)."""

    def v(x):
        return f"%{x.id}:{x.type}:{int(x.uniform)}" if hasattr(x, "id") else repr(x)

    def attr(k, x):
        return (str(x.dtype), x.tobytes().hex()) if k == "value_np" else repr(x)

    out = []
    for op in ops:
        attrs = {k: attr(k, x) for k, x in sorted(op.attrs.items())}
        res = v(op.out) if op.out is not None else "_"
        out.append(f"{res} = {op.name}.{op.type} {[v(a) for a in op.args]} {attrs} @{op.instr}")
    out.append("term " + repr([v(x) for x in term]))
    return out


def _fixture_programs(monkeypatch) -> list:
    """(name, program) of each distinct program the fixture dispatches run (clang kernels, ACO
    shaders, RADV captures: tests/cuda/fixture_dispatches.py), translated as each dispatch is
    caught (without the guest memory copies the dispatch list keeps)."""
    import fixture_dispatches as FD

    from wavelift.errors import Refusal
    from wavelift.run.execute import program_for
    from wavelift.run.result import DispatchResult

    cache: dict = {}
    seen: set = set()
    out: list = []

    def catch(self, memory, config, index):
        program = program_for(memory, config, cache)[0]
        if id(program) not in seen:
            seen.add(id(program))
            out.append((f"program {len(out)} ({config.target}, wave{config.wave_size})", program))
        return DispatchResult(index, config, Refusal("backend.unavailable", "caught for a test"))

    monkeypatch.setattr(FD._Catch, "__call__", catch)
    FD.clang_dispatches()
    FD.aco_dispatches()
    FD.capture_dispatches()
    return out


def _compare(programs) -> int:
    n = 0
    for name, program in programs:
        for wave_size in (32, 64):
            for mode in MODES:
                for blk in program.blocks:
                    want = _text(*forward_onewalk.forward(blk, mode, wave_size))
                    got = _text(*F.forward(blk, mode, wave_size))
                    assert got == want, f"{name} block {blk.index} wave{wave_size} MODE {mode:#x}"
                    n += 1
    return n


def test_rules_are_named_and_in_the_documented_order():
    names = [r.__name__ for r in F.RULES]
    doc = F.__doc__ or ""
    assert names[-1] == "share" and len(set(names)) == len(names)
    at = [doc.index(f"``{n.removesuffix('_rule')}``") for n in names]
    assert at == sorted(at), "RULES and the module's docstring list the rules in one order"


def test_split_rules_give_the_one_walks_ir_on_every_ops_sample():
    """The probe's one-op programs (backends/base.py sample_program), every op of the table."""
    from wavelift.backends.base import sample_program
    from wavelift.ir.ops import OPS

    assert _compare((name, sample_program(OPS[name])[0]) for name in sorted(OPS)) == 2 * len(MODES) * len(OPS)


@pytest.mark.slow
def test_split_rules_give_the_one_walks_ir_on_every_fixture_program(monkeypatch):
    programs = _fixture_programs(monkeypatch)
    assert len(programs) >= 200
    assert _compare(programs) > 1000
