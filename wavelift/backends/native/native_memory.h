/* native tier: guest memory through the context's windows (after struct WlCtx: native.py NATIVE_CTX) */
#define WL_NONE ((i64)0x8000000000000000ull)
/* arena index of nb bytes at guest address a when one window holds them all, else WL_NONE (an
   address that is not canonical is in none: wl_is_canon, wl_inside, decision 0014); h: last
   window */
static __attribute__((noinline)) i64 wl_search(WlCtx* C, u64 a, u32 nb, i64& h) {
  if (!wl_is_canon(a)) return WL_NONE;
  i64 lo = 0, hi = C->nwin;
  while (lo < hi) { i64 m = (lo + hi) >> 1; if (C->ws[m] <= a) lo = m + 1; else hi = m; }
  const i64 k = lo - 1;
  if (k < 0 || !wl_inside(a, nb, C->ws[k], C->we[k])) return WL_NONE;
  h = k;
  return C->wo[k] + (i64)(a - C->ws[k]);
}
/* (inline: the hinted window -- whose addresses are canonical, so an access inside it is too;
   the search is a call) */
static inline __attribute__((always_inline)) i64 wl_where(WlCtx* C, u64 a, u32 nb, i64& h) {
  const i64 k = h;
  if (k < 0 || !wl_inside(a, nb, C->ws[k], C->we[k])) return wl_search(C, a, nb, h);
  return C->wo[k] + (i64)(a - C->ws[k]);
}
/* window k's arena bytes [a, b) were read (kind 0) or written (1): the range each lies in, per
   window (runtime._races: threads whose ranges meet ran in an order that could show) */
static inline void wl_touch(WlCtx* C, i64 k, u32 kind, i64 a, i64 b) {
  i64* const r = C->touch + 4 * k + 2 * kind;
  r[0] = a < r[0] ? a : r[0];
  r[1] = b > r[1] ? b : r[1];
}
/* arena index - address (the same for every address) when nb bytes at each of lo..hi lie in one
   window of the lower canonical half (where an address is its own canonical form), else WL_NONE;
   a store into an aliased window or a load from a blank one: WL_NONE (the lane by lane path
   flags it) */
static inline i64 wl_span(WlCtx* C, u64 lo, u64 hi, u32 nb, i64& h, u32 kind) {
  if (hi >= (1ull << 47) || wl_where(C, lo, nb, h) == WL_NONE) return WL_NONE;
  const i64 k = h;
  if (!wl_inside(hi, nb, C->ws[k], C->we[k])) return WL_NONE;
  if (C->wkind[k] == (kind ? 1u : 2u)) return WL_NONE;
  const i64 d = C->wo[k] - (i64)C->ws[k];
  wl_touch(C, k, kind, (i64)lo + d, (i64)hi + d + nb);
  return d;
}
/* the run test of a lane array of u64 addresses (BlockSource._lane_access): every run of 8 lanes
   at consecutive addresses, lane r + j at lane r's plus j * nb (mod 2^64, as the neighbour test
   it replaces: the differences telescope).  Whole 64-byte vectors: the lane loop that made the
   array stored it so, and lane-by-lane reads of it stalled on store forwarding (2026-12-05) */
typedef u64 wl_u64x8 __attribute__((vector_size(64)));
static inline u32 wl_runs8(const u64* a, u32 L, u64 nb) {
  const wl_u64x8 step = {0ull, nb, 2ull * nb, 3ull * nb, 4ull * nb, 5ull * nb, 6ull * nb, 7ull * nb};
  wl_u64x8 bad = {0ull, 0ull, 0ull, 0ull, 0ull, 0ull, 0ull, 0ull};
  for (u32 r = 0; r < L; r += 8u) { wl_u64x8 x; memcpy(&x, a + r, 64); bad |= x - x[0] - step; }
  u64 o = 0ull;
  for (u32 j = 0; j < 8u; j++) o |= bad[j];
  return o == 0ull;
}
/* float arithmetic without its NaN fix-up (native.py _FAST_FNS): a lane loop runs first with
   these in the place of wl_fadd... (the same overloads: the same conversions), the raw IEEE
   result, n set when it is a NaN -- then only the fix-up could have changed it, and the loop is
   run again with the exact functions; f16 goes to them at once */
template <class T> static inline T wl_fchk(T r, u32& n) { n |= (u32)(r != r); return r; }
#define WL_FAST2(Name, fn, f32op, f64op) struct Name { u32& n;                                   \
  f32 operator()(f32 a, f32 b) const { return wl_fchk(f32op(a, b), n); }                        \
  f64 operator()(f64 a, f64 b) const { return wl_fchk(f64op(a, b), n); }                        \
  f16 operator()(f16 a, f16 b) const { return fn(a, b); } };
