"""The lean build of a dispatch run in place on a proof (WAVELIFT_CUDA_PROVED=lean, decision
0049's amendment h148), without a GPU: the setting is in the module key; the lean build
(kernel.h's WL_PROVED) has no search, hint or escape record behind an access's failed window
test -- only the proof flag --, and compiles (NVRTC); the runtime launches it, with every slot's
proved window as its guess, only for a dispatch in place on a proof whose every slot has a
proved window (the stand-in CuPy and test_inplace_host's Player, which plays the dispatch on
the NumPy backend).  On a GPU: test_cuda_proved_gpu.py."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess

import numpy as np
import pytest
from test_inplace_host import Player, _divergent_loop, _run, _same_memory, rig
from test_unrefusable_host import _vadd

from wavelift.backends import cuda as WC
from wavelift.backends.cuda import codegen as G
from wavelift.backends.cuda import runtime as RT


@pytest.fixture(autouse=True)
def in_place(monkeypatch):
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", "proved")
    monkeypatch.setenv("WAVELIFT_CUDA_HEAP", "one")
    monkeypatch.delenv("WAVELIFT_CUDA_PROVED", raising=False)


def _generated(mem, cfg) -> tuple:
    """(program, the module's source, its slots) of the dispatch, as build_module makes them."""
    from test_cuda_backend import translate_dispatch

    prog, base = translate_dispatch(mem, cfg)
    src, slots, _ = G.generate(
        prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, G.baked_params(cfg), G.groups_per_block(cfg)
    )
    return prog, src, slots


@pytest.fixture(scope="module")
def vadd():
    mem, cfg = _vadd(1000)
    return mem, cfg, _generated(mem, cfg)


# ------------------------------------------------------------------------- the module key
def test_the_setting_is_in_the_module_key(monkeypatch, vadd):
    from wavelift.backends.cuda import stored

    _, cfg, _ = vadd
    plain = WC.BACKEND.key_extra(cfg)
    monkeypatch.setenv("WAVELIFT_CUDA_PROVED", "lean")
    lean = WC.BACKEND.key_extra(cfg)
    assert lean != plain and lean[: len(plain)] == plain  # (off: the keys made before)
    assert stored.entry_name(("k",) + lean, "sm_90", 0) != stored.entry_name(("k",) + plain, "sm_90", 0)


def test_the_lean_build_is_a_sibling_built_with_its_define(monkeypatch):
    built = []

    def fake_compile(key, src, arch, use_disk):
        built.append(src)
        return b"cubin", 0.0, "fake", None

    monkeypatch.setattr(WC, "_compile", fake_compile)
    pre = ((object(),), ())
    m = WC.Module(("k",), None, "kernel\n", "sm_90", b"", 0.0, "fake", (), preloads=pre)
    k = m.variant(True, None, True)
    assert k is not m and k.source == WC.PROVED_DEFINE + "kernel\n" and m.variant(True, None, True) is k
    k0 = m.variant(False, None, True)  # (with an unresolved preload: both defines)
    assert k0.source == "#define WL_PRELOADED 0\n" + WC.PROVED_DEFINE + "kernel\n"
    assert m.variant(True) is m and len(built) == 2


# ---------------------------------------------------------------------------- the source
# what the rare path of the module's own build does and the lean build must not: the hint read
# and written, the binary search over the window starts (constant or global tables), the
# non-canonical address test, the escape record and count
_SEARCH = ("WL_HINT[slot]", "WL_WS[mid]", "__ldg(C.W.start + mid)", "wl_is_canon(addr)", "WL_ESC + slot", "WL_STATS + 2")


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
    from wavelift.backends.cuda.compile import nvrtc_compile, nvrtc_problem

    if nvrtc_problem():
        pytest.skip(f"NVRTC: {nvrtc_problem()}")
    _, _, (_, src, _) = vadd
    lean, plain = nvrtc_compile(WC.PROVED_DEFINE + src, "sm_90"), nvrtc_compile(src, "sm_90")
    assert lean[:4] == b"\x7fELF" and len(lean) < len(plain)  # (the search's code is gone)


# --------------------------------------------------------------------------- the runtime
class LeanPlayer(Player):
    """A Player with the module's real slots, noting which build each launch asks for."""

    def __init__(self, program, model, cfg, slots=()):
        super().__init__(program, model, cfg)
        self.slots = slots
        self.built: list = []

    def variant(self, preloaded, budget=None, proved=False):
        self.built.append(proved)
        return self


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


def _accesses(fm, cfg):
    from wavelift.backends.cuda import globalrange as GR

    return GR.global_accesses(RT._proof_input(fm, cfg)[0])


def test_the_module_build_without_the_setting_or_the_proof(monkeypatch, vadd):
    mem0, cfg, (_, _, slots) = vadd
    # the setting off: the module's own build, in place as before
    mem = copy.deepcopy(mem0)
    fm = _rigged(monkeypatch, mem, cfg, slots)
    r = _run(mem, cfg)
    assert r.refusal is None and r.stats["in_place"] == "proved" and "build" not in r.stats
    assert fm.built == [False] and "WL_HINT" not in fm.consts
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
    monkeypatch.delenv("WAVELIFT_CUDA_PROVED")
    monkeypatch.setattr(G, "MAX_GUESSES", 1024)
    assert RT._lean_hints(_M(3), [2, 0, 1]) is None
