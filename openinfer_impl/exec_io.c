/* exec_io.c - values in and out of the executor: insert and
 * fetch, and the lossless element conversion both use. */
#include "executor.h"

/* ------------------------------------------------------------------ */
/* Element conversion                                                 */
/* ------------------------------------------------------------------ */

static bool oi__dtype_is_int_like(oi_dtype t) {
    return oi__dtype_is_signed(t) || oi__dtype_is_unsigned(t) || t == OI_DTYPE_BITSET;
}

/* Which conversions keep the values: float <- anything numeric, int <- int
 * (range-checked per element), bool <- bool. */
static bool oi__convertible(oi_dtype from, oi_dtype to) {
    if (from == to)
        return true;
    if (oi__dtype_is_float(to))
        return oi__dtype_is_float(from) || oi__dtype_is_int_like(from) || from == OI_DTYPE_BOOL;
    if (oi__dtype_is_int_like(to))
        return oi__dtype_is_int_like(from) || from == OI_DTYPE_BOOL;
    return false;
}

static void oi__int_range(oi_dtype t, int64_t *lo, uint64_t *hi) {
    unsigned bits = oi_dtype_bits(t);
    if (t == OI_DTYPE_T1 || t == OI_DTYPE_T2) {
        *lo = -1;
        *hi = 1;
    } else if (oi__dtype_is_signed(t)) {
        *lo = bits >= 64 ? INT64_MIN : -((int64_t)1 << (bits - 1));
        *hi = bits >= 64 ? (uint64_t)INT64_MAX : ((uint64_t)1 << (bits - 1)) - 1u;
    } else {
        *lo = 0;
        *hi = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1u;
    }
}

/* Converts n contiguous elements; `what` names the variable for errors. */
static oi_status oi__convert(oi_dtype to, void *dst, oi_dtype from, const void *src, int64_t n, const char *what) {
    if (!oi__convertible(from, to))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: wrong dtype: expected %s, got %s (%s)", what, oi_dtype_name(to),
                        oi_dtype_name(from),
                        oi__dtype_is_float(from) ? "float values cannot become integers without loss"
                                                 : "no lossless conversion");
    if (from == to) {
        memcpy(dst, src, (size_t)oi_dtype_nbytes(to, (uint64_t)n));
        return OI_OK;
    }
    if (oi__convert_floats(to, dst, from, src, n)) /* f32 <-> f16/bf16: the fast rows */
        return OI_OK;
    if (oi__dtype_is_float(to)) {
        for (int64_t i = 0; i < n; i++)
            oi__store_f64(to, dst, i, oi__load_f64(from, src, i));
        return OI_OK;
    }
    int64_t lo;
    uint64_t hi;
    oi__int_range(to, &lo, &hi);
    bool from_unsigned = oi__dtype_is_unsigned(from) || from == OI_DTYPE_BITSET || from == OI_DTYPE_BOOL;
    for (int64_t i = 0; i < n; i++) {
        if (from_unsigned) {
            uint64_t v = oi__load_u64(from, src, i);
            if (v > hi)
                return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: element %lld = %llu does not fit in %s", what, (long long)i,
                                (unsigned long long)v, oi_dtype_name(to));
            oi__store_u64(to, dst, i, v);
        } else {
            int64_t v = oi__load_i64(from, src, i);
            if (v < lo || (v > 0 && (uint64_t)v > hi))
                return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: element %lld = %lld does not fit in %s", what, (long long)i,
                                (long long)v, oi_dtype_name(to));
            oi__store_i64(to, dst, i, v);
        }
    }
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Insert and fetch                                                   */
/* ------------------------------------------------------------------ */

static int oi__lookup(oi_executor *e, const char *name, const char *verb) {
    int s = e ? oi__plan_slot(e->plan, name) : -1;
    if (s < 0)
        oi__fail(e ? OI_ERROR_NOT_FOUND : OI_ERROR_INVALID_ARGUMENT, "%s %s: %s", verb, name ? name : "(null)",
                 e ? "unknown variable (not declared in the graph)" : "no executor");
    return s;
}

const oi__tensor *oi__executor_peek(oi_executor *e, const char *name) {
    int s = oi__lookup(e, name, "peek");
    return s >= 0 ? e->main.values[s] : NULL;
}

