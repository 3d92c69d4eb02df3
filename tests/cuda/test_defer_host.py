"""Deferred repeated dispatches (WAVELIFT_CUDA_DEFER=on: runtime.Again.defer, Resident.flush;
decision 0029's helper-96 amendment), without a GPU (the stand-in CuPy).

The stand-in kernel is an accumulator read through the kernargs as vadd's are (c[i] += b[i] for
i <= c[0]: the span written grows),
with two data-dependent turns that a repeated launch of the same arguments meets on the device
alone: when c[0] was 3 it also writes a[0] = 100 (a window the last landing did not write:
wl_gate lets nothing land, the dispatch and every one queued after it run again through the full
path), and when c[0] was 6 while a[0] is 100 it escapes after scribbling over c's bytes and
marking them written (refused: nothing of it lands, and the launches after it, the same, are
refused too until the host writes a).  Every result read only after the session (so that the
launches queue) is compared with the same session run without deferral and with a NumPy model
of the guest (each landed dispatch: c += b, the a write; a refused one: nothing).
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from standin_cupy import mark  # noqa: E402
from test_host_path import _cubin_on_disk, _report_arrays  # noqa: E402

from wavelift.run import execute as X  # noqa: E402

FIX = HERE.parent / "fixtures" / "gfx1030"
N = 64
# (deferral is the arena path's: a dispatch run in place is never deferred -- decision 0049 step 4)
pytestmark = pytest.mark.usefixtures("arena_path")


def _acc_kernel(held):
    """``held["dev"]``: the Device (a written map not zero before the kernel only where its
    Resident's sticky word is set: a dispatch queued after a failed one, which lands nothing)."""
    from wavelift.backends.cuda import codegen as G

    def kernel(arena, written, ws, we, wo, consts):
        if np.asarray(written).any():
            sticky = held["dev"].memory.resident._sticky
            assert sticky is not None and sticky[0], "the written map was not zero before the kernel"
        P, stats, status, esc, starts, ends, offs = _report_arrays(consts, ws, we, wo)

        def at(addr, nbytes):
            k = int(np.searchsorted(starts, np.uint64(addr), side="right")) - 1
            assert k >= 0 and addr + nbytes <= int(ends[k])
            return int(addr - int(starts[k]) + int(offs[k]))

        ka = int(P[G.P_USER + 2]) | (int(P[G.P_USER + 3]) << 32)
        o = at(ka, 28)
        words = np.asarray(arena[o : o + 28]).view(np.uint32)
        a, b, c = (int(words[2 * i]) | (int(words[2 * i + 1]) << 32) for i in range(3))
        n = int(words[6])
        oa, ob, oc = at(a, 4 * n), at(b, 4 * n), at(c, 4 * n)
        f32 = lambda q: np.asarray(arena[q : q + 4 * n]).view(np.float32).copy()  # noqa: E731
        av, bv, cv = f32(oa), f32(ob), f32(oc)
        stats[8] += 7
        stats[9] += 7 * n
        if cv[0] == 6.0 and av[0] == 100.0:  # (an escape after other waves stored)
            arena[oc : oc + 16] = 0x5A
            mark(written, oc, oc + 16)
            esc[:8] = [0, 0, 0, 0, 0, 0, 1, 0]
            status[4] += 1
            stats[2] += 1
            return
        m = 4 * (min(int(cv[0]), n - 1) + 1)  # (c[: c[0] + 1] only: the span grows)
        arena[oc : oc + m] = (cv + bv).view(np.uint8)[:m]
        mark(written, oc, oc + m)
        if cv[0] == 3.0:  # (a write into another window)
            arena[oa : oa + 4] = np.frombuffer(np.float32(100.0).tobytes(), np.uint8)
            mark(written, oa, oa + 4)

    return kernel


def _model_step(a, b, c):
    """The guest's step (NumPy): -> (refused, a, b, c) after it."""
    if c[0] == 6.0 and a[0] == 100.0:
        return True, a, b, c
    a2, c2 = a.copy(), c.copy()
    if c[0] == 3.0:
        a2[0] = 100.0
    m = min(int(c[0]), N - 1) + 1
    c2[:m] += b[:m]
    return False, a2, b, c2


def _stats(r):
    return {k: v for k, v in r.stats.items() if k not in ("time_s", "download_s", "device_time_s")}


SCRIPT = (
    ["launch"] * 12  # (0..3 landed, the a write at the 4th, the escapes from the 7th)
    + ["write_a"]  # (a[0] = 0: the next launches land again)
    + ["launch"] * 5
    + ["read_c"]  # (a host read between launches: the queue is read first)
    + ["launch"] * 30  # (more than the queue's depth)
    + ["write_c"]  # (c = 0 again: the a write, and the escape when a[0] is still 100)
    + ["launch"] * 9
)


def _session(defer: bool | None, monkeypatch, standin):
    import wavelift

    if defer is None:  # (the default)
        monkeypatch.delenv("WAVELIFT_CUDA_DEFER", raising=False)
    else:
        monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on" if defer else "off")
    _cubin_on_disk()  # (each session's build finds its cubin on disk: the same stats)
    saved = X._CACHE
    X._CACHE = {}
    try:
        held: dict = {}
        standin.kernel = _acc_kernel(held)
        dev = held["dev"] = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
        k = dev.load_code_object(str(FIX / "basic-O2-w32-flat.hsaco")).kernel("vadd")
        a = dev.upload(np.arange(N, dtype=np.float32) + 7)
        b = dev.upload(np.ones(N, np.float32))
        c = dev.alloc(4 * N)
        args = [a, b, c, np.uint32(N)]
        results, reads, pending = [], [], []
        d0 = X.DEFERRED[0]
        for step in SCRIPT:
            if step == "launch":
                results.append(k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=args))
                pending.append(len(dev.memory.resident.pending))
            elif step == "write_a":
                v = dev.download(a, np.float32).copy()
                v[0] = 0.0
                dev.write(a, v)
            elif step == "write_c":
                dev.write(c, np.zeros(N, np.float32))
            else:
                reads.append(dev.download(c, np.float32).copy())
                assert not dev.memory.resident.pending  # (the read took the queue's reports)
        deferred = X.DEFERRED[0] - d0
        out = [
            (r.refusal.code if r.refusal else None, list(r.write_spans), list(r.windows), _stats(r))
            for r in results
        ]
        final = [dev.download(x, np.float32).copy() for x in (a, b, c)]
        return out, reads, final, deferred, pending, (a.address, c.address)
    finally:
        X._CACHE = saved


