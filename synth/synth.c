/* synth.c - the synthesizer's entry points: a synthesizer (a target and
 * its options), oi_synthesize (validate into the executor's plan, then
 * schedule), the plan's summary and JSON, and oi_plan_emit (emit.c). */
#include "synth_internal.h"
#include "../openinfer_impl/device_arch.h"

struct oi_synthesizer {
    oi_device device;
    oi__sy_options options;
    uint64_t global_bytes; /* the device's memory (device JSON); 0: not checked */
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

/* The device JSON (openinfer_impl/device_arch.h checks every field and
 * names the JSON path of what is wrong). Read today: device.api ("c"),
 * preferences.prefer_fusion and max_kernel_ops (fusion), memory.global_bytes
 * (the plan must fit), memory.l1d_bytes and l2_bytes (the gemm's tiles). */
oi_synthesizer *oi_synthesizer_from_arch_json(const char *device_json) {
    if (!device_json) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesizer_from_arch_json: no JSON text");
        return NULL;
    }
    oi__device_arch arch;
    oi_status st = oi__device_arch_parse(device_json, &arch);
    oi_synthesizer *s = NULL;
    if (st == OI_OK && arch.device.api != OI__ARCH_API_C) {
        oi__fail(OI_ERROR_UNSUPPORTED, "device JSON: $.device.api: \"vulkan\": the Vulkan target (GLSL + C host) is "
                                       "not written yet; devices with api \"c\" are synthesized");
    } else if (st == OI_OK) {
        int max_ops = arch.preferences.prefer_fusion ? (int)arch.preferences.max_kernel_ops : 1;
        s = oi__sy_new(OI_DEVICE_CPU, max_ops);
        if (s) {
            s->global_bytes = arch.memory.global_bytes;
            s->options.l1d_bytes = arch.memory.l1d_bytes; /* the gemm's kc and task columns */
            s->options.l2_bytes = arch.memory.l2_bytes;
        }
    }
    oi__device_arch_free(&arch);
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
    uint64_t need = p->schedule.arena_bytes + p->schedule.state_bytes + p->model_size;
    if (synth->global_bytes && need > synth->global_bytes) {
        oi__fail(OI_ERROR_UNSUPPORTED, "%s does not fit the device: it needs %llu bytes (arena %llu, state %llu, model "
                 "file %llu) and $.memory.global_bytes is %llu", p->name, (unsigned long long)need,
                 (unsigned long long)p->schedule.arena_bytes, (unsigned long long)p->schedule.state_bytes,
                 (unsigned long long)p->model_size, (unsigned long long)synth->global_bytes);
        oi_plan_free(p);
        return NULL;
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
