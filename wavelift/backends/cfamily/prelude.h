/* wavelift C-family prelude, part 2: the value ops' semantics (float arithmetic, NaN results,
   conversions, integers, address checks), one lane at a time.  Written once for every C-family
   target in CUDA's intrinsic names (__fadd_rn, __umulhi, __popc, ...), which a target other than
   CUDA supplies (host.h); every function is WL_DEVICE, which the target defines: CUDA
   __device__ __forceinline__, the host static inline.  Semantics follow the NumPy backend
   (backends/numpy/helpers.py) operation by operation, so that the two agree bit for bit wherever
   docs/float-semantics.md calls a result exact: f16 arithmetic is done in f32 and rounded once
   (as NumPy does), v_rcp/v_rsq/v_exp/v_log/v_sin/v_cos of f32/f16 are computed in f64 and rounded
   once, fma_f32 is fmaf (one rounding), fma_f16 rounds to odd in f64 first.  Fixed text only
   (no guest bytes). */
/* ---------------------------------------------------------------- f16 <-> f32/f64 (RNE) */
WL_DEVICE f32 wl_h2f(f16 h) {
  u32 s = (u32)(h.b >> 15) << 31, e = (h.b >> 10) & 31u, m = h.b & 1023u;
  if (e == 31u) return __uint_as_float(s | 0x7f800000u | (m << 13));
  if (e == 0u) {
    if (m == 0u) return __uint_as_float(s);
    f32 v = (f32)m * 5.9604644775390625e-08f;          /* m * 2^-24, exact */
    return s ? -v : v;
  }
  return __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
}
WL_DEVICE f16 wl_f2h(f32 x) {
  u32 u = __float_as_uint(x);
  u16 s = (u16)((u >> 16) & 0x8000u);
  u32 a = u & 0x7fffffffu;
  f16 r;
  if (a >= 0x7f800000u) {                    /* NumPy: payload >> 13, kept a NaN */
    u16 q = (u16)(0x7c00u + ((a & 0x7fffffu) >> 13)); if (a > 0x7f800000u && q == 0x7c00u) q++;
    r.b = s | q; return r; }
  if (a >= 0x477ff000u) { r.b = s | 0x7c00u; return r; }             /* rounds to inf */
  if (a < 0x38800000u) {                                             /* f16 subnormal or 0 */
    if (a < 0x33000000u) { r.b = s; return r; }                       /* < 2^-25: 0 */
    u32 e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
    u32 sh = 126u - e;                                                /* 14..24 */
    u32 q = m >> sh, rem = m & ((1u << sh) - 1u), half = 1u << (sh - 1u);
    if (rem > half || (rem == half && (q & 1u))) q++;
    r.b = s | (u16)q; return r;
  }
  u32 q = ((a >> 13) - (112u << 10)), rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;
  r.b = s | (u16)q; return r;
}
WL_DEVICE f16 wl_d2h(f64 x) {
  u64 u = (u64)__double_as_longlong(x);
  u16 s = (u16)((u >> 48) & 0x8000u);
  u64 a = u & 0x7fffffffffffffffull;
  f16 r;
  if (a >= 0x7ff0000000000000ull) {
    u16 q = (u16)(0x7c00u + (u32)((a & 0xfffffffffffffull) >> 42)); if (a > 0x7ff0000000000000ull && q == 0x7c00u) q++;
    r.b = s | q; return r; }
  if (a >= 0x40effe0000000000ull) { r.b = s | 0x7c00u; return r; }   /* >= 65520: inf */
  i32 e = (i32)(a >> 52) - 1023;
  u64 m = (a & 0xfffffffffffffull) | 0x10000000000000ull;
  if (e < -25) { r.b = s; return r; }
  u32 sh;
  u32 base;
  if (e < -14) { sh = (u32)(42 + (-14 - e)); base = 0; }               /* subnormal result */
  else { sh = 42u; base = (u32)(e + 15) << 10; m &= 0xfffffffffffffull; }
  u64 q = m >> sh, rem = m & ((1ull << sh) - 1ull), half = 1ull << (sh - 1u);
  if (rem > half || (rem == half && (q & 1ull))) q++;
  r.b = s | (u16)(base + (u32)q); return r;                            /* carry rolls into exponent */
}
/* f16 -> f64 as NumPy converts: a signaling NaN stays signaling (payload << 42) */
WL_DEVICE f64 wl_h2d(f16 h) {
  if ((h.b & 0x7c00u) != 0x7c00u) return (f64)wl_h2f(h);
  return __longlong_as_double((i64)(((u64)(h.b & 0x8000u) << 48) | 0x7ff0000000000000ull | ((u64)(h.b & 1023u) << 42)));
}
WL_DEVICE f32 wl_f(f16 x) { return wl_h2f(x); }
WL_DEVICE f32 wl_f(f32 x) { return x; }
WL_DEVICE f64 wl_f(f64 x) { return x; }

