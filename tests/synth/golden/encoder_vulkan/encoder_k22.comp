#version 450
// encoder_k22.comp - k15's slices summed: matmul, 2 statements (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:77: op gemm(ffn,W2[l],b2[l]) >> proj
//   bench_encoder.c:78: op add(h,proj) >> res
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint W2_at; uint b2_at; } pc; /* set when the step is recorded */
#define ffn(i) arena[0u + (i)] /* f32, a temporary */
#define W2(i) model[pc.W2_at - pc.oi_mb + (i)] /* W2(l): the entry the step pushes */
#define b2(i) model[pc.b2_at - pc.oi_mb + (i)] /* b2(l): the entry the step pushes */
#define proj(i) arena[835584u + (i)] /* f32, a temporary */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define res(i) arena[884736u + (i)] /* f32, a temporary */

const uint M = 128u, N = 384u, SLICES = 20u, SPLIT_AT = 4472832u; /* k15's partial products */

float gemm_partial(uint at) { return arena[SPLIT_AT + at]; }
#include "oi_gemm_slices.glsl"

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    const uint i = r * 384u + j;
    /* bench_encoder.c:77: op gemm(ffn,W2[l],b2[l]) >> proj */
    acc_j = acc_j + b2(j);
    float v0 = acc_j;
    proj(i) = v0;
    /* bench_encoder.c:78: op add(h,proj) >> res */
    float v1 = OI_ROUND_F32(OI_S_add(h(i), v0));
    res(i) = float(v1);
}

void main() {
    uint e = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
             gl_LocalInvocationID.x;
    if (e < M * N)
        mm_store(0u, e / N, e % N, gemm_slices_sum(e, M * N, SLICES), 0u);
}
