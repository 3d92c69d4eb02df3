"""A repeated dispatch run again from its kept plan (runtime.Again, execute._again; decision 0029's
amendment "the repeated dispatch's straight path"), without a GPU (the stand-in CuPy).

(1) Random sessions on one Device of launches of vadd -- the same arguments again, another
    output buffer, another count, a count that makes the stand-in kernel escape (refused) --,
    host writes of the inputs (Device.write, a view written and GuestMemory.touched), host reads
    of the output (a pull) and new allocations between them: every result (refusal, write spans,
    windows, stats but times) equal to the same session with the kept plans disabled, and every
    buffer equal to a NumPy-backend Device running the same launches and writes; the plan taken
    for most repeated launches.  The stand-in kernel checks that the written map is zero when it
    starts (the map is cleared by landing, and whole after a refused dispatch: Resident.clear).
(2) Each thing the plan depends on changed between two launches: the launch after takes the
    full path (and lands what it should), the one after that the plan again.
(3) One memset per repeated launch (the report; the written map cleared by wl_land), one
    read-back, three launches, nothing else.
"""

from __future__ import annotations

import dataclasses
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from standin_cupy import mark  # noqa: E402
from test_host_path import _at, _cubin_on_disk, _vadd_from_kernargs  # noqa: E402

from wavelift.backends.cuda import resident as RES  # noqa: E402
from wavelift.driver import device as D  # noqa: E402
from wavelift.driver.hsa import LaunchError  # noqa: E402
from wavelift.run import execute as X  # noqa: E402

FIX = HERE.parent / "fixtures" / "gfx1030"
N = 64


@pytest.fixture(autouse=True)
def _again_default(monkeypatch):
    """The kept dispatch plans as by default (WAVELIFT_CUDA_AGAIN unset: on)."""
    monkeypatch.delenv("WAVELIFT_CUDA_AGAIN", raising=False)


def _checked_kernel():
    """The kernarg-reading vadd stand-in, which first checks that the written map is zero; an
    escaping run marks (and scribbles over) the arena's first bytes as well, as a kernel whose
    other waves stored before one escaped (refused: nothing of it lands)."""
    inner = _vadd_from_kernargs()

    def kernel(arena, written, ws, we, wo, consts):
        assert not np.asarray(written).any(), "the written map was not cleared before the kernel"
        inner(arena, written, ws, we, wo, consts)
        if int(_at(consts["WL_STATUS"], np.uint32, 16)[4]):
            arena[:16] = 0x5A
            mark(written, 0, 16)

    return kernel


def _device(backend):
    import wavelift

    dev = wavelift.Device("gfx1030", backend=backend, mode="lane", record=False)
    k = dev.load_code_object(str(FIX / "basic-O2-w32-flat.hsaco")).kernel("vadd")
    return dev, k


def _stats(r):
    return {k: v for k, v in r.stats.items() if k not in ("time_s", "download_s", "device_time_s")}


def _record(dev, k):
    """The launch record's fields (the result aside) and the Device's counts."""
    t = k.last_launch
    assert dev.launches == [t] and t.result is dev.results[-1]
    fields = (t.index, t.kernel, t.grid, t.registers, t.initiator, t.dims, t.user_sgprs, t.pm4)
    fields += (t.kernarg_address, t.kernargs, t.packet_address, t.packet, t.queue_address)
    fields += (t.scratch_address, t.scratch, t.lds_bytes, t.extra, t.program_address)
    pool = {key: list(v) for key, v in dev._pool.items()}
    return fields, dev.launch_count, dev.dispatch_count, dev._regs.writes, dev._regs.values(), pool


def _session(seed, backend, steps, again=True):
    """Run a random session; -> (per-step records, final buffers)."""
    rng = np.random.default_rng(seed)
    dev, k = _device(backend)
    bufs = [dev.upload(rng.standard_normal(N).astype(np.float32)) for _ in range(4)]
    out: list = []
    args = [bufs[0], bufs[1], bufs[2], np.uint32(N)]
    if backend == "cuda":
        _cubin_on_disk()  # (each session's build finds its cubin on disk: the same stats)
    saved, saved_cache, saved_fast = X._keep_again, X._CACHE, D.Device._keep_fast
    X._CACHE = {}  # (each session builds its module: the same stats from the first launch)
    if not again:  # (neither the dispatch's kept run nor the driver's kept launch)
        X._keep_again = lambda *a, **kw: None  # type: ignore[assignment]
        D.Device._keep_fast = lambda *a, **kw: None  # type: ignore[method-assign]
    try:
        for _ in range(steps):
            r = rng.random()
            if r < 0.55:  # the same launch again
                pass
            elif r < 0.62:  # another output buffer / another input
                args = [bufs[int(rng.integers(0, 2))], bufs[1], bufs[int(rng.integers(2, 4))], np.uint32(N)]
            elif r < 0.67:  # another count (new kernarg bytes)
                args = [args[0], args[1], args[2], np.uint32(int(rng.integers(1, N + 1)))]
            elif r < 0.72:  # the host writes an input
                dev.write(args[int(rng.integers(0, 2))], rng.standard_normal(N).astype(np.float32))
                out.append(("write",))
                continue
            elif r < 0.76:  # a view written, then told (GuestMemory.touched)
                b = args[0]
                dev.memory.read(b.address, 8)  # (the host's bytes current first: a pull)
                v = dev.memory.find(b.address)._data
                v[:8] = rng.integers(0, 256, 8, dtype=np.uint8)
                dev.memory.touched(b.address, 8)
                out.append(("touched",))
                continue
            elif r < 0.82:  # the host reads the output (a pull)
                out.append(("read", dev.download(args[2], np.float32).tobytes()))
                continue
            elif r < 0.85:  # a new allocation (the allocation table changes)
                bufs.append(dev.upload(rng.standard_normal(N).astype(np.float32)))
                out.append(("alloc",))
                continue
            elif r < 0.88:  # an escaping launch (the stand-in's): refused, lands nothing
                if backend == "cuda":
                    res = k.launch(
                        global_size=(N, 1, 1), block=(64, 1, 1), args=[*args[:3], np.uint32(4 * N)]
                    )
                    out.append(("escape", res.refusal.code if res.refusal else None, res.write_spans))
                continue
            res = k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=args)
            out.append(
                (
                    "launch",
                    None if res.refusal is None else res.refusal.code,
                    list(res.write_spans),
                    list(res.windows) if backend == "cuda" else None,
                    _stats(res) if backend == "cuda" else None,
                    _record(dev, k) if backend == "cuda" else None,
                )
            )
        final = [dev.download(b, np.float32).tobytes() for b in bufs]
    finally:
        X._keep_again, X._CACHE = saved, saved_cache  # type: ignore[assignment]
        D.Device._keep_fast = saved_fast  # type: ignore[method-assign]
    return out, final


