/* math.c - the unary transcendental ops (exp, log, sqrt, rsqrt, erf, tanh,
 * sigmoid, gelu, silu, softplus) and pow.
 *
 * Floats below f64 compute in f32 and round once into the output dtype;
 * f64 computes in double with libm (the reference path). exp, tanh,
 * sigmoid, silu and gelu (both forms) are scalar_math.h's branch-free f32
 * functions (the shaders run the same ones), so the contiguous f32 loops,
 * written in blocks of 16 through a local array, vectorize at -O2; log,
 * erf, softplus and pow call libm per element. Other layouts and dtypes
 * walk the output with the shared iterator and use the same per-element
 * f32 functions, so a strided f32 view gives the same bits as a dense one.
 * On x86 with AVX2+FMA or AVX-512, dense f32 exp, sigmoid, silu and
 * gelu (both forms) run vexp.h's intrinsics instead (exp of 16M floats on
 * 2 threads: 10.6 -> 3.4 ms; both within 2 ulp, so strided and dense
 * results may differ by an ulp or two there). */
#include "../openinfer_impl/internal.h"

/* ---- ISA clones ----
 * The hot f32 loops (here and in nn.c) are written once, as always-inline
 * bodies, and compiled three times: portable (SSE2 on x86-64), AVX2 and
 * AVX-512 (gemm.c's target attributes); OI__ISA_CALL and OI__ISA_PICK
 * choose the clone the CPU runs, by the gemm's choice. The compiler widens
 * the 16-lane blocks to the ISA's vectors. The clones compute the same
 * IEEE operations in the same order, so they agree (up to contraction
 * into FMA, which ISO C modes leave off). */
#if OI__GEMM_X86
#define OI__MATH_INLINE static inline __attribute__((always_inline))
#define OI__ISA_CLONES(name, params, args) \
    static void name##_portable params { name##_body args; } \
    OI__TARGET_AVX2 static void name##_avx2 params { name##_body args; } \
    OI__TARGET_AVX512 static void name##_avx512 params { name##_body args; }
