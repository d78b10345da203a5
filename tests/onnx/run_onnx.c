/* run_onnx.c - runs the ONNX node tests that tests/onnx/convert.py turned into
 * OpenInfer cases, through the real path: oi_model_open -> oi_graph_from_json ->
 * oi_simulator_new (CPU) -> make_executor (validation) -> insert inputs ->
 * run_step -> fetch outputs, and compares with ONNX's expected outputs.
 *
 * ONNX's rule: floats |got - want| <= atol + rtol * |want| with rtol 1e-3,
 * atol 1e-7 (NaN matches NaN, infinities must be equal); integers and bools
 * exactly; the output's dtype and shape exactly.
 *
 * Cases come from CASES/cases.tsv; CASES/unsupported.tsv lists the tests that
 * could not be converted. One for an op we claim ("mapped") is a failure unless
 * the expected-failures file lists it; one for an op without a mapping counts
 * as unsupported. The expected-failures file holds `REGEX  reason` lines (the
 * regex matches whole test names) and `tol REGEX RTOL ATOL  reason` lines that
 * loosen the tolerance. A listed case that passes is a failure (the list must
 * stay true), and so is a line that matches no test.
 *
 *   run_onnx CASES [--expected-failures FILE] [--only SUBSTRING] [--verbose] */
#include "../../openinfer.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 4096
#define DEFAULT_RTOL 1e-3
#define DEFAULT_ATOL 1e-7

/* ---- small utilities ---- */
static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *text = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long size = ftell(f);
        if (size >= 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)size + 1)) != NULL) {
            if (fread(text, 1, (size_t)size, f) == (size_t)size) {
                text[size] = '\0';
            } else {
                free(text);
                text = NULL;
            }
        }
    }
    fclose(f);
    return text;
}

/* Splits `line` at tabs in place; returns the number of fields. */
static int split_tabs(char *line, char **fields, int max) {
    int n = 0;
    while (n < max) {
        fields[n++] = line;
        char *tab = strchr(line, '\t');
        if (!tab)
            break;
        *tab = '\0';
        line = tab + 1;
    }
    return n;
}

/* ---- expected failures and tolerances ---- */
typedef struct listed {
    regex_t re;
    char pattern[256];
    char reason[256];
    bool is_tolerance;
    double rtol, atol;
    int matched; /* tests it matched, of any kind */
} listed;

typedef struct listing {
    listed items[MAX_LIST];
    int count;
} listing;

static bool add_listed(listing *l, const char *pattern, const char *reason, const char *path, int line_no) {
    if (l->count == MAX_LIST)
        return false;
    listed *e = &l->items[l->count];
    memset(e, 0, sizeof *e);
    snprintf(e->pattern, sizeof e->pattern, "%s", pattern);
    snprintf(e->reason, sizeof e->reason, "%s", reason);
    char anchored[300];
    snprintf(anchored, sizeof anchored, "^(%s)$", pattern);
    if (regcomp(&e->re, anchored, REG_EXTENDED | REG_NOSUB) != 0) {
        fprintf(stderr, "%s:%d: bad regex %s\n", path, line_no, pattern);
        return false;
    }
    l->count++;
    return true;
}

/* The next whitespace-separated word of *p (terminated in place), or "" at the end. */
static char *next_word(char **p) {
    char *s = *p + strspn(*p, " \t\r");
    char *end = s + strcspn(s, " \t\r");
    *p = *end ? end + 1 : end;
    *end = '\0';
    *p += strspn(*p, " \t\r");
    return s;
}

/* `REGEX reason...` or `tol REGEX RTOL ATOL reason...`; # starts a comment. */
static bool parse_listing_line(listing *l, char *line, const char *path, int line_no) {
    char *p = line, *first = next_word(&p);
    if (!*first || *first == '#')
        return true;
    bool tolerance = strcmp(first, "tol") == 0;
    char *pattern = tolerance ? next_word(&p) : first;
    char *rtol_text = tolerance ? next_word(&p) : NULL, *atol_text = tolerance ? next_word(&p) : NULL;
    char *reason = p, *end1 = NULL, *end2 = NULL;
    double rtol = tolerance ? strtod(rtol_text, &end1) : 0, atol = tolerance ? strtod(atol_text, &end2) : 0;
    bool numbers_ok = !tolerance || (*rtol_text && *atol_text && !*end1 && !*end2);
    if (!*pattern || !*reason || !numbers_ok) {
        fprintf(stderr, "%s:%d: expected `REGEX reason` or `tol REGEX RTOL ATOL reason`\n", path, line_no);
        return false;
    }
    if (!add_listed(l, pattern, reason, path, line_no))
        return false;
    listed *e = &l->items[l->count - 1];
    e->is_tolerance = tolerance;
    e->rtol = rtol;
    e->atol = atol;
    return true;
}

