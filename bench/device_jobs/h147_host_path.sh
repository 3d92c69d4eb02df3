#!/bin/bash
# h147 (session 50): the host cost of a kept, deferred, in-place launch (issue 24), round two, on the GPU:
# bench_resident.py's tiny launches and shade's pass stream (--tiny 2000 --passes 50) with
# WAVELIFT_CUDA_INPLACE=proved WAVELIFT_CUDA_HEAP=one (the defaults since session 50, set anyway), this tree
# (AFTER) and main at h147's branch point (BEFORE, 9e3c2ff, a `git archive` under /tmp: the same bench
# script run with --tree there) in one call, alternating AFTER, BEFORE, AFTER; then the resident GPU tests.
# <= 3 minutes (45 s a bench run, 45 s the tests); results under $OUT (<= 8 files): device.txt, after1.txt, before.txt, after2.txt, the JSON
# of each run (after1/, before/, after2/) and tests.txt.
# Read: "tiny vadd ... us per launch wall" and "a stream of 50 passes ... ours X ms a pass" (ratios to
# native); the CPU stand-in: bench/results/host_path-2026-12-07-s50-h147-ab.txt.
set -u
export PYTHONPATH=$PWD
export WAVELIFT_CUDA_INPLACE=proved WAVELIFT_CUDA_HEAP=one
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
BASE=/tmp/h147-base
rm -rf "$BASE" && mkdir -p "$BASE"
if git archive 9e3c2ff 2>/dev/null | tar -x -C "$BASE" 2>/dev/null && [ -d "$BASE/wavelift" ]; then
    echo "BEFORE: 9e3c2ff in $BASE" >> "$OUT/device.txt"
else
    echo "BEFORE: no git here (9e3c2ff not made): AFTER only" >> "$OUT/device.txt"; BASE=""
fi
run() {  # name tree
    mkdir -p "$OUT/$1"
    OUT="$OUT/$1" timeout 45 python3 bench/bench_resident.py --tree "$2" --tiny 2000 --passes 50 > "$OUT/$1.txt" 2>&1
    echo "rc $?" >> "$OUT/$1.txt"
}
run after1 "$PWD"
[ -n "$BASE" ] && run before "$BASE"
run after2 "$PWD"
timeout 45 python3 -m pytest -q -m cuda tests/cuda/test_resident_gpu.py -p no:cacheprovider -n 0 > "$OUT/tests.txt" 2>&1
echo "rc $?" >> "$OUT/tests.txt"
