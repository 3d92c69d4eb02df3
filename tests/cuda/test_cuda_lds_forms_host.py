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

    def word_at_zero(self):
        """(EXEC, the load of LDS word 0 under it): a value only a load gives (any number)."""
        m = self.v("b1")
        self.ops.append(Op("exec", "b1", (), {}, m, 0))
        first = self.v("u32")
        self.ops.append(
            Op("load", "u32", (self.const("u32", 0), m), {"space": "lds", "nbytes": 4, "words": 1}, first, 0)
        )
        return m, first

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
    _, first = g.word_at_zero()
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
    # (HOIST=induction, the default, gives a loop a second, direct copy: the counts are one copy's)
    monkeypatch.setenv("WAVELIFT_CUDA_HOIST", "loops")
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


# ------------------------------------------------------------------ values in the active lanes
class _Blocks:
    """Blocks of IR built op by op (ldsrange.analyse's input): each op appends to the current
    block; ``end(term)`` closes it."""

    def __init__(self):
        self.n = 0
        self.blocks: list = []
        self.ops: list = []
        self.access: list = []  # the LDS accesses, in order

    def v(self, t):
        self.n += 1
        return Value(self.n, t, False)

    def op(self, name, t, args=(), out=True, **attrs):
        o = self.v("b1" if name in ("cmp", "exec") else t) if out else None
        self.ops.append(Op(name, t, tuple(args), dict(attrs), o, 0))
        return o

    def const(self, value):
        return self.op("const", "u32", value=value)

    def vget(self, r):
        return self.op("vget", "u32", reg=r)

    def sget(self, r):
        return self.op("sget", "u32", reg=r)

    def vset(self, r, x, mask=None):
        self.op("vset", "u32", (x, mask if mask is not None else self.op("exec", "b1")), out=False, reg=r)

    def sset(self, r, x):
        self.op("sset", "u32", (x,), out=False, reg=r)

    def exec_from(self, cond):
        """EXEC = the lanes where cond holds among the active ones (v_cmp + s_and_saveexec)."""
        b = self.op("and", "b1", (cond, self.op("exec", "b1")))
        self.sset(126, self.op("lo32", "u32", (self.op("ballot", "u64", (b,)),)))

    def lds_word(self, addr):
        """A word loaded from LDS at addr (any value) under EXEC."""
        out = self.op("load", "u32", (addr, self.op("exec", "b1")), space="lds", nbytes=4, words=1)
        self.access.append(self.ops[-1])
        return self.op("word", "u32", (out,), k=0)

    def lds_store(self, addr, mask=None):
        m = mask if mask is not None else self.op("exec", "b1")
        self.op("store", "u32", (addr, m, self.const(0)), out=False, space="lds", nbytes=4)
        self.access.append(self.ops[-1])

    def end(self, *term):
        self.blocks.append(Block(len(self.blocks), 0, instrs=[0], ops=self.ops, term=term))
        self.ops = []

    def program(self):
        return Program(self.blocks, [SimpleNamespace(encoding="VOP1")], {0: 0}, 16)

    def addresses(self, lanes=True, wave=32):
        shape = {"block": (64, 1, 1), "tidig": 0, "packed": False}
        got = R.analyse(self.program(), wave, shape, frozenset(), lanes)
        return [got.get(id(op), R.TOP) for op in self.access]


def _histogram_shape(g: _Blocks, exec_back: bool, loop_exec: str = "shrink"):
    """The histogram's loop as the backend sees it: v4 = any value (a loaded word) under EXEC;
    EXEC = the lanes of a loop test; v4 = 2; in the loop an LDS access at (v5 & 255) << v4 and
    EXEC made a subset of itself (lanes leave the loop); ``exec_back``: EXEC set to an SGPR
    (any lanes) before the loop instead."""
    g.vset(4, g.lds_word(g.const(0)))
    g.exec_from(g.op("cmp", "u32", (g.sget(9), g.vget(3)), cond="gt"))
    g.end("jump", 1)
    g.vset(4, g.const(2))
    g.vset(5, g.lds_word(g.const(4)))
    if exec_back:
        g.sset(126, g.sget(10))
    g.end("jump", 2)
    addr = g.op("shl", "u32", (g.op("and", "u32", (g.vget(5), g.const(255))), g.vget(4)))
    g.lds_store(addr)
    if loop_exec == "shrink":  # EXEC & ~(lanes done)
        g.sset(126, g.op("and", "u32", (g.sget(126), g.op("not", "u32", (g.sget(11),)))))
    else:  # EXEC from an SGPR: lanes may come back
        g.sset(126, g.sget(11))
    g.end("branch", g.op("cmp", "u32", (g.sget(126), g.const(0)), cond="ne"), 2, 3)
    g.end("end")


