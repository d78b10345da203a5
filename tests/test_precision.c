/* test_precision.c - the simulator's precision (desc.precision,
 * OPENINFER_PRECISION): activations stored in f16/bf16 with f32 arithmetic.
 *
 *   1. the definition, exactly: each stored activation is the f32 result
 *      rounded once (expected values computed here from the inputs);
 *   2. the default and an explicit f32 are bit-identical, and equal plain
 *      f32 arithmetic;
 *   3. the gate: a precision other than f32/f16/bf16, a bad
 *      OPENINFER_PRECISION, the blas backend with f16: errors that say so;
 *   4. what is not an activation keeps its dtype (inputs, caches);
 *   5. per op class, the error of f16/bf16 against f32 within a bound, and on
 *      Vulkan (where a device exists) the same ops on the device, within a
 *      bound of the CPU's result and without falling back to the CPU.
 * `test_precision --table` prints the measured errors as the markdown table
 * of docs/precision.md. */
#include "../openinfer.h"
#include "check.h"

#include <stdlib.h>
#include <unistd.h>

static bool print_table;

static oi_model *open_written(oi_writer *w, const char *name) {
    char path[256];
    snprintf(path, sizeof path, "/tmp/oi_test_precision_%s_%d.oinf", name, (int)getpid());
    CHECK_OK(oi_writer_write_file(w, 2, path));
    oi_writer_free(w);
    oi_model *m = oi_model_open(path);
    CHECK_MSG(m != NULL, "open %s: %s", path, oi_last_error());
    remove(path);
    return m;
}

/* Deterministic values in [-scale, scale). */
static uint32_t rng_state = 12345u;
static float rnd(float scale) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return scale * ((float)(rng_state >> 8) / 8388608.0f - 1.0f);
}
static float *rnd_array(size_t n, float scale) {
    float *a = (float *)malloc(n * sizeof *a);
    for (size_t i = 0; i < n && a; i++)
        a[i] = rnd(scale);
    return a;
}

static float round_to(oi_dtype p, float v) {
    if (p == OI_DTYPE_F16)
        return oi_f16_to_f32(oi_f32_to_f16(v));
    if (p == OI_DTYPE_BF16)
        return oi_bf16_to_f32(oi_f32_to_bf16(v));
    return v;
}

static oi_simulator *make_sim(const oi_model *m, oi_device device, oi_dtype precision) {
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = device;
    desc.precision = precision;
    return oi_simulator_new_desc(m, &desc);
}

/* ------------------------------------------------------------------ */
/* 1, 2: the definition, and the default                               */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_chain,
  OI_DYNAMIC( OI_VAR(x, f32[N]) )
  OI_CONSTANT( OI_VAR(w, f32[N]) OI_VAR(b, f32[N]) )
  OI_VOLATILE( OI_VAR(y, f32[N]) )
  OI_BLOCK(entry,
    OI_ASSIGN(t1, f32[N])
    OI_OP(mul, x, w) OI_TO(t1)
    OI_OP(add, t1, b) OI_TO(y)
    OI_RETURN()
  )
)

#define CHAIN_N 257
static float chain_x[CHAIN_N], chain_w[CHAIN_N], chain_b[CHAIN_N];

static oi_model *chain_model(void) {
    for (int i = 0; i < CHAIN_N; i++) {
        chain_x[i] = rnd(3.0f);
        chain_w[i] = rnd(1.7f);
        chain_b[i] = rnd(0.9f);
    }
    chain_x[0] = 70000.0f; /* beyond f16's range: inf in f16, finite in bf16 */
    chain_w[0] = 1.0f;
    chain_b[0] = 0.0f;
    /* the edges of f16: subnormals, the largest finite, the ties around it, NaN */
    const float edges[] = {1e-6f, 65504.0f, 65519.996f, 65520.0f, -65520.0f, 6.103515625e-05f, 5.9604645e-08f,
                           2.9802322e-08f, 2.9802326e-08f, NAN, -0.0f,
                           1.00390625f, 1.01171875f, 3.3895314e38f, -INFINITY}; /* bf16 ties to even, overflow */
    for (int i = 0; i < (int)(sizeof edges / sizeof edges[0]); i++) {
        chain_x[1 + 16 * i] = edges[i]; /* in different groups of 8 (the F16C path's) */
        chain_w[1 + 16 * i] = 1.0f;
        chain_b[1 + 16 * i] = 0.0f;
    }
    oi_writer *w = oi_writer_new();
    uint64_t n = CHAIN_N;
    CHECK_OK(oi_writer_add_sizevar(w, "N", n));
    CHECK_OK(oi_writer_add_tensor(w, "w", OI_DTYPE_F32, 1, &n, chain_w, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "b", OI_DTYPE_F32, 1, &n, chain_b, NULL));
    return open_written(w, "chain");
}

