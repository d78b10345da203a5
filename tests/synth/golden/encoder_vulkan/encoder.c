/* encoder.c - graph "encoder", synthesized by OpenInfer 0.1.0 for Vulkan (any Vulkan 1.1 device):
 * 17 GLSL kernels (encoder_kK.comp, compiled by the Makefile into encoder_kK.spv.h and
 * embedded below) and the host code that records the step once and replays it.
 * Codegen read from the device: workgroups of 256 invocations, subgroup
 * reductions off, storage f32 (cooperative matrices are not
 * emitted yet).
 * Named sizes and the model's tensor offsets are specialized. */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "encoder.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define OI_HAVE_MMAP 1
#endif

#define encoder_FINGERPRINT 0x4c58df09c3429a01ull /* FNV-1a of the model's header and tables */
#define encoder_HEADER_BYTES 2464ull   /* where the model's data section starts */
#define encoder_MODEL_BYTES 14198176ull    /* the model file, uploaded once at open */
#define encoder_STATE_DEVICE_BYTES encoder_STATE_BYTES

#ifdef __cplusplus
#define OI_THREAD_LOCAL thread_local
#else
#define OI_THREAD_LOCAL _Thread_local
#endif

static OI_THREAD_LOCAL char encoder_error_text[512];

const char *encoder_last_error(void) { return encoder_error_text; }

static int encoder_fail(int code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(encoder_error_text, sizeof encoder_error_text, fmt, args);
    va_end(args);
    return code;
}

#define OI_VK_FAIL(...) encoder_fail(encoder_ERROR_RUNTIME, __VA_ARGS__)
#include "oi_vk_runtime.h"

/* The kernels' SPIR-V (glslc -mfmt=c, by the Makefile) */
static const uint32_t encoder_k0_spv[] =
#include "encoder_k0.spv.h"
    ;
static const uint32_t encoder_k1_spv[] =
#include "encoder_k1.spv.h"
    ;
static const uint32_t encoder_k2_spv[] =
#include "encoder_k2.spv.h"
    ;
static const uint32_t encoder_k3_spv[] =
#include "encoder_k3.spv.h"
    ;
static const uint32_t encoder_k4_spv[] =
#include "encoder_k4.spv.h"
    ;
static const uint32_t encoder_k5_spv[] =
#include "encoder_k5.spv.h"
    ;
static const uint32_t encoder_k6_spv[] =
#include "encoder_k6.spv.h"
    ;
static const uint32_t encoder_k7_spv[] =
#include "encoder_k7.spv.h"
    ;
static const uint32_t encoder_k8_spv[] =
#include "encoder_k8.spv.h"
    ;
static const uint32_t encoder_k9_spv[] =
#include "encoder_k9.spv.h"
    ;
static const uint32_t encoder_k10_spv[] =
#include "encoder_k10.spv.h"
    ;
static const uint32_t encoder_k11_spv[] =
#include "encoder_k11.spv.h"
    ;
static const uint32_t encoder_k12_spv[] =
#include "encoder_k12.spv.h"
    ;
static const uint32_t encoder_k13_spv[] =
#include "encoder_k13.spv.h"
    ;
static const uint32_t encoder_k14_spv[] =
#include "encoder_k14.spv.h"
    ;
static const uint32_t encoder_k15_spv[] =
#include "encoder_k15.spv.h"
    ;
static const uint32_t encoder_k16_spv[] =
#include "encoder_k16.spv.h"
    ;
static const struct {
    const uint32_t *code;
    size_t bytes;
} encoder_kernels[] = {
    {encoder_k0_spv, sizeof encoder_k0_spv},
    {encoder_k1_spv, sizeof encoder_k1_spv},
    {encoder_k2_spv, sizeof encoder_k2_spv},
    {encoder_k3_spv, sizeof encoder_k3_spv},
    {encoder_k4_spv, sizeof encoder_k4_spv},
    {encoder_k5_spv, sizeof encoder_k5_spv},
    {encoder_k6_spv, sizeof encoder_k6_spv},
    {encoder_k7_spv, sizeof encoder_k7_spv},
    {encoder_k8_spv, sizeof encoder_k8_spv},
    {encoder_k9_spv, sizeof encoder_k9_spv},
    {encoder_k10_spv, sizeof encoder_k10_spv},
    {encoder_k11_spv, sizeof encoder_k11_spv},
    {encoder_k12_spv, sizeof encoder_k12_spv},
    {encoder_k13_spv, sizeof encoder_k13_spv},
    {encoder_k14_spv, sizeof encoder_k14_spv},
    {encoder_k15_spv, sizeof encoder_k15_spv},
    {encoder_k16_spv, sizeof encoder_k16_spv},
};
#define encoder_N_KERNELS 17
#define encoder_N_UPLOADS 1 /* variables the host sets before a step */

