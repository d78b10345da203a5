/* quant.c - matmul with quantized weights, dequantized on the fly so LLM
 * weights stay small in memory.
 *
 *   matmul_q8(x, w, scale): per-channel int8. w is i8 [N, K] (layout "nk",
 *     the default: one row per output, as PyTorch's Linear and ggml store
 *     it) or [K, N] (layout "kn"); scale is [N]:
 *       y[..., n] = scale[n] * sum_k x[..., k] * w[n, k]
 *   matmul_q4(x, w, format): 4-bit blocks of 32 weights along K. w is u8
 *     [N, K / 32 * block bytes]: row n holds the K / 32 blocks of weight
 *     row n in order, each block laid out as ggml's:
 *       q4_0, 18 bytes: d (f16, little endian), qs[16];
 *         element j = ((qs[j] & 15) - 8) * d, element j + 16 = ((qs[j] >> 4) - 8) * d
 *       q4_1, 20 bytes: d (f16), m (f16), qs[16];
 *         element j = (qs[j] & 15) * d + m, element j + 16 = (qs[j] >> 4) * d + m
 *     (low nibbles are elements 0..15 of the block, high nibbles 16..31).
 *       q8_0, 34 bytes: d (f16), qs[32] (int8); element j = qs[j] * d
 *     (not a 4-bit format, despite the op's name: the op is "ggml's blocks
 *     of 32 along K", and q8_0 is the format of tied LLM embeddings).
 * x is f32, f16 or bf16 [..., K]; y is [..., N] in x's dtype; everything
 * computes in f32 and rounds once.
 * A few rows of x (decoding, M < 4) take dot products straight from the
 * packed rows, 16 f32 accumulators wide; more rows dequantize a chunk of
 * weight rows to f32 once and multiply it with oi__gemm_f32.
 *
 * activations="q8" (matmul_q4 only) trades x's precision for integer
 * arithmetic, as llama.cpp's CPU path does: each row of x is rounded once
 * into blocks of 32 int8 with one f32 scale (dx = max|x| / 127,
 * qx = round(x / dx)), each weight block is dotted with its x block in
 * exact integer arithmetic (AVX2 vpmaddubsw, AVX-512 VNNI vpdpbusd where
 * the CPU has it, portable C otherwise: the same integers on every path),
 * and the block sums are scaled in f32 in one fixed order, so every ISA
 * gives bit-identical results. The rounding of x adds an error of at most
 * dx / 2 per element: |y - y_f32| <= sum over blocks of
 * (max|x_b| / 254) * sum_j |w_bj| (docs/ops.md).
 *
 *   dequantize(w, format): rows of matmul_q4's blocks as f32 [..., K]. An
 *     LLM's embedding lookup is a gather of the q8_0 table's rows followed
 *     by this, so the table stays in its blocks (the logits read it too). */
#include "../openinfer_impl/internal.h"
#include "half.h"

/* The synthesizer copies the synth-embed regions into every emitted folder
 * that runs matmul_q4 with activations="q8" (oi_quant.h,
 * scripts/embed_synth_sources.py): the block formats, x's rounding into
 * int8 blocks and the integer dot products. */
/* synth-embed begin */
typedef enum oi__qformat { OI__Q_I8, OI__Q4_0, OI__Q4_1, OI__Q8_0 } oi__qformat;

#define OI__Q4_BLOCK 32

static inline int64_t oi__q4_block_bytes(oi__qformat f) { return f == OI__Q8_0 ? 34 : f == OI__Q4_1 ? 20 : 18; }

/* A block's little-endian f16 scale as f32 (half.h; a NaN keeps its
 * payload: the scale is passed through as stored). */
OI__MATH_INLINE float oi__q_half(const uint8_t *p) {
    return oi__f16_to_f32((uint16_t)(p[0] | (p[1] << 8)), OI__HALF_NAN_KEEP);
}
/* synth-embed end */

#define OI__QMM_DOT_MAX_M 4  /* fewer rows of x: dot products, no dequantized copy */
#define OI__QMM_CHUNK 16     /* weight rows dequantized per gemm call */

static const char *oi__q4_format_name(oi__qformat f) { return f == OI__Q8_0 ? "q8_0" : f == OI__Q4_1 ? "q4_1" : "q4_0"; }

/* ---- one weight row ---- */
OI__MATH_INLINE float oi__dot_i8(const float *x, const int8_t *w, int64_t k) {
    float acc[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= k; i += 16)
        for (int j = 0; j < 16; j++)
            acc[j] += x[i + j] * (float)w[i + j];
    float s = 0.0f;
    for (int j = 0; j < 16; j++)
        s += acc[j];
    for (; i < k; i++)
        s += x[i] * (float)w[i];
    return s;
}

/* synth-embed begin */
/* sum over blocks of d * sum x q' + m * sum x, with q' = q - 8 (q4_0) or
 * q (q4_1, m the block minimum) */
OI__MATH_INLINE float oi__dot_q4(const float *x, const uint8_t *row, int64_t k, bool with_min) {
    int64_t bytes = with_min ? 20 : 18;
    float off = with_min ? 0.0f : -8.0f;
    float acc[16] = {0};
    for (int64_t b = 0; b < k / OI__Q4_BLOCK; b++, x += OI__Q4_BLOCK, row += bytes) {
        const uint8_t *qs = row + bytes - 16;
        float d = oi__q_half(row), m = with_min ? oi__q_half(row + 2) : 0.0f;
        float xq[16], xs[16];
        for (int j = 0; j < 16; j++) { /* separate statements: no FMA (see oi__dot_q8_0) */
            float lo = x[j] * ((float)(qs[j] & 15) + off), hi = x[j + 16] * ((float)(qs[j] >> 4) + off);
            xq[j] = lo + hi;
            xs[j] = x[j] + x[j + 16];
        }
        for (int j = 0; j < 16; j++) {
            float dq = d * xq[j], ms = m * xs[j];
            acc[j] += dq + ms;
        }
    }
    float s = 0.0f;
    for (int j = 0; j < 16; j++)
        s += acc[j];
    return s;
}

/* sum over blocks of d * sum x q */
OI__MATH_INLINE float oi__dot_q8_0(const float *x, const uint8_t *row, int64_t k) {
    float acc[16] = {0};
    for (int64_t b = 0; b < k / OI__Q4_BLOCK; b++, x += OI__Q4_BLOCK, row += 34) {
        const int8_t *qs = (const int8_t *)(row + 2);
        float d = oi__q_half(row), xq[16];
        /* products and sums as statements of their own: no compiler fuses them into FMAs
         * (clang does within a statement), so every build and the emitted code agree */
        for (int j = 0; j < 16; j++) {
            float lo = x[j] * (float)qs[j], hi = x[j + 16] * (float)qs[j + 16];
            xq[j] = lo + hi;
        }
        for (int j = 0; j < 16; j++) {
            float t = d * xq[j];
            acc[j] += t;
        }
    }
    float s = 0.0f;
    for (int j = 0; j < 16; j++)
        s += acc[j];
    return s;
}
/* synth-embed end */

