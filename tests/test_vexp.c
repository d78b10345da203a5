/* test_vexp.c - the f32 exp and the ops built on it (kernels/vexp.h,
 * math.c, nn.c), on every code path this CPU has: portable, AVX2+FMA and
 * AVX-512, chosen with oi__gemm_force_isa. The reference is libm's exp()
 * and friends in double, never our own code:
 *   exp: within 2 ulp for every 64th f32 bit pattern in [-104, 89] and the
 *        edge values (overflow -> +inf, underflow -> 0 through the
 *        subnormals, NaN, +-inf);
 *   sigmoid, silu, tanh-form gelu: relative error of a few ulp;
 *   exact gelu: against libm's erfc in double, every 64th bit pattern of
 *        x in [-12.7, 16] (GELU_MAX_ULP) and [-30, 30] with the far tail;
 *   softmax, log_softmax: rows of every tail length, across the 256-element
 *        chunks, with -inf entries;
 *   layer_norm, rms_norm (intrinsics rows in nn.c): the same lengths. */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"
#include "check.h"

#include <float.h>
#include <math.h>

#include "op_test_util.h"

static const oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};

static float from_bits(uint32_t b) {
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static uint32_t to_bits(float v) {
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b;
}

/* |y - ref| in units of the f32 ulp at ref (2^-149 in the subnormals).
 * An infinite y counts as 2^128, the next binade; a ref that rounds to
 * +inf in f32 wants +inf exactly. */
static double ulp_error(float y, double ref) {
    if (isnan(ref))
        return isnan(y) ? 0.0 : INFINITY;
    if (isnan(y))
        return INFINITY;
    if (ref >= 0x1.ffffffp127) /* FLT_MAX + half an ulp: rounds to +inf */
        return y == INFINITY ? 0.0 : INFINITY;
    double yd = isinf(y) ? copysign(0x1p128, (double)y) : (double)y;
    int e = 0;
    frexp(fabs(ref), &e); /* |ref| = m 2^e, m in [0.5, 1) */
    double ulp = ldexp(1.0, e - 24 < -149 ? -149 : e - 24);
    return fabs(yd - ref) / ulp;
}

/* Runs `op` on f32 x[n] into y[n] through the CPU kernel. */
static void run_f32(oi_op op, const oi__attr *attrs, size_t n_attrs, const float *x, float *y, int64_t rows,
                    int64_t cols) {
    int64_t shape[2] = {rows, cols};
    oi__tensor *in = oi__tensor_new(OI_DTYPE_F32, 2, shape), *out = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    CHECK(in && out);
    if (in && out) {
        memcpy(oi__tensor_data(in), x, (size_t)(rows * cols) * sizeof(float));
        const oi__tensor *ins[1] = {in};
        CHECK_OK(oi__op_run_cpu(op, attrs, n_attrs, ins, 1, out));
        memcpy(y, oi__tensor_data(out), (size_t)(rows * cols) * sizeof(float));
    }
    oi__tensor_free(in);
    oi__tensor_free(out);
}

/* ---- exp over the whole range ---- */
#define SWEEP_CHUNK (1 << 20)

typedef struct {
    double worst;
    float at;
} worst_case;

static void note(worst_case *w, float x, float y, double ref) {
    double e = ulp_error(y, ref);
    if (!(e <= w->worst)) { /* NaN errors count too */
        w->worst = e;
        w->at = x;
    }
}

typedef double (*reference_fn)(double x);

static double ref_exp(double x) { return exp(x); }

/* Exact gelu through libm's erfc: 0.5 x (1 + erf(x / sqrt 2)) without the
 * cancellation for x < 0. */
static double ref_gelu_erf(double x) { return 0.5 * x * erfc(-x * 0.70710678118654752440); }

/* Every `step`th bit pattern from `first` up to `last` (one sign), a chunk
 * at a time, through `op` against `ref`; an odd chunk length leaves a tail
 * for the masked code. */
static void sweep_range(oi_op op, reference_fn ref_of_x, uint32_t first, uint32_t last, uint32_t step,
                        worst_case *per_isa, const bool *has) {
    float *x = (float *)malloc(SWEEP_CHUNK * sizeof(float)), *y = (float *)malloc(SWEEP_CHUNK * sizeof(float));
    double *ref = (double *)malloc(SWEEP_CHUNK * sizeof(double));
    CHECK(x && y && ref);
    for (uint64_t b = first; x && y && ref && b <= last;) {
        int64_t n = 0;
        for (; n < SWEEP_CHUNK - 3 && b <= last; n++, b += step) {
            x[n] = from_bits((uint32_t)b);
            ref[n] = ref_of_x((double)x[n]);
        }
        for (size_t i = 0; i < COUNT(isas); i++) {
            if (!has[i] || !oi__gemm_force_isa(isas[i]))
                continue;
            run_f32(op, NULL, 0, x, y, 1, n);
            for (int64_t j = 0; j < n; j++)
                note(&per_isa[i], x[j], y[j], ref[j]);
        }
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    free(x);
    free(y);
    free(ref);
}

static void test_exp_sweep(const bool *has) {
    worst_case per_isa[COUNT(isas)];
    memset(per_isa, 0, sizeof per_isa);
    sweep_range(OI_OP_exp, ref_exp, 0x00000000u, to_bits(89.0f), 64, per_isa, has);   /* +0 .. 89   */
    sweep_range(OI_OP_exp, ref_exp, 0x80000000u, to_bits(-104.0f), 64, per_isa, has); /* -0 .. -104 */
    for (size_t i = 0; i < COUNT(isas); i++) {
        if (!has[i])
            continue;
        printf("exp %-8s: max error %.3f ulp (at x = %.9g)\n", oi__gemm_isa_name(isas[i]), per_isa[i].worst,
               (double)per_isa[i].at);
        CHECK_MSG(per_isa[i].worst <= 2.0, "exp %s: %.3f ulp at x = %.9g", oi__gemm_isa_name(isas[i]),
                  per_isa[i].worst, (double)per_isa[i].at);
    }
}

/* Exact gelu, every 64th bit pattern of x in [-12.7, 16] (below -12.7 the
 * result is under 1e-36 and erfc is taken as 0, checked in
 * test_exp_based_ops). The bound is in ulp of the result: math.c's erfc is
 * within 5e-7 relative and the rest adds a few roundings. */
#define GELU_MAX_ULP 10.0
static void test_gelu_sweep(const bool *has) {
    worst_case per_isa[COUNT(isas)];
    memset(per_isa, 0, sizeof per_isa);
    sweep_range(OI_OP_gelu, ref_gelu_erf, 0x00000000u, to_bits(16.0f), 64, per_isa, has);
    sweep_range(OI_OP_gelu, ref_gelu_erf, 0x80000000u, to_bits(-12.7f), 64, per_isa, has);
    for (size_t i = 0; i < COUNT(isas); i++) {
        if (!has[i])
            continue;
        printf("exact gelu %-8s: max error %.3f ulp (at x = %.9g)\n", oi__gemm_isa_name(isas[i]), per_isa[i].worst,
               (double)per_isa[i].at);
        CHECK_MSG(per_isa[i].worst <= GELU_MAX_ULP, "exact gelu %s: %.3f ulp at x = %.9g", oi__gemm_isa_name(isas[i]),
                  per_isa[i].worst, (double)per_isa[i].at);
    }
}

/* Edges, specials, and values around the overflow and underflow limits. */
static void test_exp_edges(const bool *has) {
    const float xs[] = {0.0f, -0.0f, 1.0f, -1.0f, 1e-30f, -1e-30f, FLT_MIN, 1e-45f /* subnormal */,
                        88.72283f, 88.722839f /* above ln FLT_MAX */, 88.7228394f, 89.0f, 100.0f, FLT_MAX,
                        -87.33654f /* e^x near FLT_MIN */, -87.34f, -100.0f, -103.27893f /* 2^-149 */,
                        -103.9720840f /* half of 2^-149 */, -103.98f, -104.0f, -200.0f, -FLT_MAX,
                        INFINITY, -INFINITY, NAN, -NAN};
    const int n = (int)COUNT(xs);
    float y[COUNT(xs)];
    for (size_t i = 0; i < COUNT(isas); i++) {
        if (!has[i] || !oi__gemm_force_isa(isas[i]))
            continue;
        const char *isa = oi__gemm_isa_name(isas[i]);
        run_f32(OI_OP_exp, NULL, 0, xs, y, 1, n);
        for (int j = 0; j < n; j++) {
            double ref = isnan(xs[j]) ? NAN : exp((double)xs[j]);
            CHECK_MSG(ulp_error(y[j], ref) <= 2.0, "exp %s(%.9g) = %.9g, want %.9g", isa, (double)xs[j],
                      (double)y[j], ref);
        }
        CHECK(y[0] == 1.0f && y[1] == 1.0f);
        CHECK(y[9] == INFINITY && y[11] == INFINITY && y[12] == INFINITY && y[13] == INFINITY);
        CHECK(y[16] > 0.0f && y[16] < FLT_MIN); /* e^-100: subnormal, not flushed */
        CHECK(y[17] == 0x1p-149f);
        CHECK(y[20] == 0.0f && y[21] == 0.0f && y[22] == 0.0f && !signbit(y[20]));
        CHECK(y[23] == INFINITY && y[24] == 0.0f && isnan(y[25]) && isnan(y[26]));
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
}

/* ---- sigmoid, silu, gelu(tanh) ---- */
static double ref_of(oi_op op, bool tanh_form, double x) {
    switch (op) {
    case OI_OP_exp: return exp(x);
    case OI_OP_sigmoid: return 1.0 / (1.0 + exp(-x));
    case OI_OP_silu: return x / (1.0 + exp(-x));
    default: /* gelu */
        if (tanh_form) /* 0.5 x (1 + tanh u) as x / (1 + e^-2u): no cancellation for x << 0 */
            return x / (1.0 + exp(-2.0 * 0.79788456080286535588 * (x + 0.044715 * x * x * x)));
        return 0.5 * x * erfc(-x * 0.70710678118654752440);
    }
}

/* Lengths 1..40 (every tail of 8 and 16 lanes) over [-30, 30]. */
static void test_exp_based_ops(const bool *has) {
    float x[40], y[40];
    oi__attr tanh_attr = attr_s("approximate", "tanh");
    const struct {
        oi_op op;
        bool tanh_form;
        double rtol;
    } ops[] = {{OI_OP_exp, false, 2.4e-7}, {OI_OP_sigmoid, false, 4e-7}, {OI_OP_silu, false, 4e-7},
               /* gelu(tanh): u rounded in f32 first; |2u| eps is the formula's conditioning */
               {OI_OP_gelu, true, 3e-5},
               /* exact gelu: math.c's erfc fit is within 5e-7 relative (test_gelu_sweep) */
               {OI_OP_gelu, false, 1.5e-6}};
    for (size_t i = 0; i < COUNT(isas); i++) {
        if (!has[i] || !oi__gemm_force_isa(isas[i]))
            continue;
        for (size_t o = 0; o < COUNT(ops); o++)
            for (int n = 1; n <= 40; n++) {
                for (int j = 0; j < n; j++)
                    x[j] = -30.0f + 60.0f * (float)((j * 37 + n * 11) % 97) / 96.0f;
                run_f32(ops[o].op, &tanh_attr, ops[o].tanh_form ? 1 : 0, x, y, 1, n);
                for (int j = 0; j < n; j++) {
                    double ref = ref_of(ops[o].op, ops[o].tanh_form, x[j]);
                    CHECK_MSG(fabs(y[j] - ref) <= ops[o].rtol * fabs(ref) + 1e-37, "%s %s n=%d: f(%.9g) = %.9g, want %.9g",
                              oi__gemm_isa_name(isas[i]), oi_op_name(ops[o].op), n, (double)x[j], (double)y[j], ref);
                }
            }
        /* specials */
        const float s[] = {INFINITY, -INFINITY, NAN, 0.0f, 100.0f, -100.0f};
        float t[6];
        run_f32(OI_OP_sigmoid, NULL, 0, s, t, 1, 6);
        CHECK(t[0] == 1.0f && t[1] == 0.0f && isnan(t[2]) && t[3] == 0.5f && t[4] == 1.0f && t[5] >= 0.0f &&
              t[5] < 1e-43f);
        run_f32(OI_OP_silu, NULL, 0, s, t, 1, 6);
        CHECK(t[0] == INFINITY && isnan(t[2]) && t[3] == 0.0f && t[4] == 100.0f && t[5] == 0.0f);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
}

/* ---- softmax, log_softmax ---- */
/* Returns the row's max. */
static double softmax_ref(const float *x, double *want, int64_t n, bool log_form) {
    double m = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < n; j++)
        m = x[j] > m ? x[j] : m;
    for (int64_t j = 0; j < n; j++)
        sum += exp((double)x[j] - m);
    for (int64_t j = 0; j < n; j++)
        want[j] = log_form ? ((double)x[j] - m) - log(sum) : exp((double)x[j] - m) / sum;
    return m;
}

static void test_softmax(const bool *has) {
    const int64_t lens[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 255, 256, 257, 300, 1000};
    const int64_t rows = 3;
    oi__attr axis = attr_i("axis", -1);
    float *x = (float *)malloc(rows * 1000 * sizeof(float)), *y = (float *)malloc(rows * 1000 * sizeof(float));
    double *want = (double *)malloc(1000 * sizeof(double));
    CHECK(x && y && want);
    for (size_t i = 0; x && y && want && i < COUNT(isas); i++) {
        if (!has[i] || !oi__gemm_force_isa(isas[i]))
            continue;
        for (size_t l = 0; l < COUNT(lens); l++)
            for (int log_form = 0; log_form < 2; log_form++) {
                int64_t n = lens[l];
                uint32_t seed = (uint32_t)(n * 7 + log_form);
                for (int64_t j = 0; j < rows * n; j++) {
                    seed = seed * 1664525u + 1013904223u;
                    x[j] = (float)(seed >> 8) / 167772.16f - 50.0f; /* [-50, 50) */
                }
                if (n > 3)
                    x[n + 1] = -INFINITY; /* a masked entry in row 1: exactly 0 (log: -inf) */
                oi_op op = log_form ? OI_OP_log_softmax : OI_OP_softmax;
                run_f32(op, &axis, 1, x, y, rows, n);
                for (int64_t r = 0; r < rows; r++) {
                    double m = softmax_ref(x + r * n, want, n, log_form);
                    for (int64_t j = 0; j < n; j++) {
                        /* x - max rounds in f32 (half an ulp of |x - max|, which e^ turns into a
                         * relative error), then a few roundings of ~6e-8 each */
                        double d = fabs((double)x[r * n + j] - m), got = y[r * n + j];
                        double tol = log_form ? 1e-6 * (1.0 + fabs(want[j])) : (1e-6 + 6e-8 * d) * want[j] + 1e-38;
                        bool ok = isinf(d) ? got == want[j] : fabs(got - want[j]) <= tol; /* -inf: 0 or -inf */
                        CHECK_MSG(ok, "%s %s n=%lld row %lld [%lld]: %.9g, want %.9g", oi__gemm_isa_name(isas[i]),
                                  oi_op_name(op), (long long)n, (long long)r, (long long)j, got, want[j]);
                    }
                }
            }
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    free(x);
    free(y);
    free(want);
}

/* ---- layer_norm, rms_norm: their rows have intrinsics paths too ---- */
static void test_norms(const bool *has) {
    const int64_t lens[] = {1, 3, 8, 15, 16, 17, 33, 255, 256, 257, 1000};
    const int64_t rows = 3;
    float *x = (float *)malloc(rows * 1000 * sizeof(float)), *y = (float *)malloc(rows * 1000 * sizeof(float));
    CHECK(x && y);
    for (size_t i = 0; x && y && i < COUNT(isas); i++) {
        if (!has[i] || !oi__gemm_force_isa(isas[i]))
            continue;
        for (size_t l = 0; l < COUNT(lens); l++)
            for (int rms = 0; rms < 2; rms++) {
                int64_t n = lens[l];
                uint32_t seed = (uint32_t)(n * 5 + rms);
                double sc[1000], bi[1000];
                for (int64_t j = 0; j < rows * n; j++) {
                    seed = seed * 1664525u + 1013904223u;
                    x[j] = (float)(seed >> 8) / 1677721.6f + 3.0f; /* [3, 13): a mean to take out */
                }
                for (int64_t j = 0; j < n; j++)
                    sc[j] = 0.5 + 0.01 * (double)j, bi[j] = 0.25 - 0.001 * (double)j;
                oi__tensor *ins[3] = {oi__tensor_new(OI_DTYPE_F32, 2, (const int64_t[]){rows, n}),
                                      tensor_f(OI_DTYPE_F32, 1, &n, sc), tensor_f(OI_DTYPE_F32, 1, &n, bi)};
                oi__tensor *out = oi__tensor_new(OI_DTYPE_F32, 2, (const int64_t[]){rows, n});
                CHECK(ins[0] && ins[1] && ins[2] && out);
                if (ins[0] && ins[1] && ins[2] && out) {
                    memcpy(oi__tensor_data(ins[0]), x, (size_t)(rows * n) * sizeof(float));
                    oi__attr eps = attr_f("epsilon", 1e-5);
                    oi_op op = rms ? OI_OP_rms_norm : OI_OP_layer_norm;
                    CHECK_OK(oi__op_run_cpu(op, &eps, 1, (const oi__tensor *const *)ins, rms ? 2 : 3, out));
                    memcpy(y, oi__tensor_data(out), (size_t)(rows * n) * sizeof(float));
                    for (int64_t r = 0; r < rows; r++) {
                        const float *xr = x + r * n;
                        double mean = 0.0, var = 0.0;
                        for (int64_t j = 0; j < n; j++)
                            mean += rms ? 0.0 : xr[j];
                        mean /= (double)n;
                        for (int64_t j = 0; j < n; j++)
                            var += (xr[j] - mean) * (xr[j] - mean);
                        double inv = 1.0 / sqrt(var / (double)n + 1e-5);
                        for (int64_t j = 0; j < n; j++) {
                            /* (x - mean) rounds in f32: an ulp of |x| (~1e-6 here) times inv */
                            double want = (xr[j] - mean) * inv * sc[j] + (rms ? 0.0 : bi[j]);
                            double tol = 2e-6 * (1.0 + fabs(want)) + 1.2e-6 * fabs(xr[j]) * inv * sc[j];
                            CHECK_MSG(fabs(y[r * n + j] - want) <= tol, "%s %s n=%lld row %lld [%lld]: %.9g, want %.9g",
                                      oi__gemm_isa_name(isas[i]), oi_op_name(op), (long long)n, (long long)r,
                                      (long long)j, (double)y[r * n + j], want);
                        }
                    }
                }
                for (int t = 0; t < 3; t++)
                    oi__tensor_free(ins[t]);
                oi__tensor_free(out);
            }
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    free(x);
    free(y);
}

int main(void) {
    bool has[COUNT(isas)];
    for (size_t i = 0; i < COUNT(isas); i++) {
        has[i] = oi__gemm_force_isa(isas[i]);
        printf("%s: %s\n", oi__gemm_isa_name(isas[i]), has[i] ? "tested" : "not on this CPU");
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    test_exp_edges(has);
    test_exp_based_ops(has);
    test_softmax(has);
    test_norms(has);
    test_exp_sweep(has);
    test_gelu_sweep(has);
    return check_result("test_vexp");
}
