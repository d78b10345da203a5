/* oi_vk_runtime.h - the Vulkan plumbing of a synthesized graph, copied
 * verbatim by OpenInfer's synthesizer (synth/vulkan_runtime_template.c):
 * the instance and device (through volk), buffers, the compute pipelines
 * of the kernels, and the recorder that inserts a barrier only where a
 * command touches bytes an earlier one wrote (or writes bytes an earlier
 * one read) since the last barrier.
 *
 * Included by NAME.c after it defines OI_VK_FAIL(...) (its error function,
 * returning a nonzero code) and before any use. Every function returns 0
 * or that code; nothing here exits. */
#ifndef OI_VK_RUNTIME_H
#define OI_VK_RUNTIME_H

#include "volk.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { OI_VK_ARENA = 0, OI_VK_STATE = 1, OI_VK_MODEL = 2, OI_VK_BUFFERS = 3 };

typedef struct oi_vk_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    VkDeviceSize size;
    void *map; /* host-visible buffers: their mapping */
} oi_vk_buffer;

/* VkBuffer <-> uint64_t, as the header passes buffers (it needs no vulkan.h). */
#if defined(VK_USE_64_BIT_PTR_DEFINES) && VK_USE_64_BIT_PTR_DEFINES == 1
#define OI_VK_BUFFER_U64(b) ((uint64_t)(uintptr_t)(b))
#define OI_VK_U64_BUFFER(u) ((VkBuffer)(uintptr_t)(u))
#else
#define OI_VK_BUFFER_U64(b) ((uint64_t)(b))
#define OI_VK_U64_BUFFER(u) ((VkBuffer)(u))
#endif

/* Bytes [offset, offset + bytes) of one of the three device buffers. */
typedef struct oi_vk_range {
    int buffer;
    uint64_t offset, bytes;
} oi_vk_range;

/* -DOI_VK_PROFILE=N: a timestamp after each of the step's first N dispatches
 * (NAME_dispatch_ms reads them); 0, the default, records none. */
#ifndef OI_VK_PROFILE
#define OI_VK_PROFILE 0
#endif

typedef struct oi_vk {
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    VkPhysicalDeviceMemoryProperties memory;
    float timestamp_ns; /* 0: the queue has no timestamps */
    VkCommandPool pool;
    VkCommandBuffer step; /* recorded once at open, replayed by every step */
    VkFence fence;
    VkQueryPool queries;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkDescriptorPool descriptors;
    VkDescriptorSet set;
    VkPipeline *pipelines;
    int n_pipelines;
    oi_vk_buffer device_buffers[OI_VK_BUFFERS]; /* arena, state, model */
    VkDeviceSize model_offset; /* where the model starts in its buffer (the application's: see app_model) */
    /* The model is bound as a window of at most maxStorageBufferRange bytes (a dynamic
     * storage buffer): each dispatch that reads it slides the window over what it reads
     * (oi_vk_model_window), its kernels subtracting the window's start (pc.oi_mb). */
    VkDeviceSize model_range, model_align, model_base;
    const char *model_range_from; /* what set model_range, for the error that names it */
    int app_device; /* the instance, device and queue are the application's: never destroyed here */
    int app_model;  /* the model buffer is the application's: never freed here */
    /* the recorder: what was touched since the last barrier */
    oi_vk_range *touched;
    unsigned char *touched_write;
    int n_touched, cap_touched;
    int dispatches, barriers, copies;
#if OI_VK_PROFILE > 0
    int profiled, profiled_kernel[OI_VK_PROFILE]; /* dispatches followed by a timestamp, their pipelines */
#endif
} oi_vk;

static inline int oi_vk_check(VkResult r, const char *what) {
    if (r == VK_SUCCESS)
        return 0;
    return OI_VK_FAIL("Vulkan: %s failed (VkResult %d)", what, (int)r);
}

