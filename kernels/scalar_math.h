/* scalar_math.h - the f32 transcendental functions, once, for every consumer:
 * the CPU kernels (math.c's loops and strided path, nn.c's softmax), the
 * Vulkan shaders (through vulkan/shaders/math.glsl: exp_f32, tanh_f32,
 * gelu_f32) and the code the synthesizer emits (inlined into oi_gemm.h and
 * oi_math.glsl by scripts/embed_synth_sources.py). The GPU computes exactly
 * the CPU's algorithm.
 *
 *   OI_S_exp_f32        e^x, 1-2 ulp, down through the subnormals
 *   OI_S_tanh_f32       odd series below 0.625, 1 - 2 / (e^2|x| + 1) above
 *   OI_S_sigmoid_f32    1 / (1 + e^-x)
 *   OI_S_silu_f32       x / (1 + e^-x)
 *   OI_S_gelu_tanh_f32  gelu(approximate="tanh"), as x / (1 + e^-2u)
 *   OI_S_gelu_erf_f32   exact gelu, 0.5 x erfc(-x / sqrt 2), erfc by a fit
 *   OI_S_softplus_f32   log(1 + e^x) through libm's log1pf (C only)
 *
 * Written in the subset that C and GLSL share, with a prelude per language
 * (below): type names, casts, bit casts, and OI_S_PRECISE, which is GLSL's
 * `precise` (no contraction of a * b + c into an FMA, as GCC's ISO C modes
 * do not contract) and nothing in C. Every intermediate is a PRECISE local.
 * Selects are branch-free bit masks (OI_S_pick): GCC keeps float compares
 * (which may trap) and chains of selects as branches, and a branch stops
 * the vectorizer; math.c's loops over these vectorize at -O2. Constants are
 * written as the f32 values they round to, so C and GLSL read the same bits.
 * No `__` in any name (GLSL reserves it).
 *
 * log, log1p and erf have no form here: the CPU calls libm (logf, log1pf,
 * erff; softplus, below, the one function that calls it), which GLSL lacks; the shaders' own forms are in math.glsl. vexp.h's
 * AVX2/AVX-512 forms of exp and gelu are faster and stay there, checked
 * against these (tests/test_vexp.c). */
#ifndef OI_SCALAR_MATH_H
#define OI_SCALAR_MATH_H

/* ---- prelude: C ---- */
#if defined(__STDC__) || defined(__cplusplus)
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define OI_S_FN static inline __attribute__((always_inline)) /* into math.c's AVX2/AVX-512 clones too */
#else
#define OI_S_FN static inline
#endif
#define OI_S_PRECISE
#define OI_S_uint uint32_t
#define OI_S_int int32_t
#define OI_S_to_uint(x) ((uint32_t)(x))
#define OI_S_to_int(x) ((int32_t)(x))

