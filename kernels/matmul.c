/* matmul.c - [..., M, K] x [..., K, N] with broadcast batch dims.
 * f32 operands (any strides) and f64 operands with a unit stride in a
 * matrix dim go to the blocked, threaded gemm of kernels/gemm.c. Every
 * other case gathers each batch's operands once into a dense f64 or u64
 * buffer (any dtype, any strides), multiplies with the accumulator the op asks for, and rounds or
 * wraps into the output once per element:
 *   floats below f64 accumulate in f32 (acc=f64 asks for f64);
 *   integers accumulate in 64-bit wrapping arithmetic, which equals
 *   wrapping at the output width (the acc dtype when widening). */
#include "../openinfer_impl/internal.h"

typedef struct oi__matmul_dims {
    int64_t m, k, n;
    int batch_ndim;
    int64_t batch_shape[OI_MAX_DIMS];
    int64_t a_batch_strides[OI_MAX_DIMS], b_batch_strides[OI_MAX_DIMS], out_batch_strides[OI_MAX_DIMS];
} oi__matmul_dims;

/* Batch strides of `t` against the output's batch dims (0 = broadcast). */
static void oi__matmul_batch_strides(const oi__tensor *t, int batch_ndim, int64_t *strides) {
    int t_batch = t->ndim - 2, lead = batch_ndim - t_batch;
    for (int d = 0; d < batch_ndim; d++) {
        int td = d - lead;
        strides[d] = (td < 0 || t->shape[td] == 1) ? 0 : t->strides[td];
    }
}

static void oi__matmul_dims_of(const oi__kernel_args *k, oi__matmul_dims *dims) {
    const oi__tensor *a = k->in[0], *b = k->in[1], *out = k->out;
    dims->m = a->shape[a->ndim - 2];
    dims->k = a->shape[a->ndim - 1];
    dims->n = b->shape[b->ndim - 1];
    dims->batch_ndim = out->ndim - 2;
    memcpy(dims->batch_shape, out->shape, sizeof(int64_t) * (size_t)dims->batch_ndim);
    oi__matmul_batch_strides(a, dims->batch_ndim, dims->a_batch_strides);
    oi__matmul_batch_strides(b, dims->batch_ndim, dims->b_batch_strides);
    for (int d = 0; d < dims->batch_ndim; d++)
        dims->out_batch_strides[d] = out->strides[d];
}

/* Copies a rows x cols matrix at element `base` of t into dense buffers. */
static void oi__matmul_gather_f64(const oi__tensor *t, int64_t base, int64_t rows, int64_t cols, double *dst) {
    int64_t rs = t->strides[t->ndim - 2], cs = t->strides[t->ndim - 1];
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            dst[r * cols + c] = oi__load_f64(t->dtype, oi__op_cdata(t), base + r * rs + c * cs);
}

static void oi__matmul_gather_u64(const oi__tensor *t, int64_t base, int64_t rows, int64_t cols, uint64_t *dst) {
    int64_t rs = t->strides[t->ndim - 2], cs = t->strides[t->ndim - 1];
    bool is_signed = oi__dtype_is_signed(t->dtype);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            int64_t at = base + r * rs + c * cs;
            dst[r * cols + c] = is_signed ? (uint64_t)oi__load_i64(t->dtype, oi__op_cdata(t), at)
                                          : oi__load_u64(t->dtype, oi__op_cdata(t), at);
        }
}

/* One batch: out[i, j] = sum_k a[i, k] * b[k, j]. */
static void oi__matmul_batch(const oi__kernel_args *k, const oi__matmul_dims *d, int64_t a_base, int64_t b_base,
                             int64_t out_base, void *a_buf, void *b_buf, bool wide_float) {
    const oi__tensor *a = k->in[0], *b = k->in[1];
    oi__tensor *out = k->out;
    int64_t ors = out->strides[out->ndim - 2], ocs = out->strides[out->ndim - 1];
    void *out_data = oi__tensor_data(out);
    if (oi__dtype_is_float(a->dtype)) {
        double *fa = (double *)a_buf, *fb = (double *)b_buf;
        oi__matmul_gather_f64(a, a_base, d->m, d->k, fa);
        oi__matmul_gather_f64(b, b_base, d->k, d->n, fb);
        for (int64_t i = 0; i < d->m; i++)
            for (int64_t j = 0; j < d->n; j++) {
                double sum = 0.0;
                float sum_f = 0.0f;
                for (int64_t x = 0; x < d->k; x++) {
                    if (wide_float)
                        sum += fa[i * d->k + x] * fb[x * d->n + j];
                    else
                        sum_f += (float)fa[i * d->k + x] * (float)fb[x * d->n + j];
                }
                oi__store_f64(out->dtype, out_data, out_base + i * ors + j * ocs, wide_float ? sum : (double)sum_f);
            }
        return;
    }
    uint64_t *ua = (uint64_t *)a_buf, *ub = (uint64_t *)b_buf;
    oi__matmul_gather_u64(a, a_base, d->m, d->k, ua);
    oi__matmul_gather_u64(b, b_base, d->k, d->n, ub);
    for (int64_t i = 0; i < d->m; i++)
        for (int64_t j = 0; j < d->n; j++) {
            uint64_t sum = 0;
            for (int64_t x = 0; x < d->k; x++)
                sum += ua[i * d->k + x] * ub[x * d->n + j];
            oi__store_u64(out->dtype, out_data, out_base + i * ors + j * ocs, sum);
        }
}

