/* reduce.c - sum/mean/prod/max/min over `axes`, argmax/argmin along
 * `axis`. The input's dims split into kept dims (one output element each)
 * and reduced dims (walked for every output element); strides are read
 * as they are, so views reduce without a copy.
 * Accumulators: floats in f32 (f64 for f64 data or acc=f64), rounded once
 * into the output; integers in 64-bit wrapping arithmetic, truncated into
 * the output (the acc dtype when widening). Integer means truncate toward
 * zero. */
#include "../openinfer_impl/internal.h"
#include "scalar.h" /* OI_S_row_sum_f32, OI_S_row_ext_f32, OI_S_sum_step, OI_S_prod_step */

typedef struct oi__reduce_plan {
    int n_outer, n_inner;
    int64_t outer_shape[OI_MAX_DIMS], outer_in_strides[OI_MAX_DIMS], outer_out_strides[OI_MAX_DIMS];
    int64_t inner_shape[OI_MAX_DIMS], inner_in_strides[OI_MAX_DIMS];
    int64_t inner_count;
} oi__reduce_plan;

static oi_status oi__reduce_plan_of(const oi__kernel_args *k, oi__reduce_plan *plan) {
    const oi__tensor *in = k->in[0], *out = k->out;
    bool reduced[OI_MAX_DIMS];
    if (oi__reduce_axes(k, in->ndim, reduced) != OI_OK)
        return OI_ERROR_VALIDATION;
    bool keepdims = oi__op_param_bool(k, "keepdims");
    memset(plan, 0, sizeof *plan);
    plan->inner_count = 1;
    int out_dim = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (reduced[d]) {
            plan->inner_shape[plan->n_inner] = in->shape[d];
            plan->inner_in_strides[plan->n_inner++] = in->strides[d];
            plan->inner_count *= in->shape[d];
            if (keepdims)
                out_dim++;
        } else {
            plan->outer_shape[plan->n_outer] = in->shape[d];
            plan->outer_in_strides[plan->n_outer] = in->strides[d];
            plan->outer_out_strides[plan->n_outer++] = out->strides[out_dim++];
        }
    }
    return OI_OK;
}

/* Running state of one output element. */
typedef struct oi__reduce_acc {
    double f;
    float f32;
    uint64_t u;
    int64_t best_index;
    int64_t seen;
} oi__reduce_acc;

static bool oi__reduce_is_arg(oi_op op) { return op == OI_OP_argmax_axis || op == OI_OP_argmin_axis; }
static bool oi__reduce_wants_max(oi_op op) { return op == OI_OP_max_axis || op == OI_OP_argmax_axis; }

/* Does `v` replace the current best? select_first keeps the first of
 * equal values (strict comparison), otherwise the last. */
static bool oi__reduce_better_f(oi_op op, double v, double best, bool select_first) {
    if (oi__reduce_wants_max(op))
        return select_first ? v > best : v >= best;
    return select_first ? v < best : v <= best;
}

static bool oi__reduce_better_i(oi_op op, int64_t v, int64_t best, bool select_first) {
    if (oi__reduce_wants_max(op))
        return select_first ? v > best : v >= best;
    return select_first ? v < best : v <= best;
}

static bool oi__reduce_better_u(oi_op op, uint64_t v, uint64_t best, bool select_first) {
    if (oi__reduce_wants_max(op))
        return select_first ? v > best : v >= best;
    return select_first ? v < best : v <= best;
}

