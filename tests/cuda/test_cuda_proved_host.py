"""The lean build of a dispatch run in place on a proof (WAVELIFT_CUDA_PROVED=lean, decision
0049's amendment h148), without a GPU: the setting is in the module key; the lean build
(kernel.h's WL_PROVED) has no search, hint or escape record behind an access's failed window
test -- only the proof flag --, and compiles (NVRTC); the runtime launches it, with every slot's
proved window as its guess, only for a dispatch in place on a proof whose every slot has a
proved window (the stand-in CuPy and test_inplace_host's Player, which plays the dispatch on
the NumPy backend).  On a GPU: test_cuda_proved_gpu.py."""

from __future__ import annotations

import copy
import ctypes
import re
import shutil
import subprocess
import threading

import numpy as np
import pytest
import standin_cupy as S
from test_inplace_host import Player, _divergent_loop, _run, _same_memory, rig
from test_unrefusable_host import _vadd

from wavelift.backends import cuda as WC
from wavelift.backends.cuda import codegen as G
from wavelift.backends.cuda import runtime as RT

_LEAN_COMPILE = WC._lean_compile  # (the real one: test_a_lean_build_on_the_disk_is_there_at_once)


@pytest.fixture(autouse=True)
def in_place(monkeypatch):
    """In place on the heap, WAVELIFT_CUDA_PROVED unset (its default: lean), and each lean build
    there at once, as one read from the disk cache is (``lean_builds``: built in the background
    and finished by the test)."""
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "proved")
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.delenv("WAVELIFT_CUDA_PROVED", raising=False)
    monkeypatch.setattr(WC, "_lean_compile", lambda key, src, arch, use_disk, then: (b"lean", 0.0, "disk"))


class _Building:
    """A lean build running in the background as Module.lean_ready sees compile.Upgrade (result,
    done, seconds, error), finished when the test says: ``finish`` (its cubin there, then
    Upgrade's ``then`` as its thread calls it) or ``fail``."""

    def __init__(self, src: str, then):
        import threading

        self.src, self.then = src, then
        self.cubin, self.error, self.seconds, self.done = None, None, 0.25, threading.Event()

    # (finish right after the n-th look that found it running: its thread ending while the
    # dispatch that looked launches the own build; 0: never)
    finish_after_look = 0

    def result(self):
        got = self.cubin if self.done.is_set() else None
        if got is None and self.finish_after_look and self.error is None:
            self.looks = getattr(self, "looks", 0) + 1
            if self.looks == self.finish_after_look:
                self.finish()
        return got

    def finish(self) -> None:
        self.cubin = b"lean"
        self.done.set()
        self.then()

    def fail(self) -> None:
        self.error = "CompileError: (the test's)"
        self.done.set()


@pytest.fixture
def lean_builds(monkeypatch):
    """Each lean build started (WC._lean_compile) is a _Building the test finishes -> their list."""
    got: list = []

    def start(key, src, arch, use_disk, then):
        got.append(_Building(src, then))
        return got[-1]

    monkeypatch.setattr(WC, "_lean_compile", start)
    return got


def _generated(mem, cfg) -> tuple:
    """(program, the module's source, its slots) of the dispatch, as build_module makes them."""
    from test_cuda_backend import translate_dispatch

    prog, base = translate_dispatch(mem, cfg)
    src, slots, _, _ = WC.module_source(prog, cfg, base_address=base)
    return prog, src, slots


@pytest.fixture(scope="module")
def vadd():
    mem, cfg = _vadd(1000)
    return mem, cfg, _generated(mem, cfg)


# ------------------------------------------------------------------------- the module key
def test_the_setting_is_in_the_module_key(monkeypatch, vadd):
    """The default (lean, unset or named) adds nothing to the key -- its keys and stored entries
    are those made before it was the default --; `own` adds its marker (another stored entry);
    a value the code does not know raises."""
    from wavelift.backends.cuda import stored

    _, cfg, _ = vadd
    unset = WC.BACKEND.key_extra(cfg)
    assert not [p for p in unset if isinstance(p, str) and p.startswith("proved")]
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean")
    assert WC.BACKEND.key_extra(cfg) == unset
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "own")
    own = WC.BACKEND.key_extra(cfg)
    assert own == unset + ("proved=own",)
    assert stored.entry_name(("k",) + own, "sm_90", 0) != stored.entry_name(("k",) + unset, "sm_90", 0)
    for bad in ("on", "Lean", "off"):
        monkeypatch.setenv("WAVELIFT_CUDA_PROVED", bad)
        with pytest.raises(ValueError, match="WAVELIFT_CUDA_PROVED"):
            WC.BACKEND.key_extra(cfg)
        with pytest.raises(ValueError, match="WAVELIFT_CUDA_PROVED"):
            G.proved_lean()


def test_the_lean_build_is_a_sibling_built_with_its_define(fake_builds):
    built = fake_builds
    pre = ((object(),), ())
    m = WC.Module(("k",), None, "kernel\n", "sm_90", b"", 0.0, "fake", (), preloads=pre)
    k = m.variant(True, None, True)
    assert k is not m and k.source == WC.PROVED_DEFINE + "kernel\n" and m.variant(True, None, True) is k
    k0 = m.variant(False, None, True)  # (with an unresolved preload: both defines)
    assert k0.source == "#define WL_PRELOADED 0\n" + WC.PROVED_DEFINE + "kernel\n"
    assert m.variant(True) is m and len(built) == 2


