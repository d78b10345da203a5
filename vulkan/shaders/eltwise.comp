#version 450
// eltwise.comp - every elementwise op (arithmetic, comparisons, rounding,
// bitwise, predicates, filter, cast, fill) for every 8/16/32-bit dtype.
// The op and the dtypes are specialization constants: each (op, dtypes)
// pipeline keeps only its own branch. One invocation writes one 32-bit
// word of the output (1, 2 or 4 elements), so no 8/16-bit storage feature
// and no atomics are needed. Inputs are read through strides (0 = a
// broadcast dim); the output is contiguous from d_offset.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
// Each op's arithmetic comes from kernels/scalar.h, as the CPU kernels take it; its ROUND
// is nothing here (r is precise, so a * b + c is never fused: two roundings, as the CPU).
#define OI_S_ROUND(x) (x)
#include "scalar.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F32;
layout(constant_id = 2) const uint B_DT = DT_F32;
layout(constant_id = 3) const uint C_DT = DT_F32;
layout(constant_id = 4) const uint D_DT = DT_F32;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 1) readonly buffer BufB { uint b_buf[]; };
layout(binding = 2) readonly buffer BufC { uint c_buf[]; };
layout(binding = 3) buffer BufD { uint d_buf[]; };
// The same buffers as uvec4, for the contiguous path (16-byte accesses).
layout(binding = 0) readonly buffer BufA4 { uvec4 a4[]; };
layout(binding = 1) readonly buffer BufB4 { uvec4 b4[]; };
layout(binding = 2) readonly buffer BufC4 { uvec4 c4[]; };
layout(binding = 3) writeonly buffer BufD4 { uvec4 d4[]; };

// Same names as oi__tensor: shape, strides, offset (in elements).
#define OI_ELTWISE_DIMS 5
layout(push_constant) uniform Push {
    uint n;      // output elements (contiguous path: output words)
    uint ndim;   // dims in use, 1..OI_ELTWISE_DIMS (merged where contiguous);
                 // 0: the contiguous path (offsets in words, multiples of 4)
    uint shape[OI_ELTWISE_DIMS];
    uint a_strides[OI_ELTWISE_DIMS];
    uint b_strides[OI_ELTWISE_DIMS];
    uint c_strides[OI_ELTWISE_DIMS];
    uint a_offset, b_offset, c_offset, d_offset;
    uint p0, p1, p2; // op parameters (float bits, integers, or output bits)
} pc;

OI_DEFINE_LOAD_BITS(load_a, a_buf)
OI_DEFINE_LOAD_BITS(load_b, b_buf)
OI_DEFINE_LOAD_BITS(load_c, c_buf)
OI_DEFINE_STORE_WORD(store_d, d_buf)

bool is_op(uint op) { return OP == op; }

// VALUE_CLASS (from the build: 0 floats, 1 signed, 2 unsigned and bool)
// is the class of the inputs; each module keeps only its class's code, so
// a pipeline has less to compile.
#if VALUE_CLASS == 0
#include "math.glsl"

// pow as C's powf, special cases included (GLSL leaves x < 0 undefined).
float pow_f32(float x, float y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (is_nan_f(x) || is_nan_f(y)) return NAN_F;
    bool y_int = !is_inf_f(y) && trunc(y) == y;
    bool y_odd = y_int && abs(y) < 16777216.0 && (int(abs(y)) & 1) == 1;
    if (is_inf_f(y)) {
        float ax = abs(x);
        if (ax == 1.0) return 1.0;
        return (ax > 1.0) == (y > 0.0) ? INF_F : 0.0;
    }
    if (x == 0.0) {
        if (y < 0.0) return y_odd ? 1.0 / x : INF_F;
        return y_odd ? x : 0.0;
    }
    if (is_inf_f(x)) {
        if (x > 0.0) return y > 0.0 ? INF_F : 0.0;
        if (y < 0.0) return y_odd ? -0.0 : 0.0;
        return y_odd ? -INF_F : INF_F;
    }
    if (x < 0.0) {
        if (!y_int) return NAN_F;
        float r = exp2(y * log2(-x));
        return y_odd ? -r : r;
    }
    return exp2(y * log2(x));
}

