#!/bin/bash
# tools/build_fixtures.sh - regenerate wavelift's real-compiler fixtures under tests/fixtures/.
#
#   usage: tools/build_fixtures.sh [clang] [clang11] [clang11x] [aco] [aco11] [radv] [radv_images] [manifest]   (no argument: all)
#
# Stages:
#   clang     OpenCL C (tests/fixtures/opencl/*.cl) -> AMDHSA code objects with clang-19/ld.lld-19,
#             matrix gfx1030/gfx1010 x -O0/-O2 x wave32/wave64 x MUBUF/flat scratch
#             -> tests/fixtures/<gfx>/<file>-<O>-<w32|w64>-<mubuf|flat>.hsaco
#   clang11   the same OpenCL C for gfx1100 (GFX11: architected flat scratch, so no MUBUF/flat
#             variant) x -O0/-O2 x wave32/wave64 -> tests/fixtures/gfx1100/<file>-<O>-<w32|w64>.hsaco,
#             commands in build_log/clang-gfx1100.tsv (read by tests/gfx11/, not the manifest)
#   clang11x  the same matrix for each of gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1200
#             gfx1201 -> tests/fixtures/<gfx>/..., commands in build_log/clang-<gfx>.tsv
#             (read by tests/gfx11/test_gfx11_targets.py and tests/gfx12/)
#   aco11     the GLSL shaders through aco-compile --family gfx1100, wave32 and wave64
#             -> tests/fixtures/gfx1100/aco/<shader>-<w32|w64>.*, commands in
#             build_log/aco-gfx1100.tsv (read by tests/gfx11/, not the manifest)
#   aco       GLSL (tests/fixtures/glsl/*.comp) -> Mesa 22.3.6 RADV/ACO code with aco-compile
#             -> tests/fixtures/<gfx>/aco/<shader>-<w32|w64>.{bin,s,json,spv}
#             and RADV's LLVM 15 backend (--llvm) -> tests/fixtures/gfx1030/radv-llvm/...
#   radv      raw RADV PM4 captures -> tests/fixtures/radv/<name>/ and, converted by
#             `wavelift import-radv`, tests/fixtures/captures/radv-<name>.wlcap (tools/radv_capture_raw/record.sh)
#   radv_images  RADV captures with images -> tests/fixtures/radv_images/ (tools/radv_capture/record_images.sh)
#   manifest  tests/fixtures/manifest.json (tools/build_fixtures_manifest.py)
#
# Build-time tools (NOT needed by any test; the outputs are committed):
#   - clang-19, ld.lld-19, llvm-objdump-19, llvm-readelf-19   (apt: llvm-19 clang-19 lld-19)
#   - aco-compile is the project's own, tools/aco_compile (README.md there). It needs
#     mesa-vulkan-drivers 22.3.6, glslang-tools, libvulkan-dev, gcc.
#   - the RADV capture tool is the project's own, tools/radv_capture (README.md there): its
#     build.sh fetches the Mesa 22.3.6 source headers with apt-get source when MESA_SRC (default
#     /tmp/mesasrc/mesa-22.3.6) lacks them.
# Everything is deterministic: rerunning gives byte-identical files.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
FIX=tests/fixtures
LOGDIR=$FIX/build_log         # command logs consumed by the manifest stage (committed, small)
mkdir -p "$LOGDIR"

CLANG_MORE="gfx1101 gfx1102 gfx1103 gfx1150 gfx1151 gfx1152 gfx1200 gfx1201"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(clang clang11 clang11x aco aco11 radv radv_images manifest)
want() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

