/* executor.c - the simulator: runs a validated graph (plan.h) step by step.
 *
 * State lives in contexts: the entry context owns one value per slot
 * (variable); consumer blocks started by `yield` run on worker threads with
 * a private copy of those values. Persistent state (caches, tables,
 * auto_dim matrices) belongs to the executor and survives steps.
 *
 * Lifetimes, per the seed README:
 *   dynamic    set by oi_executor_insert between steps; a step uses what was
 *              inserted since the previous step, else model data/@init/zeros
 *   volatile   model data, @init or zeros at the start of every step; mutable
 *   constant   model data (or @init); read-only (validation rejects writes)
 *   persistent survives steps; touched only by cache operations
 *   assign     temporaries, dropped at the start of every step
 * Values of a step stay fetchable after it, until the next step starts. */
#include "internal.h"
#include "plan.h"

#include <pthread.h>
#include <time.h>

/* ------------------------------------------------------------------ */
/* Types                                                               */
/* ------------------------------------------------------------------ */

/* One trace event (the JSON form of the seed). */
typedef struct oi__tev {
    const char *block_name;
    uint32_t node_index;
    const char *uuid;
    oi_event_kind kind;
    const char *op_name; /* the op's name; NULL unless kind is OP_EXECUTE */
    const char *scope;   /* the node's OI_SCOPE path, NULL outside scopes */
    char **params; /* stb array of owned strings */
    char **output;
    uint64_t nanos;
    bool on_device;   /* the op ran on a device backend ...            */
    uint64_t gpu_seq; /* ... as its run_op call number gpu_seq        */
    double gpu_micros; /* its GPU time (timestamp queries), -1 unknown */
} oi__tev;

/* A persistent table key: the values of the non-auto indices. */
typedef struct oi__tkey { int64_t k[OI_MAX_DIMS]; } oi__tkey;

typedef struct oi__pentry {
    oi__tkey key;
    oi__tensor *value;
    int64_t counts[OI_MAX_DIMS]; /* @auto_dim growth of this entry */
} oi__pentry;

/* The persistent state of one variable. Plain scalars/tensors and auto_dim
 * matrices are a table with an empty key (one entry). */
typedef struct oi__pstate {
    oi__pentry *entries;  /* stb array                  */
    int *slots;           /* open addressing: entry index or -1 */
    size_t cap;           /* power of two (0: no index) */
    int64_t sizes[OI_MAX_DIMS]; /* per key position: max index + 1 */
} oi__pstate;

typedef struct oi__frame {
    const oi__pnode *nodes;
    int count, pos;
    int block;
    const oi__pnode *loop; /* NULL: a block frame */
    int64_t loop_value, loop_end;
} oi__frame;

typedef struct oi__prefix_cache { char *key; oi__tensor *value; } oi__prefix_cache;

/* Bytes of last step's temporaries, kept for this step's: reusing them
 * spares the allocator's page faults and heap trimming on every step. */
typedef struct oi__spare {
    void *data;
    size_t nbytes;
} oi__spare;

typedef struct oi__ctx {
    oi_executor *exec;
    oi__spare *spares;     /* stb array; filled by the main context only  */
    oi__tensor **values;   /* per slot                                   */
    bool *written;         /* per slot: written by this context           */
    oi__frame *frames;     /* stb array                                   */
    bool use_backend;      /* consumers run on the CPU                    */
    bool record;           /* record trace events                         */
    oi__tev *events;       /* consumer contexts keep their own events     */
    oi__prefix_cache *prefix; /* model name -> tensor (borrowed data)     */
    const int *yielded;    /* entry: slots handed to consumers (stb)      */
    int lock_depth;        /* this context holds exec->lock (re-entrant)  */
    bool ran_on_device;    /* the node just run went to the device backend */
    uint64_t device_seq;   /* ... as this run_op call number              */
} oi__ctx;

static void oi__spares_clear(oi__ctx *c) {
    for (ptrdiff_t i = 0; i < arrlen(c->spares); i++)
        oi__free(c->spares[i].data);
    arrsetlen(c->spares, 0);
}

/* Frees a temporary, keeping its bytes for oi__ctx_new_tensor. */
static void oi__ctx_recycle(oi__ctx *c, oi__tensor *t) {
    oi__spare sp;
    sp.data = oi__tensor_release_data(t, &sp.nbytes);
    if (sp.data && !arrput(c->spares, sp))
        oi__free(sp.data);
}

/* A tensor on spare bytes of exactly its size when there are, zeroed when
 * `zero` (see oi__tensor_adopt). */
static oi__tensor *oi__ctx_new_tensor(oi__ctx *c, oi_dtype dtype, int ndim, const int64_t *shape, bool zero) {
    size_t nbytes = (size_t)oi_dtype_nbytes(dtype, (uint64_t)oi__shape_numel(ndim, shape));
    for (ptrdiff_t i = 0; i < arrlen(c->spares); i++) {
        if (c->spares[i].nbytes == nbytes) {
            void *data = c->spares[i].data;
            c->spares[i] = arrpop(c->spares);
            return oi__tensor_adopt(dtype, ndim, shape, data, zero);
        }
    }
    return oi__tensor_adopt(dtype, ndim, shape, NULL, zero);
}

/* The bytes behind a fetched view, kept until the variable is fetched again,
 * when a fetch of the same size refills them (no allocation per step). */
typedef struct oi__fetch_buffer {
    void *data;
    size_t nbytes;
} oi__fetch_buffer;

typedef struct oi__consumer {
    oi__ctx ctx;
    int block;
    pthread_t thread;
    bool started;
    oi_status status;
    char error[1024];
    const int *yields;     /* the slots its final yield names             */
} oi__consumer;

struct oi_executor {
    oi_simulator *sim;
    oi__plan *plan;
    oi__ctx main;
    oi__pstate *pstates;   /* per slot (used for persistent slots)        */
    bool *inserted;        /* per slot: inserted since the last step      */
    oi__fetch_buffer *fetched; /* per slot: the last fetch's buffer       */
    bool in_step;
    bool trace_on, timer_on;
    oi__tev *trace;        /* stb array                                   */
    ptrdiff_t trace_step_start; /* the first event of the current step    */
    char *last_desc;       /* description of the last iterated node       */
    char **warnings;       /* stb array                                   */
    bool warned[OI_OP_COUNT];
    oi__consumer **pending;/* consumers started by the entry's yield      */
    int *pending_vars;
    pthread_mutex_t lock;  /* model reads and persistent state            */
};

static const char *const oi__event_names[] = {
    "Assign", "OpExecute", "CacheRead", "CacheWrite", "CacheIncrement", "CacheDecrement", "CacheReset",
    "Barrier", "Dep", "Transfer", "Yield", "Await", "Branch", "Loop", "Return",
};

static oi_event_kind oi__event_kind(oi__node_kind k) {
    switch (k) {
    case OI__NODE_ASSIGN: return OI_EVENT_ASSIGN;
    case OI__NODE_OP: return OI_EVENT_OP_EXECUTE;
    case OI__NODE_CACHE_READ: return OI_EVENT_CACHE_READ;
    case OI__NODE_CACHE_WRITE: return OI_EVENT_CACHE_WRITE;
    case OI__NODE_CACHE_INCREMENT: return OI_EVENT_CACHE_INCREMENT;
    case OI__NODE_CACHE_DECREMENT: return OI_EVENT_CACHE_DECREMENT;
    case OI__NODE_CACHE_RESET: return OI_EVENT_CACHE_RESET;
    case OI__NODE_BARRIER: return OI_EVENT_BARRIER;
    case OI__NODE_DEP: return OI_EVENT_DEP;
    case OI__NODE_TRANSFER: return OI_EVENT_TRANSFER;
    case OI__NODE_YIELD: return OI_EVENT_YIELD;
    case OI__NODE_AWAIT: return OI_EVENT_AWAIT;
    case OI__NODE_BRANCH: return OI_EVENT_BRANCH;
    case OI__NODE_LOOP: return OI_EVENT_LOOP;
    case OI__NODE_RETURN: return OI_EVENT_RETURN;
    }
    return OI_EVENT_RETURN;
}