// ---- floats (f32, f16, bf16: loaded as f32, computed in f32) ----
uint float_op(float a, float b, float c, uint a_bits) {
    float p0 = uintBitsToFloat(pc.p0), p1 = uintBitsToFloat(pc.p1), p2 = uintBitsToFloat(pc.p2);
    precise float r = 0.0;
    if (is_op(OP_add)) r = OI_S_add(a, b);
    else if (is_op(OP_sub)) r = OI_S_sub(a, b);
    else if (is_op(OP_mul)) r = OI_S_mul(a, b);
    else if (is_op(OP_div)) r = OI_S_div(a, b, p0);
    else if (is_op(OP_fma)) r = OI_S_fma(a, b, c, OI_S_ROUND);
    else if (is_op(OP_min)) r = nan_min(a, b);
    else if (is_op(OP_max)) r = nan_max(a, b);
    else if (is_op(OP_neg)) r = OI_S_neg(a);
    else if (is_op(OP_abs)) r = abs(a);
    else if (is_op(OP_recip)) r = OI_S_recip(a, p0);
    else if (is_op(OP_relu)) { // p0 slope, p1 clamp_min, p2 clamp_max; max applies first
        // NaN (an input NaN, or -inf * 0) stays NaN, tested on the bits: on
        // NVIDIA the two compares gave the bound for a NaN (min/max, it seems).
        r = OI_S_relu_raw(a, p0, OI_S_ROUND);
        if (!is_nan_f(r)) r = OI_S_clamp_lo(OI_S_clamp_hi(r, p2), p1);
    }
    else if (is_op(OP_clamp)) r = nan_min(nan_max(a, p0), p1);
    // p0 alpha (1/6 for hard_swish), p1 beta; NaN tested on the bits, as relu's
    else if (is_op(OP_hard_sigmoid)) r = is_nan_f(a) ? a : OI_S_hard_sigmoid(a, p0, p1, OI_S_ROUND);
    else if (is_op(OP_hard_swish)) r = is_nan_f(a) ? a : OI_S_hard_swish(a, p0, OI_S_ROUND);
    else if (is_op(OP_floor)) r = floor(a);
    else if (is_op(OP_ceil)) r = ceil(a);
    else if (is_op(OP_round)) r = round_half_away(a);
    else if (is_op(OP_trunc)) r = trunc(a);
    else if (is_op(OP_sign)) return int_to_bits(D_DT, a > 0.0 ? 1 : (a < 0.0 ? -1 : 0));
    else if (is_op(OP_eq)) return uint(OI_S_eq(a, b));
    else if (is_op(OP_ne)) return uint(OI_S_ne(a, b));
    else if (is_op(OP_lt)) return uint(OI_S_lt(a, b));
    else if (is_op(OP_le)) return uint(OI_S_le(a, b));
    else if (is_op(OP_gt)) return uint(OI_S_gt(a, b));
    else if (is_op(OP_ge)) return uint(OI_S_ge(a, b));
    else if (is_op(OP_is_nan)) return uint(is_nan_f(a));
    else if (is_op(OP_is_inf)) return uint(is_inf_f(a));
    else if (is_op(OP_is_neg)) return floatBitsToUint(a) >> 31u; // -0.0 too
    else if (is_op(OP_fill_nan_like)) return (is_nan_f(a) || is_inf_f(a)) ? pc.p0 : a_bits;
    else if (is_op(OP_exp)) r = exp_f32(a);
    else if (is_op(OP_log)) r = log_f32(a);
    else if (is_op(OP_sqrt)) r = a < 0.0 ? NAN_F : (a == 0.0 ? a : sqrt(a));
    else if (is_op(OP_rsqrt)) r = a < 0.0 ? NAN_F : (a == 0.0 ? 1.0 / a : (is_inf_f(a) ? 0.0 : 1.0 / sqrt(a)));
    else if (is_op(OP_erf)) r = erf_f32(a);
    else if (is_op(OP_tanh)) r = tanh_f32(a);
    else if (is_op(OP_sigmoid)) r = OI_S_sigmoid_f32(a);
    else if (is_op(OP_silu)) r = OI_S_silu_f32(a);
    else if (is_op(OP_softplus)) r = max(a, 0.0) + log1p_f32(exp_f32(-abs(a)));
    else if (is_op(OP_gelu)) r = gelu_f32(a, pc.p0 != 0u); // p0 = 1: approximate="tanh"
    else if (is_op(OP_pow)) r = pow_f32(a, b);
    return float_to_bits(D_DT, r);
}

