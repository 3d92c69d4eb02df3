"""Dispatches proved unrefusable run in place on the device heap (WAVELIFT_CUDA_INPLACE=proved,
decision 0049 step 4, its amendment h125), on the CUDA backend's host path without a GPU: the
stand-in ``cupy`` (standin_cupy.py) and a stand-in kernel that plays the dispatch through the
arena, map and window tables it is handed -- it runs the dispatch on the NumPy backend (lane
mode) over a model memory kept in step with the test's, and stores the model's written bytes
where the tables it was launched with put their addresses, marking the map.  So the oracle is
the NumPy backend, and what is checked is the glue: which dispatches run in place (the real
proof on the real program), the heap as arena and map, the heap offsets as window offsets,
the runs as write spans, lazy landing, the failed proof's refusal and unusable copies, and the
deadline."""

from __future__ import annotations

import copy
import pathlib
import sys
import time

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "bench"))
import standin_cupy as S  # noqa: E402
from fixture_dispatches import pass_dispatches  # noqa: E402
from test_cuda_backend import translate_dispatch  # noqa: E402
from test_resident_runtime_host import FakeModule  # noqa: E402
from test_unrefusable_host import VADD, _caught, _vadd  # noqa: E402

from wavelift.backends.cuda import resident as R  # noqa: E402
from wavelift.backends.cuda import runtime as RT  # noqa: E402
from wavelift.run import execute as X  # noqa: E402
from wavelift.run.execute import execute_dispatch  # noqa: E402


@pytest.fixture(autouse=True, params=["bytes", "bits"])
def setting(request, monkeypatch):
    """In place on, on the heap, with either map form (the heap's map and the module's kernel
    take the setting's form: both work the same way here)."""
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "proved")
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.setenv("WAVELIFT_CUDA_MAP", request.param)
    return request.param


class Player(FakeModule):
    """A module whose kernel plays its dispatch on the NumPy backend over ``model`` (a copy of
    the memory, kept in step), storing the written bytes through the tables it is launched with
    (arena, map, window starts, offsets) and marking them; ``escape``: its report has an escape
    too (what a wrong proof would show)."""

    def __init__(self, program, model, cfg):
        super().__init__(program, 0, 0, 0, 0)
        # (the NumPy runs take a copy of the config: execute keeps its records by config object,
        # and the CUDA dispatch's record must stay its own)
        self.model, self.cfg = model, copy.deepcopy(cfg)
        self.launches: list = []  # (arena, map, offsets) of each launch
        self.sleep = 0.0
        # (what a kept plan checks of a module: its loaded function, constant writes, upgrades)
        self._fn, self._puts, self.upgrade = self._launch, 0, None

    def function(self):
        return self._fn

    def _launch(self, grid, block, args, shared_mem=0):
        """The kernel's launch as the stand-in's launches are: noted, not run, while a stream
        captures a graph (then run at each of its launches)."""
        if not S._captured(lambda: self._kernel(grid, block, args, shared_mem)):
            self._kernel(grid, block, args, shared_mem)

    def put_constant(self, name, host):
        super().put_constant(name, host)
        self._puts += 1

    def _kernel(self, grid, block, args, shared_mem=0):
        arena, written, ws, we, wo, _, _, g0 = args
        assert int(g0) == 0  # (one launch: the player runs the whole dispatch)
        self.launches.append((arena, written, np.array(wo)))
        r = execute_dispatch(copy.deepcopy(self.model), self.cfg, backend="numpy", mode="lane")
        if r.refusal is not None:  # (an escape: the kernel reports it and stores nothing)
            assert r.refusal.code == "escape", r.refusal
            self.escape, self.spans = True, []
            self._report()
            self.escape = False
            return
        r = execute_dispatch(self.model, self.cfg, backend="numpy", mode="lane")
        starts = np.asarray(ws[:-1])
        for addr, size in r.write_spans:
            k = int(np.searchsorted(starts, np.uint64(addr), side="right")) - 1
            assert addr + size <= int(we[k])
            o = addr - int(starts[k]) + int(wo[k])
            arena[o : o + size] = np.frombuffer(self.model.read(addr, size), np.uint8)
            S.mark(written, o, o + size)
        self.spans = r.write_spans
        self._report()
        time.sleep(self.sleep)


def rig(monkeypatch, mem, cfg, player=None):
    """``mem``, ``cfg`` on the CUDA backend's host path with a Player (or ``player``, a class of
    them) for its module."""
    from wavelift.backends import cuda

    monkeypatch.setitem(sys.modules, "cupy", S.fake_cupy())
    monkeypatch.setattr(R, "_OPS", None)
    monkeypatch.setattr(cuda, "available", lambda: True)
    monkeypatch.setattr(RT, "_UNREFUSABLE", {})
    prog, _ = translate_dispatch(mem, cfg)
    fm = (player or Player)(prog, copy.deepcopy(mem), cfg)
    monkeypatch.setattr(cuda, "build_module", lambda *x, **k: fm)
    return fm


def _run(mem, cfg, **kw):
    return execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache={}, **kw)


def _unusable_after(mem, cfg, fm, cache) -> None:
    """After a run whose copies were made unusable: the next dispatch on them refused
    `backend.proof` before any launch, and the output (newer on the device only) unreadable."""
    n = len(fm.launches)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    assert len(fm.launches) == n
    c_addr, c_size = fm.spans[0]
    with pytest.raises(Exception, match="backend.proof"):
        mem.read(c_addr, c_size)


def _heap_windows(mem, r) -> list:
    """(heap lo, hi) of each window of the dispatch's device copies."""
    res = mem.resident
    out = []
    for w in r.windows:
        a = mem.find(w.address, w.size)
        e = res.entries[a]
        out.append((e.off + w.address - a.base, e.off + w.address - a.base + w.size))
    return out


def _consistent(mem) -> None:
    """Every device copy holds its allocation's host bytes wherever the device holds nothing
    newer, and nothing the host wrote waits to go up (a dispatch's windows: prepare's uploads)."""
    res = mem.resident
    for x, e in res.entries.items():
        dev = np.array(res.heap.buf[e.off : e.off + x.size])
        same = np.ones(x.size, bool)
        for lo, hi in e.dev_dirty.ranges():
            same[lo:hi] = False
        assert not e.host_dirty, x.name
        assert np.array_equal(dev[same], x._data[same]), x.name


def _seen(mem) -> dict:
    """What a read of each allocation would give, by base, found without pulling: its host
    bytes, the device's where the device holds newer ones."""
    res = mem.resident
    heap = np.array(res.heap.buf)
    out = {}
    for x, e in res.entries.items():
        data = x._data.copy()
        for lo, hi in e.dev_dirty.ranges():
            data[lo:hi] = heap[e.off + lo : e.off + hi]
        out[x.base] = bytes(data)
    return {x.base: out.get(x.base, bytes(x._data)) for x in mem}


def _same_memory(mem, model) -> None:
    for x in model:
        assert bytes(mem.read(x.base, x.size)) == bytes(model.read(x.base, x.size)), x.name


def _shade():
    return pass_dispatches("shade", 64, 32)[0]


def _divergent_loop():
    from reference import cases as C

    got = []
    for case in C.cases_for("divergent_loop", 32):
        if case.shape.name != "small":
            continue

        def go(dev, k, case=case):
            args = [dev.upload(a.value, name=a.name) if a.is_buffer else a.value for a in case.args()]
            k.launch(**case.shape.launch_kwargs(), args=args)

        got += _caught(VADD, "divergent_loop", go)
    return got[0]


@pytest.mark.parametrize("make", [_vadd, _shade], ids=["vadd", "shade"])
def test_a_proved_dispatch_runs_in_place(monkeypatch, make):
    mem, cfg = make()
    fm = rig(monkeypatch, mem, cfg)
    before = {x.base: x._data.copy() for x in mem}
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    assert r.stats["in_place"] == "proved"
    res = mem.resident
    # the kernel ran on the heap itself: its buffer, its map, the copies' heap offsets
    ((arena, written, wo),) = fm.launches
    assert arena is res.heap.buf and written is not None and R.is_bits(written) == res.heap.bits
    assert [int(x) for x in wo[:-1]] == [lo for lo, _ in _heap_windows(mem, r)]
    assert not res._staging  # (no arena gathered, nothing committed)
    assert not R.map_flags(res.heap.written).any()  # (its marks cleared)
    _consistent(mem)
    # the write spans are exactly NumPy's, and the bytes stand on the device only
    assert r.write_spans == fm.spans and r.stats["bytes_written"] == sum(n for _, n in fm.spans)
    for addr, size in r.write_spans:
        x = mem.find(addr, size)
        assert np.array_equal(x._data, before[x.base])  # (not landed on the host yet)
        e = res.entries[x]
        assert e.dev_dirty.ranges() == [(addr - x.base, addr - x.base + size)]
    _same_memory(mem, fm.model)  # (lazily, on read: equal to the NumPy backend's)
    assert all(not e.dev_dirty for e in res.entries.values())


