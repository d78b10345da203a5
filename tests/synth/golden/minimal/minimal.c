/* minimal.c - graph "minimal", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * 1 kernel runs 2 DSL op statements; plan.json lists them with their arena offsets.
 * Named sizes are specialized: the model's values at synthesis time:
 *   B = 16.
 * Build with -Dminimal_DEBUG_DUMP=dir to write every kernel's outputs as dir/stepS_kK_VAR.npy. */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "minimal.h"
#include "oi_scalar.h"

#include <math.h>
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

/* kernels/scalar.h's ROUND for f32 results: the simulator computes in
 * double and rounds to the storage type after every op, and so do we */
#define OI_ROUND_F32(x) ((double)(float)(x))

#define minimal_FINGERPRINT 0xe62f987f6052da76ull /* FNV-1a of the model's header and tables */
#define minimal_HEADER_BYTES 152ull   /* where the model's data section starts */

#ifdef __cplusplus
#define OI_THREAD_LOCAL thread_local
#else
#define OI_THREAD_LOCAL _Thread_local
#endif

struct minimal_ctx {
    unsigned char *arena; /* minimal_ARENA_BYTES: the temporaries, at planned offsets */
    unsigned char *state; /* minimal_STATE_BYTES: the declared variables */
    const unsigned char *model; /* the mapped model file */
    size_t model_size;
    int model_mapped;
    long long steps;
    unsigned char inserted[1]; /* per dynamic variable: set since the last step */
};

static OI_THREAD_LOCAL char minimal_error_text[512];

const char *minimal_last_error(void) { return minimal_error_text; }

static int minimal_fail(int code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(minimal_error_text, sizeof minimal_error_text, fmt, args);
    va_end(args);
    return code;
}

/* x: dynamic f32[16] (../tests/synth/../../examples/minimal.c:16) */
static void minimal_init_x(minimal_ctx *ctx) {
    float *v = (float *)(ctx->state + 0);
    memset(v, 0, 64);
}

/* y: volatile f32[16] (../tests/synth/../../examples/minimal.c:20) */
static void minimal_init_y(minimal_ctx *ctx) {
    float *v = (float *)(ctx->state + 64);
    for (size_t i = 0; i < 16; i++)
        v[i] = (float)5.0; /* @init */
}

/* Maps the model read-only and checks that it is the file this code was
 * synthesized for: the header and tables hash to minimal_FINGERPRINT. */
static int minimal_map_model(minimal_ctx *ctx, const char *path) {
    if (!path)
        return minimal_fail(minimal_ERROR_ARGUMENT, "minimal_open: no model path");
    FILE *f = fopen(path, "rb");
    if (!f)
        return minimal_fail(minimal_ERROR_IO, "%s: cannot open the model", path);
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return minimal_fail(minimal_ERROR_IO, "%s: cannot seek", path);
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
        return minimal_fail(minimal_ERROR_IO, "%s: cannot read the model", path);
    ctx->model = (const unsigned char *)bytes;
    ctx->model_size = (size_t)size;
    uint64_t data_at = 0, hash = 0xcbf29ce484222325ull;
    for (int i = 7; i >= 0 && ctx->model_size >= 61; i--)
        data_at = data_at << 8 | ctx->model[53 + i]; /* offset_data, little-endian */
    if (ctx->model_size < 61 || data_at != minimal_HEADER_BYTES || data_at > ctx->model_size ||
        (uint64_t)ctx->model_size < 216ull)
        return minimal_fail(minimal_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(its layout differs); synthesize again for this file", path);
    for (uint64_t i = 0; i < data_at; i++) {
        hash ^= ctx->model[i];
        hash *= 0x100000001b3ull;
    }
    if (hash != minimal_FINGERPRINT)
        return minimal_fail(minimal_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(fingerprint %016llx, expected %016llx); synthesize again for this file",
                       path, (unsigned long long)hash, (unsigned long long)minimal_FINGERPRINT);
    return 0;
}

#ifdef minimal_DEBUG_DUMP
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "npy.h"
#define minimal_STR2(x) #x
#define minimal_STR(x) minimal_STR2(x)
/* dir/stepS_kK_VAR.npy: a kernel's output, flat, to diff against the simulator */
static void minimal_dump(const minimal_ctx *ctx, int kernel, const char *name, const void *data, int dtype) {
    static const struct { const char *name; uint64_t count; } sizes[] = {
        {"x", 16u},
        {"a", 16u},
        {"y", 16u},
        {"t0", 16u},
    };
    uint64_t count = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, name) == 0)
            count = sizes[i].count;
    char path[1024];
    snprintf(path, sizeof path, "%s/step%lld_k%d_%s.npy", minimal_STR(minimal_DEBUG_DUMP),
             ctx->steps, kernel, name);
    oi_npy_write(path, (oi_npy_dtype)dtype, 1, &count, data, NULL);
}
#endif