/* synth-embed begin */
/* One row of blocks as f32, the values dequantize gives: q * d (q8_0),
 * (q - 8) * d (q4_0), q * d + m (q4_1), each product rounded to f32 before
 * m is added (statements of their own: no FMA, as in oi__dot_q8_0). */
OI__MATH_INLINE void oi__dequant_q8_0(const uint8_t *row, int64_t k, float *dst) {
    for (int64_t b = 0; b < k / OI__Q4_BLOCK; b++, dst += OI__Q4_BLOCK, row += 34) {
        float d = oi__q_half(row);
        for (int j = 0; j < OI__Q4_BLOCK; j++)
            dst[j] = (float)(int8_t)row[2 + j] * d;
    }
}

OI__MATH_INLINE void oi__dequant_q4(const uint8_t *row, int64_t k, bool with_min, float *dst) {
    int64_t bytes = with_min ? 20 : 18;
    float off = with_min ? 0.0f : -8.0f;
    for (int64_t b = 0; b < k / OI__Q4_BLOCK; b++, dst += OI__Q4_BLOCK, row += bytes) {
        const uint8_t *qs = row + bytes - 16;
        float d = oi__q_half(row), m = with_min ? oi__q_half(row + 2) : 0.0f;
        for (int j = 0; j < 16; j++) { /* q4_0 adds no m: a -0 product stays -0, as on the GPU */
            float lo = ((float)(qs[j] & 15) + off) * d, hi = ((float)(qs[j] >> 4) + off) * d;
            dst[j] = with_min ? lo + m : lo;
            dst[j + 16] = with_min ? hi + m : hi;
        }
    }
}

OI__MATH_INLINE void oi__dequant_row(oi__qformat f, const uint8_t *row, int64_t k, float *dst) {
    if (f == OI__Q8_0)
        oi__dequant_q8_0(row, k, dst);
    else
        oi__dequant_q4(row, k, f == OI__Q4_1, dst);
}
/* synth-embed end */

/* ---- the multiply ---- */
typedef struct oi__qmm {
    oi__qformat format;
    const uint8_t *w;
    int64_t row_bytes;
    const float *x, *scale; /* x: dense [M, K]; scale: [N] (q8 only) */
    float *y;               /* dense [M, N] */
    int64_t m, n, k;
    int64_t rows_per_task;
    bool gemm;
    /* activations "q8": x rounded into int8 blocks, their scales and sums */
    const int8_t *xq;
    const float *xd;
    const int32_t *xs;
    float *scratch; /* OI__QMM_CHUNK * K per pool thread */
    oi_status *status;
} oi__qmm;

OI__MATH_INLINE float oi__qmm_dot(const oi__qmm *q, const float *x, int64_t n) {
    const uint8_t *row = q->w + n * q->row_bytes;
    if (q->format == OI__Q_I8)
        return q->scale[n] * oi__dot_i8(x, (const int8_t *)row, q->k);
    if (q->format == OI__Q8_0)
        return oi__dot_q8_0(x, row, q->k);
    return oi__dot_q4(x, row, q->k, q->format == OI__Q4_1);
}

OI__MATH_INLINE void oi__qmm_dequant(const oi__qmm *q, int64_t n, float *dst) {
    const uint8_t *row = q->w + n * q->row_bytes;
    if (q->format == OI__Q8_0) {
        oi__dequant_q8_0(row, q->k, dst);
        return;
    }
    if (q->format != OI__Q_I8) {
        oi__dequant_q4(row, q->k, q->format == OI__Q4_1, dst);
        return;
    }
    float s = q->scale[n];
    for (int64_t i = 0; i < q->k; i++)
        dst[i] = (float)((const int8_t *)row)[i] * s;
}

/* y[:, n0..n1) by dot products; weight rows n0..n1 dequantized into buf
 * (ISA clones: math.c) */
OI__MATH_INLINE void oi__qmm_dots_body(const oi__qmm *q, int64_t n0, int64_t n1) {
    for (int64_t i = 0; i < q->m; i++)
        for (int64_t n = n0; n < n1; n++)
            q->y[i * q->n + n] = oi__qmm_dot(q, q->x + i * q->k, n);
}
OI__ISA_CLONES(oi__qmm_dots, (const oi__qmm *q, int64_t n0, int64_t n1), (q, n0, n1))

OI__MATH_INLINE void oi__qmm_dequant_rows_body(const oi__qmm *q, int64_t n0, int64_t n1, float *buf) {
    for (int64_t n = n0; n < n1; n++)
        oi__qmm_dequant(q, n, buf + (n - n0) * q->k);
}
OI__ISA_CLONES(oi__qmm_dequant_rows, (const oi__qmm *q, int64_t n0, int64_t n1, float *buf), (q, n0, n1, buf))

/* synth-embed begin */
/* ---- activations "q8": integer block dot products ----
 * One weight row against one quantized x row (xq int8 [K], xd and xs the
 * scale and the sum of q of each x block): per block b an exact int32
 * isum = sum_j w[j] xq[j] (w the nibble 0..15 of q4_0 / q4_1, the signed
 * byte of q8_0; |isum| <= 32 * 128 * 127), then the block's term in f32,
 *   q4_0: (dw dx) (isum - 8 xs)   q4_1: (dw dx) isum + (m dx) xs   q8_0: (dw dx) isum
 * added into acc[b % 4]. Every path does these IEEE operations in this
 * order (no FMA), so they agree bit for bit. */
typedef void (*oi__q8dot_fn)(oi__qformat f, const uint8_t *row, const int8_t *xq, const float *xd, const int32_t *xs,
                             int64_t b0, int64_t nb, float acc[4]);

/* One block's f32 term from its exact integer sum (the order above). */
static inline float oi__q8dot_term(oi__qformat f, const uint8_t *blk, int32_t isum, float xd, int32_t xs) {
    float dwx = oi__q_half(blk) * xd;
    if (f == OI__Q4_0)
        return dwx * (float)(isum - 8 * xs);
    if (f == OI__Q4_1) {
        float mx = oi__q_half(blk + 2) * xd;
        return dwx * (float)isum + mx * (float)xs;
    }
    return dwx * (float)isum;
}

