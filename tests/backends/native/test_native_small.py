"""The native tier for dispatches below NATIVE_MIN_WAVES (decision 0012, amendment h95): the
native index names a program's library so a later module (another process's) finds it without
making its source; its name holds the code's address only where the program reads it; a
library is asked for once a module's NumPy runs took NATIVE_AFTER_S.  And the one-range driver
run's kept context (decision 0013, amendment h95): the same bytes, return codes and refusals as
fresh arrays, run after run of the same module."""

from __future__ import annotations

import re
import types

import numpy as np
import pytest

from tests.compat import harness
from wavelift.backends import host, native
from wavelift.backends.numpy import _index_key as index_key
from wavelift.backends.numpy import codegen, runtime
from wavelift.compat import tinygrad as tg
from wavelift.errors import OtherTranslation
from wavelift.run import execute

PROLOGUE = "s_load_b64 s[20:21], s[0:1], 0x0\nv_mov_b32 v255, v0\ns_waitcnt lgkmcnt(0)\n"
STORE = "v_lshlrev_b32 v240, 2, v255\nglobal_store_b32 v240, v{r}, s[20:21] offset:{off}\n"
PROGRAMS = [
    # v5 read before this program writes it (a live-in: the driver zeroes it), then written
    PROLOGUE
    + STORE.format(r=5, off=0)
    + "v_mov_b32 v5, 0x1234\n"
    + STORE.format(r=5, off=128)
    + "s_endpgm\n",
    PROLOGUE
    + "v_mul_u32_u24 v1, v255, 7\nv_add_nc_u32 v2, v1, 3\n"
    + STORE.format(r=2, off=0)
    + "s_endpgm\n",
    # a store past the output buffer: refused, naming the instruction
    # (and an image instruction the hardware's EXEC keeps from running: a refuse_if not taken)
    PROLOGUE
    + "s_mov_b32 s30, exec_lo\ns_mov_b32 exec_lo, 0\n"
    + "image_load_pck v[1:4], v0, s[8:15] dmask:0xf dim:SQ_RSRC_IMG_1D\ns_mov_b32 exec_lo, s30\n"
    + "v_mov_b32 v9, 0x100000\nglobal_store_b32 v9, v255, s[20:21] offset:0\ns_endpgm\n",
    # the program's own address, stored: s_getpc_b64
    PROLOGUE
    + "s_getpc_b64 s[4:5]\nv_mov_b32 v3, s4\nv_mov_b32 v4, s5\n"
    + STORE.format(r=3, off=0)
    + STORE.format(r=4, off=128)
    + "s_endpgm\n",
]


def _assemble(src: str) -> bytes:
    from tests.execute.asm import HAVE_MC, assemble

    if not HAVE_MC:
        pytest.skip("llvm-mc-19 not installed")
    return assemble(src, mcpu="gfx1100")


HELD: list = []  # every block made here: no address is used twice


def _run(code: bytes, threads: int = 32, buf=None):
    """One dispatch of ``code`` through the hook (in ``buf``, else a fresh code block: another
    address each call) -> (return code, output bytes, refusal, stats, code address)."""
    buf = buf or harness.HostBlock(8192)
    out = harness.HostBlock(0x1000)
    args = harness.HostBlock(4096)
    HELD.extend((buf, out, args))
    buf.view[: len(code)] = np.frombuffer(code, np.uint8)
    args.view[:8] = np.frombuffer(np.uint64(out.address).tobytes(), np.uint8)
    ranges = [(buf.address, 8192), (out.address, 0x1000), (args.address, 4096)]
    rc = tg.run_asm(buf.address, len(code), 1, 1, 1, threads, 1, 1, args.address, 0x19C, 0, ranges=ranges)
    res = tg.last_result()
    ref = res.refusal
    why = None if ref is None else (ref.code, re.sub(r"address 0x[0-9a-f]+", "", str(ref)))
    return rc, bytes(out.view), why, dict(res.stats), buf.address


