"""Kernel.prepare's launch key: the grid arguments' inline key (_grid_key) is exactly the key
_value_key gives, for the common elements and for every other kind (issue 24, decision 0029)."""

from __future__ import annotations

import numpy as np

from wavelift.driver.device import _NO_KEY, _grid_key, _value_key
from wavelift.driver.launch import Buffer


def _element(rng):
    k = int(rng.integers(0, 10))
    if k == 0:
        return None
    if k == 1:
        return int(rng.integers(-5, 1 << 40))
    if k == 2:
        return tuple(int(x) for x in rng.integers(0, 9, int(rng.integers(0, 4))))
    if k == 3:
        return bool(rng.integers(0, 2))
    if k == 4:
        return float(rng.choice([0.0, -0.0, 1.5]))
    if k == 5:
        return np.uint32(rng.integers(0, 9))
    if k == 6:
        return (1, True, 2)  # (a bool inside: _value_key's (bool, True), not (int, 1))
    if k == 7:
        return [1, 2, 3]
    if k == 8:
        return Buffer(int(rng.integers(0, 1 << 20)), 4, None, (), "")
    return object()  # (no key)


def test_grid_key_is_value_key():
    rng = np.random.default_rng(24)
    for _ in range(3000):
        v = tuple(_element(rng) for _ in range(int(rng.integers(0, 8))))
        want = _value_key(v)
        got = _grid_key(v)
        assert got == want, v
        assert (got is _NO_KEY) == (want is _NO_KEY)
    # the values that keyed alike under == must not: 1 and True, 1 and 1.0, -0.0 and 0.0
    assert _grid_key((1, None)) != _grid_key((True, None))
    assert _grid_key(((1, 1, 1),)) != _grid_key(((True, 1, 1),))
    assert _grid_key((1,)) != _grid_key((1.0,))
