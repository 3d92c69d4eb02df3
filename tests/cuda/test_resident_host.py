"""The CUDA backend's device-resident guest memory (backends/cuda/resident.py, decision 0026),
its bookkeeping run without a GPU: NumPy arrays stand in for device arrays (NumPyOps).

Oracles: a plain boolean array for RangeSet; trace/windows.WindowSet.spans (the host's write
spans) for the spans found from the device's runs; and a second GuestMemory without device
copies, into which every dispatch that is not refused lands at once, for the lazy landing."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from wavelift.backends.cuda import resident as R
from wavelift.memory.guest import GuestMemory
from wavelift.run.result import Window
from wavelift.trace.windows import WindowSet


@pytest.fixture(autouse=True, params=["off", "one"])
def heap(request, monkeypatch):
    """Each test with a device array per allocation and with one device heap per Resident
    (WAVELIFT_CUDA_HEAP=one, decision 0049 step 2: test_resident_heap_host.py)."""
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", request.param)
    return request.param


def test_rangeset_against_a_bit_array():
    rng = np.random.default_rng(26)
    for _ in range(200):
        rs, ref = R.RangeSet(), np.zeros(300, bool)
        for _ in range(30):
            lo = int(rng.integers(0, 300))
            hi = min(300, lo + int(rng.integers(0, 40)))
            if rng.random() < 0.6:
                rs.add(lo, hi)
                ref[lo:hi] = True
            else:
                got = rs.take(lo, hi)
                want = np.zeros(300, bool)
                for a, b in got:
                    assert lo <= a < b <= hi
                    assert not want[a:b].any()
                    want[a:b] = True
                assert (want[lo:hi] == ref[lo:hi]).all() and not want[:lo].any() and not want[hi:].any()
                ref[lo:hi] = False
            have = np.zeros(300, bool)
            prev = -1
            for a, b in rs.ranges():
                assert prev < a < b  # disjoint, sorted, adjacent ones merged
                have[a:b] = True
                prev = b
            assert (have == ref).all()


def _memory(rng):
    mem = GuestMemory()
    bases = []
    for k, size in enumerate((4096, 1000, 64, 20000)):
        data = rng.integers(0, 256, size, dtype=np.uint8)
        bases.append(mem.alloc(size, name=f"a{k}", data=data, align=8 if k == 2 else 256))
    return mem, bases


def _windows(mem, bases, rng):
    """Windows inside the allocations: whole ones, parts, two adjacent parts of one."""
    a0, a1, a2, a3 = bases
    return [
        Window(a0, 4096, "a0", "t"),
        Window(a1 + 8, 512, "a1", "t"),
        Window(a2, 64, "a2", "t"),
        Window(a3 + 16, 3000, "a3", "t"),
        Window(a3 + 3016 + int(rng.integers(0, 2)) * 8, 4000, "a3b", "t"),
    ]


def test_spans_from_runs_equal_the_host_spans():
    rng = np.random.default_rng(2026)
    mem, bases = _memory(rng)
    ops = R.NumPyOps()
    for trial in range(100):
        win = WindowSet(_windows(mem, bases, rng), mem)
        try:
            p = rng.choice([0.001, 0.05, 0.5, 0.999])
            for w, o in zip(win.windows, win.offs.tolist()):
                win.written[o : o + w.size] = rng.random(w.size) < p
                if trial % 7 == 0:
                    win.written[o : o + w.size] = 1  # (whole windows: runs across the bound)
            got = R.spans(*ops.runs(win.written), win)
            assert got == win.spans()
        finally:
            win.release()


class Dispatch:
    """One dispatch as the CUDA runtime carries it out, the kernel played by NumPy: stores of
    random bytes at random places in the windows."""

    def __init__(self, res, mem, windows, rng):
        self.win = WindowSet(windows, mem, host_arena=False)  # (the arena is the device's)
        self.plan = res.prepare(self.win)
        self.arena = res.gather(self.win, self.plan)
        self.written = res.ops.zeros(self.win.nbytes)
        self.stores = []
        for _ in range(int(rng.integers(0, 6))):
            w = self.win.windows[int(rng.integers(0, len(self.win.windows)))]
            at = int(rng.integers(0, w.size))
            n = min(int(rng.integers(1, 300)), w.size - at)
            v = rng.integers(0, 256, n, dtype=np.uint8)
            o = self.win._index(w.address + at)
            self.arena[o : o + n] = v
            self.written[o : o + n] = 1
            self.stores.append((w.address + at, v))
        self.spans = R.spans(*res.ops.runs(self.written), self.win)

    def scribble(self, rng, share: float) -> None:
        """The kernel stored again: each window, at odds ``share``, has a random part of its bytes
        marked written (one density of a few for the whole dispatch); the arena is random."""
        self.written[:] = 0
        p = rng.choice([0.002, 0.1, 0.6, 1.0])
        for w, o in zip(self.win.windows, self.win.offs.tolist()):
            if rng.random() < share:
                self.written[o : o + w.size] = rng.random(w.size) < p
        self.arena[:] = rng.integers(0, 256, self.arena.size, dtype=np.uint8)

    def sees(self, ref) -> bool:
        """The arena holds what guest memory held at the dispatch's start (ref: landed at once)."""
        return all(
            (self.arena[o : o + w.size] == ref.view(w.address, w.size)).all()
            for w, o in zip(self.win.windows, self.win.offs.tolist())
            if not any(w.address <= a < w.address + w.size for a, _ in self.stores)
        )


