"""The CUDA backend's per-dispatch host path (issue 24 item 2, decision 0029), without a GPU.

(1) The tracer's cache with device copies: an entry is taken again without hashing while the
    device copies' stamps say nothing wrote the bytes a scan read; a host write through the
    memory or a dispatch landing in an allocation (a pointer written on the device) is seen at
    the next trace.  Oracle: tracer.trace_uncached (tracing again) after every step of random
    sequences of host writes, landed dispatches, refused dispatches and traces, with pointers
    planted among the bytes.
(2) A layout-only WindowSet (host_arena=False) has exactly the layout, address tables and
    locate() of the host one.
(3) End to end through Device.launch with the stand-in device (tests/cuda/standin_cupy.py): a
    vadd whose stand-in kernel reads its kernel arguments from the arena (the pointers in the
    kernarg buffer, through the window tables it is handed, escaping where an address is in no
    window): many launches on one Device land exactly NumPy's a + b; a launch whose output
    pointer changes writes the new buffer and leaves the old one; an escaping launch changes
    no guest memory (host bytes and device copies) and later launches still land; one report
    read-back per dispatch, no host arena.
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
from testpaths import one_wave_config as _config  # noqa: E402

from wavelift.backends.cuda import resident as R  # noqa: E402
from wavelift.memory.guest import GuestMemory  # noqa: E402
from wavelift.trace import tracer  # noqa: E402
from wavelift.trace.windows import WindowSet  # noqa: E402

FIX = HERE.parent / "fixtures" / "gfx1030"


def _dispatch(res, mem, stores, refused=False):
    """One dispatch as the CUDA runtime carries it out on the resident copies (NumPyOps), its
    kernel played by NumPy: ``stores`` [(guest address, bytes)] inside the windows it has;
    landed unless ``refused``.  The windows: every allocation whole."""
    from wavelift.run.result import Window

    win = WindowSet([Window(a.base, a.size, a.name, "t") for a in mem], mem, host_arena=False)
    assert win.arena is None and win.written is None
    plan = res.prepare(win)
    arena = res.gather(win, plan)
    written = res.ops.zeros(win.nbytes)
    for addr, v in stores:
        o = win._index(addr)
        arena[o : o + len(v)] = v
        written[o : o + len(v)] = 1
    spans = R.spans(*res.ops.runs(written), win)
    if not refused:
        res.commit(win, plan, arena, written, spans)


def test_trace_cache_sees_host_and_device_writes_of_pointers():
    rng = np.random.default_rng(29)
    for trial in range(12):
        mem = GuestMemory()
        # a descriptor-like table (root), three buffers it may point at, one buffer never named
        bases = [
            mem.alloc(size, name=f"b{k}", align=256) for k, size in enumerate((256, 512, 1024, 96, 4096))
        ]
        res = R.Resident(R.NumPyOps())
        mem.resident = res
        root = bases[0]

        def ptr(target):
            return np.array([target & 0xFFFFFFFF, (target >> 32) & 0xFFFF], "<u4").view(np.uint8)

        mem.write(root + 16, ptr(bases[1]))
        cfg = _config([root & 0xFFFFFFFF, root >> 32])
        hashed = []
        real = tracer._scanned

        def counting(memory, a):
            hashed.append(a.base)
            return real(memory, a)

        tracer._scanned = counting
        try:
            assert tracer.trace(mem, cfg) == tracer.trace_uncached(mem, cfg)
            _dispatch(res, mem, [])  # (every allocation gets its device copy)
            for step in range(40):
                r = rng.random()
                where = bases[int(rng.integers(0, len(bases)))]
                at = 8 * int(rng.integers(0, 12))
                target = bases[int(rng.integers(1, len(bases)))]
                value = ptr(target) if rng.random() < 0.7 else rng.integers(0, 256, 8, dtype=np.uint8)
                if r < 0.3:  # the host writes (a pointer, or bytes)
                    mem.write(where + at, value)
                elif r < 0.6:  # a dispatch writes it on the device
                    _dispatch(res, mem, [(where + at, value)])
                elif r < 0.75:  # a refused dispatch: nothing lands
                    _dispatch(res, mem, [(where + at, value)], refused=True)
                elif r < 0.9:  # the host writes the bytes that are there (a Device's kernargs)
                    _dispatch(res, mem, [])  # (what the host wrote goes up; small copies shadowed)
                    tracer.trace(mem, cfg)
                    mem.write(where + at, mem.read(where + at, 8))
                    hashed.clear()
                    got = tracer.trace(mem, cfg)
                    seen = list(hashed)
                    assert got == tracer.trace_uncached(mem, cfg)
                    if mem.find(where).size <= R.SHADOW_BYTES:
                        assert where not in seen, (trial, step)  # (no hash: its stamp went back)
                hashed.clear()
                got = tracer.trace(mem, cfg)
                want = tracer.trace_uncached(mem, cfg)
                assert got == want, (trial, step)
                hashed.clear()
                # nothing changed since: a hit that hashes nothing (every scanned allocation has
                # a device copy whose stamp still holds)
                assert tracer.trace(mem, cfg) == want
                assert hashed == [], (trial, step)
        finally:
            tracer._scanned = real


def test_trace_cache_without_device_copies_still_hashes():
    """A memory without device copies has no stamps: every hit checks the digests (as before)."""
    mem = GuestMemory()
    root = mem.alloc(256, name="root")
    buf = mem.alloc(256, name="buf")
    mem.write(root, np.array([buf & 0xFFFFFFFF, buf >> 32], "<u4"))
    cfg = _config([root & 0xFFFFFFFF, root >> 32])
    want = tracer.trace(mem, cfg)
    assert [w.address for w in want] == [root, buf]
    mem.find(root).data[:8] = 0  # (behind the memory's back: only a digest sees it)
    assert tracer.trace(mem, cfg) == tracer.trace_uncached(mem, cfg)
    assert [w.address for w in tracer.trace(mem, cfg)] == [root]


def test_shared_arrays_have_no_stamp():
    mem = GuestMemory()
    arr = np.zeros(64, np.uint8)
    a = mem.add(0x10000000, arr, name="shared")
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    res.entry(a)
    assert res.stamp(a) is None
    b = mem.alloc(64, name="own")
    assert res.stamp(mem.find(b)) is None  # (no device copy yet)
    res.entry(mem.find(b))
    s0 = res.stamp(mem.find(b))
    assert s0 is not None and res.stamp(mem.find(b)) == s0
    mem.peek(b, 8)  # (a read: no change)
    assert res.stamp(mem.find(b)) == s0
    mem.write(b, b"x")
    assert res.stamp(mem.find(b)) != s0


def test_layout_only_windowset_equals_the_host_one():
    from wavelift.run.result import Window

    rng = np.random.default_rng(7)
    mem = GuestMemory()
    bases = [mem.alloc(int(s), name=f"a{k}", align=8) for k, s in enumerate(rng.integers(8, 5000, 12))]
    for _ in range(50):
        pick = rng.choice(len(bases), int(rng.integers(1, len(bases))), replace=False)
        ws = []
        for k in pick:
            a = mem.find(bases[k])
            lo = 8 * int(rng.integers(0, a.size // 8))
            ws.append(Window(a.base + lo, int(rng.integers(1, a.size - lo + 1)), a.name, "t"))
        host = WindowSet(ws, mem)
        lay = WindowSet(ws, mem, host_arena=False)
        try:
            assert lay.windows == host.windows and lay.nbytes == host.arena.size
            assert (lay.offs == host.offs).all() and (lay.starts == host.starts).all()
            assert (lay.ends == host.ends).all()
            for w in host.windows:
                for lo, hi in ((w.address, w.address + w.size - 4), (w.address - 8, w.address)):
                    assert lay.locate(lo, hi, 4) == host.locate(lo, hi, 4)
        finally:
            host.release()
            lay.release()


# ---- end to end with the stand-in device -------------------------------------------------------


def _vadd_from_kernargs(n_max=1 << 16, count=7):
    """A stand-in for clang's vadd (basic.cl: c[i] = a[i] + b[i] for i < n) that reads what the
    real kernel reads: the kernarg pointer from the user SGPRs (P), a, b, c and n from the
    kernarg buffer in the arena, each address resolved through the window tables; an address in
    no window is an escape (recorded in the report as the kernel does; nothing stored);
    ``count``: the instructions it adds to the report's slot 0 (0: none)."""
    from wavelift.backends.cuda import codegen as G

    def kernel(arena, written, ws, we, wo, consts):
        P, stats, status, esc, starts, ends, offs = _report_arrays(consts, ws, we, wo)

        def at(addr, nbytes):
            k = int(np.searchsorted(starts, np.uint64(addr), side="right")) - 1
            if k < 0 or addr + nbytes > int(ends[k]):
                if int(status[4]) == 0:
                    esc[:8] = [0, addr & 0xFFFFFFFF, addr >> 32, 0, 0, 0, 1, 0]
                status[4] += 1
                stats[2] += 1
                return None
            return int(addr - int(starts[k]) + int(offs[k]))

        ka = int(P[G.P_USER + 2]) | (int(P[G.P_USER + 3]) << 32)
        o = at(ka, 28)
        if o is None:
            return
        words = np.asarray(arena[o : o + 28]).view(np.uint32)
        a, b, c = (int(words[2 * i]) | (int(words[2 * i + 1]) << 32) for i in range(3))
        n = min(int(words[6]), n_max)
        oa, ob, oc = at(a, 4 * n), at(b, 4 * n), at(c, 4 * n)
        if None in (oa, ob, oc):
            return
        f32 = lambda q: np.asarray(arena[q : q + 4 * n]).view(np.float32)  # noqa: E731
        arena[oc : oc + 4 * n] = (f32(oa) + f32(ob)).view(np.uint8)
        mark(written, oc, oc + 4 * n)
        stats[8] += count

    return kernel


