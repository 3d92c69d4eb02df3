"""The tracer's scan keeps only the candidates that can be in an allocation (decision 0045):
``_reachable_candidates32`` gives, among the candidates the hit test accepts, exactly those of
``_all_candidates32`` (the same addresses and word indices in the same order), so each
allocation's first candidate (``_first_per_target``) is the same; on random words and on
allocations placed in one or many 4 GiB regions (two of them in one region with a gap: pairs are
kept by each run's own hull), in the RADV range, below 4 GiB, across a region boundary, and more
than REACH_RANGES runs apart (the hull alone).  A single-use memory (the
tinygrad hook's) traces the same windows as the same memory traced with the caches."""

from __future__ import annotations

import numpy as np
import pytest
from testpaths import one_wave_config

from wavelift.memory.guest import GuestMemory
from wavelift.trace import tracer as T


class _Memory:
    def __init__(self, starts, sizes):
        order = np.argsort(np.array(starts, np.uint64))
        self.starts = np.array(starts, np.uint64)[order]
        self.ends = self.starts + np.array(sizes, np.uint64)[order]

    def address_index(self):
        hull = (int(self.starts[0]), int(self.ends.max())) if self.starts.size else None
        return self.starts, self.ends, hull


PLACES = {
    "host": [0x55C600001000, 0x7F9400000000, 0xF00000000000],
    "radv": [0x800012340000, 0x7F9400000000],
    "low": [0x10000, 0x2000000, 0x7F9400000000],
    "across": [0x7F93FFFF8000, 0x7F9400400000],
    # two allocations in one region with a gap between them (a run's own hull holds the gap)
    "gap": [0x7F9400001000, 0x7F9400900000, 0x55C600001000],
    "many": [0x100000000 * k + 0x1000 for k in (1, 3, 5, 7, 9, 11)],
}


def _words(rng, n, starts):
    """Words from the allocations' addresses (as pairs, RADV words, T# words), neighbours and
    noise, so that every kind of candidate falls inside, beside and between allocations."""
    out = []
    for _ in range(n):
        s = int(rng.choice(starts)) + int(rng.integers(-64, 1 << 17))
        k = rng.integers(0, 6)
        if k == 0:
            out += [s & 0xFFFFFFFF, (s >> 32) | (int(rng.integers(0, 1 << 16)) << 16)]
        elif k == 1:
            out += [s & 0xFFFFFFFF, T.RADV_HI]
        elif k == 2:
            b = s >> 8
            out += [b & 0xFFFFFFFF, (b >> 32) & 0xFF, 0, 0x80000000 | int(rng.integers(0, 1 << 28)) << 3]
        elif k == 3:
            out.append(int(rng.integers(0, 1 << 32)))
        elif k == 4:
            out.append(int(rng.choice([0, 1, T.RADV_HI, 0xFFFFFFFF, 0x80000000])))
        else:
            out += [0, 0]
    return np.array(out, np.uint64).astype(np.uint32)


@pytest.mark.parametrize("place", sorted(PLACES))
@pytest.mark.parametrize("low", [False, True])
def test_reachable_candidates_keep_every_candidate_the_hit_test_accepts(place, low):
    rng = np.random.default_rng(len(place) * 2 + low)
    starts = PLACES[place]
    mem = _Memory(starts, [int(rng.integers(1, 1 << 16)) for _ in starts])
    hit = T._hit_test(mem)
    reach = T._reach(mem)
    assert (reach[2] is None) == (place == "many")
    for n in list(range(0, 6)) + [int(x) for x in rng.integers(6, 2000, 30)]:
        u = _words(rng, n, starts)[: max(n, 0) * 2]
        a, k = T._all_candidates32(u, low)
        a2, k2 = T._reachable_candidates32(u, low, reach)
        assert a2.dtype == a.dtype and k2.dtype == k.dtype
        keep, keep2 = hit(a) >= 0, hit(a2) >= 0
        assert np.array_equal(a[keep], a2[keep2]) and np.array_equal(k[keep], k2[keep2])
        assert T._first_per_target((a, k), hit) == T._first_per_target((a2, k2), hit)


