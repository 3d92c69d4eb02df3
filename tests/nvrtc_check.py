"""The CUDA kernels of translated programs, checked without a GPU: each program's kernel source
generated in lane and wave mode (ASCII, holding no instruction text of the guest: module code
embeds numbers only) and, where NVRTC is installed, compiled for sm_90; a skip after the
generation when NVRTC is not."""

from __future__ import annotations

import pytest


def check_cuda_kernels(programs, wave: int = 32, base: int = 0x1000, holds: str | None = None) -> None:
    """``holds``: a text every kernel source must hold (lower-cased), e.g. the op under test."""
    from wavelift.backends.cuda.codegen import generate, kernel_source
    from wavelift.backends.cuda.compile import check_source, nvrtc_problem

    why = nvrtc_problem()
    for prog in programs:
        texts = {ins.text for ins in prog.instructions if len(ins.text) >= 8}
        for m in ("lane", "wave"):
            src = kernel_source(prog, wave, m, 0, base)
            assert src.isascii() and not [t for t in texts if t in src]
            assert holds is None or holds in src.lower()
            if why is None:
                check_source(generate(prog, wave, m, 0, base)[0], "sm_90")
    if why:
        pytest.skip(f"generated; NVRTC unavailable: {why}")
