#!/bin/bash
# tools/radv_capture/record_images.sh [NAME...] - record the image captures of
# tests/fixtures/radv_images/ (README.md there): RADV's own stream for our GLSL image shaders,
# uploads and read-backs included, on a compute queue, for navi21 wave32/wave64 and navi10.
#
# Build-time only (tests never run radv_capture; they replay the committed captures and compare
# with lavapipe). Per capture NAME (table below):
#   - SPIR-V from tests/fixtures/radv_images/<shader>.comp (glslangValidator -V, vulkan1.3);
#   - inputs from tools/radv_capture/make_image_inputs.py <shader> (deterministic);
#   - radv_capture (built by build.sh into a temporary directory) with RADV_FORCE_FAMILY,
#     MESA_SHADER_CACHE_DISABLE=true and an empty XDG_CACHE_HOME (README.md: Use);
#   - pm4_listing.py --check on submit0;
#   - wavelift import-radv of the raw output, gzip -9n'd to captures/<NAME>.wlcap.gz (the raw
#     BO files are not committed: the .wlcap holds every BO and IB; gzip keeps the 256 KiB
#     shader arena of each capture small);
#   - <NAME>/command.txt (the commands), buffers.txt (the VAs of every buffer, image, staging
#     and read-back buffer), radv_capture.log (what RADV and addrlib chose per surface), and for
#     img_storage-w32 pm4_listing.txt;
#   - lavapipe's answer for the same options (run_lavapipe.c) into lavapipe/<shader>/, for the
#     shaders whose results are small (not fullscreen_sample: 16 MB, made at test time).
# Needs: gcc, g++, python3, glslang-tools, mesa-vulkan-drivers 22.3.6, libvulkan-dev, the Mesa
# source (build.sh). Two runs give the same files but for 16 bytes of each combined image
# sampler descriptor: RADV copies the first 80 bytes of its 96-byte image-view descriptor union
# (write_combined_image_sampler_descriptor, radv_descriptor_set.c) before the S# at +80, and
# bytes 64-79 (a third plane's T#) are never initialised for a one-plane image: host bytes,
# which no shader reads (ACO loads the T# at +0 and the S# at +80).
set -euo pipefail
cd "$(dirname "$0")/../.."
export LC_ALL=C
RC=tools/radv_capture
FIX=tests/fixtures/radv_images

BUILD=$(mktemp -d /tmp/wavelift-radv-images.XXXXXX)
trap 'rm -rf "$BUILD"' EXIT
$RC/build.sh "$BUILD" > /dev/null
CAP=$BUILD/radv_capture
gcc -O1 -o "$BUILD/run_lavapipe" $RC/run_lavapipe.c -ldl

