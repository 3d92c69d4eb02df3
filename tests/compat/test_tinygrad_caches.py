"""The tinygrad hook's caches (wavelift/compat/tinygrad.py): each a _Bounded store filled
through _keep, the one eviction rule -- past its named bound, the entry put in first is dropped
and the rest kept; a hit refreshes nothing; a replaced entry is the newest."""

from __future__ import annotations

from wavelift.compat import tinygrad as tg


def test_a_full_cache_drops_its_oldest_entry_and_keeps_the_rest():
    store = tg._Bounded(3)
    for key in "abc":
        assert tg._keep(store, key, key.upper()) == key.upper()
    assert store.get("a") == "A"  # (a hit: not made newer)
    tg._keep(store, "d", "D")
    assert list(store.items()) == [("b", "B"), ("c", "C"), ("d", "D")]
    tg._keep(store, "b", "B2")  # (replaced: now the newest)
    tg._keep(store, "e", "E")
    assert list(store.items()) == [("d", "D"), ("b", "B2"), ("e", "E")]


def test_every_cache_is_bounded_by_its_named_limit():
    """Each module-level dict of the hook is a _Bounded with its named bound (one style: no
    cache cleared when full beside others dropping their oldest)."""
    limits = {
        "_CONFIGS": tg.CONFIG_LIMIT,
        "_CONFIG_SHAPES": tg.CONFIG_LIMIT,
        "_SPAN_ITEMS": tg.SPAN_LIMIT,
        "_PLANS": tg.PLAN_LIMIT,
        "_MEMORIES": tg.MEMORY_LIMIT,
        "_CODE": tg.CODE_LIMIT,
        "_DESCRIPTORS": tg.PLAN_LIMIT,
        "_SPANS": tg.PLAN_LIMIT,
        "_CUTS": tg.PLAN_LIMIT,
    }
    caches = {name: v for name, v in vars(tg).items() if name[:1] == "_" != name[1:2] and isinstance(v, dict)}
    assert set(caches) == set(limits)
    for name, store in caches.items():
        assert type(store) is tg._Bounded and store.limit == limits[name], name


def test_a_full_config_cache_keeps_its_newer_configs(monkeypatch):
    """_config past the bound drops only the oldest config (before: the whole cache was
    cleared when full), and the kept ones are answered again."""
    monkeypatch.setattr(tg._CONFIGS, "limit", 2)
    tg._CONFIGS.clear()
    tg._CONFIG_SHAPES.clear()
    made = []
    for user in ((1, 2), (3, 4), (5, 6)):
        config = tg._config("gfx1100", 0x10000, (1, 1, 1), (32, 1, 1), tg.DEFAULT_RSRC1, 4, 0, 0, 32, user)
        assert config.user_sgprs == user
        made.append(config)
    assert [key[-1] for key in tg._CONFIGS] == [(3, 4), (5, 6)]
    assert len(tg._CONFIG_SHAPES) == 1
    again = tg._config("gfx1100", 0x10000, (1, 1, 1), (32, 1, 1), tg.DEFAULT_RSRC1, 4, 0, 0, 32, (5, 6))
    assert again is made[2]
    tg._CONFIGS.clear()
