/* vulkan_backend.c - the Vulkan backend (compiled with OPENINFER_VULKAN).
 * The files below are its stages, in the order a context meets them:
 *   vk_device.c    loader (volk), instance, device choice, device + compute
 *                  queue or the user's own handles; discovery
 *   vk_memory.c    device-local blocks + sub-allocator, staging arenas,
 *                  device copies of tensors, uploads and readbacks
 *   vk_pipeline.c  embedded SPIR-V, pipelines per (op, dtypes), descriptor sets
 *   vk_record.c    the step's command list, barriers, record/replay, submit
 *   vk_ops.c       op -> push constants + dispatches; supports_op, run_op
 * then create/destroy and the vtable here. docs/vulkan.md explains the
 * design; docs/vulkan-interop.md the public entry points.
 * Without OPENINFER_VULKAN only the public entry points remain, and they
 * say the build has no Vulkan. */
#include "../openinfer_impl/internal.h"
#include "../openinfer_impl/device_arch.h"

#ifdef OPENINFER_VULKAN

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <volk.h>
#ifdef OPENINFER_VOLK_IMPLEMENTATION /* drop-in builds without a separate volk.c */
#include <volk.c>
#endif
#include "oi_vulkan_spirv.h" /* generated at build time by vulkan/gen_spirv.py */
#include "vk_context.h"
#include "vk_coverage.h"
#include "vk_matmul_tiling.h"

/* stb_ds takes a hash key's address with typeof(), which strict C11 lacks;
 * every key passed to hmgeti/hmput here is an lvalue, so plain & does. */
#undef STBDS_ADDRESSOF
#define STBDS_ADDRESSOF(typevar, value) &(value)

#include "vk_device.c"
#include "vk_memory.c"
#include "vk_pipeline.c"
#include "vk_record.c"
#include "vk_ops.c"
#include "vk_arch.c" /* the device JSON of a device (openinfer devices --json) */

static void oi__vk_destroy(void *opaque) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    if (!ctx)
        return;
    if (ctx->device) {
        ctx->vk.vkDeviceWaitIdle(ctx->device);
        for (ptrdiff_t i = 0; i < hmlen(ctx->weights); i++)
            oi__free(ctx->weights[i].value);
        hmfree(ctx->weights);
        for (ptrdiff_t i = 0; i < arrlen(ctx->deferred_frees); i++)
            oi__free(ctx->deferred_frees[i]);
        arrfree(ctx->deferred_frees);
        for (ptrdiff_t i = 0; i < arrlen(ctx->blocks); i++)
            oi__vk_block_destroy(ctx, &ctx->blocks[i]);
        arrfree(ctx->blocks);
        oi__vk_arena_destroy(ctx, &ctx->uploads);
        oi__vk_arena_destroy(ctx, &ctx->readbacks);
        for (ptrdiff_t i = 0; i < arrlen(ctx->slots); i++)
            oi__vk_slot_free(ctx, &ctx->slots[i]);
        arrfree(ctx->slots);
        for (ptrdiff_t i = 0; i < arrlen(ctx->pools); i++)
            ctx->vk.vkDestroyDescriptorPool(ctx->device, ctx->pools[i], NULL);
        arrfree(ctx->pools);
        hmfree(ctx->sets);
        for (ptrdiff_t i = 0; i < hmlen(ctx->pipelines); i++)
            ctx->vk.vkDestroyPipeline(ctx->device, ctx->pipelines[i].value, NULL);
        hmfree(ctx->pipelines);
        if (ctx->pipeline_cache)
            ctx->vk.vkDestroyPipelineCache(ctx->device, ctx->pipeline_cache, NULL);
        if (ctx->pipeline_layout)
            ctx->vk.vkDestroyPipelineLayout(ctx->device, ctx->pipeline_layout, NULL);
        if (ctx->set_layout)
            ctx->vk.vkDestroyDescriptorSetLayout(ctx->device, ctx->set_layout, NULL);
        for (int i = 0; i < (int)OI__VK_SHADER_COUNT; i++)
            if (ctx->shaders[i])
                ctx->vk.vkDestroyShaderModule(ctx->device, ctx->shaders[i], NULL);
        if (ctx->fence)
            ctx->vk.vkDestroyFence(ctx->device, ctx->fence, NULL);
        if (ctx->command_pool)
            ctx->vk.vkDestroyCommandPool(ctx->device, ctx->command_pool, NULL);
        if (ctx->owns_device)
            ctx->vk.vkDestroyDevice(ctx->device, NULL);
    }
    if (ctx->messenger && ctx->vki.vkDestroyDebugUtilsMessengerEXT)
        ctx->vki.vkDestroyDebugUtilsMessengerEXT(ctx->instance, ctx->messenger, NULL);
    if (ctx->owns_device && ctx->instance && ctx->vki.vkDestroyInstance)
        ctx->vki.vkDestroyInstance(ctx->instance, NULL);
    oi__vk_list_free(&ctx->list);
    arrfree(ctx->epoch_writes);
    arrfree(ctx->times);
    pthread_mutex_destroy(&ctx->lock);
    oi__free(ctx);
}

