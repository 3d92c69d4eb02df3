#!/bin/bash
# Session 56's GPU call when the device time is short (~3 min; session56_first.sh's first two
# parts): the streams' launch calls and the host's Python speed (stream_threads.py), then
# bench_resident's tiny launches and the shade and stencil5 passes (no vadd, no GPU tests).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 75 python3 bench/device_jobs/stream_threads.py > $OUT/stream_threads.txt 2>&1
echo "stream_threads rc $?"; grep -v Warning $OUT/stream_threads.txt | cut -c1-400
timeout 100 python3 bench/bench_resident.py --tiny 2000 --passes 30 --stencil --json $OUT/bench_resident.json > $OUT/bench_resident.txt 2>&1
echo "bench_resident rc $?"; cut -c1-420 $OUT/bench_resident.txt | grep -vE "^\s*$" | head -30
