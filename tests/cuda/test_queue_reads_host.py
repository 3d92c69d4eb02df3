"""Host reads amid a queue of deferred in-place launches (decision 0049's amendment h165), without
a GPU (the stand-in CuPy and test_inplace_host's Player, which plays each launch on the NumPy
backend in lane mode): a read of guest bytes reads the queue (Resident.flush: a stream sync on a
GPU) only where a queued launch, or a replay of one, may write them -- the lean build's windows it
can store into, the module's own build's every window (Resident.queue, InPlace.note) -- so a
stream whose launches read their kernel arguments through a window (lds.cl's stencil: the
driver's Device.put reads the kernarg slot each launch to skip rewriting equal bytes) is not
drained by those reads, while a read of what a queued launch writes still waits for it, a failed
proof among them is still found and refused, and a host write or Allocation.data still reads the
whole queue."""

from __future__ import annotations

import copy
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "bench"))
import standin_cupy as S  # noqa: E402
from test_cuda_proved_host import FlaggingLean, LeanPlayer, StrayPlayer, _generated  # noqa: E402
from test_inplace_host import _same_memory, rig  # noqa: E402
from test_unrefusable_host import _vadd  # noqa: E402

from wavelift.backends.cuda import resident as R  # noqa: E402
from wavelift.backends.cuda import runtime as RT  # noqa: E402
from wavelift.errors import Refused  # noqa: E402
from wavelift.run import execute as X  # noqa: E402
from wavelift.run.execute import DeferredResult, execute_dispatch  # noqa: E402

DEPTH = 4  # (DEFER_DEPTH for these tests: a full queue reads its oldest two)


@pytest.fixture(autouse=True)
def in_place(monkeypatch):
    """In place on the heap, deferred, and each lean build there at once, as one read from the
    disk cache is (test_cuda_proved_host's: the LeanPlayer plays it)."""
    import wavelift.backends.cuda as WC

    monkeypatch.setattr(WC, "_lean_compile", lambda key, src, arch, use_disk, then: (b"lean", 0.0, "disk"))
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "proved")
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on")
    monkeypatch.setattr(R, "DEFER_DEPTH", DEPTH)


@pytest.fixture(scope="module")
def vadd():
    mem, cfg = _vadd(256)
    return mem, cfg, _generated(mem, cfg)[2]


def _build(monkeypatch, build: str) -> None:
    """The build an in-place dispatch launches, pinned: ``lean`` (WAVELIFT_CUDA_PROVED=lean) or
    ``own`` (the module's own build: any other value)."""
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", build)


def _flushes(monkeypatch) -> list:
    """Resident.flush's calls, each as (front, queued launches then)."""
    got: list = []
    real = R.Resident.flush

    def flush(self, front=0):
        got.append((front, len(self.pending)))
        return real(self, front)

    monkeypatch.setattr(R.Resident, "flush", flush)
    return got


def _queued(mem, cfg, cache, n: int) -> list:
    return [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(n)]


def _full_queue_lengths(n: int) -> list:
    """The queue's length after each of ``n`` deferred launches where nothing else reads it: a
    launch filling it (DEPTH) reads its oldest half."""
    out, k = [], 0
    for _ in range(n):
        k += 1
        if k >= DEPTH:
            k -= DEPTH // 2
        out.append(k)
    return out


def _rigged(monkeypatch, vadd, player):
    """vadd's memory copied and rigged (``rig``) with ``player`` (LeanPlayer, FlaggingLean, ...)
    over its slots: (memory, config, the rig, a fresh module cache)."""
    mem0, cfg, slots = vadd
    mem = copy.deepcopy(mem0)
    fm = rig(monkeypatch, mem, cfg, lambda p, model, c: player(p, model, c, slots))
    return mem, cfg, fm, {}


# ---- (1) the stencil's stream: its kernargs' reads do not drain the queue ---------------------


