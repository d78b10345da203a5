/* gemm.c - dense matrix multiply for the CPU backend.
 *
 * oi__gemm_f32 follows the Goto/BLIS recipe, transposed for row-major C:
 *   for each task (a tile of C: tile_m rows x tile_n columns, one per pool task)
 *     for each block of kc steps of k
 *       pack the task's rows of op(A) into mr-row micro-panels   (stays in L2)
 *       pack the task's columns of op(B) into nr-column micro-panels (L2)
 *       for each mr x nr micro-tile: micro-kernel (kc rank-1 updates held in
 *         registers; the A micro-panel stays in L1 while B panels stream)
 * Packing makes every operand contiguous and aligned, so transposes cost
 * nothing in the hot loop, and the micro-kernel is the only code that has
 * to be fast. It is chosen at run time: AVX-512 (12 x 32), AVX2+FMA (6 x 16)
 * or portable C (4 x 8, left to the compiler's vectorizer). Edge tiles are
 * computed whole into a scratch tile (packing pads with zeros) and only the
 * valid part is written back.
 *
 * oi__gemm_f32_ex is the general form (oi__gemm_f32 wraps it): operands of
 * any strides, packed straight from the view (a transposed or stepped
 * tensor is never copied first), a bias row added in the micro-kernel's
 * store, and a B from the model (weights) packed once into the layout the
 * tasks read and kept on its storage, so a step only packs A. Any other B
 * is packed once per call in that layout when C has several row tiles.
 *
 * oi__gemm_f64 is the reference path: cache-blocked loops, no packing. */
#include "../openinfer_impl/internal.h"
#include "scalar.h" /* OI_S_mac: the plain loop's multiply-add */

/* The synthesizer copies the synth-embed regions into every emitted folder
 * that runs a gemm (oi_gemm.h, scripts/embed_synth_sources.py). */
/* synth-embed begin */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define OI__GEMM_X86 1
#include <immintrin.h>
#define OI__TARGET_AVX2 __attribute__((target("avx2,fma")))
#define OI__TARGET_AVX512 __attribute__((target("avx512f")))
#else
#define OI__GEMM_X86 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define OI__GEMM_PREFETCH(address) __builtin_prefetch(address)
#else
#define OI__GEMM_PREFETCH(address) ((void)(address))
#endif

/* Every ISA's blocking: k steps per packed block, the columns of B per
 * block, the rows of A a task packs at most. A's micro-panel (12 x 512
 * floats, 24 KiB) stays in L1 while the B panels stream from L2, whose
 * block (kc x nc, 512 KiB) fits half of a 1 MiB L2. A kc of 512 rather than
 * 256 takes a k of 384 (MiniLM's, BERT-base's half) in one block: two
 * threads ran MiniLM's six products per layer 10-20 % faster with AVX-512
 * and a few percent with AVX2 (bench/README.md, 2026-11-27). */
#define OI__GEMM_KC 512
#define OI__GEMM_NC 256
#define OI__GEMM_MAX_TILE_M 2048
/* synth-embed end */

#define OI__GEMM_MAX_MR 12
#define OI__GEMM_MAX_NR 32
#define OI__GEMM_ALIGN 64
/* Below this many multiply-adds a plain loop beats packing (and below
 * OI__GEMM_PARALLEL_MIN, with the tile planning, waking the pool costs
 * more than it saves). */
#define OI__GEMM_TINY 4096

/* Computes one full mr x nr tile: C = alpha * (A panel * B panel) + beta * C
 * + bias (beta == 0: C is not read; bias: NULL or the tile's nr values).
 * a: kc x mr, b: kc x nr, both packed. */
typedef void (*oi__gemm_f32_kernel_fn)(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                                       float alpha, float beta, const float *bias);

typedef struct oi__gemm_f32_impl {
    oi__gemm_isa isa;
    int mr, nr;               /* register tile                                  */
    int64_t kc;               /* k steps per packed block (A micro-panel in L1) */
    int64_t nc;               /* columns of B packed at once (kc x nc in L2)    */
    int64_t max_tile_m;       /* rows of A packed per task                      */
    oi__gemm_f32_kernel_fn kernel;
    /* Packs 16 steps of `width` rows (rows[r] points at the first step) as
     * out[i * width + r]; NULL: the scalar loop. */
    void (*interleave16)(const float *const *rows, int width, float *out);
    /* The kernel with A read in place, row r step p at a[r * lda + p];
     * NULL: A is always packed. */
    void (*kernel_rows)(int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc, float alpha,
                        float beta, const float *bias);
    /* kernel_rows for panels of mr_tail < mr rows (the last, partial row
     * panel of A read in place); NULL: that panel runs the mr-row kernel,
     * on rows above it as well. */
    int mr_tail;
    void (*kernel_rows_tail)(int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc,
                             float alpha, float beta, const float *bias);
} oi__gemm_f32_impl;

/* ---- micro-kernels ---- */
/* synth-embed begin (its copy closes the #if OI__GEMM_X86 below) */

/* Applies X to each of the 6 (or 12) rows of a register tile; the rows are
 * spelled out so the accumulators live in named registers, whatever the
 * optimization level. */
#define OI__ROWS6(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define OI__ROWS12(X) OI__ROWS6(X) X(6) X(7) X(8) X(9) X(10) X(11)

/* The portable kernel, 6 x 8. With GCC/clang it is written with generic
 * 4-lane vectors (SSE on x86, NEON on ARM): 12 accumulators fit the 16
 * registers of either. Elsewhere plain loops, left to the vectorizer. */
#define OI__GEMM_PORTABLE_MR 6
#define OI__GEMM_PORTABLE_NR 8
#if defined(__GNUC__) || defined(__clang__)
typedef float oi__gemm_v4 __attribute__((vector_size(16)));

static inline oi__gemm_v4 oi__gemm_v4_load(const float *p) {
    oi__gemm_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void oi__gemm_v4_store(float *p, oi__gemm_v4 v) { memcpy(p, &v, sizeof v); }

/* C[0..4) or C[4..8) of row i = alpha * acc (+ beta * C) (+ bias). */
static inline void oi__gemm_v4_update_c(float *out, oi__gemm_v4 acc, float alpha, float beta, const float *bias) {
    oi__gemm_v4 va = {alpha, alpha, alpha, alpha}, vb = {beta, beta, beta, beta};
    oi__gemm_v4 v = va * acc;
    if (beta != 0.0f)
        v += vb * oi__gemm_v4_load(out);
    if (bias)
        v += oi__gemm_v4_load(bias);
    oi__gemm_v4_store(out, v);
}

#define OI__V4_DECLARE(i) oi__gemm_v4 c##i##0 = zero, c##i##1 = zero;
#define OI__V4_UPDATE(i) { oi__gemm_v4 ai = {a[i], a[i], a[i], a[i]}; c##i##0 += ai * b0; c##i##1 += ai * b1; }
#define OI__V4_STORE(i) oi__gemm_v4_update_c(c + i * ldc, c##i##0, alpha, beta, bias); \
    oi__gemm_v4_update_c(c + i * ldc + 4, c##i##1, alpha, beta, bias ? bias + 4 : NULL);

static void oi__gemm_f32_kernel_portable(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                                         float alpha, float beta, const float *bias) {
    oi__gemm_v4 zero = {0.0f, 0.0f, 0.0f, 0.0f};
    OI__ROWS6(OI__V4_DECLARE)
    for (int64_t p = 0; p < kc; p++) {
        oi__gemm_v4 b0 = oi__gemm_v4_load(b), b1 = oi__gemm_v4_load(b + 4);
        OI__ROWS6(OI__V4_UPDATE)
        a += OI__GEMM_PORTABLE_MR;
        b += OI__GEMM_PORTABLE_NR;
    }
    OI__ROWS6(OI__V4_STORE)
}
#else
static void oi__gemm_f32_kernel_portable(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                                         float alpha, float beta, const float *bias) {
    float acc[OI__GEMM_PORTABLE_MR][OI__GEMM_PORTABLE_NR];
    memset(acc, 0, sizeof acc);
    for (int64_t p = 0; p < kc; p++) {
        const float *ap = a + p * OI__GEMM_PORTABLE_MR;
        const float *bp = b + p * OI__GEMM_PORTABLE_NR;
        for (int i = 0; i < OI__GEMM_PORTABLE_MR; i++)
            for (int j = 0; j < OI__GEMM_PORTABLE_NR; j++)
                acc[i][j] += ap[i] * bp[j];
    }
    for (int i = 0; i < OI__GEMM_PORTABLE_MR; i++) {
        float *ci = c + i * ldc;
        for (int j = 0; j < OI__GEMM_PORTABLE_NR; j++)
            ci[j] = (beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * ci[j]) + (bias ? bias[j] : 0.0f);
    }
}
#endif

#if OI__GEMM_X86

/* AVX2 + FMA: 6 rows x 16 columns = 12 ymm accumulators, 2 B vectors and
 * one broadcast: 15 of the 16 registers. */
#define OI__AVX2_DECLARE(i) __m256 c##i##0 = _mm256_setzero_ps(), c##i##1 = _mm256_setzero_ps();
#define OI__AVX2_UPDATE(i) { __m256 ai = _mm256_broadcast_ss(a + i); \
    c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0); c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1); }
#define OI__AVX2_STORE(i) { float *ci = c + i * ldc; \
    __m256 r0 = _mm256_mul_ps(va, c##i##0), r1 = _mm256_mul_ps(va, c##i##1); \
    if (!zero_beta) { \
        r0 = _mm256_fmadd_ps(va, c##i##0, _mm256_mul_ps(vb, _mm256_loadu_ps(ci))); \
        r1 = _mm256_fmadd_ps(va, c##i##1, _mm256_mul_ps(vb, _mm256_loadu_ps(ci + 8))); \
    } \
    if (bias) { \
        r0 = _mm256_add_ps(r0, bias0); \
        r1 = _mm256_add_ps(r1, bias1); \
    } \
    _mm256_storeu_ps(ci, r0); \
    _mm256_storeu_ps(ci + 8, r1); }
/* C = alpha * acc + beta * C + bias for the rows ROWS lists: the end of every AVX2 kernel. */
#define OI__AVX2_FINISH(ROWS) \
    bool zero_beta = beta == 0.0f; \
    __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta); \
    __m256 bias0 = bias ? _mm256_loadu_ps(bias) : _mm256_setzero_ps(); \
    __m256 bias1 = bias ? _mm256_loadu_ps(bias + 8) : _mm256_setzero_ps(); \
    ROWS(OI__AVX2_STORE)

OI__TARGET_AVX2 static void oi__gemm_f32_kernel_avx2(int64_t kc, const float *a, const float *b, float *c,
                                                     int64_t ldc, float alpha, float beta, const float *bias) {
    OI__ROWS6(OI__AVX2_DECLARE)
    for (int64_t p = 0; p < kc; p++) {
        __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
        OI__ROWS6(OI__AVX2_UPDATE)
        a += 6;
        b += 16;
    }
    OI__AVX2_FINISH(OI__ROWS6)
}

/* The same tile with A read in place, as the AVX-512 rows kernel below:
 * six row pointers, one broadcast per row and step. */
#define OI__AVX2_UPDATE_ROWS(i) { __m256 ai = _mm256_broadcast_ss(a##i + p); \
    c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0); c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1); }
#define OI__AVX2_ROW_POINTER(i) const float *a##i = a + i * lda;
/* An in-place kernel for the rows ROWS lists (OI__ROWS6, or OI__ROWS4 for a
 * last partial panel: the same arithmetic per row). */
#define OI__AVX2_ROWS_KERNEL(NAME, ROWS) \
    OI__TARGET_AVX2 static void NAME(int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc, \
                                     float alpha, float beta, const float *bias) { \
        ROWS(OI__AVX2_DECLARE) \
        ROWS(OI__AVX2_ROW_POINTER) \
        for (int64_t p = 0; p < kc; p++) { \
            __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8); \
            ROWS(OI__AVX2_UPDATE_ROWS) \
            b += 16; \
        } \
        OI__AVX2_FINISH(ROWS) \
    }
OI__AVX2_ROWS_KERNEL(oi__gemm_f32_kernel_rows_avx2, OI__ROWS6)

/* AVX-512: 12 rows x 32 columns = 24 zmm accumulators, 2 B vectors and one
 * broadcast. 24 independent FMA chains hide the FMA latency on both FMA
 * ports; each k step loads 2 vectors + 12 scalars for 24 FMAs. */
#define OI__AVX512_DECLARE(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
#define OI__AVX512_UPDATE(i) { __m512 ai = _mm512_set1_ps(a[i]); \
    c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0); c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1); }
#define OI__AVX512_STORE(i) { float *ci = c + i * ldc; \
    __m512 r0 = _mm512_mul_ps(va, c##i##0), r1 = _mm512_mul_ps(va, c##i##1); \
    if (!zero_beta) { \
        r0 = _mm512_fmadd_ps(va, c##i##0, _mm512_mul_ps(vb, _mm512_loadu_ps(ci))); \
        r1 = _mm512_fmadd_ps(va, c##i##1, _mm512_mul_ps(vb, _mm512_loadu_ps(ci + 16))); \
    } \
    if (bias) { \
        r0 = _mm512_add_ps(r0, bias0); \
        r1 = _mm512_add_ps(r1, bias1); \
    } \
    _mm512_storeu_ps(ci, r0); \
    _mm512_storeu_ps(ci + 16, r1); }
#define OI__AVX512_PREFETCH_C(i) _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0); \
    _mm_prefetch((const char *)(c + i * ldc + 31), _MM_HINT_T0);
/* C = alpha * acc + beta * C + bias for the rows ROWS lists: the end of every AVX-512 kernel. */
#define OI__AVX512_FINISH(ROWS) \
    bool zero_beta = beta == 0.0f; \
    __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta); \
    __m512 bias0 = bias ? _mm512_loadu_ps(bias) : _mm512_setzero_ps(); \
    __m512 bias1 = bias ? _mm512_loadu_ps(bias + 16) : _mm512_setzero_ps(); \
    ROWS(OI__AVX512_STORE)

OI__TARGET_AVX512 static void oi__gemm_f32_kernel_avx512(int64_t kc, const float *a, const float *b, float *c,
                                                         int64_t ldc, float alpha, float beta, const float *bias) {
    OI__ROWS12(OI__AVX512_PREFETCH_C)
    OI__ROWS12(OI__AVX512_DECLARE)
    for (int64_t p = 0; p < kc; p++) {
        __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);
        OI__ROWS12(OI__AVX512_UPDATE)
        a += 12;
        b += 32;
    }
    OI__AVX512_FINISH(OI__ROWS12)
}

/* The same tile with A read in place: full row panels of a row-major A
 * need no packing (a few rows of activations are packed about as often as
 * they are multiplied); each row streams forward, one line per 16 steps. */