# ------------------------------------------------- the lean build, built in the background
# (decision 0049's amendment h163: a dispatch never waits for it; the module's own build runs
# until it is there, and for good where it fails)
def test_the_lean_build_is_built_in_the_background_and_taken_once_there(fake_builds, lean_builds):
    """Module.lean_ready starts the lean build in the background at the first ask and says
    False, never building it itself, until it finished -- then True, ``lean_news`` a new object,
    and variant's proved sibling is that build (no build of its own); each set of defines its
    own build, started once; a failed one: False for good, no news, never started again."""
    built = fake_builds  # (variant's own builds: _compile)
    pre = ((object(),), ())
    m = WC.Module(("k",), None, "kernel\n", "sm_90", b"own", 0.0, "fake", (), preloads=pre)
    assert not m.lean_ready(True) and not m.lean_ready(True, None)
    (b,) = lean_builds
    assert b.src == WC.PROVED_DEFINE + "kernel\n" and m.lean_news is None and not built
    assert not m.lean_ready(False)  # (an unresolved preload: the lean build of the checked one)
    assert len(lean_builds) == 2 and lean_builds[1].src == "#define WL_PRELOADED 0\n" + b.src
    b.finish()
    news = m.lean_news
    assert news is not None and m.lean_ready(True) and m.lean_news is news
    k = m.variant(True, None, True)
    assert (k.cubin, k.source, k.compiled_by, k.compile_s) == (b"lean", b.src, "nvrtc", 0.25)
    assert m.variant(True, None, True) is k and m.variant(True) is m and not built
    assert k.slots == m.slots and k.preloads is m.preloads and k.upgrade is None
    lean_builds[1].fail()
    for _ in range(3):
        assert not m.lean_ready(False)
    assert len(lean_builds) == 2 and m.lean_news is news and not built
    assert m.lean_ready(True)  # (the other one still there)


def test_a_lean_build_on_the_disk_is_there_at_once(monkeypatch, tmp_path):
    """compile.background_compile through Module.lean_ready: where the disk cache holds the lean
    build it is read at once (no thread, no build); else built in a thread and written there --
    so the next process's module (another Module, the same key) has it at its first ask."""
    from wavelift.backends.cuda import compile as C

    monkeypatch.setattr(WC, "_lean_compile", _LEAN_COMPILE)
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "off")
    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path / "cuda"))
    compiled: list = []

    go = threading.Event()  # (the build waits for it: not there at the first ask)

    def nvrtc(src, arch):
        go.wait(30)
        compiled.append(src)
        return b"\x7fELF" + src.encode()

    monkeypatch.setattr(C, "nvrtc_compile", nvrtc)

    def module():
        return WC.Module(("k", 163), None, "kernel\n", "sm_90", b"own", 0.0, "fake", ())

    m = module()
    assert not m.lean_ready(True)
    (up,) = m._leans.values()
    go.set()
    assert up.wait(30) == b"\x7fELF" + (WC.PROVED_DEFINE + "kernel\n").encode()
    assert m.lean_news is not None and m.lean_ready(True) and len(compiled) == 1
    m2 = module()
    assert m2.lean_ready(True) and not m2._leans and m2.lean_news is None and len(compiled) == 1
    k = m2.variant(True, None, True)
    up0 = up
    assert k.compiled_by == "disk" and k.cubin == up.result() and k.source == WC.PROVED_DEFINE + "kernel\n"
    # (the fast tier only: built fast in the background, never written to the disk)
    monkeypatch.setenv("WAVELIFT_CUDA_TIER", "fast")
    monkeypatch.setattr(C, "fast_tier_ok", lambda: True)
    go = threading.Event()
    monkeypatch.setattr(C, "fast_compile", lambda src, arch: (go.wait(30), b"fast")[1])
    m3 = WC.Module(("k", 164), None, "kernel\n", "sm_90", b"own", 0.0, "fake", ())
    assert not m3.lean_ready(True)
    (up,) = m3._leans.values()
    go.set()
    assert up.wait(30) == b"fast" and m3.lean_ready(True) and len(compiled) == 1
    src = WC.PROVED_DEFINE + "kernel\n"
    assert C._on_disk(("k", 164), src, "sm_90", True)[0] is None
    assert C._on_disk(("k", 163), src, "sm_90", True)[0] == up0.result()
    assert WC.wait_lean(30)


# ---------------------------------------------------------------------------- the source
# what the rare path of the module's own build does and the lean build must not: the hint read
# and written, the binary search over the window starts (constant or global tables), the
# non-canonical address test, the escape record and count
_SEARCH = (
    "WL_HINT[slot]",
    "WL_WS[mid]",
    "__ldg(C.W.start + mid)",
    "wl_is_canon(addr)",
    "WL_ESC + slot",
    "WL_STATS + 2",
)


def _preprocessed(src: str) -> str:
    cpp = shutil.which("cpp")
    if cpp is None:
        pytest.skip("no C preprocessor (cpp)")
    out = subprocess.run([cpp, "-P", "-x", "c++", "-"], input=src, capture_output=True, text=True, check=True)
    return out.stdout


