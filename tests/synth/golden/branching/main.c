/* main.c - the driver of guarded, with the flags of `openinfer run`:
 *   guarded MODEL.oinf [--steps N] [--input VAR=FILE.npy]... [--fetch VAR]... [--out OUTDIR]
 * inserts the inputs before every step, runs N steps (default 1) and writes
 * each fetched variable after the last step to OUTDIR/VAR.npy (default "."). */
#if !defined(_POSIX_C_SOURCE) && !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include "guarded.h"
#define OI_NPY_STATIC
#define OI_NPY_IMPLEMENTATION
#include "npy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

typedef guarded_ctx g_ctx;
#define G_STEP guarded_step
#define G_CLOSE guarded_close
#define G_ERROR guarded_last_error

static g_ctx *G_OPEN(const char *path, int threads) {
    guarded_options options = {threads};
    return guarded_open_with(path, &options);
}

typedef int (*setter)(guarded_ctx *, const void *, size_t);
typedef const void *(*getter)(const guarded_ctx *, size_t *);
typedef int (*reader)(const guarded_ctx *, void *, size_t, size_t *, int64_t *);
typedef struct var_row {
    const char *name;
    oi_npy_dtype dtype;
    int ndim;
    uint64_t shape[8];
    setter set; /* NULL: not a dynamic variable */
    getter get; /* NULL: not kept after a step */
    reader read; /* a table (its shape known after the steps), or NULL */
    const char *unread; /* why --fetch cannot give it, or NULL */
    int runtime0; /* its leading dim is known after a step only: the count / the rest */
} var_row;

static int set_x(guarded_ctx *c, const void *v, size_t n) { return guarded_set_x(c, (const float *)v, n); }
static const void *get_x(const guarded_ctx *c, size_t *n) { return guarded_get_x(c, n); }
static const void *get_W(const guarded_ctx *c, size_t *n) { return guarded_get_W(c, n); }
static const void *get_h(const guarded_ctx *c, size_t *n) { return guarded_get_h(c, n); }

#define NOT_KEPT "the synthesized code does not keep it after a step"
static const var_row vars[] = {
    {"x", (oi_npy_dtype)10, 2, {1, 3}, set_x, get_x, NULL, NULL, 0},
    {"W", (oi_npy_dtype)10, 2, {3, 3}, NULL, get_W, NULL, NULL, 0},
    {"h", (oi_npy_dtype)10, 2, {1, 3}, NULL, get_h, NULL, NULL, 0},
    {"ok", (oi_npy_dtype)12, 0, {0}, NULL, NULL, NULL, NOT_KEPT, 0},
};
#define N_VARS (sizeof vars / sizeof vars[0])

/* ---- the same for every graph (synth/driver_template.c) ---- */
static const var_row *find_var(const char *name) {
    for (size_t i = 0; i < N_VARS; i++)
        if (strcmp(vars[i].name, name) == 0)
            return &vars[i];
    return NULL;
}

static size_t var_count(const var_row *v) {
    size_t n = 1;
    for (int d = 0; d < v->ndim; d++)
        n *= (size_t)v->shape[d];
    return n;
}

typedef struct input {
    const var_row *var;
    void *values; /* the file's data: the variable's dtype and shape */
} input;

static int usage(const char *argv0) {
    fprintf(stderr, "usage: %s MODEL.oinf|- [--steps N] [--input VAR=FILE.npy]... [--fetch VAR]... [--out OUTDIR] "
            "[--threads N] [--time]\n", argv0);
    return 2;
}

/* Reads FILE.npy for VAR and converts it to VAR's dtype. */
static int read_input(const char *spec, input *in) {
    const char *eq = strchr(spec, '=');
    char name[256];
    if (!eq || (size_t)(eq - spec) >= sizeof name) {
        fprintf(stderr, "--input %s: expected VAR=FILE.npy\n", spec);
        return 2;
    }
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = '\0';
    in->var = find_var(name);
    if (!in->var || !in->var->set) {
        fprintf(stderr, "--input %s: %s is not a dynamic variable of the graph\n", spec, name);
        return 1;
    }
    oi_npy_array a;
    oi_npy_error err;
    if (oi_npy_read(eq + 1, &a, &err) != OI_NPY_OK) {
        fprintf(stderr, "--input %s: %s\n", spec, err.message);
        return 1;
    }
    /* as `openinfer run`: the variable's dtype and exactly its shape */
    int same = a.dtype == in->var->dtype && a.ndim == in->var->ndim;
    for (int d = 0; same && d < a.ndim; d++)
        same = a.shape[d] == in->var->shape[d];
    if (!same) {
        fprintf(stderr, "--input %s: the file holds %s with %d dimensions; %s needs %s[", spec,
                oi_npy_dtype_name(a.dtype), a.ndim, name, oi_npy_dtype_name(in->var->dtype));
        for (int d = 0; d < in->var->ndim; d++)
            fprintf(stderr, "%s%llu", d ? ", " : "", (unsigned long long)in->var->shape[d]);
        fprintf(stderr, "]\n");
        oi_npy_array_free(&a);
        return 1;
    }
    in->values = a.data; /* kept until the end */
    return 0;
}

/* A table's value as `openinfer run --fetch` gives it, copied out through
 * its reader: into *data (malloc'ed), its dims into shape. */