/* Per-op GPU timestamps are on unless OPENINFER_VULKAN_TIMESTAMPS=0; long
 * steps go to the GPU in parts unless OPENINFER_VULKAN_EARLY_SUBMIT=0. */
static oi_status oi__vk_context_init(oi__vk_context *ctx) {
    oi__env env = oi__env_read();
    ctx->epoch = 1;
    ctx->early_submit = env.vulkan_early_submit;
    ctx->readbacks.readback = true;
    if (!env.vulkan_timestamps)
        ctx->caps.timestamp_bits = 0;
    oi_status s = oi__vk_pipelines_init(ctx);
    if (s != OI_OK)
        return s;
    VkCommandPoolCreateInfo pool;
    memset(&pool, 0, sizeof pool);
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool.queueFamilyIndex = ctx->caps.queue_family;
    VkResult r = ctx->vk.vkCreateCommandPool(ctx->device, &pool, NULL, &ctx->command_pool);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreateCommandPool", r);
    VkFenceCreateInfo fence;
    memset(&fence, 0, sizeof fence);
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    r = ctx->vk.vkCreateFence(ctx->device, &fence, NULL, &ctx->fence);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreateFence", r);
    return OI_OK;
}

static void *oi__vk_create(int device_index) {
    oi__vk_context *ctx = (oi__vk_context *)oi__calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
        oi__free(ctx);
        oi__fail(OI_ERROR_RUNTIME, "vulkan: pthread_mutex_init failed");
        return NULL;
    }
    oi_status s = oi__vk_injected_set ? oi__vk_open_user_device(ctx, &oi__vk_injected)
                                      : oi__vk_open_own_device(ctx, device_index);
    if (s == OI_OK)
        s = oi__vk_context_init(ctx);
    if (s != OI_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", oi_last_error());
        oi__vk_destroy(ctx);
        oi__fail(s, "%s", why);
        return NULL;
    }
    return ctx;
}

/* ---- the vtable: each entry holds the context's lock ---- */
static oi_status oi__vk_locked_run_op(void *opaque, oi_op op, const oi__attr *attrs, size_t n_attrs,
                                      const oi__tensor *const *inputs, size_t n_inputs, oi__tensor *out) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    pthread_mutex_lock(&ctx->lock);
    oi_status s = oi__vk_run_op(ctx, op, attrs, n_attrs, inputs, n_inputs, out);
    pthread_mutex_unlock(&ctx->lock);
    return s;
}

static oi_status oi__vk_locked_to_host(void *opaque, oi__storage *storage) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    pthread_mutex_lock(&ctx->lock);
    oi_status s = oi__vk_to_host(ctx, storage);
    pthread_mutex_unlock(&ctx->lock);
    return s;
}

static void oi__vk_locked_release(void *opaque, oi__storage *storage) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    pthread_mutex_lock(&ctx->lock);
    oi__vk_release(ctx, storage);
    pthread_mutex_unlock(&ctx->lock);
}

static oi_status oi__vk_locked_flush(void *opaque) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    pthread_mutex_lock(&ctx->lock);
    oi_status s = oi__vk_flush(ctx);
    pthread_mutex_unlock(&ctx->lock);
    return s;
}

static oi_status oi__vk_locked_write_into(void *opaque, oi__storage *dst, uint64_t at, const oi__tensor *src) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    pthread_mutex_lock(&ctx->lock);
    oi_status s = oi__vk_write_into(ctx, dst, at, src);
    pthread_mutex_unlock(&ctx->lock);
    return s;
}

const oi__backend oi__vulkan_backend = {
    "vulkan", oi__vk_discover, oi__vk_create, oi__vk_destroy, oi__vk_supports_op, oi__vk_locked_run_op,
    oi__vk_locked_to_host, oi__vk_locked_release, oi__vk_locked_flush, oi__vulkan_next_seq, oi__vulkan_take_times,
    (1u << OI_DTYPE_F16) | (1u << OI_DTYPE_BF16), /* the shaders read and write 16-bit words of f32 arithmetic */
    oi__vk_locked_write_into,
};

