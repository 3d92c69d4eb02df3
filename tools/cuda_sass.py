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


def module_source(name, proved=False):
    """The source of kernel ``name``'s module as the backend generates it (the settings as they
    are: the baked words, the workgroups per CUDA block of decision 0046); ``proved``: its lean
    build's (WL_PROVED: decision 0049's amendment h148), which a dispatch run in place on a
    proof launches -- the default since h163."""
    from test_cuda_backend import translate_dispatch

    from wavelift.backends import cuda as WC

    mem, cfg, *_ = KERNELS[name]() if name in KERNELS else fixture_dispatch(name)
    prog, base = translate_dispatch(mem, cfg)
    src = WC.module_source(prog, cfg, base_address=base)[0]
    return (WC.PROVED_DEFINE + src) if proved else src


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


def nvdisasm():
    """The nvdisasm to run: NVDISASM, else PATH's; None: none."""
    return os.environ.get("NVDISASM") or shutil.which("nvdisasm")


def disassemble(nvd, cubin, path):
    """nvdisasm -c -g (line info: annotate) of ``cubin``, first written to ``path`` (kept beside
    the listings) -> the SASS text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(cubin)
    return subprocess.run([nvd, "-c", "-g", str(path)], capture_output=True, text=True, check=True).stdout


def tag_of(name):
    """A kernel's name as a file name (a fixture's test name has slashes and colons)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


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


# the rare paths: a SASS basic block holding an instruction of these functions' bodies (or any
# call) is cold, as is a block all of whose successors are cold, and what only cold blocks reach
COLD_FUNCTIONS = ("wl_res", "wl_gload_", "wl_gstore_", "wl_escape_", "wl_check_", "wl_flag_")
_RECONVERGE = re.compile(r"(BSYNC|BSSY|NOP|WARPSYNC|BRA|BREAK|YIELD)\b")


def _body_lines(src, names, marks=r"__device__"):
    """1-based source lines of the bodies of the named functions (those whose line matches
    ``marks``: bench/sass_costs.py adds the prelude's WL_DEVICE helpers)"""
    lines, out = src.splitlines(), set()
    for i, line in enumerate(lines):
        m = re.search(r"\b(wl_\w+)\s*\(", line)
        if not re.search(marks, line) or not m or m.group(1) not in names:
            continue
        depth, j, opened = 0, i, False
        while j < len(lines):
            depth += lines[j].count("{") - lines[j].count("}")
            opened = opened or "{" in lines[j]
            if opened and depth <= 0:
                break
            j += 1
        out.update(range(i + 1, j + 2))
    return out


def hot_blocks(annotated, src, cold_too=()):
    """The SASS basic blocks of an annotated listing (annotate's output) and which are hot: ->
    (blocks, succ, hot), blocks a list of [(address, op, source line)], succ each block's
    successors, hot the set of blocks reachable from the entry through blocks that are not cold
    (COLD_FUNCTIONS and the functions ``cold_too`` names; hot_count).  Where the kernel holds a straight copy of its blocks
    (WAVELIFT_CUDA_BUDGET=straight), the copy's path (the guard's branch taken)."""
    cold_lines = _body_lines(src, COLD_FUNCTIONS + tuple(cold_too))
    blocks, labels, closed = [], {}, True
    for line in annotated.splitlines():
        if line.startswith(".L_"):
            labels[line.rstrip(":")] = len(blocks)
            blocks.append([])
            closed = False
            continue
        m = re.match(r"([0-9a-f]+) (.*?)\s*\| (\d+|None):", line)
        if not m:
            continue
        if closed:
            blocks.append([])
        op = m.group(2)
        blocks[-1].append((int(m.group(1), 16), op, int(m.group(3)) if m.group(3) != "None" else 0))
        closed = re.search(r"\b(BRA|EXIT|RET|BREAK)\b", op) is not None
    lines = src.splitlines()
    succ = []
    for i, b in enumerate(blocks):
        _, last, ln = b[-1] if b else (0, "", 0)
        # (BRA.DIV: the warp is not converged -- it is, at every ballot of this code)
        s = {labels[t] for t in re.findall(r"`\((\.L_\w+)\)", last) if t in labels and "BRA.DIV" not in last}
        # (the straight copy's guard, WAVELIFT_CUDA_BUDGET=straight: the copy is what runs)
        guard = 0 < ln <= len(lines) and "goto U" in lines[ln - 1] and re.match(r"@P\d BRA\b", last)
        if not re.match(r"(BRA|EXIT|RET)(?![.\w])", last) and i + 1 < len(blocks) and not guard:
            s.add(i + 1)
        succ.append(s)
    cold = [
        any("CALL" in op or (ln in cold_lines and not _RECONVERGE.match(op)) for _, op, ln in b)
        for b in blocks
    ]
    changed = True
    while changed:
        changed = False
        for i, s in enumerate(succ):
            if not cold[i] and s and all(cold[j] for j in s):
                cold[i] = changed = True
    seen, todo = set(), [0]
    while todo:
        i = todo.pop()
        if i < len(blocks) and i not in seen and not cold[i]:
            seen.add(i)
            todo.extend(succ[i])
    return blocks, succ, seen


def hot_count(annotated, src):
    """SASS instructions on the hot path of an annotated listing (annotate's output): the basic
    blocks reachable from the entry through blocks that are not cold (COLD_FUNCTIONS).  For
    straight-line kernels (vadd, shade) about the instructions a warp issues (Nsight on vadd w32:
    196 warp instructions per warp, this count 202 on the same tree): a proxy without a GPU."""
    blocks, _, hot = hot_blocks(annotated, src)
    return sum(len(blocks[i]) for i in hot)


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
    ap.add_argument(
        "--proved",
        action="store_true",
        help="the lean build a dispatch run in place on a proof launches (WL_PROVED: decision 0049's amendment h148)",
    )
    args = ap.parse_args()
    nvd = nvdisasm()
    outdir = pathlib.Path(tempfile.gettempdir()) / "wavelift-cuda-sass"
    unknown = [k for k in args.kernels if k not in KERNELS and "/" not in k]
    if unknown:
        ap.error(f"unknown kernel(s) {unknown}; choose from {list(KERNELS)}")
    for name in args.kernels or list(KERNELS):
        src = module_source(name, args.proved)
        cubin, regs = build(src, args.arch, args.annotate)
        line = f"{name:8s} {regs}"
        if nvd:
            tag = tag_of(name)
            sass = disassemble(nvd, cubin, outdir / f"{tag}.cubin")
            ins = [s for s in sass.splitlines() if re.match(r"\s+/\*[0-9a-f]{4,}\*/", s)]
            line += (
                f"; SASS {len(ins)} instructions ({sum(' LDG' in s for s in ins)} LDG, "
                f"{sum(' STG' in s for s in ins)} STG, {sum('BAR' in s for s in ins)} BAR, "
                f"{sum(bool(re.search(r' (LDS|STS|ATOMS)[ .]', s)) for s in ins)} LDS/STS/ATOMS)"
            )
            if args.annotate:
                listing = annotate(sass, src)
                line += f"; hot path {hot_count(listing, src)}"
                (outdir / f"{tag}.cu").write_text(src)
                (outdir / f"{tag}.sass").write_text(listing)
        print(line, flush=True)
    if not nvd:
        print("(no nvdisasm: registers and spills only; pip install nvidia-cuda-nvdisasm and set NVDISASM)")


if __name__ == "__main__":
    main()
