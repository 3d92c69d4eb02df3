"""A mip chain's texels placed where a tiled surface's layout (memory/layout.py, equal to
addrlib's: tests/memory) puts them, for tests that upload images in a driver's layout."""

from __future__ import annotations

import numpy as np

from wavelift.memory import layout as L


def tiled_levels(chip: L.Chip, surf: L.Surface, tex, bpp: int) -> np.ndarray:
    """The surface's bytes (and 64 KiB beyond, for base alignment slack): level m's texels
    tex[m] (slices, height, width, channels; bpp bytes a texel) at layout.address."""
    info = L.surface_info(surf, chip)
    mem = np.zeros(info.slice_size * info.slices + 65536, np.uint8)
    for m, t in enumerate(tex):
        sl, h, w, _ = t.shape
        z, y, x = np.meshgrid(np.arange(sl), np.arange(h), np.arange(w), indexing="ij")
        offs = L.address(chip, surf, x.ravel(), y.ravel(), z.ravel(), m).astype(np.int64)
        mem[offs[:, None] + np.arange(bpp)] = t.reshape(-1).view(np.uint8).reshape(-1, bpp)
    return mem