#define OI__AVX512_UPDATE_ROWS(i) { __m512 ai = _mm512_set1_ps(a##i[p]); \
    c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0); c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1); }
#define OI__AVX512_ROW_POINTER(i) const float *a##i = a + i * lda;
#define OI__AVX512_ROWS_KERNEL(NAME, ROWS) \
    OI__TARGET_AVX512 static void NAME(int64_t kc, const float *a, int64_t lda, const float *b, float *c, int64_t ldc, \
                                       float alpha, float beta, const float *bias) { \
        ROWS(OI__AVX512_PREFETCH_C) \
        ROWS(OI__AVX512_DECLARE) \
        ROWS(OI__AVX512_ROW_POINTER) \
        for (int64_t p = 0; p < kc; p++) { \
            __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16); \
            ROWS(OI__AVX512_UPDATE_ROWS) \
            b += 32; \
        } \
        OI__AVX512_FINISH(ROWS) \
    }
OI__AVX512_ROWS_KERNEL(oi__gemm_f32_kernel_rows_avx512, OI__ROWS12)

/* The in-place kernels for a last partial row panel: 128 rows (a sequence
 * of 128 tokens) are 10 panels of 12 and one of 8, and the 8-row kernel
 * computes that one alone instead of the 12 rows that end with it (4 of
 * them again: 3% of the product). Each row's arithmetic is the same as in
 * the full kernel, so C is bit for bit the same. AVX2's tail is 4 rows
 * (128 = 21 x 6 + 2): 8 accumulators still hide the FMA latency. */
#define OI__ROWS4(X) X(0) X(1) X(2) X(3)
#define OI__ROWS8(X) OI__ROWS4(X) X(4) X(5) X(6) X(7)
OI__AVX512_ROWS_KERNEL(oi__gemm_f32_kernel_rows8_avx512, OI__ROWS8)
OI__AVX2_ROWS_KERNEL(oi__gemm_f32_kernel_rows4_avx2, OI__ROWS4)
/* synth-embed end */

/* The all-lanes masked forms of the shuffles: the plain ones are built on
 * _mm512_undefined_ps, which g++ 12 reports as maybe-uninitialized. */
#define OI__ALL_LANES ((__mmask16)0xFFFF)
#define OI__UNPACKLO(x, y) _mm512_maskz_unpacklo_ps(OI__ALL_LANES, x, y)
#define OI__UNPACKHI(x, y) _mm512_maskz_unpackhi_ps(OI__ALL_LANES, x, y)
#define OI__SHUFFLE(x, y, imm) _mm512_maskz_shuffle_ps(OI__ALL_LANES, x, y, imm)
#define OI__SHUFFLE_LANES(x, y, imm) _mm512_maskz_shuffle_f32x4(OI__ALL_LANES, x, y, imm)

/* Transposes the 16 x 16 block v[row][col] in place, in three rounds of
 * shuffles: pairs of rows, then groups of four, then 128-bit lanes. */
OI__TARGET_AVX512 static inline void oi__gemm_transpose16_avx512(__m512 v[16]) {
    __m512 t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = OI__UNPACKLO(v[2 * i], v[2 * i + 1]);
        t[2 * i + 1] = OI__UNPACKHI(v[2 * i], v[2 * i + 1]);
    }
    /* u[4j + c], lane l: rows 4j..4j+3 at column 4l + c */
    for (int j = 0; j < 4; j++) {
        u[4 * j + 0] = OI__SHUFFLE(t[4 * j], t[4 * j + 2], 0x44);
        u[4 * j + 1] = OI__SHUFFLE(t[4 * j], t[4 * j + 2], 0xEE);
        u[4 * j + 2] = OI__SHUFFLE(t[4 * j + 1], t[4 * j + 3], 0x44);
        u[4 * j + 3] = OI__SHUFFLE(t[4 * j + 1], t[4 * j + 3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {
        __m512 w0 = OI__SHUFFLE_LANES(u[c], u[4 + c], 0x88), w1 = OI__SHUFFLE_LANES(u[c], u[4 + c], 0xDD);
        __m512 x0 = OI__SHUFFLE_LANES(u[8 + c], u[12 + c], 0x88);
        __m512 x1 = OI__SHUFFLE_LANES(u[8 + c], u[12 + c], 0xDD);
        v[c] = OI__SHUFFLE_LANES(w0, x0, 0x88);
        v[8 + c] = OI__SHUFFLE_LANES(w0, x0, 0xDD);
        v[4 + c] = OI__SHUFFLE_LANES(w1, x1, 0x88);
        v[12 + c] = OI__SHUFFLE_LANES(w1, x1, 0xDD);
    }
}

/* Any width up to OI__GEMM_MAX_NR: the 32-column B panels and the 12-row
 * A panels (a last group of fewer than 16 rows is transposed with zero
 * rows and stored through a mask, so no row is read past its end). */
OI__TARGET_AVX512 static void oi__gemm_f32_interleave16_avx512(const float *const *rows, int width, float *out) {
    for (int r0 = 0; r0 < width; r0 += 16) {
        int count = width - r0 < 16 ? width - r0 : 16;
        __mmask16 lanes = (__mmask16)((1u << count) - 1u);
        __m512 v[16];
        for (int r = 0; r < 16; r++) {
            if (r < count) {
                _mm_prefetch((const char *)(rows[r0 + r] + 64), _MM_HINT_T0); /* 4 lines ahead */
                v[r] = _mm512_loadu_ps(rows[r0 + r]);
            } else {
                v[r] = _mm512_setzero_ps();
            }
        }
        oi__gemm_transpose16_avx512(v);
        for (int i = 0; i < 16; i++)
            _mm512_mask_storeu_ps(out + i * width + r0, lanes, v[i]);
    }
}
#endif /* OI__GEMM_X86 */

/* ---- choosing the code path ---- */
static const oi__gemm_f32_impl oi__gemm_f32_portable = {
    OI__GEMM_ISA_PORTABLE, OI__GEMM_PORTABLE_MR, OI__GEMM_PORTABLE_NR, OI__GEMM_KC, OI__GEMM_NC, OI__GEMM_MAX_TILE_M, oi__gemm_f32_kernel_portable,
    NULL, NULL, 0, NULL};
#if OI__GEMM_X86
static const oi__gemm_f32_impl oi__gemm_f32_avx2 = {
    OI__GEMM_ISA_AVX2, 6, 16, OI__GEMM_KC, OI__GEMM_NC, OI__GEMM_MAX_TILE_M, oi__gemm_f32_kernel_avx2, NULL, oi__gemm_f32_kernel_rows_avx2,
    4, oi__gemm_f32_kernel_rows4_avx2};
static const oi__gemm_f32_impl oi__gemm_f32_avx512 = {
    OI__GEMM_ISA_AVX512, 12, 32, OI__GEMM_KC, OI__GEMM_NC, OI__GEMM_MAX_TILE_M, oi__gemm_f32_kernel_avx512,
    oi__gemm_f32_interleave16_avx512, oi__gemm_f32_kernel_rows_avx512, 8, oi__gemm_f32_kernel_rows8_avx512};
#endif

/* Set only by tests and benchmarks (see oi__gemm_force_isa). */
static oi__gemm_isa oi__gemm_forced_isa = OI__GEMM_ISA_AUTO;

static bool oi__gemm_cpu_has(oi__gemm_isa isa) {
    switch (isa) {
    case OI__GEMM_ISA_AUTO:
    case OI__GEMM_ISA_PORTABLE: return true;
#if OI__GEMM_X86
    case OI__GEMM_ISA_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case OI__GEMM_ISA_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f");
#else
    case OI__GEMM_ISA_AVX2:
    case OI__GEMM_ISA_AVX512: return false;
#endif
    }
    return false;
}

#if OI__GEMM_X86
#include <cpuid.h>
#endif

bool oi__cpu_has_f16c(void) {
#if OI__GEMM_X86
    static int has = -1; /* clang's __builtin_cpu_supports has no "f16c": CPUID.1:ECX, asked once */
    int h = __atomic_load_n(&has, __ATOMIC_ACQUIRE);
    if (h < 0) {
        unsigned a = 0, b = 0, c = 0, d = 0;
        h = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
        __atomic_store_n(&has, h, __ATOMIC_RELEASE);
    }
    return h != 0;
#else
    return false;
#endif
}

/* OPENINFER_ISA=portable|avx2|avx512 caps the ISA every kernel uses, so the
 * AVX2 path can be measured on an AVX-512 machine; a value the CPU cannot
 * run, or an unknown one, leaves the choice automatic. Read once. */
static oi__gemm_isa oi__gemm_env_isa(void) {
    static int cached = -1; /* an oi__gemm_isa once read */
    int isa = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (isa >= 0)
        return (oi__gemm_isa)isa;
    oi__env_isa env = oi__env_read().isa;
    isa = OI__GEMM_ISA_AUTO;
    if (env == OI__ENV_ISA_PORTABLE)
        isa = OI__GEMM_ISA_PORTABLE;
    else if (env == OI__ENV_ISA_AVX2 && oi__gemm_cpu_has(OI__GEMM_ISA_AVX2))
        isa = OI__GEMM_ISA_AVX2;
    else if (env == OI__ENV_ISA_AVX512 && oi__gemm_cpu_has(OI__GEMM_ISA_AVX512))
        isa = OI__GEMM_ISA_AVX512;
    __atomic_store_n(&cached, isa, __ATOMIC_RELEASE);
    return (oi__gemm_isa)isa;
}

oi__gemm_isa oi__gemm_active_isa(void) {
    if (oi__gemm_forced_isa != OI__GEMM_ISA_AUTO)
        return oi__gemm_forced_isa;
    oi__gemm_isa from_env = oi__gemm_env_isa();
    if (from_env != OI__GEMM_ISA_AUTO)
        return from_env;
    if (oi__gemm_cpu_has(OI__GEMM_ISA_AVX512))
        return OI__GEMM_ISA_AVX512;
    if (oi__gemm_cpu_has(OI__GEMM_ISA_AVX2))
        return OI__GEMM_ISA_AVX2;
    return OI__GEMM_ISA_PORTABLE;
}

bool oi__gemm_force_isa(oi__gemm_isa isa) {
    if (!oi__gemm_cpu_has(isa))
        return false;
    oi__gemm_forced_isa = isa;
    return true;
}

const char *oi__gemm_isa_name(oi__gemm_isa isa) {
    switch (isa) {
    case OI__GEMM_ISA_AUTO: return "auto";
    case OI__GEMM_ISA_PORTABLE: return "portable";
    case OI__GEMM_ISA_AVX2: return "avx2";
    case OI__GEMM_ISA_AVX512: return "avx512";
    }
    return "?";
}

static const oi__gemm_f32_impl *oi__gemm_f32_select(void) {
    switch (oi__gemm_active_isa()) {
#if OI__GEMM_X86
    case OI__GEMM_ISA_AVX512: return &oi__gemm_f32_avx512;
    case OI__GEMM_ISA_AVX2: return &oi__gemm_f32_avx2;
#endif
    default: return &oi__gemm_f32_portable;
    }
}

/* ---- argument checks and the trivial cases ---- */
static oi_status oi__gemm_check(const char *name, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                                const void *a, int64_t lda, const void *b, int64_t ldb, const void *c, int64_t ldc) {
    if (m < 0 || n < 0 || k < 0)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: negative size m=%lld n=%lld k=%lld", name,
                        (long long)m, (long long)n, (long long)k);
    int64_t min_lda = trans_a ? m : k, min_ldb = trans_b ? k : n;
    if (lda < min_lda || ldb < min_ldb || ldc < n)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT,
                        "%s: leading dimension too small (lda=%lld needs >= %lld, ldb=%lld needs >= %lld, "
                        "ldc=%lld needs >= %lld)", name, (long long)lda, (long long)min_lda, (long long)ldb,
                        (long long)min_ldb, (long long)ldc, (long long)n);
    if ((m > 0 && n > 0 && !c) || (m > 0 && n > 0 && k > 0 && (!a || !b)))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "%s: NULL matrix pointer", name);
    return OI_OK;
}

/* synth-embed begin (oi_gemm.h: the packing below needs these) */
static inline int64_t oi__gemm_ceil_div(int64_t x, int64_t y) { return (x + y - 1) / y; }
static inline int64_t oi__gemm_round_up(int64_t x, int64_t y) { return oi__gemm_ceil_div(x, y) * y; }
static inline int64_t oi__gemm_min(int64_t x, int64_t y) { return x < y ? x : y; }
static inline int64_t oi__gemm_max(int64_t x, int64_t y) { return x > y ? x : y; }
/* synth-embed end */

/* synth-embed begin (oi_gemm.h: the emitted matmuls split C into the tiles this driver does) */
/* Below this many multiply-adds waking the pool costs more than it saves. */
#define OI__GEMM_PARALLEL_MIN (64 * 64 * 64)

/* Splits C into one tile per task. A task packs its rows of A and its
 * columns of B once per k block, so big tiles pack least; but every thread
 * needs work, so: split the longer side of C until there is one tile per
 * thread, or two when tiles stay at least OI__GEMM_SPARE_TILE_AREA (spare
 * tiles even out the load when something else on the machine slows a
 * thread down). */
#define OI__GEMM_SPARE_TILE_AREA (256 * 256)
static inline void oi__gemm_plan_tiles(int64_t mr, int64_t nr, int64_t max_tile_m, int64_t m, int64_t n, int threads,
                                       int64_t *tile_m, int64_t *tile_n) {
    int64_t max_tiles_m = oi__gemm_ceil_div(m, mr), max_tiles_n = oi__gemm_ceil_div(n, nr);
    int64_t tiles_m = oi__gemm_ceil_div(m, max_tile_m), tiles_n = 1;
    int64_t want = threads;
    if (threads > 1 && m * n >= 2 * (int64_t)threads * OI__GEMM_SPARE_TILE_AREA)
        want = 2 * (int64_t)threads;
    while (tiles_m * tiles_n < want && (tiles_m < max_tiles_m || tiles_n < max_tiles_n)) {
        bool split_m = tiles_n >= max_tiles_n ||
                       (tiles_m < max_tiles_m && m / tiles_m >= n / tiles_n);
        if (split_m)
            tiles_m++;
        else
            tiles_n++;
    }
    *tile_m = oi__gemm_round_up(oi__gemm_ceil_div(m, tiles_m), mr);
    *tile_n = oi__gemm_round_up(oi__gemm_ceil_div(n, tiles_n), nr);
}

/* Rows a multiple of 4 KiB apart fall in one L1 set: twelve of them read
 * side by side evict each other, so such an A is packed. */
static inline bool oi__gemm_rows_alias(int64_t row_stride) { return row_stride % (4096 / (int64_t)sizeof(float)) == 0; }

