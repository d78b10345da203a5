/* test_vulkan.c - the Vulkan backend against the CPU reference, op by op
 * (in the manner of ggml's test-backend-ops): every supported op x dtype
 * on random inputs (NaN, inf, -0 and zeros mixed in), shapes with
 * broadcasting, odd sizes, rank 4 and views; outputs compared by NMSE for
 * floats (thresholds below), exactly for integers and bool, NaN/inf
 * agreement everywhere, guard bytes around every host buffer and guard
 * elements around every device view checked. Then residency: a chain of
 * ops is one submission, weights are uploaded once, the second identical
 * step replays its command buffer; and GPU timings are reported.
 * The Khronos validation layer is on when installed (zero messages
 * expected); OPENINFER_VULKAN_VALIDATION=0 turns it off.
 * Exits 77 (skip) when no Vulkan device exists.
 * `test_vulkan perf [n]` prints GPU-timed matmul TFLOP/s and elementwise
 * bandwidth instead (n defaults to 4096 on a GPU, 256 on lavapipe).
 *
 * NMSE = sum((gpu - cpu)^2) / sum(cpu^2) over finite elements, at most:
 *   f32 1e-7 (matmul 5e-4); f16 1e-6; bf16 1e-5 (one rounding step of an
 *   f32 result computed in another order); f64 1e-24. */
#include "../openinfer_impl/internal.h"
#include "../openinfer_impl/simulator.h" /* the simulator's backend context (its counters) */
#include "check.h"

#include <dlfcn.h>
#include <pthread.h>
#include <volk.h>

#include "../vulkan/vk_context.h" /* the backend's limits the tests count against (OI__VK_EARLY_*) */

/* Under LeakSanitizer: lavapipe leaks 128 bytes inside the driver (a bare
 * vkCreateInstance/vkCreateDevice/destroy shows it too). main() loads and
 * pins the driver first so those frames keep a name; only they are waived. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libvulkan_lvp.so\n"; }
#endif

#include <math.h>
#include <stdlib.h>
#include <time.h>

#define GUARD_BYTES 1024
#define GUARD_BYTE 0xA5
#define PAD_ELEMS 3 /* guard elements around each device view (odd: not word aligned) */
static int pad_elems = PAD_ELEMS; /* test_aligned's cases: 16 (views on 16-byte boundaries) */

static const oi__backend *vk = &oi__vulkan_backend;
static double float_range = 2.0; /* run_case's float inputs: uniform in [-float_range, float_range] */
static void *ctx;
static int cases_run, cases_unsupported;

/* ---- random data ---- */
static uint64_t rng_state = 0x9E3779B97F4A7C15u;
static uint64_t rng_next(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double rng_uniform(double lo, double hi) { return lo + (hi - lo) * (double)(rng_next() >> 11) / 9007199254740992.0; }

/* ---- guarded host tensors: storage bytes with GUARD_BYTES on each side,
 * the tensor a view at PAD_ELEMS inside a slightly larger storage ---- */
typedef struct guarded {
    oi__tensor *t;
    unsigned char *block;
} guarded;

static guarded make_tensor(oi_dtype dtype, int ndim, const int64_t *shape, int pad) {
    guarded g;
    int64_t numel = oi__shape_numel(ndim, shape);
    size_t nbytes = (size_t)oi_dtype_nbytes(dtype, (uint64_t)(numel + 2 * pad));
    g.block = (unsigned char *)malloc(nbytes + 2 * GUARD_BYTES);
    memset(g.block, GUARD_BYTE, nbytes + 2 * GUARD_BYTES);
    oi__storage *s = (oi__storage *)calloc(1, sizeof *s);
    s->data = g.block + GUARD_BYTES;
    s->nbytes = nbytes;
    s->refcount = 1;
    g.t = (oi__tensor *)calloc(1, sizeof *g.t);
    g.t->dtype = dtype;
    g.t->ndim = ndim;
    memcpy(g.t->shape, shape, sizeof(int64_t) * (size_t)ndim);
    oi__contiguous_strides(ndim, g.t->shape, g.t->strides);
    g.t->offset = pad;
    g.t->storage = s;
    for (int64_t i = 0; i < numel + 2 * pad; i++) /* pads hold a pattern the op must keep */
        oi__store_bits(dtype, s->data, i, 0x5A5A5A5Au);
    return g;
}

static bool guards_intact(const guarded *g) {
    size_t n = g->t->storage->nbytes;
    for (size_t i = 0; i < GUARD_BYTES; i++)
        if (g->block[i] != GUARD_BYTE || g->block[GUARD_BYTES + n + i] != GUARD_BYTE)
            return false;
    return true;
}

static void free_tensor(guarded *g) {
    if (!g->t)
        return;
    oi__storage *s = g->t->storage;
    if (s->device_owner)
        s->device_owner->release(s->device_ctx, s);
    free(g->block);
    free(s);
    free(g->t);
    g->t = NULL;
}

/* Random values, with specials mixed into float data. */
static void fill_random(guarded *g, bool specials, double lo, double hi) {
    oi__tensor *t = g->t;
    int64_t n = oi__shape_numel(t->ndim, t->shape);
    void *data = t->storage->data;
    for (int64_t i = 0; i < n; i++) {
        int64_t at = t->offset + i;
        if (oi__dtype_is_float(t->dtype)) {
            double v = rng_uniform(lo, hi);
            if (specials) {
                switch (rng_next() % 29) {
                case 0: v = NAN; break;
                case 1: v = INFINITY; break;
                case 2: v = -INFINITY; break;
                case 3: v = -0.0; break;
                case 4: v = 0.0; break;
                case 5: v = floor(v) + 0.5; break; /* a rounding tie */
                default: break;
                }
            }
            oi__store_f64(t->dtype, data, at, v);
        } else if (t->dtype == OI_DTYPE_BOOL) {
            oi__store_u64(t->dtype, data, at, rng_next() & 1u);
        } else if (oi_dtype_bits(t->dtype) == 64 && specials) { /* any 64 bits, zeros and all-ones mixed in */
            uint64_t v = rng_next();
            if (rng_next() % 17 == 0)
                v = rng_next() % 2 ? 0 : ~(uint64_t)0;
            oi__store_bits(t->dtype, data, at, v);
        } else if (oi__dtype_is_signed(t->dtype)) {
            int64_t lo_i, hi_i;
            unsigned bits = oi_dtype_bits(t->dtype);
            bits = bits > 32 ? 32 : bits; /* i64 without specials: small values, as below */
            lo_i = -((int64_t)1 << (bits - 1));
            hi_i = ((int64_t)1 << (bits - 1)) - 1;
            if (!specials) { /* small values: sums and products stay meaningful */
                lo_i = lo_i > -100 ? lo_i : -100;
                hi_i = hi_i < 100 ? hi_i : 100;
            }
            oi__store_i64(t->dtype, data, at, lo_i + (int64_t)(rng_next() % (uint64_t)(hi_i - lo_i + 1)));
            if (specials && rng_next() % 17 == 0)
                oi__store_i64(t->dtype, data, at, rng_next() % 2 ? 0 : -1);
        } else {
            unsigned bits = oi_dtype_bits(t->dtype);
            uint64_t hi_u = bits >= 32 ? 0xFFFFFFFFu : ((uint64_t)1 << bits) - 1u;
            if (!specials && hi_u > 200)
                hi_u = 200;
            oi__store_u64(t->dtype, data, at, rng_next() % (hi_u + 1));
            if (specials && rng_next() % 17 == 0)
                oi__store_u64(t->dtype, data, at, 0);
        }
    }
}

/* ---- comparison ---- */
static double nmse_limit(oi_op op, oi_dtype t) {
    if (t == OI_DTYPE_F64) /* computed in double: an f32 step anywhere would show as ~1e-15 */
        return 1e-24;
    if (t == OI_DTYPE_BF16)
        return 1e-5;
    if (t == OI_DTYPE_F16)
        return op == OI_OP_matmul ? 5e-4 : 1e-6;
    return op == OI_OP_matmul ? 5e-4 : 1e-7;
}

static bool compare_outputs(const char *name, oi_op op, const oi__tensor *cpu, const guarded *gpu) {
    const oi__tensor *g = gpu->t;
    int64_t n = oi__shape_numel(cpu->ndim, cpu->shape);
    bool ok = true;
    if (oi__dtype_is_float(cpu->dtype)) {
        double err = 0, ref = 0;
        for (int64_t i = 0; i < n && ok; i++) {
            double a = oi__load_f64(cpu->dtype, cpu->storage->data, cpu->offset + i);
            double b = oi__load_f64(g->dtype, g->storage->data, g->offset + i);
            if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) {
                bool same = (isnan(a) && isnan(b)) || (a == b);
                CHECK_MSG(same, "%s: element %lld: gpu %g, cpu %g (NaN/inf must agree)", name, (long long)i, b, a);
                ok = same;
                continue;
            }
            err += (a - b) * (a - b);
            ref += a * a;
        }
        double nmse = ref > 0 ? err / ref : err;
        if (ok) {
            CHECK_MSG(nmse <= nmse_limit(op, cpu->dtype), "%s: NMSE %.3g > %.3g", name, nmse, nmse_limit(op, cpu->dtype));
            ok = nmse <= nmse_limit(op, cpu->dtype);
        }
    } else {
        for (int64_t i = 0; i < n && ok; i++) {
            uint64_t a = oi__load_bits(cpu->dtype, cpu->storage->data, cpu->offset + i);
            uint64_t b = oi__load_bits(g->dtype, g->storage->data, g->offset + i);
            CHECK_MSG(a == b, "%s: element %lld: gpu 0x%llx, cpu 0x%llx", name, (long long)i, (unsigned long long)b,
                      (unsigned long long)a);
            ok = a == b;
        }
    }
    /* the elements around the view and the bytes around the buffer */
    for (int64_t i = 0; i < g->offset; i++) {
        bool kept = oi__load_bits(g->dtype, g->storage->data, i) == (0x5A5A5A5Au & (oi_dtype_bits(g->dtype) >= 32 ? 0xFFFFFFFFu : ((1u << oi_dtype_bits(g->dtype)) - 1u)));
        CHECK_MSG(kept, "%s: guard element %lld before the output changed", name, (long long)i);
        ok = ok && kept;
    }
    for (int64_t i = g->offset + n; i < g->offset + n + PAD_ELEMS; i++) {
        bool kept = oi__load_bits(g->dtype, g->storage->data, i) == (0x5A5A5A5Au & (oi_dtype_bits(g->dtype) >= 32 ? 0xFFFFFFFFu : ((1u << oi_dtype_bits(g->dtype)) - 1u)));
        CHECK_MSG(kept, "%s: guard element after the output changed", name);
        ok = ok && kept;
    }
    CHECK_MSG(guards_intact(gpu), "%s: guard bytes around the host buffer changed", name);
    return ok;
}

/* ---- attributes ---- */
typedef struct attrs {
    oi__attr a[8];
    size_t n;
} attrs;

