/* conformance.c - runs the original OpenInfer's op baselines
 * (../shared/conformance/openinfer/v1: the small ops_*.oinf suites and the
 * 1272 full-matrix cases) through the real path: a one-node graph built
 * from DSL statements -> validator -> executor -> CPU kernel, then compares
 * the fetched output with the expected tensor stored in the same file.
 *
 * Integers, bools and packed values must match exactly; floats within the
 * original's tolerances. Cases where the original's data is wrong are listed
 * in tests/conformance_deviations.txt; a listed case that passes is an error
 * too (the list must stay true).
 *
 *   conformance [--data DIR] [--deviations FILE] [--verbose] [--only SUBSTRING] */
#include "../openinfer.h"
#include "../openinfer_impl/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one case ---- */
#define MAX_INPUTS 3
typedef struct conf_case {
    char name[160];
    char file[512];            /* the .oinf holding inputs and the expected output */
    char op[32];
    char inputs[MAX_INPUTS][128];
    int n_inputs;
    char attrs[256];           /* DSL settings text: "axes=[1], keepdims=true" */
    char expected[128];
    bool inplace;              /* the output is the first input */
} conf_case;

typedef struct conf_options {
    const char *data_dir;
    const char *deviations_path;
    const char *only;
    bool verbose;
} conf_options;

typedef struct conf_stats {
    int passed, failed, deviations;
} conf_stats;

/* ---- small utilities ---- */
static char *read_text_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = size >= 0 ? (char *)malloc((size_t)size + 1) : NULL;
    if (text && fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        text = NULL;
    }
    fclose(f);
    if (text) {
        text[size] = '\0';
        *len = (size_t)size;
    }
    return text;
}

static void copy_str(char *dst, size_t size, const char *src) { snprintf(dst, size, "%s", src ? src : ""); }

/* ---- expected deviations: "case_name  reason; ours: ..." per line ---- */
typedef struct deviation {
    char name[160];
    bool seen;
} deviation;

static deviation *load_deviations(const char *path) {
    deviation *list = NULL;
    size_t len;
    char *text = read_text_file(path, &len);
    if (!text)
        return NULL;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        while (*line == ' ' || *line == '\t')
            line++;
        if (!*line || *line == '#')
            continue;
        deviation d;
        memset(&d, 0, sizeof d);
        size_t n = strcspn(line, " \t");
        if (n >= sizeof d.name)
            n = sizeof d.name - 1;
        memcpy(d.name, line, n);
        arrput(list, d);
    }
    free(text);
    return list;
}

static deviation *find_deviation(deviation *list, const char *name) {
    for (ptrdiff_t i = 0; i < arrlen(list); i++)
        if (strcmp(list[i].name, name) == 0)
            return &list[i];
    return NULL;
}

/* ---- models, opened once ---- */
typedef struct model_entry {
    char *key;
    oi_model *value;
} model_entry;
static model_entry *models;

static oi_model *model_for(const char *path) {
    if (!models)
        sh_new_strdup(models);
    ptrdiff_t i = shgeti(models, path);
    if (i >= 0)
        return models[i].value;
    oi_model *m = oi_model_open(path);
    shput(models, path, m); /* NULL is remembered too: one error per file */
    if (!m)
        fprintf(stderr, "conformance: cannot open %s: %s\n", path, oi_last_error());
    return m;
}

static void close_models(void) {
    for (ptrdiff_t i = 0; i < shlen(models); i++)
        oi_model_close(models[i].value);
    shfree(models);
}

/* ---- comparing ---- */
typedef struct tolerance {
    double abs, rel;
} tolerance;

/* The original's tolerances (conformance README). */
static tolerance tolerance_of(oi_dtype t) {
    tolerance tol = {0, 0};
    switch (t) {
    case OI_DTYPE_F32: tol.abs = 1e-4; break;
    case OI_DTYPE_F64: tol.abs = 1e-7; break;
    case OI_DTYPE_F16: tol.abs = 0.6, tol.rel = 0.08; break;
    case OI_DTYPE_BF16: tol.abs = 0.1, tol.rel = 0.02; break;
    case OI_DTYPE_F8: tol.abs = 0.6, tol.rel = 0.25; break;
    default: break;
    }
    return tol;
}

static bool floats_match(double got, double want, tolerance tol) {
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    double diff = fabs(got - want);
    return diff <= tol.abs || diff <= tol.rel * fabs(want);
}