/* How a rows x cols operand is laid out for the gemm: row-major with
 * leading dimension *ld, or its transpose. false: gather it instead. */
static bool oi__matmul_gemm_layout(const oi__tensor *t, int64_t rows, int64_t cols, bool *trans, int64_t *ld) {
    int64_t rs = t->strides[t->ndim - 2], cs = t->strides[t->ndim - 1];
    if (cols == 1)
        cs = 1; /* a single column or row: its stride never matters */
    if (rows == 1)
        rs = cols;
    if (cs == 1 && rs >= cols && rs > 0) {
        *trans = false;
        *ld = rs;
        return true;
    }
    if (rs == 1 && cs >= rows && cs > 0) {
        *trans = true;
        *ld = cs;
        return true;
    }
    return false;
}

/* Element offsets of batch `bi` (row-major over the output's batch dims). */
static void oi__matmul_batch_at(const oi__kernel_args *k, const oi__matmul_dims *d, int64_t bi, int64_t *a_at,
                                int64_t *b_at, int64_t *c_at) {
    *a_at = k->in[0]->offset, *b_at = k->in[1]->offset, *c_at = k->out->offset;
    for (int dd = d->batch_ndim - 1; dd >= 0; dd--) {
        int64_t index = bi % d->batch_shape[dd];
        bi /= d->batch_shape[dd];
        *a_at += index * d->a_batch_strides[dd];
        *b_at += index * d->b_batch_strides[dd];
        *c_at += index * d->out_batch_strides[dd];
    }
}

/* f32: each batch is one oi__gemm_f32_ex reading A and B through their
 * strides, so a transposed view (k^T in attention) costs no copy. Many
 * small batches (heads) run as pool tasks, one single-threaded gemm each;
 * otherwise the batches run in turn and each gemm uses the pool. */
#define OI__MATMUL_SMALL_BATCH (1 << 21) /* multiply-adds: below, batches are tasks */

typedef struct oi__matmul_f32_job {
    const oi__kernel_args *k;
    const oi__matmul_dims *d;
    oi__threadpool *gemm_pool;
    oi__storage *b_owner;  /* B is a model weight shared by every batch */
    oi_status *status;     /* per pool thread */
} oi__matmul_f32_job;

static void oi__matmul_f32_task(void *ctx, int task, int thread) {
    const oi__matmul_f32_job *job = (const oi__matmul_f32_job *)ctx;
    const oi__tensor *a = job->k->in[0], *b = job->k->in[1];
    oi__tensor *out = job->k->out;
    int64_t a_at, b_at, c_at;
    oi__matmul_batch_at(job->k, job->d, task, &a_at, &b_at, &c_at);
    oi__gemm_f32_args g;
    memset(&g, 0, sizeof g);
    g.m = job->d->m, g.n = job->d->n, g.k = job->d->k, g.alpha = 1.0f;
    g.a = (const float *)oi__op_cdata(a) + a_at;
    g.a_rs = a->strides[a->ndim - 2], g.a_cs = a->strides[a->ndim - 1];
    g.b = (const float *)oi__op_cdata(b) + b_at;
    g.b_rs = b->strides[b->ndim - 2], g.b_cs = b->strides[b->ndim - 1];
    g.c = (float *)oi__tensor_data(out) + c_at;
    g.ldc = g.m == 1 ? g.n : out->strides[out->ndim - 2];
    g.b_owner = job->b_owner;
    oi_status s = oi__gemm_f32_ex(job->gemm_pool, &g);
    if (s != OI_OK)
        job->status[thread] = s;
}

static oi_status oi__matmul_f32(const oi__kernel_args *k, const oi__matmul_dims *d) {
    oi__threadpool *pool = oi__threadpool_default();
    int64_t batches = oi__shape_numel(d->batch_ndim, d->batch_shape);
    bool tasks = batches > 1 && d->m * d->n * d->k < OI__MATMUL_SMALL_BATCH;
    oi__threadpool *task_pool = tasks ? pool : NULL;
    int threads = oi__threadpool_size(task_pool);
    oi__matmul_f32_job job = {k, d, tasks ? NULL : pool, NULL, NULL};
    bool shared_b = true; /* one B for all batches: the gemm may keep it packed */
    for (int dd = 0; dd < d->batch_ndim; dd++)
        shared_b &= d->b_batch_strides[dd] == 0;
    if (shared_b && k->in[1]->storage && k->in[1]->storage->borrowed)
        job.b_owner = k->in[1]->storage;
    job.status = (oi_status *)oi__calloc((size_t)threads, sizeof *job.status);
    if (!job.status)
        return oi__fail(OI_ERROR_OUT_OF_MEMORY, "matmul: out of memory");
    oi__threadpool_run(task_pool, (int)batches, oi__matmul_f32_task, &job);
    oi_status s = OI_OK;
    for (int t = 0; t < threads && s == OI_OK; t++)
        s = job.status[t];
    oi__free(job.status);
    return s;
}

