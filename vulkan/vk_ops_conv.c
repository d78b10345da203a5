/* vk_ops_conv.c - the Vulkan plans of the conv family (conv1d, conv2d, conv_transpose2d, max_pool2d, avg_pool2d).
 * Included by vk_ops.c before its planner, which calls
 * oi__vk_plan_conv_family for every op: it returns false for ops not of
 * this family, else sets *status (OI_OK with a filled plan, or the reason
 * the op runs on the CPU).
 *
 * The window geometry (strides, dilations, pads, auto_pad, output_shape)
 * is worked out here by the rules of kernels/conv.c, whose helpers are
 * private to that file; the output size itself is the one the planner
 * already checked against the CPU's shape inference, so only the pads
 * need the rules. conv1d runs as conv2d with a height of 1. */

/* Defined further down vk_ops.c. */
static oi_status oi__vk_check_plain_dtypes(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                           size_t n_in, const oi__vk_view *out);

/* ---- push constants: the names of conv.comp and pool.comp ---- */
typedef struct oi__vk_conv_push {
    uint32_t cg, mg, K, n_pix;
    uint32_t OH, OW, H, W;
    uint32_t kernel_h, kernel_w, stride_h, stride_w, dil_h, dil_w;
    int32_t pad_t, pad_l;
    uint32_t a_strides[4];
    uint32_t a_offset;
    uint32_t b_group_stride, b_m_stride, b_c_stride, b_kh_stride, b_kw_stride;
    uint32_t b_offset;
    uint32_t c_stride, c_offset;
    uint32_t d_offset, out_c;
    uint32_t flags; /* bit 0: a bias; bits 1..: activation= (oi__conv_act) */
} oi__vk_conv_push;

typedef struct oi__vk_pool_push {
    uint32_t n;
    uint32_t C, H, W, OH, OW;
    uint32_t kernel_h, kernel_w, stride_h, stride_w, dil_h, dil_w;
    int32_t pad_t, pad_l, pad_b, pad_r;
    uint32_t a_strides[4];
    uint32_t a_offset, d_offset;
    uint32_t include_pad;
} oi__vk_pool_push;

