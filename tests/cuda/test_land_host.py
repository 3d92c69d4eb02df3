"""The landing over runs (resident.py wl_land / wl_land_gated / wl_gate's run table, decision
0026's amendment h109) without a GPU: the NumPy statement (resident.land, run_table) and
resident.py's CUDA source itself, compiled for the host by g++ (blocks and threads played one
after another, wl_gate's 64 threads as host threads at a barrier), held to the masked commit it
replaced (every byte whose map byte is nonzero copied, the map cleared over the window: written
here, independent of the code under test) on random maps -- runs across window edges, windows at
every offset mod 16, device copies at every alignment, grids from one thread up -- and to
NumPyOps.runs / resident.gate for wl_runs and wl_gate."""

from __future__ import annotations

import ctypes
import pathlib
import re
import shutil
import subprocess

import host_build  # (tests/cuda/host_build.py: the g++ build rig)
import numpy as np
import pytest

from wavelift.backends.cuda import resident as R

# CUDA's few names the source uses, for the host: a block's threads share its __shared__
# variables (statics: one block runs at a time), atomics are atomic (wl_gate's threads are real)
SHIM = r"""
#include <cstdint>
#include <pthread.h>
#define __device__
#define __forceinline__ inline
#define __global__
#define __shared__ static
struct wl_dim3 { unsigned x; };
static thread_local wl_dim3 threadIdx, blockIdx;
static wl_dim3 blockDim, gridDim;
static pthread_barrier_t wl_bar;
static inline void __syncthreads() { pthread_barrier_wait(&wl_bar); }
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
template <class T> T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
template <class T> T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
/* a warp's lanes as host threads (mapbits.h's marking): the lanes of one store instruction that
   are active run together (__activemask: all of them), each warp intrinsic a meeting of exactly
   the lanes its mask names (meetings of other lanes may run beside it: a divergent warp's) --
   each lane posts its value (state 1), waits until every lane its mask names has posted with
   that mask, reads their values (state 2), and leaves when all have read (the last reader sets
   them all to 0 at once, so none posts again before every one has read); a lane whose mask
   names a lane not active or not itself, or that waits 10 s for a lane (one that left: a fast
   form's lane named in the general form's mask, or one that passed another mask), marks the
   store bad */
#include <time.h>
struct WlWarp {
  pthread_mutex_t mu; pthread_cond_t cv; unsigned active;
  unsigned long long v[32]; unsigned m[32], st[32]; int bad;
};
static WlWarp wl_warp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
static inline void wl_bad() { __atomic_store_n(&wl_warp.bad, 1, __ATOMIC_SEQ_CST); }
static inline unsigned __activemask() { return wl_warp.active; }
/* a warp's lanes ``active`` about to run: no meeting open, nothing bad yet */
static void wl_warp_start(unsigned active) {
  wl_warp.active = active; wl_warp.bad = 0;
  for (unsigned l = 0; l < 32; l++) wl_warp.st[l] = 0;
}
/* every lane of ``mask`` with a state of at least ``s`` (and ``mask`` its posted mask) */
static bool wl_all(unsigned mask, unsigned s) {
  for (unsigned j = 0; j < 32; j++)
    if (((mask >> j) & 1u) && (wl_warp.st[j] < s || wl_warp.m[j] != mask)) return false;
  return true;
}
static bool wl_wait(const timespec& until) {
  if (!pthread_cond_timedwait(&wl_warp.cv, &wl_warp.mu, &until)) return true;
  wl_bad();
  return false;
}
template <class F> static unsigned long long wl_meet(unsigned mask, unsigned long long v, F f) {
  const unsigned l = threadIdx.x & 31u;
  if (!((mask >> l) & 1u) || (mask & ~wl_warp.active)) { wl_bad(); return 0; }
  timespec until; clock_gettime(CLOCK_REALTIME, &until); until.tv_sec += 10;
  unsigned long long r = 0;
  pthread_mutex_lock(&wl_warp.mu);
  wl_warp.v[l] = v; wl_warp.m[l] = mask; wl_warp.st[l] = 1;
  pthread_cond_broadcast(&wl_warp.cv);
  bool ok = true;
  while (ok && !wl_all(mask, 1)) ok = wl_wait(until);
  if (ok) {
    for (unsigned j = 0; j < 32; j++)
      if ((mask >> j) & 1u) r = f(r, j, wl_warp.v[j]);
    wl_warp.st[l] = 2;
    if (wl_all(mask, 2)) {
      for (unsigned j = 0; j < 32; j++)
        if ((mask >> j) & 1u) wl_warp.st[j] = 0;
      pthread_cond_broadcast(&wl_warp.cv);
    }
    while (ok && wl_warp.st[l] != 0) ok = wl_wait(until);
  }
  wl_warp.st[l] = 0;
  pthread_mutex_unlock(&wl_warp.mu);
  return r;
}
static unsigned wl_matches, wl_match_lanes;  /* __match_any_sync's calls (the general marking
   form's), and the lanes of the last t_mark that called it */
static unsigned __match_any_sync(unsigned mask, unsigned long long v) {
  __atomic_fetch_add(&wl_matches, 1u, __ATOMIC_SEQ_CST);
  __atomic_fetch_or(&wl_match_lanes, 1u << (threadIdx.x & 31u), __ATOMIC_SEQ_CST);
  return (unsigned)wl_meet(mask, v, [v](unsigned long long r, unsigned j, unsigned long long x) {
    return x == v ? r | (1ull << j) : r; });
}
static int __any_sync(unsigned mask, int p) {
  return (int)wl_meet(mask, p != 0, [](unsigned long long r, unsigned, unsigned long long x) { return r | x; });
}
static unsigned __reduce_or_sync(unsigned mask, unsigned v) {
  return (unsigned)wl_meet(mask, v, [](unsigned long long r, unsigned, unsigned long long x) { return r | x; });
}
static unsigned __ballot_sync(unsigned mask, int p) {
  return (unsigned)wl_meet(mask, p != 0, [](unsigned long long r, unsigned j, unsigned long long x) {
    return r | (x << j); });
}
static int __all_sync(unsigned mask, int p) {
  return !wl_meet(mask, p != 0, [](unsigned long long r, unsigned, unsigned long long x) { return r | (x == 0); });
}
static unsigned long long __shfl_sync(unsigned mask, unsigned long long v, int src) {
  return wl_meet(mask, v, [src](unsigned long long r, unsigned j, unsigned long long x) {
    return j == (unsigned)src ? x : r; });
}
static unsigned __shfl_up_sync(unsigned mask, unsigned v, unsigned d) {
  const unsigned l = threadIdx.x & 31u;
  return (unsigned)wl_meet(mask, v, [l, d, v](unsigned long long r, unsigned j, unsigned long long x) {
    return l < d ? (unsigned long long)v : j + d == l ? x : r; });
}
static unsigned __shfl_down_sync(unsigned mask, unsigned v, unsigned d) {
  const unsigned l = threadIdx.x & 31u;
  return (unsigned)wl_meet(mask, v, [l, d, v](unsigned long long r, unsigned j, unsigned long long x) {
    return l + d > 31u ? (unsigned long long)v : j == l + d ? x : r; });
}
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
extern "C" unsigned t_matches() { return wl_matches; }
extern "C" unsigned t_match_lanes() { return wl_match_lanes; }
/* mapbits.h's whole-word store (WL_MAP_FILL_STORE), counted; atomic beside the lanes' atomicOr */
static unsigned wl_fills;
#define WL_MAP_FILL(p) (__atomic_fetch_add(&wl_fills, 1u, __ATOMIC_SEQ_CST), __atomic_store_n((p), 0xFFFFFFFFu, __ATOMIC_SEQ_CST))
extern "C" unsigned t_fills() { return wl_fills; }
"""

# mapbits.h (the kernel's marking), after the types it names
MAPBITS = (
    "\ntypedef unsigned char u8;\ntypedef long long i64;\n"
    + (pathlib.Path(R.__file__).parent / "mapbits.h").read_text()
)

