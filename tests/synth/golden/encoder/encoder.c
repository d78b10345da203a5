/* encoder.c - graph "encoder", synthesized by OpenInfer 0.1.0 for the CPU (C11).
 * 9 kernels run 19 DSL op statements; plan.json lists them with their arena offsets.
 * Named sizes are specialized: the model's values at synthesis time:
 *   B = 1, D = 384, Dh = 32, F = 1536, H = 12, S = 128, num_layers = 2.
 * Build with -Dencoder_DEBUG_DUMP=dir to write every kernel's outputs as dir/stepS_kK_VAR.npy. */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "encoder.h"
#include "oi_scalar.h"
#include "oi_gemm.h"
#include "oi_runtime.h"

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

#define encoder_FINGERPRINT 0x4c58df09c3429a01ull /* FNV-1a of the model's header and tables */
#define encoder_HEADER_BYTES 2464ull   /* where the model's data section starts */

#ifdef __cplusplus
#define OI_THREAD_LOCAL thread_local
#else
#define OI_THREAD_LOCAL _Thread_local
#endif

struct encoder_ctx {
    unsigned char *arena; /* encoder_ARENA_BYTES: the temporaries, at planned offsets */
    unsigned char *state; /* encoder_STATE_BYTES: the declared variables */
    const unsigned char *model; /* the mapped model file */
    size_t model_size;
    int model_mapped;
    long long steps;
    const struct oi_micro *mk; /* the micro-kernel, chosen at open */
    unsigned char *packed; /* encoder_PACKED_BYTES, 64-byte aligned: the packed weights */
    void *packed_block;
    oi_rt_pool pool; /* the step's threads (oi_runtime.h) */
    const void *Wq_entries[2]; /* Wq(l): the model's enc.{l}.wq */
    const void *bq_entries[2]; /* bq(l): the model's enc.{l}.bq */
    const void *Wk_entries[2]; /* Wk(l): the model's enc.{l}.wk */
    const void *bk_entries[2]; /* bk(l): the model's enc.{l}.bk */
    const void *Wv_entries[2]; /* Wv(l): the model's enc.{l}.wv */
    const void *bv_entries[2]; /* bv(l): the model's enc.{l}.bv */
    const void *Wo_entries[2]; /* Wo(l): the model's enc.{l}.wo */
    const void *bo_entries[2]; /* bo(l): the model's enc.{l}.bo */
    const void *W1_entries[2]; /* W1(l): the model's enc.{l}.w1 */
    const void *b1_entries[2]; /* b1(l): the model's enc.{l}.b1 */
    const void *W2_entries[2]; /* W2(l): the model's enc.{l}.w2 */
    const void *b2_entries[2]; /* b2(l): the model's enc.{l}.b2 */
    const void *g1_entries[2]; /* g1(l): the model's enc.{l}.ln1_g */
    const void *be1_entries[2]; /* be1(l): the model's enc.{l}.ln1_b */
    const void *g2_entries[2]; /* g2(l): the model's enc.{l}.ln2_g */
    const void *be2_entries[2]; /* be2(l): the model's enc.{l}.ln2_b */
    unsigned char inserted[1]; /* per dynamic variable: set since the last step */
};

struct oi_micro;

static OI_THREAD_LOCAL char encoder_error_text[512];

const char *encoder_last_error(void) { return encoder_error_text; }

static int encoder_fail(int code, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(encoder_error_text, sizeof encoder_error_text, fmt, args);
    va_end(args);
    return code;
}

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
/* dir/stepS_kK_VAR.npy: a kernel's output, flat, to diff against the simulator */
static void encoder_dump(const encoder_ctx *ctx, int kernel, const char *name, const void *data, int dtype) {
    static const struct { const char *name; uint64_t count; } sizes[] = {
        {"x", 49152u},
        {"Wq", 147456u},
        {"bq", 384u},
        {"Wk", 147456u},
        {"bk", 384u},
        {"Wv", 147456u},
        {"bv", 384u},
        {"Wo", 147456u},
        {"bo", 384u},
        {"W1", 589824u},
        {"b1", 1536u},
        {"W2", 589824u},
        {"b2", 384u},
        {"g1", 384u},
        {"be1", 384u},
        {"g2", 384u},
        {"be2", 384u},
        {"h", 49152u},
        {"q", 49152u},
        {"k", 49152u},
        {"v", 49152u},
        {"qs", 49152u},
        {"ks", 49152u},
        {"vs", 49152u},
        {"qh", 49152u},
        {"kh", 49152u},
        {"vh", 49152u},
        {"ctx", 49152u},
        {"ctx_s", 49152u},
        {"joined", 49152u},
        {"proj", 49152u},
        {"res", 49152u},
        {"ffn", 196608u},
    };
    uint64_t count = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, name) == 0)
            count = sizes[i].count;
    char path[1024];
    snprintf(path, sizeof path, "%s/step%lld_k%d_%s.npy", encoder_STR(encoder_DEBUG_DUMP),
             ctx->steps, kernel, name);
    oi_npy_write(path, (oi_npy_dtype)dtype, 1, &count, data, NULL);
}
#endif

/* ---- kernels ---- */

#define OI_GEMM_KC 512 /* k steps per packed block: gemm.c's kc */
#define OI_GEMM_ROWS 132 /* rows of A per oi_gemm_packed call, at most */

typedef void (*oi_micro_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc, float alpha,
                            float beta, const float *bias);
/* rows_fn: the same tile with A read in place (row r of step p at
 * a[r * lda + p]), no packing of full row blocks; NULL: A is packed. */
typedef void (*oi_micro_rows_fn)(int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc,
                                 float alpha, float beta, const float *bias);
/* vmap, vmax, vsum: vexp.h's loops on the same ISA (NULL: the scalar loops):
 * y = op(x); the largest of x; the sum of e^(x - shift) with y = e^(x - shift).
 * attn: nn.c's direct attention on a block of query rows (NULL: the packed gemms).
 * drow: nn.c's decode loops on one query row over a head's keys (NULL: the plain loops). */
