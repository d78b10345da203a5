#version 450
// encoder_k20.comp - k12's slices summed: matmul, 2 statements (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:73: op gemm(joined,Wo[l],bo[l]) >> proj
//   bench_encoder.c:74: op add(h,proj) >> res
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint Wo_at; uint bo_at; } pc; /* set when the step is recorded */
#define joined(i) arena[737280u + (i)] /* f32, a temporary */
#define Wo(i) model[pc.Wo_at - pc.oi_mb + (i)] /* Wo(l): the entry the step pushes */
#define bo(i) model[pc.bo_at - pc.oi_mb + (i)] /* bo(l): the entry the step pushes */
#define proj(i) arena[835584u + (i)] /* f32, a temporary */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define res(i) arena[884736u + (i)] /* f32, a temporary */

const uint M = 128u, N = 384u, SLICES = 12u, SPLIT_AT = 2703360u; /* k12's partial products */

float gemm_partial(uint at) { return arena[SPLIT_AT + at]; }
#include "oi_gemm_slices.glsl"

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    const uint i = r * 384u + j;
    /* bench_encoder.c:73: op gemm(joined,Wo[l],bo[l]) >> proj */
    acc_j = acc_j + bo(j);
    float v0 = acc_j;
    proj(i) = v0;
    /* bench_encoder.c:74: op add(h,proj) >> res */
    float v1 = OI_ROUND_F32(OI_S_add(h(i), v0));
    res(i) = float(v1);
}

void main() {
    uint e = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
             gl_LocalInvocationID.x;
    if (e < M * N)
        mm_store(0u, e / N, e % N, gemm_slices_sum(e, M * N, SLICES), 0u);
}
