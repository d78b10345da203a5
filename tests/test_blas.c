/* test_blas.c - the "blas" backend (OpenBLAS) against the CPU backend.
 *
 * Two layers: the backend's run_op on hand-made tensors (odd sizes, every
 * operand layout: dense, padded rows, transposed views, strided views that
 * must be packed, broadcast batches, outputs that alias an input or are not
 * dense), then whole graphs through the executor on OI_DEVICE_BLAS and
 * OI_DEVICE_CPU (transpose views, batched broadcast, gemm with bias, f64, a
 * relu that the CPU kernels run), plus selection, threads and discovery.
 *
 * Reference: the CPU backend's kernels (kernels/matmul.c, conv.c, our own
 * gemm): an independent path. Tolerance: each result of a length-K dot
 * product is within (K + 2) u S of the exact value, S = sum |a_ik b_kj|
 * (+ |beta c|), u = 2^-24 (f32) or 2^-53 (f64); two results are within
 * twice that. S is computed by the CPU kernel on |a| and |b|. A wrong
 * layout, transpose or batch is off by O(1), far outside. */
#include "../openinfer_impl/internal.h"
#include "../openinfer_impl/simulator.h"
#include "check.h"
#include "op_test_util.h"

#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>

static const oi__backend *blas = &oi__blas_backend;
static void *blas_ctx;

static uint32_t rng_state = 12345u;
static double rnd(void) { /* uniform in [-1, 1) */
    rng_state = rng_state * 1664525u + 1013904223u;
    return (double)(rng_state >> 8) / 8388608.0 - 1.0;
}

static double unit_roundoff(oi_dtype t) { return t == OI_DTYPE_F64 ? 0x1p-53 : 0x1p-24; }

/* ------------------------------------------------------------------ */
/* Operands with every layout                                          */
/* ------------------------------------------------------------------ */
typedef enum layout {
    LAYOUT_DENSE,      /* row-major, ld = cols                           */
    LAYOUT_TRANSPOSED, /* a transposed view: unit stride down the rows   */
    LAYOUT_PADDED,     /* row-major, ld = cols + 3, offset 1             */
    LAYOUT_STRIDED,    /* every other column: no unit stride, packed     */
    LAYOUT_COUNT
} layout;
static const char *const layout_names[] = {"dense", "transposed", "padded", "strided"};

/* A [batch..., rows, cols] view with `lay`'s matrix strides over random
 * storage (gaps random too). A batch dim in `zero_mask` has stride 0 (an
 * expanded view): every batch reads the same matrix. */
static oi__tensor *make_operand(oi_dtype t, int batch_ndim, const int64_t *batch, unsigned zero_mask, int64_t rows,
                                int64_t cols, layout lay) {
    int64_t rs = cols, cs = 1, off = 0, span = rows * cols;
    if (lay == LAYOUT_TRANSPOSED)
        rs = 1, cs = rows;
    if (lay == LAYOUT_PADDED)
        rs = cols + 3, off = 1, span = rows * (cols + 3) + 1;
    if (lay == LAYOUT_STRIDED)
        rs = 2 * cols, cs = 2, span = rows * 2 * cols;
    int64_t strides[OI_MAX_DIMS], total = span;
    for (int d = batch_ndim - 1; d >= 0; d--) {
        strides[d] = (zero_mask >> d) & 1 ? 0 : total;
        total *= (zero_mask >> d) & 1 ? 1 : batch[d];
    }
    oi__tensor *store = oi__tensor_new(t, 1, &total);
    if (!store)
        return NULL;
    for (int64_t i = 0; i < total; i++)
        oi__store_f64(t, oi__tensor_data(store), i, rnd());
    store->ndim = batch_ndim + 2;
    for (int d = 0; d < batch_ndim; d++)
        store->shape[d] = batch[d], store->strides[d] = strides[d];
    store->shape[batch_ndim] = rows, store->strides[batch_ndim] = rs;
    store->shape[batch_ndim + 1] = cols, store->strides[batch_ndim + 1] = cs;
    store->offset = off;
    return store;
}

/* A dense copy with every element replaced by its absolute value. */
static oi__tensor *abs_clone(const oi__tensor *x) {
    oi__tensor *c = oi__tensor_clone(x);
    for (int64_t i = 0; c && i < oi__shape_numel(c->ndim, c->shape); i++)
        oi__store_f64(c->dtype, oi__tensor_data(c), i, fabs(oi__load_f64(c->dtype, oi__tensor_data(c), i)));
    return c;
}

