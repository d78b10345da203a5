#version 450
// encoder_k5.comp - k5: copy, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:67: op reshape(v,shape=[1,-1,12,32]) >> vs
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define v_(i) arena[344064u + (i)] /* f32, a temporary */
#define vs(i) arena[344064u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 49152u; o += gl_NumWorkGroups.x * 256u) {
        vs(o) = v_(o);
    }
}
