"""execute_dispatch's prepared record (issue 24 item 2, decision 0029): a dispatch of the config
object a dispatch had before skips the backend and target checks, program_for (when the code's
content stamp holds), module_key, the module lookup and the trace key.  Each input of what it
skips, changed between two dispatches, must take the full path; random sessions must give what
the full path gives (results, write spans, guest memory), with the record taken often."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
from testpaths import FIXTURES

import wavelift
from wavelift.run import execute as E
from wavelift.run.replay import default_execute


def _device(seen):
    inner = default_execute("numpy", "wave")

    def execute(memory, config, index):
        seen.append(config)
        return inner(memory, config, index)

    dev = wavelift.Device("gfx1030", record=False, execute=execute)
    co = dev.load_code_object(FIXTURES / "gfx1030/basic-O2-w32-flat.hsaco")
    return dev, co


def _rig():
    seen: list = []
    dev, co = _device(seen)
    k = co.kernel("vadd")
    a = dev.upload(np.arange(64, dtype=np.float32))
    b = dev.upload(np.ones(64, np.float32))
    c = dev.alloc(256)
    r = k.launch(global_size=(64, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(64)])
    assert r.refusal is None, r.refusal
    return dev, k, (a, b, c), seen[-1]


def _view(r):
    # (module_cache_hit: whether an earlier test built the module; times vary)
    stats = {k: v for k, v in r.stats.items() if k != "module_cache_hit" and not k.endswith("_s")}
    return r.refusal, r.write_spans, [(w.address, w.size) for w in r.windows or []], stats


def _hits():
    return E.PREPARED_HITS[0]


def test_same_config_object_takes_the_record_and_equals_the_full_path(monkeypatch):
    dev, k, (a, b, c), cfg = _rig()
    h = _hits()
    r1 = E.execute_dispatch(dev.memory, cfg, 0, "numpy", "wave")
    r2 = E.execute_dispatch(dev.memory, cfg, 0, "numpy", "wave")
    assert _hits() == h + 2
    monkeypatch.setattr(E, "_prepared", lambda *a: (None, None))
    r3 = E.execute_dispatch(dev.memory, cfg, 0, "numpy", "wave")
    assert _view(r1) == _view(r2) == _view(r3)
    assert r1.stats["module_cache_hit"] and r3.stats["module_cache_hit"]


def test_each_input_changed_takes_the_full_path():
    dev, k, (a, b, c), cfg = _rig()
    mem = dev.memory

    def took(**kw) -> bool:
        h = _hits()
        args = {"backend": "numpy", "mode": "wave", **kw}
        r = E.execute_dispatch(args.pop("memory", mem), args.pop("config", cfg), 0, **args)
        assert r.refusal is None, r.refusal
        return _hits() == h + 1

    assert took()
    # another config object with the same fields: no record for it yet
    other = dataclasses.replace(cfg)
    assert not took(config=other) and took(config=other) and took()
    # the system SGPR dict (the config's one mutable field) changed in place
    cfg.system_sgprs["scratch_wave_offset_test"] = 99
    assert not took()
    del cfg.system_sgprs["scratch_wave_offset_test"]
    assert not took() and took()
    # another mode, another module cache
    assert not took(mode="lane") and took(mode="lane") and not took() and took()
    cache: dict = {}
    assert not took(cache=cache) and took(cache=cache) and not took()
    # the module taken out of (or replaced in) the cache the record names
    assert not took(cache=cache) and took(cache=cache)
    cache.clear()
    assert not took(cache=cache) and took(cache=cache)
    key = next(k for k in cache if k[0] != "program")
    cache[key] = copy.copy(cache[key])
    assert not took(cache=cache) and took(cache=cache)
    # a new allocation (the allocation table's generation)
    assert not took() and took()
    dev.alloc(64)
    assert not took() and took()
    # another memory holding the same bytes
    mem2 = _copy(mem)
    assert not took(memory=mem2) and took(memory=mem2) and not took()


def _copy(mem):
    from wavelift.memory.guest import GuestMemory

    out = GuestMemory()
    for al in mem.allocations:
        out.add(al.base, al.data.copy(), al.name)
    return out


def test_code_rewritten_between_dispatches_is_read_again(monkeypatch):
    """The code's bytes changed (no device copies here: no stamp, program_for reads them): a
    new program is not the recorded one, so the full path runs; garbage code refuses as the
    full path refuses; the old bytes again give the old program and its record."""
    dev, k, (a, b, c), cfg = _rig()
    mem = dev.memory
    code = mem.find(cfg.program_address)
    old = code.data.copy()
    base = E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    # an s_endpgm at the entry: the kernel stores nothing
    off = cfg.program_address - code.base
    h = _hits()
    mem.write(cfg.program_address, np.array([0xBF810000], "<u4").view(np.uint8))
    r = E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    assert _hits() == h and r.refusal is None and r.write_spans == []
    monkeypatch.setattr(E, "_prepared", lambda *a: (None, None))
    assert _view(E.execute_dispatch(mem, cfg, 0, "numpy", "wave")) == _view(r)
    monkeypatch.undo()
    mem.write(code.base, old)
    h = _hits()
    r = E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    assert _view(r) == _view(base) and _hits() == h  # (the record was the s_endpgm program's)
    assert _view(E.execute_dispatch(mem, cfg, 0, "numpy", "wave")) == _view(base) and _hits() == h + 1
    # undecodable words at the entry: the same refusal as the full path
    mem.write(cfg.program_address, np.full(16, 0xFF, np.uint8))
    r = E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    monkeypatch.setattr(E, "_prepared", lambda *a: (None, None))
    assert r.refusal is not None
    assert _view(E.execute_dispatch(mem, cfg, 0, "numpy", "wave")) == _view(r)
    assert off >= 0


def test_pointer_written_between_dispatches_is_traced():
    """The record keeps the trace's key, not its windows: a kernarg pointer changed by the host
    (the same config object: the user SGPRs hold the kernarg address, not the pointers) moves
    the output window, as the full path's trace finds it."""
    dev, k, (a, b, c), cfg = _rig()
    mem = dev.memory
    d = dev.alloc(256)
    E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    ka = dev.launches[-1].kernarg_address  # (vadd's kernargs: a, b, c, n)
    assert mem.read_u64(ka + 16) == c.address
    mem.write_u64(ka + 16, d.address)
    h = _hits()
    r = E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    assert _hits() == h + 1 and r.refusal is None
    assert r.write_spans == [(d.address, 256)]
    assert np.array_equal(dev.download(d, np.float32)[:64], np.arange(64, dtype=np.float32) + 1)