static void oi__reduce_step(oi_op op, oi__op_domain dom, bool wide, bool select_first, oi_dtype t, const void *data,
                            int64_t at, oi__reduce_acc *acc) {
    int64_t position = acc->seen++;
    if (dom == OI__DOM_FLOAT) {
        double v = oi__load_f64(t, data, at);
        switch (op) {
        case OI_OP_sum_axis: case OI_OP_mean_axis:
            if (wide) acc->f = OI_S_sum_step(acc->f, v); else acc->f32 = OI_S_sum_step(acc->f32, (float)v);
            return;
        case OI_OP_prod_axis: /* scalar.h's steps: the emitted code folds with them too */
            if (wide) acc->f = OI_S_prod_step(acc->f, v); else acc->f32 = OI_S_prod_step(acc->f32, (float)v);
            return;
        case OI_OP_max_axis: acc->f = position ? OI_S_fmax(acc->f, v) : v; return;
        case OI_OP_min_axis: acc->f = position ? OI_S_fmin(acc->f, v) : v; return;
        default:
            if (!position || oi__reduce_better_f(op, v, acc->f, select_first)) {
                acc->f = v;
                acc->best_index = position;
            }
            return;
        }
    }
    uint64_t v = dom == OI__DOM_SIGNED ? (uint64_t)oi__load_i64(t, data, at) : oi__load_u64(t, data, at);
    switch (op) {
    case OI_OP_sum_axis: case OI_OP_mean_axis: acc->u += v; return;
    case OI_OP_prod_axis: acc->u *= v; return;
    default: {
        bool better = dom == OI__DOM_SIGNED ? oi__reduce_better_i(op, (int64_t)v, (int64_t)acc->u, select_first)
                                            : oi__reduce_better_u(op, v, acc->u, select_first);
        /* max/min keep the first of equal values: same result either way */
        if (!position || better) {
            acc->u = v;
            acc->best_index = position;
        }
        return;
    }
    }
}

static void oi__reduce_store(const oi__kernel_args *k, oi__op_domain dom, bool wide, const oi__reduce_acc *acc,
                             int64_t at) {
    oi_op op = k->op;
    oi_dtype t = k->out->dtype;
    void *data = oi__tensor_data(k->out);
    if (oi__reduce_is_arg(op)) {
        oi__store_i64(t, data, at, acc->best_index);
        return;
    }
    if (dom == OI__DOM_FLOAT) {
        double v = (op == OI_OP_sum_axis || op == OI_OP_mean_axis || op == OI_OP_prod_axis) && !wide ? (double)acc->f32
                                                                                                     : acc->f;
        if (op == OI_OP_mean_axis)
            v = wide ? v / (double)acc->seen : (double)(float)(v / (double)acc->seen);
        oi__store_f64(t, data, at, v);
        return;
    }
    uint64_t v = acc->u;
    if (op == OI_OP_mean_axis) {
        if (acc->seen == 0)
            v = 0;
        else if (dom == OI__DOM_SIGNED)
            v = (uint64_t)((int64_t)v / acc->seen); /* truncates toward zero */
        else
            v = v / (uint64_t)acc->seen;
    }
    oi__store_u64(t, data, at, v);
}

/* ---- contiguous f32/f64 over trailing axes ----
 * sum/mean/max/min of each row of a dense input whose reduced axes are
 * its last ones: 16 (f32) or 8 (f64) running lanes that vectorize, summed
 * pairwise at the end (a different, more accurate order than the generic
 * path's); max/min compare integers with the floats' order, NaN ignored
 * unless the whole row is NaN (fmax/fmin semantics); rows split over the
 * pool when the input is large. */
typedef struct oi__reduce_job {
    oi_op op;
    oi_dtype t;
    bool wide_acc;
    const void *x;
    void *y;
    int64_t rows, cols, chunk;
} oi__reduce_job;

/* kernels/scalar.h's row sum: the emitted code calls the same function. */
static float oi__reduce_sum_f32(const float *x, int64_t n) { return OI_S_row_sum_f32(x, n); }

/* f64 data, or f32 data with acc=f64 (f32 != NULL). */
static double oi__reduce_sum_f64(const double *x, const float *f32, int64_t n) {
    double acc[8] = {0};
    int64_t i = 0;
    if (f32) {
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++)
                acc[j] += (double)f32[i + j];
        for (int j = 0; i < n; i++, j++)
            acc[j] += (double)f32[i];
    } else {
        for (; i + 8 <= n; i += 8)
            for (int j = 0; j < 8; j++)
                acc[j] += x[i + j];
        for (int j = 0; i < n; i++, j++)
            acc[j] += x[i];
    }
    for (int w = 4; w >= 1; w /= 2)
        for (int j = 0; j < w; j++)
            acc[j] += acc[j + w];
    return acc[0];
}

/* max/min on integers in the floats' order: scalar.h's row function (the
 * emitted code calls it too); f64 below, the same scheme in 64 bits. */
