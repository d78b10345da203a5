#version 450
// pad.comp - pad in every mode of the CPU kernel (kernels/shape.c):
// constant (the host-encoded fill bits), reflect, edge and wrap; negative
// pads crop. Each output coordinate maps to an input coordinate per dim
// (oi__shape_pad_source's rules); one invocation writes one output word
// (or one 64-bit element, two words).
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32;
layout(constant_id = 4) const uint D_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 3) buffer BufD { uint d_buf[]; };

#define OI_PAD_DIMS 6
#define MODE_CONSTANT 0u
#define MODE_REFLECT 1u
#define MODE_EDGE 2u
#define MODE_WRAP 3u
layout(push_constant) uniform Push {
    uint n, ndim, a_offset, d_offset;
    uint mode; // as oi__pad_mode
    uint fill; // constant mode: the value's bits in D_DT (64-bit: the low word)
    uint shape[OI_PAD_DIMS];    // output dims
    int begin[OI_PAD_DIMS];     // elements added before (negative: cropped)
    uint in_shape[OI_PAD_DIMS];
    int a_strides[OI_PAD_DIMS];
    uint fill_hi; // 64-bit dtypes: the value's high word
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_STORE_WORD(store_d, d_buf)
OI_DEFINE_COPY_PAIR(copy_pair, copy_pair_or, d_buf, a_buf)

// i mod m in [0, m) for any sign of i (GLSL leaves % of negatives undefined).
int mod_pos(int i, int m) { return i >= 0 ? i % m : m - 1 - ((-i - 1) % m); }

// The input index along a dim of size n for position i (-1: the fill).
int pad_source(int i, int n) {
    if (i >= 0 && i < n) return i;
    if (pc.mode == MODE_EDGE) return i < 0 ? 0 : n - 1;
    if (pc.mode == MODE_WRAP) return mod_pos(i, n);
    if (pc.mode == MODE_REFLECT) {
        if (n == 1) return 0;
        int period = 2 * (n - 1), m = mod_pos(i, period);
        return m < n ? m : period - m;
    }
    return -1;
}

// The input element of output element e, or -1 for the fill.
int source(uint e) {
    int at = int(pc.a_offset);
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
        uint coord = e % pc.shape[d];
        e /= pc.shape[d];
        int from = pad_source(int(coord) - pc.begin[d], int(pc.in_shape[d]));
        if (from < 0) return -1;
        at += from * pc.a_strides[d];
    }
    return at;
}

uint element(uint e) {
    int from = source(e);
    return from < 0 ? pc.fill : load_a(A_DT, uint(from));
}

void main() {
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (dt_bits(D_DT) == 64u) { // 64-bit data: one element, two words
        if (t >= pc.n) return;
        copy_pair_or(pc.d_offset + t, source(t), pc.fill, pc.fill_hi);
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
        if (i < pc.d_offset || i >= end) { keep |= lane_mask; continue; }
        word |= (element(i - pc.d_offset) << (lane * lane_bits)) & lane_mask;
    }
    store_d(D_DT, w, word, keep);
}
