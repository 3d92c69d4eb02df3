#!/usr/bin/env python3
"""What ptxas reports for each occupancy bound of the CUDA backend's small modules, without a GPU
(decision 0047's amendments h136 and h143: which modules a build for a full SM suits).

    python3 bench/occupancy_ptxas.py [KERNEL ...] [--largest N] [--nvdisasm]

For each module (tools/cuda_sass.module_source: the backend's generation, sm_90) under the
HOIST=loops and HOIST=induction (the default since session 52): its block's threads, and per build -- the usual bound
(compile.occupancy_threads, 1536 threads an SM), the full SM (compile.full_sm_threads, 2048) and
unbounded -- the blocks an SM it names, and ptxas -v's registers, stack frame and spill
stores/loads for wl_main; then the bound compile.nvrtc_build keeps under each
WAVELIFT_CUDA_OCCUPANCY_FULL value (off, on -- the default since session 52 -- and auto).  With --nvdisasm (NVDISASM=/path or on
PATH) also the LDL/STL in the hot loops of the full build (bench/sass_costs.loops): where its
spill lands.  KERNEL: tools/cuda_sass.KERNELS (default: lds.cl's five, shade, vadd32, vadd64)
or fixture dispatch test names; --largest N adds the N largest clang fixture programs that take
the bound (at most codegen.OCCUPANCY_MAX_INSTRUCTIONS instructions)."""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "bench")]

import cuda_sass as CS  # noqa: E402

from wavelift.backends.cuda import compile as CC  # noqa: E402

ARCH = "sm_90"
HOISTS = ("loops", "induction")
FULL_VALUES = ("off", "on", "auto")


def row(name: str, src: str, nvd: str | None, outdir: pathlib.Path) -> str:
    threads = CC.block_threads(src)
    if not threads:
        return f"{name}: no WL_BLOCK_THREADS (a big program: never bounded)"
    minb = max(1, min(32, CC.occupancy_threads() // threads))
    full = max(1, min(32, CC.full_sm_threads(ARCH) // threads))
    parts, logs = [], {}
    for what, bound in (("usual", minb), ("full", full), ("unbounded", 0)):
        if what == "full" and full <= minb:
            parts.append("full: = usual")
            continue
        extra = ("--ptxas-options=-v", "-lineinfo") + ((f"-DWL_MIN_BLOCKS={bound}",) if bound else ())
        cubin, log = CC._nvrtc_build(src, ARCH, extra)
        r = CC.ptxas_report(log)
        logs[what] = log
        p = f"{what}{f' {bound}' if bound else ''}: {r['registers']} regs, stack {r['stack']}, spill {r['stores']}/{r['loads']}"
        if what == "full" and nvd:
            p += f", loops' LDL/STL {_loop_spills(name, src, cubin, nvd, outdir)}"
        parts.append(p)
    keeps = []
    for v in FULL_VALUES:
        kept = _kept(src, v, logs)
        keeps.append(f"{v or 'unset'}->{kept}")
    return f"{name}: {threads} threads; " + "; ".join(parts) + "; kept " + " ".join(keeps)


def _kept(src, value, logs):
    """the bound compile.nvrtc_build keeps with WAVELIFT_CUDA_OCCUPANCY_FULL=value (None: unset),
    its builds' reports being ``logs`` (no NVRTC call: the logs made above stand in)."""
    minb = max(1, min(32, CC.occupancy_threads() // CC.block_threads(src)))
    saved = (os.environ.get("WAVELIFT_CUDA_OCCUPANCY_FULL"), CC._reported_build, CC._nvrtc_build)

    def reported(source, arch, extra):
        b = int(next(e for e in extra if e.startswith("-DWL_MIN_BLOCKS=")).split("=")[1])
        return b"", logs["usual" if b == minb else "full"]

    os.environ.pop("WAVELIFT_CUDA_OCCUPANCY_FULL", None)
    if value is not None:
        os.environ["WAVELIFT_CUDA_OCCUPANCY_FULL"] = value
    CC._reported_build, CC._nvrtc_build = reported, (lambda s, a, e: (b"", ""))
    try:
        return CC.nvrtc_build(src, ARCH)[2]
    finally:
        CC._reported_build, CC._nvrtc_build = saved[1], saved[2]
        os.environ.pop("WAVELIFT_CUDA_OCCUPANCY_FULL", None)
        if saved[0] is not None:
            os.environ["WAVELIFT_CUDA_OCCUPANCY_FULL"] = saved[0]


def _loop_spills(name, src, cubin, nvd, outdir):
    import sass_costs as SC

    sass = CS.disassemble(nvd, cubin, outdir / f"{CS.tag_of(name)}-full.cubin")
    listing = CS.annotate(sass, src)
    blocks, succ, hot = CS.hot_blocks(listing, src)
    out = []
    for head, latch in SC.loops(blocks, succ, hot):
        lo, hi = blocks[head][0][0], blocks[latch][-1][0]
        ops = [op for i in hot for a, op, _ in blocks[i] if lo <= a <= hi]
        ldl = sum(bool(re.search(r"\bLDL\b", o)) for o in ops)
        stl = sum(bool(re.search(r"\bSTL\b", o)) for o in ops)
        out.append(f"{ldl}/{stl}")
    return "[" + " ".join(out) + "]"


def largest_fixtures(n):
    """the n largest clang fixture dispatches whose module takes the bound, by instructions"""
    import fixture_dispatches as F
    from test_cuda_backend import translate_dispatch

    from wavelift.backends.cuda.codegen import OCCUPANCY_MAX_INSTRUCTIONS

    sizes, seen = [], set()
    for name, mem, cfg in F.clang_dispatches():
        if cfg is None:
            continue
        try:
            prog, _ = translate_dispatch(mem, cfg)
        except Exception:  # noqa: BLE001 - a refused program has no module
            continue
        k = len(prog.instructions)
        sig = (k, cfg.wave_size, name.split(":")[0])
        if k <= OCCUPANCY_MAX_INSTRUCTIONS and sig not in seen:
            seen.add(sig)
            sizes.append((k, name))
    return [name for _, name in sorted(sizes)[-n:]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="*")
    ap.add_argument("--largest", type=int, default=0)
    ap.add_argument("--nvdisasm", action="store_true")
    args = ap.parse_args()
    nvd = CS.nvdisasm() if args.nvdisasm else None
    if args.nvdisasm and not nvd:
        raise SystemExit("--nvdisasm: no nvdisasm on PATH or in NVDISASM")
    names = args.kernels or [
        "matmul16",
        "stencil5",
        "histogram",
        "reduce1024",
        "scan256",
        "shade",
        "vadd32",
        "vadd64",
    ]
    names = names + (largest_fixtures(args.largest) if args.largest else [])
    outdir = pathlib.Path(tempfile.mkdtemp(prefix="wavelift-occupancy-"))
    print(
        f"# {ARCH}, NVRTC {CC.nvrtc_version()}; usual bound {CC.occupancy_threads()} threads an SM, full {CC.full_sm_threads(ARCH)}"
    )
    print("# per build: blocks an SM, wl_main's registers, stack frame bytes, spill stores/loads bytes")
    for hoist in HOISTS:
        if hoist:
            os.environ["WAVELIFT_CUDA_HOIST"] = hoist
        else:
            os.environ.pop("WAVELIFT_CUDA_HOIST", None)
        print(f"== WAVELIFT_CUDA_HOIST={hoist or '(default)'}", flush=True)
        for name in names:
            print(row(name, CS.module_source(name), nvd, outdir), flush=True)


if __name__ == "__main__":
    main()
