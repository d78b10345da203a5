/* exec_tables.c - the executor's persistent state: caches, tables
 * (K[l, t], keyed by the non-auto indices) and @auto_dim matrices. It
 * survives steps and is touched only by cache operations, under the
 * executor lock (consumer threads run cache nodes too). Plain persistent
 * scalars and tensors are a table with an empty key. */
#include "executor.h"

static void oi__pentry_clear(oi__pentry *en) { oi__tensor_free(en->value); }

static void oi__rows_clear(oi__pstate *ps) {
    for (int i = 0; i < (int)arrlen(ps->rows); i++)
        oi__tensor_free(ps->rows[i].buf);
    arrfree(ps->rows);
    ps->last_row = 0;
}

static void oi__pstate_clear(oi__pstate *ps) {
    for (int i = 0; i < (int)arrlen(ps->entries); i++)
        oi__pentry_clear(&ps->entries[i]);
    arrfree(ps->entries);
    oi__rows_clear(ps);
    oi__free(ps->slots);
    ps->slots = NULL;
    ps->cap = 0;
    memset(ps->sizes, 0, sizeof ps->sizes);
}

/* Shape of an entry: declared shape grown by the auto_dim counts. */
static void oi__entry_shape(const oi__slot *sl, const int64_t *counts, int64_t *shape) {
    for (int d = 0; d < sl->ndim; d++)
        shape[d] = sl->shape[d];
    for (int a = 0; a < sl->n_auto; a++)
        shape[a] += counts ? counts[a] : 0;
}

/* A fresh entry value: model data (plain persistent tensors), @init or zeros. */
static oi__tensor *oi__pentry_fresh(oi__ctx *c, const oi__slot *sl, const int64_t *counts) {
    int64_t shape[OI_MAX_DIMS];
    oi__entry_shape(sl, counts, shape);
    if (!sl->is_table && sl->n_auto == 0 && sl->model_tensor && sl->model_tensor->has_data) {
        oi__tensor *w = oi__wrap_model(c, sl->model_tensor);
        oi__tensor *copy = w ? oi__tensor_clone(w) : NULL;
        oi__tensor_free(w);
        return copy;
    }
    oi__tensor *t = oi__tensor_new(sl->dtype, sl->ndim, shape);
    if (t && sl->model_meta)
        oi__store_f64(sl->dtype, oi__tensor_data(t), 0, oi__load_f64(sl->model_meta->type, sl->model_meta->payload, 0));
    else if (t)
        oi__fill_init(t, sl->decl);
    return t;
}

static uint64_t oi__tkey_hash(const oi__tkey *key) {
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int k = 0; k < OI_MAX_DIMS; k++) {
        h ^= (uint64_t)key->k[k] + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdu;
    }
    return h;
}

static bool oi__tkey_equal(const oi__tkey *a, const oi__tkey *b) { return memcmp(a, b, sizeof *a) == 0; }

static oi__pentry *oi__pentry_find(oi__pstate *ps, const oi__tkey *key) {
    if (!ps->cap)
        return NULL;
    size_t mask = ps->cap - 1;
    for (size_t i = (size_t)oi__tkey_hash(key) & mask;; i = (i + 1) & mask) {
        int e = ps->slots[i];
        if (e < 0)
            return NULL;
        if (oi__tkey_equal(&ps->entries[e].key, key))
            return &ps->entries[e];
    }
}

/* Indexes every entry again in a table twice as big as needed. */
static bool oi__pstate_rehash(oi__pstate *ps, size_t want) {
    size_t cap = 16;
    while (cap < want * 2)
        cap *= 2;
    int *slots = (int *)oi__malloc(cap * sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < cap; i++)
        slots[i] = -1;
    for (int e = 0; e < (int)arrlen(ps->entries); e++) {
        size_t i = (size_t)oi__tkey_hash(&ps->entries[e].key) & (cap - 1);
        while (slots[i] >= 0)
            i = (i + 1) & (cap - 1);
        slots[i] = e;
    }
    oi__free(ps->slots);
    ps->slots = slots;
    ps->cap = cap;
    return true;
}

/* Call after appending entries[index]. */
static bool oi__pentry_index(oi__pstate *ps, const oi__tkey *key, int index) {
    if ((size_t)(index + 1) * 2 > ps->cap)
        return oi__pstate_rehash(ps, (size_t)index + 1);
    size_t i = (size_t)oi__tkey_hash(key) & (ps->cap - 1);
    while (ps->slots[i] >= 0)
        i = (i + 1) & (ps->cap - 1);
    ps->slots[i] = index;
    return true;
}

/* ---- rows: a table whose entries all have one shape (no @auto_dim) and
 * a whole-byte dtype keeps the entries that differ only in the last key in
 * one contiguous buffer per value of the other keys. A slice read along the
 * last key is then a view of that buffer (K[l, 0..n]: no copy per step).
 * The buffer takes @fixed's bound at once when that is at most
 * OI__ROW_PREALLOC_BYTES, else it grows geometrically. An entry far past a
 * big row (a sparse write such as A[1 << 40]) is kept as its own tensor
 * (pentry.value) until the row grows over it. Views are lent only
 * where no consumer thread runs (storage refcounts are not atomic) and
 * where the backend computes on the host or writes entries into a row on
 * its device (backend->write_into: the row stays there, uploaded once). */
