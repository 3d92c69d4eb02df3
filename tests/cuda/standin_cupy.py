"""A stand-in ``cupy`` for running the CUDA backend's host path without a GPU (issue 24).

Device arrays are host arrays (``FArr``: NumPy with CuPy's ``get``/``set``/``data.ptr``), copies
are ``memmove``, events do nothing, ``RawModule`` gives resident.py's two kernels written in
NumPy (``wl_runs``, ``wl_land``, ``wl_gate``, ``wl_aside``, ``wl_fold``: what their CUDA source
states), and
``cuda.function.Module`` loads any cubin and hands out a translated kernel that does not run:
``STATE.kernel`` (None: the launch is skipped; or a callable (arena, written, wstart, wend,
woff, consts: the module's variables by name, host byte arrays) standing in for the kernel,
e.g. vadd played through the window tables).  Constant and
global variables are host buffers of ``CONST_BYTES`` each.  ``STATE.device_s`` sums the time
spent in the stand-in's kernels, so a benchmark can report host time without it; ``STATE.calls``
counts the operations that would be synchronous or launches on a GPU (per name); times are
the thread's CPU time.

Used by bench/bench_resident.py --host-only and tests/cuda/test_host_path.py."""

from __future__ import annotations

import contextlib
import ctypes
import sys
import time
import types
from collections import Counter

import numpy as np

CONST_BYTES = 1 << 16


class _State:
    def __init__(self):
        self.kernel = None
        self.device_s = 0.0
        self.calls: Counter = Counter()
        # a stream capturing (Stream.begin_capture): the operations put on it, not run (a
        # Graph runs them at each launch); the current stream (None: the default, ptr 0)
        self.capturing: list | None = None
        self.stream = None


def _captured(op) -> bool:
    """While a stream captures: ``op`` noted for its graph (True), else False (run it now)."""
    if STATE.capturing is None:
        return False
    STATE.capturing.append(op)
    return True


STATE = _State()


class FArr(np.ndarray):
    """A 'device' array: host memory with CuPy's few extra methods."""

    def fill(self, value):
        if _captured(lambda: self.fill(value)):
            return
        STATE.calls["fill"] += 1
        super().fill(value)

    def get(self, out=None):
        STATE.calls["get"] += 1
        if out is None:
            return np.array(self)
        assert type(out) is np.ndarray and out.shape == self.shape and out.dtype == self.dtype
        out[...] = self
        return out

    def set(self, host):
        STATE.calls["set"] += 1
        self[...] = host

    @property
    def data(self):  # type: ignore[override]
        return _Ptr(self.ctypes.data)


class _Ptr:
    def __init__(self, ptr):
        self.ptr = ptr

    def copy_from_device_async(self, src, n):
        STATE.calls["copy_d2d"] += 1
        ctypes.memmove(self.ptr, src.ptr, n)


def _mk(f, name):
    def make(*a, **k):
        STATE.calls[name] += 1
        return f(*a, **k).view(FArr)

    return make


def _timed(f):
    def run(*a, **k):
        if _captured(lambda: run(*a, **k)):
            return None
        t = time.thread_time()
        try:
            return f(*a, **k)
        finally:
            STATE.device_s += time.thread_time() - t

    return run


@_timed
def _runs(grid, block, args):
    STATE.calls["launch"] += 1
    w, n, starts, ends, cap, count, hs, hd, hn = args
    from wavelift.backends.cuda.resident import map_flags

    if int(hn):  # (wl_hints: the module's guesses into the report, by the same launch)
        ctypes.memmove(int(hd), int(hs), int(hn))

    m = map_flags(w[: int(n)])  # (n: bytes, or a bit map's words: wl_runs_bits)
    b = np.flatnonzero(np.diff(np.concatenate(([0], m.view(np.int8), [0]))))
    s, e = b[0::2], b[1::2]
    count[0], count[1] = s.size, e.size
    k = min(s.size, int(cap))
    starts[:k] = s[::-1][:k]  # (any order: the host sorts)
    ends[:k] = e[::-1][:k]


def _landing(dst, src, mask, o, n, t):
    """wl_land's and wl_land_gated's body: resident.land (the CUDA source's statement in NumPy)."""
    from wavelift.backends.cuda.resident import land

    land(dst, src, mask, int(o), int(n), t)


@_timed
def _land(grid, block, args):
    STATE.calls["launch"] += 1
    _landing(*args)


