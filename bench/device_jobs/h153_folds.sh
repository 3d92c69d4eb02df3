#!/bin/bash
# h153 (session 51): the GPU tests whose scaffolding h153 folded (no GPU on the helpers' host), and
# bench/cuda_costs.py's `proved` / `pre149` variants after Runtime._prove.  ~7 minutes; results under
# $OUT: device.txt, pytest.txt, cuda_costs.txt.  Expect: every test passes as on main (the folds keep
# every assertion: chain_as_numpy, pass_as_numpy, unusable_alone_changed, one _needs_gpu), and
# cuda_costs prints the proved variant without "(proved: ... not proved whole ...)" on vadd32.
set -u
export PYTHONPATH=$PWD
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
{
  timeout 170 python3 -m pytest -q -m cuda tests/cuda/test_cuda_proved_gpu.py -p no:cacheprovider -n 0
  echo "rc $?"
  timeout 150 python3 -m pytest -q -m cuda tests/cuda/test_resident_gpu.py -p no:cacheprovider -n 0 \
      -k "stream or pass_and_a_bounded or escaping_dispatch"
  echo "rc $?"
  # (each calls test_cuda_backend._needs_gpu now: they must run, not skip)
  timeout 90 python3 -m pytest -q -rs -m cuda tests/cuda/test_lds_kernels.py tests/cuda/test_cuda_wavesync_host.py \
      tests/cuda/test_cuda_induction_host.py tests/cuda/test_cuda_spans_host.py -p no:cacheprovider -n 0 \
      -k "matmul16_nans or histogram_on_cuda or grouped_accesses or (lds_kernel_on_cuda and stencil5) or (with_the_setting_on_cuda and stencil5)"
  echo "rc $?"
} > "$OUT/pytest.txt" 2>&1
# (cuda_costs writes every module's source and SASS under $OUT when it is set: not wanted here)
env -u OUT timeout 60 python3 bench/cuda_costs.py base,proved,pre149 vadd32 > "$OUT/cuda_costs.txt" 2>&1
echo "rc $?" >> "$OUT/cuda_costs.txt"
