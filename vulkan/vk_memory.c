/* vk_memory.c - stage 2: device-local blocks carved up by a first-fit
 * sub-allocator, host-visible staging arenas for uploads and readbacks,
 * and the device copy ("mirror") of a storage: made on first use, kept
 * across ops and steps, model weights uploaded once. */

static VkDeviceSize oi__vk_align(VkDeviceSize v, VkDeviceSize a) { return (v + a - 1) / a * a; }

/* Storage buffers start at multiples of this; sizes are whole words. */
static VkDeviceSize oi__vk_alignment(const oi__vk_context *ctx) {
    VkDeviceSize a = ctx->caps.props.limits.minStorageBufferOffsetAlignment;
    return a < 16 ? 16 : a;
}

typedef enum oi__vk_memory_kind { OI__VK_MEM_DEVICE, OI__VK_MEM_UPLOAD, OI__VK_MEM_READBACK } oi__vk_memory_kind;

/* The first memory type allowed by `bits` with all of `want`, preferring
 * one with all of `nice` too; -1 if none. */
static int oi__vk_memory_type(const VkPhysicalDeviceMemoryProperties *mem, uint32_t bits, VkMemoryPropertyFlags want,
                              VkMemoryPropertyFlags nice, VkMemoryPropertyFlags avoid) {
    int fallback = -1;
    for (uint32_t i = 0; i < mem->memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = mem->memoryTypes[i].propertyFlags;
        if (!(bits & (1u << i)) || (f & want) != want)
            continue;
        if ((f & nice) == nice && !(f & avoid))
            return (int)i;
        if (fallback < 0)
            fallback = (int)i;
    }
    return fallback;
}

static void oi__vk_block_destroy(oi__vk_context *ctx, oi__vk_block *b) {
    if (b->mapped)
        ctx->vk.vkUnmapMemory(ctx->device, b->memory);
    if (b->buffer)
        ctx->vk.vkDestroyBuffer(ctx->device, b->buffer, NULL);
    if (b->memory)
        ctx->vk.vkFreeMemory(ctx->device, b->memory, NULL);
    arrfree(b->free_ranges);
    memset(b, 0, sizeof *b);
}

