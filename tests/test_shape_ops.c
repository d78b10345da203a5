/* test_shape_ops.c - the shape, view, gemm, convolution and pooling ops
 * (kernels/shape.c, kernels/conv.c) through the executor's seam
 * (oi__op_infer + oi__op_run_cpu), oi__op_view, and a graph whose layout
 * ops become views. Expected values come from numpy
 * (tests/gen_shape_refs.py -> tests/shape_refs.h) or are worked out by
 * hand next to the check. */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"
#include "check.h"
#include "shape_refs.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "op_test_util.h"
#define REF_SHAPE(name) name##_ndim, name##_shape
#define INTS(...) (int)COUNT(((const int64_t[]){__VA_ARGS__})), (const int64_t[]){__VA_ARGS__}

/* ---- tensors and attributes ---- */
static void free_attrs(oi__attr *a, size_t n) {
    for (size_t i = 0; i < n; i++)
        arrfree(a[i].ints);
}

static void sig_of(const oi__tensor *t, oi__op_sig *s) {
    memset(s, 0, sizeof *s);
    s->dtype = t->dtype;
    s->ndim = t->ndim;
    memcpy(s->shape, t->shape, sizeof s->shape);
}

/* Infers the output, allocates it and runs the kernel; NULL on failure. */
static oi__tensor *run_n(oi_op op, const oi__attr *attrs, size_t n_attrs, size_t n, const oi__tensor *const *ins) {
    oi__op_sig sigs[8], out_sig;
    for (size_t i = 0; i < n; i++)
        sig_of(ins[i], &sigs[i]);
    oi_status s = oi__op_infer(op, attrs, n_attrs, sigs, n, OI_DTYPE_INVALID, &out_sig);
    CHECK_MSG(s == OI_OK, "infer %s: %s", oi_op_name(op), oi_last_error());
    if (s != OI_OK)
        return NULL;
    oi__tensor *out = oi__tensor_new(out_sig.dtype, out_sig.ndim, out_sig.shape);
    s = oi__op_run_cpu(op, attrs, n_attrs, ins, n, out);
    CHECK_MSG(s == OI_OK, "run %s: %s", oi_op_name(op), oi_last_error());
    if (s != OI_OK) {
        oi__tensor_free(out);
        return NULL;
    }
    return out;
}

static oi__tensor *run1(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *a) {
    return run_n(op, attrs, n_attrs, 1, &a);
}

static oi__tensor *run2(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *a, const oi__tensor *b) {
    const oi__tensor *ins[2] = {a, b};
    return run_n(op, attrs, n_attrs, 2, ins);
}

static oi__tensor *run3(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *a, const oi__tensor *b,
                        const oi__tensor *c) {
    const oi__tensor *ins[3] = {a, b, c};
    return run_n(op, attrs, n_attrs, 3, ins);
}

/* Element i of t in row-major order, whatever its strides. */
static double element_f(const oi__tensor *t, int64_t i) {
    int64_t at = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        at += (i % t->shape[d]) * t->strides[d];
        i /= t->shape[d];
    }
    return oi__load_f64(t->dtype, oi__tensor_data(t), at);
}

static uint64_t element_bits(const oi__tensor *t, int64_t i) {
    int64_t at = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        at += (i % t->shape[d]) * t->strides[d];
        i /= t->shape[d];
    }
    return oi__load_bits(t->dtype, oi__tensor_data(t), at);
}

static void expect_shape(const char *what, const oi__tensor *t, int ndim, const int64_t *shape) {
    if (!t)
        return;
    CHECK_MSG(t->ndim == ndim, "%s: rank %d, want %d", what, t->ndim, ndim);
    for (int d = 0; d < ndim && d < t->ndim; d++)
        CHECK_MSG(t->shape[d] == shape[d], "%s: dim %d is %lld, want %lld", what, d, (long long)t->shape[d],
                  (long long)shape[d]);
}

/* Shape and every element (row-major, NaN equals NaN) within tol * (1 + |want|). */
static void expect_f(const char *what, const oi__tensor *t, int ndim, const int64_t *shape, const double *want, double tol) {
    CHECK_MSG(t != NULL, "%s: no output", what);
    if (!t)
        return;
    expect_shape(what, t, ndim, shape);
    int64_t n = oi__shape_numel(ndim, shape);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; i++) {
        double got = element_f(t, i);
        bool same = (isnan(want[i]) && isnan(got)) || fabs(got - want[i]) <= tol * (1 + fabs(want[i]));
        CHECK_MSG(same, "%s[%lld]: got %.9g, want %.9g", what, (long long)i, got, want[i]);
        bad += !same;
    }
}

static void expect_error(oi_op op, const oi__attr *attrs, size_t n_attrs, size_t n, const oi__tensor *const *ins,
                         const char *part) {
    oi__op_sig sigs[8], out;
    for (size_t i = 0; i < n; i++)
        sig_of(ins[i], &sigs[i]);
    oi_status s = oi__op_infer(op, attrs, n_attrs, sigs, n, OI_DTYPE_INVALID, &out);
    CHECK_MSG(s == OI_ERROR_VALIDATION, "%s should fail with \"%s\", got %s", oi_op_name(op), part, oi_status_name(s));
    CHECK_STR_CONTAINS(oi_last_error(), part);
}

/* ------------------------------------------------------------------ */
/* Layout ops, copied by the kernel and as views                       */
/* ------------------------------------------------------------------ */
/* Runs the kernel and the view and checks both against the reference;
 * the view must share the input's storage. */
static void check_layout(const char *what, oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *in, int ndim,
                         const int64_t *shape, const double *want) {
    oi__tensor *copy = run1(op, attrs, n_attrs, in);
    expect_f(what, copy, ndim, shape, want, 0);
    oi__tensor_free(copy);
    oi__tensor *view = NULL;
    CHECK_OK(oi__op_view(op, attrs, n_attrs, in, &view));
    if (!view)
        return;
    CHECK_MSG(view->storage == in->storage && oi__tensor_data(view) == oi__tensor_data(in), "%s: the view copied", what);
    CHECK_EQ_INT(in->storage->refcount, 2);
    expect_f(what, view, ndim, shape, want, 0);
    oi__tensor_free(view);
    CHECK_EQ_INT(in->storage->refcount, 1);
}

static void test_layout_ops(void) {
    oi__tensor *x = tensor_f(OI_DTYPE_F32, REF_SHAPE(lay_x), lay_x);
    oi__attr a[4];
    a[0] = attr_ints("shape", INTS(4, 0, -1));
    check_layout("reshape", OI_OP_reshape, a, 1, x, REF_SHAPE(reshape_out), reshape_out);
    free_attrs(a, 1);
    a[0] = attr_ints("perm", INTS(2, 0, -2)); /* -2 is axis 1 */
    check_layout("transpose", OI_OP_transpose, a, 1, x, REF_SHAPE(transpose_out), transpose_out);
    free_attrs(a, 1);
    check_layout("transpose default", OI_OP_transpose, NULL, 0, x, REF_SHAPE(transpose_default_out), transpose_default_out);

    /* squeeze/unsqueeze keep the row-major order: only the shape changes */
    a[0] = attr_ints("axes", INTS(1, -1)); /* -1 is 4 in the rank-5 result */
    oi__tensor *u = run1(OI_OP_unsqueeze, a, 1, x);
    expect_f("unsqueeze", u, SHAPE(2, 1, 3, 4, 1), lay_x, 0);
    check_layout("unsqueeze view", OI_OP_unsqueeze, a, 1, x, SHAPE(2, 1, 3, 4, 1), lay_x);
    free_attrs(a, 1);
    check_layout("squeeze all", OI_OP_squeeze, NULL, 0, u, SHAPE(2, 3, 4), lay_x);
    a[0] = attr_ints("axes", INTS(-1));
    check_layout("squeeze one", OI_OP_squeeze, a, 1, u, SHAPE(2, 1, 3, 4), lay_x);
    free_attrs(a, 1);
    oi__tensor_free(u);

    oi__tensor *s = tensor_f(OI_DTYPE_F64, REF_SHAPE(slice_x), slice_x);
    a[0] = attr_ints("starts", INTS(1, 4));
    a[1] = attr_ints("ends", INTS(INT64_MAX, 1000));
    a[2] = attr_ints("axes", INTS(1, 0));
    a[3] = attr_ints("steps", INTS(2, 1));
    /* s[4:, 1::2]: starts/ends follow `axes` */
    double want_axes_order[3] = {25, 27, 29};
    check_layout("slice axes order", OI_OP_slice, a, 4, s, SHAPE(1, 3), want_axes_order);
    free_attrs(a, 4);
    a[0] = attr_ints("starts", INTS(1, -1));
    a[1] = attr_ints("ends", INTS(-1, 0));
    a[2] = attr_ints("steps", INTS(2, -2));
    oi__tensor *r = run1(OI_OP_slice, a, 3, s);
    expect_f("slice negative steps", r, REF_SHAPE(slice_out), slice_out, 0);
    oi__tensor_free(r);
    oi__tensor *view = NULL;
    CHECK_STATUS(oi__op_view(OI_OP_slice, a, 3, s, &view), OI_ERROR_UNSUPPORTED); /* negative strides: a copy */
    CHECK(view == NULL);
    free_attrs(a, 3);
    a[0] = attr_ints("starts", INTS(4, 2));
    a[1] = attr_ints("ends", INTS(INT64_MIN, 1000));
    a[2] = attr_ints("axes", INTS(0, 1));
    a[3] = attr_ints("steps", INTS(-3, 1));
    r = run1(OI_OP_slice, a, 4, s);
    expect_f("slice clamped", r, REF_SHAPE(slice_clamp_out), slice_clamp_out, 0);
    oi__tensor_free(r);
    free_attrs(a, 4);
    a[0] = attr_ints("starts", INTS(3));
    a[1] = attr_ints("ends", INTS(1));
    a[2] = attr_ints("axes", INTS(-1));
    a[3] = attr_ints("steps", INTS(-1));
    r = run1(OI_OP_slice, a, 4, s);
    expect_f("slice one axis", r, REF_SHAPE(slice_axes_out), slice_axes_out, 0);
    oi__tensor_free(r);
    free_attrs(a, 4);
    a[0] = attr_ints("starts", INTS(3));
    a[1] = attr_ints("ends", INTS(3));
    r = run1(OI_OP_slice, a, 2, s); /* an empty range gives a 0-sized dim */
    expect_shape("slice empty", r, SHAPE(0, 6));
    oi__tensor_free(r);
    free_attrs(a, 2);

    a[0] = attr_i("axis", 1);
    a[1] = attr_ints("sizes", INTS(1, 3, 2));
    a[2] = attr_i("index", 1);
    check_layout("split sizes", OI_OP_split, a, 3, s, REF_SHAPE(split_sizes_out), split_sizes_out);
    free_attrs(a, 3);
    oi__tensor *seven = tensor_f(OI_DTYPE_F32, REF_SHAPE(split_x), split_x);
    a[0] = attr_i("num", 3);
    a[1] = attr_i("index", -1);
    check_layout("split num", OI_OP_split, a, 2, seven, REF_SHAPE(split_num_out), split_num_out);
    oi__tensor_free(seven);

    oi__tensor *e = tensor_f(OI_DTYPE_BF16, REF_SHAPE(expand_x), expand_x);
    a[0] = attr_ints("shape", INTS(2, 1, 4));
    check_layout("expand", OI_OP_expand, a, 1, e, REF_SHAPE(expand_out), expand_out);
    CHECK_OK(oi__op_view(OI_OP_expand, a, 1, e, &view));
    if (view) /* repeated elements have stride 0 */
        CHECK(view->strides[0] == 0 && view->strides[2] == 0 && view->strides[1] == 1);
    oi__tensor_free(view);
    free_attrs(a, 1);
    oi__tensor_free(e);

    a[0] = attr_ints("repeats", INTS(2, 3));
    a[1] = attr_ints("starts", INTS(0, 0));
    a[2] = attr_ints("ends", INTS(2, 3));
    oi__tensor *corner = run1(OI_OP_slice, a + 1, 2, s);
    r = run1(OI_OP_tile, a, 1, corner);
    expect_f("tile", r, REF_SHAPE(tile_out), tile_out, 0);
    oi__tensor_free(r);
    oi__tensor_free(corner);
    CHECK_STATUS(oi__op_view(OI_OP_tile, a, 1, s, &view), OI_ERROR_UNSUPPORTED); /* not a layout op */
    free_attrs(a, 3);
    oi__tensor_free(s);
    oi__tensor_free(x);
}

