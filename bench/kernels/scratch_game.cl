/* scratch_game.cl - the PoCL baseline of bench/bench_scratch.py.
 *
 * Mirrors tests/fixtures/glsl/scratch_game.comp (the GLSL source of the ACO scratch_game binaries
 * that bench_scratch.py runs through wavelift) statement for statement: a per-work-item "game"
 * state in a dynamically indexed private array of 96 uints, a 2-D grid whose work-item (x, y)
 * owns element i = y * width + x.  All arithmetic is uint32 and wrapping, as in the GLSL, so the
 * result is bit-exact to wavelift's run of the ACO binary and to the NumPy reference
 * (tests/scratch/references.py: ref_scratch_game); bench_scratch.py checks both on every run.
 *   i = y*width + x; s = seeds[i]
 *   cells[k] = (s >> (k & 31)) ^ (k * 2654435761)          k = 0..95
 *   pos = s % 96; score = 0
 *   repeat steps times:
 *       v = cells[pos]; score += v & 0xff
 *       cells[pos] = v * 1664525 + 1013904223
 *       cells[(pos + 47) % 96] ^= score
 *       pos = (pos + 1 + (v >> 27)) % 96
 *   result[i] = score ^ cells[(s >> 8) % 96]
 * The GLSL's push constants (width, steps) are kernel arguments here; its 8x8 local size is the
 * launch's business (bench_scratch.py gives PoCL the work-group size that runs fastest for it).
 * Not built for amdgcn: wavelift runs the ACO binaries of the GLSL, PoCL runs this.
 */
__kernel void scratch_game(__global const uint *seeds, __global uint *result, uint width, uint steps)
{
    uint x = get_global_id(0), y = get_global_id(1);
    uint i = y * width + x;
    uint s = seeds[i];
    uint cells[96];
    for (uint k = 0u; k < 96u; k++)
        cells[k] = (s >> (k & 31u)) ^ (k * 2654435761u);
    uint pos = s % 96u;
    uint score = 0u;
    for (uint t = 0u; t < steps; t++) {
        uint v = cells[pos];
        score += v & 0xffu;
        cells[pos] = v * 1664525u + 1013904223u;
        cells[(pos + 47u) % 96u] ^= score;
        pos = (pos + 1u + (v >> 27)) % 96u;
    }
    result[i] = score ^ cells[(s >> 8) % 96u];
}
