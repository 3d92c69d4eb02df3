"""One window test per block for global accesses at known offsets from one base (decision 0047,
amendment "global accesses at known offsets from one base, one window test";
backends/cuda/spans.py, kernel.h's wl_span): the grouped form appears only for accesses ``root + c`` of one block with a guess slot (not for another root, a lone
access, an offset the access's alignment rules out, or with the setting off), and, compiled for
the host with g++, the group's test and its members' direct accesses -- with the per-access
path wherever the test fails -- read, write, mark and escape exactly as the window arithmetic
says, whatever the leader's guess (right, stale, none, a window too short), the root's
alignment or its wrapping past 2^64.  No GPU: source text, g++, and NVRTC to PTX where
installed."""

from __future__ import annotations

import ctypes
import pathlib
import sys
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
for p in (ROOT / "bench", HERE):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from test_cuda_memory_host import ONE_LANE, _layout, build_memory_lib, check_access, check_memory, p, u64  # noqa: E402

from wavelift.backends.cuda import spans  # noqa: E402
from wavelift.backends.cuda.codegen import generate  # noqa: E402
from wavelift.ir.program import Block, Op, Program, Value  # noqa: E402

M64 = (1 << 64) - 1


# ------------------------------------------------------------------ the forms in the source
class _P:
    """A one-block program of global loads and stores at addresses the ops build."""

    def __init__(self):
        self.ops: list = []
        self.n = 0
        self.m = self.v("b1")
        self.ops.append(Op("exec", "b1", (), {}, self.m, 0))

    def v(self, t, uniform=False):
        self.n += 1
        return Value(self.n, t, uniform)

    def op(self, name, t, args=(), **attrs):
        out = self.v(t, False)
        self.ops.append(Op(name, t, tuple(args), dict(attrs), out, 0))
        return out

    def const(self, t, value):
        return self.op("const", t, value=value)

    def pair(self, r):
        """A per-lane u64 address from VGPRs r, r+1."""
        lo, hi = (self.v("u32") for _ in range(2))
        self.ops.append(Op("vget", "u32", (), {"reg": r}, lo, 0))
        self.ops.append(Op("vget", "u32", (), {"reg": r + 1}, hi, 0))
        return self.op("pack64", "u64", (lo, hi))

    def at(self, root, c):
        return self.op("add", "u64", (root, self.const("u64", c & M64))) if c else root

    def load(self, addr, nbytes=4):
        out = self.v("u32")
        words = max(nbytes // 4, 1)
        self.ops.append(
            Op("load", "u32", (addr, self.m), {"space": "global", "nbytes": nbytes, "words": words}, out, 0)
        )
        return self.op("word", "u32", (out,), k=0)

    def store(self, addr, w, nbytes=4):
        self.ops.append(Op("store", "u32", (addr, self.m, w), {"space": "global", "nbytes": nbytes}, None, 0))

    def program(self, keep):
        for k, w in enumerate(keep):
            self.ops.append(Op("vset", "u32", (w, self.m), {"reg": 20 + k}, None, 0))
        return Program(
            [Block(0, 0, instrs=[0], ops=self.ops, term=("end",))],
            [SimpleNamespace(encoding="VOP1")],
            {0: 0},
            8,
        )


def _source(prog):
    return generate(prog, 32, "lane", 0, 0)[0]


def _block(src):
    return src[src.index("B0: {") :]


@pytest.fixture(autouse=True)
def _settings(monkeypatch):
    monkeypatch.setenv("WAVELIFT_CUDA_PASSES", "off")  # the ops as built here
    monkeypatch.setenv("WAVELIFT_CUDA_SPANS", "block")


def test_accesses_at_offsets_from_one_base_share_one_test():
    g = _P()
    r = g.pair(2)
    a, b = g.load(g.at(r, 0)), g.load(g.at(r, 16))
    g.store(g.at(r, 8), a)
    c = g.load(g.at(r, -4))
    src = _block(_source(g.program([a, b, c])))
    assert src.count("wl_span(") == 1, src
    # the span [root - 4, root + 20), k = 24 - 4 + 1 (the first member's 4 bytes), root 4-aligned,
    # the first member's slot 0
    assert "wl_span(C, (u64)(t" in src and "(u64)(-4ll), 21ull, 0u, 4ull, &gs0_b)" in src, src
    assert src.count("wl_gread_at(gs0_b + (") == 3 and src.count("wl_gwrite_at(C, gs0_b + (8ll)") == 1
    # where the test fails each keeps the per-access path
    assert src.count("wl_gload_(C,") == 3 and src.count("wl_gstore_(C,") == 1
    assert "wl_gload(C," not in src and "wl_gstore(C," not in src


def test_other_roots_lone_and_misaligned_accesses_keep_their_own_test():
    g = _P()
    r, s = g.pair(2), g.pair(4)
    a = g.load(g.at(r, 0))
    b = g.load(g.at(r, 6))  # 4 bytes at root + 6: never aligned with an aligned root
    c = g.load(g.at(s, 0))  # another root, alone
    d = g.load(g.at(r, 2), 2)  # 2 bytes at root + 2: aligned where root is
    src = _block(_source(g.program([a, b, c, d])))
    assert src.count("wl_span(") == 1
    assert "(u64)(0ll), 1ull, 0u, 4ull, &gs0_b)" in src, src  # span [0, 4): a and d
    assert src.count("wl_gread_at(gs0_b") == 2
    assert src.count("wl_gload(C,") == 2  # b and c: the per-access form


def test_wide_span_is_not_grouped():
    g = _P()
    r = g.pair(2)
    a, b = g.load(g.at(r, 0)), g.load(g.at(r, spans.MAX_SPAN))
    src = _block(_source(g.program([a, b])))
    assert "wl_span(" not in src and src.count("wl_gload(C,") == 2


@pytest.mark.parametrize("value", ["access", None])
def test_setting_access_keeps_a_test_per_access(monkeypatch, value):
    """`access` (A/B runs): a test per access; unset: the grouped form, the default since it ran
    on a GPU equal to NumPy (bench/README, session 42)."""
    if value is None:
        monkeypatch.delenv("WAVELIFT_CUDA_SPANS", raising=False)
    else:
        monkeypatch.setenv("WAVELIFT_CUDA_SPANS", value)
    g = _P()
    r = g.pair(2)
    a, b = g.load(g.at(r, 0)), g.load(g.at(r, 4))
    src = _block(_source(g.program([a, b])))
    if value is None:
        assert src.count("wl_span(") == 1 and src.count("wl_gload_(C,") == 2, src
    else:
        assert "wl_span(" not in src and src.count("wl_gload(C,") == 2


def test_base_and_offset_follows_constant_adds():
    g = _P()
    r = g.pair(2)
    x = g.at(g.at(g.at(r, 16), -8), 1 << 40)
    defs = {op.out.id: op for op in g.ops if op.out is not None}
    root, c = spans.base_and_offset(x, defs)
    assert root is r and c == 8 + (1 << 40)
    y = g.at(r, -12)
    defs = {op.out.id: op for op in g.ops if op.out is not None}
    root, c = spans.base_and_offset(y, defs)
    assert root is r and c == -12


def test_grouped_module_compiles():
    """The grouped form through NVRTC to PTX (where installed)."""
    from test_cuda_backend import _needs_nvrtc

    from wavelift.backends.cuda.compile import check_source

    _needs_nvrtc()
    g = _P()
    r = g.pair(2)
    a, b = g.load(g.at(r, 0), 1), g.load(g.at(r, 4), 16)
    g.store(g.at(r, 2), a, 2)
    check_source(_source(g.program([a, b])), "sm_90")


def test_reduce1024_groups_its_loads(monkeypatch):
    """lds.cl's reduce1024 reads p[l], p[l + 256] (one base) and p[l + 512], p[l + 768]
    (another pair of registers): two groups of two."""
    monkeypatch.delenv("WAVELIFT_CUDA_PASSES", raising=False)
    import gpu_check as G
    from test_cuda_backend import translate_dispatch

    from wavelift.backends.cuda.codegen import baked_params

    mem, cfg, *_ = G.lds_dispatch("reduce1024", small=True)
    prog, base = translate_dispatch(mem, cfg)
    src = generate(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, baked_params(cfg))[0]
    assert src.count("wl_span(C") == 2 and src.count("wl_gread_at(gs") == 4


# ------------------------------------------------------------------ the bytes, on the host
DRIVER = r"""
/* one group: members root + c[i] of nb[i] bytes (store[i]: a store of data[i]); the test
   against slot 0's guess, then each member as codegen lowers it */
extern "C" int wl_group(const u64* ws, const u64* we, const i64* wo, u32 n,
                        const u64* gb, const u64* gl, const i64* go, u8* arena, u8* written,
                        u64 root, u64 lo, u64 k, u64 al, const i64* c, const u32* nb,
                        const u32* store, const u32* data, long count, u32* out, u32* escaped) {
  WL_TEST_SETUP();
  u8* gs_b; const bool gs = wl_span(C, root, lo, k, 0u, al, &gs_b);
  for (long i = 0; i < count; i++) {
    const u64 before = stats[2];
    const u64 addr = root + (u64)c[i];
    u32 w[4] = {0u, 0u, 0u, 0u};
    if (store[i]) { if (gs) wl_gwrite_at(C, gs_b + c[i], nb[i], data + 4 * i); else wl_gstore_(C, addr, nb[i], data + 4 * i, 7u, 1u + (u32)i, 0u); }
    else { if (gs & true) wl_gread_at(gs_b + c[i], nb[i], w); if (true & !gs) wl_gload_(C, addr, nb[i], w, 4u, 7u, 1u + (u32)i, 0u, true); }
    for (int j = 0; j < 4; j++) out[4 * i + j] = w[j];
    escaped[i] = stats[2] != before;
  }
  return gs;
}
"""


# the byte map, and WL_MAP_BITS 1 (WAVELIFT_CUDA_MAP=bits: wl_gwrite_at marks bits, one lane)
@pytest.fixture(scope="module", params=["", ONE_LANE], ids=["bytes", "bits"])
def spanlib(tmp_path_factory, request):
    lib = build_memory_lib(tmp_path_factory, "spans", DRIVER, request.param)
    lib.map_bits = request.param is ONE_LANE
    return lib


@pytest.mark.parametrize("seed", range(4))
def test_group_reads_writes_and_escapes_exactly(spanlib, seed):
    rng = np.random.default_rng(seed)
    starts, ends, offs, size = _layout(rng, 12)
    arena = rng.integers(0, 256, size + 8, dtype=np.uint8)
    ref = arena.copy()
    written = np.zeros(size + 8, np.uint8)
    ref_written = written.copy()
    ws, we, wo = u64(starts), u64(ends), np.asarray(offs, np.int64)
    held = 0
    for _ in range(400):
        # a group: 2-5 members, sizes as spans.find admits them, offsets multiples of each
        # member's alignment, around a root inside a window, near one, or wrapping past 2^64
        count = int(rng.integers(2, 6))
        nb = [int(rng.choice([1, 2, 4, 8, 12, 16])) for _ in range(count)]
        c = [int(rng.integers(-12, 40)) // min(n, 4) * min(n, 4) for n in nb]
        k = int(rng.integers(0, len(starts)))
        r = rng.random()
        if r < 0.7:
            root = starts[k] + int(rng.integers(-8, ends[k] - starts[k] + 8))
        elif r < 0.85:
            root = int(rng.integers(0, 24)) - 12  # wraps: around address 0, window 0's start
        else:
            root = int(rng.integers(0, 1 << 63))
        root &= M64
        if rng.random() < 0.6:
            root &= ~(max(min(n, 4) for n in nb) - 1)
        lo = min(c)
        need = max(ci + n for ci, n in zip(c, nb)) - lo
        al = max(min(n, 4) for n in nb)
        # the leader (member 0)'s guess: the window its address is in, another one, or none
        gb, gl, go = np.zeros(64, np.uint64), np.zeros(64, np.uint64), np.zeros(64, np.int64)
        lead = (root + c[0]) & M64
        hit = next((j for j, (s, e) in enumerate(zip(starts, ends)) if s <= lead < e), None)
        q = rng.random()
        j = hit if (q < 0.75 and hit is not None) else int(rng.integers(0, len(starts))) if q < 0.9 else None
        if j is not None and ends[j] - starts[j] >= nb[0]:
            gb[0], gl[0], go[0] = starts[j], ends[j] - starts[j] - nb[0] + 1, offs[j]
        store = (rng.random(count) < 0.4).astype(np.uint32)
        data = rng.integers(0, 1 << 32, (count, 4), dtype=np.uint64).astype(np.uint32)
        out = np.zeros((count, 4), np.uint32)
        escaped = np.zeros(count, np.uint32)
        C, NB = np.asarray(c, np.int64), np.asarray(nb, np.uint32)
        gs = spanlib.wl_group(
            p(ws), p(we), p(wo), ctypes.c_uint(len(starts)), p(gb), p(gl), p(go), p(arena), p(written),
            ctypes.c_uint64(root), ctypes.c_uint64(lo & M64), ctypes.c_uint64(need - nb[0] + 1),
            ctypes.c_uint64(al), p(C), p(NB), p(store), p(data), ctypes.c_long(count), p(out), p(escaped),
        )  # fmt: skip
        # the test holds exactly where the span lies inside the guessed window and root is aligned
        want = (
            gl[0] != 0
            and root % al == 0
            and int(gb[0]) <= ((root + lo) & M64)
            and ((root + lo) & M64) + need <= int(gb[0]) + int(gl[0]) + nb[0] - 1
        )
        assert bool(gs) == want, (hex(root), c, nb, gb[0], gl[0])
        held += bool(gs)
        for i in range(count):
            a = (root + c[i]) & M64
            check_access(
                a, nb[i], store[i], data[i], out[i], escaped[i], (starts, ends, offs), ref, ref_written
            )
        check_memory(spanlib, arena, ref, written, ref_written, size)
    assert 40 <= held <= 360  # both paths taken many times


# ------------------------------------------------------------------ on a GPU
@pytest.mark.cuda
@pytest.mark.parametrize(
    "pattern",
    [
        "aco/image_blur-w32",
        "aco/image_blur-w64",
        "stack-O2-w32-flat:spill",
        "stack-O2-w64-mubuf:spill",
        "math-O2-w32-flat:double_math",
    ],
)
def test_gpu_grouped_accesses_match_numpy(pattern, monkeypatch):
    """Fixture dispatches whose modules have groups, twice from one cache: the first dispatch has
    no window guesses (every group test fails: the per-access path), the second has them (the
    group tests hold: the direct members); both give NumPy lane mode's refusal, escapes, write
    spans, instruction count and memory."""
    import copy

    from test_cuda_backend import _compare, _dispatches, _needs_gpu

    from wavelift.run.execute import execute_dispatch

    monkeypatch.delenv("WAVELIFT_CUDA_PASSES", raising=False)
    _needs_gpu()
    hits = [d for d in _dispatches() if pattern in d[0]][:1]
    if not hits:
        pytest.skip(f"no fixture named like {pattern}")
    for name, mem, cfg in hits:
        m1 = copy.deepcopy(mem)
        r1 = execute_dispatch(m1, cfg, backend="numpy", mode="lane", cache={})
        cache: dict = {}
        for rnd in range(2):
            m2 = copy.deepcopy(mem)
            r2 = execute_dispatch(m2, cfg, backend="cuda", mode="lane", cache=cache)
            c1 = r1.refusal.code if r1.refusal else None
            c2 = r2.refusal.code if r2.refusal else None
            assert c1 == c2, (name, rnd, r1.refusal, r2.refusal)
            assert r1.stats["escapes"] == r2.stats["escapes"], (name, rnd)
            if c1 is None:
                assert r1.write_spans == r2.write_spans, (name, rnd)
                assert r1.stats["instructions"] == r2.stats["instructions"], (name, rnd)
                assert not _compare(m1, m2), (name, rnd, _compare(m1, m2)[:3])
