#version 450
// gather.comp - gather(data, indices) along an axis: output dims are data's
// dims before the axis, the indices' dims, data's dims after it (merged
// where both walk them as one). Indices of any integer dtype up to 64
// bits (64-bit ones read as two words); negative ones count from the end
// as on the CPU. An index outside [-dim, dim) - which the CPU kernel
// reports as an error before writing anything - writes zero bits here: the
// GPU has no error channel, and zeros are at least deterministic.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32; // data
layout(constant_id = 2) const uint B_DT = DT_I64; // indices
layout(constant_id = 4) const uint D_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 1) readonly buffer BufB { uint b_buf[]; };
layout(binding = 3) buffer BufD { uint d_buf[]; };

#define OI_GATHER_DIMS 8
layout(push_constant) uniform Push {
    uint n, ndim, a_offset, b_offset, d_offset;
    uint axis_dim;   // size of data's gathered axis
    uint axis_stride; // data's stride along it
    uint shape[OI_GATHER_DIMS];
    uint a_strides[OI_GATHER_DIMS]; // data (0 along the indices' dims)
    uint b_strides[OI_GATHER_DIMS]; // indices (0 along data's dims)
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_LOAD_BITS(load_b, b_buf)
OI_DEFINE_STORE_WORD(store_d, d_buf)
OI_DEFINE_COPY_PAIR(copy_pair, copy_pair_or, d_buf, a_buf)

// Index element i as a position along the axis, or -1 out of range.
int position(uint i) {
    int dim = int(pc.axis_dim), v;
    if (B_DT == DT_I64 || B_DT == DT_U64) {
        uint lo = b_buf[2u * i], hi = b_buf[2u * i + 1u];
        bool fits = B_DT == DT_I64 ? int(hi) == (int(lo) >> 31) : (hi == 0u && lo < 0x80000000u);
        if (!fits) return -1;
        v = int(lo);
    } else if (dt_is_signed(B_DT)) {
        v = bits_to_int(B_DT, load_b(B_DT, i));
    } else {
        uint u = load_b(B_DT, i);
        if (u >= 0x80000000u) return -1;
        v = int(u);
    }
    if (v < -dim || v >= dim) return -1;
    return v < 0 ? v + dim : v;
}

// The data element of output element e, or -1 for an index out of range.
int source(uint e) {
    uint ia = pc.a_offset, ib = pc.b_offset;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
        uint coord = e % pc.shape[d];
        e /= pc.shape[d];
        ia += coord * pc.a_strides[d];
        ib += coord * pc.b_strides[d];
    }
    int pos = position(ib);
    return pos < 0 ? -1 : int(ia + uint(pos) * pc.axis_stride);
}

// A float element into the output's float dtype (the simulator's f16/bf16
// activations, e.g. an f32 embedding table read into f16); else the bits.
uint element(uint e) {
    int from = source(e);
    uint bits = from < 0 ? 0u : load_a(A_DT, uint(from));
    if (A_DT != D_DT && dt_is_float(A_DT) && dt_is_float(D_DT)) return float_to_bits(D_DT, bits_to_float(A_DT, bits));
    return bits;
}

void main() {
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (dt_bits(D_DT) == 64u) { // 64-bit data: one element, two words
        if (t >= pc.n) return;
        copy_pair_or(pc.d_offset + t, source(t), 0u, 0u); // zeros for an index out of range
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
