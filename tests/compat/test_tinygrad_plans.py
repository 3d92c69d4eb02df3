"""The tinygrad hook's kept plans for a repeated dispatch (decision 0045, amendment h94): a call
with the arguments of a kept plan takes it only while the code's bytes are the ones it was made
from, and the windows are reused only while every byte the tracer read is unchanged.  Expected
values from NumPy or from tinygrad's CPU device (the fixtures), never from the hook itself; each
exactness test is also run with the check it relies on defeated, and must then go wrong."""

from __future__ import annotations

import ctypes
import struct

import numpy as np
import pytest

from tests.compat import bounds, harness
from wavelift.compat import tinygrad as tg
from wavelift.trace import tracer


@pytest.fixture(autouse=True)
def _no_kept_plans():
    """Each test starts with no plan or memory kept by an earlier one (the same host addresses
    may come back: a memory's kept traces would answer)."""
    for kept in (tg._PLANS, tg._MEMORIES):
        kept.clear()
    yield


def _fixture(name: str) -> harness.Fixture:
    return harness.load(next(p for p in harness.fixtures("gfx1100") if p.stem == name))


class Pool:
    """harness.HostBlock replaced by blocks kept by (size, creation order among the replay's
    blocks of that size): a later replay gets the very blocks (addresses) the first one got,
    zeroed -- tinygrad's runtime running the same kernels on the same buffers again -- though
    only the first replay of a code object makes its block (harness.LOADED: keep_code), which
    comes after the buffers."""

    def __init__(self, monkeypatch):
        self.blocks: dict = {}
        self.seq: dict = {}
        real = harness.HostBlock

        def block(size):
            key = (size, self.seq.get(size, 0))
            self.seq[size] = key[1] + 1
            b = self.blocks.get(key)
            if b is None:
                b = self.blocks[key] = real(size)
            b.view[:] = 0
            return b

        monkeypatch.setattr(harness, "HostBlock", block)

    def replay(self, fx, **kw):
        """harness.replay through the hook; -> (Run, the last call's (args, keywords))."""
        self.seq = {}
        calls = []

        def hook(*a, **k):
            calls.append((a, k))
            return tg.run_asm(*a, **k)

        run = harness.replay(fx, hook, keep_code=True, **kw)
        return run, calls[-1]


def _where_arange(a: np.ndarray) -> np.ndarray:
    return np.where(a > 0, a, np.arange(a.size, dtype=np.float32)).astype(np.float32)


def _buf(run, bid: int, n: int = 64) -> np.ndarray:
    return run.blocks[bid].view[: 4 * n].view(np.float32)


def test_repeated_dispatch_takes_its_plan_and_the_traced_windows(monkeypatch, calls):
    pool, traces = Pool(monkeypatch), calls(tracer, "_trace")  # (traces the cache did not answer)
    fx = _fixture("where_arange")
    run, (args, kw) = pool.replay(fx)
    assert run.codes == [tg.OK] and bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None
    hits, n = tg.PLAN_HITS[0], len(traces)
    a, out = _buf(run, 39), _buf(run, 40)
    rng = np.random.default_rng(5)
    for step in range(4):
        # other input bytes at the same pointers: the plan and the windows again, the result
        # of the new bytes (the input's bytes are not read by the tracer at this depth)
        a[:] = rng.standard_normal(64).astype(np.float32)
        out[:] = 7
        assert tg.run_asm(*args, **kw) == tg.OK
        np.testing.assert_array_equal(out, _where_arange(a))
        assert tg.PLAN_HITS[0] == hits + step + 1
    assert len(traces) == n  # (every byte the tracer read unchanged: no trace)
    # the same result with no plan kept at all
    monkeypatch.setattr(tg, "KEEP_PLANS", False)
    out[:] = 7
    assert tg.run_asm(*args, **kw) == tg.OK
    np.testing.assert_array_equal(out, _where_arange(a))
    assert tg.PLAN_HITS[0] == hits + 4


