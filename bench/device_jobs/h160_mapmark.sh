#!/bin/bash
# h160 (session 53): mapbits.h's group form of bit-map marking (WAVELIFT_CUDA_MAPMARK=group, the default
# on branch h160; decision 0049's amendment h160) against the general form (MAPMARK=general: the kernels
# before), same GPU, one job.  SASS on the CPU: a warp whose stores' lane groups are all fast runs shade
# 262 -> 230, vadd32 188 -> 156 hot-path instructions (bench/results/sass_costs-2026-12-07-s53-h160-mapmark.txt);
# the kernels are issue-bound, so expect shade's and vadd's kernel times down by up to ~10-15 %.
# 1. the device test of the three marking forms (test_gpu_bit_marking_equals_the_byte_map: bit map ==
#    byte map after every store shape, real __shfl_sync / __ballot_sync / __match_any_sync);
# 2. cuda_costs shade,vadd32: base (group) vs markgeneral;
# 3. bench_resident --vadd 2^26 (in place and back to back) under group and general;
# 4. bench_resident --passes 30 (shade 1920x1080 passes) under group and general;
# 5. the CUDA GPU tests that run marking kernels and land their maps (resident, in place, NumPy
#    comparisons), 4 processes, in the time left.
# ~8 minutes; results under $OUT (8 files).
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
grep -q "WL_MARK_GROUP" wavelift/backends/cuda/mapbits.h || { echo "mapbits.h has no group form: merge h160 first" | tee -a "$OUT/device.txt"; exit 1; }
timeout 60 python3 -m pytest -q -m cuda tests/cuda/test_resident_gpu.py -p no:cacheprovider -k bit_marking > "$OUT/marktest.txt" 2>&1
echo "== marking forms on the device: rc $?" | tee -a "$OUT/device.txt"; tail -3 "$OUT/marktest.txt" | tee -a "$OUT/device.txt"
# (cuda_costs writes every module's source and SASS under $OUT when it is set: not wanted here)
env -u OUT timeout 140 python3 bench/cuda_costs.py base,markgeneral shade,vadd32 > "$OUT/cuda_costs.txt" 2>&1
echo "== cuda_costs: rc $?" | tee -a "$OUT/device.txt"; grep -E "^(shade|vadd32):" "$OUT/cuda_costs.txt" | tee -a "$OUT/device.txt"
for m in group general; do
  WAVELIFT_CUDA_MAPMARK=$m env -u OUT timeout 55 python3 bench/bench_resident.py --tiny 0 --passes 0 --vadd 67108864 > "$OUT/vadd_$m.txt" 2>&1
  echo "rc $?" >> "$OUT/vadd_$m.txt"
  echo "== vadd 2^26 MAPMARK=$m"; grep -E "vadd over|ratios|map " "$OUT/vadd_$m.txt" | head -8 | tee -a "$OUT/device.txt"
done
for m in group general; do
  WAVELIFT_CUDA_MAPMARK=$m env -u OUT timeout 55 python3 bench/bench_resident.py --tiny 0 --passes 30 > "$OUT/shade_$m.txt" 2>&1
  echo "rc $?" >> "$OUT/shade_$m.txt"
  echo "== shade passes MAPMARK=$m"; grep -E "shade|ratios|stream" "$OUT/shade_$m.txt" | head -8 | tee -a "$OUT/device.txt"
done
left=$((470 - SECONDS)); [ $left -lt 30 ] && left=30
timeout $left python3 -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 4 \
    -k "marking or resident or in_place or gpu_matches_numpy or written or land" > "$OUT/cuda_tests.txt" 2>&1
echo "== cuda tests (${left} s): rc $?" | tee -a "$OUT/device.txt"; grep -E "passed|failed|FAILED|Error" "$OUT/cuda_tests.txt" | tail -8 | tee -a "$OUT/device.txt"