typedef struct oi_micro {
    int mr, nr;
    oi_micro_fn fn;
    oi_micro_rows_fn rows_fn;
    int mr_tail; /* rows_tail: rows_fn for a last partial panel of at most mr_tail rows (NULL: none) */
    oi_micro_rows_fn rows_tail;
    void (*vmap)(oi__vexp_op op, const float *x, float *y, int64_t n);
    float (*vmax)(const float *x, int64_t n);
    double (*vsum)(const float *x, float *y, int64_t n, float shift, bool diff);
    void (*attn)(const oi__attn_f32 *a);
    void (*drow)(const float *q, const float *k, int64_t ks, const float *v, int64_t vs, int64_t n, int64_t dim,
                 int64_t v_dim, float scale, float *scores, float *out);
} oi_micro;
static const oi_micro oi_micros[] = {
    {OI__GEMM_PORTABLE_MR, OI__GEMM_PORTABLE_NR, oi__gemm_f32_kernel_portable, NULL, 0, NULL, NULL, NULL, NULL, NULL,
     NULL},
#if OI__GEMM_X86
    {6, 16, oi__gemm_f32_kernel_avx2, oi__gemm_f32_kernel_rows_avx2, 4, oi__gemm_f32_kernel_rows4_avx2,
     oi__vexp_map_avx2, oi__vexp_max_avx2, oi__vexp_sum_avx2, oi__attn_f32_avx2, oi__attn_dec_row},
    {12, 32, oi__gemm_f32_kernel_avx512, oi__gemm_f32_kernel_rows_avx512, 8, oi__gemm_f32_kernel_rows8_avx512,
     oi__vexp_map_avx512, oi__vexp_max_avx512, oi__vexp_sum_avx512, oi__attn_f32_avx512, oi__attn_dec_row},
#endif
};

static const oi_micro *oi_micro_select(void) {
    const char *cap = getenv("OPENINFER_ISA");
    if (cap && strcmp(cap, "portable") == 0)
        return &oi_micros[0];
#if OI__GEMM_X86
    __builtin_cpu_init();
#ifndef OI_GEMM_AVX2_ONLY
    if (!(cap && strcmp(cap, "avx2") == 0) && __builtin_cpu_supports("avx512f"))
        return &oi_micros[2];
#endif
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return &oi_micros[1];
#endif
    return &oi_micros[0];
}

static inline float *oi_align64(float *p) { return (float *)(((uintptr_t)p + 63) & ~(uintptr_t)63); }

/* B (value v of step p at b[v * v_stride + p * p_stride]: k steps, n
 * values) in gemm.c's packed layout, by gemm.c's packing; dst 64-byte
 * aligned, k x n rounded up to nr floats long. */
static void oi_pack_b(const oi_micro *mk, const float *b, int64_t v_stride, int64_t p_stride, int64_t k,
                      int64_t n, float *dst) {
    const int64_t n_pad = (n + mk->nr - 1) / mk->nr * mk->nr;
    for (int64_t p0 = 0; p0 < k; p0 += OI_GEMM_KC) {
        const int64_t kc = k - p0 < OI_GEMM_KC ? k - p0 : OI_GEMM_KC;
        if (v_stride == 1)
            oi__gemm_f32_pack_cols(b + p0 * p_stride, p_stride, n, kc, mk->nr, dst + p0 * n_pad);
        else
            oi__gemm_f32_pack_strided(b + p0 * p_stride, v_stride, p_stride, n, kc, mk->nr, dst + p0 * n_pad);
    }
}

/* h rows of A (row stride lda), kc steps, as one mr-row micro-panel:
 * step p's values side by side, rows past h zero. */
static inline void oi_pack_a(const float *a, int64_t lda, int64_t h, int64_t kc, int mr, float *dst) {
    for (int64_t p = 0; p < kc; p++)
        for (int i = 0; i < mr; i++)
            dst[p * mr + i] = i < h ? a[i * lda + p] : 0.0f;
}

/* The tiles of a matmul whose B is packed at open, as gemm.c's packed
 * path cuts C for this ISA and these threads (its own planning,
 * oi_gemm.h): tiles_m x tiles_n tasks; a row tile holds whole row
 * panels dealt out evenly (oi__gemm_tile_rows), a column tile tile_n. */
typedef struct oi_gemm_split {
    int64_t mr, m, n, tile_n, tiles_m, tiles_n;
} oi_gemm_split;

static oi_gemm_split oi_gemm_plan(const oi_micro *mk, int64_t m, int64_t n, int64_t k, int threads) {
    int64_t tile_m, tile_n;
    if (m * n * k < OI__GEMM_PARALLEL_MIN)
        threads = 1;
    oi__gemm_plan_tiles(mk->mr, mk->nr, OI__GEMM_MAX_TILE_M, m, n, threads, &tile_m, &tile_n);
    if (mk->rows_fn && !oi__gemm_rows_alias(k)) /* A (m x k) read in place */
        oi__gemm_plan_fine_in_place(mk->mr, mk->nr, OI_GEMM_KC, m, n, threads, &tile_m, &tile_n);
    oi_gemm_split sp = {mk->mr, m, n, tile_n, (m + tile_m - 1) / tile_m, (n + tile_n - 1) / tile_n};
    return sp;
}

static int oi_gemm_tasks(const oi_micro *mk, int64_t m, int64_t n, int64_t k, int threads) {
    const oi_gemm_split sp = oi_gemm_plan(mk, m, n, k, threads);
    return (int)(sp.tiles_m * sp.tiles_n);
}

/* Task t's rows [r0, r1) and columns [c0, c1), as gemm.c's task. */
static void oi_gemm_tile(const oi_gemm_split *sp, int t, int64_t *r0, int64_t *r1, int64_t *c0, int64_t *c1) {
    int64_t rows;
    oi__gemm_tile_rows(sp->mr, sp->m, sp->tiles_m, t / sp->tiles_n, r0, &rows);
    *r1 = *r0 + rows;
    *c0 = t % sp->tiles_n * sp->tile_n;
    *c1 = *c0 + sp->tile_n < sp->n ? *c0 + sp->tile_n : sp->n;
}