#define OI__ROW_PREALLOC_BYTES ((int64_t)64 << 20)

static bool oi__table_rowed(const oi__slot *sl) {
    return sl->is_table && sl->n_auto == 0 && sl->n_keys >= 1 && !oi__dtype_is_packed(sl->dtype) &&
           oi_dtype_bits(sl->dtype) % 8 == 0 && oi__shape_numel(sl->ndim, sl->shape) > 0;
}

static int64_t oi__entry_numel(const oi__slot *sl) { return oi__shape_numel(sl->ndim, sl->shape); }

static size_t oi__entry_nbytes(const oi__slot *sl) {
    return (size_t)oi__entry_numel(sl) * (oi_dtype_bits(sl->dtype) / 8);
}

/* The device backend that writes table entries into rows on the device,
 * or NULL (rows are written on the host). */
static const oi__backend *oi__row_device(const oi__ctx *c) {
    const oi__backend *be = c->exec->sim->backend;
    return c->use_backend && be->to_host && be->write_into ? be : NULL;
}

static bool oi__lend_views(const oi__ctx *c) {
    const oi__plan *p = c->exec->plan;
    if (c != &c->exec->main || (c->use_backend && c->exec->sim->backend->to_host && !oi__row_device(c)))
        return false;
    for (int b = 0; b < (int)arrlen(p->blocks); b++)
        if (p->blocks[b].is_async)
            return false;
    return true;
}

static oi__prow *oi__row_find(oi__pstate *ps, const oi__slot *sl, const oi__tkey *key) {
    int last = sl->n_keys - 1, n = (int)arrlen(ps->rows);
    for (int j = 0; j < n; j++) {
        int r = (ps->last_row + j) % n;
        if (memcmp(ps->rows[r].prefix.k, key->k, (size_t)last * sizeof key->k[0]) == 0) {
            ps->last_row = r;
            return &ps->rows[r];
        }
    }
    return NULL;
}

static char *oi__row_slot(const oi__prow *row, const oi__slot *sl, int64_t pos) {
    return (char *)oi__tensor_data(row->buf) + (size_t)pos * oi__entry_nbytes(sl);
}

/* Whether key's row may grow to hold it: up to OI__ROW_PREALLOC_BYTES, or
 * by at most doubling (dense writes), else the entry stays on its own. */
static bool oi__row_can_hold(oi__pstate *ps, const oi__slot *sl, const oi__tkey *key) {
    const oi__prow *row = oi__row_find(ps, sl, key);
    int64_t need = key->k[sl->n_keys - 1] + 1, cap = row ? row->buf->shape[0] : 0;
    return need <= cap || need <= 2 * cap || need <= OI__ROW_PREALLOC_BYTES / (int64_t)oi__entry_nbytes(sl);
}

/* Moves the entries kept on their own that the row now covers into it. */
static void oi__row_take_entries(oi__pstate *ps, const oi__slot *sl, oi__prow *row) {
    int last = sl->n_keys - 1;
    for (int i = 0; i < (int)arrlen(ps->entries); i++) {
        oi__pentry *en = &ps->entries[i];
        int64_t pos = en->key.k[last];
        if (!en->value || pos >= row->buf->shape[0] ||
            memcmp(en->key.k, row->prefix.k, (size_t)last * sizeof en->key.k[0]) != 0)
            continue;
        memcpy(oi__row_slot(row, sl, pos), oi__tensor_data(en->value), oi__entry_nbytes(sl));
        oi__tensor_free(en->value);
        en->value = NULL;
    }
}

/* The row holding key, made or grown to hold it; new slots get @init/zeros. */
static oi__prow *oi__row_reserve(oi__ctx *c, const oi__slot *sl, oi__pstate *ps, const oi__tkey *key) {
    int last = sl->n_keys - 1;
    int64_t pos = key->k[last], bound = sl->fixed[sl->key_pos[last]];
    oi__prow *row = oi__row_find(ps, sl, key);
    int64_t cap = row ? row->buf->shape[0] : 0;
    if (pos < cap)
        return row;
    int64_t want = cap * 2 > pos + 1 ? cap * 2 : pos + 1;
    want = want < 16 ? 16 : want;
    if (bound >= 0 && (bound * (int64_t)oi__entry_nbytes(sl) <= OI__ROW_PREALLOC_BYTES || want > bound))
        want = bound;
    int64_t shape[OI_MAX_DIMS + 1];
    shape[0] = want;
    memcpy(shape + 1, sl->shape, (size_t)sl->ndim * sizeof shape[0]);
    if (sl->ndim + 1 > OI_MAX_DIMS) {
        oi__fail(OI_ERROR_UNSUPPORTED, "%s: a row of entries has rank %d, more than %d", sl->name, sl->ndim + 1, OI_MAX_DIMS);
        return NULL;
    }
    oi__tensor *buf = oi__tensor_new(sl->dtype, sl->ndim + 1, shape);
    oi__tensor *fresh = buf ? oi__pentry_fresh(c, sl, NULL) : NULL;
    if (!fresh) {
        oi__tensor_free(buf);
        return NULL;
    }
    size_t nbytes = oi__entry_nbytes(sl);
    bool zero = true;
    for (size_t i = 0; i < nbytes && zero; i++)
        zero = ((const char *)oi__tensor_data(fresh))[i] == 0;
    for (int64_t i = cap; i < want && !zero; i++)
        memcpy((char *)oi__tensor_data(buf) + (size_t)i * nbytes, oi__tensor_data(fresh), nbytes);
    oi__tensor_free(fresh);
    if (row && oi__storage_sync_host(row->buf->storage) != OI_OK) {
        oi__tensor_free(buf);
        return NULL;
    }
    if (row) {
        memcpy(oi__tensor_data(buf), oi__tensor_data(row->buf), (size_t)cap * nbytes);
        oi__tensor_free(row->buf); /* views lent keep the old bytes */
    } else {
        oi__prow fresh_row;
        memset(&fresh_row, 0, sizeof fresh_row);
        fresh_row.prefix = *key;
        fresh_row.prefix.k[last] = 0;
        if (!arrput(ps->rows, fresh_row)) {
            oi__tensor_free(buf);
            return NULL;
        }
        row = &arrlast(ps->rows);
        ps->last_row = (int)arrlen(ps->rows) - 1;
    }
    row->buf = buf;
    row->lent_lo = row->lent_hi = 0;
    oi__row_take_entries(ps, sl, row);
    return row;
}

