#!/bin/bash
# Session 56's first GPU call (~2 min): why stencil5's stream launch calls take ~110 us where
# shade's take ~30 -- session 55's fourth job's cProfile found no blocking call, every function
# ~3x slower: the host's Python speed during each stream, the threads alive, then the same after
# joining wavelift's threads and with gc off (stream_threads.py).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
nproc; python3 -c "import sys; print(sys.version)"; cat /proc/loadavg
timeout 240 python3 bench/device_jobs/stream_threads.py 2>&1 | tee $OUT/stream_threads.txt | grep -v Warning
cat /proc/loadavg
