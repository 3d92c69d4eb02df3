"""One device heap per Resident (resident.Heap, WAVELIFT_CUDA_HEAP=one: decision 0049, step 2),
run without a GPU: NumPy arrays stand in for device ones (NumPyOps).

Oracles: a model of the live ranges written here (each copy's bytes as random bytes written into
it when placed, checked after every step), the windows' guest bytes (GuestMemory without device
copies, into which every landed dispatch lands at once), and the masked commit (each window's
marked bytes into its allocation, written here).  The bookkeeping tests of test_resident_host.py
run with the heap too (its ``heap`` fixture)."""

from __future__ import annotations

import copy
import gc

import numpy as np
import pytest
from test_resident_host import Dispatch, _land_ref

from wavelift.backends.cuda import resident as R
from wavelift.memory.guest import GuestMemory
from wavelift.run.result import Window
from wavelift.trace.windows import WindowSet


def _check_layout(h, live):
    """Every live range ≡ its address mod HEAP_ALIGN (so mod 8), inside the buffer, its HEAP_SPARE bytes after it
    free of every other copy; the model's bytes in it."""
    spans = sorted((off, off + size + R.HEAP_SPARE, addr, data) for off, (size, addr, data) in live.items())
    for i, (lo, hi, addr, data) in enumerate(spans):
        assert lo % R.HEAP_ALIGN == addr % R.HEAP_ALIGN and R.HEAP_ALIGN % 8 == 0
        assert 0 <= lo and hi <= h.top <= h.cap == h.buf.size
        if i:
            assert spans[i - 1][1] <= lo  # (the one before and its spare bytes end before it)
        assert np.array_equal(h.buf[lo : lo + data.size], data)
    assert h.used() == sum(size + R.HEAP_SPARE for size, _, _ in live.values())


def test_heap_placement_growth_and_reuse_against_a_model():
    """Random places and releases: each copy ≡ its address mod 8 with its spare bytes, the copies
    disjoint, their bytes kept across every growth, released ranges reused (the buffer grows
    only when no free range fits), the top coming down when its last copy goes."""
    rng = np.random.default_rng(119)
    for _ in range(20):
        ops = R.NumPyOps()
        h = R.Heap(ops)
        live: dict = {}
        moves = []
        h.on_move = lambda: lambda: moves.append(h.cap)  # (as a WeakMethod: a call to make the call)
        for _ in range(120):
            if live and rng.random() < 0.4:
                off = list(live)[int(rng.integers(0, len(live)))]
                size, _, _ = live.pop(off)
                h.release(off, size)
            else:
                size = int(rng.choice([0, 1, 7, 8, 100, 4096, int(rng.integers(1, 300_000))]))
                addr = int(rng.integers(0, 1 << 40))
                cap, free_before = h.cap, h.free.ranges()
                off = h.place(size, addr)
                data = rng.integers(0, 256, size, dtype=np.uint8)
                h.buf[off : off + size] = data
                if h.cap != cap:  # (grown: no free range had room)
                    need = size + R.HEAP_SPARE
                    assert all(lo + (addr - lo) % R.HEAP_ALIGN + need > hi for lo, hi in free_before)
                    assert moves and moves[-1] == h.cap and h.moves == len(moves)
                live[off] = (size, addr, data)
            _check_layout(h, live)
        for off, (size, _, _) in list(live.items()):
            h.release(off, size)
        assert h.used() == 0 and h.top == 0 and not h.free  # (all back: the top at 0)


def test_a_released_range_is_reused_and_merged():
    ops = R.NumPyOps()
    h = R.Heap(ops)
    a = h.place(1000, 0x1003)
    b = h.place(2000, 0x2005)
    c = h.place(10, 0x7)
    assert (a % 8, b % 8, c % 8) == (3, 5, 7)
    assert b >= a + 1000 + R.HEAP_SPARE and c >= b + 2000 + R.HEAP_SPARE
    top = h.top
    h.release(a, 1000)
    h.release(b, 2000)
    # (a and b merged into one free range: 2,900 bytes fit there, at the right residue)
    d = h.place(2900, 0x9006)
    assert d % 8 == 6 and d + 2900 + R.HEAP_SPARE <= c and h.top == top
    h.release(c, 10)
    h.release(d, 2900)
    assert h.used() == 0 and h.top == 0


