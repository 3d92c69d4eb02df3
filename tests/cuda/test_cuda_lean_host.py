"""The hot path's leaner forms (decision 0009's amendment h146), without a GPU: an f32 min/max
with a constant the passes named is the compare form (minmax_const, held to wl_fmin / wl_fmax by
test_cuda_prelude_host.py); WAVELIFT_CUDA_F2I=cvt makes f32 -> u32 / i32 one cvt.rzi (held to
wl_f2i on the device by test_cuda_lean_gpu.py); WAVELIFT_CUDA_STATS=block adds the counts once a
CUDA block where every thread reaches the kernel's end.  Each module also compiles (NVRTC)."""

from __future__ import annotations

import types

import pytest

from wavelift.ir.builder import Builder
from wavelift.ir.program import Block, Program


def _program(emit, wave_size=32):
    b = Builder([0], wave_size)
    b.instr = 0
    emit(b)
    instrs = [types.SimpleNamespace(offset=0, text="op_0", encoding="VOP3", name="op")]
    blk = Block(0, 0, instrs=[0], ops=b.ops, term=("end",), valu=1, uses_float=True)
    return Program([blk], instrs, {0: 0}, max_vgpr=5)


def _put(b, v):
    # (a global store keeps the value: the passes drop a VGPR write nobody reads)
    at = b.const("u64", 0x1000 + 4 * len(b.ops))
    b.effect(
        "store", "u32", at, b.exec(), v if v.type == "u32" else b.bitcast("u32", v), space="global", nbytes=4
    )


def _body(src):
    return src[src.index("__global__") :]


def _compiles(src):
    from test_cuda_backend import _needs_nvrtc

    from wavelift.backends.cuda.compile import nvrtc_compile

    _needs_nvrtc()
    assert nvrtc_compile(src, "sm_90")[:4] == b"\x7fELF"


def _source(prog):
    from wavelift.backends.cuda.codegen import kernel_source

    return kernel_source(prog, 32, "lane", 0, 0)


def _clamp(b):
    x = b.cvt("f32", b.lane_id())
    lo, hi, mz = b.const("f32", 0.0), b.const("f32", 255.0), b.const("f32", -0.0)
    _put(b, b.bin("fmin", "f32", b.bin("fmax", "f32", x, lo), hi))
    _put(b, b.bin("fmax", "f32", x, mz))  # (max with -0: the tie-break decides, wl_fmax stays)


def test_min_max_with_a_named_constant_is_the_compare_form():
    body = _body(_source(_program(_clamp)))
    assert "> (__uint_as_float(0x0u))" in body and "< (__uint_as_float(0x437f0000u))" in body
    assert body.count("wl_fmax(") == 1 and "wl_fmin(" not in body
    _compiles(_source(_program(_clamp)))


def _conversions(b):
    x = b.bitcast("f32", b.lane_id())
    _put(b, b.cvt("u32", x))
    _put(b, b.cvt("i32", x))
    _put(b, b.cvt("u32", b.cvt("u16", x)))  # (narrower: wl_f2i stays)


def test_f2i_cvt_is_one_conversion(monkeypatch):
    monkeypatch.setenv("WAVELIFT_CUDA_F2I", "wl")
    plain = _body(_source(_program(_conversions)))
    assert plain.count("wl_f2i<") == 3 and "__float2" not in plain
    monkeypatch.delenv("WAVELIFT_CUDA_F2I", raising=False)  # (the default since session 51)
    src = _source(_program(_conversions))
    body = _body(src)
    assert "__float2uint_rz(" in body and "__float2int_rz(" in body and body.count("wl_f2i<u16>") == 1
    _compiles(src)


def _lds_store(b):
    b.effect(
        "store",
        "u32",
        b.bin("shl", "u32", b.lane_id(), b.const("u32", 2)),
        b.exec(),
        b.lane_id(),
        space="lds",
        nbytes=4,
    )


def _source_at(prog, wave_size):
    from wavelift.backends.cuda.codegen import kernel_source

    return kernel_source(prog, wave_size, "lane", 0, 0)


def test_block_stats_only_where_every_thread_ends_the_kernel(monkeypatch):
    prog = _program(lambda b: _put(b, b.lane_id()))
    monkeypatch.setenv("WAVELIFT_CUDA_STATS", "wave")
    assert "wl_count_(C.wave" in _body(_source(prog)) and "wl_count_block(" not in _body(_source(prog))
    monkeypatch.setenv("WAVELIFT_CUDA_STATS", "block")
    src = _source(prog)
    assert "wl_count_block(" in _body(src) and "wl_count_(C.wave" not in _body(src)
    _compiles(src)
    # (a program with LDS: its shared memory is the module's own; the count per wave, as a pair)
    lds = _body(_source(_program(_lds_store)))
    assert "wl_count_pair(C.wave" in lds and "wl_count_block(" not in lds


def test_auto_stats_are_block_for_wave32_else_pair(monkeypatch):
    """WAVELIFT_CUDA_STATS=auto (the default since session 53; 0009's session-53 amendment):
    a wave32 kernel that may (no s_barrier, no LDS) adds its counts once a CUDA block, a wave64
    kernel or one with LDS per wave as a pair; a value other than the four is refused."""
    monkeypatch.delenv("WAVELIFT_CUDA_STATS", raising=False)
    put = lambda b: _put(b, b.lane_id())  # noqa: E731
    w32 = _body(_source_at(_program(put), 32))
    assert w32.endswith("  wl_count_block(lane < 32u, icnt + ic, lc);\n}\n") and "wl_count_pair(" not in w32
    for body in (_body(_source_at(_program(put, 64), 64)), _body(_source(_program(_lds_store)))):
        assert "wl_count_pair(C.wave, lane, icnt + ic, lc);\n}\n" in body and "wl_count_block(" not in body
    monkeypatch.setenv("WAVELIFT_CUDA_STATS", "AUTO ")  # (read as the setting's other values are)
    assert _body(_source_at(_program(put), 32)) == w32
    monkeypatch.setenv("WAVELIFT_CUDA_STATS", "last")
    with pytest.raises(ValueError, match="WAVELIFT_CUDA_STATS"):
        _source(_program(put))


def test_pair_stats_in_every_kernel(monkeypatch):
    """WAVELIFT_CUDA_STATS=pair (0009's amendment h162): the per-wave count's call is
    wl_count_pair's, LDS or not (no barrier, so every kernel may); its one atomic instruction
    of two lanes in the PTX (the per-wave form has two)."""
    from test_land_host import _ptx

    monkeypatch.setenv("WAVELIFT_CUDA_STATS", "pair")
    for prog in (_program(lambda b: _put(b, b.lane_id())), _program(_lds_store)):
        body = _body(_source(prog))
        assert body.endswith("  if (wv < wpg) wl_count_pair(C.wave, lane, icnt + ic, lc);\n}\n")
        assert "wl_count_(C.wave" not in body and "wl_count_block(" not in body
    src = _source(_program(lambda b: _put(b, b.lane_id())))
    _compiles(src)
    red = lambda ptx: ptx.count("red.global.add.u64") + ptx.count("atom.global.add.u64")  # noqa: E731
    pair = red(_ptx(src))
    monkeypatch.setenv("WAVELIFT_CUDA_STATS", "wave")
    assert red(_ptx(_source(_program(lambda b: _put(b, b.lane_id()))))) == pair + 1
