/* ------------------------------------------------------- native tier: the dispatch driver */
struct WlGroup { i64 id[3], t[3], threads, waves; };
static inline i64 wl_dim(i64 gid, i64 e, i64 partial, i64 p, i64 b) {
  return (partial && gid == e - 1 && p > 0) ? p : b;
}
static inline void wl_group(const WlGrid* G, i64 g, WlGroup& q) {
  q.id[0] = g % G->gx + G->sx; q.id[1] = (g / G->gx) % G->gy + G->sy; q.id[2] = g / (G->gx * G->gy) + G->sz;
  q.t[0] = wl_dim(q.id[0], G->ex, G->partial, G->px, G->bx);
  q.t[1] = wl_dim(q.id[1], G->ey, G->partial, G->py, G->by);
  q.t[2] = wl_dim(q.id[2], G->ez, G->partial, G->pz, G->bz);
  q.threads = q.t[0] * q.t[1] * q.t[2];
  q.waves = (q.threads + WL_L - 1) / WL_L;
}
extern "C" i64 wl_waves(const WlGrid* G, i64 g0, i64 g1) {
  i64 n = 0;
  for (i64 g = g0; g < g1; g++) { WlGroup q; wl_group(G, g, q); n += q.waves; }
  return n;
}
/* local ids of wave k of a group of q's shape (1-D shapes: lx = thread index, as _local_ids) */
static void wl_ids(const WlGroup& q, i64 k, u32* lx_, u32* ly_, u32* lz_) {
  const bool one_d = q.t[1] == 1 && q.t[2] == 1;
  const i64 t0 = k * WL_L;                            /* the wave's first thread index */
  i64 lx = one_d ? t0 : t0 % q.t[0], ly = one_d ? 0 : (t0 / q.t[0]) % q.t[1];
  i64 lz = one_d ? 0 : t0 / (q.t[0] * q.t[1]);
  for (i64 lane = 0; lane < WL_L; lane++) {
    lx_[lane] = (u32)lx; ly_[lane] = (u32)ly; lz_[lane] = (u32)lz;
    if (++lx == q.t[0] && !one_d) { lx = 0; if (++ly == q.t[1]) { ly = 0; lz++; } }
  }
}
/* group q's waves as waves k0.. of a chunk of n (its index in the chunk: gi); ``ids``: its local
   ids [3][waves * lanes] when it has the full shape, else null */
static void wl_setup(WlCtx* C, const WlGrid* G, const u32* user, const WlGroup& q, i64 k0, i64 n,
                     i64 gi, const u32* ids) {
  u32* const S = C->S; u32* const V = C->V;
  if (C->lds_stride) memset(C->lds + gi * C->lds_stride, 0, C->lds_stride);
  const i64 row = n * WL_L;                           /* V register r: V + r * row */
  for (i64 k = 0; k < q.waves; k++) {
    const i64 w = k0 + k;
    C->grp[w] = gi;
    for (i64 i = 0; i < G->user_n; i++) S[i * n + w] = user[i];
    if (G->sys_x >= 0) S[G->sys_x * n + w] = (u32)q.id[0];
    if (G->sys_y >= 0) S[G->sys_y * n + w] = (u32)q.id[1];
    if (G->sys_z >= 0) S[G->sys_z * n + w] = (u32)q.id[2];
    if (G->sys_tg >= 0) S[G->sys_tg * n + w] = (u32)(q.waves | (k << 6) | (G->tg_id20 ? k << 20 : 0));
    if (G->sys_scratch >= 0) S[G->sys_scratch * n + w] = 0u;
    const i64 live = q.threads - k * WL_L;            /* lanes of this wave with a thread */
    const u64 ex = live >= WL_L ? ~0ull >> (64 - WL_L) : (1ull << live) - 1ull;
    S[WL_EXEC_LO * n + w] = (u32)ex;
    if (WL_L == 64) S[WL_EXEC_HI * n + w] = (u32)(ex >> 32);
    S[WL_MODE_REG * n + w] = (u32)G->mode;
    u32 own[3][WL_L];
    const u32 *x = own[0], *y = own[1], *z = own[2];
    if (ids) { x = ids + k * WL_L; y = x + WL_MAXW * WL_L; z = y + WL_MAXW * WL_L; }
    else wl_ids(q, k, own[0], own[1], own[2]);
    u32* const v = V + w * WL_L;
    if (G->packed) {
      for (i64 l = 0; l < WL_L; l++) v[l] = x[l] | (y[l] << 10) | (z[l] << 20);
    } else {
      memcpy(v, x, 4 * WL_L);
      if (G->tidig >= 1) memcpy(v + row, y, 4 * WL_L);
      if (G->tidig >= 2) memcpy(v + 2 * row, z, 4 * WL_L);
    }
  }
}
static void wl_run_block(WlCtx* C, i32 bi, const i64* idx, i64 N, i32* nxt);
static const i32 wl_ninstr[] = {WL_NINSTR};
static const u8 wl_barrier[] = {WL_BARRIER};
static const u32 wl_sread[] = {WL_SREAD};
static const u32 wl_vread[] = {WL_VREAD};
/* s_setpc/s_swappc: which blocks end in one; the program's block starts (offsets from its
   address, sorted) and their blocks (ModuleMeta.block_of_address) */
