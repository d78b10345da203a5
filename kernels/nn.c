/* nn.c - softmax, log_softmax, layer_norm, rms_norm, batch_norm,
 * group_norm, rope, attention and top_k.
 *
 * Most of these work on lanes: a tensor splits into lanes of `len`
 * elements (the normalized dims, the softmax axis, the rotary dim...) that
 * an op transforms one at a time. oi__lanes lists where each lane starts
 * and where its elements sit (any strides: views need no copy), and the
 * row driver (oi__rows) hands every lane to a row function, in parallel
 * over the default pool when the tensor is large. A lane of dense f32 in
 * and out is processed in place; any other lane is gathered into a
 * scratch row, computed and scattered back, rounding once.
 * Precision: f32, f16 and bf16 compute in f32 (statistics are summed in
 * f32 blocks of 256 and added in double); f64 computes in double.
 * softmax/log_softmax (max and e^ sweeps, vexp.h) and layer_norm/rms_norm
 * rows have AVX2/AVX-512 intrinsics paths, picked like gemm.c's kernels.
 * attention has three paths: decoding (one query row, chunks of keys
 * merged in order), a direct f32 path with AVX2/AVX-512 register tiles for
 * more query rows (also the synthesizer's, through its embed region), and
 * oi__gemm_f32 / oi__gemm_f64 (kernels/gemm.c) for everything else. */
#include "../openinfer_impl/internal.h"
#include "scalar.h" /* rope's angle and turn (OI_S_rope_*), top_k's order (OI_S_topk_*) */

/* ------------------------------------------------------------------ */
/* Lanes                                                               */
/* ------------------------------------------------------------------ */
#define OI__NN_MAX_DIMS (OI_MAX_DIMS + 1) /* group_norm splits C into [G, C/G] */

typedef struct oi__lanes {
    int64_t count, len;
    int64_t *base; /* element offset of each lane's first element */
    int64_t *rel;  /* offset of element j of a lane from its base  */
    bool dense;    /* rel[j] == j for every j                       */
} oi__lanes;

static void oi__lanes_free(oi__lanes *l) {
    oi__free(l->base);
    oi__free(l->rel);
    memset(l, 0, sizeof *l);
}

static int64_t oi__nn_count(int ndim, const int64_t *shape, const bool *pick, bool want) {
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        if (pick[d] == want)
            n *= shape[d];
    return n;
}

/* The offset of every index over the dims where pick[d] == want, in
 * row-major order, starting at `start`. */
static void oi__nn_offsets(int ndim, const int64_t *shape, const int64_t *strides, const bool *pick, bool want,
                           int64_t start, int64_t count, int64_t *out) {
    int64_t index[OI__NN_MAX_DIMS] = {0};
    int64_t at = start;
    for (int64_t i = 0; i < count; i++) {
        out[i] = at;
        for (int d = ndim - 1; d >= 0; d--) {
            if (pick[d] != want)
                continue;
            at += strides[d];
            if (++index[d] < shape[d])
                break;
            at -= strides[d] * shape[d];
            index[d] = 0;
        }
    }
}

/* The dims marked in lane_dims form a lane; the other dims enumerate the
 * lanes (both row-major). */
