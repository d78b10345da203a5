/* vk_ops_nn.c - the Vulkan plans of the nn family (batch_norm, group_norm, rope, attention, top_k, top_k_indices, matmul_q8, matmul_q4,
 * dequantize).
 * Included by vk_ops.c before its planner, which calls
 * oi__vk_plan_nn_family for every op: it returns false for ops not of
 * this family, else sets *status (OI_OK with a filled plan, or the reason
 * the op runs on the CPU).
 *
 * The float ops compute in f32 and write f32: straight into an f32
 * output, else into the scratch, which a cast stage then rounds into the
 * f16/bf16 output (as rownorm does). Their push blocks mirror the GLSL
 * push blocks of chnorm.comp, rope.comp, attention.comp, topk.comp,
 * matmul_quant.comp and matvec_quant.comp; dequantize.comp reads u8 blocks
 * and writes its f32 output itself. */

#define OI__VK_NN_DIMS 6         /* dims of x that chnorm.comp and rope.comp walk */
#define OI__VK_ATTN_MAX_D 256    /* attention.comp: q row in shared memory (MAX_D) */
#define OI__VK_ATTN_MAX_DV 256   /* attention.comp: WG 64 x DV_PER 4 output channels */
#define OI__VK_TOPK_MAX_K 256    /* topk.comp picks one element per round: k rounds over the row */
#define OI__VK_TOPK_KEPT_DIMS 5

typedef struct oi__vk_chnorm_push {
    uint32_t n_out, ndim;
    uint32_t shape[OI__VK_NN_DIMS], x_strides[OI__VK_NN_DIMS];
    uint32_t p_strides[4], p_offsets[4];
    uint32_t x_offset, d_offset;
    uint32_t groups;
    float eps;
} oi__vk_chnorm_push;

typedef struct oi__vk_rope_push {
    uint32_t n, ndim;
    uint32_t shape[OI__VK_NN_DIMS], x_strides[OI__VK_NN_DIMS];
    uint32_t seq_axis, batched;
    uint32_t pos_strides[2], pos_offset;
    uint32_t rot, interleaved;
    uint32_t x_offset, d_offset;
    float r_hi, r_lo;
} oi__vk_rope_push;

typedef struct oi__vk_attention_push {
    uint32_t rows;
    uint32_t heads, seq, kv_seq, dim, v_dim, group;
    uint32_t q_strides[4], k_strides[4], v_strides[4], m_strides[4];
    uint32_t q_offset, k_offset, v_offset, m_offset;
    uint32_t d_offset;
    uint32_t flags;
    float scale;
} oi__vk_attention_push;

typedef struct oi__vk_topk_push {
    uint32_t lanes, n_axis, k, inner;
    uint32_t kept_ndim;
    uint32_t kept_shape[OI__VK_TOPK_KEPT_DIMS], kept_strides[OI__VK_TOPK_KEPT_DIMS];
    uint32_t axis_stride;
    uint32_t x_offset, d_offset;
    uint32_t largest, stage, n_out;
} oi__vk_topk_push;

typedef struct oi__vk_qmm_push {
    uint32_t M, N, K;
    uint32_t format;
    uint32_t a_stride_m, a_stride_k, a_offset;
    uint32_t w_stride_n, w_stride_k, w_offset;
    uint32_t s_stride, s_offset;
    uint32_t d_offset;
} oi__vk_qmm_push;

typedef struct oi__vk_matvec_push {
    uint32_t M, N, K; /* the format and act_q8 are spec constants 2 and 3 */
    uint32_t a_stride_m, a_stride_k, a_offset;
    uint32_t w_stride_n, w_offset;
    uint32_t d_offset;
} oi__vk_matvec_push;

typedef struct oi__vk_dequant_push {
    uint32_t n, K;
    uint32_t format; /* 1 q4_0, 2 q4_1, 3 q8_0 */
    uint32_t w_stride_row, w_offset;
    uint32_t d_offset;
} oi__vk_dequant_push;

