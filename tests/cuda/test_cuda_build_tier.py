"""The fast first tier of CUDA builds (compile.tiered_compile, Module.take_upgrade; decision 0009,
"Builds in seconds"): a big module is built with -Ofast-compile first, used at once, and replaced
by its optimising build from a background thread; the disk cache holds the optimising build only,
under the name it always had (decision 0016).  NVRTC on the CPU; no GPU."""

from __future__ import annotations

import pathlib
import sys

import pytest

from wavelift.backends.cuda import compile as cc

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

BIG = "x" * cc.TIER_SOURCE_BYTES
SMALL = "x" * (cc.TIER_SOURCE_BYTES - 1)


def test_tier_by_size_knob_and_version(monkeypatch):
    monkeypatch.setattr(cc, "nvrtc_version", lambda: "12.9")
    monkeypatch.delenv("WAVELIFT_CUDA_TIER", raising=False)
    assert (cc.tier_for(BIG), cc.tier_for(SMALL)) == ("fast", "full")
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "off")
    assert (cc.tier_for(BIG), cc.tier_for(SMALL)) == ("full", "full")
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "fast")
    assert (cc.tier_for(BIG), cc.tier_for(SMALL)) == ("fastonly", "fastonly")
    for old in ("12.6", "11.8", "none"):  # no -Ofast-compile before NVRTC 12.8
        monkeypatch.setattr(cc, "nvrtc_version", lambda v=old: v)
        assert cc.tier_for(BIG) == "full"
    monkeypatch.setattr(cc, "nvrtc_version", lambda: "13.0")
    assert cc.tier_for(BIG) == "fastonly"


def test_fast_build_differs_only_by_its_options(monkeypatch):
    """Both tiers compile the same source with the same float options (OPTIONS: --fmad=false,
    -ftz=false, exact division and sqrt): the first tier only adds -Ofast-compile."""
    calls = []

    def fake(source, arch, extra, cubin=True):
        calls.append((source, arch, extra))
        return b"\x7fELF", "Function properties for wl_main\n 0 bytes spill stores"

    monkeypatch.setattr(cc, "_nvrtc_build", fake)
    monkeypatch.setattr(cc, "_IN_PROCESS_REPORTS", [True])
    cc.fast_compile("src", "sm_90")
    cc.nvrtc_build("src", "sm_90")
    (s1, a1, fast), (s2, a2, full) = calls
    assert (s1, a1) == (s2, a2) and fast == cc.FAST_OPTIONS and not set(fast) & set(full)
    assert "--fmad=false" in cc.OPTIONS and "-ftz=false" in cc.OPTIONS


def _vadd_program():
    """vadd (basic.cl, clang -O2, wave32) as Device would launch it: (program, config, base)."""
    import copy

    import numpy as np

    import wavelift
    from wavelift.errors import Refusal
    from wavelift.run import execute as X
    from wavelift.run.result import DispatchResult

    got = []

    def catch(memory, config, index):
        got.append((copy.deepcopy(memory), config))
        return DispatchResult(index, config, Refusal("backend.unavailable", "caught"))

    dev = wavelift.Device("gfx1030", execute=catch)
    k = dev.load_code_object(str(HERE.parent / "fixtures" / "gfx1030" / "basic-O2-w32-flat.hsaco")).kernel(
        "vadd"
    )
    bufs = [dev.upload(np.arange(1000, dtype=np.float32)) for _ in range(2)] + [dev.alloc(4000)]
    k.launch(groups=(4,), block=(256,), args=bufs + [np.uint32(1000)])
    mem, cfg = got[0]
    prog, base = X.program_for(mem, cfg, cache={})  # (the program its module key names)
    return prog, cfg, base


def _vadd_module(monkeypatch, tmp_path, tier="auto"):
    why = cc.nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    if not cc.fast_tier_ok():
        pytest.skip(f"NVRTC {cc.nvrtc_version()} has no -Ofast-compile")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", tier)
    monkeypatch.setattr(cc, "TIER_SOURCE_BYTES", 0)  # vadd is small: tier it anyway
    from wavelift.backends.cuda import build_module
    from wavelift.run.execute import module_key

    prog, cfg, base = _vadd_program()
    key = module_key(prog, cfg, "lane", "cuda")
    return lambda: build_module(key, prog, cfg, "lane", arch="sm_90", base_address=base)


