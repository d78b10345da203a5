/* test_concurrency.c - threads sharing one model, and consumer blocks
 * racing the entry block. Run under ThreadSanitizer by scripts/test.sh
 * (build-tsan, suite 'concurrency').
 *
 * 1. One model, opened once from a file (lazy tensor reads), is shared
 *    read-only by four executors on four threads, each running its own
 *    decode steps (ops, a layer loop over a prefix table, a KV table, a
 *    matmul big enough for the thread pool) with its own inputs. Every
 *    step's output is bit-identical to the same executor's serial run; in
 *    the last round the four executors also share one simulator.
 * 2. Threads look tensors up, read their data and build/validate graphs on
 *    the shared model at the same time; the lazy-load count is exact.
 * 3. yield/await: the entry yields three variables to three consumer
 *    blocks (each on its own thread) and keeps working until its await;
 *    two such executors run at once, for many steps. Every value is checked
 *    against plain C. */
#include "../openinfer.h"
#include "check.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { D = 16, LAYERS = 3, ROWS = 16, WIDE = 128, THREADS = 4, STEPS = 12 };

static float wk[LAYERS][D * D];
static float big[WIDE * WIDE];
static float bias[D];
static char model_path[256];
static oi_model *model;

OI_GRAPH(shared_decode,
  OI_DYNAMIC(
    OI_VAR(x, f32[1, D])
    OI_VAR(rows, f32[R, W])
  )
  OI_VOLATILE( OI_VAR(bias, f32[1, D]) )
  OI_CONSTANT(
    OI_VAR(Wk(l), f32[D, D], @pattern("layer.{l}.wk"))
    OI_VAR(big, f32[W, W])
    OI_VAR(alpha, f32, @ref("alpha"))
  )
  OI_PERSISTENT(
    OI_VAR(step, i32, @init(0))
    OI_VAR(len, i32, @init(0))
    OI_VAR(K(l, t), f32[1, D], @table, @fixed(t=64))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[1, D])
    OI_ASSIGN(k, f32[1, D])
    OI_ASSIGN(keys, f32[1, 1, D])
    OI_ASSIGN(acc, f32[1, D])
    OI_ASSIGN(wide, f32[R, W])
    OI_OP(add, x, bias) OI_TO(h)
    OI_OP(matmul, rows, big) OI_TO(wide)
    OI_CACHE_INCREMENT(len)
    OI_LOOP(layers, l, 0..n_layers,
      OI_OP(matmul, h, Wk[l]) OI_TO(k)
      OI_CACHE_WRITE(k, K[l, step])
      OI_CACHE_READ(K[l, 0..len], keys)
      OI_OP(mean_axis, keys, axes=[0]) OI_TO(acc)
      OI_OP(add, h, acc) OI_TO(h)
      OI_OP(mul, h, alpha) OI_TO(h)
    )
    OI_CACHE_INCREMENT(step)
    OI_RETURN()
  )
)

static void make_model(void) {
    for (int l = 0; l < LAYERS; l++)
        for (int i = 0; i < D * D; i++)
            wk[l][i] = 0.05f * (float)((i * 7 + l * 5) % 9 - 4);
    for (int i = 0; i < WIDE * WIDE; i++)
        big[i] = 0.01f * (float)((i * 13) % 11 - 5);
    for (int i = 0; i < D; i++)
        bias[i] = 0.125f * (float)(i % 4) - 0.2f;
    oi_writer *w = oi_writer_new();
    float alpha = 0.75f;
    uint64_t dims_w[2] = {D, D}, dims_big[2] = {WIDE, WIDE}, dims_b[2] = {1, D};
    CHECK_OK(oi_writer_add_sizevar(w, "D", D));
    CHECK_OK(oi_writer_add_sizevar(w, "R", ROWS));
    CHECK_OK(oi_writer_add_sizevar(w, "W", WIDE));
    CHECK_OK(oi_writer_add_sizevar(w, "n_layers", LAYERS));
    CHECK_OK(oi_writer_add_metadata_scalar(w, "alpha", OI_DTYPE_F32, &alpha));
    CHECK_OK(oi_writer_add_tensor(w, "bias", OI_DTYPE_F32, 2, dims_b, bias, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "big", OI_DTYPE_F32, 2, dims_big, big, NULL));
    for (int l = 0; l < LAYERS; l++) {
        char name[32];
        snprintf(name, sizeof name, "layer.%d.wk", l);
        CHECK_OK(oi_writer_add_tensor(w, name, OI_DTYPE_F32, 2, dims_w, wk[l], NULL));
    }
    snprintf(model_path, sizeof model_path, "/tmp/oi_test_concurrency_%d.oinf", (int)getpid());
    CHECK_OK(oi_writer_write_file(w, 2, model_path));
    oi_writer_free(w);
    model = oi_model_open(model_path);
    CHECK_MSG(model != NULL, "open: %s", oi_last_error());
    remove(model_path); /* the mapping stays valid */
}

