#version 450
// encoder_k13.comp - k13: layer_norm, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:76: op layer_norm(res,g1[l],be1[l],epsilon=1e-05) >> h
#include "oi_kernel.glsl"

layout(local_size_x = 256) in;
layout(push_constant) uniform Push { uint oi_mb; uint g1_at; uint be1_at; } pc; /* set when the step is recorded */
#define res(i) arena[884736u + (i)] /* f32, a temporary */
#define g1(i) model[pc.g1_at - pc.oi_mb + (i)] /* g1(l): the entry the step pushes */
#define be1(i) model[pc.be1_at - pc.oi_mb + (i)] /* be1(l): the entry the step pushes */
#define h(i) arena[196608u + (i)] /* f32, a temporary */

shared float oi_partial[256];
float oi_wg_sum(float v) {
    const uint tid = gl_LocalInvocationID.x;
    oi_partial[tid] = v;
    barrier();
    for (uint half_n = 128u; half_n > 0u; half_n >>= 1u) {
        if (tid < half_n)
            oi_partial[tid] = OI_S_sum_step(oi_partial[tid], oi_partial[tid + half_n]);
        barrier();
    }
    const float total = oi_partial[0];
    barrier(); /* oi_partial is free again */
    return total;
}
float oi_wg_max(float v) {
    const uint tid = gl_LocalInvocationID.x;
    oi_partial[tid] = v;
    barrier();
    for (uint half_n = 128u; half_n > 0u; half_n >>= 1u) {
        if (tid < half_n)
            oi_partial[tid] = max(oi_partial[tid], oi_partial[tid + half_n]);
        barrier();
    }
    const float total = oi_partial[0];
    barrier(); /* oi_partial is free again */
    return total;
}

const uint L = 384u; /* the row */

void main() {
    const uint r = gl_WorkGroupID.x, tid = gl_LocalInvocationID.x;
    const uint PER = (L + 255u) / 256u; /* the row's values a thread holds */
    float x[PER];
    for (uint c = 0u; c < PER; c++)
        x[c] = tid + c * 256u < L ? res(r * L + tid + c * 256u) : 0.0;
    float sum = 0.0;
    for (uint c = 0u; c < PER && tid + c * 256u < L; c++)
        sum = OI_S_sum_step(sum, x[c]);
    const float mean = oi_wg_sum(sum) / float(L);
    float sq = 0.0;
    for (uint c = 0u; c < PER && tid + c * 256u < L; c++) {
        const float d = x[c] - mean;
        sq = OI_S_sum_step(sq, d * d);
    }
    const float inv = 1.0 / sqrt(oi_wg_sum(sq) / float(L) + 1.0000000000000001e-05);
    for (uint c = 0u; c < PER && tid + c * 256u < L; c++) {
        const uint j = tid + c * 256u;
        h(r * L + j) = (x[c] - mean) * inv * g1(j) + be1(j);
    }
}
