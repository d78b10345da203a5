// oi_kernel.glsl - what every kernel of encoder includes: its three buffers (f32
// words), the NaN/inf tests of vulkan/shaders/common.glsl, each op's
// arithmetic (oi_scalar.h: kernels/scalar.h) and math.glsl's functions.
#ifndef OI_KERNEL_GLSL
#define OI_KERNEL_GLSL

layout(std430, binding = 0) buffer Arena { float arena[]; }; /* the temporaries (plan.json) */
layout(std430, binding = 1) buffer State { float state[]; }; /* the declared variables, the tables */
layout(std430, binding = 2) readonly buffer Model { float model[]; }; /* the .oinf file */
/* the same words as integers: i32 and i64 (two words, the low one first) values, u8 blocks */
layout(std430, binding = 0) buffer ArenaI { int arena_i[]; };
layout(std430, binding = 1) buffer StateI { int state_i[]; };
layout(std430, binding = 2) readonly buffer ModelU { uint model_u[]; };

// NaN and inf tests on the bits: a driver compiling for speed may assume
// floats are finite and fold isnan()/isinf() away; integer tests it keeps.
bool is_nan_f(float x) { return (floatBitsToUint(x) & 0x7FFFFFFFu) > 0x7F800000u; }
bool is_inf_f(float x) { return (floatBitsToUint(x) & 0x7FFFFFFFu) == 0x7F800000u; }

#include "oi_scalar.h"
#include "oi_math.glsl"

/* floats compute in float (as the simulator's shaders): no rounding between ops */
#define OI_ROUND_F32(x) (x)
/* the bits, not x - x == 0 and x != x: shader compilers fold those to true and false */
#undef OI_S_isfinite
#define OI_S_isfinite(a) (!is_nan_f(a) && !is_inf_f(a))
#undef OI_S_is_nan
#define OI_S_is_nan(a) is_nan_f(a)
#define NAN NAN_F
#define INFINITY INF_F

/* min and max as libm's fmin and fmax: a NaN operand is ignored (GLSL's leave it undefined) */
float oi_fmin(float a, float b) { return is_nan_f(a) ? b : is_nan_f(b) ? a : min(a, b); }
float oi_fmax(float a, float b) { return is_nan_f(a) ? b : is_nan_f(b) ? a : max(a, b); }

/* is_inf and is_neg as compare.c: the bits (is_neg: the sign bit, -0.0 and -NaN too) */
#undef OI_S_is_inf
#define OI_S_is_inf(a) is_inf_f(a)
uint signbit(float x) { return floatBitsToUint(x) >> 31; }
/* round as libm's: halves away from zero (GLSL's round takes either way); x - t is exact */
float oi_round(float x) { float t = trunc(x); return abs(x - t) >= 0.5 ? t + sign(x) : t; }
/* softplus as scalar_math.h's: max(x, 0) + log1p(e^-|x|), log1p(e) as log(u) e / (u - 1), u = 1 + e
 * (exact where u rounds to 1) */
float oi_softplus(float x) {
    const float e = exp_f32(-abs(x)), u = 1.0 + e;
    return (floatBitsToInt(x) > 0 ? x : 0.0) + (u == 1.0 ? e : log_f32(u) * e / (u - 1.0));
}
/* pow as libm's powf (GLSL's is undefined for x <= 0): 1 for y = 0 or x = 1; a negative x
 * only to an integer y, negated for an odd one; zeros and infinities as C's Annex F */
float oi_pow(float x, float y) {
    if (y == 0.0 || x == 1.0) return 1.0;
    if (is_nan_f(x) || is_nan_f(y)) return NAN_F;
    const float ax = abs(x), ay = abs(y);
    const bool whole = trunc(y) == y, odd = whole && ay < 16777216.0 && mod(ay, 2.0) == 1.0;
    if (x < 0.0 && !whole) return NAN_F;
    float r;
    if (is_inf_f(y)) r = ax == 1.0 ? 1.0 : (ax > 1.0) == (y > 0.0) ? INF_F : 0.0;
    else if (ax == 0.0) r = y < 0.0 ? INF_F : 0.0;
    else if (is_inf_f(ax)) r = y < 0.0 ? 0.0 : INF_F;
    else r = pow(ax, y);
    return signbit(x) != 0u && odd ? -r : r;
}

#endif