@pytest.mark.parametrize("stale", [False, True])
def test_a_changed_pointer_is_traced_again(monkeypatch, calls, stale):
    """The kernargs' output pointer moved to another buffer of the same ranges: the same call
    arguments (the plan), but a byte the tracer read differs, so it traces again: the windows
    are those the new pointers reach and the result lands in the new buffer only.  ``stale``:
    a trace cache that compares no bytes (a deliberately wrong reuse of the old windows):
    then the windows are not the new ones (the run escapes them: decision 0048's deeper trace
    repeats it, so the bytes still land right -- the windows say what was reused)."""
    pool, traces = Pool(monkeypatch), calls(tracer, "_trace")  # (traces the cache did not answer)
    if stale:  # (the windows the key gave last, whatever the bytes: a cache that compares nothing)
        real, given = tracer._trace_variants, {}

        def stale_trace(memory, config, skip, key, depth):
            if (id(memory), key) not in given:
                given[id(memory), key] = real(memory, config, skip, key, depth)
            return list(given[id(memory), key])

        monkeypatch.setattr(tracer, "_trace_variants", stale_trace)
    fx = _fixture("where_arange")
    run, (args, kw) = pool.replay(fx)
    assert run.codes == [tg.OK]
    a, out = _buf(run, 39), _buf(run, 40)
    first = out.copy()
    ka = args[8]  # (the kernarg pointer: [out, in])
    other = next(b for b in pool.blocks.values() if b.size == 1 << 16 and b.address != ka)  # scratch
    assert any(s == other.address for s, _ in kw["ranges"])
    hits, n = tg.PLAN_HITS[0], len(traces)
    ctypes.c_uint64.from_address(ka).value = other.address
    rc = tg.run_asm(*args, **kw)
    assert tg.PLAN_HITS[0] == hits + 1
    got = other.view[:256].view(np.float32).copy()
    res = tg.last_result()
    # (the windows the pointers reach now: the kernarg segment, the new output, the input)
    now = sorted([ka, other.address, run.blocks[39].address])
    current = [w.address for w in res.windows] == now and "deep_trace" not in res.stats
    if stale:
        assert not current
        return
    assert rc == tg.OK and len(traces) == n + 1 and current
    np.testing.assert_array_equal(got, _where_arange(a))
    np.testing.assert_array_equal(out, first)  # (the old output not written again)
    # and back: the first pointer, traced again, lands there
    out[:] = 0
    ctypes.c_uint64.from_address(ka).value = run.blocks[40].address
    assert tg.run_asm(*args, **kw) == tg.OK
    np.testing.assert_array_equal(out, _where_arange(a))


def test_an_escape_on_a_kept_plan_is_refused_with_nothing_written(monkeypatch):
    pool = Pool(monkeypatch)
    fx = _fixture("where_arange")
    run, (args, kw) = pool.replay(fx)
    assert run.codes == [tg.OK]
    ka = args[8]
    outside = (ctypes.c_uint8 * 4096)()  # (host bytes in no range)
    before = {k: bytearray(b.view) for k, b in pool.blocks.items()}
    hits = tg.PLAN_HITS[0]
    ctypes.c_uint64.from_address(ka).value = ctypes.addressof(outside)
    assert tg.run_asm(*args, **kw) == tg.REFUSED
    assert tg.last_result().refusal.code == "escape"
    assert tg.PLAN_HITS[0] == hits + 1
    assert bytes(outside) == bytes(4096)
    kernargs = next(k for k, b in pool.blocks.items() if b.address == ka)
    struct.pack_into("<Q", before[kernargs], 0, ctypes.addressof(outside))  # (the one change: ours)
    assert {k: bytearray(b.view) for k, b in pool.blocks.items()} == before  # (nothing written)
    # the pointer back: the plan lands again
    out = _buf(run, 40)
    out[:] = 0
    ctypes.c_uint64.from_address(ka).value = run.blocks[40].address
    assert tg.run_asm(*args, **kw) == tg.OK
    np.testing.assert_array_equal(out, _where_arange(_buf(run, 39)))


@pytest.mark.parametrize("stale", [False, True])
def test_other_code_at_the_same_address_is_not_run_from_the_plan(monkeypatch, stale):
    """exp_log's and sigmoid_gelu's kernels have the same size, descriptor fields and kernarg
    layout: loaded one after the other into one code block over the same buffers, the second
    call has the first's arguments exactly (its plan's key); only the code's bytes differ.
    ``stale``: the code check defeated (the plan's stamp said to hold): the second result is
    then exp_log's formula, not sigmoid_gelu's."""
    pool = Pool(monkeypatch)
    code = harness.HostBlock(4096)
    first, second = _fixture("exp_log"), _fixture("sigmoid_gelu")
    run, call1 = pool.replay(first, code=code)
    assert (
        run.codes == [tg.OK]
        and bounds.check(first.name, run.output, first.expected(), first.inputs()) is None
    )
    if stale:
        monkeypatch.setattr(tg, "_code_stamp", lambda span: tg._CODE[span][1])
    hits = tg.PLAN_HITS[0]
    run2, call2 = pool.replay(second, code=code)
    assert call2 == call1  # (the same arguments: the first call's plan is the one looked up)
    assert run2.codes == [tg.OK]
    bad = bounds.check(second.name, run2.output, second.expected(), second.inputs())
    if stale:
        assert tg.PLAN_HITS[0] == hits + 1 and bad is not None
    else:
        assert tg.PLAN_HITS[0] == hits and bad is None
        # and again: now its own plan
        run3, _ = pool.replay(second, code=code)
        assert tg.PLAN_HITS[0] == hits + 1
        assert bounds.check(second.name, run3.output, second.expected(), second.inputs()) is None