/* With B packed already and A read in place a tile costs no packing, so
 * where the plan above leaves one tile per thread, finer ones keep every
 * thread busy when the host slows one: C's columns in OI__GEMM_FINE_TILES
 * tiles per thread when one tile spans all of C's rows (a few rows of
 * activations times a weight); its rows, when tiles span all columns (512
 * tokens times a 384 x 384 weight) and B's k block (kc x n) stays in L2,
 * at most OI__GEMM_FINE_ROWS_B_FLOATS, as it is read once per row panel.
 * (Finer 2-D tiles read B from L3 more often: a few percent more kernel
 * time, for no gain measured.) */
#define OI__GEMM_FINE_TILES 4
#define OI__GEMM_FINE_ROWS_B_FLOATS ((int64_t)1 << 17) /* 512 KiB */
static inline void oi__gemm_plan_fine_in_place(int64_t mr, int64_t nr, int64_t kc, int64_t m, int64_t n, int threads,
                                               int64_t *tile_m, int64_t *tile_n) {
    int64_t fine = OI__GEMM_FINE_TILES * (int64_t)threads;
    if (threads < 2)
        return;
    if (*tile_m >= m)
        *tile_n = oi__gemm_round_up(oi__gemm_ceil_div(n, fine), nr);
    else if (*tile_n >= n && oi__gemm_round_up(n, nr) * kc <= OI__GEMM_FINE_ROWS_B_FLOATS)
        *tile_m = oi__gemm_round_up(oi__gemm_ceil_div(m, fine), mr);
}

/* Row tile t of n_tiles over m rows: its first row and row count. The row
 * panels are dealt out evenly and the last tile takes the partial one, so
 * 512 rows (42 panels of 12 and one of 8) split in two as 21 + 21 2/3
 * panels, not 22 + 20 2/3 (equal tile_m): the threads finish together. No
 * tile exceeds the plan's tile_m. */
static inline void oi__gemm_tile_rows(int64_t mr, int64_t m, int64_t n_tiles, int64_t t, int64_t *i0, int64_t *rows) {
    int64_t panels = oi__gemm_ceil_div(m, mr);
    int64_t first = panels * t / n_tiles, end = panels * (t + 1) / n_tiles;
    *i0 = first * mr;
    *rows = oi__gemm_min(end * mr, m) - *i0;
}
/* synth-embed end */

/* Element (i, p) of op(A) and (p, j) of op(B). */
static inline float oi__gemm_a_at(const oi__gemm_f32_args *g, int64_t i, int64_t p) {
    return g->a[i * g->a_rs + p * g->a_cs];
}
static inline float oi__gemm_b_at(const oi__gemm_f32_args *g, int64_t p, int64_t j) {
    return g->b[p * g->b_rs + j * g->b_cs];
}

/* C = beta * C + bias, for k == 0 or alpha == 0 (A and B are not read). */
static void oi__gemm_f32_scale_c(const oi__gemm_f32_args *g) {
    for (int64_t i = 0; i < g->m; i++)
        for (int64_t j = 0; j < g->n; j++) {
            float *out = g->c + i * g->ldc + j;
            *out = (g->beta == 0.0f ? 0.0f : g->beta * *out) + (g->bias ? g->bias[j] : 0.0f);
        }
}

/* Rows [i0, i0 + 4) of a small product with few columns, each of C's
 * sums in a register and built in the plain loop's order (so the same
 * bits): the four rows' chains of adds overlap, where through C in memory
 * each add waited on the last (a squeeze-excite conv's 88 x 22 took ~4 us). */
static void oi__gemm_f32_small_rows4(const oi__gemm_f32_args *g, int64_t i0) {
    for (int64_t j = 0; j < g->n; j++) {
        float *c0 = g->c + i0 * g->ldc + j, *c1 = c0 + g->ldc, *c2 = c1 + g->ldc, *c3 = c2 + g->ldc;
        bool zero = g->beta == 0.0f;
        float s0 = zero ? 0.0f : g->beta * *c0, s1 = zero ? 0.0f : g->beta * *c1;
        float s2 = zero ? 0.0f : g->beta * *c2, s3 = zero ? 0.0f : g->beta * *c3;
        for (int64_t p = 0; p < g->k; p++) {
            float bpj = oi__gemm_b_at(g, p, j);
            s0 = OI_S_mac(s0, g->alpha * oi__gemm_a_at(g, i0, p), bpj);
            s1 = OI_S_mac(s1, g->alpha * oi__gemm_a_at(g, i0 + 1, p), bpj);
            s2 = OI_S_mac(s2, g->alpha * oi__gemm_a_at(g, i0 + 2, p), bpj);
            s3 = OI_S_mac(s3, g->alpha * oi__gemm_a_at(g, i0 + 3, p), bpj);
        }
        if (g->bias)
            s0 += g->bias[j], s1 += g->bias[j], s2 += g->bias[j], s3 += g->bias[j];
        *c0 = s0, *c1 = s1, *c2 = s2, *c3 = s3;
    }
}

/* Small problems: a plain loop over i, p, j, accumulating one row of C at
 * a time (unit stride in j when op(B)'s rows are contiguous); with at most
 * four columns, four rows at a time as above. */
static void oi__gemm_f32_small(const oi__gemm_f32_args *g) {
    float beta = g->beta;
    int64_t i = 0;
    if (g->n <= 4)
        for (; i + 4 <= g->m; i += 4)
            oi__gemm_f32_small_rows4(g, i);
    for (; i < g->m; i++) {
        float *ci = g->c + i * g->ldc;
        for (int64_t j = 0; j < g->n; j++)
            ci[j] = beta == 0.0f ? 0.0f : beta * ci[j];
        for (int64_t p = 0; p < g->k; p++) {
            float aip = g->alpha * oi__gemm_a_at(g, i, p);
            for (int64_t j = 0; j < g->n; j++)
                ci[j] = OI_S_mac(ci[j], aip, oi__gemm_b_at(g, p, j));
        }
        for (int64_t j = 0; g->bias && j < g->n; j++)
            ci[j] += g->bias[j];
    }
}

/* ---- packing ----
 * A packed operand is a row of micro-panels, each `width` (mr or nr) wide:
 * panel q holds, for each step p of the k block, its `width` values
 * contiguously. Values past the matrix edge are zero, so edge tiles run
 * the same kernel (their extra rows/columns are computed and dropped).
 * An operand is read in place through its strides: value r of step p is
 * src[r * r_stride + p * p_stride]. A unit stride along the steps packs
 * row by row (pack_rows), a unit stride along the panel packs a line of
 * the panel at once (pack_cols), any other view goes element by element
 * (pack_strided): a transposed or sliced view is never copied first. */

/* Unit stride along the steps: each panel value r is a row of `src` (step
 * p = column p). Reads `width` rows side by side so each output line is
 * written once and every input row streams forward. */
static void oi__gemm_f32_pack_rows(const oi__gemm_f32_impl *impl, const float *src, int64_t ld, int64_t n_rows,
                                   int64_t kc, int width, float *dst) {
    static const float zeros[16] = {0}; /* the rows of a last panel past n_rows */
    const float *rows[OI__GEMM_MAX_NR];
    for (int64_t q = 0; q < n_rows; q += width) {
        int valid = (int)oi__gemm_min(width, n_rows - q);
        for (int r = 0; r < width; r++)
            rows[r] = r < valid ? src + (q + r) * ld : zeros;
        float *panel = dst + q * kc;
        /* 16 steps at a time: one cache line of each source row. */
        int64_t p = 0;
        for (; p + 16 <= kc; p += 16) {
            float *out = panel + p * width;
            if (impl->interleave16)
                impl->interleave16(rows, width, out);
            else
                for (int r = 0; r < width; r++) {
                    OI__GEMM_PREFETCH(rows[r] + 64); /* short runs: help the prefetcher */
                    for (int i = 0; i < 16; i++)
                        out[i * width + r] = rows[r][i];
                }
            for (int r = 0; r < valid; r++)
                rows[r] += 16;
        }
        for (int64_t i = 0; p + i < kc; i++) /* rows[r] now point at step p */
            for (int r = 0; r < width; r++)
                panel[(p + i) * width + r] = r < valid ? rows[r][i] : 0.0f;
    }
}

/* synth-embed begin (oi_gemm.h: the emitted code packs B with these two) */
/* (inline: a folder with no B to pack at open does not call them) */
/* Unit stride along the panel: step p is a row of `src`. Walks src row by
 * row (unit stride, one page after another) and deals each row out to the
 * panels. */
static inline void oi__gemm_f32_pack_cols(const float *src, int64_t ld, int64_t n_cols, int64_t kc, int width,
                                   float *dst) {
    int64_t full = n_cols / width * width;
    for (int64_t p = 0; p < kc; p++) {
        const float *row = src + p * ld;
        float *out = dst + p * width;
        for (int64_t q = 0; q < full; q += width)
            memcpy(out + q * kc, row + q, (size_t)width * sizeof(float));
        if (full < n_cols) {
            float *edge = out + full * kc;
            int64_t col = 0;
            for (; col < n_cols - full; col++)
                edge[col] = row[full + col];
            for (; col < width; col++)
                edge[col] = 0.0f;
        }
    }
}

/* No unit stride (a permuted or stepped view): gathered one value at a
 * time, walking each panel line in order. */
static inline void oi__gemm_f32_pack_strided(const float *src, int64_t r_stride, int64_t p_stride, int64_t n,
                                             int64_t kc, int width, float *dst) {
    for (int64_t q = 0; q < n; q += width) {
        int valid = (int)oi__gemm_min(width, n - q);
        float *panel = dst + q * kc;
        for (int64_t p = 0; p < kc; p++) {
            const float *line = src + q * r_stride + p * p_stride;
            for (int r = 0; r < width; r++)
                panel[p * width + r] = r < valid ? line[r * r_stride] : 0.0f;
        }
    }
}

/* synth-embed end */

/* Values [v0, v0+n) x steps [p0, p0+kc) of an operand whose value v, step
 * p is src[v * v_stride + p * p_stride], in `width`-wide panels. */
static void oi__gemm_f32_pack(const oi__gemm_f32_impl *impl, const float *src, int64_t v_stride, int64_t p_stride,
                              int64_t v0, int64_t n, int64_t p0, int64_t kc, int width, float *dst) {
    const float *first = src + v0 * v_stride + p0 * p_stride;
    if (p_stride == 1 || kc == 1)
        oi__gemm_f32_pack_rows(impl, first, v_stride, n, kc, width, dst);
    else if (v_stride == 1 || n == 1)
        oi__gemm_f32_pack_cols(first, p_stride, n, kc, width, dst);
    else
        oi__gemm_f32_pack_strided(first, v_stride, p_stride, n, kc, width, dst);
}

/* Rows [i0, i0+rows) x steps [p0, p0+kc) of op(A), in mr-row panels. */
static void oi__gemm_f32_pack_a(const oi__gemm_f32_impl *impl, const oi__gemm_f32_args *g, int64_t i0, int64_t rows,
                                int64_t p0, int64_t kc, float *dst) {
    oi__gemm_f32_pack(impl, g->a, g->a_rs, g->a_cs, i0, rows, p0, kc, impl->mr, dst);
}

/* Steps [p0, p0+kc) x columns [j0, j0+cols) of op(B), in nr-column panels. */
static void oi__gemm_f32_pack_b(const oi__gemm_f32_impl *impl, const oi__gemm_f32_args *g, int64_t p0, int64_t kc,
                                int64_t j0, int64_t cols, float *dst) {
    oi__gemm_f32_pack(impl, g->b, g->b_cs, g->b_rs, j0, cols, p0, kc, impl->nr, dst);
}

/* ---- op(B) packed once: model weights ----
 * All of op(B) in the layout the tasks would pack it in: k block after k
 * block (impl->kc steps each), each block a row of nr-column panels over
 * all n_pad columns. A task then reads the block at p0 from column j1 at
 * data + p0 * n_pad + j1 * kc instead of packing it. The copy is made on
 * the first call, published on the owner storage with one atomic
 * compare-and-swap (it is never changed or replaced afterwards, so
 * concurrent readers are safe) and freed with the storage. */
typedef struct oi__gemm_f32_packed {
    const oi__gemm_f32_impl *impl; /* the key: this path ...                  */
    const float *b;                /* ... these bytes in this layout         */
    int64_t k, n, b_rs, b_cs;
    int64_t n_pad;                 /* n rounded up to impl->nr               */
    float *data;                   /* aligned, inside the same allocation    */
} oi__gemm_f32_packed;

void oi__gemm_packed_free(void *packed) { oi__free(packed); }

static bool oi__gemm_packed_matches(const oi__gemm_f32_packed *p, const oi__gemm_f32_impl *impl,
                                    const oi__gemm_f32_args *g) {
    return p->impl == impl && p->b == g->b && p->k == g->k && p->n == g->n && p->b_rs == g->b_rs &&
           p->b_cs == g->b_cs;
}

/* The packed op(B) for this call: found on g->b_owner, or made and kept
 * there. NULL (pack per task, as for any B) when there is no owner, the
 * owner already keeps another layout, n is so narrow that padding would
 * more than double the copy, memory is short or the compiler has no
 * atomics. So the copies stay about the size of the weights they mirror. */
