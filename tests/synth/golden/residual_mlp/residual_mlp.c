/* residual_mlp.c - graph "residual_mlp", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * 1 kernel runs 4 DSL op statements; plan.json lists them with their arena offsets.
 * Named sizes are specialized: the model's values at synthesis time:
 *   B = 2, D = 8, num_layers = 3.
 * Build with -Dresidual_mlp_DEBUG_DUMP=dir to write every kernel's outputs as dir/stepS_kK_VAR.npy. */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "residual_mlp.h"
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

#define residual_mlp_FINGERPRINT 0x4f2ae77c7c5a68c1ull /* FNV-1a of the model's header and tables */
#define residual_mlp_HEADER_BYTES 560ull   /* where the model's data section starts */

#ifdef __cplusplus
#define OI_THREAD_LOCAL thread_local
#else
#define OI_THREAD_LOCAL _Thread_local
#endif

struct residual_mlp_ctx {
    unsigned char *arena; /* residual_mlp_ARENA_BYTES: the temporaries, at planned offsets */
    unsigned char *state; /* residual_mlp_STATE_BYTES: the declared variables */
    const unsigned char *model; /* the mapped model file */
    size_t model_size;
    int model_mapped;
    long long steps;
    const void *W_entries[3]; /* W(l): the model's res.mlp.w.{l} */
    const void *b_entries[3]; /* b(l): the model's res.mlp.b.{l} */
    unsigned char inserted[1]; /* per dynamic variable: set since the last step */
};

static OI_THREAD_LOCAL char residual_mlp_error_text[512];

const char *residual_mlp_last_error(void) { return residual_mlp_error_text; }

static int residual_mlp_fail(int code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(residual_mlp_error_text, sizeof residual_mlp_error_text, fmt, args);
    va_end(args);
    return code;
}

/* x: dynamic f32[2, 8] (../tests/synth/../../examples/residual_mlp.c:14) */
static void residual_mlp_init_x(residual_mlp_ctx *ctx) {
    float *v = (float *)(ctx->state + 0);
    memset(v, 0, 64);
}

/* Maps the model read-only and checks that it is the file this code was
 * synthesized for: the header and tables hash to residual_mlp_FINGERPRINT. */
static int residual_mlp_map_model(residual_mlp_ctx *ctx, const char *path) {
    if (!path)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_open: no model path");
    FILE *f = fopen(path, "rb");
    if (!f)
        return residual_mlp_fail(residual_mlp_ERROR_IO, "%s: cannot open the model", path);
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return residual_mlp_fail(residual_mlp_ERROR_IO, "%s: cannot seek", path);
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
        return residual_mlp_fail(residual_mlp_ERROR_IO, "%s: cannot read the model", path);
    ctx->model = (const unsigned char *)bytes;
    ctx->model_size = (size_t)size;
    uint64_t data_at = 0, hash = 0xcbf29ce484222325ull;
    for (int i = 7; i >= 0 && ctx->model_size >= 61; i--)
        data_at = data_at << 8 | ctx->model[53 + i]; /* offset_data, little-endian */
    if (ctx->model_size < 61 || data_at != residual_mlp_HEADER_BYTES || data_at > ctx->model_size ||
        (uint64_t)ctx->model_size < 1424ull)
        return residual_mlp_fail(residual_mlp_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(its layout differs); synthesize again for this file", path);
    for (uint64_t i = 0; i < data_at; i++) {
        hash ^= ctx->model[i];
        hash *= 0x100000001b3ull;
    }
    if (hash != residual_mlp_FINGERPRINT)
        return residual_mlp_fail(residual_mlp_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(fingerprint %016llx, expected %016llx); synthesize again for this file",
                       path, (unsigned long long)hash, (unsigned long long)residual_mlp_FINGERPRINT);
    return 0;
}

#ifdef residual_mlp_DEBUG_DUMP
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "npy.h"
#define residual_mlp_STR2(x) #x
#define residual_mlp_STR(x) residual_mlp_STR2(x)
/* dir/stepS_kK_VAR.npy: a kernel's output, flat, to diff against the simulator */
static void residual_mlp_dump(const residual_mlp_ctx *ctx, int kernel, const char *name, const void *data, int dtype) {
    static const struct { const char *name; uint64_t count; } sizes[] = {
        {"x", 16u},
        {"W", 64u},
        {"b", 8u},
        {"h", 16u},
        {"u", 16u},
    };
    uint64_t count = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, name) == 0)
            count = sizes[i].count;
    char path[1024];
    snprintf(path, sizeof path, "%s/step%lld_k%d_%s.npy", residual_mlp_STR(residual_mlp_DEBUG_DUMP),
             ctx->steps, kernel, name);
    oi_npy_write(path, (oi_npy_dtype)dtype, 1, &count, data, NULL);
}
#endif

/* ---- kernels ---- */

/* k0: matmul, 4 statements
 *   residual_mlp.c:24: op matmul(h,W[l]) >> u
 *   residual_mlp.c:25: op add(u,b[l]) >> u
 *   residual_mlp.c:26: op relu(u) >> u
 *   residual_mlp.c:27: op add(h,u) >> h
 */
