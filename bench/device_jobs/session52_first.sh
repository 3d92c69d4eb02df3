#!/bin/bash
# Session 52's first GPU call (~9 minutes).  1. h152's job (bench/device_jobs/h152_count_slots.sh, if
# h152 merged: the count atomics spread over more slots, summed on the device -- does the 20 % that
# `nostats` saves on vadd32 come from same-address contention?).  2. The LDS/barrier decision: issue 24's
# "LDS kernels <= 2x" is met only opt-in (session 49: histogram 2.18x default, 1.87x with
# HOIST=induction + OCCUPANCY_FULL=on, stencil5 1.59x -> 1.78x with it, still under 2x): time base,
# full (OCCUPANCY_FULL=on), occauto (=auto), h136 (induction + on) on every LDS kernel and the
# streaming ones in one run; if h136 keeps every kernel <= 2x and costs the streaming ones nothing,
# make HOIST=induction + OCCUPANCY_FULL=on the defaults (0047 amendment).
# Then, in a second call: the in-place gpu_check's rows not reached in sessions 50-51:
#   python bench/gpu_check.py --skip-bench --only /aco/,radv-llvm,captures --time-limit 480
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
if [ -f bench/device_jobs/h152_count_slots.sh ]; then
  rm -rf /tmp/h152 && OUT=/tmp/h152 timeout 260 bash bench/device_jobs/h152_count_slots.sh > /dev/null 2>&1
  cat /tmp/h152/* > $OUT/h152.txt 2>&1; grep -E "us \(|passed|failed" $OUT/h152.txt | head
fi
env -u OUT timeout $((560 - SECONDS)) python3 bench/cuda_costs.py base,full,occauto,h136 \
    histogram,stencil5,matmul16,reduce1024,scan256,shade,vadd32,vadd64 > $OUT/cuda_costs_lds.txt 2>&1
echo "cuda_costs rc $?"; grep -E "us \(" $OUT/cuda_costs_lds.txt
