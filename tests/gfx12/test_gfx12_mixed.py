"""The scalar float instructions in clang-19's own code (decision 0027): tests/fixtures/gfx1200/
mixed.cl built for gfx1150 and gfx1200 at -O0 (where clang computes uniform values with s_mul_f32,
s_fmac_f32, s_trunc_f32, s_cvt_u32_f32 and, on gfx1200, v_s_rcp_f32) and -O2 lands the same bytes
as its gfx1030 build (commands: tests/fixtures/build_log/clang-mixed.tsv).  The gfx1030 build is
the reference: its execution is what tests/test_fixture_kernels.py checks against PoCL; this is a
differential test of the GFX11.5/12 paths (names, layouts, scalar float ops) against it."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import wavelift

ROOT = pathlib.Path(__file__).resolve().parents[2]
ROWS = [ln.split("\t") for ln in (ROOT / "tests/fixtures/build_log/clang-mixed.tsv").read_text().splitlines()]
N = 8 * 64 + 8


def _run(target, path, mode):
    rng = np.random.default_rng(1)
    dev = wavelift.Device(target, mode=mode)
    co = dev.load_code_object(str(ROOT / path))
    arrays = (
        rng.standard_normal(N).astype(np.float32),
        rng.standard_normal(N).astype(np.float32) + 3,
        rng.integers(-1000, 1000, N).astype(np.int32),
        rng.standard_normal(N).astype(np.float16),
        rng.standard_normal(N),
        rng.integers(-(10**12), 10**12, N).astype(np.int64),
        rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32),
    )
    bufs = [dev.upload(x) for x in arrays]
    res = co.kernel("k1").launch(groups=(2, 2, 2), block=(64, 1, 1), args=bufs)
    assert res.landed, res.refusal
    return [dev.download(b, a.dtype).view(np.uint8) for b, a in zip(bufs, arrays)]


def test_the_builds_are_logged():
    assert [(r[3], r[5]) for r in ROWS] == [
        (t, o) for t in ("gfx1030", "gfx1150", "gfx1200") for o in ("O0", "O2")
    ]
    assert all((ROOT / r[1]).is_file() and r[7].startswith("clang-19 ") for r in ROWS)


@pytest.mark.parametrize("mode", ["wave", "lane"])
@pytest.mark.parametrize("row", [r for r in ROWS if r[3] != "gfx1030"], ids=lambda r: pathlib.Path(r[1]).stem)
def test_same_bytes_as_the_gfx1030_build(row, mode):
    ref_row = next(r for r in ROWS if r[3] == "gfx1030" and r[5] == "O2")
    want = _run("gfx1030", ref_row[1], mode)
    got = _run(row[3], row[1], mode)
    for k, (a, b) in enumerate(zip(want, got)):
        np.testing.assert_array_equal(b, a, err_msg=f"argument {k}")
