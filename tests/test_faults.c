/* test_faults.c - fault injection. Through oi_set_allocator, the N-th
 * allocation fails, for N = 1, 2, ... until the operation completes without
 * reaching N, along: writing a model, opening it (memory and file), building
 * a graph (statements, the builder, JSON), validating, making a simulator
 * and an executor, and running steps (insert, run_step, fetch) of a graph
 * with ops, a loop, a branch, cache tables and a yield/await consumer.
 *
 * For every N: the operation either fails with OI_ERROR_OUT_OF_MEMORY or
 * succeeds with the right result; the live allocation count through the
 * hooks comes back to where it was (nothing leaks; LSan checks the same in
 * the sanitizer build); and the same operation run again without failures
 * works (the process and, for steps, the executor stay usable).
 *
 * File I/O errors: every truncation of a model file, a missing file, a
 * directory, an unreadable file (skipped as root), an unwritable target.
 *
 * The expected step results are computed here in plain C from the inputs. */
#include "../openinfer.h"
#include "alloc_hooks.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

enum { D = 4, LAYERS = 2 };

/* ------------------------------------------------------------------ */
/* the model and the graph                                              */
/* ------------------------------------------------------------------ */

static float a_data[D] = {0.5f, -1.0f, 0.25f, 2.0f};
static float wk_data[LAYERS][D * D];
static const float alpha = 0.5f;

/* Fills the writer; returns false if a call failed (with its status). */
static oi_status fill_writer(oi_writer *w) {
    oi_status s;
    uint64_t dims2[2] = {D, D}, dims_a[2] = {1, D}, dims_q[1] = {8}, dims_decl[2] = {3, 5};
    if ((s = oi_writer_add_sizevar(w, "D", D)) != OI_OK) return s;
    if ((s = oi_writer_add_sizevar(w, "n_layers", LAYERS)) != OI_OK) return s;
    if ((s = oi_writer_add_metadata_scalar(w, "alpha", OI_DTYPE_F32, &alpha)) != OI_OK) return s;
    if ((s = oi_writer_add_metadata_string(w, "model.name", "fault model", 11)) != OI_OK) return s;
    uint8_t bits[2] = {0xA5, 0x01};
    if ((s = oi_writer_add_metadata_bitset(w, "mask", bits, 9)) != OI_OK) return s;
    int32_t nd[4] = {1, 2, 3, 4};
    uint64_t nd_dims[2] = {2, 2};
    if ((s = oi_writer_add_metadata_ndarray(w, "grid", OI_DTYPE_I32, 2, nd_dims, nd)) != OI_OK) return s;
    if ((s = oi_writer_add_tensor(w, "a", OI_DTYPE_F32, 2, dims_a, a_data, NULL)) != OI_OK) return s;
    for (int l = 0; l < LAYERS; l++) {
        char name[32];
        snprintf(name, sizeof name, "layer.%d.wk", l);
        if ((s = oi_writer_add_tensor(w, name, OI_DTYPE_F32, 2, dims2, wk_data[l], NULL)) != OI_OK) return s;
    }
    int8_t q[8] = {-4, -3, -2, -1, 0, 1, 2, 3};
    float scale = 0.125f;
    oi_quant quant;
    memset(&quant, 0, sizeof quant);
    quant.scheme = OI_QUANT_SYMMETRIC;
    quant.scale_mode = OI_QUANT_PER_TENSOR;
    quant.zp_mode = OI_QUANT_NONE;
    quant.scale_count = 1;
    quant.scales = &scale;
    if ((s = oi_writer_add_tensor(w, "quantized", OI_DTYPE_I8, 1, dims_q, q, &quant)) != OI_OK) return s;
    return oi_writer_add_tensor(w, "declared", OI_DTYPE_F16, 2, dims_decl, NULL, NULL);
}

