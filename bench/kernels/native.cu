/* native.cu - the bench kernels written directly in CUDA, the baseline bench/gpu_check.py puts
 * next to the translated RDNA programs (same arithmetic as bench/kernels/bench.cl and
 * tests/fixtures/glsl/scratch_game.comp).  Compiled at run time with NVRTC (-arch of the GPU,
 * default NVRTC options: -O3, fmad on), timed with CUDA events. */
extern "C" __global__ void shade(const unsigned *px, const float *w, unsigned *out,
                                 unsigned width, unsigned height, float gain, float bias)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    unsigned i = y * width + x;
    unsigned p = px[i];
    float k = w[i] * gain;
    unsigned r = p & 255u, g = (p >> 8) & 255u, b = (p >> 16) & 255u, a = p >> 24;
    unsigned r2 = (unsigned)fminf(fmaxf((float)r * k + bias, 0.0f), 255.0f);
    unsigned g2 = (unsigned)fminf(fmaxf((float)g * k + bias, 0.0f), 255.0f);
    unsigned b2 = (unsigned)fminf(fmaxf((float)b * k + bias, 0.0f), 255.0f);
    out[i] = r2 | (g2 << 8) | (b2 << 16) | (a << 24);
}

extern "C" __global__ void collatz(const unsigned *start, unsigned *steps, unsigned cap)
{
    unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned n = start[gid];
    unsigned s = 0;
    while (n != 1u && s < cap) {
        if (n & 1u)
            n = 3u * n + 1u;
        else
            n >>= 1;
        s++;
    }
    steps[gid] = s;
}

/* scratch_game.comp: 2-D launch of 8x8 groups; `width` pixels per row */
extern "C" __global__ void scratch_game(const unsigned *seeds, unsigned *result, unsigned width,
                                        unsigned steps)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned i = y * width + x;
    unsigned s = seeds[i];
    unsigned cells[96];
    for (unsigned k = 0u; k < 96u; k++)
        cells[k] = (s >> (k & 31u)) ^ (k * 2654435761u);
    unsigned pos = s % 96u;
    unsigned score = 0u;
    for (unsigned t = 0u; t < steps; t++) {
        unsigned v = cells[pos];
        score += v & 0xffu;
        cells[pos] = v * 1664525u + 1013904223u;
        cells[(pos + 47u) % 96u] ^= score;
        pos = (pos + 1u + (v >> 27)) % 96u;
    }
    result[i] = score ^ cells[(s >> 8) % 96u];
}

/* tests/fixtures/opencl/basic.cl vadd */
extern "C" __global__ void vadd(const float *a, const float *b, float *c, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}