/* Makes slot pos of the row safe to change: a view lent that sees it gets
 * to keep the old bytes (copy on write). */
static oi_status oi__row_unshare(oi__prow *row, int64_t pos) {
    oi__tensor *buf = row->buf;
    if (buf->storage->refcount == 1) {
        row->lent_lo = row->lent_hi = 0;
    } else if (pos >= row->lent_lo && pos < row->lent_hi) {
        oi_status st = oi__storage_sync_host(buf->storage);
        oi__tensor *copy = st == OI_OK ? oi__tensor_clone(buf) : NULL;
        if (!copy)
            return st == OI_OK ? OI_ERROR_OUT_OF_MEMORY : st;
        oi__tensor_free(buf);
        row->buf = copy;
        row->lent_lo = row->lent_hi = 0;
    }
    return OI_OK;
}

/* oi__row_unshare, for a write on the host: a device copy is dropped. */
static oi_status oi__row_writable(oi__prow *row, int64_t pos) {
    oi_status st = oi__row_unshare(row, pos);
    return st == OI_OK ? oi__storage_host_write(row->buf->storage) : st;
}

/* A contiguous copy of the slots t views: made on the device when the row
 * is there (a state entry read each step stays on the device too). */
static oi__tensor *oi__row_copy(const oi__ctx *c, const oi__tensor *t) {
    const oi__backend *dev = oi__row_device(c);
    if (!dev || t->storage->device_owner != dev)
        return oi__storage_sync_host(t->storage) == OI_OK ? oi__tensor_clone(t) : NULL;
    oi__tensor *copy = oi__tensor_new(t->dtype, t->ndim, t->shape);
    if (copy && dev->write_into(c->exec->sim->backend_ctx, copy->storage, 0, t) != OI_OK) {
        oi__tensor_free(copy);
        return NULL;
    }
    return copy;
}

/* Slots [lo, hi) of a row ([hi - lo] ++ entry shape when keep, else the
 * entry's shape): a view of a slice when views may be lent, else a copy.
 * One entry (K[l, t]) is copied: as cheap as a view, and a state read and
 * written back each step then never copies its row on write. */
static oi__tensor *oi__row_read(const oi__ctx *c, const oi__slot *sl, oi__prow *row, int64_t lo, int64_t hi, bool keep) {
    oi__tensor *t = oi__tensor_share(row->buf);
    if (!t)
        return NULL;
    int nd = 0;
    if (keep)
        t->shape[nd++] = hi - lo;
    for (int d = 0; d < sl->ndim; d++)
        t->shape[nd++] = sl->shape[d];
    t->ndim = nd;
    oi__contiguous_strides(nd, t->shape, t->strides);
    t->offset = lo * oi__entry_numel(sl);
    if (!keep || !oi__lend_views(c)) {
        oi__tensor *copy = oi__row_copy(c, t);
        oi__tensor_free(t);
        return copy;
    }
    if (row->lent_hi <= row->lent_lo) {
        row->lent_lo = lo;
        row->lent_hi = hi;
    } else {
        row->lent_lo = lo < row->lent_lo ? lo : row->lent_lo;
        row->lent_hi = hi > row->lent_hi ? hi : row->lent_hi;
    }
    return t;
}

static oi__pentry *oi__pentry_get(oi__ctx *c, const oi__slot *sl, oi__pstate *ps, const oi__tkey *key) {
    oi__pentry *en = oi__pentry_find(ps, key);
    if (en)
        return en;
    oi__pentry fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.key = *key;
    if (oi__table_rowed(sl) && oi__row_can_hold(ps, sl, key)) {
        if (!oi__row_reserve(c, sl, ps, key))
            return NULL;
    } else if (!(fresh.value = oi__pentry_fresh(c, sl, fresh.counts))) {
        return NULL;
    }
    if (!arrput(ps->entries, fresh)) {
        oi__tensor_free(fresh.value);
        return NULL;
    }
    if (!oi__pentry_index(ps, key, (int)arrlen(ps->entries) - 1)) {
        oi__tensor_free(fresh.value);
        arrpop(ps->entries);
        return NULL;
    }
    return &arrlast(ps->entries);
}

