"""Execution of real clang-19 code objects for gfx1100 (tests/fixtures/gfx1100/*.hsaco, built by
`tools/build_fixtures.sh clang11` from the same OpenCL sources as the gfx1030 fixtures; the
commands are in tests/fixtures/build_log/clang-gfx1100.tsv) against the same references the
gfx1030 fixtures use (tests/test_fixture_kernels.py: PoCL and the NumPy references).

Matrix: every gfx1100 binary (-O0/-O2 x wave32/wave64) x every kernel in its source x every case
x mode (wave, lane).  The default run takes -O2 in wave mode and -O2 wave32 in lane mode; the
rest, and the large shapes, are marked slow.  A small subset also runs on the native tier.
"""

from __future__ import annotations

import pathlib

import pytest
from clang_targets import DEFAULT, check, check_logged, rows
from reference import cases as C

ROWS = rows("gfx1100")
TIERS = {("basic-O2-w32", "vadd"), ("stack-O2-w32", "call")}


def _params(tiers: bool):
    for b in ROWS:
        stem = pathlib.Path(b["path"]).stem
        src = pathlib.Path(b["source"]).name
        for kname in C.KERNELS:
            for case in C.cases_for(kname, b["wave_size"]):
                if case.source != src:
                    continue
                if tiers:
                    if (stem, kname) in TIERS and not case.shape.slow:
                        yield pytest.param(b["path"], kname, case.shape.name, "wave", id=f"{stem}-{kname}")
                    continue
                for mode in ("wave", "lane"):
                    slow = case.shape.slow or (b["opt_level"], b["wave_size"], mode) not in DEFAULT
                    yield pytest.param(
                        b["path"],
                        kname,
                        case.shape.name,
                        mode,
                        marks=[pytest.mark.slow] if slow else [],
                        id=f"{stem}-{kname}-{case.shape.name}-{mode}",
                    )


def _check(path, kname, shape, mode):
    check("gfx1100", path, kname, shape, mode)


def test_every_binary_is_logged_and_present():
    """12 binaries (basic/math/stack x -O0/-O2 x wave32/wave64), each with its command."""
    check_logged("gfx1100")


@pytest.mark.parametrize("path,kname,shape,mode", list(_params(False)))
def test_gfx1100_fixture_kernel(path, kname, shape, mode):
    _check(path, kname, shape, mode)


@pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py): a small subset
@pytest.mark.parametrize("path,kname,shape,mode", list(_params(True)))
def test_gfx1100_fixture_kernel_tiers(path, kname, shape, mode):
    _check(path, kname, shape, mode)
