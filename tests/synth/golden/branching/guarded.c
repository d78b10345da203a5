/* guarded.c - graph "guarded", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * 4 kernels run 4 DSL op statements; plan.json lists them with their arena offsets.
 * Named sizes are specialized: the model's values at synthesis time:
 *   B = 16.
 * Build with -Dguarded_DEBUG_DUMP=dir to write every kernel's outputs as dir/stepS_kK_VAR.npy. */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "guarded.h"
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

#define guarded_FINGERPRINT 0xe62f987f6052da76ull /* FNV-1a of the model's header and tables */
#define guarded_HEADER_BYTES 152ull   /* where the model's data section starts */

#ifdef __cplusplus
#define OI_THREAD_LOCAL thread_local
#else
#define OI_THREAD_LOCAL _Thread_local
#endif

struct guarded_ctx {
    unsigned char *arena; /* guarded_ARENA_BYTES: the temporaries, at planned offsets */
    unsigned char *state; /* guarded_STATE_BYTES: the declared variables */
    const unsigned char *model; /* the mapped model file */
    size_t model_size;
    int model_mapped;
    long long steps;
    unsigned char inserted[1]; /* per dynamic variable: set since the last step */
};

static OI_THREAD_LOCAL char guarded_error_text[512];

const char *guarded_last_error(void) { return guarded_error_text; }

static int guarded_fail(int code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(guarded_error_text, sizeof guarded_error_text, fmt, args);
    va_end(args);
    return code;
}

/* x: dynamic f32[1, 3] (../tests/synth/../../examples/branching.c:11) */
static void guarded_init_x(guarded_ctx *ctx) {
    float *v = (float *)(ctx->state + 0);
    memset(v, 0, 12);
}

/* W: constant f32[3, 3] (../tests/synth/../../examples/branching.c:12) */
static void guarded_init_W(guarded_ctx *ctx) {
    float *v = (float *)(ctx->state + 16);
    for (size_t i = 0; i < 9; i++)
        v[i] = (float)0.5; /* @init */
}

/* Maps the model read-only and checks that it is the file this code was
 * synthesized for: the header and tables hash to guarded_FINGERPRINT. */
static int guarded_map_model(guarded_ctx *ctx, const char *path) {
    if (!path)
        return guarded_fail(guarded_ERROR_ARGUMENT, "guarded_open: no model path");
    FILE *f = fopen(path, "rb");
    if (!f)
        return guarded_fail(guarded_ERROR_IO, "%s: cannot open the model", path);
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return guarded_fail(guarded_ERROR_IO, "%s: cannot seek", path);
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
        return guarded_fail(guarded_ERROR_IO, "%s: cannot read the model", path);
    ctx->model = (const unsigned char *)bytes;
    ctx->model_size = (size_t)size;
    uint64_t data_at = 0, hash = 0xcbf29ce484222325ull;
    for (int i = 7; i >= 0 && ctx->model_size >= 61; i--)
        data_at = data_at << 8 | ctx->model[53 + i]; /* offset_data, little-endian */
    if (ctx->model_size < 61 || data_at != guarded_HEADER_BYTES || data_at > ctx->model_size ||
        (uint64_t)ctx->model_size < 216ull)
        return guarded_fail(guarded_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(its layout differs); synthesize again for this file", path);
    for (uint64_t i = 0; i < data_at; i++) {
        hash ^= ctx->model[i];
        hash *= 0x100000001b3ull;
    }
    if (hash != guarded_FINGERPRINT)
        return guarded_fail(guarded_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(fingerprint %016llx, expected %016llx); synthesize again for this file",
                       path, (unsigned long long)hash, (unsigned long long)guarded_FINGERPRINT);
    return 0;
}

#ifdef guarded_DEBUG_DUMP
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "npy.h"
#define guarded_STR2(x) #x
#define guarded_STR(x) guarded_STR2(x)
/* dir/stepS_kK_VAR.npy: a kernel's output, flat, to diff against the simulator */
static void guarded_dump(const guarded_ctx *ctx, int kernel, const char *name, const void *data, int dtype) {
    static const struct { const char *name; uint64_t count; } sizes[] = {
        {"x", 3u},
        {"W", 9u},
        {"h", 3u},
        {"ok", 1u},
    };
    uint64_t count = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, name) == 0)
            count = sizes[i].count;
    char path[1024];
    snprintf(path, sizeof path, "%s/step%lld_k%d_%s.npy", guarded_STR(guarded_DEBUG_DUMP),
             ctx->steps, kernel, name);
    oi_npy_write(path, (oi_npy_dtype)dtype, 1, &count, data, NULL);
}
#endif

/* ---- kernels ---- */

/* k0: matmul, 1 statement
 *   branching.c:16: op matmul(x,W) >> h
 */
static void guarded_k0(const float *x, const float *W, float *h) {
    for (size_t r = 0; r < 1; r++) {
        float acc[3];
        for (size_t j = 0; j < 3; j++)
            acc[j] = 0.0f;
        for (size_t p = 0; p < 3; p++) {
            const float a = x[r * 3 + p];
            for (size_t j = 0; j < 3; j++)
                acc[j] = OI_S_mac(acc[j], a, W[p * 3 + j]);
        }
        for (size_t j = 0; j < 3; j++) {
            const size_t i = r * 3 + j;
            /* branching.c:16: op matmul(x,W) >> h */
            double v0 = (double)acc[j];
            h[i] = acc[j];
            (void)v0;
        }
    }
}