/* f32 x f32 -> f32 (any strides: oi__matmul_f32) and f64 x f64 -> f64
 * (a unit stride in a matrix dim of every operand) go to the blocked,
 * threaded gemm (kernels/gemm.c). Same accumulator type as the generic
 * path; only the summation order differs. */
static bool oi__matmul_try_gemm(const oi__kernel_args *k, const oi__matmul_dims *d, oi_status *status) {
    const oi__tensor *a = k->in[0], *b = k->in[1];
    oi__tensor *out = k->out;
    oi_dtype t = a->dtype;
    if ((t != OI_DTYPE_F32 && t != OI_DTYPE_F64) || out->dtype != t || b->dtype != t ||
        (t == OI_DTYPE_F32 && k->acc == OI_DTYPE_F64) || d->k == 0 || d->m == 0 || d->n == 0)
        return false;
    bool trans_a, trans_b, trans_c;
    int64_t lda, ldb, ldc;
    if (!oi__matmul_gemm_layout(out, d->m, d->n, &trans_c, &ldc) || trans_c)
        return false;
    if (t == OI_DTYPE_F32) {
        *status = oi__matmul_f32(k, d);
        return true;
    }
    if (!oi__matmul_gemm_layout(a, d->m, d->k, &trans_a, &lda) || !oi__matmul_gemm_layout(b, d->k, d->n, &trans_b, &ldb))
        return false;
    oi__threadpool *pool = oi__threadpool_default();
    int64_t batches = oi__shape_numel(d->batch_ndim, d->batch_shape);
    *status = OI_OK;
    for (int64_t bi = 0; bi < batches && *status == OI_OK; bi++) {
        int64_t a_at, b_at, c_at;
        oi__matmul_batch_at(k, d, bi, &a_at, &b_at, &c_at);
        *status = oi__gemm_f64(pool, trans_a, trans_b, d->m, d->n, d->k, 1.0, (const double *)oi__op_cdata(a) + a_at,
                               lda, (const double *)oi__op_cdata(b) + b_at, ldb, 0.0,
                               (double *)oi__tensor_data(out) + c_at, ldc);
    }
    return true;
}

static oi_status oi__k_matmul(const oi__kernel_args *k) {
    oi__matmul_dims d;
    oi__matmul_dims_of(k, &d);
    oi_status gemm_status;
    if (oi__matmul_try_gemm(k, &d, &gemm_status))
        return gemm_status;
    oi_dtype in = k->in[0]->dtype;
    bool wide_float = in == OI_DTYPE_F64 || k->acc == OI_DTYPE_F64;
    const int64_t limit = (int64_t)1 << 40; /* elements per gathered operand */
    if ((d.k && (d.m > limit / d.k || d.n > limit / d.k)))
        return oi__fail(OI_ERROR_OUT_OF_MEMORY, "matmul: operands of %lld x %lld and %lld x %lld are too large",
                        (long long)d.m, (long long)d.k, (long long)d.k, (long long)d.n);
    size_t a_count = (size_t)(d.m * d.k), b_count = (size_t)(d.k * d.n);
    void *a_buf = oi__malloc((a_count ? a_count : 1) * 8);
    void *b_buf = oi__malloc((b_count ? b_count : 1) * 8);
    if (!a_buf || !b_buf) {
        oi__free(a_buf);
        oi__free(b_buf);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    int64_t batches = oi__shape_numel(d.batch_ndim, d.batch_shape);
    int64_t index[OI_MAX_DIMS] = {0};
    for (int64_t bi = 0; bi < batches; bi++) {
        int64_t a_base = k->in[0]->offset, b_base = k->in[1]->offset, out_base = k->out->offset;
        for (int dd = 0; dd < d.batch_ndim; dd++) {
            a_base += index[dd] * d.a_batch_strides[dd];
            b_base += index[dd] * d.b_batch_strides[dd];
            out_base += index[dd] * d.out_batch_strides[dd];
        }
        oi__matmul_batch(k, &d, a_base, b_base, out_base, a_buf, b_buf, wide_float);
        for (int dd = d.batch_ndim - 1; dd >= 0 && ++index[dd] == d.batch_shape[dd]; dd--)
            index[dd] = 0;
    }
    oi__free(a_buf);
    oi__free(b_buf);
    return OI_OK;
}
