/* CUDA kernel context (codegen.py, after the prelude): the parameter words, window tables,
   window guesses and mirrors, preloads, and the global memory access paths.  Upper-case
   names the module fills in are replaced by codegen's numbers. */
struct WlCtx {
  WlWin W; u8* arena; u8* written; u32* gscr; u64 wave;
};
/* the written map: WL_MAP_BITS 0, one byte per arena byte (nonzero: stored); 1, one bit
   (WAVELIFT_CUDA_MAP=bits: mapbits.h, decision 0049's amendment h111) */
#ifndef WL_MAP_BITS
#define WL_MAP_BITS 0
#endif
#if WL_MAP_BITS
MAPBITS_H
#endif
/* the dispatch's parameter words (runtime._params) and, when there are at most WL_CW windows,
   the window tables: constant memory, so wave-uniform reads cost no registers or memory latency */
#define WL_CW CONST_WINDOWS
/* WL_GLOBAL: defined here, or (a part of a split build, compile.split_compile) declared here and
   defined by the unit holding wl_main */
#ifdef WL_PART
#define WL_GLOBAL extern
#else
#define WL_GLOBAL
#endif
extern "C" {
WL_GLOBAL __constant__ u32 P[P_WORDS];
/* where the kernel reports -- status flags and the first escape's details, the counts, the
   escape records (runtime.py puts the device buffers' addresses here before each launch):
   constant memory, so the rare paths that write them hold no registers in the hot code */
WL_GLOBAL __constant__ u32* WL_STATUS;
WL_GLOBAL __constant__ u64* WL_STATS;
/* WL_WIDE_SLOTS (WAVELIFT_CUDA_COUNT_SLOTS > 256, decision 0009's amendment h152): the counts'
   slots are WL_WIDE's, a device buffer of their own, zero at each launch, which resident.py's
   wl_fold sums into the report's slot k % 256 after it (and zeroes): fewer waves meet on one
   address, and the host reads the same report */
#ifdef WL_WIDE_SLOTS
WL_GLOBAL __constant__ u64* WL_WIDE;
#define WL_COUNTS WL_WIDE
#define WL_COUNT_MASK (WL_WIDE_SLOTS - 1u)
#else
#define WL_COUNTS (WL_STATS + 8)
#define WL_COUNT_MASK 255u
#endif
WL_GLOBAL __constant__ u32* WL_ESC;
WL_GLOBAL __constant__ u64 WL_WS[WL_CW];
WL_GLOBAL __constant__ u64 WL_WE[WL_CW];
WL_GLOBAL __constant__ i64 WL_WO[WL_CW];
/* per global access (its slot, codegen.Lowering.slot): the window it is expected in, put in
   constant memory by the host before each dispatch (codegen.guesses: the window this access
   last resolved to, in this dispatch's table) as base, limit (window length - access size + 1,
   0: no guess) and arena offset -- an access inside its guess costs a subtraction and a
   compare.  Never trusted: any other address takes wl_res's search. */
WL_GLOBAL __constant__ u64 WL_GB[WL_NGUESS];
WL_GLOBAL __constant__ u64 WL_GL[WL_NGUESS];
WL_GLOBAL __constant__ i64 WL_GO[WL_NGUESS];
/* and the guessed window's arena address less its base, arena + WL_GO - WL_GB mod 2^64 (0: no
   guess), made by the host with the device address of the arena (or heap) the launch runs on
   (runtime._set_constants): a load's pointer is one 64-bit add, WL_GA + addr */
WL_GLOBAL __constant__ u64 WL_GA[WL_NGUESS];
/* per slot of a uniform load: where its guessed window starts in WL_MIRROR, a copy of the
   window made before the dispatch (-1: none).  Uniform loads read the copy from constant
   memory: no memory round trip, and every warp of a wave64 sees the same words without an
   exchange.  The host checks after the dispatch that no copied window was written, else runs
   it again without copies (runtime.py). */
WL_GLOBAL __constant__ i32 WL_GM[WL_NGUESS];
WL_GLOBAL __constant__ u32 WL_MIRROR[WL_MIRROR_WORDS];
/* per preloadable load (preload.py): whether the host resolved it this dispatch (-1: no; else
   where its words start in WL_PRE, always preload.layout's place); read only by the module's
   WL_PRELOADED 0 build, which the runtime launches when some preload is unresolved */
WL_GLOBAL __constant__ i32 WL_PO[WL_NPRE];
WL_GLOBAL __constant__ u32 WL_PRE[WL_PRE_WORDS];
/* per slot: the window it last resolved to, left by any thread of any block or dispatch of this
   module; the host reads it back after a dispatch to make the next one's guesses.  Only a hint:
   each use checks it against this dispatch's tables, so stale or racing values cost a search,
   never a wrong address.  (Straight-line code runs each access once per thread, so a per-thread
   cache of the last window missed on every access; the blocks after the first wave of them hit
   this.) */
WL_GLOBAL __device__ u32 WL_HINT[WL_NSLOT];
}
/* ix with its low bits spelled as the guest address's (equal: WindowSet places each window at an
   arena offset congruent to its address mod 8), so that for an address the code visibly aligns
   (scalar loads) the compiler drops the unaligned byte path */
