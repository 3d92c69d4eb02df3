/* native.cu - the bench kernels written directly in CUDA, the baseline bench/gpu_check.py puts
 * next to the translated RDNA programs (same arithmetic as bench/kernels/bench.cl and
 * tests/fixtures/glsl/scratch_game.comp).  Compiled at run time with NVRTC (-arch of the GPU,
 * default NVRTC options: -O3, fmad on), timed with CUDA events. */
// bench.cl's shade for one pixel (the kernels below differ only in which pixel a thread takes)
static __device__ __forceinline__ void shade_px(const unsigned *px, const float *w, unsigned *out, unsigned i,
                                                float gain, float bias)
{
    unsigned p = px[i];
    float k = w[i] * gain;
    unsigned r = p & 255u, g = (p >> 8) & 255u, b = (p >> 16) & 255u, a = p >> 24;
    unsigned r2 = (unsigned)fminf(fmaxf((float)r * k + bias, 0.0f), 255.0f);
    unsigned g2 = (unsigned)fminf(fmaxf((float)g * k + bias, 0.0f), 255.0f);
    unsigned b2 = (unsigned)fminf(fmaxf((float)b * k + bias, 0.0f), 255.0f);
    out[i] = r2 | (g2 << 8) | (b2 << 16) | (a << 24);
}

extern "C" __global__ void shade(const unsigned *px, const float *w, unsigned *out,
                                 unsigned width, unsigned height, float gain, float bias)
{
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    shade_px(px, w, out, y * width + x, gain, bias);
}

// shade's body in the guest's layout: 8x8 tiles, blockDim.x / 64 of them a 1-D block (decision
// 0046's slots), so the translated kernel's shape can be told apart from its code
extern "C" __global__ void shade_tiles(const unsigned *px, const float *w, unsigned *out,
                                       unsigned width, unsigned height, float gain, float bias)
{
    unsigned tiles_x = (width + 7u) / 8u, tile = blockIdx.x * (blockDim.x / 64u) + threadIdx.x / 64u;
    unsigned x = (tile % tiles_x) * 8u + threadIdx.x % 8u, y = (tile / tiles_x) * 8u + (threadIdx.x / 8u) % 8u;
    if (x >= width || y >= height)
        return;
    shade_px(px, w, out, y * width + x, gain, bias);
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

/* lds.cl's kernels (16x16 / 256-thread blocks, as the guest's groups) */
extern "C" __global__ void matmul16(const float *a, const float *b, float *c, unsigned n)
{
    __shared__ float ta[16][16], tb[16][16];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned col = blockIdx.x * 16u + tx, row = blockIdx.y * 16u + ty;
    float acc = 0.0f;
    for (unsigned k0 = 0u; k0 < n; k0 += 16u) {
        ta[ty][tx] = a[row * n + k0 + tx];
        tb[ty][tx] = b[(k0 + ty) * n + col];
        __syncthreads();
        for (unsigned k = 0u; k < 16u; k++)
            acc += ta[ty][k] * tb[k][tx];
        __syncthreads();
    }
    c[row * n + col] = acc;
}

extern "C" __global__ void stencil5(const unsigned *in, unsigned *out, unsigned w, unsigned h)
{
    __shared__ unsigned tile[20][20];
    int lx = threadIdx.x, ly = threadIdx.y, gx = blockIdx.x * 16, gy = blockIdx.y * 16;
    for (int i = ly * 16 + lx; i < 400; i += 256) {
        int ty = i / 20, tx = i % 20;
        int x = min(max(gx + tx - 2, 0), (int)w - 1), y = min(max(gy + ty - 2, 0), (int)h - 1);
        tile[ty][tx] = in[y * (int)w + x];
    }
    __syncthreads();
    unsigned s = 0u;
    for (int dy = 0; dy < 5; dy++)
        for (int dx = 0; dx < 5; dx++)
            s += tile[ly + dy][lx + dx];
    int x = gx + lx, y = gy + ly;
    if (x < (int)w && y < (int)h)
        out[y * (int)w + x] = s;
}

extern "C" __global__ void histogram(const unsigned *in, unsigned *hist, unsigned n)
{
    __shared__ unsigned bins[256];
    unsigned l = threadIdx.x;
    bins[l] = 0u;
    __syncthreads();
    for (unsigned i = blockIdx.x * blockDim.x + l; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[in[i] & 255u], 1u);
    __syncthreads();
    if (bins[l] != 0u)
        atomicAdd(&hist[l], bins[l]);
}

extern "C" __global__ void reduce1024(const unsigned *in, unsigned *out)
{
    __shared__ unsigned part[256];
    unsigned l = threadIdx.x;
    const unsigned *p = in + blockIdx.x * 1024u;
    part[l] = p[l] + p[l + 256u] + p[l + 512u] + p[l + 768u];
    __syncthreads();
    for (unsigned s = 128u; s > 0u; s >>= 1) {
        if (l < s)
            part[l] += part[l + s];
        __syncthreads();
    }
    if (l == 0u)
        out[blockIdx.x] = part[0];
}

extern "C" __global__ void scan256(const unsigned *in, unsigned *out)
{
    __shared__ unsigned buf[2][256];
    unsigned l = threadIdx.x, g = blockIdx.x * 256u + l, p = 0u;
    buf[0][l] = in[g];
    __syncthreads();
    for (unsigned off = 1u; off < 256u; off <<= 1) {
        unsigned v = buf[p][l];
        if (l >= off)
            v += buf[p][l - off];
        buf[1u - p][l] = v;
        p = 1u - p;
        __syncthreads();
    }
    out[g] = buf[p][l];
}
