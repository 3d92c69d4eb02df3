"""EXEC known whole (WAVELIFT_CUDA_EXEC=known, the default; decision 0047's amendment h106): where the
LDS analysis (ldsrange, lanes) proves EXEC holds every lane of the wave, the kernel's EXEC bit is
the constant 1 and its lane count 32 a warp.  ldsrange's places are checked against programs whose
EXEC is known by construction (whole at the start of a group that fills its waves; narrowed by a
compare, set from an SGPR, shrunk in a loop, a partial group: not whole), and the benchmark
kernels' sources: constants only where EXEC cannot change, `every`'s source as before the setting (unset is `known`, the default).
No GPU: source text, and NVRTC to PTX where installed."""

from __future__ import annotations

import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
for p in (ROOT / "bench", ROOT / "tests" / "cuda"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_cuda_lds_forms_host import _Blocks  # noqa: E402

from wavelift.backends.cuda import ldsrange as R  # noqa: E402


def _whole(g: _Blocks, block=(64, 1, 1), wave=32, shape=True):
    places: set = set()
    sh = {"block": block, "tidig": 0, "packed": False} if shape else None
    R.analyse(g.program(), wave, sh, frozenset(), True, None, None, None, places)
    return places


def _exec_positions(g: _Blocks):
    """(block index, position) of each exec op"""
    return {(b.index, k) for b in g.blocks for k, op in enumerate(b.ops) if op.name == "exec"}


def test_whole_at_the_start_of_a_full_group_until_narrowed():
    """64 threads, wave32: EXEC whole from the start up to the compare that narrows it."""
    g = _Blocks()
    g.vset(7, g.const(1))  # exec op at 0 (const at 0, exec at 1)
    g.exec_from(g.op("cmp", "u32", (g.sget(9), g.vget(3)), cond="gt"))
    g.vset(7, g.const(2))
    g.end("end")
    places = _whole(g)
    ops = g.blocks[0].ops
    narrowed = next(k for k, op in enumerate(ops) if op.name == "sset")
    assert {k for b, k in places} == set(range(narrowed + 1)), places
    execs = sorted(k for _, k in _exec_positions(g))
    assert execs[0] in {k for _, k in places} and execs[-1] not in {k for _, k in places}


@pytest.mark.parametrize("case", ["partial wave", "no shape", "wave64 partial", "sgpr"])
def test_not_whole(case):
    """A group that does not fill its waves (48 threads), no shape (partial groups), wave64 with
    32 threads a group, EXEC set from an SGPR: nowhere whole (after the write)."""
    g = _Blocks()
    if case == "sgpr":
        g.sset(126, g.sget(10))
    g.vset(7, g.const(1))
    g.end("end")
    if case == "partial wave":
        places = _whole(g, block=(48, 1, 1))
    elif case == "no shape":
        places = _whole(g, shape=False)
    elif case == "wave64 partial":
        places = _whole(g, block=(32, 1, 1), wave=64)
    else:
        places = _whole(g)
        write = next(k for k, op in enumerate(g.blocks[0].ops) if op.name == "sset")
        assert places == {(0, k) for k in range(write + 1)}  # up to the write only
        return
    assert places == set()


def test_wave64_needs_both_halves():
    """wave64, 64 threads: whole until either half is written from an SGPR."""
    for reg in (126, 127):
        g = _Blocks()
        g.vset(7, g.const(1))
        g.sset(reg, g.sget(10))
        g.vset(7, g.const(2))
        g.end("end")
        places = _whole(g, wave=64)
        first, second = sorted(k for _, k in _exec_positions(g))
        assert (0, first) in places and (0, second) not in places, (reg, places)


@pytest.mark.parametrize("shrinks", [True, False])
def test_loop(shrinks):
    """A loop whose EXEC shrinks (lanes leave: the histogram's grid-stride loop) is not whole at
    its head, even on the first iteration's path; one that leaves EXEC alone (a uniform loop:
    matmul16's tiles) stays whole around the back edge."""
    g = _Blocks()
    g.vset(7, g.const(1))
    g.end("jump", 1)
    g.vset(7, g.const(2))
    if shrinks:
        g.sset(126, g.op("and", "u32", (g.sget(126), g.op("not", "u32", (g.sget(11),)))))
    g.end("branch", g.op("cmp", "u32", (g.sget(12), g.const(0)), cond="ne"), 1, 2)
    g.vset(7, g.const(3))
    g.end("end")
    places = _whole(g)
    loop_exec = {(1, k) for b, k in _exec_positions(g) if b == 1}
    after = {(2, k) for b, k in _exec_positions(g) if b == 2}
    assert (0, 0) in places
    assert bool(loop_exec & places) == (not shrinks), places
    assert bool(after & places) == (not shrinks), places


def _kernel_source(name, monkeypatch, setting):
    from test_cuda_backend import lds_kernel_source

    return lds_kernel_source(
        name,
        monkeypatch,
        {"WAVELIFT_CUDA_PASSES": None, "WAVELIFT_CUDA_LDS": None, "WAVELIFT_CUDA_EXEC": setting},
    )


def _blocks_of(src):
    """generated block label -> its text"""
    parts = re.split(r"\n(B\d+): \{\n", src)
    return {parts[i]: parts[i + 1].split("\n}\n")[0] for i in range(1, len(parts) - 1, 2)}


EXEC_TEST = re.compile(r"const b1 t\d+ = \(\(\(s126 >> lane\) & 1u\) != 0u\);")
EXEC_CONST = re.compile(r"const b1 t\d+ = true; /\* EXEC whole \*/")


@pytest.mark.parametrize("name", ["matmul16", "histogram", "stencil5", "reduce1024", "scan256"])
def test_benchmark_kernels(name, monkeypatch):
    """lds.cl's kernels (no partial groups): `every`, no EXEC bit or lane count is a constant;
    known, every one before the first EXEC write of a block whose EXEC the kernel never changed
    on the way in is -- matmul16's tile loop entirely (EXEC never written), the histogram's loop
    not at all (its EXEC shrinks each iteration: a wrong proof there would drop lanes)."""
    from test_cuda_backend import _nvrtc_problem

    from wavelift.backends.cuda.compile import check_source

    old = _kernel_source(name, monkeypatch, "every")
    assert not EXEC_CONST.search(old) and "lc += 32u *" not in old
    src = _kernel_source(name, monkeypatch, "known")
    assert src != old
    assert _kernel_source(name, monkeypatch, None) == src  # (known is the default)
    # the same text but for the EXEC bits and lane counts made constants
    norm = EXEC_TEST.sub("E", EXEC_CONST.sub("E", src))
    norm = re.sub(r"lc \+= (32u|\(u32\)__popc\(s126\)) \*", "lc += N *", norm)
    assert norm == re.sub(r"lc \+= \(u32\)__popc\(s126\) \*", "lc += N *", EXEC_TEST.sub("E", old))
    blocks = _blocks_of(src)
    if name == "matmul16":
        assert "s126 = " not in "".join(blocks.values())  # (a uniform loop: EXEC never written)
        assert all(not EXEC_TEST.search(b) and "__popc(s126)" not in b for b in blocks.values())
    if name == "histogram":
        loop = [b for b in blocks.values() if "wl_atomic32" in b and "wl_gload" in b]
        assert len(loop) == 1 and EXEC_TEST.search(loop[0]) and "__popc(s126)" in loop[0]
        assert not EXEC_CONST.search(loop[0]) and "lc += 32u" not in loop[0]
    if _nvrtc_problem() is None:
        check_source(src, "sm_90")