__device__ __forceinline__ i64 wl_al(i64 ix, u64 addr) { return (ix & ~(i64)7) | (i64)(addr & 7ull); }
/* WL_PROVED 1: the lean build (Module.variant's proved sibling, WAVELIFT_CUDA_PROVED=lean;
   decision 0049's amendment h148), launched only for a dispatch run in place on a proof, every
   slot's guess its proved window (runtime.Runtime._lean).  An access outside its guess can then
   only be a wrong proof: its rare path sets WL_PROOF in status[0] -- the in-place run is refused
   backend.proof -- and touches nothing (a load reads zero, a store stores nothing): no search,
   no hint, no escape record.  The window test stays (the guest is untrusted), and an access
   inside its guess that the direct form does not take (unaligned, 3 bytes) still lands by the
   byte path.  WL_HINT is never written: the runtime puts the proved windows there. */
#ifndef WL_PROVED
#define WL_PROVED 0
#endif
#define WL_PROOF 32u
#if WL_PROVED
/* guess: false where the caller has just found the address outside its guess (wl_gload_b /
   wl_gstore_b: WL_REGUESS) */
__device__ __forceinline__ bool wl_res(WlCtx& C, u64 addr, u32 nb, i64* idx, u32 slot, bool guess = true) {
  if (!guess || slot >= WL_NGUESS) return false;  /* (no guess: never launched so, the runtime's rule) */
  const u64 d = addr - WL_GB[slot];
  if (d < WL_GL[slot]) { *idx = WL_GO[slot] + (i64)d; return true; }
  return false;
}
#else
/* guess: false where the caller has just found the address outside its guess or unaligned
   (wl_gload / wl_gstore with WL_RETEST 0): the search finds the guessed window just as well */
__device__ __forceinline__ bool wl_res(WlCtx& C, u64 addr, u32 nb, i64* idx, u32 slot, bool guess = true) {
  if (guess && slot < WL_NGUESS) {        /* the guess: a window of canonical addresses, so an
                                             address inside it is canonical too */
    const u64 d = addr - WL_GB[slot];
    if (d < WL_GL[slot]) { *idx = WL_GO[slot] + (i64)d; return true; }
  }
  if (!wl_is_canon(addr)) return false;   /* decision 0014: outside every window */
  const u64 a = addr;
  const bool c = C.W.n <= WL_CW;
  i32 k = (i32)WL_HINT[slot];
  u64 s = 0ull, e = 0ull;
  if ((u32)k < C.W.n) { s = c ? WL_WS[k] : __ldg(C.W.start + k); e = c ? WL_WE[k] : __ldg(C.W.end + k); }
  else k = -1;
  if (k < 0 || a - s >= e - s) {          /* one binary search over the sorted window starts */
    i32 lo = 0, hi = (i32)C.W.n;
    if (c) { while (lo < hi) { i32 mid = (lo + hi) >> 1; if (WL_WS[mid] <= a) lo = mid + 1; else hi = mid; } }
    else { while (lo < hi) { i32 mid = (lo + hi) >> 1; if (__ldg(C.W.start + mid) <= a) lo = mid + 1; else hi = mid; } }
    k = lo - 1;
    if (k < 0) return false;
    s = c ? WL_WS[k] : __ldg(C.W.start + k); e = c ? WL_WE[k] : __ldg(C.W.end + k);
    WL_HINT[slot] = (u32)k;
  }
  /* windows do not overlap: a is in k's or in none */
  if (!wl_inside(a, nb, s, e)) return false;
  *idx = (c ? WL_WO[k] : __ldg(C.W.off + k)) + (i64)(a - s);
  return true;
}
#endif
/* a uniform load of nb (a multiple of 4) bytes from the mirror: true when it was there (or
   masked off), with the words in w */