def _report_arrays(consts, ws, we, wo) -> tuple:
    """What a stand-in kernel reads and writes besides the arena: its parameter words, the
    report's stats, status and escape records (through their pointer constants), and the window
    tables without their sentinel."""
    return (
        consts["P"].view(np.uint32),
        _at(consts["WL_STATS"], np.uint64, 8 + 512),
        _at(consts["WL_STATUS"], np.uint32, 16),
        _at(consts["WL_ESC"], np.uint32, 128),
        np.asarray(ws[:-1]),
        np.asarray(we[:-1]),
        np.asarray(wo[:-1]),
    )


def _at(var, dtype, count):
    import ctypes

    ptr = int(var.view(np.uint64)[0])
    return np.ctypeslib.as_array(
        ctypes.cast(ptr, ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype))), (count,)
    )


def _device():
    import wavelift

    dev = wavelift.Device("gfx1030", backend="cuda", mode="lane", record=False)
    k = dev.load_code_object(str(FIX / "basic-O2-w32-flat.hsaco")).kernel("vadd")
    return dev, k


def _cubin_on_disk():
    """vadd's module built once, by a launch of its own on a Device of its own with a module
    cache of its own (the stand-in kernel none: nothing runs), so that its cubin is in the disk
    cache before a session that builds the module again (a fresh execute._CACHE) is compared
    from its first launch on with another such session: a cold cache's first build says
    stats["cubin"] == "compiled", every later one "disk cache" (the first of the compared
    sessions differed from the second where no earlier test or xdist worker had built vadd with
    the code generation of the tree: the first test of a file, now and then)."""
    import standin_cupy as S

    from wavelift.run import execute

    saved = execute._CACHE, S.STATE.kernel
    execute._CACHE, S.STATE.kernel = {}, None
    try:
        dev, k = _device()
        a, c = dev.upload(np.zeros(64, np.float32)), dev.alloc(256)
        r = k.launch(global_size=(64, 1, 1), block=(64, 1, 1), args=[a, a, c, np.uint32(64)])
        assert r.refusal is None, r.refusal
    finally:
        execute._CACHE, S.STATE.kernel = saved


