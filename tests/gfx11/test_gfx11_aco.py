"""ACO shaders for GFX11 (tests/fixtures/gfx1100/aco, `tools/build_fixtures.sh aco11`: Mesa 22.3.6
RADV/ACO on its null device, `--family gfx1100`, wave32 and wave64) through
wavelift.Device("gfx1100").load_aco_shader, against the NumPy references the GFX10 ACO fixtures
use (tests/execute/test_aco_fixtures.py), in wave and lane mode."""

from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "execute"))

import test_aco_fixtures as TAF  # noqa: E402

FIX = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gfx1100" / "aco"
SHADERS = sorted(FIX.glob("*.json"))
LOG = FIX.parents[1] / "build_log" / "aco-gfx1100.tsv"
# known gaps (strict: the test reports when they start to pass)
# (GFX11 linear image_load/store run on GFX11's T# since decision 0038: image_blur passes;
# GFX11's null T# and sampling are refused by name: image.unsupported_descriptor)
GAPS = {
    "descriptor_types": "GFX11 null T#s (unbound images) refused (image.unsupported_descriptor)",
}
TIERS = {("scratch_array-w64", "wave"), ("scratch_game-w32", "wave")}


def _params(tiers: bool):
    for p in SHADERS:
        key = p.stem.rsplit("-", 1)[0]
        for mode in ("wave", "lane"):
            if tiers != ((p.stem, mode) in TIERS):
                continue
            marks = [pytest.mark.xfail(reason=GAPS[key], strict=True)] if key in GAPS else []
            if key.startswith("int64_") and (mode == "lane" or "div" in key):  # the largest programs
                marks.append(pytest.mark.slow)
            yield pytest.param(p, mode, marks=marks, id=f"{p.stem}-{mode}")


def test_every_shader_is_logged():
    rows = [ln.split("\t") for ln in LOG.read_text().splitlines()]
    assert len(rows) == len(SHADERS) == 24
    logged = {pathlib.Path(r[1]).name for r in rows}
    assert logged == {p.with_suffix("").name for p in SHADERS}
    assert all("--family gfx1100" in r[7] for r in rows)


@pytest.mark.parametrize("path,mode", list(_params(False)))
def test_gfx1100_aco_shader(path, mode):
    TAF.test_aco_shader(path, mode)


@pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py): a small subset
@pytest.mark.parametrize("path,mode", list(_params(True)))
def test_gfx1100_aco_shader_tiers(path, mode):
    TAF.test_aco_shader(path, mode)
