#version 450
// eltwise_wide.comp - eltwise.comp's ops where an operand or the output is
// 64-bit (i64, u64, f64): values computed in 64 bits as the CPU reference
// does (kernels/elementwise.c, kernels/cast.c): integers in int64/uint64,
// wrapping; f64 in double; narrower operands widened first. Needs the
// device's shaderInt64 and shaderFloat64 (the host checks caps.has_wide).
// Not here: f64 exp, log, erf, tanh, sigmoid, silu, softplus, gelu and pow
// (GLSL has no double transcendental functions; they stay on the CPU).
// An invocation writes one 64-bit output element (two words), or one
// 32-bit word of a narrower output (comparisons, casts down), as
// eltwise.comp does. Inputs are read through strides (0 = a broadcast dim).
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#include "common.glsl"
// Each op's arithmetic comes from kernels/scalar.h, as the CPU kernels take it; its ROUND
// is nothing here (r is precise, so a * b + c is never fused: two roundings, as the CPU).
#define OI_S_ROUND(x) (x)
#include "scalar.h"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint OP = 0u;
layout(constant_id = 1) const uint A_DT = DT_F64;
layout(constant_id = 2) const uint B_DT = DT_F64;
layout(constant_id = 3) const uint C_DT = DT_F64;
layout(constant_id = 4) const uint D_DT = DT_F64;

layout(binding = 0) readonly buffer BufA { uint a_buf[]; };
layout(binding = 1) readonly buffer BufB { uint b_buf[]; };
layout(binding = 2) readonly buffer BufC { uint c_buf[]; };
layout(binding = 3) buffer BufD { uint d_buf[]; };

#define OI_ELTWISE_DIMS 5
layout(push_constant) uniform Push {
    uint n;    // output elements
    uint ndim; // dims in use, 1..OI_ELTWISE_DIMS
    uint shape[OI_ELTWISE_DIMS];
    uint a_strides[OI_ELTWISE_DIMS];
    uint b_strides[OI_ELTWISE_DIMS];
    uint c_strides[OI_ELTWISE_DIMS];
    uint a_offset, b_offset, c_offset, d_offset;
    uvec2 p[3]; // op parameters, 64 bits each (low word first): double, int64 or uint64 bits
} pc;

OI_DEFINE_LOAD_BITS(load_a32, a_buf)
OI_DEFINE_LOAD_BITS(load_b32, b_buf)
OI_DEFINE_LOAD_BITS(load_c32, c_buf)
OI_DEFINE_STORE_WORD(store_d, d_buf)

// Element i of any dtype as raw bits, zero-extended to 64.
#define OI_DEFINE_LOAD_WIDE(fn, narrow, buf) \
    uint64_t fn(uint dt, uint i) { \
        if (dt_bits(dt) == 64u) return packUint2x32(uvec2(buf[2u * i], buf[2u * i + 1u])); \
        return uint64_t(narrow(dt, i)); \
    }
OI_DEFINE_LOAD_WIDE(load_a, load_a32, a_buf)
OI_DEFINE_LOAD_WIDE(load_b, load_b32, b_buf)
OI_DEFINE_LOAD_WIDE(load_c, load_c32, c_buf)

bool is_op(uint op) { return OP == op; }
bool is_nan_d(double x) { return (packUint2x32(unpackDouble2x32(x)) & 0x7FFFFFFFFFFFFFFFul) > 0x7FF0000000000000ul; }
bool is_inf_d(double x) { return (packUint2x32(unpackDouble2x32(x)) & 0x7FFFFFFFFFFFFFFFul) == 0x7FF0000000000000ul; }
double bits_to_double(uint64_t b) { return packDouble2x32(unpackUint2x32(b)); }
uint64_t double_bits(double v) { return packUint2x32(unpackDouble2x32(v)); }

