"""GFX12 scratch and captures with real compiler output (decision 0027): clang-19's gfx1200
private_array and call kernels keep scratch inside the module (never a window or a write span),
TMPRING_SIZE.WAVESIZE counts 256-byte units, and a Device("gfx1200") launch saved as a capture
replays to the same bytes."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import wavelift

FIX = pathlib.Path(__file__).resolve().parents[1] / "fixtures"


def _launch(dev, stem):
    co = dev.load_code_object(str(FIX / stem.split("/")[0] / f"{stem.split('/')[1]}.hsaco"))
    name = "call" if "stack" in stem else "private_array"
    n = 128
    inp = dev.upload(np.arange(n, dtype=np.int32) * 7 + 3, name="in")
    out = dev.alloc(4 * n, name="out")
    args = [inp, out] + ([np.uint32(5)] if name == "private_array" else [])
    r = co.kernel(name).launch(global_size=(n, 1, 1), block=(64, 1, 1), args=args)
    return r, name, out, n


@pytest.mark.parametrize(
    "stem", ["gfx1200/basic-O2-w32", "gfx1200/basic-O0-w64", "gfx1201/stack-O2-w32", "gfx1201/stack-O0-w64"]
)
def test_clang_scratch_never_in_windows(stem, tmp_path):
    from reference import cases as C

    target = stem.split("/")[0]
    dev = wavelift.Device(target, backend="numpy", mode="wave")
    r, name, out, n = _launch(dev, stem)
    assert r.landed, r.refusal
    got = dev.download(out, np.int32)
    if name == "call":
        want = C._ref_call(None, {"in": np.arange(n, dtype=np.int32) * 7 + 3})["out"]
        np.testing.assert_array_equal(got, want)
    rec = dev.launches[-1]
    base, size = rec.scratch_address, rec.scratch.total
    assert base and size, f"{stem} {name} should use scratch"
    assert rec.registers["COMPUTE_TMPRING_SIZE"] >> 12 == rec.scratch.wavesize
    assert rec.scratch.wave_bytes == rec.scratch.wavesize * 256
    for w in r.windows:
        assert not (w.address < base + size and base < w.address + w.size), (stem, w)
    for a, m in r.write_spans:
        assert not (a < base + size and base < a + m), (stem, hex(a))
    # the capture replays to the same output bytes
    path = tmp_path / "run.wlcap"
    dev.save_capture(str(path))
    cap = wavelift.Capture.load(str(path))
    (res,) = wavelift.replay(cap)
    assert res.landed, res.refusal
    np.testing.assert_array_equal(np.frombuffer(cap.read(out.address, 4 * n), np.int32), got)