static attrs no_attrs(void) { attrs a; memset(&a, 0, sizeof a); return a; }
static void attr_float(attrs *a, const char *name, double v) {
    oi__attr *x = &a->a[a->n++];
    memset(x, 0, sizeof *x);
    x->name = (char *)name;
    x->kind = OI__ATTR_FLOAT;
    x->f = v;
}
static void attr_int(attrs *a, const char *name, int64_t v) {
    oi__attr *x = &a->a[a->n++];
    memset(x, 0, sizeof *x);
    x->name = (char *)name;
    x->kind = OI__ATTR_INT;
    x->i = v;
}
static void attr_bool(attrs *a, const char *name, bool v) {
    attr_int(a, name, v);
    a->a[a->n - 1].kind = OI__ATTR_BOOL;
}
static void attr_dtype(attrs *a, const char *name, oi_dtype t) {
    oi__attr *x = &a->a[a->n++];
    memset(x, 0, sizeof *x);
    x->name = (char *)name;
    x->kind = OI__ATTR_DTYPE;
    x->dtype = t;
}
static void attr_string(attrs *a, const char *name, const char *s) {
    oi__attr *x = &a->a[a->n++];
    memset(x, 0, sizeof *x);
    x->name = (char *)name;
    x->kind = OI__ATTR_STRING;
    x->s = (char *)s;
}
static void attr_axes(attrs *a, const char *name, int n, const int64_t *axes) {
    oi__attr *x = &a->a[a->n++];
    memset(x, 0, sizeof *x);
    x->name = (char *)name;
    x->kind = OI__ATTR_INT_LIST;
    for (int i = 0; i < n; i++)
        stbds_arrput(x->ints, axes[i]);
}
static void free_attrs(attrs *a) {
    for (size_t i = 0; i < a->n; i++)
        stbds_arrfree(a->a[i].ints);
}
static void reset_attrs(attrs *a) { /* empty again, for the next case's attributes */
    free_attrs(a);
    a->n = 0;
}

/* ---- one case: op on inputs of these dtypes and shapes ---- */
typedef struct shape {
    int ndim;
    int64_t d[OI_MAX_DIMS];
} shape;

static shape S(int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    shape s;
    memset(&s, 0, sizeof s);
    s.ndim = ndim;
    s.d[0] = d0;
    s.d[1] = d1;
    s.d[2] = d2;
    s.d[3] = d3;
    return s;
}

/* The parity harness: targets, run_prepared (the second half of every
 * case), the inputs of the family case lists. */
#include "vulkan_parity.c"

/* Runs the case; `transpose_last` makes input 1 a transposed view (the
 * last two dims swapped in memory). Returns false when the backend says
 * it does not support the case (then nothing is compared). */
static bool run_case(oi_op op, const attrs *at, int n_in, const oi_dtype *dtypes, const shape *shapes, bool specials,
                     bool transpose_last) {
    char name[256];
    int len = snprintf(name, sizeof name, "%s(", oi_op_name(op));
    for (int i = 0; i < n_in; i++) {
        len += snprintf(name + len, sizeof name - (size_t)len, "%s%s[", i ? ", " : "", oi_dtype_name(dtypes[i]));
        for (int d = 0; d < shapes[i].ndim; d++)
            len += snprintf(name + len, sizeof name - (size_t)len, "%s%lld", d ? "," : "", (long long)shapes[i].d[d]);
        len += snprintf(name + len, sizeof name - (size_t)len, "]");
    }
    snprintf(name + len, sizeof name - (size_t)len, ")%s", transpose_last ? " T" : "");

    guarded in[8];
    for (int i = 0; i < n_in; i++) {
        shape s = shapes[i];
        bool t = transpose_last && i == 1 && s.ndim >= 2;
        if (t) { /* allocate [.., b, a], view as [.., a, b] */
            int64_t tmp = s.d[s.ndim - 1];
            s.d[s.ndim - 1] = s.d[s.ndim - 2];
            s.d[s.ndim - 2] = tmp;
        }
        in[i] = make_tensor(dtypes[i], s.ndim, s.d, pad_elems);
        fill_random(&in[i], specials, -float_range, float_range);
        if (t) {
            oi__tensor *v = in[i].t;
            int a = v->ndim - 2, b = v->ndim - 1;
            int64_t tmp = v->shape[a]; v->shape[a] = v->shape[b]; v->shape[b] = tmp;
            tmp = v->strides[a]; v->strides[a] = v->strides[b]; v->strides[b] = tmp;
        }
    }
    bool supported = run_prepared(name, op, at->a, at->n, in, n_in, false, NULL);
    for (int i = 0; i < n_in; i++)
        free_tensor(&in[i]);
    return supported;
}

static const oi_dtype FLOATS[] = {OI_DTYPE_F32, OI_DTYPE_F16, OI_DTYPE_BF16};
static const oi_dtype INTS[] = {OI_DTYPE_I8, OI_DTYPE_I16, OI_DTYPE_I32, OI_DTYPE_U8, OI_DTYPE_U16, OI_DTYPE_U32};
#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* An op over every dtype of a list, on a few shape sets. */
static void each_dtype(oi_op op, const attrs *at, const oi_dtype *types, int n_types, int n_in, const shape *shape_sets,
                       int n_sets, bool specials, bool must_support) {
    for (int t = 0; t < n_types; t++) {
        for (int s = 0; s < n_sets; s++) {
            oi_dtype dts[3] = {types[t], types[t], types[t]};
            if (op == OI_OP_filter && s % 2)
                dts[2] = OI_DTYPE_BOOL;
            bool ok = run_case(op, at, n_in, dts, &shape_sets[s * 3], specials, false);
            CHECK_MSG(ok || !must_support, "%s on %s should run on the GPU: %s", oi_op_name(op), oi_dtype_name(types[t]),
                      oi_last_error());
        }
    }
}

static void test_elementwise(void) {
    /* triples of input shapes: equal odd sizes, broadcasting, rank 4 */
    const shape bin[] = {
        S(2, 5, 7, 0, 0), S(2, 5, 7, 0, 0), S(2, 5, 7, 0, 0),
        S(3, 3, 1, 5, 0), S(2, 4, 5, 0, 0), S(1, 5, 0, 0, 0),
        S(1, 1023, 0, 0, 0), S(1, 1, 0, 0, 0), S(1, 1023, 0, 0, 0),
        S(4, 2, 3, 4, 5), S(3, 3, 1, 5, 0), S(4, 2, 3, 4, 5),
    };
    const shape same[] = {
        S(2, 5, 7, 0, 0), S(2, 5, 7, 0, 0), S(2, 5, 7, 0, 0),
        S(1, 1021, 0, 0, 0), S(1, 1021, 0, 0, 0), S(1, 1021, 0, 0, 0),
        S(4, 2, 3, 4, 5), S(4, 2, 3, 4, 5), S(4, 2, 3, 4, 5),
    };
    attrs none = no_attrs();
    const oi_op arith[] = {OI_OP_add, OI_OP_sub, OI_OP_mul, OI_OP_div, OI_OP_min, OI_OP_max};
    for (int i = 0; i < COUNT(arith); i++) {
        each_dtype(arith[i], &none, FLOATS, COUNT(FLOATS), 2, bin, 4, true, true);
        each_dtype(arith[i], &none, INTS, COUNT(INTS), 2, bin, 2, true, true);
    }
    const oi_dtype bools[] = {OI_DTYPE_BOOL};
    each_dtype(OI_OP_add, &none, bools, 1, 2, bin, 2, true, true);
    each_dtype(OI_OP_mul, &none, bools, 1, 2, bin, 2, true, true);
    each_dtype(OI_OP_floor_div, &none, INTS, COUNT(INTS), 2, bin, 2, true, true);
    each_dtype(OI_OP_rem, &none, INTS, COUNT(INTS), 2, bin, 2, true, true);
    each_dtype(OI_OP_fma, &none, FLOATS, COUNT(FLOATS), 3, same, 3, true, true);
    const oi_op cmp[] = {OI_OP_eq, OI_OP_ne, OI_OP_lt, OI_OP_le, OI_OP_gt, OI_OP_ge};
    for (int i = 0; i < COUNT(cmp); i++) {
        each_dtype(cmp[i], &none, FLOATS, COUNT(FLOATS), 2, bin, 2, true, true);
        each_dtype(cmp[i], &none, INTS, COUNT(INTS), 2, bin, 2, true, true);
    }
    const oi_op bitwise[] = {OI_OP_and, OI_OP_or, OI_OP_xor};
    for (int i = 0; i < COUNT(bitwise); i++) {
        each_dtype(bitwise[i], &none, INTS, COUNT(INTS), 2, bin, 2, true, true);
        each_dtype(bitwise[i], &none, bools, 1, 2, bin, 2, true, true);
    }
    /* unary */
    const oi_op float_unary[] = {OI_OP_neg, OI_OP_abs, OI_OP_recip, OI_OP_floor, OI_OP_ceil, OI_OP_round,
                                 OI_OP_trunc, OI_OP_sign, OI_OP_is_nan, OI_OP_is_inf, OI_OP_is_neg, OI_OP_relu};
    for (int i = 0; i < COUNT(float_unary); i++)
        each_dtype(float_unary[i], &none, FLOATS, COUNT(FLOATS), 1, same, 2, true, true);
    const oi_dtype signed_types[] = {OI_DTYPE_I8, OI_DTYPE_I16, OI_DTYPE_I32};
    const oi_op int_unary[] = {OI_OP_neg, OI_OP_abs, OI_OP_sign, OI_OP_is_neg, OI_OP_relu};
    for (int i = 0; i < COUNT(int_unary); i++)
        each_dtype(int_unary[i], &none, signed_types, COUNT(signed_types), 1, same, 2, true, true);
    each_dtype(OI_OP_not, &none, INTS, COUNT(INTS), 1, same, 1, true, true);
    each_dtype(OI_OP_not, &none, bools, 1, 1, same, 1, true, true);
    each_dtype(OI_OP_popcount, &none, INTS, COUNT(INTS), 1, same, 1, true, true);
    for (int bits = 0; bits <= 40; bits += 5) {
        attrs sh = no_attrs();
        attr_int(&sh, "bits", bits);
        each_dtype(OI_OP_shl, &sh, INTS, COUNT(INTS), 1, same, 1, true, true);
        each_dtype(OI_OP_shr, &sh, INTS, COUNT(INTS), 1, same, 1, true, true);
    }
    /* parameters */
    attrs relu = no_attrs();
    attr_float(&relu, "negative_slope", 0.125);
    attr_float(&relu, "clamp_max", 1.5);
    each_dtype(OI_OP_relu, &relu, FLOATS, COUNT(FLOATS), 1, same, 2, true, true);
    attrs relu_i = no_attrs();
    attr_int(&relu_i, "alpha", 3);
    attr_int(&relu_i, "clamp_min", -50);
    attr_int(&relu_i, "clamp_max", 60);
    each_dtype(OI_OP_relu, &relu_i, signed_types, COUNT(signed_types), 1, same, 2, true, true);
    attrs clamp = no_attrs();
    attr_float(&clamp, "min", -0.5);
    attr_float(&clamp, "max", 0.75);
    each_dtype(OI_OP_clamp, &clamp, FLOATS, COUNT(FLOATS), 1, same, 2, true, true);
    attrs clamp_i = no_attrs();
    attr_int(&clamp_i, "min", 3);
    attr_int(&clamp_i, "max", 90);
    each_dtype(OI_OP_clamp, &clamp_i, INTS, COUNT(INTS), 1, same, 2, true, true);
    attrs hsig = no_attrs();
    attr_float(&hsig, "alpha", 0.3);
    attr_float(&hsig, "beta", 0.4);
    each_dtype(OI_OP_hard_sigmoid, &hsig, FLOATS, COUNT(FLOATS), 1, same, 2, true, true);
    each_dtype(OI_OP_hard_sigmoid, &none, FLOATS, COUNT(FLOATS), 1, same, 2, true, true);
    each_dtype(OI_OP_hard_swish, &none, FLOATS, COUNT(FLOATS), 1, same, 2, true, true);
    attrs mask = no_attrs();
    attr_float(&mask, "div_by_zero_mask", -7.0);
    each_dtype(OI_OP_div, &mask, FLOATS, COUNT(FLOATS), 2, bin, 1, true, true);
    each_dtype(OI_OP_recip, &mask, FLOATS, COUNT(FLOATS), 1, same, 1, true, true);
    attrs mask_i = no_attrs();
    attr_int(&mask_i, "div_by_zero_mask", 77);
    each_dtype(OI_OP_div, &mask_i, INTS, COUNT(INTS), 2, bin, 1, true, true);
    attrs fill = no_attrs();
    attr_float(&fill, "value", 2.71875);
    each_dtype(OI_OP_fill, &fill, FLOATS, COUNT(FLOATS), 1, same, 2, false, true);
    each_dtype(OI_OP_fill_nan_like, &fill, FLOATS, COUNT(FLOATS), 1, same, 2, true, true);
    attrs fill_i = no_attrs();
    attr_int(&fill_i, "value", 1);
    each_dtype(OI_OP_fill, &fill_i, INTS, COUNT(INTS), 1, same, 2, false, true);
    each_dtype(OI_OP_fill, &fill_i, bools, 1, 1, same, 2, false, true);
    const oi_op math[] = {OI_OP_exp, OI_OP_log, OI_OP_sqrt, OI_OP_rsqrt, OI_OP_erf, OI_OP_tanh, OI_OP_sigmoid,
                          OI_OP_gelu, OI_OP_silu, OI_OP_softplus};
    for (int i = 0; i < COUNT(math); i++)
        each_dtype(math[i], &none, FLOATS, COUNT(FLOATS), 1, same, 3, true, true);
    attrs gelu_tanh = no_attrs();
    attr_string(&gelu_tanh, "approximate", "tanh");
    each_dtype(OI_OP_gelu, &gelu_tanh, FLOATS, COUNT(FLOATS), 1, same, 2, true, true);
    each_dtype(OI_OP_pow, &none, FLOATS, COUNT(FLOATS), 2, bin, 4, true, true);
    each_dtype(OI_OP_filter, &none, FLOATS, COUNT(FLOATS), 3, same, 2, true, true);
    each_dtype(OI_OP_filter, &none, INTS, COUNT(INTS), 3, same, 2, true, true);
    free_attrs(&relu);
}