#endif

uint shift_left(uint bits, uint amount) { return amount >= 32u ? 0u : bits << amount; }

#if VALUE_CLASS == 1
// ---- signed integers (i8, i16, i32: sign-extended, wrapping) ----
uint int_op(int a, int b, uint a_bits, uint b_bits) {
    int p0 = int(pc.p0), p1 = int(pc.p1), p2 = int(pc.p2);
    int r = 0;
    if (is_op(OP_add)) r = OI_S_add(a, b);
    else if (is_op(OP_sub)) r = OI_S_sub(a, b);
    else if (is_op(OP_mul)) r = OI_S_mul(a, b);
    else if (is_op(OP_div)) r = OI_S_div_int(a, b, p0, -a);
    else if (is_op(OP_floor_div)) r = OI_S_floor_div_int(a, b, p0, -a);
    // C's remainder (the sign of a), spelled out in scalar.h: GLSL leaves `%`
    // undefined for negative operands (glslang emits OpSMod), and NVIDIA's differs.
    else if (is_op(OP_rem)) r = OI_S_rem_int(a, b);
    else if (is_op(OP_min)) r = min(a, b);
    else if (is_op(OP_max)) r = max(a, b);
    else if (is_op(OP_neg)) r = OI_S_neg(a);
    else if (is_op(OP_abs)) r = a < 0 ? -a : a;
    else if (is_op(OP_relu)) { // x * slope wraps at the dtype's width before the clamps
        r = a >= 0 ? a : bits_to_int(A_DT, uint(a * p0));
        r = OI_S_clamp_lo(OI_S_clamp_hi(r, p2), p1);
    }
    else if (is_op(OP_clamp)) r = OI_S_clamp_int(a, p0, p1);
    else if (is_op(OP_sign)) r = a > 0 ? 1 : (a < 0 ? -1 : 0);
    else if (is_op(OP_and)) return a_bits & b_bits;
    else if (is_op(OP_or)) return a_bits | b_bits;
    else if (is_op(OP_xor)) return a_bits ^ b_bits;
    else if (is_op(OP_not)) return ~a_bits & dt_mask(D_DT);
    else if (is_op(OP_shl)) return shift_left(a_bits, pc.p0) & dt_mask(D_DT);
    else if (is_op(OP_shr)) r = pc.p0 >= 32u ? (a < 0 ? -1 : 0) : a >> pc.p0;
    else if (is_op(OP_popcount)) return uint(bitCount(a_bits));
    else if (is_op(OP_eq)) return uint(OI_S_eq(a, b));
    else if (is_op(OP_ne)) return uint(OI_S_ne(a, b));
    else if (is_op(OP_lt)) return uint(OI_S_lt(a, b));
    else if (is_op(OP_le)) return uint(OI_S_le(a, b));
    else if (is_op(OP_gt)) return uint(OI_S_gt(a, b));
    else if (is_op(OP_ge)) return uint(OI_S_ge(a, b));
    else if (is_op(OP_is_neg)) return uint(a < 0);
    return int_to_bits(D_DT, r);
}

#endif

