/* vk_record.c - stage 4: ops append commands to a list; a submission
 * records the list into one command buffer (uploads, then dispatches with
 * buffer barriers only where one op reads or overwrites what an earlier
 * op of the same epoch wrote, then downloads) and waits for it. Recorded
 * command buffers are kept in a few slots keyed by their list's contents:
 * when a step submits a list equal to one already recorded (the same ops
 * on the same buffers, as every step of a fixed graph does), that command
 * buffer is replayed as it is. A long step goes to the GPU in parts: once
 * the list holds enough commands it is submitted without waiting (an early
 * submission) and the host records the rest while the GPU works; each
 * command buffer starts with a barrier on everything submitted before it,
 * and the step's last submission is the one waited for. */

static oi_status oi__vk_out_of_memory(void) { return oi__fail(OI_ERROR_OUT_OF_MEMORY, "vulkan: out of host memory recording a step"); }

static bool oi__vk_list_empty(const oi__vk_context *ctx) {
    return arrlen(ctx->list.uploads) == 0 && arrlen(ctx->list.cmds) == 0 && arrlen(ctx->list.downloads) == 0;
}

/* Nothing recorded or in flight can touch a buffer any more. */
static bool oi__vk_idle(const oi__vk_context *ctx) { return oi__vk_list_empty(ctx) && ctx->n_early == 0; }

/* The commands, once submitted; the readbacks wait for the fence. */
static void oi__vk_list_clear_commands(oi__vk_list *l) {
    OI__VK_CLEAR(l->uploads);
    OI__VK_CLEAR(l->cmds);
    OI__VK_CLEAR(l->downloads);
    OI__VK_CLEAR(l->barriers);
    OI__VK_CLEAR(l->tags);
    l->n_timestamps = 0;
}

static void oi__vk_list_clear(oi__vk_list *l) {
    oi__vk_list_clear_commands(l);
    OI__VK_CLEAR(l->readbacks);
}

/* What was written so far is ordered before what follows (by a barrier
 * or a submission): a new epoch starts with nothing written in it. */
static void oi__vk_next_epoch(oi__vk_context *ctx) {
    OI__VK_CLEAR(ctx->epoch_writes);
    ctx->epoch++;
}

static void oi__vk_list_free(oi__vk_list *l) {
    arrfree(l->uploads);
    arrfree(l->cmds);
    arrfree(l->downloads);
    arrfree(l->barriers);
    arrfree(l->readbacks);
    arrfree(l->tags);
}

/* ---- barriers: epochs end where a hazard would begin ---- */
static oi_status oi__vk_note_write(oi__vk_context *ctx, oi__vk_buffer *b) {
    if (b->write_epoch != ctx->epoch) {
        oi__vk_written w;
        w.buffer = b->buffer;
        w.offset = b->offset;
        w.size = b->size;
        if (!arrput(ctx->epoch_writes, w))
            return oi__vk_out_of_memory();
    }
    b->write_epoch = ctx->epoch;
    return OI_OK;
}

/* Ends the epoch: what it wrote becomes visible to what follows. */
static oi_status oi__vk_emit_barrier(oi__vk_context *ctx) {
    oi__vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.kind = OI__VK_CMD_BARRIER;
    cmd.first_barrier = (uint32_t)arrlen(ctx->list.barriers);
    for (ptrdiff_t i = 0; i < arrlen(ctx->epoch_writes); i++) {
        VkBufferMemoryBarrier b;
        memset(&b, 0, sizeof b);
        b.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
        b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                          VK_ACCESS_TRANSFER_WRITE_BIT;
        b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        b.buffer = ctx->epoch_writes[i].buffer;
        b.offset = ctx->epoch_writes[i].offset;
        b.size = ctx->epoch_writes[i].size;
        if (!arrput(ctx->list.barriers, b)) {
            OI__VK_TRUNCATE(ctx->list.barriers, cmd.first_barrier);
            return oi__vk_out_of_memory();
        }
    }
    cmd.n_barriers = (uint32_t)arrlen(ctx->list.barriers) - cmd.first_barrier;
    if (!arrput(ctx->list.cmds, cmd)) {
        OI__VK_TRUNCATE(ctx->list.barriers, cmd.first_barrier);
        return oi__vk_out_of_memory();
    }
    oi__vk_next_epoch(ctx);
    ctx->stats.barriers++;
    return OI_OK;
}