/* k1: all_finite, 1 statement
 *   branching.c:17: op is_finite(h) >> ok
 */
static void guarded_k1(const float *h, unsigned char *ok_) {
    int ok = 1;
    for (size_t i = 0; i < 3; i++)
        if (!OI_S_isfinite((double)h[i]))
            ok = 0;
    ok_[0] = (unsigned char)ok;
}

/* k2: elementwise, 1 statement
 *   branching.c:22: op relu(h,negative_slope=0.0,clamp_max=6.0) >> h
 */
static void guarded_k2(float *h) {
    for (size_t i = 0; i < 3; i++) {
        /* branching.c:22: op relu(h,negative_slope=0.0,clamp_max=6.0) >> h */
        double v0 = OI_S_relu_raw((double)h[i], 0.0, OI_ROUND_F32);
        v0 = OI_S_clamp_hi(v0, 6.0);
        v0 = OI_ROUND_F32(v0);
        h[i] = (float)v0;
    }
}

/* k3: elementwise, 1 statement
 *   branching.c:26: op fill_nan_like(h,value=0.0) >> h
 */
static void guarded_k3(float *h) {
    for (size_t i = 0; i < 3; i++) {
        /* branching.c:26: op fill_nan_like(h,value=0.0) >> h */
        double v0 = OI_ROUND_F32(OI_S_fill_nan_like((double)h[i], 0.0));
        h[i] = (float)v0;
    }
}

/* ---- the API ---- */

guarded_ctx *guarded_open(const char *model_path) { return guarded_open_with(model_path, NULL); }

guarded_ctx *guarded_open_with(const char *model_path, const guarded_options *options) {
    guarded_ctx *ctx = (guarded_ctx *)calloc(1, sizeof *ctx);
    if (ctx) {
        ctx->arena = (unsigned char *)calloc(1, guarded_ARENA_BYTES + 1);
        ctx->state = (unsigned char *)calloc(1, guarded_STATE_BYTES + 1);
    }
    if (!ctx || !ctx->arena || !ctx->state) {
        guarded_close(ctx);
        guarded_fail(guarded_ERROR_MEMORY, "guarded_open: out of memory");
        return NULL;
    }
    if (guarded_map_model(ctx, model_path) != 0) {
        guarded_close(ctx);
        return NULL;
    }
    guarded_init_x(ctx);
    guarded_init_W(ctx);
    (void)options; /* one thread: no kernel is worth splitting */
    return ctx;
}

void guarded_close(guarded_ctx *ctx) {
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

int guarded_step(guarded_ctx *ctx) {
    if (!ctx)
        return guarded_fail(guarded_ERROR_ARGUMENT, "guarded_step: no context");
    /* the start of a step: every memory kind starts as the simulator's does */
    if (!ctx->inserted[0])
        guarded_init_x(ctx); /* dynamic, not set: as declared */

    /* the graph */
    guarded_k0((float *)(ctx->state + 0), (float *)(ctx->state + 16), (float *)(ctx->arena + 0)); /* branching.c:16 */
#ifdef guarded_DEBUG_DUMP
    guarded_dump(ctx, 0, "h", (float *)(ctx->arena + 0), 10);
#endif
    guarded_k1((float *)(ctx->arena + 0), (unsigned char *)(ctx->arena + 12)); /* branching.c:17 */
#ifdef guarded_DEBUG_DUMP
    guarded_dump(ctx, 1, "ok", (unsigned char *)(ctx->arena + 12), 12);
#endif
    /* branching.c:18: branch ok good bad */
    if (*(unsigned char *)(ctx->arena + 12) != 0) { /* block good */
        guarded_k2((float *)(ctx->arena + 0)); /* branching.c:22 */
#ifdef guarded_DEBUG_DUMP
        guarded_dump(ctx, 2, "h", (float *)(ctx->arena + 0), 10);
#endif
    } else { /* block bad */
        guarded_k3((float *)(ctx->arena + 0)); /* branching.c:26 */
#ifdef guarded_DEBUG_DUMP
        guarded_dump(ctx, 3, "h", (float *)(ctx->arena + 0), 10);
#endif
    }

    memset(ctx->inserted, 0, sizeof ctx->inserted);
    ctx->steps++;
    return 0;
}

int guarded_set_x(guarded_ctx *ctx, const float *values, size_t count) {
    if (!ctx || !values || count != 3u)
        return guarded_fail(guarded_ERROR_ARGUMENT, "guarded_set_x: %zu values given, x holds 3", count);
    memcpy(ctx->state + 0, values, 12);
    ctx->inserted[0] = 1;
    return 0;
}

const float *guarded_get_x(const guarded_ctx *ctx, size_t *count) {
    if (count)
        *count = 3u;
    return ctx ? (float *)(ctx->state + 0) : NULL;
}

const float *guarded_get_W(const guarded_ctx *ctx, size_t *count) {
    if (count)
        *count = 9u;
    return ctx ? (float *)(ctx->state + 16) : NULL;
}

const float *guarded_get_h(const guarded_ctx *ctx, size_t *count) {
    if (count)
        *count = 3u;
    return ctx ? (float *)(ctx->arena + 0) : NULL;
}

