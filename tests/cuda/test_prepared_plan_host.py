"""Resident.prepare's kept plan (issue 24 item 2, decision 0029): a dispatch of the windows the
last one had (the same layout, memory, allocation table and entries) takes the plan made then
when no entry has anything to upload.  Random sessions -- host writes and views, reads, landed
and refused dispatches, another memory's Resident taking an allocation, a shared allocation --
must leave every device copy, shadow, dirty range, host byte and plan exactly as the full loop
does (the same session with the kept plan dropped before every prepare), with the kept plan
taken often; NumPy arrays stand in for the device (NumPyOps)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_resident_host import Dispatch, _memory  # noqa: E402

from wavelift.backends.cuda import resident as R  # noqa: E402
from wavelift.run.result import Window  # noqa: E402


def _windows(bases, shared, pick):
    a0, a1, a2, a3 = bases
    ws = [Window(a0, 4096, "a0", "t"), Window(a1 + 8, 512, "a1", "t"), Window(a2, 64, "a2", "t")]
    if pick == 1:
        ws.append(Window(a3 + 16, 3000, "a3", "t"))
    if pick == 2:
        ws.append(Window(shared, 256, "s", "t"))
    return ws


def _session(seed: int, keep: bool):
    rng = np.random.default_rng(seed)
    mem, bases = _memory(rng)
    arr = rng.integers(0, 256, 256, dtype=np.uint8)
    shared = 0x7000_0000
    mem.add(shared, arr, "shared", shared=True)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    other = R.Resident(R.NumPyOps())
    real = res.prepare
    plans: list = []

    def prepare(win):
        if not keep:
            res._finds = None
        p = real(win)
        plans.append(p)
        return p

    res.prepare = prepare  # type: ignore[method-assign]
    out = []
    kept = 0
    for _ in range(60):
        r = rng.random()
        base = bases[int(rng.integers(0, len(bases)))]
        size = mem.find(base).size
        at = int(rng.integers(0, size))
        n = min(int(rng.integers(1, 100)), size - at)
        if r < 0.1:
            mem.write(base + at, rng.integers(0, 256, n, dtype=np.uint8))
        elif r < 0.15:
            mem.view(base + at, n)[:] = rng.integers(0, 256, n, dtype=np.uint8)
        elif r < 0.18:
            mem.read(base + at, n)
        elif r < 0.23:
            _ = mem.find(base).data  # (the whole allocation current: a landed copy is pulled)
        elif r < 0.25:
            arr[:16] = rng.integers(0, 256, 16, dtype=np.uint8)  # (its owner writes it)
        elif r < 0.27:
            other.entry(mem.find(base))  # (another memory's device copy takes it)
        else:
            pick = int(rng.choice([0, 0, 0, 1, 2]))
            d = Dispatch(res, mem, _windows(bases, shared, pick), rng)
            if len(plans) > 1 and plans[-1] is plans[-2]:
                kept += 1
            if rng.random() < 0.8:
                res.commit(d.win, d.plan, d.arena, d.written, d.spans)
            d.win.release()
            where = {id(e): a.base for a, e in res.entries.items()}
            out.append([(where.get(id(e)), o) for e, o in d.plan])
        state = []
        for a in mem:
            e = res.entries.get(a)
            state.append((a.base, a._data.tobytes()))
            if e is not None:
                state.append(
                    (
                        e.buf[: a.size].tobytes(),
                        None if e.shadow is None else e.shadow.tobytes(),
                        e.clean == e.version,
                        e.host_dirty.ranges(),
                        e.dev_dirty.ranges(),
                    )
                )
        out.append(state)
    return out, kept


def test_kept_plan_equals_the_full_loop():
    for seed in range(6):
        fast, kept = _session(seed, True)
        full, none = _session(seed, False)
        assert none == 0
        assert len(fast) == len(full)
        for x, y in zip(fast, full):
            assert x == y
        assert kept >= 3, kept


def test_kept_plan_not_taken_after_a_host_write_or_a_new_entry():
    rng = np.random.default_rng(5)
    mem, bases = _memory(rng)
    res = R.Resident(R.NumPyOps())
    mem.resident = res
    ws = _windows(bases, 0, 0)
    p1 = Dispatch(res, mem, ws, rng).plan
    p2 = Dispatch(res, mem, ws, rng).plan
    assert p2 is Dispatch(res, mem, ws, rng).plan  # (nothing to upload: kept)
    mem.write(bases[1] + 8, np.ones(4, np.uint8))  # a host write: the loop uploads it
    ops_up = res.ops.up
    p3 = Dispatch(res, mem, ws, rng).plan
    assert res.ops.up == ops_up + 4 and p3 is not p2
    assert [(id(e), o) for e, o in p3] == [(id(e), o) for e, o in p2]
    # another Resident takes a0's copy: a new entry here, the loop again
    R.Resident(R.NumPyOps()).entry(mem.find(bases[0]))
    p4 = Dispatch(res, mem, ws, rng).plan
    assert p4 is not p3 and p4[0][0] is not p3[0][0]
    assert p1 is not None


def test_standin_record_follows_the_code_stamp(standin):
    """execute_dispatch's prepared record on a memory with device copies (the stand-in CuPy):
    the code allocation's stamp proves the program; the same bytes written again keep the
    record (program_for finds the same program; the stamp is noted again), other bytes (an
    s_endpgm at the entry) take the full path and the dispatch lands nothing, and the old bytes
    again land vadd's result."""
    from test_host_path import _device, _vadd_from_kernargs

    from wavelift.run import execute as E

    dev, k = _device()
    n = 64
    a = dev.upload(np.arange(n, dtype=np.float32))
    b = dev.upload(np.full(n, 0.5, np.float32))
    c = dev.alloc(4 * n)
    standin.kernel = _vadd_from_kernargs()
    args = [a, b, c, np.uint32(n)]

    def launch():
        h = E.PREPARED_HITS[0]
        r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args)
        assert r.refusal is None, r.refusal
        return r, E.PREPARED_HITS[0] - h

    launch()
    launch()
    r, took = launch()
    assert took == 1 and r.write_spans == [(c.address, 4 * n)]
    mem = dev.memory
    code = mem.find(k.code_address)
    rec = next(x for x in E._PREPARED.values() if x.memory() is mem)
    assert rec.stamp is not None  # (the code has a device copy: a window of the dispatch)
    old = code.data.copy()
    mem.write(code.base, old)  # the same bytes: touched, the same program
    r, took = launch()
    assert took == 1 and r.write_spans == [(c.address, 4 * n)]
    standin.kernel = None  # (the stand-in plays no kernel: what an s_endpgm kernel stores)
    mem.write(k.code_address, np.array([0xBF810000], "<u4").view(np.uint8))
    r, took = launch()
    assert took == 0 and r.write_spans == []
    mem.write(code.base, old)
    standin.kernel = _vadd_from_kernargs()
    dev.write(c, np.zeros(n, np.float32))
    r, took = launch()
    assert took == 0 and r.write_spans == [(c.address, 4 * n)]
    assert np.array_equal(dev.download(c, np.float32), np.arange(n, dtype=np.float32) + 0.5)
    assert launch()[1] == 1