/* Runs g_chain once; y's values (f32) into out. */
static bool run_chain(oi_simulator *sim, float *out) {
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g_chain()) : NULL;
    CHECK_MSG(e != NULL, "%s", oi_last_error());
    if (!e)
        return false;
    oi_tensor_view v;
    CHECK_OK(oi_executor_insert(e, "x", OI_DTYPE_F32, chain_x, CHAIN_N));
    CHECK_OK(oi_executor_run_step(e));
    oi_status st = oi_executor_fetch(e, "y", OI_DTYPE_F32, &v);
    CHECK_OK(st);
    if (st == OI_OK)
        memcpy(out, v.data, CHAIN_N * sizeof *out);
    oi_executor_free(e);
    return st == OI_OK;
}

static void test_definition(const oi_model *m) {
    float y[CHAIN_N], y_default[CHAIN_N];
    oi_dtype ps[] = {OI_DTYPE_F16, OI_DTYPE_BF16};
    for (int k = 0; k < 2; k++) {
        oi_simulator *sim = make_sim(m, OI_DEVICE_CPU, ps[k]);
        CHECK_MSG(sim != NULL, "%s", oi_last_error());
        if (run_chain(sim, y)) {
            int wrong = 0;
            for (int i = 0; i < CHAIN_N; i++) {
                /* t1 rounded once, y rounded once; the arithmetic in f32 */
                float t1 = round_to(ps[k], chain_x[i] * chain_w[i]);
                float want = round_to(ps[k], t1 + chain_b[i]);
                if (memcmp(&want, &y[i], sizeof want) != 0 && wrong++ < 3)
                    fprintf(stderr, "%s y[%d] = %.9g, want %.9g\n", oi_dtype_name(ps[k]), i, (double)y[i], (double)want);
            }
            CHECK_EQ_INT(wrong, 0);
            CHECK(ps[k] == OI_DTYPE_F16 ? isinf(y[0]) : y[0] == round_to(OI_DTYPE_BF16, 70000.0f));
        }
        oi_simulator_free(sim);
    }
    /* the default: plain f32 arithmetic, and 0 is f32 */
    oi_simulator *sim = make_sim(m, OI_DEVICE_CPU, 0);
    if (run_chain(sim, y_default)) {
        int wrong = 0;
        for (int i = 0; i < CHAIN_N; i++) {
            float want = chain_x[i] * chain_w[i];
            want = want + chain_b[i];
            wrong += memcmp(&want, &y_default[i], sizeof want) != 0;
        }
        CHECK_EQ_INT(wrong, 0);
    }
    oi_simulator_free(sim);
    sim = make_sim(m, OI_DEVICE_CPU, OI_DTYPE_F32);
    if (run_chain(sim, y))
        CHECK(memcmp(y, y_default, sizeof y) == 0);
    oi_simulator_free(sim);
}

/* ------------------------------------------------------------------ */
/* 3: the gate                                                         */
/* ------------------------------------------------------------------ */