def test_first_tier_then_the_optimising_build(tmp_path, monkeypatch):
    import threading

    build = _vadd_module(monkeypatch, tmp_path)
    gate, real = threading.Event(), cc.nvrtc_compile
    # (the optimising build, started beside the fast one, held until the fast one is back: vadd
    # is small enough that it could otherwise win the race)
    monkeypatch.setattr(
        cc, "nvrtc_compile", lambda src, arch=cc.DEFAULT_ARCH: gate.wait(600) and real(src, arch)
    )
    m = build()
    gate.set()
    assert m.compiled_by == "nvrtc-fast" and m.cubin[:4] == b"\x7fELF" and m.upgrade is not None
    fast = m.cubin
    full = m.upgrade.wait(600)
    assert full is not None and full[:4] == b"\x7fELF", m.upgrade.error
    # the disk cache holds the optimising build only, the bytes a build without tiers makes
    on_disk = [p.read_bytes() for p in tmp_path.glob("*.cubin")]
    assert on_disk == [full]
    m._fn, m._consts = "loaded", {"P": ("array", b"bytes")}  # as after a launch
    assert m.take_upgrade() and not m.take_upgrade()
    assert (m.cubin, m.compiled_by, m.upgrade, m._fn, m._mod, m._consts) == (
        full,
        "nvrtc",
        None,
        None,
        None,
        {},
    )
    again = build()
    assert (again.compiled_by, again.cubin, again.upgrade) == ("disk", full, None)
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "off")
    plain_dir = tmp_path / "untiered"
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(plain_dir))
    untiered = build()
    assert untiered.compiled_by == "nvrtc" and untiered.upgrade is None
    assert untiered.cubin == full  # (NVRTC is deterministic: the same build as before tiers)
    assert [p.read_bytes() for p in plain_dir.glob("*.cubin")] == [full]
    assert fast not in on_disk


def test_fast_only_is_never_cached(tmp_path, monkeypatch):
    build = _vadd_module(monkeypatch, tmp_path, tier="fast")
    a, b = build(), build()
    assert (a.compiled_by, b.compiled_by, a.upgrade, b.upgrade) == ("nvrtc-fast", "nvrtc-fast", None, None)
    assert not list(tmp_path.glob("*.cubin"))


class _Up:
    def __init__(self, cubin, done=True, error=None, seconds=2.0):
        import threading

        self.cubin, self.error, self.seconds, self.done = cubin, error, seconds, threading.Event()
        if done:
            self.done.set()

    def result(self):
        return self.cubin if self.done.is_set() else None


def _module(up):
    from wavelift.backends.cuda import Module

    return Module(("k",), None, "src", "sm_90", b"fast", 0.5, "nvrtc-fast", upgrade=up)


def test_swap_happens_between_launches_only_when_ready():
    """Module.variant (called once at the start of each Runtime, before any constant is copied)
    takes a finished upgrade; a running one is left running; a failed one is dropped."""
    running = _Up(b"full", done=False)
    m = _module(running)
    assert m.variant(True) is m and m.cubin == b"fast" and m.upgrade is running
    running.done.set()
    m._consts = {"P": ("array", b"bytes")}
    assert m.variant(True) is m and (m.cubin, m.compiled_by, m._consts, m.compile_s) == (
        b"full",
        "nvrtc",
        {},
        2.5,
    )
    failed = _module(_Up(None, error="CompileError: x"))
    assert not failed.take_upgrade() and failed.upgrade is None and failed.cubin == b"fast"


def test_checked_build_takes_its_own_upgrade(monkeypatch):
    """The checked build (WL_PRELOADED 0) is tiered too, and swapped at the same point."""
    import wavelift.backends.cuda as C

    up = _Up(b"checked-full", done=False)
    monkeypatch.setattr(
        C, "_compile", lambda key, src, arch, use_disk: (b"checked-fast", 0.1, "nvrtc-fast", up)
    )
    m = _module(None)
    m.preloads = (("a load",), ())
    plain = m.variant(False)
    assert plain.cubin == b"checked-fast" and plain.upgrade is up
    up.done.set()
    assert m.variant(False) is plain and plain.cubin == b"checked-full" and plain.compiled_by == "nvrtc"