static oi_status oi__lanes_init(oi__lanes *l, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                                const bool *lane_dims) {
    memset(l, 0, sizeof *l);
    l->count = oi__nn_count(ndim, shape, lane_dims, false);
    l->len = oi__nn_count(ndim, shape, lane_dims, true);
    l->base = (int64_t *)oi__malloc(sizeof(int64_t) * (size_t)(l->count ? l->count : 1));
    l->rel = (int64_t *)oi__malloc(sizeof(int64_t) * (size_t)(l->len ? l->len : 1));
    if (!l->base || !l->rel) {
        oi__lanes_free(l);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    oi__nn_offsets(ndim, shape, strides, lane_dims, false, offset, l->count, l->base);
    oi__nn_offsets(ndim, shape, strides, lane_dims, true, 0, l->len, l->rel);
    l->dense = true;
    for (int64_t j = 0; j < l->len && l->dense; j++)
        l->dense = l->rel[j] == j;
    return OI_OK;
}

/* A mask of the dims [from, to). */
static void oi__nn_dims(int ndim, int from, int to, bool *mask) {
    for (int d = 0; d < ndim; d++)
        mask[d] = d >= from && d < to;
}

/* Loads t, broadcast (right-aligned) to `shape`, into a new dense f32 or
 * f64 (wide) array; NULL on allocation failure. */
static void *oi__nn_load_dense(const oi__tensor *t, bool wide, int ndim, const int64_t *shape) {
    int64_t strides[OI__NN_MAX_DIMS];
    bool all[OI__NN_MAX_DIMS];
    int lead = ndim - t->ndim;
    for (int d = 0; d < ndim; d++) {
        int td = d - lead;
        strides[d] = (td < 0 || t->shape[td] == 1) ? 0 : t->strides[td];
        all[d] = true;
    }
    int64_t n = oi__nn_count(ndim, shape, all, true);
    size_t es = wide ? sizeof(double) : sizeof(float);
    void *buf = oi__malloc(es * (size_t)(n ? n : 1));
    oi__op_sig have, want;
    oi__op_tensor_sig(t, &have);
    want = have;
    want.ndim = ndim;
    memcpy(want.shape, shape, sizeof(int64_t) * (size_t)ndim);
    if (buf && t->dtype == (wide ? OI_DTYPE_F64 : OI_DTYPE_F32) && oi__tensor_is_contiguous(t) &&
        oi__op_same_shape(&have, &want)) { /* already dense in the compute dtype */
        memcpy(buf, (const char *)oi__op_cdata(t) + es * (size_t)t->offset, es * (size_t)n);
        return buf;
    }
    int64_t *at = (int64_t *)oi__malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (!at || !buf) {
        oi__free(at);
        oi__free(buf);
        return NULL;
    }
    oi__nn_offsets(ndim, shape, strides, all, true, t->offset, n, at);
    for (int64_t i = 0; i < n; i++) {
        double v = oi__load_f64(t->dtype, oi__op_cdata(t), at[i]);
        if (wide)
            ((double *)buf)[i] = v;
        else
            ((float *)buf)[i] = (float)v;
    }
    oi__free(at);
    return buf;
}

/* ------------------------------------------------------------------ */
/* f32 row helpers: blocks of OI__MATH_BLOCK partial results, so they  */
/* vectorize; compiled into every ISA clone (math.c)                  */
/* ------------------------------------------------------------------ */
#define OI__NN_CHUNK 256 /* f32 partial sums are flushed to double this often */

/* The largest element, NaN ignored (-inf for none): on integer keys with
 * the floats' order (magnitude bits flipped for negatives; NaN scores
 * lowest), since GCC keeps a float compare-select loop scalar. */
OI__MATH_INLINE int32_t oi__f32_max_key(uint32_t b) {
    uint32_t nan = 0u - (uint32_t)((b & 0x7FFFFFFFu) > 0x7F800000u);
    return (int32_t)(((b ^ ((0u - (b >> 31)) & 0x7FFFFFFFu)) & ~nan) | (0x80000000u & nan));
}

OI__MATH_INLINE float oi__f32_max(const float *x, int64_t n) {
    int32_t acc[OI__MATH_BLOCK];
    for (int j = 0; j < OI__MATH_BLOCK; j++)
        acc[j] = INT32_MIN;
    int64_t i = 0;
    for (; i + OI__MATH_BLOCK <= n; i += OI__MATH_BLOCK)
        for (int j = 0; j < OI__MATH_BLOCK; j++) {
            int32_t key = oi__f32_max_key(OI_S_float_bits(x[i + j]));
            acc[j] = key > acc[j] ? key : acc[j];
        }
    for (int j = 0; i < n; i++, j++) {
        int32_t key = oi__f32_max_key(OI_S_float_bits(x[i]));
        acc[j] = key > acc[j] ? key : acc[j];
    }
    int32_t top = acc[0];
    for (int j = 1; j < OI__MATH_BLOCK; j++)
        top = acc[j] > top ? acc[j] : top;
    if (top == INT32_MIN)
        return -INFINITY;
    uint32_t key = (uint32_t)top;
    return OI_S_bits_float(key ^ ((0u - (key >> 31)) & 0x7FFFFFFFu));
}

/* sum of (x[i] - shift)^p for p = 1 or 2 */
OI__MATH_INLINE double oi__f32_sum_pow(const float *x, int64_t n, float shift, int p) {
    double total = 0.0;
    for (int64_t c = 0; c < n; c += OI__NN_CHUNK) {
        int64_t m = n - c < OI__NN_CHUNK ? n - c : OI__NN_CHUNK, i = 0;
        const float *xc = x + c;
        float acc[OI__MATH_BLOCK] = {0};
        if (p == 1) {
            for (; i + OI__MATH_BLOCK <= m; i += OI__MATH_BLOCK)
                for (int j = 0; j < OI__MATH_BLOCK; j++)
                    acc[j] += xc[i + j] - shift;
        } else {
            for (; i + OI__MATH_BLOCK <= m; i += OI__MATH_BLOCK)
                for (int j = 0; j < OI__MATH_BLOCK; j++)
                    acc[j] += (xc[i + j] - shift) * (xc[i + j] - shift);
        }
        float s = 0.0f;
        for (int j = 0; j < OI__MATH_BLOCK; j++)
            s += acc[j];
        for (; i < m; i++)
            s += p == 1 ? xc[i] - shift : (xc[i] - shift) * (xc[i] - shift);
        total += s;
    }
    return total;
}

/* sum of e^(x[i] - shift), also stored into y unless y is NULL */
OI__MATH_INLINE double oi__f32_exp_sum(const float *x, float *y, int64_t n, float shift) {
    double total = 0.0;
    for (int64_t c = 0; c < n; c += OI__NN_CHUNK) {
        int64_t m = n - c < OI__NN_CHUNK ? n - c : OI__NN_CHUNK, i = 0;
        float acc[OI__MATH_BLOCK] = {0};
        for (; i + OI__MATH_BLOCK <= m; i += OI__MATH_BLOCK) {
            float b[OI__MATH_BLOCK];
            memcpy(b, x + c + i, sizeof b);
            for (int j = 0; j < OI__MATH_BLOCK; j++) {
                b[j] = OI_S_exp_f32(b[j] - shift);
                acc[j] += b[j];
            }
            if (y)
                memcpy(y + c + i, b, sizeof b);
        }
        float s = 0.0f;
        for (int j = 0; j < OI__MATH_BLOCK; j++)
            s += acc[j];
        for (; i < m; i++) {
            float e = OI_S_exp_f32(x[c + i] - shift);
            s += e;
            if (y)
                y[c + i] = e;
        }
        total += s;
    }
    return total;
}

/* softmax / log_softmax of one row; x and y may be the same buffer. Three
 * sweeps (max; e^ summed, y written; scale or shift y), but only the first
 * reads memory: a row of up to ~8K floats stays in L1/L2 for the other
 * two. With vexp.h's intrinsics the second sweep writes e^(x - max) for
 * softmax and x - max for log_softmax; the portable loops write log_softmax
 * in the third. Either way log_softmax is (x - max) - log(sum), rounded
 * twice. */
OI__MATH_INLINE void oi__softmax_body(const float *x, float *y, int64_t n, bool log_form) {
    float m;
    double sum;
    if (!oi__vexp_max(x, n, &m))
        m = oi__f32_max(x, n);
    if (oi__vexp_sum(x, y, n, m, log_form, &sum)) {
        if (log_form) {
            float log_sum = (float)log(sum);
            OI__MAP(y, y, n, v - log_sum);
        } else {
            float inv = (float)(1.0 / sum);
            OI__MAP(y, y, n, v * inv);
        }
        return;
    }
    if (log_form) {
        float log_sum = (float)log(oi__f32_exp_sum(x, NULL, n, m));
        OI__MAP(x, y, n, (v - m) - log_sum);
        return;
    }
    float inv = (float)(1.0 / oi__f32_exp_sum(x, y, n, m));
    OI__MAP(y, y, n, v * inv);
}

OI__ISA_CLONES(oi__softmax, (const float *x, float *y, int64_t n, bool log_form), (x, y, n, log_form))

static void oi__softmax_f64(const double *x, double *y, int64_t n, bool log_form) {
    double m = -INFINITY, sum = 0.0;
    for (int64_t i = 0; i < n; i++)
        m = x[i] > m ? x[i] : m;
    for (int64_t i = 0; i < n; i++)
        sum += exp(x[i] - m);
    double log_sum = log(sum);
    for (int64_t i = 0; i < n; i++)
        y[i] = log_form ? (x[i] - m) - log_sum : exp(x[i] - m) / sum;
}

/* ------------------------------------------------------------------ */
/* The row driver                                                      */
/* ------------------------------------------------------------------ */
typedef struct oi__rows oi__rows;
/* Transforms lane `lane`: x and y have n elements and may be the same. */
typedef void (*oi__row_f32_fn)(const oi__rows *r, int64_t lane, const float *x, float *y, int64_t n);
typedef void (*oi__row_f64_fn)(const oi__rows *r, int64_t lane, const double *x, double *y, int64_t n);

struct oi__rows {
    const oi__tensor *x;
    oi__tensor *y;
    oi__lanes in, out;
    bool wide; /* compute in double (f64 data, or an op without an f32 row) */
    oi__row_f32_fn f32;
    oi__row_f64_fn f64;
    int64_t lanes_per_task;
    char *scratch; /* in.len elements per pool thread */
    /* what the row functions need */
    oi_op op;
    double eps;
    int64_t groups, channels; /* group_norm: G, C; batch_norm: C */
    void *aux[3];             /* f32 or f64 (wide) arrays, freed by oi__rows_free */
    /* rope */
    int64_t rot, seq_len, seq_div, batch_div;
    bool interleaved, batched_positions;
    double *cos_table, *sin_table; /* [position entry][rot / 2] */
};

static void oi__rows_free(oi__rows *r) {
    oi__lanes_free(&r->in);
    oi__lanes_free(&r->out);
    for (int i = 0; i < 3; i++)
        oi__free(r->aux[i]);
    oi__free(r->cos_table);
    oi__free(r->sin_table);
}

static void oi__rows_start(oi__rows *r, const oi__kernel_args *k, oi__row_f32_fn f32, oi__row_f64_fn f64) {
    memset(r, 0, sizeof *r);
    r->x = k->in[0];
    r->y = k->out;
    r->op = k->op;
    r->f32 = f32;
    r->f64 = f64;
    r->wide = k->out->dtype == OI_DTYPE_F64 || !f32;
}

/* Lanes over a layout that x and y share (their own strides). */
static oi_status oi__rows_lanes(oi__rows *r, int ndim, const int64_t *shape, const int64_t *x_strides,
                                const int64_t *y_strides, const bool *lane_dims) {
    if (oi__lanes_init(&r->in, ndim, shape, x_strides, r->x->offset, lane_dims) != OI_OK)
        return OI_ERROR_OUT_OF_MEMORY;
    return oi__lanes_init(&r->out, ndim, shape, y_strides, r->y->offset, lane_dims);
}

static void oi__lane_load(const oi__tensor *t, const oi__lanes *l, int64_t lane, bool wide, void *buf) {
    int64_t base = l->base[lane];
    const void *data = oi__op_cdata(t);
    if (wide) {
        double *d = (double *)buf;
        for (int64_t j = 0; j < l->len; j++)
            d[j] = oi__load_f64(t->dtype, data, base + l->rel[j]);
    } else if (t->dtype == OI_DTYPE_F32) {
        float *f = (float *)buf;
        for (int64_t j = 0; j < l->len; j++)
            f[j] = ((const float *)data)[base + l->rel[j]];
    } else {
        float *f = (float *)buf;
        for (int64_t j = 0; j < l->len; j++)
            f[j] = (float)oi__load_f64(t->dtype, data, base + l->rel[j]);
    }
}

static void oi__lane_store(oi__tensor *t, const oi__lanes *l, int64_t lane, bool wide, const void *buf) {
    int64_t base = l->base[lane];
    void *data = oi__tensor_data(t);
    for (int64_t j = 0; j < l->len; j++) {
        if (wide)
            oi__store_f64(t->dtype, data, base + l->rel[j], ((const double *)buf)[j]);
        else if (t->dtype == OI_DTYPE_F32)
            ((float *)data)[base + l->rel[j]] = ((const float *)buf)[j];
        else
            oi__store_f64(t->dtype, data, base + l->rel[j], (double)((const float *)buf)[j]);
    }
}

static void oi__rows_one(const oi__rows *r, int64_t lane, void *scratch) {
    oi_dtype dense_t = r->wide ? OI_DTYPE_F64 : OI_DTYPE_F32;
    int64_t n = r->in.len;
    if (r->x->dtype == dense_t && r->y->dtype == dense_t && r->in.dense && r->out.dense) {
        if (r->wide)
            r->f64(r, lane, (const double *)oi__op_cdata(r->x) + r->in.base[lane],
                   (double *)oi__tensor_data(r->y) + r->out.base[lane], n);
        else
            r->f32(r, lane, (const float *)oi__op_cdata(r->x) + r->in.base[lane],
                   (float *)oi__tensor_data(r->y) + r->out.base[lane], n);
        return;
    }
    oi__lane_load(r->x, &r->in, lane, r->wide, scratch);
    if (r->wide)
        r->f64(r, lane, (const double *)scratch, (double *)scratch, n);
    else
        r->f32(r, lane, (const float *)scratch, (float *)scratch, n);
    oi__lane_store(r->y, &r->out, lane, r->wide, scratch);
}

static void oi__rows_task(void *ctx, int task, int thread) {
    const oi__rows *r = (const oi__rows *)ctx;
    size_t row_bytes = (size_t)r->in.len * (r->wide ? sizeof(double) : sizeof(float));
    void *scratch = r->scratch ? r->scratch + (size_t)thread * row_bytes : NULL; /* only when gathering */
    int64_t lo = (int64_t)task * r->lanes_per_task;
    int64_t hi = lo + r->lanes_per_task < r->in.count ? lo + r->lanes_per_task : r->in.count;
    for (int64_t lane = lo; lane < hi; lane++)
        oi__rows_one(r, lane, scratch);
}

/* Runs every lane, over the pool when there are 32K elements or more. */
static oi_status oi__rows_run(oi__rows *r) {
    int64_t count = r->in.count, len = r->in.len;
    if (count == 0 || len == 0)
        return OI_OK;
    oi__threadpool *pool = count > 1 && count * len >= ((int64_t)1 << 15) ? oi__threadpool_default() : NULL;
    int threads = oi__threadpool_size(pool);
    int64_t tasks = count < (int64_t)threads * 4 ? count : (int64_t)threads * 4;
    r->lanes_per_task = (count + tasks - 1) / tasks;
    tasks = (count + r->lanes_per_task - 1) / r->lanes_per_task;
    oi_dtype dense_t = r->wide ? OI_DTYPE_F64 : OI_DTYPE_F32;
    bool gathers = r->x->dtype != dense_t || r->y->dtype != dense_t || !r->in.dense || !r->out.dense;
    if (gathers) { /* a scratch lane per thread (dense lanes work in place) */
        r->scratch = (char *)oi__malloc((size_t)threads * (size_t)len * (r->wide ? sizeof(double) : sizeof(float)));
        if (!r->scratch)
            return OI_ERROR_OUT_OF_MEMORY;
    }
    oi__threadpool_run(pool, (int)tasks, oi__rows_task, r);
    oi__free(r->scratch);
    r->scratch = NULL;
    return OI_OK;
}

/* Sets up lanes over dims [from, to) of x, runs and frees. */
static oi_status oi__rows_over(oi__rows *r, int from, int to) {
    bool mask[OI__NN_MAX_DIMS];
    oi__nn_dims(r->x->ndim, from, to, mask);
    oi_status s = oi__rows_lanes(r, r->x->ndim, r->x->shape, r->x->strides, r->y->strides, mask);
    if (s == OI_OK)
        s = oi__rows_run(r);
    oi__rows_free(r);
    return s;
}

/* ------------------------------------------------------------------ */
/* Parameters and shape checks                                         */
/* ------------------------------------------------------------------ */
/* `param` (an axis) normalized into [0, ndim); fails when out of range. */
static oi_status oi__nn_axis(const oi__kernel_args *k, const char *param, int ndim, int *axis) {
    int64_t a = oi__op_param_i64(k, param);
    int64_t norm = a < 0 ? a + ndim : a;
    if (norm < 0 || norm >= ndim)
        return oi__fail(OI_ERROR_VALIDATION, "%s: %s %lld is out of range for rank %d", oi_op_name(k->op), param,
                        (long long)a, ndim);
    *axis = (int)norm;
    return OI_OK;
}

static oi_status oi__nn_check_eps(const oi__kernel_args *k) {
    double eps = oi__op_param_f64(k, "epsilon");
    if (!(eps >= 0.0) || isinf(eps))
        return oi__fail(OI_ERROR_VALIDATION, "%s: epsilon must be finite and >= 0, got %g", oi_op_name(k->op), eps);
    return OI_OK;
}

/* Does `t` broadcast (right-aligned, numpy style) to `shape` without
 * growing? */
static bool oi__nn_broadcasts_to(const oi__op_sig *t, int ndim, const int64_t *shape) {
    if (t->ndim > ndim)
        return false;
    for (int i = 0; i < t->ndim; i++) {
        int64_t have = t->shape[t->ndim - 1 - i], want = shape[ndim - 1 - i];
        if (have != want && have != 1)
            return false;
    }
    return true;
}

static oi_status oi__nn_bad_shape(const char *op, const char *what, const oi__op_sig *t, const char *want) {
    char have[128];
    oi__op_shape_text(t->ndim, t->shape, have, sizeof have);
    return oi__fail(OI_ERROR_VALIDATION, "%s: %s has shape %s, %s", op, what, have, want);
}

/* layer_norm / rms_norm: scale (and bias) broadcast to x.shape[axis:]. */
static oi_status oi__nn_infer_norm(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in) {
    static const char *const names[] = {"x", "scale", "bias"};
    const char *name = oi_op_name(k->op);
    int axis = 0;
    if (oi__nn_axis(k, "axis", in[0].ndim, &axis) != OI_OK || oi__nn_check_eps(k) != OI_OK)
        return OI_ERROR_VALIDATION;
    const int64_t *norm_shape = in[0].shape + axis;
    int norm_ndim = in[0].ndim - axis;
    for (size_t i = 1; i < n_in; i++) {
        if (!oi__nn_broadcasts_to(&in[i], norm_ndim, norm_shape)) {
            char want[300], dims[128];
            oi__op_shape_text(norm_ndim, norm_shape, dims, sizeof dims);
            snprintf(want, sizeof want, "which does not broadcast to the normalized shape %s (axis %d)", dims, axis);
            return oi__nn_bad_shape(name, names[i], &in[i], want);
        }
    }
    return OI_OK;
}

/* batch_norm / group_norm: x is [N, C, ...]; the other inputs are [C]. */
static oi_status oi__nn_infer_channels(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in) {
    static const char *const names[] = {"x", "scale", "bias", "mean", "var"};
    const char *name = oi_op_name(k->op);
    if (in[0].ndim < 2)
        return oi__fail(OI_ERROR_VALIDATION, "%s: x must be [N, C, ...] (rank >= 2), got rank %d", name, in[0].ndim);
    if (oi__nn_check_eps(k) != OI_OK)
        return OI_ERROR_VALIDATION;
    int64_t c = in[0].shape[1];
    for (size_t i = 1; i < n_in; i++) {
        if (in[i].ndim != 1 || in[i].shape[0] != c) {
            char want[64];
            snprintf(want, sizeof want, "expected [%lld] (the channels of x)", (long long)c);
            return oi__nn_bad_shape(name, names[i], &in[i], want);
        }
    }
    if (k->op == OI_OP_group_norm) {
        int64_t g = oi__op_param_i64(k, "num_groups");
        if (g < 1 || c % g != 0)
            return oi__fail(OI_ERROR_VALIDATION, "group_norm: num_groups %lld must be >= 1 and divide the %lld channels",
                            (long long)g, (long long)c);
    }
    return OI_OK;
}

/* rope: x [..., seq, ..., dim] with the sequence at seq_axis; positions
 * i32/i64 [seq], or [x.shape[0], seq] for per-batch positions. */
static oi_status oi__nn_infer_rope(const oi__kernel_args *k, const oi__op_sig *in) {
    const oi__op_sig *x = &in[0], *pos = &in[1];
    if (x->ndim < 2)
        return oi__fail(OI_ERROR_VALIDATION, "rope: x must have rank >= 2 ([..., seq, dim]), got rank %d", x->ndim);
    int seq_axis = 0;
    if (oi__nn_axis(k, "seq_axis", x->ndim, &seq_axis) != OI_OK)
        return OI_ERROR_VALIDATION;
    if (seq_axis == x->ndim - 1)
        return oi__fail(OI_ERROR_VALIDATION, "rope: seq_axis must not be the last axis (the rotated dim)");
    int64_t dim = x->shape[x->ndim - 1], rot = oi__op_param_i64(k, "rotary_dim");
    if (rot == 0)
        rot = dim;
    if (rot < 2 || rot > dim || rot % 2 != 0)
        return oi__fail(OI_ERROR_VALIDATION, "rope: the rotated size %lld must be even and in [2, %lld] (rotary_dim, "
                        "or the last dim of x)", (long long)rot, (long long)dim);
    double theta = oi__op_param_f64(k, "theta");
    if (!(theta > 0.0) || isinf(theta))
        return oi__fail(OI_ERROR_VALIDATION, "rope: theta must be finite and > 0, got %g", theta);
    if (pos->dtype != OI_DTYPE_I32 && pos->dtype != OI_DTYPE_I64)
        return oi__fail(OI_ERROR_VALIDATION, "rope: positions must be i32 or i64, got %s",
                        oi_dtype_name(pos->dtype) ? oi_dtype_name(pos->dtype) : "?");
    int64_t seq = x->shape[seq_axis];
    bool flat = pos->ndim == 1 && pos->shape[0] == seq;
    bool batched = pos->ndim == 2 && seq_axis > 0 && pos->shape[0] == x->shape[0] && pos->shape[1] == seq;
    if (!flat && !batched) {
        char want[96];
        snprintf(want, sizeof want, "expected [%lld] or [%lld, %lld] (seq_axis %d)", (long long)seq,
                 (long long)x->shape[0], (long long)seq, seq_axis);
        return oi__nn_bad_shape("rope", "positions", pos, want);
    }
    return OI_OK;
}

/* attention: q [B, Hq, S, D], k [B, Hkv, T, D], v [B, Hkv, T, Dv], mask
 * broadcastable to [B, Hq, S, T] -> [B, Hq, S, Dv]. */
static oi_status oi__nn_infer_attention(const oi__op_sig *in, size_t n_in, oi__op_sig *out) {
    static const char *const names[] = {"q", "k", "v", "mask"};
    for (int i = 0; i < 3; i++) {
        if (in[i].ndim != 4)
            return oi__nn_bad_shape("attention", names[i], &in[i], "expected rank 4 ([batch, heads, seq, head_dim])");
        if (in[i].dtype != in[0].dtype)
            return oi__fail(OI_ERROR_VALIDATION, "attention: %s is %s but q is %s", names[i],
                            oi_dtype_name(in[i].dtype) ? oi_dtype_name(in[i].dtype) : "?", oi_dtype_name(in[0].dtype));
    }
    const int64_t *q = in[0].shape, *kk = in[1].shape, *v = in[2].shape;
    if (kk[0] != q[0] || v[0] != q[0])
        return oi__fail(OI_ERROR_VALIDATION, "attention: batch sizes differ (q %lld, k %lld, v %lld)", (long long)q[0],
                        (long long)kk[0], (long long)v[0]);
    if (kk[1] != v[1] || kk[1] < 1 || q[1] % kk[1] != 0)
        return oi__fail(OI_ERROR_VALIDATION,
                        "attention: q has %lld heads, k %lld and v %lld (k and v need the same number, which divides q's)",
                        (long long)q[1], (long long)kk[1], (long long)v[1]);
    if (kk[3] != q[3])
        return oi__fail(OI_ERROR_VALIDATION, "attention: q and k head sizes differ (%lld vs %lld)", (long long)q[3],
                        (long long)kk[3]);
    if (v[2] != kk[2])
        return oi__fail(OI_ERROR_VALIDATION, "attention: k has %lld positions but v has %lld", (long long)kk[2],
                        (long long)v[2]);
    int64_t scores[4] = {q[0], q[1], q[2], kk[2]};
    if (n_in == 4) {
        if (in[3].dtype != in[0].dtype && in[3].dtype != OI_DTYPE_BOOL)
            return oi__fail(OI_ERROR_VALIDATION, "attention: mask must be %s (added) or bool (true keeps), got %s",
                            oi_dtype_name(in[0].dtype), oi_dtype_name(in[3].dtype) ? oi_dtype_name(in[3].dtype) : "?");
        if (!oi__nn_broadcasts_to(&in[3], 4, scores)) {
            char want[300], dims[128];
            oi__op_shape_text(4, scores, dims, sizeof dims);
            snprintf(want, sizeof want, "which does not broadcast to the scores %s", dims);
            return oi__nn_bad_shape("attention", "mask", &in[3], want);
        }
    }
    out->ndim = 4;
    out->shape[3] = v[3];
    return OI_OK;
}

static oi_status oi__nn_infer_top_k(const oi__kernel_args *k, const oi__op_sig *in, oi__op_sig *out) {
    int axis = 0;
    if (oi__nn_axis(k, "axis", in[0].ndim, &axis) != OI_OK)
        return OI_ERROR_VALIDATION;
    int64_t kk = oi__op_param_i64(k, "k");
    if (kk < 0 || kk > in[0].shape[axis])
        return oi__fail(OI_ERROR_VALIDATION, "%s: k = %lld is outside [0, %lld] (the size of axis %d)",
                        oi_op_name(k->op), (long long)kk, (long long)in[0].shape[axis], axis);
    out->shape[axis] = kk;
    return OI_OK;
}

static oi_status oi__k_nn_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out) {
    int axis = 0;
    out->ndim = in[0].ndim;
    memcpy(out->shape, in[0].shape, sizeof out->shape);
    switch (k->op) {
    case OI_OP_softmax: case OI_OP_log_softmax: return oi__nn_axis(k, "axis", in[0].ndim, &axis);
    case OI_OP_layer_norm: case OI_OP_rms_norm: return oi__nn_infer_norm(k, in, n_in);
    case OI_OP_batch_norm: case OI_OP_group_norm: return oi__nn_infer_channels(k, in, n_in);
    case OI_OP_rope: return oi__nn_infer_rope(k, in);
    case OI_OP_attention: return oi__nn_infer_attention(in, n_in, out);
    case OI_OP_top_k: case OI_OP_top_k_indices: return oi__nn_infer_top_k(k, in, out);
    default: return oi__fail(OI_ERROR_UNSUPPORTED, "%s: not an nn op", oi_op_name(k->op));
    }
}

