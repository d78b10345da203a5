/* test_kernels.c - the op table and the CPU kernels through the seam the
 * executor uses (oi__op_infer + oi__op_run_cpu), on hand-built tensors.
 * Expected values are worked out by hand, taken from the conformance
 * README, or computed by numpy (tests/test_kernels_refs.h). */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"
#include "check.h"
#include "test_kernels_refs.h"

#include <math.h>

#include "op_test_util.h"

static oi__attr attr_dtypes(const char *name, oi_dtype t0, oi_dtype t1) {
    oi__attr a = attr_f(name, 0);
    a.kind = OI__ATTR_DTYPE_LIST;
    arrput(a.dtypes, t0);
    if (t1 != OI_DTYPE_INVALID)
        arrput(a.dtypes, t1);
    return a;
}

static void free_attr(oi__attr *a) {
    arrfree(a->ints);
    arrfree(a->dtypes);
}

static void sig_of(const oi__tensor *t, oi__op_sig *s) {
    memset(s, 0, sizeof *s);
    s->dtype = t->dtype;
    s->ndim = t->ndim;
    memcpy(s->shape, t->shape, sizeof s->shape);
}

/* Infers the output, allocates it and runs the kernel; NULL on failure. */
static oi__tensor *run_op(oi_op op, const oi__attr *attrs, size_t n_attrs, oi_dtype declared, size_t n,
                          oi__tensor *in0, oi__tensor *in1, oi__tensor *in2) {
    const oi__tensor *ins[3] = {in0, in1, in2};
    oi__op_sig sigs[3], out_sig;
    for (size_t i = 0; i < n; i++)
        sig_of(ins[i], &sigs[i]);
    oi_status s = oi__op_infer(op, attrs, n_attrs, sigs, n, declared, &out_sig);
    CHECK_MSG(s == OI_OK, "infer %s: %s", oi_op_name(op), oi_last_error());
    if (s != OI_OK)
        return NULL;
    oi__tensor *out = oi__tensor_new(out_sig.dtype, out_sig.ndim, out_sig.shape);
    s = oi__op_run_cpu(op, attrs, n_attrs, ins, n, out);
    CHECK_MSG(s == OI_OK, "run %s: %s", oi_op_name(op), oi_last_error());
    return out;
}

#define RUN1(op, attrs, n_attrs, a) run_op(OI_OP_##op, attrs, n_attrs, OI_DTYPE_INVALID, 1, a, NULL, NULL)
#define RUN2(op, attrs, n_attrs, a, b) run_op(OI_OP_##op, attrs, n_attrs, OI_DTYPE_INVALID, 2, a, b, NULL)

/* Compares every element (row-major) with `want`. */
static void expect_f(const char *what, const oi__tensor *t, const double *want, size_t n, double tol) {
    CHECK_MSG(t != NULL, "%s: no output", what);
    if (!t)
        return;
    CHECK_MSG((size_t)oi__shape_numel(t->ndim, t->shape) == n, "%s: %lld elements, want %zu", what,
              (long long)oi__shape_numel(t->ndim, t->shape), n);
    for (size_t i = 0; i < n; i++) {
        double got = oi__load_f64(t->dtype, oi__tensor_data(t), (int64_t)i);
        bool same = (isnan(want[i]) && isnan(got)) || fabs(got - want[i]) <= tol ||
                    (isinf(want[i]) && got == want[i]);
        CHECK_MSG(same, "%s[%zu]: got %.9g, want %.9g", what, i, got, want[i]);
    }
}

static void expect_i(const char *what, const oi__tensor *t, const int64_t *want, size_t n) {
    CHECK_MSG(t != NULL, "%s: no output", what);
    if (!t)
        return;
    CHECK_MSG((size_t)oi__shape_numel(t->ndim, t->shape) == n, "%s: %lld elements, want %zu", what,
              (long long)oi__shape_numel(t->ndim, t->shape), n);
    for (size_t i = 0; i < n; i++) {
        int64_t got = oi__load_i64(t->dtype, oi__tensor_data(t), (int64_t)i);
        CHECK_MSG(got == want[i], "%s[%zu]: got %lld, want %lld", what, i, (long long)got, (long long)want[i]);
    }
}

static void expect_shape(const oi__tensor *t, int ndim, const int64_t *shape) {
    if (!t)
        return;
    CHECK_EQ_INT(t->ndim, ndim);
    for (int i = 0; i < ndim && i < t->ndim; i++)
        CHECK_EQ_INT(t->shape[i], shape[i]);
}

/* ---- the table ---- */
static void test_table(void) {
    CHECK(OI_OP_COUNT >= 48); /* the original's 48, then issue 6's ops */
    CHECK(strcmp(oi_op_name(OI_OP_add), "add") == 0);
    CHECK(strcmp(oi_op_name(OI_OP_fill_nan_like), "fill_nan_like") == 0);
    CHECK(oi_op_name(OI_OP_COUNT) == NULL);
    CHECK_EQ_INT(oi_op_from_name("argmin_axis"), OI_OP_argmin_axis);
    CHECK_EQ_INT(oi_op_from_name("nope"), OI_OP_COUNT);
    CHECK_EQ_INT(oi_op_from_name(NULL), OI_OP_COUNT);
    for (int op = 0; op < OI_OP_COUNT; op++)
        CHECK_EQ_INT(oi_op_from_name(oi_op_name((oi_op)op)), op);
    CHECK_EQ_INT(oi__op_arity(OI_OP_fma), 3);
    CHECK_EQ_INT(oi__op_arity(OI_OP_filter), 3);
    CHECK_EQ_INT(oi__op_arity(OI_OP_neg), 1);
    CHECK_EQ_INT(oi__op_arity(OI_OP_matmul), 2);
    CHECK(oi__op_allows_inplace(OI_OP_add));
    CHECK(oi__op_allows_inplace(OI_OP_relu));
    CHECK(!oi__op_allows_inplace(OI_OP_eq));
    CHECK(!oi__op_allows_inplace(OI_OP_sum_axis));
    CHECK(!oi__op_allows_inplace(OI_OP_cast));
}

/* ---- README vectors ---- */
static void test_rounding_vectors(void) {
    const double x[6] = {-2.3, -1.1, -0.2, 0.2, 1.1, 2.7};
    oi__tensor *t = tensor_f(OI_DTYPE_F32, SHAPE(2, 3), x);
    const double floor_w[6] = {-3, -2, -1, 0, 1, 2}, ceil_w[6] = {-2, -1, -0.0, 1, 2, 3};
    const double round_w[6] = {-2, -1, -0.0, 0, 1, 3}, trunc_w[6] = {-2, -1, -0.0, 0, 1, 2};
    const int64_t sign_w[6] = {-1, -1, -1, 1, 1, 1};
    const double recip_w[6] = {-0.4347826, -0.9090909, -5, 5, 0.9090909, 0.3703704};
    oi__tensor *r;
    expect_f("floor", r = RUN1(floor, NULL, 0, t), floor_w, 6, 0), oi__tensor_free(r);
    expect_f("ceil", r = RUN1(ceil, NULL, 0, t), ceil_w, 6, 0), oi__tensor_free(r);
    expect_f("round", r = RUN1(round, NULL, 0, t), round_w, 6, 0), oi__tensor_free(r);
    expect_f("trunc", r = RUN1(trunc, NULL, 0, t), trunc_w, 6, 0), oi__tensor_free(r);
    r = RUN1(sign, NULL, 0, t);
    CHECK(r && r->dtype == OI_DTYPE_I8);
    expect_i("sign", r, sign_w, 6), oi__tensor_free(r);
    oi__attr mask = attr_i("div_by_zero_mask", 0);
    expect_f("recip", r = RUN1(recip, &mask, 1, t), recip_w, 6, 1e-6), oi__tensor_free(r);
    /* ceil(-0.2) is -0.0 */
    r = RUN1(ceil, NULL, 0, t);
    CHECK(r && signbit(oi__load_f64(OI_DTYPE_F32, oi__tensor_data(r), 2)));
    oi__tensor_free(r);
    oi__tensor_free(t);

    /* round: halves away from zero */
    const double ties[6] = {0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997};
    const double ties_w[6] = {1, -1, 2, 3, -3, 0};
    t = tensor_f(OI_DTYPE_F32, SHAPE(6), ties);
    expect_f("round ties", r = RUN1(round, NULL, 0, t), ties_w, 6, 0), oi__tensor_free(r);
    oi__tensor_free(t);
}

static void test_bitwise_vectors(void) {
    const int64_t a[6] = {77, 38, 247, 184, 250, 30}, b[6] = {180, 40, 162, 224, 203, 91};
    oi__tensor *ta = tensor_i(OI_DTYPE_U8, SHAPE(2, 3), a), *tb = tensor_i(OI_DTYPE_U8, SHAPE(2, 3), b), *r;
    const int64_t and_w[6] = {4, 32, 162, 160, 202, 26}, or_w[6] = {253, 46, 247, 248, 251, 95};
    const int64_t xor_w[6] = {249, 14, 85, 88, 49, 69}, not_w[6] = {178, 217, 8, 71, 5, 225};
    const int64_t shl_w[6] = {154, 76, 238, 112, 244, 60}, shr_w[6] = {38, 19, 123, 92, 125, 15};
    const int64_t pop_w[6] = {4, 3, 7, 4, 6, 4};
    oi__attr bits = attr_i("bits", 1);
    expect_i("and", r = RUN2(and, NULL, 0, ta, tb), and_w, 6), oi__tensor_free(r);
    expect_i("or", r = RUN2(or, NULL, 0, ta, tb), or_w, 6), oi__tensor_free(r);
    expect_i("xor", r = RUN2(xor, NULL, 0, ta, tb), xor_w, 6), oi__tensor_free(r);
    expect_i("not", r = RUN1(not, NULL, 0, ta), not_w, 6), oi__tensor_free(r);
    expect_i("shl", r = RUN1(shl, &bits, 1, ta), shl_w, 6), oi__tensor_free(r);
    expect_i("shr", r = RUN1(shr, &bits, 1, ta), shr_w, 6), oi__tensor_free(r);
    expect_i("popcount", r = RUN1(popcount, NULL, 0, ta), pop_w, 6), oi__tensor_free(r);
    oi__tensor_free(ta);
    oi__tensor_free(tb);

    /* popcount of i8 -1 is 8; shr on i8 is arithmetic */
    const int64_t s[6] = {1, -2, 2, 2, -2, 0}, shr_s[6] = {0, -1, 1, 1, -1, 0};
    ta = tensor_i(OI_DTYPE_I8, SHAPE(6), s);
    expect_i("shr i8", r = RUN1(shr, &bits, 1, ta), shr_s, 6), oi__tensor_free(r);
    oi__tensor_free(ta);
    const int64_t m1[2] = {-1, -128}, pop_m1[2] = {8, 1};
    ta = tensor_i(OI_DTYPE_I8, SHAPE(2), m1);
    expect_i("popcount i8", r = RUN1(popcount, NULL, 0, ta), pop_m1, 2), oi__tensor_free(r);
    oi__tensor_free(ta);

    /* bool: logical */
    const int64_t p[4] = {0, 0, 1, 1}, q[4] = {0, 1, 0, 1};
    const int64_t bor[4] = {0, 1, 1, 1}, band[4] = {0, 0, 0, 1}, bnot[4] = {1, 1, 0, 0}, bxor[4] = {0, 1, 1, 0};
    ta = tensor_i(OI_DTYPE_BOOL, SHAPE(4), p);
    tb = tensor_i(OI_DTYPE_BOOL, SHAPE(4), q);
    expect_i("bool add", r = RUN2(add, NULL, 0, ta, tb), bor, 4), oi__tensor_free(r);
    expect_i("bool mul", r = RUN2(mul, NULL, 0, ta, tb), band, 4), oi__tensor_free(r);
    expect_i("bool or", r = RUN2(or, NULL, 0, ta, tb), bor, 4), oi__tensor_free(r);
    expect_i("bool xor", r = RUN2(xor, NULL, 0, ta, tb), bxor, 4), oi__tensor_free(r);
    expect_i("bool not", r = RUN1(not, NULL, 0, ta), bnot, 4), oi__tensor_free(r);
    oi__tensor_free(ta);
    oi__tensor_free(tb);
}

