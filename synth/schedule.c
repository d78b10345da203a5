/* schedule.c - the validated plan becomes what the emitted code does: a
 * tree of steps (kernels, loops, branches, copies, cache operations), the
 * kernels with the DSL statements each one fuses, and a home for every
 * variable (the model file, the state block, or an offset in one arena
 * planned from liveness). It decides everything and prints nothing:
 * render.c turns the result into source.
 *
 * What the C target does not support yet is refused here, with the DSL
 * statement's file:line, rather than emitted wrong. */
#include "synth_internal.h"

/* ------------------------------------------------------------------ */
/* Which ops the C target runs, and how they fuse                     */
/* ------------------------------------------------------------------ */
static bool oi__sy_float(oi_dtype t) { return t == OI_DTYPE_F32 || t == OI_DTYPE_F64; }
static bool oi__sy_int(oi_dtype t) {
    return t == OI_DTYPE_I8 || t == OI_DTYPE_I16 || t == OI_DTYPE_I32 || t == OI_DTYPE_I64 || t == OI_DTYPE_U8 ||
           t == OI_DTYPE_U16 || t == OI_DTYPE_U32 || t == OI_DTYPE_U64;
}

/* A search over a few dozen rows: an enum-indexed array would need
 * designated initializers, which the C++17 build of the library lacks. */
const oi__sy_ew_op *oi__sy_ew_op_of(oi_op op) {
#define OI__SY_EW_ROW(name, domain, form, c_fn, glsl_fn, c_f64_fn) \
    {OI_OP_##name, OI__SY_EW_##domain, OI__SY_EW_##form, c_fn, glsl_fn, c_f64_fn},
    static const oi__sy_ew_op rows[] = {OI__SY_EW_LIST(OI__SY_EW_ROW)};
#undef OI__SY_EW_ROW
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (rows[i].op == op)
            return &rows[i];
    return NULL;
}

static bool oi__sy_number(oi_dtype t) { return oi__sy_float(t) || oi__sy_int(t); }

/* The reductions over `axes` the synthesizer runs (OI__SY_K_REDUCE). */
static bool oi__sy_axes_reduction(oi_op op) {
    return op == OI_OP_sum_axis || op == OI_OP_mean_axis || op == OI_OP_max_axis || op == OI_OP_min_axis ||
           op == OI_OP_prod_axis;
}

/* Ops whose result is elementwise in shape: the op table's EW rows and
 * where (three operands broadcast). */
static bool oi__sy_ew_shaped(oi_op op) { return oi__op_is_elementwise(op) || op == OI_OP_where; }

/* The elementwise ops of OI__SY_EW_LIST, on their domain: in0 is the
 * first input's dtype, in1 the second's (where's a), out the result's. */
static bool oi__sy_ew_supported(oi_op op, oi_dtype in0, oi_dtype in1, oi_dtype out) {
    const oi__sy_ew_op *e = oi__sy_ew_op_of(op);
    if (!e)
        return false;
    /* f16 (its bits) computes as f32 does, decoded by its loads and rounded
     * into f16 after every op, as the simulator stores it (render.c) */
    bool single = in0 == OI_DTYPE_F32 || in0 == OI_DTYPE_F16;
    switch (e->domain) {
    case OI__SY_EW_NUM: return oi__sy_number(in0) || in0 == OI_DTYPE_F16;
    case OI__SY_EW_FLOAT: /* an f32 function of SMATH and MATH serves f64 where the row names its double one */
        return single || (in0 == OI_DTYPE_F64 && (e->form == OI__SY_EW_SCALAR || e->form == OI__SY_EW_LIBM || e->c_f64_fn));
    case OI__SY_EW_F32: return single;
    case OI__SY_EW_INT: return oi__sy_int(in0);
    case OI__SY_EW_SIGNED: return single || in0 == OI_DTYPE_F64 || (oi__sy_int(in0) && oi__dtype_is_signed(in0));
    case OI__SY_EW_BITS: return oi__sy_int(in0) || in0 == OI_DTYPE_BOOL;
    case OI__SY_EW_ANY: return oi__sy_number(in0) || in0 == OI_DTYPE_BOOL;
    case OI__SY_EW_PICK: return in0 == OI_DTYPE_BOOL && oi__sy_number(in1);
    case OI__SY_EW_CAST: /* f16 and bf16 (their bits) into f32, f64 or each other and back, through half.h
                          * (render.c); not into themselves: the simulator copies those bits, NaN payloads too */
        return (oi__sy_number(in0) && oi__sy_number(out)) ||
               ((oi__sy_float(in0) || oi__sy_is_half(in0)) && (oi__sy_float(out) || oi__sy_is_half(out)) && in0 != out);
    }
    return false;
}

int64_t oi__sy_norm_lane(const oi__slot *x, const oi__pnode *pn) {
    oi_op op = pn->ir->op;
    if (op == OI_OP_batch_norm || op == OI_OP_group_norm) { /* x is [N, C, ...]: a channel's or a group's block */
        int64_t split = op == OI_OP_batch_norm ? x->shape[1]
                                               : oi__op_param_value_i64(op, pn->attrs, arrlenu(pn->attrs), "num_groups");
        int64_t lanes = x->shape[0] * split;
        return lanes ? oi__shape_numel(x->ndim, x->shape) / lanes : 0;
    }
    int64_t axis = op == OI_OP_layer_norm ? oi__op_param_value_i64(OI_OP_layer_norm, pn->attrs, arrlenu(pn->attrs), "axis")
                                          : -1;
    axis = axis < 0 ? axis + x->ndim : axis;
    return oi__shape_numel(x->ndim - (int)axis, x->shape + axis);
}

int64_t oi__sy_softmax_lane(const oi__slot *x, const oi__pnode *pn, int64_t *inner) {
    int64_t axis = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "axis");
    axis = axis < 0 ? axis + x->ndim : axis;
    *inner = oi__shape_numel(x->ndim - (int)axis - 1, x->shape + axis + 1);
    return x->shape[axis];
}

oi__sy_gather_dims oi__sy_gather_shape(const oi__sy_schedule *s, const oi__pnode *pn) {
    const oi__slot *data = &s->shaped[pn->inputs[0]], *idx = &s->shaped[pn->inputs[1]];
    int64_t axis = oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "axis");
    int a = (int)(axis < 0 ? axis + data->ndim : axis);
    oi__sy_gather_dims g = {oi__shape_numel(a, data->shape), data->shape[a],
                            oi__shape_numel(data->ndim - a - 1, data->shape + a + 1),
                            oi__shape_numel(idx->ndim, idx->shape), a};
    return g;
}

const char *oi__sy_qformat_name(const oi__pnode *pn) {
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, "format") == 0 && pn->attrs[i].s)
            return pn->attrs[i].s;
    return "q4_0";
}

oi__sy_rope_geom oi__sy_rope_geom_of(const oi__slot *x, const oi__pnode *pn) {
    oi__sy_rope_geom g;
    size_t na = arrlenu(pn->attrs);
    oi_op op = pn->ir->op;
    int64_t seq_axis = oi__op_param_value_i64(op, pn->attrs, na, "seq_axis");
    g.n = x->shape[x->ndim - 1];
    g.rot = oi__op_param_value_i64(op, pn->attrs, na, "rotary_dim");
    g.rot = g.rot ? g.rot : g.n;
    g.half = g.rot / 2;
    g.inter = oi__op_param_value_i64(op, pn->attrs, na, "interleaved") != 0;
    if (seq_axis < 0)
        seq_axis += x->ndim;
    g.seq_len = x->shape[seq_axis], g.seq_div = 1, g.batch_div = 1;
    for (int d = (int)seq_axis + 1; d < x->ndim - 1; d++)
        g.seq_div *= x->shape[d];
    for (int d = 1; d < x->ndim - 1; d++)
        g.batch_div *= x->shape[d];
    g.lanes = oi__shape_numel(x->ndim, x->shape) / (g.n ? g.n : 1);
    return g;
}

oi__sy_mm_geom oi__sy_mm_geom_of(const oi__slot *a, const oi__slot *b, const oi__slot *out, const oi__pnode *pn) {
    oi__sy_mm_geom g;
    size_t na = arrlenu(pn->attrs);
    bool gemm = pn->ir->op == OI_OP_gemm;
    bool ta = gemm && oi__op_param_value_i64(OI_OP_gemm, pn->attrs, na, "trans_a");
    bool tb = gemm && oi__op_param_value_i64(OI_OP_gemm, pn->attrs, na, "trans_b");
    int64_t a_cols = a->shape[a->ndim - 1], b_cols = b->shape[b->ndim - 1];
    g.m = out->shape[out->ndim - 2], g.n = out->shape[out->ndim - 1];
    g.k = ta ? a->shape[a->ndim - 2] : a_cols;
    g.batches = oi__shape_numel(out->ndim - 2, out->shape);
    g.a_rs = ta ? 1 : a_cols, g.a_cs = ta ? a_cols : 1;
    g.b_rs = tb ? 1 : b_cols, g.b_cs = tb ? b_cols : 1;
    return g;
}

const char *oi__sy_kernel_kind_name(oi__sy_kernel_kind kind) {
    switch (kind) {
    case OI__SY_K_ELEMENTWISE: return "elementwise";
    case OI__SY_K_MATMUL: return "matmul";
    case OI__SY_K_REDUCE: return "reduce";
    case OI__SY_K_SOFTMAX: return "softmax";
    case OI__SY_K_COPY: return "copy";
    case OI__SY_K_TRANSPOSE: return "transpose";
    case OI__SY_K_NORM: return "layer_norm";
    case OI__SY_K_ATTENTION: return "attention";
    case OI__SY_K_ALL_FINITE: return "all_finite";
    case OI__SY_K_GATHER: return "gather";
    case OI__SY_K_LAYOUT: return "layout";
    case OI__SY_K_CONV: return "conv";
    case OI__SY_K_POOL: return "pool";
    case OI__SY_K_ROPE: return "rope";
    case OI__SY_K_ARGMAX: return "argmax";
    case OI__SY_K_QMATMUL: return "matmul_q4";
    case OI__SY_K_ATTN_KV: return "attention_kv";
    case OI__SY_K_MATMUL_ANY: return "matmul_any";
    case OI__SY_K_CONV_T: return "conv_transpose";
    case OI__SY_K_TOPK: return "top_k";
    case OI__SY_K_DEQUANT: return "dequantize";
    }
    return "?";
}

static const oi__slot *oi__sy_slot(const oi__sy_schedule *s, int slot) { return &s->plan->slots[slot]; }

static bool oi__sy_same_shape(const oi__slot *a, const oi__slot *b) {
    if (a->ndim != b->ndim)
        return false;
    for (int d = 0; d < a->ndim; d++)
        if (a->shape[d] != b->shape[d])
            return false;
    return true;
}

static int64_t oi__sy_numel(const oi__slot *sl) { return oi__shape_numel(sl->ndim, sl->shape); }

/* A statement the target cannot run yet: its file:line, the target and why. */
static oi_status oi__sy_unsupported(const oi__sy_schedule *s, const oi__pnode *pn, const char *why) {
    return oi__fail_at(OI_ERROR_UNSUPPORTED, &pn->ir->src, "the %s target cannot synthesize this yet: %s",
                       oi__sy_target_name(&s->options), why);
}

static const char *oi__sy_param_s(const oi__pnode *pn, const char *name) {
    for (int i = 0; i < (int)arrlen(pn->attrs); i++)
        if (strcmp(pn->attrs[i].name, name) == 0 && pn->attrs[i].s)
            return pn->attrs[i].s;
    return NULL;
}

static bool oi__sy_any_dynamic(const oi__sy_schedule *s, const oi__pnode *pn) {
    for (int i = 0; i < (int)arrlen(pn->inputs); i++)
        if (oi__sy_slot(s, pn->inputs[i])->dynamic_shape)
            return true;
    return oi__sy_slot(s, pn->out)->dynamic_shape;
}

/* matmul_any: a matmul of [..., M, K] x [..., K, N] with broadcast batch
 * dims, or of f64 or integers, and a gemm with trans_a, trans_b, alpha,
 * beta or a C broadcast to the result, in f32 or f64. One dtype for the
 * operands and the result, shapes known at synthesis time, no operand
 * written (every result element reads a row and a column of them). */
static oi_status oi__sy_classify_matmul_any(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    const oi__slot *out = oi__sy_slot(s, pn->out);
    const char *act = oi__sy_param_s(pn, "activation");
    if (oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "a matmul or gemm over a shape known at run time only");
    for (int i = 0; i < (int)arrlen(pn->inputs); i++) {
        const oi__slot *in = oi__sy_slot(s, pn->inputs[i]);
        if (pn->inputs[i] == pn->out || in->dtype != out->dtype || (i < 2 && in->ndim < 2))
            return oi__sy_unsupported(s, pn, "a matmul or gemm of mixed dtypes, of a 1-D operand or writing an operand");
    }
    if (!oi__sy_number(out->dtype) || (pn->ir->op == OI_OP_gemm && !oi__sy_float(out->dtype)))
        return oi__sy_unsupported(s, pn, "a matmul of a dtype other than a number, or a gemm of integers");
    if (act && strcmp(act, "none") != 0)
        return oi__sy_unsupported(s, pn, "a gemm with an activation and trans_a, trans_b, alpha, beta or a broadcast C");
    if (out->ndim >= 1 && out->shape[out->ndim - 1] > 16384) /* the kernel keeps one row of the result on the stack */
        return oi__sy_unsupported(s, pn, "a matmul with more than 16384 output columns");
    *kind = OI__SY_K_MATMUL_ANY;
    return OI_OK;
}

/* gemm(A [M, K], B [K, N], bias [N]): the matmul kernel with the bias row
 * and the activation before its epilogue; with trans_a, trans_b, alpha,
 * beta or another C, matmul_any. */
static oi_status oi__sy_classify_gemm(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    const oi__slot *a = oi__sy_slot(s, pn->inputs[0]), *b = oi__sy_slot(s, pn->inputs[1]), *out = oi__sy_slot(s, pn->out);
    oi_op op = pn->ir->op;
    size_t na = arrlenu(pn->attrs);
    const char *act = oi__sy_param_s(pn, "activation");
    if (a->ndim != 2 || b->ndim != 2 || out->ndim != 2 || oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "a gemm that is not 2-D with shapes known at synthesis time");
    bool row_bias = arrlen(pn->inputs) < 3 || oi__sy_numel(oi__sy_slot(s, pn->inputs[2])) == out->shape[1];
    if (oi__op_param_value_i64(op, pn->attrs, na, "trans_a") || oi__op_param_value_i64(op, pn->attrs, na, "trans_b") ||
        oi__op_param_value_f64(op, pn->attrs, na, "alpha") != 1.0 ||
        oi__op_param_value_f64(op, pn->attrs, na, "beta") != 1.0 || a->dtype != OI_DTYPE_F32 || !row_bias)
        return oi__sy_classify_matmul_any(s, pn, kind);
    if (out->shape[1] > (act && strcmp(act, "gelu") == 0 ? 2048 : 16384))
        return oi__sy_unsupported(s, pn, "a gemm with more than 16384 output columns (2048 with gelu)");
    *kind = OI__SY_K_MATMUL;
    return OI_OK;
}

/* reshape, transpose, layer_norm (over the dims from its axis on),
 * batch_norm and group_norm (x [N, C, ...], one value per channel),
 * attention (as many k/v heads as q heads; an f32 or bool mask broadcast to
 * the scores, causal): f32 with shapes known at synthesis time. */
static oi_status oi__sy_classify_nn(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    oi_op op = pn->ir->op;
    const oi__slot *in0 = oi__sy_slot(s, pn->inputs[0]), *out = oi__sy_slot(s, pn->out);
    if (oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "a shape op, norm or attention over a shape known at run time only");
    if (op == OI_OP_reshape) {
        *kind = OI__SY_K_COPY;
        return OI_OK;
    }
    if (op == OI_OP_transpose) {
        if (pn->out == pn->inputs[0]) /* each element would read one its kernel has already overwritten */
            return oi__sy_unsupported(s, pn, "a transpose writing its input");
        *kind = OI__SY_K_TRANSPOSE;
        return OI_OK;
    }
    if (in0->dtype != OI_DTYPE_F32 || out->dtype != OI_DTYPE_F32)
        return oi__sy_unsupported(s, pn, op == OI_OP_attention ? "attention on a dtype other than f32"
                                                               : "a norm on a dtype other than f32");
    if (op == OI_OP_batch_norm || op == OI_OP_group_norm) { /* x [N, C, ...], the others one per channel */
        for (int i = 1; i < (int)arrlen(pn->inputs); i++)
            if (in0->ndim < 2 || oi__sy_numel(oi__sy_slot(s, pn->inputs[i])) != in0->shape[1] ||
                oi__sy_slot(s, pn->inputs[i])->dtype != OI_DTYPE_F32)
                return oi__sy_unsupported(s, pn, "a batch_norm or group_norm whose x is not [N, C, ...] or whose other "
                                                 "inputs are not one f32 per channel");
        *kind = OI__SY_K_NORM;
        return OI_OK;
    }
    if (op == OI_OP_layer_norm) { /* over the dims from axis on: scale and bias as many elements */
        int64_t lane = oi__sy_norm_lane(in0, pn);
        for (int i = 1; i < (int)arrlen(pn->inputs); i++)
            if (oi__sy_numel(oi__sy_slot(s, pn->inputs[i])) != lane || oi__sy_slot(s, pn->inputs[i])->dtype != OI_DTYPE_F32)
                return oi__sy_unsupported(s, pn, "a layer_norm scale or bias that is not one f32 lane (x's dims from axis on)");
        *kind = OI__SY_K_NORM;
        return OI_OK;
    }
    const oi__slot *k = oi__sy_slot(s, pn->inputs[1]), *v = oi__sy_slot(s, pn->inputs[2]);
    if (arrlen(pn->inputs) > 3 && oi__sy_slot(s, pn->inputs[3])->dtype != OI_DTYPE_F32 &&
        oi__sy_slot(s, pn->inputs[3])->dtype != OI_DTYPE_BOOL)
        return oi__sy_unsupported(s, pn, "an attention mask that is not f32 (added) or bool (true keeps)");
    if (k->shape[1] != in0->shape[1] || k->dtype != OI_DTYPE_F32 || v->dtype != OI_DTYPE_F32)
        return oi__sy_unsupported(s, pn, "attention with grouped-query heads or mixed dtypes");
    if (k->shape[2] > 2048 || k->shape[2] * k->shape[3] > 65536 || v->shape[3] > 2048)
        return oi__sy_unsupported(s, pn, "attention over more than 2048 keys or 65536 key elements per head");
    *kind = OI__SY_K_ATTENTION;
    return OI_OK;
}

