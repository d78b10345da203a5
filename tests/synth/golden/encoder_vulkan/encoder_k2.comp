#version 450
// encoder_k2.comp - k2: matmul, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:63: op gemm(h,Wv[l],bv[l]) >> v
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint Wv_at; uint bv_at; } pc;
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define Wv(i) model[pc.Wv_at + (i)] /* Wv(l): the entry the step pushes */
#define bv(i) model[pc.bv_at + (i)] /* bv(l): the entry the step pushes */
#define v(i) arena[344064u + (i)] /* f32, a temporary */

const uint M = 128u, N = 384u, K = 384u;
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
            b_tile[p][c] = p0 + p < K && col0 + c < N ? Wv((p0 + p) * N + col0 + c) : 0.0;
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
            /* bench_encoder.c:63: op gemm(h,Wv[l],bv[l]) >> v */
            acc_j = acc_j + bv(j);
            float v0 = acc_j;
            v(i) = v0;
        }
}