DRIVER = r"""
/* a launch: each block's threads one after another (wl_land and wl_runs never wait) */
#define WL_PLAY(CALL) \
  blockDim.x = block; gridDim.x = grid; \
  for (unsigned b = 0; b < grid; b++) for (unsigned h = 0; h < block; h++) { \
    blockIdx.x = b; threadIdx.x = h; CALL; }
extern "C" void t_land(unsigned grid, unsigned block, unsigned char* dst, const unsigned char* src,
                       unsigned char* mask, u64 o, u64 n, const u64* t, const u32* sticky) {
  if (sticky) { WL_PLAY(wl_land_gated(dst, src, mask, o, n, t, sticky)) }
  else { WL_PLAY(wl_land(dst, src, mask, o, n, t)) }
}
extern "C" void t_land_bits(unsigned grid, unsigned block, unsigned char* dst, const unsigned char* src,
                            u32* mask, u64 o, u64 n, const u64* t, const u32* sticky) {
  if (sticky) { WL_PLAY(wl_land_gated_bits(dst, src, mask, o, n, t, sticky)) }
  else { WL_PLAY(wl_land_bits(dst, src, mask, o, n, t)) }
}
/* wl_runs_bits: each warp's 32 lanes as host threads run together (its shuffles and votes meet
   as the warp's; warps one after another); -> whether every intrinsic's mask was sound */
static const u32* r_w; static u64 r_nw, r_cap; static u64* r_starts; static u64* r_ends;
static u32* r_count; static unsigned r_block, r_warp;
static const unsigned char* r_hs; static unsigned char* r_hd; static u64 r_hn;
static void* runs_thread(void* arg) {
  threadIdx.x = 32 * r_warp + (unsigned)(uintptr_t)arg; blockIdx.x = r_block;
  wl_runs_bits(r_w, r_nw, r_starts, r_ends, r_cap, r_count, r_hs, r_hd, r_hn);
  return 0;
}
extern "C" int t_runs_bits_hints(unsigned grid, unsigned block, const u32* w, u64 nw, u64* starts,
                                 u64* ends, u64 cap, u32* count, const unsigned char* hs,
                                 unsigned char* hd, u64 hn) {
  r_w = w; r_nw = nw; r_starts = starts; r_ends = ends; r_cap = cap; r_count = count;
  r_hs = hs; r_hd = hd; r_hn = hn;
  blockDim.x = block; gridDim.x = grid;
  int bad = 0;
  for (r_block = 0; r_block < grid; r_block++)
    for (r_warp = 0; r_warp < block / 32; r_warp++) {
      wl_warp_start(0xFFFFFFFFu);
      pthread_t th[32];
      for (unsigned l = 0; l < 32; l++) pthread_create(&th[l], 0, runs_thread, (void*)(uintptr_t)l);
      for (unsigned l = 0; l < 32; l++) pthread_join(th[l], 0);
      bad |= wl_warp.bad;
    }
  return bad;
}
extern "C" int t_runs_bits(unsigned grid, unsigned block, const u32* w, u64 nw, u64* starts,
                           u64* ends, u64 cap, u32* count) {
  return t_runs_bits_hints(grid, block, w, nw, starts, ends, cap, count, 0, 0, 0);
}
/* one store instruction of a warp: lane l (bit l of active) marks [ix[l], ix[l] + nb) of the bit
   map wr (mapbits.h's wl_mark_bits), the active lanes as threads run together (threadIdx.x: the
   warp's lane, in warp ``warp`` of the block); -> whether every intrinsic's mask was sound */
static u8* m_wr; static const i64* m_ix; static u32 m_nb, m_warp;
static void* mark_thread(void* arg) {
  const unsigned l = (unsigned)(uintptr_t)arg;
  threadIdx.x = 32 * m_warp + l; blockIdx.x = 0;
  wl_mark_bits(m_wr, m_ix[l], m_nb);
  return 0;
}
extern "C" int t_mark(u8* wr, const i64* ix, u32 nb, u32 active, u32 warp) {
  m_wr = wr; m_ix = ix; m_nb = nb; m_warp = warp;
  wl_warp_start(active); wl_match_lanes = 0;
  pthread_t th[32]; unsigned n = 0;
  for (unsigned l = 0; l < 32; l++)
    if ((active >> l) & 1u) pthread_create(&th[n++], 0, mark_thread, (void*)(uintptr_t)l);
  for (unsigned i = 0; i < n; i++) pthread_join(th[i], 0);
  return wl_warp.bad;
}
extern "C" void t_runs_hints(unsigned grid, unsigned block, const unsigned char* w, u64 n, u64* starts,
                             u64* ends, u64 cap, u32* count, const unsigned char* hs,
                             unsigned char* hd, u64 hn) {
  WL_PLAY(wl_runs(w, n, starts, ends, cap, count, hs, hd, hn))
}
extern "C" void t_runs(unsigned grid, unsigned block, const unsigned char* w, u64 n, u64* starts,
                       u64* ends, u64 cap, u32* count) {
  t_runs_hints(grid, block, w, n, starts, ends, cap, count, 0, 0, 0);
}
extern "C" void t_aside(unsigned grid, unsigned block, u32* w, u64 nw, u32* aside, const u32* count,
                        u64 cap) {
  WL_PLAY(wl_aside(w, nw, aside, count, cap))
}
/* wl_gate: one block of 64 threads, run as 64 host threads meeting at its __syncthreads */
static unsigned char* g_rep; static const u64* g_at; static const u64* g_ok; static u64 g_n;
static u32* g_sticky; static u64* g_land;
static int g_bits;
static void* gate_thread(void* arg) {
  threadIdx.x = (unsigned)(uintptr_t)arg; blockIdx.x = 0;
  if (g_bits) wl_gate_bits(g_rep, g_at[0], g_at[1], g_at[2], g_at[3], g_at[4], g_at[5], g_at[6], g_ok, g_n, g_sticky, g_land);
  else wl_gate(g_rep, g_at[0], g_at[1], g_at[2], g_at[3], g_at[4], g_at[5], g_at[6], g_ok, g_n, g_sticky, g_land);
  return 0;
}
extern "C" void t_gate(unsigned char* rep, const u64* at, const u64* ok, u64 n, u32* sticky, u64* land,
                       int bits) {
  g_rep = rep; g_at = at; g_ok = ok; g_n = n; g_sticky = sticky; g_land = land; g_bits = bits;
  blockDim.x = 64; gridDim.x = 1;
  pthread_barrier_init(&wl_bar, 0, 64);
  pthread_t th[64];
  for (unsigned i = 0; i < 64; i++) pthread_create(&th[i], 0, gate_thread, (void*)(uintptr_t)i);
  for (unsigned i = 0; i < 64; i++) pthread_join(th[i], 0);
  pthread_barrier_destroy(&wl_bar);
}
"""


_FLAGS = ("-O1", "-std=c++17", "-fno-strict-aliasing", "-shared", "-fPIC", "-pthread")


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return host_build.load(
        tmp_path_factory.mktemp("land"), "land", SHIM + R._RUNS_SRC + MAPBITS + DRIVER, _FLAGS
    )


@pytest.fixture(scope="module")
def lib_general(tmp_path_factory):
    """the same with the general marking form alone (codegen's WL_MARK_GROUP 0:
    WAVELIFT_CUDA_MAPMARK=general)"""
    src = SHIM + "#define WL_MARK_GROUP 0\n" + R._RUNS_SRC + MAPBITS + DRIVER
    return host_build.load(tmp_path_factory.mktemp("land_general"), "land_general", src, _FLAGS)


@pytest.fixture(scope="module")
def lib_span(tmp_path_factory):
    """the same with mapbits.h's span form on (codegen's WL_MARK_SPAN 1 and WL_MARK_GROUP 0:
    WAVELIFT_CUDA_MAPMARK=span)"""
    src = SHIM + "#define WL_MARK_SPAN 1\n#define WL_MARK_GROUP 0\n" + R._RUNS_SRC + MAPBITS + DRIVER
    return host_build.load(tmp_path_factory.mktemp("land_span"), "land_span", src, _FLAGS)


def _p(a):
    return ctypes.c_void_p(a.ctypes.data)


def _aligned(n: int, shift: int = 0) -> np.ndarray:
    """n bytes starting ``shift`` bytes past a 16-byte bound."""
    raw = np.zeros(n + 64, np.uint8)
    at = (-raw.ctypes.data) % 16 + shift
    return raw[at : at + n]


def _table(s, e) -> np.ndarray:
    """run_table's table followed by junk -- a run over every byte, as a table entry past the
    last one would read it -- so that a kernel reading past the count lands bytes never written."""
    t = R.run_table(s, e)
    return np.concatenate((t, np.array([0, 1 << 40, 1 << 40] * 4, np.uint64)))


def _masked(dst, doff, src, mask, o, n):
    """The masked commit wl_land replaced (the oracle): each byte of the window [o, o + n) whose
    map byte is nonzero into dst at doff, the map cleared over the window."""
    m = mask[o : o + n] != 0
    dst[doff : doff + n][m] = src[o : o + n][m]
    mask[o : o + n] = 0


