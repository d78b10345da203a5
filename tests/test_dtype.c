/* test_dtype.c - dtype names/sizes, the float conversions and the element
 * load/store helpers. Expected bit patterns are worked out by hand from the
 * formats (and checked against numpy float16 for f16). */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"
#include "check.h"

#include <math.h>

static void test_names_and_sizes(void) {
    CHECK(strcmp(oi_dtype_name(OI_DTYPE_F32), "f32") == 0);
    CHECK(strcmp(oi_dtype_name(OI_DTYPE_T1), "t1") == 0);
    CHECK(strcmp(oi_dtype_name(OI_DTYPE_BITSET), "bitset") == 0);
    CHECK(oi_dtype_name(OI_DTYPE_INVALID) == NULL);
    CHECK(oi_dtype_name((oi_dtype)99) == NULL);
    CHECK_EQ_INT(oi_dtype_from_name("bf16"), OI_DTYPE_BF16);
    CHECK_EQ_INT(oi_dtype_from_name("f8"), OI_DTYPE_F8);
    CHECK_EQ_INT(oi_dtype_from_name("f8e5m2"), OI_DTYPE_F8);
    CHECK_EQ_INT(oi_dtype_from_name("float8e5m2"), OI_DTYPE_F8);
    CHECK_EQ_INT(oi_dtype_from_name("u2"), OI_DTYPE_U2);
    CHECK_EQ_INT(oi_dtype_from_name("f33"), OI_DTYPE_INVALID);
    CHECK_EQ_INT(oi_dtype_from_name(NULL), OI_DTYPE_INVALID);
    for (int t = 1; t < OI_DTYPE_COUNT; t++)
        CHECK_EQ_INT(oi_dtype_from_name(oi_dtype_name((oi_dtype)t)), t);

    CHECK_EQ_INT(oi_dtype_bits(OI_DTYPE_I4), 4);
    CHECK_EQ_INT(oi_dtype_bits(OI_DTYPE_T2), 2);
    CHECK_EQ_INT(oi_dtype_bits(OI_DTYPE_U1), 1);
    CHECK_EQ_INT(oi_dtype_bits(OI_DTYPE_BOOL), 8);
    CHECK_EQ_INT(oi_dtype_bits(OI_DTYPE_BF16), 16);
    CHECK_EQ_INT(oi_dtype_bits(OI_DTYPE_F64), 64);
    CHECK_EQ_INT(oi_dtype_bits(OI_DTYPE_STRING), 0);
    CHECK_EQ_INT(oi_dtype_nbytes(OI_DTYPE_F32, 6), 24);
    CHECK_EQ_INT(oi_dtype_nbytes(OI_DTYPE_I4, 5), 3);
    CHECK_EQ_INT(oi_dtype_nbytes(OI_DTYPE_U2, 5), 2);
    CHECK_EQ_INT(oi_dtype_nbytes(OI_DTYPE_T1, 9), 2);
    CHECK_EQ_INT(oi_dtype_nbytes(OI_DTYPE_U1, 0), 0);

    CHECK(oi__dtype_is_float(OI_DTYPE_F8) && oi__dtype_is_float(OI_DTYPE_BF16) && !oi__dtype_is_float(OI_DTYPE_I8));
    CHECK(oi__dtype_is_signed(OI_DTYPE_I2) && oi__dtype_is_signed(OI_DTYPE_T1) && !oi__dtype_is_signed(OI_DTYPE_U8));
    CHECK(oi__dtype_is_unsigned(OI_DTYPE_U4) && !oi__dtype_is_unsigned(OI_DTYPE_BOOL));
    CHECK(oi__dtype_is_packed(OI_DTYPE_T2) && !oi__dtype_is_packed(OI_DTYPE_I8) && !oi__dtype_is_packed(OI_DTYPE_STRING));
    CHECK(oi__dtype_is_tensor_type(OI_DTYPE_BITSET) && !oi__dtype_is_tensor_type(OI_DTYPE_NDARRAY) &&
          !oi__dtype_is_tensor_type(OI_DTYPE_INVALID));
}