/* ------------------------------------------------------------------ */
/* 1. executors sharing the model                                       */
/* ------------------------------------------------------------------ */

/* What one executor produced: h and a checksum of `wide`, per step. */
typedef struct run_result {
    float h[STEPS][D];
    double wide_sum[STEPS];
    int status;
    char error[512];
} run_result;

static void input_of(int who, int s, float *x, float *rows) {
    for (int i = 0; i < D; i++)
        x[i] = (float)((who * 31 + s * 7 + i * 3) % 13) * 0.1f - 0.6f;
    for (int i = 0; i < ROWS * WIDE; i++)
        rows[i] = (float)((who + s + i) % 7) * 0.25f - 0.75f;
}

/* One simulator shared by the executors of every thread (its thread pool
 * too), or NULL: each run makes its own. */
static oi_simulator *shared_sim;

static void run_decode(int who, run_result *out) {
    memset(out, 0, sizeof *out);
    oi_simulator *sim = shared_sim ? shared_sim : oi_simulator_new(model, OI_DEVICE_CPU);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, shared_decode()) : NULL;
    if (!e) {
        out->status = 1;
        snprintf(out->error, sizeof out->error, "setup: %s", oi_last_error());
    }
    static float rows[THREADS][ROWS * WIDE]; /* one buffer per `who` */
    for (int s = 0; e && s < STEPS; s++) {
        float x[D];
        input_of(who, s, x, rows[who]);
        oi_status st = oi_executor_insert(e, "x", OI_DTYPE_F32, x, D);
        if (st == OI_OK)
            st = oi_executor_insert(e, "rows", OI_DTYPE_F32, rows[who], ROWS * WIDE);
        if (st == OI_OK)
            st = oi_executor_run_step(e);
        oi_tensor_view h, wide;
        if (st == OI_OK)
            st = oi_executor_fetch(e, "h", OI_DTYPE_F32, &h);
        if (st == OI_OK && h.len == D)
            memcpy(out->h[s], h.data, sizeof out->h[s]);
        if (st == OI_OK)
            st = oi_executor_fetch(e, "wide", OI_DTYPE_F32, &wide);
        if (st == OI_OK)
            for (size_t i = 0; i < wide.len; i++)
                out->wide_sum[s] += ((const float *)wide.data)[i] * (double)(i % 5 + 1);
        if (st != OI_OK) {
            out->status = (int)st;
            snprintf(out->error, sizeof out->error, "step %d: %s", s, oi_last_error());
            break;
        }
    }
    oi_executor_free(e);
    if (sim != shared_sim)
        oi_simulator_free(sim);
}

typedef struct worker {
    pthread_t thread;
    int who;
    run_result result;
} worker;

static void *decode_thread(void *arg) {
    worker *w = (worker *)arg;
    run_decode(w->who, &w->result);
    return NULL;
}

static void test_shared_model(void) {
    static run_result serial[THREADS];
    static worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        run_decode(t, &serial[t]);
        CHECK_MSG(serial[t].status == 0, "serial %d: %s", t, serial[t].error);
    }
    /* the inputs differ, so do the outputs */
    CHECK(memcmp(serial[0].h, serial[1].h, sizeof serial[0].h) != 0);
    /* rounds 0-1: a simulator per executor; round 2: one simulator (and
     * its thread pool) for all four */
    for (int round = 0; round < 3; round++) {
        if (round == 2) {
            shared_sim = oi_simulator_new(model, OI_DEVICE_CPU);
            CHECK_MSG(shared_sim != NULL, "shared simulator: %s", oi_last_error());
        }
        for (int t = 0; t < THREADS; t++) {
            workers[t].who = t;
            CHECK(pthread_create(&workers[t].thread, NULL, decode_thread, &workers[t]) == 0);
        }
        for (int t = 0; t < THREADS; t++) {
            pthread_join(workers[t].thread, NULL);
            run_result *r = &workers[t].result;
            CHECK_MSG(r->status == 0, "thread %d: %s", t, r->error);
            CHECK_MSG(memcmp(r->h, serial[t].h, sizeof r->h) == 0, "round %d thread %d: h differs from the serial run",
                      round, t);
            CHECK_MSG(memcmp(r->wide_sum, serial[t].wide_sum, sizeof r->wide_sum) == 0,
                      "round %d thread %d: wide differs from the serial run", round, t);
        }
    }
    oi_simulator_free(shared_sim);
    shared_sim = NULL;
    printf("shared model: %d executors x %d steps x 3 rounds (the last on one simulator) identical to serial runs\n",
           THREADS, STEPS);
}

