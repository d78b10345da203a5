/* test_nn_ops.c - the math, normalization, rope, attention, top_k and
 * quantized-matmul ops through the executor's seam (oi__op_infer +
 * oi__op_run_cpu). Expected values come from numpy (tests/nn_refs.h,
 * written by tests/gen_nn_refs.py) or are worked out by hand; a few checks
 * compare two code paths of the same op (dense vs strided, one thread vs
 * the pool, one block of queries vs many) on top of that. */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"
#include "check.h"
#include "nn_refs.h"

#include <math.h>

#include "op_test_util.h"
#define MAX_IN 5

static void sig_of(const oi__tensor *t, oi__op_sig *s) {
    memset(s, 0, sizeof *s);
    s->dtype = t->dtype;
    s->ndim = t->ndim;
    memcpy(s->shape, t->shape, sizeof s->shape);
}

/* Infers the output, allocates it and runs the kernel; NULL on failure. */
static oi__tensor *run(oi_op op, const oi__attr *attrs, size_t n_attrs, size_t n, oi__tensor *const *ins) {
    oi__op_sig sigs[MAX_IN], out_sig;
    for (size_t i = 0; i < n; i++)
        sig_of(ins[i], &sigs[i]);
    oi_status s = oi__op_infer(op, attrs, n_attrs, sigs, n, OI_DTYPE_INVALID, &out_sig);
    CHECK_MSG(s == OI_OK, "infer %s: %s", oi_op_name(op), oi_last_error());
    if (s != OI_OK)
        return NULL;
    oi__tensor *out = oi__tensor_new(out_sig.dtype, out_sig.ndim, out_sig.shape);
    s = oi__op_run_cpu(op, attrs, n_attrs, (const oi__tensor *const *)ins, n, out);
    CHECK_MSG(s == OI_OK, "run %s: %s", oi_op_name(op), oi_last_error());
    if (s != OI_OK) {
        oi__tensor_free(out);
        return NULL;
    }
    return out;
}

static oi__tensor *run1(oi_op op, const oi__attr *attrs, size_t n_attrs, oi__tensor *a) {
    oi__tensor *ins[1] = {a};
    return run(op, attrs, n_attrs, 1, ins);
}

/* Validation must refuse these inputs with a message containing `part`. */
static void expect_invalid(oi_op op, const oi__attr *attrs, size_t n_attrs, size_t n, const oi__op_sig *sigs,
                           const char *part) {
    oi__op_sig out;
    CHECK_STATUS(oi__op_infer(op, attrs, n_attrs, sigs, n, OI_DTYPE_INVALID, &out), OI_ERROR_VALIDATION);
    CHECK_STR_CONTAINS(oi_last_error(), part);
}

static oi__op_sig sig(oi_dtype t, int ndim, const int64_t *shape) {
    oi__op_sig s;
    memset(&s, 0, sizeof s);
    s.dtype = t;
    s.ndim = ndim;
    memcpy(s.shape, shape, sizeof(int64_t) * (size_t)ndim);
    return s;
}

/* |got - want| <= atol + rtol * |want| for every element (row-major);
 * NaN matches NaN and an infinity itself. Frees t. */
static void expect_close(const char *what, oi__tensor *t, const double *want, size_t n, double rtol, double atol) {
    CHECK_MSG(t != NULL, "%s: no output", what);
    if (!t)
        return;
    CHECK_MSG((size_t)oi__shape_numel(t->ndim, t->shape) == n, "%s: %lld elements, want %zu", what,
              (long long)oi__shape_numel(t->ndim, t->shape), n);
    oi__tensor *dense = oi__tensor_clone(t);
    int bad = 0;
    for (size_t i = 0; i < n && bad < 5; i++) {
        double got = oi__load_f64(t->dtype, oi__tensor_data(dense), (int64_t)i);
        bool same = (isnan(want[i]) && isnan(got)) || (isinf(want[i]) && got == want[i]) ||
                    fabs(got - want[i]) <= atol + rtol * fabs(want[i]);
        CHECK_MSG(same, "%s[%zu]: got %.9g, want %.9g", what, i, got, want[i]);
        bad += !same;
    }
    oi__tensor_free(dense);
    oi__tensor_free(t);
}

static void expect_ints(const char *what, oi__tensor *t, const int64_t *want, size_t n) {
    CHECK_MSG(t != NULL, "%s: no output", what);
    if (!t)
        return;
    CHECK_EQ_INT(oi__shape_numel(t->ndim, t->shape), n);
    for (size_t i = 0; i < n; i++) {
        int64_t got = oi__load_i64(t->dtype, oi__tensor_data(t), (int64_t)i);
        CHECK_MSG(got == want[i], "%s[%zu]: got %lld, want %lld", what, i, (long long)got, (long long)want[i]);
    }
    oi__tensor_free(t);
}

static void free_all(oi__tensor **ts, size_t n) {
    for (size_t i = 0; i < n; i++)
        oi__tensor_free(ts[i]);
}

/* A view of t with dims reordered: view dim i is t's dim perm[i]. */
static oi__tensor *permuted_view(const oi__tensor *t, const int *perm) {
    oi__tensor *v = oi__tensor_share(t);
    for (int i = 0; i < t->ndim; i++) {
        v->shape[i] = t->shape[perm[i]];
        v->strides[i] = t->strides[perm[i]];
    }
    return v;
}

/* ---- unary math ---- */
typedef struct unary_case {
    oi_op op;
    const char *name;
    bool positive, tanh_form;
    const double *f32, *f16, *bf16;
} unary_case;

static const unary_case unary_cases[] = {
    {OI_OP_exp, "exp", false, false, u_exp, u_exp_h, u_exp_b},
    {OI_OP_erf, "erf", false, false, u_erf, u_erf_h, u_erf_b},
    {OI_OP_tanh, "tanh", false, false, u_tanh, u_tanh_h, u_tanh_b},
    {OI_OP_sigmoid, "sigmoid", false, false, u_sigmoid, u_sigmoid_h, u_sigmoid_b},
    {OI_OP_silu, "silu", false, false, u_silu, u_silu_h, u_silu_b},
    {OI_OP_gelu, "gelu", false, false, u_gelu, u_gelu_h, u_gelu_b},
    {OI_OP_gelu, "gelu_tanh", false, true, u_gelu_tanh, u_gelu_tanh_h, u_gelu_tanh_b},
    {OI_OP_softplus, "softplus", false, false, u_softplus, u_softplus_h, u_softplus_b},
    {OI_OP_log, "log", true, false, u_log, u_log_h, u_log_b},
    {OI_OP_sqrt, "sqrt", true, false, u_sqrt, u_sqrt_h, u_sqrt_b},
    {OI_OP_rsqrt, "rsqrt", true, false, u_rsqrt, u_rsqrt_h, u_rsqrt_b},
};

static void test_unary_refs(void) {
    for (size_t c = 0; c < COUNT(unary_cases); c++) {
        const unary_case *u = &unary_cases[c];
        const double *x = u->positive ? u_p : u_x;
        oi__attr approx = attr_s("approximate", "tanh");
        size_t n_attrs = u->tanh_form ? 1 : 0;
        char what[64];
        struct {
            oi_dtype t;
            const double *want;
            double rtol, atol;
        } runs[] = {
            {OI_DTYPE_F32, u->f32, 2e-6, 1e-7},
            {OI_DTYPE_F64, u->f32, 1e-13, 1e-15},
            {OI_DTYPE_F16, u->f16, 1e-3, 1e-4},
            {OI_DTYPE_BF16, u->bf16, 8e-3, 1e-4},
        };
        for (size_t r = 0; r < COUNT(runs); r++) {
            oi__tensor *in = tensor_f(runs[r].t, SHAPE(41), x);
            snprintf(what, sizeof what, "%s %s", u->name, oi_dtype_name(runs[r].t));
            expect_close(what, run1(u->op, &approx, n_attrs, in), runs[r].want, 41, runs[r].rtol, runs[r].atol);
            oi__tensor_free(in);
        }
    }
}

/* The vectorized f32 loops (blocks of 8 and a tail of 3) over [-20, 20]:
 * within 4 ulp of numpy's float64 result. gelu(tanh) gets more: for
 * x << 0 its value is e^(-2u) with u rounded in f32 first, so |2u| * eps
 * (~3e-6 at x = -5, more below) is the conditioning of the formula. */
static void test_unary_wide_range(void) {
    struct {
        oi_op op;
        const double *want;
        bool tanh_form;
        double rtol;
    } cases[] = {{OI_OP_exp, w_exp, false, 5e-7}, {OI_OP_tanh, w_tanh, false, 5e-7},
                 {OI_OP_sigmoid, w_sigmoid, false, 5e-7}, {OI_OP_silu, w_silu, false, 5e-7},
                 {OI_OP_gelu, w_gelu_tanh, true, 1.5e-5}};
    oi__attr approx = attr_s("approximate", "tanh");
    for (size_t c = 0; c < COUNT(cases); c++) {
        oi__tensor *in = tensor_f(OI_DTYPE_F32, SHAPE(203), w_x);
        expect_close(oi_op_name(cases[c].op), run1(cases[c].op, &approx, cases[c].tanh_form ? 1 : 0, in),
                     cases[c].want, 203, cases[c].rtol, 1e-37);
        oi__tensor_free(in);
    }
}

static double run_scalar(oi_op op, oi_dtype t, double x) {
    oi__tensor *in = tensor_f(t, SHAPE(1), &x);
    oi__tensor *out = run1(op, NULL, 0, in);
    double r = out ? oi__load_f64(t, oi__tensor_data(out), 0) : -12345.0;
    oi__tensor_free(in);
    oi__tensor_free(out);
    return r;
}

