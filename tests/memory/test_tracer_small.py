"""The tracer's small-head scans (a kernarg segment, the user SGPRs: Python instead of NumPy) give
the candidates and first candidates of the array forms, and a memory with ``open_scans`` (the
tinygrad hook's kept memory: open scans, cached traces) traces what ``trace_uncached`` traces,
again after any byte it read changed (decision 0045, amendment h94)."""

from __future__ import annotations

import numpy as np
import pytest
from testpaths import one_wave_config

from wavelift.memory.guest import GuestMemory
from wavelift.trace import tracer as T


def _words(rng, n, addresses):
    """n dwords: zeros, noise, pairs of ``addresses``, RADV pointers and T#-looking words."""
    u = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    u[rng.random(n) < 0.4] = 0
    for i in range(0, n - 1):
        k = rng.random()
        if k < 0.15 and addresses:
            p = int(rng.choice(addresses)) + int(rng.integers(-8, 64))
            u[i], u[i + 1] = p & 0xFFFFFFFF, (p >> 32) & 0xFFFFFFFF
        elif k < 0.2:
            u[i + 1] = T.RADV_HI
        elif k < 0.25 and i + 3 < n:
            u[i + 3] |= np.uint32(0x80000000)
    return u


@pytest.mark.parametrize("low", [False, True])
def test_small_candidates_are_the_array_forms(low):
    rng = np.random.default_rng(11)
    for n in list(range(0, 9)) + [16, 31, 64, 70]:
        for _ in range(30):
            u = _words(rng, n, [0x5555_0000_1000, 0x7F00_1234_0000, 0x1000, T.RADV48 | 0x40])
            a, k = T._all_candidates32(u, low)
            assert T._small_candidates(u.tolist(), low) == list(zip(a.tolist(), k.tolist()))


def test_small_firsts_are_first_per_target():
    rng = np.random.default_rng(12)
    for trial in range(200):
        m = int(rng.integers(1, 12))
        starts = np.sort(rng.choice(np.arange(1, 4000, dtype=np.uint64), m, replace=False)) * np.uint64(
            0x1000
        )
        sizes = rng.integers(1, 0x1800, m).astype(np.uint64)
        ends = np.minimum(starts + sizes, np.append(starts[1:], np.uint64(1 << 47)))
        u = _words(rng, int(rng.integers(0, 64)), [int(s) for s in starts])
        found = T._small_candidates(u.tolist(), bool(trial % 2))
        a = np.array([x for x, _ in found], np.uint64)
        k = np.array([j for _, j in found], np.intp)
        hull = (int(starts[0]), int(ends.max()))
        want = T._first_per_target((a, k), T._hit_of(starts, ends, hull))
        assert T._small_firsts(found, starts.tolist(), ends.tolist()) == want