@pytest.mark.usefixtures("arena_path")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_sessions_equal_the_full_path_and_numpy(standin, seed):
    standin.kernel = _checked_kernel()
    hits = X.AGAIN_HITS[0]
    fast, fast_final = _session(seed, "cuda", 160)
    taken = X.AGAIN_HITS[0] - hits
    full, full_final = _session(seed, "cuda", 160, again=False)
    assert X.AGAIN_HITS[0] - hits == taken  # (none taken with the plans disabled)
    assert fast == full
    assert fast_final == full_final
    # the buffers as the NumPy backend computes them (escaping launches skipped: they land nothing)
    ref, ref_final = _session(seed, "numpy", 160)
    strip = lambda xs: [(x[0], *x[1:3]) if x[0] == "launch" else x for x in xs if x[0] != "escape"]  # noqa: E731
    assert strip(fast) == strip(ref)
    assert fast_final == ref_final
    launches = sum(1 for x in fast if x[0] == "launch")
    assert taken > launches // 3, (taken, launches)


def _launch(k, args):
    r = k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=args)
    assert r.refusal is None, r.refusal
    return r


@pytest.mark.usefixtures("arena_path")
def test_each_change_takes_the_full_path_once(standin, monkeypatch, calls):
    standin.kernel = _checked_kernel()
    dev, k = _device("cuda")
    a = dev.upload(np.arange(N, dtype=np.float32))
    b = dev.upload(np.ones(N, np.float32))
    c = dev.alloc(4 * N)
    args = [a, b, c, np.uint32(N)]
    want = np.arange(N, dtype=np.float32) + 1

    def settle():
        for _ in range(3):
            _launch(k, args)
        h = X.AGAIN_HITS[0]
        _launch(k, args)
        assert X.AGAIN_HITS[0] == h + 1, "the repeated launch did not take the plan"

    settle()
    ag = X._PREPARED[id(dev.results[-1].config)].again().ag

    def change_then_check(change, full=True):
        nonlocal want
        got = change()
        if got is not None:
            want = got
        h = X.AGAIN_HITS[0]
        r = _launch(k, args)
        assert (X.AGAIN_HITS[0] == h) == full, change
        assert r.write_spans == [(c.address, 4 * N)]
        assert np.array_equal(dev.download(c, np.float32), want)
        settle()

    # a host write of an input
    change_then_check(lambda: (dev.write(a, np.full(N, 2, np.float32)), np.full(N, 3, np.float32))[1])
    # the host reads the output (the next launch's full path would shadow nothing new, but the
    # pull is a change: the plan is not taken once)
    change_then_check(lambda: (dev.download(c, np.float32), None)[1])
    # a new allocation
    change_then_check(lambda: (dev.alloc(64), None)[1])
    # the launched build's constant memory written by someone else (another put_constant)
    change_then_check(lambda: ag.k.put_constant("P", np.zeros(4, np.uint32)))
    # the module's hints replaced (equal values, another array: the full path once)
    assert ag.m.hints is not None
    change_then_check(lambda: setattr(ag.m, "hints", ag.m.hints.copy()))
    # the timing knob set: the full path times (and stays full while it is set; its timed
    # launches run on copies of a map the warm-up marked: the stand-in without the map check)
    monkeypatch.setenv("WAVELIFT_CUDA_TIMING_REPEAT", "2")
    standin.kernel = _vadd_from_kernargs()
    h = X.AGAIN_HITS[0]
    _launch(k, args)
    _launch(k, args)
    assert X.AGAIN_HITS[0] == h
    monkeypatch.delenv("WAVELIFT_CUDA_TIMING_REPEAT")
    standin.kernel = _checked_kernel()
    settle()
    # a refused launch in between (an escape): the map is cleared whole before the next kernel
    r = k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(4 * N)])
    assert r.refusal is not None and r.refusal.code == "escape"
    change_then_check(lambda: None)
    # a wall-clock limit: the full path (it checks the deadline)
    monkeypatch.setenv("WAVELIFT_TIME_LIMIT", "100")
    h = X.AGAIN_HITS[0]
    _launch(k, args)
    _launch(k, args)
    assert X.AGAIN_HITS[0] == h
    monkeypatch.delenv("WAVELIFT_TIME_LIMIT")
    settle()
    # another kernel of the same code object launched between (other kernargs, registers)
    k2 = dev.load_code_object(str(FIX / "basic-O2-w32-flat.hsaco")).kernel("vadd")
    d = dev.alloc(4 * N)
    _launch(k, args)
    regs_k = dev._regs.values()
    _launch(k2, [b, b, d, np.uint32(N)])
    assert dev._regs.values() != regs_k
    change_then_check(lambda: None)
    assert dev._regs.values() == regs_k  # (the register file as k's stream leaves it)
    assert np.array_equal(dev.download(d, np.float32), np.full(N, 2, np.float32))
    # the driver's kept launch: the kernargs written by the host (c's pointer made d's): the
    # full path writes them back (the launch's arguments are c's)
    fast = calls(D.Device, "_launch_fast")
    ka = k.last_launch.kernarg_address
    _launch(k, args)
    assert fast and k._fast is not None
    dev.memory.write(ka + 16, np.array([d.address], np.uint64))
    dev.write(d, np.zeros(N, np.float32))
    change_then_check(lambda: None)
    assert not dev.download(d, np.float32).any()
    # the IB written by the host: the full path writes it back
    ib = dev._pool[k._fast.pooled[2][0]][-1]
    dev.memory.write(ib, np.zeros(8, np.uint8))
    fast.clear()
    _launch(k, args)
    assert k._fast is not None
    assert dev.memory.read(ib, len(k._fast.ib_bytes)) == k._fast.ib_bytes  # (written back: the full path)
    n_before = len(fast)
    _launch(k, args)
    assert len(fast) == n_before + 1
    # a register the stream writes, written by another stream: the stream's writes again
    regs = dev._regs
    regs_k = regs.values()
    regs.write(regs._addr("COMPUTE_RESOURCE_LIMITS"), 5)
    fast.clear()
    _launch(k, args)
    assert regs.values() == regs_k and k._fast is not None
    # the caller changes a launch record it was handed: later records are not changed
    t = k.last_launch
    before = (
        dict(t.registers),
        list(t.user_sgprs),
        dict(t.extra),
        list(t.extra["kernarg_fill"]),
        list(t.pm4),
    )
    t.registers["COMPUTE_PGM_LO"] ^= 1
    t.user_sgprs.append(7)
    t.extra["kernarg_fill"].append(("x", 0))
    t.pm4.append(0)
    fast.clear()
    _launch(k, args)
    u = k.last_launch
    assert fast and u is not t and u.index == t.index + 1
    assert (u.registers, u.user_sgprs, u.extra["kernarg_fill"], u.pm4) == (*before[:2], *before[3:])
    # the repeated-launch path switched off: the full path
    dev.fast_launch = False
    _launch(k, args)
    assert k._fast is None
    dev.fast_launch = True
    settle()
    # another GB_ADDR_CONFIG (the stream's key): the full path, whose config has it
    dev.gb_addr_config = (dev.gb_addr_config or 0) ^ 0x10
    _launch(k, args)
    assert dev.results[-1].config.gb_addr_config == dev.gb_addr_config
    settle()