def test_lanes_value_written_under_exec_survives_exec_subsets():
    """histogram: the shift amount v4 is 2 in every lane the loop runs (written under EXEC,
    then EXEC only narrowed), though other lanes hold a loaded word: the address is at most
    255 << 2 with lanes, any value without."""
    g = _Blocks()
    _histogram_shape(g, exec_back=False)
    a = g.addresses()[-1]
    assert a.hi == 1020 and R.align_of(a) >= 4, a
    assert g.addresses(lanes=False)[-1].hi == M


@pytest.mark.parametrize("where", ["before the loop", "in the loop"])
def test_lanes_forgotten_when_exec_may_grow(where):
    """EXEC set from an SGPR (lanes that were off may come back, holding the loaded word in v4):
    nothing is known of v4 in the active lanes."""
    g = _Blocks()
    _histogram_shape(
        g, exec_back=where == "before the loop", loop_exec="shrink" if where == "before the loop" else "any"
    )
    assert g.addresses()[-1].hi == M


def test_lanes_write_under_an_older_exec_is_not_trusted():
    """v4 = 2 under the EXEC read before EXEC was set from an SGPR: the lanes active after it
    need not have been written."""
    g = _Blocks()
    g.vset(4, g.lds_word(g.const(0)))
    g.vset(5, g.lds_word(g.const(4)))
    old = g.op("exec", "b1")
    g.sset(126, g.sget(10))
    g.vset(4, g.const(2), mask=old)
    g.lds_store(g.op("shl", "u32", (g.op("and", "u32", (g.vget(5), g.const(255))), g.vget(4))))
    g.end("end")
    assert g.addresses()[-1].hi == M
    # under an EXEC read before it was narrowed, every active lane is written
    g = _Blocks()
    g.vset(4, g.lds_word(g.const(0)))
    g.vset(5, g.lds_word(g.const(4)))
    old = g.op("exec", "b1")
    g.exec_from(g.op("cmp", "u32", (g.sget(9), g.vget(3)), cond="gt"))
    g.vset(4, g.const(2), mask=old)
    g.lds_store(g.op("shl", "u32", (g.op("and", "u32", (g.vget(5), g.const(255))), g.vget(4))))
    g.end("end")
    assert g.addresses()[-1].hi == 1020


def _bounded_by(cond, bound=100, rewrite=False, wave=32, ctype="u32", mask_old=False):
    """v7 = a loaded word; EXEC = lanes where (v7 cond bound); an LDS access at v7 << 2."""
    g = _Blocks()
    g.vset(7, g.lds_word(g.const(0)))
    x = g.vget(7)
    c = g.op("cmp", ctype, (x, g.const(bound)), cond=cond)
    if rewrite:  # v7 written between the compare and the EXEC write
        g.vset(7, g.lds_word(g.const(8)))
    old = g.op("exec", "b1")
    g.exec_from(c)
    g.lds_store(g.op("shl", "u32", (g.vget(7), g.const(2))), mask=old if mask_old else None)
    g.end("end")
    return g.addresses(wave=wave)[-1]


def test_lanes_exec_from_a_compare_bounds_the_register():
    assert _bounded_by("lt").hi == 99 * 4
    assert _bounded_by("le").hi == 100 * 4
    assert _bounded_by("lt", ctype="i32").hi >= M - 3  # v7 may be negative: no order known
    # compared the other way round: 100 > v7
    g = _Blocks()
    g.vset(7, g.lds_word(g.const(0)))
    g.exec_from(g.op("cmp", "u32", (g.const(100), g.vget(7)), cond="gt"))
    g.lds_store(g.op("shl", "u32", (g.vget(7), g.const(2))))
    g.end("end")
    assert g.addresses()[-1].hi == 99 * 4


