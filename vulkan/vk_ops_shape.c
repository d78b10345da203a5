/* vk_ops_shape.c - the Vulkan plans of the shape family (reshape, transpose, squeeze, unsqueeze, slice, split, concat, gather, where, pad, expand, tile, gemm, global_avg_pool).
 * Included by vk_ops.c before its planner, which calls
 * oi__vk_plan_shape_family for every op: it returns false for ops not of
 * this family, else sets *status (OI_OK with a filled plan, or the reason
 * the op runs on the CPU).
 *
 * The layout ops, tile and concat are one strided copy (copy.comp) whose
 * dims and strides come from the CPU kernel's own layout code
 * (kernels/shape.c, same translation unit), so both agree on what is
 * copied. where is eltwise.comp's filter with its inputs reordered; gemm
 * is the matmul shader into an f32 scratch plus an epilogue;
 * global_avg_pool is reduce.comp's mean over the spatial dims.
 * One deviation: gather's indices are checked by the CPU kernel before it
 * writes (an out-of-range one is an error); the shader cannot report one,
 * so it writes zero bits for it. Valid indices give the CPU's bits. */

/* ---- push constants: the same names as the GLSL push blocks ---- */
#define OI__VK_COPY_DIMS 8
typedef struct oi__vk_copy_push {
    uint32_t n, ndim, a_offset, d_offset;
    uint32_t win_dim, win_lo, win_hi;
    uint32_t shape[OI__VK_COPY_DIMS];
    int32_t a_strides[OI__VK_COPY_DIMS];
} oi__vk_copy_push;

#define OI__VK_PAD_DIMS 6
typedef struct oi__vk_pad_push {
    uint32_t n, ndim, a_offset, d_offset;
    uint32_t mode, fill;
    uint32_t shape[OI__VK_PAD_DIMS];
    int32_t begin[OI__VK_PAD_DIMS];
    uint32_t in_shape[OI__VK_PAD_DIMS];
    int32_t a_strides[OI__VK_PAD_DIMS];
    uint32_t fill_hi;
} oi__vk_pad_push;

#define OI__VK_GATHER_DIMS 8
typedef struct oi__vk_gather_push {
    uint32_t n, ndim, a_offset, b_offset, d_offset;
    uint32_t axis_dim, axis_stride;
    uint32_t shape[OI__VK_GATHER_DIMS];
    uint32_t a_strides[OI__VK_GATHER_DIMS], b_strides[OI__VK_GATHER_DIMS];
} oi__vk_gather_push;

typedef struct oi__vk_gemm_push {
    uint32_t n, cols, d_offset;
    uint32_t has_c, c_offset, c_stride_m, c_stride_n;
    float alpha, beta;
    uint32_t act;    /* activation=: 0 none, 1 relu, 2 gelu, 3 gelu_tanh, 4 hard_swish */
    uint32_t slices; /* partial products of a split K, n apart, summed first */
} oi__vk_gemm_push;

