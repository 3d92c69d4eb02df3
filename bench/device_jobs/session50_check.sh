#!/bin/bash
# Session 50's second GPU call: the full gpu_check with in place on (INPLACE=proved HEAP=one),
# the scratch dispatches recorded on the CPU machine (devjobs/scratch.pkl.gz: no llvm-mc-19 here)
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
SD=""; [ -f devjobs/scratch.pkl.gz ] && SD="--scratch-dispatches devjobs/scratch.pkl.gz"
WAVELIFT_CUDA_INPLACE=proved WAVELIFT_CUDA_HEAP=one timeout 585 python bench/gpu_check.py --skip-bench --time-limit 530 $SD > $OUT/gpu_check_inplace.txt 2>&1
echo "gpu_check rc $?"; grep -c " equal" $OUT/gpu_check_inplace.txt; grep -i -E "DIFFERENT|error|Traceback" $OUT/gpu_check_inplace.txt | head -20; tail -5 $OUT/gpu_check_inplace.txt
