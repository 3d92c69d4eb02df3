#!/bin/bash
# Session 49's last GPU call (~3 min; results under $OUT): h137's wl_aside on the GPU (the kernel
# alone, both map forms, and the kept session in place with every deferred run read through the
# aside) and h139's question: what the map marking costs in the kernel (cuda_costs vadd32: bytes,
# bits = base since session 49, bits + MAPMARK=span, no marking at all), and vadd 2^26 in place with
# each map form (bench_resident; "back to back" is the arena kernel: in place has none).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 60 python -m pytest -p no:cacheprovider -n 0 -q -m cuda tests/cuda/test_resident_gpu.py -rfs -k aside \
  > $OUT/aside.txt 2>&1; echo "rc $?" >> $OUT/aside.txt; tail -4 $OUT/aside.txt
OUT= timeout 45 python bench/cuda_costs.py bytes,base,bitspan,nowritten vadd32 2>&1 | tail -3 | tee $OUT/costs.txt
IP="WAVELIFT_CUDA_INPLACE=proved WAVELIFT_CUDA_HEAP=one"
for form in "inplace-bytes:$IP WAVELIFT_CUDA_MAP=bytes" "inplace-span:$IP WAVELIFT_CUDA_MAPMARK=span"; do
  name=${form%%:*}; envs=${form#*:}
  env OUT= $envs timeout 30 python bench/bench_resident.py --tiny 0 --passes 0 --vadd 67108864 > $OUT/vadd-$name.txt 2>&1
  echo "== $name rc $?"; tail -3 $OUT/vadd-$name.txt
done