def test_a_deferred_session_equals_one_without_deferral_and_the_model(standin, monkeypatch):
    on, on_reads, on_final, deferred, pending, (a_addr, c_addr) = _session(True, monkeypatch, standin)
    off, off_reads, off_final, none, _, _ = _session(False, monkeypatch, standin)
    assert none == 0 and deferred > 20, deferred  # (most repeated launches were deferred)
    assert max(pending) > 4  # (launches queued without their reports read)
    # the model, launch by launch (every refusal with its reason, every landed span)
    a = np.arange(N, dtype=np.float32) + 7
    b = np.ones(N, np.float32)
    c = np.zeros(N, np.float32)
    model, reads = [], []
    for step in SCRIPT:
        if step == "launch":
            refused, a2, b, c2 = _model_step(a, b, c)
            m = 4 * (min(int(c[0]), N - 1) + 1)
            spans = [] if refused else [(c_addr, m)] + ([(a_addr, 4)] if c[0] == 3.0 else [])
            model.append(("escape" if refused else None, sorted(spans)))
            a, c = a2, c2
        elif step == "write_a":
            a = a.copy()
            a[0] = 0.0
        elif step == "write_c":
            c = np.zeros(N, np.float32)
        else:
            reads.append(c.copy())
    assert [(o[0], sorted(o[1])) for o in on] == model
    assert sum(1 for m in model if m[0] == "escape") >= 3
    assert on == off
    for x, y, z in zip(on_reads, off_reads, reads):
        assert np.array_equal(x, z) and np.array_equal(y, z)
    for x, y, z in zip(on_final, off_final, (a, b, c)):
        assert np.array_equal(x, z) and np.array_equal(y, z)


def _warm(standin, monkeypatch):
    from test_host_path import _vadd_from_kernargs

    import wavelift

    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on")
    standin.kernel = _vadd_from_kernargs()
    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = dev.load_code_object(str(FIX / "basic-O2-w32-flat.hsaco")).kernel("vadd")
    a = dev.upload(np.arange(N, dtype=np.float32))
    b = dev.upload(np.ones(N, np.float32))
    c = dev.alloc(4 * N)
    args = [a, b, c, np.uint32(N)]
    for _ in range(4):
        assert k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=args).refusal is None
    return dev, k, args


