#!/bin/bash
# Session 49's GPU call (session49_first.sh with h136's lever in place of h118's, timeouts trimmed
# to fit one call when device time is short; ~8 min). From the repo root:
#   bash bench/device_jobs/session49_second.sh   (results under $OUT, 7 files)
# (1) in parallel: CUDA tests with MAP=bits (the last check before the bit map is the default),
# with HOIST=induction + OCCUPANCY_FULL=on (h136), the resident GPU tests (h125's in place, h133's
# folds), h128's descriptor_types diagnosis; (2) bench_resident in place (INPLACE=proved HEAP=one
# MAP=bits); (3) cuda_costs base / induction / h136 on histogram and stencil5.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p /tmp/o_new
(OUT=/tmp/o_new H128_MODE=new WAVELIFT_CUDA_TIER=off WAVELIFT_CUDA_MAP=bits timeout 190 python bench/device_jobs/descriptor_types_report.py 2>&1 |
    grep -E "H128|descriptor_types|fixtures:|rror|Traceback" | tail -20) > $OUT/diag_new.txt 2>&1 &
(WAVELIFT_CUDA_MAP=bits timeout 200 python -m pytest -q -m cuda tests/cuda -n 4 -p no:cacheprovider 2>&1 | tail -25) > $OUT/tests_bits.txt 2>&1 &
(WAVELIFT_CUDA_HOIST=induction WAVELIFT_CUDA_OCCUPANCY_FULL=on \
  timeout 200 python -m pytest -q -m cuda tests/cuda -n 4 -p no:cacheprovider 2>&1 | tail -25) > $OUT/tests_h136.txt 2>&1 &
(timeout 200 python -m pytest -q -m cuda tests/cuda/test_resident_gpu.py tests/cuda/test_cuda_induction_host.py -n 3 -p no:cacheprovider -rA 2>&1 | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|^E " | tail -60) > $OUT/tests_resident.txt 2>&1 &
wait
for f in diag_new tests_bits tests_h136 tests_resident; do echo "== $f"; tail -14 $OUT/$f.txt | cut -c1-500; done
echo "== bench_resident in place (INPLACE=proved HEAP=one MAP=bits)"
WAVELIFT_CUDA_INPLACE=proved WAVELIFT_CUDA_HEAP=one WAVELIFT_CUDA_MAP=bits timeout 130 python bench/bench_resident.py --passes 30 --stencil --vadd 67108864 --tiny 2000 > $OUT/bench_inplace.txt 2>&1
echo "rc $?"; grep -v "^ *$" $OUT/bench_inplace.txt | tail -24
echo "== cuda_costs"
OUT= timeout -k 5 120 python bench/cuda_costs.py base,induction,h136 histogram,stencil5 2>&1 | tail -5 | tee $OUT/costs.txt