@pytest.fixture
def cache(tmp_path, monkeypatch):
    if host.compiler() is None:
        pytest.skip("no host C++ compiler")
    monkeypatch.setenv("WAVELIFT_NATIVE_CACHE", str(tmp_path / "native"))
    monkeypatch.setenv("WAVELIFT_NATIVE_OPT", "-O1")  # (a background compile's process too)
    monkeypatch.setattr(native, "FLAGS", tuple("-O1" if f.startswith("-O") else f for f in native.FLAGS))
    monkeypatch.setattr(execute, "_CACHE", {})
    return tmp_path / "native"


def _program(src: str, base: int = 0x10000):
    from wavelift.frontend.program import translate

    return translate(_assemble(src), "gfx1100", 32, base)


def test_index_entry_gives_the_library_and_what_the_runtime_reads(cache):
    prog = _program(PROGRAMS[2])
    made = codegen.ModeBlocks(prog, 32, ("k", 1))
    nb = made.native_library(0x300)  # (compiled now: not in the background)
    assert isinstance(nb, native.NativeBlocks) and nb.source and nb.library
    assert len(list(cache.glob("*.idx"))) == 1
    found = codegen.ModeBlocks(prog, 32, ("k", 1)).native_known(0x300)
    assert isinstance(found, native.NativeBlocks) and found.source == ""  # (no source made)
    assert found.origin == "disk cache (index)"
    for f in ("library", "unsupported", "refusals", "_drivable", "_names", "_setpc"):
        assert getattr(found, f) == getattr(nb, f), f
    assert found.refusals  # (the image instruction's refuse_if: a part that must come back)
    assert found.drive is not None and set(found.fns) == set(nb.fns)
    # another key, another MODE, no key: nothing found (and nothing compiled)
    assert codegen.ModeBlocks(prog, 32, ("k", 2)).native_known(0x300) is None
    assert codegen.ModeBlocks(prog, 32, ("k", 1)).native_known(0x301) is None
    assert codegen.ModeBlocks(prog, 32, None).native_known(0x300) is None
    # an entry whose library is gone: not used
    for so in cache.glob(f"{nb.library}*"):
        so.unlink()
    assert codegen.ModeBlocks(prog, 32, ("k", 1)).native_known(0x300) is None


def _config(**over):
    parts = dict(
        target="gfx1100",
        wave_size=32,
        user_sgprs=(1, 2),
        scratch_enabled=False,
        scratch_wave_bytes=0,
        gfx_level=11,
        system_sgprs={},
        gb_addr_config=None,
        border_color_base=None,
        program_address=0x10000,
        float_mode=0,
    )
    return types.SimpleNamespace(**(parts | over))


def test_a_stale_index_entry_is_not_used_and_an_attach_error_is_not_hidden(cache, monkeypatch):
    """from_index gives None for an entry the library does not match (a block function it names
    missing from it, a block without its s_setpc flag) or that is not JSON of
    index_entry's form; an error attaching a library that matches its entry is raised."""
    import json

    from wavelift.backends import disk_cache

    prog = _program(PROGRAMS[1])
    made = codegen.ModeBlocks(prog, 32, ("k", 3))
    nb = made.native_library(0x300)
    assert isinstance(nb, native.NativeBlocks) and nb._drivable and nb._names
    name, good = made._index_name(0x300), json.loads(nb.index_entry())
    assert native.NativeBlocks.from_index(name) is not None
    bi = next(iter(good["names"]))
    stale = [
        good | {"names": good["names"] | {bi: "wl_b99"}},
        good | {"names": good["names"] | {"99": "wl_b0"}},
    ]
    for e in stale:
        disk_cache.write(native.cache_dir(), name, ".idx", json.dumps(e).encode())
        assert native.NativeBlocks.from_index(name) is None, e
    for raw in (b"[1, 2]", b"{", json.dumps(good | {"setpc": []}).encode()):
        disk_cache.write(native.cache_dir(), name, ".idx", raw)
        assert native.NativeBlocks.from_index(name) is None, raw
    disk_cache.write(native.cache_dir(), name, ".idx", json.dumps(good).encode())
    assert native.NativeBlocks.from_index(name) is not None

    def broken(self, lib):
        raise AttributeError("a defect in _attach")

    monkeypatch.setattr(native.NativeBlocks, "_attach", broken)
    with pytest.raises(AttributeError, match="a defect"):
        native.NativeBlocks.from_index(name)


