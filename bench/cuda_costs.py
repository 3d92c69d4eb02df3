"""What parts of a translated CUDA kernel cost: kernel time of the module as generated next to
variants with one part cut out of its source, in one device call (measurement only: the
variants are unsound and their results are not looked at).

    python bench/cuda_costs.py [VARIANTS] [DISPATCHES]     # e.g. base,nostats vadd64,shade

VARIANTS (comma-separated, default all): base; nostorebar (no wave sync before a wave64 store);
noexecz (a wave64 zero test on the warp's own half: no bar.red); nobar (both); nowritten (no
written-map marks on stores); nostats (no instruction/lane count atomics at the end); all;
and sound ones by the backend's switches: eager (WAVELIFT_CUDA_BLENDS=eager), occ2048 / occ1024
(WAVELIFT_CUDA_OCCUPANCY: the register bound's threads per SM), nopasses (WAVELIFT_CUDA_PASSES=off:
the IR without the pass pipeline, decision 0028), fast (WAVELIFT_CUDA_TIER=fast: the first
tier's --Ofast-compile build, never replaced; 0009's 2026-12-05 amendment); gpb1, gpbauto, gpb2,
gpb8, gpb16 (WAVELIFT_CUDA_GROUPS_PER_BLOCK: workgroups per CUDA block, decision 0046; base
follows the environment's setting, auto by default).
phase: s_barrier as phases (WAVELIFT_CUDA_BARRIERS=phase: the lowering before decision 0047).
occstep: a module whose occupancy-bounded build spills built again for one block fewer per SM
(WAVELIFT_CUDA_OCCUPANCY_STEP=32: kept if it spills at most 32 bytes; matmul16 at 48 registers).
ldslanes: WAVELIFT_CUDA_LDS=lanes (LDS addresses and atomic data also proved in the lanes EXEC
leaves active: histogram's atomic unchecked, a native shared increment).
ldschecked, ldsdirect: every LDS access bounds-tested and read in the shifted form
(WAVELIFT_CUDA_LDS=checked: the lowering before 0047's amendment "LDS accesses in their direct
form"), or the proved direct forms (WAVELIFT_CUDA_LDS=direct, the default).
spans, spansldsdirect: a block's global loads and stores at known offsets from one base tested
once against one guessed window (WAVELIFT_CUDA_SPANS=block; 0047's amendment on global accesses at known offsets), alone
and with the LDS direct forms (compare with base and ldsdirect).
straight: a program without loops (vadd, shade) launched without its blocks' budget checks when
the budget covers its longest path (WAVELIFT_CUDA_BUDGET=straight; 0009's amendment);
noretest: a global access whose direct form fails searches without testing its guess again
(WAVELIFT_CUDA_RETEST=off); straightnoretest: both; griddim: a 1-D or 2-D grid's group ids
without the divisions it needs not (WAVELIFT_CUDA_GRIDDIM=baked); h97: all three, h97gpb8 and
h97gpb16 with 8 or 16 workgroups a CUDA block.  wavesync: a wave sync only between two accesses
of one memory, the LDS or global and scratch (WAVELIFT_CUDA_WAVESYNC=spaces; 0047's amendment h101);
commute: that and none between two atomic adds whose values nobody reads (=commute).
execknown: EXEC bits and lane counts as constants where the LDS analysis proves EXEC whole
(WAVELIFT_CUDA_EXEC=known; 0047's amendment h106); execspaces: that and wavesync; nanchain,
nanchain8, nanchain16: f32 fma chains of at most 4, 8, 16 fmas tested for NaN once at their end
(WAVELIFT_CUDA_NAN=chain, chain8, chain16; same amendment);
h106: execknown and nanchain (the default since session 46); h106spaces: those and wavesync;
pre46: neither (WAVELIFT_CUDA_EXEC=every, WAVELIFT_CUDA_NAN=every).
atomics: a block's EXEC blends deferred to its end across an atomic under their mask
(WAVELIFT_CUDA_BLENDS=atomics; 0047's amendment h115); hoist: the window bases of the global
accesses in loops made once in the prologue (WAVELIFT_CUDA_HOIST=loops; same amendment); h115:
h106 and both; h115more: that, wavesync and noretest.
ldsbase: the LDS window's shared address made once in the prologue and kept, each direct LDS
access from it (WAVELIFT_CUDA_LDSBASE=kept; 0047's amendment h118); h115spaces: h115 and
wavesync; h118: h115spaces and ldsbase.
induction: HOIST=induction (below) alone, on the defaults.
h127: h118 with a one-block loop's global load at base + stride * r tested once where the loop is
entered for every address it reaches, its copy reading it directly (WAVELIFT_CUDA_HOIST=induction;
0047's amendment h127).
full: a module first built for a full SM (WAVELIFT_CUDA_OCCUPANCY_FULL=on; 0047's amendment h136);
h136: that and induction.
occauto: the full SM's build kept only without any spill (WAVELIFT_CUDA_OCCUPANCY_FULL=auto;
0047's amendment h143); h143: that and induction.  h136's two are the defaults since session 52;
pre52: the defaults before (HOIST=loops, OCCUPANCY_FULL=off).
bits: the written map as bits (WAVELIFT_CUDA_MAP=bits; 0049's amendment h111); bitspan: that,
a unit-stride warp store marking its range a word per lane (WAVELIFT_CUDA_MAPMARK=span; h139).
mapatomic: every bit-map word by atomicOr (WAVELIFT_CUDA_MAPFILL=atomic), the kernels before 0049's
session-52 amendment (base: a word a warp store covers whole set by a plain store).
markgeneral: every store's bit-map marks by the warp-aggregated form (WAVELIFT_CUDA_MAPMARK=general),
the kernels before 0049's amendment h160 (base: an aligned group of 32 / nb lanes storing one map
word in lane order sets it by its first lane, no __match_any_sync).
proved: the lean build of a dispatch in place on a proof (WAVELIFT_CUDA_PROVED=lean; 0049's
amendment h148; timed on the arena with the proved windows as guesses, as timing repeats are).
f2i: f32 -> u32 / i32 as one cvt.rzi (WAVELIFT_CUDA_F2I=cvt, the default since session 51; f2iwl: wl_f2i's
compares; 0009's amendment h146); statsblock:
the instruction and lane counts added once a CUDA block (WAVELIFT_CUDA_STATS=block; same
amendment); h146: both; h146noretest: both and noretest.
statspair: per wave, both counts in one atomic instruction of two lanes (WAVELIFT_CUDA_STATS=pair;
0009's amendment h162); statswave: per wave, two atomics (=wave, the default before session 53:
base is `auto`, block for a wave32 kernel that may, else pair).
pre149: the kernel as before 0009's amendment h149 (sound): the group index in 64 bits, the group
total multiplied by every thread, no thread index assumed below the block, a load's pointer from
its window's base, not the host-made WL_GA (compare with base, which has them).
slots1024, slots4096, slots16384: the waves' counts added to 1024 / 4096 / 16384 slots of a buffer
of their own, wave % N, folded into the report's 256 by wl_fold after each launch
(WAVELIFT_CUDA_COUNT_SLOTS; 0009's amendment h152; sound): fewer waves on one address.  Their
times include wl_fold's launch (it is timed with the kernel's); wl_fold alone is timed before the
dispatches ("wl_fold N slots: ... us", back to back) for subtracting.
DISPATCHES: vadd32, vadd64 (full-screen vadd, clang), shade (full-screen shade), collatz (65,536
lanes of the divergent loop), and bench/kernels/lds.cl's LDS and barrier kernels: matmul16 (1024^2,
16x16 tiles), stencil5 (1920x1080, 5x5 through an LDS tile), histogram (8.3 M words, LDS atomics),
reduce1024 and scan256 (4,096 groups).  Each variant
gets its own module cache; kernel times are the best of three rounds of 30 back-to-back
launches (WAVELIFT_CUDA_TIMING_REPEAT), interleaved; the native kernel is timed alongside.
With $OUT set, each module's CUDA source and SASS (cuobjdump) are written there.
"""

