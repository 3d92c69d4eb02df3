"""The CUDA runtime's per-launch memos (issue 24, decision 0029), run on the stand-in CuPy: each
kept result is used again only while every input it was made from is the same, and a change of
any input makes it again.  Oracles: the bytes guest memory holds (mem.read) and a fresh run of
what the memo skips."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_resident_runtime_host import _run, rig  # noqa: E402,F401

from wavelift.backends.cuda import codegen as G  # noqa: E402
from wavelift.backends.cuda import runtime as RT  # noqa: E402


def _mirror_words(fm):
    return [h for name, h in fm.puts if name == "WL_MIRROR"]


@pytest.mark.usefixtures("arena_path")
def test_mirror_words_follow_the_mirrored_windows_versions(rig, monkeypatch, calls):  # noqa: F811
    """A uniform-load slot guessed into a's window: its mirror (a's bytes) is made once and kept
    while a's device copy keeps its version; a host write to a, a dispatch landing in a, and
    other hints each make it again, equal to a's bytes as guest memory holds them."""
    mem, cfg, (a, b, c), n, fm = rig
    monkeypatch.setattr(RT, "_MIRRORS", {})
    made = calls(G, "mirrors")
    fm.slots = ((4, True),)
    hint_to = [a]  # the window every slot resolves to (WL_HINT): a's
    kernel = fm._kernel

    def played(*args, **kw):
        kernel(*args, **kw)
        ws = args[2][2]  # (fn(grid, block, (arena, written, wstart, ...)))
        fm.cwin = int(np.searchsorted(ws[:-1], np.uint64(hint_to[0]), side="right")) - 1

    fm._kernel = played

    def run_and_words():
        fm.puts.clear()
        r = _run(mem, cfg)
        assert r.refusal is None, r.refusal
        w = _mirror_words(fm)
        return r, (w[0].view(np.uint8) if w else None)

    def a_bytes():
        return np.frombuffer(mem.read(a, 4 * n), np.uint8)

    def check(words):
        at = a & 7  # (the first copy starts at the window's address mod 8)
        assert np.array_equal(words[at : at + 4 * n], a_bytes())

    run_and_words()  # (learns the hint)
    _, w = run_and_words()
    assert len(made) == 2
    check(w)
    n_made = len(made)
    for _ in range(3):  # nothing changed: kept
        r, w = run_and_words()
        check(w)
        assert not r.stats.get("mirror_rerun")
    assert len(made) == n_made
    # a host write to a: made again, with the new bytes
    mem.write(a, np.full(4, 7, np.uint8))
    _, w = run_and_words()
    assert len(made) == n_made + 1
    check(w)
    # a dispatch landing in a (a = b + b, on the device): it wrote its mirrored window, so it ran
    # again without mirrors; the next dispatch's mirror holds a's new (device) bytes
    fm.addr = (b, b, a)
    r, _ = run_and_words()
    assert r.stats.get("mirror_rerun")
    fm.addr = (a, b, c)
    n_made = len(made)
    _, w = run_and_words()
    assert len(made) == n_made + 1
    check(w)
    _, w = run_and_words()
    assert len(made) == n_made + 1  # (kept again)
    # other hints (the slot now guessed into b's window): another key
    hint_to[0] = b
    run_and_words()  # (learns it)
    _, w = run_and_words()
    at = b & 7
    assert np.array_equal(w[at : at + 4 * n], np.frombuffer(mem.read(b, 4 * n), np.uint8))


