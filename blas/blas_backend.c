/* blas_backend.c - the optional "blas" backend (compiled with OPENINFER_BLAS,
 * linked with OpenBLAS): matmul and gemm through cblas_sgemm / cblas_dgemm
 * for f32 and f64; every other op runs on the CPU kernels.
 *
 * A host backend: tensors stay in host memory, so it has no to_host,
 * release or flush, and an op it declines costs nothing more than on the
 * CPU backend (the executor adds no warning for it; executor.c).
 *
 * supports_op sees dtypes and shapes only; strides are known in run_op.
 * A matrix operand whose layout cblas can express (unit stride along one of
 * its two dims, leading dimension in int range) is passed in place, with
 * CblasTrans when its rows are the unit-stride dim; any other view (a
 * strided slice, a broadcast matrix) is packed into a dense scratch first.
 * An output that aliases an input or is not dense is computed into a
 * temporary and copied back. So whatever supports_op accepts runs on BLAS.
 *
 * Threads: OpenBLAS keeps one thread count per process. Each run_op sets it
 * to the size of the pool the executor lends (the simulator's n_threads;
 * 0 = every core the process may use), and BLAS calls take turns under one mutex so that two
 * simulators with different n_threads never change it under each other.
 *
 * Included by openinfer_impl.c after kernels/kernels.c: it reuses the CPU
 * kernels' parameter readers and matmul/gemm helpers (same translation
 * unit), so defaults and broadcasting rules cannot drift apart. */
#include "../openinfer_impl/internal.h"

#ifdef OPENINFER_BLAS

/* OpenBLAS declares its complex types with C99 _Complex even in C++ when
 * glibc predefines __STDC_IEC_559_COMPLEX__, which clang++ -pedantic
 * rejects; its struct fallback serves us as well (no complex routine is
 * called). */
#if defined(__cplusplus) && !defined(FORCE_OPENBLAS_COMPLEX_STRUCT)
#define FORCE_OPENBLAS_COMPLEX_STRUCT
#endif
#include <cblas.h>
#include <limits.h>
#include <pthread.h>

typedef struct oi__blas_context {
    oi__blas_stats stats;
} oi__blas_context;

/* OpenBLAS's thread count is global: every call sets it and runs under this. */
static pthread_mutex_t oi__blas_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- discovery, create, destroy ---- */
static char oi__blas_device_name[96];
static pthread_once_t oi__blas_name_once = PTHREAD_ONCE_INIT;

/* Written once: openblas_get_config() rewrites a static buffer on every
 * call, so discovery on several threads must not call it each time. */
static void oi__blas_name_init(void) {
    snprintf(oi__blas_device_name, sizeof oi__blas_device_name, "host CPU (OpenBLAS, %s kernels)",
             openblas_get_corename());
}

static void oi__blas_discover(oi_backend_info *out, size_t max, size_t *count) {
    if (*count < max) {
        pthread_once(&oi__blas_name_once, oi__blas_name_init);
        oi_backend_info *info = &out[*count];
        memset(info, 0, sizeof *info);
        info->name = "blas";
        info->device_name = oi__blas_device_name;
        info->device_type = "cpu";
        info->available = true;
        info->unavailable_reason = "";
        info->features = "matmul gemm (f32 f64); other ops on the CPU kernels";
        oi__host_memory(info);
    }
    (*count)++;
}

static void *oi__blas_create(int device_index) {
    if (device_index != 0) {
        oi__fail(OI_ERROR_UNAVAILABLE, "blas backend: there is one BLAS device (index 0), not %d", device_index);
        return NULL;
    }
    return oi__calloc(1, sizeof(oi__blas_context));
}

static void oi__blas_destroy(void *ctx) { oi__free(ctx); }

/* ---- supports_op: from signatures ---- */
static bool oi__blas_dim_ok(int64_t d) { return d > 0 && d <= INT_MAX; }

static bool oi__blas_float(oi_dtype t) { return t == OI_DTYPE_F32 || t == OI_DTYPE_F64; }

