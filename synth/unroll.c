/* unroll.c - a loop over prefix-table entries whose shapes differ from
 * entry to entry (W(n): f32[E(n), ...]) becomes one straight-line copy of
 * its body per iteration, before the schedule reads the plan.
 *
 * The C target's kernels have static shapes: a conv's window, its gemm
 * path and every arena offset are decided at synthesis time. In such a
 * loop the body's values change shape each iteration (PP-OCR's blocks 6-9
 * expand 16 channels to 88, 88, 40, 48), so no one kernel serves them all.
 * The loop's bounds are model sizes, known here: each copy reads its own
 * entries (exp_w[6] becomes the constant exp_w_n6, the model's b6_exp_w),
 * writes its own temporaries where their shapes depend on the entry (e_n6),
 * and takes its settings per entry (group=E(n)) as numbers. Every other
 * loop stays a C loop. The copies keep their DSL statement (file:line). */
#include "synth_internal.h"

/* A loop bound known at synthesis time: a literal or a model size. */
static bool oi__sy_ur_bound(const oi__plan *p, const oi__expr *e, int64_t *v) {
    if (!e->ident) {
        *v = e->lit;
        return true;
    }
    return !oi__expr_is_compound(e) && oi__plan_size(p, e->ident, v);
}

/* Does the loop's body read an entry whose shape varies, or take a
 * setting per entry, with only ops and assigns inside? */
static bool oi__sy_ur_wanted(const oi__plan *p, const oi__pnode *loop) {
    bool varies = false;
    for (int i = 0; i < (int)arrlen(loop->body); i++) {
        const oi__pnode *pn = &loop->body[i];
        if (pn->ir->kind == OI__NODE_ASSIGN)
            continue;
        if (pn->ir->kind != OI__NODE_OP)
            return false;
        varies |= pn->entry_attrs;
        for (int k = 0; k < (int)arrlen(pn->inputs); k++) {
            const oi__slot *sl = &p->slots[pn->inputs[k]];
            varies |= sl->is_prefix && sl->runtime_dims;
        }
    }
    return varies;
}

typedef struct oi__sy_ur {
    oi__plan *p;
    oi__sy_unrolled *u;
    const oi__pnode *loop;
    int64_t iter;
    int *renamed; /* stb array of pairs: slot, its copy for this iteration */
} oi__sy_ur;

/* "e" in iteration 6 of loop n -> "e_n6" (more '_' while the name is taken). */
static const char *oi__sy_ur_name(oi__sy_ur *c, const char *base) {
    oi__buf b;
    memset(&b, 0, sizeof b);
    oi__buf_printf(&b, "%s_%s%lld", base, c->loop->ir->loop_index, (long long)c->iter);
    while (b.data && oi__plan_slot(c->p, b.data) >= 0)
        oi__buf_puts(&b, "_");
    char *name = oi__buf_take(&b);
    if (name && !arrput(c->u->names, name)) {
        oi__free(name);
        return NULL;
    }
    return name;
}

/* Appends slot `sl` under a new name; its index, or -1 out of memory. */
static int oi__sy_ur_add_slot(oi__sy_ur *c, oi__slot sl, const char *base) {
    sl.name = oi__sy_ur_name(c, base);
    if (!sl.name)
        return -1;
    int index = (int)arrlen(c->p->slots);
    if (!arrput(c->p->slots, sl) || !shput(c->p->by_name, sl.name, index))
        return -1;
    return index;
}

static int oi__sy_ur_lookup(const oi__sy_ur *c, int slot) {
    for (int i = 0; i + 1 < (int)arrlen(c->renamed); i += 2)
        if (c->renamed[i] == slot)
            return c->renamed[i + 1];
    return -1;
}

/* An index of W[...] in this iteration: a literal, the loop's index or a size. */
static bool oi__sy_ur_index(const oi__sy_ur *c, const oi__pindex *ix, int64_t *v) {
    if (ix->is_slice)
        return false;
    if (!ix->single.ident) {
        *v = ix->single.lit;
        return true;
    }
    if (strcmp(ix->single.ident, c->loop->ir->loop_index) == 0) {
        *v = c->iter;
        return true;
    }
    return !oi__expr_is_compound(&ix->single) && oi__plan_size(c->p, ix->single.ident, v);
}