/* Element-by-element; describes the first mismatch in `why`. */
static bool outputs_match(oi_dtype t, const void *got, const void *want, int64_t n, char *why, size_t why_size) {
    for (int64_t i = 0; i < n; i++) {
        bool ok;
        if (oi__dtype_is_float(t)) {
            double g = oi__load_f64(t, got, i), w = oi__load_f64(t, want, i);
            ok = floats_match(g, w, tolerance_of(t));
            if (!ok)
                snprintf(why, why_size, "element %lld: got %.9g, expected %.9g", (long long)i, g, w);
        } else if (t == OI_DTYPE_BOOL) {
            ok = (oi__load_u64(t, got, i) != 0) == (oi__load_u64(t, want, i) != 0);
            if (!ok)
                snprintf(why, why_size, "element %lld: got %d, expected %d", (long long)i,
                         (int)(oi__load_u64(t, got, i) != 0), (int)(oi__load_u64(t, want, i) != 0));
        } else {
            ok = oi__load_bits(t, got, i) == oi__load_bits(t, want, i);
            if (!ok)
                snprintf(why, why_size, "element %lld: got %lld, expected %lld", (long long)i,
                         (long long)oi__load_i64(t, got, i), (long long)oi__load_i64(t, want, i));
        }
        if (!ok)
            return false;
    }
    return true;
}

/* ---- the graph of one case ---- */
/* Statement texts live here while the graph is built. */
typedef struct stmt_texts {
    char vars[MAX_INPUTS + 1][256];
    char op_args[512];
    char output[128];
} stmt_texts;

static void var_text(char *dst, size_t size, const char *name, const oi_tensor_info *info) {
    int n = snprintf(dst, size, "%s, %s", name, oi_dtype_name(info->dtype));
    if (info->ndim == 0 || n < 0)
        return;
    size_t len = (size_t)n;
    for (uint32_t d = 0; d < info->ndim && len < size; d++)
        len += (size_t)snprintf(dst + len, size - len, "%s%llu", d ? ", " : "[", (unsigned long long)info->dims[d]);
    if (len < size)
        snprintf(dst + len, size - len, "]");
}

static oi_dsl_stmt stmt(oi_dsl_kind kind, const char *head, const char *text, int op) {
    oi_dsl_stmt s;
    s.kind = kind;
    s.line = 0;
    s.head = head;
    s.text = text;
    s.op = op;
    return s;
}

/* volatile { inputs...; out } block entry { op <op>(inputs, attrs) >> out; return; } */
static oi_graph *build_case_graph(const conf_case *c, oi_model *m, stmt_texts *texts, const char **out_name) {
    oi_dsl_stmt stmts[16];
    int n = 0;
    stmts[n++] = stmt(OI_DSL_SECTION_VOLATILE, "", "", 0);
    for (int i = 0; i < c->n_inputs; i++) {
        bool repeated = false;
        for (int j = 0; j < i; j++)
            repeated = repeated || strcmp(c->inputs[i], c->inputs[j]) == 0;
        if (repeated)
            continue;
        const oi_tensor_info *info = oi_model_find_tensor(m, c->inputs[i]);
        if (!info) {
            fprintf(stderr, "%s: no tensor %s in %s\n", c->name, c->inputs[i], c->file);
            return NULL;
        }
        var_text(texts->vars[i], sizeof texts->vars[i], c->inputs[i], info);
        stmts[n++] = stmt(OI_DSL_VAR, "", texts->vars[i], 0);
    }
    const oi_tensor_info *expected = oi_model_find_tensor(m, c->expected);
    if (!expected) {
        fprintf(stderr, "%s: no expected tensor %s in %s\n", c->name, c->expected, c->file);
        return NULL;
    }
    /* a fresh name: the expected tensor's own name would load its data */
    *out_name = c->inplace ? c->inputs[0] : "conformance_out";
    if (!c->inplace) {
        var_text(texts->vars[MAX_INPUTS], sizeof texts->vars[MAX_INPUTS], *out_name, expected);
        stmts[n++] = stmt(OI_DSL_VAR, "", texts->vars[MAX_INPUTS], 0);
    }
    stmts[n++] = stmt(OI_DSL_SECTION_END, "", "", 0);
    stmts[n++] = stmt(OI_DSL_BLOCK, "entry", "", 0);
    size_t len = 0;
    for (int i = 0; i < c->n_inputs; i++)
        len += (size_t)snprintf(texts->op_args + len, sizeof texts->op_args - len, "%s%s", i ? ", " : "", c->inputs[i]);
    if (c->attrs[0])
        snprintf(texts->op_args + len, sizeof texts->op_args - len, ", %s", c->attrs);
    oi_op op = oi_op_from_name(c->op);
    stmts[n++] = stmt(OI_DSL_OP, c->op, texts->op_args, (int)op);
    copy_str(texts->output, sizeof texts->output, *out_name);
    stmts[n++] = stmt(OI_DSL_TO, "", texts->output, 0);
    stmts[n++] = stmt(OI_DSL_RETURN, "", "", 0);
    stmts[n++] = stmt(OI_DSL_BLOCK_END, "entry", "", 0);
    stmts[n++] = stmt(OI_DSL_END, "", "", 0);
    return oi_graph_build(c->name, "conformance.c", stmts);
}