/* ---- instance and device ---- */
static inline int oi_vk_create_instance(oi_vk *vk) {
    if (volkInitialize() != VK_SUCCESS)
        return OI_VK_FAIL("Vulkan: no loader (libvulkan) on this machine");
    VkApplicationInfo app;
    memset(&app, 0, sizeof app);
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "openinfer-synthesized";
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pApplicationInfo = &app;
    if (oi_vk_check(vkCreateInstance(&info, NULL, &vk->instance), "vkCreateInstance"))
        return 1;
    volkLoadInstanceOnly(vk->instance);
    return 0;
}

/* What the host code needs to know of the physical device and queue family:
 * its memory types, and the timestamp period if the family has timestamps. */
static inline void oi_vk_read_device(oi_vk *vk) {
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(vk->physical, &nq, NULL);
    VkQueueFamilyProperties families[16];
    nq = nq > 16 ? 16 : nq;
    vkGetPhysicalDeviceQueueFamilyProperties(vk->physical, &nq, families);
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(vk->physical, &props);
    vk->timestamp_ns = vk->family < nq && families[vk->family].timestampValidBits ? props.limits.timestampPeriod : 0.0f;
    vk->model_range = props.limits.maxStorageBufferRange; /* the window's bytes (oi_vk_create_layout) */
    /* OI_VK_MODEL_WINDOW=BYTES: a smaller window than the device allows, to try on this
     * device how the folder reads a model larger than a smaller device's range */
    const char *window = getenv("OI_VK_MODEL_WINDOW");
    unsigned long long cap = window ? strtoull(window, NULL, 10) : 0;
    vk->model_range_from = "this device's maxStorageBufferRange";
    if (cap >= 65536 && cap < vk->model_range) {
        vk->model_range = (VkDeviceSize)cap;
        vk->model_range_from = "OI_VK_MODEL_WINDOW";
    }
    /* the window's start: a multiple of the device's alignment and of 16 bytes (the kernels'
     * vec4 views of the model stay aligned; both are powers of two) */
    vk->model_align = props.limits.minStorageBufferOffsetAlignment > 16 ? props.limits.minStorageBufferOffsetAlignment : 16;
    vkGetPhysicalDeviceMemoryProperties(vk->physical, &vk->memory);
}

/* The device: OI_VK_DEVICE=index if set, else the first discrete GPU,
 * else the first device with a compute queue. */
