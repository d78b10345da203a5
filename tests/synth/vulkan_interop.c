/* vulkan_interop.c - the emitted Vulkan folder of residual_mlp on the
 * application's own device (docs/synthesizer.md, "Vulkan interop"), built
 * against that folder by check_vulkan.py --interop:
 *
 *   vulkan_interop MODEL.oinf
 *
 * It makes its own instance, device and queue, puts the model file in a
 * buffer of its own at a non-zero offset, and opens the folder on them with
 * residual_mlp_open_on_device. Then, over three steps each:
 *   1. x set from the host (residual_mlp_set_x), h read with residual_mlp_get_h;
 *   2. x written by the application on the device (a vkCmdCopyBuffer into
 *      the range residual_mlp_input_buffer_x gives), h copied by the
 *      application out of the range residual_mlp_output_buffer_h gives;
 * and h must equal, bit for bit, what the folder computes on a device of its
 * own (residual_mlp_open) from the same x. Prints "interop: ok". */
#include "residual_mlp.h"
#include "volk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(VK_USE_64_BIT_PTR_DEFINES) && VK_USE_64_BIT_PTR_DEFINES == 1
#define TO_BUFFER(u) ((VkBuffer)(uintptr_t)(u))
#define FROM_BUFFER(b) ((uint64_t)(uintptr_t)(b))
#else
#define TO_BUFFER(u) ((VkBuffer)(u))
#define FROM_BUFFER(b) ((uint64_t)(b))
#endif

#define N_X 16 /* x and h: f32[2, 8] */
#define STEPS 3

static int fail(const char *what) {
    fprintf(stderr, "interop: %s (%s)\n", what, residual_mlp_last_error());
    return 1;
}

typedef struct app {
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    VkCommandPool pool;
    VkPhysicalDeviceMemoryProperties memory;
} app;

typedef struct host_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *map;
} host_buffer;

static int app_open(app *a) {
    if (volkInitialize() != VK_SUCCESS)
        return 1;
    VkApplicationInfo info = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "interop", 1, NULL, 0, VK_API_VERSION_1_1};
    VkInstanceCreateInfo ci;
    memset(&ci, 0, sizeof ci);
    ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ci.pApplicationInfo = &info;
    if (vkCreateInstance(&ci, NULL, &a->instance) != VK_SUCCESS)
        return 1;
    volkLoadInstanceOnly(a->instance);
    uint32_t n = 1;
    if (vkEnumeratePhysicalDevices(a->instance, &n, &a->physical) < 0 || n == 0)
        return 1;
    VkQueueFamilyProperties families[16];
    uint32_t nq = 16;
    vkGetPhysicalDeviceQueueFamilyProperties(a->physical, &nq, families);
    a->family = nq;
    for (uint32_t q = 0; q < nq && a->family == nq; q++)
        if (families[q].queueFlags & VK_QUEUE_COMPUTE_BIT)
            a->family = q;
    if (a->family == nq)
        return 1;
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, a->family, 1, &priority};
    VkDeviceCreateInfo di;
    memset(&di, 0, sizeof di);
    di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &queue;
    if (vkCreateDevice(a->physical, &di, NULL, &a->device) != VK_SUCCESS)
        return 1;
    volkLoadDevice(a->device);
    vkGetDeviceQueue(a->device, a->family, 0, &a->queue);
    vkGetPhysicalDeviceMemoryProperties(a->physical, &a->memory);
    VkCommandPoolCreateInfo pool = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL, 0, a->family};
    return vkCreateCommandPool(a->device, &pool, NULL, &a->pool) != VK_SUCCESS;
}

/* A host-visible, coherent buffer the application owns. */
static int host_buffer_make(const app *a, host_buffer *b, VkDeviceSize size) {
    VkBufferCreateInfo bi;
    memset(&bi, 0, sizeof bi);
    bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bi.size = size;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (vkCreateBuffer(a->device, &bi, NULL, &b->buffer) != VK_SUCCESS)
        return 1;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(a->device, b->buffer, &req);
    VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = a->memory.memoryTypeCount;
    for (uint32_t i = 0; i < a->memory.memoryTypeCount && type == a->memory.memoryTypeCount; i++)
        if ((req.memoryTypeBits & (1u << i)) && (a->memory.memoryTypes[i].propertyFlags & want) == want)
            type = i;
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, type};
    if (type == a->memory.memoryTypeCount || vkAllocateMemory(a->device, &ai, NULL, &b->memory) != VK_SUCCESS ||
        vkBindBufferMemory(a->device, b->buffer, b->memory, 0) != VK_SUCCESS)
        return 1;
    return vkMapMemory(a->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->map) != VK_SUCCESS;
}

static void host_buffer_free(const app *a, host_buffer *b) {
    vkUnmapMemory(a->device, b->memory);
    vkDestroyBuffer(a->device, b->buffer, NULL);
    vkFreeMemory(a->device, b->memory, NULL);
}

/* One copy on the application's queue, the barrier before it (the folder's
 * writes, for reading an output), submitted; waited for when `wait`. */