/* Blocks [b0, nb) one at a time. */
static void oi__q8dot_portable(oi__qformat f, const uint8_t *row, const int8_t *xq, const float *xd,
                               const int32_t *xs, int64_t b0, int64_t nb, float acc[4]) {
    int64_t bytes = oi__q4_block_bytes(f);
    for (int64_t b = b0; b < nb; b++) {
        const uint8_t *blk = row + b * bytes;
        const int8_t *x = xq + b * OI__Q4_BLOCK;
        int32_t isum = 0;
        if (f == OI__Q8_0)
            for (int j = 0; j < OI__Q4_BLOCK; j++)
                isum += (int32_t)(int8_t)blk[2 + j] * x[j];
        else
            for (int j = 0; j < 16; j++) {
                uint8_t v = blk[bytes - 16 + j];
                isum += (int32_t)(v & 15) * x[j] + (int32_t)(v >> 4) * x[j + 16];
            }
        acc[b & 3] += oi__q8dot_term(f, blk, isum, xd[b], xs[b]);
    }
}

#if OI__GEMM_X86
/* One weight block as 32 bytes for vpmaddubsw/vpdpbusd (unsigned times
 * signed), and x's block to match: the nibbles as they are (0..15); q8_0's
 * signed bytes as |w| with w's sign moved onto x (|w| <= 128 fits u8). */
#define OI__Q8DOT_LOAD_BLOCK(f, blk, xp, wv, xv) \
    do { \
        xv = _mm256_loadu_si256((const __m256i *)(xp)); \
        if ((f) == OI__Q8_0) { \
            __m256i raw_ = _mm256_loadu_si256((const __m256i *)((blk) + 2)); \
            wv = _mm256_sign_epi8(raw_, raw_); \
            xv = _mm256_sign_epi8(xv, raw_); \
        } else { \
            __m128i qs_ = _mm_loadu_si128((const __m128i *)((blk) + ((f) == OI__Q4_1 ? 4 : 2))); \
            wv = _mm256_and_si256(_mm256_inserti128_si256(_mm256_castsi128_si256(qs_), _mm_srli_epi16(qs_, 4), 1), \
                                  _mm256_set1_epi8(15)); \
        } \
    } while (0)

/* The f16 scales of four blocks (at p, p + step, ...) as f32 by F16C: d in
 * the low four lanes, q4_1's m in the high four (the next two bytes of the
 * other formats, not used). vcvtph2ps is exact, as oi__q_half; a signaling
 * NaN comes out quiet, which the first product does to oi__q_half's too. */
static inline uint32_t oi__q8dot_u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}
#define OI__Q8DOT_SCALES4(p, step) \
    _mm256_cvtph_ps(_mm_shuffle_epi8( \
        _mm_set_epi32((int)oi__q8dot_u32((p) + 3 * (step)), (int)oi__q8dot_u32((p) + 2 * (step)), \
                      (int)oi__q8dot_u32((p) + (step)), (int)oi__q8dot_u32(p)), \
        _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15)))

/* Four blocks' terms (the order of oi__q8dot_term, in lanes) added into acc4:
 * r0..r3 the 8 int32 partial sums of blocks 0..3, s their scales, dx and xs4
 * x's. Two rounds of vphaddd leave each block's sum split over the two
 * halves, one add joins them. */
#define OI__Q8DOT_TERMS4(f, r0, r1, r2, r3, s, dx, xs4, acc4) \
    do { \
        __m256i h_ = _mm256_hadd_epi32(_mm256_hadd_epi32(r0, r1), _mm256_hadd_epi32(r2, r3)); \
        __m128i isum_ = _mm_add_epi32(_mm256_castsi256_si128(h_), _mm256_extracti128_si256(h_, 1)); \
        __m128 dwx_ = _mm_mul_ps(_mm256_castps256_ps128(s), dx), t_; \
        if ((f) == OI__Q4_0) \
            t_ = _mm_mul_ps(dwx_, _mm_cvtepi32_ps(_mm_sub_epi32(isum_, _mm_slli_epi32(xs4, 3)))); \
        else if ((f) == OI__Q4_1) \
            t_ = _mm_add_ps(_mm_mul_ps(dwx_, _mm_cvtepi32_ps(isum_)), \
                            _mm_mul_ps(_mm_mul_ps(_mm256_extractf128_ps(s, 1), dx), _mm_cvtepi32_ps(xs4))); \
        else \
            t_ = _mm_mul_ps(dwx_, _mm_cvtepi32_ps(isum_)); \
        acc4 = _mm_add_ps(acc4, t_); \
    } while (0)

/* The x86 paths below are written once as bodies over a format f and an
 * integer block product MADD(w, x) (8 int32 partial sums of one block), and
 * instantiated per format through OI__Q8DOT_FORMATS: with f a constant and
 * the four blocks or rows spelled out, the compiler keeps every block's sums
 * in registers and drops the format tests (a loop over an array of four,
 * with f read at run time, went through the stack and branched per block:
 * about twice the time per block on AVX2). */
#define OI__Q8DOT_FORMATS(BODY, MADD) \
    switch (f) { \
    case OI__Q4_0: BODY(MADD, OI__Q4_0); break; \
    case OI__Q4_1: BODY(MADD, OI__Q4_1); break; \
    default: BODY(MADD, OI__Q8_0); break; \
    }

/* One row, four blocks at a time (b0 a multiple of 4, so lane i is block
 * b + i's acc[b & 3]); the last 1-3 the same way with the missing blocks'
 * sums, scales and x zero: their lanes add +0.0, which leaves an
 * accumulator that starts at +0.0 as it is. */
#define OI__Q8DOT_BLOCK(MADD, F, blk, xp, r) \
    do { \
        __m256i wv_, xv_; \
        OI__Q8DOT_LOAD_BLOCK(F, blk, xp, wv_, xv_); \
        r = MADD(wv_, xv_); \
    } while (0)
#define OI__Q8DOT_BODY(MADD, F) \
    do { \
        int64_t bytes = oi__q4_block_bytes(F), b = b0; \
        __m128 acc4 = _mm_loadu_ps(acc); \
        for (; b + 4 <= nb; b += 4) { \
            __m256i r0, r1, r2, r3; \
            const uint8_t *blk = row + b * bytes; \
            const int8_t *xb = xq + b * OI__Q4_BLOCK; \
            OI__Q8DOT_BLOCK(MADD, F, blk, xb, r0); \
            OI__Q8DOT_BLOCK(MADD, F, blk + bytes, xb + OI__Q4_BLOCK, r1); \
            OI__Q8DOT_BLOCK(MADD, F, blk + 2 * bytes, xb + 2 * OI__Q4_BLOCK, r2); \
            OI__Q8DOT_BLOCK(MADD, F, blk + 3 * bytes, xb + 3 * OI__Q4_BLOCK, r3); \
            __m256 s = OI__Q8DOT_SCALES4(blk, bytes); \
            OI__Q8DOT_TERMS4(F, r0, r1, r2, r3, s, _mm_loadu_ps(xd + b), _mm_loadu_si128((const __m128i *)(xs + b)), \
                             acc4); \
        } \
        if (b < nb) { \
            __m256i r[4]; \
            uint32_t sc[4] = {0, 0, 0, 0}; \
            float dxt[4] = {0.0f, 0.0f, 0.0f, 0.0f}; \
            int32_t xst[4] = {0, 0, 0, 0}; \
            for (int i = 0; i < 4; i++) { \
                r[i] = _mm256_setzero_si256(); \
                if (b + i < nb) { \
                    const uint8_t *blk = row + (b + i) * bytes; \
                    OI__Q8DOT_BLOCK(MADD, F, blk, xq + (b + i) * OI__Q4_BLOCK, r[i]); \
                    sc[i] = oi__q8dot_u32(blk); \
                    dxt[i] = xd[b + i]; \
                    xst[i] = xs[b + i]; \
                } \
            } \
            __m256 s = _mm256_cvtph_ps(_mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)sc), \
                                                        _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15))); \
            OI__Q8DOT_TERMS4(F, r[0], r[1], r[2], r[3], s, _mm_loadu_ps(dxt), _mm_loadu_si128((const __m128i *)xst), \
                             acc4); \
        } \
        _mm_storeu_ps(acc, acc4); \
    } while (0)

