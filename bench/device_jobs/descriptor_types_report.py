"""(bench/device_jobs, decision 0049's amendment h128): gfx1030/gfx1010 ACO descriptor_types through bench/gpu_check.py (its
workers precompile each module into a fresh disk cache; its main process runs the GPU half),
printing every flagged report the CUDA runtime reads: the status words, the refuse_if table of
the module's program (the host's names) and the refuse_if sites its launched source numbers.

H128_MODE=new: the tree's test_cuda_backend.translate_dispatch (execute.program_for since h128).
H128_MODE=old: the workers translate as before h128 (no GB_ADDR_CONFIG, no border colour base),
so the disk cache holds, under the dispatch's module key, the source of another program (78
refuse_if ops against the 75 of the program execute_dispatch runs): session 47's bad report.
Run with WAVELIFT_CUDA_TIER=off: the workers' optimising build is then on the disk before the GPU
half looks (with the fast tier it is a race: the GPU half generates from its own program when the
background build has not landed yet -- session 46's pass)."""

import os
import re
import sys

sys.path.insert(0, "bench")
sys.path.insert(0, "tests/cuda")
sys.path.insert(0, ".")
import fixture_dispatches as F  # noqa: E402
import numpy as np  # noqa: E402
import test_cuda_backend  # noqa: E402

# (top level: gpu_check's spawned workers import this module as __mp_main__ and patch too)
if os.environ.get("H128_MODE") == "old":

    def old_translate(memory, config):
        from wavelift.frontend.program import translate
        from wavelift.run import execute as X

        r = X._program_bytes(memory, config)
        code, base, entry = r if isinstance(r, tuple) else (r, config.program_address, 0)
        kw = {"scratch_abi": X._scratch_abi(config)}
        if entry:
            kw["entry"] = entry
        prog = translate(code, config.target, config.wave_size, base, **kw)
        # (before h129 a program had no record of its inputs: execute.translation_parts's
        # guard would refuse this one at its module key, which is the point of the guard)
        prog.made_with = None
        return prog, base

    test_cuda_backend.translate_dispatch = old_translate

import wavelift.backends.cuda.runtime as R  # noqa: E402
from wavelift.backends.cuda import codegen as G  # noqa: E402

_orig = R.Runtime._raise_flags
_SITE = re.compile(r"wl_flag\(C, WL_REFUSE, (\d+)u, (\d+)u")


def _spy(self, status):
    st = [int(x) for x in np.asarray(status).ravel()]
    if st and st[0]:
        m = self.m
        sites = _SITE.findall(m.source or "")
        print(
            "H128 status",
            [hex(x) for x in st[:8]],
            "map_bits",
            m.map_bits,
            "built",
            m.compiled_by,
            "program refuse_ifs",
            len(G.refusal_table(m.program)),
            "source refuse sites",
            len(sites),
            "instructions",
            len(m.program.instructions),
            flush=True,
        )
    return _orig(self, status)


R.Runtime._raise_flags = _spy

if __name__ == "__main__":
    import gpu_check

    # (only the ACO shaders: the other collections take time and none is asked for)
    F.clang_dispatches = F.clang_target_dispatches = F.capture_dispatches = lambda *a, **k: []
    gpu_check.scratch_test_dispatches = lambda *a, **k: []
    sys.argv = [
        "gpu_check",
        "--only",
        "descriptor_types",
        "--skip-bench",
        "--jobs",
        "3",
        "--time-limit",
        "200",
    ]
    sys.exit(gpu_check.main())