def test_dispatches_in_place_chain_and_see_host_writes(monkeypatch):
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    for i in range(3):
        r = _run(mem, cfg)
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
        # the host writes an input between dispatches: both memories
        x = next(x for x in mem if x.name == "a")
        for m in (mem, fm.model):
            m.write(x.base + 4 * i, np.full(4 + i, i + 7, np.uint8))
    _same_memory(mem, fm.model)
    assert len(fm.launches) == 3 and all(arena is mem.resident.heap.buf for arena, _, _ in fm.launches)


def test_a_dispatch_not_proved_takes_the_arena(monkeypatch):
    mem, cfg = _divergent_loop()
    fm = rig(monkeypatch, mem, cfg)
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    assert r.stats["in_place"] == "loop"
    res = mem.resident
    ((arena, _, wo),) = fm.launches
    assert arena is not res.heap.buf and res._staging
    assert [int(x) for x in wo[:-1]] == [int(o) for o in _offs(mem, r)]
    assert r.write_spans == fm.spans
    _same_memory(mem, fm.model)


def _offs(mem, r):
    from wavelift.trace.windows import WindowSet

    return WindowSet(r.windows, mem, host_arena=False).offs


def _count_at(mem) -> int:
    """The address of vadd's count in its kernel arguments (after the a, b, c pointers)."""
    a, b = (next(x for x in mem if x.name == nm).base for nm in ("a", "b"))
    pat = np.array([a, b], np.uint64).tobytes()
    for x in mem:
        at = bytes(x._data).find(pat)
        if at >= 0:
            return x.base + at + 24
    raise AssertionError("no kernel arguments")


def test_a_refused_dispatch_not_proved_changes_nothing(monkeypatch):
    """vadd over 1,024 lanes of 256-float buffers with n = 256 runs in place; the host then
    writes n = 1,024 into its kernel arguments: the kept proof no longer holds (the preloaded
    word changed), the predicate says `global_access`, the dispatch runs on the arena and is
    refused `escape` (NumPy refuses it too) -- no device and no host byte changed."""
    mem, cfg = _vadd(256, grid=1024, count=256)
    fm = rig(monkeypatch, mem, cfg)
    r = _run(mem, cfg)
    assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
    at = _count_at(mem)
    for m in (mem, fm.model):
        m.write(at, np.array([1024], np.uint32))
    res = mem.resident
    r = _run(mem, cfg)  # (its upload of the new count first: then nothing may change)
    assert r.refusal is not None and r.refusal.code == "escape", r.refusal
    assert r.stats["in_place"] == "global_access"
    heap0, host0 = np.array(res.heap.buf), {x.base: bytes(x._data) for x in mem}
    dirty0 = {x.base: e.dev_dirty.ranges() for x, e in res.entries.items()}
    r = _run(mem, cfg)
    assert r.refusal is not None and r.refusal.code == "escape", r.refusal
    assert np.array_equal(np.array(res.heap.buf), heap0)
    assert {x.base: bytes(x._data) for x in mem} == host0
    assert {x.base: e.dev_dirty.ranges() for x, e in res.entries.items()} == dirty0
    assert all(e.broken is None for e in res.entries.values())
    for m in (mem, fm.model):
        m.write(at, np.array([256], np.uint32))
    r = _run(mem, cfg)  # (proved again: in place)
    assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
    _same_memory(mem, fm.model)


def test_in_place_by_default_off_by_either_setting(monkeypatch):
    """Both settings unset (the defaults since session 50): in place on the heap; either one off:
    the arena."""
    for env in (
        {"WAVELIFT_CUDA_INPLACE": None, "WAVELIFT_CUDA_HEAP": None},
        {"WAVELIFT_CUDA_INPLACE": "off"},
        {"WAVELIFT_CUDA_HEAP": "off"},
    ):
        for k, v in env.items():
            if v is None:
                monkeypatch.delenv(k, raising=False)
            else:
                monkeypatch.setenv(k, v)
        mem, cfg = _vadd(64)
        fm = rig(monkeypatch, mem, cfg)
        r = _run(mem, cfg)
        ((arena, _, _),) = fm.launches
        if "off" in env.values():
            assert r.refusal is None and "in_place" not in r.stats
            assert mem.resident.heap is None or arena is not mem.resident.heap.buf
        else:
            assert r.refusal is None and r.stats.get("in_place") == "proved", (r.refusal, r.stats)
            assert arena is mem.resident.heap.buf
        _same_memory(mem, fm.model)
        monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "proved")
        monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")


def test_a_wrong_proof_is_refused_and_its_copies_are_unusable(monkeypatch):
    """An escaping dispatch proved by a wrong predicate: refused ``backend.proof``, no heap byte
    outside its windows changed, every later dispatch on its copies refused, a host read of the
    bytes only the device held refused, the others' host bytes good."""
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    r = _run(mem, cfg)  # (in place, rightly: c newer on the device only)
    assert r.refusal is None and r.stats["in_place"] == "proved"
    c_addr, c_size = r.write_spans[0]
    inputs = {x.base: bytes(mem.read(x.base, x.size)) for x in mem if x.base != mem.find(c_addr).base}
    res = mem.resident
    heap0 = np.array(res.heap.buf)
    wins = _heap_windows(mem, r)
    monkeypatch.setattr(RT, "_unrefusable", lambda *a: None)  # (the wrong proof)
    fm.escape = True
    fm.model = copy.deepcopy(fm.model)
    r = _run(mem, cfg)
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    assert "escape" in r.refusal.message
    assert not r.write_spans
    outside = np.ones(heap0.size, bool)
    for lo, hi in wins:
        outside[lo:hi] = False
    assert np.array_equal(np.array(res.heap.buf)[outside], heap0[outside])
    assert not R.map_flags(res.heap.written).any()
    fm.escape = False
    n = len(fm.launches)
    r = _run(mem, cfg)  # (the next dispatch on those copies: refused before any launch)
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    assert len(fm.launches) == n
    with pytest.raises(Exception, match="backend.proof"):  # (c: its only current copy overwritten)
        mem.read(c_addr, c_size)
    for base, data in inputs.items():  # (the inputs: the host's bytes are current)
        x = mem.find(base)
        assert bytes(x._data) == data


def test_a_store_into_a_preloaded_word_is_a_failed_proof(monkeypatch):
    """The runs meeting a preloaded word (the kernel read a copy of it) fail the proof."""
    mem, cfg = _vadd(64)
    fm = rig(monkeypatch, mem, cfg)
    fm.preloads = ((), ())

    def preloads(self, enabled):  # (c's first word preloaded: a store there voids the proof)
        self.mirrored += [
            (int(self.win.offs[k]), 4)
            for k in range(len(self.win.windows))
            if self.win.windows[k].size == 256
        ]
        return [], True

    monkeypatch.setattr(RT.Runtime, "_preloads", preloads)
    r = _run(mem, cfg)
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    assert "preloaded" in r.refusal.message


@pytest.mark.parametrize("defer", ["off", "on"])
def test_a_store_into_a_preloaded_word_fails_a_kept_run(monkeypatch, defer):
    """A kept in-place run (waited for, or deferred) whose runs meet a preloaded word -- here a's
    first, which no run stores but this one -- fails the proof, after runs of the same plan that
    did not: what the runs are to the preloaded words is looked at anew for other runs (kept per
    cut: runtime._settle_in_place's facts)."""
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", defer)
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    a = next(x for x in mem if x.name == "a")

    def preloads(self, enabled):  # (a's first word preloaded)
        self.mirrored += [
            (int(self.win.offs[k]), 4) for k, w in enumerate(self.win.windows) if w.address == a.base
        ]
        return [], True

    monkeypatch.setattr(RT.Runtime, "_preloads", preloads)
    real, store = fm._kernel, [False]

    def kernel(grid, block, args, shared_mem=0):
        real(grid, block, args, shared_mem)
        if store[0]:  # (a's first byte marked written: its bytes unchanged, the run is what counts)
            _, written, ws, _, wo, *_ = args
            k = int(np.searchsorted(np.asarray(ws[:-1]), np.uint64(a.base), side="right")) - 1
            S.mark(written, int(wo[k]), int(wo[k]) + 1)

    fm._kernel = kernel
    cache: dict = {}
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(5)]
    for r in rs:
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
    assert X.AGAIN_HITS[0] and X._PREPARED[id(cfg)].again().ag.pre
    store[0] = True
    fm.model = copy.deepcopy(fm.model)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    assert "preloaded" in r.refusal.message
    assert not R.map_flags(mem.resident.heap.written).any()
    _unusable_after(mem, cfg, fm, cache)