/* Copies the overlapping top-left block of src into dst (same rank). */
static void oi__copy_block(oi__tensor *dst, const oi__tensor *src) {
    int nd = src->ndim;
    int64_t extent[OI_MAX_DIMS], idx[OI_MAX_DIMS] = {0}, dst_strides[OI_MAX_DIMS], src_strides[OI_MAX_DIMS];
    int64_t total = 1;
    for (int d = 0; d < nd; d++) {
        extent[d] = src->shape[d] < dst->shape[d] ? src->shape[d] : dst->shape[d];
        total *= extent[d];
    }
    oi__contiguous_strides(nd, dst->shape, dst_strides);
    oi__contiguous_strides(nd, src->shape, src_strides);
    for (int64_t i = 0; i < total; i++) {
        int64_t so = 0, dof = 0;
        for (int d = 0; d < nd; d++) {
            so += idx[d] * src_strides[d];
            dof += idx[d] * dst_strides[d];
        }
        oi__store_bits(dst->dtype, oi__tensor_data(dst), dof, oi__load_bits(src->dtype, oi__tensor_data(src), so));
        for (int d = nd - 1; d >= 0 && ++idx[d] == extent[d]; d--)
            idx[d] = 0;
    }
}

/* Raises an entry's auto_dim counts to at least `want`; data kept top-left. */
static oi_status oi__pentry_grow(oi__ctx *c, const oi__slot *sl, oi__pentry *en, const int64_t *want,
                                 const oi__src *src) {
    bool grow = false;
    int64_t counts[OI_MAX_DIMS];
    for (int a = 0; a < sl->n_auto; a++) {
        counts[a] = want[a] > en->counts[a] ? want[a] : en->counts[a];
        int64_t max = sl->fixed[sl->auto_pos[a]];
        if (max >= 0 && counts[a] > max)
            return oi__fail_at(OI_ERROR_RUNTIME, src, "auto_dim %s exceeds fixed max %lld for %s (asked for %lld)", sl->name,
                               (long long)max, sl->decl->table_indices[sl->auto_pos[a]], (long long)counts[a]);
        grow |= counts[a] != en->counts[a];
    }
    if (!grow)
        return OI_OK;
    oi__tensor *bigger = oi__pentry_fresh(c, sl, counts);
    if (!bigger)
        return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, src, "%s", oi_last_error());
    oi__copy_block(bigger, en->value);
    oi__tensor_free(en->value);
    en->value = bigger;
    memcpy(en->counts, counts, sizeof counts);
    return OI_OK;
}

static oi_status oi__persistent_scalar(oi__ctx *c, int s, int64_t *out) {
    const oi__slot *sl = oi__slot_of(c->exec, s);
    oi__tkey key;
    memset(&key, 0, sizeof key);
    oi__lock(c);
    oi__pentry *en = sl->is_table ? NULL : oi__pentry_get(c, sl, &c->exec->pstates[s], &key);
    if (en && oi__shape_numel(en->value->ndim, en->value->shape) == 1)
        *out = oi__load_i64(en->value->dtype, oi__tensor_data(en->value), 0);
    else
        en = NULL;
    oi__unlock(c);
    if (!en)
        return oi__fail(OI_ERROR_RUNTIME, "%s is not a persistent scalar", sl->name);
    return OI_OK;
}

/* One resolved position of a table access: [lo, hi) and whether it keeps a dim. */
typedef struct oi__span { int64_t lo, hi; bool keep; } oi__span;

static oi_status oi__check_key(const oi__slot *sl, int pos, int64_t v, const oi__src *src) {
    if (v < 0)
        return oi__fail_at(OI_ERROR_RUNTIME, src, "%s: index %s = %lld is negative", sl->name, sl->decl->table_indices[pos],
                           (long long)v);
    if (v >= OI__MAX_ELEMENTS) /* sizes (index + 1) and element counts stay far from overflowing */
        return oi__fail_at(OI_ERROR_RUNTIME, src, "%s: index %s = %lld is too large (at most 2^60 - 1)", sl->name,
                           sl->decl->table_indices[pos], (long long)v);
    if (sl->fixed[pos] >= 0 && v >= sl->fixed[pos])
        return oi__fail_at(OI_ERROR_RUNTIME, src, "cache table %s index %s = %lld exceeds fixed size %lld", sl->name,
                           sl->decl->table_indices[pos], (long long)v, (long long)sl->fixed[pos]);
    return OI_OK;
}

/* Resolves every table index position of an access (missing = whole dim),
 * growing the sizes to what single indices and slice ends name. */