/* Read-after-write, write-after-write and write-after-read within the
 * current epoch need a barrier first. */
static oi_status oi__vk_order_after(oi__vk_context *ctx, oi__vk_buffer *const *reads, int n_reads, oi__vk_buffer *write) {
    bool hazard = write && (write->write_epoch == ctx->epoch || write->read_epoch == ctx->epoch);
    for (int i = 0; i < n_reads && !hazard; i++)
        hazard = reads[i] && reads[i] != write && reads[i]->write_epoch == ctx->epoch;
    return hazard ? oi__vk_emit_barrier(ctx) : OI_OK;
}

/* ---- appending commands ---- */
typedef struct oi__vk_dispatch {
    oi__vk_pipeline_key pipeline;
    oi__vk_buffer *bufs[OI__VK_BINDINGS]; /* NULL: unused; d (OI__VK_WRITE_BINDING) is written */
    const uint32_t *push;
    uint32_t push_words;
    uint32_t groups[3];
    oi_op op;
    uint64_t seq;
} oi__vk_dispatch;

static oi_status oi__vk_record_dispatch(oi__vk_context *ctx, const oi__vk_dispatch *d) {
    oi__vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    oi_status s = oi__vk_pipeline(ctx, &d->pipeline, &cmd.pipeline);
    if (s != OI_OK)
        return s;
    oi__vk_set_key key;
    memset(&key, 0, sizeof key);
    for (int b = 0; b < OI__VK_BINDINGS; b++) {
        const oi__vk_buffer *buf = d->bufs[b] ? d->bufs[b] : d->bufs[OI__VK_WRITE_BINDING];
        key.buffer[b] = buf->buffer;
        key.offset[b] = buf->offset;
        key.range[b] = buf->size;
    }
    s = oi__vk_descriptor_set(ctx, &key, &cmd.set);
    if (s == OI_OK)
        s = oi__vk_order_after(ctx, d->bufs, OI__VK_BINDINGS, d->bufs[OI__VK_WRITE_BINDING]);
    if (s != OI_OK)
        return s;
    cmd.kind = OI__VK_CMD_DISPATCH;
    cmd.push_size = d->push_words * 4;
    memcpy(cmd.push, d->push, cmd.push_size);
    memcpy(cmd.groups, d->groups, sizeof cmd.groups);
    if (ctx->caps.timestamp_bits) {
        oi__vk_tag tag;
        tag.seq = d->seq;
        tag.op = d->op;
        if (!arrput(ctx->list.tags, tag))
            return oi__vk_out_of_memory();
        cmd.timestamp = ++ctx->list.n_timestamps;
    }
    if (!arrput(ctx->list.cmds, cmd)) {
        if (cmd.timestamp) {
            ctx->list.n_timestamps--;
            OI__VK_TRUNCATE(ctx->list.tags, ctx->list.n_timestamps);
        }
        return oi__vk_out_of_memory();
    }
    for (int b = 0; b < OI__VK_BINDINGS; b++)
        if (d->bufs[b] && b != OI__VK_WRITE_BINDING)
            d->bufs[b]->read_epoch = ctx->epoch;
    ctx->stats.dispatches++;
    return oi__vk_note_write(ctx, d->bufs[OI__VK_WRITE_BINDING]);
}