/* Element i (row-major over the shape) of a possibly strided tensor. */
static double element(const oi__tensor *t, int64_t i) {
    int64_t at = t->offset;
    for (int d = t->ndim - 1; d >= 0; d--) {
        at += (i % t->shape[d]) * t->strides[d];
        i /= t->shape[d];
    }
    return oi__load_f64(t->dtype, oi__tensor_data(t), at);
}

/* |got - want| <= 2 (K + 2) u S elementwise; returns the worst ratio to the bound. */
static double compare(const char *what, const oi__tensor *got, const oi__tensor *want, const oi__tensor *abs_sum,
                      int64_t k) {
    double worst = 0;
    int64_t n = oi__shape_numel(want->ndim, want->shape);
    for (int64_t i = 0; i < n; i++) {
        double g = element(got, i), w = element(want, i);
        double bound = 2.0 * (double)(k + 2) * unit_roundoff(want->dtype) * element(abs_sum, i) + 1e-300;
        double ratio = fabs(g - w) / bound;
        if (!(ratio <= 1.0)) { /* NaN too */
            CHECK_MSG(false, "%s: element %lld: blas %.17g vs cpu %.17g (bound %.3g)", what, (long long)i, g, w, bound);
            return ratio;
        }
        worst = ratio > worst ? ratio : worst;
    }
    return worst;
}

/* ------------------------------------------------------------------ */
/* run_op, matmul                                                      */
/* ------------------------------------------------------------------ */
static bool supported(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *const *in, size_t n_in,
                      oi__op_sig *out) {
    oi__op_sig sigs[3];
    for (size_t i = 0; i < n_in; i++) {
        memset(&sigs[i], 0, sizeof sigs[i]);
        sigs[i].dtype = in[i]->dtype;
        sigs[i].ndim = in[i]->ndim;
        memcpy(sigs[i].shape, in[i]->shape, sizeof sigs[i].shape);
    }
    if (oi__op_infer(op, attrs, n_attrs, sigs, n_in, OI_DTYPE_INVALID, out) != OI_OK)
        return false;
    return blas->supports_op(blas_ctx, op, attrs, n_attrs, sigs, n_in, out);
}

/* One product through both backends; `out_view` runs BLAS into a
 * transposed (not dense) output. */
static void check_op(const char *what, oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *const *in,
                     size_t n_in, const oi__tensor *const *abs_in, int64_t k, bool out_view) {
    oi__op_sig sig;
    if (!supported(op, attrs, n_attrs, in, n_in, &sig)) {
        CHECK_MSG(false, "%s: supports_op says no: %s", what, oi_last_error());
        return;
    }
    oi__tensor *want = oi__tensor_new(sig.dtype, sig.ndim, sig.shape);
    oi__tensor *sum = oi__tensor_new(sig.dtype, sig.ndim, sig.shape);
    oi__tensor *got = oi__tensor_new(sig.dtype, sig.ndim, sig.shape);
    if (out_view && got && sig.ndim == 2) /* got's storage as [n, m], seen transposed */
        got->strides[0] = 1, got->strides[1] = sig.shape[0];
    CHECK_OK(oi__op_run_cpu(op, attrs, n_attrs, in, n_in, want));
    CHECK_OK(oi__op_run_cpu(op, attrs, n_attrs, abs_in, n_in, sum));
    CHECK_OK(blas->run_op(blas_ctx, op, attrs, n_attrs, in, n_in, got));
    compare(what, got, want, sum, k);
    oi__tensor_free(want);
    oi__tensor_free(sum);
    oi__tensor_free(got);
}

static void check_matmul(oi_dtype t, int batch_ndim, const int64_t *a_batch, const int64_t *b_batch, unsigned a_zero,
                         unsigned b_zero, int64_t m, int64_t k, int64_t n, layout la, layout lb) {
    char what[160];
    snprintf(what, sizeof what, "matmul %s %lldx%lldx%lld a %s b %s batch %d", oi_dtype_name(t), (long long)m,
             (long long)k, (long long)n, layout_names[la], layout_names[lb], batch_ndim);
    oi__tensor *a = make_operand(t, batch_ndim, a_batch, a_zero, m, k, la);
    oi__tensor *b = make_operand(t, batch_ndim, b_batch, b_zero, k, n, lb);
    oi__tensor *abs_a = a ? abs_clone(a) : NULL, *abs_b = b ? abs_clone(b) : NULL;
    if (a && b && abs_a && abs_b) {
        const oi__tensor *in[2] = {a, b}, *abs_in[2] = {abs_a, abs_b};
        check_op(what, OI_OP_matmul, NULL, 0, in, 2, abs_in, k, batch_ndim == 0 && m > 1 && n > 1 && la == lb);
    } else {
        CHECK_MSG(false, "%s: out of memory", what);
    }
    oi__tensor_free(a), oi__tensor_free(b), oi__tensor_free(abs_a), oi__tensor_free(abs_b);
}

