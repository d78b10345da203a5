/* shape.c - data movement ops: reshape, transpose, squeeze, unsqueeze,
 * slice, split, expand (layouts of their input), concat, gather, where,
 * pad and tile. They never compute with values: they copy raw element
 * bits, so every dtype works, packed ones included.
 *
 * A layout op turns the input's shape, strides and offset into the
 * output's (oi__shape_view). The kernel copies through that layout; the
 * executor can skip the copy altogether through oi__op_view, which hands
 * back a tensor sharing the input's storage. ONNX semantics throughout;
 * split has one output in our IR, so `index` picks the piece. */
#include "../openinfer_impl/internal.h"

/* ------------------------------------------------------------------ */
/* Parameters                                                          */
/* ------------------------------------------------------------------ */
/* An int-list parameter (one int counts as a list of one); false if absent. */
static bool oi__shape_list(const oi__kernel_args *k, const char *param, const int64_t **values, int *count) {
    const oi__attr *a = oi__op_attr_for(k, param);
    *values = NULL;
    *count = 0;
    if (!a)
        return false;
    if (a->kind == OI__ATTR_INT_LIST) {
        *values = a->ints;
        *count = (int)arrlen(a->ints);
    } else {
        *values = &a->i;
        *count = 1;
    }
    return true;
}

/* An axis in [-rank, rank) to [0, rank); false if out of range. */
static bool oi__shape_axis(int64_t axis, int rank, int *out) {
    *out = 0;
    if (axis < -rank || axis >= rank)
        return false;
    *out = (int)(axis < 0 ? axis + rank : axis);
    return true;
}

static oi_status oi__shape_bad_axis(const oi__kernel_args *k, const char *param, int64_t axis, int rank) {
    return oi__fail(OI_ERROR_VALIDATION, "%s: %s %lld is out of range for rank %d", oi_op_name(k->op), param,
                    (long long)axis, rank);
}

