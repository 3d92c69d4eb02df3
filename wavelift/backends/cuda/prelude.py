"""The fixed CUDA C++ text every module starts with: types, float semantics, memory helpers.

Fixed text only (no guest bytes): the generated part of a module adds numbers and names made
from numbers.  Semantics follow the NumPy backend (backends/numpy/helpers.py) operation by
operation, so that the two agree bit for bit wherever docs/float-semantics.md calls a result
exact: f16 arithmetic is done in f32 and rounded once (as NumPy does), v_rcp/v_rsq/v_exp/v_log/
v_sin/v_cos of f32/f16 are computed in f64 and rounded once, fma_f32 is fmaf (one rounding),
fma_f16 rounds to odd in f64 first.  Compiled with --fmad=false -ftz=false -prec-div=true
-prec-sqrt=true so that nothing is contracted or flushed behind our back.
"""

PRELUDE = r"""
typedef bool b1;
typedef unsigned char u8;
typedef signed char i8;
typedef unsigned short u16;
typedef short i16;
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;
typedef float f32;
typedef double f64;
struct f16 { u16 b; };

#define WL_FULL 0xffffffffu
/* status[0] flags */
#define WL_BUDGET 1u
#define WL_BAD_JUMP 2u
#define WL_BAD_ADDRESS 4u
#define WL_ROUNDING 8u
#define WL_REFUSE 16u
#define WL_STOP_MASK 31u
#define WL_MAX_ESC 16u

/* wave64: true in all 64 threads of the wave when c holds in any (named barrier 1+wave, 64) */
__device__ __forceinline__ bool wl_any64(bool c, u32 bar) {
  u32 r;
  asm volatile("{ .reg .pred p, q; setp.ne.u32 p, %1, 0; bar.red.or.pred q, %2, 64, p; selp.u32 %0, 1, 0, q; }"
               : "=r"(r) : "r"((u32)c), "r"(bar) : "memory");
  return r != 0u;
}

/* ---------------------------------------------------------------- f16 <-> f32/f64 (RNE) */
__device__ __forceinline__ f32 wl_h2f(f16 h) {
  u32 s = (u32)(h.b >> 15) << 31, e = (h.b >> 10) & 31u, m = h.b & 1023u;
  if (e == 31u) return __uint_as_float(s | 0x7f800000u | (m << 13));
  if (e == 0u) {
    if (m == 0u) return __uint_as_float(s);
    f32 v = (f32)m * 5.9604644775390625e-08f;          /* m * 2^-24, exact */
    return s ? -v : v;
  }
  return __uint_as_float(s | ((e + 112u) << 23) | (m << 13));
}
__device__ __forceinline__ f16 wl_f2h(f32 x) {
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
__device__ __forceinline__ f16 wl_d2h(f64 x) {
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
__device__ __forceinline__ f64 wl_h2d(f16 h) {
  if ((h.b & 0x7c00u) != 0x7c00u) return (f64)wl_h2f(h);
  return __longlong_as_double((i64)(((u64)(h.b & 0x8000u) << 48) | 0x7ff0000000000000ull | ((u64)(h.b & 1023u) << 42)));
}
__device__ __forceinline__ f32 wl_f(f16 x) { return wl_h2f(x); }
__device__ __forceinline__ f32 wl_f(f32 x) { return x; }
__device__ __forceinline__ f64 wl_f(f64 x) { return x; }

/* ------------------------------------------------------------------- bit casts */
template <class T, class F> __device__ __forceinline__ T wl_bc(F x) {
  union { F f; T t; } u; u.f = x; return u.t;
}

/* -------------------------------------------------------------------- denormals */
__device__ __forceinline__ f32 wl_flush(f32 x) {
  return (fabsf(x) < 1.17549435e-38f && x != 0.0f) ? copysignf(0.0f, x) : x;
}
__device__ __forceinline__ f64 wl_flush(f64 x) {
  return (fabs(x) < 2.2250738585072014e-308 && x != 0.0) ? copysign(0.0, x) : x;
}
__device__ __forceinline__ f16 wl_flush(f16 x) {
  f16 r = x; if ((x.b & 0x7c00u) == 0u) r.b = x.b & 0x8000u; return r;
}
__device__ __forceinline__ u32 wl_dmode(f32, u32 mode) { return (mode >> 4) & 3u; }
__device__ __forceinline__ u32 wl_dmode(f64, u32 mode) { return (mode >> 6) & 3u; }
__device__ __forceinline__ u32 wl_dmode(f16, u32 mode) { return (mode >> 6) & 3u; }
template <class T> __device__ __forceinline__ T wl_fin(T x, u32 mode) {
  u32 d = wl_dmode(x, mode); return (d == 0u || d == 2u) ? wl_flush(x) : x;
}
template <class T> __device__ __forceinline__ T wl_fout(T x, u32 mode) {
  u32 d = wl_dmode(x, mode); return (d == 0u || d == 1u) ? wl_flush(x) : x;
}

/* ------------------------------------------------------------- NaN results as on RDNA
   docs/float-semantics.md "NaN results": a NaN result is the first NaN operand, quieted, or for
   an invalid operation the default NaN (sign set) -- under MODE.IEEE; the frontend's fnan op
   (below) undoes the quieting where MODE.IEEE is clear.  x86 (NumPy) does the same; GPUs return
   a canonical NaN instead, so these fix-ups run when the result is a NaN.  (Selects, not
   branches, here and below: the NumPy backend's native tier vectorises them.) */
__device__ __forceinline__ f32 wl_q(f32 x) { return __uint_as_float(__float_as_uint(x) | 0x400000u); }
__device__ __forceinline__ f64 wl_q(f64 x) { return __longlong_as_double(__double_as_longlong(x) | 0x8000000000000ll); }
__device__ __forceinline__ f32 wl_dnan(f32) { return __uint_as_float(0xffc00000u); }
__device__ __forceinline__ f64 wl_dnan(f64) { return __longlong_as_double((i64)0xfff8000000000000ull); }
template <class T> __device__ __forceinline__ T wl_nf1(T r, T a) {
  return (r == r) ? r : ((a != a) ? wl_q(a) : wl_dnan(r));
}
template <class T> __device__ __forceinline__ T wl_nf2(T r, T a, T b) {
  return (r == r) ? r : ((a != a) ? wl_q(a) : ((b != b) ? wl_q(b) : wl_dnan(r)));
}
template <class T> __device__ __forceinline__ T wl_nf3(T r, T a, T b, T c) {
  return (r == r) ? r : ((a != a) ? wl_q(a) : ((b != b) ? wl_q(b) : ((c != c) ? wl_q(c) : wl_dnan(r))));
}
/* IR fnan: a NaN r whose bits are a NaN source's with the quiet bit set becomes that source
   (the first such; every source is compared: the op may take them in another order, v_subrev) */
__device__ __forceinline__ bool wl_qeq(f32 r, f32 s) { return (s != s) & (__float_as_uint(r) == (__float_as_uint(s) | 0x400000u)); }
__device__ __forceinline__ bool wl_qeq(f64 r, f64 s) {
  return (s != s) & ((u64)__double_as_longlong(r) == ((u64)__double_as_longlong(s) | 0x8000000000000ull));
}
__device__ __forceinline__ bool wl_qeq(f16 r, f16 s) { return ((s.b & 0x7fffu) > 0x7c00u) & (r.b == (u16)(s.b | 0x200u)); }
template <class T> __device__ __forceinline__ T wl_fnan(T r, T a) { return wl_qeq(r, a) ? a : r; }
template <class T> __device__ __forceinline__ T wl_fnan(T r, T a, T b) {
  return wl_qeq(r, a) ? a : (wl_qeq(r, b) ? b : r);
}
template <class T> __device__ __forceinline__ T wl_fnan(T r, T a, T b, T c) {
  return wl_qeq(r, a) ? a : (wl_qeq(r, b) ? b : (wl_qeq(r, c) ? c : r));
}
__device__ __forceinline__ f32 wl_d2f(f64 x) {
  if (x == x) return (f32)x;
  u64 u = (u64)__double_as_longlong(x);
  return __uint_as_float((u32)(u >> 32 & 0x80000000u) | 0x7fc00000u | (u32)((u >> 29) & 0x7fffffu));
}
__device__ __forceinline__ f64 wl_f2d(f32 x) {
  if (x == x) return (f64)x;
  u32 u = __float_as_uint(x);
  return __longlong_as_double((i64)(((u64)(u & 0x80000000u) << 32) | 0x7ff8000000000000ull | ((u64)(u & 0x7fffffu) << 29)));
}

/* ------------------------------------------------------------------ arithmetic */
__device__ __forceinline__ f32 wl_fadd(f32 a, f32 b) { return wl_nf2(__fadd_rn(a, b), a, b); }
__device__ __forceinline__ f64 wl_fadd(f64 a, f64 b) { return wl_nf2(__dadd_rn(a, b), a, b); }
__device__ __forceinline__ f16 wl_fadd(f16 a, f16 b) { return wl_f2h(wl_fadd(wl_h2f(a), wl_h2f(b))); }
__device__ __forceinline__ f32 wl_fsub(f32 a, f32 b) { return wl_nf2(__fsub_rn(a, b), a, b); }
__device__ __forceinline__ f64 wl_fsub(f64 a, f64 b) { return wl_nf2(__dsub_rn(a, b), a, b); }
__device__ __forceinline__ f16 wl_fsub(f16 a, f16 b) { return wl_f2h(wl_fsub(wl_h2f(a), wl_h2f(b))); }
__device__ __forceinline__ f32 wl_fmul(f32 a, f32 b) { return wl_nf2(__fmul_rn(a, b), a, b); }
__device__ __forceinline__ f64 wl_fmul(f64 a, f64 b) { return wl_nf2(__dmul_rn(a, b), a, b); }
__device__ __forceinline__ f16 wl_fmul(f16 a, f16 b) { return wl_f2h(wl_fmul(wl_h2f(a), wl_h2f(b))); }
__device__ __forceinline__ f32 wl_fdiv(f32 a, f32 b) { return wl_nf2(__fdiv_rn(a, b), a, b); }
__device__ __forceinline__ f64 wl_fdiv(f64 a, f64 b) { return wl_nf2(__ddiv_rn(a, b), a, b); }
__device__ __forceinline__ f16 wl_fdiv(f16 a, f16 b) { return wl_f2h(wl_fdiv(wl_h2f(a), wl_h2f(b))); }
/* fma: an invalid product (0 * inf) gives the default NaN even with a NaN addend */
template <class T> __device__ __forceinline__ T wl_nfma(T r, T a, T b, T c) {
  const T p = a * b;                            /* NaN here (a, b not NaN): 0 * inf */
  return (r == r) ? r : ((a != a) ? wl_q(a) : ((b != b) ? wl_q(b) : (((c != c) & (p == p)) ? wl_q(c) : wl_dnan(r))));
}
__device__ __forceinline__ f32 wl_fma(f32 a, f32 b, f32 c) { return wl_nfma(__fmaf_rn(a, b, c), a, b, c); }
__device__ __forceinline__ f64 wl_fma(f64 a, f64 b, f64 c) { return wl_nfma(__fma_rn(a, b, c), a, b, c); }
/* fma rounded once into a narrower type (helpers.fma with ``to``; the fma_to op, v_fma_mix*):
   the product of two f32/f16 is exact in f64; TwoSum; round to odd; then one rounding.  NaN
   bits: wl_fmul/wl_fadd's (the product's NaN, an invalid one included, comes first). */
__device__ __forceinline__ f64 wl_fma_odd(f64 a, f64 b, f64 c) {
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
__device__ __forceinline__ f64 wl_fwide(f16 x) { return wl_f2d(wl_h2f(x)); }
__device__ __forceinline__ f64 wl_fwide(f32 x) { return wl_f2d(x); }
__device__ __forceinline__ f16 wl_to_f16(f64 s) { return wl_d2h(s); }
__device__ __forceinline__ f32 wl_to_f32(f64 s) { return wl_d2f(s); }
__device__ __forceinline__ f64 wl_to_f64(f64 s) { return s; }
__device__ __forceinline__ f16 wl_fma(f16 a, f16 b, f16 c) {
  return wl_d2h(wl_fma_odd(wl_fwide(a), wl_fwide(b), wl_fwide(c)));
}
__device__ __forceinline__ f32 wl_fneg(f32 a) { return __uint_as_float(__float_as_uint(a) ^ 0x80000000u); }
__device__ __forceinline__ f64 wl_fneg(f64 a) { return __longlong_as_double(__double_as_longlong(a) ^ (i64)0x8000000000000000ull); }
__device__ __forceinline__ f16 wl_fneg(f16 a) { f16 r; r.b = a.b ^ 0x8000u; return r; }
__device__ __forceinline__ f64 wl_fabs(f64 a) { return __longlong_as_double(__double_as_longlong(a) & 0x7fffffffffffffffll); }
__device__ __forceinline__ f32 wl_fabs(f32 a) { return __uint_as_float(__float_as_uint(a) & 0x7fffffffu); }
__device__ __forceinline__ f16 wl_fabs(f16 a) { f16 r; r.b = a.b & 0x7fffu; return r; }

template <class T> __device__ __forceinline__ T wl_fmin(T a, T b) {
  const bool lt = (a < b) | ((a == b) & (bool)signbit(a));
  return (a != a) ? b : ((b != b) ? a : (lt ? a : b));
}
template <class T> __device__ __forceinline__ T wl_fmax(T a, T b) {
  const bool gt = (a > b) | ((a == b) & !(bool)signbit(a));
  return (a != a) ? b : ((b != b) ? a : (gt ? a : b));
}
__device__ __forceinline__ f16 wl_fmin(f16 a, f16 b) {
  f32 x = wl_h2f(a), y = wl_h2f(b);
  if (x != x) return b; if (y != y) return a;
  bool lt = (x < y) || (x == y && (a.b & 0x8000u)); return lt ? a : b;
}
__device__ __forceinline__ f16 wl_fmax(f16 a, f16 b) {
  f32 x = wl_h2f(a), y = wl_h2f(b);
  if (x != x) return b; if (y != y) return a;
  bool gt = (x > y) || (x == y && !(a.b & 0x8000u)); return gt ? a : b;
}

__device__ __forceinline__ f32 wl_floor(f32 x) { return wl_nf1(floorf(x), x); }
__device__ __forceinline__ f64 wl_floor(f64 x) { return wl_nf1(floor(x), x); }
__device__ __forceinline__ f16 wl_floor(f16 x) { return wl_f2h(wl_floor(wl_h2f(x))); }
__device__ __forceinline__ f32 wl_ceil(f32 x) { return wl_nf1(ceilf(x), x); }
__device__ __forceinline__ f64 wl_ceil(f64 x) { return wl_nf1(ceil(x), x); }
__device__ __forceinline__ f16 wl_ceil(f16 x) { return wl_f2h(wl_ceil(wl_h2f(x))); }
__device__ __forceinline__ f32 wl_trunc(f32 x) { return wl_nf1(truncf(x), x); }
__device__ __forceinline__ f64 wl_trunc(f64 x) { return wl_nf1(trunc(x), x); }
__device__ __forceinline__ f16 wl_trunc(f16 x) { return wl_f2h(wl_trunc(wl_h2f(x))); }
__device__ __forceinline__ f32 wl_rndne(f32 x) { return wl_nf1(rintf(x), x); }
__device__ __forceinline__ f64 wl_rndne(f64 x) { return wl_nf1(rint(x), x); }
__device__ __forceinline__ f16 wl_rndne(f16 x) { return wl_f2h(wl_rndne(wl_h2f(x))); }
__device__ __forceinline__ f32 wl_fract(f32 x) {
  if (isinf(x)) return wl_dnan(x);                     /* inf - floor(inf): invalid */
  f32 r = __fsub_rn(x, floorf(x)); const f32 om = __uint_as_float(0x3f7fffffu);
  return (r != r) ? r : (r < om ? r : om);
}
__device__ __forceinline__ f64 wl_fract(f64 x) {
  if (isinf(x)) return wl_dnan(x);
  f64 r = __dsub_rn(x, floor(x)); const f64 om = __longlong_as_double(0x3fefffffffffffffll);
  return (r != r) ? r : (r < om ? r : om);
}
__device__ __forceinline__ f16 wl_fract(f16 x) {
  f32 v = wl_h2f(x);
  f16 r; if (isinf(v)) { r.b = 0xfe00u; return r; }
  f16 fl = wl_f2h(floorf(v));
  f16 d = wl_f2h(__fsub_rn(v, wl_h2f(fl)));
  f32 dv = wl_h2f(d);
  if (dv != dv) return d;
  if (d.b == 0x3c00u || dv > 0.99951171875f) { r.b = 0x3bffu; return r; }
  return d;
}
__device__ __forceinline__ f32 wl_sqrt(f32 x) { return wl_nf1(__fsqrt_rn(x), x); }
__device__ __forceinline__ f64 wl_sqrt(f64 x) { return wl_nf1(__dsqrt_rn(x), x); }
__device__ __forceinline__ f16 wl_sqrt(f16 x) { return wl_f2h(__fsqrt_rn(wl_h2f(x))); }
__device__ __forceinline__ f32 wl_rcp(f32 x) { return wl_nf1((f32)__drcp_rn((f64)x), x); }
__device__ __forceinline__ f64 wl_rcp(f64 x) { return wl_nf1(__ddiv_rn(1.0, x), x); }
__device__ __forceinline__ f16 wl_rcp(f16 x) { return wl_d2h(__ddiv_rn(1.0, (f64)wl_h2f(x))); }
__device__ __forceinline__ f32 wl_rsq(f32 x) { return wl_nf1((f32)__ddiv_rn(1.0, __dsqrt_rn((f64)x)), x); }
__device__ __forceinline__ f64 wl_rsq(f64 x) { return wl_nf1(__ddiv_rn(1.0, __dsqrt_rn(x)), x); }
__device__ __forceinline__ f16 wl_rsq(f16 x) { return wl_d2h(__ddiv_rn(1.0, __dsqrt_rn((f64)wl_h2f(x)))); }
__device__ __forceinline__ f32 wl_exp2(f32 x) { return wl_nf1((f32)exp2((f64)x), x); }
__device__ __forceinline__ f64 wl_exp2(f64 x) { return wl_nf1(exp2(x), x); }
__device__ __forceinline__ f16 wl_exp2(f16 x) { return wl_d2h(exp2((f64)wl_h2f(x))); }
__device__ __forceinline__ f32 wl_log2(f32 x) { return wl_nf1((f32)log2((f64)x), x); }
__device__ __forceinline__ f64 wl_log2(f64 x) { return wl_nf1(log2(x), x); }
__device__ __forceinline__ f16 wl_log2(f16 x) { return wl_d2h(log2((f64)wl_h2f(x))); }
#define WL_2PI 6.283185307179586
__device__ __forceinline__ f32 wl_sin(f32 x) { return (f32)sin(__dmul_rn((f64)x, WL_2PI)); }
__device__ __forceinline__ f64 wl_sin(f64 x) { return sin(__dmul_rn(x, WL_2PI)); }
__device__ __forceinline__ f16 wl_sin(f16 x) { return wl_d2h(sin(__dmul_rn((f64)wl_h2f(x), WL_2PI))); }
__device__ __forceinline__ f32 wl_cos(f32 x) { return (f32)cos(__dmul_rn((f64)x, WL_2PI)); }
__device__ __forceinline__ f64 wl_cos(f64 x) { return cos(__dmul_rn(x, WL_2PI)); }
__device__ __forceinline__ f16 wl_cos(f16 x) { return wl_d2h(cos(__dmul_rn((f64)wl_h2f(x), WL_2PI))); }
__device__ __forceinline__ i32 wl_clipe(i64 e) { return (i32)(e < -100000 ? -100000 : (e > 100000 ? 100000 : e)); }
__device__ __forceinline__ f32 wl_ldexp(f32 x, i64 e) { return ldexpf(x, wl_clipe(e)); }
__device__ __forceinline__ f64 wl_ldexp(f64 x, i64 e) { return ldexp(x, wl_clipe(e)); }
__device__ __forceinline__ f16 wl_ldexp(f16 x, i64 e) { return wl_f2h(ldexpf(wl_h2f(x), wl_clipe(e))); }
__device__ __forceinline__ f32 wl_frexp_mant(f32 x) { int e; return isfinite(x) ? frexpf(x, &e) : wl_nf1(x, x); }
__device__ __forceinline__ f64 wl_frexp_mant(f64 x) { int e; return isfinite(x) ? frexp(x, &e) : wl_nf1(x, x); }
__device__ __forceinline__ f16 wl_frexp_mant(f16 x) {
  int e; f32 v = wl_h2f(x); f16 q = x; q.b |= (v != v) ? 0x200u : 0u;
  return isfinite(v) ? wl_f2h(frexpf(v, &e)) : q;
}
__device__ __forceinline__ i32 wl_frexp_exp(f32 x) { int e = 0; if (!isfinite(x)) return 0; frexpf(x, &e); return e; }
__device__ __forceinline__ i32 wl_frexp_exp(f64 x) { int e = 0; if (!isfinite(x)) return 0; frexp(x, &e); return e; }
__device__ __forceinline__ i32 wl_frexp_exp(f16 x) { int e = 0; f32 v = wl_h2f(x); if (!isfinite(v)) return 0; frexpf(v, &e); return e; }

/* class bits: 0 sNaN 1 qNaN 2 -inf 3 -normal 4 -denorm 5 -0 6 +0 7 +denorm 8 +normal 9 +inf */
__device__ __forceinline__ u32 wl_classbit(u64 mag, u64 expmask, u64 qbit, bool neg) {
  u64 e = mag & expmask;
  if (e == expmask) {
    if (mag == expmask) return neg ? 2u : 9u;
    return (mag & qbit) ? 1u : 0u;
  }
  if (mag == 0ull) return neg ? 5u : 6u;
  if (e == 0ull) return neg ? 4u : 7u;
  return neg ? 3u : 8u;
}
__device__ __forceinline__ u32 wl_isclass(f32 x, u32 m) {
  u32 u = __float_as_uint(x);
  return (m >> wl_classbit(u & 0x7fffffffu, 0x7f800000u, 1u << 22, u >> 31)) & 1u;
}
__device__ __forceinline__ u32 wl_isclass(f64 x, u32 m) {
  u64 u = (u64)__double_as_longlong(x);
  return (m >> wl_classbit(u & 0x7fffffffffffffffull, 0x7ff0000000000000ull, 1ull << 51, u >> 63)) & 1u;
}
__device__ __forceinline__ u32 wl_isclass(f16 x, u32 m) {
  return (m >> wl_classbit(x.b & 0x7fffu, 0x7c00u, 1u << 9, x.b >> 15)) & 1u;
}

/* ------------------------------------------------------- float -> int (trunc, NaN 0, saturate) */
template <class T> __device__ __forceinline__ T wl_f2i(f64 y, f64 lo, f64 hi) {
  y = trunc(y);
  y = (y != y) ? 0.0 : ((y <= lo) ? lo : ((y >= hi) ? hi : y));
  return (T)y;
}
/* the same from f32 (and f16) into 32 bits or fewer, without widening (twice the lanes per vector
   on the host): ``top`` = hi + 1, a power of two, so x >= top saturates exactly where trunc(x) >= hi
   does (no f32 lies in (top - 1, top)); below it, x <= lo gives lo and (T)x truncates in range */
template <class T> __device__ __forceinline__ T wl_f2i(f32 x, f32 lo, f32 top, T hi) {
  return (x != x) ? (T)0 : ((x >= top) ? hi : ((x <= lo) ? (T)lo : (T)x));
}
__device__ __forceinline__ u64 wl_f2u64(f64 y) {
  y = trunc(y); if (y != y || y <= 0.0) return 0ull;
  if (y >= 18446744073709551616.0) return 0xffffffffffffffffull; return (u64)y;
}
__device__ __forceinline__ i64 wl_f2i64(f64 y) {
  y = trunc(y); if (y != y) return 0ll;
  if (y >= 9223372036854775808.0) return 0x7fffffffffffffffll;
  if (y <= -9223372036854775808.0) return (i64)0x8000000000000000ull; return (i64)y;
}

/* --------------------------------------------------------------------- integers */
/* n / d for the divisor's (m, shifts) from codegen.div_magic */
__device__ __forceinline__ u32 wl_udiv(u32 n, u32 m, u32 sh) {
  const u32 t = __umulhi(n, m); return (t + ((n - t) >> (sh & 255u))) >> (sh >> 8);
}
/* (u64)a + (u64)b, the carry made by a compare (codegen: the add of two widened u32) */
__device__ __forceinline__ u64 wl_addc(u32 a, u32 b) { const u32 s = a + b; return (u64)s | ((u64)(s < a) << 32); }
__device__ __forceinline__ i32 wl_clz32(u32 x, u32 bits) { return x == 0u ? -1 : (i32)__clz(x) - (i32)(32u - bits); }
__device__ __forceinline__ i32 wl_clz64(u64 x) { return x == 0ull ? -1 : (i32)__clzll((i64)x); }
__device__ __forceinline__ i32 wl_ctz32(u32 x) { return __ffs((i32)x) - 1; }
__device__ __forceinline__ i32 wl_ctz64(u64 x) { return __ffsll((i64)x) - 1; }
/* guest addresses (docs/decisions/0014-addresses.md), for the CUDA kernel and the native tier:
   an address a program computes reaches a window only when it is canonical (bits 63:48 copy
   bit 47), and nb bytes at a lie in [s, e) (e >= s) only when every byte does -- tested so that
   no term wraps (a - s is taken only when a >= s; nb > e - s fails) */
__device__ __forceinline__ bool wl_is_canon(u64 a) { return (u64)((i64)(a << 16) >> 16) == a; }
__device__ __forceinline__ bool wl_inside(u64 a, u32 nb, u64 s, u64 e) {
  return a >= s && a - s < e - s && (u64)nb <= (e - s) - (a - s);
}

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
"""