// ---- loads: the CPU's oi__load_f64 / oi__load_i64 / oi__load_u64 ----
// Saturating double -> integer, truncating; NaN -> 0.
int64_t f64_to_i64_sat(double v) {
    if (is_nan_d(v)) return 0l;
    if (v >= 9223372036854775807.0LF) return 0x7FFFFFFFFFFFFFFFl;
    if (v <= -9223372036854775808.0LF) return int64_t(0x8000000000000000ul);
    return int64_t(v);
}
uint64_t f64_to_u64_sat(double v) {
    if (is_nan_d(v) || v <= 0.0LF) return 0ul;
    if (v >= 18446744073709551615.0LF) return 0xFFFFFFFFFFFFFFFFul;
    return uint64_t(v);
}
double to_f64(uint dt, uint64_t b) {
    if (dt == DT_F64) return bits_to_double(b);
    if (dt_is_float(dt)) return double(bits_to_float(dt, uint(b)));
    if (dt == DT_U64) return double(b);
    if (dt == DT_I64) return double(int64_t(b));
    if (dt_is_signed(dt)) return double(bits_to_int(dt, uint(b)));
    return double(bits_to_uint(dt, uint(b)));
}
int64_t to_i64(uint dt, uint64_t b) {
    if (dt == DT_F64 || dt_is_float(dt)) return f64_to_i64_sat(to_f64(dt, b));
    if (dt_bits(dt) == 64u) return int64_t(b);
    if (dt_is_signed(dt)) return int64_t(bits_to_int(dt, uint(b)));
    return int64_t(bits_to_uint(dt, uint(b)));
}
uint64_t to_u64(uint dt, uint64_t b) {
    if (dt == DT_F64 || dt_is_float(dt)) return f64_to_u64_sat(to_f64(dt, b));
    return uint64_t(to_i64(dt, b)); // negative values wrap
}

// ---- stores: the CPU's oi__store_f64 / _i64 / _u64, as D_DT bits ----
uint64_t wide_mask(uint dt) { return dt_bits(dt) == 64u ? 0xFFFFFFFFFFFFFFFFul : uint64_t(dt_mask(dt)); }
uint64_t f64_to_float_bits(uint dt, double v) { // through f32 below f64, as the CPU
    if (dt == DT_F64) return double_bits(v);
    return uint64_t(float_to_bits(dt, float(v)));
}
uint64_t from_u64(uint dt, uint64_t v) {
    if (dt == DT_F64 || dt_is_float(dt)) return f64_to_float_bits(dt, double(v));
    if (dt == DT_BOOL) return uint64_t(v != 0ul);
    return v & wide_mask(dt);
}
uint64_t from_i64(uint dt, int64_t v) {
    if (dt == DT_F64 || dt_is_float(dt)) return f64_to_float_bits(dt, double(v));
    return from_u64(dt, uint64_t(v));
}
uint64_t from_f64(uint dt, double v) {
    if (dt == DT_F64 || dt_is_float(dt)) return f64_to_float_bits(dt, v);
    if (dt == DT_BOOL) return uint64_t(v != 0.0LF);
    if (dt_is_signed(dt) || dt == DT_I64) return from_i64(dt, f64_to_i64_sat(v));
    return from_u64(dt, f64_to_u64_sat(v));
}

double param_f(uint i) { return packDouble2x32(pc.p[i]); }
int64_t param_i(uint i) { return int64_t(packUint2x32(pc.p[i])); }
uint64_t param_u(uint i) { return packUint2x32(pc.p[i]); }