def test_the_lean_source_has_no_search_path(vadd):
    _, _, (_, src, _) = vadd
    plain, lean = _preprocessed(src), _preprocessed(WC.PROVED_DEFINE + src)
    assert all(s in plain for s in _SEARCH)  # (the oracle: the module's own build has them)
    assert not [s for s in _SEARCH if s in lean]
    # a failed window test sets the proof flag (status[0]: backend.proof in place), a load that
    # fails it reads zero
    esc = re.search(r"void wl_escape_\([^)]*\) \{(.*?)\n\}", lean, re.S).group(1)
    assert "wl_flag_(32u" in esc and "atomicAdd" not in esc
    assert "w[k] = 0u;" in re.search(r"void wl_gload_\(.*?\n\}", lean, re.S).group(0)
    # the window test stays: the direct access's, and the rare path's (an unaligned access
    # inside its guess still lands, by the byte path)
    for fn in ("wl_direct", "wl_res"):
        assert "d < WL_GL[slot]" in re.search(rf"bool {fn}\(.*?\n\}}", lean, re.S).group(0), fn


def test_nvrtc_compiles_the_lean_build(vadd):
    from test_cuda_backend import _needs_nvrtc

    from wavelift.backends.cuda.compile import nvrtc_compile

    _needs_nvrtc()
    _, _, (_, src, _) = vadd
    lean, plain = nvrtc_compile(WC.PROVED_DEFINE + src, "sm_90"), nvrtc_compile(src, "sm_90")
    assert lean[:4] == b"\x7fELF" and len(lean) < len(plain)  # (the search's code is gone)


# --------------------------------------------------------------------------- the runtime
class LeanPlayer(Player):
    """A Player with the module's real slots and a lean build of its own (_LeanBuild), both
    playing the dispatch, noting which build each full path asks for (``built``: variant's
    ``proved``) and which each launch ran (``ran``: "own" or "lean", at the kernel's run -- a
    captured graph's at each of its launches).  Whether its lean build is there is a real
    Module's bookkeeping (``builds``: Module.lean_ready, lean_news) over WC._lean_compile."""

    def __init__(self, program, model, cfg, slots=()):
        super().__init__(program, model, cfg)
        self.slots = slots
        self.built: list = []
        self.ran: list = []
        self.builds = WC.Module(
            ("lean-player",), None, "kernel\n", "sm_90", b"own", 0.0, "fake", use_disk=False
        )
        self.lean = _LeanBuild(self)

    @property
    def lean_news(self):
        return self.builds.lean_news

    def lean_ready(self, preloaded, budget=None):
        return self.builds.lean_ready(preloaded, budget)

    def variant(self, preloaded, budget=None, proved=False):
        self.built.append(proved)
        if proved:  # (the runtime asks for it only once it is there: never built here)
            assert self.builds.lean_ready(preloaded, budget), "the lean build launched before it was built"
            return self.lean
        return self

    def _launch(self, grid, block, args, shared_mem=0, build="own"):
        def go():
            self.ran.append(build)
            self._kernel(grid, block, args, shared_mem)

        if not S._captured(go):
            go()


class _LeanBuild:
    """A LeanPlayer's lean build: its own loaded function and count of constant writes (what a
    kept plan holds of the build it launches), its launches played by the player; its WL_HINT
    is what the runtime put there (the lean kernel never writes it)."""

    upgrade = None
    count_slots = 256

    def __init__(self, player):
        import functools

        self.player, self._puts = player, 0
        self._fn = functools.partial(player._launch, build="lean")

    def function(self):
        return self._fn

    def put_constant(self, name, host):
        self.player.put_constant(name, host)
        self._puts += 1

    def set_shared(self, fn, n):
        pass

    def global_address(self, name):
        h = self.player.consts["WL_HINT"]
        return h.ctypes.data, h.nbytes


def _rigged(monkeypatch, mem, cfg, slots):
    return rig(monkeypatch, mem, cfg, lambda p, model, c: LeanPlayer(p, model, c, slots))


def test_a_proved_dispatch_in_place_launches_the_lean_build(monkeypatch, vadd):
    mem0, cfg, (_, _, slots) = vadd
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean")
    mem = copy.deepcopy(mem0)
    fm = _rigged(monkeypatch, mem, cfg, slots)
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    assert r.stats["in_place"] == "proved" and r.stats["build"] == "lean"
    assert fm.built == [True]
    # every slot's guess is its proved window (a guess in each; WL_HINT holds them, the hints
    # the module reads back) -- the windows the accesses do lie in: a, b, c and the arguments
    hint = fm.consts["WL_HINT"]
    assert hint.dtype == np.uint32 and len(hint) == len(slots)
    starts = sorted(w.address for w in r.windows)
    assert [int(x) for x in fm.consts["WL_GB"][: len(slots)]] == [starts[k] for k in hint]
    assert (fm.consts["WL_GL"][: len(slots)] > 0).all()
    # the store's: the window its write spans lie in (c's)
    ends = {w.address: w.address + w.size for w in r.windows}
    (j,) = [j for j, op in enumerate(_accesses(fm, cfg)) if op.name == "store"]
    lo = starts[hint[j]]
    assert r.write_spans and all(lo <= a and a + n <= ends[lo] for a, n in r.write_spans)
    _same_memory(mem, fm.model)


