/* elementwise.c - the arithmetic, rounding, bitwise and fill ops: one
 * loop over the output (broadcast by stride 0) that loads each operand in
 * its value domain, applies the op and stores with the output's wrapping
 * or rounding. Floats below f64 compute in f32 and round once per op;
 * integers compute in 64 bits and wrap to the output width on store. */
#include "../openinfer_impl/internal.h"
#include "scalar.h" /* the one definition of each op's arithmetic */
#include "scalar_math.h" /* OI_S_pick and the f32 bit casts, for the branch-free selects */

/* The op's parameters, read once per call. */
typedef struct oi__ew_params {
    double mask_f, slope_f, lo_f, hi_f, value_f;
    double alpha_f, beta_f; /* hard_sigmoid's, in the element's precision */
    int64_t mask_i, slope_i, lo_i, hi_i, value_i, bits;
    unsigned width; /* compute width of the integer domain */
    bool single;    /* float domain rounds to f32 after every step */
    bool is_bool;
} oi__ew_params;

static void oi__ew_read_params(const oi__kernel_args *k, oi__ew_params *p) {
    oi_dtype in = k->in[0]->dtype;
    memset(p, 0, sizeof *p);
    p->single = in != OI_DTYPE_F64 && k->out->dtype != OI_DTYPE_F64;
    p->is_bool = in == OI_DTYPE_BOOL;
    p->width = oi_dtype_bits(in);
    switch (k->op) {
    case OI_OP_div: case OI_OP_floor_div: case OI_OP_recip:
        p->mask_f = oi__op_param_f64(k, "div_by_zero_mask");
        /* the table's default (NaN) is for floats; integers default to 0 */
        p->mask_i = oi__op_attr_for(k, "div_by_zero_mask") ? oi__op_param_i64(k, "div_by_zero_mask") : 0;
        break;
    case OI_OP_relu:
        p->slope_f = oi__op_param_f64(k, "negative_slope");
        p->lo_f = oi__op_param_f64(k, "clamp_min");
        p->hi_f = oi__op_param_f64(k, "clamp_max");
        p->slope_i = oi__op_param_i64(k, "negative_slope");
        p->lo_i = oi__op_param_i64(k, "clamp_min");
        p->hi_i = oi__op_param_i64(k, "clamp_max");
        break;
    case OI_OP_clamp:
        p->lo_f = oi__op_param_f64(k, "min");
        p->hi_f = oi__op_param_f64(k, "max");
        p->lo_i = oi__op_param_i64(k, "min");
        p->hi_i = oi__op_param_i64(k, "max");
        break;
    case OI_OP_hard_sigmoid: case OI_OP_hard_swish: {
        bool sig = k->op == OI_OP_hard_sigmoid;
        double alpha = sig ? oi__op_param_f64(k, "alpha") : 1.0 / 6.0, beta = sig ? oi__op_param_f64(k, "beta") : 0.5;
        p->alpha_f = p->single ? (double)(float)alpha : alpha;
        p->beta_f = p->single ? (double)(float)beta : beta;
        break;
    }
    case OI_OP_shl: case OI_OP_shr: {
        int64_t bits = oi__op_param_i64(k, "bits");
        p->bits = bits < 0 ? 0 : bits;
        break;
    }
    case OI_OP_fill: case OI_OP_fill_nan_like:
        p->value_f = oi__op_param_f64(k, "value");
        p->value_i = oi__op_param_i64(k, "value");
        break;
    default:
        break;
    }
}

static double oi__op_round_f32(double v, bool single) { return single ? (double)(float)v : v; }

/* scalar.h's ROUND: the product rounded as the storage type (f32 below f64) */
#define OI__EW_ROUND(x) oi__op_round_f32((x), p->single)

static double oi__ew_float(oi_op op, const double *v, const oi__ew_params *p) {
    double a = v[0], b = v[1], r;
    switch (op) {
    case OI_OP_add: r = OI_S_add(a, b); break;
    case OI_OP_sub: r = OI_S_sub(a, b); break;
    case OI_OP_mul: r = OI_S_mul(a, b); break;
    case OI_OP_div: r = OI_S_div(a, b, p->mask_f); break;
    case OI_OP_fma: r = OI_S_fma(a, b, v[2], OI__EW_ROUND); break;
    case OI_OP_neg: r = OI_S_neg(a); break;
    case OI_OP_recip: r = OI_S_recip(a, p->mask_f); break;
    case OI_OP_abs: r = fabs(a); break;
    case OI_OP_relu:
        r = OI_S_relu_raw(a, p->slope_f, OI__EW_ROUND);
        r = OI_S_clamp_hi(r, p->hi_f);
        r = OI_S_clamp_lo(r, p->lo_f);
        break;
    case OI_OP_sign: r = OI_S_sign(a); break;
    case OI_OP_min: r = OI_S_fmin(a, b); break; /* a NaN operand is ignored */
    case OI_OP_max: r = OI_S_fmax(a, b); break;
    case OI_OP_clamp: r = OI_S_fmin(OI_S_fmax(a, p->lo_f), p->hi_f); break;
    case OI_OP_hard_sigmoid: r = OI_S_hard_sigmoid(a, p->alpha_f, p->beta_f, OI__EW_ROUND); break;
    case OI_OP_hard_swish: r = OI_S_hard_swish(a, p->alpha_f, OI__EW_ROUND); break;
    case OI_OP_floor: r = floor(a); break;
    case OI_OP_ceil: r = ceil(a); break;
    case OI_OP_round: r = round(a); break; /* halves away from zero */
    case OI_OP_trunc: r = trunc(a); break;
    case OI_OP_fill: r = p->value_f; break;
    case OI_OP_fill_nan_like: r = OI_S_fill_nan_like(a, p->value_f); break;
    default: r = 0.0; break;
    }
    return oi__op_round_f32(r, p->single);
}