static void test_misc_vectors(void) {
    const int64_t fa[6] = {14, 12, 7, 19, 9, 5}, fb[6] = {4, 1, 4, 3, 1, 1}, fw[6] = {3, 12, 1, 6, 9, 5};
    const int64_t ra[6] = {9, 1, 3, 10, 19, 9}, rb[6] = {5, 5, 5, 4, 3, 3}, rw[6] = {4, 1, 3, 2, 1, 0};
    oi__attr mask = attr_i("div_by_zero_mask", 0);
    oi__tensor *a = tensor_i(OI_DTYPE_I32, SHAPE(2, 3), fa), *b = tensor_i(OI_DTYPE_I32, SHAPE(2, 3), fb), *r;
    expect_i("floor_div", r = RUN2(floor_div, &mask, 1, a, b), fw, 6), oi__tensor_free(r);
    oi__tensor_free(a), oi__tensor_free(b);
    a = tensor_i(OI_DTYPE_I32, SHAPE(2, 3), ra), b = tensor_i(OI_DTYPE_I32, SHAPE(2, 3), rb);
    expect_i("rem", r = RUN2(rem, NULL, 0, a, b), rw, 6), oi__tensor_free(r);
    oi__tensor_free(a), oi__tensor_free(b);

    /* floor_div rounds toward -inf (7 // -2 == -4), rem follows the dividend */
    const int64_t na[4] = {7, -7, 7, -7}, nb[4] = {-2, 2, 2, -2}, nfw[4] = {-4, -4, 3, 3}, nrw[4] = {1, -1, 1, -1};
    a = tensor_i(OI_DTYPE_I16, SHAPE(4), na), b = tensor_i(OI_DTYPE_I16, SHAPE(4), nb);
    expect_i("floor_div neg", r = RUN2(floor_div, NULL, 0, a, b), nfw, 4), oi__tensor_free(r);
    expect_i("rem neg", r = RUN2(rem, NULL, 0, a, b), nrw, 4), oi__tensor_free(r);
    oi__tensor_free(a), oi__tensor_free(b);

    /* is_finite reduces to one bool of shape [] */
    const double xs[6] = {INFINITY, -INFINITY, NAN, 0, 1, -2};
    a = tensor_f(OI_DTYPE_F32, SHAPE(2, 3), xs);
    r = RUN1(is_finite, NULL, 0, a);
    CHECK(r && r->ndim == 0 && r->dtype == OI_DTYPE_BOOL);
    const int64_t no[1] = {0}, yes[1] = {1};
    expect_i("is_finite", r, no, 1), oi__tensor_free(r);
    const int64_t nan_w[6] = {0, 0, 1, 0, 0, 0}, inf_w[6] = {1, 1, 0, 0, 0, 0}, neg_w[6] = {0, 1, 0, 0, 0, 1};
    expect_i("is_nan", r = RUN1(is_nan, NULL, 0, a), nan_w, 6), oi__tensor_free(r);
    expect_i("is_inf", r = RUN1(is_inf, NULL, 0, a), inf_w, 6), oi__tensor_free(r);
    expect_i("is_neg", r = RUN1(is_neg, NULL, 0, a), neg_w, 6), oi__tensor_free(r);
    oi__tensor_free(a);
    const double fin[3] = {1, -0.0, 3e38};
    a = tensor_f(OI_DTYPE_F32, SHAPE(3), fin);
    expect_i("is_finite yes", r = RUN1(is_finite, NULL, 0, a), yes, 1), oi__tensor_free(r);
    const int64_t negz[3] = {0, 1, 0}; /* -0.0 has its sign bit set */
    expect_i("is_neg -0", r = RUN1(is_neg, NULL, 0, a), negz, 3), oi__tensor_free(r);
    oi__tensor_free(a);
}

static void test_packed_vectors(void) {
    const int64_t i4[8] = {-8, -3, 0, 7, 6, -1, -7, 3}, u2[8] = {0, 1, 2, 3, 3, 2, 1, 0};
    oi__attr attrs[3] = {attr_i("axis", 1), attr_b("keepdims", true), attr_b("select_first", true)};
    oi__tensor *a = tensor_i(OI_DTYPE_I4, SHAPE(2, 4), i4), *r;
    const int64_t amax[2] = {3, 0}, amin[2] = {0, 3};
    r = RUN1(argmax_axis, attrs, 3, a);
    CHECK(r && r->dtype == OI_DTYPE_I64);
    expect_shape(r, SHAPE(2, 1));
    expect_i("argmax i4", r, amax, 2), oi__tensor_free(r);
    oi__tensor_free(a);
    a = tensor_i(OI_DTYPE_U2, SHAPE(2, 4), u2);
    expect_i("argmin u2", r = RUN1(argmin_axis, attrs, 3, a), amin, 2), oi__tensor_free(r);
    oi__tensor_free(a);

    /* add i4 and u1 wrap (full matrix vectors) */
    const int64_t ia[6] = {0, -2, 1, 1, -2, 0}, ib[6] = {-1, 1, -1, -2, -2, 2}, iw[6] = {-1, -1, 0, -1, -4, 2};
    oi__tensor *x = tensor_i(OI_DTYPE_I4, SHAPE(6), ia), *y = tensor_i(OI_DTYPE_I4, SHAPE(6), ib);
    expect_i("add i4", r = RUN2(add, NULL, 0, x, y), iw, 6), oi__tensor_free(r);
    oi__tensor_free(x), oi__tensor_free(y);
    const int64_t ua[6] = {1, 0, 1, 1, 0, 1}, ub[6] = {0, 1, 0, 0, 0, 1}, uw[6] = {1, 1, 1, 1, 0, 0};
    x = tensor_i(OI_DTYPE_U1, SHAPE(6), ua), y = tensor_i(OI_DTYPE_U1, SHAPE(6), ub);
    expect_i("add u1", r = RUN2(add, NULL, 0, x, y), uw, 6), oi__tensor_free(r);
    oi__tensor_free(x), oi__tensor_free(y);

    /* i4: 7 + 1 wraps to -8; i2 shl; u4 not */
    const int64_t s7[3] = {7, -8, 5}, s1[3] = {1, -1, 5}, sw[3] = {-8, 7, -6};
    x = tensor_i(OI_DTYPE_I4, SHAPE(3), s7), y = tensor_i(OI_DTYPE_I4, SHAPE(3), s1);
    expect_i("add i4 wrap", r = RUN2(add, NULL, 0, x, y), sw, 3), oi__tensor_free(r);
    oi__tensor_free(x), oi__tensor_free(y);
    const int64_t u4[3] = {0, 5, 15}, u4not[3] = {15, 10, 0};
    x = tensor_i(OI_DTYPE_U4, SHAPE(3), u4);
    expect_i("not u4", r = RUN1(not, NULL, 0, x), u4not, 3), oi__tensor_free(r);
    oi__tensor_free(x);

    /* t2 and t1 (ternary): mul, neg */
    const int64_t t2a[3] = {-1, 0, 1}, t2b[3] = {-1, 1, -1}, t2w[3] = {1, 0, -1}, t2neg[3] = {1, 0, -1};
    x = tensor_i(OI_DTYPE_T2, SHAPE(3), t2a), y = tensor_i(OI_DTYPE_T2, SHAPE(3), t2b);
    expect_i("mul t2", r = RUN2(mul, NULL, 0, x, y), t2w, 3), oi__tensor_free(r);
    expect_i("neg t2", r = RUN1(neg, NULL, 0, x), t2neg, 3), oi__tensor_free(r);
    oi__tensor_free(x), oi__tensor_free(y);
    const int64_t t1a[2] = {-1, 1}, t1neg[2] = {1, -1};
    x = tensor_i(OI_DTYPE_T1, SHAPE(2), t1a);
    expect_i("neg t1", r = RUN1(neg, NULL, 0, x), t1neg, 2), oi__tensor_free(r);
    oi__tensor_free(x);
}

