#!/usr/bin/env python3
"""Per-warp instruction estimate of the path a full, in-bounds warp without NaNs takes through
shade / vadd32 / vadd64, by category (decision 0009's amendment h146): tools/cuda_sass.py's hot
set less each NaN test's fix-up blocks and the written map's second word, each SASS line under
the generated line it came from.  One column per run of tools/cuda_sass.py --annotate:

    for v in base f2i; do mkdir -p /tmp/s/$v; TMPDIR=/tmp/s/$v python3 tools/cuda_sass.py \
        shade vadd32 vadd64 --annotate; done            # (with the settings of each column)
    python3 tools/cuda_hotpath.py /tmp/s/base /tmp/s/f2i

(bench/results/sass-2026-12-07-s50-h146-hotpath.txt: shade 283 on session 50's defaults, ncu 312.)"""

import collections
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import cuda_sass as CS  # noqa: E402

CATS = [
    "prologue",
    "uniform loads (WL_PRE)",
    "global access: guess test + address",
    "store + written-map mark",
    "float NaN fix-up tests",
    "fmin/fmax",
    "f2i",
    "EXEC / ballots / lane counts",
    "stats (end)",
    "guest arithmetic",
    "control (branches, reconvergence)",
]


# the prelude's float NaN tests (a NaN result's fix-up behind each; wl_q, wl_dnan: the fix-ups)
NAN_TESTS = ("wl_q", "wl_dnan", "wl_nf1", "wl_nf2", "wl_nf3", "wl_nfma")


def fn_lines(src, names):
    return CS._body_lines(src, names, marks=r"WL_DEVICE|__device__|template")


def categorize(src):
    lines = src.splitlines()
    cat = {}

    def put(ls, c):
        for l in ls:
            cat.setdefault(l, c)

    put(
        fn_lines(src, ("wl_count_", "wl_count_block", "wl_count_pair")),
        "stats (end)",
    )
    put(
        fn_lines(
            src,
            (
                "wl_mark_bits",
                "wl_mark_span",
                "wl_mark_group",
                "wl_mark_general",
                "wl_or_warp",
                "wl_or_word",
                "wl_gwrite_at",
                "wl_gstore_b",
                "wl_gstore",
            ),
        ),
        "store + written-map mark",
    )
    put(
        fn_lines(src, ("wl_gbase", "wl_direct", "wl_gload_b", "wl_gload", "wl_span", "wl_gread_at")),
        "global access: guess test + address",
    )
    put(fn_lines(src, NAN_TESTS), "float NaN fix-up tests")
    put(fn_lines(src, ("wl_fmin", "wl_fmax")), "fmin/fmax")
    put(fn_lines(src, ("wl_f2i",)), "f2i")
    put(fn_lines(src, ("wl_udiv",)), "prologue")
    start = next(i for i, l in enumerate(lines) if "__global__" in l)
    pend = next(i for i, l in enumerate(lines) if "//@wl-prologue-end" in l)
    for i in range(start, len(lines)):
        ln, t = i + 1, lines[i]
        if ln in cat:
            continue
        if i <= pend or "if (done) goto WL_PARK" in t:
            cat[ln] = "prologue"
        elif "WL_PRE" in t or "WL_PO" in t or "wl_mirror" in t:
            cat[ln] = "uniform loads (WL_PRE)"
        elif "wl_count" in t or "lc +=" in t or "ic +=" in t:
            cat[ln] = "stats (end)" if "wl_count" in t else "EXEC / ballots / lane counts"
        elif "__ballot_sync" in t or "s126" in t or ">> lane" in t:
            cat[ln] = "EXEC / ballots / lane counts"
        elif "wl_gstore" in t or "__syncwarp" in t:
            cat[ln] = "store + written-map mark"
        elif "wl_gload" in t:
            cat[ln] = "global access: guess test + address"
        elif "float2" in t:
            cat[ln] = "f2i"
        elif "goto" in t or t.strip() in ("}", "{"):
            cat[ln] = "control (branches, reconvergence)"
        else:
            cat[ln] = "guest arithmetic"
    return cat