/* ---- the real path: validator, executor, kernel ---- */
static oi_status run_via_executor(oi_model *m, const oi_graph *g, const char *out_name,
                                  oi_dtype out_dtype, void **out_data) {
    static oi_simulator *sim;
    static oi_model *sim_model;
    if (sim_model != m) {
        oi_simulator_free(sim);
        sim = oi_simulator_new(m, OI_DEVICE_CPU);
        sim_model = sim ? m : NULL;
        if (!sim)
            return OI_ERROR_RUNTIME;
    }
    oi_executor *e = oi_simulator_make_executor(sim, g);
    if (!e)
        return OI_ERROR_VALIDATION;
    oi_status s = oi_executor_run_step(e);
    oi_tensor_view view;
    if (s == OI_OK)
        s = oi_executor_fetch(e, out_name, out_dtype, &view);
    if (s == OI_OK) {
        size_t nbytes = (size_t)oi_dtype_nbytes(out_dtype, view.len);
        *out_data = malloc(nbytes + 1);
        memcpy(*out_data, view.data, nbytes);
    }
    oi_executor_free(e);
    return s;
}

/* ---- one case, start to end ---- */
static void run_case(const conf_case *c, const conf_options *opt, deviation *deviations, conf_stats *stats) {
    if (opt->only && !strstr(c->name, opt->only))
        return;
    char why[512] = "";
    bool ok = false;
    oi_model *m = model_for(c->file);
    const oi_tensor_info *expected = m ? oi_model_find_tensor(m, c->expected) : NULL;
    const void *want = NULL;
    if (!expected || oi_model_tensor_data(m, expected, &want) != OI_OK) {
        snprintf(why, sizeof why, "cannot read the expected tensor %s", c->expected);
    } else {
        stmt_texts texts;
        memset(&texts, 0, sizeof texts);
        const char *out_name = NULL;
        oi_graph *g = build_case_graph(c, m, &texts, &out_name);
        void *got = NULL;
        oi_status s = g ? run_via_executor(m, g, out_name, expected->dtype, &got) : OI_ERROR_VALIDATION;
        if (s != OI_OK)
            snprintf(why, sizeof why, "%s: %s", oi_status_name(s), oi_last_error());
        else
            ok = outputs_match(expected->dtype, got, want, (int64_t)expected->numel, why, sizeof why);
        free(got);
        oi_graph_free(g);
    }
    deviation *dev = find_deviation(deviations, c->name);
    if (dev)
        dev->seen = true;
    if (ok && !dev) {
        stats->passed++;
        if (opt->verbose)
            printf("pass  %s\n", c->name);
    } else if (!ok && dev) {
        stats->deviations++;
        if (opt->verbose)
            printf("dev   %s: %s\n", c->name, why);
    } else if (ok) {
        stats->failed++;
        printf("FAIL  %s: listed as an expected deviation but passes (update tests/conformance_deviations.txt)\n",
               c->name);
    } else {
        stats->failed++;
        printf("FAIL  %s (op %s(%s%s%s)): %s\n", c->name, c->op, c->inputs[0], c->attrs[0] ? ", " : "", c->attrs,
               why);
    }
}

/* ---- the small suites: op, inputs and settings per the data README ---- */
typedef struct small_case {
    const char *suite, *op, *inputs, *attrs, *expected;
    bool inplace;
} small_case;