static void test_cast(void) {
    const oi_dtype all[] = {OI_DTYPE_F32, OI_DTYPE_F16, OI_DTYPE_BF16, OI_DTYPE_I8, OI_DTYPE_I16, OI_DTYPE_I32,
                            OI_DTYPE_U8, OI_DTYPE_U16, OI_DTYPE_U32};
    const char *modes[] = {"trunc", "floor", "ceil", "nearest"};
    shape s = S(2, 9, 37, 0, 0);
    for (int from = 0; from < COUNT(all); from++) {
        for (int to = 0; to < COUNT(all); to++) {
            for (int m = 0; m < (oi__dtype_is_float(all[from]) && !oi__dtype_is_float(all[to]) ? 4 : 1); m++) {
                attrs at = no_attrs();
                attr_dtype(&at, "to", all[to]);
                attr_string(&at, "rounding_mode", modes[m]);
                oi__op_sig in_sig, out_sig;
                memset(&in_sig, 0, sizeof in_sig);
                in_sig.dtype = all[from];
                in_sig.ndim = 1;
                in_sig.shape[0] = 1;
                if (oi__op_infer(OI_OP_cast, at.a, at.n, &in_sig, 1, OI_DTYPE_INVALID, &out_sig) != OI_OK)
                    continue; /* not a cast the op allows */
                bool ok = run_case(OI_OP_cast, &at, 1, &all[from], &s, true, false);
                CHECK_MSG(ok, "cast %s -> %s should run on the GPU: %s", oi_dtype_name(all[from]), oi_dtype_name(all[to]),
                          oi_last_error());
            }
        }
    }
    /* float -> int without saturation wraps modulo 2^64: left to the CPU */
    attrs wrap = no_attrs();
    attr_dtype(&wrap, "to", OI_DTYPE_I32);
    attr_bool(&wrap, "saturate", false);
    CHECK(!run_case(OI_OP_cast, &wrap, 1, &all[0], &s, true, false));
}

static void test_reductions(void) {
    const oi_op ops[] = {OI_OP_sum_axis, OI_OP_mean_axis, OI_OP_prod_axis, OI_OP_max_axis, OI_OP_min_axis};
    const int64_t axes_sets[][3] = {{0, 0, 0}, {1, 0, 0}, {0, 2, 0}, {-1, 0, 0}, {0, 1, 2}};
    const int n_axes[] = {1, 1, 2, 1, 3};
    shape s = S(3, 6, 5, 33, 0);
    shape big = S(2, 3, 4099, 0, 0);
    for (int o = 0; o < COUNT(ops); o++) {
        for (int a = 0; a < COUNT(n_axes); a++) {
            for (int keep = 0; keep < 2; keep++) {
                attrs at = no_attrs();
                attr_axes(&at, "axes", n_axes[a], axes_sets[a]);
                attr_bool(&at, "keepdims", keep);
                bool specials = ops[o] == OI_OP_max_axis || ops[o] == OI_OP_min_axis;
                for (int t = 0; t < COUNT(FLOATS); t++)
                    CHECK(run_case(ops[o], &at, 1, &FLOATS[t], &s, specials, false));
                for (int t = 0; t < COUNT(INTS); t++) {
                    bool ok = run_case(ops[o], &at, 1, &INTS[t], &s, false, false);
                    bool wide_mean = ops[o] == OI_OP_mean_axis && oi_dtype_bits(INTS[t]) == 32;
                    CHECK_MSG(ok != wide_mean, "%s %s: GPU support should be %d", oi_op_name(ops[o]),
                              oi_dtype_name(INTS[t]), !wide_mean);
                }
                free_attrs(&at);
            }
        }
        attrs at = no_attrs();
        int64_t last = -1;
        attr_axes(&at, "axes", 1, &last);
        CHECK(run_case(ops[o], &at, 1, &FLOATS[0], &big, false, false)); /* a long reduction */
        free_attrs(&at);
    }
    const oi_op args[] = {OI_OP_argmax_axis, OI_OP_argmin_axis};
    for (int o = 0; o < 2; o++) {
        for (int axis = -1; axis < 3; axis++) {
            for (int first = 0; first < 2; first++) {
                attrs at = no_attrs();
                attr_int(&at, "axis", axis);
                attr_bool(&at, "select_first", first);
                attr_bool(&at, "keepdims", axis == 1);
                for (int t = 0; t < COUNT(FLOATS); t++)
                    CHECK(run_case(args[o], &at, 1, &FLOATS[t], &s, true, false));
                for (int t = 0; t < COUNT(INTS); t++)
                    CHECK(run_case(args[o], &at, 1, &INTS[t], &s, true, false)); /* full range: many ties in i8 */
            }
        }
    }
    attrs none = no_attrs();
    for (int t = 0; t < COUNT(FLOATS); t++) {
        CHECK(run_case(OI_OP_is_finite, &none, 1, &FLOATS[t], &s, true, false));
        CHECK(run_case(OI_OP_is_finite, &none, 1, &FLOATS[t], &s, false, false));
    }
}

static void test_matmul(void) {
    const shape sets[] = {
        S(2, 7, 13, 0, 0), S(2, 13, 9, 0, 0),
        S(2, 64, 64, 0, 0), S(2, 64, 64, 0, 0),
        S(4, 2, 3, 17, 19), S(2, 19, 5, 0, 0),
        S(3, 1, 65, 70, 0), S(3, 2, 70, 33, 0),
        S(2, 1, 1, 0, 0), S(2, 1, 1, 0, 0),
        S(2, 300, 70, 0, 0), S(2, 70, 260, 0, 0),       /* the 128x128-block kernel */
        S(3, 2, 256, 33, 0), S(3, 1, 33, 257, 0),
        /* sizes for the tensor-core f16 kernel (K, N multiples of 8; partial 128x128
         * blocks, a partial last k step): here at odd offsets, so on the tiled
         * kernels; test_aligned runs them where the tensor-core kernel takes them */
        S(2, 136, 72, 0, 0), S(2, 72, 200, 0, 0),
        S(3, 2, 130, 48, 0), S(3, 2, 48, 256, 0),
    };
    attrs none = no_attrs();
    const oi_dtype types[] = {OI_DTYPE_F32, OI_DTYPE_F16, OI_DTYPE_BF16, OI_DTYPE_I32, OI_DTYPE_I8, OI_DTYPE_U8,
                              OI_DTYPE_U16, OI_DTYPE_BOOL};
    for (int t = 0; t < COUNT(types); t++) {
        for (int s = 0; s < COUNT(sets) / 2; s++) {
            oi_dtype dts[2] = {types[t], types[t]};
            CHECK_MSG(run_case(OI_OP_matmul, &none, 2, dts, &sets[2 * s], false, false), "matmul %s",
                      oi_dtype_name(types[t]));
            if (s == 0 || s == 2 || s >= 7)
                CHECK(run_case(OI_OP_matmul, &none, 2, dts, &sets[2 * s], false, true)); /* transposed b */
        }
    }
    /* a transposed input to an elementwise op */
    const shape tr[] = {S(2, 6, 9, 0, 0), S(2, 6, 9, 0, 0)};
    const oi_dtype f[2] = {OI_DTYPE_F32, OI_DTYPE_F32};
    CHECK(run_case(OI_OP_add, &none, 2, f, tr, true, true));
}

