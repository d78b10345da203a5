/* residual_mlp.c - graph "residual_mlp", synthesized by OpenInfer 0.1.0 for Vulkan (any Vulkan 1.1 device):
 * 2 GLSL kernels (residual_mlp_kK.comp, compiled by the Makefile into residual_mlp_kK.spv.h and
 * embedded below) and the host code that records the step once and replays it.
 * Codegen read from the device: workgroups of 256 invocations, subgroup
 * reductions off, storage f32 (cooperative matrices are not
 * emitted yet).
 * Named sizes and the model's tensor offsets are specialized. */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "residual_mlp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define OI_HAVE_MMAP 1
#endif

#define residual_mlp_FINGERPRINT 0x4f2ae77c7c5a68c1ull /* FNV-1a of the model's header and tables */
#define residual_mlp_HEADER_BYTES 560ull   /* where the model's data section starts */
#define residual_mlp_MODEL_BYTES 1424ull    /* the model file, uploaded once at open */
#define residual_mlp_STATE_DEVICE_BYTES residual_mlp_STATE_BYTES

#ifdef __cplusplus
#define OI_THREAD_LOCAL thread_local
#else
#define OI_THREAD_LOCAL _Thread_local
#endif

static OI_THREAD_LOCAL char residual_mlp_error_text[512];

const char *residual_mlp_last_error(void) { return residual_mlp_error_text; }

static int residual_mlp_fail(int code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(residual_mlp_error_text, sizeof residual_mlp_error_text, fmt, args);
    va_end(args);
    return code;
}

#define OI_VK_FAIL(...) residual_mlp_fail(residual_mlp_ERROR_RUNTIME, __VA_ARGS__)
#include "oi_vk_runtime.h"

/* The kernels' SPIR-V (glslc -mfmt=c, by the Makefile) */
static const uint32_t residual_mlp_k0_spv[] =
#include "residual_mlp_k0.spv.h"
    ;
static const uint32_t residual_mlp_k1_spv[] =
#include "residual_mlp_k1.spv.h"
    ;
static const struct {
    const uint32_t *code;
    size_t bytes;
} residual_mlp_kernels[] = {
    {residual_mlp_k0_spv, sizeof residual_mlp_k0_spv},
    {residual_mlp_k1_spv, sizeof residual_mlp_k1_spv},
};
#define residual_mlp_N_KERNELS 2
#define residual_mlp_N_UPLOADS 1 /* variables the host sets before a step */

static const uint32_t residual_mlp_W_at[] = {164u, 228u, 292u}; /* W(l): the model's res.mlp.w.{l}, in floats */
static const uint32_t residual_mlp_b_at[] = {140u, 148u, 156u}; /* b(l): the model's res.mlp.b.{l}, in floats */

#ifdef residual_mlp_DEBUG_DUMP
typedef struct residual_mlp_dump_copy {
    int kernel, dtype;
    const char *name;
    uint64_t count;
    oi_vk_buffer copy;
} residual_mlp_dump_copy;
#endif
struct residual_mlp_ctx {
    oi_vk vk;
    oi_vk_buffer staging;  /* host-visible: the declared variables as the host sees them */
    oi_vk_buffer readback; /* host-visible: the temporaries a getter returns */
    unsigned char *arena;  /* readback's mapping, at the arena's offsets */
    unsigned char *state;  /* staging's mapping, at the state's offsets */
    const unsigned char *model; /* the mapped model file */
    size_t model_size;
    int model_mapped;
    long long steps;
    double gpu_ms;
    unsigned char inserted[1]; /* per dynamic variable: set since the last step */
    unsigned char on_device[1]; /* ... written by the application on the device for the next step */
    VkCommandBuffer upload_all, upload[residual_mlp_N_UPLOADS]; /* the uploads: all, or one by one */
#ifdef residual_mlp_DEBUG_DUMP
    residual_mlp_dump_copy *dumps; /* one per (recorded kernel, stored output) */
    int n_dumps, cap_dumps;
#endif
};

/* x: dynamic f32[2, 8] (../tests/synth/../../examples/residual_mlp.c:14) */
static void residual_mlp_init_x(residual_mlp_ctx *ctx) {
    float *v = (float *)(ctx->state + 0);
    memset(v, 0, 64);
}

