/* scalar.h - the arithmetic of one element, once, for every consumer: the
 * CPU kernels (elementwise.c, compare.c), the Vulkan shaders (eltwise.comp,
 * eltwise_wide.comp: `#include "scalar.h"`, glslc -I kernels) and the code
 * the synthesizer emits (copied verbatim into each emitted folder).
 *
 * Written in the subset that C and GLSL share: function-like macros over
 * operators and the ternary, no library calls, no pointers, no types. The
 * caller picks the value domain (the simulator computes floats in double
 * and rounds to the storage type after every op; GLSL computes in float)
 * and passes ROUND, the rounding it applies after an intermediate product
 * (C: a cast to float; GLSL: nothing). Arguments may be evaluated more
 * than once: pass plain values.
 *
 * Each consumer has a two-line prelude: it defines its ROUND and includes
 * this file (elementwise.c: OI__EW_ROUND; the shaders: OI_S_ROUND, nothing,
 * since their result variable is `precise`).
 *
 * The f32 transcendental functions (exp, tanh, sigmoid, silu, gelu) are
 * functions, not macros, so they live beside this file in scalar_math.h.
 *
 * Adding an op here means: the kernels and shaders call it, the synthesizer's op table
 * (OI__SY_EW_LIST, synth/synth_internal.h) names it, and the emitted code and the simulator agree
 * bit for bit on it. */
#ifndef OI_SCALAR_H
#define OI_SCALAR_H

/* ---- arithmetic (floats) ---- */
#define OI_S_add(a, b) ((a) + (b))
#define OI_S_sub(a, b) ((a) - (b))
#define OI_S_mul(a, b) ((a) * (b))
/* mask: div_by_zero_mask, the result where the divisor is zero */
#define OI_S_div(a, b, mask) ((b) == 0.0 ? (mask) : (a) / (b))
#define OI_S_recip(a, mask) ((a) == 0.0 ? (mask) : 1.0 / (a))
#define OI_S_neg(a) (-(a))
/* 1, -1 or 0 (a NaN gives 0: both comparisons are false) */
#define OI_S_sign(a) ((a) > 0.0 ? 1.0 : (a) < 0.0 ? -1.0 : 0.0)
/* a * b rounded, then + c: two roundings (fma is not fused) */
#define OI_S_fma(a, b, c, ROUND) (ROUND((a) * (b)) + (c))

/* relu: a >= 0 ? a : a * slope (rounded), then clamped to [lo, hi]; a NaN
 * stays NaN (both comparisons are false). */
#define OI_S_relu_raw(a, slope, ROUND) ((a) >= 0.0 ? (a) : ROUND((a) * (slope)))
#define OI_S_clamp_hi(r, hi) ((r) > (hi) ? (hi) : (r))
#define OI_S_clamp_lo(r, lo) ((r) < (lo) ? (lo) : (r))

/* hard_sigmoid: alpha * a (rounded) + beta (rounded), clamped to [0, 1];
 * alpha and beta come in the element's precision; a NaN stays NaN.
 * hard_swish is a * hard_sigmoid(a, 1/6, 0.5) (the caller rounds it). */
#define OI_S_hard_sigmoid(a, alpha, beta, ROUND) \
    OI_S_clamp_lo(OI_S_clamp_hi(ROUND(ROUND((alpha) * (a)) + (beta)), 1.0), 0.0)
#define OI_S_hard_swish(a, sixth, ROUND) ((a) * OI_S_hard_sigmoid(a, sixth, 0.5, ROUND))

/* x is finite: inf - inf and NaN - NaN are NaN, which is not 0 */
#define OI_S_isfinite(a) ((a) - (a) == 0.0)
#define OI_S_is_nan(a) ((a) != (a))
/* +-inf: x - x is NaN (not 0) for inf and NaN, and NaN is not equal to itself */
#define OI_S_is_inf(a) ((a) - (a) != 0.0 && (a) == (a))
#define OI_S_fill_nan_like(a, value) (OI_S_isfinite(a) ? (a) : (value))

/* ---- integers (the caller's width; literals convert to it) ----
 * Signed division never traps: the mask where b is 0, and for b == -1
 * NEG_A, the caller's wrapping -a (C: through unsigned; GLSL: -a), since
 * INT_MIN / -1 overflows. floor_div rounds toward -inf; rem has the sign of
 * a, spelled out since GLSL leaves % undefined for negative operands. */
#define OI_S_div_int(a, b, mask, NEG_A) ((b) == 0 ? (mask) : (b) == -1 ? (NEG_A) : (a) / (b))
/* q = a / b (toward zero) moved down by one where it was rounded up */
#define OI_S_floor_fix(q, a, b) ((q) * (b) != (a) && (((a) < 0) != ((b) < 0)) ? (q) - 1 : (q))
#define OI_S_floor_div_int(a, b, mask, NEG_A) \
    ((b) == 0 ? (mask) : (b) == -1 ? (NEG_A) : OI_S_floor_fix((a) / (b), a, b))
