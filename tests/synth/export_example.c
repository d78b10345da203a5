/* export_example.c - one example program's graph, a model and the
 * simulator's values, as files for the synthesizer's parity test
 * (check_examples.py). Built once per example with
 *     -DOI_EXAMPLE_FILE="examples/NAME.c" -DOI_EXAMPLE_GRAPH=graph_fn
 *     [-DOI_EXAMPLE_MODEL=model_fn]   (the example's own model builder)
 *
 *   export_example DIR STEPS [MODEL [INPUTS]]
 * writes DIR/graph.json, DIR/model.oinf, DIR/in/VAR.npy (seeded values for
 * every dynamic variable) and, after STEPS simulator steps with those
 * inputs inserted before each, DIR/sim/VAR.npy for every variable with a
 * shape known before the step (temporaries too: the test fetches what
 * the emitted code keeps) and every persistent table (stacked, as
 * oi_executor_fetch gives it). Without a model builder of its own, the model
 * holds B = 16 and a seeded f32[B] tensor `a` (minimal's model).
 * MODEL: a model file made elsewhere (a real model's importer), linked as
 * DIR/model.oinf ("-": the exporter's own); INPUTS: a folder of VAR.npy
 * that replace the seeded values (token ids and masks a model needs valid,
 * a chunk of real speech). */
#define main oi_example_main
#include OI_EXAMPLE_FILE
#undef main

#include "../../openinfer_impl/plan.h" /* the slots: which variables, their shapes */
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "../../openinfer_impl/npy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h> /* symlink */

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f)
        return 1;
    size_t n = strlen(text);
    int bad = fwrite(text, 1, n, f) != n;
    return fclose(f) != 0 || bad;
}

#ifdef OI_EXAMPLE_MODEL

