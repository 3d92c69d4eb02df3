"""The CUDA prelude's semantics compiled for the host CPU: one shim, used by the NumPy backend's
native tier (backends/numpy/native.py) and by the host-side checks of the CUDA lowering
(tests/cuda/test_cuda_*_host.py).

The shim maps CUDA's intrinsics onto host C++ with the same IEEE results (``__fadd_rn`` is a
plain add: host SSE arithmetic rounds to nearest even and keeps denormals; ``__fmaf_rn`` is
``fmaf``, one rounding).  Compile with ``-ffp-contract=off`` so nothing is contracted behind our
back (``COMPILE_FLAGS``).
"""
from __future__ import annotations

import shutil

from .. import settings

HOST_SHIM = r"""#include <cmath>
#include <cstring>
#include <cstdint>
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __global__
using std::isfinite; using std::isinf; using std::signbit;
static inline float __uint_as_float(unsigned u){float f;memcpy(&f,&u,4);return f;}
static inline unsigned __umulhi(unsigned a, unsigned b){return (unsigned)(((unsigned long long)a*b)>>32);}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s){return (unsigned)((((unsigned long long)hi<<32)|lo)>>(s&31u));}
static inline unsigned __float_as_uint(float f){unsigned u;memcpy(&u,&f,4);return u;}
static inline double __longlong_as_double(long long u){double f;memcpy(&f,&u,8);return f;}
static inline long long __double_as_longlong(double f){long long u;memcpy(&u,&f,8);return u;}
#define __fadd_rn(a,b) ((float)(a)+(float)(b))
#define __fsub_rn(a,b) ((float)(a)-(float)(b))
#define __fmul_rn(a,b) ((float)(a)*(float)(b))
#define __fdiv_rn(a,b) ((float)(a)/(float)(b))
#define __dadd_rn(a,b) ((double)(a)+(double)(b))
#define __dsub_rn(a,b) ((double)(a)-(double)(b))
#define __dmul_rn(a,b) ((double)(a)*(double)(b))
#define __ddiv_rn(a,b) ((double)(a)/(double)(b))
#define __fmaf_rn fmaf
#define __fma_rn fma
#define __fsqrt_rn sqrtf
#define __dsqrt_rn sqrt
#define __drcp_rn(x) (1.0/(x))
static inline int __clzll(long long x){return x?__builtin_clzll((unsigned long long)x):64;}
static inline int __clz(int x){return x?__builtin_clz((unsigned)x):32;}
static inline int __ffs(int x){return __builtin_ffs(x);}
static inline int __ffsll(long long x){return __builtin_ffsll(x);}
template<class T> T __ldg(const T* p){return *p;}
template<class T, class U> T atomicCAS(T* p, T c, U v){T o=*p; if(o==c)*p=(T)v; return o;}
static inline int __popc(unsigned x){return __builtin_popcount(x);}
static inline int __popcll(unsigned long long x){return __builtin_popcountll(x);}
static inline unsigned __brev(unsigned x){unsigned r=0;for(int i=0;i<32;i++){r=(r<<1)|(x&1u);x>>=1;}return r;}
static inline unsigned long long __brevll(unsigned long long x){unsigned long long r=0;for(int i=0;i<64;i++){r=(r<<1)|(x&1ull);x>>=1;}return r;}
static inline long long __mul64hi(long long a, long long b){return (long long)(((__int128)a*b)>>64);}
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b){return (unsigned long long)(((unsigned __int128)a*b)>>64);}
"""

# exact float semantics: no contraction, no fast-math; errno off only lets sqrt inline
COMPILE_FLAGS = ("-std=c++17", "-ffp-contract=off", "-fno-math-errno", "-w", "-shared", "-fPIC")


def prelude_semantics() -> str:
    """The shim, then the CUDA prelude's types and value-op semantics (f16 ... integers)."""
    from .cuda.prelude import PRELUDE, trig_preop_source
    head = PRELUDE[:PRELUDE.index("/* wave64:")]
    body = PRELUDE[PRELUDE.index("/* ---------------------------------------------------------------- f16 <-> f32/f64"):
                   PRELUDE.index("/* ----------------------------------------------------------------------- windows */")]
    return HOST_SHIM + head + body + trig_preop_source()


def compiler() -> str | None:
    """The host C++ compiler: $WAVELIFT_CXX, else clang++-19, clang++, g++ or c++ (None: none found).
    clang first: it vectorises the native tier's fused lane loops, GCC 12 mostly does not
    (docs/decisions/0012-native-tier.md)."""
    env = settings.get("WAVELIFT_CXX")
    if env:
        return shutil.which(env)
    for c in ("clang++-19", "clang++", "g++", "c++"):
        p = shutil.which(c)
        if p:
            return p
    return None