def test_standin_launches_land_and_pointer_changes_are_seen(standin):
    dev, k = _device()
    n = 64
    a = dev.upload(np.arange(n, dtype=np.float32))
    b = dev.upload(np.full(n, 0.5, np.float32))
    c1, c2 = dev.alloc(4 * n), dev.alloc(4 * n)
    standin.kernel = _vadd_from_kernargs()
    for i in range(30):
        r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c1, np.uint32(n)])
        assert r.refusal is None, r.refusal
        assert r.write_spans == [(c1.address, 4 * n)]
        if i == 10:  # the host writes an input between launches: the next launch sees it
            dev.write(a, np.arange(n, dtype=np.float32) * 2)
    want = np.arange(n, dtype=np.float32) * 2 + 0.5
    assert np.array_equal(dev.download(c1, np.float32), want)
    # the output pointer changes (the same user data: the kernarg buffer is reused): c2 is written
    r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c2, np.uint32(n)])
    assert r.refusal is None, r.refusal and r.write_spans == [(c2.address, 4 * n)]
    assert np.array_equal(dev.download(c2, np.float32), want)
    # c1's output as an input: a device-only result read by the next launch
    r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[c1, c2, c2, np.uint32(n)])
    assert r.refusal is None, r.refusal
    assert np.array_equal(dev.download(c2, np.float32), 2 * want)
    assert np.array_equal(dev.download(c1, np.float32), want)
    # the same launch again and again: one report read back per dispatch (a get, or the copy
    # into the kept host array inside a kept plan's graph), no constant copied again, no device
    # array made
    k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c1, np.uint32(n)])
    standin.calls.clear()
    for _ in range(10):
        r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c1, np.uint32(n)])
    assert standin.calls["get"] + standin.calls["memcpy_d2h_async"] == 10, dict(standin.calls)
    assert standin.calls["memcpy_h2d"] == 0 and standin.calls["zeros"] == 0, dict(standin.calls)
    # the kernargs and the dispatch packet, written again with the same bytes: nothing goes up
    assert standin.calls["set"] == 0, dict(standin.calls)