static oi_status oi__resolve_spans(oi__ctx *c, const oi__pnode *pn, const oi__slot *sl, oi__pstate *ps, oi__span *spans,
                                   int64_t *auto_want) {
    const oi__src *src = &pn->ir->src;
    int n_access = (int)arrlen(pn->access);
    int key_of_pos[OI_MAX_DIMS], auto_of_pos[OI_MAX_DIMS];
    for (int k = 0; k < OI_MAX_DIMS; k++)
        key_of_pos[k] = auto_of_pos[k] = -1;
    for (int k = 0; k < sl->n_keys; k++)
        key_of_pos[sl->key_pos[k]] = k;
    for (int a = 0; a < sl->n_auto; a++) {
        auto_of_pos[sl->auto_pos[a]] = a;
        auto_want[a] = 0;
    }
    for (int pos = 0; pos < sl->n_indices; pos++) {
        const oi__pindex *ix = pos < n_access ? &pn->access[pos] : NULL;
        int k = key_of_pos[pos];
        int64_t v = 0;
        oi_status st;
        if (auto_of_pos[pos] >= 0) {
            if (ix && !ix->is_slice) {
                st = oi__eval_expr(c, &ix->single, src, &v);
                if (st != OI_OK)
                    return st;
                if (v < 0)
                    return oi__fail_at(OI_ERROR_RUNTIME, src, "%s: auto_dim index %lld is negative", sl->name, (long long)v);
                if (v >= OI__MAX_ELEMENTS)
                    return oi__fail_at(OI_ERROR_RUNTIME, src, "%s: auto_dim index %lld is too large (at most 2^60 - 1)",
                                       sl->name, (long long)v);
                auto_want[auto_of_pos[pos]] = v;
            }
            continue;
        }
        oi__span *sp = &spans[k];
        if (ix && !ix->is_slice) {
            if ((st = oi__eval_expr(c, &ix->single, src, &v)) != OI_OK || (st = oi__check_key(sl, pos, v, src)) != OI_OK)
                return st;
            sp->lo = v;
            sp->hi = v + 1;
            sp->keep = false;
        } else {
            int64_t size = ps->sizes[k], lo = 0, hi = size;
            if (ix && ix->has_start && (st = oi__eval_expr(c, &ix->start, src, &lo)) != OI_OK)
                return st;
            if (ix && ix->has_end) {
                if ((st = oi__eval_expr(c, &ix->end, src, &hi)) != OI_OK)
                    return st;
                if (hi < 0)
                    hi += size; /* a negative end counts from the current size */
            }
            if (lo < 0 || hi < lo)
                return oi__fail_at(OI_ERROR_RUNTIME, src, "%s: slice %lld..%lld of index %s is empty or reversed (size %lld)",
                                   sl->name, (long long)lo, (long long)hi, sl->decl->table_indices[pos], (long long)size);
            if (hi > lo && (st = oi__check_key(sl, pos, hi - 1, src)) != OI_OK)
                return st;
            sp->lo = lo;
            sp->hi = hi;
            sp->keep = true;
        }
        if (sp->hi > ps->sizes[k])
            ps->sizes[k] = sp->hi;
    }
    return OI_OK;
}

/* The key named by spans that are all single indices. */
static bool oi__spans_key(const oi__slot *sl, const oi__span *spans, oi__tkey *key) {
    memset(key, 0, sizeof *key);
    for (int k = 0; k < sl->n_keys; k++) {
        if (spans[k].keep)
            return false;
        key->k[k] = spans[k].lo;
    }
    return true;
}

/* Gathers the entries a sliced access names: [len of kept spans] ++ entry shape. */
static oi__tensor *oi__gather(oi__ctx *c, const oi__slot *sl, oi__pstate *ps, const oi__span *spans) {
    int64_t shape[OI_MAX_DIMS * 2];
    int nd = 0;
    int64_t count = 1;
    for (int k = 0; k < sl->n_keys; k++) {
        int64_t len = spans[k].hi - spans[k].lo;
        if (spans[k].keep)
            shape[nd++] = len;
        if (len != 0 && count > OI__MAX_ELEMENTS / len) {
            oi__fail(OI_ERROR_OUT_OF_MEMORY, "out of memory: the slice of %s names more than 2^60 entries", sl->name);
            return NULL;
        }
        count *= len;
    }
    if (nd + sl->ndim > OI_MAX_DIMS) {
        oi__fail(OI_ERROR_UNSUPPORTED, "%s: the slice has rank %d, more than %d", sl->name, nd + sl->ndim, OI_MAX_DIMS);
        return NULL;
    }
    for (int d = 0; d < sl->ndim; d++)
        shape[nd++] = sl->shape[d];
    oi__tensor *out = oi__tensor_new(sl->dtype, nd, shape);
    oi__tensor *fresh = out ? oi__pentry_fresh(c, sl, NULL) : NULL;
    if (!fresh) {
        oi__tensor_free(out);
        return NULL;
    }
    size_t entry_bytes = (size_t)oi_dtype_nbytes(sl->dtype, (uint64_t)oi__shape_numel(sl->ndim, sl->shape));
    oi__tkey key;
    memset(&key, 0, sizeof key);
    for (int k = 0; k < sl->n_keys; k++)
        key.k[k] = spans[k].lo;
    bool rowed = oi__table_rowed(sl);
    for (int64_t i = 0; i < count; i++) {
        const void *src = oi__tensor_data(fresh);
        const oi__pentry *en = oi__pentry_find(ps, &key);
        if (en && en->value) {
            src = oi__tensor_data(en->value);
        } else if (rowed) {
            oi__prow *row = oi__row_find(ps, sl, &key);
            if (row && key.k[sl->n_keys - 1] < row->buf->shape[0] && oi__storage_sync_host(row->buf->storage) == OI_OK)
                src = oi__row_slot(row, sl, key.k[sl->n_keys - 1]);
        }
        memcpy((char *)oi__tensor_data(out) + (size_t)i * entry_bytes, src, entry_bytes);
        for (int k = sl->n_keys - 1; k >= 0 && ++key.k[k] == spans[k].hi; k--)
            key.k[k] = spans[k].lo;
    }
    oi__tensor_free(fresh);
    return out;
}