/* A device-to-device copy inside the compute stream. */
static oi_status oi__vk_record_copy(oi__vk_context *ctx, oi__vk_buffer *src, VkDeviceSize src_offset,
                                    oi__vk_buffer *dst, VkDeviceSize dst_offset, VkDeviceSize size) {
    oi_status s = oi__vk_order_after(ctx, &src, 1, dst);
    if (s != OI_OK)
        return s;
    oi__vk_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.kind = OI__VK_CMD_COPY;
    cmd.src = src->buffer;
    cmd.src_offset = src->offset + src_offset;
    cmd.dst = dst->buffer;
    cmd.dst_offset = dst->offset + dst_offset;
    cmd.size = size;
    if (!arrput(ctx->list.cmds, cmd))
        return oi__vk_out_of_memory();
    src->read_epoch = ctx->epoch;
    return oi__vk_note_write(ctx, dst);
}

/* ---- recording a list into a command buffer ---- */
static void oi__vk_record_copies(oi__vk_context *ctx, VkCommandBuffer cb, const oi__vk_cmd *cmds) {
    for (ptrdiff_t i = 0; i < arrlen(cmds); i++) {
        VkBufferCopy region;
        region.srcOffset = cmds[i].src_offset;
        region.dstOffset = cmds[i].dst_offset;
        region.size = cmds[i].size;
        ctx->vk.vkCmdCopyBuffer(cb, cmds[i].src, cmds[i].dst, 1, &region);
    }
}

static void oi__vk_global_barrier(oi__vk_context *ctx, VkCommandBuffer cb, VkPipelineStageFlags src_stage,
                                  VkAccessFlags src_access, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
    VkMemoryBarrier b;
    memset(&b, 0, sizeof b);
    b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    b.srcAccessMask = src_access;
    b.dstAccessMask = dst_access;
    ctx->vk.vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &b, 0, NULL, 0, NULL);
}

static oi_status oi__vk_slot_queries(oi__vk_context *ctx, oi__vk_slot *slot, uint32_t needed) {
    if (needed <= slot->query_capacity)
        return OI_OK;
    if (slot->queries)
        ctx->vk.vkDestroyQueryPool(ctx->device, slot->queries, NULL);
    slot->queries = VK_NULL_HANDLE;
    slot->query_capacity = 0;
    uint32_t capacity = 64;
    while (capacity < needed)
        capacity *= 2;
    VkQueryPoolCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    info.queryCount = capacity;
    VkResult r = ctx->vk.vkCreateQueryPool(ctx->device, &info, NULL, &slot->queries);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreateQueryPool", r);
    slot->query_capacity = capacity;
    return OI_OK;
}

