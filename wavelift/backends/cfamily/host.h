/* wavelift C-family prelude on the host CPU (the NumPy backend's native tier): CUDA's
   intrinsics that cfamily/prelude.h and the value lowering use, as host C++ with the same IEEE
   results (__fadd_rn is a plain add: host SSE arithmetic rounds to nearest even and keeps
   denormals; __fmaf_rn is fmaf, one rounding).  Compile with -ffp-contract=off so nothing is
   contracted behind our back (backends/host.py COMPILE_FLAGS). */
#include <cmath>
#include <cstring>
#include <cstdint>
/* the target's function and table qualifiers (cfamily/prelude.h) */
#define WL_DEVICE static inline
#define WL_NOINLINE static __attribute__((noinline))
#define WL_TABLE static
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
#ifdef WL_GPU_NANS
/* Tests only (tests/conformance): every f32 intrinsic and libm call the prelude makes returns a
   NaN as an NVIDIA GPU does -- the canonical 0x7fffffff, no payload -- so a NaN fix-up the CUDA
   build needs and the host build does not is missed here too, without a GPU.  (f64 arithmetic on
   the GPU keeps payloads; f16 conversions are the prelude's own bit code.) */
static inline float wl_gpu_nan(float r){return r == r ? r : __uint_as_float(0x7fffffffu);}
#undef __fadd_rn
#undef __fsub_rn
#undef __fmul_rn
#undef __fdiv_rn
#undef __fmaf_rn
#undef __fsqrt_rn
#define __fadd_rn(a,b) wl_gpu_nan((float)(a)+(float)(b))
#define __fsub_rn(a,b) wl_gpu_nan((float)(a)-(float)(b))
#define __fmul_rn(a,b) wl_gpu_nan((float)(a)*(float)(b))
#define __fdiv_rn(a,b) wl_gpu_nan((float)(a)/(float)(b))
#define __fmaf_rn(a,b,c) wl_gpu_nan(fmaf(a,b,c))
#define __fsqrt_rn(x) wl_gpu_nan(sqrtf(x))
#define floorf(x) wl_gpu_nan(::floorf(x))
#define ceilf(x) wl_gpu_nan(::ceilf(x))
#define truncf(x) wl_gpu_nan(::truncf(x))
#define rintf(x) wl_gpu_nan(::rintf(x))
#define ldexpf(x,e) wl_gpu_nan(::ldexpf(x,e))
#define frexpf(x,e) wl_gpu_nan(::frexpf(x,e))
#endif
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