import copy
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_check as G  # noqa: E402

import wavelift.backends.cuda as WC  # noqa: E402
from wavelift.backends.cuda.codegen import P_NGROUPS  # noqa: E402
from wavelift.run.execute import execute_dispatch  # noqa: E402

VARIANTS = {
    "base": [],
    "nostorebar": [
        (
            r'  asm volatile\("bar\.sync %0, 64;" :: "r"\(wv \+ 1u\) : "memory"\);\n'
            r"(  if \(\(t\d+\)\) \{ const u32 dw)",
            r"\1",
        )
    ],
    "noexecz": [
        (r"wl_any64\(\(\(u32\)\((t\d+)\) != 0u\), wv \+ 1u\)", r"__any_sync(WL_FULL, ((u32)(\1) != 0u))")
    ],
    "nowritten": [(r"\(\(u32\*\)q\)\[k\] = 0x01010101u;", "")],
    # (every form: per wave, wl_count_ or wl_count_pair; once a block, wl_count_block)
    "nostats": [
        (
            r"  (?:if \(w[vg] < wpg\) )?wl_count_(?:pair|block)?\((?:C\.wave, lane, )?(?:lane < 32u, )?icnt \+ ic, lc\);",
            "",
        )
    ],
}
# the prologue and loads before 0009's amendment h149 (sound: the same numbers): no thread index
# assumed, the group index in 64 bits, the group total multiplied in every thread, a load's
# pointer from its window's base (WL_GA unused)
VARIANTS["pre149"] = [
    (r"  WL_ASSUME\(threadIdx\.x < WL_BLOCK_THREADS\);\n", ""),
    (r"const u64 g = \(u64\)\(\(u32\)group_base \+ \(u32\)\((.*)\)\);", r"const u64 g = group_base + \1;"),
    (r"const bool wl_in = [^;]*;", f"const bool wl_in = g < (u64)gx * gy * P[{P_NGROUPS + 2}];"),
    (
        r"wl_gload_b\(C, C\.arena, addr, mask, nb, w, words, instr, slot, lane, record, true\);",
        "wl_gload_b(C, wl_gbase(C, slot), addr, mask, nb, w, words, instr, slot, lane, record);",
    ),
]
VARIANTS["nobar"] = VARIANTS["nostorebar"] + VARIANTS["noexecz"]
VARIANTS["all"] = VARIANTS["nobar"] + VARIANTS["nowritten"] + VARIANTS["nostats"]
# variants made by the backend's own switches (sound: A/B of a code-generation choice)
ENV = {
    "eager": {"WAVELIFT_CUDA_BLENDS": "eager"},  # EXEC blends at every VGPR write
    "occ2048": {"WAVELIFT_CUDA_OCCUPANCY": "2048"},  # bound registers for 2048 threads/SM
    "occ1024": {"WAVELIFT_CUDA_OCCUPANCY": "1024"},
    # a spilling bound build tried again one block fewer per SM, 32 bytes of spill allowed
    "occstep": {"WAVELIFT_CUDA_OCCUPANCY_STEP": "32"},
    # LDS addresses also proved in the lanes EXEC leaves active (0047's amendment)
    "ldslanes": {"WAVELIFT_CUDA_LDS": "lanes"},
    "nopasses": {"WAVELIFT_CUDA_PASSES": "off"},  # the IR as the frontends built it (0028)
    "fast": {"WAVELIFT_CUDA_TIER": "fast"},  # the first tier's build only (--Ofast-compile, 0009)
    "phase": {"WAVELIFT_CUDA_BARRIERS": "phase"},  # s_barrier as phases (before decision 0047)
    # every LDS access tested and shifted (before 0047's amendment "LDS accesses in their direct form")
    "ldschecked": {"WAVELIFT_CUDA_LDS": "checked"},
    "ldsdirect": {"WAVELIFT_CUDA_LDS": "direct"},  # the proved forms (0047's amendment)
    # a block's global accesses at known offsets from one base tested once (0009's amendment
    # 2026-12-06), with and without the LDS direct forms
    "spans": {"WAVELIFT_CUDA_SPANS": "block"},
    "spansldsdirect": {"WAVELIFT_CUDA_SPANS": "block", "WAVELIFT_CUDA_LDS": "direct"},
    # a program without loops launched without per-block budget checks where the budget covers
    # its longest path (0009's amendment on budget checks of programs without loops)
    "straight": {"WAVELIFT_CUDA_BUDGET": "straight"},
    # wl_gload / wl_gstore's rare path without testing the guess again (0009's amendment h97)
    "noretest": {"WAVELIFT_CUDA_RETEST": "off"},
    "straightnoretest": {"WAVELIFT_CUDA_BUDGET": "straight", "WAVELIFT_CUDA_RETEST": "off"},
    # the group ids of a 1-D / 2-D grid without the divisions it needs not (WAVELIFT_CUDA_GRIDDIM)
    "griddim": {"WAVELIFT_CUDA_GRIDDIM": "baked"},
    # all three of 0009's amendment h97, alone and with 8 or 16 workgroups a block (shade: 8x8
    # groups, 512 or 1024 threads a block -- native's best shape is 32x16)
    **{
        f"h97{'' if n is None else 'gpb' + n}": {
            "WAVELIFT_CUDA_BUDGET": "straight",
            "WAVELIFT_CUDA_RETEST": "off",
            "WAVELIFT_CUDA_GRIDDIM": "baked",
            **({} if n is None else {"WAVELIFT_CUDA_GROUPS_PER_BLOCK": n}),
        }
        for n in (None, "8", "16")
    },
}
# wave syncs only between accesses of one memory (LDS apart from global and scratch;
# WAVELIFT_CUDA_WAVESYNC=spaces, 0047's amendment h101)
ENV["wavesync"] = {"WAVELIFT_CUDA_WAVESYNC": "spaces"}
ENV["commute"] = {"WAVELIFT_CUDA_WAVESYNC": "commute"}  # also none between unread atomic adds
# EXEC bits and lane counts as constants where EXEC is proved whole (WAVELIFT_CUDA_EXEC=known;
# 0047's amendment h106), alone and with the wave syncs by memory
ENV["execknown"] = {"WAVELIFT_CUDA_EXEC": "known"}
ENV["execspaces"] = {"WAVELIFT_CUDA_EXEC": "known", "WAVELIFT_CUDA_WAVESYNC": "spaces"}
# f32 fma chains tested for NaN at their end (WAVELIFT_CUDA_NAN=chain; 0047's amendment h106),
# alone and with the two above
ENV["nanchain"] = {"WAVELIFT_CUDA_NAN": "chain"}  # (chains of at most 4 fmas)
ENV["nanchain8"] = {"WAVELIFT_CUDA_NAN": "chain8"}
ENV["nanchain16"] = {"WAVELIFT_CUDA_NAN": "chain16"}
ENV["h106"] = {"WAVELIFT_CUDA_EXEC": "known", "WAVELIFT_CUDA_NAN": "chain"}
ENV["h106spaces"] = {**ENV["h106"], "WAVELIFT_CUDA_WAVESYNC": "spaces"}
# the forms before session 46 made h106's two the default (EXEC tested, every fma NaN-tested)
ENV["pre46"] = {"WAVELIFT_CUDA_EXEC": "every", "WAVELIFT_CUDA_NAN": "every"}
# the forms before session 47 made h115's two the default (blends not deferred across atomics,
# window bases at the access)
ENV["pre47"] = {"WAVELIFT_CUDA_BLENDS": "blocks", "WAVELIFT_CUDA_HOIST": "access"}