# ----------------------------------------------------------------------------------- clang ---
build_clang() {
    local log=$LOGDIR/clang.tsv
    : > "$log"
    local CL_FILES="basic math stack"
    local CFLAGS="-x cl -cl-std=CL2.0 -Xclang -finclude-default-header -nogpulib -target amdgcn-amd-amdhsa"
    local gfx opt wave scr src out cmd wflag sflag
    for gfx in gfx1030 gfx1010; do
        mkdir -p "$FIX/$gfx"
        for src in $CL_FILES; do
            for opt in O0 O2; do
                for wave in w32 w64; do
                    for scr in mubuf flat; do
                        wflag=""; sflag=""
                        [ $wave = w64 ] && wflag=" -mwavefrontsize64"
                        [ $scr = flat ] && sflag=" -Xclang -target-feature -Xclang +enable-flat-scratch"
                        out=$FIX/$gfx/$src-$opt-$wave-$scr.hsaco
                        cmd="clang-19 $CFLAGS -mcpu=$gfx$wflag$sflag -$opt -include $FIX/opencl/wl_builtins.h $FIX/opencl/$src.cl -o $out"
                        echo "  $out"
                        $cmd
                        llvm-objdump-19 -d --mcpu=$gfx "$out" > /dev/null
                        printf 'clang\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$out" "$FIX/opencl/$src.cl" \
                            $gfx $wave $opt $scr "$cmd" >> "$log"
                    done
                done
            done
        done
    done
}

# --------------------------------------------------------------------------------- clang11 ---
build_clang11() {  # [gfx] (default gfx1100): one GFX11/12 target's matrix
    local gfx=${1:-gfx1100}
    local log=$LOGDIR/clang-$gfx.tsv
    : > "$log"
    local CFLAGS="-x cl -cl-std=CL2.0 -Xclang -finclude-default-header -nogpulib -target amdgcn-amd-amdhsa"
    local opt wave src out cmd wflag
    mkdir -p "$FIX/$gfx"
    for src in basic math stack; do
        for opt in O0 O2; do
            for wave in w32 w64; do
                wflag=""
                [ $wave = w64 ] && wflag=" -mwavefrontsize64"
                out=$FIX/$gfx/$src-$opt-$wave.hsaco
                cmd="clang-19 $CFLAGS -mcpu=$gfx$wflag -$opt -include $FIX/opencl/wl_builtins.h $FIX/opencl/$src.cl -o $out"
                echo "  $out"
                $cmd
                llvm-objdump-19 -d --mcpu=$gfx "$out" > /dev/null
                printf 'clang\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$out" "$FIX/opencl/$src.cl" \
                    $gfx $wave $opt flat "$cmd" >> "$log"
            done
        done
    done
}

# the 2-D/3-D id kernels for GFX12 (workgroup ids in TTMP7/TTMP9): tests/fixtures/gfx1200/ids.cl
build_ids12() {
    local log=$LOGDIR/clang-ids-gfx12.tsv
    : > "$log"
    local CFLAGS="-x cl -cl-std=CL2.0 -Xclang -finclude-default-header -nogpulib -target amdgcn-amd-amdhsa"
    local gfx opt wave out cmd wflag
    for gfx in gfx1200 gfx1201; do
        for opt in O0 O2; do
            for wave in w32 w64; do
                wflag=""
                [ $wave = w64 ] && wflag=" -mwavefrontsize64"
                out=$FIX/$gfx/ids-$opt-$wave.hsaco
                cmd="clang-19 $CFLAGS -mcpu=$gfx$wflag -$opt -include $FIX/opencl/wl_builtins.h $FIX/gfx1200/ids.cl -o $out"
                echo "  $out"
                $cmd
                llvm-objdump-19 -d --mcpu=$gfx "$out" > /dev/null
                printf 'clang\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$out" "$FIX/gfx1200/ids.cl" \
                    $gfx $wave $opt flat "$cmd" >> "$log"
            done
        done
    done
}

