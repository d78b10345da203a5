/* conv.c - the gemm-shaped float ops: gemm (ONNX Gemm: alpha * A' * B' +
 * beta * C), conv1d/conv2d (im2col + the blocked gemm of kernels/gemm.c),
 * conv_transpose2d (gemm + col2im), max/avg pooling and global average
 * pooling, in ONNX's N, C, spatial... layout with ONNX's attributes.
 *
 * Operands are read once into dense row-major buffers: f32 for every
 * float dtype below f64 (the gemm computes in f32 and the result is
 * rounded once), f64 for f64. Pooling sums and compares in f64 and rounds
 * once (exact for max_pool2d's i8/u8). A dense f32/f64 operand is used in
 * place, without a copy. */
#include "../openinfer_impl/internal.h"

#define OI__CONV_MAX_SPATIAL 3

/* The window geometry of a conv or pool over `s` spatial dims. For
 * conv_transpose `in` is the input grid and `out` the (larger) output. */
typedef struct oi__conv_geom {
    int s;
    int64_t batch, in_c, out_c, group;
    int64_t in[OI__CONV_MAX_SPATIAL], out[OI__CONV_MAX_SPATIAL], kernel[OI__CONV_MAX_SPATIAL];
    int64_t stride[OI__CONV_MAX_SPATIAL], dil[OI__CONV_MAX_SPATIAL];
    int64_t pad_b[OI__CONV_MAX_SPATIAL], pad_e[OI__CONV_MAX_SPATIAL];
    int64_t in_sp, out_sp, k_sp; /* products of in, out, kernel */
} oi__conv_geom;

typedef enum oi__auto_pad { OI__AUTO_NOTSET, OI__AUTO_VALID, OI__AUTO_SAME_UPPER, OI__AUTO_SAME_LOWER } oi__auto_pad;

/* ------------------------------------------------------------------ */
/* Parameters and geometry                                             */
/* ------------------------------------------------------------------ */
/* The attribute given for setting `name` of a conv or pool: found by its
 * own name (a compare per attribute given), through oi__op_attr_for only
 * when the op has parameters by other names (aliases). oi__op_attr_for
 * resolves every given name through the op's parameter table for each
 * setting read, and a conv reads 8 per call: 1.5 us of a Silero VAD step
 * went to those compares. A setting is given once (validation refuses it
 * twice), so both find the same attribute. */
static bool oi__conv_op_has_alias(oi_op op) {
    pthread_once(&oi__op_param_once, oi__op_param_index);
    for (int r = oi__op_param_start[op]; r < oi__op_param_start[op + 1]; r++)
        if (oi__op_param_defs[oi__op_param_rows[r]].type == OI__PARAM_ALIAS)
            return true;
    return false;
}

static const oi__attr *oi__conv_attr(const oi__kernel_args *k, const char *name) {
    if (!oi__op_valid(k->op) || oi__conv_op_has_alias(k->op))
        return oi__op_attr_for(k, name);
    for (size_t i = 0; i < k->n_attrs; i++)
        if (strcmp(k->attrs[i].name, name) == 0)
            return &k->attrs[i];
    return NULL;
}

/* An int setting: the attribute, else the table's default (oi__op_param_i64). */
static int64_t oi__conv_i64(const oi__kernel_args *k, const char *name) {
    const oi__attr *a = oi__conv_attr(k, name);
    if (a)
        return oi__op_attr_as_i64(a);
    const oi__op_param_def *p = oi__op_param_lookup(k->op, name);
    return p ? oi__op_f64_to_i64_saturating(p->def) : 0;
}

/* `count` ints of an int-list parameter, each >= min; `def` when absent. */
static oi_status oi__conv_ints(const oi__kernel_args *k, const char *param, int count, int64_t def, int64_t min,
                               int64_t *out) {
    const oi__attr *a = oi__conv_attr(k, param);
    for (int i = 0; i < count; i++)
        out[i] = def;
    if (!a)
        return OI_OK;
    const int64_t *v = a->kind == OI__ATTR_INT_LIST ? a->ints : &a->i;
    int n = a->kind == OI__ATTR_INT_LIST ? (int)arrlen(a->ints) : 1;
    if (n != count)
        return oi__fail(OI_ERROR_VALIDATION, "%s: %s has %d entries, expected %d", oi_op_name(k->op), param, n, count);
    for (int i = 0; i < count; i++) {
        if (v[i] < min || v[i] > OI__MAX_DIM)
            return oi__fail(OI_ERROR_VALIDATION, "%s: %s[%d] is %lld (expected %lld or more)", oi_op_name(k->op), param, i,
                            (long long)v[i], (long long)min);
        out[i] = v[i];
    }
    return OI_OK;
}

static oi_status oi__conv_auto_pad(const oi__kernel_args *k, oi__auto_pad *mode) {
    const oi__attr *a = oi__conv_attr(k, "auto_pad");
    const char *text = a ? a->s : "NOTSET";
    if (strcmp(text, "NOTSET") == 0)
        *mode = OI__AUTO_NOTSET;
    else if (strcmp(text, "VALID") == 0)
        *mode = OI__AUTO_VALID;
    else if (strcmp(text, "SAME_UPPER") == 0)
        *mode = OI__AUTO_SAME_UPPER;
    else if (strcmp(text, "SAME_LOWER") == 0)
        *mode = OI__AUTO_SAME_LOWER;
    else
        return oi__fail(OI_ERROR_VALIDATION, "%s: auto_pad '%s' is unknown (NOTSET, VALID, SAME_UPPER, SAME_LOWER)",
                        oi_op_name(k->op), text);
    return OI_OK;
}

/* strides, dilations and pads (or auto_pad) of a conv or pool. */
static oi_status oi__conv_read_window(const oi__kernel_args *k, oi__conv_geom *g, oi__auto_pad *mode) {
    int64_t pads[2 * OI__CONV_MAX_SPATIAL];
    if (oi__conv_ints(k, "strides", g->s, 1, 1, g->stride) || oi__conv_ints(k, "dilations", g->s, 1, 1, g->dil) ||
        oi__conv_ints(k, "pads", 2 * g->s, 0, 0, pads) || oi__conv_auto_pad(k, mode))
        return OI_ERROR_VALIDATION;
    for (int d = 0; d < g->s; d++) {
        g->pad_b[d] = *mode == OI__AUTO_NOTSET ? pads[d] : 0;
        g->pad_e[d] = *mode == OI__AUTO_NOTSET ? pads[g->s + d] : 0;
    }
    return OI_OK;
}

static int64_t oi__conv_effective_kernel(const oi__conv_geom *g, int d) { return (g->kernel[d] - 1) * g->dil[d] + 1; }

static void oi__conv_products(oi__conv_geom *g) {
    g->in_sp = oi__shape_numel(g->s, g->in);
    g->out_sp = oi__shape_numel(g->s, g->out);
    g->k_sp = oi__shape_numel(g->s, g->kernel);
}

/* Output size of a sliding window (conv, pools). SAME_*: the output is
 * ceil(in / stride) and the padding that takes is split, the odd one at
 * the end (UPPER) or the start (LOWER). ceil_mode rounds the count up but
 * drops a window that would start in the end padding. */
static oi_status oi__conv_window_out(const oi__kernel_args *k, oi__auto_pad mode, bool ceil_mode, oi__conv_geom *g) {
    for (int d = 0; d < g->s; d++) {
        int64_t eff = oi__conv_effective_kernel(g, d);
        if (mode == OI__AUTO_SAME_UPPER || mode == OI__AUTO_SAME_LOWER) {
            int64_t out = (g->in[d] + g->stride[d] - 1) / g->stride[d];
            int64_t total = (out - 1) * g->stride[d] + eff - g->in[d];
            total = total > 0 ? total : 0;
            g->pad_b[d] = mode == OI__AUTO_SAME_UPPER ? total / 2 : total - total / 2;
            g->pad_e[d] = total - g->pad_b[d];
        }
        int64_t span = g->in[d] + g->pad_b[d] + g->pad_e[d] - eff;
        if (span < 0)
            return oi__fail(OI_ERROR_VALIDATION, "%s: the window (%lld with dilation) is larger than spatial dim %d (%lld with padding)",
                            oi_op_name(k->op), (long long)eff, d, (long long)(span + eff));
        int64_t out = (ceil_mode ? (span + g->stride[d] - 1) / g->stride[d] : span / g->stride[d]) + 1;
        if (ceil_mode && (out - 1) * g->stride[d] >= g->in[d] + g->pad_b[d])
            out--;
        g->out[d] = out;
    }
    oi__conv_products(g);
    return OI_OK;
}

static int oi__conv_spatial_rank(oi_op op) { return op == OI_OP_conv1d ? 1 : 2; }

static oi_status oi__conv_bias_check(const oi__kernel_args *k, const oi__op_sig *bias, int64_t channels) {
    if (bias->ndim != 1 || bias->shape[0] != channels)
        return oi__fail(OI_ERROR_VALIDATION, "%s: the bias must have shape [%lld] (one per output channel)",
                        oi_op_name(k->op), (long long)channels);
    return OI_OK;
}

/* kernel_shape, when given, must agree with the weights. */
static oi_status oi__conv_kernel_check(const oi__kernel_args *k, const oi__conv_geom *g) {
    int64_t given[OI__CONV_MAX_SPATIAL];
    if (oi__conv_ints(k, "kernel_shape", g->s, 0, 1, given) != OI_OK)
        return OI_ERROR_VALIDATION;
    if (!oi__conv_attr(k, "kernel_shape"))
        return OI_OK;
    for (int d = 0; d < g->s; d++)
        if (given[d] != g->kernel[d])
            return oi__fail(OI_ERROR_VALIDATION, "%s: kernel_shape[%d] is %lld but the weights have %lld", oi_op_name(k->op),
                            d, (long long)given[d], (long long)g->kernel[d]);
    return OI_OK;
}

/* x [N, C, spatial...], w [M, C / group, kernel...], bias [M]. */
static oi_status oi__conv_geom_conv(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__conv_geom *g) {
    const char *name = oi_op_name(k->op);
    const oi__op_sig *x = &in[0], *w = &in[1];
    memset(g, 0, sizeof *g);
    g->s = oi__conv_spatial_rank(k->op);
    if (x->ndim != g->s + 2 || w->ndim != g->s + 2)
        return oi__fail(OI_ERROR_VALIDATION, "%s: x and w need rank %d ([N, C, spatial...]), got %d and %d", name, g->s + 2,
                        x->ndim, w->ndim);
    g->batch = x->shape[0];
    g->in_c = x->shape[1];
    g->out_c = w->shape[0];
    g->group = oi__conv_i64(k, "group");
    if (g->group < 1 || g->in_c % g->group != 0 || g->out_c % g->group != 0 || w->shape[1] * g->group != g->in_c)
        return oi__fail(OI_ERROR_VALIDATION,
                        "%s: x has %lld channels and w is [%lld, %lld, ...]: with group %lld, w needs [M, C / group, ...] "
                        "and both channel counts must divide by group",
                        name, (long long)g->in_c, (long long)g->out_c, (long long)w->shape[1], (long long)g->group);
    for (int d = 0; d < g->s; d++) {
        g->in[d] = x->shape[2 + d];
        g->kernel[d] = w->shape[2 + d];
        if (g->kernel[d] < 1)
            return oi__fail(OI_ERROR_VALIDATION, "%s: the kernel has an empty dim", name);
    }
    oi__auto_pad mode;
    if (oi__conv_kernel_check(k, g) || oi__conv_read_window(k, g, &mode) || oi__conv_window_out(k, mode, false, g))
        return OI_ERROR_VALIDATION;
    return n_in == 3 ? oi__conv_bias_check(k, &in[2], g->out_c) : OI_OK;
}

/* conv_transpose: x [N, C, spatial...], w [C, M / group, kernel...]. The
 * full output is stride * (in - 1) + output_padding + (kernel - 1) *
 * dilation + 1, less the pads; output_shape (or SAME_*) sets the pads. */
