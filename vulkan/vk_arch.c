/* vk_arch.c - a Vulkan device's architecture for the device JSON
 * (openinfer_impl/device_arch.h): limits, features and memory queried
 * from the device with the same calls the backend chooses it by, so
 * `openinfer devices --json N` lets a CI synthesize for a device it does
 * not have. What Vulkan does not say (L2 size, shared memory per SM, the
 * architecture's name) is left out. */

static const char *oi__vk_vendor_name(uint32_t id) {
    switch (id) {
    case 0x10DE: return "nvidia";
    case 0x1002: return "amd";
    case 0x8086: return "intel";
    case 0x13B5: return "arm";
    case 0x5143: return "qualcomm";
    case 0x106B: return "apple";
    case 0x1010: return "imgtec";
    case 0x10005: return "mesa";
    default: return NULL;
    }
}

static int oi__vk_arch_type(VkPhysicalDeviceType t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return OI__ARCH_TYPE_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return OI__ARCH_TYPE_INTEGRATED_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return OI__ARCH_TYPE_VIRTUAL_GPU;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return OI__ARCH_TYPE_CPU;
    default: return OI__ARCH_TYPE_OTHER;
    }
}

/* "NVIDIA 555.42.02", "llvmpipe Mesa 22.3.6": the driver's own words
 * (Vulkan 1.2's driver properties), else the packed version number. */
static char *oi__vk_driver_text(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, const VkPhysicalDeviceProperties *p) {
    if (p->apiVersion >= VK_API_VERSION_1_2) {
        VkPhysicalDeviceDriverProperties driver;
        memset(&driver, 0, sizeof driver);
        driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
        VkPhysicalDeviceProperties2 props2;
        memset(&props2, 0, sizeof props2);
        props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
        props2.pNext = &driver;
        fi->vkGetPhysicalDeviceProperties2(pd, &props2);
        driver.driverName[VK_MAX_DRIVER_NAME_SIZE - 1] = '\0';
        driver.driverInfo[VK_MAX_DRIVER_INFO_SIZE - 1] = '\0';
        if (driver.driverName[0])
            return oi__sprintf("%s%s%s", driver.driverName, driver.driverInfo[0] ? " " : "", driver.driverInfo);
    }
    return oi__sprintf("%u.%u.%u", VK_API_VERSION_MAJOR(p->driverVersion), VK_API_VERSION_MINOR(p->driverVersion),
                       VK_API_VERSION_PATCH(p->driverVersion));
}

/* Fills the fields a device states; the caller marks preferences. */
static oi_status oi__vk_fill_arch(const oi__vk_instance_fns *fi, VkPhysicalDevice pd, oi__device_arch *a) {
    oi__vk_device_caps caps;
    oi__vk_query_caps(fi, pd, &caps);
    const VkPhysicalDeviceProperties *p = &caps.props;
    const VkPhysicalDeviceLimits *l = &p->limits;
    a->device.type = oi__vk_arch_type(p->deviceType);
    a->device.api = OI__ARCH_API_VULKAN;
    const char *vendor = oi__vk_vendor_name(p->vendorID);
    a->device.vendor = vendor ? oi__strdup(vendor) : oi__sprintf("0x%04x", p->vendorID);
    const char *end = (const char *)memchr(p->deviceName, '\0', VK_MAX_PHYSICAL_DEVICE_NAME_SIZE);
    a->device.name = oi__strndup(p->deviceName, end ? (size_t)(end - p->deviceName) : VK_MAX_PHYSICAL_DEVICE_NAME_SIZE);
    a->device.architecture = oi__strdup("");
    a->device.driver = oi__vk_driver_text(fi, pd, p);
    if (!a->device.vendor || !a->device.name || !a->device.architecture || !a->device.driver)
        return OI_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < 3; i++)
        a->limits.max_workgroup_size[i] = l->maxComputeWorkGroupSize[i];
    a->limits.max_workgroup_invocations = l->maxComputeWorkGroupInvocations;
    a->limits.max_shared_memory_bytes = l->maxComputeSharedMemorySize;
    a->limits.max_push_constants_bytes = l->maxPushConstantsSize;
    a->limits.max_storage_buffer_range_bytes = l->maxStorageBufferRange;
    a->limits.subgroup_size = caps.subgroup_size;
    a->features.fp16 = caps.has_fp16_math;
    a->features.int8 = caps.has_int8_math;
    a->features.subgroup_ops = caps.has_subgroup_arith;
    a->features.cooperative_matrix = caps.has_coopmat;
    a->features.int64 = caps.has_int64;
    a->features.fp64 = caps.has_float64;
    uint64_t free_bytes = 0;
    oi__vk_memory_figures(fi, pd, &caps, &a->memory.global_bytes, &free_bytes);
    static const char *const marks[][2] = {
        {"device", "type"}, {"device", "api"}, {"device", "vendor"}, {"device", "name"}, {"device", "driver"},
        {"limits", "max_workgroup_size"}, {"limits", "max_workgroup_invocations"},
        {"limits", "max_shared_memory_bytes"}, {"limits", "max_push_constants_bytes"},
        {"limits", "max_storage_buffer_range_bytes"}, {"features", "fp16"}, {"features", "int8"},
        {"features", "subgroup_ops"}, {"features", "cooperative_matrix"}, {"features", "int64"},
        {"features", "fp64"}, {"memory", "global_bytes"}};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        oi__device_arch_mark(a, marks[i][0], marks[i][1]);
    if (caps.subgroup_size && !(caps.subgroup_size & (caps.subgroup_size - 1)))
        oi__device_arch_mark(a, "limits", "subgroup_size");
    for (uint32_t h = 0; a->memory.global_bytes == 0 && h < caps.memory.memoryHeapCount; h++)
        a->memory.global_bytes += caps.memory.memoryHeaps[h].size; /* no device-local heap: all of them */
    return OI_OK;
}

oi_status oi__vk_device_arch(int index, oi__device_arch *out) {
    memset(out, 0, sizeof *out);
    VkInstance instance = VK_NULL_HANDLE;
    VkPhysicalDevice *devices = NULL;
    oi__vk_instance_fns fns;
    memset(&fns, 0, sizeof fns);
    oi_status s = oi__vk_load(NULL);
    if (s == OI_OK)
        s = oi__vk_create_instance(&instance, NULL);
    if (s == OI_OK) {
        oi__vk_load_instance_fns(instance, &fns);
        s = oi__vk_list_devices(&fns, instance, &devices);
    }
    if (s == OI_OK && (index < 0 || index >= (int)arrlen(devices)))
        s = oi__fail(OI_ERROR_NOT_FOUND, "vulkan: no device %d (there are %d)", index, (int)arrlen(devices));
    if (s == OI_OK)
        s = oi__vk_fill_arch(&fns, devices[index], out);
    arrfree(devices);
    if (instance)
        fns.vkDestroyInstance(instance, NULL);
    return s;
}
