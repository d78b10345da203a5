/* vexp.h - e^x on f32 vectors (AVX2+FMA and AVX-512 intrinsics) and the
 * loops built on it: exp, sigmoid, silu and gelu (both forms) over dense
 * arrays (math.c), and softmax's row max and "e^(x - max) written out
 * while summed" (nn.c). Included by math.c after its ISA clone macros and
 * scalar_math.h (exact gelu's erfc constants), in kernels.c's single
 * translation unit: it uses gemm.c's OI__GEMM_X86, target attributes and
 * oi__gemm_active_isa. The portable path is scalar_math.h's OI_S_exp_f32
 * (and the functions on it) in math.c's compiler-vectorized clones, taken
 * when the dispatchers at the end return false.
 *
 * Method, the same in every form:
 *   x is clamped to [-104, 89] (max/min are ordered so that a NaN x passes
 *   through unchanged and stays NaN); e^89 overflows to +inf and e^-104 is
 *   below half the smallest subnormal, so it rounds to 0: +inf and -inf
 *   land there too.
 *   n = round(x log2 e), r = x - n ln2 in two FMAs (ln2 = LN2_HI + LN2_LO,
 *   scalar_math.h's constants, as the scalar form's), |r| <= ~0.35.
 *   e^r by its Taylor polynomial of degree 7 (truncation below 7.5e-9
 *   relative, ~0.06 ulp), Horner's rule in FMAs.
 *   2^n applied with one rounding: AVX-512's vscalefps, which rounds into
 *   the subnormals and overflows to +inf itself; AVX2 multiplies by
 *   2^floor(n/2) (exact: a normal power of two on a normal value) and then
 *   by 2^(n - floor(n/2)), the only rounding.
 * Within 2 ulp of exp() in double over the whole f32 range
 * (tests/test_vexp.c sweeps it on every path the CPU has). */

/* synth-embed begin (oi_gemm.h: the vector forms below, for softmax and gelu) */
typedef enum oi__vexp_op {
    OI__VEXP_EXP,       /* e^x                                   */
    OI__VEXP_SIGMOID,   /* 1 / (1 + e^-x)                        */
    OI__VEXP_SILU,      /* x / (1 + e^-x)                        */
    OI__VEXP_GELU_TANH, /* x / (1 + e^-2u), u = sqrt(2/pi) (x + 0.044715 x^3) */
    OI__VEXP_GELU_ERF   /* 0.5 x erfc(-x / sqrt 2), scalar_math.h's erfc fit    */
} oi__vexp_op;
/* synth-embed end */

/* synth-embed begin (oi_gemm.h: the AVX-512 and AVX2 loops, picked with the micro-kernel) */
/* Partial sums of e^ are flushed from f32 lanes to double this often, as
 * nn.c's statistics are (OI__NN_CHUNK). */
#define OI__VEXP_CHUNK 256

#if OI__GEMM_X86
#define OI__VEXP_HI 89.0f
#define OI__VEXP_LO (-104.0f)

/* The sum of a vector's lanes, stored to `lanes` first: once per chunk,
 * so simple beats shuffles (and the 512-bit extract intrinsics carry the
 * same GCC 12 warning as below). */
static inline double oi__vexp_lanes_sum(const float *lanes, int n) {
    float s = 0.0f;
    for (int j = 0; j < n; j++)
        s += lanes[j];
    return (double)s;
}

/* ---- AVX-512: 16 lanes ---- */
/* min, max, roundscale and scalef are written in their masked forms with
 * every lane set: the plain intrinsics pass _mm512_undefined_ps() along,
 * which GCC 12 flags as maybe-uninitialized when built as C++ at -O3. */
#define OI__VEXP_ALL ((__mmask16)0xFFFF)