static oi_status oi__conv_geom_transpose(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__conv_geom *g) {
    const char *name = oi_op_name(k->op);
    const oi__op_sig *x = &in[0], *w = &in[1];
    memset(g, 0, sizeof *g);
    g->s = 2;
    if (x->ndim != 4 || w->ndim != 4)
        return oi__fail(OI_ERROR_VALIDATION, "%s: x and w need rank 4, got %d and %d", name, x->ndim, w->ndim);
    g->batch = x->shape[0];
    g->in_c = x->shape[1];
    g->group = oi__conv_i64(k, "group");
    if (g->group < 1 || g->in_c % g->group != 0 || w->shape[0] != g->in_c)
        return oi__fail(OI_ERROR_VALIDATION,
                        "%s: x has %lld channels and w is [%lld, %lld, ...]: w needs [C, M / group, ...] with C "
                        "divisible by group %lld",
                        name, (long long)g->in_c, (long long)w->shape[0], (long long)w->shape[1], (long long)g->group);
    g->out_c = w->shape[1] * g->group;
    int64_t out_pad[OI__CONV_MAX_SPATIAL], shape[OI__CONV_MAX_SPATIAL];
    for (int d = 0; d < g->s; d++) {
        g->in[d] = x->shape[2 + d];
        g->kernel[d] = w->shape[2 + d];
        if (g->kernel[d] < 1)
            return oi__fail(OI_ERROR_VALIDATION, "%s: the kernel has an empty dim", name);
    }
    oi__auto_pad mode;
    if (oi__conv_kernel_check(k, g) || oi__conv_read_window(k, g, &mode) ||
        oi__conv_ints(k, "output_padding", g->s, 0, 0, out_pad) || oi__conv_ints(k, "output_shape", g->s, 0, 1, shape))
        return OI_ERROR_VALIDATION;
    bool has_shape = oi__conv_attr(k, "output_shape") != NULL;
    for (int d = 0; d < g->s; d++) {
        int64_t full = g->stride[d] * (g->in[d] - 1) + out_pad[d] + oi__conv_effective_kernel(g, d);
        if (has_shape || mode == OI__AUTO_SAME_UPPER || mode == OI__AUTO_SAME_LOWER) {
            int64_t want = has_shape ? shape[d] : g->in[d] * g->stride[d];
            int64_t total = full - want, half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor */
            g->pad_b[d] = mode == OI__AUTO_SAME_UPPER ? half : total - half;
            g->pad_e[d] = total - g->pad_b[d];
        }
        g->out[d] = full - g->pad_b[d] - g->pad_e[d];
        if (g->in[d] < 1 || g->out[d] < 1)
            return oi__fail(OI_ERROR_VALIDATION, "%s: spatial dim %d gives an output of %lld", name, d,
                            (long long)g->out[d]);
    }
    oi__conv_products(g);
    return n_in == 3 ? oi__conv_bias_check(k, &in[2], g->out_c) : OI_OK;
}

static oi_status oi__conv_geom_pool(const oi__kernel_args *k, const oi__op_sig *x, oi__conv_geom *g) {
    const char *name = oi_op_name(k->op);
    memset(g, 0, sizeof *g);
    g->s = 2;
    if (x->ndim != g->s + 2)
        return oi__fail(OI_ERROR_VALIDATION, "%s: x needs rank %d ([N, C, H, W]), got %d", name, g->s + 2, x->ndim);
    g->batch = x->shape[0];
    g->in_c = g->out_c = x->shape[1];
    g->group = 1;
    for (int d = 0; d < g->s; d++)
        g->in[d] = x->shape[2 + d];
    oi__auto_pad mode;
    if (oi__conv_ints(k, "kernel_shape", g->s, 1, 1, g->kernel) || oi__conv_read_window(k, g, &mode))
        return OI_ERROR_VALIDATION;
    for (int d = 0; d < g->s; d++) /* else a window could hold nothing but padding */
        if (g->pad_b[d] >= oi__conv_effective_kernel(g, d) || g->pad_e[d] >= oi__conv_effective_kernel(g, d))
            return oi__fail(OI_ERROR_VALIDATION, "%s: pads on spatial dim %d must be smaller than the window (%lld)", name,
                            d, (long long)oi__conv_effective_kernel(g, d));
    return oi__conv_window_out(k, mode, oi__conv_i64(k, "ceil_mode") != 0, g);
}

/* gemm: A [M, K] (or [K, M] with trans_a), B [K, N] (or [N, K]), C
 * broadcastable to [M, N]. */
static oi_status oi__conv_gemm_dims(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, int64_t *m, int64_t *n,
                                    int64_t *kk) {
    const oi__op_sig *a = &in[0], *b = &in[1];
    if (a->ndim != 2 || b->ndim != 2)
        return oi__fail(OI_ERROR_VALIDATION, "gemm: A and B need rank 2, got %d and %d", a->ndim, b->ndim);
    bool ta = oi__op_param_bool(k, "trans_a"), tb = oi__op_param_bool(k, "trans_b");
    *m = a->shape[ta ? 1 : 0];
    *kk = a->shape[ta ? 0 : 1];
    *n = b->shape[tb ? 0 : 1];
    int64_t kb = b->shape[tb ? 1 : 0];
    if (kb != *kk)
        return oi__fail(OI_ERROR_VALIDATION, "gemm: inner dimensions differ (%lld vs %lld)", (long long)*kk, (long long)kb);
    if (n_in == 3) {
        const oi__op_sig *c = &in[2];
        bool fits = c->ndim <= 2;
        if (fits && c->ndim >= 1)
            fits = c->shape[c->ndim - 1] == 1 || c->shape[c->ndim - 1] == *n;
        if (fits && c->ndim == 2)
            fits = c->shape[0] == 1 || c->shape[0] == *m;
        if (!fits)
            return oi__fail(OI_ERROR_VALIDATION, "gemm: C does not broadcast to [%lld, %lld]", (long long)*m, (long long)*n);
    }
    return OI_OK;
}

/* gemm's activation=: applied to each finished block of the result. The
 * blas and Vulkan backends (same translation unit) read it here too; the
 * values are gemm_epilogue.comp's and conv.comp's codes. */
typedef enum oi__conv_act {
    OI__CONV_ACT_NONE, OI__CONV_ACT_RELU, OI__CONV_ACT_GELU, OI__CONV_ACT_GELU_TANH, OI__CONV_ACT_HARD_SWISH
} oi__conv_act;

/* The value validation let through (OI_PARAM_CHOICES lists the same five). */
static oi__conv_act oi__conv_act_of(const oi__kernel_args *k) {
    static const char *const names[] = {"none", "relu", "gelu", "gelu_tanh", "hard_swish"};
    const oi__attr *a = oi__conv_attr(k, "activation");
    for (int i = 0; a && i < 5; i++)
        if (strcmp(a->s, names[i]) == 0)
            return (oi__conv_act)i;
    return OI__CONV_ACT_NONE;
}

/* relu as max(0, x) (NaN stays NaN) in place: whole blocks of a fixed
 * count (they vectorize at -O2), compiled for the build's ISA and under
 * AVX2 and AVX-512 as elementwise.c's loops are, then the tail. */
#define OI__CONV_RELU_BODY \
    int64_t j = 0; \
    for (; j + 64 <= n; j += 64) { \
        float b[64]; \
        for (int i = 0; i < 64; i++) \
            b[i] = x[j + i] < 0.0f ? 0.0f : x[j + i]; \
        memcpy(x + j, b, sizeof b); \
    } \
    for (; j < n; j++) \
        x[j] = x[j] < 0.0f ? 0.0f : x[j];

static void oi__conv_relu_f32_base(float *x, int64_t n) { OI__CONV_RELU_BODY }
#if OI__GEMM_X86
OI__TARGET_AVX2 static void oi__conv_relu_f32_avx2(float *x, int64_t n) { OI__CONV_RELU_BODY }
OI__TARGET_AVX512 static void oi__conv_relu_f32_avx512(float *x, int64_t n) { OI__CONV_RELU_BODY }
#endif

static void oi__conv_relu_f32(float *x, int64_t n) {
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    if (isa == OI__GEMM_ISA_AVX512)
        oi__conv_relu_f32_avx512(x, n);
    else if (isa == OI__GEMM_ISA_AVX2)
        oi__conv_relu_f32_avx2(x, n);
    else
#endif
        oi__conv_relu_f32_base(x, n);
}

/* relu is max(0, x) (NaN stays NaN); gelu and hard_swish run their ops' own code. */
static void oi__conv_act_rows_f32(const void *ctx, float *c, int64_t ldc, int64_t rows, int64_t cols) {
    oi__conv_act act = *(const oi__conv_act *)ctx;
    for (int64_t i = 0; i < rows; i++) {
        float *row = c + i * ldc;
        if (act == OI__CONV_ACT_RELU)
            oi__conv_relu_f32(row, cols);
        else if (act == OI__CONV_ACT_HARD_SWISH)
            oi__ew_hard_f32(row, row, cols, (double)(float)(1.0 / 6.0), 0.5, true);
        else if (act != OI__CONV_ACT_NONE)
            oi__math_apply_f32(OI_OP_gelu, act == OI__CONV_ACT_GELU_TANH, row, cols);
    }
}

static void oi__conv_act_f64(oi__conv_act act, double *x, int64_t n) {
    if (act == OI__CONV_ACT_RELU)
        for (int64_t i = 0; i < n; i++)
            x[i] = x[i] < 0.0 ? 0.0 : x[i];
    else if (act == OI__CONV_ACT_HARD_SWISH)
        oi__ew_hard_f64(x, x, n, 1.0 / 6.0, 0.5, true);
    else if (act != OI__CONV_ACT_NONE)
        oi__math_apply_f64(OI_OP_gelu, act == OI__CONV_ACT_GELU_TANH, x, n);
}

static oi_status oi__k_conv_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out) {
    oi__conv_geom g;
    out->ndim = in[0].ndim;
    memcpy(out->shape, in[0].shape, sizeof out->shape);
    switch (k->op) {
    case OI_OP_gemm: {
        int64_t m, n, kk;
        if (oi__conv_gemm_dims(k, in, n_in, &m, &n, &kk) != OI_OK)
            return OI_ERROR_VALIDATION;
        out->shape[0] = m;
        out->shape[1] = n;
        return OI_OK;
    }
    case OI_OP_global_avg_pool:
        if (in[0].ndim < 3)
            return oi__fail(OI_ERROR_VALIDATION, "global_avg_pool: x needs rank >= 3 ([N, C, spatial...]), got %d", in[0].ndim);
        for (int d = 2; d < out->ndim; d++)
            out->shape[d] = 1;
        return OI_OK;
    case OI_OP_conv1d: case OI_OP_conv2d:
        if (oi__conv_geom_conv(k, in, n_in, &g) != OI_OK)
            return OI_ERROR_VALIDATION;
        break;
    case OI_OP_conv_transpose2d:
        if (oi__conv_geom_transpose(k, in, n_in, &g) != OI_OK)
            return OI_ERROR_VALIDATION;
        break;
    default:
        if (oi__conv_geom_pool(k, &in[0], &g) != OI_OK)
            return OI_ERROR_VALIDATION;
        break;
    }
    out->shape[1] = g.out_c;
    memcpy(out->shape + 2, g.out, sizeof(int64_t) * (size_t)g.s);
    return OI_OK;
}

