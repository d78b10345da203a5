/* kv_decode.c - graph "kv_decode", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * 7 kernels run 7 DSL op statements; plan.json lists them with their arena offsets.
 * Named sizes are specialized: the model's values at synthesis time:
 *   D = 4, n_layers = 2.
 * Build with -Dkv_decode_DEBUG_DUMP=dir to write every kernel's outputs as dir/stepS_kK_VAR.npy. */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "kv_decode.h"
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

#define kv_decode_FINGERPRINT 0x6b9ffa17f7a09830ull /* FNV-1a of the model's header and tables */
#define kv_decode_HEADER_BYTES 416ull   /* where the model's data section starts */

#ifdef __cplusplus
#define OI_THREAD_LOCAL thread_local
#else
#define OI_THREAD_LOCAL _Thread_local
#endif

struct kv_decode_ctx {
    unsigned char *arena; /* kv_decode_ARENA_BYTES: the temporaries, at planned offsets */
    unsigned char *state; /* kv_decode_STATE_BYTES: the declared variables */
    const unsigned char *model; /* the mapped model file */
    size_t model_size;
    int model_mapped;
    long long steps;
    const void *Wk_entries[2]; /* Wk(l): the model's layer.{l}.wk */
    const void *Wv_entries[2]; /* Wv(l): the model's layer.{l}.wv */
    int64_t K_size[2]; /* table K: the size of each index (largest used + 1) */
    int64_t V_size[2]; /* table V: the size of each index (largest used + 1) */
    int64_t len_keys; /* keys's leading dim, known at run time (at most 64) */
    float *view_keys; /* keys: its entries in the table it was read from, not a copy */
    int64_t len_vals; /* vals's leading dim, known at run time (at most 64) */
    float *view_vals; /* vals: its entries in the table it was read from, not a copy */
    int64_t len_mix; /* mix's leading dim, known at run time (at most 64) */
    int64_t len_score; /* score's leading dim, known at run time (at most 64) */
    unsigned char inserted[1]; /* per dynamic variable: set since the last step */
};

static OI_THREAD_LOCAL char kv_decode_error_text[512];

const char *kv_decode_last_error(void) { return kv_decode_error_text; }

static int kv_decode_fail(int code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(kv_decode_error_text, sizeof kv_decode_error_text, fmt, args);
    va_end(args);
    return code;
}

/* x: dynamic f32[1, 4] (../tests/synth/../../examples/kv_cache.c:18) */
static void kv_decode_init_x(kv_decode_ctx *ctx) {
    float *v = (float *)(ctx->state + 0);
    memset(v, 0, 16);
}

/* step: persistent i32[] (../tests/synth/../../examples/kv_cache.c:24) */
static void kv_decode_init_step(kv_decode_ctx *ctx) {
    int32_t *v = (int32_t *)(ctx->state + 16);
    for (size_t i = 0; i < 1; i++)
        v[i] = (int32_t)0LL; /* @init */
}

/* len: persistent i32[] (../tests/synth/../../examples/kv_cache.c:25) */
static void kv_decode_init_len(kv_decode_ctx *ctx) {
    int32_t *v = (int32_t *)(ctx->state + 24);
    for (size_t i = 0; i < 1; i++)
        v[i] = (int32_t)0LL; /* @init */
}

/* table K: entries of f32[1, 4], preallocated at l < 2 t < 64 (@fixed) */
static inline void kv_decode_init_K_entry(float *v) {
    memset(v, 0, 16);
}

static void kv_decode_init_K(kv_decode_ctx *ctx) {
    for (int64_t e = 0; e < 128; e++)
        kv_decode_init_K_entry((float *)(ctx->state + 32) + e * 4);
    memset(ctx->K_size, 0, sizeof ctx->K_size);
}

/* table V: entries of f32[1, 4], preallocated at l < 2 t < 64 (@fixed) */
static inline void kv_decode_init_V_entry(float *v) {
    memset(v, 0, 16);
}

static void kv_decode_init_V(kv_decode_ctx *ctx) {
    for (int64_t e = 0; e < 128; e++)
        kv_decode_init_V_entry((float *)(ctx->state + 2080) + e * 4);
    memset(ctx->V_size, 0, sizeof ctx->V_size);
}

/* Maps the model read-only and checks that it is the file this code was
 * synthesized for: the header and tables hash to kv_decode_FINGERPRINT. */