@pytest.mark.parametrize("build", ["lean", "own"])
def test_a_stencil_stream_is_not_drained_by_its_kernarg_reads(monkeypatch, build):
    """lds.cl's 5x5 stencil (the bench's stencil5 pass, 40x21 here) launched through a Device as
    bench_resident.py does: its program reads its kernel arguments through a window, and each
    launch's Device.put reads the kernarg slot back (GuestMemory.read -> Resident.pull).  With
    the lean build, which cannot store into that window, those reads read nothing of the queue:
    it fills to DEFER_DEPTH and only a full queue's oldest half is read (never the whole queue),
    as with no read at all; every result's write spans are NumPy lane mode's, the output NumPy's
    (the Player's model) and lds_case's own reference.  Fails with every pull reading the queue
    (before h165) for ``lean``.  The module's own build may store into any of its windows (h157),
    the kernargs' too, so there each launch reads the queue (one queued at a time): the full
    path's put reads the kernargs back, and since session 56 the driver's kept launch (which
    makes no put: the packet, with no device copy, kept by its bytes) is not taken while a queued
    in-place launch may store into them (Resident.may_store) -- with it taken, the own build's
    queue filled as the lean build's and a run storing into its kernargs would have gone unseen
    by the launches queued after it."""
    from gpu_check import lds_case

    import wavelift
    from wavelift.backends import cuda

    _build(monkeypatch, build)
    monkeypatch.setitem(sys.modules, "cupy", S.fake_cupy())
    monkeypatch.setattr(R, "_OPS", None)
    monkeypatch.setattr(cuda, "available", lambda: True)
    monkeypatch.setattr(RT, "_UNREFUSABLE", {})
    monkeypatch.setattr(X, "_CACHE", {})
    made: list = []

    def build_module(key, program, config, mode, arch=None, use_disk=True, base_address=None):
        # (the Player's model: the Device's memory as the first launch finds it)
        slots = cuda.module_source(program, config, base_address=base_address)[1]
        made.append(LeanPlayer(program, copy.deepcopy(dev.memory), config, slots))
        return made[-1]

    monkeypatch.setattr(cuda, "build_module", build_module)
    c = lds_case("stencil5", small=True)
    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = dev.load_code_object(str(ROOT / "bench" / "kernels" / "lds-gfx1030-O2-w32.hsaco")).kernel("stencil5")
    bufs = [dev.upload(a) for a in c["inputs"]]
    out = dev.upload(np.zeros(c["out_n"], np.uint32))
    args = [*bufs, out, *c["scalars"]]
    rs = [k.launch(groups=c["groups"], block=c["block"], args=args) for _ in range(2)]  # (full, kept)
    res = dev.memory.resident
    assert not res.pending
    flushes = _flushes(monkeypatch)
    d0, lens = X.DEFERRED[0], []
    for _ in range(12):
        rs.append(k.launch(groups=c["groups"], block=c["block"], args=args))
        lens.append(len(res.pending))
    (fm,) = made
    assert X.DEFERRED[0] - d0 == 12  # (every launch after the kept one deferred)
    # (the kernel arguments do lie in a window: the reads went to a device copy)
    ka = next(x for x in dev.memory if x.name.startswith("kernargs"))
    assert ka in res.entries and any(w.address == ka.base for w in rs[0].windows)
    if build == "lean":
        assert lens == _full_queue_lengths(12), lens
        assert flushes and all(f == (DEPTH // 2, DEPTH) for f in flushes), flushes
    else:
        assert lens == [1] * 12 and flushes == [(0, 1)] * 11, (lens, flushes)
    for r in rs:
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
        assert r.stats.get("build") == ("lean" if build == "lean" else None)
        assert r.write_spans == fm.spans
    assert np.array_equal(dev.download(out, np.uint32), c["want"])
    assert not res.pending  # (the output's read read the queue: its launches write it)
    _same_memory(dev.memory, fm.model)


# ---- (2, 3) a read of what a queued launch may write reads the queue ---------------------------


class StrayLater(StrayPlayer):
    """StrayPlayer's store into a's first byte (a window the proof says the dispatch only
    reads), made only from ``stray`` on: a launch whose last landing wrote c alone."""

    stray = False

    def _kernel(self, grid, block, args, shared_mem=0):
        if self.stray:
            return super()._kernel(grid, block, args, shared_mem)
        return LeanPlayer._kernel(self, grid, block, args, shared_mem)


@pytest.mark.parametrize("build", ["own", "lean"])
def test_a_read_of_a_window_a_queued_launch_may_write_reads_the_queue(monkeypatch, vadd, build):
    """vadd's launches queued, the last storing into a's first byte, which no landing before
    wrote (so its launch booked nothing of a): a host read of a reads the queue first and gives
    that byte (the model's).  ``own``: the module's own build, whose search stores, unflagged,
    into whichever window holds the address (h157): every window is where it may write.
    ``lean``: the lean build with a among the windows it can store into (``_writable`` widened
    to every proved window: the program's own set has c alone) -- a window it can store into is
    where it may write, not only those its last landing wrote.  Fails with a queued launch's
    reach taken as the windows its launch booked (``InPlace.wrote``): a's byte read stale."""
    _build(monkeypatch, build)
    if build == "lean":
        monkeypatch.setattr(RT, "_writable", lambda m, windows: frozenset(windows))
    mem, cfg, fm, cache = _rigged(monkeypatch, vadd, StrayLater)
    a = next(x for x in mem if x.name == "a")
    before = bytes(mem.read(a.base, 4))
    rs = _queued(mem, cfg, cache, 4)  # (full, kept, two deferred: each wrote c alone)
    res = mem.resident
    assert len(res.pending) == 2
    ag = res.pending[0].ag
    c_k = next(k for k, w in enumerate(ag.win.windows) if w.address == fm.spans[0][0])
    assert ag.wrote_ks == {c_k}  # (a's window not booked by their launches)
    fm.stray = True
    rs += _queued(mem, cfg, cache, 1)
    assert isinstance(rs[-1], DeferredResult) and len(res.pending) == 3
    got = bytes(mem.read(a.base, 4))
    assert not res.pending  # (the read read the queue)
    assert got == bytes(fm.model.read(a.base, 4)) and got != before
    for r in rs:
        assert r.refusal is None and r.stats.get("build") == ("lean" if build == "lean" else None), r.refusal
    assert sorted(rs[-1].write_spans) == sorted([*fm.spans, (a.base, 1)])
    _same_memory(mem, fm.model)


def test_a_read_of_bytes_a_queued_failed_lean_launch_wrote_is_refused(monkeypatch, vadd):
    """Lean vadd launches queued: a read of c (the window they store into) reads the queue and
    gives the model's bytes; then queued launches whose last flags a wrong proof after storing
    c's first half: a read of those bytes reads the queue, finds the failed proof and is refused
    `backend.proof` (the bytes are lost: the device held their only current copy), the launches
    before it landed, it refused.  Fails with a read never reading the queue (the flagged run's
    bytes read as if landed)."""
    _build(monkeypatch, "lean")
    mem, cfg, fm, cache = _rigged(monkeypatch, vadd, FlaggingLean)
    rs = _queued(mem, cfg, cache, 4)
    res = mem.resident
    assert len(res.pending) == 2 and rs[-1].__dict__["_resident"] is res  # (queued, not read)
    c_addr, c_size = fm.spans[0]
    assert bytes(mem.read(c_addr, c_size)) == bytes(fm.model.read(c_addr, c_size))
    assert not res.pending
    rs += _queued(mem, cfg, cache, 2)  # (the first after the read's download: the full path)
    fm.flag = True
    rs += _queued(mem, cfg, cache, 1)
    assert len(res.pending) == 2 and isinstance(rs[-1], DeferredResult)
    with pytest.raises(Refused, match="backend.proof"):
        mem.read(c_addr, 8)
    assert not res.pending
    assert all(r.refusal is None for r in rs[:-1])
    assert rs[-1].refusal is not None and rs[-1].refusal.code == "backend.proof", rs[-1].refusal


def test_a_queue_that_may_write_what_its_trace_read_is_read_by_every_read(monkeypatch, vadd):
    """The lean build with its kernel arguments' window among those it can store into
    (``_writable`` widened): the trace of its dispatch read that allocation (its record's stamps:
    ``traced``), so a replay of a failed queued launch might trace other windows, outside any
    unusable copy, and store there -- so every host read of a device copy reads the queue, as
    before h165, even one of a, which no queued launch can store into; every result and byte the
    model's.  Fails with ``traced`` not looked at (the read of a leaves the queue)."""
    _build(monkeypatch, "lean")
    mem0, cfg, slots = vadd
    mem = copy.deepcopy(mem0)
    ka = next(x for x in mem if x.name.startswith("kernargs"))
    got = execute_dispatch(copy.deepcopy(mem0), cfg, backend="numpy", mode="lane").windows
    (ka_k,) = [k for k, w in enumerate(sorted(got, key=lambda w: w.address)) if w.address in ka]
    writable = RT._writable
    monkeypatch.setattr(RT, "_writable", lambda m, windows: writable(m, windows) | {ka_k})
    fm = rig(monkeypatch, mem, cfg, lambda p, model, c: LeanPlayer(p, model, c, slots))
    cache: dict = {}
    rs = _queued(mem, cfg, cache, 4)
    res = mem.resident
    assert len(res.pending) == 2
    ag = res.pending[0].ag
    assert res.entries[ka] in ag.traced and res.entries[ka] in ag.reach_entries
    assert res.entries[next(x for x in mem if x.name == "a")] not in ag.reach_entries
    flushes = _flushes(monkeypatch)
    a = next(x for x in mem if x.name == "a")
    assert bytes(mem.read(a.base, a.size)) == bytes(fm.model.read(a.base, a.size))
    assert flushes == [(0, 2)] and not res.pending
    for r in rs:
        assert r.refusal is None and r.write_spans == fm.spans and r.stats["build"] == "lean", r.refusal
    _same_memory(mem, fm.model)


# ---- (4) a read elsewhere: correct bytes, the failure found later as before ----------------------


def test_a_read_elsewhere_amid_a_failed_queued_launch_is_exact_and_the_failure_still_found(monkeypatch, vadd):
    """Lean vadd launches queued, the last a wrong proof (stores c's first half, flags): reads of
    a, b and the kernel arguments (read, peek) -- windows no queued launch can store into -- read
    nothing of the queue and give the bytes as they were (the host's copy of what no queued
    launch may write is current whatever their reports say); the failure is still found when the
    queue is read: its result refused `backend.proof`, the ones before landed, c unreadable, the
    next dispatch refused before any launch, and a, b and the kernel arguments still read as
    before (they were not lost).  Fails with every read reading the queue (before h165)."""
    _build(monkeypatch, "lean")
    mem, cfg, fm, cache = _rigged(monkeypatch, vadd, FlaggingLean)
    rs = _queued(mem, cfg, cache, 3)
    fm.flag = True
    rs += _queued(mem, cfg, cache, 1)
    res = mem.resident
    assert len(res.pending) == 2 and isinstance(rs[-1], DeferredResult)
    ka = next(x for x in mem if x.name.startswith("kernargs"))
    assert ka in res.entries
    names = ("a", "b", ka.name)
    want = {x.name: bytes(fm.model.read(x.base, x.size)) for x in fm.model if x.name in names}
    flushes = _flushes(monkeypatch)
    for x in mem:
        if x.name in names:
            assert bytes(mem.read(x.base, x.size)) == want[x.name]
            assert bytes(mem.peek(x.base + 4, 4)) == want[x.name][4:8]
    assert not flushes and len(res.pending) == 2  # (no read read the queue)
    assert "_stats" not in rs[-1].__dict__  # (not read: neither landed nor refused yet)
    assert rs[-1].refusal is not None and rs[-1].refusal.code == "backend.proof", rs[-1].refusal
    assert not res.pending and all(r.refusal is None for r in rs[:-1])
    c_addr, _ = fm.spans[0]
    with pytest.raises(Refused, match="backend.proof"):
        mem.read(c_addr, 8)
    n = len(fm.launches)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.proof" and len(fm.launches) == n
    for x in mem:
        if x.name in names:
            assert bytes(mem.read(x.base, x.size)) == want[x.name]


# ---- host writes and Allocation.data read the whole queue, as before -----------------------------


@pytest.mark.parametrize("how", ["write", "data"])
def test_a_host_write_or_a_handed_out_array_reads_the_whole_queue(monkeypatch, vadd, how):
    """Lean vadd launches queued: a host write of a (GuestMemory.write: Resident.touch), or a's
    host array handed out (Allocation.data, which may be written and told after), reads the
    whole queue first, though no queued launch can store into a -- a replay of a failed one must
    find the memory it was launched on; every result and byte the model's.  Fails with touch
    reading only what ``pull`` reads, or Allocation.data a plain pull."""
    _build(monkeypatch, "lean")
    mem, cfg, fm, cache = _rigged(monkeypatch, vadd, LeanPlayer)
    rs = _queued(mem, cfg, cache, 4)
    res = mem.resident
    assert len(res.pending) == 2
    a = next(x for x in mem if x.name == "a")
    if how == "write":
        for m in (mem, fm.model):
            m.write(a.base + 8, np.full(8, 5, np.uint8))
    else:
        assert bytes(a.data) == bytes(fm.model.read(a.base, a.size))
    assert not res.pending
    rs += _queued(mem, cfg, cache, 3)
    for r in rs:
        assert r.refusal is None and r.write_spans == fm.spans and r.stats["build"] == "lean", r.refusal
    _same_memory(mem, fm.model)


def test_a_range_set_meets_exactly_the_ranges_that_share_a_byte():
    rs = R.RangeSet()
    rs.add(8, 16)
    rs.add(32, 40)
    hits = [(lo, hi) for lo in range(48) for hi in range(lo, 49) if rs.meets(lo, hi)]
    want = [
        (lo, hi)
        for lo in range(48)
        for hi in range(lo, 49)
        if hi > lo and (lo < 16 and 8 < hi or lo < 40 and 32 < hi)
    ]
    assert hits == want
    assert not R.RangeSet().meets(0, 1 << 40)
