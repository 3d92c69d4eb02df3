/* CUDA kernel prelude (after cfamily/prelude.h): guest memory windows, atomics, scratch. */
/* ----------------------------------------------------------------------- windows */
struct WlWin {
  const u64* start; const u64* end; const i64* off; u32 n;
};
/* nb bytes at base + idx as words (the last one zero-extended): aligned words shifted together,
   so any alignment costs one more load, not a byte loop; that word may lie up to 4 bytes past
   the access (the device arena has 8 spare bytes, LDS is followed by the exchange area) and
   is dropped when idx is visibly aligned */
__device__ __forceinline__ void wl_read(const u8* base, i64 idx, u32 nb, u32* w, u32 words) {
  const u32* p = (const u32*)(base + (idx & ~(i64)3));
  const u32 sh = 8u * (u32)(idx & 3);
  for (u32 k = 0; k < words; k++) w[k] = 0u;
  for (u32 k = 0; k < (nb + 3u) / 4u; k++) w[k] = __funnelshift_r(p[k], p[k + 1], sh);
  if (nb & 3u) w[(nb - 1u) / 4u] &= (1u << (8u * (nb & 3u))) - 1u;
}
__device__ __forceinline__ void wl_write(u8* base, u8* wr, i64 idx, u32 nb, const u32* w) {
  if ((idx & 3) == 0 && (nb & 3u) == 0u) {
    u32* p = (u32*)(base + idx);
    for (u32 k = 0; k < nb / 4u; k++) p[k] = w[k];
    if (wr) { u32* q = (u32*)(wr + idx); for (u32 k = 0; k < nb / 4u; k++) q[k] = 0x01010101u; }
  } else {
    for (u32 k = 0; k < nb; k++) {
      base[idx + k] = (u8)(w[k >> 2] >> (8u * (k & 3u)));
      if (wr) wr[idx + k] = 1u;
    }
  }
}

/* ----------------------------------------------------------------------- atomics */
template <class T> __device__ __forceinline__ T wl_atomic_cas_loop(T* p, int op, T d, T c);
__device__ __forceinline__ u32 wl_atomic32(u32* p, int op, u32 d, u32 c) {
  switch (op) {
    case 0: return atomicAdd(p, d);
    case 1: return atomicSub(p, d);
    case 2: return atomicExch(p, d);
    case 3: return atomicCAS(p, c, d);
    case 4: return atomicAnd(p, d);
    case 5: return atomicOr(p, d);
    case 6: return atomicXor(p, d);
    case 7: return atomicMin(p, d);
    case 8: return atomicMax(p, d);
    case 9: return (u32)atomicMin((i32*)p, (i32)d);
    case 10: return (u32)atomicMax((i32*)p, (i32)d);
    case 11: return atomicInc(p, d);
    default: return atomicDec(p, d);
  }
}
__device__ __forceinline__ u64 wl_atomic64(u64* p, int op, u64 d, u64 c) {
  switch (op) {
    case 0: return atomicAdd(p, d);
    case 1: return atomicAdd(p, (u64)0 - d);
    case 2: return atomicExch(p, d);
    case 3: return atomicCAS(p, c, d);
    case 4: return atomicAnd(p, d);
    case 5: return atomicOr(p, d);
    case 6: return atomicXor(p, d);
    case 7: return atomicMin(p, d);
    case 8: return atomicMax(p, d);
    case 9: return (u64)atomicMin((i64*)p, (i64)d);
    case 10: return (u64)atomicMax((i64*)p, (i64)d);
    default: {
      u64 old = *(volatile u64*)p, assumed;
      do {
        assumed = old;
        u64 nv = op == 11 ? (assumed >= d ? 0ull : assumed + 1ull)
                          : ((assumed == 0ull || assumed > d) ? d : assumed - 1ull);
        old = atomicCAS(p, assumed, nv);
      } while (old != assumed);
      return old;
    }
  }
}
/* atomics' combine step on memory no other thread touches (lane-mode scratch) */
__device__ __forceinline__ u32 wl_rmw32(u32* p, int op, u32 d, u32 c) {
  const u32 o = *p; u32 n;
  switch (op) {
    case 0: n = o + d; break;
    case 1: n = o - d; break;
    case 2: n = d; break;
    case 3: n = (o == c) ? d : o; break;
    case 4: n = o & d; break;
    case 5: n = o | d; break;
    case 6: n = o ^ d; break;
    case 7: n = o < d ? o : d; break;
    case 8: n = o > d ? o : d; break;
    case 9: n = (i32)o < (i32)d ? o : d; break;
    case 10: n = (i32)o > (i32)d ? o : d; break;
    case 11: n = o >= d ? 0u : o + 1u; break;
    default: n = (o == 0u || o > d) ? d : o - 1u; break;
  }
  *p = n; return o;
}

/* ----------------------------------------------------------------------- scratch */
/* byte k of a scratch_* access at wave-relative address a, carried out in the lane's own linear
   space: later bytes come from the same lane's next dword, 4*W bytes on (runtime._scratch_split) */
__device__ __forceinline__ u64 wl_sbyte(u64 a, u32 k, u64 w4) {
  const u64 r = a & 3ull, o = r + (u64)k;
  return (a / w4 + (o >> 2)) * w4 + (a % w4 - r) + (o & 3ull);
}
/* the bytes of mk in *p replaced by those of v: the thread's own word, or a word other lanes of
   the wave may write at the same time (wave-mode scratch: compare-and-swap) */
__device__ __forceinline__ void wl_smerge(u32* p, u32 mk, u32 v) { *p = (*p & ~mk) | (v & mk); }
__device__ __forceinline__ void wl_smerge_atomic(u32* p, u32 mk, u32 v) {
  if (mk == 0xffffffffu) { *p = v; return; }
  u32 old = *(volatile u32*)p, as;
  do { as = old; old = atomicCAS(p, as, (as & ~mk) | (v & mk)); } while (old != as);
}
