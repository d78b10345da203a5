#version 450
// encoder_k9.comp - k9: attention, 1 statement (synthesized by OpenInfer for any Vulkan 1.1 device)
//   bench_encoder.c:71: op attention(qh,kh,vh) >> ctx
#include "oi_kernel.glsl"

layout(local_size_x = 128) in;
#define q_(i) arena[245760u + (i)] /* f32, a temporary */
#define k(i) arena[294912u + (i)] /* f32, a temporary */
#define v_(i) arena[344064u + (i)] /* f32, a temporary */
#define joined(i) arena[737280u + (i)] /* f32, a temporary */

shared float oi_partial[128];
float oi_wg_sum(float v) {
    const uint tid = gl_LocalInvocationID.x;
    oi_partial[tid] = v;
    barrier();
    for (uint half_n = 64u; half_n > 0u; half_n >>= 1u) {
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
    for (uint half_n = 64u; half_n > 0u; half_n >>= 1u) {
        if (tid < half_n)
            oi_partial[tid] = max(oi_partial[tid], oi_partial[tid + half_n]);
        barrier();
    }
    const float total = oi_partial[0];
    barrier(); /* oi_partial is free again */
    return total;
}

const uint S = 128u, D = 32u, T = 128u, DV = 32u;
const float SCALE = 0.1767766922712326;
shared float oi_p[T]; /* the row's scores, then its probabilities */
const uint H = 12u; /* heads */
const uint Q_HS = 32u, Q_RS = 384u; /* in place of the head copies */
const uint K_HS = 32u, K_RS = 384u; /* in place of the head copies */
const uint V_HS = 32u, V_RS = 384u; /* in place of the head copies */
const uint O_HS = 32u, O_RS = 384u; /* in place of the head copies */

void main() {
    const uint row = gl_WorkGroupID.x, head = gl_WorkGroupID.y, tid = gl_LocalInvocationID.x;
    const uint batch = head / H, h = head % H;
    const uint q_at = batch * H * S * D + h * Q_HS + row * Q_RS, k_at = batch * H * T * D + h * K_HS;
    const uint v_at = batch * H * T * DV + h * V_HS, o_at = batch * H * S * DV + h * O_HS + row * O_RS;
    float m = -INFINITY;
    for (uint t = tid; t < T; t += 128u) {
        float acc = 0.0;
        for (uint d = 0u; d < D; d++)
            acc = OI_S_mac(acc, q_(q_at + d), k(k_at + t * K_RS + d));
        oi_p[t] = SCALE * acc;
        m = max(m, oi_p[t]);
    }
    m = oi_wg_max(m);
    float sum = 0.0;
    for (uint t = tid; t < T; t += 128u) {
        oi_p[t] = exp_f32(oi_p[t] - m);
        sum = OI_S_sum_step(sum, oi_p[t]);
    }
    const float inv = 1.0 / oi_wg_sum(sum); /* its barrier publishes oi_p */
    const uint G = 4u, d = tid % DV, g = tid / DV;
    float acc = 0.0;
    for (uint t = g; t < T; t += G)
        acc = OI_S_mac(acc, oi_p[t], v_(v_at + t * V_RS + d));
    oi_partial[tid] = acc;
    barrier();
    if (tid < DV) {
        float total = 0.0;
        for (uint k = 0u; k < G; k++)
            total = OI_S_sum_step(total, oi_partial[k * DV + tid]);
        joined(o_at + tid) = total * inv;
    }
}