#if VALUE_CLASS == 2
// ---- unsigned integers and bool (u8, u16, u32, bool) ----
uint uint_op(uint a, uint b) {
    uint r = 0u;
    bool is_bool = A_DT == DT_BOOL;
    if (is_op(OP_add)) r = is_bool ? (a | b) : OI_S_add(a, b);
    else if (is_op(OP_sub)) r = OI_S_sub(a, b);
    else if (is_op(OP_mul)) r = is_bool ? (a & b) : OI_S_mul(a, b);
    else if (is_op(OP_div) || is_op(OP_floor_div)) r = OI_S_div_uint(a, b, pc.p0);
    else if (is_op(OP_rem)) r = OI_S_rem_uint(a, b);
    else if (is_op(OP_min)) r = min(a, b);
    else if (is_op(OP_max)) r = max(a, b);
    else if (is_op(OP_clamp)) r = OI_S_clamp_int(a, pc.p0, pc.p1);
    else if (is_op(OP_and)) r = a & b;
    else if (is_op(OP_or)) r = a | b;
    else if (is_op(OP_xor)) r = a ^ b;
    else if (is_op(OP_not)) r = is_bool ? uint(a == 0u) : ~a;
    else if (is_op(OP_shl)) r = shift_left(a, pc.p0);
    else if (is_op(OP_shr)) r = pc.p0 >= 32u ? 0u : a >> pc.p0;
    else if (is_op(OP_popcount)) return uint(bitCount(a));
    else if (is_op(OP_eq)) return uint(OI_S_eq(a, b));
    else if (is_op(OP_ne)) return uint(OI_S_ne(a, b));
    else if (is_op(OP_lt)) return uint(OI_S_lt(a, b));
    else if (is_op(OP_le)) return uint(OI_S_le(a, b));
    else if (is_op(OP_gt)) return uint(OI_S_gt(a, b));
    else if (is_op(OP_ge)) return uint(OI_S_ge(a, b));
    else if (is_op(OP_is_neg)) return 0u;
    return uint_to_bits(D_DT, r);
}

#endif

// ---- cast: p0 = rounding mode (0 trunc, 1 floor, 2 ceil, 3 nearest);
// float -> integer saturates (the host sends only saturating casts) ----
uint cast_op(uint a_bits) {
#if VALUE_CLASS == 0
    {
        float v = bits_to_float(A_DT, a_bits);
        if (dt_is_float(D_DT)) return float_to_bits(D_DT, v);
        if (is_nan_f(v)) return 0u;
        if (pc.p0 == 1u) v = floor(v);
        else if (pc.p0 == 2u) v = ceil(v);
        else if (pc.p0 == 3u) v = round_half_away(v);
        else v = trunc(v);
        uint bits = dt_bits(D_DT);
        if (dt_is_signed(D_DT)) {
            float hi = exp2(float(bits - 1u)); // 2^(bits-1): the first value out of range
            if (v >= hi) return dt_mask(D_DT) >> 1u;
            if (v <= -hi) return (1u << (bits - 1u)) & dt_mask(D_DT);
            return int_to_bits(D_DT, int(v));
        }
        if (v <= 0.0) return 0u;
        if (v >= exp2(float(bits))) return dt_mask(D_DT);
        return uint(v) & dt_mask(D_DT);
    }
#elif VALUE_CLASS == 1
    int v = bits_to_int(A_DT, a_bits);
    return dt_is_float(D_DT) ? float_to_bits(D_DT, float(v)) : int_to_bits(D_DT, v);
#else
    uint v = bits_to_uint(A_DT, a_bits);
    return dt_is_float(D_DT) ? float_to_bits(D_DT, float(v)) : uint_to_bits(D_DT, v);
#endif
}

bool is_binary() {
    return is_op(OP_add) || is_op(OP_sub) || is_op(OP_mul) || is_op(OP_div) || is_op(OP_fma) || is_op(OP_pow) ||
           is_op(OP_floor_div) || is_op(OP_rem) || is_op(OP_min) || is_op(OP_max) ||
           is_op(OP_and) || is_op(OP_or) || is_op(OP_xor) || is_op(OP_eq) || is_op(OP_ne) ||
           is_op(OP_lt) || is_op(OP_le) || is_op(OP_gt) || is_op(OP_ge);
}
bool reads_a() { return !is_op(OP_fill); }
bool reads_b() { return is_binary() || is_op(OP_filter); }
bool reads_c() { return is_op(OP_fma) || is_op(OP_filter); }