/* Four weight rows (at w, w + row_bytes, ...) against one x row: lane r of
 * each vector is row r, so x's block is loaded once for the four, and the
 * hadd tree gives the four rows' sums of one block. acc[c] holds, per row,
 * the blocks b with b % 4 == c, added in order as the one-row body does, and
 * y[r] = (acc[0] + acc[1]) + (acc[2] + acc[3]): the same result bit for bit. */
#define OI__Q8DOT4_BLOCK(MADD, F, b, accv) \
    do { \
        const uint8_t *blk_ = w + (b) * bytes; \
        const int8_t *xb_ = xq + (b) * OI__Q4_BLOCK; \
        __m256i r0_, r1_, r2_, r3_; \
        OI__Q8DOT_BLOCK(MADD, F, blk_, xb_, r0_); \
        OI__Q8DOT_BLOCK(MADD, F, blk_ + row_bytes, xb_, r1_); \
        OI__Q8DOT_BLOCK(MADD, F, blk_ + 2 * row_bytes, xb_, r2_); \
        OI__Q8DOT_BLOCK(MADD, F, blk_ + 3 * row_bytes, xb_, r3_); \
        __m256 s_ = OI__Q8DOT_SCALES4(blk_, row_bytes); \
        OI__Q8DOT_TERMS4(F, r0_, r1_, r2_, r3_, s_, _mm_set1_ps(xd[b]), _mm_set1_epi32(xs[b]), accv); \
    } while (0)
#define OI__Q8DOT4_BODY(MADD, F) \
    do { \
        int64_t bytes = oi__q4_block_bytes(F), b = 0; \
        __m128 a0 = _mm_setzero_ps(), a1 = _mm_setzero_ps(), a2 = _mm_setzero_ps(), a3 = _mm_setzero_ps(); \
        for (; b + 4 <= nb; b += 4) { \
            OI__Q8DOT4_BLOCK(MADD, F, b, a0); \
            OI__Q8DOT4_BLOCK(MADD, F, b + 1, a1); \
            OI__Q8DOT4_BLOCK(MADD, F, b + 2, a2); \
            OI__Q8DOT4_BLOCK(MADD, F, b + 3, a3); \
        } \
        if (b < nb) \
            OI__Q8DOT4_BLOCK(MADD, F, b, a0); \
        if (b + 1 < nb) \
            OI__Q8DOT4_BLOCK(MADD, F, b + 1, a1); \
        if (b + 2 < nb) \
            OI__Q8DOT4_BLOCK(MADD, F, b + 2, a2); \
        _mm_storeu_ps(y, _mm_add_ps(_mm_add_ps(a0, a1), _mm_add_ps(a2, a3))); \
    } while (0)

#define OI__Q8DOT_MADD_AVX2(w, x) _mm256_madd_epi16(_mm256_maddubs_epi16(w, x), _mm256_set1_epi16(1))
#define OI__Q8DOT_MADD_VNNI(w, x) _mm256_dpbusd_epi32(_mm256_setzero_si256(), w, x)

__attribute__((target("avx2,fma,f16c"))) static void oi__q8dot_avx2(oi__qformat f, const uint8_t *row, const int8_t *xq, const float *xd,
                                           const int32_t *xs, int64_t b0, int64_t nb, float acc[4]) {
    OI__Q8DOT_FORMATS(OI__Q8DOT_BODY, OI__Q8DOT_MADD_AVX2)
}

__attribute__((target("avx2,fma,f16c"))) static inline void oi__q8dot4_avx2(oi__qformat f, const uint8_t *w, int64_t row_bytes,
                                                                     const int8_t *xq, const float *xd,
                                                                     const int32_t *xs, int64_t nb, float y[4]) {
    OI__Q8DOT_FORMATS(OI__Q8DOT4_BODY, OI__Q8DOT_MADD_AVX2)
}

/* AVX-512 VNNI on 256-bit vectors (AVX512VL): one vpdpbusd per block where
 * AVX2 needs vpmaddubsw and vpmaddwd. */
__attribute__((target("avx2,f16c,avx512f,avx512vl,avx512bw,avx512vnni"))) static void
oi__q8dot_vnni(oi__qformat f, const uint8_t *row, const int8_t *xq, const float *xd, const int32_t *xs, int64_t b0,
               int64_t nb, float acc[4]) {
    OI__Q8DOT_FORMATS(OI__Q8DOT_BODY, OI__Q8DOT_MADD_VNNI)
}

__attribute__((target("avx2,f16c,avx512f,avx512vl,avx512bw,avx512vnni"))) static inline void
oi__q8dot4_vnni(oi__qformat f, const uint8_t *w, int64_t row_bytes, const int8_t *xq, const float *xd, const int32_t *xs,
                int64_t nb, float y[4]) {
    OI__Q8DOT_FORMATS(OI__Q8DOT4_BODY, OI__Q8DOT_MADD_VNNI)
}
#endif

/* One weight row against one quantized x row: the blocks into four f32
 * partial sums (acc[b % 4]), joined pairwise. */
