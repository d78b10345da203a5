#version 450
// encoder_k4.comp - k4: copy, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:66: op reshape(k,shape=[1,-1,12,32]) >> ks
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define k(i) arena[294912u + (i)] /* f32, a temporary */
#define ks(i) arena[294912u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 49152u; o += gl_NumWorkGroups.x * 256u) {
        ks(o) = k(o);
    }
}