static void test_rownorm(void) {
    attrs none = no_attrs();
    const shape rows[] = {S(2, 6, 33, 0, 0), S(3, 2, 3, 65, 0), S(1, 1000, 0, 0, 0), S(3, 4, 9, 1, 0)};
    const oi_op soft[] = {OI_OP_softmax, OI_OP_log_softmax};
    for (int o = 0; o < 2; o++)
        for (int t = 0; t < COUNT(FLOATS); t++)
            for (int s = 0; s < COUNT(rows); s++) {
                attrs at = no_attrs();
                attr_int(&at, "axis", s == 3 ? 1 : -1); /* [4, 9, 1] along 9: the last real axis */
                CHECK(run_case(soft[o], s == 3 ? &at : &none, 1, &FLOATS[t], &rows[s], s == 0, false));
            }
    /* along an inner axis: rows written in scratch, cast back into the axis's place */
    for (int axis = 0; axis < 3; axis++)
        for (int o = 0; o < 2; o++)
            for (int t = 0; t < COUNT(FLOATS); t++) {
                attrs at = no_attrs();
                attr_int(&at, "axis", axis);
                CHECK_MSG(run_case(soft[o], &at, 1, &FLOATS[t], &rows[1], axis == 1, axis == 0), "%s %s axis %d",
                          oi_op_name(soft[o]), oi_dtype_name(FLOATS[t]), axis);
            }
    /* norms over the last dim, and over the last two with a broadcast scale */
    const shape norm_last[] = {S(2, 6, 33, 0, 0), S(1, 33, 0, 0, 0), S(1, 33, 0, 0, 0)};
    const shape norm_two[] = {S(3, 2, 3, 65, 0), S(1, 65, 0, 0, 0), S(2, 3, 65, 0, 0)};
    attrs eps = no_attrs();
    attr_float(&eps, "epsilon", 1e-3);
    attrs axis1 = no_attrs();
    attr_int(&axis1, "axis", 1);
    for (int t = 0; t < COUNT(FLOATS); t++) {
        oi_dtype d3[3] = {FLOATS[t], FLOATS[t], FLOATS[t]};
        CHECK(run_case(OI_OP_layer_norm, &none, 3, d3, norm_last, false, false));
        CHECK(run_case(OI_OP_layer_norm, &eps, 2, d3, norm_last, false, false)); /* no bias */
        CHECK(run_case(OI_OP_layer_norm, &axis1, 3, d3, norm_two, false, false));
        CHECK(run_case(OI_OP_rms_norm, &eps, 2, d3, norm_last, false, false));
        CHECK(run_case(OI_OP_rms_norm, &axis1, 2, d3, norm_two, false, false));
    }
}

/* Views on 16-byte boundaries (a pad of 16 elements): the shaders' vector
 * paths, which the odd pad of every other case keeps off: eltwise's
 * contiguous path (each element width), reduce's and softmax's vec_rows,
 * and on a device with coopmat(f16 matmul) the tensor-core f16 matmul. */
static void test_aligned(void) {
    pad_elems = 16;
    attrs none = no_attrs();
    const shape flat[] = {S(2, 4, 16, 0, 0), S(2, 4, 16, 0, 0), S(2, 4, 16, 0, 0)};
    const oi_dtype bools[] = {OI_DTYPE_BOOL};
    each_dtype(OI_OP_add, &none, FLOATS, COUNT(FLOATS), 2, flat, 1, true, true);
    each_dtype(OI_OP_add, &none, INTS, COUNT(INTS), 2, flat, 1, true, true);
    each_dtype(OI_OP_mul, &none, bools, 1, 2, flat, 1, true, true);
    each_dtype(OI_OP_fma, &none, FLOATS, COUNT(FLOATS), 3, flat, 1, true, true);
    each_dtype(OI_OP_gelu, &none, FLOATS, COUNT(FLOATS), 1, flat, 1, true, true);
    each_dtype(OI_OP_not, &none, INTS, COUNT(INTS), 1, flat, 1, true, true);
    each_dtype(OI_OP_filter, &none, INTS, COUNT(INTS), 3, flat, 1, true, true);
    attrs fill = no_attrs();
    attr_int(&fill, "value", 1);
    each_dtype(OI_OP_fill, &fill, INTS, COUNT(INTS), 1, flat, 1, false, true);
    free_attrs(&fill);
    /* casts between dtypes of one width (a copy is f32 -> f32) */
    const oi_dtype casts[][2] = {{OI_DTYPE_F32, OI_DTYPE_F32}, {OI_DTYPE_F32, OI_DTYPE_I32}, {OI_DTYPE_U32, OI_DTYPE_F32},
                                 {OI_DTYPE_F16, OI_DTYPE_BF16}, {OI_DTYPE_I16, OI_DTYPE_F16}, {OI_DTYPE_U8, OI_DTYPE_U8}};
    for (int c = 0; c < COUNT(casts); c++) {
        attrs at = no_attrs();
        attr_dtype(&at, "to", casts[c][1]);
        CHECK_MSG(run_case(OI_OP_cast, &at, 1, &casts[c][0], flat, true, false), "aligned cast %s -> %s",
                  oi_dtype_name(casts[c][0]), oi_dtype_name(casts[c][1]));
        free_attrs(&at);
    }
    /* rows: short ones (an odd count of uvec4), long ones (two loads in flight), one row with a tail */
    const shape rows[] = {S(2, 3, 68, 0, 0), S(2, 2, 4096, 0, 0), S(1, 1001, 0, 0, 0)};
    const oi_op reduce_ops[] = {OI_OP_sum_axis, OI_OP_mean_axis, OI_OP_max_axis, OI_OP_min_axis, OI_OP_prod_axis};
    const oi_dtype wide[] = {OI_DTYPE_F32, OI_DTYPE_I32, OI_DTYPE_U32};
    attrs last = no_attrs();
    int64_t minus_one = -1;
    attr_axes(&last, "axes", 1, &minus_one);
    for (int o = 0; o < COUNT(reduce_ops); o++)
        for (int t = 0; t < COUNT(wide); t++)
            for (int r = 0; r < COUNT(rows); r++) {
                if (reduce_ops[o] == OI_OP_mean_axis && wide[t] != OI_DTYPE_F32)
                    continue; /* 32-bit integer means stay on the CPU */
                CHECK_MSG(run_case(reduce_ops[o], &last, 1, &wide[t], &rows[r], reduce_ops[o] != OI_OP_prod_axis, false),
                          "aligned %s %s rows of %lld", oi_op_name(reduce_ops[o]), oi_dtype_name(wide[t]),
                          (long long)rows[r].d[rows[r].ndim - 1]);
            }
    free_attrs(&last);
    /* softmax rows held in registers (up to 4096) and longer ones read three times */
    const oi_op soft[] = {OI_OP_softmax, OI_OP_log_softmax};
    const shape soft_rows[] = {rows[0], rows[1], S(2, 2, 4100, 0, 0)};
    for (int o = 0; o < COUNT(soft); o++)
        for (int r = 0; r < COUNT(soft_rows); r++)
            CHECK(run_case(soft[o], &none, 1, &FLOATS[0], &soft_rows[r], true, false));
    /* f16 matmul: aligned sizes, partial blocks and k steps (in edge and in whole blocks),
     * batched; B plain and transposed */
    const shape mm[] = {S(2, 64, 64, 0, 0), S(2, 64, 64, 0, 0),  S(2, 136, 72, 0, 0), S(2, 72, 200, 0, 0),
                        S(3, 2, 130, 48, 0), S(3, 2, 48, 256, 0), S(2, 256, 256, 0, 0), S(2, 256, 264, 0, 0),
                        S(2, 128, 40, 0, 0), S(2, 40, 256, 0, 0) /* one whole block, a last k step of 8 */};
    const oi_dtype f16[2] = {OI_DTYPE_F16, OI_DTYPE_F16};
    for (int m = 0; m < COUNT(mm) / 2; m++)
        for (int t = 0; t < 2; t++)
            CHECK_MSG(run_case(OI_OP_matmul, &none, 2, f16, &mm[2 * m], false, t), "aligned f16 matmul %d%s", m,
                      t ? " (B transposed)" : "");
    pad_elems = PAD_ELEMS;
}

static bool is_wide_dtype(oi_dtype t) { return oi_dtype_bits(t) == 64; }

/* 64-bit data (i64, u64, f64) in eltwise_wide.comp, where the device has
 * shaderInt64 and shaderFloat64 (lavapipe and the NVIDIA driver do): the
 * elementwise ops with full-range integers, casts to and from every dtype
 * (floats out to +-1e19, past the i64 range), fill and filter; the f64
 * transcendental functions stay on the CPU everywhere. */