/* Maps the model read-only and checks that it is the file this code was
 * synthesized for: the header and tables hash to residual_mlp_FINGERPRINT. */
static int residual_mlp_map_model(residual_mlp_ctx *ctx, const char *path) {
    if (!path)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_open: no model path");
    FILE *f = fopen(path, "rb");
    if (!f)
        return residual_mlp_fail(residual_mlp_ERROR_IO, "%s: cannot open the model", path);
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return residual_mlp_fail(residual_mlp_ERROR_IO, "%s: cannot seek", path);
    }
    long size = ftell(f);
    void *bytes = NULL;
#ifdef OI_HAVE_MMAP
    if (size > 0) {
        bytes = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
        if (bytes == MAP_FAILED)
            bytes = NULL;
        else
            ctx->model_mapped = 1;
    }
#endif
    if (!bytes && size > 0) { /* no mmap: read it */
        bytes = malloc((size_t)size);
        if (bytes && (fseek(f, 0, SEEK_SET) != 0 || fread(bytes, 1, (size_t)size, f) != (size_t)size)) {
            free(bytes);
            bytes = NULL;
        }
    }
    fclose(f);
    if (!bytes)
        return residual_mlp_fail(residual_mlp_ERROR_IO, "%s: cannot read the model", path);
    ctx->model = (const unsigned char *)bytes;
    ctx->model_size = (size_t)size;
    uint64_t data_at = 0, hash = 0xcbf29ce484222325ull;
    for (int i = 7; i >= 0 && ctx->model_size >= 61; i--)
        data_at = data_at << 8 | ctx->model[53 + i]; /* offset_data, little-endian */
    if (ctx->model_size < 61 || data_at != residual_mlp_HEADER_BYTES || data_at > ctx->model_size ||
        (uint64_t)ctx->model_size < 1424ull)
        return residual_mlp_fail(residual_mlp_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(its layout differs); synthesize again for this file", path);
    for (uint64_t i = 0; i < data_at; i++) {
        hash ^= ctx->model[i];
        hash *= 0x100000001b3ull;
    }
    if (hash != residual_mlp_FINGERPRINT)
        return residual_mlp_fail(residual_mlp_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(fingerprint %016llx, expected %016llx); synthesize again for this file",
                       path, (unsigned long long)hash, (unsigned long long)residual_mlp_FINGERPRINT);
    return 0;
}

#ifdef residual_mlp_DEBUG_DUMP
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "npy.h"
#define residual_mlp_STR2(x) #x
#define residual_mlp_STR(x) residual_mlp_STR2(x)
/* The debug build records, after each dispatch, a copy of every stored variable
 * the kernel wrote into a host-visible buffer of its own (made while recording,
 * so a step allocates nothing); after the step's fence each becomes
 * dir/stepS_kK_VAR.npy. The copies add barriers and traffic: debug only. */
static int residual_mlp_dump_record(residual_mlp_ctx *ctx, VkCommandBuffer cb, int kernel, const char *name, int dtype,
                            uint64_t count, const oi_vk_range *r) {
    if (ctx->n_dumps == ctx->cap_dumps) {
        int cap = ctx->cap_dumps ? 2 * ctx->cap_dumps : 16;
        residual_mlp_dump_copy *d = (residual_mlp_dump_copy *)realloc(ctx->dumps, (size_t)cap * sizeof *d);
        if (!d)
            return residual_mlp_fail(residual_mlp_ERROR_MEMORY, "residual_mlp_open: out of memory (debug dump)");
        ctx->dumps = d;
        ctx->cap_dumps = cap;
    }
    residual_mlp_dump_copy *d = &ctx->dumps[ctx->n_dumps];
    memset(d, 0, sizeof *d);
    if (oi_vk_buffer_create(&ctx->vk, &d->copy, r->bytes, OI_VK_HOST_USAGE, 1))
        return 1;
    ctx->n_dumps++;
    d->kernel = kernel;
    d->name = name;
    d->dtype = dtype;
    d->count = count;
    if (oi_vk_access(&ctx->vk, cb, r, 1, NULL, 0))
        return 1;
    VkBufferCopy region = {r->offset, 0, r->bytes};
    vkCmdCopyBuffer(cb, ctx->vk.device_buffers[r->buffer].buffer, d->copy.buffer, 1, &region);
    return 0;
}

