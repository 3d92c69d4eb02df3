#!/bin/bash
# Session 51's first GPU call (~9 minutes): session 50 made the heap and in place the defaults
# (0049's session-50 amendment) and merged h145/h147's host-path changes after its last GPU run.
# 1. the CUDA tests with the defaults (nothing has run them on a GPU yet), 2. h147's host-path
# bench (tiny launches and shade's pass stream, this tree against 9e3c2ff), 3. the rest of the
# in-place gpu_check (the 40 fixture rows session 50's call did not reach: run it whole, the
# scratch dispatches from devjobs/scratch.pkl.gz if it is there; else record it on the CPU
# machine first: python bench/gpu_check.py --skip-bench --scratch-dispatches devjobs/scratch.pkl.gz).
# Then, in later calls: bench/device_jobs/h146_hot_path.sh (if h146 merged) and
# bench/device_jobs/h143_occupancy_auto.sh.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 0 -x -q > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; tail -3 $OUT/cuda_tests.txt
rm -rf /tmp/host && OUT=/tmp/host bash bench/device_jobs/h147_host_path.sh > /dev/null 2>&1
cat /tmp/host/device.txt /tmp/host/after1.txt /tmp/host/before.txt /tmp/host/after2.txt /tmp/host/tests.txt > $OUT/host_path.txt 2>&1
grep -E "us per launch|a pass" $OUT/host_path.txt | head -8
SD=""; [ -f devjobs/scratch.pkl.gz ] && SD="--scratch-dispatches devjobs/scratch.pkl.gz"
timeout $((590 - SECONDS)) python bench/gpu_check.py --skip-bench --time-limit $((520 - SECONDS)) $SD > $OUT/gpu_check.txt 2>&1
echo "gpu_check rc $?"; grep -E "fixtures:|errors:|DIFFERENT" $OUT/gpu_check.txt | head