def _land_ref(ref, d):
    for addr, v in d.stores:
        ref.write(addr, v)


def test_lazy_landing_against_memory_that_lands_at_once():
    """Host writes, dispatches (some refused), host reads and views in random order: the device
    copy and the lazily landed host bytes always equal a memory where each landed at once."""
    rng = np.random.default_rng(24)
    for _ in range(30):
        mem, bases = _memory(rng)
        ref = copy.deepcopy(mem)
        res = R.Resident(R.NumPyOps())
        mem.resident = res
        for _ in range(25):
            r = rng.random()
            base = bases[int(rng.integers(0, len(bases)))]
            size = mem.find(base).size
            at = int(rng.integers(0, size))
            n = min(int(rng.integers(1, 200)), size - at)
            if r < 0.2:  # the host writes (an upload, the stream walker)
                v = rng.integers(0, 256, n, dtype=np.uint8)
                mem.write(base + at, v)
                ref.write(base + at, v)
            elif r < 0.3:  # the host writes through a view
                v = rng.integers(0, 256, n, dtype=np.uint8)
                mem.view(base + at, n)[:] = v
                ref.view(base + at, n)[:] = v
            elif r < 0.45:  # the host reads part
                assert mem.read(base + at, n) == ref.read(base + at, n)
            else:  # a dispatch: landed, or refused (nothing lands)
                d = Dispatch(res, mem, _windows(mem, bases, rng), rng)
                assert d.sees(ref)
                if rng.random() < 0.7:
                    res.commit(d.win, d.plan, d.arena, d.written, d.spans)
                    _land_ref(ref, d)
                d.win.release()
            for a in mem:  # the device copy is what the host would hold, were it current
                e = res.entries.get(a)
                if e is not None:
                    host = a._data.copy()
                    for lo, hi in e.dev_dirty.ranges():
                        host[lo:hi] = e.buf[lo:hi]
                    for lo, hi in e.host_dirty.ranges():  # (newer on the host)
                        assert (host[lo:hi] == a._data[lo:hi]).all()
                    want = ref.view(a.base, a.size)
                    assert (host == want).all()
        for a, b in zip(mem, ref):  # Allocation.data: every byte current
            assert (a.data == b.data).all()