/* c[rows x cols] (row stride ldc) = a[rows x k] (row stride lda) times
 * columns [j0, j0 + cols) of a B of n columns packed by oi_pack_b; j0 a
 * multiple of nr. gemm.c's macro-kernel: per block of kc steps and of
 * OI__GEMM_NC columns, per mr rows of A (in L1) every nr-column panel
 * (from L2). A is read in place where the ISA can and its rows do not
 * alias in L1: a last partial row panel by the ISA's shorter kernel on
 * the rows that end with it, or by the full one, or (fewer rows in all)
 * copied with zeros below; else packed per kc block, OI_GEMM_ROWS rows
 * at a time. Edge tiles run whole on a scratch tile. bias: NULL, or
 * cols values added to C's rows with the first k block, as gemm.c adds it. */
static void oi_gemm_packed(const oi_micro *mk, const float *a, int64_t lda, int64_t rows, int64_t k, int64_t n,
                           const float *bp, int64_t j0, int64_t cols, float *c, int64_t ldc, const float *bias) {
    const int mr = mk->mr, nr = mk->nr;
    const int in_place = mk->rows_fn && !oi__gemm_rows_alias(lda);
    if (!in_place && rows > OI_GEMM_ROWS) {
        for (int64_t r = 0; r < rows; r += OI_GEMM_ROWS)
            oi_gemm_packed(mk, a + r * lda, lda, rows - r < OI_GEMM_ROWS ? rows - r : OI_GEMM_ROWS, k, n, bp, j0,
                           cols, c + r * ldc, ldc, bias);
        return;
    }
    float a_raw[OI_GEMM_KC * OI_GEMM_ROWS + 16], e_raw[12 * 32 + 16], t_raw[12 * OI_GEMM_KC + 16];
    float *ap = oi_align64(a_raw), *edge = oi_align64(e_raw), *tail = oi_align64(t_raw);
    const int64_t n_pad = (n + nr - 1) / nr * nr;
    for (int64_t p0 = 0; p0 < k; p0 += OI_GEMM_KC) {
        const int64_t kc = k - p0 < OI_GEMM_KC ? k - p0 : OI_GEMM_KC;
        const float beta = p0 ? 1.0f : 0.0f, *block_bias = p0 ? NULL : bias;
        for (int64_t rb = 0; rb < rows; rb += mr) {
            const int64_t h = rows - rb < mr ? rows - rb : mr;
            const float *rows_a = a + rb * lda + p0;
            if (in_place) { /* only a panel with fewer rows than the kernel above it is copied */
                if (rb + h >= mr || (mk->rows_tail && h <= mk->mr_tail && rb + h >= mk->mr_tail))
                    continue;
                for (int i = 0; i < mr; i++)
                    if (i < h)
                        memcpy(tail + i * kc, rows_a + i * lda, (size_t)kc * sizeof *tail);
                    else
                        memset(tail + i * kc, 0, (size_t)kc * sizeof *tail);
                continue;
            }
            float *dst = ap + rb * kc;
            if (h < mr)
                oi_pack_a(rows_a, lda, h, kc, mr, dst);
            else if (mr == 6) /* a constant mr: the compiler unrolls the rows */
                oi_pack_a(rows_a, lda, 6, kc, 6, dst);
            else if (mr == 12)
                oi_pack_a(rows_a, lda, 12, kc, 12, dst);
            else
                oi_pack_a(rows_a, lda, mr, kc, mr, dst);
        }
        const float *block = bp + p0 * n_pad;
        for (int64_t jb = 0; jb < cols; jb += OI__GEMM_NC) {
            const int64_t jend = cols - jb < OI__GEMM_NC ? cols : jb + OI__GEMM_NC;
            for (int64_t rb = 0; rb < rows; rb += mr) {
                const int64_t h = rows - rb < mr ? rows - rb : mr;
                /* the kernel: kh rows from a_k (row stride ld_k), of which C takes the last h */
                oi_micro_rows_fn rows_fn = in_place ? mk->rows_fn : NULL;
                int64_t kh = mr, ld_k = lda;
                const float *a_k = a + rb * lda + p0;
                if (in_place && h < mr) {
                    if (mk->rows_tail && h <= mk->mr_tail && rb + h >= mk->mr_tail) {
                        rows_fn = mk->rows_tail;
                        kh = mk->mr_tail;
                    }
                    if (rb + h >= kh) {
                        a_k = a + (rb + h - kh) * lda + p0;
                    } else { /* the copy, zeros below: C takes its first h rows */
                        a_k = tail;
                        ld_k = kc;
                    }
                }
                const int64_t skip = rows_fn && a_k != tail ? kh - h : 0; /* rows of the kernel above C's */
                for (int64_t j = jb; j < jend; j += nr) {
                    const int64_t w = cols - j < nr ? cols - j : nr;
                    const float *panel = block + (j0 + j) * kc;
                    float *cb = c + rb * ldc + j;
                    const float *tile_bias = block_bias ? block_bias + j : NULL;
                    if (h == kh && w == nr && a_k != tail) {
                        if (rows_fn)
                            rows_fn(kc, a_k, ld_k, panel, cb, ldc, 1.0f, beta, tile_bias);
                        else
                            mk->fn(kc, ap + rb * kc, panel, cb, ldc, 1.0f, beta, tile_bias);
                        continue;
                    }
                    for (int i = 0; i < mr; i++)
                        for (int q = 0; q < nr; q++)
                            edge[i * nr + q] = p0 && i >= skip && i - skip < h && q < w ? cb[(i - skip) * ldc + q] : 0.0f;
                    if (rows_fn)
                        rows_fn(kc, a_k, ld_k, panel, edge, nr, 1.0f, beta, NULL);
                    else
                        mk->fn(kc, ap + rb * kc, panel, edge, nr, 1.0f, beta, NULL);
                    for (int64_t i = 0; i < h; i++)
                        for (int64_t q = 0; q < w; q++)
                            cb[i * ldc + q] = edge[(i + skip) * nr + q] + (tile_bias ? tile_bias[q] : 0.0f);
                }
            }
        }
    }
}