static oi_status oi__vk_block_create(oi__vk_context *ctx, VkDeviceSize size, oi__vk_memory_kind kind, oi__vk_block *b) {
    memset(b, 0, sizeof *b);
    VkBufferCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    VkResult r = ctx->vk.vkCreateBuffer(ctx->device, &info, NULL, &b->buffer);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreateBuffer", r);
    VkMemoryRequirements req;
    ctx->vk.vkGetBufferMemoryRequirements(ctx->device, b->buffer, &req);
    const VkPhysicalDeviceMemoryProperties *mem = &ctx->caps.memory;
    VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int type = -1;
    if (kind == OI__VK_MEM_DEVICE)
        type = oi__vk_memory_type(mem, req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    else if (kind == OI__VK_MEM_UPLOAD) /* keep the small host-visible VRAM window for others */
        type = oi__vk_memory_type(mem, req.memoryTypeBits, host, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    else
        type = oi__vk_memory_type(mem, req.memoryTypeBits, host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0);
    if (type < 0) {
        oi__vk_block_destroy(ctx, b);
        return oi__fail(OI_ERROR_UNAVAILABLE, "vulkan: no suitable memory type for %s buffers",
                        kind == OI__VK_MEM_DEVICE ? "device" : "staging");
    }
    VkMemoryAllocateInfo alloc;
    memset(&alloc, 0, sizeof alloc);
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = (uint32_t)type;
    r = ctx->vk.vkAllocateMemory(ctx->device, &alloc, NULL, &b->memory);
    if (r == VK_SUCCESS)
        r = ctx->vk.vkBindBufferMemory(ctx->device, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS && kind != OI__VK_MEM_DEVICE)
        r = ctx->vk.vkMapMemory(ctx->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    if (r != VK_SUCCESS) {
        oi__vk_block_destroy(ctx, b);
        if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
            return oi__fail(OI_ERROR_OUT_OF_MEMORY, "vulkan: out of %s memory allocating %llu bytes (%s)",
                            kind == OI__VK_MEM_DEVICE ? "device" : "host-visible", (unsigned long long)req.size,
                            oi__vk_result_name(r));
        return oi__vk_fail("vkAllocateMemory/vkBindBufferMemory/vkMapMemory", r);
    }
    b->size = size;
    if (kind == OI__VK_MEM_DEVICE) {
        oi__vk_range all;
        all.offset = 0;
        all.size = size;
        if (!arrput(b->free_ranges, all)) {
            oi__vk_block_destroy(ctx, b);
            return OI_ERROR_OUT_OF_MEMORY;
        }
    }
    return OI_OK;
}

/* ---- device buffers: first fit over the blocks' free lists ---- */
static bool oi__vk_take_range(oi__vk_block *b, VkDeviceSize size, VkDeviceSize *offset) {
    for (ptrdiff_t i = 0; i < arrlen(b->free_ranges); i++) {
        oi__vk_range *r = &b->free_ranges[i];
        if (r->size < size)
            continue;
        *offset = r->offset;
        r->offset += size;
        r->size -= size;
        if (r->size == 0)
            arrdel(b->free_ranges, i);
        return true;
    }
    return false;
}

static void oi__vk_give_range(oi__vk_block *b, VkDeviceSize offset, VkDeviceSize size) {
    ptrdiff_t i = 0, n = arrlen(b->free_ranges);
    while (i < n && b->free_ranges[i].offset < offset)
        i++;
    oi__vk_range r;
    r.offset = offset;
    r.size = size;
    if (!arrins(b->free_ranges, i, r))
        return; /* out of host memory: the range stays unused until the context dies */
    /* merge with the next, then with the previous neighbour */
    if (i + 1 < arrlen(b->free_ranges) && b->free_ranges[i].offset + b->free_ranges[i].size == b->free_ranges[i + 1].offset) {
        b->free_ranges[i].size += b->free_ranges[i + 1].size;
        arrdel(b->free_ranges, i + 1);
    }
    if (i > 0 && b->free_ranges[i - 1].offset + b->free_ranges[i - 1].size == b->free_ranges[i].offset) {
        b->free_ranges[i - 1].size += b->free_ranges[i].size;
        arrdel(b->free_ranges, i);
    }
}

static oi_status oi__vk_buffer_new(oi__vk_context *ctx, VkDeviceSize nbytes, oi__vk_buffer **out) {
    *out = NULL;
    VkDeviceSize size = oi__vk_align(nbytes ? nbytes : 4, oi__vk_alignment(ctx));
    const VkPhysicalDeviceLimits *limits = &ctx->caps.props.limits;
    if (size > limits->maxStorageBufferRange)
        return oi__fail(OI_ERROR_UNSUPPORTED, "vulkan: a tensor of %llu bytes exceeds this device's maxStorageBufferRange (%u)",
                        (unsigned long long)nbytes, limits->maxStorageBufferRange);
    int block = -1;
    VkDeviceSize offset = 0;
    for (ptrdiff_t i = 0; i < arrlen(ctx->blocks) && block < 0; i++)
        if (oi__vk_take_range(&ctx->blocks[i], size, &offset))
            block = (int)i;
    if (block < 0) {
        oi__vk_block b;
        oi_status s = oi__vk_block_create(ctx, size > OI__VK_BLOCK_BYTES ? size : OI__VK_BLOCK_BYTES, OI__VK_MEM_DEVICE, &b);
        if (s == OI_ERROR_OUT_OF_MEMORY && size < OI__VK_BLOCK_BYTES) /* a smaller block may still fit */
            s = oi__vk_block_create(ctx, size, OI__VK_MEM_DEVICE, &b);
        if (s != OI_OK)
            return s;
        if (!arrput(ctx->blocks, b)) {
            oi__vk_block_destroy(ctx, &b);
            return OI_ERROR_OUT_OF_MEMORY;
        }
        block = (int)arrlen(ctx->blocks) - 1;
        oi__vk_take_range(&ctx->blocks[block], size, &offset);
    }
    oi__vk_buffer *buf = (oi__vk_buffer *)oi__calloc(1, sizeof *buf);
    if (!buf) {
        oi__vk_give_range(&ctx->blocks[block], offset, size);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    buf->buffer = ctx->blocks[block].buffer;
    buf->offset = offset;
    buf->size = size;
    buf->block = block;
    *out = buf;
    return OI_OK;
}

static void oi__vk_buffer_free_now(oi__vk_context *ctx, oi__vk_buffer *buf) {
    if (buf->block >= 0)
        oi__vk_give_range(&ctx->blocks[buf->block], buf->offset, buf->size);
    oi__free(buf);
}

static bool oi__vk_idle(const oi__vk_context *ctx);

/* Frees once nothing recorded can touch the bytes any more. */
static void oi__vk_buffer_free(oi__vk_context *ctx, oi__vk_buffer *buf) {
    if (!buf)
        return;
    if (oi__vk_idle(ctx))
        oi__vk_buffer_free_now(ctx, buf);
    else if (!arrput(ctx->deferred_frees, buf))
        oi__free(buf); /* out of host memory: leak the range rather than reuse it too early */
}

/* ---- staging arenas ---- */
static oi_status oi__vk_arena_alloc(oi__vk_context *ctx, oi__vk_arena *a, VkDeviceSize n, VkBuffer *buffer,
                                    VkDeviceSize *offset, void **ptr) {
    n = oi__vk_align(n ? n : 4, 16);
    for (ptrdiff_t i = 0; i < arrlen(a->blocks); i++) {
        oi__vk_block *b = &a->blocks[i];
        if (b->size - b->used >= n) {
            *buffer = b->buffer;
            *offset = b->used;
            *ptr = (char *)b->mapped + b->used;
            b->used += n;
            return OI_OK;
        }
    }
    oi__vk_block b;
    oi_status s = oi__vk_block_create(ctx, n > OI__VK_STAGING_BYTES ? n : OI__VK_STAGING_BYTES,
                                      a->readback ? OI__VK_MEM_READBACK : OI__VK_MEM_UPLOAD, &b);
    if (s != OI_OK)
        return s;
    b.used = n;
    *buffer = b.buffer;
    *offset = 0;
    *ptr = b.mapped;
    if (!arrput(a->blocks, b)) {
        oi__vk_block_destroy(ctx, &b);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

/* After a submission: everything is free again; big one-off blocks (the
 * first upload of the weights) are given back. */
static void oi__vk_arena_reset(oi__vk_context *ctx, oi__vk_arena *a) {
    for (ptrdiff_t i = arrlen(a->blocks) - 1; i >= 0; i--) {
        a->blocks[i].used = 0;
        if (i > 0 || a->blocks[i].size > OI__VK_STAGING_BYTES) {
            oi__vk_block_destroy(ctx, &a->blocks[i]);
            arrdel(a->blocks, i);
            /* a command buffer naming a destroyed buffer must never run again */
            for (ptrdiff_t k = 0; k < arrlen(ctx->slots); k++)
                ctx->slots[k].recorded = false;
        }
    }
}

static void oi__vk_arena_destroy(oi__vk_context *ctx, oi__vk_arena *a) {
    for (ptrdiff_t i = 0; i < arrlen(a->blocks); i++)
        oi__vk_block_destroy(ctx, &a->blocks[i]);
    arrfree(a->blocks);
}

/* ---- mirrors: the device copy of a storage ---- */
static oi__vk_buffer *oi__vk_mirror(const oi__vk_context *ctx, const oi__storage *s) {
    if (s && s->device && s->device_owner == &oi__vulkan_backend && s->device_ctx == (const void *)ctx)
        return (oi__vk_buffer *)s->device;
    return NULL;
}

static void oi__vk_attach(oi__vk_context *ctx, oi__storage *s, oi__vk_buffer *buf) {
    s->device = buf;
    s->device_owner = &oi__vulkan_backend;
    s->device_ctx = ctx;
    s->host_stale = false;
}

static oi_status oi__vk_submit(oi__vk_context *ctx);

/* Copies host bytes into `dst` through the upload arena; the copy runs at
 * the start of the next submission, before any dispatch. */
static oi_status oi__vk_upload(oi__vk_context *ctx, oi__vk_buffer *dst, const void *src, size_t nbytes) {
    if (nbytes == 0)
        return OI_OK;
    if (ctx->staged_bytes + nbytes > OI__VK_STAGING_LIMIT && !oi__vk_idle(ctx)) {
        oi_status s = oi__vk_submit(ctx); /* bounds staging memory */
        if (s != OI_OK)
            return s;
    }
    VkBuffer staging;
    VkDeviceSize offset;
    void *ptr;
    oi_status s = oi__vk_arena_alloc(ctx, &ctx->uploads, nbytes, &staging, &offset, &ptr);
    if (s != OI_OK)
        return s;
    memcpy(ptr, src, nbytes);
    oi__vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.kind = OI__VK_CMD_COPY;
    cmd.src = staging;
    cmd.src_offset = offset;
    cmd.dst = dst->buffer;
    cmd.dst_offset = dst->offset;
    cmd.size = nbytes;
    if (!arrput(ctx->list.uploads, cmd))
        return OI_ERROR_OUT_OF_MEMORY;
    ctx->staged_bytes += nbytes;
    ctx->stats.uploads++;
    ctx->stats.upload_bytes += nbytes;
    return OI_OK;
}

/* The storage's device copy, made (and filled from the host when asked)
 * on first use. Model weights (borrowed storages) are shared by host
 * address, so they are uploaded once however often they are wrapped. */
static oi_status oi__vk_resident(oi__vk_context *ctx, oi__storage *s, bool fill_from_host, oi__vk_buffer **out) {
    *out = oi__vk_mirror(ctx, s);
    if (*out)
        return OI_OK;
    if (s->device_owner)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "vulkan: a tensor lives on another device (%s backend)",
                        s->device_owner->name);
    oi__vk_weight_key key;
    memset(&key, 0, sizeof key);
    key.data = s->data;
    key.nbytes = s->nbytes;
    if (s->borrowed) {
        ptrdiff_t i = hmgeti(ctx->weights, key);
        if (i >= 0) {
            *out = ctx->weights[i].value;
            oi__vk_attach(ctx, s, *out);
            return OI_OK;
        }
    }
    oi__vk_buffer *buf = NULL;
    oi_status st = oi__vk_buffer_new(ctx, s->nbytes, &buf);
    if (st == OI_OK && (fill_from_host || s->borrowed) && s->data)
        st = oi__vk_upload(ctx, buf, s->data, s->nbytes);
    if (st != OI_OK) {
        if (buf)
            oi__vk_buffer_free(ctx, buf);
        return st;
    }
    if (s->borrowed) {
        if (!hmput(ctx->weights, key, buf)) {
            oi__vk_buffer_free(ctx, buf);
            return OI_ERROR_OUT_OF_MEMORY;
        }
        buf->weight = true;
        ctx->stats.weight_uploads++;
    }
    oi__vk_attach(ctx, s, buf);
    *out = buf;
    return OI_OK;
}

/* backend->to_host: the device copy is newer; copy it back now. */
static oi_status oi__vk_to_host(void *opaque, oi__storage *s) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    oi__vk_buffer *buf = oi__vk_mirror(ctx, s);
    if (!buf || !s->host_stale)
        return OI_OK;
    if (ctx->lost)
        return oi__fail(OI_ERROR_RUNTIME, "vulkan: the device was lost; results are unavailable");
    VkBuffer staging;
    VkDeviceSize offset;
    void *ptr;
    oi_status st = oi__vk_arena_alloc(ctx, &ctx->readbacks, s->nbytes, &staging, &offset, &ptr);
    if (st != OI_OK)
        return st;
    oi__vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.kind = OI__VK_CMD_COPY;
    cmd.src = buf->buffer;
    cmd.src_offset = buf->offset;
    cmd.dst = staging;
    cmd.dst_offset = offset;
    cmd.size = s->nbytes ? s->nbytes : 4;
    oi__vk_readback rb;
    rb.storage = s;
    rb.src = ptr;
    rb.nbytes = s->nbytes;
    if (!arrput(ctx->list.readbacks, rb))
        return OI_ERROR_OUT_OF_MEMORY;
    if (!arrput(ctx->list.downloads, cmd)) {
        OI__VK_TRUNCATE(ctx->list.readbacks, arrlen(ctx->list.readbacks) - 1);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    ctx->stats.downloads++;
    ctx->stats.download_bytes += s->nbytes;
    return oi__vk_submit(ctx);
}

/* backend->release: the storage dies or its host bytes changed. */
static void oi__vk_release(void *opaque, oi__storage *s) {
    oi__vk_context *ctx = (oi__vk_context *)opaque;
    oi__vk_buffer *buf = oi__vk_mirror(ctx, s);
    s->device = NULL;
    s->device_owner = NULL;
    s->device_ctx = NULL;
    s->host_stale = false;
    if (buf && !buf->weight)
        oi__vk_buffer_free(ctx, buf);
}