def test_commit_lands_what_the_masked_commit_lands():
    """Resident.commit (wl_land over the spans' run table, decision 0026's amendment h109) against
    the masked commit it replaced, written here: each window's bytes whose map byte is nonzero
    into its device copy, the map cleared -- on random maps (scattered bytes, runs, whole
    windows, runs across the two adjacent windows of one allocation), by the full path and a
    kept plan's (the same window set, plan, arena and map each round; spans repeated or not)."""
    rng = np.random.default_rng(109)
    for trial in range(12):
        mem, bases = _memory(rng)
        res = R.Resident(R.NumPyOps())
        mem.resident = res
        d = Dispatch(res, mem, _windows(mem, bases, rng), rng)
        kept = ([w.address for w in d.win.windows], {}) if trial % 2 else None
        last = None
        for rnd in range(8):
            if rnd % 3 == 2 and last is not None:  # (the same stores again: a kept table reused)
                d.arena[:], d.written[:] = last
            else:
                d.scribble(rng, 0.5)
                last = (d.arena.copy(), d.written.copy())
            want = {id(e): e.buf.copy() for e, _ in d.plan}
            m = d.written.copy()
            for (e, at), w, o in zip(d.plan, d.win.windows, d.win.offs.tolist()):
                sel = m[o : o + w.size] != 0
                want[id(e)][at : at + w.size][sel] = d.arena[o : o + w.size][sel]
            spans = R.spans(*res.ops.runs(d.written), d.win)
            landed = res.commit(d.win, d.plan, d.arena, d.written, spans, kept)
            assert landed == int((m != 0).sum())  # (bytes written: every marked byte)
            for e, _ in d.plan:
                assert np.array_equal(e.buf, want[id(e)]), (trial, rnd)
            assert not d.written.any()
        d.win.release()


def test_refused_dispatch_leaves_device_and_host_untouched():
    rng = np.random.default_rng(7)
    mem, bases = _memory(rng)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    Dispatch(res, mem, _windows(mem, bases, rng), rng).win.release()  # (every copy made)
    before_dev = {a.base: res.entries[a].buf[: a.size].copy() for a in mem}
    before_host = {a.base: a._data.copy() for a in mem}
    for _ in range(20):
        d = Dispatch(res, mem, _windows(mem, bases, rng), rng)
        d.arena[:] ^= 0xFF  # (the kernel scribbled over its whole arena)
        d.written[:] = 1
        d.win.release()  # refused: no commit
    for a in mem:
        assert (res.entries[a].buf[: a.size] == before_dev[a.base]).all()
        assert not res.entries[a].dev_dirty
        assert (a._data == before_host[a.base]).all()


def test_only_dirty_ranges_cross():
    """What goes up is what the host wrote; what comes down is what the host reads of what the
    device wrote -- never whole allocations after the first upload."""
    rng = np.random.default_rng(3)
    mem, bases = _memory(rng)
    ops = R.NumPyOps()
    res = R.Resident(ops)
    mem.resident = res
    wins = _windows(mem, bases, rng)
    d = Dispatch(res, mem, wins, rng)
    d.win.release()
    assert ops.up == sum(a.size for a in mem)  # first sight: whole
    ops.up = 0
    mem.write(bases[3] + 100, b"\x01\x02\x03")
    mem.write_u32(bases[0] + 8, 7)
    d = Dispatch(res, mem, wins, rng)
    assert ops.up == 3 + 4
    # a dispatch that writes 10 bytes: nothing comes down until the host looks
    d.arena[:] = d.arena
    o = d.win._index(bases[0] + 1000)
    d.arena[o : o + 10] = 0x5A
    d.written[:] = 0
    d.written[o : o + 10] = 1
    d.spans = R.spans(*ops.runs(d.written), d.win)
    assert d.spans == [(bases[0] + 1000, 10)]
    assert res.commit(d.win, d.plan, d.arena, d.written, d.spans) == 10
    d.win.release()
    ops.down = 0
    assert mem.read(bases[0] + 1004, 2) == b"\x5a\x5a" and ops.down == 2
    assert mem.read(bases[0], 4096)[1000:1010] == b"\x5a" * 10 and ops.down == 10
    assert mem.read(bases[0], 4096)[1000:1010] == b"\x5a" * 10 and ops.down == 10  # (once)