def test_optimising_build_taken_when_it_wins_the_race(tmp_path, monkeypatch):
    """Started beside the fast build, the optimising build is used at once when it is there
    first (no swap later), and it is in the disk cache."""
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "auto")
    monkeypatch.setattr(cc, "nvrtc_version", lambda: "12.9")
    monkeypatch.setattr(cc, "nvrtc_compile", lambda src, arch=cc.DEFAULT_ARCH: b"\x7fELF full")
    ups = []
    real_upgrade = cc.Upgrade

    def upgrade(*a, **k):
        ups.append(real_upgrade(*a, **k))
        return ups[-1]

    def fast(src, arch=cc.DEFAULT_ARCH):
        ups[-1].wait(60)  # the optimising build finishes first
        return b"\x7fELF fast"

    monkeypatch.setattr(cc, "Upgrade", upgrade)
    monkeypatch.setattr(cc, "fast_compile", fast)
    cubin, _, how, up = cc.tiered_compile(("k",), BIG, "sm_90")
    assert (cubin, how, up) == (b"\x7fELF full", "nvrtc", None)
    assert cc.tiered_compile(("k",), BIG, "sm_90")[::2] == (b"\x7fELF full", "disk")


def test_launches_run_the_fast_build_then_the_optimising_one(tmp_path, monkeypatch):
    """The whole CUDA host path (stand-in CuPy, tests/cuda/standin_cupy.py; real NVRTC builds):
    the first launches load the fast cubin; once the optimising build is there the next launch
    loads it, copies the module's constants into it again, and lands the same results."""
    import threading

    import numpy as np
    import standin_cupy as S
    from test_host_path import _device, _vadd_from_kernargs

    if cc.nvrtc_problem() or not cc.fast_tier_ok():
        pytest.skip(f"NVRTC {cc.nvrtc_version()}: no fast tier here")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))
    from wavelift.run import execute

    # a module another test of this process built would be found and no build would happen
    monkeypatch.setattr(execute, "_CACHE", {})
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "auto")
    # (the module's own build's tiers: no lean build -- 0049's amendment h163 -- beside them)
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "own")
    monkeypatch.setattr(cc, "TIER_SOURCE_BYTES", 0)
    gate, real = threading.Event(), cc.nvrtc_compile
    monkeypatch.setattr(
        cc, "nvrtc_compile", lambda src, arch=cc.DEFAULT_ARCH: gate.wait(600) and real(src, arch)
    )
    ups, real_upgrade = [], cc.Upgrade

    def upgrade(*a, **k):
        ups.append(real_upgrade(*a, **k))
        return ups[-1]

    monkeypatch.setattr(cc, "Upgrade", upgrade)
    loaded = []
    monkeypatch.setattr(S._FnModule, "load", lambda self, cubin: loaded.append(bytes(cubin)))
    with S.installed() as st:
        dev, k = _device()
        n = 64
        a = dev.upload(np.arange(n, dtype=np.float32))
        b = dev.upload(np.full(n, 0.5, np.float32))
        c = dev.alloc(4 * n)
        st.kernel = _vadd_from_kernargs()
        want = np.arange(n, dtype=np.float32) + 0.5

        def launch():
            r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(n)])
            assert r.refusal is None, r.refusal
            assert r.write_spans == [(c.address, 4 * n)]
            assert np.array_equal(dev.download(c, np.float32), want)

        for _ in range(3):
            launch()
        assert ups and len(set(loaded)) == len(loaded) <= 2  # the fast builds, each loaded once
        fast = set(loaded)
        gate.set()
        full = {u.wait(600) for u in ups}
        assert None not in full and not full & fast
        st.calls.clear()
        launch()
        assert set(loaded[-1:]) <= full and len(loaded) > len(fast), "the optimising build was not loaded"
        assert st.calls["memcpy_h2d"] > 0  # its constants, copied into it
        n_loaded = len(loaded)
        for _ in range(3):
            dev.write(c, np.zeros(n, np.float32))
            launch()
        assert len(loaded) == n_loaded  # loaded once


def test_nvrtc_leaves_the_interpreters_bytes_alone():
    """NVRTC writes its cubin and log into the buffers it is handed; an empty log is one NUL
    byte, and ``b" " * 1`` is the interpreter's shared b" " itself -- a build must hand it fresh
    bytearrays (before: every build with an empty log turned b" " into b"\\x00" for the process)."""
    import test_cuda_backend as T

    if T._nvrtc_problem():
        pytest.skip(T._nvrtc_problem())
    from wavelift.backends.cuda import compile as cc

    cubin, log = cc._nvrtc_build('extern "C" __global__ void k(int* p) { p[0] = 1; }', "sm_90", ())
    assert cubin[:4] == b"\x7fELF" and log.strip("\x00 ") == ""
    # (every one-byte b" " is that one object: compare its byte's value, not two of them)
    assert bytes([32])[0] == 32 and b" "[0] == 32