oi_status oi__op_conv_window(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__op_sig *in, size_t n_in,
                             oi__conv_window *w) {
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    oi__conv_geom g;
    bool conv = op == OI_OP_conv1d || op == OI_OP_conv2d;
    if (!conv && op != OI_OP_max_pool2d && op != OI_OP_avg_pool2d && op != OI_OP_conv_transpose2d)
        return OI_ERROR_UNSUPPORTED;
    oi_status st = op == OI_OP_conv_transpose2d ? oi__conv_geom_transpose(&k, in, n_in, &g)
                   : conv                       ? oi__conv_geom_conv(&k, in, n_in, &g)
                                                : oi__conv_geom_pool(&k, &in[0], &g);
    if (st != OI_OK)
        return OI_ERROR_UNSUPPORTED;
    memset(w, 0, sizeof *w);
    w->s = g.s;
    w->batch = g.batch, w->in_c = g.in_c, w->out_c = g.out_c, w->group = g.group;
    for (int d = 0; d < g.s; d++) {
        w->in[d] = g.in[d], w->out[d] = g.out[d], w->kernel[d] = g.kernel[d];
        w->stride[d] = g.stride[d], w->dil[d] = g.dil[d], w->pad_b[d] = g.pad_b[d], w->pad_e[d] = g.pad_e[d];
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Dense buffers                                                       */
/* ------------------------------------------------------------------ */
/* Row-major elements as float, or double when `wide`. */
typedef struct oi__conv_buf {
    void *data;
    bool owned;
} oi__conv_buf;

#define OI__CONV_STACK_DOUBLES 1024 /* oi__conv_forward's patches up to 8 KB on the stack */

static size_t oi__conv_esize(bool wide) { return wide ? sizeof(double) : sizeof(float); }

/* Element i of a buffer (the const of operands is dropped: they are only read). */
static void *oi__conv_at(const void *p, bool wide, int64_t i) { return (char *)p + i * (int64_t)oi__conv_esize(wide); }

static double oi__conv_get(const void *p, bool wide, int64_t i) {
    return wide ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void oi__conv_put(void *p, bool wide, int64_t i, double v) {
    if (wide)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

static bool oi__conv_is_dense_as(const oi__tensor *t, bool wide) {
    return t->dtype == (wide ? OI_DTYPE_F64 : OI_DTYPE_F32) && oi__tensor_is_contiguous(t);
}

static void *oi__conv_scratch(int64_t count, bool wide) {
    return oi__malloc((size_t)(count > 0 ? count : 1) * oi__conv_esize(wide));
}

/* t's elements: its own memory when already dense f32/f64, else a copy. */
static oi_status oi__conv_dense(const oi__tensor *t, bool wide, oi__conv_buf *buf) {
    buf->owned = false;
    if (oi__conv_is_dense_as(t, wide)) {
        buf->data = oi__conv_at(oi__op_cdata(t), wide, t->offset);
        return OI_OK;
    }
    int64_t n = oi__shape_numel(t->ndim, t->shape), index[OI_MAX_DIMS] = {0};
    buf->data = oi__conv_scratch(n, wide);
    if (!buf->data)
        return OI_ERROR_OUT_OF_MEMORY;
    buf->owned = true;
    if (oi__tensor_is_contiguous(t)) { /* the common case: no index arithmetic, f32 <-> f64 directly */
        if (t->dtype == OI_DTYPE_F32 && wide)
            for (int64_t i = 0; i < n; i++)
                ((double *)buf->data)[i] = ((const float *)oi__op_cdata(t))[t->offset + i];
        else
            for (int64_t i = 0; i < n; i++)
                oi__conv_put(buf->data, wide, i, oi__load_f64(t->dtype, oi__op_cdata(t), t->offset + i));
        return OI_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t at = t->offset;
        for (int d = 0; d < t->ndim; d++)
            at += index[d] * t->strides[d];
        oi__conv_put(buf->data, wide, i, oi__load_f64(t->dtype, oi__op_cdata(t), at));
        for (int d = t->ndim - 1; d >= 0 && ++index[d] == t->shape[d]; d--)
            index[d] = 0;
    }
    return OI_OK;
}

/* Where results go: the output itself when dense f32/f64, else scratch
 * that oi__conv_finish rounds into it. */
static oi_status oi__conv_result(oi__tensor *out, bool wide, oi__conv_buf *buf) {
    buf->owned = false;
    if (oi__conv_is_dense_as(out, wide)) {
        buf->data = oi__conv_at(oi__tensor_data(out), wide, out->offset);
        return OI_OK;
    }
    buf->data = oi__conv_scratch(oi__shape_numel(out->ndim, out->shape), wide);
    buf->owned = buf->data != NULL;
    return buf->data ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

static void oi__conv_finish(oi__tensor *out, bool wide, oi__conv_buf *buf) {
    if (!buf->owned)
        return;
    int64_t n = oi__shape_numel(out->ndim, out->shape), index[OI_MAX_DIMS] = {0};
    if (oi__tensor_is_contiguous(out)) {
        if (out->dtype == OI_DTYPE_F32 && wide)
            for (int64_t i = 0; i < n; i++)
                ((float *)oi__tensor_data(out))[out->offset + i] = (float)((const double *)buf->data)[i];
        else
            for (int64_t i = 0; i < n; i++)
                oi__store_f64(out->dtype, oi__tensor_data(out), out->offset + i, oi__conv_get(buf->data, wide, i));
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t at = out->offset;
        for (int d = 0; d < out->ndim; d++)
            at += index[d] * out->strides[d];
        oi__store_f64(out->dtype, oi__tensor_data(out), at, oi__conv_get(buf->data, wide, i));
        for (int d = out->ndim - 1; d >= 0 && ++index[d] == out->shape[d]; d--)
            index[d] = 0;
    }
}

static void oi__conv_release(oi__conv_buf *buf) {
    if (buf->owned)
        oi__free(buf->data);
    buf->data = NULL;
    buf->owned = false;
}

/* C = alpha * op(A) op(B) + beta * C on f32 or f64 buffers (threaded). */
static oi_status oi__conv_gemm(bool wide, bool ta, bool tb, int64_t m, int64_t n, int64_t kk, double alpha, const void *a,
                               int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
    if (m == 0 || n == 0)
        return OI_OK;
    if (kk == 0) { /* no products: C = beta * C */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                oi__conv_put(c, wide, i * ldc + j, beta == 0.0 ? 0.0 : beta * oi__conv_get(c, wide, i * ldc + j));
        return OI_OK;
    }
    oi__threadpool *pool = oi__threadpool_default();
    if (wide)
        return oi__gemm_f64(pool, ta, tb, m, n, kk, alpha, (const double *)a, lda, (const double *)b, ldb, beta,
                            (double *)c, ldc);
    return oi__gemm_f32(pool, ta, tb, m, n, kk, (float)alpha, (const float *)a, lda, (const float *)b, ldb, (float)beta,
                        (float *)c, ldc);
}

/* ------------------------------------------------------------------ */
/* Few output channels over many positions                             */
/* ------------------------------------------------------------------ */
/* y[8 rows, n] += w[8 rows, k] x cols[k, n] with cols read as it lies: a
 * conv with few output channels and a short K (PP-OCR's stem: 8 x 2304 x
 * 27) spent as long packing cols for the gemm as multiplying it. Eight
 * columns a step, one accumulator per row, K in order with one FMA per
 * product, as the gemm's kernels add. */
#define OI__FEW_ROWS 8

#if OI__GEMM_X86
/* Whole blocks load and store plainly, the last partial one through the
 * mask: a masked store costs several times a plain one on AMD's cores, and
 * with eight of them per block the stores were 40% of the kernel's time. */
#define OI__FEW_LOAD(p) (whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, live))
#define OI__FEW_ACC(r) __m256 a##r = OI__FEW_LOAD(y + r * n + j);
#define OI__FEW_FMA(r) a##r = _mm256_fmadd_ps(_mm256_broadcast_ss(w + r * k + p), x, a##r);
#define OI__FEW_STORE(r) \
    if (whole) \
        _mm256_storeu_ps(y + r * n + j, a##r); \
    else \
        _mm256_maskstore_ps(y + r * n + j, live, a##r);
#define OI__FEW_EACH(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
OI__TARGET_AVX2 static inline __attribute__((always_inline)) void
oi__conv_few_rows_block_avx2(const float *w, int64_t k, const float *cols, int64_t n, float *y, int64_t j, bool whole,
                             __m256i live) {
    OI__FEW_EACH(OI__FEW_ACC)
    for (int64_t p = 0; p < k; p++) {
        __m256 x = OI__FEW_LOAD(cols + p * n + j);
        OI__FEW_EACH(OI__FEW_FMA)
    }
    OI__FEW_EACH(OI__FEW_STORE)
}
#undef OI__FEW_LOAD
#undef OI__FEW_ACC
#undef OI__FEW_FMA
#undef OI__FEW_STORE
#undef OI__FEW_EACH

OI__TARGET_AVX2 static void oi__conv_few_rows_avx2(const float *w, int64_t k, const float *cols, int64_t n, float *y,
                                                    int64_t first, int64_t end) {
    int64_t j = first;
    for (; j + 8 <= end; j += 8)
        oi__conv_few_rows_block_avx2(w, k, cols, n, y, j, true, _mm256_setzero_si256());
    if (j < end)
        oi__conv_few_rows_block_avx2(w, k, cols, n, y, j, false,
                                     _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(end - j)),
                                                        _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
}
#endif

typedef struct oi__few_rows_job {
    const float *w, *cols;
    float *y;
    int64_t rows, k, n;
} oi__few_rows_job;

/* Column blocks [first, end) of 8 (the last one partial), every row. */
static void oi__few_rows_range(void *ctx, int64_t first, int64_t end) {
    const oi__few_rows_job *j = (const oi__few_rows_job *)ctx;
    int64_t hi = end * 8 < j->n ? end * 8 : j->n;
#if OI__GEMM_X86
    for (int64_t r = 0; r < j->rows; r += OI__FEW_ROWS)
        oi__conv_few_rows_avx2(j->w + r * j->k, j->k, j->cols, j->n, j->y + r * j->n, first * 8, hi);
#else
    (void)hi;
#endif
}

/* Takes y += w x cols where the shape suits it (rows a multiple of 8, up to
 * 32; K up to 64; 256 columns or more; an AVX2 machine); false: the gemm's. */
static bool oi__conv_few_rows(int64_t rows, int64_t k, int64_t n, const float *w, const float *cols, float *y) {
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    if ((isa != OI__GEMM_ISA_AVX2 && isa != OI__GEMM_ISA_AVX512) || rows % OI__FEW_ROWS || rows > 32 || k > 64 ||
        n < 256)
        return false;
    oi__few_rows_job j = {w, cols, y, rows, k, n};
    oi__threadpool *pool = rows * k * n >= ((int64_t)1 << 16) ? oi__threadpool_default() : NULL;
    oi__threadpool_run_ranges(pool, (n + 7) / 8, 4, oi__few_rows_range, &j);
    return true;
#else
    (void)rows, (void)k, (void)n, (void)w, (void)cols, (void)y;
    return false;
#endif
}

/* ------------------------------------------------------------------ */
/* Window index tables                                                 */
/* ------------------------------------------------------------------ */
/* For each kernel position and each position q of the `from` grid: the
 * row-major index in the `to` grid of q * stride - pad + kernel * dilation,
 * or -1 where that falls outside (in the padding). conv and pools walk
 * from = output to = input; conv_transpose from = input to = output. */
static int64_t *oi__conv_targets(const oi__conv_geom *g, const int64_t *from, const int64_t *to) {
    int64_t from_sp = oi__shape_numel(g->s, from);
    int64_t *targets = (int64_t *)oi__malloc(sizeof(int64_t) * (size_t)(g->k_sp * from_sp > 0 ? g->k_sp * from_sp : 1));
    if (!targets)
        return NULL;
    int64_t kidx[OI__CONV_MAX_SPATIAL] = {0};
    for (int64_t kp = 0; kp < g->k_sp; kp++) {
        int64_t q_idx[OI__CONV_MAX_SPATIAL] = {0};
        for (int64_t q = 0; q < from_sp; q++) {
            int64_t at = 0;
            for (int d = 0; d < g->s && at >= 0; d++) {
                int64_t p = q_idx[d] * g->stride[d] - g->pad_b[d] + kidx[d] * g->dil[d];
                at = p < 0 || p >= to[d] ? -1 : at * to[d] + p;
            }
            targets[kp * from_sp + q] = at;
            for (int d = g->s - 1; d >= 0 && ++q_idx[d] == from[d]; d--)
                q_idx[d] = 0;
        }
        for (int d = g->s - 1; d >= 0 && ++kidx[d] == g->kernel[d]; d--)
            kidx[d] = 0;
    }
    return targets;
}

/* ------------------------------------------------------------------ */
/* Kernels                                                             */
/* ------------------------------------------------------------------ */
/* f64: y[r, q] += bias[first + r] (f32 starts from the bias instead:
 * oi__conv_fill_bias). */
static void oi__conv_add_bias_f64(const double *bias, int64_t first, int64_t rows, int64_t cols, double *y) {
    for (int64_t r = 0; r < rows; r++) {
        double b = bias[first + r], *row = y + r * cols;
        for (int64_t q = 0; q < cols; q++)
            row[q] += b;
    }
}

/* y[r, q] = bias[r] for rows x cols, in the ISA's lanes (GCC -O2 leaves
 * the plain loop scalar: it cannot tell y from bias). */
#if OI__GEMM_X86
OI__TARGET_AVX512 static void oi__conv_fill_bias_avx512(const float *bias, int64_t rows, int64_t cols, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        __m512 b = _mm512_set1_ps(bias[r]);
        float *row = y + r * cols;
        int64_t q = 0;
        for (; q + 16 <= cols; q += 16)
            _mm512_storeu_ps(row + q, b);
        if (q < cols)
            _mm512_mask_storeu_ps(row + q, (__mmask16)((1u << (cols - q)) - 1u), b);
    }
}

OI__TARGET_AVX2 static void oi__conv_fill_bias_avx2(const float *bias, int64_t rows, int64_t cols, float *y) {
    for (int64_t r = 0; r < rows; r++) {
        __m256 b = _mm256_set1_ps(bias[r]);
        float *row = y + r * cols;
        int64_t q = 0;
        for (; q + 8 <= cols; q += 8)
            _mm256_storeu_ps(row + q, b);
        for (; q < cols; q++)
            row[q] = bias[r];
    }
}
#endif

static void oi__conv_fill_bias(const float *bias, int64_t rows, int64_t cols, float *y) {
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    if (isa == OI__GEMM_ISA_AVX512) {
        oi__conv_fill_bias_avx512(bias, rows, cols, y);
        return;
    }
    if (isa == OI__GEMM_ISA_AVX2) {
        oi__conv_fill_bias_avx2(bias, rows, cols, y);
        return;
    }
#endif
    for (int64_t r = 0; r < rows; r++) {
        float b = bias[r], *row = y + r * cols;
        for (int64_t q = 0; q < cols; q++)
            row[q] = b;
    }
}

static bool oi__conv_is_pointwise(const oi__conv_geom *g) {
    for (int d = 0; d < g->s; d++)
        if (g->kernel[d] != 1 || g->stride[d] != 1 || g->pad_b[d] != 0 || g->pad_e[d] != 0)
            return false;
    return true;
}

/* ---- depthwise ----
 * One input channel per group (MobileNet's depthwise convs, conv1d's too):
 * a direct loop per output channel, threaded over images x channels,
 * instead of a tiny im2col + gemm per channel. f32 sums start from the
 * bias and follow the kernel's order. */
#define OI__DW_MAX_KW 64 /* column taps of the vector planes' per-tap masks */

typedef struct oi__dw_job {
    const oi__conv_geom *g;
    const float *x, *w, *bias;
    float *y;
    int64_t per_task; /* (image, output channel) pairs per task */
    oi__gemm_isa isa; /* AVX-512 / AVX2: column-stride-1 planes in vector lanes */
    oi__conv_act act; /* activation=, on each plane as it is finished */
} oi__dw_job;

/* The output columns [lo, hi) whose input column ox * stride + off is inside [0, width). */
static void oi__dw_columns(int64_t off, int64_t stride, int64_t width, int64_t out_w, int64_t *lo, int64_t *hi) {
    *lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
    *hi = width - 1 - off < 0 ? 0 : (width - 1 - off) / stride + 1;
    if (*hi > out_w)
        *hi = out_w;
}

static void oi__dw_plane(const oi__conv_geom *g, const float *x, const float *w, float b, float *y) {
    int two = g->s == 2, h = two ? 0 : -1, c = g->s - 1; /* dims of rows (if any) and columns */
    int64_t in_h = two ? g->in[h] : 1, in_w = g->in[c], out_h = two ? g->out[h] : 1, out_w = g->out[c];
    int64_t k_h = two ? g->kernel[h] : 1, k_w = g->kernel[c];
    for (int64_t oy = 0; oy < out_h; oy++) {
        float *row = y + oy * out_w;
        for (int64_t ox = 0; ox < out_w; ox++)
            row[ox] = b;
        for (int64_t ky = 0; ky < k_h; ky++) {
            int64_t iy = two ? oy * g->stride[h] - g->pad_b[h] + ky * g->dil[h] : 0;
            if (iy < 0 || iy >= in_h)
                continue;
            const float *src = x + iy * in_w;
            for (int64_t kx = 0; kx < k_w; kx++) {
                float wv = w[ky * k_w + kx];
                int64_t off = kx * g->dil[c] - g->pad_b[c], sw = g->stride[c], lo, hi;
                oi__dw_columns(off, sw, in_w, out_w, &lo, &hi);
                if (sw == 1)
                    for (int64_t ox = lo; ox < hi; ox++)
                        row[ox] += wv * src[ox + off];
                else
                    for (int64_t ox = lo; ox < hi; ox++)
                        row[ox] += wv * src[ox * sw + off];
            }
        }
    }
}

/* The same plane with output columns in vector lanes, for a column stride
 * of 1: each block of lanes starts from the bias and adds w * x per kernel
 * position in the scalar loop's order, a product then a sum (no FMA), and
 * only in the lanes whose input column is inside the row, so the result is
 * the scalar loop's bit for bit. Masked-off lanes are never loaded. */
#if OI__GEMM_X86
/* The input column block [ox0 + off, ...) of row src, possibly before its start: only
 * lanes in [lo, hi) are read. */
static const float *oi__dw_block_at(const float *src, int64_t at) {
    return (const float *)(const void *)((const char *)src + at * (int64_t)sizeof(float));
}

/* Output columns [lo, hi) whose every tap reads inside the input row. */
static void oi__dw_safe_columns(const oi__conv_geom *g, int64_t *lo, int64_t *hi) {
    int c = g->s - 1;
    int64_t off_min = -g->pad_b[c], off_max = (g->kernel[c] - 1) * g->dil[c] - g->pad_b[c];
    *lo = off_min < 0 ? -off_min : 0;
    *hi = g->in[c] - off_max < g->out[c] ? g->in[c] - off_max : g->out[c];
}

/* Inside [safe_lo, safe_hi) of an output row: NB blocks of lanes at once with
 * no masks (every lane's column is inside), the same product-then-sum per
 * lane in the same tap order as the masked blocks. Gives the columns done:
 * 0 when column ox0 is not where NB or 1 whole blocks fit. The loops over
 * the blocks are unrolled so that acc stays in registers at -O2. */
#define OI__DW_INNER(V, LANES, NB, SET1, LOADU, STOREU, ADD, MUL) \
    do { \
        int two = g->s == 2, h = two ? 0 : -1, c = g->s - 1; \
        int64_t in_h = two ? g->in[h] : 1, in_w = g->in[c], out_w = g->out[c]; \
        int64_t k_h = two ? g->kernel[h] : 1, k_w = g->kernel[c]; \
        int nb = ox0 >= safe_lo && ox0 + NB * LANES <= safe_hi ? NB : ox0 >= safe_lo && ox0 + LANES <= safe_hi ? 1 : 0; \
        if (!nb) \
            return 0; \
        V acc[NB]; \
        OI__SKINNY_UNROLL \
        for (int i = 0; i < NB; i++) \
            acc[i] = SET1(b); \
        for (int64_t ky = 0; ky < k_h; ky++) { \
            int64_t iy = two ? oy * g->stride[h] - g->pad_b[h] + ky * g->dil[h] : 0; \
            if (iy < 0 || iy >= in_h) \
                continue; \
            const float *src = x + iy * in_w + ox0; \
            for (int64_t kx = 0; kx < k_w; kx++) { \
                V wv = SET1(w[ky * k_w + kx]); \
                const float *at = src + kx * g->dil[c] - g->pad_b[c]; \
                if (nb == NB) \
                    OI__SKINNY_UNROLL \
                    for (int i = 0; i < NB; i++) \
                        acc[i] = ADD(acc[i], MUL(wv, LOADU(at + i * LANES))); \
                else \
                    acc[0] = ADD(acc[0], MUL(wv, LOADU(at))); \
            } \
        } \
        OI__SKINNY_UNROLL \
        for (int i = 0; i < NB; i++) \
            if (i < nb) \
                STOREU(y + oy * out_w + ox0 + i * LANES, acc[i]); \
        return nb * LANES; \
    } while (0)

OI__TARGET_AVX512 static int64_t oi__dw_plane_inner_avx512(const oi__conv_geom *g, const float *x, const float *w,
                                                           float b, float *y, int64_t oy, int64_t ox0, int64_t safe_lo,
                                                           int64_t safe_hi) {
    OI__DW_INNER(__m512, 16, 4, _mm512_set1_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_add_ps, _mm512_mul_ps);
}

OI__TARGET_AVX2 static int64_t oi__dw_plane_inner_avx2(const oi__conv_geom *g, const float *x, const float *w,
                                                       float b, float *y, int64_t oy, int64_t ox0, int64_t safe_lo,
                                                       int64_t safe_hi) {
    OI__DW_INNER(__m256, 8, 8, _mm256_set1_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_add_ps, _mm256_mul_ps);
}

/* The vector planes: the columns in runs of unmasked blocks (oi__dw_plane_inner_*)
 * where every tap is inside the row, the rest in masked blocks whose mask per
 * tap column is worked out once for all output rows. Column taps at most
 * OI__DW_MAX_KW (oi__conv_depthwise takes the portable loop beyond). */

OI__TARGET_AVX512 static void oi__dw_plane_avx512(const oi__conv_geom *g, const float *x, const float *w, float b,
                                                  float *y) {
    int two = g->s == 2, h = two ? 0 : -1, c = g->s - 1;
    int64_t in_h = two ? g->in[h] : 1, in_w = g->in[c], out_h = two ? g->out[h] : 1, out_w = g->out[c];
    int64_t k_h = two ? g->kernel[h] : 1, k_w = g->kernel[c];
    int64_t safe_lo, safe_hi;
    oi__dw_safe_columns(g, &safe_lo, &safe_hi);
    for (int64_t ox0 = 0, step; ox0 < out_w; ox0 += step) {
        step = oi__dw_plane_inner_avx512(g, x, w, b, y, 0, ox0, safe_lo, safe_hi);
        for (int64_t oy = 1; step && oy < out_h; oy++)
            oi__dw_plane_inner_avx512(g, x, w, b, y, oy, ox0, safe_lo, safe_hi);
        if (step)
            continue;
        step = 16;
        int64_t width = out_w - ox0 < 16 ? out_w - ox0 : 16;
        __mmask16 mk[OI__DW_MAX_KW]; /* lanes whose input column is inside the row, per tap column */
        for (int64_t kx = 0; kx < k_w; kx++) {
            int64_t off = kx * g->dil[c] - g->pad_b[c], lo, hi;
            oi__dw_columns(off, 1, in_w, out_w, &lo, &hi);
            lo = lo > ox0 ? lo - ox0 : 0;
            hi = hi < ox0 + width ? hi - ox0 : width;
            mk[kx] = lo >= hi ? (__mmask16)0 : (__mmask16)(((1u << hi) - 1u) & ~((1u << lo) - 1u));
        }
        for (int64_t oy = 0; oy < out_h; oy++) {
            __m512 acc = _mm512_set1_ps(b);
            for (int64_t ky = 0; ky < k_h; ky++) {
                int64_t iy = two ? oy * g->stride[h] - g->pad_b[h] + ky * g->dil[h] : 0;
                if (iy < 0 || iy >= in_h)
                    continue;
                const float *src = x + iy * in_w;
                for (int64_t kx = 0; kx < k_w; kx++) {
                    __mmask16 m = mk[kx];
                    if (!m)
                        continue;
                    __m512 v = _mm512_maskz_loadu_ps(m, oi__dw_block_at(src, ox0 + kx * g->dil[c] - g->pad_b[c]));
                    acc = _mm512_mask_add_ps(acc, m, acc, _mm512_mul_ps(_mm512_set1_ps(w[ky * k_w + kx]), v));
                }
            }
            _mm512_mask_storeu_ps(y + oy * out_w + ox0, (__mmask16)((1u << width) - 1u), acc);
        }
    }
}

OI__TARGET_AVX2 static void oi__dw_plane_avx2(const oi__conv_geom *g, const float *x, const float *w, float b,
                                              float *y) {
    int two = g->s == 2, h = two ? 0 : -1, c = g->s - 1;
    int64_t in_h = two ? g->in[h] : 1, in_w = g->in[c], out_h = two ? g->out[h] : 1, out_w = g->out[c];
    int64_t k_h = two ? g->kernel[h] : 1, k_w = g->kernel[c];
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int64_t safe_lo, safe_hi;
    oi__dw_safe_columns(g, &safe_lo, &safe_hi);
    for (int64_t ox0 = 0, step; ox0 < out_w; ox0 += step) {
        step = oi__dw_plane_inner_avx2(g, x, w, b, y, 0, ox0, safe_lo, safe_hi);
        for (int64_t oy = 1; step && oy < out_h; oy++)
            oi__dw_plane_inner_avx2(g, x, w, b, y, oy, ox0, safe_lo, safe_hi);
        if (step)
            continue;
        step = 8;
        int64_t width = out_w - ox0 < 8 ? out_w - ox0 : 8;
        __m256i mk[OI__DW_MAX_KW]; /* lanes lo <= i < hi: (i > lo - 1) and (hi > i), per tap column */
        bool any[OI__DW_MAX_KW];
        for (int64_t kx = 0; kx < k_w; kx++) {
            int64_t off = kx * g->dil[c] - g->pad_b[c], lo, hi;
            oi__dw_columns(off, 1, in_w, out_w, &lo, &hi);
            lo = lo > ox0 ? lo - ox0 : 0;
            hi = hi < ox0 + width ? hi - ox0 : width;
            any[kx] = lo < hi;
            mk[kx] = _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32((int)lo - 1)),
                                      _mm256_cmpgt_epi32(_mm256_set1_epi32((int)hi), lane));
        }
        __m256i out = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)width), lane);
        for (int64_t oy = 0; oy < out_h; oy++) {
            __m256 acc = _mm256_set1_ps(b);
            for (int64_t ky = 0; ky < k_h; ky++) {
                int64_t iy = two ? oy * g->stride[h] - g->pad_b[h] + ky * g->dil[h] : 0;
                if (iy < 0 || iy >= in_h)
                    continue;
                const float *src = x + iy * in_w;
                for (int64_t kx = 0; kx < k_w; kx++) {
                    if (!any[kx])
                        continue;
                    __m256 v = _mm256_maskload_ps(oi__dw_block_at(src, ox0 + kx * g->dil[c] - g->pad_b[c]), mk[kx]);
                    __m256 sum = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_set1_ps(w[ky * k_w + kx]), v));
                    acc = _mm256_blendv_ps(acc, sum, _mm256_castsi256_ps(mk[kx]));
                }
            }
            _mm256_maskstore_ps(y + oy * out_w + ox0, out, acc);
        }
    }
}
#endif

