#!/bin/bash
# Session 55: the fixture check in one GPU call on main's defaults (the lean build and h165's queue
# reads included) -- the CPU half prepared on the 2-core machine with NVRTC 13.0 (bench/README
# "gpu_check.py -- a full fixture check in one GPU call": 710 dispatches, 1243 rows, 0 errors in
# 64 min), carried in devjobs/gc; ~6.5 minutes, what the session's device time had left.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 370 python3 bench/gpu_check.py --prepared devjobs/gc --skip-bench --time-limit 330 > $OUT/gpu_check.txt 2>&1
echo "gpu_check rc $?"
grep -vE "^\s+\[[0-9]+/" $OUT/gpu_check.txt | tail -24 | cut -c1-300
grep -E "DIFFERENT" $OUT/gpu_check.txt | head -10 | cut -c1-300
