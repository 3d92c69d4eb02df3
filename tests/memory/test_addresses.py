"""Addresses as the hardware has them (docs/decisions/0014-addresses.md): allocations stay inside
one canonical half and never touch the top of the 64-bit space; a program's address reaches a
window only when it is canonical and every byte of the access lies in the window, tested so
that no term wraps (WindowSet.resolve against exact integer arithmetic)."""

import numpy as np
import pytest

from wavelift.memory.guest import GuestMemory, GuestMemoryError, holds, is_canonical
from wavelift.run.result import Window
from wavelift.trace.windows import WindowSet

TOP = 1 << 64


@pytest.mark.parametrize(
    "address, size",
    [
        (0xFFFF_FFFF_FFFF_F000, 0x1000),  # ends at 2^64 (every window of it would end there)
        (0xFFFF_FFFF_F000, 0x1000),  # the same in its 48-bit form
        (0xFFFF_FFFF_FFFF_FF00, 0x100),
        (0x7FFF_FFFF_F000, 0x2000),  # crosses the canonical hole
        (0x0001_0000_0000_0000, 0x100),  # a 64-bit address that is not canonical
        (0x8000_0000_0000_0000, 0x100),
        (TOP, 0x100),
    ],
)
def test_allocations_that_wrap_touch_the_top_or_are_not_canonical_are_refused(address, size):
    m = GuestMemory()
    with pytest.raises(GuestMemoryError):
        m.alloc(size, name="x", address=address)
    with pytest.raises(GuestMemoryError):
        m.add(address, np.zeros(size, np.uint8), name="x")
    assert len(m) == 0


def test_allocations_up_to_the_edges_are_taken():
    m = GuestMemory()
    assert m.alloc(0x1000, name="zero", address=0) == 0
    assert m.alloc(0x1000, name="hole", address=0x7FFF_FFFF_F000) == 0x7FFF_FFFF_F000
    top = m.alloc(0xF00, name="top", address=0xFFFF_FFFF_FFFF_F000)  # ends at 2^64 - 0x100
    assert top == 0xFFFF_FFFF_FFFF_F000
    assert m.alloc(0x100, name="upper", address=0x8000_0000_0000) == 0xFFFF_8000_0000_0000


def test_is_canonical_and_holds_at_the_edges():
    assert is_canonical(0) and is_canonical(0x7FFF_FFFF_FFFF) and is_canonical(TOP - 1)
    assert is_canonical(0xFFFF_8000_0000_0000)
    assert not is_canonical(0x8000_0000_0000) and not is_canonical(0xFFFF_7FFF_FFFF_FFFF)
    assert not is_canonical(0x0001_0000_0000_0000) and not is_canonical(TOP)
    assert holds(0, 4, 4) and holds(12, 4, 16) and not holds(13, 4, 16)
    assert not holds(0, 5, 4) and not holds(-1, 1, 16) and not holds(16, 0, 16)
    # arrays: uint64 offsets that are wrapped differences, int64 ones that are negative
    d = np.array([0, 12, 13, (1 << 64) - 4, (1 << 63)], np.uint64)
    assert holds(d, np.uint64(4), np.uint64(16)).tolist() == [True, True, False, False, False]
    d = np.array([0, 12, -4, -(1 << 63), (1 << 63) - 1], np.int64)
    assert holds(d, 4, 16).tolist() == [True, True, False, False, False]


def _reference(windows, a, n):
    if not is_canonical(a):
        return None
    for w in windows:
        if w.address <= a and a + n <= w.address + w.size:
            return w
    return None


def test_resolve_is_exact_near_the_top_of_the_space_and_off_canonical():
    """Windows at 0, below the hole and at the top of the upper half: each address is inside
    exactly when exact arithmetic says so (the uint64 sum a + n wrapped past 2^64 onto the
    window at 0: an IndexError or a silent store at the wrong place)."""
    m = GuestMemory()
    ws = []
    for base, size in (
        (0, 0x40),
        (0x7FFF_FFFF_FFC0, 0x40),
        (0xFFFF_8000_0000_0000, 0x40),
        (0xFFFF_FFFF_FFFF_FF00, 0xC0),
    ):
        m.alloc(size, address=base, name=hex(base), align=64, data=np.arange(size, dtype=np.uint8))
        ws.append(Window(base, size, hex(base), "test"))
    win = WindowSet(ws, m)
    try:
        edges = []
        for w in ws:
            for e in (w.address, w.address + w.size):
                edges += [(e + k) % TOP for k in range(-20, 21)]
        edges += [(1 << 48) + k for k in range(-8, 8)] + [(0x0001 << 48) | 0x10, 0x8000_0000_0010]
        rng = np.random.default_rng(7)
        edges += [int(x) for x in rng.integers(0, 1 << 63, 64, dtype=np.uint64) * 2]
        for n in (1, 2, 4, 8, 12, 16, 32, 64):
            a = np.array(edges, np.uint64)
            idx, ok = win.resolve(a, n)
            ok = np.ones(a.shape, bool) if ok is None else ok
            for i, x in enumerate(edges):
                w = _reference(ws, x, n)
                assert bool(ok[i]) == (w is not None), (hex(x), n)
                if w is not None:
                    assert 0 <= idx[i] and idx[i] + n <= win.arena.size
                    assert win.arena[idx[i]] == (x - w.address) & 0xFF, (hex(x), n)
    finally:
        win.release()