static oi_status oi__vk_record(oi__vk_context *ctx, oi__vk_slot *slot) {
    const oi__vk_list *l = &ctx->list;
    VkCommandBuffer cb = slot->cb;
    uint32_t n_queries = l->n_timestamps ? l->n_timestamps + 1 : 0;
    oi_status s = oi__vk_slot_queries(ctx, slot, n_queries);
    if (s != OI_OK)
        return s;
    VkResult r = ctx->vk.vkResetCommandBuffer(cb, 0);
    VkCommandBufferBeginInfo begin;
    memset(&begin, 0, sizeof begin);
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    if (r == VK_SUCCESS)
        r = ctx->vk.vkBeginCommandBuffer(cb, &begin);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkBeginCommandBuffer", r);

    /* What earlier submissions wrote (an early part of this step, or the
     * application's buffers, oi_executor_vulkan_bind_buffer, written anywhere
     * on this queue) becomes visible here, and what they read is not
     * overwritten before they are done. */
    VkPipelineStageFlags earlier = ctx->has_user_buffers ? VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
                                                         : VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    oi__vk_global_barrier(ctx, cb, earlier, VK_ACCESS_MEMORY_WRITE_BIT,
                          VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                              VK_ACCESS_TRANSFER_WRITE_BIT);
    if (arrlen(l->uploads)) {
        oi__vk_record_copies(ctx, cb, l->uploads);
        size_t n = (size_t)arrlen(l->uploads);
        VkBufferMemoryBarrier *barriers = (VkBufferMemoryBarrier *)oi__malloc(sizeof(VkBufferMemoryBarrier) * n);
        if (!barriers)
            return OI_ERROR_OUT_OF_MEMORY;
        for (size_t i = 0; i < n; i++) {
            VkBufferMemoryBarrier b;
            memset(&b, 0, sizeof b);
            b.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
            b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
            b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                              VK_ACCESS_TRANSFER_WRITE_BIT;
            b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
            b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
            b.buffer = l->uploads[i].dst;
            b.offset = l->uploads[i].dst_offset;
            b.size = l->uploads[i].size;
            barriers[i] = b;
        }
        ctx->vk.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                                     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL,
                                     (uint32_t)n, barriers, 0, NULL);
        oi__free(barriers);
    }
    if (n_queries) {
        ctx->vk.vkCmdResetQueryPool(cb, slot->queries, 0, n_queries);
        ctx->vk.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, slot->queries, 0);
    }
    VkPipeline bound = VK_NULL_HANDLE;
    for (ptrdiff_t i = 0; i < arrlen(l->cmds); i++) {
        const oi__vk_cmd *c = &l->cmds[i];
        if (c->kind == OI__VK_CMD_DISPATCH) {
            if (c->pipeline != bound)
                ctx->vk.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipeline);
            bound = c->pipeline;
            ctx->vk.vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, ctx->pipeline_layout, 0, 1, &c->set, 0, NULL);
            if (c->push_size)
                ctx->vk.vkCmdPushConstants(cb, ctx->pipeline_layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, c->push_size, c->push);
            ctx->vk.vkCmdDispatch(cb, c->groups[0], c->groups[1], c->groups[2]);
            if (c->timestamp)
                ctx->vk.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, slot->queries, c->timestamp);
        } else if (c->kind == OI__VK_CMD_BARRIER) {
            VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
            ctx->vk.vkCmdPipelineBarrier(cb, stages, stages, 0, 0, NULL, c->n_barriers,
                                         c->n_barriers ? &l->barriers[c->first_barrier] : NULL, 0, NULL);
        } else {
            VkBufferCopy region;
            region.srcOffset = c->src_offset;
            region.dstOffset = c->dst_offset;
            region.size = c->size;
            ctx->vk.vkCmdCopyBuffer(cb, c->src, c->dst, 1, &region);
        }
    }
    if (arrlen(l->downloads)) {
        oi__vk_global_barrier(ctx, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_ACCESS_TRANSFER_READ_BIT);
        oi__vk_record_copies(ctx, cb, l->downloads);
        oi__vk_global_barrier(ctx, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                              VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
    }
    r = ctx->vk.vkEndCommandBuffer(cb);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkEndCommandBuffer", r);
    return OI_OK;
}

/* ---- replay: is this list the one the slot already holds? ---- */
static bool oi__vk_same_array(const void *a, ptrdiff_t na, const void *b, ptrdiff_t nb, size_t elem) {
    return na == nb && (na == 0 || memcmp(a, b, (size_t)na * elem) == 0);
}

#define OI__VK_SAME(a, b) oi__vk_same_array((a), arrlen(a), (b), arrlen(b), sizeof *(a))

/* FNV-1a over the compared arrays: a cheap first test before memcmp. */
static uint64_t oi__vk_hash_bytes(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3u;
    return h;
}

#define OI__VK_HASH(h, a) oi__vk_hash_bytes((h), (a), sizeof *(a) * (size_t)arrlen(a))

static uint64_t oi__vk_list_hash(const oi__vk_list *l) {
    uint64_t h = 0xCBF29CE484222325u;
    h = OI__VK_HASH(h, l->uploads);
    h = OI__VK_HASH(h, l->cmds);
    h = OI__VK_HASH(h, l->downloads);
    h = OI__VK_HASH(h, l->barriers);
    return h ^ (uint64_t)arrlen(l->cmds);
}