/* Signed integers: 64-bit two's complement via uint64_t (no UB on wrap). */
static int64_t oi__ew_signed(oi_op op, const int64_t *v, const oi__ew_params *p) {
    int64_t a = v[0], b = v[1];
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case OI_OP_add: return (int64_t)(ua + ub);
    case OI_OP_sub: return (int64_t)(ua - ub);
    case OI_OP_mul: return (int64_t)(ua * ub);
    case OI_OP_div: return OI_S_div_int(a, b, p->mask_i, (int64_t)(0u - ua));
    case OI_OP_floor_div: return OI_S_floor_div_int(a, b, p->mask_i, (int64_t)(0u - ua));
    case OI_OP_rem: return OI_S_rem_int(a, b);
    case OI_OP_neg: return (int64_t)(0u - ua);
    case OI_OP_abs: return a < 0 ? (int64_t)(0u - ua) : a;
    case OI_OP_relu: {
        /* x * slope wraps at the dtype's width before the clamps compare */
        int64_t r = a >= 0 ? a : oi__op_wrap_signed(ua * (uint64_t)p->slope_i, p->width);
        return OI_S_clamp_lo(OI_S_clamp_hi(r, p->hi_i), p->lo_i);
    }
    case OI_OP_sign: return a > 0 ? 1 : a < 0 ? -1 : 0;
    case OI_OP_min: return OI_S_min_int(a, b);
    case OI_OP_max: return OI_S_max_int(a, b);
    case OI_OP_clamp: return OI_S_clamp_int(a, p->lo_i, p->hi_i);
    case OI_OP_and: return OI_S_and(a, b);
    case OI_OP_or: return OI_S_or(a, b);
    case OI_OP_xor: return OI_S_xor(a, b);
    case OI_OP_not: return OI_S_not(a);
    case OI_OP_shl: return p->bits >= 64 ? 0 : (int64_t)(ua << p->bits);
    case OI_OP_shr:
        if (p->bits >= 64)
            return a < 0 ? -1 : 0;
        return a < 0 ? ~(int64_t)(~ua >> p->bits) : (int64_t)(ua >> p->bits);
    case OI_OP_fill: return p->value_i;
    default: return 0;
    }
}

/* Saturates a signed parameter into the unsigned range. */
static uint64_t oi__op_param_to_u64(int64_t v) { return v < 0 ? 0u : (uint64_t)v; }

/* Unsigned integers, bool and bitset (bool add/mul become OR/AND when the
 * store turns any non-zero value into true). */
static uint64_t oi__ew_unsigned(oi_op op, const uint64_t *v, const oi__ew_params *p) {
    uint64_t a = v[0], b = v[1];
    switch (op) {
    case OI_OP_add: return a + b;
    case OI_OP_sub: return a - b;
    case OI_OP_mul: return a * b;
    case OI_OP_div:
    case OI_OP_floor_div: return OI_S_div_uint(a, b, oi__op_param_to_u64(p->mask_i));
    case OI_OP_rem: return OI_S_rem_uint(a, b);
    case OI_OP_min: return OI_S_min_int(a, b);
    case OI_OP_max: return OI_S_max_int(a, b);
    case OI_OP_clamp: return OI_S_clamp_int(a, oi__op_param_to_u64(p->lo_i), oi__op_param_to_u64(p->hi_i));
    case OI_OP_and: return OI_S_and(a, b);
    case OI_OP_or: return OI_S_or(a, b);
    case OI_OP_xor: return OI_S_xor(a, b);
    case OI_OP_not: return p->is_bool ? (uint64_t)OI_S_not_bool(a) : OI_S_not(a);
    case OI_OP_shl: return p->bits >= 64 ? 0 : a << p->bits;
    case OI_OP_shr: return p->bits >= 64 ? 0 : a >> p->bits;
    case OI_OP_fill: return oi__op_param_to_u64(p->value_i);
    default: return 0;
    }
}