OI_GRAPH(fault_graph,
  OI_DYNAMIC( OI_VAR(x, f32[1, D]) )
  OI_VOLATILE( OI_VAR(a, f32[1, D]) )
  OI_CONSTANT(
    OI_VAR(alpha, f32, @ref("alpha"))
    OI_VAR(Wk(l), f32[D, D], @pattern("layer.{l}.wk"))
  )
  OI_PERSISTENT(
    OI_VAR(step, i32, @init(0))
    OI_VAR(len, i32, @init(0))
    OI_VAR(K(l, t), f32[1, D], @table, @fixed(t=16))
  )
  OI_BLOCK(entry,
    OI_ASSIGN(h, f32[1, D])
    OI_ASSIGN(k, f32[1, D])
    OI_ASSIGN(keys, f32[1, 1, D])
    OI_ASSIGN(acc, f32[1, D]) OI_ASSIGN(flat, f32[D])
    OI_OP(add, x, a) OI_WITH(placement="blas", speed=1) OI_TO(h) /* opens blas (or warns), unknown hint */
    OI_OP(reshape, h, shape=[1*D]) OI_TO(flat) /* a size in a setting */
    OI_CACHE_INCREMENT(len)
    OI_SCOPE(encoder,
      OI_LOOP(layers, l, 0..n_layers,
        OI_SCOPE(attention, OI_OP(matmul, h, Wk[l]) OI_WITH(placement="cpu", fuse=false) OI_TO(k))
        OI_CACHE_WRITE(k, K[l, step])
        OI_CACHE_READ(K[l, 0..len], keys)
        OI_OP(sum_axis, keys, axes=[0]) OI_TO(acc)
        OI_OP(add, h, acc) OI_TO(h)
      )
    )
    OI_CACHE_INCREMENT(step)
    OI_BRANCH(scale)
    OI_YIELD(h)
    OI_AWAIT(h)
    OI_RETURN()
  )
  OI_BLOCK(scale,
    OI_OP(mul, h, alpha) OI_TO(h)
    OI_RETURN()
  )
  OI_BLOCK(doubler,
    OI_AWAIT(h)
    OI_OP(add, h, h) OI_TO(h)
    OI_YIELD(h)
  )
)

/* The step input of step s. */
static void input_of(int s, float *x) {
    for (int i = 0; i < D; i++)
        x[i] = (float)((s * 3 + i) % 5) - 2.0f;
}

/* What the graph computes for steps 0..steps-1, in plain C (h after the last). */
static void reference(int steps, float *h_out) {
    float K[LAYERS][16][D];
    float h[D];
    for (int s = 0; s < steps; s++) {
        float x[D];
        input_of(s, x);
        for (int i = 0; i < D; i++)
            h[i] = x[i] + a_data[i];
        for (int l = 0; l < LAYERS; l++) {
            float k[D];
            for (int j = 0; j < D; j++) {
                float acc = 0;
                for (int i = 0; i < D; i++)
                    acc += h[i] * wk_data[l][i * D + j];
                k[j] = acc;
            }
            memcpy(K[l][s], k, sizeof k);
            for (int j = 0; j < D; j++) {
                float sum = 0;
                for (int t = 0; t <= s; t++)
                    sum += K[l][t][j];
                h[j] += sum;
            }
        }
        for (int i = 0; i < D; i++)
            h[i] = (h[i] * alpha) * 2.0f;
    }
    memcpy(h_out, h, sizeof h);
}

static uint8_t *model_bytes;
static size_t model_size;
static char model_path[256];
static char *graph_json;

/* ------------------------------------------------------------------ */
/* the sweep                                                            */
/* ------------------------------------------------------------------ */

/* One run of a case: arms the hooks with `fail_at` around the operation
 * under test (setup and cleanup run without failures), returns its status,
 * and, if it failed, runs it again without failures (status in *retry). */
typedef oi_status (*case_fn)(long fail_at, oi_status *retry);

/* The message of the armed phase, kept before the retry writes others. */
static char armed_error[2048];
static void disarm(void) {
    hooks_disarm();
    snprintf(armed_error, sizeof armed_error, "%s", oi_last_error());
}