/* ------------------------------------------------------------------ */
/* softmax, log_softmax                                                */
/* ------------------------------------------------------------------ */
OI__MATH_INLINE void oi__row_softmax_f32_body(const oi__rows *r, int64_t lane, const float *x, float *y, int64_t n) {
    (void)lane;
    oi__softmax_body(x, y, n, r->op == OI_OP_log_softmax);
}
OI__ISA_CLONES(oi__row_softmax_f32, (const oi__rows *r, int64_t lane, const float *x, float *y, int64_t n), (r, lane, x, y, n))

static void oi__row_softmax_f64(const oi__rows *r, int64_t lane, const double *x, double *y, int64_t n) {
    (void)lane;
    oi__softmax_f64(x, y, n, r->op == OI_OP_log_softmax);
}

static oi_status oi__nn_softmax(const oi__kernel_args *k) {
    oi__rows r;
    int axis = 0;
    if (oi__nn_axis(k, "axis", k->in[0]->ndim, &axis) != OI_OK)
        return OI_ERROR_VALIDATION;
    oi__rows_start(&r, k, OI__ISA_PICK(oi__row_softmax_f32), oi__row_softmax_f64);
    return oi__rows_over(&r, axis, axis + 1);
}

/* ------------------------------------------------------------------ */
/* layer_norm, rms_norm                                                */
/* ------------------------------------------------------------------ */
/* y = (x - mean) / sqrt(var + eps) * scale + bias over the lane (rms_norm:
 * mean 0 and no bias: x / sqrt(mean(x^2) + eps) * scale). */
/* y = (x - mean) * inv * scale + bias (bias may be NULL) in blocks whose
 * scale and bias are copied whole, so the loads stay vector loads. */
OI__MATH_INLINE void oi__norm_apply(const float *x, float *y, int64_t n, float mean, float inv, const float *scale,
                                    const float *bias) {
    int64_t i = 0;
    for (; i + OI__MATH_BLOCK <= n; i += OI__MATH_BLOCK) {
        float b[OI__MATH_BLOCK], sc[OI__MATH_BLOCK], bi[OI__MATH_BLOCK];
        memcpy(b, x + i, sizeof b);
        memcpy(sc, scale + i, sizeof sc);
        if (bias) {
            memcpy(bi, bias + i, sizeof bi);
            for (int j = 0; j < OI__MATH_BLOCK; j++)
                b[j] = (b[j] - mean) * inv * sc[j] + bi[j];
        } else {
            for (int j = 0; j < OI__MATH_BLOCK; j++)
                b[j] = (b[j] - mean) * inv * sc[j];
        }
        memcpy(y + i, b, sizeof b);
    }
    for (; i < n; i++)
        y[i] = bias ? (x[i] - mean) * inv * scale[i] + bias[i] : (x[i] - mean) * inv * scale[i];
}

OI__MATH_INLINE void oi__row_norm_f32_body(const oi__rows *r, int64_t lane, const float *x, float *y, int64_t n) {
    (void)lane;
    const float *scale = (const float *)r->aux[0], *bias = (const float *)r->aux[1];
    float mean = r->op == OI_OP_rms_norm ? 0.0f : (float)(oi__f32_sum_pow(x, n, 0.0f, 1) / (double)n);
    float inv = (float)(1.0 / sqrt(oi__f32_sum_pow(x, n, mean, 2) / (double)n + r->eps));
    oi__norm_apply(x, y, n, mean, inv, scale, bias);
}
static void oi__row_norm_f32_portable(const oi__rows *r, int64_t lane, const float *x, float *y, int64_t n) {
    oi__row_norm_f32_body(r, lane, x, y, n);
}

#if OI__GEMM_X86
/* The same row in intrinsics: the statistics sweeps (sum; sum of squares
 * about the mean) keep two f32 accumulators, flushed to double every
 * OI__NN_CHUNK elements, and prefetch OI__VEXP_AHEAD bytes ahead as
 * softmax's max does (the first sweep is the one that reads memory; the
 * row then stays in L1 for the second and for the apply sweep, which
 * rounds (x - mean) * inv and then fuses * scale + bias). The first sweep
 * also prefetches the row of y (when y is not NULL): the apply sweep's
 * stores then hit the cache instead of each waiting for its line
 * (layer_norm of 4096 x 4096 on one thread: 7.2 -> 6.2 ms here; softmax,
 * whose stores sit among the e^ arithmetic, got slower with it). */
OI__TARGET_AVX512 static double oi__norm_sum_avx512(const float *x, const float *y, int64_t n, float shift, bool square) {
    const __m512 s = _mm512_set1_ps(shift);
    double total = 0.0;
    for (int64_t c = 0; c < n; c += OI__NN_CHUNK) {
        int64_t end = n - c < OI__NN_CHUNK ? n : c + OI__NN_CHUNK, i = c;
        __m512 a0 = _mm512_setzero_ps(), a1 = a0;
        for (; i + 32 <= end; i += 32) {
            oi__vexp_prefetch((uintptr_t)(x + i) + OI__VEXP_AHEAD);
            oi__vexp_prefetch((uintptr_t)(x + i) + OI__VEXP_AHEAD + 64);
            if (y) {
                oi__vexp_prefetch((uintptr_t)(y + i));
                oi__vexp_prefetch((uintptr_t)(y + i) + 64);
            }
            __m512 d0 = _mm512_sub_ps(_mm512_loadu_ps(x + i), s), d1 = _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), s);
            a0 = square ? _mm512_fmadd_ps(d0, d0, a0) : _mm512_add_ps(a0, d0);
            a1 = square ? _mm512_fmadd_ps(d1, d1, a1) : _mm512_add_ps(a1, d1);
        }
        for (; i < end; i += 16) { /* masked: lanes past the end add nothing */
            __mmask16 m = oi__vexp_mask16(i, end);
            __m512 d = _mm512_maskz_sub_ps(m, _mm512_maskz_loadu_ps(m, x + i), s);
            a0 = square ? _mm512_fmadd_ps(d, d, a0) : _mm512_add_ps(a0, d);
        }
        float lanes[16];
        _mm512_storeu_ps(lanes, _mm512_add_ps(a0, a1));
        total += oi__vexp_lanes_sum(lanes, 16);
    }
    return total;
}

OI__TARGET_AVX512 static void oi__norm_apply_avx512(const float *x, float *y, int64_t n, float mean, float inv,
                                                    const float *scale, const float *bias) {
    const __m512 mu = _mm512_set1_ps(mean), k = _mm512_set1_ps(inv);
    for (int64_t i = 0; i < n; i += 16) {
        __mmask16 m = oi__vexp_mask16(i, n);
        bool full = m == (__mmask16)0xFFFF; /* plain stores where we can (see OI__VEXP_MAP16) */
        __m512 v = _mm512_mul_ps(_mm512_sub_ps(full ? _mm512_loadu_ps(x + i) : _mm512_maskz_loadu_ps(m, x + i), mu), k);
        __m512 sc = full ? _mm512_loadu_ps(scale + i) : _mm512_maskz_loadu_ps(m, scale + i);
        if (bias)
            v = _mm512_fmadd_ps(v, sc, full ? _mm512_loadu_ps(bias + i) : _mm512_maskz_loadu_ps(m, bias + i));
        else
            v = _mm512_mul_ps(v, sc);
        if (full)
            _mm512_storeu_ps(y + i, v);
        else
            _mm512_mask_storeu_ps(y + i, m, v);
    }
}

OI__TARGET_AVX512 static void oi__row_norm_f32_avx512(const oi__rows *r, int64_t lane, const float *x, float *y,
                                                      int64_t n) {
    (void)lane;
    bool rms = r->op == OI_OP_rms_norm; /* the first sweep also prefetches y (see above) */
    float mean = rms ? 0.0f : (float)(oi__norm_sum_avx512(x, y, n, 0.0f, false) / (double)n);
    float inv = (float)(1.0 / sqrt(oi__norm_sum_avx512(x, rms ? y : NULL, n, mean, true) / (double)n + r->eps));
    oi__norm_apply_avx512(x, y, n, mean, inv, (const float *)r->aux[0], (const float *)r->aux[1]);
}

OI__TARGET_AVX2 static double oi__norm_sum_avx2(const float *x, const float *y, int64_t n, float shift, bool square) {
    const __m256 s = _mm256_set1_ps(shift);
    double total = 0.0;
    for (int64_t c = 0; c < n; c += OI__NN_CHUNK) {
        int64_t end = n - c < OI__NN_CHUNK ? n : c + OI__NN_CHUNK, i = c;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;
        for (; i + 16 <= end; i += 16) {
            oi__vexp_prefetch((uintptr_t)(x + i) + OI__VEXP_AHEAD);
            if (y)
                oi__vexp_prefetch((uintptr_t)(y + i));
            __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), s), d1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), s);
            a0 = square ? _mm256_fmadd_ps(d0, d0, a0) : _mm256_add_ps(a0, d0);
            a1 = square ? _mm256_fmadd_ps(d1, d1, a1) : _mm256_add_ps(a1, d1);
        }
        for (; i < end; i += 8) {
            __m256i m = oi__vexp_mask8(i, end);
            __m256 d = _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), s), _mm256_castsi256_ps(m));
            a0 = square ? _mm256_fmadd_ps(d, d, a0) : _mm256_add_ps(a0, d);
        }
        float lanes[8];
        _mm256_storeu_ps(lanes, _mm256_add_ps(a0, a1));
        total += oi__vexp_lanes_sum(lanes, 8);
    }
    return total;
}

OI__TARGET_AVX2 static void oi__norm_apply_avx2(const float *x, float *y, int64_t n, float mean, float inv,
                                                const float *scale, const float *bias) {
    const __m256 mu = _mm256_set1_ps(mean), k = _mm256_set1_ps(inv);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), mu), k);
        v = bias ? _mm256_fmadd_ps(v, _mm256_loadu_ps(scale + i), _mm256_loadu_ps(bias + i))
                 : _mm256_mul_ps(v, _mm256_loadu_ps(scale + i));
        _mm256_storeu_ps(y + i, v);
    }
    if (i < n) {
        __m256i m = oi__vexp_mask8(i, n);
        __m256 v = _mm256_mul_ps(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), mu), k);
        v = bias ? _mm256_fmadd_ps(v, _mm256_maskload_ps(scale + i, m), _mm256_maskload_ps(bias + i, m))
                 : _mm256_mul_ps(v, _mm256_maskload_ps(scale + i, m));
        _mm256_maskstore_ps(y + i, m, v);
    }
}

OI__TARGET_AVX2 static void oi__row_norm_f32_avx2(const oi__rows *r, int64_t lane, const float *x, float *y,
                                                  int64_t n) {
    (void)lane;
    bool rms = r->op == OI_OP_rms_norm; /* the first sweep also prefetches y (see above) */
    float mean = rms ? 0.0f : (float)(oi__norm_sum_avx2(x, y, n, 0.0f, false) / (double)n);
    float inv = (float)(1.0 / sqrt(oi__norm_sum_avx2(x, rms ? y : NULL, n, mean, true) / (double)n + r->eps));
    oi__norm_apply_avx2(x, y, n, mean, inv, (const float *)r->aux[0], (const float *)r->aux[1]);
}
#endif

static oi__row_f32_fn oi__row_norm_f32_pick(void) {
#if OI__GEMM_X86
    switch (oi__gemm_active_isa()) {
    case OI__GEMM_ISA_AVX512: return oi__row_norm_f32_avx512;
    case OI__GEMM_ISA_AVX2: return oi__row_norm_f32_avx2;
    default: break;
    }
#endif
    return oi__row_norm_f32_portable;
}

static void oi__row_norm_f64(const oi__rows *r, int64_t lane, const double *x, double *y, int64_t n) {
    (void)lane;
    const double *scale = (const double *)r->aux[0], *bias = (const double *)r->aux[1];
    double mean = 0.0, sq = 0.0;
    if (r->op != OI_OP_rms_norm) {
        for (int64_t i = 0; i < n; i++)
            mean += x[i];
        mean /= (double)n;
    }
    for (int64_t i = 0; i < n; i++)
        sq += (x[i] - mean) * (x[i] - mean);
    double inv = 1.0 / sqrt(sq / (double)n + r->eps);
    for (int64_t i = 0; i < n; i++)
        y[i] = (x[i] - mean) * inv * scale[i] + (bias ? bias[i] : 0.0);
}

static oi_status oi__nn_norm(const oi__kernel_args *k) {
    oi__rows r;
    int axis = 0;
    if (oi__nn_axis(k, "axis", k->in[0]->ndim, &axis) != OI_OK)
        return OI_ERROR_VALIDATION;
    oi__rows_start(&r, k, oi__row_norm_f32_pick(), oi__row_norm_f64);
    r.eps = oi__op_param_f64(k, "epsilon");
    const oi__tensor *x = k->in[0];
    for (size_t i = 1; i < k->n_in; i++) {
        r.aux[i - 1] = oi__nn_load_dense(k->in[i], r.wide, x->ndim - axis, x->shape + axis);
        if (!r.aux[i - 1]) {
            oi__rows_free(&r);
            return OI_ERROR_OUT_OF_MEMORY;
        }
    }
    return oi__rows_over(&r, axis, x->ndim);
}

/* ------------------------------------------------------------------ */
/* batch_norm, group_norm                                              */
/* ------------------------------------------------------------------ */
/* batch_norm: lane (n, c) is the spatial block of channel c:
 * y = (x - mean[c]) * (scale[c] / sqrt(var[c] + eps)) + bias[c]. */
OI__MATH_INLINE void oi__row_batch_norm_f32_body(const oi__rows *r, int64_t lane, const float *x, float *y, int64_t n) {
    int64_t c = lane % r->channels;
    float mean = ((const float *)r->aux[0])[c], a = ((const float *)r->aux[1])[c], b = ((const float *)r->aux[2])[c];
    OI__MAP(x, y, n, (v - mean) * a + b);
}
OI__ISA_CLONES(oi__row_batch_norm_f32, (const oi__rows *r, int64_t lane, const float *x, float *y, int64_t n), (r, lane, x, y, n))

static void oi__row_batch_norm_f64(const oi__rows *r, int64_t lane, const double *x, double *y, int64_t n) {
    int64_t c = lane % r->channels;
    double mean = ((const double *)r->aux[0])[c], a = ((const double *)r->aux[1])[c], b = ((const double *)r->aux[2])[c];
    for (int64_t i = 0; i < n; i++)
        y[i] = (x[i] - mean) * a + b;
}