@_timed
def _gate(grid, block, args, shift=4):
    """wl_gate (a deferred dispatch's verdict), as its CUDA source states it (``shift``: the
    run table's pieces, 5 for wl_gate_bits)."""
    STATE.calls["launch"] += 1
    rep, status_at, esc_at, runs_at, starts_at, ends_at, verdict_at, cap, ok, n, sticky, table = args
    h = np.asarray(rep)
    st = h[int(status_at) : int(status_at) + 64].view(np.uint32)
    c = int(h[int(runs_at) : int(runs_at) + 4].view(np.uint32)[0])
    if sticky[0]:
        v = 2
    elif st[0] or st[4] or h[int(esc_at) : int(esc_at) + 8].view(np.uint64)[0] or c > int(cap):
        v = 1
    else:
        s_ = np.sort(h[int(starts_at) : int(starts_at) + 8 * c].view(np.uint64))
        e_ = np.sort(h[int(ends_at) : int(ends_at) + 8 * c].view(np.uint64))
        pairs = np.asarray(ok)[: 2 * int(n)].reshape(-1, 2)
        inside = [bool(((pairs[:, 0] <= s) & (e <= pairs[:, 1])).any()) for s, e in zip(s_, e_)]
        v = 0 if all(inside) else 1
    h[int(verdict_at) : int(verdict_at) + 4].view(np.uint32)[0] = v
    if v:
        sticky[0] = 1
    else:
        from wavelift.backends.cuda.resident import run_table

        t = run_table(s_, e_, shift)
        table[: t.size] = t


@_timed
def _land_gated(grid, block, args):
    STATE.calls["launch"] += 1
    *landing, sticky = args
    if not sticky[0]:
        _landing(*landing)


@_timed
def _aside(grid, block, args):
    """wl_aside, as its CUDA source states it: the map range zeroed, copied to the aside first
    where the runs' count passed the room."""
    STATE.calls["launch"] += 1
    w, nw, aside, count, cap = args
    n = int(nw)
    if int(count[0]) > int(cap):
        aside[:n] = w[:n]
    w[:n] = 0


@_timed
def _fold(grid, block, args):
    """wl_fold, as its CUDA source states it: every group of 256 count slots added into the
    report's (from word 8), then zeroed."""
    STATE.calls["launch"] += 1
    wide, groups, stats = args
    w = np.asarray(wide)[: 512 * int(groups)].reshape(int(groups), 512)
    stats[8 : 8 + 512] += w.sum(axis=0, dtype=np.uint64)
    w[:] = 0


class _RawModule:
    def __init__(self, code, options=()):
        assert "wl_runs" in code and "wl_land" in code

    def get_function(self, name):
        return {
            "wl_runs": _runs,
            "wl_land": _land,
            "wl_gate": _gate,
            "wl_land_gated": _land_gated,
            "wl_aside": _aside,
            "wl_fold": _fold,
            # (the bit map's: the NumPy statements read the map's form from its element type)
            "wl_runs_bits": _runs,
            "wl_land_bits": _land,
            "wl_gate_bits": lambda grid, block, args: _gate(grid, block, args, 5),
            "wl_land_gated_bits": _land_gated,
        }[name]


class _Var:
    def __init__(self, n):
        self.buf = np.zeros(n, np.uint8)
        self.ptr = self.buf.ctypes.data
        self.mem = types.SimpleNamespace(size=n)


@_timed
def _main(grid, block, args, consts):
    STATE.calls["launch"] += 1
    if STATE.kernel is not None:
        STATE.kernel(*args[:5], consts)


class _FnModule:
    """cupy.cuda.function.Module: any cubin; its kernel is the stand-in (STATE.kernel)."""

    def __init__(self):
        self.vars: dict = {}
        self.ptr = 0

    def load(self, cubin):
        pass

    def get_function(self, name):
        return _Callable(self)

    def get_global_var(self, name):
        v = self.vars.get(name)
        if v is None:
            v = self.vars[name] = _Var(CONST_BYTES)
        return v


class _Callable:
    def __init__(self, mod):
        self.ptr = 0
        self.mod = mod

    def __call__(self, grid, block, args, shared_mem=0):
        _main(grid, block, args, {k: v.buf for k, v in self.mod.vars.items()})