def test_the_time_limit_is_checked_before_an_in_place_launch_only(monkeypatch):
    # a kernel that outlasts the limit: in place it has landed (no refusal: its bytes stand)...
    # (a limit of 1 s: what comes before the launch -- trace, build, proof -- fits it on a
    # loaded machine; 0.2 s did not always)
    mem, cfg = _vadd(64)
    fm = rig(monkeypatch, mem, cfg)
    fm.sleep = 1.2
    r = _run(mem, cfg, time_limit=1.0)
    assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
    _same_memory(mem, fm.model)
    # ... on the arena it is refused and lands nothing
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "off")
    mem, cfg = _vadd(64)
    fm = rig(monkeypatch, mem, cfg)
    fm.sleep = 1.2
    before = {x.base: bytes(x._data) for x in mem}
    r = _run(mem, cfg, time_limit=1.0)
    assert r.refusal is not None and r.refusal.code == "dispatch.time_exceeded", r.refusal
    assert {x.base: bytes(mem.read(x.base, x.size)) for x in mem} == before
    # the time up before the launch: an in-place dispatch is refused and changes nothing
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "proved")
    mem, cfg = _vadd(64)
    fm = rig(monkeypatch, mem, cfg)
    slow = RT._unrefusable

    def late(*a):
        time.sleep(0.3)
        return slow(*a)

    monkeypatch.setattr(RT, "_unrefusable", late)
    before = {x.base: bytes(x._data) for x in mem}
    r = _run(mem, cfg, time_limit=0.2)
    assert r.refusal is not None and r.refusal.code == "dispatch.time_exceeded", r.refusal
    assert not fm.launches
    assert {x.base: bytes(mem.read(x.base, x.size)) for x in mem} == before


def test_repeated_dispatches_in_place_run_from_a_kept_plan(monkeypatch):
    """The same dispatch again (the same config object and cache: execute's kept run) runs from
    runtime.InPlace -- the kernel on the heap, its runs booked -- amid host writes (which send it
    through the full path once); every result equals the model's; a wrong proof found by a kept
    run makes the copies unusable and the dispatch is refused `backend.proof`, and the next too."""
    from wavelift.run import execute as X

    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    h0 = X.AGAIN_HITS[0]
    a = next(x for x in mem if x.name == "a")
    for i in range(8):
        if i == 4:
            for m in (mem, fm.model):
                m.write(a.base + 8, np.full(8, 3, np.uint8))
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
        assert r.write_spans == fm.spans and r.stats["bytes_written"] == 4 * 256
        assert fm.launches[-1][0] is mem.resident.heap.buf
        assert not R.map_flags(mem.resident.heap.written).any()
        _consistent(mem)
    assert len(fm.launches) == 8
    assert X.AGAIN_HITS[0] - h0 >= 5, X.AGAIN_HITS[0] - h0  # (all but the first and the one after the write)
    _same_memory(mem, fm.model)
    for _ in range(2):
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None
    h1 = X.AGAIN_HITS[0]
    fm.escape = True
    fm.model = copy.deepcopy(fm.model)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    assert X.AGAIN_HITS[0] == h1  # (the kept run found it and handed it to the full path)
    _unusable_after(mem, cfg, fm, cache)


@pytest.mark.parametrize("defer", ["off", "on", "late"])
def test_a_session_in_place_equals_numpy(standin, monkeypatch, calls, setting, defer):
    """test_resident_gpu's kept session (random vadd launches on one Device amid host writes, host
    reads and new allocations) on the stand-in device, with the real translated module (NVRTC)
    and test_host_path's vadd stand-in, which reads the kernel arguments and a and b from the
    arena it is launched with and stores c there -- here the heap, from 4 KiB (it moves amid the
    kept plans): every step equals the NumPy backend's, and most repeated launches ran from
    their kept in-place plans -- deferred (``on``: results read at once; ``late``: each read
    only at the end, so the queue fills) or waited for (``off``)."""
    from test_host_path import _vadd_from_kernargs
    from test_resident_gpu import _kept_session

    from wavelift.run import execute as X

    monkeypatch.setattr(R, "HEAP_MIN", 4096)
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "off" if defer == "off" else "on")
    want, _ = _kept_session("numpy")
    standin.kernel = _vadd_from_kernargs()
    booked = calls(R.Resident, "landed_in_place")
    d0 = X.DEFERRED[0]
    got, hits = _kept_session("cuda", late=defer == "late")
    assert got == want
    launches = sum(1 for x in got[:-1] if isinstance(x, list))
    assert len(booked) == launches, (len(booked), launches)  # (every launch in place)
    assert hits > 30, hits
    deferred = X.DEFERRED[0] - d0
    assert deferred > 20 if defer != "off" else deferred == 0, deferred


def _words(fm, name: str, dtype, n: int) -> np.ndarray:
    """The report's words ``name`` (WL_STATS, WL_STATUS) as the kernel finds them (a pointer in
    constant memory: FakeModule._report's way)."""
    import ctypes

    ptr = ctypes.cast(int(fm.consts[name][0]), ctypes.POINTER(np.ctypeslib.as_ctypes_type(dtype)))
    return np.ctypeslib.as_array(ptr, (n,))


class Faulty(Player):
    """A Player whose report shows one fault after its run (``fault``): ``recorded``, an
    escape recorded (status[4]) but not counted; ``counted``, an escape counted (the stats'
    escape count) but none recorded; ``outside``, a written byte marked in the heap map just
    past its lowest window (the copy's spare bytes: inside the windows' hull, in no window);
    ``garbled``, an escape recorded whose instruction is none of the program's (a report the
    module cannot make: read after the proof's checks, never before them); ``tail``, a written
    byte marked just past its highest window (on the arena path: the arena's spare tail, in no
    window).  None of them a proved dispatch can have; each alone must be a failed proof."""

    fault = None

    def _kernel(self, grid, block, args, shared_mem=0):
        super()._kernel(grid, block, args, shared_mem)
        if self.fault == "recorded":
            _words(self, "WL_STATUS", np.uint32, 16)[4] = 1
        elif self.fault == "counted":
            _words(self, "WL_STATS", np.uint64, 8)[2] += 1
        elif self.fault == "garbled":  # (recorded, its instruction none of the program's)
            _words(self, "WL_STATUS", np.uint32, 16)[4] = 1
            _words(self, "WL_ESC", np.uint32, 8)[0] = 0xFFFFFFFF
        elif self.fault in ("outside", "tail"):  # (the byte just past the lowest / highest window)
            _, written, ws, we, wo, *_ = args
            pick = np.argmin if self.fault == "outside" else np.argmax
            k = int(pick(np.asarray(wo[:-1])))
            end = int(wo[k]) + int(we[k]) - int(ws[k])
            S.mark(written, end, end + 1)


@pytest.mark.parametrize("fault", ["recorded", "counted", "outside", "garbled"])
@pytest.mark.parametrize("kept", [False, True], ids=["full", "kept"])
def test_each_fault_alone_is_a_failed_proof_on_either_path(monkeypatch, fault, kept):
    """The failed proof's checks are one (runtime._settle_in_place) on the full path and in a
    kept in-place run: an escape recorded but not counted, one counted but not recorded, and a
    store marked outside every window each make the dispatch `backend.proof` with its copies
    unusable (the next dispatch refused before any launch), the heap map zero after; a kept run
    hands the dispatch to the full path (no kept hit)."""
    from wavelift.run import execute as X

    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg, Faulty)
    cache: dict = {}
    if kept:
        for _ in range(3):
            r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
            assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
    h0 = X.AGAIN_HITS[0]
    fm.fault = fault
    fm.model = copy.deepcopy(fm.model)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    assert X.AGAIN_HITS[0] == h0
    assert not R.map_flags(mem.resident.heap.written).any()
    n = len(fm.launches)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    assert len(fm.launches) == n