static unsigned oi__op_popcount64(uint64_t v) {
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* ---- contiguous f32/f64 fast path ----
 * add/sub/mul/div where each operand is the output's shape, a row that
 * repeats along leading dims (a bias) or one element, and relu with
 * infinite clamps; branch-free loops that vectorize, split over the pool
 * for large outputs. Same IEEE results as the generic path (f32 ops on
 * f32 give the correctly rounded result the f64-then-round path gives). */

/* How an operand walks the output: period = n (same shape), its size (a
 * trailing row, repeated), 1 (a scalar); 0: not usable here. */
static int64_t oi__ew_period(const oi__tensor *t, const oi__tensor *out) {
    if (t->dtype != out->dtype || !oi__tensor_is_contiguous(t) || t->ndim > out->ndim)
        return 0;
    int shift = out->ndim - t->ndim, d = t->ndim - 1;
    while (d >= 0 && t->shape[d] == out->shape[d + shift])
        d--;
    for (; d >= 0; d--)
        if (t->shape[d] != 1)
            return 0;
    int64_t p = oi__shape_numel(t->ndim, t->shape);
    return p > 0 ? p : 0;
}

/* OI_S_div's choice on the bits, so the loops vectorize: z == 0 (either
 * sign) ? the mask's bits : q. */
static inline float oi__ew_pick32(float z, float q, uint32_t mask_bits) {
    return OI_S_bits_float(OI_S_pick((OI_S_float_bits(z) & 0x7FFFFFFFu) == 0, mask_bits, OI_S_float_bits(q)));
}

static inline double oi__ew_pick64(double z, double q, uint64_t mask_bits) {
    uint64_t zb, qb;
    memcpy(&zb, &z, sizeof zb);
    memcpy(&qb, &q, sizeof qb);
    uint64_t m = 0u - (uint64_t)((zb & 0x7FFFFFFFFFFFFFFFu) == 0);
    qb = (mask_bits & m) | (qb & ~m);
    memcpy(&q, &qb, sizeof q);
    return q;
}

typedef struct oi__ew_job {
    oi_op op;
    bool wide;
    const void *a, *b;
    void *y;
    int64_t pa, pb, n, chunk;
    double mask, slope, lo, hi; /* lo/hi: clamp's bounds, relu's clamps */
    double alpha, beta;         /* hard_sigmoid's, in the element's precision */
} oi__ew_job;

/* y[j] = EXPR of x = a[IA], z = b[IB] (IA, IB: j or 0). Whole blocks go
 * through a local buffer first: a fixed trip count and no store that could
 * alias an input, which GCC vectorizes at -O2 too (its very-cheap cost
 * model leaves the plain loop scalar); the rest goes element by element. */
/* synth-embed begin (oi_gemm.h: the block length of the relu/clamp/hard loops below) */
#define OI__EW_BLOCK 64
/* The entry points of those loops (and of conv.c's plane sums), called
 * with constant lengths by the emitted code: kept out of line there (GCC's
 * loop analysis misfires on their inlined tails,
 * -Waggressive-loop-optimizations), and unused in a folder that runs none. */
#if defined(__clang__)
#define OI__EW_ENTRY __attribute__((noinline, unused)) static
#elif defined(__GNUC__) /* noipa: no constant-propagated clone either */
#define OI__EW_ENTRY __attribute__((noipa, unused)) static
#else
#define OI__EW_ENTRY static
#endif
/* synth-embed end */
#define OI__EW_BLOCKS(T, EXPR, IA, IB) \
    do { \
        int64_t j0 = 0; \
        for (; j0 + OI__EW_BLOCK <= len; j0 += OI__EW_BLOCK) { \
            T blk[OI__EW_BLOCK]; \
            for (int i = 0; i < OI__EW_BLOCK; i++) { \
                int64_t j = j0 + i; \
                T x = a[IA], z = b[IB]; \
                blk[i] = (EXPR); \
            } \
            memcpy(y + j0, blk, sizeof blk); \
        } \
        for (int64_t j = j0; j < len; j++) { T x = a[IA], z = b[IB]; y[j] = (EXPR); } \
    } while (0)

/* y[j] = a[j * sa] OP b[j * sb], sa and sb in {0, 1}. */
#define OI__EW_LOOP(T, EXPR) \
    do { \
        if (sa && sb) \
            OI__EW_BLOCKS(T, EXPR, j, j); \
        else if (sb) \
            OI__EW_BLOCKS(T, EXPR, 0, j); \
        else \
            OI__EW_BLOCKS(T, EXPR, j, 0); \
    } while (0)

/* The f32 loops are compiled three times: for the build's ISA, and under
 * AVX2 and AVX-512 target attributes (picked by the gemm's ISA choice, so
 * OPENINFER_ISA caps them too), because a library built without -march
 * would otherwise run them 4 lanes wide. The same C: the same results. */
#define OI__EW_SEG_F32_BODY \
    uint32_t mb; \
    memcpy(&mb, &mask, sizeof mb); \
    switch (op) { \
    case OI_OP_add: OI__EW_LOOP(float, OI_S_add(x, z)); break; \
    case OI_OP_sub: OI__EW_LOOP(float, OI_S_sub(x, z)); break; \
    case OI_OP_mul: OI__EW_LOOP(float, OI_S_mul(x, z)); break; \
    default: /* div: b == 0 gives the mask, selected on the bits */ \
        OI__EW_LOOP(float, oi__ew_pick32(z, x / z, mb)); \
        break; \
    }

static void oi__ew_seg_f32_base(oi_op op, const float *a, const float *b, float *y, int64_t len, bool sa, bool sb,
                                float mask) {
    OI__EW_SEG_F32_BODY
}

#if OI__GEMM_X86
OI__TARGET_AVX2 static void oi__ew_seg_f32_avx2(oi_op op, const float *a, const float *b, float *y, int64_t len,
                                                bool sa, bool sb, float mask) {
    OI__EW_SEG_F32_BODY
}

OI__TARGET_AVX512 static void oi__ew_seg_f32_avx512(oi_op op, const float *a, const float *b, float *y, int64_t len,
                                                    bool sa, bool sb, float mask) {
    OI__EW_SEG_F32_BODY
}
#endif

static void oi__ew_seg_f32(oi_op op, const float *a, const float *b, float *y, int64_t len, bool sa, bool sb,
                           float mask) {
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    if (isa == OI__GEMM_ISA_AVX512)
        oi__ew_seg_f32_avx512(op, a, b, y, len, sa, sb, mask);
    else if (isa == OI__GEMM_ISA_AVX2)
        oi__ew_seg_f32_avx2(op, a, b, y, len, sa, sb, mask);
    else
#endif
        oi__ew_seg_f32_base(op, a, b, y, len, sa, sb, mask);
}

static void oi__ew_seg_f64(oi_op op, const double *a, const double *b, double *y, int64_t len, bool sa, bool sb,
                           double mask) {
    uint64_t mb;
    memcpy(&mb, &mask, sizeof mb);
    switch (op) {
    case OI_OP_add: OI__EW_LOOP(double, OI_S_add(x, z)); break;
    case OI_OP_sub: OI__EW_LOOP(double, OI_S_sub(x, z)); break;
    case OI_OP_mul: OI__EW_LOOP(double, OI_S_mul(x, z)); break;
    default: OI__EW_LOOP(double, oi__ew_pick64(z, x / z, mb)); break;
    }
}

/* The synthesizer copies the regions below into oi_gemm.h: the emitted
 * conv epilogues (relu, clamp, hard_sigmoid, hard_swish) run this code, in
 * the lanes of the ISA its micro-kernel picked (isa: 2 AVX-512, 1 AVX2, 0
 * the build's), so they give the simulator's bits. */
/* synth-embed begin (oi_gemm.h: relu in the ISA's lanes) */
/* relu's choice on the bits: x < 0 (not -0, not NaN) takes r = x * slope. */
static inline uint32_t oi__ew_relu_bits32(uint32_t xb, uint32_t rb) {
    return OI_S_pick(xb > 0x80000000u && xb <= 0xFF800000u, rb, xb);
}

/* relu with slope, then its clamps (hi first, then lo; NaN passes) when
 * `clamps`: x < 0 (not -0, not NaN) gives x * slope. */
#define OI__EW_RELU_F32_BLOCKS \
    float slope_f = (float)slope, lo_f = (float)lo, hi_f = (float)hi; \
    int64_t j = 0; \
    if ((double)slope_f == slope) { \
        /* a float slope (0 included): the f32 product is the double one \
         * rounded once (24 x 24 bits are exact in a double). Whole blocks \
         * through a local buffer, as OI__EW_BLOCKS does, clamped there. */ \
        for (; j + OI__EW_BLOCK <= len; j += OI__EW_BLOCK) { \
            uint32_t xb[OI__EW_BLOCK], rb[OI__EW_BLOCK]; \
            float r[OI__EW_BLOCK]; \
            memcpy(xb, a + j, sizeof xb); \
            for (int i = 0; i < OI__EW_BLOCK; i++) \
                r[i] = a[j + i] * slope_f; \
            memcpy(rb, r, sizeof rb); \
            for (int i = 0; i < OI__EW_BLOCK; i++) \
                xb[i] = oi__ew_relu_bits32(xb[i], rb[i]); \
            memcpy(r, xb, sizeof r); \
            if (clamps) \
                for (int i = 0; i < OI__EW_BLOCK; i++) { \
                    float c = r[i] > hi_f ? hi_f : r[i]; \
                    r[i] = c < lo_f ? lo_f : c; \
                } \
            memcpy(y + j, r, sizeof r); \
        } \
    }

static inline int64_t oi__ew_relu_f32_base(const float *a, float *y, int64_t len, double slope, bool clamps, double lo,
                                           double hi) {
    OI__EW_RELU_F32_BLOCKS
    return j;
}

#if OI__GEMM_X86
/* In intrinsics: the blocks' unsigned compares on the bits have no AVX2
 * instruction (GCC emulates them at twice the AVX-512 time). x < 0 as an
 * ordered compare is the same choice (false for -0 and NaN); min(hi, r) and
 * max(lo, c) keep a NaN r, as the blocks' r > hi ? hi : r and c < lo ? lo : c. */
OI__TARGET_AVX2 static inline int64_t oi__ew_relu_f32_avx2(const float *a, float *y, int64_t len, double slope,
                                                           bool clamps, double lo, double hi) {
    float slope_f = (float)slope;
    int64_t j = 0;
    if ((double)slope_f != slope)
        return 0;
    __m256 v_slope = _mm256_set1_ps(slope_f), zero = _mm256_setzero_ps();
    __m256 v_lo = _mm256_set1_ps((float)lo), v_hi = _mm256_set1_ps((float)hi);
    for (; j + 8 <= len; j += 8) {
        __m256 x = _mm256_loadu_ps(a + j);
        __m256 r = _mm256_blendv_ps(x, _mm256_mul_ps(x, v_slope), _mm256_cmp_ps(x, zero, _CMP_LT_OQ));
        if (clamps)
            r = _mm256_max_ps(v_lo, _mm256_min_ps(v_hi, r));
        _mm256_storeu_ps(y + j, r);
    }
    return j;
}

OI__TARGET_AVX512 static inline int64_t oi__ew_relu_f32_avx512(const float *a, float *y, int64_t len, double slope,
                                                               bool clamps, double lo, double hi) {
    OI__EW_RELU_F32_BLOCKS
    return j;
}
#endif

/* The elements done in whole blocks (clamped too when `clamps`); the rest is
 * left to the loops below. */
static inline int64_t oi__ew_relu_f32_blocks(int isa, const float *a, float *y, int64_t len, double slope, bool clamps,
                                             double lo, double hi) {
#if OI__GEMM_X86
    if (isa == 2)
        return oi__ew_relu_f32_avx512(a, y, len, slope, clamps, lo, hi);
    if (isa == 1)
        return oi__ew_relu_f32_avx2(a, y, len, slope, clamps, lo, hi);
#endif
    (void)isa;
    return oi__ew_relu_f32_base(a, y, len, slope, clamps, lo, hi);
}

/* relu's tail (after the blocks), element by element. */
static inline void oi__ew_relu_f32(const float *a, float *y, int64_t len, double slope) {
    for (int64_t j = 0; j < len; j++) {
        uint32_t xb, rb;
        float r = (float)((double)a[j] * slope); /* as the generic path rounds it */
        memcpy(&xb, &a[j], sizeof xb);
        memcpy(&rb, &r, sizeof rb);
        xb = oi__ew_relu_bits32(xb, rb);
        memcpy(&y[j], &xb, sizeof xb);
    }
}
/* synth-embed end */

static void oi__ew_relu_f64(const double *a, double *y, int64_t len, double slope) {
    for (int64_t j = 0; j < len; j++) {
        uint64_t xb, rb;
        double r = a[j] * slope;
        memcpy(&xb, &a[j], sizeof xb);
        memcpy(&rb, &r, sizeof rb);
        uint64_t m = 0u - (uint64_t)(xb > 0x8000000000000000u && xb <= 0xFFF0000000000000u);
        xb = (rb & m) | (xb & ~m);
        memcpy(&y[j], &xb, sizeof xb);
    }
}

/* synth-embed begin (oi_gemm.h: clamp) */
/* clamp as OI_S_fmin(OI_S_fmax(x, lo), hi) computes it (a NaN x gives lo;
 * they return their first operand on a tie, so -0 stays -0 against +0), on
 * bounds that are exact in the element type and not NaN; relu's clamps
 * (hi first, then lo; NaN passes) when `relu`. Vectorizes: no libm call. */
#define OI__EW_CLAMP_BODY(T) \
    do { \
        T lo_t = (T)lo, hi_t = (T)hi; \
        if (relu) \
            for (int64_t j = 0; j < len; j++) { \
                T r = y[j] > hi_t ? hi_t : y[j]; \
                y[j] = r < lo_t ? lo_t : r; \
            } \
        else \
            for (int64_t j = 0; j < len; j++) { \
                T r = a[j] >= lo_t ? a[j] : lo_t; \
                y[j] = r <= hi_t ? r : hi_t; \
            } \
    } while (0)

static inline void oi__ew_clamp_f32(const float *a, float *y, int64_t len, double lo, double hi, bool relu) {
    OI__EW_CLAMP_BODY(float);
}

/* relu (then its clamps when `clamps`) or, relu false, clamp over len f32
 * of a into y: whole blocks in lanes, then the tail. */
OI__EW_ENTRY void oi__ew_relu_clamp_f32(int isa, bool relu, const float *a, float *y, int64_t len, double slope,
                                        bool clamps, double lo, double hi) {
    if (relu) {
        int64_t done = oi__ew_relu_f32_blocks(isa, a, y, len, slope, clamps, lo, hi);
        a += done, y += done, len -= done;
        oi__ew_relu_f32(a, y, len, slope);
    }
    if (!relu || clamps)
        oi__ew_clamp_f32(a, y, len, lo, hi, relu);
}
/* synth-embed end */

static void oi__ew_clamp_f64(const double *a, double *y, int64_t len, double lo, double hi, bool relu) {
    OI__EW_CLAMP_BODY(double);
}

/* synth-embed begin (oi_gemm.h: hard_sigmoid and hard_swish) */
/* hard_sigmoid / hard_swish as the generic path computes them: every f32
 * operation here is the f64 one rounded once, and the clamps are exact.
 * Whole blocks through a local buffer (they vectorize at -O2), then the
 * tail; compiled for the build's ISA and under AVX2 and AVX-512. */
#define OI__EW_HARD_STEP(T, x, out) \
    do { \
        T p_ = (x) * al; /* its own statement: never contracted into an FMA */ \
        T h_ = p_ + be; \
        h_ = h_ > (T)1 ? (T)1 : h_; \
        h_ = h_ < (T)0 ? (T)0 : h_; \
        (out) = swish ? (x) * h_ : h_; \
    } while (0)
#define OI__EW_HARD_BODY(T) \
    do { \
        T al = (T)alpha, be = (T)beta; \
        int64_t j0 = 0; \
        for (; j0 + OI__EW_BLOCK <= len; j0 += OI__EW_BLOCK) { \
            T blk[OI__EW_BLOCK]; \
            for (int i = 0; i < OI__EW_BLOCK; i++) \
                OI__EW_HARD_STEP(T, a[j0 + i], blk[i]); \
            memcpy(y + j0, blk, sizeof blk); \
        } \
        for (; j0 < len; j0++) \
            OI__EW_HARD_STEP(T, a[j0], y[j0]); \
    } while (0)

static inline void oi__ew_hard_f32_base(const float *a, float *y, int64_t len, double alpha, double beta, bool swish) {
    OI__EW_HARD_BODY(float);
}

#if OI__GEMM_X86
/* In intrinsics: GCC -O2 leaves the AVX2 build of the body scalar (it
 * vectorizes the AVX-512 one). The same operations in the same order:
 * min(1, h) and max(0, h) keep h where it is NaN (the lanes' min/max return
 * their second operand then), as h > 1 ? 1 : h and h < 0 ? 0 : h do. */
OI__TARGET_AVX2 static inline void oi__ew_hard_f32_avx2(const float *a, float *y, int64_t len, double alpha,
                                                        double beta, bool swish) {
    float al = (float)alpha, be = (float)beta;
    __m256 v_al = _mm256_set1_ps(al), v_be = _mm256_set1_ps(be), one = _mm256_set1_ps(1.0f);
    __m256 zero = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= len; j += 8) {
        __m256 x = _mm256_loadu_ps(a + j);
        __m256 h = _mm256_add_ps(_mm256_mul_ps(x, v_al), v_be);
        h = _mm256_max_ps(zero, _mm256_min_ps(one, h));
        _mm256_storeu_ps(y + j, swish ? _mm256_mul_ps(x, h) : h);
    }
    for (; j < len; j++)
        OI__EW_HARD_STEP(float, a[j], y[j]);
}

