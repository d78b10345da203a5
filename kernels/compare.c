/* compare.c - comparisons, float predicates, is_finite (a reduction to one
 * bool) and filter (select). Values compare in their own domain: floats
 * by IEEE rules (NaN is unequal to everything), integers exactly. */
#include "../openinfer_impl/internal.h"
#include "scalar.h"

/* -1, 0 or 1 for a < b, a == b, a > b; 2 when unordered (NaN). */
static int oi__compare_elements(oi__op_domain dom, oi_dtype t, const void *a_data, int64_t ia, const void *b_data,
                                int64_t ib) {
    if (dom == OI__DOM_FLOAT) {
        double a = oi__load_f64(t, a_data, ia), b = oi__load_f64(t, b_data, ib);
        return a < b ? -1 : a > b ? 1 : a == b ? 0 : 2;
    }
    if (dom == OI__DOM_SIGNED) {
        int64_t a = oi__load_i64(t, a_data, ia), b = oi__load_i64(t, b_data, ib);
        return a < b ? -1 : a > b ? 1 : 0;
    }
    uint64_t a = oi__load_u64(t, a_data, ia), b = oi__load_u64(t, b_data, ib);
    return a < b ? -1 : a > b ? 1 : 0;
}

static bool oi__comparison_holds(oi_op op, int c) {
    switch (op) {
    case OI_OP_eq: return c == 0;
    case OI_OP_ne: return c != 0;
    case OI_OP_lt: return c == -1;
    case OI_OP_le: return c == -1 || c == 0;
    case OI_OP_gt: return c == 1;
    case OI_OP_ge: return c == 1 || c == 0;
    default: return false;
    }
}

static bool oi__predicate_holds(oi_op op, oi_dtype t, const void *data, int64_t i) {
    if (oi__dtype_is_float(t)) {
        double x = oi__load_f64(t, data, i);
        switch (op) {
        case OI_OP_is_nan: return OI_S_is_nan(x);
        case OI_OP_is_inf: return OI_S_is_inf(x);
        case OI_OP_is_neg: return signbit(x) != 0; /* -0.0 counts as negative */
        default: return false;
        }
    }
    return op == OI_OP_is_neg && oi__dtype_is_signed(t) && oi__load_i64(t, data, i) < 0;
}

static bool oi__op_all_finite(const oi__tensor *x) {
    oi__ew_iter it;
    oi__ew_init(&it, &x, 1, x);
    int64_t n = oi__shape_numel(x->ndim, x->shape);
    for (int64_t e = 0; e < n; e++, oi__ew_next(&it)) {
        double v = oi__load_f64(x->dtype, oi__op_cdata(x), it.at[0]);
        if (!OI_S_isfinite(v))
            return false;
    }
    return true;
}

static bool oi__op_is_nonzero(oi_dtype t, const void *data, int64_t i) {
    return oi__dtype_is_float(t) ? oi__load_f64(t, data, i) != 0.0 : oi__load_u64(t, data, i) != 0;
}

static oi_status oi__k_compare(const oi__kernel_args *k) {
    oi__tensor *out = k->out;
    void *out_data = oi__tensor_data(out);
    if (k->op == OI_OP_is_finite) {
        oi__store_u64(out->dtype, out_data, out->offset, oi__op_all_finite(k->in[0]));
        return OI_OK;
    }
    oi_dtype t = k->in[0]->dtype;
    oi__op_domain dom = oi__op_domain_of(t);
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    size_t n_in = k->n_in;
    oi__ew_iter it;
    oi__ew_init(&it, k->in, n_in, out);
    for (int64_t e = 0; e < n; e++, oi__ew_next(&it)) {
        int64_t at_out = it.at[n_in];
        if (k->op == OI_OP_filter) {
            const oi__tensor *cond = k->in[2];
            const oi__tensor *pick = oi__op_is_nonzero(cond->dtype, oi__op_cdata(cond), it.at[2]) ? k->in[0] : k->in[1];
            int64_t at = pick == k->in[0] ? it.at[0] : it.at[1];
            oi__store_bits(out->dtype, out_data, at_out, oi__load_bits(t, oi__op_cdata(pick), at));
        } else if (n_in == 2) {
            int c = oi__compare_elements(dom, t, oi__op_cdata(k->in[0]), it.at[0], oi__op_cdata(k->in[1]), it.at[1]);
            oi__store_u64(out->dtype, out_data, at_out, oi__comparison_holds(k->op, c));
        } else {
            oi__store_u64(out->dtype, out_data, at_out, oi__predicate_holds(k->op, t, oi__op_cdata(k->in[0]), it.at[0]));
        }
    }
    return OI_OK;
}