def test_single_use_memory_traces_the_same_windows():
    rng = np.random.default_rng(3)
    for trial in range(20):  # (memories with the same allocations and bytes on both sides)

        def build(single):
            mem = GuestMemory()
            mem.single_use = single
            r = np.random.default_rng(trial)
            bases = [mem.alloc(int(r.integers(64, 4096)), name=f"b{i}") for i in range(5)]
            for b in bases:  # each buffer holds a few of the others' addresses (and noise)
                a = mem.find(b)
                words = r.integers(0, 1 << 32, a.size // 4, dtype=np.uint64).astype(np.uint32)
                for j in range(0, min(8, words.size - 1), 2):
                    if r.random() < 0.5:
                        p = int(r.choice(bases)) + int(r.integers(0, 64))
                        words[j], words[j + 1] = p & 0xFFFFFFFF, p >> 32
                mem.write(b, words.tobytes())
            return mem, bases

        mem, bases = build(False)
        one, _ = build(True)
        root = int(rng.choice(bases))
        cfg = one_wave_config([root & 0xFFFFFFFF, (root >> 32) & 0xFFFF])
        want = T.trace_uncached(mem, cfg)
        assert T.trace(mem, cfg) == want
        assert T.trace(one, cfg) == want
        assert not one.trace_cache and not one.pointer_scans


def test_a_chain_of_pointers_places_windows_to_max_depth_and_scans_no_deeper():
    """b0 -> b1 -> ... -> b5, a pointer at the head of each: windows b0..b{MAX_DEPTH} (depth 0 is
    the user SGPRs' target), and only the heads of depths below MAX_DEPTH are scanned (the
    pointers in the last depth's heads would go nowhere)."""
    mem = GuestMemory()
    bases = [mem.alloc(256, name=f"b{i}") for i in range(T.MAX_DEPTH + 3)]
    for a, b in zip(bases, bases[1:]):
        mem.write(a, np.array([b & 0xFFFFFFFF, b >> 32], np.uint32).tobytes())
    root = bases[0]
    cfg = one_wave_config([root & 0xFFFFFFFF, (root >> 32) & 0xFFFF])
    scanned: list = []
    got, _ = T._trace(mem, cfg, frozenset(), scanned)
    assert [w.address for w in got] == bases[: T.MAX_DEPTH + 1]
    assert [s[0].base for s in scanned] == bases[: T.MAX_DEPTH]
    assert T.trace(mem, cfg) == got == T.trace_uncached(mem, cfg)


@pytest.mark.parametrize("single", [False, True])
def test_never_windows_are_neither_windows_nor_reached_through(single):
    """An allocation in ``memory.never_windows`` (the tinygrad hook's copy of unaligned code) is
    never a window, though a scanned buffer points into it, and what only it points to is not
    reached; the rest is traced as without it."""

    def build(never):
        mem = GuestMemory()
        mem.single_use = single
        b0, b1, b2, b3 = (mem.alloc(256, name=f"b{i}") for i in range(4))
        for src, dst, at in ((b0, b1, 0), (b0, b2, 8), (b1, b3, 0)):
            mem.write(src + at, np.array([dst & 0xFFFFFFFF, dst >> 32], np.uint32).tobytes())
        if never:
            mem.never_windows = {b1}
        return mem, (b0, b1, b2, b3)

    for never in (False, True):
        mem, (b0, b1, b2, b3) = build(never)
        cfg = one_wave_config([b0 & 0xFFFFFFFF, (b0 >> 32) & 0xFFFF])
        got = {w.address for w in T.trace(mem, cfg)}
        assert got == ({b0, b2} if never else {b0, b1, b2, b3})
