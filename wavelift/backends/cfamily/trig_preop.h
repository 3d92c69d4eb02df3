/* V_TRIG_PREOP_F64 (cfamily/prelude.py trig_preop_source: after the WL_2OPI table). */
WL_DEVICE u32 wl_2opi(i32 k) { return (k >= 0 && k < (i32)(sizeof(WL_2OPI) / 4)) ? WL_2OPI[k] : 0u; }
/* bits [lo, lo + 64) of floor(2/pi * 2^1201) (zero below bit 0) */
WL_DEVICE u64 wl_2opi_bits(i32 lo) {
  if (lo <= -64) return 0ull;
  const i32 base = (lo >= 0) ? (lo >> 5) : -((31 - lo) >> 5);
  const u32 r = (u32)(lo - base * 32);
  const u64 w = (u64)wl_2opi(base) | ((u64)wl_2opi(base + 1) << 32);
  return r ? ((w >> r) | ((u64)wl_2opi(base + 2) << (64u - r))) : w;
}
WL_NOINLINE f64 wl_trig_preop(f64 x, u32 seg) {
  const i32 e = (i32)(((u64)__double_as_longlong(x) >> 52) & 0x7ffull);
  const i32 shift = (i32)(seg & 31u) * 53 + (e > 1077 ? e - 1077 : 0);
  const u64 v = wl_2opi_bits(1148 - shift) & ((1ull << 53) - 1ull);
  i32 scale = -53 - shift + (e >= 1968 ? 128 : 0);
  if (v == 0ull || scale < -1200) return 0.0;
  const i32 p = 63 - __clzll((i64)v);                  /* v = 1.xxx * 2^p */
  const i32 E = p + scale;
  if (E >= -1022) {                                     /* normal: exact */
    const u64 m = (v << (52 - p)) & 0xfffffffffffffull;
    return __longlong_as_double((i64)(((u64)(E + 1023) << 52) | m));
  }
  const i32 sh = -(scale + 1074);                       /* subnormal: v * 2^scale in 2^-1074 units */
  if (sh <= 0) return __longlong_as_double((i64)(v << (u32)(-sh)));
  if (sh >= 60) return 0.0;
  u64 q = v >> (u32)sh, rem = v & ((1ull << (u32)sh) - 1ull), half = 1ull << (u32)(sh - 1);
  if (rem > half || (rem == half && (q & 1ull))) q++;
  return __longlong_as_double((i64)q);                  /* a carry into 2^52 is the least normal */
}