/* Per-channel mean, multiplier and offset (in double, then typed). */
static oi_status oi__nn_batch_norm(const oi__kernel_args *k) {
    oi__rows r;
    oi__rows_start(&r, k, OI__ISA_PICK(oi__row_batch_norm_f32), oi__row_batch_norm_f64);
    const oi__tensor *x = k->in[0];
    int64_t c = x->shape[1];
    double eps = oi__op_param_f64(k, "epsilon");
    r.channels = c;
    size_t es = r.wide ? sizeof(double) : sizeof(float);
    for (int i = 0; i < 3; i++)
        r.aux[i] = oi__malloc(es * (size_t)(c ? c : 1));
    if (!r.aux[0] || !r.aux[1] || !r.aux[2]) {
        oi__rows_free(&r);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    for (int64_t ch = 0; ch < c; ch++) {
        double v[4]; /* scale, bias, mean, var */
        for (int i = 0; i < 4; i++) {
            const oi__tensor *t = k->in[i + 1];
            v[i] = oi__load_f64(t->dtype, oi__op_cdata(t), t->offset + ch * t->strides[0]);
        }
        double a = v[0] / sqrt(v[3] + eps), per[3] = {v[2], a, v[1]};
        for (int i = 0; i < 3; i++) {
            if (r.wide)
                ((double *)r.aux[i])[ch] = per[i];
            else
                ((float *)r.aux[i])[ch] = (float)per[i];
        }
    }
    return oi__rows_over(&r, 2, x->ndim);
}

/* group_norm: lane (n, g) holds the C/G channels of group g; statistics
 * over the lane, then channel c's scale and bias. */
OI__MATH_INLINE void oi__row_group_norm_f32_body(const oi__rows *r, int64_t lane, const float *x, float *y, int64_t n) {
    int64_t per_group = r->channels / r->groups, c0 = (lane % r->groups) * per_group, spatial = n / per_group;
    float mean = (float)(oi__f32_sum_pow(x, n, 0.0f, 1) / (double)n);
    float inv = (float)(1.0 / sqrt(oi__f32_sum_pow(x, n, mean, 2) / (double)n + r->eps));
    for (int64_t c = 0; c < per_group; c++) {
        float a = inv * ((const float *)r->aux[0])[c0 + c], b = ((const float *)r->aux[1])[c0 + c];
        const float *xc = x + c * spatial;
        float *yc = y + c * spatial;
        OI__MAP(xc, yc, spatial, (v - mean) * a + b);
    }
}
OI__ISA_CLONES(oi__row_group_norm_f32, (const oi__rows *r, int64_t lane, const float *x, float *y, int64_t n), (r, lane, x, y, n))

static void oi__row_group_norm_f64(const oi__rows *r, int64_t lane, const double *x, double *y, int64_t n) {
    int64_t per_group = r->channels / r->groups, c0 = (lane % r->groups) * per_group, spatial = n / per_group;
    double mean = 0.0, sq = 0.0;
    for (int64_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    for (int64_t i = 0; i < n; i++)
        sq += (x[i] - mean) * (x[i] - mean);
    double inv = 1.0 / sqrt(sq / (double)n + r->eps);
    for (int64_t i = 0; i < n; i++) {
        int64_t c = c0 + i / spatial;
        y[i] = (x[i] - mean) * inv * ((const double *)r->aux[0])[c] + ((const double *)r->aux[1])[c];
    }
}

static oi_status oi__nn_group_norm(const oi__kernel_args *k) {
    oi__rows r;
    oi__rows_start(&r, k, OI__ISA_PICK(oi__row_group_norm_f32), oi__row_group_norm_f64);
    const oi__tensor *x = k->in[0];
    r.eps = oi__op_param_f64(k, "epsilon");
    r.groups = oi__op_param_i64(k, "num_groups");
    r.channels = x->shape[1];
    for (int i = 0; i < 2; i++) {
        r.aux[i] = oi__nn_load_dense(k->in[i + 1], r.wide, 1, &r.channels);
        if (!r.aux[i]) {
            oi__rows_free(&r);
            return OI_ERROR_OUT_OF_MEMORY;
        }
    }
    if (r.channels == 0)
        return (oi__rows_free(&r), OI_OK);
    /* [N, C, rest...] seen as [N, G, C/G, rest...]: lanes are dims 2.. */
    int ndim = x->ndim + 1;
    int64_t shape[OI__NN_MAX_DIMS], xs[OI__NN_MAX_DIMS], ys[OI__NN_MAX_DIMS];
    int64_t per_group = r.channels / r.groups;
    shape[0] = x->shape[0], xs[0] = x->strides[0], ys[0] = k->out->strides[0];
    shape[1] = r.groups, xs[1] = per_group * x->strides[1], ys[1] = per_group * k->out->strides[1];
    for (int d = 1; d < x->ndim; d++) {
        shape[d + 1] = d == 1 ? per_group : x->shape[d];
        xs[d + 1] = x->strides[d];
        ys[d + 1] = k->out->strides[d];
    }
    bool mask[OI__NN_MAX_DIMS];
    oi__nn_dims(ndim, 2, ndim, mask);
    oi_status s = oi__rows_lanes(&r, ndim, shape, xs, ys, mask);
    if (s == OI_OK)
        s = oi__rows_run(&r);
    oi__rows_free(&r);
    return s;
}

/* ------------------------------------------------------------------ */
/* rope                                                                */
/* ------------------------------------------------------------------ */
/* Rotates the pairs of one lane (the last dim at one position) by
 * position * theta^(-2i / rot): half-split pairs (i, i + rot/2) as in
 * LLaMA/HF, or interleaved (2i, 2i + 1) as in GPT-J. Dims past `rot` pass
 * through. Computes in double for every dtype (angles need it), rounds
 * once. */
static void oi__row_rope(const oi__rows *r, int64_t lane, const double *x, double *y, int64_t n) {
    int64_t half = r->rot / 2;
    int64_t entry = (lane / r->seq_div) % r->seq_len;
    if (r->batched_positions)
        entry += (lane / r->batch_div) * r->seq_len;
    const double *c = r->cos_table + entry * half, *s = r->sin_table + entry * half;
    for (int64_t i = 0; i < half; i++) {
        int64_t a = r->interleaved ? 2 * i : i, b = r->interleaved ? 2 * i + 1 : i + half;
        double x1 = x[a], x2 = x[b];
        y[a] = OI_S_rope_first(x1, x2, c[i], s[i]);
        y[b] = OI_S_rope_second(x1, x2, c[i], s[i]);
    }
    for (int64_t i = r->rot; i < n; i++)
        y[i] = x[i];
}

/* A decode step ropes q and k of every layer at the same position: the
 * last position's table, kept per thread, serves them all. */
#define OI__ROPE_CACHE_HALF 256
typedef struct oi__rope_cache {
    double theta, position;
    int64_t rot;
    bool valid;
    double cos_table[OI__ROPE_CACHE_HALF], sin_table[OI__ROPE_CACHE_HALF];
} oi__rope_cache;
static OI__THREAD_LOCAL oi__rope_cache oi__rope_last;

/* One position, dense f32 x and y: the table from the cache (or made into
 * it) and the pairs rotated in place of the row machinery, with the same
 * double arithmetic as oi__row_rope. False: not that case. */
static bool oi__rope_one_position(const oi__kernel_args *k, int64_t rot, bool interleaved, double theta) {
    const oi__tensor *x = k->in[0], *pos = k->in[1];
    oi__tensor *out = k->out;
    int64_t half = rot / 2, dim = x->shape[x->ndim - 1];
    if (oi__shape_numel(pos->ndim, pos->shape) != 1 || half > OI__ROPE_CACHE_HALF || x->dtype != OI_DTYPE_F32 ||
        out->dtype != OI_DTYPE_F32 || !oi__tensor_is_contiguous(x) || !oi__tensor_is_contiguous(out))
        return false;
    double p = (double)oi__load_i64(pos->dtype, oi__op_cdata(pos), pos->offset);
    oi__rope_cache *c = &oi__rope_last;
    if (!c->valid || c->theta != theta || c->rot != rot || c->position != p) {
        for (int64_t i = 0; i < half; i++) {
            double angle = p * pow(theta, -2.0 * (double)i / (double)rot);
            c->cos_table[i] = cos(angle);
            c->sin_table[i] = sin(angle);
        }
        c->theta = theta, c->rot = rot, c->position = p, c->valid = true;
    }
    const float *xs = (const float *)oi__op_cdata(x) + x->offset;
    float *ys = (float *)oi__tensor_data(out) + out->offset;
    int64_t lanes = dim ? oi__shape_numel(x->ndim, x->shape) / dim : 0;
    for (int64_t l = 0; l < lanes; l++) {
        const float *xr = xs + l * dim;
        float *yr = ys + l * dim;
        for (int64_t i = 0; i < half; i++) {
            int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
            double x1 = xr[a], x2 = xr[b];
            yr[a] = (float)(x1 * c->cos_table[i] - x2 * c->sin_table[i]);
            yr[b] = (float)(x2 * c->cos_table[i] + x1 * c->sin_table[i]);
        }
        if (yr != xr)
            for (int64_t i = rot; i < dim; i++)
                yr[i] = xr[i];
    }
    return true;
}

static oi_status oi__nn_rope(const oi__kernel_args *k) {
    {
        int64_t dim = k->in[0]->shape[k->in[0]->ndim - 1];
        int64_t rot = oi__op_param_i64(k, "rotary_dim") ? oi__op_param_i64(k, "rotary_dim") : dim;
        if (oi__rope_one_position(k, rot, oi__op_param_bool(k, "interleaved"), oi__op_param_f64(k, "theta")))
            return OI_OK;
    }
    oi__rows r;
    oi__rows_start(&r, k, NULL, oi__row_rope);
    const oi__tensor *x = k->in[0], *pos = k->in[1];
    int seq_axis = 0;
    if (oi__nn_axis(k, "seq_axis", x->ndim, &seq_axis) != OI_OK)
        return OI_ERROR_VALIDATION;
    int64_t dim = x->shape[x->ndim - 1];
    r.rot = oi__op_param_i64(k, "rotary_dim") ? oi__op_param_i64(k, "rotary_dim") : dim;
    r.interleaved = oi__op_param_bool(k, "interleaved");
    r.seq_len = x->shape[seq_axis];
    r.batched_positions = pos->ndim == 2;
    /* lanes enumerate dims 0..ndim-2 row-major: the sequence index of lane
     * l is (l / seq_div) % seq_len, the batch index l / batch_div */
    r.seq_div = 1;
    for (int d = seq_axis + 1; d < x->ndim - 1; d++)
        r.seq_div *= x->shape[d];
    r.batch_div = 1;
    for (int d = 1; d < x->ndim - 1; d++)
        r.batch_div *= x->shape[d];
    int64_t entries = oi__shape_numel(pos->ndim, pos->shape), half = r.rot / 2;
    double theta = oi__op_param_f64(k, "theta");
    r.cos_table = (double *)oi__malloc(sizeof(double) * (size_t)(entries * half + 1));
    r.sin_table = (double *)oi__malloc(sizeof(double) * (size_t)(entries * half + 1));
    if (!r.cos_table || !r.sin_table) {
        oi__rows_free(&r);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    int64_t index[OI_MAX_DIMS] = {0}, at = pos->offset;
    for (int64_t e = 0; e < entries; e++) {
        double p = (double)oi__load_i64(pos->dtype, oi__op_cdata(pos), at);
        for (int64_t i = 0; i < half; i++) {
            double angle = OI_S_rope_angle(p, theta, i, r.rot);
            r.cos_table[e * half + i] = cos(angle);
            r.sin_table[e * half + i] = sin(angle);
        }
        for (int d = pos->ndim - 1; d >= 0; d--) { /* next position entry, row-major */
            at += pos->strides[d];
            if (++index[d] < pos->shape[d])
                break;
            at -= pos->strides[d] * pos->shape[d];
            index[d] = 0;
        }
    }
    return oi__rows_over(&r, x->ndim - 1, x->ndim);
}

/* ------------------------------------------------------------------ */
/* attention                                                           */
/* ------------------------------------------------------------------ */
/* ---- prefill: a block of f32 query rows of one head, direct ----
 * No packing and no allocation: K^T (the keys some row sees, below) is
 * copied once per call into scratch (8 x 8 transposes), then per tile of
 * query rows (8 with AVX-512, 6 with AVX2) the scores q K^T come from a
 * register tile that reads q in place and K^T's rows from L1 (each score
 * one FMA chain over the head dim in order, times the scale, as gemm.c's
 * micro-kernels compute it); one sweep adds the mask and takes the row's
 * max, one writes e^(s - max) (vexp.h's e^) and sums it (f32 lanes,
 * flushed to double every 256 keys, as the softmax kernel does); then p V
 * comes from the same register tile reading V's rows in place, each
 * output row times 1 / sum as it is stored, straight into the output.
 * Keys that no row of a tile sees (past the causal limit, past the last
 * key the mask keeps) are skipped. The synthesizer copies this region
 * into oi_gemm.h: the emitted attention calls these same functions
 * (oi_micro's attn). */
/* synth-embed begin (oi_gemm.h: attention's direct f32 path, after vexp.h's loops) */
/* One head's attention over a block of query rows: every operand f32 with
 * unit stride along its last dim. */
typedef struct oi__attn_f32 {
    const float *q, *k, *v;           /* the block's first query row; the head's first key and value rows */
    float *out;                       /* the block's first output row */
    int64_t q_rs, k_rs, v_rs, out_rs; /* row strides, in floats */
    int64_t rows, kv_seq, dim, v_dim; /* dim and v_dim: multiples of 8; kv_seq >= 1 */
    float scale;
    const void *mask; /* NULL, or the mask at the block's first row: */
    bool mask_f32;    /* f32 (added), or bool (one byte a value, nonzero keeps) */
    int64_t mask_rs, mask_ks; /* the mask's strides per query row and per key (0: broadcast) */
    bool causal;
    int64_t causal_last; /* causal: query row r of the block sees keys 0 .. causal_last + r */
    float *kt;     /* scratch, 64-byte aligned: dim x oi__attn_kv_pad(kv_seq) floats */
    float *scores; /* scratch, 64-byte aligned: 8 x oi__attn_kv_pad(kv_seq) floats */
} oi__attn_f32;

/* K^T's row length: the keys rounded up to whole 16-lane vectors. */
static inline int64_t oi__attn_kv_pad(int64_t kv_seq) { return (kv_seq + 15) / 16 * 16; }

/* The scratch floats oi__attn_f32 needs (kt, then scores). */
static inline int64_t oi__attn_scratch_floats(int64_t kv_seq, int64_t dim) {
    return (dim + 8) * oi__attn_kv_pad(kv_seq);
}

#if OI__GEMM_X86
#define OI__ATTN_ROWS6(X, ...) \
    X(0, __VA_ARGS__) X(1, __VA_ARGS__) X(2, __VA_ARGS__) X(3, __VA_ARGS__) X(4, __VA_ARGS__) X(5, __VA_ARGS__)
#define OI__ATTN_ROWS8(X, ...) OI__ATTN_ROWS6(X, __VA_ARGS__) X(6, __VA_ARGS__) X(7, __VA_ARGS__)
/* Keys per partial sum of e^ (flushed to double), as OI__VEXP_CHUNK. */
#define OI__ATTN_ESUM 256

/* kt[d * pad + t] = key t's value d for the first n keys, then 0 up to n
 * rounded up to 16 (those scores are computed and never read). 8 x 8
 * blocks through registers. */
OI__TARGET_AVX2 static void oi__attn_kt(const float *k, int64_t k_rs, int64_t n, int64_t dim, int64_t pad, float *kt) {
    int64_t t = 0;
    for (; t + 8 <= n; t += 8)
        for (int64_t d = 0; d < dim; d += 8) {
            const float *src = k + t * k_rs + d;
            __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + k_rs);
            __m256 r2 = _mm256_loadu_ps(src + 2 * k_rs), r3 = _mm256_loadu_ps(src + 3 * k_rs);
            __m256 r4 = _mm256_loadu_ps(src + 4 * k_rs), r5 = _mm256_loadu_ps(src + 5 * k_rs);
            __m256 r6 = _mm256_loadu_ps(src + 6 * k_rs), r7 = _mm256_loadu_ps(src + 7 * k_rs);
            __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
            __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
            __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
            __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *dst = kt + d * pad + t; /* values d .. d + 7 of the 8 keys: 8 rows of kt */
            _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(dst + pad, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(dst + 2 * pad, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(dst + 3 * pad, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(dst + 4 * pad, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(dst + 5 * pad, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(dst + 6 * pad, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(dst + 7 * pad, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
    for (; t < n; t++)
        for (int64_t d = 0; d < dim; d++)
            kt[d * pad + t] = k[t * k_rs + d];
    for (int64_t d = 0; d < dim; d++)
        for (int64_t j = n; j < oi__attn_kv_pad(n); j++)
            kt[d * pad + j] = 0.0f;
}

/* Row r's mask on its first n scores where the vector sweeps do not add it
 * (a mask strided along the keys), as nn.c's oi__attn_row adds it: an f32
 * mask added, a bool one 0 where it keeps and -inf where not. */
static inline void oi__attn_mask_strided(const oi__attn_f32 *a, int64_t r, float *s, int64_t n) {
    const int64_t ks = a->mask_ks;
    if (!a->mask || ks == 1)
        return;
    for (int64_t j = 0; j < n; j++)
        if (a->mask_f32)
            s[j] += ((const float *)a->mask)[r * a->mask_rs + j * ks];
        else
            s[j] += ((const unsigned char *)a->mask)[r * a->mask_rs + j * ks] ? 0.0f : -INFINITY;
}

/* Whether the mask keeps key j of row r (bool: nonzero; f32: not -inf). */
static inline bool oi__attn_kept(const oi__attn_f32 *a, int64_t r, int64_t j) {
    int64_t at = r * a->mask_rs + j * a->mask_ks;
    return a->mask_f32 ? ((const float *)a->mask)[at] != -INFINITY : ((const unsigned char *)a->mask)[at] != 0;
}

/* The keys that query rows r0 .. r0 + h - 1 of the block may see: the
 * first `limit` keys (kv_seq, or the block's own count for a tile of it),
 * less the keys past the causal limit and past the last key the mask keeps
 * (padding), in every row of them (0 when none sees a key). Those keys'
 * weights are e^-inf = 0: they are neither scored nor summed. */
static inline int64_t oi__attn_seen(const oi__attn_f32 *a, int64_t r0, int64_t h, int64_t limit) {
    int64_t seen = limit;
    if (a->causal) {
        int64_t last = a->causal_last + r0 + h - 1; /* the tile's last row's last key */
        seen = last < 0 ? 0 : last + 1 < seen ? last + 1 : seen;
    }
    if (!a->mask)
        return seen;
    int64_t kept = 0;
    for (int64_t r = r0; r < r0 + (a->mask_rs ? h : 1) && kept < seen; r++) {
        int64_t j = seen;
        while (j > kept && !oi__attn_kept(a, r, j - 1))
            j--;
        kept = j;
    }
    return kept;
}

/* Row r's last visible key (the causal limit; past the row without it). */
static inline int64_t oi__attn_last(const oi__attn_f32 *a, int64_t r) {
    return a->causal ? a->causal_last + r : a->kv_seq;
}

/* Row r's mask with unit key stride, or NULL (none, or strided). */
static inline const float *oi__attn_mask_f32(const oi__attn_f32 *a, int64_t r) {
    return a->mask && a->mask_ks == 1 && a->mask_f32 ? (const float *)a->mask + r * a->mask_rs : NULL;
}

static inline const unsigned char *oi__attn_mask_bool(const oi__attn_f32 *a, int64_t r) {
    return a->mask && a->mask_ks == 1 && !a->mask_f32 ? (const unsigned char *)a->mask + r * a->mask_rs : NULL;
}

/* ---- Each ISA's vector primitives: W lanes (16 AVX-512, 8 AVX2) ----
 * Besides the intrinsics both name alike (P_loadu_ps, P_fmadd_ps, ...),
 * the kernels below use, suffixed with W: oi__attn_cols (the lanes of a
 * tile's columns c0 .. c0 + W - 1 below cols, c0 < cols, as a mask), oi__attn_loadc
 * and oi__attn_storec (through it), oi__attn_vmax, oi__attn_hmax,
 * oi__attn_hsum, oi__attn_mask, oi__attn_after, and vexp.h's oi__vexp. */

/* AVX-512 tiles mask off the columns past cols (a value tile of 8 or 24:
 * head sizes are multiples of 8). Whole tiles store unmasked: a masked
 * store stalls the loads of the same lines that follow. */
OI__TARGET_AVX512 static inline __attribute__((always_inline)) unsigned oi__attn_cols16(int64_t c0, int64_t cols) {
    return oi__vexp_mask16(c0, cols);
}

OI__TARGET_AVX512 static inline __attribute__((always_inline)) __m512 oi__attn_loadc16(unsigned m, const float *p) {
    return _mm512_maskz_loadu_ps((__mmask16)m, p);
}

OI__TARGET_AVX512 static inline __attribute__((always_inline)) void oi__attn_storec16(float *p, unsigned m, bool full,
                                                                                     __m512 v) {
    if (full)
        _mm512_storeu_ps(p, v);
    else
        _mm512_mask_storeu_ps(p, (__mmask16)m, v);
}

/* max(x, top): a NaN x leaves top (ignored, as vexp.h's max). */
OI__TARGET_AVX512 static inline __attribute__((always_inline)) __m512 oi__attn_vmax16(__m512 x, __m512 top) {
    return _mm512_mask_max_ps(top, OI__VEXP_ALL, x, top);
}

/* The largest and the sum of a vector's lanes (a tree of shuffles). */
OI__TARGET_AVX512 static inline __attribute__((always_inline)) float oi__attn_hmax16(__m512 v) {
    v = _mm512_mask_max_ps(v, OI__VEXP_ALL, v, _mm512_mask_shuffle_f32x4(v, OI__VEXP_ALL, v, v, 0x4E));
    v = _mm512_mask_max_ps(v, OI__VEXP_ALL, v, _mm512_mask_shuffle_f32x4(v, OI__VEXP_ALL, v, v, 0xB1));
    v = _mm512_mask_max_ps(v, OI__VEXP_ALL, v, _mm512_mask_permute_ps(v, OI__VEXP_ALL, v, 0x4E));
    v = _mm512_mask_max_ps(v, OI__VEXP_ALL, v, _mm512_mask_permute_ps(v, OI__VEXP_ALL, v, 0xB1));
    return _mm512_cvtss_f32(v);
}

OI__TARGET_AVX512 static inline __attribute__((always_inline)) float oi__attn_hsum16(__m512 v) {
    v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, OI__VEXP_ALL, v, v, 0x4E));
    v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, OI__VEXP_ALL, v, v, 0xB1));
    v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, OI__VEXP_ALL, v, 0x4E));
    v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, OI__VEXP_ALL, v, 0xB1));
    return _mm512_cvtss_f32(v);
}

/* Adds the mask values of the 16 keys at j to x, for the keys below n
 * (the others are read as 0 or dropped): f32 added, bool 0 where nonzero
 * and -inf where 0; the mask row has kv keys. */
OI__TARGET_AVX512 static inline __attribute__((always_inline)) __m512
oi__attn_mask16(__m512 x, const float *mf, const unsigned char *mb, int64_t j, int64_t n, int64_t kv) {
    if (mf)
        return _mm512_add_ps(x, _mm512_maskz_loadu_ps(oi__vexp_mask16(j, n), mf + j));
    if (!mb)
        return x;
    __mmask16 keep;
    if (j + 16 <= kv) {
        __m128i b16 = _mm_loadu_si128((const __m128i *)(const void *)(mb + j));
        __m512i bytes = _mm512_maskz_cvtepu8_epi32(OI__VEXP_ALL, b16); /* (maskz: no undefined source) */
        keep = _mm512_test_epi32_mask(bytes, bytes);
    } else { /* the row's end: bytes past it are not read */
        unsigned bits = 0;
        for (int64_t l = 0; l < 16 && j + l < n; l++)
            bits |= (unsigned)(mb[j + l] != 0) << l;
        keep = (__mmask16)bits;
    }
    return _mm512_add_ps(x, _mm512_mask_mov_ps(_mm512_set1_ps(-INFINITY), keep, _mm512_setzero_ps()));
}

/* The lanes of the 16 keys at j past key `last`: at -inf. */
OI__TARGET_AVX512 static inline __attribute__((always_inline)) __m512
oi__attn_after16(__m512 x, int64_t j, int64_t last) {
    if (last - j >= 15)
        return x;
    __mmask16 past = last < j ? OI__VEXP_ALL : (__mmask16) ~((1u << (last - j + 1)) - 1u);
    return _mm512_mask_mov_ps(x, past, _mm512_set1_ps(-INFINITY));
}

/* AVX2 tiles are whole vectors (keys in 16s, head sizes multiples of 8):
 * no column mask. */
OI__TARGET_AVX2 static inline __attribute__((always_inline)) unsigned oi__attn_cols8(int64_t c0, int64_t cols) {
    (void)c0, (void)cols;
    return 0u;
}

OI__TARGET_AVX2 static inline __attribute__((always_inline)) __m256 oi__attn_loadc8(unsigned m, const float *p) {
    (void)m;
    return _mm256_loadu_ps(p);
}

OI__TARGET_AVX2 static inline __attribute__((always_inline)) void oi__attn_storec8(float *p, unsigned m, bool full,
                                                                                  __m256 v) {
    (void)m, (void)full;
    _mm256_storeu_ps(p, v);
}

OI__TARGET_AVX2 static inline __attribute__((always_inline)) __m256 oi__attn_vmax8(__m256 x, __m256 top) {
    return _mm256_max_ps(x, top);
}

OI__TARGET_AVX2 static inline __attribute__((always_inline)) float oi__attn_hmax8(__m256 v) {
    __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_max_ss(x, _mm_movehdup_ps(x)));
}

OI__TARGET_AVX2 static inline __attribute__((always_inline)) float oi__attn_hsum8(__m256 v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
}

/* oi__attn_mask16 on 8 lanes. */
OI__TARGET_AVX2 static inline __attribute__((always_inline)) __m256
oi__attn_mask8(__m256 x, const float *mf, const unsigned char *mb, int64_t j, int64_t n, int64_t kv) {
    if (mf)
        return _mm256_add_ps(x, j + 8 <= n ? _mm256_loadu_ps(mf + j) : _mm256_maskload_ps(mf + j, oi__vexp_mask8(j, n)));
    if (!mb)
        return x;
    unsigned char eight[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    if (j + 8 <= kv)
        memcpy(eight, mb + j, 8);
    else /* the row's end: bytes past it are not read */
        for (int64_t l = 0; l < 8 && j + l < n; l++)
            eight[l] = mb[j + l];
    long long bits;
    memcpy(&bits, eight, 8);
    __m256i bytes = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(bits));
    __m256 dropped = _mm256_castsi256_ps(_mm256_cmpeq_epi32(bytes, _mm256_setzero_si256()));
    return _mm256_add_ps(x, _mm256_and_ps(dropped, _mm256_set1_ps(-INFINITY)));
}

/* The lanes of the 8 keys at j past key `last`: at -inf. */
OI__TARGET_AVX2 static inline __attribute__((always_inline)) __m256
oi__attn_after8(__m256 x, int64_t j, int64_t last) {
    if (last - j >= 7)
        return x;
    int64_t keep = last < j ? 0 : last - j + 1; /* lanes 0 .. keep - 1 stay */
    __m256 past = _mm256_castsi256_ps(
        _mm256_cmpgt_epi32(_mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 8), _mm256_set1_epi32((int)keep)));
    return _mm256_blendv_ps(x, _mm256_set1_ps(-INFINITY), past);
}

