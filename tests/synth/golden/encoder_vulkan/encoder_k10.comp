#version 450
// encoder_k10.comp - k10: transpose, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:72: op transpose(ctx,perm=[0,2,1,3]) >> ctx_s
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define ctx_(i) arena[688128u + (i)] /* f32, a temporary */
#define ctx_s(i) arena[737280u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 49152u; o += gl_NumWorkGroups.x * 256u) {
        const int c3 = int(o / 1u % 32u);
        const int c2 = int(o / 32u % 12u);
        const int c1 = int(o / 384u % 128u);
        const int c0 = int(o / 49152u % 1u);
        ctx_s(o) = ctx_(uint(0 + c0 * 49152 + c1 * 32 + c2 * 4096 + c3 * 1));
    }
}
