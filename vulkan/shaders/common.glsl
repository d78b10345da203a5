// common.glsl - what every OpenInfer compute shader shares: dtype codes,
// element access in word buffers, and conversions that match the CPU
// reference bit for bit (openinfer_impl/dtype.c).
//
// Every buffer is a plain `uint[]`: elements of 8 and 16 bits are unpacked
// from their 32-bit word (little-endian, as on the host), so no 8/16-bit
// storage feature is needed. A shader writes whole words; see store_word().

#include "oi_ops.glsl"

// The .oinf ValueType tags, as oi_dtype in openinfer.h.
#define DT_I8 1u
#define DT_I16 2u
#define DT_I32 3u
#define DT_I64 4u
#define DT_U8 5u
#define DT_U16 6u
#define DT_U32 7u
#define DT_U64 8u
#define DT_F16 9u
#define DT_F32 10u
#define DT_F64 11u
#define DT_BOOL 12u
#define DT_BF16 16u

uint dt_bits(uint dt) {
    if (dt == DT_I8 || dt == DT_U8 || dt == DT_BOOL) return 8u;
    if (dt == DT_I16 || dt == DT_U16 || dt == DT_F16 || dt == DT_BF16) return 16u;
    if (dt == DT_I64 || dt == DT_U64 || dt == DT_F64) return 64u;
    return 32u;
}
bool dt_is_float(uint dt) { return dt == DT_F32 || dt == DT_F16 || dt == DT_BF16; }
bool dt_is_signed(uint dt) { return dt == DT_I8 || dt == DT_I16 || dt == DT_I32; }
// Elements per 32-bit word: 4, 2 or 1.
uint dt_per_word(uint dt) { return 32u / min(dt_bits(dt), 32u); }

// Element i (of a 8/16/32-bit dtype) as raw bits, zero-extended.
#define OI_DEFINE_LOAD_BITS(fn, buf) \
    uint fn(uint dt, uint i) { \
        uint bits = dt_bits(dt); \
        if (bits == 32u) return buf[i]; \
        if (bits == 16u) return (buf[i >> 1u] >> ((i & 1u) * 16u)) & 0xFFFFu; \
        return (buf[i >> 2u] >> ((i & 3u) * 8u)) & 0xFFu; \
    }

// ---- bits -> value ----
float bits_to_float(uint dt, uint b) {
    if (dt == DT_F32) return uintBitsToFloat(b);
    if (dt == DT_F16) return unpackHalf2x16(b).x; // exact, NaN and denormals included
    if (dt == DT_BF16) return uintBitsToFloat(b << 16u);
    if (dt == DT_BOOL) return b != 0u ? 1.0 : 0.0;
    if (dt_is_signed(dt)) {
        uint shift = 32u - dt_bits(dt);
        return float(int(b << shift) >> shift);
    }
    return float(b);
}
int bits_to_int(uint dt, uint b) {
    if (dt == DT_BOOL) return b != 0u ? 1 : 0;
    uint shift = 32u - dt_bits(dt);
    if (dt_is_signed(dt)) return int(b << shift) >> shift;
    return int(b);
}
uint bits_to_uint(uint dt, uint b) { return dt == DT_BOOL ? uint(b != 0u) : b; }