def _case(rng, size: int):
    """A map over ``size`` arena bytes marked only inside windows (the kernel writes nowhere
    else) -- windows at random offsets, some adjacent (a run across their edge) -- with runs of
    every length from scattered bytes to whole windows; -> (map, [(offset, size)] windows)."""
    wins, pos = [], int(rng.integers(0, 40))
    while pos < size - 1:
        n = int(rng.integers(1, max(2, size // 3)))
        n = min(n, size - pos)
        wins.append((pos, n))
        pos += n + (0 if rng.random() < 0.4 else int(rng.integers(1, 40)))
    w = np.zeros(size, np.uint8)
    for o, n in wins:
        kind = rng.random()
        if kind < 0.2:
            w[o : o + n] = 1  # (written whole: one run)
        elif kind < 0.5:
            w[o : o + n] = rng.random(n) < rng.choice([0.02, 0.5, 0.95])
        elif kind < 0.8:
            for _ in range(int(rng.integers(0, 8))):
                lo = o + int(rng.integers(0, n))
                w[lo : min(o + n, lo + int(rng.integers(1, 80)))] = rng.integers(1, 256)
    return w, wins


@pytest.mark.parametrize("seed", range(40))
def test_numpy_land_equals_the_masked_commit(seed):
    """resident.land over the runs wl_runs finds (NumPyOps.runs), window by window, lands what the
    masked commit lands and leaves the map zero (every marked byte lies in a window)."""
    rng = np.random.default_rng(seed)
    size = int(rng.choice([8, 64, 1000, 5000]))
    w, wins = _case(rng, size)
    src = rng.integers(0, 256, size, dtype=np.uint8)
    s, e = R.NumPyOps().runs(w)
    t = R.run_table(s, e)
    m_old, m_new = w.copy(), w.copy()
    for o, n in wins:
        doff = int(rng.integers(0, 20))
        dst = rng.integers(0, 256, n + 40, dtype=np.uint8)
        want = dst.copy()
        _masked(want, doff, src, m_old, o, n)
        R.land(dst[doff:], src, m_new, o, n, t)
        assert np.array_equal(dst, want), (seed, o, n)
    assert np.array_equal(m_new, m_old) and not m_new.any()


def test_run_table_counts_the_pieces_runs_meet():
    t = R.run_table([0, 15, 17, 40], [1, 17, 18, 72])
    assert t.tolist() == [4, 0, 1, 1, 15, 17, 3, 17, 18, 4, 40, 72, 7]
    assert R.run_table([], []).tolist() == [0]


def _byte_map(size, stores):
    """the byte map the stores of ``_stores`` mark: 1 at each byte an active lane stores"""
    ref = np.zeros(size, np.uint8)
    for nb, active, ix in stores:
        for lane in range(32):
            if active >> lane & 1:
                ref[ix[lane] : ix[lane] + nb] = 1
    return ref


def _land_every_window(land, rng, seed, wins, src, mp, t, oracle, marked):
    """``land`` (t_land or t_land_bits) each window of ``wins`` from the arena ``src`` over the
    map ``mp`` (bytes or bits) with the run table ``t``: each lands what the masked commit over
    ``oracle`` (the byte map, cleared as it lands) lands -- the device copy at each alignment mod
    16, grids of one thread up, gated on a clear sticky word for every third seed -- and the map
    is zero after; then, the map set to ``marked`` again and the sticky word set, nothing lands
    and the map stays."""
    gated = seed % 3 == 1
    sticky = np.zeros(1, np.uint32)
    for i, (o, n) in enumerate(wins):
        da = (seed + 5 * i) % 16
        dst = _aligned(n + 40, da)
        dst[:] = rng.integers(0, 256, n + 40, dtype=np.uint8)
        want = dst.copy()
        _masked(want, 3, src, oracle, o, n)
        grid, block = [(1, 1), (3, 7), (4, 32), (64, 256)][(seed + i) % 4]
        sk = _p(sticky) if gated else None
        land(grid, block, _p(dst[3:]), _p(src), _p(mp), ctypes.c_uint64(o), ctypes.c_uint64(n), _p(t), sk)
        assert np.array_equal(dst, want), (seed, o, n, da, grid, block)
    assert not oracle.any() and not mp.any()
    mp[:] = marked
    sticky[0] = 1
    for o, n in wins:
        dst = _aligned(n, 0)
        dst[:] = 7
        land(8, 32, _p(dst), _p(src), _p(mp), ctypes.c_uint64(o), ctypes.c_uint64(n), _p(t), _p(sticky))
        assert (dst == 7).all()
    assert np.array_equal(mp, marked)


@pytest.mark.parametrize("seed", range(24))
def test_compiled_land_equals_the_masked_commit(lib, seed):
    """resident.py's wl_land (and wl_land_gated with the sticky word clear), compiled: every
    window's landing equals the masked commit's -- the device copy at each alignment mod 16 (the
    16-, 8-, 4-byte and byte stores), the arena and map off a 16-byte bound (byte copies only),
    grids of one thread up to more threads than pieces -- and the map is zero after; with the
    sticky word set wl_land_gated lands nothing."""
    rng = np.random.default_rng(100 + seed)
    size = int(rng.choice([8, 64, 1000, 5000]))
    w0, wins = _case(rng, size)
    shift = 0 if seed % 4 else int(rng.integers(1, 16))
    src, mask = _aligned(size, shift), _aligned(size, shift)
    src[:] = rng.integers(0, 256, size, dtype=np.uint8)
    mask[:] = w0
    s, e = R.NumPyOps().runs(w0)
    t = _table(s, e)
    _land_every_window(lib.t_land, rng, seed, wins, src, mask, t, w0.copy(), w0)


def test_compiled_land_copies_a_large_run_in_wide_pieces(lib):
    """One run over most of a 1 MiB window (vadd's shape), the device copy 8 and 4 bytes off a
    16-byte bound, a grid with fewer threads than pieces: every byte lands, the map is zero."""
    rng = np.random.default_rng(7)
    size = 1 << 20
    src, mask = _aligned(size), _aligned(size)
    src[:] = rng.integers(0, 256, size, dtype=np.uint8)
    for da, (lo, hi) in ((8, (3, size - 5)), (4, (16, size)), (0, (0, size))):
        mask[:] = 0
        mask[lo:hi] = 1
        t = _table([lo], [hi])
        dst = _aligned(size, da)
        dst[:] = 0xEE
        want = dst.copy()
        want[lo:hi] = src[lo:hi]
        lib.t_land(5, 64, _p(dst), _p(src), _p(mask), ctypes.c_uint64(0), ctypes.c_uint64(size), _p(t), None)
        assert np.array_equal(dst, want), da
        assert not mask.any()


@pytest.mark.parametrize("seed", range(12))
def test_compiled_aside_keeps_an_overflowing_map(lib, seed):
    """wl_aside compiled (any grid; amendment h137): the map range zeroed, and copied to the aside
    first exactly where the runs' count passed the room (count 0..2 x cap; the count at the room
    keeps nothing), the aside untouched else -- so the runs of the aside are the map's, which a
    wl_runs over it finds again (NumPyOps.runs).  The map a view 0..3 words past a 16-byte bound
    (h161: its clear by 16-byte stores from the first bound, head and tail words alone) and the
    aside at another offset, lengths of 1 word up at every residue mod 4: no word either side of
    either written."""
    rng = np.random.default_rng(300 + seed)
    nw = int(rng.integers(1, 8)) if seed % 3 == 0 else int(rng.integers(1, 750)) * 4 + seed % 4
    a, b = seed % 4, (seed // 4 + 1) % 4
    w0 = np.where(rng.random(nw) < 0.3, rng.integers(0, 1 << 32, nw, dtype=np.uint64), 0).astype(np.uint32)
    grid, block = [(1, 1), (2, 64), (9, 32), (64, 256)][seed % 4]
    cap = 64
    for c in (0, cap, cap + 1, 2 * cap):
        raw, w = _guarded_view(nw, a)
        w[:] = w0
        araw, aside = _guarded_view(nw, b)
        aside[:] = 0xA5A5A5A5
        count = np.array([c, c], np.uint32)
        lib.t_aside(grid, block, _p(w), ctypes.c_uint64(nw), _p(aside), _p(count), ctypes.c_uint64(cap))
        assert not w.any(), (seed, c)
        assert (raw[: 4 + a] == 0xFFFFFFFF).all() and (raw[4 + a + nw :] == 0xFFFFFFFF).all(), (seed, c)
        assert (araw[: 4 + b] == 0xFFFFFFFF).all() and (araw[4 + b + nw :] == 0xFFFFFFFF).all(), (seed, c)
        if c > cap:
            assert np.array_equal(aside, w0), (seed, c)
            for x, y in zip(R.NumPyOps().runs(aside.copy()), R.NumPyOps().runs(w0)):
                assert np.array_equal(x, y)
        else:
            assert (aside == 0xA5A5A5A5).all(), (seed, c)


@pytest.mark.parametrize("seed", range(6))
def test_compiled_runs_equal_numpyops(lib, seed):
    """wl_runs compiled (any grid): the runs NumPyOps.runs finds, the count past the room too."""
    rng = np.random.default_rng(200 + seed)
    size = 8 * int(rng.integers(1, 600))
    w, _ = _case(rng, size)
    cap = int(rng.choice([4, 1 << 14]))
    starts, ends = np.zeros(cap, np.uint64), np.zeros(cap, np.uint64)
    count = np.zeros(2, np.uint32)
    grid, block = [(1, 1), (2, 64), (9, 32)][seed % 3]
    lib.t_runs(
        grid, block, _p(w), ctypes.c_uint64(size), _p(starts), _p(ends), ctypes.c_uint64(cap), _p(count)
    )
    s, e = R.NumPyOps().runs(w)
    assert count.tolist() == [s.size, e.size]
    if s.size <= cap:
        assert sorted(starts[: s.size].tolist()) == s.tolist()
        assert sorted(ends[: e.size].tolist()) == e.tolist()


@pytest.mark.parametrize("bits", [False, True], ids=["bytes", "bits"])
def test_compiled_gate_equals_its_numpy_statement(lib, bits):
    """wl_gate compiled (64 threads at a barrier) on random reports -- flags, escapes, counts past
    the room, runs inside and across the ranges, the sticky word set or not -- gives resident.gate's
    verdict, sticky word and run table; the table lands what the masked commit lands.  ``bits``:
    wl_gate_bits (32-byte pieces) and wl_land_bits over a bit map."""
    from wavelift.backends.cuda import runtime as RT

    rng = np.random.default_rng(96 + bits)
    at = (RT.STATS_BYTES, 16, RT.RUNS_AT, RT.STARTS_AT, RT.ENDS_AT, RT.VERDICT_AT, RT.INLINE_RUNS)
    verdicts = set()
    for trial in range(150):
        rep = np.zeros(RT.REPORT_BYTES, np.uint8)
        st = rep[RT.STATS_BYTES : RT.STATS_BYTES + 64].view(np.uint32)
        st[0] = rng.random() < 0.05
        st[4] = rng.random() < 0.05
        rep[16:24].view(np.uint64)[0] = rng.random() < 0.05
        c = int(rng.integers(0, 70))
        bounds = np.sort(rng.choice(4096, 2 * c, replace=False)).astype(np.uint64)
        s_, e_ = bounds[0::2].copy(), bounds[1::2].copy()
        k = min(c, RT.INLINE_RUNS)
        rep[RT.RUNS_AT : RT.RUNS_AT + 8].view(np.uint32)[:] = c
        rep[RT.STARTS_AT : RT.STARTS_AT + 8 * k].view(np.uint64)[:] = rng.permutation(s_)[:k]
        rep[RT.ENDS_AT : RT.ENDS_AT + 8 * k].view(np.uint64)[:] = rng.permutation(e_)[:k]
        ok = [0, 4096] if rng.random() < 0.7 else sorted(int(x) for x in rng.choice(4096, 4, replace=False))
        okt = np.array(ok, np.uint64)
        sticky = np.array([rng.random() < 0.1], np.uint32)
        table = np.full(1 + 3 * RT.INLINE_RUNS, 0xAB, np.uint64)
        h_rep, h_sticky, h_table = rep.copy(), sticky.copy(), table.copy()
        lib.t_gate(
            _p(rep),
            _p(np.array(at, np.uint64)),
            _p(okt),
            ctypes.c_uint64(okt.size // 2),
            _p(sticky),
            _p(table),
            ctypes.c_int(bits),
        )
        R.gate(h_rep, at, okt, h_sticky, h_table, 5 if bits else 4)
        assert np.array_equal(rep, h_rep) and np.array_equal(sticky, h_sticky), trial
        v = int(rep[RT.VERDICT_AT : RT.VERDICT_AT + 4].view(np.uint32)[0])
        verdicts.add(v)
        assert np.array_equal(table, h_table), trial
        if v == 0:  # (its table lands the runs' bytes: as the masked commit over a map of them)
            w = np.zeros(4096, np.uint8)
            for s, e in zip(s_, e_):
                w[s:e] = 1
            src = rng.integers(0, 256, 4096, dtype=np.uint8)
            dst, want = np.zeros(4096, np.uint8), np.zeros(4096, np.uint8)
            m = _bitmap(w) if bits else w.copy()
            _masked(want, 0, src, w, 0, 4096)
            (lib.t_land_bits if bits else lib.t_land)(
                4, 32, _p(dst), _p(src), _p(m), ctypes.c_uint64(0), ctypes.c_uint64(4096), _p(table), None
            )
            assert np.array_equal(dst, want) and not m.any(), trial
    assert verdicts == {0, 1, 2}


# ---------------------------------------------------------------- the bit map (0049, h111)


def _bitmap(flags) -> np.ndarray:
    """The bit map of a byte map (the oracle: NumPy's packbits, little-endian bit order --
    bit i & 31 of word i >> 5 for byte i), as 32-bit words."""
    f = np.asarray(flags) != 0
    f = np.concatenate((f, np.zeros(-f.size % 32, bool)))
    return np.packbits(f, bitorder="little").view(np.uint32).copy()


def test_run_table_counts_32_byte_pieces():
    t = R.run_table([0, 15, 31, 40, 64], [1, 17, 33, 72, 65], 5)
    assert t.tolist() == [5, 0, 1, 1, 15, 17, 2, 31, 33, 4, 40, 72, 6, 64, 65, 7]


@pytest.mark.parametrize("seed", range(24))
def test_numpy_bit_map_statements_equal_the_byte_map(seed):
    """NumPyOps.runs over a bit map finds the byte map's runs, and resident.land over a bit map
    (with a 32-byte-piece run table) lands what the masked commit lands and leaves every bit
    clear -- the NumPy statements the stand-in devices run for WAVELIFT_CUDA_MAP=bits."""
    rng = np.random.default_rng(300 + seed)
    size = int(rng.choice([8, 64, 1000, 5000]))
    w, wins = _case(rng, size)
    bm = _bitmap(w)
    s, e = R.NumPyOps().runs(w)
    sb, eb = R.NumPyOps().runs(bm)
    assert sb.tolist() == s.tolist() and eb.tolist() == e.tolist()
    assert np.array_equal(R.map_flags(bm)[:size], w != 0) and not R.map_flags(bm)[size:].any()
    src = rng.integers(0, 256, size, dtype=np.uint8)
    t = R.run_table(s, e, 5)
    oracle = w.copy()
    for o, n in wins:
        dst = rng.integers(0, 256, n, dtype=np.uint8)
        want = dst.copy()
        _masked(want, 0, src, oracle, o, n)
        R.land(dst, src, bm, o, n, t)
        assert np.array_equal(dst, want), (seed, o, n)
    assert not bm.any()


# store instructions' sizes: sub-word, word, the 8-, 12- and 16-byte stores (an atomic's cell is
# 4 or 8 bytes at its own alignment)
STORE_SIZES = (1, 2, 3, 4, 8, 12, 16)


def _stores(rng, size: int, wins, count: int):
    """``count`` store instructions of a warp, each (nb, active lanes mask, the lanes' arena
    indices) -- every lane's bytes inside one window (wl_res: the kernel stores nowhere else):
    consecutive lanes (vadd's shape, crossing 32-byte words), every lane at one address
    (overlapping), random lanes, lanes at a window's end (the arena's last window reaches its end)."""
    out = []
    for _ in range(count):
        nb = int(rng.choice(STORE_SIZES))
        okw = [(o, n) for o, n in wins if n >= nb]
        if not okw:
            continue
        r = rng.random()
        active = 0xFFFFFFFF if r < 0.4 else int(rng.integers(1, 1 << 32))
        ix = np.zeros(32, np.int64)
        how = rng.random()
        o, n = okw[int(rng.integers(0, len(okw)))]
        base = o + int(rng.integers(0, n - nb + 1))
        for lane in range(32):
            if how < 0.35:  # consecutive (a stride of nb, or of 4 for sub-word stores)
                a = base + lane * (nb if rng.random() < 0.9 else max(nb, 4))
            elif how < 0.5:
                a = base
            elif how < 0.7:
                a = o + n - nb - int(rng.integers(0, 3))
            else:
                o2, n2 = okw[int(rng.integers(0, len(okw)))]
                a = o2 + int(rng.integers(0, n2 - nb + 1))
                o, n = o2, n2
            # (inside the window the lane's address lies in, else in the first one it fits)
            if not any(ow <= a and a + nb <= ow + nw for ow, nw in wins):
                a = base
            ix[lane] = a
        out.append((nb, active, ix))
    return out


def _mark(lib, bm, stores, warp: int = 0):
    for nb, active, ix in stores:
        bad = lib.t_mark(_p(bm), _p(ix), ctypes.c_uint32(nb), ctypes.c_uint32(active), ctypes.c_uint32(warp))
        assert bad == 0, "a warp intrinsic's mask named a lane that was not there"


@pytest.mark.parametrize("form", ["group", "general"])
@pytest.mark.parametrize("seed", range(12))
def test_compiled_bit_marking_equals_the_byte_map(lib, lib_general, seed, form):
    """mapbits.h's wl_mark_bits compiled, each store instruction's active lanes run as threads
    meeting at every __match_any_sync / __reduce_or_sync (an atomicOr by each group's lowest
    lane): after random store patterns -- sub-word and unaligned stores, lanes overlapping, runs
    over 32-bit word and 32-byte piece bounds, stores at the arena's end -- the bit map is
    exactly the byte map's bits (each lane's bytes marked, nothing else); with the group form
    (the default) and the general form alone."""
    lib = lib if form == "group" else lib_general
    rng = np.random.default_rng(400 + seed)
    size = int(rng.choice([64, 1000, 2056, 5000]))
    _, wins = _case(rng, size)
    wins = [(o, n) for o, n in wins if o + n <= size] + ([(size - 40, 40)] if seed % 2 else [])
    wins = sorted(set(wins))
    stores = _stores(rng, size, wins, 60)
    ref = _byte_map(size, stores)
    bm = np.zeros(R.map_words(size), np.uint32)
    _mark(lib, bm, stores, seed % 4)
    assert np.array_equal(bm, _bitmap(ref))


@pytest.mark.parametrize("seed", range(4))
def test_compiled_span_marking_equals_the_byte_map(lib_span, seed):
    """mapbits.h's span form (WL_MARK_SPAN 1, decision 0049's amendment h139) compiled: whole-warp
    unit-stride stores (lane l at ix0 + l nb: every store size, ix0 at every offset in a 32-byte
    word, ranges crossing words and ending at the arena's end) mark through it alone -- no
    __match_any_sync --, and near misses (a lane off, a lane a byte away, nb 32) through the
    general form; after all of them the bit map is exactly the byte map's bits.  Then the
    random stores of the general test, on the same build, equal the byte map too."""
    rng = np.random.default_rng(900 + seed)
    size = 4096
    spans, misses = [], []
    for nb in STORE_SIZES:
        for _ in range(12):
            ix0 = int(rng.integers(0, size - 32 * nb + 1)) if rng.random() < 0.8 else size - 32 * nb
            spans.append((nb, 0xFFFFFFFF, ix0 + nb * np.arange(32, dtype=np.int64)))
            ix = ix0 + nb * np.arange(32, dtype=np.int64)
            lane = int(rng.integers(0, 32))
            if rng.random() < 0.5:
                misses.append((nb, 0xFFFFFFFF & ~(1 << lane), ix))
            else:
                ix = ix.copy()
                ix[lane] = ix[lane] - 1 if ix[lane] > 0 else ix[lane] + 1
                misses.append((nb, 0xFFFFFFFF, ix))
    ix0 = int(rng.integers(0, size - 32 * 32 + 1))  # (32 bytes a lane: wider than the span form)
    misses.append((32, 0xFFFFFFFF, ix0 + 32 * np.arange(32, dtype=np.int64)))
    bm = np.zeros(R.map_words(size), np.uint32)
    before = lib_span.t_matches()
    _mark(lib_span, bm, spans, seed % 4)
    assert lib_span.t_matches() == before, "a unit-stride warp store took the general form"
    assert np.array_equal(bm, _bitmap(_byte_map(size, spans)))
    _mark(lib_span, bm, misses, seed % 4)
    assert lib_span.t_matches() > before
    assert np.array_equal(bm, _bitmap(_byte_map(size, spans + misses)))
    _, wins = _case(rng, size)
    stores = _stores(rng, size, sorted(set((o, n) for o, n in wins if o + n <= size)), 60)
    bm = np.zeros(R.map_words(size), np.uint32)
    _mark(lib_span, bm, stores, seed % 4)
    assert np.array_equal(bm, _bitmap(_byte_map(size, stores)))


@pytest.fixture(scope="module")
def lib_atomic(tmp_path_factory):
    """mapbits.h with every map word set by atomicOr (WL_MAP_FILL_STORE 0: WAVELIFT_CUDA_MAPFILL=atomic)"""
    src = SHIM + "#define WL_MAP_FILL_STORE 0\n" + R._RUNS_SRC + MAPBITS + DRIVER
    return host_build.load(tmp_path_factory.mktemp("land_atomic"), "land_atomic", src, _FLAGS)


@pytest.mark.parametrize("form", ["group", "general", "span", "atomic"])
def test_whole_map_words_are_stored_not_ored(lib, lib_general, lib_span, lib_atomic, form):
    """mapbits.h's WL_MAP_FILL_STORE (decision 0049's session-52 amendment): a map word one warp
    store covers whole is set by a store of all ones -- 4 words for a warp's 32 x 4 bytes at a
    32-byte bound, 3 when it starts 4 bytes past one (the two end words partial: atomicOr) --
    in the group form (the first by its 4 groups of 8 lanes, the second by the general form:
    no group of 8 lanes starts at a bound), the general form and the span form, none with
    WL_MAP_FILL_STORE 0; the words it stores
    over held other bits already, and with random stores after, the bit map is exactly the byte
    map's bits."""
    lib_ = {"group": lib, "general": lib_general, "span": lib_span, "atomic": lib_atomic}[form]
    size = 4096
    lanes = 4 * np.arange(32, dtype=np.int64)
    early = [(1, 1, np.array([64 + 5] + [0] * 31, np.int64))]  # (a bit in a word filled later)
    stores = [(4, 0xFFFFFFFF, 64 + lanes), (4, 0xFFFFFFFF, 1028 + lanes)]
    bm = np.zeros(R.map_words(size), np.uint32)
    _mark(lib_, bm, early)
    before = lib_.t_fills()
    _mark(lib_, bm, stores[:1])
    assert lib_.t_fills() - before == (0 if form == "atomic" else 4)
    _mark(lib_, bm, stores[1:])
    assert lib_.t_fills() - before == (0 if form == "atomic" else 7)
    rng = np.random.default_rng(52)
    _, wins = _case(rng, size)
    more = _stores(rng, size, sorted(set((o, n) for o, n in wins if o + n <= size)), 60)
    _mark(lib_, bm, more)
    assert np.array_equal(bm, _bitmap(_byte_map(size, early + stores + more)))


def _group_rest(nb: int, active: int, ix) -> int:
    """The lanes of a store that mark through the general form under mapbits.h's group form (the
    oracle, from decision 0049's amendment h160's rule): every active lane but those of the
    aligned groups of g = 32 // nb lanes (nb 1, 2, 4, 8, 16) that are all active and store one
    32-byte-aligned piece in lane order; every active lane for other sizes."""
    if nb not in (1, 2, 4, 8, 16):
        return active
    g, rest = 32 // nb, 0
    for lead in range(0, 32, g):
        lanes = range(lead, lead + g)
        fast = all(active >> j & 1 for j in lanes) and ix[lead] % 32 == 0
        if not (fast and all(ix[j] == ix[lead] + (j - lead) * nb for j in lanes)):
            rest |= active & (((1 << g) - 1) << lead)
    return rest


def _fills(nb: int, active: int, ix, rest: int) -> int:
    """The map words a store sets by WL_MAP_FILL (the oracle): one per fast group (the active
    lanes not in ``rest``), and, for the lanes of ``rest``, one per word whose bits from the
    lanes meeting on it are all ones -- the general form meets on each lane's first word, then
    (when a lane's bytes reach it) on the word after (nb <= 16: one 32-byte piece a lane)."""
    fast = bin(active & ~rest).count("1") * nb // 32
    first, second = {}, {}
    for lane in range(32):
        if rest >> lane & 1:
            b = ((1 << nb) - 1) << (int(ix[lane]) & 31)
            w = int(ix[lane]) >> 5
            first[w] = first.get(w, 0) | (b & 0xFFFFFFFF)
            second[w + 1] = second.get(w + 1, 0) | (b >> 32)
    return fast + sum(v == 0xFFFFFFFF for v in (*first.values(), *second.values()))


def _group_stores(rng, size: int):
    """Store instructions near the group form's rule, for every store size (size: a multiple of
    32): a whole warp in lane order from a 32-byte bound (vadd's), each aligned group of lanes at
    its own bound with gaps between (shade's rows of 8 pixels), the warp from every offset in a
    word, groups with a lane not active (the first, one inside, the last), a lane a byte off,
    two lanes of a group swapped (the word whole, not in lane order), a lane in another group's
    word, groups ending at the arena's end, random lanes."""
    out = []
    lanes = np.arange(32, dtype=np.int64)
    for nb in STORE_SIZES:
        g = 32 // nb if nb in (1, 2, 4, 8, 16) else 1
        top = size - 32 * nb  # (the last whole warp's start)
        warp = lambda at: at + nb * lanes  # noqa: E731
        rows = lambda: np.repeat(32 * rng.integers(0, size // 32, 32 // g), g)[:32] + nb * (lanes % g)  # noqa: E731
        out.append((nb, 0xFFFFFFFF, warp(32 * int(rng.integers(0, top // 32 + 1)))))
        out.append((nb, 0xFFFFFFFF, warp(top)))  # (to the arena's end)
        out.append((nb, 0xFFFFFFFF, rows()))
        ends = rows()
        ends[-g:] = size - 32 + nb * np.arange(g)  # (the last group at the arena's last word)
        out.append((nb, 0xFFFFFFFF, ends))
        for off in range(32):
            out.append((nb, 0xFFFFFFFF, warp(32 * int(rng.integers(0, top // 32)) + off)))
        for lead in (0, g // 2, g - 1):  # (a lane of every group not there, or of one)
            drop = 0
            for k in range(0, 32, g):
                drop |= 1 << (k + lead) if rng.random() < 0.5 else 0
            out.append((nb, 0xFFFFFFFF & ~drop | 0, rows()))
        out.append((nb, int(rng.integers(1, 1 << 32)), rows()))
        for _ in range(3):
            ix = rows()
            j = int(rng.integers(0, 32))
            how = int(rng.integers(0, 3))
            if how == 0:  # (a byte off)
                ix[j] += 1 if ix[j] < size - nb else -1
            elif how == 1 and g > 1:  # (two lanes of a group swapped)
                k = j ^ 1
                ix[j], ix[k] = ix[k], ix[j]
            else:  # (another group's word, its lane's place there)
                ix[j] = ix[(j + g) % 32] - nb * ((j + g) % 32 % g) + nb * (j % g)
            out.append((nb, 0xFFFFFFFF, ix))
    return [(nb, a, np.clip(ix, 0, size - nb).astype(np.int64)) for nb, a, ix in out]


@pytest.mark.parametrize("form", ["group", "general", "atomic"])
# (seed 0 in the default run -- every fixed case and 60 random stores each build; 1, 2 slow)
@pytest.mark.parametrize("seed", [0, *(pytest.param(k, marks=pytest.mark.slow) for k in (1, 2))])
def test_compiled_group_marking_equals_the_byte_map(lib, lib_general, lib_atomic, form, seed):
    """mapbits.h's group form (WL_MARK_GROUP 1, the default: decision 0049's amendment h160)
    compiled, each store's lanes as threads: for every store size and shape of _group_stores,
    exactly the lanes _group_rest names call __match_any_sync (the general form's), the map
    words set by a plain store are _fills's (one per fast group, by one lane), and after them
    all and random stores the bit map is exactly the byte map's bits.  ``general``
    (WL_MARK_GROUP 0): every active lane takes the general form; ``atomic`` (the group form with
    WL_MAP_FILL_STORE 0): the same lanes as ``group``, no plain store."""
    lib_ = {"group": lib, "general": lib_general, "atomic": lib_atomic}[form]
    rng = np.random.default_rng(1600 + seed)
    size = 32 * int(rng.integers(40, 160))
    stores = _group_stores(rng, size)
    bm = np.zeros(R.map_words(size), np.uint32)
    fast = partial = 0
    for nb, active, ix in stores:
        rest = active if form == "general" else _group_rest(nb, active, ix)
        fills = lib_.t_fills()
        _mark(lib_, bm, [(nb, active, ix)], seed)
        assert lib_.t_match_lanes() & 0xFFFFFFFF == rest, (nb, hex(active), ix.tolist())
        want = 0 if form == "atomic" else _fills(nb, active, ix, rest)
        assert lib_.t_fills() - fills == want, (nb, hex(active), ix.tolist())
        fast += rest != active
        partial += 0 < rest != active
    assert np.array_equal(bm, _bitmap(_byte_map(size, stores)))
    if form != "general":  # (the cases reach the fast path, whole warps and warps in part)
        assert fast > 40 and partial > 15, (fast, partial)
    _, wins = _case(rng, size)
    more = _stores(rng, size, sorted(set((o, n) for o, n in wins if o + n <= size)), 60)
    _mark(lib_, bm, more, seed)
    assert np.array_equal(bm, _bitmap(_byte_map(size, stores + more)))


def test_compiled_group_marking_above_4_gib_takes_the_general_form(lib):
    """mapbits.h's group form compares a lane's index with its lead's in 32 bits (decision 0049's
    session-56 amendment): exact only below the heap's 4 GiB, so a lane at or above it never
    passes -- its group marks through the general form, the map still exactly the byte map's.
    The arena here seen 4 GiB - 1 KiB up (the map pointer moved down by as much, so the marks land
    in the same words): stores below 1 KiB lie under 4 GiB and keep the fast form, those above
    do not, and a warp across 4 GiB has both."""
    rng = np.random.default_rng(1656)
    size = 32 * 96
    shift = (1 << 32) - 1024
    stores = _group_stores(rng, size)
    bm = np.zeros(R.map_words(size), np.uint32)
    wr = ctypes.c_void_p(bm.ctypes.data - shift // 8)
    below = above = 0
    for nb, active, ix in stores:
        rest = _group_rest(nb, active, ix)
        g = 32 // nb if nb in (1, 2, 4, 8, 16) else 32
        for lead in range(0, 32, g):  # (a group at or above 4 GiB: the general form)
            if ix[lead] + shift >= 1 << 32:
                rest |= active & (((1 << g) - 1) << lead)
        fills = lib.t_fills()
        ixs = (ix + shift).astype(np.int64)
        assert lib.t_mark(wr, _p(ixs), ctypes.c_uint32(nb), ctypes.c_uint32(active), ctypes.c_uint32(0)) == 0
        assert lib.t_match_lanes() & 0xFFFFFFFF == rest, (nb, hex(active), ix.tolist())
        assert lib.t_fills() - fills == _fills(nb, active, ix, rest)
        below += rest != active
        above += any(ix[j] + shift >= 1 << 32 for j in range(32) if active >> j & 1)
    assert np.array_equal(bm, _bitmap(_byte_map(size, stores)))
    assert below > 10 and above > 40, (below, above)


@pytest.mark.parametrize("seed", range(8))
def test_compiled_runs_bits_equal_the_byte_runs(lib, seed):
    """wl_runs_bits compiled (any grid) over the bit map of a byte map: the runs NumPyOps.runs
    finds over the byte map (count past the room too) -- runs across words, a run over the
    arena's last byte."""
    rng = np.random.default_rng(500 + seed)
    size = 8 * int(rng.integers(1, 600))
    w, _ = _case(rng, size)
    if seed % 2:
        w[size - int(rng.integers(1, 70)) :] = 1  # (a run ending at the arena's end)
    bm = _bitmap(w)
    cap = int(rng.choice([4, 1 << 14]))
    starts, ends = np.zeros(cap, np.uint64), np.zeros(cap, np.uint64)
    count = np.zeros(2, np.uint32)
    grid, block = [(1, 32), (2, 64), (9, 32)][seed % 3]  # (blockDim a multiple of 32: h161)
    bad = lib.t_runs_bits(
        grid, block, _p(bm), ctypes.c_uint64(bm.size), _p(starts), _p(ends), ctypes.c_uint64(cap), _p(count)
    )
    assert not bad
    s, e = R.NumPyOps().runs(w)
    assert count.tolist() == [s.size, e.size]
    if s.size <= cap:
        assert sorted(starts[: s.size].tolist()) == s.tolist()
        assert sorted(ends[: e.size].tolist()) == e.tolist()


@pytest.mark.parametrize("bits", [False, True], ids=["bytes", "bits"])
def test_compiled_runs_copy_the_hints_into_the_report(lib, bits):
    """wl_runs / wl_runs_bits compiled with the hints' copy folded into their launch (h161): the
    hn bytes of WL_HINT land at the report's place, every grid from one warp up, the bytes either
    side untouched, the runs as without it (NumPyOps.runs); hn 0 copies nothing."""
    rng = np.random.default_rng(161 + bits)
    for hn, (grid, block) in (
        (0, (1, 32)),
        (4, (1, 32)),
        (28, (2, 64)),
        (4 * 700, (3, 32)),
        (4 * 2049, (2, 256)),
    ):
        w = (rng.random(512) < 0.4).astype(np.uint8)
        m = _bitmap(w) if bits else w
        hs = rng.integers(0, 256, hn + 1, dtype=np.uint8)
        rep = np.full(hn + 64, 0xEE, np.uint8)
        starts, ends = np.zeros(1 << 10, np.uint64), np.zeros(1 << 10, np.uint64)
        count = np.zeros(2, np.uint32)
        call = lib.t_runs_bits_hints if bits else lib.t_runs_hints
        r = call(
            grid,
            block,
            _p(m),
            ctypes.c_uint64(m.size),
            _p(starts),
            _p(ends),
            ctypes.c_uint64(1 << 10),
            _p(count),
            _p(hs),
            _p(rep[32:]),
            ctypes.c_uint64(hn),
        )
        assert not (bits and r)
        assert np.array_equal(rep[32 : 32 + hn], hs[:hn]), (bits, hn)
        assert (rep[:32] == 0xEE).all() and (rep[32 + hn :] == 0xEE).all(), (bits, hn)
        s, e = R.NumPyOps().runs(w)
        assert count.tolist() == [s.size, e.size]
        assert (
            sorted(starts[: s.size].tolist()) == s.tolist() and sorted(ends[: e.size].tolist()) == e.tolist()
        )


def _guarded_view(nw: int, a: int) -> tuple[np.ndarray, np.ndarray]:
    """A map view of ``nw`` words starting ``a`` words past a 16-byte bound, in a buffer whose
    words before and after it are all ones -> (buffer, view): a kernel that reads or writes
    outside the view meets them (an edge scan sees runs there, a clear's guard words change)."""
    raw = _aligned(4 * (nw + 12)).view(np.uint32)
    raw[:] = 0xFFFFFFFF
    return raw, raw[4 + a : 4 + a + nw]


def _bits_map(rng, kind: str, nw: int, a: int, block: int) -> np.ndarray:
    """A bit map of ``nw`` words (as bools, 32 a word) for wl_runs_bits' split of the work: the
    view ``a`` words past its 16-byte bound, so the kernel's quads start at word 4q - a, its warps'
    at 128q - a, its blocks' at 4 block q - a.  ``random``: every bit at random (edges at every bit
    of every word); ``ones``: all ones (one run over every thread); ``long``: runs and gaps of up to
    thousands of bits (runs over many threads, warps, blocks); ``edges``: runs starting and ending
    at, one before and one after the bound of a word, a quad, a warp or a block."""
    n = 32 * nw
    f = np.zeros(n, np.bool_)
    if kind == "random":
        f[:] = rng.random(n) < rng.choice([0.05, 0.5, 0.95])
    elif kind == "ones":
        f[:] = True
    elif kind == "long":
        pos = int(rng.integers(0, 40))
        while pos < n:
            run = int(rng.integers(1, 5000))
            f[pos : pos + run] = True
            pos += run + int(rng.integers(1, 3000))
    else:
        cuts = [
            32 * (g * q - a) + d
            for g in (1, 4, 128, 4 * block)
            for q in range(n // (32 * g) + 2)
            for d in (-1, 0, 1)
        ]
        cuts = sorted({c for c in cuts if 0 <= c <= n})
        pick = np.sort(rng.choice(cuts, size=2 * (len(cuts) // 3), replace=False))
        for lo, hi in zip(pick[0::2], pick[1::2]):
            f[lo:hi] = True
    return f


@pytest.mark.parametrize("a", range(4))
@pytest.mark.parametrize("kind", ["random", "ones", "long", "edges"])
def test_compiled_runs_bits_over_quads_warps_and_blocks(lib, kind, a):
    """wl_runs_bits compiled (warps' lanes as threads meeting at each shuffle and vote; h161):
    maps with edges at every bit, all ones, runs over many threads and blocks, edges at every
    word, quad, warp and block bound; views 0..3 words past a 16-byte bound, lengths at every
    residue mod 4 (a last, partial quad alone in its warp too), a grid-stride loop of several
    rounds -- the starts, ends and count NumPyOps.runs
    finds; with less room than runs the count still the runs', the room holding distinct runs'
    edges and nothing written past it; the map and the all-ones words either side of the view
    unchanged (none read: a word outside would add or hide an edge)."""
    rng = np.random.default_rng(700 + 10 * a + len(kind))
    for trial in range(4):
        grid, block = [(1, 32), (2, 64), (3, 256), (5, 32)][(trial + a) % 4]
        nw = int(rng.integers(1, 900)) * 4 + (trial + a) % 4 if trial else int(rng.integers(1, 9))
        if trial == 3:  # (the last quad, partial, a warp's first lane)
            nw = 128 * int(rng.integers(1, 8)) + 1 + a % 3 - a
        raw, view = _guarded_view(nw, a)
        f = _bits_map(rng, kind, nw, a, block)
        view[:] = np.packbits(f, bitorder="little").view(np.uint32)
        before = raw.copy()
        want_s, want_e = R.NumPyOps().runs(view.copy())
        for cap in (1 << 16, max(1, want_s.size // 3)):
            starts = np.full(cap + 8, 0xEEEE, np.uint64)
            ends = np.full(cap + 8, 0xEEEE, np.uint64)
            count = np.zeros(2, np.uint32)
            bad = lib.t_runs_bits(
                grid,
                block,
                _p(view),
                ctypes.c_uint64(nw),
                _p(starts),
                _p(ends),
                ctypes.c_uint64(cap),
                _p(count),
            )
            assert not bad
            assert np.array_equal(raw, before)
            assert count.tolist() == [want_s.size, want_e.size], (kind, a, nw, grid, block)
            k = min(cap, want_s.size)
            got_s, got_e = np.sort(starts[:k]).astype(np.int64), np.sort(ends[:k]).astype(np.int64)
            assert (starts[k:] == 0xEEEE).all() and (ends[k:] == 0xEEEE).all()
            if k == want_s.size:
                assert np.array_equal(got_s, want_s) and np.array_equal(got_e, want_e), (kind, a, nw)
            else:
                assert np.unique(got_s).size == k and np.isin(got_s, want_s).all()
                assert np.unique(got_e).size == k and np.isin(got_e, want_e).all()


@pytest.mark.parametrize("seed", range(24))
def test_compiled_bit_map_landing_equals_the_masked_commit(lib, seed):
    """The whole bit-map path compiled: random warp stores marked by wl_mark_bits, their runs
    found by wl_runs_bits, a 32-byte-piece run table, wl_land_bits (or wl_land_gated_bits with
    the sticky word clear) per window -- the device copy at each alignment, the arena off a
    16-byte bound, grids of one thread up: every window lands what the masked commit over the
    byte map lands, and the bit map is zero after (what was set is cleared, nothing more
    needed); with the sticky word set nothing lands and the map stays."""
    rng = np.random.default_rng(600 + seed)
    size = int(rng.choice([64, 1000, 2056, 5000]))
    _, wins = _case(rng, size)
    if seed % 3 == 0 and wins and wins[-1][0] + wins[-1][1] < size:  # (a window at the arena's end)
        o, _n = wins[-1]
        wins[-1] = (o, size - o)
    stores = _stores(rng, size, wins, 40)
    ref = _byte_map(size, stores)
    bm = np.zeros(R.map_words(size), np.uint32)
    _mark(lib, bm, stores)
    marked = bm.copy()
    cap = 1 << 14
    starts, ends = np.zeros(cap, np.uint64), np.zeros(cap, np.uint64)
    count = np.zeros(2, np.uint32)
    assert not lib.t_runs_bits(
        3, 32, _p(bm), ctypes.c_uint64(bm.size), _p(starts), _p(ends), ctypes.c_uint64(cap), _p(count)
    )
    s = np.sort(starts[: count[0]]).astype(np.int64)
    e = np.sort(ends[: count[1]]).astype(np.int64)
    t = _table(s, e)
    t[: 1 + 3 * s.size] = R.run_table(s, e, 5)
    shift = 0 if seed % 4 else int(rng.integers(1, 16))
    src = _aligned(size, shift)
    src[:] = rng.integers(0, 256, size, dtype=np.uint8)
    _land_every_window(lib.t_land_bits, rng, seed, wins, src, bm, t, ref.copy(), marked)


def test_compiled_land_bits_copies_a_large_run_in_wide_pieces(lib):
    """One run over most of a 1 MiB window, the device copy 8, 4 and 0 bytes off a 16-byte bound,
    fewer threads than pieces: every byte lands, the bit map is zero."""
    rng = np.random.default_rng(8)
    size = 1 << 20
    src = _aligned(size)
    src[:] = rng.integers(0, 256, size, dtype=np.uint8)
    for da, (lo, hi) in ((8, (3, size - 5)), (4, (32, size)), (0, (0, size)), (12, (17, 49))):
        f = np.zeros(size, np.uint8)
        f[lo:hi] = 1
        bm = _bitmap(f)
        t = _table([lo], [hi])
        t[:4] = R.run_table([lo], [hi], 5)
        dst = _aligned(size, da)
        dst[:] = 0xEE
        want = dst.copy()
        want[lo:hi] = src[lo:hi]
        lib.t_land_bits(
            5, 64, _p(dst), _p(src), _p(bm), ctypes.c_uint64(0), ctypes.c_uint64(size), _p(t), None
        )
        assert np.array_equal(dst, want), da
        assert not bm.any()


def _ptx(src: str) -> str:
    """NVRTC's PTX of ``src`` for sm_90 with the backend's options (optimised, as a module is)."""
    from wavelift.backends.cuda import compile as CC

    nv = CC._nvrtc()
    if nv is None:
        pytest.skip(f"NVRTC: {CC.nvrtc_problem()}")
    res = nv.nvrtcCreateProgram(src.encode(), b"t.cu", 0, [], [])
    prog = res[1]
    try:
        opts = [b"-arch=compute_90"] + [o.encode() for o in CC.OPTIONS]
        r = nv.nvrtcCompileProgram(prog, len(opts), opts)
        if int(r[0]) != 0:
            _, n = nv.nvrtcGetProgramLogSize(prog)
            log = bytearray(n)
            nv.nvrtcGetProgramLog(prog, log)
            pytest.fail(log.decode(errors="replace")[:4000])
        _, n = nv.nvrtcGetPTXSize(prog)
        buf = bytearray(n)
        nv.nvrtcGetPTX(prog, buf)
        return buf.decode(errors="replace")
    finally:
        nv.nvrtcDestroyProgram(prog)


def test_runs_source_compiles_with_nvrtc():
    """resident.py's source through NVRTC (as CuPy's RawModule compiles it on a GPU): every
    kernel of both map forms is there; the bit map's landing clears partial words with an
    atomic and-, its scan finds bits with one instruction per run edge."""
    text = _ptx(R._RUNS_SRC)
    for name in ("wl_runs", "wl_land", "wl_gate", "wl_land_gated", "wl_aside", "wl_fold") + tuple(
        f"{k}_bits" for k in ("wl_runs", "wl_land", "wl_gate", "wl_land_gated")
    ):
        assert f".entry {name}(" in text, name
    assert "atom.global.and.b32" in text
    _quads_in(text)


@pytest.mark.parametrize("form", ["bytes", "bits"])
def test_generated_kernels_mark_the_map_of_the_setting(form, monkeypatch):
    """Generated kernels under WAVELIFT_CUDA_MAP (clang fixtures with global stores and a global
    atomic) compile with NVRTC to PTX for sm_90; ``bits``: their source says WL_MAP_BITS 1
    (Module.map_bits), the PTX marks through match.any / redux.sync / atom.or and stores no map
    byte; ``bytes``: none of it (today's kernel); the setting is part of the module key."""
    import fixture_dispatches as F
    from test_cuda_backend import translate_dispatch

    from wavelift.backends.cuda import BACKEND
    from wavelift.backends.cuda.codegen import baked_params, generate, source_map_bits

    monkeypatch.setenv("WAVELIFT_CUDA_MAP", form)
    wanted = {"vadd", "atomics"}
    seen = set()
    for name, mem, cfg in F.clang_dispatches():
        kern = name.split(":")[1]
        if kern not in wanted - seen or "-O2-w32" not in name:
            continue
        seen.add(kern)
        prog, base = translate_dispatch(mem, cfg)
        src = generate(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, baked_params(cfg))[0]
        assert source_map_bits(src) == (form == "bits")
        assert BACKEND.key_extra(cfg)[-1] == form
        text = _ptx(src)
        marks = ("match.any.sync.b64", "redux.sync.or.b32", "atom.global.or.b32")
        if form == "bits":
            assert all(m in text for m in marks), (name, [m for m in marks if m not in text])
        else:
            assert not any(m in text for m in marks[:2]), name
    assert seen == wanted, seen


def _vadd_sources(monkeypatch, form: str, setting: str, value: str):
    """clang's vadd's module source and key under WAVELIFT_CUDA_MAP=``form`` with ``setting``
    unset and then ``value`` -> (name, source before, after, key before, after, generate)."""
    import fixture_dispatches as F
    from test_cuda_backend import translate_dispatch

    from wavelift.backends.cuda import BACKEND
    from wavelift.backends.cuda.codegen import baked_params, generate

    name, mem, cfg = next(
        d for d in F.clang_dispatches() if d[0].startswith("gfx1030/basic-O2-w32-flat:vadd")
    )
    prog, base = translate_dispatch(mem, cfg)
    gen = lambda: generate(prog, cfg.wave_size, "lane", cfg.scratch_wave_bytes, base, baked_params(cfg))[0]  # noqa: E731
    monkeypatch.setenv("WAVELIFT_CUDA_MAP", form)
    monkeypatch.delenv(setting, raising=False)
    plain, key = gen(), BACKEND.key_extra(cfg)
    monkeypatch.setenv(setting, value)
    return name, plain, gen(), key, BACKEND.key_extra(cfg), gen


def _map_setting(monkeypatch, form: str, setting: str, value: str, defines: tuple, key_form: str):
    """``_vadd_sources`` with ``setting`` = ``value``, checked: with the byte map neither the
    source nor the key changes (-> None); with the bit map the source gains ``defines`` and the
    key's map form becomes ``key_form`` -> (name, PTX with the value, PTX without, generate)."""
    name, plain, src, key, after, gen = _vadd_sources(monkeypatch, form, setting, value)
    if form == "bytes":
        assert src == plain and after == key
        return None
    for d in defines:
        assert f"#define {d}" in src and f"#define {d}" not in plain, d
    assert after[-1] == key_form and key[-1] == "bits"
    return name, _ptx(src), _ptx(plain), gen


def _refuses_other_values(monkeypatch, setting: str, gen) -> None:
    monkeypatch.setenv(setting, "yes")
    with pytest.raises(ValueError, match=setting.rsplit("_", 1)[-1]):
        gen()


@pytest.mark.parametrize("form", ["bytes", "bits"])
def test_span_marking_setting_is_in_the_source_and_the_key(form, monkeypatch):
    """WAVELIFT_CUDA_MAPMARK=span (decision 0049's amendment h139): with the bit map, clang's vadd's
    source says WL_MARK_SPAN 1 (and WL_MARK_GROUP 0), its PTX marks through the span form
    (shfl.sync.idx, vote.sync.all) beside the general one (match.any), and the module key says
    so; with the byte map the setting changes neither the source nor the key."""
    got = _map_setting(
        monkeypatch, form, "WAVELIFT_CUDA_MAPMARK", "span", ("WL_MARK_SPAN 1", "WL_MARK_GROUP 0"), "bits+span"
    )
    if got is None:
        return
    name, text, before, _ = got
    assert all(m in text for m in ("shfl.sync.idx", "vote.sync.all", "match.any.sync.b64")), name
    assert "vote.sync.all" not in before


@pytest.mark.parametrize("form", ["bytes", "bits"])
def test_group_marking_setting_is_in_the_source_and_the_key(form, monkeypatch):
    """WAVELIFT_CUDA_MAPMARK (decision 0049's amendment h160): with the bit map, clang's vadd's
    PTX marks through the group form by default (its lead's index by shfl.sync.idx, beside the
    general form's match.any); `general` says WL_MARK_GROUP 0 in the source and `bits+general`
    in the key, and its PTX has no shfl; with the byte map the setting changes neither; a value
    other than the three is refused."""
    got = _map_setting(
        monkeypatch, form, "WAVELIFT_CUDA_MAPMARK", "general", ("WL_MARK_GROUP 0",), "bits+general"
    )
    if got is None:
        return
    name, text, before, gen = got
    assert all(m in before for m in ("shfl.sync.idx", "match.any.sync.b64")), name
    assert "shfl.sync.idx" not in text and "match.any.sync.b64" in text, name
    _refuses_other_values(monkeypatch, "WAVELIFT_CUDA_MAPMARK", gen)


@pytest.mark.parametrize("form", ["bytes", "bits"])
def test_map_fill_setting_is_in_the_source_and_the_key(form, monkeypatch):
    """WAVELIFT_CUDA_MAPFILL (decision 0049's session-52 amendment): with the bit map, clang's vadd's
    PTX sets a whole map word by a relaxed gpu-scope store (`store`, the default) beside the
    partial words' atomic or; `atomic` says WL_MAP_FILL_STORE 0 in the source and the key, and its
    PTX has no such store; with the byte map the setting changes neither; a value other than the
    two is refused."""
    got = _map_setting(
        monkeypatch, form, "WAVELIFT_CUDA_MAPFILL", "atomic", ("WL_MAP_FILL_STORE 0",), "bits+atomic"
    )
    if got is None:
        return
    name, text, before, gen = got
    assert "st.relaxed.gpu" in before and "st.relaxed.gpu" not in text, name
    assert re.search(r"\b(red|atom)\.(global\.)?(or|gpu)", before) and re.search(r"\b(red|atom)\.", text)
    _refuses_other_values(monkeypatch, "WAVELIFT_CUDA_MAPFILL", gen)


def test_source_compiles_as_cuda_device_code(tmp_path):
    """resident.py's CUDA source compiled as CUDA device code by clang (PTX for sm_90, no CUDA
    headers: the few builtins it uses declared here) -- what NVRTC will see on a GPU: every
    kernel is there and wl_land's wide pieces are 16-byte loads and stores."""
    clang = shutil.which("clang++-19") or shutil.which("/usr/lib/llvm-19/bin/clang++")
    if not clang:
        pytest.skip("clang++ 19 not installed")
    head = r"""#include <__clang_cuda_builtin_vars.h>
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
__device__ inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { uint4 r = {x, y, z, w}; return r; }
__device__ unsigned atomicAdd(unsigned* p, unsigned v);
__device__ unsigned long long atomicAdd(unsigned long long* p, unsigned long long v);
__device__ unsigned atomicOr(unsigned* p, unsigned v);
__device__ unsigned atomicAnd(unsigned* p, unsigned v);
__device__ int __ffs(int x);
__device__ void __syncthreads();
__device__ inline int __popc(unsigned x) { return __builtin_popcount(x); }
__device__ inline unsigned __shfl_up_sync(unsigned m, unsigned v, unsigned d) { return __nvvm_shfl_sync_up_i32(m, v, d, 0); }
__device__ inline unsigned __shfl_down_sync(unsigned m, unsigned v, unsigned d) { return __nvvm_shfl_sync_down_i32(m, v, d, 0x1f); }
__device__ inline unsigned __shfl_sync(unsigned m, unsigned v, int l) { return __nvvm_shfl_sync_idx_i32(m, v, l, 0x1f); }
__device__ inline int __any_sync(unsigned m, int p) { return __nvvm_vote_any_sync(m, p); }
"""
    src, ptx = tmp_path / "runs.cu", tmp_path / "runs.ptx"
    src.write_text(head + R._RUNS_SRC)
    r = subprocess.run(
        [clang, "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_90"]
        + ["-std=c++14", "-O2", "-Wno-unknown-cuda-version", "-S", str(src), "-o", str(ptx)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr[:4000]
    text = ptx.read_text()
    for name in ("wl_runs", "wl_land", "wl_gate", "wl_land_gated"):
        assert f".entry {name}(" in text, name
        assert f".entry {name}_bits(" in text, name
    assert ".entry wl_aside(" in text
    assert "ld.global.v4.u32" in text and "st.global.v4.u32" in text


def _entry(ptx: str, name: str) -> str:
    """The PTX of kernel ``name`` (to the next entry: its functions are inlined)."""
    at = ptx.index(f".entry {name}(")
    nxt = ptx.find(".entry ", at + 1)
    return ptx[at : nxt if nxt > 0 else len(ptx)]


def _quads_in(ptx: str) -> None:
    """h161's forms: wl_runs_bits loads 16 bytes a thread, its neighbours' words by shuffle and a
    warp's edges in one vote; wl_aside clears by 16-byte stores."""
    runs, aside = _entry(ptx, "wl_runs_bits"), _entry(ptx, "wl_aside")
    assert re.search(r"ld\.global(\.nc)?\.v4\.u32", runs), "wl_runs_bits: no 16-byte load"
    assert "shfl.sync.up" in runs and "shfl.sync.down" in runs and "vote.sync.any" in runs
    assert "st.global.v4.u32" in aside, "wl_aside: no 16-byte store"


def test_stats_setting_is_in_the_module_key(monkeypatch):
    """WAVELIFT_CUDA_STATS other than `auto` (0009's session-53 amendment) is the module key's last
    part and changes the source (vadd, wave32: `auto` is block, `wave` the per-wave atomics), so
    a module cached in memory under one form is not another's; `auto` adds nothing to the key."""
    name, plain, src, key, after, gen = _vadd_sources(monkeypatch, "bits", "WAVELIFT_CUDA_STATS", "wave")
    assert after[:-1] == key and after[-1] == "stats=wave", (key, after)
    call = (
        "  wl_count_block(lane < 32u, icnt + ic, lc);"  # (the call site: kernel.h defines it in every source)
    )
    assert call in plain and call not in src and "wl_count_(C.wave, lane, icnt + ic, lc);" in src, name
    monkeypatch.setenv("WAVELIFT_CUDA_STATS", "auto")
    assert gen() == plain