static float oi__reduce_ext_f32(const float *x, int64_t n, bool want_max) { return OI_S_row_ext_f32(x, n, want_max); }

static double oi__reduce_ext_f64(const double *x, int64_t n, bool want_max) {
    int64_t best[8];
    const uint64_t mag = 0x7FFFFFFFFFFFFFFFu, sign = 0x8000000000000000u;
    uint64_t flip = want_max ? 0u : ~(uint64_t)0;
    for (int j = 0; j < 8; j++)
        best[j] = INT64_MIN;
    for (int64_t i = 0; i < n; i += 8) {
        int m = n - i < 8 ? (int)(n - i) : 8;
        for (int j = 0; j < m; j++) {
            uint64_t b;
            memcpy(&b, &x[i + j], sizeof b);
            uint64_t nan = 0u - (uint64_t)((b & mag) > 0x7FF0000000000000u);
            uint64_t score = (b ^ ((0u - (b >> 63)) & mag)) ^ flip;
            int64_t s = (int64_t)((score & ~nan) | (sign & nan));
            best[j] = s > best[j] ? s : best[j];
        }
    }
    int64_t top = best[0];
    for (int j = 1; j < 8; j++)
        top = best[j] > top ? best[j] : top;
    if (top == INT64_MIN)
        return NAN;
    uint64_t key = (uint64_t)top ^ flip, b = key ^ ((0u - (key >> 63)) & mag);
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

static void oi__reduce_rows(void *ctx, int task, int thread) {
    const oi__reduce_job *jb = (const oi__reduce_job *)ctx;
    (void)thread;
    int64_t lo = (int64_t)task * jb->chunk, hi = lo + jb->chunk < jb->rows ? lo + jb->chunk : jb->rows;
    bool is_max = jb->op == OI_OP_max_axis, is_ext = is_max || jb->op == OI_OP_min_axis;
    bool mean = jb->op == OI_OP_mean_axis;
    for (int64_t r = lo; r < hi; r++) {
        if (jb->t == OI_DTYPE_F32) {
            const float *x = (const float *)jb->x + r * jb->cols;
            float v;
            if (is_ext)
                v = oi__reduce_ext_f32(x, jb->cols, is_max);
            else if (jb->wide_acc) {
                double d = oi__reduce_sum_f64(NULL, x, jb->cols);
                v = (float)(mean ? d / (double)jb->cols : d);
            } else {
                v = oi__reduce_sum_f32(x, jb->cols);
                if (mean)
                    v = (float)((double)v / (double)jb->cols);
            }
            ((float *)jb->y)[r] = v;
        } else {
            const double *x = (const double *)jb->x + r * jb->cols;
            double v = is_ext ? oi__reduce_ext_f64(x, jb->cols, is_max) : oi__reduce_sum_f64(x, NULL, jb->cols);
            ((double *)jb->y)[r] = mean ? v / (double)jb->cols : v;
        }
    }
}

static bool oi__reduce_fast(const oi__kernel_args *k) {
    const oi__tensor *in = k->in[0], *out = k->out;
    oi_op op = k->op;
    if (op != OI_OP_sum_axis && op != OI_OP_mean_axis && op != OI_OP_max_axis && op != OI_OP_min_axis)
        return false;
    if ((in->dtype != OI_DTYPE_F32 && in->dtype != OI_DTYPE_F64) || out->dtype != in->dtype ||
        !oi__tensor_is_contiguous(in) || !oi__tensor_is_contiguous(out))
        return false;
    bool reduced[OI_MAX_DIMS];
    if (oi__reduce_axes(k, in->ndim, reduced) != OI_OK)
        return false;
    int d0 = in->ndim;
    while (d0 > 0 && reduced[d0 - 1])
        d0--;
    for (int d = 0; d < d0; d++)
        if (reduced[d])
            return false;
    oi__reduce_job jb;
    jb.op = op;
    jb.t = in->dtype;
    jb.wide_acc = k->acc == OI_DTYPE_F64;
    jb.rows = oi__shape_numel(d0, in->shape);
    jb.cols = oi__shape_numel(in->ndim - d0, in->shape + d0);
    if (jb.cols == 0 || jb.rows == 0)
        return false;
    size_t es = in->dtype == OI_DTYPE_F64 ? sizeof(double) : sizeof(float);
    jb.x = (const char *)oi__op_cdata(in) + (size_t)in->offset * es;
    jb.y = (char *)oi__tensor_data(out) + (size_t)out->offset * es;
    oi__threadpool *pool = jb.rows > 1 && jb.rows * jb.cols >= ((int64_t)1 << 16) ? oi__threadpool_default() : NULL;
    int tasks = pool ? oi__threadpool_size(pool) * 4 : 1;
    jb.chunk = (jb.rows + tasks - 1) / tasks;
    tasks = (int)((jb.rows + jb.chunk - 1) / jb.chunk);
    oi__threadpool_run(pool, tasks, oi__reduce_rows, &jb);
    return true;
}

/* ---- contiguous f32 sum/mean over middle axes ----
 * [outer, R, inner] -> [outer, inner] (the reduced axes one block, some
 * axes kept after it): rows of `inner` values added into the output in
 * order r = 0, 1, ..., which is the generic path's order for each output
 * value (one f32 accumulator from 0), so the results are the same; the
 * adds run along the kept axes and vectorize. A task takes `outers`
 * outer indices, or one outer index and a chunk of its columns. */
typedef struct oi__reduce_cols_job {
    const float *x;
    float *y;
    int64_t outer, reduced, inner;
    int64_t outers, chunk, chunks; /* per task: outers x chunk; chunks per outer */
    bool mean;
} oi__reduce_cols_job;

static void oi__reduce_cols_block(const oi__reduce_cols_job *jb, int64_t o, int64_t j0, int64_t j1) {
    float *y = jb->y + o * jb->inner;
    const float *x = jb->x + o * jb->reduced * jb->inner;
    for (int64_t j = j0; j < j1; j++)
        y[j] = 0.0f;
    for (int64_t r = 0; r < jb->reduced; r++)
        for (int64_t j = j0; j < j1; j++)
            y[j] += x[r * jb->inner + j];
    for (int64_t j = j0; jb->mean && j < j1; j++)
        y[j] = (float)((double)y[j] / (double)jb->reduced);
}

static void oi__reduce_cols(void *ctx, int task, int thread) {
    const oi__reduce_cols_job *jb = (const oi__reduce_cols_job *)ctx;
    (void)thread;
    int64_t o0 = task / jb->chunks * jb->outers, j0 = task % jb->chunks * jb->chunk;
    int64_t o1 = o0 + jb->outers < jb->outer ? o0 + jb->outers : jb->outer;
    int64_t j1 = j0 + jb->chunk < jb->inner ? j0 + jb->chunk : jb->inner;
    for (int64_t o = o0; o < o1; o++)
        oi__reduce_cols_block(jb, o, j0, j1);
}

static bool oi__reduce_middle_fast(const oi__kernel_args *k) {
    const oi__tensor *in = k->in[0], *out = k->out;
    if ((k->op != OI_OP_sum_axis && k->op != OI_OP_mean_axis) || in->dtype != OI_DTYPE_F32 ||
        out->dtype != OI_DTYPE_F32 || k->acc == OI_DTYPE_F64 || !oi__tensor_is_contiguous(in) ||
        !oi__tensor_is_contiguous(out))
        return false;
    bool reduced[OI_MAX_DIMS];
    if (oi__reduce_axes(k, in->ndim, reduced) != OI_OK)
        return false;
    int d0 = 0, d1;
    while (d0 < in->ndim && !reduced[d0])
        d0++;
    for (d1 = d0; d1 < in->ndim && reduced[d1]; d1++)
        ;
    for (int d = d1; d < in->ndim; d++)
        if (reduced[d])
            return false;
    if (d0 == d1 || d1 == in->ndim) /* nothing reduced, or the trailing axes: oi__reduce_fast's */
        return false;
    oi__reduce_cols_job jb;
    jb.outer = oi__shape_numel(d0, in->shape);
    jb.reduced = oi__shape_numel(d1 - d0, in->shape + d0);
    jb.inner = oi__shape_numel(in->ndim - d1, in->shape + d1);
    jb.mean = k->op == OI_OP_mean_axis;
    if (jb.outer == 0 || jb.inner == 0 || jb.reduced == 0)
        return false;
    jb.x = (const float *)oi__op_cdata(in) + in->offset;
    jb.y = (float *)oi__tensor_data(out) + out->offset;
    oi__threadpool *pool = jb.outer * jb.reduced * jb.inner >= ((int64_t)1 << 16) ? oi__threadpool_default() : NULL;
    int64_t want = pool ? oi__threadpool_size(pool) * 4 : 1;
    jb.outers = jb.outer >= want ? (jb.outer + want - 1) / want : 1;
    jb.chunk = jb.inner;
    if (jb.outer < want) /* few outer indices: split their columns, whole vectors each */
        jb.chunk = ((jb.inner * jb.outer + want - 1) / want + 15) / 16 * 16;
    jb.chunks = (jb.inner + jb.chunk - 1) / jb.chunk;
    int64_t tasks = (jb.outer + jb.outers - 1) / jb.outers * jb.chunks;
    oi__threadpool_run(pool, (int)tasks, oi__reduce_cols, &jb);
    return true;
}

/* ---- argmax / argmin of dense f32 rows along the last axis ----
 * The generic loop keeps row[0] and takes each later v with v > best
 * (select_last: v >= best; < and <= for argmin), so a NaN is never taken
 * unless it is row[0], which then stays. The same answer in two vector
 * passes: the extreme of the non-NaN values (MAXPS/MINPS return their second
 * operand when the first is NaN), then the first (or last) index holding it
 * (== treats -0 and +0 alike, as the comparisons do). */
static int64_t oi__arg_find_f32(const float *x, int64_t n, float m, bool first) {
    if (first) {
        for (int64_t i = 0; i < n; i++)
            if (x[i] == m)
                return i;
    } else {
        for (int64_t i = n - 1; i >= 0; i--)
            if (x[i] == m)
                return i;
    }
    return 0;
}

static float oi__arg_extreme_f32_plain(const float *x, int64_t n, bool max) {
    float m = x[0];
    for (int64_t i = 1; i < n; i++)
        if (max ? x[i] > m : x[i] < m)
            m = x[i];
    return m;
}

#if OI__GEMM_X86
OI__TARGET_AVX512 static float oi__arg_extreme_f32_avx512(const float *x, int64_t n, bool max) {
    __m512 m0 = _mm512_set1_ps(x[0]), m1 = m0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
        m0 = max ? _mm512_maskz_max_ps(OI__V512_ALL, a, m0) : _mm512_maskz_min_ps(OI__V512_ALL, a, m0);
        m1 = max ? _mm512_maskz_max_ps(OI__V512_ALL, b, m1) : _mm512_maskz_min_ps(OI__V512_ALL, b, m1);
    }
    float m = max ? oi__v512_max_ps(_mm512_maskz_max_ps(OI__V512_ALL, m0, m1))
                  : oi__v512_min_ps(_mm512_maskz_min_ps(OI__V512_ALL, m0, m1));
    for (; i < n; i++)
        if (max ? x[i] > m : x[i] < m)
            m = x[i];
    return m;
}

