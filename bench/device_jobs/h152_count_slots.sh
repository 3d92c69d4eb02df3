#!/bin/bash
# h152 (session 51): WAVELIFT_CUDA_COUNT_SLOTS -- is the end-of-wave count cost (vadd32: base ~18-20 us,
# nostats ~15 us on an H100) same-address contention (65,280 waves onto the report's 512 words)?
# The waves' counts go to N slots (wave % N) of a buffer of their own, folded into the report's 256
# by resident.py's wl_fold after each launch (decision 0009's amendment h152; opt-in, exact).
# Run from the repo root (bench/device_jobs/session52_first.sh runs it first); devjobs/h152.sh calls it.
# <= 4 minutes; results under $OUT (3 files): device.txt, pytest.txt, cuda_costs.txt.
#   pytest: with 1024 / 4096 (+ STATS=block) / 16384 slots, three fixture dispatches (wave32, wave64,
#   LDS + barriers) count NumPy's instructions and the 256-slot build's lane instructions, three
#   runs on one memory each (a slot wl_fold left nonzero would count twice).
#   cuda_costs: base, nostats (unsound: no count atomics, the bound), statsblock, slots1024/4096/16384
#   on vadd32, vadd64, shade; first "wl_fold N slots: x us" (wl_fold alone: the slotsN times include
#   its launch, so subtract it to see the kernel's own).  Read: slotsN near nostats -> contention
#   (keep N, make it the default after a gpu_check); slotsN ~ base -> the atomics' issue cost, not
#   contention (then only fewer atomics help: STATS=block, or counts kept per block/warp).
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
grep -q '"WAVELIFT_CUDA_COUNT_SLOTS"' bench/cuda_costs.py || { echo "cuda_costs has no slotsN variants: merge h152 first" | tee -a "$OUT/device.txt"; exit 1; }
{
  timeout 55 python3 -m pytest -q -m cuda -p no:cacheprovider -n 0 tests/cuda/test_cuda_count_slots_gpu.py
  echo "rc $?"
} > "$OUT/pytest.txt" 2>&1
# (cuda_costs writes every module's source and SASS under $OUT when it is set: not wanted here)
env -u OUT timeout 170 python3 bench/cuda_costs.py base,nostats,statsblock,slots1024,slots4096,slots16384 \
    vadd32,vadd64,shade > "$OUT/cuda_costs.txt" 2>&1
echo "rc $?" >> "$OUT/cuda_costs.txt"
date -u >> "$OUT/device.txt"