/* ---- kernels ---- */

/* k0: elementwise, 2 statements
 *   minimal.c:24: op add(x,a) >> t0
 *   minimal.c:25: op mul(y,t0) >> y
 */
static void minimal_k0(const float *x, const float *a_, float *y) {
    for (size_t i = 0; i < 16; i++) {
        /* minimal.c:24: op add(x,a) >> t0 */
        double v0 = OI_ROUND_F32(OI_S_add((double)x[i], (double)a_[i]));
        /* minimal.c:25: op mul(y,t0) >> y */
        double v1 = OI_ROUND_F32(OI_S_mul((double)y[i], v0));
        y[i] = (float)v1;
    }
}

/* ---- the API ---- */

minimal_ctx *minimal_open(const char *model_path) { return minimal_open_with(model_path, NULL); }

minimal_ctx *minimal_open_with(const char *model_path, const minimal_options *options) {
    minimal_ctx *ctx = (minimal_ctx *)calloc(1, sizeof *ctx);
    if (ctx) {
        ctx->arena = (unsigned char *)calloc(1, minimal_ARENA_BYTES + 1);
        ctx->state = (unsigned char *)calloc(1, minimal_STATE_BYTES + 1);
    }
    if (!ctx || !ctx->arena || !ctx->state) {
        minimal_close(ctx);
        minimal_fail(minimal_ERROR_MEMORY, "minimal_open: out of memory");
        return NULL;
    }
    if (minimal_map_model(ctx, model_path) != 0) {
        minimal_close(ctx);
        return NULL;
    }
    minimal_init_x(ctx);
    minimal_init_y(ctx);
    (void)options; /* one thread: no kernel is worth splitting */
    return ctx;
}

void minimal_close(minimal_ctx *ctx) {
    if (!ctx)
        return;
#ifdef OI_HAVE_MMAP
    if (ctx->model_mapped)
        munmap((void *)(uintptr_t)ctx->model, ctx->model_size);
    else
#endif
        free((void *)(uintptr_t)ctx->model);
    free(ctx->arena);
    free(ctx->state);
    free(ctx);
}

int minimal_step(minimal_ctx *ctx) {
    if (!ctx)
        return minimal_fail(minimal_ERROR_ARGUMENT, "minimal_step: no context");
    /* the start of a step: every memory kind starts as the simulator's does */
    if (!ctx->inserted[0])
        minimal_init_x(ctx); /* dynamic, not set: as declared */
    minimal_init_y(ctx); /* volatile */

    /* the graph */
    minimal_k0((float *)(ctx->state + 0), (const float *)(ctx->model + 152), (float *)(ctx->state + 64)); /* minimal.c:24-25 */
#ifdef minimal_DEBUG_DUMP
    minimal_dump(ctx, 0, "y", (float *)(ctx->state + 64), 10);
#endif

    memset(ctx->inserted, 0, sizeof ctx->inserted);
    ctx->steps++;
    return 0;
}

int minimal_set_x(minimal_ctx *ctx, const float *values, size_t count) {
    if (!ctx || !values || count != 16u)
        return minimal_fail(minimal_ERROR_ARGUMENT, "minimal_set_x: %zu values given, x holds 16", count);
    memcpy(ctx->state + 0, values, 64);
    ctx->inserted[0] = 1;
    return 0;
}

const float *minimal_get_x(const minimal_ctx *ctx, size_t *count) {
    if (count)
        *count = 16u;
    return ctx ? (float *)(ctx->state + 0) : NULL;
}

const float *minimal_get_a(const minimal_ctx *ctx, size_t *count) {
    if (count)
        *count = 16u;
    return ctx ? (const float *)(ctx->model + 152) : NULL;
}

const float *minimal_get_y(const minimal_ctx *ctx, size_t *count) {
    if (count)
        *count = 16u;
    return ctx ? (float *)(ctx->state + 64) : NULL;
}

