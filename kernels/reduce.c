/* reduce.c - sum/mean/prod/max/min over `axes`, argmax/argmin along
 * `axis`. The input's dims split into kept dims (one output element each)
 * and reduced dims (walked for every output element); strides are read
 * as they are, so views reduce without a copy.
 * Accumulators: floats in f32 (f64 for f64 data or acc=f64), rounded once
 * into the output; integers in 64-bit wrapping arithmetic, truncated into
 * the output (the acc dtype when widening). Integer means truncate toward
 * zero. */
#include "../openinfer_impl/internal.h"

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
            if (wide) acc->f += v; else acc->f32 += (float)v;
            return;
        case OI_OP_prod_axis:
            if (wide) acc->f *= v; else acc->f32 *= (float)v;
            return;
        case OI_OP_max_axis: acc->f = position ? fmax(acc->f, v) : v; return;
        case OI_OP_min_axis: acc->f = position ? fmin(acc->f, v) : v; return;
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

static oi_status oi__k_reduce(const oi__kernel_args *k) {
    oi__reduce_plan plan;
    if (oi__reduce_plan_of(k, &plan) != OI_OK)
        return OI_ERROR_VALIDATION;
    const oi__tensor *in = k->in[0];
    oi_op op = k->op;
    bool needs_elements = op == OI_OP_max_axis || op == OI_OP_min_axis || oi__reduce_is_arg(op);
    if (needs_elements && plan.inner_count == 0)
        return oi__fail(OI_ERROR_RUNTIME, "%s: cannot reduce an empty axis", oi_op_name(op));
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