OI__TARGET_AVX512 static inline void oi__ew_hard_f32_avx512(const float *a, float *y, int64_t len, double alpha,
                                                            double beta, bool swish) {
    OI__EW_HARD_BODY(float);
}
#endif

/* hard_sigmoid (alpha, beta) or hard_swish (alpha 1/6, beta 0.5: pass
 * them) over len f32 in the lanes of isa. */
OI__EW_ENTRY void oi__ew_hard_f32_at(int isa, const float *a, float *y, int64_t len, double alpha, double beta,
                                     bool swish) {
#if OI__GEMM_X86
    if (isa == 2) {
        oi__ew_hard_f32_avx512(a, y, len, alpha, beta, swish);
        return;
    }
    if (isa == 1) {
        oi__ew_hard_f32_avx2(a, y, len, alpha, beta, swish);
        return;
    }
#endif
    (void)isa;
    oi__ew_hard_f32_base(a, y, len, alpha, beta, swish);
}
/* synth-embed end */

static void oi__ew_hard_f64(const double *a, double *y, int64_t len, double alpha, double beta, bool swish) {
    OI__EW_HARD_BODY(double);
}

/* The lanes the gemm's ISA choice allows (OPENINFER_ISA caps it), as the
 * loops above number them. */
static int oi__ew_isa(void) {
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    return isa == OI__GEMM_ISA_AVX512 ? 2 : isa == OI__GEMM_ISA_AVX2 ? 1 : 0;
#else
    return 0;
#endif
}