static bool oi__blas_supports_op(void *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__op_sig *inputs,
                                 size_t n_inputs, const oi__op_sig *out) {
    (void)ctx;
    if ((op != OI_OP_matmul && op != OI_OP_gemm) || n_inputs < 2 || !oi__blas_float(out->dtype))
        return false;
    for (size_t i = 0; i < n_inputs; i++) /* ranks: oi__op_infer checked them */
        if (inputs[i].dtype != out->dtype)
            return false;
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    /* empty products (m, n or k = 0) are the CPU's: nothing for BLAS to do */
    if (oi__shape_numel(out->ndim, out->shape) == 0)
        return false;
    const oi__op_sig *a = &inputs[0];
    if (a->ndim < 2)
        return false;
    if (op == OI_OP_gemm && oi__conv_act_of(&k) != OI__CONV_ACT_NONE)
        return false; /* an activation is applied by the CPU kernel's gemm */
    if (op == OI_OP_matmul) {
        /* an accumulator other than the input dtype (acc=f64 on f32) is the CPU's */
        const oi__attr *acc = oi__op_attr_for(&k, "acc");
        if (n_inputs != 2 || (acc && oi__op_attr_dtype(acc) != out->dtype))
            return false;
        return oi__blas_dim_ok(a->shape[a->ndim - 2]) && oi__blas_dim_ok(a->shape[a->ndim - 1]) &&
               oi__blas_dim_ok(out->shape[out->ndim - 1]);
    }
    if (n_inputs > 3 || a->ndim != 2 || out->ndim != 2)
        return false;
    int64_t kk = a->shape[oi__op_param_bool(&k, "trans_a") ? 0 : 1];
    return oi__blas_dim_ok(out->shape[0]) && oi__blas_dim_ok(out->shape[1]) && oi__blas_dim_ok(kk);
}

/* ---- operands: in place, transposed, or packed ---- */
/* One matrix argument of a cblas call. */
typedef struct oi__blas_operand {
    const void *data;
    bool trans; /* stored as its transpose (CblasTrans) */
    int ld;
} oi__blas_operand;

/* How a rows x cols matrix whose element (r, c) lies at r*rs + c*cs is
 * given to cblas (row-major): as is with leading dimension *ld (unit column
 * stride), or transposed (unit row stride). A dim of size 1 has no stride
 * that matters. false: cblas cannot address it; pack it. */
static bool oi__blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *trans, int *ld) {
    if ((cols == 1 || cs == 1) && (rows == 1 || (rs >= cols && rs <= INT_MAX))) {
        *trans = false;
        *ld = rows == 1 ? (int)cols : (int)rs;
        return true;
    }
    if ((rows == 1 || rs == 1) && (cols == 1 || (cs >= rows && cs <= INT_MAX))) {
        *trans = true;
        *ld = cols == 1 ? (int)rows : (int)cs;
        return true;
    }
    return false;
}

/* A matrix of `t` at element `base` with strides (rs, cs). *scratch holds
 * rows x cols elements when packing is needed (allocated on first use, the
 * same size for every batch of one op). */
static oi_status oi__blas_operand_of(const oi__tensor *t, int64_t base, int64_t rows, int64_t cols, int64_t rs,
                                     int64_t cs, void **scratch, bool *packed, oi__blas_operand *op) {
    size_t esize = oi_dtype_bits(t->dtype) / 8;
    const char *data = (const char *)oi__tensor_data(t);
    *packed = !oi__blas_layout(rows, cols, rs, cs, &op->trans, &op->ld);
    if (!*packed) {
        op->data = data + (size_t)base * esize;
        return OI_OK;
    }
    if (!*scratch && !(*scratch = oi__malloc((size_t)(rows * cols) * esize)))
        return OI_ERROR_OUT_OF_MEMORY;
    char *dst = (char *)*scratch;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            memcpy(dst + (size_t)(r * cols + c) * esize, data + (size_t)(base + r * rs + c * cs) * esize, esize);
    op->data = dst;
    op->trans = false;
    op->ld = (int)cols;
    return OI_OK;
}

/* C[m,n] = alpha * op(A) op(B) + beta * C, row-major C with ldc. */
static void oi__blas_gemm(oi_dtype t, int64_t m, int64_t n, int64_t k, double alpha, const oi__blas_operand *a,
                          const oi__blas_operand *b, double beta, void *c, int64_t ldc) {
    enum CBLAS_TRANSPOSE ta = a->trans ? CblasTrans : CblasNoTrans, tb = b->trans ? CblasTrans : CblasNoTrans;
    if (t == OI_DTYPE_F32)
        cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, (float)alpha, (const float *)a->data, a->ld,
                    (const float *)b->data, b->ld, (float)beta, (float *)c, (int)ldc);
    else
        cblas_dgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, alpha, (const double *)a->data, a->ld,
                    (const double *)b->data, b->ld, beta, (double *)c, (int)ldc);
}

/* ---- matmul: [..., M, K] x [..., K, N], batches looped ---- */
/* Batches of A that follow each other as rows (A's batch dims dense over
 * M rows of lda) against one broadcast B are one taller product: a
 * linear layer's [B, T, K] x [K, N] is one (B*T) x K x N call. */
