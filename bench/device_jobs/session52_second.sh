#!/bin/bash
# Session 52's second GPU call (~9.5 minutes): 1. every CUDA GPU test (h152's count slots, h153's
# folded GPU test scaffolding -- none of which ran on a GPU in session 51 -- and everything else);
# 2. the in-place gpu_check's rows sessions 50-51 did not reach (part of gfx1030's ACO rows,
# RADV-LLVM's and the captures').
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 240 python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 0 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED" $OUT/cuda_tests.txt | tail -8
# where a stream of resident shade passes waits (session 52: stream 54 us a pass = host + kernel?)
timeout 90 python3 bench/device_jobs/stream_profile.py 50 > $OUT/stream_profile.txt 2>&1
echo "stream_profile rc $?"; grep -E "^round|nsys" $OUT/stream_profile.txt
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  timeout 120 $NSYS profile --trace=cuda --sample=none --cpuctxsw=none -o /tmp/sp -f true \
      python3 bench/device_jobs/stream_profile.py 20 > /dev/null 2>&1
  timeout 60 $NSYS stats -q --report cuda_gpu_kern_sum,cuda_api_sum --format table /tmp/sp.nsys-rep > $OUT/nsys.txt 2>&1
  timeout 40 $NSYS stats -q --report cuda_gpu_trace /tmp/sp.nsys-rep 2>&1 | tail -80 >> $OUT/nsys.txt
fi
L=$((570 - SECONDS)); timeout $L python bench/gpu_check.py --skip-bench --time-limit $((L - 40)) \
    --only gfx1030/aco/,radv-llvm,captures > $OUT/gpu_check.txt 2>&1
echo "gpu_check rc $?"; grep -E "fixtures:|errors:" $OUT/gpu_check.txt