/* Views feed other ops: kernels read strides, offsets and stride 0. */
static void test_views_downstream(void) {
    oi__tensor *x = tensor_f(OI_DTYPE_F32, REF_SHAPE(lay_x), lay_x), *view = NULL;
    oi__attr a[2];
    a[0] = attr_ints("perm", INTS(2, 0, 1));
    CHECK_OK(oi__op_view(OI_OP_transpose, a, 1, x, &view));
    oi__tensor *neg = view ? run1(OI_OP_neg, NULL, 0, view) : NULL;
    double want[24];
    for (int i = 0; i < 24; i++)
        want[i] = -transpose_out[i];
    expect_f("neg(transpose view)", neg, REF_SHAPE(transpose_out), want, 0);
    oi__tensor_free(neg);

    /* reshape of a strided view cannot be a view; the kernel copies in order */
    oi__tensor *r = NULL;
    free_attrs(a, 1);
    a[0] = attr_ints("shape", INTS(6, -1));
    CHECK_STATUS(oi__op_view(OI_OP_reshape, a, 1, view, &r), OI_ERROR_UNSUPPORTED);
    r = view ? run1(OI_OP_reshape, a, 1, view) : NULL;
    expect_f("reshape(transpose view)", r, SHAPE(6, 4), transpose_out, 0);
    oi__tensor_free(r);
    free_attrs(a, 1);

    /* matmul reads a transposed view: [4, 6] x [6, 1] of ones sums rows */
    a[0] = attr_ints("shape", INTS(4, 6));
    oi__tensor *flat = NULL;
    CHECK_OK(oi__op_view(OI_OP_reshape, a, 1, x, &flat)); /* x as [4, 6]: dense, a view */
    free_attrs(a, 1);
    a[0] = attr_ints("perm", INTS(1, 0));
    oi__tensor *t = NULL;
    if (flat)
        CHECK_OK(oi__op_view(OI_OP_transpose, a, 1, flat, &t)); /* [6, 4], strides (1, 6) */
    free_attrs(a, 1);
    double ones[4] = {1, 1, 1, 1}, col_sums[6];
    oi__tensor *o = tensor_f(OI_DTYPE_F32, SHAPE(4, 1), ones);
    for (int j = 0; j < 6; j++) { /* t[j, i] = x_flat[i, j] = lay_x[6 i + j] */
        col_sums[j] = 0;
        for (int i = 0; i < 4; i++)
            col_sums[j] += lay_x[6 * i + j];
    }
    oi__tensor *mm = t ? run2(OI_OP_matmul, NULL, 0, t, o) : NULL;
    expect_f("matmul(transpose view)", mm, SHAPE(6, 1), col_sums, 0);
    oi__tensor_free(mm), oi__tensor_free(o), oi__tensor_free(t), oi__tensor_free(flat);

    /* a slice view with an offset, added to itself */
    oi__tensor *s = tensor_f(OI_DTYPE_I32, REF_SHAPE(slice_x), slice_x), *sv = NULL;
    a[0] = attr_ints("starts", INTS(1, 2));
    a[1] = attr_ints("ends", INTS(4, 6));
    CHECK_OK(oi__op_view(OI_OP_slice, a, 2, s, &sv));
    if (sv)
        CHECK(sv->offset == 8 && sv->strides[0] == 6 && sv->strides[1] == 1);
    oi__tensor *twice = sv ? run2(OI_OP_add, NULL, 0, sv, sv) : NULL;
    double want_twice[12] = {16, 18, 20, 22, 28, 30, 32, 34, 40, 42, 44, 46}; /* 2 * s[1:4, 2:6] */
    expect_f("add(slice view)", twice, SHAPE(3, 4), want_twice, 0);
    oi__tensor_free(twice), oi__tensor_free(sv), oi__tensor_free(s);
    free_attrs(a, 2);

    /* an expanded view (stride 0) summed over the repeated axis */
    double v3[3] = {1.5, -2, 4};
    oi__tensor *e = tensor_f(OI_DTYPE_F64, SHAPE(3, 1), v3), *ev = NULL;
    a[0] = attr_ints("shape", INTS(3, 5));
    CHECK_OK(oi__op_view(OI_OP_expand, a, 1, e, &ev));
    free_attrs(a, 1);
    a[0] = attr_ints("axes", INTS(1));
    oi__tensor *sum = ev ? run1(OI_OP_sum_axis, a, 1, ev) : NULL;
    double want_sum[3] = {7.5, -10, 20};
    expect_f("sum_axis(expand view)", sum, SHAPE(3), want_sum, 0);
    free_attrs(a, 1);
    oi__tensor_free(sum), oi__tensor_free(ev), oi__tensor_free(e), oi__tensor_free(view), oi__tensor_free(x);
}

/* reshape of a strided input is a view where the strides allow one: a
 * column slice split into more dims (a fused q/k/v product cut into
 * heads), and a transpose whose swapped dims stay apart; merging the
 * swapped dims copies. Expected values by index arithmetic. */
static void test_reshape_restrides(void) {
    double x_values[24], want[24];
    for (int i = 0; i < 24; i++)
        x_values[i] = i;
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(4, 6), x_values), *cols = NULL, *split = NULL;
    oi__attr a[2];
    a[0] = attr_ints("starts", INTS(2));
    a[1] = attr_ints("ends", INTS(6));
    oi__attr axes = attr_ints("axes", INTS(1));
    oi__attr slice_attrs[3] = {a[0], a[1], axes};
    CHECK_OK(oi__op_view(OI_OP_slice, slice_attrs, 3, x, &cols)); /* x[:, 2:6]: strides (6, 1), offset 2 */
    free_attrs(slice_attrs, 3);
    a[0] = attr_ints("shape", INTS(2, 2, 2, 2));
    if (cols)
        CHECK_OK(oi__op_view(OI_OP_reshape, a, 1, cols, &split));
    if (split) {
        CHECK(split->storage == x->storage && split->offset == 2);
        CHECK(split->strides[0] == 12 && split->strides[1] == 6 && split->strides[2] == 2 && split->strides[3] == 1);
    }
    for (int i = 0; i < 16; i++) /* [a, b, c, d] = x[2a + b, 2 + 2c + d] */
        want[i] = 6 * (2 * (i >> 3) + ((i >> 2) & 1)) + 2 + 2 * ((i >> 1) & 1) + (i & 1);
    oi__tensor *neg = split ? run1(OI_OP_neg, NULL, 0, split) : NULL;
    for (int i = 0; i < 16; i++)
        want[i] = -want[i];
    expect_f("neg(reshape(slice view))", neg, SHAPE(2, 2, 2, 2), want, 0);
    oi__tensor_free(neg), oi__tensor_free(split), oi__tensor_free(cols);
    free_attrs(a, 1);

    /* x as [2, 3, 4], dims 0 and 1 swapped: [3, 2, 4] with strides (4, 12, 1) */
    oi__tensor *x3 = NULL, *t = NULL, *apart = NULL, *merged = NULL;
    a[0] = attr_ints("shape", INTS(2, 3, 4));
    CHECK_OK(oi__op_view(OI_OP_reshape, a, 1, x, &x3));
    free_attrs(a, 1);
    a[0] = attr_ints("perm", INTS(1, 0, 2));
    if (x3)
        CHECK_OK(oi__op_view(OI_OP_transpose, a, 1, x3, &t));
    free_attrs(a, 1);
    a[0] = attr_ints("shape", INTS(3, 2, 2, 2)); /* the last dim split: a view */
    if (t)
        CHECK_OK(oi__op_view(OI_OP_reshape, a, 1, t, &apart));
    free_attrs(a, 1);
    for (int i = 0; i < 24; i++) { /* [j, i0, c, d] = x3[i0, j, 2c + d] */
        int j = i / 8, i0 = (i / 4) % 2, last = i % 4;
        want[i] = 12 * i0 + 4 * j + last;
    }
    expect_f("reshape(transpose view) splitting the last dim", apart, SHAPE(3, 2, 2, 2), want, 0);
    a[0] = attr_ints("shape", INTS(3, 8)); /* dims 1 and 2 merged: 12 and 1 apart, not one block */
    if (t)
        CHECK_STATUS(oi__op_view(OI_OP_reshape, a, 1, t, &merged), OI_ERROR_UNSUPPORTED);
    merged = t ? run1(OI_OP_reshape, a, 1, t) : NULL;
    expect_f("reshape(transpose view) merging swapped dims", merged, SHAPE(3, 8), want, 0);
    free_attrs(a, 1);
    oi__tensor_free(merged), oi__tensor_free(apart), oi__tensor_free(t), oi__tensor_free(x3), oi__tensor_free(x);
}

/* Shape ops copy raw bits: every dtype, packed ones included. A [2, 3]
 * transpose by hand: out[j][i] = in[i][j]; concat and pad likewise. */
static void test_every_dtype(void) {
    int runs = 0;
    oi__attr pad_attrs[2], axis0 = attr_i("axis", 0);
    pad_attrs[0] = attr_ints("pads", INTS(0, 1, 0, 1));
    pad_attrs[1] = attr_s("mode", "wrap");
    for (int t = 1; t < (int)OI_DTYPE_COUNT; t++) {
        oi_dtype dt = (oi_dtype)t;
        if (!oi__dtype_is_tensor_type(dt))
            continue;
        unsigned bits = oi_dtype_bits(dt);
        oi__tensor *x = oi__tensor_new(dt, SHAPE(2, 3));
        for (int64_t i = 0; i < 6; i++) /* distinct bit patterns within the width */
            oi__store_bits(dt, oi__tensor_data(x), i, bits >= 8 ? (uint64_t)(0x5A + 37 * i) : (uint64_t)(i + 1) % (1u << bits));
        oi__tensor *tr = run1(OI_OP_transpose, NULL, 0, x);
        oi__tensor *cat = run2(OI_OP_concat, &axis0, 1, x, x);
        oi__tensor *padded = run1(OI_OP_pad, pad_attrs, 2, x);
        bool ok = tr && padded && cat;
        for (int64_t i = 0; i < 12 && ok; i++) /* [x; x] */
            ok &= element_bits(cat, i) == element_bits(x, i % 6);
        for (int i = 0; i < 2 && ok; i++)
            for (int j = 0; j < 3; j++) {
                ok &= element_bits(tr, j * 2 + i) == element_bits(x, i * 3 + j);
                /* wrap pad: row i is [x[i][2], x[i][0], x[i][1], x[i][2], x[i][0]] */
                ok &= element_bits(padded, i * 5 + j + 1) == element_bits(x, i * 3 + j);
            }
        ok &= padded && element_bits(padded, 0) == element_bits(x, 2) && element_bits(padded, 9) == element_bits(x, 3);
        CHECK_MSG(ok, "transpose/concat/pad of %s", oi_dtype_name(dt));
        oi__tensor_free(tr), oi__tensor_free(padded), oi__tensor_free(cat), oi__tensor_free(x);
        runs += ok;
    }
    free_attrs(pad_attrs, 2);
    CHECK(runs >= 20);
}