static void residual_mlp_dump_write(const residual_mlp_ctx *ctx) {
    for (int i = 0; i < ctx->n_dumps; i++) {
        const residual_mlp_dump_copy *d = &ctx->dumps[i];
        char path[1024];
        snprintf(path, sizeof path, "%s/step%lld_k%d_%s.npy", residual_mlp_STR(residual_mlp_DEBUG_DUMP), ctx->steps,
                 d->kernel, d->name);
        oi_npy_write(path, (oi_npy_dtype)d->dtype, 1, &d->count, d->copy.map, NULL);
    }
}
#endif

/* The step, recorded once at open and replayed by every residual_mlp_step: the
 * inputs made visible (uploaded just before, or written by the application),
 * the zeros a step starts with, the kernels in the schedule's order (a
 * barrier only where one reads or overwrites what an earlier one touched),
 * the getters' values down. */
static int residual_mlp_record(residual_mlp_ctx *ctx, VkCommandBuffer cb) {
    oi_vk *vk = &ctx->vk;
    oi_vk_bind(vk, cb, 0); /* the model's window at its start */
    if (vk->queries) {
        vkCmdResetQueryPool(cb, vk->queries, 0, 2 + OI_VK_PROFILE);
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk->queries, 0);
    }
    oi_vk_barrier_from_before(vk, cb); /* the uploads, or the application's writes */

    /* the graph */
    if (oi_vk_copy(vk, cb, OI_VK_ARENA, 0, OI_VK_STATE, 0, 64)) /* residual_mlp.c:22: transfer x >> h */
        return 1;
    /* residual_mlp.c:23: loop layers (l in 0..num_layers): recorded once per iteration */
    for (int64_t l = 0; l < 3; l++) {
        { /* k0, matmul: residual_mlp.c:24-26 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 0, 64}, {OI_VK_ARENA, 64, 64}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 64, 64}};
            uint64_t lo = UINT64_MAX, hi = 0;
            oi_vk_span(&lo, &hi, 4u * (uint64_t)residual_mlp_W_at[l], 256u);
            oi_vk_span(&lo, &hi, 4u * (uint64_t)residual_mlp_b_at[l], 32u);
            uint32_t mb = 0;
            if (oi_vk_model_window(vk, cb, lo, hi, &mb))
                return 1;
            const uint32_t push[] = {mb, residual_mlp_W_at[l], residual_mlp_b_at[l]};
            if (oi_vk_dispatch(vk, cb, 0, push, (uint32_t)sizeof push, 1u, 1u, 1u, reads, 2, writes, 1))
                return 1;
#ifdef residual_mlp_DEBUG_DUMP
            if (residual_mlp_dump_record(ctx, cb, 0, "u", 10, 16u, &writes[0]))
                return 1;
#endif
        }
        { /* k1, elementwise: residual_mlp.c:27 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 0, 64}, {OI_VK_ARENA, 64, 64}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 0, 64}};
            if (oi_vk_dispatch(vk, cb, 1, NULL, 0, 1u, 1u, 1u, reads, 2, writes, 1))
                return 1;
#ifdef residual_mlp_DEBUG_DUMP
            if (residual_mlp_dump_record(ctx, cb, 1, "h", 10, 16u, &writes[0]))
                return 1;
#endif
        }
    }

    { /* the temporaries a getter returns: back to the host */
        static const VkBufferCopy regions[] = {{0, 0, 64}};
        static const oi_vk_range ranges[] = {{OI_VK_ARENA, 0, 64}};
        if (oi_vk_access(vk, cb, ranges, (int)(sizeof ranges / sizeof ranges[0]), NULL, 0))
            return 1;
        vkCmdCopyBuffer(cb, vk->device_buffers[OI_VK_ARENA].buffer, ctx->readback.buffer, 1u, regions);
    }
    { /* everything above, visible to the host after the fence */
        VkMemoryBarrier host;
        memset(&host, 0, sizeof host);
        host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
        host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host, 0, NULL, 0, NULL);
    }
    if (vk->queries)
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, vk->queries, 1);
    return oi_vk_check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