static void sweep(const char *name, case_fn run) {
    long n;
    int failures = 0, odd = 0;
    for (n = 1; n < 200000; n++) {
        long blocks0 = hooks_live_blocks();
        oi_status retry = OI_OK;
        oi_status s = run(n, &retry);
        bool hit = hooks_hit();
        long leaked = hooks_live_blocks() - blocks0;
        CHECK_MSG(leaked == 0, "%s: failing allocation %ld: %ld blocks leaked (status %s)", name, n, leaked,
                  oi_status_name(s));
        if (!hit) {
            CHECK_MSG(s == OI_OK, "%s: without a failure: %s: %s", name, oi_status_name(s), oi_last_error());
            break;
        }
        if (s != OI_OK) {
            failures++;
            if (s != OI_ERROR_OUT_OF_MEMORY) {
                odd++;
                CHECK_MSG(s == OI_ERROR_OUT_OF_MEMORY, "%s: failing allocation %ld: %s (want OUT_OF_MEMORY): %s",
                          name, n, oi_status_name(s), armed_error);
            } else {
                CHECK_MSG(strstr(armed_error, "memory") != NULL, "%s: failing allocation %ld: message \"%s\"",
                          name, n, armed_error);
            }
        }
        CHECK_MSG(retry == OI_OK, "%s: after failing allocation %ld the retry failed: %s: %s", name, n,
                  oi_status_name(retry), oi_last_error());
    }
    printf("%-28s %5ld allocations swept, %5d failed cleanly, %d with another status\n", name, n - 1, failures, odd);
    fflush(stdout);
}

/* ---- writer ---- */
static oi_status writer_once(void) {
    oi_writer *w = oi_writer_new();
    if (!w)
        return OI_ERROR_OUT_OF_MEMORY;
    oi_status s = fill_writer(w);
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (s == OI_OK)
        s = oi_writer_to_memory(w, 2, &bytes, &size);
    if (s == OI_OK && (size != model_size || memcmp(bytes, model_bytes, size) != 0)) {
        CHECK_MSG(0, "writer produced different bytes (%zu vs %zu)", size, model_size);
        s = OI_ERROR_RUNTIME;
    }
    oi_free(bytes);
    oi_writer_free(w);
    return s;
}

static oi_status case_writer(long fail_at, oi_status *retry) {
    hooks_arm(fail_at);
    oi_status s = writer_once();
    disarm();
    if (s != OI_OK)
        *retry = writer_once();
    return s;
}

/* ---- model open ---- */
static oi_status check_model(oi_model *m) {
    if (oi_model_tensor_count(m) != 5 || oi_model_metadata_count(m) != 4 || oi_model_sizevar_count(m) != 2) {
        CHECK_MSG(0, "model tables: %zu tensors %zu metadata %zu sizes", oi_model_tensor_count(m),
                  oi_model_metadata_count(m), oi_model_sizevar_count(m));
        return OI_ERROR_RUNTIME;
    }
    const char *text;
    size_t len;
    oi_status s = oi_model_metadata_string(m, "model.name", &text, &len);
    if (s != OI_OK)
        return s;
    if (len != 11 || memcmp(text, "fault model", 11) != 0)
        return OI_ERROR_RUNTIME;
    for (size_t i = 0; i < oi_model_tensor_count(m); i++) {
        const oi_tensor_info *t = oi_model_tensor_at(m, i);
        const void *data = NULL;
        if (!t)
            return OI_ERROR_RUNTIME;
        if (!t->has_data)
            continue;
        if ((s = oi_model_tensor_data(m, t, &data)) != OI_OK)
            return s;
    }
    const oi_tensor_info *wk = oi_model_find_tensor(m, "layer.1.wk");
    const void *data = NULL;
    if (!wk || oi_model_tensor_data(m, wk, &data) != OI_OK)
        return wk ? OI_ERROR_RUNTIME : OI_ERROR_NOT_FOUND;
    if (memcmp(data, wk_data[1], sizeof wk_data[1]) != 0) {
        CHECK_MSG(0, "layer.1.wk has other bytes");
        return OI_ERROR_RUNTIME;
    }
    return OI_OK;
}