static const u8 wl_setpc[] = {WL_SETPC};
static const u64 wl_target_at[] = {WL_TARGET_AT};
static const i32 wl_target_block[] = {WL_TARGET_BLOCK};
static i32 wl_target(const WlGrid* G, u64 a) {
  const u64 o = a - (u64)G->code_base;
  if (a < (u64)G->code_base) return -2;
  i64 lo = 0, hi = WL_NTARGETS;
  while (lo < hi) { const i64 m = (lo + hi) >> 1; if (wl_target_at[m] < o) lo = m + 1; else hi = m; }
  return lo < WL_NTARGETS && wl_target_at[lo] == o ? wl_target_block[lo] : -2;
}
/* groups g0 .. g1-1, in chunks of whole groups (at most WL_MAXW waves, G->chunk groups) run
   together as one batch of Runtime._schedule; C->wave0: the dispatch index of g0's first wave
   (on return: of g1's) */
/* The schedule of Runtime._schedule, kept as one wave bitmask per block (a chunk has at most
   64 waves): the lowest block any runnable wave sits at, every runnable wave at it (in wave
   order) in one call; a wave parked at a barrier leaves its block's mask until every live wave
   is parked.  The same order as a scan of every wave's pc per step, without the scan (a looping
   program's finished waves cost nothing while the others loop). */