@pytest.mark.parametrize(
    "case",
    [
        dict(cond="gt"),
        dict(cond="ne"),
        dict(cond="lt", rewrite=True),
        dict(cond="lt", wave=64),
        dict(cond="lt", mask_old=True),
    ],
)
def test_lanes_compare_bounds_only_where_proved(case):
    """No upper bound from v7 > 100 or v7 != 100; none after v7 was written again; none in
    wave64 (EXEC's halves are written one at a time); none for an access under the EXEC before
    the compare (its lanes include those where it failed)."""
    assert _bounded_by(**case).hi >= M - 3


def test_lanes_wave64_exec_halves():
    """wave64: EXEC_LO = the low half of a ballot of (cond & EXEC) narrows EXEC; EXEC_HI = its
    low half does not (other lanes' bits)."""
    for reg, half, known in ((126, "lo32", True), (127, "hi32", True), (127, "lo32", False)):
        g = _Blocks()
        g.vset(4, g.lds_word(g.const(0)))
        g.vset(5, g.lds_word(g.const(4)))
        g.vset(4, g.const(2))
        b = g.op("and", "b1", (g.op("cmp", "u32", (g.sget(9), g.vget(3)), cond="gt"), g.op("exec", "b1")))
        g.sset(reg, g.op(half, "u32", (g.op("ballot", "u64", (b,)),)))
        g.lds_store(g.op("shl", "u32", (g.op("and", "u32", (g.vget(5), g.const(255))), g.vget(4))))
        g.end("end")
        assert (g.addresses(wave=64)[-1].hi == 1020) == known, (reg, half)


def test_lanes_setting_proves_the_histogram(monkeypatch):
    """lds.cl's histogram: its LDS atomic's address (bins[in[i] & 255]) proved inside with
    WAVELIFT_CUDA_LDS=lanes, tested without; the module compiles (NVRTC to PTX, where
    installed)."""
    monkeypatch.delenv("WAVELIFT_CUDA_PASSES", raising=False)
    monkeypatch.setenv("WAVELIFT_CUDA_HOIST", "loops")  # (one copy of the loop: see above)
    import gpu_check as G
    from test_cuda_backend import _nvrtc_problem, translate_dispatch

    from wavelift.backends.cuda.codegen import baked_params
    from wavelift.backends.cuda.compile import check_source

    mem, cfg, *_ = G.lds_dispatch("histogram", small=True)
    prog, base = translate_dispatch(mem, cfg)
    for mode, tested in (("direct", 1), ("lanes", 0)):
        monkeypatch.setenv("WAVELIFT_CUDA_LDS", mode)
        src = generate(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, baked_params(cfg))[0]
        atomics = [ln for ln in _lds_lines(src) if "wl_atomic32" in ln]
        assert len(atomics) == 1
        assert len(re.findall(r"<= \d+u\)", atomics[0])) == tested, atomics
        assert ("& ~3u" in atomics[0]) == bool(tested), atomics
        # the increment: v3 = 1 in every lane of the loop (written before it under EXEC)
        assert (", 0, (u32)1u, (u32)0)" in atomics[0]) == (mode == "lanes"), atomics
        if mode == "lanes" and _nvrtc_problem() is None:
            check_source(src, "sm_90")


def test_ldsrange_tighten_and_refine_keep_every_member():
    """tighten keeps every member of a value; a compare's bounds keep every a with a cond b."""
    rng = random.Random(11)
    vals = _values(rng)
    for v in vals:
        t = R.tighten(v)
        assert t.hi - t.lo <= v.hi - v.lo
        for x in _concrete(v, rng, 8):
            assert _member(x, t), (v, t, x)
    assert R.tighten(R.and_(R.V(0, 2, 32, 2), R.const(31))) == R.const(2)
    ops = {"lt": lambda x, y: x < y, "le": lambda x, y: x <= y, "gt": lambda x, y: x > y}
    ops.update({"ge": lambda x, y: x >= y, "eq": lambda x, y: x == y})
    for cond, f in ops.items():
        for a, b in itertools.product(vals[:40], vals[:40]):
            nv = R.meet_bounds(a, *R.refine(cond, a, b))
            for x in _concrete(a, rng, 4):
                for y in _concrete(b, rng, 4):
                    if f(x, y):
                        assert _member(x, nv), (cond, a, b, x, y, nv)