#if VALUE_CLASS == 0
// ---- f64 (and casts from narrower floats) ----
// NaN-ignoring min/max (C's fmin/fmax), as the CPU.
double nan_min_d(double a, double b) { return is_nan_d(a) ? b : (is_nan_d(b) ? a : min(a, b)); }
double nan_max_d(double a, double b) { return is_nan_d(a) ? b : (is_nan_d(b) ? a : max(a, b)); }
double round_half_away_d(double x) {
    double t = trunc(x);
    return abs(x - t) >= 0.5LF ? t + sign(x) : t;
}
uint64_t float_op(double a, double b, double c, uint64_t a_bits) {
    precise double r = 0.0LF;
    if (is_op(OP_add)) r = OI_S_add(a, b);
    else if (is_op(OP_sub)) r = OI_S_sub(a, b);
    else if (is_op(OP_mul)) r = OI_S_mul(a, b);
    else if (is_op(OP_div)) r = OI_S_div(a, b, param_f(0));
    else if (is_op(OP_fma)) r = OI_S_fma(a, b, c, OI_S_ROUND);
    else if (is_op(OP_min)) r = nan_min_d(a, b);
    else if (is_op(OP_max)) r = nan_max_d(a, b);
    else if (is_op(OP_neg)) r = OI_S_neg(a);
    else if (is_op(OP_abs)) r = abs(a);
    else if (is_op(OP_recip)) r = OI_S_recip(a, param_f(0));
    else if (is_op(OP_relu)) { // p0 slope, p1 clamp_min, p2 clamp_max; NaN stays NaN
        r = OI_S_relu_raw(a, param_f(0), OI_S_ROUND);
        if (!is_nan_d(r)) r = OI_S_clamp_lo(OI_S_clamp_hi(r, param_f(2)), param_f(1));
    }
    else if (is_op(OP_clamp)) r = nan_min_d(nan_max_d(a, param_f(0)), param_f(1));
    else if (is_op(OP_floor)) r = floor(a);
    else if (is_op(OP_ceil)) r = ceil(a);
    else if (is_op(OP_round)) r = round_half_away_d(a);
    else if (is_op(OP_trunc)) r = trunc(a);
    else if (is_op(OP_sign)) return from_i64(D_DT, a > 0.0LF ? 1l : (a < 0.0LF ? -1l : 0l));
    else if (is_op(OP_eq)) return uint64_t(OI_S_eq(a, b));
    else if (is_op(OP_ne)) return uint64_t(OI_S_ne(a, b));
    else if (is_op(OP_lt)) return uint64_t(OI_S_lt(a, b));
    else if (is_op(OP_le)) return uint64_t(OI_S_le(a, b));
    else if (is_op(OP_gt)) return uint64_t(OI_S_gt(a, b));
    else if (is_op(OP_ge)) return uint64_t(OI_S_ge(a, b));
    else if (is_op(OP_is_nan)) return uint64_t(is_nan_d(a));
    else if (is_op(OP_is_inf)) return uint64_t(is_inf_d(a));
    else if (is_op(OP_is_neg)) return uint64_t(double_bits(a) >> 63u);
    else if (is_op(OP_fill_nan_like)) return (is_nan_d(a) || is_inf_d(a)) ? param_u(0) : a_bits;
    else if (is_op(OP_sqrt)) r = a < 0.0LF ? bits_to_double(0x7FF8000000000000ul) : (a == 0.0LF ? a : sqrt(a));
    else if (is_op(OP_rsqrt)) // 1 / sqrt(a), its special cases spelled out as in eltwise.comp
        r = a < 0.0LF ? bits_to_double(0x7FF8000000000000ul) : (a == 0.0LF ? 1.0LF / a : (is_inf_d(a) ? 0.0LF : 1.0LF / sqrt(a)));
    return from_f64(D_DT, r);
}
#endif

uint64_t shift_left64(uint64_t bits, uint amount) { return amount >= 64u ? 0ul : bits << amount; }
uint popcount64(uint64_t v) { uvec2 w = unpackUint2x32(v); return uint(bitCount(w.x) + bitCount(w.y)); }

