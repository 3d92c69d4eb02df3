"""A/B of bench_sampling.py's pass between two trees on a shared host (decision 0030): in the tree
ROOT (its own bench/bench_sampling.py and wavelift, e.g. a `git archive` of a commit), one cold
dispatch then N warm ones, each printed with its wall time, its process CPU time (every thread's:
the work, which other processes' load does not change) and the native driver's threads; each
result is held to bench_sampling's NumPy reference (one UNORM step).  Run the trees alternately.

    python3 bench/bench_sampling_ab.py ROOT N TAG        # WAVELIFT_THREADS=1: one thread
    BENCH_AB_NATIVE=off python3 bench/bench_sampling_ab.py ROOT N TAG   # NumPy blocks
"""

from __future__ import annotations

import os
import struct
import sys
import time


def main() -> int:
    root, n, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    sys.path[:0] = [root + "/bench", root]
    import bench_sampling as B
    import numpy as np

    import wavelift
    from wavelift.backends import native
    from wavelift.backends.numpy import runtime

    assert wavelift.__file__.startswith(os.path.abspath(root)), wavelift.__file__
    runtime.NATIVE = os.environ.get("BENCH_AB_NATIVE", "on")
    rng = np.random.default_rng(22)
    texels = [rng.integers(0, 256, (th, tw, 4), dtype=np.uint8) for _, tw, th in B.TEX]
    want = B.reference(texels)
    dev = wavelift.Device(B.TARGET, backend="numpy", mode="wave")
    sh = dev.load_aco_shader(str(B.KERNEL) + ".json")
    descs = []
    for i, ((mode_name, tw, th), t) in enumerate(zip(B.TEX, texels, strict=True)):
        pbx = B.pbx_for(mode_name, i)
        off, size = B.offsets(mode_name, tw, th, pbx)
        img = np.zeros(size, np.uint8)
        for c in range(4):
            img[off + c] = t[..., c]
        descs.append(B.tsharp(B.aligned(dev, size, img).address, tw, th, mode_name, pbx))
    rt_pbx = B.pbx_for(B.RT_MODE, 7)
    rt_off, rt_size = B.offsets(B.RT_MODE, B.W, B.H, rt_pbx)
    rt = B.aligned(dev, rt_size)
    rec = sh.prepare(groups=(B.W // 8, B.H // 8, 1), push_constants=struct.pack("<IIff", B.W, B.H, B.A, B.B))
    at = rec.extra["sets"][0]
    binding = {b["binding"]: b for b in sh.sets[0]["bindings"]}
    for k in (0, 1):
        o = at + int(binding[k]["offset"])
        dev.memory.write(o, struct.pack("<8I", *descs[k]))
        dev.memory.write(o + 80, struct.pack("<4I", *B.sampler()))
    rt_t = B.tsharp(rt.address, B.W, B.H, B.RT_MODE, rt_pbx)
    dev.memory.write(at + int(binding[2]["offset"]), struct.pack("<8I", *rt_t))
    for i in range(1 + n):
        dev.memory.write(rt.address, bytes(rt_size))
        t0, c0 = time.perf_counter(), time.process_time()
        _dw, r = dev.submit_dispatch(rec.registers, rec.dims, rec.initiator)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        got = np.frombuffer(bytes(dev.memory.read(rt.address, rt_size)), np.uint8)
        img = np.stack([got[rt_off + c] for c in range(4)], axis=-1)
        d = np.abs(img.astype(np.int16) - want.astype(np.int16)).max(axis=-1)
        assert r.landed and d.max() <= 1, (r.refusal, int(d.max()))
        if i == 0:
            native.wait_for_compiles()
        print(
            f"{tag} {'cold' if i == 0 else 'warm'} wall {wall:.3f} s cpu {cpu:.3f} s "
            f"threads {(r.stats or {}).get('native_threads')} load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