/* A list of distinct axes as a mask over `rank` dims. */
static oi_status oi__shape_axes_mask(const oi__kernel_args *k, const char *param, const int64_t *axes, int count,
                                     int rank, bool *mask) {
    for (int d = 0; d < rank; d++)
        mask[d] = false;
    for (int i = 0; i < count; i++) {
        int axis;
        if (!oi__shape_axis(axes[i], rank, &axis))
            return oi__shape_bad_axis(k, param, axes[i], rank);
        if (mask[axis])
            return oi__fail(OI_ERROR_VALIDATION, "%s: axis %d appears twice in %s", oi_op_name(k->op), axis, param);
        mask[axis] = true;
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Layouts: what reshape/transpose/... make of the input's layout       */
/* ------------------------------------------------------------------ */
typedef struct oi__shape_view {
    int ndim;
    int64_t shape[OI_MAX_DIMS];
    int64_t strides[OI_MAX_DIMS]; /* elements; 0 repeats (expand) */
    int64_t offset;
} oi__shape_view;

static void oi__shape_view_of_tensor(const oi__tensor *t, oi__shape_view *v) {
    v->ndim = t->ndim;
    memcpy(v->shape, t->shape, sizeof v->shape);
    memcpy(v->strides, t->strides, sizeof v->strides);
    v->offset = t->offset;
}

/* A signature as a dense layout: enough to infer the output shape. */
static void oi__shape_view_of_sig(const oi__op_sig *s, oi__shape_view *v) {
    memset(v, 0, sizeof *v);
    v->ndim = s->ndim;
    memcpy(v->shape, s->shape, sizeof v->shape);
    oi__contiguous_strides(s->ndim, v->shape, v->strides);
}

/* `t` (a header copy) with the layout v: same storage, nothing copied. */
static void oi__shape_view_apply(oi__tensor *t, const oi__shape_view *v) {
    t->ndim = v->ndim;
    memset(t->shape, 0, sizeof t->shape);
    memset(t->strides, 0, sizeof t->strides);
    memcpy(t->shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
    memcpy(t->strides, v->strides, sizeof(int64_t) * (size_t)v->ndim);
    t->offset = v->offset;
}

static bool oi__shape_view_dense(const oi__shape_view *v) {
    int64_t expect[OI_MAX_DIMS];
    oi__contiguous_strides(v->ndim, v->shape, expect);
    for (int d = 0; d < v->ndim; d++)
        if (v->shape[d] != 1 && v->strides[d] != expect[d])
            return false;
    return true;
}

static void oi__shape_text_of(const oi__shape_view *v, char *text, size_t size) {
    oi__op_shape_text(v->ndim, v->shape, text, size);
}

/* The strides of v reshaped to `shape` (count dims, the same number of
 * elements) without moving an element, as NumPy reshapes a view: the dims
 * of both, size-1 dims left out, fall into runs of equal products, and a
 * run of input dims must be laid out as one dense block (each dim's stride
 * its inner neighbour's stride times size), which the output dims of the
 * run then split afresh. Splitting a column slice of a fused q/k/v product
 * ([tokens, 3d] -> [batch, seq, heads, dh]) keeps it a view. False: no
 * such strides (merging dims a transpose swapped needs a copy). */
static bool oi__shape_restride(const oi__shape_view *v, int count, const int64_t *shape, int64_t *strides) {
    int64_t dims[OI_MAX_DIMS], steps[OI_MAX_DIMS];
    int n_old = 0;
    for (int d = 0; d < v->ndim; d++) {
        if (v->shape[d] == 0)
            return false; /* empty: any layout is dense, and the caller copies nothing */
        if (v->shape[d] != 1)
            dims[n_old] = v->shape[d], steps[n_old++] = v->strides[d];
    }
    int o = 0, n = 0;
    while (n < count && o < n_old) {
        int o_end = o + 1, n_end = n + 1;
        int64_t old_size = dims[o], new_size = shape[n];
        while (old_size != new_size) {
            if (new_size < old_size)
                new_size *= shape[n_end++];
            else
                old_size *= dims[o_end++];
        }
        for (int d = o; d + 1 < o_end; d++)
            if (steps[d] != steps[d + 1] * dims[d + 1])
                return false;
        strides[n_end - 1] = steps[o_end - 1];
        for (int d = n_end - 1; d > n; d--)
            strides[d - 1] = strides[d] * shape[d];
        o = o_end, n = n_end;
    }
    for (; n < count; n++) /* trailing dims of 1 */
        strides[n] = 1;
    return true;
}

/* reshape: `shape` with ONNX's 0 (copy the input dim; a real 0 with
 * allowzero) and one -1 (inferred). A view when the input is dense or its
 * strides allow one (oi__shape_restride). */
static oi_status oi__shape_reshape(const oi__kernel_args *k, oi__shape_view *v, bool *needs_copy) {
    const int64_t *want;
    int count;
    oi__shape_list(k, "shape", &want, &count);
    bool allowzero = oi__op_param_bool(k, "allowzero");
    if (count > OI_MAX_DIMS)
        return oi__fail(OI_ERROR_VALIDATION, "reshape: shape has %d dims (at most %d)", count, OI_MAX_DIMS);
    int64_t shape[OI_MAX_DIMS], known = 1, numel = oi__shape_numel(v->ndim, v->shape);
    int inferred = -1;
    bool has_zero = false;
    for (int d = 0; d < count; d++) {
        int64_t dim = want[d];
        if (dim == 0 && !allowzero) {
            if (d >= v->ndim)
                return oi__fail(OI_ERROR_VALIDATION, "reshape: shape[%d] is 0 (copy the input dim) but the input has rank %d",
                                d, v->ndim);
            dim = v->shape[d];
        } else if (dim == 0) {
            has_zero = true;
        }
        if (dim == -1) {
            if (inferred >= 0)
                return oi__fail(OI_ERROR_VALIDATION, "reshape: shape has more than one -1");
            inferred = d;
            dim = 1;
        } else if (dim < 0 || dim > OI__MAX_DIM) {
            return oi__fail(OI_ERROR_VALIDATION, "reshape: shape[%d] is %lld (expected -1, 0 or a size)", d,
                            (long long)want[d]);
        }
        shape[d] = dim;
        known = dim == 0 || known == 0 ? 0 : (known > OI__MAX_DIM / dim ? OI__MAX_DIM + 1 : known * dim);
    }
    if (inferred >= 0) {
        if (has_zero || known == 0)
            return oi__fail(OI_ERROR_VALIDATION, "reshape: -1 cannot be inferred next to a 0 dim");
        if (numel % known != 0)
            return oi__fail(OI_ERROR_VALIDATION, "reshape: %lld elements do not split into dims of product %lld plus -1",
                            (long long)numel, (long long)known);
        shape[inferred] = numel / known;
        known = numel;
    }
    if (known != numel) {
        char have[128];
        oi__shape_text_of(v, have, sizeof have);
        return oi__fail(OI_ERROR_VALIDATION, "reshape: cannot reshape %s (%lld elements) into %lld elements", have,
                        (long long)numel, (long long)known);
    }
    int64_t strides[OI_MAX_DIMS];
    bool dense = oi__shape_view_dense(v), restrided = !dense && oi__shape_restride(v, count, shape, strides);
    *needs_copy = !dense && !restrided;
    v->ndim = count;
    memcpy(v->shape, shape, sizeof(int64_t) * (size_t)count);
    if (restrided)
        memcpy(v->strides, strides, sizeof(int64_t) * (size_t)count);
    else
        oi__contiguous_strides(count, v->shape, v->strides);
    return OI_OK;
}

/* transpose: output dim d is input dim perm[d] (default: reversed). */
static oi_status oi__shape_transpose(const oi__kernel_args *k, oi__shape_view *v) {
    int rank = v->ndim, perm[OI_MAX_DIMS], count = rank;
    const int64_t *given = NULL;
    bool seen[OI_MAX_DIMS];
    if (oi__shape_list(k, "perm", &given, &count) && count != rank)
        return oi__fail(OI_ERROR_VALIDATION, "transpose: perm has %d entries for rank %d", count, rank);
    for (int d = 0; d < rank; d++)
        seen[d] = false;
    for (int d = 0; d < rank; d++) {
        if (!given) {
            perm[d] = rank - 1 - d;
            continue;
        }
        if (!oi__shape_axis(given[d], rank, &perm[d]))
            return oi__shape_bad_axis(k, "perm entry", given[d], rank);
        if (seen[perm[d]])
            return oi__fail(OI_ERROR_VALIDATION, "transpose: perm is not a permutation (axis %d appears twice)", perm[d]);
        seen[perm[d]] = true;
    }
    oi__shape_view in = *v;
    for (int d = 0; d < rank; d++) {
        v->shape[d] = in.shape[perm[d]];
        v->strides[d] = in.strides[perm[d]];
    }
    return OI_OK;
}

/* squeeze: drops `axes` (each of size 1), or every size-1 axis. */
static oi_status oi__shape_squeeze(const oi__kernel_args *k, oi__shape_view *v) {
    bool drop[OI_MAX_DIMS];
    const int64_t *axes;
    int count;
    if (oi__shape_list(k, "axes", &axes, &count)) {
        if (oi__shape_axes_mask(k, "axes", axes, count, v->ndim, drop) != OI_OK)
            return OI_ERROR_VALIDATION;
        for (int d = 0; d < v->ndim; d++)
            if (drop[d] && v->shape[d] != 1)
                return oi__fail(OI_ERROR_VALIDATION, "squeeze: axis %d has size %lld (only size-1 axes can be removed)", d,
                                (long long)v->shape[d]);
    } else {
        for (int d = 0; d < v->ndim; d++)
            drop[d] = v->shape[d] == 1;
    }
    int kept = 0;
    for (int d = 0; d < v->ndim; d++) {
        if (drop[d])
            continue;
        v->shape[kept] = v->shape[d];
        v->strides[kept++] = v->strides[d];
    }
    v->ndim = kept;
    return OI_OK;
}

/* unsqueeze: inserts size-1 axes at `axes` (positions in the output). */
static oi_status oi__shape_unsqueeze(const oi__kernel_args *k, oi__shape_view *v) {
    const int64_t *axes;
    int count;
    oi__shape_list(k, "axes", &axes, &count);
    int rank = v->ndim + count;
    if (rank > OI_MAX_DIMS)
        return oi__fail(OI_ERROR_VALIDATION, "unsqueeze: the result would have rank %d (at most %d)", rank, OI_MAX_DIMS);
    bool insert[OI_MAX_DIMS];
    if (oi__shape_axes_mask(k, "axes", axes, count, rank, insert) != OI_OK)
        return OI_ERROR_VALIDATION;
    oi__shape_view in = *v;
    int from = 0;
    for (int d = 0; d < rank; d++) {
        if (insert[d]) {
            v->shape[d] = 1;
            v->strides[d] = from < in.ndim ? in.strides[from] * in.shape[from] : 1; /* any value works for size 1 */
        } else {
            v->shape[d] = in.shape[from];
            v->strides[d] = in.strides[from++];
        }
    }
    v->ndim = rank;
    return OI_OK;
}

/* Narrows dim d to `count` elements from `start`, every `step`-th. */
static void oi__shape_narrow(oi__shape_view *v, int d, int64_t start, int64_t step, int64_t count) {
    if (count > 0)
        v->offset += start * v->strides[d];
    v->strides[d] *= step;
    v->shape[d] = count;
}

/* ONNX Slice: negative starts/ends count from the end, then clamp to
 * [0, dim] (step > 0) or [0, dim - 1] / [-1, dim - 1] (step < 0). */
static void oi__shape_slice_dim(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t *first, int64_t *count) {
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    int64_t lo = 0, hi = step > 0 ? dim : dim - 1;
    start = start < lo ? lo : start > hi ? hi : start;
    lo = step > 0 ? 0 : -1;
    end = end < lo ? lo : end > hi ? hi : end;
    int64_t span = step > 0 ? end - start : start - end, stride = step > 0 ? step : -step;
    *count = dim == 0 || span <= 0 ? 0 : 1 + (span - 1) / stride;
    *first = *count ? start : 0;
}

static oi_status oi__shape_slice(const oi__kernel_args *k, oi__shape_view *v) {
    const int64_t *starts, *ends, *axes = NULL, *steps = NULL;
    int n, n_ends, n_axes = 0, n_steps = 0;
    oi__shape_list(k, "starts", &starts, &n);
    oi__shape_list(k, "ends", &ends, &n_ends);
    bool has_axes = oi__shape_list(k, "axes", &axes, &n_axes), has_steps = oi__shape_list(k, "steps", &steps, &n_steps);
    if (n_ends != n || (has_axes && n_axes != n) || (has_steps && n_steps != n))
        return oi__fail(OI_ERROR_VALIDATION, "slice: starts, ends, axes and steps must have the same length (%d, %d, %d, %d)",
                        n, n_ends, has_axes ? n_axes : n, has_steps ? n_steps : n);
    if (n > v->ndim)
        return oi__fail(OI_ERROR_VALIDATION, "slice: %d axes for rank %d", n, v->ndim);
    bool seen[OI_MAX_DIMS] = {false};
    for (int i = 0; i < n; i++) {
        int axis = i;
        if (has_axes && !oi__shape_axis(axes[i], v->ndim, &axis))
            return oi__shape_bad_axis(k, "axis", axes[i], v->ndim);
        if (seen[axis])
            return oi__fail(OI_ERROR_VALIDATION, "slice: axis %d appears twice in axes", axis);
        seen[axis] = true;
        int64_t step = has_steps ? steps[i] : 1, first, count;
        if (step == 0)
            return oi__fail(OI_ERROR_VALIDATION, "slice: steps[%d] is 0", i);
        oi__shape_slice_dim(v->shape[axis], starts[i], ends[i], step, &first, &count);
        oi__shape_narrow(v, axis, first, step, count);
    }
    return OI_OK;
}

/* split: `sizes` (summing to the dim) or `num` pieces of ceil(dim / num)
 * (the last ones smaller); the output is piece `index`. */
static oi_status oi__shape_split(const oi__kernel_args *k, oi__shape_view *v) {
    int axis;
    int64_t axis_param = oi__op_param_i64(k, "axis");
    if (!oi__shape_axis(axis_param, v->ndim, &axis))
        return oi__shape_bad_axis(k, "axis", axis_param, v->ndim);
    const int64_t *sizes;
    int n_sizes = 0;
    bool has_sizes = oi__shape_list(k, "sizes", &sizes, &n_sizes), has_num = oi__op_attr_for(k, "num") != NULL;
    if (has_sizes == has_num)
        return oi__fail(OI_ERROR_VALIDATION, "split: give exactly one of sizes= and num=");
    int64_t dim = v->shape[axis], pieces = has_sizes ? n_sizes : oi__op_param_i64(k, "num");
    if (pieces < 1)
        return oi__fail(OI_ERROR_VALIDATION, "split: %s must give at least one piece", has_sizes ? "sizes" : "num");
    int64_t index = oi__op_param_i64(k, "index");
    if (index < -pieces || index >= pieces)
        return oi__fail(OI_ERROR_VALIDATION, "split: index %lld is out of range for %lld pieces", (long long)index,
                        (long long)pieces);
    if (index < 0)
        index += pieces;
    int64_t start = 0, size = 0;
    if (has_sizes) {
        int64_t total = 0;
        for (int i = 0; i < n_sizes; i++) {
            if (sizes[i] < 0 || sizes[i] > OI__MAX_DIM)
                return oi__fail(OI_ERROR_VALIDATION, "split: sizes[%d] is %lld", i, (long long)sizes[i]);
            if (i < index)
                start += sizes[i];
            total += sizes[i];
        }
        if (total != dim)
            return oi__fail(OI_ERROR_VALIDATION, "split: sizes sum to %lld but axis %d has %lld", (long long)total, axis,
                            (long long)dim);
        size = sizes[index];
    } else {
        int64_t chunk = pieces > dim ? 1 : (dim + pieces - 1) / pieces;
        start = index * chunk < dim ? index * chunk : dim;
        size = start + chunk <= dim ? chunk : dim - start;
    }
    oi__shape_narrow(v, axis, start, 1, size);
    return OI_OK;
}

/* expand: numpy broadcasting of the input with `shape` (both ways);
 * repeated elements get stride 0. */
static oi_status oi__shape_expand(const oi__kernel_args *k, oi__shape_view *v) {
    const int64_t *want;
    int count;
    oi__shape_list(k, "shape", &want, &count);
    int rank = count > v->ndim ? count : v->ndim;
    if (rank > OI_MAX_DIMS)
        return oi__fail(OI_ERROR_VALIDATION, "expand: shape has %d dims (at most %d)", count, OI_MAX_DIMS);
    oi__shape_view in = *v;
    for (int d = 0; d < rank; d++) {
        int di = d - (rank - in.ndim), dw = d - (rank - count);
        int64_t have = di >= 0 ? in.shape[di] : 1, target = dw >= 0 ? want[dw] : 1;
        if (target < 0 || target > OI__MAX_DIM)
            return oi__fail(OI_ERROR_VALIDATION, "expand: shape[%d] is %lld", dw, (long long)target);
        if (have != target && have != 1 && target != 1) {
            char text[128];
            oi__shape_text_of(&in, text, sizeof text);
            return oi__fail(OI_ERROR_VALIDATION, "expand: %s does not broadcast to shape[%d] = %lld (dim %lld)", text, dw,
                            (long long)target, (long long)have);
        }
        v->shape[d] = have == 1 ? target : have;
        v->strides[d] = di >= 0 && have == v->shape[d] ? in.strides[di] : 0;
    }
    v->ndim = rank;
    return OI_OK;
}

static bool oi__shape_is_layout_op(oi_op op) {
    return op == OI_OP_reshape || op == OI_OP_transpose || op == OI_OP_squeeze || op == OI_OP_unsqueeze ||
           op == OI_OP_slice || op == OI_OP_split || op == OI_OP_expand;
}

/* The output layout of a layout op over the input layout v. needs_copy:
 * the result is not expressible as strides (reshape of a strided input). */
static oi_status oi__shape_layout(const oi__kernel_args *k, oi__shape_view *v, bool *needs_copy) {
    *needs_copy = false;
    switch (k->op) {
    case OI_OP_reshape: return oi__shape_reshape(k, v, needs_copy);
    case OI_OP_transpose: return oi__shape_transpose(k, v);
    case OI_OP_squeeze: return oi__shape_squeeze(k, v);
    case OI_OP_unsqueeze: return oi__shape_unsqueeze(k, v);
    case OI_OP_slice: return oi__shape_slice(k, v);
    case OI_OP_split: return oi__shape_split(k, v);
    case OI_OP_expand: return oi__shape_expand(k, v);
    default: return oi__fail(OI_ERROR_VALIDATION, "%s: not a layout op", oi_op_name(k->op));
    }
}

/* ------------------------------------------------------------------ */
/* Output signatures of the other ops                                  */
/* ------------------------------------------------------------------ */
static oi_status oi__shape_concat_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out) {
    int rank = in[0].ndim, axis;
    int64_t axis_param = oi__op_param_i64(k, "axis");
    if (rank == 0)
        return oi__fail(OI_ERROR_VALIDATION, "concat: inputs need rank >= 1");
    if (!oi__shape_axis(axis_param, rank, &axis))
        return oi__shape_bad_axis(k, "axis", axis_param, rank);
    out->ndim = rank;
    memcpy(out->shape, in[0].shape, sizeof out->shape);
    for (size_t i = 1; i < n_in; i++) {
        bool fits = in[i].ndim == rank;
        for (int d = 0; d < rank && fits; d++)
            fits = d == axis || in[i].shape[d] == in[0].shape[d];
        if (!fits) {
            char a[128], b[128];
            oi__op_shape_text(in[0].ndim, in[0].shape, a, sizeof a);
            oi__op_shape_text(in[i].ndim, in[i].shape, b, sizeof b);
            return oi__fail(OI_ERROR_VALIDATION, "concat: input %zu has shape %s, input 0 %s (only axis %d may differ)", i,
                            b, a, axis);
        }
        out->shape[axis] += in[i].shape[axis];
    }
    if (out->shape[axis] > OI__MAX_DIM)
        return oi__fail(OI_ERROR_VALIDATION, "concat: axis %d grows beyond 2^40", axis);
    return OI_OK;
}

static bool oi__shape_index_dtype(oi_dtype t) {
    return oi__op_dtype_in(t, OI__DTS_S | OI__DTS_U);
}

/* gather: data[..., indices[...], ...] along `axis`: the axis is replaced
 * by the indices' shape. */
static oi_status oi__shape_gather_infer(const oi__kernel_args *k, const oi__op_sig *in, oi__op_sig *out) {
    const oi__op_sig *data = &in[0], *idx = &in[1];
    int axis;
    int64_t axis_param = oi__op_param_i64(k, "axis");
    if (!oi__shape_index_dtype(idx->dtype))
        return oi__fail(OI_ERROR_VALIDATION, "gather: indices must be an integer dtype (i32, i64, ...), got %s",
                        oi_dtype_name(idx->dtype) ? oi_dtype_name(idx->dtype) : "?");
    if (data->ndim == 0)
        return oi__fail(OI_ERROR_VALIDATION, "gather: data needs rank >= 1");
    if (!oi__shape_axis(axis_param, data->ndim, &axis))
        return oi__shape_bad_axis(k, "axis", axis_param, data->ndim);
    int rank = data->ndim - 1 + idx->ndim;
    if (rank > OI_MAX_DIMS)
        return oi__fail(OI_ERROR_VALIDATION, "gather: the result would have rank %d (at most %d)", rank, OI_MAX_DIMS);
    out->ndim = rank;
    memcpy(out->shape, data->shape, sizeof(int64_t) * (size_t)axis);
    memcpy(out->shape + axis, idx->shape, sizeof(int64_t) * (size_t)idx->ndim);
    memcpy(out->shape + axis + idx->ndim, data->shape + axis + 1, sizeof(int64_t) * (size_t)(data->ndim - axis - 1));
    return OI_OK;
}

/* where(cond, a, b): cond is bool; the output has a's dtype. */
static oi_status oi__shape_where_infer(const oi__op_sig *in, oi__op_sig *out) {
    if (in[0].dtype != OI_DTYPE_BOOL)
        return oi__fail(OI_ERROR_VALIDATION, "where: the condition must be bool, got %s",
                        oi_dtype_name(in[0].dtype) ? oi_dtype_name(in[0].dtype) : "?");
    if (in[1].dtype != in[2].dtype)
        return oi__fail(OI_ERROR_VALIDATION, "where: a is %s but b is %s (they must match)",
                        oi_dtype_name(in[1].dtype) ? oi_dtype_name(in[1].dtype) : "?",
                        oi_dtype_name(in[2].dtype) ? oi_dtype_name(in[2].dtype) : "?");
    if (!oi__dtype_is_tensor_type(in[1].dtype))
        return oi__fail(OI_ERROR_VALIDATION, "where: a and b have no tensor dtype");
    *out = in[0];
    if (oi__op_broadcast_into("where", out, &in[1]) != OI_OK || oi__op_broadcast_into("where", out, &in[2]) != OI_OK)
        return OI_ERROR_VALIDATION;
    out->dtype = in[1].dtype;
    return OI_OK;
}

typedef enum oi__pad_mode { OI__PAD_CONSTANT, OI__PAD_REFLECT, OI__PAD_EDGE, OI__PAD_WRAP } oi__pad_mode;

/* pad: per-dim begin/end counts (negative crops) from ONNX's
 * [begin_0, ..., begin_n, end_0, ..., end_n] over `axes` (default all). */
static oi_status oi__shape_pad_plan(const oi__kernel_args *k, const oi__op_sig *in, int64_t *begin, int64_t *end,
                                    oi__pad_mode *mode) {
    const int64_t *pads, *axes = NULL;
    int n_pads, n_axes = in->ndim;
    oi__shape_list(k, "pads", &pads, &n_pads);
    bool has_axes = oi__shape_list(k, "axes", &axes, &n_axes);
    if (!has_axes)
        n_axes = in->ndim;
    if (n_pads != 2 * n_axes)
        return oi__fail(OI_ERROR_VALIDATION, "pad: pads has %d entries but %d axes need %d", n_pads, n_axes, 2 * n_axes);
    const oi__attr *m = oi__op_attr_for(k, "mode");
    const char *text = m ? m->s : "constant";
    if (strcmp(text, "constant") == 0)
        *mode = OI__PAD_CONSTANT;
    else if (strcmp(text, "reflect") == 0)
        *mode = OI__PAD_REFLECT;
    else if (strcmp(text, "edge") == 0)
        *mode = OI__PAD_EDGE;
    else if (strcmp(text, "wrap") == 0)
        *mode = OI__PAD_WRAP;
    else
        return oi__fail(OI_ERROR_VALIDATION, "pad: mode '%s' is unknown (constant, reflect, edge, wrap)", text);
    bool seen[OI_MAX_DIMS] = {false};
    for (int d = 0; d < in->ndim; d++)
        begin[d] = end[d] = 0;
    for (int i = 0; i < n_axes; i++) {
        int axis = i;
        if (has_axes && !oi__shape_axis(axes[i], in->ndim, &axis))
            return oi__shape_bad_axis(k, "axis", axes[i], in->ndim);
        if (seen[axis])
            return oi__fail(OI_ERROR_VALIDATION, "pad: axis %d appears twice in axes", axis);
        seen[axis] = true;
        int64_t b = pads[i], e = pads[i + n_axes], dim = in->shape[axis];
        if (b < -OI__MAX_DIM || b > OI__MAX_DIM || e < -OI__MAX_DIM || e > OI__MAX_DIM || dim + b + e < 0 ||
            dim + b + e > OI__MAX_DIM)
            return oi__fail(OI_ERROR_VALIDATION, "pad: pads %lld and %lld on axis %d of size %lld give no valid size",
                            (long long)b, (long long)e, axis, (long long)dim);
        if (*mode != OI__PAD_CONSTANT && dim == 0 && (b > 0 || e > 0))
            return oi__fail(OI_ERROR_VALIDATION, "pad: mode %s cannot pad axis %d of size 0", text, axis);
        begin[axis] = b;
        end[axis] = e;
    }
    return OI_OK;
}

static oi_status oi__shape_pad_infer(const oi__kernel_args *k, const oi__op_sig *in, oi__op_sig *out) {
    int64_t begin[OI_MAX_DIMS], end[OI_MAX_DIMS];
    oi__pad_mode mode;
    if (oi__shape_pad_plan(k, in, begin, end, &mode) != OI_OK)
        return OI_ERROR_VALIDATION;
    if (oi__op_check_int_scalar(k, "value", in->dtype, true) != OI_OK)
        return OI_ERROR_VALIDATION;
    *out = *in;
    for (int d = 0; d < in->ndim; d++)
        out->shape[d] = in->shape[d] + begin[d] + end[d];
    return OI_OK;
}

static oi_status oi__shape_tile_infer(const oi__kernel_args *k, const oi__op_sig *in, oi__op_sig *out) {
    const int64_t *repeats;
    int count;
    oi__shape_list(k, "repeats", &repeats, &count);
    if (count != in->ndim)
        return oi__fail(OI_ERROR_VALIDATION, "tile: repeats has %d entries for rank %d", count, in->ndim);
    *out = *in;
    for (int d = 0; d < in->ndim; d++) {
        int64_t dim = in->shape[d];
        if (repeats[d] < 0 || (dim && repeats[d] > OI__MAX_DIM / dim))
            return oi__fail(OI_ERROR_VALIDATION, "tile: repeats[%d] is %lld for a dim of %lld", d, (long long)repeats[d],
                            (long long)dim);
        out->shape[d] = dim * repeats[d];
    }
    return OI_OK;
}

static oi_status oi__k_shape_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out) {
    if (oi__shape_is_layout_op(k->op)) {
        oi__shape_view v;
        bool needs_copy;
        oi__shape_view_of_sig(&in[0], &v);
        if (oi__shape_layout(k, &v, &needs_copy) != OI_OK)
            return OI_ERROR_VALIDATION;
        out->ndim = v.ndim;
        memcpy(out->shape, v.shape, sizeof out->shape);
        return OI_OK;
    }
    switch (k->op) {
    case OI_OP_concat: return oi__shape_concat_infer(k, in, n_in, out);
    case OI_OP_gather: return oi__shape_gather_infer(k, in, out);
    case OI_OP_where: return oi__shape_where_infer(in, out);
    case OI_OP_pad: return oi__shape_pad_infer(k, &in[0], out);
    case OI_OP_tile: return oi__shape_tile_infer(k, &in[0], out);
    default: return oi__fail(OI_ERROR_VALIDATION, "%s: no shape rule", oi_op_name(k->op));
    }
}

/* ------------------------------------------------------------------ */
/* Copying                                                             */
/* ------------------------------------------------------------------ */
/* n elements from src (stride ss) to dst (stride ds), positions in elements. */
static void oi__shape_copy_run(oi_dtype t, const void *src, int64_t s_at, int64_t ss, void *dst, int64_t d_at, int64_t ds,
                               int64_t n) {
    unsigned bits = oi_dtype_bits(t);
    if (bits % 8 != 0) { /* packed: element by element */
        for (int64_t i = 0; i < n; i++)
            oi__store_bits(t, dst, d_at + i * ds, oi__load_bits(t, src, s_at + i * ss));
        return;
    }
    size_t size = bits / 8;
    const char *s = (const char *)src + s_at * (int64_t)size;
    char *d = (char *)dst + d_at * (int64_t)size;
    if (ss == 1 && ds == 1) {
        memcpy(d, s, (size_t)n * size);
        return;
    }
    int64_t sstep = ss * (int64_t)size, dstep = ds * (int64_t)size;
    switch (size) { /* fixed sizes let the compiler turn memcpy into moves */
    case 1: for (int64_t i = 0; i < n; i++) memcpy(d + i * dstep, s + i * sstep, 1); break;
    case 2: for (int64_t i = 0; i < n; i++) memcpy(d + i * dstep, s + i * sstep, 2); break;
    case 4: for (int64_t i = 0; i < n; i++) memcpy(d + i * dstep, s + i * sstep, 4); break;
    case 8: for (int64_t i = 0; i < n; i++) memcpy(d + i * dstep, s + i * sstep, 8); break;
    default: for (int64_t i = 0; i < n; i++) memcpy(d + i * dstep, s + i * sstep, size); break;
    }
}

/* dst = src element by element: same shape, any strides, no overlap. */
static void oi__shape_copy(const oi__tensor *src, oi__tensor *dst) {
    int nd = dst->ndim;
    int64_t total = oi__shape_numel(nd, dst->shape);
    if (total == 0)
        return;
    int64_t run = nd ? dst->shape[nd - 1] : 1;
    int64_t ss = nd ? src->strides[nd - 1] : 1, ds = nd ? dst->strides[nd - 1] : 1;
    int64_t index[OI_MAX_DIMS] = {0}, s_at = src->offset, d_at = dst->offset;
    for (int64_t done = 0; done < total; done += run) {
        oi__shape_copy_run(dst->dtype, oi__op_cdata(src), s_at, ss, oi__tensor_data(dst), d_at, ds, run);
        for (int d = nd - 2; d >= 0; d--) {
            s_at += src->strides[d];
            d_at += dst->strides[d];
            if (++index[d] < dst->shape[d])
                break;
            s_at -= src->strides[d] * dst->shape[d];
            d_at -= dst->strides[d] * dst->shape[d];
            index[d] = 0;
        }
    }
}

/* One row of oi__shape_copy_mapped with no fill when the dtypes match in
 * whole bytes: runs of consecutive source indices (a pad's or tile's middle)
 * as one copy each, and runs of decreasing ones (a reflected end) as one
 * strided copy backwards. false: not that case, the caller copies. */
static bool oi__shape_copy_mapped_row(const oi__tensor *src, int64_t s_at, const int64_t *map, oi__tensor *dst,
                                      int64_t d_at, int64_t run) {
    int nd = dst->ndim;
    unsigned bits = oi_dtype_bits(dst->dtype);
    if (src->dtype != dst->dtype || bits % 8 != 0)
        return false;
    for (int64_t o = 0; o < run; o++)
        if (map[o] < 0)
            return false;
    int64_t ss = src->strides[nd - 1], ds = dst->strides[nd - 1];
    for (int64_t o = 0; o < run;) {
        int64_t len = 1, dir = o + 1 < run && map[o + 1] == map[o] - 1 ? -1 : 1; /* reflected ends run backwards */
        while (o + len < run && map[o + len] == map[o] + dir * len)
            len++;
        oi__shape_copy_run(dst->dtype, oi__op_cdata(src), s_at + map[o] * ss, dir * ss, oi__tensor_data(dst),
                           d_at + o * ds, ds, len);
        o += len;
    }
    return true;
}

/* Copies through per-dim index maps: dst[o] = src[maps[0][o0], ...]; an
 * entry of -1 writes `fill` (raw bits) instead. */
static void oi__shape_copy_mapped(const oi__tensor *src, const int64_t *const *maps, oi__tensor *dst, uint64_t fill) {
    int nd = dst->ndim;
    int64_t total = oi__shape_numel(nd, dst->shape);
    const void *s = oi__op_cdata(src);
    void *d = oi__tensor_data(dst);
    if (total == 0)
        return;
    if (nd == 0) {
        oi__store_bits(dst->dtype, d, dst->offset, oi__load_bits(src->dtype, s, src->offset));
        return;
    }
    int last = nd - 1;
    int64_t run = dst->shape[last], index[OI_MAX_DIMS] = {0};
    for (int64_t done = 0; done < total; done += run) {
        int64_t s_at = src->offset, d_at = dst->offset;
        bool fill_row = false;
        for (int dd = 0; dd < last; dd++) {
            int64_t from = maps[dd][index[dd]];
            fill_row |= from < 0;
            s_at += from * src->strides[dd];
            d_at += index[dd] * dst->strides[dd];
        }
        if (fill_row || !oi__shape_copy_mapped_row(src, s_at, maps[last], dst, d_at, run))
            for (int64_t o = 0; o < run; o++) {
                int64_t from = maps[last][o];
                uint64_t bits = fill_row || from < 0 ? fill : oi__load_bits(src->dtype, s, s_at + from * src->strides[last]);
                oi__store_bits(dst->dtype, d, d_at + o * dst->strides[last], bits);
            }
        for (int dd = last - 1; dd >= 0 && ++index[dd] == dst->shape[dd]; dd--)
            index[dd] = 0;
    }
}

/* One array of source indices per output dim (stb-free: one block). */
static int64_t **oi__shape_maps_new(const oi__tensor *dst) {
    int64_t total = 0;
    for (int d = 0; d < dst->ndim; d++)
        total += dst->shape[d];
    size_t head = sizeof(int64_t *) * OI_MAX_DIMS;
    int64_t **maps = (int64_t **)oi__malloc(head + sizeof(int64_t) * (size_t)(total ? total : 1));
    if (!maps)
        return NULL;
    int64_t *at = (int64_t *)(void *)((char *)maps + head);
    for (int d = 0; d < dst->ndim; d++) {
        maps[d] = at;
        at += dst->shape[d];
    }
    return maps;
}

/* ------------------------------------------------------------------ */
/* Kernels                                                             */
/* ------------------------------------------------------------------ */
/* reshape of a strided input: walk both in row-major order. */
static oi_status oi__shape_reshape_copy(const oi__tensor *in, oi__tensor *out) {
    oi__shape_view dense;
    if (oi__tensor_is_contiguous(out)) { /* out seen with the input's shape */
        oi__tensor alias = *out;
        dense.ndim = in->ndim;
        memcpy(dense.shape, in->shape, sizeof dense.shape);
        oi__contiguous_strides(in->ndim, dense.shape, dense.strides);
        dense.offset = out->offset;
        oi__shape_view_apply(&alias, &dense);
        oi__shape_copy(in, &alias);
        return OI_OK;
    }
    oi__tensor *packed = oi__tensor_clone(in); /* dense copy, then the reshaped view of it */
    if (!packed)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__tensor alias = *packed;
    dense.ndim = out->ndim;
    memcpy(dense.shape, out->shape, sizeof dense.shape);
    oi__contiguous_strides(out->ndim, dense.shape, dense.strides);
    dense.offset = 0;
    oi__shape_view_apply(&alias, &dense);
    oi__shape_copy(&alias, out);
    oi__tensor_free(packed);
    return OI_OK;
}

static oi_status oi__shape_layout_kernel(const oi__kernel_args *k) {
    const oi__tensor *in = k->in[0];
    oi__shape_view v;
    bool needs_copy;
    oi__shape_view_of_tensor(in, &v);
    if (oi__shape_layout(k, &v, &needs_copy) != OI_OK)
        return OI_ERROR_VALIDATION;
    if (needs_copy)
        return oi__shape_reshape_copy(in, k->out);
    oi__tensor view = *in;
    oi__shape_view_apply(&view, &v);
    oi__shape_copy(&view, k->out);
    return OI_OK;
}

/* concat: each input into its band of the output along axis. */
static oi_status oi__shape_concat_kernel(const oi__kernel_args *k) {
    oi__tensor *out = k->out;
    int axis;
    oi__shape_axis(oi__op_param_i64(k, "axis"), out->ndim, &axis);
    int64_t at = 0;
    for (size_t i = 0; i < k->n_in; i++) {
        oi__tensor band = *out;
        band.shape[axis] = k->in[i]->shape[axis];
        band.offset += at * out->strides[axis];
        oi__shape_copy(k->in[i], &band);
        at += band.shape[axis];
    }
    return OI_OK;
}

/* Index i of the indices tensor (row-major), as a position along the
 * gathered axis; false if outside [-dim, dim). */
static bool oi__shape_gather_index(const oi__tensor *idx, const int64_t *index, int64_t dim, int64_t *pos) {
    int64_t at = idx->offset;
    for (int d = 0; d < idx->ndim; d++)
        at += index[d] * idx->strides[d];
    int64_t v;
    if (oi__dtype_is_signed(idx->dtype)) {
        v = oi__load_i64(idx->dtype, oi__op_cdata(idx), at);
    } else {
        uint64_t u = oi__load_u64(idx->dtype, oi__op_cdata(idx), at);
        v = u > (uint64_t)OI__MAX_DIM ? OI__MAX_DIM : (int64_t)u;
    }
    *pos = v;
    if (v < -dim || v >= dim)
        return false;
    if (v < 0)
        *pos = v + dim;
    return true;
}

static void oi__shape_index_next(int ndim, const int64_t *shape, int64_t *index) {
    for (int d = ndim - 1; d >= 0 && ++index[d] == shape[d]; d--)
        index[d] = 0;
}

/* gather: for each index, the data slab at that position along axis goes
 * to the output slab at the index's place. Every index is checked first,
 * so a bad one leaves the output untouched. */
static oi_status oi__shape_gather_kernel(const oi__kernel_args *k) {
    const oi__tensor *data = k->in[0], *idx = k->in[1];
    oi__tensor *out = k->out;
    int axis;
    oi__shape_axis(oi__op_param_i64(k, "axis"), data->ndim, &axis);
    int64_t dim = data->shape[axis], count = oi__shape_numel(idx->ndim, idx->shape), index[OI_MAX_DIMS] = {0}, pos;
    for (int64_t i = 0; i < count; i++, oi__shape_index_next(idx->ndim, idx->shape, index)) {
        if (!oi__shape_gather_index(idx, index, dim, &pos))
            return oi__fail(OI_ERROR_RUNTIME, "gather: index %lld (element %lld of the indices) is out of range for axis %d of size %lld",
                            (long long)pos, (long long)i, axis, (long long)dim);
    }
    /* src: data without the axis; dst: out without the indices' dims */
    oi__tensor src = *data, dst = *out;
    oi__shape_view sv, dv;
    oi__shape_view_of_tensor(data, &sv);
    oi__shape_view_of_tensor(out, &dv);
    for (int d = axis; d + 1 < data->ndim; d++) {
        sv.shape[d] = data->shape[d + 1];
        sv.strides[d] = data->strides[d + 1];
    }
    sv.ndim = data->ndim - 1;
    for (int d = axis; d + idx->ndim < out->ndim; d++) {
        dv.shape[d] = out->shape[d + idx->ndim];
        dv.strides[d] = out->strides[d + idx->ndim];
    }
    dv.ndim = out->ndim - idx->ndim;
    memset(index, 0, sizeof index);
    for (int64_t i = 0; i < count; i++, oi__shape_index_next(idx->ndim, idx->shape, index)) {
        oi__shape_gather_index(idx, index, dim, &pos);
        oi__shape_view s = sv, o = dv;
        s.offset += pos * data->strides[axis];
        for (int d = 0; d < idx->ndim; d++)
            o.offset += index[d] * out->strides[axis + d];
        oi__shape_view_apply(&src, &s);
        oi__shape_view_apply(&dst, &o);
        oi__shape_copy(&src, &dst);
    }
    return OI_OK;
}

static oi_status oi__shape_where_kernel(const oi__kernel_args *k) {
    oi__ew_iter it;
    oi__ew_init(&it, k->in, 3, k->out);
    const oi__tensor *cond = k->in[0], *a = k->in[1], *b = k->in[2];
    oi__tensor *out = k->out;
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    for (int64_t i = 0; i < n; i++, oi__ew_next(&it)) {
        bool pick_a = oi__load_bits(cond->dtype, oi__op_cdata(cond), it.at[0]) != 0;
        uint64_t bits = pick_a ? oi__load_bits(a->dtype, oi__op_cdata(a), it.at[1])
                               : oi__load_bits(b->dtype, oi__op_cdata(b), it.at[2]);
        oi__store_bits(out->dtype, oi__tensor_data(out), it.at[3], bits);
    }
    return OI_OK;
}

/* Source index along a dim of size n for padded position i - begin. */
static int64_t oi__shape_pad_source(oi__pad_mode mode, int64_t i, int64_t n) {
    if (i >= 0 && i < n)
        return i;
    switch (mode) {
    case OI__PAD_CONSTANT: return -1;
    case OI__PAD_EDGE: return i < 0 ? 0 : n - 1;
    case OI__PAD_WRAP: return ((i % n) + n) % n;
    case OI__PAD_REFLECT: {
        if (n == 1)
            return 0;
        int64_t period = 2 * (n - 1), m = ((i % period) + period) % period;
        return m < n ? m : period - m;
    }
    }
    return -1;
}

/* The constant `value` as raw bits of dtype t. */
static uint64_t oi__shape_fill_bits(const oi__kernel_args *k, oi_dtype t) {
    double value = oi__op_param_f64(k, "value");
    uint64_t cell = 0; /* an 8-byte buffer: room for one element of any dtype */
    if (oi__dtype_is_float(t))
        oi__store_f64(t, &cell, 0, value);
    else if (t == OI_DTYPE_BOOL)
        oi__store_u64(t, &cell, 0, value != 0.0);
    else if (oi__dtype_is_signed(t))
        oi__store_i64(t, &cell, 0, oi__op_f64_to_i64_saturating(value));
    else
        oi__store_u64(t, &cell, 0, value <= 0 ? 0u : value >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)value);
    return oi__load_bits(t, &cell, 0);
}