static uint64_t oi__now_ns(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static const oi__slot *oi__slot_of(const oi_executor *e, int s) { return &e->plan->slots[s]; }

/* The executor lock guards model reads and persistent state against the
 * consumer threads; a context may take it again while holding it. */
static void oi__lock(oi__ctx *c) {
    if (c->lock_depth++ == 0)
        pthread_mutex_lock(&c->exec->lock);
}

static void oi__unlock(oi__ctx *c) {
    if (--c->lock_depth == 0)
        pthread_mutex_unlock(&c->exec->lock);
}

/* ------------------------------------------------------------------ */
/* Element conversion (insert, fetch, metadata)                        */
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
/* Values                                                              */
/* ------------------------------------------------------------------ */

static void oi__fill_init(oi__tensor *t, const oi__var *v) {
    if (!v || v->init_kind == OI__INIT_NONE)
        return;
    int64_t n = oi__shape_numel(t->ndim, t->shape);
    void *data = oi__tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        if (v->init_kind == OI__INIT_FLOAT)
            oi__store_f64(t->dtype, data, i, v->init_float);
        else
            oi__store_i64(t->dtype, data, i, v->init_int);
    }
}

/* A model tensor's bytes: read (lazily, once) under the executor lock so
 * that consumer threads can load too. */
static oi_status oi__model_bytes(oi__ctx *c, const oi_tensor_info *t, const void **data) {
    oi__lock(c);
    oi_status st = oi_model_tensor_data(c->exec->plan->model, t, data);
    oi__unlock(c);
    return st;
}

static oi__tensor *oi__wrap_model(oi__ctx *c, const oi_tensor_info *t) {
    const void *data = NULL;
    if (oi__model_bytes(c, t, &data) != OI_OK) {
        oi__error_prefix("loading model tensor '%s'", t->name);
        return NULL;
    }
    int64_t shape[OI_MAX_DIMS];
    int nd = (int)t->ndim;
    for (int i = 0; i < nd && i < OI_MAX_DIMS; i++)
        shape[i] = (int64_t)t->dims[i];
    return oi__tensor_wrap(t->dtype, nd, shape, data);
}

/* The value a non-persistent slot starts a step with. */
static oi__tensor *oi__initial_value(oi__ctx *c, int s) {
    const oi__slot *sl = oi__slot_of(c->exec, s);
    if (sl->model_tensor && sl->model_tensor->has_data)
        return oi__wrap_model(c, sl->model_tensor);
    oi__tensor *t = oi__ctx_new_tensor(c, sl->dtype, sl->ndim, sl->shape, true);
    if (!t)
        return NULL;
    if (sl->model_meta) {
        oi_dtype mt = sl->model_meta->type;
        if (oi__dtype_is_float(mt) || oi__dtype_is_float(sl->dtype))
            oi__store_f64(sl->dtype, oi__tensor_data(t), 0, oi__load_f64(mt, sl->model_meta->payload, 0));
        else
            oi__store_i64(sl->dtype, oi__tensor_data(t), 0, oi__load_i64(mt, sl->model_meta->payload, 0));
    } else {
        oi__fill_init(t, sl->decl);
    }
    return t;
}

/* The current value of a slot in a context, materialized on first use. */
static oi__tensor *oi__value(oi__ctx *c, int s) {
    if (!c->values[s]) {
        const oi__slot *sl = oi__slot_of(c->exec, s);
        if (sl->kind == OI__MEM_PERSISTENT || sl->n_indices > 0) {
            oi__fail(OI_ERROR_RUNTIME, "%s is a %s: it has no plain value", sl->name,
                     sl->kind == OI__MEM_PERSISTENT ? "persistent cache (use cache.read)" : "prefix table");
            return NULL;
        }
        c->values[s] = oi__initial_value(c, s);
    }
    return c->values[s];
}

static void oi__set_value(oi__ctx *c, int s, oi__tensor *t) {
    if (c->values[s] != t)
        oi__tensor_free(c->values[s]);
    c->values[s] = t;
    c->written[s] = true;
}

static bool oi__tensor_matches(const oi__tensor *t, oi_dtype dtype, int ndim, const int64_t *shape) {
    if (!t || t->dtype != dtype || t->ndim != ndim)
        return false;
    for (int i = 0; i < ndim; i++)
        if (t->shape[i] != shape[i])
            return false;
    return true;
}

/* A value this context may write in place: its own, contiguous, on the host. */
static oi__tensor *oi__writable(oi__ctx *c, int s) {
    oi__tensor *t = c->values[s];
    if (!t)
        return NULL;
    if (t->storage->borrowed || t->storage->refcount > 1 || t->offset != 0 || !oi__tensor_is_contiguous(t)) {
        if (oi__storage_sync_host(t->storage) != OI_OK)
            return NULL;
        oi__tensor *copy = oi__tensor_clone(t);
        if (!copy)
            return NULL;
        oi__tensor_free(t);
        c->values[s] = t = copy;
    }
    return t;
}

/* Reads an integer from an index expression: literal, loop variable, named
 * size, or a scalar variable (persistent scalars included). */
static oi_status oi__persistent_scalar(oi__ctx *c, int s, int64_t *out);

static oi_status oi__eval_expr(oi__ctx *c, const oi__expr *x, const oi__src *src, int64_t *out) {
    if (!x->ident) {
        *out = x->lit;
        return OI_OK;
    }
    for (int i = (int)arrlen(c->frames) - 1; i >= 0; i--) {
        const oi__frame *f = &c->frames[i];
        if (f->loop && strcmp(f->loop->ir->loop_index, x->ident) == 0) {
            *out = f->loop_value;
            return OI_OK;
        }
    }
    if (oi__plan_size(c->exec->plan, x->ident, out))
        return OI_OK;
    int s = oi__plan_slot(c->exec->plan, x->ident);
    if (s < 0)
        return oi__fail_at(OI_ERROR_RUNTIME, src, "'%s' is not a loop variable, size or variable", x->ident);
    if (oi__slot_of(c->exec, s)->kind == OI__MEM_PERSISTENT)
        return oi__persistent_scalar(c, s, out);
    oi__tensor *t = oi__value(c, s);
    if (!t)
        return oi__fail_at(OI_ERROR_RUNTIME, src, "%s", oi_last_error());
    if (oi__shape_numel(t->ndim, t->shape) != 1)
        return oi__fail_at(OI_ERROR_RUNTIME, src, "expected scalar value: %s has %lld elements", x->ident,
                           (long long)oi__shape_numel(t->ndim, t->shape));
    oi_status st = oi__storage_sync_host(t->storage);
    if (st != OI_OK)
        return st;
    *out = oi__load_i64(t->dtype, oi__tensor_data(t), t->offset);
    return OI_OK;
}

/* ------------------------------------------------------------------ */
/* Persistent state                                                    */
/* ------------------------------------------------------------------ */

static void oi__pentry_clear(oi__pentry *en) { oi__tensor_free(en->value); }