/* Before a step, from the host's staging copy up to the device: x. */
static const VkBufferCopy residual_mlp_uploads[residual_mlp_N_UPLOADS] = {{0, 0, 64}};
/* ... the dynamic variable each one carries (ctx->inserted's index), -1: volatile */
static const int residual_mlp_upload_dynamic[residual_mlp_N_UPLOADS] = {0};

/* Records uploads[which], or all of them (which < 0), into a command buffer of its own. */
static int residual_mlp_record_upload(residual_mlp_ctx *ctx, VkCommandBuffer *cb, int which) {
    if (oi_vk_begin(&ctx->vk, cb, 0))
        return 1;
    vkCmdCopyBuffer(*cb, ctx->staging.buffer, ctx->vk.device_buffers[OI_VK_STATE].buffer,
                    which < 0 ? residual_mlp_N_UPLOADS : 1u, which < 0 ? residual_mlp_uploads : &residual_mlp_uploads[which]);
    return oi_vk_check(vkEndCommandBuffer(*cb), "vkEndCommandBuffer");
}

static int residual_mlp_record_uploads(residual_mlp_ctx *ctx) {
    if (residual_mlp_record_upload(ctx, &ctx->upload_all, -1))
        return 1;
    for (int u = 0; u < residual_mlp_N_UPLOADS; u++)
        if (residual_mlp_record_upload(ctx, &ctx->upload[u], u))
            return 1;
    return 0;
}

/* ---- the API ---- */

static int residual_mlp_use_app_device(residual_mlp_ctx *ctx, const residual_mlp_vulkan_device *app) {
    oi_vk *vk = &ctx->vk;
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)(void (*)(void))app->get_instance_proc_addr;
    if (oi_vk_use_app_device(vk, (VkInstance)app->instance, (VkPhysicalDevice)app->physical_device,
                             (VkDevice)app->device, (VkQueue)app->queue, app->queue_family_index, gipa))
        return 1;
    if (!app->model_buffer)
        return 0;
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(vk->physical, &props);
    if (app->model_offset % props.limits.minStorageBufferOffsetAlignment)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_open_on_device: model_offset %llu is not a multiple of "
                       "minStorageBufferOffsetAlignment (%llu)", (unsigned long long)app->model_offset,
                       (unsigned long long)props.limits.minStorageBufferOffsetAlignment);
    vk->device_buffers[OI_VK_MODEL].buffer = OI_VK_U64_BUFFER(app->model_buffer);
    vk->device_buffers[OI_VK_MODEL].size = residual_mlp_MODEL_BYTES;
    vk->model_offset = app->model_offset;
    vk->app_model = 1;
    return 0;
}

static int residual_mlp_make_device(residual_mlp_ctx *ctx) {
    oi_vk *vk = &ctx->vk;
    if (oi_vk_create_instance(vk) || oi_vk_pick_device(vk) || oi_vk_create_device(vk, NULL, 0, NULL))
        return 1;
    return 0;
}

static int residual_mlp_open_device(residual_mlp_ctx *ctx, const residual_mlp_vulkan_device *app) {
    oi_vk *vk = &ctx->vk;
    if (app) {
        if (residual_mlp_use_app_device(ctx, app))
            return 1;
    } else if (residual_mlp_make_device(ctx)) {
        return 1;
    }
    const VkDeviceSize sizes[OI_VK_BUFFERS] = {residual_mlp_ARENA_BYTES, residual_mlp_STATE_DEVICE_BYTES, (residual_mlp_MODEL_BYTES + 255u) / 256u * 256u};
    for (int i = 0; i < OI_VK_BUFFERS; i++)
        if (!(i == OI_VK_MODEL && vk->app_model) &&
            oi_vk_buffer_create(vk, &vk->device_buffers[i], sizes[i], OI_VK_DEVICE_USAGE, 0))
            return 1;
    if (oi_vk_buffer_create(vk, &ctx->staging, residual_mlp_STATE_DEVICE_BYTES, OI_VK_HOST_USAGE, 1) ||
        oi_vk_buffer_create(vk, &ctx->readback, residual_mlp_ARENA_BYTES, OI_VK_HOST_USAGE, 1))
        return 1;
    ctx->state = (unsigned char *)ctx->staging.map;
    ctx->arena = (unsigned char *)ctx->readback.map;
    vk->pipelines = (VkPipeline *)calloc(residual_mlp_N_KERNELS + 1, sizeof *vk->pipelines);
    if (!vk->pipelines)
        return residual_mlp_fail(residual_mlp_ERROR_MEMORY, "residual_mlp_open: out of memory");
    vk->n_pipelines = residual_mlp_N_KERNELS;
    if (oi_vk_create_layout(vk, 12u))
        return 1;
    for (int k = 0; k < residual_mlp_N_KERNELS; k++)
        if (oi_vk_create_pipeline(vk, k, residual_mlp_kernels[k].code, residual_mlp_kernels[k].bytes))
            return 1;
    return 0;
}