/* ---- accumulate mode ---- */
static void test_accumulate(void) {
    /* mean_axis i4 with acc=i8: [[2,-5,-7],[-7,-1,-4]] -> [[-3],[-4]] */
    const int64_t v[6] = {2, -5, -7, -7, -1, -4}, w[2] = {-3, -4};
    int64_t axis1 = 1;
    oi__attr attrs[3] = {attr_ints("axes", 1, &axis1), attr_b("keepdims", true), attr_dtype("acc", OI_DTYPE_I8)};
    oi__tensor *x = tensor_i(OI_DTYPE_I4, SHAPE(2, 3), v), *r;
    r = RUN1(mean_axis, attrs, 3, x);
    CHECK(r && r->dtype == OI_DTYPE_I8);
    expect_shape(r, SHAPE(2, 1));
    expect_i("mean_axis acc i4->i8", r, w, 2), oi__tensor_free(r);
    /* sum without acc wraps in i4: -10 -> 6, -12 -> 4 */
    const int64_t sum_w[2] = {6, 4}, sum_acc[2] = {-10, -12};
    expect_i("sum_axis i4", r = RUN1(sum_axis, attrs, 2, x), sum_w, 2), oi__tensor_free(r);
    expect_i("sum_axis acc", r = RUN1(sum_axis, attrs, 3, x), sum_acc, 2), oi__tensor_free(r);
    oi__tensor_free(x);

    /* add i8 + i8 with acc=i16 does not wrap; without it, it does */
    const int64_t a[2] = {100, -128}, b[2] = {100, -1}, wide[2] = {200, -129}, wrapped[2] = {-56, 127};
    oi__tensor *ta = tensor_i(OI_DTYPE_I8, SHAPE(2), a), *tb = tensor_i(OI_DTYPE_I8, SHAPE(2), b);
    oi__attr acc16 = attr_dtype("acc", OI_DTYPE_I16);
    expect_i("add acc i16", r = RUN2(add, &acc16, 1, ta, tb), wide, 2), oi__tensor_free(r);
    expect_i("add i8 wraps", r = RUN2(add, NULL, 0, ta, tb), wrapped, 2), oi__tensor_free(r);
    /* the declared output dtype alone selects accumulate mode */
    r = run_op(OI_OP_add, NULL, 0, OI_DTYPE_I32, 2, ta, tb, NULL);
    CHECK(r && r->dtype == OI_DTYPE_I32);
    expect_i("add declared i32", r, wide, 2), oi__tensor_free(r);
    /* abs of i8 MIN wraps unless widened */
    const int64_t absw[2] = {100, 128}, absn[2] = {100, -128};
    expect_i("abs acc", r = RUN1(abs, &acc16, 1, ta), absw, 2), oi__tensor_free(r);
    expect_i("abs wraps", r = RUN1(abs, NULL, 0, ta), absn, 2), oi__tensor_free(r);
    oi__tensor_free(ta), oi__tensor_free(tb);

    /* matmul u8 with acc=u32: 200*200 + 100*100 = 50000 */
    const int64_t ma[2] = {200, 100}, mb[2] = {200, 100}, mw[1] = {50000}, mw8[1] = {50000 % 256};
    ta = tensor_i(OI_DTYPE_U8, SHAPE(1, 2), ma), tb = tensor_i(OI_DTYPE_U8, SHAPE(2, 1), mb);
    oi__attr acc32 = attr_dtype("acc", OI_DTYPE_U32);
    expect_i("matmul acc u32", r = RUN2(matmul, &acc32, 1, ta, tb), mw, 1), oi__tensor_free(r);
    expect_i("matmul u8 wraps", r = RUN2(matmul, NULL, 0, ta, tb), mw8, 1), oi__tensor_free(r);
    oi__tensor_free(ta), oi__tensor_free(tb);

    /* f16 matmul accumulates in f32 and rounds once: 2048 + 1 + 1 -> 2050.
     * Rounding after every add would lose both ones (2048 + 1 ties to 2048). */
    const double ha[3] = {2048, 1, 1}, hb[3] = {1, 1, 1}, hw[1] = {2050};
    ta = tensor_f(OI_DTYPE_F16, SHAPE(1, 3), ha), tb = tensor_f(OI_DTYPE_F16, SHAPE(3, 1), hb);
    expect_f("matmul f16", r = RUN2(matmul, NULL, 0, ta, tb), hw, 1, 0), oi__tensor_free(r);
    /* acc=[f32, f32]: f32 output; acc=[f32, f16]: accumulate wide, output f16 */
    oi__attr accl = attr_dtypes("acc", OI_DTYPE_F32, OI_DTYPE_F32);
    r = RUN2(matmul, &accl, 1, ta, tb);
    CHECK(r && r->dtype == OI_DTYPE_F32);
    expect_f("matmul acc f32", r, hw, 1, 0), oi__tensor_free(r);
    free_attr(&accl);
    accl = attr_dtypes("acc", OI_DTYPE_F32, OI_DTYPE_F16);
    r = RUN2(matmul, &accl, 1, ta, tb);
    CHECK(r && r->dtype == OI_DTYPE_F16);
    free_attr(&accl);
    oi__tensor_free(r), oi__tensor_free(ta), oi__tensor_free(tb);

    /* f16 + f16 with acc=f32 keeps the f32 sum */
    const double fa[1] = {2048}, fb[1] = {1}, fw[1] = {2049}, fw16[1] = {2048};
    ta = tensor_f(OI_DTYPE_F16, SHAPE(1), fa), tb = tensor_f(OI_DTYPE_F16, SHAPE(1), fb);
    oi__attr accf = attr_dtype("acc", OI_DTYPE_F32);
    expect_f("add acc f32", r = RUN2(add, &accf, 1, ta, tb), fw, 1, 0), oi__tensor_free(r);
    expect_f("add f16", r = RUN2(add, NULL, 0, ta, tb), fw16, 1, 0), oi__tensor_free(r);
    oi__tensor_free(ta), oi__tensor_free(tb);
    free_attr(&attrs[0]);
}

/* ---- floats: low precision, masks, NaN ---- */
static void test_float_edges(void) {
    /* f8 -1.0 + 0.03125 = -0.96875 -> -1.0 (the original stored -0.5) */
    const double a8[2] = {-1.0, 1.5}, b8[2] = {0.03125, 0.25}, w8[2] = {-1.0, 1.75};
    oi__tensor *a = tensor_f(OI_DTYPE_F8, SHAPE(2), a8), *b = tensor_f(OI_DTYPE_F8, SHAPE(2), b8), *r;
    expect_f("add f8", r = RUN2(add, NULL, 0, a, b), w8, 2, 0), oi__tensor_free(r);
    oi__tensor_free(a), oi__tensor_free(b);

    /* bf16: 1 + 2^-8 is a tie and rounds to even (1.0) */
    const double ba[2] = {1.0, 1.0 + 1.0 / 128}, bb[2] = {1.0 / 256, 1.0 / 256}, bw[2] = {1.0, 1.0 + 2.0 / 128};
    a = tensor_f(OI_DTYPE_BF16, SHAPE(2), ba), b = tensor_f(OI_DTYPE_BF16, SHAPE(2), bb);
    expect_f("add bf16", r = RUN2(add, NULL, 0, a, b), bw, 2, 0), oi__tensor_free(r);
    oi__tensor_free(a), oi__tensor_free(b);

    /* div: b == 0 gives the mask (NaN by default for floats) */
    const double da[4] = {1, -1, 0, 6}, db[4] = {0, 0, 0, 3};
    a = tensor_f(OI_DTYPE_F32, SHAPE(4), da), b = tensor_f(OI_DTYPE_F32, SHAPE(4), db);
    const double dw[4] = {NAN, NAN, NAN, 2}, dw7[4] = {7, 7, 7, 2};
    expect_f("div nan mask", r = RUN2(div, NULL, 0, a, b), dw, 4, 0), oi__tensor_free(r);
    oi__attr m7 = attr_f("div_by_zero_mask", 7);
    expect_f("div mask 7", r = RUN2(div, &m7, 1, a, b), dw7, 4, 0), oi__tensor_free(r);
    oi__tensor_free(a), oi__tensor_free(b);

    /* NaN propagates through add; min/max ignore a NaN operand; clamp(NaN) = min */
    const double na[3] = {NAN, 1, INFINITY}, nb[3] = {1, NAN, -INFINITY};
    a = tensor_f(OI_DTYPE_F64, SHAPE(3), na), b = tensor_f(OI_DTYPE_F64, SHAPE(3), nb);
    const double addw[3] = {NAN, NAN, NAN}, minw[3] = {1, 1, -INFINITY}, maxw[3] = {1, 1, INFINITY};
    expect_f("add nan", r = RUN2(add, NULL, 0, a, b), addw, 3, 0), oi__tensor_free(r);
    expect_f("min nan", r = RUN2(min, NULL, 0, a, b), minw, 3, 0), oi__tensor_free(r);
    expect_f("max nan", r = RUN2(max, NULL, 0, a, b), maxw, 3, 0), oi__tensor_free(r);
    oi__attr cl[2] = {attr_f("min", 0), attr_f("max", 3)};
    const double clw[3] = {0, 1, 3};
    expect_f("clamp", r = RUN1(clamp, cl, 2, a), clw, 3, 0), oi__tensor_free(r);
    /* fill_nan_like replaces NaN and both infinities */
    oi__attr v9 = attr_f("value", 9);
    const double fnw[3] = {9, 1, 9};
    expect_f("fill_nan_like", r = RUN1(fill_nan_like, &v9, 1, a), fnw, 3, 0), oi__tensor_free(r);
    oi__tensor_free(a), oi__tensor_free(b);

    /* sign: NaN and -0.0 give 0 */
    const double sx[4] = {NAN, -0.0, -3, INFINITY};
    const int64_t sw[4] = {0, 0, -1, 1};
    a = tensor_f(OI_DTYPE_F16, SHAPE(4), sx);
    expect_i("sign edges", r = RUN1(sign, NULL, 0, a), sw, 4), oi__tensor_free(r);
    oi__tensor_free(a);

    /* relu: slope via the seed's name and the original's alias; clamps */
    const double rx[5] = {-2, -0.5, 0, 3, 8};
    a = tensor_f(OI_DTYPE_F32, SHAPE(5), rx);
    oi__attr ra[3] = {attr_f("negative_slope", 0.5), attr_f("clamp_max", 6), attr_f("clamp_min", -0.5)};
    const double rw[5] = {-0.5, -0.25, 0, 3, 6};
    expect_f("relu", r = RUN1(relu, ra, 3, a), rw, 5, 0), oi__tensor_free(r);
    oi__attr alias[2] = {attr_f("alpha", 0.2), attr_f("clamp_max", 6)};
    const double aw[5] = {-0.4, -0.1, 0, 3, 6};
    expect_f("relu alpha", r = RUN1(relu, alias, 2, a), aw, 5, 1e-7), oi__tensor_free(r);
    const double plain[5] = {0, 0, 0, 3, 8};
    expect_f("relu plain", r = RUN1(relu, NULL, 0, a), plain, 5, 0), oi__tensor_free(r);
    oi__tensor_free(a);

    /* fma: a*b + c */
    const double f1[2] = {2, 0.5}, f2[2] = {3, 4}, f3[2] = {1, -2}, fw[2] = {7, 0};
    a = tensor_f(OI_DTYPE_F32, SHAPE(2), f1), b = tensor_f(OI_DTYPE_F32, SHAPE(2), f2);
    oi__tensor *c = tensor_f(OI_DTYPE_F32, SHAPE(2), f3);
    r = run_op(OI_OP_fma, NULL, 0, OI_DTYPE_INVALID, 3, a, b, c);
    expect_f("fma", r, fw, 2, 0), oi__tensor_free(r);
    /* filter(a, b, cond): cond of the same dtype, or bool */
    const double cond[2] = {0, -1}, filt[2] = {3, 0.5};
    oi__tensor *cd = tensor_f(OI_DTYPE_F32, SHAPE(2), cond);
    r = run_op(OI_OP_filter, NULL, 0, OI_DTYPE_INVALID, 3, a, b, cd);
    expect_f("filter", r, filt, 2, 0), oi__tensor_free(r);
    oi__tensor_free(cd);
    const int64_t bcond[2] = {1, 0};
    const double filt2[2] = {2, 4};
    cd = tensor_i(OI_DTYPE_BOOL, SHAPE(2), bcond);
    r = run_op(OI_OP_filter, NULL, 0, OI_DTYPE_INVALID, 3, a, b, cd);
    expect_f("filter bool cond", r, filt2, 2, 0), oi__tensor_free(r);
    oi__tensor_free(cd), oi__tensor_free(a), oi__tensor_free(b), oi__tensor_free(c);
}

