"""Workgroup and work-item ids of 2-D and 3-D grids on GFX12 with clang-19's own reading of them
(tests/fixtures/gfx1200/ids.cl, built for gfx1200/gfx1201 x -O0/-O2 x wave32/wave64 by
`tools/build_fixtures.sh clang11x`, commands in tests/fixtures/build_log/clang-ids-gfx12.tsv):
x from TTMP9, y and z from TTMP7's halves (ids3d), y from the whole of TTMP7 when the kernel does
not use z (ids2d); against a NumPy reference of the same ids (decision 0027)."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import wavelift

ROOT = pathlib.Path(__file__).resolve().parents[2]
LOG = ROOT / "tests" / "fixtures" / "build_log" / "clang-ids-gfx12.tsv"
ROWS = [line.split("\t") for line in LOG.read_text().splitlines()]
# the default run takes the -O2 binaries; -O0 is marked slow
PARAMS = [
    pytest.param(r, id=pathlib.Path(r[1]).stem + "-" + r[3], marks=[pytest.mark.slow] if r[5] == "O0" else [])
    for r in ROWS
]
SHAPES = {"ids3d": ((8, 2, 2), (3, 2, 2)), "ids2d": ((8, 4, 1), (3, 5, 1))}


def _reference(block, groups):
    size = [b * g for b, g in zip(block, groups)]
    out = np.zeros((size[2], size[1], size[0], 2), np.uint32)
    z, y, x = np.meshgrid(*(np.arange(n, dtype=np.uint32) for n in size[::-1]), indexing="ij")
    bx, by, bz = (np.uint32(b) for b in block)
    out[..., 0] = (x // bx) | ((y // by) << 10) | ((z // bz) << 20)
    out[..., 1] = (x % bx) | ((y % by) << 10) | ((z % bz) << 20)
    return out.reshape(-1)


def test_every_binary_is_logged_and_present():
    assert len(ROWS) == 8
    for row in ROWS:
        path, target, wave, cmd = row[1], row[3], row[4], row[7]
        assert (ROOT / path).is_file() and cmd.startswith("clang-19 ") and f"-mcpu={target}" in cmd
        assert (wave == "w64") == ("-mwavefrontsize64" in cmd)


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("kname", list(SHAPES))
@pytest.mark.parametrize("row", PARAMS)
def test_ids(row, kname, mode):
    path, target = row[1], row[3]
    block, groups = SHAPES[kname]
    dev = wavelift.Device(target, mode=mode)
    co = dev.load_code_object(str(ROOT / path))
    want = _reference(block, groups)
    out = dev.upload(np.full(want.size, 0xDEADBEEF, np.uint32), name="out")
    r = co.kernel(kname).launch(groups=groups, block=block, args=[out])
    assert r.landed, r.refusal
    np.testing.assert_array_equal(dev.download(out, np.uint32), want)