static_assert(WL_MAXW <= 64, "the driver's wave masks are u64");
extern "C" void wl_drive(WlCtx* C, const WlGrid* G, const u32* user, i64 g0, i64 g1) {
  i64 idx[WL_MAXW], cnt[WL_MAXW]; i32 nxt[WL_MAXW], pc[WL_MAXW];
  u64 at[WL_NBLOCKS + 1];                             /* [WL_NBLOCKS]: a pc past the last block */
  u64 ticks = 0;
  WlGroup qs[WL_MAXW];
  /* the local ids of a group of the full shape, made once (most groups have it) */
  u32 ids[3 * WL_MAXW * WL_L];                        /* (48 KiB at most: on the stack) */
  WlGroup full;
  full.t[0] = G->bx; full.t[1] = G->by; full.t[2] = G->bz;
  full.threads = G->bx * G->by * G->bz; full.waves = (full.threads + WL_L - 1) / WL_L;
  for (i64 k = 0; k < full.waves && k < WL_MAXW; k++)
    wl_ids(full, k, ids + k * WL_L, ids + (WL_MAXW + k) * WL_L, ids + (2 * WL_MAXW + k) * WL_L);
  for (i64 g = g0; g < g1;) {
    i64 ng = 0, n = 0;
    while (g < g1 && ng < G->chunk) {
      WlGroup q; wl_group(G, g, q);
      if (ng && n + q.waves > WL_MAXW) break;
      qs[ng++] = q; n += q.waves; g++;
    }
    C->n = n;
    /* scratch starts zero for every wave (as numpy/scratch.py's) */
    if (C->scr_bytes) memset(C->scr, 0, (size_t)(n * C->scr_bytes));
    /* registers whose value at the start the program can read start at zero (as a batch's):
       those live at block 0's start (driver_source); the rest it writes before any read of them
       a result can see, so they keep the previous chunk's values.  The local-id rows (v0, and
       v1/v2 unpacked) wl_setup writes whole, every lane of every wave of the chunk: zeroing them
       first changed no value */
    for (u32 r : wl_sread) memset(C->S + r * n, 0, 4 * n);
    const u32 ids_rows = G->packed ? 1u : G->tidig >= 2 ? 3u : (u32)G->tidig + 1u;
    for (u32 r : wl_vread) if (r >= ids_rows) memset(C->V + r * n * WL_L, 0, 4 * n * WL_L);
    for (i64 j = 0, k0 = 0; j < ng; k0 += qs[j].waves, j++) {
      const WlGroup& q = qs[j];
      const bool is_full = q.t[0] == full.t[0] && q.t[1] == full.t[1] && q.t[2] == full.t[2];
      wl_setup(C, G, user, q, k0, n, j, is_full ? ids : nullptr);
    }
    for (i64 k = 0; k < n; k++) { pc[k] = 0; cnt[k] = 0; }
    for (i64 b = 0; b <= WL_NBLOCKS; b++) at[b] = 0;
    at[0] = n == 64 ? ~0ull : (1ull << n) - 1ull;
    u64 parked = 0;                                   /* waves waiting at a barrier */
    i64 lo = 0;                                       /* no wave sits at a block below lo */
    for (;;) {
      while (lo <= WL_NBLOCKS && !at[lo]) lo++;
      if (lo > WL_NBLOCKS) {
        if (!parked) break;
        /* no wave can run: every live wave of every group with one parked is parked */
        for (u64 m = parked; m; m &= m - 1) { const i64 k = __builtin_ctzll(m); at[pc[k] < WL_NBLOCKS ? pc[k] : WL_NBLOCKS] |= 1ull << k; }
        parked = 0; lo = 0;
        continue;
      }
      if (lo >= WL_NBLOCKS) { C->stop = WL_STOP_BAD_ADDRESS; return; }
      const i32 bi = (i32)lo;
      i64 N = 0;
      for (u64 m = at[bi]; m; m &= m - 1) idx[N++] = __builtin_ctzll(m);
      at[bi] = 0;
      wl_run_block(C, bi, idx, N, nxt);
      if (C->refuse >= 0 || C->blank_read) return;
      C->instructions += N * wl_ninstr[bi];
      for (i64 j = 0; j < N; j++) {
        const i64 k = idx[j];
        cnt[k] += wl_ninstr[bi];
        if (cnt[k] > G->budget) { C->stop = WL_STOP_BUDGET; return; }
        if (wl_setpc[bi]) {
          nxt[j] = wl_target(G, C->pcs[j]);
          if (nxt[j] == -2) { C->stop = WL_STOP_BAD_JUMP; C->bad_pc = (i64)C->pcs[j]; C->bad_block = bi; return; }
        }
        if (nxt[j] == -2) { C->stop = WL_STOP_BAD_ADDRESS; return; }
        const i32 t = nxt[j];
        pc[k] = t;
        if (t < 0) continue;                          /* the wave ended */
        const i64 b = t < WL_NBLOCKS ? t : WL_NBLOCKS;
        if (wl_barrier[bi]) parked |= 1ull << k;
        else { at[b] |= 1ull << k; if (b < lo) lo = b; }
      }
      /* the optional wall-clock limit (off: 0) */
      if (G->deadline && ++ticks % WL_DEADLINE_BLOCKS == 0) {
        timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
        if ((i64)t.tv_sec * 1000000000 + t.tv_nsec > G->deadline) { C->stop = WL_STOP_TIME; return; }
      }
    }
    C->wave0 += n;
  }
}
/* after range C ran to its end: each window whose write hull (wl_touch) holds written bytes only
   has them cleared from the written map here, and C->settled[k] set -- the range wrote exactly
   that hull (WindowSet.settle: spans take it as written, release need not clear it again).  Only
   where no other range can have marked bytes in the hull: the caller keeps a run whose ranges'
   write hulls meet another's read or write hull (Runtime._races) for none of this -- that run is
   discarded and the written map cleared (WindowSet.refill).  Done while the range's bytes are
   still near in cache, by the thread that ran it: one pass, not spans' scan and release's clear
   after the threads.  A hull with an unwritten byte is left as it is (spans scan it). */