/* k0: matmul, 1 statement
 *   bench_encoder.c:62: op gemm(h,Wq[l],bq[l]) >> q
 */
static void encoder_k0(int task, const oi_micro *mk, int threads, const float *h, const float *Wq, const float *bq, float *q_) {
    const oi_gemm_split sp = oi_gemm_plan(mk, 128, 384, 384, threads);
    int64_t t0, t1, t2, t3;
    oi_gemm_tile(&sp, task, &t0, &t1, &t2, &t3);
    const size_t r0 = (size_t)t0, r1 = (size_t)t1, c0 = (size_t)t2, c1 = (size_t)t3;
    oi_gemm_packed(mk, h + r0 * 384, 384, (int64_t)(r1 - r0), 384, 384, Wq, (int64_t)c0, (int64_t)(c1 - c0), q_ + r0 * 384 + c0, 384, bq + c0);
}

typedef struct encoder_k0_args {
    const oi_micro *mk;
    int threads;
    const float *h;
    const float *Wq;
    const float *bq;
    float *q_;
} encoder_k0_args;

static void encoder_k0_task(void *arg, int task) {
    const encoder_k0_args *a = (const encoder_k0_args *)arg;
    encoder_k0(task, a->mk, a->threads, a->h, a->Wq, a->bq, a->q_);
}

/* k1: matmul, 1 statement
 *   bench_encoder.c:63: op gemm(h,Wk[l],bk[l]) >> k
 */
static void encoder_k1(int task, const oi_micro *mk, int threads, const float *h, const float *Wk, const float *bk, float *k) {
    const oi_gemm_split sp = oi_gemm_plan(mk, 128, 384, 384, threads);
    int64_t t0, t1, t2, t3;
    oi_gemm_tile(&sp, task, &t0, &t1, &t2, &t3);
    const size_t r0 = (size_t)t0, r1 = (size_t)t1, c0 = (size_t)t2, c1 = (size_t)t3;
    oi_gemm_packed(mk, h + r0 * 384, 384, (int64_t)(r1 - r0), 384, 384, Wk, (int64_t)c0, (int64_t)(c1 - c0), k + r0 * 384 + c0, 384, bk + c0);
}

typedef struct encoder_k1_args {
    const oi_micro *mk;
    int threads;
    const float *h;
    const float *Wk;
    const float *bk;
    float *k;
} encoder_k1_args;

static void encoder_k1_task(void *arg, int task) {
    const encoder_k1_args *a = (const encoder_k1_args *)arg;
    encoder_k1(task, a->mk, a->threads, a->h, a->Wk, a->bk, a->k);
}

/* k2: matmul, 1 statement
 *   bench_encoder.c:64: op gemm(h,Wv[l],bv[l]) >> v
 */
static void encoder_k2(int task, const oi_micro *mk, int threads, const float *h, const float *Wv, const float *bv, float *v_) {
    const oi_gemm_split sp = oi_gemm_plan(mk, 128, 384, 384, threads);
    int64_t t0, t1, t2, t3;
    oi_gemm_tile(&sp, task, &t0, &t1, &t2, &t3);
    const size_t r0 = (size_t)t0, r1 = (size_t)t1, c0 = (size_t)t2, c1 = (size_t)t3;
    oi_gemm_packed(mk, h + r0 * 384, 384, (int64_t)(r1 - r0), 384, 384, Wv, (int64_t)c0, (int64_t)(c1 - c0), v_ + r0 * 384 + c0, 384, bv + c0);
}

typedef struct encoder_k2_args {
    const oi_micro *mk;
    int threads;
    const float *h;
    const float *Wv;
    const float *bv;
    float *v_;
} encoder_k2_args;

static void encoder_k2_task(void *arg, int task) {
    const encoder_k2_args *a = (const encoder_k2_args *)arg;
    encoder_k2(task, a->mk, a->threads, a->h, a->Wv, a->bv, a->v_);
}

/* k3: attention, 9 statements
 *   bench_encoder.c:65: op reshape(q,shape=[1,-1,12,32]) >> qs
 *   bench_encoder.c:66: op reshape(k,shape=[1,-1,12,32]) >> ks
 *   bench_encoder.c:67: op reshape(v,shape=[1,-1,12,32]) >> vs
 *   bench_encoder.c:68: op transpose(qs,perm=[0,2,1,3]) >> qh
 *   bench_encoder.c:69: op transpose(ks,perm=[0,2,1,3]) >> kh
 *   bench_encoder.c:70: op transpose(vs,perm=[0,2,1,3]) >> vh
 *   bench_encoder.c:71: op attention(qh,kh,vh) >> ctx
 *   bench_encoder.c:72: op transpose(ctx,perm=[0,2,1,3]) >> ctx_s
 *   bench_encoder.c:73: op reshape(ctx_s,shape=[-1,384]) >> joined
 */
