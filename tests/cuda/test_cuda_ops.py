"""Every IR op lowers on the CUDA backend (no GPU needed): one tiny program per op, built with the
IR Builder, generated in both wave sizes and both scratch modes; the set of ops covered here must
be every op the IR defines and every op the NumPy backend lowers, so a new IR op fails this test
until the CUDA backend (and this table) handle it.  NVRTC compiles one module holding them all.
"""

from __future__ import annotations

import types

import pytest

from wavelift.ir import ops, program
from wavelift.ir.builder import Builder
from wavelift.ir.program import Block, Program


def _c(b, t, v):
    return b.const(t, v)


def _ops(b: Builder):
    """name -> a function emitting that op into builder b (the op and its natural operands)."""
    u = lambda v=3: _c(b, "u32", v)  # noqa: E731
    f = lambda v=1.5: _c(b, "f32", v)  # noqa: E731
    lane = lambda: b.lane_id()  # noqa: E731
    ex = lambda: b.exec()  # noqa: E731
    sw = lambda o: b.bin(
        "add",
        "u64",
        b.bin("mul", "u64", b.cvt("u64", o), _c(b, "u64", 4)),  # noqa: E731
        b.cvt("u64", b.bin("shl", "u32", lane(), u(2))),
    )
    put = lambda v: b.vset(
        5,
        v
        if v.type == "u32"
        else b.cvt("u32", v)
        if not program.is_float(v.type)  # noqa: E731
        else b.bitcast("u32", b.cvt("f32", v))
        if v.type != "f64"
        else b.lo32(b.bitcast("u64", v)),
    )
    spec = {
        "const": lambda: put(u(7)),
        "sget": lambda: put(b.sget(4)),
        "vget": lambda: put(b.vget(1)),
        "sset": lambda: b.sset(4, u(9)),
        "vset": lambda: b.vset(3, lane()),
        "lane_id": lambda: put(lane()),
        "exec": lambda: put(b.select(ex(), u(1), u(0))),
        "cmp": lambda: put(b.select(b.cmp("lt", "u32", lane(), u(5)), u(1), u(2))),
        "select": lambda: put(b.select(ex(), lane(), u(4))),
        "cvt": lambda: put(b.cvt("u32", b.cvt("f32", lane()))),
        "bitcast": lambda: put(b.bitcast("u32", f())),
        "pack64": lambda: put(b.lo32(b.pack64(lane(), u(1)))),
        "lo32": lambda: put(b.lo32(_c(b, "u64", 1 << 40 | 5))),
        "hi32": lambda: put(b.hi32(_c(b, "u64", 1 << 40 | 5))),
        "ballot": lambda: put(b.lo32(b.ballot(b.cmp("lt", "u32", lane(), u(5))))),
        "maskbit": lambda: put(b.select(b.maskbit(_c(b, "u64", 0x55)), u(1), u(0))),
        "readlane": lambda: put(b.emit("readlane", "u32", lane(), u(3))),
        "shuffle": lambda: put(b.emit("shuffle", "u32", lane(), b.bin("xor", "u32", lane(), u(1)))),
        "permute": lambda: put(b.emit("permute", "u32", lane(), b.bin("xor", "u32", lane(), u(1)), ex())),
        "fma": lambda: put(b.emit("fma", "f32", f(), f(2.0), f(0.25))),
        "fma_to": lambda: put(b.emit("fma_to", "f16", f(), f(2.0), f(0.25))),
        "trig_preop": lambda: put(b.emit("trig_preop", "f64", _c(b, "f64", 3.0), lane())),
        "ldexp": lambda: put(b.emit("ldexp", "f32", f(), b.bitcast("i32", lane()))),
        "isclass": lambda: put(b.emit("isclass", "u32", f(), u(0x3FF))),
        "fin": lambda: put(b.emit("fin", "f32", f())),
        "fout": lambda: put(b.emit("fout", "f32", f())),
        "frexp_exp": lambda: put(b.emit("frexp_exp", "i32", f())),
        "refuse_if": lambda: b.effect(
            "refuse_if", "b1", b.bin("and", "b1", ex(), b.cmp("eq", "u32", lane(), u(99))), why="a test"
        ),
        # memory: global, lds and scratch (a scratch_* instruction: unaligned crossings split)
        "load": lambda: [
            put(
                b.emit(
                    "word",
                    "u32",
                    b.emit("load", "u32", a, ex(), uniform=False, space=sp, nbytes=nb, words=1),
                    k=0,
                )
            )
            for sp, a, nb in (
                ("global", _c(b, "u64", 0x1000), 4),
                ("lds", u(8), 2),
                ("scratch", sw(u(6)), 4),
                ("scratch", sw(u(5)), 2),
            )
        ],
        "word": lambda: None,  # with load
        "store": lambda: [
            b.effect("store", "u32", a, ex(), lane(), space=sp, nbytes=nb)
            for sp, a, nb in (
                ("global", _c(b, "u64", 0x1000), 4),
                ("lds", u(8), 1),
                ("scratch", sw(u(7)), 4),
                ("scratch", sw(u(3)), 2),
            )
        ],
        "atomic": lambda: [
            put(b.emit("atomic", "u32", a, ex(), lane(), uniform=False, space=sp, op="add", bits=32))
            for sp, a in (("global", _c(b, "u64", 0x1000)), ("lds", u(8)), ("scratch", sw(u(4))))
        ],
    }
    for n in ("add", "sub", "mul", "mulhi", "and", "or", "xor", "min", "max", "shl", "shr", "sar"):
        spec[n] = (lambda n: lambda: put(b.bin(n, "u32", lane(), u())))(n)
    for n in ("not", "neg", "abs", "clz", "ctz", "popcount", "bitrev"):
        spec[n] = (lambda n: lambda: put(b.un(n, "u32", lane())))(n)
    for n in ("fadd", "fsub", "fmul", "fdiv", "fmin", "fmax"):
        spec[n] = (lambda n: lambda: put(b.bin(n, "f32", f(), b.cvt("f32", lane()))))(n)
    for n in (
        "fneg",
        "fabs",
        "floor",
        "ceil",
        "trunc",
        "rndne",
        "fract",
        "sqrt",
        "rcp",
        "rsq",
        "exp2",
        "log2",
        "sin",
        "cos",
        "frexp_mant",
    ):
        spec[n] = (lambda n: lambda: put(b.un(n, "f32", b.cvt("f32", lane()))))(n)

    def fnan():  # r, then its NaN sources (MODE.IEEE clear)
        x, y = f(), b.cvt("f32", lane())
        put(b.emit("fnan", "f32", b.bin("fadd", "f32", x, y), x, y))

    spec["fnan"] = fnan
    return spec


