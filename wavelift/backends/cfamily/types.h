/* wavelift C-family prelude, part 1: the IR's type names as C types, and the status words'
   flags.  Shared by the CUDA kernel and the host's native tier (cfamily/prelude.py). */
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