@pytest.mark.parametrize("form", ["bytes", "bits"])
def test_the_heap_map_covers_the_heap_in_the_map_form(monkeypatch, form):
    """The written map over the heap: one byte per byte, or one bit (uint32 words), zero, grown
    with the buffer and its marks kept."""
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.setenv("WAVELIFT_CUDA_MAP", form)
    res = R.Resident(R.NumPyOps())
    h = res.heap
    h.place(100, 0)
    m = h.written
    assert R.is_bits(m) == (form == "bits")
    assert m.size == (R.map_words(h.cap) if form == "bits" else h.cap) and not m.any()
    m[3] = 5
    cap = h.cap
    h.place(3 * cap, 0)  # (grows)
    m2 = h.written
    assert h.cap > cap and m2.size == (R.map_words(h.cap) if form == "bits" else h.cap)
    assert m2[3] == 5 and np.count_nonzero(m2) == 1


def _memory(rng, sizes=(4096, 1000, 64, 20000, 333)):
    mem = GuestMemory()
    bases = []
    for k, size in enumerate(sizes):
        data = rng.integers(0, 256, size, dtype=np.uint8)
        bases.append(mem.alloc(size, name=f"a{k}", data=data, align=8 if k == 2 else 256))
    return mem, bases


def _windows(bases, rng, g=None):
    """Windows at any residue mod 8, two parts of one allocation ``g`` < 8 bytes apart (one copy
    from the heap; 0: merged into one window) and one further apart."""
    a0, a1, a2, a3, a4 = bases
    g = int(rng.integers(0, 8)) if g is None else g
    return [
        Window(a0 + int(rng.integers(0, 8)), 4000, "a0", "t"),
        Window(a1 + 3, 512, "a1", "t"),
        Window(a2, 64, "a2", "t"),
        Window(a3 + 16, 3000, "a3", "t"),
        Window(a3 + 3016 + g, 4000, "a3b", "t"),
        Window(a3 + 9000, 100, "a3c", "t"),
        Window(a4 + 5, 300, "a4", "t"),
    ]


@pytest.fixture
def heap(monkeypatch):
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")


def test_window_heap_offsets_are_their_copies_places(heap):
    """Resident.heap_offsets: each window's heap offset ≡ its address mod 8 (as its arena offset),
    the heap there holding the window's guest bytes after prepare; every copy a heap range."""
    rng = np.random.default_rng(49)
    mem, bases = _memory(rng)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    win = WindowSet(_windows(bases, rng), mem, host_arena=False)
    plan = res.prepare(win)
    hofs = res.heap_offsets(plan)
    for w, o, ho, (e, at) in zip(win.windows, win.offs.tolist(), hofs, plan):
        assert e.heap is res.heap and ho == e.off + at
        assert ho % 8 == w.address % 8 == o % 8
        assert np.array_equal(
            res.heap.buf[ho : ho + w.size], np.frombuffer(mem.read(w.address, w.size), np.uint8)
        )


def test_the_kernel_indexes_the_heap_by_the_heap_tables(heap):
    """Resident.heap_tables: a guest address x of window k at heap index x - start[k] + off[k]
    (the kernel's arithmetic over its window tables, unchanged) holds x's guest byte; the
    spare bytes after the last window lie inside the heap."""
    rng = np.random.default_rng(490)
    mem, bases = _memory(rng)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    for _ in range(5):
        win = WindowSet(_windows(bases, rng), mem, host_arena=False)
        plan = res.prepare(win)
        starts, ends, offs = (np.asarray(t)[:-1] for t in res.heap_tables(win, plan))
        buf = res.heap.buf
        for _ in range(200):
            w = win.windows[int(rng.integers(0, len(win.windows)))]
            x = w.address + int(rng.integers(0, w.size))
            k = int(np.searchsorted(starts, np.uint64(x), side="right")) - 1
            assert starts[k] <= x < ends[k]
            ix = x - int(starts[k]) + int(offs[k])
            assert buf[ix] == mem.read(x, 1)[0]
        assert max(int(o) + w.size for o, w in zip(offs, win.windows)) + R.HEAP_SPARE <= buf.size


def test_a_heap_by_default_and_none_with_the_setting_off(monkeypatch):
    monkeypatch.delenv("WAVELIFT_CUDA_HEAP", raising=False)
    assert R.Resident(R.NumPyOps()).heap is not None  # (the default since session 50)
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "off")
    res = R.Resident(R.NumPyOps())
    assert res.heap is None and res.heap_offsets([]) is None and res.heap_tables(None, []) is None