/* gather(data, indices) along any axis: slabs of data copied by index, of
 * any dtype the C target stores, with shapes known at synthesis time. An
 * index out of range fails the step before anything is written, as the
 * CPU kernel does (kernels/shape.c). */
static oi_status oi__sy_classify_gather(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    if (oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "a gather over a shape known at run time only");
    if (pn->out == pn->inputs[0] || pn->out == pn->inputs[1])
        return oi__sy_unsupported(s, pn, "a gather writing one of its inputs");
    *kind = OI__SY_K_GATHER;
    return OI_OK;
}

/* A slice or split of floats on the C target: a statement of an
 * elementwise kernel that loads its input through the op's index map (an
 * offset and strides, kernels/shape.c's oi__op_layout_map), so that the
 * statements reading it fuse with it and the copy is never stored (Silero
 * VAD's real and imaginary halves, its four LSTM gates). */
static bool oi__sy_view_load(const oi__sy_schedule *s, const oi__pnode *pn) {
    oi_op op = pn->ir->op;
    const oi__slot *in = oi__sy_slot(s, pn->inputs[0]);
    int64_t offset, strides[OI_MAX_DIMS];
    return (op == OI_OP_slice || op == OI_OP_split) && !s->options.parallel_rows && oi__sy_float(in->dtype) &&
           oi__sy_numel(oi__sy_slot(s, pn->out)) > 0 && /* an empty one copies nothing (render_layout) */
           oi__op_layout_map(op, pn->attrs, arrlenu(pn->attrs), in->ndim, in->shape, &offset, strides) == OI_OK;
}

/* slice, split, squeeze, unsqueeze, pad, concat, tile, expand: copies,
 * shapes known at synthesis time, any dtype the C target stores. squeeze and unsqueeze
 * keep every element's order: a copy (COPY) as reshape. */
static oi_status oi__sy_classify_layout(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    oi_op op = pn->ir->op;
    if (oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "a slice, split, pad or concat over a shape known at run time only");
    for (int i = 0; i < (int)arrlen(pn->inputs); i++)
        if (pn->inputs[i] == pn->out)
            return oi__sy_unsupported(s, pn, "a slice, split, pad or concat writing one of its inputs");
    *kind = op == OI_OP_squeeze || op == OI_OP_unsqueeze ? OI__SY_K_COPY : OI__SY_K_LAYOUT;
    if (oi__sy_view_load(s, pn)) /* the C target reads it through its index map (render.c) */
        *kind = OI__SY_K_ELEMENTWISE;
    return OI_OK;
}

/* A conv statement's window from its slots' shapes, as kernels/conv.c
 * computes it (OI_OK, or its refusal). */
static oi_status oi__sy_conv_window(const oi__sy_schedule *s, const oi__pnode *pn, oi__conv_window *w) {
    oi__op_sig in[3];
    int n_in = (int)arrlen(pn->inputs) < 3 ? (int)arrlen(pn->inputs) : 3;
    for (int i = 0; i < n_in; i++) {
        const oi__slot *sl = oi__sy_slot(s, pn->inputs[i]);
        in[i].dtype = sl->dtype;
        in[i].ndim = sl->ndim;
        memcpy(in[i].shape, sl->shape, sizeof in[i].shape);
    }
    return oi__op_conv_window(pn->ir->op, pn->attrs, arrlenu(pn->attrs), in, (size_t)n_in, w);
}

/* conv1d/conv2d in f32 or f64 with shapes known at synthesis time; an
 * activation in f32, relu alone in f64 (conv.c's f64 loop, printed as is). */
static oi_status oi__sy_classify_conv(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    const char *act = oi__sy_param_s(pn, "activation");
    oi_dtype t = oi__sy_slot(s, pn->out)->dtype;
    for (int i = 0; i < (int)arrlen(pn->inputs); i++)
        if (oi__sy_slot(s, pn->inputs[i])->dtype != t || !oi__sy_float(t) || pn->inputs[i] == pn->out)
            return oi__sy_unsupported(s, pn, "a convolution on a dtype other than f32 or f64, or writing one of its inputs");
    if (oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "a convolution over a shape known at run time only");
    if (t == OI_DTYPE_F64 && act && strcmp(act, "none") != 0 && strcmp(act, "relu") != 0)
        return oi__sy_unsupported(s, pn, "an f64 convolution with an activation other than none or relu");
    oi__conv_window w;
    if (oi__sy_conv_window(s, pn, &w) != OI_OK)
        return oi__sy_unsupported(s, pn, "a convolution whose window kernels/conv.c refuses");
    *kind = OI__SY_K_CONV;
    return OI_OK;
}

/* top_k and top_k_indices of floats and integers along an axis of at
 * most 8192 elements (its keys are on the stack), k at least 1, shapes
 * known at synthesis time, writing no input. */
static oi_status oi__sy_classify_topk(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    const oi__slot *x = oi__sy_slot(s, pn->inputs[0]);
    int64_t inner, n = oi__sy_softmax_lane(x, pn, &inner);
    if (oi__sy_any_dynamic(s, pn) || pn->inputs[0] == pn->out)
        return oi__sy_unsupported(s, pn, "a top_k over a shape known at run time only, or writing its input");
    if (!oi__sy_number(x->dtype))
        return oi__sy_unsupported(s, pn, "a top_k of a dtype other than a float or an integer");
    if (n > 8192 || oi__op_param_value_i64(pn->ir->op, pn->attrs, arrlenu(pn->attrs), "k") < 1)
        return oi__sy_unsupported(s, pn, "a top_k along more than 8192 elements, or of no elements");
    *kind = OI__SY_K_TOPK;
    return OI_OK;
}

/* conv_transpose2d in f32, shapes known at synthesis time, an output
 * channel's plane of at most 8192 positions (its double sums are on the
 * stack), writing no input. */
static oi_status oi__sy_classify_conv_t(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    for (int i = 0; i < (int)arrlen(pn->inputs); i++)
        if (oi__sy_slot(s, pn->inputs[i])->dtype != OI_DTYPE_F32 || pn->inputs[i] == pn->out)
            return oi__sy_unsupported(s, pn, "a conv_transpose2d on a dtype other than f32, or writing one of its inputs");
    if (oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "a conv_transpose2d over a shape known at run time only");
    oi__conv_window w;
    if (oi__sy_conv_window(s, pn, &w) != OI_OK)
        return oi__sy_unsupported(s, pn, "a conv_transpose2d whose window kernels/conv.c refuses");
    if (w.out[0] * w.out[1] > 8192)
        return oi__sy_unsupported(s, pn, "a conv_transpose2d with more than 8192 output positions per channel");
    *kind = OI__SY_K_CONV_T;
    return OI_OK;
}

/* max_pool2d, avg_pool2d and global_avg_pool in f32 (max_pool2d of i8
 * and u8 too), shapes known at synthesis time. */
static oi_status oi__sy_classify_pool(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    if (oi__sy_any_dynamic(s, pn) || pn->inputs[0] == pn->out)
        return oi__sy_unsupported(s, pn, "a pool over a shape known at run time only, or writing its input");
    *kind = OI__SY_K_POOL;
    return OI_OK;
}

/* A decoder's row ops, f32 over shapes known at synthesis time:
 * rms_norm (last axis, a scale of one lane: the norm kernel with mean 0),
 * rope (any seq_axis, rotary_dim, interleaved or half-split pairs,
 * positions i32/i64 [seq] or [batch, seq]) and argmax_axis/argmin_axis
 * (any axis, ties as select_first says, as reduce.c's loops break them). */
static bool oi__sy_llm_op(oi_op op) {
    return op == OI_OP_rms_norm || op == OI_OP_rope || op == OI_OP_argmax_axis || op == OI_OP_argmin_axis;
}

static oi_status oi__sy_classify_llm(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    oi_op op = pn->ir->op;
    const oi__slot *in0 = oi__sy_slot(s, pn->inputs[0]);
    size_t na = arrlenu(pn->attrs);
    if (oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "rms_norm, rope, argmax_axis or argmin_axis over a shape known at run time only");
    if (op == OI_OP_argmax_axis || op == OI_OP_argmin_axis) {
        if (!oi__sy_float(in0->dtype) && !oi__sy_int(in0->dtype))
            return oi__sy_unsupported(s, pn, "argmax_axis or argmin_axis on a dtype other than a float or an integer");
        *kind = OI__SY_K_ARGMAX;
        return OI_OK;
    }
    if (in0->dtype != OI_DTYPE_F32)
        return oi__sy_unsupported(s, pn, op == OI_OP_rope ? "rope on a dtype other than f32" : "rms_norm on a dtype other than f32");
    if (op == OI_OP_rope) {
        *kind = OI__SY_K_ROPE;
        return OI_OK;
    }
    int64_t axis = oi__op_param_value_i64(op, pn->attrs, na, "axis");
    const oi__slot *scale = oi__sy_slot(s, pn->inputs[1]);
    if (axis != -1 && axis != in0->ndim - 1)
        return oi__sy_unsupported(s, pn, "rms_norm over more than the last axis");
    if (oi__sy_numel(scale) != in0->shape[in0->ndim - 1] || scale->dtype != OI_DTYPE_F32)
        return oi__sy_unsupported(s, pn, "an rms_norm scale that is not one f32 lane");
    *kind = OI__SY_K_NORM;
    return OI_OK;
}

/* matmul_q4(x [..., K], w u8 [N, K / 32 * block bytes]) with
 * activations="q8" and a q4_0, q4_1 or q8_0 format: quant.c's own code
 * (oi_quant.h), bit-identical to the simulator on every ISA. x's int8
 * copy is on the kernel's stack: at most 64 Ki elements of x. */
static oi_status oi__sy_classify_qmatmul(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    const oi__slot *x = oi__sy_slot(s, pn->inputs[0]), *w = oi__sy_slot(s, pn->inputs[1]);
    const char *format = oi__sy_param_s(pn, "format"), *act = oi__sy_param_s(pn, "activations");
    if (oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "a matmul_q4 over a shape known at run time only");
    int64_t rows = x->ndim ? oi__sy_numel(x) / (x->shape[x->ndim - 1] ? x->shape[x->ndim - 1] : 1) : 1;
    if ((!act || strcmp(act, "q8") != 0) && rows >= 4)
        return oi__sy_unsupported(s, pn, "matmul_q4 with f32 activations over 4 or more rows of x (the simulator's "
                                         "dequantized gemm; activations=\"q8\" or fewer rows are supported)");
    if (format && strcmp(format, "q4_0") != 0 && strcmp(format, "q4_1") != 0 && strcmp(format, "q8_0") != 0)
        return oi__sy_unsupported(s, pn, "a matmul_q4 format other than q4_0, q4_1 or q8_0");
    if (x->dtype != OI_DTYPE_F32 || w->dtype != OI_DTYPE_U8 || w->ndim != 2)
        return oi__sy_unsupported(s, pn, "a matmul_q4 whose x is not f32 or whose weights are not u8 [N, row bytes]");
    if (pn->out == pn->inputs[0])
        return oi__sy_unsupported(s, pn, "a matmul_q4 writing its x");
    if (oi__sy_numel(x) > 65536)
        return oi__sy_unsupported(s, pn, "a matmul_q4 with more than 65536 elements of x (its int8 copy is on the stack)");
    *kind = OI__SY_K_QMATMUL;
    return OI_OK;
}

/* dequantize(w u8 [..., row bytes]) -> f32 [..., K]: each row of blocks
 * through quant.c's own oi__dequant_row (oi_quant.h), the simulator's
 * values bit for bit. (Its input is u8 and its output f32: never the same
 * variable.) */
static oi_status oi__sy_classify_dequant(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    if (oi__sy_any_dynamic(s, pn))
        return oi__sy_unsupported(s, pn, "a dequantize over a shape known at run time only");
    *kind = OI__SY_K_DEQUANT;
    return OI_OK;
}

/* Attention as a decoder runs it: keys and values read from a table slice
 * (a leading dim known at run time only, transposed into [B, Hkv, T, D]),
 * query heads sharing kv heads (h / (Hq / Hkv), as nn.c's). Such an
 * attention, and the transposes of its run-time-length operands (which
 * must fold into it: oi__sy_check_dynamic_views), take these. */
static bool oi__sy_attn_kv_op(const oi__sy_schedule *s, const oi__pnode *pn) {
    oi_op op = pn->ir->op;
    if (op == OI_OP_transpose)
        return oi__sy_any_dynamic(s, pn);
    return op == OI_OP_attention &&
           (oi__sy_any_dynamic(s, pn) || oi__sy_slot(s, pn->inputs[1])->shape[1] != oi__sy_slot(s, pn->inputs[0])->shape[1]);
}

static oi_status oi__sy_classify_attn_kv(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    if (pn->ir->op == OI_OP_transpose) {
        const oi__slot *in = oi__sy_slot(s, pn->inputs[0]);
        if (in->ndim != 4 || in->dtype != OI_DTYPE_F32 || (in->runtime_dims & ~1u))
            return oi__sy_unsupported(s, pn, "a transpose over a shape known at run time only that is not a 4-D f32 slice "
                                             "(keys or values read into attention)");
        *kind = OI__SY_K_TRANSPOSE;
        return OI_OK;
    }
    const oi__slot *q = oi__sy_slot(s, pn->inputs[0]), *k = oi__sy_slot(s, pn->inputs[1]), *v = oi__sy_slot(s, pn->inputs[2]);
    const oi__slot *out = oi__sy_slot(s, pn->out);
    size_t na = arrlenu(pn->attrs);
    if (q->dtype != OI_DTYPE_F32 || k->dtype != OI_DTYPE_F32 || v->dtype != OI_DTYPE_F32 || out->dtype != OI_DTYPE_F32)
        return oi__sy_unsupported(s, pn, "attention on a dtype other than f32");
    if (q->dynamic_shape || out->dynamic_shape || (k->runtime_dims & ~4u) || (v->runtime_dims & ~4u))
        return oi__sy_unsupported(s, pn, "attention whose queries, result or inner dims are known at run time only");
    if (arrlen(pn->inputs) > 3 || oi__op_param_value_i64(OI_OP_attention, pn->attrs, na, "causal"))
        return oi__sy_unsupported(s, pn, "a mask or causal on attention over keys known at run time or grouped-query heads");
    if (k->shape[1] < 1 || q->shape[1] % k->shape[1] != 0 || v->shape[1] != k->shape[1])
        return oi__sy_unsupported(s, pn, "grouped-query attention whose query heads are not a multiple of its kv heads");
    if (k->shape[3] > 4096 || v->shape[3] > 4096)
        return oi__sy_unsupported(s, pn, "attention with more than 4096 dims per head");
    *kind = OI__SY_K_ATTN_KV;
    return OI_OK;
}

/* Whether an attention over a KV cache may take nn.c's decode loops
 * (oi_gemm.h, on AVX2 and AVX-512): head sizes in whole 8-lane vectors. */
static bool oi__sy_attn_kv_vectors(const oi__sy_schedule *s, const oi__pnode *pn) {
    return pn->ir->op == OI_OP_attention && oi__sy_slot(s, pn->inputs[0])->shape[3] % 8 == 0 &&
           oi__sy_slot(s, pn->inputs[2])->shape[3] % 8 == 0;
}

