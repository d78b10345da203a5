/* vk_shader_stats.c - what the driver made of a compute shader: the
 * statistics of VK_KHR_pipeline_executable_properties (NVIDIA reports
 * registers per invocation, shared memory, spills, ...), to tell why one
 * build of a shader is faster than another (bench/gpu/coopmat_sweep.sh).
 *
 * With OI_IR_DIR=DIR in the environment it also writes the pipeline cache
 * (DIR/pipeline_cache.bin, which bench/gpu/sass_from_cache.py turns into
 * the driver's machine code) and any internal representations the driver
 * offers (NVIDIA's offers none).
 *
 * Usage: vk_shader_stats FILE.spv [spec0 spec1 ...]
 * The pipeline uses the backend's layout (8 storage buffers, 128 bytes of
 * push constants) and specialization constants 0.. from the arguments (as
 * oi__vk_pipeline_key's spec[]); the device enables what
 * matmul_coopmat.comp declares (16-bit storage and arithmetic,
 * VK_KHR_cooperative_matrix for a module of gen_spirv.py coopmat-khr, else
 * VK_NV_cooperative_matrix, and the Vulkan memory model).
 * Build (a GPU-machine tool, not built by meson):
 *   cc -O2 -std=c11 -D_GNU_SOURCE bench/gpu/vk_shader_stats.c -o vk_shader_stats -ldl */
#define VOLK_IMPLEMENTATION
#include <volk.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BINDINGS 8

static int fail(const char *what, VkResult r) {
    fprintf(stderr, "vk_shader_stats: %s failed (VkResult %d)\n", what, (int)r);
    return 1;
}

static uint32_t *read_spirv(const char *path, size_t *bytes) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint32_t *code = size > 0 ? malloc((size_t)size) : NULL;
    if (code && fread(code, 1, (size_t)size, f) != (size_t)size) {
        free(code);
        code = NULL;
    }
    fclose(f);
    *bytes = (size_t)size;
    return code;
}

/* Whether the module declares SPV_KHR_cooperative_matrix's capability
 * (gen_spirv.py coopmat-khr) rather than the NV one. */
static int declares_khr_coopmat(const uint32_t *code, size_t bytes) {
    for (size_t at = 5; at < bytes / 4 && code[at] >> 16;) {
        if ((code[at] & 0xffff) == 17 && at + 1 < bytes / 4 && code[at + 1] == 6022)
            return 1;
        at += code[at] >> 16;
    }
    return 0;
}

static VkResult make_device(VkInstance instance, int khr, VkPhysicalDevice *pd, VkDevice *device) {
    uint32_t n = 1;
    VkResult r = vkEnumeratePhysicalDevices(instance, &n, pd);
    if (r < 0 || n == 0)
        return r < 0 ? r : VK_ERROR_INITIALIZATION_FAILED;
    VkPhysicalDeviceShaderFloat16Int8Features f16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES,
                                                     .shaderFloat16 = VK_TRUE};
    VkPhysicalDevice16BitStorageFeatures s16 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES,
                                                .pNext = &f16, .storageBuffer16BitAccess = VK_TRUE};
    VkPhysicalDeviceVulkanMemoryModelFeatures model = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES,
                                                       .pNext = &s16, .vulkanMemoryModel = VK_TRUE};
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop = {.sType = khr ? (VkStructureType)1000506000 /* the KHR one */
                                                                      : VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
                                                        .pNext = &model, .cooperativeMatrix = VK_TRUE};
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR, .pNext = &coop,
        .pipelineExecutableInfo = VK_TRUE};
    const char *extensions[] = {VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME,
                                khr ? "VK_KHR_cooperative_matrix" : VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME,
                                VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME};
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueCount = 1,
                                     .pQueuePriorities = &priority};
    VkDeviceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &exec, .queueCreateInfoCount = 1,
                               .pQueueCreateInfos = &queue, .enabledExtensionCount = 4, .ppEnabledExtensionNames = extensions};
    return vkCreateDevice(*pd, &info, NULL, device);
}