#if VALUE_CLASS == 1
// ---- i64 (and casts from narrower signed integers): 64-bit two's complement ----
uint64_t int_op(int64_t a, int64_t b, uint64_t a_bits, uint64_t b_bits) {
    int64_t r = 0l;
    if (is_op(OP_add)) r = OI_S_add(a, b);
    else if (is_op(OP_sub)) r = OI_S_sub(a, b);
    else if (is_op(OP_mul)) r = OI_S_mul(a, b);
    else if (is_op(OP_div)) r = OI_S_div_int(a, b, param_i(0), -a);
    else if (is_op(OP_floor_div)) r = OI_S_floor_div_int(a, b, param_i(0), -a);
    else if (is_op(OP_rem)) r = OI_S_rem_int(a, b); // C's remainder (GLSL's % is undefined for negatives)
    else if (is_op(OP_min)) r = min(a, b);
    else if (is_op(OP_max)) r = max(a, b);
    else if (is_op(OP_neg)) r = OI_S_neg(a);
    else if (is_op(OP_abs)) r = a < 0l ? -a : a;
    else if (is_op(OP_relu)) { // p0 slope, p1 clamp_min, p2 clamp_max (int64)
        r = a >= 0l ? a : a * param_i(0);
        r = OI_S_clamp_lo(OI_S_clamp_hi(r, param_i(2)), param_i(1));
    }
    else if (is_op(OP_clamp)) r = OI_S_clamp_int(a, param_i(0), param_i(1));
    else if (is_op(OP_sign)) r = a > 0l ? 1l : (a < 0l ? -1l : 0l);
    else if (is_op(OP_and)) r = a & b;
    else if (is_op(OP_or)) r = a | b;
    else if (is_op(OP_xor)) r = a ^ b;
    else if (is_op(OP_not)) r = ~a;
    else if (is_op(OP_shl)) r = int64_t(shift_left64(a_bits, pc.p[0].x));
    else if (is_op(OP_shr)) r = pc.p[0].x >= 64u ? (a < 0l ? -1l : 0l) : a >> pc.p[0].x;
    else if (is_op(OP_popcount)) return from_u64(D_DT, uint64_t(popcount64(a_bits)));
    else if (is_op(OP_eq)) return uint64_t(OI_S_eq(a, b));
    else if (is_op(OP_ne)) return uint64_t(OI_S_ne(a, b));
    else if (is_op(OP_lt)) return uint64_t(OI_S_lt(a, b));
    else if (is_op(OP_le)) return uint64_t(OI_S_le(a, b));
    else if (is_op(OP_gt)) return uint64_t(OI_S_gt(a, b));
    else if (is_op(OP_ge)) return uint64_t(OI_S_ge(a, b));
    else if (is_op(OP_is_neg)) return uint64_t(a < 0l);
    return from_i64(D_DT, r);
}
#endif

#if VALUE_CLASS == 2
// ---- u64 (and casts from narrower unsigned integers and bool) ----
uint64_t uint_op(uint64_t a, uint64_t b) {
    uint64_t r = 0ul;
    if (is_op(OP_add)) r = OI_S_add(a, b);
    else if (is_op(OP_sub)) r = OI_S_sub(a, b);
    else if (is_op(OP_mul)) r = OI_S_mul(a, b);
    else if (is_op(OP_div) || is_op(OP_floor_div)) r = OI_S_div_uint(a, b, param_u(0));
    else if (is_op(OP_rem)) r = OI_S_rem_uint(a, b);
    else if (is_op(OP_min)) r = min(a, b);
    else if (is_op(OP_max)) r = max(a, b);
    else if (is_op(OP_clamp)) r = OI_S_clamp_int(a, param_u(0), param_u(1));
    else if (is_op(OP_and)) r = a & b;
    else if (is_op(OP_or)) r = a | b;
    else if (is_op(OP_xor)) r = a ^ b;
    else if (is_op(OP_not)) r = ~a;
    else if (is_op(OP_shl)) r = shift_left64(a, pc.p[0].x);
    else if (is_op(OP_shr)) r = pc.p[0].x >= 64u ? 0ul : a >> pc.p[0].x;
    else if (is_op(OP_popcount)) r = uint64_t(popcount64(a));
    else if (is_op(OP_eq)) return uint64_t(OI_S_eq(a, b));
    else if (is_op(OP_ne)) return uint64_t(OI_S_ne(a, b));
    else if (is_op(OP_lt)) return uint64_t(OI_S_lt(a, b));
    else if (is_op(OP_le)) return uint64_t(OI_S_le(a, b));
    else if (is_op(OP_gt)) return uint64_t(OI_S_gt(a, b));
    else if (is_op(OP_ge)) return uint64_t(OI_S_ge(a, b));
    else if (is_op(OP_is_neg)) return 0ul;
    return from_u64(D_DT, r);
}
#endif