static residual_mlp_ctx *residual_mlp_open_on(const char *model_path, const residual_mlp_vulkan_device *app) {
    residual_mlp_ctx *ctx = (residual_mlp_ctx *)calloc(1, sizeof *ctx);
    if (!ctx) {
        residual_mlp_fail(residual_mlp_ERROR_MEMORY, "residual_mlp_open: out of memory");
        return NULL;
    }
    if (residual_mlp_map_model(ctx, model_path) != 0 || residual_mlp_open_device(ctx, app) != 0) {
        residual_mlp_close(ctx);
        return NULL;
    }
    /* the declared variables as they start, then everything up once */
    residual_mlp_init_x(ctx);
    oi_vk *vk = &ctx->vk;
    if ((ctx->model && !vk->app_model &&
         oi_vk_upload(vk, &vk->device_buffers[OI_VK_MODEL], 0, ctx->model, ctx->model_size)) ||
        oi_vk_upload(vk, &vk->device_buffers[OI_VK_STATE], 0, ctx->state, residual_mlp_STATE_BYTES) ||
        oi_vk_begin(vk, &vk->step, 0) || residual_mlp_record(ctx, vk->step) || residual_mlp_record_uploads(ctx)) {
        residual_mlp_close(ctx);
        return NULL;
    }
    return ctx;
}

void residual_mlp_close(residual_mlp_ctx *ctx) {
    if (!ctx)
        return;
    if (ctx->vk.device) {
        if (!ctx->vk.app_device) /* every submission was waited for; the rest is the application's */
            vkDeviceWaitIdle(ctx->vk.device);
        oi_vk_buffer_free(&ctx->vk, &ctx->staging);
        oi_vk_buffer_free(&ctx->vk, &ctx->readback);
#ifdef residual_mlp_DEBUG_DUMP
        for (int i = 0; i < ctx->n_dumps; i++)
            oi_vk_buffer_free(&ctx->vk, &ctx->dumps[i].copy);
#endif
    }
    oi_vk_destroy(&ctx->vk);
#ifdef residual_mlp_DEBUG_DUMP
    free(ctx->dumps);
#endif
#ifdef OI_HAVE_MMAP
    if (ctx->model_mapped)
        munmap((void *)(uintptr_t)ctx->model, ctx->model_size);
    else
#endif
        free((void *)(uintptr_t)ctx->model);
    free(ctx);
}

/* The kernels run on the GPU: no host threads, so the options have nothing to set. */
residual_mlp_ctx *residual_mlp_open_with(const char *model_path, const residual_mlp_options *options) {
    (void)options;
    return residual_mlp_open(model_path);
}

residual_mlp_ctx *residual_mlp_open(const char *model_path) { return residual_mlp_open_on(model_path, NULL); }

residual_mlp_ctx *residual_mlp_open_on_device(const char *model_path, const residual_mlp_vulkan_device *device) {
    if (!device) {
        residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_open_on_device: no device");
        return NULL;
    }
    return residual_mlp_open_on(model_path, device);
}