/* The constant slot holding entry W[index...] of prefix table `slot`. */
static oi_status oi__sy_ur_entry(oi__sy_ur *c, const oi__pnode *pn, int slot, const oi__pindex *ix, int *out) {
    const oi__slot *w = &c->p->slots[slot];
    int64_t at[OI_MAX_DIMS];
    for (int k = 0; k < w->n_indices; k++)
        if (!oi__sy_ur_index(c, &ix[k], &at[k]))
            return oi__fail_at(OI_ERROR_UNSUPPORTED, &pn->ir->src, "the %s target cannot synthesize this yet: an index of "
                               "%s that is not the loop's, a literal or a size", c->u->target, w->name);
    const oi_tensor_info *t = oi__plan_prefix_tensor(c->p, w, at, &pn->ir->src);
    if (!t)
        return OI_ERROR_VALIDATION;
    oi__slot e = *w;
    e.is_prefix = false;
    e.n_indices = 0;
    e.pattern = NULL;
    e.owned_pattern = NULL;
    e.runtime_dims = 0;
    e.dynamic_shape = false;
    memset(e.entry_dims, 0, sizeof e.entry_dims);
    e.model_name = t->name;
    e.model_tensor = t;
    e.ndim = (int)t->ndim;
    for (int d = 0; d < e.ndim; d++)
        e.shape[d] = (int64_t)t->dims[d];
    *out = oi__sy_ur_add_slot(c, e, w->name);
    return *out < 0 ? OI_ERROR_OUT_OF_MEMORY : OI_OK;
}

/* A setting per entry (group=E(n)) as the number it is in this iteration. */
static oi_status oi__sy_ur_attr(oi__sy_ur *c, const oi__pnode *pn, oi__attr *a) {
    int slot, dim;
    char index[64];
    if (a->kind != OI__ATTR_SIZE || !oi__plan_entry_dim(c->p, a->s, &slot, &dim, index, sizeof index))
        return OI_OK;
    oi__pindex ix;
    memset(&ix, 0, sizeof ix);
    char *end = NULL;
    ix.single.lit = strtoll(index, &end, 10);
    if (!end || *end)
        ix.single.ident = index;
    int64_t at;
    if (!oi__sy_ur_index(c, &ix, &at))
        return oi__fail_at(OI_ERROR_UNSUPPORTED, &pn->ir->src, "the %s target cannot synthesize this yet: setting %s=%s "
                           "indexed by a name other than the loop's", c->u->target, a->name, a->s);
    const oi_tensor_info *t = oi__plan_prefix_tensor(c->p, &c->p->slots[slot], &at, &pn->ir->src);
    if (!t || dim >= (int)t->ndim)
        return OI_ERROR_VALIDATION;
    a->kind = OI__ATTR_INT;
    a->i = (int64_t)t->dims[dim];
    return OI_OK;
}

/* The output of a copied op: a temporary whose shape depends on the entry
 * gets its own slot per iteration, typed by this op's inference. */
static oi_status oi__sy_ur_output(oi__sy_ur *c, const oi__pnode *src, oi__pnode *pn) {
    int out = oi__sy_ur_lookup(c, src->out);
    const oi__slot *declared = &c->p->slots[src->out];
    if (out < 0 && !declared->runtime_dims) {
        pn->out = src->out;
        return OI_OK;
    }
    oi__op_sig in[8], res;
    int n_in = (int)arrlen(pn->inputs) < 8 ? (int)arrlen(pn->inputs) : 8;
    for (int i = 0; i < n_in; i++) {
        const oi__slot *sl = &c->p->slots[pn->inputs[i]];
        in[i].dtype = sl->dtype;
        in[i].ndim = sl->ndim;
        memcpy(in[i].shape, sl->shape, sizeof in[i].shape);
    }
    memset(&res, 0, sizeof res);
    oi_status st = oi__op_infer(src->ir->op, pn->attrs, arrlenu(pn->attrs), in, (size_t)n_in, declared->dtype, &res);
    if (st != OI_OK) {
        char why[512];
        oi__copy_error(why, sizeof why);
        return oi__fail_at(OI_ERROR_VALIDATION, &src->ir->src, "loop %s, %s = %lld: %s", c->loop->ir->loop_name,
                           c->loop->ir->loop_index, (long long)c->iter, why);
    }
    bool fresh = out < 0;
    if (fresh) {
        oi__slot t = *declared;
        t.runtime_dims = 0;
        t.dynamic_shape = false;
        out = oi__sy_ur_add_slot(c, t, declared->name);
        if (out < 0 || !arrput(c->renamed, src->out) || !arrput(c->renamed, out))
            return OI_ERROR_OUT_OF_MEMORY;
    }
    oi__slot *t = &c->p->slots[out];
    bool same = t->ndim == res.ndim && t->dtype == res.dtype;
    for (int d = 0; same && d < res.ndim; d++)
        same = t->shape[d] == res.shape[d];
    if (!fresh && !same) /* one slot per iteration holds one shape */
        return oi__fail_at(OI_ERROR_UNSUPPORTED, &src->ir->src, "the %s target cannot synthesize this yet: %s changes "
                           "shape within one iteration of loop %s", c->u->target, declared->name,
                           c->loop->ir->loop_name);
    t->dtype = res.dtype;
    t->ndim = res.ndim;
    memcpy(t->shape, res.shape, sizeof t->shape);
    pn->out = out;
    return OI_OK;
}