typedef char oi__vk_matvec_push_fits[sizeof(oi__vk_matvec_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_chnorm_push_fits[sizeof(oi__vk_chnorm_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_rope_push_fits[sizeof(oi__vk_rope_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_attention_push_fits[sizeof(oi__vk_attention_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_topk_push_fits[sizeof(oi__vk_topk_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_qmm_push_fits[sizeof(oi__vk_qmm_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_dequant_push_fits[sizeof(oi__vk_dequant_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];

static bool oi__vk_nn_float(oi_dtype t) { return t == OI_DTYPE_F32 || t == OI_DTYPE_F16 || t == OI_DTYPE_BF16; }

/* A new stage running `shader` with spec constants (op, a, b, c, d). */
static oi__vk_stage *oi__vk_nn_stage(oi__vk_plan *plan, oi__vk_shader shader, oi_op op, oi_dtype a, oi_dtype b,
                                     oi_dtype c, oi_dtype d, const void *push, size_t push_bytes) {
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    oi__vk_set_pipeline(st, OI__VK_ELTWISE, op, a, b, c, d);
    st->pipeline.shader = (uint32_t)shader;
    oi__vk_set_push(st, push, push_bytes);
    return st;
}

/* Where an f32 result goes: the output itself (f32), else the scratch
 * (*d_offset 0) that oi__vk_nn_finish casts. */
static bool oi__vk_nn_direct(const oi__vk_view *out, uint32_t *d_offset) {
    bool direct = out->dtype == OI_DTYPE_F32;
    *d_offset = direct ? (uint32_t)out->offset : 0;
    return direct;
}

static oi_status oi__vk_nn_finish(const oi__vk_context *ctx, oi__vk_stage *st, bool direct, uint64_t groups,
                                  const oi__vk_view *out, oi__vk_plan *plan) {
    st->roles[3] = direct ? OI__VK_ROLE_OUT : OI__VK_ROLE_TEMP;
    oi_status s = oi__vk_groups(ctx, groups, 1, st->groups);
    if (s != OI_OK || direct)
        return s;
    return oi__vk_plan_cast_from_temp(ctx, OI_DTYPE_F32, out, plan);
}

/* ---- batch_norm, group_norm: chnorm.comp ---- */
static oi_status oi__vk_plan_chnorm(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                    size_t n_in, const oi__vk_view *out, oi__vk_plan *plan) {
    const oi__vk_view *x = &in[0];
    const char *name = oi_op_name(k->op);
    if (x->ndim > OI__VK_NN_DIMS)
        return oi__vk_unsupported("%s: rank %d (the shader walks %d dims)", name, x->ndim, OI__VK_NN_DIMS);
    for (size_t i = 1; i < n_in; i++)
        if (in[i].dtype != in[1].dtype)
            return oi__vk_unsupported("%s: the per-channel inputs have different dtypes", name);
    oi__vk_chnorm_push push;
    memset(&push, 0, sizeof push);
    push.ndim = (uint32_t)x->ndim;
    for (int d = 0; d < x->ndim; d++) {
        push.shape[d] = (uint32_t)x->shape[d];
        push.x_strides[d] = (uint32_t)x->strides[d];
    }
    for (size_t i = 1; i < n_in; i++) {
        push.p_strides[i - 1] = (uint32_t)in[i].strides[0];
        push.p_offsets[i - 1] = (uint32_t)in[i].offset;
    }
    push.x_offset = (uint32_t)x->offset;
    push.eps = (float)oi__op_param_f64(k, "epsilon");
    bool direct = oi__vk_nn_direct(out, &push.d_offset);
    uint64_t groups;
    if (k->op == OI_OP_batch_norm) {
        push.n_out = (uint32_t)oi__shape_numel(out->ndim, out->shape);
        groups = ((uint64_t)push.n_out + 127) / 128;
    } else {
        push.groups = (uint32_t)oi__op_param_i64(k, "num_groups");
        push.n_out = (uint32_t)(x->shape[0] * (int64_t)push.groups);
        groups = push.n_out;
    }
    oi__vk_stage *st = oi__vk_nn_stage(plan, OI__VK_SHADER_CHNORM, k->op, x->dtype, in[1].dtype, in[1].dtype,
                                       OI_DTYPE_F32, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = OI__VK_ROLE_IN1;
    st->roles[2] = OI__VK_ROLE_IN2;
    if (k->op == OI_OP_batch_norm) {
        st->roles[4] = (oi__vk_role)(OI__VK_ROLE_IN0 + 3);
        st->roles[5] = (oi__vk_role)(OI__VK_ROLE_IN0 + 4);
    }
    return oi__vk_nn_finish(ctx, st, direct, groups, out, plan);
}

/* ---- rope: rope.comp ---- */
static oi_status oi__vk_plan_rope(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                  const oi__vk_view *out, oi__vk_plan *plan) {
    const oi__vk_view *x = &in[0], *pos = &in[1];
    if (x->ndim > OI__VK_NN_DIMS)
        return oi__vk_unsupported("rope: rank %d (the shader walks %d dims)", x->ndim, OI__VK_NN_DIMS);
    if (pos->dtype != OI_DTYPE_I32 && pos->dtype != OI_DTYPE_I64)
        return OI_ERROR_VALIDATION;
    int64_t seq_axis = oi__op_param_i64(k, "seq_axis");
    seq_axis += seq_axis < 0 ? x->ndim : 0;
    int64_t dim = x->shape[x->ndim - 1], rot = oi__op_param_i64(k, "rotary_dim");
    rot = rot ? rot : dim;
    double theta = oi__op_param_f64(k, "theta");
    double r = pow(theta, -2.0 / (double)rot); /* pair i turns at r^i per position */
    oi__vk_rope_push push;
    memset(&push, 0, sizeof push);
    push.n = (uint32_t)oi__shape_numel(out->ndim, out->shape);
    push.ndim = (uint32_t)x->ndim;
    for (int d = 0; d < x->ndim; d++) {
        push.shape[d] = (uint32_t)x->shape[d];
        push.x_strides[d] = (uint32_t)x->strides[d];
    }
    push.seq_axis = (uint32_t)seq_axis;
    push.batched = pos->ndim == 2;
    for (int d = 0; d < pos->ndim; d++)
        push.pos_strides[d] = (uint32_t)pos->strides[d];
    push.pos_offset = (uint32_t)pos->offset;
    push.rot = (uint32_t)rot;
    push.interleaved = oi__op_param_bool(k, "interleaved");
    push.x_offset = (uint32_t)x->offset;
    push.r_hi = (float)r;
    push.r_lo = (float)(r - (double)push.r_hi);
    bool direct = oi__vk_nn_direct(out, &push.d_offset);
    oi__vk_stage *st = oi__vk_nn_stage(plan, OI__VK_SHADER_ROPE, k->op, x->dtype, pos->dtype, pos->dtype, OI_DTYPE_F32,
                                       &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = OI__VK_ROLE_IN1;
    return oi__vk_nn_finish(ctx, st, direct, ((uint64_t)push.n + 255) / 256, out, plan);
}

/* ---- attention: attention.comp ---- */
static oi_status oi__vk_plan_attention(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                       size_t n_in, const oi__vk_view *out, oi__vk_plan *plan) {
    const oi__vk_view *q = &in[0], *kk = &in[1], *v = &in[2];
    if (q->shape[3] > OI__VK_ATTN_MAX_D || v->shape[3] > OI__VK_ATTN_MAX_DV)
        return oi__vk_unsupported("attention: head sizes %lld / %lld (the shader holds %d / %d)", (long long)q->shape[3],
                                  (long long)v->shape[3], OI__VK_ATTN_MAX_D, OI__VK_ATTN_MAX_DV);
    if (kk->shape[2] == 0 || q->shape[3] == 0)
        return oi__vk_unsupported("attention: no keys or an empty head dim (the CPU's conventions)");
    oi__vk_attention_push push;
    memset(&push, 0, sizeof push);
    push.rows = (uint32_t)(q->shape[0] * q->shape[1] * q->shape[2]);
    push.heads = (uint32_t)q->shape[1];
    push.seq = (uint32_t)q->shape[2];
    push.kv_seq = (uint32_t)kk->shape[2];
    push.dim = (uint32_t)q->shape[3];
    push.v_dim = (uint32_t)v->shape[3];
    push.group = (uint32_t)(q->shape[1] / kk->shape[1]);
    for (int d = 0; d < 4; d++) {
        push.q_strides[d] = (uint32_t)q->strides[d];
        push.k_strides[d] = (uint32_t)kk->strides[d];
        push.v_strides[d] = (uint32_t)v->strides[d];
    }
    push.q_offset = (uint32_t)q->offset;
    push.k_offset = (uint32_t)kk->offset;
    push.v_offset = (uint32_t)v->offset;
    oi_dtype mask_t = q->dtype;
    if (n_in > 3) { /* the mask, broadcast to the scores [B, Hq, S, T] */
        int64_t scores[4] = {q->shape[0], q->shape[1], q->shape[2], kk->shape[2]}, ms[OI_MAX_DIMS];
        oi__vk_broadcast_strides(&in[3], 4, scores, ms);
        for (int d = 0; d < 4; d++)
            push.m_strides[d] = (uint32_t)ms[d];
        push.m_offset = (uint32_t)in[3].offset;
        mask_t = in[3].dtype;
        push.flags |= 2u | (mask_t == OI_DTYPE_BOOL ? 4u : 0u);
    }
    push.flags |= oi__op_param_bool(k, "causal") ? 1u : 0u;
    double scale = oi__op_attr_for(k, "scale") ? oi__op_param_f64(k, "scale") : 1.0 / sqrt((double)q->shape[3]);
    push.scale = (float)scale;
    bool direct = oi__vk_nn_direct(out, &push.d_offset);
    oi__vk_stage *st = oi__vk_nn_stage(plan, OI__VK_SHADER_ATTENTION, k->op, q->dtype, kk->dtype, mask_t, OI_DTYPE_F32,
                                       &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = OI__VK_ROLE_IN1;
    st->roles[2] = OI__VK_ROLE_IN2;
    st->roles[4] = n_in > 3 ? (oi__vk_role)(OI__VK_ROLE_IN0 + 3) : OI__VK_ROLE_UNUSED;
    return oi__vk_nn_finish(ctx, st, direct, push.rows, out, plan);
}

/* ---- top_k, top_k_indices: topk.comp, select into the scratch, then write ---- */
static oi_status oi__vk_plan_topk(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                  const oi__vk_view *out, oi__vk_plan *plan) {
    const oi__vk_view *x = &in[0];
    int64_t axis = oi__op_param_i64(k, "axis");
    axis += axis < 0 ? x->ndim : 0;
    int64_t kk = oi__op_param_i64(k, "k");
    if (kk > OI__VK_TOPK_MAX_K)
        return oi__vk_unsupported("%s: k = %lld (the shader takes k rounds over each row; up to %d on the GPU)",
                                  oi_op_name(k->op), (long long)kk, OI__VK_TOPK_MAX_K);
    oi__vk_topk_push push;
    memset(&push, 0, sizeof push);
    int64_t kept_shape[OI_MAX_DIMS], kept_strides[1][OI_MAX_DIMS];
    int nk = 0;
    int64_t inner = 1;
    for (int d = 0; d < x->ndim; d++) {
        if (d == axis)
            continue;
        kept_shape[nk] = x->shape[d];
        kept_strides[0][nk++] = x->strides[d];
        inner *= d > axis ? x->shape[d] : 1;
    }
    int64_t lanes = oi__shape_numel(nk, kept_shape);
    nk = oi__vk_merge_dims(nk, kept_shape, 1, kept_strides); /* keeps the lane -> offset map */
    if (nk > OI__VK_TOPK_KEPT_DIMS)
        return oi__vk_unsupported("%s: %d kept dims after merging (the shader walks %d)", oi_op_name(k->op), nk,
                                  OI__VK_TOPK_KEPT_DIMS);
    push.lanes = (uint32_t)lanes;
    push.n_axis = (uint32_t)x->shape[axis];
    push.k = (uint32_t)kk;
    push.inner = (uint32_t)inner;
    push.kept_ndim = (uint32_t)nk;
    for (int d = 0; d < nk; d++) {
        push.kept_shape[d] = (uint32_t)kept_shape[d];
        push.kept_strides[d] = (uint32_t)kept_strides[0][d];
    }
    push.axis_stride = (uint32_t)x->strides[axis];
    push.x_offset = (uint32_t)x->offset;
    push.largest = oi__op_param_bool(k, "largest");
    push.n_out = (uint32_t)oi__shape_numel(out->ndim, out->shape);
    plan->temp_bytes = (uint64_t)push.n_out * 4u;
    oi__vk_stage *sel = oi__vk_nn_stage(plan, OI__VK_SHADER_TOPK, k->op, x->dtype, x->dtype, x->dtype, out->dtype,
                                        &push, sizeof push);
    sel->roles[0] = OI__VK_ROLE_IN0;
    sel->roles[3] = OI__VK_ROLE_TEMP;
    oi_status s = oi__vk_groups(ctx, (uint64_t)lanes, 1, sel->groups);
    if (s != OI_OK)
        return s;
    push.stage = 1;
    push.d_offset = (uint32_t)out->offset;
    uint64_t items = push.n_out;
    if (k->op == OI_OP_top_k) { /* a word of the output per invocation */
        unsigned per = 32u / oi_dtype_bits(out->dtype);
        items = ((uint64_t)out->offset + push.n_out + per - 1) / per - (uint64_t)out->offset / per;
    }
    oi__vk_stage *wr = oi__vk_nn_stage(plan, OI__VK_SHADER_TOPK, k->op, x->dtype, x->dtype, x->dtype, out->dtype,
                                       &push, sizeof push);
    wr->roles[0] = OI__VK_ROLE_IN0;
    wr->roles[1] = OI__VK_ROLE_TEMP;
    wr->roles[3] = OI__VK_ROLE_OUT;
    return oi__vk_groups(ctx, (items + 127) / 128, 1, wr->groups);
}

/* ---- matmul_q8, matmul_q4: matmul_quant.comp, matvec_quant.comp ---- */

/* The `format` of matmul_q4 and dequantize as the shaders number it:
 * 1 q4_0 (matmul_q4's default), 2 q4_1, 3 q8_0. */
static uint32_t oi__vk_q_format(const oi__kernel_args *k) {
    const oi__attr *format = oi__op_attr_for(k, "format");
    return !format || strcmp(format->s, "q4_0") == 0 ? 1u : strcmp(format->s, "q4_1") == 0 ? 2u : 3u;
}

/* The leading dims of x [..., K] as rows [M, K]: false when they do not
 * walk as one stride, else *row_stride is it (0 for a single row). */
static bool oi__vk_rows_of(const oi__vk_view *x, int64_t *row_stride) {
    int64_t lead_shape[OI_MAX_DIMS], lead_strides[1][OI_MAX_DIMS];
    for (int d = 0; d < x->ndim - 1; d++) {
        lead_shape[d] = x->shape[d];
        lead_strides[0][d] = x->strides[d];
    }
    int nl = oi__vk_merge_dims(x->ndim - 1, lead_shape, 1, lead_strides);
    *row_stride = lead_strides[0][0];
    return nl == 1;
}

/* matmul_q4 with a few rows of x (decoding), and every q8_0 or
 * activations="q8" case: matvec_quant.comp, a workgroup per 4 columns
 * (64 on a CPU device: matvec_quant.comp's SPLIT). */
#define OI__VK_MATVEC_MAX_ROWS 8

static oi_status oi__vk_plan_matvec_quant(const oi__vk_context *ctx, const oi__vk_qmm_push *q, bool act_q8,
                                          oi_dtype x_dtype, const oi__vk_view *out, oi__vk_plan *plan) {
    oi__vk_matvec_push push = {q->M, q->N, q->K, q->a_stride_m, q->a_stride_k, q->a_offset, q->w_stride_n, q->w_offset, 0};
    bool direct = oi__vk_nn_direct(out, &push.d_offset);
    oi__vk_stage *st = oi__vk_nn_stage(plan, OI__VK_SHADER_MATVEC_QUANT, OI_OP_matmul_q4, x_dtype, x_dtype, x_dtype,
                                       OI_DTYPE_F32, &push, sizeof push);
    uint32_t split = oi__vk_matvec_split(oi__vk_cpu_device(ctx)), cols = 64u / split;
    st->pipeline.spec[0] = split; /* SPLIT, FORMAT and ACT_Q8: matvec_quant.comp folds them */
    st->pipeline.spec[2] = q->format;
    st->pipeline.spec[3] = act_q8 ? 1u : 0u;
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = OI__VK_ROLE_IN1;
    st->roles[2] = OI__VK_ROLE_UNUSED;
    return oi__vk_nn_finish(ctx, st, direct, ((uint64_t)q->N + cols - 1) / cols, out, plan);
}
static oi_status oi__vk_plan_qmm(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                 const oi__vk_view *out, oi__vk_plan *plan) {
    const oi__vk_view *x = &in[0], *w = &in[1];
    const char *name = oi_op_name(k->op);
    oi__vk_qmm_push push;
    memset(&push, 0, sizeof push);
    int64_t M = oi__shape_numel(x->ndim - 1, x->shape), a_stride_m;
    if (!oi__vk_rows_of(x, &a_stride_m)) /* x [..., K] as [M, K] */
        return oi__vk_unsupported("%s: the leading dims of x do not merge into one", name);
    if (x->shape[x->ndim - 1] == 0)
        return oi__vk_unsupported("%s: K = 0 (the CPU writes zeros, whatever the scales)", name);
    push.M = (uint32_t)M;
    push.K = (uint32_t)x->shape[x->ndim - 1];
    push.N = (uint32_t)out->shape[out->ndim - 1];
    push.a_stride_m = (uint32_t)a_stride_m;
    push.a_stride_k = (uint32_t)x->strides[x->ndim - 1];
    push.a_offset = (uint32_t)x->offset;
    push.w_offset = (uint32_t)w->offset;
    oi_dtype scale_t = x->dtype;
    if (k->op == OI_OP_matmul_q8) {
        const oi__attr *layout = oi__op_attr_for(k, "layout");
        bool kn = layout && strcmp(layout->s, "kn") == 0;
        push.w_stride_n = (uint32_t)w->strides[kn ? 1 : 0];
        push.w_stride_k = (uint32_t)w->strides[kn ? 0 : 1];
        scale_t = in[2].dtype;
        if (!oi__vk_nn_float(scale_t))
            return oi__vk_unsupported("matmul_q8: no shader reads a %s scale", oi_dtype_name(scale_t));
        push.s_stride = (uint32_t)in[2].strides[0];
        push.s_offset = (uint32_t)in[2].offset;
    } else {
        const oi__attr *act = oi__op_attr_for(k, "activations");
        push.format = oi__vk_q_format(k);
        if (w->strides[1] != 1 && w->shape[1] != 1)
            return oi__vk_unsupported("matmul_q4: the bytes of a weight row are not contiguous");
        push.w_stride_n = (uint32_t)w->strides[0];
        bool act_q8 = act && strcmp(act->s, "q8") == 0;
        if (act_q8 || push.format == 3u || M <= OI__VK_MATVEC_MAX_ROWS)
            return oi__vk_plan_matvec_quant(ctx, &push, act_q8, x->dtype, out, plan);
    }
    bool direct = oi__vk_nn_direct(out, &push.d_offset);
    oi__vk_stage *st = oi__vk_nn_stage(plan, OI__VK_SHADER_MATMUL_QUANT, k->op, x->dtype, scale_t, scale_t,
                                       OI_DTYPE_F32, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = OI__VK_ROLE_IN1;
    st->roles[2] = k->op == OI_OP_matmul_q8 ? OI__VK_ROLE_IN2 : OI__VK_ROLE_UNUSED;
    st->roles[3] = direct ? OI__VK_ROLE_OUT : OI__VK_ROLE_TEMP;
    const uint32_t *max = ctx->caps.props.limits.maxComputeWorkGroupCount;
    uint64_t gx = ((uint64_t)push.N + 63) / 64, gy = ((uint64_t)push.M + 63) / 64;
    if (gx > max[0] || gy > max[1])
        return oi__vk_unsupported("%s: %u x %u outputs exceed the dispatch limits", name, push.M, push.N);
    st->groups[0] = (uint32_t)(gx ? gx : 1);
    st->groups[1] = (uint32_t)(gy ? gy : 1);
    st->groups[2] = 1;
    if (direct)
        return OI_OK;
    return oi__vk_plan_cast_from_temp(ctx, OI_DTYPE_F32, out, plan);
}

/* ---- dequantize: dequantize.comp, an invocation per f32 element ---- */
static oi_status oi__vk_plan_dequant(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                     const oi__vk_view *out, oi__vk_plan *plan) {
    const oi__vk_view *w = &in[0];
    int64_t row_stride;
    if (w->strides[w->ndim - 1] != 1)
        return oi__vk_unsupported("dequantize: the bytes of a row of w are not contiguous");
    if (!oi__vk_rows_of(w, &row_stride))
        return oi__vk_unsupported("dequantize: the leading dims of w do not merge into one");
    oi__vk_dequant_push push;
    memset(&push, 0, sizeof push);
    push.n = (uint32_t)oi__shape_numel(out->ndim, out->shape);
    push.K = (uint32_t)out->shape[out->ndim - 1];
    push.format = oi__vk_q_format(k);
    push.w_stride_row = (uint32_t)row_stride;
    push.w_offset = (uint32_t)w->offset;
    push.d_offset = (uint32_t)out->offset;
    oi__vk_stage *st = oi__vk_nn_stage(plan, OI__VK_SHADER_DEQUANTIZE, k->op, w->dtype, w->dtype, w->dtype,
                                       OI_DTYPE_F32, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[3] = OI__VK_ROLE_OUT;
    return oi__vk_groups(ctx, ((uint64_t)push.n + 255) / 256, 1, st->groups);
}

/* The dtype checks the family shares: float data (f32, f16, bf16) in and
 * out (top_k: any 8/16/32-bit data; dequantize: u8 in, f32 out), the
 * output contiguous; the index/weight inputs are the planners'. */
static oi_status oi__vk_nn_check(const oi__kernel_args *k, const oi__vk_view *in, size_t n_in, const oi__vk_view *out) {
    oi_op op = k->op;
    const char *name = oi_op_name(op);
    if (!oi__vk_view_contiguous(out))
        return oi__vk_unsupported("%s: the output is not contiguous", name);
    bool is_topk = op == OI_OP_top_k || op == OI_OP_top_k_indices;
    if (is_topk) {
        if (!oi__vk_dtype_ok(in[0].dtype))
            return oi__vk_unsupported("%s: no shader reads %s", name, oi_dtype_name(in[0].dtype));
        return out->dtype == (op == OI_OP_top_k ? in[0].dtype : OI_DTYPE_I64)
                   ? OI_OK : oi__vk_unsupported("%s: a %s output", name, oi_dtype_name(out->dtype));
    }
    if (op == OI_OP_dequantize) /* u8 blocks in, f32 out */
        return in[0].dtype == OI_DTYPE_U8 && out->dtype == OI_DTYPE_F32
                   ? OI_OK : oi__vk_unsupported("%s: %s in, %s out", name, oi_dtype_name(in[0].dtype),
                                                oi_dtype_name(out->dtype));
    /* attention writes f32 rows, cast into any float output (the simulator's
     * f16/bf16 activations from f32 operands) */
    bool converts = op == OI_OP_attention && oi__vk_nn_float(out->dtype);
    if (!oi__vk_nn_float(in[0].dtype) || (out->dtype != in[0].dtype && !converts))
        return oi__vk_unsupported("%s: no shader for %s", name, oi_dtype_name(in[0].dtype));
    bool same_dtypes = op == OI_OP_batch_norm || op == OI_OP_group_norm || op == OI_OP_attention;
    for (size_t i = 1; i < n_in && same_dtypes; i++) /* attention's bool mask is allowed */
        if (!oi__vk_nn_float(in[i].dtype) && !(op == OI_OP_attention && i == 3 && in[i].dtype == OI_DTYPE_BOOL))
            return oi__vk_unsupported("%s: no shader reads a %s input", name, oi_dtype_name(in[i].dtype));
    return OI_OK;
}

static bool oi__vk_plan_nn_family(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                  size_t n_in, const oi__vk_view *out, oi__vk_plan *plan, oi_status *status) {
    switch (k->op) {
    case OI_OP_batch_norm: case OI_OP_group_norm: case OI_OP_rope: case OI_OP_attention: case OI_OP_top_k:
    case OI_OP_top_k_indices: case OI_OP_matmul_q8: case OI_OP_matmul_q4: case OI_OP_dequantize:
        break;
    default:
        return false;
    }
    oi_status s = oi__vk_nn_check(k, in, n_in, out);
    if (s != OI_OK) {
        *status = s;
        return true;
    }
    switch (k->op) {
    case OI_OP_batch_norm: case OI_OP_group_norm: *status = oi__vk_plan_chnorm(ctx, k, in, n_in, out, plan); break;
    case OI_OP_rope: *status = oi__vk_plan_rope(ctx, k, in, out, plan); break;
    case OI_OP_attention: *status = oi__vk_plan_attention(ctx, k, in, n_in, out, plan); break;
    case OI_OP_top_k: case OI_OP_top_k_indices: *status = oi__vk_plan_topk(ctx, k, in, out, plan); break;
    case OI_OP_dequantize: *status = oi__vk_plan_dequant(ctx, k, in, out, plan); break;
    default: *status = oi__vk_plan_qmm(ctx, k, in, out, plan); break;
    }
    return true;
}