static void encoder_k3(int task, const oi_micro *mk, const float *q_, const float *k, const float *v_, float *joined) {
    const float scale = (float)0.17677669529663687;
    float kp_raw[4096 + 16], vp_raw[4096 + 16], scores_raw[1536 + 16];
    float *kp = oi_align64(kp_raw), *vp = oi_align64(vp_raw), *scores = oi_align64(scores_raw);
    {
        const size_t h = (size_t)task;
        const float *q_head = q_ + h / 12 * 49152 + h % 12 * 32;
        const float *k_head = k + h / 12 * 49152 + h % 12 * 32;
        const float *v_head = v_ + h / 12 * 49152 + h % 12 * 32;
        float *o_head = joined + h / 12 * 49152 + h % 12 * 32;
        if (mk->attn) { /* kernels/nn.c's direct path, as the simulator runs it */
            oi__attn_f32 at;
            memset(&at, 0, sizeof at);
            at.q = q_head, at.k = k_head, at.v = v_head, at.out = o_head;
            at.q_rs = 384, at.k_rs = 384, at.v_rs = 384, at.out_rs = 384;
            at.rows = 128, at.kv_seq = 128, at.dim = 32, at.v_dim = 32;
            at.scale = scale;
            at.kt = kp, at.scores = scores;
            mk->attn(&at);
            return;
        }
        oi_pack_b(mk, k_head, 384, 1, 32, 128, kp); /* K^T: value t, step d at k_head[t * 384 + d] */
        oi_pack_b(mk, v_head, 1, 384, 128, 32, vp);
        for (size_t i0 = 0; i0 < 128; i0 += (size_t)mk->mr) {
            const size_t rows = 128 - i0 < (size_t)mk->mr ? 128 - i0 : (size_t)mk->mr;
            oi_gemm_packed(mk, q_head + i0 * 384, 384, (int64_t)rows, 32, 128, kp, 0, 128, scores, 128, NULL);
            for (size_t r = 0; r < rows; r++) {
                float *p_row = scores + r * 128;
                for (size_t t = 0; t < 128; t++)
                    p_row[t] = scale * p_row[t];
                float m = p_row[0];
                double sum = 0.0;
                if (mk->vsum) { /* vexp.h's loops, as nn.c's softmax */
                    m = mk->vmax(p_row, 128);
                    sum = mk->vsum(p_row, p_row, 128, m, false);
                } else {
                    for (size_t t = 1; t < 128; t++)
                        m = p_row[t] > m ? p_row[t] : m;
                    for (size_t t = 0; t < 128; t++) {
                        p_row[t] = expf(p_row[t] - m);
                        sum = OI_S_sum_step(sum, (double)p_row[t]);
                    }
                }
                const float inv = (float)(1.0 / sum);
                for (size_t t = 0; t < 128; t++)
                    p_row[t] = p_row[t] * inv;
            }
            oi_gemm_packed(mk, scores, 128, (int64_t)rows, 128, 32, vp, 0, 32, o_head + i0 * 384, 384, NULL);
        }
    }
}

typedef struct encoder_k3_args {
    const oi_micro *mk;
    const float *q_;
    const float *k;
    const float *v_;
    float *joined;
} encoder_k3_args;

static void encoder_k3_task(void *arg, int task) {
    const encoder_k3_args *a = (const encoder_k3_args *)arg;
    encoder_k3(task, a->mk, a->q_, a->k, a->v_, a->joined);
}

/* k4: matmul, 2 statements
 *   bench_encoder.c:74: op gemm(joined,Wo[l],bo[l]) >> proj
 *   bench_encoder.c:75: op add(h,proj) >> res
 */
static void encoder_k4(int task, const oi_micro *mk, int threads, const float *joined, const float *Wo, const float *bo, float *proj, const float *h, float *res) {
    const oi_gemm_split sp = oi_gemm_plan(mk, 128, 384, 384, threads);
    int64_t t0, t1, t2, t3;
    oi_gemm_tile(&sp, task, &t0, &t1, &t2, &t3);
    const size_t r0 = (size_t)t0, r1 = (size_t)t1, c0 = (size_t)t2, c1 = (size_t)t3;
    oi_gemm_packed(mk, joined + r0 * 384, 384, (int64_t)(r1 - r0), 384, 384, Wo, (int64_t)c0, (int64_t)(c1 - c0), proj + r0 * 384 + c0, 384, bo + c0);
    for (size_t r = r0; r < r1; r++) {
        float *acc = proj + r * 384 + c0;
        for (size_t j = c0; j < c1; j++) {
            const size_t i = r * 384 + j;
            double v0 = (double)acc[j - c0]; /* bench_encoder.c:74: op gemm(joined,Wo[l],bo[l]) >> proj */
            /* bench_encoder.c:75: op add(h,proj) >> res */
            double v1 = OI_ROUND_F32(OI_S_add((double)h[i], v0));
            res[i] = (float)v1;
            (void)v0;
        }
    }
}

typedef struct encoder_k4_args {
    const oi_micro *mk;
    int threads;
    const float *joined;
    const float *Wo;
    const float *bo;
    float *proj;
    const float *h;
    float *res;
} encoder_k4_args;

static void encoder_k4_task(void *arg, int task) {
    const encoder_k4_args *a = (const encoder_k4_args *)arg;
    encoder_k4(task, a->mk, a->threads, a->joined, a->Wo, a->bo, a->proj, a->h, a->res);
}

/* k5: layer_norm, 1 statement
 *   bench_encoder.c:76: op layer_norm(res,g1[l],be1[l],epsilon=1e-05) >> h
 */
