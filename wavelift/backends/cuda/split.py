"""A module's source as separately compiled units: the fast first build of a big module on a
machine with many cores (compile.fast_compile; decision 0009, amendment "split builds").

NVRTC's time on a big module is one giant ``wl_main``: NVVM and then ptxas on a single function,
on one core, and ptxas's time grows faster than the function.  Split, the blocks go to parts of
about PART_BYTES of source each, every part one function compiled as its own NVRTC program
(``-rdc=true``) in its own thread, and a link step joins them (compile.link_cubins).  The state
a block reads and writes besides its own temporaries -- the registers, the lane's scratch words,
the instruction and lane counters, the exchange offset and the barrier's resume point -- lives
in a struct (``WlSt``): a part copies what it uses into locals on entry and back on exit, runs
its blocks with their own gotos between them, and returns where control goes next (a block
index, or STOP / DONE / PARK).  wl_main keeps its prologue and loops over the parts.  Every
statement is the one codegen generated, in the same order: only where the registers live
between parts differs (slower code, replaced by the optimising build from the background).

This works on codegen's own text (its markers below; numbers and names made from numbers only),
so a split build is a function of the source that keys the module.
"""

from __future__ import annotations

import re

# kernel_source's markers: where wl_main's prologue ends, where its blocks start and end
PROLOGUE_END = "//@wl-prologue-end"
BLOCKS = "//@wl-blocks"
BLOCKS_END = "//@wl-blocks-end"
PART_BYTES = 100_000  # block source per part (int64_div's 1.9 MB: ~20 parts; one of its blocks is 156 kB)
# (WAVELIFT_CUDA_LDSBASE=kept; decision 0047's amendment h118) the LDS window's shared address,
# made once and kept in a register (the empty asm: else NVVM makes it again inside each
# predicated access of a loop): wl_main's prologue, and a part whose blocks use it
LDS_BASE = 'u32 wl_sb = (u32)__cvta_generic_to_shared(wl_smem); asm("" : "+r"(wl_sb));'
TEST_PART_BYTES = 2048  # WAVELIFT_CUDA_SPLIT=on: parts of a few blocks (tests, GPU checks)
STOP, DONE, PARK = -1, -2, -3  # a part's result besides a block index

_LABEL = re.compile(r"^B(\d+): \{$", re.M)
# the kernel's last statement, the wave's count (wv: its wave in the group; wg with several
# workgroups per block, decision 0046), or the block's (codegen.stats_form: block)
_COUNT = re.compile(r"^  (?:if \(w[vg] < wpg\) )?wl_count_", re.M)
_GOTO = re.compile(r"goto B(\d+);")


