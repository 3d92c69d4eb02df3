"""The lean build of a dispatch run in place on a proof (WAVELIFT_CUDA_PROVED=lean, decision
0049's amendment h148) on a GPU; each test skips without CuPy or a device.  The fixture
dispatches the predicate proves run in place with the lean build and equal the NumPy backend's
lane mode; a wrong proof (a store's guess narrowed by hand: its window test fails for half the
lanes) is refused `backend.proof`, its failed stores store nothing and nothing lands; built in the
background (the default: amendment h163), the module's own build runs until the lean is there,
then the lean.  Without a GPU: test_cuda_proved_host.py."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from test_cuda_backend import _needs_gpu

import wavelift.backends.cuda as WC
from wavelift.backends.cuda import resident as R

pytestmark = pytest.mark.cuda
_LEAN_COMPILE = WC._lean_compile  # (the real one: not lean_at_once's)


@pytest.fixture(autouse=True)
def lean(monkeypatch, lean_at_once):
    """In place, the lean build named, and there from a module's first dispatch (conftest's
    lean_at_once: the background build waited for where it starts)."""
    monkeypatch.setattr(R, "HEAP_MIN", 4096)
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "proved")
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean")


def test_gpu_lean_fixture_dispatches_equal_numpy():
    """Every gfx1030 clang -O2 fixture dispatch: where it runs in place (proved), with the lean
    build, its write spans and every allocation's bytes equal the NumPy backend's lane mode
    (vadd, lds_reduce, double_math and lane_ops among them); shade 256x120 the same."""
    _needs_gpu()
    from fixture_dispatches import clang_dispatches
    from test_resident_gpu import pass_as_numpy

    from wavelift.run.execute import execute_dispatch

    ran, lean = set(), set()
    for name, mem, cfg in clang_dispatches():
        if cfg is None or not name.startswith("gfx1030/") or "-O2-" not in name:
            continue
        want_mem = copy.deepcopy(mem)
        want = execute_dispatch(want_mem, cfg, backend="numpy", mode="lane")
        got_mem = copy.deepcopy(mem)
        got = execute_dispatch(got_mem, cfg, backend="cuda", mode="lane")
        if got.stats.get("in_place") != "proved":
            continue
        assert got.refusal is None and want.refusal is None, (name, got.refusal, want.refusal)
        assert got.write_spans == want.write_spans, name
        for x in want_mem:
            assert bytes(got_mem.read(x.base, x.size)) == bytes(want_mem.read(x.base, x.size)), (name, x.name)
        ran.add(name.split(":")[1])
        if got.stats.get("build") == "lean":  # (else a slot without a proved window)
            lean.add(name.split(":")[1])
    assert lean >= {"vadd", "lds_reduce", "double_math", "lane_ops"}, (ran, lean)

    def lean_in_place(r):
        assert r.stats["in_place"] == "proved" and r.stats["build"] == "lean", r.stats

    pass_as_numpy("shade", 256, 120, lean_in_place)


def test_gpu_lean_stream_and_kept_plans_equal_numpy():
    """test_resident_gpu's chain of vadd dispatches (host writes between, kept and deferred
    in-place plans): every one lean and in place, each write span and every buffer equal to the
    NumPy backend's, the heap's map zero after each."""
    _needs_gpu()
    from test_resident_gpu import chain_as_numpy

    def lean_in_place(dev, r):
        assert r.stats["in_place"] == "proved" and r.stats["build"] == "lean", r.stats
        assert not R.map_flags(dev.memory.resident.heap.written.get()).any()

    chain_as_numpy(148, lean_in_place)


def test_gpu_lean_wrong_proof_is_refused_and_nothing_lands(monkeypatch):
    """vadd in place with the lean build, then again after a host write with its store's guess
    narrowed by hand to the first half of the output (a wrong proof, as far as the kernel can
    tell): refused `backend.proof`; the lanes whose store failed the window test stored nothing
    (the output's second half on the device as before), no heap byte outside the windows
    changed, the map zero; the output cannot be read and the next dispatch on the copies is
    refused before any launch."""
    _needs_gpu()
    from test_resident_gpu import _vadd_landed, unusable_alone_changed

    from wavelift.backends.cuda import globalrange as GR
    from wavelift.backends.cuda import runtime as RT

    dev, k, n, a, (ba, bb, bo), r = _vadd_landed()
    assert r.refusal is None and r.stats["in_place"] == "proved" and r.stats["build"] == "lean", r.stats
    res = dev.memory.resident

    def copy_of(buf):
        h = res.heap.buf.get()
        e = res.entries[dev.memory.find(buf.address)]
        return h[e.off : e.off + 4 * n].view(np.float32).copy()

    assert np.array_equal(copy_of(bo), 2 * a)
    plain = RT._guesses

    def narrowed(m, hints, win, hb=None, offs=None):
        gb, gl, go = plain(m, hints, win, hb, offs)
        gl = gl.copy()
        acc = GR.global_accesses(RT._proof_input(m, cfg_of[0])[0])
        (j,) = [j for j, op in enumerate(acc) if op.name == "store"]
        gl[j] = 2 * n  # (the window's first 2n bytes: half of the n floats)
        return gb, gl, go

    cfg_of = [None]
    real_run = RT.Runtime.run

    def run(rt):
        cfg_of[0] = rt.cfg
        return real_run(rt)

    monkeypatch.setattr(RT.Runtime, "run", run)
    monkeypatch.setattr(RT, "_guesses", narrowed)
    dev.memory.write(ba.address, np.ones(n, np.float32))  # (the full path again: a host write)
    heap0 = res.heap.buf.get()
    r = k.launch(groups=(n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(n)])
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    got = copy_of(bo)
    assert np.array_equal(got[: n // 2], 1 + a[: n // 2])  # (in its guess: stored, in place)
    assert np.array_equal(got[n // 2 :], 2 * a[n // 2 :])  # (outside: stored nothing)
    broken = unusable_alone_changed(res, heap0)
    assert dev.memory.find(bo.address).base in {x.base for x, _ in broken}
    assert not R.map_flags(res.heap.written.get()).any()
    with pytest.raises(Exception, match="backend.proof"):
        dev.download(bo, np.float32)
    monkeypatch.setattr(RT, "_guesses", plain)
    r = k.launch(groups=(n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(n)])
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal


def test_gpu_lean_built_in_the_background_takes_over_from_the_own_build(monkeypatch, tmp_path):
    """The default (WAVELIFT_CUDA_PROVED unset), the lean build not waited for: a fresh module
    (an empty module cache and disk cache) runs its first vadd in place with its own build (no
    `build` in the stats) while the lean one is built in the background; once that finished
    (wait_lean), every later launch -- the plan kept on the own build dropped, then kept and
    deferred lean runs -- runs lean, each result's write spans and the output equal to NumPy's
    a + b, the heap map zero after each."""
    _needs_gpu()
    from test_resident_gpu import _vadd

    import wavelift
    from wavelift.run import execute

    monkeypatch.setattr(WC, "_lean_compile", _LEAN_COMPILE)  # (not lean_at_once's)
    monkeypatch.delenv("WAVELIFT_CUDA_PROVED")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    monkeypatch.setattr(execute, "_CACHE", {})
    n = 1 << 16
    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = _vadd(dev)
    rng = np.random.default_rng(163)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    ba, bb, bo = dev.upload(a), dev.upload(b), dev.alloc(4 * n)

    def launch():
        return k.launch(groups=(n // 256,), block=(256,), args=[ba, bb, bo, np.uint32(n)])

    def landed(r, build):
        assert r.refusal is None and r.stats["in_place"] == "proved", (r.refusal, r.stats)
        assert r.stats.get("build") == build, r.stats
        assert r.write_spans == [(bo.address, 4 * n)]
        assert not R.map_flags(dev.memory.resident.heap.written.get()).any()

    landed(launch(), None)  # (its lean build started, not there: NVRTC takes longer than this)
    rs = [launch() for _ in range(2)]  # (a plan kept on the own build, or the lean if it came)
    assert WC.wait_lean(300)
    later = [launch() for _ in range(6)]
    for r in rs:
        landed(r, r.stats.get("build"))
    for r in later:
        landed(r, "lean")
    assert np.array_equal(dev.download(bo, np.float32), a + b)
    dev.memory.write(ba.address, b)  # (a host write: the full path, lean)
    landed(launch(), "lean")
    assert np.array_equal(dev.download(bo, np.float32), b + b)