def test_window_tables_are_the_layouts_and_follow_the_window_list():
    """WindowSet's address tables come from its layout (made once, shared, read-only): equal to
    tables made from its merged windows, for window lists that change in every way."""
    import pytest

    from wavelift.memory.guest import GuestMemory
    from wavelift.run.result import Window
    from wavelift.trace.windows import WindowSet

    rng = np.random.default_rng(11)
    mem = GuestMemory()
    bases = [mem.alloc(int(s), name=f"a{k}", align=8) for k, s in enumerate(rng.integers(8, 3000, 10))]
    for _ in range(40):
        pick = rng.choice(len(bases), int(rng.integers(1, len(bases))), replace=False)
        ws = []
        for k in pick:
            a = mem.find(bases[k])
            lo = 8 * int(rng.integers(0, a.size // 8))
            ws.append(Window(a.base + lo, int(rng.integers(1, a.size - lo + 1)), a.name, "t"))
        one = WindowSet(ws, mem, host_arena=False)
        two = WindowSet(list(ws), mem, host_arena=False)
        assert one.offs is two.offs and one.starts is two.starts  # (the layout's: shared)
        merged = one.windows
        assert one.offs.tolist() == list(one.layout.offs)
        assert one.starts.tolist() == [w.address for w in merged]
        assert one.ends.tolist() == [w.address + w.size for w in merged]
        assert one._delta == [o - w.address for w, o in zip(merged, one.layout.offs)]
        for arr in (one.offs, one.starts, one.ends):
            with pytest.raises(ValueError):
                arr[0] = 1


def test_program_for_keeps_the_last_stamped_find(monkeypatch, calls):
    """run/execute.program_for's last find (config object, memory, cache, allocation table, the
    code allocation's stamp) is given again only while each of those is the same; changing any
    one of them finds the program again (the scratch ABI worked out, the code read where its
    stamp changed), and the program is always the one a fresh find gives."""
    import copy

    from test_cuda_backend import _vadd_dispatch

    from wavelift.backends.cuda.resident import NumPyOps, Resident
    from wavelift.run import execute as E

    mem, cfg, _, _ = _vadd_dispatch(32)
    mem.resident = Resident(NumPyOps())
    code = mem.find(cfg.program_address)
    mem.resident.entry(code)  # (a device copy: the code's allocation has a stamp)
    monkeypatch.setattr(E, "_LAST_PROGRAM", [None] * 8)
    monkeypatch.setattr(E, "_STAMPED", {})
    found, read = calls(E, "_scratch_abi"), calls(E, "_program_bytes")
    cache: dict = {}

    def words(p):
        return [(i.offset, tuple(i.words)) for i in p[0].instructions], p[1]

    fresh = words(E.program_for(copy.deepcopy(mem), cfg, {}))
    first = E.program_for(mem, cfg, cache)
    assert words(first) == fresh
    n_found, n_read = len(found), len(read)
    for _ in range(3):  # the same: kept, nothing worked out or read
        assert E.program_for(mem, cfg, cache) == first
    assert (len(found), len(read)) == (n_found, n_read)

    def again(m=mem, c=cfg, k=cache, reads=False):
        nf, nr = len(found), len(read)
        got = E.program_for(m, c, k)
        assert len(found) == nf + 1, "kept although an input changed"
        assert (len(read) > nr) == reads
        assert words(got) == fresh
        assert E.program_for(m, c, k) == got and len(found) == nf + 1  # (then kept)
        return got

    # the code's bytes written again (the same bytes: its stamp changes, so they are read)
    mem.write(code.base, mem.read(code.base, 64))
    again(reads=True)
    cfg.system_sgprs["workgroup_id_x"] = cfg.system_sgprs.get("workgroup_id_x", 0) ^ 1  # in place
    again()
    again(c=copy.copy(cfg))  # another config object with the same fields
    again(k={}, reads=True)  # another cache
    E.program_for(mem, cfg, cache)  # (this cache again: kept from here)
    nf = len(found)
    E.program_for(mem, cfg, cache)
    assert len(found) == nf
    mem.alloc(64, name="new")  # another allocation table
    again()
    other = copy.deepcopy(mem)  # another memory (no device copies: no stamp, read every time)
    nr = len(read)
    E.program_for(other, cfg, cache)
    E.program_for(other, cfg, cache)
    assert len(read) == nr + 2


def test_hint_address_follows_the_loaded_module(monkeypatch):
    """runtime._hint_address keeps WL_HINT's address per module while it has the same loaded
    CUDA module; a module loaded again (Module.take_upgrade drops _mod) is asked again."""
    monkeypatch.setattr(RT, "_HINT_AT", {})

    class M:
        def __init__(self):
            self._mod, self.asked = object(), 0

        def global_address(self, name):
            assert name == "WL_HINT"
            self.asked += 1
            return id(self._mod), 64

    k = M()
    assert RT._hint_address(k) == (id(k._mod), 64) and k.asked == 1
    assert RT._hint_address(k) == (id(k._mod), 64) and k.asked == 1  # (kept)
    k._mod = object()  # loaded again
    assert RT._hint_address(k) == (id(k._mod), 64) and k.asked == 2
    other = M()  # another module
    assert RT._hint_address(other) == (id(other._mod), 64) and other.asked == 1