static const uint32_t encoder_Wq_at[] = {1480168u, 3254632u}; /* Wq(l): the model's enc.{l}.wq, in floats */
static const uint32_t encoder_bq_at[] = {3304u, 1777768u}; /* bq(l): the model's enc.{l}.bq, in floats */
static const uint32_t encoder_Wk_at[] = {1185256u, 2959720u}; /* Wk(l): the model's enc.{l}.wk, in floats */
static const uint32_t encoder_bk_at[] = {2536u, 1777000u}; /* bk(l): the model's enc.{l}.bk, in floats */
static const uint32_t encoder_Wv_at[] = {1627624u, 3402088u}; /* Wv(l): the model's enc.{l}.wv, in floats */
static const uint32_t encoder_bv_at[] = {3688u, 1778152u}; /* bv(l): the model's enc.{l}.bv, in floats */
static const uint32_t encoder_Wo_at[] = {1332712u, 3107176u}; /* Wo(l): the model's enc.{l}.wo, in floats */
static const uint32_t encoder_bo_at[] = {2920u, 1777384u}; /* bo(l): the model's enc.{l}.bo, in floats */
static const uint32_t encoder_W1_at[] = {5608u, 1780072u}; /* W1(l): the model's enc.{l}.w1, in floats */
static const uint32_t encoder_b1_at[] = {616u, 1775080u}; /* b1(l): the model's enc.{l}.b1, in floats */
static const uint32_t encoder_W2_at[] = {595432u, 2369896u}; /* W2(l): the model's enc.{l}.w2, in floats */
static const uint32_t encoder_b2_at[] = {2152u, 1776616u}; /* b2(l): the model's enc.{l}.b2, in floats */
static const uint32_t encoder_g1_at[] = {4456u, 1778920u}; /* g1(l): the model's enc.{l}.ln1_g, in floats */
static const uint32_t encoder_be1_at[] = {4072u, 1778536u}; /* be1(l): the model's enc.{l}.ln1_b, in floats */
static const uint32_t encoder_g2_at[] = {5224u, 1779688u}; /* g2(l): the model's enc.{l}.ln2_g, in floats */
static const uint32_t encoder_be2_at[] = {4840u, 1779304u}; /* be2(l): the model's enc.{l}.ln2_b, in floats */

#ifdef encoder_DEBUG_DUMP
typedef struct encoder_dump_copy {
    int kernel, dtype;
    const char *name;
    uint64_t count;
    oi_vk_buffer copy;
} encoder_dump_copy;
#endif
struct encoder_ctx {
    oi_vk vk;
    oi_vk_buffer staging;  /* host-visible: the declared variables as the host sees them */
    oi_vk_buffer readback; /* host-visible: the temporaries a getter returns */
    unsigned char *arena;  /* readback's mapping, at the arena's offsets */
    unsigned char *state;  /* staging's mapping, at the state's offsets */
    const unsigned char *model; /* the mapped model file */
    size_t model_size;
    int model_mapped;
    long long steps;
    double gpu_ms;
    unsigned char inserted[1]; /* per dynamic variable: set since the last step */
    unsigned char on_device[1]; /* ... written by the application on the device for the next step */
    VkCommandBuffer upload_all, upload[encoder_N_UPLOADS]; /* the uploads: all, or one by one */
#ifdef encoder_DEBUG_DUMP
    encoder_dump_copy *dumps; /* one per (recorded kernel, stored output) */
    int n_dumps, cap_dumps;
#endif
};

/* x: dynamic f32[128, 384] (../tests/synth/../../bench/bench_encoder.c:41) */
static void encoder_init_x(encoder_ctx *ctx) {
    float *v = (float *)(ctx->state + 0);
    memset(v, 0, 196608);
}

/* Maps the model read-only and checks that it is the file this code was
 * synthesized for: the header and tables hash to encoder_FINGERPRINT. */
static int encoder_map_model(encoder_ctx *ctx, const char *path) {
    if (!path)
        return encoder_fail(encoder_ERROR_ARGUMENT, "encoder_open: no model path");
    FILE *f = fopen(path, "rb");
    if (!f)
        return encoder_fail(encoder_ERROR_IO, "%s: cannot open the model", path);
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return encoder_fail(encoder_ERROR_IO, "%s: cannot seek", path);
    }
    long size = ftell(f);
    void *bytes = NULL;
#ifdef OI_HAVE_MMAP
    if (size > 0) {
        bytes = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
        if (bytes == MAP_FAILED)
            bytes = NULL;
        else
            ctx->model_mapped = 1;
    }