/* ---- integers: wrap, MIN / -1, shifts past the width ---- */
static void test_integer_edges(void) {
    const int64_t a[4] = {-128, 127, -7, 9}, b[4] = {-1, 0, 2, -2};
    oi__tensor *ta = tensor_i(OI_DTYPE_I8, SHAPE(4), a), *tb = tensor_i(OI_DTYPE_I8, SHAPE(4), b), *r;
    const int64_t divw[4] = {-128, 0, -3, -4}, remw[4] = {0, 0, -1, 1}, negw[4] = {-128, -127, 7, -9};
    const int64_t subw[4] = {-127, 127, -9, 11}, mulw[4] = {-128, 0, -14, -18};
    expect_i("div i8", r = RUN2(div, NULL, 0, ta, tb), divw, 4), oi__tensor_free(r);
    expect_i("rem i8", r = RUN2(rem, NULL, 0, ta, tb), remw, 4), oi__tensor_free(r);
    expect_i("neg i8", r = RUN1(neg, NULL, 0, ta), negw, 4), oi__tensor_free(r);
    expect_i("sub i8", r = RUN2(sub, NULL, 0, ta, tb), subw, 4), oi__tensor_free(r);
    expect_i("mul i8", r = RUN2(mul, NULL, 0, ta, tb), mulw, 4), oi__tensor_free(r);
    oi__attr m5 = attr_i("div_by_zero_mask", 5);
    const int64_t divm[4] = {-128, 5, -3, -4};
    expect_i("div i8 mask", r = RUN2(div, &m5, 1, ta, tb), divm, 4), oi__tensor_free(r);

    /* shifts: by the width or more shift everything out */
    oi__attr s8 = attr_i("bits", 8), s70 = attr_i("bits", 70), sneg = attr_i("bits", -3);
    const int64_t zero[4] = {0, 0, 0, 0}, sign_fill[4] = {-1, 0, -1, 0};
    expect_i("shl 8", r = RUN1(shl, &s8, 1, ta), zero, 4), oi__tensor_free(r);
    expect_i("shl 70", r = RUN1(shl, &s70, 1, ta), zero, 4), oi__tensor_free(r);
    expect_i("shr 70", r = RUN1(shr, &s70, 1, ta), sign_fill, 4), oi__tensor_free(r);
    expect_i("shr 8", r = RUN1(shr, &s8, 1, ta), sign_fill, 4), oi__tensor_free(r);
    expect_i("shl -3", r = RUN1(shl, &sneg, 1, ta), a, 4), oi__tensor_free(r);
    oi__tensor_free(ta), oi__tensor_free(tb);

    /* i64 MIN / -1 wraps instead of trapping */
    const int64_t big[2] = {INT64_MIN, INT64_MIN}, m1[2] = {-1, -1}, bigw[2] = {INT64_MIN, INT64_MIN};
    ta = tensor_i(OI_DTYPE_I64, SHAPE(2), big), tb = tensor_i(OI_DTYPE_I64, SHAPE(2), m1);
    expect_i("div i64 min", r = RUN2(div, NULL, 0, ta, tb), bigw, 2), oi__tensor_free(r);
    expect_i("floor_div i64 min", r = RUN2(floor_div, NULL, 0, ta, tb), bigw, 2), oi__tensor_free(r);
    oi__tensor_free(ta), oi__tensor_free(tb);

    /* unsigned: sub wraps, clamp, relu/ints with an integer slope */
    const int64_t ua[3] = {1, 200, 7}, ub[3] = {2, 100, 7}, usub[3] = {255, 100, 0};
    ta = tensor_i(OI_DTYPE_U8, SHAPE(3), ua), tb = tensor_i(OI_DTYPE_U8, SHAPE(3), ub);
    expect_i("sub u8", r = RUN2(sub, NULL, 0, ta, tb), usub, 3), oi__tensor_free(r);
    oi__attr cl[2] = {attr_i("min", 0), attr_i("max", 3)};
    const int64_t uclamp[3] = {1, 3, 3};
    expect_i("clamp u8", r = RUN1(clamp, cl, 2, ta), uclamp, 3), oi__tensor_free(r);
    oi__tensor_free(ta), oi__tensor_free(tb);
    const int64_t rx[4] = {-3, 2, 9, -100};
    ta = tensor_i(OI_DTYPE_I8, SHAPE(4), rx);
    oi__attr rl[2] = {attr_i("alpha", 2), attr_i("clamp_max", 6)};
    /* -100 * 2 wraps to 56 in i8, then clamps to 6 */
    const int64_t rw[4] = {-6, 2, 6, 6};
    expect_i("relu i8", r = RUN1(relu, rl, 2, ta), rw, 4), oi__tensor_free(r);
    oi__attr fv = attr_i("value", -2);
    const int64_t fw[4] = {-2, -2, -2, -2};
    expect_i("fill i8", r = RUN1(fill, &fv, 1, ta), fw, 4), oi__tensor_free(r);
    oi__tensor_free(ta);
}

/* ---- cast: saturation, rounding modes, wrap ---- */
/* Every f16 bit pattern through the contiguous cast into f32 and back, and
 * into bf16: bit for bit what the scalar conversions of dtype.c give. */
static void test_cast_every_f16(void) {
    int64_t n = 65536;
    oi__tensor *h = oi__tensor_new(OI_DTYPE_F16, 1, &n);
    uint16_t *hb = (uint16_t *)oi__tensor_data(h);
    for (int64_t i = 0; i < n; i++)
        hb[i] = (uint16_t)i;
    oi__attr to_f32 = attr_dtype("to", OI_DTYPE_F32), to_f16 = attr_dtype("to", OI_DTYPE_F16);
    oi__attr to_bf16 = attr_dtype("to", OI_DTYPE_BF16);
    oi__tensor *f = RUN1(cast, &to_f32, 1, h), *back = f ? RUN1(cast, &to_f16, 1, f) : NULL;
    oi__tensor *bf = RUN1(cast, &to_bf16, 1, h);
    int bad_f32 = 0, bad_back = 0, bad_bf16 = 0;
    for (int64_t i = 0; f && back && bf && i < n; i++) {
        float want = oi_f16_to_f32((uint16_t)i), got = ((const float *)oi__tensor_data(f))[i];
        bad_f32 += memcmp(&want, &got, sizeof want) != 0;
        bad_back += ((const uint16_t *)oi__tensor_data(back))[i] != oi_f32_to_f16(want);
        bad_bf16 += ((const uint16_t *)oi__tensor_data(bf))[i] != oi_f32_to_bf16(want);
    }
    CHECK_MSG(f && back && bf && !bad_f32 && !bad_back && !bad_bf16,
              "f16 casts: %d f32, %d f16, %d bf16 patterns differ", bad_f32, bad_back, bad_bf16);
    oi__tensor_free(f), oi__tensor_free(back), oi__tensor_free(bf), oi__tensor_free(h);
}

static void test_cast(void) {
    const double x[6] = {-5, 0, 3.2, 127, 200, 250};
    oi__tensor *t = tensor_f(OI_DTYPE_F32, SHAPE(6), x), *r;
    oi__attr to_i32 = attr_dtype("to", OI_DTYPE_I32), to_u8 = attr_dtype("to", OI_DTYPE_U8);
    const int64_t i32w[6] = {-5, 0, 3, 127, 200, 250}, u8sat[6] = {0, 0, 3, 127, 200, 250};
    const int64_t u8wrap[6] = {251, 0, 3, 127, 200, 250};
    r = RUN1(cast, &to_i32, 1, t);
    CHECK(r && r->dtype == OI_DTYPE_I32);
    expect_i("cast f32->i32", r, i32w, 6), oi__tensor_free(r);
    expect_i("cast f32->u8 saturates", r = RUN1(cast, &to_u8, 1, t), u8sat, 6), oi__tensor_free(r);
    oi__attr wrap[2] = {to_u8, attr_b("saturate", false)};
    expect_i("cast f32->u8 wraps", r = RUN1(cast, wrap, 2, t), u8wrap, 6), oi__tensor_free(r);
    oi__tensor_free(t);

    const double e[6] = {1e10, -1e10, NAN, INFINITY, -INFINITY, 2147483647.0};
    t = tensor_f(OI_DTYPE_F64, SHAPE(6), e);
    const int64_t ew[6] = {INT32_MAX, INT32_MIN, 0, INT32_MAX, INT32_MIN, INT32_MAX};
    expect_i("cast saturate i32", r = RUN1(cast, &to_i32, 1, t), ew, 6), oi__tensor_free(r);
    oi__attr to_u16 = attr_dtype("to", OI_DTYPE_U16);
    const int64_t u16w[6] = {65535, 0, 0, 65535, 0, 65535};
    expect_i("cast saturate u16", r = RUN1(cast, &to_u16, 1, t), u16w, 6), oi__tensor_free(r);
    oi__tensor_free(t);

    const double h[4] = {2.5, -2.5, 2.4, -0.5};
    t = tensor_f(OI_DTYPE_F32, SHAPE(4), h);
    const int64_t nearest[4] = {3, -3, 2, -1}, floor_w[4] = {2, -3, 2, -1}, ceil_w[4] = {3, -2, 3, 0};
    const int64_t trunc_w[4] = {2, -2, 2, 0};
    oi__attr m[2] = {to_i32, attr_s("rounding_mode", "nearest")};
    expect_i("cast nearest", r = RUN1(cast, m, 2, t), nearest, 4), oi__tensor_free(r);
    m[1] = attr_s("rounding_mode", "floor");
    expect_i("cast floor", r = RUN1(cast, m, 2, t), floor_w, 4), oi__tensor_free(r);
    m[1] = attr_s("rounding_mode", "ceil");
    expect_i("cast ceil", r = RUN1(cast, m, 2, t), ceil_w, 4), oi__tensor_free(r);
    expect_i("cast trunc", r = RUN1(cast, &to_i32, 1, t), trunc_w, 4), oi__tensor_free(r);
    oi__tensor_free(t);

    /* integers widen exactly; floats narrow by round-to-nearest-even */
    const int64_t i4[3] = {-8, 7, -1};
    t = tensor_i(OI_DTYPE_I4, SHAPE(3), i4);
    oi__attr to_i16 = attr_dtype("to", OI_DTYPE_I16), to_f16 = attr_dtype("to", OI_DTYPE_F16);
    expect_i("cast i4->i16", r = RUN1(cast, &to_i16, 1, t), i4, 3), oi__tensor_free(r);
    oi__tensor_free(t);
    const double big[2] = {65519, 1e6}, bigw[2] = {65504, INFINITY};
    t = tensor_f(OI_DTYPE_F32, SHAPE(2), big);
    expect_f("cast f32->f16", r = RUN1(cast, &to_f16, 1, t), bigw, 2, 0), oi__tensor_free(r);
    oi__tensor_free(t);
    const int64_t ci[6] = {-3, 0, 5, 11, -8, 42};
    const double cf[6] = {-3, 0, 5, 11, -8, 42};
    t = tensor_i(OI_DTYPE_I32, SHAPE(6), ci);
    oi__attr to_f32 = attr_dtype("to", OI_DTYPE_F32);
    expect_f("cast i32->f32", r = RUN1(cast, &to_f32, 1, t), cf, 6, 0), oi__tensor_free(r);
    oi__tensor_free(t);
}