static const oi__gemm_f32_packed *oi__gemm_f32_packed_b(const oi__gemm_f32_impl *impl, const oi__gemm_f32_args *g) {
#if defined(__GNUC__) || defined(__clang__)
    if (!g->b_owner)
        return NULL;
    void **slot = &g->b_owner->gemm_packed;
    const oi__gemm_f32_packed *have = (const oi__gemm_f32_packed *)__atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (have)
        return oi__gemm_packed_matches(have, impl, g) ? have : NULL;
    int64_t n_pad = oi__gemm_round_up(g->n, impl->nr);
    if (n_pad > 2 * g->n)
        return NULL; /* mostly padding: the copy would outgrow the weight */
    size_t bytes = sizeof(oi__gemm_f32_packed) + OI__GEMM_ALIGN + (size_t)(n_pad * g->k) * sizeof(float);
    oi__gemm_f32_packed *p = (oi__gemm_f32_packed *)oi__malloc(bytes);
    if (!p)
        return NULL; /* not an error: the tasks pack B themselves */
    uintptr_t data = ((uintptr_t)(p + 1) + OI__GEMM_ALIGN - 1) & ~(uintptr_t)(OI__GEMM_ALIGN - 1);
    p->impl = impl;
    p->b = g->b;
    p->k = g->k;
    p->n = g->n;
    p->b_rs = g->b_rs;
    p->b_cs = g->b_cs;
    p->n_pad = n_pad;
    p->data = (float *)data;
    for (int64_t p0 = 0; p0 < g->k; p0 += impl->kc)
        oi__gemm_f32_pack_b(impl, g, p0, oi__gemm_min(impl->kc, g->k - p0), 0, g->n, p->data + p0 * n_pad);
    void *expected = NULL;
    if (__atomic_compare_exchange_n(slot, &expected, (void *)p, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return p;
    oi__free(p); /* another thread published first */
    have = (const oi__gemm_f32_packed *)expected;
    return oi__gemm_packed_matches(have, impl, g) ? have : NULL;
#else
    (void)impl, (void)g;
    return NULL;
#endif
}

/* ---- skinny products: m or n is at most OI__GEMM_SKINNY ----
 * Matrix-vector-like products are bound by reading the big operand once:
 * packing it would read it twice, and a 12 x 32 register tile would be
 * mostly padding. Instead the small operand is copied contiguous along k
 * (with alpha folded in) and the big one is streamed in place:
 *  - its rows run along k: dot products, tasks split the big side;
 *  - its rows run along the big side: row updates (axpy); tasks split k so
 *    each streams whole rows, and their partial sums are added at the end.
 * When n is the small side we compute C^T = op(B)^T op(A)^T the same way.
 * A big operand with no unit stride (a permuted view) takes the packed
 * path instead. */
#define OI__GEMM_SKINNY 4
#define OI__GEMM_SKINNY_DOT_CHUNK 64   /* big-side indices per dot task */
#define OI__GEMM_SKINNY_AXPY_BLOCK 65536 /* floats of partial sums kept hot */
/* In SIMD lanes a skinny product of 2^20 multiply-adds takes some 30-60 us on
 * one core; below that a second thread saves less than its hand-off risks
 * (a worker descheduled mid-task holds the step up). */
#define OI__GEMM_SKINNY_PARALLEL_MIN ((int64_t)1 << 20)
#define OI__GEMM_SKINNY_STACK_FLOATS 2048 /* work space (the small copy, the partial sums) kept on the stack */

typedef struct oi__gemm_f32_skinny_job {
    int64_t n_small, n_big, k;
    const float *small;    /* n_small x k, contiguous, alpha applied */
    const float *big;      /* element (p, t) at big[p * big_p + t * big_t] */
    int64_t big_p, big_t;  /* one of them is 1 */
    float beta;
    float *c;              /* C(s, t) at c[s * c_s + t * c_t] */
    int64_t c_s, c_t;
    const float *bias;     /* NULL or bias[s * bias_s + t * bias_t] */
    int64_t bias_s, bias_t;
    int n_tasks;
    float *partial;        /* axpy: n_tasks x n_small x n_big */
    oi__gemm_isa isa;      /* AVX-512 / AVX2: the SIMD loops below; else the plain ones */
} oi__gemm_f32_skinny_job;

/* synth-embed begin (oi_gemm.h: a conv's skinny dot products, portable and in SIMD lanes) */
/* 16 independent partial sums: vectorizes without reassociation flags. */
static inline float oi__gemm_f32_dot(const float *x, const float *y, int64_t k) {
    float part[16] = {0};
    int64_t p = 0;
    for (; p + 16 <= k; p += 16)
        for (int l = 0; l < 16; l++)
            part[l] += x[p + l] * y[p + l];
    float sum = 0.0f;
    for (int l = 0; l < 16; l++)
        sum += part[l];
    for (int l = 0; l < 16 && p < k; l++, p++) /* the tail: fewer than 16 (bounded, so GCC sees no overflow once k is a constant) */
        sum += x[p] * y[p];
    return sum;
}
/* synth-embed end */

static void oi__gemm_f32_skinny_store(const oi__gemm_f32_skinny_job *job, int64_t s, int64_t t, float value) {
    float *out = job->c + s * job->c_s + t * job->c_t;
    *out = (job->beta == 0.0f ? value : value + job->beta * *out) +
           (job->bias ? job->bias[s * job->bias_s + t * job->bias_t] : 0.0f);
}

/* oi__gemm_f32_skinny_store for C(s, t0 .. t0 + count - 1) from v[0 ..]:
 * the same arithmetic, with the tests on beta and the bias made once per
 * run rather than once per element (a call each was 3 % of a Silero VAD
 * step: its LSTM stores 1024 sums). */
static void oi__gemm_f32_skinny_store_run(const oi__gemm_f32_skinny_job *job, int64_t s, int64_t t0, int64_t count,
                                          const float *v) {
    float *out = job->c + s * job->c_s + t0 * job->c_t;
    const float *bias = job->bias ? job->bias + s * job->bias_s + t0 * job->bias_t : NULL;
    int64_t c_t = job->c_t, bias_t = job->bias_t;
    float beta = job->beta;
    if (beta == 0.0f && !bias)
        for (int64_t t = 0; t < count; t++)
            out[t * c_t] = v[t] + 0.0f; /* + 0.0f as the store adds it: -0 becomes +0 */
    else if (beta == 0.0f)
        for (int64_t t = 0; t < count; t++)
            out[t * c_t] = v[t] + bias[t * bias_t];
    else
        for (int64_t t = 0; t < count; t++)
            out[t * c_t] = (v[t] + beta * out[t * c_t]) + (bias ? bias[t * bias_t] : 0.0f);
}

/* ---- skinny products in SIMD lanes ----
 * The plain loops above compile for the baseline ISA (SSE2) unless the user
 * builds with -march; these take the big operand in AVX-512 / AVX2 vectors
 * whatever the flags, all n_small (1-4) rows at once so it is read once. */
/* synth-embed begin (oi_gemm.h and oi_quant.h: the 512-bit folds; the dot kernels and x's rounding into int8 blocks need them) */
#if OI__GEMM_X86 && !defined(OI__V512_FOLDS)
#define OI__V512_FOLDS /* once, where a folder includes both headers */
/* Horizontal sums and extremes of a 512-bit vector, for the kernels here and
 * in conv.c, reduce.c and quant.c. Not GCC's _mm512_reduce_*, and the
 * shuffles and halves in their all-lanes masked forms: the plain intrinsics
 * pass _mm512_undefined_* along, which g++ 12 flags as (maybe-)uninitialized
 * (OI__ALL_LANES below, vexp.h). */
#define OI__V512_ALL ((__mmask16)0xFFFF)
OI__TARGET_AVX512 static inline __m256 oi__v512_halves_ps(__m512 v, bool max) {
    __m512 w = _mm512_maskz_shuffle_f32x4(OI__V512_ALL, v, v, 0x4E), f;
    f = max ? _mm512_maskz_max_ps(OI__V512_ALL, v, w) : _mm512_add_ps(v, w);
    return _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd((__mmask8)0xF, _mm512_castps_pd(f), 0));
}

OI__TARGET_AVX512 static inline float oi__v512_fold_ps(__m512 v, bool max) {
    __m256 h = oi__v512_halves_ps(v, max);
    __m128 lo = _mm256_castps256_ps128(h), hi = _mm256_extractf128_ps(h, 1);
    __m128 x = max ? _mm_max_ps(lo, hi) : _mm_add_ps(lo, hi);
    x = max ? _mm_max_ps(x, _mm_movehl_ps(x, x)) : _mm_add_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(max ? _mm_max_ss(x, _mm_shuffle_ps(x, x, 1)) : _mm_add_ss(x, _mm_shuffle_ps(x, x, 1)));
}

OI__TARGET_AVX512 static inline float oi__v512_sum_ps(__m512 v) { return oi__v512_fold_ps(v, false); }

/* the largest lane; NaN lanes must not occur (the callers keep them out) */
OI__TARGET_AVX512 static inline float oi__v512_max_ps(__m512 v) { return oi__v512_fold_ps(v, true); }

OI__TARGET_AVX512 static inline float oi__v512_min_ps(__m512 v) {
    return -oi__v512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), v));
}

OI__TARGET_AVX512 static inline double oi__v512_sum_pd(__m512d v) {
    __m512d f = _mm512_add_pd(v, _mm512_maskz_shuffle_f64x2((__mmask8)0xFF, v, v, 0x4E));
    __m256d h = _mm512_maskz_extractf64x4_pd((__mmask8)0xF, f, 0);
    __m128d x = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_add_sd(x, _mm_unpackhi_pd(x, x)));
}

OI__TARGET_AVX512 static inline int32_t oi__v512_sum_epi32(__m512i v) {
    __m512i f = _mm512_add_epi32(v, _mm512_maskz_shuffle_i32x4(OI__V512_ALL, v, v, 0x4E));
    __m256i h = _mm512_maskz_extracti64x4_epi64((__mmask8)0xF, f, 0);
    __m128i x = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    x = _mm_add_epi32(x, _mm_shuffle_epi32(x, 0x4E));
    return _mm_cvtsi128_si32(_mm_add_epi32(x, _mm_shuffle_epi32(x, 0xB1)));
}
#endif
/* synth-embed end */

/* synth-embed begin (oi_gemm.h: the dot kernels below; inline, as a folder may call none) */
#if OI__GEMM_X86

#define OI__SKINNY_ALWAYS_INLINE __attribute__((always_inline)) inline
/* Unrolled loops over the rows and lanes keep the accumulator arrays in
 * registers; GCC at -O2 would otherwise leave them on the stack (a third
 * slower than at -O3). */
#define OI__SKINNY_UNROLL _Pragma("GCC unroll 16")

/* out[s] = sum_p small[s * k + p] * y[p] for s < NS; 2 x 16 lanes per row. */
OI__TARGET_AVX512 static OI__SKINNY_ALWAYS_INLINE void oi__skinny_dots_avx512_n(const float *small, int64_t k, int ns,
                                                                                 const float *y, float *out) {
    __m512 acc0[4], acc1[4];
    OI__SKINNY_UNROLL
    for (int s = 0; s < 4; s++)
        acc0[s] = acc1[s] = _mm512_setzero_ps();
    int64_t p = 0;
    for (; p + 32 <= k; p += 32) {
        __m512 y0 = _mm512_loadu_ps(y + p), y1 = _mm512_loadu_ps(y + p + 16);
        OI__SKINNY_UNROLL
        for (int s = 0; s < ns; s++) {
            acc0[s] = _mm512_fmadd_ps(_mm512_loadu_ps(small + s * k + p), y0, acc0[s]);
            acc1[s] = _mm512_fmadd_ps(_mm512_loadu_ps(small + s * k + p + 16), y1, acc1[s]);
        }
    }
    for (; p < k; p += 16) {
        __mmask16 m = k - p >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (k - p)) - 1u);
        __m512 y0 = _mm512_maskz_loadu_ps(m, y + p);
        OI__SKINNY_UNROLL
        for (int s = 0; s < ns; s++)
            acc0[s] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, small + s * k + p), y0, acc0[s]);
    }
    OI__SKINNY_UNROLL
    for (int s = 0; s < ns; s++)
        out[s] = oi__v512_sum_ps(_mm512_add_ps(acc0[s], acc1[s]));
}

OI__TARGET_AVX512 static inline void oi__skinny_dots_avx512(const float *small, int64_t k, int ns, const float *y, float *out) {
    switch (ns) { /* a constant row count: the accumulators stay in registers */
    case 1: oi__skinny_dots_avx512_n(small, k, 1, y, out); break;
    case 2: oi__skinny_dots_avx512_n(small, k, 2, y, out); break;
    case 3: oi__skinny_dots_avx512_n(small, k, 3, y, out); break;
    default: oi__skinny_dots_avx512_n(small, k, 4, y, out); break;
    }
}

OI__TARGET_AVX2 static inline float oi__skinny_hsum_avx2(__m256 v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
}

OI__TARGET_AVX2 static OI__SKINNY_ALWAYS_INLINE void oi__skinny_dots_avx2_n(const float *small, int64_t k, int ns,
                                                                             const float *y, float *out) {
    __m256 acc0[4], acc1[4];
    OI__SKINNY_UNROLL
    for (int s = 0; s < 4; s++)
        acc0[s] = acc1[s] = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 16 <= k; p += 16) {
        __m256 y0 = _mm256_loadu_ps(y + p), y1 = _mm256_loadu_ps(y + p + 8);
        OI__SKINNY_UNROLL
        for (int s = 0; s < ns; s++) {
            acc0[s] = _mm256_fmadd_ps(_mm256_loadu_ps(small + s * k + p), y0, acc0[s]);
            acc1[s] = _mm256_fmadd_ps(_mm256_loadu_ps(small + s * k + p + 8), y1, acc1[s]);
        }
    }
    OI__SKINNY_UNROLL
    for (int s = 0; s < ns; s++) {
        float sum = oi__skinny_hsum_avx2(_mm256_add_ps(acc0[s], acc1[s]));
        for (int l = 0; l < 16 && p + l < k; l++) /* the tail, < 16: bounded for GCC once k is a constant */
            sum += small[s * k + p + l] * y[p + l];
        out[s] = sum;
    }
}

OI__TARGET_AVX2 static inline void oi__skinny_dots_avx2(const float *small, int64_t k, int ns, const float *y, float *out) {
    switch (ns) {
    case 1: oi__skinny_dots_avx2_n(small, k, 1, y, out); break;
    case 2: oi__skinny_dots_avx2_n(small, k, 2, y, out); break;
    case 3: oi__skinny_dots_avx2_n(small, k, 3, y, out); break;
    default: oi__skinny_dots_avx2_n(small, k, 4, y, out); break;
    }
}
#endif
/* synth-embed end */

#if OI__GEMM_X86
/* acc[s * n_big + t] = sum_{p0 <= p < p1} small[s * k + p] * big[p * big_p + t]
 * for every t, 64 columns (4 x 16 lanes) x NS rows held in registers while
 * p runs, so each big element is loaded once and each sum stored once. */
OI__TARGET_AVX512 static OI__SKINNY_ALWAYS_INLINE void
oi__skinny_axpy_avx512_n(const oi__gemm_f32_skinny_job *job, int ns, int64_t p0, int64_t p1, float *acc) {
    for (int64_t t0 = 0; t0 < job->n_big; t0 += 64) {
        __mmask16 m[4];
        OI__SKINNY_UNROLL
        for (int i = 0; i < 4; i++) {
            int64_t left = job->n_big - t0 - 16 * i;
            m[i] = left >= 16 ? (__mmask16)0xFFFF : left <= 0 ? (__mmask16)0 : (__mmask16)((1u << left) - 1u);
        }
        __m512 a[4][4];
        OI__SKINNY_UNROLL
        for (int s = 0; s < 4; s++)
            OI__SKINNY_UNROLL
            for (int i = 0; i < 4; i++)
                a[s][i] = _mm512_setzero_ps();
        const float *row = job->big + p0 * job->big_p + t0;
        for (int64_t p = p0; p < p1; p++, row += job->big_p) {
            __m512 r[4];
            OI__SKINNY_UNROLL
            for (int i = 0; i < 4; i++)
                r[i] = _mm512_maskz_loadu_ps(m[i], row + 16 * i);
            OI__SKINNY_UNROLL
            for (int s = 0; s < ns; s++) {
                __m512 w = _mm512_set1_ps(job->small[s * job->k + p]);
                OI__SKINNY_UNROLL
                for (int i = 0; i < 4; i++)
                    a[s][i] = _mm512_fmadd_ps(w, r[i], a[s][i]);
            }
        }
        OI__SKINNY_UNROLL
        for (int s = 0; s < ns; s++)
            OI__SKINNY_UNROLL
            for (int i = 0; i < 4; i++)
                _mm512_mask_storeu_ps(acc + s * job->n_big + t0 + 16 * i, m[i], a[s][i]);
    }
}