def test_index_key_holds_the_address_only_where_the_program_reads_it():
    cfg = _config()
    keys = {}
    for i in (1, 3):
        for base in (0x10000, 0x7F0000):
            cfg.program_address = base
            keys[i, base] = index_key(_program(PROGRAMS[i], base), cfg, base)
    assert keys[1, 0x10000] == keys[1, 0x7F0000] is not None
    assert keys[3, 0x10000] != keys[3, 0x7F0000]  # (s_getpc_b64 reads it)
    assert keys[1, 0x10000] != keys[3, 0x10000]


def test_a_translation_part_changes_the_module_key_and_the_index_key(monkeypatch):
    """What a translation is made from is listed once (execute.translation_parts): a part
    changed changes the module key and the native index key (shared on disk by every process),
    and a part added to translation_inputs reaches both.  Each config's keys are of the program
    translated with its inputs (a key refuses a program made with others: 0049, h129)."""
    from wavelift.frontend.program import translate

    def keys(cfg, p=None):
        if p is None:
            p = translate(
                _assemble(PROGRAMS[1]),
                cfg.target,
                cfg.wave_size,
                0x10000,
                scratch_abi=execute._scratch_abi(cfg),
                gb_addr_config=cfg.gb_addr_config,
                border_color_base=cfg.border_color_base,
            )
        return execute._module_key(p, cfg, "wave", "numpy"), index_key(p, cfg, cfg.program_address)

    k0 = keys(_config())
    assert None not in k0
    changed = [
        keys(_config(target="gfx1101")),
        keys(_config(wave_size=64)),
        keys(_config(user_sgprs=(1, 2, 3))),  # (the scratch ABI: its user SGPR count)
        keys(_config(system_sgprs={"scratch_wave_offset": 7})),  # (its wave offset SGPR)
        keys(_config(gb_addr_config=0x26010011)),
        keys(_config(border_color_base=0x40000)),
        keys(_config(), _program(PROGRAMS[0])),
    ]
    for i, (mk, ik) in enumerate(changed):
        assert mk != k0[0] and ik != k0[1], i
    inputs = execute.translation_inputs
    monkeypatch.setattr(execute, "translation_inputs", lambda cfg: inputs(cfg) + (cfg.new_part,))
    # translate does not take the new part: its programs' records lack it, so their keys refuse
    # them until it does; a program without a record (hand-built) keys with it
    with pytest.raises(OtherTranslation, match=r"the dispatch's are .*\b1\)"):
        keys(_config(new_part=1))
    bare = _program(PROGRAMS[1])
    bare.made_with = None
    one, two = keys(_config(new_part=1), bare), keys(_config(new_part=2), bare)
    assert one[0] != two[0] and one[1] != two[1]