# a block's EXEC blends deferred across atomics (WAVELIFT_CUDA_BLENDS=atomics) and the window
# bases of global accesses in loops made once (WAVELIFT_CUDA_HOIST=loops; 0047's amendment h115),
# alone and with h106's two; h115more: those and the earlier opt-ins that bear on these loops
# (wavesync, and no second guess test on a failed direct access: WAVELIFT_CUDA_RETEST=off)
ENV["atomics"] = {"WAVELIFT_CUDA_BLENDS": "atomics"}
ENV["hoist"] = {"WAVELIFT_CUDA_HOIST": "loops"}
ENV["h115"] = {**ENV["h106"], **ENV["atomics"], **ENV["hoist"]}
ENV["h115more"] = {**ENV["h115"], "WAVELIFT_CUDA_WAVESYNC": "spaces", "WAVELIFT_CUDA_RETEST": "off"}
# the LDS window's shared address made once and kept (WAVELIFT_CUDA_LDSBASE=kept; 0047's
# amendment h118), alone; h115spaces: h115 and wavesync; h118: those and ldsbase
ENV["ldsbase"] = {"WAVELIFT_CUDA_LDSBASE": "kept"}
ENV["h115spaces"] = {**ENV["h115"], **ENV["wavesync"]}
ENV["h118"] = {**ENV["h115spaces"], **ENV["ldsbase"]}
# a one-block loop's global load at base + stride * r tested once for the loop's whole range
# (WAVELIFT_CUDA_HOIST=induction, which also hoists the bases as `loops`; 0047's amendment h127)
ENV["h127"] = {**ENV["h118"], "WAVELIFT_CUDA_HOIST": "induction"}
ENV["induction"] = {"WAVELIFT_CUDA_HOIST": "induction"}  # (alone, on the defaults)
# a module first built for a full SM (2048 threads on sm_90: 8 blocks of 256), kept when it spills
# at most SPILL_OK_BYTES (WAVELIFT_CUDA_OCCUPANCY_FULL=on; 0047's amendment h136), alone; h136:
# that and HOIST=induction (the histogram then 32 registers, all 1024 blocks resident at once)
ENV["full"] = {"WAVELIFT_CUDA_OCCUPANCY_FULL": "on"}
ENV["h136"] = {**ENV["induction"], **ENV["full"]}
# the full SM's build kept only where ptxas reports no spill (OCCUPANCY_FULL=auto; 0047's
# amendment h143), alone and with HOIST=induction
ENV["occauto"] = {"WAVELIFT_CUDA_OCCUPANCY_FULL": "auto"}
ENV["h143"] = {**ENV["induction"], **ENV["occauto"]}
# the defaults before session 52 (HOIST=loops, no full-SM build): h136's two are the defaults since
ENV["pre52"] = {"WAVELIFT_CUDA_HOIST": "loops", "WAVELIFT_CUDA_OCCUPANCY_FULL": "off"}
# the written map as bits (WAVELIFT_CUDA_MAP=bits: warp-aggregated atomicOr, 0049's amendment
# h111), and with a unit-stride warp store's range marked a word per lane, no __match_any_sync
# (WAVELIFT_CUDA_MAPMARK=span; 0049's amendment h139); bytes: the byte map (base: the defaults,
# the bit map since session 49)
ENV["bits"] = {"WAVELIFT_CUDA_MAP": "bits"}
ENV["bytes"] = {"WAVELIFT_CUDA_MAP": "bytes"}
ENV["bitspan"] = {**ENV["bits"], "WAVELIFT_CUDA_MAPMARK": "span"}
# every bit-map word by atomicOr (WAVELIFT_CUDA_MAPFILL=atomic), the kernels before 0049's
# session-52 amendment; base stores a word its warp store covers whole
ENV["mapatomic"] = {"WAVELIFT_CUDA_MAPFILL": "atomic"}
# every store marked by the general form (WAVELIFT_CUDA_MAPMARK=general), the kernels before 0049's
# amendment h160; base marks an aligned lane group's whole map word by one plain store
ENV["markgeneral"] = {"WAVELIFT_CUDA_MAPMARK": "general"}
# session 43's opt-in settings together (h97's three, h98's LDS values in the active lanes and
# occupancy step)
ENV["s43"] = {**ENV["h97"], **ENV["ldslanes"], **ENV["occstep"]}
# those of them made default after the H100 run of session 43 (straight kernels, the grid's
# dimensions baked, LDS values in the active lanes)
ENV["s43d"] = {
    "WAVELIFT_CUDA_BUDGET": "straight",
    "WAVELIFT_CUDA_GRIDDIM": "baked",
    "WAVELIFT_CUDA_LDS": "lanes",
}
# 0009's amendment h146: f32 -> u32 / i32 as one cvt.rzi (WAVELIFT_CUDA_F2I=cvt); the counts
# added once a CUDA block, not two 64-bit atomics a wave (WAVELIFT_CUDA_STATS=block); both; and
# both with RETEST=off (the guess tested once an access: 2 SASS instructions fewer each)
ENV["f2i"] = {"WAVELIFT_CUDA_F2I": "cvt"}
ENV["f2iwl"] = {"WAVELIFT_CUDA_F2I": "wl"}  # (cvt is the default since session 51: wl_f2i)
ENV["statsblock"] = {"WAVELIFT_CUDA_STATS": "block"}
ENV["h146"] = {**ENV["f2i"], **ENV["statsblock"]}
ENV["h146noretest"] = {**ENV["h146"], "WAVELIFT_CUDA_RETEST": "off"}
# 0049's amendment h148: the lean build a dispatch run in place on a proof launches
# (WAVELIFT_CUDA_PROVED=lean): no search, hint or escape record behind a failed window test.
# Timing repeats never run in place, so its timed launches run on the arena as every variant's
# do, with the lean build and the proved windows as guesses, as in place (main: ``run``)
ENV["proved"] = {"WAVELIFT_CUDA_PROVED": "lean"}
# 0009's amendment h152: the counts in N slots (wave % N) of their own, folded into the report's 256
ENV.update({f"slots{n}": {"WAVELIFT_CUDA_COUNT_SLOTS": str(n)} for n in (1024, 4096, 16384)})
# 0009's amendment h162: per wave as one atomic instruction of two lanes (=pair); two (=wave)
ENV["statspair"] = {"WAVELIFT_CUDA_STATS": "pair"}
ENV["statswave"] = {"WAVELIFT_CUDA_STATS": "wave"}
VARIANTS.update({k: [] for k in ENV})
DISPATCHES = {
    "vadd32": lambda: G.vadd_dispatch(1920 * 1088),
    "vadd64": lambda: G.vadd_dispatch(1920 * 1088, 64),
    "shade": lambda: G.shade_dispatch(1920, 1080),
    "collatz": lambda: G.collatz_dispatch(65536),
    # bench/kernels/lds.cl: LDS and barriers (issue 24 item 5)
    **{k: (lambda k=k: G.lds_dispatch(k)) for k in G.LDS_KERNELS},
}