/* The example's own model, written byte for byte. */
static int write_model(const char *path) {
    uint8_t *bytes = NULL;
    oi_model *m = OI_EXAMPLE_MODEL(&bytes);
    if (!m)
        return 1;
    const uint8_t *raw;
    uint64_t size, data_at;
    oi__model_raw_bytes(m, &raw, &size, &data_at);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(raw, 1, (size_t)size, f) != (size_t)size;
    if (f)
        bad |= fclose(f) != 0;
    oi_model_close(m);
    oi_free(bytes);
    return bad;
}
#elif defined(OI_EXAMPLE_MODEL_FILE)
/* The model file the example reads, copied. */
static int write_model(const char *path) {
    oi_model *m = oi_model_open(OI_EXAMPLE_MODEL_FILE);
    if (!m)
        return 1;
    const uint8_t *raw;
    uint64_t size, data_at;
    oi__model_raw_bytes(m, &raw, &size, &data_at);
    FILE *f = fopen(path, "wb");
    int bad = !f || fwrite(raw, 1, (size_t)size, f) != (size_t)size;
    if (f)
        bad |= fclose(f) != 0;
    oi_model_close(m);
    return bad;
}
#else
/* Sizes and tensors for examples that read their model from a file. */
static int write_model(const char *path) {
    oi_writer *w = oi_writer_new();
    if (!w)
        return 1;
    uint32_t state = 7;
    enum { B = 16 };
    oi_writer_add_sizevar(w, "B", B);
    float a[B];
    for (int i = 0; i < B; i++) {
        state = state * 1664525u + 1013904223u;
        a[i] = (float)(state >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
    uint64_t dims[1] = {B};
    oi_writer_add_tensor(w, "a", OI_DTYPE_F32, 1, dims, a, NULL);
    oi_status st = oi_writer_write_file(w, 2, path);
    oi_writer_free(w);
    return st != OI_OK;
}
#endif

static char *path_in(const char *dir, const char *a, const char *b) {
    size_t n = strlen(dir) + strlen(a) + strlen(b) + 3;
    char *p = (char *)malloc(n);
    if (p)
        snprintf(p, n, "%s/%s%s", dir, a, b);
    return p;
}

/* DIR/SUB/NAME.npy */
static char *npy_path(const char *dir, const char *sub, const char *name) {
    size_t n = strlen(dir) + strlen(sub) + strlen(name) + 8;
    char *p = (char *)malloc(n);
    if (p)
        snprintf(p, n, "%s/%s/%s.npy", dir, sub, name);
    return p;
}

/* The dtype a variable's .npy file holds: its own, bf16 as f32 (as
 * `openinfer run` and the emitted driver read and write it). */
static oi_dtype npy_form(oi_dtype t) { return t == OI_DTYPE_BF16 ? OI_DTYPE_F32 : t; }

/* INPUTS/VAR.npy for a dynamic variable, when it has the variable's .npy
 * dtype and element count: copied to *typed (malloc'd). */
static int read_input(const char *inputs, const oi__slot *sl, int64_t n, void **typed) {
    char *file = npy_path(inputs, "", sl->name);
    oi_npy_array a;
    oi_npy_error err;
    memset(&a, 0, sizeof a);
    int bad = !file || oi_npy_read(file, &a, &err) != OI_NPY_OK;
    if (bad)
        fprintf(stderr, "export_example: %s\n", file ? err.message : "out of memory");
    else if ((oi_dtype)a.dtype != npy_form(sl->dtype) || a.count != (uint64_t)n) {
        fprintf(stderr, "export_example: %s is not %s with %lld elements\n", file, oi_dtype_name(npy_form(sl->dtype)),
                (long long)n);
        bad = 1;
    } else {
        memcpy(*typed, a.data, oi_dtype_nbytes(npy_form(sl->dtype), (uint64_t)n));
    }
    oi_npy_array_free(&a);
    free(file);
    return bad;
}

/* Seeded inputs in [-2, 2) (integers: 0..4), one file per dynamic variable;
 * or INPUTS/VAR.npy where `inputs` names a folder. Each is inserted as its
 * file holds it (bf16 as f32: the simulator rounds it, as `openinfer run`). */
static int write_inputs(const char *dir, const oi__plan *plan, oi_executor *exec, const char *inputs) {
    uint32_t state = 12345;
    for (int i = 0; i < (int)arrlen(plan->slots); i++) {
        const oi__slot *sl = &plan->slots[i];
        if (!sl->decl || sl->kind != OI__MEM_DYNAMIC || sl->dynamic_shape)
            continue;
        int64_t n = oi__shape_numel(sl->ndim, sl->shape);
        double *v = (double *)malloc((size_t)n * sizeof *v + 1);
        void *typed = malloc((size_t)n * 8 + 1);
        if (!v || !typed)
            return 1;
        for (int64_t e = 0; e < n; e++) {
            state = state * 1664525u + 1013904223u;
            double u = (double)(state >> 8) / 16777216.0;
            v[e] = oi__dtype_is_float(sl->dtype) ? u * 4.0 - 2.0 : (double)(int)(u * 5.0);
            oi__store_f64(npy_form(sl->dtype), typed, e, v[e]);
        }
        if (inputs && read_input(inputs, sl, n, &typed) != 0) {
            free(v);
            free(typed);
            return 1;
        }
        uint64_t shape[OI_MAX_DIMS];
        for (int d = 0; d < sl->ndim; d++)
            shape[d] = (uint64_t)sl->shape[d];
        char *file = npy_path(dir, "in", sl->name);
        oi_dtype form = npy_form(sl->dtype);
        int bad = !file || oi_npy_write(file, (oi_npy_dtype)form, sl->ndim, shape, typed, NULL) != OI_NPY_OK ||
                  oi_executor_insert(exec, sl->name, form, typed, (size_t)n) != OI_OK;
        free(file);
        free(v);
        free(typed);
        if (bad)
            return 1;
    }
    return 0;
}

static int write_values(const char *dir, const oi__plan *plan, oi_executor *exec) {
    for (int i = 0; i < (int)arrlen(plan->slots); i++) {
        const oi__slot *sl = &plan->slots[i];
        if (sl->is_prefix)
            continue;
        oi_tensor_view view;
        oi_dtype form = npy_form(sl->dtype);
        if (oi_executor_fetch(exec, sl->name, form, &view) != OI_OK)
            continue; /* never made in this step (a branch not taken) */
        uint64_t shape[OI_MAX_DIMS];
        for (int d = 0; d < view.ndim; d++)
            shape[d] = (uint64_t)view.shape[d];
        char *file = npy_path(dir, "sim", sl->name);
        int bad = !file || oi_npy_write(file, (oi_npy_dtype)form, view.ndim, shape, view.data, NULL) != OI_NPY_OK;
        free(file);
        if (bad)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: %s DIR STEPS [MODEL [INPUTS]]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1], *model_file = argc > 3 && strcmp(argv[3], "-") != 0 ? argv[3] : NULL;
    const char *inputs = argc > 4 ? argv[4] : NULL;
    int steps = atoi(argv[2]);
    char *graph_path = path_in(dir, "graph.json", ""), *model_path = path_in(dir, "model.oinf", "");
    char *in_dir = path_in(dir, "in", ""), *sim_dir = path_in(dir, "sim", "");
    const oi_graph *g = OI_EXAMPLE_GRAPH();
    char *json = g ? oi_graph_to_json(g) : NULL;
    oi_model *m = NULL;
    oi__plan *plan = NULL;
    oi_simulator *sim = NULL;
    oi_executor *exec = NULL;
    int rc = 1;
    if (!graph_path || !model_path || !in_dir || !sim_dir || !json)
        goto done;
    mkdir(in_dir, 0777);
    mkdir(sim_dir, 0777);
    if (write_text(graph_path, json) != 0 ||
        (model_file ? symlink(model_file, model_path) != 0 : write_model(model_path) != 0))
        goto done;
    m = oi_model_open(model_path);
    plan = m ? oi__plan_build(g, m) : NULL;
    sim = m ? oi_simulator_new(m, OI_DEVICE_CPU) : NULL;
    exec = sim ? oi_simulator_make_executor(sim, g) : NULL;
    if (!plan || !exec)
        goto done;
    for (int s = 0; s < steps; s++) {
        uint32_t keep = 0;
        (void)keep;
        if (write_inputs(dir, plan, exec, inputs) != 0 || oi_executor_run_step(exec) != OI_OK)
            goto done;
    }
    rc = write_values(dir, plan, exec);
done:
    if (rc)
        fprintf(stderr, "%s: %s\n", argv[0], oi_last_error());
    oi_executor_free(exec);
    oi_simulator_free(sim);
    oi__plan_free(plan);
    oi_model_close(m);
    oi_free(json);
    free(graph_path);
    free(model_path);
    free(in_dir);
    free(sim_dir);
    return rc;
}