static void test_wide(void) {
    bool wide = oi__vulkan_has_wide(ctx);
    const shape bin[] = {
        S(2, 5, 7, 0, 0), S(2, 5, 7, 0, 0), S(2, 5, 7, 0, 0),
        S(3, 3, 1, 5, 0), S(2, 4, 5, 0, 0), S(1, 5, 0, 0, 0),
        S(4, 2, 3, 4, 5), S(3, 3, 1, 5, 0), S(4, 2, 3, 4, 5),
    };
    const shape same[] = {S(2, 5, 7, 0, 0), S(2, 5, 7, 0, 0), S(2, 5, 7, 0, 0),
                          S(1, 1021, 0, 0, 0), S(1, 1021, 0, 0, 0), S(1, 1021, 0, 0, 0)};
    const oi_dtype f64[] = {OI_DTYPE_F64}, ints[] = {OI_DTYPE_I64, OI_DTYPE_U64}, all[] = {OI_DTYPE_F64, OI_DTYPE_I64,
                                                                                     OI_DTYPE_U64};
    attrs none = no_attrs();
    const oi_op binary[] = {OI_OP_add, OI_OP_sub, OI_OP_mul, OI_OP_div, OI_OP_min, OI_OP_max, OI_OP_eq,
                            OI_OP_ne,  OI_OP_lt,  OI_OP_le,  OI_OP_gt,  OI_OP_ge};
    for (int i = 0; i < COUNT(binary); i++)
        each_dtype(binary[i], &none, all, COUNT(all), 2, bin, 3, true, wide);
    const oi_op int_binary[] = {OI_OP_floor_div, OI_OP_rem, OI_OP_and, OI_OP_or, OI_OP_xor};
    for (int i = 0; i < COUNT(int_binary); i++)
        each_dtype(int_binary[i], &none, ints, COUNT(ints), 2, bin, 3, true, wide);
    each_dtype(OI_OP_fma, &none, f64, 1, 3, same, 2, true, wide);
    const oi_op float_unary[] = {OI_OP_neg, OI_OP_abs, OI_OP_recip, OI_OP_floor, OI_OP_ceil, OI_OP_round, OI_OP_trunc,
                                 OI_OP_sign, OI_OP_is_nan, OI_OP_is_inf, OI_OP_is_neg, OI_OP_relu, OI_OP_sqrt, OI_OP_rsqrt};
    for (int i = 0; i < COUNT(float_unary); i++)
        each_dtype(float_unary[i], &none, f64, 1, 1, same, 2, true, wide);
    const oi_dtype i64[] = {OI_DTYPE_I64};
    const oi_op int_unary[] = {OI_OP_neg, OI_OP_abs, OI_OP_sign, OI_OP_is_neg, OI_OP_relu};
    for (int i = 0; i < COUNT(int_unary); i++)
        each_dtype(int_unary[i], &none, i64, 1, 1, same, 2, true, wide);
    each_dtype(OI_OP_not, &none, ints, COUNT(ints), 1, same, 1, true, wide);
    each_dtype(OI_OP_popcount, &none, ints, COUNT(ints), 1, same, 1, true, wide);
    for (int bits = 0; bits <= 70; bits += 7) {
        attrs sh = no_attrs();
        attr_int(&sh, "bits", bits);
        each_dtype(OI_OP_shl, &sh, ints, COUNT(ints), 1, same, 1, true, wide);
        each_dtype(OI_OP_shr, &sh, ints, COUNT(ints), 1, same, 1, true, wide);
    }
    /* parameters */
    attrs relu = no_attrs();
    attr_float(&relu, "negative_slope", 0.125);
    attr_float(&relu, "clamp_max", 1.5);
    each_dtype(OI_OP_relu, &relu, f64, 1, 1, same, 2, true, wide);
    attrs relu_i = no_attrs();
    attr_int(&relu_i, "negative_slope", 3);
    attr_int(&relu_i, "clamp_min", -((int64_t)1 << 40));
    attr_int(&relu_i, "clamp_max", (int64_t)1 << 50);
    each_dtype(OI_OP_relu, &relu_i, i64, 1, 1, same, 2, true, wide);
    attrs clamp = no_attrs();
    attr_float(&clamp, "min", -0.5);
    attr_float(&clamp, "max", 0.75);
    each_dtype(OI_OP_clamp, &clamp, f64, 1, 1, same, 2, true, wide);
    attrs clamp_i = no_attrs();
    attr_int(&clamp_i, "min", -((int64_t)1 << 60));
    attr_int(&clamp_i, "max", (int64_t)1 << 61);
    each_dtype(OI_OP_clamp, &clamp_i, ints, COUNT(ints), 1, same, 2, true, wide);
    attrs mask = no_attrs();
    attr_float(&mask, "div_by_zero_mask", -7.0);
    each_dtype(OI_OP_div, &mask, f64, 1, 2, bin, 1, true, wide);
    each_dtype(OI_OP_recip, &mask, f64, 1, 1, same, 1, true, wide);
    const oi_dtype u64[] = {OI_DTYPE_U64};
    attrs mask_i = no_attrs();
    attr_int(&mask_i, "div_by_zero_mask", -77);
    each_dtype(OI_OP_div, &mask_i, i64, 1, 2, bin, 1, true, wide);
    attrs mask_u = no_attrs();
    attr_int(&mask_u, "div_by_zero_mask", (int64_t)1 << 62);
    each_dtype(OI_OP_div, &mask_u, u64, 1, 2, bin, 1, true, wide);
    attrs fill = no_attrs();
    attr_float(&fill, "value", 2.71875);
    each_dtype(OI_OP_fill, &fill, f64, 1, 1, same, 2, false, wide);
    each_dtype(OI_OP_fill_nan_like, &fill, f64, 1, 1, same, 2, true, wide);
    attrs fill_i = no_attrs();
    attr_int(&fill_i, "value", -((int64_t)1 << 62) - 5);
    each_dtype(OI_OP_fill, &fill_i, i64, 1, 1, same, 2, false, wide);
    attrs fill_u = no_attrs();
    attr_int(&fill_u, "value", ((int64_t)1 << 62) + 5);
    each_dtype(OI_OP_fill, &fill_u, u64, 1, 1, same, 2, false, wide);
    each_dtype(OI_OP_filter, &none, all, COUNT(all), 3, same, 2, true, wide); /* odd sets: a bool condition */
    /* no double exp, log, ... in GLSL: these run on the CPU */
    const oi_op math[] = {OI_OP_exp, OI_OP_log, OI_OP_erf, OI_OP_tanh, OI_OP_sigmoid, OI_OP_gelu, OI_OP_silu,
                          OI_OP_softplus};
    for (int i = 0; i < COUNT(math); i++)
        CHECK_MSG(!run_case(math[i], &none, 1, f64, same, true, false), "%s f64 should run on the CPU", oi_op_name(math[i]));
    const oi_dtype f64_pair[] = {OI_DTYPE_F64, OI_DTYPE_F64};
    CHECK(!run_case(OI_OP_pow, &none, 2, f64_pair, bin, true, false));
    free_attrs(&relu);

    /* reductions in reduce_wide: 64-bit sums (an i64 mean too), products, max/min, arg max/min */
    const oi_op reduce_ops[] = {OI_OP_sum_axis, OI_OP_mean_axis, OI_OP_prod_axis, OI_OP_max_axis, OI_OP_min_axis};
    const int64_t axes_sets[][2] = {{0, 0}, {-1, 0}, {0, 2}};
    const int n_axes[] = {1, 1, 2};
    const shape rs = S(3, 6, 5, 33, 0), long_rows = S(2, 3, 4099, 0, 0);
    for (int o = 0; o < COUNT(reduce_ops); o++) {
        for (int a = 0; a < COUNT(n_axes); a++) {
            attrs at = no_attrs();
            attr_axes(&at, "axes", n_axes[a], axes_sets[a]);
            attr_bool(&at, "keepdims", a == 1);
            for (int t = 0; t < COUNT(all); t++) {
                bool specials = reduce_ops[o] != OI_OP_prod_axis || all[t] != OI_DTYPE_F64; /* products of ~100 floats overflow */
                CHECK_MSG(run_case(reduce_ops[o], &at, 1, &all[t], a == 1 ? &long_rows : &rs, specials, false) == wide,
                          "%s %s: GPU support should be %d", oi_op_name(reduce_ops[o]), oi_dtype_name(all[t]), wide);
            }
            free_attrs(&at);
        }
    }
    const oi_op args[] = {OI_OP_argmax_axis, OI_OP_argmin_axis};
    for (int o = 0; o < 2; o++)
        for (int first = 0; first < 2; first++)
            for (int t = 0; t < COUNT(all); t++) {
                attrs at = no_attrs();
                attr_int(&at, "axis", 1);
                attr_bool(&at, "select_first", first);
                CHECK(run_case(args[o], &at, 1, &all[t], &rs, true, false) == wide);
            }
    CHECK(run_case(OI_OP_is_finite, &none, 1, f64, &rs, true, false) == wide);

    /* casts with a 64-bit side, every rounding mode from floats */
    const oi_dtype types[] = {OI_DTYPE_F64, OI_DTYPE_I64, OI_DTYPE_U64, OI_DTYPE_F32, OI_DTYPE_F16, OI_DTYPE_BF16,
                              OI_DTYPE_I8,  OI_DTYPE_I16, OI_DTYPE_I32, OI_DTYPE_U8,  OI_DTYPE_U16, OI_DTYPE_U32,
                              OI_DTYPE_BOOL};
    const char *modes[] = {"trunc", "floor", "ceil", "nearest"};
    shape s = S(2, 9, 37, 0, 0);
    for (int from = 0; from < COUNT(types); from++) {
        for (int to = 0; to < COUNT(types); to++) {
            if (!is_wide_dtype(types[from]) && !is_wide_dtype(types[to]))
                continue;
            bool float_to_int = oi__dtype_is_float(types[from]) && !oi__dtype_is_float(types[to]);
            for (int m = 0; m < (float_to_int ? 4 : 1); m++) {
                for (int range = 0; range < (oi__dtype_is_float(types[from]) ? 2 : 1); range++) {
                    attrs at = no_attrs();
                    attr_dtype(&at, "to", types[to]);
                    attr_string(&at, "rounding_mode", modes[m]);
                    oi__op_sig in_sig, out_sig;
                    memset(&in_sig, 0, sizeof in_sig);
                    in_sig.dtype = types[from];
                    in_sig.ndim = 1;
                    in_sig.shape[0] = 1;
                    if (oi__op_infer(OI_OP_cast, at.a, at.n, &in_sig, 1, OI_DTYPE_INVALID, &out_sig) != OI_OK)
                        continue; /* not a cast the op allows */
                    float_range = range ? 1e19 : 2.0;
                    bool ok = run_case(OI_OP_cast, &at, 1, &types[from], &s, true, false);
                    float_range = 2.0;
                    CHECK_MSG(ok == wide, "cast %s -> %s: GPU support should be %d", oi_dtype_name(types[from]),
                              oi_dtype_name(types[to]), wide);
                }
            }
        }
    }
}

/* The other op families' case lists, one file each (like vulkan/vk_ops_<family>.c),
 * and their rows: run by the suites of the same names. */
#include "vulkan_parity_shape.c"
#include "vulkan_parity_nn.c"
#include "vulkan_parity_conv.c"

static const parity_family parity_families[] = {
    {"shape", shape_cases, false, NULL},
    {"nn", nn_cases, true, nn_more_checks},
    {"conv", conv_cases, false, NULL},
};

/* Things the backend must decline (the executor then runs them on the CPU). */

static void test_declines(void) {
    attrs none = no_attrs();
    const shape s[] = {S(1, 8, 0, 0, 0), S(1, 8, 0, 0, 0)};
    /* 64-bit data: only elementwise ops, reductions and data movement have shaders */
    const oi_dtype f64[2] = {OI_DTYPE_F64, OI_DTYPE_F64}, i64[2] = {OI_DTYPE_I64, OI_DTYPE_I64};
    const shape mm[] = {S(2, 3, 4, 0, 0), S(2, 4, 5, 0, 0)};
    CHECK(!run_case(OI_OP_matmul, &none, 2, f64, mm, false, false));
    CHECK(!run_case(OI_OP_matmul, &none, 2, i64, mm, false, false));
    CHECK(!run_case(OI_OP_softmax, &none, 1, f64, s, false, false));
    CHECK(!run_case(OI_OP_log_softmax, &none, 1, f64, s, false, false));
    attrs acc = no_attrs();
    attr_dtype(&acc, "acc", OI_DTYPE_I32);
    const oi_dtype i8[2] = {OI_DTYPE_I8, OI_DTYPE_I8};
    CHECK(!run_case(OI_OP_add, &acc, 2, i8, s, false, false));
    /* 7 dims that cannot merge: more than the shader walks */
    const shape s7[] = {{7, {2, 1, 2, 1, 2, 1, 2}}, {7, {1, 2, 1, 2, 1, 2, 1}}};
    const oi_dtype f32[2] = {OI_DTYPE_F32, OI_DTYPE_F32};
    CHECK(!run_case(OI_OP_add, &none, 2, f32, s7, false, false));
}

/* ---- residency: one submission per chain, weights once, replay ---- */
static void fill_f32(oi__tensor *t, float base) {
    int64_t n = oi__shape_numel(t->ndim, t->shape);
    for (int64_t i = 0; i < n; i++)
        ((float *)t->storage->data)[t->offset + i] = base + (float)(i % 7) * 0.25f;
}

