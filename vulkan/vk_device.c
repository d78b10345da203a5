/* vk_device.c - stage 1: the loader (volk), the instance, choosing a
 * physical device (discrete > integrated > virtual > CPU), the logical
 * device and its compute queue, or the user's handles; discovery. */

/* ---- errors ---- */
static const char *oi__vk_result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_INCOMPLETE: return "VK_INCOMPLETE";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return "VK_ERROR_FORMAT_NOT_SUPPORTED";
    case VK_ERROR_FRAGMENTED_POOL: return "VK_ERROR_FRAGMENTED_POOL";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VK_ERROR_UNKNOWN";
    }
}

/* "vulkan: vkCreateDevice failed: VK_ERROR_..." with a status that says
 * what kind of failure it is. */
static oi_status oi__vk_fail(const char *call, VkResult r) {
    oi_status status = OI_ERROR_RUNTIME;
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
        status = OI_ERROR_OUT_OF_MEMORY;
    else if (r == VK_ERROR_INITIALIZATION_FAILED || r == VK_ERROR_INCOMPATIBLE_DRIVER ||
             r == VK_ERROR_LAYER_NOT_PRESENT || r == VK_ERROR_EXTENSION_NOT_PRESENT)
        status = OI_ERROR_UNAVAILABLE;
    return oi__fail(status, "vulkan: %s failed: %s (%d)", call, oi__vk_result_name(r), (int)r);
}

/* ---- instance-level functions, per instance ----
 * volk's global instance-level pointers belong to the application (which
 * may use volk itself): the backend loads its own per instance and never
 * calls volkLoadInstance. */
static void oi__vk_load_instance_fns(VkInstance instance, oi__vk_instance_fns *fi) {
#define OI__VK_LOAD(name) fi->name = (PFN_##name)vkGetInstanceProcAddr(instance, #name)
    OI__VK_LOAD(vkDestroyInstance);
    OI__VK_LOAD(vkEnumeratePhysicalDevices);
    OI__VK_LOAD(vkGetPhysicalDeviceProperties);
    OI__VK_LOAD(vkGetPhysicalDeviceProperties2);
    OI__VK_LOAD(vkGetPhysicalDeviceFeatures2);
    OI__VK_LOAD(vkGetPhysicalDeviceMemoryProperties);
    OI__VK_LOAD(vkGetPhysicalDeviceMemoryProperties2);
    OI__VK_LOAD(vkGetPhysicalDeviceQueueFamilyProperties);
    OI__VK_LOAD(vkEnumerateDeviceExtensionProperties);
    OI__VK_LOAD(vkCreateDevice);
    OI__VK_LOAD(vkGetDeviceProcAddr);
    OI__VK_LOAD(vkCreateDebugUtilsMessengerEXT);
    OI__VK_LOAD(vkDestroyDebugUtilsMessengerEXT);
    OI__VK_LOAD(vkGetPhysicalDeviceCooperativeMatrixPropertiesNV);
    OI__VK_LOAD(vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR);
#undef OI__VK_LOAD
}

/* The device's functions; volk's table loader reads the global
 * vkGetDeviceProcAddr, which we lend it for the call. */
static void oi__vk_load_device_table(oi__vk_context *ctx) {
    PFN_vkGetDeviceProcAddr saved = vkGetDeviceProcAddr;
    vkGetDeviceProcAddr = ctx->vki.vkGetDeviceProcAddr;
    volkLoadDeviceTable(&ctx->vk, ctx->device);
    vkGetDeviceProcAddr = saved;
}

/* ---- the user's handles (oi_vulkan_use_device) ---- */
static bool oi__vk_injected_set;
static oi_vulkan_device_desc oi__vk_injected;

/* ---- loader and instance ---- */
/* The loader's global functions (volk), once per process unless the
 * application already did it; a user's vkGetInstanceProcAddr wins. */
static oi_status oi__vk_load(PFN_vkGetInstanceProcAddr get_proc) {
    if (get_proc) {
        volkInitializeCustom(get_proc);
        return OI_OK;
    }
    if (volkGetInstanceVersion() != 0)
        return OI_OK;
    if (volkInitialize() != VK_SUCCESS)
        return oi__fail(OI_ERROR_UNAVAILABLE, "no Vulkan loader (libvulkan.so.1 could not be loaded)");
    return OI_OK;
}