static int read_table(const var_row *v, const g_ctx *ctx, void **data, uint64_t *shape) {
    int64_t dims[8];
    size_t n = 0;
    if (v->read(ctx, NULL, 0, &n, dims) == 0 && (*data = malloc(n * oi_npy_dtype_size(v->dtype) + 1)) != NULL &&
        v->read(ctx, *data, n, &n, dims) == 0) {
        for (int d = 0; d < v->ndim; d++)
            shape[d] = (uint64_t)dims[d];
        return 0;
    }
    fprintf(stderr, "--fetch %s: %s\n", v->name, *data ? G_ERROR() : "out of memory");
    return 1;
}

static int write_output(const char *out_dir, const char *name, const g_ctx *ctx) {
    const var_row *v = find_var(name);
    if (!v || (!v->get && !v->read)) {
        fprintf(stderr, "--fetch %s: %s\n", name, v ? v->unread : "no such variable");
        return 1;
    }
    size_t n = 0;
    void *table = NULL; /* a table's copy */
    uint64_t shape[8];
    memcpy(shape, v->shape, sizeof shape);
    if (v->read && read_table(v, ctx, &table, shape) != 0) {
        free(table);
        return 1;
    }
    const void *data = v->read ? table : v->get(ctx, &n);
    if (v->runtime0) { /* the leading dim: what the rest leaves of the count */
        uint64_t rest = 1;
        for (int d = 1; d < v->ndim; d++)
            rest *= v->shape[d];
        shape[0] = rest ? n / rest : 0;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.npy", out_dir, name);
    oi_npy_error err;
    int rc = oi_npy_write(path, v->dtype, v->ndim, shape, data, &err) != OI_NPY_OK;
    if (rc)
        fprintf(stderr, "%s\n", err.message);
    free(table);
    return rc;
}

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int compare_ms(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* --time: every step's wall time (the first 100000), then the best and
 * the median on stderr, as `openinfer run --time` prints them. */
static void print_times(double *ms, long long n) {
    if (n < 1)
        return;
    qsort(ms, (size_t)n, sizeof *ms, compare_ms);
    fprintf(stderr, "step_ms best=%.4f median=%.4f steps=%lld\n", ms[0],
            n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), n);
}

int main(int argc, char **argv) {
    if (argc < 2 || (argv[1][0] == '-' && argv[1][1])) /* "-": the built-in model */
        return usage(argv[0]);
    long long steps = 1;
    const char *out_dir = ".";
    input inputs[64];
    const char *fetches[64];
    int n_inputs = 0, n_fetches = 0, rc = 0, threads = 0; /* 0: OPENINFER_THREADS, else every core */
    int timed = 0;
    for (int i = 2; i < argc && rc == 0; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--time") == 0) {
            timed = 1;
            continue;
        }
        if (i + 1 >= argc)
            return usage(argv[0]);
        if (strcmp(arg, "--steps") == 0) {
            char *end;
            steps = strtoll(argv[++i], &end, 10);
            if (*end || steps < 1 || steps > 1000000000)
                return usage(argv[0]);
        } else if (strcmp(arg, "--input") == 0 && n_inputs < 64) {
            rc = read_input(argv[++i], &inputs[n_inputs]);
            n_inputs += rc == 0;
        } else if (strcmp(arg, "--fetch") == 0 && n_fetches < 64) {
            fetches[n_fetches++] = argv[++i];
        } else if (strcmp(arg, "--out") == 0) {
            out_dir = argv[++i];
        } else if (strcmp(arg, "--threads") == 0) {
            char *end;
            long n = strtol(argv[++i], &end, 10);
            if (*end || n < 1 || n > 1024)
                return usage(argv[0]);
            threads = (int)n;
        } else {
            return usage(argv[0]);
        }
    }
    g_ctx *ctx = rc == 0 ? G_OPEN(strcmp(argv[1], "-") == 0 ? NULL : argv[1], threads) : NULL;
    if (rc == 0 && !ctx) {
        fprintf(stderr, "%s\n", G_ERROR());
        rc = 1;
    }
    long long n_times = timed ? (steps < 100000 ? steps : 100000) : 0;
    double *times = n_times ? (double *)malloc((size_t)n_times * sizeof *times) : NULL;
    if (n_times && !times) {
        fprintf(stderr, "--time: out of memory\n");
        rc = 1;
    }
    for (long long s = 0; rc == 0 && s < steps; s++) {
        for (int i = 0; rc == 0 && i < n_inputs; i++)
            if (inputs[i].var->set(ctx, inputs[i].values, var_count(inputs[i].var)) != 0)
                rc = 1;
        double t0 = times ? now_ms() : 0.0;
        if (rc == 0 && G_STEP(ctx) != 0)
            rc = 1;
        if (times && s < n_times)
            times[s] = now_ms() - t0;
        if (rc)
            fprintf(stderr, "step %lld: %s\n", s, G_ERROR());
    }
    if (rc == 0)
        print_times(times, n_times);
    free(times);
    if (rc == 0 && n_fetches > 0 && mkdir(out_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "%s: cannot create: %s\n", out_dir, strerror(errno));
        rc = 1;
    }
    for (int i = 0; rc == 0 && i < n_fetches; i++)
        rc = write_output(out_dir, fetches[i], ctx);
    for (int i = 0; i < n_inputs; i++)
        free(inputs[i].values); /* npy.h's default allocator is malloc */
    G_CLOSE(ctx);
    return rc;
}