def test_gather_copies_windows_of_one_copy_together(heap):
    """Windows next to each other in the arena at the same distance in the heap (parts of one
    allocation under 8 bytes apart) are one copy; each window's arena bytes are its guest bytes;
    the arena's bytes before the first window stay zero."""
    rng = np.random.default_rng(5)
    mem, bases = _memory(rng)
    ops = R.NumPyOps()
    res = R.Resident(ops)
    mem.resident = res
    calls = []
    real = ops.copy
    ops.copy = lambda *a: (calls.append((a[1], a[4])), real(*a))  # (arena offset, bytes)
    for _ in range(10):
        win = WindowSet(_windows(bases, rng, int(rng.integers(1, 8))), mem, host_arena=False)
        plan = res.prepare(win)
        calls.clear()
        arena = res.gather(win, plan)
        for w, o in zip(win.windows, win.offs.tolist()):
            assert np.array_equal(arena[o : o + w.size], np.frombuffer(mem.read(w.address, w.size), np.uint8))
        assert not arena[: win.offs[0]].any()
        # a3 and a3b are one copy (arena gap = heap gap = their guest gap < 8); a3c is not
        assert len(calls) == len(win.windows) - 1
        k = [w.name for w in win.windows].index("a3")
        hull = win.windows[k + 1].address + win.windows[k + 1].size - win.windows[k].address
        assert (int(win.offs[k]), hull) in calls


def test_growth_keeps_device_copies_and_drops_kept_plans(heap):
    """A copy placed after dispatches landed grows the heap: the device-only bytes stay (the
    host reads them after), kept plans go and ``changes`` moves (their calls held the old
    buffer)."""
    rng = np.random.default_rng(8)
    mem, bases = _memory(rng)
    ref = copy.deepcopy(mem)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    wins = _windows(bases, rng)
    for _ in range(4):
        d = Dispatch(res, mem, wins, rng)
        res.commit(d.win, d.plan, d.arena, d.written, d.spans)
        _land_ref(ref, d)
        d.win.release()
    res.kept[1] = object()
    changes, moves, cap = res.changes, res.heap.moves, res.heap.cap
    big = mem.alloc(2 * cap, name="big", data=rng.integers(0, 256, 2 * cap, dtype=np.uint8))
    ref.alloc(2 * cap, name="big", data=mem.find(big).data.copy())
    d = Dispatch(res, mem, wins + [Window(big + 1, 2 * cap - 1, "big", "t")], rng)
    assert res.heap.moves == moves + 1 and res.heap.cap > cap
    assert not res.kept and res.changes > changes
    assert d.sees(ref)
    res.commit(d.win, d.plan, d.arena, d.written, d.spans)
    _land_ref(ref, d)
    d.win.release()
    for a, b in zip(mem, ref):
        assert (a.data == b.data).all()


def test_freed_allocations_give_their_range_back(heap, young_gc):
    """An allocation freed and forgotten drops its copy; its range is free again and taken by
    the next copy that fits (the buffer does not grow)."""
    rng = np.random.default_rng(3)
    mem, bases = _memory(rng)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    Dispatch(res, mem, _windows(bases, rng), rng).win.release()
    gc.collect()
    h = res.heap
    e = res.entries[mem.find(bases[3])]
    off, used, cap = e.off, h.used(), h.cap
    del e
    mem.free(bases[3])
    gc.collect()
    # (a dispatch on other windows: the kept plan of the last one, which held the freed copy's
    # entry, goes -- a range comes back when nothing holds its entry)
    res.prepare(WindowSet([Window(bases[0], 64, "a0", "t")], mem, host_arena=False))
    nb = mem.alloc(19000, name="again", data=rng.integers(0, 256, 19000, dtype=np.uint8), align=256)
    win = WindowSet([Window(nb, 19000, "again", "t")], mem, host_arena=False)
    plan = res.prepare(win)
    assert h.cap == cap and off <= plan[0][0].off < off + 20000 + R.HEAP_SPARE
    assert h.used() == used - 20000 + 19000
    assert np.array_equal(plan[0][0].buf, mem.find(nb).data)


def test_commit_lands_into_heap_ranges_what_the_masked_commit_lands(heap):
    """Resident.commit with a heap (windows at the same distance landed by one wl_land over their
    hull) against the masked commit: each window's marked bytes into its allocation's bytes,
    nothing else in the heap changed, the map cleared; kept calls or not."""
    rng = np.random.default_rng(1190)
    for trial in range(16):
        mem, bases = _memory(rng)
        ops = R.NumPyOps()
        res = R.Resident(ops)
        mem.resident = res
        d = Dispatch(res, mem, _windows(bases, rng), rng)
        lands = []
        real = ops.land
        ops.land = lambda *a: (lands.append(a), real(*a))
        kept = ([w.address for w in d.win.windows], {}) if trial % 2 else None
        for _ in range(6):
            d.scribble(rng, 0.6)
            want = res.heap.buf.copy()
            m = d.written.copy()
            for (e, at), w, o in zip(d.plan, d.win.windows, d.win.offs.tolist()):
                sel = m[o : o + w.size] != 0
                want[e.off + at : e.off + at + w.size][sel] = d.arena[o : o + w.size][sel]
            spans = R.spans(*ops.runs(d.written), d.win)
            lands.clear()
            n = res.commit(d.win, d.plan, d.arena, d.written, spans, kept)
            assert n == int((m != 0).sum())
            assert np.array_equal(res.heap.buf, want) and not d.written.any()
            wrote = {bisect_k(d.win, a) for a, _ in spans}
            names = [d.win.windows[k].name for k in wrote]
            together = "a3" in names and "a3b" in names
            if kept is None:
                assert len(lands) == len(wrote) - together
        d.win.release()


