"""The CUDA runtime's host side with resident memory (runtime.py, resident.py: decision 0026) run
without a GPU: a stand-in ``cupy`` whose device arrays are host arrays and whose kernels are
Python (wl_runs, wl_land as resident.py's CUDA source states them; the translated kernel
plays vadd through the window tables it is given, and can flag an escape).  What this guards is
the glue: the report buffer's layout, the window tables, gather, the runs, landing through
execute_dispatch, lazy pulls, and a refused dispatch changing nothing.  Oracle: NumPy's a + b."""

from __future__ import annotations

import ctypes
import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import standin_cupy as S  # noqa: E402
from test_cuda_backend import _vadd_dispatch, translate_dispatch  # noqa: E402

from wavelift.backends.cuda.codegen import map_bits  # noqa: E402


@pytest.fixture(autouse=True, params=["off", "one"])
def heap(request, monkeypatch):
    """Each test with a device array per allocation and with one device heap per Resident
    (WAVELIFT_CUDA_HEAP=one, decision 0049 step 2: test_resident_heap_host.py)."""
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", request.param)
    return request.param


class FakeModule:
    """A translated module whose kernel is vadd played in Python through its window tables."""

    def __init__(self, program, a, b, c, n):
        self.program, self.slots, self.hints, self.preloads = program, (), None, ((), ())
        self.lowered = self.proof_input = None  # (as a module read from the disk)
        self.addr, self.n = (a, b, c), n
        self.consts: dict = {}
        self.escape = False
        self.puts: list = []
        self.cwin = 0
        self.compiled_by = "nvrtc"
        self.map_bits = map_bits()  # (its kernel marks the map of the setting: Module.map_bits)
        self.count_slots = 256  # (its counts in the report's own slots: Module.count_slots)

    # (no lean build of its own: a dispatch proved in place runs this one, as while a module's
    # lean build is being built -- runtime.Runtime._prove; LeanPlayer has one)
    lean_news = None

    def lean_ready(self, preloaded, budget=None):
        return False

    def variant(self, preloaded, budget=None, proved=False):
        return self

    def put_constant(self, name, host):
        self.consts[name] = np.array(host)
        self.puts.append((name, np.array(host)))

    def get_global(self, name, host):  # (WL_HINT: every slot resolved to c's window)
        host[:] = self.cwin

    def global_address(self, name):  # (WL_HINT, copied into the report: every slot -> c's window)
        assert name == "WL_HINT"
        self.hint = getattr(self, "hint", np.zeros(64, np.uint32))
        self.hint[:] = self.cwin
        return self.hint.ctypes.data, self.hint.nbytes

    def set_shared(self, fn, n):
        pass

    def function(self):
        return self._kernel

    def _operands(self, args):
        """(arena, written map, c's arena index, a + b) as the kernel finds them by its tables."""
        arena, written, ws, we, wo, wavebase, gscr, g0 = args

        def at(addr):
            k = int(np.searchsorted(ws[:-1], np.uint64(addr), side="right")) - 1
            return int(addr - int(ws[k]) + int(wo[k]))

        a, b, c = (at(x) for x in self.addr)
        self.cwin = int(np.searchsorted(ws[:-1], np.uint64(self.addr[2]), side="right")) - 1
        n = self.n
        f32 = lambda o: np.asarray(arena[o : o + 4 * n]).view(np.float32)  # noqa: E731
        return arena, written, c, f32(a) + f32(b)

    def _kernel(self, grid, block, args, shared_mem=0):
        arena, written, c, out = self._operands(args)
        arena[c : c + 4 * self.n] = out.view(np.uint8)
        S.mark(written, c, c + 4 * self.n)
        self._report()

    def _report(self):
        """The kernel's report: its instruction count and, with ``escape``, one escape."""
        stats = np.ctypeslib.as_array(
            ctypes.cast(int(self.consts["WL_STATS"][0]), ctypes.POINTER(ctypes.c_uint64)), (8 + 512,)
        )
        stats[8] += 7
        if self.escape:
            status = np.ctypeslib.as_array(
                ctypes.cast(int(self.consts["WL_STATUS"][0]), ctypes.POINTER(ctypes.c_uint32)), (16,)
            )
            esc = np.ctypeslib.as_array(
                ctypes.cast(int(self.consts["WL_ESC"][0]), ctypes.POINTER(ctypes.c_uint32)), (128,)
            )
            stats[2] += 1
            status[4] = 1
            esc[:8] = [0, 0, 0, 3, 0x1000, 0, 1, 0]


