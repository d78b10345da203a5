#version 450
// copy.comp - the data movement of reshape, transpose, squeeze, unsqueeze,
// slice, split, expand, tile and concat: out[e] = in[offset + sum(coord_d *
// stride_d)] over the output's (merged) dims, bit for bit, any dtype of
// 8 to 64 bits. Strides are signed (slices with negative steps) and 0 repeats an
// element (expand, tile split into a repeat dim and a data dim). One
// invocation writes one 32-bit word of the contiguous output (1, 2 or 4
// elements), as eltwise.comp does, or one 64-bit element as two words. A window along one dim (concat: input i
// fills rows [lo, hi) of the axis) leaves the other rows untouched, so one
// stage per input fills the output without two invocations sharing a word.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32;
layout(constant_id = 4) const uint D_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 3) buffer BufD { uint d_buf[]; };

#define OI_COPY_DIMS 8
layout(push_constant) uniform Push {
    uint n;        // output elements
    uint ndim;     // dims in use, 1..OI_COPY_DIMS
    uint a_offset; // element offset of the input
    uint d_offset; // element offset of the output
    uint win_dim;  // the windowed dim (concat's axis); win_lo = 0, win_hi = ~0: no window
    uint win_lo, win_hi;
    uint shape[OI_COPY_DIMS];
    int a_strides[OI_COPY_DIMS];
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_STORE_WORD(store_d, d_buf)
OI_DEFINE_COPY_PAIR(copy_pair, copy_pair_or, d_buf, a_buf)

// The input element of output element e, or -1 outside the window.
int source(uint e) {
    int at = int(pc.a_offset);
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
        uint coord = e % pc.shape[d];
        e /= pc.shape[d];
        if (uint(d) == pc.win_dim) {
            if (coord < pc.win_lo || coord >= pc.win_hi) return -1;
            coord -= pc.win_lo;
        }
        at += int(coord) * pc.a_strides[d];
    }
    return at;
}

// A float element into the output's float dtype (the simulator's f16/bf16
// activations next to f32 data); other elements move as bits. The
// condition is made of specialization constants: it folds away.
uint convert(uint bits) {
    if (A_DT != D_DT && dt_is_float(A_DT) && dt_is_float(D_DT)) return float_to_bits(D_DT, bits_to_float(A_DT, bits));
    return bits;
}

void main() {
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (dt_bits(D_DT) == 64u) {
        if (t >= pc.n) return;
        int from = source(t);
        if (from >= 0) copy_pair(pc.d_offset + t, uint(from));
        return;
    }
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
        int from = (i < pc.d_offset || i >= end) ? -1 : source(i - pc.d_offset);
        if (from < 0) { keep |= lane_mask; continue; }
        word |= (convert(load_a(A_DT, uint(from))) << (lane * lane_bits)) & lane_mask;
    }
    if (keep != 0xFFFFFFFFu) store_d(D_DT, w, word, keep);
}