#endif
    if (!bytes && size > 0) { /* no mmap: read it */
        bytes = malloc((size_t)size);
        if (bytes && (fseek(f, 0, SEEK_SET) != 0 || fread(bytes, 1, (size_t)size, f) != (size_t)size)) {
            free(bytes);
            bytes = NULL;
        }
    }
    fclose(f);
    if (!bytes)
        return encoder_fail(encoder_ERROR_IO, "%s: cannot read the model", path);
    ctx->model = (const unsigned char *)bytes;
    ctx->model_size = (size_t)size;
    uint64_t data_at = 0, hash = 0xcbf29ce484222325ull;
    for (int i = 7; i >= 0 && ctx->model_size >= 61; i--)
        data_at = data_at << 8 | ctx->model[53 + i]; /* offset_data, little-endian */
    if (ctx->model_size < 61 || data_at != encoder_HEADER_BYTES || data_at > ctx->model_size ||
        (uint64_t)ctx->model_size < 14198176ull)
        return encoder_fail(encoder_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(its layout differs); synthesize again for this file", path);
    for (uint64_t i = 0; i < data_at; i++) {
        hash ^= ctx->model[i];
        hash *= 0x100000001b3ull;
    }
    if (hash != encoder_FINGERPRINT)
        return encoder_fail(encoder_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(fingerprint %016llx, expected %016llx); synthesize again for this file",
                       path, (unsigned long long)hash, (unsigned long long)encoder_FINGERPRINT);
    return 0;
}

#ifdef encoder_DEBUG_DUMP
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "npy.h"
#define encoder_STR2(x) #x
#define encoder_STR(x) encoder_STR2(x)
/* The debug build records, after each dispatch, a copy of every stored variable
 * the kernel wrote into a host-visible buffer of its own (made while recording,
 * so a step allocates nothing); after the step's fence each becomes
 * dir/stepS_kK_VAR.npy. The copies add barriers and traffic: debug only. */
static int encoder_dump_record(encoder_ctx *ctx, VkCommandBuffer cb, int kernel, const char *name, int dtype,
                            uint64_t count, const oi_vk_range *r) {
    if (ctx->n_dumps == ctx->cap_dumps) {
        int cap = ctx->cap_dumps ? 2 * ctx->cap_dumps : 16;
        encoder_dump_copy *d = (encoder_dump_copy *)realloc(ctx->dumps, (size_t)cap * sizeof *d);
        if (!d)
            return encoder_fail(encoder_ERROR_MEMORY, "encoder_open: out of memory (debug dump)");
        ctx->dumps = d;
        ctx->cap_dumps = cap;
    }
    encoder_dump_copy *d = &ctx->dumps[ctx->n_dumps];
    memset(d, 0, sizeof *d);
    if (oi_vk_buffer_create(&ctx->vk, &d->copy, r->bytes, OI_VK_HOST_USAGE, 1))
        return 1;
    ctx->n_dumps++;
    d->kernel = kernel;
    d->name = name;
    d->dtype = dtype;
    d->count = count;
    if (oi_vk_access(&ctx->vk, cb, r, 1, NULL, 0))
        return 1;
    VkBufferCopy region = {r->offset, 0, r->bytes};
    vkCmdCopyBuffer(cb, ctx->vk.device_buffers[r->buffer].buffer, d->copy.buffer, 1, &region);
    return 0;
}

static void encoder_dump_write(const encoder_ctx *ctx) {
    for (int i = 0; i < ctx->n_dumps; i++) {
        const encoder_dump_copy *d = &ctx->dumps[i];
        char path[1024];
        snprintf(path, sizeof path, "%s/step%lld_k%d_%s.npy", encoder_STR(encoder_DEBUG_DUMP), ctx->steps,
                 d->kernel, d->name);
        oi_npy_write(path, (oi_npy_dtype)d->dtype, 1, &d->count, d->copy.map, NULL);
    }
}
#endif

/* The step, recorded once at open and replayed by every encoder_step: the
 * inputs made visible (uploaded just before, or written by the application),
 * the zeros a step starts with, the kernels in the schedule's order (a
 * barrier only where one reads or overwrites what an earlier one touched),
 * the getters' values down. */