OI__TARGET_AVX512 static void oi__skinny_axpy_avx512(const oi__gemm_f32_skinny_job *job, int64_t p0, int64_t p1,
                                                     float *acc) {
    switch (job->n_small) {
    case 1: oi__skinny_axpy_avx512_n(job, 1, p0, p1, acc); break;
    case 2: oi__skinny_axpy_avx512_n(job, 2, p0, p1, acc); break;
    case 3: oi__skinny_axpy_avx512_n(job, 3, p0, p1, acc); break;
    default: oi__skinny_axpy_avx512_n(job, 4, p0, p1, acc); break;
    }
}

/* The same with 16 columns (2 x 8 lanes) per pass; the last partial columns
 * go through the scalar loop. */
OI__TARGET_AVX2 static OI__SKINNY_ALWAYS_INLINE void
oi__skinny_axpy_avx2_n(const oi__gemm_f32_skinny_job *job, int ns, int64_t p0, int64_t p1, float *acc) {
    int64_t t0 = 0;
    for (; t0 + 16 <= job->n_big; t0 += 16) {
        __m256 a[4][2];
        OI__SKINNY_UNROLL
        for (int s = 0; s < 4; s++)
            a[s][0] = a[s][1] = _mm256_setzero_ps();
        const float *row = job->big + p0 * job->big_p + t0;
        for (int64_t p = p0; p < p1; p++, row += job->big_p) {
            __m256 r0 = _mm256_loadu_ps(row), r1 = _mm256_loadu_ps(row + 8);
            OI__SKINNY_UNROLL
            for (int s = 0; s < ns; s++) {
                __m256 w = _mm256_set1_ps(job->small[s * job->k + p]);
                a[s][0] = _mm256_fmadd_ps(w, r0, a[s][0]);
                a[s][1] = _mm256_fmadd_ps(w, r1, a[s][1]);
            }
        }
        OI__SKINNY_UNROLL
        for (int s = 0; s < ns; s++) {
            _mm256_storeu_ps(acc + s * job->n_big + t0, a[s][0]);
            _mm256_storeu_ps(acc + s * job->n_big + t0 + 8, a[s][1]);
        }
    }
    OI__SKINNY_UNROLL
    for (int s = 0; s < ns; s++)
        for (int64_t t = t0; t < job->n_big; t++) {
            float sum = 0.0f;
            for (int64_t p = p0; p < p1; p++)
                sum += job->small[s * job->k + p] * job->big[p * job->big_p + t];
            acc[s * job->n_big + t] = sum;
        }
}

OI__TARGET_AVX2 static void oi__skinny_axpy_avx2(const oi__gemm_f32_skinny_job *job, int64_t p0, int64_t p1,
                                                 float *acc) {
    switch (job->n_small) {
    case 1: oi__skinny_axpy_avx2_n(job, 1, p0, p1, acc); break;
    case 2: oi__skinny_axpy_avx2_n(job, 2, p0, p1, acc); break;
    case 3: oi__skinny_axpy_avx2_n(job, 3, p0, p1, acc); break;
    default: oi__skinny_axpy_avx2_n(job, 4, p0, p1, acc); break;
    }
}
#endif

/* ---- skinny dot products, several big rows at once ----
 * The kernels above finish each dot product alone (a horizontal sum and a
 * store call each), which costs as much as the products when k is a few
 * hundred (a streaming model's convolutions). These take RB big rows (4 in
 * AVX-512, 2 in AVX2) against all small rows with one accumulator each,
 * the small rows loaded once per step for every big row, and reduce four
 * accumulators to four sums in one shuffle tree. out[s * RB + r]. */
/* synth-embed begin (oi_gemm.h: a conv's dot products, 4 or 2 output channels at once) */
#if OI__GEMM_X86
/* Inlined into the AVX-512 callers too (plain AVX2: no FMA, which avx512f
 * does not imply): called, it returned with the upper halves of the ymm
 * registers dirty and no vzeroupper, and so did its AVX-512 caller, so on
 * Intel cores every SSE instruction after it paid the transition (the
 * AVX-512 skinny products ran at a fifth of the AVX2 ones' speed). */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) __m128
oi__skinny_sum4_avx2(__m256 a, __m256 b, __m256 c, __m256 d) {
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d)); /* [a b c d] per 128-bit half */
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/* the masked extracts of both halves: g++ flags the plain ones (OI__V512_ALL above) */
OI__TARGET_AVX512 static inline __m256 oi__skinny_half_sum_avx512(__m512 v) {
    __m256 lo = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd((__mmask8)0xF, _mm512_castps_pd(v), 0));
    __m256 hi = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd((__mmask8)0xF, _mm512_castps_pd(v), 1));
    return _mm256_add_ps(lo, hi);
}

OI__TARGET_AVX512 static OI__SKINNY_ALWAYS_INLINE void oi__skinny_rows_avx512_n(const float *small, int64_t k, int ns,
                                                                                 const float *y, int64_t y_t,
                                                                                 float *out) {
    __m512 acc[4][4];
    OI__SKINNY_UNROLL
    for (int r = 0; r < 4; r++)
        OI__SKINNY_UNROLL
        for (int s = 0; s < 4; s++)
            acc[r][s] = _mm512_setzero_ps();
    for (int64_t p = 0; p < k; p += 16) {
        __mmask16 m = k - p >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (k - p)) - 1u);
        __m512 sm[4];
        OI__SKINNY_UNROLL
        for (int s = 0; s < ns; s++)
            sm[s] = _mm512_maskz_loadu_ps(m, small + s * k + p);
        OI__SKINNY_UNROLL
        for (int r = 0; r < 4; r++) {
            __m512 yv = _mm512_maskz_loadu_ps(m, y + r * y_t + p);
            OI__SKINNY_UNROLL
            for (int s = 0; s < ns; s++)
                acc[r][s] = _mm512_fmadd_ps(sm[s], yv, acc[r][s]);
        }
    }
    OI__SKINNY_UNROLL
    for (int s = 0; s < ns; s++)
        _mm_storeu_ps(out + s * 4,
                      oi__skinny_sum4_avx2(oi__skinny_half_sum_avx512(acc[0][s]), oi__skinny_half_sum_avx512(acc[1][s]),
                                           oi__skinny_half_sum_avx512(acc[2][s]), oi__skinny_half_sum_avx512(acc[3][s])));
}

OI__TARGET_AVX512 static inline void oi__skinny_rows_avx512(const float *small, int64_t k, int ns, const float *y, int64_t y_t,
                                                     float *out) {
    switch (ns) {
    case 1: oi__skinny_rows_avx512_n(small, k, 1, y, y_t, out); break;
    case 2: oi__skinny_rows_avx512_n(small, k, 2, y, y_t, out); break;
    case 3: oi__skinny_rows_avx512_n(small, k, 3, y, y_t, out); break;
    default: oi__skinny_rows_avx512_n(small, k, 4, y, y_t, out); break;
    }
}

/* AVX2: two big rows (8 accumulators of 16 ymm registers), the k % 8 tail
 * in scalars; sums of (row 0, row 1) for small rows s and s + 1 at once. */
OI__TARGET_AVX2 static OI__SKINNY_ALWAYS_INLINE void oi__skinny_rows_avx2_n(const float *small, int64_t k, int ns,
                                                                             const float *y, int64_t y_t, float *out) {
    __m256 acc[2][4];
    OI__SKINNY_UNROLL
    for (int r = 0; r < 2; r++)
        OI__SKINNY_UNROLL
        for (int s = 0; s < 4; s++)
            acc[r][s] = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 8 <= k; p += 8) {
        __m256 sm[4];
        OI__SKINNY_UNROLL
        for (int s = 0; s < ns; s++)
            sm[s] = _mm256_loadu_ps(small + s * k + p);
        OI__SKINNY_UNROLL
        for (int r = 0; r < 2; r++) {
            __m256 yv = _mm256_loadu_ps(y + r * y_t + p);
            OI__SKINNY_UNROLL
            for (int s = 0; s < ns; s++)
                acc[r][s] = _mm256_fmadd_ps(sm[s], yv, acc[r][s]);
        }
    }
    float sums[4][2];
    OI__SKINNY_UNROLL
    for (int s = 0; s < 4; s += 2) {
        if (s >= ns)
            break;
        _mm_storeu_ps(&sums[s][0], oi__skinny_sum4_avx2(acc[0][s], acc[1][s], acc[0][s + 1], acc[1][s + 1]));
    }
    OI__SKINNY_UNROLL
    for (int s = 0; s < ns; s++)
        for (int r = 0; r < 2; r++) {
            float sum = sums[s][r];
            for (int l = 0; l < 8 && p + l < k; l++) /* the tail, < 8 */
                sum += small[s * k + p + l] * y[r * y_t + p + l];
            out[s * 2 + r] = sum;
        }
}

OI__TARGET_AVX2 static inline void oi__skinny_rows_avx2(const float *small, int64_t k, int ns, const float *y, int64_t y_t,
                                                 float *out) {
    switch (ns) {
    case 1: oi__skinny_rows_avx2_n(small, k, 1, y, y_t, out); break;
    case 2: oi__skinny_rows_avx2_n(small, k, 2, y, y_t, out); break;
    case 3: oi__skinny_rows_avx2_n(small, k, 3, y, y_t, out); break;
    default: oi__skinny_rows_avx2_n(small, k, 4, y, y_t, out); break;
    }
}
#endif
/* synth-embed end */

#if OI__GEMM_X86
/* AVX2, RB big rows at once, for the simulator's dot tasks: 3 against 3-4
 * small rows, 4 against 2, 6 against 1 (at least 6 accumulators, FMA
 * chains enough to keep both FMA units busy). GCC compiles
 * oi__skinny_rows_avx2 with each small row's vector read again for each of
 * its two big rows (a load folded into every FMA): 10 loads per 8 FMAs,
 * which bounds it on loads. Here the big rows' vectors stay in registers
 * and each small row's vector is loaded once per step into one (7 loads
 * per 12 FMAs against 4 small rows). Every sum is computed exactly as
 * oi__skinny_rows_avx2 computes it (the same lanes in the same order, the
 * same shuffle tree, the same scalar tail), so the rows come out bit for
 * bit the same: the synthesizer's code, which calls that kernel, agrees.
 * out[s * RB + r]. */
#define OI__SKINNY_ROWSN_MAX 6
OI__TARGET_AVX2 static OI__SKINNY_ALWAYS_INLINE void oi__skinny_rowsn_avx2_n(const float *small, int64_t k, int ns,
                                                                              int rb, const float *y, int64_t y_t,
                                                                              float *out) {
    __m256 acc[OI__SKINNY_ROWSN_MAX][4];
    OI__SKINNY_UNROLL
    for (int r = 0; r < rb; r++)
        OI__SKINNY_UNROLL
        for (int s = 0; s < 4; s++)
            acc[r][s] = _mm256_setzero_ps();
    int64_t p = 0;
    for (; p + 8 <= k; p += 8) {
        __m256 yv[OI__SKINNY_ROWSN_MAX];
        OI__SKINNY_UNROLL
        for (int r = 0; r < rb; r++)
            yv[r] = _mm256_loadu_ps(y + r * y_t + p);
        OI__SKINNY_UNROLL
        for (int s = 0; s < ns; s++) {
            __m256 sm = _mm256_loadu_ps(small + s * k + p);
            OI__SKINNY_UNROLL
            for (int r = 0; r < rb; r++)
                acc[r][s] = _mm256_fmadd_ps(sm, yv[r], acc[r][s]);
        }
    }
    float sums[OI__SKINNY_ROWSN_MAX][4];
    OI__SKINNY_UNROLL
    for (int r = 0; r < rb; r++)
        _mm_storeu_ps(sums[r], oi__skinny_sum4_avx2(acc[r][0], acc[r][1], acc[r][2], acc[r][3]));
    OI__SKINNY_UNROLL
    for (int s = 0; s < ns; s++)
        for (int r = 0; r < rb; r++) {
            float sum = sums[r][s];
            for (int l = 0; l < 8 && p + l < k; l++) /* the tail, < 8 */
                sum += small[s * k + p + l] * y[r * y_t + p + l];
            out[s * rb + r] = sum;
        }
}

/* The big rows a group takes against ns small rows. */
static int oi__skinny_rowsn_group(int64_t ns) { return ns == 1 ? 6 : ns == 2 ? 4 : 3; }

/* Constant counts: the accumulators stay in registers. rb <= oi__skinny_rowsn_group(ns). */
#define OI__SKINNY_ROWSN_CASE(RB, NS) \
    case (RB) * 4 + (NS) - 1: oi__skinny_rowsn_avx2_n(small, k, NS, RB, y, y_t, out); break;

OI__TARGET_AVX2 static void oi__skinny_rowsn_avx2(const float *small, int64_t k, int ns, int rb, const float *y,
                                                  int64_t y_t, float *out) {
    switch (rb * 4 + ns - 1) {
    OI__SKINNY_ROWSN_CASE(1, 1) OI__SKINNY_ROWSN_CASE(1, 2) OI__SKINNY_ROWSN_CASE(1, 3) OI__SKINNY_ROWSN_CASE(1, 4)
    OI__SKINNY_ROWSN_CASE(2, 1) OI__SKINNY_ROWSN_CASE(2, 2) OI__SKINNY_ROWSN_CASE(2, 3) OI__SKINNY_ROWSN_CASE(2, 4)
    OI__SKINNY_ROWSN_CASE(3, 1) OI__SKINNY_ROWSN_CASE(3, 2) OI__SKINNY_ROWSN_CASE(3, 3) OI__SKINNY_ROWSN_CASE(3, 4)
    OI__SKINNY_ROWSN_CASE(4, 1) OI__SKINNY_ROWSN_CASE(4, 2)
    OI__SKINNY_ROWSN_CASE(5, 1) OI__SKINNY_ROWSN_CASE(6, 1)
    default: break; /* not asked for */
    }
}
#undef OI__SKINNY_ROWSN_CASE

/* ---- skinny row updates (axpy) for one or two small rows ----
 * oi__skinny_axpy_* hold 64 (AVX-512) or 16 (AVX2) columns for up to 4
 * small rows; with 1 or 2 (a matrix-vector product: an LSTM's gates) most
 * of those registers idle and k is walked once per narrow block. These
 * hold NV vectors of columns per small row (16 registers in all), so each
 * big row is read in longer runs and k is walked 2-4x less often. The
 * same sums in the same order (p ascending, one FMA each). Columns past
 * the last whole block are left: the caller's kernel does them. */