static oi_status open_memory_once(void) {
    oi_model *m = oi_model_open_memory(model_bytes, model_size);
    if (!m)
        return oi_last_error()[0] && strstr(oi_last_error(), "memory") ? OI_ERROR_OUT_OF_MEMORY : OI_ERROR_FORMAT;
    oi_status s = check_model(m);
    oi_model_close(m);
    return s;
}

static oi_status open_file_once(void) {
    oi_model *m = oi_model_open(model_path);
    if (!m)
        return oi_last_error()[0] && strstr(oi_last_error(), "memory") ? OI_ERROR_OUT_OF_MEMORY : OI_ERROR_IO;
    oi_status s = check_model(m);
    oi_model_close(m);
    return s;
}

static oi_status case_open_memory(long fail_at, oi_status *retry) {
    hooks_arm(fail_at);
    oi_status s = open_memory_once();
    disarm();
    if (s != OI_OK)
        *retry = open_memory_once();
    return s;
}

static oi_status case_open_file(long fail_at, oi_status *retry) {
    hooks_arm(fail_at);
    oi_status s = open_file_once();
    disarm();
    if (s != OI_OK)
        *retry = open_file_once();
    return s;
}

/* ---- graph building ---- */
static oi_status graph_status(oi_graph *g) {
    if (g) {
        oi_graph_free(g);
        return OI_OK;
    }
    return strstr(oi_last_error(), "memory") ? OI_ERROR_OUT_OF_MEMORY : OI_ERROR_FORMAT;
}

static oi_status build_stmts_once(void) { return graph_status(oi_graph_build("fault_graph", __FILE__, oi__stmts_fault_graph)); }

static oi_status case_build_stmts(long fail_at, oi_status *retry) {
    hooks_arm(fail_at);
    oi_status s = build_stmts_once();
    disarm();
    if (s != OI_OK)
        *retry = build_stmts_once();
    return s;
}

/* The builder: every call's status is kept; finish reports the failure. */
static oi_status build_builder_once(void) {
    oi_graph_builder *b = oi_graph_builder_new("built", "faults.cfg");
    if (!b)
        return OI_ERROR_OUT_OF_MEMORY;
    oi_status first = OI_OK;
#define KEEP(call) do { oi_status s_ = (call); if (first == OI_OK) first = s_; } while (0)
    KEEP(oi_graph_builder_section(b, OI_DSL_SECTION_DYNAMIC));
    KEEP(oi_graph_builder_var(b, "x, f32[1, D]"));
    KEEP(oi_graph_builder_end(b));
    KEEP(oi_graph_builder_section(b, OI_DSL_SECTION_PERSISTENT));
    KEEP(oi_graph_builder_var(b, "step, i32, @init(0)"));
    KEEP(oi_graph_builder_var(b, "K(l, t), f32[1, D], @table, @fixed(t=16)"));
    KEEP(oi_graph_builder_end(b));
    KEEP(oi_graph_builder_block(b, "entry"));
    KEEP(oi_graph_builder_stmt(b, OI_DSL_ASSIGN, "", "h, f32[1, D]"));
    KEEP(oi_graph_builder_loop(b, "layers", "l", "0..n_layers"));
    KEEP(oi_graph_builder_scope(b, "attention"));
    KEEP(oi_graph_builder_stmt(b, OI_DSL_OP, "relu", "x, clamp_max=6.0"));
    KEEP(oi_graph_builder_stmt(b, OI_DSL_WITH, "", "placement=\"cpu\", group=\"g\""));
    KEEP(oi_graph_builder_stmt(b, OI_DSL_TO, "", "h"));
    KEEP(oi_graph_builder_end(b));
    KEEP(oi_graph_builder_stmt(b, OI_DSL_CACHE_WRITE, "", "h, K[l, step]"));
    KEEP(oi_graph_builder_end(b));
    KEEP(oi_graph_builder_stmt(b, OI_DSL_CACHE_INCREMENT, "", "step"));
    KEEP(oi_graph_builder_stmt(b, OI_DSL_RETURN, "", ""));
    KEEP(oi_graph_builder_end(b));
#undef KEEP
    oi_graph *g = oi_graph_builder_finish(b);
    oi_status s = graph_status(g);
    if (s == OI_OK && first != OI_OK) {
        CHECK_MSG(0, "builder: a call failed (%s) but finish built the graph", oi_status_name(first));
        return OI_ERROR_RUNTIME;
    }
    return s;
}