static void oi__pstate_clear(oi__pstate *ps) {
    for (int i = 0; i < (int)arrlen(ps->entries); i++)
        oi__pentry_clear(&ps->entries[i]);
    arrfree(ps->entries);
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

static oi__pentry *oi__pentry_get(oi__ctx *c, const oi__slot *sl, oi__pstate *ps, const oi__tkey *key) {
    oi__pentry *en = oi__pentry_find(ps, key);
    if (en)
        return en;
    oi__pentry fresh;
    memset(&fresh, 0, sizeof fresh);
    fresh.key = *key;
    fresh.value = oi__pentry_fresh(c, sl, fresh.counts);
    if (!fresh.value)
        return NULL;
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
    for (int64_t i = 0; i < count; i++) {
        const oi__pentry *en = oi__pentry_find(ps, &key);
        const oi__tensor *src = en ? en->value : fresh;
        memcpy((char *)oi__tensor_data(out) + (size_t)i * entry_bytes, oi__tensor_data(src), entry_bytes);
        for (int k = sl->n_keys - 1; k >= 0 && ++key.k[k] == spans[k].hi; k--)
            key.k[k] = spans[k].lo;
    }
    oi__tensor_free(fresh);
    return out;
}

/* cache.read: the value an access names, as a new tensor. */
static oi__tensor *oi__cache_get(oi__ctx *c, const oi__pnode *pn) {
    oi_executor *e = c->exec;
    const oi__slot *sl = oi__slot_of(e, pn->var);
    oi__pstate *ps = &e->pstates[pn->var];
    oi__span spans[OI_MAX_DIMS];
    int64_t want[OI_MAX_DIMS];
    oi__tkey key;
    if (oi__resolve_spans(c, pn, sl, ps, spans, want) != OI_OK)
        return NULL;
    if (!oi__spans_key(sl, spans, &key))
        return oi__gather(c, sl, ps, spans);
    oi__pentry *en = oi__pentry_get(c, sl, ps, &key);
    if (!en || oi__pentry_grow(c, sl, en, want, &pn->ir->src) != OI_OK)
        return NULL;
    return oi__tensor_clone(en->value);
}

static oi_status oi__cache_put(oi__ctx *c, const oi__pnode *pn, const oi__tensor *value) {
    oi_executor *e = c->exec;
    const oi__slot *sl = oi__slot_of(e, pn->var);
    oi__pstate *ps = &e->pstates[pn->var];
    oi__span spans[OI_MAX_DIMS];
    int64_t want[OI_MAX_DIMS];
    oi__tkey key;
    oi_status st = oi__resolve_spans(c, pn, sl, ps, spans, want);
    if (st != OI_OK)
        return st;
    if (!oi__spans_key(sl, spans, &key))
        return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "cache.write needs single indices");
    oi__pentry *en = oi__pentry_get(c, sl, ps, &key);
    if (!en)
        return oi__fail_at(OI_ERROR_OUT_OF_MEMORY, &pn->ir->src, "%s", oi_last_error());
    if ((st = oi__pentry_grow(c, sl, en, want, &pn->ir->src)) != OI_OK)
        return st;
    if (value->dtype != en->value->dtype || !oi__tensor_matches(value, en->value->dtype, en->value->ndim, en->value->shape)) {
        char want_text[64] = "", have_text[64] = "";
        for (int d = 0; d < en->value->ndim; d++)
            snprintf(want_text + strlen(want_text), sizeof want_text - strlen(want_text), d ? ", %lld" : "%lld",
                     (long long)en->value->shape[d]);
        for (int d = 0; d < value->ndim; d++)
            snprintf(have_text + strlen(have_text), sizeof have_text - strlen(have_text), d ? ", %lld" : "%lld",
                     (long long)value->shape[d]);
        return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "cache.write: %s holds %s[%s] here, the value is %s[%s]", sl->name,
                           oi_dtype_name(en->value->dtype), want_text, oi_dtype_name(value->dtype), have_text);
    }
    oi__tensor *copy = oi__tensor_clone(value);
    if (!copy)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__tensor_free(en->value);
    en->value = copy;
    return OI_OK;
}

static oi_status oi__cache_step(oi__ctx *c, const oi__pnode *pn, int64_t amount) {
    oi_executor *e = c->exec;
    const oi__slot *sl = oi__slot_of(e, pn->var);
    oi__pstate *ps = &e->pstates[pn->var];
    oi__span spans[OI_MAX_DIMS];
    int64_t want[OI_MAX_DIMS];
    oi__tkey key;
    oi_status st = oi__resolve_spans(c, pn, sl, ps, spans, want);
    if (st != OI_OK)
        return st;
    if (!oi__spans_key(sl, spans, &key))
        return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "cache.increment/decrement needs single indices");
    oi__pentry *en = oi__pentry_get(c, sl, ps, &key);
    if (!en)
        return OI_ERROR_OUT_OF_MEMORY;
    oi__tensor *t = en->value;
    int64_t n = oi__shape_numel(t->ndim, t->shape);
    for (int64_t i = 0; i < n; i++) {
        if (oi__dtype_is_float(t->dtype))
            oi__store_f64(t->dtype, oi__tensor_data(t), i, oi__load_f64(t->dtype, oi__tensor_data(t), i) + (double)amount);
        else
            oi__store_i64(t->dtype, oi__tensor_data(t), i,
                          (int64_t)((uint64_t)oi__load_i64(t->dtype, oi__tensor_data(t), i) + (uint64_t)amount));
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
    oi__pstate kept;
    memset(&kept, 0, sizeof kept);
    for (int i = 0; i < (int)arrlen(ps->entries); i++) {
        oi__pentry *en = &ps->entries[i];
        bool match = true;
        for (int k = 0; k < sl->n_keys; k++)
            match &= !given[k] || en->key.k[k] == prefix[k];
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
    arrfree(ps->entries);
    oi__free(ps->slots);
    *ps = kept;
    if (arrlen(ps->entries) && !oi__pstate_rehash(ps, (size_t)arrlen(ps->entries)))
        return OI_ERROR_OUT_OF_MEMORY;
    return OI_OK;
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

/* ------------------------------------------------------------------ */
/* Trace                                                               */
/* ------------------------------------------------------------------ */

static void oi__tev_free(oi__tev *t) {
    for (int i = 0; i < (int)arrlen(t->params); i++)
        oi__free(t->params[i]);
    for (int i = 0; i < (int)arrlen(t->output); i++)
        oi__free(t->output[i]);
    arrfree(t->params);
    arrfree(t->output);
}

static void oi__push_text(char ***list, const char *text) {
    char *copy = oi__strdup(text ? text : "");
    if (copy && !arrput(*list, copy))
        oi__free(copy);
}

static void oi__push_varref(char ***list, const oi__varref *r) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_varref(&b, r);
    char *text = oi__buf_take(&b);
    if (text && !arrput(*list, text))
        oi__free(text);
}

static void oi__push_access(char ***list, const oi__cache_access *a) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_cache_access(&b, a);
    char *text = oi__buf_take(&b);
    if (text && !arrput(*list, text))
        oi__free(text);
}

/* Params and outputs of a node as the trace shows them. */
static void oi__tev_fill(oi__tev *t, const oi__pnode *pn, const char *taken_block, int64_t loop_start, int64_t loop_end) {
    const oi__node *n = pn->ir;
    char num[64];
    switch (n->kind) {
    case OI__NODE_ASSIGN: oi__push_text(&t->output, n->name); break;
    case OI__NODE_OP:
        for (int i = 0; i < (int)arrlen(n->inputs); i++)
            oi__push_varref(&t->params, &n->inputs[i]);
        oi__push_text(&t->output, n->output);
        break;
    case OI__NODE_CACHE_READ:
        oi__push_access(&t->params, &n->access);
        oi__push_text(&t->output, n->var.name);
        break;
    case OI__NODE_CACHE_WRITE:
        oi__push_text(&t->params, n->var.name);
        oi__push_access(&t->output, &n->access);
        break;
    case OI__NODE_CACHE_INCREMENT:
    case OI__NODE_CACHE_DECREMENT:
        snprintf(num, sizeof num, "%lld", (long long)(n->amount ? n->amount : 1));
        oi__push_text(&t->params, num);
        oi__push_access(&t->output, &n->access);
        break;
    case OI__NODE_CACHE_RESET: oi__push_access(&t->output, &n->access); break;
    case OI__NODE_TRANSFER:
        oi__push_varref(&t->params, &n->src_var);
        oi__push_varref(&t->output, &n->dst_var);
        break;
    case OI__NODE_BRANCH:
        if (n->cond)
            oi__push_text(&t->params, n->cond);
        if (taken_block)
            oi__push_text(&t->output, taken_block);
        break;
    case OI__NODE_LOOP:
        oi__push_text(&t->params, n->loop_index);
        snprintf(num, sizeof num, "%lld", (long long)loop_start);
        oi__push_text(&t->params, num);
        snprintf(num, sizeof num, "%lld", (long long)loop_end);
        oi__push_text(&t->params, num);
        oi__push_text(&t->output, n->loop_name);
        break;
    case OI__NODE_YIELD:
        for (int i = 0; i < (int)arrlen(n->vars); i++)
            oi__push_text(&t->params, n->vars[i]);
        break;
    case OI__NODE_AWAIT:
        for (int i = 0; i < (int)arrlen(n->vars); i++)
            oi__push_text(&t->output, n->vars[i]);
        break;
    case OI__NODE_DEP:
        oi__push_text(&t->params, n->after);
        oi__push_text(&t->params, n->before);
        break;
    case OI__NODE_BARRIER:
    case OI__NODE_RETURN: break;
    }
}

/* Remembers that the node about to run goes to a device backend, and which
 * of its run_op calls it is, so the trace can show its GPU time later. */
