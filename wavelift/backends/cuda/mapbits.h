/* CUDA kernel: the written map as bits (kernel.h's WL_MAP_BITS 1; decision 0049's amendment h111):
   bit ix & 31 of the 32-bit word ix >> 5 is set for arena byte ix a store wrote, by one atomicOr
   per map word and warp -- the lanes that reach the store together (__activemask) and mark the
   same word (__match_any_sync) or their bits together (__reduce_or_sync) and the lowest of them
   sets them.  (Blocks are 1-D: a thread's lane is threadIdx.x & 31.)  Fixed text; tested on the
   host with the warp's lanes as threads (tests/cuda/test_land_host.py).  __activemask is read
   once, where the store's lanes arrive together; every later meeting names its lanes (the mask
   passed down), as a fast form's lanes leave before the general form's meet. */
/* WL_MAP_FILL_STORE 1 (the default; codegen: 0 under WAVELIFT_CUDA_MAPFILL=atomic; decision
   0049's session-52 amendment): a map word whose 32 bits one marking sets all (a store's 32
   bytes at a 32-byte bound) is set by a plain (relaxed, gpu-scope) store of all ones, not an
   atomicOr.  Exact: a word OR all ones is all ones whatever it held, and the other warps only OR
   into it, so it ends all ones in any order.  Cheaper where it counts: an atomic needs
   the map's line in L2 -- a big dispatch's data stream evicts it, so a DRAM read first -- and a
   store only its bytes (vadd over 2^26 floats, back to back on an H100, session 50: the byte
   map's plain stores, 8x the bit map's bytes, 0.55 ms; the bit map's atomics 0.83 ms). */
#ifndef WL_MAP_FILL_STORE
#define WL_MAP_FILL_STORE 1
#endif
#ifndef WL_MAP_FILL
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
/* (relaxed at gpu scope: morally strong beside the other warps' atomicOr, no data race; .global
   as CUDA's own __stcg takes a generic pointer to global memory: the map is) */
#define WL_MAP_FILL(p) asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(0xFFFFFFFFu))
#else
#define WL_MAP_FILL(p) (*(p) = 0xFFFFFFFFu)
#endif
#endif
__device__ __forceinline__ void wl_or_word(u32* p, u32 v) {
#if WL_MAP_FILL_STORE && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700)
  if (v == 0xFFFFFFFFu) { WL_MAP_FILL(p); return; }
#endif
  atomicOr(p, v);
}
/* the general form, for any set of lanes ``mask`` (the lanes that arrive together: each call's
   meetings are exactly those lanes): each lane's peers are the lanes of ``mask`` with its word,
   their bits ORed, the lowest peer sets them -- so every lane's bits, and no others, whichever
   lanes ``mask`` holds */
__device__ __forceinline__ void wl_or_warp(u32 mask, u32* p, u32 v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  const u32 peers = __match_any_sync(mask, (unsigned long long)p);
  const u32 all = __reduce_or_sync(peers, v);
  if (all != 0u && (u32)(__ffs((int)peers) - 1) == (threadIdx.x & 31u)) wl_or_word(p, all);
#else
  if (v != 0u) wl_or_word(p, v);
#endif
}
/* WL_MARK_SPAN 1 (codegen: WAVELIFT_CUDA_MAPMARK=span; decision 0049's amendment h139): a whole
   warp storing nb <= 16 bytes a lane at consecutive places -- lane l at ix0 + l nb, vadd's shape
   and any unit-stride store's -- marks one range [ix0, ix0 + 32 nb), the union of the lanes'
   bytes: lane j sets that range's bits of map word (ix0 >> 5) + j (at most 17 words), one
   atomicOr per word met and no __match_any_sync (the general form's MATCH.ANY.U64, two REDUX
   and a vote: most of a bit-marking store's cost).  -> false, nothing marked, for any other
   store (a lane off, another stride, wider), which takes the general form below.  The tests are
   warp-uniform: every lane sees one __activemask and one __all_sync, and nb is the call site's
   constant (codegen passes `{nb}u`; lanes that meet here came through one call; ``act``: the
   store's lanes, __activemask). */