static inline int oi_vk_pick_device(oi_vk *vk) {
    uint32_t n = 0;
    vkEnumeratePhysicalDevices(vk->instance, &n, NULL);
    if (n == 0)
        return OI_VK_FAIL("Vulkan: no device");
    VkPhysicalDevice *all = (VkPhysicalDevice *)calloc(n, sizeof *all);
    if (!all)
        return OI_VK_FAIL("Vulkan: out of memory");
    vkEnumeratePhysicalDevices(vk->instance, &n, all);
    const char *want = getenv("OI_VK_DEVICE");
    uint32_t pick = 0;
    for (uint32_t i = 0; i < n && !want; i++) {
        VkPhysicalDeviceProperties props;
        vkGetPhysicalDeviceProperties(all[i], &props);
        if (props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) {
            pick = i;
            break;
        }
    }
    if (want)
        pick = (uint32_t)atoi(want);
    if (pick >= n) {
        free(all);
        return OI_VK_FAIL("Vulkan: OI_VK_DEVICE=%s: there are %u devices", want, n);
    }
    vk->physical = all[pick];
    free(all);
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(vk->physical, &nq, NULL);
    VkQueueFamilyProperties families[16];
    nq = nq > 16 ? 16 : nq;
    vkGetPhysicalDeviceQueueFamilyProperties(vk->physical, &nq, families);
    for (uint32_t q = 0; q < nq; q++)
        if (families[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
            vk->family = q;
            oi_vk_read_device(vk);
            return 0;
        }
    return OI_VK_FAIL("Vulkan: the device has no compute queue");
}

static inline int oi_vk_device_objects(oi_vk *vk);

static inline int oi_vk_create_device(oi_vk *vk, const char *const *extensions, uint32_t n_extensions,
                               const void *features) {
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue;
    memset(&queue, 0, sizeof queue);
    queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue.queueFamilyIndex = vk->family;
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkDeviceCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.pNext = features;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    info.enabledExtensionCount = n_extensions;
    info.ppEnabledExtensionNames = extensions;
    if (oi_vk_check(vkCreateDevice(vk->physical, &info, NULL, &vk->device), "vkCreateDevice"))
        return 1;
    volkLoadDevice(vk->device);
    vkGetDeviceQueue(vk->device, vk->family, 0, &vk->queue);
    return oi_vk_device_objects(vk);
}

/* The application's instance, device and queue (NAME_open_on_device): their
 * functions loaded through gipa (NULL: the loader's vkGetInstanceProcAddr);
 * they stay the application's. */
static inline int oi_vk_use_app_device(oi_vk *vk, VkInstance instance, VkPhysicalDevice physical, VkDevice device,
                                       VkQueue queue, uint32_t family, PFN_vkGetInstanceProcAddr gipa) {
    if (!instance || !physical || !device || !queue)
        return OI_VK_FAIL("Vulkan: the application's device needs its instance, physical device, device and queue");
    if (gipa)
        volkInitializeCustom(gipa);
    else if (volkInitialize() != VK_SUCCESS)
        return OI_VK_FAIL("Vulkan: no loader (libvulkan) on this machine");
    volkLoadInstanceOnly(instance);
    volkLoadDevice(device);
    vk->app_device = 1;
    vk->instance = instance;
    vk->physical = physical;
    vk->device = device;
    vk->queue = queue;
    vk->family = family;
    oi_vk_read_device(vk);
    return oi_vk_device_objects(vk);
}

/* What the host code makes on the device: its command pool, fence and
 * timestamp queries. */
static inline int oi_vk_device_objects(oi_vk *vk) {
    VkCommandPoolCreateInfo pool;
    memset(&pool, 0, sizeof pool);
    pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool.queueFamilyIndex = vk->family;
    pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    if (oi_vk_check(vkCreateCommandPool(vk->device, &pool, NULL, &vk->pool), "vkCreateCommandPool"))
        return 1;
    VkFenceCreateInfo fence;
    memset(&fence, 0, sizeof fence);
    fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    if (oi_vk_check(vkCreateFence(vk->device, &fence, NULL, &vk->fence), "vkCreateFence"))
        return 1;
    if (vk->timestamp_ns > 0.0f) {
        VkQueryPoolCreateInfo q;
        memset(&q, 0, sizeof q);
        q.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
        q.queryType = VK_QUERY_TYPE_TIMESTAMP;
        q.queryCount = 2 + OI_VK_PROFILE; /* the step's start and end, then one per profiled dispatch */
        if (oi_vk_check(vkCreateQueryPool(vk->device, &q, NULL, &vk->queries), "vkCreateQueryPool"))
            return 1;
    }
    return 0;
}

/* Whether the physical device offers the extension `name`. */
static inline int oi_vk_has_extension(const oi_vk *vk, const char *name) {
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(vk->physical, NULL, &n, NULL);
    VkExtensionProperties *props = (VkExtensionProperties *)calloc(n + 1, sizeof *props);
    int found = 0;
    if (props) {
        vkEnumerateDeviceExtensionProperties(vk->physical, NULL, &n, props);
        for (uint32_t i = 0; i < n && !found; i++)
            found = strcmp(props[i].extensionName, name) == 0;
        free(props);
    }
    return found;
}

/* ---- buffers ---- */
static inline int oi_vk_memory_type(const oi_vk *vk, uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags need) {
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < vk->memory.memoryTypeCount; i++) {
            VkMemoryPropertyFlags f = vk->memory.memoryTypes[i].propertyFlags;
            if ((bits & (1u << i)) && (f & need) == need && (pass == 1 || (f & want) == want))
                return (int)i;
        }
    return -1;
}