def _memory(seed, open_scans):
    mem = GuestMemory()
    mem.open_scans = open_scans
    r = np.random.default_rng(seed)
    bases = [mem.alloc(int(r.integers(16, 600)), name=f"b{i}") for i in range(7)]
    for b in bases:
        a = mem.find(b)
        mem.write(b, _words(r, a.size // 4, bases).tobytes())
    return mem, bases


def test_open_scans_memory_traces_the_uncached_windows_and_again_after_a_change(calls):
    traces = calls(T, "_trace")
    rng = np.random.default_rng(13)
    for trial in range(30):
        kept, bases = _memory(trial, True)
        plain, _ = _memory(trial, False)
        root = int(rng.choice(bases))
        cfg = one_wave_config([root & 0xFFFFFFFF, (root >> 32) & 0xFFFF])
        for depth in (None, T.SHALLOW_DEPTH):
            first_only = None  # (the last change: in the first head scanned, and the windows before it)
            for step in range(4):
                want = T.trace_uncached(plain, cfg, depth=depth)
                scanned: list = []  # (the heads this trace scans)
                T._trace(plain, cfg, T.trace_key(cfg)[1], scanned, depth)
                n = len(traces)
                assert T.trace(kept, cfg, depth=depth) == want
                again = len(traces)
                assert T.trace(kept, cfg, depth=depth) == want
                assert len(traces) == again  # (nothing changed: the cached windows)
                # traced again every step: the first at this depth, then after one byte of a head
                # each kept trace scanned changed (below: never back to bytes a trace saw) --
                # but for a change in the first head scanned that leaves the uncached windows
                # (their reasons: each pointer's value and word) as they were: that head is
                # read through its scan's result when it is at most VARIANT_HEAD bytes (decision
                # 0045, amendment h107)
                kept_trace = first_only is not None and first_only == want
                assert again == n + (0 if kept_trace else 1)
                # one byte of a head this trace scanned (the root's or, deeper, another's)
                # changed on both, by a bit of its own each step
                b = int(rng.choice([s[0].base for s in scanned])) if depth is None else root
                assert b in {s[0].base for s in scanned}
                head = scanned[0][0]
                first_only = want if b == head.base and head.size // 4 * 4 <= T.VARIANT_HEAD else None
                at = b + int(rng.integers(0, 16))
                v = bytes([plain.read(at, 1)[0] ^ (1 << step)])
                kept.write(at, v)
                plain.write(at, v)
        assert not kept.pointer_scans


def test_open_scans_memory_keeps_a_trace_per_first_head(calls):
    """A kernarg segment that holds other pointers on each dispatch (a kernel run over several
    buffer pairs in turn): one trace per set of bytes, each taken again while its bytes are the
    same, and the windows those bytes reach each time."""
    traces = calls(T, "_trace")
    mem = GuestMemory()
    mem.open_scans = True
    args = mem.alloc(64, name="kernargs")
    bufs = [mem.alloc(256, name=f"b{i}") for i in range(6)]
    cfg = one_wave_config([args & 0xFFFFFFFF, args >> 32])
    pairs = [(bufs[i], bufs[i + 1]) for i in range(5)]
    traced = 0
    for _ in range(3):
        for a, b in pairs:
            mem.write(args, np.array([a, b], np.uint64).tobytes())
            n = len(traces)
            got = T.trace(mem, cfg, depth=T.SHALLOW_DEPTH)
            traced += len(traces) - n
            assert [w.address for w in got] == sorted([args, a, b])
            assert got == T.trace_uncached(mem, cfg, depth=T.SHALLOW_DEPTH)
        assert traced == len(pairs)  # (traced in the first round only)
    n = len(traces)
    # a byte of a kept variant's head changed: traced again, the new windows
    mem.write(args, np.array([bufs[0], bufs[5]], np.uint64).tobytes())
    assert [w.address for w in T.trace(mem, cfg, depth=T.SHALLOW_DEPTH)] == sorted([args, bufs[0], bufs[5]])
    assert len(traces) == n + 1
    # a new allocation (another table): traced again
    mem.alloc(64, name="late")
    T.trace(mem, cfg, depth=T.SHALLOW_DEPTH)
    assert len(traces) == n + 2
    # (the variants in a store of their own: trace_cache's entries keep the one shape, (generation,
    # scanned heads, windows), that execute._keep_again reads)
    assert not mem.trace_cache
    ((gen, first, variants, _opened, _heads),) = mem.trace_variants.values()
    assert gen == mem.generation and first.base == args and len(variants) == 1


def test_trace_cache_and_variants_keep_their_own_shapes():
    """A memory that traces both ways over its life (open_scans switched on after plain traces)
    keeps each kind in its own store: neither reads the other's entries."""
    mem, bases = _memory(3, False)
    cfg = one_wave_config([bases[0] & 0xFFFFFFFF, (bases[0] >> 32) & 0xFFFF])
    want = T.trace_uncached(mem, cfg)
    assert T.trace(mem, cfg) == want
    assert len(mem.trace_cache) == 1 and not mem.trace_variants
    mem.open_scans = True
    assert T.trace(mem, cfg) == want
    assert T.trace(mem, cfg) == want
    (entry,) = mem.trace_cache.values()
    assert len(entry) == 3 and entry[2] == tuple(want)
    ((gen, first, variants, _opened, _heads),) = mem.trace_variants.values()
    assert isinstance(variants, dict) and first.base == bases[0]


def test_open_scans_memory_keeps_a_trace_over_new_scalar_arguments(calls):
    """A kernel dispatched again with the same buffers and new scalar arguments (a sort's stage
    numbers in its kernarg segment): the kept trace is taken (its first head scans to the same
    pointers), with the windows trace_uncached gives; a scalar that now looks like a pointer
    into another allocation traces again and reaches it (decision 0045, amendment h107)."""
    traces = calls(T, "_trace")
    mem = GuestMemory()
    mem.open_scans = True
    args = mem.alloc(64, name="kernargs")
    bufs = [mem.alloc(256, name=f"b{i}") for i in range(3)]
    cfg = one_wave_config([args & 0xFFFFFFFF, args >> 32])
    traced = 0
    for stage in range(6):
        mem.write(
            args, np.array([bufs[0], bufs[1], stage | (7 - stage) << 32, 1 << stage], np.uint64).tobytes()
        )
        n = len(traces)
        got = T.trace(mem, cfg, depth=T.SHALLOW_DEPTH)
        traced += len(traces) - n
        assert got == T.trace_uncached(mem, cfg, depth=T.SHALLOW_DEPTH)
        assert [w.address for w in got] == sorted([args, bufs[0], bufs[1]])
    assert traced == 1
    # the scalar word now bufs[2]'s address: traced again, and bufs[2] is a window
    mem.write(args + 16, np.array([bufs[2]], np.uint64).tobytes())
    n = len(traces)
    got = T.trace(mem, cfg, depth=T.SHALLOW_DEPTH)
    assert len(traces) == n + 1 and got == T.trace_uncached(mem, cfg, depth=T.SHALLOW_DEPTH)
    assert [w.address for w in got] == sorted([args, *bufs])


def test_a_new_key_scans_its_first_head_once(calls):
    """The first trace of a key on an open_scans memory (the hook's memory over new buffers)
    indexes its variants by the first scan _trace made, not by a second scan of the same head
    (decision 0035, amendment h117): every scanned head scanned once; the index is that scan's
    result (a later trace with new scalar words beside the same pointers takes the kept trace)."""
    scan_calls = calls(T, "_scan_open")  # (memory, allocation, ...)
    mem = GuestMemory()
    mem.open_scans = True
    args = mem.alloc(64, name="kernargs")
    bufs = [mem.alloc(256, name=f"b{i}") for i in range(2)]
    cfg = one_wave_config([args & 0xFFFFFFFF, args >> 32])
    mem.write(args, np.array([bufs[0], bufs[1], 5, 6], np.uint64).tobytes())
    got = T.trace(mem, cfg)  # (to MAX_DEPTH: the buffers' heads scanned too)
    scans = [a.base for _, a, *_ in scan_calls]
    assert sorted(scans) == sorted(set(scans)) and args in scans
    assert got == T.trace_uncached(mem, cfg)
    entry = mem.trace_variants[next(iter(mem.trace_variants))]
    assert list(entry[2]) == [T._first_index(mem, mem.find(args), entry[3])]
    mem.write(args + 16, np.array([7, 8], np.uint64).tobytes())
    traces = calls(T, "_trace")
    again = T.trace(mem, cfg)
    assert not traces and again == T.trace_uncached(mem, cfg)