static inline float oi__q8dot_row(oi__q8dot_fn dot, oi__qformat f, const uint8_t *row, const int8_t *xq,
                                  const float *xd, const int32_t *xs, int64_t nb) {
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    dot(f, row, xq, xd, xs, 0, nb, acc);
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

typedef void (*oi__q8dot4_fn)(oi__qformat f, const uint8_t *w, int64_t row_bytes, const int8_t *xq, const float *xd,
                              const int32_t *xs, int64_t nb, float y[4]);

/* The four-row form of a one-row path; NULL for the portable loop. */
static inline oi__q8dot4_fn oi__q8dot4_of(oi__q8dot_fn dot) {
#if OI__GEMM_X86
    if (dot == oi__q8dot_vnni)
        return oi__q8dot4_vnni;
    if (dot == oi__q8dot_avx2)
        return oi__q8dot4_avx2;
#endif
    (void)dot;
    return NULL;
}

#define OI__Q8_PREFETCH 6144 /* bytes of weight rows asked for ahead of the dot products */

/* y[i * ldy + n] for weight rows n in [n0, n1) (at w + n * row_bytes) and
 * the m quantized rows of x (K = nb blocks each): each weight row against
 * every x row, so it stays in cache across them; four weight rows at once
 * where the ISA has a four-row form, the rest one by one (the same bits).
 * A decode streams each weight once, in short runs of rows (a task's share
 * of one matrix) that the hardware prefetcher alone starts too late: the
 * rows OI__Q8_PREFETCH bytes ahead are asked for by hand. */
static inline void oi__q8dot_rows(oi__q8dot_fn dot, oi__qformat f, const uint8_t *w, int64_t row_bytes, int64_t n0,
                                  int64_t n1, const int8_t *xq, const float *xd, const int32_t *xs, int64_t m,
                                  int64_t nb, float *y, int64_t ldy) {
    oi__q8dot4_fn dot4 = oi__q8dot4_of(dot);
    int64_t n = n0, group = 4 * row_bytes, k = nb * OI__Q4_BLOCK;
    const uint8_t *end = w + n1 * row_bytes;
    for (const uint8_t *p = w + n * row_bytes; p < end && p < w + n * row_bytes + OI__Q8_PREFETCH; p += 64)
        __builtin_prefetch(p);
    for (; dot4 && n + 4 <= n1; n += 4) {
        const uint8_t *ahead = w + n * row_bytes + OI__Q8_PREFETCH;
        for (int64_t off = 0; off < group && ahead + off < end; off += 64)
            __builtin_prefetch(ahead + off);
        for (int64_t i = 0; i < m; i++) {
            float out[4];
            dot4(f, w + n * row_bytes, row_bytes, xq + i * k, xd + i * nb, xs + i * nb, nb, out);
            for (int r = 0; r < 4; r++)
                y[i * ldy + n + r] = out[r];
        }
    }
    for (; n < n1; n++)
        for (int64_t i = 0; i < m; i++)
            y[i * ldy + n] = oi__q8dot_row(dot, f, w + n * row_bytes, xq + i * k, xd + i * nb, xs + i * nb, nb);
}
/* synth-embed end */

/* Off only in tests, to run the AVX2 code on a CPU with VNNI. */
static bool oi__q8dot_vnni_allowed = true;

void oi__quant_allow_vnni(bool allow) { oi__q8dot_vnni_allowed = allow; }

static oi__q8dot_fn oi__q8dot_pick(void) {
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa();
    if (!oi__cpu_has_f16c())
        return oi__q8dot_portable;
    if (isa == OI__GEMM_ISA_AVX512 && oi__q8dot_vnni_allowed && __builtin_cpu_supports("avx512vnni") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        return oi__q8dot_vnni;
    if (isa == OI__GEMM_ISA_AVX512 || isa == OI__GEMM_ISA_AVX2)
        return oi__q8dot_avx2;
#endif
    return oi__q8dot_portable;
}

/* synth-embed begin */
/* Rounds each row of x ([M, K], K a multiple of 32) into int8 blocks:
 * d = max|x| / 127, q = x * (1 / d) rounded half away from zero, sum = the
 * block's sum of q. Scalar f32, the same on every path. A NaN or infinite
 * x makes its block's scale NaN (q = 0), so the outputs it reaches are NaN. */
OI__MATH_INLINE void oi__q8_quantize_rows_body(const float *x, int64_t m, int64_t k, int8_t *xq, float *xd, int32_t *xs) {
    for (int64_t b = 0; b < m * (k / OI__Q4_BLOCK); b++, x += OI__Q4_BLOCK, xq += OI__Q4_BLOCK) {
        float amax = 0.0f;
        bool finite = true;
        for (int j = 0; j < OI__Q4_BLOCK; j++) {
            amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
            finite = finite && fabsf(x[j]) <= FLT_MAX;
        }
        float d = finite ? amax / 127.0f : NAN, inv = finite && d > 0.0f ? 1.0f / d : 0.0f;
        int32_t sum = 0;
        for (int j = 0; j < OI__Q4_BLOCK; j++) {
            /* roundf's half away from zero without its call: |v| <= 127 (+ rounding), so the
             * truncation is an exact int and v - t is exact */
            float v = finite ? x[j] * inv : 0.0f; /* NaN * 0 is NaN: no int for it */
            int q = (int)v;
            float frac = v - (float)q;
            q += frac >= 0.5f ? 1 : frac <= -0.5f ? -1 : 0;
            xq[j] = (int8_t)(q > 127 ? 127 : q < -127 ? -127 : q);
            sum += xq[j];
        }
        xd[b] = d;
        xs[b] = sum;
    }
}
/* synth-embed end */
OI__ISA_CLONES(oi__q8_quantize_rows, (const float *x, int64_t m, int64_t k, int8_t *xq, float *xd, int32_t *xs),
               (x, m, k, xq, xd, xs))

/* synth-embed begin */
#if OI__GEMM_X86
/* The same steps in AVX-512 lanes, 16 values at a time: the same f32 product
 * x * inv, the same truncation, fraction test and clamp, so the same bytes. */
OI__TARGET_AVX512 static void oi__q8_quantize_half_avx512(__m512 v, int8_t *out, __m512i *sum) {
    __m512i q = _mm512_maskz_cvttps_epi32(OI__V512_ALL, v);
    __m512 frac = _mm512_sub_ps(v, _mm512_maskz_cvtepi32_ps(OI__V512_ALL, q));
    q = _mm512_mask_add_epi32(q, _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ), q, _mm512_set1_epi32(1));
    q = _mm512_mask_sub_epi32(q, _mm512_cmp_ps_mask(frac, _mm512_set1_ps(-0.5f), _CMP_LE_OQ), q, _mm512_set1_epi32(1));
    q = _mm512_maskz_min_epi32(OI__V512_ALL, _mm512_maskz_max_epi32(OI__V512_ALL, q, _mm512_set1_epi32(-127)),
                               _mm512_set1_epi32(127));
    _mm_storeu_si128((__m128i *)(void *)out, _mm512_maskz_cvtepi32_epi8(OI__V512_ALL, q));
    *sum = _mm512_add_epi32(*sum, q);
}

OI__TARGET_AVX512 static void oi__q8_quantize_rows_lanes(const float *x, int64_t m, int64_t k, int8_t *xq, float *xd,
                                                         int32_t *xs) {
    for (int64_t b = 0; b < m * (k / OI__Q4_BLOCK); b++, x += OI__Q4_BLOCK, xq += OI__Q4_BLOCK) {
        __m512 lo = _mm512_loadu_ps(x), hi = _mm512_loadu_ps(x + 16);
        __m512 alo = _mm512_abs_ps(lo), ahi = _mm512_abs_ps(hi), big = _mm512_set1_ps(FLT_MAX);
        bool finite = (_mm512_cmp_ps_mask(alo, big, _CMP_LE_OQ) & _mm512_cmp_ps_mask(ahi, big, _CMP_LE_OQ)) == 0xFFFF;
        if (!finite) { /* the scalar rule: scale NaN, q = 0 */
            memset(xq, 0, OI__Q4_BLOCK);
            xd[b] = NAN;
            xs[b] = 0;
            continue;
        }
        float amax = oi__v512_max_ps(_mm512_maskz_max_ps(OI__V512_ALL, alo, ahi));
        float d = amax / 127.0f, inv = d > 0.0f ? 1.0f / d : 0.0f;
        __m512 vinv = _mm512_set1_ps(inv);
        __m512i sum = _mm512_setzero_si512();
        oi__q8_quantize_half_avx512(_mm512_mul_ps(lo, vinv), xq, &sum);
        oi__q8_quantize_half_avx512(_mm512_mul_ps(hi, vinv), xq + 16, &sum);
        xd[b] = d;
        xs[b] = oi__v512_sum_epi32(sum);
    }
}

/* The same again in AVX2 lanes, 8 values at a time. */
OI__TARGET_AVX2 static __m256i oi__q8_quantize_eighth_avx2(__m256 v) {
    __m256i q = _mm256_cvttps_epi32(v);
    __m256 frac = _mm256_sub_ps(v, _mm256_cvtepi32_ps(q));
    /* the compares give -1 where true: q - up + down */
    __m256i up = _mm256_castps_si256(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ));
    __m256i down = _mm256_castps_si256(_mm256_cmp_ps(frac, _mm256_set1_ps(-0.5f), _CMP_LE_OQ));
    q = _mm256_add_epi32(_mm256_sub_epi32(q, up), down);
    return _mm256_min_epi32(_mm256_max_epi32(q, _mm256_set1_epi32(-127)), _mm256_set1_epi32(127));
}

