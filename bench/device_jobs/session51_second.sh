#!/bin/bash
# Session 51's second GPU call (~9 minutes): 1. the fixture rows of the in-place gpu_check that
# sessions 50 and 51's first call did not reach (gfx12 clang targets, ACO, RADV-LLVM, captures),
# 2. h146's hot-path job (cuda_costs base / nostats / f2i / statsblock / both, and the GPU tests of
# F2I=cvt and STATS=block): bench/device_jobs/h146_hot_path.sh.
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 280 python bench/gpu_check.py --skip-bench --time-limit 230 \
    --only gfx1200,gfx1201,/aco/,radv-llvm,captures > $OUT/gpu_check_tail.txt 2>&1
echo "gpu_check rc $?"; grep -E "fixtures:|DIFFERENT|SKIPPED" $OUT/gpu_check_tail.txt | head
rm -rf /tmp/h146 && OUT=/tmp/h146 bash bench/device_jobs/h146_hot_path.sh
cp /tmp/h146/cuda_costs.txt $OUT/cuda_costs_h146.txt; cp /tmp/h146/pytest.txt $OUT/pytest_h146.txt
cat $OUT/cuda_costs_h146.txt | grep -E "us \(" | head; tail -3 $OUT/pytest_h146.txt