OI__TARGET_AVX512 static inline __attribute__((always_inline)) __m512 oi__vexp16(__m512 x) {
    const __m512 lo = _mm512_set1_ps(OI__VEXP_LO), hi = _mm512_set1_ps(OI__VEXP_HI);
    x = _mm512_mask_max_ps(x, OI__VEXP_ALL, lo, x); /* max(lo, NaN) and min(hi, NaN) give the NaN */
    x = _mm512_mask_min_ps(x, OI__VEXP_ALL, hi, x);
    __m512 t = _mm512_mul_ps(x, _mm512_set1_ps(OI_S_LOG2E));
    __m512 n = _mm512_mask_roundscale_ps(t, OI__VEXP_ALL, t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(OI_S_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(OI_S_LN2_LO), r);
    __m512 p = _mm512_set1_ps(OI_S_EXP_C7);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(OI_S_EXP_C6));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(OI_S_EXP_C5));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(OI_S_EXP_C4));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(OI_S_EXP_C3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_mask_scalef_ps(p, OI__VEXP_ALL, p, n);
}

/* Exact gelu on 16 lanes: 0.5 x erfc(z), z = -x / sqrt 2, erfc by
 * scalar_math.h's fit (OI_S_ERFC_P1...) with a = |z|: one exp and one
 * division per element. The exponent a^2 = x^2 / 2 is taken from x
 * (s + lo = x^2 exactly, by an FMA), not from the rounded z: erfc(a)
 * moves by 2a^2 times a relative change of a, ~8e-6 at a = 8.4. R(a) is
 * smooth and takes a = |x| / sqrt 2 as it comes. |x| > 9 sqrt 2 gives
 * 0 x; NaN stays NaN (through the final product). */
OI__TARGET_AVX512 static inline __attribute__((always_inline)) __m512 oi__vgelu_erf16(__m512 x) {
    const __m512 limit = _mm512_set1_ps(OI_S_GELU_LIMIT);
    __m512 ax = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7FFFFFFF)));
    __mmask16 tail = _mm512_cmp_ps_mask(ax, limit, _CMP_GT_OQ);
    __m512 xc = _mm512_mask_mov_ps(ax, tail, limit), a = _mm512_mul_ps(xc, _mm512_set1_ps(OI_S_SQRT1_2));
    __m512 s = _mm512_mul_ps(xc, xc), lo = _mm512_fmsub_ps(xc, xc, s), half = _mm512_set1_ps(0.5f);
    __m512 e = oi__vexp16(_mm512_mul_ps(_mm512_set1_ps(-0.5f), s));
    e = _mm512_fnmadd_ps(e, _mm512_mul_ps(half, lo), e); /* e^(-lo/2) to first order: |lo/2| < 4e-6 */
    __m512 p = _mm512_set1_ps(OI_S_ERFC_P4), q = _mm512_set1_ps(OI_S_ERFC_Q5);
    p = _mm512_fmadd_ps(p, a, _mm512_set1_ps(OI_S_ERFC_P3));
    p = _mm512_fmadd_ps(p, a, _mm512_set1_ps(OI_S_ERFC_P2));
    p = _mm512_fmadd_ps(p, a, _mm512_set1_ps(OI_S_ERFC_P1));
    p = _mm512_fmadd_ps(p, a, _mm512_set1_ps(1.0f));
    q = _mm512_fmadd_ps(q, a, _mm512_set1_ps(OI_S_ERFC_Q4));
    q = _mm512_fmadd_ps(q, a, _mm512_set1_ps(OI_S_ERFC_Q3));
    q = _mm512_fmadd_ps(q, a, _mm512_set1_ps(OI_S_ERFC_Q2));
    q = _mm512_fmadd_ps(q, a, _mm512_set1_ps(OI_S_ERFC_Q1));
    q = _mm512_fmadd_ps(q, a, _mm512_set1_ps(1.0f));
    __m512 y = _mm512_mul_ps(e, _mm512_div_ps(p, q)); /* erfc(|z|) */
    y = _mm512_mask_mov_ps(y, tail, _mm512_setzero_ps());
    __mmask16 positive = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_GT_OQ); /* z < 0 */
    y = _mm512_mask_sub_ps(y, positive, _mm512_set1_ps(2.0f), y);
    return _mm512_mul_ps(_mm512_mul_ps(half, x), y);
}