static const small_case small_cases[] = {
    {"ops_accumulate_inplace", "add", "acc_a, acc_b", "acc=f32", "acc_out", false},
    {"ops_accumulate_inplace", "add", "inplace_a, inplace_b", "", "inplace_out", true},
    {"ops_basic", "add", "add_a, add_b", "", "add_out", false},
    {"ops_basic", "sub", "sub_a, sub_b", "", "sub_out", false},
    {"ops_basic", "mul", "mul_a, mul_b", "", "mul_out", false},
    {"ops_basic", "div", "div_a, div_b", "div_by_zero_mask=0", "div_out", false},
    {"ops_basic", "relu", "relu_x", "", "relu_out", false},
    {"ops_basic", "abs", "abs_x", "", "abs_out", false},
    {"ops_basic", "neg", "neg_x", "", "neg_out", false},
    {"ops_basic", "min", "min_a, min_b", "", "min_out", false},
    {"ops_basic", "max", "max_a, max_b", "", "max_out", false},
    {"ops_basic", "clamp", "clamp_x", "min=0.0, max=3.0", "clamp_out", false},
    {"ops_basic", "sum_axis", "sum_axis_x", "axes=[1], keepdims=true", "sum_axis_out", false},
    {"ops_basic", "mean_axis", "mean_axis_x", "axes=[1], keepdims=true", "mean_axis_out", false},
    {"ops_bitwise", "and", "bit_a, bit_b", "", "and_out", false},
    {"ops_bitwise", "or", "bit_a, bit_b", "", "or_out", false},
    {"ops_bitwise", "xor", "bit_a, bit_b", "", "xor_out", false},
    {"ops_bitwise", "not", "bit_a", "", "not_out", false},
    {"ops_bitwise", "shl", "bit_a", "bits=1", "shl_out", false},
    {"ops_bitwise", "shr", "bit_a", "bits=1", "shr_out", false},
    {"ops_bitwise", "popcount", "bit_a", "", "popcount_out", false},
    {"ops_broadcast", "add", "bcast_a, bcast_b", "", "bcast_add_out", false},
    {"ops_broadcast", "mul", "bcast_a, bcast_b", "", "bcast_mul_out", false},
    {"ops_cast", "cast", "cast_f32", "to=i32", "cast_f32_to_i32", false},
    {"ops_cast", "cast", "cast_f32", "to=u8", "cast_f32_to_u8", false},
    {"ops_cast", "cast", "cast_i32", "to=f32", "cast_i32_to_f32", false},
    {"ops_compare", "eq", "cmp_a, cmp_b", "", "eq_out", false},
    {"ops_compare", "ne", "cmp_a, cmp_b", "", "ne_out", false},
    {"ops_compare", "lt", "cmp_a, cmp_b", "", "lt_out", false},
    {"ops_compare", "le", "cmp_a, cmp_b", "", "le_out", false},
    {"ops_compare", "gt", "cmp_a, cmp_b", "", "gt_out", false},
    {"ops_compare", "ge", "cmp_a, cmp_b", "", "ge_out", false},
    {"ops_float_special", "add", "f16_a, f16_b", "", "f16_add_out", false},
    {"ops_float_special", "relu", "f16_relu_x", "", "f16_relu_out", false},
    {"ops_float_special", "add", "bf16_a, bf16_b", "", "bf16_add_out", false},
    {"ops_float_special", "relu", "bf16_relu_x", "", "bf16_relu_out", false},
    {"ops_float_special", "add", "f8_a, f8_b", "", "f8_add_out", false},
    {"ops_float_special", "relu", "f8_relu_x", "", "f8_relu_out", false},
    {"ops_matmul", "matmul", "matmul_a, matmul_b", "", "matmul_out", false},
    {"ops_misc", "fma", "fma_a, fma_b, fma_c", "", "fma_out", false},
    {"ops_misc", "floor_div", "floor_div_a, floor_div_b", "", "floor_div_out", false},
    {"ops_misc", "rem", "rem_a, rem_b", "", "rem_out", false},
    {"ops_misc", "is_nan", "is_nan_x", "", "is_nan_out", false},
    {"ops_misc", "is_inf", "is_inf_x", "", "is_inf_out", false},
    {"ops_misc", "is_neg", "is_neg_x", "", "is_neg_out", false},
    {"ops_misc", "is_finite", "is_finite_x", "", "is_finite_out", false},
    {"ops_packed", "argmax_axis", "packed_i4_x", "axis=1, keepdims=true, select_first=true", "packed_i4_argmax_out",
     false},
    {"ops_packed", "argmin_axis", "packed_u2_x", "axis=1, keepdims=true, select_first=true", "packed_u2_argmin_out",
     false},
    {"ops_reduce", "sum_axis", "reduce_x", "axes=[1], keepdims=true", "sum_axis_out", false},
    {"ops_reduce", "mean_axis", "reduce_x", "axes=[1], keepdims=true", "mean_axis_out", false},
    {"ops_reduce", "prod_axis", "reduce_x", "axes=[1], keepdims=true", "prod_axis_out", false},
    {"ops_reduce", "min_axis", "reduce_x", "axes=[1], keepdims=true", "min_axis_out", false},
    {"ops_reduce", "max_axis", "reduce_x", "axes=[1], keepdims=true", "max_axis_out", false},
    {"ops_reduce", "argmax_axis", "reduce_x", "axis=1, keepdims=true, select_first=true", "argmax_axis_out", false},
    {"ops_reduce", "argmin_axis", "reduce_x", "axis=1, keepdims=true, select_first=true", "argmin_axis_out", false},
    {"ops_rounding", "floor", "round_x", "", "floor_out", false},
    {"ops_rounding", "ceil", "round_x", "", "ceil_out", false},
    {"ops_rounding", "round", "round_x", "", "round_out", false},
    {"ops_rounding", "trunc", "round_x", "", "trunc_out", false},
    {"ops_rounding", "sign", "round_x", "", "sign_out", false},
    {"ops_rounding", "recip", "round_x", "div_by_zero_mask=0", "recip_out", false},
};

