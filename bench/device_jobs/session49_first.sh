#!/bin/bash
# The GPU runs session 48 could not make (no machine came after its first two calls; 0049's h125
# amendment and 0047's h127 amendment say what each shows). One device call from the repo root,
# about 8 minutes:  bash bench/device_jobs/session49_first.sh   (results under $OUT)
# (1) in parallel: CUDA tests with MAP=bits, with HOIST=induction(+h118), the resident GPU
# tests (h125's in-place ones among them), h128's descriptor_types diagnosis (fixed tree, bit map);
# (2) bench_resident in place (INPLACE=proved HEAP=one MAP=bits); (3) cuda_costs histogram/stencil5.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p /tmp/o_new
(OUT=/tmp/o_new H128_MODE=new WAVELIFT_CUDA_TIER=off WAVELIFT_CUDA_MAP=bits timeout 200 python bench/device_jobs/descriptor_types_report.py 2>&1 |
    grep -E "H128|descriptor_types|fixtures:|rror|Traceback" | tail -20) > $OUT/diag_new.txt 2>&1 &
(WAVELIFT_CUDA_MAP=bits timeout 230 python -m pytest -q -m cuda tests/cuda -n 4 -p no:cacheprovider 2>&1 | tail -25) > $OUT/tests_bits.txt 2>&1 &
(WAVELIFT_CUDA_HOIST=induction WAVELIFT_CUDA_WAVESYNC=spaces WAVELIFT_CUDA_LDSBASE=kept \
  timeout 230 python -m pytest -q -m cuda tests/cuda -n 4 -p no:cacheprovider 2>&1 | tail -25) > $OUT/tests_h127.txt 2>&1 &
(timeout 230 python -m pytest -q -m cuda tests/cuda/test_resident_gpu.py tests/cuda/test_cuda_induction_host.py -n 3 -p no:cacheprovider -rA 2>&1 | grep -E "PASSED|FAILED|ERROR|SKIPPED|passed|failed|^E " | tail -60) > $OUT/tests_resident.txt 2>&1 &
wait
for f in diag_new tests_bits tests_h127 tests_resident; do echo "== $f"; tail -14 $OUT/$f.txt | cut -c1-500; done
echo "== bench_resident in place (INPLACE=proved HEAP=one MAP=bits)"
WAVELIFT_CUDA_INPLACE=proved WAVELIFT_CUDA_HEAP=one WAVELIFT_CUDA_MAP=bits timeout 130 python bench/bench_resident.py --passes 30 --stencil --vadd 67108864 --tiny 2000 > $OUT/bench_inplace.txt 2>&1
echo "rc $?"; grep -v "^ *$" $OUT/bench_inplace.txt | tail -24
echo "== cuda_costs"
OUT= timeout -k 5 100 python bench/cuda_costs.py base,induction,h127 histogram,stencil5 2>&1 | tail -4