# shader -> radv_capture options (input paths relative to a capture directory)
declare -A OPTS
I=../inputs/img_storage
OPTS[img_storage]="--image 0:0:storage:37:4:2d:16:8:1:1:$I/a.bin --image 0:1:storage:37:4:2d:16:8:1:1 --image 0:2:storage:100:4:3d:8:4:4:1:$I/b.bin --image 0:3:storage:100:4:3d:8:4:4:1 --image 0:4:storage:97:8:2darray:8:4:1:3:$I/c.bin --image 0:5:storage:97:8:2darray:8:4:1:3 --image 0:6:storage:98:4:2d:16:8:1:1:$I/d.bin --image 0:7:storage:78:4:2d:16:8:1:1:$I/e.bin --groups 2,2,1"
I=../inputs/img_formats
OPTS[img_formats]="--image 0:0:storage:9:1:1d:64:1:1:1:$I/r8.bin --image 0:1:storage:83:4:2d:128:64:1:1:$I/rg16f.bin --image 0:2:storage:109:16:2d:16:16:1:1:$I/rgba32f.bin --image 0:3:storage:64:4:2d:16:16:1:1:$I/rgb10a2.bin --image 0:4:storage:122:4:2d:16:16:1:1:$I/r11g11b10.bin --image 0:5:storage:98:4:2d:8:8:1:1:$I/atomic.bin --image 0:6:storage:98:4:2d:8:8:1:1:$I/amax.bin --groups 16,8,1"
I=../inputs/img_sample
OPTS[img_sample]="--image 0:0:sampled:37:4:2d:16:16:1:1:$I/t8.bin --sampler 0:0:0:0:0:0:0:0 --image 0:1:sampled:37:4:2d:16:16:1:1:$I/t8.bin --sampler 0:1:1:1:0:1:2:2 --image 0:2:sampled:97:8:2darray:8:8:1:2:$I/t16.bin --sampler 0:2:1:1:0:0:0:0 --image 0:3:sampled:100:4:3d:8:8:4:1:$I/t3d.bin --sampler 0:3:0:0:0:2:2:2 --binding 0:4:ssbo:2048:$I/coords.bin --image 0:5:sampled:100:4:3d:8:8:4:1:$I/t3d.bin --sampler 0:5:1:1:0:1:1:1 --binding 0:6:ssbo:16384 --groups 2,1,1"
I=../inputs/texel_buffers
OPTS[texel_buffers]="--texel 0:0:uniform:37:1024:$I/u8.bin --texel 0:1:uniform:100:1024:$I/uf.bin --texel 0:2:storage:97:2048:$I/s16.bin --texel 0:3:storage:98:1024:$I/sui.bin --binding 0:4:ssbo:8192 --groups 4,1,1"
I=../inputs/fullscreen_sample
OPTS[fullscreen_sample]="--image 0:0:sampled:37:4:2d:64:64:1:1:$I/albedo.bin --sampler 0:0:1:1:0:0:0:0 --image 0:1:sampled:97:8:2d:32:32:1:1:$I/light.bin --sampler 0:1:1:1:0:2:2:2 --image 0:2:storage:97:8:2d:1920:1080:1:1 --groups 240,135,1"
OPTS[dcc_target]="--image 0:0:rendertarget:97:8:2d:1024:576:1:1 --groups 128,72,1"
# mip chains, arrays and cubes (decision 0037): one copy region per level (every layer)
I=../inputs/img_mips
OPTS[img_mips]="--image 0:0:storage:37:4:2d:128:128:1:1:$I/src.bin --mips 0:0:8 --image 0:1:storage:37:4:2d:128:128:1:1 --mips 0:1:8 --image 0:2:storage:98:4:2darray:32:32:1:3:$I/asrc.bin --mips 0:2:6 --image 0:3:storage:98:4:2darray:32:32:1:3 --mips 0:3:6 --image 0:4:storage:97:8:cube:16:16:1:6:$I/csrc.bin --mips 0:4:5 --image 0:5:storage:97:8:cube:16:16:1:6 --mips 0:5:5 --groups 16,16,1"
I=../inputs/img_mipsample
OPTS[img_mipsample]="--image 0:0:sampled:37:4:2d:128:128:1:1:$I/t8.bin --mips 0:0:8 --sampler 0:0:0:0:0:0:0:0 --image 0:1:sampled:37:4:2d:128:128:1:1:$I/t8.bin --mips 0:1:8 --sampler 0:1:1:1:1:2:2:2 --image 0:2:sampled:37:4:cube:32:32:1:6:$I/cube.bin --mips 0:2:6 --sampler 0:2:0:0:0:2:2:2 --image 0:3:sampled:37:4:cube:32:32:1:6:$I/cube.bin --mips 0:3:6 --sampler 0:3:1:1:1:2:2:2 --image 0:4:sampled:100:4:2darray:32:32:1:3:$I/arr.bin --mips 0:4:6 --sampler 0:4:0:0:0:2:2:2 --binding 0:5:ssbo:12288:$I/coords.bin --binding 0:6:ssbo:32768 --groups 4,1,1"
I=../inputs/img_mip3d
OPTS[img_mip3d]="--image 0:0:sampled:37:4:cubearray:16:16:1:12:$I/ca.bin --mips 0:0:5 --sampler 0:0:0:0:0:2:2:2 --image 0:1:sampled:100:4:3d:32:16:8:1:$I/t3.bin --mips 0:1:6 --sampler 0:1:0:0:0:2:2:2 --image 0:2:sampled:100:4:3d:32:16:8:1:$I/t3.bin --mips 0:2:6 --sampler 0:2:1:1:1:2:2:2 --binding 0:3:ssbo:2048:$I/coords.bin --binding 0:4:ssbo:4096 --groups 1,1,1"
# custom border colours (decision 0043): CLAMP_TO_BORDER on u/v/w, each sampler a
# VK_BORDER_COLOR_{FLOAT,INT}_CUSTOM_EXT colour (the VkClearColorValue's dwords, hex; every
# component a value of its format, R, G, B, A distinct: k/255 for rgba8/bgra8, k/15 for
# b4g4r4a4, f16-exact for rgba16f, integers that fit rgba8ui)
I=../inputs/img_border
OPTS[img_border]="--image 0:0:sampled:37:4:2d:8:8:1:1:$I/t8.bin --sampler 0:0:0:0:0:3:3:3 --border 0:0:1000287003:3e4ccccd,3ecccccd,3f4ccccd,3f19999a --image 0:1:sampled:37:4:2d:8:8:1:1:$I/t8.bin --sampler 0:1:1:1:0:3:3:3 --border 0:1:1000287003:3f800000,3d888889,3f008081,3e808081 --image 0:2:sampled:100:4:2d:8:8:1:1:$I/r32.bin --sampler 0:2:0:0:0:3:3:3 --border 0:2:1000287003:3fc00000,c0100000,40400000,3e000000 --image 0:3:sampled:41:4:2d:8:8:1:1:$I/t8.bin --sampler 0:3:0:0:0:3:3:3 --border 0:3:1000287004:00000007,000000c8,00000000,000000ff --image 0:4:sampled:44:4:2d:8:8:1:1:$I/t8.bin --sampler 0:4:0:0:0:3:3:3 --border 0:4:1000287003:3d20a0a1,3da0a0a1,3df0f0f1,3e20a0a1 --image 0:5:sampled:97:8:2d:8:8:1:1:$I/h.bin --sampler 0:5:1:1:0:3:3:3 --border 0:5:1000287003:3f000000,bfa00000,40000000,3f400000 --image 0:7:sampled:3:2:2d:8:8:1:1:$I/p16.bin --sampler 0:7:0:0:0:3:3:3 --border 0:7:1000287003:3e4ccccd,3ecccccd,3f19999a,3f4ccccd --binding 0:8:ssbo:2048:$I/coords.bin --binding 0:9:ssbo:20480 --binding 0:10:ssbo:2048 --groups 2,1,1"
# the GB_ADDR_CONFIG the kernel reports, given to addrlib for these captures (the others keep
# the null winsys's 0): navi21 16 pipes / 16 packers, navi10 0x00100044 (Mesa's own addrlib
# test values for the chips, src/amd/common/ac_surface_test_common.h; tests/memory/test_layout.py)
declare -A GB=([navi21]=0x444 [navi10]=0x00100044)

