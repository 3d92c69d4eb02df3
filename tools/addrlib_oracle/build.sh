#!/bin/sh
# tools/addrlib_oracle/build.sh [OUTDIR] - build addr_oracle (addr_oracle.cpp, our own driver) with
# Mesa's addrlib compiled from Debian's Mesa 22.3.6 source ($MESA_SRC, default
# /tmp/mesasrc/mesa-22.3.6; tools/radv_capture/README.md says how the project fetches it without
# touching /etc/apt).  Nothing of Mesa is copied or committed: the objects and the binary go to
# OUTDIR (default tools/addrlib_oracle/build/, git-ignored).  Prints the binary's path.
# Exit 3 when the source is absent (the tests then skip).
set -eu
M=${MESA_SRC:-/tmp/mesasrc/mesa-22.3.6}
D=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$D/build}
A=$M/src/amd/addrlib
[ -f "$A/src/gfx10/gfx10addrlib.cpp" ] || { echo "addrlib source not found under $A (set MESA_SRC)" >&2; exit 3; }
command -v g++ > /dev/null || { echo "g++ not installed" >&2; exit 3; }
# NDEBUG as in Mesa's release builds (what drivers run): addrlib returns an error for a surface
# it rejects instead of stopping on an assertion
mkdir -p "$OUT/obj-release"
INC="-I$A/inc -I$A/src -I$A/src/core -I$A/src/chip/gfx9 -I$A/src/chip/gfx10 -I$A/src/chip/gfx11 -I$A/src/chip/r800 -I$M/src -I$M/include"
FLAGS="-O1 -w -DNDEBUG -DADDR_FASTCALL= -DLITTLEENDIAN_CPU"
for f in addrinterface core/addrelemlib core/addrlib core/addrlib1 core/addrlib2 core/addrobject core/coord \
         gfx9/gfx9addrlib gfx10/gfx10addrlib gfx11/gfx11addrlib r800/ciaddrlib r800/egbaddrlib r800/siaddrlib; do
    o="$OUT/obj-release/$(basename $f).o"
    if [ ! -f "$o" ] || [ "$A/src/$f.cpp" -nt "$o" ]; then
        # shellcheck disable=SC2086  # $INC and $FLAGS are several options
        g++ $FLAGS $INC -c "$A/src/$f.cpp" -o "$o.$$" && mv -f "$o.$$" "$o"
    fi
done
# shellcheck disable=SC2086
# written under a private name and renamed: test workers may build it at the same time, and one
# must never run (or link) another's half-written file
g++ $FLAGS $INC "$D/addr_oracle.cpp" "$OUT"/obj-release/*.o -o "$OUT/addr_oracle.$$"
mv -f "$OUT/addr_oracle.$$" "$OUT/addr_oracle"
echo "$OUT/addr_oracle"
