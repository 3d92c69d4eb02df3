"""WAVELIFT_CUDA_STATS=last (decision 0009's amendment h162) without a GPU: kernel.h's
wl_count_last_init / wl_count_last compiled for the host by g++, each played CUDA block's
threads host threads (one block at a time; its __syncthreads a barrier of them, the shared add
a relaxed C++ atomic), its warps ending in a random order, the block's shared word junk before
its prologue.  Held to the per wave rule written here (the report's slot blockIdx.x % 256 gets
the block's instructions -- each wave's once, from its first warp -- and its warps' lanes), by
exactly two 64-bit atomics a block besides those of a warp with a count of 2^24 or more, which
adds its own (wl_count_): wave32 and wave64 blocks, waves past the group's (zero counts),
1024-thread blocks at the largest counts the word's fields take, and counts past 2^32."""

from __future__ import annotations

import ctypes
import pathlib

import host_build  # (tests/cuda/host_build.py: the g++ build rig)
import numpy as np
import pytest

from wavelift.backends.cuda import codegen as G

KERNEL_H = (pathlib.Path(G.__file__).parent / "kernel.h").read_text()

# CUDA's names the counting uses, for the host (no __CUDA_ARCH__: kernel.h leaves WL_SADD & co.
# to the build); every 64-bit atomicAdd counted
SHIM = r"""
#include <cstdint>
#include <pthread.h>
#include <sched.h>
typedef unsigned int u32;
typedef unsigned long long u64;
#define __device__
#define __forceinline__ inline
struct wl_dim3 { unsigned x; };
static thread_local wl_dim3 threadIdx;
static wl_dim3 blockIdx, blockDim;
static pthread_barrier_t wl_bar;
static inline void __syncthreads() { pthread_barrier_wait(&wl_bar); }
static unsigned wl_atomics;
static u64 atomicAdd(u64* p, u64 v) {
  __atomic_fetch_add(&wl_atomics, 1u, __ATOMIC_SEQ_CST);
  return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
#define WL_SARRIVE(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
static u64 wl_stats[8 + 2 * 256];
#define WL_STATS wl_stats
#define WL_COUNTS (WL_STATS + 8)
#define WL_COUNT_MASK 255u
"""

DRIVER = r"""
/* a block: its threads tid[0..n) (all of it, or its warps' lane 0s) as host threads; thread i
   runs the prologue's init, spins spin[i] yields, then ends with warp (tid / 32)'s counts */
static u64 wl_cs;
static const u32* d_tid; static const u32* d_spin; static const u64* d_icnt; static const u32* d_lc;
static const unsigned char* d_first;
static void* play(void* arg) {
  const unsigned i = (unsigned)(uintptr_t)arg;
  threadIdx.x = d_tid[i];
  wl_count_last_init(&wl_cs);
  for (u32 k = 0; k < d_spin[i]; k++) sched_yield();
  const u32 w = threadIdx.x >> 5;
  wl_count_last(&wl_cs, d_first[w] != 0, d_icnt[w], d_lc[w]);
  return 0;
}
extern "C" unsigned t_block(u32 block, u32 bdim, const u32* tid, u32 n, const u32* spin,
                            const u64* icnt, const u32* lc, const unsigned char* first, u32 junk) {
  blockIdx.x = block; blockDim.x = bdim;
  wl_cs = junk * 0x9E3779B97F4A7C15ull;  /* (whatever the block before left) */
  d_tid = tid; d_spin = spin; d_icnt = icnt; d_lc = lc; d_first = first;
  const unsigned before = wl_atomics;
  pthread_barrier_init(&wl_bar, 0, n);
  pthread_t th[1024];
  for (u32 i = 0; i < n; i++) pthread_create(&th[i], 0, play, (void*)(uintptr_t)i);
  for (u32 i = 0; i < n; i++) pthread_join(th[i], 0);
  pthread_barrier_destroy(&wl_bar);
  return wl_atomics - before;
}
extern "C" void t_stats(u64* out) { for (int j = 0; j < 8 + 512; j++) out[j] = wl_stats[j]; }
extern "C" void t_reset() { for (int j = 0; j < 8 + 512; j++) wl_stats[j] = 0ull; }
"""

BIG = 1 << 24  # 1 << kernel.h's WL_LAST_BIG


def _last_part(text: str) -> str:
    """kernel.h's wl_count_ (a big count's path) and its STATS=last section (its comment to
    wl_count_last's #endif)."""
    k = text.index("__device__ __forceinline__ void wl_count_(")
    i = text.index("/* WAVELIFT_CUDA_STATS=last")
    j = text.index("#endif", text.index("void wl_count_last("))
    return text[k : text.index("#define wl_lanes", k)] + text[i : j + len("#endif")] + "\n"


def build(tmp_path_factory, text: str = KERNEL_H, name: str = "stats_last"):
    flags = ("-O1", "-std=c++17", "-shared", "-fPIC", "-pthread")
    return host_build.load(tmp_path_factory.mktemp(name), name, SHIM + _last_part(text) + DRIVER, flags)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return build(tmp_path_factory)