static oi_status case_builder(long fail_at, oi_status *retry) {
    hooks_arm(fail_at);
    oi_status s = build_builder_once();
    disarm();
    if (s != OI_OK)
        *retry = build_builder_once();
    return s;
}

static oi_status from_json_once(void) {
    oi_graph *g = oi_graph_from_json(graph_json);
    if (!g)
        return graph_status(NULL);
    char *again = oi_graph_to_json(g);
    oi_graph_free(g);
    if (!again)
        return OI_ERROR_OUT_OF_MEMORY;
    bool same = strcmp(again, graph_json) == 0;
    oi_free(again);
    CHECK_MSG(same, "graph JSON does not round-trip");
    return same ? OI_OK : OI_ERROR_RUNTIME;
}

static oi_status case_from_json(long fail_at, oi_status *retry) {
    hooks_arm(fail_at);
    oi_status s = from_json_once();
    disarm();
    if (s != OI_OK)
        *retry = from_json_once();
    return s;
}

static oi_status to_text_once(void) {
    char *json = oi_graph_to_json(fault_graph());
    char *dot = json ? oi_graph_to_dot(fault_graph()) : NULL;
    oi_status s = json && dot ? OI_OK : OI_ERROR_OUT_OF_MEMORY;
    if (json && strcmp(json, graph_json) != 0) {
        CHECK_MSG(0, "to_json differs");
        s = OI_ERROR_RUNTIME;
    }
    oi_free(json);
    oi_free(dot);
    return s;
}

static oi_status case_to_text(long fail_at, oi_status *retry) {
    hooks_arm(fail_at);
    oi_status s = to_text_once();
    disarm();
    if (s != OI_OK)
        *retry = to_text_once();
    return s;
}

/* ---- validation, simulator, executor ---- */
static oi_model *shared_model;

static oi_status validate_once(void) { return oi_graph_validate(fault_graph(), shared_model); }

static oi_status case_validate(long fail_at, oi_status *retry) {
    hooks_arm(fail_at);
    oi_status s = validate_once();
    disarm();
    if (s != OI_OK)
        *retry = validate_once();
    return s;
}

/* The simulator's precision: 0 (f32), then f16 for a second sweep of the
 * steps (activations widened and narrowed around every op). */
static oi_dtype sweep_precision;

static oi_simulator *new_sim(void) {
    oi_simulator_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.device = OI_DEVICE_CPU;
    desc.precision = sweep_precision;
    desc.n_threads = 2; /* a thread pool of its own: its creation is swept too */
    return oi_simulator_new_desc(shared_model, &desc);
}

static oi_status executor_once(void) {
    oi_simulator *sim = new_sim();
    if (!sim)
        return strstr(oi_last_error(), "memory") ? OI_ERROR_OUT_OF_MEMORY : OI_ERROR_UNAVAILABLE;
    oi_executor *e = oi_simulator_make_executor(sim, fault_graph());
    oi_status s = e ? OI_OK : strstr(oi_last_error(), "memory") ? OI_ERROR_OUT_OF_MEMORY : OI_ERROR_VALIDATION;
    oi_executor_free(e);
    oi_simulator_free(sim);
    return s;
}

static oi_status case_executor(long fail_at, oi_status *retry) {
    hooks_arm(fail_at);
    oi_status s = executor_once();
    disarm();
    if (s != OI_OK)
        *retry = executor_once();
    return s;
}