/* Limits and special values, worked out by hand. */
static void test_unary_specials(void) {
    const oi_dtype t = OI_DTYPE_F32;
    CHECK(run_scalar(OI_OP_exp, t, 0.0) == 1.0);
    CHECK(run_scalar(OI_OP_exp, t, 1.0) == (double)2.7182817459106445f);
    CHECK(run_scalar(OI_OP_exp, t, INFINITY) == INFINITY);
    CHECK(run_scalar(OI_OP_exp, t, -INFINITY) == 0.0);
    CHECK(isnan(run_scalar(OI_OP_exp, t, NAN)));
    CHECK(run_scalar(OI_OP_exp, t, 89.0) == INFINITY);  /* e^89 > FLT_MAX */
    CHECK(run_scalar(OI_OP_exp, t, -104.0) == 0.0);     /* below half the smallest subnormal */
    CHECK_NEAR(run_scalar(OI_OP_exp, t, 88.7), 3.3259768e38, 3.3259768e38 * 3e-7); /* near FLT_MAX */
    CHECK_NEAR(run_scalar(OI_OP_exp, t, -100.0), 3.783505853677006e-44, 1.5e-45); /* subnormal */
    CHECK(run_scalar(OI_OP_tanh, t, INFINITY) == 1.0);
    CHECK(run_scalar(OI_OP_tanh, t, -INFINITY) == -1.0);
    CHECK(run_scalar(OI_OP_tanh, t, 30.0) == 1.0);
    double neg_zero = run_scalar(OI_OP_tanh, t, -0.0);
    CHECK(neg_zero == 0.0 && signbit(neg_zero));
    /* x - x^3 / 3 for x = f32(0.001) = 0.0010000000474974513, within one f32 ulp (1.2e-10) */
    CHECK_NEAR(run_scalar(OI_OP_tanh, t, 1e-3), 0.0010000000474974513 - 3.3333334e-10, 1.2e-10);
    CHECK(run_scalar(OI_OP_sigmoid, t, -INFINITY) == 0.0);
    CHECK(run_scalar(OI_OP_sigmoid, t, INFINITY) == 1.0);
    CHECK(run_scalar(OI_OP_sigmoid, t, 0.0) == 0.5);
    CHECK(run_scalar(OI_OP_softplus, t, 100.0) == 100.0); /* no overflow */
    CHECK_NEAR(run_scalar(OI_OP_softplus, t, -100.0), 3.783505853677006e-44, 1.5e-45);
    CHECK(run_scalar(OI_OP_log, t, 0.0) == -INFINITY);
    CHECK(isnan(run_scalar(OI_OP_log, t, -1.0)));
    CHECK(isnan(run_scalar(OI_OP_sqrt, t, -1.0)));
    CHECK(run_scalar(OI_OP_rsqrt, t, 0.0) == INFINITY);
    CHECK(run_scalar(OI_OP_rsqrt, t, 0.25) == 2.0);
    CHECK(run_scalar(OI_OP_gelu, t, 0.0) == 0.0);
    CHECK_NEAR(run_scalar(OI_OP_gelu, OI_DTYPE_F64, 1.0), 0.8413447460685429, 1e-15); /* Phi(1) */
    CHECK(run_scalar(OI_OP_erf, OI_DTYPE_F64, INFINITY) == 1.0);
}

/* Largest relative difference of two f32 buffers of n values. */
static double max_rel_diff(const float *a, const float *b, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]) / (fabs((double)b[i]) + 1e-30);
        worst = d > worst ? d : worst;
    }
    return worst;
}

/* A strided view goes through the generic loop, a dense tensor through the
 * vectorized clones: both compute the same f32 formulas, so they agree to
 * an ulp or two (a compiler may contract a*b+c into an FMA in one and not
 * in the other: Clang does, GCC does not). In place too. */
static void test_unary_paths_agree(void) {
    double big[82];
    for (int i = 0; i < 82; i++)
        big[i] = u_x[i % 41] * (i < 41 ? 1.0 : -0.5);
    oi__tensor *base = tensor_f(OI_DTYPE_F32, SHAPE(41, 2), big);
    oi__tensor *col = oi__tensor_share(base); /* column 0: stride 2 */
    col->ndim = 1;
    col->shape[0] = 41;
    col->strides[0] = 2;
    oi__tensor *dense = oi__tensor_new(OI_DTYPE_F32, SHAPE(41));
    for (int i = 0; i < 41; i++)
        ((float *)oi__tensor_data(dense))[i] = ((float *)oi__tensor_data(base))[2 * i];
    const oi_op ops[] = {OI_OP_exp, OI_OP_tanh, OI_OP_sigmoid, OI_OP_silu, OI_OP_softplus};
    for (size_t o = 0; o < COUNT(ops); o++) {
        oi__tensor *a = run1(ops[o], NULL, 0, col), *b = run1(ops[o], NULL, 0, dense);
        CHECK_MSG(a && b && max_rel_diff((float *)oi__tensor_data(a), (float *)oi__tensor_data(b), 41) <= 4e-7,
                  "%s: strided and dense paths differ by %g", oi_op_name(ops[o]),
                  a && b ? max_rel_diff((float *)oi__tensor_data(a), (float *)oi__tensor_data(b), 41) : -1.0);
        /* in place: the output is the input */
        oi__tensor *inplace = oi__tensor_clone(dense);
        const oi__tensor *ins[1] = {inplace};
        CHECK_OK(oi__op_run_cpu(ops[o], NULL, 0, ins, 1, inplace));
        CHECK(b && max_rel_diff((float *)oi__tensor_data(inplace), (float *)oi__tensor_data(b), 41) <= 4e-7);
        oi__tensor_free(inplace);
        oi__tensor_free(a);
        oi__tensor_free(b);
    }
    oi__tensor_free(col);
    oi__tensor_free(dense);
    oi__tensor_free(base);
}

static void test_pow_and_gelu_params(void) {
    for (int wide = 0; wide < 2; wide++) {
        oi_dtype t = wide ? OI_DTYPE_F64 : OI_DTYPE_F32;
        oi__tensor *ins[2] = {tensor_f(t, SHAPE(3, 4), p_a), tensor_f(t, SHAPE(4), p_b)};
        expect_close("pow broadcast", run(OI_OP_pow, NULL, 0, 2, ins), p_out, 12, wide ? 1e-14 : 2e-6, 0);
        oi__tensor_free(ins[1]);
        double e = 2.5;
        ins[1] = tensor_f(t, SHAPE(1), &e);
        expect_close("pow scalar exponent", run(OI_OP_pow, NULL, 0, 2, ins), p_sq, 12, wide ? 1e-14 : 2e-6, 0);
        free_all(ins, 2);
    }
    oi__op_sig s[2] = {sig(OI_DTYPE_F32, SHAPE(3, 4)), sig(OI_DTYPE_F32, SHAPE(3))};
    expect_invalid(OI_OP_pow, NULL, 0, 2, s, "do not broadcast");
    s[1] = sig(OI_DTYPE_F64, SHAPE(4));
    expect_invalid(OI_OP_pow, NULL, 0, 2, s, "dtype");
    oi__attr bad = attr_s("approximate", "fast");
    expect_invalid(OI_OP_gelu, &bad, 1, 1, s, "approximate must be");
    s[0] = sig(OI_DTYPE_I32, SHAPE(3));
    expect_invalid(OI_OP_exp, NULL, 0, 1, s, "unsupported dtype i32");
    s[0] = sig(OI_DTYPE_F8, SHAPE(3));
    expect_invalid(OI_OP_tanh, NULL, 0, 1, s, "unsupported dtype f8");
}

/* ---- softmax ---- */
static void test_softmax(void) {
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(3, 5, 7), s_x);
    oi__attr axis1 = attr_i("axis", 1), axis0 = attr_i("axis", 0);
    expect_close("softmax last", run1(OI_OP_softmax, NULL, 0, x), s_last, 105, 2e-6, 1e-8);
    expect_close("softmax axis 1", run1(OI_OP_softmax, &axis1, 1, x), s_axis1, 105, 2e-6, 1e-8);
    expect_close("log_softmax axis 0", run1(OI_OP_log_softmax, &axis0, 1, x), s_log0, 105, 2e-6, 1e-6);
    oi__tensor *xd = tensor_f(OI_DTYPE_F64, SHAPE(3, 5, 7), s_x);
    expect_close("softmax f64", run1(OI_OP_softmax, NULL, 0, xd), s_last, 105, 1e-13, 1e-16);
    expect_close("softmax f64 axis 1", run1(OI_OP_softmax, &axis1, 1, xd), s_axis1, 105, 1e-13, 1e-16);
    oi__tensor *xh = tensor_f(OI_DTYPE_F16, SHAPE(3, 5, 7), s_x);
    expect_close("softmax f16", run1(OI_OP_softmax, NULL, 0, xh), s_last_h, 105, 1e-3, 1e-6);
    /* a transposed view: lanes gathered through strides */
    int perm[3] = {0, 2, 1};
    oi__tensor *view = permuted_view(x, perm); /* [3, 7, 5]: axis 1 of x is now the last */
    oi__tensor *got = run1(OI_OP_softmax, NULL, 0, view), *want = run1(OI_OP_softmax, &axis1, 1, x);
    if (got && want) {
        oi__tensor *back = permuted_view(got, perm);
        oi__tensor *dense_back = oi__tensor_clone(back);
        for (int i = 0; i < 105; i++)
            CHECK_NEAR(((float *)oi__tensor_data(dense_back))[i], ((float *)oi__tensor_data(want))[i], 1e-7);
        oi__tensor_free(back);
        oi__tensor_free(dense_back);
    }
    oi__tensor_free(got), oi__tensor_free(want), oi__tensor_free(view);

    /* hand-computed rows: -inf takes no share; a row of -inf is NaN */
    const double row[6] = {0.0, -INFINITY, 0.0, -INFINITY, -INFINITY, -INFINITY};
    const double want_row[6] = {0.5, 0.0, 0.5, NAN, NAN, NAN};
    oi__tensor *r = tensor_f(OI_DTYPE_F32, SHAPE(2, 3), row);
    expect_close("softmax -inf", run1(OI_OP_softmax, NULL, 0, r), want_row, 6, 0, 0);
    const double two[2] = {3.0, 3.0}, want_log[2] = {-0.69314718055994531, -0.69314718055994531};
    oi__tensor *t2 = tensor_f(OI_DTYPE_F64, SHAPE(2), two);
    expect_close("log_softmax ties", run1(OI_OP_log_softmax, NULL, 0, t2), want_log, 2, 1e-15, 0);
    oi__tensor_free(t2), oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(xd), oi__tensor_free(xh);

    oi__attr axis3 = attr_i("axis", 3);
    oi__op_sig s = sig(OI_DTYPE_F32, SHAPE(3, 5, 7));
    expect_invalid(OI_OP_softmax, &axis3, 1, 1, &s, "softmax: axis 3 is out of range for rank 3");
    s.ndim = 0;
    expect_invalid(OI_OP_log_softmax, NULL, 0, 1, &s, "out of range for rank 0");
}