static bool oi__vk_slot_matches(const oi__vk_slot *slot, const oi__vk_list *l, uint64_t hash) {
    return slot->recorded && slot->hash == hash && OI__VK_SAME(slot->uploads, l->uploads) && OI__VK_SAME(slot->cmds, l->cmds) &&
           OI__VK_SAME(slot->downloads, l->downloads) && OI__VK_SAME(slot->barriers, l->barriers);
}

/* dst = a copy of src; false (dst unchanged) when memory runs out. */
#define OI__VK_COPY_ARRAY(dst, src) \
    (arrsetlen(dst, arrlen(src)) ? ((arrlen(src) ? memcpy((dst), (src), sizeof *(src) * (size_t)arrlen(src)) : NULL), true) \
                                 : false)

/* Keeps the list the slot was recorded from; without it (no memory) the
 * slot simply cannot be replayed. */
static void oi__vk_slot_keep(oi__vk_slot *slot, const oi__vk_list *l) {
    slot->recorded = OI__VK_COPY_ARRAY(slot->uploads, l->uploads) && OI__VK_COPY_ARRAY(slot->cmds, l->cmds) &&
                     OI__VK_COPY_ARRAY(slot->downloads, l->downloads) && OI__VK_COPY_ARRAY(slot->barriers, l->barriers);
}

static void oi__vk_slot_free(oi__vk_context *ctx, oi__vk_slot *slot) {
    if (slot->queries)
        ctx->vk.vkDestroyQueryPool(ctx->device, slot->queries, NULL);
    arrfree(slot->uploads);
    arrfree(slot->cmds);
    arrfree(slot->downloads);
    arrfree(slot->barriers);
    arrfree(slot->tags);
}

/* The slot holding this list's recording, or the one to record it into:
 * an empty slot, else the least recently used; never one in flight. */
static oi_status oi__vk_find_slot(oi__vk_context *ctx, uint64_t hash, oi__vk_slot **out, bool *replay) {
    oi__vk_slot *victim = NULL;
    for (ptrdiff_t i = 0; i < arrlen(ctx->slots); i++) {
        oi__vk_slot *slot = &ctx->slots[i];
        if (slot->in_flight)
            continue;
        if (oi__vk_slot_matches(slot, &ctx->list, hash)) {
            *out = slot;
            *replay = true;
            return OI_OK;
        }
        if (!victim || !slot->recorded || (victim->recorded && slot->last_used < victim->last_used))
            victim = slot;
    }
    *replay = false;
    if (arrlen(ctx->slots) < OI__VK_SLOTS) {
        oi__vk_slot slot;
        memset(&slot, 0, sizeof slot);
        VkCommandBufferAllocateInfo info;
        memset(&info, 0, sizeof info);
        info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
        info.commandPool = ctx->command_pool;
        info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        info.commandBufferCount = 1;
        VkResult r = ctx->vk.vkAllocateCommandBuffers(ctx->device, &info, &slot.cb);
        if (r != VK_SUCCESS)
            return oi__vk_fail("vkAllocateCommandBuffers", r);
        if (!arrput(ctx->slots, slot)) {
            ctx->vk.vkFreeCommandBuffers(ctx->device, ctx->command_pool, 1, &slot.cb);
            return oi__vk_out_of_memory();
        }
        victim = &arrlast(ctx->slots);
    }
    *out = victim;
    return OI_OK;
}