static void oi__dw_task(void *ctx, int task, int thread) {
    const oi__dw_job *j = (const oi__dw_job *)ctx;
    const oi__conv_geom *g = j->g;
    (void)thread;
    int64_t first = (int64_t)task * j->per_task, pairs = g->batch * g->out_c;
    int64_t end = first + j->per_task < pairs ? first + j->per_task : pairs, mult = g->out_c / g->in_c;
    for (int64_t p = first; p < end; p++) {
        int64_t n = p / g->out_c, oc = p % g->out_c;
        const float *x = j->x + (n * g->in_c + oc / mult) * g->in_sp, *w = j->w + oc * g->k_sp;
        float b = j->bias ? j->bias[oc] : 0.0f, *y = j->y + (n * g->out_c + oc) * g->out_sp;
#if OI__GEMM_X86
        if (j->isa == OI__GEMM_ISA_AVX512)
            oi__dw_plane_avx512(g, x, w, b, y);
        else if (j->isa == OI__GEMM_ISA_AVX2)
            oi__dw_plane_avx2(g, x, w, b, y);
        else
#endif
            oi__dw_plane(g, x, w, b, y);
        if (j->act != OI__CONV_ACT_NONE)
            oi__conv_act_rows_f32(&j->act, y, g->out_sp, 1, g->out_sp);
    }
}

