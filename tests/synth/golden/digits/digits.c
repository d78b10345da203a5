/* digits.c - graph "digits", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * 3 kernels run 6 DSL op statements; plan.json lists them with their arena offsets.
 * Named sizes are specialized: the model's values at synthesis time:
 *   C = 10, F = 64, H = 32, N = 359.
 * Build with -Ddigits_DEBUG_DUMP=dir to write every kernel's outputs as dir/stepS_kK_VAR.npy. */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "digits.h"
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

#define digits_FINGERPRINT 0xd153ab83649c3a26ull /* FNV-1a of the model's header and tables */
#define digits_HEADER_BYTES 928ull   /* where the model's data section starts */

#ifdef __cplusplus
#define OI_THREAD_LOCAL thread_local
#else
#define OI_THREAD_LOCAL _Thread_local
#endif

struct digits_ctx {
    unsigned char *arena; /* digits_ARENA_BYTES: the temporaries, at planned offsets */
    unsigned char *state; /* digits_STATE_BYTES: the declared variables */
    const unsigned char *model; /* the mapped model file */
    size_t model_size;
    int model_mapped;
    long long steps;
    unsigned char inserted[1]; /* per dynamic variable: set since the last step */
};

static OI_THREAD_LOCAL char digits_error_text[512];

const char *digits_last_error(void) { return digits_error_text; }

static int digits_fail(int code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(digits_error_text, sizeof digits_error_text, fmt, args);
    va_end(args);
    return code;
}

/* image: dynamic f32[1, 64] (../tests/synth/../../examples/digits.c:12) */
static void digits_init_image(digits_ctx *ctx) {
    float *v = (float *)(ctx->state + 0);
    memset(v, 0, 256);
}

/* Maps the model read-only and checks that it is the file this code was
 * synthesized for: the header and tables hash to digits_FINGERPRINT. */
static int digits_map_model(digits_ctx *ctx, const char *path) {
    if (!path)
        return digits_fail(digits_ERROR_ARGUMENT, "digits_open: no model path");
    FILE *f = fopen(path, "rb");
    if (!f)
        return digits_fail(digits_ERROR_IO, "%s: cannot open the model", path);
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return digits_fail(digits_ERROR_IO, "%s: cannot seek", path);
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
        return digits_fail(digits_ERROR_IO, "%s: cannot read the model", path);
    ctx->model = (const unsigned char *)bytes;
    ctx->model_size = (size_t)size;
    uint64_t data_at = 0, hash = 0xcbf29ce484222325ull;
    for (int i = 7; i >= 0 && ctx->model_size >= 61; i--)
        data_at = data_at << 8 | ctx->model[53 + i]; /* offset_data, little-endian */
    if (ctx->model_size < 61 || data_at != digits_HEADER_BYTES || data_at > ctx->model_size ||
        (uint64_t)ctx->model_size < 136960ull)
        return digits_fail(digits_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(its layout differs); synthesize again for this file", path);
    for (uint64_t i = 0; i < data_at; i++) {
        hash ^= ctx->model[i];
        hash *= 0x100000001b3ull;
    }
    if (hash != digits_FINGERPRINT)
        return digits_fail(digits_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(fingerprint %016llx, expected %016llx); synthesize again for this file",
                       path, (unsigned long long)hash, (unsigned long long)digits_FINGERPRINT);
    return 0;
}

#ifdef digits_DEBUG_DUMP
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "npy.h"
#define digits_STR2(x) #x
#define digits_STR(x) digits_STR2(x)
/* dir/stepS_kK_VAR.npy: a kernel's output, flat, to diff against the simulator */
static void digits_dump(const digits_ctx *ctx, int kernel, const char *name, const void *data, int dtype) {
    static const struct { const char *name; uint64_t count; } sizes[] = {
        {"image", 64u},
        {"w1", 2048u},
        {"b1", 32u},
        {"w2", 320u},
        {"b2", 10u},
        {"h", 32u},
        {"logits", 10u},
        {"probs", 10u},
    };
    uint64_t count = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, name) == 0)
            count = sizes[i].count;
    char path[1024];
    snprintf(path, sizeof path, "%s/step%lld_k%d_%s.npy", digits_STR(digits_DEBUG_DUMP),
             ctx->steps, kernel, name);
    oi_npy_write(path, (oi_npy_dtype)dtype, 1, &count, data, NULL);
}
#endif

/* ---- kernels ---- */

/* k0: matmul, 3 statements
 *   digits.c:21: op matmul(image,w1) >> h
 *   digits.c:22: op add(h,b1) >> h
 *   digits.c:23: op relu(h) >> h
 */
static void digits_k0(const float *image, const float *w1, float *h, const float *b1) {
    for (size_t r = 0; r < 1; r++) {
        float acc[32];
        for (size_t j = 0; j < 32; j++)
            acc[j] = 0.0f;
        for (size_t p = 0; p < 64; p++) {
            const float a = image[r * 64 + p];
            for (size_t j = 0; j < 32; j++)
                acc[j] = OI_S_mac(acc[j], a, w1[p * 32 + j]);
        }
        for (size_t j = 0; j < 32; j++) {
            const size_t i = r * 32 + j;
            /* digits.c:21: op matmul(image,w1) >> h */
            double v0 = (double)acc[j];
            /* digits.c:22: op add(h,b1) >> h */
            double v1 = OI_ROUND_F32(OI_S_add(v0, (double)b1[i]));
            /* digits.c:23: op relu(h) >> h */
            double v2 = OI_S_relu_raw(v1, 0.0, OI_ROUND_F32);
            v2 = OI_ROUND_F32(v2);
            h[i] = (float)v2;
            (void)v0;
        }
    }
}

