#!/bin/bash
# Session 54's first GPU call (~3 min): where stencil5's in-place pass goes (a stream of its passes took
# 0.108 ms a pass in session 53 for a ~0.029 ms kernel back to back: 4.5x native, against shade's ~2x):
# each graph node under ncu, then the stream's host profile.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for k in stencil5 shade; do
  timeout 100 $NCU --profile-from-start off --graph-profiling node --metrics gpu__time_duration.sum \
      python3 bench/device_jobs/inplace_nodes.py $k 3 > $OUT/nodes_$k.txt 2>&1
  echo "ncu $k rc $?"; grep -E "^  [a-z_A-Z]|gpu__time_duration|a launch" $OUT/nodes_$k.txt | head -40
done
timeout 120 python3 bench/device_jobs/stream_profile.py 50 --stencil > $OUT/stream_stencil.txt 2>&1
echo "profile rc $?"; head -60 $OUT/stream_stencil.txt