def test_the_lean_build_guesses_its_proved_windows_whatever_the_hints_hold(monkeypatch, vadd):
    """The lean build's guesses are the proved windows (Runtime.lean), not whatever the module's
    hints hold when the constants are put: a kept plan settling between the proof and the launch
    rewrites m.hints (session 51's review, F1) -- then the lean kernel would flag every access
    outside its guess and refuse a dispatch that is proved."""
    mem0, cfg, (_, _, slots) = vadd
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean")
    mem = copy.deepcopy(mem0)
    fm = _rigged(monkeypatch, mem, cfg, slots)
    prove = RT.Runtime._prove

    def prove_then_hints_move(self):
        why = prove(self)
        if self.lean is not None:  # (what _Kept._hints_from would write: other guesses)
            self.m.hints = np.full(len(self.lean), len(self.win.starts), np.int64)
        return why

    monkeypatch.setattr(RT.Runtime, "_prove", prove_then_hints_move)
    r = _run(mem, cfg)
    assert r.refusal is None, r.refusal
    assert r.stats["build"] == "lean"
    hint = fm.consts["WL_HINT"]
    starts = sorted(w.address for w in r.windows)
    assert [int(x) for x in fm.consts["WL_GB"][: len(slots)]] == [starts[k] for k in hint]
    _same_memory(mem, fm.model)


def _accesses(fm, cfg):
    from wavelift.backends.cuda import globalrange as GR

    return GR.global_accesses(RT._proof_input(fm, cfg)[0])


def test_the_module_build_without_the_setting_or_the_proof(monkeypatch, vadd):
    mem0, cfg, (_, _, slots) = vadd
    # the setting's opt-out (`own`): the module's own build, in place as before, no lean build
    # started
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "own")
    mem = copy.deepcopy(mem0)
    fm = _rigged(monkeypatch, mem, cfg, slots)
    r = _run(mem, cfg)
    assert r.refusal is None and r.stats["in_place"] == "proved" and "build" not in r.stats
    assert fm.built == [False] and "WL_HINT" not in fm.consts
    assert fm.ran == ["own"] and not fm.builds._leans and not fm.builds._siblings
    _same_memory(mem, fm.model)
    # on, a dispatch not proved (a loop): the arena, the module's own build
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean")
    mem, cfg2 = _divergent_loop()
    fm = _rigged(monkeypatch, mem, cfg2, _generated(mem, cfg2)[2])
    r = _run(mem, cfg2)
    assert r.refusal is None and r.stats["in_place"] == "loop" and "build" not in r.stats
    assert fm.built == [False]
    # on, in place, but a slot the proof does not cover (its program numbered otherwise than the
    # module's slots: nothing claimed): the module's own build
    mem = copy.deepcopy(mem0)
    fm = _rigged(monkeypatch, mem, cfg, slots[:-1] + ((slots[-1][0] + 4, False),))
    r = _run(mem, cfg)
    assert r.refusal is None and r.stats["in_place"] == "proved" and "build" not in r.stats
    assert fm.built == [False]
    _same_memory(mem, fm.model)


class _M:
    def __init__(self, n, same=True):
        self.slots = tuple((4, False) for _ in range(n))
        self.proof_input = (None, None, same)


def test_lean_hints_only_where_every_slot_has_a_proved_window(monkeypatch):
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean")
    assert RT._lean_hints(_M(3), [2, 0, 1]).tolist() == [2, 0, 1]
    assert RT._lean_hints(_M(3), [2, None, 1]) is None  # (a slot not proved)
    assert RT._lean_hints(_M(3), [2, 0]) is None  # (not the module's slots)
    assert RT._lean_hints(_M(3, same=False), [2, 0, 1]) is None
    assert RT._lean_hints(_M(0), []) is None  # (no access: nothing to gain)
    monkeypatch.setattr(G, "MAX_GUESSES", 2)  # (a slot past the guesses has none)
    assert RT._lean_hints(_M(3), [2, 0, 1]) is None
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "own")
    monkeypatch.setattr(G, "MAX_GUESSES", 1024)
    assert RT._lean_hints(_M(3), [2, 0, 1]) is None
    monkeypatch.delenv("WAVELIFT_CUDA_PROVED")  # (the default: lean)
    assert RT._lean_hints(_M(3), [2, 0, 1]).tolist() == [2, 0, 1]


def test_repeated_lean_dispatches_run_from_a_kept_plan(monkeypatch, vadd):
    """The same dispatch again runs from its kept in-place plan (runtime.InPlace) with the lean
    build it was armed with, the stats saying so, amid a host write (the full path once) -- as
    often as the module's own build does."""
    from wavelift.run import execute as X
    from wavelift.run.execute import execute_dispatch

    mem0, cfg, (_, _, slots) = vadd
    hits = {}
    for lean in (False, True):
        monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean" if lean else "own")
        mem = copy.deepcopy(mem0)
        fm = _rigged(monkeypatch, mem, cfg, slots)
        cache: dict = {}
        h0 = X.AGAIN_HITS[0]
        a = next(x for x in mem if x.name == "a")
        for i in range(6):
            if i == 3:
                for m in (mem, fm.model):
                    m.write(a.base + 8, np.full(8, 3, np.uint8))
            r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
            assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
            assert r.stats.get("build") == ("lean" if lean else None) and r.write_spans == fm.spans
        assert set(fm.built) == {lean} and len(fm.launches) == 6
        assert fm.ran == ["lean" if lean else "own"] * 6
        hits[lean] = X.AGAIN_HITS[0] - h0
        _same_memory(mem, fm.model)
    assert hits[True] == hits[False] >= 3, hits