/* ------------------------------------------------------------------ */
/* concat, gather, where, pad                                          */
/* ------------------------------------------------------------------ */
static void test_concat_gather_where(void) {
    oi__tensor *c0 = tensor_f(OI_DTYPE_F16, SHAPE(2, 1, 3), concat_a), *c1 = tensor_f(OI_DTYPE_F16, SHAPE(2, 4, 3), concat_b),
               *c2 = tensor_f(OI_DTYPE_F16, SHAPE(2, 2, 3), concat_c);
    oi__attr a[2];
    a[0] = attr_i("axis", -2);
    oi__tensor *r = run3(OI_OP_concat, a, 1, c0, c1, c2);
    expect_f("concat", r, REF_SHAPE(concat_out), concat_out, 0);
    oi__tensor_free(r);
    const oi__tensor *many[8] = {c0, c0, c0, c0, c0, c0, c0, c0};
    r = run_n(OI_OP_concat, a, 1, 8, many);
    expect_shape("concat of 8", r, SHAPE(2, 8, 3));
    oi__tensor_free(r);
    oi__tensor_free(c0), oi__tensor_free(c1), oi__tensor_free(c2);

    oi__tensor *data = tensor_f(OI_DTYPE_F32, SHAPE(4, 3), gather_data), *idx = tensor_i(OI_DTYPE_I64, SHAPE(2, 2), gather_idx);
    r = run2(OI_OP_gather, NULL, 0, data, idx);
    expect_f("gather axis 0", r, REF_SHAPE(gather_out), gather_out, 0);
    oi__tensor_free(r);
    oi__tensor_free(data), oi__tensor_free(idx);
    data = tensor_f(OI_DTYPE_F64, SHAPE(2, 5, 2), gather2_data);
    idx = tensor_i(OI_DTYPE_I32, SHAPE(3), gather2_idx);
    a[0] = attr_i("axis", 1);
    r = run2(OI_OP_gather, a, 1, data, idx);
    expect_f("gather axis 1, i32 indices", r, REF_SHAPE(gather2_out), gather2_out, 0);
    oi__tensor_free(r);
    /* an index outside [-5, 5) is a runtime error naming it */
    int64_t bad[3] = {1, 5, 0};
    oi__tensor *bad_idx = tensor_i(OI_DTYPE_I32, SHAPE(3), bad);
    oi__tensor *out = oi__tensor_new(OI_DTYPE_F64, SHAPE(2, 3, 2));
    const oi__tensor *ins[2] = {data, bad_idx};
    CHECK_STATUS(oi__op_run_cpu(OI_OP_gather, a, 1, ins, 2, out), OI_ERROR_RUNTIME);
    CHECK_STR_CONTAINS(oi_last_error(), "gather: index 5 (element 1 of the indices) is out of range for axis 1 of size 5");
    oi__tensor_free(out), oi__tensor_free(bad_idx), oi__tensor_free(data), oi__tensor_free(idx);

    /* embedding lookup: a [vocab, dim] table by u8 token ids */
    double table[8] = {0, 1, 10, 11, 20, 21, 30, 31};
    int64_t tokens[3] = {3, 0, 2};
    oi__tensor *emb = tensor_f(OI_DTYPE_BF16, SHAPE(4, 2), table), *tok = tensor_i(OI_DTYPE_U8, SHAPE(1, 3), tokens);
    r = run2(OI_OP_gather, NULL, 0, emb, tok);
    double rows[6] = {30, 31, 0, 1, 20, 21};
    expect_f("embedding", r, SHAPE(1, 3, 2), rows, 0);
    oi__tensor_free(r), oi__tensor_free(emb), oi__tensor_free(tok);

    oi__tensor *cond = tensor_i(OI_DTYPE_BOOL, SHAPE(2, 1, 3), where_cond), *wa = tensor_f(OI_DTYPE_F32, SHAPE(4, 1), where_a),
               *wb = tensor_f(OI_DTYPE_F32, SHAPE(3), where_b);
    r = run3(OI_OP_where, NULL, 0, cond, wa, wb);
    expect_f("where", r, REF_SHAPE(where_out), where_out, 0);
    CHECK(r && r->dtype == OI_DTYPE_F32);
    oi__tensor_free(r), oi__tensor_free(cond), oi__tensor_free(wa), oi__tensor_free(wb);
}

static void check_pad(const char *what, const char *mode, int n, const int64_t *pads, double value, oi_dtype t, int ndim,
                      const int64_t *shape, const double *want) {
    oi__tensor *x = tensor_f(t, SHAPE(3, 4), pad_x);
    oi__attr a[3];
    a[0] = attr_ints("pads", n, pads);
    a[1] = attr_s("mode", mode);
    a[2] = attr_f("value", value);
    oi__tensor *r = run1(OI_OP_pad, a, 3, x);
    expect_f(what, r, ndim, shape, want, 0);
    oi__tensor_free(r), oi__tensor_free(x);
    free_attrs(a, 3);
}

static void test_pad(void) {
    check_pad("pad constant", "constant", INTS(1, 2, 0, 1), 7.5, OI_DTYPE_F32, REF_SHAPE(pad_constant_out), pad_constant_out);
    check_pad("pad reflect", "reflect", INTS(2, 3, 2, 5), 0, OI_DTYPE_I16, REF_SHAPE(pad_reflect_out), pad_reflect_out);
    check_pad("pad edge", "edge", INTS(0, 2, 3, 1), 0, OI_DTYPE_U8, REF_SHAPE(pad_edge_out), pad_edge_out);
    check_pad("pad wrap", "wrap", INTS(1, 5, 2, 1), 0, OI_DTYPE_F64, REF_SHAPE(pad_wrap_out), pad_wrap_out);
    check_pad("pad crop", "constant", INTS(-1, 2, 1, -3), -1, OI_DTYPE_I8, REF_SHAPE(pad_crop_out), pad_crop_out);
    /* pads on the listed axes only: [3, 4] padded 1 + 2 on axis 1 */
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(3, 4), pad_x);
    oi__attr a[2];
    a[0] = attr_ints("pads", INTS(1, 2));
    a[1] = attr_ints("axes", INTS(-1));
    oi__tensor *r = run1(OI_OP_pad, a, 2, x);
    expect_shape("pad axes", r, SHAPE(3, 7));
    if (r)
        CHECK(element_f(r, 0) == 0 && element_f(r, 1) == 1 && element_f(r, 4) == 4 && element_f(r, 5) == 0);
    oi__tensor_free(r), oi__tensor_free(x);
    free_attrs(a, 2);
    /* the last axis only (its own copy path): each mode, and a reflection longer than the row */
    const double rows[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    const char *modes[5] = {"reflect", "edge", "wrap", "constant", "reflect"};
    const double want[5][18] = {{3, 2, 1, 2, 3, 4, 3, 2, 1, 7, 6, 5, 6, 7, 8, 7, 6, 5},
                                {1, 1, 1, 2, 3, 4, 4, 4, 4, 5, 5, 5, 6, 7, 8, 8, 8, 8},
                                {3, 4, 1, 2, 3, 4, 1, 2, 3, 7, 8, 5, 6, 7, 8, 5, 6, 7},
                                {9, 9, 1, 2, 3, 4, 9, 9, 9, 9, 9, 5, 6, 7, 8, 9, 9, 9},
                                {2, 3, 4, 3, 2, 1, 2, 3, 4, 6, 7, 8, 7, 6, 5, 6, 7, 8}};
    for (int m = 0; m < 5; m++) {
        x = tensor_f(OI_DTYPE_F32, SHAPE(2, 4), rows);
        oi__attr p[3];
        p[0] = m == 4 ? attr_ints("pads", INTS(0, 5, 0, 0)) : attr_ints("pads", INTS(0, 2, 0, 3));
        p[1] = attr_s("mode", modes[m]);
        p[2] = attr_f("value", 9);
        r = run1(OI_OP_pad, p, 3, x);
        expect_f(modes[m], r, SHAPE(2, 9), want[m], 0);
        oi__tensor_free(r), oi__tensor_free(x);
        free_attrs(p, 3);
    }
}

/* ------------------------------------------------------------------ */
/* gemm, convolution, pooling                                          */
/* ------------------------------------------------------------------ */
static void test_gemm(void) {
    oi__tensor *A = tensor_f(OI_DTYPE_F32, SHAPE(4, 3), gemm_a), *B = tensor_f(OI_DTYPE_F32, SHAPE(5, 4), gemm_b),
               *C = tensor_f(OI_DTYPE_F32, SHAPE(5), gemm_c);
    oi__attr a[4] = {attr_b("trans_a", true), attr_b("trans_b", true), attr_f("alpha", 0.5), attr_f("beta", 2)};
    oi__tensor *r = run3(OI_OP_gemm, a, 4, A, B, C);
    expect_f("gemm f32", r, REF_SHAPE(gemm_out), gemm_out, 1e-6);
    oi__tensor_free(r);
    oi__tensor *A64 = tensor_f(OI_DTYPE_F64, SHAPE(4, 3), gemm_a), *B64 = tensor_f(OI_DTYPE_F64, SHAPE(5, 4), gemm_b),
               *C64 = tensor_f(OI_DTYPE_F64, SHAPE(1, 5), gemm_c);
    r = run3(OI_OP_gemm, a, 4, A64, B64, C64);
    expect_f("gemm f64", r, REF_SHAPE(gemm_out), gemm_out, 1e-12);
    oi__tensor_free(r);
    /* no C: [2, 2] x [2, 2] by hand */
    double l[4] = {1, 2, 3, 4}, rr[4] = {5, 6, 7, 8}, prod[4] = {19, 22, 43, 50};
    oi__tensor *L = tensor_f(OI_DTYPE_F16, SHAPE(2, 2), l), *R = tensor_f(OI_DTYPE_F16, SHAPE(2, 2), rr);
    r = run2(OI_OP_gemm, NULL, 0, L, R);
    expect_f("gemm f16 no C", r, SHAPE(2, 2), prod, 0);
    oi__tensor_free(r), oi__tensor_free(L), oi__tensor_free(R);
    oi__tensor_free(A), oi__tensor_free(B), oi__tensor_free(C), oi__tensor_free(A64), oi__tensor_free(B64), oi__tensor_free(C64);
}

/* activation= on gemm is gemm, then the activation op: bit for bit in f32
 * and f64, since the fused form runs the op's own code (f32: tile by tile
 * on the threaded packed path of a 40 x 70 x 300 product; f64 and f16
 * after the product). f16 rounds once less (the activation sees the f32
 * product), so it only comes close. relu is max(0, x). */
