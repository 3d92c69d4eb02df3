"""WAVELIFT_CUDA_COUNT_SLOTS (decision 0009's amendment h152), without a GPU: a kernel whose
waves add their instruction and lane counts to more slots than the report's 256 (kernel.h's
WL_WIDE_SLOTS, WL_WIDE) and resident.py's wl_fold after it leave the report's stats word for word
as the report's own slots do (kernel.h's wl_count_ and wl_fold compiled for the host by g++), and
the slots zero for the next launch; through the runtime on the stand-in device, every launch's
counts -- the full path, the kept plans, in place and on the arena -- are its own kernel's,
exactly; the setting (part of the module key: test_cuda_stored_host.py) refuses what is not a power of two from 256
to 65536; the generated module compiles (NVRTC, where importable)."""

from __future__ import annotations

import ctypes
import pathlib
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

SLOTS = (256, 1024, 4096, 16384)

# wl_count_ over the given (wave, lane, instructions, lanes) calls into the report's stats (and,
# with WL_WIDE_SLOTS, the slots ``wide``), then wl_fold's grid (blocks of 512 threads), one
# thread at a time (it has no barrier): the stats after both, and wide after
DRIVER = r"""
struct wl_dim { unsigned x; };
static wl_dim blockIdx, threadIdx;
@FOLD_SOURCE@
extern "C" void wl_test(const u64* wave, const u32* lane, const u64* icnt, const u32* lc, long count,
                        u64* wide, u64 groups, u64* out) {
  static u64 stats[8 + 2 * 256];
  for (int j = 0; j < 8 + 2 * 256; j++) stats[j] = 0ull;
  WL_STATS = stats;
#ifdef WL_WIDE_SLOTS
  WL_WIDE = wide;
#endif
  for (long i = 0; i < count; i++) wl_count_(wave[i], lane[i], icnt[i], lc[i]);
  if (groups)
    for (u32 b = 0; b < (groups + WL_FOLD - 1) / WL_FOLD; b++)
      for (u32 t = 0; t < 512u; t++) { blockIdx.x = b; threadIdx.x = t; wl_fold(wide, groups, stats); }
  for (int j = 0; j < 8 + 2 * 256; j++) out[j] = stats[j];
}
/* wl_count_pair (WAVELIFT_CUDA_STATS=pair) over the given calls into the report's stats */
extern "C" void wl_test_pair(const u64* wave, const u32* lane, const u64* icnt, const u32* lc, long count,
                             u64* out) {
  static u64 stats[8 + 2 * 256];
  for (int j = 0; j < 8 + 2 * 256; j++) stats[j] = 0ull;
  WL_STATS = stats;
  for (long i = 0; i < count; i++) wl_count_pair(wave[i], lane[i], icnt[i], lc[i]);
  for (int j = 0; j < 8 + 2 * 256; j++) out[j] = stats[j];
}
"""


def _fold_source() -> str:
    """wl_fold's text as resident.py's CUDA source holds it (its WL_FOLD to its closing brace)."""
    from wavelift.backends.cuda.resident import _RUNS_SRC

    i = _RUNS_SRC.index("#define WL_FOLD")
    j = _RUNS_SRC.index("\n}\n", _RUNS_SRC.index("wl_fold(", i)) + 3
    return _RUNS_SRC[i:j]


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    from test_cuda_memory_host import build_memory_lib

    out = {}
    for n in SLOTS:
        extra = "" if n == 256 else f"#define WL_WIDE_SLOTS {n}u\n"
        out[n] = build_memory_lib(
            tmp_path_factory, f"count{n}", DRIVER.replace("@FOLD_SOURCE@", _fold_source()), extra
        )
    return out


def _run(lib, n, calls, wide=None):
    wave, lane, icnt, lc = (np.ascontiguousarray(c) for c in calls)
    groups = 0 if n == 256 else n // 256
    wide = np.zeros(max(2 * n, 1), np.uint64) if wide is None else wide
    out = np.zeros(8 + 512, np.uint64)
    p = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    lib.wl_test(
        p(wave), p(lane), p(icnt), p(lc), ctypes.c_long(wave.size), p(wide), ctypes.c_uint64(groups), p(out)
    )
    return out, wide