static void test_gate(const oi_model *m) {
    oi_simulator *sim = make_sim(m, OI_DEVICE_CPU, OI_DTYPE_I8);
    CHECK(sim == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "precision i8");
    CHECK_STR_CONTAINS(oi_last_error(), "f32 (0, the default), f16 or bf16");
    oi_simulator_free(sim);

    setenv("OPENINFER_PRECISION", "f64", 1);
    sim = make_sim(m, OI_DEVICE_CPU, 0);
    CHECK(sim == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "OPENINFER_PRECISION=f64: expected f32, f16 or bf16");
    oi_simulator_free(sim);

    /* the environment applies where the desc leaves precision 0 ... */
    float y[CHAIN_N];
    setenv("OPENINFER_PRECISION", "bf16", 1);
    sim = make_sim(m, OI_DEVICE_CPU, 0);
    if (run_chain(sim, y))
        CHECK(y[2] == round_to(OI_DTYPE_BF16, round_to(OI_DTYPE_BF16, chain_x[2] * chain_w[2]) + chain_b[2]));
    oi_simulator_free(sim);
    /* ... and the desc wins over it */
    sim = make_sim(m, OI_DEVICE_CPU, OI_DTYPE_F32);
    if (run_chain(sim, y))
        CHECK(y[2] == chain_x[2] * chain_w[2] + chain_b[2]);
    oi_simulator_free(sim);
    unsetenv("OPENINFER_PRECISION");

    /* blas computes on f32 only: f16 there is an error naming the backend */
    oi_simulator *blas = make_sim(m, OI_DEVICE_BLAS, 0);
    if (blas) {
        sim = make_sim(m, OI_DEVICE_BLAS, OI_DTYPE_F16);
        CHECK(sim == NULL);
        CHECK_STR_CONTAINS(oi_last_error(), "precision f16: the blas backend computes on f32 data only");
        oi_simulator_free(sim);
    } else {
        printf("test_precision: no blas backend in this build or machine: its gate not checked\n");
    }
    oi_simulator_free(blas);
}

/* ------------------------------------------------------------------ */
/* 4: inputs and persistent state keep their dtypes                     */
/* ------------------------------------------------------------------ */

OI_GRAPH(g_keep,
  OI_DYNAMIC( OI_VAR(x, f32[4]) )
  OI_PERSISTENT( OI_VAR(acc, f32[4]) )
  OI_BLOCK(entry,
    OI_ASSIGN(s, f32[4])
    OI_CACHE_READ(acc, s)
    OI_OP(add, s, x) OI_TO(s)
    OI_CACHE_WRITE(s, acc)
    OI_RETURN()
  )
)

static void test_keep(void) {
    oi_simulator *sim = make_sim(NULL, OI_DEVICE_CPU, OI_DTYPE_F16);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g_keep()) : NULL;
    CHECK_MSG(e != NULL, "%s", oi_last_error());
    if (!e) {
        oi_simulator_free(sim);
        return;
    }
    const float x[4] = {1.0001f, 2048.5f, -3.0f, 0.1f};
    oi_tensor_view v;
    for (int step = 0; step < 2; step++) {
        CHECK_OK(oi_executor_insert(e, "x", OI_DTYPE_F32, x, 4));
        CHECK_OK(oi_executor_run_step(e));
    }
    /* the input is not rounded: x reads back exactly */
    CHECK_OK(oi_executor_fetch(e, "x", OI_DTYPE_F32, &v));
    CHECK(v.len == 4 && ((float *)v.data)[0] == 1.0001f);
    /* acc (f32) took s (f16) widened: step 1 s = f16(x), step 2 s = f16(f16(x) + x) */
    CHECK_OK(oi_executor_fetch(e, "acc", OI_DTYPE_F32, &v));
    for (int i = 0; i < 4 && v.len == 4; i++) {
        float s1 = round_to(OI_DTYPE_F16, 0.0f + x[i]);
        CHECK_NEAR(((float *)v.data)[i], round_to(OI_DTYPE_F16, s1 + x[i]), 0.0);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
}

/* ------------------------------------------------------------------ */
/* 5: error bounds per op class, CPU and Vulkan                         */
/* ------------------------------------------------------------------ */

/* Every class reads x (f32 input), makes it an activation (scaled by a
 * constant 1: rounded into the precision), then runs its ops. */
OI_GRAPH(g_ew,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) OI_VAR(bc, f32[C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[R, C]) OI_ASSIGN(t, f32[R, C]) OI_ASSIGN(y, f32[R, C])
    OI_OP(mul, x, one) OI_TO(a)
    OI_OP(add, a, bc) OI_TO(t)
    OI_OP(gelu, t) OI_TO(t)
    OI_OP(mul, t, a) OI_TO(y)
    OI_RETURN()
  )
)

OI_GRAPH(g_gemm,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) OI_VAR(W, f32[C, C]) OI_VAR(bc, f32[C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[R, C]) OI_ASSIGN(y, f32[R, C])
    OI_OP(mul, x, one) OI_TO(a)
    OI_OP(gemm, a, W, bc) OI_TO(y)
    OI_RETURN()
  )
)