/* ---- reductions ---- */
static void test_reduce(void) {
    const double x[6] = {1, 5, -2, 4, 4, NAN};
    int64_t ax1 = 1, ax_neg = -1;
    oi__tensor *t = tensor_f(OI_DTYPE_F32, SHAPE(2, 3), x), *r;
    oi__attr a[2] = {attr_ints("axes", 1, &ax1), attr_b("keepdims", false)};
    const double sumw[2] = {4, NAN}, maxw[2] = {5, 4}, minw[2] = {-2, 4}, prodw[2] = {-10, NAN};
    r = RUN1(sum_axis, a, 2, t);
    expect_shape(r, SHAPE(2));
    expect_f("sum_axis", r, sumw, 2, 0), oi__tensor_free(r);
    expect_f("max_axis", r = RUN1(max_axis, a, 2, t), maxw, 2, 0), oi__tensor_free(r);
    expect_f("min_axis", r = RUN1(min_axis, a, 2, t), minw, 2, 0), oi__tensor_free(r);
    expect_f("prod_axis", r = RUN1(prod_axis, a, 2, t), prodw, 2, 0), oi__tensor_free(r);
    /* argmax ties: select_first picks index 0 of [4, 4], otherwise 1 */
    oi__attr am[2] = {attr_i("axis", ax_neg), attr_b("select_first", false)};
    const int64_t first[2] = {1, 0}, last[2] = {1, 1};
    expect_i("argmax first", r = RUN1(argmax_axis, am, 1, t), first, 2), oi__tensor_free(r);
    expect_i("argmax last", r = RUN1(argmax_axis, am, 2, t), last, 2), oi__tensor_free(r);
    oi__tensor_free(t);
    free_attr(&a[0]);

    /* f32 rows of 101 (whole vectors and a tail) in each ISA's lanes: the extreme
     * in the tail, a NaN first (kept), NaNs elsewhere (never taken), ties of 7 and
     * of +0/-0 (first or last), all -inf; wanted: the sequential rule by hand */
    enum { ROWS = 6, COLS = 101 };
    static double v[ROWS * COLS];
    for (int i = 0; i < ROWS * COLS; i++)
        v[i] = sin(0.37 * i) * 3;
    v[0 * COLS + 100] = 9, v[0 * COLS + 3] = -9;              /* row 0: max at the tail, min inside  */
    v[1 * COLS] = NAN, v[1 * COLS + 50] = 9;                  /* row 1: NaN first: index 0 both ways */
    v[2 * COLS + 10] = NAN, v[2 * COLS + 60] = 7, v[2 * COLS + 90] = 7, v[2 * COLS + 70] = NAN;
    for (int i = 0; i < COLS; i++)                            /* row 3: only zeros, signs mixed      */
        v[3 * COLS + i] = i % 3 ? 0.0 : -0.0;
    for (int i = 0; i < COLS; i++)                            /* row 4: all -inf                     */
        v[4 * COLS + i] = -INFINITY;
    v[5 * COLS + 17] = -7, v[5 * COLS + 88] = -7, v[5 * COLS + 40] = NAN;
    const int64_t want_max_first[ROWS] = {100, 0, 60, 0, 0, -1}, want_max_last[ROWS] = {100, 0, 90, 100, 100, -1};
    const int64_t want_min_first[ROWS] = {3, 0, -1, 0, 0, 17}, want_min_last[ROWS] = {3, 0, -1, 100, 100, 88};
    int64_t wmf[ROWS], wml[ROWS], wnf[ROWS], wnl[ROWS];
    for (int row = 0; row < ROWS; row++) { /* -1: found by the rule, written out here */
        const double *x = v + row * COLS;
        int64_t bf = 0, bl = 0, nf = 0, nl = 0;
        for (int i = 1; i < COLS; i++) {
            bf = x[i] > x[bf] ? i : bf, bl = x[i] >= x[bl] ? i : bl;
            nf = x[i] < x[nf] ? i : nf, nl = x[i] <= x[nl] ? i : nl;
        }
        wmf[row] = want_max_first[row] >= 0 ? want_max_first[row] : bf;
        wml[row] = want_max_last[row] >= 0 ? want_max_last[row] : bl;
        wnf[row] = want_min_first[row] >= 0 ? want_min_first[row] : nf;
        wnl[row] = want_min_last[row] >= 0 ? want_min_last[row] : nl;
    }
    t = tensor_f(OI_DTYPE_F32, SHAPE(ROWS, COLS), v);
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        char what[64];
        snprintf(what, sizeof what, "argmax f32 rows first %s", oi__gemm_isa_name(isas[ii]));
        expect_i(what, r = RUN1(argmax_axis, am, 1, t), wmf, ROWS), oi__tensor_free(r);
        snprintf(what, sizeof what, "argmax f32 rows last %s", oi__gemm_isa_name(isas[ii]));
        expect_i(what, r = RUN1(argmax_axis, am, 2, t), wml, ROWS), oi__tensor_free(r);
        snprintf(what, sizeof what, "argmin f32 rows first %s", oi__gemm_isa_name(isas[ii]));
        expect_i(what, r = RUN1(argmin_axis, am, 1, t), wnf, ROWS), oi__tensor_free(r);
        snprintf(what, sizeof what, "argmin f32 rows last %s", oi__gemm_isa_name(isas[ii]));
        expect_i(what, r = RUN1(argmin_axis, am, 2, t), wnl, ROWS), oi__tensor_free(r);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    oi__tensor_free(t);

    /* numpy references: f64 sum over axes [0, 2]; i32 mean truncates */
    int64_t ax02[2] = {0, -1};
    a[0] = attr_ints("axes", 2, ax02);
    t = tensor_f(OI_DTYPE_F64, SHAPE(3, 4, 5), r_x);
    r = RUN1(sum_axis, a, 2, t);
    expect_shape(r, SHAPE(4));
    expect_f("sum_axis f64 [0,2]", r, r_sum02, COUNT(r_sum02), 1e-12), oi__tensor_free(r);
    free_attr(&a[0]);
    a[0] = attr_ints("axes", 1, &ax_neg);
    expect_f("prod_axis f64", r = RUN1(prod_axis, a, 2, t), r_prod_last, COUNT(r_prod_last), 1e-12),
        oi__tensor_free(r);
    oi__tensor_free(t);
    a[1] = attr_b("keepdims", true);
    t = tensor_i(OI_DTYPE_I32, SHAPE(3, 7), r_i);
    r = RUN1(mean_axis, a, 2, t);
    expect_shape(r, SHAPE(3, 1));
    expect_i("mean_axis i32", r, r_mean1, COUNT(r_mean1)), oi__tensor_free(r);
    oi__tensor_free(t);
    free_attr(&a[0]);
}

/* sum and mean of f32 over a middle axis ([outer, R, inner] -> [outer, inner]):
 * the fast path adds whole rows; each value must equal one f32 accumulator
 * summed in order of the reduced index, as the generic path sums. Large
 * enough to run on the pool. */
static void test_reduce_middle_axis(void) {
    enum { OUTER = 3, R = 100, INNER = 301 };
    double *x = malloc(sizeof(double) * OUTER * R * INNER);
    double sum[OUTER * INNER], mean[OUTER * INNER];
    uint32_t seed = 12345u;
    for (int i = 0; i < OUTER * R * INNER; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((double)(seed >> 8) / (double)(1u << 24) * 2.0 - 1.0) * 100.0f;
    }
    for (int o = 0; o < OUTER; o++)
        for (int j = 0; j < INNER; j++) {
            float acc = 0.0f;
            for (int r = 0; r < R; r++)
                acc += (float)x[(o * R + r) * INNER + j];
            sum[o * INNER + j] = acc;
            mean[o * INNER + j] = (float)((double)acc / R);
        }
    int64_t ax1 = 1;
    oi__attr a[2] = {attr_ints("axes", 1, &ax1), attr_b("keepdims", false)};
    oi__tensor *t = tensor_f(OI_DTYPE_F32, SHAPE(OUTER, R, INNER), x), *r;
    r = RUN1(sum_axis, a, 2, t);
    expect_shape(r, SHAPE(OUTER, INNER));
    expect_f("sum_axis f32 middle axis", r, sum, OUTER * INNER, 0), oi__tensor_free(r);
    expect_f("mean_axis f32 middle axis", r = RUN1(mean_axis, a, 2, t), mean, OUTER * INNER, 0), oi__tensor_free(r);
    oi__tensor_free(t);
    free_attr(&a[0]);
    free(x);
}

