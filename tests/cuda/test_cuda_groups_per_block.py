"""Several workgroups per CUDA block (decision 0046; codegen.groups_per_block, generate's
``groups``, runtime.launch_groups, split.py's count line): a module with no LDS op and no
s_barrier, dispatched with no LDS, runs WAVELIFT_CUDA_GROUPS_PER_BLOCK workgroups in each CUDA
block, each in its own slot of its waves' threads.

Without a GPU: the setting's choice and caps; `1` gives the one-workgroup source byte for byte;
the launch chunks and shared bytes; the module key; NVRTC builds (wave32, wave64) and split
builds of such sources; and the generated prologue itself, compiled for the host and run over
every thread of every launch the runtime makes, against a model of the dispatch (every lane of
every wave of every group exactly once, with its group id, wave number, EXEC, local ids; slots
past the last group done and uncounted; named barrier ids, exchange areas and wave-mode scratch
slots distinct and in range).  With a GPU (``-m cuda``): dispatches with GPB 4, 8 and auto, wave32
and wave64, partial groups, a group count no multiple of GPB, wave-mode scratch and launches cut
into chunks equal NumPy bit for bit."""

from __future__ import annotations

import copy
import ctypes
import dataclasses
import os
import pathlib
import re
import sys

import host_build  # (tests/cuda/host_build.py: the g++ build rig)
import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import test_cuda_backend as T  # noqa: E402

from wavelift.backends.cuda import codegen as G  # noqa: E402
from wavelift.backends.cuda import compile as cc  # noqa: E402
from wavelift.backends.cuda import runtime as RT  # noqa: E402
from wavelift.backends.cuda import split  # noqa: E402

SETTING = "WAVELIFT_CUDA_GROUPS_PER_BLOCK"


def _vadd(wave):
    mem, cfg, _, _ = T._vadd_dispatch(wave)
    prog, base = T.translate_dispatch(mem, cfg)
    return mem, cfg, prog, base


def _src(prog, cfg, base, groups, mode="lane"):
    return G.generate(prog, cfg.wave_size, mode, cfg.scratch_wave_bytes, base, G.baked_params(cfg), groups)[0]


# ---- the choice ----------------------------------------------------------------------------


def test_groups_per_block_choice():
    """auto: about 256 threads a block; N: N, capped at 1024 threads and (wave64) 15 waves;
    any LDS at the dispatch: 1; a bad setting is refused by name."""
    _, cfg, _, _ = _vadd(32)
    one = lambda block, wave=32, lds=0: dataclasses.replace(cfg, block=block, wave_size=wave, lds_bytes=lds)  # noqa: E731
    gpb = G.groups_per_block
    assert gpb(one((8, 8, 1)), "auto") == 4  # 64 threads: 4 a block
    assert gpb(one((8, 8, 1)), "") == 4 and gpb(one((8, 8, 1)), "AUTO") == 4
    assert gpb(one((256, 1, 1)), "auto") == 1
    assert gpb(one((48, 1, 1)), "auto") == 4  # 2 waves of 32 (the second partial): 64-thread slots
    assert gpb(one((48, 1, 1), 64), "auto") == 4  # 1 wave of 64
    assert gpb(one((100, 1, 1), 64), "auto") == 2  # 2 waves of 64
    assert gpb(one((8, 8, 1)), "1") == 1
    assert gpb(one((8, 8, 1)), "16") == 16
    assert gpb(one((8, 8, 1)), "64") == 16  # 1024 threads
    assert gpb(one((256, 1, 1)), "8") == 4
    assert gpb(one((8, 8, 1), 64), "64") == 15  # 15 waves of 64
    assert gpb(one((128, 1, 1), 64), "8") == 7  # 2 waves a group: 14 waves
    assert gpb(one((1024, 1, 1)), "8") == 1
    assert gpb(one((8, 8, 1), lds=512), "auto") == 1
    assert gpb(one((8, 8, 1), lds=512), "8") == 1
    for bad in ("0", "-2", "many"):
        with pytest.raises(ValueError, match=SETTING):
            gpb(one((8, 8, 1)), bad)