static void oi__note_device_op(oi__ctx *c, const oi__backend *be, void *be_ctx) {
    c->ran_on_device = true;
    c->device_seq = 0;
#ifdef OPENINFER_VULKAN
    if (be == &oi__vulkan_backend)
        c->device_seq = oi__vulkan_next_seq(be_ctx);
#else
    (void)be, (void)be_ctx;
#endif
}

/* After a flush: GPU times of this step's device ops into their events. */
static void oi__collect_gpu_times(oi_executor *e) {
#ifdef OPENINFER_VULKAN
    if (e->sim->backend != &oi__vulkan_backend)
        return;
    oi__vulkan_op_time times[256];
    size_t n;
    ptrdiff_t from = e->trace_step_start;
    while ((n = oi__vulkan_take_times(e->sim->backend_ctx, times, 256)) > 0) {
        for (size_t i = 0; i < n; i++) {
            for (ptrdiff_t k = from; k < arrlen(e->trace); k++) {
                oi__tev *t = &e->trace[k];
                if (t->on_device && t->gpu_seq == times[i].seq) {
                    t->gpu_micros = times[i].micros;
                    from = k + 1; /* times come in call order */
                    break;
                }
            }
        }
    }
#else
    (void)e;
#endif
}

static void oi__record(oi__ctx *c, const oi__pnode *pn, uint64_t nanos, const char *taken_block, int64_t loop_start,
                       int64_t loop_end) {
    oi__tev t;
    memset(&t, 0, sizeof t);
    t.block_name = c->exec->plan->blocks[pn->block].ir->name;
    t.node_index = pn->ir->index;
    t.uuid = pn->ir->uuid;
    t.kind = oi__event_kind(pn->ir->kind);
    t.op_name = pn->ir->kind == OI__NODE_OP ? oi_op_name(pn->ir->op) : NULL;
    t.scope = pn->ir->src.scope;
    t.nanos = nanos;
    t.on_device = c->ran_on_device;
    t.gpu_seq = c->device_seq;
    t.gpu_micros = -1.0;
    c->ran_on_device = false;
    oi__tev_fill(&t, pn, taken_block, loop_start, loop_end);
    if (!(c == &c->exec->main ? arrput(c->exec->trace, t) : arrput(c->events, t)))
        oi__tev_free(&t); /* out of memory: the event is not recorded */
}

/* ------------------------------------------------------------------ */
/* Node execution                                                      */
/* ------------------------------------------------------------------ */

static void oi__warn_once(oi_executor *e, oi_op op, const char *why) {
    if (e->warned[op])
        return;
    e->warned[op] = true;
    char *w = oi__sprintf("op %s ran on the CPU: the %s backend does not support it%s%s", oi_op_name(op), e->sim->backend->name,
                          why ? ": " : "", why ? why : "");
    if (w && !arrput(e->warnings, w))
        oi__free(w);
}

/* A prefix-table entry W[l]: the model tensor its pattern names. */
static oi__tensor *oi__prefix_entry(oi__ctx *c, int s, const oi__pindex *idx, const oi__src *src) {
    const oi__slot *sl = oi__slot_of(c->exec, s);
    int64_t values[OI_MAX_DIMS];
    for (int k = 0; k < sl->n_indices; k++)
        if (oi__eval_expr(c, &idx[k].single, src, &values[k]) != OI_OK)
            return NULL;
    char *name = oi__plan_pattern_name(sl, values);
    if (!name)
        return NULL;
    ptrdiff_t i = shgeti(c->prefix, name);
    oi__tensor *t = NULL;
    if (i >= 0) {
        t = c->prefix[i].value;
    } else {
        oi__lock(c);
        const oi_tensor_info *info = oi__plan_prefix_tensor(c->exec->plan, sl, values, src);
        oi__unlock(c);
        t = info ? oi__wrap_model(c, info) : NULL;
        if (t && !shput(c->prefix, name, t)) {
            oi__tensor_free(t); /* out of memory */
            t = NULL;
        } else if (!t && info)
            oi__error_prefix("%s:%d: error: %s%s%s%s", src->file, src->line, src->scope ? "in scope " : "",
                             src->scope ? src->scope : "", src->scope ? ": " : "", src->text);
    }
    oi__free(name);
    return t;
}

static oi_status oi__node_error(const oi__pnode *pn, oi_status st) {
    /* a helper that returned NULL said why (oi__fail): keep OUT_OF_MEMORY */
    if (st == OI_ERROR_RUNTIME && oi__last_status(st) == OI_ERROR_OUT_OF_MEMORY)
        st = OI_ERROR_OUT_OF_MEMORY;
    char why[1536];
    oi__copy_error(why, sizeof why);
    if (strstr(why, ": error: ")) /* already names a statement */
        return st;
    return oi__fail_at(st == OI_OK ? OI_ERROR_RUNTIME : st, &pn->ir->src, "%s", why);
}


/* The backend a node runs on: the simulator's, unless OI_WITH(placement=...)
 * names another. "cpu" is the CPU kernels (inputs come to the host, a later
 * device op uploads the result); a device backend the simulator opened for
 * the placement gets the node, its storages remember their owner. */
static void oi__node_backend(const oi_simulator *sim, const oi__node *n, const oi__backend **be, void **ctx) {
    *be = sim->backend;
    *ctx = sim->backend_ctx;
    const oi__attr *p = oi__node_hint(n, "placement");
    if (!p || p->kind != OI__ATTR_STRING)
        return;
    if (strcmp(p->s, "cpu") == 0) {
        *be = &oi__cpu_backend;
        *ctx = NULL;
        return;
    }
    bool own = strcmp(p->s, sim->backend->name) == 0 || (strcmp(p->s, "gpu") == 0 && sim->backend->to_host);
    int slot = strcmp(p->s, "blas") == 0 ? 1 : 0;
    if (!own && oi__placement_known(p->s) && sim->placed[slot]) {
        *be = sim->placed[slot];
        *ctx = sim->placed_ctx[slot];
    }
}