# name | shader | family | subgroup size
CAPTURES=(
  "img_storage-w32|img_storage|navi21|32"
  "img_storage-w64|img_storage|navi21|64"
  "img_storage-navi10-w64|img_storage|navi10|64"
  "img_formats-w32|img_formats|navi21|32"
  "img_formats-w64|img_formats|navi21|64"
  "img_formats-navi10-w64|img_formats|navi10|64"
  "img_sample-w32|img_sample|navi21|32"
  "img_sample-w64|img_sample|navi21|64"
  "img_sample-navi10-w64|img_sample|navi10|64"
  "texel_buffers-w32|texel_buffers|navi21|32"
  "texel_buffers-w64|texel_buffers|navi21|64"
  "texel_buffers-navi10-w64|texel_buffers|navi10|64"
  "fullscreen_sample-w32|fullscreen_sample|navi21|32"
  "dcc_target-w32|dcc_target|navi21|32"
  "img_mips-w32|img_mips|navi21|32|gb"
  "img_mips-w64|img_mips|navi21|64|gb"
  "img_mips-navi10-w64|img_mips|navi10|64|gb"
  "img_mipsample-w32|img_mipsample|navi21|32|gb"
  "img_mipsample-w64|img_mipsample|navi21|64|gb"
  "img_mipsample-navi10-w64|img_mipsample|navi10|64|gb"
  "img_mip3d-w32|img_mip3d|navi21|32|gb"
  "img_mip3d-w64|img_mip3d|navi21|64|gb"
  "img_mip3d-navi10-w64|img_mip3d|navi10|64|gb"
  "img_border-w32|img_border|navi21|32"
  "img_border-w64|img_border|navi21|64"
  "img_border-navi10-w64|img_border|navi10|64"
)

