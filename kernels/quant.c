/* quant.c - matmul with quantized weights, dequantized on the fly so LLM
 * weights stay small in memory.
 *
 *   matmul_q8(x, w, scale): per-channel int8. w is i8 [N, K] (layout "nk",
 *     the default: one row per output, as PyTorch's Linear and ggml store
 *     it) or [K, N] (layout "kn"); scale is [N]:
 *       y[..., n] = scale[n] * sum_k x[..., k] * w[n, k]
 *   matmul_q4(x, w, format): 4-bit blocks of 32 weights along K. w is u8
 *     [N, K / 32 * block bytes]: row n holds the K / 32 blocks of weight
 *     row n in order, each block laid out as ggml's:
 *       q4_0, 18 bytes: d (f16, little endian), qs[16];
 *         element j = ((qs[j] & 15) - 8) * d, element j + 16 = ((qs[j] >> 4) - 8) * d
 *       q4_1, 20 bytes: d (f16), m (f16), qs[16];
 *         element j = (qs[j] & 15) * d + m, element j + 16 = (qs[j] >> 4) * d + m
 *     (low nibbles are elements 0..15 of the block, high nibbles 16..31).
 * x is f32, f16 or bf16 [..., K]; y is [..., N] in x's dtype; everything
 * computes in f32 and rounds once.
 * A few rows of x (decoding, M < 4) take dot products straight from the
 * packed rows, 16 f32 accumulators wide; more rows dequantize a chunk of
 * weight rows to f32 once and multiply it with oi__gemm_f32. */
#include "../openinfer_impl/internal.h"

typedef enum oi__qformat { OI__Q_I8, OI__Q4_0, OI__Q4_1 } oi__qformat;

#define OI__Q4_BLOCK 32
#define OI__QMM_DOT_MAX_M 4  /* fewer rows of x: dot products, no dequantized copy */
#define OI__QMM_CHUNK 16     /* weight rows dequantized per gemm call */

static int64_t oi__q4_block_bytes(oi__qformat f) { return f == OI__Q4_1 ? 20 : 18; }

/* A little-endian f16 as f32, inline: the exponent and mantissa moved into
 * f32 position and scaled by 2^(127 - 15), which also gets subnormals
 * right; inf and NaN get the all-ones exponent. */
OI__MATH_INLINE float oi__q_half(const uint8_t *p) {
    uint32_t h = (uint32_t)p[0] | ((uint32_t)p[1] << 8), em = h & 0x7FFFu;
    uint32_t finite = oi__math_bits(oi__math_from_bits(em << 13) * 5.192296858534828e33f /* 2^112 */);
    return oi__math_from_bits(((h & 0x8000u) << 16) | oi__math_pick(em >= 0x7C00u, (em << 13) | 0x70000000u, finite));
}

/* ---- one weight row ---- */
OI__MATH_INLINE float oi__dot_i8(const float *x, const int8_t *w, int64_t k) {
    float acc[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= k; i += 16)
        for (int j = 0; j < 16; j++)
            acc[j] += x[i + j] * (float)w[i + j];
    float s = 0.0f;
    for (int j = 0; j < 16; j++)
        s += acc[j];
    for (; i < k; i++)
        s += x[i] * (float)w[i];
    return s;
}

/* sum over blocks of d * sum x q' + m * sum x, with q' = q - 8 (q4_0) or
 * q (q4_1, m the block minimum) */
OI__MATH_INLINE float oi__dot_q4(const float *x, const uint8_t *row, int64_t k, bool with_min) {
    int64_t bytes = with_min ? 20 : 18;
    float off = with_min ? 0.0f : -8.0f;
    float acc[16] = {0};
    for (int64_t b = 0; b < k / OI__Q4_BLOCK; b++, x += OI__Q4_BLOCK, row += bytes) {
        const uint8_t *qs = row + bytes - 16;
        float d = oi__q_half(row), m = with_min ? oi__q_half(row + 2) : 0.0f;
        float xq[16], xs[16];
        for (int j = 0; j < 16; j++) {
            xq[j] = x[j] * ((float)(qs[j] & 15) + off) + x[j + 16] * ((float)(qs[j] >> 4) + off);
            xs[j] = x[j] + x[j + 16];
        }
        for (int j = 0; j < 16; j++)
            acc[j] += d * xq[j] + m * xs[j];
    }
    float s = 0.0f;
    for (int j = 0; j < 16; j++)
        s += acc[j];
    return s;
}

