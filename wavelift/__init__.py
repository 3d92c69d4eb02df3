"""wavelift: carry out AMD RDNA compute dispatches without an AMD GPU."""

from __future__ import annotations

# The one place the version is written: pyproject.toml reads it (tool.setuptools.dynamic).
__version__ = "0.1.0"

_LAZY = {  # name: (module, attribute); lazy, so `python -m wavelift.errors` runs a fresh module
    "Refusal": ("wavelift.errors", "Refusal"),
    "Refused": ("wavelift.errors", "Refused"),
    "Device": ("wavelift.driver.device", "Device"),
    "Capture": ("wavelift.memory.capture", "Capture"),
    "replay": ("wavelift.run.replay", "replay"),
    "pm4": ("wavelift.stream.pm4", None),
    "DispatchResult": ("wavelift.run.result", "DispatchResult"),
}


def __getattr__(name):  # lazy: `import wavelift` stays cheap and free of optional deps
    if name in _LAZY:
        import importlib

        mod, attr = _LAZY[name]
        m = importlib.import_module(mod)
        value = m if attr is None else getattr(m, attr)
        globals()[name] = value
        return value
    raise AttributeError(name)


__all__ = ["Device", "Capture", "replay", "pm4", "Refusal", "Refused", "DispatchResult"]
