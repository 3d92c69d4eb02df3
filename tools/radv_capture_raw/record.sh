#!/bin/bash
# tools/radv_capture_raw/record.sh - record wavelift's raw RADV captures into tests/fixtures/radv/.
#
# Build-time only (tests never run this; the outputs are committed). It builds the team's
# radv-capture tool (../shared/tools/radv-capture, override with WAVELIFT_SHARED) into a
# temporary directory against the Mesa 22.3.6 source headers, exactly like that tool's build.sh
# (which would write into the shared tree), then records each capture:
#   - SPIR-V from tests/fixtures/glsl/*.comp with glslangValidator -V --target-env vulkan1.3;
#   - input files generated deterministically by make_inputs.py into <capture>/inputs/;
#   - radv_capture with RADV_FORCE_FAMILY=navi21 (or the entry's family), MESA_SHADER_CACHE_DISABLE=true and an empty
#     XDG_CACHE_HOME (see the radv-capture README: a radv_builtin_shaders64 cache shifts VAs);
#   - pm4_listing.py --check must pass on submit0;
#   - trim.py then makes the capture small (see tests/fixtures/radv/README.md).
#
# Getting the Mesa source (Debian's own source package; /etc/apt is left alone):
#   mkdir -p /tmp/aptsrc/lists/partial
#   sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > /tmp/aptsrc/src.sources
#   O="-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts=/tmp/aptsrc -o Dir::State::lists=/tmp/aptsrc/lists"
#   apt-get $O update && mkdir -p /tmp/mesasrc && cd /tmp/mesasrc && \
#     apt-get $O source --download-only mesa=22.3.6-1+deb12u2 && tar xzf mesa_22.3.6.orig.tar.gz
set -euo pipefail
cd "$(dirname "$0")/../.."
export LC_ALL=C
SHARED=${WAVELIFT_SHARED:-../shared}
RC=$SHARED/tools/radv-capture
M=${MESA_SRC:-/tmp/mesasrc/mesa-22.3.6}
HERE=tools/radv_capture_raw
FIX=tests/fixtures
OUT=$FIX/radv
[ -f "$M/src/amd/vulkan/radv_radeon_winsys.h" ] || { echo "Mesa 22.3.6 source not found at $M" >&2; exit 3; }
[ -f "$RC/radv_capture.c" ] || { echo "radv-capture not found at $RC (set WAVELIFT_SHARED)" >&2; exit 3; }

BUILD=$(mktemp -d /tmp/wavelift-radv-capture.XXXXXX)
trap 'rm -rf "$BUILD"' EXIT
# the same command as ../shared/tools/radv-capture/build.sh, with the output in $BUILD
gcc -O1 -g -Wall -Wno-unused-function -Wno-unused-variable -DHAVE_ENDIAN_H \
    -I"$M/src/amd/vulkan" -I"$M/src" -I"$M/src/amd/common" -I"$M/src/amd" -I"$M/include" \
    "$RC/radv_capture.c" -o "$BUILD/radv_capture" -ldl
CAP=$BUILD/radv_capture

# name  shader  radv_capture options (paths relative to the capture directory's inputs/)  [family, default navi21]
CAPTURES=(
  "scratch_array-w32|scratch_array|--binding 0:0:ssbo:1032:inputs/data.bin --groups 4,1,1 --subgroup-size 32"
  "scratch_array-w64|scratch_array|--binding 0:0:ssbo:1032:inputs/data.bin --groups 4,1,1 --subgroup-size 64"
  "push_consts_ubo-w32|push_consts_ubo|--push inputs/push.bin --binding 0:0:ubo:32:inputs/ubo.bin --binding 1:0:ssbo:512:inputs/vals.bin --groups 2,1,1 --subgroup-size 32"
  "fullscreen-indirect-w32|fullscreen|--push inputs/push.bin --binding 0:0:ssbo:1536:inputs/src.bin --binding 0:1:ssbo:1536:inputs/weight.bin --binding 0:2:ssbo:1536 --groups 3,2,1 --indirect --subgroup-size 32"
  "scratch_game-chained-w64|scratch_game|--push inputs/push.bin --binding 0:0:ssbo:1024:inputs/seeds.bin --binding 0:1:ssbo:1024 --groups 2,2,1 --subgroup-size 64 --ib-dw 1024"
  "int64_div-w32|int64_div|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960 --groups 6,1,1 --subgroup-size 32|navi21"
  "int64_div-w64|int64_div|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960 --groups 6,1,1 --subgroup-size 64|navi21"
  "int64_div-navi10-w64|int64_div|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960 --groups 6,1,1 --subgroup-size 64|navi10"
  "int64_misc-w32|int64_misc|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960 --groups 6,1,1 --subgroup-size 32|navi21"
  "int64_misc-w64|int64_misc|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960 --groups 6,1,1 --subgroup-size 64|navi21"
  "int64_misc-navi10-w64|int64_misc|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960 --groups 6,1,1 --subgroup-size 64|navi10"
  "int64_atomic-w32|int64_atomic|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960:inputs/o.bin --groups 6,1,1 --subgroup-size 32|navi21"
  "int64_atomic-w64|int64_atomic|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960:inputs/o.bin --groups 6,1,1 --subgroup-size 64|navi21"
  "int64_atomic-navi10-w64|int64_atomic|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960:inputs/o.bin --groups 6,1,1 --subgroup-size 64|navi10"
)

mkdir -p "$OUT"
for c in "${CAPTURES[@]}"; do
    IFS='|' read -r name shader opts fam <<< "$c"
    fam=${fam:-navi21}
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi   # record.sh [NAME...]
    d=$OUT/$name
    echo "  $d"
    rm -rf "$d"
    mkdir -p "$d/inputs"
    glslangValidator -V --target-env vulkan1.3 "$FIX/glsl/$shader.comp" -o "$d/$shader.spv" > /dev/null
    python3 $HERE/make_inputs.py "$name" "$d/inputs"
    cache=$(mktemp -d /tmp/wavelift-radv-xdg.XXXXXX)
    # run inside the capture directory so the recorded paths are short and relative
    ( cd "$d" && env -u RADV_DEBUG -u RADV_PERFTEST -u ACO_DEBUG XDG_CACHE_HOME="$cache" \
        RADV_FORCE_FAMILY=$fam MESA_SHADER_CACHE_DISABLE=true \
        "$CAP" "$shader.spv" raw $opts > radv_capture.log 2>&1 ) || { cat "$d/radv_capture.log"; exit 1; }
    rm -rf "$cache"
    python3 "$RC/pm4_listing.py" "$d/raw/submit0" --check > "$d/pm4_listing.txt"
    python3 $HERE/trim.py "$d/raw"
    cat > "$d/command.txt" <<EOT
# run in tests/fixtures/radv/$name (radv_capture built from ../shared/tools/radv-capture, see
# tools/radv_capture_raw/record.sh); inputs/ made by tools/radv_capture_raw/make_inputs.py $name inputs
glslangValidator -V --target-env vulkan1.3 ../../glsl/$shader.comp -o $shader.spv
XDG_CACHE_HOME=\$(mktemp -d) RADV_FORCE_FAMILY=$fam MESA_SHADER_CACHE_DISABLE=true radv_capture $shader.spv raw $opts
python3 pm4_listing.py raw/submit0 --check > pm4_listing.txt
python3 tools/radv_capture_raw/trim.py raw
EOT
done
