"""The host C++ compiler and the C-family prelude on the host: the NumPy backend's native tier
(backends/native/) compiles with them, and so do the host-side checks of the CUDA
lowering (tests/cuda/test_cuda_*_host.py).

The prelude is cfamily's (``cfamily/host.h`` maps CUDA's intrinsics onto host C++ with the same
IEEE results).  Compile with ``-ffp-contract=off`` so nothing is contracted behind our back
(``COMPILE_FLAGS``).
"""

from __future__ import annotations

import shutil

from .. import settings
from .cfamily import prelude as cf

# CUDA's qualifiers as nothing: CUDA-only text (the kernel's memory code, a lowered block) compiled
# on the host by the CUDA host checks; the native tier's own text never uses them
CUDA_KEYWORDS = """#define __device__
#define __forceinline__ inline
#define __noinline__
#define __global__
"""
# CUDA text on the host: its keywords, then the host's definitions of its intrinsics
HOST_SHIM = CUDA_KEYWORDS + cf.host()

# exact float semantics: no contraction, no fast-math; errno off only lets sqrt inline
COMPILE_FLAGS = ("-std=c++17", "-ffp-contract=off", "-fno-math-errno", "-w", "-shared", "-fPIC")


def prelude_semantics() -> str:
    """The C-family prelude for the host: its definitions, the types, the value ops' semantics
    (f16 ... integers, address checks) and trig_preop."""
    return cf.host() + cf.types() + cf.semantics() + cf.trig_preop_source()


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
