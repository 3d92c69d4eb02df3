#!/bin/bash
# Session 55's second GPU call (~2 min): where stencil5's stream waits (session 55's first call:
# 125 us a pass, launch calls 102 us, the queue read twice in 20 launches as for shade's 45 us):
# stream_profile's cProfile by own time for stencil5 and shade (100 passes), and stencil5 with the
# module's own build (WAVELIFT_CUDA_PROVED=own) beside the lean default.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
for a in --stencil ""; do
  echo "=== stream_profile 100 $a"
  timeout 60 python3 bench/device_jobs/stream_profile.py 100 $a > $OUT/stream_profile$a.txt 2>&1
  grep -E "^round|^first" $OUT/stream_profile$a.txt
  sed -n '/==== cProfile by tottime/,/==== cProfile by cumulative/p' $OUT/stream_profile$a.txt | grep -E "^ +[0-9]" | head -22 | cut -c1-200
done
echo "=== stencil5, WAVELIFT_CUDA_PROVED=own"
WAVELIFT_CUDA_PROVED=own timeout 40 python3 bench/device_jobs/stream_profile.py 100 --stencil 2>&1 | grep -E "^round"