/* A pad of the last axis only (pads >= 0, dense rows of whole bytes): each
 * row's middle as one copy, its ends element by element, the reflected
 * index worked out without a division when the pad is shorter than the
 * row (a streaming model pads every chunk: Silero VAD's 640 floats took
 * 1.2 us through the index maps, most of it their divisions). false: not
 * that case. */
static bool oi__shape_pad_last_axis(const oi__tensor *in, oi__tensor *out, const int64_t *begin, const int64_t *end,
                                    oi__pad_mode mode, uint64_t fill) {
    int nd = in->ndim, last = nd - 1;
    unsigned bits = oi_dtype_bits(in->dtype);
    if (nd == 0 || in->dtype != out->dtype || bits % 8 != 0 || !oi__tensor_is_contiguous(in) ||
        !oi__tensor_is_contiguous(out) || begin[last] < 0 || end[last] < 0 || in->shape[last] == 0)
        return false;
    for (int d = 0; d < last; d++)
        if (begin[d] != 0 || end[d] != 0)
            return false;
    size_t size = bits / 8;
    int64_t n = in->shape[last], width = out->shape[last], rows = oi__shape_numel(last, in->shape);
    const char *src = (const char *)oi__op_cdata(in) + in->offset * (int64_t)size;
    char *dst = (char *)oi__tensor_data(out) + out->offset * (int64_t)size;
    for (int64_t r = 0; r < rows; r++, src += n * (int64_t)size, dst += width * (int64_t)size) {
        memcpy(dst + begin[last] * (int64_t)size, src, (size_t)n * size);
        for (int side = 0; side < 2; side++)
            for (int64_t o = side ? begin[last] + n : 0; o < (side ? width : begin[last]); o++) {
                int64_t i = o - begin[last], from;
                if (mode == OI__PAD_REFLECT && n > 1 && i > -n && i < 2 * n - 1)
                    from = i < 0 ? -i : 2 * (n - 1) - i;
                else
                    from = oi__shape_pad_source(mode, i, n);
                if (from < 0)
                    oi__store_bits(out->dtype, dst, o, fill);
                else
                    memcpy(dst + o * (int64_t)size, src + from * (int64_t)size, size);
            }
    }
    return true;
}