def test_small_dispatch_runs_the_indexed_library_with_the_same_results(cache, monkeypatch):
    """A module made afresh (as in another process) runs native from the index: the same bytes,
    return codes and refusals as NumPy blocks; the s_getpc program at another address is not
    given the library made for the first (its stored address is its own)."""
    codes = [_assemble(p) for p in PROGRAMS]
    monkeypatch.setattr(runtime, "NATIVE", "off")
    want = [_run(c)[:3] for c in codes]
    monkeypatch.setattr(runtime, "NATIVE", "on")  # (compiles each library, writes its entry)
    monkeypatch.setattr(execute, "_CACHE", {})
    assert [_run(c)[:3] for c in codes][:3] == want[:3]  # (the pc program's bytes: its address)
    monkeypatch.setattr(runtime, "NATIVE", "auto")
    monkeypatch.setattr(runtime, "NATIVE_AFTER_S", 0)  # (nothing asked for: only the index)
    for _ in range(2):
        monkeypatch.setattr(execute, "_CACHE", {})
        got = [_run(c) for c in codes]
        for (rc, out, why, stats, _), w, c in zip(got, want, codes, strict=True):
            if c is codes[3]:
                assert not stats.get("native")  # (another address: no entry for it)
                assert (rc, why) == (w[0], w[2])  # (its bytes: its own address)
            else:
                assert stats.get("native") and stats.get("native_library") == "disk cache (index)"
                assert (rc, out, why) == w
    assert want[2][0] == tg.REFUSED and want[2][2] is not None
    assert want[0][1][:4] == bytes(4) and got[0][1][:4] == bytes(4)  # (v5 read as 0)


def test_getpc_results_are_their_own_address(cache, monkeypatch):
    """The s_getpc program's stored pc is that of the run's own code address, NumPy or native
    from the index: the same offset from the code block's start in every run."""
    code = _assemble(PROGRAMS[3])
    monkeypatch.setattr(runtime, "NATIVE", "on")
    offs = []
    for _ in range(2):
        rc, out, _, _, at = _run(code)
        assert rc == tg.OK
        pc = int(np.frombuffer(out[:4], np.uint32)[0]) | int(np.frombuffer(out[128:132], np.uint32)[0]) << 32
        offs.append(pc - at)
    monkeypatch.setattr(runtime, "NATIVE", "auto")
    monkeypatch.setattr(runtime, "NATIVE_AFTER_S", 0)
    monkeypatch.setattr(execute, "_CACHE", {})
    rc, out, _, stats, at = _run(code)
    pc = int(np.frombuffer(out[:4], np.uint32)[0]) | int(np.frombuffer(out[128:132], np.uint32)[0]) << 32
    offs.append(pc - at)
    assert len(set(offs)) == 1 and 0 < offs[0] < len(code)


def test_library_asked_for_after_numpy_runs(cache, monkeypatch):
    """NATIVE_AFTER_S: a module's dispatch asks for its library at its end once its NumPy runs
    took that long (compiled in the background); later dispatches run native, the same bytes."""
    code = _assemble(PROGRAMS[1])
    at = harness.HostBlock(8192)  # (one code address: one module, as a loaded program)
    monkeypatch.setattr(runtime, "NATIVE", "auto")
    monkeypatch.setattr(runtime, "NATIVE_AFTER_S", 0)
    first = [_run(code, buf=at) for _ in range(3)]
    assert not any(s.get("native") for _, _, _, s, _ in first)  # (0: never asked)
    monkeypatch.setattr(runtime, "NATIVE_AFTER_S", 1e-9)
    monkeypatch.setattr(execute, "_CACHE", {})
    runs = [_run(code, buf=at)]  # NumPy; then asks: compiling in the background
    runs.append(_run(code, buf=at))
    native.wait_for_compiles()
    runs += [_run(code, buf=at) for _ in range(2)]
    assert not runs[0][3].get("native")
    assert runs[-1][3].get("native") and runs[-1][3].get("native_driver")
    assert {r[:3] for r in runs} == {first[0][:3]}


def _asked() -> list:
    """Per cached module: whether its library was asked for (a MODE's entry made)."""
    return [bool(m.blocks.natives) for m in execute._CACHE.values() if hasattr(m, "numpy_runs")]