static int kv_decode_map_model(kv_decode_ctx *ctx, const char *path) {
    if (!path)
        return kv_decode_fail(kv_decode_ERROR_ARGUMENT, "kv_decode_open: no model path");
    FILE *f = fopen(path, "rb");
    if (!f)
        return kv_decode_fail(kv_decode_ERROR_IO, "%s: cannot open the model", path);
    if (fseek(f, 0, SEEK_END) != 0) {
        fclose(f);
        return kv_decode_fail(kv_decode_ERROR_IO, "%s: cannot seek", path);
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
        return kv_decode_fail(kv_decode_ERROR_IO, "%s: cannot read the model", path);
    ctx->model = (const unsigned char *)bytes;
    ctx->model_size = (size_t)size;
    uint64_t data_at = 0, hash = 0xcbf29ce484222325ull;
    for (int i = 7; i >= 0 && ctx->model_size >= 61; i--)
        data_at = data_at << 8 | ctx->model[53 + i]; /* offset_data, little-endian */
    if (ctx->model_size < 61 || data_at != kv_decode_HEADER_BYTES || data_at > ctx->model_size ||
        (uint64_t)ctx->model_size < 672ull)
        return kv_decode_fail(kv_decode_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(its layout differs); synthesize again for this file", path);
    for (uint64_t i = 0; i < data_at; i++) {
        hash ^= ctx->model[i];
        hash *= 0x100000001b3ull;
    }
    if (hash != kv_decode_FINGERPRINT)
        return kv_decode_fail(kv_decode_ERROR_MODEL, "%s: not the model this code was synthesized for "
                       "(fingerprint %016llx, expected %016llx); synthesize again for this file",
                       path, (unsigned long long)hash, (unsigned long long)kv_decode_FINGERPRINT);
    return 0;
}

#ifdef kv_decode_DEBUG_DUMP
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "npy.h"
#define kv_decode_STR2(x) #x
#define kv_decode_STR(x) kv_decode_STR2(x)
/* dir/stepS_kK_VAR.npy: a kernel's output, flat, to diff against the simulator */
static void kv_decode_dump(const kv_decode_ctx *ctx, int kernel, const char *name, const void *data, int dtype) {
    static const struct { const char *name; uint64_t count; } sizes[] = {
        {"x", 4u},
        {"Wk", 16u},
        {"Wv", 16u},
        {"step", 1u},
        {"len", 1u},
        {"K", 4u},
        {"V", 4u},
        {"h", 4u},
        {"k", 4u},
        {"v", 4u},
        {"keys", 4u},
        {"vals", 4u},
        {"mix", 4u},
        {"score", 1u},
        {"att", 4u},
    };
    uint64_t count = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, name) == 0)
            count = sizes[i].count;
    char path[1024];
    snprintf(path, sizeof path, "%s/step%lld_k%d_%s.npy", kv_decode_STR(kv_decode_DEBUG_DUMP),
             ctx->steps, kernel, name);
    oi_npy_write(path, (oi_npy_dtype)dtype, 1, &count, data, NULL);
}
#endif

/* ---- kernels ---- */

/* k0: matmul, 1 statement
 *   kv_cache.c:41: op matmul(h,Wk[l]) >> k
 */
static void kv_decode_k0(const float *h, const float *Wk, float *k) {
    for (size_t r = 0; r < 1; r++) {
        float acc[4];
        for (size_t j = 0; j < 4; j++)
            acc[j] = 0.0f;
        for (size_t p = 0; p < 4; p++) {
            const float a = h[r * 4 + p];
            for (size_t j = 0; j < 4; j++)
                acc[j] = OI_S_mac(acc[j], a, Wk[p * 4 + j]);
        }
        for (size_t j = 0; j < 4; j++) {
            const size_t i = r * 4 + j;
            /* kv_cache.c:41: op matmul(h,Wk[l]) >> k */
            double v0 = (double)acc[j];
            k[i] = acc[j];
            (void)v0;
        }
    }
}

/* k1: matmul, 1 statement
 *   kv_cache.c:42: op matmul(h,Wv[l]) >> v
 */