typedef char oi__vk_copy_push_fits[sizeof(oi__vk_copy_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_pad_push_fits[sizeof(oi__vk_pad_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_gather_push_fits[sizeof(oi__vk_gather_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_gemm_push_fits[sizeof(oi__vk_gemm_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];

/* Workgroups for a shader writing one 32-bit word of `n` elements of
 * `out` per invocation (256 per group). */
static oi_status oi__vk_word_groups(const oi__vk_context *ctx, const oi__vk_view *out, int64_t n, uint32_t groups[3]) {
    return oi__vk_groups(ctx, (oi__vk_out_invocations(out, n) + 255) / 256, 1, groups);
}

static oi__vk_stage *oi__vk_new_stage(oi__vk_plan *plan, oi__vk_shader shader, oi_op op, oi_dtype a, oi_dtype b,
                                      oi_dtype d) {
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    oi__vk_set_pipeline(st, OI__VK_ELTWISE, op, a, b, a, d);
    st->pipeline.shader = (uint32_t)shader;
    return st;
}

/* ---- strided copies ---- */
/* One copy stage: the output (contiguous) walks `ndim` dims of `shape`;
 * the input at `offset` + coord . strides. Rows outside [lo, hi) of dim
 * win_dim are left alone (lo = 0, hi = UINT32_MAX: no window). */
static oi_status oi__vk_copy_stage(const oi__vk_context *ctx, oi__vk_plan *plan, oi__vk_role from, oi_dtype dtype,
                                   int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                                   const oi__vk_view *out, int win_dim, uint32_t lo, uint32_t hi) {
    if (ndim > OI__VK_COPY_DIMS)
        return oi__vk_unsupported("a copy over %d dims after merging (the shader walks %d)", ndim, OI__VK_COPY_DIMS);
    if (offset < 0 || offset > INT32_MAX)
        return oi__vk_unsupported("a copy from element offset %lld", (long long)offset);
    oi__vk_copy_push push;
    memset(&push, 0, sizeof push);
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    push.n = (uint32_t)n;
    push.ndim = (uint32_t)ndim;
    push.a_offset = (uint32_t)offset;
    push.d_offset = (uint32_t)out->offset;
    push.win_dim = (uint32_t)win_dim;
    push.win_lo = lo;
    push.win_hi = hi;
    for (int d = 0; d < ndim; d++) {
        if (strides[d] < INT32_MIN || strides[d] > INT32_MAX)
            return oi__vk_unsupported("a copy with stride %lld", (long long)strides[d]);
        push.shape[d] = (uint32_t)shape[d];
        push.a_strides[d] = (int32_t)strides[d];
    }
    oi__vk_stage *st = oi__vk_new_stage(plan, OI__VK_SHADER_COPY, OI_OP_reshape, dtype, dtype, out->dtype);
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = from;
    st->roles[3] = OI__VK_ROLE_OUT;
    return oi__vk_word_groups(ctx, out, n, st->groups);
}

/* A whole-output copy over dims merged where the input walks them as one. */
static oi_status oi__vk_copy_merged(const oi__vk_context *ctx, oi__vk_plan *plan, oi_dtype dtype, int ndim,
                                    const int64_t *shape_in, const int64_t *strides_in, int64_t offset,
                                    const oi__vk_view *out) {
    int64_t shape[OI_MAX_DIMS], strides[1][OI_MAX_DIMS];
    memcpy(shape, shape_in, sizeof(int64_t) * (size_t)ndim);
    memcpy(strides[0], strides_in, sizeof(int64_t) * (size_t)ndim);
    int nd = oi__vk_merge_dims(ndim, shape, 1, strides);
    return oi__vk_copy_stage(ctx, plan, OI__VK_ROLE_IN0, dtype, nd, shape, strides[0], offset, out, 0, 0, UINT32_MAX);
}

/* reshape, transpose, squeeze, unsqueeze, slice, split, expand: the CPU's
 * layout of the result over the input's storage, copied out. */
static oi_status oi__vk_plan_layout(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                    const oi__vk_view *out, oi__vk_plan *plan) {
    oi__shape_view v;
    memset(&v, 0, sizeof v);
    v.ndim = in->ndim;
    memcpy(v.shape, in->shape, sizeof v.shape);
    memcpy(v.strides, in->strides, sizeof v.strides);
    v.offset = in->offset;
    bool needs_copy;
    if (oi__shape_layout(k, &v, &needs_copy) != OI_OK)
        return OI_ERROR_VALIDATION;
    if (needs_copy) /* reshape of a strided input: the input in row-major order is the output */
        return oi__vk_copy_merged(ctx, plan, in->dtype, in->ndim, in->shape, in->strides, in->offset, out);
    return oi__vk_copy_merged(ctx, plan, in->dtype, v.ndim, v.shape, v.strides, v.offset, out);
}

/* tile: output dim d is (repeats[d], in.shape[d]) walked with strides
 * (0, in.strides[d]); dims of 1 dropped before they count. */
static oi_status oi__vk_plan_tile(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                  const oi__vk_view *out, oi__vk_plan *plan) {
    const int64_t *reps;
    int count;
    if (!oi__shape_list(k, "repeats", &reps, &count) || count != in->ndim)
        return OI_ERROR_VALIDATION;
    int64_t shape[OI_MAX_DIMS], strides[OI_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < in->ndim; d++) {
        int64_t pair_shape[2] = {reps[d], in->shape[d]}, pair_stride[2] = {0, in->strides[d]};
        for (int p = 0; p < 2; p++) {
            if (pair_shape[p] == 1)
                continue;
            if (nd == OI_MAX_DIMS)
                return oi__vk_unsupported("tile: more than %d repeated and data dims", OI_MAX_DIMS);
            shape[nd] = pair_shape[p];
            strides[nd++] = pair_stride[p];
        }
    }
    return oi__vk_copy_merged(ctx, plan, in->dtype, nd, shape, strides, in->offset, out);
}

/* Merges dims [from, to) of shape/strides into *nd entries at dst. */
static void oi__vk_merge_group(int from, int to, const int64_t *shape, const int64_t *strides, int64_t *dst_shape,
                               int64_t *dst_strides, int *nd) {
    if (from >= to)
        return;
    int64_t sh[OI_MAX_DIMS], st[1][OI_MAX_DIMS];
    memcpy(sh, shape + from, sizeof(int64_t) * (size_t)(to - from));
    memcpy(st[0], strides + from, sizeof(int64_t) * (size_t)(to - from));
    int kept = oi__vk_merge_dims(to - from, sh, 1, st);
    for (int d = 0; d < kept; d++) {
        dst_shape[*nd] = sh[d];
        dst_strides[(*nd)++] = st[0][d];
    }
}

/* concat: one windowed copy per input, each filling its band of the
 * axis; the dims before and after the axis merge on their own. */
static oi_status oi__vk_plan_concat(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                    size_t n_in, const oi__vk_view *out, oi__vk_plan *plan) {
    int axis;
    if (!oi__shape_axis(oi__op_param_i64(k, "axis"), out->ndim, &axis))
        return OI_ERROR_VALIDATION;
    if (n_in > OI__VK_MAX_STAGES)
        return oi__vk_unsupported("concat: %zu inputs (one stage each, at most %d)", n_in, OI__VK_MAX_STAGES);
    int64_t at = 0;
    for (size_t i = 0; i < n_in; i++) {
        int64_t len = in[i].shape[axis];
        if (len == 0)
            continue;
        int64_t shape[OI_MAX_DIMS], strides[OI_MAX_DIMS];
        int nd = 0;
        oi__vk_merge_group(0, axis, out->shape, in[i].strides, shape, strides, &nd);
        int win = nd;
        shape[nd] = out->shape[axis];
        strides[nd++] = in[i].strides[axis];
        oi__vk_merge_group(axis + 1, out->ndim, out->shape, in[i].strides, shape, strides, &nd);
        oi__vk_role from = (oi__vk_role)(OI__VK_ROLE_IN0 + (int)i);
        oi_status s = oi__vk_copy_stage(ctx, plan, from, in[i].dtype, nd, shape, strides, in[i].offset, out, win,
                                        (uint32_t)at, (uint32_t)(at + len));
        if (s != OI_OK)
            return s;
        at += len;
    }
    return OI_OK;
}

/* ---- pad ---- */
static oi_status oi__vk_plan_pad(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                 const oi__vk_view *out, oi__vk_plan *plan) {
    oi__op_sig sig;
    memset(&sig, 0, sizeof sig);
    sig.dtype = in->dtype;
    sig.ndim = in->ndim;
    memcpy(sig.shape, in->shape, sizeof sig.shape);
    int64_t begin[OI_MAX_DIMS], end[OI_MAX_DIMS];
    oi__pad_mode mode;
    if (oi__shape_pad_plan(k, &sig, begin, end, &mode) != OI_OK)
        return OI_ERROR_VALIDATION;
    oi__vk_pad_push push;
    memset(&push, 0, sizeof push);
    int nd = 0;
    bool prev_plain = false; /* the last kept dim is neither padded nor cropped */
    for (int d = 0; d < in->ndim; d++) {
        bool plain = begin[d] == 0 && end[d] == 0;
        if (plain && in->shape[d] == 1)
            continue; /* walks nothing */
        if (plain && prev_plain && (int64_t)push.a_strides[nd - 1] == in->strides[d] * in->shape[d]) {
            push.shape[nd - 1] *= (uint32_t)in->shape[d]; /* one run with the previous dim */
            push.in_shape[nd - 1] = push.shape[nd - 1];
            push.a_strides[nd - 1] = (int32_t)in->strides[d];
            continue;
        }
        if (nd == OI__VK_PAD_DIMS)
            return oi__vk_unsupported("pad: more than %d dims after merging", OI__VK_PAD_DIMS);
        if (in->strides[d] > INT32_MAX || begin[d] < INT32_MIN || begin[d] > INT32_MAX)
            return oi__vk_unsupported("pad: a stride or pad beyond 32 bits");
        push.shape[nd] = (uint32_t)out->shape[d];
        push.begin[nd] = (int32_t)begin[d];
        push.in_shape[nd] = (uint32_t)in->shape[d];
        push.a_strides[nd++] = (int32_t)in->strides[d];
        prev_plain = plain;
    }
    if (nd == 0) { /* every dim is 1: one element */
        push.shape[0] = push.in_shape[0] = 1;
        nd = 1;
    }
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    push.n = (uint32_t)n;
    push.ndim = (uint32_t)nd;
    push.a_offset = (uint32_t)in->offset;
    push.d_offset = (uint32_t)out->offset;
    push.mode = (uint32_t)mode;
    uint64_t fill = oi__shape_fill_bits(k, in->dtype);
    push.fill = (uint32_t)fill;
    push.fill_hi = (uint32_t)(fill >> 32);
    oi__vk_stage *st = oi__vk_new_stage(plan, OI__VK_SHADER_PAD, OI_OP_pad, in->dtype, in->dtype, out->dtype);
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[3] = OI__VK_ROLE_OUT;
    return oi__vk_word_groups(ctx, out, n, st->groups);
}

/* ---- gather ---- */
static bool oi__vk_gather_index_ok(oi_dtype t) {
    switch (t) {
    case OI_DTYPE_I8: case OI_DTYPE_I16: case OI_DTYPE_I32: case OI_DTYPE_I64:
    case OI_DTYPE_U8: case OI_DTYPE_U16: case OI_DTYPE_U32: case OI_DTYPE_U64:
        return true;
    default:
        return false;
    }
}

static oi_status oi__vk_plan_gather(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                    const oi__vk_view *out, oi__vk_plan *plan) {
    const oi__vk_view *data = &in[0], *idx = &in[1];
    if (!oi__vk_gather_index_ok(idx->dtype))
        return oi__vk_unsupported("gather: no shader reads %s indices", oi_dtype_name(idx->dtype));
    int axis;
    if (!oi__shape_axis(oi__op_param_i64(k, "axis"), data->ndim, &axis))
        return OI_ERROR_VALIDATION;
    /* output dims: data's before the axis, the indices', data's after */
    int64_t shape[OI_MAX_DIMS], strides[2][OI_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < data->ndim; d++) {
        if (d == axis) {
            for (int j = 0; j < idx->ndim; j++) {
                shape[nd] = idx->shape[j];
                strides[0][nd] = 0;
                strides[1][nd++] = idx->strides[j];
            }
            continue;
        }
        shape[nd] = data->shape[d];
        strides[0][nd] = data->strides[d];
        strides[1][nd++] = 0;
    }
    nd = oi__vk_merge_dims(nd, shape, 2, strides);
    oi__vk_gather_push push;
    memset(&push, 0, sizeof push);
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    push.n = (uint32_t)n;
    push.ndim = (uint32_t)nd;
    push.a_offset = (uint32_t)data->offset;
    push.b_offset = (uint32_t)idx->offset;
    push.d_offset = (uint32_t)out->offset;
    push.axis_dim = (uint32_t)data->shape[axis];
    push.axis_stride = (uint32_t)data->strides[axis];
    for (int d = 0; d < nd; d++) {
        push.shape[d] = (uint32_t)shape[d];
        push.a_strides[d] = (uint32_t)strides[0][d];
        push.b_strides[d] = (uint32_t)strides[1][d];
    }
    oi__vk_stage *st = oi__vk_new_stage(plan, OI__VK_SHADER_GATHER, OI_OP_gather, data->dtype, idx->dtype, out->dtype);
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = OI__VK_ROLE_IN1;
    st->roles[3] = OI__VK_ROLE_OUT;
    return oi__vk_word_groups(ctx, out, n, st->groups);
}

/* ---- where: eltwise's filter(a, b, cond), which selects the same bits ---- */
static oi_status oi__vk_plan_where(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                   const oi__vk_view *out, oi__vk_plan *plan) {
    oi__kernel_args filter = *k;
    filter.op = OI_OP_filter;
    oi__vk_view operands[3];
    operands[0] = in[1];
    operands[1] = in[2];
    operands[2] = in[0];
    oi_status s = oi__vk_plan_eltwise(ctx, &filter, operands, 3, out, plan);
    if (s != OI_OK)
        return s;
    oi__vk_stage *st = &plan->stages[0]; /* bind a, b, cond where filter reads them */
    st->roles[0] = OI__VK_ROLE_IN1;
    st->roles[1] = OI__VK_ROLE_IN2;
    st->roles[2] = OI__VK_ROLE_IN0;
    return OI_OK;
}

/* ---- gemm: the matmul shader into f32 scratch (split along K when the
 * output has few blocks), then the slices summed and alpha/beta/C ---- */
static void oi__vk_swap_last2(oi__vk_view *v) {
    int64_t t = v->shape[0];
    v->shape[0] = v->shape[1];
    v->shape[1] = t;
    t = v->strides[0];
    v->strides[0] = v->strides[1];
    v->strides[1] = t;
}

static oi_status oi__vk_plan_gemm(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                  size_t n_in, const oi__vk_view *out, oi__vk_plan *plan) {
    oi__vk_view ab[2];
    ab[0] = in[0];
    ab[1] = in[1];
    if (oi__op_param_bool(k, "trans_a"))
        oi__vk_swap_last2(&ab[0]);
    if (oi__op_param_bool(k, "trans_b"))
        oi__vk_swap_last2(&ab[1]);
    int64_t M = out->shape[0], N = out->shape[1];
    if (ab[0].shape[1] == 0)
        return oi__vk_unsupported("gemm: K = 0");
    oi__vk_view product;
    memset(&product, 0, sizeof product);
    product.dtype = OI_DTYPE_F32;
    product.ndim = 2;
    product.shape[0] = M;
    product.shape[1] = N;
    oi__contiguous_strides(2, product.shape, product.strides);
    product.storage_bytes = (uint64_t)(M * N) * 4u;
    oi__kernel_args mm = *k;
    mm.op = OI_OP_matmul;
    uint32_t slices = 1;
    oi_status s = oi__vk_plan_matmul(ctx, &mm, ab, &product, &slices, plan);
    if (s != OI_OK)
        return s;
    plan->stages[0].roles[3] = OI__VK_ROLE_TEMP;
    plan->temp_bytes = product.storage_bytes * slices;

    double alpha = oi__op_param_f64(k, "alpha"), beta = oi__op_param_f64(k, "beta");
    oi__vk_gemm_push push;
    memset(&push, 0, sizeof push);
    push.n = (uint32_t)(M * N);
    push.cols = (uint32_t)N;
    push.d_offset = (uint32_t)out->offset;
    push.has_c = n_in == 3 && beta != 0.0; /* the CPU ignores C then, NaN or not */
    push.alpha = (float)alpha;
    push.beta = (float)beta;
    oi__conv_act act = oi__conv_act_of(k);
    push.act = (uint32_t)act;
    push.slices = slices;
    oi_dtype c_dtype = OI_DTYPE_F32;
    if (push.has_c) {
        const oi__vk_view *c = &in[2];
        c_dtype = c->dtype;
        push.c_offset = (uint32_t)c->offset;
        if (c->ndim >= 1 && c->shape[c->ndim - 1] != 1)
            push.c_stride_n = (uint32_t)c->strides[c->ndim - 1];
        if (c->ndim == 2 && c->shape[0] != 1)
            push.c_stride_m = (uint32_t)c->strides[0];
    }
    oi__vk_stage *st =
        oi__vk_new_stage(plan, OI__VK_SHADER_GEMM_EPILOGUE, OI_OP_gemm, OI_DTYPE_F32, c_dtype, out->dtype);
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_TEMP;
    st->roles[1] = push.has_c ? OI__VK_ROLE_IN2 : OI__VK_ROLE_UNUSED;
    st->roles[3] = OI__VK_ROLE_OUT;
    return oi__vk_word_groups(ctx, out, M * N, st->groups);
}

/* ---- global_avg_pool: mean_axis over dims 2.. in reduce.comp ---- */
static oi_status oi__vk_plan_global_avg_pool(const oi__vk_context *ctx, const oi__vk_view *x, const oi__vk_view *out,
                                             oi__vk_plan *plan) {
    int64_t k_shape[OI_MAX_DIMS], r_shape[OI_MAX_DIMS], k_strides[1][OI_MAX_DIMS], r_strides[1][OI_MAX_DIMS];
    int nk = 2, nr = x->ndim - 2;
    for (int d = 0; d < 2; d++) {
        k_shape[d] = x->shape[d];
        k_strides[0][d] = x->strides[d];
    }
    for (int d = 0; d < nr; d++) {
        r_shape[d] = x->shape[d + 2];
        r_strides[0][d] = x->strides[d + 2];
    }
    int64_t n_out = oi__shape_numel(nk, k_shape), n_red = oi__shape_numel(nr, r_shape);
    if (n_red == 0)
        return oi__vk_unsupported("global_avg_pool: no spatial elements");
    nk = oi__vk_merge_dims(nk, k_shape, 1, k_strides);
    nr = oi__vk_merge_dims(nr, r_shape, 1, r_strides);
    if (nr > OI__VK_REDUCE_DIMS)
        return oi__vk_unsupported("global_avg_pool: %d spatial dims after merging", nr);
    oi__vk_reduce_push push;
    oi__vk_reduce_layout(&push, n_out, n_red, nk, k_shape, k_strides[0], nr, r_shape, r_strides[0], x->offset,
                         out->offset);
    push.select_first = 1u;
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    oi__vk_set_pipeline(st, OI__VK_REDUCE, OI_OP_mean_axis, x->dtype, x->dtype, x->dtype, out->dtype);
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[3] = OI__VK_ROLE_OUT;
    return oi__vk_groups(ctx, oi__vk_out_invocations(out, n_out), 1, st->groups); /* a workgroup per output word */
}

/* ---- the family's entry ---- */
static bool oi__vk_is_shape_family(oi_op op) {
    switch (op) {
    case OI_OP_reshape: case OI_OP_transpose: case OI_OP_squeeze: case OI_OP_unsqueeze: case OI_OP_slice:
    case OI_OP_split: case OI_OP_concat: case OI_OP_gather: case OI_OP_where: case OI_OP_pad: case OI_OP_expand:
    case OI_OP_tile: case OI_OP_gemm: case OI_OP_global_avg_pool:
        return true;
    default:
        return false;
    }
}

/* Dtypes: data movement copies any element of 8 to 64 bits (gather's
 * indices aside); where computes nothing either, but is eltwise's filter,
 * whose 64-bit form needs caps.has_wide; gemm and global_avg_pool compute
 * in f32 on float storage. */
static bool oi__vk_moves_wide(oi_op op) {
#define OI__VK_MOVES(name) case OI_OP_##name:
    switch (op) {
    OI_VULKAN_OPS_WIDE_MOVES(OI__VK_MOVES)
        return true;
    default:
        return false;
    }
#undef OI__VK_MOVES
}

static bool oi__vk_shape_dtype_ok(const oi__vk_context *ctx, oi_op op, oi_dtype t) {
    if (op == OI_OP_gemm || op == OI_OP_global_avg_pool)
        return oi__vk_dtype_ok(t) && oi__dtype_is_float(t);
    if (oi__vk_dtype_wide(t))
        return oi__vk_moves_wide(op) || (op == OI_OP_where && ctx->caps.has_wide);
    return oi__vk_dtype_ok(t);
}

static oi_status oi__vk_shape_dtypes(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                     size_t n_in, const oi__vk_view *out) {
    const char *name = oi_op_name(k->op);
    for (size_t i = 0; i < n_in; i++) {
        if (k->op == OI_OP_gather && i == 1)
            continue;
        if (!oi__vk_shape_dtype_ok(ctx, k->op, in[i].dtype))
            return oi__vk_unsupported("%s: no shader for %s", name, oi_dtype_name(in[i].dtype));
    }
    if (!oi__vk_shape_dtype_ok(ctx, k->op, out->dtype))
        return oi__vk_unsupported("%s: no shader writes %s", name, oi_dtype_name(out->dtype));
    if (!oi__vk_view_contiguous(out))
        return oi__vk_unsupported("%s: the output is not contiguous", name);
    return OI_OK;
}

static bool oi__vk_plan_shape_family(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                     size_t n_in, const oi__vk_view *out, oi__vk_plan *plan, oi_status *status) {
    if (!oi__vk_is_shape_family(k->op))
        return false;
    *status = oi__vk_shape_dtypes(ctx, k, in, n_in, out);
    if (*status != OI_OK)
        return true;
    switch (k->op) {
    case OI_OP_concat: *status = oi__vk_plan_concat(ctx, k, in, n_in, out, plan); break;
    case OI_OP_gather: *status = oi__vk_plan_gather(ctx, k, in, out, plan); break;
    case OI_OP_where: *status = oi__vk_plan_where(ctx, k, in, out, plan); break;
    case OI_OP_pad: *status = oi__vk_plan_pad(ctx, k, in, out, plan); break;
    case OI_OP_tile: *status = oi__vk_plan_tile(ctx, k, in, out, plan); break;
    case OI_OP_gemm: *status = oi__vk_plan_gemm(ctx, k, in, n_in, out, plan); break;
    case OI_OP_global_avg_pool: *status = oi__vk_plan_global_avg_pool(ctx, &in[0], out, plan); break;
    default: *status = oi__vk_plan_layout(ctx, k, in, out, plan); break;
    }
    return true;
}