static void test_gemm_activation(void) {
    enum { M = 40, N = 70, K = 300 };
    static double av[M * K], bv[K * N], cv[N];
    for (int i = 0; i < M * K; i++)
        av[i] = sin(0.37 * i);
    for (int i = 0; i < K * N; i++)
        bv[i] = cos(0.11 * i) / 4;
    for (int i = 0; i < N; i++)
        cv[i] = 0.5 - (double)i / N;
    const char *acts[4] = {"relu", "gelu", "gelu_tanh", "hard_swish"};
    const oi_dtype types[3] = {OI_DTYPE_F32, OI_DTYPE_F64, OI_DTYPE_F16};
    for (int t = 0; t < 3; t++) {
        oi__tensor *A = tensor_f(types[t], SHAPE(M, K), av), *B = tensor_f(types[t], SHAPE(K, N), bv),
                   *C = tensor_f(types[t], SHAPE(N), cv);
        oi__tensor *plain = run3(OI_OP_gemm, NULL, 0, A, B, C);
        for (int i = 0; i < 4 && plain; i++) {
            oi__attr act = attr_s("activation", acts[i]), approx = attr_s("approximate", i == 2 ? "tanh" : "none");
            oi__tensor *fused = run3(OI_OP_gemm, &act, 1, A, B, C);
            oi__tensor *want = i == 3 ? run1(OI_OP_hard_swish, NULL, 0, plain)
                               : i   ? run1(OI_OP_gelu, &approx, 1, plain)
                                     : NULL;
            int64_t bad = 0;
            for (int64_t e = 0; fused && e < M * N; e++) {
                double p = element_f(plain, e), w = want ? element_f(want, e) : (p < 0 ? 0.0 : p), f = element_f(fused, e);
                bad += types[t] == OI_DTYPE_F16 ? !(fabs(f - w) <= 2e-3 * (1 + fabs(w))) : !(f == w);
            }
            CHECK_MSG(fused && bad == 0, "gemm %s activation=%s: %lld of %d elements differ from gemm then the op",
                      oi_dtype_name(types[t]), acts[i], (long long)bad, M * N);
            oi__tensor_free(fused), oi__tensor_free(want);
        }
        CHECK(plain != NULL);
        oi__tensor_free(plain), oi__tensor_free(A), oi__tensor_free(B), oi__tensor_free(C);
    }
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(2, 2), cv);
    oi__attr bad_act = attr_s("activation", "tanh");
    const oi__tensor *xx[2] = {x, x};
    expect_error(OI_OP_gemm, &bad_act, 1, 2, xx, "gemm: activation must be");
    oi__tensor_free(x);
}

/* The reference is exact (quarters); f16 and bf16 round once. */
static double dtype_tol(oi_dtype t) {
    return t == OI_DTYPE_BF16 ? 1.0 / 128 : t == OI_DTYPE_F16 ? 1.0 / 1024 : t == OI_DTYPE_F32 ? 1e-6 : 1e-12;
}

/* One input channel per group: f32 runs the direct depthwise loops (a
 * channel multiplier of 2, strides, dilations, uneven pads; a size that
 * uses the thread pool; conv1d), f64 the im2col + gemm path. */
static void test_conv_depthwise(void) {
    const oi_dtype types[2] = {OI_DTYPE_F32, OI_DTYPE_F64};
    for (int ti = 0; ti < 2; ti++) {
        oi_dtype t = types[ti];
        char what[64];
        oi__tensor *x = tensor_f(t, SHAPE(2, 4, 7, 6), dw2d_x), *w = tensor_f(t, SHAPE(8, 1, 3, 3), dw2d_w),
                   *b = tensor_f(t, SHAPE(8), dw2d_b);
        oi__attr a[4] = {attr_ints("strides", INTS(2, 1)), attr_ints("pads", INTS(1, 0, 2, 1)),
                         attr_ints("dilations", INTS(1, 2)), attr_i("group", 4)};
        snprintf(what, sizeof what, "depthwise conv2d %s", oi_dtype_name(t));
        oi__tensor *r = run3(OI_OP_conv2d, a, 4, x, w, b);
        expect_f(what, r, REF_SHAPE(dw2d_out), dw2d_out, dtype_tol(t));
        oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w), oi__tensor_free(b);
        free_attrs(a, 4);

        x = tensor_f(t, SHAPE(2, 16, 12, 10), dw2d_big_x), w = tensor_f(t, SHAPE(16, 1, 3, 3), dw2d_big_w);
        oi__attr big[2] = {attr_ints("pads", INTS(1, 1, 1, 1)), attr_i("group", 16)};
        snprintf(what, sizeof what, "depthwise conv2d pooled %s", oi_dtype_name(t));
        r = run2(OI_OP_conv2d, big, 2, x, w);
        expect_f(what, r, REF_SHAPE(dw2d_big_out), dw2d_big_out, dtype_tol(t));
        oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w);
        free_attrs(big, 2);

        x = tensor_f(t, SHAPE(1, 3, 10), dw1d_x), w = tensor_f(t, SHAPE(3, 1, 3), dw1d_w);
        oi__attr one[4] = {attr_ints("strides", INTS(2)), attr_ints("pads", INTS(1, 1)), attr_ints("dilations", INTS(2)),
                           attr_i("group", 3)};
        snprintf(what, sizeof what, "depthwise conv1d %s", oi_dtype_name(t));
        r = run2(OI_OP_conv1d, one, 4, x, w);
        expect_f(what, r, REF_SHAPE(dw1d_out), dw1d_out, dtype_tol(t));
        oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w);
        free_attrs(one, 4);
    }
}

/* The depthwise loops in vector lanes (AVX-512, AVX2) against a plain
 * double reference written here, on rows that are not whole vectors (21 and
 * 40 output columns), pads that cut into the first and last blocks, a
 * dilated 5-wide kernel and a conv1d; and bit for bit against the portable
 * loop, whose order of sums they keep. */
static double dw_ref(const float *x, const float *w, float b, int64_t ih, int64_t iw, int64_t kh, int64_t kw, int64_t sh,
                     int64_t ph, int64_t pw, int64_t dw, int64_t oy, int64_t ox) {
    double sum = b;
    for (int64_t ky = 0; ky < kh; ky++)
        for (int64_t kx = 0; kx < kw; kx++) {
            int64_t iy = oy * sh - ph + ky, ix = ox - pw + kx * dw;
            if (iy >= 0 && iy < ih && ix >= 0 && ix < iw)
                sum += (double)w[ky * kw + kx] * x[iy * iw + ix];
        }
    return sum;
}

static void test_conv_depthwise_isas(void) {
    enum { N = 2, C = 5 };
    static const struct { int64_t ih, iw, kh, kw, sh, ph, pw, dw; } cases[] = {
        {6, 21, 5, 5, 1, 2, 2, 1}, {7, 40, 3, 3, 2, 1, 1, 1}, {4, 33, 3, 5, 1, 0, 4, 2}, {1, 19, 1, 3, 1, 0, 1, 1},
        /* rows wide enough for the unmasked runs of 4 vectors (PP-OCR's 3 x 96 planes, a dilated 150, 1-D) */
        {3, 96, 5, 5, 1, 2, 2, 1}, {5, 150, 3, 3, 2, 1, 3, 2}, {1, 133, 1, 5, 1, 0, 2, 1},
    };
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        int64_t ih = cases[ci].ih, iw = cases[ci].iw, kh = cases[ci].kh, kw = cases[ci].kw, sh = cases[ci].sh;
        int64_t ph = cases[ci].ph, pw = cases[ci].pw, dw = cases[ci].dw;
        bool one_d = ih == 1 && kh == 1;
        int64_t oh = (ih + 2 * ph - kh) / sh + 1, ow = iw + 2 * pw - (kw - 1) * dw;
        int64_t nx = N * C * ih * iw, nw = C * kh * kw;
        double *xv = (double *)malloc((size_t)nx * sizeof *xv), *wv = (double *)malloc((size_t)nw * sizeof *wv);
        double bv[C];
        for (int64_t i = 0; i < nx; i++)
            xv[i] = sin(0.7 * (double)i + 0.3);
        for (int64_t i = 0; i < nw; i++)
            wv[i] = cos(1.3 * (double)i) / 3;
        for (int i = 0; i < C; i++)
            bv[i] = 0.25 * i - 0.5;
        oi__tensor *x = one_d ? tensor_f(OI_DTYPE_F32, SHAPE(N, C, iw), xv) : tensor_f(OI_DTYPE_F32, SHAPE(N, C, ih, iw), xv);
        oi__tensor *w = one_d ? tensor_f(OI_DTYPE_F32, SHAPE(C, 1, kw), wv) : tensor_f(OI_DTYPE_F32, SHAPE(C, 1, kh, kw), wv);
        oi__tensor *b = tensor_f(OI_DTYPE_F32, SHAPE(C), bv);
        oi__attr a2[4] = {attr_ints("strides", INTS(sh, 1)), attr_ints("pads", INTS(ph, pw, ph, pw)),
                          attr_ints("dilations", INTS(1, dw)), attr_i("group", C)};
        oi__attr a1[4] = {attr_ints("strides", INTS(1)), attr_ints("pads", INTS(pw, pw)), attr_ints("dilations", INTS(dw)),
                          attr_i("group", C)};
        oi__tensor *portable = NULL;
        for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
            if (!oi__gemm_force_isa(isas[ii]))
                continue;
            oi__tensor *r = run3(one_d ? OI_OP_conv1d : OI_OP_conv2d, one_d ? a1 : a2, 4, x, w, b);
            int64_t bad = 0, differ = 0;
            for (int64_t n = 0; r && n < N; n++)
                for (int64_t c = 0; c < C; c++)
                    for (int64_t oy = 0; oy < oh; oy++)
                        for (int64_t ox = 0; ox < ow; ox++) {
                            int64_t at = ((n * C + c) * oh + oy) * ow + ox;
                            const float *xs = (const float *)oi__tensor_data(x) + (n * C + c) * ih * iw;
                            double want = dw_ref(xs, (const float *)oi__tensor_data(w) + c * kh * kw, ((const float *)oi__tensor_data(b))[c], ih,
                                                 iw, kh, kw, sh, ph, pw, dw, oy, ox);
                            double got = element_f(r, at);
                            bad += !(fabs(got - want) <= 1e-5 * (1 + fabs(want)));
                            differ += portable && got != element_f(portable, at);
                        }
            CHECK_MSG(r && r->shape[r->ndim - 1] == ow && bad == 0 && differ == 0,
                      "depthwise case %zu, %s: %lld of the outputs off the reference, %lld differ from the portable loop",
                      ci, oi__gemm_isa_name(isas[ii]), (long long)bad, (long long)differ);
            if (!portable)
                portable = r;
            else
                oi__tensor_free(r);
        }
        oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
        oi__tensor_free(portable), oi__tensor_free(x), oi__tensor_free(w), oi__tensor_free(b);
        free_attrs(a1, 4), free_attrs(a2, 4);
        free(xv), free(wv);
    }
}

/* A conv's geometry for the tests below, 1-D (s = 1: ih = kh = sh = 1) or 2-D. */
typedef struct conv_case {
    int s;
    int64_t c, m, ih, iw, kh, kw, sh, sw, ph, pw, dh, dw, group;
} conv_case;

static int64_t conv_out_h(const conv_case *k) { return (k->ih + 2 * k->ph - (k->kh - 1) * k->dh - 1) / k->sh + 1; }
static int64_t conv_out_w(const conv_case *k) { return (k->iw + 2 * k->pw - (k->kw - 1) * k->dw - 1) / k->sw + 1; }