/* Checks one op node and says which kernel kind runs it. */
static oi_status oi__sy_classify(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel_kind *kind) {
    oi_op op = pn->ir->op;
    const oi__slot *out = oi__sy_slot(s, pn->out);
    const oi__slot *in0 = oi__sy_slot(s, pn->inputs[0]);
    for (int i = 0; i < (int)arrlen(pn->inputs); i++) {
        const oi__slot *in = oi__sy_slot(s, pn->inputs[i]);
        if (pn->input_indices && pn->input_indices[i] && !in->is_prefix)
            return oi__sy_unsupported(s, pn, "an indexed input that is not a prefix table");
        if (in->is_prefix && in->runtime_dims)
            return oi__sy_unsupported(s, pn, "a prefix table whose entries differ in shape (E(n))");
    }
    if (pn->entry_attrs)
        return oi__sy_unsupported(s, pn, "a setting per prefix-table entry (group=E(n))");
    if (oi__op_param_given(op, pn->attrs, arrlenu(pn->attrs), "acc"))
        return oi__sy_unsupported(s, pn, "accumulate mode (acc=)");
    oi_dtype in1 = arrlen(pn->inputs) > 1 ? oi__sy_slot(s, pn->inputs[1])->dtype : in0->dtype;
    if (oi__sy_ew_shaped(op) && oi__sy_ew_supported(op, in0->dtype, in1, out->dtype)) {
        if (op == OI_OP_cast && oi__sy_float(in0->dtype) && oi__sy_int(out->dtype) &&
            !oi__op_param_value_i64(op, pn->attrs, arrlenu(pn->attrs), "saturate"))
            return oi__sy_unsupported(s, pn, "a cast of a float to an integer with saturate=false (wrapping)");
        *kind = OI__SY_K_ELEMENTWISE;
        return OI_OK;
    }
    if ((op == OI_OP_matmul || op == OI_OP_gemm) && pn->out == pn->inputs[1])
        return oi__sy_unsupported(s, pn, "a matmul writing its B (every row of the result reads all of it)");
    if (op == OI_OP_matmul && in0->dtype == OI_DTYPE_F32 && in0->ndim == 2 && oi__sy_slot(s, pn->inputs[1])->ndim == 2 &&
        out->ndim == 2) {
        if (out->shape[1] > 16384) /* the kernel keeps one row of the result on the stack */
            return oi__sy_unsupported(s, pn, "a matmul with more than 16384 output columns");
        *kind = OI__SY_K_MATMUL;
        return OI_OK;
    }
    if (op == OI_OP_matmul)
        return oi__sy_classify_matmul_any(s, pn, kind);
    if (op == OI_OP_gemm)
        return oi__sy_classify_gemm(s, pn, kind);
    if (oi__sy_attn_kv_op(s, pn))
        return oi__sy_classify_attn_kv(s, pn, kind);
    if (op == OI_OP_reshape || op == OI_OP_transpose || op == OI_OP_layer_norm || op == OI_OP_attention ||
        op == OI_OP_batch_norm || op == OI_OP_group_norm)
        return oi__sy_classify_nn(s, pn, kind);
    if (op == OI_OP_slice || op == OI_OP_split || op == OI_OP_squeeze || op == OI_OP_unsqueeze || op == OI_OP_pad ||
        op == OI_OP_concat || op == OI_OP_tile || op == OI_OP_expand)
        return oi__sy_classify_layout(s, pn, kind);
    if ((op == OI_OP_conv1d || op == OI_OP_conv2d) && oi__sy_float(in0->dtype))
        return oi__sy_classify_conv(s, pn, kind);
    if (op == OI_OP_conv_transpose2d)
        return oi__sy_classify_conv_t(s, pn, kind);
    if (op == OI_OP_top_k || op == OI_OP_top_k_indices)
        return oi__sy_classify_topk(s, pn, kind);
    bool byte_max = op == OI_OP_max_pool2d && (in0->dtype == OI_DTYPE_I8 || in0->dtype == OI_DTYPE_U8);
    if ((op == OI_OP_max_pool2d || op == OI_OP_avg_pool2d || op == OI_OP_global_avg_pool) &&
        (in0->dtype == OI_DTYPE_F32 || byte_max))
        return oi__sy_classify_pool(s, pn, kind);
    bool extremum = op == OI_OP_max_axis || op == OI_OP_min_axis;
    if (oi__sy_axes_reduction(op) && (in0->dtype == OI_DTYPE_F32 || (in0->dtype == OI_DTYPE_F64 && !extremum))) {
        if (extremum && oi__shape_numel(out->ndim, out->shape) > 0 &&
            oi__shape_numel(in0->ndim, in0->shape) == 0)
            return oi__sy_unsupported(s, pn, "max_axis or min_axis over no elements");
        *kind = OI__SY_K_REDUCE;
        return OI_OK;
    }
    if ((op == OI_OP_softmax || op == OI_OP_log_softmax) && in0->dtype == OI_DTYPE_F32) {
        int64_t inner;
        oi__sy_softmax_lane(in0, pn, &inner);
        if (inner != 1 && oi__sy_any_dynamic(s, pn))
            return oi__sy_unsupported(s, pn, "softmax or log_softmax along an axis other than the last over a shape known "
                                             "at run time only");
        *kind = OI__SY_K_SOFTMAX;
        return OI_OK;
    }
    if (op == OI_OP_is_finite && oi__sy_float(in0->dtype)) {
        *kind = OI__SY_K_ALL_FINITE;
        return OI_OK;
    }
    if (op == OI_OP_gather)
        return oi__sy_classify_gather(s, pn, kind);
    if (oi__sy_llm_op(op))
        return oi__sy_classify_llm(s, pn, kind);
    if (op == OI_OP_matmul_q4)
        return oi__sy_classify_qmatmul(s, pn, kind);
    if (op == OI_OP_dequantize)
        return oi__sy_classify_dequant(s, pn, kind);
    char why[160];
    snprintf(why, sizeof why, "op %s on %s", oi__sy_op_name(op), oi_dtype_name(in0->dtype));
    return oi__sy_unsupported(s, pn, why);
}

/* ------------------------------------------------------------------ */
/* Fusion                                                              */
/* ------------------------------------------------------------------ */
/* The slot a node of kernel k writes is also the shape of its loop. */
static const oi__slot *oi__sy_kernel_shape(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    return oi__sy_slot(s, oi__sy_kernel_lead(k)->out);
}

static bool oi__sy_written_in(const oi__sy_kernel *k, int slot) {
    for (int i = 0; i < (int)arrlen(k->nodes); i++)
        if (k->nodes[i]->out == slot)
            return true;
    return false;
}

/* The OI_WITH hints fusion reads: fuse=false keeps a statement in a kernel
 * of its own; group="name" fuses only statements of one group (statements
 * without a group form one more). no_reorder needs nothing here: the
 * schedule keeps the program's order. */
static bool oi__sy_hint_fuses(const oi__pnode *pn) {
    const oi__attr *fuse = oi__node_hint(pn->ir, "fuse");
    return !fuse || fuse->i != 0;
}

static bool oi__sy_same_group(const oi__pnode *a, const oi__pnode *b) {
    const oi__attr *ga = oi__node_hint(a->ir, "group"), *gb = oi__node_hint(b->ir, "group");
    return (!ga && !gb) || (ga && gb && strcmp(ga->s, gb->s) == 0);
}

/* May elementwise node pn join kernel k (a chain, or a matmul's epilogue)?
 * Its output has the kernel's shape; what it reads from the kernel is read
 * at the same element; nothing the kernel reads at another element (a
 * broadcast operand, a matmul's B, A's other rows) is written by it. */