def _calls(rng, waves: int):
    """Each wave's wl_count_ calls as a kernel makes them: one per thread at the end (lane 0
    with the wave's instructions, lanes 0 and 32 with their warps' lane counts) and lane-count
    calls without instructions (a budget check's: icnt 0), waves numbered past 2^32 too."""
    w = np.repeat(np.arange(waves, dtype=np.uint64) + np.uint64(rng.integers(0, 1 << 40)), 64)
    lane = np.tile(np.arange(64, dtype=np.uint32), waves)
    icnt = np.where(lane == 0, rng.integers(0, 1 << 40, w.size), rng.integers(0, 1 << 20, w.size)).astype(
        np.uint64
    )
    icnt[rng.random(w.size) < 0.3] = 0
    lc = rng.integers(0, 1 << 31, w.size).astype(np.uint32)
    return w, lane, icnt, lc


def _want(calls) -> np.ndarray:
    """The report's stats as wl_count_'s rule states it: wave w's instructions (lane 0's,
    nonzero) in word 8 + 2 (w % 256), each warp's lanes (lanes 0, 32) in word 9 + 2 (w % 256)."""
    w, lane, icnt, lc = calls
    k = (w % np.uint64(256)).astype(np.int64)
    out = np.zeros(8 + 512, np.uint64)
    i = (lane == 0) & (icnt != 0)
    np.add.at(out, 8 + 2 * k[i], icnt[i])
    j = (lane & 31) == 0
    np.add.at(out, 9 + 2 * k[j], lc[j].astype(np.uint64))
    return out