/* ------------------------------------------------------------------- bit casts */
template <class T, class F> WL_DEVICE T wl_bc(F x) {
  union { F f; T t; } u; u.f = x; return u.t;
}

/* -------------------------------------------------------------------- denormals */
WL_DEVICE f32 wl_flush(f32 x) {
  return (fabsf(x) < 1.17549435e-38f && x != 0.0f) ? copysignf(0.0f, x) : x;
}
WL_DEVICE f64 wl_flush(f64 x) {
  return (fabs(x) < 2.2250738585072014e-308 && x != 0.0) ? copysign(0.0, x) : x;
}
WL_DEVICE f16 wl_flush(f16 x) {
  f16 r = x; if ((x.b & 0x7c00u) == 0u) r.b = x.b & 0x8000u; return r;
}
WL_DEVICE u32 wl_dmode(f32, u32 mode) { return (mode >> 4) & 3u; }
WL_DEVICE u32 wl_dmode(f64, u32 mode) { return (mode >> 6) & 3u; }
WL_DEVICE u32 wl_dmode(f16, u32 mode) { return (mode >> 6) & 3u; }
template <class T> WL_DEVICE T wl_fin(T x, u32 mode) {
  u32 d = wl_dmode(x, mode); return (d == 0u || d == 2u) ? wl_flush(x) : x;
}
template <class T> WL_DEVICE T wl_fout(T x, u32 mode) {
  u32 d = wl_dmode(x, mode); return (d == 0u || d == 1u) ? wl_flush(x) : x;
}

/* ------------------------------------------------------------- NaN results as on RDNA
   docs/float-semantics.md "NaN results": a NaN result is the first NaN operand, quieted, or for
   an invalid operation the default NaN (sign set) -- under MODE.IEEE; the frontend's fnan op
   (below) undoes the quieting where MODE.IEEE is clear.  x86 (NumPy) does the same; GPUs return
   a canonical NaN instead, so these fix-ups run when the result is a NaN.  (Selects, not
   branches, here and below: the NumPy backend's native tier vectorises them.) */
WL_DEVICE f32 wl_q(f32 x) { return __uint_as_float(__float_as_uint(x) | 0x400000u); }
WL_DEVICE f64 wl_q(f64 x) { return __longlong_as_double(__double_as_longlong(x) | 0x8000000000000ll); }
WL_DEVICE f32 wl_dnan(f32) { return __uint_as_float(0xffc00000u); }
WL_DEVICE f64 wl_dnan(f64) { return __longlong_as_double((i64)0xfff8000000000000ull); }
template <class T> WL_DEVICE T wl_nf1(T r, T a) {
  return (r == r) ? r : ((a != a) ? wl_q(a) : wl_dnan(r));
}
template <class T> WL_DEVICE T wl_nf2(T r, T a, T b) {
  return (r == r) ? r : ((a != a) ? wl_q(a) : ((b != b) ? wl_q(b) : wl_dnan(r)));
}
template <class T> WL_DEVICE T wl_nf3(T r, T a, T b, T c) {
  return (r == r) ? r : ((a != a) ? wl_q(a) : ((b != b) ? wl_q(b) : ((c != c) ? wl_q(c) : wl_dnan(r))));
}
/* IR fnan: a NaN r whose bits are a NaN source's with the quiet bit set becomes that source
   (the first such; every source is compared: the op may take them in another order, v_subrev) */