/* The plain double sum over each window, the inputs rounded to f32 as the tensors hold them. */
static void conv_reference(const conv_case *k, const double *xv, const double *wv, const double *bv, double *want) {
    int64_t cg = k->c / k->group, mg = k->m / k->group, oh = conv_out_h(k), ow = conv_out_w(k);
    for (int64_t o = 0; o < k->m; o++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                double sum = (double)(float)bv[o];
                for (int64_t ci2 = 0; ci2 < cg; ci2++)
                    for (int64_t ky = 0; ky < k->kh; ky++)
                        for (int64_t kx = 0; kx < k->kw; kx++) {
                            int64_t iy = oy * k->sh - k->ph + ky * k->dh, ix = ox * k->sw - k->pw + kx * k->dw;
                            int64_t in_c = o / mg * cg + ci2;
                            if (iy >= 0 && iy < k->ih && ix >= 0 && ix < k->iw)
                                sum += (double)(float)wv[((o * cg + ci2) * k->kh + ky) * k->kw + kx] *
                                       (double)(float)xv[(in_c * k->ih + iy) * k->iw + ix];
                        }
                want[(o * oh + oy) * ow + ox] = sum;
            }
}

/* Runs case k on inputs made here and compares with conv_reference: the
 * number of outputs off by more than 1e-5 relative, or -1 if it did not run. */
static int64_t conv_case_errors(const conv_case *k) {
    int64_t cg = k->c / k->group, oh = conv_out_h(k), ow = conv_out_w(k), nx = k->c * k->ih * k->iw;
    int64_t nw = k->m * cg * k->kh * k->kw, ny = k->m * oh * ow;
    double *xv = (double *)malloc(sizeof(double) * (size_t)nx), *wv = (double *)malloc(sizeof(double) * (size_t)nw);
    double *bv = (double *)malloc(sizeof(double) * (size_t)k->m), *want = (double *)malloc(sizeof(double) * (size_t)ny);
    for (int64_t i = 0; i < nx; i++)
        xv[i] = sin(0.9 * (double)i + 0.2);
    for (int64_t i = 0; i < nw; i++)
        wv[i] = cos(0.7 * (double)i) / 4;
    for (int64_t i = 0; i < k->m; i++)
        bv[i] = 0.125 * (double)i - 0.25;
    conv_reference(k, xv, wv, bv, want);
    bool one_d = k->s == 1;
    oi__tensor *x = one_d ? tensor_f(OI_DTYPE_F32, SHAPE(1, k->c, k->iw), xv)
                          : tensor_f(OI_DTYPE_F32, SHAPE(1, k->c, k->ih, k->iw), xv);
    oi__tensor *w = one_d ? tensor_f(OI_DTYPE_F32, SHAPE(k->m, cg, k->kw), wv)
                          : tensor_f(OI_DTYPE_F32, SHAPE(k->m, cg, k->kh, k->kw), wv);
    oi__tensor *b = tensor_f(OI_DTYPE_F32, SHAPE(k->m), bv);
    oi__attr a2[4] = {attr_ints("strides", INTS(k->sh, k->sw)), attr_ints("pads", INTS(k->ph, k->pw, k->ph, k->pw)),
                      attr_ints("dilations", INTS(k->dh, k->dw)), attr_i("group", k->group)};
    oi__attr a1[4] = {attr_ints("strides", INTS(k->sw)), attr_ints("pads", INTS(k->pw, k->pw)),
                      attr_ints("dilations", INTS(k->dw)), attr_i("group", k->group)};
    oi__tensor *r = run3(one_d ? OI_OP_conv1d : OI_OP_conv2d, one_d ? a1 : a2, 4, x, w, b);
    int64_t bad = r && r->shape[r->ndim - 1] == ow ? 0 : -1;
    for (int64_t i = 0; bad >= 0 && i < ny; i++)
        bad += !(fabs(element_f(r, i) - want[i]) <= 1e-5 * (1 + fabs(want[i])));
    oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w), oi__tensor_free(b);
    free_attrs(a1, 4), free_attrs(a2, 4);
    free(xv), free(wv), free(bv), free(want);
    return bad;
}

/* Convs with 1-4 output positions (a streaming model's: each position's
 * patch is gathered whole): 1-D and 2-D, strides, pads cutting into the
 * patches, dilations, groups. */
static void test_conv_few_positions(void) {
    static const conv_case cases[] = {
        {1, 1, 6, 1, 40, 1, 16, 1, 8, 0, 0, 1, 1, 1},  /* the STFT's shape: 4 positions, stride 8 */
        {1, 5, 7, 1, 4, 1, 3, 1, 1, 0, 1, 1, 1, 1},   /* 4 positions, a pad each side */
        {1, 6, 4, 1, 2, 1, 3, 1, 2, 0, 1, 1, 1, 2},   /* 1 position, grouped */
        {1, 3, 5, 1, 9, 1, 3, 1, 4, 0, 2, 1, 3, 1},   /* dilated, padded */
        {2, 2, 3, 3, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1},   /* 2-D: 2 x 2 positions */
        {2, 4, 4, 5, 3, 2, 3, 3, 1, 0, 1, 2, 1, 2},   /* 2-D: dilated rows, grouped */
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        CHECK(conv_out_h(&cases[ci]) * conv_out_w(&cases[ci]) <= 4);
        int64_t bad = conv_case_errors(&cases[ci]);
        CHECK_MSG(bad == 0, "conv with few positions, case %zu: %lld outputs off", ci, (long long)bad);
    }
}

/* Strided 2-D convs through im2col by rows, in each ISA: the vector copy of
 * every second column (its last load must stop at the row's end: even and
 * odd widths), the copy split over the pool (PP-OCR's stem, 3 x 48 x 192),
 * and the product of few output channels read from cols as it lies (8 or 16
 * rows, a last block of columns partial or whole). */
static void test_conv_strided_rows(void) {
    static const conv_case cases[] = {
        {2, 3, 8, 48, 192, 3, 3, 2, 2, 1, 1, 1, 1, 1}, /* PP-OCR's stem */
        {2, 3, 8, 47, 191, 3, 3, 2, 2, 1, 1, 1, 1, 1}, /* odd sizes */
        {2, 2, 4, 6, 37, 3, 3, 2, 2, 1, 1, 1, 1, 1},   /* a short row: the tail alone */
        {2, 2, 4, 9, 50, 3, 2, 1, 3, 0, 1, 1, 2, 1},   /* stride 3, dilated */
        {2, 3, 8, 30, 75, 3, 3, 2, 2, 1, 1, 1, 1, 1},  /* 8 channels out, 570 positions: a partial last block */
        {2, 4, 16, 20, 60, 3, 3, 1, 1, 1, 1, 1, 1, 1}, /* 16 channels out in two groups of 8 rows */
    };
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            int64_t bad = conv_case_errors(&cases[ci]);
            CHECK_MSG(bad == 0, "strided conv %s, case %zu: %lld outputs off", oi__gemm_isa_name(isas[ii]), ci,
                      (long long)bad);
        }
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
}

static void test_conv(void) {
    const oi_dtype types[4] = {OI_DTYPE_F32, OI_DTYPE_F64, OI_DTYPE_F16, OI_DTYPE_BF16};
    for (int ti = 0; ti < 4; ti++) {
        oi_dtype t = types[ti];
        oi__tensor *x = tensor_f(t, SHAPE(2, 4, 7, 6), conv2d_x), *w = tensor_f(t, SHAPE(6, 2, 3, 2), conv2d_w),
                   *b = tensor_f(t, SHAPE(6), conv2d_b);
        oi__attr a[5] = {attr_ints("strides", INTS(2, 1)), attr_ints("pads", INTS(1, 0, 2, 1)),
                         attr_ints("dilations", INTS(1, 2)), attr_i("group", 2), attr_ints("kernel_shape", INTS(3, 2))};
        char what[64];
        snprintf(what, sizeof what, "conv2d %s", oi_dtype_name(t));
        oi__tensor *r = run3(OI_OP_conv2d, a, 5, x, w, b);
        expect_f(what, r, REF_SHAPE(conv2d_out), conv2d_out, dtype_tol(t));
        oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w), oi__tensor_free(b);
        free_attrs(a, 5);
    }
    test_conv_depthwise();
    test_conv_depthwise_isas();
    test_conv_few_positions();
    test_conv_strided_rows();
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(1, 3, 10), conv1d_x), *w = tensor_f(OI_DTYPE_F32, SHAPE(4, 3, 3), conv1d_w);
    oi__attr a[3] = {attr_ints("strides", INTS(2)), attr_ints("pads", INTS(1, 1)), attr_ints("dilations", INTS(2))};
    oi__tensor *r = run2(OI_OP_conv1d, a, 3, x, w);
    expect_f("conv1d", r, REF_SHAPE(conv1d_out), conv1d_out, 1e-6);
    oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w);
    free_attrs(a, 3);

    x = tensor_f(OI_DTYPE_F32, SHAPE(1, 1, 5, 5), same_x), w = tensor_f(OI_DTYPE_F32, SHAPE(1, 1, 4, 4), same_w);
    a[0] = attr_ints("strides", INTS(2, 2));
    a[1] = attr_s("auto_pad", "SAME_UPPER");
    r = run2(OI_OP_conv2d, a, 2, x, w);
    expect_f("conv2d SAME_UPPER", r, REF_SHAPE(same_upper_out), same_upper_out, 1e-6);
    oi__tensor_free(r);
    a[1] = attr_s("auto_pad", "SAME_LOWER");
    r = run2(OI_OP_conv2d, a, 2, x, w);
    expect_f("conv2d SAME_LOWER", r, REF_SHAPE(same_lower_out), same_lower_out, 1e-6);
    oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w);
    free_attrs(a, 1);

    x = tensor_f(OI_DTYPE_F32, SHAPE(2, 3, 4, 5), point_x), w = tensor_f(OI_DTYPE_F32, SHAPE(2, 3, 1, 1), point_w);
    r = run2(OI_OP_conv2d, NULL, 0, x, w);
    expect_f("conv2d 1x1", r, REF_SHAPE(point_out), point_out, 1e-6);
    oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w);
}

/* activation= on conv2d / conv1d: the numpy references of test_conv with
 * relu, gelu (exact and tanh forms, from libm here) or hard_swish applied, through each
 * path: grouped im2col, depthwise direct (f32) and im2col (f64), conv1d,
 * pointwise (no im2col). */
static double act_ref(int act, double v) {
    if (act == 0)
        return v < 0 ? 0.0 : v;
    if (act == 1)
        return 0.5 * v * erfc(-v / sqrt(2.0));
    if (act == 3) {
        double h = v / 6 + 0.5;
        return v * (h < 0 ? 0.0 : h > 1 ? 1.0 : h);
    }
    return 0.5 * v * (1.0 + tanh(sqrt(2.0 / 3.141592653589793) * (v + 0.044715 * v * v * v)));
}