static void test_residency(void) {
    const oi__vulkan_stats *st = oi__vulkan_get_stats(ctx);
    int64_t shape[2] = {16, 16};
    static float weights[256];
    for (int i = 0; i < 256; i++)
        weights[i] = (float)(i % 13) * 0.125f - 0.5f;
    attrs none = no_attrs();
    oi__tensor *x = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    oi__tensor *h = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    oi__tensor *y = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    oi__tensor *ref_h = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    oi__tensor *ref_y = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    uint64_t weight_uploads = st->weight_uploads, replays = st->replays;
    for (int step = 0; step < 3; step++) {
        /* the executor wraps model bytes afresh each step: same bytes, one upload */
        oi__tensor *w = oi__tensor_wrap(OI_DTYPE_F32, 2, shape, weights);
        vk->release(ctx, x->storage); /* the host wrote x (an insert) */
        fill_f32(x, (float)step);
        uint64_t submissions = st->submissions;
        const oi__tensor *mm[2] = {x, w};
        CHECK_OK(vk->run_op(ctx, OI_OP_matmul, NULL, 0, mm, 2, h));
        const oi__tensor *ad[2] = {h, x};
        CHECK_OK(vk->run_op(ctx, OI_OP_add, NULL, 0, ad, 2, h)); /* in place */
        const oi__tensor *re[1] = {h};
        CHECK_OK(vk->run_op(ctx, OI_OP_relu, none.a, 0, re, 1, y));
        CHECK_EQ_INT(st->submissions, submissions); /* nothing submitted yet: the ops are recorded */
        CHECK_OK(vk->flush(ctx));
        CHECK_EQ_INT(st->submissions, submissions + 1); /* the chain is one submission */
        CHECK(y->storage->host_stale);
        CHECK_OK(vk->to_host(ctx, y->storage));
        CHECK(!y->storage->host_stale);
        CHECK_OK(oi__op_run_cpu(OI_OP_matmul, NULL, 0, mm, 2, ref_h));
        const oi__tensor *ad_ref[2] = {ref_h, x};
        CHECK_OK(oi__op_run_cpu(OI_OP_add, NULL, 0, ad_ref, 2, ref_h));
        const oi__tensor *re_ref[1] = {ref_h};
        CHECK_OK(oi__op_run_cpu(OI_OP_relu, NULL, 0, re_ref, 1, ref_y));
        float max_diff = 0;
        for (int i = 0; i < 256; i++) {
            float d = fabsf(((float *)y->storage->data)[i] - ((float *)ref_y->storage->data)[i]);
            max_diff = d > max_diff ? d : max_diff;
        }
        CHECK_MSG(max_diff < 1e-4f, "step %d: chain differs from the CPU by %g", step, (double)max_diff);
        oi__tensor_free(w); /* releases: the weight's device copy stays */
        CHECK_OK(vk->flush(ctx)); /* the readback was its own submission; this ends the step */
    }
    CHECK_EQ_INT(st->weight_uploads, weight_uploads + 1);
    CHECK_MSG(st->replays >= replays + 1, "steps 2 and 3 are identical: the third should replay (replays %llu)",
              (unsigned long long)st->replays);
    oi__vulkan_op_time times[64];
    size_t n = oi__vulkan_take_times(ctx, times, 64);
    CHECK(n > 0);
    double total = 0;
    for (size_t i = 0; i < n; i++)
        total += times[i].micros;
    printf("test_vulkan: %zu timed ops, %.1f us of GPU time in the last ones\n", n, total);
    oi__tensor_free(x);
    oi__tensor_free(h);
    oi__tensor_free(y);
    oi__tensor_free(ref_h);
    oi__tensor_free(ref_y);
}

/* ---- early submission: a long step reaches the GPU in parts ---- */
#define EARLY_OPS 40

/* The chain b = ((b + x) - w) ... EARLY_OPS ops, on the backend or the CPU;
 * `probe` >= 0: a mid-chain value read back after that op (a wait in the
 * middle of a step) and its storage's device copy dropped. */
static void early_chain(bool gpu, oi__tensor *x, oi__tensor *w, oi__tensor *a, oi__tensor *b, int probe) {
    for (int i = 0; i < EARLY_OPS; i++) {
        bool add = i % 2 == 0;
        const oi__tensor *ops[2] = {add ? b : a, add ? x : w};
        oi__tensor *to = add ? a : b;
        oi_op op = add ? OI_OP_add : OI_OP_sub;
        CHECK_OK(gpu ? vk->run_op(ctx, op, NULL, 0, ops, 2, to) : oi__op_run_cpu(op, NULL, 0, ops, 2, to));
        if (gpu && i == probe)
            CHECK_OK(vk->to_host(ctx, to->storage));
    }
}

/* Two early parts with the same commands (OI__VK_EARLY_MIN independent adds, then
 * the same again): the second must not reuse the first's command buffer
 * while that is in flight, and the next step replays both. */
static void test_early_twins(bool early_on) {
    const oi__vulkan_stats *st = oi__vulkan_get_stats(ctx);
    int64_t shape[3] = {3, 7, 5}; /* a shape no other test records */
    oi__tensor *x = oi__tensor_new(OI_DTYPE_F32, 3, shape), *outs[OI__VK_EARLY_MIN];
    fill_f32(x, 1.0f);
    for (int i = 0; i < OI__VK_EARLY_MIN; i++)
        outs[i] = oi__tensor_new(OI_DTYPE_F32, 3, shape);
    const oi__tensor *in[2] = {x, x};
    CHECK_OK(vk->run_op(ctx, OI_OP_add, NULL, 0, in, 2, outs[0])); /* x resident: no upload in the parts */
    CHECK_OK(vk->flush(ctx));
    for (int step = 0; step < 2; step++) {
        uint64_t submissions = st->submissions, replays = st->replays;
        for (int i = 0; i < 2 * OI__VK_EARLY_MIN; i++)
            CHECK_OK(vk->run_op(ctx, OI_OP_add, NULL, 0, in, 2, outs[i % OI__VK_EARLY_MIN]));
        CHECK_OK(vk->flush(ctx));
        if (early_on) {
            CHECK_EQ_INT(st->submissions - submissions, 2);
            CHECK_EQ_INT(st->replays - replays, step == 0 ? 0 : 2);
        }
        CHECK_OK(vk->to_host(ctx, outs[OI__VK_EARLY_MIN - 1]->storage));
        CHECK(((float *)outs[OI__VK_EARLY_MIN - 1]->storage->data)[6] == 2.0f * ((float *)x->storage->data)[6]);
    }
    oi__tensor_free(x);
    for (int i = 0; i < OI__VK_EARLY_MIN; i++)
        oi__tensor_free(outs[i]);
}

static void test_early_submission(void) {
    const char *env = getenv("OPENINFER_VULKAN_EARLY_SUBMIT");
    bool early_on = !(env && strcmp(env, "0") == 0);
    test_early_twins(early_on);
    const oi__vulkan_stats *st = oi__vulkan_get_stats(ctx);
    int64_t shape[2] = {64, 64};
    oi__tensor *x = oi__tensor_new(OI_DTYPE_F32, 2, shape), *w = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    oi__tensor *a = oi__tensor_new(OI_DTYPE_F32, 2, shape), *b = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    oi__tensor *ref_a = oi__tensor_new(OI_DTYPE_F32, 2, shape), *ref_b = oi__tensor_new(OI_DTYPE_F32, 2, shape);
    fill_f32(x, 0.5f);
    fill_f32(w, 0.25f);
    CHECK_OK(vk->flush(ctx));
    oi__vulkan_op_time times[2 * EARLY_OPS];
    while (oi__vulkan_take_times(ctx, times, 2 * EARLY_OPS) > 0) /* earlier tests' */
        ;
    uint64_t replays_before_last = 0, last_step_submissions = 0;
    for (int step = 0; step < 3; step++) {
        vk->release(ctx, b->storage); /* the host writes b: a fresh start each step */
        fill_f32(b, -1.0f);
        fill_f32(ref_b, -1.0f);
        uint64_t submissions = st->submissions;
        replays_before_last = st->replays;
        early_chain(true, x, w, a, b, step == 0 ? EARLY_OPS / 2 : -1);
        /* step 0 waits in the middle (the probe): early parts on both sides */
        uint64_t early = st->submissions - submissions, most = step == 0 ? 2 * OI__VK_EARLY_MAX + 1 : OI__VK_EARLY_MAX;
        CHECK_MSG(!early_on || (early >= (step == 0 ? 3u : 1u) && early <= most),
                  "step %d: %llu submissions while %d ops were recorded (expected early ones, at most %llu)", step,
                  (unsigned long long)early, EARLY_OPS, (unsigned long long)most);
        CHECK_OK(vk->flush(ctx));
        CHECK_OK(vk->to_host(ctx, b->storage));
        last_step_submissions = st->submissions - submissions;
        early_chain(false, x, w, ref_a, ref_b, -1);
        float max_diff = 0;
        for (int i = 0; i < 64 * 64; i++) {
            float d = fabsf(((float *)b->storage->data)[i] - ((float *)ref_b->storage->data)[i]);
            max_diff = d > max_diff ? d : max_diff;
        }
        CHECK_MSG(max_diff == 0.0f, "step %d: the chain differs from the CPU by %g", step, (double)max_diff);
        size_t n = oi__vulkan_take_times(ctx, times, 2 * EARLY_OPS);
        CHECK_MSG(n == 0 || n == EARLY_OPS, "step %d: %zu op times for %d ops", step, n, EARLY_OPS);
        for (size_t i = 1; i < n; i++)
            CHECK(times[i].seq > times[i - 1].seq && times[i].micros >= 0);
    }
    /* steps 2 and 3 record the same parts: every submission of step 3 replays */
    CHECK_MSG(st->replays - replays_before_last == last_step_submissions,
              "step 3: %llu replays of %llu submissions", (unsigned long long)(st->replays - replays_before_last),
              (unsigned long long)last_step_submissions);
    oi__tensor_free(x);
    oi__tensor_free(w);
    oi__tensor_free(a);
    oi__tensor_free(b);
    oi__tensor_free(ref_a);
    oi__tensor_free(ref_b);
}

/* A model with no tensors (the graphs below need none), from memory
 * (*bytes: the file's bytes, freed by the caller after the model). */
static oi_model *empty_model(uint8_t **bytes) {
    oi_writer *w = oi_writer_new();
    size_t size = 0;
    CHECK_OK(oi_writer_to_memory(w, 2, bytes, &size));
    oi_writer_free(w);
    return *bytes ? oi_model_open_memory(*bytes, size) : NULL;
}

/* ---- the trace: ops that ran on the GPU carry their GPU time ---- */
OI_GRAPH(g_traced,
  OI_DYNAMIC( OI_VAR(x, f32[32, 32]) )
  OI_VOLATILE( OI_VAR(y, f32[32, 32]) )
  OI_BLOCK(entry,
    OI_OP(matmul, x, x) OI_TO(y)
    OI_OP(relu, y) OI_TO(y)
    OI_RETURN()
  )
)

static void test_trace_gpu_time(void) {
    uint8_t *bytes = NULL;
    oi_model *m = empty_model(&bytes);
    oi_simulator_desc d;
    memset(&d, 0, sizeof d);
    d.device = OI_DEVICE_VULKAN;
    d.trace = true;
    oi_simulator *s = m ? oi_simulator_new_desc(m, &d) : NULL;
    oi_executor *e = s ? oi_simulator_make_executor(s, g_traced()) : NULL;
    CHECK_MSG(e != NULL, "%s", oi_last_error());
    if (e) {
        static float x[1024];
        for (int i = 0; i < 1024; i++)
            x[i] = (float)(i % 7) - 3.0f;
        CHECK_OK(oi_executor_insert(e, "x", OI_DTYPE_F32, x, 1024));
        CHECK_OK(oi_executor_run_step(e));
        char *json = oi_executor_trace_json(e);
        size_t with_gpu_time = 0;
        for (const char *p = json; p && (p = strstr(p, "\"gpu_micros\": ")) != NULL; p++)
            with_gpu_time++;
        CHECK_MSG(with_gpu_time == 2, "%zu of the 2 GPU ops carry gpu_micros:\n%s", with_gpu_time, json ? json : "");
        oi_free(json);
        oi_tensor_view y;
        CHECK_OK(oi_executor_fetch(e, "y", OI_DTYPE_F32, &y));
        double want = 0; /* y[0][0] = relu(sum_k x[0][k] * x[k][0]), by a plain loop */
        for (int k = 0; k < 32; k++)
            want += (double)x[k] * (double)x[k * 32];
        CHECK_NEAR(((float *)y.data)[0], want > 0 ? want : 0, 1e-3);
    }
    oi_executor_free(e);
    oi_simulator_free(s);
    oi_model_close(m);
    oi_free(bytes);
}