def rig_with(monkeypatch, module=None):
    """A 32-float vadd dispatch on the CUDA backend's host path: the stand-in CuPy
    (standin_cupy.py) and ``module`` (a FakeModule class) playing the translated kernel."""
    from wavelift.backends import cuda
    from wavelift.backends.cuda import resident

    monkeypatch.setitem(sys.modules, "cupy", S.fake_cupy())
    monkeypatch.setattr(resident, "_OPS", None)
    monkeypatch.setattr(cuda, "available", lambda: True)
    mem, cfg, (a, b, c), n = _vadd_dispatch(32)
    prog, _ = translate_dispatch(mem, cfg)
    fm = (module or FakeModule)(prog, a, b, c, n)
    monkeypatch.setattr(cuda, "build_module", lambda *x, **k: fm)
    return mem, cfg, (a, b, c), n, fm


@pytest.fixture
def rig(monkeypatch):
    return rig_with(monkeypatch)


def _run(mem, cfg):
    from wavelift.run.execute import execute_dispatch

    return execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache={})


def test_runtime_lands_lazily_and_chains(rig, heap):
    mem, cfg, (a, b, c), n, fm = rig
    av = np.frombuffer(mem.read(a, 4 * n), np.float32).copy()
    bv = np.frombuffer(mem.read(b, 4 * n), np.float32).copy()
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    res = mem.resident
    if heap == "one":  # (every device copy a range of the one heap: the stand-in's device array)
        assert res.heap is not None and all(e.heap is res.heap for e in res.entries.values())
    else:
        assert res.heap is None
    assert r.write_spans == [(c, 4 * n)] and r.stats["bytes_written"] == 4 * n
    assert r.stats["instructions"] == 7
    alloc_c = mem.find(c)
    assert not alloc_c._data[: 4 * n].any()  # (not landed on the host yet)
    c1 = av + bv
    assert np.array_equal(np.frombuffer(mem.read(c, 4 * n), np.float32), c1)
    # the host changes a; the next dispatch sees it (a dirty range went up)
    av[:10] = 5
    mem.write(a, av[:10])
    fm.addr = (a, c, c)  # (c = a + c: reads what the first wrote, on the device)
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    assert np.array_equal(np.frombuffer(mem.read(c, 4 * n), np.float32), av + c1)


@pytest.mark.usefixtures("arena_path")
def test_runtime_refused_dispatch_changes_nothing(rig):
    mem, cfg, (a, b, c), n, fm = rig
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    res = mem.resident
    before = {x.base: (e.buf.copy(), e.dev_dirty.ranges()) for x, e in res.entries.items()}
    host = {x.base: x._data.copy() for x in mem}
    fm.escape = True
    fm.addr = (b, b, c)
    r = _run(mem, cfg)
    assert r.refusal is not None and r.refusal.code == "escape", r.refusal
    for x, e in res.entries.items():
        if x.base in before:
            assert np.array_equal(e.buf, before[x.base][0]), x.name
    for x in mem:
        if x.base in host and x.base != c:  # (c: the trace may have pulled it: current bytes)
            assert np.array_equal(x._data, host[x.base]), x.name
    av = np.frombuffer(mem.read(a, 4 * n), np.float32)
    bv = np.frombuffer(mem.read(b, 4 * n), np.float32)
    assert np.array_equal(np.frombuffer(mem.read(c, 4 * n), np.float32), av + bv)


@pytest.mark.usefixtures("arena_path")
def test_runtime_mirror_of_device_data_and_its_rerun(rig):
    """A uniform-load slot whose guessed window is c (written by the last dispatch, on the
    device only): the mirror copies c's current bytes (pulled for it), the dispatch writes c,
    so it runs again without mirrors (runtime._hits on the device's runs)."""
    mem, cfg, (a, b, c), n, fm = rig
    fm.slots = ((4, True),)
    av = np.frombuffer(mem.read(a, 4 * n), np.float32).copy()
    c1 = av + np.frombuffer(mem.read(b, 4 * n), np.float32)
    r = _run(mem, cfg)  # (learns the hint)
    assert r.refusal is None and not r.stats.get("mirror_rerun")
    fm.puts.clear()
    fm.addr = (a, c, c)
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    assert r.stats.get("mirror_rerun")
    mirrors = [h for name, h in fm.puts if name == "WL_MIRROR"]
    assert len(mirrors) == 2 and not mirrors[1].any()  # (the rerun: none)
    words = mirrors[0].view(np.uint8)
    at = c & 7  # (the first copy starts at the window's address mod 8: codegen.mirrors)
    assert np.array_equal(words[at : at + 4 * n].view(np.float32), c1)
    assert np.array_equal(np.frombuffer(mem.read(c, 4 * n), np.float32), av + c1)
