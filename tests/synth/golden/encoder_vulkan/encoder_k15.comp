#version 450
// encoder_k15.comp - k15: matmul, 2 statements (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:77: op gemm(ffn,W2[l],b2[l]) >> proj
//   bench_encoder.c:78: op add(h,proj) >> res
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint W2_at; uint b2_at; } pc;
#define ffn(i) arena[0u + (i)] /* f32, a temporary */
#define W2(i) model[pc.W2_at + (i)] /* W2(l): the entry the step pushes */
#define b2(i) model[pc.b2_at + (i)] /* b2(l): the entry the step pushes */
#define proj(i) arena[835584u + (i)] /* f32, a temporary */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define res(i) arena[884736u + (i)] /* f32, a temporary */

const uint M = 128u, N = 384u, K = 1536u;
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
            a_tile[p][r] = row0 + r < M && p0 + p < K ? ffn((row0 + r) * K + p0 + p) : 0.0;
        }
        for (uint e = tid; e < KT * TILE; e += T * T) {
            const uint p = e / TILE, c = e % TILE;
            b_tile[p][c] = p0 + p < K && col0 + c < N ? W2((p0 + p) * N + col0 + c) : 0.0;
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
            /* bench_encoder.c:77: op gemm(ffn,W2[l],b2[l]) >> proj */
            acc_j = acc_j + b2(j);
            float v0 = acc_j;
            proj(i) = v0;
            /* bench_encoder.c:78: op add(h,proj) >> res */
            float v1 = OI_ROUND_F32(OI_S_add(h(i), v0));
            res(i) = float(v1);
        }
}
