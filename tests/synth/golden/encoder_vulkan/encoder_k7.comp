#version 450
// encoder_k7.comp - k7: transpose, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:69: op transpose(ks,perm=[0,2,1,3]) >> kh
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
#define ks(i) arena[294912u + (i)] /* f32, a temporary */
#define kh(i) arena[589824u + (i)] /* f32, a temporary */

void main() {
    for (uint o = gl_GlobalInvocationID.x; o < 49152u; o += gl_NumWorkGroups.x * 256u) {
        const int c3 = int(o / 1u % 32u);
        const int c2 = int(o / 32u % 128u);
        const int c1 = int(o / 4096u % 12u);
        const int c0 = int(o / 49152u % 1u);
        kh(o) = ks(uint(0 + c0 * 49152 + c1 * 32 + c2 * 384 + c3 * 1));
    }
}