static oi_status oi__exec_op(oi__ctx *c, const oi__pnode *pn) {
    oi_executor *e = c->exec;
    const oi__node *n = pn->ir;
    const oi__slot *out_slot = oi__slot_of(e, pn->out);
    int n_in = (int)arrlen(pn->inputs);
    const oi__tensor *inputs[8];
    oi__op_sig sigs[8];
    /* in place: the output is input 0; make it ours before anything reads it */
    if (pn->inplace && !oi__value(c, pn->out))
        return oi__node_error(pn, OI_ERROR_RUNTIME);
    for (int i = 0; i < n_in; i++) {
        const oi__tensor *t = pn->input_indices[i] ? oi__prefix_entry(c, pn->inputs[i], pn->input_indices[i], &n->src)
                                                   : oi__value(c, pn->inputs[i]);
        if (!t)
            return oi__node_error(pn, OI_ERROR_RUNTIME);
        inputs[i] = t;
        memset(&sigs[i], 0, sizeof sigs[i]);
        sigs[i].dtype = t->dtype;
        sigs[i].ndim = t->ndim;
        memcpy(sigs[i].shape, t->shape, sizeof sigs[i].shape);
    }
    oi__op_sig sig;
    memset(&sig, 0, sizeof sig);
    oi__pnode *cache = (oi__pnode *)pn; /* the signature cache is this node's scratch */
    oi_status st = OI_OK;
    if (cache->sig_cache && memcmp(cache->sig_cache, sigs, (size_t)n_in * sizeof *sigs) == 0) {
        sig = cache->sig_cache[n_in];
    } else {
        st = oi__op_infer(n->op, pn->attrs, (size_t)arrlen(pn->attrs), sigs, (size_t)n_in, out_slot->dtype, &sig);
        if (st != OI_OK)
            return oi__node_error(pn, st);
        if (!arrsetlen(cache->sig_cache, n_in + 1))
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
        memcpy(cache->sig_cache, sigs, (size_t)n_in * sizeof *sigs);
        cache->sig_cache[n_in] = sig;
    }
    if (sig.dtype != out_slot->dtype)
        return oi__fail_at(OI_ERROR_RUNTIME, &n->src, "output dtype mismatch: op %s produces %s but %s is %s", oi_op_name(n->op),
                           oi_dtype_name(sig.dtype), out_slot->name, oi_dtype_name(out_slot->dtype));
    /* a layout op (reshape, transpose, slice, ...) into a temporary shares its
     * input's storage: no copy (kernels/shape.c). Writers copy on write. */
    if (!pn->inplace && n_in == 1 && out_slot->kind == OI__MEM_TEMP) {
        oi__tensor *view = NULL;
        st = oi__op_view(n->op, pn->attrs, (size_t)arrlen(pn->attrs), inputs[0], &view);
        if (st == OI_OK) {
            oi__set_value(c, pn->out, view);
            return OI_OK;
        }
        if (st != OI_ERROR_UNSUPPORTED)
            return oi__node_error(pn, st);
    }
    const oi__backend *be = &oi__cpu_backend;
    void *be_ctx = NULL;
    if (c->use_backend)
        oi__node_backend(e->sim, n, &be, &be_ctx);
    bool on_backend = be != &oi__cpu_backend &&
                      be->supports_op(be_ctx, n->op, pn->attrs, (size_t)arrlen(pn->attrs), sigs, (size_t)n_in, &sig);
    /* choose the output buffer: in place, reuse the old value, or fresh (not
     * zeroed for a device, which writes it whole: its host bytes are stale) */
    oi__tensor *cur = c->values[pn->out], *out = NULL;
    bool fresh = false;
    if (pn->inplace && cur == inputs[0] && oi__tensor_matches(cur, sig.dtype, sig.ndim, sig.shape)) {
        out = oi__writable(c, pn->out); /* may replace (and free) cur by a private copy */
        for (int i = 0; i < n_in && out; i++)
            if (inputs[i] == cur)
                inputs[i] = out;
        if (!out)
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
    } else if (cur && cur->storage->refcount == 1 && !cur->storage->borrowed && cur->offset == 0 &&
               oi__tensor_matches(cur, sig.dtype, sig.ndim, sig.shape) && oi__tensor_is_contiguous(cur)) {
        out = cur;
        for (int i = 0; i < n_in; i++)
            if (inputs[i]->storage == cur->storage)
                out = NULL;
    }
    if (!out) {
        out = oi__ctx_new_tensor(c, sig.dtype, sig.ndim, sig.shape, !(on_backend && be->to_host));
        fresh = true;
        if (!out)
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
    }
    st = OI_OK;
    /* the simulator's threads serve the CPU kernels and any backend that
     * computes on the host (blas sizes OpenBLAS's threads by it) */
    oi__threadpool *previous = oi__threadpool_lend(e->sim->pool);
    if (on_backend) {
        oi__note_device_op(c, be, be_ctx);
        st = be->run_op(be_ctx, n->op, pn->attrs, (size_t)arrlen(pn->attrs), inputs, (size_t)n_in, out);
    } else {
        /* A host backend (no to_host: blas) covers a few ops by design and
         * its other ops run on the CPU kernels in the same memory at no
         * extra cost: no note. A device backend's fallback copies data. */
        if (be != &oi__cpu_backend && be->to_host)
            oi__warn_once(e, n->op, NULL);
        for (int i = 0; i < n_in && st == OI_OK; i++)
            st = oi__storage_sync_host(inputs[i]->storage);
        if (st == OI_OK)
            st = oi__storage_host_write(out->storage);
        if (st == OI_OK)
            st = oi__op_run_cpu(n->op, pn->attrs, (size_t)arrlen(pn->attrs), inputs, (size_t)n_in, out);
    }
    oi__threadpool_lend(previous);
    if (st != OI_OK) {
        if (fresh)
            oi__tensor_free(out);
        return oi__node_error(pn, st);
    }
    oi__set_value(c, pn->out, out);
    return OI_OK;
}

static oi_status oi__exec_cache(oi__ctx *c, const oi__pnode *pn) {
    const oi__node *n = pn->ir;
    oi_status st = OI_OK;
    const oi__tensor *src = NULL;
    if (n->kind == OI__NODE_CACHE_WRITE) {
        src = oi__value(c, pn->out);
        if (!src || oi__storage_sync_host(src->storage) != OI_OK)
            return oi__node_error(pn, OI_ERROR_RUNTIME);
    }
    oi__lock(c);
    switch (n->kind) {
    case OI__NODE_CACHE_READ: {
        oi__tensor *t = oi__cache_get(c, pn);
        if (t)
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
    return st == OI_OK ? OI_OK : oi__node_error(pn, st);
}

static oi_status oi__exec_branch(oi__ctx *c, const oi__pnode *pn, int *taken) {
    int target = pn->then_block;
    if (pn->var >= 0) {
        const oi__tensor *cond = oi__value(c, pn->var);
        if (!cond || oi__storage_sync_host(cond->storage) != OI_OK)
            return oi__node_error(pn, OI_ERROR_RUNTIME);
        if (oi__shape_numel(cond->ndim, cond->shape) != 1)
            return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "branch condition %s must be a scalar", pn->ir->cond);
        bool truthy = oi__dtype_is_float(cond->dtype) ? oi__load_f64(cond->dtype, oi__tensor_data(cond), cond->offset) != 0.0
                                                      : oi__load_u64(cond->dtype, oi__tensor_data(cond), cond->offset) != 0;
        target = truthy ? pn->then_block : pn->else_block;
    }
    const oi__pblock *b = &c->exec->plan->blocks[target];
    if ((int)arrlen(c->frames) >= 256)
        return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "branches nest deeper than 256 (a branch cycle?)");
    oi__frame f;
    memset(&f, 0, sizeof f);
    f.nodes = b->nodes;
    f.count = (int)arrlen(b->nodes);
    f.block = target;
    if (!arrput(c->frames, f))
        return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
    *taken = target;
    return OI_OK;
}

static oi_status oi__exec_loop(oi__ctx *c, const oi__pnode *pn, int64_t *start, int64_t *end) {
    oi_status st = oi__eval_expr(c, &pn->ir->loop_start, &pn->ir->src, start);
    if (st == OI_OK)
        st = oi__eval_expr(c, &pn->ir->loop_end, &pn->ir->src, end);
    if (st != OI_OK)
        return oi__node_error(pn, st);
    if (*start >= *end)
        return OI_OK;
    if ((uint64_t)*end - (uint64_t)*start > (uint64_t)OI__MAX_LOOP_ITERATIONS)
        return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "loop %s: %lld..%lld runs more than 2^24 iterations",
                           pn->ir->loop_name, (long long)*start, (long long)*end);
    oi__frame f;
    memset(&f, 0, sizeof f);
    f.nodes = pn->body;
    f.count = (int)arrlen(pn->body);
    f.block = pn->block;
    f.loop = pn;
    f.loop_value = *start;
    f.loop_end = *end;
    if (!arrput(c->frames, f))
        return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
    return OI_OK;
}

static oi_status oi__exec_transfer(oi__ctx *c, const oi__pnode *pn) {
    oi__tensor *src = oi__value(c, pn->var);
    oi__tensor *alias = src ? oi__tensor_share(src) : NULL; /* an alias; a later write copies */
    if (!alias)
        return oi__node_error(pn, OI_ERROR_RUNTIME);
    oi__set_value(c, pn->out, alias);
    return OI_OK;
}

static oi_status oi__yield_start(oi__ctx *c, const oi__pnode *pn);
static oi_status oi__await_finish(oi__ctx *c, const oi__pnode *pn);

/* Runs one node. Fills *taken (branch target) and the loop bounds for the trace. */
static oi_status oi__exec_node(oi__ctx *c, const oi__pnode *pn, int *taken, int64_t *lo, int64_t *hi) {
    switch (pn->ir->kind) {
    case OI__NODE_ASSIGN:
        /* The initial value is made on first read (oi__value): most
         * temporaries are first written by an op, which then needs no
         * zeroed buffer, and a layout op makes them a view. */
        return OI_OK;
    case OI__NODE_OP: return oi__exec_op(c, pn);
    case OI__NODE_CACHE_READ:
    case OI__NODE_CACHE_WRITE:
    case OI__NODE_CACHE_INCREMENT:
    case OI__NODE_CACHE_DECREMENT:
    case OI__NODE_CACHE_RESET: return oi__exec_cache(c, pn);
    case OI__NODE_TRANSFER: return oi__exec_transfer(c, pn);
    case OI__NODE_BRANCH: return oi__exec_branch(c, pn, taken);
    case OI__NODE_LOOP: return oi__exec_loop(c, pn, lo, hi);
    case OI__NODE_RETURN:
        arrpop(c->frames); /* a block, or the innermost loop */
        return OI_OK;
    case OI__NODE_YIELD:
        if (c == &c->exec->main)
            return oi__yield_start(c, pn);
        arrsetlen(c->frames, 0); /* a consumer's yield ends it */
        return OI_OK;
    case OI__NODE_AWAIT:
        return c == &c->exec->main ? oi__await_finish(c, pn) : OI_OK; /* consumers got their copy at the yield */
    case OI__NODE_BARRIER:
    case OI__NODE_DEP: return OI_OK; /* the simulator runs in program order */
    }
    return OI_OK;
}

