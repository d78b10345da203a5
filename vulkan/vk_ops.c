/* vk_ops.c - stage 5: from an op (table row, parameters, tensor layouts)
 * to dispatches. One planner serves supports_op (layouts from signatures)
 * and run_op (the real tensors), so the backend never claims an op it
 * would then run differently. Parameters are read with the CPU kernels'
 * own readers (kernels/kernels.c, same translation unit), so defaults and
 * aliases cannot drift apart. */

/* ---- push constants: the same names as the GLSL push blocks ---- */
#define OI__VK_ELTWISE_DIMS 5
typedef struct oi__vk_eltwise_push {
    uint32_t n, ndim;
    uint32_t shape[OI__VK_ELTWISE_DIMS];
    uint32_t a_strides[OI__VK_ELTWISE_DIMS], b_strides[OI__VK_ELTWISE_DIMS], c_strides[OI__VK_ELTWISE_DIMS];
    uint32_t a_offset, b_offset, c_offset, d_offset;
    uint32_t p0, p1, p2;
} oi__vk_eltwise_push;

#define OI__VK_REDUCE_DIMS 5
typedef struct oi__vk_reduce_push {
    uint32_t n_out, n_red;
    uint32_t k_ndim, k_shape[OI__VK_REDUCE_DIMS], k_strides[OI__VK_REDUCE_DIMS];
    uint32_t r_ndim, r_shape[OI__VK_REDUCE_DIMS], r_strides[OI__VK_REDUCE_DIMS];
    uint32_t a_offset, d_offset;
    uint32_t select_first;
    uint32_t vec_rows;
} oi__vk_reduce_push;

typedef struct oi__vk_rownorm_push {
    uint32_t n_out, n_red;
    uint32_t k_ndim, k_shape[4], k_strides[4];
    uint32_t r_ndim, r_shape[3], r_strides[3];
    uint32_t s_strides[3], b_strides[3];
    uint32_t a_offset, s_offset, b_offset, d_offset;
    uint32_t has_bias;
    float eps;
    uint32_t vec_rows;
} oi__vk_rownorm_push;

#define OI__VK_MATMUL_BATCH_DIMS 3
typedef struct oi__vk_matmul_push {
    uint32_t M, N, K;
    uint32_t batch_ndim;
    uint32_t batch_shape[OI__VK_MATMUL_BATCH_DIMS];
    uint32_t a_batch_strides[OI__VK_MATMUL_BATCH_DIMS], b_batch_strides[OI__VK_MATMUL_BATCH_DIMS];
    uint32_t a_stride_m, a_stride_k, b_stride_k, b_stride_n;
    uint32_t a_offset, b_offset, d_offset;
    uint32_t k_slice; /* matmul.comp: 0, or K per slice of a split product (workgroup z = slice) */
} oi__vk_matmul_push;