/* 64 x 1024 runs over the pool (dense) and 1024 x 64 along axis 0
 * (strided lanes): the same numbers, and every row sums to 1. */
static void test_softmax_large(void) {
    int64_t rows = 64, cols = 1024;
    oi__tensor *x = oi__tensor_new(OI_DTYPE_F32, SHAPE(64, 1024));
    oi__tensor *xt = oi__tensor_new(OI_DTYPE_F32, SHAPE(1024, 64));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) {
            float v = (float)(8.0 * sin(0.37 * (double)(i * cols + j)) + (double)(i % 5));
            ((float *)oi__tensor_data(x))[i * cols + j] = v;
            ((float *)oi__tensor_data(xt))[j * rows + i] = v;
        }
    oi__attr axis0 = attr_i("axis", 0);
    oi__tensor *a = run1(OI_OP_softmax, NULL, 0, x), *b = run1(OI_OP_softmax, &axis0, 1, xt);
    double worst_sum = 0.0, worst_diff = 0.0;
    for (int64_t i = 0; a && b && i < rows; i++) {
        double sum = 0.0;
        for (int64_t j = 0; j < cols; j++) {
            float va = ((float *)oi__tensor_data(a))[i * cols + j], vb = ((float *)oi__tensor_data(b))[j * rows + i];
            sum += va;
            worst_diff = fmax(worst_diff, fabs((double)va - (double)vb));
        }
        worst_sum = fmax(worst_sum, fabs(sum - 1.0));
    }
    CHECK(a && b);
    CHECK_MSG(worst_sum < 1e-5, "row sums off by %g", worst_sum);
    CHECK_MSG(worst_diff == 0.0, "dense and strided lanes differ by %g", worst_diff);
    oi__tensor_free(a), oi__tensor_free(b), oi__tensor_free(x), oi__tensor_free(xt);
}

/* ---- layer_norm, rms_norm, batch_norm, group_norm ---- */
static void test_layer_rms_norm(void) {
    oi__tensor *ins[3] = {tensor_f(OI_DTYPE_F32, SHAPE(2, 3, 8), ln_x), tensor_f(OI_DTYPE_F32, SHAPE(8), ln_scale),
                          tensor_f(OI_DTYPE_F32, SHAPE(8), ln_bias)};
    expect_close("layer_norm", run(OI_OP_layer_norm, NULL, 0, 3, ins), ln_last, 48, 2e-6, 2e-6);
    oi__tensor *two[2] = {ins[0], tensor_f(OI_DTYPE_F32, SHAPE(1, 8), ln_scale2)};
    oi__attr axis1 = attr_i("axis", 1);
    expect_close("layer_norm axis 1, no bias", run(OI_OP_layer_norm, &axis1, 1, 2, two), ln_axis1, 48, 2e-6, 2e-6);
    oi__tensor_free(two[1]);
    free_all(ins, 3);
    for (int t = 0; t < 2; t++) {
        oi_dtype dt = t ? OI_DTYPE_BF16 : OI_DTYPE_F64;
        ins[0] = tensor_f(dt, SHAPE(2, 3, 8), ln_x);
        ins[1] = tensor_f(dt, SHAPE(8), ln_scale);
        ins[2] = tensor_f(dt, SHAPE(8), ln_bias);
        expect_close(t ? "layer_norm bf16" : "layer_norm f64", run(OI_OP_layer_norm, NULL, 0, 3, ins),
                     t ? ln_last_b : ln_last, 48, t ? 8e-3 : 1e-12, t ? 8e-3 : 1e-12);
        free_all(ins, 3);
    }
    oi__attr eps = attr_f("epsilon", 1e-6);
    ins[0] = tensor_f(OI_DTYPE_F32, SHAPE(4, 16), rms_x);
    ins[1] = tensor_f(OI_DTYPE_F32, SHAPE(16), rms_scale);
    expect_close("rms_norm", run(OI_OP_rms_norm, &eps, 1, 2, ins), rms_out, 64, 2e-6, 1e-7);
    free_all(ins, 2);

    oi__op_sig s[3] = {sig(OI_DTYPE_F32, SHAPE(2, 3, 8)), sig(OI_DTYPE_F32, SHAPE(7)), sig(OI_DTYPE_F32, SHAPE(8))};
    expect_invalid(OI_OP_layer_norm, NULL, 0, 3, s, "scale has shape [7], which does not broadcast to the normalized shape [8]");
    oi__attr axis1_only = attr_i("axis", 1);
    s[1] = sig(OI_DTYPE_F32, SHAPE(3, 8));
    s[2] = sig(OI_DTYPE_F32, SHAPE(3));
    expect_invalid(OI_OP_layer_norm, &axis1_only, 1, 3, s,
                   "bias has shape [3], which does not broadcast to the normalized shape [3, 8] (axis 1)");
    oi__attr a5 = attr_i("axis", 5), neg = attr_f("epsilon", -1.0);
    expect_invalid(OI_OP_rms_norm, &a5, 1, 2, s, "axis 5 is out of range");
    expect_invalid(OI_OP_layer_norm, &neg, 1, 2, s, "epsilon must be finite and >= 0");
    s[1] = sig(OI_DTYPE_F64, SHAPE(8));
    expect_invalid(OI_OP_rms_norm, NULL, 0, 2, s, "input 1 has dtype f64");
    oi__op_sig one[1] = {s[0]};
    expect_invalid(OI_OP_rms_norm, NULL, 0, 1, one, "expects 2 inputs");
}

static void test_batch_group_norm(void) {
    oi__tensor *bn[5] = {tensor_f(OI_DTYPE_F32, SHAPE(2, 3, 4, 5), bn_x)};
    for (int i = 0; i < 4; i++)
        bn[i + 1] = tensor_f(OI_DTYPE_F32, SHAPE(3), bn_params + 3 * i);
    expect_close("batch_norm", run(OI_OP_batch_norm, NULL, 0, 5, bn), bn_out, 120, 2e-6, 2e-6);
    free_all(bn, 5);
    bn[0] = tensor_f(OI_DTYPE_F16, SHAPE(2, 3, 4, 5), bn_x);
    for (int i = 0; i < 4; i++)
        bn[i + 1] = tensor_f(OI_DTYPE_F16, SHAPE(3), bn_params + 3 * i);
    oi__tensor *h = run(OI_OP_batch_norm, NULL, 0, 5, bn);
    CHECK(h && h->dtype == OI_DTYPE_F16);
    expect_close("batch_norm f16 (inputs rounded)", h, bn_out, 120, 1e-2, 1e-2);
    free_all(bn, 5);

    oi__attr groups = attr_i("num_groups", 3);
    for (int t = 0; t < 2; t++) {
        oi_dtype dt = t ? OI_DTYPE_F64 : OI_DTYPE_F32;
        oi__tensor *gn[3] = {tensor_f(dt, SHAPE(2, 6, 3, 4), gn_x), tensor_f(dt, SHAPE(6), gn_scale),
                             tensor_f(dt, SHAPE(6), gn_bias)};
        expect_close(t ? "group_norm f64" : "group_norm", run(OI_OP_group_norm, &groups, 1, 3, gn), gn_out, 144,
                     t ? 1e-12 : 2e-6, t ? 1e-12 : 2e-6);
        free_all(gn, 3);
    }
    oi__op_sig s[5] = {sig(OI_DTYPE_F32, SHAPE(2, 6, 3)), sig(OI_DTYPE_F32, SHAPE(6)), sig(OI_DTYPE_F32, SHAPE(6)),
                       sig(OI_DTYPE_F32, SHAPE(6)), sig(OI_DTYPE_F32, SHAPE(5))};
    expect_invalid(OI_OP_batch_norm, NULL, 0, 5, s, "var has shape [5], expected [6]");
    oi__attr four = attr_i("num_groups", 4);
    expect_invalid(OI_OP_group_norm, &four, 1, 3, s, "num_groups 4 must be >= 1 and divide the 6 channels");
    expect_invalid(OI_OP_group_norm, NULL, 0, 3, s, "missing required parameter 'num_groups'");
    s[0] = sig(OI_DTYPE_F32, SHAPE(6));
    expect_invalid(OI_OP_group_norm, &groups, 1, 3, s, "rank >= 2");
}

