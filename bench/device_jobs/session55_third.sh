#!/bin/bash
# Session 55's last GPU call (~3.5 min; 7 minutes of device time left, the prepared fixture set not
# ready on the 2-core machine): where stencil5's stream waits (stream_profile's cProfile by own
# time, 100 passes), then gpu_check's fixtures on main's defaults for what time is left (no
# benchmarks; the fixture workers compile on this machine's cores).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 50 python3 bench/device_jobs/stream_profile.py 100 --stencil > $OUT/stream_profile_stencil.txt 2>&1
grep -E "^round|^first" $OUT/stream_profile_stencil.txt
sed -n '/==== cProfile by tottime/,/==== cProfile by cumulative/p' $OUT/stream_profile_stencil.txt | grep -E "^ +[0-9]" | head -16 | cut -c1-190
L=$((200 - SECONDS)); echo "gpu_check with $L s left"
timeout $L python3 bench/gpu_check.py --skip-bench --time-limit $((L - 45)) > $OUT/gpu_check.txt 2>&1
echo "gpu_check rc $?"
grep -vE "^\s+\[[0-9]+/" $OUT/gpu_check.txt | tail -14 | cut -c1-300
grep -E "DIFFERENT" $OUT/gpu_check.txt | head -10 | cut -c1-300