def _warm_vadd(standin):
    """vadd on the checking stand-in after five launches (its plans kept, where on): -> (Device,
    kernel, args), the stand-in's call counts cleared."""
    standin.kernel = _checked_kernel()
    dev, k = _device("cuda")
    a = dev.upload(np.arange(N, dtype=np.float32))
    b = dev.upload(np.ones(N, np.float32))
    args = [a, b, dev.alloc(4 * N), np.uint32(N)]
    for _ in range(5):
        _launch(k, args)
    standin.calls.clear()
    return dev, k, args


@pytest.mark.usefixtures("arena_path")
@pytest.mark.parametrize("graph", [False, True])
def test_repeated_launch_device_operations(standin, monkeypatch, graph):
    """One by one: the report's memset, the kernel, wl_runs (the hints' copy by its launch: h161,
    no copy of its own), the report's read-back (get) and wl_land at landing.  Captured (WAVELIFT_CUDA_GRAPH=on): one graph
    launch of all but wl_land, the report's copy into the host array in it; no get."""
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "off")  # (each launch waits: its operations counted)
    monkeypatch.setenv("WAVELIFT_CUDA_GRAPH", "on" if graph else "off")
    dev, k, (a, b, c, n) = _warm_vadd(standin)
    h = X.AGAIN_HITS[0]
    for _ in range(20):
        _launch(k, [a, b, c, n])
    assert X.AGAIN_HITS[0] - h == 20
    calls = dict(standin.calls)
    want = {"fill": 20, "launch": 60}
    want.update({"graph_launch": 20, "memcpy_d2h_async": 20} if graph else {"get": 20})
    assert calls == want, calls
    assert np.array_equal(dev.download(c, np.float32), np.arange(N, dtype=np.float32) + 1)


@pytest.mark.usefixtures("arena_path")
@pytest.mark.parametrize("graph", [False, True])
def test_deferred_launch_device_operations(standin, monkeypatch, graph):
    """Deferred (WAVELIFT_CUDA_DEFER on): one by one, the report's memset, the kernel, wl_runs
    with the hints' copy (h161), wl_gate, the report's copy into a queue place's host array and
    wl_land_gated over the one window vadd writes; captured (WAVELIFT_CUDA_GRAPH=on), one
    graph launch of them all.  No read-back: reading the queue's reports (Resident.flush) adds
    no device operation."""
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on")
    monkeypatch.setenv("WAVELIFT_CUDA_GRAPH", "on" if graph else "off")
    dev, k, (a, b, c, n) = _warm_vadd(standin)
    res = dev.memory.resident
    res.flush()
    standin.calls.clear()
    d, h = X.DEFERRED[0], X.AGAIN_HITS[0]
    for _ in range(3 * RES.DEFER_DEPTH):  # (the queue full twice: read, and the host arrays again)
        _launch(k, [a, b, c, n])
    res.flush()
    launches = 3 * RES.DEFER_DEPTH
    assert (X.DEFERRED[0] - d, X.AGAIN_HITS[0] - h) == (launches, launches)
    calls = dict(standin.calls)
    want = {"fill": launches, "launch": 4 * launches, "memcpy_d2h_async": launches}
    want.update({"graph_launch": launches} if graph else {})
    assert calls == want, calls
    assert np.array_equal(dev.download(c, np.float32), np.arange(N, dtype=np.float32) + 1)