__device__ __forceinline__ bool wl_mirror(u64 addr, bool mask, u32 slot, u32 nb, u32* w) {
  const i32 mo = WL_GM[slot];
  if (mo < 0) return false;
  const u64 d = addr - WL_GB[slot];
  if (d >= WL_GL[slot] || (addr & 3ull) != 0ull) return false;
  if (mask) { const u32 i = ((u32)mo + (u32)d) >> 2; for (u32 k = 0; k < nb / 4u; k++) w[k] = WL_MIRROR[i + k]; }
  return true;
}
/* the rare paths take plain values: a context passed by reference to a call would live in
   local memory for the whole kernel */
static __device__ __noinline__ void wl_flag_(u32 bit, u32 a, u32 b, u32 blk) {
  u32* status = WL_STATUS;
  if (atomicCAS(status + 5, 0u, bit) == 0u) { status[1] = a; status[2] = b; status[3] = blk; }
  atomicOr(status, bit);
}
#if WL_PROVED
/* (an access outside its proved window: the proof was wrong) */
static __device__ __noinline__ void wl_escape_(u64 wave, u32 instr, u32 lane, u64 addr, u32 kind) {
  wl_flag_(WL_PROOF, instr, lane, kind);
}
#else
static __device__ __noinline__ void wl_escape_(u64 wave, u32 instr, u32 lane, u64 addr, u32 kind) {
  atomicAdd(WL_STATS + 2, 1ull);
  u32 slot = atomicAdd(WL_STATUS + 4, 1u);
  if (slot < WL_MAX_ESC) {
    u32* e = WL_ESC + slot * 8u;
    e[0] = instr; e[1] = (u32)wave; e[2] = (u32)(wave >> 32); e[3] = lane;
    e[4] = (u32)addr; e[5] = (u32)(addr >> 32); e[6] = kind;
  }
}
#endif
/* -> the next limit, or 0: stop (past the budget, or another wave flagged the dispatch) */
static __device__ __noinline__ u64 wl_check_(u64 icnt) {
  const u64 budget = (u64)P[P_BUDGET] | ((u64)P[P_BUDGET + 1] << 32);
  if (icnt > budget) { wl_flag_(WL_BUDGET, 0u, 0u, 0u); return 0ull; }
  if (*(volatile u32*)WL_STATUS & WL_STOP_MASK) return 0ull;
  u64 nl = icnt + (1ull << 20); return nl < budget ? nl : budget;
}
/* the stats: per wave, its instructions in slot wave % 256 (8 + 2k; WL_WIDE_SLOTS: WL_WIDE's
   slot wave % WL_WIDE_SLOTS) and per warp (wave64: its EXEC half) its lane instructions (9 + 2k);
   lane counts go out at each budget check, so no 64-bit total is held in registers */
__device__ __forceinline__ void wl_count_(u64 wave, u32 lane, u64 icnt, u32 lc) {
  const u32 sl = (u32)wave & WL_COUNT_MASK;
  if (lane == 0u && icnt) atomicAdd(WL_COUNTS + 2 * sl, icnt);
  if ((lane & 31u) == 0u) atomicAdd(WL_COUNTS + 1 + 2 * sl, (u64)lc);
}
#define wl_lanes(C, lc) wl_count_((C).wave, lane, 0ull, lc)
/* WAVELIFT_CUDA_STATS=pair (any kernel; decision 0009's amendment h162): the same two adds at the
   kernel's end as one atomic instruction of two lanes -- the warp's lane 0 its wave's
   instructions (the wave's lane 0 only), its lane 1 the warp's lanes, into the slot's two
   adjacent words: one request of the warp to the slot's sector, not two */