static bool oi__vk_layer_available(const char *name) {
    uint32_t count = 0;
    if (vkEnumerateInstanceLayerProperties(&count, NULL) != VK_SUCCESS || count == 0)
        return false;
    VkLayerProperties *layers = (VkLayerProperties *)oi__malloc(sizeof(VkLayerProperties) * count);
    bool found = false;
    if (layers && vkEnumerateInstanceLayerProperties(&count, layers) == VK_SUCCESS)
        for (uint32_t i = 0; i < count && !found; i++)
            found = strcmp(layers[i].layerName, name) == 0;
    oi__free(layers);
    return found;
}

/* OPENINFER_VULKAN_VALIDATION=1 turns on the Khronos validation layer. */
static bool oi__vk_validation_wanted(void) { return oi__env_read().vulkan_validation; }

static bool oi__vk_layer_has_extension(const char *layer, const char *name) {
    uint32_t count = 0;
    if (vkEnumerateInstanceExtensionProperties(layer, &count, NULL) != VK_SUCCESS || count == 0)
        return false;
    VkExtensionProperties *ext = (VkExtensionProperties *)oi__malloc(sizeof(VkExtensionProperties) * count);
    bool found = false;
    if (ext && vkEnumerateInstanceExtensionProperties(layer, &count, ext) == VK_SUCCESS)
        for (uint32_t i = 0; i < count && !found; i++)
            found = strcmp(ext[i].extensionName, name) == 0;
    oi__free(ext);
    return found;
}

/* Validation messages are counted (never printed: library code is quiet);
 * tests read the count and the last message. */
static VKAPI_ATTR VkBool32 VKAPI_CALL oi__vk_on_validation(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                          VkDebugUtilsMessageTypeFlagsEXT types,
                                                          const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
    oi__vk_context *ctx = (oi__vk_context *)user;
    (void)types;
    if (ctx && severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
        ctx->stats.validation_messages++;
        snprintf(ctx->last_validation_message, sizeof ctx->last_validation_message, "%s",
                 data && data->pMessage ? data->pMessage : "?");
    }
    return VK_FALSE;
}

/* `validation` (may be NULL) says whether the Khronos validation layer and
 * its debug-utils extension were turned on. */
static oi_status oi__vk_create_instance(VkInstance *out, bool *validation) {
    VkApplicationInfo app;
    memset(&app, 0, sizeof app);
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.pApplicationName = "openinfer";
    app.pEngineName = "openinfer";
    app.apiVersion = VK_API_VERSION_1_1;
    const char *layer = "VK_LAYER_KHRONOS_validation";
    VkInstanceCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    info.pApplicationInfo = &app;
    const char *debug_utils = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    bool with_validation = validation && oi__vk_validation_wanted() && oi__vk_layer_available(layer) &&
                           oi__vk_layer_has_extension(layer, debug_utils);
    if (with_validation) {
        info.enabledLayerCount = 1;
        info.ppEnabledLayerNames = &layer;
        info.enabledExtensionCount = 1;
        info.ppEnabledExtensionNames = &debug_utils;
    }
    if (validation)
        *validation = with_validation;
    VkResult r = vkCreateInstance(&info, NULL, out);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
        return oi__fail(OI_ERROR_UNAVAILABLE, "no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)");
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreateInstance", r);
    return OI_OK;
}

/* ---- physical devices ---- */
static int oi__vk_type_rank(VkPhysicalDeviceType type) {
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
    }
}

static const char *oi__vk_type_name(VkPhysicalDeviceType type) {
    switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
    }
}

/* A queue family with compute; one without graphics is preferred (it is
 * the dedicated compute queue on discrete GPUs). */