static oi_status oi__shape_pad_kernel(const oi__kernel_args *k) {
    const oi__tensor *in = k->in[0];
    oi__op_sig sig;
    oi__op_tensor_sig(in, &sig);
    int64_t begin[OI_MAX_DIMS], end[OI_MAX_DIMS];
    oi__pad_mode mode;
    if (oi__shape_pad_plan(k, &sig, begin, end, &mode) != OI_OK)
        return OI_ERROR_VALIDATION;
    if (oi__shape_pad_last_axis(in, k->out, begin, end, mode, oi__shape_fill_bits(k, in->dtype)))
        return OI_OK;
    int64_t **maps = oi__shape_maps_new(k->out);
    if (!maps)
        return OI_ERROR_OUT_OF_MEMORY;
    for (int d = 0; d < k->out->ndim; d++)
        for (int64_t o = 0; o < k->out->shape[d]; o++)
            maps[d][o] = oi__shape_pad_source(mode, o - begin[d], in->shape[d]);
    oi__shape_copy_mapped(in, (const int64_t *const *)maps, k->out, oi__shape_fill_bits(k, in->dtype));
    oi__free(maps);
    return OI_OK;
}

/* tile's source index along each dim for each output position: o % n
 * (the kernel below and the synthesizer's, oi__op_tile_map) */