static void check_conv_act(const char *what, oi_op op, oi__attr *attrs, size_t n_attrs, oi_dtype t, int xn,
                           const int64_t *xs, const double *xv, int wn, const int64_t *ws, const double *wv,
                           const double *bv, int on, const int64_t *os, const double *ref) {
    static const char *const acts[4] = {"relu", "gelu", "gelu_tanh", "hard_swish"};
    oi__tensor *x = tensor_f(t, xn, xs, xv), *w = tensor_f(t, wn, ws, wv);
    oi__tensor *b = bv ? tensor_f(t, 1, (const int64_t[]){ws[0]}, bv) : NULL;
    int64_t count = 1;
    for (int d = 0; d < on; d++)
        count *= os[d];
    for (int a = 0; a < 4; a++) {
        attrs[n_attrs] = attr_s("activation", acts[a]);
        oi__tensor *r = b ? run3(op, attrs, n_attrs + 1, x, w, b) : run2(op, attrs, n_attrs + 1, x, w);
        int64_t bad = 0;
        for (int64_t e = 0; r && e < count; e++) {
            double want = act_ref(a, ref[e]), got = element_f(r, e);
            bad += !(fabs(got - want) <= 2e-6 * (1 + fabs(want)));
        }
        CHECK_MSG(r && bad == 0, "%s %s activation=%s: %lld of %lld outputs off", what, oi_dtype_name(t), acts[a],
                  (long long)bad, (long long)count);
        oi__tensor_free(r);
    }
    oi__tensor_free(x), oi__tensor_free(w), oi__tensor_free(b);
}

static void test_conv_activation(void) {
    const oi_dtype types[2] = {OI_DTYPE_F32, OI_DTYPE_F64};
    for (int ti = 0; ti < 2; ti++) {
        oi_dtype t = types[ti];
        oi__attr a[6] = {attr_ints("strides", INTS(2, 1)), attr_ints("pads", INTS(1, 0, 2, 1)),
                         attr_ints("dilations", INTS(1, 2)), attr_i("group", 2), attr_ints("kernel_shape", INTS(3, 2))};
        check_conv_act("conv2d", OI_OP_conv2d, a, 5, t, 4, (const int64_t[]){2, 4, 7, 6}, conv2d_x, 4,
                       (const int64_t[]){6, 2, 3, 2}, conv2d_w, conv2d_b, REF_SHAPE(conv2d_out), conv2d_out);
        free_attrs(a, 6);
        oi__attr d[5] = {attr_ints("strides", INTS(2, 1)), attr_ints("pads", INTS(1, 0, 2, 1)),
                         attr_ints("dilations", INTS(1, 2)), attr_i("group", 4)};
        check_conv_act("depthwise conv2d", OI_OP_conv2d, d, 4, t, 4, (const int64_t[]){2, 4, 7, 6}, dw2d_x, 4,
                       (const int64_t[]){8, 1, 3, 3}, dw2d_w, dw2d_b, REF_SHAPE(dw2d_out), dw2d_out);
        free_attrs(d, 5);
        oi__attr one[4] = {attr_ints("strides", INTS(2)), attr_ints("pads", INTS(1, 1)), attr_ints("dilations", INTS(2))};
        check_conv_act("conv1d", OI_OP_conv1d, one, 3, t, 3, (const int64_t[]){1, 3, 10}, conv1d_x, 3,
                       (const int64_t[]){4, 3, 3}, conv1d_w, NULL, REF_SHAPE(conv1d_out), conv1d_out);
        free_attrs(one, 4);
        oi__attr none[1];
        check_conv_act("conv2d 1x1", OI_OP_conv2d, none, 0, t, 4, (const int64_t[]){2, 3, 4, 5}, point_x, 4,
                       (const int64_t[]){2, 3, 1, 1}, point_w, NULL, REF_SHAPE(point_out), point_out);
        free_attrs(none, 1);
    }
    /* planes of 10 x 13 (two 64-wide blocks and a tail) on each ISA's loops:
     * 1x1 (gemm, then the activation) and depthwise 3x3 (per plane) */
    enum { C = 4, HW = 130 };
    double xv[C * HW], wv[C * C], dwv[C * 9], bv[C];
    for (int i = 0; i < C * HW; i++)
        xv[i] = sin(0.37 * i + 0.1) * 4;
    for (int i = 0; i < C * C; i++)
        wv[i] = cos(0.9 * i) / 2;
    for (int i = 0; i < C * 9; i++)
        dwv[i] = (i % 5 - 2) * 0.125;
    for (int i = 0; i < C; i++)
        bv[i] = 0.5 * i - 1;
    double ref_pw[C * HW], ref_dw[C * HW];
    for (int m = 0; m < C; m++)
        for (int p = 0; p < HW; p++) {
            double s = bv[m], d = bv[m];
            for (int c = 0; c < C; c++)
                s += (double)(float)wv[m * C + c] * (float)xv[c * HW + p];
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++) {
                    int iy = p / 13 + ky - 1, ix = p % 13 + kx - 1;
                    if (iy >= 0 && iy < 10 && ix >= 0 && ix < 13)
                        d += (double)(float)dwv[m * 9 + ky * 3 + kx] * (float)xv[m * HW + iy * 13 + ix];
                }
            ref_pw[m * HW + p] = s, ref_dw[m * HW + p] = d;
        }
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        oi__attr none[1], dw[3] = {attr_ints("pads", INTS(1, 1, 1, 1)), attr_i("group", C)};
        check_conv_act(oi__gemm_isa_name(isas[ii]), OI_OP_conv2d, none, 0, OI_DTYPE_F32, 4,
                       (const int64_t[]){1, C, 10, 13}, xv, 4, (const int64_t[]){C, C, 1, 1}, wv, bv, 4,
                       (const int64_t[]){1, C, 10, 13}, ref_pw);
        check_conv_act(oi__gemm_isa_name(isas[ii]), OI_OP_conv2d, dw, 2, OI_DTYPE_F32, 4,
                       (const int64_t[]){1, C, 10, 13}, xv, 4, (const int64_t[]){C, 1, 3, 3}, dwv, bv, 4,
                       (const int64_t[]){1, C, 10, 13}, ref_dw);
        free_attrs(dw, 3);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);

    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(1, 3, 10), conv1d_x), *w = tensor_f(OI_DTYPE_F32, SHAPE(4, 3, 3), conv1d_w);
    oi__attr bad_act = attr_s("activation", "tanh");
    const oi__tensor *xw[2] = {x, w};
    expect_error(OI_OP_conv1d, &bad_act, 1, 2, xw, "conv1d: activation must be");
    oi__tensor_free(x), oi__tensor_free(w);
}

static void test_conv_transpose(void) {
    const oi_dtype types[2] = {OI_DTYPE_F32, OI_DTYPE_F64};
    for (int ti = 0; ti < 2; ti++) {
        oi_dtype t = types[ti];
        oi__tensor *x = tensor_f(t, SHAPE(1, 4, 3, 4), convt_x), *w = tensor_f(t, SHAPE(4, 3, 3, 3), convt_w),
                   *b = tensor_f(t, SHAPE(6), convt_b);
        oi__attr a[5] = {attr_ints("strides", INTS(2, 3)), attr_ints("pads", INTS(1, 0, 0, 2)),
                         attr_ints("output_padding", INTS(1, 1)), attr_ints("dilations", INTS(1, 2)), attr_i("group", 2)};
        oi__tensor *r = run3(OI_OP_conv_transpose2d, a, 5, x, w, b);
        expect_f(t == OI_DTYPE_F32 ? "conv_transpose2d f32" : "conv_transpose2d f64", r, REF_SHAPE(convt_out), convt_out,
                 dtype_tol(t));
        oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w), oi__tensor_free(b);
        free_attrs(a, 5);
    }
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(1, 1, 3, 3), convt_shape_x), *w = tensor_f(OI_DTYPE_F32, SHAPE(1, 2, 3, 3), convt_shape_w);
    oi__attr a[2] = {attr_ints("strides", INTS(3, 2)), attr_ints("output_shape", INTS(10, 8))};
    oi__tensor *r = run2(OI_OP_conv_transpose2d, a, 2, x, w);
    expect_f("conv_transpose2d output_shape", r, REF_SHAPE(convt_shape_out), convt_shape_out, 1e-6);
    oi__tensor_free(r), oi__tensor_free(x), oi__tensor_free(w);
    free_attrs(a, 2);
}

/* max_pool2d 2 x 2 / 2 over 200 planes of 3 x 96 (PP-OCR's last pool, split
 * over the pool by planes), a NaN in plane 150, in each ISA; `a` holds
 * kernel_shape and strides. */
static void test_max_pool_planes(const oi__attr *a) {
    enum { planes = 200, h = 3, w = 96, ow = 48 };
    double *v = (double *)malloc(sizeof(double) * planes * h * w), *want = (double *)malloc(sizeof(double) * planes * ow);
    for (int i = 0; i < planes * h * w; i++)
        v[i] = (double)(float)sin(0.7 * i);
    v[(150 * h + 1) * w + 31] = NAN; /* window 15 of plane 150 */
    for (int p = 0; p < planes; p++)
        for (int ox = 0; ox < ow; ox++) {
            double m = -INFINITY;
            for (int ky = 0; ky < 2; ky++)
                for (int kx = 0; kx < 2; kx++) {
                    double e = v[(p * h + ky) * w + ox * 2 + kx];
                    m = e != e || m != m ? NAN : e > m ? e : m;
                }
            want[p * ow + ox] = m;
        }
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(1, planes, h, w), v);
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        oi__tensor *r = run1(OI_OP_max_pool2d, a, 2, x);
        int bad = r && r->shape[2] == 1 && r->shape[3] == ow ? 0 : -1;
        for (int i = 0; bad >= 0 && i < planes * ow; i++)
            bad += want[i] != want[i] ? !isnan(element_f(r, i)) : element_f(r, i) != want[i];
        CHECK_MSG(bad == 0, "max_pool2d over 200 planes %s: %d outputs off", oi__gemm_isa_name(isas[ii]), bad);
        oi__tensor_free(r);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    oi__tensor_free(x);
    free(v), free(want);
}