static bool oi__vk_compute_family(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, uint32_t *family) {
    uint32_t count = 0;
    fi->vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, NULL);
    if (count == 0)
        return false;
    VkQueueFamilyProperties *props = (VkQueueFamilyProperties *)oi__malloc(sizeof(VkQueueFamilyProperties) * count);
    if (!props)
        return false;
    fi->vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, props);
    int best = -1;
    for (uint32_t i = 0; i < count; i++) {
        if (!(props[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || props[i].queueCount == 0)
            continue;
        if (best < 0 || !(props[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
            best = (int)i;
        if (!(props[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
            break;
    }
    if (best >= 0)
        *family = (uint32_t)best;
    oi__free(props);
    return best >= 0;
}

static bool oi__vk_has_extension(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, const char *name) {
    uint32_t count = 0;
    if (fi->vkEnumerateDeviceExtensionProperties(pd, NULL, &count, NULL) != VK_SUCCESS || count == 0)
        return false;
    VkExtensionProperties *ext = (VkExtensionProperties *)oi__malloc(sizeof(VkExtensionProperties) * count);
    bool found = false;
    if (ext && fi->vkEnumerateDeviceExtensionProperties(pd, NULL, &count, ext) == VK_SUCCESS)
        for (uint32_t i = 0; i < count && !found; i++)
            found = strcmp(ext[i].extensionName, name) == 0;
    oi__free(ext);
    return found;
}

/* Valid bits of the family's timestamps (0: no timestamps). */
static uint32_t oi__vk_timestamp_bits(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, uint32_t family) {
    uint32_t count = 0, bits = 0;
    fi->vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, NULL);
    VkQueueFamilyProperties *families = (VkQueueFamilyProperties *)oi__malloc(sizeof(VkQueueFamilyProperties) * (count ? count : 1));
    if (families && family < count) {
        fi->vkGetPhysicalDeviceQueueFamilyProperties(pd, &count, families);
        bits = families[family].timestampValidBits;
    }
    oi__free(families);
    return bits;
}

/* What either kind of matmul_coopmat needs besides the extension: 16-bit
 * float math, 32-wide subgroups, 48 KiB of shared memory and the Vulkan
 * memory model (glslang's coopmat code declares it). */
static bool oi__vk_coopmat_basics(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, const oi__vk_device_caps *caps) {
    if (!caps->has_fp16_math || caps->subgroup_size != 32 || caps->props.limits.maxComputeSharedMemorySize < 49152 ||
        !oi__vk_has_extension(fi, pd, VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME) ||
        !oi__vk_has_extension(fi, pd, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME))
        return false;
    VkPhysicalDeviceVulkanMemoryModelFeatures model;
    memset(&model, 0, sizeof model);
    model.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES;
    VkPhysicalDeviceFeatures2 features;
    memset(&features, 0, sizeof features);
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &model;
    fi->vkGetPhysicalDeviceFeatures2(pd, &features);
    return model.vulkanMemoryModel != 0;
}

/* Whether the extension's cooperativeMatrix feature is on offer; `coop`
 * is its features struct, with sType set. */
static bool oi__vk_coopmat_feature(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, void *coop, const VkBool32 *enabled) {
    VkPhysicalDeviceFeatures2 features;
    memset(&features, 0, sizeof features);
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = coop;
    fi->vkGetPhysicalDeviceFeatures2(pd, &features);
    return *enabled != 0;
}

static bool oi__vk_coopmat_shape_ok(uint32_t m, uint32_t n, uint32_t k, VkComponentTypeNV a, VkComponentTypeNV b,
                                    VkComponentTypeNV c, VkComponentTypeNV d, VkScopeNV scope) {
    return m == 16 && n == 16 && k == 16 && a == VK_COMPONENT_TYPE_FLOAT16_NV && b == VK_COMPONENT_TYPE_FLOAT16_NV &&
           c == VK_COMPONENT_TYPE_FLOAT32_NV && d == VK_COMPONENT_TYPE_FLOAT32_NV && scope == VK_SCOPE_SUBGROUP_NV;
}

/* VK_NV_cooperative_matrix with 16x16x16 f16 x f16 -> f32 at subgroup scope. */
static bool oi__vk_coopmat_nv_usable(const oi__vk_instance_fns *fi, VkPhysicalDevice pd) {
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop;
    memset(&coop, 0, sizeof coop);
    coop.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    uint32_t count = 0;
    if (!fi->vkGetPhysicalDeviceCooperativeMatrixPropertiesNV ||
        !oi__vk_has_extension(fi, pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) ||
        !oi__vk_coopmat_feature(fi, pd, &coop, &coop.cooperativeMatrix) ||
        fi->vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &count, NULL) != VK_SUCCESS || count == 0)
        return false;
    VkCooperativeMatrixPropertiesNV *props = (VkCooperativeMatrixPropertiesNV *)oi__calloc(count, sizeof *props);
    bool found = false;
    if (props) {
        for (uint32_t i = 0; i < count; i++)
            props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV;
        if (fi->vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &count, props) == VK_SUCCESS)
            for (uint32_t i = 0; i < count && !found; i++)
                found = oi__vk_coopmat_shape_ok(props[i].MSize, props[i].NSize, props[i].KSize, props[i].AType,
                                                props[i].BType, props[i].CType, props[i].DType, props[i].scope);
    }
    oi__free(props);
    return found;
}

/* The same shape through VK_KHR_cooperative_matrix. */
static bool oi__vk_coopmat_khr_usable(const oi__vk_instance_fns *fi, VkPhysicalDevice pd) {
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop;
    memset(&coop, 0, sizeof coop);
    coop.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
    uint32_t count = 0;
    if (!fi->vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR ||
        !oi__vk_has_extension(fi, pd, VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME) ||
        !oi__vk_coopmat_feature(fi, pd, &coop, &coop.cooperativeMatrix) ||
        fi->vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &count, NULL) != VK_SUCCESS || count == 0)
        return false;
    VkCooperativeMatrixPropertiesKHR *props = (VkCooperativeMatrixPropertiesKHR *)oi__calloc(count, sizeof *props);
    bool found = false;
    if (props) {
        for (uint32_t i = 0; i < count; i++)
            props[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
        if (fi->vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR(pd, &count, props) == VK_SUCCESS)
            for (uint32_t i = 0; i < count && !found; i++)
                found = oi__vk_coopmat_shape_ok(props[i].MSize, props[i].NSize, props[i].KSize, props[i].AType,
                                                props[i].BType, props[i].CType, props[i].ResultType, props[i].scope);
    }
    oi__free(props);
    return found;
}

/* Which matmul_coopmat runs here, if any (has_coopmat_f16, coopmat_khr).
 * OPENINFER_VULKAN_COOPMAT=0 turns both off and =nv keeps to the NV
 * extension (A/B comparisons). */
static void oi__vk_coopmat_caps(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, oi__vk_device_caps *caps) {
    oi__env_coopmat env = oi__env_read().vulkan_coopmat;
    if (env == OI__ENV_COOPMAT_OFF || !oi__vk_coopmat_basics(fi, pd, caps))
        return;
    caps->coopmat_khr = env != OI__ENV_COOPMAT_NV && oi__vk_coopmat_khr_usable(fi, pd);
    caps->has_coopmat_f16 = caps->coopmat_khr || oi__vk_coopmat_nv_usable(fi, pd);
}

static void oi__vk_query_caps(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, oi__vk_device_caps *caps) {
    memset(caps, 0, sizeof *caps);
    fi->vkGetPhysicalDeviceProperties(pd, &caps->props);
    fi->vkGetPhysicalDeviceMemoryProperties(pd, &caps->memory);
    VkPhysicalDeviceShaderFloat16Int8Features f16;
    memset(&f16, 0, sizeof f16);
    f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    VkPhysicalDeviceFeatures2 features;
    memset(&features, 0, sizeof features);
    features.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    features.pNext = &f16;
    fi->vkGetPhysicalDeviceFeatures2(pd, &features);
    caps->has_int64 = features.features.shaderInt64 != 0;
    caps->has_float64 = features.features.shaderFloat64 != 0;
    caps->has_wide = caps->has_int64 && caps->has_float64;
    caps->has_fp16_math = f16.shaderFloat16 != 0;
    caps->has_int8_math = f16.shaderInt8 != 0;
    VkPhysicalDeviceSubgroupProperties subgroup;
    memset(&subgroup, 0, sizeof subgroup);
    subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    VkPhysicalDeviceProperties2 props2;
    memset(&props2, 0, sizeof props2);
    props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    props2.pNext = &subgroup;
    fi->vkGetPhysicalDeviceProperties2(pd, &props2);
    caps->has_subgroup_arith = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                               (subgroup.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);
    caps->subgroup_size = subgroup.subgroupSize;
    caps->has_coopmat = oi__vk_has_extension(fi, pd, "VK_KHR_cooperative_matrix") ||
                        oi__vk_has_extension(fi, pd, "VK_NV_cooperative_matrix");
    oi__vk_coopmat_caps(fi, pd, caps);
    caps->has_memory_budget = oi__vk_has_extension(fi, pd, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
    caps->queue_family = 0;
    oi__vk_compute_family(fi, pd, &caps->queue_family);
    caps->timestamp_bits = oi__vk_timestamp_bits(fi, pd, caps->queue_family);
}

/* Usable devices (Vulkan 1.1, a compute queue), best first; stable among
 * equals so an index means the same device from call to call. */
static oi_status oi__vk_list_devices(const oi__vk_instance_fns *fi, VkInstance instance, VkPhysicalDevice **out) {
    *out = NULL;
    uint32_t count = 0;
    VkResult r = fi->vkEnumeratePhysicalDevices(instance, &count, NULL);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkEnumeratePhysicalDevices", r);
    if (count == 0)
        return oi__fail(OI_ERROR_UNAVAILABLE, "no Vulkan device");
    VkPhysicalDevice *all = (VkPhysicalDevice *)oi__malloc(sizeof(VkPhysicalDevice) * count);
    if (!all)
        return OI_ERROR_OUT_OF_MEMORY;
    r = fi->vkEnumeratePhysicalDevices(instance, &count, all);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
        oi__free(all);
        return oi__vk_fail("vkEnumeratePhysicalDevices", r);
    }
    for (int rank = 0; rank <= 4; rank++) {
        for (uint32_t i = 0; i < count; i++) {
            VkPhysicalDeviceProperties props;
            uint32_t family;
            fi->vkGetPhysicalDeviceProperties(all[i], &props);
            if (oi__vk_type_rank(props.deviceType) == rank && props.apiVersion >= VK_API_VERSION_1_1 &&
                oi__vk_compute_family(fi, all[i], &family) && !arrput(*out, all[i])) {
                oi__free(all);
                arrfree(*out);
                return OI_ERROR_OUT_OF_MEMORY;
            }
        }
    }
    oi__free(all);
    if (arrlen(*out) == 0)
        return oi__fail(OI_ERROR_UNAVAILABLE, "no Vulkan device with Vulkan 1.1 and a compute queue");
    return OI_OK;
}

/* Device-local heap sizes, and what is left of them when the driver says. */
static void oi__vk_memory_figures(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, const oi__vk_device_caps *caps, uint64_t *total, uint64_t *free_bytes) {
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget;
    memset(&budget, 0, sizeof budget);
    budget.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
    VkPhysicalDeviceMemoryProperties2 props;
    memset(&props, 0, sizeof props);
    props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2;
    if (caps->has_memory_budget)
        props.pNext = &budget;
    fi->vkGetPhysicalDeviceMemoryProperties2(pd, &props);
    *total = 0;
    *free_bytes = 0;
    for (uint32_t h = 0; h < props.memoryProperties.memoryHeapCount; h++) {
        if (!(props.memoryProperties.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT))
            continue;
        uint64_t size = props.memoryProperties.memoryHeaps[h].size;
        *total += size;
        if (caps->has_memory_budget)
            *free_bytes += budget.heapBudget[h] > budget.heapUsage[h] ? budget.heapBudget[h] - budget.heapUsage[h] : 0;
        else
            *free_bytes += size; /* unknown: the driver has no VK_EXT_memory_budget */
    }
}

/* ---- discovery ---- */
#define OI__VK_MAX_LISTED 16
static char oi__vk_listed_names[OI__VK_MAX_LISTED][VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
static char oi__vk_listed_features[OI__VK_MAX_LISTED][96];
static char oi__vk_unavailable_reason[256];

static void oi__vk_feature_text(const oi__vk_device_caps *caps, char *text, size_t size) {
    snprintf(text, size, "%s%s%s%s%s%s", caps->has_fp16_math ? "fp16 " : "", caps->has_int8_math ? "int8 " : "",
             caps->has_int64 ? "int64 " : "", caps->has_float64 ? "fp64 " : "",
             caps->has_subgroup_arith ? "subgroup " : "",
             caps->coopmat_khr       ? "coopmat(f16 matmul, KHR) "
             : caps->has_coopmat_f16 ? "coopmat(f16 matmul, NV) "
             : caps->has_coopmat     ? "coopmat "
                                     : "");
    size_t len = strlen(text);
    if (len && text[len - 1] == ' ')
        text[len - 1] = '\0';
}

static void oi__vk_discover_unavailable(oi_backend_info *out, size_t max, size_t *count, const char *reason) {
    snprintf(oi__vk_unavailable_reason, sizeof oi__vk_unavailable_reason, "%s", reason);
    if (*count < max) {
        oi_backend_info *info = &out[*count];
        memset(info, 0, sizeof *info);
        info->name = "vulkan";
        info->device_name = "";
        info->device_type = "";
        info->available = false;
        info->unavailable_reason = oi__vk_unavailable_reason;
        info->features = "";
    }
    (*count)++;
}

static void oi__vk_discover(oi_backend_info *out, size_t max, size_t *count) {
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice *devices = NULL;
    oi__vk_instance_fns fns;
    const oi__vk_instance_fns *fi = &fns;
    memset(&fns, 0, sizeof fns);
    oi_status s = oi__vk_load(NULL);
    if (s == OI_OK)
        s = oi__vk_create_instance(&instance, NULL);
    if (s == OI_OK) {
        oi__vk_load_instance_fns(instance, &fns);
        s = oi__vk_list_devices(fi, instance, &devices);
    }
    if (s != OI_OK) {
        oi__vk_discover_unavailable(out, max, count, oi_last_error());
        if (instance)
            fns.vkDestroyInstance(instance, NULL);
        oi_clear_error();
        return;
    }
    for (ptrdiff_t i = 0; i < arrlen(devices) && i < OI__VK_MAX_LISTED; i++) {
        if (*count < max) {
            oi__vk_device_caps caps;
            oi__vk_query_caps(fi, devices[i], &caps);
            oi_backend_info *info = &out[*count];
            memset(info, 0, sizeof *info);
            snprintf(oi__vk_listed_names[i], sizeof oi__vk_listed_names[i], "%s", caps.props.deviceName);
            oi__vk_feature_text(&caps, oi__vk_listed_features[i], sizeof oi__vk_listed_features[i]);
            info->name = "vulkan";
            info->device_name = oi__vk_listed_names[i];
            info->device_type = oi__vk_type_name(caps.props.deviceType);
            info->available = true;
            info->unavailable_reason = "";
            info->features = oi__vk_listed_features[i];
            oi__vk_memory_figures(fi, devices[i], &caps, &info->total_memory, &info->free_memory);
        }
        (*count)++;
    }
    arrfree(devices);
    fns.vkDestroyInstance(instance, NULL);
}

/* ---- the context's device ---- */
static oi_status oi__vk_open_own_device(oi__vk_context *ctx, int device_index) {
    oi_status s = oi__vk_load(NULL);
    bool validation = false;
    if (s == OI_OK)
        s = oi__vk_create_instance(&ctx->instance, &validation);
    if (s == OI_OK)
        oi__vk_load_instance_fns(ctx->instance, &ctx->vki);
    if (s == OI_OK && validation && ctx->vki.vkCreateDebugUtilsMessengerEXT) {
        VkDebugUtilsMessengerCreateInfoEXT info;
        memset(&info, 0, sizeof info);
        info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
        info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
        info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
        info.pfnUserCallback = oi__vk_on_validation;
        info.pUserData = ctx;
        VkResult r = ctx->vki.vkCreateDebugUtilsMessengerEXT(ctx->instance, &info, NULL, &ctx->messenger);
        if (r != VK_SUCCESS)
            return oi__vk_fail("vkCreateDebugUtilsMessengerEXT", r);
    }
    VkPhysicalDevice *devices = NULL;
    if (s == OI_OK)
        s = oi__vk_list_devices(&ctx->vki, ctx->instance, &devices);
    if (s != OI_OK)
        return s;
    int index = device_index < 0 ? 0 : device_index;
    if (index >= (int)arrlen(devices)) {
        int n = (int)arrlen(devices);
        arrfree(devices);
        return oi__fail(OI_ERROR_NOT_FOUND, "vulkan: no device %d (there %s %d: see `openinfer devices`)", index,
                        n == 1 ? "is" : "are", n);
    }
    ctx->physical = devices[index];
    arrfree(devices);
    oi__vk_query_caps(&ctx->vki, ctx->physical, &ctx->caps);

    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info;
    memset(&queue_info, 0, sizeof queue_info);
    queue_info.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    queue_info.queueFamilyIndex = ctx->caps.queue_family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    const char *extensions[4];
    uint32_t n_extensions = 0;
    if (ctx->caps.has_memory_budget)
        extensions[n_extensions++] = VK_EXT_MEMORY_BUDGET_EXTENSION_NAME;
    /* the tensor-core matmul: its extension and the features its SPIR-V declares */
    VkPhysicalDeviceShaderFloat16Int8Features f16;
    memset(&f16, 0, sizeof f16);
    f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    f16.shaderFloat16 = VK_TRUE;
    VkPhysicalDeviceVulkanMemoryModelFeatures model;
    memset(&model, 0, sizeof model);
    model.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES;
    model.vulkanMemoryModel = VK_TRUE;
    model.pNext = &f16;
    VkPhysicalDeviceCooperativeMatrixFeaturesNV coop_nv;
    memset(&coop_nv, 0, sizeof coop_nv);
    coop_nv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
    coop_nv.cooperativeMatrix = VK_TRUE;
    coop_nv.pNext = &model;
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR coop_khr;
    memset(&coop_khr, 0, sizeof coop_khr);
    coop_khr.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR;
    coop_khr.cooperativeMatrix = VK_TRUE;
    coop_khr.pNext = &model;
    void *coop = ctx->caps.coopmat_khr ? (void *)&coop_khr : (void *)&coop_nv;
    if (ctx->caps.has_coopmat_f16) {
        extensions[n_extensions++] =
            ctx->caps.coopmat_khr ? VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME : VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
        extensions[n_extensions++] = VK_KHR_VULKAN_MEMORY_MODEL_EXTENSION_NAME;
        extensions[n_extensions++] = VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME;
    }
    /* eltwise_wide.comp's 64-bit integers and doubles */
    VkPhysicalDeviceFeatures core;
    memset(&core, 0, sizeof core);
    core.shaderInt64 = ctx->caps.has_wide;
    core.shaderFloat64 = ctx->caps.has_wide;
    VkDeviceCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    info.pNext = ctx->caps.has_coopmat_f16 ? coop : NULL;
    info.pEnabledFeatures = &core;
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue_info;
    info.enabledExtensionCount = n_extensions;
    info.ppEnabledExtensionNames = extensions;
    VkResult r = ctx->vki.vkCreateDevice(ctx->physical, &info, NULL, &ctx->device);
    if (r != VK_SUCCESS)
        return oi__vk_fail("vkCreateDevice", r);
    ctx->owns_device = true;
    oi__vk_load_device_table(ctx);
    ctx->vk.vkGetDeviceQueue(ctx->device, ctx->caps.queue_family, 0, &ctx->queue);
    return OI_OK;
}

static oi_status oi__vk_open_user_device(oi__vk_context *ctx, const oi_vulkan_device_desc *d) {
    if (!d->instance || !d->physical_device || !d->device || !d->queue)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "oi_vulkan_use_device: instance, physical_device, device and queue are all needed");
    oi_status s = oi__vk_load((PFN_vkGetInstanceProcAddr)d->get_instance_proc_addr);
    if (s != OI_OK)
        return s;
    ctx->instance = (VkInstance)d->instance;
    ctx->physical = (VkPhysicalDevice)d->physical_device;
    ctx->device = (VkDevice)d->device;
    ctx->queue = (VkQueue)d->queue;
    ctx->owns_device = false;
    oi__vk_load_instance_fns(ctx->instance, &ctx->vki);
    oi__vk_query_caps(&ctx->vki, ctx->physical, &ctx->caps);
    /* the application's device may not have these features enabled */
    ctx->caps.has_coopmat_f16 = ctx->caps.coopmat_khr = false;
    ctx->caps.has_wide = false;
    ctx->caps.queue_family = d->queue_family_index;
    ctx->caps.timestamp_bits = oi__vk_timestamp_bits(&ctx->vki, ctx->physical, d->queue_family_index);
    oi__vk_load_device_table(ctx);
    return OI_OK;
}
