#!/bin/bash
# Session 55: one part of the prepared fixture check (gpu_check --split-prepared devjobs/gc --parts 4;
# carry devjobs/gc/part-I-of-4): bash bench/device_jobs/session55_part.sh I [SECONDS]
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
P=devjobs/gc/part-$1-of-4; T=${2:-500}
nvidia-smi --query-gpu=name --format=csv,noheader
timeout $((T + 40)) python3 bench/gpu_check.py --prepared $P --skip-bench --time-limit $T > $OUT/gpu_check_part$1.txt 2>&1
echo "gpu_check rc $?"
grep -vE "^\s+\[[0-9]+/" $OUT/gpu_check_part$1.txt | tail -20 | cut -c1-300
grep -E "DIFFERENT" $OUT/gpu_check_part$1.txt | head -10 | cut -c1-300