OI_GRAPH(g_matmul,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) OI_VAR(W, f32[C, C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[R, C]) OI_ASSIGN(y, f32[R, C])
    OI_OP(mul, x, one) OI_TO(a)
    OI_OP(matmul, a, W) OI_TO(y)
    OI_RETURN()
  )
)

OI_GRAPH(g_layer_norm,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) OI_VAR(g, f32[C]) OI_VAR(bc, f32[C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[R, C]) OI_ASSIGN(y, f32[R, C])
    OI_OP(mul, x, one) OI_TO(a)
    OI_OP(layer_norm, a, g, bc, epsilon=1e-5) OI_TO(y)
    OI_RETURN()
  )
)

OI_GRAPH(g_softmax,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[R, C]) OI_ASSIGN(y, f32[R, C])
    OI_OP(mul, x, one) OI_TO(a)
    OI_OP(softmax, a, axis=-1) OI_TO(y)
    OI_RETURN()
  )
)

OI_GRAPH(g_reduce,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[R, C]) OI_ASSIGN(y, f32[R])
    OI_OP(mul, x, one) OI_TO(a)
    OI_OP(sum_axis, a, axes=[1]) OI_TO(y)
    OI_RETURN()
  )
)

/* q, k, v: [1, 4 heads, R/4... ] from a [R, C] activation: R = 64 rows of C
 * = 128 as 4 heads of 32 over 64 positions */
OI_GRAPH(g_attention,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) OI_VAR(W, f32[C, C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[R, C]) OI_ASSIGN(kx, f32[R, C])
    OI_ASSIGN(q4, f32[1, R, 4, 32]) OI_ASSIGN(k4, f32[1, R, 4, 32])
    OI_ASSIGN(qh, f32[1, 4, R, 32]) OI_ASSIGN(kh, f32[1, 4, R, 32]) OI_ASSIGN(y, f32[1, 4, R, 32])
    OI_OP(mul, x, one) OI_TO(a)
    OI_OP(matmul, a, W) OI_TO(kx)
    OI_OP(reshape, a, shape=[1, -1, 4, 32]) OI_TO(q4)
    OI_OP(reshape, kx, shape=[1, -1, 4, 32]) OI_TO(k4)
    OI_OP(transpose, q4, perm=[0, 2, 1, 3]) OI_TO(qh)
    OI_OP(transpose, k4, perm=[0, 2, 1, 3]) OI_TO(kh)
    OI_OP(attention, qh, kh, kh) OI_TO(y)
    OI_RETURN()
  )
)

/* attention straight on views of the f32 input: f32 operands, the result
 * stored in 16 bits */
OI_GRAPH(g_attention_in,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(q4, f32[1, R, 4, 32]) OI_ASSIGN(qh, f32[1, 4, R, 32]) OI_ASSIGN(y, f32[1, 4, R, 32])
    OI_OP(reshape, x, shape=[1, -1, 4, 32]) OI_TO(q4)
    OI_OP(transpose, q4, perm=[0, 2, 1, 3]) OI_TO(qh)
    OI_OP(attention, qh, qh, qh) OI_TO(y)
    OI_RETURN()
  )
)

/* gemm and conv2d straight on the f32 input (views of it): f32 operands,
 * the results stored in 16 bits */
OI_GRAPH(g_f32_in,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(W, f32[C, C]) OI_VAR(bc, f32[C]) OI_VAR(Wc, f32[8, 8, 3, 3]) OI_VAR(bcv, f32[8]) )
  OI_BLOCK(entry,
    OI_ASSIGN(img, f32[1, 8, 32, 32]) OI_ASSIGN(c, f32[1, 8, 32, 32]) OI_ASSIGN(g, f32[R, C])
    OI_ASSIGN(cf, f32[R, C]) OI_ASSIGN(y, f32[R, C])
    OI_OP(gemm, x, W, bc) OI_TO(g)
    OI_OP(reshape, x, shape=[1, 8, 32, 32]) OI_TO(img)
    OI_OP(conv2d, img, Wc, bcv, pads=[1, 1, 1, 1]) OI_TO(c)
    OI_OP(reshape, c, shape=[64, 128]) OI_TO(cf)
    OI_OP(add, g, cf) OI_TO(y)
    OI_RETURN()
  )
)