/* Every push block fits the 128 bytes every device offers. */
typedef char oi__vk_eltwise_push_fits[sizeof(oi__vk_eltwise_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_reduce_push_fits[sizeof(oi__vk_reduce_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_matmul_push_fits[sizeof(oi__vk_matmul_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
typedef char oi__vk_rownorm_push_fits[sizeof(oi__vk_rownorm_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];

/* ---- tensor layouts ---- */
typedef struct oi__vk_view {
    oi_dtype dtype;
    int ndim;
    int64_t shape[OI_MAX_DIMS];
    int64_t strides[OI_MAX_DIMS]; /* in elements */
    int64_t offset;               /* in elements */
    uint64_t storage_bytes;
} oi__vk_view;

static void oi__vk_view_of_tensor(const oi__tensor *t, oi__vk_view *v) {
    memset(v, 0, sizeof *v);
    v->dtype = t->dtype;
    v->ndim = t->ndim;
    memcpy(v->shape, t->shape, sizeof v->shape);
    memcpy(v->strides, t->strides, sizeof v->strides);
    v->offset = t->offset;
    v->storage_bytes = t->storage ? t->storage->nbytes : 0;
}

static void oi__vk_view_of_sig(const oi__op_sig *s, oi__vk_view *v) {
    memset(v, 0, sizeof *v);
    v->dtype = s->dtype;
    v->ndim = s->ndim;
    memcpy(v->shape, s->shape, sizeof v->shape);
    oi__contiguous_strides(s->ndim, v->shape, v->strides);
    v->storage_bytes = oi_dtype_nbytes(s->dtype, (uint64_t)oi__shape_numel(s->ndim, s->shape));
}

/* A CPU device (lavapipe) runs a workgroup's invocations as vector lanes and
 * a barrier as a switch between them: its matmuls skip shared memory
 * (vk_matmul_tiling.h). */
static bool oi__vk_cpu_device(const oi__vk_context *ctx) {
    return ctx->caps.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
}

static bool oi__vk_view_contiguous(const oi__vk_view *v) {
    int64_t expect[OI_MAX_DIMS];
    oi__contiguous_strides(v->ndim, v->shape, expect);
    for (int i = 0; i < v->ndim; i++)
        if (v->shape[i] != 1 && v->strides[i] != expect[i])
            return false;
    return true;
}

/* ---- plans ---- */
/* What a binding of a stage is bound to: input i is OI__VK_ROLE_IN0 + i. */
typedef enum oi__vk_role {
    OI__VK_ROLE_UNUSED, OI__VK_ROLE_OUT, OI__VK_ROLE_TEMP, OI__VK_ROLE_IN0, OI__VK_ROLE_IN1, OI__VK_ROLE_IN2,
    OI__VK_ROLE_COUNT = OI__VK_ROLE_IN0 + OI__VK_MAX_INPUTS
} oi__vk_role;

typedef struct oi__vk_stage {
    oi__vk_pipeline_key pipeline;
    uint32_t push[OI__VK_PUSH_WORDS];
    uint32_t push_words;
    uint32_t groups[3];
    oi__vk_role roles[OI__VK_BINDINGS]; /* what a, b, c, d (written), e..h bind */
} oi__vk_stage;

typedef struct oi__vk_plan {
    oi__vk_stage stages[OI__VK_MAX_STAGES];
    int n_stages;
    uint64_t temp_bytes; /* scratch shared by the stages (0: none) */
    bool empty;          /* no output elements: nothing to run */
} oi__vk_plan;

static oi_status oi__vk_unsupported(const char *fmt, ...) OI__PRINTF(1, 2);
static oi_status oi__vk_unsupported(const char *fmt, ...) {
    char text[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    return oi__fail(OI_ERROR_UNSUPPORTED, "vulkan: %s", text);
}

/* The dtypes the shaders handle: 8/16/32-bit, not packed, not f8. */
static bool oi__vk_dtype_ok(oi_dtype t) {
    switch (t) {
    case OI_DTYPE_F32: case OI_DTYPE_F16: case OI_DTYPE_BF16:
    case OI_DTYPE_I8: case OI_DTYPE_I16: case OI_DTYPE_I32:
    case OI_DTYPE_U8: case OI_DTYPE_U16: case OI_DTYPE_U32: case OI_DTYPE_BOOL:
        return true;
    default:
        return false;
    }
}

/* 64-bit dtypes: data movement takes them on every device (as word
 * pairs); arithmetic on them needs shaderInt64 and shaderFloat64
 * (eltwise_wide.comp, caps.has_wide). */
static bool oi__vk_dtype_wide(oi_dtype t) { return t == OI_DTYPE_I64 || t == OI_DTYPE_U64 || t == OI_DTYPE_F64; }

/* Invocations of a shader that writes one 32-bit word of `n` elements of
 * `out` each (1, 2 or 4 elements), or one 64-bit element each. */
static uint64_t oi__vk_out_invocations(const oi__vk_view *out, int64_t n) {
    if (oi__vk_dtype_wide(out->dtype))
        return (uint64_t)n;
    unsigned per = 32u / oi_dtype_bits(out->dtype);
    return ((uint64_t)out->offset + (uint64_t)n + per - 1) / per - (uint64_t)out->offset / per;
}

static void oi__vk_set_push(oi__vk_stage *st, const void *push, size_t bytes) {
    memset(st->push, 0, sizeof st->push);
    memcpy(st->push, push, bytes);
    st->push_words = (uint32_t)((bytes + 3) / 4);
}

static void oi__vk_set_pipeline(oi__vk_stage *st, oi__vk_family family, oi_op op, oi_dtype a, oi_dtype b, oi_dtype c,
                                oi_dtype d) {
    memset(&st->pipeline, 0, sizeof st->pipeline);
    st->pipeline.shader = (uint32_t)oi__vk_shader_for(family, a);
    st->pipeline.spec[0] = (uint32_t)op;
    st->pipeline.spec[1] = (uint32_t)a;
    st->pipeline.spec[2] = (uint32_t)b;
    st->pipeline.spec[3] = (uint32_t)c;
    st->pipeline.spec[4] = (uint32_t)d;
}

/* Splits n workgroups over x and y (x is limited to 65535 on many GPUs). */
static oi_status oi__vk_groups(const oi__vk_context *ctx, uint64_t n, uint32_t z, uint32_t groups[3]) {
    const uint32_t *max = ctx->caps.props.limits.maxComputeWorkGroupCount;
    uint64_t x_max = max[0] < 65535u ? max[0] : 65535u;
    uint64_t x = n < x_max ? n : x_max;
    uint64_t y = x ? (n + x - 1) / x : 0;
    if (y > max[1] || z > max[2])
        return oi__vk_unsupported("%llu workgroups exceed the device's dispatch limits", (unsigned long long)n);
    groups[0] = (uint32_t)(x ? x : 1);
    groups[1] = (uint32_t)(y ? y : 1);
    groups[2] = z;
    return OI_OK;
}

/* Drops size-1 dims and merges neighbours that every operand walks as one
 * (stride[i] == stride[i+1] * shape[i+1]); returns the new rank (>= 1). */
static int oi__vk_merge_dims(int ndim, int64_t *shape, int n_ops, int64_t (*strides)[OI_MAX_DIMS]) {
    int kept = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1)
            continue;
        bool merge = kept > 0;
        for (int o = 0; o < n_ops && merge; o++)
            merge = strides[o][kept - 1] == strides[o][d] * shape[d];
        if (merge) {
            shape[kept - 1] *= shape[d];
            for (int o = 0; o < n_ops; o++)
                strides[o][kept - 1] = strides[o][d];
            continue;
        }
        shape[kept] = shape[d];
        for (int o = 0; o < n_ops; o++)
            strides[o][kept] = strides[o][d];
        kept++;
    }
    if (kept == 0) {
        shape[0] = 1;
        for (int o = 0; o < n_ops; o++)
            strides[o][0] = 0;
        kept = 1;
    }
    return kept;
}

/* Strides of `v` walked along `ndim` output dims (numpy broadcasting). */
static void oi__vk_broadcast_strides(const oi__vk_view *v, int ndim, const int64_t *out_shape, int64_t *strides) {
    int lead = ndim - v->ndim;
    for (int d = 0; d < ndim; d++) {
        int vd = d - lead;
        strides[d] = (vd < 0 || (v->shape[vd] == 1 && out_shape[d] != 1)) ? 0 : v->strides[vd];
    }
}

/* ---- parameters ---- */
static uint32_t oi__vk_f32_bits(double v) {
    float f = (float)v;
    if (v != v)
        f = NAN;
    else if (v > (double)FLT_MAX)
        f = INFINITY;
    else if (v < -(double)FLT_MAX)
        f = -INFINITY;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

static void oi__vk_int_range(oi_dtype t, int64_t *lo, int64_t *hi) {
    unsigned bits = oi_dtype_bits(t);
    if (t == OI_DTYPE_BOOL) {
        *lo = 0;
        *hi = 1;
    } else if (oi__dtype_is_signed(t)) {
        *lo = -((int64_t)1 << (bits - 1));
        *hi = ((int64_t)1 << (bits - 1)) - 1;
    } else {
        *lo = 0;
        *hi = (int64_t)(((uint64_t)1 << bits) - 1u);
    }
}

/* Clamp bounds for integer data that the shader can compare in 32 bits:
 * a bound past the side it guards is no bound; past the other side the
 * CPU would store a wrapped bound, which we leave to the CPU. */
static oi_status oi__vk_int_bounds(oi_dtype t, int64_t lo, int64_t hi, uint32_t *p_lo, uint32_t *p_hi) {
    int64_t min, max;
    oi__vk_int_range(t, &min, &max);
    if (lo > max || hi < min)
        return oi__vk_unsupported("clamp bounds [%lld, %lld] lie outside the %s range", (long long)lo, (long long)hi,
                                  oi_dtype_name(t));
    *p_lo = (uint32_t)(lo < min ? min : lo);
    *p_hi = (uint32_t)(hi > max ? max : hi);
    return OI_OK;
}

/* The bits the CPU kernel stores for one element: the exact encoding of a
 * fill value or a replacement, whatever the dtype. */
static oi_status oi__vk_cpu_element_bits(oi_op op, const oi__attr *attrs, size_t n_attrs, oi_dtype dtype, uint64_t in_bits,
                                         uint64_t *out_bits) {
    int64_t one = 1;
    oi__tensor *in = oi__tensor_new(dtype, 1, &one);
    oi__tensor *out = oi__tensor_new(dtype, 1, &one);
    oi_status s = (in && out) ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    if (s == OI_OK) {
        oi__store_bits(dtype, oi__tensor_data(in), 0, in_bits);
        const oi__tensor *inputs[1];
        inputs[0] = in;
        s = oi__op_run_cpu(op, attrs, n_attrs, inputs, 1, out);
    }
    if (s == OI_OK)
        *out_bits = oi__load_bits(dtype, oi__tensor_data(out), 0);
    oi__tensor_free(in);
    oi__tensor_free(out);
    return s;
}

/* fill's value, or the replacement fill_nan_like stores for a NaN, as the
 * CPU encodes it in dtype t. */
static oi_status oi__vk_fill_bits(const oi__kernel_args *k, oi_dtype t, uint64_t *bits) {
    uint64_t nan_bits = k->op == OI_OP_fill_nan_like ? oi__f64_to_float_bits(t, (double)NAN) : 0;
    return oi__vk_cpu_element_bits(k->op, k->attrs, k->n_attrs, t, nan_bits, bits);
}

/* cast's rounding mode as the shaders number it (0 trunc, 1 floor, 2 ceil,
 * 3 nearest); a float -> integer cast without saturation stays on the CPU. */
static oi_status oi__vk_cast_mode(const oi__kernel_args *k, oi_dtype from, uint32_t *mode) {
    oi_dtype to = oi__op_attr_dtype(oi__op_attr_for(k, "to"));
    const oi__attr *a = oi__op_attr_for(k, "rounding_mode");
    *mode = 0;
    if (a && strcmp(a->s, "floor") == 0)
        *mode = 1;
    else if (a && strcmp(a->s, "ceil") == 0)
        *mode = 2;
    else if (a && strcmp(a->s, "nearest") == 0)
        *mode = 3;
    if (oi__dtype_is_float(from) && !oi__dtype_is_float(to) && !oi__op_param_bool(k, "saturate"))
        return oi__vk_unsupported("cast with saturate=false from a float wraps modulo 2^64 (CPU only)");
    return OI_OK;
}

/* p0..p2 of the eltwise shader for this op (see eltwise.comp). */
static oi_status oi__vk_eltwise_params(const oi__kernel_args *k, oi_dtype t, uint32_t *p) {
    bool is_float = oi__dtype_is_float(t), is_signed = oi__dtype_is_signed(t);
    p[0] = p[1] = p[2] = 0;
    switch (k->op) {
    case OI_OP_div: case OI_OP_floor_div: case OI_OP_recip:
        if (is_float) {
            p[0] = oi__vk_f32_bits(oi__op_param_f64(k, "div_by_zero_mask"));
        } else {
            int64_t mask = oi__op_attr_for(k, "div_by_zero_mask") ? oi__op_param_i64(k, "div_by_zero_mask") : 0;
            p[0] = (uint32_t)(is_signed || mask >= 0 ? mask : 0); /* the store wraps it to the width */
        }
        return OI_OK;
    case OI_OP_relu:
        if (is_float) {
            p[0] = oi__vk_f32_bits(oi__op_param_f64(k, "negative_slope"));
            p[1] = oi__vk_f32_bits(oi__op_param_f64(k, "clamp_min"));
            p[2] = oi__vk_f32_bits(oi__op_param_f64(k, "clamp_max"));
            return OI_OK;
        }
        p[0] = (uint32_t)oi__op_param_i64(k, "negative_slope");
        return oi__vk_int_bounds(t, oi__op_param_i64(k, "clamp_min"), oi__op_param_i64(k, "clamp_max"), &p[1], &p[2]);
    case OI_OP_clamp:
        if (is_float) {
            p[0] = oi__vk_f32_bits(oi__op_param_f64(k, "min"));
            p[1] = oi__vk_f32_bits(oi__op_param_f64(k, "max"));
            return OI_OK;
        } else {
            int64_t lo = oi__op_param_i64(k, "min"), hi = oi__op_param_i64(k, "max");
            if (!is_signed) { /* the CPU reads unsigned bounds saturated at 0 */
                lo = lo < 0 ? 0 : lo;
                hi = hi < 0 ? 0 : hi;
            }
            return oi__vk_int_bounds(t, lo, hi, &p[0], &p[1]);
        }
    case OI_OP_hard_sigmoid:
        p[0] = oi__vk_f32_bits(oi__op_param_f64(k, "alpha"));
        p[1] = oi__vk_f32_bits(oi__op_param_f64(k, "beta"));
        return OI_OK;
    case OI_OP_hard_swish: /* alpha 1/6, rounded to f32 as the CPU rounds it */
        p[0] = oi__vk_f32_bits(1.0 / 6.0);
        return OI_OK;
    case OI_OP_shl: case OI_OP_shr: {
        int64_t bits = oi__op_param_i64(k, "bits");
        p[0] = (uint32_t)(bits < 0 ? 0 : bits > 64 ? 64 : bits);
        return OI_OK;
    }
    case OI_OP_gelu: {
        const oi__attr *a = oi__op_attr_for(k, "approximate");
        p[0] = a && a->s && strcmp(a->s, "tanh") == 0;
        return OI_OK;
    }
    case OI_OP_fill: case OI_OP_fill_nan_like: {
        uint64_t bits;
        oi_status s = oi__vk_fill_bits(k, t, &bits);
        p[0] = (uint32_t)bits;
        return s;
    }
    case OI_OP_cast:
        return oi__vk_cast_mode(k, t, &p[0]);
    default:
        return OI_OK;
    }
}

/* Appends a stage of eltwise.comp (family OI__VK_ELTWISE) or
 * eltwise_wide.comp (OI__VK_ELTWISE_WIDE): a, b, c (those there are) and
 * the output bound, every operand's dtype a specialization constant. */
static oi__vk_stage *oi__vk_eltwise_family_stage(oi__vk_family family, const oi__kernel_args *k, const oi__vk_view *in,
                                                 size_t n_in, const oi__vk_view *out, const void *push, size_t bytes,
                                                 oi__vk_plan *plan) {
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    oi_dtype a = in[0].dtype, b = n_in > 1 ? in[1].dtype : a, c = n_in > 2 ? in[2].dtype : a;
    oi__vk_set_pipeline(st, family, k->op, a, b, c, out->dtype);
    oi__vk_set_push(st, push, bytes);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = n_in > 1 ? OI__VK_ROLE_IN1 : OI__VK_ROLE_UNUSED;
    st->roles[2] = n_in > 2 ? OI__VK_ROLE_IN2 : OI__VK_ROLE_UNUSED;
    st->roles[3] = OI__VK_ROLE_OUT;
    return st;
}

/* Appends eltwise.comp's stage for a push block with its walk filled in:
 * the op's parameters, every operand's dtype, a/b/c and the output bound. */
static oi__vk_stage *oi__vk_eltwise_stage(const oi__kernel_args *k, const oi__vk_view *in, size_t n_in,
                                          const oi__vk_view *out, oi__vk_eltwise_push *push, const uint32_t *params,
                                          oi__vk_plan *plan) {
    push->p0 = params[0];
    push->p1 = params[1];
    push->p2 = params[2];
    return oi__vk_eltwise_family_stage(OI__VK_ELTWISE, k, in, n_in, out, push, sizeof *push, plan);
}

/* Workgroups of eltwise.comp's contiguous path: one uvec4 per invocation
 * up to 65535 groups of 256, a grid-stride loop beyond. */
static uint64_t oi__vk_contiguous_groups(int64_t n, oi_dtype out) {
    uint64_t words = (uint64_t)n / (32u / oi_dtype_bits(out));
    uint64_t groups = (words / 4u + 255u) / 256u;
    return groups < 1 ? 1 : groups > 65535u ? 65535u : groups;
}

/* The contiguous path of eltwise.comp (push.ndim = 0): every operand walks
 * the output's one merged dim with stride 1 (no broadcast), all have the
 * output's element width, and every offset and the size are whole uvec4
 * (16 bytes). Then the shader moves 16 bytes at a time
 * without any index arithmetic. Plans the stage and returns true when so. */
static bool oi__vk_eltwise_contiguous(const oi__kernel_args *k, const oi__vk_view *in, size_t n_in,
                                      const oi__vk_view *out, int ndim, int64_t (*merged)[OI_MAX_DIMS], int64_t n,
                                      const uint32_t *params, oi__vk_plan *plan) {
    unsigned bits = oi_dtype_bits(out->dtype), per = 32u / bits;
    if (ndim != 1 || merged[3][0] != 1 || n % (4 * per) || out->offset % (4 * per))
        return false;
    for (size_t i = 0; i < n_in && k->op != OI_OP_fill; i++)
        if (merged[i][0] != 1 || oi_dtype_bits(in[i].dtype) != bits || in[i].offset % (4 * per))
            return false;
    oi__vk_eltwise_push push;
    memset(&push, 0, sizeof push);
    push.n = (uint32_t)(n / per); /* words */
    push.ndim = 0;
    push.a_offset = (uint32_t)(in[0].offset / per);
    push.b_offset = n_in > 1 ? (uint32_t)(in[1].offset / per) : 0;
    push.c_offset = n_in > 2 ? (uint32_t)(in[2].offset / per) : 0;
    push.d_offset = (uint32_t)(out->offset / per);
    oi__vk_eltwise_stage(k, in, n_in, out, &push, params, plan);
    return true;
}

/* The walk of a strided eltwise dispatch: n, dims, every operand's strides
 * and offsets (all of a push block but the op's parameters). */
static void oi__vk_eltwise_walk(oi__vk_eltwise_push *push, const oi__vk_view *in, size_t n_in, const oi__vk_view *out,
                                const int64_t *shape, int ndim, int64_t (*merged)[OI_MAX_DIMS]) {
    memset(push, 0, sizeof *push);
    push->n = (uint32_t)oi__shape_numel(out->ndim, out->shape);
    push->ndim = (uint32_t)ndim;
    for (int d = 0; d < ndim; d++) {
        push->shape[d] = (uint32_t)shape[d];
        push->a_strides[d] = (uint32_t)merged[0][d];
        push->b_strides[d] = (uint32_t)merged[1][d];
        push->c_strides[d] = (uint32_t)merged[2][d];
    }
    push->a_offset = (uint32_t)in[0].offset;
    push->b_offset = n_in > 1 ? (uint32_t)in[1].offset : 0;
    push->c_offset = n_in > 2 ? (uint32_t)in[2].offset : 0;
    push->d_offset = (uint32_t)out->offset;
}

/* ---- elementwise with a 64-bit operand or output: eltwise_wide.comp ---- */
typedef struct oi__vk_eltwise_wide_push {
    uint32_t n, ndim;
    uint32_t shape[OI__VK_ELTWISE_DIMS];
    uint32_t a_strides[OI__VK_ELTWISE_DIMS], b_strides[OI__VK_ELTWISE_DIMS], c_strides[OI__VK_ELTWISE_DIMS];
    uint32_t a_offset, b_offset, c_offset, d_offset;
    uint32_t p[6]; /* three 64-bit parameters, low word first */
} oi__vk_eltwise_wide_push;
typedef char oi__vk_eltwise_wide_push_fits[sizeof(oi__vk_eltwise_wide_push) <= OI__VK_PUSH_WORDS * 4 ? 1 : -1];
/* Its walk is the narrow block's, word for word (oi__vk_eltwise_walk fills both). */
typedef char oi__vk_eltwise_wide_push_walk[offsetof(oi__vk_eltwise_wide_push, p) == offsetof(oi__vk_eltwise_push, p0) ? 1 : -1];

static bool oi__vk_any_wide(const oi__vk_view *in, size_t n_in, const oi__vk_view *out) {
    for (size_t i = 0; i < n_in; i++)
        if (oi__vk_dtype_wide(in[i].dtype))
            return true;
    return oi__vk_dtype_wide(out->dtype);
}

static uint64_t oi__vk_f64_bits(double v) {
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits;
}

/* The parameters of eltwise_wide.comp, 64 bits each, read as the CPU's
 * oi__ew_read_params reads them for the input dtype t. */
static oi_status oi__vk_eltwise_wide_params(const oi__kernel_args *k, oi_dtype t, uint64_t *p) {
    bool is_float = oi__dtype_is_float(t), is_signed = oi__dtype_is_signed(t);
    p[0] = p[1] = p[2] = 0;
#define OI__VK_F64_CPU(name) case OI_OP_##name:
    switch (k->op) {
    OI_VULKAN_F64_ON_CPU(OI__VK_F64_CPU)
        return oi__vk_unsupported("%s on %s: GLSL has no double transcendental functions (CPU only)",
                                  oi_op_name(k->op), oi_dtype_name(t));
#undef OI__VK_F64_CPU
    case OI_OP_div: case OI_OP_floor_div: case OI_OP_recip: {
        int64_t mask = oi__op_attr_for(k, "div_by_zero_mask") ? oi__op_param_i64(k, "div_by_zero_mask") : 0;
        p[0] = is_float ? oi__vk_f64_bits(oi__op_param_f64(k, "div_by_zero_mask"))
                        : (uint64_t)(is_signed || mask >= 0 ? mask : 0);
        return OI_OK;
    }
    case OI_OP_relu:
        if (is_float) {
            p[0] = oi__vk_f64_bits(oi__op_param_f64(k, "negative_slope"));
            p[1] = oi__vk_f64_bits(oi__op_param_f64(k, "clamp_min"));
            p[2] = oi__vk_f64_bits(oi__op_param_f64(k, "clamp_max"));
        } else {
            p[0] = (uint64_t)oi__op_param_i64(k, "negative_slope");
            p[1] = (uint64_t)oi__op_param_i64(k, "clamp_min");
            p[2] = (uint64_t)oi__op_param_i64(k, "clamp_max");
        }
        return OI_OK;
    case OI_OP_clamp:
        if (is_float) {
            p[0] = oi__vk_f64_bits(oi__op_param_f64(k, "min"));
            p[1] = oi__vk_f64_bits(oi__op_param_f64(k, "max"));
        } else {
            int64_t lo = oi__op_param_i64(k, "min"), hi = oi__op_param_i64(k, "max");
            bool saturate = !is_signed; /* the CPU reads unsigned bounds saturated at 0 */
            p[0] = (uint64_t)(saturate && lo < 0 ? 0 : lo);
            p[1] = (uint64_t)(saturate && hi < 0 ? 0 : hi);
        }
        return OI_OK;
    case OI_OP_shl: case OI_OP_shr: {
        int64_t bits = oi__op_param_i64(k, "bits");
        p[0] = (uint64_t)(bits < 0 ? 0 : bits > 64 ? 64 : bits);
        return OI_OK;
    }
    case OI_OP_fill: case OI_OP_fill_nan_like:
        return oi__vk_fill_bits(k, t, &p[0]);
    case OI_OP_cast: {
        uint32_t mode;
        oi_status s = oi__vk_cast_mode(k, t, &mode);
        p[0] = mode;
        return s;
    }
    default:
        return OI_OK;
    }
}

/* An eltwise op of 64-bit data: one invocation per output element (64-bit
 * output) or word (narrower output), inputs walked through strides. */
static oi_status oi__vk_plan_eltwise_wide(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                          size_t n_in, const oi__vk_view *out, const int64_t *shape, int ndim,
                                          int64_t (*merged)[OI_MAX_DIMS], oi__vk_plan *plan) {
    if (!ctx->caps.has_wide)
        return oi__vk_unsupported("%s: 64-bit arithmetic needs shaderInt64 and shaderFloat64", oi_op_name(k->op));
    uint64_t params[3];
    oi_status s = oi__vk_eltwise_wide_params(k, in[0].dtype, params);
    if (s != OI_OK)
        return s;
    oi__vk_eltwise_push walk;
    oi__vk_eltwise_walk(&walk, in, n_in, out, shape, ndim, merged);
    oi__vk_eltwise_wide_push push;
    memcpy(&push, &walk, offsetof(oi__vk_eltwise_wide_push, p));
    for (int i = 0; i < 3; i++) {
        push.p[2 * i] = (uint32_t)params[i];
        push.p[2 * i + 1] = (uint32_t)(params[i] >> 32);
    }
    oi__vk_stage *st = oi__vk_eltwise_family_stage(OI__VK_ELTWISE_WIDE, k, in, n_in, out, &push, sizeof push, plan);
    return oi__vk_groups(ctx, (oi__vk_out_invocations(out, walk.n) + 255) / 256, 1, st->groups);
}

/* ---- elementwise: every EW row of the table ---- */
static oi_status oi__vk_plan_eltwise(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                     size_t n_in, const oi__vk_view *out, oi__vk_plan *plan) {
    if (!oi__vk_view_contiguous(out))
        return oi__vk_unsupported("%s: the output is not contiguous", oi_op_name(k->op));
    int64_t shape[OI_MAX_DIMS];
    int64_t strides[4][OI_MAX_DIMS];
    memset(strides, 0, sizeof strides);
    memcpy(shape, out->shape, sizeof shape);
    for (size_t i = 0; i < n_in && k->op != OI_OP_fill; i++)
        oi__vk_broadcast_strides(&in[i], out->ndim, out->shape, strides[i]);
    oi__contiguous_strides(out->ndim, out->shape, strides[3]);
    /* operands 0..2 (absent ones walk nothing) and the output */
    int64_t merged[4][OI_MAX_DIMS];
    memcpy(merged, strides, sizeof merged);
    int ndim = oi__vk_merge_dims(out->ndim, shape, 4, merged);
    if (ndim > OI__VK_ELTWISE_DIMS)
        return oi__vk_unsupported("%s: %d dims after merging (the shader walks %d)", oi_op_name(k->op), ndim,
                                  OI__VK_ELTWISE_DIMS);
    if (oi__vk_any_wide(in, n_in, out))
        return oi__vk_plan_eltwise_wide(ctx, k, in, n_in, out, shape, ndim, merged, plan);
    uint32_t params[3];
    oi_status s = oi__vk_eltwise_params(k, in[0].dtype, params);
    if (s != OI_OK)
        return s;
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    if (oi__vk_eltwise_contiguous(k, in, n_in, out, ndim, merged, n, params, plan))
        return oi__vk_groups(ctx, oi__vk_contiguous_groups(n, out->dtype), 1, plan->stages[plan->n_stages - 1].groups);
    oi__vk_eltwise_push push;
    oi__vk_eltwise_walk(&push, in, n_in, out, shape, ndim, merged);
    oi__vk_stage *st = oi__vk_eltwise_stage(k, in, n_in, out, &push, params, plan);
    return oi__vk_groups(ctx, (oi__vk_out_invocations(out, n) + 255) / 256, 1, st->groups);
}

/* ---- reductions: sum/mean/prod/max/min, argmax/argmin, is_finite ---- */
/* The reduce shader's walk: kept and reduced dims (merged), element offsets. */
static void oi__vk_reduce_layout(oi__vk_reduce_push *push, int64_t n_out, int64_t n_red, int nk, const int64_t *k_shape,
                                 const int64_t *k_strides, int nr, const int64_t *r_shape, const int64_t *r_strides,
                                 int64_t a_offset, int64_t d_offset) {
    memset(push, 0, sizeof *push);
    push->n_out = (uint32_t)n_out;
    push->n_red = (uint32_t)n_red;
    push->k_ndim = (uint32_t)nk;
    push->r_ndim = (uint32_t)nr;
    for (int d = 0; d < nk; d++) {
        push->k_shape[d] = (uint32_t)k_shape[d];
        push->k_strides[d] = (uint32_t)k_strides[d];
    }
    for (int d = 0; d < nr; d++) {
        push->r_shape[d] = (uint32_t)r_shape[d];
        push->r_strides[d] = (uint32_t)r_strides[d];
    }
    push->a_offset = (uint32_t)a_offset;
    push->d_offset = (uint32_t)d_offset;
}

static oi_status oi__vk_plan_reduce(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                    const oi__vk_view *out, oi__vk_plan *plan) {
    oi_op op = k->op;
    if (!oi__vk_view_contiguous(out))
        return oi__vk_unsupported("%s: the output is not contiguous", oi_op_name(op));
    bool reduced[OI_MAX_DIMS];
    if (op == OI_OP_is_finite) {
        for (int d = 0; d < in->ndim; d++)
            reduced[d] = true;
    } else if (oi__reduce_axes(k, in->ndim, reduced) != OI_OK) {
        return OI_ERROR_VALIDATION;
    }
    int64_t k_shape[OI_MAX_DIMS], r_shape[OI_MAX_DIMS];
    int64_t k_strides[1][OI_MAX_DIMS], r_strides[1][OI_MAX_DIMS];
    int nk = 0, nr = 0;
    for (int d = 0; d < in->ndim; d++) {
        if (reduced[d]) {
            r_shape[nr] = in->shape[d];
            r_strides[0][nr++] = in->strides[d];
        } else {
            k_shape[nk] = in->shape[d];
            k_strides[0][nk++] = in->strides[d];
        }
    }
    int64_t n_out = oi__shape_numel(nk, k_shape), n_red = oi__shape_numel(nr, r_shape);
    if (n_red == 0)
        return oi__vk_unsupported("%s: an empty reduction", oi_op_name(op));
    nk = oi__vk_merge_dims(nk, k_shape, 1, k_strides);
    nr = oi__vk_merge_dims(nr, r_shape, 1, r_strides);
    if (nk > OI__VK_REDUCE_DIMS || nr > OI__VK_REDUCE_DIMS)
        return oi__vk_unsupported("%s: too many kept or reduced dims after merging", oi_op_name(op));
    bool wide = oi__vk_dtype_wide(in->dtype); /* reduce_wide: 64-bit accumulators, as the CPU's */
    if (op == OI_OP_mean_axis && !oi__dtype_is_float(in->dtype) && !wide) {
        /* the CPU sums in 64 bits; 32 bits are exact while the sum cannot overflow */
        if (oi_dtype_bits(in->dtype) >= 32 || n_red > ((int64_t)1 << (31 - oi_dtype_bits(in->dtype))))
            return oi__vk_unsupported("mean_axis: an integer mean of %lld %s values needs 64-bit sums",
                                      (long long)n_red, oi_dtype_name(in->dtype));
    }
    oi__vk_reduce_push push;
    oi__vk_reduce_layout(&push, n_out, n_red, nk, k_shape, k_strides[0], nr, r_shape, r_strides[0], in->offset,
                         out->offset);
    bool is_arg = op == OI_OP_argmax_axis || op == OI_OP_argmin_axis;
    push.select_first = is_arg ? (uint32_t)oi__op_param_bool(k, "select_first") : 1u;
    /* rows of 32-bit values, each from a 16-byte boundary: uvec4 loads */
    bool vec_rows = !is_arg && oi_dtype_bits(in->dtype) == 32 && nr == 1 && r_strides[0][0] == 1 && in->offset % 4 == 0;
    for (int d = 0; d < nk && vec_rows; d++)
        vec_rows = k_strides[0][d] % 4 == 0;
    push.vec_rows = vec_rows;
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    oi__vk_set_pipeline(st, wide ? OI__VK_REDUCE_WIDE : OI__VK_REDUCE, op, in->dtype, in->dtype, in->dtype, out->dtype);
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[3] = OI__VK_ROLE_OUT;
    return oi__vk_groups(ctx, oi__vk_out_invocations(out, n_out), 1, st->groups); /* a workgroup per output word */
}

/* A second stage: the 32-bit scratch (f32, i32 or u32 `from`) cast into
 * the output (contiguous from its offset), the scratch walked through
 * `shape`/`strides` in the output's element order. */
static oi_status oi__vk_plan_cast_temp(const oi__vk_context *ctx, oi_dtype from, const oi__vk_view *out, int ndim,
                                       const int64_t *shape, const int64_t *strides, oi__vk_plan *plan) {
    if (ndim > OI__VK_ELTWISE_DIMS)
        return oi__vk_unsupported("%s: too many dims after merging", oi_dtype_name(out->dtype));
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    plan->temp_bytes = (uint64_t)n * 4u;
    oi__vk_eltwise_push cast;
    memset(&cast, 0, sizeof cast);
    cast.n = (uint32_t)n;
    cast.ndim = (uint32_t)ndim;
    for (int d = 0; d < ndim; d++) {
        cast.shape[d] = (uint32_t)shape[d];
        cast.a_strides[d] = (uint32_t)strides[d];
    }
    cast.d_offset = (uint32_t)out->offset;
    oi__vk_stage *cs = &plan->stages[plan->n_stages++];
    memset(cs, 0, sizeof *cs);
    oi__vk_set_pipeline(cs, OI__VK_ELTWISE, OI_OP_cast, from, from, from, out->dtype);
    oi__vk_set_push(cs, &cast, sizeof cast);
    cs->roles[0] = OI__VK_ROLE_TEMP;
    cs->roles[3] = OI__VK_ROLE_OUT;
    return oi__vk_groups(ctx, (oi__vk_out_invocations(out, n) + 255) / 256, 1, cs->groups);
}

/* ... when the scratch holds the output's elements in order. */
static oi_status oi__vk_plan_cast_from_temp(const oi__vk_context *ctx, oi_dtype from, const oi__vk_view *out,
                                           oi__vk_plan *plan) {
    int64_t n = oi__shape_numel(out->ndim, out->shape), one = 1;
    return oi__vk_plan_cast_temp(ctx, from, out, 1, &n, &one, plan);
}

/* ---- softmax, log_softmax, layer_norm, rms_norm: a workgroup per row ---- */

/* Softmax along an inner axis: rownorm.comp wrote f32 rows [prefix...,
 * suffix..., A] into the scratch; one strided cast puts them back in the
 * output's order [prefix..., A, suffix...] and dtype. */
static oi_status oi__vk_plan_rows_to_axis(const oi__vk_context *ctx, int axis, const oi__vk_view *out,
                                          oi__vk_plan *plan) {
    int64_t shape[OI_MAX_DIMS], strides[1][OI_MAX_DIMS], step = out->shape[axis];
    for (int d = out->ndim - 1; d > axis; d--) { /* the scratch's strides, walked in the output's order */
        strides[0][d] = step;
        step *= out->shape[d];
    }
    strides[0][axis] = 1;
    for (int d = axis - 1; d >= 0; d--) {
        strides[0][d] = step;
        step *= out->shape[d];
    }
    memcpy(shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
    int nd = oi__vk_merge_dims(out->ndim, shape, 1, strides);
    return oi__vk_plan_cast_temp(ctx, OI_DTYPE_F32, out, nd, shape, strides[0], plan);
}

static oi_status oi__vk_plan_rownorm(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                     size_t n_in, const oi__vk_view *out, oi__vk_plan *plan) {
    oi_op op = k->op;
    const oi__vk_view *x = &in[0];
    if (!oi__vk_view_contiguous(out))
        return oi__vk_unsupported("%s: the output is not contiguous", oi_op_name(op));
    int64_t axis = oi__op_param_i64(k, "axis");
    if (axis < 0)
        axis += x->ndim;
    if (axis < 0 || axis >= x->ndim)
        return OI_ERROR_VALIDATION;
    bool is_softmax = op == OI_OP_softmax || op == OI_OP_log_softmax;
    int row_end = x->ndim;
    bool inner = false; /* softmax along an axis with non-trivial ones after it */
    if (is_softmax) {
        for (int d = (int)axis + 1; d < x->ndim; d++)
            inner = inner || x->shape[d] != 1;
        row_end = (int)axis + 1;
    }
    int64_t k_shape[OI_MAX_DIMS], k_strides[1][OI_MAX_DIMS], r_shape[OI_MAX_DIMS], r_strides[3][OI_MAX_DIMS];
    memset(r_strides, 0, sizeof r_strides);
    int nk = 0, nr = 0;
    for (int d = 0; d < x->ndim; d++) { /* one row per element of the other dims: those before, then after */
        if (d >= (int)axis && d < row_end)
            continue;
        k_shape[nk] = x->shape[d];
        k_strides[0][nk++] = x->strides[d];
    }
    for (int d = (int)axis; d < row_end; d++) {
        r_shape[nr] = x->shape[d];
        r_strides[0][nr++] = x->strides[d];
    }
    for (size_t i = 1; i < n_in; i++) /* scale, bias: broadcast to x.shape[axis:] */
        oi__vk_broadcast_strides(&in[i], nr, r_shape, r_strides[i]);
    int64_t n_out = oi__shape_numel(nk, k_shape), n_red = oi__shape_numel(nr, r_shape);
    if (n_red == 0)
        return oi__vk_unsupported("%s: empty rows", oi_op_name(op));
    nk = oi__vk_merge_dims(nk, k_shape, 1, k_strides);
    nr = oi__vk_merge_dims(nr, r_shape, 3, r_strides);
    if (nk > 4 || nr > 3)
        return oi__vk_unsupported("%s: too many dims after merging", oi_op_name(op));
    oi__vk_rownorm_push push;
    memset(&push, 0, sizeof push);
    push.n_out = (uint32_t)n_out;
    push.n_red = (uint32_t)n_red;
    push.k_ndim = (uint32_t)nk;
    push.r_ndim = (uint32_t)nr;
    for (int d = 0; d < nk; d++) {
        push.k_shape[d] = (uint32_t)k_shape[d];
        push.k_strides[d] = (uint32_t)k_strides[0][d];
    }
    for (int d = 0; d < nr; d++) {
        push.r_shape[d] = (uint32_t)r_shape[d];
        push.r_strides[d] = (uint32_t)r_strides[0][d];
        push.s_strides[d] = (uint32_t)r_strides[1][d];
        push.b_strides[d] = (uint32_t)r_strides[2][d];
    }
    push.a_offset = (uint32_t)x->offset;
    push.s_offset = n_in > 1 ? (uint32_t)in[1].offset : 0;
    push.b_offset = n_in > 2 ? (uint32_t)in[2].offset : 0;
    push.has_bias = n_in > 2;
    push.eps = is_softmax ? 0.0f : (float)oi__op_param_f64(k, "epsilon");
    bool direct = out->dtype == OI_DTYPE_F32 && !inner;
    push.d_offset = direct ? (uint32_t)out->offset : 0;
    /* f32 softmax rows of stride 1, each from a 16-byte boundary: uvec4 access */
    bool vec_rows = is_softmax && x->dtype == OI_DTYPE_F32 && nr == 1 && r_strides[0][0] == 1 && n_red % 4 == 0 &&
                    x->offset % 4 == 0 && push.d_offset % 4 == 0;
    for (int d = 0; d < nk && vec_rows; d++)
        vec_rows = k_strides[0][d] % 4 == 0;
    push.vec_rows = vec_rows;
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    oi__vk_set_pipeline(st, OI__VK_ELTWISE, op, x->dtype, n_in > 1 ? in[1].dtype : x->dtype,
                        n_in > 2 ? in[2].dtype : x->dtype, OI_DTYPE_F32);
    st->pipeline.shader = (uint32_t)OI__VK_SHADER_ROWNORM_F;
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = n_in > 1 ? OI__VK_ROLE_IN1 : OI__VK_ROLE_UNUSED;
    st->roles[2] = n_in > 2 ? OI__VK_ROLE_IN2 : OI__VK_ROLE_UNUSED;
    st->roles[3] = direct ? OI__VK_ROLE_OUT : OI__VK_ROLE_TEMP;
    oi_status s = oi__vk_groups(ctx, (uint64_t)n_out, 1, st->groups);
    if (s != OI_OK || direct)
        return s;
    if (inner)
        return oi__vk_plan_rows_to_axis(ctx, (int)axis, out, plan);
    return oi__vk_plan_cast_from_temp(ctx, OI_DTYPE_F32, out, plan);
}

/* ---- matmul: tiled; 8/16-bit outputs go through a 32-bit scratch + cast ---- */
static oi_dtype oi__vk_matmul_acc_dtype(oi_dtype in) {
    if (oi__dtype_is_float(in))
        return OI_DTYPE_F32;
    return oi__dtype_is_signed(in) ? OI_DTYPE_I32 : OI_DTYPE_U32;
}

/* Whether matmul_coopmat.comp takes this product: f16 inputs on a device
 * with 16x16x16 f16 fragments; A walked along k and B along n (or, for a
 * transposed B, along k) with 16-byte loads, so K, N, the offsets and the
 * strides between those rows are multiples of 8 elements. *b_t: B is
 * stored [N, K]. */
static bool oi__vk_coopmat_fits(const oi__vk_context *ctx, const oi__vk_view *a, const oi__vk_view *b,
                                const oi__vk_view *out, const oi__vk_matmul_push *p, int64_t batches, bool *b_t) {
    if (!ctx->caps.has_coopmat_f16 || a->dtype != OI_DTYPE_F16 || b->dtype != OI_DTYPE_F16 ||
        (out->dtype != OI_DTYPE_F16 && out->dtype != OI_DTYPE_F32))
        return false;
    if (p->K % 8 || p->N % 8 || p->a_stride_k != 1 || p->a_stride_m % 8 || p->a_offset % 8 || p->b_offset % 8 ||
        p->d_offset % 8 || (uint64_t)batches > ctx->caps.props.limits.maxComputeWorkGroupCount[2])
        return false;
    for (uint32_t d = 0; d < p->batch_ndim; d++)
        if (p->a_batch_strides[d] % 8 || p->b_batch_strides[d] % 8)
            return false;
    *b_t = p->b_stride_n != 1;
    return *b_t ? p->b_stride_k == 1 && p->b_stride_n % 8 == 0 : p->b_stride_k % 8 == 0;
}

/* One dispatch of matmul_coopmat.comp: OI__VK_COOPMAT_BM x
 * OI__VK_COOPMAT_BN output blocks, the output (f16 or f32) written
 * directly. */
#ifndef OI__VK_COOPMAT_BM
#define OI__VK_COOPMAT_BM 128u /* = BM and BN of matmul_coopmat.comp */
#endif
#ifndef OI__VK_COOPMAT_BN
#define OI__VK_COOPMAT_BN 256u
#endif
static oi_status oi__vk_plan_matmul_coopmat(const oi__vk_context *ctx, const oi__vk_matmul_push *push, bool b_t,
                                           oi_dtype in, oi_dtype out, int64_t batches, oi__vk_plan *plan) {
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    st->pipeline.shader = (uint32_t)(ctx->caps.coopmat_khr ? OI__VK_SHADER_MATMUL_COOPMAT_KHR : OI__VK_SHADER_MATMUL_COOPMAT);
    st->pipeline.spec[0] = (uint32_t)OI_OP_matmul;
    st->pipeline.spec[1] = (uint32_t)in;
    st->pipeline.spec[2] = b_t ? 1u : 0u; /* B_T */
    st->pipeline.spec[4] = (uint32_t)out;
    oi__vk_set_push(st, push, sizeof *push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = OI__VK_ROLE_IN1;
    st->roles[3] = OI__VK_ROLE_OUT;
    uint64_t gx = (push->N + OI__VK_COOPMAT_BN - 1u) / OI__VK_COOPMAT_BN;
    uint64_t gy = (push->M + OI__VK_COOPMAT_BM - 1u) / OI__VK_COOPMAT_BM;
    const uint32_t *max = ctx->caps.props.limits.maxComputeWorkGroupCount;
    if (gx > max[0] || gy > max[1])
        return oi__vk_unsupported("matmul: %u x %u exceeds the dispatch limits", push->M, push->N);
    st->groups[0] = (uint32_t)(gx ? gx : 1);
    st->groups[1] = (uint32_t)(gy ? gy : 1);
    st->groups[2] = (uint32_t)batches;
    return OI_OK;
}

/* *slices: NULL, or where a product split along K (gemm, whose epilogue
 * sums the slices) says into how many: slice s is written at s * M * N of
 * the output. */
static oi_status oi__vk_plan_matmul(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                    const oi__vk_view *out, uint32_t *slices, oi__vk_plan *plan) {
    const oi__vk_view *a = &in[0], *b = &in[1];
    if (slices)
        *slices = 1; /* the tensor-core kernel is not split */
    if (!oi__vk_view_contiguous(out))
        return oi__vk_unsupported("matmul: the output is not contiguous");
    int64_t M = a->shape[a->ndim - 2], K = a->shape[a->ndim - 1], N = b->shape[b->ndim - 1];
    int batch_nd = out->ndim - 2;
    int64_t shape[OI_MAX_DIMS], strides[3][OI_MAX_DIMS];
    memset(strides, 0, sizeof strides);
    for (int d = 0; d < batch_nd; d++)
        shape[d] = out->shape[d];
    for (int v = 0; v < 2; v++) { /* batch dims of a and b against the output's */
        const oi__vk_view *t = v == 0 ? a : b;
        int lead = batch_nd - (t->ndim - 2);
        for (int d = 0; d < batch_nd; d++) {
            int td = d - lead;
            strides[v][d] = (td < 0 || t->shape[td] == 1) ? 0 : t->strides[td];
        }
    }
    int64_t out_strides[OI_MAX_DIMS];
    oi__contiguous_strides(out->ndim, out->shape, out_strides);
    for (int d = 0; d < batch_nd; d++)
        strides[2][d] = out_strides[d];
    int64_t batches = oi__shape_numel(batch_nd, shape);
    int nb = batch_nd ? oi__vk_merge_dims(batch_nd, shape, 3, strides) : 0;
    if (nb == 1 && shape[0] == 1)
        nb = 0;
    if (nb > OI__VK_MATMUL_BATCH_DIMS)
        return oi__vk_unsupported("matmul: %d batch dims after merging (the shader walks %d)", nb, OI__VK_MATMUL_BATCH_DIMS);
    oi__vk_matmul_push push;
    memset(&push, 0, sizeof push);
    push.M = (uint32_t)M;
    push.N = (uint32_t)N;
    push.K = (uint32_t)K;
    push.batch_ndim = (uint32_t)nb;
    for (int d = 0; d < nb; d++) {
        push.batch_shape[d] = (uint32_t)shape[d];
        push.a_batch_strides[d] = (uint32_t)strides[0][d];
        push.b_batch_strides[d] = (uint32_t)strides[1][d];
    }
    push.a_stride_m = (uint32_t)a->strides[a->ndim - 2];
    push.a_stride_k = (uint32_t)a->strides[a->ndim - 1];
    push.b_stride_k = (uint32_t)b->strides[b->ndim - 2];
    push.b_stride_n = (uint32_t)b->strides[b->ndim - 1];
    push.a_offset = (uint32_t)a->offset;
    push.b_offset = (uint32_t)b->offset;

    push.d_offset = (uint32_t)out->offset; /* the tensor-core kernel writes f16 and f32 outputs in place */
    bool b_t;
    if (oi__vk_coopmat_fits(ctx, a, b, out, &push, batches, &b_t))
        return oi__vk_plan_matmul_coopmat(ctx, &push, b_t, a->dtype, out->dtype, batches, plan);
    oi_dtype acc = oi__vk_matmul_acc_dtype(a->dtype);
    bool direct = oi_dtype_bits(out->dtype) == 32;
    push.d_offset = direct ? (uint32_t)out->offset : 0;
    /* the blocks and slices of K: vk_matmul_tiling.h's rule, the synthesizer's too */
    bool on_cpu = oi__vk_cpu_device(ctx) && oi__dtype_is_float(a->dtype);
    oi__vk_matmul_tiling tiles = on_cpu ? oi__vk_matmul_direct_tiles(M, N)
        : oi__vk_matmul_tiles(oi__dtype_is_float(a->dtype), M, N, push.K, slices && batches == 1 && direct);
    bool big = tiles.block == 128u;
    const uint32_t *max = ctx->caps.props.limits.maxComputeWorkGroupCount;
    uint64_t gx = tiles.gx, gy = tiles.gy;
    if (gx > max[0] || gy > max[1] || (uint64_t)batches > max[2])
        return oi__vk_unsupported("matmul: %lld x %lld x %lld batches exceed the dispatch limits", (long long)M,
                                  (long long)N, (long long)batches);
    if (slices) {
        *slices = tiles.slices;
        push.k_slice = tiles.k_slice;
    }
    oi__vk_stage *st = &plan->stages[plan->n_stages++];
    memset(st, 0, sizeof *st);
    oi__vk_set_pipeline(st, OI__VK_MATMUL, k->op, a->dtype, b->dtype, b->dtype, direct ? out->dtype : acc);
    if (big || on_cpu)
        st->pipeline.shader = (uint32_t)(on_cpu ? OI__VK_SHADER_MATMUL_DIRECT_F : OI__VK_SHADER_MATMUL_BIG_F);
    oi__vk_set_push(st, &push, sizeof push);
    st->roles[0] = OI__VK_ROLE_IN0;
    st->roles[1] = OI__VK_ROLE_IN1;
    st->roles[3] = direct ? OI__VK_ROLE_OUT : OI__VK_ROLE_TEMP;
    st->groups[0] = (uint32_t)(gx ? gx : 1);
    st->groups[1] = (uint32_t)(gy ? gy : 1);
    st->groups[2] = push.k_slice ? *slices : (uint32_t)batches; /* a split product: workgroup z is the slice */
    if (direct)
        return OI_OK;
    return oi__vk_plan_cast_from_temp(ctx, acc, out, plan); /* a wrapping / rounding cast */
}

/* ---- the other op families, one file each ---- */
#include "vk_ops_shape.c"
#include "vk_ops_nn.c"
#include "vk_ops_conv.c"

/* The ops the shaders implement (vk_coverage.h), for every dtype class the
 * op table allows them: a row added to the table stays on the CPU until its
 * shader code exists and is listed there. */
static bool oi__vk_has_shader(oi_op op) {
#define OI__VK_COVERED(name, shader) case OI_OP_##name:
    switch (op) {
    OI_VULKAN_OP_LIST(OI__VK_COVERED)
        return true;
    default:
        return false;
    }
#undef OI__VK_COVERED
}

/* The checks every op of this file's families (eltwise, reduce, rownorm,
 * matmul) shares: no acc= mode, and dtypes the shaders read and write
 * (64-bit ones: elementwise ops and reductions, on a device with
 * caps.has_wide). */
static bool oi__vk_plain_dtype_ok(const oi__vk_context *ctx, const oi__kernel_args *k, oi_dtype t) {
    oi__shape_rule shape = oi__op_defs[k->op].shape;
    if (oi__vk_dtype_wide(t))
        return ctx->caps.has_wide && (shape == OI__SHAPE_EW || shape == OI__SHAPE_REDUCE || shape == OI__SHAPE_ARGREDUCE ||
                                      shape == OI__SHAPE_ALL);
    return oi__vk_dtype_ok(t);
}

static oi_status oi__vk_check_plain_dtypes(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                           size_t n_in, const oi__vk_view *out) {
    oi__op_mode plain;
    plain.acc = OI_DTYPE_INVALID;
    plain.out = OI_DTYPE_INVALID;
    oi_dtype plain_out = oi__op_out_dtype(k, in[0].dtype, &plain);
    /* a float result stored as another float (precision: the shaders convert) */
    bool restored = plain_out != out->dtype && oi__dtype_is_float(plain_out) && oi__dtype_is_float(out->dtype);
    if (oi__op_attr_for(k, "acc") || (plain_out != out->dtype && !restored))
        return oi__vk_unsupported("%s: accumulate mode (acc=)", oi_op_name(k->op));
    for (size_t i = 0; i < n_in; i++)
        if (!oi__vk_plain_dtype_ok(ctx, k, in[i].dtype))
            return oi__vk_unsupported("%s: no shader for %s", oi_op_name(k->op), oi_dtype_name(in[i].dtype));
    bool is_arg = k->op == OI_OP_argmax_axis || k->op == OI_OP_argmin_axis;
    if (!(is_arg ? out->dtype == OI_DTYPE_I64 : oi__vk_plain_dtype_ok(ctx, k, out->dtype)))
        return oi__vk_unsupported("%s: no shader writes %s", oi_op_name(k->op), oi_dtype_name(out->dtype));
    return OI_OK;
}

static oi_status oi__vk_plan_core(const oi__vk_context *ctx, const oi__kernel_args *k, const oi__vk_view *in,
                                  size_t n_in, const oi__vk_view *out, oi__vk_plan *plan) {
    oi_op op = k->op;
    oi_status s = oi__vk_check_plain_dtypes(ctx, k, in, n_in, out);
    if (s != OI_OK)
        return s;
    if (op == OI_OP_softmax || op == OI_OP_log_softmax || op == OI_OP_layer_norm || op == OI_OP_rms_norm)
        return oi__vk_plan_rownorm(ctx, k, in, n_in, out, plan);
    switch (oi__op_defs[op].shape) {
    case OI__SHAPE_EW: return oi__vk_plan_eltwise(ctx, k, in, n_in, out, plan);
    case OI__SHAPE_MATMUL: return oi__vk_plan_matmul(ctx, k, in, out, NULL, plan);
    case OI__SHAPE_REDUCE: case OI__SHAPE_ARGREDUCE: case OI__SHAPE_ALL: return oi__vk_plan_reduce(ctx, k, in, out, plan);
    default: return oi__vk_unsupported("%s: no shader for this op yet", oi_op_name(op));
    }
}

/* Layout limits every shader shares: 32-bit element indices inside one
 * storage-buffer range, no negative strides. */
static oi_status oi__vk_check_limits(const oi__vk_context *ctx, oi_op op, const oi__vk_view *in, size_t n_in,
                                     const oi__vk_view *out) {
    uint64_t limit = ctx->caps.props.limits.maxStorageBufferRange;
    for (size_t i = 0; i <= n_in; i++) {
        const oi__vk_view *v = i < n_in ? &in[i] : out;
        if (v->storage_bytes + 64 > limit || oi__shape_numel(v->ndim, v->shape) >= ((int64_t)1 << 31))
            return oi__vk_unsupported("%s: a tensor of %llu bytes exceeds maxStorageBufferRange (%llu)", oi_op_name(op),
                                      (unsigned long long)v->storage_bytes, (unsigned long long)limit);
        for (int d = 0; d < v->ndim; d++)
            if (v->strides[d] < 0)
                return oi__vk_unsupported("%s: negative strides", oi_op_name(op));
    }
    return OI_OK;
}

/* ---- the planner ---- */
/* Reduced precision (the simulator's f16/bf16 activations next to f32
 * weights, or an f32 result stored in 16 bits): the op's signature with
 * 16-bit floats read as f32. False when no input is a 16-bit float. */
static bool oi__vk_promote_16bit(oi__op_sig *sigs, size_t n_in) {
    bool any = false;
    for (size_t i = 0; i < n_in; i++) {
        if (sigs[i].dtype == OI_DTYPE_F16 || sigs[i].dtype == OI_DTYPE_BF16) {
            sigs[i].dtype = OI_DTYPE_F32;
            any = true;
        }
    }
    return any;
}

/* The ops whose shaders read every operand in its own dtype and convert the
 * f32 result into the output's: they take mixed f16/bf16/f32 operands.
 * copy.comp and gather.comp convert float data (8/16/32-bit floats) too;
 * the other data movement declines (it runs on the CPU then). */
static bool oi__vk_converts(oi_op op, const oi__vk_view *in, size_t n_in) {
    bool float_data = true;
    for (size_t i = 0; i < n_in; i++)
        float_data = float_data && (op == OI_OP_gather && i == 1 ? true : oi__vk_dtype_ok(in[i].dtype) &&
                                                                          oi__dtype_is_float(in[i].dtype));
    switch (op) {
    case OI_OP_reshape: case OI_OP_transpose: case OI_OP_squeeze: case OI_OP_unsqueeze: case OI_OP_slice:
    case OI_OP_split: case OI_OP_expand: case OI_OP_tile: case OI_OP_concat: case OI_OP_gather:
        return float_data;
    case OI_OP_matmul: case OI_OP_gemm: case OI_OP_softmax: case OI_OP_log_softmax:
    case OI_OP_layer_norm: case OI_OP_rms_norm: case OI_OP_conv1d: case OI_OP_conv2d:
        return true;
    case OI_OP_attention: /* q, k and v share one dtype in the shader */
        return n_in >= 3 && in[1].dtype == in[0].dtype && in[2].dtype == in[0].dtype;
    default: break;
    }
    oi__shape_rule shape = oi__op_defs[op].shape;
    return shape == OI__SHAPE_EW || shape == OI__SHAPE_REDUCE || shape == OI__SHAPE_ALL;
}

static oi_status oi__vk_plan_op(const oi__vk_context *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs,
                                const oi__vk_view *in, size_t n_in, const oi__vk_view *out, oi__vk_plan *plan) {
    memset(plan, 0, sizeof *plan);
    if ((int)op < 0 || op >= OI_OP_COUNT || n_in == 0 || n_in > OI__VK_MAX_INPUTS)
        return oi__vk_unsupported("op %d with %zu inputs", (int)op, n_in);
    if (!oi__vk_has_shader(op))
        return oi__vk_unsupported("%s: no shader yet", oi_op_name(op));
    oi__op_sig sigs[OI__VK_MAX_INPUTS], want;
    for (size_t i = 0; i < n_in; i++) {
        memset(&sigs[i], 0, sizeof sigs[i]);
        sigs[i].dtype = in[i].dtype;
        sigs[i].ndim = in[i].ndim;
        memcpy(sigs[i].shape, in[i].shape, sizeof sigs[i].shape);
    }
    bool promoted = false;
    if (oi__op_infer(op, attrs, n_attrs, sigs, n_in, out->dtype, &want) != OI_OK) {
        bool narrow_out = out->dtype == OI_DTYPE_F16 || out->dtype == OI_DTYPE_BF16;
        if (!(oi__vk_promote_16bit(sigs, n_in) || narrow_out) ||
            oi__op_infer(op, attrs, n_attrs, sigs, n_in, OI_DTYPE_F32, &want) != OI_OK)
            return OI_ERROR_VALIDATION; /* the CPU reports it */
        promoted = true;
    }
    bool restored = want.dtype != out->dtype && oi__dtype_is_float(want.dtype) && oi__dtype_is_float(out->dtype);
    if ((promoted || restored) && !oi__vk_converts(op, in, n_in))
        return oi__vk_unsupported("%s: no shader converts between its operands' dtypes (%s in, %s out)", oi_op_name(op),
                                  oi_dtype_name(in[0].dtype), oi_dtype_name(out->dtype));
    if (want.ndim != out->ndim || memcmp(want.shape, out->shape, sizeof(int64_t) * (size_t)out->ndim) != 0)
        return oi__vk_unsupported("%s: the output shape is not the op's", oi_op_name(op));
    oi_status s = oi__vk_check_limits(ctx, op, in, n_in, out);
    if (s != OI_OK)
        return s;
    if (oi__shape_numel(out->ndim, out->shape) == 0) {
        plan->empty = true;
        return OI_OK;
    }
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    /* each family planner answers only for its own ops */
    if (oi__vk_plan_shape_family(ctx, &k, in, n_in, out, plan, &s) || oi__vk_plan_nn_family(ctx, &k, in, n_in, out, plan, &s) ||
        oi__vk_plan_conv_family(ctx, &k, in, n_in, out, plan, &s))
        return s;
    return oi__vk_plan_core(ctx, &k, in, n_in, out, plan);
}

/* ---- the vtable entries ---- */
static bool oi__vk_supports_op(void *opaque, oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__op_sig *inputs,
                               size_t n_inputs, const oi__op_sig *out) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    if (!ctx || ctx->lost || n_inputs == 0 || n_inputs > OI__VK_MAX_INPUTS || !out)
        return false;
    oi__vk_view in[OI__VK_MAX_INPUTS], o;
    for (size_t i = 0; i < n_inputs; i++)
        oi__vk_view_of_sig(&inputs[i], &in[i]);
    oi__vk_view_of_sig(out, &o);
    char saved[512]; /* a "no" is an answer, not an error: keep the caller's message */
    snprintf(saved, sizeof saved, "%s", oi_last_error());
    oi__vk_plan plan;
    bool ok = oi__vk_plan_op(ctx, op, attrs, n_attrs, in, n_inputs, &o, &plan) == OI_OK;
    oi__fail(OI_OK, "%s", saved);
    return ok;
}

/* Runs the op on the CPU inside the backend (a layout the shaders cannot
 * walk): inputs come back to the host, the output's device copy is
 * dropped so the next GPU use uploads the new bytes. */
static oi_status oi__vk_run_on_cpu(oi__vk_context *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs,
                                   const oi__tensor *const *inputs, size_t n_inputs, oi__tensor *out) {
    for (size_t i = 0; i < n_inputs; i++) {
        oi_status s = oi__vk_to_host(ctx, inputs[i]->storage);
        if (s != OI_OK)
            return s;
    }
    oi_status s = oi__vk_to_host(ctx, out->storage);
    if (s != OI_OK)
        return s;
    s = oi__op_run_cpu(op, attrs, n_attrs, inputs, n_inputs, out);
    oi__vk_release(ctx, out->storage);
    ctx->stats.cpu_fallbacks++;
    return s;
}

static bool oi__vk_covers_storage(const oi__tensor *t) {
    uint64_t bytes = oi_dtype_nbytes(t->dtype, (uint64_t)oi__shape_numel(t->ndim, t->shape));
    return t->offset == 0 && oi__tensor_is_contiguous(t) && bytes == t->storage->nbytes;
}

static oi_status oi__vk_run_op(void *opaque, oi_op op, const oi__attr *attrs, size_t n_attrs,
                               const oi__tensor *const *inputs, size_t n_inputs, oi__tensor *out) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    if (ctx->lost)
        return oi__fail(OI_ERROR_RUNTIME, "vulkan: the device was lost; create a new simulator");
    if (n_inputs == 0 || n_inputs > OI__VK_MAX_INPUTS || !out || !out->storage)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "vulkan: %s: bad operands", oi_op_name(op));
    uint64_t seq = ctx->next_seq++;
    oi__vk_view in[OI__VK_MAX_INPUTS], o;
    for (size_t i = 0; i < n_inputs; i++) {
        if (!inputs[i] || !inputs[i]->storage)
            return oi__fail(OI_ERROR_INVALID_ARGUMENT, "vulkan: %s: input %zu has no storage", oi_op_name(op), i);
        oi__vk_view_of_tensor(inputs[i], &in[i]);
    }
    oi__vk_view_of_tensor(out, &o);
    oi__vk_plan plan;
    oi_status s = oi__vk_plan_op(ctx, op, attrs, n_attrs, in, n_inputs, &o, &plan);
    if (s == OI_ERROR_VALIDATION)
        return oi__op_run_cpu(op, attrs, n_attrs, inputs, n_inputs, out); /* same message as the CPU */
    if (s != OI_OK)
        return oi__vk_run_on_cpu(ctx, op, attrs, n_attrs, inputs, n_inputs, out);
    if (plan.empty)
        return OI_OK;
    if (out->storage->borrowed)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "vulkan: %s would write into model weights", oi_op_name(op));

    oi__vk_buffer *bufs[OI__VK_ROLE_COUNT];
    memset(bufs, 0, sizeof bufs);
    for (size_t i = 0; i < n_inputs && s == OI_OK; i++)
        s = oi__vk_resident(ctx, inputs[i]->storage, true, &bufs[OI__VK_ROLE_IN0 + i]);
    if (s == OI_OK)
        s = oi__vk_resident(ctx, out->storage, !oi__vk_covers_storage(out), &bufs[OI__VK_ROLE_OUT]);
    if (s != OI_OK)
        return s;
    /* an input sharing the output's storage at other elements: write a copy */
    oi__vk_buffer *out_buf = bufs[OI__VK_ROLE_OUT], *aside = NULL;
    if (oi__op_needs_temp(op, inputs, n_inputs, out)) {
        s = oi__vk_buffer_new(ctx, out->storage->nbytes, &aside);
        if (s != OI_OK)
            return s;
        bufs[OI__VK_ROLE_OUT] = aside;
    }
    if (plan.temp_bytes)
        s = oi__vk_buffer_new(ctx, plan.temp_bytes, &bufs[OI__VK_ROLE_TEMP]);
    for (int i = 0; i < plan.n_stages && s == OI_OK; i++) {
        const oi__vk_stage *st = &plan.stages[i];
        oi__vk_dispatch d;
        memset(&d, 0, sizeof d);
        d.pipeline = st->pipeline;
        for (int b = 0; b < OI__VK_BINDINGS; b++)
            d.bufs[b] = bufs[st->roles[b]];
        d.push = st->push;
        d.push_words = st->push_words;
        memcpy(d.groups, st->groups, sizeof d.groups);
        d.op = op;
        d.seq = seq;
        s = oi__vk_record_dispatch(ctx, &d);
    }
    if (s == OI_OK && aside) {
        size_t esize = oi_dtype_bits(out->dtype) / 8;
        VkDeviceSize at = (VkDeviceSize)out->offset * esize;
        s = oi__vk_record_copy(ctx, aside, at, out_buf, at, (VkDeviceSize)oi__shape_numel(out->ndim, out->shape) * esize);
    }
    oi__vk_buffer_free(ctx, aside);
    oi__vk_buffer_free(ctx, bufs[OI__VK_ROLE_TEMP]);
    if (s == OI_OK)
        out->storage->host_stale = true;
    return s == OI_OK ? oi__vk_submit_early(ctx) : s;
}

/* backend->write_into: a table entry written into its row on the device
 * (the value where the op that made it left it; the row uploaded once), so
 * the row never comes back to the host between steps. */
static oi_status oi__vk_write_into(oi__vk_context *ctx, oi__storage *dst, uint64_t at, const oi__tensor *src) {
    if (ctx->lost)
        return oi__fail(OI_ERROR_RUNTIME, "vulkan: the device was lost; create a new simulator");
    size_t esize = oi_dtype_bits(src->dtype) / 8;
    uint64_t nbytes = (uint64_t)oi__shape_numel(src->ndim, src->shape) * esize;
    if (!oi__tensor_is_contiguous(src) || src->storage == dst || at + nbytes > dst->nbytes)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "vulkan: a table write needs a contiguous value apart from its row");
    if (nbytes == 0)
        return OI_OK;
    oi__vk_buffer *from = NULL, *to = NULL;
    oi_status s = oi__vk_resident(ctx, src->storage, true, &from);
    if (s == OI_OK) /* a copy that covers dst needs none of its host bytes */
        s = oi__vk_resident(ctx, dst, at != 0 || nbytes != dst->nbytes, &to);
    if (s == OI_OK)
        s = oi__vk_record_copy(ctx, from, (VkDeviceSize)src->offset * esize, to, at, nbytes);
    if (s != OI_OK)
        return s;
    dst->host_stale = true;
    return oi__vk_submit_early(ctx);
}