oi_status oi_executor_insert(oi_executor *e, const char *name, oi_dtype dtype, const void *data, size_t count) {
    int s = oi__lookup(e, name, "insert");
    if (s < 0)
        return e ? OI_ERROR_NOT_FOUND : OI_ERROR_INVALID_ARGUMENT;
    const oi__slot *sl = oi__slot_of(e, s);
    if (e->in_step)
        return oi__fail(OI_ERROR_RUNTIME, "insert %s: a step is in progress; insert only between steps", name);
    if (sl->kind != OI__MEM_DYNAMIC && sl->kind != OI__MEM_VOLATILE)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "insert %s: %s is %s memory; only dynamic (and volatile) variables take inserts",
                        name, name,
                        sl->kind == OI__MEM_CONSTANT ? "constant" : sl->kind == OI__MEM_PERSISTENT ? "persistent" : "temporary");
    if (sl->n_indices > 0)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "insert %s: %s is a prefix table", name, name);
    int64_t numel = oi__shape_numel(sl->ndim, sl->shape);
    if ((int64_t)count != numel)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "insert %s: wrong element count: expected %lld, got %zu", name,
                        (long long)numel, count);
    if (!data && count)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "insert %s: no data", name);
    oi__tensor *t = oi__tensor_new(sl->dtype, sl->ndim, sl->shape);
    if (!t)
        return OI_ERROR_OUT_OF_MEMORY;
    oi_status st = oi__convert(sl->dtype, oi__tensor_data(t), dtype, data, numel, name);
    if (st != OI_OK) {
        char why[1024];
        oi__copy_error(why, sizeof why);
        oi__tensor_free(t);
        return oi__fail(st, "insert %s", why);
    }
    oi__tensor_free(e->main.values[s]);
    e->main.values[s] = t;
    e->inserted[s] = true;
    return OI_OK;
}

oi_status oi_executor_fetch(oi_executor *e, const char *name, oi_dtype dtype, oi_tensor_view *out) {
    if (out)
        memset(out, 0, sizeof *out);
    int s = oi__lookup(e, name, "fetch");
    if (s < 0)
        return e ? OI_ERROR_NOT_FOUND : OI_ERROR_INVALID_ARGUMENT;
    if (!out)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "fetch %s: no output view", name);
    const oi__slot *sl = oi__slot_of(e, s);
    if (sl->is_prefix)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "fetch %s: a prefix table has no single value; use it in an op", name);
    oi__tensor *snapshot = NULL;
    const oi__tensor *t;
    if (sl->kind == OI__MEM_PERSISTENT) {
        t = snapshot = oi__persistent_snapshot(e, s);
    } else {
        t = oi__value(&e->main, s);
    }
    if (!t) {
        oi__error_prefix("fetch %s", name);
        return oi__last_status(OI_ERROR_RUNTIME) == OI_ERROR_OUT_OF_MEMORY ? OI_ERROR_OUT_OF_MEMORY : OI_ERROR_RUNTIME;
    }
    oi_status st = oi__storage_sync_host(t->storage);
    oi__tensor *contiguous = NULL;
    if (st == OI_OK && (t->offset != 0 || !oi__tensor_is_contiguous(t)))
        t = contiguous = oi__tensor_clone(t);
    int64_t numel = t ? oi__shape_numel(t->ndim, t->shape) : 0;
    oi__fetch_buffer *kept = &e->fetched[s];
    size_t nbytes = (size_t)oi_dtype_nbytes(dtype, (uint64_t)numel) + 1;
    void *buf = NULL;
    if (t && st == OI_OK)
        buf = kept->data && kept->nbytes == nbytes ? kept->data : oi__malloc(nbytes);
    if (buf && oi_dtype_bits(dtype) < 8) /* sub-byte dtypes are packed into zeroed bytes */
        memset(buf, 0, nbytes);
    if (st == OI_OK && !buf)
        st = OI_ERROR_OUT_OF_MEMORY;
    char what[256];
    snprintf(what, sizeof what, "fetch %s", name);
    if (st == OI_OK)
        st = oi__convert(dtype, buf, t->dtype, oi__tensor_data(t), numel, what);
    if (st == OI_OK) {
        if (buf != kept->data) {
            oi__free(kept->data);
            kept->data = buf;
            kept->nbytes = nbytes;
        }
        out->dtype = dtype;
        out->ndim = t->ndim;
        for (int d = 0; d < t->ndim; d++)
            out->shape[d] = t->shape[d];
        out->len = (size_t)numel;
        out->data = buf;
    } else if (buf != kept->data) {
        oi__free(buf);
    }
    oi__tensor_free(contiguous);
    oi__tensor_free(snapshot);
    return st;
}

/* The layout of OI__FETCHED(T) for every T. */
typedef struct oi__fetched_any {
    void *data;
    size_t len;
    int ndim;
    int64_t shape[OI_MAX_DIMS];
} oi__fetched_any;

oi_status oi__fetch_into(oi_executor *exec, const char *name, oi_dtype dtype, void *typed_view, bool panic,
                         const char *file, int line) {
    oi_tensor_view view;
    oi_status st = oi_executor_fetch(exec, name, dtype, &view);
    oi__fetched_any any;
    memset(&any, 0, sizeof any);
    if (st == OI_OK) {
        any.data = view.data;
        any.len = view.len;
        any.ndim = view.ndim;
        memcpy(any.shape, view.shape, sizeof any.shape);
    }
    if (typed_view)
        memcpy(typed_view, &any, sizeof any);
    if (st != OI_OK && panic) {
        char what[256];
        snprintf(what, sizeof what, "OI_FETCH(%s)", name ? name : "");
        oi__panic(st, file, line, what);
    }
    return st;
}
