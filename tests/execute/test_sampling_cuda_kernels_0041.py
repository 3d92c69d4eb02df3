"""The CUDA backend's kernels of decision 0041's ACO shaders (border colours through
BC_SWIZZLE, tfe, image_get_lod of 3-D images, cube samples with derivatives) are generated in
both modes and compile with NVRTC (sm_90), as test_sampling_lod_lavapipe's get_lod kernels do;
the programs' results are checked on NumPy blocks and the native tier by the lavapipe tests."""

from __future__ import annotations

import pytest
from nvrtc_check import check_cuda_kernels
from testpaths import ROOT

FIX = ROOT / "tests/fixtures/glsl/sampling"


@pytest.mark.parametrize("name", ["border-w32", "sparse-w32", "cubegrad-w32", "lodnd-3d-w32"])
def test_cuda_kernels_of_the_0041_shaders_compile(name):
    from wavelift.frontend.program import translate

    check_cuda_kernels([translate((FIX / f"{name}.bin").read_bytes(), "gfx1030", 32, 0x1000)])
