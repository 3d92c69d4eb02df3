#!/bin/bash
# tools/lavapipe_run/record.sh - expected results from lavapipe for RADV captures, and the .wlcap
# conversions of those captures with the expected output bytes recorded in them.
#
#   tools/lavapipe_run/record.sh CAPTURE...     (names of tests/fixtures/radv/<CAPTURE>/)
#
# Build-time only (tests read the committed outputs; with lavapipe installed a test may also run
# it live).  For each capture: runs the capture's SPIR-V with the same inputs on Mesa's lavapipe
# (Debian mesa-vulkan-drivers, VK_ICD_FILENAMES=lvp_icd) through lavapipe_run.c, writes the
# output buffer to tests/fixtures/lavapipe/<shader>/set<S>_binding<B>.bin (the same for every
# build of a shader: the inputs are the same), checks that the input buffers came back unchanged,
# and converts the raw capture with `wavelift import-radv` into tests/fixtures/captures/radv-<CAPTURE>.wlcap
# with `expected.memory` = the sha256 of lavapipe's bytes at the output buffer's VA
# (`wavelift run` reports whether a replay matches).  The last binding is the output.
set -euo pipefail
cd "$(dirname "$0")/../.."
export LC_ALL=C
FIX=tests/fixtures
ICD=${VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
BUILD=$(mktemp -d /tmp/wavelift-lavapipe.XXXXXX)
trap 'rm -rf "$BUILD"' EXIT
gcc -O1 -Wall -o "$BUILD/lavapipe_run" tools/lavapipe_run/lavapipe_run.c -lvulkan

for name in "$@"; do
    d=$FIX/radv/$name
    shader=$(sed -n 's/^glslangValidator .*glsl\/\([a-z0-9_]*\)\.comp.*/\1/p' "$d/command.txt")
    fam=$(sed -n 's/.*RADV_FORCE_FAMILY=\([a-z0-9]*\).*/\1/p' "$d/command.txt")
    target=gfx1030; [ "$fam" = navi10 ] && target=gfx1010
    capline=$(grep '^XDG_CACHE_HOME=' "$d/command.txt")
    groups=$(sed -n 's/.*--groups \([0-9,]*\).*/\1/p' <<< "$capline")
    push=$(sed -n 's/.*--push \([^ ]*\).*/\1/p' <<< "$capline")
    # radv_capture's --binding S:B:ssbo:BYTES[:FILE] -> lavapipe_run's --binding S:B:BYTES[:FILE]
    binds=$(grep -o -- '--binding [^ ]*' <<< "$capline" | sed 's/:ssbo:/:/')
    out=$FIX/lavapipe/$shader
    mkdir -p "$out"
    cmd="lavapipe_run $shader.spv OUTDIR --groups $groups --push $push $(echo $binds)"
    echo "  $name -> $out ($target)"
    rm -rf "$BUILD/o" && mkdir "$BUILD/o"
    ( cd "$d" && VK_ICD_FILENAMES=$ICD "$BUILD/lavapipe_run" "$shader.spv" "$BUILD/o" --groups "$groups" \
        --push "$push" $binds 2> "$BUILD/log" ) || { cat "$BUILD/log"; exit 1; }
    last=$(grep -o -- '--binding [^ ]*' <<< "$capline" | tail -1 | cut -d' ' -f2)
    s=$(cut -d: -f1 <<< "$last"); b=$(cut -d: -f2 <<< "$last")
    for f in $(grep -o -- '--binding [^ ]*' <<< "$capline" | cut -d' ' -f2 | head -n -1); do   # inputs unchanged
        file=$(cut -d: -f5 <<< "$f"); [ -n "$file" ] || continue
        cmp -n "$(stat -c %s "$d/$file")" "$d/$file" "$BUILD/o/set$(cut -d: -f1 <<< "$f")_binding$(cut -d: -f2 <<< "$f").bin"
    done
    cp "$BUILD/o/set${s}_binding${b}.bin" "$out/"
    cat > "$out/command.txt" <<EOT
# set${s}_binding${b}.bin: the output buffer after this shader ran on lavapipe ($(head -1 "$BUILD/log" | sed 's/^lavapipe_run: //'),
# Debian mesa-vulkan-drivers $(dpkg-query -W -f '${Version}' mesa-vulkan-drivers 2>/dev/null || echo '?')) with the inputs of tests/fixtures/radv/$name
# (the same for every build of $shader); made by tools/lavapipe_run/record.sh, run in that directory:
VK_ICD_FILENAMES=$ICD $cmd
EOT
    python3 -m wavelift import-radv "$d/raw" -o "$FIX/captures/radv-$name.wlcap" --target "$target" \
        --expect "$s:$b:$out/set${s}_binding${b}.bin" --expect-name lavapipe
done