/* ---- after the fence: timings, readbacks, frees ---- */
/* The GPU times of a submission's n_timestamps timed dispatches (tags). */
static void oi__vk_collect_times(oi__vk_context *ctx, oi__vk_slot *slot, const oi__vk_tag *tags, uint32_t n_timestamps) {
    uint32_t n = n_timestamps + 1;
    if (n_timestamps == 0)
        return;
    uint64_t *ticks = (uint64_t *)oi__malloc(sizeof(uint64_t) * n);
    if (!ticks)
        return;
    VkResult r = ctx->vk.vkGetQueryPoolResults(ctx->device, slot->queries, 0, n, sizeof(uint64_t) * n, ticks,
                                               sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r == VK_SUCCESS) {
        uint64_t mask = ctx->caps.timestamp_bits >= 64 ? UINT64_MAX : (((uint64_t)1 << ctx->caps.timestamp_bits) - 1u);
        double ns_per_tick = (double)ctx->caps.props.limits.timestampPeriod;
        for (uint32_t i = 0; i < n_timestamps; i++) {
            double micros = (double)((ticks[i + 1] - ticks[i]) & mask) * ns_per_tick / 1000.0;
            if (arrlen(ctx->times) && arrlast(ctx->times).seq == tags[i].seq) {
                arrlast(ctx->times).micros += micros; /* one op, several dispatches */
                continue;
            }
            oi__vulkan_op_time t;
            t.seq = tags[i].seq;
            t.op = tags[i].op;
            t.micros = micros;
            if (!arrput(ctx->times, t))
                break; /* timings are optional: drop them */
        }
        if (arrlen(ctx->times) > OI__VK_MAX_TIMES) /* nobody takes them: keep the newest */
            stbds_arrdeln(ctx->times, 0, arrlen(ctx->times) - OI__VK_MAX_TIMES / 2);
    }
    oi__free(ticks);
}

static void oi__vk_finish_list(oi__vk_context *ctx) {
    for (ptrdiff_t i = 0; i < arrlen(ctx->list.readbacks); i++) {
        const oi__vk_readback *rb = &ctx->list.readbacks[i];
        if (rb->nbytes)
            memcpy(rb->storage->data, rb->src, rb->nbytes);
        rb->storage->host_stale = false;
    }
    for (ptrdiff_t i = 0; i < arrlen(ctx->deferred_frees); i++)
        oi__vk_buffer_free_now(ctx, ctx->deferred_frees[i]);
    OI__VK_CLEAR(ctx->deferred_frees);
    oi__vk_list_clear(&ctx->list);
    oi__vk_arena_reset(ctx, &ctx->uploads);
    oi__vk_arena_reset(ctx, &ctx->readbacks);
    ctx->staged_bytes = 0;
    oi__vk_next_epoch(ctx);
    oi__vk_sets_trim(ctx);
}

/* A failed queue call: device loss sticks to the context. */
static oi_status oi__vk_queue_failed(oi__vk_context *ctx, const char *what, VkResult r) {
    if (r == VK_ERROR_DEVICE_LOST)
        ctx->lost = true;
    return oi__vk_fail(what, r);
}

/* Submits the list, replaying a recorded command buffer when one holds
 * the same list; *used: the slot that went. The fence, when given, signals
 * once this and everything submitted before it are done. */
static oi_status oi__vk_submit_list(oi__vk_context *ctx, VkFence fence, oi__vk_slot **used) {
    uint64_t hash = oi__vk_list_hash(&ctx->list);
    oi__vk_slot *slot = NULL;
    bool replay = false;
    oi_status s = oi__vk_find_slot(ctx, hash, &slot, &replay);
    if (s != OI_OK)
        return s;
    if (replay) {
        ctx->stats.replays++;
    } else {
        slot->recorded = false;
        s = oi__vk_record(ctx, slot);
        if (s != OI_OK)
            return s;
        oi__vk_slot_keep(slot, &ctx->list);
        slot->hash = hash;
    }
    slot->last_used = ++ctx->submit_clock;
    VkSubmitInfo submit;
    memset(&submit, 0, sizeof submit);
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &slot->cb;
    VkResult r = ctx->vk.vkQueueSubmit(ctx->queue, 1, &submit, fence);
    ctx->stats.submissions++;
    if (r != VK_SUCCESS)
        return oi__vk_queue_failed(ctx, "vkQueueSubmit", r);
    *used = slot;
    return OI_OK;
}