@pytest.mark.parametrize("how", ["full", "kept", "deferred"])
def test_a_run_outside_every_window_is_a_bad_report_on_the_arena_path(monkeypatch, calls, how):
    """In place off: a report whose written map marks a byte outside every window (the arena's
    spare tail) -- which no kernel marks: it stores only through its windows -- refuses the
    dispatch `backend.bad_report` (resident.outside, the check in place's failed proof makes
    too) with nothing of it landed: the device copies and what each allocation reads as before
    it, on the full path, in a kept arena run (Again.run) and in a deferred one (wl_gate fails
    it, the full path refuses it); the next dispatch, its report sound, lands exactly (the
    stray mark did not stay in the map)."""
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "off")
    if how != "deferred":
        monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "off")
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg, Faulty)
    again_runs = calls(RT.Again, "run")
    cache: dict = {}
    for _ in range(1 if how == "full" else 3):
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None and "in_place" not in r.stats, r.refusal
    if how == "full":
        cache.clear()
    res = mem.resident
    # (nothing pulled: a read would move the plan's Resident and no kept run would hold)
    heap0, seen0 = np.array(res.heap.buf), _seen(mem)
    calls0 = len(again_runs)
    # (the refused run's kernel plays a model whose input a differs: its c, had it landed,
    # would differ from the copies' -- then the model as the memory is again)
    good, fm.model = fm.model, copy.deepcopy(fm.model)
    a = next(x for x in fm.model if x.name == "a")
    fm.model.write(a.base, np.full(16, 0x41, np.uint8))
    fm.fault = "tail"
    n = len(fm.launches)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.bad_report", r.refusal
    assert "outside every window" in r.refusal.message and not r.write_spans
    fm.model = good  # (after the refusal is read: a deferred run's replay plays it too)
    assert len(fm.launches) > n  # (it ran: its report refused it)
    if how != "deferred":  # (kept: refused in the kept run itself; full: no kept run)
        assert len(again_runs) == calls0 + (how == "kept")
    assert np.array_equal(np.array(res.heap.buf), heap0)
    assert _seen(mem) == seen0  # (the host's bytes where current, the device's where newer)
    assert {x.base: bytes(mem.read(x.base, x.size)) for x in mem} == seen0
    fm.fault = None
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is None and r.write_spans == fm.spans, r.refusal
    _unbroken(mem)
    _consistent(mem)
    _same_memory(mem, fm.model)


def test_the_runs_scan_reads_only_the_windows_map(monkeypatch, setting):
    """An in-place dispatch's wl_runs reads the heap map over its windows' hull only, not the
    whole heap's (h134: nothing per launch proportional to the heap): with a 3 MiB copy placed
    below the dispatch's, every scan -- full path and kept runs -- is under a tenth of the map,
    and the runs found there, moved to heap offsets, give the write spans and bytes of the model."""
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    res = R.for_memory(mem)
    pad = mem.find(mem.alloc(3 << 20, name="pad", address=0x7000_0000_0000))  # (no pointer reaches it)
    e = res.entry(pad)
    for lo, hi in e.host_dirty.take(0, pad.size):  # (up, as a dispatch's prepare would)
        res.ops.upload(*e.at(lo), pad._data[lo:hi])
    assert res.heap.cap >= 3 << 20
    seen: list = []  # (the map each wl_runs launch -- made at once, or for a kept plan -- reads)
    for name in ("runs_launch", "runs_call"):
        real = getattr(R.CuPyOps, name)

        def scans(self, written, *a, real=real, **k):
            seen.append(int(written.size))
            return real(self, written, *a, **k)

        monkeypatch.setattr(R.CuPyOps, name, scans)
    cache: dict = {}
    for _ in range(4):
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
        assert r.write_spans == fm.spans and r.stats["bytes_written"] == 4 * 256
        assert not R.map_flags(res.heap.written).any()
        _consistent(mem)
    whole = int(res.heap.written.size)
    assert seen and max(seen) * 10 < whole, (seen, whole)
    assert min(e.off for e in res.entries.values() if e is not res.entries[pad]) >= 3 << 20
    _same_memory(mem, fm.model)


def test_in_place_windows_keep_their_guest_alignment(monkeypatch, setting):
    """In place, every window lies in the heap at its guest address mod 256 (resident.HEAP_ALIGN),
    as it would in an array per allocation (256-byte aligned): a warp's 128 bytes at a 128-aligned
    guest address are one 128-byte line of whole 32-byte sectors and -- the bit map -- whole map
    words, each set by a plain store and not an atomicOr (mapbits.h's WL_MAP_FILL_STORE).  With
    copies placed mod 16 only, each copy's 8 spare bytes moved the next one by 16: bench_resident's
    vadd over 2^26 floats wrote c at 16 mod 32 (half-word marks, an atomicOr at each end of every
    warp's store), in place ~0.35 ms a pass slower than the same kernel on the arena (session 52)."""
    mem, cfg = _vadd(1 << 12, block=256)
    fm = rig(monkeypatch, mem, cfg)
    r = _run(mem, cfg)
    assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
    ((_, _, wo),) = fm.launches
    assert len(r.windows) >= 4  # (a, b, c and the kernel's arguments: copies before c's)
    for w, o in zip(r.windows, wo[:-1].tolist()):
        assert (o - w.address) % 256 == 0, (w.name, hex(w.address), o)
    ((c_addr, _),) = r.write_spans
    assert c_addr % 128 == 0  # (so c's stores are whole lines and its map marks whole words)


# ---- step 5: proved dispatches deferred (InPlace.defer, DeferredInPlace; amendment h134) -------


def _syncs(calls) -> list:
    """A counter of the host's waits for the device: ops.sync (a kept run's and a queue's
    read), and the stand-in's synchronous reads (an array's get, a synchronous copy to the host)."""
    return [calls(R.CuPyOps, "sync"), S.STATE.calls]


def _waits(c) -> int:
    syncs, reads = c
    return len(syncs) + reads["get"] + reads["memcpy_d2h"]


@pytest.mark.parametrize("defer", ["off", "on"])
def test_a_stream_of_proved_dispatches_waits_once_a_queue(monkeypatch, calls, defer):
    """32 launches of a proved dispatch with one cache: with deferral on, after the first (full
    path) and second (kept, waited for) they queue with no wait each -- the host waits once per
    DEFER_DEPTH launches (Resident.flush) -- and every result (read after the stream) equals
    the model's, the map zero, the copies consistent; with it off, a wait per launch."""
    from wavelift.run import execute as X

    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", defer)
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    c = _syncs(calls)
    d0 = X.DEFERRED[0]
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(2)]
    w0 = _waits(c)
    rs += [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(32)]
    waits = _waits(c) - w0
    for r in rs:
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
        assert r.write_spans == fm.spans and r.stats["bytes_written"] == 4 * 256
    assert len(fm.launches) == 34
    assert not R.map_flags(mem.resident.heap.written).any()
    _consistent(mem)
    _same_memory(mem, fm.model)
    if defer == "on":
        assert X.DEFERRED[0] - d0 >= 30, X.DEFERRED[0] - d0
        assert waits <= 32 // R.DEFER_DEPTH + 1, waits
    else:
        assert X.DEFERRED[0] == d0 and waits >= 32, waits


def test_a_full_queue_reads_its_oldest_half_and_leaves_the_rest_running(monkeypatch, calls):
    """A queue of 4 places (DEFER_DEPTH patched): a stream of deferred in-place launches never
    waits for the whole device -- a full queue reads its oldest two, after the second's launch
    finished (its event), the newer ones left queued -- so the queue holds 2 then 3 launches,
    the places taken in turn (no two queued launches share one, four made in all); every
    result equals the model's.  Fails with the whole queue read when full (a stream sync)."""
    from wavelift.backends.cuda import runtime as RT

    monkeypatch.setattr(R, "DEFER_DEPTH", 4)
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(2)]
    waited: list = []
    real_wait = RT.Deferred.wait
    monkeypatch.setattr(RT.Deferred, "wait", lambda self: (waited.append(self), real_wait(self))[1])
    syncs = calls(R.CuPyOps, "sync")
    res, lens = mem.resident, []
    for _ in range(13):
        rs.append(execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache))
        lens.append(len(res.pending))
        assert len({id(it.slot) for it in res.pending}) == len(res.pending)
    assert lens == [1, 2, 3] + [2, 3] * 5, lens  # (a launch filling the queue reads two)
    assert not syncs and len(waited) == 5
    ag = res.pending[0].ag
    assert ag.depth == 4 and len(ag.slots) == 4
    for r in rs:
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
        assert r.write_spans == fm.spans
    assert len(syncs) == 1  # (the results read: the rest of the queue at once)
    _consistent(mem)
    _same_memory(mem, fm.model)


