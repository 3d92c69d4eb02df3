#!/bin/bash
# Session 50's check before in place becomes the default: h137's wl_aside GPU tests, then the full
# gpu_check with in place on (INPLACE=proved HEAP=one), the scratch dispatches recorded on the CPU
# machine (devjobs/scratch.pkl.gz: no llvm-mc-19 here).  ~9 minutes.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 60 python -m pytest -p no:cacheprovider -n 0 -q -m cuda tests/cuda/test_resident_gpu.py -rfs -k aside \
  > $OUT/aside.txt 2>&1; echo "rc $?" >> $OUT/aside.txt; tail -3 $OUT/aside.txt
SD=""; [ -f devjobs/scratch.pkl.gz ] && SD="--scratch-dispatches devjobs/scratch.pkl.gz"
WAVELIFT_CUDA_INPLACE=proved WAVELIFT_CUDA_HEAP=one timeout $((575 - SECONDS)) python bench/gpu_check.py --skip-bench --time-limit $((500 - SECONDS)) $SD > $OUT/gpu_check_inplace.txt 2>&1
echo "gpu_check rc $?"; grep -c " equal" $OUT/gpu_check_inplace.txt; grep -E "DIFFERENT|error|Traceback" $OUT/gpu_check_inplace.txt | head -20; tail -5 $OUT/gpu_check_inplace.txt
