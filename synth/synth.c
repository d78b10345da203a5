/* synth.c - the synthesizer's entry points: a synthesizer (a target and
 * its options), oi_synthesize (validate into the executor's plan, then
 * schedule), the plan's summary and JSON, and oi_plan_emit (emit.c). */
#include "synth_internal.h"

struct oi_synthesizer {
    oi_device device;
    oi__sy_options options;
};

static oi_synthesizer *oi__sy_new(oi_device device, int max_kernel_ops) {
    oi_synthesizer *s = (oi_synthesizer *)oi__calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->device = device;
    s->options.max_kernel_ops = max_kernel_ops;
    return s;
}

oi_synthesizer *oi_synthesizer_new(oi_device device) {
    if (device == OI_DEVICE_VULKAN) {
        oi__fail(OI_ERROR_UNSUPPORTED, "oi_synthesizer_new: the Vulkan target (C host + GLSL) is not written yet; "
                                       "OI_DEVICE_CPU emits C");
        return NULL;
    }
    if (device != OI_DEVICE_AUTO && device != OI_DEVICE_CPU && device != OI_DEVICE_BLAS) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesizer_new: unknown device %d", (int)device);
        return NULL;
    }
    return oi__sy_new(OI_DEVICE_CPU, 16);
}

/* The device JSON: for now its type and preferences.max_kernel_ops are
 * read (a CPU target); the full reader with every field checked lives in
 * openinfer_impl/device_arch.h once it lands. */
oi_synthesizer *oi_synthesizer_from_arch_json(const char *device_json) {
    if (!device_json) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesizer_from_arch_json: no JSON text");
        return NULL;
    }
    oi__json *j = oi__json_parse(device_json, strlen(device_json));
    if (!j) {
        oi__error_prefix("device JSON");
        return NULL;
    }
    int max_ops = 16;
    oi_synthesizer *s = NULL;
    const oi__json *dev = oi__json_get(j, "device"), *prefs = oi__json_get(j, "preferences");
    const oi__json *type = dev ? oi__json_get(dev, "type") : NULL;
    const oi__json *mko = prefs ? oi__json_get(prefs, "max_kernel_ops") : NULL;
    if (j->type != OI__JSON_OBJECT) {
        oi__fail(OI_ERROR_FORMAT, "device JSON: $: expected an object");
    } else if (type && (type->type != OI__JSON_STRING || strcmp(type->text, "cpu") != 0)) {
        oi__fail(OI_ERROR_UNSUPPORTED, "device JSON: $.device.type: \"%s\": only \"cpu\" targets are synthesized yet",
                 type->type == OI__JSON_STRING ? type->text : "?");
    } else if (mko && (mko->type != OI__JSON_NUMBER || mko->number < 1 || mko->number > 4096 ||
                       mko->number != (double)(int)mko->number)) {
        oi__fail(OI_ERROR_FORMAT, "device JSON: $.preferences.max_kernel_ops: expected an integer in 1..4096");
    } else {
        if (mko)
            max_ops = (int)mko->number;
        s = oi__sy_new(OI_DEVICE_CPU, max_ops);
    }
    oi__json_free(j);
    return s;
}

void oi_synthesizer_free(oi_synthesizer *synth) { oi__free(synth); }

oi_status oi_synthesizer_set_max_kernel_ops(oi_synthesizer *synth, int max_ops) {
    if (!synth || max_ops < 1)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesizer_set_max_kernel_ops: need a synthesizer and >= 1");
    synth->options.max_kernel_ops = max_ops;
    return OI_OK;
}

/* "minimal" stays; anything else becomes a C identifier. */
static char *oi__sy_c_name(const char *name) {
    size_t n = strlen(name);
    char *out = (char *)oi__malloc(n + 2);
    if (!out)
        return NULL;
    size_t k = 0;
    if (n == 0 || (name[0] >= '0' && name[0] <= '9'))
        out[k++] = '_';
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        out[k++] = ok ? c : '_';
    }
    out[k] = '\0';
    return out;
}

/* FNV-1a over the header and tables: names, dtypes, shapes, sizes and
 * offsets of every entry, the fingerprint the emitted code checks. */
static uint64_t oi__sy_fnv1a(const uint8_t *bytes, uint64_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < n; i++) {
        h ^= bytes[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

oi_plan *oi_synthesize(oi_synthesizer *synth, const oi_model *model, const oi_graph *graph) {
    if (!synth || !graph) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesize: need a synthesizer and a graph");
        return NULL;
    }
    oi_plan *p = (oi_plan *)oi__calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->model = model;
    p->name = oi__sy_c_name(oi_graph_name(graph));
    p->plan = p->name ? oi__plan_build(graph, model) : NULL;
    if (!p->plan || oi__sy_schedule_build(p->plan, &synth->options, &p->schedule) != OI_OK) {
        oi_plan_free(p);
        return NULL;
    }
    p->scheduled = true;
    if (model) {
        const uint8_t *bytes;
        oi__model_raw_bytes(model, &bytes, &p->model_size, &p->model_header_bytes);
        p->fingerprint = oi__sy_fnv1a(bytes, p->model_header_bytes);
    }
    return p;
}

void oi_plan_free(oi_plan *plan) {
    if (!plan)
        return;
    if (plan->scheduled)
        oi__sy_schedule_free(&plan->schedule);
    oi__plan_free(plan->plan);
    oi__free(plan->name);
    oi__free(plan);
}

oi_status oi_plan_get_summary(const oi_plan *plan, oi_plan_summary *out) {
    if (!plan || !out)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_plan_get_summary: NULL argument");
    const oi__sy_schedule *s = &plan->schedule;
    memset(out, 0, sizeof *out);
    out->name = plan->name;
    out->kernels = arrlenu(s->kernels);
    for (size_t k = 0; k < out->kernels; k++) {
        out->statements += arrlenu(s->kernels[k].nodes);
        out->bytes_moved += s->kernels[k].bytes;
        out->flops += s->kernels[k].flops;
    }
    out->arena_bytes = s->arena_bytes;
    out->peak_live_bytes = s->peak_bytes;
    out->state_bytes = s->state_bytes;
    return OI_OK;
}