static int encoder_record(encoder_ctx *ctx, VkCommandBuffer cb) {
    oi_vk *vk = &ctx->vk;
    oi_vk_bind(vk, cb, 0); /* the model's window at its start */
    if (vk->queries) {
        vkCmdResetQueryPool(cb, vk->queries, 0, 2 + OI_VK_PROFILE);
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, vk->queries, 0);
    }
    oi_vk_barrier_from_before(vk, cb); /* the uploads, or the application's writes */

    /* the graph */
    if (oi_vk_copy(vk, cb, OI_VK_ARENA, 786432, OI_VK_STATE, 0, 196608)) /* bench_encoder.c:60: transfer x >> h */
        return 1;
    /* bench_encoder.c:61: loop layers (l in 0..num_layers): recorded once per iteration */
    for (int64_t l = 0; l < 2; l++) {
        { /* k0, matmul: bench_encoder.c:62 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 786432, 196608}, {OI_VK_ARENA, 983040, 196608}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 983040, 196608}, {OI_VK_ARENA, 3735552, 1572864}, {OI_VK_ARENA, 13172736, 192}};
            uint64_t lo = UINT64_MAX, hi = 0;
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_Wq_at[l], 589824u);
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_bq_at[l], 1536u);
            uint32_t mb = 0;
            if (oi_vk_model_window(vk, cb, lo, hi, &mb))
                return 1;
            const uint32_t push[] = {mb, encoder_Wq_at[l], encoder_bq_at[l]};
            if (oi_vk_dispatch(vk, cb, 0, push, (uint32_t)sizeof push, 12u, 4u, 8u, reads, 2, writes, 3))
                return 1;
#ifdef encoder_DEBUG_DUMP
            if (encoder_dump_record(ctx, cb, 0, "q", 10, 49152u, &writes[0]))
                return 1;
#endif
        }
        { /* k1, matmul: bench_encoder.c:63 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 786432, 196608}, {OI_VK_ARENA, 1179648, 196608}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 1179648, 196608}, {OI_VK_ARENA, 5308416, 1572864}, {OI_VK_ARENA, 13172928, 192}};
            uint64_t lo = UINT64_MAX, hi = 0;
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_Wk_at[l], 589824u);
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_bk_at[l], 1536u);
            uint32_t mb = 0;
            if (oi_vk_model_window(vk, cb, lo, hi, &mb))
                return 1;
            const uint32_t push[] = {mb, encoder_Wk_at[l], encoder_bk_at[l]};
            if (oi_vk_dispatch(vk, cb, 1, push, (uint32_t)sizeof push, 12u, 4u, 8u, reads, 2, writes, 3))
                return 1;
#ifdef encoder_DEBUG_DUMP
            if (encoder_dump_record(ctx, cb, 1, "k", 10, 49152u, &writes[0]))
                return 1;
#endif
        }
        { /* k2, matmul: bench_encoder.c:64 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 786432, 196608}, {OI_VK_ARENA, 1376256, 196608}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 1376256, 196608}, {OI_VK_ARENA, 6881280, 1572864}, {OI_VK_ARENA, 13173120, 192}};
            uint64_t lo = UINT64_MAX, hi = 0;
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_Wv_at[l], 589824u);
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_bv_at[l], 1536u);
            uint32_t mb = 0;
            if (oi_vk_model_window(vk, cb, lo, hi, &mb))
                return 1;
            const uint32_t push[] = {mb, encoder_Wv_at[l], encoder_bv_at[l]};
            if (oi_vk_dispatch(vk, cb, 2, push, (uint32_t)sizeof push, 12u, 4u, 8u, reads, 2, writes, 3))
                return 1;
#ifdef encoder_DEBUG_DUMP
            if (encoder_dump_record(ctx, cb, 2, "v", 10, 49152u, &writes[0]))
                return 1;
#endif
        }
        /* k3, copy: bench_encoder.c:65: not dispatched, the attention reads or writes in place */
        /* k4, copy: bench_encoder.c:66: not dispatched, the attention reads or writes in place */
        /* k5, copy: bench_encoder.c:67: not dispatched, the attention reads or writes in place */
        /* k6, transpose: bench_encoder.c:68: not dispatched, the attention reads or writes in place */
        /* k7, transpose: bench_encoder.c:69: not dispatched, the attention reads or writes in place */
        /* k8, transpose: bench_encoder.c:70: not dispatched, the attention reads or writes in place */
        { /* k9, attention: bench_encoder.c:71 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 983040, 196608}, {OI_VK_ARENA, 1179648, 196608}, {OI_VK_ARENA, 1376256, 196608}, {OI_VK_ARENA, 2949120, 196608}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 2949120, 196608}};
            if (oi_vk_dispatch(vk, cb, 9, NULL, 0, 128u, 12u, 1u, reads, 4, writes, 1))
                return 1;
#ifdef encoder_DEBUG_DUMP
            if (encoder_dump_record(ctx, cb, 9, "joined", 10, 49152u, &writes[0]))
                return 1;
#endif
        }
        /* k10, transpose: bench_encoder.c:72: not dispatched, the attention reads or writes in place */
        /* k11, copy: bench_encoder.c:73: not dispatched, the attention reads or writes in place */
        { /* k12, matmul: bench_encoder.c:74-75 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 2949120, 196608}, {OI_VK_ARENA, 3342336, 196608}, {OI_VK_ARENA, 786432, 196608}, {OI_VK_ARENA, 3538944, 196608}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 3342336, 196608}, {OI_VK_ARENA, 3538944, 196608}, {OI_VK_ARENA, 8454144, 1572864}, {OI_VK_ARENA, 13173312, 192}};
            uint64_t lo = UINT64_MAX, hi = 0;
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_Wo_at[l], 589824u);
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_bo_at[l], 1536u);
            uint32_t mb = 0;
            if (oi_vk_model_window(vk, cb, lo, hi, &mb))
                return 1;
            const uint32_t push[] = {mb, encoder_Wo_at[l], encoder_bo_at[l]};
            if (oi_vk_dispatch(vk, cb, 12, push, (uint32_t)sizeof push, 12u, 4u, 8u, reads, 4, writes, 4))
                return 1;
#ifdef encoder_DEBUG_DUMP
            if (encoder_dump_record(ctx, cb, 12, "proj", 10, 49152u, &writes[0]))
                return 1;
            if (encoder_dump_record(ctx, cb, 12, "res", 10, 49152u, &writes[1]))
                return 1;
#endif
        }
        { /* k13, layer_norm: bench_encoder.c:76 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 3538944, 196608}, {OI_VK_ARENA, 786432, 196608}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 786432, 196608}};
            uint64_t lo = UINT64_MAX, hi = 0;
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_g1_at[l], 1536u);
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_be1_at[l], 1536u);
            uint32_t mb = 0;
            if (oi_vk_model_window(vk, cb, lo, hi, &mb))
                return 1;
            const uint32_t push[] = {mb, encoder_g1_at[l], encoder_be1_at[l]};
            if (oi_vk_dispatch(vk, cb, 13, push, (uint32_t)sizeof push, 128u, 1u, 1u, reads, 2, writes, 1))
                return 1;
#ifdef encoder_DEBUG_DUMP
            if (encoder_dump_record(ctx, cb, 13, "h", 10, 49152u, &writes[0]))
                return 1;
#endif
        }
        { /* k14, matmul: bench_encoder.c:77 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 786432, 196608}, {OI_VK_ARENA, 0, 786432}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 0, 786432}, {OI_VK_ARENA, 10027008, 1572864}, {OI_VK_ARENA, 13173504, 768}};
            uint64_t lo = UINT64_MAX, hi = 0;
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_W1_at[l], 2359296u);
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_b1_at[l], 6144u);
            uint32_t mb = 0;
            if (oi_vk_model_window(vk, cb, lo, hi, &mb))
                return 1;
            const uint32_t push[] = {mb, encoder_W1_at[l], encoder_b1_at[l]};
            if (oi_vk_dispatch(vk, cb, 14, push, (uint32_t)sizeof push, 48u, 4u, 2u, reads, 2, writes, 3))
                return 1;
#ifdef encoder_DEBUG_DUMP
            if (encoder_dump_record(ctx, cb, 14, "ffn", 10, 196608u, &writes[0]))
                return 1;
#endif
        }
        { /* k15, matmul: bench_encoder.c:78-79 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 0, 786432}, {OI_VK_ARENA, 3342336, 196608}, {OI_VK_ARENA, 786432, 196608}, {OI_VK_ARENA, 3538944, 196608}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 3342336, 196608}, {OI_VK_ARENA, 3538944, 196608}, {OI_VK_ARENA, 11599872, 1572864}, {OI_VK_ARENA, 13174272, 192}};
            uint64_t lo = UINT64_MAX, hi = 0;
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_W2_at[l], 2359296u);
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_b2_at[l], 1536u);
            uint32_t mb = 0;
            if (oi_vk_model_window(vk, cb, lo, hi, &mb))
                return 1;
            const uint32_t push[] = {mb, encoder_W2_at[l], encoder_b2_at[l]};
            if (oi_vk_dispatch(vk, cb, 15, push, (uint32_t)sizeof push, 12u, 4u, 8u, reads, 4, writes, 4))
                return 1;
#ifdef encoder_DEBUG_DUMP
            if (encoder_dump_record(ctx, cb, 15, "proj", 10, 49152u, &writes[0]))
                return 1;
            if (encoder_dump_record(ctx, cb, 15, "res", 10, 49152u, &writes[1]))
                return 1;
#endif
        }
        { /* k16, layer_norm: bench_encoder.c:80 */
            static const oi_vk_range reads[] = {{OI_VK_ARENA, 3538944, 196608}, {OI_VK_ARENA, 786432, 196608}};
            static const oi_vk_range writes[] = {{OI_VK_ARENA, 786432, 196608}};
            uint64_t lo = UINT64_MAX, hi = 0;
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_g2_at[l], 1536u);
            oi_vk_span(&lo, &hi, 4u * (uint64_t)encoder_be2_at[l], 1536u);
            uint32_t mb = 0;
            if (oi_vk_model_window(vk, cb, lo, hi, &mb))
                return 1;
            const uint32_t push[] = {mb, encoder_g2_at[l], encoder_be2_at[l]};
            if (oi_vk_dispatch(vk, cb, 16, push, (uint32_t)sizeof push, 128u, 1u, 1u, reads, 2, writes, 1))
                return 1;
#ifdef encoder_DEBUG_DUMP
            if (encoder_dump_record(ctx, cb, 16, "h", 10, 49152u, &writes[0]))
                return 1;
#endif
        }
    }

    { /* the temporaries a getter returns: back to the host */
        static const VkBufferCopy regions[] = {{786432, 786432, 196608}};
        static const oi_vk_range ranges[] = {{OI_VK_ARENA, 786432, 196608}};
        if (oi_vk_access(vk, cb, ranges, (int)(sizeof ranges / sizeof ranges[0]), NULL, 0))
            return 1;
        vkCmdCopyBuffer(cb, vk->device_buffers[OI_VK_ARENA].buffer, ctx->readback.buffer, 1u, regions);
    }
    { /* everything above, visible to the host after the fence */
        VkMemoryBarrier host;
        memset(&host, 0, sizeof host);
        host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
        host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &host, 0, NULL, 0, NULL);
    }
    if (vk->queries)
        vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, vk->queries, 1);
    return oi_vk_check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