@pytest.mark.parametrize("setting", ["lean", "own"])
def test_in_place_runs_the_own_build_until_the_lean_is_built(monkeypatch, vadd, lean_builds, setting):
    """The default (lean): a stream of vadd in place (kept runs, deferred ones read at the end,
    a host write between) launches the module's own build while its lean build is being built
    -- started once, by the first dispatch, never waited for -- and, once it finished, the
    next dispatch takes the full path and every later launch, kept and deferred, runs the lean
    build (the kept plan armed on the own build before no longer holds: no own launch after);
    each result's build as its stats say, its write spans the model's (the NumPy backend's),
    every byte the model's, the map zero.  `own`: no lean build started, every launch the own."""
    from wavelift.backends.cuda import resident as R
    from wavelift.run import execute as X
    from wavelift.run.execute import execute_dispatch

    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", setting)
    mem0, cfg, (_, _, slots) = vadd
    mem = copy.deepcopy(mem0)
    fm = _rigged(monkeypatch, mem, cfg, slots)
    cache: dict = {}
    a = next(x for x in mem if x.name == "a")
    d0 = X.DEFERRED[0]
    rs = []
    for i in range(12):
        if i == 4:  # (a host write: the full path again, the lean build still being built)
            for m in (mem, fm.model):
                m.write(a.base + 8, np.full(8, 7, np.uint8))
        if i == 8:
            n = len(fm.built)  # (the full paths before: each asked for the own build)
            if setting == "lean":
                (b,) = lean_builds
                assert b.src == WC.PROVED_DEFINE + "kernel\n"
                b.finish()
        rs.append(execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache))
    assert X.DEFERRED[0] - d0 >= 6  # (most launches queued, read only below)
    lean = setting == "lean"
    assert len(lean_builds) == (1 if lean else 0)
    assert fm.ran == ["own"] * 8 + ["lean" if lean else "own"] * 4, fm.ran
    assert n >= 2 and fm.built[:n] == [False] * n and fm.built[n:] == [lean] * (len(fm.built) - n)
    assert len(fm.built) > n or not lean  # (the full path once, at least, after it finished)
    for i, r in enumerate(rs):
        assert r.refusal is None and r.stats["in_place"] == "proved", (i, r.refusal)
        assert r.stats.get("build") == ("lean" if lean and i >= 8 else None), (i, r.stats)
        assert r.write_spans == fm.spans, i
    _same_memory(mem, fm.model)
    assert not R.map_flags(mem.resident.heap.written).any()


def test_a_lean_build_finishing_during_a_full_path_drops_the_plan_it_arms(monkeypatch, vadd, lean_builds):
    """The lean build finishes just after a full path found it running (its thread's news
    after that look; the second full path's: the first dispatch's plan is not kept, its
    guesses new): the plan that dispatch arms on the own build does not hold -- the news it
    holds is the one read before the look (Runtime.run) --, so the next dispatch takes the full
    path and launches the lean build, and every one after too."""
    from wavelift.run.execute import execute_dispatch

    monkeypatch.setattr(_Building, "finish_after_look", 2)
    mem0, cfg, (_, _, slots) = vadd
    mem = copy.deepcopy(mem0)
    fm = _rigged(monkeypatch, mem, cfg, slots)
    cache: dict = {}
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache) for _ in range(6)]
    assert len(lean_builds) == 1 and lean_builds[0].done.is_set()
    assert fm.ran == ["own"] * 2 + ["lean"] * 4 and fm.built[:3] == [False, False, True], (fm.ran, fm.built)
    for r in rs:
        assert r.refusal is None and r.write_spans == fm.spans
    assert [r.stats.get("build") for r in rs] == [None] * 2 + ["lean"] * 4
    _same_memory(mem, fm.model)


def test_a_failed_lean_build_leaves_the_own_build_for_good(monkeypatch, vadd, lean_builds):
    """A lean build that fails: every dispatch after -- full paths (a host write between), kept
    and deferred runs -- runs the module's own build, equal to the model's, with no error; the
    build is never started again and no kept plan drops for it."""
    from wavelift.run import execute as X
    from wavelift.run.execute import execute_dispatch

    mem0, cfg, (_, _, slots) = vadd
    mem = copy.deepcopy(mem0)
    fm = _rigged(monkeypatch, mem, cfg, slots)
    cache: dict = {}
    a = next(x for x in mem if x.name == "a")
    h0 = X.AGAIN_HITS[0] + X.DEFERRED[0]
    rs = [execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)]
    (b,) = lean_builds
    b.fail()
    for i in range(1, 10):
        if i == 5:
            for m in (mem, fm.model):
                m.write(a.base + 8, np.full(8, 9, np.uint8))
        rs.append(execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache))
    for i, r in enumerate(rs):
        assert r.refusal is None and r.stats["in_place"] == "proved" and "build" not in r.stats, (i, r.stats)
        assert r.write_spans == fm.spans
    assert fm.ran == ["own"] * 10 and set(fm.built) == {False} and len(lean_builds) == 1
    assert fm.lean_news is None and X.AGAIN_HITS[0] + X.DEFERRED[0] - h0 >= 7
    _same_memory(mem, fm.model)


