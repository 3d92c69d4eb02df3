/* CUDA kernel: the written map as bits (kernel.h's WL_MAP_BITS 1; decision 0049's amendment h111):
   bit ix & 31 of the 32-bit word ix >> 5 is set for arena byte ix a store wrote, by one atomicOr
   per map word and warp -- the lanes that reach the store together (__activemask) and mark the
   same word (__match_any_sync) or their bits together (__reduce_or_sync) and the lowest of them
   sets them.  (Blocks are 1-D: a thread's lane is threadIdx.x & 31.)  Fixed text; tested on the
   host with the warp's lanes as threads (tests/cuda/test_land_host.py). */
__device__ __forceinline__ void wl_or_warp(u32* p, u32 v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  const u32 peers = __match_any_sync(__activemask(), (unsigned long long)p);
  const u32 all = __reduce_or_sync(peers, v);
  if (all != 0u && (u32)(__ffs((int)peers) - 1) == (threadIdx.x & 31u)) atomicOr(p, all);
#else
  if (v != 0u) atomicOr(p, v);
#endif
}
/* the bits of arena bytes [ix, ix + nb): 32 bytes at a time, each piece in at most two words;
   the lanes meet for the second word only where one of them reaches it (__any_sync: a uniform
   branch, so every lane of the meeting is there -- aligned word stores skip it) */
__device__ __forceinline__ void wl_mark_bits(u8* wr, i64 ix, u32 nb) {
  for (u32 k = 0; k < nb; k += 32u) {
    const u64 i = (u64)ix + k;
    const u32 c = nb - k < 32u ? nb - k : 32u;
    const u64 b = ((c == 32u ? 0xFFFFFFFFull : (1ull << c) - 1ull)) << (u32)(i & 31u);
    u32* m = (u32*)wr + (i >> 5);
    wl_or_warp(m, (u32)b);
    if (__any_sync(__activemask(), (u32)(b >> 32) != 0u)) wl_or_warp(m + 1, (u32)(b >> 32));
  }
}
