"""Real clang-19 code objects through wavelift.Device, compared with NumPy/Python references."""

import pathlib

import numpy as np
import pytest

pytestmark = pytest.mark.tiers  # NumPy blocks and the native tier (tests/conftest.py)

FIX = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "gfx1030"
BASIC = sorted(FIX.glob("basic-*.hsaco"))
# The native tier's -O0 builds take 5-13 s each (2-core host): by default the -O2 variants and
# basic-O0-w32-mubuf run native (tests/test_fixture_kernels.py's default builds -O0 w32 flat and
# gfx1010 w64 mubuf, tests/scratch/test_scratch_native.py -O0 w64 flat); the other -O0 builds
# under -m slow.  NumPy blocks run every variant by default.
NATIVE_O0_DEFAULT = "basic-O0-w32-mubuf"


def native_default(test_id: str) -> bool:
    return "-O0-" not in test_id or test_id.endswith(NATIVE_O0_DEFAULT)


def _device():
    import wavelift

    return wavelift.Device("gfx1030", backend="numpy", mode="wave")


def _check(r):
    assert r.landed, r.refusal


def _ref_divergent(gid, n):
    x, acc = gid, 0
    for _ in range(n):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        acc = (acc + (x >> 16)) & 0xFFFFFFFF if x & 0x10000 else acc ^ x
        if (acc & 0x80000000) == 0 and (acc & 0xFF) == 0x5A:
            break
        j = x & 7
        while j:
            acc = (acc * 3 + j) & 0xFFFFFFFF
            j -= 1
    return acc


@pytest.mark.parametrize("path", BASIC, ids=lambda p: p.stem)
def test_vadd(path):
    dev = _device()
    k = dev.load_code_object(str(path)).kernel("vadd")
    n = 1000
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    ba, bb, bc = dev.upload(a), dev.upload(b), dev.upload(np.full(n + 24, 7, np.float32))
    r = k.launch(global_size=(n, 1, 1), block=(64, 1, 1), args=[ba, bb, bc, np.uint32(n)])
    _check(r)
    c = dev.download(bc, np.float32)
    np.testing.assert_array_equal(c[:n], a + b)
    assert (c[n:] == 7).all()


@pytest.mark.parametrize("path", BASIC, ids=lambda p: p.stem)
def test_divergent_loop(path):
    dev = _device()
    k = dev.load_code_object(str(path)).kernel("divergent_loop")
    trip = np.random.default_rng(0).integers(0, 12, 256).astype(np.uint32)
    t, o = dev.upload(trip), dev.alloc(4 * 256)
    r = k.launch(global_size=(256, 1, 1), block=(64, 1, 1), args=[t, o])
    _check(r)
    want = [_ref_divergent(g, int(trip[g])) for g in range(256)]
    np.testing.assert_array_equal(dev.download(o, np.uint32), want)