/* ---- The kernel, one body for both ISAs ----
 * OI__ATTN_KERNEL(ISA, TARGET, W, ROWS, V, P) defines oi__attn_f32_ISA on
 * vectors V of W lanes (intrinsics P_..._ps) and tiles of ROWS query rows
 * x 2W columns, 2 ROWS accumulators: AVX-512 8 x 32 (16 of the 32
 * registers), AVX2 + FMA 6 x 16 (12 of the 16). Its parts:
 *
 * oi__attn_tile_ISA(nv, k, a, lda, h, b, ldb, cols, c, ldc, alpha):
 * c[h x cols] (row stride ldc) = alpha[i] * a[h x k] b[k x cols] on row i:
 * row i of a at a + i * lda, step p of b at b + p * ldb; h <= ROWS,
 * cols <= nv W. Rows past h repeat row h - 1 and are not stored; columns
 * past cols are masked off (oi__attn_cols).
 *
 * oi__attn_maxW(a, r, s, n): row r of the block, its first n scores s (n:
 * oi__attn_seen's): plus its mask, the keys past its causal limit at
 * -inf; returns their max. Whole vectors up to n rounded up to W (the
 * scores' rows have room), the lanes past n at -inf, so e^ makes them 0:
 * no masked store, which would stall the loads of the same lines that
 * follow. The softmax is taken in two sweeps over a tile's rows (max, then
 * e^ and sum: oi__attn_esumW) so that the rows' latency chains (shuffles,
 * e^) overlap.
 *
 * oi__attn_esumW(s, n, max): e^(s - max) in place over n scores (rounded
 * up to W); returns their sum (NaN when the row sees no key, max -inf: as
 * numpy).
 *
 * oi__attn_f32_ISA(a): the block, ROWS query rows at a time: their scores
 * against the keys any of them sees, the softmax, then the weights times
 * V. Key tiles are 2W wide but for a last one of 16 (AVX-512). */
#define OI__ATTN_DECLARE(i, W, V, P) \
    const float *a##i = a + (i < h ? i : h - 1) * lda; \
    V c##i##0 = P##_setzero_ps(), c##i##1 = c##i##0;
#define OI__ATTN_FMA(i, W, V, P) \
    { \
        V ai = P##_set1_ps(a##i[p]); \
        c##i##0 = P##_fmadd_ps(ai, b0, c##i##0); \
        if (nv > 1) \
            c##i##1 = P##_fmadd_ps(ai, b1, c##i##1); \
    }
#define OI__ATTN_STORE(i, W, V, P) \
    if (i < h) { \
        float *ci = c + i * ldc; \
        const V va = P##_set1_ps(alpha[i]); \
        oi__attn_storec##W(ci, m0, full, P##_mul_ps(va, c##i##0)); \
        if (nv > 1) \
            oi__attn_storec##W(ci + W, m1, full, P##_mul_ps(va, c##i##1)); \
    }