static void kv_decode_k1(const float *h, const float *Wv, float *v_) {
    for (size_t r = 0; r < 1; r++) {
        float acc[4];
        for (size_t j = 0; j < 4; j++)
            acc[j] = 0.0f;
        for (size_t p = 0; p < 4; p++) {
            const float a = h[r * 4 + p];
            for (size_t j = 0; j < 4; j++)
                acc[j] = OI_S_mac(acc[j], a, Wv[p * 4 + j]);
        }
        for (size_t j = 0; j < 4; j++) {
            const size_t i = r * 4 + j;
            /* kv_cache.c:42: op matmul(h,Wv[l]) >> v */
            double v0 = (double)acc[j];
            v_[i] = acc[j];
            (void)v0;
        }
    }
}

/* k2: elementwise, 1 statement
 *   kv_cache.c:47: op mul(keys,h) >> mix
 */
static void kv_decode_k2(int64_t n0, const float *keys, const float *h, float *mix) {
    for (size_t i = 0; i < (size_t)n0 * 4; i++) {
        /* kv_cache.c:47: op mul(keys,h) >> mix */
        double v0 = OI_ROUND_F32(OI_S_mul((double)keys[i], (double)h[i % 4]));
        mix[i] = (float)v0;
    }
}

/* k3: reduce, 1 statement
 *   kv_cache.c:48: op sum_axis(mix,axes=[2],keepdims=true) >> score
 */
static void kv_decode_k3(int64_t n0, const float *mix, float *score) {
    for (size_t o = 0; o < (size_t)n0 * 1; o++) {
        const size_t cols = 4;
        const float v = OI_S_row_sum_f32(mix + o * cols, (int64_t)cols);
        score[o] = v;
    }
}

/* k4: elementwise, 1 statement
 *   kv_cache.c:49: op mul(score,vals) >> mix
 */
static void kv_decode_k4(int64_t n0, const float *score, const float *vals, float *mix) {
    for (size_t i = 0; i < (size_t)n0 * 4; i++) {
        /* kv_cache.c:49: op mul(score,vals) >> mix */
        double v0 = OI_ROUND_F32(OI_S_mul((double)score[(i / 4 % 64 * 1)], (double)vals[i]));
        mix[i] = (float)v0;
    }
}

/* k5: reduce, 1 statement
 *   kv_cache.c:50: op sum_axis(mix,axes=[0]) >> att
 */
static void kv_decode_k5(int64_t n0, const float *mix, float *att) {
    for (size_t o = 0; o < 4; o++) {
        float acc = 0.0f;
        for (size_t q = 0; q < (size_t)n0 * 1; q++) {
            const size_t at = q / 1 % 64 * 4 + o / 1 % 4 * 1;
            acc = OI_S_sum_step(acc, mix[at]);
        }
        att[o] = acc;
    }
}

/* k6: elementwise, 1 statement
 *   kv_cache.c:51: op add(h,att) >> h
 */
static void kv_decode_k6(float *h, const float *att) {
    for (size_t i = 0; i < 4; i++) {
        /* kv_cache.c:51: op add(h,att) >> h */
        double v0 = OI_ROUND_F32(OI_S_add((double)h[i], (double)att[i]));
        h[i] = (float)v0;
    }
}

/* ---- the API ---- */

kv_decode_ctx *kv_decode_open(const char *model_path) { return kv_decode_open_with(model_path, NULL); }

kv_decode_ctx *kv_decode_open_with(const char *model_path, const kv_decode_options *options) {
    kv_decode_ctx *ctx = (kv_decode_ctx *)calloc(1, sizeof *ctx);
    if (ctx) {
        ctx->arena = (unsigned char *)calloc(1, kv_decode_ARENA_BYTES + 1);
        ctx->state = (unsigned char *)calloc(1, kv_decode_STATE_BYTES + 1);
    }
    if (!ctx || !ctx->arena || !ctx->state) {
        kv_decode_close(ctx);
        kv_decode_fail(kv_decode_ERROR_MEMORY, "kv_decode_open: out of memory");
        return NULL;
    }
    if (kv_decode_map_model(ctx, model_path) != 0) {
        kv_decode_close(ctx);
        return NULL;
    }
    kv_decode_init_x(ctx);
    ctx->Wk_entries[0] = ctx->model + 416; /* layer.0.wk */
    ctx->Wk_entries[1] = ctx->model + 544; /* layer.1.wk */
    ctx->Wv_entries[0] = ctx->model + 480; /* layer.0.wv */
    ctx->Wv_entries[1] = ctx->model + 608; /* layer.1.wv */
    kv_decode_init_step(ctx);
    kv_decode_init_len(ctx);
    kv_decode_init_K(ctx);
    kv_decode_init_V(ctx);
    ctx->len_keys = 1;
    ctx->len_vals = 1;
    ctx->len_mix = 1;
    ctx->len_score = 1;
    (void)options; /* one thread: no kernel is worth splitting */
    return ctx;
}