def test_host_reads_writes_and_results_read_the_queue_first(standin, monkeypatch):
    """A read of a device copy's allocation, a host write, a result's field and a dispatch that is
    not deferred each read the queued reports first; nothing else does (the launches between)."""
    dev, k, (a, b, c, n) = _warm(standin, monkeypatch)
    res = dev.memory.resident
    go = lambda: k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=[a, b, c, n])  # noqa: E731
    rs = [go() for _ in range(3)]
    assert len(res.pending) == 3 and all(r.__dict__["_resident"] is res for r in rs)
    assert np.array_equal(dev.download(c, np.float32), np.arange(N, dtype=np.float32) + 1)
    assert not res.pending and all(r.refusal is None for r in rs)
    assert [r.write_spans for r in rs] == [[(c.address, 4 * N)]] * 3
    assert all(r.stats["bytes_written"] == 4 * N and r.stats["instructions"] == 7 for r in rs)
    # a host write of an input: the queue first, then the next launches see it
    rs = [go() for _ in range(2)]
    assert len(res.pending) == 1  # (the first after a read took the full path: the pull changed it)
    dev.write(b, np.full(N, 2.0, np.float32))
    assert not res.pending
    rs = [go() for _ in range(3)]
    assert len(res.pending) == 2  # (the first after the write took the full path)
    assert rs[-1].refusal is None and not res.pending  # (a result's field)
    assert np.array_equal(dev.download(c, np.float32), np.arange(N, dtype=np.float32) + 2)
    # a dispatch not deferred (other arguments) reads the queue first
    c2 = dev.alloc(4 * N)
    rs = [go() for _ in range(3)]
    assert len(res.pending) == 2
    r2 = k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=[a, b, c2, n])
    assert not res.pending and r2.__dict__.get("_resident") is None
    assert np.array_equal(dev.download(c2, np.float32), np.arange(N, dtype=np.float32) + 2)
    # the allocation table changing (an allocation made or freed) reads the queue first
    rs = [go() for _ in range(3)]
    assert len(res.pending) == 2
    spare = dev.alloc(64)
    assert not res.pending
    rs = [go() for _ in range(3)]
    assert len(res.pending) == 2
    dev.memory.free(spare.address)
    assert not res.pending and all(r.refusal is None for r in rs)
    # the queue's depth: read when full
    most = 0
    for _ in range(2 * res.depth):
        go()
        most = max(most, len(res.pending))
    assert most == res.depth - 1  # (the depth-th launch read the queue)


def _escaping(standin, monkeypatch):
    """A deferring Device of the accumulator with a[0] = 100 and c = 4: its launches land 4 -> 5
    -> 6, then escape (nothing lands) until the host writes a.  -> (Device, launch, a, c)."""
    import wavelift

    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on")
    held: dict = {}
    standin.kernel = _acc_kernel(held)
    dev = held["dev"] = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = dev.load_code_object(str(FIX / "basic-O2-w32-flat.hsaco")).kernel("vadd")
    a = dev.upload(np.full(N, 100.0, np.float32))
    b = dev.upload(np.ones(N, np.float32))
    c = dev.alloc(4 * N)
    dev.write(c, np.full(N, 4.0, np.float32))
    go = lambda: k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(N)])  # noqa: E731
    return dev, go, a, c


def test_a_refused_deferred_dispatch_lands_nothing_and_later_ones_see_the_earlier_writes(
    standin, monkeypatch
):
    """Device level: the escaping dispatch's scribbles reach neither the device copy nor the host;
    the ones queued after it land nothing on the device either (wl_gate's sticky word) until the
    host has run them again, and then exactly once."""
    dev, go, a, c = _escaping(standin, monkeypatch)
    rs = [go() for _ in range(5)]  # (4 -> 5 -> 6, then escapes)
    res = dev.memory.resident
    e = res.entries[dev.memory.find(c.address)]
    dev_c = np.asarray(e.buf[: 4 * N]).view(np.float32)
    assert len(res.pending) >= 2 and dev_c[0] == 6.0  # (on the device: two landed, none after)
    assert [r.refusal.code if r.refusal else None for r in rs] == [None, None, "escape", "escape", "escape"]
    assert [r.write_spans for r in rs[2:]] == [[], [], []]
    want = np.full(N, 4.0, np.float32)
    want[:5] += 1  # (c[0] was 4: c[:5] written)
    want[:6] += 1  # (then 5: c[:6])
    assert np.array_equal(dev.download(c, np.float32), want)
    assert np.array_equal(dev_c, want)


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_a_refused_deferred_dispatch_read_with_a_full_queues_oldest(standin, monkeypatch, depth):
    """The same with a queue of 2-4 places: a full queue reads its oldest half (Resident.flush's
    ``front``), the newer launches left queued, so the escaping launch is read while later ones
    are still queued -- they all fail and run again in order: the refusals, the host's bytes and
    the device copy as without deferral, and the places taken in turn (never two queued
    launches in one)."""
    from wavelift.backends.cuda import resident as R

    monkeypatch.setattr(R, "DEFER_DEPTH", depth)
    dev, go, a, c = _escaping(standin, monkeypatch)
    rs = [go()]
    res = dev.memory.resident
    assert res.depth == depth
    for _ in range(6):
        rs.append(go())
        assert len({id(it.slot) for it in res.pending}) == len(res.pending) < depth
    assert [r.refusal.code if r.refusal else None for r in rs] == [None, None] + ["escape"] * 5
    want = np.full(N, 4.0, np.float32)
    want[:5] += 1
    want[:6] += 1
    assert np.array_equal(dev.download(c, np.float32), want)
    e = res.entries[dev.memory.find(c.address)]
    assert np.array_equal(np.asarray(e.buf[: 4 * N]).view(np.float32), want)


