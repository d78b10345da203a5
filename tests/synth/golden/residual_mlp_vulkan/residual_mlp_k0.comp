#version 450
// residual_mlp_k0.comp - k0: matmul, 3 statements (synthesized by OpenInfer for any Vulkan 1.1 device)
//   residual_mlp.c:24: op matmul(h,W[l]) >> u
//   residual_mlp.c:25: op add(u,b[l]) >> u
//   residual_mlp.c:26: op relu(u) >> u
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint W_at; uint b_at; } pc;
#define h(i) arena[0u + (i)] /* f32, a temporary */
#define W(i) model[pc.W_at + (i)] /* W(l): the entry the step pushes */
#define u(i) arena[16u + (i)] /* f32, a temporary */
#define b(i) model[pc.b_at + (i)] /* b(l): the entry the step pushes */

const uint M = 2u, N = 8u, K = 8u;
const uint T = 16u, R = 1u, TILE = 16u, KT = 16u; /* T x T threads of R x R results */
shared float a_tile[KT][TILE]; /* A[row0 + r, p0 + p] at [p][r] */
shared float b_tile[KT][TILE]; /* B[p0 + p, col0 + c] at [p][c] */

void main() {
    const uint tid = gl_LocalInvocationID.x, tr = tid / T, tc = tid % T;
    const uint row0 = gl_WorkGroupID.y * TILE, col0 = gl_WorkGroupID.x * TILE;
    float acc[R][R];
    for (uint m = 0u; m < R; m++)
        for (uint n = 0u; n < R; n++)
            acc[m][n] = 0.0;
    for (uint p0 = 0u; p0 < K; p0 += KT) {
        for (uint e = tid; e < KT * TILE; e += T * T) {
            const uint r = e / KT, p = e % KT;
            a_tile[p][r] = row0 + r < M && p0 + p < K ? h((row0 + r) * K + p0 + p) : 0.0;
        }
        for (uint e = tid; e < KT * TILE; e += T * T) {
            const uint p = e / TILE, c = e % TILE;
            b_tile[p][c] = p0 + p < K && col0 + c < N ? W((p0 + p) * N + col0 + c) : 0.0;
        }
        barrier();
        for (uint p = 0u; p < KT; p++)
            for (uint m = 0u; m < R; m++)
                for (uint n = 0u; n < R; n++)
                    acc[m][n] = OI_S_mac(acc[m][n], a_tile[p][tr + m * T], b_tile[p][tc + n * T]);
        barrier();
    }
    for (uint m = 0u; m < R; m++)
        for (uint n = 0u; n < R; n++) {
            const uint r = row0 + tr + m * T, j = col0 + tc + n * T;
            if (r >= M || j >= N)
                continue;
            const uint i = r * N + j;
            float acc_j = acc[m][n];
            /* residual_mlp.c:24: op matmul(h,W[l]) >> u */
            float v0 = acc_j;
            /* residual_mlp.c:25: op add(u,b[l]) >> u */
            float v1 = OI_ROUND_F32(OI_S_add(v0, b(i % 8)));
            /* residual_mlp.c:26: op relu(u) >> u */
            float v2 = OI_S_relu_raw(v1, 0.0, OI_ROUND_F32);
            v2 = OI_ROUND_F32(v2);
            u(i) = float(v2);
        }
}
