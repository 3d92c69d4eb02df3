"""The CUDA host path's per-dispatch memos (issue 24, decision 0029): a config object handed again
keeps its key (backends/cuda/memo.py), the window tables' constants are kept per layout
(runtime._window_constants).  Each test changes what a kept value depends on between two
lookups and checks the change is seen.  Oracle: the value worked out fresh (no memo)."""

from __future__ import annotations

import dataclasses
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from testpaths import one_wave_config  # noqa: E402

from wavelift.backends.cuda import memo  # noqa: E402
from wavelift.backends.cuda import runtime as RT  # noqa: E402
from wavelift.memory.guest import GuestMemory  # noqa: E402
from wavelift.run.result import Window  # noqa: E402
from wavelift.trace.windows import WindowSet  # noqa: E402


def _fields(cfg, *extra):
    return (memo.config_key(cfg),) + extra


def test_same_config_object_is_served_its_own_value():
    cfg = one_wave_config([1, 2, 3])
    calls = []

    def make(c, *extra):
        calls.append(1)
        return _fields(c, *extra)

    a = memo.by_config("t-memo", cfg, make, 5)
    b = memo.by_config("t-memo", cfg, make, 5)
    assert a is b and a == _fields(cfg, 5)
    # another extra: another value
    assert memo.by_config("t-memo", cfg, make, 6) == _fields(cfg, 6)
    # a new object with another field: its own value, not the kept one
    cfg2 = dataclasses.replace(cfg, user_sgprs=(1, 2, 4))
    assert memo.by_config("t-memo", cfg2, make, 5) == _fields(cfg2, 5)
    # back to the first: equal to fresh
    assert memo.by_config("t-memo", cfg, make, 5) == _fields(cfg, 5)


def test_system_sgpr_dict_changed_in_place_is_seen():
    """The config's one mutable field (its system SGPR dict) changed on the same object: the
    object's kept key must not be used."""
    cfg = one_wave_config([7])
    make = _fields
    before = memo.by_config("t-memo-sys", cfg, make)
    assert before == _fields(cfg)
    cfg.system_sgprs["wavelift_test_reg"] = 9  # (the same object, a changed field)
    after = memo.by_config("t-memo-sys", cfg, make)
    assert after == _fields(cfg) and after != before
    cfg.system_sgprs["wavelift_test_reg"] = 10
    assert memo.by_config("t-memo-sys", cfg, make) == _fields(cfg)


def _fresh_tables(win):
    return (
        np.asarray(win.starts, np.uint64),
        np.asarray(win.ends, np.uint64),
        np.asarray(win.offs, np.int64),
    )


def test_window_constants_follow_the_layout():
    mem = GuestMemory()
    mem.alloc(256, name="a", align=256)
    mem.alloc(512, name="b", align=256)
    mem.alloc(128, name="c", align=256)
    a, b, c = sorted(mem, key=lambda x: x.base)
    w1 = WindowSet(
        [Window(a.base, a.size, "a", "t"), Window(b.base, b.size, "b", "t")], mem, host_arena=False
    )
    k1 = RT._window_constants(w1)
    assert [n for n, _ in k1] == ["WL_WS", "WL_WE", "WL_WO"]
    assert all(np.array_equal(x, y) for (_, x), y in zip(k1, _fresh_tables(w1)))
    # the same window list again: the same layout, the same kept arrays
    w1b = WindowSet(
        [Window(a.base, a.size, "a", "t"), Window(b.base, b.size, "b", "t")], mem, host_arena=False
    )
    assert w1b.layout is w1.layout and RT._window_constants(w1b) is k1
    # another window between two launches: the new tables, not the kept ones
    w2 = WindowSet(
        [
            Window(a.base, a.size, "a", "t"),
            Window(c.base, c.size, "c", "t"),
            Window(b.base, b.size, "b", "t"),
        ],
        mem,
        host_arena=False,
    )
    k2 = RT._window_constants(w2)
    assert all(np.array_equal(x, y) for (_, x), y in zip(k2, _fresh_tables(w2)))
    assert not np.array_equal(k2[0][1], k1[0][1])


def test_report_pointer_words_follow_the_address():
    """WL_STATUS/WL_STATS/WL_ESC: the same array for the same report address; another report
    buffer (another address) gets its own word, never the kept one."""
    p1, p2 = 0x7F00_0000_1000, 0x7F00_0000_2000
    w1 = RT._pointer_word(p1)
    assert RT._pointer_word(p1) is w1 and int(w1[0]) == p1 and w1.dtype == np.uint64
    w2 = RT._pointer_word(p2)
    assert int(w2[0]) == p2 and int(w1[0]) == p1


def test_module_key_follows_the_config_and_program():
    """run/execute.module_key keeps the last CUDA key per (program, config object, system SGPRs):
    a changed system SGPR dict on the same object, another config or another program each get
    the key worked out fresh (_module_key), never the kept one."""
    from test_cuda_backend import _vadd_dispatch, translate_dispatch

    from wavelift.run import execute as X

    mem, cfg, _, _ = _vadd_dispatch(32)
    prog, _ = translate_dispatch(mem, cfg)
    k1 = X.module_key(prog, cfg, "lane", "cuda")
    assert k1 == X._module_key(prog, cfg, "lane", "cuda") and X.module_key(prog, cfg, "lane", "cuda") is k1
    assert X.module_key(prog, cfg, "wave", "cuda") == X._module_key(prog, cfg, "wave", "cuda") != k1
    cfg2 = dataclasses.replace(cfg, program_address=cfg.program_address + 0x100)
    assert X.module_key(prog, cfg2, "lane", "cuda") == X._module_key(prog, cfg2, "lane", "cuda") != k1
    prog2, _ = translate_dispatch(mem, cfg)  # (another program object: its own hash, equal code)
    assert X.module_key(prog2, cfg, "lane", "cuda") == X._module_key(prog2, cfg, "lane", "cuda")
    cfg3 = dataclasses.replace(cfg, system_sgprs=dict(cfg.system_sgprs))
    X.module_key(prog, cfg3, "lane", "cuda")
    cfg3.system_sgprs["scratch_wave_offset"] = 5  # (the same object, a changed field)
    got = X.module_key(prog, cfg3, "lane", "cuda")
    assert got == X._module_key(prog, cfg3, "lane", "cuda") != k1


def test_prepare_finds_follow_the_allocation_table():
    """resident.prepare keeps each window's allocation per (layout, memory, generation): an
    allocation freed and made again at the same address between two dispatches (the same
    window list, so the same layout) is the new one, with its own bytes on the device."""
    from wavelift.backends.cuda import resident as R

    mem = GuestMemory()
    mem.alloc(256, name="a", align=256)
    (a,) = list(mem)
    a._data[:] = 1
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    windows = [Window(a.base, a.size, "a", "t")]
    win = WindowSet(windows, mem, host_arena=False)
    p1 = res.prepare(win)
    assert p1[0][0] is res.entries[a] and res.prepare(win)[0][0] is p1[0][0]
    mem.free(a.base)
    mem.alloc(256, name="a2", align=256)
    (b,) = list(mem)
    assert b.base == a.base and b is not a  # (the same place: the same window list and layout)
    b._data[:] = 2
    win2 = WindowSet(windows, mem, host_arena=False)
    assert win2.layout is win.layout
    p2 = res.prepare(win2)
    assert p2[0][0] is res.entries[b] and p2[0][0] is not p1[0][0]
    arena = res.gather(win2, p2)
    o = int(win2.offs[0])
    assert (np.asarray(res.ops.download(arena, o, 256)) == 2).all()