def common(ann, src):
    """the hot set less the blocks a full in-bounds warp without NaNs skips: NaN fix-ups (wl_q,
    wl_dnan), the second map word (a 4-byte aligned lane never crosses a 32-bit map word), and
    for STATS=block the warp-0-only tail counted at 1/8 (8 warps a block)"""
    blocks, succ, hot = CS.hot_blocks(ann, src)
    naner = fn_lines(src, NAN_TESTS[:2])
    lines = src.splitlines()
    second = {i + 1 for i, l in enumerate(lines) if "wl_or_warp(m + 1" in l}
    tail = set()
    for i, l in enumerate(lines):
        if "if (w != 0u) return;" in l:
            j = i + 1
            while not lines[j].startswith("}"):
                tail.add(j + 1)
                j += 1
    nanfn = fn_lines(src, NAN_TESTS)
    # a NaN test's fall-through (its result is NaN): the blocks from the test's branch to its
    # target (the succ of the branch other than the next block)
    nanpath = set()
    for i, b in enumerate(blocks):
        if not b:
            continue
        _, last, ln = b[-1]
        if (
            ln in nanfn
            and re.match(r"@!?P\d BRA", last)
            and "FSETP.NAN" in " ".join(op for _, op, _ in b[-3:])
        ):
            tgt = [j for j in succ[i] if j != i + 1]
            if tgt:
                nanpath.update(range(i + 1, tgt[0]))
    w = {}
    skip_after_second = False
    for i in sorted(hot):
        b = blocks[i]
        if i in nanpath or (
            any(ln in naner for _, op, ln in b) and not any("FSETP" in op for _, op, ln in b)
        ):
            continue
        if skip_after_second:
            # blocks inside the second-word call: up to the first block back on another line
            if all(ln in second or ln in fn_lines(src, ("wl_or_warp",)) for _, op, ln in b):
                continue
            skip_after_second = False
        if any(ln in second and "BRA" in op for _, op, ln in b):
            skip_after_second = True
        w[i] = 1.0
    return blocks, w, tail


def table(d, name):
    p = pathlib.Path(d) / "wavelift-cuda-sass"
    src, ann = (p / f"{name}.cu").read_text(), (p / f"{name}.sass").read_text()
    cat = categorize(src)
    blocks, w, tail = common(ann, src)
    c = collections.Counter()
    for i, wt in w.items():
        for _, op, ln in blocks[i]:
            wt = 1.0 / 8 if ln in tail else 1.0  # (warp 0 of 8 only)
            k = (
                "control (branches, reconvergence)"
                if re.match(r"(BSSY|BSYNC|BRA|NOP|WARPSYNC)\b", op)
                and cat.get(ln) not in ("store + written-map mark",)
                else cat.get(ln, "guest arithmetic")
            )
            c[k] += wt
    static = sum(1 for l in ann.splitlines() if re.match(r"[0-9a-f]{4,} ", l))
    return c, sum(c.values()), CS.hot_count(ann, src), static


dirs = sys.argv[1:]
for name in ("shade", "vadd32", "vadd64"):
    rows = [table(d, name) for d in dirs]
    print(f"\n{name}: per-warp common-path estimate (SASS instructions)")
    print(f"  {'':40s}" + "".join(f"{pathlib.Path(d).name:>10s}" for d in dirs))
    for k in CATS:
        print(f"  {k:40s}" + "".join(f"{r[0].get(k, 0):10.1f}" for r in rows))
    print(f"  {'TOTAL common path':40s}" + "".join(f"{r[1]:10.1f}" for r in rows))
    print(f"  {'hot set (tools/cuda_sass.py proxy)':40s}" + "".join(f"{r[2]:10d}" for r in rows))
    print(f"  {'static SASS instructions':40s}" + "".join(f"{r[3]:10d}" for r in rows))