static void encoder_k5(int task, const float *res, const float *g1, const float *be1, float *h) {
    const size_t lo = (size_t)task * 32, hi = lo + 32 < 128 ? lo + 32 : 128;
    for (size_t r = lo; r < hi; r++) {
        const float *xr = res + r * 384;
        float *yr = h + r * 384;
        double sum = 0.0, sq = 0.0;
        double s8[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, q8[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        for (size_t j = 0; j < 384; j += 8)
            for (int l = 0; l < 8; l++)
                s8[l] += (double)xr[j + (size_t)l];
        sum = ((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]));
        const float mean = (float)(sum / 384.0);
        for (size_t j = 0; j < 384; j += 8)
            for (int l = 0; l < 8; l++) {
                const float d = xr[j + (size_t)l] - mean;
                q8[l] += (double)(d * d);
            }
        sq = ((q8[0] + q8[1]) + (q8[2] + q8[3])) + ((q8[4] + q8[5]) + (q8[6] + q8[7]));
        const float inv = (float)(1.0 / sqrt(sq / 384.0 + 1.0000000000000001e-05));
        for (size_t j = 0; j < 384; j++)
            yr[j] = (xr[j] - mean) * inv * g1[j] + be1[j];
    }
}

typedef struct encoder_k5_args {
    const float *res;
    const float *g1;
    const float *be1;
    float *h;
} encoder_k5_args;

static void encoder_k5_task(void *arg, int task) {
    const encoder_k5_args *a = (const encoder_k5_args *)arg;
    encoder_k5(task, a->res, a->g1, a->be1, a->h);
}

/* k6: matmul, 1 statement
 *   bench_encoder.c:77: op gemm(h,W1[l],b1[l],activation="gelu") >> ffn
 */
static void encoder_k6(int task, const oi_micro *mk, int threads, const float *h, const float *W1, const float *b1, float *ffn) {
    const oi_gemm_split sp = oi_gemm_plan(mk, 128, 1536, 384, threads);
    int64_t t0, t1, t2, t3;
    oi_gemm_tile(&sp, task, &t0, &t1, &t2, &t3);
    const size_t r0 = (size_t)t0, r1 = (size_t)t1, c0 = (size_t)t2, c1 = (size_t)t3;
    oi_gemm_packed(mk, h + r0 * 384, 384, (int64_t)(r1 - r0), 384, 1536, W1, (int64_t)c0, (int64_t)(c1 - c0), ffn + r0 * 1536 + c0, 1536, b1 + c0);
    for (size_t r = r0; r < r1; r++) {
        float *acc = ffn + r * 1536 + c0;
        if (mk->vmap)
            mk->vmap(OI__VEXP_GELU_ERF, acc, acc, (int64_t)(c1 - c0));
        else
            for (size_t j = 0; j < c1 - c0; j++)
                acc[j] = OI_S_gelu_erf_f32(acc[j]);
    }
}

typedef struct encoder_k6_args {
    const oi_micro *mk;
    int threads;
    const float *h;
    const float *W1;
    const float *b1;
    float *ffn;
} encoder_k6_args;

static void encoder_k6_task(void *arg, int task) {
    const encoder_k6_args *a = (const encoder_k6_args *)arg;
    encoder_k6(task, a->mk, a->threads, a->h, a->W1, a->b1, a->ffn);
}

/* k7: matmul, 2 statements
 *   bench_encoder.c:78: op gemm(ffn,W2[l],b2[l]) >> proj
 *   bench_encoder.c:79: op add(h,proj) >> res
 */
static void encoder_k7(int task, const oi_micro *mk, int threads, const float *ffn, const float *W2, const float *b2, float *proj, const float *h, float *res) {
    const oi_gemm_split sp = oi_gemm_plan(mk, 128, 384, 1536, threads);
    int64_t t0, t1, t2, t3;
    oi_gemm_tile(&sp, task, &t0, &t1, &t2, &t3);
    const size_t r0 = (size_t)t0, r1 = (size_t)t1, c0 = (size_t)t2, c1 = (size_t)t3;
    oi_gemm_packed(mk, ffn + r0 * 1536, 1536, (int64_t)(r1 - r0), 1536, 384, W2, (int64_t)c0, (int64_t)(c1 - c0), proj + r0 * 384 + c0, 384, b2 + c0);
    for (size_t r = r0; r < r1; r++) {
        float *acc = proj + r * 384 + c0;
        for (size_t j = c0; j < c1; j++) {
            const size_t i = r * 384 + j;
            double v0 = (double)acc[j - c0]; /* bench_encoder.c:78: op gemm(ffn,W2[l],b2[l]) >> proj */
            /* bench_encoder.c:79: op add(h,proj) >> res */
            double v1 = OI_ROUND_F32(OI_S_add((double)h[i], v0));
            res[i] = (float)v1;
            (void)v0;
        }
    }
}

typedef struct encoder_k7_args {
    const oi_micro *mk;
    int threads;
    const float *ffn;
    const float *W2;
    const float *b2;
    float *proj;
    const float *h;
    float *res;
} encoder_k7_args;

static void encoder_k7_task(void *arg, int task) {
    const encoder_k7_args *a = (const encoder_k7_args *)arg;
    encoder_k7(task, a->mk, a->threads, a->ffn, a->W2, a->b2, a->proj, a->h, a->res);
}

/* k8: layer_norm, 1 statement
 *   bench_encoder.c:80: op layer_norm(res,g2[l],be2[l],epsilon=1e-05) >> h
 */
static void encoder_k8(int task, const float *res, const float *g2, const float *be2, float *h) {
    const size_t lo = (size_t)task * 32, hi = lo + 32 < 128 ? lo + 32 : 128;
    for (size_t r = lo; r < hi; r++) {
        const float *xr = res + r * 384;
        float *yr = h + r * 384;
        double sum = 0.0, sq = 0.0;
        double s8[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}, q8[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        for (size_t j = 0; j < 384; j += 8)
            for (int l = 0; l < 8; l++)
                s8[l] += (double)xr[j + (size_t)l];
        sum = ((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]));
        const float mean = (float)(sum / 384.0);
        for (size_t j = 0; j < 384; j += 8)
            for (int l = 0; l < 8; l++) {
                const float d = xr[j + (size_t)l] - mean;
                q8[l] += (double)(d * d);
            }
        sq = ((q8[0] + q8[1]) + (q8[2] + q8[3])) + ((q8[4] + q8[5]) + (q8[6] + q8[7]));
        const float inv = (float)(1.0 / sqrt(sq / 384.0 + 1.0000000000000001e-05));
        for (size_t j = 0; j < 384; j++)
            yr[j] = (xr[j] - mean) * inv * g2[j] + be2[j];
    }
}

typedef struct encoder_k8_args {
    const float *res;
    const float *g2;
    const float *be2;
    float *h;
} encoder_k8_args;

static void encoder_k8_task(void *arg, int task) {
    const encoder_k8_args *a = (const encoder_k8_args *)arg;
    encoder_k8(task, a->res, a->g2, a->be2, a->h);
}

/* ---- the API ---- */

encoder_ctx *encoder_open(const char *model_path) { return encoder_open_with(model_path, NULL); }

encoder_ctx *encoder_open_with(const char *model_path, const encoder_options *options) {
    encoder_ctx *ctx = (encoder_ctx *)calloc(1, sizeof *ctx);
    if (ctx) {
        ctx->arena = (unsigned char *)calloc(1, encoder_ARENA_BYTES + 1);
        ctx->state = (unsigned char *)calloc(1, encoder_STATE_BYTES + 1);
    }
    if (!ctx || !ctx->arena || !ctx->state) {
        encoder_close(ctx);
        encoder_fail(encoder_ERROR_MEMORY, "encoder_open: out of memory");
        return NULL;
    }
    if (encoder_map_model(ctx, model_path) != 0) {
        encoder_close(ctx);
        return NULL;
    }
    encoder_init_x(ctx);
    ctx->Wq_entries[0] = ctx->model + 5920672; /* enc.0.wq */
    ctx->Wq_entries[1] = ctx->model + 13018528; /* enc.1.wq */
    ctx->bq_entries[0] = ctx->model + 13216; /* enc.0.bq */
    ctx->bq_entries[1] = ctx->model + 7111072; /* enc.1.bq */
    ctx->Wk_entries[0] = ctx->model + 4741024; /* enc.0.wk */
    ctx->Wk_entries[1] = ctx->model + 11838880; /* enc.1.wk */
    ctx->bk_entries[0] = ctx->model + 10144; /* enc.0.bk */
    ctx->bk_entries[1] = ctx->model + 7108000; /* enc.1.bk */
    ctx->Wv_entries[0] = ctx->model + 6510496; /* enc.0.wv */
    ctx->Wv_entries[1] = ctx->model + 13608352; /* enc.1.wv */
    ctx->bv_entries[0] = ctx->model + 14752; /* enc.0.bv */
    ctx->bv_entries[1] = ctx->model + 7112608; /* enc.1.bv */
    ctx->Wo_entries[0] = ctx->model + 5330848; /* enc.0.wo */
    ctx->Wo_entries[1] = ctx->model + 12428704; /* enc.1.wo */
    ctx->bo_entries[0] = ctx->model + 11680; /* enc.0.bo */
    ctx->bo_entries[1] = ctx->model + 7109536; /* enc.1.bo */
    ctx->W1_entries[0] = ctx->model + 22432; /* enc.0.w1 */
    ctx->W1_entries[1] = ctx->model + 7120288; /* enc.1.w1 */
    ctx->b1_entries[0] = ctx->model + 2464; /* enc.0.b1 */
    ctx->b1_entries[1] = ctx->model + 7100320; /* enc.1.b1 */
    ctx->W2_entries[0] = ctx->model + 2381728; /* enc.0.w2 */
    ctx->W2_entries[1] = ctx->model + 9479584; /* enc.1.w2 */
    ctx->b2_entries[0] = ctx->model + 8608; /* enc.0.b2 */
    ctx->b2_entries[1] = ctx->model + 7106464; /* enc.1.b2 */
    ctx->g1_entries[0] = ctx->model + 17824; /* enc.0.ln1_g */
    ctx->g1_entries[1] = ctx->model + 7115680; /* enc.1.ln1_g */
    ctx->be1_entries[0] = ctx->model + 16288; /* enc.0.ln1_b */
    ctx->be1_entries[1] = ctx->model + 7114144; /* enc.1.ln1_b */
    ctx->g2_entries[0] = ctx->model + 20896; /* enc.0.ln2_g */
    ctx->g2_entries[1] = ctx->model + 7118752; /* enc.1.ln2_g */
    ctx->be2_entries[0] = ctx->model + 19360; /* enc.0.ln2_b */
    ctx->be2_entries[1] = ctx->model + 7117216; /* enc.1.ln2_b */
    ctx->mk = oi_micro_select();
    ctx->packed_block = malloc(encoder_PACKED_BYTES + 64);
    if (!ctx->packed_block) {
        encoder_close(ctx);
        encoder_fail(encoder_ERROR_MEMORY, "encoder_open: out of memory");
        return NULL;
    }
    ctx->packed = (unsigned char *)(((uintptr_t)ctx->packed_block + 63) & ~(uintptr_t)63);
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 5920672), 1, 384, 384, 384, (float *)(ctx->packed + 0)); /* enc.0.wq */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 13018528), 1, 384, 384, 384, (float *)(ctx->packed + 589824)); /* enc.1.wq */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 4741024), 1, 384, 384, 384, (float *)(ctx->packed + 1179648)); /* enc.0.wk */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 11838880), 1, 384, 384, 384, (float *)(ctx->packed + 1769472)); /* enc.1.wk */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 6510496), 1, 384, 384, 384, (float *)(ctx->packed + 2359296)); /* enc.0.wv */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 13608352), 1, 384, 384, 384, (float *)(ctx->packed + 2949120)); /* enc.1.wv */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 5330848), 1, 384, 384, 384, (float *)(ctx->packed + 3538944)); /* enc.0.wo */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 12428704), 1, 384, 384, 384, (float *)(ctx->packed + 4128768)); /* enc.1.wo */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 22432), 1, 1536, 384, 1536, (float *)(ctx->packed + 4718592)); /* enc.0.w1 */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 7120288), 1, 1536, 384, 1536, (float *)(ctx->packed + 7077888)); /* enc.1.w1 */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 2381728), 1, 384, 1536, 384, (float *)(ctx->packed + 9437184)); /* enc.0.w2 */
    oi_pack_b(ctx->mk, (const float *)(ctx->model + 9479584), 1, 384, 1536, 384, (float *)(ctx->packed + 11796480)); /* enc.1.w2 */
    if (oi_rt_pool_start(&ctx->pool, options ? options->n_threads : 0) != 0) {
        encoder_close(ctx);
        encoder_fail(encoder_ERROR_MEMORY, "encoder_open: cannot start its threads");
        return NULL;
    }
    return ctx;
}