/* host: mapped, coherent (staging and read-back); else device-local. */
static inline int oi_vk_buffer_create(oi_vk *vk, oi_vk_buffer *b, VkDeviceSize size, VkBufferUsageFlags usage, int host) {
    b->size = size < 16 ? 16 : (size + 3) / 4 * 4;
    VkBufferCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = b->size;
    info.usage = usage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    if (oi_vk_check(vkCreateBuffer(vk->device, &info, NULL, &b->buffer), "vkCreateBuffer"))
        return 1;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(vk->device, b->buffer, &req);
    VkMemoryPropertyFlags need = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT : 0;
    VkMemoryPropertyFlags want = host ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    int type = oi_vk_memory_type(vk, req.memoryTypeBits, want, need);
    if (type < 0)
        return OI_VK_FAIL("Vulkan: no memory type for a buffer of %llu bytes", (unsigned long long)size);
    VkMemoryAllocateInfo alloc;
    memset(&alloc, 0, sizeof alloc);
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = (uint32_t)type;
    if (oi_vk_check(vkAllocateMemory(vk->device, &alloc, NULL, &b->memory), "vkAllocateMemory") ||
        oi_vk_check(vkBindBufferMemory(vk->device, b->buffer, b->memory, 0), "vkBindBufferMemory"))
        return 1;
    if (host && oi_vk_check(vkMapMemory(vk->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->map), "vkMapMemory"))
        return 1;
    if (host)
        memset(b->map, 0, (size_t)b->size);
    return 0;
}

static inline void oi_vk_buffer_free(oi_vk *vk, oi_vk_buffer *b) {
    if (b->map)
        vkUnmapMemory(vk->device, b->memory);
    if (b->buffer)
        vkDestroyBuffer(vk->device, b->buffer, NULL);
    if (b->memory)
        vkFreeMemory(vk->device, b->memory, NULL);
    memset(b, 0, sizeof *b);
}

#define OI_VK_DEVICE_USAGE                                                                                         \
    (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT)
#define OI_VK_HOST_USAGE (VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT)

/* ---- one-time commands (uploads at open) ---- */
static inline int oi_vk_begin(oi_vk *vk, VkCommandBuffer *cb, int once) {
    VkCommandBufferAllocateInfo alloc;
    memset(&alloc, 0, sizeof alloc);
    alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    alloc.commandPool = vk->pool;
    alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    alloc.commandBufferCount = 1;
    if (oi_vk_check(vkAllocateCommandBuffers(vk->device, &alloc, cb), "vkAllocateCommandBuffers"))
        return 1;
    VkCommandBufferBeginInfo begin;
    memset(&begin, 0, sizeof begin);
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = once ? VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT : 0;
    return oi_vk_check(vkBeginCommandBuffer(*cb, &begin), "vkBeginCommandBuffer");
}

/* -DOI_VK_SPIN_US=N: the host polls a submission's fence for up to N
 * microseconds before it sleeps in vkWaitForFences, whose wake-up can cost
 * tens of microseconds, a large part of a short step; 0: no polling. */
#ifndef OI_VK_SPIN_US
#define OI_VK_SPIN_US 1000
#endif