/* ---- internal getters (tests, traces) ---- */
const oi__vulkan_stats *oi__vulkan_get_stats(void *ctx) { return ctx ? &((oi__vk_context *)ctx)->stats : NULL; }
bool oi__vulkan_has_wide(void *ctx) { return ctx && ((oi__vk_context *)ctx)->caps.has_wide; }

const char *oi__vulkan_validation_message(void *ctx) {
    return ctx ? ((oi__vk_context *)ctx)->last_validation_message : "";
}

uint64_t oi__vulkan_next_seq(void *ctx) { return ctx ? ((oi__vk_context *)ctx)->next_seq : 0; }

size_t oi__vulkan_take_times(void *opaque, oi__vulkan_op_time *out, size_t max) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    if (!ctx)
        return 0;
    pthread_mutex_lock(&ctx->lock);
    size_t n = (size_t)arrlen(ctx->times);
    if (n > max)
        n = max;
    if (n) {
        memcpy(out, ctx->times, sizeof *out * n);
        stbds_arrdeln(ctx->times, 0, n); /* shrinks: never allocates */
    }
    pthread_mutex_unlock(&ctx->lock);
    return n;
}

/* ---- public entry points ---- */
oi_status oi_vulkan_use_device(const oi_vulkan_device_desc *desc) {
    if (!desc) {
        oi__vk_injected_set = false;
        memset(&oi__vk_injected, 0, sizeof oi__vk_injected);
        return OI_OK;
    }
    if (!desc->instance || !desc->physical_device || !desc->device || !desc->queue)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT,
                        "oi_vulkan_use_device: instance, physical_device, device and queue must all be set");
    oi__vk_injected = *desc;
    oi__vk_injected_set = true;
    return OI_OK;
}

/* ---- buffers shared with the user (docs/vulkan-interop.md) ----
 * These reach into the executor (executor.c, same translation unit): the
 * variable's slot, its current value and the simulator's backend. */
static VkBuffer oi__vk_buffer_from_u64(uint64_t handle) {
    VkBuffer b;
#if defined(VK_USE_64_BIT_PTR_DEFINES) && VK_USE_64_BIT_PTR_DEFINES == 1
    b = (VkBuffer)(uintptr_t)handle;
#else
    b = (VkBuffer)handle;
#endif
    return b;
}

static uint64_t oi__vk_buffer_to_u64(VkBuffer b) {
#if defined(VK_USE_64_BIT_PTR_DEFINES) && VK_USE_64_BIT_PTR_DEFINES == 1
    return (uint64_t)(uintptr_t)b;
#else
    return (uint64_t)b;
#endif
}

/* The executor's Vulkan context, or NULL + an error naming `what`. */
static oi__vk_context *oi__vk_executor_ctx(oi_executor *e, const char *what) {
    if (!e || e->sim->backend != &oi__vulkan_backend) {
        oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: the executor does not run on the Vulkan backend", what);
        return NULL;
    }
    return (oi__vk_context *)e->sim->backend_ctx;
}

/* *old gets the value the binding replaces: the caller frees it once the
 * context is unlocked (freeing releases its device copy, which locks). */
static oi_status oi__vk_bind_buffer(oi__vk_context *ctx, oi_executor *e, const char *name, uint64_t buffer,
                                    uint64_t offset, uint64_t size, oi__tensor **old) {
    int s = oi__lookup(e, name, "bind");
    if (s < 0)
        return OI_ERROR_NOT_FOUND;
    const oi__slot *sl = oi__slot_of(e, s);
    if (e->in_step)
        return oi__fail(OI_ERROR_RUNTIME, "bind %s: a step is in progress; bind between steps", name);
    if (sl->kind != OI__MEM_DYNAMIC || sl->n_indices > 0)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "bind %s: only plain dynamic variables take a buffer", name);
    if (!buffer)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "bind %s: no VkBuffer", name);
    uint64_t nbytes = oi_dtype_nbytes(sl->dtype, (uint64_t)oi__shape_numel(sl->ndim, sl->shape));
    if (size < nbytes)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "bind %s: the buffer range has %llu bytes, the variable needs %llu", name,
                        (unsigned long long)size, (unsigned long long)nbytes);
    if (offset % oi__vk_alignment(ctx))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "bind %s: offset %llu is not a multiple of %llu (minStorageBufferOffsetAlignment)",
                        name, (unsigned long long)offset, (unsigned long long)oi__vk_alignment(ctx));
    oi__tensor *t = oi__tensor_new(sl->dtype, sl->ndim, sl->shape);
    oi__vk_buffer *buf = (oi__vk_buffer *)oi__calloc(1, sizeof *buf);
    if (!t || !buf) {
        oi__tensor_free(t);
        oi__free(buf);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    buf->buffer = oi__vk_buffer_from_u64(buffer);
    buf->offset = offset;
    buf->size = size;
    buf->block = -1; /* the user's: never freed here */
    ctx->has_user_buffers = true;
    oi__vk_attach(ctx, t->storage, buf);
    t->storage->host_stale = true; /* the bytes are on the device */
    *old = e->main.values[s];
    e->main.values[s] = t;
    e->inserted[s] = true;
    return OI_OK;
}