/* What a cache node's access names: the variable's slot and state, the
 * spans of its indices and, when they are all single indices, one key. */
typedef struct oi__access {
    const oi__slot *sl;
    oi__pstate *ps;
    oi__span spans[OI_MAX_DIMS];
    int64_t want[OI_MAX_DIMS]; /* the @auto_dim counts it asks for */
    oi__tkey key;
    bool single;               /* one entry (key valid), not a slice */
} oi__access;

static oi_status oi__access_resolve(oi__ctx *c, const oi__pnode *pn, oi__access *a) {
    a->sl = oi__slot_of(c->exec, pn->var);
    a->ps = &c->exec->pstates[pn->var];
    oi_status st = oi__resolve_spans(c, pn, a->sl, a->ps, a->spans, a->want);
    if (st == OI_OK)
        a->single = oi__spans_key(a->sl, a->spans, &a->key);
    return st;
}

/* cache.read: the value an access names, as a new tensor. */
static oi__tensor *oi__cache_get(oi__ctx *c, const oi__pnode *pn) {
    oi__access a;
    if (oi__access_resolve(c, pn, &a) != OI_OK)
        return NULL;
    const oi__slot *sl = a.sl;
    int last = sl->n_keys - 1;
    if (oi__table_rowed(sl) && a.spans[last].hi > a.spans[last].lo) {
        bool one_row = true; /* every key but the last is a single index */
        for (int k = 0; k < last; k++)
            one_row &= !a.spans[k].keep;
        if (one_row) {
            oi__tkey key; /* the first slot's */
            memset(&key, 0, sizeof key);
            for (int k = 0; k <= last; k++)
                key.k[k] = a.spans[k].lo;
            oi__tkey end = key;
            end.k[last] = a.spans[last].hi - 1;
            oi__prow *row;
            if (a.single) { /* the entry is made, in its row or on its own */
                oi__pentry *en = oi__pentry_get(c, sl, a.ps, &key);
                if (!en || en->value)
                    return en ? oi__tensor_clone(en->value) : NULL;
                row = oi__row_find(a.ps, sl, &key);
            } else if (oi__row_can_hold(a.ps, sl, &end)) {
                row = oi__row_reserve(c, sl, a.ps, &end);
            } else {
                return oi__gather(c, sl, a.ps, a.spans);
            }
            return row ? oi__row_read(c, sl, row, a.spans[last].lo, a.spans[last].hi, a.spans[last].keep) : NULL;
        }
    }
    if (!a.single)
        return oi__gather(c, a.sl, a.ps, a.spans);
    oi__pentry *en = oi__pentry_get(c, a.sl, a.ps, &a.key);
    if (!en || oi__pentry_grow(c, a.sl, en, a.want, &pn->ir->src) != OI_OK)
        return NULL;
    return oi__tensor_clone(en->value);
}

/* Whether value goes into the row on the device: either is there already
 * (the value computed there, or the row read by a device op), and the
 * value is contiguous and apart from the row. */
static bool oi__row_write_on_device(const oi__backend *dev, const oi__prow *row, const oi__tensor *value) {
    const oi__storage *v = value->storage, *r = row->buf->storage;
    return dev && oi__tensor_is_contiguous(value) && v != r &&
           ((v->device_owner == dev && v->host_stale) || r->device_owner == dev);
}

/* Writes value (the entry's dtype and shape) into its row's slot. */
static oi_status oi__row_write(oi__ctx *c, const oi__slot *sl, oi__pstate *ps, const oi__tkey *key, const oi__tensor *value) {
    oi__prow *row = oi__row_find(ps, sl, key);
    int64_t pos = key->k[sl->n_keys - 1];
    const oi__backend *dev = oi__row_device(c);
    if (oi__row_write_on_device(dev, row, value)) {
        oi_status st = oi__row_unshare(row, pos);
        if (st == OI_OK && value->storage != row->buf->storage)
            return dev->write_into(c->exec->sim->backend_ctx, row->buf->storage, (uint64_t)pos * oi__entry_nbytes(sl), value);
        if (st != OI_OK)
            return st;
    }
    oi_status synced = oi__storage_sync_host(value->storage);
    if (synced != OI_OK)
        return synced;
    oi__tensor *holder = oi__tensor_share(value); /* value may view this row: keep its bytes */
    oi__tensor *packed = holder && !oi__tensor_is_contiguous(value) ? oi__tensor_clone(value) : NULL;
    oi_status st = !holder || (!packed && !oi__tensor_is_contiguous(value)) ? OI_ERROR_OUT_OF_MEMORY : OI_OK;
    if (st == OI_OK)
        st = oi__row_writable(row, pos);
    if (st == OI_OK) {
        const oi__tensor *src = packed ? packed : value;
        memmove(oi__row_slot(row, sl, pos),
                (const char *)oi__tensor_data(src) + (size_t)src->offset * (oi_dtype_bits(sl->dtype) / 8),
                oi__entry_nbytes(sl));
    }
    oi__tensor_free(packed);
    oi__tensor_free(holder);
    return st;
}