# with NAMEs, only their shaders' SPIR-V, inputs and lavapipe answers are made again
wanted() {
    [ $# -gt 0 ] || return 0
    local c name shader
    for c in "${CAPTURES[@]}"; do
        IFS='|' read -r name shader _ <<< "$c"
        if [ "$shader" = "$WANT_SHADER" ] && printf '%s\n' "$@" | grep -qx "$name"; then return 0; fi
    done
    return 1
}
mkdir -p "$FIX/captures"
for shader in "${!OPTS[@]}"; do
    WANT_SHADER=$shader wanted "$@" || continue
    glslangValidator -V --target-env vulkan1.3 "$FIX/$shader.comp" -o "$FIX/$shader.spv" > /dev/null
    [ "$shader" = dcc_target ] || python3 $RC/make_image_inputs.py "$shader" "$FIX/inputs/$shader"
done
for c in "${CAPTURES[@]}"; do
    IFS='|' read -r name shader fam sg gb <<< "$c"
    if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
    d=$FIX/$name
    echo "  $d"
    rm -rf "$d"
    mkdir -p "$d"
    opts="${OPTS[$shader]} --subgroup-size $sg"
    [ -z "$gb" ] || opts="$opts --gb-addr-config ${GB[$fam]}"
    target=gfx1030; [ "$fam" = navi10 ] && target=gfx1010
    cache=$(mktemp -d /tmp/wavelift-radv-xdg.XXXXXX)
    # shellcheck disable=SC2086  # $opts is several options
    ( cd "$d" && env -u RADV_DEBUG -u RADV_PERFTEST -u ACO_DEBUG XDG_CACHE_HOME="$cache" \
        RADV_FORCE_FAMILY=$fam MESA_SHADER_CACHE_DISABLE=true \
        "$CAP" "../$shader.spv" "$BUILD/raw-$name" $opts > radv_capture.log 2>&1 ) || { cat "$d/radv_capture.log"; exit 1; }
    rm -rf "$cache"
    sed -i "s#$BUILD/raw-$name#raw#g" "$d/radv_capture.log"
    cp "$BUILD/raw-$name/buffers.txt" "$d/buffers.txt"
    python3 $RC/pm4_listing.py "$BUILD/raw-$name/submit0" --check > "$BUILD/pm4_listing.txt"
    # one listing is committed (the others are alike and ~25 KB each)
    [ "$name" != img_storage-w32 ] || cp "$BUILD/pm4_listing.txt" "$d/pm4_listing.txt"
    python3 -m wavelift import-radv "$BUILD/raw-$name" -o "$BUILD/$name.wlcap" --target $target > /dev/null
    gzip -9n < "$BUILD/$name.wlcap" > "$FIX/captures/$name.wlcap.gz"
    cat > "$d/command.txt" <<EOT
# run in $d (radv_capture built by tools/radv_capture/build.sh; all of it is
# tools/radv_capture/record_images.sh); ../inputs made by tools/radv_capture/make_image_inputs.py
glslangValidator -V --target-env vulkan1.3 ../$shader.comp -o ../$shader.spv
XDG_CACHE_HOME=\$(mktemp -d) RADV_FORCE_FAMILY=$fam MESA_SHADER_CACHE_DISABLE=true radv_capture ../$shader.spv raw $opts
python3 tools/radv_capture/pm4_listing.py raw/submit0 --check > pm4_listing.txt
wavelift import-radv raw -o $name.wlcap --target $target && gzip -9n < $name.wlcap > ../captures/$name.wlcap.gz
EOT
done
# lavapipe's answer (the same application, run_lavapipe.c), result bindings only; not for
# img_mips: lavapipe does not implement VK_AMD_shader_image_load_store_lod (its stores all land
# in level 0), so NumPy is that shader's oracle (test_radv_images.py)
for shader in img_storage img_formats img_sample texel_buffers img_mipsample img_mip3d img_border; do
    WANT_SHADER=$shader wanted "$@" || continue
    out=$FIX/lavapipe/$shader
    rm -rf "$out" "$BUILD/lvp"
    # shellcheck disable=SC2086
    ( cd "$FIX/inputs" && "$BUILD/run_lavapipe" "../$shader.spv" "$BUILD/lvp" ${OPTS[$shader]} 2> /dev/null )
    mkdir -p "$out"
    for f in "$BUILD"/lvp/set*_binding*.bin; do
        # inputs that the shader only reads are not results (the test reads the input files)
        case "$shader:$(basename "$f")" in
        img_storage:set0_binding[024].bin | img_sample:set0_binding[0-5].bin | texel_buffers:set0_binding[01].bin) ;;
        img_mipsample:set0_binding[0-5].bin | img_mip3d:set0_binding[0-3].bin) ;;
        img_border:set0_binding[0-8].bin) ;;
        *) cp "$f" "$out/" ;;
        esac
    done
    echo "run_lavapipe ../$shader.spv OUT ${OPTS[$shader]}   # in a capture directory; tools/radv_capture/record_images.sh" > "$out/command.txt"
done