/* ---- rope ---- */
static void test_rope(void) {
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(1, 2, 5, 8), rp_x);
    oi__tensor *pos = tensor_i(OI_DTYPE_I64, SHAPE(5), rp_pos), *pos32 = tensor_i(OI_DTYPE_I32, SHAPE(5), rp_pos);
    oi__tensor *ins[2] = {x, pos};
    expect_close("rope half-split", run(OI_OP_rope, NULL, 0, 2, ins), rp_half, 80, 1e-6, 1e-6);
    oi__attr inter = attr_b("interleaved", true);
    expect_close("rope interleaved", run(OI_OP_rope, &inter, 1, 2, ins), rp_inter, 80, 1e-6, 1e-6);
    oi__attr partial[2] = {attr_i("rotary_dim", 4), attr_f("theta", 500.0)};
    ins[1] = pos32;
    expect_close("rope rotary_dim 4, i32 positions", run(OI_OP_rope, partial, 2, 2, ins), rp_rot4, 80, 1e-6, 1e-6);
    oi__tensor *xh = tensor_f(OI_DTYPE_F16, SHAPE(1, 2, 5, 8), rp_x);
    ins[0] = xh;
    expect_close("rope f16", run(OI_OP_rope, NULL, 0, 2, ins), rp_half_h, 80, 1e-3, 2e-3);
    oi__tensor *x2 = tensor_f(OI_DTYPE_F32, SHAPE(2, 5, 3, 8), rp_x2), *pos2 = tensor_i(OI_DTYPE_I64, SHAPE(2, 5), rp_pos2);
    oi__attr seq1 = attr_i("seq_axis", 1);
    ins[0] = x2, ins[1] = pos2;
    expect_close("rope [B, S, H, D], per-batch positions", run(OI_OP_rope, &seq1, 1, 2, ins), rp_bshd, 240, 1e-6,
                 1e-6);
    oi__tensor *all[6] = {x, pos, pos32, xh, x2, pos2};
    free_all(all, 6);

    oi__op_sig s[2] = {sig(OI_DTYPE_F32, SHAPE(1, 2, 5, 8)), sig(OI_DTYPE_I64, SHAPE(4))};
    expect_invalid(OI_OP_rope, NULL, 0, 2, s, "positions has shape [4], expected [5]");
    s[1] = sig(OI_DTYPE_F32, SHAPE(5));
    expect_invalid(OI_OP_rope, NULL, 0, 2, s, "positions must be i32 or i64, got f32");
    s[1] = sig(OI_DTYPE_I32, SHAPE(5));
    oi__attr odd = attr_i("rotary_dim", 3), last = attr_i("seq_axis", -1), zero = attr_f("theta", 0.0);
    expect_invalid(OI_OP_rope, &odd, 1, 2, s, "must be even");
    expect_invalid(OI_OP_rope, &last, 1, 2, s, "seq_axis must not be the last axis");
    expect_invalid(OI_OP_rope, &zero, 1, 2, s, "theta must be finite and > 0");
    s[0] = sig(OI_DTYPE_F32, SHAPE(1, 2, 5, 7));
    expect_invalid(OI_OP_rope, NULL, 0, 2, s, "the rotated size 7 must be even");
}

/* ---- attention ---- */
static void test_attention(void) {
    oi__tensor *q = tensor_f(OI_DTYPE_F32, SHAPE(2, 4, 3, 8), at_q), *k = tensor_f(OI_DTYPE_F32, SHAPE(2, 2, 5, 8), at_k);
    oi__tensor *v = tensor_f(OI_DTYPE_F32, SHAPE(2, 2, 5, 6), at_v), *mask = tensor_f(OI_DTYPE_F32, SHAPE(1, 1, 3, 5), at_mask);
    oi__tensor *bmask = tensor_i(OI_DTYPE_BOOL, SHAPE(2, 1, 3, 5), at_bool);
    oi__tensor *ins[4] = {q, k, v, mask};
    oi__attr causal = attr_b("causal", true);
    oi__attr causal_scale[2] = {causal, attr_f("scale", 0.5)};
    oi__tensor *out = run(OI_OP_attention, NULL, 0, 3, ins);
    CHECK(out && out->ndim == 4 && out->shape[3] == 6);
    expect_close("attention", out, at_plain, 144, 2e-6, 2e-6);
    expect_close("attention causal", run(OI_OP_attention, &causal, 1, 3, ins), at_causal, 144, 2e-6, 2e-6);
    expect_close("attention mask + causal + scale", run(OI_OP_attention, causal_scale, 2, 4, ins), at_mask_causal, 144,
                 2e-6, 2e-6);
    ins[3] = bmask;
    expect_close("attention bool mask", run(OI_OP_attention, NULL, 0, 4, ins), at_boolmask, 144, 2e-6, 2e-6);
    /* q as a view of [B, S, H, D] storage: gathered through its strides */
    double qt[192];
    for (int b = 0; b < 2; b++)
        for (int h = 0; h < 4; h++)
            for (int s = 0; s < 3; s++)
                for (int d = 0; d < 8; d++)
                    qt[((b * 3 + s) * 4 + h) * 8 + d] = at_q[((b * 4 + h) * 3 + s) * 8 + d];
    oi__tensor *q_bshd = tensor_f(OI_DTYPE_F32, SHAPE(2, 3, 4, 8), qt);
    int perm[4] = {0, 2, 1, 3};
    oi__tensor *q_view = permuted_view(q_bshd, perm);
    ins[0] = q_view;
    expect_close("attention strided q", run(OI_OP_attention, &causal, 1, 3, ins), at_causal, 144, 2e-6, 2e-6);
    oi__tensor *all[7] = {q, k, v, mask, bmask, q_bshd, q_view};
    free_all(all, 7);

    for (int t = 0; t < 2; t++) {
        oi_dtype dt = t ? OI_DTYPE_F16 : OI_DTYPE_F64;
        oi__tensor *h[3] = {tensor_f(dt, SHAPE(2, 4, 3, 8), at_q), tensor_f(dt, SHAPE(2, 2, 5, 8), at_k),
                            tensor_f(dt, SHAPE(2, 2, 5, 6), at_v)};
        if (t)
            expect_close("attention f16", run(OI_OP_attention, NULL, 0, 3, h), at_plain_h, 144, 2e-3, 2e-3);
        else
            expect_close("attention f64 causal", run(OI_OP_attention, &causal, 1, 3, h), at_causal, 144, 1e-12, 1e-12);
        free_all(h, 3);
    }

    /* S > T under causal: query 0 sees no key (NaN, like numpy) */
    oi__tensor *q1 = tensor_f(OI_DTYPE_F32, SHAPE(1, 1, 3, 8), at_q), *k1 = tensor_f(OI_DTYPE_F32, SHAPE(1, 1, 2, 8), at_k);
    oi__tensor *v1 = tensor_f(OI_DTYPE_F32, SHAPE(1, 1, 2, 6), at_v);
    oi__tensor *small[3] = {q1, k1, v1};
    oi__tensor *o = run(OI_OP_attention, &causal, 1, 3, small);
    if (o) {
        const float *f = (const float *)oi__tensor_data(o);
        CHECK(isnan(f[0]) && isnan(f[5]));
        CHECK_NEAR(f[6], at_v[0], 1e-6); /* query 1 sees key 0 only */
        CHECK(!isnan(f[12]));
    }
    oi__tensor_free(o);
    free_all(small, 3);

    oi__op_sig s[4] = {sig(OI_DTYPE_F32, SHAPE(2, 4, 3, 8)), sig(OI_DTYPE_F32, SHAPE(2, 3, 5, 8)),
                       sig(OI_DTYPE_F32, SHAPE(2, 3, 5, 6)), sig(OI_DTYPE_F32, SHAPE(3, 5))};
    expect_invalid(OI_OP_attention, NULL, 0, 3, s, "q has 4 heads, k 3 and v 3");
    s[1] = sig(OI_DTYPE_F32, SHAPE(2, 2, 5, 4));
    s[2] = sig(OI_DTYPE_F32, SHAPE(2, 2, 5, 6));
    expect_invalid(OI_OP_attention, NULL, 0, 3, s, "q and k head sizes differ (8 vs 4)");
    s[1] = sig(OI_DTYPE_F32, SHAPE(2, 2, 5, 8));
    s[3] = sig(OI_DTYPE_F32, SHAPE(3, 4));
    expect_invalid(OI_OP_attention, NULL, 0, 4, s, "mask has shape [3, 4], which does not broadcast to the scores [2, 4, 3, 5]");
    s[3] = sig(OI_DTYPE_I32, SHAPE(3, 5));
    expect_invalid(OI_OP_attention, NULL, 0, 4, s, "mask must be f32 (added) or bool");
    s[2] = sig(OI_DTYPE_F16, SHAPE(2, 2, 5, 6));
    expect_invalid(OI_OP_attention, NULL, 0, 3, s, "v is f16 but q is f32");
    s[2] = sig(OI_DTYPE_F32, SHAPE(2, 2, 4, 6));
    expect_invalid(OI_OP_attention, NULL, 0, 3, s, "k has 5 positions but v has 4");
    s[0] = sig(OI_DTYPE_F32, SHAPE(4, 3, 8));
    expect_invalid(OI_OP_attention, NULL, 0, 3, s, "q has shape [4, 3, 8], expected rank 4");
}

/* A causal prefill of 100 queries (two query blocks, run over the pool)
 * equals decoding query i alone against the first i + 1 keys (T - S
 * offset), as a KV-cache loop would. */
static void test_attention_prefill_matches_decode(void) {
    const int64_t heads = 2, kv_heads = 1, seq = 100, dim = 16;
    oi__tensor *q = oi__tensor_new(OI_DTYPE_F32, SHAPE(1, 2, 100, 16));
    oi__tensor *k = oi__tensor_new(OI_DTYPE_F32, SHAPE(1, 1, 100, 16)), *v = oi__tensor_new(OI_DTYPE_F32, SHAPE(1, 1, 100, 16));
    for (int64_t i = 0; i < heads * seq * dim; i++)
        ((float *)oi__tensor_data(q))[i] = (float)sin(0.1 * (double)i);
    for (int64_t i = 0; i < kv_heads * seq * dim; i++) {
        ((float *)oi__tensor_data(k))[i] = (float)cos(0.07 * (double)i);
        ((float *)oi__tensor_data(v))[i] = (float)sin(0.05 * (double)i + 1.0);
    }
    oi__attr causal = attr_b("causal", true);
    oi__tensor *full_in[3] = {q, k, v};
    oi__tensor *full = run(OI_OP_attention, &causal, 1, 3, full_in);
    double worst = 0.0;
    for (int64_t i = 0; full && i < seq; i += 7) {
        oi__tensor *qi = oi__tensor_share(q), *ki = oi__tensor_share(k), *vi = oi__tensor_share(v);
        qi->shape[2] = 1;
        qi->offset = i * dim;
        ki->shape[2] = vi->shape[2] = i + 1;
        oi__tensor *step_in[3] = {qi, ki, vi};
        oi__tensor *step = run(OI_OP_attention, &causal, 1, 3, step_in);
        for (int64_t h = 0; step && h < heads; h++)
            for (int64_t d = 0; d < dim; d++) {
                double a = ((float *)oi__tensor_data(step))[h * dim + d];
                double b = ((float *)oi__tensor_data(full))[(h * seq + i) * dim + d];
                worst = fmax(worst, fabs(a - b));
            }
        oi__tensor_free(step), oi__tensor_free(qi), oi__tensor_free(ki), oi__tensor_free(vi);
    }
    CHECK_MSG(full && worst < 1e-5, "prefill vs decode differ by %g", worst);
    oi__tensor_free(full), oi__tensor_free(q), oi__tensor_free(k), oi__tensor_free(v);
}

