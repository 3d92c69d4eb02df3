"""LDS accesses in their direct form (decision 0047, amendment "LDS accesses in their direct
form"): ldsrange's values cover every concrete value (checked by enumeration), the direct and
unchecked forms appear where the address is proved inside the LDS and aligned, and the checked,
shifted forms stay where it is not (an address from memory, an odd offset, an LDS size that is
not baked, WAVELIFT_CUDA_LDS=checked).  No GPU: source text, and NVRTC to PTX where installed."""

from __future__ import annotations

import itertools
import pathlib
import random
import re
import sys
from types import SimpleNamespace

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
for p in (ROOT / "bench", ROOT / "tests" / "cuda"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from wavelift.backends.cuda import ldsrange as R  # noqa: E402
from wavelift.backends.cuda.codegen import (  # noqa: E402
    P_BLOCK,
    P_GFX11,
    P_LDS,
    P_PARTIAL_TG,
    P_TIDIG,
    generate,
)
from wavelift.ir.program import Block, Op, Program, Value  # noqa: E402

M = 0xFFFFFFFF


# ------------------------------------------------------------------ the values cover the concrete
def _concrete(v: R.V, rng, n=40):
    """Up to n members of v (its ends and random ones)."""
    step = 1 << v.k
    first = v.lo + ((v.r - v.lo) % step)
    if first > v.hi:
        return []
    last = first + (v.hi - first) // step * step
    out = {first, last}
    span = (last - first) // step
    for _ in range(n):
        out.add(first + rng.randrange(span + 1) * step)
    return sorted(out)


def _values(rng):
    small = [R.const(c) for c in (0, 1, 2, 3, 4, 16, 31, 255, 0x400, M)]
    made = []
    for _ in range(60):
        lo = rng.choice([0, 1, 5, 64, 1000, 1 << 20, M - 70])
        hi = min(lo + rng.choice([0, 3, 15, 255, 4096, 1 << 31, M]), M)
        k = rng.randrange(0, 7)
        made.append(R.V(lo, hi, k, rng.randrange(1 << k)))
    return small + [R.TOP] + made


_CONCRETE = {
    "add": lambda a, b: (a + b) & M,
    "sub": lambda a, b: (a - b) & M,
    "mul": lambda a, b: (a * b) & M,
    "shl": lambda a, b: (a << b) & M if b < 32 else None,
    "shr": lambda a, b: a >> b if b < 32 else None,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
}


def _member(x: int, v: R.V) -> bool:
    return v.lo <= x <= v.hi and x % (1 << v.k) == v.r


@pytest.mark.parametrize("name", sorted(_CONCRETE))
def test_ldsrange_ops_cover_every_concrete_result(name):
    rng = random.Random(name)
    vals = _values(rng)
    fn = R._BIN[name]
    for a, b in itertools.product(vals, vals):
        if name in ("shl", "shr") and b.hi > 40:
            b = R.V(0, 31) if b.lo > 31 else R.V(b.lo, min(b.hi, 31), b.k, b.r)
        got = fn(a, b)
        for x in _concrete(a, rng, 6):
            for y in _concrete(b, rng, 6):
                z = _CONCRETE[name](x, y)
                if z is not None:
                    assert _member(z, got), (name, a, b, x, y, z, got)


def test_ldsrange_join_covers_both():
    rng = random.Random(7)
    vals = _values(rng)
    for a, b in itertools.product(vals, vals):
        j = R.join(a, b)
        for x in _concrete(a, rng, 5) + _concrete(b, rng, 5):
            assert _member(x, j), (a, b, x, j)


def test_ldsrange_bounds_are_useful():
    """The shapes the benchmark kernels use stay precise: a tile row from a local id."""
    lx = R.V(0, 15)
    row = R.or_(R.const(0x400), R.shl(lx, R.const(2)))  # 0x400 | lx << 2
    assert (row.lo, row.hi) == (0x400, 0x43C) and R.align_of(row) >= 4
    end = R.add(row, R.const(0x3C0))
    assert end.hi + 4 <= 2048 and R.align_of(end) >= 4
    assert R.align_of(R.add(row, R.const(2))) == 2
    assert R.and_(R.TOP, R.const(255)).hi == 255


# ------------------------------------------------------------------ the forms in the source
class _P:
    """A one-block program: v5 = LDS load at an address the ops build, stored to LDS too."""

    def __init__(self):
        self.ops: list = []
        self.n = 0

    def v(self, t, uniform=False):
        self.n += 1
        return Value(self.n, t, uniform)

    def op(self, name, t, args=(), **attrs):
        out = self.v(t if name not in ("cmp",) else "b1", all(a.uniform for a in args) if args else True)
        self.ops.append(Op(name, t, tuple(args), dict(attrs), out, 0))
        return out

    def const(self, t, value):
        return self.op("const", t, value=value)

    def vget(self, r):
        out = self.v("u32")
        self.ops.append(Op("vget", "u32", (), {"reg": r}, out, 0))
        return out

    def program(self, addr, nbytes=4, space="lds"):
        m = self.v("b1")
        self.ops.append(Op("exec", "b1", (), {}, m, 0))
        out = self.v("u32")
        self.ops.append(Op("load", "u32", (addr, m), {"space": space, "nbytes": nbytes, "words": 1}, out, 0))
        w = self.op("word", "u32", (out,), k=0)
        self.ops.append(Op("store", "u32", (addr, m, w), {"space": space, "nbytes": nbytes}, None, 0))
        self.ops.append(Op("vset", "u32", (w, m), {"reg": 5}, None, 0))
        return Program(
            [Block(0, 0, instrs=[0], ops=self.ops, term=("end",))],
            [SimpleNamespace(encoding="VOP1")],
            {0: 0},
            8,
        )


def _source(prog, lds=2048, block=(64, 1, 1), baked=True, partial=0):
    vals = (
        (P_BLOCK, block[0]),
        (P_BLOCK + 1, block[1]),
        (P_BLOCK + 2, block[2]),
        (P_TIDIG, 0),
        (P_GFX11, 0),
        (P_PARTIAL_TG, partial),
    )
    return generate(prog, 32, "lane", 0, 0, (*vals, (P_LDS, lds)) if baked else ())[0]


def _lds_lines(src):
    return [
        ln.strip() for ln in src.splitlines() if "wl_smem +" in ln and "X =" not in ln or "(wl_smem," in ln
    ]


@pytest.fixture(autouse=True)
def _no_passes(monkeypatch):
    monkeypatch.setenv("WAVELIFT_CUDA_PASSES", "off")  # the ops as built here
    monkeypatch.setenv("WAVELIFT_CUDA_LDS", "direct")


def test_bounded_aligned_address_is_direct_and_unchecked():
    g = _P()
    addr = g.op("shl", "u32", (g.vget(0), g.const("u32", 2)))  # lx * 4, lx < 64
    lines = _lds_lines(_source(g.program(addr)))
    assert len(lines) == 2, lines
    assert all("wl_inside" not in ln and "<=" not in ln for ln in lines), lines
    assert all("wl_read" not in ln and "wl_write" not in ln for ln in lines), lines
    assert any("((const u32*)(wl_smem + (u32)(" in ln for ln in lines), lines


def test_partial_groups_leave_the_local_ids_unbounded():
    """With partial groups (PARTIAL_TG) a group's sizes are run-time numbers: lx * 4 is not
    bounded, so each access is tested (still direct: the alignment holds)."""
    g = _P()
    addr = g.op("shl", "u32", (g.vget(0), g.const("u32", 2)))
    lines = _lds_lines(_source(g.program(addr), partial=1))
    assert len(lines) == 2 and all("<= 2044u)" in ln for ln in lines), lines
    assert all("wl_read" not in ln and "wl_write" not in ln for ln in lines), lines


def test_local_id_bounds():
    """z ids of the lanes past a group's threads (10x10x1 in wave32: 128 lanes) reach 1."""
    e = R.entry_registers(32, {"block": (10, 10, 1), "tidig": 2, "packed": False})
    assert (e[("v", 0)].hi, e[("v", 1)].hi, e[("v", 2)].hi) == (9, 9, 1)
    for t in range(128):
        assert t % 10 <= 9 and (t // 10) % 10 <= 9 and t // 100 <= e[("v", 2)].hi
    e = R.entry_registers(32, {"block": (10, 10, 1), "tidig": 0, "packed": False})
    assert e[("v", 1)] == R.const(0) and e[("v", 2)] == R.const(0)


def test_address_past_the_lds_keeps_the_check():
    """lx * 4 + 2040 reaches 2292: past a 2048-byte LDS, so each access is tested (one u32
    compare against lds_bytes - nb), still direct (aligned)."""
    g = _P()
    addr = g.op("add", "u32", (g.op("shl", "u32", (g.vget(0), g.const("u32", 2))), g.const("u32", 2040)))
    lines = _lds_lines(_source(g.program(addr)))
    assert all("<= 2044u)" in ln for ln in lines), lines
    assert all("wl_read" not in ln and "wl_write" not in ln for ln in lines), lines


def test_unaligned_address_keeps_the_shifted_form():
    """lx * 4 + 2: inside, so no test, but not a multiple of 4: wl_read / wl_write as before."""
    g = _P()
    addr = g.op("add", "u32", (g.op("shl", "u32", (g.vget(0), g.const("u32", 2))), g.const("u32", 2)))
    lines = _lds_lines(_source(g.program(addr)))
    assert any("wl_read(wl_smem" in ln for ln in lines) and any("wl_write(wl_smem" in ln for ln in lines)
    assert all("<=" not in ln and "wl_inside" not in ln for ln in lines), lines


def test_address_from_memory_is_checked_and_shifted():
    """An address read from LDS itself is any value: the bounds test and the shifted form."""
    g = _P()
    m = g.v("b1")
    g.ops.append(Op("exec", "b1", (), {}, m, 0))
    first = g.v("u32")
    g.ops.append(
        Op("load", "u32", (g.const("u32", 0), m), {"space": "lds", "nbytes": 4, "words": 1}, first, 0)
    )
    addr = g.op("word", "u32", (first,), k=0)
    lines = _lds_lines(_source(g.program(addr)))
    assert len(lines) == 3, lines
    # the first load (address 0) is direct; the two at the loaded address are not
    assert "<=" not in lines[0] and "wl_read" not in lines[0]
    assert all("<= 2044u)" in ln for ln in lines[1:]), lines
    assert "wl_read(wl_smem" in lines[1] and "wl_write(wl_smem" in lines[2]


def test_small_accesses_and_lds_size_not_baked():
    g = _P()
    addr = g.op("shl", "u32", (g.vget(0), g.const("u32", 1)))  # lx * 2: u16 accesses
    prog = g.program(addr, nbytes=2)
    lines = _lds_lines(_source(prog))
    assert any("*(const u16*)(wl_smem" in ln for ln in lines) and any("*(u16*)(wl_smem" in ln for ln in lines)
    assert all("<=" not in ln for ln in lines), lines
    # without baked numbers nothing is bounded: the LDS size comes from P[] and is tested
    lines = _lds_lines(_source(prog, baked=False))
    assert all(f"P[{P_LDS}]" in ln and "wl_inside" in ln for ln in lines), lines


def test_lds_smaller_than_the_access_never_reads():
    g = _P()
    addr = g.op("shl", "u32", (g.vget(0), g.const("u32", 2)))
    lines = _lds_lines(_source(g.program(addr), lds=2))
    assert all("&& false)" in ln for ln in lines), lines


def test_vgpr_written_under_another_mask_is_not_trusted():
    """v3 = lx*4 under EXEC, then v3 = a loaded word under the same EXEC: an access after both
    reads the loaded word (any value) -- checked."""
    g = _P()
    m = g.v("b1")
    g.ops.append(Op("exec", "b1", (), {}, m, 0))
    g.ops.append(
        Op("vset", "u32", (g.op("shl", "u32", (g.vget(0), g.const("u32", 2))), m), {"reg": 3}, None, 0)
    )
    out = g.v("u32")
    g.ops.append(Op("load", "u32", (g.const("u32", 0), m), {"space": "lds", "nbytes": 4, "words": 1}, out, 0))
    g.ops.append(Op("vset", "u32", (g.op("word", "u32", (out,), k=0), m), {"reg": 3}, None, 0))
    lines = _lds_lines(_source(g.program(g.vget(3))))
    assert all("<= 2044u)" in ln for ln in lines[1:]), lines


def test_checked_setting_keeps_every_access_checked(monkeypatch):
    """`checked`: the forms before the amendment, for A/B runs."""
    monkeypatch.setenv("WAVELIFT_CUDA_LDS", "checked")
    g = _P()
    addr = g.op("shl", "u32", (g.vget(0), g.const("u32", 2)))
    lines = _lds_lines(_source(g.program(addr)))
    assert lines and all("wl_inside" in ln for ln in lines) and any("wl_read" in ln for ln in lines), lines


def test_direct_forms_are_the_default(monkeypatch):
    """Unset: the proved forms (they ran equal to NumPy lane mode on the GPU, 2026-12-06)."""
    monkeypatch.delenv("WAVELIFT_CUDA_LDS", raising=False)
    g = _P()
    addr = g.op("shl", "u32", (g.vget(0), g.const("u32", 2)))
    lines = _lds_lines(_source(g.program(addr)))
    assert len(lines) == 2, lines
    assert all("wl_inside" not in ln and "wl_read" not in ln and "wl_write" not in ln for ln in lines), lines


# ------------------------------------------------------------------ the benchmark kernels
@pytest.mark.parametrize("name", ["matmul16", "scan256", "histogram", "reduce1024", "stencil5"])
def test_benchmark_kernels_direct_forms(name, monkeypatch):
    """lds.cl's kernels as the backend generates them: matmul16's every LDS access is direct and
    unchecked (the tiles' addresses come from the local ids), the others mostly; every module
    compiles (NVRTC to PTX, where installed)."""
    monkeypatch.delenv("WAVELIFT_CUDA_PASSES", raising=False)
    import gpu_check as G
    from test_cuda_backend import _nvrtc_problem, translate_dispatch

    from wavelift.backends.cuda.codegen import baked_params
    from wavelift.backends.cuda.compile import check_source

    mem, cfg, *_ = G.lds_dispatch(name, small=True)
    prog, base = translate_dispatch(mem, cfg)
    src = generate(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, baked_params(cfg))[0]
    lines = _lds_lines(src)
    checked = [ln for ln in lines if re.search(r"<= \d+u\)|wl_inside", ln)]
    shifted = [ln for ln in lines if "wl_read(" in ln or "wl_write(" in ln]
    most = {
        "matmul16": (0, 0),
        "scan256": (4, 0),
        "histogram": (1, 0),
        "reduce1024": (7, 0),
        "stencil5": (1, 1),
    }
    ok = len(checked) <= most[name][0] and len(shifted) <= most[name][1] and len(lines) >= 3
    assert ok, (len(checked), len(shifted), lines)
    assert f"P[{P_LDS}]" not in src  # baked
    if _nvrtc_problem() is None:
        check_source(src, "sm_90")