def test_copies_are_host_memory_with_current_bytes():
    """A capture save, a pickle or a deep copy sees the device's newer bytes and no device."""
    rng = np.random.default_rng(5)
    mem, bases = _memory(rng)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    ref = copy.deepcopy(mem)
    d = Dispatch(res, mem, _windows(mem, bases, rng), rng)
    while not d.stores:
        d.win.release()
        d = Dispatch(res, mem, _windows(mem, bases, rng), rng)
    res.commit(d.win, d.plan, d.arena, d.written, d.spans)
    d.win.release()
    _land_ref(ref, d)
    for other in (copy.deepcopy(mem), pickle.loads(pickle.dumps(mem))):
        assert other.resident is None
        for a, b in zip(other, ref):
            assert a.resident is None
            assert (a._data == b._data).all()


def test_old_pickled_allocations_load():
    mem = GuestMemory()
    mem.alloc(16, data=b"x" * 16)
    state = pickle.loads(pickle.dumps(mem))
    a = state.allocations[0]
    d = a.__getstate__()
    d["data"] = d.pop("_data")
    del d["resident"]
    a.__setstate__(d)
    assert a.data.tobytes() == b"x" * 16 and a.resident is None


@pytest.mark.parametrize("seed", range(3))
def test_an_allocation_freed_drops_its_copy(seed, young_gc):
    import gc

    rng = np.random.default_rng(seed)
    mem, bases = _memory(rng)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    Dispatch(res, mem, _windows(mem, bases, rng), rng).win.release()
    n = len(res.entries)
    mem.free(bases[2])
    if len(res.entries) != n - 1:
        # (a copy held by a reference cycle goes at the next collection; a full one costs ~10 s
        # over a test worker's heap, so it runs only where the reference count did not free it)
        gc.collect()
    assert len(res.entries) == n - 1


def test_shared_arrays_are_refreshed_and_landed_in_at_once():
    """An array the caller adopted (GuestMemory.add, shared: the tinygrad hook's host memory) and
    writes directly: each dispatch sees its bytes, and what lands is in it at once."""
    rng = np.random.default_rng(11)
    mem, bases = _memory(rng)
    ext = rng.integers(0, 256, 8192, dtype=np.uint8)
    xb = mem.add(0x7000_0000_0000, ext, "host").base
    ref = copy.deepcopy(mem)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    wins = _windows(mem, bases, rng) + [Window(xb + 64, 4096, "host", "t")]
    for _ in range(20):
        v = rng.integers(0, 256, 16, dtype=np.uint8)
        at = int(rng.integers(0, 8192 - 16))
        ext[at : at + 16] = v  # (behind the memory's back)
        ref.write(xb + at, v)
        d = Dispatch(res, mem, wins, rng)
        assert d.sees(ref)
        res.commit(d.win, d.plan, d.arena, d.written, d.spans)
        _land_ref(ref, d)
        d.win.release()
        assert (ext == ref.view(xb, 8192)).all()  # (no read through the memory needed)