static VkResult make_pipeline(VkDevice device, const uint32_t *code, size_t bytes, const uint32_t *spec, uint32_t n_spec,
                              VkPipeline *pipeline) {
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = bytes, .pCode = code};
    VkShaderModule module;
    VkResult r = vkCreateShaderModule(device, &mi, NULL, &module);
    if (r != VK_SUCCESS)
        return r;
    VkDescriptorSetLayoutBinding bindings[BINDINGS];
    for (uint32_t b = 0; b < BINDINGS; b++)
        bindings[b] = (VkDescriptorSetLayoutBinding){.binding = b, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                     .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    VkDescriptorSetLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = BINDINGS, .pBindings = bindings};
    VkDescriptorSetLayout set_layout;
    if ((r = vkCreateDescriptorSetLayout(device, &li, NULL, &set_layout)) != VK_SUCCESS)
        return r;
    VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = 128};
    VkPipelineLayoutCreateInfo pli = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .setLayoutCount = 1,
                                      .pSetLayouts = &set_layout, .pushConstantRangeCount = 1, .pPushConstantRanges = &push};
    VkPipelineLayout layout;
    if ((r = vkCreatePipelineLayout(device, &pli, NULL, &layout)) != VK_SUCCESS)
        return r;
    VkSpecializationMapEntry entries[16];
    for (uint32_t e = 0; e < n_spec; e++)
        entries[e] = (VkSpecializationMapEntry){.constantID = e, .offset = 4 * e, .size = 4};
    VkSpecializationInfo si = {.mapEntryCount = n_spec, .pMapEntries = entries, .dataSize = 4 * n_spec, .pData = spec};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, .flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR |
                 VK_PIPELINE_CREATE_CAPTURE_INTERNAL_REPRESENTATIONS_BIT_KHR,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = module, .pName = "main", .pSpecializationInfo = n_spec ? &si : NULL},
        .layout = layout};
    /* The pipeline cache's data holds the driver's machine code: written
     * to OI_IR_DIR/pipeline_cache.bin for a disassembler. */
    VkPipelineCacheCreateInfo cci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    VkPipelineCache cache;
    if ((r = vkCreatePipelineCache(device, &cci, NULL, &cache)) != VK_SUCCESS)
        return r;
    r = vkCreateComputePipelines(device, cache, 1, &ci, NULL, pipeline);
    const char *dir = getenv("OI_IR_DIR");
    size_t size = 0;
    if (r == VK_SUCCESS && dir && vkGetPipelineCacheData(device, cache, &size, NULL) == VK_SUCCESS && size) {
        void *data = malloc(size);
        char path[512];
        snprintf(path, sizeof path, "%s/pipeline_cache.bin", dir);
        FILE *f = data && vkGetPipelineCacheData(device, cache, &size, data) == VK_SUCCESS ? fopen(path, "wb") : NULL;
        if (f) {
            fwrite(data, 1, size, f);
            fclose(f);
        }
        free(data);
    }
    vkDestroyPipelineCache(device, cache, NULL);
    return r;
}

static void print_statistic(const VkPipelineExecutableStatisticKHR *s) {
    printf("  %-32s ", s->name);
    switch (s->format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: printf("%s\n", s->value.b32 ? "true" : "false"); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: printf("%lld\n", (long long)s->value.i64); break;
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: printf("%llu\n", (unsigned long long)s->value.u64); break;
    default: printf("%g\n", s->value.f64); break;
    }
}

/* The driver's internal representations of executable e (its IR or
 * machine code, where it offers them): listed, and written to DIR/e_i.txt
 * or .bin when the environment names DIR as OI_IR_DIR. */
