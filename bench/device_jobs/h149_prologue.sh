#!/bin/bash
# h149 (session 51): the translated kernels' prologue and loads shortened (decision 0009's
# amendment h149; bench/results/sass-2026-12-07-s51-h149-prologue.txt).  Needs branch h149 merged
# (cuda_costs' pre149 variant).  ~4 minutes; results under $OUT: device.txt, pytest.txt,
# cuda_costs.txt.  Nothing of h149 has run on a GPU: all default-on, all exact by construction:
#   - the group total gx*gy*gz made on the host (P[56..57]), the group index in 32 bits where every
#     slot's fits (P_NARROW baked with the grid's dimensions), threadIdx.x < WL_BLOCK_THREADS
#     assumed (__builtin_assume; the launch's block, which __launch_bounds__ holds it to);
#   - a load's pointer WL_GA[slot] + addr, WL_GA = arena + WL_GO - WL_GB made by the runtime for the
#     device address of the arena or heap launched (the timing repeats' copies get their own).
# 1. pytest: the GPU tests that launch these kernels -- several groups a block and chunked launches
#    (group_base > 0: the 32-bit index), the resident/heap/in-place/kept/deferred sessions (WL_GA
#    for staging arenas and the heap, kept plans that launch without setting constants), and
#    test_cuda_backend's comparisons with NumPy.  Any failure: revert h149's kernel.h/codegen part.
# 2. cuda_costs: base (h149) against pre149 (the same kernel as before h149, by source patches)
#    on shade, vadd32, vadd64, matmul16, collatz (as many as the time allows).  Expect (SASS
#    estimate, per warp): shade 251 -> 234 (-7 %), vadd32 185 -> 163 (-12 %), vadd64 195 -> 172
#    (-12 %); a kernel time ratio base/pre149 below 1 where the kernel is issue-bound (shade: ncu
#    71 % issue), maybe ~1 where memory-bound (vadd).  matmul16: its hot-set proxy went up by 9
#    (the group ids made a second time, on the uniform datapath, in a later block): watch it.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
grep -q '"pre149"' bench/cuda_costs.py || { echo "cuda_costs has no pre149 variant: merge h149 first" | tee -a "$OUT/device.txt"; exit 1; }
{
  timeout 75 python3 -m pytest -q -m cuda -p no:cacheprovider -n 0 -x \
      tests/cuda/test_cuda_groups_per_block.py tests/cuda/test_resident_gpu.py
  echo "rc $?"
  timeout 60 python3 -m pytest -q -m cuda -p no:cacheprovider -n 0 -x tests/cuda/test_cuda_backend.py \
      -k "gpu_matches_numpy or budget_stops"
  echo "rc $?"
} > "$OUT/pytest.txt" 2>&1
tail -n 2 "$OUT/pytest.txt"
# (cuda_costs writes every module's source and SASS under $OUT when it is set: not wanted here)
env -u OUT timeout $((235 - SECONDS)) python3 bench/cuda_costs.py base,pre149 shade,vadd32,vadd64,matmul16,collatz \
    > "$OUT/cuda_costs.txt" 2>&1
echo "rc $?" >> "$OUT/cuda_costs.txt"
cat "$OUT/cuda_costs.txt"