static oi_status oi__cache_put(oi__ctx *c, const oi__pnode *pn, const oi__tensor *value) {
    oi__access a;
    oi_status st = oi__access_resolve(c, pn, &a);
    if (st != OI_OK)
        return st;
    if (!a.single)
        return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "cache.write needs single indices");
    const oi__slot *sl = a.sl;
    oi__pentry *en = oi__pentry_get(c, sl, a.ps, &a.key);
    if (!en)
        return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, &pn->ir->src, "%s", oi_last_error());
    if ((st = oi__pentry_grow(c, sl, en, a.want, &pn->ir->src)) != OI_OK)
        return st;
    oi_dtype want_dtype = en->value ? en->value->dtype : sl->dtype;
    int want_ndim = en->value ? en->value->ndim : sl->ndim;
    const int64_t *want_shape = en->value ? en->value->shape : sl->shape;
    if (value->dtype != want_dtype || !oi__tensor_matches(value, want_dtype, want_ndim, want_shape)) {
        char want_text[64] = "", have_text[64] = "";
        for (int d = 0; d < want_ndim; d++)
            snprintf(want_text + strlen(want_text), sizeof want_text - strlen(want_text), d ? ", %lld" : "%lld",
                     (long long)want_shape[d]);
        for (int d = 0; d < value->ndim; d++)
            snprintf(have_text + strlen(have_text), sizeof have_text - strlen(have_text), d ? ", %lld" : "%lld",
                     (long long)value->shape[d]);
        return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "cache.write: %s holds %s[%s] here, the value is %s[%s]", sl->name,
                           oi_dtype_name(want_dtype), want_text, oi_dtype_name(value->dtype), have_text);
    }
    if (!en->value)
        return oi__row_write(c, sl, a.ps, &a.key, value);
    if ((st = oi__storage_sync_host(value->storage)) != OI_OK)
        return st;
    oi__tensor *copy = oi__tensor_clone(value);
    if (!copy)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__tensor_free(en->value);
    en->value = copy;
    return OI_OK;
}

static oi_status oi__cache_step(oi__ctx *c, const oi__pnode *pn, int64_t amount) {
    oi__access a;
    oi_status st = oi__access_resolve(c, pn, &a);
    if (st != OI_OK)
        return st;
    if (!a.single)
        return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "cache.increment/decrement needs single indices");
    oi__pentry *en = oi__pentry_get(c, a.sl, a.ps, &a.key);
    if (!en)
        return OI_ERROR_OUT_OF_MEMORY;
    oi_dtype dtype = a.sl->dtype;
    void *data;
    int64_t n;
    if (en->value) {
        dtype = en->value->dtype;
        data = oi__tensor_data(en->value);
        n = oi__shape_numel(en->value->ndim, en->value->shape);
    } else {
        oi__prow *row = oi__row_find(a.ps, a.sl, &a.key);
        int64_t pos = a.key.k[a.sl->n_keys - 1];
        if ((st = oi__row_writable(row, pos)) != OI_OK)
            return st;
        data = oi__row_slot(row, a.sl, pos);
        n = oi__entry_numel(a.sl);
    }
    for (int64_t i = 0; i < n; i++) {
        if (oi__dtype_is_float(dtype))
            oi__store_f64(dtype, data, i, oi__load_f64(dtype, data, i) + (double)amount);
        else
            oi__store_i64(dtype, data, i, (int64_t)((uint64_t)oi__load_i64(dtype, data, i) + (uint64_t)amount));
    }
    return OI_OK;
}

