#!/bin/bash
# h143 (session 50): WAVELIFT_CUDA_OCCUPANCY_FULL=auto (the full SM's build kept only without any
# spill; decision 0047's amendment h143) timed against the defaults and =on, one device call.
# Needs branch h143 merged (cuda_costs' occauto / h143 variants).  ~4 minutes; results under $OUT:
#   device.txt, cuda_costs-lds.txt (lds.cl's five), cuda_costs-vadd64.txt (a module auto changes: 37 -> 32 registers).
# Variants: base (defaults), full (=on), occauto (=auto), h136 (HOIST=induction + on: the histogram's 1.87x
# in session 49), h143 (HOIST=induction + auto).  Expect from the CPU table
# (bench/results/occupancy-2026-12-07-s50-h143-ptxas.txt): occauto = base for histogram, stencil5, matmul16
# (same builds); reduce1024 8 blocks an SM instead of 6; scan256 unchanged (32 registers either way).
set -u
export PYTHONPATH=$PWD
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
grep -q '"occauto"' bench/cuda_costs.py || { echo "cuda_costs has no occauto variant: merge h143 first" | tee -a "$OUT/device.txt"; exit 1; }
# (cuda_costs writes every module's source and SASS under $OUT when it is set: not wanted here)
env -u OUT timeout 210 python3 bench/cuda_costs.py base,full,occauto,h136,h143 \
    histogram,stencil5,matmul16,reduce1024,scan256 > "$OUT/cuda_costs-lds.txt" 2>&1
echo "rc $?" >> "$OUT/cuda_costs-lds.txt"
env -u OUT timeout 60 python3 bench/cuda_costs.py base,full,occauto vadd64 > "$OUT/cuda_costs-vadd64.txt" 2>&1
echo "rc $?" >> "$OUT/cuda_costs-vadd64.txt"