static void test_pools(void) {
    oi__tensor *x = tensor_f(OI_DTYPE_F32, SHAPE(1, 2, 5, 6), maxpool_x);
    oi__attr a[6] = {attr_ints("kernel_shape", INTS(3, 2)), attr_ints("strides", INTS(2, 2)),
                     attr_ints("pads", INTS(1, 0, 1, 1)), attr_ints("dilations", INTS(1, 2)), attr_b("ceil_mode", true),
                     attr_b("count_include_pad", true)};
    oi__tensor *r = NULL;
    const oi__gemm_isa pool_isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ii = 0; ii < sizeof pool_isas / sizeof pool_isas[0]; ii++) { /* pads, dilation, ceil_mode */
        if (!oi__gemm_force_isa(pool_isas[ii]))
            continue;
        char what[48];
        snprintf(what, sizeof what, "max_pool2d %s", oi__gemm_isa_name(pool_isas[ii]));
        r = run1(OI_OP_max_pool2d, a, 5, x);
        expect_f(what, r, REF_SHAPE(maxpool_out), maxpool_out, 0);
        oi__tensor_free(r);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    oi__tensor_free(x);
    free_attrs(a, 6);

    /* u8 by hand: 2x2 windows, stride 2 over [[1 9 3 4] [5 2 250 0]] */
    int64_t bytes[8] = {1, 9, 3, 4, 5, 2, 250, 0}, maxima[2] = {9, 250};
    x = tensor_i(OI_DTYPE_U8, SHAPE(1, 1, 2, 4), bytes);
    a[0] = attr_ints("kernel_shape", INTS(2, 2));
    a[1] = attr_ints("strides", INTS(2, 2));
    r = run1(OI_OP_max_pool2d, a, 2, x);
    CHECK(r && r->dtype == OI_DTYPE_U8 && r->shape[3] == 2 && oi__load_i64(r->dtype, oi__tensor_data(r), 0) == maxima[0] &&
          oi__load_i64(r->dtype, oi__tensor_data(r), 1) == maxima[1]);
    oi__tensor_free(r), oi__tensor_free(x);
    free_attrs(a, 2);

    const oi_dtype types[3] = {OI_DTYPE_F32, OI_DTYPE_F16, OI_DTYPE_F64};
    for (int ti = 0; ti < 3; ti++) {
        oi_dtype t = types[ti];
        x = tensor_f(t, SHAPE(2, 2, 5, 5), avgpool_x);
        a[0] = attr_ints("kernel_shape", INTS(3, 3));
        a[1] = attr_ints("strides", INTS(2, 2));
        a[2] = attr_ints("pads", INTS(1, 1, 1, 1));
        a[3] = attr_b("ceil_mode", true);
        a[4] = attr_b("count_include_pad", false);
        r = run1(OI_OP_avg_pool2d, a, 5, x);
        expect_f("avg_pool2d", r, REF_SHAPE(avgpool_out), avgpool_out, dtype_tol(t));
        oi__tensor_free(r);
        a[4] = attr_b("count_include_pad", true);
        r = run1(OI_OP_avg_pool2d, a, 5, x);
        expect_f("avg_pool2d count_include_pad", r, REF_SHAPE(avgpool_incl_out), avgpool_incl_out, dtype_tol(t));
        oi__tensor_free(r);
        free_attrs(a, 3);
        a[0] = attr_ints("kernel_shape", INTS(2, 2));
        a[1] = attr_s("auto_pad", "SAME_UPPER");
        r = run1(OI_OP_avg_pool2d, a, 2, x);
        expect_f("avg_pool2d SAME_UPPER", r, REF_SHAPE(avgpool_same_out), avgpool_same_out, dtype_tol(t));
        oi__tensor_free(r);
        free_attrs(a, 1);
        r = run1(OI_OP_global_avg_pool, NULL, 0, x);
        expect_f("global_avg_pool", r, REF_SHAPE(gap_out), gap_out, dtype_tol(t));
        oi__tensor_free(r), oi__tensor_free(x);
    }

    /* f32 read in place, in each ISA's lanes: the average's f64 sums (35 per plane:
     * whole vectors and a tail), a NaN that propagates through max */
    double v[105], want[3];
    for (int p = 0; p < 3; p++) {
        double sum = 0;
        for (int i = 0; i < 35; i++)
            sum += v[p * 35 + i] = (double)(float)(sin(0.9 * (p * 35 + i)) * 1000);
        want[p] = sum / 35;
    }
    x = tensor_f(OI_DTYPE_F32, SHAPE(1, 3, 5, 7), v);
    oi__gemm_isa isas[] = {OI__GEMM_ISA_PORTABLE, OI__GEMM_ISA_AVX2, OI__GEMM_ISA_AVX512};
    for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        char what[64];
        snprintf(what, sizeof what, "global_avg_pool f32 %s", oi__gemm_isa_name(isas[ii]));
        r = run1(OI_OP_global_avg_pool, NULL, 0, x);
        expect_f(what, r, SHAPE(1, 3, 1, 1), want, 1e-7 * 1000);
        oi__tensor_free(r);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    ((float *)oi__tensor_data(x))[8] = NAN; /* plane 0, row 1, column 1 */
    a[0] = attr_ints("kernel_shape", INTS(2, 2));
    a[1] = attr_ints("strides", INTS(2, 2));
    for (size_t ii = 0; ii < sizeof isas / sizeof isas[0]; ii++) {
        if (!oi__gemm_force_isa(isas[ii]))
            continue;
        r = run1(OI_OP_max_pool2d, a, 2, x);
        CHECK_MSG(r && r->shape[2] == 2 && r->shape[3] == 3 && isnan(element_f(r, 0)) && !isnan(element_f(r, 1)) &&
                      element_f(r, 7) == fmax(fmax(v[35 + 2], v[35 + 3]), fmax(v[35 + 9], v[35 + 10])),
                  "max_pool2d f32 %s: a NaN wins its window only, the others are their maxima",
                  oi__gemm_isa_name(isas[ii]));
        oi__tensor_free(r);
    }
    oi__gemm_force_isa(OI__GEMM_ISA_AUTO);
    oi__tensor_free(x);
    test_max_pool_planes(a);
    free_attrs(a, 2);
}

/* ------------------------------------------------------------------ */
/* Validation errors                                                   */
/* ------------------------------------------------------------------ */
static void test_errors(void) {
    oi__tensor *x = oi__tensor_new(OI_DTYPE_F32, SHAPE(2, 3, 4)), *i8 = oi__tensor_new(OI_DTYPE_I8, SHAPE(2)),
               *f2 = oi__tensor_new(OI_DTYPE_F32, SHAPE(2));
    const oi__tensor *one[1] = {x};
    oi__attr a[3];
    a[0] = attr_ints("shape", INTS(5, -1));
    expect_error(OI_OP_reshape, a, 1, 1, one, "reshape: 24 elements do not split into dims of product 5 plus -1");
    free_attrs(a, 1);
    a[0] = attr_ints("shape", INTS(-1, -1));
    expect_error(OI_OP_reshape, a, 1, 1, one, "reshape: shape has more than one -1");
    free_attrs(a, 1);
    a[0] = attr_ints("shape", INTS(5, 5));
    expect_error(OI_OP_reshape, a, 1, 1, one, "reshape: cannot reshape [2, 3, 4] (24 elements) into 25 elements");
    free_attrs(a, 1);
    a[0] = attr_ints("perm", INTS(0, 1, 1));
    expect_error(OI_OP_transpose, a, 1, 1, one, "transpose: perm is not a permutation (axis 1 appears twice)");
    free_attrs(a, 1);
    a[0] = attr_ints("perm", INTS(0, 3, 1));
    expect_error(OI_OP_transpose, a, 1, 1, one, "transpose: perm entry 3 is out of range for rank 3");
    free_attrs(a, 1);
    a[0] = attr_ints("axes", INTS(1));
    expect_error(OI_OP_squeeze, a, 1, 1, one, "squeeze: axis 1 has size 3 (only size-1 axes can be removed)");
    free_attrs(a, 1);
    a[0] = attr_ints("axes", INTS(0, -5)); /* -5 is 0 in the rank-5 result */
    expect_error(OI_OP_unsqueeze, a, 1, 1, one, "unsqueeze: axis 0 appears twice in axes");
    free_attrs(a, 1);
    a[0] = attr_ints("starts", INTS(0));
    a[1] = attr_ints("ends", INTS(2));
    a[2] = attr_ints("steps", INTS(0));
    expect_error(OI_OP_slice, a, 3, 1, one, "slice: steps[0] is 0");
    free_attrs(a, 3);
    a[0] = attr_ints("sizes", INTS(1, 1));
    a[1] = attr_i("num", 2);
    a[2] = attr_i("index", 0);
    expect_error(OI_OP_split, a, 3, 1, one, "split: give exactly one of sizes= and num=");
    free_attrs(a, 3);
    a[0] = attr_ints("sizes", INTS(1, 2));
    a[1] = attr_i("index", 0);
    expect_error(OI_OP_split, a, 2, 1, one, "split: sizes sum to 3 but axis 0 has 2");
    free_attrs(a, 2);
    a[0] = attr_ints("shape", INTS(3, 3, 4));
    expect_error(OI_OP_expand, a, 1, 1, one, "expand: [2, 3, 4] does not broadcast to shape[0] = 3");
    free_attrs(a, 1);
    a[0] = attr_ints("repeats", INTS(1, 2));
    expect_error(OI_OP_tile, a, 1, 1, one, "tile: repeats has 2 entries for rank 3");
    free_attrs(a, 1);
    a[0] = attr_ints("pads", INTS(1, 1));
    expect_error(OI_OP_pad, a, 1, 1, one, "pad: pads has 2 entries but 3 axes need 6");
    free_attrs(a, 1);
    a[0] = attr_ints("pads", INTS(0, 0, 0, 0, 0, 0));
    a[1] = attr_s("mode", "mirror");
    expect_error(OI_OP_pad, a, 2, 1, one, "pad: mode must be \"constant\", \"reflect\", \"edge\" or \"wrap\", got \"mirror\"");
    free_attrs(a, 2);

    a[0] = attr_i("axis", 1);
    const oi__tensor *pair[2] = {x, f2};
    expect_error(OI_OP_concat, a, 1, 2, pair, "concat: input 1 has shape [2], input 0 [2, 3, 4] (only axis 1 may differ)");
    expect_error(OI_OP_gather, a, 1, 2, pair, "gather: indices must be an integer dtype");
    free_attrs(a, 1);
    const oi__tensor *mixed[2] = {x, i8};
    a[0] = attr_i("axis", 0);
    expect_error(OI_OP_concat, a, 1, 2, mixed, "concat: input 1 has dtype i8 but input 0 has f32");
    const oi__tensor *where_bad[3] = {x, x, x};
    expect_error(OI_OP_where, NULL, 0, 3, where_bad, "where: the condition must be bool, got f32");
    const oi__tensor *gemm_bad[2] = {x, x};
    expect_error(OI_OP_gemm, NULL, 0, 2, gemm_bad, "gemm: A and B need rank 2");

    oi__tensor *img = oi__tensor_new(OI_DTYPE_F32, SHAPE(1, 4, 5, 5)), *w = oi__tensor_new(OI_DTYPE_F32, SHAPE(2, 3, 3, 3));
    const oi__tensor *conv[2] = {img, w};
    expect_error(OI_OP_conv2d, NULL, 0, 2, conv, "conv2d: x has 4 channels and w is [2, 3, ...]");
    a[0] = attr_ints("kernel_shape", INTS(7, 2));
    expect_error(OI_OP_max_pool2d, a, 1, 1, conv, "max_pool2d: the window (7 with dilation) is larger than spatial dim 0");
    free_attrs(a, 1);
    a[0] = attr_ints("kernel_shape", INTS(2, 2));
    a[1] = attr_s("auto_pad", "SAME");
    expect_error(OI_OP_avg_pool2d, a, 2, 1, conv, "avg_pool2d: auto_pad must be \"NOTSET\", \"VALID\", \"SAME_UPPER\" or \"SAME_LOWER\", got \"SAME\"");
    free_attrs(a, 2);
    a[0] = attr_ints("kernel_shape", INTS(2, 2));
    a[1] = attr_ints("pads", INTS(0, 2, 0, 0));
    expect_error(OI_OP_max_pool2d, a, 2, 1, conv, "max_pool2d: pads on spatial dim 1 must be smaller than the window (2)");
    free_attrs(a, 2);
    a[0] = attr_ints("strides", INTS(1, 1, 1));
    const oi__tensor *conv_ok[2] = {img, img};
    expect_error(OI_OP_conv2d, a, 1, 2, conv_ok, "conv2d: strides has 3 entries, expected 2");
    free_attrs(a, 1);
    oi__tensor_free(img), oi__tensor_free(w), oi__tensor_free(x), oi__tensor_free(i8), oi__tensor_free(f2);
}