# mixed.cl (scalar float instructions at -O0) for gfx1150/gfx1200 and, as the reference build,
# gfx1030: tests/gfx12/test_gfx12_mixed.py
build_mixed12() {
    local log=$LOGDIR/clang-mixed.tsv
    : > "$log"
    local CFLAGS="-x cl -cl-std=CL2.0 -Xclang -finclude-default-header -nogpulib -target amdgcn-amd-amdhsa"
    local gfx opt out cmd
    for gfx in gfx1030 gfx1150 gfx1200; do
        for opt in O0 O2; do
            out=$FIX/gfx1200/mixed-$gfx-$opt.hsaco
            cmd="clang-19 $CFLAGS -mcpu=$gfx -$opt -include $FIX/opencl/wl_builtins.h $FIX/gfx1200/mixed.cl -o $out"
            echo "  $out"
            $cmd
            llvm-objdump-19 -d --mcpu=$gfx "$out" > /dev/null
            printf 'clang\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$out" "$FIX/gfx1200/mixed.cl" \
                $gfx w32 $opt flat "$cmd" >> "$log"
        done
    done
}

# ------------------------------------------------------------------------------------- aco ---
build_aco() {
    local ACO=tools/aco_compile/aco-compile
    local log=$LOGDIR/aco.tsv
    : > "$log"
    local SHADERS="scratch_array image_blur lds_reduce subgroup_ops push_consts_ubo descriptor_types fullscreen scratch_game int64_div int64_misc int64_atomic int64_div32_shapes"
    local v fam wave gfx dir s out cmd kind extra
    for v in "navi21 w32 gfx1030 aco" "navi21 w64 gfx1030 aco" "navi10 w64 gfx1010 aco" \
             "navi21 w32 gfx1030 radv-llvm" "navi21 w64 gfx1030 radv-llvm"; do
        set -- $v
        fam=$1 wave=$2 gfx=$3 kind=$4
        if [ $kind = aco ]; then dir=$FIX/$gfx/aco; extra=""; list=$SHADERS
        else dir=$FIX/$gfx/radv-llvm; extra=" --llvm"; list=scratch_array; fi
        mkdir -p "$dir"
        for s in $list; do
            out=$dir/$s-$wave
            cmd="$ACO $FIX/glsl/$s.comp -o $out --family $fam --wave${wave#w}$extra -q"
            echo "  $out"
            PYTHONDONTWRITEBYTECODE=1 "$ACO" "$FIX/glsl/$s.comp" -o "$out" --family $fam --wave${wave#w}$extra -q
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' $kind "$out" "$FIX/glsl/$s.comp" \
                $gfx $wave "-" "-" "$cmd" >> "$log"
        done
    done
}

# ----------------------------------------------------------------------------------- aco11 ---
build_aco11() {
    local ACO=tools/aco_compile/aco-compile
    local log=$LOGDIR/aco-gfx1100.tsv
    : > "$log"
    local SHADERS="scratch_array image_blur lds_reduce subgroup_ops push_consts_ubo descriptor_types fullscreen scratch_game int64_div int64_misc int64_atomic int64_div32_shapes"
    local dir=$FIX/gfx1100/aco wave s out cmd
    mkdir -p "$dir"
    for wave in w32 w64; do
        for s in $SHADERS; do
            out=$dir/$s-$wave
            cmd="$ACO $FIX/glsl/$s.comp -o $out --family gfx1100 --wave${wave#w} -q"
            echo "  $out"
            PYTHONDONTWRITEBYTECODE=1 "$ACO" "$FIX/glsl/$s.comp" -o "$out" --family gfx1100 --wave${wave#w} -q
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' aco "$out" "$FIX/glsl/$s.comp" \
                gfx1100 $wave "-" "-" "$cmd" >> "$log"
        done
    done
}

want clang && { echo "== clang"; build_clang; }
want clang11 && { echo "== clang11"; build_clang11; }
want clang11x && { echo "== clang11x"; for g in $CLANG_MORE; do build_clang11 $g; done; build_ids12; build_mixed12; }
want aco && { echo "== aco"; build_aco; }
want aco11 && { echo "== aco11"; build_aco11; }
want radv && { echo "== radv"; tools/radv_capture_raw/record.sh; }
want radv_images && { echo "== radv_images"; tools/radv_capture/record_images.sh; }
want manifest && { echo "== manifest"; python3 tools/build_fixtures_manifest.py; }
echo "done"