static void test_matmul_layouts(void) {
    static const int64_t sizes[][3] = {{1, 1, 1}, {3, 17, 5}, {17, 3, 66}, {66, 67, 1}, {1, 66, 17}, {33, 65, 31}};
    const oi__blas_stats *st = oi__blas_get_stats(blas_ctx);
    uint64_t packed0 = st->packed, temps0 = st->temp_outputs;
    for (int dt = 0; dt < 2; dt++)
        for (size_t s = 0; s < COUNT(sizes); s++)
            for (int la = 0; la < LAYOUT_COUNT; la++)
                for (int lb = 0; lb < LAYOUT_COUNT; lb++)
                    check_matmul(dt ? OI_DTYPE_F64 : OI_DTYPE_F32, 0, NULL, NULL, 0, 0, sizes[s][0], sizes[s][1],
                                 sizes[s][2], (layout)la, (layout)lb);
    CHECK(st->packed > packed0);      /* the strided layouts were packed ... */
    CHECK(st->temp_outputs > temps0); /* ... and transposed outputs computed apart */
}

/* Batches: equal, broadcast by size-1 dims on either side, stride-0
 * (expanded) batch dims, and B shared by every batch (the folded case). */
static void test_matmul_batches(void) {
    const int64_t b2[] = {2, 3}, a21[] = {2, 1}, b13[] = {1, 3}, b3[] = {3};
    for (int dt = 0; dt < 2; dt++) {
        oi_dtype t = dt ? OI_DTYPE_F64 : OI_DTYPE_F32;
        for (int la = 0; la < LAYOUT_COUNT; la++) {
            check_matmul(t, 2, b2, b2, 0, 0, 5, 7, 9, (layout)la, LAYOUT_DENSE);
            check_matmul(t, 2, a21, b13, 0, 0, 4, 6, 3, (layout)la, LAYOUT_TRANSPOSED);
            check_matmul(t, 2, b2, b2, 0x1, 0x2, 3, 5, 7, (layout)la, (layout)((la + 1) % LAYOUT_COUNT));
            check_matmul(t, 2, b2, b2, 0, 0x3, 6, 8, 5, (layout)la, LAYOUT_DENSE); /* B shared: fold */
            check_matmul(t, 1, b3, b3, 0, 0x1, 1, 9, 4, (layout)la, LAYOUT_PADDED);
        }
    }
    /* a rank-2 B against a batched A: [2, 3, 5, 7] x [7, 9] is one call */
    const oi__blas_stats *st = oi__blas_get_stats(blas_ctx);
    oi__tensor *a = make_operand(OI_DTYPE_F32, 2, b2, 0, 5, 7, LAYOUT_DENSE);
    oi__tensor *b = make_operand(OI_DTYPE_F32, 0, NULL, 0, 7, 9, LAYOUT_TRANSPOSED);
    oi__tensor *abs_a = abs_clone(a), *abs_b = abs_clone(b);
    const oi__tensor *in[2] = {a, b}, *abs_in[2] = {abs_a, abs_b};
    uint64_t calls0 = st->calls;
    check_op("matmul [2,3,5,7] x [7,9]^T", OI_OP_matmul, NULL, 0, in, 2, abs_in, 7, false);
    CHECK_EQ_INT(st->calls - calls0, 1);
    oi__tensor_free(a), oi__tensor_free(b), oi__tensor_free(abs_a), oi__tensor_free(abs_b);
}

/* The output is input 0 (in place): computed apart, then copied. */
static void test_matmul_aliased_output(void) {
    oi__tensor *a = make_operand(OI_DTYPE_F32, 0, NULL, 0, 6, 6, LAYOUT_DENSE);
    oi__tensor *b = make_operand(OI_DTYPE_F32, 0, NULL, 0, 6, 6, LAYOUT_TRANSPOSED);
    oi__tensor *a_copy = oi__tensor_clone(a), *abs_a = abs_clone(a), *abs_b = abs_clone(b);
    oi__tensor *want = oi__tensor_new(OI_DTYPE_F32, 2, a->shape), *sum = oi__tensor_new(OI_DTYPE_F32, 2, a->shape);
    const oi__tensor *in[2] = {a_copy, b}, *abs_in[2] = {abs_a, abs_b}, *in_place[2] = {a, b};
    CHECK_OK(oi__op_run_cpu(OI_OP_matmul, NULL, 0, in, 2, want));
    CHECK_OK(oi__op_run_cpu(OI_OP_matmul, NULL, 0, abs_in, 2, sum));
    uint64_t temps0 = oi__blas_get_stats(blas_ctx)->temp_outputs;
    CHECK_OK(blas->run_op(blas_ctx, OI_OP_matmul, NULL, 0, in_place, 2, a));
    CHECK_EQ_INT(oi__blas_get_stats(blas_ctx)->temp_outputs - temps0, 1);
    compare("matmul in place", a, want, sum, 6);
    oi__tensor_free(a), oi__tensor_free(b), oi__tensor_free(a_copy), oi__tensor_free(abs_a);
    oi__tensor_free(abs_b), oi__tensor_free(want), oi__tensor_free(sum);
}