OI__TARGET_AVX512 static inline __attribute__((always_inline)) __m512 oi__vexp_apply16(oi__vexp_op op, __m512 x) {
    const __m512 one = _mm512_set1_ps(1.0f);
    switch (op) {
    case OI__VEXP_EXP: return oi__vexp16(x);
    case OI__VEXP_SIGMOID: return _mm512_div_ps(one, _mm512_add_ps(one, oi__vexp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
    case OI__VEXP_SILU: return _mm512_div_ps(x, _mm512_add_ps(one, oi__vexp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
    case OI__VEXP_GELU_TANH: {
        /* the scalar's order: u = k * (x + 0.044715 * x * x * x) */
        __m512 cube = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(OI_S_GELU_CUBIC), x), x), x);
        __m512 u = _mm512_mul_ps(_mm512_set1_ps(OI_S_GELU_K), _mm512_add_ps(x, cube));
        return _mm512_div_ps(x, _mm512_add_ps(one, oi__vexp16(_mm512_mul_ps(_mm512_set1_ps(-2.0f), u))));
    }
    case OI__VEXP_GELU_ERF: return oi__vgelu_erf16(x);
    }
    return x;
}

/* The lanes of a block at i that are inside [0, n). */
static inline __mmask16 oi__vexp_mask16(int64_t i, int64_t n) {
    return n - i >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - i)) - 1u);
}

/* The op is a constant in each loop (the switch is outside). Full blocks
 * use plain loads and stores: masked stores that miss the cache made exp
 * 3.5x slower on the dev machine's AMD EPYC; only the tail is masked. */
#define OI__VEXP_MAP16(OP) \
    do { \
        int64_t i = 0; \
        for (; i + 16 <= n; i += 16) \
            _mm512_storeu_ps(y + i, oi__vexp_apply16((OP), _mm512_loadu_ps(x + i))); \
        if (i < n) { \
            __mmask16 m = oi__vexp_mask16(i, n); \
            _mm512_mask_storeu_ps(y + i, m, oi__vexp_apply16((OP), _mm512_maskz_loadu_ps(m, x + i))); \
        } \
    } while (0)

OI__TARGET_AVX512 static void oi__vexp_map_avx512(oi__vexp_op op, const float *x, float *y, int64_t n) {
    switch (op) {
    case OI__VEXP_EXP: OI__VEXP_MAP16(OI__VEXP_EXP); break;
    case OI__VEXP_SIGMOID: OI__VEXP_MAP16(OI__VEXP_SIGMOID); break;
    case OI__VEXP_SILU: OI__VEXP_MAP16(OI__VEXP_SILU); break;
    case OI__VEXP_GELU_TANH: OI__VEXP_MAP16(OI__VEXP_GELU_TANH); break;
    case OI__VEXP_GELU_ERF: OI__VEXP_MAP16(OI__VEXP_GELU_ERF); break;
    }
}

OI__TARGET_AVX512 static double oi__vexp_sum_avx512(const float *x, float *y, int64_t n, float shift, bool diff) {
    const __m512 s = _mm512_set1_ps(shift);
    double total = 0.0;
    for (int64_t c = 0; c < n; c += OI__VEXP_CHUNK) {
        int64_t end = n - c < OI__VEXP_CHUNK ? n : c + OI__VEXP_CHUNK;
        __m512 acc = _mm512_setzero_ps();
        int64_t i = c;
        for (; i + 16 <= end; i += 16) {
            __m512 d = _mm512_sub_ps(_mm512_loadu_ps(x + i), s), e = oi__vexp16(d);
            acc = _mm512_add_ps(acc, e);
            if (y)
                _mm512_storeu_ps(y + i, diff ? d : e);
        }
        if (i < end) { /* the tail: masked (see OI__VEXP_MAP16) */
            __mmask16 m = oi__vexp_mask16(i, end);
            __m512 d = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), s), e = oi__vexp16(d);
            acc = _mm512_mask_add_ps(acc, m, acc, e); /* lanes past the end add nothing */
            if (y)
                _mm512_mask_storeu_ps(y + i, m, diff ? d : e);
        }
        float lanes[16];
        _mm512_storeu_ps(lanes, acc);
        total += oi__vexp_lanes_sum(lanes, 16);
    }
    return total;
}

/* Prefetches the line at `address`, which may lie past the caller's
 * arrays (prefetches never fault; the integer keeps the pointer
 * arithmetic defined). */
static inline void oi__vexp_prefetch(uintptr_t address) { _mm_prefetch((const char *)address, _MM_HINT_T0); }