OI__MATH_INLINE void oi__dequant_q4(const uint8_t *row, int64_t k, bool with_min, float *dst) {
    int64_t bytes = with_min ? 20 : 18;
    float off = with_min ? 0.0f : -8.0f;
    for (int64_t b = 0; b < k / OI__Q4_BLOCK; b++, dst += OI__Q4_BLOCK, row += bytes) {
        const uint8_t *qs = row + bytes - 16;
        float d = oi__q_half(row), m = with_min ? oi__q_half(row + 2) : 0.0f;
        for (int j = 0; j < 16; j++) {
            dst[j] = ((float)(qs[j] & 15) + off) * d + m;
            dst[j + 16] = ((float)(qs[j] >> 4) + off) * d + m;
        }
    }
}

/* ---- the multiply ---- */
typedef struct oi__qmm {
    oi__qformat format;
    const uint8_t *w;
    int64_t row_bytes;
    const float *x, *scale; /* x: dense [M, K]; scale: [N] (q8 only) */
    float *y;               /* dense [M, N] */
    int64_t m, n, k;
    int64_t rows_per_task;
    bool gemm;
    float *scratch; /* OI__QMM_CHUNK * K per pool thread */
    oi_status *status;
} oi__qmm;

OI__MATH_INLINE float oi__qmm_dot(const oi__qmm *q, const float *x, int64_t n) {
    const uint8_t *row = q->w + n * q->row_bytes;
    if (q->format == OI__Q_I8)
        return q->scale[n] * oi__dot_i8(x, (const int8_t *)row, q->k);
    return oi__dot_q4(x, row, q->k, q->format == OI__Q4_1);
}

OI__MATH_INLINE void oi__qmm_dequant(const oi__qmm *q, int64_t n, float *dst) {
    const uint8_t *row = q->w + n * q->row_bytes;
    if (q->format != OI__Q_I8) {
        oi__dequant_q4(row, q->k, q->format == OI__Q4_1, dst);
        return;
    }
    float s = q->scale[n];
    for (int64_t i = 0; i < q->k; i++)
        dst[i] = (float)((const int8_t *)row)[i] * s;
}

/* y[:, n0..n1) by dot products; weight rows n0..n1 dequantized into buf
 * (ISA clones: math.c) */
OI__MATH_INLINE void oi__qmm_dots_body(const oi__qmm *q, int64_t n0, int64_t n1) {
    for (int64_t i = 0; i < q->m; i++)
        for (int64_t n = n0; n < n1; n++)
            q->y[i * q->n + n] = oi__qmm_dot(q, q->x + i * q->k, n);
}
OI__ISA_CLONES(oi__qmm_dots, (const oi__qmm *q, int64_t n0, int64_t n1), (q, n0, n1))

OI__MATH_INLINE void oi__qmm_dequant_rows_body(const oi__qmm *q, int64_t n0, int64_t n1, float *buf) {
    for (int64_t n = n0; n < n1; n++)
        oi__qmm_dequant(q, n, buf + (n - n0) * q->k);
}
OI__ISA_CLONES(oi__qmm_dequant_rows, (const oi__qmm *q, int64_t n0, int64_t n1, float *buf), (q, n0, n1, buf))

/* Output columns [n0, n1). */
static void oi__qmm_task(void *ctx, int task, int thread) {
    const oi__qmm *q = (const oi__qmm *)ctx;
    int64_t n0 = (int64_t)task * q->rows_per_task, n1 = n0 + q->rows_per_task < q->n ? n0 + q->rows_per_task : q->n;
    if (!q->gemm) {
        OI__ISA_CALL(oi__qmm_dots, (q, n0, n1));
        return;
    }
    float *buf = q->scratch + (size_t)thread * (size_t)(OI__QMM_CHUNK * q->k);
    for (int64_t c = n0; c < n1; c += OI__QMM_CHUNK) {
        int64_t rows = n1 - c < OI__QMM_CHUNK ? n1 - c : OI__QMM_CHUNK;
        OI__ISA_CALL(oi__qmm_dequant_rows, (q, c, c + rows, buf));
        oi_status s = oi__gemm_f32(NULL, false, true, q->m, rows, q->k, 1.0f, q->x, q->k, buf, q->k, 0.0f, q->y + c, q->n);
        if (s != OI_OK)
            q->status[thread] = s;
    }
}