WL_DEVICE bool wl_qeq(f32 r, f32 s) { return (s != s) & (__float_as_uint(r) == (__float_as_uint(s) | 0x400000u)); }
WL_DEVICE bool wl_qeq(f64 r, f64 s) {
  return (s != s) & ((u64)__double_as_longlong(r) == ((u64)__double_as_longlong(s) | 0x8000000000000ull));
}
WL_DEVICE bool wl_qeq(f16 r, f16 s) { return ((s.b & 0x7fffu) > 0x7c00u) & (r.b == (u16)(s.b | 0x200u)); }
template <class T> WL_DEVICE T wl_fnan(T r, T a) { return wl_qeq(r, a) ? a : r; }
template <class T> WL_DEVICE T wl_fnan(T r, T a, T b) {
  return wl_qeq(r, a) ? a : (wl_qeq(r, b) ? b : r);
}
template <class T> WL_DEVICE T wl_fnan(T r, T a, T b, T c) {
  return wl_qeq(r, a) ? a : (wl_qeq(r, b) ? b : (wl_qeq(r, c) ? c : r));
}
WL_DEVICE f32 wl_d2f(f64 x) {
  if (x == x) return (f32)x;
  u64 u = (u64)__double_as_longlong(x);
  return __uint_as_float((u32)(u >> 32 & 0x80000000u) | 0x7fc00000u | (u32)((u >> 29) & 0x7fffffu));
}
WL_DEVICE f64 wl_f2d(f32 x) {
  if (x == x) return (f64)x;
  u32 u = __float_as_uint(x);
  return __longlong_as_double((i64)(((u64)(u & 0x80000000u) << 32) | 0x7ff8000000000000ull | ((u64)(u & 0x7fffffu) << 29)));
}

/* ------------------------------------------------------------------ arithmetic */
WL_DEVICE f32 wl_fadd(f32 a, f32 b) { return wl_nf2(__fadd_rn(a, b), a, b); }
WL_DEVICE f64 wl_fadd(f64 a, f64 b) { return wl_nf2(__dadd_rn(a, b), a, b); }
WL_DEVICE f16 wl_fadd(f16 a, f16 b) { return wl_f2h(wl_fadd(wl_h2f(a), wl_h2f(b))); }
WL_DEVICE f32 wl_fsub(f32 a, f32 b) { return wl_nf2(__fsub_rn(a, b), a, b); }
WL_DEVICE f64 wl_fsub(f64 a, f64 b) { return wl_nf2(__dsub_rn(a, b), a, b); }
WL_DEVICE f16 wl_fsub(f16 a, f16 b) { return wl_f2h(wl_fsub(wl_h2f(a), wl_h2f(b))); }
WL_DEVICE f32 wl_fmul(f32 a, f32 b) { return wl_nf2(__fmul_rn(a, b), a, b); }
WL_DEVICE f64 wl_fmul(f64 a, f64 b) { return wl_nf2(__dmul_rn(a, b), a, b); }
WL_DEVICE f16 wl_fmul(f16 a, f16 b) { return wl_f2h(wl_fmul(wl_h2f(a), wl_h2f(b))); }
WL_DEVICE f32 wl_fdiv(f32 a, f32 b) { return wl_nf2(__fdiv_rn(a, b), a, b); }
WL_DEVICE f64 wl_fdiv(f64 a, f64 b) { return wl_nf2(__ddiv_rn(a, b), a, b); }
WL_DEVICE f16 wl_fdiv(f16 a, f16 b) { return wl_f2h(wl_fdiv(wl_h2f(a), wl_h2f(b))); }
/* fma: an invalid product (0 * inf) gives the default NaN even with a NaN addend */
template <class T> WL_DEVICE T wl_nfma(T r, T a, T b, T c) {
  const T p = a * b;                            /* NaN here (a, b not NaN): 0 * inf */
  return (r == r) ? r : ((a != a) ? wl_q(a) : ((b != b) ? wl_q(b) : (((c != c) & (p == p)) ? wl_q(c) : wl_dnan(r))));
}
WL_DEVICE f32 wl_fma(f32 a, f32 b, f32 c) { return wl_nfma(__fmaf_rn(a, b, c), a, b, c); }
WL_DEVICE f64 wl_fma(f64 a, f64 b, f64 c) { return wl_nfma(__fma_rn(a, b, c), a, b, c); }
/* fma rounded once into a narrower type (helpers.fma with ``to``; the fma_to op, v_fma_mix*):
   the product of two f32/f16 is exact in f64; TwoSum; round to odd; then one rounding.  NaN
   bits: wl_fmul/wl_fadd's (the product's NaN, an invalid one included, comes first). */