/* ---- tables on the device: rows written there, a slice read is a view ---- */
OI_GRAPH(g_table_rows,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_PERSISTENT(
    OI_VAR(n, i32, @init(0))
    OI_VAR(K(t), f32[4], @table, @fixed(t=64))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[4])
    OI_ASSIGN(keys, f32[?, 4])
    OI_ASSIGN(last, f32[4])
    OI_ASSIGN(total, f32[4])
    OI_OP(add, x, x) OI_TO(h)              /* made on the device */
    OI_CACHE_WRITE(h, K[n])
    OI_CACHE_READ(K[0..n+1], keys)         /* every position so far: a view */
    OI_CACHE_READ(K[n], last)              /* one entry: a copy */
    OI_CACHE_INCREMENT(n)
    OI_OP(sum_axis, keys, axes=[0]) OI_TO(total)
    OI_RETURN()
  )
)

static void test_table_rows(void) {
    uint8_t *bytes = NULL;
    oi_model *m = empty_model(&bytes);
    oi_simulator *sim = m ? oi_simulator_new(m, OI_DEVICE_VULKAN) : NULL;
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g_table_rows()) : NULL;
    CHECK_MSG(e != NULL, "table rows executor: %s", oi_last_error());
    const oi__vulkan_stats *st = sim ? oi__vulkan_get_stats(sim->backend_ctx) : NULL;
    enum { STEPS = 40, SETTLED = 4 };
    uint64_t up_bytes = 0, downs = 0;
    const void *row_bytes = NULL;
    for (int step = 0; e && st && step < STEPS; step++) {
        if (step == SETTLED) {
            up_bytes = st->upload_bytes;
            downs = st->downloads;
        }
        float x[4] = {(float)step, 1.0f, -0.5f * (float)step, 0.25f};
        CHECK_OK(OI_TRY_INSERT(e, x, x, 4));
        CHECK_OK(oi_executor_run_step(e));
        const oi__tensor *keys = oi__executor_peek(e, "keys");
        CHECK(keys && keys->ndim == 2 && keys->shape[0] == step + 1 && keys->offset == 0);
        if (keys && step == SETTLED)
            row_bytes = keys->storage;
        if (keys && step > SETTLED) /* the write past the last view went in place */
            CHECK_MSG(keys->storage == row_bytes, "step %d: the row was copied", step);
    }
    if (e && st) {
        /* after the first steps a step uploads x (16 bytes) and downloads
         * nothing: the row is written and read where it lives */
        uint64_t per_step = (st->upload_bytes - up_bytes) / (STEPS - SETTLED);
        CHECK_MSG(per_step <= 64, "%llu bytes uploaded a step: the table's row goes up each step",
                  (unsigned long long)per_step);
        CHECK_MSG(st->downloads == downs, "%llu downloads in %d steps", (unsigned long long)(st->downloads - downs),
                  STEPS - SETTLED);
        /* K[t] = 2 x_t: total = sum_t 2 [t, 1, -t/2, 1/4] over t < 40 = [1560, 80, -780, 20]; last = 2 x_39 */
        float total[4] = {1560.0f, 80.0f, -780.0f, 20.0f}, last[4] = {78.0f, 2.0f, -39.0f, 0.5f};
        oi_tensor_view v;
        CHECK_OK(oi_executor_fetch(e, "total", OI_DTYPE_F32, &v));
        for (int i = 0; i < 4 && v.len == 4; i++)
            CHECK_NEAR(((const float *)v.data)[i], total[i], 1e-3);
        CHECK_OK(oi_executor_fetch(e, "last", OI_DTYPE_F32, &v));
        for (int i = 0; i < 4 && v.len == 4; i++)
            CHECK_NEAR(((const float *)v.data)[i], last[i], 0);
        CHECK_OK(oi_executor_fetch(e, "K", OI_DTYPE_F32, &v)); /* the whole table comes back from the device */
        CHECK_EQ_INT(v.len, 4 * STEPS);
        for (int t = 0; t < STEPS && v.len == 4 * STEPS; t++)
            CHECK_NEAR(((const float *)v.data)[4 * t + 2], -(float)t, 0);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
    oi_free(bytes);
}

/* ---- interop: the user's VkDevice, a bound input buffer, an exported output ---- */
OI_GRAPH(g_interop,
  OI_DYNAMIC( OI_VAR(x, f32[B]) )
  OI_VOLATILE( OI_VAR(a, f32[B]) OI_VAR(y, f32[B]) )
  OI_BLOCK(entry,
    OI_OP(add, x, a) OI_TO(y)
    OI_OP(mul, y, a) OI_TO(y)
    OI_RETURN()
  )
)

typedef struct user_buffer {
    VkBuffer buffer;
    VkDeviceMemory memory;
    float *mapped;
} user_buffer;

static bool user_buffer_new(VkPhysicalDevice pd, VkDevice dev, VkDeviceSize size, user_buffer *ub) {
    memset(ub, 0, sizeof *ub);
    VkBufferCreateInfo info;
    memset(&info, 0, sizeof info);
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    if (vkCreateBuffer(dev, &info, NULL, &ub->buffer) != VK_SUCCESS)
        return false;
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, ub->buffer, &req);
    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(pd, &mem);
    VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryAllocateInfo alloc;
    memset(&alloc, 0, sizeof alloc);
    alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    alloc.allocationSize = req.size;
    alloc.memoryTypeIndex = UINT32_MAX;
    for (uint32_t i = 0; i < mem.memoryTypeCount; i++)
        if ((req.memoryTypeBits & (1u << i)) && (mem.memoryTypes[i].propertyFlags & want) == want) {
            alloc.memoryTypeIndex = i;
            break;
        }
    void *ptr = NULL;
    if (alloc.memoryTypeIndex == UINT32_MAX || vkAllocateMemory(dev, &alloc, NULL, &ub->memory) != VK_SUCCESS ||
        vkBindBufferMemory(dev, ub->buffer, ub->memory, 0) != VK_SUCCESS ||
        vkMapMemory(dev, ub->memory, 0, VK_WHOLE_SIZE, 0, &ptr) != VK_SUCCESS)
        return false;
    ub->mapped = (float *)ptr;
    return true;
}

static void user_buffer_free(VkDevice dev, user_buffer *ub) {
    if (ub->buffer)
        vkDestroyBuffer(dev, ub->buffer, NULL);
    if (ub->memory)
        vkFreeMemory(dev, ub->memory, NULL);
}

static uint64_t handle_u64(VkBuffer b) { return (uint64_t)(uintptr_t)b; }

/* The user's side of the copy: a barrier (our compute writes -> their
 * transfer) and vkCmdCopyBuffer on their command buffer, their fence. */
static bool user_copy(VkDevice dev, VkQueue queue, uint32_t family, VkBuffer src, VkDeviceSize offset, VkBuffer dst,
                      VkDeviceSize size) {
    VkCommandPoolCreateInfo pool_info;
    memset(&pool_info, 0, sizeof pool_info);
    pool_info.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pool_info.queueFamilyIndex = family;
    VkCommandPool pool;
    if (vkCreateCommandPool(dev, &pool_info, NULL, &pool) != VK_SUCCESS)
        return false;
    VkCommandBufferAllocateInfo cb_info;
    memset(&cb_info, 0, sizeof cb_info);
    cb_info.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cb_info.commandPool = pool;
    cb_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cb_info.commandBufferCount = 1;
    VkCommandBuffer cb;
    vkAllocateCommandBuffers(dev, &cb_info, &cb);
    VkCommandBufferBeginInfo begin;
    memset(&begin, 0, sizeof begin);
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(cb, &begin);
    VkBufferMemoryBarrier barrier;
    memset(&barrier, 0, sizeof barrier);
    barrier.sType = VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER;
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.buffer = src;
    barrier.offset = offset;
    barrier.size = size;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 1, &barrier, 0, NULL);
    VkBufferCopy region;
    region.srcOffset = offset;
    region.dstOffset = 0;
    region.size = size;
    vkCmdCopyBuffer(cb, src, dst, 1, &region);
    vkEndCommandBuffer(cb);
    VkSubmitInfo submit;
    memset(&submit, 0, sizeof submit);
    submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    bool ok = vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE) == VK_SUCCESS && vkQueueWaitIdle(queue) == VK_SUCCESS;
    vkDestroyCommandPool(dev, pool, NULL);
    return ok;
}

static void test_interop(void) {
    /* the user's instance, device and queue */
    if (volkInitialize() != VK_SUCCESS)
        return;
    VkApplicationInfo app;
    memset(&app, 0, sizeof app);
    app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
    app.apiVersion = VK_API_VERSION_1_1;
    VkInstanceCreateInfo ii;
    memset(&ii, 0, sizeof ii);
    ii.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
    ii.pApplicationInfo = &app;
    VkInstance instance;
    if (vkCreateInstance(&ii, NULL, &instance) != VK_SUCCESS)
        return;
    volkLoadInstance(instance);
    uint32_t n = 1;
    VkPhysicalDevice pd;
    vkEnumeratePhysicalDevices(instance, &n, &pd);
    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, NULL);
    VkQueueFamilyProperties fams[16];
    nf = nf > 16 ? 16 : nf;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nf, fams);
    uint32_t family = 0;
    while (family < nf && !(fams[family].queueFlags & VK_QUEUE_COMPUTE_BIT))
        family++;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qi;
    memset(&qi, 0, sizeof qi);
    qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
    qi.queueFamilyIndex = family;
    qi.queueCount = 1;
    qi.pQueuePriorities = &prio;
    VkDeviceCreateInfo di;
    memset(&di, 0, sizeof di);
    di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
    di.queueCreateInfoCount = 1;
    di.pQueueCreateInfos = &qi;
    VkDevice dev;
    CHECK(vkCreateDevice(pd, &di, NULL, &dev) == VK_SUCCESS);
    volkLoadDevice(dev);
    VkQueue queue;
    vkGetDeviceQueue(dev, family, 0, &queue);

    oi_vulkan_device_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.instance = instance;
    desc.physical_device = pd;
    desc.device = dev;
    desc.queue = queue;
    desc.queue_family_index = family;
    CHECK_OK(oi_vulkan_use_device(&desc));

    enum { B = 64 };
    float a[B], x[B];
    for (int i = 0; i < B; i++) {
        a[i] = 0.5f * (float)i - 3.0f;
        x[i] = 1.0f + 0.25f * (float)(i % 5);
    }
    oi_writer *w = oi_writer_new();
    uint64_t dims[1] = {B};
    CHECK_OK(oi_writer_add_sizevar(w, "B", B));
    CHECK_OK(oi_writer_add_tensor(w, "a", OI_DTYPE_F32, 1, dims, a, NULL));
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_OK(oi_writer_to_memory(w, 2, &bytes, &size));
    oi_writer_free(w);
    oi_model *m = oi_model_open_memory(bytes, size);
    oi_simulator *sim = m ? oi_simulator_new(m, OI_DEVICE_VULKAN) : NULL;
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g_interop()) : NULL;
    CHECK_MSG(e != NULL, "interop executor: %s", oi_last_error());
    user_buffer in, out;
    bool made = user_buffer_new(pd, dev, sizeof x, &in) && user_buffer_new(pd, dev, sizeof x, &out);
    CHECK(made);
    if (e && made) {
        for (int step = 0; step < 2; step++) {
            for (int i = 0; i < B; i++)
                in.mapped[i] = x[i] + (float)step; /* the user's data, written in their buffer */
            CHECK_OK(oi_executor_vulkan_bind_buffer(e, "x", handle_u64(in.buffer), 0, sizeof x));
            CHECK_OK(oi_executor_run_step(e));
            oi_tensor_view y;
            CHECK_OK(oi_executor_fetch(e, "y", OI_DTYPE_F32, &y));
            for (int i = 0; i < B && y.data; i++)
                CHECK_NEAR(((float *)y.data)[i], (x[i] + (float)step + a[i]) * a[i], 1e-5);
            uint64_t buf = 0, off = 0, len = 0;
            CHECK_OK(oi_executor_vulkan_buffer(e, "y", &buf, &off, &len));
            CHECK_EQ_INT(len, sizeof x);
            memset(out.mapped, 0, sizeof x);
            CHECK(user_copy(dev, queue, family, (VkBuffer)(uintptr_t)buf, off, out.buffer, len));
            for (int i = 0; i < B && y.data; i++)
                CHECK_NEAR(out.mapped[i], ((float *)y.data)[i], 0); /* read on the device, no host copy */
        }
        CHECK_STATUS(oi_executor_vulkan_bind_buffer(e, "y", handle_u64(in.buffer), 0, sizeof x),
                     OI_ERROR_INVALID_ARGUMENT); /* volatile: not a dynamic input */
        CHECK_STATUS(oi_executor_vulkan_bind_buffer(e, "x", handle_u64(in.buffer), 0, 8), OI_ERROR_INVALID_ARGUMENT);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_model_close(m);
    oi_free(bytes);
    oi_vulkan_use_device(NULL);
    user_buffer_free(dev, &in);
    user_buffer_free(dev, &out);
    vkDestroyDevice(dev, NULL);
    vkDestroyInstance(instance, NULL);
}