/* Before a step, from the host's staging copy up to the device: x. */
static const VkBufferCopy encoder_uploads[encoder_N_UPLOADS] = {{0, 0, 196608}};
/* ... the dynamic variable each one carries (ctx->inserted's index), -1: volatile */
static const int encoder_upload_dynamic[encoder_N_UPLOADS] = {0};

/* Records uploads[which], or all of them (which < 0), into a command buffer of its own. */
static int encoder_record_upload(encoder_ctx *ctx, VkCommandBuffer *cb, int which) {
    if (oi_vk_begin(&ctx->vk, cb, 0))
        return 1;
    vkCmdCopyBuffer(*cb, ctx->staging.buffer, ctx->vk.device_buffers[OI_VK_STATE].buffer,
                    which < 0 ? encoder_N_UPLOADS : 1u, which < 0 ? encoder_uploads : &encoder_uploads[which]);
    return oi_vk_check(vkEndCommandBuffer(*cb), "vkEndCommandBuffer");
}

static int encoder_record_uploads(encoder_ctx *ctx) {
    if (encoder_record_upload(ctx, &ctx->upload_all, -1))
        return 1;
    for (int u = 0; u < encoder_N_UPLOADS; u++)
        if (encoder_record_upload(ctx, &ctx->upload[u], u))
            return 1;
    return 0;
}