static inline long long oi_vk_now_us(void) {
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

/* Waits for the fence: polled first (OI_VK_SPIN_US), then asleep. */
static inline int oi_vk_wait(oi_vk *vk) {
#if OI_VK_SPIN_US > 0
    for (long long start = oi_vk_now_us(); oi_vk_now_us() - start < OI_VK_SPIN_US;) {
        VkResult r = vkGetFenceStatus(vk->device, vk->fence);
        if (r == VK_SUCCESS)
            return 0;
        if (r != VK_NOT_READY)
            return oi_vk_check(r, "vkGetFenceStatus");
    }
#endif
    return oi_vk_check(vkWaitForFences(vk->device, 1, &vk->fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
}

/* Submits n command buffers, in order, and waits for them. */
static inline int oi_vk_submit_n(oi_vk *vk, const VkCommandBuffer *cbs, uint32_t n) {
    VkSubmitInfo submit;
    memset(&submit, 0, sizeof submit);
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = n;
    submit.pCommandBuffers = cbs;
    if (oi_vk_check(vkQueueSubmit(vk->queue, 1, &submit, vk->fence), "vkQueueSubmit") || oi_vk_wait(vk))
        return 1;
    return oi_vk_check(vkResetFences(vk->device, 1, &vk->fence), "vkResetFences");
}

static inline int oi_vk_submit(oi_vk *vk, VkCommandBuffer cb) { return oi_vk_submit_n(vk, &cb, 1); }

/* bytes from the host into dst at offset, through a staging buffer. */
static inline int oi_vk_upload(oi_vk *vk, oi_vk_buffer *dst, VkDeviceSize offset, const void *bytes, VkDeviceSize size) {
    if (size == 0)
        return 0;
    oi_vk_buffer staging;
    memset(&staging, 0, sizeof staging);
    VkCommandBuffer cb = VK_NULL_HANDLE;
    int rc = oi_vk_buffer_create(vk, &staging, size, OI_VK_HOST_USAGE, 1);
    if (rc == 0) {
        memcpy(staging.map, bytes, (size_t)size);
        rc = oi_vk_begin(vk, &cb, 1);
    }
    if (rc == 0) {
        VkBufferCopy region = {0, offset, (size + 3) / 4 * 4};
        vkCmdCopyBuffer(cb, staging.buffer, dst->buffer, 1, &region);
        rc = oi_vk_check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    }
    if (rc == 0)
        rc = oi_vk_submit(vk, cb);
    if (cb)
        vkFreeCommandBuffers(vk->device, vk->pool, 1, &cb);
    oi_vk_buffer_free(vk, &staging);
    return rc;
}

/* ---- pipelines: one layout (arena, state, model; push constants) ---- */
static inline int oi_vk_create_layout(oi_vk *vk, uint32_t push_bytes) {
    VkDescriptorSetLayoutBinding bindings[OI_VK_BUFFERS];
    memset(bindings, 0, sizeof bindings);
    for (uint32_t i = 0; i < OI_VK_BUFFERS; i++) {
        bindings[i].binding = i;
        bindings[i].descriptorType = i == OI_VK_MODEL ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC
                                                      : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        bindings[i].descriptorCount = 1;
        bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo set;
    memset(&set, 0, sizeof set);
    set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set.bindingCount = OI_VK_BUFFERS;
    set.pBindings = bindings;
    if (oi_vk_check(vkCreateDescriptorSetLayout(vk->device, &set, NULL, &vk->set_layout), "vkCreateDescriptorSetLayout"))
        return 1;
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout;
    memset(&layout, 0, sizeof layout);
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &vk->set_layout;
    layout.pushConstantRangeCount = push_bytes ? 1 : 0;
    layout.pPushConstantRanges = &push;
    if (oi_vk_check(vkCreatePipelineLayout(vk->device, &layout, NULL, &vk->layout), "vkCreatePipelineLayout"))
        return 1;
    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, OI_VK_BUFFERS - 1},
                                     {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC, 1}};
    VkDescriptorPoolCreateInfo pool;
    memset(&pool, 0, sizeof pool);
    pool.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    pool.maxSets = 1;
    pool.poolSizeCount = 2;
    pool.pPoolSizes = sizes;
    if (oi_vk_check(vkCreateDescriptorPool(vk->device, &pool, NULL, &vk->descriptors), "vkCreateDescriptorPool"))
        return 1;
    VkDescriptorSetAllocateInfo alloc;
    memset(&alloc, 0, sizeof alloc);
    alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    alloc.descriptorPool = vk->descriptors;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &vk->set_layout;
    if (oi_vk_check(vkAllocateDescriptorSets(vk->device, &alloc, &vk->set), "vkAllocateDescriptorSets"))
        return 1;
    VkDescriptorBufferInfo infos[OI_VK_BUFFERS];
    VkWriteDescriptorSet writes[OI_VK_BUFFERS];
    memset(writes, 0, sizeof writes);
    for (uint32_t i = 0; i < OI_VK_BUFFERS; i++) {
        infos[i].buffer = vk->device_buffers[i].buffer;
        infos[i].offset = i == OI_VK_MODEL ? vk->model_offset : 0;
        infos[i].range = VK_WHOLE_SIZE;
        if (i == OI_VK_MODEL) { /* the window: the whole model where the device allows */
            VkDeviceSize size = vk->device_buffers[i].size;
            if (vk->model_range && vk->model_range < size) /* the last window ends where the model does */
                vk->model_range = size - ((size - vk->model_range + 255) & ~(VkDeviceSize)255);
            else
                vk->model_range = size;
            infos[i].range = vk->model_range;
        }
        writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[i].dstSet = vk->set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = i == OI_VK_MODEL ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC
                                                    : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(vk->device, OI_VK_BUFFERS, writes, 0, NULL);
    return 0;
}

static inline int oi_vk_create_pipeline(oi_vk *vk, int index, const uint32_t *spirv, size_t bytes) {
    VkShaderModuleCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    info.codeSize = bytes;
    info.pCode = spirv;
    VkShaderModule module;
    if (oi_vk_check(vkCreateShaderModule(vk->device, &info, NULL, &module), "vkCreateShaderModule"))
        return 1;
    VkComputePipelineCreateInfo pipe;
    memset(&pipe, 0, sizeof pipe);
    pipe.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    pipe.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipe.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipe.stage.module = module;
    pipe.stage.pName = "main";
    pipe.layout = vk->layout;
    VkResult r = vkCreateComputePipelines(vk->device, VK_NULL_HANDLE, 1, &pipe, NULL, &vk->pipelines[index]);
    vkDestroyShaderModule(vk->device, module, NULL);
    return oi_vk_check(r, "vkCreateComputePipelines");
}

/* ---- the recorder ---- */
static inline int oi_vk_overlap(const oi_vk_range *a, const oi_vk_range *b) {
    return a->buffer == b->buffer && a->offset < b->offset + b->bytes && b->offset < a->offset + a->bytes;
}

/* Whether touching r (write: writing it) must wait for what was touched
 * since the last barrier: read after write, write after read or write. */
static inline int oi_vk_hazard(const oi_vk *vk, const oi_vk_range *r, int write) {
    for (int i = 0; i < vk->n_touched; i++)
        if ((write || vk->touched_write[i]) && oi_vk_overlap(&vk->touched[i], r))
            return 1;
    return 0;
}

static inline int oi_vk_touch(oi_vk *vk, const oi_vk_range *r, int write) {
    if (vk->n_touched == vk->cap_touched) {
        int cap = vk->cap_touched ? vk->cap_touched * 2 : 64;
        oi_vk_range *t = (oi_vk_range *)realloc(vk->touched, (size_t)cap * sizeof *t);
        if (t)
            vk->touched = t;
        unsigned char *w = (unsigned char *)realloc(vk->touched_write, (size_t)cap);
        if (w)
            vk->touched_write = w;
        if (!t || !w)
            return OI_VK_FAIL("Vulkan: out of memory while recording");
        vk->cap_touched = cap;
    }
    vk->touched[vk->n_touched] = *r;
    vk->touched_write[vk->n_touched++] = (unsigned char)write;
    return 0;
}

/* One barrier between compute and transfer work: everything written so
 * far is visible to everything after. */
static inline void oi_vk_barrier(oi_vk *vk, VkCommandBuffer cb) {
    VkMemoryBarrier barrier;
    memset(&barrier, 0, sizeof barrier);
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                            VK_ACCESS_TRANSFER_WRITE_BIT;
    VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    vkCmdPipelineBarrier(cb, stages, stages, 0, 1, &barrier, 0, NULL, 0, NULL);
    vk->n_touched = 0;
    vk->barriers++;
}

/* The first command of a step: whatever was written before it (the input
 * uploads, submitted as command buffers of their own, or the application's
 * own writes on a shared queue) is visible to the step's kernels and copies. */
static inline void oi_vk_barrier_from_before(oi_vk *vk, VkCommandBuffer cb) {
    VkMemoryBarrier barrier;
    memset(&barrier, 0, sizeof barrier);
    barrier.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    barrier.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                            VK_ACCESS_TRANSFER_WRITE_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier, 0, NULL,
                         0, NULL);
    vk->n_touched = 0;
    vk->barriers++;
}

/* Declares what the next command reads and writes; a barrier first if it
 * depends on something since the last one. The model is never written:
 * its ranges are not listed. */
static inline int oi_vk_access(oi_vk *vk, VkCommandBuffer cb, const oi_vk_range *reads, int n_reads,
                        const oi_vk_range *writes, int n_writes) {
    int wait = 0;
    for (int i = 0; i < n_reads && !wait; i++)
        wait = oi_vk_hazard(vk, &reads[i], 0);
    for (int i = 0; i < n_writes && !wait; i++)
        wait = oi_vk_hazard(vk, &writes[i], 1);
    if (wait)
        oi_vk_barrier(vk, cb);
    for (int i = 0; i < n_reads; i++)
        if (oi_vk_touch(vk, &reads[i], 0))
            return 1;
    for (int i = 0; i < n_writes; i++)
        if (oi_vk_touch(vk, &writes[i], 1))
            return 1;
    return 0;
}

static inline int oi_vk_dispatch(oi_vk *vk, VkCommandBuffer cb, int pipeline, const uint32_t *push, uint32_t push_bytes,
                          uint32_t gx, uint32_t gy, uint32_t gz, const oi_vk_range *reads, int n_reads,
                          const oi_vk_range *writes, int n_writes) {
    if (oi_vk_access(vk, cb, reads, n_reads, writes, n_writes))
        return 1;
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, vk->pipelines[pipeline]);
    if (push_bytes)
        vkCmdPushConstants(cb, vk->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes, push);
    vkCmdDispatch(cb, gx, gy, gz);
    vk->dispatches++;
#if OI_VK_PROFILE > 0
    if (vk->queries && vk->profiled < OI_VK_PROFILE) {
        vk->profiled_kernel[vk->profiled] = pipeline;
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, vk->queries, (uint32_t)(2 + vk->profiled++));
    }
#endif
    return 0;
}