/* ------------------------------------------------------------------ */
/* run_op, gemm                                                        */
/* ------------------------------------------------------------------ */
/* C shapes: none, [N], [1, N], [M, 1], [M, N], a scalar. */
static void check_gemm(oi_dtype t, int64_t m, int64_t k, int64_t n, bool ta, bool tb, layout la, layout lb, int c_kind,
                       double alpha, double beta) {
    char what[160];
    snprintf(what, sizeof what, "gemm %s %lldx%lldx%lld ta %d tb %d a %s b %s C %d alpha %g beta %g",
             oi_dtype_name(t), (long long)m, (long long)k, (long long)n, ta, tb, layout_names[la], layout_names[lb],
             c_kind, alpha, beta);
    oi__tensor *a = make_operand(t, 0, NULL, 0, ta ? k : m, ta ? m : k, la);
    oi__tensor *b = make_operand(t, 0, NULL, 0, tb ? n : k, tb ? k : n, lb);
    const int64_t c_shapes[][2] = {{0, 0}, {n, 0}, {1, n}, {m, 1}, {m, n}, {0, 0}};
    const int c_ndims[] = {0, 1, 2, 2, 2, 0};
    oi__tensor *c = c_kind ? oi__tensor_new(t, c_ndims[c_kind], c_shapes[c_kind]) : NULL;
    for (int64_t i = 0; c && i < oi__shape_numel(c->ndim, c->shape); i++)
        oi__store_f64(t, oi__tensor_data(c), i, rnd());
    oi__tensor *abs_a = abs_clone(a), *abs_b = abs_clone(b), *abs_c = c ? abs_clone(c) : NULL;
    oi__attr attrs[4] = {attr_b("trans_a", ta), attr_b("trans_b", tb), attr_f("alpha", alpha), attr_f("beta", beta)};
    oi__attr abs_attrs[4] = {attrs[0], attrs[1], attr_f("alpha", fabs(alpha)), attr_f("beta", fabs(beta))};
    const oi__tensor *in[3] = {a, b, c}, *abs_in[3] = {abs_a, abs_b, abs_c};
    oi__op_sig sig;
    size_t n_in = c ? 3 : 2;
    if (!supported(OI_OP_gemm, attrs, 4, in, n_in, &sig)) {
        CHECK_MSG(false, "%s: supports_op says no: %s", what, oi_last_error());
    } else {
        oi__tensor *want = oi__tensor_new(t, 2, sig.shape), *sum = oi__tensor_new(t, 2, sig.shape);
        oi__tensor *got = oi__tensor_new(t, 2, sig.shape);
        CHECK_OK(oi__op_run_cpu(OI_OP_gemm, attrs, 4, in, n_in, want));
        CHECK_OK(oi__op_run_cpu(OI_OP_gemm, abs_attrs, 4, abs_in, n_in, sum));
        CHECK_OK(blas->run_op(blas_ctx, OI_OP_gemm, attrs, 4, in, n_in, got));
        compare(what, got, want, sum, k);
        oi__tensor_free(want), oi__tensor_free(sum), oi__tensor_free(got);
    }
    oi__tensor_free(a), oi__tensor_free(b), oi__tensor_free(c);
    oi__tensor_free(abs_a), oi__tensor_free(abs_b), oi__tensor_free(abs_c);
}