/* One op of the body, as it runs in this iteration. */
static oi_status oi__sy_ur_op(oi__sy_ur *c, const oi__pnode *src, oi__pnode **nodes) {
    oi__pnode pn;
    memset(&pn, 0, sizeof pn);
    pn.ir = src->ir;
    pn.id = c->p->n_nodes++;
    pn.block = src->block;
    pn.var = src->var;
    pn.then_block = pn.else_block = -1;
    oi_status st = OI_OK;
    for (int i = 0; st == OI_OK && i < (int)arrlen(src->inputs); i++) {
        int in = oi__sy_ur_lookup(c, src->inputs[i]);
        if (in < 0 && src->input_indices && src->input_indices[i])
            st = oi__sy_ur_entry(c, src, src->inputs[i], src->input_indices[i], &in);
        if (st == OI_OK && (!arrput(pn.inputs, in < 0 ? src->inputs[i] : in) || !arrput(pn.input_indices, NULL)))
            st = OI_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; st == OI_OK && i < (int)arrlen(src->attrs); i++) {
        oi__attr a = src->attrs[i]; /* its strings and lists stay the loop's (kept in u->loops) */
        st = oi__sy_ur_attr(c, src, &a);
        if (st == OI_OK && !arrput(pn.attrs, a))
            st = OI_ERROR_OUT_OF_MEMORY;
    }
    if (st == OI_OK)
        st = oi__sy_ur_output(c, src, &pn);
    if (st == OI_OK) {
        pn.inplace = arrlen(pn.inputs) > 0 && pn.inputs[0] == pn.out && oi__op_allows_inplace(src->ir->op);
        if (!arrput(*nodes, pn))
            st = OI_ERROR_OUT_OF_MEMORY;
        else
            return OI_OK;
    }
    oi__plan_nodes_free(&pn, 1);
    return st;
}

/* Does a node outside `loop` touch slot `slot` (reads, writes, yields)? */
static bool oi__sy_ur_used(const oi__pnode *nodes, int count, const oi__pnode *loop, int slot) {
    for (int i = 0; i < count; i++) {
        const oi__pnode *pn = &nodes[i];
        if (pn == loop)
            continue;
        bool used = pn->out == slot || pn->var == slot || oi__sy_ur_used(pn->body, (int)arrlen(pn->body), loop, slot);
        for (int k = 0; !used && k < (int)arrlen(pn->inputs); k++)
            used = pn->inputs[k] == slot;
        for (int k = 0; !used && k < (int)arrlen(pn->vars); k++)
            used = pn->vars[k] == slot;
        if (used)
            return true;
    }
    return false;
}

/* A temporary that changes shape per iteration lives in the loop only:
 * after it, no one slot could hold "the last iteration's" value. */