/* ------------------------------------------------------------------ */
/* In a graph: layout ops into temporaries are views                   */
/* ------------------------------------------------------------------ */
OI_GRAPH(g_views,
  OI_DYNAMIC(
    OI_VAR(x, f32[2, 3, 4])
  )
  OI_VOLATILE(
    OI_VAR(w, f32[4, 1])
    OI_VAR(out, f32[6, 1])
    OI_VAR(doubled, f32[6, 4])
    OI_VAR(sliced, f32[2, 2])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(r, f32[6, 4])
    OI_ASSIGN(t, f32[4, 6])
    OI_ASSIGN(s, f32[2, 2])
    OI_ASSIGN(r2, f32[6, 4])
    OI_OP(reshape, x, shape=[6, -1]) OI_TO(r)
    OI_OP(transpose, r) OI_TO(t)
    OI_OP(matmul, r, w) OI_TO(out)
    OI_OP(slice, t, starts=[1, 2], ends=[3, 4]) OI_TO(s)
    OI_OP(add, s, s) OI_TO(sliced)
    OI_OP(add, r, r) OI_TO(r)
    OI_OP(reshape, x, shape=[6, 4]) OI_TO(r2)
    OI_OP(add, r, r2) OI_TO(doubled)
    OI_RETURN()
  )
)

static void test_graph_views(void) {
    oi_writer *wr = oi_writer_new();
    float wv[4] = {1, 2, 0, -1};
    uint64_t dims[2] = {4, 1};
    CHECK_OK(oi_writer_add_tensor(wr, "w", OI_DTYPE_F32, 2, dims, wv, NULL));
    char path[128];
    snprintf(path, sizeof path, "/tmp/oi_test_shape_ops_%d.oinf", (int)getpid());
    CHECK_OK(oi_writer_write_file(wr, 2, path));
    oi_writer_free(wr);
    oi_model *m = oi_model_open(path);
    remove(path);
    CHECK_MSG(m != NULL, "open: %s", oi_last_error());
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_CPU;
    oi_simulator *sim = m ? oi_simulator_new_desc(m, &desc) : NULL;
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g_views()) : NULL;
    CHECK_MSG(e != NULL, "executor: %s", oi_last_error());
    if (e) {
        float xv[24];
        for (int i = 0; i < 24; i++)
            xv[i] = (float)i;
        CHECK_OK(OI_TRY_INSERT(e, x, xv, 24));
        CHECK_OK(oi_executor_run_step(e));
        oi_tensor_view v;
        /* out[i] = r[i, :] . [1, 2, 0, -1] with r[i, j] = 4 i + j: 4 i + 2 (4 i + 1) - (4 i + 3) = 8 i - 1 */
        if (oi_executor_fetch(e, "out", OI_DTYPE_F32, &v) == OI_OK)
            for (int i = 0; i < 6; i++)
                CHECK_NEAR(((const float *)v.data)[i], 8 * i - 1, 0);
        /* t = r^T: t[a, b] = 4 b + a; s = t[1:3, 2:4] = [[9, 13], [10, 14]], doubled */
        float want_s[4] = {18, 26, 20, 28};
        if (oi_executor_fetch(e, "sliced", OI_DTYPE_F32, &v) == OI_OK)
            for (int i = 0; i < 4; i++)
                CHECK_NEAR(((const float *)v.data)[i], want_s[i], 0);
        /* r += r wrote a private copy: x (and r2, another view of it) is unchanged: doubled = 2x + x */
        if (oi_executor_fetch(e, "doubled", OI_DTYPE_F32, &v) == OI_OK)
            for (int i = 0; i < 24; i++)
                CHECK_NEAR(((const float *)v.data)[i], 3 * i, 0);
        if (oi_executor_fetch(e, "x", OI_DTYPE_F32, &v) == OI_OK)
            for (int i = 0; i < 24; i++)
                CHECK_NEAR(((const float *)v.data)[i], i, 0);
        if (oi_executor_fetch(e, "t", OI_DTYPE_F32, &v) == OI_OK) {
            CHECK(v.ndim == 2 && v.shape[0] == 4 && v.shape[1] == 6);
            CHECK_NEAR(((const float *)v.data)[1], 4, 0); /* t[0, 1] = r[1, 0] */
        }
        /* a second step reuses nothing stale */
        for (int i = 0; i < 24; i++)
            xv[i] = (float)(-i);
        CHECK_OK(OI_TRY_INSERT(e, x, xv, 24));
        CHECK_OK(oi_executor_run_step(e));
        if (oi_executor_fetch(e, "doubled", OI_DTYPE_F32, &v) == OI_OK)
            for (int i = 0; i < 24; i++)
                CHECK_NEAR(((const float *)v.data)[i], -3 * i, 0);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
}

/* Optional and variadic inputs from the DSL: conv2d without a bias,
 * concat of two inputs; too few inputs are refused at validation. */
OI_GRAPH(g_optional,
  OI_DYNAMIC(
    OI_VAR(x, f32[1, 2, 4, 4])
  )
  OI_VOLATILE(
    OI_VAR(w, f32[3, 2, 1, 1])
    OI_VAR(y, f32[1, 6, 4, 4])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(c, f32[1, 3, 4, 4])
    OI_OP(conv2d, x, w) OI_TO(c)
    OI_OP(concat, c, c, axis=1) OI_TO(y)
    OI_RETURN()
  )
)

OI_GRAPH(g_too_few,
  OI_VOLATILE(
    OI_VAR(w, f32[3, 2, 1, 1])
    OI_VAR(y, f32[3, 2, 1, 1])
  )
  OI_BLOCK(entry,
    OI_OP(conv2d, w) OI_TO(y)
    OI_RETURN()
  )
)

static void test_graph_optional_inputs(void) {
    oi_writer *wr = oi_writer_new();
    float wv[6] = {1, 0, 0, 1, 1, -1}; /* y0 = x0, y1 = x1, y2 = x0 - x1 */
    uint64_t dims[4] = {3, 2, 1, 1};
    CHECK_OK(oi_writer_add_tensor(wr, "w", OI_DTYPE_F32, 4, dims, wv, NULL));
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_OK(oi_writer_to_memory(wr, 2, &bytes, &size));
    oi_writer_free(wr);
    oi_model *m = bytes ? oi_model_open_memory(bytes, size) : NULL;
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_CPU;
    oi_simulator *sim = m ? oi_simulator_new_desc(m, &desc) : NULL;
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g_optional()) : NULL;
    CHECK_MSG(e != NULL, "executor: %s", oi_last_error());
    if (e) {
        float xv[32];
        for (int i = 0; i < 32; i++) /* x[c, p] = 16 c + p */
            xv[i] = (float)i;
        CHECK_OK(OI_TRY_INSERT(e, x, xv, 32));
        CHECK_OK(oi_executor_run_step(e));
        oi_tensor_view v;
        if (oi_executor_fetch(e, "y", OI_DTYPE_F32, &v) == OI_OK && v.len == 96)
            for (int half = 0; half < 2; half++)
                for (int p = 0; p < 16; p++) {
                    const float *y = (const float *)v.data + half * 48;
                    CHECK_NEAR(y[p], p, 0);
                    CHECK_NEAR(y[16 + p], 16 + p, 0);
                    CHECK_NEAR(y[32 + p], -16, 0);
                }
    }
    oi_executor_free(e);
    CHECK(sim && !oi_simulator_make_executor(sim, g_too_few()));
    CHECK_STR_CONTAINS(oi_last_error(), "op conv2d expects 2 to 3 inputs, got 1");
    oi_simulator_free(sim);
    oi_model_close(m);
    oi_free(bytes);
}

/* Big allocations made while recording that are still live: a step that
 * transposes a [64, 1024] f32 input (256 KiB) into temporaries must not
 * keep a copy of it. (The executor may zero-fill a temporary at its
 * assign; the view replaces and frees that buffer.) */
#define BIG_ALLOC (64 * 1024)
static void *big_live[64];
static bool recording;

static void forget_big(void *ptr) {
    for (size_t i = 0; ptr && i < COUNT(big_live); i++)
        if (big_live[i] == ptr)
            big_live[i] = NULL;
}

static size_t count_big_live(void) {
    size_t n = 0;
    for (size_t i = 0; i < COUNT(big_live); i++)
        n += big_live[i] != NULL;
    return n;
}

static void *counting_realloc(void *ptr, size_t size, void *user_data) {
    (void)user_data;
    forget_big(ptr);
    void *p = realloc(ptr, size);
    for (size_t i = 0; p && recording && size >= BIG_ALLOC && i < COUNT(big_live); i++)
        if (!big_live[i]) {
            big_live[i] = p;
            break;
        }
    return p;
}

static void counting_free(void *ptr, void *user_data) {
    (void)user_data;
    forget_big(ptr);
    free(ptr);
}

OI_GRAPH(g_no_copy,
  OI_DYNAMIC(
    OI_VAR(x, f32[64, 1024])
  )
  OI_VOLATILE(
    OI_VAR(out, f32[1024])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(t, f32[1024, 64])
    OI_ASSIGN(u, f32[1024, 1, 64])
    OI_OP(transpose, x) OI_TO(t)
    OI_OP(unsqueeze, t, axes=[1]) OI_TO(u)
    OI_OP(sum_axis, u, axes=[1, 2]) OI_TO(out)
    OI_RETURN()
  )
)

static void test_graph_no_copy(void) {
    oi_allocator counting = {counting_realloc, counting_free, NULL};
    CHECK_OK(oi_set_allocator(&counting));
    oi_writer *wr = oi_writer_new();
    float one = 1;
    uint64_t dims[1] = {1};
    CHECK_OK(oi_writer_add_tensor(wr, "unused", OI_DTYPE_F32, 1, dims, &one, NULL));
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_OK(oi_writer_to_memory(wr, 2, &bytes, &size));
    oi_writer_free(wr);
    oi_model *m = bytes ? oi_model_open_memory(bytes, size) : NULL;
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_CPU;
    oi_simulator *sim = m ? oi_simulator_new_desc(m, &desc) : NULL;
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g_no_copy()) : NULL;
    CHECK_MSG(e != NULL, "executor: %s", oi_last_error());
    if (e) {
        static float xv[64 * 1024];
        for (int i = 0; i < 64 * 1024; i++) /* x[r, c] = c + r / 64: out[c] = 64 c + 63 / 2 */
            xv[i] = (float)(i % 1024) + (float)(i / 1024) / 64.0f;
        CHECK_OK(OI_TRY_INSERT(e, x, xv, 64 * 1024));
        recording = true;
        CHECK_OK(oi_executor_run_step(e));
        recording = false;
        CHECK_MSG(count_big_live() == 0, "the step keeps %zu buffers of 64 KiB or more: a layout op copied", count_big_live());
        oi_tensor_view v;
        if (oi_executor_fetch(e, "out", OI_DTYPE_F32, &v) == OI_OK && v.len == 1024)
            for (int c = 0; c < 1024; c += 111)
                CHECK_NEAR(((const float *)v.data)[c], 64.0 * c + 31.5, 1e-3);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
    oi_free(bytes);
    CHECK_OK(oi_set_allocator(NULL));
}

int main(void) {
    test_layout_ops();
    test_views_downstream();
    test_reshape_restrides();
    test_every_dtype();
    test_concat_gather_where();
    test_pad();
    test_gemm();
    test_gemm_activation();
    test_conv();
    test_conv_transpose();
    test_conv_activation();
    test_pools();
    test_errors();
    test_graph_views();
    test_graph_no_copy();
    test_graph_optional_inputs();
    return check_result("test_shape_ops");
}
