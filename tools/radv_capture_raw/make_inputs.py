#!/usr/bin/env python3
"""Deterministic input files for tools/radv_capture_raw/record.sh.

usage: make_inputs.py CAPTURE_NAME OUTDIR
Each capture's buffers and push constants are written as little-endian binary files.
"""

import struct
import sys


def u32s(vals):
    return struct.pack("<%dI" % len(vals), *[v & 0xFFFFFFFF for v in vals])


def main():
    name, out = sys.argv[1], sys.argv[2]

    def w(fname, data):
        with open("%s/%s" % (out, fname), "wb") as f:
            f.write(data)

    if name.startswith("scratch_array"):
        # struct Data { uint seed; uint count; int result[]; }: seed 7, 20 rounds, 256 results
        w("data.bin", u32s([7, 20] + [0] * 256))
    elif name.startswith("push_consts_ubo"):
        # Push { uint64_t base; uint count; uint shift; int bias; uint pad; } (24 bytes)
        w("push.bin", struct.pack("<QIIiI", 0x100000001, 50, 13, -7, 0))
        # Params { uvec4 mul; ivec4 offsets; } (std140, 32 bytes)
        w("ubo.bin", struct.pack("<4I4i", 0x9E3779B9, 1, 0, 0, 1, -2, 3, -4))
        # Values { uint64_t vals[]; }: 64 values
        w("vals.bin", struct.pack("<64Q", *[(i * 0x0123456789 + 7) & (2**64 - 1) for i in range(64)]))
    elif name.startswith("fullscreen"):
        wd, ht = 24, 16
        w("push.bin", struct.pack("<IIff", wd, ht, 1.5, 0.0625))
        n = wd * ht
        w("src.bin", u32s([(i * 0x01030507 + 0x10204080) for i in range(n)]))
        w("weight.bin", struct.pack("<%df" % n, *[((i * 37) % 97) / 64.0 for i in range(n)]))
    elif name.startswith("scratch_game"):
        # Push { uint width; uint steps; }: a 16x16 grid, 25 steps
        w("push.bin", u32s([16, 25]))
        w("seeds.bin", u32s([(i * 2654435761 + 12345) for i in range(256)]))
    elif name.startswith("int64_"):
        # int64_div / int64_misc: 320 lanes (6 groups of 64, a partial tail): every pair of the
        # edge values as (a, b), then seeded mixed-magnitude words; c cycles 32-bit edges
        e64 = [
            0,
            1,
            2,
            3,
            7,
            10,
            0x7FFFFFFF,
            0x80000000,
            0xFFFFFFFF,
            1 << 32,
            (1 << 32) + 1,
            (1 << 63) - 1,
            1 << 63,
            (1 << 63) + 1,
            2**64 - 1,
            0x123456789ABCDEF0,
        ]
        e32 = [0, 1, 2, 3, 7, 63, 64, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFF, 0x80000001, 0xFFFFFFC1]
        n, st = 320, 0x2545F4914F6CDD1D
        a, b, c = [], [], []

        def rnd(bits):  # xorshift64*, then a seeded right shift half the time
            nonlocal st
            st ^= st >> 12
            st ^= (st << 25) & (2**64 - 1)
            st ^= st >> 27
            v = (st * 0x2545F4914F6CDD1D) & (2**64 - 1)
            v &= (1 << bits) - 1
            return v >> (v % bits) if (v >> 7) & 1 else v

        for k in range(n):
            if k < len(e64) ** 2:
                a.append(e64[k // len(e64)])
                b.append(e64[k % len(e64)])
                c.append(e32[k % len(e32)])
            else:
                a.append(rnd(64))
                b.append(rnd(64))
                c.append(rnd(32))
        w("a.bin", struct.pack("<%dQ" % n, *a))
        w("b.bin", struct.pack("<%dQ" % n, *b))
        w("c.bin", u32s(c))
        # Push { uint64_t d64; uint d32; uint n; }
        w("push.bin", struct.pack("<QII", 0x100000007, 0xFFFFFFFB, n))
        if name.startswith("int64_atomic"):  # the atomics' cells start non-zero
            w("o.bin", struct.pack("<%dQ" % (16 * n), *[rnd(64) for _ in range(16 * n)]))
    else:
        sys.exit("unknown capture " + name)


if __name__ == "__main__":
    main()