def bisect_k(win, addr):
    return max(k for k, w in enumerate(win.windows) if w.address <= addr)


def test_refused_dispatch_leaves_the_heap_untouched(heap):
    """A refused dispatch (no commit) that scribbled over its whole arena changes no heap byte
    and no host byte."""
    rng = np.random.default_rng(77)
    mem, bases = _memory(rng)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    Dispatch(res, mem, _windows(bases, rng), rng).win.release()
    before = res.heap.buf.copy()
    host = [a._data.copy() for a in mem]
    for _ in range(10):
        d = Dispatch(res, mem, _windows(bases, rng), rng)
        d.arena[:] ^= 0xFF
        d.written[:] = 1
        d.win.release()
    assert np.array_equal(res.heap.buf, before)
    assert all(np.array_equal(a._data, h) for a, h in zip(mem, host))
    assert not any(res.entries[a].dev_dirty for a in mem)


def test_deferred_dispatches_are_read_before_a_new_copy_is_placed(heap, monkeypatch):
    """A new device copy may move the heap, and deferred dispatches' launches hold its addresses:
    ``Resident.entry`` reads them (``flush``) before placing the copy."""
    rng = np.random.default_rng(12)
    mem, bases = _memory(rng)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    seen = []

    def flush():
        seen.append((res.heap.moves, res.heap.top))
        res.pending = []

    monkeypatch.setattr(res, "flush", flush)
    res.pending = [object()]
    res.prepare(WindowSet([Window(bases[0], 64, "a0", "t")], mem, host_arena=False))
    assert seen == [(0, 0)]  # (before the first copy: nothing placed, nothing moved)


def _record_moves(monkeypatch) -> list:
    """Each heap move's (kept plans held, launches queued) as Resident._moved finds them."""
    moves: list = []
    real = R.Resident._moved

    def moved(self):
        moves.append((len(self.kept), len(self.pending)))
        real(self)

    monkeypatch.setattr(R.Resident, "_moved", moved)
    return moves


@pytest.mark.usefixtures("arena_path")
def test_the_deferred_session_on_a_heap(standin, monkeypatch):
    """test_defer_host's session against its model (the stand-in CuPy: the runtime, kept plans,
    deferred launches, wl_gate, refusals) with every copy in a heap that starts at 64 bytes."""
    import test_defer_host as D

    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.setattr(R, "HEAP_MIN", 64)
    moves = _record_moves(monkeypatch)
    D.test_a_deferred_session_equals_one_without_deferral_and_the_model(standin, monkeypatch)
    assert moves and all(p == 0 for _, p in moves)


@pytest.mark.usefixtures("arena_path")
def test_launches_on_a_heap_that_moves_amid_kept_and_deferred_plans(standin, monkeypatch):
    """Repeated launches (kept plans, deferred) and, between them, a launch into a new allocation
    larger than the heap's room, which moves the heap: every result is a + b, the old launch's
    plan is made again after each move, and no move happens with launches queued."""
    import test_defer_host as D

    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.setattr(R, "HEAP_MIN", 64)
    moves = _record_moves(monkeypatch)
    dev, k, (a, b, c, n) = D._warm(standin, monkeypatch)
    res = dev.memory.resident
    want = np.arange(D.N, dtype=np.float32) + 1
    go = lambda out: k.launch(global_size=(D.N, 1, 1), block=(64, 1, 1), args=[a, b, out, n])  # noqa: E731
    for big in (1 << 14, 1 << 16, 1 << 18):
        rs = [go(c) for _ in range(3)]
        assert res.pending  # (deferred: queued)
        before = res.heap.moves
        out = dev.alloc(big)
        r = go(out)
        assert r.refusal is None, r.refusal
        assert res.heap.moves > before and res.heap.cap > big
        assert np.array_equal(dev.download(out, np.float32)[: D.N], want)
        rs += [go(c) for _ in range(4)]
        assert all(x.refusal is None for x in rs)
        assert np.array_equal(dev.download(c, np.float32), want)
    assert any(kept for kept, _ in moves)  # (moved while kept plans were held)
    assert all(p == 0 for _, p in moves)