def test_a_dropped_device_takes_its_kept_runs_along(standin, young_gc):
    """The records hold kept runs weakly (the memory's Resident holds them): a Device dropped
    after repeated launches leaves neither its memory nor its device copies behind."""
    import gc
    import weakref

    standin.kernel = _checked_kernel()
    dev, k = _device("cuda")
    a = dev.upload(np.arange(N, dtype=np.float32))
    c = dev.alloc(4 * N)
    for _ in range(5):
        _launch(k, [a, a, c, np.uint32(N)])
    rec = X._PREPARED[id(dev.results[-1].config)]
    assert rec.again is not None and rec.again() is not None
    mem = weakref.ref(dev.memory)
    del dev, k, a, c
    gc.collect()
    assert mem() is None
    assert rec.again() is None


@pytest.mark.usefixtures("arena_path")
def test_sessions_without_kept_staging(standin, monkeypatch):
    """Staging sets too large to keep (fresh arrays each dispatch, both cleared as before): no
    kept run (its arena is not kept), the same results as the full path and NumPy."""
    from wavelift.backends.cuda import resident as R

    monkeypatch.setattr(R, "STAGING_MAX_BYTES", 0)
    standin.kernel = _checked_kernel()
    hits = X.AGAIN_HITS[0]
    fast, fast_final = _session(4, "cuda", 60)
    assert X.AGAIN_HITS[0] == hits
    full, full_final = _session(4, "cuda", 60, again=False)
    assert fast == full and fast_final == full_final
    ref, ref_final = _session(4, "numpy", 60)
    assert fast_final == ref_final


@pytest.mark.usefixtures("arena_path")
def test_an_evicted_staging_set_takes_its_kept_runs_along(standin, monkeypatch):
    """Staging sets kept up to STAGING_TOTAL_BYTES together: a dispatch of other sizes evicts the
    older set, and the kept runs on its arena go with it (they could not run again: Again.arm
    needs the arena's state), so no evicted arena stays held; both dispatches stay right."""
    from wavelift.backends.cuda import resident as R

    monkeypatch.setattr(R, "STAGING_TOTAL_BYTES", 1)  # (room for the newest set alone)
    dev, k, args = _warm_vadd(standin)
    res = dev.memory.resident
    arenas = {id(kp.ag.arena) for kp in res.kept.values()}
    assert len(arenas) == 1
    n2 = 2 * N
    a2, b2 = dev.upload(np.arange(n2, dtype=np.float32)), dev.upload(np.ones(n2, np.float32))
    args2 = [a2, b2, dev.alloc(4 * n2), np.uint32(n2)]
    for _ in range(3):
        r = k.launch(global_size=(n2, 1, 1), block=(64, 1, 1), args=args2)
        assert r.refusal is None, r.refusal
    assert len(res._staging) == 1
    assert not arenas & {id(kp.ag.arena) for kp in res.kept.values()}
    assert res.kept  # (the newer dispatch's own)
    _launch(k, args)
    assert np.array_equal(dev.download(args[2], np.float32), np.arange(N, dtype=np.float32) + 1)
    assert np.array_equal(dev.download(args2[2], np.float32), np.arange(n2, dtype=np.float32) + 1)


def test_off_every_launch_takes_the_full_path(standin, monkeypatch):
    """WAVELIFT_CUDA_AGAIN=off (A/B runs): no kept dispatch plan, and every written map and report
    cleared before its kernel (two memsets a launch)."""
    monkeypatch.setenv("WAVELIFT_CUDA_AGAIN", "off")
    dev, k, (a, b, c, n) = _warm_vadd(standin)
    h = X.AGAIN_HITS[0]
    for _ in range(10):
        _launch(k, [a, b, c, n])
    assert X.AGAIN_HITS[0] == h
    assert standin.calls["fill"] == 20, dict(standin.calls)
    assert np.array_equal(dev.download(c, np.float32), np.arange(N, dtype=np.float32) + 1)


def test_a_missed_kept_launch_keys_its_arguments_once(standin, calls):
    """A launch whose key is not its kept launch's computes the launch key once (the full path
    takes the one `launch` made), and arguments given as an iterator are read once: the full
    path gets them, not the iterator `launch` emptied."""
    dev, k, (a, b, c, n) = _warm_vadd(standin)
    c2 = dev.alloc(4 * N)
    assert k._fast is not None
    made = calls(D, "_launch_key")
    r = k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=iter([a, b, c2, n]))
    assert r.refusal is None, r.refusal
    assert len(made) == 1
    assert np.array_equal(dev.download(c2, np.float32), np.arange(N, dtype=np.float32) + 1)
    assert k._fast is not None and k._memo is not None
    fast = dev.fast_launches
    made.clear()
    r = k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=iter([a, b, c2, n]))
    assert r.refusal is None and dev.fast_launches == fast + 1 and len(made) == 1