static void oi__shape_tile_maps(int ndim, const int64_t *in_shape, const int64_t *out_shape, int64_t *const *maps) {
    for (int d = 0; d < ndim; d++)
        for (int64_t o = 0; o < out_shape[d]; o++)
            maps[d][o] = o % in_shape[d];
}

static oi_status oi__shape_tile_kernel(const oi__kernel_args *k) {
    int64_t **maps = oi__shape_maps_new(k->out);
    if (!maps)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__shape_tile_maps(k->out->ndim, k->in[0]->shape, k->out->shape, maps);
    oi__shape_copy_mapped(k->in[0], (const int64_t *const *)maps, k->out, 0);
    oi__free(maps);
    return OI_OK;
}

static oi_status oi__k_shape(const oi__kernel_args *k) {
    if (oi__shape_is_layout_op(k->op))
        return oi__shape_layout_kernel(k);
    switch (k->op) {
    case OI_OP_concat: return oi__shape_concat_kernel(k);
    case OI_OP_gather: return oi__shape_gather_kernel(k);
    case OI_OP_where: return oi__shape_where_kernel(k);
    case OI_OP_pad: return oi__shape_pad_kernel(k);
    case OI_OP_tile: return oi__shape_tile_kernel(k);
    default: return oi__fail(OI_ERROR_UNSUPPORTED, "%s: not a shape op", oi_op_name(k->op));
    }
}

