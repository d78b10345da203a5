#version 450
// residual_mlp_k0.comp - k0: matmul, 3 statements (synthesized by OpenInfer for any Vulkan 1.1 device)
//   residual_mlp.c:24: op matmul(h,W[l]) >> u
//   residual_mlp.c:25: op add(u,b[l]) >> u
//   residual_mlp.c:26: op relu(u) >> u
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint W_at; uint b_at; } pc; /* set when the step is recorded */
#define h(i) arena[0u + (i)] /* f32, a temporary */
#define W(i) model[pc.W_at - pc.oi_mb + (i)] /* W(l): the entry the step pushes */
#define u(i) arena[16u + (i)] /* f32, a temporary */
#define b(i) model[pc.b_at - pc.oi_mb + (i)] /* b(l): the entry the step pushes */

const uint M = 2u, N = 8u, K = 8u;
#define MM_T 16u /* MM_T x MM_T threads of 4 x 4 results */
#define BM 64u
#define BN 64u
#define BK 16u
/* the store loops unrolled by the driver, not by glslang: lavapipe computed a
 * gelu epilogue wrongly in 16 unrolled copies */
#define MM_STORE_UNROLL

bool float_math() { return true; }
uint mm_rows() { return M; }
uint mm_cols() { return N; }
uint mm_load_a(uint base, uint m, uint k) { return floatBitsToUint(h(m * K + k)); }
uint mm_load_b(uint base, uint k, uint n) { return floatBitsToUint(W(k * N + n)); }

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    const uint i = r * 8u + j;
    /* residual_mlp.c:24: op matmul(h,W[l]) >> u */
    float v0 = acc_j;
    /* residual_mlp.c:25: op add(u,b[l]) >> u */
    float v1 = OI_ROUND_F32(OI_S_add(v0, b(i % 8)));
    /* residual_mlp.c:26: op relu(u) >> u */
    float v2 = OI_S_relu_raw(v1, 0.0, OI_ROUND_F32);
    v2 = OI_ROUND_F32(v2);
    u(i) = float(v2);
}

#include "oi_matmul_tiles.glsl"

void main() { mm_tiles(0u, 0u, 0u, 0u, K); }
