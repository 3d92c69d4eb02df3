#!/usr/bin/env python3
"""SASS instruction counts of the CUDA backend's benchmark kernels, whole and in their loops, by
what each instruction is for -- without a GPU (issue 24: the LDS/barrier kernels' kernel time).

    NVDISASM=/path/to/nvdisasm python bench/sass_costs.py [--proved] [KERNEL ...]   # default: lds.cl's five

``--proved``: the lean build (WL_PROVED, decision 0049's amendment h148), which a dispatch run in
place on a proof launches -- the default since h163 -- instead of the module's own build.

For each kernel: the module as the backend generates it (tools/cuda_sass.py: NVRTC with the
backend's options and occupancy rule, sm_90), its SASS by nvdisasm with line info, and

* the whole module: instructions, registers, the hot path (tools/cuda_sass.hot_blocks: the blocks
  reachable without entering the rare paths -- window search, escapes, budget call, flags --
  less the NaN sides of float tests: nan_sides);
* each loop of the hot path (a hot branch back to a hot block at a lower address, the hot blocks
  between): its hot instructions, and how many of them each concern of the translation costs,
  by the generated source line they come from (CATEGORIES, first match wins).

Instruction counts, not times: the kernels are issue-bound in their loops, so the hot-loop count
is the lever to look at before spending device time (bench/cuda_costs.py measures).  Settings
(WAVELIFT_CUDA_*) in the environment change the module as they change the backend's."""

from __future__ import annotations

import collections
import os
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools")]

import cuda_sass as CS  # noqa: E402

# (name, helper functions whose body lines count for it, regex on the generated line or the SASS op)
CATEGORIES = [
    ("budget", (), r"\bic \+=|ic > rl|wl_check_"),
    ("lanes", (), r"\blc \+="),
    # (the bit map's marking: mapbits.h, decision 0049's amendments h111, h139, h160)
    (
        "mark",
        ("wl_mark_bits", "wl_mark_span", "wl_mark_group", "wl_mark_general", "wl_or_warp", "wl_or_word"),
        None,
    ),
    ("written", ("wl_touch",), r"written|0x01010101"),
    ("global", (), r"^(LDG|STG|ATOMG|REDG)"),
    (
        "window",
        (
            "wl_direct",
            "wl_gbase",
            "wl_span",
            "wl_gload",
            "wl_gload_b",
            "wl_gstore",
            "wl_gstore_b",
            "wl_gread_at",
            "wl_gwrite_at",
        ),
        None,
    ),
    ("fma-nan", ("wl_nfma", "wl_fma", "wl_q", "wl_dnan"), r"if \((t\d+n) != \1\)"),
    ("lds", ("wl_atomic32",), r"wl_smem|^(LDS|STS|ATOMS)"),
    ("sync", (), r"__syncwarp|__syncthreads|__ballot|bar\.sync|^(BAR|WARPSYNC|VOTE)"),
    ("exec-test", (), r">> lane\) & 1u"),
    ("blend", (), r"= \(t\d+\) \? .* : [sv]\d+;"),
    ("reconverge", (), r"^(BSSY|BSYNC|NOP|YIELD)\b"),
]


def _functions(src):
    """source line (1-based) -> the wl_ helper whose body holds it"""
    owner = {}
    for name in {f for _, fs, _ in CATEGORIES for f in fs}:
        for ln in CS._body_lines(src, (name,), marks=r"__device__|WL_DEVICE"):
            owner.setdefault(ln, name)
    return owner


def category(op, ln, lines, owner):
    text = lines[ln - 1] if 0 < ln <= len(lines) else ""
    op = re.sub(r"^@!?U?P\w+ ", "", op)
    for name, funcs, pat in CATEGORIES:
        if owner.get(ln) in funcs:
            return name
        if pat and (re.search(pat, text) or re.search(pat, op)):
            return name
    return "other"


def nan_sides(listing):
    """[(address of the branch, address of its target)] of each NaN test's skip: an
    ``FSETP.NAN.AND Pn, PT, Rx, Rx`` and later in its block ``@!Pn BRA`` forward"""
    at, rows, pending = {}, [], None
    for line in listing.splitlines():
        if line.startswith(".L_"):
            pending = line.rstrip(":")
            continue
        m = re.match(r"([0-9a-f]+) (.*?)\s*\|", line)
        if m:
            a = int(m.group(1), 16)
            if pending:
                at[pending], pending = a, None
            rows.append((a, m.group(2)))
    out, test = [], {}
    for a, op in rows:
        m = re.match(r"FSETP\.NAN\.AND (P\d), PT, (R\d+), \2, PT", op)
        if m:
            test[m.group(1)] = a
            continue
        m = re.match(r"@!(P\d) BRA `\((\.L_\w+)\)", op)
        if m and m.group(1) in test and at.get(m.group(2), 0) > a:
            out.append((a, at[m.group(2)]))
        if re.search(r"\b(BRA|EXIT|RET)\b", op):
            test = {}
        else:
            for p in re.findall(r"^(?:@!?P\d )?\S+ (P\d),", op):
                test.pop(p, None)
    return out