static void test_gemm(void) {
    for (int dt = 0; dt < 2; dt++)
        for (int flags = 0; flags < 4; flags++)
            for (int la = 0; la < LAYOUT_COUNT; la++)
                for (int c_kind = 0; c_kind < 6; c_kind++) {
                    oi_dtype t = dt ? OI_DTYPE_F64 : OI_DTYPE_F32;
                    check_gemm(t, 7, 13, 5, flags & 1, flags & 2, (layout)la, (layout)((la + c_kind) % LAYOUT_COUNT),
                               c_kind, c_kind % 2 ? 0.5 : 1.0, c_kind == 2 ? -2.0 : 1.0);
                }
    check_gemm(OI_DTYPE_F32, 1, 1, 1, false, false, LAYOUT_DENSE, LAYOUT_DENSE, 4, 1.0, 1.0);
    check_gemm(OI_DTYPE_F32, 65, 3, 1, true, false, LAYOUT_PADDED, LAYOUT_STRIDED, 1, 3.0, 0.25);

    /* beta = 0: C is ignored, even an infinite one (the CPU kernel's rule) */
    oi__tensor *a = make_operand(OI_DTYPE_F32, 0, NULL, 0, 2, 3, LAYOUT_DENSE);
    oi__tensor *b = make_operand(OI_DTYPE_F32, 0, NULL, 0, 3, 2, LAYOUT_DENSE);
    oi__tensor *c = oi__tensor_new(OI_DTYPE_F32, 1, (const int64_t[]){2});
    oi__store_f64(OI_DTYPE_F32, oi__tensor_data(c), 0, INFINITY);
    oi__store_f64(OI_DTYPE_F32, oi__tensor_data(c), 1, NAN);
    oi__attr beta0 = attr_f("beta", 0.0);
    const oi__tensor *in[3] = {a, b, c};
    oi__tensor *got = oi__tensor_new(OI_DTYPE_F32, 2, (const int64_t[]){2, 2});
    CHECK_OK(blas->run_op(blas_ctx, OI_OP_gemm, &beta0, 1, in, 3, got));
    for (int i = 0; i < 4; i++)
        CHECK(isfinite(oi__load_f64(OI_DTYPE_F32, oi__tensor_data(got), i)));
    oi__tensor_free(a), oi__tensor_free(b), oi__tensor_free(c), oi__tensor_free(got);
}

/* ------------------------------------------------------------------ */
/* What the backend declines                                           */
/* ------------------------------------------------------------------ */
static bool supports_sigs(oi_op op, const oi__attr *attrs, size_t n_attrs, oi_dtype ta, oi_dtype tb, int64_t m,
                          int64_t k, int64_t n, oi_dtype out) {
    oi__op_sig in[2], o;
    memset(in, 0, sizeof in);
    memset(&o, 0, sizeof o);
    in[0].dtype = ta, in[0].ndim = 2, in[0].shape[0] = m, in[0].shape[1] = k;
    in[1].dtype = tb, in[1].ndim = 2, in[1].shape[0] = k, in[1].shape[1] = n;
    o.dtype = out, o.ndim = 2, o.shape[0] = m, o.shape[1] = n;
    return blas->supports_op(blas_ctx, op, attrs, n_attrs, in, 2, &o);
}

static void test_declines(void) {
    const oi_dtype f32 = OI_DTYPE_F32;
    CHECK(supports_sigs(OI_OP_matmul, NULL, 0, f32, f32, 3, 4, 5, f32));
    CHECK(supports_sigs(OI_OP_gemm, NULL, 0, f32, f32, 3, 4, 5, f32));
    CHECK(supports_sigs(OI_OP_matmul, NULL, 0, OI_DTYPE_F64, OI_DTYPE_F64, 3, 4, 5, OI_DTYPE_F64));
    CHECK(!supports_sigs(OI_OP_add, NULL, 0, f32, f32, 3, 3, 3, f32));
    CHECK(!supports_sigs(OI_OP_matmul, NULL, 0, OI_DTYPE_F16, OI_DTYPE_F16, 3, 4, 5, OI_DTYPE_F16));
    CHECK(!supports_sigs(OI_OP_matmul, NULL, 0, OI_DTYPE_BF16, OI_DTYPE_BF16, 3, 4, 5, OI_DTYPE_BF16));
    CHECK(!supports_sigs(OI_OP_matmul, NULL, 0, OI_DTYPE_I32, OI_DTYPE_I32, 3, 4, 5, OI_DTYPE_I32));
    CHECK(!supports_sigs(OI_OP_matmul, NULL, 0, f32, f32, 3, 0, 5, f32)); /* empty: the CPU's */
    CHECK(!supports_sigs(OI_OP_matmul, NULL, 0, f32, f32, 0, 4, 5, f32));
    CHECK(!supports_sigs(OI_OP_matmul, NULL, 0, f32, f32, 3, (int64_t)1 << 31, 5, f32)); /* > int */
    oi__attr acc64 = attr_dtype("acc", OI_DTYPE_F64), acc32 = attr_dtype("acc", f32);
    CHECK(!supports_sigs(OI_OP_matmul, &acc64, 1, f32, f32, 3, 4, 5, OI_DTYPE_F64)); /* f64 accumulation */
    CHECK(!supports_sigs(OI_OP_matmul, &acc64, 1, f32, f32, 3, 4, 5, f32));
    CHECK(supports_sigs(OI_OP_matmul, &acc32, 1, f32, f32, 3, 4, 5, f32));
    /* run_op on a declined op: a clear error, no result */
    oi__tensor *x = make_operand(OI_DTYPE_I32, 0, NULL, 0, 2, 2, LAYOUT_DENSE);
    oi__tensor *y = oi__tensor_new(OI_DTYPE_I32, 2, x->shape);
    const oi__tensor *in[2] = {x, x};
    CHECK_STATUS(blas->run_op(blas_ctx, OI_OP_matmul, NULL, 0, in, 2, y), OI_ERROR_UNSUPPORTED);
    CHECK_STR_CONTAINS(oi_last_error(), "blas backend");
    oi__tensor_free(x), oi__tensor_free(y);
}