def split_source(src: str, most: int = 64, part_bytes: int = PART_BYTES) -> list[str] | None:
    """-> [the unit holding wl_main, part 0, part 1, ...]: at most ``most`` parts of about
    ``part_bytes`` of block source, or None (no markers, or too little source for two parts)."""
    head, sep, rest = src.partition('extern "C" __global__')
    pro, s1, rest = rest.partition("\n" + PROLOGUE_END + "\n")
    mid, s2, rest = rest.partition("\n" + BLOCKS + "\n")
    body, s3, tail = rest.partition("\n" + BLOCKS_END + "\n")
    count = _COUNT.search(tail)
    if not (sep and s1 and s2 and s3) or count is None:
        return None
    body += "\n"
    labels = list(_LABEL.finditer(body))
    at = [m.start() for m in labels]
    nparts = min(most, -(-len(body) // part_bytes))
    if nparts < 2 or len(at) < 2:
        return None
    blocks = [(int(m.group(1)), body[m.start() : b]) for m, b in zip(labels, at[1:] + [len(body)])]
    parts: list[list[tuple[int, str]]] = [[]]
    done = 0
    for b in blocks:  # in program order, cut where the running size passes each part's share
        if parts[-1] and done >= len(body) * len(parts) / nparts and len(parts) < nparts:
            parts.append([])
        parts[-1].append(b)
        done += len(b[1])
    if len(parts) < 2:
        return None
    owner = {bi: k for k, p in enumerate(parts) for bi, _ in p}
    regs = re.findall(r"^  u32 ([sv]\d+) = 0u;$", pro, re.M)
    m = re.search(r"^  u32 scr\[(\d+)\];$", pro, re.M)
    nscr = int(m.group(1)) if m else 0
    wv = re.search(r"const u32 WV = (\d+)u;", pro)
    if wv is None:
        return None
    # a program with s_barrier: ended waves meet the others' barriers at wl_main's loop (a
    # phase's barrier, or a barrier at the s_barrier itself: codegen, decision 0047)
    barrier = "__syncthreads_and(done)" in tail
    struct = (
        "struct WlSt { "
        + "".join(f"u32 {r}; " for r in regs)
        + (f"u32 scr[{nscr}]; " if nscr else "")
        + "u64 icnt; u32 ic, lc, rl, xo, lane, wv, t; int pc; WlCtx* C; u32* X; };\n"
    )
    decl = "".join(f'extern "C" __device__ int wl_part_{k}(WlSt* S, int at);\n' for k in range(len(parts)))
    units = [_main(head, struct + decl, pro, regs, nscr, barrier, blocks[0][0], owner, tail[count.start() :])]
    for k, part in enumerate(parts):
        units.append("#define WL_PART 1\n" + head + struct + _part(k, part, owner, regs, nscr, wv.group(1)))
    return units


def _main(head, decl, pro, regs, nscr, barrier, first, owner, count) -> str:
    put = "".join(f"S.{r} = {r}; " for r in regs)
    if nscr:
        put += f"for (u32 k = 0; k < {nscr}u; k++) S.scr[k] = scr[k]; "
    cases = " ".join(f"case {bi}: r = wl_part_{k}(&S, at); break;" for bi, k in sorted(owner.items()))
    run = (
        f"  if (!done) {{ int at = {'S.pc' if barrier else first};\n"
        f"    for (;;) {{ int r; switch (at) {{ {cases} default: r = {STOP}; }}\n"
        f"      if (r >= 0) {{ at = r; continue; }} if (r != {PARK}) done = true; break; }} }}\n"
    )
    if barrier:
        run = f"  for (;;) {{\n{run}  if (__syncthreads_and(done)) break;\n  }}\n"
    return (
        head
        + decl
        + 'extern "C" __global__'
        + pro
        + "\n  WlSt S; "
        + put
        + "S.icnt = icnt; S.ic = ic; S.lc = lc; S.rl = rl; S.xo = xo; S.pc = pc;\n"
        + "  S.lane = lane; S.wv = wv; S.t = t; S.C = &C; S.X = X;\n"
        + run
        + "  icnt = S.icnt; ic = S.ic; lc = S.lc;\n"
        + count
    )


def _part(k, part, owner, regs, nscr, wv) -> str:
    text = "".join(t for _, t in part)
    # a goto to another part's block: leave with its index
    text = _GOTO.sub(
        lambda m: m.group(0) if owner[int(m.group(1))] == k else f"{{ wl_nx = {m.group(1)}; goto WL_OUT; }}",
        text,
    )
    used = set(re.findall(r"\b([sv]\d+)\b", text))
    mine = [r for r in regs if r in used]
    scr = nscr and re.search(r"\bscr\b", text)
    get = "".join(f"u32 {r} = S->{r}; " for r in mine)
    put = "".join(f"S->{r} = {r}; " for r in mine)
    if scr:
        get += f"u32 scr[{nscr}]; for (u32 k = 0; k < {nscr}u; k++) scr[k] = S->scr[k]; "
        put += f"for (u32 k = 0; k < {nscr}u; k++) S->scr[k] = scr[k]; "
    entry = " ".join(f"case {bi}: goto B{bi};" for bi, _ in part)
    if re.search(r"\bwl_sb\b", text):  # (WAVELIFT_CUDA_LDSBASE=kept) as wl_main's prologue
        get += LDS_BASE + " "
    # the hoisted window bases the part's accesses use (WAVELIFT_CUDA_HOIST=loops), made again
    # here as wl_main's prologue makes them
    get += "".join(
        f"u8* wl_gp{j} = wl_gbase(C, {j}u); WL_KEEP(wl_gp{j}); "
        for j in sorted(set(re.findall(r"\bwl_gp(\d+)\b", text)), key=int)
    )
    return (
        f'extern "C" __device__ __noinline__ int wl_part_{k}(WlSt* S, int at) {{\n'
        "  extern __shared__ __align__(16) u8 wl_smem[]; (void)wl_smem;\n"
        f"  const u32 WV = {wv}u, lane = S->lane, wv = S->wv, t = S->t; (void)WV; (void)lane; (void)wv; (void)t;\n"
        "  WlCtx& C = *S->C; u32* X = S->X; (void)C; (void)X;\n"
        f"  {get}\n"
        "  u64 icnt = S->icnt; u32 ic = S->ic, lc = S->lc, rl = S->rl, xo = S->xo; int pc = S->pc;\n"
        f"  int wl_nx = {STOP};\n"
        f"  switch (at) {{ {entry} default: goto WL_OUT; }}\n"
        + text
        + f"WL_STOP:\n  wl_nx = {STOP}; goto WL_OUT;\n"
        + f"WL_DONE:\n  wl_nx = {DONE}; goto WL_OUT;\n"
        + f"WL_PARK:\n  wl_nx = {PARK};\n"
        + "WL_OUT:\n"
        + f"  {put}\n"
        + "  S->icnt = icnt; S->ic = ic; S->lc = lc; S->rl = rl; S->xo = xo; S->pc = pc;\n"
        + "  return wl_nx;\n}\n"
    )
