/* exec_consumers.c - yield and await: the entry's `yield` starts every
 * consumer block awaiting one of its variables on its own thread, with a
 * private copy of the entry's values; the entry's `await` joins them and
 * takes back what they wrote. */
#include "executor.h"

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
        if (!oi__push_block(&w->ctx, b))
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
