#!/bin/bash
# Session 49's GPU call after h133-h136 merged (one call, ~9 min; results under $OUT, 8 files):
#   bash bench/device_jobs/session49_third.sh
# (1) in parallel: the CUDA tests with MAP=bits (the last check before the bit map is the
#     default); with HOIST=induction + OCCUPANCY_FULL=on (h136); the resident GPU tests with in
#     place on (h125 step 4, h134 step 5 deferred in place) and the induction GPU tests (h135's
#     guard); h128's descriptor_types diagnosis with the bit map;
# (2) bench_resident: the defaults (arena) and in place deferred (INPLACE=proved HEAP=one MAP=bits);
# (3) cuda_costs base / induction / h136 on histogram and stencil5.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
IP="WAVELIFT_CUDA_INPLACE=proved WAVELIFT_CUDA_HEAP=one WAVELIFT_CUDA_MAP=bits"
mkdir -p /tmp/o_new
(OUT=/tmp/o_new H128_MODE=new WAVELIFT_CUDA_TIER=off WAVELIFT_CUDA_MAP=bits timeout 190 python bench/device_jobs/descriptor_types_report.py 2>&1 |
    grep -E "H128|descriptor_types|fixtures:|rror|Traceback" | tail -20) > $OUT/diag_new.txt 2>&1 &
(WAVELIFT_CUDA_MAP=bits timeout 200 python -m pytest -q -m cuda tests/cuda -n 4 -p no:cacheprovider 2>&1 | tail -25) > $OUT/tests_bits.txt 2>&1 &
(WAVELIFT_CUDA_HOIST=induction WAVELIFT_CUDA_OCCUPANCY_FULL=on \
  timeout 200 python -m pytest -q -m cuda tests/cuda -n 4 -p no:cacheprovider 2>&1 | tail -25) > $OUT/tests_h136.txt 2>&1 &
(env $IP timeout 200 python -m pytest -q -m cuda tests/cuda/test_resident_gpu.py tests/cuda/test_cuda_induction_host.py -n 3 -p no:cacheprovider -rA 2>&1 | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|^E " | tail -60) > $OUT/tests_inplace.txt 2>&1 &
wait
for f in diag_new tests_bits tests_h136 tests_inplace; do echo "== $f"; tail -12 $OUT/$f.txt | cut -c1-400; done
B="--passes 30 --stencil --vadd 67108864 --tiny 2000"
for v in "arena|" "inplace-deferred|$IP"; do
  name=${v%%|*}; env_=${v#*|}
  echo "== bench_resident $name ($env_)"
  env OUT= $env_ timeout 115 python bench/bench_resident.py $B > "$OUT/bench-$name.txt" 2>&1
  echo "rc $?"; grep -v "^ *$" "$OUT/bench-$name.txt" | tail -16 | cut -c1-300
done
echo "== cuda_costs"
OUT= timeout -k 5 100 python bench/cuda_costs.py base,induction,h136 histogram,stencil5 2>&1 | tail -5 | tee $OUT/costs.txt
