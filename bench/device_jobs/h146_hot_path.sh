#!/bin/bash
# h146 (session 50): the streaming kernels' hot path (decision 0009's amendment h146).  Needs branch
# h146 merged (cuda_costs' f2i / statsblock / h146 variants, tests/cuda/test_cuda_lean_gpu.py).
# ~4.5 minutes; results under $OUT: device.txt, cuda_costs.txt, pytest.txt.
#   cuda_costs: base (the defaults, which since h146 hold the two pure cleanups: fmin/fmax with a
#   named constant as one compare, an access's pointer from its window offset), nostats (no count
#   atomics: unsound, the bound), f2i (WAVELIFT_CUDA_F2I=cvt), statsblock (WAVELIFT_CUDA_STATS=block),
#   h146 (both) on shade, vadd32, vadd64 (h146noretest, both and RETEST=off, if time is left over).
#   Expect (bench/results/sass-2026-12-07-s50-h146-hotpath.txt): f2i ~3-4 % fewer instructions on
#   shade (none on vadd); statsblock ~ +8 instructions a warp but 1/8 of the 64-bit atomics --
#   worth it where nostats is faster than base (vadd32 18.3 -> 15.3 us in session 50).
#   pytest: the every-f32 check of F2I=cvt against wl_f2i, block counts = wave counts on 7 fixture
#   dispatches, and test_cuda_backend's GPU comparisons with NumPy (and the budget stop) with both
#   settings on.
set -u
export PYTHONPATH=$PWD
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
grep -q '"statsblock"' bench/cuda_costs.py || { echo "cuda_costs has no statsblock variant: merge h146 first" | tee -a "$OUT/device.txt"; exit 1; }
# (cuda_costs writes every module's source and SASS under $OUT when it is set: not wanted here)
env -u OUT timeout 150 python3 bench/cuda_costs.py base,nostats,f2i,statsblock,h146 \
    shade,vadd32,vadd64 > "$OUT/cuda_costs.txt" 2>&1
echo "rc $?" >> "$OUT/cuda_costs.txt"
{
  timeout 40 python3 -m pytest -q -m cuda tests/cuda/test_cuda_lean_gpu.py -x -p no:cacheprovider -n 0
  echo "rc $?"
  WAVELIFT_CUDA_F2I=cvt WAVELIFT_CUDA_STATS=block timeout 100 python3 -m pytest -q -m cuda \
      tests/cuda/test_cuda_backend.py -x -p no:cacheprovider -n 0 -k "gpu_matches_numpy or budget_stops"
  echo "rc $?"
} > "$OUT/pytest.txt" 2>&1