# ------------------------------------------------------------- the lean access on the host
# (test_cuda_memory_host.py's rig: kernel.h's accesses compiled by g++, the lean build's define
# in front; each access is one call, so the oracle follows the stores in order)
LEAN_DRIVER = r"""
extern "C" void wl_test(const u64* ws, const u64* we, const i64* wo, u32 n,
                        const u64* gb, const u64* gl, const i64* go, u8* arena, u8* written,
                        const u64* addr, const u32* nb, const u32* slot, const u32* store,
                        const u32* data, const u32* init, long count, u32* out, u32* flagged, u32* misc) {
  WL_TEST_SETUP();
  for (long i = 0; i < count; i++) {
    status[0] = 0u; status[5] = 0u;
    u32 w[4] = {init[i], init[i], init[i], init[i]};
    if (store[i]) wl_gstore(C, addr[i], nb[i], data + 4 * i, 7u, slot[i], 0u);
    else wl_gload(C, addr[i], true, nb[i], w, 4u, 7u, slot[i], 0u, true);
    for (int k = 0; k < 4; k++) out[4 * i + k] = w[k];
    flagged[i] = status[0];
  }
  u32 h = 0u;
  for (u32 j = 0; j < WL_NSLOT; j++) h |= (u32)(WL_HINT[j] != 0xffffffffu);
  misc[0] = h; misc[1] = (u32)stats[2]; misc[2] = status[4];
}
"""


@pytest.fixture(scope="module", params=["bytes", "bits"])
def leanlib(tmp_path_factory, request):
    from test_cuda_memory_host import ONE_LANE, build_memory_lib

    extra = WC.PROVED_DEFINE + (ONE_LANE if request.param == "bits" else "")
    lib = build_memory_lib(tmp_path_factory, "lean", LEAN_DRIVER, extra)
    lib.map_bits = request.param == "bits"
    return lib


@pytest.mark.parametrize("seed", [1, 2])
def test_a_lean_access_lands_inside_its_guess_and_only_flags_outside(leanlib, seed):
    """Each slot's guess a window (its "proof"), addresses anywhere (inside it at any alignment,
    in another window, straddling, non-canonical): an access inside its guess -- aligned or not,
    3 or 12 bytes -- reads or writes exactly its bytes; any other sets the proof flag (32) and
    nothing else: a load reads zero, a store stores nothing, no escape is recorded or counted,
    no hint written."""
    from test_cuda_memory_host import NSLOT, SIZES, _accesses, _layout, check_access, check_memory, p, u64

    lib = leanlib
    rng = np.random.default_rng(seed)
    nwin = 12
    starts, ends, offs, size = _layout(rng, nwin)
    count = 2000
    slot_size = rng.choice(SIZES, NSLOT)
    slot = rng.integers(0, NSLOT, count).astype(np.uint32)
    addr, nb = _accesses(rng, starts, ends, slot_size[slot])
    guess = rng.integers(0, nwin, NSLOT)
    gb, gl, go = (np.zeros(NSLOT, np.uint64), np.zeros(NSLOT, np.uint64), np.zeros(NSLOT, np.int64))
    for j, k in enumerate(guess):
        gb[j], go[j] = starts[k], offs[k]
        gl[j] = max(ends[k] - starts[k] - int(slot_size[j]) + 1, 0)
    # (most accesses inside their slot's guess: the proved case; the rest a wrong proof)
    for i in range(count):
        k = int(guess[slot[i]])
        if rng.random() < 0.6 and ends[k] - starts[k] >= nb[i]:
            addr[i] = starts[k] + int(rng.integers(0, ends[k] - starts[k] - nb[i] + 1))
    store = (rng.random(count) < 0.4).astype(np.uint32)
    data = rng.integers(0, 1 << 32, (count, 4), dtype=np.uint64).astype(np.uint32)
    arena = rng.integers(0, 256, size + 8, dtype=np.uint8)
    ref = arena.copy()
    written = np.zeros(size + 8, np.uint8)
    ref_written = np.zeros_like(written)
    out = np.zeros((count, 4), np.uint32)
    flagged = np.zeros(count, np.uint32)
    misc = np.zeros(4, np.uint32)
    init = np.where(rng.random(count) < 0.5, 0xA5A5A5A5, 0).astype(np.uint32)
    ws, we, wo = u64(starts), u64(ends), np.asarray(offs, np.int64)
    A, NB = u64(addr), np.asarray(nb, np.uint32)
    inside = 0
    for i in range(count):
        k = int(guess[slot[i]])
        hit = starts[k] <= addr[i] and addr[i] + nb[i] <= ends[k]
        if hit:
            init[i] = 0  # (a load inside: its bytes, zero beyond them)
        args = (
            [p(x) for x in (ws, we, wo)]
            + [ctypes.c_uint(nwin)]
            + [p(x) for x in (gb, gl, go, arena, written)]
        )
        args += [p(x[i:]) for x in (A, NB, slot, store, data, init)] + [ctypes.c_long(1)]
        lib.wl_test(*args, p(out[i:]), p(flagged[i:]), p(misc))
        if not hit:
            assert flagged[i] == 32, (hex(addr[i]), nb[i], flagged[i])
            assert store[i] or not out[i].any(), (hex(addr[i]), nb[i], out[i])  # (a load reads zero)
            continue
        inside += 1
        assert flagged[i] == 0, (hex(addr[i]), nb[i])
        # (inside its guess, a window: its bytes by the window arithmetic, no escape)
        check_access(addr[i], nb[i], store[i], data[i], out[i], 0, (starts, ends, offs), ref, ref_written)
    assert 0.4 * count < inside < 0.9 * count, inside
    # (no store outside its guess changed a byte or a mark)
    check_memory(lib, arena, ref, written, ref_written, size)
    assert misc.tolist()[:3] == [0, 0, 0]  # (no hint, no escape count, no escape record)


