/* dtype.c - dtype names and sizes, scalar float conversions and the
 * element load/store helpers every kernel reads and writes through.
 *
 * Packed dtypes (i1 i2 i4 u1 u2 u4 t1 t2) hold element i at bits
 * [i*w, i*w+w) of the buffer, least significant bit first. Signed packed
 * values are two's complement; t1 stores -1 as bit 0 and +1 as bit 1; t2 is
 * a two's complement 2-bit value restricted to {-1, 0, 1}. */
#include "internal.h"
#include "../kernels/half.h"

#include <math.h>

/* ---- names and sizes ---- */
static const char *const oi__dtype_names[OI_DTYPE_COUNT] = {
    NULL, "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "f32", "f64", "bool", "bitset",
    "string", "ndarray", "bf16", "f8", "i4", "i2", "i1", "u4", "u2", "u1", "t2", "t1",
};

static const unsigned char oi__dtype_bit_widths[OI_DTYPE_COUNT] = {
    0, 8, 16, 32, 64, 8, 16, 32, 64, 16, 32, 64, 8, 8, 0, 0, 16, 8, 4, 2, 1, 4, 2, 1, 2, 1,
};

static bool oi__dtype_valid(oi_dtype t) { return (int)t > 0 && (int)t < (int)OI_DTYPE_COUNT; }

const char *oi_dtype_name(oi_dtype dtype) { return oi__dtype_valid(dtype) ? oi__dtype_names[dtype] : NULL; }

oi_dtype oi_dtype_from_name(const char *name) {
    if (!name)
        return OI_DTYPE_INVALID;
    if (strcmp(name, "f8e5m2") == 0 || strcmp(name, "float8e5m2") == 0)
        return OI_DTYPE_F8;
    for (int i = 1; i < (int)OI_DTYPE_COUNT; i++)
        if (strcmp(name, oi__dtype_names[i]) == 0)
            return (oi_dtype)i;
    return OI_DTYPE_INVALID;
}

unsigned oi_dtype_bits(oi_dtype dtype) { return oi__dtype_valid(dtype) ? oi__dtype_bit_widths[dtype] : 0u; }

uint64_t oi_dtype_nbytes(oi_dtype dtype, uint64_t numel) {
    uint64_t bits = oi_dtype_bits(dtype);
    if (bits >= 8) /* saturates: UINT64_MAX when the size does not fit */
        return numel > UINT64_MAX / (bits / 8) ? UINT64_MAX : numel * (bits / 8);
    return numel / 8 * bits + (numel % 8 * bits + 7) / 8; /* never overflows */
}

bool oi__dtype_is_float(oi_dtype t) {
    return t == OI_DTYPE_F8 || t == OI_DTYPE_BF16 || t == OI_DTYPE_F16 || t == OI_DTYPE_F32 || t == OI_DTYPE_F64;
}

bool oi__dtype_is_signed(oi_dtype t) {
    switch (t) {
    case OI_DTYPE_I8: case OI_DTYPE_I16: case OI_DTYPE_I32: case OI_DTYPE_I64:
    case OI_DTYPE_I1: case OI_DTYPE_I2: case OI_DTYPE_I4: case OI_DTYPE_T1: case OI_DTYPE_T2:
        return true;
    default:
        return false;
    }
}

bool oi__dtype_is_unsigned(oi_dtype t) {
    switch (t) {
    case OI_DTYPE_U8: case OI_DTYPE_U16: case OI_DTYPE_U32: case OI_DTYPE_U64:
    case OI_DTYPE_U1: case OI_DTYPE_U2: case OI_DTYPE_U4:
        return true;
    default:
        return false;
    }
}

bool oi__dtype_is_packed(oi_dtype t) { return oi__dtype_valid(t) && oi_dtype_bits(t) > 0 && oi_dtype_bits(t) < 8; }

bool oi__dtype_is_tensor_type(oi_dtype t) {
    return oi__dtype_valid(t) && t != OI_DTYPE_STRING && t != OI_DTYPE_NDARRAY;
}

/* ---- scalar float conversions ----
 * One encoder and one decoder for any small IEEE-style format with
 * `ebits` exponent and `mbits` mantissa bits; f8 E5M2 (5/2) uses them.
 * f16 and bf16 take kernels/half.h's inline forms, which the kernels share
 * and which give the same bits (the same rules). Round to nearest, ties to
 * even; overflow gives inf; results below the smallest subnormal round to
 * signed zero. */
