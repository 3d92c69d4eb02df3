#!/bin/sh
# tools/radv_capture/build.sh [OUTDIR] - build radv_capture (README.md) into OUTDIR (default
# tools/radv_capture/build/, git-ignored).
#
# It needs the Mesa 22.3.6 source headers for struct layouts only (nothing of Mesa is copied,
# committed or linked; libvulkan_radeon.so is dlopen'ed at run time). When $MESA_SRC (default
# /tmp/mesasrc/mesa-22.3.6) lacks them, Debian's own source package is fetched with apt-get
# source into its parent directory, from deb-src lines made from the machine's configured Debian
# sources; /etc/apt is left alone (apt's lists go to /tmp/aptsrc).
# Needs: gcc, apt-get (for the fetch), and to run it mesa-vulkan-drivers 22.3.6-1+deb12u2.
set -eu
MESA_VERSION=22.3.6
DEB_VERSION=22.3.6-1+deb12u2
M=${MESA_SRC:-/tmp/mesasrc/mesa-$MESA_VERSION}
D=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$(dirname "$0")/build}

if [ ! -f "$M/src/amd/vulkan/radv_radeon_winsys.h" ]; then
    echo "radv_capture: fetching Mesa $DEB_VERSION source (Debian) into $(dirname "$M")" >&2
    A=/tmp/aptsrc
    mkdir -p "$A/lists/partial" "$(dirname "$M")"
    [ -f /etc/apt/sources.list.d/debian.sources ] || {
        echo "no /etc/apt/sources.list.d/debian.sources: get mesa_$MESA_VERSION.orig.tar.gz by hand and set MESA_SRC" >&2; exit 3; }
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$A/src.sources"
    O="-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts=$A -o Dir::State::lists=$A/lists"
    # shellcheck disable=SC2086  # $O is several options
    apt-get $O update > /dev/null
    ( cd "$(dirname "$M")" && apt-get $O source --download-only "mesa=$DEB_VERSION" > /dev/null &&
      tar xzf "mesa_$MESA_VERSION.orig.tar.gz" "mesa-$MESA_VERSION/src" "mesa-$MESA_VERSION/include" )
    [ -f "$M/src/amd/vulkan/radv_radeon_winsys.h" ] || {
        echo "Mesa $MESA_VERSION source not found at $M after the fetch (set MESA_SRC)" >&2; exit 3; }
fi

mkdir -p "$OUT"
gcc -O1 -g -Wall -Wno-unused-function -Wno-unused-variable -DHAVE_ENDIAN_H \
    -I"$M/src/amd/vulkan" -I"$M/src" -I"$M/src/amd/common" -I"$M/src/amd" -I"$M/include" \
    "$D/radv_capture.c" -o "$OUT/radv_capture" -ldl
echo "$OUT/radv_capture"