/* The last step's profiled dispatches: ms[i] the GPU time from the previous
 * timestamp (the step's start for the first) to the end of dispatch i, which
 * ran kernel[i]; how many (0 without -DOI_VK_PROFILE or timestamps). */
static inline int oi_vk_dispatch_ms(const oi_vk *vk, double *ms, int *kernel, int max) {
#if OI_VK_PROFILE > 0
    uint64_t ticks[2 + OI_VK_PROFILE];
    int n = vk->profiled < max ? vk->profiled : max;
    if (!vk->queries || n <= 0 ||
        vkGetQueryPoolResults(vk->device, vk->queries, 0, (uint32_t)(2 + n), sizeof ticks, ticks, sizeof ticks[0],
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) != VK_SUCCESS)
        return 0;
    for (int i = 0; i < n; i++) {
        ms[i] = (double)(ticks[2 + i] - ticks[i ? 1 + i : 0]) * vk->timestamp_ns * 1e-6;
        kernel[i] = vk->profiled_kernel[i];
    }
    return n;
#else
    (void)vk, (void)ms, (void)kernel, (void)max;
    return 0;
#endif
}

/* Widens [*lo, *hi) to cover bytes [at, at + bytes). */
static inline void oi_vk_span(uint64_t *lo, uint64_t *hi, uint64_t at, uint64_t bytes) {
    *lo = at < *lo ? at : *lo;
    *hi = at + bytes > *hi ? at + bytes : *hi;
}

