"""GuestMemory.add_many: the memory one add() per item gives -- the same allocations (the very
arrays), table, generation and index log -- and, where an item is refused, the same error with
the items before it added (decision 0045, amendment h93)."""

from __future__ import annotations

import random
import zlib

import numpy as np
import pytest

from wavelift.memory.guest import HIGH_HALF, LOW_HALF_END, MASK48, GuestMemory, GuestMemoryError


def _state(mem: GuestMemory):
    log = mem._index_log
    return (
        [(a.base, a.size, a.name, id(a._data), a.shared, a.resident) for a in mem.allocations],
        list(mem._bases),
        mem.generation,
        None if log is None else [(a.base, a.size, a.name) for a in log],
        [(int(x[0]), int(x[1])) for x in zip(*mem.address_index()[:2])],
        mem.address_index()[2],
    )


def _both(items, shared=True):
    """(state or error text) of one add() per item and of add_many, on fresh memories."""
    out = []
    for many in (False, True):
        mem = GuestMemory()
        err = None
        try:
            if many:
                mem.add_many(items, shared=shared)
            else:
                for base, array, name in items:
                    mem.add(base, array, name, shared=shared)
        except GuestMemoryError as e:
            err = str(e)
        out.append((err, _state(mem)))
    return out


def _spans(rng: random.Random, n: int, base: int) -> list[tuple[int, np.ndarray, str]]:
    items = []
    at = base
    for i in range(n):
        at += rng.choice([0, 0, 1, 4096, 1 << 20])
        size = rng.choice([1, 7, 64, 4096, 100_000])
        items.append((at, np.zeros(size, np.uint8), f"host {i}"))
        at += size
    return items


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("n", [1, 5, 43, 64, 65, 130])
def test_same_memory_as_one_add_per_item(seed, n, calls):
    rng = random.Random(seed * 1000 + n)
    base = rng.choice([0x1000, 0x7F00_0000_0000, 0x5555_0000_0000, HIGH_HALF + 0x1000])
    items = _spans(rng, n, base)
    rng.shuffle(items)  # (any order: add() sorts by base too)
    shared = rng.random() < 0.5
    checks = calls(GuestMemory, "_check_overlap")
    a, b = _both(items, shared=shared)
    assert a[0] is None and a == b
    assert len(checks) == n  # (the one-add() side only: add_many took its one pass)


@pytest.mark.parametrize(
    "bad",
    [
        "overlap",
        "same_base",
        "size0",
        "not_canonical",
        "crosses_hole",
        "negative",
        "dtype",
        "readonly",
        "2d",
        "list",
    ],
)
@pytest.mark.parametrize("where", [0, 3, 9])
def test_refused_item_same_error_and_state(bad, where):
    rng = random.Random(zlib.crc32(f"{bad} {where}".encode()))  # (not hash(): salted per process)
    items = _spans(rng, 10, 0x10_0000)
    base, arr, name = items[where]
    if bad == "overlap":
        other = items[(where + 1) % 10]
        base = other[0] + (len(other[1]) - 1) // 2  # (inside it, whatever its size: 1 too)
    elif bad == "same_base":
        base = items[(where + 5) % 10][0]
    elif bad == "size0":
        arr = np.zeros(0, np.uint8)
    elif bad == "not_canonical":
        base = 1 << 50
    elif bad == "crosses_hole":
        base, arr = LOW_HALF_END - 16, np.zeros(64, np.uint8)
    elif bad == "negative":
        base = -4096
    elif bad == "dtype":
        arr = np.zeros(8, np.uint16)
    elif bad == "readonly":
        arr = np.zeros(8, np.uint8)
        arr.flags.writeable = False
    elif bad == "2d":
        arr = np.zeros((2, 4), np.uint8)
    else:
        arr = [0] * 8
    items[where] = (base, arr, name)
    a, b = _both(items)
    assert a[0] is not None and a == b


def test_48_bit_form_of_a_high_address_is_sign_extended():
    items = [((HIGH_HALF + 0x2000) & MASK48, np.zeros(16, np.uint8), "high")]
    a, b = _both(items)
    assert a[0] is None and a == b
    assert a[1][0][0][0] == HIGH_HALF + 0x2000


def test_memory_not_empty_goes_one_by_one():
    items = _spans(random.Random(1), 6, 0x20_0000)
    inside, first = np.zeros(4, np.uint8), np.zeros(4096, np.uint8)
    states = []
    for many in (False, True):
        mem = GuestMemory()
        mem.add(1 << 32, first, "first")
        mem.add(items[2][0] + 1, inside, "inside")  # overlaps item 2
        err = None
        try:
            if many:
                mem.add_many(items)
            else:
                for it in items:
                    mem.add(*it)
        except GuestMemoryError as e:
            err = str(e)
        states.append((err, _state(mem)))
    assert states[0][0] is not None and states[0] == states[1]
