/* vk_pipeline.c - stage 3: shader modules (embedded SPIR-V), one
 * descriptor set layout and pipeline layout shared by every shader
 * (bindings a, b, c, d (written), e..h + 128 bytes of push constants), pipelines made once
 * per (shader, op, dtypes) through specialization constants and cached,
 * and descriptor sets cached by the buffer ranges they bind. */

static const uint32_t *oi__vk_shader_code(oi__vk_shader shader, size_t *bytes) {
#define OI__VK_SPIRV(suffix, spirv) \
    case OI__VK_SHADER_##suffix: *bytes = sizeof oi__spirv_##spirv; return oi__spirv_##spirv;
    switch (shader) {
    OI__VK_SHADER_LIST(OI__VK_SPIRV)
    default: *bytes = 0; return NULL;
    }
#undef OI__VK_SPIRV
}

/* The module of a family for inputs of dtype `in`. */
static oi__vk_shader oi__vk_shader_for(oi__vk_family family, oi_dtype in) {
    int value_class = oi__dtype_is_float(in) ? 0 : oi__dtype_is_signed(in) ? 1 : 2;
    return (oi__vk_shader)((int)family * 3 + value_class);
}

static oi_status oi__vk_shader_module(oi__vk_context *ctx, oi__vk_shader shader, VkShaderModule *out) {
    if (!ctx->shaders[shader]) {
        VkShaderModuleCreateInfo info;
        memset(&info, 0, sizeof info);
        info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
        info.pCode = oi__vk_shader_code(shader, &info.codeSize);
        VkResult r = ctx->vk.vkCreateShaderModule(ctx->device, &info, NULL, &ctx->shaders[shader]);
        if (r != VK_SUCCESS)
            return oi__vk_fail("vkCreateShaderModule", r);
    }
    *out = ctx->shaders[shader];
    return OI_OK;
}