/* the [R, C] activation as one image of 8 channels of 32 x 32 */
OI_GRAPH(g_conv,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) OI_VAR(Wc, f32[8, 8, 3, 3]) OI_VAR(bcv, f32[8]) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[R, C]) OI_ASSIGN(img, f32[1, 8, 32, 32]) OI_ASSIGN(y, f32[1, 8, 32, 32])
    OI_OP(mul, x, one) OI_TO(a)
    OI_OP(reshape, a, shape=[1, 8, 32, 32]) OI_TO(img)
    OI_OP(conv2d, img, Wc, bcv, pads=[1, 1, 1, 1]) OI_TO(y)
    OI_RETURN()
  )
)

/* data movement between an f16/bf16 activation and an f32 input: copy.comp
 * converts float elements, so Vulkan runs it */
OI_GRAPH(g_concat,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(a, f32[R, C]) OI_ASSIGN(y, f32[2 * R, C])
    OI_OP(mul, x, one) OI_TO(a)
    OI_OP(concat, a, x, axis=0) OI_TO(y)
    OI_RETURN()
  )
)

/* pad of the f32 input into a 16-bit activation: pad.comp moves bits, so
 * Vulkan declines it and it runs on the CPU (the documented exception; a
 * warning names the op) */
OI_GRAPH(g_pad,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(y, f32[66, C]) /* R + 2 */
    OI_OP(pad, x, pads=[1, 0, 1, 0], value=0.5) OI_TO(y)
    OI_RETURN()
  )
)

/* an encoder-style MLP: gemm, gelu, gemm, residual, layer_norm */
OI_GRAPH(g_block,
  OI_DYNAMIC( OI_VAR(x, f32[R, C]) )
  OI_CONSTANT( OI_VAR(one, f32[C]) OI_VAR(W, f32[C, C]) OI_VAR(W2, f32[C, C]) OI_VAR(bc, f32[C]) OI_VAR(g, f32[C]) )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[R, C]) OI_ASSIGN(f, f32[R, C]) OI_ASSIGN(p, f32[R, C]) OI_ASSIGN(y, f32[R, C])
    OI_OP(mul, x, one) OI_TO(h)
    OI_OP(gemm, h, W, bc, activation="gelu") OI_TO(f)
    OI_OP(gemm, f, W2, bc) OI_TO(p)
    OI_OP(add, h, p) OI_TO(p)
    OI_OP(layer_norm, p, g, bc, epsilon=1e-5) OI_TO(y)
    OI_RETURN()
  )
)

#define OP_R 64
#define OP_C 128

typedef struct op_class {
    const char *name;
    const oi_graph *(*graph)(void);
    double bound_f16, bound_bf16; /* normalized max error against f32 */
    bool on_device;               /* every op runs on Vulkan at f16 */
} op_class;

static const op_class op_classes[] = {
    {"elementwise (add, gelu, mul)", g_ew, 2e-3, 1.6e-2, true},
    {"matmul (K = 128)", g_matmul, 2e-3, 1.6e-2, true},
    {"gemm + bias (K = 128)", g_gemm, 2e-3, 1.6e-2, true},
    {"layer_norm", g_layer_norm, 2e-3, 1.6e-2, true},
    {"softmax (rows of 128)", g_softmax, 2e-3, 1.6e-2, true},
    {"sum_axis (128 terms)", g_reduce, 2e-3, 1.6e-2, true},
    {"attention (4 heads, 64 x 32)", g_attention, 4e-3, 3.2e-2, true},
    {"attention of f32 input views", g_attention_in, 2e-3, 1.6e-2, true},
    {"conv2d (8 -> 8 channels, 3 x 3)", g_conv, 2e-3, 1.6e-2, true},
    {"gemm and conv2d of the f32 input, added", g_f32_in, 2e-3, 1.6e-2, true},
    {"MLP block (gemm-gelu-gemm-add-layer_norm)", g_block, 4e-3, 3.2e-2, true},
    {"concat (f16/bf16 activation with an f32 input)", g_concat, 1e-3, 8e-3, true},
    {"pad (f32 input into a 16-bit activation; CPU on Vulkan)", g_pad, 1e-3, 8e-3, false},
};