def test_a_kept_launch_looks_at_the_free_lists_again_after_they_moved(standin, calls):
    """The driver's kept launch finds its three allocations the last of their free lists
    without looking while nothing was taken from or given to them (Device._pool_moves); once
    something was -- here two IBs taken and given back in the other order, the allocation table
    and the held list as they were -- it looks: its IB is not the last, so the full path (which
    takes the other IB), then kept again on that one."""
    dev, k, args = _warm_vadd(standin)
    fp = k._fast
    ib_key, ib = fp.pooled[2]
    size, data = ib_key[0], fp.ib_bytes  # (each IB taken holds the stream's bytes: only the lists differ)
    assert dev.launch_alloc(size, "ib", data=data) == ib  # (its IB; then a second one, new)
    dev.launch_alloc(size, "ib", data=data)
    dev._give_back()  # (free: [.., ib, new])
    _launch(k, args)  # (the table moved: the full path, kept on the new one)
    full = calls(D.Kernel, "_prepare")
    _launch(k, args)
    assert not full
    ib = k._fast.pooled[2][1]
    gen = dev.memory.generation
    first = dev.launch_alloc(size, "ib", data=data)
    second = dev.launch_alloc(size, "ib", data=data)
    assert first == ib and second != ib and dev.memory.generation == gen
    dev._give_back()  # (given back in the order taken: its IB no longer the last)
    assert dev._pool[ib_key][-1] == second and not dev._held
    _launch(k, args)
    assert len(full) == 1 and k._fast is not None and k._fast.pooled[2][1] == second  # (the full path)
    _launch(k, args)
    assert len(full) == 1  # (kept again)
    assert np.array_equal(dev.download(args[2], np.float32), np.arange(N, dtype=np.float32) + 1)


def test_a_kept_launchs_record_copies_its_fields_when_read(standin):
    """A record made by the driver's kept launch has its mutable fields (registers, user SGPRs,
    extra, pm4) copied from the kept ones at their first read (LaunchRecord.__getattr__): equal
    to the full path's record of the launch, its own objects, a field the caller set before
    the first read kept, and it survives copy and pickle."""
    import copy
    import pickle

    dev, k, args = _warm_vadd(standin)
    fast = dev.fast_launches
    _launch(k, args)
    t = k.last_launch
    assert dev.fast_launches == fast + 1 and "_kept" in t.__dict__  # (nothing copied yet)
    t.registers = {"mine": 1}  # (set before any read)
    kept = (list(t.user_sgprs), copy.deepcopy(t.extra), list(t.pm4))
    assert t.registers == {"mine": 1} and kept[0] and kept[2] and "_kept" not in t.__dict__
    t.user_sgprs.append(7)  # (the caller changes the fields it read: later records do not)
    t.extra["kernarg_fill"].append(("x", 0))
    t.pm4.append(0)
    _launch(k, args)
    u = k.last_launch
    assert (u.user_sgprs, u.extra, u.pm4) == kept and "mine" not in u.registers
    regs = dict(u.registers)
    u.registers["COMPUTE_PGM_LO"] ^= 1
    _launch(k, args)
    w = k.last_launch
    assert w.registers == regs
    _launch(k, args)
    w = k.last_launch  # (none of its fields read yet)
    for x in (copy.copy(w), copy.deepcopy(w), pickle.loads(pickle.dumps(w))):
        assert x == w and x.pm4 == w.pm4 and x.extra == w.extra
    dev.fast_launch = False
    _launch(k, args)
    full = k.last_launch
    assert "_kept" not in full.__dict__
    v = copy.copy(w)
    v.index, v.result = full.index, full.result
    assert v == full
    with pytest.raises(AttributeError):
        w.no_such_field  # noqa: B018