OI_S_FN uint32_t OI_S_float_bits(float v) {
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

OI_S_FN float OI_S_bits_float(uint32_t b) {
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* ---- prelude: GLSL ---- */
#else
#define OI_S_FN
#define OI_S_PRECISE precise
#define OI_S_uint uint
#define OI_S_int int
#define OI_S_to_uint(x) uint(x)
#define OI_S_to_int(x) int(x)
#define OI_S_float_bits(v) floatBitsToUint(v)
#define OI_S_bits_float(b) uintBitsToFloat(b)
#endif

/* ---- constants (here and in vexp.h's vector forms) ----
 * exp: x = n ln2 + r, ln2 = LN2_HI + LN2_LO with LN2_HI rounded to 9
 * significant bits, so n * LN2_HI is exact for |n| <= 150; e^r by its
 * Taylor series, the coefficients 1/k! rounded to f32. */
#define OI_S_LOG2E 1.44269504088896341f
#define OI_S_LN2_HI 0.693359375f
#define OI_S_LN2_LO (-2.12194440054690583e-4f)
#define OI_S_EXP_C3 0.1666666716337204f       /* 1/3! */
#define OI_S_EXP_C4 0.0416666679084301f       /* 1/4! */
#define OI_S_EXP_C5 0.008333333767950535f     /* 1/5! */
#define OI_S_EXP_C6 0.0013888889225199819f    /* 1/6! */
#define OI_S_EXP_C7 0.00019841270113829523f   /* 1/7! */
/* gelu: sqrt(2 / pi) and the cubic term's 0.044715 (tanh form); 1 / sqrt 2 */
#define OI_S_GELU_K 0.7978845608028654f
#define OI_S_GELU_CUBIC 0.044715f
#define OI_S_SQRT1_2 0.70710678118654752f

/* Exact gelu's erfc:
 * erfc(a) for a = |z| <= 9 is e^(-a^2) R(a), where R(a) = erfc(a) e^(a^2)
 * falls smoothly from 1 to ~1 / (a sqrt pi) and is fitted by P(a) / Q(a)
 * of degrees 4 and 5 (a minimax fit of the relative error over [0, 9]
 * made for this project: 4.6e-9 in exact arithmetic, 4.6e-7 evaluated in
 * f32). erfc(-a) = 2 - erfc(a); beyond a = 9 erfc is taken as 0
 * (erfc(9) = 4e-37, near FLT_MIN: no subnormal arithmetic, which costs
 * ~100x on x86). */
#define OI_S_ERFC_P1 1.2283954620361328f
#define OI_S_ERFC_P2 0.7211584448814392f
#define OI_S_ERFC_P3 0.2242555022239685f
#define OI_S_ERFC_P4 0.031760070472955704f
#define OI_S_ERFC_Q1 2.3567750453948975f
#define OI_S_ERFC_Q2 2.3804867267608643f
#define OI_S_ERFC_Q3 1.3058741092681885f
#define OI_S_ERFC_Q4 0.3975141942501068f
#define OI_S_ERFC_Q5 0.056292369961738586f
/* Exact gelu's erfc is 0 beyond |x| = 9 sqrt 2 (a = 9). */
#define OI_S_GELU_LIMIT 12.7279220f

/* ---- building blocks ---- */
/* cond ? a : b as bit masks (see the top). */
OI_S_FN OI_S_uint OI_S_pick(bool cond, OI_S_uint a, OI_S_uint b) {
    OI_S_uint mask = 0u - OI_S_to_uint(cond);
    return (a & mask) | (b & ~mask);
}

/* A signed integer with the order of the float (NaNs beyond +-inf). */
OI_S_FN OI_S_int OI_S_order(OI_S_uint bits) {
    return OI_S_to_int(OI_S_pick(OI_S_to_int(bits) < 0, bits ^ 0x7FFFFFFFu, bits));
}

OI_S_FN float OI_S_from_order(OI_S_int key) {
    return OI_S_bits_float(OI_S_pick(key < 0, OI_S_to_uint(key) ^ 0x7FFFFFFFu, OI_S_to_uint(key)));
}

/* ---- the functions ---- */
/* e^x without branches: x = n ln2 + r with |r| <= ln2 / 2; e^r by its
 * Taylor series to degree 7 (truncation error below 6e-9 relative); 2^n
 * is built in the exponent field in two halves so that results down to
 * the smallest subnormal come out right. Overflow gives +inf, -inf gives 0,
 * NaN stays NaN (quieted). */
OI_S_FN float OI_S_exp_f32(float x) {
    const float max_x = 88.72283935546875f;  /* just above ln(FLT_MAX): beyond, +inf */
    const float min_x = -103.972084045410f;   /* below ln(smallest subnormal / 2): 0 */
    const float round_magic = 12582912.0f;    /* 1.5 * 2^23: adding it rounds to an integer */
    OI_S_uint xb = OI_S_float_bits(x);
    OI_S_int key = OI_S_order(xb), key_max = OI_S_order(OI_S_float_bits(max_x));
    OI_S_int key_min = OI_S_order(OI_S_float_bits(min_x));
    bool over = key > key_max, under = key < key_min;
    float c = OI_S_from_order(OI_S_to_int(OI_S_pick(over, OI_S_to_uint(key_max),
                                                    OI_S_pick(under, OI_S_to_uint(key_min), OI_S_to_uint(key)))));
    OI_S_PRECISE float t = c * OI_S_LOG2E + round_magic;
    OI_S_PRECISE float n = t - round_magic;
    OI_S_int ni = OI_S_to_int(OI_S_float_bits(t)) - OI_S_to_int(OI_S_float_bits(round_magic));
    OI_S_PRECISE float r = c - n * OI_S_LN2_HI;
    r = r - n * OI_S_LN2_LO;
    OI_S_PRECISE float p = 1.0f + r * (1.0f + r * (0.5f + r * (OI_S_EXP_C3 + r * (OI_S_EXP_C4 + r * (OI_S_EXP_C5 +
                           r * (OI_S_EXP_C6 + r * OI_S_EXP_C7))))));
    OI_S_int half_n = ni / 2;
    float scale_a = OI_S_bits_float(OI_S_to_uint(half_n + 127) << 23);
    float scale_b = OI_S_bits_float(OI_S_to_uint(ni - half_n + 127) << 23);
    OI_S_PRECISE float y = p * scale_a * scale_b;
    OI_S_uint yb = OI_S_pick(over, 0x7F800000u /* +inf */, OI_S_pick(under, 0u, OI_S_float_bits(y)));
    return OI_S_bits_float(OI_S_pick((xb & 0x7FFFFFFFu) > 0x7F800000u, xb | 0x00400000u /* quiet NaN */, yb));
}

/* tanh of |x|, then x's sign: the odd Taylor series through x^19 below
 * |x| = 0.625 (under 1e-8 relative there), 1 - 2 / (e^2|x| + 1) above (no
 * cancellation left). The coefficients are 2^2k (2^2k - 1) B_2k / (2k)!
 * (-1/3, 2/15, -17/315, ...) rounded to f32. */
OI_S_FN float OI_S_tanh_f32(float x) {
    OI_S_uint xb = OI_S_float_bits(x), ab = xb & 0x7FFFFFFFu;
    float a = OI_S_bits_float(ab);
    OI_S_PRECISE float z = x * x;
    OI_S_PRECISE float series = a + a * z * (-0.3333333432674408f + z * (0.13333334028720856f +
                                z * (-0.05396825447678566f + z * (0.021869488060474396f + z * (-0.0088632358238101f +
                                z * (0.0035921279340982437f + z * (-0.0014558343682438135f +
                                z * (0.0005900274263694882f + z * -0.0002391291200183332f))))))));
    OI_S_PRECISE float big = 1.0f - 2.0f / (OI_S_exp_f32(2.0f * a) + 1.0f);
    OI_S_uint r = OI_S_pick(ab < 0x3F200000u /* 0.625f */, OI_S_float_bits(series), OI_S_float_bits(big));
    return OI_S_bits_float(r | (xb & 0x80000000u));
}

OI_S_FN float OI_S_sigmoid_f32(float x) { return 1.0f / (1.0f + OI_S_exp_f32(-x)); }

OI_S_FN float OI_S_silu_f32(float x) { return x / (1.0f + OI_S_exp_f32(-x)); }

/* 0.5 x (1 + tanh(u)) == x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3):
 * no cancellation for x < 0. */
OI_S_FN float OI_S_gelu_tanh_f32(float x) {
    OI_S_PRECISE float u = OI_S_GELU_K * (x + OI_S_GELU_CUBIC * x * x * x);
    return x / (1.0f + OI_S_exp_f32(-2.0f * u));
}

/* Exact gelu, 0.5 x erfc(z) with z = -x / sqrt 2, without branches: the
 * erfc fit above with a = |z|. The exponent a^2 = x^2 / 2 comes from x,
 * not from the rounded z (erfc(a) moves by 2a^2 times a relative change of
 * a): x = xh + xl with xh keeping 12 bits, so xh^2 / 2 is exact and the
 * small rest xl (x + xh) / 2 goes through a second exp (vexp.h splits x^2
 * with an FMA instead). |x| > 9 sqrt 2 (erfc < 4e-37) gives 0 x; NaN stays
 * NaN. */
OI_S_FN float OI_S_gelu_erf_f32(float x) {
    OI_S_uint xb = OI_S_float_bits(x), ab = xb & 0x7FFFFFFFu;
    OI_S_uint limit = OI_S_float_bits(OI_S_GELU_LIMIT);
    bool tail = ab > limit && ab <= 0x7F800000u;
    ab = OI_S_pick(tail, limit, ab);
    float ax = OI_S_bits_float(ab);
    OI_S_PRECISE float a = ax * OI_S_SQRT1_2;
    float xh = OI_S_bits_float(ab & 0xFFFFF000u);
    OI_S_PRECISE float xl = ax - xh;
    OI_S_PRECISE float p = 1.0f + a * (OI_S_ERFC_P1 + a * (OI_S_ERFC_P2 + a * (OI_S_ERFC_P3 + a * OI_S_ERFC_P4)));
    OI_S_PRECISE float q = 1.0f + a * (OI_S_ERFC_Q1 + a * (OI_S_ERFC_Q2 + a * (OI_S_ERFC_Q3 +
                           a * (OI_S_ERFC_Q4 + a * OI_S_ERFC_Q5))));
    OI_S_PRECISE float body = OI_S_exp_f32(-0.5f * (xh * xh)) * OI_S_exp_f32(-0.5f * (xl * (ax + xh))) * (p / q);
    float y = OI_S_bits_float(OI_S_pick(tail, 0u, OI_S_float_bits(body))); /* erfc(|z|) */
    y = OI_S_bits_float(OI_S_pick(OI_S_to_int(xb) > 0, OI_S_float_bits(2.0f - y), OI_S_float_bits(y)));
    return 0.5f * x * y;
}

/* ---- C only: libm's log1p, which GLSL lacks (math.glsl has its own) ---- */
#if defined(__STDC__) || defined(__cplusplus)
#include <math.h>

/* softplus, log(1 + e^x) = max(x, 0) + log1p(e^-|x|): never overflows. */
OI_S_FN float OI_S_softplus_f32(float x) {
    uint32_t xb = OI_S_float_bits(x);
    float positive = OI_S_bits_float(OI_S_pick((int32_t)xb > 0, xb, 0u));
    return positive + log1pf(OI_S_exp_f32(-OI_S_bits_float(xb & 0x7FFFFFFFu)));
}
#endif

#endif /* OI_SCALAR_MATH_H */