static void dump_representations(VkDevice device, const VkPipelineExecutableInfoKHR *ei) {
    uint32_t n = 0;
    vkGetPipelineExecutableInternalRepresentationsKHR(device, ei, &n, NULL);
    VkPipelineExecutableInternalRepresentationKHR reps[8];
    n = n > 8 ? 8 : n;
    for (uint32_t i = 0; i < n; i++)
        reps[i] = (VkPipelineExecutableInternalRepresentationKHR){
            .sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INTERNAL_REPRESENTATION_KHR};
    vkGetPipelineExecutableInternalRepresentationsKHR(device, ei, &n, reps);
    for (uint32_t i = 0; i < n; i++)
        reps[i].pData = reps[i].dataSize ? malloc(reps[i].dataSize) : NULL;
    vkGetPipelineExecutableInternalRepresentationsKHR(device, ei, &n, reps);
    const char *dir = getenv("OI_IR_DIR");
    for (uint32_t i = 0; i < n; i++) {
        printf("  representation %u: %s (%s), %zu bytes%s\n", i, reps[i].name, reps[i].description, reps[i].dataSize,
               reps[i].isText ? ", text" : "");
        char path[512];
        snprintf(path, sizeof path, "%s/%u_%u.%s", dir ? dir : ".", ei->executableIndex, i, reps[i].isText ? "txt" : "bin");
        FILE *f = dir && reps[i].pData ? fopen(path, "wb") : NULL;
        if (f) {
            fwrite(reps[i].pData, 1, reps[i].isText && reps[i].dataSize ? reps[i].dataSize - 1 : reps[i].dataSize, f);
            fclose(f);
        }
        free(reps[i].pData);
    }
}

static int print_statistics(VkDevice device, VkPipeline pipeline) {
    VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipeline};
    uint32_t n_exec = 0;
    vkGetPipelineExecutablePropertiesKHR(device, &pi, &n_exec, NULL);
    for (uint32_t e = 0; e < n_exec; e++) {
        VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipeline,
                                          .executableIndex = e};
        uint32_t n = 0;
        vkGetPipelineExecutableStatisticsKHR(device, &ei, &n, NULL);
        VkPipelineExecutableStatisticKHR stats[64];
        n = n > 64 ? 64 : n;
        for (uint32_t i = 0; i < n; i++)
            stats[i] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
        VkResult r = vkGetPipelineExecutableStatisticsKHR(device, &ei, &n, stats);
        if (r < 0)
            return fail("vkGetPipelineExecutableStatisticsKHR", r);
        printf(" executable %u:\n", e);
        for (uint32_t i = 0; i < n; i++)
            print_statistic(&stats[i]);
        dump_representations(device, &ei);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: vk_shader_stats FILE.spv [spec0 spec1 ...]\n");
        return 2;
    }
    uint32_t spec[16], n_spec = 0;
    for (int a = 2; a < argc && n_spec < 16; a++)
        spec[n_spec++] = (uint32_t)strtoul(argv[a], NULL, 0);
    size_t bytes;
    uint32_t *code = read_spirv(argv[1], &bytes);
    if (!code) {
        fprintf(stderr, "vk_shader_stats: cannot read %s\n", argv[1]);
        return 1;
    }
    VkResult r = volkInitialize();
    if (r != VK_SUCCESS)
        return fail("volkInitialize (no Vulkan loader?)", r);
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ii = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkInstance instance;
    if ((r = vkCreateInstance(&ii, NULL, &instance)) != VK_SUCCESS)
        return fail("vkCreateInstance", r);
    volkLoadInstance(instance);
    VkPhysicalDevice pd;
    VkDevice device;
    if ((r = make_device(instance, declares_khr_coopmat(code, bytes), &pd, &device)) != VK_SUCCESS)
        return fail("vkCreateDevice", r);
    volkLoadDevice(device);
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    printf("%s on %s (maxComputeSharedMemorySize %u)\n", argv[1], props.deviceName,
           props.limits.maxComputeSharedMemorySize);
    VkPipeline pipeline;
    if ((r = make_pipeline(device, code, bytes, spec, n_spec, &pipeline)) != VK_SUCCESS)
        return fail("vkCreateComputePipelines", r);
    int status = print_statistics(device, pipeline);
    free(code);
    return status;
}