def test_small_program_asks_at_its_second_numpy_run(cache, monkeypatch):
    """A program whose source is expected to cost under NATIVE_AFTER_S (NATIVE_SOURCE_S_PER_INSTR
    an instruction) asks for its library at the end of its second NumPy run, not its first,
    however little those runs took (amendment h104); a larger one (by the estimate) asks
    nothing; later dispatches run native with the NumPy blocks' bytes."""
    code = _assemble(PROGRAMS[1])
    at = harness.HostBlock(8192)  # (one code address: one module, as a loaded program)
    monkeypatch.setattr(runtime, "NATIVE", "off")
    want = _run(code, buf=at)[:3]
    monkeypatch.setattr(runtime, "NATIVE", "auto")
    monkeypatch.setattr(runtime, "NATIVE_AFTER_S", 0)  # (0: never, this rule too)
    monkeypatch.setattr(execute, "_CACHE", {})
    never = [_run(code, buf=at) for _ in range(3)]
    assert _asked() == [False]
    monkeypatch.setattr(runtime, "NATIVE_AFTER_S", 1000.0)  # (the time rule never asks here)
    monkeypatch.setattr(runtime, "NATIVE_SOURCE_S_PER_INSTR", 1000.0)  # (too large a source)
    monkeypatch.setattr(execute, "_CACHE", {})
    big = [_run(code, buf=at) for _ in range(3)]
    assert _asked() == [False] and not any(r[3].get("native") for r in big)
    monkeypatch.setattr(runtime, "NATIVE_SOURCE_S_PER_INSTR", 0.00025)
    monkeypatch.setattr(execute, "_CACHE", {})
    runs = [_run(code, buf=at)]
    assert _asked() == [False]  # (dispatched once: nothing asked)
    runs.append(_run(code, buf=at))
    assert _asked() == [True]
    native.wait_for_compiles()
    runs += [_run(code, buf=at) for _ in range(2)]
    assert not runs[0][3].get("native") and not runs[1][3].get("native")
    assert runs[-1][3].get("native") and runs[-1][3].get("native_driver")
    assert {r[:3] for r in runs + big + never} == {want}


def test_small_program_estimate_is_found_once(cache, monkeypatch):
    """The small-program rule's estimate (runtime.source_estimate_s) is found once per module and
    kept on it (Module.source_s), not again at each NumPy run after the first; a program too
    large by it asks at none of five runs."""
    code = _assemble(PROGRAMS[1])
    at = harness.HostBlock(8192)  # (one code address: one module)
    calls = []

    def estimate(program):
        calls.append(program)
        return 2000.0  # (over NATIVE_AFTER_S: never asks)

    monkeypatch.setattr(runtime, "NATIVE", "auto")
    monkeypatch.setattr(runtime, "NATIVE_AFTER_S", 1000.0)  # (the time rule never asks here)
    monkeypatch.setattr(runtime, "source_estimate_s", estimate)
    monkeypatch.setattr(execute, "_CACHE", {})
    for _ in range(5):
        assert _run(code, buf=at)[0] == tg.OK
    assert _asked() == [False]
    (m,) = [m for m in execute._CACHE.values() if hasattr(m, "source_s")]
    assert m.numpy_runs == 5 and m.source_s == 2000.0
    assert len(calls) == 1 and calls[0] is m.program


def test_kept_context_gives_what_fresh_arrays_give(cache, monkeypatch):
    """Run after run of the same modules (and other modules between), the one-range driver run
    over kept arrays gives the same bytes, return codes and refusals as one over new arrays."""
    codes = [_assemble(p) for p in PROGRAMS[:3]]
    monkeypatch.setattr(runtime, "NATIVE", "on")
    out = {}
    for keep in (False, True):
        monkeypatch.setattr(runtime, "KEEP_CONTEXT", keep)
        monkeypatch.setattr(execute, "_CACHE", {})
        ats = [harness.HostBlock(8192) for _ in codes]  # (each program at one address: one module)
        out[keep] = [_run(c, threads, a)[:3] for threads in (32, 16, 32, 5) for c, a in zip(codes, ats)]
        if keep:
            mods = [m for m in execute._CACHE.values() if hasattr(m, "kept")]
            assert any(m.kept for m in mods)  # (the kept path ran)
    assert out[True] == out[False]
    assert out[True][0][1][:4] == bytes(4) and out[True][3][1][:4] == bytes(4)  # (v5 zero again)