def test_the_gate_table_is_the_written_windows_less_the_mirrored_ranges(standin, monkeypatch):
    """wl_gate's ranges (Again._deferral): a run may land only inside the windows the last landing
    wrote, adjacent ones merged, and never in a mirrored range (the full path reruns those
    without mirrors); every window marked written for the check, against a byte map."""
    dev, k, args = _warm(standin, monkeypatch)
    rec = X._PREPARED.get(id(dev.results[-1].config))
    ag = rec.again().ag
    assert ag.mirrored  # (vadd's kernargs are mirrored)
    nb = ag.win.nbytes
    for wrote in (tuple(range(len(ag.win.windows))), ag.wrote, (0,), tuple(range(1, len(ag.win.windows)))):
        ag.wrote, ag.deferral = wrote, None
        d = ag._deferral()
        table = np.asarray(d["gate"].args[2][8]).astype(np.int64)  # (wl_gate's ok)
        want = np.zeros(nb + 1, bool)
        for w in wrote:
            want[ag.offs[w] : ag.offs[w] + ag.win.windows[w].size] = True
        for lo, n in ag.mirrored:  # (offset, bytes)
            want[lo : lo + n] = False
        got = np.zeros(nb + 1, bool)
        pairs = table.reshape(-1, 2)
        for lo, hi in pairs:
            got[lo:hi] = True
        assert np.array_equal(got, want), wrote
        assert all(pairs[i, 1] < pairs[i + 1, 0] for i in range(len(pairs) - 1)), (
            pairs,
            ag.offs,
            ag.mirrored,
        )
        assert [r[1:] for r in d["ranges"]] == [
            (ag.plan[w][1], ag.plan[w][1] + ag.win.windows[w].size) for w in wrote
        ]


def test_deferred_runs_with_many_runs_other_spans_and_written_mirrors(standin, monkeypatch):
    """test_launch_again_host's pattern session with deferral: every run inline or more than
    INLINE_RUNS (wl_gate: run again), other spans each launch, a written mirrored range (wl_gate:
    run again, the full path's rerun without mirrors): each result equal to the full path's.
    (Its results are read launch by launch: each launch's report is read before the next.)"""
    from test_launch_again_host import _pattern_session

    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "on")
    pats = [0] * 5 + [1] * 4 + [0, 2, 2, 1, 0, 1, 2, 0] + [1] * 3 + [3, 0, 0, 0, 3] + [2] * 3
    d0 = X.DEFERRED[0]
    kept, hits, mirror = _pattern_session(True, pats)
    deferred = X.DEFERRED[0] - d0
    full, _, _ = _pattern_session(False, pats, mirror)
    assert kept == full
    assert deferred >= 10 and mirror is not None
    assert any(o[3].get("mirror_rerun") for o in kept if o[0] is None)


def test_no_deferral_after_a_landing_of_more_runs_than_come_back_inline(standin, monkeypatch):
    """A plan whose last landing wrote more runs than the report holds inline is not deferred
    (wl_gate would fail it, and it would run twice); a landing of fewer defers again."""
    from wavelift.backends.cuda import runtime as RT

    dev, k, (a, b, c, n) = _warm(standin, monkeypatch)
    ag = X._PREPARED.get(id(dev.results[-1].config)).again().ag
    assert ag.wrote
    ag.note([(c.address + 2 * i, 1) for i in range(RT.INLINE_RUNS + 1)])
    assert ag.wrote is None and ag.defer(None) is None
    ag.note([(c.address, 4 * N)])
    assert ag.wrote
    d0 = X.DEFERRED[0]
    r = k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=[a, b, c, n])
    assert X.DEFERRED[0] == d0 + 1 and r.refusal is None