def _script(seed: int):
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(60):
        u = rng.random()
        if u < 0.1:
            steps.append(("write", int(rng.integers(0, 3)), int(rng.integers(0, 1 << 20))))
        elif u < 0.15:
            steps.append(("upload", int(rng.integers(0, 1 << 20))))
        elif u < 0.2:
            steps.append(("code",))
        else:
            n = int(rng.choice([64, 64, 64, 32]))
            picks = tuple(int(x) for x in rng.integers(0, 4, 3))
            steps.append(("vadd", n, picks, int(rng.integers(1, n + 1))))
    return steps


def _session(seed: int, prepared: bool, monkeypatch):
    if not prepared:
        monkeypatch.setattr(E, "_prepared", lambda *a: (None, None))
    seen: list = []
    dev, co = _device(seen)
    vadd = co.kernel("vadd")
    rng = np.random.default_rng(seed + 7)
    bufs = [dev.upload(rng.standard_normal(64).astype(np.float32)) for _ in range(4)]
    code = dev.memory.find(vadd.code_address)
    out = []
    for step in _script(seed):
        if step[0] == "write":
            dev.write(bufs[step[1]], np.full(4, step[2], np.uint32))
        elif step[0] == "upload":
            bufs[0] = dev.upload(np.full(64, step[1] & 0xFFFF, np.float32))
        elif step[0] == "code":  # the same code bytes written again (host-touched, unchanged)
            dev.memory.write(code.base, code.data.copy())
        else:
            _, n, picks, count = step
            a, b, c = (bufs[i] for i in picks)
            r = vadd.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[a, b, c, np.uint32(count)])
            out.append(_view(r))
        out.append([(al.base, bytes(al.data)) for al in dev.memory.allocations])
    monkeypatch.undo()
    return out