static oi_model *op_model(void) {
    oi_writer *w = oi_writer_new();
    CHECK_OK(oi_writer_add_sizevar(w, "R", OP_R));
    CHECK_OK(oi_writer_add_sizevar(w, "C", OP_C));
    uint64_t c = OP_C, cc[2] = {OP_C, OP_C};
    float *one = rnd_array(OP_C, 1.0f), *W = rnd_array(OP_C * OP_C, 0.15f), *W2 = rnd_array(OP_C * OP_C, 0.15f);
    float *bc = rnd_array(OP_C, 0.5f), *g = rnd_array(OP_C, 0.5f);
    for (int i = 0; i < OP_C; i++) {
        one[i] = 1.0f;
        g[i] += 1.0f;
    }
    CHECK_OK(oi_writer_add_tensor(w, "one", OI_DTYPE_F32, 1, &c, one, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "bc", OI_DTYPE_F32, 1, &c, bc, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "g", OI_DTYPE_F32, 1, &c, g, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "W", OI_DTYPE_F32, 2, cc, W, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "W2", OI_DTYPE_F32, 2, cc, W2, NULL));
    uint64_t wc_dims[4] = {8, 8, 3, 3}, eight = 8;
    float *Wc = rnd_array(8 * 8 * 9, 0.2f), *bcv = rnd_array(8, 0.5f);
    CHECK_OK(oi_writer_add_tensor(w, "Wc", OI_DTYPE_F32, 4, wc_dims, Wc, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "bcv", OI_DTYPE_F32, 1, &eight, bcv, NULL));
    free(Wc);
    free(bcv);
    oi_model *m = open_written(w, "ops");
    free(one);
    free(W);
    free(W2);
    free(bc);
    free(g);
    return m;
}

/* Runs a class once; its y (f32) in a new array, NULL on failure. *fell_back:
 * some op ran on the CPU although the simulator runs on a device. */
static float *run_class(oi_simulator *sim, const op_class *k, const float *x, size_t *n, bool *fell_back) {
    oi_executor *e = sim ? oi_simulator_make_executor(sim, k->graph()) : NULL;
    CHECK_MSG(e != NULL, "%s: %s", k->name, oi_last_error());
    if (!e)
        return NULL;
    float *out = NULL;
    oi_tensor_view v;
    CHECK_OK(oi_executor_insert(e, "x", OI_DTYPE_F32, x, OP_R * OP_C));
    oi_status st = oi_executor_run_step(e);
    CHECK_MSG(st == OI_OK, "%s: %s", k->name, oi_last_error());
    if (st == OI_OK && oi_executor_fetch(e, "y", OI_DTYPE_F32, &v) == OI_OK && (out = (float *)malloc(v.len * 4))) {
        memcpy(out, v.data, v.len * 4);
        *n = v.len;
    }
    *fell_back = false;
    for (size_t i = 0; i < oi_executor_warning_count(e); i++) {
        const char *w = oi_executor_warning(e, i);
        if (strstr(w, "ran on the CPU")) {
            if (k->on_device)
                fprintf(stderr, "test_precision: %s: %s\n", k->name, w);
            *fell_back = true;
        }
    }
    oi_executor_free(e);
    return out;
}

/* max |a - b| / max |b| over finite references */
static double norm_err(const float *a, const float *b, size_t n) {
    double worst = 0.0, scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (!(d <= worst))
            worst = d;
        if (fabs((double)b[i]) > scale)
            scale = fabs((double)b[i]);
    }
    return scale > 0 ? worst / scale : worst;
}