/* k1: matmul, 2 statements
 *   digits.c:24: op matmul(h,w2) >> logits
 *   digits.c:25: op add(logits,b2) >> logits
 */
static void digits_k1(const float *h, const float *w2, float *logits, const float *b2) {
    for (size_t r = 0; r < 1; r++) {
        float acc[10];
        for (size_t j = 0; j < 10; j++)
            acc[j] = 0.0f;
        for (size_t p = 0; p < 32; p++) {
            const float a = h[r * 32 + p];
            for (size_t j = 0; j < 10; j++)
                acc[j] = OI_S_mac(acc[j], a, w2[p * 10 + j]);
        }
        for (size_t j = 0; j < 10; j++) {
            const size_t i = r * 10 + j;
            /* digits.c:24: op matmul(h,w2) >> logits */
            double v0 = (double)acc[j];
            /* digits.c:25: op add(logits,b2) >> logits */
            double v1 = OI_ROUND_F32(OI_S_add(v0, (double)b2[i]));
            logits[i] = (float)v1;
            (void)v0;
        }
    }
}

/* k2: softmax, 1 statement
 *   digits.c:26: op softmax(logits) >> probs
 */
static void digits_k2(const float *logits, float *probs) {
    for (size_t r = 0; r < 1; r++) {
        const float *xr = logits + r * 10;
        float *yr = probs + r * 10;
        float m = xr[0];
        for (size_t j = 1; j < 10; j++)
            m = xr[j] > m ? xr[j] : m;
        double sum = 0.0;
        for (size_t j = 0; j < 10; j++) {
            yr[j] = expf(xr[j] - m);
            sum = OI_S_sum_step(sum, (double)yr[j]);
        }
        const float inv = (float)(1.0 / sum);
        for (size_t j = 0; j < 10; j++)
            yr[j] = yr[j] * inv;
    }
}

/* ---- the API ---- */

digits_ctx *digits_open(const char *model_path) { return digits_open_with(model_path, NULL); }

digits_ctx *digits_open_with(const char *model_path, const digits_options *options) {
    digits_ctx *ctx = (digits_ctx *)calloc(1, sizeof *ctx);
    if (ctx) {
        ctx->arena = (unsigned char *)calloc(1, digits_ARENA_BYTES + 1);
        ctx->state = (unsigned char *)calloc(1, digits_STATE_BYTES + 1);
    }
    if (!ctx || !ctx->arena || !ctx->state) {
        digits_close(ctx);
        digits_fail(digits_ERROR_MEMORY, "digits_open: out of memory");
        return NULL;
    }
    if (digits_map_model(ctx, model_path) != 0) {
        digits_close(ctx);
        return NULL;
    }
    digits_init_image(ctx);
    (void)options; /* one thread: no kernel is worth splitting */
    return ctx;
}

void digits_close(digits_ctx *ctx) {
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

int digits_step(digits_ctx *ctx) {
    if (!ctx)
        return digits_fail(digits_ERROR_ARGUMENT, "digits_step: no context");
    /* the start of a step: every memory kind starts as the simulator's does */
    if (!ctx->inserted[0])
        digits_init_image(ctx); /* dynamic, not set: as declared */

    /* the graph */
    digits_k0((float *)(ctx->state + 0), (const float *)(ctx->model + 1080), (float *)(ctx->arena + 0), (const float *)(ctx->model + 952)); /* digits.c:21-23 */
#ifdef digits_DEBUG_DUMP
    digits_dump(ctx, 0, "h", (float *)(ctx->arena + 0), 10);
#endif
    digits_k1((float *)(ctx->arena + 0), (const float *)(ctx->model + 9312), (float *)(ctx->arena + 128), (const float *)(ctx->model + 9272)); /* digits.c:24-25 */
#ifdef digits_DEBUG_DUMP
    digits_dump(ctx, 1, "logits", (float *)(ctx->arena + 128), 10);
#endif
    digits_k2((float *)(ctx->arena + 128), (float *)(ctx->arena + 0)); /* digits.c:26 */
#ifdef digits_DEBUG_DUMP
    digits_dump(ctx, 2, "probs", (float *)(ctx->arena + 0), 10);
#endif

    memset(ctx->inserted, 0, sizeof ctx->inserted);
    ctx->steps++;
    return 0;
}

int digits_set_image(digits_ctx *ctx, const float *values, size_t count) {
    if (!ctx || !values || count != 64u)
        return digits_fail(digits_ERROR_ARGUMENT, "digits_set_image: %zu values given, image holds 64", count);
    memcpy(ctx->state + 0, values, 256);
    ctx->inserted[0] = 1;
    return 0;
}

const float *digits_get_image(const digits_ctx *ctx, size_t *count) {
    if (count)
        *count = 64u;
    return ctx ? (float *)(ctx->state + 0) : NULL;
}

const float *digits_get_w1(const digits_ctx *ctx, size_t *count) {
    if (count)
        *count = 2048u;
    return ctx ? (const float *)(ctx->model + 1080) : NULL;
}

const float *digits_get_b1(const digits_ctx *ctx, size_t *count) {
    if (count)
        *count = 32u;
    return ctx ? (const float *)(ctx->model + 952) : NULL;
}

const float *digits_get_w2(const digits_ctx *ctx, size_t *count) {
    if (count)
        *count = 320u;
    return ctx ? (const float *)(ctx->model + 9312) : NULL;
}

const float *digits_get_b2(const digits_ctx *ctx, size_t *count) {
    if (count)
        *count = 10u;
    return ctx ? (const float *)(ctx->model + 9272) : NULL;
}

const float *digits_get_probs(const digits_ctx *ctx, size_t *count) {
    if (count)
        *count = 10u;
    return ctx ? (float *)(ctx->arena + 0) : NULL;
}