def _program(names, wave_size):
    counter = [0]
    b = Builder(counter, wave_size)
    spec = _ops(b)
    instrs = []
    for i, n in enumerate(names):
        b.instr = i
        enc = "SCRATCH" if n in ("load", "store", "atomic") else "VOP3"
        instrs.append(types.SimpleNamespace(offset=4 * i, text=f"op_{i}", encoding=enc, name=n))
        spec[n]()
    blk = Block(
        0, 0, instrs=list(range(len(names))), ops=b.ops, term=("end",), valu=len(names), uses_float=True
    )
    return Program([blk], instrs, {0: 0}, max_vgpr=5, uses_scratch=True)


def _numpy_lowered_names() -> set[str]:
    """Op names the NumPy backend's code generator dispatches on (the keys of its table of
    block lowerings, codegen.BLOCK, which holds the value ops' expressions, expr.EXPR)."""
    from wavelift.backends.numpy import codegen as NC

    # ops only the IR's passes emit (never in the IR the frontends build) are theirs
    from wavelift.ir.passes.pipeline import PASS_OPS

    return set(NC.BLOCK) - PASS_OPS


ALL_OPS = sorted(ops.VALUE_OPS | ops.EFFECT_OPS)


def test_op_table_covers_the_ir_and_the_numpy_backend():
    spec = set(_ops(Builder([0], 32)))
    assert set(ALL_OPS) <= spec, f"IR ops with no CUDA coverage case: {sorted(set(ALL_OPS) - spec)}"
    missing = _numpy_lowered_names() - spec
    assert not missing, f"ops the NumPy backend lowers but this table lacks: {sorted(missing)}"