def loops(blocks, succ, hot):
    """hot loops: (head block, latch block) for each hot branch back to a hot block at or above it"""
    out = []
    for i in sorted(hot):
        for j in succ[i]:
            if j in hot and blocks[j] and blocks[i] and blocks[j][0][0] <= blocks[i][-1][0]:
                out.append((j, i))
    return out


def report(name, nvd, outdir, proved=False):
    src = CS.module_source(name, proved)
    cubin, regs = CS.build(src, "sm_90", True)
    tag = CS.tag_of(name)
    sass = CS.disassemble(nvd, cubin, outdir / f"{tag}.cubin")
    listing = CS.annotate(sass, src)
    (outdir / f"{tag}.cu").write_text(src)
    (outdir / f"{tag}.sass").write_text(listing)
    count(name, src, listing, regs)


def count(name, src, listing, regs=""):
    blocks, succ, hot = CS.hot_blocks(listing, src)
    lines, owner = src.splitlines(), _functions(src)
    sides = nan_sides(listing)
    # (the NaN side of a float result's test -- FSETP.NAN.AND Pn, PT, Rx, Rx, then @!Pn BRA
    # over it: wl_nfma's choice of NaN, a chain's exact run again (nanchain) -- runs only on a
    # NaN result: left out of the hot counts, counted apart)
    nan = {i for i in hot if blocks[i] and any(a < blocks[i][0][0] < b for a, b in sides)}
    total = sum(len(b) for b in blocks)
    nhot = sum(len(blocks[i]) for i in hot - nan)
    m = re.search(r"Used (\d+) registers", regs)
    spill = regs.split("Used")[0].strip()
    bound = re.search(r"\((bounded: \d+ blocks|unbounded)\)", regs)
    print(
        f"{name}: {total} SASS, hot path {nhot}"
        + (f", {m.group(1)} registers ({spill})" if m else "")
        + (f", {bound.group(1)}" if bound else "")
    )
    # (the whole hot path by concern: a streaming kernel has no loop, its one pass is the cost)
    every = [x for i in sorted(hot - nan) for x in blocks[i]]
    cats = collections.Counter(category(op, ln, lines, owner) for _, op, ln in every)
    print("  hot path: " + ", ".join(f"{k} {v}" for k, v in cats.most_common()))
    if "#define WL_MARK_GROUP 0" not in src and "#define WL_MAP_BITS 1" in src:
        # (mapbits.h's group form: the path of a warp whose stores' groups are all fast -- the
        # general form, which the other groups' lanes take, cold)
        _, _, fast = CS.hot_blocks(listing, src, ("wl_mark_general",))
        ins = [x for i in sorted(fast - nan) for x in blocks[i]]
        marks = sum(category(op, ln, lines, owner) == "mark" for _, op, ln in ins)
        print(f"  hot path with every store's lane groups fast: {len(ins)} (mark {marks})")
    for head, latch in loops(blocks, succ, hot):
        lo, hi = blocks[head][0][0], blocks[latch][-1][0]
        ins = [x for i in sorted(hot - nan) for x in blocks[i] if lo <= x[0] <= hi]
        slow = sum(len(blocks[i]) for i in nan if lo <= blocks[i][0][0] <= hi)
        cats = collections.Counter(category(op, ln, lines, owner) for _, op, ln in ins)
        kinds = collections.Counter(
            k
            for _, op, _ in ins
            for k in ("LDG", "STG", "LDS", "STS", "ATOMS", "BAR", "FFMA", "LDL", "STL")
            if re.search(rf"\b{k}\b", op)
        )
        print(
            f"  loop {lo:04x}-{hi:04x}: {len(ins)} hot"
            + (f" (+{slow} on the NaN sides of float tests)" if slow else "")
            + " ("
            + ", ".join(f"{k} {v}" for k, v in kinds.most_common())
            + ")\n    "
            + ", ".join(f"{k} {v}" for k, v in cats.most_common())
        )


def main():
    nvd = CS.nvdisasm()
    if not nvd:
        raise SystemExit(
            "needs nvdisasm (pip nvidia-cuda-nvdisasm: nvidia/cu13/bin/nvdisasm) on PATH or in NVDISASM"
        )
    args = sys.argv[1:]
    proved = "--proved" in args
    names = [a for a in args if a != "--proved"] or [
        "matmul16",
        "histogram",
        "stencil5",
        "reduce1024",
        "scan256",
    ]
    outdir = pathlib.Path(tempfile.gettempdir()) / "wavelift-sass-costs"
    outdir.mkdir(parents=True, exist_ok=True)
    print(
        f"# settings: {' '.join(f'{k}={v}' for k, v in sorted(os.environ.items()) if k.startswith('WAVELIFT_')) or '(defaults)'}"
    )
    print(f"# listings: {outdir}/<kernel>.sass (each SASS line with its generated CUDA line)")
    print("# build: " + ("the lean build (WL_PROVED)" if proved else "the module's own build"))
    for name in names:
        report(name, nvd, outdir, proved)


if __name__ == "__main__":
    main()