@pytest.mark.usefixtures("arena_path")
def test_standin_escaping_launch_changes_no_memory(standin):
    dev, k = _device()
    n = 64
    a = dev.upload(np.arange(n, dtype=np.float32))
    b = dev.upload(np.ones(n, np.float32))
    c = dev.alloc(4 * n)
    standin.kernel = _vadd_from_kernargs()
    r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(n)])
    assert r.refusal is None, r.refusal
    res = dev.memory.resident
    dev_before = {x.base: e.buf.copy() for x, e in res.entries.items()}
    dirty_before = {x.base: e.dev_dirty.ranges() for x, e in res.entries.items()}
    # n larger than the buffers: the stand-in kernel's accesses leave every window
    r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(4 * n)])
    assert r.refusal is not None and r.refusal.code == "escape", r.refusal
    assert r.write_spans == [] and r.stats["bytes_written"] == 0
    for x, e in res.entries.items():  # (the launch's own kernargs and packet: the host wrote them)
        if x.base in (a.address, b.address, c.address):
            assert np.array_equal(e.buf, dev_before[x.base]), x.name
            # (c: the refused launch's trace read c's head, which brought it down: none newer)
            assert e.dev_dirty.ranges() == (dirty_before[x.base] if x.base != c.address else []), x.name
    assert np.array_equal(dev.download(c, np.float32), np.arange(n, dtype=np.float32) + 1)
    # and the next launch lands again
    dev.write(b, np.full(n, 3, np.float32))
    r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(n)])
    assert r.refusal is None, r.refusal
    assert np.array_equal(dev.download(c, np.float32), np.arange(n, dtype=np.float32) + 3)