/* How far ahead the max sweep prefetches: enough lines in flight to cover
 * the memory latency. */
#define OI__VEXP_AHEAD 2048

/* The largest of x[0..n), NaN ignored (max(v, acc) returns acc when v is
 * NaN); -inf when there is none. It is the sweep that reads a softmax row
 * from memory, so it prefetches OI__VEXP_AHEAD bytes ahead: past the row's
 * end that is the next row (rows are usually back to back), on its way
 * while this row is computed. */
OI__TARGET_AVX512 static float oi__vexp_max_avx512(const float *x, int64_t n) {
    __m512 a0 = _mm512_set1_ps(-INFINITY), a1 = a0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        oi__vexp_prefetch((uintptr_t)(x + i) + OI__VEXP_AHEAD);
        oi__vexp_prefetch((uintptr_t)(x + i) + OI__VEXP_AHEAD + 64);
        a0 = _mm512_mask_max_ps(a0, OI__VEXP_ALL, _mm512_loadu_ps(x + i), a0);
        a1 = _mm512_mask_max_ps(a1, OI__VEXP_ALL, _mm512_loadu_ps(x + i + 16), a1);
    }
    for (; i < n; i += 16) {
        __mmask16 m = oi__vexp_mask16(i, n);
        a0 = _mm512_mask_max_ps(a0, m, _mm512_maskz_loadu_ps(m, x + i), a0);
    }
    a0 = _mm512_mask_max_ps(a0, OI__VEXP_ALL, a1, a0);
    float lanes[16], top = -INFINITY;
    _mm512_storeu_ps(lanes, a0);
    for (int j = 0; j < 16; j++)
        top = lanes[j] > top ? lanes[j] : top;
    return top;
}

/* ---- AVX2 + FMA: 8 lanes ---- */
OI__TARGET_AVX2 static inline __attribute__((always_inline)) __m256 oi__vexp8(__m256 x) {
    x = _mm256_min_ps(_mm256_set1_ps(OI__VEXP_HI), _mm256_max_ps(_mm256_set1_ps(OI__VEXP_LO), x));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(OI_S_LOG2E)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(OI_S_LN2_HI), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(OI_S_LN2_LO), r);
    __m256 p = _mm256_set1_ps(OI_S_EXP_C7);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OI_S_EXP_C6));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OI_S_EXP_C5));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OI_S_EXP_C4));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(OI_S_EXP_C3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    /* n in [-150, 128]: both halves are normal exponents (biased 52..191) */
    __m256i ni = _mm256_cvtps_epi32(n);
    __m256i half = _mm256_srai_epi32(ni, 1), rest = _mm256_sub_epi32(ni, half);
    const __m256i bias = _mm256_set1_epi32(127);
    __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(half, bias), 23));
    __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(rest, bias), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

/* oi__vgelu_erf16 on 8 lanes (see there). */
OI__TARGET_AVX2 static inline __attribute__((always_inline)) __m256 oi__vgelu_erf8(__m256 x) {
    const __m256 limit = _mm256_set1_ps(OI_S_GELU_LIMIT);
    __m256 ax = _mm256_castsi256_ps(_mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7FFFFFFF)));
    __m256 tail = _mm256_cmp_ps(ax, limit, _CMP_GT_OQ);
    __m256 xc = _mm256_blendv_ps(ax, limit, tail), a = _mm256_mul_ps(xc, _mm256_set1_ps(OI_S_SQRT1_2));
    __m256 s = _mm256_mul_ps(xc, xc), lo = _mm256_fmsub_ps(xc, xc, s), half = _mm256_set1_ps(0.5f);
    __m256 e = oi__vexp8(_mm256_mul_ps(_mm256_set1_ps(-0.5f), s));
    e = _mm256_fnmadd_ps(e, _mm256_mul_ps(half, lo), e);
    __m256 p = _mm256_set1_ps(OI_S_ERFC_P4), q = _mm256_set1_ps(OI_S_ERFC_Q5);
    p = _mm256_fmadd_ps(p, a, _mm256_set1_ps(OI_S_ERFC_P3));
    p = _mm256_fmadd_ps(p, a, _mm256_set1_ps(OI_S_ERFC_P2));
    p = _mm256_fmadd_ps(p, a, _mm256_set1_ps(OI_S_ERFC_P1));
    p = _mm256_fmadd_ps(p, a, _mm256_set1_ps(1.0f));
    q = _mm256_fmadd_ps(q, a, _mm256_set1_ps(OI_S_ERFC_Q4));
    q = _mm256_fmadd_ps(q, a, _mm256_set1_ps(OI_S_ERFC_Q3));
    q = _mm256_fmadd_ps(q, a, _mm256_set1_ps(OI_S_ERFC_Q2));
    q = _mm256_fmadd_ps(q, a, _mm256_set1_ps(OI_S_ERFC_Q1));
    q = _mm256_fmadd_ps(q, a, _mm256_set1_ps(1.0f));
    __m256 y = _mm256_andnot_ps(tail, _mm256_mul_ps(e, _mm256_div_ps(p, q)));
    __m256 positive = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GT_OQ);
    y = _mm256_blendv_ps(y, _mm256_sub_ps(_mm256_set1_ps(2.0f), y), positive);
    return _mm256_mul_ps(_mm256_mul_ps(half, x), y);
}

