/* executor.c - the simulator: runs a validated graph (plan.h) step by step.
 * This room holds contexts, values, node dispatch and steps; executor.h
 * lists the others (tables, trace, consumers, insert/fetch).
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
#include "executor.h"

/* ------------------------------------------------------------------ */
/* Contexts                                                           */
/* ------------------------------------------------------------------ */

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

/* Ops whose kernels (the CPU's, a host backend's) write every element of
 * an output of this dtype on every path, so a fresh output needs no
 * zeroing: a transformer layer's q, k, v, attention result and residual
 * sums are fresh each layer (views of the old ones still hold their
 * buffers). The f32/f64 arithmetic of kernels/elementwise.c writes each
 * element once on its fast, rows and generic paths alike, and so does
 * kernels/conv.c's forward conv into an f32/f64 output (each plane starts
 * from its bias or from a gemm with beta 0: a CNN's activations, ~6% of
 * PP-OCR's step when zeroed first). */
static bool oi__op_writes_whole(oi_op op, oi_dtype dtype) {
    if (op == OI_OP_gemm || op == OI_OP_attention)
        return true;
    bool arith = op == OI_OP_add || op == OI_OP_sub || op == OI_OP_mul || op == OI_OP_div;
    bool conv = op == OI_OP_conv1d || op == OI_OP_conv2d;
    return (arith || conv) && (dtype == OI_DTYPE_F32 || dtype == OI_DTYPE_F64);
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

static oi_status oi__ctx_init(oi__ctx *c, oi_executor *e) {
    size_t n = (size_t)arrlen(e->plan->slots);
    memset(c, 0, sizeof *c);
    c->exec = e;
    c->values = (oi__tensor **)oi__calloc(n ? n : 1, sizeof *c->values);
    c->written = (bool *)oi__calloc(n ? n : 1, sizeof *c->written);
    c->hits = (oi__prefix_hit **)oi__calloc(n ? n : 1, sizeof *c->hits);
    return c->values && c->written && c->hits && sh_new_strdup(c->prefix) ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
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
    for (int s = 0; c->hits && s < (int)arrlen(c->exec->plan->slots); s++)
        arrfree(c->hits[s]);
    oi__free(c->hits);
}

/* Pushes a frame that runs `nodes`: a block's, or a loop's body for
 * from..to when `loop`. False when out of memory. */
static bool oi__push_frame(oi__ctx *c, const oi__pnode *nodes, int block, const oi__pnode *loop, int64_t from, int64_t to) {
    oi__frame f;
    memset(&f, 0, sizeof f);
    f.nodes = nodes;
    f.count = (int)arrlen(nodes);
    f.block = block;
    f.loop = loop;
    f.loop_value = from;
    f.loop_end = to;
    return arrput(c->frames, f);
}

static bool oi__push_block(oi__ctx *c, int block) {
    return oi__push_frame(c, c->exec->plan->blocks[block].nodes, block, NULL, 0, 0);
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
/* Values                                                             */
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
        if (sl->dtype == OI_DTYPE_INVALID) {
            oi__fail(OI_ERROR_RUNTIME, "%s has no type: nothing writes it (OI_ASSIGN(%s) takes its type from its first writer)",
                     sl->name, sl->name);
            return NULL;
        }
        c->values[s] = oi__initial_value(c, s);
    }
    return c->values[s];
}

/* A variable declared with run-time dims (f32[?, 3, 64]) takes any size
 * there; its rank and other dims hold at every write. */
