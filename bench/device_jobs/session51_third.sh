#!/bin/bash
# Session 51's third GPU call (~9.5 minutes), after h148 (WAVELIFT_CUDA_PROVED=lean, opt-in) and
# h149 (default-on prologue and load-pointer cuts) merged: 1. every CUDA GPU test (h148's lean
# in-place tests, h149's kernels under groups per block, resident, heap, in place, kept, deferred);
# any failure in h149's part: revert its kernel.h / codegen.py changes; 2. cuda_costs base (h149)
# against pre149 (the kernel before h149) and h148's proved / noretest on shade, vadd32, vadd64;
# 3. the fixture gpu_check on the rows that hold most of what h149 changed, as time allows.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader; git log --oneline -1
timeout 230 python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 0 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED" $OUT/cuda_tests.txt | tail -8
env -u OUT timeout 170 python3 bench/cuda_costs.py base,pre149,proved,noretest shade,vadd32,vadd64 > $OUT/cuda_costs.txt 2>&1
echo "cuda_costs rc $?"; grep -E "us \(" $OUT/cuda_costs.txt
L=$((560 - SECONDS)); [ $L -gt 40 ] && timeout $L python bench/gpu_check.py --skip-bench --time-limit $((L - 30)) \
    --only gfx1030/basic-O2,gfx1030/math-O2,gfx1100/basic-O2,captures/radv-fullscreen > $OUT/gpu_check.txt 2>&1
echo "gpu_check rc $?"; grep -E "^   " $OUT/gpu_check.txt | awk '{print $5}' | sort | uniq -c