/* ------------------------------------------------------------------ */
/* Views for the executor                                              */
/* ------------------------------------------------------------------ */
/* The view of a layout op whose signature was checked. */
static oi_status oi__op_view_of(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *in,
                                oi__tensor **out_view) {
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    oi__shape_view v;
    bool needs_copy;
    oi__shape_view_of_tensor(in, &v);
    if (oi__shape_layout(&k, &v, &needs_copy) != OI_OK)
        return OI_ERROR_VALIDATION;
    for (int d = 0; d < v.ndim && !needs_copy; d++)
        needs_copy = v.strides[d] < 0; /* negative steps: kernels and backends expect strides >= 0 */
    if (needs_copy)
        return OI_ERROR_UNSUPPORTED;
    oi__tensor *view = oi__tensor_share(in);
    if (!view)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__shape_view_apply(view, &v);
    *out_view = view;
    return OI_OK;
}

/* The checks common to both entries: the op is a layout op, in is sound. */
static oi_status oi__op_view_start(oi_op op, const oi__tensor *in, oi__tensor **out_view) {
    if (!out_view)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi__op_view: no output");
    *out_view = NULL;
    if (!oi__op_valid(op) || !oi__shape_is_layout_op(op))
        return OI_ERROR_UNSUPPORTED; /* not an error: the caller runs the kernel */
    return oi__op_check_tensor(oi__op_defs[op].name, 0, in);
}