void kv_decode_close(kv_decode_ctx *ctx) {
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

int kv_decode_step(kv_decode_ctx *ctx) {
    if (!ctx)
        return kv_decode_fail(kv_decode_ERROR_ARGUMENT, "kv_decode_step: no context");
    /* the start of a step: every memory kind starts as the simulator's does */
    if (!ctx->inserted[0])
        kv_decode_init_x(ctx); /* dynamic, not set: as declared */

    /* the graph */
    memcpy((float *)(ctx->arena + 1280), (float *)(ctx->state + 0), 16); /* kv_cache.c:38: transfer x >> h */
    for (size_t i = 0; i < 1; i++) {
        int32_t *v = (int32_t *)(ctx->state + 24);
        v[i] = (int32_t)(uint64_t)((uint64_t)v[i] + (uint64_t)1LL);
    } /* kv_cache.c:39: cache.increment len */
    /* kv_cache.c:40: loop layers (l in 0..n_layers) */
    for (int64_t l = 0; l < 2; l++) {
        kv_decode_k0((float *)(ctx->arena + 1280), (const float *)ctx->Wk_entries[l], (float *)(ctx->arena + 1296)); /* kv_cache.c:41 */
#ifdef kv_decode_DEBUG_DUMP
        kv_decode_dump(ctx, 0, "k", (float *)(ctx->arena + 1296), 10);
#endif
        kv_decode_k1((float *)(ctx->arena + 1280), (const float *)ctx->Wv_entries[l], (float *)(ctx->arena + 1312)); /* kv_cache.c:42 */
#ifdef kv_decode_DEBUG_DUMP
        kv_decode_dump(ctx, 1, "v", (float *)(ctx->arena + 1312), 10);
#endif
        { /* kv_cache.c:43: cache.write k >> K[l,step] */
            const int64_t i0 = l;
            if (i0 < 0)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:43: K: index l = %lld is negative", (long long)i0);
            if (i0 >= 2)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:43: cache table K index l = %lld exceeds synthesized size 2", (long long)i0);
            if (i0 + 1 > ctx->K_size[0])
                ctx->K_size[0] = i0 + 1;
            const int64_t i1 = (int64_t)*(int32_t *)(ctx->state + 16);
            if (i1 < 0)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:43: K: index t = %lld is negative", (long long)i1);
            if (i1 >= 64)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:43: cache table K index t = %lld exceeds fixed size 64", (long long)i1);
            if (i1 + 1 > ctx->K_size[1])
                ctx->K_size[1] = i1 + 1;
            memcpy((float *)(ctx->state + 32) + (i0 * 64 + i1) * 4, (float *)(ctx->arena + 1296), 16);
        }
        { /* kv_cache.c:44: cache.write v >> V[l,step] */
            const int64_t i0 = l;
            if (i0 < 0)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:44: V: index l = %lld is negative", (long long)i0);
            if (i0 >= 2)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:44: cache table V index l = %lld exceeds synthesized size 2", (long long)i0);
            if (i0 + 1 > ctx->V_size[0])
                ctx->V_size[0] = i0 + 1;
            const int64_t i1 = (int64_t)*(int32_t *)(ctx->state + 16);
            if (i1 < 0)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:44: V: index t = %lld is negative", (long long)i1);
            if (i1 >= 64)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:44: cache table V index t = %lld exceeds fixed size 64", (long long)i1);
            if (i1 + 1 > ctx->V_size[1])
                ctx->V_size[1] = i1 + 1;
            memcpy((float *)(ctx->state + 2080) + (i0 * 64 + i1) * 4, (float *)(ctx->arena + 1312), 16);
        }
        { /* kv_cache.c:45: cache.read K[l,0..len] >> keys */
            const int64_t i0 = l;
            if (i0 < 0)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:45: K: index l = %lld is negative", (long long)i0);
            if (i0 >= 2)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:45: cache table K index l = %lld exceeds synthesized size 2", (long long)i0);
            if (i0 + 1 > ctx->K_size[0])
                ctx->K_size[0] = i0 + 1;
            int64_t lo = 0, hi = ctx->K_size[1];
            lo = 0;
            hi = (int64_t)*(int32_t *)(ctx->state + 24);
            if (hi < 0)
                hi += ctx->K_size[1];
            if (lo < 0 || hi < lo)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:45: K: slice %lld..%lld of index t is empty or reversed (size %lld)", (long long)lo, (long long)hi, (long long)ctx->K_size[1]);
            const int64_t last = hi > lo ? hi - 1 : 0;
            if (last < 0)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:45: K: index t = %lld is negative", (long long)last);
            if (last >= 64)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:45: cache table K index t = %lld exceeds fixed size 64", (long long)last);
            if (hi > ctx->K_size[1])
                ctx->K_size[1] = hi;
            ctx->view_keys = (float *)(ctx->state + 32) + (i0 * 64 + lo) * 4;
            ctx->len_keys = hi - lo;
        }
        { /* kv_cache.c:46: cache.read V[l,0..len] >> vals */
            const int64_t i0 = l;
            if (i0 < 0)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:46: V: index l = %lld is negative", (long long)i0);
            if (i0 >= 2)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:46: cache table V index l = %lld exceeds synthesized size 2", (long long)i0);
            if (i0 + 1 > ctx->V_size[0])
                ctx->V_size[0] = i0 + 1;
            int64_t lo = 0, hi = ctx->V_size[1];
            lo = 0;
            hi = (int64_t)*(int32_t *)(ctx->state + 24);
            if (hi < 0)
                hi += ctx->V_size[1];
            if (lo < 0 || hi < lo)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:46: V: slice %lld..%lld of index t is empty or reversed (size %lld)", (long long)lo, (long long)hi, (long long)ctx->V_size[1]);
            const int64_t last = hi > lo ? hi - 1 : 0;
            if (last < 0)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:46: V: index t = %lld is negative", (long long)last);
            if (last >= 64)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:46: cache table V index t = %lld exceeds fixed size 64", (long long)last);
            if (hi > ctx->V_size[1])
                ctx->V_size[1] = hi;
            ctx->view_vals = (float *)(ctx->state + 2080) + (i0 * 64 + lo) * 4;
            ctx->len_vals = hi - lo;
        }
        {
            const int64_t n0 = ctx->len_keys;
            kv_decode_k2(n0, ctx->view_keys, (float *)(ctx->arena + 1280), (float *)(ctx->arena + 0)); /* kv_cache.c:47 */
#ifdef kv_decode_DEBUG_DUMP
            kv_decode_dump(ctx, 2, "mix", (float *)(ctx->arena + 0), 10);
#endif
            ctx->len_mix = n0;
        }
        {
            const int64_t n0 = ctx->len_mix;
            kv_decode_k3(n0, (float *)(ctx->arena + 0), (float *)(ctx->arena + 1024)); /* kv_cache.c:48 */
#ifdef kv_decode_DEBUG_DUMP
            kv_decode_dump(ctx, 3, "score", (float *)(ctx->arena + 1024), 10);
#endif
            ctx->len_score = n0;
        }
        {
            const int64_t n0 = ctx->len_score;
            if (ctx->len_vals != n0)
                return kv_decode_fail(kv_decode_ERROR_RUNTIME, "kv_cache.c:49: score has %lld rows, vals %lld", (long long)n0, (long long)ctx->len_vals);
            kv_decode_k4(n0, (float *)(ctx->arena + 1024), ctx->view_vals, (float *)(ctx->arena + 0)); /* kv_cache.c:49 */
#ifdef kv_decode_DEBUG_DUMP
            kv_decode_dump(ctx, 4, "mix", (float *)(ctx->arena + 0), 10);
#endif
            ctx->len_mix = n0;
        }
        {
            const int64_t n0 = ctx->len_mix;
            kv_decode_k5(n0, (float *)(ctx->arena + 0), (float *)(ctx->arena + 1328)); /* kv_cache.c:50 */
#ifdef kv_decode_DEBUG_DUMP
            kv_decode_dump(ctx, 5, "att", (float *)(ctx->arena + 1328), 10);
#endif
        }
        kv_decode_k6((float *)(ctx->arena + 1280), (float *)(ctx->arena + 1328)); /* kv_cache.c:51 */
#ifdef kv_decode_DEBUG_DUMP
        kv_decode_dump(ctx, 6, "h", (float *)(ctx->arena + 1280), 10);
#endif
    }
    for (size_t i = 0; i < 1; i++) {
        int32_t *v = (int32_t *)(ctx->state + 16);
        v[i] = (int32_t)(uint64_t)((uint64_t)v[i] + (uint64_t)1LL);
    } /* kv_cache.c:53: cache.increment step */

    memset(ctx->inserted, 0, sizeof ctx->inserted);
    ctx->steps++;
    return 0;
}

int kv_decode_set_x(kv_decode_ctx *ctx, const float *values, size_t count) {
    if (!ctx || !values || count != 4u)
        return kv_decode_fail(kv_decode_ERROR_ARGUMENT, "kv_decode_set_x: %zu values given, x holds 4", count);
    memcpy(ctx->state + 0, values, 16);
    ctx->inserted[0] = 1;
    return 0;
}

const float *kv_decode_get_x(const kv_decode_ctx *ctx, size_t *count) {
    if (count)
        *count = 4u;
    return ctx ? (float *)(ctx->state + 0) : NULL;
}

const int32_t *kv_decode_get_step(const kv_decode_ctx *ctx, size_t *count) {
    if (count)
        *count = 1u;
    return ctx ? (int32_t *)(ctx->state + 16) : NULL;
}

const int32_t *kv_decode_get_len(const kv_decode_ctx *ctx, size_t *count) {
    if (count)
        *count = 1u;
    return ctx ? (int32_t *)(ctx->state + 24) : NULL;
}

const float *kv_decode_get_h(const kv_decode_ctx *ctx, size_t *count) {
    if (count)
        *count = 4u;
    return ctx ? (float *)(ctx->arena + 1280) : NULL;
}

int kv_decode_read_K(const kv_decode_ctx *ctx, float *values, size_t capacity, size_t *count, int64_t *shape) {
    if (!ctx)
        return kv_decode_fail(kv_decode_ERROR_ARGUMENT, "kv_decode_read_K: no context");
    const int64_t dims[] = {ctx->K_size[0], ctx->K_size[1], 1, 4};
    size_t total = 1;
    for (int d = 0; d < 4; d++)
        total *= (size_t)dims[d];
    if (count)
        *count = total;
    if (shape)
        memcpy(shape, dims, sizeof dims);
    if (!values)
        return 0;
    if (capacity < total)
        return kv_decode_fail(kv_decode_ERROR_ARGUMENT, "kv_decode_read_K: %zu values fit, K holds %zu", capacity, total);
    const float *stored = (const float *)(ctx->state + 32u); /* in the state block */
    int64_t i[2] = {0};
    for (size_t e = 0; e * 4 < total; e++) {
        const int64_t at = i[0] * 64 + i[1]; /* the entry, at the bounds' strides */
        memcpy(values + e * 4, stored + at * 4, 4 * sizeof *values);
        for (int k = 1; k >= 0 && ++i[k] == dims[k]; k--)
            i[k] = 0;
    }
    return 0;
}

int kv_decode_read_V(const kv_decode_ctx *ctx, float *values, size_t capacity, size_t *count, int64_t *shape) {
    if (!ctx)
        return kv_decode_fail(kv_decode_ERROR_ARGUMENT, "kv_decode_read_V: no context");
    const int64_t dims[] = {ctx->V_size[0], ctx->V_size[1], 1, 4};
    size_t total = 1;
    for (int d = 0; d < 4; d++)
        total *= (size_t)dims[d];
    if (count)
        *count = total;
    if (shape)
        memcpy(shape, dims, sizeof dims);
    if (!values)
        return 0;
    if (capacity < total)
        return kv_decode_fail(kv_decode_ERROR_ARGUMENT, "kv_decode_read_V: %zu values fit, V holds %zu", capacity, total);
    const float *stored = (const float *)(ctx->state + 2080u); /* in the state block */
    int64_t i[2] = {0};
    for (size_t e = 0; e * 4 < total; e++) {
        const int64_t at = i[0] * 64 + i[1]; /* the entry, at the bounds' strides */
        memcpy(values + e * 4, stored + at * 4, 4 * sizeof *values);
        for (int k = 1; k >= 0 && ++i[k] == dims[k]; k--)
            i[k] = 0;
    }
    return 0;
}