static bool oi__conv_is_depthwise(const oi__conv_geom *g, bool wide) {
    return !wide && g->group == g->in_c && g->group > 1 && (g->s == 1 || g->s == 2);
}

static void oi__conv_depthwise(const oi__conv_geom *g, const float *x, const float *w, const float *bias, float *y,
                               oi__conv_act act) {
    oi__dw_job j = {g, x, w, bias, y, 0, OI__GEMM_ISA_PORTABLE, act};
    if (g->stride[g->s - 1] == 1 && g->out[g->s - 1] <= INT32_MAX && g->kernel[g->s - 1] <= OI__DW_MAX_KW)
        j.isa = oi__gemm_active_isa();
    int64_t pairs = g->batch * g->out_c;
    /* in vector lanes 2^16 multiply-adds take ~6 us, several times what the pool's spinning
     * workers need to join in: below that one thread */
    int64_t parallel_min = j.isa == OI__GEMM_ISA_PORTABLE ? (int64_t)1 << 15 : (int64_t)1 << 16;
    oi__threadpool *pool = pairs * g->out_sp * g->k_sp >= parallel_min ? oi__threadpool_default() : NULL;
    int64_t tasks = pool ? oi__threadpool_size(pool) * 8 : 1;
    if (tasks > pairs)
        tasks = pairs;
    j.per_task = (pairs + tasks - 1) / tasks;
    oi__threadpool_run(pool, (int)((pairs + j.per_task - 1) / j.per_task), oi__dw_task, &j);
}

/* im2col of a 2-D conv by rows, without the index table: for each channel
 * and kernel position, each output row is a zero row (its input row is in
 * the padding) or a strided copy of one input row between zero ends. The
 * same cols as oi__conv_im2col; the table cost more than the gemm for
 * PP-OCR's stem (27 x 2304 int64 written and read every step). */
#define OI__IM2COL_RUN \
    do { \
        for (int64_t ox = lo; ox < hi; ox++) \
            dst[ox] = src[ox * sw + off]; \
    } while (0)

static void oi__im2col_run_f32_base(const float *src, float *dst, int64_t sw, int64_t off, int64_t lo, int64_t hi) {
    OI__IM2COL_RUN;
}

#if OI__GEMM_X86
/* Stride 2 (PP-OCR's stem): 16 input columns make 8 outputs, the even lanes
 * of two loads picked by a shuffle and put in order by a permute. A load
 * never passes the row's end (`row_end`: columns left from src). */
OI__TARGET_AVX2 static void oi__im2col_run2_f32_avx2(const float *src, float *dst, int64_t off, int64_t lo, int64_t hi,
                                                      int64_t row_end) {
    int64_t ox = lo;
    for (; ox + 8 <= hi && 2 * ox + off + 16 <= row_end; ox += 8) {
        __m256 a = _mm256_loadu_ps(src + 2 * ox + off), b = _mm256_loadu_ps(src + 2 * ox + off + 8);
        __m256 even = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); /* a0 a2 b0 b2 | a4 a6 b4 b6 */
        __m256d order = _mm256_permute4x64_pd(_mm256_castps_pd(even), _MM_SHUFFLE(3, 1, 2, 0));
        _mm256_storeu_ps(dst + ox, _mm256_castpd_ps(order));
    }
    oi__im2col_run_f32_base(src, dst, 2, off, ox, hi);
}
#endif

/* dst[ox] = src[ox * sw + off] for ox in [lo, hi), src a row of in_w. */
static void oi__im2col_run_f32(const float *src, float *dst, int64_t sw, int64_t off, int64_t lo, int64_t hi,
                               int64_t in_w) {
    if (sw == 1 && hi > lo) {
        memcpy(dst + lo, src + lo + off, (size_t)(hi - lo) * sizeof(float));
        return;
    }
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    if (sw == 2 && (isa == OI__GEMM_ISA_AVX2 || isa == OI__GEMM_ISA_AVX512)) {
        oi__im2col_run2_f32_avx2(src, dst, off, lo, hi, in_w);
        return;
    }
#endif
    oi__im2col_run_f32_base(src, dst, sw, off, lo, hi);
}

static void oi__im2col_run_f64(const double *src, double *dst, int64_t sw, int64_t off, int64_t lo, int64_t hi) {
    OI__IM2COL_RUN;
}

/* The rows of channels * kernel rows [first, end) (pairs c * k_h + ky): each
 * kernel tap's output row is a strided run of x between zeroed edges (the
 * padding), or a zero row. A 1-D conv is one row high. */
static void oi__conv_im2col_pairs(const oi__conv_geom *g, bool wide, const void *x, int64_t first, int64_t end,
                                  void *cols) {
    int two = g->s == 2, c_dim = g->s - 1; /* a 1-D conv: rows of one, only the column dim */
    int64_t in_h = two ? g->in[0] : 1, in_w = g->in[c_dim], out_h = two ? g->out[0] : 1, out_w = g->out[c_dim];
    int64_t k_h = two ? g->kernel[0] : 1, k_w = g->kernel[c_dim], sw = g->stride[c_dim];
    int64_t s_h = two ? g->stride[0] : 1, p_h = two ? g->pad_b[0] : 0, d_h = two ? g->dil[0] : 1;
    size_t es = oi__conv_esize(wide);
    for (int64_t kx = 0; kx < k_w; kx++) { /* the tap's valid columns once, for every channel */
        int64_t off = kx * g->dil[c_dim] - g->pad_b[c_dim], lo, hi;
        oi__dw_columns(off, sw, in_w, out_w, &lo, &hi);
        lo = lo > out_w ? out_w : lo;
        hi = hi < lo ? lo : hi;
        for (int64_t pair = first; pair < end; pair++) {
            int64_t c = pair / k_h, ky = pair % k_h, row = (c * g->k_sp + ky * k_w + kx) * g->out_sp;
            for (int64_t oy = 0; oy < out_h; oy++) {
                char *dst = (char *)oi__conv_at(cols, wide, row + oy * out_w);
                int64_t iy = oy * s_h - p_h + ky * d_h;
                if (iy < 0 || iy >= in_h) {
                    memset(dst, 0, (size_t)out_w * es);
                    continue;
                }
                const void *src = oi__conv_at(x, wide, c * g->in_sp + iy * in_w);
                memset(dst, 0, (size_t)lo * es);
                if (wide)
                    oi__im2col_run_f64((const double *)src, (double *)dst, sw, off, lo, hi);
                else
                    oi__im2col_run_f32((const float *)src, (float *)dst, sw, off, lo, hi, in_w);
                memset(dst + (size_t)hi * es, 0, (size_t)(out_w - hi) * es);
            }
        }
    }
}

typedef struct oi__im2col_job {
    const oi__conv_geom *g;
    bool wide;
    const void *x;
    void *cols;
} oi__im2col_job;

static void oi__im2col_range(void *ctx, int64_t first, int64_t end) {
    const oi__im2col_job *j = (const oi__im2col_job *)ctx;
    oi__conv_im2col_pairs(j->g, j->wide, j->x, first, end, j->cols);
}

/* im2col by rows for 1-D and 2-D convs, split over the pool by channel and
 * kernel row when large (PP-OCR's stem: 62,000 entries). */
static void oi__conv_im2col_rows(const oi__conv_geom *g, bool wide, const void *x, int64_t channels, void *cols) {
    oi__im2col_job j = {g, wide, x, cols};
    oi__threadpool *pool = channels * g->k_sp * g->out_sp >= ((int64_t)1 << 15) ? oi__threadpool_default() : NULL;
    oi__threadpool_run_ranges(pool, channels * (g->s == 2 ? g->kernel[0] : 1), 1, oi__im2col_range, &j);
}

