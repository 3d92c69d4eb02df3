#include <cmath>
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
