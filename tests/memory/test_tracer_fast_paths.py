"""The buffer tracer's fast paths (decision 0035) give exactly what their definitions give:
``_all_candidates32`` (tests on the 32-bit words) equals ``_all_candidates64`` (the words as
64-bit integers), and ``_first_per_target``'s per-allocation comparison (few allocations) equals
its binary search over the allocations (``_hit_test``), on random words and addresses built to
fall inside, beside and between allocations."""

from __future__ import annotations

import numpy as np
import pytest

from wavelift.trace import tracer as T


def _words(rng, n):
    pool = np.array([0, T.RADV_HI, 0x12345678, 0x55C6, 0x7F94, 0xFFFFFFFF, 0x80000000, 0xF0000000], np.uint32)
    rand = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    return np.where(rng.random(n) < 0.5, rng.choice(pool, n), rand).astype(np.uint32)


@pytest.mark.parametrize("low", [False, True])
def test_candidates_of_32_bit_words_equal_the_64_bit_definition(low):
    rng = np.random.default_rng(7)
    for n in list(range(0, 9)) + [int(x) for x in rng.integers(9, 3000, 60)]:
        u = _words(rng, n)
        a32, i32 = T._all_candidates32(u, low)
        a64, i64 = T._all_candidates64(u, low)
        assert a32.dtype == a64.dtype and i32.dtype == i64.dtype
        assert np.array_equal(a32, a64) and np.array_equal(i32, i64)
        assert [x.tolist() for x in T._all_candidates(u, low)] == [a64.tolist(), i64.tolist()]


class _Memory:
    def __init__(self, starts, sizes):
        self.starts = np.array(starts, np.uint64)
        self.ends = self.starts + np.array(sizes, np.uint64)

    def address_index(self):
        hull = (int(self.starts[0]), int(self.ends.max())) if self.starts.size else None
        return self.starts, self.ends, hull


def _searched(found, hit):
    """_first_per_target through the binary search alone (the hit test without its spans)."""

    def plain(c):
        return hit(c)

    return T._first_per_target(found, plain)


@pytest.mark.parametrize("count", [0, 1, 2, 5, T.FEW_ALLOCATIONS])
def test_first_candidate_per_allocation_by_comparison_equals_the_search(count):
    rng = np.random.default_rng(count)
    for _ in range(40):
        sizes = rng.integers(1, 1 << 16, count)
        gaps = rng.integers(0, 1 << 20, count)
        starts = np.cumsum(gaps + np.concatenate([[0], sizes[:-1]])) + 0x7F0000000000 if count else []
        mem = _Memory(starts, sizes)
        hit = T._hit_test(mem)
        assert hasattr(hit, "spans")
        pts = [rng.integers(0x7F0000000000 - 100, 0x7F0000000000 + (1 << 24), 300)]
        for s, n in zip(list(mem.starts), list(sizes)):
            pts.append(np.array([int(s) - 1, int(s), int(s) + int(n) - 1, int(s) + int(n)]))
        a = np.concatenate(pts).astype(np.uint64)
        rng.shuffle(a)
        k = np.arange(a.size, dtype=np.int64)
        fast = T._first_per_target((a, k), hit)
        assert fast == _searched((a, k), hit)
        assert all(type(x) is int for row in fast for x in row)