#define OI__SKINNY_WIDE_BODY(V, LANES, SET0, SET1, LOADU, STOREU, FMADD) \
    do { \
        int64_t cols = (int64_t)LANES * nv, t0 = 0; \
        for (; t0 + cols <= job->n_big; t0 += cols) { \
            V a[2][16]; \
            OI__SKINNY_UNROLL \
            for (int s = 0; s < 2; s++) \
                OI__SKINNY_UNROLL \
                for (int i = 0; i < 16; i++) \
                    a[s][i] = SET0(); \
            const float *row = job->big + p0 * job->big_p + t0; \
            for (int64_t p = p0; p < p1; p++, row += job->big_p) { \
                V w0 = SET1(job->small[p]), w1 = SET1(ns == 2 ? job->small[job->k + p] : 0.0f); \
                OI__SKINNY_UNROLL \
                for (int i = 0; i < nv; i++) { \
                    V r = LOADU(row + LANES * i); \
                    a[0][i] = FMADD(w0, r, a[0][i]); \
                    if (ns == 2) \
                        a[1][i] = FMADD(w1, r, a[1][i]); \
                } \
            } \
            OI__SKINNY_UNROLL \
            for (int s = 0; s < ns; s++) \
                OI__SKINNY_UNROLL \
                for (int i = 0; i < nv; i++) \
                    STOREU(acc + s * job->n_big + t0 + LANES * i, a[s][i]); \
        } \
        return t0; \
    } while (0)

OI__TARGET_AVX512 static OI__SKINNY_ALWAYS_INLINE int64_t oi__skinny_axpy_wide_avx512_n(
    const oi__gemm_f32_skinny_job *job, int ns, int nv, int64_t p0, int64_t p1, float *acc) {
    OI__SKINNY_WIDE_BODY(__m512, 16, _mm512_setzero_ps, _mm512_set1_ps, _mm512_loadu_ps, _mm512_storeu_ps,
                         _mm512_fmadd_ps);
}

OI__TARGET_AVX2 static OI__SKINNY_ALWAYS_INLINE int64_t oi__skinny_axpy_wide_avx2_n(
    const oi__gemm_f32_skinny_job *job, int ns, int nv, int64_t p0, int64_t p1, float *acc) {
    OI__SKINNY_WIDE_BODY(__m256, 8, _mm256_setzero_ps, _mm256_set1_ps, _mm256_loadu_ps, _mm256_storeu_ps,
                         _mm256_fmadd_ps);
}

/* The columns from `done` on (fewer than a wide block) by the narrow
 * kernels, into a buffer whose rows they fill, then into acc's rows. */
static void oi__skinny_axpy_rest(const oi__gemm_f32_skinny_job *job, int64_t done, int64_t p0, int64_t p1, float *acc) {
    float part[2 * 256];
    oi__gemm_f32_skinny_job rest = *job;
    rest.n_big = job->n_big - done;
    rest.big = job->big + done;
    if (job->isa == OI__GEMM_ISA_AVX512)
        oi__skinny_axpy_avx512(&rest, p0, p1, part);
    else
        oi__skinny_axpy_avx2(&rest, p0, p1, part);
    for (int64_t s = 0; s < job->n_small; s++)
        memcpy(acc + s * job->n_big + done, part + s * rest.n_big, (size_t)rest.n_big * sizeof(float));
}

/* The columns done in whole wide blocks; 0 for 3 or 4 small rows. */
OI__TARGET_AVX512 static int64_t oi__skinny_axpy_wide_avx512(const oi__gemm_f32_skinny_job *job, int64_t p0, int64_t p1,
                                                             float *acc) {
    if (job->n_small == 1)
        return oi__skinny_axpy_wide_avx512_n(job, 1, 16, p0, p1, acc);
    return job->n_small == 2 ? oi__skinny_axpy_wide_avx512_n(job, 2, 8, p0, p1, acc) : 0;
}

OI__TARGET_AVX2 static int64_t oi__skinny_axpy_wide_avx2(const oi__gemm_f32_skinny_job *job, int64_t p0, int64_t p1,
                                                         float *acc) {
    if (job->n_small == 1)
        return oi__skinny_axpy_wide_avx2_n(job, 1, 12, p0, p1, acc);
    return job->n_small == 2 ? oi__skinny_axpy_wide_avx2_n(job, 2, 5, p0, p1, acc) : 0;
}
#endif

/* C(s, t) for s < n_small and RB consecutive big indices from t: the
 * skinny store's arithmetic written out (no call per element). */
static void oi__gemm_f32_skinny_store_rows(const oi__gemm_f32_skinny_job *job, int64_t t, int rb, const float *out) {
    for (int64_t s = 0; s < job->n_small; s++)
        for (int r = 0; r < rb; r++) {
            float *c = job->c + s * job->c_s + (t + r) * job->c_t, v = out[s * rb + r];
            if (job->beta != 0.0f)
                v = v + job->beta * *c;
            *c = v + (job->bias ? job->bias[s * job->bias_s + (t + r) * job->bias_t] : 0.0f);
        }
}

/* Big rows [t, t + rows) of a dot task through the row kernels: the
 * number of rows done. AVX-512 takes multiples of 4; AVX2 the even rows
 * (as oi__skinny_rows_avx2 in pairs would), in groups then the few left,
 * so the same rows as ever go to the row kernels and the same odd last row
 * to the caller's one-row kernel. */
static int64_t oi__gemm_f32_skinny_dot_rows(const oi__gemm_f32_skinny_job *job, int64_t t, int64_t rows) {
#if OI__GEMM_X86
    bool avx512 = job->isa == OI__GEMM_ISA_AVX512;
    if (!avx512 && job->isa != OI__GEMM_ISA_AVX2)
        return 0;
    int64_t done = 0, end = avx512 ? rows - rows % 4 : rows - rows % 2;
    float out[4 * OI__GEMM_SKINNY];
    while (done < end) {
        const float *y = job->big + (t + done) * job->big_t;
        int group = avx512 ? 4 : oi__skinny_rowsn_group(job->n_small);
        int rb = end - done >= group ? group : (int)(end - done);
        if (avx512)
            oi__skinny_rows_avx512(job->small, job->k, (int)job->n_small, y, job->big_t, out);
        else
            oi__skinny_rowsn_avx2(job->small, job->k, (int)job->n_small, rb, y, job->big_t, out);
        oi__gemm_f32_skinny_store_rows(job, t + done, rb, out);
        done += rb;
    }
    return done;
#else
    (void)job, (void)t, (void)rows;
    return 0;
#endif
}

static void oi__gemm_f32_skinny_dot_task(void *ctx, int task, int thread) {
    const oi__gemm_f32_skinny_job *job = (const oi__gemm_f32_skinny_job *)ctx;
    (void)thread;
    int64_t t0 = (int64_t)task * OI__GEMM_SKINNY_DOT_CHUNK;
    int64_t t1 = oi__gemm_min(t0 + OI__GEMM_SKINNY_DOT_CHUNK, job->n_big);
    t0 += oi__gemm_f32_skinny_dot_rows(job, t0, t1 - t0);
#if OI__GEMM_X86
    if (job->isa == OI__GEMM_ISA_AVX512 || job->isa == OI__GEMM_ISA_AVX2) {
        float out[OI__GEMM_SKINNY];
        for (int64_t t = t0; t < t1; t++) {
            if (job->isa == OI__GEMM_ISA_AVX512)
                oi__skinny_dots_avx512(job->small, job->k, (int)job->n_small, job->big + t * job->big_t, out);
            else
                oi__skinny_dots_avx2(job->small, job->k, (int)job->n_small, job->big + t * job->big_t, out);
            for (int64_t s = 0; s < job->n_small; s++)
                oi__gemm_f32_skinny_store(job, s, t, out[s]);
        }
        return;
    }
#endif
    for (int64_t t = t0; t < t1; t++)
        for (int64_t s = 0; s < job->n_small; s++)
            oi__gemm_f32_skinny_store(job, s, t, oi__gemm_f32_dot(job->small + s * job->k, job->big + t * job->big_t,
                                                                  job->k));
}

static void oi__gemm_f32_skinny_axpy_task(void *ctx, int task, int thread) {
    const oi__gemm_f32_skinny_job *job = (const oi__gemm_f32_skinny_job *)ctx;
    (void)thread;
    int64_t p0 = job->k * task / job->n_tasks, p1 = job->k * (task + 1) / job->n_tasks;
    float *acc = job->partial + (size_t)task * (size_t)(job->n_small * job->n_big);
#if OI__GEMM_X86
    if (job->isa == OI__GEMM_ISA_AVX512 || job->isa == OI__GEMM_ISA_AVX2) {
        /* whole wide blocks first; the rest of the columns as a narrower product */
        int64_t done = job->isa == OI__GEMM_ISA_AVX512 ? oi__skinny_axpy_wide_avx512(job, p0, p1, acc)
                                                       : oi__skinny_axpy_wide_avx2(job, p0, p1, acc);
        if (done == 0 && job->isa == OI__GEMM_ISA_AVX512)
            oi__skinny_axpy_avx512(job, p0, p1, acc);
        else if (done == 0)
            oi__skinny_axpy_avx2(job, p0, p1, acc);
        else if (done < job->n_big)
            oi__skinny_axpy_rest(job, done, p0, p1, acc);
        return;
    }
#endif
    memset(acc, 0, (size_t)(job->n_small * job->n_big) * sizeof(float));
    int64_t block = OI__GEMM_SKINNY_AXPY_BLOCK / job->n_small;
    for (int64_t t0 = 0; t0 < job->n_big; t0 += block) {
        int64_t count = oi__gemm_min(block, job->n_big - t0);
        int64_t p = p0;
        /* Four rows per pass: a quarter of the traffic on the sums. */
        for (; p + 4 <= p1; p += 4) {
            const float *r0 = job->big + p * job->big_p + t0, *r1 = r0 + job->big_p;
            const float *r2 = r1 + job->big_p, *r3 = r2 + job->big_p;
            for (int64_t s = 0; s < job->n_small; s++) {
                const float *w = job->small + s * job->k + p;
                float *acc_s = acc + s * job->n_big + t0;
                for (int64_t t = 0; t < count; t++)
                    acc_s[t] += w[0] * r0[t] + w[1] * r1[t] + w[2] * r2[t] + w[3] * r3[t];
            }
        }
        for (; p < p1; p++) {
            const float *row = job->big + p * job->big_p + t0;
            for (int64_t s = 0; s < job->n_small; s++) {
                float w = job->small[s * job->k + p];
                float *acc_s = acc + s * job->n_big + t0;
                for (int64_t t = 0; t < count; t++)
                    acc_s[t] += w * row[t];
            }
        }
    }
}

/* false: the big operand has no unit stride (take the packed path). */
static bool oi__gemm_f32_skinny_layout(const oi__gemm_f32_args *g, oi__gemm_f32_skinny_job *job) {
    memset(job, 0, sizeof *job);
    bool small_m = g->m <= g->n;
    job->n_small = small_m ? g->m : g->n;
    job->n_big = small_m ? g->n : g->m;
    job->k = g->k;
    job->beta = g->beta;
    job->c = g->c;
    job->bias = g->bias;
    if (small_m) { /* big = op(B): (p, j) */
        job->big = g->b;
        job->big_p = g->b_rs;
        job->big_t = g->b_cs;
        job->c_s = g->ldc;
        job->c_t = 1;
        job->bias_t = 1;
    } else { /* big = op(A)^T: (p, i) */
        job->big = g->a;
        job->big_p = g->a_cs;
        job->big_t = g->a_rs;
        job->c_s = 1;
        job->c_t = g->ldc;
        job->bias_s = 1;
    }
    if (job->n_big == 1) /* a single index or step: its stride never matters */
        job->big_t = 1;
    if (job->k == 1)
        job->big_p = 1;
    return job->big_p == 1 || job->big_t == 1;
}

/* The small operand contiguous along k with alpha applied: rows copied
 * whole when they already are and alpha is 1 (a product by 1 is exact),
 * else element by element. */
static void oi__gemm_f32_skinny_small(const oi__gemm_f32_args *g, bool small_m, int64_t n_small, float *small) {
    int64_t k = g->k, step = small_m ? g->a_cs : g->b_rs;
    for (int64_t s = 0; s < n_small; s++) {
        if (g->alpha == 1.0f && (step == 1 || k == 1)) {
            memcpy(small + s * k, small_m ? g->a + s * g->a_rs : g->b + s * g->b_cs, (size_t)k * sizeof(float));
            continue;
        }
        for (int64_t p = 0; p < k; p++)
            small[s * k + p] = g->alpha * (small_m ? oi__gemm_a_at(g, s, p) : oi__gemm_b_at(g, p, s));
    }
}

/* ---- skinny products split once per core ----
 * A streaming model (Silero VAD: 1.2 MB of f32 weights, 1 MB of L2 per
 * core) runs skinny products too small for the split above, so one core
 * reads every weight from L3 on every step. Split in n_threads parts, the
 * same on every call and pinned to the threads (oi__threadpool_run_parts),
 * each core keeps its part of each weight in its own L2 (VAD: 29 -> 22 us
 * a chunk with the second core free). A worker that another process holds
 * off costs the caller its part only (the caller takes it); one that is
 * descheduled mid-part holds the caller, and oi__threadpool_run_parts then
 * runs the next calls on the caller alone. The dot products
 * split the big rows at multiples of 4 (the row kernels' groups: the same
 * sums as one thread), the row updates split the columns at the kernels'
 * block starts (each column then runs through the same kernel, its sum one
 * FMA chain, p ascending), so the results do not change. */
#define OI__GEMM_SKINNY_SPLIT_MIN_BYTES ((int64_t)32 << 10) /* big operands from 32 KB */
#define OI__GEMM_SKINNY_SPLIT_MIN ((int64_t)1 << 14)        /* multiply-adds */

typedef struct oi__gemm_f32_skinny_parts {
    const oi__gemm_f32_skinny_job *job;
    int n_parts;
    int64_t align;
    float *acc; /* row updates: n_small x n_big sums, each part its columns */
} oi__gemm_f32_skinny_parts;

static void oi__gemm_f32_skinny_part_range(const oi__gemm_f32_skinny_parts *sp, int part, int64_t *t0, int64_t *t1) {
    int64_t units = oi__gemm_ceil_div(sp->job->n_big, sp->align);
    *t0 = oi__gemm_min(units * part / sp->n_parts * sp->align, sp->job->n_big);
    *t1 = oi__gemm_min(units * (part + 1) / sp->n_parts * sp->align, sp->job->n_big);
}