/* A 1-D conv's patch q without dilation: taps [lo, hi) of every channel,
 * short runs by a loop (a memcpy call each cost more than its 3-12 bytes),
 * x's index computed whole (ix0 + kx may be before the row's start only
 * for taps outside [lo, hi), which make no pointer). */
#define OI__CONV_PATCH_TAPS(T) \
    do { \
        T *dst = (T *)patches + q * rows; \
        const T *src = (const T *)x; \
        for (int64_t c = 0; c < channels; c++) { \
            if (hi - lo >= 16) \
                memcpy(dst + c * k_w + lo, src + c * in_w + ix0 + lo, (size_t)(hi - lo) * sizeof(T)); \
            else \
                for (int64_t kx = lo; kx < hi; kx++) \
                    dst[c * k_w + kx] = src[c * in_w + ix0 + kx]; \
        } \
    } while (0)

/* The transpose of oi__conv_im2col_rows's cols, for convs with a few
 * output positions (a streaming model's: 1-4): each position's patch
 * contiguous, patches[q, c * k_sp + ky * k_w + kx], which is the gemm's
 * small operand as it reads it (no gather, no transposing copy), and a
 * run of x per kernel row. Padding entries stay as zeroed by the caller. */
static void oi__conv_patches(const oi__conv_geom *g, bool wide, const void *x, int64_t channels, void *patches) {
    int two = g->s == 2, c_dim = g->s - 1;
    int64_t in_h = two ? g->in[0] : 1, in_w = g->in[c_dim], out_w = g->out[c_dim];
    int64_t k_h = two ? g->kernel[0] : 1, k_w = g->kernel[c_dim], dil = g->dil[c_dim], rows = channels * g->k_sp;
    size_t es = oi__conv_esize(wide);
    for (int64_t q = 0; q < g->out_sp; q++) {
        int64_t oy = q / out_w, ox = q % out_w, ix0 = ox * g->stride[c_dim] - g->pad_b[c_dim];
        /* the taps kx whose column ix0 + kx * dil is inside the row: [lo, hi) */
        int64_t lo = ix0 >= 0 ? 0 : (-ix0 + dil - 1) / dil, hi = in_w - 1 - ix0 < 0 ? 0 : (in_w - 1 - ix0) / dil + 1;
        hi = hi < k_w ? hi : k_w;
        if (!two && dil == 1) { /* 1-D: a loop over each channel's taps (a memcpy call each cost more than its 3-12 bytes) */
            if (wide)
                OI__CONV_PATCH_TAPS(double);
            else
                OI__CONV_PATCH_TAPS(float);
            continue;
        }
        for (int64_t c = 0; c < channels; c++)
            for (int64_t ky = 0; ky < k_h; ky++) {
                int64_t iy = two ? oy * g->stride[0] - g->pad_b[0] + ky * g->dil[0] : 0;
                if (iy < 0 || iy >= in_h || lo >= hi)
                    continue;
                char *dst = (char *)patches + (size_t)(q * rows + c * g->k_sp + ky * k_w) * es;
                /* where tap 0 would read: before the row's start when padded (ix0 < 0),
                 * so only base + kx * dil for the taps in [lo, hi) makes a pointer */
                int64_t base = c * g->in_sp + iy * in_w + ix0;
                if (dil == 1)
                    memcpy(dst + (size_t)lo * es, (const char *)x + (size_t)(base + lo) * es, (size_t)(hi - lo) * es);
                else
                    for (int64_t kx = lo; kx < hi; kx++)
                        memcpy(dst + (size_t)kx * es, (const char *)x + (size_t)(base + kx * dil) * es, es);
            }
    }
}

/* Per image and group: y[M/g, out] = w[M/g, C/g * k] x cols[C/g * k, out]
 * (a 1x1 stride-1 conv multiplies x itself). */
/* conv's activation= on rows x cols of y (in the element type, before the
 * store rounds to f16/bf16), as gemm applies it; split by rows over the
 * pool when large, as the elementwise ops are. */
typedef struct oi__conv_act_job {
    oi__conv_act act;
    bool wide;
    void *y;
    int64_t cols;
} oi__conv_act_job;

static void oi__conv_act_range(void *ctx, int64_t first, int64_t end) {
    const oi__conv_act_job *j = (const oi__conv_act_job *)ctx;
    void *at = oi__conv_at(j->y, j->wide, first * j->cols);
    if (j->wide)
        oi__conv_act_f64(j->act, (double *)at, (end - first) * j->cols);
    else
        oi__conv_act_rows_f32(&j->act, (float *)at, j->cols, end - first, j->cols);
}

static void oi__conv_act_apply(oi__conv_act act, bool wide, void *y, int64_t rows, int64_t cols) {
    if (act == OI__CONV_ACT_NONE || rows * cols == 0)
        return;
    oi__conv_act_job j = {act, wide, y, cols};
    oi__threadpool *pool = rows * cols >= ((int64_t)1 << 16) ? oi__threadpool_default() : NULL;
    oi__threadpool_run_ranges(pool, rows, 4, oi__conv_act_range, &j);
}

static oi_status oi__conv_forward(const oi__kernel_args *k, const oi__conv_geom *g) {
    bool wide = k->out->dtype == OI_DTYPE_F64, pointwise = oi__conv_is_pointwise(g);
    oi__conv_act act = oi__conv_act_of(k);
    int64_t cg = g->in_c / g->group, mg = g->out_c / g->group, rows = cg * g->k_sp;
    oi__conv_buf x = {NULL, false}, w = {NULL, false}, bias = {NULL, false}, y = {NULL, false};
    void *cols = NULL;
    oi_status s = oi__conv_dense(k->in[0], wide, &x);
    if (s == OI_OK)
        s = oi__conv_dense(k->in[1], wide, &w);
    if (s == OI_OK && k->n_in == 3)
        s = oi__conv_dense(k->in[2], wide, &bias);
    if (s == OI_OK)
        s = oi__conv_result(k->out, wide, &y);
    if (s == OI_OK && oi__conv_is_depthwise(g, wide)) {
        oi__conv_depthwise(g, (const float *)x.data, (const float *)w.data, (const float *)bias.data, (float *)y.data,
                           act);
        oi__conv_finish(k->out, wide, &y);
        oi__conv_release(&x), oi__conv_release(&w), oi__conv_release(&bias), oi__conv_release(&y);
        return OI_OK;
    }
    /* a few output positions: their patches (the gemm's small side); else im2col by rows */
    bool by_patch = !pointwise && g->out_sp <= 4;
    double on_stack[OI__CONV_STACK_DOUBLES]; /* a streaming model's patches: a few KB, not worth the heap */
    size_t cols_bytes = (size_t)(rows * g->out_sp) * oi__conv_esize(wide);
    if (s == OI_OK && !pointwise) {
        cols = cols_bytes <= sizeof on_stack ? (void *)on_stack : oi__conv_scratch(rows * g->out_sp, wide);
        s = cols ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
        if (cols && by_patch) /* the padding's entries, never written by oi__conv_patches */
            memset(cols, 0, (size_t)(rows * g->out_sp) * oi__conv_esize(wide));
    }
    for (int64_t n = 0; n < g->batch && s == OI_OK; n++)
        for (int64_t grp = 0; grp < g->group && s == OI_OK; grp++) {
            const void *xg = oi__conv_at(x.data, wide, (n * g->in_c + grp * cg) * g->in_sp);
            void *yg = oi__conv_at(y.data, wide, (n * g->out_c + grp * mg) * g->out_sp);
            if (by_patch)
                oi__conv_patches(g, wide, xg, cg, cols);
            else if (!pointwise)
                oi__conv_im2col_rows(g, wide, xg, cg, cols);
            /* f32: the bias is C's start and the gemm adds its sums to it (beta 1, a
             * product by 1 is exact), the add op's one rounding of sum + bias without
             * reading y back; f64 adds it after */
            bool bias_first = bias.data && !wide;
            if (bias_first)
                oi__conv_fill_bias((const float *)bias.data + grp * mg, mg, g->out_sp, (float *)yg);
            const void *wg = oi__conv_at(w.data, wide, grp * mg * rows), *colsg = pointwise ? xg : cols;
            if (!(bias_first && !by_patch && oi__conv_few_rows(mg, rows, g->out_sp, (const float *)wg,
                                                               (const float *)colsg, (float *)yg)))
                s = oi__conv_gemm(wide, false, by_patch, mg, g->out_sp, rows, 1.0, wg, rows, colsg,
                                  by_patch ? rows : g->out_sp, bias_first ? 1.0 : 0.0, yg, g->out_sp);
            if (bias.data && !bias_first)
                oi__conv_add_bias_f64((const double *)bias.data, grp * mg, mg, g->out_sp, (double *)yg);
            if (s == OI_OK) /* while the group's rows are still in cache */
                oi__conv_act_apply(act, wide, yg, mg, g->out_sp);
        }
    if (s == OI_OK)
        oi__conv_finish(k->out, wide, &y);
    if (cols != (void *)on_stack)
        oi__free(cols);
    oi__conv_release(&x), oi__conv_release(&w), oi__conv_release(&bias), oi__conv_release(&y);
    return s;
}

/* Per image and group: cols[M/g * k, in] = w_g^T x x_g, then each column
 * entry is added at its output position (col2im), in f64. */
static oi_status oi__conv_transpose(const oi__kernel_args *k, const oi__conv_geom *g) {
    bool wide = k->out->dtype == OI_DTYPE_F64;
    int64_t cg = g->in_c / g->group, mg = g->out_c / g->group, rows = mg * g->k_sp;
    oi__conv_buf x = {NULL, false}, w = {NULL, false}, bias = {NULL, false}, y = {NULL, false};
    oi_status s = oi__conv_dense(k->in[0], wide, &x);
    if (s == OI_OK)
        s = oi__conv_dense(k->in[1], wide, &w);
    if (s == OI_OK && k->n_in == 3)
        s = oi__conv_dense(k->in[2], true, &bias);
    if (s == OI_OK)
        s = oi__conv_result(k->out, true, &y);
    int64_t *targets = s == OI_OK ? oi__conv_targets(g, g->in, g->out) : NULL;
    void *cols = targets ? oi__conv_scratch(rows * g->in_sp, wide) : NULL;
    if (s == OI_OK && !cols)
        s = OI_ERROR_OUT_OF_MEMORY;
    for (int64_t n = 0; n < g->batch && s == OI_OK; n++)
        for (int64_t grp = 0; grp < g->group && s == OI_OK; grp++) {
            const void *xg = oi__conv_at(x.data, wide, (n * g->in_c + grp * cg) * g->in_sp);
            double *yg = (double *)y.data + (n * g->out_c + grp * mg) * g->out_sp;
            s = oi__conv_gemm(wide, true, false, rows, g->in_sp, cg, 1.0, oi__conv_at(w.data, wide, grp * cg * rows), rows,
                              xg, g->in_sp, 0.0, cols, g->in_sp);
            for (int64_t m = 0; m < mg && s == OI_OK; m++) {
                double *plane = yg + m * g->out_sp, b = bias.data ? ((const double *)bias.data)[grp * mg + m] : 0.0;
                for (int64_t q = 0; q < g->out_sp; q++)
                    plane[q] = b;
                for (int64_t kp = 0; kp < g->k_sp; kp++) {
                    const int64_t *t = targets + kp * g->in_sp;
                    int64_t row = (m * g->k_sp + kp) * g->in_sp;
                    for (int64_t q = 0; q < g->in_sp; q++)
                        if (t[q] >= 0)
                            plane[t[q]] += oi__conv_get(cols, wide, row + q);
                }
            }
        }
    if (s == OI_OK)
        oi__conv_finish(k->out, true, &y);
    oi__free(targets);
    oi__free(cols);
    oi__conv_release(&x), oi__conv_release(&w), oi__conv_release(&bias), oi__conv_release(&y);
    return s;
}

/* avg_pool's divisor per output position: the window positions inside
 * the input (count_include_pad false) or inside input + pads (true). */