OI__TARGET_AVX2 static inline __attribute__((always_inline)) __m256 oi__vexp_apply8(oi__vexp_op op, __m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    switch (op) {
    case OI__VEXP_EXP: return oi__vexp8(x);
    case OI__VEXP_SIGMOID: return _mm256_div_ps(one, _mm256_add_ps(one, oi__vexp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
    case OI__VEXP_SILU: return _mm256_div_ps(x, _mm256_add_ps(one, oi__vexp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
    case OI__VEXP_GELU_TANH: {
        __m256 cube = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(OI_S_GELU_CUBIC), x), x), x);
        __m256 u = _mm256_mul_ps(_mm256_set1_ps(OI_S_GELU_K), _mm256_add_ps(x, cube));
        return _mm256_div_ps(x, _mm256_add_ps(one, oi__vexp8(_mm256_mul_ps(_mm256_set1_ps(-2.0f), u))));
    }
    case OI__VEXP_GELU_ERF: return oi__vgelu_erf8(x);
    }
    return x;
}

/* All ones in the lanes of a block at i that are inside [0, n). */
OI__TARGET_AVX2 static inline __attribute__((always_inline)) __m256i oi__vexp_mask8(int64_t i, int64_t n) {
    int left = n - i >= 8 ? 8 : (int)(n - i);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Full blocks with plain loads and stores, the tail masked. */
#define OI__VEXP_MAP8(OP) \
    do { \
        int64_t i = 0; \
        for (; i + 8 <= n; i += 8) \
            _mm256_storeu_ps(y + i, oi__vexp_apply8((OP), _mm256_loadu_ps(x + i))); \
        if (i < n) { \
            __m256i m = oi__vexp_mask8(i, n); \
            _mm256_maskstore_ps(y + i, m, oi__vexp_apply8((OP), _mm256_maskload_ps(x + i, m))); \
        } \
    } while (0)

OI__TARGET_AVX2 static void oi__vexp_map_avx2(oi__vexp_op op, const float *x, float *y, int64_t n) {
    switch (op) {
    case OI__VEXP_EXP: OI__VEXP_MAP8(OI__VEXP_EXP); break;
    case OI__VEXP_SIGMOID: OI__VEXP_MAP8(OI__VEXP_SIGMOID); break;
    case OI__VEXP_SILU: OI__VEXP_MAP8(OI__VEXP_SILU); break;
    case OI__VEXP_GELU_TANH: OI__VEXP_MAP8(OI__VEXP_GELU_TANH); break;
    case OI__VEXP_GELU_ERF: OI__VEXP_MAP8(OI__VEXP_GELU_ERF); break;
    }
}

OI__TARGET_AVX2 static double oi__vexp_sum_avx2(const float *x, float *y, int64_t n, float shift, bool diff) {
    const __m256 s = _mm256_set1_ps(shift);
    double total = 0.0;
    for (int64_t c = 0; c < n; c += OI__VEXP_CHUNK) {
        int64_t end = n - c < OI__VEXP_CHUNK ? n : c + OI__VEXP_CHUNK;
        __m256 acc = _mm256_setzero_ps();
        int64_t i = c;
        for (; i + 8 <= end; i += 8) {
            __m256 d = _mm256_sub_ps(_mm256_loadu_ps(x + i), s), e = oi__vexp8(d);
            acc = _mm256_add_ps(acc, e);
            if (y)
                _mm256_storeu_ps(y + i, diff ? d : e);
        }
        if (i < end) {
            __m256i m = oi__vexp_mask8(i, end);
            __m256 d = _mm256_sub_ps(_mm256_maskload_ps(x + i, m), s), e = oi__vexp8(d);
            acc = _mm256_add_ps(acc, _mm256_and_ps(e, _mm256_castsi256_ps(m))); /* lanes past the end add nothing */
            if (y)
                _mm256_maskstore_ps(y + i, m, diff ? d : e);
        }
        float lanes[8];
        _mm256_storeu_ps(lanes, acc);
        total += oi__vexp_lanes_sum(lanes, 8);
    }
    return total;
}

/* The AVX2 form of oi__vexp_max_avx512 (max(v, acc) ignores a NaN v the
 * same way). */
OI__TARGET_AVX2 static float oi__vexp_max_avx2(const float *x, int64_t n) {
    __m256 a0 = _mm256_set1_ps(-INFINITY), a1 = a0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        oi__vexp_prefetch((uintptr_t)(x + i) + OI__VEXP_AHEAD);
        a0 = _mm256_max_ps(_mm256_loadu_ps(x + i), a0);
        a1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), a1);
    }
    for (; i < n; i++) /* the tail, one lane at a time (broadcast) */
        a1 = _mm256_max_ps(_mm256_set1_ps(x[i]), a1);
    a0 = _mm256_max_ps(a1, a0);
    float lanes[8], top = -INFINITY;
    _mm256_storeu_ps(lanes, a0);
    for (int j = 0; j < 8; j++)
        top = lanes[j] > top ? lanes[j] : top;
    return top;
}
#endif /* OI__GEMM_X86 */
/* synth-embed end */