// ---- cast (kernels/cast.c): p0 = rounding mode (0 trunc, 1 floor, 2 ceil,
// 3 nearest) for float -> integer, which saturates (the host sends only
// saturating casts) ----
uint64_t cast_op(uint64_t a_bits) {
#if VALUE_CLASS == 0
    double v = to_f64(A_DT, a_bits);
    if (D_DT == DT_F64 || dt_is_float(D_DT)) return from_f64(D_DT, v);
    if (is_nan_d(v)) return 0ul;
    uint mode = pc.p[0].x;
    if (mode == 1u) v = floor(v);
    else if (mode == 2u) v = ceil(v);
    else if (mode == 3u) v = round_half_away_d(v);
    else v = trunc(v);
    uint bits = dt_bits(D_DT);
    if (dt_is_signed(D_DT) || D_DT == DT_I64) {
        double hi = double(uint64_t(1) << (bits - 1u)); // 2^(bits-1): the first value out of range
        if (v >= hi) return wide_mask(D_DT) >> 1u;
        if (v <= -hi) return (uint64_t(1) << (bits - 1u)) & wide_mask(D_DT);
        return from_i64(D_DT, int64_t(v));
    }
    if (v <= 0.0LF) return 0ul;
    if (bits == 64u ? v >= 18446744073709551616.0LF : v >= double(uint64_t(1) << bits)) return wide_mask(D_DT);
    return uint64_t(v) & wide_mask(D_DT);
#elif VALUE_CLASS == 1
    return from_i64(D_DT, to_i64(A_DT, a_bits));
#else
    return from_u64(D_DT, to_u64(A_DT, a_bits));
#endif
}

bool is_binary() {
    return is_op(OP_add) || is_op(OP_sub) || is_op(OP_mul) || is_op(OP_div) || is_op(OP_fma) ||
           is_op(OP_floor_div) || is_op(OP_rem) || is_op(OP_min) || is_op(OP_max) ||
           is_op(OP_and) || is_op(OP_or) || is_op(OP_xor) || is_op(OP_eq) || is_op(OP_ne) ||
           is_op(OP_lt) || is_op(OP_le) || is_op(OP_gt) || is_op(OP_ge);
}
bool reads_a() { return !is_op(OP_fill); }
bool reads_b() { return is_binary() || is_op(OP_filter); }
bool reads_c() { return is_op(OP_fma) || is_op(OP_filter); }

// The output bits of element e (0 <= e < n).
uint64_t element(uint e) {
    uint ia = pc.a_offset, ib = pc.b_offset, ic = pc.c_offset;
    for (int d = int(pc.ndim) - 1; d >= 0; d--) {
        uint coord = e % pc.shape[d];
        e /= pc.shape[d];
        ia += coord * pc.a_strides[d];
        ib += coord * pc.b_strides[d];
        ic += coord * pc.c_strides[d];
    }
    if (is_op(OP_fill)) return param_u(0); // the host encoded the value in D_DT
    uint64_t a = reads_a() ? load_a(A_DT, ia) : 0ul;
    uint64_t b = reads_b() ? load_b(B_DT, ib) : 0ul;
    uint64_t c = reads_c() ? load_c(C_DT, ic) : 0ul;
    if (is_op(OP_cast)) return cast_op(a);
    if (is_op(OP_filter)) { // filter(a, b, cond): cond != 0 ? a : b, bit for bit
        bool take_a = (C_DT == DT_F64 || dt_is_float(C_DT)) ? to_f64(C_DT, c) != 0.0LF : c != 0ul;
        return take_a ? a : b;
    }
#if VALUE_CLASS == 0
    return float_op(to_f64(A_DT, a), to_f64(B_DT, b), to_f64(C_DT, c), a);
#elif VALUE_CLASS == 1
    return int_op(to_i64(A_DT, a), to_i64(B_DT, b), a, b);
#else
    return uint_op(to_u64(A_DT, a), to_u64(B_DT, b));
#endif
}

void main() {
    uint t = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
    if (dt_bits(D_DT) == 64u) {
        if (t >= pc.n) return;
        uvec2 r = unpackUint2x32(element(t));
        d_buf[2u * (pc.d_offset + t)] = r.x;
        d_buf[2u * (pc.d_offset + t) + 1u] = r.y;
        return;
    }
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
        word |= (uint(element(i - pc.d_offset)) << (lane * lane_bits)) & lane_mask;
    }
    store_d(D_DT, w, word, keep);
}
