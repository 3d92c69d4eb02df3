#!/bin/bash
# Session 53's third GPU call (~8 minutes), main with h160 (MAPMARK=group, the default), h161 (the map
# kernels 16 bytes a thread, the hints' copy by wl_runs' launch) and h162 (STATS=last / pair, opt-in):
# 1. their new GPU tests (marking forms, the map kernels on views, the stats forms);
# 2. cuda_costs (kernel back to back, native alongside): base, markgeneral, the stats forms;
# 3. bench_resident vadd 2^26 + shade passes (+ the 5x5 stencil's on the defaults), one process each:
#    the defaults, MAPMARK=general, main's map kernels before h161 (h161_scan_ab.py old), PROVED=lean.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader; git log --oneline -1
timeout 100 python -m pytest -q -m cuda -p no:cacheprovider -n 4 tests/cuda/test_cuda_stats_gpu.py \
    tests/cuda/test_resident_gpu.py -k "bit_marking or views or aside_keeps or runs_and_land or hints or stats" \
    > $OUT/new_tests.txt 2>&1
echo "new GPU tests rc $?"; grep -E "passed|failed|FAILED|Error" $OUT/new_tests.txt | tail -8
env -u OUT timeout 150 python3 bench/cuda_costs.py base,markgeneral,nostats,statsblock,statslast,statspair \
    vadd32,vadd64,shade > $OUT/cuda_costs.txt 2>&1
echo "cuda_costs rc $?"; grep -E "^(shade|vadd32|vadd64):" $OUT/cuda_costs.txt
AB=bench/device_jobs/h161_scan_ab.py
run() {  # name, env..., then the script's own command
  local n=$1; shift
  echo "== $n" >> $OUT/resident.txt
  local L=$((580 - SECONDS)); [ $L -gt 75 ] && L=75; [ $L -lt 15 ] && { echo "skipped: no time" >> $OUT/resident.txt; return; }
  env -u OUT timeout $L "$@" >> $OUT/resident.txt 2>&1; echo "rc $?" >> $OUT/resident.txt
}
run defaults python3 bench/bench_resident.py --tiny 0 --passes 30 --vadd 67108864 --stencil
run markgeneral env WAVELIFT_CUDA_MAPMARK=general python3 bench/bench_resident.py --tiny 0 --passes 30 --vadd 67108864
run mapkernels-old python3 $AB old bench/bench_resident.py --tiny 0 --passes 30 --vadd 67108864
run lean env WAVELIFT_CUDA_PROVED=lean python3 bench/bench_resident.py --tiny 0 --passes 30 --vadd 67108864
grep -E "^== |vadd over|ratios|shade 1920|stencil|a stream|^rc" $OUT/resident.txt | cut -c1-400