static bool oi__sy_may_fuse(const oi__sy_schedule *s, const oi__sy_kernel *k, const oi__pnode *pn) {
    if ((int)arrlen(k->nodes) >= s->options.max_kernel_ops)
        return false;
    /* the kernel's first statement speaks for all: a fuse=false one is alone */
    if (!oi__sy_hint_fuses(pn) || !oi__sy_hint_fuses(k->nodes[0]) || !oi__sy_same_group(pn, k->nodes[0]))
        return false;
    /* a shape known at run time only: one statement per kernel */
    if (oi__sy_any_dynamic(s, pn) || oi__sy_any_dynamic(s, k->nodes[0]))
        return false;
    if (k->kind != OI__SY_K_ELEMENTWISE && k->kind != OI__SY_K_MATMUL &&
        (k->kind != OI__SY_K_CONV || k->conv.path == OI__SY_CONV_WIDE)) /* an f64 conv stores its result alone */
        return false;
    const oi__slot *shape = oi__sy_kernel_shape(s, k), *out = oi__sy_slot(s, pn->out);
    if (!oi__sy_same_shape(shape, out) || (!oi__sy_float(out->dtype) && !oi__sy_is_half(out->dtype)))
        return false;
    /* a view load reads its input at other elements: not one the kernel writes */
    if (oi__sy_view_load(s, pn) && oi__sy_written_in(k, pn->inputs[0]))
        return false;
    if (k->kind == OI__SY_K_MATMUL && oi__sy_numel(out) / out->shape[out->ndim - 1] != shape->shape[0])
        return false;
    for (int i = 0; i < (int)arrlen(pn->inputs); i++) {
        const oi__slot *in = oi__sy_slot(s, pn->inputs[i]);
        if (oi__sy_written_in(k, pn->inputs[i]) && !oi__sy_same_shape(in, shape))
            return false;
        if (in->dtype != oi__sy_slot(s, pn->inputs[0])->dtype)
            return false;
    }
    /* on a GPU other rows of the matmul may still read what pn writes */
    if (s->options.parallel_rows && k->kind == OI__SY_K_MATMUL)
        for (int i = 0; i < (int)arrlen(k->nodes[0]->inputs); i++)
            if (k->nodes[0]->inputs[i] == pn->out)
                return false;
    /* pn's output must not be read elsewhere than at its own element */
    for (int n = 0; n < (int)arrlen(k->nodes); n++) {
        const oi__pnode *m = k->nodes[n];
        for (int i = 0; i < (int)arrlen(m->inputs); i++) {
            if (m->inputs[i] != pn->out)
                continue;
            if ((k->kind == OI__SY_K_CONV && n == 0) || oi__sy_view_load(s, m))
                return false; /* the conv, a view load read their inputs at other elements */
            bool matmul_operand = k->kind == OI__SY_K_MATMUL && n == 0;
            if (matmul_operand && (i >= 1 || !oi__sy_same_shape(oi__sy_slot(s, m->inputs[i]), shape)))
                return false;
            if (!matmul_operand && !oi__sy_same_shape(oi__sy_slot(s, m->inputs[i]), shape))
                return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Steps                                                               */
/* ------------------------------------------------------------------ */
typedef struct oi__sy_builder {
    oi__sy_schedule *s;
    int depth;        /* branch inlining depth                        */
    bool in_consumer; /* building a consumer block: its yield/await are markers */
    int *copy_back;   /* the last yield's pairs (private buffer, slot) for the await */
    const oi__pnode **loops; /* the enclosing loops (stb array): bounds of their indices */
} oi__sy_builder;

static oi_status oi__sy_build_block(oi__sy_builder *b, const oi__pnode *nodes, int count, oi__sy_step **steps);

static void oi__sy_contiguous(const oi__slot *sl, int64_t stride[4]) {
    int64_t st = 1;
    for (int d = 3; d >= 0; d--) {
        stride[d] = st;
        st *= sl->shape[d];
    }
}

/* An attention kernel reading and writing its operands where they are. */
static void oi__sy_attention_plain(const oi__sy_schedule *s, oi__sy_kernel *k, const oi__pnode *pn) {
    for (int op = 0; op < 4; op++) {
        k->view_slot[op] = op < 3 ? pn->inputs[op] : pn->out;
        oi__sy_contiguous(oi__sy_slot(s, k->view_slot[op]), k->view_stride[op]);
    }
}

/* gemm.c's choice: below OI__GEMM_TINY (4096) multiply-adds the plain
 * loop (the simulator's small path, bit-exact), above it the micro-kernels
 * over packed panels; a block of rows of the result (at most 12 x N floats)
 * is held on the stack, so N is bounded. */
static bool oi__sy_use_packed(const oi__sy_schedule *s, const oi__pnode *pn) {
    const oi__slot *a = oi__sy_slot(s, pn->inputs[0]), *c = oi__sy_slot(s, pn->out);
    if (a->dynamic_shape || c->dynamic_shape)
        return false;
    int64_t m = c->shape[0], n = c->shape[1], k = a->shape[1];
    const char *act = oi__sy_param_s(pn, "activation");
    bool gelu = act && strcmp(act, "gelu") == 0; /* oi_gemm.h holds math.c's gelu */
    return (m * n * k >= 4096 || gelu) && n <= 2048;
}

/* A layout kernel's index map (synth_internal.h), from the kernels' own
 * code (oi__op_layout_map, oi__op_pad_map). */
static oi_status oi__sy_plan_layout(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel *k) {
    const oi__slot *in = oi__sy_slot(s, pn->inputs[0]), *out = oi__sy_slot(s, pn->out);
    oi_op op = pn->ir->op;
    if (op == OI_OP_concat)
        return OI_OK;
    if (op == OI_OP_pad || op == OI_OP_tile) { /* a source index per dim and output position */
        int64_t total = 0, *maps[OI_MAX_DIMS];
        for (int d = 0; d < out->ndim; d++)
            total += out->shape[d];
        if (!arrsetlen(k->index_map, total))
            return OI_ERROR_OUT_OF_MEMORY;
        for (int d = 0, at = 0; d < out->ndim; at += (int)out->shape[d], d++)
            maps[d] = k->index_map + at;
        if (op == OI_OP_tile)
            oi__op_tile_map(in->ndim, in->shape, out->shape, maps);
        else if (oi__op_pad_map(pn->attrs, arrlenu(pn->attrs), in->ndim, in->shape, maps) != OI_OK)
            return oi__sy_unsupported(s, pn, "a pad whose settings kernels/shape.c refuses");
        return OI_OK;
    }
    int64_t offset = 0, strides[OI_MAX_DIMS];
    if (oi__op_layout_map(op, pn->attrs, arrlenu(pn->attrs), in->ndim, in->shape, &offset, strides) != OI_OK)
        return oi__sy_unsupported(s, pn, "a slice, split or expand whose settings kernels/shape.c refuses");
    if (!arrput(k->index_map, offset))
        return OI_ERROR_OUT_OF_MEMORY;
    for (int d = 0; d < out->ndim; d++)
        if (!arrput(k->index_map, strides[d]))
            return OI_ERROR_OUT_OF_MEMORY;
    return OI_OK;
}

/* A conv kernel's window, as kernels/conv.c computes it (classify checked it). */
static void oi__sy_plan_conv(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_kernel *k) {
    oi__conv_window w;
    oi__sy_conv_geom *g = &k->conv;
    if (oi__sy_conv_window(s, pn, &w) != OI_OK)
        return;
    bool two = w.s == 2;
    g->batch = w.batch, g->in_c = w.in_c, g->out_c = w.out_c, g->group = w.group;
    g->cg = w.in_c / w.group, g->mg = w.out_c / w.group;
    g->in_h = two ? w.in[0] : 1, g->out_h = two ? w.out[0] : 1, g->k_h = two ? w.kernel[0] : 1;
    g->s_h = two ? w.stride[0] : 1, g->p_h = two ? w.pad_b[0] : 0, g->d_h = two ? w.dil[0] : 1;
    g->in_w = w.in[w.s - 1], g->out_w = w.out[w.s - 1], g->k_w = w.kernel[w.s - 1];
    g->s_w = w.stride[w.s - 1], g->p_w = w.pad_b[w.s - 1], g->d_w = w.dil[w.s - 1];
    g->pe_h = two ? w.pad_e[0] : 0, g->pe_w = w.pad_e[w.s - 1];
    g->rows = g->cg * g->k_h * g->k_w;
    int64_t out_sp = g->out_h * g->out_w;
    g->path = oi__sy_slot(s, pn->out)->dtype == OI_DTYPE_F64 ? OI__SY_CONV_WIDE
              : g->group == g->in_c && g->group > 1 ? OI__SY_CONV_DEPTHWISE /* conv.c's oi__conv_is_depthwise */
              : g->mg * out_sp * g->rows <= 4096 ? OI__SY_CONV_SMALL
              : out_sp <= 4 && g->mg > out_sp ? OI__SY_CONV_SKINNY : OI__SY_CONV_GEMM;
    /* a block's patches and their packed copy stay on the stack (~256 KB) */
    g->block = out_sp * g->rows <= 32768 ? out_sp : 32768 / g->rows / 32 * 32;
    g->block = g->block >= 32 ? g->block : out_sp < 32 ? out_sp : 32;
}

static oi_status oi__sy_add_op(oi__sy_builder *b, const oi__pnode *pn, oi__sy_step **steps) {
    oi__sy_schedule *s = b->s;
    oi__sy_kernel_kind kind = OI__SY_K_ELEMENTWISE;
    oi_status st = oi__sy_classify(s, pn, &kind);
    if (st != OI_OK)
        return st;
    oi__sy_step *last = arrlen(*steps) ? &(*steps)[arrlen(*steps) - 1] : NULL;
    if (kind == OI__SY_K_ELEMENTWISE && last && last->kind == OI__SY_S_KERNEL &&
        oi__sy_may_fuse(s, &s->kernels[last->kernel], pn)) {
        if (!arrput(s->kernels[last->kernel].nodes, pn))
            return OI_ERROR_OUT_OF_MEMORY;
        return OI_OK;
    }
    oi__sy_kernel k;
    memset(&k, 0, sizeof k);
    k.id = (int)arrlen(s->kernels);
    k.kind = kind;
    k.packed = (kind == OI__SY_K_MATMUL && oi__sy_use_packed(s, pn)) || kind == OI__SY_K_ATTENTION ||
               (kind == OI__SY_K_ATTN_KV && oi__sy_attn_kv_vectors(s, pn));
    s->packed_gemm |= k.packed;
    if (kind == OI__SY_K_ATTENTION || kind == OI__SY_K_ATTN_KV)
        oi__sy_attention_plain(s, &k, pn);
    if (kind == OI__SY_K_LAYOUT && (st = oi__sy_plan_layout(s, pn, &k)) != OI_OK) {
        arrfree(k.index_map);
        return st;
    }
    if ((kind == OI__SY_K_POOL && pn->ir->op != OI_OP_global_avg_pool) || kind == OI__SY_K_CONV_T)
        oi__sy_plan_conv(s, pn, &k); /* the window */
    if (kind == OI__SY_K_CONV) {
        oi__sy_plan_conv(s, pn, &k);
        k.packed = k.conv.path != OI__SY_CONV_WIDE; /* oi_gemm.h's dot kernels and micro-kernels */
        s->packed_gemm |= k.packed;
    }
    if (!arrput(k.nodes, pn) || !arrput(s->kernels, k)) {
        arrfree(k.nodes);
        arrfree(k.index_map);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    oi__sy_step step;
    memset(&step, 0, sizeof step);
    step.kind = OI__SY_S_KERNEL;
    step.node = pn;
    step.kernel = k.id;
    return arrput(*steps, step) ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

static oi_status oi__sy_add_branch(oi__sy_builder *b, const oi__pnode *pn, oi__sy_step *step) {
    if (b->depth >= 16)
        return oi__sy_unsupported(b->s, pn, "branches nested deeper than 16 (a branch cycle?)");
    const oi__plan *p = b->s->plan;
    b->depth++;
    const oi__pblock *t = &p->blocks[pn->then_block];
    oi_status st = oi__sy_build_block(b, t->nodes, (int)arrlen(t->nodes), &step->then_steps);
    if (st == OI_OK && pn->var >= 0) {
        const oi__pblock *e = &p->blocks[pn->else_block];
        st = oi__sy_build_block(b, e->nodes, (int)arrlen(e->nodes), &step->else_steps);
    }
    b->depth--;
    step->block_then = pn->then_block;
    step->block_else = pn->var >= 0 ? pn->else_block : -1;
    return st;
}

/* The largest value + 1 an index expression can take, from what is known
 * at synthesis time: a literal, a named size, the index of an enclosing
 * loop with static bounds. -1: only known at run time. */
static int64_t oi__sy_static_max(const oi__sy_builder *b, const oi__expr *e) {
    if (!e->ident)
        return e->lit;
    int64_t v;
    if (oi__plan_size(b->s->plan, e->ident, &v))
        return v;
    for (int i = (int)arrlen(b->loops) - 1; i >= 0; i--) {
        const oi__node *loop = b->loops[i]->ir;
        if (strcmp(loop->loop_index, e->ident) != 0)
            continue;
        const oi__expr *end = &loop->loop_end;
        if (!end->ident)
            return end->lit - 1;
        return oi__plan_size(b->s->plan, end->ident, &v) ? v - 1 : -1;
    }
    return -1;
}

/* A table access: the indices it may reach become the table's bounds where
 * no @fixed gives one; an index reaching past what is known at synthesis
 * time needs @fixed (the emitted code never grows a table). At most one
 * kept dim (a slice or a missing trailing index). */
/* Index `pos` of a table: its bound is its @fixed, else at least `reach`
 * (the size an access needs); -1, only known at run time, is refused. */
static oi_status oi__sy_bound_index(oi__sy_builder *b, const oi__pnode *pn, const oi__slot *sl, int pos, int64_t reach) {
    oi__sy_buffer *buf = &b->s->buffers[pn->var];
    if (sl->fixed[pos] >= 0) {
        buf->bound[pos] = sl->fixed[pos];
    } else if (reach < 0) {
        char why[200];
        snprintf(why, sizeof why, "index %s of table %s is only known at run time and has no bound: "
                 "declare it with @fixed(%s=N)", sl->decl->table_indices[pos], sl->name, sl->decl->table_indices[pos]);
        return oi__sy_unsupported(b->s, pn, why);
    } else if (reach > buf->bound[pos]) {
        buf->bound[pos] = reach;
    }
    return OI_OK;
}

static oi_status oi__sy_table_access(oi__sy_builder *b, const oi__pnode *pn, const oi__slot *sl) {
    oi__sy_buffer *buf = &b->s->buffers[pn->var];
    int n_access = (int)arrlen(pn->access), kept = 0;
    if (pn->ir->kind == OI__NODE_CACHE_RESET && n_access != 0 && n_access != sl->n_indices)
        return oi__sy_unsupported(b->s, pn, "a reset of part of a table");
    if (pn->ir->kind == OI__NODE_CACHE_RESET && n_access != 0)
        buf->entry_resets = true;
    for (int pos = 0; pos < sl->n_indices; pos++) {
        const oi__pindex *ix = pos < n_access ? &pn->access[pos] : NULL;
        int64_t reach = 0; /* the bound this access needs */
        if (!ix || ix->is_slice)
            kept++;
        if (ix && !ix->is_slice) {
            int64_t m = oi__sy_static_max(b, &ix->single);
            reach = m < 0 ? -1 : m + 1;
        } else if (ix && ix->has_end) {
            reach = oi__sy_static_max(b, &ix->end);
            if (!ix->end.ident && ix->end.lit < 0)
                reach = 0; /* counts from the size: no growth */
        }
        oi_status st = oi__sy_bound_index(b, pn, sl, pos, reach);
        if (st != OI_OK)
            return st;
    }
    if (pn->ir->kind == OI__NODE_CACHE_READ && kept > 1)
        return oi__sy_unsupported(b->s, pn, "a table read keeping more than one index");
    return OI_OK;
}

/* An access of an @auto_dim variable (a matrix whose leading dim grows by
 * the index's value): preallocated at its most rows, the @auto_dim
 * index's @fixed or the largest value the accesses reach, its other
 * indices (a @table's keys) as a table's. Only the leading dim may grow:
 * the emitted code keeps no value whose inner dims change at run time. */
static oi_status oi__sy_auto_access(oi__sy_builder *b, const oi__pnode *pn, const oi__slot *sl) {
    oi__sy_buffer *buf = &b->s->buffers[pn->var];
    int pos = sl->auto_pos[0], n_access = (int)arrlen(pn->access);
    const char *index = sl->decl->table_indices[pos];
    char why[300];
    if (b->s->options.vulkan) {
        snprintf(why, sizeof why, "%s is declared with @auto_dim (a matrix that grows at run time), which only the C "
                 "target keeps so far: use a @table with @fixed(%s=N) instead", sl->name, index);
        return oi__sy_unsupported(b->s, pn, why);
    }
    if (sl->n_auto > 1) {
        snprintf(why, sizeof why, "%s grows %d dims with @auto_dim; the emitted code grows a leading dim only: "
                 "declare one @auto_dim index", sl->name, sl->n_auto);
        return oi__sy_unsupported(b->s, pn, why);
    }
    if (pn->ir->kind == OI__NODE_CACHE_INCREMENT || pn->ir->kind == OI__NODE_CACHE_DECREMENT)
        return oi__sy_unsupported(b->s, pn, "cache.increment or decrement of an @auto_dim variable");
    if (pn->ir->kind == OI__NODE_CACHE_RESET && n_access == 0)
        return OI_OK; /* all of it */
    for (int k = 0; k < sl->n_keys; k++)
        if (sl->key_pos[k] >= n_access || pn->access[sl->key_pos[k]].is_slice)
            return oi__sy_unsupported(b->s, pn, "a slice of a table of @auto_dim variables (its entries differ in "
                                                "size)");
    int64_t reach = pos < n_access ? oi__sy_static_max(b, &pn->access[pos].single) : 0;
    if (sl->fixed[pos] >= 0) {
        buf->auto_max = sl->fixed[pos];
    } else if (reach < 0) {
        snprintf(why, sizeof why, "index %s of %s (@auto_dim) is only known at run time and has no bound: "
                 "declare it with @fixed(%s=N)", index, sl->name, index);
        return oi__sy_unsupported(b->s, pn, why);
    } else if (reach > buf->auto_max) {
        buf->auto_max = reach;
    }
    for (int k = 0; k < sl->n_keys; k++) {
        int64_t m = oi__sy_static_max(b, &pn->access[sl->key_pos[k]].single);
        oi_status st = oi__sy_bound_index(b, pn, sl, sl->key_pos[k], m < 0 ? -1 : m + 1);
        if (st != OI_OK)
            return st;
    }
    buf->bound[pos] = 1; /* the rows grown are the entry's, not more entries */
    return OI_OK;
}

static oi_status oi__sy_check_cache(oi__sy_builder *b, const oi__pnode *pn) {
    const oi__sy_schedule *s = b->s;
    int target = pn->var; /* the persistent side */
    if (target < 0)
        return oi__sy_unsupported(s, pn, "a cache operation without a target");
    const oi__slot *sl = oi__sy_slot(s, target);
    if (sl->n_auto > 0)
        return oi__sy_auto_access(b, pn, sl);
    if (sl->is_table)
        return oi__sy_table_access(b, pn, sl);
    if (arrlen(pn->access))
        return oi__sy_unsupported(s, pn, "an indexed cache access of a variable that is not a table");
    if ((pn->ir->kind == OI__NODE_CACHE_INCREMENT || pn->ir->kind == OI__NODE_CACHE_DECREMENT) &&
        !oi__sy_int(sl->dtype) && !oi__sy_float(sl->dtype))
        return oi__sy_unsupported(s, pn, "cache.increment of this dtype");
    return OI_OK;
}

/* The slots a list of steps writes (a consumer's private copies); cache
 * operations on persistent variables are shared state and write in place. */
static bool oi__sy_collect_written(const oi__sy_schedule *s, const oi__sy_step *steps, int **out) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        int w[64], n = 0;
        if (st->kind == OI__SY_S_KERNEL)
            for (int k = 0; k < (int)arrlen(s->kernels[st->kernel].nodes) && n < 64; k++)
                w[n++] = s->kernels[st->kernel].nodes[k]->out;
        else if (st->kind == OI__SY_S_TRANSFER || (st->kind == OI__SY_S_CACHE && st->node->ir->kind == OI__NODE_CACHE_READ))
            w[n++] = st->node->out;
        for (int k = 0; k < n; k++) {
            bool seen = false;
            for (int j = 0; j < (int)arrlen(*out); j++)
                seen |= (*out)[j] == w[k];
            if (!seen && !arrput(*out, w[k]))
                return false;
        }
        if (!oi__sy_collect_written(s, st->body, out) || !oi__sy_collect_written(s, st->then_steps, out) ||
            !oi__sy_collect_written(s, st->else_steps, out))
            return false;
    }
    return true;
}

static bool oi__sy_contains(const int *slots, int slot) {
    for (int i = 0; i < (int)arrlen(slots); i++)
        if (slots[i] == slot)
            return true;
    return false;
}

static void oi__sy_steps_free(oi__sy_step *steps);

/* Frees what a step owns (its nested steps and remap), not the step itself. */
static void oi__sy_step_free_parts(oi__sy_step *step) {
    oi__sy_steps_free(step->body);
    oi__sy_steps_free(step->then_steps);
    oi__sy_steps_free(step->else_steps);
    oi__sy_steps_free(step->consumers);
    arrfree(step->remap);
}

/* The entry yields pn->vars: every consumer block awaiting one of them runs
 * here (a sequential schedule), each on private copies of what it writes,
 * so that it sees the values at the yield and its writes reach nobody but
 * the entry's await, and there only for the variables it yields. */
static oi_status oi__sy_add_consumers(oi__sy_builder *b, const oi__pnode *pn, oi__sy_step *step) {
    oi__sy_schedule *s = b->s;
    const oi__plan *p = s->plan;
    for (int c = 0; c < (int)arrlen(p->blocks); c++) {
        const oi__pblock *blk = &p->blocks[c];
        bool awaits = false;
        for (int k = 0; blk->is_async && k < (int)arrlen(pn->vars); k++)
            awaits |= oi__sy_contains(blk->awaits, pn->vars[k]);
        if (!awaits)
            continue;
        oi__sy_step cons;
        memset(&cons, 0, sizeof cons);
        cons.kind = OI__SY_S_CONSUMER;
        cons.node = pn;
        cons.kernel = -1;
        cons.block = c;
        bool was = b->in_consumer;
        b->in_consumer = true;
        oi_status st = oi__sy_build_block(b, blk->nodes, (int)arrlen(blk->nodes), &cons.body);
        b->in_consumer = was;
        int *written = NULL;
        if (st == OI_OK && !oi__sy_collect_written(s, cons.body, &written))
            st = OI_ERROR_OUT_OF_MEMORY;
        for (int w = 0; st == OI_OK && w < (int)arrlen(written); w++) {
            oi__sy_buffer priv;
            memset(&priv, 0, sizeof priv);
            priv.slot = written[w];
            priv.consumer = c;
            priv.home = OI__SY_ARENA;
            int index = (int)arrlen(s->buffers);
            if (!arrput(s->buffers, priv) || !arrput(cons.remap, written[w]) || !arrput(cons.remap, index))
                st = OI_ERROR_OUT_OF_MEMORY;
            /* a yielded variable comes back at the await */
            bool yielded = oi__sy_contains(pn->vars, written[w]) && oi__sy_contains(blk->awaits, written[w]);
            if (st == OI_OK && yielded && (!arrput(b->copy_back, index) || !arrput(b->copy_back, written[w])))
                st = OI_ERROR_OUT_OF_MEMORY;
        }
        arrfree(written);
        if (st != OI_OK || !arrput(step->consumers, cons)) {
            oi__sy_step_free_parts(&cons); /* its body built before a refusal, too */
            return st != OI_OK ? st : OI_ERROR_OUT_OF_MEMORY;
        }
    }
    return OI_OK;
}

static oi_status oi__sy_build_block(oi__sy_builder *b, const oi__pnode *nodes, int count, oi__sy_step **steps) {
    for (int i = 0; i < count; i++) {
        const oi__pnode *pn = &nodes[i];
        oi__sy_step step;
        memset(&step, 0, sizeof step);
        step.node = pn;
        step.kernel = -1;
        oi_status st = OI_OK;
        switch (pn->ir->kind) {
        case OI__NODE_ASSIGN: continue;
        case OI__NODE_RETURN: return OI_OK;
        case OI__NODE_OP:
            st = oi__sy_add_op(b, pn, steps);
            if (st != OI_OK)
                return st;
            continue;
        case OI__NODE_LOOP:
            if (oi__expr_is_compound(&pn->ir->loop_start) || oi__expr_is_compound(&pn->ir->loop_end))
                return oi__sy_unsupported(b->s, pn, "a loop bound that is an expression (n-1): use a scalar variable or a size");
            step.kind = OI__SY_S_LOOP;
            if (!arrput(b->loops, pn))
                return OI_ERROR_OUT_OF_MEMORY;
            st = oi__sy_build_block(b, pn->body, (int)arrlen(pn->body), &step.body);
            arrpop(b->loops);
            break;
        case OI__NODE_BRANCH:
            step.kind = OI__SY_S_BRANCH;
            st = oi__sy_add_branch(b, pn, &step);
            break;
        case OI__NODE_TRANSFER:
            if (pn->out < 0 || pn->var < 0)
                return oi__sy_unsupported(b->s, pn, "an indexed transfer");
            step.kind = OI__SY_S_TRANSFER;
            break;
        case OI__NODE_CACHE_READ: case OI__NODE_CACHE_WRITE: case OI__NODE_CACHE_INCREMENT:
        case OI__NODE_CACHE_DECREMENT: case OI__NODE_CACHE_RESET:
            st = oi__sy_check_cache(b, pn);
            step.kind = OI__SY_S_CACHE;
            break;
        case OI__NODE_BARRIER: case OI__NODE_DEP:
            step.kind = OI__SY_S_FENCE;
            break;
        case OI__NODE_YIELD:
            if (b->in_consumer)
                continue; /* a consumer's last statement: its copies are what it yields */
            step.kind = OI__SY_S_YIELD;
            st = oi__sy_add_consumers(b, pn, &step);
            break;
        case OI__NODE_AWAIT:
            if (b->in_consumer)
                continue; /* the consumer runs at the yield it awaits */
            step.kind = OI__SY_S_AWAIT;
            step.remap = b->copy_back;
            b->copy_back = NULL;
            break;
        }
        if (st == OI_OK && !arrput(*steps, step))
            st = OI_ERROR_OUT_OF_MEMORY;
        if (st != OI_OK) { /* a branch's blocks built before the refusal, too */
            oi__sy_step_free_parts(&step);
            return st;
        }
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Views folded into attention                                         */
/* ------------------------------------------------------------------ */
/* Attention reads q, k, v per (batch, head) and writes its result the
 * same way; a model feeds it heads split off a [tokens, width] matmul
 * result by reshape + transpose and joins them back the same way. Those
 * views compute nothing: the C target folds them into the attention's
 * indexing (each operand read or written through four strides in the
 * matmul's value), so no copy is made and no kernel runs for them.
 * The GPU target keeps them as kernels (its attention shader reads heads
 * contiguously). */
/* Reads and writes of `slot` anywhere in the schedule: by kernels, and by
 * the steps that are not kernels (counted as both). A view step already
 * folded into an attention (kernel -2) counts in that attention's kernel. */
static void oi__sy_count_uses(const oi__sy_schedule *s, const oi__sy_step *steps, int slot, int *reads, int *writes) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        if (st->kind == OI__SY_S_KERNEL && st->kernel < 0)
            continue;
        if (st->kind == OI__SY_S_KERNEL) {
            const oi__sy_kernel *k = &s->kernels[st->kernel];
            for (int n = 0; n < (int)arrlen(k->nodes); n++) {
                for (int j = 0; j < (int)arrlen(k->nodes[n]->inputs); j++)
                    *reads += k->nodes[n]->inputs[j] == slot;
                *writes += k->nodes[n]->out == slot;
            }
            continue;
        }
        bool touches = st->node && (st->node->var == slot || st->node->out == slot);
        for (int j = 0; j < (int)arrlen(st->remap); j++)
            touches |= st->remap[j] == slot;
        *reads += touches;
        *writes += touches;
        oi__sy_count_uses(s, st->body, slot, reads, writes);
        oi__sy_count_uses(s, st->then_steps, slot, reads, writes);
        oi__sy_count_uses(s, st->else_steps, slot, reads, writes);
        for (int c = 0; c < (int)arrlen(st->consumers); c++) {
            for (int j = 0; j < (int)arrlen(st->consumers[c].remap); j++)
                *reads += st->consumers[c].remap[j] == slot;
            oi__sy_count_uses(s, st->consumers[c].body, slot, reads, writes);
        }
    }
}

/* A temporary that one statement writes and one reads: a view of it may
 * take its place. */
static bool oi__sy_private_temp(const oi__sy_schedule *s, int slot) {
    int reads = 0, writes = 0;
    if (oi__sy_slot(s, slot)->decl || oi__sy_slot(s, slot)->dtype != OI_DTYPE_F32)
        return false;
    oi__sy_count_uses(s, s->steps, slot, &reads, &writes);
    return reads == 1 && writes == 1;
}

/* The statement of a one-statement kernel of `kind` (COPY or TRANSPOSE)
 * at steps[at], or NULL. */
static const oi__pnode *oi__sy_view_step(const oi__sy_schedule *s, const oi__sy_step *steps, int at,
                                         oi__sy_kernel_kind kind) {
    if (at < 0 || at >= (int)arrlen(steps) || steps[at].kind != OI__SY_S_KERNEL || steps[at].kernel < 0)
        return NULL;
    const oi__sy_kernel *k = &s->kernels[steps[at].kernel];
    if (k->kind != kind || arrlen(k->nodes) != 1 || !oi__sy_hint_fuses(k->nodes[0]))
        return NULL;
    return k->nodes[0];
}

/* The step before `before` that writes `slot` (a kernel), or -1; every
 * step in between is a kernel that does not touch `slot` (and none was
 * folded into an earlier attention already). */
static int oi__sy_writer_before(const oi__sy_schedule *s, const oi__sy_step *steps, int before, int slot) {
    for (int i = before - 1; i >= 0; i--) {
        if (steps[i].kind != OI__SY_S_KERNEL || steps[i].kernel < 0)
            return -1;
        const oi__sy_kernel *k = &s->kernels[steps[i].kernel];
        if (oi__sy_written_in(k, slot))
            return i;
    }
    return -1;
}

static bool oi__sy_written_between(const oi__sy_schedule *s, const oi__sy_step *steps, int from, int to, int slot) {
    for (int i = from + 1; i < to; i++)
        if (steps[i].kind != OI__SY_S_KERNEL || steps[i].kernel < 0 ||
            oi__sy_written_in(&s->kernels[steps[i].kernel], slot))
            return true;
    return false;
}

typedef struct oi__sy_fold {
    int steps[8]; /* the view steps folded, at most two per operand */
    int n;
} oi__sy_fold;

/* Operand `op` (q, k or v) of the attention at steps[at]: transpose, then
 * reshape, folded as far as they go. */
static void oi__sy_fold_input(const oi__sy_schedule *s, const oi__sy_step *steps, int at, oi__sy_kernel *k, int op,
                              oi__sy_fold *fold) {
    int slot = k->view_slot[op];
    int t = oi__sy_writer_before(s, steps, at, slot);
    const oi__pnode *tr = oi__sy_private_temp(s, slot) ? oi__sy_view_step(s, steps, t, OI__SY_K_TRANSPOSE) : NULL;
    if (tr) {
        const oi__slot *in = oi__sy_slot(s, tr->inputs[0]);
        int64_t perm[OI_MAX_DIMS], in_stride[OI_MAX_DIMS];
        if (in->ndim != 4 || oi__sy_written_between(s, steps, t, at, tr->inputs[0]))
            return;
        oi__sy_transpose_map(tr, in, perm, in_stride);
        for (int d = 0; d < 4; d++)
            k->view_stride[op][d] = in_stride[perm[d]];
        k->view_slot[op] = slot = tr->inputs[0];
        fold->steps[fold->n++] = t;
    }
    /* a reshape keeps every element's offset: the strides stay */
    int r = oi__sy_writer_before(s, steps, tr ? t : at, slot);
    const oi__pnode *re = oi__sy_private_temp(s, slot) ? oi__sy_view_step(s, steps, r, OI__SY_K_COPY) : NULL;
    if (re && !oi__sy_written_between(s, steps, r, at, re->inputs[0])) {
        k->view_slot[op] = re->inputs[0];
        fold->steps[fold->n++] = r;
    }
}

/* The result: a transpose right after the attention, then a reshape. */
static void oi__sy_fold_output(const oi__sy_schedule *s, const oi__sy_step *steps, int at, oi__sy_kernel *k,
                               oi__sy_fold *fold) {
    const oi__pnode *tr = oi__sy_view_step(s, steps, at + 1, OI__SY_K_TRANSPOSE);
    if (!tr || tr->inputs[0] != k->view_slot[3] || !oi__sy_private_temp(s, k->view_slot[3]))
        return;
    const oi__slot *res = oi__sy_slot(s, tr->inputs[0]), *out = oi__sy_slot(s, tr->out);
    int64_t perm[OI_MAX_DIMS], in_stride[OI_MAX_DIMS], out_stride[4];
    if (res->ndim != 4)
        return;
    oi__sy_transpose_map(tr, res, perm, in_stride);
    oi__sy_contiguous(out, out_stride);
    for (int d = 0; d < 4; d++) /* output dim d is the result's dim perm[d] */
        k->view_stride[3][perm[d]] = out_stride[d];
    k->view_slot[3] = tr->out;
    fold->steps[fold->n++] = at + 1;
    const oi__pnode *re = oi__sy_view_step(s, steps, at + 2, OI__SY_K_COPY);
    if (re && re->inputs[0] == tr->out && oi__sy_private_temp(s, tr->out)) {
        k->view_slot[3] = re->out;
        fold->steps[fold->n++] = at + 2;
    }
}

static int oi__sy_by_int(const void *x, const void *y) { return *(const int *)x - *(const int *)y; }

/* Folds what it can into the attention kernel at steps[at]; the folded
 * steps are marked (kernel -2) for oi__sy_drop_folded. */
static oi_status oi__sy_fold_attention(oi__sy_schedule *s, oi__sy_step *steps, int at) {
    oi__sy_kernel *k = &s->kernels[steps[at].kernel];
    oi__sy_kernel folded = *k;
    oi__sy_fold fold = {{0}, 0};
    for (int op = 0; op < 3; op++)
        oi__sy_fold_input(s, steps, at, &folded, op, &fold);
    oi__sy_fold_output(s, steps, at, &folded, &fold);
    bool inner_contiguous = true;
    for (int op = 0; op < 4; op++)
        inner_contiguous &= folded.view_stride[op][3] == 1;
    if (fold.n == 0 || !inner_contiguous || 1 + fold.n > s->options.max_kernel_ops)
        return OI_OK;
    /* the kernel's statements in program order: the steps' order */
    qsort(fold.steps, (size_t)fold.n, sizeof fold.steps[0], oi__sy_by_int);
    const oi__pnode **nodes = NULL;
    bool ok = true;
    for (int i = 0; ok && i < fold.n && fold.steps[i] < at; i++)
        ok = arrput(nodes, s->kernels[steps[fold.steps[i]].kernel].nodes[0]);
    folded.lead = (int)arrlen(nodes);
    ok = ok && arrput(nodes, k->nodes[0]);
    for (int i = 0; ok && i < fold.n; i++)
        if (fold.steps[i] > at)
            ok = arrput(nodes, s->kernels[steps[fold.steps[i]].kernel].nodes[0]);
    if (!ok) {
        arrfree(nodes);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    arrfree(k->nodes);
    folded.nodes = nodes;
    *k = folded;
    for (int i = 0; i < fold.n; i++)
        steps[fold.steps[i]].kernel = -2;
    return OI_OK;
}

/* Folds views into attention kernels: every one on the C target; on a GPU
 * target (parallel_rows) the decoder's attention over a table slice only
 * (emit_vulkan.c folds the static attention's views itself). */
static oi_status oi__sy_fold_views(oi__sy_schedule *s, oi__sy_step *steps) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        oi__sy_step *st = &steps[i];
        oi_status r = OI_OK;
        if (st->kind == OI__SY_S_KERNEL && st->kernel >= 0 &&
            ((s->kernels[st->kernel].kind == OI__SY_K_ATTENTION && !s->options.parallel_rows) ||
             s->kernels[st->kernel].kind == OI__SY_K_ATTN_KV))
            r = oi__sy_fold_attention(s, steps, i);
        if (r == OI_OK)
            r = oi__sy_fold_views(s, st->body);
        if (r == OI_OK)
            r = oi__sy_fold_views(s, st->then_steps);
        if (r == OI_OK)
            r = oi__sy_fold_views(s, st->else_steps);
        for (int c = 0; r == OI_OK && c < (int)arrlen(st->consumers); c++)
            r = oi__sy_fold_views(s, st->consumers[c].body);
        if (r != OI_OK)
            return r;
    }
    return OI_OK;
}

/* Removes the folded steps and their kernels; the kernels left keep their
 * order and are numbered again. */
static void oi__sy_renumber(oi__sy_step *steps, const int *new_id) {
    int kept = 0;
    for (int i = 0; i < (int)arrlen(steps); i++) {
        oi__sy_step st = steps[i];
        if (st.kind == OI__SY_S_KERNEL && st.kernel == -2)
            continue;
        if (st.kind == OI__SY_S_KERNEL)
            st.kernel = new_id[st.kernel];
        oi__sy_renumber(st.body, new_id);
        oi__sy_renumber(st.then_steps, new_id);
        oi__sy_renumber(st.else_steps, new_id);
        for (int c = 0; c < (int)arrlen(st.consumers); c++)
            oi__sy_renumber(st.consumers[c].body, new_id);
        steps[kept++] = st;
    }
    if (steps)
        arrsetlen(steps, kept);
}

static void oi__sy_mark_used(const oi__sy_step *steps, bool *used) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        if (steps[i].kind == OI__SY_S_KERNEL && steps[i].kernel >= 0)
            used[steps[i].kernel] = true;
        oi__sy_mark_used(steps[i].body, used);
        oi__sy_mark_used(steps[i].then_steps, used);
        oi__sy_mark_used(steps[i].else_steps, used);
        for (int c = 0; c < (int)arrlen(steps[i].consumers); c++)
            oi__sy_mark_used(steps[i].consumers[c].body, used);
    }
}