static void test_f16(void) {
    CHECK_EQ_INT(oi_f32_to_f16(1.0f), 0x3C00);
    CHECK_EQ_INT(oi_f32_to_f16(-2.0f), 0xC000);
    CHECK_EQ_INT(oi_f32_to_f16(65504.0f), 0x7BFF);        /* max */
    CHECK_EQ_INT(oi_f32_to_f16(65519.0f), 0x7BFF);        /* below the tie */
    CHECK_EQ_INT(oi_f32_to_f16(65520.0f), 0x7C00);        /* tie -> even -> inf */
    CHECK_EQ_INT(oi_f32_to_f16(1.0f + 0x1p-11f), 0x3C00);  /* tie -> even (down) */
    CHECK_EQ_INT(oi_f32_to_f16(1.0f + 0x3p-11f), 0x3C02);  /* tie -> even (up) */
    CHECK_EQ_INT(oi_f32_to_f16(0x1p-24f), 0x0001);        /* smallest subnormal */
    CHECK_EQ_INT(oi_f32_to_f16(0x1p-25f), 0x0000);        /* tie -> even zero */
    CHECK_EQ_INT(oi_f32_to_f16(0x3p-26f), 0x0001);
    CHECK_EQ_INT(oi_f32_to_f16(0x1p-14f), 0x0400);        /* smallest normal */
    CHECK_EQ_INT(oi_f32_to_f16(0x3FFp-24f), 0x03FF);      /* largest subnormal */
    CHECK_EQ_INT(oi_f32_to_f16(-0.0f), 0x8000);
    CHECK_EQ_INT(oi_f32_to_f16(1e-8f), 0x0000);
    CHECK_EQ_INT(oi_f32_to_f16(INFINITY), 0x7C00);
    CHECK_EQ_INT(oi_f32_to_f16(-INFINITY), 0xFC00);
    CHECK_EQ_INT(oi_f32_to_f16(1e10f), 0x7C00);
    uint16_t nan16 = oi_f32_to_f16(NAN);
    CHECK((nan16 & 0x7C00) == 0x7C00 && (nan16 & 0x03FF) != 0);

    CHECK(oi_f16_to_f32(0x3C00) == 1.0f);
    CHECK(oi_f16_to_f32(0x7BFF) == 65504.0f);
    CHECK(oi_f16_to_f32(0x0001) == 0x1p-24f);
    CHECK(oi_f16_to_f32(0x03FF) == 0x3FFp-24f);
    CHECK(oi_f16_to_f32(0xC000) == -2.0f);
    CHECK(isinf(oi_f16_to_f32(0xFC00)) && oi_f16_to_f32(0xFC00) < 0);
    CHECK(isnan(oi_f16_to_f32(0x7E00)));
    CHECK(signbit(oi_f16_to_f32(0x8000)) && oi_f16_to_f32(0x8000) == 0.0f);
    /* every finite f16 survives a round trip */
    int bad = 0;
    for (uint32_t b = 0; b < 0x10000; b++)
        if ((b & 0x7C00) != 0x7C00 && oi_f32_to_f16(oi_f16_to_f32((uint16_t)b)) != b)
            bad++;
    CHECK_EQ_INT(bad, 0);
}

