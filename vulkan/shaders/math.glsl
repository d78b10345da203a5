// math.glsl - f32 transcendental functions for the float shaders, under
// the names they call. exp, tanh and gelu (both forms) are
// kernels/scalar_math.h's, the CPU's own functions (glslc -I kernels; the
// shaders call its sigmoid and silu by their OI_S_ names), so the GPU
// computes the CPU's algorithm; log, log1p and erf are GLSL-only
// forms here, since the CPU takes those from libm (logf, log1pf, erff),
// which GLSL lacks, and GLSL's builtins are undefined or loose exactly
// where these take care. Included after common.glsl (is_nan_f, is_inf_f).
#ifndef OI_MATH_GLSL
#define OI_MATH_GLSL
#include "scalar_math.h"
#define NAN_F uintBitsToFloat(0x7FC00000u)
#define INF_F uintBitsToFloat(0x7F800000u)

float exp_f32(float x) { return OI_S_exp_f32(x); }
float tanh_f32(float x) { return OI_S_tanh_f32(x); }

// gelu: exact (0.5 x erfc(-x / sqrt 2), through scalar_math.h's erfc fit),
// or with tanh its tanh form written as x / (1 + e^(-2u)).
float gelu_f32(float a, bool tanh_form) { return tanh_form ? OI_S_gelu_tanh_f32(a) : OI_S_gelu_erf_f32(a); }

// log with C's special cases (GLSL leaves x <= 0 undefined).
float log_f32(float x) {
    if (is_nan_f(x) || x < 0.0) return NAN_F;
    if (x == 0.0) return -INF_F;
    if (is_inf_f(x)) return INF_F;
    return log(x);
}

// log(1 + u) for small u without losing u: log(y) - ((y - 1) - u) / y.
float log1p_f32(float u) {
    precise float y = 1.0 + u;
    if (y == 1.0) return u;
    precise float d = (y - 1.0) - u;
    return log(y) - d / y;
}

// erf: its Taylor series near 0, Abramowitz-Stegun 7.1.26's form (erfc =
// poly(t) e^-x^2, error below 1.5e-7) beyond.
float erf_series(float x) {
    float z = x * x;
    return 1.1283791670955126 * x * (1.0 + z * (-1.0 / 3.0 + z * (1.0 / 10.0 + z * (-1.0 / 42.0 + z * (1.0 / 216.0 +
           z * (-1.0 / 1320.0 + z * (1.0 / 9360.0)))))));
}
float erfc_tail(float a) { // a >= 0
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    return poly * exp_f32(-a * a);
}
float erf_f32(float x) {
    if (is_nan_f(x)) return x;
    float a = abs(x);
    float r = a < 0.5 ? erf_series(a) : 1.0 - erfc_tail(a);
    return x < 0.0 ? -r : r;
}

#endif