/* ---- broadcasting, views, in-place, numpy references ---- */
static void test_broadcast_and_views(void) {
    oi__tensor *a = tensor_f(OI_DTYPE_F32, SHAPE(2, 3, 4, 5), bc_a), *b = tensor_f(OI_DTYPE_F32, SHAPE(5), bc_b);
    oi__tensor *c = tensor_f(OI_DTYPE_F32, SHAPE(4, 1), bc_c), *r;
    r = RUN2(add, NULL, 0, a, b);
    expect_shape(r, SHAPE(2, 3, 4, 5));
    expect_f("broadcast add rank4+rank1", r, bc_add, COUNT(bc_add), 0), oi__tensor_free(r);
    expect_f("broadcast add rank1+rank4", r = RUN2(add, NULL, 0, b, a), bc_add, COUNT(bc_add), 0), oi__tensor_free(r);
    expect_f("broadcast mul [4,1]", r = RUN2(mul, NULL, 0, a, c), bc_mul, COUNT(bc_mul), 0), oi__tensor_free(r);
    /* the same through the generic (f64) loop */
    oi__tensor *a64 = tensor_f(OI_DTYPE_F64, SHAPE(2, 3, 4, 5), bc_a), *b64 = tensor_f(OI_DTYPE_F64, SHAPE(5), bc_b);
    expect_f("broadcast add f64", r = RUN2(add, NULL, 0, a64, b64), bc_add, COUNT(bc_add), 0), oi__tensor_free(r);
    oi__tensor_free(a64), oi__tensor_free(b64);

    /* in place: the output is the first input's storage */
    oi__tensor *inplace = oi__tensor_share(a);
    const oi__tensor *ins[2] = {a, b};
    CHECK_OK(oi__op_run_cpu(OI_OP_add, NULL, 0, ins, 2, inplace));
    expect_f("in-place add", a, bc_add, COUNT(bc_add), 0);
    oi__tensor_free(inplace);
    oi__tensor_free(a), oi__tensor_free(b), oi__tensor_free(c);

    /* batched matmul with broadcast batch dims */
    oi__tensor *ma = tensor_f(OI_DTYPE_F32, SHAPE(2, 1, 3, 5), mm_a), *mb = tensor_f(OI_DTYPE_F32, SHAPE(4, 5, 7), mm_b);
    r = RUN2(matmul, NULL, 0, ma, mb);
    expect_shape(r, SHAPE(2, 4, 3, 7));
    expect_f("matmul batched", r, mm_out, COUNT(mm_out), 0), oi__tensor_free(r);
    oi__tensor *ma64 = tensor_f(OI_DTYPE_F64, SHAPE(2, 1, 3, 5), mm_a), *mb64 = tensor_f(OI_DTYPE_F64, SHAPE(4, 5, 7), mm_b);
    expect_f("matmul batched f64", r = RUN2(matmul, NULL, 0, ma64, mb64), mm_out, COUNT(mm_out), 0), oi__tensor_free(r);
    oi__tensor_free(ma), oi__tensor_free(mb), oi__tensor_free(ma64), oi__tensor_free(mb64);

    /* a transposed view (strides swapped) and an offset view */
    const double m[6] = {1, 2, 3, 4, 5, 6}; /* [[1,2,3],[4,5,6]] */
    oi__tensor *base = tensor_f(OI_DTYPE_F32, SHAPE(2, 3), m);
    oi__tensor *tr = oi__tensor_share(base);
    tr->shape[0] = 3, tr->shape[1] = 2, tr->strides[0] = 1, tr->strides[1] = 3; /* [[1,4],[2,5],[3,6]] */
    /* base [2,3] x tr [3,2] = [[14, 32], [32, 77]] */
    const double mmw[4] = {14, 32, 32, 77};
    expect_f("matmul transposed view", r = RUN2(matmul, NULL, 0, base, tr), mmw, 4, 0), oi__tensor_free(r);
    const double negw[6] = {-1, -4, -2, -5, -3, -6};
    expect_f("neg of a view", r = RUN1(neg, NULL, 0, tr), negw, 6, 0), oi__tensor_free(r);
    oi__tensor *row = oi__tensor_share(base);
    row->ndim = 1, row->shape[0] = 3, row->strides[0] = 1, row->offset = 3; /* [4,5,6] */
    const double sumw[1] = {15};
    int64_t ax0 = 0;
    oi__attr axes = attr_ints("axes", 1, &ax0);
    expect_f("sum of an offset view", r = RUN1(sum_axis, &axes, 1, row), sumw, 1, 0), oi__tensor_free(r);
    free_attr(&axes);
    /* batched f32 matmul on a view with no unit stride (every other column
     * of [6, 40, 48]) times a B shared by the batches: heads run as pool
     * tasks, each gemm packing its A straight from the strides */
    {
        enum { H = 6, M = 40, W = 48, K = 24, N = 36 };
        static double av[H * M * W], bv[K * N], want[H * M * N];
        for (int i = 0; i < H * M * W; i++)
            av[i] = (double)((i * 7) % 13) - 6.0;
        for (int i = 0; i < K * N; i++)
            bv[i] = (double)((i * 5) % 11) * 0.25 - 1.0;
        for (int h = 0; h < H; h++)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    double sum = 0.0;
                    for (int p = 0; p < K; p++)
                        sum += av[(h * M + i) * W + 2 * p] * bv[p * N + j];
                    want[(h * M + i) * N + j] = sum;
                }
        oi__tensor *wide_a = tensor_f(OI_DTYPE_F32, SHAPE(H, M, W), av), *shared_b = tensor_f(OI_DTYPE_F32, SHAPE(K, N), bv);
        oi__tensor *stepped = oi__tensor_share(wide_a);
        stepped->shape[2] = K, stepped->strides[2] = 2;
        expect_f("matmul stepped view x shared B", r = RUN2(matmul, NULL, 0, stepped, shared_b), want, H * M * N, 0),
            oi__tensor_free(r);
        oi__tensor_free(stepped), oi__tensor_free(wide_a), oi__tensor_free(shared_b);
    }
    /* matmul in place on a square matrix: computed into a temporary */
    const double sq[4] = {1, 2, 3, 4}, sqw[4] = {7, 10, 15, 22};
    oi__tensor *s = tensor_f(OI_DTYPE_F32, SHAPE(2, 2), sq), *s_out = oi__tensor_share(s);
    const oi__tensor *sins[2] = {s, s};
    CHECK_OK(oi__op_run_cpu(OI_OP_matmul, NULL, 0, sins, 2, s_out));
    expect_f("matmul in place", s, sqw, 4, 0);
    oi__tensor_free(s_out), oi__tensor_free(s);
    /* neg in place on the transposed view writes through the view */
    oi__tensor *tr_out = oi__tensor_share(tr);
    const oi__tensor *tins[1] = {tr};
    CHECK_OK(oi__op_run_cpu(OI_OP_neg, NULL, 0, tins, 1, tr_out));
    const double base_neg[6] = {-1, -2, -3, -4, -5, -6};
    expect_f("in-place through a view", base, base_neg, 6, 0);
    oi__tensor_free(tr_out), oi__tensor_free(tr), oi__tensor_free(row), oi__tensor_free(base);

    /* i16 wrapping over 37 elements; f16 add rounds once (numpy) */
    oi__tensor *wa = tensor_i(OI_DTYPE_I16, SHAPE(37), w_a), *wb = tensor_i(OI_DTYPE_I16, SHAPE(37), w_b);
    expect_i("mul i16 wraps", r = RUN2(mul, NULL, 0, wa, wb), w_mul, COUNT(w_mul)), oi__tensor_free(r);
    expect_i("add i16 wraps", r = RUN2(add, NULL, 0, wa, wb), w_add, COUNT(w_add)), oi__tensor_free(r);
    oi__tensor_free(wa), oi__tensor_free(wb);
    oi__tensor *ha = tensor_f(OI_DTYPE_F16, SHAPE(11), h_a), *hb = tensor_f(OI_DTYPE_F16, SHAPE(11), h_b);
    expect_f("add f16", r = RUN2(add, NULL, 0, ha, hb), h_add, COUNT(h_add), 0), oi__tensor_free(r);
    oi__tensor_free(ha), oi__tensor_free(hb);
}

/* ---- bad input: every error names the op and says why ---- */
static void expect_infer_error(const char *what, oi_op op, const oi__attr *attrs, size_t n_attrs,
                               const oi__op_sig *ins, size_t n, oi_dtype declared, const char *part) {
    oi__op_sig out;
    oi_status s = oi__op_infer(op, attrs, n_attrs, ins, n, declared, &out);
    CHECK_MSG(s == OI_ERROR_VALIDATION, "%s: got %s", what, oi_status_name(s));
    CHECK_STR_CONTAINS(oi_last_error(), oi_op_name(op));
    CHECK_STR_CONTAINS(oi_last_error(), part);
}

static oi__op_sig sig(oi_dtype t, int ndim, const int64_t *shape) {
    oi__op_sig s;
    memset(&s, 0, sizeof s);
    s.dtype = t;
    s.ndim = ndim;
    for (int i = 0; i < ndim; i++)
        s.shape[i] = shape[i];
    return s;
}

/* Broadcast along inner and middle dims ([B,S,1] with [B,S,D], [N,C,1,1]
 * with [N,C,H,W], a mask [B,1,1,T] with [B,H,S,T], an outer product) and
 * over the thread pool, for each float op and both float widths, against a
 * broadcasting loop written out here. */
typedef struct { int ndim; int64_t out[4], a[4], b[4]; } bcast_case;

static int64_t bcast_index(int ndim, const int64_t *out, const int64_t *in, int64_t flat) {
    int64_t idx = 0, stride = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        int64_t i = flat % out[d];
        flat /= out[d];
        if (in[d] != 1)
            idx += i * stride;
        stride *= in[d];
    }
    return idx;
}

static double bcast_ref(oi_op op, double x, double z, bool single) {
    double r = op == OI_OP_add ? x + z : op == OI_OP_sub ? x - z : op == OI_OP_mul ? x * z : z == 0 ? NAN : x / z;
    return single ? (double)(float)r : r;
}

static void test_broadcast_rows(void) {
    const bcast_case cases[] = {
        {3, {2, 3, 4}, {2, 3, 4}, {2, 3, 1}},
        {3, {2, 3, 4}, {2, 3, 1}, {2, 3, 4}},
        {3, {2, 3, 4}, {2, 3, 4}, {2, 1, 4}},
        {4, {2, 3, 4, 5}, {2, 3, 4, 5}, {2, 3, 1, 1}},
        {4, {2, 4, 3, 5}, {2, 4, 3, 5}, {2, 1, 1, 5}},
        {2, {5, 7}, {5, 1}, {1, 7}},
        {3, {64, 128, 16}, {64, 128, 16}, {64, 128, 1}}, /* 2^17 elements: over the pool */
    };
    const oi_op ops[4] = {OI_OP_add, OI_OP_sub, OI_OP_mul, OI_OP_div};
    const oi_dtype types[2] = {OI_DTYPE_F32, OI_DTYPE_F64};
    for (size_t c = 0; c < COUNT(cases); c++) {
        const bcast_case *k = &cases[c];
        int64_t na = oi__shape_numel(k->ndim, k->a), nb = oi__shape_numel(k->ndim, k->b);
        int64_t n = oi__shape_numel(k->ndim, k->out);
        double *va = malloc((size_t)na * sizeof *va), *vb = malloc((size_t)nb * sizeof *vb);
        for (int64_t i = 0; i < na; i++)
            va[i] = (double)((i * 7) % 23) - 11.5;
        for (int64_t i = 0; i < nb; i++)
            vb[i] = (double)((i * 5) % 19) - 9; /* zeros: div's mask */
        for (int t = 0; t < 2; t++) {
            oi__tensor *a = tensor_f(types[t], k->ndim, k->a, va), *b = tensor_f(types[t], k->ndim, k->b, vb);
            for (int o = 0; o < 4; o++) {
                oi__tensor *r = run_op(ops[o], NULL, 0, OI_DTYPE_INVALID, 2, a, b, NULL);
                int bad = 0;
                for (int64_t i = 0; r && i < n; i++) {
                    double want = bcast_ref(ops[o], va[bcast_index(k->ndim, k->out, k->a, i)],
                                            vb[bcast_index(k->ndim, k->out, k->b, i)], types[t] == OI_DTYPE_F32);
                    double got = oi__load_f64(types[t], oi__tensor_data(r), i);
                    bad += !(got == want || (isnan(got) && isnan(want)));
                }
                CHECK_MSG(r && bad == 0, "case %zu %s %s: %d of %lld elements differ", c, oi_op_name(ops[o]),
                          oi_dtype_name(types[t]), bad, (long long)n);
                oi__tensor_free(r);
            }
            oi__tensor_free(a), oi__tensor_free(b);
        }
        free(va), free(vb);
    }
}

/* clamp and relu's clamps on the vector path keep fmin/fmax's answers:
 * NaN gives the lower bound (clamp) or stays NaN (relu), -0 stays -0
 * (checked on the sign bit: -0 == 0 for expect_f). */