WL_FAST2(WlFastFadd, wl_fadd, __fadd_rn, __dadd_rn)
WL_FAST2(WlFastFsub, wl_fsub, __fsub_rn, __dsub_rn)
WL_FAST2(WlFastFmul, wl_fmul, __fmul_rn, __dmul_rn)
WL_FAST2(WlFastFdiv, wl_fdiv, __fdiv_rn, __ddiv_rn)
#undef WL_FAST2
struct WlFastFma { u32& n;
  f32 operator()(f32 a, f32 b, f32 c) const { return wl_fchk(__fmaf_rn(a, b, c), n); }
  f64 operator()(f64 a, f64 b, f64 c) const { return wl_fchk(__fma_rn(a, b, c), n); }
  f16 operator()(f16 a, f16 b, f16 c) const { return wl_fma(a, b, c); } };
static __attribute__((noinline)) void wl_escape(WlCtx* C, u32 instr, i64 w, u32 lane, u64 a, u32 kind) {
  C->esc_count++;
  if (C->esc_n < C->esc_cap) {
    u64* e = C->esc + 5 * C->esc_n++;
    e[0] = instr; e[1] = (u64)(C->wave0 + w); e[2] = lane; e[3] = a; e[4] = kind;
  }
}
/* space 0 global, 1 LDS (out-of-range LDS reads give 0, stores drop, neither escapes) */
static inline __attribute__((always_inline)) void wl_ld(WlCtx* C, u32 space, i64 w, u32 lane, u32 instr, u64 a, u32 nb, u32 words,
                         u32* out, i64& h) {
  for (u32 k = 0; k < words; k++) out[k] = 0u;
  const u8* p;
  if (space == 0u) {
    const i64 i = wl_where(C, a, nb, h);
    if (i == WL_NONE) { wl_escape(C, instr, w, lane, a, 0u); return; }
    if (C->wkind[h] == 2u) { C->blank_read = 1; return; }     /* the run is redone with a copy */
    wl_touch(C, h, 0u, i, i + nb);
    p = C->arena + i;
  } else {
    if (!wl_inside(a, nb, 0ull, (u64)C->lds_bytes)) return;
    p = C->lds + C->grp[w] * C->lds_stride + (i64)a;
  }
  memcpy(out, p, nb);
}
/* a uniform global load (wl_ld's space 0) that remembers what it read: within one call of a
   block, a wave that loads from the address the last successful one did gets those words again
   (ok: remembered; ma: the address; mi: its arena index; mv: the words).  Exact while nothing
   stored into those arena bytes since: the block's own global stores and atomics forget what
   they may have overwritten (BlockSource: WL_UNMEMO), no other code of this range runs during
   the call, and another range (thread) writing them is a race (the first load touched them:
   Runtime._races).  Escapes and blank reads are not remembered (each wave reports its own) */
static inline __attribute__((always_inline)) void wl_ldm(WlCtx* C, i64 w, u32 instr, u64 a, u32 nb, u32 words,
                                                        u32* out, i64& h, u32& ok, u64& ma, i64& mi, u32* mv) {
  if (ok && a == ma) { for (u32 k = 0; k < words; k++) out[k] = mv[k]; return; }
  for (u32 k = 0; k < words; k++) out[k] = 0u;
  const i64 i = wl_where(C, a, nb, h);
  if (i == WL_NONE) { wl_escape(C, instr, w, 0u, a, 0u); return; }
  if (C->wkind[h] == 2u) { C->blank_read = 1; return; }     /* the run is redone with a copy */
  wl_touch(C, h, 0u, i, i + nb);
  memcpy(out, C->arena + i, nb);
  ok = 1u; ma = a; mi = i;
  for (u32 k = 0; k < words; k++) mv[k] = out[k];
}
static inline void wl_st(WlCtx* C, u32 space, i64 w, u32 lane, u32 instr, u64 a, u32 nb,
                         const u32* d, i64& h) {
  if (space == 0u) {
    const i64 i = wl_where(C, a, nb, h);
    if (i == WL_NONE) { wl_escape(C, instr, w, lane, a, 1u); return; }
    if (C->wkind[h] == 1u) { C->ro_written = 1; return; }    /* the run is redone with a copy */
    wl_touch(C, h, 1u, i, i + nb);
    memcpy(C->arena + i, d, nb);
    memset(C->written + i, 1, nb);
  } else {
    if (!wl_inside(a, nb, 0ull, (u64)C->lds_bytes)) return;
    memcpy(C->lds + C->grp[w] * C->lds_stride + (i64)a, d, nb);
  }
}
/* ------------------------------------------------------------- scratch (decision 0008) */
/* wave w's private memory: C->scr + w * C->scr_bytes, the hardware's layout (address a is the
   wave-relative byte address frontend swizzle() made); lane mode: a lane reaches only words
   whose lane bits name it.  What the array does not hold (past the wave's bytes, a dword access
   not aligned, a smaller one across its dword, another lane's word in lane mode) reads 0,
   stores nothing and is an escape (kind 2) -- numpy/scratch.py ScratchStore.resolve */