/* Waits for the fence: the step's last submission and so all before it. */
static oi_status oi__vk_wait(oi__vk_context *ctx) {
    VkResult r = ctx->vk.vkWaitForFences(ctx->device, 1, &ctx->fence, VK_TRUE, UINT64_MAX);
    if (r == VK_SUCCESS)
        r = ctx->vk.vkResetFences(ctx->device, 1, &ctx->fence);
    return r == VK_SUCCESS ? OI_OK : oi__vk_queue_failed(ctx, "vkWaitForFences", r);
}

/* The early submissions are done: their GPU times, their slots free again. */
static void oi__vk_land_early(oi__vk_context *ctx) {
    for (int i = 0; i < ctx->n_early; i++) {
        oi__vk_slot *slot = &ctx->slots[ctx->early[i]];
        oi__vk_collect_times(ctx, slot, slot->tags, slot->n_timestamps);
        slot->in_flight = false;
    }
    ctx->n_early = 0;
    ctx->early_cmds = 0;
}

/* Submits the list (replaying a recorded command buffer when equal) and
 * waits for it and for the step's early submissions. */
static oi_status oi__vk_submit(oi__vk_context *ctx) {
    if (ctx->lost)
        return oi__fail(OI_ERROR_RUNTIME, "vulkan: the device was lost earlier; create a new simulator");
    if (oi__vk_idle(ctx)) {
        oi__vk_finish_list(ctx);
        return OI_OK;
    }
    oi__vk_slot *slot = NULL;
    oi_status s = OI_OK;
    if (!oi__vk_list_empty(ctx)) {
        s = oi__vk_submit_list(ctx, ctx->fence, &slot);
    } else { /* only early parts: an empty batch signals once they are done */
        VkResult r = ctx->vk.vkQueueSubmit(ctx->queue, 0, NULL, ctx->fence);
        if (r != VK_SUCCESS)
            s = oi__vk_queue_failed(ctx, "vkQueueSubmit", r);
    }
    if (s == OI_OK)
        s = oi__vk_wait(ctx);
    if (s != OI_OK)
        return s;
    oi__vk_land_early(ctx);
    if (slot)
        oi__vk_collect_times(ctx, slot, ctx->list.tags, ctx->list.n_timestamps);
    oi__vk_finish_list(ctx);
    return OI_OK;
}

/* After an op is recorded: a list that has grown long enough goes to the
 * GPU now, without waiting (see OI__VK_EARLY_MIN). Its readbacks, frees
 * and staging stay until the step's last submission has been waited for. */
static oi_status oi__vk_submit_early(oi__vk_context *ctx) {
    uint64_t n = (uint64_t)arrlen(ctx->list.cmds);
    if (!ctx->early_submit || ctx->lost || n < OI__VK_EARLY_MIN || n < ctx->early_cmds / 4 ||
        ctx->n_early >= OI__VK_EARLY_MAX || arrlen(ctx->list.downloads))
        return OI_OK;
    oi__vk_slot *slot = NULL;
    oi_status s = oi__vk_submit_list(ctx, VK_NULL_HANDLE, &slot);
    if (s != OI_OK)
        return s;
    slot->in_flight = true;
    slot->n_timestamps = 0;
    if (OI__VK_COPY_ARRAY(slot->tags, ctx->list.tags)) /* else its times are dropped, as timings may be */
        slot->n_timestamps = ctx->list.n_timestamps;
    ctx->early[ctx->n_early++] = (int)(slot - ctx->slots);
    ctx->early_cmds += n;
    /* the next list starts afresh; its command buffer's first barrier
     * orders it after this one */
    oi__vk_list_clear_commands(&ctx->list);
    oi__vk_next_epoch(ctx);
    return OI_OK;
}

/* backend->flush: the end of a step. */
static oi_status oi__vk_flush(void *opaque) { return oi__vk_submit((oi__vk_context *)opaque); }
