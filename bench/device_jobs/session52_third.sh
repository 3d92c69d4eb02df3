#!/bin/bash
# Session 52's third GPU call (~9.5 minutes): the in-place gpu_check's rows sessions 50-51 did not reach
# (part of gfx1030's ACO rows, RADV-LLVM's and the captures'), on session 52's defaults.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
L=$((570 - SECONDS)); timeout $L python bench/gpu_check.py --skip-bench --time-limit $((L - 40)) \
    --only gfx1030/aco/,radv-llvm,captures > $OUT/gpu_check.txt 2>&1
echo "gpu_check rc $?"; grep -E "fixtures:|errors:|DIFFERENT|error" $OUT/gpu_check.txt | tail -12