static bool oi__blas_fold_batches(const oi__matmul_dims *d, const oi__blas_operand *a, bool a_packed, int lda) {
    int64_t rows = d->m, batches = oi__shape_numel(d->batch_ndim, d->batch_shape);
    if (a_packed || a->trans || batches < 2 || batches > INT_MAX / d->m)
        return false;
    for (int dd = d->batch_ndim - 1; dd >= 0; dd--) {
        if (d->b_batch_strides[dd] != 0 || (d->batch_shape[dd] > 1 && d->a_batch_strides[dd] != rows * lda))
            return false;
        rows *= d->batch_shape[dd];
    }
    return true;
}

static oi_status oi__blas_matmul(oi__blas_context *ctx, const oi__kernel_args *k) {
    const oi__tensor *a = k->in[0], *b = k->in[1];
    oi__tensor *c = k->out;
    oi__matmul_dims d;
    oi__matmul_dims_of(k, &d);
    size_t esize = oi_dtype_bits(c->dtype) / 8;
    int64_t batches = oi__shape_numel(d.batch_ndim, d.batch_shape), index[OI_MAX_DIMS] = {0};
    void *scratch_a = NULL, *scratch_b = NULL;
    oi_status st = OI_OK;
    for (int64_t bi = 0; bi < batches && st == OI_OK; bi++) {
        int64_t a_at = a->offset, b_at = b->offset, c_at = c->offset;
        for (int dd = 0; dd < d.batch_ndim; dd++) {
            a_at += index[dd] * d.a_batch_strides[dd];
            b_at += index[dd] * d.b_batch_strides[dd];
            c_at += index[dd] * d.out_batch_strides[dd];
        }
        oi__blas_operand oa, ob;
        bool a_packed, b_packed;
        st = oi__blas_operand_of(a, a_at, d.m, d.k, a->strides[a->ndim - 2], a->strides[a->ndim - 1], &scratch_a,
                                 &a_packed, &oa);
        if (st == OI_OK)
            st = oi__blas_operand_of(b, b_at, d.k, d.n, b->strides[b->ndim - 2], b->strides[b->ndim - 1],
                                     &scratch_b, &b_packed, &ob);
        if (st != OI_OK)
            break;
        ctx->stats.packed += (uint64_t)a_packed + (uint64_t)b_packed;
        int64_t m = d.m;
        if (bi == 0 && oi__blas_fold_batches(&d, &oa, a_packed, oa.ld)) {
            m *= batches; /* c is dense: its batches follow each other too */
            bi = batches;
        }
        oi__blas_gemm(c->dtype, m, d.n, d.k, 1.0, &oa, &ob, 0.0, (char *)oi__tensor_data(c) + (size_t)c_at * esize,
                      d.n);
        ctx->stats.calls++;
        for (int dd = d.batch_ndim - 1; dd >= 0 && ++index[dd] == d.batch_shape[dd]; dd--)
            index[dd] = 0;
    }
    oi__free(scratch_a);
    oi__free(scratch_b);
    return st;
}

/* ---- gemm: alpha * A' B' + beta * C (ONNX Gemm) ---- */
static oi_status oi__blas_gemm_op(oi__blas_context *ctx, const oi__kernel_args *k) {
    const oi__tensor *a = k->in[0], *b = k->in[1];
    oi__tensor *y = k->out;
    bool ta = oi__op_param_bool(k, "trans_a"), tb = oi__op_param_bool(k, "trans_b");
    double alpha = oi__op_param_f64(k, "alpha"), beta = oi__op_param_f64(k, "beta");
    int64_t m = y->shape[0], n = y->shape[1], kk = a->shape[ta ? 0 : 1];
    /* the trans flags swap the strides of the stored matrix: op(A) is m x k */
    int64_t a_rs = a->strides[ta ? 1 : 0], a_cs = a->strides[ta ? 0 : 1];
    int64_t b_rs = b->strides[tb ? 1 : 0], b_cs = b->strides[tb ? 0 : 1];
    /* as the CPU kernel: C counts only when beta != 0 (then 0 * inf stays out) */
    bool with_c = k->n_in == 3 && beta != 0.0;
    void *yd = oi__tensor_data(y);
    for (int64_t i = 0; with_c && i < m; i++)
        for (int64_t j = 0; j < n; j++)
            oi__store_f64(y->dtype, yd, y->offset + i * n + j, beta * oi__conv_gemm_c(k->in[2], i, j));
    void *scratch_a = NULL, *scratch_b = NULL;
    oi__blas_operand oa, ob;
    bool a_packed = false, b_packed = false;
    oi_status st = oi__blas_operand_of(a, a->offset, m, kk, a_rs, a_cs, &scratch_a, &a_packed, &oa);
    if (st == OI_OK)
        st = oi__blas_operand_of(b, b->offset, kk, n, b_rs, b_cs, &scratch_b, &b_packed, &ob);
    if (st == OI_OK) {
        ctx->stats.packed += (uint64_t)a_packed + (uint64_t)b_packed;
        oi__blas_gemm(y->dtype, m, n, kk, alpha, &oa, &ob, with_c ? 1.0 : 0.0,
                      (char *)yd + (size_t)y->offset * (oi_dtype_bits(y->dtype) / 8), n);
        ctx->stats.calls++;
    }
    oi__free(scratch_a);
    oi__free(scratch_b);
    return st;
}