static bool load_listing(const char *path, listing *l) {
    char *text = read_file(path);
    if (!text) {
        fprintf(stderr, "run_onnx: cannot read %s\n", path);
        return false;
    }
    bool ok = true;
    int line_no = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        ok = parse_listing_line(l, line, path, ++line_no) && ok;
    }
    free(text);
    return ok;
}

/* The first entry of the wanted kind matching `test` (counted as matched). */
static listed *find_listed(listing *l, const char *test, bool tolerance) {
    for (int i = 0; i < l->count; i++) {
        listed *e = &l->items[i];
        if (e->is_tolerance == tolerance && regexec(&e->re, test, 0, NULL, 0) == 0) {
            e->matched++;
            return e;
        }
    }
    return NULL;
}

/* ---- per-op counts ---- */
typedef struct op_stats {
    char op[96];
    int passed, failed, xfail, unsupported;
} op_stats;

typedef struct run_stats {
    op_stats ops[512];
    int n_ops;
    int passed, failed, xfail, unsupported;
} run_stats;

static op_stats *stats_for(run_stats *s, const char *op) {
    for (int i = 0; i < s->n_ops; i++)
        if (strcmp(s->ops[i].op, op) == 0)
            return &s->ops[i];
    if (s->n_ops == (int)(sizeof s->ops / sizeof s->ops[0]))
        return &s->ops[s->n_ops - 1];
    op_stats *o = &s->ops[s->n_ops++];
    memset(o, 0, sizeof *o);
    snprintf(o->op, sizeof o->op, "%s", op);
    return o;
}

static int by_op_name(const void *a, const void *b) {
    return strcmp(((const op_stats *)a)->op, ((const op_stats *)b)->op);
}

/* ---- comparing ---- */
static bool is_float(oi_dtype t) {
    return t == OI_DTYPE_F16 || t == OI_DTYPE_BF16 || t == OI_DTYPE_F32 || t == OI_DTYPE_F64 || t == OI_DTYPE_F8;
}

static double load_float(oi_dtype t, const void *data, size_t i) {
    switch (t) {
    case OI_DTYPE_F16: return oi_f16_to_f32(((const uint16_t *)data)[i]);
    case OI_DTYPE_BF16: return oi_bf16_to_f32(((const uint16_t *)data)[i]);
    case OI_DTYPE_F8: return oi_f8_to_f32(((const uint8_t *)data)[i]);
    case OI_DTYPE_F32: return ((const float *)data)[i];
    default: return ((const double *)data)[i];
    }
}

/* Integers as their bytes (exact); printed as signed or unsigned. */
static void describe_int(char *dst, size_t size, oi_dtype t, const void *data, size_t i) {
    size_t width = (size_t)oi_dtype_bits(t) / 8;
    uint64_t bits = 0;
    memcpy(&bits, (const char *)data + i * width, width);
    bool is_signed = t == OI_DTYPE_I8 || t == OI_DTYPE_I16 || t == OI_DTYPE_I32 || t == OI_DTYPE_I64;
    if (is_signed && width < 8 && (bits >> (width * 8 - 1)) & 1)
        bits |= ~(uint64_t)0 << (width * 8);
    if (t == OI_DTYPE_BOOL)
        snprintf(dst, size, "%s", bits ? "true" : "false");
    else if (is_signed)
        snprintf(dst, size, "%lld", (long long)(int64_t)bits);
    else
        snprintf(dst, size, "%llu", (unsigned long long)bits);
}

static bool elements_match(oi_dtype t, const void *got, const void *want, size_t i, double rtol, double atol) {
    if (is_float(t)) {
        double g = load_float(t, got, i), w = load_float(t, want, i);
        if (isnan(g) || isnan(w))
            return isnan(g) && isnan(w);
        if (isinf(g) || isinf(w))
            return g == w;
        return fabs(g - w) <= atol + rtol * fabs(w);
    }
    size_t width = (size_t)oi_dtype_bits(t) / 8;
    if (t == OI_DTYPE_BOOL)
        return (((const uint8_t *)got)[i] != 0) == (((const uint8_t *)want)[i] != 0);
    return memcmp((const char *)got + i * width, (const char *)want + i * width, width) == 0;
}