static void split_inputs(conf_case *c, const char *list) {
    c->n_inputs = 0;
    const char *p = list;
    while (*p && c->n_inputs < MAX_INPUTS) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        while (n && p[n - 1] == ' ')
            n--;
        if (!n)
            break;
        snprintf(c->inputs[c->n_inputs++], sizeof c->inputs[0], "%.*s", (int)n, p);
        p += n;
    }
}

static int run_small_suites(const conf_options *opt, deviation *deviations, conf_stats *stats) {
    int count = 0;
    for (size_t i = 0; i < sizeof small_cases / sizeof small_cases[0]; i++) {
        const small_case *s = &small_cases[i];
        conf_case c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "%s/%s", s->suite, s->expected);
        snprintf(c.file, sizeof c.file, "%s/ops/%s.oinf", opt->data_dir, s->suite);
        copy_str(c.op, sizeof c.op, s->op);
        split_inputs(&c, s->inputs);
        copy_str(c.attrs, sizeof c.attrs, s->attrs);
        copy_str(c.expected, sizeof c.expected, s->expected);
        c.inplace = s->inplace;
        run_case(&c, opt, deviations, stats);
        count++;
    }
    return count;
}

/* ---- the full matrix: manifest.json ---- */
static const char *json_str(const oi__json *obj, const char *key) {
    const oi__json *v = oi__json_get(obj, key);
    return v && v->type == OI__JSON_STRING ? v->text : NULL;
}

/* One manifest attribute as DSL settings text. */
static bool append_attr(char *dst, size_t size, const oi__json *a) {
    const char *name = json_str(a, "name"), *kind = json_str(a, "kind");
    const oi__json *value = oi__json_get(a, "value");
    if (!name || !kind || !value)
        return false;
    size_t len = strlen(dst);
    len += (size_t)snprintf(dst + len, size - len, "%s%s=", len ? ", " : "", name);
    if (len >= size)
        return false;
    if (strcmp(kind, "dtype") == 0 && value->type == OI__JSON_STRING) {
        snprintf(dst + len, size - len, "%s", value->text);
    } else if (strcmp(kind, "int_list") == 0 && value->type == OI__JSON_ARRAY) {
        len += (size_t)snprintf(dst + len, size - len, "[");
        for (ptrdiff_t i = 0; i < arrlen(value->items) && len < size; i++)
            len += (size_t)snprintf(dst + len, size - len, "%s%s", i ? ", " : "", value->items[i].text);
        if (len < size)
            snprintf(dst + len, size - len, "]");
    } else if (value->type == OI__JSON_BOOL) {
        snprintf(dst + len, size - len, "%s", value->boolean ? "true" : "false");
    } else if (value->type == OI__JSON_NUMBER) {
        const char *skind = json_str(a, "scalar_kind");
        bool is_float = skind && strcmp(skind, "float") == 0;
        bool has_point = strpbrk(value->text, ".eE") != NULL;
        snprintf(dst + len, size - len, "%s%s", value->text, is_float && !has_point ? ".0" : "");
    } else {
        return false;
    }
    return true;
}

