/* device_arch.h - the device architecture JSON of the seeds (device,
 * limits, features, memory, preferences; docs/device-json.md): what the
 * synthesizer reads to specialize a plan for a device it may not have.
 *
 * One table (OI__ARCH_FIELDS) lists every known field with its JSON place,
 * type, range and which targets must give it; the reader, the writer and
 * the checks are loops over it, so a new field is one row. Unknown keys are
 * kept (re-serialized, for tooling) and warned about, or refused in strict
 * mode. Errors name the JSON path and the reason:
 *   device JSON: $.limits.max_workgroup_size[2]: expected an integer in [1, 2147483647], found -4 */
#ifndef OPENINFER_DEVICE_ARCH_H
#define OPENINFER_DEVICE_ARCH_H

#include "internal.h"

typedef enum oi__arch_type {
    OI__ARCH_TYPE_GPU, OI__ARCH_TYPE_INTEGRATED_GPU, OI__ARCH_TYPE_VIRTUAL_GPU, OI__ARCH_TYPE_CPU, OI__ARCH_TYPE_OTHER
} oi__arch_type;
typedef enum oi__arch_api { OI__ARCH_API_VULKAN, OI__ARCH_API_C } oi__arch_api;
typedef enum oi__arch_precision { OI__ARCH_FP32, OI__ARCH_FP16, OI__ARCH_BF16 } oi__arch_precision;

/* A key the schema does not know, kept as found. */
typedef struct oi__arch_extra {
    char *section; /* "limits"...; "" for a top-level key */
    char *key;
    char *json;    /* its value, re-serialized compactly */
} oi__arch_extra;

/* Every field, with the schema's meaning; absent optional fields read as
 * 0/false/"" unless a default is listed (docs/device-json.md). */
typedef struct oi__device_arch {
    struct {
        int type;                /* oi__arch_type: gpu, integrated_gpu, virtual_gpu, cpu, other */
        int api;                 /* oi__arch_api: vulkan (GLSL + C host) or c (plain C) */
        char *vendor, *name, *architecture, *driver; /* "" when absent */
    } device;
    struct {
        uint64_t max_workgroup_size[3];     /* Vulkan: maxComputeWorkGroupSize */
        uint64_t max_workgroup_invocations; /* maxComputeWorkGroupInvocations */
        uint64_t max_shared_memory_bytes;   /* maxComputeSharedMemorySize */
        uint64_t max_push_constants_bytes;  /* maxPushConstantsSize */
        uint64_t max_storage_buffer_range_bytes;
        uint64_t subgroup_size;
        uint64_t cores, threads;            /* CPU: physical cores, hardware threads */
        uint64_t vector_bytes;              /* CPU: the widest SIMD register (16, 32, 64) */
    } limits;
    struct {
        bool fp16, int8, subgroup_ops, cooperative_matrix;
        bool int64, fp64;
        char **isa;                         /* stb array: "avx2", "avx512f", "neon"... */
    } features;
    struct {
        uint64_t global_bytes;              /* device memory (RAM for a CPU) */
        uint64_t shared_bytes_per_sm;
        uint64_t l1d_bytes, l2_bytes, l3_bytes, cache_line_bytes;
    } memory;
    struct {
        int default_precision;              /* oi__arch_precision; default fp32 */
        bool prefer_fusion;                 /* default true */
        bool prefer_persistent_kv;          /* default true */
        uint64_t max_kernel_ops;            /* default OI__ARCH_DEFAULT_MAX_KERNEL_OPS */
        uint64_t coopmat_block[3];          /* Vulkan: the cooperative-matrix matmul's BM, BN, BK; 0: from the limits */
        uint64_t coopmat_subgroups[3];      /* ... its subgroups along M and N, shared-memory buffers (1 or 2) */
    } preferences;
    uint64_t present;          /* bit i: field i of the table was given */
    oi__arch_extra *unknown;   /* stb array: unknown keys, in document order */
    char **warnings;           /* stb array: "$.limits.foo: unknown key (kept, not used)" */
} oi__device_arch;

#define OI__ARCH_DEFAULT_MAX_KERNEL_OPS 32

/* Parses and checks a device JSON into *out (zeroed first; free it with
 * oi__device_arch_free, also after a failure). Unknown keys are kept and
 * listed in out->warnings; with `strict` they are errors. OI_ERROR_FORMAT
 * with "device JSON: $.path: reason" on anything else that is wrong. */
oi_status oi__device_arch_parse(const char *json, oi__device_arch *out);
oi_status oi__device_arch_parse_mode(const char *json, bool strict, oi__device_arch *out);
void oi__device_arch_free(oi__device_arch *arch);
/* The JSON text of an architecture (the fields present, then the unknown
 * keys kept); parsing it gives the same architecture. Free with oi_free. */
char *oi__device_arch_to_json(const oi__device_arch *arch);
/* Marks a field as given, by its JSON place ("limits", "cores"); the
 * device queries use it for what they filled in. */
void oi__device_arch_mark(oi__device_arch *arch, const char *section, const char *key);

/* The architecture of device `index` of oi_backends_discover's list (cpu
 * and blas: the host CPU from /proc and /sys; vulkan: limits and features
 * queried from the device). Free with oi__device_arch_free. */
oi_status oi__device_arch_query(size_t index, oi__device_arch *out);
oi_status oi__device_arch_query_cpu(oi__device_arch *out);
/* vulkan_backend.c: the index-th Vulkan device (OI_ERROR_UNAVAILABLE
 * without OPENINFER_VULKAN). */
oi_status oi__vk_device_arch(int index, oi__device_arch *out);

#endif /* OPENINFER_DEVICE_ARCH_H */
