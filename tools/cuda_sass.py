#!/usr/bin/env python3
"""The CUDA backend's modules for the benchmark kernels, inspected without a GPU: what NVRTC
(the same options and occupancy rule as the backend) makes of them -- registers, spills, and,
with nvdisasm, the SASS itself.  For trying code-generation changes before spending device time
(the H200's minutes are few): the kernels are issue- and latency-bound, so instruction counts on
the hot path and register counts move with kernel time.

    python3 tools/cuda_sass.py                      # every benchmark: registers, spills, SASS size
    python3 tools/cuda_sass.py vadd32 --annotate    # also $TMPDIR/wavelift-cuda-sass/vadd32.sass:
                                                    # each SASS line with the generated CUDA line

Needs the cuda extra (NVRTC); the SASS needs nvdisasm on PATH or NVDISASM=/path (pip:
`nvidia-cuda-nvdisasm`, in nvidia/cu13/bin/).  Small sizes of the same launches as
bench/gpu_check.py (the grid does not change the module)."""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "bench"), str(ROOT / "tests"), str(ROOT / "tests" / "cuda")]

import gpu_check as GC  # noqa: E402

KERNELS = {
    "shade": lambda: GC.shade_dispatch(64, 64),
    "vadd32": lambda: GC.vadd_dispatch(4096),
    "vadd64": lambda: GC.vadd_dispatch(4096, 64),
    "collatz": lambda: GC.collatz_dispatch(4096),
    "game64": lambda: GC.scratch_game_dispatch((2, 2), 16, 4),
    "game32": lambda: GC.scratch_game_dispatch((2, 2), 16, 4, 32),
    # bench/kernels/lds.cl: LDS and barriers (issue 24 items 3 and 5)
    **{k: (lambda k=k: GC.lds_dispatch(k, small=True)) for k in GC.LDS_KERNELS},
}


def fixture_dispatch(name):
    """A fixture dispatch by its test name (tests/cuda/fixture_dispatches.py: e.g.
    gfx1030/aco/image_blur-w32.bin, gfx1030/stack-O2-w32-flat:spill:small)."""
    import fixture_dispatches as F

    group = F.aco_dispatches if "/aco/" in name else F.all_dispatches
    for n, mem, cfg in group():
        if n == name and cfg is not None:
            return mem, cfg
    raise SystemExit(f"no fixture dispatch {name!r}")


def module_source(name):
    from test_cuda_backend import translate_dispatch

    from wavelift.backends.cuda.codegen import baked_params, generate

    mem, cfg, *_ = KERNELS[name]() if name in KERNELS else fixture_dispatch(name)
    prog, base = translate_dispatch(mem, cfg)
    return generate(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, baked_params(cfg))[0]


def build(src, arch, lineinfo):
    """-> (cubin, ptxas lines for wl_main) of the build the backend keeps (compile.nvrtc_build)."""
    from wavelift.backends.cuda import compile as CC

    extra = ("--ptxas-options=-v",) + (("-lineinfo",) if lineinfo else ())
    cubin, log, minb = CC.nvrtc_build(src, arch, extra)
    return cubin, _wl_main(log) + (f" (bounded: {minb} blocks)" if minb else " (unbounded)")


def _wl_main(log):
    i = log.find("Function properties for wl_main")
    part = log[i:].splitlines()[1:3]
    return " ".join(x.replace("ptxas", "").replace("info", "").strip(" .:") for x in part)


def annotate(sass, src):
    """SASS lines prefixed with the generated source line they came from (needs -lineinfo)."""
    lines, out, cur = src.splitlines(), [], None
    for s in sass.splitlines():
        m = re.search(r'## File ".*", line (\d+)', s)
        if m:
            cur = int(m.group(1))
            continue
        m = re.match(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?);", s)
        if m:
            ref = lines[cur - 1].strip()[:90] if cur and cur <= len(lines) else ""
            out.append(f"{m.group(1)} {m.group(2):58s} | {cur}: {ref}")
        elif s.startswith(".L_"):
            out.append(s)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "kernels",
        nargs="*",
        metavar="KERNEL",
        help=f"any of {', '.join(KERNELS)} (default: all), or a fixture dispatch's test name",
    )
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument(
        "--annotate", action="store_true", help="write $TMPDIR/wavelift-cuda-sass/<kernel>.sass (and .cu)"
    )
    args = ap.parse_args()
    nvd = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    outdir = pathlib.Path(tempfile.gettempdir()) / "wavelift-cuda-sass"
    unknown = [k for k in args.kernels if k not in KERNELS and "/" not in k]
    if unknown:
        ap.error(f"unknown kernel(s) {unknown}; choose from {list(KERNELS)}")
    for name in args.kernels or list(KERNELS):
        src = module_source(name)
        cubin, regs = build(src, args.arch, args.annotate)
        line = f"{name:8s} {regs}"
        if nvd:
            tag = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
            path = outdir / f"{tag}.cubin"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(cubin)
            sass = subprocess.run(
                [nvd, "-c", "-g", str(path)], capture_output=True, text=True, check=True
            ).stdout
            ins = [s for s in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4,}\*/", s)]
            line += (
                f"; SASS {len(ins)} instructions ({sum(' LDG' in s for s in ins)} LDG, "
                f"{sum(' STG' in s for s in ins)} STG, {sum('BAR' in s for s in ins)} BAR, "
                f"{sum(bool(re.search(r' (LDS|STS|ATOMS)[ .]', s)) for s in ins)} LDS/STS/ATOMS)"
            )
            if args.annotate:
                (outdir / f"{tag}.cu").write_text(src)
                (outdir / f"{tag}.sass").write_text(annotate(sass, src))
        print(line, flush=True)
    if not nvd:
        print("(no nvdisasm: registers and spills only; pip install nvidia-cuda-nvdisasm and set NVDISASM)")


if __name__ == "__main__":
    main()