typedef char oi__vk_conv_push_fits[sizeof(oi__vk_conv_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_pool_push_fits[sizeof(oi__vk_pool_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];

/* conv.comp's blocks: output channels x output pixels per workgroup. The
 * narrow build serves groups of few output channels, where a 64-channel
 * block would mostly compute nothing; the direct build (an output per
 * invocation) groups of 1 or 2 (depthwise convs). */
#define OI__VK_CONV_BLOCK 64
#define OI__VK_CONV_NARROW_M 16
#define OI__VK_CONV_NARROW_N 256
#define OI__VK_CONV_DIRECT_M 2

/* ---- geometry, as kernels/conv.c ---- */
/* The window of a conv or pool in 2-D: dim 0 is the height (1 for conv1d). */
typedef struct oi__vk_window {
    int64_t in[2], out[2], kernel[2], stride[2], dil[2], pad_b[2], pad_e[2];
} oi__vk_window;

/* `count` entries of an int-list parameter (or one int), `def` when absent;
 * shape inference has already checked the counts and ranges. */
static void oi__vk_conv_ints(const oi__kernel_args *k, const char *param, int count, int64_t def, int64_t *out) {
    const oi__attr *a = oi__op_attr_for(k, param);
    for (int i = 0; i < count; i++)
        out[i] = def;
    if (!a)
        return;
    const int64_t *v = a->kind == OI__ATTR_INT_LIST ? a->ints : &a->i;
    int n = a->kind == OI__ATTR_INT_LIST ? (int)arrlen(a->ints) : 1;
    for (int i = 0; i < count && i < n; i++)
        out[i] = v[i];
}

typedef enum oi__vk_auto_pad { OI__VK_PAD_NOTSET, OI__VK_PAD_VALID, OI__VK_PAD_SAME_UPPER, OI__VK_PAD_SAME_LOWER } oi__vk_auto_pad;

static oi__vk_auto_pad oi__vk_conv_auto_pad(const oi__kernel_args *k) {
    const oi__attr *a = oi__op_attr_for(k, "auto_pad");
    const char *text = a && a->s ? a->s : "NOTSET";
    if (strcmp(text, "VALID") == 0)
        return OI__VK_PAD_VALID;
    if (strcmp(text, "SAME_UPPER") == 0)
        return OI__VK_PAD_SAME_UPPER;
    if (strcmp(text, "SAME_LOWER") == 0)
        return OI__VK_PAD_SAME_LOWER;
    return OI__VK_PAD_NOTSET;
}

static int64_t oi__vk_conv_eff(const oi__vk_window *w, int d) { return (w->kernel[d] - 1) * w->dil[d] + 1; }

/* Reads strides, dilations and pads of the last `s` dims (1 or 2) into
 * dims 2 - s.. of `w`; the dims in front stay a window of 1. in, out and
 * kernel must be set already. */
static oi__vk_auto_pad oi__vk_conv_read_window(const oi__kernel_args *k, int s, oi__vk_window *w) {
    int64_t strides[2], dil[2], pads[4];
    oi__vk_conv_ints(k, "strides", s, 1, strides);
    oi__vk_conv_ints(k, "dilations", s, 1, dil);
    oi__vk_conv_ints(k, "pads", 2 * s, 0, pads);
    oi__vk_auto_pad mode = oi__vk_conv_auto_pad(k);
    for (int d = 0; d < 2; d++) {
        w->stride[d] = w->dil[d] = 1;
        w->pad_b[d] = w->pad_e[d] = 0;
    }
    for (int i = 0; i < s; i++) {
        int d = 2 - s + i;
        w->stride[d] = strides[i];
        w->dil[d] = dil[i];
        w->pad_b[d] = mode == OI__VK_PAD_NOTSET ? pads[i] : 0;
        w->pad_e[d] = mode == OI__VK_PAD_NOTSET ? pads[s + i] : 0;
    }
    return mode;
}

/* SAME_* pads of a sliding window: the output is ceil(in / stride) and
 * the padding that takes is split, the odd one at the end (UPPER) or the
 * start (LOWER). */
static void oi__vk_conv_same_pads(oi__vk_auto_pad mode, int s, oi__vk_window *w) {
    if (mode != OI__VK_PAD_SAME_UPPER && mode != OI__VK_PAD_SAME_LOWER)
        return;
    for (int d = 2 - s; d < 2; d++) {
        int64_t out = (w->in[d] + w->stride[d] - 1) / w->stride[d];
        int64_t total = (out - 1) * w->stride[d] + oi__vk_conv_eff(w, d) - w->in[d];
        total = total > 0 ? total : 0;
        w->pad_b[d] = mode == OI__VK_PAD_SAME_UPPER ? total / 2 : total - total / 2;
        w->pad_e[d] = total - w->pad_b[d];
    }
}

/* conv_transpose2d: output_shape or SAME_* set the pads from the full
 * output stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1. */
static void oi__vk_conv_transpose_pads(const oi__kernel_args *k, oi__vk_auto_pad mode, oi__vk_window *w) {
    int64_t out_pad[2], shape[2];
    oi__vk_conv_ints(k, "output_padding", 2, 0, out_pad);
    oi__vk_conv_ints(k, "output_shape", 2, 0, shape);
    bool has_shape = oi__op_attr_for(k, "output_shape") != NULL;
    if (!has_shape && mode != OI__VK_PAD_SAME_UPPER && mode != OI__VK_PAD_SAME_LOWER)
        return;
    for (int d = 0; d < 2; d++) {
        int64_t full = w->stride[d] * (w->in[d] - 1) + out_pad[d] + oi__vk_conv_eff(w, d);
        int64_t want = has_shape ? shape[d] : w->in[d] * w->stride[d];
        int64_t total = full - want, half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor */
        w->pad_b[d] = mode == OI__VK_PAD_SAME_UPPER ? half : total - half;
        w->pad_e[d] = total - w->pad_b[d];
    }
}

/* Every geometry number must fit the shaders' 32-bit (signed) arithmetic. */
static bool oi__vk_conv_small(const oi__vk_window *w) {
    for (int d = 0; d < 2; d++) {
        int64_t reach = w->out[d] * w->stride[d] + w->kernel[d] * w->dil[d] + w->in[d];
        if (reach >= ((int64_t)1 << 30) || llabs(w->pad_b[d]) + llabs(w->pad_e[d]) >= ((int64_t)1 << 30))
            return false;
    }
    return true;
}

/* ---- pooling: one invocation per output word ---- */
static oi_status oi__vk_plan_pool(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *x,
                                  const oi__vk_view *out, oi__vk_plan *plan) {
    oi__vk_window w;
    memset(&w, 0, sizeof w);
    oi__vk_conv_ints(k, "kernel_shape", 2, 1, w.kernel);
    for (int d = 0; d < 2; d++) {
        w.in[d] = x->shape[2 + d];
        w.out[d] = out->shape[2 + d];
    }
    oi__vk_conv_same_pads(oi__vk_conv_read_window(k, 2, &w), 2, &w);
    if (!oi__vk_conv_small(&w))
        return oi__vk_unsupported("%s: window numbers past 32-bit arithmetic", oi_op_name(k->op));
    oi__vk_pool_push push;
    memset(&push, 0, sizeof push);
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    push.n = (uint32_t)n;
    push.C = (uint32_t)x->shape[1];
    push.H = (uint32_t)w.in[0];
    push.W = (uint32_t)w.in[1];
    push.OH = (uint32_t)w.out[0];
    push.OW = (uint32_t)w.out[1];
    push.kernel_h = (uint32_t)w.kernel[0];
    push.kernel_w = (uint32_t)w.kernel[1];
    push.stride_h = (uint32_t)w.stride[0];
    push.stride_w = (uint32_t)w.stride[1];
    push.dil_h = (uint32_t)w.dil[0];
    push.dil_w = (uint32_t)w.dil[1];
    push.pad_t = (int32_t)w.pad_b[0];
    push.pad_l = (int32_t)w.pad_b[1];
    push.pad_b = (int32_t)w.pad_e[0];
    push.pad_r = (int32_t)w.pad_e[1];
    for (int d = 0; d < 4; d++)
        push.a_strides[d] = (uint32_t)x->strides[d];
    push.a_offset = (uint32_t)x->offset;
    push.d_offset = (uint32_t)out->offset;
    push.include_pad = k->op == OI_OP_avg_pool2d && oi__op_param_bool(k, "count_include_pad");
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    oi__vk_set_pipeline(st, OI__VK_ELTWISE, k->op, x->dtype, x->dtype, x->dtype, out->dtype);
    st->pipeline.shader = (uint32_t)OI__VK_SHADER_POOL;
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[3] = OI__VK_ROLE_OUT;
    unsigned per = 32u / oi_dtype_bits(out->dtype);
    uint64_t words = ((uint64_t)out->offset + (uint64_t)n + per - 1) / per - (uint64_t)out->offset / per;
    return oi__vk_groups(ctx, (words + 255) / 256, 1, st->groups);
}

/* ---- convolutions: an implicit GEMM per group ---- */
/* The window of conv1d/conv2d (s = 1: height 1) or conv_transpose2d. */
static void oi__vk_conv_window(const oi__kernel_args *k, const oi__vk_view *x, const oi__vk_view *wt,
                               const oi__vk_view *out, oi__vk_window *w) {
    int s = k->op == OI_OP_conv1d ? 1 : 2;
    memset(w, 0, sizeof *w);
    for (int d = 0; d < 2; d++) {
        int at = d - (2 - s); /* the view's spatial dim, < 0 for conv1d's height */
        w->in[d] = at < 0 ? 1 : x->shape[2 + at];
        w->out[d] = at < 0 ? 1 : out->shape[2 + at];
        w->kernel[d] = at < 0 ? 1 : wt->shape[2 + at];
    }
    oi__vk_auto_pad mode = oi__vk_conv_read_window(k, s, w);
    if (k->op == OI_OP_conv_transpose2d)
        oi__vk_conv_transpose_pads(k, mode, w);
    else
        oi__vk_conv_same_pads(mode, s, w);
}

/* A view's stride of dim `d` of its 2-D form ([N, C, H, W]); conv1d's
 * views have no height, which is never stepped along. */
static uint32_t oi__vk_conv_stride(const oi__vk_view *v, bool is_1d, int d) {
    if (!is_1d)
        return (uint32_t)v->strides[d];
    return d == 2 ? 0u : (uint32_t)v->strides[d == 3 ? 2 : d];
}

/* Push constants of a conv over x, w (and bias) into a contiguous f32 y
 * at `d_offset`. */
static void oi__vk_conv_fill_push(const oi__kernel_args *k, const oi__vk_view *in, size_t n_in, const oi__vk_view *out,
                                  const oi__vk_window *w, int64_t group, uint32_t d_offset, oi__vk_conv_push *push) {
    const oi__vk_view *x = &in[0], *wt = &in[1];
    bool is_1d = k->op == OI_OP_conv1d, transposed = k->op == OI_OP_conv_transpose2d;
    int64_t cg = x->shape[1] / group, mg = out->shape[1] / group;
    memset(push, 0, sizeof *push);
    push->cg = (uint32_t)cg;
    push->mg = (uint32_t)mg;
    push->K = (uint32_t)(cg * w->kernel[0] * w->kernel[1]);
    push->n_pix = (uint32_t)(x->shape[0] * w->out[0] * w->out[1]);
    push->OH = (uint32_t)w->out[0];
    push->OW = (uint32_t)w->out[1];
    push->H = (uint32_t)w->in[0];
    push->W = (uint32_t)w->in[1];
    push->kernel_h = (uint32_t)w->kernel[0];
    push->kernel_w = (uint32_t)w->kernel[1];
    push->stride_h = (uint32_t)w->stride[0];
    push->stride_w = (uint32_t)w->stride[1];
    push->dil_h = (uint32_t)w->dil[0];
    push->dil_w = (uint32_t)w->dil[1];
    push->pad_t = (int32_t)w->pad_b[0];
    push->pad_l = (int32_t)w->pad_b[1];
    for (int d = 0; d < 4; d++)
        push->a_strides[d] = oi__vk_conv_stride(x, is_1d, d);
    push->a_offset = (uint32_t)x->offset;
    /* w is [M, C / group, k...] (conv) or [C, M / group, k...] (transpose):
     * the group and channel steps differ, the kernel steps do not */
    uint32_t w0 = oi__vk_conv_stride(wt, is_1d, 0), w1 = oi__vk_conv_stride(wt, is_1d, 1);
    push->b_group_stride = (uint32_t)((transposed ? cg : mg) * (int64_t)w0);
    push->b_m_stride = transposed ? w1 : w0;
    push->b_c_stride = transposed ? w0 : w1;
    push->b_kh_stride = oi__vk_conv_stride(wt, is_1d, 2);
    push->b_kw_stride = oi__vk_conv_stride(wt, is_1d, 3);
    push->b_offset = (uint32_t)wt->offset;
    if (n_in == 3) {
        push->c_stride = (uint32_t)in[2].strides[0];
        push->c_offset = (uint32_t)in[2].offset;
        push->flags = 1u;
    }
    push->d_offset = d_offset;
    push->out_c = (uint32_t)out->shape[1];
    oi__conv_act act = transposed ? OI__CONV_ACT_NONE : oi__conv_act_of(k);
    push->flags |= (uint32_t)act << 1;
}

/* The build of conv.comp for mg output channels per group, and its
 * workgroups: blocks of pixels x channels x (group, and a blocked
 * transpose's output phase), or 256 outputs each for the direct build. */
static oi_status oi__vk_conv_dispatch(const oi__vk_context *ctx, bool transposed, const oi__vk_window *w, int64_t batch,
                                      int64_t mg, int64_t group, oi__vk_stage *st) {
    bool narrow = mg <= OI__VK_CONV_NARROW_M, per_output = mg <= OI__VK_CONV_DIRECT_M;
    st->pipeline.shader =
        (uint32_t)(per_output ? OI__VK_SHADER_CONV_DIRECT : narrow ? OI__VK_SHADER_CONV_NARROW : OI__VK_SHADER_CONV);
    int64_t n_pix = batch * w->out[0] * w->out[1];
    if (per_output)
        return oi__vk_groups(ctx, ((uint64_t)(n_pix * mg) + 255) / 256, (uint32_t)group, st->groups);
    /* the largest phase of a transpose has ceil(OH / stride) x ceil(OW / stride) pixels */
    int64_t phases = transposed ? w->stride[0] * w->stride[1] : 1, phase_pix = n_pix;
    if (transposed)
        phase_pix = batch * ((w->out[0] + w->stride[0] - 1) / w->stride[0]) * ((w->out[1] + w->stride[1] - 1) / w->stride[1]);
    int64_t bm = narrow ? OI__VK_CONV_NARROW_M : OI__VK_CONV_BLOCK, bn = narrow ? OI__VK_CONV_NARROW_N : OI__VK_CONV_BLOCK;
    uint64_t gx = (uint64_t)((phase_pix + bn - 1) / bn), gy = (uint64_t)((mg + bm - 1) / bm);
    uint64_t gz = (uint64_t)(group * phases);
    const uint32_t *max = ctx->caps.props.limits.maxComputeWorkGroupCount;
    if (gx > max[0] || gy > max[1] || gz > max[2])
        return oi__vk_unsupported("conv: %llu x %llu x %llu workgroups exceed the dispatch limits", (unsigned long long)gx,
                                  (unsigned long long)gy, (unsigned long long)gz);
    st->groups[0] = (uint32_t)(gx ? gx : 1);
    st->groups[1] = (uint32_t)(gy ? gy : 1);
    st->groups[2] = (uint32_t)gz;
    return OI_OK;
}

static oi_status oi__vk_plan_conv(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                  size_t n_in, const oi__vk_view *out, oi__vk_plan *plan) {
    const oi__vk_view *x = &in[0], *wt = &in[1];
    bool transposed = k->op == OI_OP_conv_transpose2d;
    for (size_t i = 0; i < n_in; i++)
        if (!oi__dtype_is_float(in[i].dtype))
            return oi__vk_unsupported("%s: no shader for %s", oi_op_name(k->op), oi_dtype_name(in[i].dtype));
    if (oi__shape_numel(x->ndim, x->shape) == 0 || oi__shape_numel(wt->ndim, wt->shape) == 0)
        return oi__vk_unsupported("%s: an empty x or w (the output is the bias alone)", oi_op_name(k->op));
    oi__vk_window w;
    oi__vk_conv_window(k, x, wt, out, &w);
    if (!oi__vk_conv_small(&w))
        return oi__vk_unsupported("%s: window numbers past 32-bit arithmetic", oi_op_name(k->op));
    int64_t group = oi__op_param_i64(k, "group");
    if (x->shape[1] / group * w.kernel[0] * w.kernel[1] >= ((int64_t)1 << 31))
        return oi__vk_unsupported("%s: too many products per output", oi_op_name(k->op));

    bool f32_out = out->dtype == OI_DTYPE_F32; /* else an f32 scratch, cast after */
    oi__vk_conv_push push;
    oi__vk_conv_fill_push(k, in, n_in, out, &w, group, f32_out ? (uint32_t)out->offset : 0, &push);
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    /* conv1d is conv2d to the shader: one pipeline for both (each one
     * costs a compile, seconds on a CPU driver) */
    oi__vk_set_pipeline(st, OI__VK_ELTWISE, transposed ? k->op : OI_OP_conv2d, x->dtype, wt->dtype,
                        n_in == 3 ? in[2].dtype : x->dtype, OI_DTYPE_F32);
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = OI__VK_ROLE_IN1;
    st->roles[2] = n_in == 3 ? OI__VK_ROLE_IN2 : OI__VK_ROLE_UNUSED;
    st->roles[3] = f32_out ? OI__VK_ROLE_OUT : OI__VK_ROLE_TEMP;
    oi_status s = oi__vk_conv_dispatch(ctx, transposed, &w, x->shape[0], push.mg, group, st);
    if (s != OI_OK || f32_out)
        return s;
    return oi__vk_plan_cast_from_temp(ctx, OI_DTYPE_F32, out, plan); /* f16/bf16: one rounding, as the CPU */
}

static bool oi__vk_plan_conv_family(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                    size_t n_in, const oi__vk_view *out, oi__vk_plan *plan, oi_status *status) {
    switch (k->op) {
    case OI_OP_conv1d: case OI_OP_conv2d: case OI_OP_conv_transpose2d:
    case OI_OP_max_pool2d: case OI_OP_avg_pool2d:
        break;
    default:
        return false;
    }
    *status = oi__vk_check_plain_dtypes(ctx, k, in, n_in, out);
    if (*status != OI_OK)
        return true;
    if (!oi__vk_view_contiguous(out)) {
        *status = oi__vk_unsupported("%s: the output is not contiguous", oi_op_name(k->op));
        return true;
    }
    if (k->op == OI_OP_max_pool2d || k->op == OI_OP_avg_pool2d)
        *status = oi__vk_plan_pool(ctx, k, &in[0], out, plan);
    else
        *status = oi__vk_plan_conv(ctx, k, in, n_in, out, plan);
    return true;
}