WL_DEVICE f64 wl_fma_odd(f64 a, f64 b, f64 c) {
  f64 p = wl_fmul(a, b);
  f64 s = wl_fadd(p, c);
  if (isfinite(s) && s != 0.0) {
    f64 bb = __dsub_rn(s, p);
    f64 err = __dadd_rn(__dsub_rn(p, __dsub_rn(s, bb)), __dsub_rn(c, bb));
    u64 bits = (u64)__double_as_longlong(s);
    if (err != 0.0 && (bits & 1ull) == 0ull) {
      bits += ((err > 0.0) == (s > 0.0)) ? 1ull : 0xffffffffffffffffull;
      s = __longlong_as_double((i64)bits);
    }
  }
  return s;
}
WL_DEVICE f64 wl_fwide(f16 x) { return wl_f2d(wl_h2f(x)); }
WL_DEVICE f64 wl_fwide(f32 x) { return wl_f2d(x); }
WL_DEVICE f16 wl_to_f16(f64 s) { return wl_d2h(s); }
WL_DEVICE f32 wl_to_f32(f64 s) { return wl_d2f(s); }
WL_DEVICE f64 wl_to_f64(f64 s) { return s; }
WL_DEVICE f16 wl_fma(f16 a, f16 b, f16 c) {
  return wl_d2h(wl_fma_odd(wl_fwide(a), wl_fwide(b), wl_fwide(c)));
}
WL_DEVICE f32 wl_fneg(f32 a) { return __uint_as_float(__float_as_uint(a) ^ 0x80000000u); }
WL_DEVICE f64 wl_fneg(f64 a) { return __longlong_as_double(__double_as_longlong(a) ^ (i64)0x8000000000000000ull); }
WL_DEVICE f16 wl_fneg(f16 a) { f16 r; r.b = a.b ^ 0x8000u; return r; }
WL_DEVICE f64 wl_fabs(f64 a) { return __longlong_as_double(__double_as_longlong(a) & 0x7fffffffffffffffll); }
WL_DEVICE f32 wl_fabs(f32 a) { return __uint_as_float(__float_as_uint(a) & 0x7fffffffu); }
WL_DEVICE f16 wl_fabs(f16 a) { f16 r; r.b = a.b & 0x7fffu; return r; }

template <class T> WL_DEVICE T wl_fmin(T a, T b) {
  const bool lt = (a < b) | ((a == b) & (bool)signbit(a));
  return (a != a) ? b : ((b != b) ? a : (lt ? a : b));
}
template <class T> WL_DEVICE T wl_fmax(T a, T b) {
  const bool gt = (a > b) | ((a == b) & !(bool)signbit(a));
  return (a != a) ? b : ((b != b) ? a : (gt ? a : b));
}
WL_DEVICE f16 wl_fmin(f16 a, f16 b) {
  f32 x = wl_h2f(a), y = wl_h2f(b);
  if (x != x) return b; if (y != y) return a;
  bool lt = (x < y) || (x == y && (a.b & 0x8000u)); return lt ? a : b;
}
WL_DEVICE f16 wl_fmax(f16 a, f16 b) {
  f32 x = wl_h2f(a), y = wl_h2f(b);
  if (x != x) return b; if (y != y) return a;
  bool gt = (x > y) || (x == y && !(a.b & 0x8000u)); return gt ? a : b;
}