/* ------------------------------------------------------------------ */
/* Graphs through the executor                                         */
/* ------------------------------------------------------------------ */
OI_GRAPH(g_blas_f32,
  OI_DYNAMIC(
    OI_VAR(x, f32[3, 5, 7])
    OI_VAR(w, f32[9, 7])
    OI_VAR(p, f32[5, 6])
    OI_VAR(q, f32[11, 6])
    OI_VAR(bias, f32[11])
    OI_VAR(u, f32[2, 1, 4, 10])
    OI_VAR(v, f32[3, 5, 6])
  )
  OI_VOLATILE(
    OI_VAR(y, f32[3, 5, 9])
    OI_VAR(z, f32[3, 5, 9])
    OI_VAR(g, f32[5, 11])
    OI_VAR(h, f32[2, 3, 4, 6])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(wt, f32[7, 9])
    OI_ASSIGN(us, f32[2, 1, 4, 5])
    OI_OP(transpose, w) OI_TO(wt)
    OI_OP(matmul, x, wt) OI_TO(y)
    OI_OP(relu, y) OI_TO(z)
    OI_OP(gemm, p, q, bias, trans_b=true, alpha=0.5, beta=2.0) OI_TO(g)
    OI_OP(slice, u, starts=[0], ends=[10], axes=[3], steps=[2]) OI_TO(us)
    OI_OP(matmul, us, v) OI_TO(h)
    OI_RETURN()
  )
)

OI_GRAPH(g_blas_f64,
  OI_DYNAMIC(
    OI_VAR(a, f64[7, 33])
    OI_VAR(b, f64[7, 17])
    OI_VAR(c, f64[1, 17])
  )
  OI_VOLATILE(
    OI_VAR(y, f64[33, 17])
    OI_VAR(g, f64[33, 17])
    OI_VAR(s, f64[33, 17])
  )
  OI_BLOCK(entry,
    OI_ASSIGN(at, f64[33, 7])
    OI_OP(transpose, a) OI_TO(at)
    OI_OP(matmul, at, b) OI_TO(y)
    OI_OP(gemm, a, b, c, trans_a=true, alpha=-1.5) OI_TO(g)
    OI_OP(add, y, g) OI_TO(s)
    OI_RETURN()
  )
)

typedef struct graph_input { const char *name; oi_dtype dtype; size_t count; } graph_input;
typedef struct graph_output { const char *name; double bound; } graph_output;

static oi_executor *graph_executor(oi_device device, int n_threads, const oi_graph *g, oi_simulator **sim) {
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = device;
    desc.n_threads = n_threads;
    *sim = oi_simulator_new_desc(NULL, &desc);
    CHECK_MSG(*sim != NULL, "simulator: %s", oi_last_error());
    oi_executor *e = *sim ? oi_simulator_make_executor(*sim, g) : NULL;
    CHECK_MSG(!*sim || e != NULL, "executor: %s", oi_last_error());
    return e;
}

/* Runs `g` on cpu and on blas with the same random inputs (in [-1, 1]) and
 * compares each output within its bound (2 (K + 2) u S, S <= the largest
 * possible sum of |products| for those inputs). */