/* Dot products: the part's big rows, in the dot task's chunks. */
static void oi__gemm_f32_skinny_dot_part(void *ctx, int part, int thread) {
    const oi__gemm_f32_skinny_parts *sp = (const oi__gemm_f32_skinny_parts *)ctx;
    int64_t t0, t1;
    oi__gemm_f32_skinny_part_range(sp, part, &t0, &t1);
    oi__gemm_f32_skinny_job sub = *sp->job;
    for (int64_t t = t0; t < t1; t += OI__GEMM_SKINNY_DOT_CHUNK) {
        /* a task of a job whose big rows start at t: the same kernels on the same rows */
        int64_t rows = oi__gemm_min(OI__GEMM_SKINNY_DOT_CHUNK, t1 - t);
        sub.big = sp->job->big + t * sp->job->big_t;
        sub.n_big = rows;
        sub.c = sp->job->c + t * sp->job->c_t;
        sub.bias = sp->job->bias ? sp->job->bias + t * sp->job->bias_t : NULL;
        oi__gemm_f32_skinny_dot_task(&sub, 0, thread);
    }
}

/* Row updates: every k step over the part's columns, then their stores. */
static void oi__gemm_f32_skinny_axpy_part(void *ctx, int part, int thread) {
    const oi__gemm_f32_skinny_parts *sp = (const oi__gemm_f32_skinny_parts *)ctx;
    const oi__gemm_f32_skinny_job *job = sp->job;
    int64_t t0, t1;
    oi__gemm_f32_skinny_part_range(sp, part, &t0, &t1);
    if (t1 <= t0)
        return;
    oi__gemm_f32_skinny_job sub = *job;
    sub.big = job->big + t0;
    sub.n_big = t1 - t0;
    sub.n_tasks = 1;
    float *acc = sp->acc + job->n_small * t0; /* the part's n_small x (t1 - t0) block */
    sub.partial = acc;
    oi__gemm_f32_skinny_axpy_task(&sub, 0, thread);
    for (int64_t s = 0; s < job->n_small; s++)
        oi__gemm_f32_skinny_store_run(job, s, t0, t1 - t0, acc + s * (t1 - t0));
}

/* true: done (in *status) by the per-core split; false: not its case. */
static bool oi__gemm_f32_skinny_split(oi__threadpool *pool, oi__gemm_f32_skinny_job *job, bool dot, oi_status *status) {
    int threads = oi__threadpool_size(pool);
    int64_t work = job->n_small * job->n_big * job->k;
    if (threads < 2 || threads > OI__THREADPOOL_MAX_PARTS || (job->isa != OI__GEMM_ISA_AVX512 && job->isa != OI__GEMM_ISA_AVX2) ||
        work < OI__GEMM_SKINNY_SPLIT_MIN || job->n_big * job->k * (int64_t)sizeof(float) < OI__GEMM_SKINNY_SPLIT_MIN_BYTES ||
        (!dot && job->big_t != 1))
        return false;
    /* row updates: parts start where the one-thread kernels start a block
     * (the wide blocks for 1-2 small rows, else the narrow ones), so each
     * column goes through the same kernel as on one thread */
    bool avx512 = job->isa == OI__GEMM_ISA_AVX512;
    int64_t align = dot ? 4 : job->n_small == 1 ? (avx512 ? 256 : 96) : job->n_small == 2 ? (avx512 ? 128 : 40)
                                                                       : (avx512 ? 64 : 16);
    oi__gemm_f32_skinny_parts sp;
    memset(&sp, 0, sizeof sp); /* (no designated initializers: the drop-in header compiles as C++17) */
    sp.job = job;
    sp.n_parts = threads;
    sp.align = align;
    if (oi__gemm_ceil_div(job->n_big, sp.align) < threads)
        return false;
    if (!dot) {
        sp.acc = (float *)oi__malloc(sizeof(float) * (size_t)(job->n_small * job->n_big));
        if (!sp.acc) {
            *status = oi__fail(OI_ERROR_OUT_OF_MEMORY, "gemm_f32: cannot allocate the skinny sums");
            return true;
        }
    }
    oi__threadpool_run_parts(pool, threads, dot ? oi__gemm_f32_skinny_dot_part : oi__gemm_f32_skinny_axpy_part, &sp);
    oi__free(sp.acc);
    *status = OI_OK;
    return true;
}

static oi_status oi__gemm_f32_skinny(oi__threadpool *pool, const oi__gemm_f32_args *g, oi__gemm_f32_skinny_job *job_in) {
    oi__gemm_f32_skinny_job job = *job_in;
    int64_t m = g->m, n = g->n, k = g->k;
    bool small_m = m <= n;
    bool dot = job.big_p == 1;
    oi__gemm_isa isa = oi__gemm_active_isa();
    int64_t parallel_min = isa == OI__GEMM_ISA_PORTABLE ? OI__GEMM_PARALLEL_MIN : OI__GEMM_SKINNY_PARALLEL_MIN;
    oi__threadpool *run_pool = m * n * k < parallel_min ? NULL : pool;
    job.n_tasks = dot ? (int)oi__gemm_ceil_div(job.n_big, OI__GEMM_SKINNY_DOT_CHUNK)
                      : (int)oi__gemm_min(oi__threadpool_size(run_pool), k);

    size_t small_floats = (size_t)(job.n_small * k);
    size_t partial_floats = dot ? 0 : (size_t)job.n_tasks * (size_t)(job.n_small * job.n_big);
    size_t bytes = (small_floats + partial_floats) * sizeof(float);
    /* a streaming model's products need a few KB: on the stack, not the heap */
    float on_stack[OI__GEMM_SKINNY_STACK_FLOATS];
    float *work = small_floats + partial_floats <= OI__GEMM_SKINNY_STACK_FLOATS ? on_stack : (float *)oi__malloc(bytes);
    if (!work)
        return oi__fail(OI_ERROR_OUT_OF_MEMORY, "gemm_f32: cannot allocate %zu bytes of work space", bytes);
    float *small = work;
    oi__gemm_f32_skinny_small(g, small_m, job.n_small, small);
    job.small = small;
    job.partial = work + small_floats;
    job.isa = isa;

    oi_status status = OI_OK;
    if (!run_pool && oi__gemm_f32_skinny_split(pool, &job, dot, &status)) {
        if (work != on_stack)
            oi__free(work);
        return status;
    }
    if (dot) {
        oi__threadpool_run(run_pool, job.n_tasks, oi__gemm_f32_skinny_dot_task, &job);
    } else {
        oi__threadpool_run(run_pool, job.n_tasks, oi__gemm_f32_skinny_axpy_task, &job);
        size_t stride = (size_t)(job.n_small * job.n_big);
        for (int64_t s = 0; s < job.n_small; s++) {
            float *sums = job.partial + s * job.n_big; /* task 0's, summed with the others' in place */
            for (int task = 1; task < job.n_tasks; task++)
                for (int64_t t = 0; t < job.n_big; t++)
                    sums[t] += job.partial[(size_t)task * stride + (size_t)(s * job.n_big + t)];
            oi__gemm_f32_skinny_store_run(&job, s, 0, job.n_big, sums);
        }
    }
    if (work != on_stack)
        oi__free(work);
    return status;
}

/* ---- the parallel driver ---- */
typedef struct oi__gemm_f32_job {
    const oi__gemm_f32_impl *impl;
    const oi__gemm_f32_args *g;
    const oi__gemm_f32_packed *b_packed; /* NULL: each task packs its B */
    const float *a_packed;  /* all of op(A), packed once (oi__gemm_f32_share_a); NULL: each task packs its rows */
    bool a_in_place;        /* whole row panels of op(A) are read in place (impl->kernel_rows) */
    int64_t m_pad;          /* m rounded up to impl->mr: a_packed's k block at p0 starts at p0 * m_pad */
    int64_t tile_m, tile_n, n_tiles_n;
    int64_t n_tiles_m;      /* row tiles: whole row panels dealt out evenly (oi__gemm_f32_tile_rows) */
    float *workspace;       /* one region per pool thread */
    size_t thread_floats;   /* floats per region (a multiple of the alignment) */
} oi__gemm_f32_job;

/* C = edge + beta * C + bias over an edge tile, row by row (loops the
 * compiler vectorizes: the tail row panel of every gemm comes this way). */
static void oi__gemm_f32_store_edge(const float *edge, int64_t ld_edge, int64_t rows, int64_t cols, float beta,
                                    const float *bias, float *c, int64_t ldc) {
    for (int64_t i = 0; i < rows; i++) {
        const float *from = edge + i * ld_edge;
        float *to = c + i * ldc;
        if (beta == 0.0f)
            memcpy(to, from, (size_t)cols * sizeof *to);
        else
            for (int64_t j = 0; j < cols; j++)
                to[j] = from[j] + beta * to[j];
        if (bias)
            for (int64_t j = 0; j < cols; j++)
                to[j] += bias[j];
    }
}

/* Runs the micro-kernel over rows x cols of C, writing edge tiles through
 * a scratch tile. A's row panels are packed at a_pack + ir * kc, or, with
 * a_rows, read in place (row r at a_rows + r * lda) but for a last partial
 * panel, packed at a_pack; or, a_pack NULL, read in place too: the mr rows
 * of A that end with it (A has them above the tile), of which the scratch
 * tile keeps the last. beta and bias (NULL, or cols values) apply to this
 * k block only. */
static void oi__gemm_f32_macro(const oi__gemm_f32_impl *impl, int64_t kc, const float *a_pack, const float *a_rows,
                               int64_t lda, const float *b_pack, int64_t rows, int64_t cols, float alpha, float beta,
                               const float *bias, float *c, int64_t ldc) {
    int mr = impl->mr, nr = impl->nr;
    float edge[OI__GEMM_MAX_MR * OI__GEMM_MAX_NR];
    for (int64_t ir = 0; ir < rows; ir += mr) {
        int64_t tile_rows = oi__gemm_min(mr, rows - ir);
        bool in_place = a_rows && (tile_rows == mr || !a_pack);
        /* in place, a short panel may run the shorter kernel */
        bool tail = in_place && tile_rows <= impl->mr_tail;
        int64_t kernel_mr = tail ? impl->mr_tail : mr;
        int64_t first = ir + tile_rows - kernel_mr; /* in place: the panel's first row (ir but for a partial one) */
        const float *a_panel = in_place ? a_rows + first * lda : a_pack + (a_rows ? 0 : ir * kc);
        const float *edge_rows = edge + (in_place ? (kernel_mr - tile_rows) * nr : 0);
        for (int64_t jr = 0; jr < cols; jr += nr) {
            int64_t tile_cols = oi__gemm_min(nr, cols - jr);
            const float *b_panel = b_pack + jr * kc;
            const float *tile_bias = bias ? bias + jr : NULL;
            float *c_tile = c + ir * ldc + jr;
            bool whole = tile_rows == kernel_mr && tile_cols == nr;
            float *out = whole ? c_tile : edge;
            int64_t ld_out = whole ? ldc : nr;
            if (tail)
                impl->kernel_rows_tail(kc, a_panel, lda, b_panel, out, ld_out, alpha, whole ? beta : 0.0f,
                                       whole ? tile_bias : NULL);
            else if (in_place)
                impl->kernel_rows(kc, a_panel, lda, b_panel, out, ld_out, alpha, whole ? beta : 0.0f,
                                  whole ? tile_bias : NULL);
            else
                impl->kernel(kc, a_panel, b_panel, out, ld_out, alpha, whole ? beta : 0.0f, whole ? tile_bias : NULL);
            if (!whole)
                oi__gemm_f32_store_edge(edge_rows, nr, tile_rows, tile_cols, beta, tile_bias, c_tile, ldc);
        }
    }
}

static void oi__gemm_f32_task(void *ctx, int task, int thread) {
    const oi__gemm_f32_job *job = (const oi__gemm_f32_job *)ctx;
    const oi__gemm_f32_impl *impl = job->impl;
    const oi__gemm_f32_args *g = job->g;
    int64_t i0, rows;
    oi__gemm_tile_rows(impl->mr, g->m, job->n_tiles_m, task / job->n_tiles_n, &i0, &rows);
    int64_t j0 = (task % job->n_tiles_n) * job->tile_n;
    int64_t cols = oi__gemm_min(job->tile_n, g->n - j0);
    float *a_pack = job->workspace + (size_t)thread * job->thread_floats;
    float *b_pack = a_pack + oi__gemm_round_up(oi__gemm_round_up(job->tile_m, impl->mr) * impl->kc, OI__GEMM_ALIGN / 4);
    for (int64_t p0 = 0; p0 < g->k; p0 += impl->kc) {
        int64_t kc = oi__gemm_min(impl->kc, g->k - p0);
        const float *a_block = a_pack, *a_rows = NULL;
        if (job->a_packed) { /* every tile has all rows: i0 is 0 */
            a_block = job->a_packed + p0 * job->m_pad;
        } else if (job->a_in_place) { /* a last partial panel is packed only where A has too few rows */
            a_rows = g->a + i0 * g->a_rs + p0;
            int64_t whole = rows / impl->mr * impl->mr;
            if (whole < rows && i0 + rows < impl->mr)
                oi__gemm_f32_pack_a(impl, g, i0 + whole, rows - whole, p0, kc, a_pack);
            else
                a_block = NULL; /* oi__gemm_f32_macro reads the mr rows ending with it */
        } else {
            oi__gemm_f32_pack_a(impl, g, i0, rows, p0, kc, a_pack);
        }
        /* The first k block applies beta and the bias; later ones accumulate. */
        float beta = p0 == 0 ? g->beta : 1.0f;
        const float *bias = p0 == 0 ? g->bias : NULL;
        for (int64_t j1 = j0; j1 < j0 + cols; j1 += impl->nc) {
            int64_t block_cols = oi__gemm_min(impl->nc, j0 + cols - j1);
            const float *b_block = b_pack;
            if (job->b_packed) /* j1 is a multiple of nr: a panel boundary */
                b_block = job->b_packed->data + p0 * job->b_packed->n_pad + j1 * kc;
            else
                oi__gemm_f32_pack_b(impl, g, p0, kc, j1, block_cols, b_pack);
            oi__gemm_f32_macro(impl, kc, a_block, a_rows, g->a_rs, b_block, rows, block_cols, g->alpha, beta,
                               bias ? bias + j1 : NULL, g->c + i0 * g->ldc + j1, g->ldc);
        }
    }
    if (g->epilogue) /* every k block is in: this tile of C is final, and in the caches */
        g->epilogue(g->epilogue_ctx, g->c + i0 * g->ldc + j0, g->ldc, rows, cols);
}

/* ---- op(A) packed once per call ----
 * When op(B) is packed already and one tile spans all of C's rows (C split
 * along n only: a few rows of activations times a weight), every task
 * would pack the same A. Where A cannot be read in place, it is packed once
 * instead, the row panels of each k block dealt out over the pool, into k
 * blocks of m_pad x kc. Either way a tile then costs no packing, so C is
 * split into OI__GEMM_FINE_TILES tiles per thread, which keeps both
 * threads busy when the host slows one. */