/* ---- steps ---- */
/* One step: insert the input of step s, run, fetch h (and the table K). */
static oi_status one_step(oi_executor *e, int s, float *h_out) {
    float x[D];
    input_of(s, x);
    oi_status st = oi_executor_insert(e, "x", OI_DTYPE_F32, x, D);
    if (st == OI_OK)
        st = oi_executor_run_step(e);
    oi_tensor_view v;
    if (st == OI_OK)
        st = oi_executor_fetch(e, "h", OI_DTYPE_F32, &v);
    if (st == OI_OK) {
        if (v.len != D)
            return OI_ERROR_RUNTIME;
        memcpy(h_out, v.data, sizeof(float) * D);
        st = oi_executor_fetch(e, "K", OI_DTYPE_F32, &v);
    }
    return st;
}

static bool same_h(const float *a, const float *b) {
    float tol = sweep_precision == OI_DTYPE_F16 ? 1e-2f : 1e-4f; /* f16: a few roundings of 2^-11 */
    for (int i = 0; i < D; i++)
        if (fabsf(a[i] - b[i]) > tol * (1.0f + fabsf(b[i])))
            return false;
    return true;
}

/* The executor and its first step run without failures; steps 2 and 3
 * (insert, run, fetch) run armed. After a failure the same executor runs
 * another step, and a fresh executor runs three steps with the reference
 * results. */
