#version 450
// encoder_k17.comp - k0's slices summed: matmul, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:61: op gemm(h,Wq[l],bq[l]) >> q
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint Wq_at; uint bq_at; } pc; /* set when the step is recorded */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define Wq(i) model[pc.Wq_at - pc.oi_mb + (i)] /* Wq(l): the entry the step pushes */
#define bq(i) model[pc.bq_at - pc.oi_mb + (i)] /* bq(l): the entry the step pushes */
#define q_(i) arena[245760u + (i)] /* f32, a temporary */

const uint M = 128u, N = 384u, SLICES = 12u, SPLIT_AT = 933888u; /* k0's partial products */

float gemm_partial(uint at) { return arena[SPLIT_AT + at]; }
#include "oi_gemm_slices.glsl"

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    const uint i = r * 384u + j;
    /* bench_encoder.c:61: op gemm(h,Wq[l],bq[l]) >> q */
    acc_j = acc_j + bq(j);
    float v0 = acc_j;
    q_(i) = v0;
}

void main() {
    uint e = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
             gl_LocalInvocationID.x;
    if (e < M * N)
        mm_store(0u, e / N, e % N, gemm_slices_sum(e, M * N, SLICES), 0u);
}