@pytest.mark.parametrize("width", [32, 64])
def test_pair_counts_are_the_per_wave_counts(libs, width):
    """WAVELIFT_CUDA_STATS=pair (0009's amendment h162): the kernel's end call from every thread
    of every wave (its instructions and each warp's lanes the same in all its lanes, as the
    kernel holds them; waves that ran nothing too) leaves the report's stats as wl_count_'s rule
    does -- instructions once a wave (a wave64's second warp adds none), lanes once a warp."""
    rng = np.random.default_rng(width)
    waves = 700
    w = np.repeat(np.arange(waves, dtype=np.uint64) + np.uint64(rng.integers(0, 1 << 40)), width)
    lane = np.tile(np.arange(width, dtype=np.uint32), waves)
    per_wave = rng.integers(0, 1 << 40, waves).astype(np.uint64)
    per_wave[rng.random(waves) < 0.2] = 0
    icnt = np.repeat(per_wave, width)
    lc = np.repeat(rng.integers(0, 1 << 31, waves * width // 32).astype(np.uint32), 32)
    calls = [np.ascontiguousarray(c) for c in (w, lane, icnt, lc)]
    p = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    out = np.zeros(8 + 512, np.uint64)
    libs[256].wl_test_pair(*(p(c) for c in calls), ctypes.c_long(w.size), p(out))
    assert np.array_equal(out, _want(calls))
    assert out[8::2].sum() == per_wave.sum() and out[9::2].sum() == lc[::32].astype(np.uint64).sum()


@pytest.mark.parametrize("n", SLOTS)
def test_wide_slots_folded_are_the_report_slots(libs, n):
    rng = np.random.default_rng(n)
    for waves in (1, 255, 257, n - 1, n + 3, 3 * n + 17):
        calls = _calls(rng, waves)
        got, wide = _run(libs[n], n, calls)
        assert np.array_equal(got, _want(calls)), (n, waves)
        assert not wide.any(), "wl_fold leaves the slots zero for the next launch"


def test_wide_slots_spread_the_waves(libs):
    """The point of the setting: consecutive waves add to n different slots, not 256 (the slot
    each wave's instructions reach, read from the slots before the fold)."""
    n = 1024
    waves = np.arange(n, dtype=np.uint64)
    calls = (waves, np.zeros(n, np.uint32), waves + np.uint64(1), np.zeros(n, np.uint32))
    wide = np.zeros(2 * n, np.uint64)
    lib = libs[n]
    p = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    out = np.zeros(8 + 512, np.uint64)
    c = [np.ascontiguousarray(x) for x in calls]
    lib.wl_test(*(p(x) for x in c), ctypes.c_long(n), p(wide), ctypes.c_uint64(0), p(out))
    assert wide[0::2].tolist() == (waves + np.uint64(1)).tolist()
    assert not out.any()


def test_count_slots_setting_and_source(monkeypatch):
    from wavelift.backends.cuda import codegen as G

    monkeypatch.delenv("WAVELIFT_CUDA_COUNT_SLOTS", raising=False)
    assert G.count_slots() == 256
    for bad in ("128", "1000", "131072", "0"):
        monkeypatch.setenv("WAVELIFT_CUDA_COUNT_SLOTS", bad)
        with pytest.raises(ValueError):
            G.count_slots()
    from test_cuda_lean_host import _clamp, _compiles, _program, _source

    monkeypatch.delenv("WAVELIFT_CUDA_COUNT_SLOTS", raising=False)
    plain = _source(_program(_clamp))
    assert "#define WL_WIDE_SLOTS" not in plain and G.source_count_slots(plain) == 256
    for n in SLOTS[1:]:
        monkeypatch.setenv("WAVELIFT_CUDA_COUNT_SLOTS", str(n))
        src = _source(_program(_clamp))
        assert G.source_count_slots(src) == n
        assert src.replace(f"#define WL_WIDE_SLOTS {n}u\n", "") == plain
    _compiles(src)


# ---- through the runtime on the stand-in device ------------------------------------------------


@pytest.mark.parametrize("inplace", ["off", "proved"])
@pytest.mark.parametrize("n", [1024, 4096])
def test_standin_launches_count_exactly(standin, monkeypatch, inplace, n):
    """vadd launched again and again (the full path, then the kept plans: graphs, deferred
    runs; in place or on the arena) by a stand-in kernel that adds its waves' counts as
    kernel.h's wl_count_ does with WL_WIDE_SLOTS n (wave w's to slot w % n of WL_WIDE, more waves
    than slots, different counts each launch): each result's instructions and lane instructions
    are exactly its launch's (the fold ran after each launch, and zeroed the slots)."""
    from test_host_path import _at, _device, _vadd_from_kernargs

    monkeypatch.setenv("WAVELIFT_CUDA_COUNT_SLOTS", str(n))
    monkeypatch.setenv("WAVELIFT_CUDA_INPLACE", inplace)
    dev, k = _device()
    m = 64
    a = dev.upload(np.arange(m, dtype=np.float32))
    c = dev.alloc(4 * m)
    vadd = _vadd_from_kernargs(count=0)  # (its counts: below)
    rng = np.random.default_rng(n)
    want: list = []

    def kernel(arena, written, ws, we, wo, consts):
        vadd(arena, written, ws, we, wo, consts)
        wide = _at(consts["WL_WIDE"], np.uint64, 2 * n)
        waves = n + int(rng.integers(1, n))
        ins = rng.integers(0, 1 << 40, waves).astype(np.uint64)
        lanes = rng.integers(0, 1 << 20, waves).astype(np.uint64)
        np.add.at(wide, 2 * (np.arange(waves) % n), ins)
        np.add.at(wide, 2 * (np.arange(waves) % n) + 1, lanes)
        want.append((int(ins.sum()), int(lanes.sum())))

    standin.kernel = kernel
    for i in range(12):
        r = k.launch(global_size=(m, 1, 1), block=(64, 1, 1), args=[a, a, c, np.uint32(m)])
        assert r.refusal is None, r.refusal
        assert (r.stats["instructions"], r.stats["lane_instructions"]) == want[-1], i
    assert np.array_equal(dev.download(c, np.float32), 2 * np.arange(m, dtype=np.float32))