static oi_status oi__sy_drop_folded(oi__sy_schedule *s) {
    int n = (int)arrlen(s->kernels), kept = 0;
    bool *used = (bool *)oi__calloc((size_t)n + 1, sizeof(bool));
    int *new_id = (int *)oi__calloc((size_t)n + 1, sizeof(int));
    if (!used || !new_id) {
        oi__free(used);
        oi__free(new_id);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    oi__sy_mark_used(s->steps, used);
    for (int k = 0; k < n; k++) {
        if (!used[k]) {
            arrfree(s->kernels[k].nodes);
            arrfree(s->kernels[k].index_map);
            continue;
        }
        new_id[k] = kept;
        s->kernels[kept] = s->kernels[k];
        s->kernels[kept].id = kept;
        kept++;
    }
    arrsetlen(s->kernels, kept);
    oi__sy_renumber(s->steps, new_id);
    oi__free(used);
    oi__free(new_id);
    return OI_OK;
}

/* A transpose of a run-time length is run only as a view folded into the
 * attention that reads it (the keys' strides in the table slice); one
 * left as a kernel of its own is refused. */
static oi_status oi__sy_check_dynamic_views(const oi__sy_schedule *s) {
    for (int k = 0; k < (int)arrlen(s->kernels); k++) {
        const oi__sy_kernel *kr = &s->kernels[k];
        if (kr->kind == OI__SY_K_TRANSPOSE && oi__sy_any_dynamic(s, kr->nodes[0]) && s->options.parallel_rows)
            return oi__fail_at(OI_ERROR_UNSUPPORTED, &kr->nodes[0]->ir->src, "the Vulkan target cannot synthesize this "
                               "yet: a transpose over a shape known at run time only (keys or values read from a table "
                               "slice: the C target folds them into its attention)");
        if (kr->kind == OI__SY_K_TRANSPOSE && oi__sy_any_dynamic(s, kr->nodes[0]))
            return oi__sy_unsupported(s, kr->nodes[0], "a transpose over a shape known at run time only that does not fold "
                                                       "into the attention reading it (one statement writing a temporary "
                                                       "that only the attention reads)");
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Homes                                                               */
/* ------------------------------------------------------------------ */
static uint64_t oi__sy_value_bytes(const oi__slot *sl) {
    return oi_dtype_nbytes(sl->dtype, (uint64_t)oi__sy_numel(sl));
}

/* The entries of a prefix family W(l): W.0, W.1, ... as long as the model
 * has them. */
static oi_status oi__sy_prefix_entries(const oi__sy_schedule *s, const oi__slot *sl, oi__sy_buffer *buf) {
    const oi__plan *p = s->plan;
    if (sl->n_indices != 1)
        return oi__fail_at(OI_ERROR_UNSUPPORTED, sl->src,
                           "the %s target cannot synthesize this yet: %s has %d table indices (one is supported)",
                           oi__sy_target_name(&s->options), sl->name, sl->n_indices);
    for (int64_t l = 0; p->model && l < (1 << 16); l++) {
        char *name = oi__plan_pattern_name(sl, &l);
        if (!name)
            return OI_ERROR_OUT_OF_MEMORY;
        const oi_tensor_info *t = oi_model_find_tensor(p->model, name);
        oi__free(name);
        if (!t || !t->has_data || t->dtype != sl->dtype || t->numel != (uint64_t)oi__sy_numel(sl))
            break;
        if (!arrput(buf->tensors, t))
            return OI_ERROR_OUT_OF_MEMORY;
    }
    buf->prefix_count = (int64_t)arrlen(buf->tensors);
    return OI_OK;
}

static void oi__sy_mark_written(oi__sy_schedule *s, const oi__sy_step *steps) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        const oi__sy_step *st = &steps[i];
        switch (st->kind) {
        case OI__SY_S_KERNEL: {
            const oi__sy_kernel *k = &s->kernels[st->kernel];
            for (int n = 0; n < (int)arrlen(k->nodes); n++)
                s->buffers[k->nodes[n]->out].written = true;
            break;
        }
        case OI__SY_S_LOOP: oi__sy_mark_written(s, st->body); break;
        case OI__SY_S_BRANCH:
            oi__sy_mark_written(s, st->then_steps);
            oi__sy_mark_written(s, st->else_steps);
            break;
        case OI__SY_S_TRANSFER: s->buffers[st->node->out].written = true; break;
        case OI__SY_S_CACHE:
            if (st->node->ir->kind == OI__NODE_CACHE_READ)
                s->buffers[st->node->out].written = true;
            else
                s->buffers[st->node->var].written = true;
            break;
        case OI__SY_S_YIELD:
            for (int c = 0; c < (int)arrlen(st->consumers); c++)
                oi__sy_mark_written(s, st->consumers[c].body);
            break;
        case OI__SY_S_AWAIT:
            for (int k = 0; k + 1 < (int)arrlen(st->remap); k += 2)
                s->buffers[st->remap[k + 1]].written = true;
            break;
        case OI__SY_S_FENCE: case OI__SY_S_CONSUMER: break;
        }
    }
}

static oi_status oi__sy_assign_homes(oi__sy_schedule *s) {
    const oi__plan *p = s->plan;
    uint64_t state = 0;
    for (int i = 0; i < (int)arrlen(p->slots); i++) {
        const oi__slot *sl = &p->slots[i];
        oi__sy_buffer *b = &s->buffers[i];
        b->bytes = oi__sy_value_bytes(sl);
        if (sl->is_prefix) {
            b->home = OI__SY_PREFIX;
            oi_status st = oi__sy_prefix_entries(s, sl, b);
            if (st != OI_OK)
                return st;
            continue;
        }
        if (sl->is_table || sl->n_auto > 0) { /* preallocated at its bounds, in the state block */
            b->home = OI__SY_TABLE;
            b->table_entries = 1;
            for (int k = 0; k < sl->n_indices; k++)
                b->table_entries *= b->bound[k];
            b->bytes = oi_dtype_nbytes(sl->dtype, (uint64_t)oi__sy_entry_numel(b, sl));
            state = (state + 7) & ~(uint64_t)7;
            b->offset = state;
            state += b->bytes * (uint64_t)b->table_entries;
            continue;
        }
        if (sl->model_meta)
            return oi__fail_at(OI_ERROR_UNSUPPORTED, sl->src,
                               "the %s target cannot synthesize this yet: %s links a metadata entry",
                               oi__sy_target_name(&s->options), sl->name);
        /* f16 and bf16 are stored as their bits (lang.c): copies move them
         * (gather, reshape, transpose, transfers, cache reads and writes),
         * casts and f16's elementwise ops decode them; every other op that
         * computes refuses them (oi__sy_classify) */
        if (oi__dtype_is_packed(sl->dtype) || sl->dtype == OI_DTYPE_F8 ||
            sl->dtype == OI_DTYPE_BITSET)
            return oi__fail_at(OI_ERROR_UNSUPPORTED, sl->src,
                               "the %s target cannot synthesize this yet: %s is %s", oi__sy_target_name(&s->options),
                               sl->name, oi_dtype_name(sl->dtype));
        if (!sl->decl) {
            b->home = OI__SY_ARENA;
            continue;
        }
        if (sl->model_tensor && sl->model_tensor->has_data && !b->written && sl->kind != OI__MEM_DYNAMIC) {
            b->home = OI__SY_MODEL;
            if (!arrput(b->tensors, sl->model_tensor))
                return OI_ERROR_OUT_OF_MEMORY;
            continue;
        }
        if (sl->model_tensor && sl->model_tensor->has_data && !arrput(b->tensors, sl->model_tensor))
            return OI_ERROR_OUT_OF_MEMORY;
        b->home = OI__SY_STATE;
        b->kept = true;
        state = (state + 7) & ~(uint64_t)7;
        b->offset = state;
        state += b->bytes;
    }
    for (int i = (int)arrlen(p->slots); i < (int)arrlen(s->buffers); i++) /* consumers' copies */
        s->buffers[i].bytes = oi__sy_value_bytes(&p->slots[s->buffers[i].slot]);
    s->state_bytes = state;
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Shapes known at run time only                                       */
/* ------------------------------------------------------------------ */
/* A slice of a table has a leading dim known at run time; ops carry it on.
 * Here every value is classified, in schedule order: static, or a dynamic
 * leading dim (dims[0] == -1 below) over static inner dims equal to its
 * declaration's, stored at the bound of the leading dim. Anything else
 * (a dynamic inner dim, a dynamic value in the state block) is refused. */
typedef struct oi__sy_shape { int ndim; int64_t dims[OI_MAX_DIMS]; int64_t max0; } oi__sy_shape;

static void oi__sy_current_shape(const oi__sy_schedule *s, int slot, oi__sy_shape *out) {
    const oi__slot *sl = oi__sy_slot(s, slot);
    const oi__sy_buffer *b = &s->buffers[slot];
    out->ndim = sl->ndim;
    memcpy(out->dims, sl->shape, sizeof out->dims);
    out->max0 = 0;
    if (b->dyn0) {
        out->dims[0] = -1;
        out->max0 = b->max0;
    }
}

static oi_status oi__sy_settle(oi__sy_schedule *s, const oi__pnode *pn, int slot, const oi__sy_shape *got) {
    const oi__slot *sl = oi__sy_slot(s, slot);
    oi__sy_buffer *b = &s->buffers[slot];
    bool dyn = got->ndim > 0 && got->dims[0] < 0;
    bool same = got->ndim == sl->ndim;
    for (int d = dyn ? 1 : 0; same && d < sl->ndim; d++)
        same = got->dims[d] == sl->shape[d];
    if (!same)
        return oi__sy_unsupported(s, pn, "a value whose shape at run time differs from its declaration in more than "
                                         "its leading dim");
    if (dyn && (!sl->dynamic_shape || b->home != OI__SY_ARENA))
        return oi__sy_unsupported(s, pn, "a declared variable whose shape is only known at run time");
    if (b->shaped && b->dyn0 != dyn)
        return oi__sy_unsupported(s, pn, "a value whose shape is known at synthesis time at one write and not at another");
    b->shaped = true;
    b->dyn0 = dyn;
    if (dyn) {
        b->max0 = got->max0 > b->max0 ? got->max0 : b->max0;
        b->inner = sl->ndim > 0 ? oi__shape_numel(sl->ndim - 1, sl->shape + 1) : 1;
    }
    return OI_OK;
}

/* Ops classify takes with shapes known at synthesis time only. */
static bool oi__sy_static_shape_op(oi_op op) {
    return op == OI_OP_slice || op == OI_OP_split || op == OI_OP_squeeze || op == OI_OP_unsqueeze || op == OI_OP_pad ||
           op == OI_OP_concat || op == OI_OP_tile || op == OI_OP_expand || op == OI_OP_conv1d || op == OI_OP_conv2d ||
           op == OI_OP_conv_transpose2d || op == OI_OP_max_pool2d || op == OI_OP_avg_pool2d ||
           op == OI_OP_global_avg_pool;
}

/* The shape an op makes of its inputs' current shapes. */
static oi_status oi__sy_op_shape(const oi__sy_schedule *s, const oi__pnode *pn, oi__sy_shape *out) {
    oi__sy_shape in[8];
    int n = (int)arrlen(pn->inputs) < 8 ? (int)arrlen(pn->inputs) : 8;
    for (int i = 0; i < n; i++)
        oi__sy_current_shape(s, pn->inputs[i], &in[i]);
    memset(out, 0, sizeof *out);
    oi_op op = pn->ir->op;
    if (op == OI_OP_is_finite)
        return OI_OK;
    if (op == OI_OP_softmax || op == OI_OP_log_softmax) {
        *out = in[0];
        return OI_OK;
    }
    if (op == OI_OP_gather || oi__sy_llm_op(op) || op == OI_OP_matmul_q4 || op == OI_OP_dequantize ||
        op == OI_OP_top_k || op == OI_OP_top_k_indices) { /* static shapes only (classify): the declared one */
        const oi__slot *o = oi__sy_slot(s, pn->out);
        out->ndim = o->ndim;
        memcpy(out->dims, o->shape, sizeof out->dims);
        return OI_OK;
    }
    if (op == OI_OP_gemm || (op == OI_OP_matmul && (in[0].ndim != 2 || in[1].ndim != 2)) || op == OI_OP_reshape ||
        op == OI_OP_transpose || op == OI_OP_layer_norm || op == OI_OP_batch_norm || op == OI_OP_group_norm ||
        op == OI_OP_attention || oi__sy_static_shape_op(op)) { /* static shapes only (classify): the declared one */
        const oi__slot *o = oi__sy_slot(s, pn->out);
        out->ndim = o->ndim;
        memcpy(out->dims, o->shape, sizeof out->dims);
        return OI_OK;
    }
    if (op == OI_OP_matmul) {
        if (in[0].dims[1] < 0 || in[1].dims[0] < 0)
            return oi__sy_unsupported(s, pn, "a matmul whose inner or B dims are only known at run time");
        out->ndim = 2;
        out->dims[0] = in[0].dims[0];
        out->dims[1] = in[1].dims[1];
        out->max0 = in[0].max0;
        return OI_OK;
    }
    if (oi__sy_axes_reduction(op)) {
        bool reduced[OI_MAX_DIMS] = {false};
        for (int i = 0; i < (int)arrlen(pn->attrs); i++)
            if (strcmp(pn->attrs[i].name, "axes") == 0)
                for (int k = 0; k < (int)arrlen(pn->attrs[i].ints); k++) {
                    int64_t a = pn->attrs[i].ints[k] < 0 ? pn->attrs[i].ints[k] + in[0].ndim : pn->attrs[i].ints[k];
                    if (a >= 0 && a < in[0].ndim)
                        reduced[a] = true;
                }
        bool keep = oi__op_param_value_i64(op, pn->attrs, arrlenu(pn->attrs), "keepdims") != 0;
        for (int d = 0; d < in[0].ndim; d++)
            if (!reduced[d] || keep)
                out->dims[out->ndim++] = reduced[d] ? 1 : in[0].dims[d];
        out->max0 = in[0].max0;
        return OI_OK;
    }
    /* elementwise: numpy broadcasting, right-aligned */
    for (int i = 0; i < n; i++)
        out->ndim = in[i].ndim > out->ndim ? in[i].ndim : out->ndim;
    for (int d = 0; d < out->ndim; d++)
        out->dims[d] = 1;
    for (int i = 0; i < n; i++) {
        int shift = out->ndim - in[i].ndim;
        for (int d = 0; d < in[i].ndim; d++) {
            int64_t v = in[i].dims[d], *o = &out->dims[d + shift];
            if (v < 0 && d + shift != 0)
                return oi__sy_unsupported(s, pn, "a dim known at run time only that is not the result's leading dim");
            if (v < 0 && (*o == 1 || *o < 0))
                *o = -1;
            else if (v < 0 || (*o < 0 && v != 1))
                return oi__sy_unsupported(s, pn, "a dim known at run time only broadcast against a fixed one");
            else if (*o == 1)
                *o = v;
        }
        if (in[i].max0 > out->max0)
            out->max0 = in[i].max0;
    }
    return OI_OK;
}

static oi_status oi__sy_infer_steps(oi__sy_schedule *s, const oi__sy_step *steps);

/* An @auto_dim variable's read gives its entry with the leading dim known
 * at run time; what is written must have the entry's inner dims (its rows
 * are checked when the step runs). */
static oi_status oi__sy_infer_auto(oi__sy_schedule *s, const oi__pnode *pn) {
    const oi__slot *cache = oi__sy_slot(s, pn->var), *value = oi__sy_slot(s, pn->out);
    const oi__sy_buffer *buf = &s->buffers[pn->var];
    if (pn->ir->kind == OI__NODE_CACHE_WRITE) {
        bool same = value->ndim == cache->ndim && value->dtype == cache->dtype;
        for (int d = 1; same && d < cache->ndim; d++)
            same = value->shape[d] == cache->shape[d];
        return same ? OI_OK : oi__sy_unsupported(s, pn, "a cache write whose dtype or inner dims differ from the "
                                                        "@auto_dim variable's");
    }
    if (pn->ir->kind != OI__NODE_CACHE_READ)
        return OI_OK;
    oi__sy_shape got;
    memset(&got, 0, sizeof got);
    got.ndim = cache->ndim;
    memcpy(got.dims, cache->shape, sizeof got.dims);
    got.dims[0] = -1;
    got.max0 = cache->shape[0] + buf->auto_max;
    return oi__sy_settle(s, pn, pn->out, &got);
}

static oi_status oi__sy_infer_step(oi__sy_schedule *s, const oi__sy_step *st) {
    const oi__pnode *pn = st->node;
    oi__sy_shape got;
    oi_status r = OI_OK;
    switch (st->kind) {
    case OI__SY_S_KERNEL: {
        const oi__sy_kernel *k = &s->kernels[st->kernel];
        for (int n = 0; r == OI_OK && n < (int)arrlen(k->nodes); n++) {
            const oi__pnode *m = k->nodes[n];
            if ((r = oi__sy_op_shape(s, m, &got)) == OI_OK)
                r = oi__sy_settle(s, m, m->out, &got);
        }
        return r;
    }
    case OI__SY_S_TRANSFER:
        oi__sy_current_shape(s, pn->var, &got);
        return oi__sy_settle(s, pn, pn->out, &got);
    case OI__SY_S_CACHE: {
        const oi__slot *cache = oi__sy_slot(s, pn->var);
        if (cache->n_auto > 0)
            return oi__sy_infer_auto(s, pn);
        if (pn->ir->kind == OI__NODE_CACHE_WRITE) {
            if (s->buffers[pn->out].dyn0)
                return oi__sy_unsupported(s, pn, "a cache write of a value whose shape is only known at run time");
            return OI_OK;
        }
        if (pn->ir->kind != OI__NODE_CACHE_READ)
            return OI_OK;
        memset(&got, 0, sizeof got);
        for (int pos = 0; cache->is_table && pos < cache->n_indices; pos++)
            if (pos >= (int)arrlen(pn->access) || pn->access[pos].is_slice) {
                got.dims[got.ndim++] = -1;
                got.max0 = s->buffers[pn->var].bound[pos];
            }
        for (int d = 0; d < cache->ndim; d++)
            got.dims[got.ndim++] = cache->shape[d];
        return oi__sy_settle(s, pn, pn->out, &got);
    }
    case OI__SY_S_LOOP: return oi__sy_infer_steps(s, st->body);
    case OI__SY_S_BRANCH:
        r = oi__sy_infer_steps(s, st->then_steps);
        return r == OI_OK ? oi__sy_infer_steps(s, st->else_steps) : r;
    case OI__SY_S_YIELD:
        for (int c = 0; r == OI_OK && c < (int)arrlen(st->consumers); c++)
            r = oi__sy_infer_steps(s, st->consumers[c].body);
        return r;
    default: return OI_OK;
    }
}

static oi_status oi__sy_infer_steps(oi__sy_schedule *s, const oi__sy_step *steps) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        oi_status r = oi__sy_infer_step(s, &steps[i]);
        if (r != OI_OK)
            return r;
    }
    return OI_OK;
}