/* hard_sigmoid (alpha, beta) or hard_swish (alpha 1/6, beta 0.5: pass
 * them) over len f32 in the ISA's lanes; conv.c's activation= uses it too. */
static void oi__ew_hard_f32(const float *a, float *y, int64_t len, double alpha, double beta, bool swish) {
    oi__ew_hard_f32_at(oi__ew_isa(), a, y, len, alpha, beta, swish);
}

static void oi__ew_hard_chunk(const oi__ew_job *jb, int64_t lo, int64_t hi) {
    bool swish = jb->op == OI_OP_hard_swish;
    if (jb->wide)
        oi__ew_hard_f64((const double *)jb->a + lo, (double *)jb->y + lo, hi - lo, jb->alpha, jb->beta, swish);
    else
        oi__ew_hard_f32((const float *)jb->a + lo, (float *)jb->y + lo, hi - lo, jb->alpha, jb->beta, swish);
}

static void oi__ew_unary_chunk(const oi__ew_job *jb, int64_t lo, int64_t hi) {
    bool relu = jb->op == OI_OP_relu, clamps = jb->lo != -INFINITY || jb->hi != INFINITY;
    if (jb->wide) {
        const double *a = (const double *)jb->a + lo;
        double *y = (double *)jb->y + lo;
        if (relu)
            oi__ew_relu_f64(a, y, hi - lo, jb->slope);
        if (!relu || clamps)
            oi__ew_clamp_f64(a, y, hi - lo, jb->lo, jb->hi, relu);
    } else {
        /* relu: whole blocks relu'd and clamped in one pass, then the tail */
        oi__ew_relu_clamp_f32(oi__ew_isa(), relu, (const float *)jb->a + lo, (float *)jb->y + lo, hi - lo, jb->slope,
                              clamps, jb->lo, jb->hi);
    }
}

