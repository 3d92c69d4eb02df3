

def cache_dir(kind: str, env: str):
    """Disk cache of compiled modules: $<env>, else $XDG_CACHE_HOME or ~/.cache, /wavelift/<kind>."""
    import os
    import pathlib
    d = os.environ.get(env)
    if d:
        return pathlib.Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "wavelift" / kind
