/* memory.c - oi_estimate_memory and the memory check made when an executor
 * is created (torchless's memory-aware init): weights + persistent caches +
 * intermediates must fit in what the chosen device has free. */
#include "simulator.h"

#include <ctype.h>

/* `precision`: the simulator's, for activations (f32: none is narrowed). */
static uint64_t oi__slot_bytes(const oi__slot *s, oi_dtype precision) {
    if (s->dynamic_shape)
        return 0; /* takes its shape from a cache read: counted with the cache */
    oi_dtype stored = precision != OI_DTYPE_F32 && oi__slot_is_activation(s) ? precision : s->dtype;
    return oi_dtype_nbytes(stored, (uint64_t)oi__shape_numel(s->ndim, s->shape));
}

/* Does `name` fit `pattern`, where each {index} stands for one or more of
 * [A-Za-z0-9_]? ("attn.{l}.wq" fits "attn.12.wq".) Recursion depth is
 * bounded by the lengths of the two (short) names. */
static bool oi__pattern_fits(const char *pattern, const char *name) {
    if (*pattern == '\0')
        return *name == '\0';
    if (*pattern != '{')
        return *pattern == *name && oi__pattern_fits(pattern + 1, name + 1);
    const char *close = strchr(pattern, '}');
    if (!close)
        return false;
    for (const char *end = name; isalnum((unsigned char)*end) || *end == '_';)
        if (oi__pattern_fits(close + 1, ++end))
            return true;
    return false;
}

static uint64_t oi__prefix_bytes(const oi_model *m, const oi__slot *s) {
    uint64_t total = 0;
    for (size_t i = 0; m && i < oi_model_tensor_count(m); i++) {
        const oi_tensor_info *t = oi_model_tensor_at(m, i);
        if (t->has_data && oi__pattern_fits(s->pattern, t->name))
            total += t->data_nbytes;
    }
    return total;
}

/* A persistent slot at its bounds: table entries times the @fixed size of
 * every key index, auto_dim dims grown to their @fixed size. */
static uint64_t oi__persistent_bytes(const oi__slot *s, bool *unbounded) {
    int64_t shape[OI_MAX_DIMS];
    memcpy(shape, s->shape, sizeof shape);
    for (int a = 0; a < s->n_auto && a < s->ndim; a++) {
        int64_t bound = s->fixed[s->auto_pos[a]];
        if (bound < 0)
            *unbounded = true;
        else
            shape[a] += bound;
    }
    uint64_t entries = 1;
    for (int k = 0; k < s->n_keys; k++) {
        int64_t bound = s->fixed[s->key_pos[k]];
        if (bound < 0)
            *unbounded = true;
        else
            entries *= (uint64_t)bound;
    }
    return entries * oi_dtype_nbytes(s->dtype, (uint64_t)oi__shape_numel(s->ndim, shape));
}

static void oi__estimate_plan(const oi__plan *p, oi_dtype precision, oi_memory_estimate *out) {
    memset(out, 0, sizeof *out);
    for (ptrdiff_t i = 0; i < arrlen(p->slots); i++) {
        const oi__slot *s = &p->slots[i];
        if (s->is_prefix)
            out->weights += oi__prefix_bytes(p->model, s);
        else if (s->model_tensor && s->model_tensor->has_data)
            out->weights += s->model_tensor->data_nbytes;
        else if (s->kind == OI__MEM_PERSISTENT)
            out->persistent += oi__persistent_bytes(s, &out->unbounded);
        else
            out->intermediates += oi__slot_bytes(s, precision);
    }
    out->total = out->weights + out->persistent + out->intermediates;
}

oi_status oi_estimate_memory(const oi_model *model, const oi_graph *graph, oi_device device,
                             oi_memory_estimate *out) {
    (void)device;
    if (!graph || !out)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_estimate_memory: graph and out must not be NULL");
    oi__plan *p = oi__plan_build(graph, model);
    if (!p)
        return OI_ERROR_VALIDATION;
    oi__estimate_plan(p, OI_DTYPE_F32, out);
    oi__plan_free(p);
    return OI_OK;
}

static double oi__mib(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* Fails when the simulator's device reports less free memory than the plan
 * needs. A device that reports no figure (free_memory 0) is not checked. */
oi_status oi__check_device_memory(const oi_simulator *sim, const oi__plan *p) {
    oi_backend_info infos[16];
    size_t count = 0;
    memset(infos, 0, sizeof infos);
    sim->backend->discover(infos, 16, &count);
    if (sim->device_index < 0 || (size_t)sim->device_index >= count || count > 16)
        return OI_OK;
    const oi_backend_info *dev = &infos[sim->device_index];
    oi_memory_estimate need;
    oi__estimate_plan(p, sim->desc.precision, &need); /* activations at the simulator's precision */
    if (dev->free_memory == 0 || need.total <= dev->free_memory)
        return OI_OK;
    return oi__fail(OI_ERROR_OUT_OF_MEMORY,
                    "graph %s needs %.1f MiB (weights %.1f, persistent caches %.1f, intermediates %.1f) but %s "
                    "device %d (%s) has %.1f MiB free; use a smaller graph or another device",
                    oi_graph_name(p->graph), oi__mib(need.total), oi__mib(need.weights), oi__mib(need.persistent),
                    oi__mib(need.intermediates), sim->backend->name, sim->device_index,
                    dev->device_name ? dev->device_name : "?", oi__mib(dev->free_memory));
}