static oi_status oi__check_runtime_dims(const oi__slot *sl, int ndim, const int64_t *shape, const oi__src *src) {
    if (!sl->runtime_dims || oi__slot_fits(sl, ndim, shape))
        return OI_OK;
    char have[160], want[160];
    int n = snprintf(have, sizeof have, "%s[", oi_dtype_name(sl->dtype));
    for (int d = 0; d < ndim && n > 0 && (size_t)n < sizeof have; d++)
        n += snprintf(have + n, sizeof have - (size_t)n, d ? ", %lld" : "%lld", (long long)shape[d]);
    if (n > 0 && (size_t)n < sizeof have)
        snprintf(have + n, sizeof have - (size_t)n, "]");
    return oi__fail_at(OI_ERROR_RUNTIME, src, "%s is declared %s but gets %s", sl->name,
                       oi__slot_sig_text(want, sizeof want, sl), have);
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
static oi_status oi__eval_expr(oi__ctx *c, const oi__expr *x, const oi__src *src, int64_t *out);

typedef struct oi__expr_run { oi__ctx *c; const oi__src *src; } oi__expr_run;

static oi_status oi__eval_expr_name(void *ctx, const char *name, int64_t *value) {
    const oi__expr_run *r = (const oi__expr_run *)ctx;
    oi__expr one = {(char *)name, 0};
    return oi__eval_expr(r->c, &one, r->src, value);
}

static oi_status oi__eval_expr(oi__ctx *c, const oi__expr *x, const oi__src *src, int64_t *out) {
    if (!x->ident) {
        *out = x->lit;
        return OI_OK;
    }
    if (oi__expr_is_compound(x)) { /* "step+1": each name as below */
        oi__expr_run r = {c, src};
        return oi__expr_eval(x->ident, oi__eval_expr_name, &r, src, out);
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
/* Node execution                                                     */
/* ------------------------------------------------------------------ */

static uint64_t oi__now_ns(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void oi__warn_once(oi_executor *e, oi_op op, const char *why) {
    if (e->warned[op])
        return;
    e->warned[op] = true;
    char *w = oi__sprintf("op %s ran on the CPU: the %s backend does not support it%s%s", oi_op_name(op), e->sim->backend->name,
                          why ? ": " : "", why ? why : "");
    if (w && !arrput(e->warnings, w))
        oi__free(w);
}

/* A prefix-table entry W[l]: the model tensor its pattern names. The
 * name is built once per entry; later lookups find it by its values. */
static oi__tensor *oi__prefix_entry(oi__ctx *c, int s, const oi__pindex *idx, const oi__src *src) {
    const oi__slot *sl = oi__slot_of(c->exec, s);
    int64_t values[OI_MAX_DIMS] = {0};
    for (int k = 0; k < sl->n_indices; k++)
        if (oi__eval_expr(c, &idx[k].single, src, &values[k]) != OI_OK)
            return NULL;
    for (ptrdiff_t h = 0; h < arrlen(c->hits[s]); h++)
        if (memcmp(c->hits[s][h].values, values, sizeof values) == 0)
            return c->hits[s][h].value;
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
    if (t) {
        oi__prefix_hit hit;
        memcpy(hit.values, values, sizeof values);
        hit.value = t;
        (void)arrput(c->hits[s], hit); /* out of memory: the next lookup builds the name again */
    }
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

/* The CPU reference of an op under a reduced precision: 16-bit inputs
 * widened to their f32 (sigs), the f32 kernel, the result rounded once into
 * out's storage dtype (exec_precision.c). */
static oi_status oi__op_run_widened(oi__ctx *c, const oi__pnode *pn, const oi__tensor **inputs, const oi__op_sig *sigs,
                                    int n_in, oi__tensor *out, const oi__op_sig *sig) {
    const oi__tensor *wide[8];
    oi__tensor *own[8] = {NULL};
    oi__tensor *result = out;
    oi_status st = OI_OK;
    for (int i = 0; i < n_in; i++) {
        wide[i] = inputs[i];
        if (inputs[i]->dtype != sigs[i].dtype && st == OI_OK) {
            wide[i] = own[i] = oi__converted(c, inputs[i], sigs[i].dtype);
            st = own[i] ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
        }
    }
    if (st == OI_OK && out->dtype != sig->dtype) {
        result = oi__ctx_new_tensor(c, sig->dtype, sig->ndim, sig->shape, true);
        st = result ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    }
    if (st == OI_OK)
        st = oi__op_run_cpu(pn->ir->op, pn->attrs, (size_t)arrlen(pn->attrs), wide, (size_t)n_in, result);
    if (st == OI_OK && result != out)
        st = oi__narrow_into(out, result);
    if (result != out && result)
        oi__ctx_recycle(c, result);
    for (int i = 0; i < n_in; i++)
        if (own[i])
            oi__ctx_recycle(c, own[i]);
    return st;
}

static oi_status oi__exec_op(oi__ctx *c, const oi__pnode *pn) {
    oi_executor *e = c->exec;
    const oi__node *n = pn->ir;
    const oi__slot *out_slot = oi__slot_of(e, pn->out);
    int n_in = (int)arrlen(pn->inputs);
    const oi__tensor *inputs[8];
    oi__op_sig sigs[8];
    bool reduced = false; /* an input or the output is stored in desc.precision */
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
        /* an activation stored in f16/bf16 stands for its declared f32 */
        sigs[i].dtype = pn->input_indices[i] ? t->dtype : oi__logical_dtype(e, pn->inputs[i], t);
        reduced |= sigs[i].dtype != t->dtype;
        sigs[i].ndim = t->ndim;
        memcpy(sigs[i].shape, t->shape, sizeof sigs[i].shape);
    }
    oi__op_sig sig;
    memset(&sig, 0, sizeof sig);
    oi__op_sig **memo = &e->sig_memo[pn->id];
    oi_dtype acc = OI_DTYPE_INVALID; /* the kernel's accumulator, from the same check */
    oi_status st = OI_OK;
    if (*memo && !pn->entry_attrs && memcmp(*memo, sigs, (size_t)n_in * sizeof *sigs) == 0) {
        sig = (*memo)[n_in];
        acc = e->acc_memo[pn->id];
    } else {
        st = oi__op_infer_acc(n->op, pn->attrs, (size_t)arrlen(pn->attrs), sigs, (size_t)n_in, out_slot->dtype, &sig,
                              &acc);
        if (st != OI_OK)
            return oi__node_error(pn, st);
        if (!arrsetlen(*memo, n_in + 1))
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
        memcpy(*memo, sigs, (size_t)n_in * sizeof *sigs);
        (*memo)[n_in] = sig;
        e->acc_memo[pn->id] = acc;
    }
    if (sig.dtype != out_slot->dtype)
        return oi__fail_at(OI_ERROR_RUNTIME, &n->src, "output dtype mismatch: op %s produces %s but %s is %s", oi_op_name(n->op),
                           oi_dtype_name(sig.dtype), out_slot->name, oi_dtype_name(out_slot->dtype));
    if ((st = oi__check_runtime_dims(out_slot, sig.ndim, sig.shape, &n->src)) != OI_OK)
        return st;
    oi__op_sig stored = sig; /* the output as stored: sig, or its f16/bf16 form */
    stored.dtype = e->storage[pn->out];
    reduced |= stored.dtype != sig.dtype;
    /* a layout op (reshape, transpose, slice, ...) into a temporary shares its
     * input's storage: no copy (kernels/shape.c). Writers copy on write. */
    if (!pn->inplace && n_in == 1 && out_slot->kind == OI__MEM_TEMP) {
        oi__tensor *view = NULL;
        /* checked above on the input's own dtype unless it is stored reduced */
        st = sigs[0].dtype == inputs[0]->dtype
                 ? oi__op_view_checked(n->op, pn->attrs, (size_t)arrlen(pn->attrs), inputs[0], &view)
                 : oi__op_view(n->op, pn->attrs, (size_t)arrlen(pn->attrs), inputs[0], &view);
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
    oi__op_sig stored_in[8]; /* what a device reads: the inputs' own dtypes */
    for (int i = 0; i < n_in; i++) {
        stored_in[i] = sigs[i];
        stored_in[i].dtype = inputs[i]->dtype;
    }
    bool on_backend = be != &oi__cpu_backend && be->supports_op(be_ctx, n->op, pn->attrs, (size_t)arrlen(pn->attrs),
                                                                stored_in, (size_t)n_in, &stored);
    /* choose the output buffer: in place, reuse the old value, or fresh (not
     * zeroed for a device, which writes it whole: its host bytes are stale) */
    oi__tensor *cur = c->values[pn->out], *out = NULL;
    bool fresh = false;
    if (pn->inplace && cur == inputs[0] && oi__tensor_matches(cur, stored.dtype, sig.ndim, sig.shape)) {
        out = oi__writable(c, pn->out); /* may replace (and free) cur by a private copy */
        for (int i = 0; i < n_in && out; i++)
            if (inputs[i] == cur)
                inputs[i] = out;
        if (!out)
            return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
    } else if (cur && cur->storage->refcount == 1 && !cur->storage->borrowed && cur->offset == 0 &&
               oi__tensor_matches(cur, stored.dtype, sig.ndim, sig.shape) && oi__tensor_is_contiguous(cur)) {
        out = cur;
        for (int i = 0; i < n_in; i++)
            if (inputs[i]->storage == cur->storage)
                out = NULL;
    }
    if (!out) {
        out = oi__ctx_new_tensor(c, stored.dtype, sig.ndim, sig.shape,
                                 !(on_backend && be->to_host) && !oi__op_writes_whole(n->op, stored.dtype));
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
            st = reduced ? oi__op_run_widened(c, pn, inputs, sigs, n_in, out, &sig)
                         : oi__op_run_cpu_checked(n->op, pn->attrs, (size_t)arrlen(pn->attrs), inputs, (size_t)n_in,
                                                  out, acc);
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

/* An op with a setting per prefix-table entry (group=E(l)): E's value for
 * this entry is a dim of that entry's model tensor; the op then runs with
 * the setting as an integer. */
static oi_status oi__exec_op_entry(oi__ctx *c, const oi__pnode *pn) {
    const oi__plan *p = c->exec->plan;
    oi__pnode local = *pn;
    local.attrs = NULL;
    oi_status st = OI_OK;
    for (int i = 0; i < (int)arrlen(pn->attrs) && st == OI_OK; i++) {
        oi__attr a = pn->attrs[i];
        int slot, dim;
        char index[64];
        if (a.kind == OI__ATTR_SIZE && oi__plan_entry_dim(p, a.s, &slot, &dim, index, sizeof index)) {
            oi__pindex idx;
            memset(&idx, 0, sizeof idx);
            if (!oi__is_int_text(index, &idx.single.lit))
                idx.single.ident = index;
            const oi__tensor *t = oi__prefix_entry(c, slot, &idx, &pn->ir->src);
            if (!t)
                st = OI_ERROR_RUNTIME;
            a.kind = OI__ATTR_INT;
            a.i = t ? t->shape[dim] : 0;
        }
        if (st == OI_OK && !arrput(local.attrs, a))
            st = oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
    }
    if (st == OI_OK)
        st = oi__exec_op(c, &local);
    arrfree(local.attrs);
    return st;
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
    if ((int)arrlen(c->frames) >= 256)
        return oi__fail_at(OI_ERROR_RUNTIME, &pn->ir->src, "branches nest deeper than 256 (a branch cycle?)");
    if (!oi__push_block(c, target))
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
    if (!oi__push_frame(c, pn->body, pn->block, pn, *start, *end))
        return oi__node_error(pn, OI_ERROR_OUT_OF_MEMORY);
    return OI_OK;
}

static oi_status oi__exec_transfer(oi__ctx *c, const oi__pnode *pn) {
    oi__tensor *src = oi__value(c, pn->var);
    if (src && oi__check_runtime_dims(oi__slot_of(c->exec, pn->out), src->ndim, src->shape, &pn->ir->src) != OI_OK)
        return OI_ERROR_RUNTIME;
    oi__tensor *alias = src ? oi__tensor_share(src) : NULL; /* an alias; a later write copies */
    if (!alias)
        return oi__node_error(pn, OI_ERROR_RUNTIME);
    oi__set_value(c, pn->out, alias);
    return OI_OK;
}

/* Runs one node. Fills *taken (branch target) and the loop bounds for the trace. */
static oi_status oi__exec_node(oi__ctx *c, const oi__pnode *pn, int *taken, int64_t *lo, int64_t *hi) {
    switch (pn->ir->kind) {
    case OI__NODE_ASSIGN:
        /* The initial value is made on first read (oi__value): most
         * temporaries are first written by an op, which then needs no
         * zeroed buffer, and a layout op makes them a view. */
        return OI_OK;
    case OI__NODE_OP: return pn->entry_attrs ? oi__exec_op_entry(c, pn) : oi__exec_op(c, pn);
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
/* Simulator and executor API                                         */
/* ------------------------------------------------------------------ */

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
    if (oi__precision_resolve(&s->desc, s->backend) != OI_OK) { /* the gate: this backend, this precision */
        if (s->backend->destroy)
            s->backend->destroy(s->backend_ctx);
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
    e->sig_memo = (oi__op_sig **)oi__calloc(plan->n_nodes ? (size_t)plan->n_nodes : 1, sizeof *e->sig_memo);
    e->acc_memo = (oi_dtype *)oi__calloc(plan->n_nodes ? (size_t)plan->n_nodes : 1, sizeof *e->acc_memo);
    if (!e->pstates || !e->inserted || !e->fetched || !e->sig_memo || !e->acc_memo || oi__ctx_init(&e->main, e) != OI_OK ||
        oi__storage_plan(e) != OI_OK) {
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
    e->trace_on = sim->desc.trace || oi__env_read().trace;
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
        for (int i = 0; i < e->plan->n_nodes && e->sig_memo; i++)
            arrfree(e->sig_memo[i]);
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
    oi__free(e->sig_memo);
    oi__free(e->acc_memo);
    oi__free(e->storage);
    oi__plan_free(e->plan);
    pthread_mutex_destroy(&e->lock);
    oi__free(e);
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
    if (!oi__push_block(c, e->plan->entry))
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
        event->kind = (oi_event_kind)pn->ir->kind; /* exec_trace.c asserts the orders agree */
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