oi_status oi__op_view(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *in, oi__tensor **out_view) {
    oi_status st = oi__op_view_start(op, in, out_view);
    if (st != OI_OK)
        return st;
    oi__op_sig sig, want;
    oi__op_mode mode;
    oi__op_tensor_sig(in, &sig);
    if (oi__op_check(op, attrs, n_attrs, &sig, 1, OI_DTYPE_INVALID, &want, &mode) != OI_OK)
        return OI_ERROR_VALIDATION;
    return oi__op_view_of(op, attrs, n_attrs, in, out_view);
}

oi_status oi__op_layout_map(oi_op op, const oi__attr *attrs, size_t n_attrs, int ndim, const int64_t *shape,
                            int64_t *offset, int64_t strides[OI_MAX_DIMS]) {
    oi__kernel_args k = oi__kernel_args_of(op, attrs, n_attrs);
    oi__op_sig sig;
    memset(&sig, 0, sizeof sig);
    sig.ndim = ndim;
    memcpy(sig.shape, shape, sizeof(int64_t) * (size_t)ndim);
    oi__shape_view v;
    bool needs_copy = false;
    oi__shape_view_of_sig(&sig, &v);
    if (!oi__shape_is_layout_op(op) || op == OI_OP_reshape || oi__shape_layout(&k, &v, &needs_copy) != OI_OK || needs_copy)
        return OI_ERROR_UNSUPPORTED;
    *offset = v.offset;
    memcpy(strides, v.strides, sizeof(int64_t) * (size_t)v.ndim);
    return OI_OK;
}

