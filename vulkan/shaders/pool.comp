#version 450
// pool.comp - max_pool2d and avg_pool2d over x [N, C, H, W] (any strides),
// as kernels/conv.c: windows of kernel_shape with strides, dilations and
// begin pads; padding never enters a max, and an average divides by the
// window positions inside the input (or inside input + pads with
// count_include_pad). f32 arithmetic for every dtype (f32, f16, bf16;
// i8/u8 for max, where every value is exact in f32).
// One invocation writes one 32-bit word of the contiguous output (1, 2
// or 4 elements), so 8/16-bit outputs need no atomics.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32;
layout(constant_id = 4) const uint D_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 3) buffer BufD { uint d_buf[]; };

// The names of oi__vk_pool_push (vk_ops_conv.c).
layout(push_constant) uniform Push {
    uint n;                  // output elements: N * C * OH * OW
    uint C, H, W, OH, OW;
    uint kernel_h, kernel_w, stride_h, stride_w, dil_h, dil_w;
    int pad_t, pad_l, pad_b, pad_r; // begin and end pads
    uint a_strides[4];
    uint a_offset, d_offset;
    uint include_pad;        // avg: count the pad positions in the divisor
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_STORE_WORD(store_d, d_buf)

#define NAN_F uintBitsToFloat(0x7FC00000u)
#define NEG_INF_F uintBitsToFloat(0xFF800000u)

// Window positions along one dim that fall inside [lo, hi).
uint inside(int first, uint k, uint dil, int lo, int hi) {
    uint count = 0u;
    for (uint i = 0u; i < k; i++) {
        int p = first + int(i * dil);
        if (p >= lo && p < hi) count++;
    }
    return count;
}

// The pooled value of output element e, as f32.
float pooled(uint e) {
    uint ox = e % pc.OW;
    e /= pc.OW;
    uint oy = e % pc.OH;
    e /= pc.OH;
    uint c = e % pc.C, n = e / pc.C;
    uint base = pc.a_offset + n * pc.a_strides[0] + c * pc.a_strides[1];
    int y0 = int(oy * pc.stride_h) - pc.pad_t, x0 = int(ox * pc.stride_w) - pc.pad_l;
    bool is_max = OP == OP_max_pool2d;
    float acc = is_max ? NEG_INF_F : 0.0;
    for (uint ky = 0u; ky < pc.kernel_h; ky++) {
        int y = y0 + int(ky * pc.dil_h);
        if (y < 0 || y >= int(pc.H)) continue;
        for (uint kx = 0u; kx < pc.kernel_w; kx++) {
            int x = x0 + int(kx * pc.dil_w);
            if (x < 0 || x >= int(pc.W)) continue;
            float v = bits_to_float(A_DT, load_a(A_DT, base + uint(y) * pc.a_strides[2] + uint(x) * pc.a_strides[3]));
            if (!is_max)
                acc += v;
            else if (!is_nan_f(acc) && (v > acc || is_nan_f(v))) // once NaN, stays NaN
                acc = v;
        }
    }
    if (is_max) return acc;
    uint div;
    if (pc.include_pad != 0u)
        div = inside(y0, pc.kernel_h, pc.dil_h, -pc.pad_t, int(pc.H) + pc.pad_b) *
              inside(x0, pc.kernel_w, pc.dil_w, -pc.pad_l, int(pc.W) + pc.pad_r);
    else
        div = inside(y0, pc.kernel_h, pc.dil_h, 0, int(pc.H)) * inside(x0, pc.kernel_w, pc.dil_w, 0, int(pc.W));
    return div == 0u ? NAN_F : acc / float(div);
}

uint to_bits(float v) {
    if (dt_is_float(D_DT)) return float_to_bits(D_DT, v);
    // max of i8/u8: one of the inputs, exact; a window all in the padding
    // gives -inf, which the CPU saturates to int64 and wraps to 8 bits: 0
    if (is_inf_f(v)) return 0u;
    return int_to_bits(D_DT, int(v));
}

void main() {
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint per = dt_per_word(D_DT);
    uint lane_bits = 32u / per;
    uint w = pc.d_offset / per + t; // the output word this invocation writes
    uint first = w * per;
    uint end = pc.d_offset + pc.n;
    if (first >= end) return;
    uint word = 0u, keep = 0u;
    for (uint lane = 0u; lane < per; lane++) {
        uint lane_mask = per == 1u ? 0xFFFFFFFFu : ((1u << lane_bits) - 1u) << (lane * lane_bits);
        uint i = first + lane;
        if (i < pc.d_offset || i >= end) { keep |= lane_mask; continue; }
        word |= (to_bits(pooled(i - pc.d_offset)) << (lane * lane_bits)) & lane_mask;
    }
    store_d(D_DT, w, word, keep);
}
