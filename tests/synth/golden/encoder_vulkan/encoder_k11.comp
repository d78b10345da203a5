#version 450
// encoder_k11.comp - k11: copy, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:73: op reshape(ctx_s,shape=[-1,384]) >> joined
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define ctx_s(i) arena[737280u + (i)] /* f32, a temporary */
#define joined(i) arena[737280u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 49152u; o += gl_NumWorkGroups.x * 256u) {
        joined(o) = ctx_s(o);
    }
}