static uint32_t oi__f32_bits(float value) {
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static float oi__f32_from_bits(uint32_t bits) {
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* m >> shift, rounded to nearest with ties to even. */
static uint32_t oi__shift_round_even(uint32_t m, int shift) {
    if (shift <= 0)
        return m;
    if (shift > 25) /* m < 2^24: less than half of the smallest step */
        return 0;
    uint32_t kept = m >> shift;
    uint32_t rest = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rest > half || (rest == half && (kept & 1u)))
        kept++;
    return kept;
}

static uint32_t oi__encode_small_float(float value, int ebits, int mbits) {
    uint32_t x = oi__f32_bits(value);
    uint32_t sign = (x >> 31) << (ebits + mbits);
    uint32_t exp_all_ones = (1u << ebits) - 1u;
    x &= 0x7FFFFFFFu;
    if (x > 0x7F800000u) /* NaN: quiet, payload dropped */
        return sign | (exp_all_ones << mbits) | (1u << (mbits - 1));
    if (x == 0x7F800000u)
        return sign | (exp_all_ones << mbits);
    int bias = (1 << (ebits - 1)) - 1;
    int f32_exp = (int)(x >> 23);
    /* f32 subnormals have exponent -126 and no implicit bit */
    uint32_t m = (x & 0x7FFFFFu) | (f32_exp ? 0x800000u : 0u);
    int e = (f32_exp ? f32_exp : 1) - 127 + bias; /* target biased exponent */
    uint32_t magnitude;
    if (e >= 1) {
        /* the implicit bit lands in the exponent field, so a rounding carry
         * moves up one binade by itself */
        magnitude = ((uint32_t)(e - 1) << mbits) + oi__shift_round_even(m, 23 - mbits);
    } else {
        magnitude = oi__shift_round_even(m, 23 - mbits + (1 - e));
    }
    if (magnitude >= (exp_all_ones << mbits))
        magnitude = exp_all_ones << mbits; /* overflow: inf */
    return sign | magnitude;
}

static float oi__decode_small_float(uint32_t bits, int ebits, int mbits) {
    uint32_t exp_all_ones = (1u << ebits) - 1u;
    uint32_t sign = (bits >> (ebits + mbits)) & 1u;
    uint32_t e = (bits >> mbits) & exp_all_ones;
    uint32_t m = bits & ((1u << mbits) - 1u);
    int bias = (1 << (ebits - 1)) - 1;
    float magnitude;
    if (e == exp_all_ones)
        magnitude = m ? NAN : INFINITY;
    else if (e == 0)
        magnitude = ldexpf((float)m, 1 - bias - mbits);
    else
        magnitude = ldexpf((float)(m | (1u << mbits)), (int)e - bias - mbits);
    return sign ? -magnitude : magnitude;
}

/* f16 and bf16 by kernels/half.h (the same results as the general code,
 * checked over every f32), shared with the kernels and exec_precision.c. */
uint16_t oi_f32_to_f16(float value) { return oi__f32_to_f16(value); }
float oi_f16_to_f32(uint16_t bits) { return oi__f16_to_f32(bits, OI__HALF_NAN_QUIET); }
uint16_t oi_f32_to_bf16(float value) { return oi__f32_to_bf16(value); }
float oi_bf16_to_f32(uint16_t bits) { return oi__bf16_to_f32(bits); }
uint8_t oi_f32_to_f8(float value) { return (uint8_t)oi__encode_small_float(value, 5, 2); }
float oi_f8_to_f32(uint8_t bits) { return oi__decode_small_float(bits, 5, 2); }

/* ---- raw element access ---- */
uint64_t oi__load_bits(oi_dtype t, const void *data, int64_t i) {
    const unsigned char *bytes = (const unsigned char *)data;
    unsigned w = oi_dtype_bits(t);
    if (w < 8) {
        if (w == 0)
            return 0;
        uint64_t bit = (uint64_t)i * w;
        return (uint64_t)(bytes[bit / 8] >> (bit % 8)) & ((1u << w) - 1u);
    }
    switch (w) {
    case 8: return bytes[i];
    case 16: { uint16_t v; memcpy(&v, bytes + i * 2, 2); return v; }
    case 32: { uint32_t v; memcpy(&v, bytes + i * 4, 4); return v; }
    default: { uint64_t v; memcpy(&v, bytes + i * 8, 8); return v; }
    }
}

void oi__store_bits(oi_dtype t, void *data, int64_t i, uint64_t bits) {
    unsigned char *bytes = (unsigned char *)data;
    unsigned w = oi_dtype_bits(t);
    if (w < 8) {
        if (w == 0)
            return;
        uint64_t bit = (uint64_t)i * w;
        unsigned mask = ((1u << w) - 1u) << (bit % 8);
        unsigned char *byte = bytes + bit / 8;
        *byte = (unsigned char)((*byte & ~mask) | (((unsigned)bits << (bit % 8)) & mask));
        return;
    }
    switch (w) {
    case 8: bytes[i] = (unsigned char)bits; break;
    case 16: { uint16_t v = (uint16_t)bits; memcpy(bytes + i * 2, &v, 2); break; }
    case 32: { uint32_t v = (uint32_t)bits; memcpy(bytes + i * 4, &v, 4); break; }
    default: memcpy(bytes + i * 8, &bits, 8); break;
    }
}

/* ---- typed element access ---- */
/* Sign-extends the low `w` bits. */
static int64_t oi__sign_extend(uint64_t bits, unsigned w) {
    if (w >= 64)
        return (int64_t)bits;
    uint64_t sign_bit = (uint64_t)1 << (w - 1);
    bits &= (sign_bit << 1) - 1u;
    return (int64_t)((bits ^ sign_bit) - sign_bit);
}

static double oi__float_bits_to_f64(oi_dtype t, uint64_t bits) {
    switch (t) {
    case OI_DTYPE_F8: return oi_f8_to_f32((uint8_t)bits);
    case OI_DTYPE_BF16: return oi_bf16_to_f32((uint16_t)bits);
    case OI_DTYPE_F16: return oi_f16_to_f32((uint16_t)bits);
    case OI_DTYPE_F32: return oi__f32_from_bits((uint32_t)bits);
    default: { double v; memcpy(&v, &bits, sizeof v); return v; }
    }
}

static uint64_t oi__f64_to_float_bits(oi_dtype t, double v) {
    switch (t) {
    case OI_DTYPE_F8: return oi_f32_to_f8((float)v);
    case OI_DTYPE_BF16: return oi_f32_to_bf16((float)v);
    case OI_DTYPE_F16: return oi_f32_to_f16((float)v);
    case OI_DTYPE_F32: return oi__f32_bits((float)v);
    default: { uint64_t bits; memcpy(&bits, &v, sizeof bits); return bits; }
    }
}

/* Integer value of a non-float element (bool/bitset/unsigned zero-extend). */
static int64_t oi__int_value(oi_dtype t, uint64_t bits) {
    if (t == OI_DTYPE_T1)
        return bits ? 1 : -1;
    if (t == OI_DTYPE_BOOL)
        return bits != 0;
    if (oi__dtype_is_signed(t))
        return oi__sign_extend(bits, oi_dtype_bits(t));
    return (int64_t)bits;
}

/* Saturating float -> integer, truncating toward zero; NaN -> 0. */
static int64_t oi__f64_to_i64_sat(double v) {
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

static uint64_t oi__f64_to_u64_sat(double v) {
    if (v != v || v <= 0.0)
        return 0;
    if (v >= 18446744073709551615.0)
        return UINT64_MAX;
    return (uint64_t)v;
}

double oi__load_f64(oi_dtype t, const void *data, int64_t i) {
    uint64_t bits = oi__load_bits(t, data, i);
    if (oi__dtype_is_float(t))
        return oi__float_bits_to_f64(t, bits);
    if (t == OI_DTYPE_U64)
        return (double)bits;
    return (double)oi__int_value(t, bits);
}

int64_t oi__load_i64(oi_dtype t, const void *data, int64_t i) {
    uint64_t bits = oi__load_bits(t, data, i);
    if (oi__dtype_is_float(t))
        return oi__f64_to_i64_sat(oi__float_bits_to_f64(t, bits));
    return oi__int_value(t, bits);
}

uint64_t oi__load_u64(oi_dtype t, const void *data, int64_t i) {
    uint64_t bits = oi__load_bits(t, data, i);
    if (oi__dtype_is_float(t))
        return oi__f64_to_u64_sat(oi__float_bits_to_f64(t, bits));
    return (uint64_t)oi__int_value(t, bits); /* negative values wrap */
}

/* Integer stores keep the low bits (wrap); bool stores v != 0; t1 stores
 * the sign (v > 0 -> +1, else -1). */
void oi__store_u64(oi_dtype t, void *data, int64_t i, uint64_t v) {
    if (oi__dtype_is_float(t))
        oi__store_bits(t, data, i, oi__f64_to_float_bits(t, (double)v));
    else if (t == OI_DTYPE_BOOL)
        oi__store_bits(t, data, i, v != 0);
    else if (t == OI_DTYPE_T1)
        oi__store_bits(t, data, i, v != 0);
    else
        oi__store_bits(t, data, i, v);
}

void oi__store_i64(oi_dtype t, void *data, int64_t i, int64_t v) {
    if (oi__dtype_is_float(t))
        oi__store_bits(t, data, i, oi__f64_to_float_bits(t, (double)v));
    else if (t == OI_DTYPE_T1)
        oi__store_bits(t, data, i, v > 0);
    else
        oi__store_u64(t, data, i, (uint64_t)v);
}

/* Float stores into integer dtypes truncate toward zero and saturate to
 * the 64-bit range first (NaN -> 0), then wrap like any integer store. */
void oi__store_f64(oi_dtype t, void *data, int64_t i, double v) {
    if (oi__dtype_is_float(t))
        oi__store_bits(t, data, i, oi__f64_to_float_bits(t, v));
    else if (t == OI_DTYPE_BOOL)
        oi__store_bits(t, data, i, v != 0.0);
    else if (oi__dtype_is_unsigned(t) || t == OI_DTYPE_BITSET)
        oi__store_u64(t, data, i, oi__f64_to_u64_sat(v));
    else
        oi__store_i64(t, data, i, oi__f64_to_i64_sat(v));
}