def test_kept_context_words_are_new_contexts(cache, monkeypatch):
    """KeptContext.words of a context kept from earlier runs makes a fresh context's words
    (new_context's): every word the same but the addresses of the arrays, whose contents are
    the same."""
    seen, kept = [], set()
    orig = native.KeptContext.words

    def spy(self, win):
        X, st = orig(self, win)
        S, V, lds, grp = self.alive[:4]
        scr = self.alive[6] if len(self.alive) > 6 else None
        ref = native.KeptContext(  # (new_context's words: a fresh one's, not spied on)
            S,
            V,
            int(X[native.CTX["n"]]),
            lds,
            int(X[native.CTX["lds_stride"]]),
            int(X[native.CTX["lds_bytes"]]),
            grp,
            int(X[native.CTX["esc_cap"]]),
            None if scr is None else (scr, int(X[native.CTX["scr_bytes"]]), bool(X[native.CTX["scr_lane"]])),
        )
        ref = orig(ref, win)
        # (copies: the run changes the kept arrays)
        seen.append((X.copy(), [a.copy() for a in (*st.windows, st.touch, st.esc, st.pcs)], ref))
        kept.add(id(self))
        return X, st

    monkeypatch.setattr(native.KeptContext, "words", spy)
    monkeypatch.setattr(runtime, "NATIVE", "on")
    codes = [_assemble(p) for p in PROGRAMS[:3]]
    ats = [harness.HostBlock(8192) for _ in codes]
    for _ in range(3):
        for c, a in zip(codes, ats):
            _run(c, buf=a)
    assert len(seen) >= 9 and len(kept) <= len(seen) - 5  # (contexts kept and used again)
    C = native.CTX
    pointers = {"ws", "we", "wo", "touch", "wkind", "pcs", "esc"}
    for X, arrays, (RX, rst) in seen:
        for name, i in C.items():
            if name not in pointers:
                assert X[i] == RX[i], name
        n = max(int(X[C["nwin"]]), 1)
        ws, we, wo, written, wkind, touch, esc, pcs = arrays
        for a, b in zip((ws, we, wo, written, wkind), rst.windows, strict=True):
            assert np.array_equal(a[: b.size], b)
        assert np.array_equal(touch[: 4 * n], rst.touch)
        assert np.array_equal(esc, rst.esc) and np.array_equal(pcs, rst.pcs)