static int app_copy(const app *a, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst, VkDeviceSize dst_offset,
                    VkDeviceSize bytes, int wait) {
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, a->pool,
                                      VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
    VkCommandBuffer cb;
    if (vkAllocateCommandBuffers(a->device, &ai, &cb) != VK_SUCCESS)
        return 1;
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                      VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT, NULL};
    vkBeginCommandBuffer(cb, &begin);
    VkMemoryBarrier barrier = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                               VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &barrier, 0, NULL, 0, NULL);
    VkBufferCopy region = {src_offset, dst_offset, bytes};
    vkCmdCopyBuffer(cb, src, dst, 1, &region);
    vkEndCommandBuffer(cb);
    VkSubmitInfo submit;
    memset(&submit, 0, sizeof submit);
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    if (vkQueueSubmit(a->queue, 1, &submit, VK_NULL_HANDLE) != VK_SUCCESS)
        return 1;
    if (wait)
        vkQueueWaitIdle(a->queue);
    /* not waited for: freed after the next wait (the pool is reset at the end) */
    return 0;
}

static long file_bytes(const char *path, unsigned char **out) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = (unsigned char *)malloc((size_t)n + 1);
    long got = *out ? (long)fread(*out, 1, (size_t)n, f) : -1;
    fclose(f);
    return got == n ? n : -1;
}

static void x_of_step(int step, float *x) {
    for (int i = 0; i < N_X; i++)
        x[i] = (float)((i * 7 + step * 5) % 11) * 0.25f - 1.0f;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: vulkan_interop MODEL.oinf\n");
        return 2;
    }
    /* the reference: the folder on a device of its own */
    float want[STEPS][N_X], x[N_X];
    residual_mlp_ctx *own = residual_mlp_open(argv[1]);
    if (!own)
        return fail("residual_mlp_open");
    for (int s = 0; s < STEPS; s++) {
        x_of_step(s, x);
        size_t n = 0;
        if (residual_mlp_set_x(own, x, N_X) || residual_mlp_step(own))
            return fail("a step on the folder's own device");
        memcpy(want[s], residual_mlp_get_h(own, &n), sizeof want[s]);
    }
    residual_mlp_close(own);

    app a;
    memset(&a, 0, sizeof a);
    if (app_open(&a))
        return fail("making the application's device");
    unsigned char *model = NULL;
    long model_size = file_bytes(argv[1], &model);
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(a.physical, &props);
    VkDeviceSize at = 4 * props.limits.minStorageBufferOffsetAlignment; /* not at the buffer's start */
    host_buffer weights, io;
    if (model_size < 0 || host_buffer_make(&a, &weights, at + (VkDeviceSize)model_size) ||
        host_buffer_make(&a, &io, 2 * N_X * sizeof(float)))
        return fail("the application's buffers");
    memcpy((unsigned char *)weights.map + at, model, (size_t)model_size);
    free(model);

    residual_mlp_vulkan_device dev;
    memset(&dev, 0, sizeof dev);
    dev.instance = a.instance;
    dev.physical_device = a.physical;
    dev.device = a.device;
    dev.queue = a.queue;
    dev.queue_family_index = a.family;
    dev.model_buffer = FROM_BUFFER(weights.buffer);
    dev.model_offset = at + 4; /* misaligned: refused */
    if (residual_mlp_open_on_device(argv[1], &dev) != NULL || !strstr(residual_mlp_last_error(), "model_offset"))
        return fail("a misaligned model_offset was not refused");
    dev.model_offset = at;
    residual_mlp_ctx *ctx = residual_mlp_open_on_device(argv[1], &dev);
    if (!ctx)
        return fail("residual_mlp_open_on_device");

    int mismatches = 0;
    for (int s = 0; s < STEPS; s++) { /* 1. host in, host out */
        x_of_step(s, x);
        size_t n = 0;
        if (residual_mlp_set_x(ctx, x, N_X) || residual_mlp_step(ctx))
            return fail("a step with x from the host");
        mismatches += memcmp(residual_mlp_get_h(ctx, &n), want[s], sizeof want[s]) != 0;
    }
    for (int s = 0; s < STEPS; s++) { /* 2. device in, device out */
        uint64_t xb, xo, xs, hb, ho, hs;
        x_of_step(s, (float *)io.map);
        if (residual_mlp_input_buffer_x(ctx, &xb, &xo, &xs) || xs != N_X * sizeof(float) ||
            app_copy(&a, io.buffer, 0, TO_BUFFER(xb), xo, xs, 0))
            return fail("writing x on the device");
        if (residual_mlp_step(ctx))
            return fail("a step with x from the device");
        if (residual_mlp_output_buffer_h(ctx, &hb, &ho, &hs) || hs != N_X * sizeof(float) ||
            app_copy(&a, TO_BUFFER(hb), ho, io.buffer, N_X * sizeof(float), hs, 1))
            return fail("reading h on the device");
        mismatches += memcmp((const float *)io.map + N_X, want[s], sizeof want[s]) != 0;
    }
    residual_mlp_close(ctx);
    vkResetCommandPool(a.device, a.pool, 0);
    host_buffer_free(&a, &weights);
    host_buffer_free(&a, &io);
    vkDestroyCommandPool(a.device, a.pool, NULL);
    vkDestroyDevice(a.device, NULL); /* the folder left the application's handles alone */
    vkDestroyInstance(a.instance, NULL);
    if (mismatches) {
        fprintf(stderr, "interop: %d of %d steps differ from the folder's own device\n", mismatches, 2 * STEPS);
        return 1;
    }
    printf("interop: ok (%d steps from the host, %d from the device, the model from the application's buffer)\n",
           STEPS, STEPS);
    return 0;
}
