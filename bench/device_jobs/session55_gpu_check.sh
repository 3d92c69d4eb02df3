#!/bin/bash
# Session 55: the full fixture check in one GPU call on main's defaults (the lean build and h165's
# queue reads included): the CPU half prepared on the 2-core machine with NVRTC 13.0
# (bench/README "gpu_check.py -- a full fixture check in one GPU call"), carried in devjobs/gc.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 560 python3 bench/gpu_check.py --prepared devjobs/gc --skip-bench --time-limit 530 > $OUT/gpu_check.txt 2>&1
echo "gpu_check rc $?"
grep -vE "^\s+\[[0-9]+/" $OUT/gpu_check.txt | tail -40
grep -cE " (equal|race-ok) " $OUT/gpu_check.txt; grep -E "DIFFERENT|ERROR" $OUT/gpu_check.txt | head -20
