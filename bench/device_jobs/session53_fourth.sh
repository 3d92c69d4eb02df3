#!/bin/bash
# Session 53's fourth GPU call (~8 minutes), main with session 53's defaults (MAPMARK=group, h161's map
# kernels, STATS=auto: block for wave32 kernels that may, else pair): 1. every CUDA GPU test (4 processes);
# 2. cuda_costs base (auto) against statswave (the per-wave counts before); 3. gpu_check rows for the time
# left (clang's basic/math fixtures, ACO's full-screen and blur, the full-screen capture: the stats and
# marking forms on real compiler output).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 260 python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 4 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED|Error" $OUT/cuda_tests.txt | tail -12
env -u OUT timeout 80 python3 bench/cuda_costs.py base,statswave vadd32,vadd64,shade > $OUT/cuda_costs.txt 2>&1
echo "cuda_costs rc $?"; grep -E "^(shade|vadd32|vadd64):" $OUT/cuda_costs.txt
L=$((470 - SECONDS))
if [ $L -gt 60 ]; then
  SD=""; [ -f devjobs/scratch.pkl.gz ] && SD="--scratch-dispatches devjobs/scratch.pkl.gz"  # (no pytest run of them)
  timeout $L python bench/gpu_check.py --skip-bench $SD --time-limit $((L - 25)) \
      --only gfx1030/basic-O2,gfx1030/math-O2,gfx1030/aco/fullscreen,gfx1030/aco/image_blur,captures/radv-fullscreen \
      > $OUT/gpu_check.txt 2>&1
  echo "gpu_check rc $?"; grep -E "fixtures:|errors:|DIFFERENT" $OUT/gpu_check.txt | tail -8
fi
