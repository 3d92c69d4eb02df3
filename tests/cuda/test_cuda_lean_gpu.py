"""WAVELIFT_CUDA_F2I=cvt (decision 0009's amendment h146): an f32 -> u32 / i32 conversion as one
cvt.rzi gives cfamily's wl_f2i result -- the form the host tests hold to NumPy
(test_cuda_ops_host.py) -- for every one of the 2^32 f32 bit patterns, on the device.  Skips
without CuPy or a device."""

from __future__ import annotations

import pytest

from wavelift.backends.cuda import _gpu_problem

pytestmark = pytest.mark.cuda

KERNEL = r"""
extern "C" __global__ void f2i_all(unsigned long long* bad, unsigned* first) {
  for (u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x; i < (1ull << 32); i += (u64)gridDim.x * blockDim.x) {
    const f32 x = __uint_as_float((u32)i);
    const u32 u0 = UREF, u1 = UNEW;
    const i32 s0 = SREF, s1 = SNEW;
    if (u0 != u1) { if (atomicAdd(bad, 1ull) == 0ull) first[0] = (u32)i; }
    if (s0 != s1) { if (atomicAdd(bad + 1, 1ull) == 0ull) first[1] = (u32)i; }
  }
}
"""


def test_cvt_rzi_is_wl_f2i_for_every_f32():
    why = _gpu_problem()
    if why:
        pytest.skip(f"no CUDA device: {why}")
    import cupy as cp

    from wavelift.backends.cfamily.lowering import ValueLowering
    from wavelift.backends.cuda.codegen import f2i_rzi
    from wavelift.backends.cuda.compile import OPTIONS
    from wavelift.backends.cuda.prelude import PRELUDE

    ref = ValueLowering()
    src = PRELUDE + KERNEL
    for k, frm_to in (("UREF", "u32"), ("SREF", "i32")):
        src = src.replace(k, ref.cvt("f32", frm_to, "x"))
    src = src.replace("UNEW", f2i_rzi("f32", "u32", "x")).replace("SNEW", f2i_rzi("f32", "i32", "x"))
    assert "wl_f2i<u32>" in src and "__float2uint_rz" in src and "__float2int_rz" in src
    fn = cp.RawKernel(src, "f2i_all", options=OPTIONS)
    bad, first = cp.zeros(2, cp.uint64), cp.zeros(2, cp.uint32)
    fn((4096,), (256,), (bad, first))
    b, f = bad.get(), first.get()
    assert b[0] == 0, f"u32: {int(b[0])} differ, first bits {int(f[0]):#010x}"
    assert b[1] == 0, f"i32: {int(b[1])} differ, first bits {int(f[1]):#010x}"