ATOMIC_OPS = {"add": 0, "sub": 1, "swap": 2, "cmpswap": 3, "and": 4, "or": 5, "xor": 6,
              "umin": 7, "umax": 8, "smin": 9, "smax": 10, "inc": 11, "dec": 12}


def trig_preop_source() -> str:
    """V_TRIG_PREOP_F64 (helpers.trig_preop), added to a module only when it uses the op: the
    first 1201 fraction bits of 2/pi as a table (numbers only), the 53-bit window at
    ``53*seg[4:0] + max(exponent(x) - 1077, 0)`` and its scaling by 2^(-53-shift) (+128 when
    exponent(x) >= 1968), rounded once as np.ldexp rounds (to nearest even; subnormals exact)."""
    from ..numpy.helpers import _two_over_pi_bits
    t = _two_over_pi_bits()
    nw = (1201 + 31) // 32
    words = ", ".join(f"{(t >> (32 * k)) & 0xFFFFFFFF:#x}u" for k in range(nw))
    return (f"__device__ const u32 WL_2OPI[{nw}] = {{{words}}};\n" + r"""
__device__ __forceinline__ u32 wl_2opi(i32 k) { return (k >= 0 && k < (i32)(sizeof(WL_2OPI) / 4)) ? WL_2OPI[k] : 0u; }
/* bits [lo, lo + 64) of floor(2/pi * 2^1201) (zero below bit 0) */
__device__ __forceinline__ u64 wl_2opi_bits(i32 lo) {
  if (lo <= -64) return 0ull;
  const i32 base = (lo >= 0) ? (lo >> 5) : -((31 - lo) >> 5);
  const u32 r = (u32)(lo - base * 32);
  const u64 w = (u64)wl_2opi(base) | ((u64)wl_2opi(base + 1) << 32);
  return r ? ((w >> r) | ((u64)wl_2opi(base + 2) << (64u - r))) : w;
}
__device__ __noinline__ f64 wl_trig_preop(f64 x, u32 seg) {
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
""")
