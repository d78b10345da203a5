/* half.h - the scalar conversions between f32 and the 16-bit floats (IEEE
 * half f16, bfloat16 bf16), once: dtype.c's oi_f16_to_f32/oi_f32_to_f16 and
 * oi_f32_to_bf16, cast.c's contiguous casts, quant.c's block scales and
 * exec_precision.c's scalar path all call these. The vector paths (F16C,
 * AVX2, quant.c's SSE block scales) stay beside their loops and are checked
 * against these (tests/test_precision.c, tests/test_nn_ops.c).
 *
 * Encoding rounds to nearest, ties to even; overflow gives inf; below half
 * the smallest subnormal gives signed zero; NaN becomes the quiet NaN of
 * its sign (payload dropped). Decoding is exact; its NaN policy is the
 * caller's (OI__HALF_NAN_QUIET / OI__HALF_NAN_KEEP, below).
 *
 * Branch-free where it matters: the selects are bit masks, so a loop over
 * oi__f16_to_f32 vectorizes (quant.c's dot products). */
#ifndef OI_HALF_H
#define OI_HALF_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define OI__HALF_INLINE static inline __attribute__((always_inline))
#else
#define OI__HALF_INLINE static inline
#endif

/* The decoder's NaN policy. QUIET: 0x7FC00000 with the sign (the public
 * oi_f16_to_f32's contract, and what every cast gives). KEEP: the payload
 * moves into the f32 mantissa unchanged, quiet bit included or not
 * (quant.c: a block scale is data, passed through as stored). */
#define OI__HALF_NAN_QUIET false
#define OI__HALF_NAN_KEEP true

OI__HALF_INLINE uint32_t oi__half_f32_bits(float v) {
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

OI__HALF_INLINE float oi__half_f32_from_bits(uint32_t b) {
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* cond ? a : b on masks (a branch would stop the vectorizer). */
OI__HALF_INLINE uint32_t oi__half_pick(bool cond, uint32_t a, uint32_t b) {
    uint32_t mask = 0u - (uint32_t)cond;
    return (a & mask) | (b & ~mask);
}

/* f16 bits as f32. Finite: the exponent and mantissa placed as an f32's
 * and scaled by 2^(127 - 15), exact for normals and subnormals alike.
 * inf and NaN: the all-ones exponent, then the NaN policy. */
OI__HALF_INLINE float oi__f16_to_f32(uint16_t h, bool keep_nan_payload) {
    uint32_t em = h & 0x7FFFu, placed = em << 13;
    uint32_t finite = oi__half_f32_bits(oi__half_f32_from_bits(placed) * 0x1p112f);
    uint32_t special = placed | 0x70000000u; /* inf, or NaN with its payload */
    if (!keep_nan_payload)
        special = oi__half_pick(em > 0x7C00u, 0x7FC00000u, special);
    return oi__half_f32_from_bits(((uint32_t)(h & 0x8000u) << 16) | oi__half_pick(em >= 0x7C00u, special, finite));
}

/* f32 as f16 bits, to nearest even. */
OI__HALF_INLINE uint16_t oi__f32_to_f16(float f) {
    uint32_t x = oi__half_f32_bits(f), sign = (x >> 16) & 0x8000u, a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return (uint16_t)(sign | 0x7E00u); /* NaN: quiet, payload dropped */
    if (a >= 0x477FF000u) /* 65520, the tie above the largest f16: inf */
        return (uint16_t)(sign | 0x7C00u);
    if (a >= 0x38800000u) /* a normal f16 (2^-14 up): add half an ulp, ties to even; a carry moves up a binade */
        return (uint16_t)(sign | (((a + 0xFFFu + ((a >> 13) & 1u)) >> 13) - 0x1C000u));
    /* a subnormal f16 or zero: the f32 significand in steps of 2^-24 is
     * m >> (126 - e), rounded the same way (a carry gives 0x0400, the
     * smallest normal) */
    uint32_t e = a >> 23, m = (a & 0x7FFFFFu) | (e ? 0x800000u : 0u);
    uint32_t shift = 126u - (e ? e : 1u); /* 14 and up */
    if (shift > 24u) /* m < 2^24: less than half the smallest subnormal */
        return (uint16_t)sign;
    uint32_t kept = m >> shift, rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    return (uint16_t)(sign | (kept + (rest > half || (rest == half && (kept & 1u)))));
}

/* f32 as bf16 bits, to nearest even: add half an ulp (less one when the
 * kept lowest bit is 0) and keep the high half; inf and overflow land on
 * inf by themselves. */
OI__HALF_INLINE uint16_t oi__f32_to_bf16(float f) {
    uint32_t x = oi__half_f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)(((x >> 16) & 0x8000u) | 0x7FC0u); /* NaN: quiet, payload dropped */
    return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/* bf16 bits as f32: the high half of an f32, exact (NaN payloads kept). */
OI__HALF_INLINE float oi__bf16_to_f32(uint16_t h) { return oi__half_f32_from_bits((uint32_t)h << 16); }

#endif /* OI_HALF_H */