def test_deferral_is_the_default(standin, monkeypatch):
    """WAVELIFT_CUDA_DEFER unset defers (the default since session 43's H100 run): the session
    queues launches and ends as the one with deferral on."""
    unset = _session(None, monkeypatch, standin)
    on = _session(True, monkeypatch, standin)
    assert unset[3] > 20 and max(unset[4]) > 4
    assert unset[0] == on[0]
    assert all(np.array_equal(x, y) for x, y in zip(unset[1] + unset[2], on[1] + on[2], strict=True))


def test_an_exception_while_the_queue_is_read_leaves_no_result_that_did_not_run(standin, monkeypatch):
    """Running a failed deferred dispatch again raises (a device error, an interrupt): the
    exception reaches the caller that read the queue, and the results of the dispatches not
    settled or run again by then -- the failed one and those queued after it -- raise
    DeferredLost when read (no refusal of None for a dispatch that never landed); their bookings
    are undone, so the device copies, the host and the launches after them are right."""
    import pytest

    from wavelift.errors import DeferredLost

    dev, go, a, c = _escaping(standin, monkeypatch)
    rs = [go() for _ in range(5)]  # (4 -> 5 -> 6, then escapes: run again at the flush)
    res = dev.memory.resident
    assert all(r.__dict__.get("_resident") is res for r in rs[2:])  # (queued)
    real = X.execute_dispatch

    def boom(*args, **kw):
        raise RuntimeError("lost the device")

    monkeypatch.setattr(X, "execute_dispatch", boom)
    with pytest.raises(RuntimeError, match="lost the device"):
        dev.download(c, np.float32)
    monkeypatch.setattr(X, "execute_dispatch", real)
    assert not res.pending
    assert [r.refusal for r in rs[:2]] == [None, None]
    for r in rs[2:]:
        with pytest.raises(DeferredLost):
            r.refusal  # noqa: B018
        with pytest.raises(DeferredLost):
            r.write_spans  # noqa: B018
    want = np.full(N, 4.0, np.float32)
    want[:5] += 1
    want[:6] += 1
    assert np.array_equal(dev.download(c, np.float32), want)
    assert go().refusal.code == "escape"  # (a[0] is 100 and c[0] 6)
    v = dev.download(a, np.float32).copy()
    v[0] = 0.0
    dev.write(a, v)
    rs = [go() for _ in range(3)]
    assert [r.refusal for r in rs] == [None] * 3
    want[:7] += 1
    want[:8] += 1
    want[:9] += 1
    assert np.array_equal(dev.download(c, np.float32), want)


def test_the_queue_is_read_after_the_stream_its_dispatches_went_on(standin, monkeypatch):
    """Deferred dispatches launched while another stream is current (``with stream:``): the queue
    is read after that stream's work (not the stream current when it is read: their reports are
    not in the host arrays before it), and a launch on another stream is not queued behind them
    (no order between the two streams on the device): it reads the queue first."""
    import sys

    dev, k, (a, b, c, n) = _warm(standin, monkeypatch)
    res = dev.memory.resident
    cp = sys.modules["cupy"]
    s = cp.cuda.Stream(non_blocking=True)
    synced: list = []
    monkeypatch.setattr(type(s), "synchronize", lambda self: synced.append(self))
    go = lambda: k.launch(global_size=(N, 1, 1), block=(64, 1, 1), args=[a, b, c, n])  # noqa: E731
    with s:
        rs = [go() for _ in range(3)]
    assert len(res.pending) >= 2 and not synced
    r = go()  # (the default stream)
    assert synced == [s]  # (the queue read, after its stream)
    assert r.__dict__.get("_resident") is None and not res.pending  # (not queued behind them)
    with s:
        rs += [go() for _ in range(3)]
    assert rs[-1].refusal is None and synced[1:] == [s]  # (a result's field)
    assert all(x.refusal is None and x.write_spans == [(c.address, 4 * N)] for x in rs + [r])
    assert np.array_equal(dev.download(c, np.float32), np.arange(N, dtype=np.float32) + 1)