#define OI__ISA_PICK(name) \
    (oi__gemm_active_isa() == OI__GEMM_ISA_AVX512 ? name##_avx512 \
     : oi__gemm_active_isa() == OI__GEMM_ISA_AVX2 ? name##_avx2 : name##_portable)
#else
#define OI__MATH_INLINE static inline
#define OI__ISA_CLONES(name, params, args) \
    static void name##_portable params { name##_body args; }
#define OI__ISA_PICK(name) name##_portable
#endif
#define OI__ISA_CALL(name, args) OI__ISA_PICK(name) args

#include "scalar_math.h" /* the f32 functions: exp, tanh, sigmoid, silu, gelu, softplus */
#include "vexp.h"

/* ---- one element, any op ---- */
static float oi__math_f32(oi_op op, float x, float y, bool gelu_tanh) {
    switch (op) {
    case OI_OP_exp: return OI_S_exp_f32(x);
    case OI_OP_log: return logf(x);
    case OI_OP_sqrt: return sqrtf(x);
    case OI_OP_rsqrt: return 1.0f / sqrtf(x);
    case OI_OP_erf: return erff(x);
    case OI_OP_tanh: return OI_S_tanh_f32(x);
    case OI_OP_sigmoid: return OI_S_sigmoid_f32(x);
    case OI_OP_silu: return OI_S_silu_f32(x);
    case OI_OP_gelu: return gelu_tanh ? OI_S_gelu_tanh_f32(x) : OI_S_gelu_erf_f32(x);
    case OI_OP_softplus: return OI_S_softplus_f32(x);
    case OI_OP_pow: return powf(x, y);
    default: return NAN;
    }
}

static double oi__math_f64(oi_op op, double x, double y, bool gelu_tanh) {
    switch (op) {
    case OI_OP_exp: return exp(x);
    case OI_OP_log: return log(x);
    case OI_OP_sqrt: return sqrt(x);
    case OI_OP_rsqrt: return 1.0 / sqrt(x);
    case OI_OP_erf: return erf(x);
    case OI_OP_tanh: return tanh(x);
    case OI_OP_sigmoid: return 1.0 / (1.0 + exp(-x));
    case OI_OP_silu: return x / (1.0 + exp(-x));
    case OI_OP_gelu:
        if (gelu_tanh)
            return x / (1.0 + exp(-2.0 * 0.79788456080286535588 * (x + 0.044715 * x * x * x)));
        return 0.5 * x * erfc(-x * 0.70710678118654752440);
    case OI_OP_softplus: return (x > 0.0 ? x : 0.0) + log1p(exp(-fabs(x)));
    case OI_OP_pow: return pow(x, y);
    default: return NAN;
    }
}

/* ---- contiguous f32 ---- */
#define OI__MATH_BLOCK 16

/* y[i] = EXPR for i in [0, n), where EXPR may use `v` (= x[i]) and `i`.
 * Blocks of 16 go through a local array: x and y may be the same buffer,
 * which would otherwise keep the vectorizer away (nn.c uses it too). */
#define OI__MAP(x, y, n, EXPR) \
    do { \
        int64_t base_ = 0; \
        for (; base_ + OI__MATH_BLOCK <= (n); base_ += OI__MATH_BLOCK) { \
            float b_[OI__MATH_BLOCK]; \
            memcpy(b_, (x) + base_, sizeof b_); \
            for (int j_ = 0; j_ < OI__MATH_BLOCK; j_++) { \
                int64_t i = base_ + j_; \
                float v = b_[j_]; \
                (void)i; \
                b_[j_] = (EXPR); \
            } \
            memcpy((y) + base_, b_, sizeof b_); \
        } \
        for (; base_ < (n); base_++) { \
            int64_t i = base_; \
            float v = (x)[base_]; \
            (void)i; \
            (y)[base_] = (EXPR); \
        } \
    } while (0)
#define OI__MATH_MAP(EXPR) OI__MAP(x, y, n, EXPR)

OI__MATH_INLINE void oi__math_map_body(oi_op op, bool gelu_tanh, const float *x, float *y, int64_t n) {
    switch (op) {
    case OI_OP_exp: OI__MATH_MAP(OI_S_exp_f32(v)); break;
    case OI_OP_tanh: OI__MATH_MAP(OI_S_tanh_f32(v)); break;
    case OI_OP_sigmoid: OI__MATH_MAP(OI_S_sigmoid_f32(v)); break;
    case OI_OP_silu: OI__MATH_MAP(OI_S_silu_f32(v)); break;
    case OI_OP_rsqrt: OI__MATH_MAP(1.0f / sqrtf(v)); break;
    case OI_OP_sqrt: OI__MATH_MAP(sqrtf(v)); break;
    case OI_OP_gelu:
        if (gelu_tanh)
            OI__MATH_MAP(OI_S_gelu_tanh_f32(v));
        else
            OI__MATH_MAP(OI_S_gelu_erf_f32(v));
        break;
    default: OI__MATH_MAP(oi__math_f32(op, v, 0.0f, gelu_tanh)); break;
    }
}

OI__ISA_CLONES(oi__math_map, (oi_op op, bool gelu_tanh, const float *x, float *y, int64_t n), (op, gelu_tanh, x, y, n))

typedef struct oi__math_job {
    oi_op op;
    bool gelu_tanh;
    const float *x, *b; /* b: pow's exponent, one element or n of them */
    float *y;
    int64_t n, chunk;
    bool b_scalar;
} oi__math_job;

/* The ops with an intrinsics loop in vexp.h; false for the others. */
static bool oi__math_vexp_op(oi_op op, bool gelu_tanh, oi__vexp_op *v) {
    switch (op) {
    case OI_OP_exp: *v = OI__VEXP_EXP; return true;
    case OI_OP_sigmoid: *v = OI__VEXP_SIGMOID; return true;
    case OI_OP_silu: *v = OI__VEXP_SILU; return true;
    case OI_OP_gelu: *v = gelu_tanh ? OI__VEXP_GELU_TANH : OI__VEXP_GELU_ERF; return true;
    default: return false;
    }
}

#if OI__GEMM_X86
/* sqrt in lanes: sqrtf's errno path keeps the block loop scalar unless the
 * build says -fno-math-errno (a call per element). vsqrtps rounds as sqrtf
 * and gives the same default NaN below zero. */
OI__TARGET_AVX2 static void oi__math_sqrt_avx2(const float *x, float *y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
    for (; i < n; i++)
        _mm_store_ss(y + i, _mm_sqrt_ss(_mm_load_ss(x + i)));
}
#endif

static void oi__math_chunk(void *ctx, int task, int thread) {
    const oi__math_job *j = (const oi__math_job *)ctx;
    (void)thread;
    int64_t lo = (int64_t)task * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
    oi__vexp_op v;
    if (oi__math_vexp_op(j->op, j->gelu_tanh, &v) && oi__vexp_map(v, j->x + lo, j->y + lo, hi - lo))
        return;
#if OI__GEMM_X86
    if (j->op == OI_OP_sqrt && oi__gemm_active_isa() != OI__GEMM_ISA_PORTABLE) {
        oi__math_sqrt_avx2(j->x + lo, j->y + lo, hi - lo);
        return;
    }
#endif
    if (j->op != OI_OP_pow) {
        OI__ISA_CALL(oi__math_map, (j->op, j->gelu_tanh, j->x + lo, j->y + lo, hi - lo));
        return;
    }
    for (int64_t i = lo; i < hi; i++)
        j->y[i] = powf(j->x[i], j->b[j->b_scalar ? 0 : i]);
}

static bool oi__math_dense_f32(const oi__tensor *t, const oi__tensor *out) {
    if (t->dtype != OI_DTYPE_F32 || !oi__tensor_is_contiguous(t) || t->ndim != out->ndim)
        return false;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] != out->shape[d])
            return false;
    return true;
}

