"""Kernel.prepare's launch key: the grid arguments' inline key (_grid_key) is exactly the key
_value_key gives, for the common elements and for every other kind; the kept launch's check
(_same_key, _same_launch) says "the same" exactly where the keys are equal, field by field
(issue 24, decision 0029)."""

from __future__ import annotations

import inspect
import struct

import numpy as np

from wavelift.driver.device import (
    _NO_KEY,
    _PARTS,
    Kernel,
    _fixed,
    _grid_key,
    _grid_of,
    _launch_key,
    _same_key,
    _same_launch,
    _seen,
    _value_key,
)
from wavelift.driver.hsa import Local
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


def _small(rng, k: int):
    """A launch value of kind ``k`` from a small domain, so that equal keys in different objects
    are common."""
    i = int(rng.integers(0, 3))
    if k == 0:
        return None
    if k == 1:
        return i
    if k == 2:
        return bool(i & 1)
    if k == 3:
        nan2 = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]  # (another NaN: other bits)
        return [0.0, -0.0, float(i), float("nan"), nan2][int(rng.integers(0, 5))]
    if k == 4:
        return np.uint32(i)
    if k == 5:
        return np.int32(i)
    if k == 6:
        return [np.float32(0.0), np.float32(-0.0), np.bool_(True)][i]
    if k == 7:
        return Buffer(0x1000 * i, 4 << i, None, (), "")  # (the same address, another size: the same key)
    if k == 8:
        return tuple(int(x) for x in rng.integers(0, 2, i + 1))
    if k == 9:
        return (1, True, 2)[: i + 1]  # (a bool inside: not a tuple of ints)
    if k == 10:
        return [i]  # (a list: its contents may change -- not of fixed value)
    if k == 11:
        return Local(16 << i)
    return np.zeros(i)


def test_the_fast_check_says_the_same_exactly_where_the_keys_are_equal():
    """_same_key (the kept launch's check, no key made) is _value_key's equality for every
    value of fixed value (_fixed), and _fixed holds exactly where the key is one of _PARTS'
    types' (never for a list, an array, a Local, anything without a key)."""
    rng = np.random.default_rng(151)
    same = differ = 0
    for _ in range(6000):
        k = int(rng.integers(0, 13))
        y = _small(rng, k)
        x = _small(rng, k if rng.integers(0, 2) else int(rng.integers(0, 13)))
        for v in (x, y):
            if _fixed(v):
                assert _value_key(v) is not _NO_KEY and type(v) in _PARTS, v
            else:
                assert type(v) in (list, Local, np.ndarray) or (
                    type(v) is tuple and not all(type(e) is int for e in v)
                ), v
        if not _fixed(y):
            continue
        want = _value_key(x) == _value_key(y)
        assert _same_key(x, y) == want, (x, y)
        same += want
        differ += not want
    assert same > 500 and differ > 500  # (both answers asked often)


def test_every_launch_field_decides_the_key_and_the_fast_check():
    """Each of the launch's fields -- Kernel.launch's parameters and the queue's address, in
    `_grid_of`'s order, and each kernel argument -- replaced by a value of another key makes
    both the key (`_launch_key`) and the kept launch's check (`_same_launch`) say "another
    launch"; replaced by another object of the same key, both say "the same"."""
    params = [p for p in inspect.signature(Kernel.launch).parameters if p not in ("self", "args")]
    assert list(inspect.signature(_grid_of).parameters) == params + ["queue"]  # (a new field: here)
    base = dict(
        groups=(2, 1, 1),
        block=(64, 1, 1),
        global_size=None,
        global_offset=(0, 0, 0),
        dims=3,
        dynamic_stack=None,
        queue=0x9000,
    )
    # (another key; another object of the same key) for each field
    other = dict(
        groups=[((3, 1, 1), tuple([2, 1, 1])), ((2, 1), tuple([2, 1, 1]))],
        block=[((32, 1, 1), tuple([64, 1, 1]))],
        global_size=[((128, 1, 1), None)],
        global_offset=[((64, 0, 0), tuple([0, 0, 0])), ((0.0, 0, 0), None)],
        dims=[(2, 3), (True, None), (np.uint32(3), None)],
        dynamic_stack=[(1024, None)],
        queue=[(0xA000, int("9000", 16))],
    )
    assert set(other) == set(base)
    args = [Buffer(0x1000, 64, None, (), ""), Buffer(0x2000, 64, None, (), ""), np.uint32(16), 7, 1.5]
    other_args = [
        (Buffer(0x3000, 64, None, (), ""), Buffer(0x1000, 8, None, (), "")),
        (Buffer(0x1000, 64, None, (), ""), Buffer(0x2000, 64, None, (), "")),
        (np.int32(16), np.uint32(16)),
        (8, int("7")),
        (-1.5, float("1.5")),
    ]
    grid = _grid_of(**base)
    key, seen = _launch_key(grid, args), _seen(grid, args)
    assert key is not None and seen is not None
    for name, pairs in other.items():
        for changed, alike in pairs:
            g = _grid_of(**(base | {name: changed}))
            assert _launch_key(g, args) != key and not _same_launch(seen, g, args), (name, changed)
            if alike is not None:
                g = _grid_of(**(base | {name: alike}))
                assert _launch_key(g, args) == key and _same_launch(seen, g, args), (name, alike)
    for i, (changed, alike) in enumerate(other_args):
        a = args[:i] + [changed] + args[i + 1 :]
        assert _launch_key(grid, a) != key and not _same_launch(seen, grid, a), (i, changed)
        a = args[:i] + [alike] + args[i + 1 :]
        assert _launch_key(grid, a) == key and _same_launch(seen, grid, a), (i, alike)
    assert not _same_launch(seen, grid, args[:-1]) and not _same_launch(seen, grid, args + [0])
    assert _launch_key(grid, args[:-1]) != key
