/* bench.cl - wavelift benchmark kernels (bench/bench_exec.py). Same conventions as the test
 * fixtures: wl_builtins.h is force-included for clang-19 (no device libraries, so only
 * __builtin_* math); on PoCL tests/reference/pocl.py prepends its shim instead.
 */

/* Full-screen elementwise: one work-item per pixel of a width x height rgba8 image (2-D launch).
 *   k = w[i] * gain;  each colour channel c -> (uint)clamp(c * k + bias, 0, 255); alpha kept.
 * The clamp is done with fminf/fmaxf; c * k + bias may be contracted to an fma by either
 * compiler, so channels may differ by 1 between wavelift and PoCL at exact .0 boundaries.
 */
__kernel void shade(__global const uint *px, __global const float *w, __global uint *out,
                    uint width, uint height, float gain, float bias)
{
    uint x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    uint i = y * width + x;
    uint p = px[i];
    float k = w[i] * gain;
    uint r = p & 255u, g = (p >> 8) & 255u, b = (p >> 16) & 255u, a = p >> 24;
    uint r2 = (uint)__builtin_fminf(__builtin_fmaxf((float)r * k + bias, 0.0f), 255.0f);
    uint g2 = (uint)__builtin_fminf(__builtin_fmaxf((float)g * k + bias, 0.0f), 255.0f);
    uint b2 = (uint)__builtin_fminf(__builtin_fmaxf((float)b * k + bias, 0.0f), 255.0f);
    out[i] = r2 | (g2 << 8) | (b2 << 16) | (a << 24);
}

/* Loop-heavy and divergent: Collatz step counts. Every lane runs its own number of iterations
 * (0 .. cap) and takes the odd or even branch independently.
 *   n = start[gid]; s = 0
 *   while n != 1 and s < cap:  n = n odd ? 3n + 1 : n / 2  (uint32, wrapping); s += 1
 *   steps[gid] = s
 */
__kernel void collatz(__global const uint *start, __global uint *steps, uint cap)
{
    uint gid = get_global_id(0);
    uint n = start[gid];
    uint s = 0;
    while (n != 1u && s < cap) {
        if (n & 1u)
            n = 3u * n + 1u;
        else
            n >>= 1;
        s++;
    }
    steps[gid] = s;
}
