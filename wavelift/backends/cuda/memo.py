"""Per-dispatch numbers the CUDA backend works out from a dispatch's config alone, kept for the
next dispatch whose config has equal fields (a launch repeated: a new config object, the same
values; decision 0029).  The config object last seen keeps its key and what was looked up for it
(a Device's repeated launch hands the same object again: no fields walked or hashed), checked
against a copy of its one mutable field (the system SGPR dict)."""

from __future__ import annotations

from ...kept import keep

_BY_CONFIG: dict = {}
BY_CONFIG = 256

# (config object, a copy of its system SGPR dict, its config_key, {(what, *extra): kept}) or None
_LAST: list = [None, None, None, None]


def config_key(config) -> tuple:
    """Every field of a DispatchConfig as a hashable tuple (its system SGPR dict as items): equal
    exactly when the configs are."""
    return tuple(
        tuple(sorted(v.items())) if isinstance(v, dict) else tuple(v) if isinstance(v, list) else v
        for v in vars(config).values()
    )


def key_of(config) -> tuple | None:
    """``config_key(config)``, kept for the config object last seen (while its system SGPR
    dict is the same: a repeated launch pays no walk of its fields), or None where a field
    cannot be hashed."""
    last = _LAST
    if last[0] is config and last[1] == getattr(config, "system_sgprs", None):
        return last[2]
    try:
        ck = config_key(config)
        hash(ck)
    except TypeError:
        return None
    sg = getattr(config, "system_sgprs", None)
    last[:] = [config, dict(sg) if isinstance(sg, dict) else sg, ck, {}]
    return ck


def by_config(what: str, config, make, *extra):
    """``make(config, *extra)``, kept per (what, config's fields, extra): the caller must not
    change what it gets."""
    ck = key_of(config)
    if ck is None:  # (a field that cannot be hashed: worked out, not kept)
        return make(config, *extra)
    near = _LAST[3]
    sub = (what,) + extra
    hit = near.get(sub)
    if hit is not None:
        return hit
    key = (what, ck) + extra
    try:
        hit = _BY_CONFIG.get(key)
    except TypeError:  # (an extra that cannot be hashed)
        return make(config, *extra)
    if hit is None:
        hit = keep(_BY_CONFIG, key, make(config, *extra), BY_CONFIG)
    if len(near) < 64:
        near[sub] = hit
    return hit
