#version 450
// encoder_k10.comp - k10: transpose, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:71: op transpose(ctx,perm=[0,2,1,3]) >> ctx_s
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define ctx_(i) arena[688128u + (i)] /* f32, a temporary */
#define ctx_s(i) arena[737280u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 49152u; o += gl_NumWorkGroups.x * 256u) {
        const uint at = 0u + o / 1u % 32u * 1u + o / 32u % 12u * 4096u + o / 384u % 128u * 32u + o / 49152u % 1u * 49152u;
        ctx_s(o) = ctx_(at);
    }
}