static void check_graph(const oi_graph *g, const graph_input *ins, size_t n_ins, const graph_output *outs,
                        size_t n_outs, int expect_blas_ops) {
    oi_simulator *sim_cpu = NULL, *sim_blas = NULL;
    oi_executor *cpu = graph_executor(OI_DEVICE_CPU, 2, g, &sim_cpu);
    oi_executor *bl = graph_executor(OI_DEVICE_BLAS, 2, g, &sim_blas);
    if (cpu && bl) {
        CHECK(sim_blas->backend == &oi__blas_backend);
        const oi__blas_stats *st = oi__blas_get_stats(sim_blas->backend_ctx);
        for (int step = 0; step < 2; step++) {
            for (size_t i = 0; i < n_ins; i++) {
                double *v = (double *)malloc(ins[i].count * sizeof *v);
                for (size_t j = 0; j < ins[i].count; j++)
                    v[j] = rnd();
                CHECK_OK(oi_executor_insert(cpu, ins[i].name, OI_DTYPE_F64, v, ins[i].count));
                CHECK_OK(oi_executor_insert(bl, ins[i].name, OI_DTYPE_F64, v, ins[i].count));
                free(v);
            }
            CHECK_OK(oi_executor_run_step(cpu));
            CHECK_OK(oi_executor_run_step(bl));
            for (size_t o = 0; o < n_outs; o++) {
                oi_tensor_view want, got;
                CHECK_OK(oi_executor_fetch(cpu, outs[o].name, OI_DTYPE_F64, &want));
                CHECK_OK(oi_executor_fetch(bl, outs[o].name, OI_DTYPE_F64, &got));
                CHECK_EQ_INT(got.len, want.len);
                double worst = 0;
                for (size_t j = 0; j < want.len && j < got.len; j++) {
                    double d = fabs(((double *)got.data)[j] - ((double *)want.data)[j]);
                    worst = d > worst ? d : worst;
                }
                CHECK_MSG(worst <= outs[o].bound, "%s: %s differs by %.3g (bound %.3g)", oi_graph_name(g),
                          outs[o].name, worst, outs[o].bound);
            }
        }
        CHECK_EQ_INT(st->ops, 2 * expect_blas_ops); /* every matmul/gemm, each step */
        CHECK_EQ_INT(st->threads, 2);               /* n_threads = 2 */
        /* relu/add ran on the CPU kernels: by design, without a note */
        CHECK_EQ_INT(oi_executor_warning_count(bl), 0);
    }
    oi_executor_free(cpu), oi_executor_free(bl);
    oi_simulator_free(sim_cpu), oi_simulator_free(sim_blas);
}

static void test_graphs(void) {
    const double u32 = 0x1p-24, u64 = 0x1p-53;
    const graph_input f32_in[] = {{"x", OI_DTYPE_F32, 105}, {"w", OI_DTYPE_F32, 63}, {"p", OI_DTYPE_F32, 30},
                                  {"q", OI_DTYPE_F32, 66},  {"bias", OI_DTYPE_F32, 11}, {"u", OI_DTYPE_F32, 80},
                                  {"v", OI_DTYPE_F32, 90}};
    /* S <= K for matmuls, 0.5 K + 2 for the gemm; relu is exact */
    const graph_output f32_out[] = {
        {"y", 2 * 9 * u32 * 7}, {"z", 2 * 9 * u32 * 7}, {"g", 2 * 8 * u32 * (0.5 * 6 + 2)}, {"h", 2 * 7 * u32 * 5}};
    check_graph(g_blas_f32(), f32_in, COUNT(f32_in), f32_out, COUNT(f32_out), 3);
    const graph_input f64_in[] = {{"a", OI_DTYPE_F64, 231}, {"b", OI_DTYPE_F64, 119}, {"c", OI_DTYPE_F64, 17}};
    const graph_output f64_out[] = {
        {"y", 2 * 9 * u64 * 7}, {"g", 2 * 9 * u64 * (1.5 * 7 + 1)}, {"s", 4 * 9 * u64 * (2.5 * 7 + 1)}};
    check_graph(g_blas_f64(), f64_in, COUNT(f64_in), f64_out, COUNT(f64_out), 2);
}

/* ------------------------------------------------------------------ */
/* Selection, threads, discovery                                       */
/* ------------------------------------------------------------------ */
OI_GRAPH(g_blas_tiny,
  OI_DYNAMIC( OI_VAR(x, f32[4, 4]) )
  OI_VOLATILE( OI_VAR(y, f32[4, 4]) )
  OI_BLOCK(entry,
    OI_OP(matmul, x, x) OI_TO(y)
    OI_RETURN()
  )
)

/* n_threads sets OpenBLAS's thread count for the simulator's calls. */
static void test_threads(void) {
    for (int threads = 1; threads <= 2; threads++) {
        oi_simulator *sim = NULL;
        oi_executor *e = graph_executor(OI_DEVICE_BLAS, threads, g_blas_tiny(), &sim);
        if (!e) {
            oi_simulator_free(sim);
            continue;
        }
        float x[16];
        for (int i = 0; i < 16; i++)
            x[i] = (float)i;
        CHECK_OK(OI_TRY_INSERT(e, x, x, 16));
        CHECK_OK(oi_executor_run_step(e));
        CHECK_EQ_INT(oi__blas_get_stats(sim->backend_ctx)->threads, threads);
        CHECK_EQ_INT(openblas_get_num_threads(), threads);
        oi_tensor_view y;
        CHECK_OK(oi_executor_fetch(e, "y", OI_DTYPE_F32, &y));
        CHECK_NEAR(((float *)y.data)[0], 56.0, 0); /* row 0 . column 0 = 0*0 + 1*4 + 2*8 + 3*12, exact */
        oi_executor_free(e);
        oi_simulator_free(sim);
    }
}