/* Encoder-shaped attention (more than one query row, f32) on every ISA
 * path the CPU has: the direct path of nn.c (oi__attn_f32) on AVX2 and
 * AVX-512, the gemm path on the portable one, against plain double loops
 * here. The shapes cover tails of every tile (query rows, keys, head
 * sizes), grouped heads, more than 256 keys, f32 and bool masks (padding
 * keys, a row or batch with no key: NaN, a mask strided along the keys),
 * causal with T != S, and q, k, v read as views of [B, S, H, D] rows. */
typedef struct attn_case {
    const char *name;
    int64_t b, hq, hkv, s, t, d, dv;
    int mask; /* 0 none; 1 f32 [1, 1, S, T], -inf in places; 2 bool [B, 1, 1, T], padding; 3 bool [B, 1, S, T]
                 with keys strided; 4 f32 [1, 1, 1, T], finite */
    bool causal, views;
    double scale; /* 0: the default 1 / sqrt(d) */
} attn_case;

static double attn_value(int64_t i, double seed) { return sin(0.37 * (double)i + seed) * cos(0.011 * (double)i); }

/* The mask's keep / add at (b, i, j), as attn_case.mask says. */
static double attn_mask_at(const attn_case *c, int64_t b, int64_t i, int64_t j) {
    switch (c->mask) {
    case 1: return i == 5 || (i + j) % 7 == 3 ? -INFINITY : 0.25 * (double)((i * 3 + j) % 5) - 0.5;
    case 2: return j < (b == 0 ? c->t : b == 1 ? c->t / 2 - 3 : 0) ? 0.0 : -INFINITY;
    case 3: return (j * 5 + i) % 4 == 1 ? -INFINITY : 0.0;
    case 4: return 0.1 * (double)(j % 9) - 0.4;
    default: return 0.0;
    }
}

/* A [B, H, N, D] input: dense, or (views) a [B, N, H, D] tensor seen
 * through a permutation; its values attn_value(index in [B, H, N, D]). */
static oi__tensor *attn_input(const attn_case *c, int64_t heads, int64_t n, int64_t d, double seed, double *ref) {
    int64_t count = c->b * heads * n * d;
    for (int64_t i = 0; i < count; i++)
        ref[i] = (double)(float)attn_value(i, seed);
    if (!c->views)
        return tensor_f(OI_DTYPE_F32, SHAPE(c->b, heads, n, d), ref);
    double *rows = (double *)malloc(sizeof(double) * (size_t)count);
    for (int64_t b = 0; b < c->b; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t i = 0; i < n; i++)
                for (int64_t k = 0; k < d; k++)
                    rows[((b * n + i) * heads + h) * d + k] = ref[((b * heads + h) * n + i) * d + k];
    oi__tensor *dense = tensor_f(OI_DTYPE_F32, SHAPE(c->b, n, heads, d), rows);
    free(rows);
    int perm[4] = {0, 2, 1, 3};
    oi__tensor *view = permuted_view(dense, perm);
    oi__tensor_free(dense);
    return view;
}

static oi__tensor *attn_mask_tensor(const attn_case *c) {
    int64_t rows = c->mask == 2 ? 1 : c->s, batches = c->mask == 1 || c->mask == 4 ? 1 : c->b;
    if (c->mask == 4)
        rows = 1;
    double *m = (double *)malloc(sizeof(double) * (size_t)(batches * rows * c->t));
    for (int64_t b = 0; b < batches; b++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < c->t; j++) {
                double v = attn_mask_at(c, b, i, j);
                if (c->mask == 3) /* stored [B, 1, T, S] */
                    m[(b * c->t + j) * c->s + i] = v == 0.0;
                else
                    m[(b * rows + i) * c->t + j] = c->mask == 2 ? v == 0.0 : v;
            }
    oi__tensor *t;
    if (c->mask == 3) {
        int64_t *bits = (int64_t *)malloc(sizeof(int64_t) * (size_t)(c->b * c->t * c->s));
        for (int64_t i = 0; i < c->b * c->t * c->s; i++)
            bits[i] = m[i] != 0.0;
        oi__tensor *stored = tensor_i(OI_DTYPE_BOOL, SHAPE(c->b, 1, c->t, c->s), bits);
        free(bits);
        int perm[4] = {0, 1, 3, 2};
        t = permuted_view(stored, perm);
        oi__tensor_free(stored);
    } else if (c->mask == 2) {
        int64_t *bits = (int64_t *)malloc(sizeof(int64_t) * (size_t)(c->b * c->t));
        for (int64_t i = 0; i < c->b * c->t; i++)
            bits[i] = m[i] != 0.0;
        t = tensor_i(OI_DTYPE_BOOL, SHAPE(c->b, 1, 1, c->t), bits);
        free(bits);
    } else {
        t = tensor_f(OI_DTYPE_F32, SHAPE(1, 1, rows, c->t), m);
    }
    free(m);
    return t;
}

/* out[b, h, i, :] in double: softmax of scale q.k + mask (causal: the keys
 * after i + T - S dropped) over the keys, times V; NaN where no key is seen. */
static void attn_reference(const attn_case *c, const double *q, const double *k, const double *v, double *out) {
    double scale = c->scale != 0.0 ? c->scale : 1.0 / sqrt((double)c->d);
    double *w = (double *)malloc(sizeof(double) * (size_t)c->t);
    for (int64_t b = 0; b < c->b; b++)
        for (int64_t h = 0; h < c->hq; h++)
            for (int64_t i = 0; i < c->s; i++) {
                int64_t hk = h / (c->hq / c->hkv);
                double top = -INFINITY, sum = 0.0;
                for (int64_t j = 0; j < c->t; j++) {
                    double dot = 0.0;
                    for (int64_t e = 0; e < c->d; e++)
                        dot += q[((b * c->hq + h) * c->s + i) * c->d + e] * k[((b * c->hkv + hk) * c->t + j) * c->d + e];
                    w[j] = scale * (double)(float)dot + attn_mask_at(c, b, i, j);
                    if (c->causal && j > i + c->t - c->s)
                        w[j] = -INFINITY;
                    top = w[j] > top ? w[j] : top;
                }
                for (int64_t j = 0; j < c->t; j++)
                    sum += w[j] = exp(w[j] - top);
                for (int64_t e = 0; e < c->dv; e++) {
                    double acc = 0.0;
                    for (int64_t j = 0; j < c->t; j++)
                        acc += w[j] / sum * v[((b * c->hkv + hk) * c->t + j) * c->dv + e];
                    out[((b * c->hq + h) * c->s + i) * c->dv + e] = top == -INFINITY ? NAN : acc;
                }
            }
    free(w);
}

static void test_attention_encoder_paths(void) {
    static const attn_case cases[] = {
        {"f32 mask, grouped, tails", 2, 4, 2, 13, 37, 16, 24, 1, false, false, 0.3},
        {"bool padding", 3, 2, 2, 40, 40, 32, 32, 2, false, false, 0.0},
        {"causal T > S", 1, 2, 2, 50, 70, 8, 8, 0, true, false, 0.0},
        {"causal T < S, strided bool mask", 1, 1, 1, 20, 10, 8, 40, 3, true, false, 0.0},
        {"300 keys, views", 1, 3, 3, 9, 300, 24, 16, 4, false, true, 0.0},
        {"minilm-like", 2, 12, 12, 64, 64, 32, 32, 2, false, true, 0.0},
    };
    const oi__gemm_isa isas[3] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ci = 0; ci < COUNT(cases); ci++) {
        const attn_case *c = &cases[ci];
        int64_t nq = c->b * c->hq * c->s * c->d, nk = c->b * c->hkv * c->t * c->d, nv = c->b * c->hkv * c->t * c->dv;
        int64_t no = c->b * c->hq * c->s * c->dv;
        double *q = (double *)malloc(sizeof(double) * (size_t)nq), *k = (double *)malloc(sizeof(double) * (size_t)nk);
        double *v = (double *)malloc(sizeof(double) * (size_t)nv), *want = (double *)malloc(sizeof(double) * (size_t)no);
        oi__tensor *ins[4] = {attn_input(c, c->hq, c->s, c->d, 0.1, q), attn_input(c, c->hkv, c->t, c->d, 0.7, k),
                              attn_input(c, c->hkv, c->t, c->dv, 1.3, v), c->mask ? attn_mask_tensor(c) : NULL};
        attn_reference(c, q, k, v, want);
        oi__attr attrs[2] = {attr_b("causal", c->causal), attr_f("scale", c->scale)};
        for (int p = 0; p < 3; p++) {
            if (!oi__gemm_force_isa(isas[p]))
                continue;
            char what[96];
            snprintf(what, sizeof what, "attention %s (%s)", c->name, oi__gemm_isa_name(isas[p]));
            expect_close(what, run(OI_OP_attention, attrs, c->scale != 0.0 ? 2 : 1, c->mask ? 4 : 3, ins), want,
                         (size_t)no, 1e-5, 1e-5);
        }
        oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
        free_all(ins, 4);
        free(q), free(k), free(v), free(want);
    }
}