@pytest.mark.parametrize("exec_back", [False, True])
def test_lanes_atomic_data_constant_only_where_proved(exec_back):
    """An LDS atomic's data operand: 1 in the loop's lanes when written under EXEC before EXEC
    narrowed; not known when EXEC was set from an SGPR in between (lanes holding the loaded
    word may be active)."""
    g = _Blocks()
    g.vset(3, g.lds_word(g.const(0)))
    g.exec_from(g.op("cmp", "u32", (g.sget(9), g.vget(3)), cond="gt"))
    g.vset(3, g.const(1))
    if exec_back:
        g.sset(126, g.sget(10))
    g.end("jump", 1)
    m = g.op("exec", "b1")
    g.op("atomic", "u32", (g.const(0), m, g.vget(3)), space="lds", op="add", bits=32)
    g.access.append(g.ops[-1])
    g.end("end")
    data: dict = {}
    shape = {"block": (64, 1, 1), "tidig": 0, "packed": False}
    R.analyse(g.program(), 32, shape, frozenset(), True, data)
    v = data[id(g.access[-1])]
    assert (v == R.const(1)) != exec_back, v


def test_lanes_every_lane_address_and_full_exec():
    """``every``: an access's address in every lane.  v7 = lx << 2 under EXEC: in the lanes
    EXEC leaves out v7 keeps its old value (any: a loaded word), so nothing is known there --
    unless EXEC holds every lane (a group that fills its waves: 64 threads, wave32), and not
    after EXEC was narrowed."""

    def case(narrow, block=(64, 1, 1)):
        g = _Blocks()
        g.vset(7, g.lds_word(g.const(0)))
        if narrow:
            g.exec_from(g.op("cmp", "u32", (g.sget(9), g.vget(3)), cond="gt"))
        g.vset(7, g.op("shl", "u32", (g.vget(0), g.const(2))))
        g.lds_word(g.vget(7))
        g.end("end")
        every: dict = {}
        shape = {"block": block, "tidig": 0, "packed": False}
        out = R.analyse(g.program(), 32, shape, frozenset(), True, None, every)
        return out[id(g.access[-1])], every[id(g.access[-1])]

    act, ev = case(False)
    assert act.hi == 252 and ev.hi == 252  # a full EXEC: every lane is written
    act, ev = case(True)
    assert act.hi == 252 and ev.hi >= M - 3
    act, ev = case(False, block=(48, 1, 1))  # 48 threads: the second wave has 16 lanes
    assert act.hi == 47 * 4 and ev.hi >= M - 3
    # the default analysis knows nothing of EXEC's value at the start
    assert R.exec_at_start(32, {"block": (64, 1, 1), "tidig": 0, "packed": False}) == {("s", 126): R.const(M)}
    assert R.exec_at_start(64, {"block": (48, 1, 1), "tidig": 0, "packed": False}) == {}