static void test_bf16(void) {
    CHECK_EQ_INT(oi_f32_to_bf16(1.0f), 0x3F80);
    CHECK_EQ_INT(oi_f32_to_bf16(-1.0f), 0xBF80);
    CHECK_EQ_INT(oi_f32_to_bf16(1.0f + 0x1p-8f), 0x3F80);  /* tie -> even (down) */
    CHECK_EQ_INT(oi_f32_to_bf16(1.0f + 0x3p-8f), 0x3F82);  /* tie -> even (up) */
    CHECK_EQ_INT(oi_f32_to_bf16(1.0f + 0x1p-7f + 0x1p-9f), 0x3F81);
    CHECK_EQ_INT(oi_f32_to_bf16(3.0e38f), 0x7F62);         /* 3e38 = 0x7F61B1E6 -> rounds up */
    CHECK_EQ_INT(oi_f32_to_bf16(INFINITY), 0x7F80);
    CHECK_EQ_INT(oi_f32_to_bf16(-0.0f), 0x8000);
    /* f32 subnormals keep their precision where bf16 has it */
    float tiny;
    uint32_t tiny_bits = 0x00018000u; /* subnormal: tie between bf16 0x0001 and 0x0002 */
    memcpy(&tiny, &tiny_bits, 4);
    CHECK_EQ_INT(oi_f32_to_bf16(tiny), 0x0002);
    uint16_t nan_bf = oi_f32_to_bf16(NAN);
    CHECK((nan_bf & 0x7F80) == 0x7F80 && (nan_bf & 0x7F) != 0);
    CHECK(oi_bf16_to_f32(0x3F80) == 1.0f);
    CHECK(oi_bf16_to_f32(0x4049) == 3.140625f);
    CHECK(isinf(oi_bf16_to_f32(0xFF80)));
}

static void test_f8(void) {
    /* E5M2: sign | 5 exponent bits (bias 15) | 2 mantissa bits */
    CHECK_EQ_INT(oi_f32_to_f8(1.0f), 0x3C);
    CHECK_EQ_INT(oi_f32_to_f8(1.8f), 0x3F);       /* -> 1.75 */
    CHECK_EQ_INT(oi_f32_to_f8(1.9f), 0x40);       /* -> 2.0: the carry moves the exponent */
    CHECK_EQ_INT(oi_f32_to_f8(3.8f), 0x44);       /* -> 4.0 */
    CHECK_EQ_INT(oi_f32_to_f8(-0.96875f), 0xBC);  /* -> -1.0 (the original stored -0.5) */
    CHECK_EQ_INT(oi_f32_to_f8(1.125f), 0x3C);     /* tie between 1.0 and 1.25 -> even */
    CHECK_EQ_INT(oi_f32_to_f8(1.375f), 0x3E);     /* tie between 1.25 and 1.5 -> even 1.5 */
    CHECK_EQ_INT(oi_f32_to_f8(57344.0f), 0x7B);   /* max finite */
    CHECK_EQ_INT(oi_f32_to_f8(61439.0f), 0x7B);
    CHECK_EQ_INT(oi_f32_to_f8(61440.0f), 0x7C);   /* tie -> even -> inf */
    CHECK_EQ_INT(oi_f32_to_f8(-1e9f), 0xFC);
    CHECK_EQ_INT(oi_f32_to_f8(0x1p-16f), 0x01);   /* smallest subnormal */
    CHECK_EQ_INT(oi_f32_to_f8(0x3p-16f), 0x03);   /* largest subnormal */
    CHECK_EQ_INT(oi_f32_to_f8(0x1p-17f), 0x00);   /* tie -> even zero */
    CHECK_EQ_INT(oi_f32_to_f8(0x3p-18f), 0x01);   /* 0.75 of a step -> up */
    CHECK_EQ_INT(oi_f32_to_f8(0x7p-17f), 0x04);   /* 3.5 steps -> tie -> 4 = smallest normal */
    CHECK_EQ_INT(oi_f32_to_f8(-0.0f), 0x80);
    uint8_t nan8 = oi_f32_to_f8(NAN);
    CHECK((nan8 & 0x7C) == 0x7C && (nan8 & 0x03) != 0);
    CHECK(oi_f8_to_f32(0x3C) == 1.0f);
    CHECK(oi_f8_to_f32(0x7B) == 57344.0f);
    CHECK(oi_f8_to_f32(0x01) == 0x1p-16f);
    CHECK(oi_f8_to_f32(0xC1) == -2.5f);
    CHECK(isinf(oi_f8_to_f32(0x7C)));
    CHECK(isnan(oi_f8_to_f32(0x7D)));
    int bad = 0;
    for (uint32_t b = 0; b < 0x100; b++)
        if ((b & 0x7C) != 0x7C && oi_f32_to_f8(oi_f8_to_f32((uint8_t)b)) != b)
            bad++;
    CHECK_EQ_INT(bad, 0);
}