static void oi__ew_chunk(void *ctx, int task, int thread) {
    const oi__ew_job *jb = (const oi__ew_job *)ctx;
    (void)thread;
    int64_t lo = (int64_t)task * jb->chunk, hi = lo + jb->chunk < jb->n ? lo + jb->chunk : jb->n;
    size_t es = jb->wide ? sizeof(double) : sizeof(float);
    if (jb->op == OI_OP_relu || jb->op == OI_OP_clamp) {
        oi__ew_unary_chunk(jb, lo, hi);
        return;
    }
    if (jb->op == OI_OP_hard_sigmoid || jb->op == OI_OP_hard_swish) {
        oi__ew_hard_chunk(jb, lo, hi);
        return;
    }
    for (int64_t i = lo; i < hi;) {
        /* a segment where neither operand wraps around its period */
        int64_t oa = i % jb->pa, ob = i % jb->pb, len = hi - i;
        if (jb->pa > 1 && jb->pa - oa < len)
            len = jb->pa - oa;
        if (jb->pb > 1 && jb->pb - ob < len)
            len = jb->pb - ob;
        const char *a = (const char *)jb->a + (size_t)oa * es, *b = (const char *)jb->b + (size_t)ob * es;
        char *y = (char *)jb->y + (size_t)i * es;
        bool sa = jb->pa > 1, sb = jb->pb > 1;
        if (!sa && !sb) /* both scalars: one value */
            len = 1;
        if (jb->wide)
            oi__ew_seg_f64(jb->op, (const double *)(const void *)a, (const double *)(const void *)b,
                           (double *)(void *)y, len, sa || !sb, sb, jb->mask);
        else
            oi__ew_seg_f32(jb->op, (const float *)(const void *)a, (const float *)(const void *)b,
                           (float *)(void *)y, len, sa || !sb, sb, (float)jb->mask);
        i += len;
    }
}

/* ---- broadcast rows ----
 * add/sub/mul/div of f32/f64 where an operand repeats along inner or
 * middle dims ([B,S,1] with [B,S,D], [N,C,1,1] with [N,C,H,W], a mask
 * [B,1,1,T] with [B,H,S,T]) or is a strided view: dims merge where every
 * operand allows it, and the innermost merged dim becomes rows in which each
 * operand moves by one element or stays on one, through the same vector
 * loops as the period path. */