/* How many steps (recursively) name `slot`: as a kernel's input or output,
 * a cache operation's value or target, a transfer's ends. */
static int oi__sy_refs(const oi__sy_schedule *s, const oi__sy_step *steps, int slot);

static int oi__sy_step_refs(const oi__sy_schedule *s, const oi__sy_step *st, int slot) {
    bool named = false;
    if (st->kind == OI__SY_S_KERNEL && st->kernel >= 0) {
        const oi__sy_kernel *k = &s->kernels[st->kernel];
        for (int m = 0; m < (int)arrlen(k->nodes); m++) {
            named |= k->nodes[m]->out == slot;
            for (int j = 0; j < (int)arrlen(k->nodes[m]->inputs); j++)
                named |= k->nodes[m]->inputs[j] == slot;
        }
    } else if (st->node && st->kind != OI__SY_S_LOOP && st->kind != OI__SY_S_BRANCH) {
        named = st->node->out == slot || st->node->var == slot;
    }
    int n = named;
    for (int j = 0; j < (int)arrlen(st->remap); j++)
        n += st->remap[j] == slot;
    n += oi__sy_refs(s, st->body, slot) + oi__sy_refs(s, st->then_steps, slot) + oi__sy_refs(s, st->else_steps, slot);
    for (int c = 0; c < (int)arrlen(st->consumers); c++)
        n += oi__sy_refs(s, st->consumers[c].body, slot);
    return n;
}

static int oi__sy_refs(const oi__sy_schedule *s, const oi__sy_step *steps, int slot) {
    int n = 0;
    for (int i = 0; i < (int)arrlen(steps); i++)
        n += oi__sy_step_refs(s, &steps[i], slot);
    return n;
}

/* May the slice read at steps[at] be a view into its table? Its value is
 * read, never written, by the kernels that follow it in this block, with
 * nothing but kernels and other tables' reads in between (the table does
 * not change while the view is in use), and named nowhere else; the slice
 * runs along the table's last index, so its entries are contiguous; no
 * 16-bit rounding of what a cache read stores. */
static bool oi__sy_view_ok(const oi__sy_schedule *s, const oi__sy_step *steps, int at) {
    const oi__pnode *pn = steps[at].node;
    const oi__slot *table = oi__sy_slot(s, pn->var);
    const oi__sy_buffer *buf = &s->buffers[pn->out];
    int n_access = (int)arrlen(pn->access), last_index = table->n_indices - 1;
    if (!table->is_table || !buf->dyn0 || buf->home != OI__SY_ARENA || n_access != table->n_indices ||
        !pn->access[last_index].is_slice || oi__sy_slot(s, pn->out)->dtype != table->dtype)
        return false;
    if (s->options.precision == OI_DTYPE_F16 || s->options.precision == OI_DTYPE_BF16)
        return false;
    for (int p = 0; p < last_index; p++)
        if (pn->access[p].is_slice)
            return false;
    int total = oi__sy_refs(s, s->steps, pn->out), seen = 1; /* the read itself */
    for (int i = at + 1; i < (int)arrlen(steps) && seen < total; i++) {
        const oi__sy_step *st = &steps[i];
        bool other_read = st->kind == OI__SY_S_CACHE && st->node->ir->kind == OI__NODE_CACHE_READ &&
                          st->node->var != pn->var && st->node->out != pn->out;
        if (st->kind != OI__SY_S_KERNEL && !other_read)
            return false;
        if (st->kind == OI__SY_S_KERNEL && oi__sy_written_in(&s->kernels[st->kernel], pn->out))
            return false;
        seen += oi__sy_step_refs(s, st, pn->out);
    }
    return total > 1 && seen == total;
}

static void oi__sy_plan_views(oi__sy_schedule *s, oi__sy_step *steps) {
    for (int i = 0; i < (int)arrlen(steps); i++) {
        oi__sy_step *st = &steps[i];
        if (st->kind == OI__SY_S_CACHE && st->node->ir->kind == OI__NODE_CACHE_READ && oi__sy_view_ok(s, steps, i)) {
            s->buffers[st->node->out].table_view = true;
            s->buffers[st->node->out].bytes = 0;
        }
        oi__sy_plan_views(s, st->body);
        oi__sy_plan_views(s, st->then_steps);
        oi__sy_plan_views(s, st->else_steps);
        for (int c = 0; c < (int)arrlen(st->consumers); c++)
            oi__sy_plan_views(s, st->consumers[c].body);
    }
}

/* Dynamic values take the bytes of their bound. */
static oi_status oi__sy_infer_dynamic(oi__sy_schedule *s) {
    oi_status r = oi__sy_infer_steps(s, s->steps);
    for (int i = 0; r == OI_OK && i < (int)arrlen(s->plan->slots); i++)
        if (s->buffers[i].dyn0)
            s->buffers[i].bytes = oi_dtype_nbytes(s->plan->slots[i].dtype,
                                                  (uint64_t)(s->buffers[i].max0 * s->buffers[i].inner));
    if (r == OI_OK && !arrsetlen(s->shaped, arrlen(s->plan->slots)))
        r = OI_ERROR_OUT_OF_MEMORY;
    for (int i = 0; r == OI_OK && i < (int)arrlen(s->plan->slots); i++) {
        s->shaped[i] = s->plan->slots[i];
        if (s->buffers[i].dyn0)
            s->shaped[i].shape[0] = s->buffers[i].max0;
    }
    if (r == OI_OK)
        oi__sy_plan_views(s, s->steps);
    return r;
}

/* ------------------------------------------------------------------ */
/* Liveness                                                            */
/* ------------------------------------------------------------------ */
typedef struct oi__sy_live {
    oi__sy_schedule *s;
    int *loop_begin, *loop_end; /* stb arrays: the enclosing loops */
    int pos;
    int *n_kernels;             /* per slot: kernels/steps touching it */
    int *first_kernel;          /* per slot: the first of them        */
    bool *first_is_read;        /* per slot: read where no write surely came before */
    bool *last_is_write;
    bool *seen;
    bool *surely_written;       /* per slot: written on every path so far this step */
    int *write_step;            /* per slot: the step of its last write, + 1      */
    int maybe;                  /* inside a branch or a loop that may not run      */
    const int *remap;           /* inside a consumer: pairs slot, private buffer */
} oi__sy_live;

static void oi__sy_touch_raw(oi__sy_live *lv, int slot, bool write, int step_id) {
    oi__sy_buffer *b = &lv->s->buffers[slot];
    /* a read that no write surely precedes sees the zeros of the step's start
     * (a write in the same kernel just before it does) */
    if (!write && !lv->surely_written[slot] && lv->write_step[slot] != step_id + 1)
        lv->first_is_read[slot] = true;
    if (write) {
        lv->write_step[slot] = step_id + 1;
        if (lv->maybe == 0)
            lv->surely_written[slot] = true;
    }
    if (!lv->seen[slot]) {
        lv->seen[slot] = true;
        b->first = lv->pos;
        b->last = lv->pos;
        lv->first_kernel[slot] = step_id;
        lv->n_kernels[slot] = 1;
    } else if (lv->first_kernel[slot] != step_id) {
        lv->n_kernels[slot]++;
    }
    if (lv->pos < b->first)
        b->first = lv->pos;
    if (lv->pos > b->last)
        b->last = lv->pos;
    lv->last_is_write[slot] = write;
    /* a value touched in a loop lives through the whole loop */
    for (int i = 0; i < (int)arrlen(lv->loop_begin); i++) {
        if (lv->loop_begin[i] < b->first)
            b->first = lv->loop_begin[i];
        if (lv->loop_end[i] > b->last)
            b->last = lv->loop_end[i];
    }
}

/* A touch of variable `slot`: inside a consumer, of its private copy. */
static void oi__sy_touch(oi__sy_live *lv, int slot, bool write, int step_id) {
    for (int i = 0; lv->remap && i + 1 < (int)arrlen(lv->remap); i += 2)
        if (lv->remap[i] == slot) {
            slot = lv->remap[i + 1];
            break;
        }
    oi__sy_touch_raw(lv, slot, write, step_id);
}

/* Slot's bytes stay its own up to here, with no use counted (the condition
 * of a branch: the Vulkan target's kernels of both blocks read it). */
static void oi__sy_keep_alive(oi__sy_live *lv, int slot) {
    for (int i = 0; lv->remap && i + 1 < (int)arrlen(lv->remap); i += 2)
        if (lv->remap[i] == slot) {
            slot = lv->remap[i + 1];
            break;
        }
    if (lv->pos > lv->s->buffers[slot].last)
        lv->s->buffers[slot].last = lv->pos;
}

static int oi__sy_count_positions(const oi__sy_step *steps) {
    int n = 0;
    for (int i = 0; i < (int)arrlen(steps); i++) {
        n++;
        n += oi__sy_count_positions(steps[i].body);
        n += oi__sy_count_positions(steps[i].then_steps);
        n += oi__sy_count_positions(steps[i].else_steps);
        for (int c = 0; c < (int)arrlen(steps[i].consumers); c++)
            n += 1 + oi__sy_count_positions(steps[i].consumers[c].body);
        if (steps[i].kind == OI__SY_S_LOOP || steps[i].kind == OI__SY_S_BRANCH)
            n++;
    }
    return n;
}

static bool oi__sy_walk(oi__sy_live *lv, oi__sy_step *steps);

/* A loop whose bounds are known at synthesis time and that runs at least once. */
static bool oi__sy_loop_runs(const oi__plan *p, const oi__pnode *pn) {
    int64_t v[2];
    const oi__expr *e[2] = {&pn->ir->loop_start, &pn->ir->loop_end};
    for (int i = 0; i < 2; i++) {
        if (!e[i]->ident)
            v[i] = e[i]->lit;
        else if (!oi__plan_size(p, e[i]->ident, &v[i]))
            return false;
    }
    return v[0] < v[1];
}