void encoder_close(encoder_ctx *ctx) {
    if (!ctx)
        return;
    oi_rt_pool_stop(&ctx->pool);
    free(ctx->packed_block);
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

int encoder_step(encoder_ctx *ctx) {
    if (!ctx)
        return encoder_fail(encoder_ERROR_ARGUMENT, "encoder_step: no context");
    /* the start of a step: every memory kind starts as the simulator's does */
    if (!ctx->inserted[0])
        encoder_init_x(ctx); /* dynamic, not set: as declared */

    /* the graph */
    memcpy((float *)(ctx->arena + 786432), (float *)(ctx->state + 0), 196608); /* bench_encoder.c:60: transfer x >> h */
    /* bench_encoder.c:61: loop layers (l in 0..num_layers) */
    for (int64_t l = 0; l < 2; l++) {
        {
            encoder_k0_args args0 = {ctx->mk, ctx->pool.n_threads, (float *)(ctx->arena + 786432), (const float *)(ctx->packed + 0 + (size_t)(l) * 589824), (const float *)ctx->bq_entries[l], (float *)(ctx->arena + 983040)};
            encoder_k1_args args1 = {ctx->mk, ctx->pool.n_threads, (float *)(ctx->arena + 786432), (const float *)(ctx->packed + 1179648 + (size_t)(l) * 589824), (const float *)ctx->bk_entries[l], (float *)(ctx->arena + 1179648)};
            encoder_k2_args args2 = {ctx->mk, ctx->pool.n_threads, (float *)(ctx->arena + 786432), (const float *)(ctx->packed + 2359296 + (size_t)(l) * 589824), (const float *)ctx->bv_entries[l], (float *)(ctx->arena + 1376256)};
            const oi_rt_part parts[] = {{encoder_k0_task, &args0, oi_gemm_tasks(ctx->mk, 128, 384, 384, ctx->pool.n_threads)}, {encoder_k1_task, &args1, oi_gemm_tasks(ctx->mk, 128, 384, 384, ctx->pool.n_threads)}, {encoder_k2_task, &args2, oi_gemm_tasks(ctx->mk, 128, 384, 384, ctx->pool.n_threads)}};
            oi_rt_run_parts(&ctx->pool, parts, 3); /* bench_encoder.c:62-64: independent kernels, one job */
        }
#ifdef encoder_DEBUG_DUMP
        encoder_dump(ctx, 0, "q", (float *)(ctx->arena + 983040), 10);
#endif
#ifdef encoder_DEBUG_DUMP
        encoder_dump(ctx, 1, "k", (float *)(ctx->arena + 1179648), 10);
#endif
#ifdef encoder_DEBUG_DUMP
        encoder_dump(ctx, 2, "v", (float *)(ctx->arena + 1376256), 10);
#endif
        {
            encoder_k3_args oi_args = {ctx->mk, (float *)(ctx->arena + 983040), (float *)(ctx->arena + 1179648), (float *)(ctx->arena + 1376256), (float *)(ctx->arena + 1572864)};
            oi_rt_run(&ctx->pool, encoder_k3_task, &oi_args, 12); /* bench_encoder.c:65-73 */
        }
#ifdef encoder_DEBUG_DUMP
        encoder_dump(ctx, 3, "joined", (float *)(ctx->arena + 1572864), 10);
#endif
        {
            encoder_k4_args oi_args = {ctx->mk, ctx->pool.n_threads, (float *)(ctx->arena + 1572864), (const float *)(ctx->packed + 3538944 + (size_t)(l) * 589824), (const float *)ctx->bo_entries[l], (float *)(ctx->arena + 1769472), (float *)(ctx->arena + 786432), (float *)(ctx->arena + 1966080)};
            oi_rt_run(&ctx->pool, encoder_k4_task, &oi_args, oi_gemm_tasks(ctx->mk, 128, 384, 384, ctx->pool.n_threads)); /* bench_encoder.c:74-75 */
        }
#ifdef encoder_DEBUG_DUMP
        encoder_dump(ctx, 4, "proj", (float *)(ctx->arena + 1769472), 10);
        encoder_dump(ctx, 4, "res", (float *)(ctx->arena + 1966080), 10);
#endif
        {
            encoder_k5_args oi_args = {(float *)(ctx->arena + 1966080), (const float *)ctx->g1_entries[l], (const float *)ctx->be1_entries[l], (float *)(ctx->arena + 786432)};
            oi_rt_run(&ctx->pool, encoder_k5_task, &oi_args, 4); /* bench_encoder.c:76 */
        }
#ifdef encoder_DEBUG_DUMP
        encoder_dump(ctx, 5, "h", (float *)(ctx->arena + 786432), 10);
#endif
        {
            encoder_k6_args oi_args = {ctx->mk, ctx->pool.n_threads, (float *)(ctx->arena + 786432), (const float *)(ctx->packed + 4718592 + (size_t)(l) * 2359296), (const float *)ctx->b1_entries[l], (float *)(ctx->arena + 0)};
            oi_rt_run(&ctx->pool, encoder_k6_task, &oi_args, oi_gemm_tasks(ctx->mk, 128, 1536, 384, ctx->pool.n_threads)); /* bench_encoder.c:77 */
        }
#ifdef encoder_DEBUG_DUMP
        encoder_dump(ctx, 6, "ffn", (float *)(ctx->arena + 0), 10);
#endif
        {
            encoder_k7_args oi_args = {ctx->mk, ctx->pool.n_threads, (float *)(ctx->arena + 0), (const float *)(ctx->packed + 9437184 + (size_t)(l) * 2359296), (const float *)ctx->b2_entries[l], (float *)(ctx->arena + 1769472), (float *)(ctx->arena + 786432), (float *)(ctx->arena + 1966080)};
            oi_rt_run(&ctx->pool, encoder_k7_task, &oi_args, oi_gemm_tasks(ctx->mk, 128, 384, 1536, ctx->pool.n_threads)); /* bench_encoder.c:78-79 */
        }
#ifdef encoder_DEBUG_DUMP
        encoder_dump(ctx, 7, "proj", (float *)(ctx->arena + 1769472), 10);
        encoder_dump(ctx, 7, "res", (float *)(ctx->arena + 1966080), 10);
#endif
        {
            encoder_k8_args oi_args = {(float *)(ctx->arena + 1966080), (const float *)ctx->g2_entries[l], (const float *)ctx->be2_entries[l], (float *)(ctx->arena + 786432)};
            oi_rt_run(&ctx->pool, encoder_k8_task, &oi_args, 4); /* bench_encoder.c:80 */
        }
#ifdef encoder_DEBUG_DUMP
        encoder_dump(ctx, 8, "h", (float *)(ctx->arena + 786432), 10);
#endif
    }

    memset(ctx->inserted, 0, sizeof ctx->inserted);
    ctx->steps++;
    return 0;
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

