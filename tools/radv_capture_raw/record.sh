#!/bin/bash
# tools/radv_capture_raw/record.sh - record wavelift's raw RADV captures into tests/fixtures/radv/.
#
# Build-time only (tests never run this; the outputs are committed). It builds the project's
# RADV capture tool (tools/radv_capture/build.sh, which fetches the Mesa 22.3.6 source headers
# when MESA_SRC lacks them) into a temporary directory, then records each capture:
#   - SPIR-V from tests/fixtures/glsl/*.comp with glslangValidator -V --target-env vulkan1.3;
#   - input files generated deterministically by make_inputs.py into <capture>/inputs/;
#   - radv_capture with RADV_FORCE_FAMILY=navi21 (or the entry's family), MESA_SHADER_CACHE_DISABLE=true and an empty
#     XDG_CACHE_HOME (see the radv-capture README: a radv_builtin_shaders64 cache shifts VAs);
#   - pm4_listing.py --check must pass on submit0;
#   - trim.py then makes the capture small (see tests/fixtures/radv/README.md);
#   - `wavelift import-radv` converts it to tests/fixtures/captures/radv-<name>.wlcap, with
#     lavapipe's output buffer as expected memory where tests/fixtures/lavapipe has it for the
#     shader (tools/lavapipe_run/record.sh makes those; tests/cli/test_import_radv.py: same rule).
set -euo pipefail
cd "$(dirname "$0")/../.."
export LC_ALL=C
RC=tools/radv_capture
HERE=tools/radv_capture_raw
FIX=tests/fixtures
OUT=$FIX/radv

BUILD=$(mktemp -d /tmp/wavelift-radv-capture.XXXXXX)
trap 'rm -rf "$BUILD"' EXIT
$RC/build.sh "$BUILD" > /dev/null
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
  # GFX11 (RADV_FORCE_FAMILY=gfx1100): into tests/fixtures/gfx1100/radv and gfx1100/captures
  "scratch_array-gfx1100-w32|scratch_array|--binding 0:0:ssbo:1032:inputs/data.bin --groups 4,1,1 --subgroup-size 32|gfx1100"
  "scratch_array-gfx1100-w64|scratch_array|--binding 0:0:ssbo:1032:inputs/data.bin --groups 4,1,1 --subgroup-size 64|gfx1100"
  "push_consts_ubo-gfx1100-w32|push_consts_ubo|--push inputs/push.bin --binding 0:0:ubo:32:inputs/ubo.bin --binding 1:0:ssbo:512:inputs/vals.bin --groups 2,1,1 --subgroup-size 32|gfx1100"
  "fullscreen-indirect-gfx1100-w32|fullscreen|--push inputs/push.bin --binding 0:0:ssbo:1536:inputs/src.bin --binding 0:1:ssbo:1536:inputs/weight.bin --binding 0:2:ssbo:1536 --groups 3,2,1 --indirect --subgroup-size 32|gfx1100"
  "scratch_game-chained-gfx1100-w64|scratch_game|--push inputs/push.bin --binding 0:0:ssbo:1024:inputs/seeds.bin --binding 0:1:ssbo:1024 --groups 2,2,1 --subgroup-size 64 --ib-dw 1024|gfx1100"
  "int64_misc-gfx1100-w32|int64_misc|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960 --groups 6,1,1 --subgroup-size 32|gfx1100"
  "int64_atomic-gfx1100-w64|int64_atomic|--push inputs/push.bin --binding 0:0:ssbo:2560:inputs/a.bin --binding 0:1:ssbo:2560:inputs/b.bin --binding 0:2:ssbo:1280:inputs/c.bin --binding 0:3:ssbo:40960:inputs/o.bin --groups 6,1,1 --subgroup-size 64|gfx1100"
)

mkdir -p "$OUT"
for c in "${CAPTURES[@]}"; do
    IFS='|' read -r name shader opts fam <<< "$c"
    fam=${fam:-navi21}
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi   # record.sh [NAME...]
    d=$OUT/$name; caps=$FIX/captures; up=../..
    if [ "$fam" = gfx1100 ]; then d=$FIX/gfx1100/radv/$name; caps=$FIX/gfx1100/captures; up=../../..; mkdir -p "$caps"; fi
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
    target=gfx1030; [ "$fam" = navi10 ] && target=gfx1010; [ "$fam" = gfx1100 ] && target=gfx1100
    last=$(grep -o -- '--binding [0-9]*:[0-9]*' <<< "$opts" | tail -1 | cut -d' ' -f2)
    exp=$FIX/lavapipe/$shader/set${last%%:*}_binding${last#*:}.bin
    expect=(); [ -f "$exp" ] && expect=(--expect "${last}:$exp" --expect-name lavapipe)
    python3 -m wavelift import-radv "$d/raw" -o "$caps/radv-$name.wlcap" --target $target "${expect[@]}" > /dev/null
    cat > "$d/command.txt" <<EOT
# run in $d (radv_capture built by tools/radv_capture/build.sh, see
# tools/radv_capture_raw/record.sh); inputs/ made by tools/radv_capture_raw/make_inputs.py $name inputs
glslangValidator -V --target-env vulkan1.3 $up/glsl/$shader.comp -o $shader.spv
XDG_CACHE_HOME=\$(mktemp -d) RADV_FORCE_FAMILY=$fam MESA_SHADER_CACHE_DISABLE=true radv_capture $shader.spv raw $opts
python3 pm4_listing.py raw/submit0 --check > pm4_listing.txt
python3 tools/radv_capture_raw/trim.py raw
wavelift import-radv raw -o $up/${caps#$FIX/}/radv-$name.wlcap --target $target${expect:+ --expect $last:$up/lavapipe/$shader/$(basename "$exp") --expect-name lavapipe}
EOT
done
