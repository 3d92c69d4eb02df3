"""WAVELIFT_CUDA_OCCUPANCY_FULL=on on real modules, without a GPU (decision 0047's amendment h136).

lds.cl's histogram launches 1024 blocks of 256 threads; bounded for 1536 threads an SM (40
registers, 6 blocks) 792 of them are resident on an H100's 132 SMs and the rest run in a second
round, where native.cu's kernel (12 registers) holds all 1024 at once.  With the setting the
module (HOIST=induction) is built for a full SM: 8 blocks, at most 32 registers, its small spill
outside the loop its blocks run (checked in the SASS where nvdisasm is there); matmul16's full
build spills more than SPILL_OK_BYTES, so it keeps the usual bound.  The rule itself, on ptxas
reports standing in: tests/cuda/test_cuda_backend.py::test_occupancy_full_first.  `auto` keeps
the full SM's build only without spill (amendment h143): not stencil5's, whose reloads sit in its
loop, nor (its 16 bytes) the histogram's; reduce1024's."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
for p in (ROOT / "tools", ROOT / "bench"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

pytestmark = pytest.mark.slow  # (NVRTC builds of two benchmark modules: ~20 s on 2 cores)


def _nvrtc_or_skip():
    from wavelift.backends.cuda.compile import nvrtc_problem

    why = nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")


def _build(monkeypatch, name, full, mode="on"):
    import cuda_sass as CS

    from wavelift.backends.cuda import compile as CC

    monkeypatch.setenv("WAVELIFT_CUDA_HOIST", "induction")
    for k in ("WAVELIFT_CUDA_OCCUPANCY", "WAVELIFT_CUDA_OCCUPANCY_STEP", "WAVELIFT_CUDA_OCCUPANCY_FULL"):
        monkeypatch.delenv(k, raising=False)
    if full:
        monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", mode)
    src = CS.module_source(name)
    cubin, log, bound = CC.nvrtc_build(src, "sm_90", ("--ptxas-options=-v", "-lineinfo"))
    regs = int(re.search(r"Function properties for wl_main[\s\S]*?Used (\d+) registers", log).group(1))
    return src, cubin, bound, regs, CC.ptxas_report(log)


def test_histogram_fills_the_sm_and_matmul16_keeps_its_bound(monkeypatch):
    _nvrtc_or_skip()
    _, _, bound, regs, _ = _build(monkeypatch, "histogram", False)
    assert (bound, regs) == (6, 40)  # (the usual bound: 6 blocks of 256 an SM)
    _, _, bound, regs, _ = _build(monkeypatch, "histogram", True)
    assert bound == 8 and regs <= 32  # 8 blocks: 2048 threads, 65,536 registers
    _, _, bound, _, _ = _build(monkeypatch, "matmul16", True)
    assert bound == 6


def test_histogram_full_build_spills_outside_its_loops(monkeypatch, tmp_path):
    """The spill the full build is allowed (ptxas: at most SPILL_OK_BYTES stored) is in the
    prologue and rare paths: no LDL/STL in any loop of the hot path (bench/sass_costs.loops),
    the direct copy HOIST=induction runs among them."""
    _nvrtc_or_skip()
    nvd = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    if not nvd:
        pytest.skip("no nvdisasm (pip nvidia-cuda-nvdisasm) on PATH or in NVDISASM")
    import cuda_sass as CS
    import sass_costs as SC

    src, cubin, bound, _, _ = _build(monkeypatch, "histogram", True)
    assert bound == 8
    (tmp_path / "m.cubin").write_bytes(cubin)
    sass = subprocess.run(
        [nvd, "-c", "-g", str(tmp_path / "m.cubin")], capture_output=True, text=True, check=True
    )
    listing = CS.annotate(sass.stdout, src)
    assert re.search(r"\b(LDL|STL)\b", listing)  # (it does spill: the check below has work)
    blocks, succ, hot = CS.hot_blocks(listing, src)
    found = SC.loops(blocks, succ, hot)
    assert len(found) >= 2  # the tested loop and its direct copy (and the final barrier's wait)
    for head, latch in found:
        lo, hi = blocks[head][0][0], blocks[latch][-1][0]
        ops = [op for i in hot for a, op, _ in blocks[i] if lo <= a <= hi]
        assert not [op for op in ops if re.search(r"\b(LDL|STL)\b", op)], (hex(lo), hex(hi))


def test_auto_keeps_a_full_sm_only_without_spill(monkeypatch):
    """WAVELIFT_CUDA_OCCUPANCY_FULL=auto (0047's amendment h143) on real builds: stencil5's full
    SM's build spills (its reloads in its loop: slower on the H100) and is not kept, where `on`
    keeps it; reduce1024's spills nothing and is kept (8 blocks of 256, at most 32 registers)."""
    _nvrtc_or_skip()
    _, _, bound, _, _ = _build(monkeypatch, "stencil5", True, "auto")
    assert bound == 6
    _, _, bound, regs, report = _build(monkeypatch, "reduce1024", True, "auto")
    assert bound == 8 and regs <= 32 and report["stores"] == report["loads"] == 0
    _, _, bound, _, report = _build(monkeypatch, "stencil5", True, "on")
    assert bound == 8 and 0 < report["stores"] <= 16  # (what `on` keeps and auto does not)