OI__TARGET_AVX2 static void oi__q8_quantize_rows_lanes8(const float *x, int64_t m, int64_t k, int8_t *xq, float *xd,
                                                        int32_t *xs) {
    const __m256 sign = _mm256_set1_ps(-0.0f), big = _mm256_set1_ps(FLT_MAX);
    for (int64_t b = 0; b < m * (k / OI__Q4_BLOCK); b++, x += OI__Q4_BLOCK, xq += OI__Q4_BLOCK) {
        __m256 v[4], amax = _mm256_setzero_ps();
        int finite = 0xFF;
        for (int i = 0; i < 4; i++) {
            v[i] = _mm256_loadu_ps(x + 8 * i);
            __m256 a = _mm256_andnot_ps(sign, v[i]);
            finite &= _mm256_movemask_ps(_mm256_cmp_ps(a, big, _CMP_LE_OQ));
            amax = _mm256_max_ps(amax, a);
        }
        if (finite != 0xFF) { /* the scalar rule: scale NaN, q = 0 */
            memset(xq, 0, OI__Q4_BLOCK);
            xd[b] = NAN;
            xs[b] = 0;
            continue;
        }
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_shuffle_ps(m4, m4, 1));
        float d = _mm_cvtss_f32(m4) / 127.0f, inv = d > 0.0f ? 1.0f / d : 0.0f;
        __m256 vinv = _mm256_set1_ps(inv);
        __m256i q[4];
        for (int i = 0; i < 4; i++)
            q[i] = oi__q8_quantize_eighth_avx2(_mm256_mul_ps(v[i], vinv));
        /* int32 -> int8 (|q| <= 127, no saturation); the packs interleave the
         * 128-bit halves, the permute puts the 32 bytes back in order */
        __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256((__m256i *)(void *)xq, bytes);
        __m256i sum = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4E));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xB1));
        xd[b] = d;
        xs[b] = _mm_cvtsi128_si32(s4);
    }
}
#endif
/* synth-embed end */

static void oi__q8_quantize_x(const float *x, int64_t m, int64_t k, int8_t *xq, float *xd, int32_t *xs) {
#if OI__GEMM_X86
    oi__gemm_isa isa = oi__gemm_active_isa(); /* AVX-512 or AVX2: the CPU has AVX2 (as oi__q8dot_pick) */
    if (isa == OI__GEMM_ISA_AVX512 && __builtin_cpu_supports("avx512bw")) {
        oi__q8_quantize_rows_lanes(x, m, k, xq, xd, xs);
        return;
    }
    if (isa == OI__GEMM_ISA_AVX512 || isa == OI__GEMM_ISA_AVX2) {
        oi__q8_quantize_rows_lanes8(x, m, k, xq, xd, xs);
        return;
    }
#endif
    OI__ISA_CALL(oi__q8_quantize_rows, (x, m, k, xq, xd, xs));
}

/* y[:, n0..n1): each weight row against every quantized x row (the weight
 * row stays in cache across the rows of x). */
static void oi__qmm_q8_rows(const oi__qmm *q, int64_t n0, int64_t n1) {
    oi__q8dot_rows(oi__q8dot_pick(), q->format, q->w, q->row_bytes, n0, n1, q->xq, q->xd, q->xs, q->m, q->k / OI__Q4_BLOCK,
                   q->y, q->n);
}

/* Output columns [n0, n1). */
static void oi__qmm_task(void *ctx, int task, int thread) {
    const oi__qmm *q = (const oi__qmm *)ctx;
    int64_t n0 = (int64_t)task * q->rows_per_task, n1 = n0 + q->rows_per_task < q->n ? n0 + q->rows_per_task : q->n;
    if (q->xq) {
        oi__qmm_q8_rows(q, n0, n1);
        return;
    }
    if (!q->gemm) {
        OI__ISA_CALL(oi__qmm_dots, (q, n0, n1));
        return;
    }
    float *buf = q->scratch + (size_t)thread * (size_t)(OI__QMM_CHUNK * q->k);
    for (int64_t c = n0; c < n1; c += OI__QMM_CHUNK) {
        int64_t rows = n1 - c < OI__QMM_CHUNK ? n1 - c : OI__QMM_CHUNK;
        OI__ISA_CALL(oi__qmm_dequant_rows, (q, c, c + rows, buf));
        oi_status s = oi__gemm_f32(NULL, false, true, q->m, rows, q->k, 1.0f, q->x, q->k, buf, q->k, 0.0f, q->y + c, q->n);
        if (s != OI_OK)
            q->status[thread] = s;
    }
}