def main():
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else list(VARIANTS)
    which = sys.argv[2].split(",") if len(sys.argv) > 2 else list(DISPATCHES)
    current = ["base"]
    generate = WC.generate

    def variant(*a, **k):  # build_module calls this module's generate
        src, slots, pre = generate(*a, **k)
        for pat, rep in VARIANTS[current[0]]:
            src, n = re.subn(pat, rep, src)
            if not n:
                print(f"   ({current[0]}: nothing to cut for {pat[:40]!r})")
        return src, slots, pre

    WC.generate = variant
    import wavelift.backends.cuda.runtime as RT

    plain_run = RT.Runtime.run

    def run(rt):  # (``proved``: the lean build where the dispatch is proved, timed or not)
        if current[0] == "proved":
            rt._prove()
            if rt.lean is None and WC.wait_lean():  # (built in the background: 0049's h163)
                rt._prove()
            if rt.lean is None:
                print("   (proved: this dispatch is not proved whole: the module's own build)")
        return plain_run(rt)

    RT.Runtime.run = run
    for v in names:  # (wl_fold alone first, as the slotsN variants' times include it)
        n = int(ENV.get(v, {}).get("WAVELIFT_CUDA_COUNT_SLOTS", 256))
        if n > 256:
            print(
                f"wl_fold {n} slots: {time_fold(n) * 1e6:.2f} us (back to back, best of 3 x 30)", flush=True
            )
    arch = WC.device_arch()
    for d in which:
        mem, cfg, _, _, native = DISPATCHES[d]()
        nat = min(G.run_native(native, arch, 5)[0] for _ in range(3))
        caches, best = {}, {v: float("inf") for v in names}
        for _ in range(3):
            for v in names:
                current[0] = v
                for k in {k for e in ENV.values() for k in e}:
                    os.environ.pop(k, None)
                os.environ.update(ENV.get(v, {}))
                if v not in caches:  # (the module's first dispatch has no guesses)
                    os.environ["WAVELIFT_CUDA_CACHE"] = tempfile.mkdtemp()
                    caches[v] = {}
                    execute_dispatch(copy.deepcopy(mem), cfg, backend="cuda", mode="lane", cache=caches[v])
                os.environ["WAVELIFT_CUDA_TIMING_REPEAT"] = "30"
                r = execute_dispatch(copy.deepcopy(mem), cfg, backend="cuda", mode="lane", cache=caches[v])
                del os.environ["WAVELIFT_CUDA_TIMING_REPEAT"]
                best[v] = min(best[v], r.stats.get("device_time_s") or float("inf"))
        if os.environ.get("OUT"):
            for v, c in caches.items():
                for mod in c.values():
                    if hasattr(mod, "cubin"):
                        base = os.path.join(os.environ["OUT"], f"{d}-{v}")
                        open(base + ".cu", "w").write(mod.source)
                        open(base + ".cubin", "wb").write(mod.cubin)
                        sass = subprocess.run(
                            ["cuobjdump", "-sass", base + ".cubin"], capture_output=True, text=True
                        )
                        open(base + ".sass", "w").write(sass.stdout)
        print(
            f"{d}: native {nat * 1e6:.1f} us; "
            + "  ".join(f"{v} {b * 1e6:.1f} us ({b / nat:.2f}x)" for v, b in best.items()),
            flush=True,
        )


def time_fold(n: int) -> float:
    """resident.py's wl_fold over ``n`` count slots (zero: the sums as after a kernel), seconds a
    launch: 30 back to back between two events, best of 3."""
    import cupy as cp

    from wavelift.backends.cuda import resident as R

    ops = R.CuPyOps()
    wide, stats = cp.zeros(2 * n, cp.uint64), cp.zeros(8 + 512, cp.uint64)
    go = ops.fold_call(wide, n // 256, stats)
    go()
    a, b = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for _ in range(3):
        a.record()
        for _ in range(30):
            go()
        b.record()
        b.synchronize()
        best = min(best, cp.cuda.get_elapsed_time(a, b) / 1000.0 / 30)
    return best


if __name__ == "__main__":
    main()