def test_an_interrupted_wait_for_a_full_queues_oldest_reads_no_report_before_the_device(monkeypatch):
    """A full queue's wait for its oldest half (Resident.flush's ``front``: Deferred.wait) that
    raises -- an interrupt, a fault -- loses every queued launch, each made a failed proof over
    the runs its report names (DeferredInPlace.fail): the stream is waited for first, where the
    device answers, so no report is read while its launch may still run (a report read early
    holds its place's last launch's runs, and the bytes this one wrote stay readable).  Fails
    with the queue's stream left unwaited."""
    from wavelift.run.execute import DeferredLost

    monkeypatch.setattr(R, "DEFER_DEPTH", 4)
    mem, cfg = _vadd(256)
    rig(monkeypatch, mem, cfg)
    cache: dict = {}
    for _ in range(2):
        assert execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache).refusal is None
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(3)]
    assert len(mem.resident.pending) == 3
    seen: list = []

    def wait(self):
        raise KeyboardInterrupt

    real_fail = RT.DeferredInPlace.fail
    monkeypatch.setattr(RT.Deferred, "wait", wait)
    monkeypatch.setattr(R.CuPyOps, "sync", lambda self, stream=None: seen.append("sync"))
    monkeypatch.setattr(RT.DeferredInPlace, "fail", lambda self: (seen.append("fail"), real_fail(self))[1])
    with pytest.raises(KeyboardInterrupt):
        execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert not mem.resident.pending and seen.count("fail") == 4, seen
    assert seen[0] == "sync", seen  # (the device done with every queued launch before a report is read)
    for r in rs:
        with pytest.raises(DeferredLost):
            _ = r.refusal


def test_deferred_dispatches_amid_host_writes_and_reads_equal_the_model(monkeypatch):
    """Deferred in-place launches with host writes of an input and host reads of the output
    between them (each read or write first reads the queue: Resident.pull / touch): every read
    and every result equals the model's (the NumPy backend's), and most launches deferred."""
    from wavelift.run import execute as X

    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    a = next(x for x in mem if x.name == "a")
    c_addr, c_size = 0, 0
    d0 = X.DEFERRED[0]
    rs = []
    for i in range(40):
        if i % 7 == 3:
            for m in (mem, fm.model):
                m.write(a.base + 4 * i, np.full(8, i, np.uint8))
        if i % 5 == 4 and c_size:
            assert bytes(mem.read(c_addr, c_size)) == bytes(fm.model.read(c_addr, c_size))
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        rs.append((r, list(fm.spans)))
        c_addr, c_size = fm.spans[0]
    for r, spans in rs:
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
        assert r.write_spans == spans
    assert X.DEFERRED[0] - d0 >= 20, X.DEFERRED[0] - d0
    _consistent(mem)
    _same_memory(mem, fm.model)


@pytest.mark.parametrize("depth", [R.DEFER_DEPTH, 4, 2])
def test_a_failed_proof_found_in_a_deferred_chain(monkeypatch, depth):
    """A chain of deferred in-place launches whose sixth reports an escape (a wrong proof) and
    stores nothing: its result is not filled before its report is read (no stats, queued); once
    read, the five before it landed as the model's, it and every one after are refused
    `backend.proof`, the next dispatch is refused before any launch, and the output -- which
    only the refused launches after it wrote on the device since the fifth -- is unreadable
    (not their bytes), the inputs intact.  Queues of 4 and 2 places: the failed one is read
    with a full queue's oldest (Resident.flush's ``front``), later ones still queued."""
    from wavelift.run.execute import DeferredResult

    monkeypatch.setattr(R, "DEFER_DEPTH", depth)
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg, Faulty)
    cache: dict = {}
    for _ in range(2):
        assert execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache).refusal is None
    good = copy.deepcopy(fm.model)
    real = fm._kernel
    launched = [0]

    def kernel(grid, block, args, shared_mem=0):
        launched[0] += 1
        if launched[0] != 6:
            return real(grid, block, args, shared_mem)
        fm.escape = True  # (the sixth stores nothing and reports an escape)
        fm._report()
        fm.escape = False

    fm._kernel = kernel
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(10)]
    if depth > 10:  # (the whole chain queued)
        assert all(isinstance(r, DeferredResult) for r in rs)
        assert "_stats" not in rs[5].__dict__ and mem.resident.pending  # (not read: not landed)
    else:  # (read with a full queue's oldest: the launches after it take the full path, refused)
        assert all(isinstance(r, DeferredResult) for r in rs[:6])
        assert not isinstance(rs[-1], DeferredResult)
    for r in rs[:5]:
        assert r.refusal is None and r.write_spans == fm.spans, r.refusal
    for r in rs[5:]:
        assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    n = len(fm.launches)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.proof" and len(fm.launches) == n
    c_addr, c_size = fm.spans[0]
    with pytest.raises(Exception, match="backend.proof"):
        mem.read(c_addr, c_size)
    for x in good:
        if x.name in ("a", "b"):
            assert bytes(mem.read(x.base, x.size)) == bytes(good.read(x.base, x.size))
    assert not R.map_flags(mem.resident.heap.written).any()


def test_the_heap_moves_amid_a_deferred_chain(monkeypatch):
    """Deferred in-place launches, then a new device copy that outgrows the heap (it moves:
    the queue is read first, the kept plans dropped), then more launches (the full path once,
    then kept and deferred again, on the new buffer): every result equals the model's, no
    launch ran on the old buffer after the move, the map zero, the copies consistent."""
    from wavelift.run import execute as X

    monkeypatch.setattr(R, "HEAP_MIN", 4096)
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    # (allocated first: a new allocation reads the queue itself -- GuestMemory._table_changes)
    big = mem.find(mem.alloc(64 << 10, name="big", address=0x7000_0000_0000))
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(6)]
    res = mem.resident
    assert res.pending
    moves, old = res.heap.moves, res.heap.buf
    n = len(fm.launches)
    queued: list = []  # (the queue's length as the heap moves: on a GPU the growth's copy and a
    grow = R.Heap._grow  # queued launch on another stream would race; none is left by then)

    def growing(self, need):
        queued.append(len(res.pending))
        return grow(self, need)

    monkeypatch.setattr(R.Heap, "_grow", growing)
    res.entry(big)
    assert queued == [0] and res.heap.moves > moves and res.heap.buf is not old
    d0 = X.DEFERRED[0]
    rs += [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(6)]
    assert all(lau[0] is res.heap.buf for lau in fm.launches[n:])
    assert X.DEFERRED[0] - d0 >= 3
    for r in rs:
        assert r.refusal is None and r.write_spans == fm.spans, r.refusal
    e = res.entries[big]
    for lo, hi in e.host_dirty.take(0, big.size):  # (up, as a dispatch's prepare would)
        res.ops.upload(*e.at(lo), big._data[lo:hi])
    assert not R.map_flags(res.heap.written).any()
    _consistent(mem)
    _same_memory(mem, fm.model)


def test_deferred_results_counts_are_their_own_read_late(monkeypatch):
    """A deferred in-place result's instruction counts are summed when its stats are first read
    (DeferredResult.settled_counted) from a copy of its report's: 40 launches, each reporting
    counts of its own in slots of its own, read after the whole stream (each queue place's host
    array served later launches by then) -- every result has its launch's counts, and its stats
    are the keys, in order, and values of a launch waited for."""
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    real, n = fm._report, [0]

    def report():
        real()
        stats = _words(fm, "WL_STATS", np.uint64, 8 + 512)
        i = n[0] = n[0] + 1
        stats[8 + 2 * (i % 256)] += i
        stats[9 + 2 * (i % 7)] += 3 * i

    fm._report = report
    cache: dict = {}
    d0 = X.DEFERRED[0]
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(40)]
    assert X.DEFERRED[0] - d0 >= 30
    for i, r in enumerate(rs, 1):
        assert r.refusal is None, r.refusal
        assert (r.stats["instructions"], r.stats["lane_instructions"]) == (7 + i, 3 * i), i
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "off")
    w = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert w.refusal is None and w.stats["in_place"] == "proved"
    for r in rs[5:]:
        assert list(r.stats) == list(w.stats)
        same = ("waves", "bytes_written", "escapes", "module_cache_hit", "budget", "cubin", "in_place")
        assert [r.stats[k] for k in same] == [w.stats[k] for k in same]