#define OI__ATTN_KERNEL(ISA, TARGET, W, ROWS, V, P) \
    TARGET static inline __attribute__((always_inline)) void oi__attn_tile_##ISA( \
        int nv, int64_t k, const float *a, int64_t lda, int64_t h, const float *b, int64_t ldb, int64_t cols, \
        float *c, int64_t ldc, const float *alpha) { \
        const unsigned m0 = oi__attn_cols##W(0, cols), m1 = nv > 1 ? oi__attn_cols##W(W, cols) : 0u; \
        const bool full = cols == W * nv; \
        OI__ATTN_ROWS##ROWS(OI__ATTN_DECLARE, W, V, P) \
        for (int64_t p = 0; p < k; p++) { \
            const float *bp = b + p * ldb; \
            V b0 = oi__attn_loadc##W(m0, bp), b1 = nv > 1 ? oi__attn_loadc##W(m1, bp + W) : b0; \
            OI__ATTN_ROWS##ROWS(OI__ATTN_FMA, W, V, P) \
        } \
        OI__ATTN_ROWS##ROWS(OI__ATTN_STORE, W, V, P) \
    } \
    \
    TARGET static inline __attribute__((always_inline)) float oi__attn_max##W(const oi__attn_f32 *a, int64_t r, \
                                                                               float *s, int64_t n) { \
        const float *mf = oi__attn_mask_f32(a, r); \
        const unsigned char *mb = oi__attn_mask_bool(a, r); \
        const int64_t last = oi__attn_last(a, r) < n - 1 ? oi__attn_last(a, r) : n - 1; \
        oi__attn_mask_strided(a, r, s, n); \
        V top = P##_set1_ps(-INFINITY); \
        for (int64_t j = 0; j < n; j += W) { \
            V x = oi__attn_after##W(oi__attn_mask##W(P##_loadu_ps(s + j), mf, mb, j, n, a->kv_seq), j, last); \
            P##_storeu_ps(s + j, x); \
            top = oi__attn_vmax##W(x, top); \
        } \
        return oi__attn_hmax##W(top); \
    } \
    \
    TARGET static inline __attribute__((always_inline)) double oi__attn_esum##W(float *s, int64_t n, float max) { \
        const V shift = P##_set1_ps(max); \
        double total = 0.0; \
        for (int64_t c = 0; c < n; c += OI__ATTN_ESUM) { \
            const int64_t end = n - c < OI__ATTN_ESUM ? n : c + OI__ATTN_ESUM; \
            V acc = P##_setzero_ps(); \
            for (int64_t j = c; j < end; j += W) { \
                V e = oi__vexp##W(P##_sub_ps(P##_loadu_ps(s + j), shift)); \
                acc = P##_add_ps(acc, e); \
                P##_storeu_ps(s + j, e); \
            } \
            total += (double)oi__attn_hsum##W(acc); \
        } \
        return total; \
    } \
    \
    TARGET static void oi__attn_f32_##ISA(const oi__attn_f32 *a) { \
        const int64_t n = a->kv_seq, pad = oi__attn_kv_pad(n); \
        float scale[ROWS], inv[ROWS]; \
        for (int r = 0; r < ROWS; r++) \
            scale[r] = a->scale; \
        const int64_t block_seen = oi__attn_seen(a, 0, a->rows, n); /* the keys any row sees */ \
        oi__attn_kt(a->k, a->k_rs, block_seen, a->dim, pad, a->kt); \
        for (int64_t r0 = 0; r0 < a->rows; r0 += ROWS) { \
            const int64_t h = a->rows - r0 < ROWS ? a->rows - r0 : ROWS, seen = oi__attn_seen(a, r0, h, block_seen); \
            const int64_t seen_pad = oi__attn_kv_pad(seen); \
            const float *q = a->q + r0 * a->q_rs; \
            for (int64_t j = 0; j < seen_pad; j += 2 * W) /* seen_pad - j: a multiple of 16, 2W for AVX2 */ \
                if (W == 8 || seen_pad - j >= 2 * W) \
                    oi__attn_tile_##ISA(2, a->dim, q, a->q_rs, h, a->kt + j, pad, 2 * W, a->scores + j, pad, scale); \
                else \
                    oi__attn_tile_##ISA(1, a->dim, q, a->q_rs, h, a->kt + j, pad, W, a->scores + j, pad, scale); \
            float top[ROWS]; \
            double sum[ROWS]; \
            for (int64_t r = 0; r < h; r++) \
                top[r] = oi__attn_max##W(a, r0 + r, a->scores + r * pad, seen); \
            for (int64_t r = 0; r < h; r++) \
                sum[r] = oi__attn_esum##W(a->scores + r * pad, seen, top[r]); \
            for (int64_t r = 0; r < h; r++) /* the divisions after the sweeps: they overlap */ \
                inv[r] = (float)(1.0 / sum[r]); \
            float *o = a->out + r0 * a->out_rs; \
            for (int64_t c = 0; c < a->v_dim; c += 2 * W) { /* the keys past `seen` have weight 0 in every row */ \
                const int64_t cols = a->v_dim - c < 2 * W ? a->v_dim - c : 2 * W; \
                if (cols > W) \
                    oi__attn_tile_##ISA(2, seen, a->scores, pad, h, a->v + c, a->v_rs, cols, o + c, a->out_rs, inv); \
                else \
                    oi__attn_tile_##ISA(1, seen, a->scores, pad, h, a->v + c, a->v_rs, cols, o + c, a->out_rs, inv); \
            } \
        } \
    }

OI__ATTN_KERNEL(avx512, OI__TARGET_AVX512, 16, 8, __m512, _mm512)
OI__ATTN_KERNEL(avx2, OI__TARGET_AVX2, 8, 6, __m256, _mm256)
#endif /* OI__GEMM_X86 */
/* synth-embed end */

/* Query rows per task: scores are block x T. Every task packs its head's
 * K and V for the gemms, so a block as long as a typical sequence (BERT's
 * 128) packs them once per head; heads still give the pool enough tasks. */
#define OI__ATTN_BLOCK 128

typedef struct oi__attn {
    const oi__tensor *q, *k, *v, *mask;
    oi__tensor *out;
    int64_t batch, heads, kv_heads, seq, kv_seq, dim, v_dim;
    int64_t blocks_per_head;
    int64_t mask_strides[4];
    double scale;
    bool causal, wide;
    bool grouped; /* one query row a head, several heads a kv head: a task per kv head */
    oi__threadpool *gemm_pool; /* for the gemms when the tasks run serially */
    char *scratch;
    size_t scratch_bytes; /* per pool thread */
    oi_status *status;    /* per pool thread */
} oi__attn;

static oi_status oi__nn_gemm(bool wide, oi__threadpool *pool, bool trans_b, int64_t m, int64_t n, int64_t k,
                             double alpha, const void *a, int64_t lda, const void *b, int64_t ldb, void *c,
                             int64_t ldc) {
    if (wide)
        return oi__gemm_f64(pool, false, trans_b, m, n, k, alpha, (const double *)a, lda, (const double *)b, ldb, 0.0,
                            (double *)c, ldc);
    return oi__gemm_f32(pool, false, trans_b, m, n, k, (float)alpha, (const float *)a, lda, (const float *)b, ldb,
                        0.0f, (float *)c, ldc);
}

/* A rows x cols matrix of t at `base` (strides rs, cs) as the gemm wants
 * it: t's own memory when it has the compute dtype and unit column
 * stride, else a dense copy in buf. *ld gets the row stride. */
static const void *oi__nn_matrix(const oi__tensor *t, int64_t base, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                                 bool wide, void *buf, int64_t *ld) {
    oi_dtype compute = wide ? OI_DTYPE_F64 : OI_DTYPE_F32;
    const void *data = oi__op_cdata(t);
    if (t->dtype == compute && (cs == 1 || cols == 1) && (rs >= cols || rows == 1)) {
        *ld = rows == 1 ? cols : rs;
        return wide ? (const void *)((const double *)data + base) : (const void *)((const float *)data + base);
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            double v = oi__load_f64(t->dtype, data, base + r * rs + c * cs);
            if (wide)
                ((double *)buf)[r * cols + c] = v;
            else
                ((float *)buf)[r * cols + c] = (float)v;
        }
    *ld = cols;
    return buf;
}

/* Adds row `at` of the mask (stride `step` between keys) to n f32 scores:
 * bool and f32 masks, the common ones, read through typed pointers. */
static bool oi__attn_mask_row_f32(const oi__tensor *mask, int64_t at, int64_t step, float *row, int64_t n) {
    if (mask->dtype == OI_DTYPE_BOOL) {
        const uint8_t *m = (const uint8_t *)oi__op_cdata(mask) + at; /* one byte a value */
        for (int64_t j = 0; j < n; j++)
            row[j] += m[j * step] ? 0.0f : -INFINITY;
        return true;
    }
    if (mask->dtype == OI_DTYPE_F32) {
        const float *m = (const float *)oi__op_cdata(mask) + at;
        for (int64_t j = 0; j < n; j++)
            row[j] += m[j * step];
        return true;
    }
    return false;
}

/* Adds the mask and the causal limit to the scores of query row qi, then
 * takes the softmax. A row that sees no key becomes NaN, like numpy. */
static void oi__attn_row(const oi__attn *a, int64_t b, int64_t h, int64_t qi, void *row) {
    int64_t t_len = a->kv_seq;
    int64_t last = a->causal ? qi + (a->kv_seq - a->seq) : t_len - 1; /* last visible key */
    double *rd = (double *)row;
    float *rf = (float *)row;
    if (a->mask) {
        int64_t at = a->mask->offset + b * a->mask_strides[0] + h * a->mask_strides[1] + qi * a->mask_strides[2];
        bool is_bool = a->mask->dtype == OI_DTYPE_BOOL;
        if (a->wide || !oi__attn_mask_row_f32(a->mask, at, a->mask_strides[3], rf, t_len))
            for (int64_t j = 0; j < t_len; j++) {
                double m = oi__load_f64(a->mask->dtype, oi__op_cdata(a->mask), at + j * a->mask_strides[3]);
                if (is_bool)
                    m = m != 0.0 ? 0.0 : -INFINITY;
                if (a->wide)
                    rd[j] += m;
                else
                    rf[j] += (float)m;
            }
    }
    for (int64_t j = last + 1 < 0 ? 0 : last + 1; j < t_len; j++) {
        if (a->wide)
            rd[j] = -INFINITY;
        else
            rf[j] = -INFINITY;
    }
    if (a->wide)
        oi__softmax_f64(rd, rd, t_len, false);
    else
        OI__ISA_CALL(oi__softmax, (rf, rf, t_len, false));
}

/* One task: query rows [i0, i0 + rows) of head (b, h); or, grouped, the one
 * query row of every head that shares kv head hk (decoding with
 * grouped-query heads: the group's heads run back to back on one thread,
 * so K and V come from memory once for the group, not once per head). */
static void oi__attn_task(void *ctx, int task, int thread) {
    const oi__attn *a = (const oi__attn *)ctx;
    int64_t group = a->heads / a->kv_heads;
    int64_t b, h, hk, i0, rows, q_rs, out_rs;
    if (a->grouped) {
        b = task / a->kv_heads, hk = task % a->kv_heads, h = hk * group, i0 = 0, rows = group;
        q_rs = a->q->strides[1], out_rs = a->out->strides[1];
    } else {
        int64_t head = task / a->blocks_per_head;
        b = head / a->heads, h = head % a->heads, hk = h / group;
        i0 = (task % a->blocks_per_head) * OI__ATTN_BLOCK;
        rows = a->seq - i0 < OI__ATTN_BLOCK ? a->seq - i0 : OI__ATTN_BLOCK;
        q_rs = a->q->strides[2], out_rs = a->out->strides[2];
    }
    size_t es = a->wide ? sizeof(double) : sizeof(float);
    char *q_buf = a->scratch + (size_t)thread * a->scratch_bytes;
    char *k_buf = q_buf + es * (size_t)(rows * a->dim);
    char *v_buf = k_buf + es * (size_t)(a->kv_seq * a->dim);
    char *s_buf = v_buf + es * (size_t)(a->kv_seq * a->v_dim);
    char *o_buf = s_buf + es * (size_t)(rows * a->kv_seq);
    const oi__tensor *q = a->q, *k = a->k, *v = a->v;
    oi__tensor *out = a->out;
    int64_t ldq, ldk, ldv, ldo;
    const void *qm = oi__nn_matrix(q, q->offset + b * q->strides[0] + h * q->strides[1] + i0 * q->strides[2], rows,
                                   a->dim, q_rs, q->strides[3], a->wide, q_buf, &ldq);
    const void *km = oi__nn_matrix(k, k->offset + b * k->strides[0] + hk * k->strides[1], a->kv_seq, a->dim,
                                   k->strides[2], k->strides[3], a->wide, k_buf, &ldk);
    const void *vm = oi__nn_matrix(v, v->offset + b * v->strides[0] + hk * v->strides[1], a->kv_seq, a->v_dim,
                                   v->strides[2], v->strides[3], a->wide, v_buf, &ldv);
    /* grouped: each head's row alone, as when it is its own task (the
     * small-matrix kernels' summation order may depend on the row count),
     * one after another on this thread, so K and V come from the cache */
    int64_t step = a->grouped ? 1 : rows;
    oi_status s = OI_OK;
    for (int64_t r = 0; r < rows && s == OI_OK; r += step)
        s = oi__nn_gemm(a->wide, a->gemm_pool, true, step, a->kv_seq, a->dim, a->scale,
                        (const char *)qm + es * (size_t)(r * ldq), ldq, km, ldk, s_buf + es * (size_t)(r * a->kv_seq),
                        a->kv_seq);
    for (int64_t r = 0; r < rows && s == OI_OK; r++)
        oi__attn_row(a, b, a->grouped ? h + r : h, a->grouped ? 0 : i0 + r, s_buf + es * (size_t)(r * a->kv_seq));
    /* the output rows go straight into `out` when it can take them */
    int64_t out_base = out->offset + b * out->strides[0] + h * out->strides[1] + i0 * out->strides[2];
    oi_dtype compute = a->wide ? OI_DTYPE_F64 : OI_DTYPE_F32;
    bool direct = out->dtype == compute && (out->strides[3] == 1 || a->v_dim == 1) && (out_rs >= a->v_dim || rows == 1);
    void *o = direct ? (void *)((char *)oi__tensor_data(out) + es * (size_t)out_base) : (void *)o_buf;
    ldo = direct && rows > 1 ? out_rs : a->v_dim;
    for (int64_t r = 0; r < rows && s == OI_OK; r += step)
        s = oi__nn_gemm(a->wide, a->gemm_pool, false, step, a->v_dim, a->kv_seq, 1.0,
                        s_buf + es * (size_t)(r * a->kv_seq), a->kv_seq, vm, ldv,
                        (char *)o + es * (size_t)(r * ldo), ldo);
    for (int64_t r = 0; r < rows && !direct && s == OI_OK; r++)
        for (int64_t c = 0; c < a->v_dim; c++) {
            double val = a->wide ? ((double *)o_buf)[r * a->v_dim + c] : (double)((float *)o_buf)[r * a->v_dim + c];
            oi__store_f64(out->dtype, oi__tensor_data(out), out_base + r * out_rs + c * out->strides[3], val);
        }
    if (s != OI_OK)
        a->status[thread] = s;
}

/* ---- decoding: one f32 query row a head (a KV-cache step) ----
 * The keys are cut into chunks of OI__ATTN_CHUNK positions. A task takes
 * one kv head's chunk for every query head that shares it: the scores (the
 * chunk's K rows stay in L1 across the group), their max, e^(s - max) and
 * its sum, and the chunk's e^-weighted sum of V rows. The caller merges the
 * chunks in order, rescaling each by e^(max_c - max), so the result does
 * not depend on the thread count, and both cores stream the cache even
 * with fewer kv heads than threads (SmolLM2: 3). */
#define OI__ATTN_CHUNK 64

/* synth-embed begin (oi_gemm.h: attention's decode loops, for the emitted attention over a KV cache) */
/* How K and V hold their values: f32, or 16-bit values read as f32 where
 * they lie (f16 by F16C, bf16 as an f32's high half): exact, so a 16-bit
 * cache gives the scores and sums its values widened to f32 give. */
typedef enum oi__attn_elem { OI__ATTN_F32, OI__ATTN_F16, OI__ATTN_BF16 } oi__attn_elem;

#if OI__GEMM_X86
/* The sums of the 8 vectors a0 .. a7, lane p holding ap's. */
OI__TARGET_AVX2 static inline __attribute__((always_inline)) __m256 oi__attn_sum8(__m256 a0, __m256 a1, __m256 a2, __m256 a3,
                                                                              __m256 a4, __m256 a5, __m256 a6, __m256 a7) {
    __m256 h0 = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    __m256 h1 = _mm256_hadd_ps(_mm256_hadd_ps(a4, a5), _mm256_hadd_ps(a6, a7));
    return _mm256_add_ps(_mm256_permute2f128_ps(h0, h1, 0x20), _mm256_permute2f128_ps(h0, h1, 0x31));
}

OI__TARGET_AVX2 static inline __attribute__((always_inline)) float oi__attn_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

#define OI__TARGET_AVX2_F16C __attribute__((target("avx2,fma,f16c")))