def _objects_session(seed: int, keep: bool, made: list) -> tuple:
    """Random vadd launches on one argument list changed in place between them -- an input or the
    output replaced by another buffer or the same one, the count by a NumPy scalar (the kept
    one, an equal new one, another) or a Python int -- on a grid given by one tuple, a new equal
    one or another, amid host writes and reads: (each launch's refusal, spans, stats and record
    and each read; how many launches keyed their arguments, ``made`` counting the keyings).
    ``keep``: the driver's kept launch on (else every launch takes the full path)."""
    rng = np.random.default_rng(seed)
    saved, saved_cache = D.Device._keep_fast, X._CACHE
    X._CACHE = {}
    _cubin_on_disk()
    if not keep:
        D.Device._keep_fast = lambda *a, **kw: None  # type: ignore[method-assign]
    try:
        dev, k = _device("cuda")
        bufs = [dev.upload(rng.standard_normal(N).astype(np.float32)) for _ in range(3)]
        bufs.append(dev.alloc(4 * N))
        args = [bufs[0], bufs[1], bufs[3], np.uint32(N)]
        grid = (N, 1, 1)
        out, keyed = [], 0
        # (first, counts of each kind in turn: an int three times, then an equal float and bool
        # -- other keys, refused or not as the full path does -- and NumPy scalars)
        fixed = [N] * 3 + [float(N), True, np.uint32(N), np.int32(N), np.uint32(N)] * 3
        for i in range(len(fixed) + 90):
            u = rng.random()
            if i < len(fixed):
                args[3] = fixed[i]
            elif u < 0.08:
                args[int(rng.integers(0, 3))] = bufs[int(rng.integers(0, 4))]
            elif u < 0.16:
                v = int(args[3]) if rng.random() < 0.5 else int(rng.integers(1, N + 1))
                # (an equal value of another type: another key -- a float cannot fill a uint)
                args[3] = (np.uint32(v), v, np.uint32(N), args[3], float(v), np.int32(v))[
                    int(rng.integers(0, 6))
                ]
            elif u < 0.18:  # (a Buffer of the same address: the same key)
                i = int(rng.integers(0, 3))
                args[i] = dataclasses.replace(args[i], name="again")
            elif u < 0.2:
                grid = (N, 1, 1) if rng.random() < 0.5 else (N // 2, 1, 1)  # (a new tuple)
            elif u < 0.24:
                dev.write(bufs[int(rng.integers(0, 3))], rng.standard_normal(4).astype(np.float32))
            elif u < 0.28:
                out.append(dev.download(args[2], np.float32).tobytes())
            m = len(made)
            try:
                r = k.launch(global_size=grid, block=(64, 1, 1), args=args)
            except LaunchError as e:
                out.append(str(e))
                continue
            finally:
                keyed += len(made) > m
            # (the second grid's module is built in each session: how is no concern here)
            stats = {n: v for n, v in _stats(r).items() if n not in ("cubin", "module_cache_hit")}
            out.append((r.refusal, list(r.write_spans), stats, _record(dev, k)))
        out.append([dev.download(b, np.float32).tobytes() for b in bufs])
        return out, keyed
    finally:
        D.Device._keep_fast, X._CACHE = saved, saved_cache  # type: ignore[method-assign]


@pytest.mark.usefixtures("arena_path")
def test_a_launch_of_the_very_argument_objects_is_not_keyed_again(standin, calls):
    """A launch whose argument objects are the very ones of a launch found to have its kept
    launch's key, each of fixed value (driver/device.py ``_seen``), takes that key without working
    it out again; any object replaced -- in the same argument list, by an equal one too -- is
    keyed afresh: a session on one argument list changed in place equals the same session with
    the driver's kept launch off, and most of its launches were not keyed."""
    standin.kernel = _checked_kernel()
    made = calls(D, "_launch_key")
    for seed in (5, 6):
        fast, keyed = _objects_session(seed, True, made)
        full, _ = _objects_session(seed, False, made)
        assert fast == full
        assert keyed < 90 // 2, keyed


def _pattern_kernel(state):
    """The checking vadd stand-in whose written map is then cut by ``state["p"]``: 0 all of c
    (one run), 1 every other byte of it (2N runs: more than the report's INLINE_RUNS, so they
    come back by the second read), 2 bytes [4, 100) of it, 3 all of c and one byte of the
    first mirrored range (``state["mirror"]``: arena offset) marked as written with the byte
    it holds (the full path runs the dispatch again without mirrors)."""
    inner = _checked_kernel()

    def kernel(arena, written, ws, we, wo, consts):
        inner(arena, written, ws, we, wo, consts)
        marked = np.flatnonzero(RES.map_flags(written))
        if not len(marked):
            return
        lo, hi = int(marked[0]), int(marked[-1]) + 1
        p = state["p"]
        if p == 1:
            mark(written, lo + 1, hi, 0, 2)
        elif p == 2:
            mark(written, lo, lo + 4, 0)
            mark(written, lo + 100, hi, 0)
        elif p == 3 and state.get("mirror") is not None:
            mark(written, state["mirror"], state["mirror"] + 1)

    return kernel


def _pattern_session(again: bool, pats, mirror=None):
    state = {"p": 0, "mirror": mirror}
    _cubin_on_disk()  # (each session's build finds its cubin on disk: the same stats)
    saved_keep, saved_fast, saved_cache = X._keep_again, D.Device._keep_fast, X._CACHE
    X._CACHE = {}
    if not again:
        X._keep_again = lambda *a, **kw: None  # type: ignore[assignment]
        D.Device._keep_fast = lambda *a, **kw: None  # type: ignore[method-assign]
    try:
        import standin_cupy as S

        S.STATE.kernel = _pattern_kernel(state)
        dev, k = _device("cuda")
        a = dev.upload(np.arange(N, dtype=np.float32))
        b = dev.upload(np.ones(N, np.float32))
        c = dev.alloc(4 * N)
        args = [a, b, c, np.uint32(N)]
        out, hits = [], []
        for i, p in enumerate(pats):
            state["p"] = p
            if p == 3 and state.get("mirror") is None:
                rec = X._PREPARED.get(id(dev.results[-1].config))
                kept = rec.again() if rec is not None and rec.again is not None else None
                if kept is not None and kept.ag.mirrored:
                    state["mirror"] = kept.ag.mirrored[0][0]
            h = X.AGAIN_HITS[0]
            r = k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=args)
            hits.append(X.AGAIN_HITS[0] - h)
            out.append((r.refusal, list(r.write_spans), list(r.windows), _stats(r)))
            if i % 7 == 6:
                out.append(("c", dev.download(c, np.float32).tobytes()))
        return out, hits, state.get("mirror")
    finally:
        X._keep_again, D.Device._keep_fast, X._CACHE = saved_keep, saved_fast, saved_cache


@pytest.mark.usefixtures("arena_path")
@pytest.mark.parametrize("graph", [False, True])
def test_kept_runs_with_many_runs_other_spans_and_written_mirrors(standin, monkeypatch, graph):
    """The kept run's own handling of the report (every run inline, or more than INLINE_RUNS
    read again; other spans each launch with few kept wl_land calls; a written mirrored
    range handed to the full path) lands what the full path lands, launch for launch; the same
    with its operations replayed from a graph (WAVELIFT_CUDA_GRAPH=on)."""
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "off")  # (each launch waits: its operations counted)
    from wavelift.backends.cuda import resident as R
    from wavelift.backends.cuda import runtime as RT

    monkeypatch.setenv("WAVELIFT_CUDA_GRAPH", "on" if graph else "off")
    monkeypatch.setattr(R, "KEPT_COMMITS", 2)
    g = standin.calls["graph_launch"]
    pats = [0] * 5 + [1] * 4 + [0, 2, 2, 1, 0, 1, 2, 0] + [1] * 3 + [3, 0, 0, 0, 3] + [2] * 3
    kept, hits, mirror = _pattern_session(True, pats)
    full, hits_full, _ = _pattern_session(False, pats, mirror)
    assert kept == full
    assert not any(hits_full)
    many = [h for p, h in zip(pats, hits) if p == 1]
    assert sum(many) >= 5 and sum(hits) >= 20, hits  # (the kept run took them)
    assert 2 * N > RT.INLINE_RUNS and any(len(o[1]) == 2 * N for o in kept if o[0] is None)
    assert mirror is not None  # (vadd's kernargs are mirrored: the rerun was exercised)
    assert [h for p, h in zip(pats, hits) if p == 3] == [0, 0]
    assert any(o[3].get("mirror_rerun") for o in kept if o[0] is None)
    assert (standin.calls["graph_launch"] - g >= sum(hits)) == graph