def test_a_plan_arms_without_looking_only_right_after_its_own_booking(monkeypatch):
    """``InPlace.arm`` skips its look at the entries only where ``Resident.changes`` moved by the
    plan's own deferred launch alone (``booked_at``): right after ``defer`` it arms; after a
    host write between the booking and the arming (the input host-dirty), it looks and does not
    arm, and the next dispatch takes the full path and is exact."""
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    for _ in range(3):
        assert execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache).refusal is None
    ag = X._PREPARED[id(cfg)].again().ag
    res = mem.resident
    look = []
    real_entries = ag.entries
    monkeypatch.setattr(
        ag, "entries", type("E", (), {"__iter__": lambda s: look.append(1) or iter(real_entries)})()
    )
    for host_write in (False, True):
        assert ag.arm() and ag._holds()
        look.clear()
        r = X.DeferredResult(0, cfg, res, ag.waves, 0, [], (mem, cfg, 0, "cuda", "lane", cache, None))
        assert ag.defer(r) is not None and ag.booked_at == res.changes
        a = next(x for x in mem if x.name == "a")
        if host_write:
            for m in (mem, fm.model):
                m.write(a.base + 4, np.full(4, 9, np.uint8))
        assert ag.arm() is (not host_write) and bool(look) is host_write
        res.flush()
        assert r.refusal is None and r.write_spans == fm.spans
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is None and r.write_spans == fm.spans
    _exact_after(mem, fm.model)


def test_a_deferred_launch_books_its_windows_at_once(monkeypatch):
    """What a deferred in-place launch books before its report is read: its output's copy at a
    new stamp (the tracer's caches and the kept runs' checks see it), newer on the device, and
    the Resident's ``changes`` moved (no other kept plan runs on what it saw before)."""
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    for _ in range(2):
        assert execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache).refusal is None
    res = mem.resident
    c = mem.find(*fm.spans[0])
    st, ch = res.stamp(c), res.changes
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert res.pending and "_stats" not in r.__dict__
    assert res.stamp(c) != st and res.changes != ch
    assert res.entries[c].dev_dirty.ranges() == [(0, c.size)]
    assert r.refusal is None and r.write_spans == fm.spans


def _sparse(fm) -> None:
    """From now on ``fm``'s kernel marks only every other byte of its output (the first span it
    writes) in the map it is handed: 512 runs over vadd's 256 floats, more than come back
    inline with the report."""
    real = fm._kernel

    def sparse(grid, block, args, shared_mem=0):
        real(grid, block, args, shared_mem)
        _, written, ws, we, wo, *_ = args
        k = int(np.searchsorted(np.asarray(ws[:-1]), np.uint64(fm.spans[0][0]), side="right")) - 1
        lo = int(wo[k]) + fm.spans[0][0] - int(ws[k])
        S.mark(written, lo + 1, lo + fm.spans[0][1], value=0, step=2)

    fm._kernel = sparse


def _strided(fm, which=None) -> list:
    """From now on the launches of ``fm`` numbered (from 1, here on) in ``which`` (None: all)
    store and mark only every other 4-byte word of the output (its first span, as the last launch
    wrote it), the even ones -- or the odd ones where ``which`` (a dict) maps the launch to 4: 128 runs over vadd's 256 floats, more than come back with the report -- a dispatch
    whose data-dependent stores scatter.  The model keeps the words they did not store (it is what
    the device holds).  -> the write spans of each launch, appended as they run."""
    real = fm._kernel
    addr, size = fm.spans[0]
    n = [0]
    spans: list = []

    def kernel(grid, block, args, shared_mem=0):
        n[0] += 1
        arena, written, ws, we, wo, *_ = args
        k = int(np.searchsorted(np.asarray(ws[:-1]), np.uint64(addr), side="right")) - 1
        lo = int(wo[k]) + addr - int(ws[k])
        dev, model = np.array(arena[lo : lo + size]), fm.model.read(addr, size)
        real(grid, block, args, shared_mem)
        if which is not None and n[0] not in which:
            spans.append(list(fm.spans))
            return
        at = which.get(n[0], 0) if isinstance(which, dict) else 0
        for i in range(4 - at, size, 8):
            arena[lo + i : lo + i + 4] = dev[i : i + 4]
            S.mark(written, lo + i, lo + i + 4, value=0)
            fm.model.write(addr + i, np.frombuffer(model[i : i + 4], np.uint8))
        spans.append([(addr + i, 4) for i in range(at, size, 8)])

    fm._kernel = kernel
    return spans


def test_the_runs_scan_is_whole_words(setting):
    """``Placed.scan`` (what wl_runs reads and wl_aside copies and clears as 32-bit words) starts
    and ends on whole words of the map -- 8 bytes of a byte map (wl_runs reads 4-byte words and
    the byte after), 32-bit words of a bit map -- for windows at any heap offset; its offsets plus
    ``base`` are heap offsets."""
    import types

    heap = R.Heap(R.NumPyOps(), setting == "bits")
    heap._grow(1 << 12)
    w = types.SimpleNamespace
    g = 32 if setting == "bits" else 8  # (heap bytes a map word covers, at least)
    for lo, n in ((3, 5), (8, 1), (13, 100), (1000, 17), (64, 64)):
        # (the windows in either order: the highest first, as a plan may place them)
        for spots in (((lo, n), (lo + n + 6, 3)), ((lo + n + 6, 3), (lo, n))):
            placed = R.Placed(heap, [(w(off=o), 0) for o, _ in spots], [w(size=m) for _, m in spots])
            scan, (h_lo, h_hi) = placed.scan, placed.hull
            assert scan.nbytes % 8 == 0 if setting == "bytes" else scan.nbytes % 4 == 0
            first = (scan.ctypes.data - heap.written.ctypes.data) * (8 if setting == "bits" else 1)
            # the hull is what the scan covers, whole words, every window in it, no word to spare
            assert (first, first + scan.size * (g if setting == "bits" else 1)) == (h_lo, h_hi)
            assert h_lo % g == 0 and h_hi % g == 0
            assert h_lo <= lo and lo + n + 9 <= h_hi
            assert lo - h_lo < g and h_hi - (lo + n + 9) < g
            assert placed.runs([0], [1]) == ([h_lo], [h_lo + 1])