/* ---- f32 pooling read in place ----
 * A dense f32 input used to be copied to f64 first; max is exact either way,
 * and the average still sums in f64 (in lanes: the order of the f64 sums
 * changes, not the precision). */

#if OI__GEMM_X86
/* One output row of a max pool, 16 columns at a time: the window's columns
 * gathered (any stride and dilation), lanes outside the row left out. */
OI__TARGET_AVX512 static void oi__conv_max_row_avx512(const oi__conv_geom *g, const float *plane, int64_t oy, float *out) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (int64_t ox0 = 0; ox0 < g->out[1]; ox0 += 16) {
        int64_t width = g->out[1] - ox0 < 16 ? g->out[1] - ox0 : 16;
        __mmask16 live = (__mmask16)((1u << width) - 1u);
        __m512 m = _mm512_set1_ps(-INFINITY);
        for (int64_t ky = 0; ky < g->kernel[0]; ky++) {
            int64_t iy = oy * g->stride[0] - g->pad_b[0] + ky * g->dil[0];
            if (iy < 0 || iy >= g->in[0])
                continue;
            for (int64_t kx = 0; kx < g->kernel[1]; kx++) {
                int64_t first = ox0 * g->stride[1] - g->pad_b[1] + kx * g->dil[1];
                __m512i ix = _mm512_add_epi32(_mm512_set1_epi32((int)first),
                                              _mm512_mullo_epi32(lane, _mm512_set1_epi32((int)g->stride[1])));
                __mmask16 in = live & _mm512_cmpge_epi32_mask(ix, _mm512_setzero_si512()) &
                               _mm512_cmplt_epi32_mask(ix, _mm512_set1_epi32((int)g->in[1]));
                __m512 v = _mm512_mask_i32gather_ps(_mm512_set1_ps(-INFINITY), in, ix, plane + iy * g->in[1], 4);
                /* v wins where m is not NaN and (v > m or v is NaN): once NaN, stays NaN */
                __mmask16 take = _mm512_cmp_ps_mask(m, m, _CMP_ORD_Q) &
                                 (_mm512_cmp_ps_mask(v, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q));
                m = _mm512_mask_mov_ps(m, take, v);
            }
        }
        _mm512_mask_storeu_ps(out + ox0, live, m);
    }
}

/* The tap of 8 output columns at input columns first, first + s, ... when
 * all of them and their neighbours up to the last are inside the row:
 * plain loads for s = 1 and 2 (even lanes of two vectors), which on AMD's
 * cores cost a fraction of a gather; false: the caller gathers. */
OI__TARGET_AVX2 static inline bool oi__max_tap_loads_avx2(const float *row, int64_t width, int64_t first, int64_t s,
                                                         __m256 *v) {
    if (first < 0 || (s != 1 && s != 2) || first + 8 * s > width)
        return false;
    if (s == 1) {
        *v = _mm256_loadu_ps(row + first);
        return true;
    }
    __m256 even = _mm256_shuffle_ps(_mm256_loadu_ps(row + first), _mm256_loadu_ps(row + first + 8), 0x88);
    *v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), 0xD8)); /* 64-bit pairs 0, 2, 1, 3 */
    return true;
}

/* The same in AVX2's 8 lanes: the gather's mask is a vector, the NaN test a blend. */
OI__TARGET_AVX2 static void oi__conv_max_row_avx2(const oi__conv_geom *g, const float *plane, int64_t oy, float *out) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int64_t ox0 = 0; ox0 < g->out[1]; ox0 += 8) {
        int64_t width = g->out[1] - ox0 < 8 ? g->out[1] - ox0 : 8;
        __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)width), lane);
        __m256 m = _mm256_set1_ps(-INFINITY);
        for (int64_t ky = 0; ky < g->kernel[0]; ky++) {
            int64_t iy = oy * g->stride[0] - g->pad_b[0] + ky * g->dil[0];
            if (iy < 0 || iy >= g->in[0])
                continue;
            for (int64_t kx = 0; kx < g->kernel[1]; kx++) {
                int64_t first = ox0 * g->stride[1] - g->pad_b[1] + kx * g->dil[1];
                __m256i ix = _mm256_add_epi32(_mm256_set1_epi32((int)first),
                                              _mm256_mullo_epi32(lane, _mm256_set1_epi32((int)g->stride[1])));
                __m256i in = _mm256_and_si256(live, _mm256_and_si256(_mm256_cmpgt_epi32(ix, _mm256_set1_epi32(-1)),
                                                                     _mm256_cmpgt_epi32(_mm256_set1_epi32((int)g->in[1]), ix)));
                __m256 v;
                if (width < 8 || !oi__max_tap_loads_avx2(plane + iy * g->in[1], g->in[1], first, g->stride[1], &v))
                    v = _mm256_mask_i32gather_ps(_mm256_set1_ps(-INFINITY), plane + iy * g->in[1], ix,
                                                 _mm256_castsi256_ps(in), 4);
                __m256 take = _mm256_and_ps(_mm256_cmp_ps(m, m, _CMP_ORD_Q),
                                            _mm256_or_ps(_mm256_cmp_ps(v, m, _CMP_GT_OQ), _mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
                m = _mm256_blendv_ps(m, v, take);
            }
        }
        _mm256_maskstore_ps(out + ox0, live, m);
    }
}
#endif

/* max_pool2d on dense f32: false when the tensors are not (the f64 path runs). */
/* Max over each window of planes [first, end), NaN-propagating. */
static void oi__conv_max_planes_f32(const oi__conv_geom *g, const float *x, float *y, int64_t first, int64_t end) {
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    if ((isa == OI__GEMM_ISA_AVX512 || isa == OI__GEMM_ISA_AVX2) && g->in[1] * g->stride[1] < INT32_MAX / 2 &&
        g->kernel[1] * g->dil[1] < INT32_MAX / 2) {
        for (int64_t p = first; p < end; p++)
            for (int64_t oy = 0; oy < g->out[0]; oy++) {
                const float *plane = x + p * g->in[0] * g->in[1];
                float *row = y + (p * g->out[0] + oy) * g->out[1];
                if (isa == OI__GEMM_ISA_AVX512)
                    oi__conv_max_row_avx512(g, plane, oy, row);
                else
                    oi__conv_max_row_avx2(g, plane, oy, row);
            }
        return;
    }
#endif
    for (int64_t p = first; p < end; p++)
        for (int64_t oy = 0; oy < g->out[0]; oy++)
            for (int64_t ox = 0; ox < g->out[1]; ox++) {
                float m = -INFINITY;
                for (int64_t ky = 0; ky < g->kernel[0]; ky++) {
                    int64_t iy = oy * g->stride[0] - g->pad_b[0] + ky * g->dil[0];
                    if (iy < 0 || iy >= g->in[0])
                        continue;
                    for (int64_t kx = 0; kx < g->kernel[1]; kx++) {
                        int64_t ix = ox * g->stride[1] - g->pad_b[1] + kx * g->dil[1];
                        float v = ix < 0 || ix >= g->in[1] ? -INFINITY : x[(p * g->in[0] + iy) * g->in[1] + ix];
                        if (m == m && (v > m || v != v)) /* once NaN, stays NaN */
                            m = v;
                    }
                }
                y[(p * g->out[0] + oy) * g->out[1] + ox] = m;
            }
}

typedef struct oi__max_pool_job {
    const oi__conv_geom *g;
    const float *x;
    float *y;
} oi__max_pool_job;

static void oi__max_pool_range(void *ctx, int64_t first, int64_t end) {
    const oi__max_pool_job *j = (const oi__max_pool_job *)ctx;
    oi__conv_max_planes_f32(j->g, j->x, j->y, first, end);
}

/* f32 max pools, split by planes over the pool when large (PP-OCR's last
 * pool: 200 planes). */
static bool oi__conv_max_pool_f32(const oi__kernel_args *k, const oi__conv_geom *g) {
    if (k->op != OI_OP_max_pool2d || g->s != 2 || !oi__conv_is_dense_as(k->in[0], false) ||
        !oi__conv_is_dense_as(k->out, false))
        return false;
    int64_t planes = g->batch * g->in_c;
    oi__max_pool_job j = {g, (const float *)oi__op_cdata(k->in[0]) + k->in[0]->offset,
                          (float *)oi__tensor_data(k->out) + k->out->offset};
    oi__threadpool *pool = planes * g->out_sp * g->k_sp >= ((int64_t)1 << 14) ? oi__threadpool_default() : NULL;
    oi__threadpool_run_ranges(pool, planes, 1, oi__max_pool_range, &j);
    return true;
}

/* The synthesizer copies this region into oi_gemm.h: the emitted
 * global_avg_pool sums its planes with this code (isa: 2 AVX-512, 1 AVX2,
 * 0 the build's), so it gives the simulator's bits. */
/* synth-embed begin (oi_gemm.h: global_avg_pool's f64 sums of f32 planes) */
/* sum of n floats in f64 */
static inline double oi__conv_sum_f32_plain(const float *x, int64_t n) {
    double part[4] = {0, 0, 0, 0}, sum = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int l = 0; l < 4; l++)
            part[l] += x[i + l];
    for (; i < n; i++)
        sum += x[i];
    return sum + ((part[0] + part[1]) + (part[2] + part[3]));
}

#if OI__GEMM_X86
OI__TARGET_AVX512 static inline double oi__conv_sum_f32_avx512(const float *x, int64_t n) {
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm512_add_pd(a0, _mm512_maskz_cvtps_pd((__mmask8)0xFF, _mm256_loadu_ps(x + i)));
        a1 = _mm512_add_pd(a1, _mm512_maskz_cvtps_pd((__mmask8)0xFF, _mm256_loadu_ps(x + i + 8)));
    }
    double sum = oi__v512_sum_pd(_mm512_add_pd(a0, a1));
    for (; i < n; i++)
        sum += x[i];
    return sum;
}

OI__TARGET_AVX2 static inline double oi__conv_sum_f32_avx2(const float *x, int64_t n) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
    }
    __m256d a = _mm256_add_pd(a0, a1);
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    double sum = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
    for (; i < n; i++)
        sum += x[i];
    return sum;
}
#endif

OI__EW_ENTRY double oi__conv_sum_f32_at(int isa, const float *x, int64_t n) {
#if OI__GEMM_X86
    if (isa == 2)
        return oi__conv_sum_f32_avx512(x, n);
    if (isa == 1)
        return oi__conv_sum_f32_avx2(x, n);
#endif
    (void)isa;
    return oi__conv_sum_f32_plain(x, n);
}
/* synth-embed end */

static double oi__conv_sum_f32(const float *x, int64_t n) {
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    return oi__conv_sum_f32_at(isa == OI__GEMM_ISA_AVX512 ? 2 : isa == OI__GEMM_ISA_AVX2 ? 1 : 0, x, n);
#else
    return oi__conv_sum_f32_plain(x, n);
#endif
}

static void oi__conv_pool_divisors(const oi__conv_geom *g, const int64_t *targets, bool include_pad, double *div) {
    if (!include_pad) {
        for (int64_t q = 0; q < g->out_sp; q++)
            div[q] = 0;
        for (int64_t kp = 0; kp < g->k_sp; kp++)
            for (int64_t q = 0; q < g->out_sp; q++)
                div[q] += targets[kp * g->out_sp + q] >= 0;
        return;
    }
    int64_t q_idx[OI__CONV_MAX_SPATIAL] = {0};
    for (int64_t q = 0; q < g->out_sp; q++) {
        double count = 1;
        for (int d = 0; d < g->s; d++) {
            int64_t inside = 0;
            for (int64_t kd = 0; kd < g->kernel[d]; kd++) {
                int64_t p = q_idx[d] * g->stride[d] - g->pad_b[d] + kd * g->dil[d];
                inside += p >= -g->pad_b[d] && p < g->in[d] + g->pad_e[d];
            }
            count *= (double)inside;
        }
        div[q] = count;
        for (int d = g->s - 1; d >= 0 && ++q_idx[d] == g->out[d]; d--)
            q_idx[d] = 0;
    }
}