def test_kept_arena_gathers_only_changed_windows():
    """Resident.gather into a kept (staging) arena skips the windows whose device copies have not
    changed since they were last there; after a kernel may have stored into it (launched),
    everything is gathered again unless the dispatch landed (commit).  Oracle: a fresh arena
    gathered whole, after every step of random host writes, landed and refused dispatches."""
    from wavelift.run.result import Window

    rng = np.random.default_rng(2029)
    for _ in range(10):
        mem = GuestMemory()
        bases = [mem.alloc(int(s), name=f"a{k}", align=8) for k, s in enumerate((64, 300, 5000, 96))]
        res = R.Resident(R.NumPyOps())
        mem.resident = res
        wins = [Window(a.base, a.size, a.name, "t") for a in mem]
        for step in range(40):
            win = WindowSet(wins, mem, host_arena=False)
            plan = res.prepare(win)
            arena, written, _ = res.staging(win.nbytes, 64)
            copies = res.ops.up + res.ops.down
            n_copy = []
            real_copy = res.ops.copy
            res.ops.copy = lambda *a, **k: (n_copy.append(1), real_copy(*a, **k))  # type: ignore[method-assign]
            res.gather(win, plan, arena)
            res.ops.copy = real_copy  # type: ignore[method-assign]
            fresh = res.gather(win, plan)
            assert np.array_equal(arena, fresh), step
            assert res.ops.up + res.ops.down == copies
            r = rng.random()
            written[:] = 0
            if r < 0.3:  # the host writes (the same bytes half of the time)
                at = bases[int(rng.integers(0, len(bases)))]
                v = mem.read(at, 8) if rng.random() < 0.5 else rng.integers(0, 256, 8, dtype=np.uint8)
                mem.write(at, v)
            elif r < 0.8:  # a dispatch stores; it lands, or is refused
                res.launched(arena)
                k = int(rng.integers(0, len(win.windows)))
                w, o = win.windows[k], int(win.offs[k])
                at = int(rng.integers(0, w.size - 8))
                arena[o + at : o + at + 8] = rng.integers(0, 256, 8, dtype=np.uint8)
                written[o + at : o + at + 8] = 1
                if r < 0.6:
                    res.commit(win, plan, arena, written, R.spans(*res.ops.runs(written), win))
            else:  # a dispatch that lands without storing
                res.launched(arena)
                res.commit(win, plan, arena, written, [])
            if step and r >= 0.8:
                # nothing changed the device copies: the next gather copies nothing
                win2 = WindowSet(wins, mem, host_arena=False)
                plan2 = res.prepare(win2)
                n_copy.clear()
                res.ops.copy = lambda *a, **k: (n_copy.append(1), real_copy(*a, **k))  # type: ignore[method-assign]
                res.gather(win2, plan2, arena)
                res.ops.copy = real_copy  # type: ignore[method-assign]
                assert n_copy == [], step