/* Binds the descriptor set with the model's window at `base` bytes. */
static inline void oi_vk_bind(oi_vk *vk, VkCommandBuffer cb, VkDeviceSize base) {
    uint32_t offset = (uint32_t)base;
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, vk->layout, 0, 1, &vk->set, 1, &offset);
    vk->model_base = base;
}

/* Before a dispatch that reads model bytes [lo, hi): the window placed over
 * them (rebound only when it moves); *mb: its start in 32-bit words, which
 * the kernel subtracts from its model offsets. */
static inline int oi_vk_model_window(oi_vk *vk, VkCommandBuffer cb, uint64_t lo, uint64_t hi, uint32_t *mb) {
    VkDeviceSize size = vk->device_buffers[OI_VK_MODEL].size, last = size - vk->model_range;
    VkDeviceSize base = lo < last ? lo : last;
    base -= base % vk->model_align;
    if (hi > base + vk->model_range)
        return OI_VK_FAIL("Vulkan: one kernel reads model bytes %llu..%llu, more than the model window's %llu "
                          "bytes apart (%s)", (unsigned long long)lo, (unsigned long long)hi,
                          (unsigned long long)vk->model_range, vk->model_range_from);
    if (base != vk->model_base)
        oi_vk_bind(vk, cb, base);
    *mb = (uint32_t)(base / 4);
    return 0;
}