# ------------------------------------------- the map scanned: the windows it can store into
# (decision 0049's amendment h157: in place, the lean build's runs are scanned and cleared over
# the windows it can store into; the module's own build's over every window)
def test_written_windows_take_a_span_groups_first_members_window():
    """globalrange.written_windows: a store's or atomic's proved window, and, for a store in a
    span group (spans.find: one root, one block), the window of every member with its root --
    the group's test is its first member's guess, here a load's, and the store is written
    through it (the generated source says so: the oracle).  A load on another root: not."""
    from test_cuda_spans_host import _P, _block, _source

    from wavelift.backends.cuda import globalrange as GR
    from wavelift.ir.program import Op

    def make(atomic: bool):
        g = _P()
        r, q = g.pair(2), g.pair(6)
        a = g.load(g.at(r, 0))  # slot 0: the group's first member (a load)
        g.store(g.at(r, 8), a)  # slot 1
        b = g.load(q)  # slot 2: another root, alone
        if atomic:  # slot 3
            out = g.v("u32")
            g.ops.append(
                Op(
                    "atomic",
                    "u32",
                    (g.pair(10), g.m, b),
                    {"space": "global", "bits": 32, "op": "add"},
                    out,
                    0,
                )
            )
        return g.program([a, b])

    src = _block(_source(make(False)))
    # (the store written through the group's pointer, whose test is slot 0's guess)
    assert "&gs0_b)" in src and ", 0u, 4ull, &gs0_b)" in src and "wl_gwrite_at(C, gs0_b + (8ll)" in src, src
    prog = make(False)
    # (a proof that puts the store apart from its group's first member: what a wrong proof
    # would say -- the lean kernel would then write it through window 5's pointer)
    assert GR.written_windows(prog, [5, 6, 7]) == {5, 6}
    assert GR.written_windows(prog, [6, 6, 7]) == {6}
    assert GR.written_windows(make(True), [5, 6, 7, 9]) == {5, 6, 9}


def _placings(monkeypatch) -> list:
    from wavelift.backends.cuda import resident as R

    got: list = []
    made = R.Resident.placed

    def placed(self, win, plan, *a):
        p = made(self, win, plan, *a)
        got.append(p)
        return p

    monkeypatch.setattr(R.Resident, "placed", placed)
    return got