/* max: NaN wins (it propagates); padding is ignored. avg: sum / divisor. */
static oi_status oi__conv_pool(const oi__kernel_args *k, const oi__conv_geom *g) {
    if (oi__conv_max_pool_f32(k, g))
        return OI_OK;
    bool is_max = k->op == OI_OP_max_pool2d;
    oi__conv_buf x = {NULL, false}, y = {NULL, false};
    oi_status s = oi__conv_dense(k->in[0], true, &x);
    if (s == OI_OK)
        s = oi__conv_result(k->out, true, &y);
    int64_t *targets = s == OI_OK ? oi__conv_targets(g, g->out, g->in) : NULL;
    double *div = targets && !is_max ? (double *)oi__conv_scratch(g->out_sp, true) : NULL;
    if (s == OI_OK && (!targets || (!is_max && !div)))
        s = OI_ERROR_OUT_OF_MEMORY;
    if (s == OI_OK && div)
        oi__conv_pool_divisors(g, targets, oi__conv_i64(k, "count_include_pad") != 0, div);
    int64_t planes = g->batch * g->in_c;
    for (int64_t p = 0; p < planes && s == OI_OK; p++) {
        const double *src = (const double *)x.data + p * g->in_sp;
        double *dst = (double *)y.data + p * g->out_sp;
        for (int64_t q = 0; q < g->out_sp; q++)
            dst[q] = is_max ? -INFINITY : 0.0;
        for (int64_t kp = 0; kp < g->k_sp; kp++) {
            const int64_t *t = targets + kp * g->out_sp;
            for (int64_t q = 0; q < g->out_sp; q++) {
                if (t[q] < 0)
                    continue;
                double v = src[t[q]];
                if (!is_max)
                    dst[q] += v;
                else if (dst[q] == dst[q] && (v > dst[q] || v != v)) /* once NaN, stays NaN */
                    dst[q] = v;
            }
        }
        for (int64_t q = 0; q < g->out_sp && div; q++)
            dst[q] /= div[q];
    }
    if (s == OI_OK)
        oi__conv_finish(k->out, true, &y);
    oi__free(targets);
    oi__free(div);
    oi__conv_release(&x), oi__conv_release(&y);
    return s;
}

static oi_status oi__conv_global_avg(const oi__kernel_args *k) {
    const oi__tensor *xt = k->in[0];
    int64_t planes = xt->shape[0] * xt->shape[1], area = oi__shape_numel(xt->ndim - 2, xt->shape + 2);
    if (oi__conv_is_dense_as(xt, false) && oi__conv_is_dense_as(k->out, false)) {
        const float *src = (const float *)oi__op_cdata(xt) + xt->offset;
        float *dst = (float *)oi__tensor_data(k->out) + k->out->offset;
        for (int64_t p = 0; p < planes; p++)
            dst[p] = area ? (float)(oi__conv_sum_f32(src + p * area, area) / (double)area) : NAN;
        return OI_OK;
    }
    oi__conv_buf x = {NULL, false}, y = {NULL, false};
    oi_status s = oi__conv_dense(xt, true, &x);
    if (s == OI_OK)
        s = oi__conv_result(k->out, true, &y);
    for (int64_t p = 0; p < planes && s == OI_OK; p++) {
        const double *src = (const double *)x.data + p * area;
        double sum = 0.0;
        for (int64_t i = 0; i < area; i++)
            sum += src[i];
        ((double *)y.data)[p] = area ? sum / (double)area : NAN;
    }
    if (s == OI_OK)
        oi__conv_finish(k->out, true, &y);
    oi__conv_release(&x), oi__conv_release(&y);
    return s;
}

/* C's element for output (i, j) under broadcasting. */
static double oi__conv_gemm_c(const oi__tensor *c, int64_t i, int64_t j) {
    int64_t at = c->offset;
    if (c->ndim >= 1 && c->shape[c->ndim - 1] != 1)
        at += j * c->strides[c->ndim - 1];
    if (c->ndim == 2 && c->shape[0] != 1)
        at += i * c->strides[0];
    return oi__load_f64(c->dtype, oi__op_cdata(c), at);
}

/* op(t) of a rank-2 f32 operand as the gemm reads it: its first element
 * and the strides of op(t)'s rows and columns (swapped when transposed). */
static const float *oi__conv_gemm_view(const oi__tensor *t, bool trans, int64_t *rs, int64_t *cs) {
    *rs = t->strides[trans ? 1 : 0];
    *cs = t->strides[trans ? 0 : 1];
    return (const float *)oi__op_cdata(t) + t->offset;
}

/* The f32 gemm: A and B are read in place through their strides (a
 * transposed or sliced view costs no copy), C broadcast along rows becomes
 * the gemm's bias row (beta folded in; used in place when it already is
 * one), and a B from the model is packed once and reused on later steps
 * (b_owner: its bytes never change). */
static oi_status oi__conv_gemm_f32(const oi__kernel_args *k, int64_t m, int64_t n, int64_t kk, bool ta, bool tb,
                                   double alpha, double beta) {
    const oi__tensor *c = k->n_in == 3 && beta != 0.0 ? k->in[2] : NULL;
    bool row_bcast = c && (c->ndim < 2 || c->shape[0] == 1);
    oi__gemm_f32_args g;
    memset(&g, 0, sizeof g);
    g.m = m, g.n = n, g.k = kk, g.alpha = (float)alpha;
    g.a = oi__conv_gemm_view(k->in[0], ta, &g.a_rs, &g.a_cs);
    g.b = oi__conv_gemm_view(k->in[1], tb, &g.b_rs, &g.b_cs);
    g.b_owner = k->in[1]->storage && k->in[1]->storage->borrowed ? k->in[1]->storage : NULL;
    oi__conv_buf y = {NULL, false}, bias = {NULL, false};
    oi_status s = oi__conv_result(k->out, false, &y);
    if (s == OI_OK && row_bcast) {
        bool in_place = c->dtype == OI_DTYPE_F32 && beta == 1.0 && c->ndim >= 1 && c->shape[c->ndim - 1] == n &&
                        (c->strides[c->ndim - 1] == 1 || n == 1);
        if (in_place) {
            bias.data = (void *)((const float *)oi__op_cdata(c) + c->offset);
        } else if ((bias.data = oi__conv_scratch(n, false)) != NULL) {
            bias.owned = true;
            for (int64_t j = 0; j < n; j++)
                ((float *)bias.data)[j] = (float)(beta * oi__conv_gemm_c(c, 0, j));
        } else {
            s = OI_ERROR_OUT_OF_MEMORY;
        }
        g.bias = (const float *)bias.data;
    } else if (s == OI_OK && c) { /* a full C: y = beta * C, then accumulate */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++)
                ((float *)y.data)[i * n + j] = (float)(beta * oi__conv_gemm_c(c, i, j));
        g.beta = 1.0f;
    }
    g.c = (float *)y.data;
    g.ldc = n;
    oi__conv_act act = oi__conv_act_of(k);
    if (act != OI__CONV_ACT_NONE) {
        g.epilogue = oi__conv_act_rows_f32;
        g.epilogue_ctx = &act;
    }
    if (s == OI_OK)
        s = oi__gemm_f32_ex(oi__threadpool_default(), &g);
    if (s == OI_OK)
        oi__conv_finish(k->out, false, &y);
    oi__conv_release(&bias), oi__conv_release(&y);
    return s;
}

static oi_status oi__conv_gemm_op(const oi__kernel_args *k) {
    oi__op_sig sigs[3];
    for (size_t i = 0; i < k->n_in; i++)
        oi__op_tensor_sig(k->in[i], &sigs[i]);
    int64_t m, n, kk;
    if (oi__conv_gemm_dims(k, sigs, k->n_in, &m, &n, &kk) != OI_OK)
        return OI_ERROR_VALIDATION;
    bool wide = k->out->dtype == OI_DTYPE_F64, ta = oi__op_param_bool(k, "trans_a"), tb = oi__op_param_bool(k, "trans_b");
    double alpha = oi__op_param_f64(k, "alpha"), beta = oi__op_param_f64(k, "beta");
    if (!wide && k->in[0]->dtype == OI_DTYPE_F32 && k->in[1]->dtype == OI_DTYPE_F32)
        return oi__conv_gemm_f32(k, m, n, kk, ta, tb, alpha, beta);
    bool with_c = k->n_in == 3 && beta != 0.0;
    oi__conv_buf a = {NULL, false}, b = {NULL, false}, y = {NULL, false};
    oi_status s = oi__conv_dense(k->in[0], wide, &a);
    if (s == OI_OK)
        s = oi__conv_dense(k->in[1], wide, &b);
    if (s == OI_OK)
        s = oi__conv_result(k->out, wide, &y);
    if (s == OI_OK && with_c && m > 0 && n > 0) {
        /* C broadcast along rows (a bias): build row 0 once, copy it down */
        const oi__tensor *c = k->in[2];
        bool row_bcast = c->ndim < 2 || c->shape[0] == 1;
        size_t row_bytes = (size_t)n * (wide ? sizeof(double) : sizeof(float));
        bool same = c->dtype == (wide ? OI_DTYPE_F64 : OI_DTYPE_F32) && beta == 1.0 && oi__tensor_is_contiguous(c) &&
                    oi__shape_numel(c->ndim, c->shape) == (row_bcast ? n : m * n) &&
                    (c->ndim == 0 || c->shape[c->ndim - 1] == n);
        if (same) /* already dense in y's type: copy row 0 (or all of C) */
            memcpy(y.data, (const char *)oi__op_cdata(c) + (size_t)c->offset * (wide ? sizeof(double) : sizeof(float)),
                   row_bcast ? row_bytes : (size_t)m * row_bytes);
        for (int64_t i = 0; !same && i < (row_bcast ? 1 : m); i++)
            for (int64_t j = 0; j < n; j++)
                oi__conv_put(y.data, wide, i * n + j, beta * oi__conv_gemm_c(c, i, j));
        for (int64_t i = 1; row_bcast && i < m; i++)
            memcpy((char *)y.data + (size_t)i * row_bytes, y.data, row_bytes);
    }
    if (s == OI_OK)
        s = oi__conv_gemm(wide, ta, tb, m, n, kk, alpha, a.data, ta ? m : kk, b.data, tb ? kk : n, with_c ? 1.0 : 0.0,
                          y.data, n);
    oi__conv_act act = oi__conv_act_of(k);
    if (s == OI_OK && wide)
        oi__conv_act_f64(act, (double *)y.data, m * n);
    else if (s == OI_OK)
        oi__conv_act_rows_f32(&act, (float *)y.data, n, m, n);
    if (s == OI_OK)
        oi__conv_finish(k->out, wide, &y);
    oi__conv_release(&a), oi__conv_release(&b), oi__conv_release(&y);
    return s;
}

static oi_status oi__k_conv(const oi__kernel_args *k) {
    if (k->op == OI_OP_gemm)
        return oi__conv_gemm_op(k);
    if (k->op == OI_OP_global_avg_pool)
        return oi__conv_global_avg(k);
    oi__op_sig sigs[3];
    for (size_t i = 0; i < k->n_in && i < 3; i++)
        oi__op_tensor_sig(k->in[i], &sigs[i]);
    oi__conv_geom g;
    switch (k->op) {
    case OI_OP_conv1d: case OI_OP_conv2d:
        if (oi__conv_geom_conv(k, sigs, k->n_in, &g) != OI_OK)
            return OI_ERROR_VALIDATION;
        return oi__conv_forward(k, &g);
    case OI_OP_conv_transpose2d:
        if (oi__conv_geom_transpose(k, sigs, k->n_in, &g) != OI_OK)
            return OI_ERROR_VALIDATION;
        return oi__conv_transpose(k, &g);
    case OI_OP_max_pool2d: case OI_OP_avg_pool2d:
        if (oi__conv_geom_pool(k, &sigs[0], &g) != OI_OK)
            return OI_ERROR_VALIDATION;
        return oi__conv_pool(k, &g);
    default:
        return oi__fail(OI_ERROR_UNSUPPORTED, "%s: not a conv op", oi_op_name(k->op));
    }
}