OI__TARGET_AVX2 static float oi__arg_extreme_f32_avx2(const float *x, int64_t n, bool max) {
    __m256 m0 = _mm256_set1_ps(x[0]), m1 = m0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        m0 = max ? _mm256_max_ps(a, m0) : _mm256_min_ps(a, m0);
        m1 = max ? _mm256_max_ps(b, m1) : _mm256_min_ps(b, m1);
    }
    float lanes[8], m = x[0];
    _mm256_storeu_ps(lanes, max ? _mm256_max_ps(m0, m1) : _mm256_min_ps(m0, m1));
    for (int l = 0; l < 8; l++)
        if (max ? lanes[l] > m : lanes[l] < m)
            m = lanes[l];
    for (; i < n; i++)
        if (max ? x[i] > m : x[i] < m)
            m = x[i];
    return m;
}
#endif

static int64_t oi__arg_row_f32(const float *x, int64_t n, bool max, bool first) {
    if (x[0] != x[0])
        return 0; /* a NaN first element is never replaced */
    float m;
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    if (isa == OI__GEMM_ISA_AVX512)
        m = oi__arg_extreme_f32_avx512(x, n, max);
    else if (isa == OI__GEMM_ISA_AVX2)
        m = oi__arg_extreme_f32_avx2(x, n, max);
    else
#endif
        m = oi__arg_extreme_f32_plain(x, n, max);
    return oi__arg_find_f32(x, n, m, first);
}

