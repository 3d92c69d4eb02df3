/* lds.cl - LDS and barrier kernels for the CUDA backend's kernel-time benchmarks (issue 24
 * item 5): a 16x16-tiled matrix multiply, a 5x5 stencil through an LDS tile, a histogram with
 * LDS atomics, a workgroup reduction and a workgroup prefix sum.  Every result is exact on any
 * evaluation order (integer arithmetic; matmul16's inputs are small integers held in floats,
 * so every product and partial sum is an exact f32), so the translated kernels and the native
 * ones in native.cu must agree bit for bit.  Built by BUILD_COMMANDS (clang-19, gfx1030). */

__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void matmul16(__global const float *a, __global const float *b, __global float *c, uint n)
{
    __local float ta[16][16], tb[16][16];
    uint tx = get_local_id(0), ty = get_local_id(1);
    uint col = get_group_id(0) * 16u + tx, row = get_group_id(1) * 16u + ty;
    float acc = 0.0f;
    for (uint k0 = 0u; k0 < n; k0 += 16u) {
        ta[ty][tx] = a[row * n + k0 + tx];
        tb[ty][tx] = b[(k0 + ty) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0u; k < 16u; k++)
            acc += ta[ty][k] * tb[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    c[row * n + col] = acc;
}

static inline int clampi(int v, int hi) { return v < 0 ? 0 : v > hi ? hi : v; }

/* out[y][x] = the sum of in over the 5x5 square around (x, y), edges clamped */
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void stencil5(__global const uint *in, __global uint *out, uint w, uint h)
{
    __local uint tile[20][20];
    int lx = (int)get_local_id(0), ly = (int)get_local_id(1);
    int gx = (int)get_group_id(0) * 16, gy = (int)get_group_id(1) * 16;
    for (int i = ly * 16 + lx; i < 400; i += 256) {
        int ty = i / 20, tx = i % 20;
        int x = clampi(gx + tx - 2, (int)w - 1), y = clampi(gy + ty - 2, (int)h - 1);
        tile[ty][tx] = in[y * (int)w + x];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint s = 0u;
    for (int dy = 0; dy < 5; dy++)
        for (int dx = 0; dx < 5; dx++)
            s += tile[ly + dy][lx + dx];
    int x = gx + lx, y = gy + ly;
    if (x < (int)w && y < (int)h)
        out[y * (int)w + x] = s;
}

/* hist[v & 255] counts the words of in (a grid-stride loop; LDS atomics, then one global add
 * per bin and group) */
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void histogram(__global const uint *in, __global uint *hist, uint n)
{
    __local uint bins[256];
    uint l = get_local_id(0);
    bins[l] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&bins[in[i] & 255u]);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (bins[l] != 0u)
        atomic_add(&hist[l], bins[l]);
}

/* out[group] = the sum of the group's 1024 words (4 per work-item, then a tree in LDS) */
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void reduce1024(__global const uint *in, __global uint *out)
{
    __local uint part[256];
    uint l = get_local_id(0);
    __global const uint *p = in + get_group_id(0) * 1024u;
    part[l] = p[l] + p[l + 256u] + p[l + 512u] + p[l + 768u];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 128u; s > 0u; s >>= 1) {
        if (l < s)
            part[l] += part[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0u)
        out[get_group_id(0)] = part[0];
}

/* out[i] = in[group start] + ... + in[i]: an inclusive prefix sum within each group of 256
 * (Hillis-Steele, two LDS buffers) */
__kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void scan256(__global const uint *in, __global uint *out)
{
    __local uint buf[2][256];
    uint l = get_local_id(0), g = get_global_id(0);
    uint p = 0u;
    buf[0][l] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1u; off < 256u; off <<= 1) {
        uint v = buf[p][l];
        if (l >= off)
            v += buf[p][l - off];
        buf[1u - p][l] = v;
        p = 1u - p;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[g] = buf[p][l];
}