static bool oi__sy_walk_step(oi__sy_live *lv, oi__sy_step *st) {
    oi__sy_schedule *s = lv->s;
    int id = lv->pos;
    st->pos_begin = lv->pos;
    switch (st->kind) {
    case OI__SY_S_KERNEL: {
        const oi__sy_kernel *k = &s->kernels[st->kernel];
        for (int n = 0; n < (int)arrlen(k->nodes); n++) {
            const oi__pnode *pn = k->nodes[n];
            for (int i = 0; i < (int)arrlen(pn->inputs); i++)
                oi__sy_touch(lv, pn->inputs[i], false, id);
            oi__sy_touch(lv, pn->out, true, id);
        }
        break;
    }
    case OI__SY_S_LOOP: {
        if (!arrput(lv->loop_begin, lv->pos) || !arrput(lv->loop_end, lv->pos + oi__sy_count_positions(st->body) + 1))
            return false;
        lv->pos++;
        bool runs = oi__sy_loop_runs(s->plan, st->node);
        lv->maybe += !runs;
        if (!oi__sy_walk(lv, st->body))
            return false;
        lv->maybe -= !runs;
        arrpop(lv->loop_begin);
        arrpop(lv->loop_end);
        break;
    }
    case OI__SY_S_BRANCH:
        if (st->node->var >= 0)
            oi__sy_touch(lv, st->node->var, false, id);
        lv->pos++;
        lv->maybe++; /* one arm or the other */
        if (!oi__sy_walk(lv, st->then_steps) || !oi__sy_walk(lv, st->else_steps))
            return false;
        lv->maybe--;
        if (st->node->var >= 0)
            oi__sy_keep_alive(lv, st->node->var);
        break;
    case OI__SY_S_TRANSFER:
        oi__sy_touch(lv, st->node->var, false, id);
        oi__sy_touch(lv, st->node->out, true, id);
        break;
    case OI__SY_S_CACHE:
        if (st->node->ir->kind == OI__NODE_CACHE_READ) {
            oi__sy_touch(lv, st->node->var, false, id);
            oi__sy_touch(lv, st->node->out, true, id);
        } else if (st->node->ir->kind == OI__NODE_CACHE_WRITE) {
            oi__sy_touch(lv, st->node->out >= 0 ? st->node->out : st->node->var, false, id);
        }
        break;
    case OI__SY_S_YIELD:
        lv->pos++;
        for (int c = 0; c < (int)arrlen(st->consumers); c++) {
            oi__sy_step *cons = &st->consumers[c];
            int cid = lv->pos;
            cons->pos_begin = lv->pos;
            for (int k = 0; k + 1 < (int)arrlen(cons->remap); k += 2) {
                oi__sy_touch_raw(lv, cons->remap[k], false, cid);    /* the copy in */
                oi__sy_touch_raw(lv, cons->remap[k + 1], true, cid);
            }
            lv->pos++;
            lv->remap = cons->remap;
            bool ok = oi__sy_walk(lv, cons->body);
            lv->remap = NULL;
            cons->pos_end = lv->pos;
            if (!ok)
                return false;
        }
        break;
    case OI__SY_S_AWAIT:
        for (int k = 0; k + 1 < (int)arrlen(st->remap); k += 2) {
            oi__sy_touch_raw(lv, st->remap[k], false, id); /* the copy back */
            oi__sy_touch_raw(lv, st->remap[k + 1], true, id);
        }
        break;
    case OI__SY_S_FENCE: case OI__SY_S_CONSUMER: break;
    }
    lv->pos++;
    st->pos_end = lv->pos;
    return true;
}

static bool oi__sy_walk(oi__sy_live *lv, oi__sy_step *steps) {
    for (int i = 0; i < (int)arrlen(steps); i++)
        if (!oi__sy_walk_step(lv, &steps[i]))
            return false;
    return true;
}

/* Temporaries: kept in a register of one kernel, or given arena bytes for
 * their live range; read before written means zeros at the step's start;
 * written last means the step's result (kept to the end, fetchable). */
static oi_status oi__sy_liveness(oi__sy_schedule *s) {
    int n = (int)arrlen(s->buffers);
    oi__sy_live lv;
    memset(&lv, 0, sizeof lv);
    lv.s = s;
    lv.n_kernels = (int *)oi__calloc((size_t)n + 1, sizeof(int));
    lv.first_kernel = (int *)oi__calloc((size_t)n + 1, sizeof(int));
    lv.first_is_read = (bool *)oi__calloc((size_t)n + 1, sizeof(bool));
    lv.last_is_write = (bool *)oi__calloc((size_t)n + 1, sizeof(bool));
    lv.seen = (bool *)oi__calloc((size_t)n + 1, sizeof(bool));
    lv.surely_written = (bool *)oi__calloc((size_t)n + 1, sizeof(bool));
    lv.write_step = (int *)oi__calloc((size_t)n + 1, sizeof(int));
    oi_status st = OI_OK;
    if (!lv.n_kernels || !lv.first_kernel || !lv.first_is_read || !lv.last_is_write || !lv.seen ||
        !lv.surely_written || !lv.write_step ||
        !oi__sy_walk(&lv, s->steps))
        st = OI_ERROR_OUT_OF_MEMORY;
    s->n_positions = lv.pos;
    for (int i = 0; st == OI_OK && i < n; i++) {
        oi__sy_buffer *b = &s->buffers[i];
        if (b->home != OI__SY_ARENA)
            continue;
        if (!lv.seen[i]) {
            b->home = OI__SY_NONE;
            continue;
        }
        bool copy = i >= (int)arrlen(s->plan->slots); /* a consumer's private copy */
        b->zero_at_start = !copy && lv.first_is_read[i];
        b->kept = !copy && lv.last_is_write[i];
        if (b->zero_at_start)
            b->first = 0;
        if (b->kept)
            b->last = s->n_positions;
        if (!copy && !b->zero_at_start && !b->kept && lv.n_kernels[i] == 1)
            b->home = OI__SY_NONE; /* produced and consumed inside one kernel */
    }
    oi__free(lv.n_kernels);
    oi__free(lv.first_kernel);
    oi__free(lv.first_is_read);
    oi__free(lv.last_is_write);
    oi__free(lv.seen);
    oi__free(lv.surely_written);
    oi__free(lv.write_step);
    arrfree(lv.loop_begin);
    arrfree(lv.loop_end);
    return st;
}

/* ------------------------------------------------------------------ */
/* Arena: greedy by size (TVM's USMP greedy_by_size), first fit         */
/* ------------------------------------------------------------------ */
static uint64_t oi__sy_align_of(const oi__slot *sl) {
    unsigned bits = oi_dtype_bits(sl->dtype);
    return bits >= 8 ? bits / 8 : 1;
}

/* A buffer's alignment in the arena: its element's; on the Vulkan target
 * at least a 32-bit word, so that a bool buffer (bytes among words) owns
 * every word it touches and the zeros a step starts with are whole words
 * (vkCmdFillBuffer writes words). */
static uint64_t oi__sy_arena_align(const oi__sy_schedule *s, const oi__slot *sl) {
    uint64_t align = oi__sy_align_of(sl);
    return s->options.vulkan && align < 4 ? 4 : align;
}

static bool oi__sy_overlap_time(const oi__sy_buffer *a, const oi__sy_buffer *b) {
    return a->first <= b->last && b->first <= a->last;
}

/* Places buffers in `order`; returns the arena size. */
static uint64_t oi__sy_pack(oi__sy_schedule *s, const int *order, int count) {
    uint64_t total = 0;
    for (int o = 0; o < count; o++) {
        oi__sy_buffer *b = &s->buffers[order[o]];
        uint64_t align = oi__sy_arena_align(s, &s->plan->slots[b->slot]);
        uint64_t offset = 0;
        bool moved = true;
        while (moved) { /* first fit: step past every placed buffer in the way */
            moved = false;
            offset = (offset + align - 1) / align * align;
            for (int q = 0; q < o; q++) {
                const oi__sy_buffer *c = &s->buffers[order[q]];
                if (oi__sy_overlap_time(b, c) && offset < c->offset + c->bytes && c->offset < offset + b->bytes) {
                    offset = c->offset + c->bytes;
                    moved = true;
                }
            }
        }
        b->offset = offset;
        if (offset + b->bytes > total)
            total = offset + b->bytes;
    }
    return total;
}

/* A buffer's sort key: the comparators see only the key (no schedule
 * pointer in a global, so two threads may synthesize at once). */
typedef struct oi__sy_arena_key {
    int first;
    uint64_t bytes;
    int index;
} oi__sy_arena_key;

static int oi__sy_by_size(const void *x, const void *y) {
    const oi__sy_arena_key *a = (const oi__sy_arena_key *)x, *b = (const oi__sy_arena_key *)y;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    return a->index - b->index;
}
static int oi__sy_by_start(const void *x, const void *y) {
    const oi__sy_arena_key *a = (const oi__sy_arena_key *)x, *b = (const oi__sy_arena_key *)y;
    if (a->first != b->first)
        return a->first < b->first ? -1 : 1;
    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    return a->index - b->index;
}

/* Sorts the n buffer indices of `order` by cmp, through keys. */
static void oi__sy_sort_buffers(const oi__sy_schedule *s, int *order, int n, oi__sy_arena_key *keys,
                                int (*cmp)(const void *, const void *)) {
    for (int i = 0; i < n; i++) {
        const oi__sy_buffer *b = &s->buffers[order[i]];
        keys[i].first = b->first, keys[i].bytes = b->bytes, keys[i].index = order[i];
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp);
    for (int i = 0; i < n; i++)
        order[i] = keys[i].index;
}

static uint64_t oi__sy_peak(const oi__sy_schedule *s) {
    uint64_t peak = 0;
    for (int pos = 0; pos <= s->n_positions; pos++) {
        uint64_t live = 0;
        for (int i = 0; i < (int)arrlen(s->buffers); i++)
            if (s->buffers[i].home == OI__SY_ARENA && s->buffers[i].first <= pos && pos <= s->buffers[i].last)
                live += s->buffers[i].bytes;
        if (live > peak)
            peak = live;
    }
    return peak;
}

/* The greedy order can leave a gap a small long-lived buffer would have
 * filled (PP-OCR's residual blocks: x11 lives across block 12's expand and
 * depthwise results, placed before it). While the arena is above the peak,
 * each buffer in turn (the first 256) is tried at the front of the order;
 * the smallest arena wins and its offsets stay. */
static uint64_t oi__sy_pack_one_first(oi__sy_schedule *s, int *order, int n, uint64_t best) {
    int best_at = -1;
    for (int j = 1; j < n && j <= 256 && best > s->peak_bytes; j++) {
        int moved = order[j];
        memmove(order + 1, order, (size_t)j * sizeof *order);
        order[0] = moved;
        uint64_t total = oi__sy_pack(s, order, n);
        memmove(order, order + 1, (size_t)j * sizeof *order); /* back as it was */
        order[j] = moved;
        if (total < best) {
            best = total;
            best_at = j;
        }
    }
    if (best_at > 0) {
        int moved = order[best_at];
        memmove(order + 1, order, (size_t)best_at * sizeof *order);
        order[0] = moved;
    }
    return oi__sy_pack(s, order, n);
}

static oi_status oi__sy_plan_arena(oi__sy_schedule *s) {
    int n = 0, *order = (int *)oi__calloc(arrlenu(s->buffers) + 1, sizeof(int));
    oi__sy_arena_key *keys = (oi__sy_arena_key *)oi__calloc(arrlenu(s->buffers) + 1, sizeof *keys);
    if (!order || !keys) {
        oi__free(order);
        oi__free(keys);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < (int)arrlen(s->buffers); i++)
        if (s->buffers[i].home == OI__SY_ARENA)
            order[n++] = i;
    s->peak_bytes = oi__sy_peak(s);
    /* two greedy orders; the smaller arena wins */
    oi__sy_sort_buffers(s, order, n, keys, oi__sy_by_start);
    uint64_t by_start = oi__sy_pack(s, order, n);
    oi__sy_sort_buffers(s, order, n, keys, oi__sy_by_size);
    uint64_t by_size = oi__sy_pack(s, order, n);
    if (by_start < by_size) {
        oi__sy_sort_buffers(s, order, n, keys, oi__sy_by_start);
        by_size = oi__sy_pack(s, order, n);
    }
    s->arena_bytes = oi__sy_pack_one_first(s, order, n, by_size);
    oi__free(order);
    oi__free(keys);
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Estimates                                                           */
/* ------------------------------------------------------------------ */
static void oi__sy_estimate(oi__sy_schedule *s) {
    for (int k = 0; k < (int)arrlen(s->kernels); k++) {
        oi__sy_kernel *kr = &s->kernels[k];
        const oi__slot *shape = oi__sy_kernel_shape(s, kr);
        kr->numel = oi__sy_numel(shape);
        kr->bytes = 0;
        kr->flops = 0;
        for (int n = 0; n < (int)arrlen(kr->nodes); n++) {
            const oi__pnode *pn = kr->nodes[n];
            for (int i = 0; i < (int)arrlen(pn->inputs); i++)
                if (kr->kind == OI__SY_K_GATHER && i == 0) /* the slabs it picks, not the whole table */
                    kr->bytes += oi__sy_value_bytes(oi__sy_slot(s, pn->out));
                else if (!oi__sy_written_in(kr, pn->inputs[i]) || (kr->kind == OI__SY_K_MATMUL && n == 0))
                    kr->bytes += oi__sy_value_bytes(oi__sy_slot(s, pn->inputs[i]));
            if (s->buffers[pn->out].home != OI__SY_NONE)
                kr->bytes += oi__sy_value_bytes(oi__sy_slot(s, pn->out));
            if (n == 0 && kr->kind == OI__SY_K_CONV)
                kr->flops += 2u * (uint64_t)kr->numel * (uint64_t)kr->conv.rows;
            else if (kr->kind == OI__SY_K_CONV_T) /* every input position times a window of each group's channels */
                kr->flops += 2u * (uint64_t)oi__sy_numel(oi__sy_slot(s, pn->inputs[0])) * (uint64_t)kr->conv.mg *
                             (uint64_t)(kr->conv.k_h * kr->conv.k_w);
            else if (n == 0 && kr->kind == OI__SY_K_MATMUL)
                kr->flops += 2u * (uint64_t)kr->numel * (uint64_t)oi__sy_slot(s, pn->inputs[0])->shape[1];
            else if (kr->kind == OI__SY_K_MATMUL_ANY)
                kr->flops += 2u * (uint64_t)kr->numel *
                             (uint64_t)oi__sy_mm_geom_of(oi__sy_slot(s, pn->inputs[0]), oi__sy_slot(s, pn->inputs[1]),
                                                         oi__sy_slot(s, pn->out), pn).k;
            else if (kr->kind == OI__SY_K_ATTENTION && n == kr->lead) {
                const oi__slot *q = oi__sy_slot(s, pn->inputs[0]), *kk = oi__sy_slot(s, pn->inputs[1]);
                kr->flops += 4u * (uint64_t)oi__sy_numel(q) * (uint64_t)kk->shape[2];
            } else if (kr->kind == OI__SY_K_ATTENTION) {
                /* a view folded into its indexing computes nothing */
            } else if (kr->kind == OI__SY_K_REDUCE || kr->kind == OI__SY_K_SOFTMAX || kr->kind == OI__SY_K_ALL_FINITE)
                kr->flops += (uint64_t)oi__sy_numel(oi__sy_slot(s, pn->inputs[0])) * (kr->kind == OI__SY_K_SOFTMAX ? 4u : 1u);
            else
                kr->flops += (uint64_t)kr->numel;
        }
    }
}

/* ------------------------------------------------------------------ */
/* Threads and pre-packed weights                                      */
/* ------------------------------------------------------------------ */
/* Task sizes: a task should be worth waking a thread for (tens of
 * microseconds), and there should be several per thread so that a delayed
 * thread does not hold the others up. Row blocks of matmuls are multiples
 * of 12 (every ISA's mr divides it), column blocks of 32 (every nr does),
 * so tasks never split a register tile. */
#define OI__SY_TASK_ELEMENTS 16384 /* elements per task of a row or elementwise kernel */
#define OI__SY_TASK_MACS (1 << 22)  /* multiply-adds per matmul task, about */
/* Rows of a matmul task: at least 48, so that each B panel (kc x nr, in
 * L1) serves 4+ register tiles; at most OI__SY_TASK_ROWS_MAX (A's packed
 * block of a task, kc x rows floats, is on the stack). */
#define OI__SY_TASK_ROWS_MIN 48
#define OI__SY_TASK_ROWS_MAX 144

static int64_t oi__sy_ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }

/* B of a packed matmul kernel is packed at open when it is a model tensor
 * (a weight, or an entry of a prefix table) that nothing else in the
 * kernel reads. */
static bool oi__sy_can_prepack(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    int b = k->nodes[0]->inputs[1];
    oi__sy_home home = s->buffers[b].home;
    if (k->kind != OI__SY_K_MATMUL || !k->packed || (home != OI__SY_MODEL && home != OI__SY_PREFIX))
        return false;
    for (int n = 0; n < (int)arrlen(k->nodes); n++)
        for (int i = 0; i < (int)arrlen(k->nodes[n]->inputs); i++)
            if (k->nodes[n]->inputs[i] == b && (n > 0 || i != 1))
                return false;
    return oi__sy_slot(s, b)->dtype == OI_DTYPE_F32;
}

/* Tasks of a matmul. B packed at open: as few row blocks as
 * OI__SY_TASK_ROWS_MAX allows, of equal length, so that every B panel
 * serves as many register tiles as it can and no task is a sliver of
 * rows; then the columns split until a task holds about OI__SY_TASK_MACS:
 * tasks of equal size, enough of them to keep every thread busy to the end
 * of the job. Else blocks of rows over all the columns. */
static void oi__sy_split_matmul(oi__sy_schedule *s, oi__sy_kernel *k) {
    const oi__slot *a = oi__sy_slot(s, k->nodes[0]->inputs[0]), *c = oi__sy_slot(s, k->nodes[0]->out);
    int64_t m = c->shape[0], n = c->shape[1], kk = a->shape[1];
    k->b_prepacked = oi__sy_can_prepack(s, k);
    k->task_cols = n;
    if (k->b_prepacked) {
        int64_t row_blocks = oi__sy_ceil_div(m, OI__SY_TASK_ROWS_MAX);
        k->task_rows = oi__sy_ceil_div(oi__sy_ceil_div(m, row_blocks), 12) * 12;
        int64_t cols = OI__SY_TASK_MACS / (kk * k->task_rows > 0 ? kk * k->task_rows : 1) / 32 * 32;
        cols = cols < 32 ? 32 : cols > s->task_cols ? s->task_cols : cols;
        k->task_cols = cols < n ? cols : n;
        if (k->nodes[0]->out == k->nodes[0]->inputs[0]) {
            /* C is A (gemm(o, W) >> o): a task reads its rows of A whole
             * before it stores them, so it takes every column, on a tile
             * of at most 64 Ki floats (render.c stores none directly) */
            k->task_cols = n;
            while (k->task_rows > 12 && k->task_rows * n > 65536)
                k->task_rows -= 12;
        }
    } else {
        int64_t rows = OI__SY_TASK_MACS / (kk * n > 0 ? kk * n : 1);
        rows = rows < OI__SY_TASK_ROWS_MIN ? OI__SY_TASK_ROWS_MIN : rows > OI__SY_TASK_ROWS_MAX ? OI__SY_TASK_ROWS_MAX
                                                                                                : rows / 12 * 12;
        k->task_rows = rows > m ? oi__sy_ceil_div(m, 12) * 12 : rows;
    }
    k->tasks = (int)(oi__sy_ceil_div(m, k->task_rows) * oi__sy_ceil_div(n, k->task_cols));
}

