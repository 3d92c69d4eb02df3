#!/bin/bash
# Session 53's first GPU call (~9.8 minutes).  Session 52's defaults (HOIST=induction, OCCUPANCY_FULL=on,
# MAPFILL=store, a full queue's oldest half read, the heap's copies at their guest address mod 256)
# ran only 55 CUDA GPU tests before its call's limit (none failed) and no gpu_check row:
# 1. every CUDA GPU test (4 processes: NVRTC builds in parallel);
# 2. h159's A/B (bench/device_jobs/h159_heap_align.sh): the heap's alignment 16 (before) against 256 --
#    vadd 2^26 in place (expected ~0.98 -> ~0.65-0.72 ms a pass), each in-place graph node under ncu,
#    shade passes.  Then session53_second.sh: the in-place gpu_check rows, the shade graph's nodes.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 250 python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 4 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED|Error" $OUT/cuda_tests.txt | tail -8
mkdir -p $OUT/h159
OUT=$OUT/h159 timeout $((590 - SECONDS)) bash bench/device_jobs/h159_heap_align.sh