/* Contiguous f32 without broadcasting (pow: or a one-element exponent),
 * split over the pool when large. */
static bool oi__math_fast_f32(const oi__kernel_args *k, bool gelu_tanh) {
    const oi__tensor *x = k->in[0], *out = k->out;
    bool b_scalar = false;
    if (!oi__math_dense_f32(x, out) || !oi__math_dense_f32(out, out))
        return false;
    if (k->op == OI_OP_pow) {
        const oi__tensor *b = k->in[1];
        b_scalar = b->dtype == OI_DTYPE_F32 && oi__shape_numel(b->ndim, b->shape) == 1;
        if (!b_scalar && !oi__math_dense_f32(b, out))
            return false;
    }
    oi__math_job job;
    job.op = k->op;
    job.gelu_tanh = gelu_tanh;
    job.x = (const float *)oi__op_cdata(x) + x->offset;
    job.b = k->op == OI_OP_pow ? (const float *)oi__op_cdata(k->in[1]) + k->in[1]->offset : NULL;
    job.b_scalar = b_scalar;
    job.y = (float *)oi__tensor_data(out) + out->offset;
    job.n = oi__shape_numel(out->ndim, out->shape);
    oi__threadpool *pool = job.n >= ((int64_t)1 << 15) ? oi__threadpool_default() : NULL;
    int tasks = pool ? oi__threadpool_size(pool) * 4 : 1;
    job.chunk = (job.n + tasks - 1) / tasks;
    job.chunk = (job.chunk + OI__MATH_BLOCK - 1) / OI__MATH_BLOCK * OI__MATH_BLOCK;
    if (job.chunk < 1)
        job.chunk = 1;
    tasks = (int)((job.n + job.chunk - 1) / job.chunk);
    oi__threadpool_run(pool, tasks, oi__math_chunk, &job);
    return true;
}

void oi__math_apply_f32(oi_op op, bool gelu_tanh, float *x, int64_t n) {
    oi__vexp_op v;
    if (oi__math_vexp_op(op, gelu_tanh, &v) && oi__vexp_map(v, x, x, n))
        return;
    OI__ISA_CALL(oi__math_map, (op, gelu_tanh, x, x, n));
}

void oi__math_apply_f64(oi_op op, bool gelu_tanh, double *x, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        x[i] = oi__math_f64(op, x[i], 0.0, gelu_tanh);
}

/* approximate="tanh" selects the tanh form of gelu. */
static bool oi__math_gelu_tanh(const oi__kernel_args *k) {
    const oi__attr *a = oi__op_attr_for(k, "approximate");
    return a && strcmp(a->s, "tanh") == 0;
}

static oi_status oi__k_math(const oi__kernel_args *k) {
    bool gelu_tanh = k->op == OI_OP_gelu && oi__math_gelu_tanh(k);
    if (oi__math_fast_f32(k, gelu_tanh))
        return OI_OK;
    oi_dtype out_t = k->out->dtype;
    bool wide = out_t == OI_DTYPE_F64;
    void *out_data = oi__tensor_data(k->out);
    int64_t n = oi__shape_numel(k->out->ndim, k->out->shape);
    size_t n_in = k->n_in;
    oi__ew_iter it;
    oi__ew_init(&it, k->in, n_in, k->out);
    for (int64_t e = 0; e < n; e++, oi__ew_next(&it)) {
        double v[2] = {0.0, 0.0};
        for (size_t i = 0; i < n_in; i++)
            v[i] = oi__load_f64(k->in[i]->dtype, oi__op_cdata(k->in[i]), it.at[i]);
        double r = wide ? oi__math_f64(k->op, v[0], v[1], gelu_tanh)
                        : (double)oi__math_f32(k->op, (float)v[0], (float)v[1], gelu_tanh);
        oi__store_f64(out_t, out_data, it.at[n_in], r);
    }
    return OI_OK;
}