/* The 8 values from value i of x (elem's type) as f32. */
OI__TARGET_AVX2_F16C static inline __attribute__((always_inline)) __m256 oi__attn_load8(oi__attn_elem e, const void *x,
                                                                                      int64_t i) {
    if (e == OI__ATTN_F32)
        return _mm256_loadu_ps((const float *)x + i);
    __m128i h = _mm_loadu_si128((const __m128i *)(const void *)((const uint16_t *)x + i));
    if (e == OI__ATTN_F16)
        return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

/* Applies X to each of 8 named accumulators (keys of a score block, vectors
 * of a value block): spelled out, as gemm.c's OI__ROWS6, so they live in
 * registers at -O2 too (an array of them went through the stack there,
 * 4-6x slower). */
#define OI__ATTN_ACC8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define OI__ATTN_ACC_ZERO(p) __m256 acc##p = _mm256_setzero_ps();

/* s[0..n) = scale * (q . K row j) for the n rows at k (row stride ks). */
OI__TARGET_AVX2_F16C static inline __attribute__((always_inline)) void
oi__attn_dec_scores_of(oi__attn_elem e, const float *q, const void *k, int64_t ks, int64_t n, int64_t dim, float scale,
                       float *s) {
    int64_t j = 0;
#define OI__ATTN_KEY_FMA(p) acc##p = _mm256_fmadd_ps(qv, oi__attn_load8(e, k, (j + p) * ks + i), acc##p);
    for (; j + 8 <= n; j += 8) {
        OI__ATTN_ACC8(OI__ATTN_ACC_ZERO)
        for (int64_t i = 0; i < dim; i += 8) {
            __m256 qv = _mm256_loadu_ps(q + i);
            OI__ATTN_ACC8(OI__ATTN_KEY_FMA)
        }
        __m256 sums = oi__attn_sum8(acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7);
        _mm256_storeu_ps(s + j, _mm256_mul_ps(sums, _mm256_set1_ps(scale)));
    }
#undef OI__ATTN_KEY_FMA
    for (; j < n; j++) {
        __m256 acc = _mm256_setzero_ps();
        for (int64_t i = 0; i < dim; i += 8)
            acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), oi__attn_load8(e, k, j * ks + i), acc);
        s[j] = oi__attn_hsum(acc) * scale;
    }
}

/* o[0..v_dim) = sum over j < n of p[j] * V row j (row stride vs). */
OI__TARGET_AVX2_F16C static inline __attribute__((always_inline)) void
oi__attn_dec_values_of(oi__attn_elem e, const float *p, const void *v, int64_t vs, int64_t n, int64_t v_dim, float *o) {
    int64_t c = 0;
#define OI__ATTN_VALUE_FMA(u) acc##u = _mm256_fmadd_ps(w, oi__attn_load8(e, v, j * vs + c + 8 * u), acc##u);
#define OI__ATTN_VALUE_STORE(u) _mm256_storeu_ps(o + c + 8 * u, acc##u);
    for (; c + 64 <= v_dim; c += 64) {
        OI__ATTN_ACC8(OI__ATTN_ACC_ZERO)
        for (int64_t j = 0; j < n; j++) {
            __m256 w = _mm256_broadcast_ss(p + j);
            OI__ATTN_ACC8(OI__ATTN_VALUE_FMA)
        }
        OI__ATTN_ACC8(OI__ATTN_VALUE_STORE)
    }
#undef OI__ATTN_VALUE_FMA
#undef OI__ATTN_VALUE_STORE
    for (; c < v_dim; c += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (int64_t j = 0; j < n; j++)
            acc = _mm256_fmadd_ps(_mm256_broadcast_ss(p + j), oi__attn_load8(e, v, j * vs + c), acc);
        _mm256_storeu_ps(o + c, acc);
    }
}

/* The two above for each kind of K and V (each call inlined for its own). */
OI__TARGET_AVX2_F16C static void oi__attn_dec_scores(oi__attn_elem e, const float *q, const void *k, int64_t ks,
                                                     int64_t n, int64_t dim, float scale, float *s) {
    if (e == OI__ATTN_F32)
        oi__attn_dec_scores_of(OI__ATTN_F32, q, k, ks, n, dim, scale, s);
    else if (e == OI__ATTN_F16)
        oi__attn_dec_scores_of(OI__ATTN_F16, q, k, ks, n, dim, scale, s);
    else
        oi__attn_dec_scores_of(OI__ATTN_BF16, q, k, ks, n, dim, scale, s);
}

OI__TARGET_AVX2_F16C static void oi__attn_dec_values(oi__attn_elem e, const float *p, const void *v, int64_t vs,
                                                     int64_t n, int64_t v_dim, float *o) {
    if (e == OI__ATTN_F32)
        oi__attn_dec_values_of(OI__ATTN_F32, p, v, vs, n, v_dim, o);
    else if (e == OI__ATTN_F16)
        oi__attn_dec_values_of(OI__ATTN_F16, p, v, vs, n, v_dim, o);
    else
        oi__attn_dec_values_of(OI__ATTN_BF16, p, v, vs, n, v_dim, o);
}

/* A row of n scores made the softmax's weights in place: e^(s - max)
 * (vexp.h's loops) times 1 / their sum. Returns the max; *sum: the e^
 * sum, 0 when every score is -inf (no key seen). */
OI__TARGET_AVX2 static inline float oi__attn_dec_weights(float *s, int64_t n, double *sum) {
    float m = oi__vexp_max_avx2(s, n);
    *sum = m == -INFINITY ? 0.0 : oi__vexp_sum_avx2(s, s, n, m, false);
    float inv = (float)(1.0 / *sum);
    for (int64_t j = 0; j < n; j++)
        s[j] *= inv;
    return m;
}

/* One f32 query row over n keys (row steps ks and vs): its scores into
 * scores[0..n), their weights, and out = the weights times V's rows. */
OI__TARGET_AVX2_F16C static inline void oi__attn_dec_row(const float *q, const float *k, int64_t ks, const float *v,
                                                         int64_t vs, int64_t n, int64_t dim, int64_t v_dim, float scale,
                                                         float *scores, float *out) {
    oi__attn_dec_scores(OI__ATTN_F32, q, k, ks, n, dim, scale, scores);
    double sum;
    float m = oi__attn_dec_weights(scores, n, &sum);
    oi__attn_dec_values(OI__ATTN_F32, scores, v, vs, m == -INFINITY ? 0 : n, v_dim, out);
}

#endif /* OI__GEMM_X86 */
/* synth-embed end */

typedef struct oi__attn_dec {
    const float *q;
    const char *k, *v; /* f32, f16 or bf16 (elem) */
    float *out;
    oi__attn_elem elem;
    size_t kv_es;                                                        /* bytes a K or V value */
    int64_t q_sb, q_sh, k_sb, k_sh, k_st, v_sb, v_sh, v_st, o_sb, o_sh; /* strides in values */
    int64_t kv_heads, group, kv_seq, dim, v_dim, chunk, chunks;
    float scale;
    float *part;    /* per task: group x (v_dim + 2): the chunk's sum of V rows, its max, its e^ sum */
    float *scratch; /* per thread: a chunk's scores for each head of the group */
} oi__attn_dec;

#if OI__GEMM_X86
OI__TARGET_AVX2 static void oi__attn_dec_task(void *ctx, int task, int thread) {
    const oi__attn_dec *a = (const oi__attn_dec *)ctx;
    int64_t c = task % a->chunks, bh = task / a->chunks, b = bh / a->kv_heads, hk = bh % a->kv_heads;
    int64_t t0 = c * a->chunk, n = a->kv_seq - t0 < a->chunk ? a->kv_seq - t0 : a->chunk;
    const char *k = a->k + a->kv_es * (size_t)(b * a->k_sb + hk * a->k_sh + t0 * a->k_st);
    const char *v = a->v + a->kv_es * (size_t)(b * a->v_sb + hk * a->v_sh + t0 * a->v_st);
    /* Every head's scores, then every head's weights, then every head's
     * sums of V rows: the chunk's K rows (16 KB for 64 of 64 f32 values),
     * then its V rows, stay in L1 across the group's heads. */
    float *scores = a->scratch + (size_t)thread * (size_t)(a->chunk * a->group);
    size_t part_len = (size_t)(a->v_dim + 2);
    float *parts = a->part + (size_t)task * (size_t)a->group * part_len;
    for (int64_t g = 0; g < a->group; g++)
        oi__attn_dec_scores(a->elem, a->q + b * a->q_sb + (hk * a->group + g) * a->q_sh, k, a->k_st, n, a->dim,
                            a->scale, scores + g * a->chunk);
    for (int64_t g = 0; g < a->group; g++) {
        float *part = parts + (size_t)g * part_len;
        double sum;
        part[a->v_dim] = oi__attn_dec_weights(scores + g * a->chunk, n, &sum);
        part[a->v_dim + 1] = (float)sum;
    }
    for (int64_t g = 0; g < a->group; g++) {
        float *part = parts + (size_t)g * part_len;
        bool none = part[a->v_dim] == -INFINITY; /* no key seen: the part's sum stays 0 */
        oi__attn_dec_values(a->elem, scores + g * a->chunk, v, a->v_st, none ? 0 : n, a->v_dim, part);
    }
}

/* out = the chunks' sums, each rescaled by e^(max_c - max), over the total
 * weight. */
OI__TARGET_AVX2 static void oi__attn_dec_merge(const oi__attn_dec *a, int64_t batch) {
    int64_t stride = a->v_dim + 2, step = a->group * stride; /* from one chunk's part to the next */
    for (int64_t b = 0; b < batch; b++)
        for (int64_t hk = 0; hk < a->kv_heads; hk++)
            for (int64_t g = 0; g < a->group; g++) {
                const float *first = a->part + ((b * a->kv_heads + hk) * a->chunks * a->group + g) * stride;
                float *o = a->out + b * a->o_sb + (hk * a->group + g) * a->o_sh;
                if (a->chunks == 1) { /* the chunk's softmax is the whole one */
                    memcpy(o, first, sizeof(float) * (size_t)a->v_dim);
                    continue;
                }
                float m = -INFINITY, w[64];
                for (int64_t c = 0; c < a->chunks; c++)
                    m = first[c * step + a->v_dim] > m ? first[c * step + a->v_dim] : m;
                double total = 0.0;
                for (int64_t c = 0; c < a->chunks; c++) {
                    const float *p = first + c * step;
                    w[c] = p[a->v_dim] == -INFINITY ? 0.0f : expf(p[a->v_dim] - m) * p[a->v_dim + 1];
                    total += w[c];
                }
                for (int64_t c = 0; c < a->chunks; c++)
                    w[c] = (float)(w[c] / total);
                for (int64_t col = 0; col < a->v_dim; col += 8) {
                    __m256 acc = _mm256_setzero_ps();
                    for (int64_t c = 0; c < a->chunks; c++)
                        acc = _mm256_fmadd_ps(_mm256_set1_ps(w[c]), _mm256_loadu_ps(first + c * step + col), acc);
                    _mm256_storeu_ps(o + col, acc);
                }
            }
}

/* The kind of value q, k, v and the output share (f32, f16 or bf16, on a
 * CPU with F16C); false: another dtype, or dtypes that differ. */
static bool oi__attn_elem_of(const oi__attn *at, oi__attn_elem *e) {
    oi_dtype t = at->q->dtype;
    if (at->k->dtype != t || at->v->dtype != t || at->out->dtype != t || !oi__cpu_has_f16c())
        return false;
    *e = t == OI_DTYPE_F16 ? OI__ATTN_F16 : t == OI_DTYPE_BF16 ? OI__ATTN_BF16 : OI__ATTN_F32;
    return t == OI_DTYPE_F32 || t == OI_DTYPE_F16 || t == OI_DTYPE_BF16;
}

/* A [B, H, S, D] tensor of 16-bit values (unit stride along D) as a new
 * contiguous f32 tensor. */
static oi__tensor *oi__attn_widened(const oi__tensor *t) {
    oi__tensor *w = oi__tensor_adopt(OI_DTYPE_F32, 4, t->shape, NULL, false);
    const uint16_t *src = (const uint16_t *)oi__op_cdata(t) + t->offset;
    int64_t rows = t->shape[2], n = t->shape[3];
    for (int64_t b = 0; w && b < t->shape[0]; b++)
        for (int64_t h = 0; h < t->shape[1]; h++)
            oi__convert_float_rows(OI_DTYPE_F32, (float *)oi__tensor_data(w) + (b * t->shape[1] + h) * rows * n, n,
                                   t->dtype, src + b * t->strides[0] + h * t->strides[1], t->strides[2], rows, n);
    return w;
}

/* out (16-bit, unit stride along its last dim) = the contiguous f32 `from`,
 * rounded as dtype.c stores. */
static void oi__attn_narrow_into(oi__tensor *out, const oi__tensor *from) {
    uint16_t *dst = (uint16_t *)oi__tensor_data(out) + out->offset;
    int64_t rows = out->shape[2], n = out->shape[3];
    for (int64_t b = 0; b < out->shape[0]; b++)
        for (int64_t h = 0; h < out->shape[1]; h++)
            oi__convert_float_rows(out->dtype, dst + b * out->strides[0] + h * out->strides[1], out->strides[2],
                                   OI_DTYPE_F32, (const float *)oi__tensor_data(from) + (b * out->shape[1] + h) * rows * n,
                                   n, rows, n);
}

/* Runs attention through the chunks above when it is that case (f32, f16
 * or bf16, one query row, no mask, unit last strides, head sizes in whole
 * vectors, an x86 CPU with AVX2 and F16C); false: not that case, *status
 * untouched. 16-bit K and V are read where they lie; q is widened first and
 * the output rounded last. */
static bool oi__attn_decode(const oi__attn *at, oi_status *status) {
    const oi__tensor *q = at->q, *k = at->k, *v = at->v;
    oi__tensor *out = at->out;
    oi__gemm_isa isa = oi__gemm_active_isa();
    oi__attn_elem elem;
    if ((isa != OI__GEMM_ISA_AVX2 && isa != OI__GEMM_ISA_AVX512) || at->seq != 1 || at->mask || at->kv_seq < 1 ||
        !oi__attn_elem_of(at, &elem) || q->strides[3] != 1 || k->strides[3] != 1 || v->strides[3] != 1 ||
        out->strides[3] != 1 || at->dim % 8 || at->v_dim % 8)
        return false;
    oi__tensor *q32 = NULL, *out32 = NULL; /* 16-bit: q widened, the f32 result before its rounding */
    if (elem != OI__ATTN_F32) {
        q32 = oi__attn_widened(q);
        out32 = oi__tensor_adopt(OI_DTYPE_F32, 4, out->shape, NULL, false);
        if (!q32 || !out32) {
            oi__tensor_free(q32);
            oi__tensor_free(out32);
            *status = OI_ERROR_OUT_OF_MEMORY;
            return true;
        }
    }
    const oi__tensor *qf = q32 ? q32 : q;
    oi__tensor *of = out32 ? out32 : out;
    oi__attn_dec a; /* (no designated initializers: the drop-in header compiles as C++17) */
    memset(&a, 0, sizeof a);
    a.elem = elem;
    a.kv_es = oi_dtype_bits(k->dtype) / 8;
    a.q = (const float *)oi__op_cdata(qf) + qf->offset;
    a.k = (const char *)oi__op_cdata(k) + a.kv_es * (size_t)k->offset;
    a.v = (const char *)oi__op_cdata(v) + a.kv_es * (size_t)v->offset;
    a.out = (float *)oi__tensor_data(of) + of->offset;
    a.q_sb = qf->strides[0], a.q_sh = qf->strides[1];
    a.k_sb = k->strides[0], a.k_sh = k->strides[1], a.k_st = k->strides[2];
    a.v_sb = v->strides[0], a.v_sh = v->strides[1], a.v_st = v->strides[2];
    a.o_sb = of->strides[0], a.o_sh = of->strides[1];
    a.kv_heads = at->kv_heads, a.group = at->heads / at->kv_heads;
    a.kv_seq = at->kv_seq, a.dim = at->dim, a.v_dim = at->v_dim;
    a.scale = (float)at->scale;
    a.chunk = OI__ATTN_CHUNK;
    while ((at->kv_seq + a.chunk - 1) / a.chunk > 64) /* the merge's weights: 64 at most */
        a.chunk *= 2;
    a.chunks = (at->kv_seq + a.chunk - 1) / a.chunk;
    int64_t tasks = at->batch * a.kv_heads * a.chunks;
    double work = (double)at->heads * (double)at->batch * (double)at->kv_seq * (double)(at->dim + at->v_dim);
    oi__threadpool *pool = work >= 65536.0 && tasks > 1 ? oi__threadpool_default() : NULL;
    int threads = oi__threadpool_size(pool);
    a.part = (float *)oi__malloc(sizeof(float) * (size_t)(tasks * a.group * (a.v_dim + 2)));
    a.scratch = (float *)oi__malloc(sizeof(float) * (size_t)threads * (size_t)(a.chunk * a.group));
    *status = a.part && a.scratch ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    if (*status == OI_OK) {
        oi__threadpool_run(pool, (int)tasks, oi__attn_dec_task, &a);
        oi__attn_dec_merge(&a, at->batch);
        if (out32)
            oi__attn_narrow_into(out, out32);
    }
    oi__free(a.part);
    oi__free(a.scratch);
    oi__tensor_free(q32);
    oi__tensor_free(out32);
    return true;
}