/* ---- the API ---- */

static int encoder_use_app_device(encoder_ctx *ctx, const encoder_vulkan_device *app) {
    oi_vk *vk = &ctx->vk;
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)(void (*)(void))app->get_instance_proc_addr;
    if (oi_vk_use_app_device(vk, (VkInstance)app->instance, (VkPhysicalDevice)app->physical_device,
                             (VkDevice)app->device, (VkQueue)app->queue, app->queue_family_index, gipa))
        return 1;
    if (!app->model_buffer)
        return 0;
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(vk->physical, &props);
    if (app->model_offset % props.limits.minStorageBufferOffsetAlignment)
        return encoder_fail(encoder_ERROR_ARGUMENT, "encoder_open_on_device: model_offset %llu is not a multiple of "
                       "minStorageBufferOffsetAlignment (%llu)", (unsigned long long)app->model_offset,
                       (unsigned long long)props.limits.minStorageBufferOffsetAlignment);
    vk->device_buffers[OI_VK_MODEL].buffer = OI_VK_U64_BUFFER(app->model_buffer);
    vk->device_buffers[OI_VK_MODEL].size = encoder_MODEL_BYTES;
    vk->model_offset = app->model_offset;
    vk->app_model = 1;
    return 0;
}

static int encoder_make_device(encoder_ctx *ctx) {
    oi_vk *vk = &ctx->vk;
    if (oi_vk_create_instance(vk) || oi_vk_pick_device(vk) || oi_vk_create_device(vk, NULL, 0, NULL))
        return 1;
    return 0;
}

