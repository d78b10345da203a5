/* synth.c - the synthesizer's entry points: a synthesizer (a target and
 * its options), oi_synthesize (validate into the executor's plan, then
 * schedule), the plan's summary and JSON, and oi_plan_emit (emit.c). */
#include "synth_internal.h"
#include "../openinfer_impl/device_arch.h"

struct oi_synthesizer {
    oi_device device;
    oi__sy_options options;
    uint64_t global_bytes; /* the device's memory (device JSON); 0: not checked */
    oi__sy_gpu gpu;        /* OI_DEVICE_VULKAN: what codegen reads of the device */
    bool embed_model;      /* the model file as a const array in NAME_model.h (C target) */
};

/* A Vulkan device's codegen choices from its JSON (or, for
 * oi_synthesizer_new(OI_DEVICE_VULKAN), from none: no optional feature).
 * Workgroups: 256 invocations, fewer if the limits say so (a power of 2). */
bool oi__sy_coopmat_fits(const oi__sy_coopmat_tiles *t, uint64_t invocations, uint64_t shared_bytes, const char **why) {
    uint64_t uvec4s = (uint64_t)t->stages * (t->bm * (t->bk / 8u + 1u) + t->bk * (t->bn / 8u + 1u)) + /* A, B tiles */
                      64u * t->wg_m * t->wg_n; /* a 16 x 16 f32 fragment per subgroup for the edges */
    *why = t->bk % 16u ? "BK is not a multiple of 16"
           : t->bm % (16u * t->wg_m) || t->bn % (16u * t->wg_n) ? "BM or BN is not a multiple of 16 x the subgroups along it"
           : t->stages < 1 || t->stages > 2 ? "the shared-memory buffers are not 1 or 2"
           : 32u * t->wg_m * t->wg_n > invocations ? "its workgroup is larger than limits.max_workgroup_invocations and max_workgroup_size[0]"
           : 16u * uvec4s > shared_bytes ? "its tiles need more than limits.max_shared_memory_bytes"
           : NULL;
    return *why == NULL;
}

static uint64_t oi__sy_workgroup_most(const oi__device_arch *arch) {
    uint64_t a = arch->limits.max_workgroup_invocations, b = arch->limits.max_workgroup_size[0];
    return a && b ? (a < b ? a : b) : a ? a : b;
}

/* The cooperative-matrix matmul's tile shape: the JSON's
 * preferences.coopmat_block and coopmat_subgroups where given (checked by
 * oi_synthesizer_from_arch_json), else the first of these that the limits
 * allow: 128 x 256 blocks of 2 x 4 subgroups (64 x 64 each), K 32 at a time
 * in one buffer (256 invocations, 34.5 KiB: the fastest of nine shapes on an
 * H100, bench/gpu/synth_matmul_sweep.sh, 6% ahead of 2 x 8 subgroups), then
 * 128 x 128 of 2 x 4 (26 KiB). */
static bool oi__sy_coopmat_pick(const oi__device_arch *arch, oi__sy_coopmat_tiles *t) {
    const uint64_t *b = arch->preferences.coopmat_block, *g = arch->preferences.coopmat_subgroups;
    const char *why;
    if (b[0] && g[0]) {
        oi__sy_coopmat_tiles given = {(uint32_t)b[0], (uint32_t)b[1], (uint32_t)b[2], (uint32_t)g[0], (uint32_t)g[1],
                                      (uint32_t)g[2]};
        *t = given;
        return oi__sy_coopmat_fits(t, oi__sy_workgroup_most(arch), arch->limits.max_shared_memory_bytes, &why);
    }
    static const oi__sy_coopmat_tiles shapes[] = {{128, 256, 32, 2, 4, 1}, {128, 128, 32, 2, 4, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        *t = shapes[i];
        if (oi__sy_coopmat_fits(t, oi__sy_workgroup_most(arch), arch->limits.max_shared_memory_bytes, &why))
            return true;
    }
    return false;
}

static void oi__sy_gpu_from_arch(const oi__device_arch *arch, oi__sy_gpu *g) {
    memset(g, 0, sizeof *g);
    snprintf(g->device_name, sizeof g->device_name, "%s", arch && arch->device.name && *arch->device.name
             ? arch->device.name : "any Vulkan 1.1 device");
    uint64_t most = 256;
    if (arch && arch->limits.max_workgroup_invocations && arch->limits.max_workgroup_invocations < most)
        most = arch->limits.max_workgroup_invocations;
    if (arch && arch->limits.max_workgroup_size[0] && arch->limits.max_workgroup_size[0] < most)
        most = arch->limits.max_workgroup_size[0];
    g->workgroup = 1;
    while (g->workgroup * 2 <= most)
        g->workgroup *= 2;
    g->cpu_device = arch && arch->device.type == OI__ARCH_TYPE_CPU;
    g->max_shared_bytes = arch ? arch->limits.max_shared_memory_bytes : 0;
    g->max_push_bytes = arch ? (uint32_t)arch->limits.max_push_constants_bytes : 0;
    g->subgroup_ops = arch && arch->features.subgroup_ops;
    g->subgroup_size = arch ? (uint32_t)arch->limits.subgroup_size : 0;
    g->fp16 = arch && arch->features.fp16;
    g->cooperative_matrix = arch && arch->features.cooperative_matrix;
    g->int64 = arch && arch->features.int64;
    /* the JSON has no separate 16-bit storage flag: features.fp16 stands for
     * it (every fp16 device of examples/devices has both) and the emitted
     * open checks storageBuffer16BitAccess on the real device */
    g->fp16_storage = g->fp16 && arch->preferences.default_precision == OI__ARCH_FP16;
    g->coopmat_f16 = g->cooperative_matrix && g->fp16_storage && arch->limits.subgroup_size == 32 &&
                     oi__sy_coopmat_pick(arch, &g->cm);
}

static oi_synthesizer *oi__sy_new(oi_device device, int max_kernel_ops) {
    oi_synthesizer *s = (oi_synthesizer *)oi__calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->device = device;
    s->options.max_kernel_ops = max_kernel_ops;
    s->options.vulkan = device == OI_DEVICE_VULKAN;
    return s;
}

oi_synthesizer *oi_synthesizer_new(oi_device device) {
    if (device == OI_DEVICE_VULKAN) {
        oi_synthesizer *s = oi__sy_new(OI_DEVICE_VULKAN, 16);
        if (s) {
            s->options.parallel_rows = true;
            oi__sy_gpu_from_arch(NULL, &s->gpu);
        }
        return s;
    }
    if (device != OI_DEVICE_AUTO && device != OI_DEVICE_CPU && device != OI_DEVICE_BLAS) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesizer_new: unknown device %d", (int)device);
        return NULL;
    }
    return oi__sy_new(OI_DEVICE_CPU, 16);
}