static void test_op_classes(const oi_model *m) {
    float *x = rnd_array(OP_R * OP_C, 2.0f);
    oi_simulator *cpu32 = make_sim(m, OI_DEVICE_CPU, OI_DTYPE_F32);
    oi_simulator *cpu16 = make_sim(m, OI_DEVICE_CPU, OI_DTYPE_F16);
    oi_simulator *cpub16 = make_sim(m, OI_DEVICE_CPU, OI_DTYPE_BF16);
    oi_simulator *vk16 = make_sim(m, OI_DEVICE_VULKAN, OI_DTYPE_F16);
    oi_simulator *vkb16 = vk16 ? make_sim(m, OI_DEVICE_VULKAN, OI_DTYPE_BF16) : NULL;
    oi_clear_error();
    if (!vk16)
        printf("test_precision: no Vulkan device: the device half is skipped\n");
    if (print_table) {
        printf("| Op class | f16 (CPU) | bf16 (CPU) | f16 (Vulkan) | bf16 (Vulkan) |\n");
        printf("|---|---|---|---|---|\n");
    }
    for (size_t i = 0; i < sizeof op_classes / sizeof op_classes[0]; i++) {
        const op_class *k = &op_classes[i];
        size_t n32 = 0, n = 0;
        bool fb = false;
        float *r32 = run_class(cpu32, k, x, &n32, &fb);
        float *r16 = run_class(cpu16, k, x, &n, &fb);
        float *rb16 = run_class(cpub16, k, x, &n, &fb);
        double e16 = -1, eb16 = -1, v16 = -1, vb16 = -1;
        if (r32 && r16 && rb16) {
            e16 = norm_err(r16, r32, n32);
            eb16 = norm_err(rb16, r32, n32);
            CHECK_MSG(e16 <= k->bound_f16, "%s: f16 error %.3g > %.3g", k->name, e16, k->bound_f16);
            CHECK_MSG(eb16 <= k->bound_bf16, "%s: bf16 error %.3g > %.3g", k->name, eb16, k->bound_bf16);
            /* and it is not the f32 result: the rounding happened */
            CHECK_MSG(e16 > 0 && eb16 > e16, "%s: f16 %.3g, bf16 %.3g", k->name, e16, eb16);
        }
        if (vk16 && r32) {
            float *d16 = run_class(vk16, k, x, &n, &fb);
            CHECK_MSG(!(k->on_device && fb), "%s: fell back to the CPU at f16", k->name);
            CHECK_MSG(k->on_device || fb, "%s: ran on the device, not the CPU as docs/precision.md says", k->name);
            float *db16 = run_class(vkb16, k, x, &n, &fb);
            CHECK_MSG(!(k->on_device && fb), "%s: fell back to the CPU at bf16", k->name);
            if (d16 && db16) {
                v16 = norm_err(d16, r32, n32);
                vb16 = norm_err(db16, r32, n32);
                CHECK_MSG(v16 <= k->bound_f16, "%s: Vulkan f16 error %.3g > %.3g", k->name, v16, k->bound_f16);
                CHECK_MSG(vb16 <= k->bound_bf16, "%s: Vulkan bf16 error %.3g > %.3g", k->name, vb16, k->bound_bf16);
                /* the device against the CPU reference at the same precision:
                 * a summation order apart, so an ulp of the storage type */
                if (r16 && rb16) {
                    double d = norm_err(d16, r16, n32), db = norm_err(db16, rb16, n32);
                    CHECK_MSG(d <= 1e-3, "%s: Vulkan f16 vs CPU f16: %.3g", k->name, d);
                    CHECK_MSG(db <= 8e-3, "%s: Vulkan bf16 vs CPU bf16: %.3g", k->name, db);
                }
            }
            free(d16);
            free(db16);
        }
        if (print_table) {
            char a[32] = "-", b[32] = "-";
            if (v16 >= 0)
                snprintf(a, sizeof a, "%.1e", v16);
            if (vb16 >= 0)
                snprintf(b, sizeof b, "%.1e", vb16);
            printf("| %s | %.1e | %.1e | %s | %s |\n", k->name, e16, eb16, a, b);
        }
        free(r32);
        free(r16);
        free(rb16);
    }
    oi_simulator_free(cpu32);
    oi_simulator_free(cpu16);
    oi_simulator_free(cpub16);
    oi_simulator_free(vk16);
    oi_simulator_free(vkb16);
    free(x);
}

int main(int argc, char **argv) {
    print_table = argc > 1 && strcmp(argv[1], "--table") == 0;
    unsetenv("OPENINFER_PRECISION");
    oi_model *m = chain_model();
    if (m) {
        test_definition(m);
        test_gate(m);
    }
    oi_model_close(m);
    test_keep();
    oi_model *ops = op_model();
    if (ops)
        test_op_classes(ops);
    oi_model_close(ops);
    return check_result("test_precision");
}