/* Two simulators with different n_threads in two threads: their calls take
 * turns under the backend's lock and each result stays exact. */
typedef struct worker { int threads, bad; } worker;

static void *worker_run(void *arg) {
    worker *w = (worker *)arg;
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_BLAS;
    desc.n_threads = w->threads;
    oi_simulator *sim = oi_simulator_new_desc(NULL, &desc);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g_blas_tiny()) : NULL;
    w->bad = e == NULL;
    for (int step = 0; step < 200 && !w->bad; step++) {
        float x[16];
        for (int i = 0; i < 16; i++)
            x[i] = (float)(i + step % 7);
        oi_tensor_view y;
        w->bad = oi_executor_insert(e, "x", OI_DTYPE_F32, x, 16) != OI_OK || oi_executor_run_step(e) != OI_OK ||
                 oi_executor_fetch(e, "y", OI_DTYPE_F32, &y) != OI_OK;
        float want = 0; /* y[0] = sum_k x[k] x[4k], small integers: exact */
        for (int k = 0; k < 4; k++)
            want += x[k] * x[4 * k];
        w->bad |= !w->bad && ((float *)y.data)[0] != want;
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    return NULL;
}

static void test_concurrent_simulators(void) {
    worker w[2] = {{1, 0}, {2, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, worker_run, &w[i]) == 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK_MSG(!w[i].bad, "worker with %d threads", w[i].threads);
    }
}

static void test_selection(void) {
    oi_backend_info infos[16];
    size_t n = oi_backends_discover(infos, 16);
    const oi_backend_info *entry = NULL;
    for (size_t i = 0; i < n && i < 16; i++)
        if (strcmp(infos[i].name, "blas") == 0)
            entry = &infos[i];
    CHECK_MSG(entry && entry->available, "no available blas entry");
    if (entry) {
        CHECK_STR_CONTAINS(entry->device_name, "OpenBLAS");
        CHECK_STR_CONTAINS(entry->device_type, "cpu");
        CHECK_STR_CONTAINS(entry->features, "matmul");
    }
    /* AUTO stays on the CPU (or a GPU); OPENINFER_BACKEND=blas[:0] picks blas */
    setenv("OPENINFER_BACKEND", "cpu", 1);
    oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_AUTO);
    CHECK(sim && sim->backend == &oi__cpu_backend);
    oi_simulator_free(sim);
    const char *specs[] = {"blas", "blas:0"};
    for (int i = 0; i < 2; i++) {
        setenv("OPENINFER_BACKEND", specs[i], 1);
        sim = oi_simulator_new(NULL, OI_DEVICE_AUTO);
        CHECK_MSG(sim && sim->backend == &oi__blas_backend, "%s: %s", specs[i], oi_last_error());
        oi_simulator_free(sim);
    }
    setenv("OPENINFER_BACKEND", "blas:1", 1);
    CHECK(oi_simulator_new(NULL, OI_DEVICE_AUTO) == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "one BLAS device");
    setenv("OPENINFER_BACKEND", "blast", 1);
    CHECK(oi_simulator_new(NULL, OI_DEVICE_AUTO) == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "expected cpu, blas");
    unsetenv("OPENINFER_BACKEND");
    sim = oi_simulator_new(NULL, OI_DEVICE_AUTO);
    CHECK(sim && sim->backend != &oi__blas_backend);
    oi_simulator_free(sim);
}

int main(void) {
    unsetenv("OPENINFER_BACKEND");
    blas_ctx = blas->create(0);
    CHECK_MSG(blas_ctx != NULL, "create: %s", oi_last_error());
    if (!blas_ctx)
        return check_result("test_blas");
    printf("test_blas: %s\n", openblas_get_config());
    test_declines();
    test_matmul_layouts();
    test_matmul_batches();
    test_matmul_aliased_output();
    test_gemm();
    test_graphs();
    test_threads();
    test_concurrent_simulators();
    test_selection();
    const oi__blas_stats *st = oi__blas_get_stats(blas_ctx);
    printf("test_blas: %llu ops, %llu cblas calls, %llu packed operands, %llu outputs computed apart\n",
           (unsigned long long)st->ops, (unsigned long long)st->calls, (unsigned long long)st->packed,
           (unsigned long long)st->temp_outputs);
    blas->destroy(blas_ctx);
    return check_result("test_blas");
}