static void test_clamp_vector_path(void) {
    const double x[8] = {-0.0, NAN, -INFINITY, INFINITY, 0, 6, 7, -1};
    double v[72], want_clamp[72], want_relu[72];
    for (int i = 0; i < 72; i++) { /* 72: one whole vector block and a tail */
        v[i] = i >= 8 && i % 8 >= 4 ? x[i % 8] + i * 0.25 : x[i % 8];
        want_clamp[i] = isnan(v[i]) ? 0 : v[i] < 0 ? 0 : v[i] > 6 ? 6 : v[i];
        /* relu multiplies negatives by the slope: -inf * 0 is NaN */
        want_relu[i] = isnan(v[i]) || v[i] == -INFINITY ? NAN : v[i] < 0 ? 0 : v[i] > 6 ? 6 : v[i];
    }
    want_clamp[0] = want_relu[0] = -0.0;
    oi__tensor *a = tensor_f(OI_DTYPE_F32, SHAPE(72), v), *r;
    oi__attr cl[2] = {attr_f("min", 0), attr_f("max", 6)}, six = attr_f("clamp_max", 6);
    expect_f("clamp vector", r = RUN1(clamp, cl, 2, a), want_clamp, 72, 0);
    CHECK_MSG(r && signbit(((const float *)oi__tensor_data(r))[0]), "clamp(-0) keeps the sign");
    oi__tensor_free(r);
    /* relu's blocks run in the ISA's lanes: each ISA, relu6 and a leaky relu
     * clamped on both sides (slope 0.5, clamps [-0.25, 6]) */
    double want_leaky[72];
    for (int i = 0; i < 72; i++) {
        double y = isnan(v[i]) ? NAN : v[i] < 0 ? v[i] * 0.5 : v[i];
        want_leaky[i] = isnan(y) ? NAN : y > 6 ? 6 : y < -0.25 ? -0.25 : y;
    }
    want_leaky[0] = -0.0;
    oi__attr leaky[3] = {attr_f("alpha", 0.5), attr_f("clamp_max", 6), attr_f("clamp_min", -0.25)};
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        char what[64];
        snprintf(what, sizeof what, "relu6 vector %s", oi__gemm_isa_name(isas[ii]));
        expect_f(what, r = RUN1(relu, &six, 1, a), want_relu, 72, 0);
        CHECK_MSG(r && signbit(((const float *)oi__tensor_data(r))[0]), "relu(-0) keeps the sign");
        oi__tensor_free(r);
        snprintf(what, sizeof what, "leaky relu clamped %s", oi__gemm_isa_name(isas[ii]));
        expect_f(what, r = RUN1(relu, leaky, 3, a), want_leaky, 72, 0);
        oi__tensor_free(r);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    oi__tensor_free(a);
}

/* hard_sigmoid and hard_swish against the ONNX formulas worked out here in
 * f64 from f32-rounded steps (alpha, alpha * x, + beta, then x * h), on every
 * ISA's lanes (72: a whole block and a tail), in f64 and in f16 (the
 * generic path). */
static float hs_ref(float x, float alpha, float beta) {
    volatile float t = (float)((double)alpha * x); /* no fused multiply-add */
    float h = (float)((double)t + beta);
    return isnan(h) ? h : h > 1 ? 1.0f : h < 0 ? 0.0f : h;
}

static void test_hard_sigmoid_swish(void) {
    double v[72], want_sig[72], want_sig2[72], want_swish[72], want_sig64[72], want_swish64[72];
    const double special[6] = {NAN, -INFINITY, INFINITY, -3.0, 3.0, 2.5};
    for (int i = 0; i < 72; i++) {
        v[i] = i < 6 ? special[i] : (float)((i - 36) * 0.173);
        float x = (float)v[i];
        want_sig[i] = hs_ref(x, 0.2f, 0.5f);
        want_sig2[i] = hs_ref(x, 0.5f, 0.25f);
        want_swish[i] = (float)((double)x * hs_ref(x, 1.0f / 6.0f, 0.5f));
        double h = 0.2 * v[i] + 0.5, h6 = v[i] * (1.0 / 6.0) + 0.5;
        want_sig64[i] = isnan(h) ? h : h > 1 ? 1 : h < 0 ? 0 : h;
        want_swish64[i] = v[i] * (isnan(h6) ? h6 : h6 > 1 ? 1 : h6 < 0 ? 0 : h6);
    }
    want_swish[1] = want_swish64[1] = NAN; /* -inf * 0 */
    CHECK(want_sig[3] == 0 && want_sig[4] == 1 && fabs(want_sig[5] - 1) < 1e-7);
    CHECK(want_swish[3] == 0 && want_swish[4] == 3);
    oi__tensor *a = tensor_f(OI_DTYPE_F32, SHAPE(72), v), *r;
    oi__attr ab[2] = {attr_f("alpha", 0.5), attr_f("beta", 0.25)};
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        char what[64];
        snprintf(what, sizeof what, "hard_sigmoid %s", oi__gemm_isa_name(isas[ii]));
        expect_f(what, r = RUN1(hard_sigmoid, NULL, 0, a), want_sig, 72, 0), oi__tensor_free(r);
        snprintf(what, sizeof what, "hard_sigmoid alpha beta %s", oi__gemm_isa_name(isas[ii]));
        expect_f(what, r = RUN1(hard_sigmoid, ab, 2, a), want_sig2, 72, 0), oi__tensor_free(r);
        snprintf(what, sizeof what, "hard_swish %s", oi__gemm_isa_name(isas[ii]));
        expect_f(what, r = RUN1(hard_swish, NULL, 0, a), want_swish, 72, 0), oi__tensor_free(r);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    oi__tensor_free(a);
    a = tensor_f(OI_DTYPE_F64, SHAPE(72), v);
    expect_f("hard_sigmoid f64", r = RUN1(hard_sigmoid, NULL, 0, a), want_sig64, 72, 1e-15), oi__tensor_free(r);
    expect_f("hard_swish f64", r = RUN1(hard_swish, NULL, 0, a), want_swish64, 72, 1e-14), oi__tensor_free(r);
    oi__tensor_free(a);
    a = tensor_f(OI_DTYPE_F16, SHAPE(72), v);
    double want16[72];
    for (int i = 0; i < 72; i++) { /* f16 inputs exact in f32; results within an f16 half-ulp */
        float x = (float)oi__load_f64(OI_DTYPE_F16, oi__tensor_data(a), i);
        want16[i] = i == 1 ? NAN : (float)((double)x * hs_ref(x, 1.0f / 6.0f, 0.5f));
    }
    expect_f("hard_swish f16", r = RUN1(hard_swish, NULL, 0, a), want16, 72, 4e-3), oi__tensor_free(r);
    oi__tensor_free(a);
}

static void test_errors(void) {
    oi__op_sig f23[3] = {sig(OI_DTYPE_F32, SHAPE(2, 3)), sig(OI_DTYPE_F32, SHAPE(2, 3)), sig(OI_DTYPE_F32, SHAPE(2, 3))};
    oi__op_sig b2[2] = {sig(OI_DTYPE_BOOL, SHAPE(2)), sig(OI_DTYPE_BOOL, SHAPE(2))};
    oi__op_sig mixed[2] = {sig(OI_DTYPE_F32, SHAPE(2)), sig(OI_DTYPE_F16, SHAPE(2))};
    oi__op_sig i8s[2] = {sig(OI_DTYPE_I8, SHAPE(2)), sig(OI_DTYPE_I8, SHAPE(2))};
    expect_infer_error("sub bool", OI_OP_sub, NULL, 0, b2, 2, OI_DTYPE_INVALID, "unsupported dtype bool");
    expect_infer_error("floor f32", OI_OP_floor, NULL, 0, i8s, 1, OI_DTYPE_INVALID, "expected one of: f16 f32 f64 bf16 f8");
    expect_infer_error("mixed", OI_OP_add, NULL, 0, mixed, 2, OI_DTYPE_INVALID, "input 1 has dtype f16");
    expect_infer_error("arity", OI_OP_add, NULL, 0, f23, 1, OI_DTYPE_INVALID, "expects 2 inputs, got 1");
    oi__attr bogus = attr_f("slope", 1);
    expect_infer_error("unknown attr", OI_OP_relu, &bogus, 1, f23, 1, OI_DTYPE_INVALID, "unknown parameter 'slope'");
    oi__attr dup[2] = {attr_f("alpha", 0.1), attr_f("negative_slope", 0.2)};
    expect_infer_error("alias twice", OI_OP_relu, dup, 2, f23, 1, OI_DTYPE_INVALID, "given twice");
    oi__attr kind = attr_s("clamp_max", "six");
    expect_infer_error("wrong kind", OI_OP_relu, &kind, 1, f23, 1, OI_DTYPE_INVALID, "must be a number or bool");
    oi__attr fslope = attr_f("alpha", 0.2);
    expect_infer_error("float slope on ints", OI_OP_relu, &fslope, 1, i8s, 1, OI_DTYPE_INVALID, "must be an integer");
    expect_infer_error("shl no bits", OI_OP_shl, NULL, 0, i8s, 1, OI_DTYPE_INVALID, "missing required parameter 'bits'");
    expect_infer_error("cast no to", OI_OP_cast, NULL, 0, f23, 1, OI_DTYPE_INVALID, "missing required parameter 'to'");
    expect_infer_error("fill no value", OI_OP_fill, NULL, 0, f23, 1, OI_DTYPE_INVALID, "'value'");
    expect_infer_error("sum no axes", OI_OP_sum_axis, NULL, 0, f23, 1, OI_DTYPE_INVALID, "'axes'");
    oi__attr neg_fill = attr_i("value", -1);
    oi__op_sig u8s[1] = {sig(OI_DTYPE_U8, SHAPE(2))};
    expect_infer_error("fill u8 -1", OI_OP_fill, &neg_fill, 1, u8s, 1, OI_DTYPE_INVALID, "must be >= 0");
    int64_t ax5 = 5;
    oi__attr axes = attr_ints("axes", 1, &ax5);
    expect_infer_error("axis range", OI_OP_sum_axis, &axes, 1, f23, 1, OI_DTYPE_INVALID, "out of range");
    free_attr(&axes);
    oi__attr empty = attr_ints("axes", 0, NULL);
    expect_infer_error("empty axes", OI_OP_sum_axis, &empty, 1, f23, 1, OI_DTYPE_INVALID, "must not be empty");
    oi__op_sig bad_bc[2] = {sig(OI_DTYPE_F32, SHAPE(2, 3)), sig(OI_DTYPE_F32, SHAPE(4))};
    expect_infer_error("broadcast", OI_OP_add, NULL, 0, bad_bc, 2, OI_DTYPE_INVALID, "do not broadcast");
    oi__op_sig bad_eq[2] = {sig(OI_DTYPE_F32, SHAPE(2, 3)), sig(OI_DTYPE_F32, SHAPE(3))};
    expect_infer_error("fma shapes", OI_OP_fma, NULL, 0, bad_eq, 1, OI_DTYPE_INVALID, "expects 3 inputs");
    oi__op_sig mm[2] = {sig(OI_DTYPE_F32, SHAPE(2, 3)), sig(OI_DTYPE_F32, SHAPE(4, 2))};
    expect_infer_error("matmul inner", OI_OP_matmul, NULL, 0, mm, 2, OI_DTYPE_INVALID, "inner dimensions differ");
    oi__op_sig mm1[2] = {sig(OI_DTYPE_F32, SHAPE(3)), sig(OI_DTYPE_F32, SHAPE(3, 2))};
    expect_infer_error("matmul rank", OI_OP_matmul, NULL, 0, mm1, 2, OI_DTYPE_INVALID, "rank >= 2");
    /* accumulate rules (HEAD's tests: acc=i16 on a float sum, acc=f16 on f32 matmul) */
    oi__attr acc16[3] = {attr_ints("axes", 1, &ax5), attr_dtypes("acc", OI_DTYPE_I16, OI_DTYPE_I16)};
    acc16[0].ints[0] = 1;
    expect_infer_error("sum acc i16", OI_OP_sum_axis, acc16, 2, f23, 1, OI_DTYPE_INVALID, "acc=i16");
    free_attr(&acc16[0]), free_attr(&acc16[1]);
    oi__attr accf16 = attr_dtypes("acc", OI_DTYPE_F16, OI_DTYPE_F16);
    oi__op_sig mm2[2] = {sig(OI_DTYPE_F32, SHAPE(2, 3)), sig(OI_DTYPE_F32, SHAPE(3, 2))};
    expect_infer_error("matmul acc f16", OI_OP_matmul, &accf16, 1, mm2, 2, OI_DTYPE_INVALID, "acc=f16");
    free_attr(&accf16);
    oi__attr acc8 = attr_dtype("acc", OI_DTYPE_I8);
    expect_infer_error("acc narrower", OI_OP_add, &acc8, 1, i8s, 2, OI_DTYPE_INVALID, "acc=i8");
    oi__attr acc_on_div = attr_dtype("acc", OI_DTYPE_I16);
    expect_infer_error("acc on div", OI_OP_div, &acc_on_div, 1, i8s, 2, OI_DTYPE_INVALID, "unknown parameter 'acc'");
    expect_infer_error("declared mismatch", OI_OP_add, NULL, 0, f23, 2, OI_DTYPE_F16, "declared f16");
    expect_infer_error("declared sign", OI_OP_sign, NULL, 0, f23, 1, OI_DTYPE_F32, "declared f32");
    oi__attr to_u8 = attr_dtype("to", OI_DTYPE_U8);
    expect_infer_error("cast i8->u8", OI_OP_cast, &to_u8, 1, i8s, 1, OI_DTYPE_INVALID, "signedness");
    oi__attr to_i4 = attr_dtype("to", OI_DTYPE_I4);
    expect_infer_error("cast ->i4", OI_OP_cast, &to_i4, 1, f23, 1, OI_DTYPE_INVALID, "cannot cast to i4");
    oi__attr mode[2] = {attr_dtype("to", OI_DTYPE_I32), attr_s("rounding_mode", "banker")};
    expect_infer_error("cast mode", OI_OP_cast, mode, 2, f23, 1, OI_DTYPE_INVALID, "rounding_mode must be \"trunc\", \"floor\", \"ceil\" or \"nearest\", got \"banker\"");

    /* the kernel rejects an output of the wrong shape and out-of-range views */
    const double v[6] = {1, 2, 3, 4, 5, 6};
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(2, 3), v), *bad = oi__tensor_new(OI_DTYPE_F32, SHAPE(3, 2));
    const oi__tensor *ins[2] = {x, x};
    CHECK_STATUS(oi__op_run_cpu(OI_OP_add, NULL, 0, ins, 2, bad), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "add: the output has shape [3, 2]");
    oi__tensor *view = oi__tensor_share(x);
    view->offset = 4; /* reaches element 9 of 6 */
    const oi__tensor *vins[1] = {view};
    oi__tensor *out = oi__tensor_new(OI_DTYPE_F32, SHAPE(2, 3));
    CHECK_STATUS(oi__op_run_cpu(OI_OP_neg, NULL, 0, vins, 1, out), OI_ERROR_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(oi_last_error(), "outside its storage");
    oi__tensor_free(view), oi__tensor_free(out), oi__tensor_free(bad), oi__tensor_free(x);
}