static void test_packed_layout(void) {
    /* i4: element 0 in the low nibble */
    uint8_t buf[4] = {0};
    oi__store_i64(OI_DTYPE_I4, buf, 0, -3); /* 0xD */
    oi__store_i64(OI_DTYPE_I4, buf, 1, 7);
    oi__store_i64(OI_DTYPE_I4, buf, 2, 9);  /* wraps to -7 (0x9) */
    CHECK_EQ_INT(buf[0], 0x7D);
    CHECK_EQ_INT(buf[1], 0x09);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_I4, buf, 0), -3);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_I4, buf, 1), 7);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_I4, buf, 2), -7);
    CHECK_EQ_INT(oi__load_u64(OI_DTYPE_U4, buf, 0), 13);

    /* u2: four per byte, LSB first */
    memset(buf, 0, sizeof buf);
    uint64_t u2[6] = {0, 1, 2, 3, 3, 6};
    for (int i = 0; i < 6; i++)
        oi__store_u64(OI_DTYPE_U2, buf, i, u2[i]);
    CHECK_EQ_INT(buf[0], 0xE4); /* 3<<6 | 2<<4 | 1<<2 | 0 */
    CHECK_EQ_INT(buf[1], 0x0B); /* 6 wraps to 2 */
    CHECK_EQ_INT(oi__load_u64(OI_DTYPE_U2, buf, 5), 2);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_I2, buf, 2), -2);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_I2, buf, 3), -1);

    /* i1: {-1, 0}; u1 wraps 2 -> 0 */
    memset(buf, 0, sizeof buf);
    oi__store_i64(OI_DTYPE_I1, buf, 9, -1);
    CHECK_EQ_INT(buf[1], 0x02);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_I1, buf, 9), -1);
    CHECK_EQ_INT(oi__load_u64(OI_DTYPE_U1, buf, 9), 1);
    oi__store_u64(OI_DTYPE_U1, buf, 9, 2);
    CHECK_EQ_INT(buf[1], 0x00);

    /* t1: bit 0 = -1, bit 1 = +1 */
    memset(buf, 0, sizeof buf);
    oi__store_i64(OI_DTYPE_T1, buf, 0, 1);
    oi__store_i64(OI_DTYPE_T1, buf, 1, -1);
    oi__store_i64(OI_DTYPE_T1, buf, 2, 1);
    CHECK_EQ_INT(buf[0], 0x05);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_T1, buf, 0), 1);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_T1, buf, 1), -1);
    CHECK(oi__load_f64(OI_DTYPE_T1, buf, 1) == -1.0);

    /* t2: two's complement 2-bit */
    memset(buf, 0, sizeof buf);
    oi__store_i64(OI_DTYPE_T2, buf, 0, -1);
    oi__store_i64(OI_DTYPE_T2, buf, 1, 0);
    oi__store_i64(OI_DTYPE_T2, buf, 2, 1);
    CHECK_EQ_INT(buf[0], 0x13);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_T2, buf, 0), -1);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_T2, buf, 2), 1);

    /* a store leaves the neighbours alone */
    memset(buf, 0xFF, sizeof buf);
    oi__store_u64(OI_DTYPE_U4, buf, 3, 0);
    CHECK_EQ_INT(buf[1], 0x0F);
    CHECK_EQ_INT(buf[0], 0xFF);
    CHECK_EQ_INT(oi__load_bits(OI_DTYPE_U4, buf, 2), 0xF);
    oi__store_bits(OI_DTYPE_I2, buf, 0, 0x1);
    CHECK_EQ_INT(buf[0], 0xFD);
}

