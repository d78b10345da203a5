#version 450
// encoder_k8.comp - k8: transpose, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:70: op transpose(vs,perm=[0,2,1,3]) >> vh
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define vs(i) arena[344064u + (i)] /* f32, a temporary */
#define vh(i) arena[638976u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 49152u; o += gl_NumWorkGroups.x * 256u) {
        const int c3 = int(o / 1u % 32u);
        const int c2 = int(o / 32u % 128u);
        const int c1 = int(o / 4096u % 12u);
        const int c0 = int(o / 49152u % 1u);
        vh(o) = vs(uint(0 + c0 * 49152 + c1 * 32 + c2 * 384 + c3 * 1));
    }
}
