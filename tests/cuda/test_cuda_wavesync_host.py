"""Wave syncs by memory (WAVELIFT_CUDA_WAVESYNC=spaces / commute; decision 0047's amendment
h101): a wave sync (``__syncwarp``, wave64's named barrier) stands between two accesses of one
memory where either writes, and -- with the setting -- none is placed for an access of the other
memory (the LDS is shared memory, global and scratch are the arena's or global buffers: no LDS
address reaches them); with ``commute`` none between two atomic adds / subs whose values nobody
reads.  Checked without a GPU on the generated source: random one-block programs of
LDS and global loads, stores and atomics (wave32 and wave64), every conflicting pair of accesses
has a sync between them, and each sync is placed only where the rule asks for one (both
settings: unset keeps every access ordered after every pending one); lds.cl's histogram loop
keeps no sync with the setting (two without); the module entry's name changes with it.  With a
GPU (``-m cuda``): lds.cl's kernels with the setting equal their NumPy references."""

from __future__ import annotations

import pathlib
import random
import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
for p in (ROOT / "bench", ROOT / "tests" / "cuda"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from wavelift.backends.cuda.codegen import P_BLOCK, P_GFX11, P_LDS, P_PARTIAL_TG, P_TIDIG, generate  # noqa: E402
from wavelift.ir.program import Block, Op, Program, Value  # noqa: E402

SETTING = "WAVELIFT_CUDA_WAVESYNC"
# one source line per access (non-uniform addresses: no mirror, no preload; a span member's
# load: its direct read, the search path on the next line)
ACCESS = re.compile(r"wl_smem \+|wl_gload\(|wl_gstore\(|wl_res\(|wl_gread_at\(|wl_gwrite_at\(")
SYNC = re.compile(r"__syncwarp\(\);|bar\.sync %0, 64;")


class _Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.ops: list = []
        self.n = 0
        self.acc: list[tuple[str, str]] = []  # (memory, "load" | "store" | "rmw") in order
        # (each value read lands in a register of its own: none is dead)

    def v(self, t, uniform=False):
        self.n += 1
        return Value(self.n, t, uniform)

    def op(self, name, t, args=(), out_t=None, **attrs):
        out = self.v(out_t or t)
        self.ops.append(Op(name, t, tuple(args), dict(attrs), out, 0))
        return out

    def vget(self, r):
        return self.op("vget", "u32", reg=r)

    def program(self, n: int) -> Program:
        m = self.v("b1")
        self.ops.append(Op("exec", "b1", (), {}, m, 0))
        lds = self.op("shl", "u32", (self.vget(0), self.op("const", "u32", value=2)))  # lx * 4
        glob = self.op("pack64", "u64", (self.vget(1), self.vget(2)))
        data = self.vget(3)
        for _ in range(n):
            sp = self.r.choice(["lds", "global"])
            a = lds if sp == "lds" else glob
            k = self.r.choice(["load", "store", "rmw", "add"])
            if k == "load":
                out = self.v("u32")
                self.ops.append(Op("load", "u32", (a, m), {"space": sp, "nbytes": 4, "words": 1}, out, 0))
                w = self.op("word", "u32", (out,), k=0)
                self.ops.append(Op("vset", "u32", (w, m), {"reg": 8 + len(self.acc)}, None, 0))
            elif k == "store":
                self.ops.append(Op("store", "u32", (a, m, data), {"space": sp, "nbytes": 4}, None, 0))
            else:  # an atomic add: its value read (rmw) or not (add)
                out = self.v("u32")
                how = self.r.choice(["add", "sub"]) if k == "add" else self.r.choice(["add", "umax", "swap"])
                self.ops.append(
                    Op("atomic", "u32", (a, m, data), {"space": sp, "op": how, "bits": 32}, out, 0)
                )
                if k == "rmw":
                    self.ops.append(Op("vset", "u32", (out, m), {"reg": 8 + len(self.acc)}, None, 0))
            self.acc.append((sp, k))
        return Program(
            [Block(0, 0, instrs=[0], ops=self.ops, term=("end",))],
            [SimpleNamespace(encoding="VOP1")],
            {0: 0},
            8,
        )


def _source(prog, wave):
    vals = (
        (P_BLOCK, wave),
        (P_BLOCK + 1, 1),
        (P_BLOCK + 2, 1),
        (P_TIDIG, 0),
        (P_GFX11, 0),
        (P_PARTIAL_TG, 0),
    )
    return generate(prog, wave, "lane", 0, 0, (*vals, (P_LDS, 4096)))[0]


def _events(src: str, n: int) -> list[int]:
    """-> for each of the n accesses (in order), the number of wave syncs placed before it."""
    body = src[src.index("\nB0: {") :]
    body = body[: body.index("\n}\n")]
    out, syncs = [], 0
    for ln in body.splitlines():
        if SYNC.search(ln):
            syncs += 1
        elif ACCESS.search(ln):
            out.append(syncs)
    assert len(out) == n, (len(out), n)
    return out


def _conflict(a, b, commute: bool) -> bool:
    """Two accesses of one memory that a wave sync must order: not both loads, and (commute)
    not both atomic adds / subs whose values nobody reads."""
    return a[0] == b[0] and {a[1], b[1]} not in (({"load"}, {"add"}) if commute else ({"load"},))


@pytest.fixture(autouse=True)
def _no_passes(monkeypatch):
    monkeypatch.setenv("WAVELIFT_CUDA_PASSES", "off")  # the ops as built here
    monkeypatch.setenv("WAVELIFT_CUDA_LDS", "direct")


@pytest.mark.parametrize("wave", [32, 64])
@pytest.mark.parametrize("how", [None, "spaces", "commute"])
def test_syncs_order_every_conflict_and_only_those(monkeypatch, wave, how):
    """Every two accesses of one memory with a write among them have a sync between them; a
    sync is placed before an access only where an access since the last sync conflicts with it
    (with the setting: of the same memory; unset: any memory, as before)."""
    if how:
        monkeypatch.setenv(SETTING, how)
    else:
        monkeypatch.delenv(SETTING, raising=False)
    mixed_pairs = 0
    for seed in range(40):
        g = _Gen(seed * 7 + wave)
        prog = g.program(g.r.randrange(2, 12))
        acc = g.acc
        before = _events(_source(prog, wave), len(acc))
        for j in range(len(acc)):
            for i in range(j):
                if _conflict(acc[i], acc[j], how == "commute"):
                    assert before[i] < before[j], (seed, acc, before, i, j)
        # where the rule places them: before j iff an access since the last sync asks for one
        if how:
            ask = lambda x, y: _conflict(x, y, how == "commute")  # noqa: E731
        else:  # as before: any two accesses, one not a load
            ask = lambda x, y: "load" != x[1] or "load" != y[1]  # noqa: E731
        want, start, n = [], 0, 0
        for j in range(len(acc)):
            if any(ask(acc[i], acc[j]) for i in range(start, j)):
                start, n = j, n + 1
            want.append(n)
        assert before == want, (seed, acc, before, want)
        mixed = sum(1 for i in range(1, len(acc)) if acc[i][0] != acc[i - 1][0])
        mixed_pairs += mixed
    assert mixed_pairs > 0  # (the programs mix the memories)


def test_the_setting_drops_syncs_between_memories(monkeypatch):
    """An LDS store then a global load then an LDS load: unset, one sync before the global load
    (the store pending; the LDS load then follows only a load); with the setting one before the
    LDS load (the LDS store still pending there), none before the global load."""
    g = _Gen(0)
    m = g.v("b1")
    g.ops.append(Op("exec", "b1", (), {}, m, 0))
    lds = g.op("shl", "u32", (g.vget(0), g.op("const", "u32", value=2)))
    glob = g.op("pack64", "u64", (g.vget(1), g.vget(2)))
    g.ops.append(Op("store", "u32", (lds, m, g.vget(3)), {"space": "lds", "nbytes": 4}, None, 0))
    for sp, a in (("global", glob), ("lds", lds)):
        out = g.v("u32")
        g.ops.append(Op("load", "u32", (a, m), {"space": sp, "nbytes": 4, "words": 1}, out, 0))
        g.ops.append(
            Op(
                "vset",
                "u32",
                (g.op("word", "u32", (out,), k=0), m),
                {"reg": 5 if sp == "lds" else 6},
                None,
                0,
            )
        )
    prog = Program(
        [Block(0, 0, instrs=[0], ops=g.ops, term=("end",))], [SimpleNamespace(encoding="VOP1")], {0: 0}, 8
    )
    monkeypatch.delenv(SETTING, raising=False)
    assert _events(_source(prog, 32), 3) == [0, 1, 1]
    monkeypatch.setenv(SETTING, "spaces")
    assert _events(_source(prog, 32), 3) == [0, 0, 1]


def _histogram_loop(monkeypatch, setting):
    import gpu_check as G
    from test_cuda_backend import translate_dispatch

    from wavelift.backends.cuda import codegen as C

    monkeypatch.delenv("WAVELIFT_CUDA_PASSES", raising=False)
    monkeypatch.setenv("WAVELIFT_CUDA_LDS", "lanes")
    if setting:
        monkeypatch.setenv(SETTING, setting)
    else:
        monkeypatch.delenv(SETTING, raising=False)
    mem, cfg, *_ = G.lds_dispatch("histogram", small=True)
    prog, base = translate_dispatch(mem, cfg)
    src = C.generate(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, C.baked_params(cfg), 1)[0]
    # the loop: the block holding the LDS atomic (wl_atomic32 on wl_smem)
    blocks = re.findall(r"\nB\d+: \{\n.*?\n\}", src, re.S)
    (loop,) = [b for b in blocks if "wl_atomic32((u32*)(wl_smem" in b]
    return loop


def test_histogram_loop_syncs(monkeypatch):
    """lds.cl's histogram loop (a global load, an LDS atomic): two syncs unset; `spaces` one
    (the LDS atomic after the last iteration's; none for the global load: the memories differ,
    and the barrier before the loop orders what came before it); `commute` none (the atomic's
    value is read by nobody)."""
    assert len(SYNC.findall(_histogram_loop(monkeypatch, None))) == 2
    assert len(SYNC.findall(_histogram_loop(monkeypatch, "spaces"))) == 1
    assert len(SYNC.findall(_histogram_loop(monkeypatch, "commute"))) == 0


@pytest.mark.cuda
@pytest.mark.parametrize("how", ["spaces", "commute"])
@pytest.mark.parametrize("mode", ["lane", "wave"])
@pytest.mark.parametrize("name", ["histogram", "matmul16", "reduce1024", "scan256", "stencil5"])
def test_lds_kernels_with_the_setting_on_cuda(name, mode, how, monkeypatch, tmp_path):
    import gpu_check as G
    from test_cuda_backend import _needs_gpu

    from wavelift.run.execute import execute_dispatch

    _needs_gpu()
    monkeypatch.delenv("WAVELIFT_CUDA_PASSES", raising=False)
    monkeypatch.setenv("WAVELIFT_CUDA_LDS", "lanes")
    monkeypatch.setenv(SETTING, how)
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    mem, cfg, out, nbytes, native = G.lds_dispatch(name, small=True)
    r = execute_dispatch(mem, cfg, backend="cuda", mode=mode, cache={})
    assert r.refusal is None, r.refusal
    got = np.frombuffer(mem.read(out, nbytes), np.uint32)
    assert np.array_equal(got, native["want"]), name
