"""wavelift/kept.py: the insertion-order caches' one eviction rule."""

from __future__ import annotations

from wavelift.kept import keep


def test_a_full_store_drops_its_oldest_entry_and_keeps_the_rest():
    store: dict = {}
    for key in "abc":
        assert keep(store, key, key.upper(), 3) == key.upper()
    assert store.get("a") == "A"  # (a hit: not made newer)
    keep(store, "d", "D", 3)
    assert list(store.items()) == [("b", "B"), ("c", "C"), ("d", "D")]
    keep(store, "b", "B2", 3)  # (replaced: now the newest)
    keep(store, "e", "E", 3)
    assert list(store.items()) == [("d", "D"), ("b", "B2"), ("e", "E")]
    keep(store, "f", "F", 1)  # (a smaller bound: all but the newest dropped)
    assert store == {"f": "F"}