def test_standin_preloads_of_another_memory_are_not_taken(standin):
    """Two Devices place the same buffers at the same addresses (the same windows, user data and
    module): the second's kernel argument n, preloaded into constant memory (WL_PRE), is its
    own, not the first Device's kept result (runtime._preloads checks this dispatch's device
    copies)."""
    from wavelift.run import execute

    got = []
    for n in (64, 48):
        dev, k = _device()
        a = dev.upload(np.arange(64, dtype=np.float32))
        b = dev.upload(np.ones(64, np.float32))
        c = dev.alloc(4 * 64)
        standin.kernel = _vadd_from_kernargs()
        for _ in range(3):
            r = k.launch(global_size=(64, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(n)])
            assert r.refusal is None, r.refusal
        got.append([w.address for w in r.windows])
        # (the builds launched: a module's own and its lean one -- decision 0049's amendment h163:
        # built in the background, or read from the disk at once)
        mods = [
            b
            for m in execute._CACHE.values()
            if getattr(m, "preloads", ((), ()))[0]
            for b in (m, *m._siblings.values())
            if b._mod is not None
        ]
        pre = [m._mod.vars["WL_PRE"].buf.view(np.uint32) for m in mods if "WL_PRE" in m._mod.vars]
        assert any(n in p[:64] for p in pre), (n, [p[:16] for p in pre])
        out = dev.download(c, np.float32)
        assert np.array_equal(out[:n], np.arange(n, dtype=np.float32) + 1)
    assert got[0] == got[1]  # (the same windows: the kept result's key matched)


def test_standin_more_runs_than_the_report_holds(standin):
    """A dispatch whose written bytes form more runs than the report carries (INLINE_RUNS): the
    runs come back in a second read-back after the scan runs again with room for all; the spans
    are exact (every other float of c written: one run each)."""
    from wavelift.backends.cuda.runtime import INLINE_RUNS

    dev, k = _device()
    n = 4 * INLINE_RUNS
    a = dev.upload(np.arange(n, dtype=np.float32))
    b = dev.upload(np.ones(n, np.float32))
    c = dev.upload(np.full(n, -1, np.float32))
    full = _vadd_from_kernargs()

    def every_other(arena, written, ws, we, wo, consts):
        full(arena, written, ws, we, wo, consts)
        k_ = int(np.searchsorted(np.asarray(ws[:-1]), np.uint64(c.address), side="right")) - 1
        o = int(c.address - int(ws[k_]) + int(wo[k_]))
        for i in range(1, n, 2):  # (odd floats: not written after all)
            mark(written, o + 4 * i, o + 4 * i + 4, 0)

    standin.kernel = every_other
    standin.calls.clear()
    r = k.launch(global_size=(64, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(n)])
    assert r.refusal is None, r.refusal
    assert r.write_spans == [(c.address + 8 * i, 4) for i in range(n // 2)]
    assert r.stats["bytes_written"] == 2 * n
    assert standin.calls["get"] >= 2  # (the report, then the runs)
    want = np.full(n, -1, np.float32)
    want[0::2] = np.arange(0, n, 2, dtype=np.float32) + 1
    assert np.array_equal(dev.download(c, np.float32), want)


@pytest.mark.parametrize("field", ["instruction", "kind"])
def test_an_escape_record_the_module_cannot_make_is_a_bad_report(field):
    """An escape record naming an instruction past the program's or an access kind codegen does
    not have is refused `backend.bad_report` (nothing lands), never an IndexError / KeyError out
    of the report's read."""
    from types import SimpleNamespace

    from wavelift.backends.cuda import runtime as RT
    from wavelift.errors import Refused

    rt = RT.Runtime.__new__(RT.Runtime)
    rt.m = SimpleNamespace(
        slots=[], program=SimpleNamespace(instructions=[SimpleNamespace(offset=0, text="x")])
    )
    rt.escapes = []
    host = np.zeros(RT.REPORT_BYTES, np.uint8)
    host[RT.STATS_BYTES : RT.STATS_BYTES + 64].view(np.uint32)[4] = 1  # (one record)
    rec = host[RT.STATS_BYTES + 64 : RT.STATS_BYTES + 96].view(np.uint32)
    rec[6] = min(RT.G.KIND_NAMES)  # (a kind codegen has)
    if field == "instruction":
        rec[0] = 1
    else:
        rec[6] = max(RT.G.KIND_NAMES) + 1
    with pytest.raises(Refused) as got:
        rt._take_report(host)
    assert got.value.refusal.code == "backend.bad_report", got.value