/* w [N, K] (q8 "nk" and the q4 formats): tasks over output columns. */
static oi_status oi__qmm_rows(oi__qmm *q) {
    double work = (double)q->m * (double)q->n * (double)q->k;
    oi__threadpool *pool = work >= 262144.0 && q->n > OI__QMM_CHUNK ? oi__threadpool_default() : NULL;
    int threads = oi__threadpool_size(pool);
    q->gemm = q->m >= OI__QMM_DOT_MAX_M;
    int64_t tasks = (int64_t)threads * 4;
    q->rows_per_task = (q->n + tasks - 1) / tasks;
    q->rows_per_task = (q->rows_per_task + OI__QMM_CHUNK - 1) / OI__QMM_CHUNK * OI__QMM_CHUNK;
    tasks = (q->n + q->rows_per_task - 1) / q->rows_per_task;
    q->status = (oi_status *)oi__calloc((size_t)threads, sizeof(oi_status));
    q->scratch = q->gemm ? (float *)oi__malloc(sizeof(float) * (size_t)threads * (size_t)(OI__QMM_CHUNK * q->k + 1))
                         : NULL;
    oi_status s = q->status && (q->scratch || !q->gemm) ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    if (s == OI_OK)
        oi__threadpool_run(pool, (int)tasks, oi__qmm_task, q);
    for (int t = 0; t < threads && s == OI_OK; t++)
        s = q->status[t];
    oi__free(q->status);
    oi__free(q->scratch);
    return s;
}

/* q8 w [K, N]: dequantize chunks of K rows (times the scales) and
 * accumulate their products with the gemm. */
static oi_status oi__qmm_kn(const oi__qmm *q) {
    int64_t chunk = q->n ? ((int64_t)1 << 16) / q->n : 1;
    chunk = chunk < 1 ? 1 : chunk > q->k ? q->k : chunk;
    float *buf = (float *)oi__malloc(sizeof(float) * (size_t)(chunk * q->n + 1));
    if (!buf)
        return OI_ERROR_OUT_OF_MEMORY;
    oi_status s = OI_OK;
    const int8_t *w = (const int8_t *)q->w;
    for (int64_t k0 = 0; k0 < q->k && s == OI_OK; k0 += chunk) {
        int64_t rows = q->k - k0 < chunk ? q->k - k0 : chunk;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t n = 0; n < q->n; n++)
                buf[r * q->n + n] = (float)w[(k0 + r) * q->n + n] * q->scale[n];
        s = oi__gemm_f32(oi__threadpool_default(), false, false, q->m, q->n, rows, 1.0f, q->x + k0, q->k, buf, q->n,
                         k0 ? 1.0f : 0.0f, q->y, q->n);
    }
    oi__free(buf);
    return s;
}

static bool oi__quant_kn(const oi__kernel_args *k) {
    const oi__attr *a = oi__op_attr_for(k, "layout");
    return a && strcmp(a->s, "kn") == 0;
}

static oi_status oi__quant_format(const oi__kernel_args *k, oi__qformat *f) {
    if (k->op == OI_OP_matmul_q8) {
        *f = OI__Q_I8;
        return OI_OK;
    }
    const oi__attr *a = oi__op_attr_for(k, "format");
    *f = !a || strcmp(a->s, "q4_0") == 0 ? OI__Q4_0 : OI__Q4_1;
    if (a && strcmp(a->s, "q4_0") != 0 && strcmp(a->s, "q4_1") != 0)
        return oi__fail(OI_ERROR_VALIDATION, "matmul_q4: format must be \"q4_0\" or \"q4_1\", got \"%s\"", a->s);
    return OI_OK;
}

/* Writes a dense f32 [M, N] result into out (any dtype and strides). */
static void oi__quant_store(oi__tensor *out, const float *y) {
    oi__ew_iter it;
    oi__ew_init(&it, NULL, 0, out);
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    for (int64_t e = 0; e < n; e++, oi__ew_next(&it))
        oi__store_f64(out->dtype, oi__tensor_data(out), it.at[0], (double)y[e]);
}

