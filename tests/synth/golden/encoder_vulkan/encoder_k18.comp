#version 450
// encoder_k18.comp - k1's slices summed: matmul, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:62: op gemm(h,Wk[l],bk[l]) >> k
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint Wk_at; uint bk_at; } pc; /* set when the step is recorded */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define Wk(i) model[pc.Wk_at - pc.oi_mb + (i)] /* Wk(l): the entry the step pushes */
#define bk(i) model[pc.bk_at - pc.oi_mb + (i)] /* bk(l): the entry the step pushes */
#define k(i) arena[294912u + (i)] /* f32, a temporary */

const uint M = 128u, N = 384u, SLICES = 12u, SPLIT_AT = 1523712u; /* k1's partial products */

float gemm_partial(uint at) { return arena[SPLIT_AT + at]; }
#include "oi_gemm_slices.glsl"

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    const uint i = r * 384u + j;
    /* bench_encoder.c:62: op gemm(h,Wk[l],bk[l]) >> k */
    acc_j = acc_j + bk(j);
    float v0 = acc_j;
    k(i) = v0;
}

void main() {
    uint e = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
             gl_LocalInvocationID.x;
    if (e < M * N)
        mm_store(0u, e / N, e % N, gemm_slices_sum(e, M * N, SLICES), 0u);
}