@pytest.mark.parametrize("form", ["bytes", "bits"])
def test_a_lean_dispatch_scans_only_the_map_of_the_windows_it_stores_into(monkeypatch, vadd, form):
    """vadd in place with the lean build: its runs scan (and a deferred run's wl_aside copies and
    clears) the map over c's window only -- whole words, exactly -- not a's, b's or the
    arguments'; the store into c is found and lands (write spans NumPy's, every byte the model's,
    the map zero after), kept and deferred runs alike.  With the module's own build, the hull of
    every window, as before."""
    from test_inplace_host import _heap_windows

    from wavelift.backends.cuda import resident as R
    from wavelift.run.execute import execute_dispatch

    monkeypatch.setenv("WAVELIFT_CUDA_MAP", form)
    mem0, cfg, (_, _, slots) = vadd
    g = 32 if form == "bits" else 8
    for lean in (True, False):
        monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean" if lean else "own")
        mem = copy.deepcopy(mem0)
        fm = _rigged(monkeypatch, mem, cfg, slots)
        got = _placings(monkeypatch)
        cache: dict = {}
        a = next(x for x in mem if x.name == "a")
        for i in range(8):
            if i == 4:  # (a host write: the full path once, then kept and deferred again)
                for m in (mem, fm.model):
                    m.write(a.base + 12, np.full(8, i, np.uint8))
            r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
            assert r.refusal is None and r.stats["in_place"] == "proved", r.refusal
            assert r.stats.get("build") == ("lean" if lean else None)
            assert r.write_spans == fm.spans
        _same_memory(mem, fm.model)
        assert not R.map_flags(mem.resident.heap.written).any()
        assert 0 < len(got) < 8  # (the full path's placings; the kept plans keep theirs)
        spots = _heap_windows(mem, r)
        ends = {w.address: w.address + w.size for w in r.windows}
        (c_at,) = {
            k for k, w in enumerate(r.windows) if any(w.address <= x < ends[w.address] for x, _ in fm.spans)
        }
        for p in got:
            if lean:
                lo, hi = spots[c_at]
                assert p.marks == (lo // g * g, -(-hi // g) * g)
                assert (
                    p.marks != p.hull
                    and p.scan.nbytes < 0.5 * R.Heap.map_over(mem.resident.heap, *p.hull).nbytes
                )
            else:
                assert p.marks == p.hull
                assert all(p.hull[0] <= lo and hi <= p.hull[1] for lo, hi in spots)


class FlaggingLean(LeanPlayer):
    """A lean Player whose run is a wrong proof: it stores c's first half (marked) and then flags
    WL_PROOF (what the lean kernel does for an access outside its proved window: stores nothing
    there)."""

    flag = False

    def _kernel(self, grid, block, args, shared_mem=0):
        if not self.flag:
            return super()._kernel(grid, block, args, shared_mem)
        import standin_cupy as S
        from test_inplace_host import _words

        from wavelift.run.execute import execute_dispatch

        arena, written, ws, we, wo, *_ = args
        self.launches.append((arena, written, np.array(wo)))
        r = execute_dispatch(copy.deepcopy(self.model), self.cfg, backend="numpy", mode="lane")
        starts = np.asarray(ws[:-1])
        for addr, size in r.write_spans:
            half = size // 2
            k = int(np.searchsorted(starts, np.uint64(addr), side="right")) - 1
            o = addr - int(starts[k]) + int(wo[k])
            arena[o : o + half] = 0xEE
            S.mark(written, o, o + half)
        self._report()
        st = _words(self, "WL_STATUS", np.uint32, 16)
        st[0] |= 32
        st[5] = 32


@pytest.mark.parametrize("kept", [False, True], ids=["full", "kept"])
def test_a_flagged_lean_run_lands_nothing_and_its_marks_are_found(monkeypatch, vadd, kept):
    """A lean run in place whose report flags a wrong proof, after storing part of c: refused
    `backend.proof` on the full path or handed to it from a kept run -- nothing booked as landed,
    its marks (in c's map: the scan's) all found and cleared (the map zero), no heap byte outside
    c's window changed, c unreadable, a and b as they were, the next dispatch refused before any
    launch."""
    from test_inplace_host import _heap_windows, _unusable_after

    from wavelift.backends.cuda import resident as R
    from wavelift.run.execute import execute_dispatch

    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean")
    mem0, cfg, (_, _, slots) = vadd
    mem = copy.deepcopy(mem0)
    fm = rig(monkeypatch, mem, cfg, lambda p, model, c: FlaggingLean(p, model, c, slots))
    cache: dict = {}
    for _ in range(3 if kept else 1):
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None and r.stats["build"] == "lean", r.refusal
    res = mem.resident
    spots = _heap_windows(mem, r)
    ends = {w.address: w.address + w.size for w in r.windows}
    (c_at,) = {
        k for k, w in enumerate(r.windows) if any(w.address <= x < ends[w.address] for x, _ in fm.spans)
    }
    ins = {x.name: bytes(mem.read(x.base, x.size)) for x in mem if x.name in ("a", "b")}
    heap0 = np.array(res.heap.buf)
    fm.flag = True
    r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
    assert r.refusal is not None and r.refusal.code == "backend.proof", r.refusal
    assert not R.map_flags(res.heap.written).any()
    heap1 = np.array(res.heap.buf)
    lo, hi = spots[c_at]
    changed = np.flatnonzero(heap0 != heap1)
    assert len(changed) and ((changed >= lo) & (changed < hi)).all()
    assert {x.name: bytes(mem.read(x.base, x.size)) for x in mem if x.name in ("a", "b")} == ins
    _unusable_after(mem, cfg, fm, cache)


class StrayPlayer(LeanPlayer):
    """The module's own build as a wrong proof would leave it: its search finds a store's
    address in a window the proof says the dispatch only reads (a's first byte) and stores there
    -- no flag, no escape (kernel.h's wl_res: any window)."""

    def _kernel(self, grid, block, args, shared_mem=0):
        import standin_cupy as S

        super()._kernel(grid, block, args, shared_mem)
        arena, written, ws, we, wo, *_ = args
        a = next(x for x in self.model if x.name == "a")
        k = int(np.searchsorted(np.asarray(ws[:-1]), np.uint64(a.base), side="right")) - 1
        o = a.base - int(ws[k]) + int(wo[k])
        arena[o] = (int(arena[o]) + 1) & 255
        self.model.write(a.base, np.array([arena[o]], np.uint8))
        S.mark(written, o, o + 1)


@pytest.mark.parametrize("form", ["bytes", "bits"])
def test_the_module_build_scans_every_window_a_store_may_reach(monkeypatch, vadd, form):
    """With the module's own build a store the proof puts in c may land in another window (its
    search finds any, unflagged): its runs are scanned over every window, so such a store is still
    found and booked as written (read back as the model's), and the map is zero after -- the
    reason the scan is narrowed only for the lean build (h157)."""
    from wavelift.backends.cuda import resident as R
    from wavelift.run.execute import execute_dispatch

    monkeypatch.setenv("WAVELIFT_CUDA_MAP", form)
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "own")  # (the own build: also while the lean is built)
    mem0, cfg, (_, _, slots) = vadd
    mem = copy.deepcopy(mem0)
    fm = rig(monkeypatch, mem, cfg, lambda p, model, c: StrayPlayer(p, model, c, slots))
    a = next(x for x in mem if x.name == "a")
    cache: dict = {}
    for _ in range(4):
        r = execute_dispatch(mem, cfg, backend="cuda", mode="lane", cache=cache)
        assert r.refusal is None and r.stats["in_place"] == "proved" and "build" not in r.stats, r.refusal
        assert sorted(r.write_spans) == sorted(fm.spans + [(a.base, 1)])
        assert not R.map_flags(mem.resident.heap.written).any()
        _same_memory(mem, fm.model)
