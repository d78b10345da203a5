/* exec_trace.c - the trace: one event per node run (the JSON form of
 * the seed), GPU times of device ops from backends that time them, and
 * oi_executor_trace_json. Consumer contexts keep their own events until the
 * entry's await appends them. */
#include "executor.h"

/* A node kind is its event kind (node_list.h keeps the rows in the order
 * of the public oi_event_kind), so the trace converts by a cast. */
#define OI__EVENT_SAME(kind, event, dsl, json, trace, keys) \
    OI__STATIC_ASSERT((int)OI__NODE_##kind == (int)OI_EVENT_##event, "node kind " #kind " is event " #event);
OI__NODE_LIST(OI__EVENT_SAME)
#undef OI__EVENT_SAME

static const char *const oi__event_names[] = {
#define OI__EVENT_NAME(kind, event, dsl, json, trace, keys) trace,
    OI__NODE_LIST(OI__EVENT_NAME)
#undef OI__EVENT_NAME
};

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
    c->device_seq = be->next_seq ? be->next_seq(be_ctx) : 0;
}

/* After a flush: GPU times of this step's device ops into their events. */
static void oi__collect_gpu_times(oi_executor *e) {
    const oi__backend *be = e->sim->backend;
    if (!be->take_times)
        return;
    oi__op_time times[256];
    size_t n;
    ptrdiff_t from = e->trace_step_start;
    while ((n = be->take_times(e->sim->backend_ctx, times, 256)) > 0) {
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
}

static void oi__record(oi__ctx *c, const oi__pnode *pn, uint64_t nanos, const char *taken_block, int64_t loop_start,
                       int64_t loop_end) {
    oi__tev t;
    memset(&t, 0, sizeof t);
    t.block_name = c->exec->plan->blocks[pn->block].ir->name;
    t.node_index = pn->ir->index;
    t.uuid = pn->ir->uuid;
    t.kind = (oi_event_kind)pn->ir->kind;
    t.op_name = pn->ir->kind == OI__NODE_OP ? oi_op_name(pn->ir->op) : NULL;
    t.scope = pn->ir->src.scope;
    t.nanos = nanos;
    t.on_device = c->ran_on_device;
    t.gpu_seq = c->device_seq;
    t.gpu_micros = -1.0;
    t.typed_slot = pn->ir->kind == OI__NODE_ASSIGN && pn->out >= 0 && oi__slot_of(c->exec, pn->out)->typed_by_op ? pn->out : -1;
    c->ran_on_device = false;
    oi__tev_fill(&t, pn, taken_block, loop_start, loop_end);
    if (!(c == &c->exec->main ? arrput(c->exec->trace, t) : arrput(c->events, t)))
        oi__tev_free(&t); /* out of memory: the event is not recorded */
}

void oi_executor_set_trace(oi_executor *e, bool on) {
    if (e) {
        e->trace_on = on;
        e->main.record = on;
    }
}

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
        if (t->typed_slot >= 0) { /* OI_ASSIGN(h): the type its first writer gave it */
            char type[160];
            oi__buf_puts(&b, ",\n    \"type\": ");
            oi__buf_json_string(&b, oi__slot_sig_text(type, sizeof type, oi__slot_of(e, t->typed_slot)));
        }
        oi__buf_printf(&b, ",\n    \"micros\": [%llu, %llu, %llu]", (unsigned long long)(t->nanos / 1000000u),
                       (unsigned long long)(t->nanos / 1000u % 1000u), (unsigned long long)(t->nanos % 1000u));
        if (t->on_device && t->gpu_micros >= 0)
            oi__buf_printf(&b, ",\n    \"gpu_micros\": %.3f", t->gpu_micros);
        oi__buf_puts(&b, "\n  }");
    }
    oi__buf_puts(&b, arrlen(e->trace) ? "\n]\n" : "]\n");
    return oi__buf_take(&b);
}