static inline bool wl_scr_holds(const WlCtx* C, u64 a, u32 nb, u32 lane, u32 L) {
  const u64 size = (u64)C->scr_bytes;
  if (a >= size || (u64)nb > size - a) return false;
  if (nb <= 4u ? (a & 3ull) + nb > 4ull : (a & 3ull) != 0ull) return false;
  return !C->scr_lane || (u32)((a >> 2) % L) == lane;
}
/* the same test, branch-free (the all-lanes check before a wave's access; size: scr_bytes,
   lane_mode: scr_lane) */
static inline u32 wl_scr_in(u64 size, u32 lane_mode, u64 a, u32 nb, u32 lane, u32 L) {
  const u32 in = (u32)(a < size) & (u32)((u64)nb <= size - a);
  const u32 al = nb <= 4u ? (u32)((a & 3ull) + nb <= 4ull) : (u32)((a & 3ull) == 0ull);
  return in & al & ((u32)(lane_mode == 0u) | (u32)((u32)((a >> 2) % L) == lane));
}
static inline __attribute__((always_inline)) void wl_scr_ld(WlCtx* C, i64 w, u32 lane, u32 L, u32 instr, u64 a,
                                                            u32 nb, u32 words, u32* out) {
  for (u32 k = 0; k < words; k++) out[k] = 0u;
  if (!wl_scr_holds(C, a, nb, lane, L)) { wl_escape(C, instr, w, lane, a, 2u); return; }
  memcpy(out, C->scr + w * C->scr_bytes + (i64)a, nb);
}
static inline __attribute__((always_inline)) void wl_scr_st(WlCtx* C, i64 w, u32 lane, u32 L, u32 instr, u64 a,
                                                            u32 nb, const u32* d) {
  if (!wl_scr_holds(C, a, nb, lane, L)) { wl_escape(C, instr, w, lane, a, 2u); return; }
  memcpy(C->scr + w * C->scr_bytes + (i64)a, d, nb);
}
/* byte k of a scratch_* access at a, in the lane's own linear space: later bytes come from the
   same lane's next dword, 4 * L bytes on (runtime._scratch_split) */
static inline u64 wl_scr_byte(u64 a, u32 k, u64 w4) {
  const u64 r = a & 3ull, o = r + (u64)k;
  return (a / w4 + (o >> 2)) * w4 + (a % w4 - r) + (o & 3ull);
}
/* ------------------------------------------------------------ atomics (decision 0020) */
/* the new value of one step (numpy/atomics.py combine); op: native.ATOMIC_OPS's index */
template <typename T, typename S> static inline T wl_combine(u32 op, T o, T d, T c) {
  switch (op) {
    case 0: return (T)(o + d);
    case 1: return (T)(o - d);
    case 2: return d;
    case 3: return o == c ? d : o;
    case 4: return o & d;
    case 5: return o | d;
    case 6: return o ^ d;
    case 7: return o < d ? o : d;
    case 8: return o > d ? o : d;
    case 9: return (S)o < (S)d ? o : d;
    case 10: return (S)o > (S)d ? o : d;
    case 11: return o >= d ? (T)0 : (T)(o + 1);
    default: return (o == 0 || o > d) ? d : (T)(o - 1);
  }
}
/* one lane's atomic on the aligned cell that holds a (global: the cell's bytes are checked; LDS
   and scratch: as numpy's runtime.atomic), in lane order -> the old value (0 where nothing is
   done).  Global: the cell is read and written (wl_touch both: threads that meet there ran in
   an order that could show, and the run is redone serially); an aliased or blank window is not
   touched and the run is redone with copies (wl_ld / wl_st) */
template <typename T, typename S>
static inline T wl_atomic(WlCtx* C, u32 space, i64 w, u32 lane, u32 L, u32 instr, u64 a, u32 op, T d, T c,
                          i64& h) {
  const u32 nb = (u32)sizeof(T);
  u8* p;
  if (space == 0u) {
    const u64 cell = a & ~(u64)(nb - 1u);
    const i64 i = wl_where(C, cell, nb, h);
    if (i == WL_NONE) { wl_escape(C, instr, w, lane, a, 3u); return (T)0; }
    if (C->wkind[h] == 2u) { C->blank_read = 1; return (T)0; }
    if (C->wkind[h] == 1u) { C->ro_written = 1; return (T)0; }
    wl_touch(C, h, 0u, i, i + nb);
    wl_touch(C, h, 1u, i, i + nb);
    memset(C->written + i, 1, nb);
    p = C->arena + i;
  } else if (space == 1u) {
    if (!wl_inside(a, nb, 0ull, (u64)C->lds_bytes)) return (T)0;
    p = C->lds + C->grp[w] * C->lds_stride + (i64)(a & ~(u64)(nb - 1u));
  } else {
    if (!wl_scr_holds(C, a, nb, lane, L)) { wl_escape(C, instr, w, lane, a, 3u); return (T)0; }
    p = C->scr + w * C->scr_bytes + (i64)a;
  }
  T o;
  memcpy(&o, p, nb);
  const T n = wl_combine<T, S>(op, o, d, c);
  memcpy(p, &n, nb);
  return o;
}