@pytest.mark.usefixtures("arena_path")
@pytest.mark.parametrize("seed", [1, 2])
def test_graph_sessions_equal_the_full_path_and_numpy(standin, monkeypatch, seed):
    """WAVELIFT_CUDA_GRAPH=on: each kept run replays the operations its plan captured once (the
    stand-in's graph runs the operations noted while its stream captured, in order); the random
    sessions equal the full path's and the NumPy backend's buffers."""
    monkeypatch.setenv("WAVELIFT_CUDA_GRAPH", "on")
    standin.kernel = _checked_kernel()
    g, hits = standin.calls["graph_launch"], X.AGAIN_HITS[0]
    fast, fast_final = _session(seed, "cuda", 160)
    graphs, taken = standin.calls["graph_launch"] - g, X.AGAIN_HITS[0] - hits
    full, full_final = _session(seed, "cuda", 160, again=False)
    assert standin.calls["graph_launch"] - g == graphs  # (none without kept runs)
    assert fast == full and fast_final == full_final
    ref, ref_final = _session(seed, "numpy", 160)
    assert fast_final == ref_final
    assert graphs >= taken > 0, (graphs, taken)  # (escaping kept runs launched one too)


@pytest.mark.usefixtures("arena_path")
def test_graph_capture_refused_runs_one_by_one(standin, monkeypatch):
    """A stream that cannot capture (an old CuPy, a driver that refuses): the plan runs its
    operations one by one, as without the setting, and lands the same."""
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "off")  # (each launch waits: its operations counted)
    import standin_cupy as S

    monkeypatch.setenv("WAVELIFT_CUDA_GRAPH", "on")

    def refuse(self, mode=None):
        raise RuntimeError("capture refused")

    cp = sys.modules["cupy"]
    monkeypatch.setattr(cp.cuda.Stream, "begin_capture", refuse)
    dev, k, (a, b, c, n) = _warm_vadd(standin)
    h = X.AGAIN_HITS[0]
    for _ in range(10):
        _launch(k, [a, b, c, n])
    assert X.AGAIN_HITS[0] - h == 10 and S.STATE.capturing is None
    assert dict(standin.calls) == {"fill": 10, "launch": 30, "get": 10}, dict(standin.calls)
    assert np.array_equal(dev.download(c, np.float32), np.arange(N, dtype=np.float32) + 1)


@pytest.mark.usefixtures("arena_path")
def test_a_captured_run_only_where_clear_zeroes_the_report_alone(standin, monkeypatch):
    """Resident.clears_report_only (what a captured run replays in place of ``clear``): true for
    a kept run's report and map after its landing; false once a kernel may have marked the map,
    for another report or map, or with the kept plans off."""
    dev, k, (a, b, c, n) = _warm_vadd(standin)
    res = dev.memory.resident
    ag = X._PREPARED[id(dev.results[-1].config)].again().ag
    assert res.clears_report_only(ag.rep, ag.written)
    assert not res.clears_report_only(ag.rep, ag.written[:8])
    assert not res.clears_report_only(ag.rep.copy(), ag.written)
    monkeypatch.setattr(res, "again", False)
    assert not res.clears_report_only(ag.rep, ag.written)
    monkeypatch.setattr(res, "again", True)
    res.launched(ag.arena, ag.written)  # (a kernel may have marked the map)
    assert not res.clears_report_only(ag.rep, ag.written)


def test_code_without_a_device_copy_gets_a_stamp(standin):
    """A program that reads nothing from its code object (lds.cl's kernels: no window on it) left
    its code's allocation without a device copy, so without a stamp, so its kept plan was never
    made (the 5x5 stencil ran the full path every pass): _keep_again stamps it by a copy made
    for it, whose version a host write of the code moves, as any copy's; none while the Resident
    replays deferred dispatches."""
    standin.kernel = _checked_kernel()
    dev, k = _device("cuda")
    a, b, c = dev.upload(np.arange(N, dtype=np.float32)), dev.upload(np.ones(N, np.float32)), dev.alloc(4 * N)
    _launch(k, [a, b, c, np.uint32(N)])
    mem, res = dev.memory, dev.memory.resident
    code_at = mem.alloc(256, name="code without a window")  # (no dispatch reaches it)
    code = mem.find(code_at)
    assert res.stamp(code) is None
    st = X._code_stamp(mem, code)
    assert st is not None and res.stamp(code) == st and X._code_stamp(mem, code) == st
    token = res.stamps([code])
    mem.write(code_at, b"\x01\x02")
    assert res.stamp(code) != st and not res.holds(token)
    other = mem.find(mem.alloc(256, name="another"))
    res.flushing = True
    try:
        assert X._code_stamp(mem, other) is None and res.stamp(other) is None
    finally:
        res.flushing = False


def _stencil_player(in_at: int, out_at: int, w: int, h: int):
    """A stand-in kernel for lds.cl's stencil5 (out = the 5x5 sum of in, edges clamped, mod
    2^32) played through the window tables it is handed (the input read, the output stored)."""

    def kernel(arena, written, ws, we, wo, consts):
        starts, n = np.asarray(ws[:-1]), 4 * w * h

        def at(addr):
            k = int(np.searchsorted(starts, np.uint64(addr), side="right")) - 1
            assert k >= 0 and addr + n <= int(we[k]), "no window holds the buffer"
            return int(addr - int(starts[k]) + int(wo[k]))

        i, o = at(in_at), at(out_at)
        img = np.asarray(arena[i : i + n]).view(np.uint32).reshape(h, w).astype(np.uint64)
        pad = np.pad(img, 2, mode="edge")
        s = sum(pad[dy : dy + h, dx : dx + w] for dy in range(5) for dx in range(5))
        arena[o : o + n] = (s & 0xFFFFFFFF).astype(np.uint32).view(np.uint8).ravel()
        mark(written, o, o + n)

    return kernel