def test_lanes_loads_read_everywhere_only_where_proved(monkeypatch):
    """WAVELIFT_CUDA_LDS=lanes: an LDS load whose address is inside the LDS in every lane reads
    in every thread and keeps the word where its mask holds (a select); aligned in its own
    lanes only, the read's address has its low bits cleared; not inside in every lane (a loaded
    word in the lanes EXEC leaves out), the load stays under its mask."""
    monkeypatch.setenv("WAVELIFT_CUDA_LDS", "lanes")

    def lines(narrow, shift, old_lx=False):
        g = _P()
        m, first = g.word_at_zero()
        old = g.vget(0) if old_lx else g.op("word", "u32", (first,), k=0)
        g.ops.append(Op("vset", "u32", (old, m), {"reg": 7}, None, 0))
        if narrow:  # EXEC = lanes where s9 > v3
            c = g.op("cmp", "u32", (g.op("sget", "u32", reg=9), g.vget(3)), cond="gt")
            b = g.v("b1")
            g.ops.append(Op("exec", "b1", (), {}, b, 0))
            bb = g.op("and", "b1", (c, b))
            g.ops.append(
                Op(
                    "sset",
                    "u32",
                    (g.op("lo32", "u32", (g.op("ballot", "u64", (bb,)),)),),
                    {"reg": 126},
                    None,
                    0,
                )
            )
        m2 = g.v("b1")
        g.ops.append(Op("exec", "b1", (), {}, m2, 0))
        x = g.op("and", "u32", (g.vget(0), g.const("u32", 63))) if shift else g.vget(0)
        g.ops.append(Op("vset", "u32", (g.op("shl", "u32", (x, g.const("u32", 2))), m2), {"reg": 7}, None, 0))
        out = g.v("u32")
        g.ops.append(Op("load", "u32", (g.vget(7), m2), {"space": "lds", "nbytes": 4, "words": 1}, out, 0))
        prog = Program(
            [Block(0, 0, instrs=[0], ops=g.ops, term=("end",))], [SimpleNamespace(encoding="VOP1")], {0: 0}, 8
        )
        return _lds_lines(_source(prog))

    full = lines(False, False)  # 64 threads in wave32: EXEC full, every lane written
    # (its mask holds in every lane: the word itself, no select)
    assert "x_ : 0u" not in full[-1] and "& ~3u" not in full[-1] and "if (" not in full[-1], full
    assert "_w[0] = (u32)((const u32*)(wl_smem" in full[-1], full
    part = lines(True, False)  # other lanes hold the loaded word in v7: not inside there
    assert "x_ : 0u" not in part[-1] and part[-1].startswith("if ("), part
    # v7 = lx in the other lanes: inside there, not aligned -- read at v7 & ~3 (v7 in its lanes)
    part = lines(True, False, old_lx=True)
    assert "x_ : 0u" in part[-1] and "& ~3u" in part[-1], part
    # the first load (address 0, under the whole EXEC of the start) reads everywhere in both
    assert all(ln.startswith("t") and "_w[0] = (u32)((const u32*)" in ln for ln in (part[0], full[0]))


def test_ldsrange_wrap_once_and_signed_min_max():
    """ldsrange.value_of's u32 add that passes 2^32 in every sum (x + a negative constant) and
    its i32 min / max with one sign on both sides (their one place: globalrange kept them apart
    before) keep an interval, holding every concrete result (i32 min / max by the signed order)."""
    rng = random.Random(135)

    def op(name, t):
        a, b = Value(1, t, False), Value(2, t, False)
        return Op(name, t, (a, b), {}, Value(3, t, False), 0), a, b

    def signed(x):
        return x - (1 << 32) if x >> 31 else x

    add, a, b = op("add", "u32")
    got = R.value_of(add, {a.id: R.V(1, 10), b.id: R.const(M)})  # (x - 1)
    assert (got.lo, got.hi) == (0, 9)
    vals = [R.V(0, 5), R.V(7, 0x7FFFFFFF, 2, 3), R.V(0x80000000, 0x80000010), R.V(M - 9, M), R.const(M)]
    for name in ("add", "min", "max"):
        t = "u32" if name == "add" else "i32"
        o, a, b = op(name, t)
        for x, y in itertools.product(vals, vals):
            got = R.value_of(o, {a.id: x, b.id: y})
            if name != "add" and (x.hi <= 0x7FFFFFFF) != (y.hi <= 0x7FFFFFFF):
                assert got == R.TOP  # (signs differ: the unsigned order is not the signed one)
                continue
            if name != "add" or x.lo + y.lo > M:  # (a sum that may or may not wrap: any value)
                assert got.hi - got.lo < M // 2, (name, x, y, got)
            f = {"min": min, "max": max}.get(name)
            for p in _concrete(x, rng, 6):
                for q in _concrete(y, rng, 6):
                    z = (p + q) & M if f is None else f(signed(p), signed(q)) & M
                    assert _member(z, got), (name, x, y, p, q, z, got)