WL_DEVICE f32 wl_floor(f32 x) { return wl_nf1(floorf(x), x); }
WL_DEVICE f64 wl_floor(f64 x) { return wl_nf1(floor(x), x); }
WL_DEVICE f16 wl_floor(f16 x) { return wl_f2h(wl_floor(wl_h2f(x))); }
WL_DEVICE f32 wl_ceil(f32 x) { return wl_nf1(ceilf(x), x); }
WL_DEVICE f64 wl_ceil(f64 x) { return wl_nf1(ceil(x), x); }
WL_DEVICE f16 wl_ceil(f16 x) { return wl_f2h(wl_ceil(wl_h2f(x))); }
WL_DEVICE f32 wl_trunc(f32 x) { return wl_nf1(truncf(x), x); }
WL_DEVICE f64 wl_trunc(f64 x) { return wl_nf1(trunc(x), x); }
WL_DEVICE f16 wl_trunc(f16 x) { return wl_f2h(wl_trunc(wl_h2f(x))); }
WL_DEVICE f32 wl_rndne(f32 x) { return wl_nf1(rintf(x), x); }
WL_DEVICE f64 wl_rndne(f64 x) { return wl_nf1(rint(x), x); }
WL_DEVICE f16 wl_rndne(f16 x) { return wl_f2h(wl_rndne(wl_h2f(x))); }
WL_DEVICE f32 wl_fract(f32 x) {
  if (isinf(x)) return wl_dnan(x);                     /* inf - floor(inf): invalid */
  f32 r = __fsub_rn(x, floorf(x)); const f32 om = __uint_as_float(0x3f7fffffu);
  return wl_nf1((r != r) ? r : (r < om ? r : om), x);  /* a NaN x: its payload (GPUs: canonical) */
}
WL_DEVICE f64 wl_fract(f64 x) {
  if (isinf(x)) return wl_dnan(x);
  f64 r = __dsub_rn(x, floor(x)); const f64 om = __longlong_as_double(0x3fefffffffffffffll);
  return wl_nf1((r != r) ? r : (r < om ? r : om), x);
}
WL_DEVICE f16 wl_fract(f16 x) {
  f32 v = wl_h2f(x);
  f16 r; if (isinf(v)) { r.b = 0xfe00u; return r; }
  f16 fl = wl_f2h(floorf(v));
  f16 d = wl_f2h(__fsub_rn(v, wl_h2f(fl)));
  f32 dv = wl_h2f(d);
  if (dv != dv) return wl_f2h(wl_q(v));                /* x's payload, quieted */
  if (d.b == 0x3c00u || dv > 0.99951171875f) { r.b = 0x3bffu; return r; }
  return d;
}
WL_DEVICE f32 wl_sqrt(f32 x) { return wl_nf1(__fsqrt_rn(x), x); }
WL_DEVICE f64 wl_sqrt(f64 x) { return wl_nf1(__dsqrt_rn(x), x); }
WL_DEVICE f16 wl_sqrt(f16 x) { return wl_f2h(wl_sqrt(wl_h2f(x))); }
WL_DEVICE f32 wl_rcp(f32 x) { return wl_nf1((f32)__drcp_rn((f64)x), x); }
WL_DEVICE f64 wl_rcp(f64 x) { return wl_nf1(__ddiv_rn(1.0, x), x); }
WL_DEVICE f16 wl_rcp(f16 x) { return wl_d2h(wl_rcp(wl_f2d(wl_h2f(x)))); }
WL_DEVICE f32 wl_rsq(f32 x) { return wl_nf1((f32)__ddiv_rn(1.0, __dsqrt_rn((f64)x)), x); }
WL_DEVICE f64 wl_rsq(f64 x) { return wl_nf1(__ddiv_rn(1.0, __dsqrt_rn(x)), x); }
WL_DEVICE f16 wl_rsq(f16 x) { return wl_d2h(wl_rsq(wl_f2d(wl_h2f(x)))); }
WL_DEVICE f32 wl_exp2(f32 x) { return wl_nf1((f32)exp2((f64)x), x); }
WL_DEVICE f64 wl_exp2(f64 x) { return wl_nf1(exp2(x), x); }
WL_DEVICE f16 wl_exp2(f16 x) { return wl_d2h(wl_exp2(wl_f2d(wl_h2f(x)))); }
WL_DEVICE f32 wl_log2(f32 x) { return wl_nf1((f32)log2((f64)x), x); }
WL_DEVICE f64 wl_log2(f64 x) { return wl_nf1(log2(x), x); }
WL_DEVICE f16 wl_log2(f16 x) { return wl_d2h(wl_log2(wl_f2d(wl_h2f(x)))); }
#define WL_2PI 6.283185307179586
WL_DEVICE f64 wl_sin(f64 x) { return wl_nf1(sin(__dmul_rn(x, WL_2PI)), x); }
WL_DEVICE f32 wl_sin(f32 x) { return wl_d2f(wl_sin(wl_f2d(x))); }
WL_DEVICE f16 wl_sin(f16 x) { return wl_d2h(wl_sin(wl_f2d(wl_h2f(x)))); }
WL_DEVICE f64 wl_cos(f64 x) { return wl_nf1(cos(__dmul_rn(x, WL_2PI)), x); }
WL_DEVICE f32 wl_cos(f32 x) { return wl_d2f(wl_cos(wl_f2d(x))); }
WL_DEVICE f16 wl_cos(f16 x) { return wl_d2h(wl_cos(wl_f2d(wl_h2f(x)))); }
WL_DEVICE i32 wl_clipe(i64 e) { return (i32)(e < -100000 ? -100000 : (e > 100000 ? 100000 : e)); }
WL_DEVICE f32 wl_ldexp(f32 x, i64 e) { return wl_nf1(ldexpf(x, wl_clipe(e)), x); }
WL_DEVICE f64 wl_ldexp(f64 x, i64 e) { return wl_nf1(ldexp(x, wl_clipe(e)), x); }
WL_DEVICE f16 wl_ldexp(f16 x, i64 e) { return wl_f2h(wl_ldexp(wl_h2f(x), e)); }
WL_DEVICE f32 wl_frexp_mant(f32 x) { int e; return isfinite(x) ? frexpf(x, &e) : wl_nf1(x, x); }
WL_DEVICE f64 wl_frexp_mant(f64 x) { int e; return isfinite(x) ? frexp(x, &e) : wl_nf1(x, x); }
WL_DEVICE f16 wl_frexp_mant(f16 x) {
  int e; f32 v = wl_h2f(x); f16 q = x; q.b |= (v != v) ? 0x200u : 0u;
  return isfinite(v) ? wl_f2h(frexpf(v, &e)) : q;
}
WL_DEVICE i32 wl_frexp_exp(f32 x) { int e = 0; if (!isfinite(x)) return 0; frexpf(x, &e); return e; }
WL_DEVICE i32 wl_frexp_exp(f64 x) { int e = 0; if (!isfinite(x)) return 0; frexp(x, &e); return e; }
WL_DEVICE i32 wl_frexp_exp(f16 x) { int e = 0; f32 v = wl_h2f(x); if (!isfinite(v)) return 0; frexpf(v, &e); return e; }