static bool oi__reduce_arg_fast(const oi__kernel_args *k) {
    const oi__tensor *in = k->in[0], *out = k->out;
    bool reduced[OI_MAX_DIMS];
    if (!oi__reduce_is_arg(k->op) || in->dtype != OI_DTYPE_F32 || in->ndim < 1 || !oi__tensor_is_contiguous(in) ||
        !oi__tensor_is_contiguous(out) || oi__reduce_axes(k, in->ndim, reduced) != OI_OK)
        return false;
    for (int d = 0; d < in->ndim - 1; d++)
        if (reduced[d])
            return false;
    int64_t cols = in->shape[in->ndim - 1], rows = cols ? oi__shape_numel(in->ndim, in->shape) / cols : 0;
    if (!reduced[in->ndim - 1] || cols == 0)
        return false;
    const float *x = (const float *)oi__op_cdata(in) + in->offset;
    bool max = oi__reduce_wants_max(k->op), first = oi__op_param_bool(k, "select_first");
    for (int64_t r = 0; r < rows; r++)
        oi__store_i64(out->dtype, oi__tensor_data(out), out->offset + r, oi__arg_row_f32(x + r * cols, cols, max, first));
    return true;
}

static oi_status oi__k_reduce(const oi__kernel_args *k) {
    oi__reduce_plan plan;
    if (oi__reduce_plan_of(k, &plan) != OI_OK)
        return OI_ERROR_VALIDATION;
    const oi__tensor *in = k->in[0];
    oi_op op = k->op;
    bool needs_elements = op == OI_OP_max_axis || op == OI_OP_min_axis || oi__reduce_is_arg(op);
    if (needs_elements && plan.inner_count == 0)
        return oi__fail(OI_ERROR_RUNTIME, "%s: cannot reduce an empty axis", oi_op_name(op));
    if (oi__reduce_fast(k) || oi__reduce_middle_fast(k) || oi__reduce_arg_fast(k))
        return OI_OK;
    oi__op_domain dom = oi__op_domain_of(in->dtype);
    bool wide = in->dtype == OI_DTYPE_F64 || k->acc == OI_DTYPE_F64;
    bool select_first = oi__reduce_is_arg(op) ? oi__op_param_bool(k, "select_first") : true;
    bool is_prod = op == OI_OP_prod_axis;

    int64_t outer_count = oi__shape_numel(plan.n_outer, plan.outer_shape);
    int64_t outer_index[OI_MAX_DIMS] = {0};
    for (int64_t o = 0; o < outer_count; o++) {
        int64_t in_base = in->offset, out_at = k->out->offset;
        for (int d = 0; d < plan.n_outer; d++) {
            in_base += outer_index[d] * plan.outer_in_strides[d];
            out_at += outer_index[d] * plan.outer_out_strides[d];
        }
        oi__reduce_acc acc;
        memset(&acc, 0, sizeof acc);
        if (is_prod) {
            acc.f = 1.0;
            acc.f32 = 1.0f;
            acc.u = 1;
        }
        int64_t inner_index[OI_MAX_DIMS] = {0};
        for (int64_t i = 0; i < plan.inner_count; i++) {
            int64_t at = in_base;
            for (int d = 0; d < plan.n_inner; d++)
                at += inner_index[d] * plan.inner_in_strides[d];
            oi__reduce_step(op, dom, wide, select_first, in->dtype, oi__op_cdata(in), at, &acc);
            for (int d = plan.n_inner - 1; d >= 0 && ++inner_index[d] == plan.inner_shape[d]; d--)
                inner_index[d] = 0;
        }
        oi__reduce_store(k, dom, wide, &acc, out_at);
        for (int d = plan.n_outer - 1; d >= 0 && ++outer_index[d] == plan.outer_shape[d]; d--)
            outer_index[d] = 0;
    }
    return OI_OK;
}
