#version 450
// reduce.comp - sum/mean/prod/max/min over axes, argmax/argmin along one
// axis, and is_finite over everything. One workgroup makes one output word
// (1, 2 or 4 elements, or one i64 index as two words); its invocations
// stride over the reduced elements and combine through shared memory.
// The host splits the input dims into kept dims (k*) and reduced dims (r*).
// Built with WIDE for 64-bit inputs (i64, u64, f64; shaderInt64 and
// shaderFloat64): 64-bit accumulators, as the CPU's int64/uint64/double
// ones, and one 64-bit output element (two words) per workgroup.
#extension GL_GOOGLE_include_directive : require
#ifdef WIDE
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define ACC uint64_t // accumulator bits: double, int64 or uint64
#else
#define ACC uint     // accumulator bits: float, int or uint
#endif
#include "common.glsl"

#define WG 128u
layout(local_size_x = 128) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32;
layout(constant_id = 4) const uint D_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 3) buffer BufD { uint d_buf[]; };
layout(binding = 0) readonly buffer BufA4 { uvec4 a4[]; }; // the input as uvec4 (contiguous rows)

#define OI_REDUCE_DIMS 5
layout(push_constant) uniform Push {
    uint n_out;  // output elements
    uint n_red;  // input elements per output
    uint k_ndim; uint k_shape[OI_REDUCE_DIMS]; uint k_strides[OI_REDUCE_DIMS];
    uint r_ndim; uint r_shape[OI_REDUCE_DIMS]; uint r_strides[OI_REDUCE_DIMS];
    uint a_offset, d_offset;
    uint select_first; // argmax/argmin: ties keep the first index
    uint vec_rows;     // 1: 32-bit values, one reduced dim of stride 1, every row 16-byte aligned
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_STORE_WORD(store_d, d_buf)

bool is_op(uint op) { return OP == op; }
bool is_arg() { return is_op(OP_argmax_axis) || is_op(OP_argmin_axis); }
// VALUE_CLASS (from the build) is the input's class: one module per class.
const uint CLASS_FLOAT = 0u, CLASS_INT = 1u, CLASS_UINT = 2u;
uint value_class() { return uint(VALUE_CLASS); }

#ifdef WIDE
// 64-bit accumulators: double bits, int64 or uint64.
double as_double(ACC x) { return packDouble2x32(unpackUint2x32(x)); }
ACC double_acc(double v) { return packUint2x32(unpackDouble2x32(v)); }
bool is_nan_d(double x) { return (double_acc(x) & 0x7FFFFFFFFFFFFFFFul) > 0x7FF0000000000000ul; }
bool is_inf_d(double x) { return (double_acc(x) & 0x7FFFFFFFFFFFFFFFul) == 0x7FF0000000000000ul; }
double nan_max_d(double a, double b) { return is_nan_d(a) ? b : (is_nan_d(b) ? a : max(a, b)); }
double nan_min_d(double a, double b) { return is_nan_d(a) ? b : (is_nan_d(b) ? a : min(a, b)); }

ACC acc_load(ACC bits) {
    if (is_op(OP_is_finite)) { double v = as_double(bits); return ACC(!is_nan_d(v) && !is_inf_d(v)); }
    return bits; // A_DT is 64-bit: its bits are the accumulator's
}
ACC acc_identity() {
    if (is_op(OP_is_finite)) return 1ul;
    bool prod = is_op(OP_prod_axis);
    if (value_class() == CLASS_FLOAT) {
        if (is_op(OP_sum_axis) || is_op(OP_mean_axis) || prod) return double_acc(prod ? 1.0LF : 0.0LF);
        return 0x7FF8000000000000ul; // NaN: the NaN-ignoring max/min take the first number
    }
    if (is_op(OP_sum_axis) || is_op(OP_mean_axis)) return 0ul;
    if (prod) return 1ul;
    if (value_class() == CLASS_INT) return is_op(OP_max_axis) ? 0x8000000000000000ul : 0x7FFFFFFFFFFFFFFFul;
    return is_op(OP_max_axis) ? 0ul : 0xFFFFFFFFFFFFFFFFul;
}
ACC acc_combine(ACC x, ACC y) {
    if (is_op(OP_is_finite)) return x & y;
    if (value_class() == CLASS_FLOAT) {
        double a = as_double(x), b = as_double(y);
        if (is_op(OP_prod_axis)) return double_acc(a * b);
        if (is_op(OP_max_axis)) return double_acc(nan_max_d(a, b));
        if (is_op(OP_min_axis)) return double_acc(nan_min_d(a, b));
        return double_acc(a + b);
    }
    if (value_class() == CLASS_INT) {
        int64_t a = int64_t(x), b = int64_t(y);
        if (is_op(OP_max_axis)) return ACC(max(a, b));
        if (is_op(OP_min_axis)) return ACC(min(a, b));
    }
    if (is_op(OP_prod_axis)) return x * y; // wrapping, the same bits signed or not
    if (is_op(OP_max_axis)) return max(x, y);
    if (is_op(OP_min_axis)) return min(x, y);
    return x + y;
}
bool arg_better(ACC x, uint i, ACC y, uint j) {
    bool max_op = is_op(OP_argmax_axis);
    int order;
    if (value_class() == CLASS_FLOAT) {
        double a = as_double(x), b = as_double(y);
        if (is_nan_d(a)) return false;
        if (is_nan_d(b)) return true;
        order = a == b ? 0 : ((a > b) == max_op ? -1 : 1);
    } else if (value_class() == CLASS_INT) {
        order = x == y ? 0 : ((int64_t(x) > int64_t(y)) == max_op ? -1 : 1);
    } else {
        order = x == y ? 0 : ((x > y) == max_op ? -1 : 1);
    }
    if (order != 0) return order < 0;
    return pc.select_first != 0u ? i < j : i > j;
}
ACC load_acc(uint i) { return acc_load(packUint2x32(uvec2(a_buf[2u * i], a_buf[2u * i + 1u]))); }
bool first_is_nan(uint i) { return value_class() == CLASS_FLOAT && is_nan_d(as_double(load_acc(i))); }

#else
// Accumulators travel as 32-bit words: float bits, int or uint.
uint acc_load(uint bits) {
    if (is_op(OP_is_finite)) { float v = bits_to_float(A_DT, bits); return uint(!is_nan_f(v) && !is_inf_f(v)); }
    if (value_class() == CLASS_FLOAT) return floatBitsToUint(bits_to_float(A_DT, bits));
    if (value_class() == CLASS_INT) return uint(bits_to_int(A_DT, bits));
    return bits_to_uint(A_DT, bits);
}
uint acc_identity() {
    if (is_op(OP_is_finite)) return 1u;
    bool prod = is_op(OP_prod_axis);
    if (value_class() == CLASS_FLOAT) {
        if (is_op(OP_sum_axis) || is_op(OP_mean_axis) || prod) return floatBitsToUint(prod ? 1.0 : 0.0);
        return 0x7FC00000u; // NaN: the NaN-ignoring max/min take the first number
    }
    if (is_op(OP_sum_axis) || is_op(OP_mean_axis)) return 0u;
    if (prod) return 1u;
    if (value_class() == CLASS_INT) return is_op(OP_max_axis) ? 0x80000000u : 0x7FFFFFFFu;
    return is_op(OP_max_axis) ? 0u : 0xFFFFFFFFu;
}
uint acc_combine(uint x, uint y) {
    if (is_op(OP_is_finite)) return x & y;
    if (value_class() == CLASS_FLOAT) {
        float a = uintBitsToFloat(x), b = uintBitsToFloat(y);
        if (is_op(OP_prod_axis)) return floatBitsToUint(a * b);
        if (is_op(OP_max_axis)) return floatBitsToUint(nan_max(a, b));
        if (is_op(OP_min_axis)) return floatBitsToUint(nan_min(a, b));
        return floatBitsToUint(a + b);
    }
    if (value_class() == CLASS_INT) {
        int a = int(x), b = int(y);
        if (is_op(OP_prod_axis)) return uint(a * b);
        if (is_op(OP_max_axis)) return uint(max(a, b));
        if (is_op(OP_min_axis)) return uint(min(a, b));
        return uint(a + b);
    }
    if (is_op(OP_prod_axis)) return x * y;
    if (is_op(OP_max_axis)) return max(x, y);
    if (is_op(OP_min_axis)) return min(x, y);
    return x + y;
}
// argmax/argmin: does (value x at index i) win over (value y at index j)?
// NaN never wins (the CPU compares with > / <, which NaN fails).
bool arg_better(uint x, uint i, uint y, uint j) {
    bool max_op = is_op(OP_argmax_axis);
    int order; // -1: x before y in the op's order, 1: after, 0: tie
    if (value_class() == CLASS_FLOAT) {
        float a = uintBitsToFloat(x), b = uintBitsToFloat(y);
        if (is_nan_f(a)) return false;
        if (is_nan_f(b)) return true;
        order = a == b ? 0 : ((a > b) == max_op ? -1 : 1);
    } else if (value_class() == CLASS_INT) {
        order = int(x) == int(y) ? 0 : ((int(x) > int(y)) == max_op ? -1 : 1);
    } else {
        order = x == y ? 0 : ((x > y) == max_op ? -1 : 1);
    }
    if (order != 0) return order < 0;
    return pc.select_first != 0u ? i < j : i > j;
}

ACC load_acc(uint i) { return acc_load(load_a(A_DT, i)); }
bool first_is_nan(uint i) { return value_class() == CLASS_FLOAT && is_nan_f(bits_to_float(A_DT, load_a(A_DT, i))); }

#endif

shared ACC s_val[WG];
shared uint s_idx[WG];

// Reduces output element o; the result is valid in invocation 0. Returns
// the index of the element's first input.
uint reduce_one(uint o) {
    uint base = pc.a_offset;
    for (int d = int(pc.k_ndim) - 1; d >= 0; d--) {
        base += (o % pc.k_shape[d]) * pc.k_strides[d];
        o /= pc.k_shape[d];
    }
    uint lid = gl_LocalInvocationID.x;
    ACC acc = acc_identity();
    uint acc_i = 0xFFFFFFFFu;
#ifndef WIDE
    if (pc.vec_rows != 0u && !is_arg()) {
        // 16-byte loads, two in flight per invocation, no index arithmetic
        uint vecs = pc.n_red >> 2u, v0 = base >> 2u;
        uint acc2 = acc_identity();
        uint v = lid;
        for (; v + WG < vecs; v += 2u * WG) {
            uvec4 x = a4[v0 + v], y = a4[v0 + v + WG];
            acc = acc_combine(acc_combine(acc, acc_load(x.x)), acc_combine(acc_load(x.y), acc_load(x.z)));
            acc = acc_combine(acc, acc_load(x.w));
            acc2 = acc_combine(acc_combine(acc2, acc_load(y.x)), acc_combine(acc_load(y.y), acc_load(y.z)));
            acc2 = acc_combine(acc2, acc_load(y.w));
        }
        if (v < vecs) {
            uvec4 x = a4[v0 + v];
            acc = acc_combine(acc_combine(acc, acc_load(x.x)), acc_combine(acc_load(x.y), acc_load(x.z)));
            acc = acc_combine(acc, acc_load(x.w));
        }
        acc = acc_combine(acc, acc2);
        for (uint r = vecs * 4u + lid; r < pc.n_red; r += WG) acc = acc_combine(acc, acc_load(a_buf[base + r]));
    } else
#endif
    for (uint r = lid; r < pc.n_red; r += WG) {
        uint idx = base, rest = r;
        for (int d = int(pc.r_ndim) - 1; d >= 0; d--) {
            idx += (rest % pc.r_shape[d]) * pc.r_strides[d];
            rest /= pc.r_shape[d];
        }
        ACC v = load_acc(idx);
        if (is_arg()) {
            if (acc_i == 0xFFFFFFFFu || arg_better(v, r, acc, acc_i)) { acc = v; acc_i = r; }
        } else {
            acc = acc_combine(acc, v);
        }
    }
    s_val[lid] = acc;
    s_idx[lid] = acc_i;
    barrier();
    for (uint step = WG / 2u; step > 0u; step >>= 1u) {
        if (lid < step) {
            if (is_arg()) {
                uint j = s_idx[lid + step];
                if (j != 0xFFFFFFFFu && (s_idx[lid] == 0xFFFFFFFFu || arg_better(s_val[lid + step], j, s_val[lid], s_idx[lid]))) {
                    s_val[lid] = s_val[lid + step];
                    s_idx[lid] = j;
                }
            } else {
                s_val[lid] = acc_combine(s_val[lid], s_val[lid + step]);
            }
        }
        barrier();
    }
    return base;
}

// The output bits of the finished reduction (in invocation 0).
ACC finish() {
    ACC v = s_val[0];
    if (is_op(OP_is_finite)) return v;
#ifdef WIDE
    if (is_op(OP_mean_axis)) { // integer means truncate toward zero
        if (value_class() == CLASS_FLOAT) v = double_acc(as_double(v) / double(pc.n_red));
        else if (value_class() == CLASS_INT) v = ACC(int64_t(v) / int64_t(pc.n_red));
        else v = v / ACC(pc.n_red);
    }
    return v;
#else
    if (is_op(OP_mean_axis)) {
        if (value_class() == CLASS_FLOAT) v = floatBitsToUint(uintBitsToFloat(v) / float(pc.n_red));
        else if (value_class() == CLASS_INT) v = uint(int(v) / int(pc.n_red));
        else v = v / pc.n_red;
    }
    if (value_class() == CLASS_FLOAT) return float_to_bits(D_DT, uintBitsToFloat(v));
    return v & dt_mask(D_DT);
#endif
}

void main() {
    uint w = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; // output word, from d_offset's word
    uint lid = gl_LocalInvocationID.x;
    if (is_arg()) { // i64 index: one element, two words
        uint o = w;
        if (o >= pc.n_out) return;
        uint base = reduce_one(o);
        if (lid == 0u) {
            // the CPU starts from element 0 and compares with > / <: a NaN there is never beaten
            bool first_nan = first_is_nan(base);
            d_buf[(pc.d_offset + o) * 2u] = first_nan ? 0u : s_idx[0];
            d_buf[(pc.d_offset + o) * 2u + 1u] = 0u;
        }
        return;
    }
#ifdef WIDE
    if (dt_bits(D_DT) == 64u) { // one element, two words
        if (w >= pc.n_out) return;
        reduce_one(w);
        if (lid == 0u) {
            uvec2 r = unpackUint2x32(finish());
            d_buf[(pc.d_offset + w) * 2u] = r.x;
            d_buf[(pc.d_offset + w) * 2u + 1u] = r.y;
        }
        return;
    }
#endif
    uint per = dt_per_word(D_DT);
    uint lane_bits = 32u / per;
    uint word_index = pc.d_offset / per + w;
    uint first = word_index * per;
    uint end = pc.d_offset + pc.n_out;
    if (first >= end) return;
    uint word = 0u, keep = 0u;
    for (uint lane = 0u; lane < per; lane++) {
        uint lane_mask = per == 1u ? 0xFFFFFFFFu : ((1u << lane_bits) - 1u) << (lane * lane_bits);
        uint i = first + lane;
        if (i < pc.d_offset || i >= end) { keep |= lane_mask; continue; }
        reduce_one(i - pc.d_offset);
        if (lid == 0u) word |= (uint(finish()) << (lane * lane_bits)) & lane_mask;
        barrier();
    }
    if (lid == 0u) store_d(D_DT, word_index, word, keep);
}
