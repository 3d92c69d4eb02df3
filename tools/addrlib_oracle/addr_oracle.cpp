// addr_oracle: Mesa's addrlib (built from Debian's Mesa 22.3.6 source by build.sh) as an oracle for
// wavelift/memory/layout.py.  Our own driver program: nothing of Mesa is copied here; addrlib is
// compiled from the unpacked source into a git-ignored build directory.
//
//   addr_oracle GB_ADDR_CONFIG CHIP_REV [FAMILY]
//
// reads one query per line on stdin and writes one answer per line:
//   A swmode rsrc bpp width height depth mips pipebankxor x y slice mip
//       -> the byte address Addr2ComputeSurfaceAddrFromCoord gives, or "E <code>"
//   I swmode rsrc bpp width height depth mips
//       -> "pitch height slices blockW blockH blockD sliceSize surfSize firstMipInTail"
//          then per mip: " offset macroBlockOffset mipTailOffset pitch height tailX tailY tailZ"
// rsrc: 0 = 1D, 1 = 2D, 2 = 3D (AddrResourceType).  Chip family: FAMILY, default AMDGPU_FAMILY_NV
// (143); 145 is AMDGPU_FAMILY_GFX1100 (GFX11's addrlib, chip revisions 0x01..0x0f).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "addrinterface.h"

static void* ADDR_API alloc_mem(const ADDR_ALLOCSYSMEM_INPUT* in) { return malloc(in->sizeInBytes); }
static ADDR_E_RETURNCODE ADDR_API free_mem(const ADDR_FREESYSMEM_INPUT* in) {
    free(in->pVirtAddr);
    return ADDR_OK;
}

int main(int argc, char** argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: addr_oracle GB_ADDR_CONFIG CHIP_REV [FAMILY]\n");
        return 2;
    }
    ADDR_CREATE_INPUT cin = {};
    ADDR_CREATE_OUTPUT cout_ = {};
    cin.size = sizeof(cin);
    cout_.size = sizeof(cout_);
    cin.chipEngine = 0x0000000D;  // CIASICIDGFXENGINE_ARCTICISLAND (core/addrlib.h)
    cin.chipFamily = argc == 4 ? (UINT_32)strtoul(argv[3], nullptr, 0) : 143;  // AMDGPU_FAMILY_NV
    cin.chipRevision = (UINT_32)strtoul(argv[2], nullptr, 0);
    cin.regValue.gbAddrConfig = (UINT_32)strtoul(argv[1], nullptr, 0);
    cin.callbacks.allocSysMem = alloc_mem;
    cin.callbacks.freeSysMem = free_mem;
    if (AddrCreate(&cin, &cout_) != ADDR_OK) {
        fprintf(stderr, "AddrCreate failed\n");
        return 1;
    }
    ADDR_HANDLE lib = cout_.hLib;
    char line[512];
    while (fgets(line, sizeof line, stdin)) {
        char kind = 0;
        unsigned sw, rsrc, bpp, w, h, d, mips, pbx = 0, x = 0, y = 0, slice = 0, mip = 0;
        int n = sscanf(line, " %c %u %u %u %u %u %u %u %u %u %u %u %u", &kind, &sw, &rsrc, &bpp, &w, &h, &d,
                       &mips, &pbx, &x, &y, &slice, &mip);
        if (kind == 'A' && n == 13) {
            ADDR2_COMPUTE_SURFACE_ADDRFROMCOORD_INPUT in = {};
            ADDR2_COMPUTE_SURFACE_ADDRFROMCOORD_OUTPUT out = {};
            in.size = sizeof(in);
            out.size = sizeof(out);
            in.swizzleMode = (AddrSwizzleMode)sw;
            in.resourceType = (AddrResourceType)rsrc;
            in.bpp = bpp;
            in.unalignedWidth = w;
            in.unalignedHeight = h;
            in.numSlices = d;
            in.numMipLevels = mips;
            in.numSamples = 1;
            in.numFrags = 1;
            in.pipeBankXor = pbx;
            in.x = x;
            in.y = y;
            in.slice = slice;
            in.mipId = mip;
            ADDR_E_RETURNCODE r = Addr2ComputeSurfaceAddrFromCoord(lib, &in, &out);
            if (r == ADDR_OK)
                printf("%llu\n", (unsigned long long)out.addr);
            else
                printf("E %d\n", (int)r);
        } else if (kind == 'I' && n >= 8) {
            ADDR2_COMPUTE_SURFACE_INFO_INPUT in = {};
            ADDR2_COMPUTE_SURFACE_INFO_OUTPUT out = {};
            ADDR2_MIP_INFO mi[16] = {};
            in.size = sizeof(in);
            out.size = sizeof(out);
            in.swizzleMode = (AddrSwizzleMode)sw;
            in.resourceType = (AddrResourceType)rsrc;
            in.bpp = bpp;
            in.width = w;
            in.height = h;
            in.numSlices = d;
            in.numMipLevels = mips;
            in.numSamples = 1;
            in.numFrags = 1;
            out.pMipInfo = mi;
            ADDR_E_RETURNCODE r = Addr2ComputeSurfaceInfo(lib, &in, &out);
            if (r != ADDR_OK) {
                printf("E %d\n", (int)r);
            } else {
                printf("%u %u %u %u %u %u %llu %llu %u", out.pitch, out.height, out.numSlices, out.blockWidth,
                       out.blockHeight, out.blockSlices, (unsigned long long)out.sliceSize,
                       (unsigned long long)out.surfSize, out.firstMipIdInTail);
                for (unsigned i = 0; i < mips && i < 16; i++)
                    printf(" %llu %llu %u %u %u %u %u %u", (unsigned long long)mi[i].offset,
                           (unsigned long long)mi[i].macroBlockOffset, mi[i].mipTailOffset, mi[i].pitch,
                           mi[i].height, mi[i].mipTailCoordX, mi[i].mipTailCoordY, mi[i].mipTailCoordZ);
                printf("\n");
            }
        } else {
            printf("E bad-query\n");
        }
        fflush(stdout);
    }
    AddrDestroy(lib);
    return 0;
}