/* ---- top_k ---- */
static void test_top_k(void) {
    oi__attr four[1] = {attr_i("k", 4)};
    oi__attr two_smallest[3] = {attr_i("k", 2), attr_i("axis", 0), attr_b("largest", false)};
    for (int t = 0; t < 2; t++) {
        oi__tensor *x = tensor_f(t ? OI_DTYPE_I32 : OI_DTYPE_F32, SHAPE(3, 10), tk_x);
        oi__tensor *vals = run1(OI_OP_top_k, four, 1, x);
        CHECK(vals && vals->dtype == x->dtype && vals->shape[1] == 4);
        expect_close("top_k values", vals, tk_val, 12, 0, 0);
        oi__tensor *idx = run1(OI_OP_top_k_indices, four, 1, x);
        CHECK(idx && idx->dtype == OI_DTYPE_I64);
        expect_ints("top_k indices", idx, tk_idx, 12);
        expect_close("top_k smallest, axis 0", run1(OI_OP_top_k, two_smallest, 3, x), tk_val0, 20, 0, 0);
        expect_ints("top_k smallest indices", run1(OI_OP_top_k_indices, two_smallest, 3, x), tk_idx0, 20);
        oi__tensor_free(x);
    }
    /* NaN ranks above +inf; -0 ties +0 (the lower index first) */
    const double xs[6] = {1.0, NAN, 3.0, -INFINITY, -0.0, 0.0};
    oi__tensor *x = tensor_f(OI_DTYPE_F64, SHAPE(6), xs);
    oi__attr k3[1] = {attr_i("k", 3)}, small[2] = {attr_i("k", 3), attr_b("largest", false)};
    const int64_t want_big[3] = {1, 2, 0}, want_small[3] = {3, 4, 5};
    expect_ints("top_k NaN first", run1(OI_OP_top_k_indices, k3, 1, x), want_big, 3);
    expect_ints("top_k smallest: NaN last", run1(OI_OP_top_k_indices, small, 2, x), want_small, 3);
    oi__attr k0[1] = {attr_i("k", 0)};
    oi__tensor *empty = run1(OI_OP_top_k, k0, 1, x);
    CHECK(empty && empty->shape[0] == 0);
    oi__tensor_free(empty), oi__tensor_free(x);

    oi__op_sig s = sig(OI_DTYPE_F32, SHAPE(3, 10));
    oi__attr k11[1] = {attr_i("k", 11)}, bad_axis[2] = {attr_i("k", 1), attr_i("axis", 2)};
    expect_invalid(OI_OP_top_k, k11, 1, 1, &s, "k = 11 is outside [0, 10]");
    expect_invalid(OI_OP_top_k_indices, bad_axis, 2, 1, &s, "axis 2 is out of range for rank 2");
    expect_invalid(OI_OP_top_k, NULL, 0, 1, &s, "missing required parameter 'k'");
}

/* ---- quantized matmul ---- */
static void test_matmul_q8(void) {
    double wt[960];
    for (int n = 0; n < 24; n++)
        for (int kk = 0; kk < 40; kk++)
            wt[kk * 24 + n] = (double)q8_w[n * 40 + kk];
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(2, 3, 40), q8_x), *x2 = tensor_f(OI_DTYPE_F32, SHAPE(2, 40), q8_x);
    oi__tensor *w = tensor_i(OI_DTYPE_I8, SHAPE(24, 40), q8_w), *w_kn = tensor_f(OI_DTYPE_I8, SHAPE(40, 24), wt);
    oi__tensor *scale = tensor_f(OI_DTYPE_F32, SHAPE(24), q8_scale), *xh = tensor_f(OI_DTYPE_F16, SHAPE(2, 3, 40), q8_x);
    oi__tensor *ins[3] = {x, w, scale};
    oi__tensor *out = run(OI_OP_matmul_q8, NULL, 0, 3, ins);
    CHECK(out && out->ndim == 3 && out->shape[2] == 24);
    expect_close("matmul_q8 (M = 6: dequantized chunks + gemm)", out, q8_out, 144, 1e-5, 1e-5);
    ins[0] = x2;
    expect_close("matmul_q8 (M = 2: dot products)", run(OI_OP_matmul_q8, NULL, 0, 3, ins), q8_out, 48, 1e-5, 1e-5);
    oi__attr kn = attr_s("layout", "kn");
    ins[0] = x, ins[1] = w_kn;
    expect_close("matmul_q8 layout kn", run(OI_OP_matmul_q8, &kn, 1, 3, ins), q8_out, 144, 1e-5, 1e-5);
    ins[0] = xh, ins[1] = w;
    oi__tensor *h = run(OI_OP_matmul_q8, NULL, 0, 3, ins);
    CHECK(h && h->dtype == OI_DTYPE_F16);
    expect_close("matmul_q8 f16 x", h, q8_out_h, 144, 2e-3, 2e-3);
    oi__tensor *all[6] = {x, x2, w, w_kn, scale, xh};
    free_all(all, 6);

    oi__op_sig s[3] = {sig(OI_DTYPE_F32, SHAPE(6, 40)), sig(OI_DTYPE_U8, SHAPE(24, 40)), sig(OI_DTYPE_F32, SHAPE(24))};
    expect_invalid(OI_OP_matmul_q8, NULL, 0, 3, s, "w is u8 [24, 40] but x has K = 40 (want i8 [N, K])");
    s[1] = sig(OI_DTYPE_I8, SHAPE(24, 41));
    expect_invalid(OI_OP_matmul_q8, NULL, 0, 3, s, "w is i8 [24, 41] but x has K = 40");
    s[1] = sig(OI_DTYPE_I8, SHAPE(24, 40));
    s[2] = sig(OI_DTYPE_F32, SHAPE(23));
    expect_invalid(OI_OP_matmul_q8, NULL, 0, 3, s, "scale is f32 [23] (want a float [24]");
    s[2] = sig(OI_DTYPE_F32, SHAPE(24));
    oi__attr bad = attr_s("layout", "nm");
    expect_invalid(OI_OP_matmul_q8, &bad, 1, 3, s, "layout must be \"nk\" or \"kn\"");
    s[0] = sig(OI_DTYPE_F64, SHAPE(6, 40));
    expect_invalid(OI_OP_matmul_q8, NULL, 0, 3, s, "unsupported dtype f64");
}

static void test_matmul_q4(void) {
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(6, 96), q4_x), *x1 = tensor_f(OI_DTYPE_F32, SHAPE(1, 96), q4_x);
    struct {
        const char *format;
        const int64_t *w;
        int64_t row_bytes;
        const double *want;
        const double *want_a8, *bound;
    } cases[] = {{"q4_0", q4_0_w, 54, q4_0_out, q4_0_out_a8, q4_0_a8_bound},
                 {"q4_1", q4_1_w, 60, q4_1_out, q4_1_out_a8, q4_1_a8_bound},
                 {"q8_0", q8_0_w, 102, q8_0_out, q8_0_out_a8, q8_0_a8_bound}};
    for (size_t c = 0; c < COUNT(cases); c++) {
        oi__tensor *w = tensor_i(OI_DTYPE_U8, 2, (const int64_t[]){20, cases[c].row_bytes}, cases[c].w);
        oi__attr fmt = attr_s("format", cases[c].format);
        oi__tensor *ins[2] = {x, w};
        char what[64];
        snprintf(what, sizeof what, "matmul_q4 %s (M = 6)", cases[c].format);
        expect_close(what, run(OI_OP_matmul_q4, &fmt, 1, 2, ins), cases[c].want, 120, 1e-5, 1e-5);
        ins[0] = x1;
        snprintf(what, sizeof what, "matmul_q4 %s (M = 1)", cases[c].format);
        expect_close(what, run(OI_OP_matmul_q4, &fmt, 1, 2, ins), cases[c].want, 20, 1e-5, 1e-5);
        /* activations="q8": numpy's rounding of x and exact integer sums; within the documented
         * bound (max|x_b| / 254) sum|w_b| of the f32 result */
        oi__attr a8[2] = {fmt, attr_s("activations", "q8")};
        for (int rows = 6; rows >= 1; rows -= 5) {
            ins[0] = rows == 6 ? x : x1;
            oi__tensor *y = run(OI_OP_matmul_q4, a8, 2, 2, ins);
            snprintf(what, sizeof what, "matmul_q4 %s activations q8 (M = %d)", cases[c].format, rows);
            expect_close(what, oi__tensor_share(y), cases[c].want_a8, (size_t)rows * 20, 1e-5, 1e-5);
            for (int e = 0; y && e < rows * 20; e++)
                CHECK_MSG(fabs(((float *)oi__tensor_data(y))[e] - cases[c].want[e]) <= cases[c].bound[e] + 1e-5,
                          "%s[%d]: %.7g is further than %.3g from the f32 result %.7g", what, e,
                          ((float *)oi__tensor_data(y))[e], cases[c].bound[e], cases[c].want[e]);
            oi__tensor_free(y);
        }
        oi__tensor_free(w);
    }
    oi__tensor_free(x), oi__tensor_free(x1);

    oi__op_sig s[2] = {sig(OI_DTYPE_F32, SHAPE(6, 40)), sig(OI_DTYPE_U8, SHAPE(20, 18))};
    expect_invalid(OI_OP_matmul_q4, NULL, 0, 2, s, "K = 40 is not a multiple of the block size 32");
    s[0] = sig(OI_DTYPE_F32, SHAPE(6, 96));
    expect_invalid(OI_OP_matmul_q4, NULL, 0, 2, s, "needs u8 [N, 54] (3 blocks of 18 bytes)");
    oi__attr q41 = attr_s("format", "q4_1"), q80 = attr_s("format", "q8_0"), bad = attr_s("format", "q5_0");
    expect_invalid(OI_OP_matmul_q4, &q41, 1, 2, s, "needs u8 [N, 60] (3 blocks of 20 bytes)");
    expect_invalid(OI_OP_matmul_q4, &q80, 1, 2, s, "in q8_0 needs u8 [N, 102] (3 blocks of 34 bytes)");
    expect_invalid(OI_OP_matmul_q4, &bad, 1, 2, s, "format must be \"q4_0\", \"q4_1\" or \"q8_0\"");
    oi__attr bad_act = attr_s("activations", "q4");
    s[1] = sig(OI_DTYPE_U8, SHAPE(20, 54));
    expect_invalid(OI_OP_matmul_q4, &bad_act, 1, 2, s, "activations must be \"f32\" or \"q8\"");
}

/* dequantize: the weights of test_matmul_q4 as f32 rows (numpy's values,
 * exact: one f32 product per element, then q4_1's m), as [20, bytes] and
 * as [2, 10, bytes]; a last dim that is not whole blocks is refused. */