/* Rows of a row kernel (norm, softmax, transpose) or elements of an
 * elementwise one per task, so that a task holds OI__SY_TASK_ELEMENTS. */
static void oi__sy_split_rows(oi__sy_kernel *k, int64_t rows, int64_t row_len) {
    int64_t per = OI__SY_TASK_ELEMENTS / (row_len > 0 ? row_len : 1);
    k->tasks = (int)oi__sy_ceil_div(rows, per < 1 ? 1 : per);
    /* the rows dealt out evenly: no last task of a few rows */
    k->task_rows = oi__sy_ceil_div(rows, k->tasks > 0 ? k->tasks : 1);
    k->tasks = (int)oi__sy_ceil_div(rows, k->task_rows > 0 ? k->task_rows : 1);
}

/* matmul_q4: tasks over the weight rows (the result's columns), as
 * quant.c's: when the product is worth the threads (256 Ki multiply-adds),
 * about 16 tasks of a multiple of 16 rows each; each task rounds x into
 * int8 blocks itself (M x K, against M x K x rows of dots). */
static void oi__sy_split_qmatmul(const oi__sy_schedule *s, oi__sy_kernel *k) {
    const oi__pnode *pn = oi__sy_kernel_lead(k);
    const oi__slot *x = oi__sy_slot(s, pn->inputs[0]), *w = oi__sy_slot(s, pn->inputs[1]);
    int64_t kk = x->shape[x->ndim - 1], n = w->shape[0], m = oi__sy_numel(x) / (kk ? kk : 1);
    if ((double)m * (double)n * (double)kk < 262144.0 || n <= 16)
        return;
    k->task_rows = oi__sy_ceil_div(oi__sy_ceil_div(n, 16), 16) * 16;
    k->tasks = (int)oi__sy_ceil_div(n, k->task_rows);
}

/* A depthwise conv of one image: groups per task (each group's planes and
 * its epilogue are contiguous), a task's work counted as two elements per
 * output element (its taps are few; the fused epilogue runs over it too). */
static void oi__sy_split_depthwise(oi__sy_kernel *k) {
    const oi__sy_conv_geom *g = &k->conv;
    if (g->path == OI__SY_CONV_DEPTHWISE && g->batch == 1)
        oi__sy_split_rows(k, g->group, 2 * g->mg * g->out_h * g->out_w);
    /* one image, one group on the micro-kernels: blocks of 12 output
     * channels (one register tile high) per task; each task gathers and
     * packs the patches itself (rows x positions, against the product's
     * 12 x rows x positions per block) */
    if (g->path == OI__SY_CONV_GEMM && g->batch == 1 && g->group == 1)
        oi__sy_split_rows(k, (g->mg + 11) / 12, 12 * g->out_h * g->out_w);
}

static void oi__sy_plan_tasks(oi__sy_schedule *s, oi__sy_kernel *k) {
    const oi__pnode *pn = oi__sy_kernel_lead(k);
    const oi__slot *in = oi__sy_slot(s, pn->inputs[0]), *out = oi__sy_slot(s, pn->out);
    k->tasks = 1;
    int driver = k->kind == OI__SY_K_ELEMENTWISE ? pn->out : pn->inputs[0];
    if (s->buffers[driver].dyn0 || in->dynamic_shape || out->dynamic_shape)
        return; /* a length known at run time only: one task */
    int64_t last = in->ndim ? in->shape[in->ndim - 1] : 1;
    switch (k->kind) {
    case OI__SY_K_MATMUL:
        if (k->packed)
            oi__sy_split_matmul(s, k);
        break;
    case OI__SY_K_ATTENTION:
        k->task_rows = 1;
        k->tasks = (int)(in->shape[0] * in->shape[1]);
        break;
    case OI__SY_K_QMATMUL:
        oi__sy_split_qmatmul(s, k);
        break;
    case OI__SY_K_DEQUANT: { /* rows of the result */
        int64_t row = out->ndim ? out->shape[out->ndim - 1] : 1;
        oi__sy_split_rows(k, oi__sy_numel(out) / (row ? row : 1), row);
        break;
    }
    case OI__SY_K_ATTN_KV: /* one query head a task; its key count arrives at run time (n0) */
        k->task_rows = 1;
        k->tasks = (int)(in->shape[0] * in->shape[1]);
        break;
    case OI__SY_K_SOFTMAX: {
        int64_t inner, len = oi__sy_softmax_lane(in, pn, &inner);
        oi__sy_split_rows(k, oi__sy_numel(in) / (len ? len : 1), len);
        break;
    }
    case OI__SY_K_ROPE:
        oi__sy_split_rows(k, oi__sy_numel(in) / (last ? last : 1), last);
        break;
    case OI__SY_K_NORM: {
        int64_t lane = oi__sy_norm_lane(in, pn);
        oi__sy_split_rows(k, oi__sy_numel(in) / (lane ? lane : 1), lane);
        break;
    }
    case OI__SY_K_TRANSPOSE: {
        int64_t inner = out->ndim ? out->shape[out->ndim - 1] : 1;
        oi__sy_split_rows(k, oi__sy_numel(out) / (inner ? inner : 1), inner);
        break;
    }
    case OI__SY_K_ELEMENTWISE: case OI__SY_K_COPY:
        oi__sy_split_rows(k, oi__sy_numel(out), 1);
        break;
    case OI__SY_K_CONV:
        oi__sy_split_depthwise(k);
        break;
    default: break;
    }
    if (k->tasks < 2) {
        k->tasks = 1;
        k->b_prepacked = false;
    }
}

/* Every packed B in ctx->packed, each entry 64-byte aligned and sized for
 * the widest panel (nr = 32; narrower ISAs pad less). */
/* The gemm's tiles: gemm.c's kc (512 on every ISA) and 128 columns per
 * task, unless the device JSON gives the caches: then kc is what keeps one
 * A micro-panel (12 x kc floats, which the B panels stream past) in half of
 * L1, and a task's columns what keeps its B block (kc x columns) in half of
 * L2, at most 128. */
static void oi__sy_plan_tiles(oi__sy_schedule *s) {
    s->gemm_kc = 512;
    s->task_cols = 128;
    uint64_t l1 = s->options.l1d_bytes, l2 = s->options.l2_bytes;
    if (l1) {
        int64_t kc = (int64_t)(l1 / 2 / (12 * sizeof(float))) / 16 * 16;
        s->gemm_kc = kc < 64 ? 64 : kc > 512 ? 512 : kc;
    }
    if (l2) {
        int64_t cols = (int64_t)(l2 / 2 / ((uint64_t)s->gemm_kc * sizeof(float))) / 32 * 32;
        s->task_cols = cols < 32 ? 32 : cols > 128 ? 128 : cols;
    }
    s->tiles_from_device = l1 || l2;
}

/* A matmul of at most 4 rows (a streaming model's one token or frame)
 * whose B is a model tensor: a 12 x 32 register tile would be mostly
 * padding, so, as gemm.c's skinny path, dot products of each row of A with
 * each column of B, which is transposed once at open (rows of B^T
 * contiguous along k) for gemm.c's dot kernels. */
static bool oi__sy_plan_skinny(oi__sy_schedule *s, oi__sy_kernel *k) {
    if (k->kind != OI__SY_K_MATMUL || !k->packed || k->nodes[0]->ir->op != OI_OP_matmul)
        return false;
    const oi__slot *a = oi__sy_slot(s, k->nodes[0]->inputs[0]), *c = oi__sy_slot(s, k->nodes[0]->out);
    if (a->dynamic_shape || c->dynamic_shape || c->shape[0] > 4 || !oi__sy_can_prepack(s, k))
        return false;
    oi__sy_buffer *b = &s->buffers[k->nodes[0]->inputs[1]];
    k->b_transposed = true;
    k->tasks = 1;
    if (b->transposed)
        return true;
    const oi__slot *sl = oi__sy_slot(s, b->slot);
    b->transposed = true;
    b->transposed_bytes = ((uint64_t)(sl->shape[0] * sl->shape[1]) * sizeof(float) + 63) / 64 * 64;
    b->transposed_offset = s->packed_bytes;
    s->packed_bytes += b->transposed_bytes * (uint64_t)(b->home == OI__SY_PREFIX ? arrlen(b->tensors) : 1);
    return true;
}

static void oi__sy_plan_packing(oi__sy_schedule *s) {
    oi__sy_plan_tiles(s);
    for (int k = 0; k < (int)arrlen(s->kernels); k++) {
        oi__sy_kernel *kr = &s->kernels[k];
        if (oi__sy_plan_skinny(s, kr))
            continue;
        oi__sy_plan_tasks(s, kr);
        s->threaded |= kr->tasks > 1;
        s->quant |= kr->kind == OI__SY_K_QMATMUL || kr->kind == OI__SY_K_DEQUANT;
        if (oi__sy_kernel_a8(kr)) { /* its own rows of ctx->q8_x: kernels in one job never share them */
            kr->q8_offset = s->q8_elements;
            s->q8_elements += oi__sy_numel(oi__sy_slot(s, kr->nodes[0]->inputs[0]));
        }
        if (!kr->b_prepacked)
            continue;
        oi__sy_buffer *b = &s->buffers[kr->nodes[0]->inputs[1]];
        if (b->prepacked)
            continue;
        const oi__slot *sl = oi__sy_slot(s, b->slot);
        int64_t n_pad = oi__sy_ceil_div(sl->shape[1], 32) * 32;
        b->prepacked = true;
        b->packed_bytes = ((uint64_t)(n_pad * sl->shape[0]) * sizeof(float) + 63) / 64 * 64;
        b->packed_offset = s->packed_bytes;
        s->packed_bytes += b->packed_bytes * (uint64_t)(b->home == OI__SY_PREFIX ? arrlen(b->tensors) : 1);
    }
}

bool oi__sy_slot_stored(const oi__sy_schedule *s, int slot) { return s->buffers[slot].home != OI__SY_NONE; }

/* A split matmul whose B is packed at open and whose C is stored, final
 * and not A: the micro-kernels write C where it is, in the tiles gemm.c's
 * packed path would cut for the ISA and the threads found at run time
 * (oi_gemm_plan), so the kernel takes the pool's thread count and its
 * task count is computed by the step. */
bool oi__sy_matmul_tiles_at_run(const oi__sy_schedule *s, const oi__sy_kernel *k) {
    if (k->kind != OI__SY_K_MATMUL || !k->b_prepacked || k->b_transposed || k->tasks < 2)
        return false;
    const oi__pnode *mm = k->nodes[0];
    for (int m = 1; m < (int)arrlen(k->nodes); m++)
        if (k->nodes[m]->out == mm->out)
            return false; /* a later statement writes C again */
    return oi__sy_slot_stored(s, mm->out) && mm->out != mm->inputs[0];
}

/* ------------------------------------------------------------------ */
/* Jobs: independent kernels in one pool job                           */
/* ------------------------------------------------------------------ */
/* Consecutive split kernels where neither touches bytes the other writes
 * (q, k and v from one h) run as one job of the pool: one wait for the
 * threads instead of one per kernel, and the tasks of all of them even
 * out the threads' loads. */
static bool oi__sy_bytes_overlap(const oi__sy_schedule *s, int x, int y) {
    const oi__sy_buffer *a = &s->buffers[x], *b = &s->buffers[y];
    if (x == y)
        return true;
    bool a_state = a->home == OI__SY_STATE || a->home == OI__SY_TABLE;
    bool b_state = b->home == OI__SY_STATE || b->home == OI__SY_TABLE;
    if (!(a->home == OI__SY_ARENA && b->home == OI__SY_ARENA) && !(a_state && b_state))
        return false; /* different blocks; model data is never written */
    uint64_t a_len = a->bytes * (uint64_t)(a->home == OI__SY_TABLE ? a->table_entries : 1);
    uint64_t b_len = b->bytes * (uint64_t)(b->home == OI__SY_TABLE ? b->table_entries : 1);
    return a->offset < b->offset + b_len && b->offset < a->offset + a_len;
}

/* Does kernel `w` write bytes that kernel `r` touches? */
static bool oi__sy_writes_into(const oi__sy_schedule *s, const oi__sy_kernel *w, const oi__sy_kernel *r) {
    for (int n = 0; n < (int)arrlen(w->nodes); n++) {
        int out = w->nodes[n]->out;
        if (!oi__sy_slot_stored(s, out))
            continue;
        for (int m = 0; m < (int)arrlen(r->nodes); m++) {
            const oi__pnode *pn = r->nodes[m];
            if (oi__sy_slot_stored(s, pn->out) && oi__sy_bytes_overlap(s, out, pn->out))
                return true;
            for (int i = 0; i < (int)arrlen(pn->inputs); i++)
                if (oi__sy_slot_stored(s, pn->inputs[i]) && oi__sy_bytes_overlap(s, out, pn->inputs[i]))
                    return true;
        }
    }
    return false;
}

/* A kernel that may share a job: split, with every length known. */
static bool oi__sy_joinable(const oi__sy_schedule *s, const oi__sy_step *st) {
    if (st->kind != OI__SY_S_KERNEL)
        return false;
    const oi__sy_kernel *k = &s->kernels[st->kernel];
    if (k->tasks < 2)
        return false;
    for (int n = 0; n < (int)arrlen(k->nodes); n++) {
        const oi__pnode *pn = k->nodes[n];
        if (s->buffers[pn->out].dyn0)
            return false;
        for (int i = 0; i < (int)arrlen(pn->inputs); i++)
            if (s->buffers[pn->inputs[i]].dyn0)
                return false;
    }
    return true;
}

static void oi__sy_plan_jobs(oi__sy_schedule *s, oi__sy_step *steps) {
    int first = 0; /* the first step of the current job */
    for (int i = 0; i < (int)arrlen(steps); i++) {
        oi__sy_step *st = &steps[i];
        oi__sy_plan_jobs(s, st->body);
        oi__sy_plan_jobs(s, st->then_steps);
        oi__sy_plan_jobs(s, st->else_steps);
        for (int c = 0; c < (int)arrlen(st->consumers); c++)
            oi__sy_plan_jobs(s, st->consumers[c].body);
        bool join = i > 0 && oi__sy_joinable(s, st) && oi__sy_joinable(s, &steps[i - 1]);
        for (int j = first; join && j < i; j++) {
            const oi__sy_kernel *a = &s->kernels[steps[j].kernel], *b = &s->kernels[st->kernel];
            join = !oi__sy_writes_into(s, a, b) && !oi__sy_writes_into(s, b, a);
        }
        if (join)
            steps[i - 1].joins_next = true;
        else
            first = i;
    }
}

static void oi__sy_steps_free(oi__sy_step *steps) {
    for (int i = 0; i < (int)arrlen(steps); i++)
        oi__sy_step_free_parts(&steps[i]);
    arrfree(steps);
}

void oi__sy_schedule_free(oi__sy_schedule *s) {
    for (int k = 0; k < (int)arrlen(s->kernels); k++) {
        arrfree(s->kernels[k].nodes);
        arrfree(s->kernels[k].index_map);
    }
    arrfree(s->kernels);
    oi__sy_steps_free(s->steps);
    for (int i = 0; i < (int)arrlen(s->buffers); i++)
        arrfree(s->buffers[i].tensors);
    arrfree(s->buffers);
    arrfree(s->shaped);
    for (int i = 0; i < (int)arrlen(s->names); i++)
        oi__free(s->names[i]);
    arrfree(s->names);
    memset(s, 0, sizeof *s);
}

oi_status oi__sy_schedule_build(const oi__plan *plan, const oi__sy_options *options, oi__sy_schedule *out) {
    memset(out, 0, sizeof *out);
    out->plan = plan;
    out->options = *options;
    if (out->options.max_kernel_ops < 1)
        out->options.max_kernel_ops = 1;
    if (!arrsetlen(out->buffers, arrlen(plan->slots)))
        return OI_ERROR_OUT_OF_MEMORY;
    memset(out->buffers, 0, sizeof *out->buffers * arrlenu(plan->slots));
    for (int i = 0; i < (int)arrlen(plan->slots); i++) {
        out->buffers[i].slot = i;
        out->buffers[i].consumer = -1;
    }
    oi__sy_builder b = {out, 0, false, NULL, NULL};
    const oi__pblock *entry = &plan->blocks[plan->entry];
    oi_status st = oi__sy_build_block(&b, entry->nodes, (int)arrlen(entry->nodes), &out->steps);
    arrfree(b.copy_back); /* a yield without its await: refused by validation */
    arrfree(b.loops);
    if (st == OI_OK)
        st = oi__sy_fold_views(out, out->steps);
    if (st == OI_OK)
        st = oi__sy_drop_folded(out);
    if (st == OI_OK)
        st = oi__sy_check_dynamic_views(out);
    if (st == OI_OK) {
        oi__sy_mark_written(out, out->steps);
        st = oi__sy_assign_homes(out);
    }
    if (st == OI_OK)
        st = oi__sy_infer_dynamic(out);
    if (st == OI_OK)
        st = oi__sy_name_slots(out);
    if (st == OI_OK)
        st = oi__sy_liveness(out);
    if (st == OI_OK)
        st = oi__sy_plan_arena(out);
    if (st == OI_OK) {
        oi__sy_estimate(out);
        oi__sy_plan_packing(out);
        if (!out->options.parallel_rows) /* the C target's pool */
            oi__sy_plan_jobs(out, out->steps);
    }
    if (st != OI_OK) {
        if (st == OI_ERROR_OUT_OF_MEMORY && !*oi_last_error())
            oi__fail(st, "synthesizer: out of memory");
        oi__sy_schedule_free(out);
    }
    return st;
}
