#version 450
// encoder_k3.comp - k3: copy, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:65: op reshape(q,shape=[1,-1,12,32]) >> qs
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define q_(i) arena[245760u + (i)] /* f32, a temporary */
#define qs(i) arena[245760u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 49152u; o += gl_NumWorkGroups.x * 256u) {
        qs(o) = q_(o);
    }
}
