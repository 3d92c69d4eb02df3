#!/bin/bash
# Session 55's first GPU call (~9.5 min; session 54's second and third never got a machine): main with
# h163 (the lean build the default, built in the background) and h165 (a host read drains the deferred
# queue only where a queued launch may write):
# 1. every CUDA GPU test (4 processes);
# 2. h165's flush count: whole-queue reads in 20 warmed stencil5 / shade launches (lean);
# 3. the stencil5 and shade streams (a pass's time, the launch calls' median);
# 4. bench_resident on the new defaults: tiny launches, shade and stencil5 passes, vadd 2^26 (each timed
#    row after the lean build is there: _steady), native in the same run.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 240 python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 4 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED|Error" $OUT/cuda_tests.txt | tail -12
timeout 60 python3 bench/device_jobs/queue_flushes.py > $OUT/queue_flushes.txt 2>&1
echo "queue_flushes rc $?"; tail -4 $OUT/queue_flushes.txt
for a in --stencil ""; do timeout 25 python3 bench/device_jobs/stream_profile.py 50 $a 2>&1 | grep -E "^round" | head -2; done
L=$((560 - SECONDS)); echo "bench_resident with $L s left"
timeout $L python3 bench/bench_resident.py --tiny 2000 --passes 30 --stencil --vadd 67108864 --json $OUT/bench_resident.json > $OUT/bench_resident.txt 2>&1
echo "bench_resident rc $?"; cut -c1-420 $OUT/bench_resident.txt | grep -vE "^\s*$" | head -40