/* w [N, K] (q8 "nk" and the q4 formats): tasks over output columns. */
static oi_status oi__qmm_rows(oi__qmm *q) {
    double work = (double)q->m * (double)q->n * (double)q->k;
    oi__threadpool *pool = work >= 262144.0 && q->n > OI__QMM_CHUNK ? oi__threadpool_default() : NULL;
    int threads = oi__threadpool_size(pool);
    q->gemm = q->m >= OI__QMM_DOT_MAX_M && !q->xq;
    int64_t tasks = (int64_t)threads * 4;
    q->rows_per_task = (q->n + tasks - 1) / tasks;
    q->rows_per_task = (q->rows_per_task + OI__QMM_CHUNK - 1) / OI__QMM_CHUNK * OI__QMM_CHUNK;
    tasks = (q->n + q->rows_per_task - 1) / q->rows_per_task;
    q->status = (oi_status *)oi__calloc((size_t)threads, sizeof(oi_status));
    q->scratch = q->gemm ? (float *)oi__malloc(sizeof(float) * (size_t)threads * (size_t)(OI__QMM_CHUNK * q->k + 1))
                         : NULL;
    oi_status s = q->status && (q->scratch || !q->gemm) ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    if (s == OI_OK)
        oi__threadpool_run(pool, (int)tasks, oi__qmm_task, q);
    for (int t = 0; t < threads && s == OI_OK; t++)
        s = q->status[t];
    oi__free(q->status);
    oi__free(q->scratch);
    return s;
}

/* q8 w [K, N]: dequantize chunks of K rows (times the scales) and
 * accumulate their products with the gemm. */
static oi_status oi__qmm_kn(const oi__qmm *q) {
    int64_t chunk = q->n ? ((int64_t)1 << 16) / q->n : 1;
    chunk = chunk < 1 ? 1 : chunk > q->k ? q->k : chunk;
    float *buf = (float *)oi__malloc(sizeof(float) * (size_t)(chunk * q->n + 1));
    if (!buf)
        return OI_ERROR_OUT_OF_MEMORY;
    oi_status s = OI_OK;
    const int8_t *w = (const int8_t *)q->w;
    for (int64_t k0 = 0; k0 < q->k && s == OI_OK; k0 += chunk) {
        int64_t rows = q->k - k0 < chunk ? q->k - k0 : chunk;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t n = 0; n < q->n; n++)
                buf[r * q->n + n] = (float)w[(k0 + r) * q->n + n] * q->scale[n];
        s = oi__gemm_f32(oi__threadpool_default(), false, false, q->m, q->n, rows, 1.0f, q->x + k0, q->k, buf, q->n,
                         k0 ? 1.0f : 0.0f, q->y, q->n);
    }
    oi__free(buf);
    return s;
}

static bool oi__quant_kn(const oi__kernel_args *k) {
    const oi__attr *a = oi__op_attr_for(k, "layout");
    return a && strcmp(a->s, "kn") == 0;
}

/* The block format (validation let through one of OI_PARAM_CHOICES' three). */
static oi__qformat oi__quant_format(const oi__kernel_args *k) {
    if (k->op == OI_OP_matmul_q8)
        return OI__Q_I8;
    const oi__attr *a = oi__op_attr_for(k, "format");
    const char *s = a ? a->s : "q4_0";
    return strcmp(s, "q4_1") == 0 ? OI__Q4_1 : strcmp(s, "q8_0") == 0 ? OI__Q8_0 : OI__Q4_0;
}

/* activations="q8" (matmul_q4): x rounded to int8 blocks, integer dots */
static bool oi__quant_a8(const oi__kernel_args *k) {
    const oi__attr *a = k->op == OI_OP_matmul_q4 ? oi__op_attr_for(k, "activations") : NULL;
    return a && strcmp(a->s, "q8") == 0;
}

/* Writes a dense f32 [M, N] result into out (any dtype and strides). */
static void oi__quant_store(oi__tensor *out, const float *y) {
    oi__ew_iter it;
    oi__ew_init(&it, NULL, 0, out);
    int64_t n = oi__shape_numel(out->ndim, out->shape);
    for (int64_t e = 0; e < n; e++, oi__ew_next(&it))
        oi__store_f64(out->dtype, oi__tensor_data(out), it.at[0], (double)y[e]);
}

/* dequantize: each row of blocks into f32, rows of w as given (a view is
 * made dense first), the result stored through out's strides if it has
 * any. */
static oi_status oi__k_dequant(const oi__kernel_args *k) {
    const oi__tensor *w = k->in[0];
    oi__tensor *out = k->out;
    oi__qformat f = oi__quant_format(k);
    int64_t kdim = out->shape[out->ndim - 1], rows = oi__shape_numel(out->ndim - 1, out->shape);
    bool y_direct = oi__tensor_is_contiguous(out);
    oi__tensor *w_dense = oi__tensor_is_contiguous(w) ? NULL : oi__tensor_clone(w);
    float *y_buf = y_direct ? NULL : (float *)oi__malloc(sizeof(float) * (size_t)(rows * kdim + 1));
    if ((!y_direct && !y_buf) || (!oi__tensor_is_contiguous(w) && !w_dense)) {
        oi__tensor_free(w_dense);
        oi__free(y_buf);
        return OI_ERROR_OUT_OF_MEMORY;
    }
    const oi__tensor *wt = w_dense ? w_dense : w;
    const uint8_t *src = (const uint8_t *)oi__op_cdata(wt) + wt->offset;
    float *y = y_direct ? (float *)oi__tensor_data(out) + out->offset : y_buf;
    int64_t row_bytes = kdim / OI__Q4_BLOCK * oi__q4_block_bytes(f);
    for (int64_t r = 0; r < rows; r++)
        oi__dequant_row(f, src + r * row_bytes, kdim, y + r * kdim);
    if (!y_direct)
        oi__quant_store(out, y_buf);
    oi__tensor_free(w_dense);
    oi__free(y_buf);
    return OI_OK;
}

