#!/bin/bash
# Session 53's second GPU call (~9.8 minutes): the shade pass's in-place graph nodes under ncu (a stream is
# GPU-bound at ~50 us a pass for a 23 us kernel, session 52), then the in-place gpu_check's rows not
# reached in sessions 50-52 (part of gfx1030's ACO rows, RADV-LLVM's, the captures').
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 70 $NCU --profile-from-start off --graph-profiling node --metrics gpu__time_duration.sum \
    python3 bench/device_jobs/inplace_nodes.py shade 3 > $OUT/nodes_shade.txt 2>&1
echo "ncu shade rc $?"; grep -E "^  [a-z_A-Z]|gpu__time_duration|a launch" $OUT/nodes_shade.txt | head -40
L=$((585 - SECONDS))
timeout $L python bench/gpu_check.py --skip-bench --time-limit $((L - 30)) \
    --only gfx1030/aco/,radv-llvm,captures > $OUT/gpu_check.txt 2>&1
echo "gpu_check rc $?"; grep -E "fixtures:|errors:|DIFFERENT" $OUT/gpu_check.txt | tail -8