// The output bits of one element from its operands' bits (those the op reads).
uint apply(uint a_bits, uint b_bits, uint c_bits) {
    if (is_op(OP_fill)) return pc.p0; // the host encoded the value in D_DT
    if (is_op(OP_cast)) return cast_op(a_bits);
    if (is_op(OP_filter)) { // filter(a, b, cond): cond != 0 ? a : b, bit for bit
        bool take_a = dt_is_float(C_DT) ? bits_to_float(C_DT, c_bits) != 0.0 : c_bits != 0u;
        return take_a ? a_bits : b_bits;
    }
#if VALUE_CLASS == 0
    return float_op(bits_to_float(A_DT, a_bits), bits_to_float(B_DT, b_bits), bits_to_float(C_DT, c_bits), a_bits);
#elif VALUE_CLASS == 1
    return int_op(bits_to_int(A_DT, a_bits), bits_to_int(B_DT, b_bits), a_bits, b_bits);
#else
    return uint_op(bits_to_uint(A_DT, a_bits), bits_to_uint(B_DT, b_bits));
#endif
}

// The output bits of element e (0 <= e < n).
uint element(uint e) {
    uint ia = pc.a_offset, ib = pc.b_offset, ic = pc.c_offset;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
        uint coord = e % pc.shape[d];
        e /= pc.shape[d];
        ia += coord * pc.a_strides[d];
        ib += coord * pc.b_strides[d];
        ic += coord * pc.c_strides[d];
    }
    uint a_bits = reads_a() ? load_a(A_DT, ia) : 0u;
    uint b_bits = reads_b() ? load_b(B_DT, ib) : 0u;
    uint c_bits = reads_c() ? load_c(C_DT, ic) : 0u;
    return apply(a_bits, b_bits, c_bits);
}

// ---- the contiguous path: every operand and the output are contiguous,
// of one element width and word-aligned alike, so output word w comes from
// word w of each operand, lane by lane. The loops are kept rolled: apply()
// is large for some ops, and each copy of it lengthens every pipeline's
// compile (inlined 24 times for 8-bit types, test_vulkan's 443 pipelines
// compiled 4.6 times slower on an H200) ----
uint word_op(uint wa, uint wb, uint wc) {
    uint per = dt_per_word(D_DT);
    uint lane_bits = 32u / per, mask = per == 1u ? 0xFFFFFFFFu : (1u << lane_bits) - 1u, r = 0u;
    [[dont_unroll]] for (uint lane = 0u; lane < per; lane++) {
        uint sh = lane * lane_bits;
        r |= (apply((wa >> sh) & mask, (wb >> sh) & mask, (wc >> sh) & mask) & mask) << sh;
    }
    return r;
}

// Four words per invocation (16-byte loads and stores) in a grid-stride
// loop; the host sends whole uvec4 only (pc.n is a multiple of 4).
void contiguous_main(uint t) {
    uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x;
    uint vecs = pc.n >> 2u;
    uint a0 = pc.a_offset >> 2u, b0 = pc.b_offset >> 2u, c0 = pc.c_offset >> 2u, d0 = pc.d_offset >> 2u;
    for (uint v = t; v < vecs; v += stride) {
        uvec4 a = reads_a() ? a4[a0 + v] : uvec4(0u);
        uvec4 b = reads_b() ? b4[b0 + v] : uvec4(0u);
        uvec4 c = reads_c() ? c4[c0 + v] : uvec4(0u);
        uvec4 r;
        [[dont_unroll]] for (uint i = 0u; i < 4u; i++) r[i] = word_op(a[i], b[i], c[i]);
        d4[d0 + v] = r;
    }
}

void main() {
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (pc.ndim == 0u) {
        contiguous_main(t);
        return;
    }
    uint per = dt_per_word(D_DT);
    uint lane_bits = 32u / per;
    uint w = pc.d_offset / per + t;      // the output word this invocation writes
    uint first = w * per;                // its first element, counted from the buffer start
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
