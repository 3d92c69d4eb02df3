#!/bin/bash
# Session 50's first GPU call: session 49's unrun fourth job (wl_aside on the GPU, the map
# marking's costs, vadd in place per map form), where shade's kernel time goes (native shapes
# against the guest's 8x8 tiles in 1-D blocks; our kernel without stats / marks, one or 16 groups
# a block).
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
bash bench/device_jobs/session49_fourth.sh > $OUT/fourth.txt 2>&1; tail -12 $OUT/fourth.txt
timeout 40 python bench/device_jobs/shade_shapes.py 2>&1 | tee $OUT/shapes.txt
OUT= timeout 60 python bench/cuda_costs.py base,gpb1,gpb16,nowritten,nostats,all shade 2>&1 | tail -8 | tee $OUT/shade_costs.txt