static int encoder_open_device(encoder_ctx *ctx, const encoder_vulkan_device *app) {
    oi_vk *vk = &ctx->vk;
    if (app) {
        if (encoder_use_app_device(ctx, app))
            return 1;
    } else if (encoder_make_device(ctx)) {
        return 1;
    }
    /* the arena, then the partial products of the matmuls split along K and their block counters */
    const VkDeviceSize sizes[OI_VK_BUFFERS] = {13174464u, encoder_STATE_DEVICE_BYTES, (encoder_MODEL_BYTES + 255u) / 256u * 256u};
    for (int i = 0; i < OI_VK_BUFFERS; i++)
        if (!(i == OI_VK_MODEL && vk->app_model) &&
            oi_vk_buffer_create(vk, &vk->device_buffers[i], sizes[i], OI_VK_DEVICE_USAGE, 0))
            return 1;
    if (oi_vk_buffer_create(vk, &ctx->staging, encoder_STATE_DEVICE_BYTES, OI_VK_HOST_USAGE, 1) ||
        oi_vk_buffer_create(vk, &ctx->readback, encoder_ARENA_BYTES, OI_VK_HOST_USAGE, 1))
        return 1;
    ctx->state = (unsigned char *)ctx->staging.map;
    ctx->arena = (unsigned char *)ctx->readback.map;
    vk->pipelines = (VkPipeline *)calloc(encoder_N_KERNELS + 1, sizeof *vk->pipelines);
    if (!vk->pipelines)
        return encoder_fail(encoder_ERROR_MEMORY, "encoder_open: out of memory");
    vk->n_pipelines = encoder_N_KERNELS;
    if (oi_vk_create_layout(vk, 12u))
        return 1;
    for (int k = 0; k < encoder_N_KERNELS; k++)
        if (oi_vk_create_pipeline(vk, k, encoder_kernels[k].code, encoder_kernels[k].bytes))
            return 1;
    return 0;
}

/* the split matmuls' block counters as they start (their kernels' headers say how they count) */
static const uint32_t encoder_counts_zero[432] = {0};

static encoder_ctx *encoder_open_on(const char *model_path, const encoder_vulkan_device *app) {
    encoder_ctx *ctx = (encoder_ctx *)calloc(1, sizeof *ctx);
    if (!ctx) {
        encoder_fail(encoder_ERROR_MEMORY, "encoder_open: out of memory");
        return NULL;
    }
    if (encoder_map_model(ctx, model_path) != 0 || encoder_open_device(ctx, app) != 0) {
        encoder_close(ctx);
        return NULL;
    }
    /* the declared variables as they start, then everything up once */
    encoder_init_x(ctx);
    oi_vk *vk = &ctx->vk;
    if ((ctx->model && !vk->app_model &&
         oi_vk_upload(vk, &vk->device_buffers[OI_VK_MODEL], 0, ctx->model, ctx->model_size)) ||
        oi_vk_upload(vk, &vk->device_buffers[OI_VK_STATE], 0, ctx->state, encoder_STATE_BYTES) ||
        oi_vk_upload(vk, &vk->device_buffers[OI_VK_ARENA], 13172736u, encoder_counts_zero, 1728u) || /* the block counters */
        oi_vk_begin(vk, &vk->step, 0) || encoder_record(ctx, vk->step) || encoder_record_uploads(ctx)) {
        encoder_close(ctx);
        return NULL;
    }
    return ctx;
}

void encoder_close(encoder_ctx *ctx) {
    if (!ctx)
        return;
    if (ctx->vk.device) {
        if (!ctx->vk.app_device) /* every submission was waited for; the rest is the application's */
            vkDeviceWaitIdle(ctx->vk.device);
        oi_vk_buffer_free(&ctx->vk, &ctx->staging);
        oi_vk_buffer_free(&ctx->vk, &ctx->readback);
#ifdef encoder_DEBUG_DUMP
        for (int i = 0; i < ctx->n_dumps; i++)
            oi_vk_buffer_free(&ctx->vk, &ctx->dumps[i].copy);
#endif
    }
    oi_vk_destroy(&ctx->vk);
#ifdef encoder_DEBUG_DUMP
    free(ctx->dumps);
#endif
#ifdef OI_HAVE_MMAP
    if (ctx->model_mapped)
        munmap((void *)(uintptr_t)ctx->model, ctx->model_size);
    else
#endif
        free((void *)(uintptr_t)ctx->model);
    free(ctx);
}

/* The kernels run on the GPU: no host threads, so the options have nothing to set. */
encoder_ctx *encoder_open_with(const char *model_path, const encoder_options *options) {
    (void)options;
    return encoder_open(model_path);
}

encoder_ctx *encoder_open(const char *model_path) { return encoder_open_on(model_path, NULL); }

encoder_ctx *encoder_open_on_device(const char *model_path, const encoder_vulkan_device *device) {
    if (!device) {
        encoder_fail(encoder_ERROR_ARGUMENT, "encoder_open_on_device: no device");
        return NULL;
    }
    return encoder_open_on(model_path, device);
}

