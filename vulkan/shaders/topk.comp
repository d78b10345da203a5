#version 450
// topk.comp - top_k / top_k_indices in two stages (pc.stage):
//   0, select: one workgroup per lane (a row along `axis`) picks the k best
//     elements one after another, each round the best of those ranking
//     below the previous pick, and writes their indices (u32) into the
//     scratch at the output's positions. The order is the CPU's: a key
//     whose unsigned order is the value order (NaN above +inf, -0 == +0;
//     inverted for the smallest, so NaN then ranks last), ties by lower
//     index. Rows of up to CACHE elements keep their keys in shared memory.
//   1, write: top_k_indices stores the indices as i64 (one invocation per
//     element); top_k copies the picked elements' bits, one invocation per
//     32-bit word of the output (1, 2 or 4 elements; lanes outside the
//     output kept), so every dtype is exact without 8/16-bit stores.
// The output is contiguous from d_offset: element (outer, r, inner) of the
// lane outer * inner_size + inner.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

#define WG 128u
#define CACHE 2048u
#define KEPT_DIMS 5
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; }; // x
layout(binding = 1) readonly buffer BufB { uint i_buf[]; }; // stage 1: the picked indices
layout(binding = 3) buffer BufD { uint d_buf[]; };          // stage 0: indices; stage 1: the output

layout(push_constant) uniform Push {
    uint lanes, n_axis, k, inner;  // inner: elements per step of the axis in the output
    uint kept_ndim;
    uint kept_shape[KEPT_DIMS], kept_strides[KEPT_DIMS]; // the dims other than axis (x strides)
    uint axis_stride;
    uint x_offset, d_offset;
    uint largest;
    uint stage;
    uint n_out;
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_STORE_WORD(store_d, d_buf)

uint lane_base(uint lane) {
    uint at = pc.x_offset;
    for (int d = int(pc.kept_ndim) - 1; d >= 0; d--) {
        at += (lane % pc.kept_shape[d]) * pc.kept_strides[d];
        lane /= pc.kept_shape[d];
    }
    return at;
}

uint key_of(uint bits) {
    uint key;
    if (dt_is_float(A_DT)) {
        float v = bits_to_float(A_DT, bits);
        uint u = floatBitsToUint(v);
        if (is_nan_f(v)) key = 0xFFFFFFFFu;
        else if ((u & 0x7FFFFFFFu) == 0u) key = 0x80000000u; // -0 == +0
        else key = (u >> 31u) != 0u ? ~u : u | 0x80000000u;
    } else if (dt_is_signed(A_DT)) {
        key = uint(bits_to_int(A_DT, bits)) ^ 0x80000000u;
    } else {
        key = bits_to_uint(A_DT, bits);
    }
    return pc.largest != 0u ? key : ~key;
}

shared uint s_keys[CACHE];
shared uint s_best_key[WG];
shared uint s_best_idx[WG];

#define NONE 0xFFFFFFFFu
// (ka, ia) ranks above (kb, ib): a larger key, or equal and a lower index
bool better(uint ka, uint ia, uint kb, uint ib) {
    if (ia == NONE) return false;
    if (ib == NONE) return true;
    return ka > kb || (ka == kb && ia < ib);
}

void select_stage() {
    uint lane = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (lane >= pc.lanes) return;
    uint lid = gl_LocalInvocationID.x, n = pc.n_axis;
    uint base = lane_base(lane);
    bool cached = n <= CACHE;
    if (cached) {
        for (uint j = lid; j < n; j += WG) s_keys[j] = key_of(load_a(A_DT, base + j * pc.axis_stride));
        barrier();
    }
    uint outer = lane / pc.inner, in_lane = lane % pc.inner;
    uint prev_key = 0u, prev_idx = NONE;
    for (uint r = 0u; r < pc.k; r++) {
        uint bk = 0u, bi = NONE;
        for (uint j = lid; j < n; j += WG) {
            uint key = cached ? s_keys[j] : key_of(load_a(A_DT, base + j * pc.axis_stride));
            bool below = prev_idx == NONE || key < prev_key || (key == prev_key && j > prev_idx);
            if (below && better(key, j, bk, bi)) {
                bk = key;
                bi = j;
            }
        }
        s_best_key[lid] = bk;
        s_best_idx[lid] = bi;
        barrier();
        for (uint step = WG / 2u; step > 0u; step >>= 1u) {
            if (lid < step && better(s_best_key[lid + step], s_best_idx[lid + step], s_best_key[lid], s_best_idx[lid])) {
                s_best_key[lid] = s_best_key[lid + step];
                s_best_idx[lid] = s_best_idx[lid + step];
            }
            barrier();
        }
        prev_key = s_best_key[0];
        prev_idx = s_best_idx[0];
        if (lid == 0u) d_buf[(outer * pc.k + r) * pc.inner + in_lane] = prev_idx;
        barrier(); // s_best_* are rewritten by the next round
    }
}

// The bits of output element e (0 <= e < n_out).
uint picked_bits(uint e) {
    uint in_lane = e % pc.inner, t = e / pc.inner;
    uint lane = (t / pc.k) * pc.inner + in_lane;
    return load_a(A_DT, lane_base(lane) + i_buf[e] * pc.axis_stride);
}

void write_stage() {
    uint gid = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WG + gl_LocalInvocationID.x;
    if (OP == OP_top_k_indices) {
        if (gid >= pc.n_out) return;
        d_buf[(pc.d_offset + gid) * 2u] = i_buf[gid];
        d_buf[(pc.d_offset + gid) * 2u + 1u] = 0u;
        return;
    }
    uint per = dt_per_word(A_DT), bits = dt_bits(A_DT);
    uint w = pc.d_offset / per + gid;
    if (w * per >= pc.d_offset + pc.n_out) return;
    uint packed = 0u, keep = 0u;
    for (uint i = 0u; i < per; i++) {
        uint lane_mask = (bits == 32u ? 0xFFFFFFFFu : ((1u << bits) - 1u)) << (i * bits);
        uint ge = w * per + i;
        if (ge < pc.d_offset || ge >= pc.d_offset + pc.n_out) {
            keep |= lane_mask;
            continue;
        }
        packed |= (picked_bits(ge - pc.d_offset) << (i * bits)) & lane_mask;
    }
    store_d(A_DT, w, packed, keep);
}

void main() {
    if (pc.stage == 0u) select_stage();
    else write_stage();
}