/* Advances to the next node and runs it. *done when the step is over. */
static oi_status oi__ctx_next(oi__ctx *c, const oi__pnode **ran, uint64_t *nanos, bool *done) {
    *done = false;
    *ran = NULL;
    for (;;) {
        if (arrlen(c->frames) == 0) {
            *done = true;
            return OI_OK;
        }
        oi__frame *f = &arrlast(c->frames);
        if (f->pos < f->count)
            break;
        if (f->loop && ++f->loop_value < f->loop_end) {
            f->pos = 0;
            continue;
        }
        arrpop(c->frames);
    }
    oi__frame *f = &arrlast(c->frames);
    const oi__pnode *pn = &f->nodes[f->pos++];
    bool timed = c->record || c->exec->timer_on;
    uint64_t t0 = timed ? oi__now_ns() : 0;
    int taken = -1;
    int64_t lo = 0, hi = 0;
    oi_status st = oi__exec_node(c, pn, &taken, &lo, &hi);
    *nanos = timed ? oi__now_ns() - t0 : 0;
    *ran = pn;
    if (st == OI_OK && c->record)
        oi__record(c, pn, *nanos, taken >= 0 ? c->exec->plan->blocks[taken].ir->name : NULL, lo, hi);
    return st;
}

/* ------------------------------------------------------------------ */
/* Yield / await: consumers on worker threads                          */
/* ------------------------------------------------------------------ */

static oi_status oi__ctx_init(oi__ctx *c, oi_executor *e) {
    size_t n = (size_t)arrlen(e->plan->slots);
    memset(c, 0, sizeof *c);
    c->exec = e;
    c->values = (oi__tensor **)oi__calloc(n ? n : 1, sizeof *c->values);
    c->written = (bool *)oi__calloc(n ? n : 1, sizeof *c->written);
    return c->values && c->written && sh_new_strdup(c->prefix) ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
}

static void oi__ctx_drop_values(oi__ctx *c) {
    for (int s = 0; s < (int)arrlen(c->exec->plan->slots); s++) {
        oi__tensor_free(c->values[s]);
        c->values[s] = NULL;
    }
}

static void oi__ctx_free(oi__ctx *c) {
    if (!c->exec)
        return;
    oi__spares_clear(c);
    arrfree(c->spares);
    if (c->values)
        oi__ctx_drop_values(c);
    oi__free(c->values);
    oi__free(c->written);
    arrfree(c->frames);
    for (int i = 0; i < (int)arrlen(c->events); i++)
        oi__tev_free(&c->events[i]);
    arrfree(c->events);
    for (int i = 0; i < (int)shlen(c->prefix); i++)
        oi__tensor_free(c->prefix[i].value);
    shfree(c->prefix);
}

static void *oi__consumer_main(void *arg) {
    oi__consumer *w = (oi__consumer *)arg;
    w->status = OI_OK;
    for (;;) {
        const oi__pnode *ran;
        uint64_t nanos;
        bool done;
        oi_status st = oi__ctx_next(&w->ctx, &ran, &nanos, &done);
        if (st != OI_OK) {
            w->status = st;
            oi__copy_error(w->error, sizeof w->error);
            break;
        }
        if (done)
            break;
    }
    return NULL;
}

static void oi__consumer_free(oi__consumer *w) {
    oi__ctx_free(&w->ctx);
    oi__free(w);
}

/* Joins every running consumer (also when a step is abandoned). */
static void oi__join_consumers(oi_executor *e) {
    for (int i = 0; i < (int)arrlen(e->pending); i++)
        if (e->pending[i]->started) {
            pthread_join(e->pending[i]->thread, NULL);
            e->pending[i]->started = false;
        }
}

static void oi__drop_consumers(oi_executor *e) {
    oi__join_consumers(e);
    for (int i = 0; i < (int)arrlen(e->pending); i++)
        oi__consumer_free(e->pending[i]);
    arrfree(e->pending);
    arrfree(e->pending_vars);
    e->main.yielded = NULL;
}

/* Entry's `yield`: every consumer block awaiting one of these variables
 * starts on its own thread with a copy of the entry's values. */
static oi_status oi__yield_start(oi__ctx *c, const oi__pnode *pn) {
    oi_executor *e = c->exec;
    const oi__plan *p = e->plan;
    int n_slots = (int)arrlen(p->slots);
    for (int k = 0; k < (int)arrlen(pn->vars); k++)
        if (!oi__value(c, pn->vars[k]))
            return oi__node_error(pn, OI_ERROR_RUNTIME);
    for (int s = 0; s < n_slots; s++)
        if (c->values[s] && oi__storage_sync_host(c->values[s]->storage) != OI_OK)
            return oi__node_error(pn, OI_ERROR_RUNTIME);
    for (int k = 0; k < (int)arrlen(pn->vars); k++)
        if (!arrput(e->pending_vars, pn->vars[k]))
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
    for (int b = 0; b < (int)arrlen(p->blocks); b++) {
        const oi__pblock *blk = &p->blocks[b];
        bool consumes = false;
        for (int k = 0; k < (int)arrlen(blk->awaits) && blk->is_async; k++)
            for (int j = 0; j < (int)arrlen(pn->vars); j++)
                consumes |= blk->awaits[k] == pn->vars[j];
        if (!consumes)
            continue;
        oi__consumer *w = (oi__consumer *)oi__calloc(1, sizeof *w);
        if (!w || oi__ctx_init(&w->ctx, e) != OI_OK) {
            if (w)
                oi__consumer_free(w);
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
        }
        if (!arrput(e->pending, w)) {
            oi__consumer_free(w);
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
        }
        w->block = b;
        w->ctx.record = c->record;
        const oi__pnode *last = arrlen(blk->nodes) ? &arrlast(blk->nodes) : NULL;
        w->yields = last && last->ir->kind == OI__NODE_YIELD ? last->vars : NULL;
        for (int s = 0; s < n_slots; s++) {
            if (!c->values[s])
                continue;
            w->ctx.values[s] = oi__tensor_clone(c->values[s]); /* the snapshot this consumer sees */
            if (!w->ctx.values[s])
                return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
        }
        oi__frame f;
        memset(&f, 0, sizeof f);
        f.nodes = blk->nodes;
        f.count = (int)arrlen(blk->nodes);
        f.block = b;
        if (!arrput(w->ctx.frames, f))
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
        if (pthread_create(&w->thread, NULL, oi__consumer_main, w) != 0)
            return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "could not start a thread for consumer block %s", blk->ir->name);
        w->started = true;
    }
    c->yielded = e->pending_vars;
    return OI_OK;
}

static bool oi__list_has(const int *list, int s) {
    for (int i = 0; i < (int)arrlen(list); i++)
        if (list[i] == s)
            return true;
    return false;
}

/* Entry's `await`: joins the consumers; a variable one consumer wrote comes
 * back to the entry; two writers of one variable are an error. */