/* ------------------------------------------------------------------ */
/* 2. lookups, lazy reads and graph builds at the same time             */
/* ------------------------------------------------------------------ */

static int lookup_errors;

static void *lookup_thread(void *arg) {
    int who = *(const int *)arg;
    for (int i = 0; i < 200; i++) {
        char name[32];
        snprintf(name, sizeof name, "layer.%d.wk", (i + who) % LAYERS);
        const oi_tensor_info *t = oi_model_find_tensor(model, name);
        const void *data = NULL;
        if (!t || oi_model_tensor_data(model, t, &data) != OI_OK ||
            memcmp(data, wk[(i + who) % LAYERS], sizeof wk[0]) != 0)
            __atomic_add_fetch(&lookup_errors, 1, __ATOMIC_SEQ_CST);
        uint64_t v = 0;
        if (oi_model_size_of(model, "D", &v) != OI_OK || v != D)
            __atomic_add_fetch(&lookup_errors, 1, __ATOMIC_SEQ_CST);
        const oi_metadata_info *md = oi_model_find_metadata(model, "alpha");
        if (!md || md->type != OI_DTYPE_F32)
            __atomic_add_fetch(&lookup_errors, 1, __ATOMIC_SEQ_CST);
        if (oi_model_find_tensor(model, "missing") != NULL)
            __atomic_add_fetch(&lookup_errors, 1, __ATOMIC_SEQ_CST);
        if (i % 20 == 0) {
            oi_graph *g = oi_graph_build("copy", __FILE__, oi__stmts_shared_decode);
            if (!g || oi_graph_validate(g, model) != OI_OK)
                __atomic_add_fetch(&lookup_errors, 1, __ATOMIC_SEQ_CST);
            char *json = g ? oi_graph_to_json(g) : NULL;
            oi_graph *back = json ? oi_graph_from_json(json) : NULL;
            if (!back)
                __atomic_add_fetch(&lookup_errors, 1, __ATOMIC_SEQ_CST);
            oi_graph_free(back);
            oi_free(json);
            oi_graph_free(g);
        }
    }
    return NULL;
}

static void test_lookups(void) {
    /* a fresh mapping of the same file: nothing read yet */
    oi_model *saved = model;
    oi_writer *w = oi_writer_new();
    uint64_t dims_w[2] = {D, D}, dims_big[2] = {WIDE, WIDE}, dims_b[2] = {1, D};
    float alpha = 0.75f;
    CHECK_OK(oi_writer_add_sizevar(w, "D", D));
    CHECK_OK(oi_writer_add_sizevar(w, "R", ROWS));
    CHECK_OK(oi_writer_add_sizevar(w, "W", WIDE));
    CHECK_OK(oi_writer_add_sizevar(w, "n_layers", LAYERS));
    CHECK_OK(oi_writer_add_metadata_scalar(w, "alpha", OI_DTYPE_F32, &alpha));
    CHECK_OK(oi_writer_add_tensor(w, "bias", OI_DTYPE_F32, 2, dims_b, bias, NULL));
    CHECK_OK(oi_writer_add_tensor(w, "big", OI_DTYPE_F32, 2, dims_big, big, NULL));
    for (int l = 0; l < LAYERS; l++) {
        char name[32];
        snprintf(name, sizeof name, "layer.%d.wk", l);
        CHECK_OK(oi_writer_add_tensor(w, name, OI_DTYPE_F32, 2, dims_w, wk[l], NULL));
    }
    CHECK_OK(oi_writer_write_file(w, 2, model_path));
    oi_writer_free(w);
    model = oi_model_open(model_path);
    remove(model_path);
    CHECK_MSG(model != NULL, "reopen: %s", oi_last_error());
    if (model) {
        CHECK_EQ_INT(oi_model_loaded_tensor_count(model), 0);
        pthread_t threads[THREADS];
        int ids[THREADS];
        for (int t = 0; t < THREADS; t++) {
            ids[t] = t;
            CHECK(pthread_create(&threads[t], NULL, lookup_thread, &ids[t]) == 0);
        }
        for (int t = 0; t < THREADS; t++)
            pthread_join(threads[t], NULL);
        CHECK_EQ_INT(lookup_errors, 0);
        /* exactly the layer tensors were read, each counted once */
        CHECK_EQ_INT(oi_model_loaded_tensor_count(model), LAYERS);
        oi_model_close(model);
    }
    model = saved;
    printf("lookups: %d threads x 200 lookups, reads and graph builds\n", THREADS);
}

/* ------------------------------------------------------------------ */
/* 3. yield/await                                                       */
/* ------------------------------------------------------------------ */

