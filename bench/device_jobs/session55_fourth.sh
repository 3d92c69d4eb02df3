#!/bin/bash
# Session 55's last GPU minutes (~3 min; run first in session 56): where stencil5's stream waits -- stream_profile's cProfile
# by own time over 100 passes (session 55's first call: 125 us a pass, every launch call 94-110 us,
# the queue read twice in 20 launches as for shade's 45 us).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 70 python3 bench/device_jobs/stream_profile.py 100 --stencil > $OUT/stream_profile_stencil.txt 2>&1
grep -E "^round|^first" $OUT/stream_profile_stencil.txt
sed -n '/==== cProfile by tottime/,/==== cProfile by cumulative/p' $OUT/stream_profile_stencil.txt | grep -E "^ +[0-9]" | head -20 | cut -c1-190
sed -n '/==== cProfile by cumulative/,$p' $OUT/stream_profile_stencil.txt | grep -E "^ +[0-9]" | head -28 | cut -c1-190
# and the tiny launches (session 55: 50 us against 26-34 before, the host path unchanged on the
# stand-in): timed, then cProfile'd
timeout 60 python3 bench/bench_resident.py --tiny 2000 --passes 0 > $OUT/tiny.txt 2>&1; grep -E "^tiny|tenths" $OUT/tiny.txt
timeout 60 python3 bench/bench_resident.py --tiny 0 --passes 0 --profile 2000 > $OUT/tiny_profile.txt 2>&1; grep -E "^ +[0-9]" $OUT/tiny_profile.txt | head -24 | cut -c1-190