static void wl_settle(WlCtx* C) {
  if (!C->settled) return;
  for (i64 k = 0; k < C->nwin; k++) {
    const i64 lo = C->touch[4 * k + 2], hi = C->touch[4 * k + 3];
    if (lo >= hi) continue;
    const u8* const p = C->written + lo;
    const i64 n = hi - lo;
    u32 all = 1u;
    for (i64 s = 0; s < n && all; s += 4096) {        /* (stops at the first block with a gap) */
      const i64 e = n - s < 4096 ? n : s + 4096;
      u8 m = 0xFFu;
      for (i64 i = s; i < e; i++) m &= (u8)(p[i] != 0u ? 0xFFu : 0u);
      all = m != 0u;
    }
    if (!all) continue;
    memset(C->written + lo, 0, (size_t)n);
    C->settled[k] = 1u;
  }
}
/* ranges [b[i], b[i + 1]) of nr, each run by the first thread to claim it (*next, claimed in
   increasing order: a thread that starts late or loses its core leaves its share to the others;
   Runtime._drive_parts).  Range i runs in Cs[i] (the rows step bytes apart): the calling
   thread's context T (its register state, LDS, scratch, wave tables: what its earlier ranges'
   chunks left there is what a later chunk of one range would have found) with range i's own
   escape records, touch ranges, settled windows and first wave, which the caller put in Cs[i].
   A range that stops (a refusal, a driver stop, a read of a blank window) ends the claims: the
   caller reports the ranges in order and that range's stop is the dispatch's (every range
   before it was claimed before it and runs to its end); a range left unclaimed keeps the
   caller's words (nothing run, no refusal).  A range that ran to its end settles its write
   hulls (wl_settle, below). */
extern "C" void wl_drive_ranges(const WlCtx* T, u8* Cs, i64 step, const WlGrid* G, const u32* user, const i64* b,
                                i64 nr, i64* next) {
  for (i64 i; (i = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED)) < nr;) {
    WlCtx* const C = (WlCtx*)(Cs + i * step);         /* (rows on cache lines of their own) */
    u64* const esc = C->esc; i64* const touch = C->touch; const i64 wave0 = C->wave0;
    u8* const settled = C->settled;
    memcpy(C, T, sizeof(WlCtx));
    C->esc = esc; C->touch = touch; C->wave0 = wave0; C->settled = settled;
    wl_drive(C, G, user, b[i], b[i + 1]);
    if (C->stop || C->refuse >= 0 || C->blank_read) __atomic_store_n(next, nr, __ATOMIC_RELAXED);
    /* (a range that escaped or stored into an aliased window: its run lands nothing) */
    else if (!C->esc_count && !C->ro_written) wl_settle(C);
  }
}
/* Runtime._races over nr ranges' touch rows (wl_touch; rows step bytes apart, nwin windows): 1
   when a range's write hull of a window meets another range's read or write hull of it (then a
   byte both touched may exist and their order could show), else 0 -- the same answer as the
   Python test, without its array passes */
extern "C" i64 wl_races(const u8* touch, i64 step, i64 nr, i64 nwin) {
  for (i64 t = 0; t < nr; t++) {
    const i64* const a = (const i64*)(touch + t * step);
    for (i64 k = 0; k < nwin; k++) {
      const i64 wlo = a[4 * k + 2], whi = a[4 * k + 3];
      if (wlo >= whi) continue;
      for (i64 u = 0; u < nr; u++) {
        if (u == t) continue;
        const i64* const c = (const i64*)(touch + u * step) + 4 * k;
        for (i64 kind = 0; kind < 2; kind++) {
          const i64 lo = c[2 * kind], hi = c[2 * kind + 1];
          if (lo < hi && wlo < hi && lo < whi) return 1;
        }
      }
    }
  }
  return 0;
}