// ---- value -> bits ----
// m >> shift, rounded to nearest with ties to even (m < 2^24).
uint shift_round_even(uint m, int shift) {
    if (shift <= 0) return m;
    if (shift > 25) return 0u;
    uint kept = m >> uint(shift);
    uint rest = m & ((1u << uint(shift)) - 1u);
    uint half_step = 1u << uint(shift - 1);
    if (rest > half_step || (rest == half_step && (kept & 1u) != 0u)) kept++;
    return kept;
}
// f32 -> a smaller IEEE-style float (f16: 5/10, bf16: 8/7), round to
// nearest even, NaN quieted with its payload dropped: as oi_f32_to_f16.
uint encode_small_float(float value, int ebits, int mbits) {
    uint x = floatBitsToUint(value);
    uint sign = (x >> 31u) << uint(ebits + mbits);
    uint exp_all_ones = (1u << uint(ebits)) - 1u;
    x &= 0x7FFFFFFFu;
    if (x > 0x7F800000u) return sign | (exp_all_ones << uint(mbits)) | (1u << uint(mbits - 1));
    if (x == 0x7F800000u) return sign | (exp_all_ones << uint(mbits));
    int bias = (1 << (ebits - 1)) - 1;
    int f32_exp = int(x >> 23u);
    uint m = (x & 0x7FFFFFu) | (f32_exp != 0 ? 0x800000u : 0u);
    int e = (f32_exp != 0 ? f32_exp : 1) - 127 + bias;
    uint magnitude;
    if (e >= 1)
        magnitude = (uint(e - 1) << uint(mbits)) + shift_round_even(m, 23 - mbits);
    else
        magnitude = shift_round_even(m, 23 - mbits + (1 - e));
    if (magnitude >= (exp_all_ones << uint(mbits))) magnitude = exp_all_ones << uint(mbits);
    return sign | magnitude;
}
uint dt_mask(uint dt) { uint bits = dt_bits(dt); return bits >= 32u ? 0xFFFFFFFFu : (1u << bits) - 1u; }
uint float_to_bits(uint dt, float v) {
    if (dt == DT_F32) return floatBitsToUint(v);
    if (dt == DT_F16) return encode_small_float(v, 5, 10);
    if (dt == DT_BF16) return encode_small_float(v, 8, 7);
    return 0u; // integer targets go through cast_float_to_int
}
uint int_to_bits(uint dt, int v) { return dt == DT_BOOL ? uint(v != 0) : uint(v) & dt_mask(dt); }
uint uint_to_bits(uint dt, uint v) { return dt == DT_BOOL ? uint(v != 0u) : v & dt_mask(dt); }

// ---- rounding helpers shared by round and cast ----
float round_half_away(float x) {
    float t = trunc(x);
    return abs(x - t) >= 0.5 ? t + sign(x) : t; // x - t is exact
}
// synth-embed begin (the synthesizer's GLSL kernels: oi_kernel.glsl)
// NaN and inf tests on the bits: a driver compiling for speed may assume
// floats are finite and fold isnan()/isinf() away; integer tests it keeps.
bool is_nan_f(float x) { return (floatBitsToUint(x) & 0x7FFFFFFFu) > 0x7F800000u; }
bool is_inf_f(float x) { return (floatBitsToUint(x) & 0x7FFFFFFFu) == 0x7F800000u; }
// synth-embed end

// NaN-ignoring min/max (Rust f32::min/max), as the CPU reference.
float nan_min(float a, float b) { return is_nan_f(a) ? b : (is_nan_f(b) ? a : min(a, b)); }
float nan_max(float a, float b) { return is_nan_f(a) ? b : (is_nan_f(b) ? a : max(a, b)); }

// 64-bit elements move as word pairs: data movement needs no shaderInt64.
// fn copies element `from` of src to element `to` of dst; fn_or does so
// for from >= 0 and stores the pair (lo, hi) for from < 0.
#define OI_DEFINE_COPY_PAIR(fn, fn_or, dst, src) \
    void fn(uint to, uint from) { \
        dst[2u * to] = src[2u * from]; \
        dst[2u * to + 1u] = src[2u * from + 1u]; \
    } \
    void fn_or(uint to, int from, uint lo, uint hi) { \
        if (from >= 0) { \
            fn(to, uint(from)); \
        } else { \
            dst[2u * to] = lo; \
            dst[2u * to + 1u] = hi; \
        } \
    }

// Stores `count` lanes of packed bits into word w, keeping the lanes this
// dispatch does not own (the head/tail of a tensor that does not start or
// end on a word boundary).
#define OI_DEFINE_STORE_WORD(fn, buf) \
    void fn(uint dt, uint w, uint new_bits, uint keep_mask) { \
        if (keep_mask != 0u) new_bits = (buf[w] & keep_mask) | (new_bits & ~keep_mask); \
        buf[w] = new_bits; \
    }