def _p(a):
    return ctypes.c_void_p(a.ctypes.data)


def play(lib, blocks, rng):
    """``blocks``: per CUDA block (its index, threads, per warp (instructions, lanes, first),
    whether to play every thread or only lane 0s).  -> (the report's stats, each block's 64-bit
    atomics, the stats the per-wave rule makes, the atomics of its big warps)."""
    lib.t_reset()
    want = np.zeros(8 + 512, np.uint64)
    atomics, big = [], []
    for b, bdim, warps, every in blocks:
        icnt = np.array([w[0] for w in warps], np.uint64)
        lc = np.array([w[1] for w in warps], np.uint32)
        first = np.array([w[2] for w in warps], np.uint8)
        tid = np.arange(bdim, dtype=np.uint32) if every else np.arange(0, bdim, 32, dtype=np.uint32)
        spin = rng.integers(0, 40, tid.size).astype(np.uint32)
        n = lib.t_block(
            ctypes.c_uint32(b),
            ctypes.c_uint32(bdim),
            _p(tid),
            ctypes.c_uint32(tid.size),
            _p(spin),
            _p(icnt),
            _p(lc),
            _p(first),
            ctypes.c_uint32(int(rng.integers(1, 2**32))),
        )
        atomics.append(n)
        ins = sum(int(i) for i, _, f in warps if f)
        lanes = sum(int(v) for _, v, _ in warps)
        want[8 + 2 * (b % 256)] += np.uint64(ins)
        want[9 + 2 * (b % 256)] += np.uint64(lanes)
        # (a big warp adds its instructions if any, and its lanes)
        big.append(sum(int(v >= BIG or (f and i >= BIG)) * (1 + int(bool(f and i))) for i, v, f in warps))
    out = np.zeros(8 + 512, np.uint64)
    lib.t_stats(_p(out))
    return out, atomics, want, big


def _wave32(rng, nwarps, active, most=5000):
    """a block's warps of wave32 waves: ``active`` ran (random counts), the rest past the group's"""
    return [
        (int(rng.integers(1, most)), int(rng.integers(0, 32 * most)), True) if w < active else (0, 0, True)
        for w in range(nwarps)
    ]


def _wave64(rng, nwarps, active, most=5000):
    """wave64: a wave is two warps, both holding its instructions (the first counts them), each
    its own EXEC half's lanes"""
    out = []
    for w in range(0, nwarps, 2):
        ins = int(rng.integers(1, most)) if w < active else 0
        for half in (0, 1):
            out.append((ins, int(rng.integers(0, 32 * most)) if ins else 0, half == 0))
    return out


def test_the_block_sums_equal_the_per_wave_rule(lib):
    rng = np.random.default_rng(162)
    blocks = []
    for b in range(12):
        bdim = int(rng.choice([64, 128, 256]))
        nw = bdim // 32
        active = int(rng.integers(0, nw + 1))  # (0: a slot past the dispatch's last group)
        warps = _wave32(rng, nw, active) if b % 2 else _wave64(rng, nw, active)
        blocks.append((b * 37, bdim, warps, True))
    out, atomics, want, big = play(lib, blocks, rng)
    assert np.array_equal(out, want)
    assert atomics == [2] * len(blocks) and not any(big)


def test_arrival_orders(lib):
    """one block of 8 warps played 40 times, its warps' ends in random orders: always the sums"""
    rng = np.random.default_rng(7)
    for _ in range(40):
        warps = _wave32(rng, 8, 8)
        out, atomics, want, _ = play(lib, [(3, 256, warps, False)], rng)
        assert np.array_equal(out, want) and atomics == [2]


def test_largest_counts_and_big_ones(lib):
    """32 warps (1024 threads) of counts just under 2^24: sums just under 2^29, the word's
    fields; a warp with a count of 2^24 or more (instructions past 2^32 too) adds its counts to
    the slot itself"""
    rng = np.random.default_rng(11)
    full = [(BIG - 1, BIG - 1, True)] * 32
    mixed = [(BIG - 1, BIG - 1 - w, True) for w in range(32)]
    mixed[3] = (BIG, 5, True)
    mixed[9] = (7, BIG + 3, True)
    mixed[20] = ((1 << 40) + 12345, (1 << 31) + 9, True)
    mixed[21] = ((1 << 40) + 12345, 17, False)  # (a wave64's second warp: its lanes only)
    over = [(2 * BIG - 1, 2 * BIG - 1, True)] * 32  # (in the word: 32 of them would carry)
    blocks = [(0, 1024, full, False), (300, 1024, mixed, False), (44, 64, _wave64(rng, 2, 2), True)]
    blocks.append((9, 1024, over, False))
    out, atomics, want, big = play(lib, blocks, rng)
    assert np.array_equal(out, want)
    assert big == [0, 6, 0, 64] and atomics == [2 + x for x in big]
