#version 450
// gemm_epilogue.comp - gemm's last step: y = act(alpha * (A' x B') + beta * C),
// from the f32 product in scratch (binding a; a product split along K is
// there as `slices` partial products, n apart, summed in order by
// gemm_slices.glsl) and the optional C
// (binding b, broadcast to [M, N] through strides 0), stored in the output
// dtype. The CPU kernel computes in f32 the same way (beta * C first, then
// alpha * product added), and ignores C when beta is 0. act: gemm's
// activation= (0 none, 1 relu, 2 gelu, 3 gelu_tanh, 4 hard_swish), as the ops
// compute it.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "math.glsl"
#define OI_S_ROUND(x) (x)
#include "scalar.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 2) const uint B_DT = DT_F32; // C
layout(constant_id = 4) const uint D_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 1) readonly buffer BufB { uint b_buf[]; };
layout(binding = 3) buffer BufD { uint d_buf[]; };

layout(push_constant) uniform Push {
    uint n, cols, d_offset;
    uint has_c, c_offset, c_stride_m, c_stride_n;
    float alpha, beta;
    uint act;
    uint slices;
} pc;

OI_DEFINE_LOAD_BITS(load_b, b_buf)
OI_DEFINE_STORE_WORD(store_d, d_buf)

float gemm_partial(uint at) { return uintBitsToFloat(a_buf[at]); }
#include "gemm_slices.glsl"

uint element(uint e) {
    precise float y = 0.0;
    if (pc.has_c != 0u) {
        uint at = pc.c_offset + (e / pc.cols) * pc.c_stride_m + (e % pc.cols) * pc.c_stride_n;
        y = pc.beta * bits_to_float(B_DT, load_b(B_DT, at));
    }
    precise float product = gemm_slices_sum(e, pc.n, pc.slices);
    precise float v = pc.alpha * product + y;
    if (pc.act == 1u)
        v = v < 0.0 ? 0.0 : v;
    else if (pc.act == 2u || pc.act == 3u)
        v = gelu_f32(v, pc.act == 3u);
    else if (pc.act == 4u && !is_nan_f(v)) // alpha: 1/6 rounded to f32, as the CPU's
        v = OI_S_hard_swish(v, uintBitsToFloat(0x3E2AAAABu), OI_S_ROUND);
    return float_to_bits(D_DT, v);
}

void main() {
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    uint per = dt_per_word(D_DT);
    uint lane_bits = 32u / per;
    uint w = pc.d_offset / per + t;
    uint first = w * per;
    uint end = pc.d_offset + pc.n;
    if (first >= end) return;
    uint word = 0u, keep = 0u;
    for (uint lane = 0u; lane < per; lane++) {
        uint lane_mask = per == 1u ? 0xFFFFFFFFu : ((1u << lane_bits) - 1u) << (lane * lane_bits);
        uint i = first + lane;
        if (i < pc.d_offset || i >= end) { keep |= lane_mask; continue; }
        word |= (element(i - pc.d_offset) << (lane * lane_bits)) & lane_mask;
    }
    store_d(D_DT, w, word, keep);
}
