"""Shared by the A/B tools (ab_exec.py, fixture_digests.py): the environment that puts one tree's
wavelift on one NumPy tier.  Both spellings of each knob are set: trees from before the redesign
read WL_ names, later ones WAVELIFT_ (wavelift/settings.py)."""

from __future__ import annotations

from collections.abc import MutableMapping


def set_tier(env: MutableMapping[str, str], tier: str, **knobs: str) -> None:
    """``tier``: "native" (the native tier for every dispatch it takes) or "blocks" (NumPy blocks
    only); ``knobs``: further settings by their name after the prefix (NATIVE_CACHE="/tmp/x")."""
    for prefix in ("WAVELIFT_", "WL_"):
        env[prefix + "NATIVE"] = "on" if tier == "native" else "off"
        for name, value in knobs.items():
            env[prefix + name] = value