/* The fetched view against the expected tensor; `why` says what differs. */
static bool output_matches(const oi_tensor_view *v, const oi_tensor_info *want, const void *want_data, double rtol,
                           double atol, char *why, size_t why_size) {
    bool same_shape = v->ndim == (int)want->ndim;
    for (int d = 0; same_shape && d < v->ndim; d++)
        same_shape = v->shape[d] == (int64_t)want->dims[d];
    if (v->dtype != want->dtype || !same_shape || v->len != want->numel) {
        snprintf(why, why_size, "%s: got %s with %d dims (%zu elements), expected %s with %u dims (%llu elements)",
                 want->name, oi_dtype_name(v->dtype), v->ndim, v->len, oi_dtype_name(want->dtype), want->ndim,
                 (unsigned long long)want->numel);
        return false;
    }
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < v->len; i++) {
        if (!elements_match(v->dtype, v->data, want_data, i, rtol, atol) && bad++ == 0)
            first = i;
    }
    if (!bad)
        return true;
    char g[64], w[64];
    if (is_float(v->dtype)) {
        snprintf(g, sizeof g, "%.9g", load_float(v->dtype, v->data, first));
        snprintf(w, sizeof w, "%.9g", load_float(v->dtype, want_data, first));
    } else {
        describe_int(g, sizeof g, v->dtype, v->data, first);
        describe_int(w, sizeof w, v->dtype, want_data, first);
    }
    snprintf(why, why_size, "%s: %zu of %zu elements differ; element %zu: got %s, expected %s", want->name, bad, v->len,
             first, g, w);
    return false;
}

/* ---- one case through the real path ---- */
static const char *after_prefix(const char *name, const char *prefix) {
    size_t n = strlen(prefix);
    return strncmp(name, prefix, n) == 0 ? name + n : NULL;
}

static bool insert_inputs(oi_executor *e, oi_model *m, char *why, size_t why_size) {
    for (size_t i = 0; i < oi_model_tensor_count(m); i++) {
        const oi_tensor_info *t = oi_model_tensor_at(m, i);
        const char *var = after_prefix(t->name, "input.");
        const void *data = NULL;
        if (!var)
            continue;
        if (oi_model_tensor_data(m, t, &data) != OI_OK ||
            oi_executor_insert(e, var, t->dtype, data, (size_t)t->numel) != OI_OK) {
            snprintf(why, why_size, "insert %s: %s", var, oi_last_error());
            return false;
        }
    }
    return true;
}

static bool check_outputs(oi_executor *e, oi_model *m, double rtol, double atol, char *why, size_t why_size) {
    int outputs = 0;
    for (size_t i = 0; i < oi_model_tensor_count(m); i++) {
        const oi_tensor_info *t = oi_model_tensor_at(m, i);
        const char *var = after_prefix(t->name, "expected.");
        const void *want = NULL;
        oi_tensor_view view;
        if (!var)
            continue;
        outputs++;
        if (oi_model_tensor_data(m, t, &want) != OI_OK || oi_executor_fetch(e, var, t->dtype, &view) != OI_OK) {
            snprintf(why, why_size, "fetch %s: %s", var, oi_last_error());
            return false;
        }
        if (!output_matches(&view, t, want, rtol, atol, why, why_size))
            return false;
    }
    if (!outputs)
        snprintf(why, why_size, "the case has no expected outputs");
    return outputs > 0;
}

static bool run_case(const char *dir, const char *test, double rtol, double atol, char *why, size_t why_size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.json", dir, test);
    char *json = read_file(path);
    snprintf(path, sizeof path, "%s/%s.oinf", dir, test);
    oi_model *m = json ? oi_model_open(path) : NULL;
    oi_graph *g = m ? oi_graph_from_json(json) : NULL;
    oi_simulator *sim = g ? oi_simulator_new(m, OI_DEVICE_CPU) : NULL;
    oi_executor *e = sim ? oi_simulator_make_executor(sim, g) : NULL;
    bool ok = false;
    if (!json)
        snprintf(why, why_size, "cannot read %s/%s.json", dir, test);
    else if (!e)
        snprintf(why, why_size, "%s", oi_last_error());
    else if (insert_inputs(e, m, why, why_size)) {
        if (oi_executor_run_step(e) != OI_OK)
            snprintf(why, why_size, "run_step: %s", oi_last_error());
        else
            ok = check_outputs(e, m, rtol, atol, why, why_size);
    }
    oi_executor_free(e);
    oi_simulator_free(sim);
    oi_graph_free(g);
    oi_model_close(m);
    free(json);
    return ok;
}

/* ---- the two lists convert.py wrote ---- */
typedef struct options {
    const char *dir, *listing_path, *only;
    bool verbose;
} options;

/* A result for `test` of `op`: counted, and printed when it is a failure. */
static void record(run_stats *s, listing *l, const options *opt, const char *test, const char *op, bool ok,
                   const char *why) {
    op_stats *o = stats_for(s, op);
    listed *x = find_listed(l, test, false);
    if (ok && !x) {
        o->passed++, s->passed++;
        if (opt->verbose)
            printf("pass   %s (%s)\n", test, op);
    } else if (!ok && x) {
        o->xfail++, s->xfail++;
        if (opt->verbose)
            printf("xfail  %s (%s): %s [listed: %s]\n", test, op, why, x->reason);
    } else if (ok) {
        o->failed++, s->failed++;
        printf("FAIL   %s (%s): passes but expected_failures lists it (%s): remove the entry\n", test, op, x->pattern);
    } else {
        o->failed++, s->failed++;
        printf("FAIL   %s (%s): %s\n", test, op, why);
    }
}