static oi_status oi__vk_export_buffer(oi__vk_context *ctx, oi_executor *e, const char *name, uint64_t *buffer,
                                      uint64_t *offset, uint64_t *size) {
    if (!buffer || !offset || !size)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_executor_vulkan_buffer %s: NULL result pointers", name ? name : "");
    int s = oi__lookup(e, name, "vulkan buffer of");
    if (s < 0)
        return OI_ERROR_NOT_FOUND;
    const oi__slot *sl = oi__slot_of(e, s);
    if (sl->kind == OI__MEM_PERSISTENT || sl->n_indices > 0)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "vulkan buffer of %s: caches and tables have no single buffer (fetch them)",
                        name);
    oi__tensor *t = oi__value(&e->main, s);
    if (!t)
        return OI_ERROR_RUNTIME;
    oi__vk_buffer *buf = NULL;
    oi_status st = oi__vk_resident(ctx, t->storage, true, &buf); /* a host-only value goes up now */
    if (st == OI_OK)
        st = oi__vk_submit(ctx);
    if (st != OI_OK)
        return st;
    size_t esize = oi_dtype_bits(t->dtype) / 8;
    *buffer = oi__vk_buffer_to_u64(buf->buffer);
    *offset = buf->offset + (uint64_t)t->offset * esize;
    *size = (uint64_t)oi__shape_numel(t->ndim, t->shape) * esize;
    return OI_OK;
}

oi_status oi_executor_vulkan_bind_buffer(oi_executor *e, const char *name, uint64_t buffer, uint64_t offset,
                                         uint64_t size) {
    oi__vk_context *ctx = oi__vk_executor_ctx(e, "oi_executor_vulkan_bind_buffer");
    if (!ctx)
        return OI_ERROR_INVALID_ARGUMENT;
    oi__tensor *old = NULL;
    pthread_mutex_lock(&ctx->lock);
    oi_status s = oi__vk_bind_buffer(ctx, e, name, buffer, offset, size, &old);
    pthread_mutex_unlock(&ctx->lock);
    oi__tensor_free(old);
    return s;
}

oi_status oi_executor_vulkan_buffer(oi_executor *e, const char *name, uint64_t *buffer, uint64_t *offset,
                                    uint64_t *size) {
    oi__vk_context *ctx = oi__vk_executor_ctx(e, "oi_executor_vulkan_buffer");
    if (!ctx)
        return OI_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&ctx->lock);
    oi_status s = oi__vk_export_buffer(ctx, e, name, buffer, offset, size);
    pthread_mutex_unlock(&ctx->lock);
    return s;
}

#else /* !OPENINFER_VULKAN */

oi_status oi__vk_device_arch(int index, oi__device_arch *out) {
    (void)index;
    memset(out, 0, sizeof *out);
    return oi__fail(OI_ERROR_UNAVAILABLE, "built without Vulkan (compile with OPENINFER_VULKAN)");
}

oi_status oi_vulkan_use_device(const oi_vulkan_device_desc *desc) {
    (void)desc;
    return oi__fail(OI_ERROR_UNAVAILABLE, "oi_vulkan_use_device: built without Vulkan (compile with OPENINFER_VULKAN)");
}

oi_status oi_executor_vulkan_bind_buffer(oi_executor *e, const char *name, uint64_t buffer, uint64_t offset,
                                         uint64_t size) {
    (void)e; (void)name; (void)buffer; (void)offset; (void)size;
    return oi__fail(OI_ERROR_UNAVAILABLE, "oi_executor_vulkan_bind_buffer: built without Vulkan (compile with OPENINFER_VULKAN)");
}

oi_status oi_executor_vulkan_buffer(oi_executor *e, const char *name, uint64_t *buffer, uint64_t *offset,
                                    uint64_t *size) {
    (void)e; (void)name; (void)buffer; (void)offset; (void)size;
    return oi__fail(OI_ERROR_UNAVAILABLE, "oi_executor_vulkan_buffer: built without Vulkan (compile with OPENINFER_VULKAN)");
}

#endif /* OPENINFER_VULKAN */