/* ---- every op x every dtype of its row (and every acc pair), from the table ---- */
typedef struct sweep_op {
    const char *name;
    int arity;
    uint32_t dtypes, acc_dtypes;
    const char *shape;
} sweep_op;
#define SWEEP_OP_ROW(name, arity, category, shape, out, flags, dtypes, acc_dtypes, kernel, summary) \
    {#name, arity, dtypes, acc_dtypes, #shape},
static const sweep_op sweep_ops[] = {OI_OP_LIST(SWEEP_OP_ROW)};

typedef struct sweep_param {
    const char *op, *name, *type, *required;
} sweep_param;
#define SWEEP_PARAM_ROW(op, name, type, required, def, default_text, doc) {#op, #name, #type, #required},
static const sweep_param sweep_params[] = {OI_PARAM_LIST(SWEEP_PARAM_ROW)};

/* A valid value for each required parameter (axis 1 of a [2, 3] input). */
static size_t required_attrs(const char *op, oi__attr *attrs, int64_t *axis) {
    size_t n = 0;
    for (size_t p = 0; p < COUNT(sweep_params); p++) {
        const sweep_param *sp = &sweep_params[p];
        if (strcmp(sp->op, op) != 0 || strcmp(sp->required, "REQ") != 0)
            continue;
        if (strcmp(sp->type, "INT_LIST") == 0)
            attrs[n++] = attr_ints(sp->name, 1, axis);
        else if (strcmp(sp->type, "INT") == 0)
            attrs[n++] = attr_i(sp->name, 1);
        else if (strcmp(sp->type, "DTYPE") == 0)
            attrs[n++] = attr_dtype(sp->name, OI_DTYPE_F64);
        else
            attrs[n++] = attr_i(sp->name, 1);
    }
    return n;
}

static bool sweep_one(oi_op op, oi_dtype t, const oi__attr *attrs, size_t n_attrs, oi_dtype declared) {
    int64_t a_shape[2] = {2, 3}, b_shape[2] = {3, 2};
    bool is_matmul = op == OI_OP_matmul;
    oi__tensor *ins[3];
    oi__op_sig sigs[3], out_sig;
    int arity = oi__op_arity(op);
    for (int i = 0; i < arity; i++) {
        ins[i] = oi__tensor_new(t, 2, (is_matmul && i == 1) ? b_shape : a_shape);
        for (int64_t e = 0; e < 6; e++) /* 1, 0, -1, 1, 0, -1 wrapped into t (t1 reads 0 as -1) */
            oi__store_i64(t, oi__tensor_data(ins[i]), e, 1 - (e + i) % 3);
        sig_of(ins[i], &sigs[i]);
    }
    oi_status s = oi__op_infer(op, attrs, n_attrs, sigs, (size_t)arity, declared, &out_sig);
    bool ok = s == OI_OK;
    if (ok) {
        oi__tensor *out = oi__tensor_new(out_sig.dtype, out_sig.ndim, out_sig.shape);
        s = oi__op_run_cpu(op, attrs, n_attrs, (const oi__tensor *const *)ins, (size_t)arity, out);
        ok = s == OI_OK && (declared == OI_DTYPE_INVALID || out->dtype == declared);
        oi__tensor_free(out);
    }
    CHECK_MSG(ok, "%s on %s (declared %s): %s", oi_op_name(op), oi_dtype_name(t),
              declared ? oi_dtype_name(declared) : "-", oi_last_error());
    for (int i = 0; i < arity; i++)
        oi__tensor_free(ins[i]);
    return ok;
}

static void test_every_op_and_dtype(void) {
    int runs = 0;
    int64_t axis = 1;
    for (int op = 0; op < (int)OI_OP_COUNT; op++) {
        const sweep_op *row = &sweep_ops[op];
        CHECK(strcmp(row->name, oi_op_name((oi_op)op)) == 0);
        CHECK_EQ_INT(row->arity, oi__op_arity((oi_op)op));
        if (strcmp(row->shape, "CUSTOM") == 0)
            continue; /* op-specific shapes and inputs: their family tests (test_shape_ops, test_nn_ops) */
        oi__attr attrs[4];
        size_t n = required_attrs(row->name, attrs, &axis);
        for (int t = 1; t < (int)OI_DTYPE_COUNT; t++) {
            if (row->dtypes & (1u << (unsigned)t)) {
                bool ok = sweep_one((oi_op)op, (oi_dtype)t, attrs, n, OI_DTYPE_INVALID);
                runs += ok;
            } else if (!(row->acc_dtypes & (1u << (unsigned)t))) {
                /* a dtype outside the row is refused by validation */
                oi__op_sig sigs[3], out;
                for (int i = 0; i < 3; i++)
                    sigs[i] = sig((oi_dtype)t, SHAPE(2, 3));
                CHECK_MSG(oi__op_infer((oi_op)op, attrs, n, sigs, (size_t)row->arity, OI_DTYPE_INVALID, &out) ==
                              OI_ERROR_VALIDATION,
                          "%s accepted %s", row->name, oi_dtype_name((oi_dtype)t));
            }
            /* accumulate mode: every wider accumulator of the same kind */
            for (int acc = 1; acc < (int)OI_DTYPE_COUNT && (row->acc_dtypes & (1u << (unsigned)t)); acc++) {
                bool is_float = oi__dtype_is_float((oi_dtype)t);
                bool pair = is_float ? (acc == OI_DTYPE_F32 || acc == OI_DTYPE_F64) &&
                                           oi_dtype_bits((oi_dtype)acc) >= oi_dtype_bits((oi_dtype)t)
                                     : !oi__dtype_is_packed((oi_dtype)acc) && !oi__dtype_is_float((oi_dtype)acc) &&
                                           acc != OI_DTYPE_BOOL && acc != OI_DTYPE_BITSET &&
                                           oi__dtype_is_signed((oi_dtype)acc) == oi__dtype_is_signed((oi_dtype)t) &&
                                           oi_dtype_bits((oi_dtype)acc) > oi_dtype_bits((oi_dtype)t);
                if (!pair)
                    continue;
                attrs[n] = attr_dtype("acc", (oi_dtype)acc);
                runs += sweep_one((oi_op)op, (oi_dtype)t, attrs, n + 1, (oi_dtype)acc);
            }
        }
        for (size_t i = 0; i < n; i++)
            free_attr(&attrs[i]);
    }
    CHECK(runs > 600);
    printf("test_kernels: %d op x dtype runs from the table\n", runs);
}

int main(void) {
    test_table();
    test_every_op_and_dtype();
    test_rounding_vectors();
    test_bitwise_vectors();
    test_misc_vectors();
    test_packed_vectors();
    test_accumulate();
    test_float_edges();
    test_integer_edges();
    test_cast();
    test_cast_every_f16();
    test_reduce();
    test_reduce_middle_axis();
    test_broadcast_and_views();
    test_broadcast_rows();
    test_clamp_vector_path();
    test_hard_sigmoid_swish();
    test_errors();
    return check_result("test_kernels");
}