/* ---- dispatch by the gemm's ISA choice ---- */
/* y = op(x) over n dense floats (x == y allowed); false: no vector exp on
 * this CPU, the caller runs the portable loop. */
static bool oi__vexp_map(oi__vexp_op op, const float *x, float *y, int64_t n) {
#if OI__GEMM_X86
    switch (oi__gemm_active_isa()) {
    case OI__GEMM_ISA_AVX512: oi__vexp_map_avx512(op, x, y, n); return true;
    case OI__GEMM_ISA_AVX2: oi__vexp_map_avx2(op, x, y, n); return true;
    default: break;
    }
#else
    (void)op, (void)x, (void)y, (void)n;
#endif
    return false;
}

/* *max = the largest of x[0..n), NaN ignored (-inf for none); false as above. */
static bool oi__vexp_max(const float *x, int64_t n, float *max) {
#if OI__GEMM_X86
    switch (oi__gemm_active_isa()) {
    case OI__GEMM_ISA_AVX512: *max = oi__vexp_max_avx512(x, n); return true;
    case OI__GEMM_ISA_AVX2: *max = oi__vexp_max_avx2(x, n); return true;
    default: break;
    }
#else
    (void)x, (void)n, (void)max;
#endif
    return false;
}

/* *sum = the sum of e^(x[i] - shift); y[i] (unless y is NULL; x == y
 * allowed) receives e^(x[i] - shift), or x[i] - shift when `diff` (what
 * log_softmax needs: its stores then happen in this sweep, among the e^
 * arithmetic, not in a bare store sweep after it). False as above. */
static bool oi__vexp_sum(const float *x, float *y, int64_t n, float shift, bool diff, double *sum) {
#if OI__GEMM_X86
    switch (oi__gemm_active_isa()) {
    case OI__GEMM_ISA_AVX512: *sum = oi__vexp_sum_avx512(x, y, n, shift, diff); return true;
    case OI__GEMM_ISA_AVX2: *sum = oi__vexp_sum_avx2(x, y, n, shift, diff); return true;
    default: break;
    }
#else
    (void)x, (void)y, (void)n, (void)shift, (void)diff, (void)sum;
#endif
    return false;
}