static oi_status oi__k_quant(const oi__kernel_args *k) {
    if (k->op == OI_OP_dequantize)
        return oi__k_dequant(k);
    const oi__tensor *x = k->in[0], *w = k->in[1];
    oi__tensor *out = k->out;
    oi__qmm q;
    memset(&q, 0, sizeof q);
    q.format = oi__quant_format(k);
    q.k = x->shape[x->ndim - 1];
    q.m = oi__shape_numel(x->ndim - 1, x->shape);
    q.n = out->shape[out->ndim - 1];
    bool x_direct = x->dtype == OI_DTYPE_F32 && oi__tensor_is_contiguous(x);
    bool y_direct = out->dtype == OI_DTYPE_F32 && oi__tensor_is_contiguous(out);
    oi__tensor *w_dense = oi__tensor_is_contiguous(w) ? NULL : oi__tensor_clone(w);
    float *x_buf = x_direct ? NULL : (float *)oi__nn_load_dense(x, false, x->ndim, x->shape);
    float *scale_buf = q.format == OI__Q_I8 ? (float *)oi__nn_load_dense(k->in[2], false, 1, &q.n) : NULL;
    float *y_buf = y_direct ? NULL : (float *)oi__malloc(sizeof(float) * (size_t)(q.m * q.n + 1));
    bool a8 = oi__quant_a8(k) && q.k > 0;
    int64_t nb = q.m * (q.k / OI__Q4_BLOCK);
    int8_t *xq = a8 ? (int8_t *)oi__malloc((size_t)(nb * OI__Q4_BLOCK + 1)) : NULL;
    float *xd = a8 ? (float *)oi__malloc(sizeof(float) * (size_t)(nb + 1)) : NULL;
    int32_t *xs = a8 ? (int32_t *)oi__malloc(sizeof(int32_t) * (size_t)(nb + 1)) : NULL;
    oi_status s = OI_OK;
    if ((!x_direct && !x_buf) || (!y_direct && !y_buf) || (q.format == OI__Q_I8 && !scale_buf) ||
        (!oi__tensor_is_contiguous(w) && !w_dense) || (a8 && (!xq || !xd || !xs)))
        s = OI_ERROR_OUT_OF_MEMORY;
    if (s == OI_OK) {
        const oi__tensor *wt = w_dense ? w_dense : w;
        q.w = (const uint8_t *)oi__op_cdata(wt) + wt->offset;
        q.row_bytes = wt->shape[1];
        q.x = x_direct ? (const float *)oi__op_cdata(x) + x->offset : x_buf;
        q.y = y_direct ? (float *)oi__tensor_data(out) + out->offset : y_buf;
        q.scale = scale_buf;
        if (a8) {
            oi__q8_quantize_x(q.x, q.m, q.k, xq, xd, xs);
            q.xq = xq, q.xd = xd, q.xs = xs;
        }
        if (q.k == 0)
            memset(q.y, 0, sizeof(float) * (size_t)(q.m * q.n));
        else if (q.format == OI__Q_I8 && oi__quant_kn(k))
            s = oi__qmm_kn(&q);
        else
            s = oi__qmm_rows(&q);
        if (s == OI_OK && !y_direct)
            oi__quant_store(out, y_buf);
    }
    oi__tensor_free(w_dense);
    oi__free(x_buf);
    oi__free(scale_buf);
    oi__free(y_buf);
    oi__free(xq);
    oi__free(xd);
    oi__free(xs);
    return s;
}

/* w u8 [..., B * block bytes] -> f32 [..., B * 32]. */
static oi_status oi__dequant_infer(const oi__kernel_args *k, const oi__op_sig *w, oi__op_sig *out) {
    oi__qformat f = oi__quant_format(k);
    int64_t bytes = oi__q4_block_bytes(f);
    if (w->ndim < 1 || w->shape[w->ndim - 1] % bytes != 0) {
        char have[128];
        oi__op_shape_text(w->ndim, w->shape, have, sizeof have);
        return oi__fail(OI_ERROR_VALIDATION,
                        "dequantize: w is u8 %s; %s rows need a last dim that is a multiple of %lld (its block bytes)",
                        have, oi__q4_format_name(f), (long long)bytes);
    }
    out->ndim = w->ndim;
    memcpy(out->shape, w->shape, sizeof out->shape);
    out->shape[w->ndim - 1] = w->shape[w->ndim - 1] / bytes * OI__Q4_BLOCK;
    return OI_OK;
}

/* x [..., K] -> [..., N]; checks w (and scale) against K and the format. */
static oi_status oi__k_quant_infer(const oi__kernel_args *k, const oi__op_sig *in, size_t n_in, oi__op_sig *out) {
    if (k->op == OI_OP_dequantize)
        return oi__dequant_infer(k, &in[0], out);
    const char *name = oi_op_name(k->op);
    const oi__op_sig *x = &in[0], *w = &in[1];
    (void)n_in;
    if (x->ndim < 1)
        return oi__fail(OI_ERROR_VALIDATION, "%s: x must have rank >= 1 ([..., K])", name);
    int64_t kdim = x->shape[x->ndim - 1], n;
    char have[128];
    oi__op_shape_text(w->ndim, w->shape, have, sizeof have);
    if (k->op == OI_OP_matmul_q8) {
        bool kn = oi__quant_kn(k);
        if (w->dtype != OI_DTYPE_I8 || w->ndim != 2 || w->shape[kn ? 0 : 1] != kdim)
            return oi__fail(OI_ERROR_VALIDATION, "matmul_q8: w is %s %s but x has K = %lld (want i8 %s)",
                            oi_dtype_name(w->dtype) ? oi_dtype_name(w->dtype) : "?", have, (long long)kdim,
                            kn ? "[K, N] for layout \"kn\"" : "[N, K]");
        n = w->shape[kn ? 1 : 0];
        const oi__op_sig *scale = &in[2];
        if (!oi__dtype_is_float(scale->dtype) || scale->ndim != 1 || scale->shape[0] != n) {
            char sc[128];
            oi__op_shape_text(scale->ndim, scale->shape, sc, sizeof sc);
            return oi__fail(OI_ERROR_VALIDATION, "matmul_q8: scale is %s %s (want a float [%lld], one per output)",
                            oi_dtype_name(scale->dtype) ? oi_dtype_name(scale->dtype) : "?", sc, (long long)n);
        }
    } else {
        oi__qformat f = oi__quant_format(k);
        if (kdim % OI__Q4_BLOCK != 0)
            return oi__fail(OI_ERROR_VALIDATION, "matmul_q4: K = %lld is not a multiple of the block size 32",
                            (long long)kdim);
        int64_t row_bytes = kdim / OI__Q4_BLOCK * oi__q4_block_bytes(f);
        if (w->dtype != OI_DTYPE_U8 || w->ndim != 2 || w->shape[1] != row_bytes)
            return oi__fail(OI_ERROR_VALIDATION,
                            "matmul_q4: w is %s %s; K = %lld in %s needs u8 [N, %lld] (%lld blocks of %lld bytes)",
                            oi_dtype_name(w->dtype) ? oi_dtype_name(w->dtype) : "?", have, (long long)kdim,
                            oi__q4_format_name(f), (long long)row_bytes, (long long)(kdim / OI__Q4_BLOCK),
                            (long long)oi__q4_block_bytes(f));
        n = w->shape[0];
    }
    out->ndim = x->ndim;
    memcpy(out->shape, x->shape, sizeof out->shape);
    out->shape[x->ndim - 1] = n;
    return OI_OK;
}
