#version 450
// encoder_k21.comp - k14's slices summed: matmul, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:76: op gemm(h,W1[l],b1[l],activation="gelu") >> ffn
#extension GL_EXT_control_flow_attributes : require
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint W1_at; uint b1_at; } pc; /* set when the step is recorded */
#define h(i) arena[196608u + (i)] /* f32, a temporary */
#define W1(i) model[pc.W1_at - pc.oi_mb + (i)] /* W1(l): the entry the step pushes */
#define b1(i) model[pc.b1_at - pc.oi_mb + (i)] /* b1(l): the entry the step pushes */
#define ffn(i) arena[0u + (i)] /* f32, a temporary */

const uint M = 128u, N = 1536u, SLICES = 6u, SPLIT_AT = 3293184u; /* k14's partial products */

float gemm_partial(uint at) { return arena[SPLIT_AT + at]; }
#include "oi_gemm_slices.glsl"

void mm_store(uint base, uint r, uint j, float acc_j, uint bits) {
    const uint i = r * 1536u + j;
    /* bench_encoder.c:76: op gemm(h,W1[l],b1[l],activation="gelu") >> ffn */
    acc_j = acc_j + b1(j);
    acc_j = gelu_f32(acc_j, false);
    float v0 = acc_j;
    ffn(i) = v0;
}

void main() {
    uint e = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x +
             gl_LocalInvocationID.x;
    if (e < M * N)
        mm_store(0u, e / N, e % N, gemm_slices_sum(e, M * N, SLICES), 0u);
}