/* ---- perf mode: GPU time per op from the backend's timestamps ---- */
static double best_gpu_micros(oi_op op, const attrs *at, const oi__tensor *const *in, size_t n_in, oi__tensor *out,
                              int reps) {
    double best = -1;
    oi__vulkan_op_time times[16];
    for (int r = 0; r <= reps; r++) { /* run 0 warms up: pipeline, uploads */
        uint64_t seq = oi__vulkan_next_seq(ctx);
        if (vk->run_op(ctx, op, at->a, at->n, in, n_in, out) != OI_OK || vk->flush(ctx) != OI_OK) {
            printf("perf: %s failed: %s\n", oi_op_name(op), oi_last_error());
            return -1;
        }
        size_t n;
        while ((n = oi__vulkan_take_times(ctx, times, 16)) > 0)
            for (size_t i = 0; i < n; i++)
                if (r > 0 && times[i].seq == seq && (best < 0 || times[i].micros < best))
                    best = times[i].micros;
    }
    return best;
}

static oi__tensor *perf_tensor(oi_dtype t, int ndim, int64_t d0, int64_t d1) {
    int64_t shape[2] = {d0, d1};
    oi__tensor *x = oi__tensor_new(t, ndim, shape);
    int64_t n = oi__shape_numel(ndim, shape);
    for (int64_t i = 0; x && i < n; i++)
        oi__store_f64(t, oi__tensor_data(x), i, rng_uniform(-1.0, 1.0));
    return x;
}

/* test_vulkan perf [n]: matmul TFLOP/s (f32, f16 storage) at n x n x n,
 * and the bandwidth of add, a copy (cast f32 -> f32) and a row sum. */
static int run_perf(int n) {
    const oi_dtype mm_types[2] = {OI_DTYPE_F32, OI_DTYPE_F16};
    attrs none = no_attrs();
    for (int t = 0; t < 2; t++) {
        oi__tensor *a = perf_tensor(mm_types[t], 2, n, n), *b = perf_tensor(mm_types[t], 2, n, n);
        oi__tensor *c = perf_tensor(mm_types[t], 2, n, n);
        const oi__tensor *in[2] = {a, b};
        double us = best_gpu_micros(OI_OP_matmul, &none, in, 2, c, 3);
        if (us > 0)
            printf("perf: matmul %s %dx%dx%d: %.1f us, %.1f GFLOP/s\n", oi_dtype_name(mm_types[t]), n, n, n, us,
                   2.0 * n * (double)n * n / (us * 1e3));
        oi__tensor_free(a);
        oi__tensor_free(b);
        oi__tensor_free(c);
    }
    int64_t rows = n, cols = n * 4;
    oi__tensor *x = perf_tensor(OI_DTYPE_F32, 2, rows, cols), *y = perf_tensor(OI_DTYPE_F32, 2, rows, cols);
    oi__tensor *z = perf_tensor(OI_DTYPE_F32, 2, rows, cols), *r = perf_tensor(OI_DTYPE_F32, 1, rows, 1);
    double bytes = (double)rows * (double)cols * 4.0;
    const oi__tensor *xy[2] = {x, y}, *x1[1] = {x};
    double us = best_gpu_micros(OI_OP_add, &none, xy, 2, z, 3);
    if (us > 0)
        printf("perf: add f32 [%lld, %lld]: %.1f us, %.1f GB/s\n", (long long)rows, (long long)cols, us, 3 * bytes / (us * 1e3));
    attrs copy = no_attrs();
    attr_dtype(&copy, "to", OI_DTYPE_F32);
    us = best_gpu_micros(OI_OP_cast, &copy, x1, 1, z, 3);
    if (us > 0)
        printf("perf: copy (cast f32->f32): %.1f us, %.1f GB/s\n", us, 2 * bytes / (us * 1e3));
    attrs sum = no_attrs();
    int64_t last = -1;
    attr_axes(&sum, "axes", 1, &last);
    us = best_gpu_micros(OI_OP_sum_axis, &sum, x1, 1, r, 3);
    if (us > 0)
        printf("perf: sum_axis f32 rows of %lld: %.1f us, %.1f GB/s\n", (long long)cols, us, bytes / (us * 1e3));
    free_attrs(&sum);
    oi__tensor_free(x);
    oi__tensor_free(y);
    oi__tensor_free(z);
    oi__tensor_free(r);
    return 0;
}

/* The cases in suites, so that meson runs them as separate tests (in
 * parallel, each under its own timeout) and a slow machine or a sanitizer
 * build never has to fit all of them into one test's limit.
 * `test_vulkan [SUITE...]` runs the named suites; no name runs them all. */
typedef struct {
    const char *name;
    void (*run)(void); /* NULL: the parity family of that name */
} vulkan_suite;

static const vulkan_suite vulkan_suites[] = {
    {"elementwise", test_elementwise},
    {"cast", test_cast},
    {"reductions", test_reductions},
    {"matmul", test_matmul},
    {"aligned", test_aligned},
    {"rownorm", test_rownorm},
    {"shape", NULL},
    {"nn", NULL},
    {"conv", NULL},
    {"wide", test_wide},
    {"declines", test_declines},
    {"residency", test_residency},
    {"early_submission", test_early_submission},
    {"interop", test_interop},
    {"trace_gpu_time", test_trace_gpu_time},
    {"table_rows", test_table_rows},
};
enum { N_VULKAN_SUITES = sizeof vulkan_suites / sizeof vulkan_suites[0] };

static void run_suite(const vulkan_suite *suite) {
    clock_t t0 = clock();
    int cases_before = cases_run, checks_before = check_count;
    printf("test_vulkan: [%s] ...\n", suite->name);
    if (suite->run)
        suite->run();
    for (int i = 0; !suite->run && i < COUNT(parity_families); i++)
        if (strcmp(parity_families[i].name, suite->name) == 0)
            parity_run_family(&parity_families[i]);
    printf("test_vulkan: [%s] %d cases on the GPU, %d checks, %.1f s\n", suite->name, cases_run - cases_before,
           check_count - checks_before, (double)(clock() - t0) / CLOCKS_PER_SEC);
}

static const vulkan_suite *find_suite(const char *name) {
    for (int i = 0; i < N_VULKAN_SUITES; i++)
        if (strcmp(vulkan_suites[i].name, name) == 0)
            return &vulkan_suites[i];
    return NULL;
}

/* Runs the suites named in names (all when n == 0); -1 for an unknown name. */
static int run_suites(int n, char **names) {
    for (int i = 0; i < n; i++) {
        if (!find_suite(names[i])) {
            fprintf(stderr, "test_vulkan: unknown suite '%s'; the suites are:", names[i]);
            for (int k = 0; k < N_VULKAN_SUITES; k++)
                fprintf(stderr, " %s", vulkan_suites[k].name);
            fprintf(stderr, "\n");
            return -1;
        }
    }
    if (n == 0)
        for (int i = 0; i < N_VULKAN_SUITES; i++)
            run_suite(&vulkan_suites[i]);
    for (int i = 0; i < n; i++)
        run_suite(find_suite(names[i]));
    return 0;
}

int main(int argc, char **argv) {
    bool perf = argc > 1 && strcmp(argv[1], "perf") == 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress shows as it happens under meson */
    /* the validation layer watches every call (when installed); opt out with =0 */
    if (!perf)
        setenv("OPENINFER_VULKAN_VALIDATION", "1", 0);
#ifdef TEST_ASAN
    dlopen("libvulkan_lvp.so", RTLD_NOW | RTLD_NODELETE); /* see __lsan_default_suppressions */
#endif
    oi_backend_info infos[16];
    size_t n = oi_backends_discover(infos, 16);
    const oi_backend_info *dev = NULL;
    for (size_t i = 0; i < n && i < 16; i++) {
        if (strcmp(infos[i].name, "vulkan") == 0 && infos[i].available && !dev)
            dev = &infos[i];
        if (strcmp(infos[i].name, "vulkan") == 0 && !infos[i].available)
            printf("test_vulkan: SKIP: %s\n", infos[i].unavailable_reason);
    }
    if (!dev)
        return 77;
    ctx = vk->create(0);
    if (!ctx) {
        printf("test_vulkan: SKIP: %s\n", oi_last_error());
        return 77;
    }
    printf("test_vulkan: %s (%s), features: %s\n", dev->device_name, dev->device_type, dev->features);
    if (perf) {
        int n = argc > 2 ? atoi(argv[2]) : strcmp(dev->device_type, "cpu") == 0 ? 256 : 4096;
        int rc = run_perf(n);
        vk->destroy(ctx);
        return rc;
    }
    clock_t t0 = clock();
    if (run_suites(argc - 1, argv + 1) != 0) {
        vk->destroy(ctx);
        return 2;
    }
    const oi__vulkan_stats *st = oi__vulkan_get_stats(ctx);
    printf("test_vulkan: %d cases on the GPU, %d declined; %llu pipelines, %llu submissions, %llu dispatches, %.1f s\n",
           cases_run, cases_unsupported, (unsigned long long)st->pipelines_created, (unsigned long long)st->submissions,
           (unsigned long long)st->dispatches, (double)(clock() - t0) / CLOCKS_PER_SEC);
    CHECK_MSG(st->validation_messages == 0, "%llu validation messages, the last: %s",
              (unsigned long long)st->validation_messages, oi__vulkan_validation_message(ctx));
    vk->destroy(ctx);
    return check_result("test_vulkan");
}