static oi_status case_steps(long fail_at, oi_status *retry) {
    oi_simulator *sim = new_sim();
    oi_executor *e = sim ? oi_simulator_make_executor(sim, fault_graph()) : NULL;
    float h[D], want[D];
    oi_status s = e ? one_step(e, 0, h) : OI_ERROR_RUNTIME;
    CHECK_MSG(s == OI_OK, "steps setup: %s", oi_last_error());
    if (s != OI_OK) {
        oi_executor_free(e);
        oi_simulator_free(sim);
        return s;
    }
    hooks_arm(fail_at);
    s = one_step(e, 1, h);
    if (s == OI_OK)
        s = one_step(e, 2, h);
    disarm();
    if (s == OI_OK) {
        reference(3, want);
        CHECK_MSG(same_h(h, want), "steps: a step that hit no error computed h = [%g %g %g %g], want [%g %g %g %g]",
                  (double)h[0], (double)h[1], (double)h[2], (double)h[3], (double)want[0], (double)want[1],
                  (double)want[2], (double)want[3]);
    } else {
        /* the executor stays usable: another step runs */
        *retry = one_step(e, 3, h);
        oi_executor_free(e);
        e = oi_simulator_make_executor(sim, fault_graph());
        for (int i = 0; i < 3 && *retry == OI_OK; i++)
            *retry = e ? one_step(e, i, h) : OI_ERROR_RUNTIME;
        reference(3, want);
        if (*retry == OI_OK && !same_h(h, want)) {
            CHECK_MSG(0, "steps: a fresh executor after a failure computed other values");
            *retry = OI_ERROR_RUNTIME;
        }
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    return s;
}

/* ------------------------------------------------------------------ */
/* file I/O errors                                                      */
/* ------------------------------------------------------------------ */

static void test_file_errors(void) {
    char path[300];
    snprintf(path, sizeof path, "/tmp/oi_test_faults_trunc_%d.oinf", (int)getpid());
    /* every truncation of the file: an error, never a crash or a leak */
    int rejected = 0;
    for (size_t len = 0; len < model_size; len++) {
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        if (!f)
            return;
        fwrite(model_bytes, 1, len, f);
        fclose(f);
        long blocks0 = hooks_live_blocks();
        oi_model *m = oi_model_open(path);
        if (m) {
            CHECK_MSG(0, "a model truncated to %zu of %zu bytes opened", len, model_size);
            oi_model_close(m);
        } else {
            rejected++;
            CHECK_MSG(oi_last_error()[0] != '\0', "truncated to %zu: no message", len);
        }
        CHECK_EQ_INT(hooks_live_blocks(), blocks0);
        /* the same bytes in memory */
        m = oi_model_open_memory(model_bytes, len);
        CHECK_MSG(m == NULL, "%zu bytes in memory opened", len);
        oi_model_close(m);
        CHECK_EQ_INT(hooks_live_blocks(), blocks0);
    }
    printf("truncated files: %d of %zu rejected\n", rejected, model_size);
    remove(path);

    /* missing file */
    long blocks0 = hooks_live_blocks();
    snprintf(path, sizeof path, "/tmp/oi_test_faults_missing_%d/none.oinf", (int)getpid());
    CHECK(oi_model_open(path) == NULL);
    CHECK_STR_CONTAINS(oi_last_error(), "none.oinf");
    oi_model *m = NULL;
    /* a directory */
    CHECK(oi_model_open("/tmp") == NULL);
    CHECK_MSG(oi_last_error()[0] != '\0', "directory: no message");
    /* an unreadable file (root reads everything: skipped then) */
    snprintf(path, sizeof path, "/tmp/oi_test_faults_noread_%d.oinf", (int)getpid());
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (f) {
        fwrite(model_bytes, 1, model_size, f);
        fclose(f);
        chmod(path, 0);
        if (geteuid() != 0) {
            m = oi_model_open(path);
            CHECK(m == NULL);
            CHECK_STR_CONTAINS(oi_last_error(), "noread");
            oi_model_close(m);
        } else {
            printf("unreadable file: skipped (running as root)\n");
        }
        chmod(path, 0600);
        m = oi_model_open(path); /* readable again: opens */
        CHECK_MSG(m != NULL, "reopen: %s", oi_last_error());
        oi_model_close(m);
        remove(path);
    }
    /* writing where nothing can be written */
    oi_writer *w = oi_writer_new();
    CHECK_OK(fill_writer(w));
    snprintf(path, sizeof path, "/tmp/oi_test_faults_missing_%d/out.oinf", (int)getpid());
    CHECK_STATUS(oi_writer_write_file(w, 2, path), OI_ERROR_IO);
    CHECK_STATUS(oi_writer_write_file(w, 2, "/tmp"), OI_ERROR_IO);
    oi_writer_free(w);
    CHECK_EQ_INT(hooks_live_blocks(), blocks0);
}

/* ------------------------------------------------------------------ */

int main(void) {
    for (int l = 0; l < LAYERS; l++)
        for (int i = 0; i < D * D; i++)
            wk_data[l][i] = 0.1f * (float)((i * 7 + l * 3) % 5 - 2);
    if (!fault_graph()) {
        fprintf(stderr, "fault_graph: %s\n", oi_last_error());
        return 1;
    }
    hooks_install();

    oi_writer *w = oi_writer_new();
    CHECK_OK(fill_writer(w));
    CHECK_OK(oi_writer_to_memory(w, 2, &model_bytes, &model_size));
    snprintf(model_path, sizeof model_path, "/tmp/oi_test_faults_%d.oinf", (int)getpid());
    CHECK_OK(oi_writer_write_file(w, 2, model_path));
    oi_writer_free(w);
    shared_model = oi_model_open_memory(model_bytes, model_size);
    CHECK_MSG(shared_model != NULL, "model: %s", oi_last_error());
    graph_json = oi_graph_to_json(fault_graph());
    CHECK(graph_json != NULL);
    if (!shared_model || !graph_json)
        return check_result("test_faults");

    /* warm-up: whatever a first run creates once for the process (the
     * thread pool...) is not counted as a leak of the sweep */
    oi_status ignored;
    case_steps(0, &ignored);

    sweep("writer", case_writer);
    sweep("model open (memory)", case_open_memory);
    sweep("model open (file)", case_open_file);
    sweep("graph build (statements)", case_build_stmts);
    sweep("graph build (builder)", case_builder);
    sweep("graph from JSON", case_from_json);
    sweep("graph to JSON/DOT", case_to_text);
    sweep("validation", case_validate);
    sweep("simulator + executor", case_executor);
    sweep("steps", case_steps);
    sweep_precision = OI_DTYPE_F16;
    sweep("steps (precision f16)", case_steps);
    sweep_precision = OI_DTYPE_INVALID;
    test_file_errors();

    oi_model_close(shared_model);
    oi_free(graph_json);
    oi_free(model_bytes);
    remove(model_path);
    printf("allocations through the hooks: %ld, live at the end: %ld\n", hooks_allocations(), hooks_live_blocks());
    oi_set_allocator(NULL);
    return check_result("test_faults");
}