def test_code_no_window_holds_takes_its_kept_plan(standin):
    """lds.cl's stencil5 (bench/kernels/lds-gfx1030-O2-w32.hsaco) reads no constant from its
    code object, so no window holds its code and the dispatch leaves it no device copy: its
    repeated launches take the kept plan all the same, as vadd's do (execute._code_stamp;
    before it, every pass ran the full path: this fails), and land what the full path lands; a
    host read of the output or write of the input takes the full path once, then the plan."""
    import wavelift

    w, h = 40, 21
    rng = np.random.default_rng(5)
    imgs = [rng.integers(0, 1 << 24, size=(h, w), dtype=np.uint32) for _ in range(2)]

    def want(img):  # (NumPy, independently of the stand-in: a loop over the 25 taps)
        pad, s = np.pad(img.astype(np.uint64), 2, mode="edge"), np.zeros((h, w), np.uint64)
        for dy in range(5):
            for dx in range(5):
                s += pad[dy : dy + h, dx : dx + w]
        return (s & 0xFFFFFFFF).astype(np.uint32)

    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    hsaco = HERE.parents[1] / "bench" / "kernels" / "lds-gfx1030-O2-w32.hsaco"
    k = dev.load_code_object(str(hsaco)).kernel("stencil5")
    src, out = dev.upload(imgs[0]), dev.alloc(4 * w * h)
    standin.kernel = _stencil_player(src.address, out.address, w, h)
    args = [src, out, np.uint32(w), np.uint32(h)]

    def launches(img, taken):
        """Three launches (no host read between them: a pull is a change), then the output."""
        before, got = X.AGAIN_HITS[0], []
        for _ in range(3):
            r = k.launch(groups=(-(-w // 16), -(-h // 16)), block=(16, 16), args=args)
            assert r.refusal is None, r.refusal
            got.append(X.AGAIN_HITS[0] - before)
        assert got == taken
        assert np.array_equal(dev.download(out, np.uint32).reshape(h, w), want(img))
        return r

    # (as vadd's: the first launch makes the prepared record, the second keeps its run, the
    # third takes it)
    r = launches(imgs[0], [0, 0, 1])
    code = dev.memory.find(r.config.program_address)
    assert code is not None and r.windows
    assert all(
        win.address + win.size <= code.base or win.address >= code.base + code.size for win in r.windows
    )
    launches(imgs[0], [0, 1, 2])  # (after the pull: the full path once)
    dev.write(src, imgs[1])
    launches(imgs[1], [0, 1, 2])


def test_a_packet_without_a_device_copy_keeps_the_drivers_launch(standin, calls):
    """stencil5 never reads its dispatch packet, so the tracer gives the packet no window and it
    has no device copy, so no stamp: the driver kept no launch of it (Device._keep_fast needed
    both the kernargs' and the packet's stamps), and every pass ran `prepare`, the stream's
    submission and `_run_again` (session 56 on an H100: ~110 us a launch call against shade's
    ~30).  Now a launch allocation without a device copy is kept by its bytes, as the IB is:
    the repeated launches take `_launch_fast`; a host write into the packet or the kernargs
    is seen -- the full path writes them back -- and the output is the full path's."""
    import wavelift

    w, h = 40, 21
    rng = np.random.default_rng(56)
    img = rng.integers(0, 1 << 24, size=(h, w), dtype=np.uint32)
    pad, want = np.pad(img.astype(np.uint64), 2, mode="edge"), np.zeros((h, w), np.uint64)
    for dy in range(5):
        for dx in range(5):
            want += pad[dy : dy + h, dx : dx + w]
    want = (want & 0xFFFFFFFF).astype(np.uint32)
    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    hsaco = HERE.parents[1] / "bench" / "kernels" / "lds-gfx1030-O2-w32.hsaco"
    k = dev.load_code_object(str(hsaco)).kernel("stencil5")
    src, out = dev.upload(img), dev.alloc(4 * w * h)
    standin.kernel = _stencil_player(src.address, out.address, w, h)
    args = [src, out, np.uint32(w), np.uint32(h)]
    fast = calls(D.Device, "_launch_fast")

    def go(n):
        for _ in range(n):
            r = k.launch(groups=(-(-w // 16), -(-h // 16)), block=(16, 16), args=args)
            assert r.refusal is None, r.refusal
        return r

    r = go(4)
    pkt = dev.memory.find(k.last_launch.packet_address)
    assert pkt is not None and pkt.resident is None, "the packet has a device copy: not this case"
    assert k._fast is not None and fast, "no kept launch of a kernel whose packet has no device copy"
    for where, size in ((k.last_launch.packet_address, 64), (k.last_launch.kernarg_address, 16)):
        before = dev.memory.read(where, size)
        n = len(fast)
        dev.memory.write(where, bytes(size))  # (zeros: the grid, the pointers gone)
        go(1)
        assert dev.memory.read(where, size) == before, "the full path did not write it back"
        go(2)
        assert len(fast) == n + 2 + 1, (where, len(fast) - n)  # (the failed try, then two kept)
        assert np.array_equal(dev.download(out, np.uint32).reshape(h, w), want)
    assert r.write_spans == [(out.address, 4 * w * h)]
