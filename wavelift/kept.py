"""The one eviction rule of wavelift's process caches that are kept in insertion order."""

from __future__ import annotations


def keep(store: dict, key, value, limit: int):
    """``value`` kept in ``store`` at ``key`` as its newest entry (a replaced one too), the
    entries put in first dropped while more than ``limit`` are kept; -> value.  A hit (a plain
    ``store.get``) refreshes nothing: it stays one dict lookup on the warm paths."""
    store.pop(key, None)
    store[key] = value
    while len(store) > limit:
        del store[next(iter(store))]
    return value
