#!/bin/bash
# h161 (session 53): the in-place graph's map kernels at memory speed.  wl_runs_bits reads 16 bytes a
# thread (its neighbours' edge words by shuffle, a warp with no run edge done after one vote, a warp's
# edges by one atomicAdd a kind), wl_aside clears by 16-byte stores, both on a grid of at most 16
# blocks of 256 an SM (grid-stride); the hints' D2D copy is folded into wl_runs' launch (one graph
# node less a pass, on every path).  Session 53 measured on an H100 under ncu (main): vadd 2^26
# (32 MB map) wl_runs_bits 58 us, wl_aside 32 us; shade 1920x1080 (1 MB map) 5.4 and 4.6 us.
# Expected with h161: vadd ~12-16 us and ~11-14 us (3 TB/s: 32 MB in ~11 us), shade ~2-3 us each.
# A/B in one run: bench/device_jobs/h161_scan_ab.py old|new puts main's two kernels (and their grid)
# back in place of h161's for the whole process (both with the hints' fold: the A/B is the scan and
# the clear alone).  Order: h161's new GPU test alone (the kernels on a
# real GPU: views at every word offset, 3M words), ncu per graph node (vadd 2^26, shade; old, new),
# bench_resident vadd 2^26 and shade passes (old, new), then the CUDA GPU tests of the in-place path
# with the time left.  <= 8 minutes; 7 files under $OUT.
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
grep -q "wl_put" wavelift/backends/cuda/resident.py || echo "h161 is not merged here: new = old" | tee -a "$OUT/device.txt"
timeout 70 python -m pytest -q -m cuda -p no:cacheprovider -n 0 tests/cuda/test_resident_gpu.py \
    -k "views or aside_keeps or runs_and_land or hints" > "$OUT/quick.txt" 2>&1
echo "quick tests rc $?"; tail -3 "$OUT/quick.txt"
AB=bench/device_jobs/h161_scan_ab.py
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for w in vadd shade; do
  for v in old new; do
    echo "== $w $v" >> "$OUT/ncu_$w.txt"
    timeout 55 $NCU --profile-from-start off --graph-profiling node --metrics gpu__time_duration.sum \
        python3 $AB $v bench/device_jobs/inplace_nodes.py $w 3 >> "$OUT/ncu_$w.txt" 2>&1
    echo "rc $?" >> "$OUT/ncu_$w.txt"
  done
  echo "== ncu $w"; grep -E "^== |^  [a-z_A-Z]|gpu__time_duration|a launch" "$OUT/ncu_$w.txt" | head -60
done
for v in old new; do
  echo "== $v" >> "$OUT/bench_vadd.txt"
  env -u OUT timeout 45 python3 $AB $v bench/bench_resident.py --tiny 0 --passes 0 --vadd 67108864 >> "$OUT/bench_vadd.txt" 2>&1
  echo "rc $?" >> "$OUT/bench_vadd.txt"
  echo "== $v" >> "$OUT/bench_shade.txt"
  env -u OUT timeout 45 python3 $AB $v bench/bench_resident.py --tiny 0 --passes 30 >> "$OUT/bench_shade.txt" 2>&1
  echo "rc $?" >> "$OUT/bench_shade.txt"
done
echo "== bench"; grep -E "^== |vadd over|ratios|shade|stream|^rc" "$OUT/bench_vadd.txt" "$OUT/bench_shade.txt" | head -40
L=$((470 - SECONDS))
[ $L -gt 20 ] && timeout $L python -m pytest -q -m cuda tests/cuda -p no:cacheprovider -n 4 \
    -k "resident or inplace or land or runs" > "$OUT/pytest.txt" 2>&1
echo "pytest rc $? (limit $L s)"; tail -5 "$OUT/pytest.txt"
