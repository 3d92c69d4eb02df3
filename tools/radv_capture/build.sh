#!/bin/sh
# tools/radv_capture/build.sh [OUTDIR] - build radv_capture (README.md) into OUTDIR (default
# tools/radv_capture/build/, git-ignored).
#
# It needs the Mesa 22.3.6 source headers for struct layouts only (nothing of Mesa is copied,
# committed or linked; libvulkan_radeon.so is dlopen'ed at run time). When $MESA_SRC (default
# /tmp/mesasrc/mesa-22.3.6) lacks them, Debian's own source package is fetched with apt-get
# source into its parent directory, from deb-src lines made from the machine's configured Debian
# sources; /etc/apt is left alone (apt's lists go to /tmp/aptsrc).
# Needs: gcc, g++, python3, apt-get (for the fetch), and to run it mesa-vulkan-drivers 22.3.6-1+deb12u2.
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

mkdir -p "$OUT/obj"
# Images (README.md): the winsys's surface_init runs Mesa's own ac_compute_surface and addrlib,
# compiled here from the same source, as Mesa's build does (the generated headers and tables
# made by Mesa's own generators from its own sources; ac_surface.c without its NIR helpers,
# which need NIR's generated headers and which RADV's surfaces never call). Objects are kept
# in $OUT/obj and rebuilt when missing.
command -v g++ > /dev/null || { echo "radv_capture: g++ is needed (addrlib is C++)" >&2; exit 3; }
O=$OUT/obj
A=$M/src/amd/addrlib
F=$M/src/util/format
R=$M/src/amd/registers
if [ ! -f "$O/amdgfxregs.h" ]; then
    python3 "$R/makeregheader.py" "$R/gfx6.json" "$R/gfx7.json" "$R/gfx8.json" "$R/gfx81.json" \
        "$R/gfx9.json" "$R/gfx10.json" "$R/gfx103.json" "$R/gfx11.json" "$R/pkt3.json" \
        "$R/gfx10-rsrc.json" "$R/gfx11-rsrc.json" "$R/registers-manually-defined.json" \
        --sort address --guard AMDGFXREGS_H > "$O/amdgfxregs.h.tmp" && mv "$O/amdgfxregs.h.tmp" "$O/amdgfxregs.h"
fi
mkdir -p "$O/util/format"
[ -f "$O/util/format/u_format_pack.h" ] || python3 "$F/u_format_table.py" "$F/u_format.csv" --header > "$O/util/format/u_format_pack.h"
[ -f "$O/u_format_table.c" ] || python3 "$F/u_format_table.py" "$F/u_format.csv" > "$O/u_format_table.c"
if [ ! -f "$O/ac_surface_nonir.c" ]; then
    n=$(grep -n '^static nir_ssa_def \*gfx10_nir_meta_addr_from_coord' "$M/src/amd/common/ac_surface.c" | cut -d: -f1)
    [ -n "$n" ] || { echo "radv_capture: ac_surface.c is not Mesa 22.3.6's" >&2; exit 3; }
    head -n $((n - 1)) "$M/src/amd/common/ac_surface.c" | grep -v '^#define AC_SURFACE_INCLUDE_NIR' > "$O/ac_surface_nonir.c"
fi
CDEFS="-DHAVE_ENDIAN_H -DHAVE_TIMESPEC_GET -DHAVE_STRUCT_TIMESPEC -DHAVE_PTHREAD -DHAVE_LINUX_FUTEX_H"
CINC="-I$O -I$O/util/format -I$F -I$M/src/amd/common -I$M/src/amd -I$M/src -I$M/src/gallium/include -I$M/src/gallium/auxiliary -I$M/include -I$A/inc"
for f in "$O/ac_surface_nonir.c" "$O/u_format_table.c" "$M/src/util/futex.c"; do
    o="$O/$(basename "$f" .c).o"
    # shellcheck disable=SC2086  # several options
    [ -f "$o" ] || gcc -O1 -w -ffunction-sections -fdata-sections $CDEFS $CINC -c "$f" -o "$o"
done
AINC="-I$A/inc -I$A/src -I$A/src/core -I$A/src/chip/gfx9 -I$A/src/chip/gfx10 -I$A/src/chip/gfx11 -I$A/src/chip/r800 -I$M/src -I$M/include"
for f in addrinterface core/addrelemlib core/addrlib core/addrlib1 core/addrlib2 core/addrobject core/coord \
         gfx9/gfx9addrlib gfx10/gfx10addrlib gfx11/gfx11addrlib r800/ciaddrlib r800/egbaddrlib r800/siaddrlib; do
    o="$O/addr_$(basename $f).o"
    # NDEBUG, as Mesa's release builds (what RADV runs)
    # shellcheck disable=SC2086
    [ -f "$o" ] || g++ -O1 -w -DNDEBUG -DADDR_FASTCALL= -DLITTLEENDIAN_CPU $AINC -c "$A/src/$f.cpp" -o "$o"
done
# shellcheck disable=SC2086
gcc -O1 -g -Wall -Wno-unused-function -Wno-unused-variable -Wno-unused-but-set-variable $CDEFS \
    -I"$M/src/amd/vulkan" $CINC -c "$D/radv_capture.c" -o "$O/radv_capture.o"
g++ -Wl,--gc-sections "$O/radv_capture.o" "$O/ac_surface_nonir.o" "$O/u_format_table.o" "$O/futex.o" \
    "$O"/addr_*.o -o "$OUT/radv_capture" -ldl
echo "$OUT/radv_capture"
