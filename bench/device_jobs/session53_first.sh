#!/bin/bash
# Session 53's first GPU call (~9.5 minutes).  Session 52's defaults (HOIST=induction, OCCUPANCY_FULL=on,
# MAPFILL=store, a full queue's oldest half read) ran only 55 CUDA GPU tests before its call's limit
# (none failed) and no gpu_check row: 1. every CUDA GPU test (4 processes: NVRTC builds in parallel);
# 2. the in-place pass's GPU operations one by one under ncu (vadd 2^26: ~0.35 ms a pass beyond its
# kernel; shade: ~27 us a pass) -- what to cut next; 3. the in-place gpu_check rows for the time left.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 280 python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 4 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED|Error" $OUT/cuda_tests.txt | tail -8
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for w in vadd shade; do
  timeout 70 $NCU --profile-from-start off --graph-profiling node --metrics gpu__time_duration.sum \
      python3 bench/device_jobs/inplace_nodes.py $w 3 > $OUT/nodes_$w.txt 2>&1
  echo "ncu $w rc $?"; grep -E "^  [a-z_A-Z]|gpu__time_duration|a launch" $OUT/nodes_$w.txt | head -40
done
L=$((585 - SECONDS))
if [ $L -gt 90 ]; then
  timeout $L python bench/gpu_check.py --skip-bench --time-limit $((L - 30)) \
      --only gfx1030/aco/,radv-llvm,captures > $OUT/gpu_check.txt 2>&1
  echo "gpu_check rc $?"; grep -E "fixtures:|errors:|DIFFERENT" $OUT/gpu_check.txt | tail -8
fi