oi_status oi__op_pad_map(const oi__attr *attrs, size_t n_attrs, int ndim, const int64_t *shape, int64_t *const *maps) {
    oi__kernel_args k = oi__kernel_args_of(OI_OP_pad, attrs, n_attrs);
    oi__op_sig sig;
    memset(&sig, 0, sizeof sig);
    sig.ndim = ndim;
    memcpy(sig.shape, shape, sizeof(int64_t) * (size_t)ndim);
    int64_t begin[OI_MAX_DIMS], end[OI_MAX_DIMS];
    oi__pad_mode mode;
    if (oi__shape_pad_plan(&k, &sig, begin, end, &mode) != OI_OK)
        return OI_ERROR_VALIDATION;
    for (int d = 0; d < ndim; d++)
        for (int64_t o = 0; o < shape[d] + begin[d] + end[d]; o++)
            maps[d][o] = oi__shape_pad_source(mode, o - begin[d], shape[d]);
    return OI_OK;
}

void oi__op_tile_map(int ndim, const int64_t *shape, const int64_t *out_shape, int64_t *const *maps) {
    oi__shape_tile_maps(ndim, shape, out_shape, maps);
}

oi_status oi__op_view_checked(oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__tensor *in,
                              oi__tensor **out_view) {
    oi_status st = oi__op_view_start(op, in, out_view);
    return st != OI_OK ? st : oi__op_view_of(op, attrs, n_attrs, in, out_view);
}