static oi_status oi__vk_pipelines_init(oi__vk_context *ctx) {
    VkResult r;
    uint32_t most = ctx->caps.props.limits.maxPerStageDescriptorStorageBuffers;
    if (most < OI__VK_BINDINGS) /* every desktop driver offers far more; the spec's minimum is 4 */
        return oi__fail(OI_ERROR_UNSUPPORTED, "vulkan: the device binds %u storage buffers per shader; OpenInfer needs %d",
                        most, OI__VK_BINDINGS);
    VkDescriptorSetLayoutBinding bindings[OI__VK_BINDINGS];
    memset(bindings, 0, sizeof bindings);
    for (uint32_t i = 0; i < OI__VK_BINDINGS; i++) {
        bindings[i].binding = i;
        bindings[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        bindings[i].descriptorCount = 1;
        bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo set_info;
    memset(&set_info, 0, sizeof set_info);
    set_info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set_info.bindingCount = OI__VK_BINDINGS;
    set_info.pBindings = bindings;
    r = ctx->vk.vkCreateDescriptorSetLayout(ctx->device, &set_info, NULL, &ctx->set_layout);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreateDescriptorSetLayout", r);
    VkPushConstantRange push;
    memset(&push, 0, sizeof push);
    push.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    push.size = OI__VK_PUSH_WORDS * 4;
    VkPipelineLayoutCreateInfo layout_info;
    memset(&layout_info, 0, sizeof layout_info);
    layout_info.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &ctx->set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    r = ctx->vk.vkCreatePipelineLayout(ctx->device, &layout_info, NULL, &ctx->pipeline_layout);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreatePipelineLayout", r);
    VkPipelineCacheCreateInfo cache_info;
    memset(&cache_info, 0, sizeof cache_info);
    cache_info.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    r = ctx->vk.vkCreatePipelineCache(ctx->device, &cache_info, NULL, &ctx->pipeline_cache);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreatePipelineCache", r);
    return OI_OK;
}

/* The pipeline of (shader, op, dtypes), created on first use. */
static oi_status oi__vk_pipeline(oi__vk_context *ctx, const oi__vk_pipeline_key *key, VkPipeline *out) {
    ptrdiff_t i = hmgeti(ctx->pipelines, *key);
    if (i >= 0) {
        *out = ctx->pipelines[i].value;
        return OI_OK;
    }
    VkShaderModule module = VK_NULL_HANDLE;
    oi_status s = oi__vk_shader_module(ctx, (oi__vk_shader)key->shader, &module);
    if (s != OI_OK)
        return s;
    VkSpecializationMapEntry entries[5];
    for (uint32_t e = 0; e < 5; e++) {
        entries[e].constantID = e;
        entries[e].offset = e * 4;
        entries[e].size = 4;
    }
    VkSpecializationInfo spec;
    memset(&spec, 0, sizeof spec);
    spec.mapEntryCount = 5;
    spec.pMapEntries = entries;
    spec.dataSize = sizeof key->spec;
    spec.pData = key->spec;
    VkComputePipelineCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = &spec;
    info.layout = ctx->pipeline_layout;
    VkPipeline pipeline = VK_NULL_HANDLE;
    VkResult r = ctx->vk.vkCreateComputePipelines(ctx->device, ctx->pipeline_cache, 1, &info, NULL, &pipeline);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreateComputePipelines", r);
    oi__vk_pipeline_key k = *key;
    if (!hmput(ctx->pipelines, k, pipeline)) {
        ctx->vk.vkDestroyPipeline(ctx->device, pipeline, NULL);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    ctx->stats.pipelines_created++;
    *out = pipeline;
    return OI_OK;
}

static oi_status oi__vk_pool_add(oi__vk_context *ctx) {
    VkDescriptorPoolSize size;
    size.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    size.descriptorCount = 256 * OI__VK_BINDINGS;
    VkDescriptorPoolCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    info.maxSets = 256;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    VkResult r = ctx->vk.vkCreateDescriptorPool(ctx->device, &info, NULL, &pool);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreateDescriptorPool", r);
    if (!arrput(ctx->pools, pool)) {
        ctx->vk.vkDestroyDescriptorPool(ctx->device, pool, NULL);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    return OI_OK;
}

/* The descriptor set binding these buffer ranges, made once: the same
 * tensors bound by the same op next step give the same set, which is what
 * lets a step's command buffer be replayed. */
static oi_status oi__vk_descriptor_set(oi__vk_context *ctx, const oi__vk_set_key *key, VkDescriptorSet *out) {
    ptrdiff_t i = hmgeti(ctx->sets, *key);
    if (i >= 0) {
        *out = ctx->sets[i].value;
        return OI_OK;
    }
    VkDescriptorSetAllocateInfo alloc;
    memset(&alloc, 0, sizeof alloc);
    alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &ctx->set_layout;
    VkResult r = VK_ERROR_OUT_OF_POOL_MEMORY;
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (arrlen(ctx->pools) > 0) {
        alloc.descriptorPool = arrlast(ctx->pools);
        r = ctx->vk.vkAllocateDescriptorSets(ctx->device, &alloc, &set);
    }
    if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL) {
        oi_status s = oi__vk_pool_add(ctx);
        if (s != OI_OK)
            return s;
        alloc.descriptorPool = arrlast(ctx->pools);
        r = ctx->vk.vkAllocateDescriptorSets(ctx->device, &alloc, &set);
    }
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkAllocateDescriptorSets", r);
    VkDescriptorBufferInfo infos[OI__VK_BINDINGS];
    VkWriteDescriptorSet writes[OI__VK_BINDINGS];
    memset(writes, 0, sizeof writes);
    for (uint32_t b = 0; b < OI__VK_BINDINGS; b++) {
        infos[b].buffer = key->buffer[b];
        infos[b].offset = key->offset[b];
        infos[b].range = key->range[b];
        writes[b].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[b].dstSet = set;
        writes[b].dstBinding = b;
        writes[b].descriptorCount = 1;
        writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[b].pBufferInfo = &infos[b];
    }
    ctx->vk.vkUpdateDescriptorSets(ctx->device, OI__VK_BINDINGS, writes, 0, NULL);
    oi__vk_set_key k = *key;
    if (hmput(ctx->sets, k, set)) /* uncached (no memory) it still works, until the pools reset */
        ctx->stats.descriptor_sets_created++;
    *out = set;
    return OI_OK;
}

/* Drops every cached set once there are too many (nothing may be pending:
 * called between submissions). Recorded command buffers use them, so they
 * are recorded again. */
static void oi__vk_sets_trim(oi__vk_context *ctx) {
    if (hmlen(ctx->sets) <= OI__VK_SET_CACHE_LIMIT)
        return;
    for (ptrdiff_t i = 0; i < arrlen(ctx->pools); i++)
        ctx->vk.vkResetDescriptorPool(ctx->device, ctx->pools[i], 0);
    hmfree(ctx->sets);
    for (ptrdiff_t i = 0; i < arrlen(ctx->slots); i++)
        ctx->slots[i].recorded = false;
}