static void test_dequantize(void) {
    struct {
        const char *format;
        const int64_t *w;
        int64_t row_bytes;
        const double *want;
    } cases[] = {{"q4_0", q4_0_w, 54, q4_0_deq}, {"q4_1", q4_1_w, 60, q4_1_deq}, {"q8_0", q8_0_w, 102, q8_0_deq}};
    for (size_t c = 0; c < COUNT(cases); c++) {
        oi__attr fmt = attr_s("format", cases[c].format);
        oi__tensor *w = tensor_i(OI_DTYPE_U8, 2, (const int64_t[]){20, cases[c].row_bytes}, cases[c].w);
        oi__tensor *w3 = tensor_i(OI_DTYPE_U8, 3, (const int64_t[]){2, 10, cases[c].row_bytes}, cases[c].w);
        char what[64];
        snprintf(what, sizeof what, "dequantize %s [20, %lld]", cases[c].format, (long long)cases[c].row_bytes);
        oi__tensor *y = run(OI_OP_dequantize, &fmt, 1, 1, &w);
        CHECK(y && y->dtype == OI_DTYPE_F32 && y->ndim == 2 && y->shape[1] == 96);
        expect_close(what, y, cases[c].want, 20 * 96, 0.0, 0.0);
        snprintf(what, sizeof what, "dequantize %s [2, 10, %lld]", cases[c].format, (long long)cases[c].row_bytes);
        y = run(OI_OP_dequantize, &fmt, 1, 1, &w3);
        CHECK(y && y->ndim == 3 && y->shape[0] == 2 && y->shape[1] == 10 && y->shape[2] == 96);
        expect_close(what, y, cases[c].want, 20 * 96, 0.0, 0.0);
        oi__tensor_free(w), oi__tensor_free(w3);
    }
    oi__op_sig s[1] = {sig(OI_DTYPE_U8, SHAPE(20, 53))};
    oi__attr q40 = attr_s("format", "q4_0"), q80 = attr_s("format", "q8_0");
    expect_invalid(OI_OP_dequantize, &q40, 1, 1, s, "q4_0 rows need a last dim that is a multiple of 18");
    s[0] = sig(OI_DTYPE_U8, SHAPE(20, 54));
    expect_invalid(OI_OP_dequantize, &q80, 1, 1, s, "w is u8 [20, 54]; q8_0 rows need a last dim that is a multiple of 34");
    expect_invalid(OI_OP_dequantize, NULL, 0, 1, s, "format");
    s[0] = sig(OI_DTYPE_I8, SHAPE(20, 54));
    expect_invalid(OI_OP_dequantize, &q40, 1, 1, s, "unsupported dtype i8");
}

/* q4_0 scales at the edges of f16, hand-computed with x = 1: subnormal
 * 2^-24 (nibbles 9: +1 each), 65504 (one nibble 9, the rest 8: 0) and
 * -1.0 (nibbles 0: -8 each, times -1). */
static void test_q4_scales(void) {
    const uint16_t d[3] = {0x0001, 0x7BFF, 0xBC00};
    const uint8_t nibbles[3] = {0x99, 0x88, 0x00};
    int64_t w[54];
    for (int b = 0; b < 3; b++) {
        w[b * 18] = d[b] & 0xFF;
        w[b * 18 + 1] = d[b] >> 8;
        for (int j = 0; j < 16; j++)
            w[b * 18 + 2 + j] = nibbles[b];
    }
    w[18 + 2] = 0x89; /* block 1: element 0 is 9, the rest 8 */
    double ones[96];
    for (int i = 0; i < 96; i++)
        ones[i] = i < 32 ? 1.0 : 0.0;
    oi__tensor *wt = tensor_i(OI_DTYPE_U8, SHAPE(1, 54), w);
    double want[3] = {32.0 * 5.9604644775390625e-8, 65504.0, 256.0};
    for (int b = 0; b < 3; b++) {
        double xb[96] = {0};
        memcpy(xb + 32 * b, ones, 32 * sizeof(double));
        oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(1, 96), xb);
        oi__tensor *ins[2] = {x, wt};
        expect_close("matmul_q4 f16 scale edge", run(OI_OP_matmul_q4, NULL, 0, 2, ins), &want[b], 1, 0, 0);
        oi__tensor_free(x);
    }
    oi__tensor_free(wt);
}

/* activations="q8" on every ISA path the CPU has (AVX2, AVX-512 with and
 * without VNNI): bit-identical to the portable path, for each format, with
 * block counts that leave a tail of the 4-block loop and cross the 64-block
 * chunks, weights at the edges (nibbles 0 and 15, bytes -128 and 127) and
 * a NaN row of x. */
static void test_q4_a8_isa_paths(void) {
    const char *formats[3] = {"q4_0", "q4_1", "q8_0"};
    const int64_t block_bytes[3] = {18, 20, 34}, ks[3] = {32 * 9, 32 * 71, 32 * 18}, n = 37, m = 3;
    for (int f = 0; f < 3; f++)
        for (int kc = 0; kc < 3; kc++) {
            int64_t kdim = ks[kc], row_bytes = kdim / 32 * block_bytes[f];
            oi__tensor *w = oi__tensor_new(OI_DTYPE_U8, SHAPE(n, row_bytes)), *x = oi__tensor_new(OI_DTYPE_F32, SHAPE(m, kdim));
            uint8_t *wb = (uint8_t *)oi__tensor_data(w);
            for (int64_t i = 0; i < n * row_bytes; i++)
                wb[i] = (uint8_t)((i * 2654435761u) >> 13);
            for (int64_t r = 0; r < n; r++)
                for (int64_t b = 0; b < kdim / 32; b++) {
                    uint8_t *blk = wb + r * row_bytes + b * block_bytes[f];
                    blk[0] = 0x00, blk[1] = 0x1C | (uint8_t)(b & 1 ? 0x80 : 0); /* d = +-2^-8 */
                    if (f == 1)
                        blk[2] = 0x00, blk[3] = 0xB0; /* m = -0.125 */
                    if (r == 0)
                        memset(blk + block_bytes[f] - (f == 2 ? 32 : 16), b & 1 ? 0x80 : 0xFF, f == 2 ? 32 : 16);
                }
            float *xf = (float *)oi__tensor_data(x);
            for (int64_t i = 0; i < m * kdim; i++)
                xf[i] = (float)(sin(0.37 * (double)i) * (1.0 + (double)(i % 97)));
            xf[2 * kdim + 40] = NAN;
            oi__attr a8[2] = {attr_s("format", formats[f]), attr_s("activations", "q8")};
            oi__tensor *ins[2] = {x, w};
            CHECK(oi__gemm_force_isa(OI__GEMM_ISA_PORTABLE));
            oi__tensor *ref = run(OI_OP_matmul_q4, a8, 2, 2, ins);
            CHECK(ref && isnan(((float *)oi__tensor_data(ref))[2 * n]) && !isnan(((float *)oi__tensor_data(ref))[n]));
            const oi__gemm_isa isas[3] = {OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512, OI__GEMM_ISA_AVX512};
            for (int p = 0; p < 3 && ref; p++) {
                if (!oi__gemm_force_isa(isas[p]))
                    continue;
                oi__quant_allow_vnni(p != 2);
                oi__tensor *y = run(OI_OP_matmul_q4, a8, 2, 2, ins);
                CHECK_MSG(y && memcmp(oi__tensor_data(y), oi__tensor_data(ref), sizeof(float) * (size_t)(m * n)) == 0,
                          "matmul_q4 %s K = %lld activations q8: the %s path%s differs from the portable one",
                          formats[f], (long long)kdim, oi__gemm_isa_name(isas[p]), p == 2 ? " without VNNI" : "");
                oi__tensor_free(y);
            }
            oi__quant_allow_vnni(true);
            oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
            oi__tensor *all[3] = {ref, w, x};
            free_all(all, 3);
        }
}

/* activations="q8" rounds x / d half away from zero: x's block has max|x| = 127
 * (d = 1), and a q8_0 weight whose row n picks element n with weight 1 reads
 * each rounded value back, y[n] = q[n]; wanted: floor(|x| + 1/2) with x's sign. */
static void test_q8_rounding(void) {
    enum { K = 32 };
    double xv[K] = {127, 2.5, -2.5, 0.5, -0.5, 126.5, -126.5, 1.4999999, -0.49999997, 3.5, 0.0, -0.0};
    for (int j = 12; j < K; j++)
        xv[j] = (j - 20) * 0.75;
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(1, K), xv), *w = oi__tensor_new(OI_DTYPE_U8, SHAPE(K, 34));
    uint8_t *wb = (uint8_t *)oi__tensor_data(w);
    memset(wb, 0, K * 34);
    for (int n = 0; n < K; n++)
        wb[n * 34] = 0x00, wb[n * 34 + 1] = 0x3C, wb[n * 34 + 2 + n] = 1; /* d = 1.0, w[n] = 1 */
    double want[K];
    for (int j = 0; j < K; j++) {
        float xf = (float)xv[j];
        want[j] = copysign(floor(fabs((double)xf) + 0.5), xf) + 0.0;
    }
    oi__attr a8[2] = {attr_s("format", "q8_0"), attr_s("activations", "q8")};
    oi__tensor *ins[2] = {x, w};
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        oi__tensor *y = run(OI_OP_matmul_q4, a8, 2, 2, ins);
        int bad = 0, first = -1;
        for (int n = 0; y && n < K; n++)
            if (((const float *)oi__tensor_data(y))[n] != (float)want[n] && ++bad == 1)
                first = n;
        CHECK_MSG(y && bad == 0, "q8 activations %s: %d of %d blocks values rounded wrong (first x[%d] = %.9g -> %g)",
                  oi__gemm_isa_name(isas[ii]), bad, K, first, first >= 0 ? xv[first] : 0.0,
                  y && first >= 0 ? (double)((const float *)oi__tensor_data(y))[first] : 0.0);
        oi__tensor_free(y);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    oi__tensor_free(x), oi__tensor_free(w);
}

/* A bigger q8 weight: the dot path (M = 1, over the pool) and the gemm
 * path (M = 8) give the same first row, and both match a plain double
 * loop over the dequantized weights. */
