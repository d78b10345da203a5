/* backend.c - the backend registry: the CPU reference backend, device
 * discovery and the choice of a backend for a simulator.
 *
 * Every backend is an oi__backend vtable (internal.h). The CPU backend wraps
 * the op table's CPU kernels and supports every op; another backend (Vulkan,
 * BLAS) may support fewer, and the executor runs the rest on the CPU
 * (executor.c). Discovery lists cpu, then blas, then the Vulkan devices. */
#include "internal.h"
#include "simulator.h"

#if defined(__linux__) || defined(__APPLE__) || defined(__unix__)
#include <unistd.h>
#endif

/* ---- the CPU backend ---- */
static int oi__cpu_ctx_token; /* the CPU backend has no state: any non-NULL context */

void oi__host_memory(oi_backend_info *info) {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        info->total_memory = (uint64_t)pages * (uint64_t)page;
#endif
#if defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
    long avail = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (avail > 0 && psize > 0)
        info->free_memory = (uint64_t)avail * (uint64_t)psize;
#endif
    (void)info;
}

static void oi__cpu_discover(oi_backend_info *out, size_t max, size_t *count) {
    if (*count < max) {
        oi_backend_info *info = &out[*count];
        memset(info, 0, sizeof *info);
        info->name = "cpu";
        info->device_name = "host CPU (reference kernels)";
        info->device_type = "cpu";
        info->available = true;
        info->unavailable_reason = "";
        info->features = "all ops, all dtypes";
        oi__host_memory(info);
    }
    (*count)++;
}

static void *oi__cpu_create(int device_index) {
    if (device_index != 0) {
        oi__fail(OI_ERROR_UNAVAILABLE, "cpu backend: there is one CPU device (index 0), not %d", device_index);
        return NULL;
    }
    return &oi__cpu_ctx_token;
}

static void oi__cpu_destroy(void *ctx) { (void)ctx; }

static bool oi__cpu_supports_op(void *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs, const oi__op_sig *inputs,
                                size_t n_inputs, const oi__op_sig *out) {
    (void)ctx, (void)op, (void)attrs, (void)n_attrs, (void)inputs, (void)n_inputs, (void)out;
    return true;
}

static oi_status oi__cpu_run_op(void *ctx, oi_op op, const oi__attr *attrs, size_t n_attrs,
                                const oi__tensor *const *inputs, size_t n_inputs, oi__tensor *out) {
    (void)ctx;
    return oi__op_run_cpu(op, attrs, n_attrs, inputs, n_inputs, out);
}

const oi__backend oi__cpu_backend = {
    "cpu", oi__cpu_discover, oi__cpu_create, oi__cpu_destroy, oi__cpu_supports_op, oi__cpu_run_op, NULL, NULL, NULL, NULL, NULL,
    (1u << OI_DTYPE_F16) | (1u << OI_DTYPE_BF16), /* the executor widens and narrows around the f32 kernels */
    NULL,
};

/* ---- discovery ---- */
#if !defined(OPENINFER_BLAS) || !defined(OPENINFER_VULKAN)
/* The entry of a backend this build does not contain. */
static void oi__discover_absent(oi_backend_info *out, size_t max, size_t *count, const char *name, const char *why) {
    if (*count < max) {
        oi_backend_info *info = &out[*count];
        memset(info, 0, sizeof *info);
        info->name = name;
        info->device_name = "";
        info->device_type = "";
        info->available = false;
        info->unavailable_reason = why;
        info->features = "";
    }
    (*count)++;
}
#endif

/* The BLAS entry comes before the Vulkan devices, whose number varies, so
 * that it keeps its place in the list. */
size_t oi_backends_discover(oi_backend_info *out, size_t max) {
    size_t count = 0;
    oi__cpu_backend.discover(out, max, &count);
#ifdef OPENINFER_BLAS
    oi__blas_backend.discover(out, max, &count);
#else
    oi__discover_absent(out, max, &count, "blas", "built without BLAS (compile with OPENINFER_BLAS and link OpenBLAS)");
#endif
#ifdef OPENINFER_VULKAN
    oi__vulkan_backend.discover(out, max, &count);
#else
    oi__discover_absent(out, max, &count, "vulkan", "built without Vulkan (compile with OPENINFER_VULKAN)");
#endif
    return count;
}

/* ---- selection ---- */
#ifdef OPENINFER_VULKAN
/* The best Vulkan device for AUTO: a discrete GPU, else an integrated one;
 * -1 when only software (CPU-type) devices or none exist. */