static bool run_cases(const options *opt, listing *l, run_stats *s) {
    char path[1024];
    snprintf(path, sizeof path, "%s/cases.tsv", opt->dir);
    char *text = read_file(path);
    if (!text) {
        fprintf(stderr, "run_onnx: cannot read %s (run tests/onnx/convert.py first)\n", path);
        return false;
    }
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *f[3];
        if (line[0] == '#' || split_tabs(line, f, 3) < 3)
            continue;
        if (opt->only && !strstr(f[0], opt->only))
            continue;
        listed *tol = find_listed(l, f[0], true);
        char why[1024] = "";
        bool ok = run_case(opt->dir, f[0], tol ? tol->rtol : DEFAULT_RTOL, tol ? tol->atol : DEFAULT_ATOL, why,
                           sizeof why);
        record(s, l, opt, f[0], f[1], ok, why);
    }
    free(text);
    return true;
}

static bool count_unsupported(const options *opt, listing *l, run_stats *s) {
    char path[1024];
    snprintf(path, sizeof path, "%s/unsupported.tsv", opt->dir);
    char *text = read_file(path);
    if (!text) {
        fprintf(stderr, "run_onnx: cannot read %s\n", path);
        return false;
    }
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *f[4];
        if (line[0] == '#' || split_tabs(line, f, 4) < 4)
            continue;
        if (opt->only && !strstr(f[0], opt->only))
            continue;
        if (strcmp(f[2], "1") == 0) {
            char why[600];
            snprintf(why, sizeof why, "unsupported: %s", f[3]);
            record(s, l, opt, f[0], f[1], false, why);
        } else {
            find_listed(l, f[0], false); /* an entry for an op that has not landed yet is not stale */
            stats_for(s, f[1])->unsupported++;
            s->unsupported++;
            if (opt->verbose)
                printf("unsup  %s (%s): %s\n", f[0], f[1], f[3]);
        }
    }
    free(text);
    return true;
}

/* ---- report ---- */
static void print_report(run_stats *s) {
    qsort(s->ops, (size_t)s->n_ops, sizeof s->ops[0], by_op_name);
    printf("\nper op (ONNX op: results of its node tests):\n");
    for (int i = 0; i < s->n_ops; i++) {
        const op_stats *o = &s->ops[i];
        if (o->passed + o->failed + o->xfail == 0)
            continue;
        printf("%s: %d passed, %d failed", o->op, o->passed, o->failed);
        if (o->xfail)
            printf(", %d expected failures", o->xfail);
        printf("\n");
    }
    printf("\nunsupported (ONNX ops without a mapping onto our ops, with their test counts):\n");
    int col = 0, listed_ops = 0;
    for (int i = 0; i < s->n_ops; i++) {
        const op_stats *o = &s->ops[i];
        if (!o->unsupported)
            continue;
        char item[128];
        int n = snprintf(item, sizeof item, "%s %d", o->op, o->unsupported);
        if (col > 0 && col + n + 2 > 100) {
            printf(",\n");
            col = 0;
        }
        col += printf("%s%s", col ? ", " : "  ", item);
        listed_ops++;
    }
    printf("%s\n\n", listed_ops ? "" : "  none");
    printf("%d passed, %d failed, %d expected failures, %d unsupported\n", s->passed, s->failed, s->xfail,
           s->unsupported);
}

int main(int argc, char **argv) {
    options opt = {NULL, "tests/onnx/expected_failures.txt", NULL, false};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expected-failures") == 0 && i + 1 < argc)
            opt.listing_path = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            opt.only = argv[++i];
        else if (strcmp(argv[i], "--verbose") == 0)
            opt.verbose = true;
        else if (argv[i][0] != '-' && !opt.dir)
            opt.dir = argv[i];
        else
            opt.dir = NULL, i = argc;
    }
    if (!opt.dir) {
        fprintf(stderr, "usage: run_onnx CASES_DIR [--expected-failures FILE] [--only SUBSTRING] [--verbose]\n");
        return 2;
    }
    static listing l;
    static run_stats s;
    if (!load_listing(opt.listing_path, &l))
        return 1;
    if (!run_cases(&opt, &l, &s) || !count_unsupported(&opt, &l, &s))
        return 1;
    for (int i = 0; i < l.count && !opt.only; i++) {
        if (!l.items[i].matched) {
            printf("FAIL   %s: %s line matches no test: remove it\n", l.items[i].pattern, opt.listing_path);
            s.failed++;
        }
    }
    print_report(&s);
    for (int i = 0; i < l.count; i++)
        regfree(&l.items[i].re);
    return s.failed ? 1 : 0;
}