@pytest.mark.parametrize("lane", [None, False, True])
def test_context_words_point_at_their_arrays(lane):
    """new_context's words, a KeptContext's again and another thread's (thread_context): each
    array's word its address, scratch's three words those of the scratch given (none without),
    the numbers as given; every array in the state's ``alive``."""
    C = native.CTX
    S, V, lds = np.zeros(64, np.uint32), np.zeros(512, np.uint32), np.zeros(72, np.uint8)
    grp, written = np.zeros(2, np.int64), np.zeros(2, np.uint8)
    scr = None if lane is None else (np.zeros(264, np.uint8), 128, lane)
    win = types.SimpleNamespace(
        starts=[0x1000, 0x2000], ends=[0x1100, 0x2040], offs=[0, 256], blank={1}, aliased=(),
        windows=[], memory=None, arena=np.zeros(512, np.uint8), written=written,
    )  # fmt: skip
    k = native.KeptContext(S, V, 2, lds, 32, 24, grp, 7, scr)
    words = [native.new_context(win, S, V, 2, lds, 32, 24, grp, 7, scr), k.words(win), k.words(win)]
    own = (np.zeros_like(S), np.zeros_like(V), np.zeros_like(lds), np.zeros_like(grp))
    oscr = None if scr is None else (np.zeros_like(scr[0]), 128, lane)
    words.append(native.thread_context(*words[0], *own, oscr))
    for i, (X, st) in enumerate(words):
        s, v, l, g, sc = (*own, oscr) if i == 3 else (S, V, lds, grp, scr)
        arrays = dict(S=s, V=v, lds=l, grp=g, esc=st.esc, pcs=st.pcs, touch=st.touch, arena=win.arena)
        arrays |= dict(zip(("ws", "we", "wo", "written", "wkind"), st.windows, strict=True))
        for name, a in arrays.items():
            assert X[C[name]] == a.ctypes.data, (i, name)
            assert any(b is a for b in st.alive) or name == "arena", (i, name)
        assert list(st.windows[0][:2]) == win.starts and list(st.windows[1][:2]) == win.ends
        assert list(st.windows[2][:2]) == win.offs and list(st.windows[4][:2]) == [0, 2]
        assert st.esc.size == 35 and st.pcs.size == 2 and st.touch.size == 8
        assert [int(X[C[n]]) for n in ("n", "lds_stride", "lds_bytes", "esc_cap", "refuse", "nwin")] == [
            2, 32, 24, 7, -1, 2,
        ]  # fmt: skip
        got = [int(X[C[n]]) for n in ("scr", "scr_bytes", "scr_lane")]
        assert got == ([0, 0, 0] if sc is None else [sc[0].ctypes.data, 128, int(lane)]), i
        assert sc is None or any(b is sc[0] for b in st.alive)


def test_address_of_is_ctypes_data():
    a = np.arange(4096, dtype=np.uint8)
    ro = a[8:40].view()
    ro.flags.writeable = False
    for x in (a, a[100:300], a[1:2], a[5:5], a[::2], ro, a.view(np.uint32)[3:9], np.zeros((3, 4))[:, 1]):
        assert native.address_of(x) == x.ctypes.data


def test_large_contexts_are_not_kept(cache, monkeypatch):
    """A context over KEEP_MAX_BYTES is made for its run and not held by the module."""
    code = _assemble(PROGRAMS[1])
    at = harness.HostBlock(8192)
    monkeypatch.setattr(runtime, "NATIVE", "on")
    monkeypatch.setattr(runtime, "KEEP_MAX_BYTES", 0)
    want = _run(code, buf=at)[:3]
    assert _run(code, buf=at)[:3] == want
    assert not any(getattr(m, "kept", None) for m in execute._CACHE.values())


# one block, every instruction of it under the MODE's rounding (FP_ROUND, MODE bits 3:0): under a
# MODE that rounds other than to nearest the tier lowers no block of it ("rounding mode")
FLOAT_ONLY = (
    PROLOGUE + "v_cvt_f32_u32 v1, v255\nv_add_f32 v2, v1, v1\n" + STORE.format(r=2, off=0) + "s_endpgm\n"
)


def test_a_program_the_tier_lowers_nothing_of_is_indexed(cache, monkeypatch, calls):
    """No block lowered (each one's reason kept): the index keeps that, so a later process's
    module (its listing read afresh) finds it without lowering the program again, runs NumPy
    blocks and asks for nothing; another MODE, whose blocks lower, is not that entry (decision
    0012, amendment h107)."""
    prog = _program(FLOAT_ONLY)
    nb = codegen.ModeBlocks(prog, 32, ("k", 1)).native_library(0x301)
    assert isinstance(nb, native.NativeBlocks) and nb.nothing_lowered and nb.library is None and not nb.fns
    assert set(nb.unsupported.values()) == {"rounding mode"}
    assert len(list(cache.glob("*.idx"))) == 1
    monkeypatch.setattr(native, "_INDEX_NAMES", {})  # (a later process lists the entries anew)
    made = calls(native.NativeBlocks, "__init__")  # (a NativeBlocks made from a program: its source made)
    later = codegen.ModeBlocks(prog, 32, ("k", 1))
    assert later.native_known(0x301) is None  # (NumPy blocks)
    got = later.native_library(0x301, background=True)  # (the ask at a second NumPy run)
    assert not made and got.nothing_lowered and got.unsupported == nb.unsupported and not got.fns
    assert got.origin == "native index (nothing lowered)"
    assert codegen.ModeBlocks(prog, 32, ("k", 1)).native_known(0x300) is None and not made
    other = codegen.ModeBlocks(prog, 32, ("k", 1)).native_library(0x300)
    assert len(made) == 1 and other.fns and not other.nothing_lowered