static int oi__vulkan_pick_auto(void) {
    oi_backend_info infos[16];
    size_t count = 0;
    oi__vulkan_backend.discover(infos, 16, &count);
    if (count > 16)
        count = 16;
    const char *order[2] = {"discrete-gpu", "integrated-gpu"};
    for (int o = 0; o < 2; o++)
        for (size_t i = 0; i < count; i++)
            if (infos[i].available && infos[i].device_type && strcmp(infos[i].device_type, order[o]) == 0)
                return (int)i;
    return -1;
}
#endif

static oi_status oi__backend_create(const oi__backend *be, int index, const oi__backend **backend, void **ctx,
                                    int *device_index) {
    void *c = be->create(index);
    if (!c) {
        oi__error_prefix("%s backend (device %d) is unavailable", be->name, index);
        return OI_ERROR_UNAVAILABLE;
    }
    *backend = be;
    *ctx = c;
    *device_index = index;
    return OI_OK;
}

/* OPENINFER_BACKEND=cpu | blas | vulkan | vulkan:1 */
static oi_status oi__backend_from_env(const char *spec, oi_device *device, int *index) {
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    *index = -1;
    if (colon) {
        char *end = NULL;
        long v = strtol(colon + 1, &end, 10);
        if (!end || *end || v < 0)
            return oi__fail(OI_ERROR_INVALID_ARGUMENT, "OPENINFER_BACKEND=%s: the device index after ':' must be a number >= 0",
                            spec);
        *index = (int)v;
    }
    if (len == 3 && strncmp(spec, "cpu", 3) == 0)
        *device = OI_DEVICE_CPU;
    else if (len == 6 && strncmp(spec, "vulkan", 6) == 0)
        *device = OI_DEVICE_VULKAN;
    else if (len == 4 && strncmp(spec, "blas", 4) == 0)
        *device = OI_DEVICE_BLAS;
    else
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "OPENINFER_BACKEND=%s: expected cpu, blas, vulkan or vulkan:INDEX",
                        spec);
    return OI_OK;
}

oi_status oi__backend_select(oi_device device, const oi__backend **backend, void **ctx, int *device_index) {
    int index = -1;
    const char *env = oi__env_read().backend;
    if (device == OI_DEVICE_AUTO && env) {
        oi_status st = oi__backend_from_env(env, &device, &index);
        if (st != OI_OK)
            return st;
    }
    switch (device) {
    case OI_DEVICE_CPU: return oi__backend_create(&oi__cpu_backend, index < 0 ? 0 : index, backend, ctx, device_index);
    case OI_DEVICE_VULKAN:
#ifdef OPENINFER_VULKAN
        return oi__backend_create(&oi__vulkan_backend, index < 0 ? 0 : index, backend, ctx, device_index);
#else
        return oi__fail(OI_ERROR_UNAVAILABLE, "Vulkan backend unavailable: this build has no Vulkan support (compile with OPENINFER_VULKAN)");
#endif
    case OI_DEVICE_BLAS:
#ifdef OPENINFER_BLAS
        return oi__backend_create(&oi__blas_backend, index < 0 ? 0 : index, backend, ctx, device_index);
#else
        return oi__fail(OI_ERROR_UNAVAILABLE,
                        "BLAS backend unavailable: this build has no BLAS support (compile with OPENINFER_BLAS and "
                        "link OpenBLAS; meson: -Dblas=enabled)");
#endif
    /* AUTO never picks blas: it is a different summation order of the same
     * CPU, chosen by name (OI_DEVICE_BLAS, OPENINFER_BACKEND=blas) */
    case OI_DEVICE_AUTO: {
#ifdef OPENINFER_VULKAN
        int best = oi__vulkan_pick_auto();
        if (best >= 0 && oi__backend_create(&oi__vulkan_backend, best, backend, ctx, device_index) == OI_OK)
            return OI_OK;
        oi_clear_error(); /* no usable GPU: the CPU is the answer, not an error */
#endif
        return oi__backend_create(&oi__cpu_backend, 0, backend, ctx, device_index);
    }
    }
    return oi__fail(OI_ERROR_INVALID_ARGUMENT, "unknown device %d", (int)device);
}

/* ---- host/device coherence of one storage ---- */
oi_status oi__storage_sync_host(oi__storage *s) {
    if (!s || !s->host_stale || !s->device_owner || !s->device_owner->to_host)
        return OI_OK;
    oi_status st = s->device_owner->to_host(s->device_ctx, s);
    if (st == OI_OK)
        s->host_stale = false;
    return st;
}

oi_status oi__storage_host_write(oi__storage *s) {
    oi_status st = oi__storage_sync_host(s);
    if (st != OI_OK || !s || !s->device_owner)
        return st;
    if (s->device_owner->release)
        s->device_owner->release(s->device_ctx, s);
    s->device = NULL;
    s->device_owner = NULL;
    s->device_ctx = NULL;
    s->host_stale = false;
    return OI_OK;
}
