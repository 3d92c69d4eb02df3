#!/usr/bin/env python3
"""h161's A/B of the in-place graph's map kernels in one run: ``python3 h161_scan_ab.py old|new
SCRIPT ARGS...`` runs SCRIPT (bench_resident.py, inplace_nodes.py) as __main__ in this process
with ``old`` = main's wl_runs_bits and wl_aside before h161 (a 32-bit word a thread, its
neighbours read from memory, an atomicAdd an edge; the clear by 4-byte stores; a word a thread up
to 8192 blocks) put in place of h161's, ``new`` as the tree has them.  Both copy the hints by
wl_runs' launch (h161's fold: the old scan takes wl_hints too), so the A/B is the scan and the
clear alone; the hints' memcpy node main had is gone from both.  The old kernels are kept
here, not in the product (resident.py has one form of each)."""

import runpy
import sys

import wavelift.backends.cuda.resident as R

OLD = r"""
extern "C" __global__ void wl_runs_bits_old(const u32* w, u64 nw, u64* starts, u64* ends, u64 cap,
                                            u32* count, const unsigned char* hs, unsigned char* hd, u64 hn) {
  wl_hints(hs, hd, hn);
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nw; i += (u64)gridDim.x * blockDim.x) {
    const u32 x = w[i];
    if (x == 0u) continue;
    const u32 prev = i > 0 ? w[i - 1] : 0u, next = i + 1 < nw ? w[i + 1] : 0u;
    u32 st = x & ~((x << 1) | (prev >> 31)), en = x & ~((x >> 1) | (next << 31));
    while (st) {
      const u32 k = (u32)__ffs((int)st) - 1u;
      st &= st - 1u;
      const u32 s = atomicAdd(&count[0], 1u);
      if (s < cap) starts[s] = 32 * i + k;
    }
    while (en) {
      const u32 k = (u32)__ffs((int)en) - 1u;
      en &= en - 1u;
      const u32 e = atomicAdd(&count[1], 1u);
      if (e < cap) ends[e] = 32 * i + k + 1;
    }
  }
}
extern "C" __global__ void wl_aside_old(u32* w, u64 nw, u32* aside, const u32* count, u64 cap) {
  const bool keep = *count > cap;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < nw; i += (u64)gridDim.x * blockDim.x) {
    if (keep) aside[i] = w[i];
    w[i] = 0u;
  }
}
"""


def use_old() -> None:
    """main's two kernels and their grid in every CuPyOps made from now on."""
    R._RUNS_SRC = R._RUNS_SRC + OLD
    init = R.CuPyOps.__init__

    def __init__(self):
        init(self)
        get = self._mod.get_function
        self._runs = (self._runs[0], get("wl_runs_bits_old"))
        self._aside = get("wl_aside_old")

    R.CuPyOps.__init__ = __init__
    R.CuPyOps._quads_grid = lambda self, words: self._grid(words)  # (main's: a word a thread)


if __name__ == "__main__":
    which = sys.argv[1]
    if which == "old":
        use_old()
    elif which != "new":
        raise SystemExit("old or new")
    print(f"h161_scan_ab: {which} map kernels", flush=True)
    sys.argv = sys.argv[2:]
    runpy.run_path(sys.argv[0], run_name="__main__")