#define OI_S_rem_int(a, b) ((b) == 0 || (b) == -1 ? 0 : (a) - ((a) / (b)) * (b))
#define OI_S_div_uint(a, b, mask) ((b) == 0 ? (mask) : (a) / (b))
#define OI_S_rem_uint(a, b) ((b) == 0 ? 0 : (a) % (b))
/* min and max of integers (floats: OI_S_fmin and OI_S_fmax, below) */
#define OI_S_min_int(a, b) ((a) < (b) ? (a) : (b))
#define OI_S_max_int(a, b) ((a) > (b) ? (a) : (b))
/* clamp of an integer: lo first, then hi (hi wins when lo > hi) */
#define OI_S_clamp_int(a, lo, hi) OI_S_clamp_hi(OI_S_clamp_lo(a, lo), hi)

/* ---- bitwise (integers; on bool 0/1 they are the logical ops) ---- */
#define OI_S_and(a, b) ((a) & (b))
#define OI_S_or(a, b) ((a) | (b))
#define OI_S_xor(a, b) ((a) ^ (b))
#define OI_S_not(a) (~(a))
#define OI_S_not_bool(a) ((a) == 0)

/* where: a where cond is non-zero, else b */
#define OI_S_where(cond, a, b) ((cond) != 0 ? (a) : (b))

/* cast of a float already rounded to an integral value (cast.c's
 * rounding_mode) into an integer type, saturating: NaN gives 0, v at or
 * below lo (the type's least value) gives LO, at or past hi_excl (its
 * largest value + 1) gives HI; CONVERT is the caller's conversion to its
 * 64-bit integer (C: (int64_t) or (uint64_t)). */
#define OI_S_cast_saturate(v, lo, hi_excl, LO, HI, CONVERT) \
    ((v) != (v) ? 0 : (v) <= (lo) ? (LO) : (v) >= (hi_excl) ? (HI) : CONVERT(v))

/* ---- comparisons (any numeric domain) ---- */
#define OI_S_eq(a, b) ((a) == (b))
#define OI_S_ne(a, b) ((a) != (b))
#define OI_S_lt(a, b) ((a) < (b))
#define OI_S_le(a, b) ((a) <= (b))
#define OI_S_gt(a, b) ((a) > (b))
#define OI_S_ge(a, b) ((a) >= (b))

/* ---- reductions: one step of the accumulator ---- */
#define OI_S_sum_step(acc, a) ((acc) + (a))
#define OI_S_prod_step(acc, a) ((acc) * (a))
/* matmul: one multiply-add of a dot product */
#define OI_S_mac(acc, a, b) ((acc) + (a) * (b))

/* rope: a pair (x1, x2) turned by the angle whose cosine is c, sine s
 * (nn.c's rows and the synthesizer's rope kernels, in double) */
#define OI_S_rope_first(x1, x2, c, s) ((x1) * (c) - (x2) * (s))
#define OI_S_rope_second(x1, x2, c, s) ((x2) * (c) + (x1) * (s))

/* ---- C only: row kernels over memory (GLSL has no pointers) ---- */
#if defined(__STDC__) || defined(__cplusplus)
#include <math.h>
#include <stdint.h>
#include <string.h>

/* min and max of floats: a NaN operand is ignored (as libm's fmin and
 * fmax) and of equal operands, -0 and +0, the first is returned. libm's
 * leave that sign open (glibc's return the second), and a compiler may
 * swap the operands of a builtin it knows to be commutative: the same
 * fmin(acc, v) gave -0 in the simulator and +0 in the emitted C. These
 * are spelled out for elementwise.c's min, max and clamp, reduce.c's
 * generic max_axis/min_axis and the emitted C; GLSL's min and max are
 * defined to return the first operand on a tie too (oi_kernel.glsl's
 * oi_fmin and oi_fmax). */
static inline double OI_S_fmin(double a, double b) { return isnan(b) ? a : isnan(a) ? b : b < a ? b : a; }
static inline double OI_S_fmax(double a, double b) { return isnan(b) ? a : isnan(a) ? b : b > a ? b : a; }

/* rope's angle of pair i (of `rot` rotated channels) at position p, in
 * double: nn.c's cos/sin tables and the synthesizer's rope kernels. */
static inline double OI_S_rope_angle(double p, double theta, int64_t i, int64_t rot) {
    return p * pow(theta, -2.0 * (double)i / (double)rot);
}

/* The sum of n contiguous floats as reduce.c's contiguous path sums them:
 * 16 running lanes (they vectorize), then pairwise. */