static oi_status oi__await_finish(oi__ctx *c, const oi__pnode *pn) {
    oi_executor *e = c->exec;
    oi__join_consumers(e);
    oi_status st = OI_OK;
    for (int i = 0; i < (int)arrlen(e->pending) && st == OI_OK; i++)
        if (e->pending[i]->status != OI_OK)
            st = oi__fail(e->pending[i]->status, "consumer block %s: %s", e->plan->blocks[e->pending[i]->block].ir->name,
                          e->pending[i]->error);
    for (int k = 0; k < (int)arrlen(pn->vars) && st == OI_OK; k++) {
        int s = pn->vars[k];
        oi__consumer *writer = NULL;
        for (int i = 0; i < (int)arrlen(e->pending); i++) {
            oi__consumer *w = e->pending[i];
            if (!w->ctx.written[s] || !oi__list_has(w->yields, s))
                continue;
            if (writer) {
                st = oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "multiple blocks mutated %s: %s and %s",
                                 oi__slot_of(e, s)->name, e->plan->blocks[writer->block].ir->name,
                                 e->plan->blocks[w->block].ir->name);
                break;
            }
            writer = w;
        }
        if (st == OI_OK && writer) {
            oi__set_value(c, s, writer->ctx.values[s]);
            writer->ctx.values[s] = NULL;
        }
    }
    if (c->record)
        for (int i = 0; i < (int)arrlen(e->pending); i++) {
            oi__consumer *w = e->pending[i];
            for (int j = 0; j < (int)arrlen(w->ctx.events); j++)
                if (!arrput(e->trace, w->ctx.events[j]))
                    oi__tev_free(&w->ctx.events[j]); /* out of memory: not recorded */
            arrsetlen(w->ctx.events, 0);
        }
    oi__drop_consumers(e);
    return st;
}

/* ------------------------------------------------------------------ */
/* Simulator and executor API                                          */
/* ------------------------------------------------------------------ */

static bool oi__env_trace(void) {
    const char *v = getenv("OPENINFER_TRACE");
    return v && (strcmp(v, "1") == 0 || strcmp(v, "full") == 0 || strcmp(v, "true") == 0);
}

oi_simulator *oi_simulator_new_desc(const oi_model *model, const oi_simulator_desc *desc) {
    oi_simulator *s = (oi_simulator *)oi__calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (desc)
        s->desc = *desc;
    s->model = model;
    if (s->desc.n_threads < 0) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_simulator_new: n_threads is %d (0 means all cores)", s->desc.n_threads);
        oi__free(s);
        return NULL;
    }
    s->pool = oi__threadpool_new(s->desc.n_threads); /* created once, reused by every step */
    if (!s->pool) {
        oi__free(s);
        return NULL;
    }
    if (oi__backend_select(s->desc.device, &s->backend, &s->backend_ctx, &s->device_index) != OI_OK) {
        oi__threadpool_free(s->pool);
        oi__free(s);
        return NULL;
    }
    pthread_mutex_init(&s->placed_lock, NULL);
    return s;
}

oi_simulator *oi_simulator_new(const oi_model *model, oi_device device) {
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = device;
    return oi_simulator_new_desc(model, &desc);
}

void oi_simulator_free(oi_simulator *sim) {
    if (!sim)
        return;
    for (int i = 0; i < 2; i++)
        if (sim->placed[i] && sim->placed[i]->destroy)
            sim->placed[i]->destroy(sim->placed_ctx[i]);
    if (sim->backend && sim->backend->destroy)
        sim->backend->destroy(sim->backend_ctx);
    pthread_mutex_destroy(&sim->placed_lock);
    oi__threadpool_free(sim->pool);
    oi__free(sim);
}

/* The graph's build warnings and the validation's come first in the
 * executor's list: the place a program looks. */
static oi_status oi__executor_take_warnings(oi_executor *e, const oi_graph *graph, const oi__plan *plan) {
    for (size_t i = 0; i < oi_graph_warning_count(graph) + (size_t)arrlen(plan->warnings); i++) {
        size_t n = oi_graph_warning_count(graph);
        char *w = oi__strdup(i < n ? oi_graph_warning(graph, i) : plan->warnings[i - n]);
        if (!w || !arrput(e->warnings, w)) {
            oi__free(w);
            return OI_ERROR_OUT_OF_MEMORY;
        }
    }
    return OI_OK;
}

/* Whether placement="name" is the simulator's backend: its own name, or
 * "gpu" for a device backend (one that keeps data off the host). */
static bool oi__placement_is_backend(const char *name, const oi__backend *be) {
    return strcmp(name, be->name) == 0 || (strcmp(name, "gpu") == 0 && be->to_host);
}

/* The simulator's second backend that placement `name` asks for: 0 for
 * Vulkan ("vulkan", "gpu"), 1 for blas. */
static int oi__placed_slot(const char *name) { return strcmp(name, "blas") == 0 ? 1 : 0; }

/* Creates the backend a placement names when the simulator runs elsewhere
 * (once per simulator); false when this build or machine lacks it. */
static bool oi__placed_open(oi_simulator *sim, const char *name) {
    int slot = oi__placed_slot(name);
    pthread_mutex_lock(&sim->placed_lock);
    if (!sim->placed_tried[slot]) {
        sim->placed_tried[slot] = true;
        int index = 0;
        if (oi__backend_select(slot == 1 ? OI_DEVICE_BLAS : OI_DEVICE_VULKAN, &sim->placed[slot], &sim->placed_ctx[slot],
                               &index) != OI_OK) {
            sim->placed[slot] = NULL;
            sim->placed_ctx[slot] = NULL;
            oi_clear_error(); /* the node runs on the simulator's backend; a warning says so */
        }
    }
    bool open = sim->placed[slot] != NULL;
    pthread_mutex_unlock(&sim->placed_lock);
    return open;
}

/* Placements of other backends: opened now; those this machine cannot give
 * run where the simulator runs, said once per node. Unknown names were the
 * graph's own warning (or error). */
static oi_status oi__placement_warnings(oi_executor *e, const oi__node *nodes, int depth) {
    const oi__backend *be = e->sim->backend;
    for (ptrdiff_t i = 0; i < arrlen(nodes); i++) {
        const oi__node *n = &nodes[i];
        const oi__attr *p = oi__node_hint(n, "placement");
        oi_status st = OI_OK;
        if (p && p->kind == OI__ATTR_STRING && oi__placement_known(p->s) && strcmp(p->s, "cpu") != 0 &&
            !oi__placement_is_backend(p->s, be) && !oi__placed_open(e->sim, p->s))
            st = oi__warn_at(&e->warnings, &n->src, "placement \"%s\" is not available: the simulator runs on %s and so does "
                             "this node", p->s, be->name);
        if (st == OI_OK && n->kind == OI__NODE_LOOP && depth < OI__MAX_LOOP_DEPTH)
            st = oi__placement_warnings(e, n->body, depth + 1);
        if (st != OI_OK)
            return st;
    }
    return OI_OK;
}

oi_executor *oi_simulator_make_executor(oi_simulator *sim, const oi_graph *graph) {
    if (!sim) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_simulator_make_executor: no simulator");
        return NULL;
    }
    oi__plan *plan = oi__plan_build(graph, sim->model);
    if (!plan)
        return NULL;
    if (oi__check_device_memory(sim, plan) != OI_OK) {
        oi__plan_free(plan);
        return NULL;
    }
    oi_executor *e = (oi_executor *)oi__calloc(1, sizeof *e);
    if (!e) {
        oi__plan_free(plan);
        return NULL;
    }
    e->sim = sim;
    e->plan = plan;
    pthread_mutex_init(&e->lock, NULL);
    size_t n = (size_t)arrlen(plan->slots);
    e->pstates = (oi__pstate *)oi__calloc(n ? n : 1, sizeof *e->pstates);
    e->inserted = (bool *)oi__calloc(n ? n : 1, sizeof *e->inserted);
    e->fetched = (oi__fetch_buffer *)oi__calloc(n ? n : 1, sizeof *e->fetched);
    if (!e->pstates || !e->inserted || !e->fetched || oi__ctx_init(&e->main, e) != OI_OK) {
        oi_executor_free(e);
        return NULL;
    }
    if (oi__executor_take_warnings(e, graph, plan) != OI_OK) {
        oi_executor_free(e);
        return NULL;
    }
    for (ptrdiff_t b = 0; b < arrlen(graph->blocks); b++) {
        if (oi__placement_warnings(e, graph->blocks[b].nodes, 0) != OI_OK) {
            oi_executor_free(e);
            return NULL;
        }
    }
    e->main.use_backend = true;
    e->trace_on = sim->desc.trace || oi__env_trace();
    e->timer_on = sim->desc.timer;
    e->main.record = e->trace_on;
    return e;
}