def test_one_group_per_block_is_the_one_workgroup_source(monkeypatch):
    """Setting 1: build_module generates exactly generate()'s one-workgroup source (no WL_GPB),
    for wave32 and wave64 and both scratch modes; other settings change the source only for
    programs without LDS and s_barrier."""
    import wavelift.backends.cuda as WC

    got = []
    real = WC.generate
    monkeypatch.setattr(WC, "generate", lambda *a, **k: got.append(real(*a, **k)) or got[-1])
    monkeypatch.setattr(WC, "tiered_compile", lambda *a, **k: (b"", 0.0, "nvrtc", None))
    monkeypatch.setenv(SETTING, "1")
    cases = [_vadd(32)[1:], _vadd(64)[1:]]
    for name in ("gfx1010/aco/scratch_game-w64.bin", "gfx1010/aco/lds_reduce-w64.bin"):
        _, prog, cfg, base, _ = T._named(name)
        cases.append((cfg, prog, base))
    for cfg, prog, base in cases:
        for mode in ("lane", "wave") if prog.uses_scratch else ("lane",):
            m = WC.build_module(("k", mode), prog, cfg, mode, arch="sm_90", use_disk=False, base_address=base)
            assert m.source == _src(prog, cfg, base, 1, mode) and m.groups == 1
            assert "#define WL_GPB" not in m.source and "wl_gs = " not in m.source
    monkeypatch.setenv(SETTING, "8")
    for cfg, prog, base in cases:
        m = WC.build_module(("k8",), prog, cfg, "lane", arch="sm_90", use_disk=False, base_address=base)
        lds = G.uses_space(prog, "lds")
        assert (m.groups == 1) == lds, (cfg.block, lds)
        assert (m.source == _src(prog, cfg, base, 1)) == lds
        if not lds:
            assert m.source == _src(prog, cfg, base, 8) and G.source_groups(m.source) == m.groups


def test_generate_keeps_groups_only_where_it_may():
    """The source says its GPB (WL_GPB, source_groups), its launch bound is GPB slots; a program
    with LDS or s_barrier, or a source without a baked block size, stays at one."""
    _, cfg, prog, base = _vadd(32)
    small = dataclasses.replace(cfg, block=(48, 1, 1))
    src = _src(prog, small, base, 4)
    assert G.source_groups(src) == 4 and "#define WL_GPB 4u\n" in src
    assert cc.block_threads(src) == 4 * 64  # 4 slots of 2 waves
    assert "threadIdx.x / 64u" in src and "(u64)blockIdx.x * WL_GPB + wl_gs" in src
    assert G.source_groups(_src(prog, small, base, 1)) == 1
    assert G.source_groups(_src(prog, cfg, base, 8)) == 4  # 256-thread groups: 1024 threads
    plain = G.generate(prog, 32, "lane", 0, base, (), 4)[0]  # no baked block: one a block
    assert G.source_groups(plain) == 1
    for name in ("gfx1010/aco/lds_reduce-w64.bin",):  # LDS and s_barrier
        _, p, c, b, _ = T._named(name)
        assert G.source_groups(_src(p, c, b, 8)) == 1


def test_module_key_holds_groups_per_block(monkeypatch):
    from wavelift.run.execute import module_key

    _, cfg, prog, _ = _vadd(32)
    small = lambda: dataclasses.replace(cfg, block=(64, 1, 1))  # noqa: E731 (a new object each time)
    monkeypatch.setenv(SETTING, "1")
    k1 = module_key(prog, small(), "lane", "cuda")
    monkeypatch.setenv(SETTING, "auto")
    k4 = module_key(prog, small(), "lane", "cuda")
    # (they differ in the one element that holds the groups a block, wherever key_extra puts it)
    diff = [i for i, (a, b) in enumerate(zip(k1, k4)) if a != b]
    assert len(k1) == len(k4) and len(diff) == 1 and (k1[diff[0]], k4[diff[0]]) == (1, 4)


# ---- launches ------------------------------------------------------------------------------


