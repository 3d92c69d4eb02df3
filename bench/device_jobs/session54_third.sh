#!/bin/bash
# Session 54's third GPU call (~4.5 min; the second never got a machine): the CUDA GPU tests on the new
# defaults (h163's lean build built in the background, h165's queue reads), h165's flush count and the
# stencil5 / shade streams (a pass's time, the launch calls' median).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 150 python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 4 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED|Error" $OUT/cuda_tests.txt | tail -12
timeout 50 python3 bench/device_jobs/queue_flushes.py > $OUT/queue_flushes.txt 2>&1
echo "queue_flushes rc $?"; tail -4 $OUT/queue_flushes.txt
for a in --stencil ""; do timeout 25 python3 bench/device_jobs/stream_profile.py 50 $a 2>&1 | grep -E "^round" | head -2; done