def test_a_background_compile_writes_its_index_entry_when_done(cache, monkeypatch):
    """A library compiled in the background: its index entry is on disk once the compile is
    done, though its module never asks again (the process may end first): a later process finds
    it through the index with what the source-made one has (decision 0012, amendment h107)."""
    prog = _program(PROGRAMS[1])
    made = codegen.ModeBlocks(prog, 32, ("k", 3))
    assert made.native_library(0x300, background=True) is native.COMPILING
    native.wait_for_compiles()
    assert len(list(cache.glob("*.idx"))) == 1
    monkeypatch.setattr(native, "_INDEX_NAMES", {})
    found = codegen.ModeBlocks(prog, 32, ("k", 3)).native_known(0x300)
    assert isinstance(found, native.NativeBlocks) and found.origin == "disk cache (index)"
    nb = made.native_library(0x300)  # (attached now)
    assert nb.fns and nb.library
    for f in ("library", "unsupported", "refusals", "_drivable", "_names", "_setpc"):
        assert getattr(found, f) == getattr(nb, f), f
    assert set(found.fns) == set(nb.fns) and found.drive is not None


def test_grid_words_are_shared_by_configs_of_the_same_registers(cache, monkeypatch):
    """The driver's grid words (runtime._grid) of a config object the module has not run --
    the tinygrad hook's next kernarg address: new user SGPR values -- are those of an earlier
    config of the same registers (one array, read-only), equal to the words made afresh for it;
    a config of other registers (another block) has its own (decision 0035, amendment h107)."""
    code = _assemble(PROGRAMS[1])
    at = harness.HostBlock(8192)  # (one code address: one module)
    monkeypatch.setattr(runtime, "NATIVE", "on")

    def grids():
        (m,) = [m for m in execute._CACHE.values() if hasattr(m, "grids")]
        return m.grids

    fresh = []
    for _ in range(3):  # (each made afresh: nothing kept before the run)
        for m in execute._CACHE.values():
            getattr(m, "grids", {}).clear()
        fresh.append((_run(code, buf=at), [v[2].copy() for k, v in grids().items() if type(k) is int]))
    assert all(r[0][:3] == fresh[0][0][:3] for r in fresh) and fresh[0][0][3].get("native_driver")
    assert all(len(w) == 1 and np.array_equal(w[0], fresh[0][1][0]) for _, w in fresh)
    grids().clear()
    kept = [_run(code, buf=at) for _ in range(3)]  # (new user SGPRs each: new config objects)
    assert {r[:3] for r in kept} == {fresh[0][0][:3]}
    per_config = [v for k, v in grids().items() if type(k) is int]
    assert len(per_config) == 3 and len({id(v[2]) for v in per_config}) == 1
    assert np.array_equal(per_config[0][2], fresh[0][1][0]) and not per_config[0][2].flags.writeable
    assert len({tuple(v[3]) for v in per_config}) == 3  # (each config's own user SGPRs)
    other = _run(code, threads=64, buf=at)  # (two waves: other registers, other words)
    assert other[0] == tg.OK
    words = [v[0] for k, v in grids().items() if type(k) is tuple]  # ((G, its address))
    assert len(words) == 2 and not np.array_equal(words[0], words[1])
