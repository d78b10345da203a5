#version 450
// residual_mlp_k1.comp - k1: elementwise, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   residual_mlp.c:27: op add(h,u) >> h
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define h(i) arena[0u + (i)] /* f32, a temporary */
#define u(i) arena[16u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 16u; o += gl_NumWorkGroups.x * 256u) {
        const uint i = o;
        /* residual_mlp.c:27: op add(h,u) >> h */
        float v0 = OI_ROUND_F32(OI_S_add(h(i), u(i)));
        h(i) = float(v0);
    }
}
