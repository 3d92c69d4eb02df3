"""CUDA kernels lower the IR after the same passes as the NumPy blocks and the native tier
(ir/passes/pipeline.py; backends/cuda/codegen.py ``optimized``), without a GPU: what the kernel's
Lowering is given, for the dispatch's initial MODE or -- for a program that writes MODE -- for
any MODE, on every fixture program; WAVELIFT_CUDA_PASSES=off (A/B runs) gives it the IR as the
frontends built it.  That results do not move is checked on a GPU by bench/gpu_check.py (every
fixture dispatch against NumPy lane mode, bit for bit)."""

from __future__ import annotations

import pathlib
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from test_cuda_backend import _programs, _vadd_dispatch, translate_dispatch  # noqa: E402

from wavelift.backends.cuda import codegen as C  # noqa: E402
from wavelift.ir.builder import Builder  # noqa: E402
from wavelift.ir.passes.pipeline import optimize_program  # noqa: E402
from wavelift.ir.program import MODE_REG, Block, Program  # noqa: E402


def _shape(program):
    return [[(op.name, op.type, op.attrs.get("reg")) for op in b.ops] + [b.term[0]] for b in program.blocks]


def _lowered(calls, *args):
    """The program generate() hands the kernel's Lowering."""
    seen = calls(C, "Lowering")
    C.generate(*args)
    ((program, *_),) = seen
    return program


@pytest.mark.parametrize("wave", [32, 64])
def test_the_kernel_lowers_the_pipelines_ir_for_the_initial_mode(monkeypatch, calls, wave):
    mem, cfg, _, _ = _vadd_dispatch(wave)
    prog, base = translate_dispatch(mem, cfg)
    baked = C.baked_params(cfg)
    mode = dict(baked)[C.P_MODE]
    got = _lowered(calls, prog, wave, "lane", 0, base, baked)
    assert _shape(got) == _shape(optimize_program(prog, mode, wave))
    assert _shape(got) != _shape(prog)  # (the passes changed something: the test can fail)
    monkeypatch.setenv("WAVELIFT_CUDA_PASSES", "off")
    assert _lowered(calls, prog, wave, "lane", 0, base, baked) is prog


def _mode_program():
    """Block 0 writes MODE (s_setreg: a "mode" terminator); block 1 reads MODE and flushes."""
    b = Builder([0], 32)
    b.sset(MODE_REG, b.sget(4))
    b0 = Block(0, 0, ops=b.ops, term=("mode", 1))
    b = Builder([0], 32)
    m = b.cmp("eq", "u32", b.sget(MODE_REG), b.const("u32", 0))
    f = b.cmp("eq", "f32", b.emit("fin", "f32", b.bitcast("f32", b.vget(0))), b.const("f32", 0.0))
    b1 = Block(1, 4, ops=b.ops, term=("branch", b.bin("and", "b1", m, f), -1, -1))
    return Program([b0, b1], [], {0: 0, 4: 1}, max_vgpr=2)


def test_a_program_that_writes_mode_is_optimised_for_any_mode():
    prog = _mode_program()
    out = C.optimized(prog, 32, 0x3F0)  # an initial MODE that keeps denormals
    names = [op.name for op in out.blocks[1].ops]
    assert "sget" in names and "fin" in names  # read and flushed at run time, not folded
    assert _shape(out) == _shape(optimize_program(prog, None, 32))
    # without the MODE write the same block is specialised (MODE a constant, fin the identity)
    one = Program([Block(0, 0, ops=prog.blocks[1].ops, term=prog.blocks[1].term)], [], {0: 0}, max_vgpr=2)
    names = [op.name for op in C.optimized(one, 32, 0x3F0).blocks[0].ops]
    assert "sget" not in names and "fin" not in names


# every program's lowering (after the passes too) runs in test_cuda_backend.test_codegen: its
# sample by default, test_codegen_every_program under -m slow; this sweep adds the id and
# refuse_if checks (~2-4 min on 2 cores)
@pytest.mark.slow
def test_every_fixture_program_lowers_after_the_passes():
    """Every fixture program (both modes where it uses scratch) lowers with its dispatch's baked
    words, the IR after the passes: refuse_if ops numbered as the host names them (optimized
    asserts it) and every value id defined once in the program."""
    n = 0
    for _name, prog, cfg, base, modes in _programs():
        if prog is None:
            continue
        baked = C.baked_params(cfg)
        out = C.optimized(prog, cfg.wave_size, dict(baked)[C.P_MODE])
        ids = [op.out.id for b in out.blocks for op in b.ops if op.out is not None]
        assert len(ids) == len(set(ids))
        for m in modes:
            C.generate(prog, cfg.wave_size, m, cfg.scratch_wave_bytes, base, baked)
            n += 1
    assert n >= 40