static void test_wide_types(void) {
    unsigned char buf[16] = {0};
    oi__store_i64(OI_DTYPE_I8, buf, 0, 200); /* wraps to -56 */
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_I8, buf, 0), -56);
    CHECK_EQ_INT(oi__load_u64(OI_DTYPE_U8, buf, 0), 200);
    oi__store_i64(OI_DTYPE_U16, buf, 1, -1);
    CHECK_EQ_INT(oi__load_u64(OI_DTYPE_U16, buf, 1), 65535);
    oi__store_u64(OI_DTYPE_I32, buf, 1, 0x80000000u);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_I32, buf, 1), INT32_MIN);
    oi__store_u64(OI_DTYPE_U64, buf, 1, UINT64_MAX);
    CHECK(oi__load_u64(OI_DTYPE_U64, buf, 1) == UINT64_MAX);
    CHECK(oi__load_f64(OI_DTYPE_U64, buf, 1) == 18446744073709551615.0);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_U64, buf, 1), -1);

    oi__store_i64(OI_DTYPE_BOOL, buf, 3, 5);
    CHECK_EQ_INT(buf[3], 1);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_BOOL, buf, 3), 1);
    oi__store_u64(OI_DTYPE_BITSET, buf, 3, 0x1FF);
    CHECK_EQ_INT(buf[3], 0xFF);

    /* floats: stored rounded, loaded exactly */
    oi__store_f64(OI_DTYPE_F16, buf, 0, 65504.0);
    CHECK_EQ_INT(oi__load_bits(OI_DTYPE_F16, buf, 0), 0x7BFF);
    CHECK(oi__load_f64(OI_DTYPE_F16, buf, 0) == 65504.0);
    oi__store_f64(OI_DTYPE_F8, buf, 0, 1.9);
    CHECK(oi__load_f64(OI_DTYPE_F8, buf, 0) == 2.0);
    oi__store_i64(OI_DTYPE_BF16, buf, 0, 257); /* 257 -> tie -> 256 */
    CHECK(oi__load_f64(OI_DTYPE_BF16, buf, 0) == 256.0);
    oi__store_f64(OI_DTYPE_F32, buf, 1, 0.1);
    CHECK(oi__load_f64(OI_DTYPE_F32, buf, 1) == (double)0.1f);
    oi__store_f64(OI_DTYPE_F64, buf, 1, -0.1);
    CHECK(oi__load_f64(OI_DTYPE_F64, buf, 1) == -0.1);

    /* float -> int loads and stores truncate, saturate, NaN -> 0 */
    oi__store_f64(OI_DTYPE_F32, buf, 0, -2.7);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_F32, buf, 0), -2);
    CHECK_EQ_INT(oi__load_u64(OI_DTYPE_F32, buf, 0), 0);
    oi__store_f64(OI_DTYPE_F64, buf, 0, 1e30);
    CHECK(oi__load_i64(OI_DTYPE_F64, buf, 0) == INT64_MAX);
    oi__store_f64(OI_DTYPE_F64, buf, 0, NAN);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_F64, buf, 0), 0);
    oi__store_f64(OI_DTYPE_I16, buf, 0, -3.9);
    CHECK_EQ_INT(oi__load_i64(OI_DTYPE_I16, buf, 0), -3);
    oi__store_f64(OI_DTYPE_U8, buf, 0, -3.9);
    CHECK_EQ_INT(oi__load_u64(OI_DTYPE_U8, buf, 0), 0);
    oi__store_f64(OI_DTYPE_BOOL, buf, 0, 0.5);
    CHECK_EQ_INT(buf[0], 1);
}

int main(void) {
    test_names_and_sizes();
    test_f16();
    test_bf16();
    test_f8();
    test_packed_layout();
    test_wide_types();
    return check_result("test_dtype");
}