/* ---- prefill (seq > 1): oi__attn_f32 per (batch, head, block of
 * OI__ATTN_BLOCK query rows), one scratch a pool thread. 16-bit operands
 * are widened by the task into its scratch first (the block's q rows, the
 * head's K and V: a few KB, in cache; a small part of the S x T x D work)
 * and its f32 result rounded into out last. ---- */
typedef struct oi__attn_pre {
    const oi__attn *at;
    oi__attn_f32 base; /* the strides and sizes every task shares */
    void (*fn)(const oi__attn_f32 *a);
    const char *q, *k, *v; /* at their offsets; es bytes a value */
    char *out;
    size_t es;
    bool half; /* 16-bit operands (f16 or bf16) */
    const char *mask; /* the mask's data at its offset */
    size_t mask_es;   /* its element size */
    float *scratch;
    int64_t scratch_floats; /* per thread, a multiple of 16 */
} oi__attn_pre;

/* The scratch floats a task needs for widened operands: the block's q rows
 * and output rows, the head's K and V rows. */
static int64_t oi__attn_half_floats(const oi__attn *at) {
    return OI__ATTN_BLOCK * (at->dim + at->v_dim) + at->kv_seq * (at->dim + at->v_dim);
}

static void oi__attn_pre_task(void *ctx, int task, int thread) {
    const oi__attn_pre *p = (const oi__attn_pre *)ctx;
    const oi__attn *at = p->at;
    int64_t head = task / at->blocks_per_head, b = head / at->heads, h = head % at->heads;
    int64_t hk = h / (at->heads / at->kv_heads), i0 = (task % at->blocks_per_head) * OI__ATTN_BLOCK;
    const int64_t *qs = at->q->strides, *ks = at->k->strides, *vs = at->v->strides, *os = at->out->strides;
    oi__attn_f32 a = p->base;
    const char *q = p->q + p->es * (size_t)(b * qs[0] + h * qs[1] + i0 * qs[2]);
    const char *k = p->k + p->es * (size_t)(b * ks[0] + hk * ks[1]);
    const char *v = p->v + p->es * (size_t)(b * vs[0] + hk * vs[1]);
    char *out = p->out + p->es * (size_t)(b * os[0] + h * os[1] + i0 * os[2]);
    a.q = (const float *)(const void *)q, a.k = (const float *)(const void *)k, a.v = (const float *)(const void *)v;
    a.out = (float *)(void *)out;
    a.rows = at->seq - i0 < OI__ATTN_BLOCK ? at->seq - i0 : OI__ATTN_BLOCK;
    if (p->mask)
        a.mask = p->mask + p->mask_es * (size_t)(b * at->mask_strides[0] + h * at->mask_strides[1] +
                                                 i0 * at->mask_strides[2]);
    a.causal_last = i0 + at->kv_seq - at->seq;
    a.kt = p->scratch + (size_t)thread * (size_t)p->scratch_floats;
    a.scores = a.kt + a.dim * oi__attn_kv_pad(a.kv_seq);
    if (!p->half) {
        p->fn(&a);
        return;
    }
    oi_dtype t = at->q->dtype;
    float *qw = a.scores + 8 * oi__attn_kv_pad(a.kv_seq), *ow = qw + OI__ATTN_BLOCK * a.dim;
    float *kw = ow + OI__ATTN_BLOCK * a.v_dim, *vw = kw + a.kv_seq * a.dim;
    oi__convert_float_rows(OI_DTYPE_F32, qw, a.dim, t, q, a.q_rs, a.rows, a.dim);
    oi__convert_float_rows(OI_DTYPE_F32, kw, a.dim, t, k, a.k_rs, a.kv_seq, a.dim);
    oi__convert_float_rows(OI_DTYPE_F32, vw, a.v_dim, t, v, a.v_rs, a.kv_seq, a.v_dim);
    a.q = qw, a.k = kw, a.v = vw, a.out = ow;
    a.q_rs = a.k_rs = a.dim, a.v_rs = a.out_rs = a.v_dim;
    p->fn(&a);
    oi__convert_float_rows(t, out, p->base.out_rs, OI_DTYPE_F32, ow, a.v_dim, a.rows, a.v_dim);
}

/* Runs attention through oi__attn_f32 when it is that case (f32, f16 or
 * bf16, more than one query row, a bool or f32 mask or none, unit last
 * strides, head sizes in whole 8-lane vectors, an x86 CPU with AVX2 and
 * F16C); false: not that case, *status untouched. */
static bool oi__attn_prefill(oi__attn *at, oi_status *status) {
    const oi__tensor *q = at->q, *k = at->k, *v = at->v, *mask = at->mask;
    oi__tensor *out = at->out;
    oi__gemm_isa isa = oi__gemm_active_isa();
    oi__attn_elem elem;
    if ((isa != OI__GEMM_ISA_AVX2 && isa != OI__GEMM_ISA_AVX512) || at->seq < 2 || at->kv_seq < 1 ||
        !oi__attn_elem_of(at, &elem) || q->strides[3] != 1 || k->strides[3] != 1 || v->strides[3] != 1 ||
        out->strides[3] != 1 || at->dim % 8 || at->v_dim % 8 ||
        (mask && mask->dtype != OI_DTYPE_BOOL && mask->dtype != OI_DTYPE_F32))
        return false;
    oi__attn_pre p;
    memset(&p, 0, sizeof p);
    p.at = at;
    p.fn = isa == OI__GEMM_ISA_AVX512 ? oi__attn_f32_avx512 : oi__attn_f32_avx2;
    p.half = elem != OI__ATTN_F32;
    p.es = oi_dtype_bits(q->dtype) / 8;
    p.q = (const char *)oi__op_cdata(q) + p.es * (size_t)q->offset;
    p.k = (const char *)oi__op_cdata(k) + p.es * (size_t)k->offset;
    p.v = (const char *)oi__op_cdata(v) + p.es * (size_t)v->offset;
    p.out = (char *)oi__tensor_data(out) + p.es * (size_t)out->offset;
    if (mask) {
        p.mask_es = mask->dtype == OI_DTYPE_F32 ? sizeof(float) : 1;
        p.mask = (const char *)oi__op_cdata(mask) + p.mask_es * (size_t)mask->offset;
    }
    oi__attn_f32 *a = &p.base;
    a->q_rs = q->strides[2], a->k_rs = k->strides[2], a->v_rs = v->strides[2], a->out_rs = out->strides[2];
    a->kv_seq = at->kv_seq, a->dim = at->dim, a->v_dim = at->v_dim;
    a->scale = (float)at->scale;
    a->mask_f32 = mask && mask->dtype == OI_DTYPE_F32;
    a->mask_rs = at->mask_strides[2], a->mask_ks = at->mask_strides[3];
    a->causal = at->causal;
    at->blocks_per_head = (at->seq + OI__ATTN_BLOCK - 1) / OI__ATTN_BLOCK;
    int64_t tasks = at->batch * at->heads * at->blocks_per_head;
    double work = (double)(at->batch * at->heads * at->seq) * (double)at->kv_seq * (double)(at->dim + at->v_dim);
    oi__threadpool *pool = work >= 65536.0 && tasks > 1 ? oi__threadpool_default() : NULL;
    int threads = oi__threadpool_size(pool);
    p.scratch_floats = oi__attn_scratch_floats(at->kv_seq, at->dim) + (p.half ? oi__attn_half_floats(at) : 0);
    p.scratch_floats = (p.scratch_floats + 15) / 16 * 16;
    float *raw = (float *)oi__malloc(sizeof(float) * (size_t)(p.scratch_floats * threads + 16));
    if (!raw) {
        *status = OI_ERROR_OUT_OF_MEMORY;
        return true;
    }
    p.scratch = (float *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    oi__threadpool_run(pool, (int)tasks, oi__attn_pre_task, &p);
    oi__free(raw);
    *status = OI_OK;
    return true;
}

#endif

static oi_status oi__nn_attention(const oi__kernel_args *k) {
    oi__attn a;
    memset(&a, 0, sizeof a);
    a.q = k->in[0], a.k = k->in[1], a.v = k->in[2], a.mask = k->n_in > 3 ? k->in[3] : NULL;
    a.out = k->out;
    a.batch = a.q->shape[0], a.heads = a.q->shape[1], a.seq = a.q->shape[2], a.dim = a.q->shape[3];
    a.kv_heads = a.k->shape[1], a.kv_seq = a.k->shape[2], a.v_dim = a.v->shape[3];
    a.causal = oi__op_param_bool(k, "causal");
    a.scale = oi__op_attr_for(k, "scale") ? oi__op_param_f64(k, "scale") : 1.0 / sqrt((double)a.dim);
    a.wide = a.q->dtype == OI_DTYPE_F64;
    if (a.mask) { /* broadcast the mask to [B, Hq, S, T] */
        int lead = 4 - a.mask->ndim;
        for (int d = 0; d < 4; d++) {
            int md = d - lead;
            a.mask_strides[d] = (md < 0 || a.mask->shape[md] == 1) ? 0 : a.mask->strides[md];
        }
    }
    int64_t heads = a.batch * a.heads;
    if (heads == 0 || a.seq == 0 || a.v_dim == 0)
        return OI_OK;
#if OI__GEMM_X86
    oi_status decoded;
    if (oi__attn_decode(&a, &decoded) || oi__attn_prefill(&a, &decoded))
        return decoded;
#endif
    a.blocks_per_head = (a.seq + OI__ATTN_BLOCK - 1) / OI__ATTN_BLOCK;
    int64_t tasks = heads * a.blocks_per_head;
    a.grouped = a.seq == 1 && a.heads > a.kv_heads && a.heads / a.kv_heads <= OI__ATTN_BLOCK;
    if (a.grouped)
        tasks = a.batch * a.kv_heads;
    double work = (double)(heads * a.seq) * (double)a.kv_seq * (double)(a.dim + a.v_dim);
    oi__threadpool *pool = work >= 65536.0 ? oi__threadpool_default() : NULL;
    /* one task: the gemms use the pool; several: the tasks do */
    a.gemm_pool = tasks == 1 ? pool : NULL;
    oi__threadpool *task_pool = tasks == 1 ? NULL : pool;
    int threads = oi__threadpool_size(task_pool);
    int64_t rows = a.grouped ? a.heads / a.kv_heads : a.seq < OI__ATTN_BLOCK ? a.seq : OI__ATTN_BLOCK;
    size_t es = a.wide ? sizeof(double) : sizeof(float);
    a.scratch_bytes = es * (size_t)(rows * a.dim + a.kv_seq * a.dim + a.kv_seq * a.v_dim + rows * a.kv_seq +
                                    rows * a.v_dim);
    a.scratch = (char *)oi__malloc(a.scratch_bytes * (size_t)threads);
    a.status = (oi_status *)oi__calloc((size_t)threads, sizeof(oi_status));
    if (!a.scratch || !a.status) {
        oi__free(a.scratch);
        oi__free(a.status);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    oi__threadpool_run(task_pool, (int)tasks, oi__attn_task, &a);
    oi_status s = OI_OK;
    for (int t = 0; t < threads && s == OI_OK; t++)
        s = a.status[t];
    oi__free(a.scratch);
    oi__free(a.status);
    return s;
}

/* ------------------------------------------------------------------ */
/* top_k, top_k_indices                                                */
/* ------------------------------------------------------------------ */
/* scalar.h's key (the emitted code's too) of element `at`. */
static uint64_t oi__topk_key(oi_dtype t, const void *data, int64_t at, bool largest) {
    if (oi__dtype_is_float(t))
        return OI_S_topk_key_f64(oi__load_f64(t, data, at), largest);
    if (oi__dtype_is_signed(t))
        return OI_S_topk_key_i64(oi__load_i64(t, data, at), largest);
    return OI_S_topk_key_u64(oi__load_u64(t, data, at), largest);
}

static oi_status oi__nn_top_k(const oi__kernel_args *k) {
    const oi__tensor *x = k->in[0];
    oi__tensor *out = k->out;
    int axis = 0;
    if (oi__nn_axis(k, "axis", x->ndim, &axis) != OI_OK)
        return OI_ERROR_VALIDATION;
    int64_t kk = oi__op_param_i64(k, "k");
    bool largest = oi__op_param_bool(k, "largest"), values = k->op == OI_OP_top_k;
    bool mask[OI__NN_MAX_DIMS];
    oi__nn_dims(x->ndim, axis, axis + 1, mask);
    oi__lanes in, lo;
    if (oi__lanes_init(&in, x->ndim, x->shape, x->strides, x->offset, mask) != OI_OK)
        return OI_ERROR_OUT_OF_MEMORY;
    if (oi__lanes_init(&lo, out->ndim, out->shape, out->strides, out->offset, mask) != OI_OK) {
        oi__lanes_free(&in);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    uint64_t *key = (uint64_t *)oi__malloc(sizeof(uint64_t) * (size_t)(in.len + 1));
    int64_t *order = (int64_t *)oi__malloc(sizeof(int64_t) * (size_t)(kk + 1));
    oi_status s = key && order ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    for (int64_t lane = 0; lane < in.count && s == OI_OK && kk > 0; lane++) {
        for (int64_t j = 0; j < in.len; j++)
            key[j] = oi__topk_key(x->dtype, oi__op_cdata(x), in.base[lane] + in.rel[j], largest);
        OI_S_topk_select(key, in.len, kk, order);
        for (int64_t r = 0; r < kk; r++) {
            int64_t at = lo.base[lane] + lo.rel[r];
            if (values)
                oi__store_bits(out->dtype, oi__tensor_data(out), at,
                               oi__load_bits(x->dtype, oi__op_cdata(x), in.base[lane] + in.rel[order[r]]));
            else
                oi__store_i64(out->dtype, oi__tensor_data(out), at, order[r]);
        }
    }
    oi__free(key);
    oi__free(order);
    oi__lanes_free(&in);
    oi__lanes_free(&lo);
    return s;
}

/* ------------------------------------------------------------------ */
static oi_status oi__k_nn(const oi__kernel_args *k) {
    switch (k->op) {
    case OI_OP_softmax: case OI_OP_log_softmax: return oi__nn_softmax(k);
    case OI_OP_layer_norm: case OI_OP_rms_norm: return oi__nn_norm(k);
    case OI_OP_batch_norm: return oi__nn_batch_norm(k);
    case OI_OP_group_norm: return oi__nn_group_norm(k);
    case OI_OP_rope: return oi__nn_rope(k);
    case OI_OP_attention: return oi__nn_attention(k);
    case OI_OP_top_k: case OI_OP_top_k_indices: return oi__nn_top_k(k);
    default: return oi__fail(OI_ERROR_UNSUPPORTED, "%s: not an nn op", oi_op_name(k->op));
    }
}