OI_GRAPH(fan_out,
  OI_DYNAMIC( OI_VAR(x, f32[64]) OI_VAR(y, f32[64]) OI_VAR(z, f32[64]) )
  OI_CONSTANT( OI_VAR(two, f32, @init(2.0)) OI_VAR(three, f32, @init(3.0)) )
  OI_VOLATILE( OI_VAR(h, f32[64]) OI_VAR(out, f32[64]) )
  OI_BLOCK(entry,
    OI_YIELD(x, y, z)
    OI_OP(add, h, two) OI_TO(h)
    OI_OP(mul, h, three) OI_TO(h)
    OI_AWAIT(x, y, z)
    OI_OP(add, x, y) OI_TO(out)
    OI_OP(add, out, z) OI_TO(out)
    OI_OP(add, out, h) OI_TO(out)
    OI_RETURN()
  )
  OI_BLOCK(doubler,
    OI_AWAIT(x)
    OI_OP(mul, x, two) OI_TO(x)
    OI_YIELD(x)
  )
  OI_BLOCK(squarer,
    OI_AWAIT(y)
    OI_OP(mul, y, y) OI_TO(y)
    OI_YIELD(y)
  )
  OI_BLOCK(negator,
    OI_AWAIT(z)
    OI_OP(neg, z) OI_TO(z)
    OI_OP(add, z, three) OI_TO(z)
    OI_YIELD(z)
  )
)

enum { N = 64, FAN_STEPS = 150 };

typedef struct fan_worker {
    pthread_t thread;
    int who;
    int bad_steps;
    char error[512];
} fan_worker;

static void *fan_thread(void *arg) {
    fan_worker *w = (fan_worker *)arg;
    oi_simulator *sim = oi_simulator_new(NULL, OI_DEVICE_CPU);
    oi_executor *e = sim ? oi_simulator_make_executor(sim, fan_out()) : NULL;
    if (!e) {
        w->bad_steps = -1;
        snprintf(w->error, sizeof w->error, "setup: %s", oi_last_error());
    }
    for (int s = 0; e && s < FAN_STEPS; s++) {
        float x[N], y[N], z[N];
        for (int i = 0; i < N; i++) {
            x[i] = (float)(i + s + w->who);
            y[i] = (float)((i * s + w->who) % 9) - 4.0f;
            z[i] = 0.5f * (float)(i - s);
        }
        oi_status st = oi_executor_insert(e, "x", OI_DTYPE_F32, x, N);
        if (st == OI_OK)
            st = oi_executor_insert(e, "y", OI_DTYPE_F32, y, N);
        if (st == OI_OK)
            st = oi_executor_insert(e, "z", OI_DTYPE_F32, z, N);
        if (st == OI_OK)
            st = oi_executor_run_step(e);
        oi_tensor_view v;
        if (st == OI_OK)
            st = oi_executor_fetch(e, "out", OI_DTYPE_F32, &v);
        if (st != OI_OK) {
            snprintf(w->error, sizeof w->error, "step %d: %s", s, oi_last_error());
            w->bad_steps++;
            break;
        }
        /* out = 2x + y*y + (3 - z) + (0 + 2) * 3 */
        bool ok = v.len == N;
        for (int i = 0; ok && i < N; i++) {
            float want = 2.0f * x[i] + y[i] * y[i] + (3.0f - z[i]) + 6.0f;
            ok = fabsf(((const float *)v.data)[i] - want) <= 1e-4f * (1.0f + fabsf(want));
        }
        if (!ok) {
            if (!w->bad_steps)
                snprintf(w->error, sizeof w->error, "step %d: wrong values", s);
            w->bad_steps++;
        }
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    return NULL;
}

static void test_yield_await(void) {
    fan_worker workers[2];
    memset(workers, 0, sizeof workers);
    for (int t = 0; t < 2; t++) {
        workers[t].who = t;
        CHECK(pthread_create(&workers[t].thread, NULL, fan_thread, &workers[t]) == 0);
    }
    for (int t = 0; t < 2; t++) {
        pthread_join(workers[t].thread, NULL);
        CHECK_MSG(workers[t].bad_steps == 0, "fan-out executor %d: %d bad steps: %s", t, workers[t].bad_steps,
                  workers[t].error);
    }
    printf("yield/await: 2 executors x %d steps, 3 consumer threads each\n", FAN_STEPS);
}

int main(void) {
    if (!shared_decode() || !fan_out()) {
        fprintf(stderr, "graphs: %s\n", oi_last_error());
        return 1;
    }
    make_model();
    if (!model)
        return check_result("test_concurrency");
    test_shared_model();
    test_lookups();
    test_yield_await();
    oi_model_close(model);
    return check_result("test_concurrency");
}