static void test_quant_paths_agree(void) {
    const int64_t n = 300, kdim = 256;
    oi__tensor *w = oi__tensor_new(OI_DTYPE_I8, SHAPE(300, 256)), *scale = oi__tensor_new(OI_DTYPE_F32, SHAPE(300));
    oi__tensor *x = oi__tensor_new(OI_DTYPE_F32, SHAPE(8, 256));
    for (int64_t i = 0; i < n * kdim; i++)
        ((int8_t *)oi__tensor_data(w))[i] = (int8_t)((i * 37 + 11) % 255 - 127);
    for (int64_t i = 0; i < n; i++)
        ((float *)oi__tensor_data(scale))[i] = 0.001f * (float)(1 + i % 17);
    for (int64_t i = 0; i < 8 * kdim; i++)
        ((float *)oi__tensor_data(x))[i] = (float)sin(0.3 * (double)i);
    oi__tensor *x1 = oi__tensor_share(x);
    x1->shape[0] = 1;
    oi__tensor *ins[3] = {x, w, scale};
    oi__tensor *many = run(OI_OP_matmul_q8, NULL, 0, 3, ins);
    ins[0] = x1;
    oi__tensor *one = run(OI_OP_matmul_q8, NULL, 0, 3, ins);
    double worst = 0.0;
    for (int64_t j = 0; many && one && j < n; j++) {
        double want = 0.0;
        for (int64_t kk = 0; kk < kdim; kk++)
            want += (double)((float *)oi__tensor_data(x))[kk] * ((int8_t *)oi__tensor_data(w))[j * kdim + kk];
        want *= (double)((float *)oi__tensor_data(scale))[j];
        worst = fmax(worst, fabs(((float *)oi__tensor_data(one))[j] - want));
        worst = fmax(worst, fabs(((float *)oi__tensor_data(many))[j] - want));
    }
    CHECK_MSG(many && one && worst < 1e-4, "q8 paths off by %g", worst);
    oi__tensor *all[6] = {many, one, w, scale, x, x1};
    free_all(all, 6);
}

/* ---- through the DSL, the validator and the executor ---- */
/* A decoder-like chain with optional inputs left out (attention without
 * a mask), a string parameter and i64 positions; numpy computes it in
 * float64 (each op here rounds to f32, hence the tolerance). */
OI_GRAPH(g_nn_chain,
  OI_DYNAMIC(
    OI_VAR(x, f32[1, 2, 4, 8])
    OI_VAR(pos, i64[4])
  )
  OI_VOLATILE(
    OI_VAR(scale, f32[8])
    OI_VAR(g, f32[1, 2, 4, 8])
    OI_VAR(idx, i64[1, 2, 4, 2])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[1, 2, 4, 8])
    OI_ASSIGN(q, f32[1, 2, 4, 8])
    OI_ASSIGN(a, f32[1, 2, 4, 8])
    OI_OP(rms_norm, x, scale, epsilon=1e-6) OI_TO(h)
    OI_OP(rope, h, pos) OI_TO(q)
    OI_OP(attention, q, q, q, causal=true) OI_TO(a)
    OI_OP(gelu, a, approximate="tanh") OI_TO(g)
    OI_OP(top_k_indices, g, k=2) OI_TO(idx)
    OI_RETURN()
  )
)

static void test_graph_chain(void) {
    oi_writer *wr = oi_writer_new();
    float scale[8];
    for (int i = 0; i < 8; i++)
        scale[i] = (float)gr_scale[i];
    uint64_t dims[1] = {8};
    CHECK_OK(oi_writer_add_tensor(wr, "scale", OI_DTYPE_F32, 1, dims, scale, NULL));
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_OK(oi_writer_to_memory(wr, 2, &bytes, &size));
    oi_writer_free(wr);
    oi_model *m = bytes ? oi_model_open_memory(bytes, size) : NULL;
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_CPU;
    oi_simulator *sim = m ? oi_simulator_new_desc(m, &desc) : NULL;
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g_nn_chain()) : NULL;
    CHECK_MSG(e != NULL, "executor: %s", oi_last_error());
    if (e) {
        float xv[64];
        for (int i = 0; i < 64; i++)
            xv[i] = (float)gr_x[i];
        CHECK_OK(OI_TRY_INSERT(e, x, xv, 64));
        CHECK_OK(OI_TRY_INSERT_T(e, pos, i64, gr_pos, 4));
        CHECK_OK(oi_executor_run_step(e));
        oi_tensor_view v;
        if (oi_executor_fetch(e, "g", OI_DTYPE_F32, &v) == OI_OK && v.len == 64)
            for (int i = 0; i < 64; i++)
                CHECK_NEAR(((const float *)v.data)[i], gr_out[i], 1e-5 + 1e-5 * fabs(gr_out[i]));
        if (oi_executor_fetch(e, "idx", OI_DTYPE_I64, &v) == OI_OK && v.len == 16)
            for (int i = 0; i < 16; i++)
                CHECK_EQ_INT(((const int64_t *)v.data)[i], gr_idx[i]);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
    oi_free(bytes);
}

/* 16-bit q, k, v (f16, bf16) on every ISA path: on AVX2 and AVX-512 the
 * decode kernels read 16-bit K and V where they lie and the prefill path
 * widens them per task, so the result is the f32 path's on the widened
 * values, rounded once: equal bit for bit. The portable path (generic
 * loops) within 16-bit rounding of it. Shapes: SmolLM2's decode (9 query
 * heads over 3 kv heads of 64, 150 positions: two chunks and a tail), a
 * causal prefill with grouped heads and tails, a padded batch with a bool
 * mask. */
static uint16_t half_bits(oi_dtype t, float x) { return t == OI_DTYPE_F16 ? oi_f32_to_f16(x) : oi_f32_to_bf16(x); }
static float half_value(oi_dtype t, uint16_t h) { return t == OI_DTYPE_F16 ? oi_f16_to_f32(h) : oi_bf16_to_f32(h); }

static void test_attention_16bit(void) {
    const attn_case cases[3] = {{"decode 9/3 heads x150", 1, 9, 3, 1, 150, 64, 64, 0, false, false, 0.0},
                                {"causal grouped 70", 2, 4, 2, 70, 70, 32, 32, 0, true, false, 0.0},
                                {"bool padding mask", 3, 2, 2, 40, 40, 16, 16, 2, false, false, 0.0}};
    const oi__gemm_isa isas[3] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    const oi_dtype types[2] = {OI_DTYPE_F16, OI_DTYPE_BF16};
    for (size_t ci = 0; ci < COUNT(cases); ci++)
        for (int ti = 0; ti < 2; ti++) {
            const attn_case *c = &cases[ci];
            oi_dtype t = types[ti];
            const int64_t shapes[3][4] = {{c->b, c->hq, c->s, c->d}, {c->b, c->hkv, c->t, c->d}, {c->b, c->hkv, c->t, c->dv}};
            oi__tensor *h[4] = {NULL, NULL, NULL, NULL}, *w[4] = {NULL, NULL, NULL, NULL};
            for (int o = 0; o < 3; o++) { /* the 16-bit operand and its values widened to f32 */
                h[o] = oi__tensor_new(t, 4, shapes[o]);
                w[o] = oi__tensor_new(OI_DTYPE_F32, 4, shapes[o]);
                for (int64_t i = 0; i < oi__shape_numel(4, shapes[o]); i++) {
                    uint16_t bits = half_bits(t, (float)attn_value(i, 0.5 + o));
                    ((uint16_t *)oi__tensor_data(h[o]))[i] = bits;
                    ((float *)oi__tensor_data(w[o]))[i] = half_value(t, bits);
                }
            }
            if (c->mask == 2) { /* bool [B, 1, 1, T] */
                h[3] = w[3] = oi__tensor_new(OI_DTYPE_BOOL, SHAPE(c->b, 1, 1, c->t));
                for (int64_t b = 0; b < c->b; b++)
                    for (int64_t j = 0; j < c->t; j++)
                        ((uint8_t *)oi__tensor_data(h[3]))[b * c->t + j] = attn_mask_at(c, b, 0, j) == 0.0;
            }
            oi__attr causal = attr_b("causal", true);
            size_t n_in = c->mask ? 4 : 3;
            for (int p = 0; p < 3; p++) {
                if (!oi__gemm_force_isa(isas[p]))
                    continue;
                oi__tensor *got = run(OI_OP_attention, c->causal ? &causal : NULL, c->causal, n_in, h);
                oi__tensor *want = run(OI_OP_attention, c->causal ? &causal : NULL, c->causal, n_in, w);
                int64_t n = got && want ? oi__shape_numel(got->ndim, got->shape) : 0, differ = 0;
                double worst = 0.0;
                for (int64_t i = 0; i < n; i++) {
                    float f = ((const float *)oi__tensor_data(want))[i];
                    uint16_t g = ((const uint16_t *)oi__tensor_data(got))[i];
                    differ += g != half_bits(t, f) && !(isnan(f) && isnan(half_value(t, g)));
                    worst = fmax(worst, fabs((double)half_value(t, g) - (double)f));
                }
                bool exact = isas[p] != OI__GEMM_ISA_PORTABLE && oi__cpu_has_f16c();
                CHECK_MSG(got && want && (exact ? differ == 0 : worst < (t == OI_DTYPE_F16 ? 2e-3 : 1.6e-2)),
                          "attention %s %s (%s): %lld values differ from the f32 path's rounded, worst %g", c->name,
                          oi_dtype_name(t), oi__gemm_isa_name(isas[p]), (long long)differ, worst);
                oi__tensor_free(got), oi__tensor_free(want);
            }
            oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
            for (int o = 0; o < 3; o++)
                oi__tensor_free(h[o]), oi__tensor_free(w[o]);
            oi__tensor_free(h[3]);
        }
}

int main(void) {
    test_unary_refs();
    test_unary_wide_range();
    test_unary_specials();
    test_unary_paths_agree();
    test_pow_and_gelu_params();
    test_softmax();
    test_softmax_large();
    test_layer_rms_norm();
    test_batch_group_norm();
    test_rope();
    test_attention();
    test_attention_prefill_matches_decode();
    test_attention_encoder_paths();
    test_attention_16bit();
    test_top_k();
    test_matmul_q8();
    test_matmul_q4();
    test_dequantize();
    test_q4_scales();
    test_q4_a8_isa_paths();
    test_q8_rounding();
    test_quant_paths_agree();
    test_graph_chain();
    return check_result("test_nn_ops");
}
