#!/bin/bash
# Session 56's planned GPU call (~9.5 min; it never got a machine -- session56_short.sh, its first
# part, ran): run it first in session 57, with the own build's kept-launch rule (Resident.may_store)
# in the tree, which came after that run.
# 1. session56_short.sh: the shade and stencil5 streams' launch calls and kept launches
#    (stream_threads.py), bench_resident's tiny launches and full-screen passes;
# 2. bench_resident's vadd over 2^26 floats (30 passes);
# 3. every CUDA GPU test file (4 processes; session 56 ran five of them).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
bash bench/device_jobs/session56_short.sh
timeout 120 python3 bench/bench_resident.py --vadd 67108864 --passes 30 > $OUT/vadd.txt 2>&1
echo "vadd rc $?"; cut -c1-420 $OUT/vadd.txt | grep -E "^vadd|ratios" | tail -2
L=$((560 - SECONDS)); echo "cuda tests with $L s left"
timeout $L python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 4 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED|Error" $OUT/cuda_tests.txt | tail -12