void oi_executor_free(oi_executor *e) {
    if (!e)
        return;
    if (e->plan) {
        oi__drop_consumers(e);
        oi__ctx_free(&e->main);
        for (int s = 0; s < (int)arrlen(e->plan->slots); s++) {
            if (e->pstates)
                oi__pstate_clear(&e->pstates[s]);
            if (e->fetched)
                oi__free(e->fetched[s].data);
        }
    }
    for (int i = 0; i < (int)arrlen(e->trace); i++)
        oi__tev_free(&e->trace[i]);
    arrfree(e->trace);
    for (int i = 0; i < (int)arrlen(e->warnings); i++)
        oi__free(e->warnings[i]);
    arrfree(e->warnings);
    oi__free(e->last_desc);
    oi__free(e->pstates);
    oi__free(e->inserted);
    oi__free(e->fetched);
    oi__plan_free(e->plan);
    pthread_mutex_destroy(&e->lock);
    oi__free(e);
}

void oi_executor_set_trace(oi_executor *e, bool on) {
    if (e) {
        e->trace_on = on;
        e->main.record = on;
    }
}

size_t oi_executor_warning_count(const oi_executor *e) { return e ? (size_t)arrlen(e->warnings) : 0; }

const char *oi_executor_warning(const oi_executor *e, size_t index) {
    return e && index < (size_t)arrlen(e->warnings) ? e->warnings[index] : NULL;
}

/* Start of a step: volatile values and temporaries go back to their initial
 * state; dynamic values not inserted since the last step are cleared. */
static oi_status oi__begin_step(oi_executor *e) {
    oi__ctx *c = &e->main;
    oi__spares_clear(c); /* what the last step did not reuse */
    for (int s = 0; s < (int)arrlen(e->plan->slots); s++) {
        oi__mem_kind kind = oi__slot_of(e, s)->kind;
        bool keep = kind == OI__MEM_CONSTANT || kind == OI__MEM_PERSISTENT ||
                    ((kind == OI__MEM_DYNAMIC || kind == OI__MEM_VOLATILE) && e->inserted[s]);
        if (!keep) {
            oi__ctx_recycle(c, c->values[s]);
            c->values[s] = NULL;
        }
        e->inserted[s] = false;
        c->written[s] = false;
    }
    arrsetlen(c->frames, 0);
    e->trace_step_start = arrlen(e->trace);
    const oi__pblock *entry = &e->plan->blocks[e->plan->entry];
    oi__frame f;
    memset(&f, 0, sizeof f);
    f.nodes = entry->nodes;
    f.count = (int)arrlen(entry->nodes);
    f.block = e->plan->entry;
    if (!arrput(c->frames, f))
        return OI_ERROR_OUT_OF_MEMORY;
    e->in_step = true;
    return OI_OK;
}

static oi_status oi__end_step(oi_executor *e) {
    e->in_step = false;
    oi__drop_consumers(e);
    arrsetlen(e->main.frames, 0);
    const oi__backend *be = e->sim->backend;
    oi_status st = be->flush ? be->flush(e->sim->backend_ctx) : OI_OK;
    for (int i = 0; i < 2 && st == OI_OK; i++) /* backends that placements opened */
        if (e->sim->placed[i] && e->sim->placed[i]->flush)
            st = e->sim->placed[i]->flush(e->sim->placed_ctx[i]);
    if (st == OI_OK && e->trace_on)
        oi__collect_gpu_times(e);
    return st;
}

oi_status oi_executor_iterate(oi_executor *e) {
    if (!e)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_executor_iterate: no executor");
    if (e->in_step)
        oi__end_step(e); /* abandon the step in progress */
    return oi__begin_step(e);
}

oi_status oi_executor_next(oi_executor *e, oi_event *event) {
    if (!e)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_executor_next: no executor");
    if (!e->in_step)
        return oi__fail(OI_ERROR_NOT_FOUND, "no step in progress (call oi_executor_iterate first)");
    const oi__pnode *pn;
    uint64_t nanos = 0;
    bool done;
    oi_status st = oi__ctx_next(&e->main, &pn, &nanos, &done);
    if (st != OI_OK) {
        char why[2048];
        oi__copy_error(why, sizeof why);
        oi__end_step(e);
        return oi__fail(st, "%s", why);
    }
    if (done) {
        st = oi__end_step(e);
        return st != OI_OK ? st : oi__fail(OI_ERROR_NOT_FOUND, "the step is done");
    }
    if (event) {
        oi__free(e->last_desc);
        e->last_desc = oi__node_describe(pn->ir);
        memset(event, 0, sizeof *event);
        event->kind = oi__event_kind(pn->ir->kind);
        event->block_name = e->plan->blocks[pn->block].ir->name;
        event->op_name = pn->ir->kind == OI__NODE_OP ? oi_op_name(pn->ir->op) : "";
        event->node_index = pn->ir->index;
        event->node_uuid = pn->ir->uuid;
        event->description = e->last_desc ? e->last_desc : "";
        event->micros = nanos / 1000u;
        event->scope = pn->ir->src.scope ? pn->ir->src.scope : "";
    }
    return OI_OK;
}

oi_status oi_executor_run_step(oi_executor *e) {
    if (!e)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_executor_run_step: no executor");
    if (!e->in_step) { /* else: finish the step being iterated */
        oi_status st = oi__begin_step(e);
        if (st != OI_OK)
            return st;
    }
    for (;;) {
        const oi__pnode *pn;
        uint64_t nanos;
        bool done;
        oi_status st = oi__ctx_next(&e->main, &pn, &nanos, &done);
        if (st != OI_OK) {
            char why[2048];
            oi__copy_error(why, sizeof why);
            oi__end_step(e);
            return oi__fail(st, "%s", why);
        }
        if (done)
            return oi__end_step(e);
    }
}

/* ------------------------------------------------------------------ */
/* Insert and fetch                                                    */
/* ------------------------------------------------------------------ */

static int oi__lookup(oi_executor *e, const char *name, const char *verb) {
    int s = e ? oi__plan_slot(e->plan, name) : -1;
    if (s < 0)
        oi__fail(e ? OI_ERROR_NOT_FOUND : OI_ERROR_INVALID_ARGUMENT, "%s %s: %s", verb, name ? name : "(null)",
                 e ? "unknown variable (not declared in the graph)" : "no executor");
    return s;
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

/* ------------------------------------------------------------------ */
/* Trace JSON                                                          */
/* ------------------------------------------------------------------ */

static void oi__json_list(oi__buf *b, char **items) {
    oi__buf_puts(b, "[");
    for (int i = 0; i < (int)arrlen(items); i++) {
        if (i)
            oi__buf_puts(b, ", ");
        oi__buf_json_string(b, items[i]);
    }
    oi__buf_puts(b, "]");
}

char *oi_executor_trace_json(oi_executor *e) {
    if (!e) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_executor_trace_json: no executor");
        return NULL;
    }
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_puts(&b, "[");
    for (int i = 0; i < (int)arrlen(e->trace); i++) {
        const oi__tev *t = &e->trace[i];
        oi__buf_puts(&b, i ? ",\n  {\n" : "\n  {\n");
        oi__buf_puts(&b, "    \"block_name\": ");
        oi__buf_json_string(&b, t->block_name);
        oi__buf_printf(&b, ",\n    \"node_index\": %u,\n    \"node_uuid\": ", (unsigned)t->node_index);
        oi__buf_json_string(&b, t->uuid);
        oi__buf_printf(&b, ",\n    \"kind\": \"%s\",\n    ", oi__event_names[t->kind]);
        if (t->op_name)
            oi__buf_printf(&b, "\"op\": \"%s\",\n    ", t->op_name);
        if (t->scope) {
            oi__buf_puts(&b, "\"scope\": ");
            oi__buf_json_string(&b, t->scope);
            oi__buf_puts(&b, ",\n    ");
        }
        oi__buf_puts(&b, "\"params\": ");
        oi__json_list(&b, t->params);
        oi__buf_puts(&b, ",\n    \"output\": ");
        oi__json_list(&b, t->output);
        oi__buf_printf(&b, ",\n    \"micros\": [%llu, %llu, %llu]", (unsigned long long)(t->nanos / 1000000u),
                       (unsigned long long)(t->nanos / 1000u % 1000u), (unsigned long long)(t->nanos % 1000u));
        if (t->on_device && t->gpu_micros >= 0)
            oi__buf_printf(&b, ",\n    \"gpu_micros\": %.3f", t->gpu_micros);
        oi__buf_puts(&b, "\n  }");
    }
    oi__buf_puts(&b, arrlen(e->trace) ? "\n]\n" : "]\n");
    return oi__buf_take(&b);
}