#define OI__GEMM_SHARED_A_MAX_FLOATS ((int64_t)1 << 20) /* 4 MiB of A: in the caches */
typedef struct oi__gemm_f32_share_a_job {
    const oi__gemm_f32_impl *impl;
    const oi__gemm_f32_args *g;
    float *dst;
    int64_t m_pad;
    int parts; /* tasks per k block */
} oi__gemm_f32_share_a_job;

static void oi__gemm_f32_share_a_task(void *ctx, int task, int thread) {
    (void)thread;
    const oi__gemm_f32_share_a_job *job = (const oi__gemm_f32_share_a_job *)ctx;
    const oi__gemm_f32_impl *impl = job->impl;
    int64_t p0 = (task / job->parts) * impl->kc, kc = oi__gemm_min(impl->kc, job->g->k - p0);
    int64_t panels = job->m_pad / impl->mr, part = task % job->parts;
    int64_t i0 = panels * part / job->parts * impl->mr;
    int64_t rows = oi__gemm_min(panels * (part + 1) / job->parts * impl->mr, job->g->m) - i0;
    if (rows > 0)
        oi__gemm_f32_pack_a(impl, job->g, i0, rows, p0, kc, job->dst + p0 * job->m_pad + i0 * kc);
}

static void oi__gemm_f32_share_a(oi__threadpool *pool, int threads, oi__gemm_f32_job *job, float *dst) {
    oi__gemm_f32_share_a_job pack = {job->impl, job->g, dst, job->m_pad, threads};
    int64_t k_blocks = oi__gemm_ceil_div(job->g->k, job->impl->kc);
    oi__threadpool_run(pool, (int)(k_blocks * threads), oi__gemm_f32_share_a_task, &pack);
    job->a_packed = dst;
}

/* ---- op(B) packed once per call ----
 * A B that is no model weight is packed by each task for its columns, so
 * with C split into several row tiles each column of B would be packed
 * once per row tile (twice for a square C on two threads). Then it is
 * packed once instead, k block by k block and nc columns at a time over the
 * pool, in the layout of a weight's packed copy, and the tasks read it as
 * they read one. */
#define OI__GEMM_SHARED_B_MAX_FLOATS ((int64_t)1 << 22) /* 16 MiB of B */

typedef struct oi__gemm_f32_share_b_job {
    const oi__gemm_f32_impl *impl;
    const oi__gemm_f32_args *g;
    const oi__gemm_f32_packed *dst;
    int64_t col_blocks; /* tasks per k block */
} oi__gemm_f32_share_b_job;

static void oi__gemm_f32_share_b_task(void *ctx, int task, int thread) {
    (void)thread;
    const oi__gemm_f32_share_b_job *job = (const oi__gemm_f32_share_b_job *)ctx;
    const oi__gemm_f32_impl *impl = job->impl;
    int64_t p0 = task / job->col_blocks * impl->kc, kc = oi__gemm_min(impl->kc, job->g->k - p0);
    int64_t j1 = task % job->col_blocks * impl->nc, cols = oi__gemm_min(impl->nc, job->g->n - j1);
    oi__gemm_f32_pack_b(impl, job->g, p0, kc, j1, cols, job->dst->data + p0 * job->dst->n_pad + j1 * kc);
}

static void oi__gemm_f32_share_b(oi__threadpool *pool, const oi__gemm_f32_impl *impl, const oi__gemm_f32_args *g,
                                 oi__gemm_f32_packed *dst, float *data) {
    memset(dst, 0, sizeof *dst);
    dst->impl = impl;
    dst->n_pad = oi__gemm_round_up(g->n, impl->nr);
    dst->data = data;
    oi__gemm_f32_share_b_job pack = {impl, g, dst, oi__gemm_ceil_div(g->n, impl->nc)};
    int64_t k_blocks = oi__gemm_ceil_div(g->k, impl->kc);
    oi__threadpool_run(pool, (int)(k_blocks * pack.col_blocks), oi__gemm_f32_share_b_task, &pack);
}

/* Tiles for tasks that pack no B (it is packed once, for the weight or
 * for the call) but pack their rows of A, when C has several row tiles:
 * tiles then span all columns, so each row of A is packed once, and
 * OI__GEMM_FINE_ROW_TILES of them per thread even out the threads. (With A
 * read in place, oi__gemm_plan_fine_in_place refines the first plan.) */
#define OI__GEMM_FINE_ROW_TILES 8
static void oi__gemm_plan_row_tiles(const oi__gemm_f32_impl *impl, const oi__gemm_f32_args *g, int threads,
                                    int64_t *tile_m, int64_t *tile_n) {
    int64_t rows = oi__gemm_ceil_div(g->m, OI__GEMM_FINE_ROW_TILES * (int64_t)threads);
    rows = oi__gemm_max(rows, 4 * (int64_t)impl->mr); /* a few row panels: B is read from L3 once per tile */
    *tile_m = oi__gemm_min(oi__gemm_round_up(rows, impl->mr), impl->max_tile_m);
    *tile_n = g->n;
}

/* The packed path: tiles of C over the pool, op(B) packed once when its
 * owner allows or several row tiles would pack it (and then op(A) too,
 * when all tiles would pack the same). */
static oi_status oi__gemm_f32_packed_path(oi__threadpool *pool, const oi__gemm_f32_args *g) {
    const oi__gemm_f32_impl *impl = oi__gemm_f32_select();
    int threads = g->m * g->n * g->k < OI__GEMM_PARALLEL_MIN ? 1 : oi__threadpool_size(pool);

    oi__gemm_f32_job job;
    memset(&job, 0, sizeof job);
    job.impl = impl;
    job.g = g;
    job.b_packed = oi__gemm_f32_packed_b(impl, g);
    oi__gemm_plan_tiles(impl->mr, impl->nr, impl->max_tile_m, g->m, g->n, threads, &job.tile_m, &job.tile_n);
    job.m_pad = oi__gemm_round_up(g->m, impl->mr);
    int64_t n_pad = oi__gemm_round_up(g->n, impl->nr);
    bool row_tiles = threads > 1 && job.tile_m < g->m;
    bool share_b = row_tiles && !job.b_packed && g->k * n_pad <= OI__GEMM_SHARED_B_MAX_FLOATS;
    /* A with unit steps is read in place. Otherwise, when every tile would
     * pack the same A (all rows in one tile, B packed), it is packed once. */
    bool all_rows = threads > 1 && job.b_packed && job.tile_m >= g->m;
    job.a_in_place = impl->kernel_rows && g->a_cs == 1 && !oi__gemm_rows_alias(g->a_rs);
    bool share_a = all_rows && !job.a_in_place && job.m_pad * g->k <= OI__GEMM_SHARED_A_MAX_FLOATS;
    if (share_a) /* tiles cost no packing: finer ones even out the threads */
        job.tile_n = oi__gemm_round_up(oi__gemm_ceil_div(g->n, OI__GEMM_FINE_TILES * (int64_t)threads), impl->nr);
    else if (row_tiles && (job.b_packed || share_b) && !job.a_in_place)
        oi__gemm_plan_row_tiles(impl, g, threads, &job.tile_m, &job.tile_n);
    else if (job.b_packed && job.a_in_place)
        oi__gemm_plan_fine_in_place(impl->mr, impl->nr, impl->kc, g->m, g->n, threads, &job.tile_m, &job.tile_n);

    /* Each thread packs into its own cache-line-aligned region (A or B
     * shared: one region each for all, before them). */
    int64_t kc = oi__gemm_min(impl->kc, g->k);
    int64_t align = OI__GEMM_ALIGN / (int64_t)sizeof(float);
    int64_t shared_a_floats = share_a ? oi__gemm_round_up(job.m_pad * g->k, align) : 0;
    int64_t shared_b_floats = share_b ? oi__gemm_round_up(n_pad * g->k, align) : 0;
    int64_t a_floats = share_a ? 0 : oi__gemm_round_up(oi__gemm_round_up(job.tile_m, impl->mr) * impl->kc, align);
    int64_t b_floats = job.b_packed || share_b ? 0 :
                       oi__gemm_round_up(oi__gemm_round_up(oi__gemm_min(job.tile_n, impl->nc), impl->nr) * kc, align);
    job.thread_floats = (size_t)(a_floats + b_floats);
    size_t bytes = (job.thread_floats * (size_t)threads + (size_t)(shared_a_floats + shared_b_floats)) * sizeof(float) +
                   OI__GEMM_ALIGN;
    void *raw = oi__malloc(bytes);
    if (!raw)
        return oi__fail(OI_ERROR_OUT_OF_MEMORY, "gemm_f32: cannot allocate %zu bytes of packing space", bytes);
    uintptr_t aligned = ((uintptr_t)raw + OI__GEMM_ALIGN - 1) & ~(uintptr_t)(OI__GEMM_ALIGN - 1);
    job.workspace = (float *)aligned + shared_a_floats + shared_b_floats;
    if (share_a)
        oi__gemm_f32_share_a(pool, threads, &job, (float *)aligned);
    oi__gemm_f32_packed b_call; /* share_b: B packed for this call */
    if (share_b) {
        oi__gemm_f32_share_b(pool, impl, g, &b_call, (float *)aligned + shared_a_floats);
        job.b_packed = &b_call;
    }
    job.n_tiles_n = oi__gemm_ceil_div(g->n, job.tile_n);
    job.n_tiles_m = oi__gemm_ceil_div(g->m, job.tile_m);
    int64_t n_tasks = job.n_tiles_m * job.n_tiles_n;

    oi__threadpool_run(threads > 1 ? pool : NULL, (int)n_tasks, oi__gemm_f32_task, &job);
    oi__free(raw);
    return OI_OK;
}

/* The paths without tiles apply the epilogue to all of C at the end. */
static oi_status oi__gemm_f32_epilogue_all(const oi__gemm_f32_args *g, oi_status status) {
    if (status == OI_OK && g->epilogue)
        g->epilogue(g->epilogue_ctx, g->c, g->ldc, g->m, g->n);
    return status;
}

oi_status oi__gemm_f32_ex(oi__threadpool *pool, const oi__gemm_f32_args *g) {
    if (g->m < 0 || g->n < 0 || g->k < 0)
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "gemm_f32: negative size m=%lld n=%lld k=%lld", (long long)g->m,
                        (long long)g->n, (long long)g->k);
    if (g->m == 0 || g->n == 0)
        return OI_OK;
    if (!g->c || g->ldc < g->n || (g->k > 0 && (!g->a || !g->b)))
        return oi__fail(OI_ERROR_INVALID_ARGUMENT, "gemm_f32: NULL matrix pointer or ldc %lld < n %lld",
                        (long long)g->ldc, (long long)g->n);
    if (g->k == 0 || g->alpha == 0.0f) {
        oi__gemm_f32_scale_c(g);
        return oi__gemm_f32_epilogue_all(g, OI_OK);
    }
    if (g->m * g->n * g->k <= OI__GEMM_TINY) {
        oi__gemm_f32_small(g);
        return oi__gemm_f32_epilogue_all(g, OI_OK);
    }
    oi__gemm_f32_skinny_job skinny;
    if ((g->m <= OI__GEMM_SKINNY || g->n <= OI__GEMM_SKINNY) && oi__gemm_f32_skinny_layout(g, &skinny))
        return oi__gemm_f32_epilogue_all(g, oi__gemm_f32_skinny(pool, g, &skinny));
    return oi__gemm_f32_packed_path(pool, g); /* applies the epilogue tile by tile */
}

oi_status oi__gemm_f32(oi__threadpool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                       float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                       float beta, float *c, int64_t ldc) {
    oi_status status = oi__gemm_check("gemm_f32", trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
    if (status != OI_OK)
        return status;
    oi__gemm_f32_args g = {m, n, k, alpha, beta, a, trans_a ? 1 : lda, trans_a ? lda : 1,
                           b, trans_b ? 1 : ldb, trans_b ? ldb : 1, NULL, c, ldc, NULL, NULL, NULL};
    return oi__gemm_f32_ex(pool, &g);
}

/* ---- f64: the reference path, cache-blocked but not packed ---- */
#define OI__GEMM_F64_BLOCK 64

typedef struct oi__gemm_f64_job {
    bool trans_a, trans_b;
    int64_t m, n, k;
    double alpha;
    const double *a, *b;
    int64_t lda, ldb;
    double *c;
    int64_t ldc;
} oi__gemm_f64_job;

/* One block of rows of C (C already scaled by beta): for each block of k
 * and of columns, accumulate row by row with unit stride in j. */
static void oi__gemm_f64_rows(void *ctx, int task, int thread) {
    const oi__gemm_f64_job *job = (const oi__gemm_f64_job *)ctx;
    (void)thread;
    int64_t i0 = (int64_t)task * OI__GEMM_F64_BLOCK, i1 = oi__gemm_min(i0 + OI__GEMM_F64_BLOCK, job->m);
    for (int64_t p0 = 0; p0 < job->k; p0 += OI__GEMM_F64_BLOCK) {
        int64_t p1 = oi__gemm_min(p0 + OI__GEMM_F64_BLOCK, job->k);
        for (int64_t j0 = 0; j0 < job->n; j0 += 4 * OI__GEMM_F64_BLOCK) {
            int64_t j1 = oi__gemm_min(j0 + 4 * OI__GEMM_F64_BLOCK, job->n);
            for (int64_t i = i0; i < i1; i++) {
                double *ci = job->c + i * job->ldc;
                for (int64_t p = p0; p < p1; p++) {
                    double aip = job->alpha * (job->trans_a ? job->a[p * job->lda + i] : job->a[i * job->lda + p]);
                    if (job->trans_b)
                        for (int64_t j = j0; j < j1; j++)
                            ci[j] += aip * job->b[j * job->ldb + p];
                    else
                        for (int64_t j = j0; j < j1; j++)
                            ci[j] += aip * job->b[p * job->ldb + j];
                }
            }
        }
    }
}

oi_status oi__gemm_f64(oi__threadpool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                       double alpha, const double *a, int64_t lda, const double *b, int64_t ldb,
                       double beta, double *c, int64_t ldc) {
    oi_status status = oi__gemm_check("gemm_f64", trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc);
    if (status != OI_OK || m == 0 || n == 0)
        return status;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
    if (k == 0 || alpha == 0.0)
        return OI_OK;
    oi__gemm_f64_job job;
    memset(&job, 0, sizeof job);
    job.trans_a = trans_a;
    job.trans_b = trans_b;
    job.m = m;
    job.n = n;
    job.k = k;
    job.alpha = alpha;
    job.a = a;
    job.b = b;
    job.lda = lda;
    job.ldb = ldb;
    job.c = c;
    job.ldc = ldc;
    int64_t n_tasks = oi__gemm_ceil_div(m, OI__GEMM_F64_BLOCK);
    oi__threadpool_run(m * n * k < OI__GEMM_PARALLEL_MIN ? NULL : pool, (int)n_tasks, oi__gemm_f64_rows, &job);
    return OI_OK;
}