def test_constants_are_copied_only_when_they_change(monkeypatch):
    """Module.put_constant: the same bytes again make no copy (the host path per dispatch)."""
    import sys
    import types

    from wavelift.backends.cuda import Module

    copies = []
    rt = types.SimpleNamespace(memcpyHostToDevice=1, memcpy=lambda d, s, n, k: copies.append((d, n)))
    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(runtime=rt)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", fake)
    m = Module(("k",), None, "", "sm_90", b"", 0.0, "nvrtc")  # type: ignore[arg-type]
    monkeypatch.setattr(m, "_global", lambda name: ({"P": 1000, "Q": 2000}[name], 64))
    p = np.arange(4, dtype=np.uint32)
    m.put_constant("P", p)
    m.put_constant("P", p.copy())
    m.put_constant("Q", p)
    assert copies == [(1000, 16), (2000, 16)]
    p[1] = 9
    m.put_constant("P", p)
    m.put_constant("P", p[:2])  # (fewer bytes: a copy)
    assert copies[2:] == [(1000, 16), (1000, 8)]
    with pytest.raises(ValueError):
        m.put_constant("Q", np.zeros(32, np.uint32))


def test_window_tables_are_kept_by_their_bytes():
    ops = R.NumPyOps()
    res = R.Resident(ops)
    a = np.array([1, 2, 3], np.uint64)
    t = res.table(a)
    assert t.dtype == np.uint64 and np.array_equal(t, a) and ops.up == 24
    assert res.table(a.copy()) is t and ops.up == 24  # (the same bytes: no upload)
    b = res.table(np.array([1, 2, 3], np.int64))  # (another type: another table)
    assert b is not t and b.dtype == np.int64
    for k in range(R.TABLES):
        res.table(np.array([k + 10], np.uint64))
    assert res.table(a) is not t  # (dropped after TABLES others)


def test_a_stamps_token_holds_only_while_every_stamp_does():
    """Resident.stamps / holds (a kept plan's check of many stamps at once): after random host
    writes (some with the bytes the device copy holds: a settle brings the stamp back), views,
    reads, dispatches landed and refused, entries made and entries taken by another memory's
    Resident, a token that holds has every allocation at the stamp noted (asked before
    ``stamp``, which may settle); a token taken with nothing done since holds."""
    rng = np.random.default_rng(29)
    for _ in range(12):
        mem, bases = _memory(rng)
        res = R.Resident(R.NumPyOps())
        mem.resident = res
        Dispatch(res, mem, _windows(mem, bases, rng), rng).win.release()  # (every copy made)
        held = 0
        tokens: list = []
        for _ in range(40):
            allocs = [mem.find(b) for b in bases]
            pick = [allocs[int(k)] for k in rng.choice(len(allocs), int(rng.integers(1, 4)), replace=False)]
            t = res.stamps(pick)
            if t is not None:
                assert res.holds(t)  # (nothing since)
                tokens.append((pick, t))
            r = rng.random()
            a = allocs[int(rng.integers(0, len(allocs)))]
            at = int(rng.integers(0, a.size))
            n = min(int(rng.integers(1, 64)), a.size - at)
            if r < 0.2:  # the host writes
                mem.write(a.base + at, rng.integers(0, 256, n, dtype=np.uint8))
            elif r < 0.35:  # the host writes back the bytes it holds (settles, where shadowed)
                mem.write(a.base + at, np.frombuffer(mem.read(a.base + at, n), np.uint8).copy())
            elif r < 0.45:  # the host reads
                mem.read(a.base + at, n)
            elif r < 0.55:  # a new allocation's entry (the entry count moves)
                b = mem.alloc(64, name="new", data=np.zeros(64, np.uint8))
                res.entry(mem.find(b))
            elif r < 0.6:  # another memory's Resident takes an entry
                R.Resident(R.NumPyOps()).entry(a)
                a.resident = res
                res.entry(a)
            else:  # a dispatch, landed or refused
                d = Dispatch(res, mem, _windows(mem, bases, rng), rng)
                if rng.random() < 0.7:
                    res.commit(d.win, d.plan, d.arena, d.written, d.spans)
                d.win.release()
            for pick, t in tokens[-6:]:
                if res.holds(t):  # (asked first: stamp may settle)
                    held += 1
                    assert [res.stamp(x) for x in pick] == [v for _, v in t[1]]
        assert held