static oi_status oi__k_quant(const oi__kernel_args *k) {
    const oi__tensor *x = k->in[0], *w = k->in[1];
    oi__tensor *out = k->out;
    oi__qmm q;
    memset(&q, 0, sizeof q);
    if (oi__quant_format(k, &q.format) != OI_OK)
        return OI_ERROR_VALIDATION;
    q.k = x->shape[x->ndim - 1];
    q.m = oi__shape_numel(x->ndim - 1, x->shape);
    q.n = out->shape[out->ndim - 1];
    bool x_direct = x->dtype == OI_DTYPE_F32 && oi__tensor_is_contiguous(x);
    bool y_direct = out->dtype == OI_DTYPE_F32 && oi__tensor_is_contiguous(out);
    oi__tensor *w_dense = oi__tensor_is_contiguous(w) ? NULL : oi__tensor_clone(w);
    float *x_buf = x_direct ? NULL : (float *)oi__nn_load_dense(x, false, x->ndim, x->shape);
    float *scale_buf = q.format == OI__Q_I8 ? (float *)oi__nn_load_dense(k->in[2], false, 1, &q.n) : NULL;
    float *y_buf = y_direct ? NULL : (float *)oi__malloc(sizeof(float) * (size_t)(q.m * q.n + 1));
    oi_status s = OI_OK;
    if ((!x_direct && !x_buf) || (!y_direct && !y_buf) || (q.format == OI__Q_I8 && !scale_buf) ||
        (!oi__tensor_is_contiguous(w) && !w_dense))
        s = OI_ERROR_OUT_OF_MEMORY;
    if (s == OI_OK) {
        const oi__tensor *wt = w_dense ? w_dense : w;
        q.w = (const uint8_t *)oi__op_cdata(wt) + wt->offset;
        q.row_bytes = wt->shape[1];
        q.x = x_direct ? (const float *)oi__op_cdata(x) + x->offset : x_buf;
        q.y = y_direct ? (float *)oi__tensor_data(out) + out->offset : y_buf;
        q.scale = scale_buf;
        if (q.k == 0)
            memset(q.y, 0, sizeof(float) * (size_t)(q.m * q.n));
        else if (q.format == OI__Q_I8 && oi__quant_kn(k))
            s = oi__qmm_kn(&q);
        else
            s = oi__qmm_rows(&q);
        if (s == OI_OK && !y_direct)
            oi__quant_store(out, y_buf);
    }
    oi__tensor_free(w_dense);
    oi__free(x_buf);
    oi__free(scale_buf);
    oi__free(y_buf);
    return s;
}

/* x [..., K] -> [..., N]; checks w (and scale) against K and the format. */
static oi_status oi__k_quant_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out) {
    const char *name = oi_op_name(k->op);
    const oi__op_sig *x = &in[0], *w = &in[1];
    (void)n_in;
    if (x->ndim < 1)
        return oi__fail(OI_ERROR_VALIDATION, "%s: x must have rank >= 1 ([..., K])", name);
    int64_t kdim = x->shape[x->ndim - 1], n;
    char have[128];
    oi__op_shape_text(w->ndim, w->shape, have, sizeof have);
    if (k->op == OI_OP_matmul_q8) {
        const oi__attr *layout = oi__op_attr_for(k, "layout");
        bool kn = oi__quant_kn(k);
        if (layout && !kn && strcmp(layout->s, "nk") != 0)
            return oi__fail(OI_ERROR_VALIDATION, "matmul_q8: layout must be \"nk\" or \"kn\", got \"%s\"", layout->s);
        if (w->dtype != OI_DTYPE_I8 || w->ndim != 2 || w->shape[kn ? 0 : 1] != kdim)
            return oi__fail(OI_ERROR_VALIDATION, "matmul_q8: w is %s %s but x has K = %lld (want i8 %s)",
                            oi_dtype_name(w->dtype) ? oi_dtype_name(w->dtype) : "?", have, (long long)kdim,
                            kn ? "[K, N] for layout \"kn\"" : "[N, K]");
        n = w->shape[kn ? 1 : 0];
        const oi__op_sig *scale = &in[2];
        if (!oi__dtype_is_float(scale->dtype) || scale->ndim != 1 || scale->shape[0] != n) {
            char sc[128];
            oi__op_shape_text(scale->ndim, scale->shape, sc, sizeof sc);
            return oi__fail(OI_ERROR_VALIDATION, "matmul_q8: scale is %s %s (want a float [%lld], one per output)",
                            oi_dtype_name(scale->dtype) ? oi_dtype_name(scale->dtype) : "?", sc, (long long)n);
        }
    } else {
        oi__qformat f;
        if (oi__quant_format(k, &f) != OI_OK)
            return OI_ERROR_VALIDATION;
        if (kdim % OI__Q4_BLOCK != 0)
            return oi__fail(OI_ERROR_VALIDATION, "matmul_q4: K = %lld is not a multiple of the block size 32",
                            (long long)kdim);
        int64_t row_bytes = kdim / OI__Q4_BLOCK * oi__q4_block_bytes(f);
        if (w->dtype != OI_DTYPE_U8 || w->ndim != 2 || w->shape[1] != row_bytes)
            return oi__fail(OI_ERROR_VALIDATION,
                            "matmul_q4: w is %s %s; K = %lld in %s needs u8 [N, %lld] (%lld blocks of %lld bytes)",
                            oi_dtype_name(w->dtype) ? oi_dtype_name(w->dtype) : "?", have, (long long)kdim,
                            f == OI__Q4_0 ? "q4_0" : "q4_1", (long long)row_bytes, (long long)(kdim / OI__Q4_BLOCK),
                            (long long)oi__q4_block_bytes(f));
        n = w->shape[0];
    }
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof out->shape);
    out->shape[x->ndim - 1] = n;
    return OI_OK;
}