typedef struct oi__ew_rows {
    oi_op op;
    bool wide;
    int ndim;                       /* merged dims, outer first; the last is the row */
    int64_t shape[OI_MAX_DIMS];
    int64_t stride[2][OI_MAX_DIMS]; /* a's and b's, in elements (0: repeats) */
    const char *a, *b;
    char *y;
    double mask;
    int64_t rows, rows_per_task;
} oi__ew_rows;

/* t's stride along each of out's dims (right-aligned; 0 where t repeats). */
static void oi__ew_rows_strides(const oi__tensor *t, const oi__tensor *out, int64_t *stride) {
    int shift = out->ndim - t->ndim;
    for (int d = 0; d < out->ndim; d++) {
        int td = d - shift;
        stride[d] = td < 0 || t->shape[td] == 1 ? 0 : t->strides[td];
    }
}

/* Merges out's dims (size-1 dims dropped) where the outer dim continues the
 * inner one for out and both operands; false when a row cannot be walked
 * by the vector loops (an inner stride other than 0 or 1, or both 0). */
static bool oi__ew_rows_merge(oi__ew_rows *r, const oi__tensor *out, int64_t sa[], int64_t sb[]) {
    int64_t so[OI_MAX_DIMS];
    oi__contiguous_strides(out->ndim, out->shape, so);
    r->ndim = 0;
    int64_t shape[OI_MAX_DIMS], st[3][OI_MAX_DIMS]; /* innermost first */
    for (int d = out->ndim - 1; d >= 0; d--) {
        if (out->shape[d] == 1)
            continue;
        int m = r->ndim - 1;
        if (m >= 0 && so[d] == st[2][m] * shape[m] && sa[d] == st[0][m] * shape[m] && sb[d] == st[1][m] * shape[m]) {
            shape[m] *= out->shape[d];
            continue;
        }
        m = r->ndim++;
        shape[m] = out->shape[d];
        st[0][m] = sa[d], st[1][m] = sb[d], st[2][m] = so[d];
    }
    if (r->ndim == 0 || (st[0][0] != 0 && st[0][0] != 1) || (st[1][0] != 0 && st[1][0] != 1) ||
        (st[0][0] == 0 && st[1][0] == 0))
        return false;
    for (int m = 0; m < r->ndim; m++) { /* outer first */
        r->shape[m] = shape[r->ndim - 1 - m];
        r->stride[0][m] = st[0][r->ndim - 1 - m];
        r->stride[1][m] = st[1][r->ndim - 1 - m];
    }
    return true;
}

static void oi__ew_rows_task(void *ctx, int task, int thread) {
    const oi__ew_rows *r = (const oi__ew_rows *)ctx;
    (void)thread;
    int last = r->ndim - 1;
    int64_t len = r->shape[last], first = (int64_t)task * r->rows_per_task;
    int64_t end = first + r->rows_per_task < r->rows ? first + r->rows_per_task : r->rows;
    int64_t index[OI_MAX_DIMS] = {0}, at = first;
    for (int d = last - 1; d >= 0; d--) { /* the first row's place */
        index[d] = at % r->shape[d];
        at /= r->shape[d];
    }
    size_t es = r->wide ? sizeof(double) : sizeof(float);
    bool sa = r->stride[0][last] == 1, sb = r->stride[1][last] == 1;
    for (int64_t row = first; row < end; row++) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < last; d++)
            oa += index[d] * r->stride[0][d], ob += index[d] * r->stride[1][d];
        const void *a = r->a + (size_t)oa * es, *b = r->b + (size_t)ob * es;
        void *y = r->y + (size_t)(row * len) * es;
        if (r->wide)
            oi__ew_seg_f64(r->op, (const double *)a, (const double *)b, (double *)y, len, sa, sb, r->mask);
        else
            oi__ew_seg_f32(r->op, (const float *)a, (const float *)b, (float *)y, len, sa, sb, (float)r->mask);
        for (int d = last - 1; d >= 0 && ++index[d] == r->shape[d]; d--)
            index[d] = 0;
    }
}

static bool oi__ew_rows_run(const oi__kernel_args *k, const oi__ew_params *p) {
    const oi__tensor *in_a = k->in[0], *in_b = k->in[1], *out = k->out;
    if (in_a->dtype != out->dtype || in_b->dtype != out->dtype)
        return false;
    oi__ew_rows r;
    memset(&r, 0, sizeof r);
    int64_t sa[OI_MAX_DIMS], sb[OI_MAX_DIMS];
    oi__ew_rows_strides(in_a, out, sa);
    oi__ew_rows_strides(in_b, out, sb);
    if (!oi__ew_rows_merge(&r, out, sa, sb))
        return false;
    r.op = k->op;
    r.wide = out->dtype == OI_DTYPE_F64;
    size_t es = r.wide ? 8u : 4u;
    r.a = (const char *)oi__op_cdata(in_a) + (size_t)in_a->offset * es;
    r.b = (const char *)oi__op_cdata(in_b) + (size_t)in_b->offset * es;
    r.y = (char *)oi__tensor_data(out) + (size_t)out->offset * es;
    r.mask = p->mask_f;
    int64_t n = oi__shape_numel(out->ndim, out->shape), len = r.shape[r.ndim - 1];
    r.rows = n / len;
    oi__threadpool *pool = n >= ((int64_t)1 << 16) ? oi__threadpool_default() : NULL;
    int64_t tasks = pool ? oi__threadpool_size(pool) * 4 : 1;
    if (tasks > r.rows)
        tasks = r.rows;
    r.rows_per_task = (r.rows + tasks - 1) / tasks;
    oi__threadpool_run(pool, (int)((r.rows + r.rows_per_task - 1) / r.rows_per_task), oi__ew_rows_task, &r);
    return true;
}