/* cache.reset: K clears all, K[l] the entries under that prefix, K[l, t] one. */
static oi_status oi__cache_reset(oi__ctx *c, const oi__pnode *pn) {
    oi_executor *e = c->exec;
    const oi__slot *sl = oi__slot_of(e, pn->var);
    oi__pstate *ps = &e->pstates[pn->var];
    int n_access = (int)arrlen(pn->access);
    int64_t prefix[OI_MAX_DIMS];
    bool given[OI_MAX_DIMS] = {false};
    for (int k = 0; k < sl->n_keys; k++) {
        int pos = sl->key_pos[k];
        if (pos < n_access) {
            oi_status st = oi__eval_expr(c, &pn->access[pos].single, &pn->ir->src, &prefix[k]);
            if (st != OI_OK)
                return st;
            given[k] = true;
        }
    }
    bool any_given = false;
    for (int k = 0; k < sl->n_keys; k++)
        any_given |= given[k];
    oi__tensor *fresh = NULL; /* what a reset slot of a row holds again */
    if (oi__table_rowed(sl) && !any_given)
        oi__rows_clear(ps);
    else if (oi__table_rowed(sl) && !(fresh = oi__pentry_fresh(c, sl, NULL)))
        return OI_ERROR_OUT_OF_MEMORY;
    oi__pstate kept;
    memset(&kept, 0, sizeof kept);
    kept.rows = ps->rows;
    kept.last_row = ps->last_row;
    oi_status st = OI_OK;
    for (int i = 0; i < (int)arrlen(ps->entries); i++) {
        oi__pentry *en = &ps->entries[i];
        bool match = true;
        for (int k = 0; k < sl->n_keys; k++)
            match &= !given[k] || en->key.k[k] == prefix[k];
        if (match && fresh && !en->value) {
            oi__prow *row = oi__row_find(ps, sl, &en->key);
            int64_t pos = en->key.k[sl->n_keys - 1];
            oi_status w = oi__row_writable(row, pos);
            if (w == OI_OK)
                memcpy(oi__row_slot(row, sl, pos), oi__tensor_data(fresh), oi__entry_nbytes(sl));
            st = st == OI_OK ? w : st;
        }
        if (match) {
            oi__pentry_clear(en);
            continue;
        }
        if (!arrput(kept.entries, *en)) { /* out of memory: the entry is lost, not leaked */
            oi__pentry_clear(en);
            continue;
        }
        for (int k = 0; k < sl->n_keys; k++)
            if (en->key.k[k] + 1 > kept.sizes[k])
                kept.sizes[k] = en->key.k[k] + 1;
    }
    oi__tensor_free(fresh);
    arrfree(ps->entries);
    oi__free(ps->slots);
    *ps = kept;
    if (arrlen(ps->entries) && !oi__pstate_rehash(ps, (size_t)arrlen(ps->entries)))
        return OI_ERROR_OUT_OF_MEMORY;
    return st;
}

/* A persistent variable as one tensor, for fetch: the value, or the whole
 * table stacked ([sizes...] ++ entry shape). */
static oi__tensor *oi__persistent_snapshot(oi_executor *e, int s) {
    oi__ctx *c = &e->main;
    const oi__slot *sl = oi__slot_of(e, s);
    oi__pstate *ps = &e->pstates[s];
    oi__tensor *out = NULL;
    oi__lock(c);
    if (!sl->is_table) {
        oi__tkey key;
        memset(&key, 0, sizeof key);
        oi__pentry *en = oi__pentry_get(c, sl, ps, &key);
        out = en ? oi__tensor_clone(en->value) : NULL;
    } else if (sl->n_auto > 0) {
        oi__fail(OI_ERROR_UNSUPPORTED, "%s is a table of @auto_dim matrices of different sizes: fetch them with cache.read",
                 sl->name);
    } else {
        oi__span spans[OI_MAX_DIMS];
        for (int k = 0; k < sl->n_keys; k++) {
            spans[k].lo = 0;
            spans[k].hi = ps->sizes[k];
            spans[k].keep = true;
        }
        out = oi__gather(c, sl, ps, spans);
    }
    oi__unlock(c);
    return out;
}

static oi_status oi__exec_cache(oi__ctx *c, const oi__pnode *pn) {
    const oi__node *n = pn->ir;
    oi_status st = OI_OK;
    const oi__tensor *src = NULL;
    oi__tensor *widened = NULL; /* an f16/bf16 activation written to an f32 cache */
    if (n->kind == OI__NODE_CACHE_WRITE) {
        src = oi__value(c, pn->out); /* brought to the host by the write where it must be */
        if (!src)
            return oi__node_error(pn, OI_ERROR_RUNTIME);
        oi_dtype logical = oi__logical_dtype(c->exec, pn->out, src);
        if (logical != src->dtype && oi__storage_sync_host(src->storage) != OI_OK)
            return oi__node_error(pn, OI_ERROR_RUNTIME);
        if (logical != src->dtype && !(src = widened = oi__converted(c, src, logical)))
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
    }
    oi__lock(c);
    switch (n->kind) {
    case OI__NODE_CACHE_READ: {
        oi__tensor *t = oi__cache_get(c, pn);
        if (t && (st = oi__check_runtime_dims(oi__slot_of(c->exec, pn->out), t->ndim, t->shape, &n->src)) != OI_OK)
            oi__tensor_free(t);
        else if (t)
            oi__set_value(c, pn->out, t);
        else
            st = OI_ERROR_RUNTIME;
        break;
    }
    case OI__NODE_CACHE_WRITE: st = oi__cache_put(c, pn, src); break;
    case OI__NODE_CACHE_INCREMENT: st = oi__cache_step(c, pn, n->amount ? n->amount : 1); break;
    case OI__NODE_CACHE_DECREMENT: st = oi__cache_step(c, pn, -(n->amount ? n->amount : 1)); break;
    case OI__NODE_CACHE_RESET: st = oi__cache_reset(c, pn); break;
    default: break;
    }
    oi__unlock(c);
    oi__tensor_free(widened);
    return st == OI_OK ? OI_OK : oi__node_error(pn, st);
}