/* class bits: 0 sNaN 1 qNaN 2 -inf 3 -normal 4 -denorm 5 -0 6 +0 7 +denorm 8 +normal 9 +inf */
WL_DEVICE u32 wl_classbit(u64 mag, u64 expmask, u64 qbit, bool neg) {
  u64 e = mag & expmask;
  if (e == expmask) {
    if (mag == expmask) return neg ? 2u : 9u;
    return (mag & qbit) ? 1u : 0u;
  }
  if (mag == 0ull) return neg ? 5u : 6u;
  if (e == 0ull) return neg ? 4u : 7u;
  return neg ? 3u : 8u;
}
WL_DEVICE u32 wl_isclass(f32 x, u32 m) {
  u32 u = __float_as_uint(x);
  return (m >> wl_classbit(u & 0x7fffffffu, 0x7f800000u, 1u << 22, u >> 31)) & 1u;
}
WL_DEVICE u32 wl_isclass(f64 x, u32 m) {
  u64 u = (u64)__double_as_longlong(x);
  return (m >> wl_classbit(u & 0x7fffffffffffffffull, 0x7ff0000000000000ull, 1ull << 51, u >> 63)) & 1u;
}
WL_DEVICE u32 wl_isclass(f16 x, u32 m) {
  return (m >> wl_classbit(x.b & 0x7fffu, 0x7c00u, 1u << 9, x.b >> 15)) & 1u;
}