/* The device JSON (openinfer_impl/device_arch.h checks every field and
 * names the JSON path of what is wrong). Read today: device.api ("c" or
 * "vulkan"), preferences.prefer_fusion and max_kernel_ops (fusion),
 * memory.global_bytes (the plan must fit), memory.l1d_bytes and l2_bytes
 * (the C target's gemm tiles), preferences.default_precision (the C target:
 * fp16/bf16 rounds every stored activation to it, as the simulator's
 * precision setting; render.c); for Vulkan also device.name and type,
 * limits.max_workgroup_invocations / max_workgroup_size (workgroups),
 * features.subgroup_ops (reductions), features.int64 (i64 arithmetic; refused
 * without it), preferences.default_precision with
 * features.fp16 (f16 storage of temporaries; bf16 is refused),
 * features.cooperative_matrix with preferences.coopmat_block and
 * coopmat_subgroups (the cooperative-matrix matmul's tiles; refused where
 * the limits do not hold them). */
oi_synthesizer *oi_synthesizer_from_arch_json(const char *device_json) {
    if (!device_json) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesizer_from_arch_json: no JSON text");
        return NULL;
    }
    oi__device_arch arch;
    oi_status st = oi__device_arch_parse(device_json, &arch);
    oi_synthesizer *s = NULL;
    if (st == OI_OK) {
        int max_ops = arch.preferences.prefer_fusion ? (int)arch.preferences.max_kernel_ops : 1;
        bool vulkan = arch.device.api == OI__ARCH_API_VULKAN;
        if (vulkan && arch.preferences.default_precision == OI__ARCH_BF16) {
            oi__fail(OI_ERROR_UNSUPPORTED, "oi_synthesizer_from_arch_json: $.preferences.default_precision \"bf16\": "
                     "the Vulkan target stores f32, or f16 for \"fp16\" with features.fp16; not bf16");
            oi__device_arch_free(&arch);
            return NULL;
        }
        const uint64_t *cb = arch.preferences.coopmat_block, *cg = arch.preferences.coopmat_subgroups;
        if (vulkan && (cb[0] != 0) != (cg[0] != 0)) {
            oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesizer_from_arch_json: $.preferences.coopmat_block and "
                     "coopmat_subgroups: give both or neither");
            oi__device_arch_free(&arch);
            return NULL;
        }
        if (vulkan && cb[0]) {
            oi__sy_coopmat_tiles t = {(uint32_t)cb[0], (uint32_t)cb[1], (uint32_t)cb[2], (uint32_t)cg[0], (uint32_t)cg[1],
                                      (uint32_t)cg[2]};
            const char *why;
            if (!oi__sy_coopmat_fits(&t, oi__sy_workgroup_most(&arch), arch.limits.max_shared_memory_bytes, &why)) {
                oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesizer_from_arch_json: $.preferences.coopmat_block "
                         "[%u, %u, %u] with coopmat_subgroups [%u, %u, %u]: %s", t.bm, t.bn, t.bk, t.wg_m, t.wg_n,
                         t.stages, why);
                oi__device_arch_free(&arch);
                return NULL;
            }
        }
        s = oi__sy_new(vulkan ? OI_DEVICE_VULKAN : OI_DEVICE_CPU, max_ops);
        if (s) {
            s->global_bytes = arch.memory.global_bytes;
            s->options.l1d_bytes = arch.memory.l1d_bytes; /* the gemm's kc and task columns */
            s->options.l2_bytes = arch.memory.l2_bytes;
            if (!vulkan && arch.preferences.default_precision != OI__ARCH_FP32) /* render.c rounds stores */
                s->options.precision = arch.preferences.default_precision == OI__ARCH_FP16 ? OI_DTYPE_F16 : OI_DTYPE_BF16;
        }
        if (s && vulkan) {
            s->options.parallel_rows = true;
            oi__sy_gpu_from_arch(&arch, &s->gpu);
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

oi_status oi_synthesizer_set_embed_model(oi_synthesizer *synth, bool embed) {
    if (!synth)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_synthesizer_set_embed_model: need a synthesizer");
    synth->embed_model = embed;
    return OI_OK;
}

/* The model file as a const array: for small models (a C compiler holds
 * the array's text in memory: 5-6 bytes of source per byte). */
#define OI__SY_EMBED_MAX_BYTES ((uint64_t)16 << 20)

static oi_status oi__sy_check_embed(const oi_plan *p) {
    if (!p->embed_model)
        return OI_OK;
    if (p->vulkan)
        return oi__fail(OI_ERROR_UNSUPPORTED, "%s: embedding the model is for the C target (the Vulkan target uploads "
                        "it from the file at open)", p->name);
    if (p->model_size > OI__SY_EMBED_MAX_BYTES)
        return oi__fail(OI_ERROR_UNSUPPORTED, "%s: the model file has %llu bytes, more than the %llu that can be "
                        "embedded; let NAME_open map it from the file", p->name, (unsigned long long)p->model_size,
                        (unsigned long long)OI__SY_EMBED_MAX_BYTES);
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

/* The plan names a number written as an op input after its text
 * ("0.5:f32"); the emitted code needs an identifier: lit_0p5_f32,
 * lit_m2_i32 ('.' -> p, '-' -> m; more '_' while the name is taken). */
static oi_status oi__sy_name_literals(oi__plan *plan, oi__sy_unrolled *u) {
    for (int i = 0; i < (int)arrlen(plan->slots); i++) {
        oi__slot *sl = &plan->slots[i];
        bool literal = false;
        for (int k = 0; k < (int)arrlen(plan->literals); k++)
            literal |= sl->decl == plan->literals[k];
        if (!literal)
            continue;
        oi__buf b;
        memset(&b, 0, sizeof b);
        oi__buf_puts(&b, "lit_");
        for (const char *c = sl->name; *c; c++) {
            char put[2] = {*c == '.' ? 'p' : *c == '-' ? 'm' : *c == '+' ? 'p' : *c == ':' ? '_' : *c, '\0'};
            oi__buf_puts(&b, put);
        }
        while (b.data && oi__plan_slot(plan, b.data) >= 0)
            oi__buf_puts(&b, "_");
        char *name = oi__buf_take(&b);
        if (!name || !arrput(u->names, name)) {
            oi__free(name);
            return OI_ERROR_OUT_OF_MEMORY;
        }
        sl->name = name; /* the plan's by-name lookup keeps the text */
    }
    return OI_OK;
}

/* bf16 variables: the C target stores their bits (schedule.c); the
 * Vulkan target stores f32 (and f16), so it refuses them, naming the
 * variable, before its checks of the kernels. */
static oi_status oi__sy_vulkan_refuse_bf16(const oi__plan *plan) {
    for (int i = 0; i < (int)arrlen(plan->slots); i++)
        if (plan->slots[i].dtype == OI_DTYPE_BF16)
            return oi__fail_at(OI_ERROR_UNSUPPORTED, plan->slots[i].src,
                               "the Vulkan target cannot synthesize this yet: %s is bf16 (the GLSL kernels store f32, "
                               "or f16 with features.fp16)", plan->slots[i].name);
    return OI_OK;
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
    p->unrolled.target = oi__sy_target_name(&synth->options);
    if (!p->plan || oi__sy_unroll(p->plan, &p->unrolled) != OI_OK ||
        oi__sy_name_literals(p->plan, &p->unrolled) != OI_OK ||
        oi__sy_schedule_build(p->plan, &synth->options, &p->schedule) != OI_OK) {
        oi_plan_free(p);
        return NULL;
    }
    p->scheduled = true;
    p->vulkan = synth->device == OI_DEVICE_VULKAN;
    p->gpu = synth->gpu;
    if (p->vulkan && (oi__sy_vulkan_refuse_bf16(p->plan) != OI_OK || oi__sy_vulkan_check(&p->schedule, &p->gpu) != OI_OK)) {
        oi_plan_free(p);
        return NULL;
    }
    if (model) {
        const uint8_t *bytes;
        oi__model_raw_bytes(model, &bytes, &p->model_size, &p->model_header_bytes);
        p->fingerprint = oi__sy_fnv1a(bytes, p->model_header_bytes);
    }
    p->embed_model = synth->embed_model && model;
    if (oi__sy_check_embed(p) != OI_OK) {
        oi_plan_free(p);
        return NULL;
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
    oi__sy_unrolled_free(&plan->unrolled); /* after the plan: its copied nodes borrow the loops' settings */
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
