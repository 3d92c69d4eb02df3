#!/bin/bash
# Session 56's planned GPU call (~9.5 min now; it never got a machine -- session56_short.sh ran its first two
# parts): run it first in session 57, with every CUDA GPU test file (only five ran on session 56's
# machine) and the own build's kept-launch rule (Resident.may_store) in the tree.  Main with the stencil's kept launch (the driver keeps a
# launch whose packet has no device copy by its bytes: session 55's ~110 us stencil launch calls
# were prepare + submission + _run_again every pass) and the group marking in 32 bits.
# 1. stream_threads.py: shade and stencil5 streams' launch calls, the host's Python speed (a
#    probe) idle and after each stream, the threads alive, each kernel's kept launch and why not;
# 2. bench_resident on today's defaults: tiny launches, shade and stencil5 passes, vadd 2^26;
# 3. the CUDA GPU tests, as many as the time left allows (4 processes; the 32-bit group marking).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
nproc; cat /proc/loadavg
timeout 70 python3 bench/device_jobs/stream_threads.py > $OUT/stream_threads.txt 2>&1
echo "stream_threads rc $?"; grep -v Warning $OUT/stream_threads.txt | cut -c1-400
timeout 150 python3 bench/bench_resident.py --tiny 2000 --passes 30 --stencil --vadd 67108864 --json $OUT/bench_resident.json > $OUT/bench_resident.txt 2>&1
echo "bench_resident rc $?"; cut -c1-420 $OUT/bench_resident.txt | grep -vE "^\s*$" | head -40
L=$((560 - SECONDS)); echo "cuda tests with $L s left"
timeout $L python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 4 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED|Error" $OUT/cuda_tests.txt | tail -12
cat /proc/loadavg