/* ---- run_op ---- */
static bool oi__blas_aliases(const oi__tensor *out, const oi__tensor *const *inputs, size_t n_inputs) {
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i]->storage == out->storage)
            return true;
    return false;
}

/* Checks what the executor already checked, for callers of the vtable. */
static oi_status oi__blas_check(void *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs,
                                const oi__tensor *const *inputs, size_t n_inputs, const oi__tensor *out) {
    oi__op_sig sigs[3], want, have;
    const char *name = oi_op_name(op) ? oi_op_name(op) : "?";
    if (n_inputs < 2 || n_inputs > 3 || !inputs || !out)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "blas backend: %s: bad input list (%zu inputs)", name, n_inputs);
    for (size_t i = 0; i < n_inputs; i++)
        oi__op_tensor_sig(inputs[i], &sigs[i]);
    oi_status st = oi__op_infer(op, attrs, n_attrs, sigs, n_inputs, out->dtype, &want);
    if (st != OI_OK)
        return st;
    oi__op_tensor_sig(out, &have);
    if (!oi__op_same_shape(&have, &want) || have.dtype != want.dtype)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "blas backend: %s: the output's dtype or shape is not the op's", name);
    if (!oi__blas_supports_op(ctx, op, attrs, n_attrs, sigs, n_inputs, &want))
        return oi__fail(OI_ERROR_UNSUPPORTED,
                        "blas backend: %s with these dtypes or sizes is not supported (supports_op says no: run it "
                        "on the CPU backend)", name);
    return OI_OK;
}

static oi_status oi__blas_run_op(void *opaque, oi_op op, const oi__attr *attrs, size_t n_attrs,
                                 const oi__tensor *const *inputs, size_t n_inputs, oi__tensor *out) {
    oi__blas_context *ctx = (oi__blas_context *)opaque;
    oi_status st = oi__blas_check(ctx, op, attrs, n_attrs, inputs, n_inputs, out);
    if (st != OI_OK)
        return st;
    oi__tensor *target = out;
    bool temp = !oi__tensor_is_contiguous(out) || oi__blas_aliases(out, inputs, n_inputs);
    if (temp && !(target = oi__tensor_new(out->dtype, out->ndim, out->shape)))
        return OI_ERROR_OUT_OF_MEMORY;
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    k.in = inputs;
    k.n_in = n_inputs;
    k.out = target;
    k.acc = OI_DTYPE_INVALID;
    int threads = oi__threadpool_size(oi__threadpool_default());
    pthread_mutex_lock(&oi__blas_lock);
    if (openblas_get_num_threads() != threads)
        openblas_set_num_threads(threads);
    ctx->stats.threads = openblas_get_num_threads();
    ctx->stats.ops++;
    ctx->stats.temp_outputs += temp;
    st = op == OI_OP_matmul ? oi__blas_matmul(ctx, &k) : oi__blas_gemm_op(ctx, &k);
    pthread_mutex_unlock(&oi__blas_lock);
    if (target != out) {
        if (st == OI_OK)
            oi__op_copy_elements(target, out);
        oi__tensor_free(target);
    }
    return st;
}

const oi__backend oi__blas_backend = {
    "blas", oi__blas_discover, oi__blas_create, oi__blas_destroy, oi__blas_supports_op, oi__blas_run_op,
    NULL, NULL, NULL, NULL, NULL,
    0, /* f32 only: OpenBLAS sgemm reads f32 */
    NULL,
};

const oi__blas_stats *oi__blas_get_stats(void *ctx) { return ctx ? &((oi__blas_context *)ctx)->stats : NULL; }

#endif /* OPENINFER_BLAS */