def test_launch_groups_are_whole_blocks(monkeypatch):
    """Every launch but the last a multiple of GPB, none past MAX_GRID blocks or (wave-mode
    scratch) MAX_SCRATCH_BYTES; GPB 1 as before (min of the total, the grid and the scratch)."""
    lg = RT.launch_groups
    assert lg(1000, 2, 0, 1) == 1000 and lg(1000, 2, 0, 8) == 1000 and lg(0, 2, 0, 4) == 1
    monkeypatch.setattr(RT, "MAX_GRID", 10)
    assert lg(1000, 2, 0, 1) == 10 and lg(1000, 2, 0, 4) == 40 and lg(35, 2, 0, 4) == 35
    monkeypatch.setattr(RT, "MAX_GRID", (1 << 31) - 1)
    monkeypatch.setattr(RT, "MAX_SCRATCH_BYTES", 1 << 20)
    wb = 4096  # 2 waves a group: 8 KiB a group, 128 groups a MiB
    assert lg(1000, 2, wb, 1) == 128 and lg(1000, 2, wb, 3) == 126 and lg(1000, 2, wb, 8) == 128
    assert lg(100, 2, wb, 3) == 100
    assert lg(1000, 2, 1 << 20, 4) == 4  # one block's scratch past the limit: one block a launch
    for total in (1, 7, 33, 129, 1000):
        for n in (1, 3, 4, 8):
            for w in (0, wb):
                c = lg(total, 2, w, n)
                starts = list(range(0, total, c))
                assert all((min(c, total - s) % n == 0) or s == starts[-1] for s in starts)
                assert -(-c // n) <= RT.MAX_GRID
                if w and c < total:
                    assert c * 2 * w <= RT.MAX_SCRATCH_BYTES or c == n


def _runtime(cfg):
    r = RT.Runtime.__new__(RT.Runtime)
    r.cfg, r.L = cfg, cfg.wave_size
    return r


def test_shared_bytes_hold_every_waves_exchange_area():
    _, cfg, _, _ = _vadd(64)
    small = dataclasses.replace(cfg, block=(100, 1, 1))  # 2 waves of 64
    one = _runtime(small)._shape(small, "lane", 1000, 3, 1)
    four = _runtime(small)._shape(small, "lane", 1000, 3, 4)
    x = 2 * G.XWORDS * 4
    assert one[5] == 2 * x and four[5] == 8 * x  # (no LDS: the exchange areas only)
    assert one[:5] == four[:5] and (one[6] == four[6]).all()  # the rest does not move


# ---- NVRTC ---------------------------------------------------------------------------------


@pytest.mark.parametrize("wave", [32, 64])
def test_sources_with_several_groups_compile(wave, monkeypatch):
    """NVRTC builds GPB 4, 8 and auto sources of a wave32 and a wave64 program, occupancy-bounded
    for the whole block, and a wave-mode scratch program (ACO, 8x8 groups)."""
    why = T._nvrtc_problem()
    if why:
        pytest.skip(f"NVRTC unavailable: {why}")
    monkeypatch.setenv("WAVELIFT_CUDA_OCCUPANCY_FULL", "off")  # (the usual bound's blocks)
    _, cfg, prog, base = _vadd(wave)
    small = dataclasses.replace(cfg, block=(48, 1, 1))
    for want in ("4", "8", "auto"):
        n = G.groups_per_block(small, want)
        src = _src(prog, small, base, n)
        assert G.source_groups(src) == n > 1
        cubin, log, minb = cc.nvrtc_build(src, "sm_90")
        assert cubin[:4] == b"\x7fELF" and minb in (0, max(1, cc.occupancy_threads() // (n * 64)))
    mem, cfg, _ = _gpu_scratch(wave, "wave")
    prog, base = T.translate_dispatch(mem, cfg)
    src = _src(prog, cfg, base, G.groups_per_block(cfg, "8"), "wave")
    assert G.source_groups(src) == 8
    cc.check_source(src, "sm_90")


def test_split_build_of_several_groups(monkeypatch):
    """split.py reads a GPB source's count line (wg) and keeps the prologue; the units build and
    link where nvJitLink is there."""
    import test_cuda_split as TS

    monkeypatch.setenv("WAVELIFT_CUDA_STATS", "wave")  # (the per-wave line; the others below)
    _, prog, cfg, base, _ = T._named(TS.SAMPLES[2])  # call: scratch, s_setpc
    assert not G.uses_space(prog, "lds")
    src = _src(prog, cfg, base, 8)
    assert G.source_groups(src) > 1
    units = split.split_source(src, 64, split.TEST_PART_BYTES)
    assert units is not None and len(units) >= 3
    assert "  if (wg < wpg) wl_count_(C.wave, lane, icnt + ic, lc);\n}" in units[0]
    assert "(u64)blockIdx.x * WL_GPB + wl_gs" in units[0]
    if TS._nvjitlink_problem() is None:
        monkeypatch.setenv("WAVELIFT_CUDA_SPLIT", "on")
        cubin = cc.split_compile(src, "sm_90")
        assert cubin is not None and cubin[:4] == b"\x7fELF" and b"wl_part_1" in cubin


@pytest.mark.parametrize("stats", ["block", "pair"])
def test_split_build_with_the_block_count(monkeypatch, stats):
    """WAVELIFT_CUDA_STATS=block / pair: split.py reads the block's count line and the pair's too
    (before h162 a block module had no split build), and keeps it with the prologue in wl_main's
    unit; the units build and link where nvJitLink is there."""
    import test_cuda_split as TS

    monkeypatch.setenv("WAVELIFT_CUDA_STATS", stats)
    _, prog, cfg, base, _ = T._named(TS.SAMPLES[2])
    src = _src(prog, cfg, base, 8)
    units = split.split_source(src, 64, split.TEST_PART_BYTES)
    assert units is not None and len(units) >= 3
    count = {
        "block": "  wl_count_block(lane < 32u, icnt + ic, lc);\n}",
        "pair": "  if (wg < wpg) wl_count_pair(C.wave, lane, icnt + ic, lc);\n}",
    }[stats]
    assert units[0].endswith(count + "\n") and not any(count in u for u in units[1:])
    if TS._nvjitlink_problem() is None:
        monkeypatch.setenv("WAVELIFT_CUDA_SPLIT", "on")
        cubin = cc.split_compile(src, "sm_90")
        assert cubin is not None and cubin[:4] == b"\x7fELF" and b"wl_part_1" in cubin


# ---- the prologue, run on the host ------------------------------------------------------------

SHIM = r"""
#include <algorithm>
using std::min;
#define __global__
#define __launch_bounds__(a, b)
#define __restrict__
#define __shared__
#define __align__(n)
struct WlWin { const u64* start; const u64* end; const i64* off; u32 n; };
struct WlCtx { WlWin W; u8* arena; u8* written; u32* gscr; u64 wave; };
struct WlDim { u32 x, y, z; };
static WlDim threadIdx, blockIdx, blockDim;
static u32 P[64];
u8 wl_smem[1 << 20];
/* the prologue's assumption (a thread index below the block), checked: a broken one counted */
static u32 wl_broken;
#define WL_ASSUME(c) (wl_broken += (c) ? 0u : 1u)
struct Rec {
  u64 g, wave, gscr, x;
  u32 done, count, bar, lane, gw, wpg, gid[3], exec[2], v[3];
};
"""

RUN = r"""
extern "C" void wl_set_p(const u32* p) { for (int k = 0; k < 64; k++) P[k] = p[k]; }
extern "C" u32 wl_assumed_wrong() { return wl_broken; }
extern "C" void wl_run(u64 g0, u32 blocks, u32 bdim, const u64* wavebase, u32* gscr, Rec* out) {
  blockDim.x = bdim; blockDim.y = blockDim.z = 1u;
  for (u32 b = 0; b < blocks; b++)
    for (u32 t = 0; t < bdim; t++) {
      blockIdx.x = b; threadIdx.x = t;
      wl_pro(out + (u64)b * bdim + t, (u8*)0, (u8*)0, (const u64*)0, (const u64*)0, (const i64*)0,
             wavebase, gscr, g0);
    }
}
"""


POISON = 0xDEAD << 40


class _Rec(ctypes.Structure):
    _fields_ = [
        ("g", ctypes.c_uint64),
        ("wave", ctypes.c_uint64),
        ("gscr", ctypes.c_uint64),
        ("x", ctypes.c_uint64),
        ("done", ctypes.c_uint32),
        ("count", ctypes.c_uint32),
        ("bar", ctypes.c_uint32),
        ("lane", ctypes.c_uint32),
        ("gw", ctypes.c_uint32),
        ("wpg", ctypes.c_uint32),
        ("gid", ctypes.c_uint32 * 3),
        ("exec", ctypes.c_uint32 * 2),
        ("v", ctypes.c_uint32 * 3),
    ]


def _host_prologue(src: str) -> str:
    """wl_main's prologue as a host function wl_pro(Rec*, wl_main's arguments) that records what
    each thread starts with, and the count line's condition."""
    from wavelift.ir.program import EXEC_HI, EXEC_LO

    head = 'extern "C" __global__ void __launch_bounds__(WL_BLOCK_THREADS, WL_MIN_BLOCKS) wl_main('
    i, j = src.index(head), src.index("\n" + split.PROLOGUE_END + "\n")
    tail = src[src.index(split.BLOCKS_END) :]
    cond = split._COUNT.search(tail)
    assert cond is not None
    count = tail[cond.start() :].split("(", 1)[1].split(")", 1)[0]  # "wv < wpg" / "wg < wpg"
    gw = count.split()[0]
    rec = (
        "  R->g = g; R->wave = C.wave; R->gscr = (u64)(C.gscr - gscr); R->x = (u64)((u8*)X - wl_smem);\n"
        f"  R->done = done ? 1u : 0u; R->count = ({count}) ? 1u : 0u; R->bar = wv + 1u; R->lane = lane;\n"
        f"  R->gw = {gw}; R->wpg = wpg; R->gid[0] = gid_x; R->gid[1] = gid_y; R->gid[2] = gid_z;\n"
        f"  R->exec[0] = s{EXEC_LO}; R->exec[1] = s{EXEC_HI}; R->v[0] = v0; R->v[1] = v1; R->v[2] = v2;\n"
    )
    gpb = G.source_groups(src)
    bt = re.search(r"^#define WL_BLOCK_THREADS (\d+)$", src, re.M)
    assert bt is not None  # (generate's: the launch's block, for __launch_bounds__)
    return (
        (f"#define WL_GPB {gpb}u\n" if gpb > 1 else "")
        + f"#define WL_BLOCK_THREADS {bt.group(1)}u\n"
        + "static void wl_pro(Rec* R, "
        + src[i + len(head) : j]
        + "\n"
        + rec
        + "}\n"
    )


def _model(cfg):
    """{(group, wave in group, lane): (gid, wave number, EXEC, local ids)} of the dispatch, from
    its config alone (as the hardware starts each lane)."""
    L = cfg.wave_size
    (gx, gy, gz), (sx, sy, sz), (ex, ey, ez) = cfg.num_groups, cfg.group_start, cfg.group_end
    bx, by, bz = cfg.block
    out, base = {}, 0
    for g in range(gx * gy * gz):
        gid = (g % gx + sx, (g // gx) % gy + sy, g // (gx * gy) + sz)
        dims = []
        for d, (b, e) in enumerate(zip(cfg.block, (ex, ey, ez))):
            p = cfg.partial[d]
            dims.append(p if cfg.partial_tg and p and gid[d] == e - 1 else b)
        tx, ty, tz = dims
        n = tx * ty * tz
        waves = -(-n // L)
        for w in range(waves):
            act = min(n - w * L, L)
            m = (1 << act) - 1
            for lane in range(L):
                t = w * L + lane
                ids = (t % tx, (t // tx) % ty, t // (tx * ty)) if t < n else None
                out[(g, w, lane)] = (gid, base + w, (m & 0xFFFFFFFF, m >> 32 if L == 64 else 0), ids)
        # (C.wave: the running count of waves with partial groups, g * full without)
        base += waves if cfg.partial_tg else -(-(bx * by * bz) // L)
    return out


CONFIGS = (
    # (wave, block, group_start, group_end, partial (partial_tg when any), wave-mode scratch bytes)
    (32, (8, 8, 1), (0, 0, 0), (7, 5, 1), (0, 0, 0), 0),  # 35 groups: no multiple of 4 or 8
    (32, (8, 3, 2), (1, 0, 2), (6, 4, 5), (5, 2, 1), 0),  # 3-D, partial in every dimension
    (32, (48, 1, 1), (0, 0, 0), (41, 1, 1), (40, 0, 0), 1024),  # a partial second wave
    (64, (8, 8, 1), (0, 0, 0), (5, 3, 2), (0, 0, 0), 1024),
    (64, (100, 1, 1), (2, 0, 0), (40, 1, 1), (36, 0, 0), 0),  # 2 waves of 64, partial group
)


# WAVELIFT_CUDA_GRIDDIM=baked (decision 0009's amendment h97): the group ids of a 1-D or 2-D grid
# without the divisions it needs not -- the same starts
@pytest.fixture(scope="module", params=["off", "baked"], ids=["griddim", "griddimbaked"])
def prologues(tmp_path_factory, request):
    host_build.gxx()
    from wavelift.backends.host import COMPILE_FLAGS, prelude_semantics

    # (STATS=wave: the per-wave count line, whose condition says which threads count)
    want = {"WAVELIFT_CUDA_GRIDDIM": request.param, "WAVELIFT_CUDA_STATS": "wave"}
    old = {k: os.environ.get(k) for k in want}
    os.environ.update(want)
    try:
        return _build_prologues(tmp_path_factory, COMPILE_FLAGS, prelude_semantics, request.param)
    finally:
        for k, v in old.items():
            if v is None:
                del os.environ[k]
            else:
                os.environ[k] = v


def _build_prologues(tmp_path_factory, COMPILE_FLAGS, prelude_semantics, griddim):
    out = {}
    for k, (wave, block, start, end, partial, wb) in enumerate(CONFIGS):
        _, cfg, prog, base = _vadd(wave)
        cfg = dataclasses.replace(
            cfg,
            block=block,
            group_start=start,
            group_end=end,
            partial=partial,
            partial_tg=any(partial),
            tidig_comp_cnt=2,
            scratch_wave_bytes=wb,
        )
        mode = "wave" if wb else "lane"
        for want in ("1", "4", "8", "auto"):
            n = G.groups_per_block(cfg, want)
            src = _src(prog, cfg, base, n, mode)
            dims = G.grid_dims(cfg.num_groups)
            # (baked: the prologue of the grid's dimensions; else the general one, as before)
            assert ("gid_x = (u32)g; gid_y = 0u;" in src) == (griddim == "baked" and dims == 1)
            assert ("gid_y = q; gid_z = 0u;" in src) == (griddim == "baked" and dims == 2)
            source = prelude_semantics() + SHIM + _host_prologue(src) + RUN
            if source not in _PROLOGUE_LIBS:  # (auto is often 4; 3-D grids bake nothing)
                _PROLOGUE_LIBS[source] = host_build.load(
                    tmp_path_factory.mktemp(f"pro{k}-{want}"), "pro", source, (*COMPILE_FLAGS, "-O1")
                )
            out[(k, want)] = (cfg, mode, G.source_groups(src), _PROLOGUE_LIBS[source])
    return out


# the host builds by source: 26 distinct of the 40 (config, setting, griddim) prologues, ~1 s of
# g++ each (every test sets P before it runs one)
_PROLOGUE_LIBS: dict = {}


@pytest.mark.parametrize("want", ["1", "4", "8", "auto"])
@pytest.mark.parametrize("k", range(len(CONFIGS)))
def test_prologue_starts_every_lane_once(prologues, k, want, monkeypatch):
    """Each generated prologue, run over every thread of every launch the runtime makes (small
    grids forced: several launches), starts every lane of every wave of every group exactly once
    as the model says; slots past the last group are done and count nothing; each launched
    wave has its own named barrier (wave64: at most 15), exchange area inside the shared bytes
    and wave-mode scratch slot inside the launch's scratch array."""
    cfg, mode, n, lib = prologues[(k, want)]
    if want != "1":
        assert n > 1
    monkeypatch.setattr(RT, "MAX_GRID", 3)  # 3 blocks a launch
    r = _runtime(cfg)
    total, wpg, full, waves, wavebase, shared, P, chunk, wb = r._shape(cfg, mode, 1 << 20, 0, n)
    L = cfg.wave_size
    assert chunk < total and chunk % n == 0
    lib.wl_set_p(np.ascontiguousarray(P, np.uint32).ctypes.data_as(ctypes.c_void_p))
    # (the wave table as the device has it, then words no thread may read: a slot past the last
    # group reads none -- its C.wave would show them)
    table = wavebase if wavebase is not None else np.zeros(0, np.uint64)
    wbt = np.concatenate([table, np.full(64, POISON, np.uint64)])
    bdim = n * full * L
    words = max(wb // 4, 1)
    model = _model(cfg)
    seen: dict = {}
    for g0 in range(0, total, chunk):
        cnt = min(chunk, total - g0)
        blocks = -(-cnt // n)
        recs = (_Rec * (blocks * bdim))()
        gscr = np.zeros(1, np.uint32)
        lib.wl_run(
            ctypes.c_uint64(g0),
            ctypes.c_uint32(blocks),
            ctypes.c_uint32(bdim),
            wbt.ctypes.data_as(ctypes.c_void_p),
            gscr.ctypes.data_as(ctypes.c_void_p),
            recs,
        )
        scratch_words = -(-chunk // n) * n * full * words  # (runtime: the launch's gscr array)
        per_block: dict = {}
        for i, rc in enumerate(recs):
            b = i // bdim
            if rc.done:
                assert not rc.count and rc.wave >> 40 != POISON >> 40, (g0, i, rc.wave)
                continue
            assert rc.count and g0 <= rc.g < g0 + cnt, (g0, i, rc.g)
            key = (rc.g, rc.gw, rc.lane)
            assert key not in seen, key
            seen[key] = (tuple(rc.gid), rc.wave, tuple(rc.exec), rc.v[0], rc.v[1], rc.v[2])
            # the wave's own barrier, exchange area and scratch slot in its block / launch
            assert 1 <= rc.bar <= (15 if L == 64 else bdim // L)
            assert rc.x + 2 * G.XWORDS * 4 <= shared and rc.x >= P[G.P_XOFF]
            if wb:
                assert rc.gscr % words == 0 and rc.gscr + words <= scratch_words
            per_block.setdefault((b, rc.bar), set()).add((rc.g, rc.gw))
            per_block.setdefault((b, "x", rc.x), set()).add((rc.g, rc.gw))
            per_block.setdefault(("s", rc.gscr), set()).add((rc.g, rc.gw))
        assert all(len(v) == 1 for v in per_block.values()), "a barrier, area or slot shared"
    assert seen.keys() == model.keys()
    assert lib.wl_assumed_wrong() == 0  # (every launched thread's index below WL_BLOCK_THREADS)
    for key, (gid, wave, ex, *ids) in model.items():
        got = seen[key]
        assert got[:3] == (gid, wave, ex), (key, got, (gid, wave, ex))
        if ids[0] is not None:  # (a lane past the group's threads: its ids are not read)
            assert got[3:] == ids[0], (key, got[3:], ids[0])


# grids whose last launch's slots run past 2^32 - 1 (decision 0009's amendment h149): the group
# index in 32 bits only where every slot's fits (codegen.narrow_groups), else in 64
HUGE = (
    ((1 << 32) - 1026, 1, True),  # the last group 2^32 - 1027: any block's slots below 2^32 - 2
    ((1 << 32) - 1023, 1, False),  # a block of 1024 slots at the last group reaches 2^32 - 1
    ((1 << 32) - 2, 1, False),  # (here the last block's slots are 2^32 - 3 .. 2^32)
    (1 << 16, 1 << 16, False),  # 2-D, 2^32 groups
)


@pytest.mark.parametrize("griddim", ["baked", "off"])
@pytest.mark.parametrize("gx, gy, narrow", HUGE)
def test_prologue_group_index_near_2_32(tmp_path, monkeypatch, gx, gy, narrow, griddim):
    """The last block of a grid of about 2^32 groups, 4 to a block, launched at the last group:
    its first slot runs that group (its index and ids the 64-bit ones), the slots past it are
    done -- none wraps to a low group (the 32-bit index where a slot's would not fit)."""
    host_build.gxx()
    from wavelift.backends.host import COMPILE_FLAGS, prelude_semantics

    monkeypatch.setenv("WAVELIFT_CUDA_GRIDDIM", griddim)
    monkeypatch.setenv("WAVELIFT_CUDA_STATS", "wave")  # (the per-wave count line: who counts)
    _, cfg, prog, base = _vadd(32)
    cfg = dataclasses.replace(cfg, block=(8, 8, 1), group_start=(0, 0, 0), group_end=(gx, gy, 1))
    total = gx * gy
    src = _src(prog, cfg, base, 4)
    assert G.narrow_groups(cfg.num_groups) == narrow
    assert ("(u32)group_base" in src) == (narrow and griddim == "baked")
    assert G.source_groups(src) == 4
    lib = host_build.load(
        tmp_path, "pro", prelude_semantics() + SHIM + _host_prologue(src) + RUN, (*COMPILE_FLAGS, "-O1")
    )
    P = G.param_words(cfg, 0, 1 << 20, 0)
    lib.wl_set_p(np.ascontiguousarray(P, np.uint32).ctypes.data_as(ctypes.c_void_p))
    bdim = 4 * 2 * 32
    recs = (_Rec * bdim)()
    wbt = np.full(64, POISON, np.uint64)
    gscr = np.zeros(1, np.uint32)
    g0 = total - 1
    lib.wl_run(
        ctypes.c_uint64(g0),
        ctypes.c_uint32(1),
        ctypes.c_uint32(bdim),
        wbt.ctypes.data_as(ctypes.c_void_p),
        gscr.ctypes.data_as(ctypes.c_void_p),
        recs,
    )
    for t, rc in enumerate(recs):
        if t < 64:  # (the first slot: the last group, two full waves)
            assert not rc.done and rc.count and rc.g == g0, (t, rc.g)
            assert tuple(rc.gid) == (g0 % gx, g0 // gx, 0)
            assert rc.wave == g0 * 2 + t // 32
        else:
            assert rc.done and not rc.count, (t, rc.g)


# ---- on a GPU ------------------------------------------------------------------------------


def _launch(kernel_path, name, wave, global_size, block, args_of):
    """A Device launch caught before it runs: (memory, config)."""
    import wavelift

    got = []
    dev = wavelift.Device(
        "gfx1030", execute=lambda m, c, i: got.append((copy.deepcopy(m), c)) or _refused(i, c)
    )
    k = dev.load_code_object(str(kernel_path)).kernel(name)
    k.launch(global_size=global_size, block=block, args=args_of(dev))
    return got[0]


def _refused(index, config):
    from wavelift.errors import Refusal
    from wavelift.run.result import DispatchResult

    return DispatchResult(index, config, Refusal("backend.unavailable", "caught"))


def _gpu_vadd(wave):
    """vadd over 1000 lanes in groups of 48: 21 groups, the last partial (40), wave32's second
    wave partial (16 lanes)."""
    n = 1000
    rng = np.random.default_rng(46)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))

    def args(dev):
        return [dev.upload(a), dev.upload(b), dev.alloc(4 * n), np.uint32(n)]

    path = HERE.parent / "fixtures" / "gfx1030" / f"basic-O2-w{wave}-flat.hsaco"
    return _launch(path, "vadd", wave, (n,), (48,), args) + ("lane",)


def _gpu_shade():
    """The full-screen shade over 70 x 45 pixels in 8x8 groups: 9 x 6 groups, partial in x and y."""
    w, h = 70, 45
    rng = np.random.default_rng(1080)
    px = rng.integers(0, 1 << 32, size=w * h, dtype=np.uint64).astype(np.uint32)
    wt = rng.uniform(0.0, 2.0, w * h).astype(np.float32)

    def args(dev):
        return [
            dev.upload(px),
            dev.upload(wt),
            dev.alloc(4 * w * h),
            np.uint32(w),
            np.uint32(h),
            np.float32(1.25),
            np.float32(-8.0),
        ]

    path = HERE.parent.parent / "bench" / "kernels" / "bench-gfx1030-O2-w32.hsaco"
    return _launch(path, "shade", 32, (w, h), (8, 8), args) + ("lane",)


def _gpu_scratch(wave, mode):
    """The ACO scratch game on 3 x 5 groups of 8x8 (15: no multiple of 4 or 8)."""
    sys.path.insert(0, str(HERE.parent.parent / "bench"))
    import gpu_check as GC

    mem, cfg = GC.scratch_game_dispatch((3, 5), 16, 6, wave)[:2]
    return mem, cfg, mode


GPU_CASES = {
    "vadd-w32-partial": lambda: _gpu_vadd(32),
    "vadd-w64-partial": lambda: _gpu_vadd(64),
    "shade-w32-partial-2d": _gpu_shade,
    "scratch_game-w64-wave": lambda: _gpu_scratch(64, "wave"),
    "scratch_game-w32-wave": lambda: _gpu_scratch(32, "wave"),
    "scratch_game-w64-lane": lambda: _gpu_scratch(64, "lane"),
}


def _gpu_equal(case, monkeypatch, tmp_path):
    from wavelift.backends.cuda import memo
    from wavelift.run.execute import execute_dispatch

    monkeypatch.setenv("WAVELIFT_CUDA_CACHE", str(tmp_path))  # (no build of another setting)
    monkeypatch.setattr(memo, "_BY_CONFIG", {})
    monkeypatch.setattr(memo, "_LAST", [None, None, None, None])
    mem, cfg, mode = GPU_CASES[case]()
    m1, m2 = copy.deepcopy(mem), copy.deepcopy(mem)
    r1 = execute_dispatch(m1, cfg, backend="numpy", mode=mode, cache={})
    cache: dict = {}
    r2 = execute_dispatch(m2, cfg, backend="cuda", mode=mode, cache=cache)
    assert r1.refusal is None and r2.refusal is None, (r1.refusal, r2.refusal)
    assert r1.stats["escapes"] == r2.stats["escapes"]
    assert r1.write_spans == r2.write_spans
    assert r1.stats["instructions"] == r2.stats["instructions"]
    assert r1.stats.get("lane_instructions") == r2.stats.get("lane_instructions")
    assert not T._compare(m1, m2), T._compare(m1, m2)[:3]
    mods = [v for v in cache.values() if hasattr(v, "cubin")]
    assert mods, "no CUDA module in the cache"
    return mods[0], cfg


@pytest.mark.cuda
@pytest.mark.parametrize("want", ["4", "8", "auto"])
@pytest.mark.parametrize("case", list(GPU_CASES))
def test_gpu_several_groups_match_numpy(case, want, monkeypatch, tmp_path):
    """CUDA with GPB forced to 4, 8 or auto equals NumPy (the same mode) bit for bit: memory,
    write spans, escapes, instruction and lane counts; the module ran more than one group a
    block."""
    T._needs_gpu()
    monkeypatch.setenv(SETTING, want)
    mod, cfg = _gpu_equal(case, monkeypatch, tmp_path)
    assert mod.groups == G.groups_per_block(cfg, want) > 1, (mod.groups, cfg.block)
    assert cfg.partial_tg or "partial" not in case


@pytest.mark.cuda
@pytest.mark.parametrize("case", ["vadd-w32-partial", "vadd-w64-partial", "scratch_game-w64-wave"])
def test_gpu_several_groups_in_chunked_launches(case, monkeypatch, tmp_path):
    """Launches cut into chunks of 2 blocks (GPB 4: 8 groups, the last launch short) and, for
    wave-mode scratch, by the scratch limit: still NumPy's results."""
    T._needs_gpu()
    monkeypatch.setenv(SETTING, "4")
    monkeypatch.setattr(RT, "MAX_GRID", 2)
    mod, cfg = _gpu_equal(case, monkeypatch, tmp_path)
    assert mod.groups == 4
    if "wave" in case:
        monkeypatch.setattr(RT, "MAX_GRID", (1 << 31) - 1)
        monkeypatch.setattr(RT, "MAX_SCRATCH_BYTES", 5 * cfg.scratch_wave_bytes)  # 4 groups of 1 wave
        mod, cfg = _gpu_equal(case, monkeypatch, tmp_path)
        assert mod.groups == 4


@pytest.mark.cuda
@pytest.mark.parametrize("case", ["vadd-w32-partial", "scratch_game-w64-wave"])
def test_gpu_one_group_per_block_still_matches(case, monkeypatch, tmp_path):
    """GPB 1 (the kernels before decision 0046) on the same dispatches."""
    T._needs_gpu()
    monkeypatch.setenv(SETTING, "1")
    mod, _ = _gpu_equal(case, monkeypatch, tmp_path)
    assert mod.groups == 1