#ifndef WL_MARK_SPAN
#define WL_MARK_SPAN 0
#endif
__device__ __forceinline__ bool wl_mark_span(u8* wr, i64 ix, u32 nb, u32 act) {
  if (nb > 16u || act != 0xFFFFFFFFu) return false;
  const u32 lane = threadIdx.x & 31u;
  const u64 i0 = (u64)__shfl_sync(0xFFFFFFFFu, (unsigned long long)ix, 0);
  if (!__all_sync(0xFFFFFFFFu, (u64)ix == i0 + (u64)(lane * nb))) return false;
  /* lane j's word (lane 0's: i0's) holds bytes [s, s + 32) of the range [0, 32 nb), counted
     from i0: s = 32 j - (i0 & 31) -- small numbers, 32-bit */
  const int s = (int)(lane << 5) - (int)(i0 & 31u), a = s > 0 ? s : 0;
  const int e = s + 32 < (int)(32u * nb) ? s + 32 : (int)(32u * nb);
  if (a < e)  /* (e - a: 1 to 32 bytes) */
    wl_or_word((u32*)wr + (i0 >> 5) + lane, (0xFFFFFFFFu >> (u32)(32 - (e - a))) << (u32)(a - s));
  return true;
}
/* WL_MARK_GROUP 1 (the default; codegen: 0 under WAVELIFT_CUDA_MAPMARK=general or span;
   decision 0049's amendment h160): a store of nb = 1, 2, 4, 8 or 16 bytes a lane (the call
   site's constant) whose aligned group of g = 32 / nb lanes -- lead .. lead + g - 1, lead =
   lane & -g -- stores at i0, i0 + nb, .., i0 + (g - 1) nb, lead's index i0 a multiple of 32,
   covers map word i0 >> 5 whole: lead sets it (wl_or_word: WL_MAP_FILL's plain store of all
   ones, exact as said there) and the group meets no __match_any_sync.  Decided per group, so
   a warp with some irregular groups keeps the fast path for the regular ones (shade's wave: 4
   rows of 8 pixels of 4 bytes, rows apart -- four groups of 8, where the span form needs the
   whole warp in one range): each lane tests its own index against lead's (__shfl_sync) and one
   __ballot_sync gathers the tests; a group is fast when all its g lanes are among ``act`` and
   pass (a lane not there never passes: a partial group is never fast, and lead's index read
   from a lane not there fails only its own group).  -> the lanes of the other groups, which
   mark through the general form with that mask (a second ballot); the fast lanes leave. */
#ifndef WL_MARK_GROUP
#define WL_MARK_GROUP 1
#endif
__device__ __forceinline__ u32 wl_mark_group(u8* wr, i64 ix, u32 nb, u32 act) {
  const u32 lane = threadIdx.x & 31u, g = 32u / nb, lead = lane & (0u - g);
  /* (32-bit: a lane below the heap's 4 GiB -- ix >> 32 zero -- compares its low word with lead's;
     no carry, as i0 & 31 is 0 and the offset below 32; a lane above takes the general form) */
  const u32 i0 = __shfl_sync(act, (u32)ix, (int)lead);
  const bool in = (i0 & 31u) == 0u && (u64)ix == (u64)(i0 + (lane - lead) * nb);
  const u32 pass = __ballot_sync(act, in), gm = 0xFFFFFFFFu >> (32u - g);
  const bool fast = ((pass >> lead) & gm) == gm;
  if (fast && lane == lead) wl_or_word((u32*)(wr + (i0 >> 3)), 0xFFFFFFFFu);  /* (i0 & 31: 0) */
  return __ballot_sync(act, !fast);
}
/* the general form, for the lanes of ``mask``: the bits of each one's arena bytes [ix, ix + nb),
   32 bytes at a time, each piece in at most two words; the lanes meet for the second word only
   where one of them reaches it (__any_sync: a uniform branch, so every lane of the meeting is
   there -- aligned word stores skip it) */
__device__ __forceinline__ void wl_mark_general(u32 mask, u8* wr, i64 ix, u32 nb) {
  for (u32 k = 0; k < nb; k += 32u) {
    const u64 i = (u64)ix + k;
    const u32 c = nb - k < 32u ? nb - k : 32u;
    const u64 b = ((c == 32u ? 0xFFFFFFFFull : (1ull << c) - 1ull)) << (u32)(i & 31u);
    u32* m = (u32*)wr + (i >> 5);
    wl_or_warp(mask, m, (u32)b);
    if (__any_sync(mask, (u32)(b >> 32) != 0u)) wl_or_warp(mask, m + 1, (u32)(b >> 32));
  }
}
/* the bits of arena bytes [ix, ix + nb), the store's lanes together */
__device__ __forceinline__ void wl_mark_bits(u8* wr, i64 ix, u32 nb) {
  u32 act = __activemask();
  if (WL_MARK_SPAN && wl_mark_span(wr, ix, nb, act)) return;
  if (WL_MARK_GROUP && nb <= 16u && (nb & (nb - 1u)) == 0u) {
    act = wl_mark_group(wr, ix, nb, act);
    if (((act >> (threadIdx.x & 31u)) & 1u) == 0u) return;
  }
  wl_mark_general(act, wr, ix, nb);
}