/* A copy between two device buffers (a DSL transfer). */
static inline int oi_vk_copy(oi_vk *vk, VkCommandBuffer cb, int dst, uint64_t dst_offset, int src, uint64_t src_offset,
                      uint64_t bytes) {
    oi_vk_range r = {src, src_offset, bytes}, w = {dst, dst_offset, bytes};
    if (oi_vk_access(vk, cb, &r, src == OI_VK_MODEL ? 0 : 1, &w, 1))
        return 1;
    VkBufferCopy region = {src_offset + (src == OI_VK_MODEL ? vk->model_offset : 0), dst_offset, bytes};
    vkCmdCopyBuffer(cb, vk->device_buffers[src].buffer, vk->device_buffers[dst].buffer, 1, &region);
    vk->copies++;
    return 0;
}

static inline void oi_vk_destroy(oi_vk *vk) {
    if (vk->device) {
        if (!vk->app_device) /* the application's queues may be busy with its own work */
            vkDeviceWaitIdle(vk->device);
        for (int i = 0; i < vk->n_pipelines; i++)
            if (vk->pipelines && vk->pipelines[i])
                vkDestroyPipeline(vk->device, vk->pipelines[i], NULL);
        for (int i = 0; i < OI_VK_BUFFERS; i++)
            if (!(i == OI_VK_MODEL && vk->app_model))
                oi_vk_buffer_free(vk, &vk->device_buffers[i]);
        if (vk->layout)
            vkDestroyPipelineLayout(vk->device, vk->layout, NULL);
        if (vk->descriptors)
            vkDestroyDescriptorPool(vk->device, vk->descriptors, NULL);
        if (vk->set_layout)
            vkDestroyDescriptorSetLayout(vk->device, vk->set_layout, NULL);
        if (vk->queries)
            vkDestroyQueryPool(vk->device, vk->queries, NULL);
        if (vk->fence)
            vkDestroyFence(vk->device, vk->fence, NULL);
        if (vk->pool)
            vkDestroyCommandPool(vk->device, vk->pool, NULL);
        if (!vk->app_device)
            vkDestroyDevice(vk->device, NULL);
    }
    if (vk->instance && !vk->app_device)
        vkDestroyInstance(vk->instance, NULL);
    free(vk->pipelines);
    free(vk->touched);
    free(vk->touched_write);
    memset(vk, 0, sizeof *vk);
}

#endif /* OI_VK_RUNTIME_H */