int residual_mlp_step(residual_mlp_ctx *ctx) {
    if (!ctx)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_step: no context");
    /* the start of a step, in the staging copy the recorded step uploads */
    if (!ctx->inserted[0] && !ctx->on_device[0])
        residual_mlp_init_x(ctx); /* dynamic, not set: as declared */
    /* the uploads, but not of an input the application wrote on the device, then the step */
    VkCommandBuffer cbs[residual_mlp_N_UPLOADS + 1];
    uint32_t n = 0;
    int from_device = 0;
    for (size_t d = 0; d < sizeof ctx->on_device; d++)
        from_device |= ctx->on_device[d] && !ctx->inserted[d];
    if (!from_device)
        cbs[n++] = ctx->upload_all;
    for (int u = 0; u < residual_mlp_N_UPLOADS && from_device; u++) {
        int d = residual_mlp_upload_dynamic[u];
        if (d < 0 || !ctx->on_device[d] || ctx->inserted[d])
            cbs[n++] = ctx->upload[u];
    }
    cbs[n++] = ctx->vk.step;
    if (oi_vk_submit_n(&ctx->vk, cbs, n))
        return 1;
    if (ctx->vk.queries) {
        uint64_t ticks[2] = {0, 0};
        if (vkGetQueryPoolResults(ctx->vk.device, ctx->vk.queries, 0, 2, sizeof ticks, ticks, sizeof ticks[0],
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS)
            ctx->gpu_ms = (double)(ticks[1] - ticks[0]) * ctx->vk.timestamp_ns * 1e-6;
    }
#ifdef residual_mlp_DEBUG_DUMP
    residual_mlp_dump_write(ctx);
#endif
    memset(ctx->inserted, 0, sizeof ctx->inserted);
    memset(ctx->on_device, 0, sizeof ctx->on_device);
    ctx->steps++;
    return 0;
}

double residual_mlp_gpu_ms(const residual_mlp_ctx *ctx) { return ctx ? ctx->gpu_ms : 0.0; }
int residual_mlp_dispatches(const residual_mlp_ctx *ctx) { return ctx ? ctx->vk.dispatches : 0; }
int residual_mlp_barriers(const residual_mlp_ctx *ctx) { return ctx ? ctx->vk.barriers : 0; }
int residual_mlp_dispatch_ms(const residual_mlp_ctx *ctx, double *ms, int *kernel, int max) {
    return ctx ? oi_vk_dispatch_ms(&ctx->vk, ms, kernel, max) : 0;
}

int residual_mlp_set_x(residual_mlp_ctx *ctx, const float *values, size_t count) {
    if (!ctx || !values || count != 16u)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_set_x: %zu values given, x holds 16", count);
    memcpy(ctx->state + 0, values, 64);
    ctx->inserted[0] = 1;
    return 0;
}

const float *residual_mlp_get_x(const residual_mlp_ctx *ctx, size_t *count) {
    if (count)
        *count = 16u;
    return ctx ? (float *)(ctx->state + 0) : NULL;
}

const float *residual_mlp_get_h(const residual_mlp_ctx *ctx, size_t *count) {
    if (count)
        *count = 16u;
    return ctx ? (float *)(ctx->arena + 0) : NULL;
}

int residual_mlp_input_buffer_x(residual_mlp_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size) {
    if (!ctx || !buffer || !offset || !size)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_input_buffer_x: a NULL argument");
    ctx->on_device[0] = 1; /* the next step reads what the application writes there */
    ctx->inserted[0] = 0;
    *buffer = OI_VK_BUFFER_U64(ctx->vk.device_buffers[OI_VK_STATE].buffer);
    *offset = 0u;
    *size = 64u;
    return 0;
}

int residual_mlp_output_buffer_x(const residual_mlp_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size) {
    if (!ctx || !buffer || !offset || !size)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_output_buffer_x: a NULL argument");
    *buffer = OI_VK_BUFFER_U64(ctx->vk.device_buffers[OI_VK_STATE].buffer);
    *offset = 0u;
    *size = 64u;
    return 0;
}

int residual_mlp_output_buffer_h(const residual_mlp_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size) {
    if (!ctx || !buffer || !offset || !size)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_output_buffer_h: a NULL argument");
    *buffer = OI_VK_BUFFER_U64(ctx->vk.device_buffers[OI_VK_ARENA].buffer);
    *offset = 0u;
    *size = 64u;
    return 0;
}