@pytest.mark.parametrize("name", ALL_OPS)
def test_every_ir_op_lowers(name):
    from wavelift.backends.cuda.codegen import kernel_source
    from wavelift.backends.numpy.codegen import compile_program

    for ws in (32, 64):
        prog = _program([name], ws)
        compile_program(prog, ws)  # the case is valid IR for the NumPy backend
        for mode in ("lane", "wave"):
            for wb in (0, 1024):
                src = kernel_source(prog, ws, mode, wb, 0)
                assert "wl_main" in src and "op_0" not in src


def _nvrtc_problem():
    from wavelift.backends.cuda.compile import nvrtc_problem

    return nvrtc_problem()


@pytest.mark.parametrize("ws,mode", [(32, "lane"), (64, "wave")])
def test_all_ops_module_compiles(ws, mode):
    why = _nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    from wavelift.backends.cuda.codegen import kernel_source
    from wavelift.backends.cuda.compile import nvrtc_compile

    src = kernel_source(_program(ALL_OPS, ws), ws, mode, 2048, 0)
    assert nvrtc_compile(src, "sm_90")[:4] == b"\x7fELF"


def test_refuse_if_is_wave_uniform_and_named_on_the_host():
    from wavelift.backends.cuda.codegen import kernel_source, refusal_table

    for ws, any_ in ((32, "__any_sync(WL_FULL,"), (64, "wl_any64(")):
        prog = _program(["refuse_if"], ws)
        src = kernel_source(prog, ws, "lane", 0, 0)
        line = next(x for x in src.splitlines() if "WL_REFUSE" in x and "wl_flag" in x)
        assert any_ in line and "goto WL_STOP" in line
        assert refusal_table(prog) == [(0, "a test", "program.unsupported_instruction")]
        op = next(op for b in prog.blocks for op in b.ops if op.name == "refuse_if")
        op.attrs["code"] = "image.unsupported_layout"  # a named code reaches the host
        assert refusal_table(prog) == [(0, "a test", "image.unsupported_layout")]
    # the host turns the kernel's status words (flag, instruction, refuse_if ordinal) into it
    from wavelift.backends.cuda.runtime import G_FLAGS, Runtime
    from wavelift.errors import Refused

    rt = types.SimpleNamespace(m=types.SimpleNamespace(program=prog))
    status = [G_FLAGS["refuse"], 0, 0, 0, 0, G_FLAGS["refuse"]]
    with pytest.raises(Refused) as e:
        Runtime._raise_flags(rt, status)
    assert e.value.refusal.code == "image.unsupported_layout"
    assert e.value.refusal.message == "offset 0x0: op_0 (a test)"
    # a report naming a refuse_if or instruction the module does not have: refused by name, never
    # an IndexError (session 47's gpu_check met one under opt-in settings)
    for a, b in ((0, 1), (len(prog.instructions), 0)):
        with pytest.raises(Refused) as e:
            Runtime._raise_flags(rt, [G_FLAGS["refuse"], a, b, 0, 0, G_FLAGS["refuse"]])
        assert e.value.refusal.code == "backend.bad_report"


def test_scratch_split_only_for_flat_scratch():
    """scratch_* accesses that cross a dword go byte by byte; MUBUF keeps the alignment rule."""
    from wavelift.backends.cuda.codegen import kernel_source

    prog = _program(["load"], 32)
    assert "wl_sbyte(sa" in kernel_source(prog, 32, "lane", 1024, 0)
    prog.instructions[0].encoding = "MUBUF"
    assert "wl_sbyte(sa" not in kernel_source(prog, 32, "lane", 1024, 0)


def test_scratch_byte_addresses_match_numpy():
    """wl_sbyte (C) mirrors runtime._scratch_split: checked on the same formula in Python."""
    import numpy as np

    from wavelift.backends.numpy.runtime import Runtime

    for W in (32, 64):
        rt = types.SimpleNamespace(L=W)
        a = np.array([[4 * W * 3 + 4 * 5 + 3, 4 * W + 4 * (W - 1) + 2, 1]], np.uint64)
        parts = Runtime._scratch_split(rt, a, np.ones_like(a, bool), 4)
        for k, p in enumerate(parts):
            for x, y in zip(a.reshape(-1), p.reshape(-1)):
                r, o = int(x) & 3, (int(x) & 3) + k
                c = (int(x) // (4 * W) + (o >> 2)) * 4 * W + (int(x) % (4 * W) - r) + (o & 3)
                assert c == int(y)
