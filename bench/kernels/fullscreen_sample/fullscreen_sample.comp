#version 450
// bench/bench_sampling.py: a full-screen pass (1920x1080, 8x8 groups) that samples two
// textures at the pixel centre (textureLod at LOD 0: image_sample_lz) and writes a render
// target (a storage image): out = a * tex0(uv) + b * tex1(uv), a and b from push constants.
layout(local_size_x = 8, local_size_y = 8) in;
layout(push_constant) uniform Push {
    uint width;
    uint height;
    float a;
    float b;
} pc;
layout(set = 0, binding = 0) uniform sampler2D tex0;
layout(set = 0, binding = 1) uniform sampler2D tex1;
layout(set = 0, binding = 2, rgba8) uniform writeonly image2D dst;
void main()
{
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height)
        return;
    vec2 uv = (vec2(p) + 0.5) / vec2(pc.width, pc.height);
    vec4 c = pc.a * textureLod(tex0, uv, 0.0) + pc.b * textureLod(tex1, uv, 0.0);
    imageStore(dst, ivec2(p), c);
}