static int run_full_matrix(const conf_options *opt, deviation *deviations, conf_stats *stats) {
    char path[512];
    snprintf(path, sizeof path, "%s/ops/full_matrix/manifest.json", opt->data_dir);
    size_t len;
    char *text = read_text_file(path, &len);
    if (!text) {
        fprintf(stderr, "conformance: cannot read %s\n", path);
        return -1;
    }
    oi__json *root = oi__json_parse(text, len);
    free(text);
    const oi__json *cases = root ? oi__json_get(root, "cases") : NULL;
    if (!cases || cases->type != OI__JSON_ARRAY) {
        fprintf(stderr, "conformance: %s: %s\n", path, root ? "no \"cases\" array" : oi_last_error());
        oi__json_free(root);
        return -1;
    }
    int count = 0;
    for (ptrdiff_t i = 0; i < arrlen(cases->items); i++) {
        const oi__json *j = &cases->items[i];
        conf_case c;
        memset(&c, 0, sizeof c);
        const char *name = json_str(j, "name"), *file = json_str(j, "file"), *op = json_str(j, "op");
        const char *expected = json_str(j, "expected"), *mode = json_str(j, "mode");
        const oi__json *inputs = oi__json_get(j, "inputs"), *attrs = oi__json_get(j, "attrs");
        bool well_formed = name && file && op && expected && mode && inputs && inputs->type == OI__JSON_ARRAY &&
                           arrlen(inputs->items) <= MAX_INPUTS && attrs && attrs->type == OI__JSON_ARRAY;
        for (ptrdiff_t a = 0; well_formed && a < arrlen(attrs->items); a++)
            well_formed = append_attr(c.attrs, sizeof c.attrs, &attrs->items[a]);
        if (!well_formed) {
            printf("FAIL  manifest case %td is malformed\n", i);
            stats->failed++;
            continue;
        }
        copy_str(c.name, sizeof c.name, name);
        snprintf(c.file, sizeof c.file, "%s/ops/%s", opt->data_dir, file);
        copy_str(c.op, sizeof c.op, op);
        for (ptrdiff_t k = 0; k < arrlen(inputs->items); k++)
            copy_str(c.inputs[c.n_inputs++], sizeof c.inputs[0], inputs->items[k].text);
        copy_str(c.expected, sizeof c.expected, expected);
        c.inplace = strcmp(mode, "inplace") == 0;
        run_case(&c, opt, deviations, stats);
        count++;
    }
    oi__json_free(root);
    return count;
}

int main(int argc, char **argv) {
    conf_options opt;
    memset(&opt, 0, sizeof opt);
    opt.data_dir = getenv("OI_CONFORMANCE_DIR") ? getenv("OI_CONFORMANCE_DIR") : "../shared/conformance/openinfer/v1";
    opt.deviations_path = "tests/conformance_deviations.txt";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            opt.data_dir = argv[++i];
        else if (strcmp(argv[i], "--deviations") == 0 && i + 1 < argc)
            opt.deviations_path = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            opt.only = argv[++i];
        else if (strcmp(argv[i], "--verbose") == 0)
            opt.verbose = true;
        else {
            fprintf(stderr, "usage: conformance [--data DIR] [--deviations FILE] [--verbose] [--only TEXT]\n");
            return 2;
        }
    }
    char probe[600];
    snprintf(probe, sizeof probe, "%s/ops/full_matrix/manifest.json", opt.data_dir);
    FILE *f = fopen(probe, "rb");
    if (!f) {
        printf("conformance: no data at %s (set OI_CONFORMANCE_DIR); skipped\n", opt.data_dir);
        return 77;
    }
    fclose(f);
    deviation *deviations = load_deviations(opt.deviations_path);
    if (!deviations)
        fprintf(stderr, "conformance: no deviations list at %s\n", opt.deviations_path);

    conf_stats stats = {0, 0, 0};
    int small = run_small_suites(&opt, deviations, &stats);
    int matrix = run_full_matrix(&opt, deviations, &stats);
    if (matrix < 0)
        stats.failed++;
    for (ptrdiff_t i = 0; i < arrlen(deviations) && !opt.only; i++) {
        if (!deviations[i].seen) {
            printf("FAIL  %s: listed in %s but no such case\n", deviations[i].name, opt.deviations_path);
            stats.failed++;
        }
    }
    close_models();
    arrfree(deviations);
    printf("conformance (graph -> validator -> executor -> kernel): %d small-suite and %d full-matrix cases\n", small,
           matrix);
    printf("%d passed, %d failed, %d expected deviations\n", stats.passed, stats.failed, stats.deviations);
    return stats.failed ? 1 : 0;
}