__device__ __forceinline__ void wl_count_pair(u64 wave, u32 lane, u64 icnt, u32 lc) {
  const u32 l = lane & 31u, ix = 2u * ((u32)wave & WL_COUNT_MASK) + l;
  if (lane == 0u || l == 1u) atomicAdd(WL_COUNTS + ix, l ? (u64)lc : icnt);
}
/* WAVELIFT_CUDA_STATS=block (codegen: a kernel without barriers or LDS, whose every thread ends
   here): the same counts, each warp's (its wave's instructions in the wave's first warp -- first:
   codegen's lane < 32 --, and its lanes'; zero in a wave past the group's, which ran no block)
   summed through shared memory after one __syncthreads, then added by warp 0 in two
   atomics (instructions, lanes) to slot blockIdx.x % 256 (WL_COUNTS'): the host sums the
   slots, so which slot holds a count changes nothing, and the block adds 2, not 2 a wave */
#ifdef __CUDA_ARCH__  /* (the host build of tests/cuda, g++, has no shared memory: never used there) */
#ifdef WL_BLOCK_THREADS
#define WL_COUNT_SLOTS (2u * ((WL_BLOCK_THREADS + 31u) / 32u))
#else
#define WL_COUNT_SLOTS 64u
#endif
__device__ __forceinline__ void wl_count_block(bool first, u64 icnt, u32 lc) {
  __shared__ u64 wl_sc[WL_COUNT_SLOTS];  /* (the launch's block when baked, else the largest) */
  const u32 w = threadIdx.x >> 5, l = threadIdx.x & 31u, n = 2u * ((blockDim.x + 31u) >> 5);
  if (l == 0u) { wl_sc[2u * w] = first ? icnt : 0ull; wl_sc[2u * w + 1u] = (u64)lc; }
  __syncthreads();
  if (w != 0u) return;
  u64 v = l < n ? wl_sc[l] : 0ull;
  if (WL_COUNT_SLOTS > 32u && l + 32u < n) v += wl_sc[l + 32u];  /* (entries l and l + 32: one parity) */
  for (u32 o = (WL_COUNT_SLOTS > 32u ? 32u : WL_COUNT_SLOTS) / 2u; o >= 2u; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (l < 2u && v) atomicAdd(WL_COUNTS + 2 * (blockIdx.x & WL_COUNT_MASK) + l, v);  /* lane 0: instructions, 1: lanes */
}
#endif
#define wl_flag(C, bit, a, b, blk) wl_flag_(bit, a, b, blk)
#define wl_escape(C, instr, lane, addr, kind) wl_escape_((C).wave, instr, lane, addr, kind)
/* the search path of wl_gload / wl_gstore (called, not inlined, in big programs) */
static __device__ WL_MEMFN void wl_gload_(WlCtx& C, u64 addr, u32 nb, u32* w, u32 words, u32 instr,
                                   u32 slot, u32 lane, bool record, bool guess = true) {
  i64 ix;
  if (wl_res(C, addr, nb, &ix, slot, guess)) wl_read(C.arena, wl_al(ix, addr), nb, w, words);
#if WL_PROVED
  else { for (u32 k = 0; k < words; k++) w[k] = 0u; wl_escape(C, instr, lane, addr, 0u); }
#else
  else if (record) wl_escape(C, instr, lane, addr, 0u);
#endif
}
static __device__ WL_MEMFN void wl_gstore_(WlCtx& C, u64 addr, u32 nb, const u32* w, u32 instr, u32 slot,
                                    u32 lane, bool guess = true) {
  i64 ix;
#if WL_MAP_BITS
  const bool in = wl_res(C, addr, nb, &ix, slot, guess);
  if (in) { ix = wl_al(ix, addr); wl_write(C.arena, (u8*)0, ix, nb, w); wl_mark_bits(C.written, ix, nb); }
  else wl_escape(C, instr, lane, addr, 1u);
#else
  if (wl_res(C, addr, nb, &ix, slot, guess)) wl_write(C.arena, C.written, wl_al(ix, addr), nb, w);
  else wl_escape(C, instr, lane, addr, 1u);
#endif
}
/* WL_RETEST 0 (codegen: WAVELIFT_CUDA_RETEST=off): the rare path of wl_gload / wl_gstore, taken
   where the direct access is not (outside the guess, unaligned, a size of 3 bytes, no guess),
   goes to the hint and the search without testing the guess again -- the compiler had hoisted
   that second 64-bit compare into every load's hot path */
#ifndef WL_RETEST
#define WL_RETEST 1
#endif
/* whether wl_gload_b's / wl_gstore_b's rare path tests the guess again: WL_RETEST; in the lean
   build (WL_PROVED) only where the direct form did not take the access for its shape (unaligned,
   3 bytes) -- an aligned access of its shape failed the window test itself, and the compiler
   keeps no second 64-bit compare in the hot path for it (the alignment test's serves) */
/* the accesses the direct form (wl_direct) takes for their shape: 1, 2 or 4k bytes, at an
   address aligned to min(nb, 4) */
#define WL_DIRECT_SIZE(nb) ((nb) == 1u || (nb) == 2u || ((nb) & 3u) == 0u)
#define WL_DIRECT_ALIGNED(addr, nb) (((addr) & (u64)((nb) >= 4u ? 3u : (nb) - 1u)) == 0ull)
#if WL_PROVED
#define WL_REGUESS(addr, nb) (!WL_DIRECT_SIZE(nb) || !WL_DIRECT_ALIGNED(addr, nb))
#else
#define WL_REGUESS(addr, nb) WL_RETEST
#endif
/* the guessed window's base in the arena: one uniform value, so an access's pointer is a single
   64-bit add to its offset in the window, d = addr - WL_GB, which the bounds test makes anyway
   (base + addr less WL_GB in the arena: one 64-bit add fewer per access than adding addr; a slot
   without a guess: never used).  Codegen hoists the bases of the slots in loops into the
   kernel's prologue and passes them to wl_gload_b / wl_gstore_b (WAVELIFT_CUDA_HOIST=loops;
   decision 0047's amendment h115); wl_gload / wl_gstore make it at the access */
__device__ __forceinline__ u8* wl_gbase(const WlCtx& C, u32 slot) {
  return slot < WL_NGUESS ? C.arena + WL_GO[slot] : C.arena;
}
/* a hoisted base (codegen's prologue): opaque (WL_KEEP), else the compiler makes it again at
   each access from constant memory to spare its registers; a pointer from it is then generic to
   the compiler, so a direct access says its pointer -- inside the arena, where it is used -- is
   global (WL_GLOBAL_AT): global loads and stores, as from C.arena.  WL_ASSUME: a fact the
   device compiler may build on (codegen's prologue: a thread index is below the block) */
#ifdef __CUDA_ARCH__
#define WL_KEEP(x) asm("" : "+l"(x))
#define WL_GLOBAL_AT(p) __builtin_assume(__isGlobal(p))
#define WL_ASSUME(c) __builtin_assume(c)
/* a global address made from numbers (WL_GA + addr): said global, so its accesses are */
#define wl_global_at(a) ((u8*)__cvta_global_to_generic((size_t)(a)))
#else
#define WL_KEEP(x) ((void)0)
#define WL_GLOBAL_AT(p) ((void)0)
#define WL_ASSUME(c) ((void)0)
#define wl_global_at(a) ((u8*)(a))
#endif
/* an access of 1, 2 or 4k bytes inside its guess at an address aligned to min(nb, 4): true, with
   where its first byte is, base + (addr - WL_GB), or WL_GA + addr with ga (windows sit in
   the arena congruent to their addresses mod 8, so the pointer is as aligned as the address;
   its access says it is global, WL_GLOBAL_AT: global loads and stores, not generic).  No
   branch: the loads after it stay in one basic block, where the compiler issues the next
   access's load before waiting for this one's value */
__device__ __forceinline__ bool wl_direct(u8* base, u64 addr, u32 nb, u32 slot, u8** p, bool ga = false) {
  if (slot >= WL_NGUESS || !WL_DIRECT_SIZE(nb)) return false;
  const u64 d = addr - WL_GB[slot];
  *p = ga ? wl_global_at(WL_GA[slot] + addr) : base + d;
  return (d < WL_GL[slot]) & WL_DIRECT_ALIGNED(addr, nb);
}
/* a block's global accesses at root + c, c constants (codegen: spans.find; decision 0047's
   amendment on global accesses at known offsets): one test for all of them against the
   guessed window of the first one's slot -- true when [root + lo, root + lo + need) lies
   inside it and root is a multiple of al, k = need - that slot's access size + 1 (its limit
   WL_GL is the window's length less its size, plus 1: the span fits where lim >= k and
   root + lo - base <= lim - k).  Then every member is inside that window and aligned, at
   *base + c (the arena pointer of root's byte) */
__device__ __forceinline__ bool wl_span(const WlCtx& C, u64 root, u64 lo, u64 k, u32 slot, u64 al, u8** base) {
  const u64 lim = WL_GL[slot];
  const u64 d = root + lo - WL_GB[slot];
  *base = C.arena + (WL_GO[slot] - (i64)WL_GB[slot]) + root;
  return (lim >= k) & (d <= lim - k) & ((root & (al - 1ull)) == 0ull);
}
/* a member's direct read and write at its pointer (wl_span held): wl_gload's and wl_gstore's
   direct forms */
__device__ __forceinline__ void wl_gread_at(const u8* p, u32 nb, u32* w) {
  if (nb == 1u) w[0] = *p;
  else if (nb == 2u) w[0] = *(const u16*)p;
  else for (u32 k = 0; k < nb / 4u; k++) w[k] = ((const u32*)p)[k];
}
__device__ __forceinline__ void wl_gwrite_at(const WlCtx& C, u8* p, u32 nb, const u32* w) {
#if WL_MAP_BITS
  if (nb == 1u) *p = (u8)w[0];
  else if (nb == 2u) *(u16*)p = (u16)w[0];
  else for (u32 k = 0; k < nb / 4u; k++) ((u32*)p)[k] = w[k];
  wl_mark_bits(C.written, p - C.arena, nb);
#else
  u8* q = C.written + (p - C.arena);
  if (nb == 1u) { *p = (u8)w[0]; *q = 1u; }
  else if (nb == 2u) { *(u16*)p = (u16)w[0]; *(u16*)q = 0x0101u; }
  else for (u32 k = 0; k < nb / 4u; k++) { ((u32*)p)[k] = w[k]; ((u32*)q)[k] = 0x01010101u; }
#endif
}
__device__ __forceinline__ void wl_gload_b(WlCtx& C, u8* base, u64 addr, bool mask, u32 nb, u32* w,
                                           u32 words, u32 instr, u32 slot, u32 lane, bool record,
                                           bool ga = false) {
  u8* p;
  const bool f = wl_direct(base, addr, nb, slot, &p, ga) & mask;
  if (f) {
    WL_GLOBAL_AT(p);
    if (nb == 1u) w[0] = *p;
    else if (nb == 2u) w[0] = *(const u16*)p;
    else for (u32 k = 0; k < nb / 4u; k++) w[k] = ((const u32*)p)[k];
  }
  if (mask & !f) wl_gload_(C, addr, nb, w, words, instr, slot, lane, record, WL_REGUESS(addr, nb));
}
/* (a load outside a loop: its pointer WL_GA + addr, one add fewer than from the window's base,
   which a store keeps: its map index is then the pointer less the arena, folded) */
__device__ __forceinline__ void wl_gload(WlCtx& C, u64 addr, bool mask, u32 nb, u32* w, u32 words,
                                         u32 instr, u32 slot, u32 lane, bool record) {
  wl_gload_b(C, C.arena, addr, mask, nb, w, words, instr, slot, lane, record, true);
}
__device__ __forceinline__ void wl_gstore_b(WlCtx& C, u8* base, u64 addr, u32 nb, const u32* w,
                                            u32 instr, u32 slot, u32 lane) {
  u8* p;
  if (wl_direct(base, addr, nb, slot, &p)) {
    WL_GLOBAL_AT(p);
#if WL_MAP_BITS
    wl_gwrite_at(C, p, nb, w);
#else
    u8* q = C.written + (p - C.arena);
    if (nb == 1u) { *p = (u8)w[0]; *q = 1u; }
    else if (nb == 2u) { *(u16*)p = (u16)w[0]; *(u16*)q = 0x0101u; }
    else for (u32 k = 0; k < nb / 4u; k++) { ((u32*)p)[k] = w[k]; ((u32*)q)[k] = 0x01010101u; }
#endif
    return;
  }
  wl_gstore_(C, addr, nb, w, instr, slot, lane, WL_REGUESS(addr, nb));
}
__device__ __forceinline__ void wl_gstore(WlCtx& C, u64 addr, u32 nb, const u32* w, u32 instr,
                                          u32 slot, u32 lane) {
  wl_gstore_b(C, wl_gbase(C, slot), addr, nb, w, instr, slot, lane);
}