int encoder_step(encoder_ctx *ctx) {
    if (!ctx)
        return encoder_fail(encoder_ERROR_ARGUMENT, "encoder_step: no context");
    /* the start of a step, in the staging copy the recorded step uploads */
    if (!ctx->inserted[0] && !ctx->on_device[0])
        encoder_init_x(ctx); /* dynamic, not set: as declared */
    /* the uploads, but not of an input the application wrote on the device, then the step */
    VkCommandBuffer cbs[encoder_N_UPLOADS + 1];
    uint32_t n = 0;
    int from_device = 0;
    for (size_t d = 0; d < sizeof ctx->on_device; d++)
        from_device |= ctx->on_device[d] && !ctx->inserted[d];
    if (!from_device)
        cbs[n++] = ctx->upload_all;
    for (int u = 0; u < encoder_N_UPLOADS && from_device; u++) {
        int d = encoder_upload_dynamic[u];
        if (d < 0 || !ctx->on_device[d] || ctx->inserted[d])
            cbs[n++] = ctx->upload[u];
    }
    cbs[n++] = ctx->vk.step;
    if (oi_vk_submit_n(&ctx->vk, cbs, n))
        return 1;
    if (ctx->vk.queries) {
        uint64_t ticks[2] = {0, 0};
        if (vkGetQueryPoolResults(ctx->vk.device, ctx->vk.queries, 0, 2, sizeof ticks, ticks, sizeof ticks[0],
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS)
            ctx->gpu_ms = (double)(ticks[1] - ticks[0]) * ctx->vk.timestamp_ns * 1e-6;
    }
#ifdef encoder_DEBUG_DUMP
    encoder_dump_write(ctx);
#endif
    memset(ctx->inserted, 0, sizeof ctx->inserted);
    memset(ctx->on_device, 0, sizeof ctx->on_device);
    ctx->steps++;
    return 0;
}

double encoder_gpu_ms(const encoder_ctx *ctx) { return ctx ? ctx->gpu_ms : 0.0; }
int encoder_dispatches(const encoder_ctx *ctx) { return ctx ? ctx->vk.dispatches : 0; }
int encoder_barriers(const encoder_ctx *ctx) { return ctx ? ctx->vk.barriers : 0; }
int encoder_dispatch_ms(const encoder_ctx *ctx, double *ms, int *kernel, int max) {
    return ctx ? oi_vk_dispatch_ms(&ctx->vk, ms, kernel, max) : 0;
}

int encoder_set_x(encoder_ctx *ctx, const float *values, size_t count) {
    if (!ctx || !values || count != 49152u)
        return encoder_fail(encoder_ERROR_ARGUMENT, "encoder_set_x: %zu values given, x holds 49152", count);
    memcpy(ctx->state + 0, values, 196608);
    ctx->inserted[0] = 1;
    return 0;
}

const float *encoder_get_x(const encoder_ctx *ctx, size_t *count) {
    if (count)
        *count = 49152u;
    return ctx ? (float *)(ctx->state + 0) : NULL;
}

const float *encoder_get_h(const encoder_ctx *ctx, size_t *count) {
    if (count)
        *count = 49152u;
    return ctx ? (float *)(ctx->arena + 786432) : NULL;
}

int encoder_input_buffer_x(encoder_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size) {
    if (!ctx || !buffer || !offset || !size)
        return encoder_fail(encoder_ERROR_ARGUMENT, "encoder_input_buffer_x: a NULL argument");
    ctx->on_device[0] = 1; /* the next step reads what the application writes there */
    ctx->inserted[0] = 0;
    *buffer = OI_VK_BUFFER_U64(ctx->vk.device_buffers[OI_VK_STATE].buffer);
    *offset = 0u;
    *size = 196608u;
    return 0;
}

int encoder_output_buffer_x(const encoder_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size) {
    if (!ctx || !buffer || !offset || !size)
        return encoder_fail(encoder_ERROR_ARGUMENT, "encoder_output_buffer_x: a NULL argument");
    *buffer = OI_VK_BUFFER_U64(ctx->vk.device_buffers[OI_VK_STATE].buffer);
    *offset = 0u;
    *size = 196608u;
    return 0;
}

int encoder_output_buffer_h(const encoder_ctx *ctx, uint64_t *buffer, uint64_t *offset, uint64_t *size) {
    if (!ctx || !buffer || !offset || !size)
        return encoder_fail(encoder_ERROR_ARGUMENT, "encoder_output_buffer_h: a NULL argument");
    *buffer = OI_VK_BUFFER_U64(ctx->vk.device_buffers[OI_VK_ARENA].buffer);
    *offset = 786432u;
    *size = 196608u;
    return 0;
}

