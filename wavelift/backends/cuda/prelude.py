"""The fixed CUDA C++ text every module starts with: types, float semantics, memory helpers.

The C-family prelude (backends/cfamily: the types and the value ops' semantics, shared with the
host's native tier) with CUDA's qualifiers, plus the kernel's own parts as header files next to
this module: ``wave64.h`` (the cross-warp vote) and ``memory.h`` (windows, atomics, scratch).
Fixed text only (no guest bytes): the generated part of a module adds numbers and names made
from numbers.  Compiled with --fmad=false -ftz=false -prec-div=true -prec-sqrt=true so that
nothing is contracted or flushed behind our back.
"""

from __future__ import annotations

from ..cfamily import prelude as cf

# the cfamily qualifiers: every semantics function inlined into the kernel; trig_preop's table
# in global memory and its function a call (one copy per compiled unit: internal linkage, so
# that the units of a split build link)
QUALIFIERS = (
    "#define WL_DEVICE __device__ __forceinline__\n"
    "#define WL_NOINLINE static __device__ __noinline__\n"
    "#define WL_TABLE static __device__\n"
)

PRELUDE = (
    "\n"
    + QUALIFIERS
    + cf.types()
    + "\n"
    + cf.header("wave64.h", __package__)
    + "\n"
    + cf.semantics()
    + "\n"
    + cf.header("memory.h", __package__)
)

ATOMIC_OPS = {
    "add": 0,
    "sub": 1,
    "swap": 2,
    "cmpswap": 3,
    "and": 4,
    "or": 5,
    "xor": 6,
    "umin": 7,
    "umax": 8,
    "smin": 9,
    "smax": 10,
    "inc": 11,
    "dec": 12,
}
