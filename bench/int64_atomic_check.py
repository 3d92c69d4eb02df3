"""64-bit buffer atomics on an NVIDIA machine: the int64_atomic ACO fixtures, NumPy lane mode
against CUDA lane mode (three CUDA runs each), cell by cell:
  g611       gpu_check's dispatch (six groups in x: fixture_dispatches.ONE_D)
  g611-full  the same with full-range 32-bit inputs (negative int64 for smin/smax, cmpswap)
  nrecXXXX   g611-full with the buffers' num_records changed (cells straddling the bound)
Slot k % 16 of the output names the shader statement (tests/fixtures/glsl/int64_atomic.comp).
"""

import copy
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "cuda"))
from fixture_dispatches import aco_dispatches  # noqa: E402

from wavelift.run.execute import execute_dispatch  # noqa: E402


def out_buf(mem):
    return next(x for x in mem if x.name == "buffer4")


def variants():
    for n, mem, cfg in aco_dispatches():
        if "int64_atomic" not in n:
            continue
        yield f"{n} g611", copy.deepcopy(mem), cfg
        rng = np.random.default_rng(11)
        for nm in ("buffer1", "buffer2", "buffer4"):
            x = next(b for b in mem if b.name == nm)
            mem.write(x.base, rng.integers(0, 1 << 32, 1024, dtype=np.uint64).astype(np.uint32))
        yield f"{n} g611-full", copy.deepcopy(mem), cfg
        ds = next(b for b in mem if "set0" in (b.name or ""))
        for nrec in (4092, 4088, 2052, 100):
            m = copy.deepcopy(mem)
            for k in range(4):
                m.write(ds.base + 16 * k + 8, np.array([nrec], np.uint32))
            yield f"{n} nrec{nrec}", m, cfg


def main():
    bad = 0
    for name, mem, cfg in variants():
        res, cache = {}, {}
        for be in ("numpy", "cuda", "cuda2", "cuda3"):
            m = copy.deepcopy(mem)
            r = execute_dispatch(
                m, cfg, backend=be.rstrip("23"), mode="lane", cache=cache if be != "numpy" else None
            )
            res[be] = (
                r.refusal,
                r.stats.get("escapes"),
                np.frombuffer(bytes(out_buf(m).data), np.uint64).copy(),
                sorted(r.write_spans or []),
            )
        a = res["numpy"]
        for be in ("cuda", "cuda2", "cuda3"):
            b = res[be]
            dif = np.flatnonzero(a[2] != b[2])
            slots = sorted(set((dif % 16).tolist()))
            same = str(a[0]) == str(b[0]) and a[1] == b[1] and a[3] == b[3]
            ok = same and dif.size == 0
            bad += not ok
            print(
                f"{'ok ' if ok else 'BAD'} {name:45s} {be}: refusal {a[0]}|{b[0]} esc {a[1]}|{b[1]} "
                f"spans_equal {a[3] == b[3]} cells_differ {dif.size} slots {slots} lanes {sorted(set((dif // 16).tolist()))[:12]}"
            )
            if dif.size and not ok:
                for k in dif[:6]:
                    print(f"      cell {k}: numpy {int(a[2][k]):#x} cuda {int(b[2][k]):#x}")
    print("BAD count", bad)


if __name__ == "__main__":
    main()