def test_the_scan_covers_only_the_windows_its_build_can_store_into(setting):
    """With ``written`` (the windows its launched build can store into: the lean build's,
    h157) ``Placed.scan`` is the map over those windows only -- whole words, no word to spare at
    either end, the windows it only reads outside it where no map word is shared --, runs are
    offsets in it (``marks[0]`` their base), and ``hull`` still covers every window (where an
    unreadable run may have written); None: the scan is the hull, as before; no window: one
    word.  (One range: a window it only reads between two it writes is scanned.)"""
    import types

    heap = R.Heap(R.NumPyOps(), setting == "bits")
    heap._grow(1 << 14)
    w = types.SimpleNamespace
    g = 32 if setting == "bits" else 8
    spots = ((100, 1000), (1200, 2000), (3300, 700))  # (heap offset, bytes) in window order
    plan, wins = [(w(off=o), 0) for o, _ in spots], [w(size=n) for _, n in spots]
    full = R.Placed(heap, plan, wins)
    assert full.marks == full.hull == (96, 4000)
    for written in ({1}, {0}, {2}, {0, 2}, {1, 2}, set()):
        placed = R.Placed(heap, plan, wins, frozenset(written))
        assert placed.hull == full.hull  # (every window: where losses are taken)
        lo, hi = placed.marks
        scan = placed.scan
        first = (scan.ctypes.data - heap.written.ctypes.data) * (8 if setting == "bits" else 1)
        assert (first, first + scan.size * (g if setting == "bits" else 1)) == (lo, hi)
        mine = [spots[k] for k in sorted(written)] or [(full.hull[0], 1)]
        assert lo == min(o for o, _ in mine) // g * g
        assert hi == max(-(-max(o + n for o, n in mine) // g) * g, lo + g)
        # (a window it only reads, below or above those it writes, lies outside the scan but for
        # a word shared at its edge; one between them is scanned: the scan is one range)
        for k in set(range(3)) - written:
            o, n = spots[k]
            if o + n <= min(a for a, _ in mine) or o >= max(a + m for a, m in mine):
                assert o + n <= lo + g or o >= hi - g, (written, k)
        assert placed.runs([0, 40], [8, 48]) == ([lo, lo + 40], [lo + 8, lo + 48])
    # (the middle window's 2000 bytes of the hull's 3904: their map only)
    assert R.Placed(heap, plan, wins, frozenset({1})).scan.nbytes < 0.52 * full.scan.nbytes


def test_a_placings_runs_are_the_reports_runs_plus_its_hull_base(setting):
    """``Placed.runs`` (a lone run added on its own path, the common report's: a measured fast
    path) gives the report's runs plus the hull's first heap offset, as new lists where that is
    not 0, for any number of runs and windows anywhere in the heap."""
    import types

    rng = np.random.default_rng(151)
    heap = R.Heap(R.NumPyOps(), setting == "bits")
    heap._grow(1 << 16)
    w = types.SimpleNamespace
    lone = 0
    for _ in range(400):
        at = int(rng.integers(0, 1 << 15)) if rng.random() < 0.8 else int(rng.integers(0, 8))
        placed = R.Placed(heap, [(w(off=at), 0)], [w(size=int(rng.integers(1, 4096)))])
        b = placed.hull[0]
        n = int(rng.choice([0, 1, 1, 1, 2, 5]))
        cuts = np.sort(rng.choice(np.arange(0, 1 << 13), size=2 * n, replace=False))
        starts, ends = [int(x) for x in cuts[0::2]], [int(x) for x in cuts[1::2]]
        was = (list(starts), list(ends))
        got = placed.runs(starts, ends)
        assert got == ([x + b for x in was[0]], [x + b for x in was[1]]), (b, was)
        assert (starts, ends) == was  # (the report's lists not changed)
        assert all(type(x) is int for x in got[0] + got[1])
        lone += n == 1 and b != 0
    assert lone > 100  # (the lone run's own path taken often)


def test_a_reports_runs_read_alike_on_the_lone_runs_path():
    """``_Slot.runs`` (a lone run read through the report's memoryview, the common report's: a
    measured fast path) gives the report's inline runs as sorted lists of Python ints, the same as
    the general form's, for every run count up to INLINE_RUNS and 64-bit offsets."""
    import types

    rng = np.random.default_rng(151)
    host = np.zeros(RT.REPORT_BYTES + 16, np.uint8)
    sl = RT._Slot(types.SimpleNamespace(nslots=4), host, None)
    lone = 0
    for _ in range(300):
        c = int(rng.integers(1, RT.INLINE_RUNS + 1)) if rng.random() < 0.5 else 1
        starts = rng.integers(0, 1 << 40, RT.INLINE_RUNS, dtype=np.uint64)
        ends = rng.integers(0, 1 << 40, RT.INLINE_RUNS, dtype=np.uint64)
        sl.starts[:], sl.ends[:] = starts, ends
        got = sl.runs(c)
        assert got == (sorted(int(x) for x in starts[:c]), sorted(int(x) for x in ends[:c])), c
        assert all(type(x) is int for x in got[0] + got[1])
        lone += c == 1
    assert lone > 100


def _booked(windows, plan, offs, cut) -> tuple:
    """Resident.landed_in_place's booking of ``cut`` worked out afresh (its loop before h145
    kept it: Placed.booking)."""
    rows, spans, total, last = [], [], 0, None
    for k, lo, hi in sorted(cut):
        (e, at), d = plan[k], lo - offs[k]
        rows.append((k != last, e, at + d, at + d + hi - lo))
        last = k
        spans.append((windows[k].address + d, hi - lo))
        total += hi - lo
    return rows, spans, total, frozenset(k for k, _, _ in cut)


def test_a_placings_last_cut_and_booking_are_kept_while_the_runs_are_the_same(setting):
    """``Placed.cut`` and ``Placed.booking`` hand out their last answer again for the same runs,
    windows and plan (a stream's launches write the same runs) and work out a new one for any
    other: over random runs that often repeat, windows and plans copied or changed, every answer
    equals ``cut_runs``' and a booking worked out afresh."""
    import types

    rng = np.random.default_rng(145)
    heap = R.Heap(R.NumPyOps(), setting == "bits")
    heap._grow(1 << 12)
    w = types.SimpleNamespace
    sizes = [40, 8, 100, 24]
    offs = [300, 64, 140, 400]  # (heap offsets, not in window order)
    entries = [w(off=o - 16, name=i) for i, o in enumerate(offs)]
    plan = [(e, 16) for e in entries]
    windows = [w(size=n, address=0x1000 * (k + 1)) for k, n in enumerate(sizes)]
    placed = R.Placed(heap, plan, windows)
    last = None
    for _ in range(300):
        if last is None or rng.random() < 0.3:
            cuts = np.sort(rng.choice(np.arange(60, 440), size=2 * int(rng.integers(1, 5)), replace=False))
            runs = [int(x) for x in cuts[0::2]], [int(x) for x in cuts[1::2]]
        else:
            runs = list(last[0]), list(last[1])  # (the same runs: new lists)
        if rng.random() < 0.1:
            windows = [w(size=x.size, address=x.address + 0x100 * int(rng.integers(0, 2))) for x in windows]
        if rng.random() < 0.1:
            plan = [(entries[(k + int(rng.integers(0, 2))) % 4], at) for k, (_, at) in enumerate(plan)]
        cut = placed.cut(windows, *runs)
        assert cut == R.cut_runs(*runs, placed.firsts, placed.offs, windows, placed.order)
        if last is not None and runs == last[:2] and windows is last[2]:
            assert cut is last[3]  # (kept)
        assert placed.booking(windows, plan, cut) == _booked(windows, plan, placed.offs, cut)
        if rng.random() < 0.2:  # (the same cut at windows elsewhere: a booking of its own)
            moved = [w(size=x.size, address=x.address + 0x40) for x in windows]
            assert placed.booking(moved, plan, cut) == _booked(moved, plan, placed.offs, cut)
        last = (*runs, windows, cut)


def test_a_kept_in_place_plan_notes_the_windows_each_landing_wrote(monkeypatch):
    """``InPlace.note`` keeps what a deferred launch books (``wrote``) while the windows a
    landing wrote are the same and makes it anew for others: after each of a random run of
    notes, ``wrote`` is the (entry, lo, hi) of exactly the windows noted last."""
    from wavelift.run import execute as X

    mem, cfg = _vadd(256)
    rig(monkeypatch, mem, cfg)
    cache: dict = {}
    for _ in range(2):
        assert execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache).refusal is None
    ag = X._PREPARED[id(cfg)].again().ag
    assert isinstance(ag, RT.InPlace) and len(ag.win.windows) >= 3
    n = len(ag.win.windows)
    rng = np.random.default_rng(24)
    for _ in range(60):
        ks = frozenset(int(k) for k in rng.choice(n, size=int(rng.integers(0, 3)), replace=False))
        ag.note(ks)
        want = [(ag.plan[k][0], ag.plan[k][1], ag.plan[k][1] + ag.win.windows[k].size) for k in sorted(ks)]
        assert ag.wrote == want and ag.wrote_ks == ks


def _unbroken(mem) -> None:
    for e in mem.resident.entries.values():
        assert e.broken is None and not e.lost, e.broken


def _exact_after(mem, model) -> None:
    """A chain's end: no copy unusable, the heap map zero, every device copy consistent with its
    host bytes, the memory the model's."""
    _unbroken(mem)
    assert not R.map_flags(mem.resident.heap.written).any()
    _consistent(mem)
    _same_memory(mem, model)


def test_deferred_runs_past_the_reports_room_land_exactly(monkeypatch):
    """A chain of ten deferred in-place launches in one queue whose third and sixth store every
    other word of the output, the even words and the odd ones (128 runs each: more than the report's room, so wl_aside keeps their map
    in their queue places' asides and the host scans those -- amendment h137): every result is
    exact (its write spans each launch's own, none refused), nothing is unusable, the launches
    after each are exact too, the map zero, the bytes the model's."""
    from wavelift.run import execute as X
    from wavelift.run.execute import DeferredResult

    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    for _ in range(2):
        assert execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache).refusal is None
    spans = _strided(fm, {3: 0, 6: 4})
    d0 = X.DEFERRED[0]
    rs, most = [], 0
    for _ in range(10):
        rs.append(execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache))
        most = max(most, len(mem.resident.pending))
    assert all(isinstance(r, DeferredResult) for r in rs) and most == 10  # (one queue)
    assert len(spans[2]) == len(spans[5]) == 128 > RT.INLINE_RUNS and spans[2] != spans[5]
    for r, want in zip(rs, spans):
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
        assert r.write_spans == want and r.stats["bytes_written"] == sum(n for _, n in want)
    assert X.DEFERRED[0] - d0 == 10
    _unbroken(mem)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is None and r.write_spans == spans[-1]
    assert not R.map_flags(mem.resident.heap.written).any()
    _consistent(mem)
    _same_memory(mem, fm.model)