def test_random_sessions_equal_the_full_path(monkeypatch):
    for seed in (3, 4):
        h = _hits()
        fast = _session(seed, True, monkeypatch)
        taken = _hits() - h
        full = _session(seed, False, monkeypatch)
        assert _hits() - h == taken
        assert len(fast) == len(full)
        for x, y in zip(fast, full):
            assert x == y
        assert taken > 10, taken


def test_layout_of_the_same_window_objects_is_the_layout_of_their_values():
    """trace/windows._layout's last-call shortcut (the same Window objects again: the same
    layout) gives what the keyed lookup gives, and other objects or values are looked up."""
    from wavelift.run.result import Window
    from wavelift.trace import windows as W

    ws = [Window(0x1000, 64, "a", "t"), Window(0x2004, 100, "b", "t")]
    lay = W._layout(ws)
    assert W._layout(ws) is lay and W._layout(list(ws)) is lay
    same = [Window(0x1000, 64, "a", "t"), Window(0x2004, 100, "b", "t")]
    assert W._layout(same) is lay  # (equal values: the keyed cache's layout)
    other = [Window(0x1000, 64, "a", "t"), Window(0x2008, 100, "b", "t")]
    lo = W._layout(other)
    assert lo is not lay and lo.offs != lay.offs or lo.windows != lay.windows
    assert W._layout(ws) is lay
    assert W._layout(ws[:1]) is not lay and W._layout([]) is W._layout([])
    W._LAYOUTS.clear()  # (evicted: the last call's layout is still a pure function of its windows)
    again = W._layout(ws)
    assert (again.windows, again.offs, again.nbytes) == (lay.windows, lay.offs, lay.nbytes)


def _both(monkeypatch, mem, cfg):
    """(result, stages told) of a dispatch through the record, then through the full path."""
    out = []
    for disabled in (False, True):
        if disabled:
            monkeypatch.setattr(E, "_prepared", lambda *a: (None, None))
        told: list = []
        r = E.execute_dispatch(mem, cfg, 0, "numpy", "wave", progress=told.append)
        out.append((_view(r), told))
    monkeypatch.undo()
    return out


def test_refusals_and_stages_are_the_full_paths(monkeypatch):
    """The record changes neither which refusal comes first nor the stages a progress callable
    is told: undecodable code refuses after "translating"; an unavailable backend refuses
    before it (and before the code is read), as the full path does."""
    from wavelift.backends import base

    dev, k, (a, b, c), cfg = _rig()
    mem = dev.memory
    E.execute_dispatch(mem, cfg, 0, "numpy", "wave")  # (the record)
    old = mem.find(cfg.program_address).data.copy()
    mem.write(cfg.program_address, np.full(16, 0xFF, np.uint8))
    fast, full = _both(monkeypatch, mem, cfg)
    assert fast == full and fast[0][0] is not None and fast[1] == ["translating"]
    E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    be = base.get("numpy")
    monkeypatch.setattr(be, "available", lambda: "switched off")
    told: list = []
    r = E.execute_dispatch(mem, cfg, 0, "numpy", "wave", progress=told.append)
    monkeypatch.undo()
    assert r.refusal.code == "backend.unavailable" and told == []
    mem.write(mem.find(cfg.program_address).base, old)
    E.execute_dispatch(mem, cfg, 0, "numpy", "wave")
    h = _hits()
    fast, full = _both(monkeypatch, mem, cfg)
    assert _hits() == h + 1
    assert fast == full and fast[0][0] is None
    assert fast[1][:3] == ["translating", "placing windows", "running"] and fast[1][-1] == "landing"
