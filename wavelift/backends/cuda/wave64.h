/* CUDA kernel prelude (after cfamily/types.h): the wave64 cross-warp vote (PTX). */
/* wave64: true in all 64 threads of the wave when c holds in any (named barrier 1+wave, 64) */
__device__ __forceinline__ bool wl_any64(bool c, u32 bar) {
  u32 r;
  asm volatile("{ .reg .pred p, q; setp.ne.u32 p, %1, 0; bar.red.or.pred q, %2, 64, p; selp.u32 %0, 1, 0, q; }"
               : "=r"(r) : "r"((u32)c), "r"(bar) : "memory");
  return r != 0u;
}
