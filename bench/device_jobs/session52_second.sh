#!/bin/bash
# Session 52's second GPU call (~9.5 minutes), on the new defaults (HOIST=induction, OCCUPANCY_FULL=on,
# MAPFILL=store): 1. every CUDA GPU test (also h152's count slots and h153's folded scaffolding, which
# never ran on a GPU); 2. where a stream of resident shade passes waits (cProfile; nsys where found);
# 3. MAPFILL=store against atomic: cuda_costs on the streaming kernels, bench_resident's vadd 2^26;
# 4. the in-place gpu_check's unreached rows for the time left.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 230 python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 0 > $OUT/cuda_tests.txt 2>&1
echo "cuda tests rc $?"; grep -E "passed|failed|FAILED|Error" $OUT/cuda_tests.txt | tail -8
env -u OUT timeout 80 python3 bench/cuda_costs.py base,mapatomic vadd32,vadd64,shade > $OUT/cuda_costs_fill.txt 2>&1
echo "cuda_costs rc $?"; grep -E "us \(" $OUT/cuda_costs_fill.txt
for f in store atomic store+lean; do
  echo "== MAPFILL=$f" >> $OUT/vadd26.txt
  WAVELIFT_CUDA_MAPFILL=${f%+lean} WAVELIFT_CUDA_PROVED=$([ $f = store+lean ] && echo lean) \
      timeout 60 python3 bench/bench_resident.py --tiny 0 --passes 0 --vadd 67108864 >> $OUT/vadd26.txt 2>&1
done
grep -E "==|vadd over|ratios" $OUT/vadd26.txt | cut -c1-330
timeout 45 python3 bench/device_jobs/stream_profile.py 50 > $OUT/stream_profile.txt 2>&1
echo "stream_profile rc $?"; grep -E "^round|nsys" $OUT/stream_profile.txt
echo "== --whole (a full queue read whole: before session 52)" >> $OUT/stream_profile.txt
timeout 40 python3 bench/device_jobs/stream_profile.py 50 --whole 2>&1 | grep -E "^round" | tee -a $OUT/stream_profile.txt
# then the in-place gpu_check's unreached rows for the time left (session52_third.sh: the rest)
L=$((585 - SECONDS))
if [ $L -gt 90 ]; then
  timeout $L python bench/gpu_check.py --skip-bench --time-limit $((L - 30)) \
      --only gfx1030/aco/,radv-llvm,captures > $OUT/gpu_check.txt 2>&1
  echo "gpu_check rc $?"; grep -E "fixtures:|errors:|DIFFERENT" $OUT/gpu_check.txt | tail -8
fi