/* A clamp bound the typed loops compare against exactly as the generic
 * path does (in f64, then rounded): not NaN and exact in the element type. */
static bool oi__ew_bound_exact(double bound, bool wide) {
    return !isnan(bound) && (wide || isinf(bound) || (double)(float)bound == bound);
}

static bool oi__ew_fast(const oi__kernel_args *k, const oi__ew_params *p) {
    oi_dtype t = k->out->dtype;
    if ((t != OI_DTYPE_F32 && t != OI_DTYPE_F64) || !oi__tensor_is_contiguous(k->out))
        return false;
    oi__ew_job jb;
    memset(&jb, 0, sizeof jb);
    jb.op = k->op;
    jb.wide = t == OI_DTYPE_F64;
    jb.n = oi__shape_numel(k->out->ndim, k->out->shape);
    if (k->op == OI_OP_relu || k->op == OI_OP_clamp) {
        if (k->n_in != 1 || oi__ew_period(k->in[0], k->out) != jb.n || !oi__ew_bound_exact(p->lo_f, jb.wide) ||
            !oi__ew_bound_exact(p->hi_f, jb.wide))
            return false;
    } else if (k->op == OI_OP_hard_sigmoid || k->op == OI_OP_hard_swish) {
        if (k->n_in != 1 || oi__ew_period(k->in[0], k->out) != jb.n)
            return false;
    } else if (k->op == OI_OP_add || k->op == OI_OP_sub || k->op == OI_OP_mul || k->op == OI_OP_div) {
        if (k->n_in != 2)
            return false;
        jb.pa = oi__ew_period(k->in[0], k->out);
        jb.pb = oi__ew_period(k->in[1], k->out);
        if (jb.pa == 0 || jb.pb == 0)
            return jb.n > 0 && oi__ew_rows_run(k, p);
        jb.b = (const char *)oi__op_cdata(k->in[1]) + (size_t)k->in[1]->offset * (jb.wide ? 8u : 4u);
    } else {
        return false;
    }
    if (jb.n == 0)
        return true;
    jb.a = (const char *)oi__op_cdata(k->in[0]) + (size_t)k->in[0]->offset * (jb.wide ? 8u : 4u);
    jb.y = (char *)oi__tensor_data(k->out) + (size_t)k->out->offset * (jb.wide ? 8u : 4u);
    jb.mask = p->mask_f;
    jb.slope = p->slope_f;
    jb.lo = p->lo_f;
    jb.hi = p->hi_f;
    jb.alpha = p->alpha_f;
    jb.beta = p->beta_f;
    oi__threadpool *pool = jb.n >= ((int64_t)1 << 16) ? oi__threadpool_default() : NULL;
    int tasks = pool ? oi__threadpool_size(pool) * 4 : 1;
    jb.chunk = (jb.n + tasks - 1) / tasks;
    jb.chunk = (jb.chunk + 63) / 64 * 64;
    tasks = (int)((jb.n + jb.chunk - 1) / jb.chunk);
    oi__threadpool_run(pool, tasks, oi__ew_chunk, &jb);
    return true;
}

static oi_status oi__k_arith(const oi__kernel_args *k) {
    oi__ew_params p;
    oi__ew_read_params(k, &p);
    if (oi__ew_fast(k, &p))
        return OI_OK;
    oi_dtype in_t = k->in[0]->dtype, out_t = k->out->dtype;
    oi__op_domain dom = oi__op_domain_of(in_t);
    void *out_data = oi__tensor_data(k->out);
    int64_t n = oi__shape_numel(k->out->ndim, k->out->shape);
    size_t n_in = k->n_in;
    oi__ew_iter it;
    oi__ew_init(&it, k->in, n_in, k->out);
    for (int64_t e = 0; e < n; e++, oi__ew_next(&it)) {
        int64_t at_out = it.at[n_in];
        if (k->op == OI_OP_popcount) {
            oi__store_u64(out_t, out_data, at_out, oi__op_popcount64(oi__load_bits(in_t, oi__op_cdata(k->in[0]), it.at[0])));
            continue;
        }
        if (dom == OI__DOM_FLOAT) {
            double v[3] = {0, 0, 0};
            for (size_t i = 0; i < n_in; i++)
                v[i] = oi__load_f64(k->in[i]->dtype, oi__op_cdata(k->in[i]), it.at[i]);
            oi__store_f64(out_t, out_data, at_out, oi__ew_float(k->op, v, &p));
        } else if (dom == OI__DOM_SIGNED) {
            int64_t v[3] = {0, 0, 0};
            for (size_t i = 0; i < n_in; i++)
                v[i] = oi__load_i64(k->in[i]->dtype, oi__op_cdata(k->in[i]), it.at[i]);
            oi__store_i64(out_t, out_data, at_out, oi__ew_signed(k->op, v, &p));
        } else {
            uint64_t v[3] = {0, 0, 0};
            for (size_t i = 0; i < n_in; i++)
                v[i] = oi__load_u64(k->in[i]->dtype, oi__op_cdata(k->in[i]), it.at[i]);
            oi__store_u64(out_t, out_data, at_out, oi__ew_unsigned(k->op, v, &p));
        }
    }
    return OI_OK;
}