def test_code_stamp_changes_with_any_byte_and_never_comes_back():
    buf = (ctypes.c_uint8 * 1024)(*range(256), *range(256), *range(256), *range(256))
    span = (ctypes.addressof(buf), ctypes.addressof(buf) + 1024)
    s1 = tg._code_stamp(span)
    assert tg._code_stamp(span) == s1
    seen = {s1}
    for i in (0, 511, 1023):
        buf[i] ^= 1
        s = tg._code_stamp(span)
        assert s not in seen
        seen.add(s)
        buf[i] ^= 1  # (the old bytes again: still a new stamp, the copy is the changed one's)
        s = tg._code_stamp(span)
        assert s not in seen
        seen.add(s)
    assert not any(isinstance(s, int) for s in seen)  # (never a device copy's version number)


def test_repeated_replays_of_every_fixture_match_tinygrads_cpu(monkeypatch):
    """Every gfx1100 fixture replayed three times over the same buffers (plans taken on the
    second and third): tinygrad's CPU device's results each time."""
    pool = Pool(monkeypatch)
    hits, calls = 0, 0
    for p in harness.fixtures("gfx1100"):
        fx = harness.load(p)
        for i in range(3):
            h = tg.PLAN_HITS[0]
            run, _ = pool.replay(fx)
            assert all(c == tg.OK for c in run.codes), fx.name
            assert bounds.check(fx.name, run.output, fx.expected(), fx.inputs()) is None, fx.name
            if i:
                hits, calls = hits + tg.PLAN_HITS[0] - h, calls + len(run.codes)
        pool.blocks.clear()
    assert calls >= 30 and hits == calls  # (every call of the later replays took its plan)


def test_new_values_beside_the_same_pointers_take_the_kept_trace(monkeypatch, calls):
    """A word of the kernarg segment's allocation that is no pointer (past the kernargs and the
    dispatch packet: bytes the tracer scans and the kernel never reads) changed on a kept plan:
    the same pointers, so the kept windows, no trace (decision 0045, amendment h107); the result
    still tinygrad's.  The word made a pointer into another range: traced again, and that range
    is a window."""
    pool, traces = Pool(monkeypatch), calls(tracer, "_trace")  # (traces the cache did not answer)
    fx = _fixture("where_arange")
    run, (args, kw) = pool.replay(fx)
    assert run.codes == [tg.OK]
    ka = args[8]
    (seg,) = [w for w in tg.last_result().windows if w.address == ka]
    assert seg.size >= 96  # (kernargs, packet, then padding to 64 bytes)
    word = ctypes.c_uint64.from_address(ka + seg.size - 8)
    a, out = _buf(run, 39), _buf(run, 40)
    # (the buffers' bytes the same before each call: an earlier test may have made the program
    # trace deep at once -- decision 0048 --, whose trace scans their heads too)
    a[:] = np.random.default_rng(9).standard_normal(64).astype(np.float32)
    n = None
    for step in range(5):
        # (no range can hold it: 2^47 and up is no user-space address; the low dword's low half 0,
        # so no pair with the word before it is a candidate either -- a value below 4 GiB could
        # be a host block's address: the harness maps its blocks there)
        word.value = 1 << 47 | (0x1234 + step) << 16
        assert not any(s <= word.value < s + n for s, n in kw["ranges"])
        out[:] = 7
        assert tg.run_asm(*args, **kw) == tg.OK
        np.testing.assert_array_equal(out, _where_arange(a))
        n = len(traces) if n is None else n  # (counted from the first call over these bytes)
    assert len(traces) == n  # (fails where the kept traces are found by the head's bytes alone)
    other = next(b for b in pool.blocks.values() if b.size == 1 << 16 and b.address != ka)
    word.value = other.address
    assert tg.run_asm(*args, **kw) == tg.OK
    assert len(traces) == n + 1 and other.address in [w.address for w in tg.last_result().windows]
    np.testing.assert_array_equal(out, _where_arange(a))