static inline float OI_S_row_sum_f32(const float *x, int64_t n) {
    float acc[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++)
            acc[j] += x[i + j];
    for (int j = 0; j < 16 && i < n; i++, j++) /* fewer than 16 left; j < 16 tells the compiler */
        acc[j] += x[i];
    for (int w = 8; w >= 1; w /= 2)
        for (int j = 0; j < w; j++)
            acc[j] += acc[j + w];
    return acc[0];
}

/* The max (want_max) or min of n contiguous floats as reduce.c's
 * contiguous path finds it: compared as integers in the floats' order
 * (key = the bits with the magnitude flipped for negatives; score = key,
 * or ~key for the min), 16 lanes at a time; NaN scores the least (never
 * wins), so a row of NaN (or no elements) gives NaN. */
static inline float OI_S_row_ext_f32(const float *x, int64_t n, int want_max) {
    int32_t best[16];
    uint32_t flip = want_max ? 0u : 0xFFFFFFFFu;
    for (int j = 0; j < 16; j++)
        best[j] = INT32_MIN;
    for (int64_t i = 0; i < n; i += 16) {
        int m = n - i < 16 ? (int)(n - i) : 16;
        for (int j = 0; j < m; j++) {
            uint32_t b;
            memcpy(&b, &x[i + j], sizeof b);
            uint32_t nan = 0u - (uint32_t)((b & 0x7FFFFFFFu) > 0x7F800000u);
            uint32_t score = (b ^ ((0u - (b >> 31)) & 0x7FFFFFFFu)) ^ flip;
            int32_t s = (int32_t)((score & ~nan) | (0x80000000u & nan));
            best[j] = s > best[j] ? s : best[j];
        }
    }
    int32_t top = best[0];
    for (int j = 1; j < 16; j++)
        top = best[j] > top ? best[j] : top;
    if (top == INT32_MIN)
        return NAN;
    uint32_t key = (uint32_t)top ^ flip, b = key ^ ((0u - (key >> 31)) & 0x7FFFFFFFu);
    float v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* top_k's order (nn.c's kernel and the emitted code): a key whose unsigned
 * order is the value order (floats: NaN above +inf, -0 == +0), inverted
 * when the smallest are wanted (NaN then ranks last). */
static inline uint64_t OI_S_topk_key_f64(double v, int largest) {
    uint64_t bits, key;
    v = v == 0.0 ? 0.0 : v;
    memcpy(&bits, &v, sizeof bits);
    key = v != v ? UINT64_MAX : (bits >> 63) ? ~bits : bits | ((uint64_t)1 << 63);
    return largest ? key : ~key;
}
static inline uint64_t OI_S_topk_key_i64(int64_t v, int largest) {
    uint64_t key = (uint64_t)v ^ ((uint64_t)1 << 63);
    return largest ? key : ~key;
}
static inline uint64_t OI_S_topk_key_u64(uint64_t v, int largest) { return largest ? v : ~v; }

/* Element a ranks below element b: smaller key, or equal and later. */
static inline int OI_S_topk_worse(const uint64_t *key, int64_t a, int64_t b) {
    return key[a] < key[b] || (key[a] == key[b] && a > b);
}

/* heap[0] is the worst of the kept elements. */
static inline void OI_S_topk_sift_down(const uint64_t *key, int64_t *heap, int64_t size, int64_t i) {
    for (;;) {
        int64_t worst = i, l = 2 * i + 1, r = 2 * i + 2;
        if (l < size && OI_S_topk_worse(key, heap[l], heap[worst]))
            worst = l;
        if (r < size && OI_S_topk_worse(key, heap[r], heap[worst]))
            worst = r;
        if (worst == i)
            return;
        int64_t t = heap[i];
        heap[i] = heap[worst];
        heap[worst] = t;
        i = worst;
    }
}

/* The k best of n keys, best first, into order[0..k): a heap of the k
 * best so far, then popped worst to the back. */
static inline void OI_S_topk_select(const uint64_t *key, int64_t n, int64_t k, int64_t *order) {
    int64_t size = 0;
    for (int64_t j = 0; j < n && k > 0; j++) {
        if (size < k) { /* sift up */
            int64_t i = size++;
            order[i] = j;
            while (i > 0 && OI_S_topk_worse(key, order[i], order[(i - 1) / 2])) {
                int64_t p = (i - 1) / 2, t = order[i];
                order[i] = order[p];
                order[p] = t;
                i = p;
            }
        } else if (OI_S_topk_worse(key, order[0], j)) {
            order[0] = j;
            OI_S_topk_sift_down(key, order, size, 0);
        }
    }
    while (size > 1) {
        int64_t t = order[0];
        order[0] = order[--size];
        order[size] = t;
        OI_S_topk_sift_down(key, order, size, 0);
    }
}
#endif

#endif /* OI_SCALAR_H */
