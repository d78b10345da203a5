#version 450
// encoder_k6.comp - k6: transpose, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:68: op transpose(qs,perm=[0,2,1,3]) >> qh
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define qs(i) arena[245760u + (i)] /* f32, a temporary */
#define qh(i) arena[540672u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 49152u; o += gl_NumWorkGroups.x * 256u) {
        const int c3 = int(o / 1u % 32u);
        const int c2 = int(o / 32u % 128u);
        const int c1 = int(o / 4096u % 12u);
        const int c0 = int(o / 49152u % 1u);
        qh(o) = qs(uint(0 + c0 * 49152 + c1 * 32 + c2 * 384 + c3 * 1));
    }
}