static void residual_mlp_k0(float *h, const float *W, const float *b) {
    for (size_t r = 0; r < 2; r++) {
        float acc[8];
        for (size_t j = 0; j < 8; j++)
            acc[j] = 0.0f;
        for (size_t p = 0; p < 8; p++) {
            const float a = h[r * 8 + p];
            for (size_t j = 0; j < 8; j++)
                acc[j] = OI_S_mac(acc[j], a, W[p * 8 + j]);
        }
        for (size_t j = 0; j < 8; j++) {
            const size_t i = r * 8 + j;
            /* residual_mlp.c:24: op matmul(h,W[l]) >> u */
            double v0 = (double)acc[j];
            /* residual_mlp.c:25: op add(u,b[l]) >> u */
            double v1 = OI_ROUND_F32(OI_S_add(v0, (double)b[i % 8]));
            /* residual_mlp.c:26: op relu(u) >> u */
            double v2 = OI_S_relu_raw(v1, 0.0, OI_ROUND_F32);
            v2 = OI_ROUND_F32(v2);
            /* residual_mlp.c:27: op add(h,u) >> h */
            double v3 = OI_ROUND_F32(OI_S_add((double)h[i], v2));
            h[i] = (float)v3;
            (void)v0;
        }
    }
}

/* ---- the API ---- */

residual_mlp_ctx *residual_mlp_open(const char *model_path) { return residual_mlp_open_with(model_path, NULL); }

residual_mlp_ctx *residual_mlp_open_with(const char *model_path, const residual_mlp_options *options) {
    residual_mlp_ctx *ctx = (residual_mlp_ctx *)calloc(1, sizeof *ctx);
    if (ctx) {
        ctx->arena = (unsigned char *)calloc(1, residual_mlp_ARENA_BYTES + 1);
        ctx->state = (unsigned char *)calloc(1, residual_mlp_STATE_BYTES + 1);
    }
    if (!ctx || !ctx->arena || !ctx->state) {
        residual_mlp_close(ctx);
        residual_mlp_fail(residual_mlp_ERROR_MEMORY, "residual_mlp_open: out of memory");
        return NULL;
    }
    if (residual_mlp_map_model(ctx, model_path) != 0) {
        residual_mlp_close(ctx);
        return NULL;
    }
    residual_mlp_init_x(ctx);
    ctx->W_entries[0] = ctx->model + 656; /* res.mlp.w.0 */
    ctx->W_entries[1] = ctx->model + 912; /* res.mlp.w.1 */
    ctx->W_entries[2] = ctx->model + 1168; /* res.mlp.w.2 */
    ctx->b_entries[0] = ctx->model + 560; /* res.mlp.b.0 */
    ctx->b_entries[1] = ctx->model + 592; /* res.mlp.b.1 */
    ctx->b_entries[2] = ctx->model + 624; /* res.mlp.b.2 */
    (void)options; /* one thread: no kernel is worth splitting */
    return ctx;
}

void residual_mlp_close(residual_mlp_ctx *ctx) {
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

int residual_mlp_step(residual_mlp_ctx *ctx) {
    if (!ctx)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_step: no context");
    /* the start of a step: every memory kind starts as the simulator's does */
    if (!ctx->inserted[0])
        residual_mlp_init_x(ctx); /* dynamic, not set: as declared */

    /* the graph */
    memcpy((float *)(ctx->arena + 0), (float *)(ctx->state + 0), 64); /* residual_mlp.c:22: transfer x >> h */
    /* residual_mlp.c:23: loop layers (l in 0..num_layers) */
    for (int64_t l = 0; l < 3; l++) {
        residual_mlp_k0((float *)(ctx->arena + 0), (const float *)ctx->W_entries[l], (const float *)ctx->b_entries[l]); /* residual_mlp.c:24-27 */
#ifdef residual_mlp_DEBUG_DUMP
        residual_mlp_dump(ctx, 0, "h", (float *)(ctx->arena + 0), 10);
#endif
    }

    memset(ctx->inserted, 0, sizeof ctx->inserted);
    ctx->steps++;
    return 0;
}

int residual_mlp_set_x(residual_mlp_ctx *ctx, const float *values, size_t count) {
    if (!ctx || !values || count != 16u)
        return residual_mlp_fail(residual_mlp_ERROR_ARGUMENT, "residual_mlp_set_x: %zu values given, x holds 16", count);
    memcpy(ctx->state + 0, values, 64);
    ctx->inserted[0] = 1;
    return 0;
}

const float *residual_mlp_get_x(const residual_mlp_ctx *ctx, size_t *count) {
    if (count)
        *count = 16u;
    return ctx ? (float *)(ctx->state + 0) : NULL;
}

const float *residual_mlp_get_h(const residual_mlp_ctx *ctx, size_t *count) {
    if (count)
        *count = 16u;
    return ctx ? (float *)(ctx->arena + 0) : NULL;
}

