#version 450
// encoder_k19.comp - k2's slices summed: matmul, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:63: op gemm(h,Wv[l],bv[l]) >> v
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint Wv_at; uint bv_at; } pc; /* set when the step is recorded */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define Wv(i) model[pc.Wv_at - pc.oi_mb + (i)] /* Wv(l): the entry the step pushes */
#define bv(i) model[pc.bv_at - pc.oi_mb + (i)] /* bv(l): the entry the step pushes */
#define v(i) arena[344064u + (i)] /* f32, a temporary */

const uint M = 128u, N = 384u, SLICES = 12u, SPLIT_AT = 2113536u; /* k2's partial products */

float gemm_partial(uint at) { return arena[SPLIT_AT + at]; }
#include "oi_gemm_slices.glsl"

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    const uint i = r * 384u + j;
    /* bench_encoder.c:63: op gemm(h,Wv[l],bv[l]) >> v */
    acc_j = acc_j + bv(j);
    float v0 = acc_j;
    v(i) = v0;
}

void main() {
    uint e = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
             gl_LocalInvocationID.x;
    if (e < M * N)
        mm_store(0u, e / N, e % N, gemm_slices_sum(e, M * N, SLICES), 0u);
}
