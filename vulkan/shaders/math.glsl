// math.glsl - f32 transcendental functions for the float shaders: the CPU
// reference's f32 algorithms (kernels/math.c) where it has its own, careful
// forms elsewhere; GLSL's builtins are undefined or loose exactly where
// these take care. Included after common.glsl (is_nan_f, is_inf_f).
#ifndef OI_MATH_GLSL
#define OI_MATH_GLSL
#define NAN_F uintBitsToFloat(0x7FC00000u)
#define INF_F uintBitsToFloat(0x7F800000u)

// e^x: x = n ln2 + r, degree-7 Taylor of e^r, 2^n built in two halves.
float exp_f32(float x) {
    if (is_nan_f(x)) return x;
    if (x > 88.72283935546875) return INF_F;
    if (x < -103.972084045410) return 0.0;
    precise float t = x * 1.44269504088896341 + 12582912.0;
    precise float n = t - 12582912.0;
    int ni = int(floatBitsToUint(t)) - int(floatBitsToUint(12582912.0));
    precise float r = x - n * 0.693359375;
    r = r + n * 2.12194440054690583e-4;
    precise float p = 1.0 + r * (1.0 + r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 +
                      r * (1.0 / 720.0 + r * (1.0 / 5040.0)))))));
    int half_n = ni / 2;
    precise float y = p * uintBitsToFloat(uint(half_n + 127) << 23u) * uintBitsToFloat(uint(ni - half_n + 127) << 23u);
    return y;
}

// tanh: odd Taylor series below |x| = 0.625, 1 - 2 / (e^2|x| + 1) above.
float tanh_f32(float x) {
    float a = abs(x), z = x * x;
    float series = a + a * z * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0 + z * (62.0 / 2835.0 +
                   z * (-1382.0 / 155925.0 + z * (21844.0 / 6081075.0 + z * (-929569.0 / 638512875.0 +
                   z * (6404582.0 / 10854718875.0 + z * (-443861162.0 / 1856156927625.0)))))))));
    float r = a < 0.625 ? series : 1.0 - 2.0 / (exp_f32(2.0 * a) + 1.0);
    if (is_nan_f(x)) return x;
    return uintBitsToFloat(floatBitsToUint(r) | (floatBitsToUint(x) & 0x80000000u));
}

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
// poly(t) e^-x^2, error below 1.5e-7) beyond; erfc_f32 keeps the tail
// relative for large x (GELU of large negative inputs).
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
float erfc_f32(float x) {
    if (is_nan_f(x)) return x;
    if (x < 0.5) return 1.0 - erf_f32(x);
    return erfc_tail(x);
}

// gelu: exact (0.5 x erfc(-x / sqrt 2)), or with tanh its tanh form
// written as x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3).
float gelu_f32(float a, bool tanh_form) {
    return tanh_form ? a / (1.0 + exp_f32(-2.0 * (0.7978845608028654 * (a + 0.044715 * a * a * a))))
                     : 0.5 * a * erfc_f32(-a * 0.70710678118654752);
}

#endif