def fake_cupy():
    cp = types.ModuleType("cupy")
    cp.uint8, cp.uint32, cp.uint64, cp.int64 = np.uint8, np.uint32, np.uint64, np.int64  # type: ignore[attr-defined]
    cp.zeros, cp.empty = _mk(np.zeros, "zeros"), _mk(np.empty, "empty")  # type: ignore[attr-defined]
    cp.asarray = lambda a: (STATE.calls.update(["asarray"]), np.array(a).view(FArr))[1]  # type: ignore[attr-defined]
    cp.RawModule = _RawModule  # type: ignore[attr-defined]

    class Event:
        def record(self):
            pass

        def synchronize(self):
            pass

    def memcpy(dst, src, n, kind):
        STATE.calls["memcpy_h2d" if kind == 1 else "memcpy_d2h"] += 1
        ctypes.memmove(dst, src, n)

    def memcpy_async(dst, src, n, kind, stream):
        assert kind in (2, 3) and stream == (0 if STATE.stream is None else STATE.stream.ptr)
        if _captured(
            lambda: memcpy_async(dst, src, n, kind, 0 if STATE.stream is None else STATE.stream.ptr)
        ):
            return
        STATE.calls["memcpy_d2d" if kind == 3 else "memcpy_d2h_async"] += 1
        ctypes.memmove(dst, src, n)

    class Graph:
        def __init__(self, ops):
            self.ops = ops

        def launch(self, stream=None):
            """Its operations in order; all of their time is the device's (STATE.device_s: on a
            GPU the replay is device work after one launch call), the stand-in's Python too."""
            STATE.calls["graph_launch"] += 1
            d0, t = STATE.device_s, time.thread_time()
            try:
                for op in self.ops:
                    op()
            finally:
                STATE.device_s = d0 + (time.thread_time() - t)

    class Stream:
        """A stream of its own (ptr 1): while current (``with``), operations go on it; while it
        captures, they are noted for the Graph ``end_capture`` gives."""

        ptr = 1

        def __init__(self, non_blocking=False):
            self.outer = None

        def __enter__(self):
            self.outer, STATE.stream = STATE.stream, self
            return self

        def __exit__(self, *exc):
            STATE.stream = self.outer

        def begin_capture(self, mode=None):
            assert STATE.capturing is None and STATE.stream is self
            STATE.capturing = []

        def end_capture(self):
            ops, STATE.capturing = STATE.capturing, None
            return Graph(ops)

        def synchronize(self):
            pass

    _default = types.SimpleNamespace(ptr=0, synchronize=lambda: None)

    rt = types.SimpleNamespace(
        memcpy=memcpy,
        memcpyAsync=memcpy_async,
        memcpyHostToDevice=1,
        memcpyDeviceToHost=2,
        memcpyDeviceToDevice=3,
    )
    fnmod = types.SimpleNamespace(Module=_FnModule)
    cp.cuda = types.SimpleNamespace(  # type: ignore[attr-defined]
        Event=Event,
        get_elapsed_time=lambda a, b: 0.0,
        runtime=rt,
        function=fnmod,
        get_current_stream=lambda: _default if STATE.stream is None else STATE.stream,
        Stream=Stream,
        alloc_pinned_memory=lambda n: bytearray(n),
        Device=lambda: types.SimpleNamespace(compute_capability="90", attributes={"MultiProcessorCount": 2}),
    )
    return cp


@contextlib.contextmanager
def installed():
    """The stand-in as ``cupy`` and the CUDA backend told it is available (restored after)."""
    from wavelift.backends import cuda
    from wavelift.backends.cuda import resident

    saved = sys.modules.get("cupy"), resident._OPS, cuda.available
    sys.modules["cupy"] = fake_cupy()
    resident._OPS = None
    cuda.available = lambda: True  # type: ignore[assignment]
    try:
        yield STATE
    finally:
        if saved[0] is None:
            sys.modules.pop("cupy", None)
        else:
            sys.modules["cupy"] = saved[0]
        resident._OPS = saved[1]
        cuda.available = saved[2]  # type: ignore[assignment]
        STATE.kernel = None
        STATE.capturing = STATE.stream = None


def mark(written, lo: int, hi: int, value: int = 1, step: int = 1) -> None:
    """A stand-in kernel's marks of arena bytes lo, lo + step, ... below hi in the written map it
    is handed, set (``value`` 1) or cleared (0), in the map's form: one byte per arena byte, or
    a bit map's bits (WAVELIFT_CUDA_MAP=bits: the module's source says which, Module.map_bits;
    bit i & 31 of word i >> 5, the words little-endian)."""
    if written.dtype.itemsize != 4:
        written[lo:hi:step] = value
        return
    bits = np.asarray(written).view(np.uint8)
    idx = np.arange(lo, hi, step)
    one = np.left_shift(1, idx & 7).astype(np.uint8)
    if value:
        np.bitwise_or.at(bits, idx >> 3, one)
    else:
        np.bitwise_and.at(bits, idx >> 3, ~one)


def vadd_player(memory_addresses, n):
    """A stand-in kernel for vadd (c = a + b over n floats) played through the window tables it
    is handed (as the translated kernel finds them: window by guest address)."""
    a_, b_, c_ = memory_addresses

    def kernel(arena, written, ws, we, wo, consts):
        starts = np.asarray(ws[:-1])

        def at(addr):
            k = int(np.searchsorted(starts, np.uint64(addr), side="right")) - 1
            return int(addr - int(starts[k]) + int(wo[k]))

        a, b, c = at(a_), at(b_), at(c_)
        f32 = lambda o: np.asarray(arena[o : o + 4 * n]).view(np.float32)  # noqa: E731
        arena[c : c + 4 * n] = (f32(a) + f32(b)).view(np.uint8)
        mark(written, c, c + 4 * n)

    return kernel
