"""RADV's own GFX11 streams (Mesa 22.3.6 on its null device, RADV_FORCE_FAMILY=gfx1100;
tests/fixtures/gfx1100/radv, recorded by tools/radv_capture_raw/record.sh and converted by
`wavelift import-radv --target gfx1100` into tests/fixtures/gfx1100/captures) replay in wave and
lane mode: every dispatch lands, lavapipe's expected memory (int64 shaders) matches, and every
buffer ends equal to the GFX10.3 capture of the same shader on the same inputs
(tests/fixtures/radv, itself checked against its references in tests/stream and tests/cli)."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

from wavelift import Capture, replay

FIX = pathlib.Path(__file__).resolve().parents[1] / "fixtures"
RAW = FIX / "gfx1100" / "radv"
CAPS = FIX / "gfx1100" / "captures"
NAMES = sorted(p.name for p in RAW.iterdir() if (p / "raw" / "buffers.txt").exists())
MODES = ("wave", "lane")


def _buffers(raw: pathlib.Path) -> list[tuple[str, int, int]]:
    out = []
    for line in (raw / "buffers.txt").read_text().splitlines():
        m = re.match(r"set=(\d+) binding=(\d+) type=\w+ va=(0x[0-9a-f]+) size=(\d+)", line)
        if m:
            out.append((f"{m[1]}:{m[2]}", int(m[3], 16), int(m[4])))
    return out


def _run(path: pathlib.Path, mode: str):
    cap = Capture.load(path)
    results = replay(cap, backend="numpy", mode=mode)
    return cap, results


def test_every_raw_capture_is_converted():
    assert len(NAMES) == 7
    assert sorted(p.name for p in CAPS.glob("radv-*.wlcap")) == [f"radv-{n}.wlcap" for n in NAMES]
    for n in NAMES:
        cmd = (RAW / n / "command.txt").read_text()
        assert "RADV_FORCE_FAMILY=gfx1100" in cmd and "--target gfx1100" in cmd


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", NAMES)
def test_gfx1100_radv_capture(name, mode):
    cap, results = _run(CAPS / f"radv-{name}.wlcap", mode)
    assert results and all(r.landed for r in results), [str(r.refusal) for r in results]
    assert all(r.config.target == "gfx1100" for r in results)
    if name.startswith("int64_"):
        assert cap.expected and cap.expected.get("memory"), "lavapipe's output is recorded"
    assert cap.check_expected() == []
    twin = FIX / "captures" / f"radv-{name.replace('-gfx1100', '')}.wlcap"
    ref, ref_results = _run(twin, mode)
    assert all(r.landed for r in ref_results)
    bufs = _buffers(RAW / name / "raw")
    assert bufs == _buffers(FIX / "radv" / name.replace("-gfx1100", "") / "raw")  # same VAs, sizes
    for what, va, size in bufs:
        got = np.frombuffer(cap.read(va, size), np.uint8)
        want = np.frombuffer(ref.read(va, size), np.uint8)
        if name.startswith("fullscreen") and what == "0:2":
            # RGBA8 from floats: within one step per channel (tests/execute/test_aco_fixtures.py)
            assert np.abs(got.astype(int) - want.astype(int)).max() <= 1, what
        else:
            bad = np.flatnonzero(got != want)
            assert bad.size == 0, f"{name} binding {what}: {bad.size} bytes differ, first at {bad[:1]}"
