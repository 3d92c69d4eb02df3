"""Scratch (private segment) storage: module-private, one array per wave, never a window.

Addresses are wave-relative byte addresses in the hardware's interleaved layout
(``(o/4)*4*W + 4*L + o%4`` for per-lane offset ``o``).  Wave mode holds the wave's scratch word
for word; lane mode holds the same words but a lane may reach only words whose lane bits name
it ((addr/4) % W == L) — another lane's word is unreachable, and trying is an escape.
Which accesses are scratch, and the refusals, are decided in frontend/scratch.py
(docs/decisions/0008-scratch.md); addresses arrive as u64 so a wild offset never wraps.
"""

from __future__ import annotations

import numpy as np

from ...memory.guest import holds


class ScratchStore:
    def __init__(self, waves: int, wave_bytes: int, mode: str, wave_size: int):
        self.wave_bytes = int(wave_bytes)
        self.mode = mode
        self.W = wave_size
        self.waves = waves
        self.arena = np.zeros(waves * self.wave_bytes + 8, np.uint8)

    def resolve(self, w, addr, nbytes, lane):
        """-> (arena index, ok); ok None: every address is fine.  In wave mode that is decided
        from min/max and one OR (dword alignment) for the sizes whose rule is just alignment."""
        a = np.asarray(addr, np.int64)
        wi = np.arange(self.waves, dtype=np.int64)[w]
        if (
            self.mode == "wave"
            and nbytes in (1, 4, 8, 12, 16)
            and a.size
            and holds(int(a.min()), nbytes, self.wave_bytes)
            and holds(int(a.max()), nbytes, self.wave_bytes)
            and (nbytes == 1 or not int(np.bitwise_or.reduce(a, axis=None)) & 3)
        ):
            return wi[:, None] * self.wave_bytes + a, None
        ok = holds(a, nbytes, self.wave_bytes) & ((a & 3) + nbytes <= 4 if nbytes <= 4 else (a & 3) == 0)
        if self.mode == "lane":
            ok &= ((a >> 2) % self.W) == lane
        idx = np.where(ok, wi[:, None] * self.wave_bytes + a, 0)
        return idx, ok