def test_a_dispatch_whose_every_launch_scatters_is_deferred_exactly(monkeypatch):
    """Every launch stores every other word (128 runs), each result read before the next launch:
    each is deferred all the same (no arming condition on the last landing's span count: its runs
    come back through the aside) and exact; the map zero, the bytes the model's."""
    from wavelift.run import execute as X

    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    assert execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache).refusal is None
    spans = _strided(fm)
    d0 = X.DEFERRED[0]
    for i in range(8):
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None and r.write_spans == spans[i], r.refusal
    assert X.DEFERRED[0] - d0 >= 6, X.DEFERRED[0] - d0
    _exact_after(mem, fm.model)


def test_every_deferred_run_through_the_aside(monkeypatch):
    """With no room for runs in a deferred run's report (``InPlace.room`` 0: what the GPU test
    sets, so that a real kernel's single run takes the aside), 30 deferred launches amid host
    writes of an input and reads of the output: every result exact, the map zero, the bytes the
    model's -- each run found by the host in its place's aside."""
    from wavelift.run import execute as X

    monkeypatch.setattr(RT.InPlace, "room", 0)
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    a = next(x for x in mem if x.name == "a")
    d0, rs = X.DEFERRED[0], []
    for i in range(30):
        if i % 7 == 3:
            for m in (mem, fm.model):
                m.write(a.base + 4 * i, np.full(8, i, np.uint8))
        if i % 11 == 10:
            assert bytes(mem.read(*fm.spans[0])) == bytes(fm.model.read(*fm.spans[0]))
        rs.append((execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache), list(fm.spans)))
    for r, want in rs:
        assert r.refusal is None and r.write_spans == want, r.refusal
    assert X.DEFERRED[0] - d0 >= 20, X.DEFERRED[0] - d0
    _exact_after(mem, fm.model)


def test_two_plans_share_the_queue_places_asides(monkeypatch):
    """Two kept in-place plans of one memory (the same dispatch under two config objects: two
    records) queue in turn -- a queue holds one plan's launches -- on the same asides (one per
    place, the Resident's), launches scattering now and then (even words, odd words): all exact,
    the asides one per place."""
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cfg2 = copy.deepcopy(cfg)
    cache: dict = {}
    for c in (cfg, cfg2):
        for _ in range(2):
            assert execute_dispatch(mem, c, backend="cuda", mode="lane", cache=cache).refusal is None
    spans = _strided(fm, {i: 4 * (i % 2) for i in range(1, 40, 3)})
    rs, plans = [], []
    for c in (cfg, cfg2, cfg, cfg2):
        for _ in range(5):
            rs.append(execute_dispatch(mem, c, backend="cuda", mode="lane", cache=cache))
            if mem.resident.pending and mem.resident.pending[-1].ag not in plans:
                plans.append(mem.resident.pending[-1].ag)
    assert len(plans) >= 2 and all(p.slots for p in plans)  # (a switch arms a new plan)
    for p in plans:
        for i, sl in enumerate(p.slots):
            assert np.shares_memory(sl.kept, mem.resident._asides[i])
    assert len(mem.resident._asides) == max(len(p.slots) for p in plans)
    for r, want in zip(rs, spans):
        assert r.refusal is None and r.write_spans == want, r.refusal
    _unbroken(mem)
    _same_memory(mem, fm.model)


def test_a_device_fault_reading_an_aside_loses_the_rest_honestly(monkeypatch):
    """Reading the queue fails on the device where it scans a scattering launch's aside (the
    flush raises): that launch and the one after it are lost (their results raise), each booked
    as a failed proof -- over its whole windows, where its runs cannot be read -- so the output
    is unreadable and the next dispatch refused before any launch; the launch before them landed."""
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    for _ in range(2):
        assert execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache).refusal is None
    spans = _strided(fm, {2, 3})
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(3)]

    def fault(self, written):
        raise RuntimeError("a device fault")

    monkeypatch.setattr(R.CuPyOps, "runs", fault)
    with pytest.raises(RuntimeError, match="a device fault"):
        _ = rs[0].refusal
    assert rs[0].refusal is None and rs[0].write_spans == spans[0]
    for r in rs[1:]:
        with pytest.raises(Exception, match="a device fault"):
            _ = r.refusal
    assert all(e.broken is not None for e in mem.resident.entries.values() if e.dev_dirty or e.lost)
    with pytest.raises(Exception, match="backend.proof"):
        mem.read(*fm.spans[0])
    n = len(fm.launches)
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.proof" and len(fm.launches) == n


def test_the_asides_memory_bounds_a_plans_queue(monkeypatch):
    """Each queue place of an in-place plan takes an aside as large as its windows' map; with
    ASIDE_BYTES below DEFER_DEPTH of them the plan queues one launch at a time (it reads the queue
    before the next): still deferred and exact where every other launch scatters, one place, one
    aside; with the default, sixteen places, the asides within the bound."""
    from wavelift.run import execute as X

    for bound, depth in ((1, 1), (R.ASIDE_BYTES, R.DEFER_DEPTH)):
        monkeypatch.setattr(R, "ASIDE_BYTES", bound)
        mem, cfg = _vadd(256)
        fm = rig(monkeypatch, mem, cfg)
        cache: dict = {}
        for _ in range(2):
            assert execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache).refusal is None
        spans = _strided(fm, set(range(1, 40, 2)))
        d0, rs, most = X.DEFERRED[0], [], 0
        for _ in range(24):
            rs.append(execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache))
            most = max(most, len(mem.resident.pending))
        ag = mem.resident.pending[0].ag
        assert 1 <= most <= depth and ag.depth == depth and len(ag.slots) == depth, (most, len(ag.slots))
        scan = int(ag.placed.scan.nbytes)
        assert all(int(sl.kept.nbytes) == scan for sl in ag.slots)
        assert depth * scan <= max(bound, scan)
        assert sum(int(x.nbytes) for x in mem.resident._asides) == depth * scan
        for r, want in zip(rs, spans):
            assert r.refusal is None and r.write_spans == want, r.refusal
        assert X.DEFERRED[0] - d0 == 24
        _unbroken(mem)
        _same_memory(mem, fm.model)


def test_more_runs_than_come_back_inline_in_a_waited_run(monkeypatch):
    """With deferral off, a dispatch whose kernel marks every other byte of its output (512 runs:
    more than come back with the report, so wl_runs runs again over the windows' map, its
    offsets moved to the heap's) lands those bytes as its spans on the full path and from its
    kept plan alike, its copies placed above a 3 MiB one; the map zero after each."""
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "off")
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    res = R.for_memory(mem)
    pad = mem.find(mem.alloc(3 << 20, name="pad", address=0x7000_0000_0000))
    res.entry(pad)
    _sparse(fm)
    cache: dict = {}
    from wavelift.run import execute as X

    h0 = X.AGAIN_HITS[0]
    for _ in range(3):
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
        c_addr, c_size = fm.spans[0]
        assert r.write_spans == [(c_addr + i, 1) for i in range(0, c_size, 2)]
        assert not R.map_flags(res.heap.written).any()
    assert X.AGAIN_HITS[0] - h0 >= 1


@pytest.mark.parametrize("kept", [False, True], ids=["full", "kept"])
def test_an_error_between_an_in_place_launch_and_its_settle_breaks_the_copies(monkeypatch, kept):
    """An error after an in-place launch and before its report is settled (a device fault while
    the runs are read) leaves no usable copy behind: the heap's bytes may have changed and nothing
    says which, so the copies the run used are unusable (the next dispatch refused `backend.proof`
    before any launch), the output's device-only bytes unreadable, and the hull's map cleared --
    on the full path and in a kept in-place run (runtime._lost_in_place)."""
    monkeypatch.setenv("WAVELIFT_CUDA_DEFER", "off")
    mem, cfg = _vadd(256)
    fm = rig(monkeypatch, mem, cfg)
    cache: dict = {}
    for _ in range(3 if kept else 1):
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal

    owner, name = (RT.InPlace, "_runs") if kept else (R.CuPyOps, "runs_finish")
    real, faults = getattr(owner, name), [1]

    def fault(*a, **k):  # (once)
        if faults:
            faults.pop()
            raise RuntimeError("device fault reading the runs")
        return real(*a, **k)

    monkeypatch.setattr(owner, name, fault)
    if not kept:
        cache.clear()
    n = len(fm.launches)
    with pytest.raises(RuntimeError, match="device fault"):
        execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert len(fm.launches) == n + 1 and not faults  # (it launched: the heap may have changed)
    assert not R.map_flags(mem.resident.heap.written).any()
    _unusable_after(mem, cfg, fm, cache)
