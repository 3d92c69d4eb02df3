#!/bin/bash
# h148 (session 51): the lean build of dispatches run in place on a proof (WAVELIFT_CUDA_PROVED=lean,
# decision 0049's amendment h148).  Needs branch h148 merged (tests/cuda/test_cuda_proved_gpu.py,
# cuda_costs' `proved` variant).  ~4-5 minutes; results under $OUT: device.txt, pytest.txt, cuda_costs.txt.
#   pytest: every gfx1030 clang -O2 fixture dispatch that runs in place does so with the lean build and
#   equals NumPy lane mode (and shade 256x120); the vadd chain (kept and deferred in-place plans) lean
#   and equal to NumPy; a wrong proof (a store's guess narrowed by hand) refused backend.proof with the
#   failed stores storing nothing and nothing landing.
#   cuda_costs: base vs proved (the lean build, timed on the arena with the proved windows as guesses,
#   as timing repeats are) and noretest (WAVELIFT_CUDA_RETEST=off, the same hot-path cut for every
#   dispatch) on shade, vadd32, vadd64.  Expect (bench/results/
#   sass-2026-12-07-s51-h148-proved.txt): the per-warp hot path 1.5 % (shade) .. 4-6 % (vadd) shorter
#   than base, about noretest's; registers 32/32/37 -> 28/25/28, static SASS about half.  Where proved
#   beats noretest, that is the registers' or the code size's.
set -u
export PYTHONPATH=$PWD
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
grep -q '"proved"' bench/cuda_costs.py || { echo "cuda_costs has no proved variant: merge h148 first" | tee -a "$OUT/device.txt"; exit 1; }
{
  timeout 170 python3 -m pytest -q -m cuda tests/cuda/test_cuda_proved_gpu.py -p no:cacheprovider -n 0
  echo "rc $?"
} > "$OUT/pytest.txt" 2>&1
# (cuda_costs writes every module's source and SASS under $OUT when it is set: not wanted here)
env -u OUT timeout 120 python3 bench/cuda_costs.py base,proved,noretest shade,vadd32,vadd64 > "$OUT/cuda_costs.txt" 2>&1
echo "rc $?" >> "$OUT/cuda_costs.txt"