/* ------------------------------------------------------- float -> int (trunc, NaN 0, saturate) */
template <class T> WL_DEVICE T wl_f2i(f64 y, f64 lo, f64 hi) {
  y = trunc(y);
  y = (y != y) ? 0.0 : ((y <= lo) ? lo : ((y >= hi) ? hi : y));
  return (T)y;
}
/* the same from f32 (and f16) into 32 bits or fewer, without widening (twice the lanes per vector
   on the host): ``top`` = hi + 1, a power of two, so x >= top saturates exactly where trunc(x) >= hi
   does (no f32 lies in (top - 1, top)); below it, x <= lo gives lo and (T)x truncates in range.
   NaN fails both x > lo and x <= lo: 0 (for lo == 0, as every unsigned T has, the two selects
   fold into one: the host's vectors spend a compare and a blend less than a NaN test first) */
template <class T> WL_DEVICE T wl_f2i(f32 x, f32 lo, f32 top, T hi) {
  const f32 y = x > lo ? x : ((x <= lo) ? lo : 0.0f);
  return (x >= top) ? hi : (T)y;
}
WL_DEVICE u64 wl_f2u64(f64 y) {
  y = trunc(y); if (y != y || y <= 0.0) return 0ull;
  if (y >= 18446744073709551616.0) return 0xffffffffffffffffull; return (u64)y;
}
WL_DEVICE i64 wl_f2i64(f64 y) {
  y = trunc(y); if (y != y) return 0ll;
  if (y >= 9223372036854775808.0) return 0x7fffffffffffffffll;
  if (y <= -9223372036854775808.0) return (i64)0x8000000000000000ull; return (i64)y;
}

/* --------------------------------------------------------------------- integers */
/* n / d for the divisor's (m, shifts) from codegen.div_magic */
WL_DEVICE u32 wl_udiv(u32 n, u32 m, u32 sh) {
  const u32 t = __umulhi(n, m); return (t + ((n - t) >> (sh & 255u))) >> (sh >> 8);
}
/* (u64)a + (u64)b, the carry made by a compare (codegen: the add of two widened u32) */
WL_DEVICE u64 wl_addc(u32 a, u32 b) { const u32 s = a + b; return (u64)s | ((u64)(s < a) << 32); }
WL_DEVICE i32 wl_clz32(u32 x, u32 bits) { return x == 0u ? -1 : (i32)__clz(x) - (i32)(32u - bits); }
WL_DEVICE i32 wl_clz64(u64 x) { return x == 0ull ? -1 : (i32)__clzll((i64)x); }
WL_DEVICE i32 wl_ctz32(u32 x) { return __ffs((i32)x) - 1; }
WL_DEVICE i32 wl_ctz64(u64 x) { return __ffsll((i64)x) - 1; }
/* guest addresses (docs/decisions/0014-addresses.md), for the CUDA kernel and the native tier:
   an address a program computes reaches a window only when it is canonical (bits 63:48 copy
   bit 47), and nb bytes at a lie in [s, e) (e >= s) only when every byte does -- tested so that
   no term wraps (a - s is taken only when a >= s; nb > e - s fails) */
WL_DEVICE bool wl_is_canon(u64 a) { return (u64)((i64)(a << 16) >> 16) == a; }
WL_DEVICE bool wl_inside(u64 a, u32 nb, u64 s, u64 e) {
  return a >= s && a - s < e - s && (u64)nb <= (e - s) - (a - s);
}