static oi_status oi__sy_ur_check_local(const oi__plan *p, const char *target, const oi__pnode *loop) {
    for (int i = 0; i < (int)arrlen(loop->body); i++) {
        const oi__pnode *pn = &loop->body[i];
        const oi__slot *sl = pn->ir->kind == OI__NODE_OP ? &p->slots[pn->out] : NULL;
        if (!sl || !sl->runtime_dims)
            continue;
        for (int b = 0; b < (int)arrlen(p->blocks); b++)
            if (oi__sy_ur_used(p->blocks[b].nodes, (int)arrlen(p->blocks[b].nodes), loop, pn->out))
                return oi__fail_at(OI_ERROR_UNSUPPORTED, &pn->ir->src, "the %s target cannot synthesize this yet: %s "
                                   "changes shape with the entries of loop %s (unrolled) and is used outside it",
                                   target, sl->name, loop->ir->loop_name);
    }
    return OI_OK;
}

/* The loop's iterations, one after another, into *nodes. */
static oi_status oi__sy_ur_loop(oi__plan *p, oi__sy_unrolled *u, const oi__pnode *loop, oi__pnode **nodes) {
    int64_t lo, hi;
    if (!oi__sy_ur_bound(p, &loop->ir->loop_start, &lo) || !oi__sy_ur_bound(p, &loop->ir->loop_end, &hi))
        return oi__fail_at(OI_ERROR_UNSUPPORTED, &loop->ir->src, "the %s target cannot synthesize this yet: loop %s reads "
                           "entries whose shapes differ (E(n)), so it is unrolled, and its bounds are not sizes known "
                           "at synthesis time", u->target, loop->ir->loop_name);
    if (hi - lo > 64)
        return oi__fail_at(OI_ERROR_UNSUPPORTED, &loop->ir->src, "the %s target cannot synthesize this yet: loop %s reads "
                           "entries whose shapes differ (E(n)) over more than 64 iterations", u->target,
                           loop->ir->loop_name);
    oi__sy_ur c = {p, u, loop, 0, NULL};
    oi_status st = oi__sy_ur_check_local(p, u->target, loop);
    for (c.iter = lo; st == OI_OK && c.iter < hi; c.iter++) {
        arrsetlen(c.renamed, 0);
        for (int i = 0; st == OI_OK && i < (int)arrlen(loop->body); i++)
            if (loop->body[i].ir->kind == OI__NODE_OP)
                st = oi__sy_ur_op(&c, &loop->body[i], nodes);
    }
    arrfree(c.renamed);
    return st;
}

oi_status oi__sy_unroll(oi__plan *p, oi__sy_unrolled *u) {
    for (int b = 0; b < (int)arrlen(p->blocks); b++) {
        oi__pblock *blk = &p->blocks[b];
        for (int i = 0; i < (int)arrlen(blk->nodes); i++) {
            if (blk->nodes[i].ir->kind != OI__NODE_LOOP || !oi__sy_ur_wanted(p, &blk->nodes[i]))
                continue;
            oi__pnode *copies = NULL;
            oi_status st = oi__sy_ur_loop(p, u, &blk->nodes[i], &copies);
            if (st != OI_OK || !arrput(u->loops, blk->nodes[i])) {
                oi__plan_nodes_free(copies, (int)arrlen(copies));
                arrfree(copies);
                return st != OI_OK ? st : OI_ERROR_OUT_OF_MEMORY;
            }
            /* the loop node moves to u->loops (its copies borrow its settings' strings) */
            int n = (int)arrlen(copies), total = (int)arrlen(blk->nodes) - 1 + n;
            oi__pnode *nodes = NULL;
            if (!arrsetlen(nodes, total)) {
                arrpop(u->loops);
                oi__plan_nodes_free(copies, n);
                arrfree(copies);
                return OI_ERROR_OUT_OF_MEMORY;
            }
            memcpy(nodes, blk->nodes, (size_t)i * sizeof *nodes);
            if (n > 0)
                memcpy(nodes + i, copies, (size_t)n * sizeof *nodes);
            memcpy(nodes + i + n, blk->nodes + i + 1, (size_t)(total - i - n) * sizeof *nodes);
            arrfree(blk->nodes);
            arrfree(copies);
            blk->nodes = nodes;
            i += n - 1;
        }
    }
    return OI_OK;
}

void oi__sy_unrolled_free(oi__sy_unrolled *u) {
    oi__plan_nodes_free(u->loops, (int)arrlen(u->loops));
    arrfree(u->loops);
    for (int i = 0; i < (int)arrlen(u->names); i++)
        oi__free(u->names[i]);
    arrfree(u->names);
}
