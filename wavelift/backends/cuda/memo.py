"""Per-dispatch numbers the CUDA backend works out from a dispatch's config alone, kept for the
next dispatch whose config has equal fields (a launch repeated: a new config object, the same
values; decision 0029)."""

from __future__ import annotations

_BY_CONFIG: dict = {}
BY_CONFIG = 256


def config_key(config) -> tuple:
    """Every field of a DispatchConfig as a hashable tuple (its system SGPR dict as items): equal
    exactly when the configs are."""
    return tuple(
        tuple(sorted(v.items())) if isinstance(v, dict) else tuple(v) if isinstance(v, list) else v
        for v in vars(config).values()
    )


def by_config(what: str, config, make, *extra):
    """``make(config, *extra)``, kept per (what, config's fields, extra): the caller must not
    change what it gets."""
    key = (what, config_key(config)) + extra
    try:
        hit = _BY_CONFIG.get(key)
    except TypeError:  # (a field that cannot be hashed: worked out, not kept)
        return make(config, *extra)
    if hit is None:
        hit = _BY_CONFIG[key] = make(config, *extra)
        while len(_BY_CONFIG) > BY_CONFIG:
            del _BY_CONFIG[next(iter(_BY_CONFIG))]
    return hit
