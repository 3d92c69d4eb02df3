#!/bin/bash
# h159 (session 52): vadd 2^26 in place ~0.35 ms a pass slower than its kernel back to back -- the
# in-place copies sit at the guest address mod 16 only (resident.HEAP_ALIGN), so after the copies
# before it (each with 8 spare bytes) vadd's c lies at heap offset 16 mod 32 (a at 16, b at 32, c at 48
# mod 128; the arena's copies at 0): every warp's 128-byte store marks two half bit-map words, each by
# atomicOr (mapbits.h's plain-store fill only takes whole words), as MAPFILL=atomic does -- session 52
# measured in place store 0.983 ms ~ atomic 0.968 ms, while back to back store 0.617 < atomic 0.874.
# Branch h159: HEAP_ALIGN 256.  This job A/Bs HEAP_ALIGN 16 (before) against 256 (h159) in one process
# each, the same GPU: bench_resident --vadd 2^26 (kernel = in place, events around its graph; back to
# back = arena), 256 with MAPFILL=atomic as the control, and ncu's time of each in-place graph node
# (wl_main alone) for 16 and 256.  Expect with 256: in-place kernel ~0.65-0.72 ms (back to back + scan/
# clear/report ~0.07-0.1), atomic unchanged ~0.97; ncu wl_main 16 ~0.85-0.9 ms, 256 ~0.55-0.62 ms.
# Then shade 1920x1080 passes (bench_resident --passes 30) with 16 and 256: its output lies at 16 mod
# 32 in place too (the same three-buffer layout), each 8-pixel row's 32 bytes two half map words.
# ~6-7 minutes (limits 3x60 + 2x70 + 2x60 s); results under $OUT (8 files).  (devjobs/h159.sh as h159 wrote
# it; HEAP_ALIGN = 256 is on main since session 52, so "16" is the run before.)
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
mkdir -p "$OUT"
{ date -u; nvidia-smi -L; git log --oneline -1; } > "$OUT/device.txt" 2>&1
grep -q "^HEAP_ALIGN = 256" wavelift/backends/cuda/resident.py || echo "HEAP_ALIGN is not 256 here: merge h159 first (the A/B sets it anyway)" | tee -a "$OUT/device.txt"
# (HEAP_ALIGN set before anything is placed; the script then run as __main__ in this process)
AL='import sys, runpy; import wavelift.backends.cuda.resident as R; R.HEAP_ALIGN = int(sys.argv[1]); sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name="__main__")'
for v in 16 256 256atomic; do
  a=${v%atomic}; fill=store; [ "$v" != "$a" ] && fill=atomic
  WAVELIFT_CUDA_MAPFILL=$fill env -u OUT timeout 60 python3 -c "$AL" $a bench/bench_resident.py --tiny 0 --passes 0 --vadd 67108864 > "$OUT/bench_$v.txt" 2>&1
  echo "rc $?" >> "$OUT/bench_$v.txt"
  echo "== HEAP_ALIGN $a MAPFILL=$fill"; grep -E "vadd over|ratios" "$OUT/bench_$v.txt" | tee -a "$OUT/device.txt"
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
for a in 16 256; do
  timeout 70 $NCU --profile-from-start off --graph-profiling node --metrics gpu__time_duration.sum \
      python3 -c "$AL" $a bench/device_jobs/inplace_nodes.py vadd 3 > "$OUT/ncu_$a.txt" 2>&1
  echo "rc $?" >> "$OUT/ncu_$a.txt"
  echo "== ncu HEAP_ALIGN $a"; grep -E "^  [a-z_A-Z]|gpu__time_duration|a launch" "$OUT/ncu_$a.txt" | head -30
done
for a in 16 256; do
  env -u OUT timeout 60 python3 -c "$AL" $a bench/bench_resident.py --tiny 0 --passes 30 > "$OUT/shade_$a.txt" 2>&1
  echo "rc $?" >> "$OUT/shade_$a.txt"
  echo "== shade HEAP_ALIGN $a"; grep -E "shade|ratios|stream" "$OUT/shade_$a.txt" | head -8 | tee -a "$OUT/device.txt"
done
